//! What the tests of sharded runs share (tests/cluster_local.rs on the local executor,
//! tests/slurm.rs on SLURM): the grids they run, data paths, results lines, `glassbox
//! status`'s states.

use serde_json::Value;
use std::path::{Path, PathBuf};

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

/// 2 data sets x (S-ORCT depth 2 at the lambda_G exponents `lambdas`, e.g. "-1000.0, -3.0",
/// and CART of depth 1 and 2) x 2 splits: each cell-split its own chain (no warm path);
/// `extra` goes into `[experiment]`.
pub fn small_grid(dir: &Path, lambdas: &str, extra: &str) -> PathBuf {
    let text = format!(
        r#"
[data]
path = ["{}", "{}"]
[split]
test_fraction = 0.25
repeats = 2
seed = 3
[[formulation]]
name = "sorct"
# random starts only, at the given gamma: these tests count a unit's lines by its starts
cart_start = false
split_scale = "fixed"
depth = 2
lambda_global_log2 = [{lambdas}]
[[formulation]]
name = "cart"
depth = [1, 2]
[solver]
name = "ipopt"
time_limit = 30.0
[multistart]
starts = 2
seed = 5
[experiment]
{extra}
"#,
        dataset("iris"),
        dataset("wine")
    );
    let path = dir.join("grid.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// 1 data set (wine) x S-ORCT depth 2 x 4 lambda_G values x 2 splits x 3 starts: 8
/// cell-splits of several IPOPT solves each, in 2 shards of 4; slow enough to interrupt.
pub fn slow_grid(dir: &Path) -> PathBuf {
    let text = format!(
        r#"
[data]
path = "{}"
[split]
test_fraction = 0.25
repeats = 2
seed = 3
[formulation]
name = "sorct"
# random starts only, at the given gamma: these tests count a unit's lines by its starts
cart_start = false
split_scale = "fixed"
depth = 2
lambda_global_log2 = [-1000.0, -6.0, -4.0, -2.0]
[solver]
name = "ipopt"
time_limit = 30.0
[multistart]
starts = 3
seed = 5
[experiment]
"#,
        dataset("wine")
    );
    let path = dir.join("slow.toml");
    std::fs::write(&path, text).unwrap();
    path
}
