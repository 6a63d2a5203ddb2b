//! Determinism: with fixed seeds and one thread, two `glassbox run`s of the same config write
//! byte-identical `results.jsonl` apart from the timing fields (every key ending in
//! `seconds`), and byte-identical models. Covered: an NLP formulation on IPOPT and on lbfgs,
//! a MILP on HiGHS and on CBC, and the seeded random forest.
//!
//! A run that stops at a wall-clock limit is not reproducible (it stops where the clock says),
//! so every solve here finishes well within its limit.

use std::path::Path;
use std::process::Command;

/// Runs `config` (with a synthetic data table) into `out` on one thread.
fn run(dir: &Path, config: &str, out: &str) -> std::path::PathBuf {
    let path = dir.join("config.toml");
    std::fs::write(&path, config).unwrap();
    let out = dir.join(out);
    let output = Command::new(env!("CARGO_BIN_EXE_glassbox"))
        .args([
            "run",
            path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    out
}

/// `text` with the value of every `"...seconds":` key replaced by `#`.
fn mask_timing(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("seconds\":") {
        let end = at + "seconds\":".len();
        out.push_str(&rest[..end]);
        rest = &rest[end..];
        let value = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
            .unwrap_or(rest.len());
        out.push('#');
        rest = &rest[value..];
    }
    out.push_str(rest);
    out
}

/// The files of `dir/models`, sorted, with their bytes.
fn models(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir.join("models"))
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let bytes = std::fs::read(&p).unwrap();
            (p.file_name().unwrap().to_string_lossy().to_string(), bytes)
        })
        .collect();
    files.sort();
    files
}

fn assert_reproducible(formulation: &str, solver: &str) {
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "[data]\nsynthetic = {{ rows = 60, features = 3, classes = 2, seed = 7 }}\n\
         [split]\nrepeats = 2\nseed = 3\n[formulation]\n{formulation}\n{solver}\n\
         [multistart]\nstarts = 2\nseed = 5\n"
    );
    let (a, b) = (run(dir.path(), &config, "a"), run(dir.path(), &config, "b"));
    let read = |d: &Path| std::fs::read_to_string(d.join("results.jsonl")).unwrap();
    let (ra, rb) = (read(&a), read(&b));
    assert!(ra.lines().count() >= 2, "{ra}");
    assert!(ra.contains("seconds\":"), "no timing field to mask: {ra}");
    assert_eq!(
        mask_timing(&ra),
        mask_timing(&rb),
        "{formulation} / {solver}"
    );
    assert_eq!(
        models(&a),
        models(&b),
        "{formulation} / {solver}: models differ"
    );
}

#[test]
fn mask_timing_masks_only_timing_values() {
    assert_eq!(
        mask_timing(r#"{"a":1,"solve_seconds":0.25,"b":"x","warm_start_seconds":1e-3}"#),
        r#"{"a":1,"solve_seconds":#,"b":"x","warm_start_seconds":#}"#
    );
}

#[test]
fn sorct_on_ipopt_and_lbfgs() {
    let sorct = "name = \"sorct\"\ndepth = 2";
    assert_reproducible(
        sorct,
        "[solver]\nname = \"ipopt\"\nthreads = 1\ntime_limit = 120.0",
    );
    assert_reproducible(
        sorct,
        "[solver]\nname = \"lbfgs\"\nthreads = 1\niteration_limit = 200\ntime_limit = 120.0",
    );
}

#[test]
fn oct_on_highs_and_cbc() {
    let oct = "name = \"oct\"\ndepth = 1\nmin_leaf = 1";
    for solver in ["highs", "cbc"] {
        assert_reproducible(
            oct,
            &format!("[solver]\nname = \"{solver}\"\nthreads = 1\ntime_limit = 120.0"),
        );
    }
}

#[test]
fn random_forest() {
    assert_reproducible("name = \"forest\"\nn_trees = 5\ndepth = 3\nseed = 9", "");
}
