//! What the tests of sharded runs share (tests/cluster_local.rs on the local executor,
//! tests/slurm.rs on SLURM): data paths, results lines, `glassbox status`'s states.

use serde_json::Value;
use std::path::Path;

/// The path of a benchmark data set of `../shared/datasets`.
pub fn dataset(name: &str) -> String {
    format!(
        "{}/../shared/datasets/{name}.csv",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The JSON lines of a results file.
pub fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The state column of `glassbox status`'s table, shard by shard.
pub fn states(status: &str) -> Vec<String> {
    status
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 3 && f[0].parse::<usize>().is_ok()).then(|| f[2].to_string())
        })
        .collect()
}

/// A results line without the fields that measure time.
pub fn untimed(mut v: Value) -> Value {
    for k in ["solve_seconds", "backend_seconds", "lock_wait_seconds"] {
        v.as_object_mut().unwrap().remove(k);
    }
    v
}
