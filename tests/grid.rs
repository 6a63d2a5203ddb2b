//! The experiment engine end to end: a warm-started S-ORCT grid on iris interrupted by
//! SIGINT half-way and resumed (no finished cell redone, no partial line kept), the same grid
//! run as two shards and merged (equal to the unsharded run apart from the timings), a
//! different config refused in the same folder, k-fold / nested k-fold protocols, and SIGINT
//! ending a running IPOPT solve (on the engine and on a plain one-setting run), a running
//! CBC solve and a running TMO learner.

use glassbox::experiment::engine::{self, Ending, RunOptions};
use glassbox::experiment::grid::Experiment;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn iris() -> String {
    format!("{}/../shared/datasets/iris.csv", env!("CARGO_MANIFEST_DIR"))
}

/// A 3 x 3 (lambda_L, lambda_G) S-ORCT grid, depth 2, 2 starts, 2 splits, warm path.
fn grid_config(dir: &Path) -> PathBuf {
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
depth = 2
lambda_local_log2 = {{ from = -1, to = 0, zero_first = true }}
lambda_global_log2 = [-1000.0, -2.0, 0.0]
[solver]
name = "ipopt"
time_limit = 30.0
[multistart]
starts = 2
seed = 5
[experiment]
warm_path = true
"#,
        iris()
    );
    let path = dir.join("grid.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `glassbox run CONFIG --out OUT` started in the background, its output captured.
fn spawn_run(config: &str, out: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_glassbox"))
        .args(["run", config, "--out", out.to_str().unwrap()])
        .env("CI", "true")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Sends SIGINT to a run and waits for it: it must fail and say it was interrupted. Returns
/// its standard error.
fn interrupt(child: Child) -> String {
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(!output.status.success(), "an interrupted run must fail");
    assert!(stderr.contains("interrupted"), "{stderr}");
    stderr
}

fn glassbox(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_glassbox"))
        .args(args)
        .env("CI", "true")
        .output()
        .unwrap()
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A line without the fields that measure time.
fn untimed(mut v: Value) -> Value {
    for k in ["solve_seconds", "backend_seconds", "lock_wait_seconds"] {
        v.as_object_mut().unwrap().remove(k);
    }
    v
}

/// S-ORCT of depth 4 on spambase's 3450 training rows x 57 features from one random start
/// with a tolerance no iterate reaches: Ipopt would iterate until the 600 s limit. With
/// `engine`, an `[experiment]` table puts it on the experiment engine; without, it is a
/// plain one-setting run.
fn long_config(dir: &Path, engine: bool) -> PathBuf {
    let text = format!(
        r#"
[data]
path = "{}/../shared/datasets/spambase.csv"
[split]
test_fraction = 0.25
repeats = 1
seed = 1
[formulation]
name = "sorct"
depth = 4
cart_start = false
selection_folds = 0
[solver]
name = "ipopt"
time_limit = 600.0
tolerance = 1e-300
[solver.raw]
acceptable_iter = 0
[multistart]
starts = 1
{}"#,
        env!("CARGO_MANIFEST_DIR"),
        if engine {
            "[experiment]\nsave_models = false\n"
        } else {
            ""
        }
    );
    let config = dir.join("long.toml");
    std::fs::write(&config, text).unwrap();
    config
}

/// Starts `config`, sends SIGINT once its long solve runs and returns the run's standard
/// error, after checking that it stopped within `seconds` of the signal, long before the
/// solve's limit, and wrote no line of the abandoned unit.
fn interrupt_long_run(config: &Path, out: &Path, seconds: f64) -> String {
    let mut child = spawn_run(config.to_str().unwrap(), out);
    // Reading the data and building the problem take well under these seconds.
    std::thread::sleep(Duration::from_secs(5));
    assert!(child.try_wait().unwrap().is_none(), "the run ended early");
    let sent = Instant::now();
    let stderr = interrupt(child);
    let waited = sent.elapsed().as_secs_f64();
    assert!(
        waited < seconds,
        "the run took {waited:.1} s to stop after SIGINT"
    );
    let lines = std::fs::read_to_string(out.join("results.jsonl")).unwrap_or_default();
    assert_eq!(
        lines.lines().count(),
        0,
        "the abandoned unit left lines: {lines}"
    );
    stderr
}

/// SIGINT during a long IPOPT solve ends it at its next iteration (`SolveOptions::interrupt`):
/// the run stops long before the solve's time limit, reports the interruption and writes no
/// line of the abandoned unit.
#[test]
fn sigint_ends_a_running_ipopt_solve_and_abandons_its_unit() {
    let dir = tempfile::tempdir().unwrap();
    let config = long_config(dir.path(), true);
    // One Ipopt iteration on these rows takes a fraction of a second; the limit is 600 s.
    interrupt_long_run(&config, &dir.path().join("out"), 120.0);
}

/// The same on a plain one-setting run (no `[experiment]` table, not the engine): the solve
/// ends at its next iteration, the split it belongs to is left out of `results.jsonl` and
/// `models/`, and the run fails saying how many splits the file holds.
#[test]
fn sigint_ends_a_plain_run_with_its_whole_splits_only() {
    let dir = tempfile::tempdir().unwrap();
    let config = long_config(dir.path(), false);
    let out = dir.path().join("out");
    let stderr = interrupt_long_run(&config, &out, 120.0);
    assert!(stderr.contains("0 of 1 splits are in"), "{stderr}");
    let models = std::fs::read_dir(out.join("models")).map_or(0, |d| d.count());
    assert_eq!(models, 0, "the interrupted split's model was saved");
}

/// The same for CBC, which cannot be interrupted: the backend's watch returns within 50 ms
/// of the request and leaves CBC in the background (OCT of depth 3 on 300 synthetic rows with
/// a 600 s limit: the build before that watch was still solving 15 s after the signal), so
/// the run ends in seconds, not at the limit.
#[test]
fn sigint_ends_a_running_cbc_solve() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"
[data]
synthetic = { rows = 300, features = 6, classes = 3, seed = 5 }
[split]
test_fraction = 0.25
repeats = 1
seed = 1
[formulation]
name = "oct"
depth = 3
alpha = 0.0
min_leaf = 1
[solver]
name = "cbc"
time_limit = 600.0
threads = 1
"#;
    let config = dir.path().join("cbc.toml");
    std::fs::write(&config, text).unwrap();
    let stderr = interrupt_long_run(&config, &dir.path().join("out"), 10.0);
    assert!(stderr.contains("0 of 1 splits are in"), "{stderr}");
}

/// The same for a heuristic learner that runs long: TMO's generations (a generation count
/// and time limit no run reaches here) stop at the next child.
#[test]
fn sigint_ends_a_running_tmo_learner() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        r#"
[data]
path = "{}/../shared/datasets/pima.csv"
[split]
test_fraction = 0.25
repeats = 1
seed = 1
[formulation]
name = "tmo"
depth = 4
n_gen = 1000000
time_limit = 600.0
"#,
        env!("CARGO_MANIFEST_DIR")
    );
    let config = dir.path().join("tmo.toml");
    std::fs::write(&config, text).unwrap();
    let stderr = interrupt_long_run(&config, &dir.path().join("out"), 120.0);
    assert!(stderr.contains("0 of 1 splits are in"), "{stderr}");
}

#[test]
fn interrupted_grid_resumes_without_redoing_cells_and_shards_merge_to_the_same_run() {
    let dir = tempfile::tempdir().unwrap();
    let config = grid_config(dir.path());
    let cfg = config.to_str().unwrap();
    let out = dir.path().join("whole");
    let results = out.join("results.jsonl");
    let units = 3 * 3 * 2;
    // Per cell-split: the CART start, the 2 random starts and the line of the
    // cross-validated choice (which carries no point along the warm path).
    let per_unit = 4;
    let solves = units * per_unit;

    // Start, wait for a few finished cells, interrupt.
    let mut child = spawn_run(cfg, &out);
    let started = Instant::now();
    loop {
        let n = std::fs::read_to_string(&results)
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if n >= 6 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(300), "no progress");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(10));
    }
    let stderr = interrupt(child);
    assert!(stderr.contains("rerun"), "{stderr}");
    let text = std::fs::read_to_string(&results).unwrap();
    assert!(text.ends_with('\n'), "a partial line was left");
    let first: Vec<Value> = lines(&results);
    assert!(first.len() < solves, "the run was not interrupted half-way");
    assert_eq!(first.len() % per_unit, 0, "an unfinished cell was left");
    // A crash in the middle of a write leaves a partial line: resume drops it.
    std::fs::write(&results, format!("{text}{{\"config_finger")).unwrap();

    let output = glassbox(&["run", cfg, "--out", out.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let done_before = first.len() / per_unit;
    assert!(
        stdout.contains(&format!(
            "{} cell-splits solved now, {done_before} were done",
            units - done_before
        )),
        "{stdout}"
    );
    let all = lines(&results);
    assert_eq!(all.len(), solves);
    let fps: BTreeSet<&str> = all
        .iter()
        .map(|l| l["fingerprint"].as_str().unwrap())
        .collect();
    assert_eq!(fps.len(), solves, "fingerprints are not unique");
    // The lines of the first run are kept as they were (same timings: not solved again).
    for l in &first {
        assert!(
            all.contains(l),
            "a finished solve was redone or changed: {l}"
        );
    }
    // Every cell has its lines, the warm path carried points from cell to cell.
    let cells: BTreeSet<u64> = all.iter().map(|l| l["cell"].as_u64().unwrap()).collect();
    assert_eq!(cells.len(), 9);
    let is_choice = |l: &Value| {
        l["origin"]
            .as_str()
            .is_some_and(|o| o.starts_with("selection"))
    };
    assert!(all
        .iter()
        .filter(|l| !is_choice(l))
        .all(|l| l["x"].is_array()));
    assert!(all
        .iter()
        .filter(|l| is_choice(l))
        .all(|l| l["x"].is_null()));
    assert_eq!(all.iter().filter(|l| is_choice(l)).count(), units);
    assert!(all
        .iter()
        .filter(|l| l["cell"] != 0)
        .all(|l| l["warm_from_cell"].as_u64() == Some(l["cell"].as_u64().unwrap() - 1)));
    assert_eq!(all[0]["grid"]["lambda_local_log2"], "-inf");
    assert_eq!(all[0]["lambda_local"], 0.0);

    // The same config into the same folder again: nothing to do. Another config: refused.
    let again = glassbox(&["run", cfg, "--out", out.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&again.stdout)
        .contains(&format!("0 cell-splits solved now, {units} were done")));
    let other = dir.path().join("other.toml");
    std::fs::write(
        &other,
        std::fs::read_to_string(&config)
            .unwrap()
            .replace("starts = 2", "starts = 3"),
    )
    .unwrap();
    let refused = glassbox(&[
        "run",
        other.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("another config"));

    // Two shards (in parallel processes) merged equal the whole run apart from timings.
    let shard_dirs: Vec<PathBuf> = (1..=2)
        .map(|i| dir.path().join(format!("shard{i}")))
        .collect();
    let children: Vec<_> = shard_dirs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            Command::new(env!("CARGO_BIN_EXE_glassbox"))
                .args([
                    "run",
                    cfg,
                    "--out",
                    d.to_str().unwrap(),
                    "--shard",
                    &format!("{}/2", i + 1),
                ])
                .env("CI", "true")
                .output()
        })
        .collect();
    for c in children {
        let c = c.unwrap();
        assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    }
    let merged = dir.path().join("merged");
    let m = glassbox(&[
        "merge",
        merged.to_str().unwrap(),
        shard_dirs[0].to_str().unwrap(),
        shard_dirs[1].to_str().unwrap(),
    ]);
    assert!(m.status.success(), "{}", String::from_utf8_lossy(&m.stderr));
    let merged_lines: Vec<Value> = lines(&merged.join("results.jsonl"))
        .into_iter()
        .map(untimed)
        .collect();
    let whole: Vec<Value> = all.into_iter().map(untimed).collect();
    assert_eq!(merged_lines.len(), whole.len());
    for (a, b) in merged_lines.iter().zip(&whole) {
        assert_eq!(a, b);
    }
    // One shard alone is not the run.
    let missing = glassbox(&[
        "merge",
        dir.path().join("m1").to_str().unwrap(),
        shard_dirs[0].to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("a shard is missing"));
    let twice = glassbox(&[
        "merge",
        dir.path().join("m2").to_str().unwrap(),
        shard_dirs[0].to_str().unwrap(),
        shard_dirs[0].to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&twice.stderr).contains("more than one folder"));
}

fn run_in_process(text: &str, dir: &Path) -> (Vec<Value>, PathBuf) {
    let path = dir.join("cv.toml");
    std::fs::write(&path, text).unwrap();
    let exp = Experiment::load(&path).unwrap();
    let out = dir.join("out");
    let outcome = engine::run(
        &exp,
        &RunOptions {
            out: out.clone(),
            force: false,
            jobs: 2,
            shard: None,
            progress: false,
            stop: Arc::new(AtomicBool::new(false)),
        },
    )
    .unwrap();
    assert_eq!(outcome.ending, Ending::Finished);
    (lines(&outcome.results_path), out)
}

#[test]
fn kfold_and_nested_kfold_cover_every_row_once_and_tune_on_the_inner_metric() {
    let base = format!(
        r#"
[data]
path = "{}"
[formulation]
name = "logistic_l1"
lambda_log2 = [-6.0, 2.0]
[solver]
name = "lbfgs"
[multistart]
starts = 1
"#,
        iris()
    );
    let dir = tempfile::tempdir().unwrap();
    let (kfold, _) = run_in_process(
        &format!("{base}[split]\nprotocol = \"kfold\"\nfolds = 3\n"),
        dir.path(),
    );
    assert_eq!(kfold.len(), 2 * 3);
    let tests: usize = kfold
        .iter()
        .filter(|l| l["cell"] == 0)
        .map(|l| l["n_test"].as_u64().unwrap() as usize)
        .sum();
    assert_eq!(tests, 150, "each row is tested once");
    // The heavy penalty (2^2 / p) is worse than the light one on iris.
    let acc = |c: u64| -> f64 {
        let v: Vec<f64> = kfold
            .iter()
            .filter(|l| l["cell"] == c)
            .map(|l| l["test_accuracy"].as_f64().unwrap())
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    assert!(acc(0) > acc(1) + 0.1, "{} vs {}", acc(0), acc(1));

    let dir = tempfile::tempdir().unwrap();
    let (nested, out) = run_in_process(
        &format!("{base}[split]\nprotocol = \"nested\"\nfolds = 3\ninner_folds = 2\ninner_metric = \"balanced_accuracy\"\n"),
        dir.path(),
    );
    assert_eq!(nested.len(), 2 * (3 + 3 * 2));
    assert_eq!(
        nested.iter().filter(|l| l["split_role"] == "inner").count(),
        2 * 6
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("nested.json")).unwrap()).unwrap();
    let folds = report["folds"].as_array().unwrap();
    assert_eq!(folds.len(), 3);
    for f in folds {
        // The light penalty wins every inner comparison; its outer test value is reported.
        assert_eq!(f["cell"], 0, "{report}");
        let o = f["outer_fold"].as_u64().unwrap();
        let line = nested
            .iter()
            .find(|l| l["cell"] == 0 && l["split"] == o && l["split_role"] == "outer")
            .unwrap();
        assert_eq!(f["outer_test"], line["test_balanced_accuracy"]);
    }
}

fn dataset(name: &str) -> String {
    format!("{}/../shared/datasets/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn mean_of(lines: &[Value], cell: u64, key: &str) -> f64 {
    let v: Vec<f64> = lines
        .iter()
        .filter(|l| l["cell"] == cell && l["selected"] == true)
        .map(|l| l[key].as_f64().unwrap())
        .collect();
    v.iter().sum::<f64>() / v.len() as f64
}

#[test]
fn a_milp_grid_runs_on_the_engine_along_a_warm_path_and_resumes() {
    // OCT D = 1 on iris by HiGHS, 2 x 2 cells (alpha x min_leaf). The objective is
    // errors / Lhat + alpha * splits and one split removes half of the baseline errors, so
    // alpha = 1 gives the root alone.
    let text = format!(
        r#"
[data]
path = "{}"
[split]
test_fraction = 0.5
repeats = 1
seed = 3
[formulation]
name = "oct"
depth = 1
alpha = [0.0, 1.0]
min_leaf = [1, 5]
[solver]
name = "highs"
relative_gap = 0.0
time_limit = 60.0
[experiment]
warm_path = true
"#,
        dataset("iris.csv")
    );
    let dir = tempfile::tempdir().unwrap();
    let (lines, out) = run_in_process(&text, dir.path());
    assert_eq!(lines.len(), 4);
    for l in &lines {
        assert_eq!(l["formulation"], "oct");
        assert_eq!(l["status"], "optimal", "{l}");
        assert!(l["mip_gap"].is_number() && l["x"].is_array(), "{l}");
    }
    // One chain: alpha outer, min_leaf inner, each cell's MIP start the previous solution.
    let starts: Vec<&str> = lines
        .iter()
        .map(|l| l["path_start"].as_str().unwrap())
        .collect();
    assert_eq!(starts, ["first", "carried", "carried", "carried"]);
    assert!(mean_of(&lines, 0, "test_accuracy") > 0.6);
    for c in [2, 3] {
        assert_eq!(
            mean_of(&lines, c, "delta_global"),
            100.0,
            "cell {c}: no split"
        );
        assert!(mean_of(&lines, c, "test_accuracy") < 0.4);
    }
    assert!(out.join("models/cell-3/split-0.json").exists());
    // A rerun has nothing left to do.
    let exp = Experiment::load(&dir.path().join("cv.toml")).unwrap();
    let again = engine::run(
        &exp,
        &RunOptions {
            out,
            force: false,
            jobs: 1,
            shard: None,
            progress: false,
            stop: Arc::new(AtomicBool::new(false)),
        },
    )
    .unwrap();
    assert_eq!(again.solved_units, 0);
    assert_eq!(again.done_units, 4);
}

#[test]
fn regression_runs_nested_cv_on_r2_and_a_cart_ccp_alpha_grid_tunes_the_pruning() {
    // CART regression on Boston housing: an unpruned tree, a pruned one and the root alone
    // (ccp_alpha above the variance of the target).
    let text = format!(
        r#"
[data]
path = "{}"
[split]
protocol = "nested"
folds = 3
inner_folds = 2
inner_metric = "r2"
[formulation]
name = "cart"
criterion = "squared_error"
ccp_alpha = [0.0, 0.5, 1000.0]
[experiment]
warm_path = true
"#,
        dataset("boston_housing.csv")
    );
    let dir = tempfile::tempdir().unwrap();
    let (lines, out) = run_in_process(&text, dir.path());
    assert_eq!(lines.len(), 3 * (3 + 3 * 2));
    for l in &lines {
        assert!(l["test_r2"].is_number() && l["test_mse"].is_number(), "{l}");
        assert!(l.get("test_accuracy").is_none());
        // CART cannot carry a solution: the path runs cold and says so.
        assert_eq!(l["path_start"], "cold");
        assert!(l.get("x").is_none());
    }
    let tests: usize = lines
        .iter()
        .filter(|l| l["cell"] == 0 && l["split_role"] == "outer")
        .map(|l| l["n_test"].as_u64().unwrap() as usize)
        .sum();
    assert_eq!(tests, 506, "each row is tested once by the outer folds");
    // The root alone explains nothing; pruning helps an unpruned tree on held-out rows.
    assert!(mean_of(&lines, 2, "test_r2") < 0.01);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("nested.json")).unwrap()).unwrap();
    assert_eq!(report["metric"], "r2");
    for f in report["folds"].as_array().unwrap() {
        assert_ne!(f["cell"], 2, "{report}");
        let line = lines
            .iter()
            .find(|l| l["cell"] == f["cell"] && l["split"] == f["outer_fold"])
            .unwrap();
        assert_eq!(f["outer_test"], line["test_r2"]);
    }

    // The same grid tuned on the MSE picks the same cells (lower is better there).
    let dir = tempfile::tempdir().unwrap();
    let (_, out_mse) = run_in_process(&text.replace("\"r2\"", "\"mse\""), dir.path());
    let mse: Value =
        serde_json::from_str(&std::fs::read_to_string(out_mse.join("nested.json")).unwrap())
            .unwrap();
    for (a, b) in report["folds"]
        .as_array()
        .unwrap()
        .iter()
        .zip(mse["folds"].as_array().unwrap())
    {
        assert_eq!(a["cell"], b["cell"], "{report} {mse}");
    }

    // An inner metric of the other task is an error naming it.
    let bad = text.replace("\"r2\"", "\"accuracy\"");
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, bad).unwrap();
    let e = engine::run(
        &Experiment::load(&path).unwrap(),
        &RunOptions {
            out: dir.path().join("bad"),
            force: false,
            jobs: 1,
            shard: None,
            progress: false,
            stop: Arc::new(AtomicBool::new(false)),
        },
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("split.inner_metric = \"accuracy\"") && e.contains("\"r2\" or \"mse\""),
        "{e}"
    );
}

#[test]
fn sorrt_carries_its_solutions_along_a_warm_path_on_kfold() {
    // S-ORRT D = 1 on Boston housing, lambda_G = 0 then 2^-4 / p: the second cell's problem
    // has the beta variables the first lacks, so its starts come through the fitted trees.
    let text = format!(
        r#"
[data]
path = "{}"
[split]
protocol = "kfold"
folds = 2
[formulation]
name = "sorrt"
depth = 1
lambda_global_log2 = {{ from = -4, to = -4, zero_first = true }}
[solver]
name = "ipopt"
time_limit = 60.0
[multistart]
starts = 2
seed = 1
[experiment]
warm_path = true
"#,
        dataset("boston_housing.csv")
    );
    let dir = tempfile::tempdir().unwrap();
    let (lines, _) = run_in_process(&text, dir.path());
    // 2 cells x 2 folds x (the CART start + 2 random starts + the cross-validated choice's
    // line, which carries no point of its own).
    assert_eq!(lines.len(), 2 * 2 * 4);
    for l in &lines {
        let choice = l["origin"]
            .as_str()
            .is_some_and(|o| o.starts_with("selection"));
        assert!(
            l["x"].is_array() != choice && l["test_r2"].is_number(),
            "{l}"
        );
    }
    let carried: Vec<&Value> = lines.iter().filter(|l| l["cell"] == 1).collect();
    assert!(carried
        .iter()
        .all(|l| l["path_start"] == "carried" && l["warm_from_cell"] == 0));
    assert!(mean_of(&lines, 0, "test_r2") > 0.4);
    assert!(mean_of(&lines, 1, "test_r2") > 0.4);
}

fn run_options(out: PathBuf, shard: Option<engine::Shard>) -> RunOptions {
    RunOptions {
        out,
        force: false,
        jobs: 2,
        shard,
        progress: false,
        stop: Arc::new(AtomicBool::new(false)),
    }
}

#[test]
fn several_data_sets_and_formulations_share_their_splits_resume_and_shard() {
    // Two data sets x three formulations (a heuristic learner with no solver, a MILP with its
    // own solver, an NLP with the config's), on the same 2 folds of each data set.
    let text = format!(
        r#"
[data]
path = ["{}", "{}"]
[split]
protocol = "kfold"
folds = 2
seed = 4
[[formulation]]
name = "cart"
depth = [1, 3]
[[formulation]]
name = "oct"
depth = 1
solver = {{ name = "highs", time_limit = 60.0 }}
[[formulation]]
name = "logistic_l1"
lambda_log2 = -6.0
[solver]
name = "lbfgs"
"#,
        dataset("iris.csv"),
        dataset("wine.csv")
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("multi.toml");
    std::fs::write(&path, &text).unwrap();
    let exp = Experiment::load(&path).unwrap();
    assert!(exp.uses_engine);
    assert_eq!(exp.blocks.len(), 6);
    assert_eq!(exp.cells.len(), 2 * 4);
    let whole = dir.path().join("whole");
    let outcome = engine::run(&exp, &run_options(whole.clone(), None)).unwrap();
    assert_eq!(outcome.ending, Ending::Finished);
    let all = lines(&outcome.results_path);
    assert_eq!(all.len(), 8 * 2);
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(whole.join("experiment.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["blocks"].as_array().unwrap().len(), 6);
    // Every formulation sees the same folds of a data set (same seeds, same sizes).
    for data in ["iris", "wine"] {
        for split in [0, 1] {
            let of: Vec<&Value> = all
                .iter()
                .filter(|l| l["dataset"] == data && l["split"] == split)
                .collect();
            assert_eq!(of.len(), 4);
            let forms: BTreeSet<&str> = of
                .iter()
                .map(|l| l["formulation"].as_str().unwrap())
                .collect();
            assert_eq!(forms.len(), 3);
            assert!(of
                .iter()
                .all(|l| l["n_test"] == of[0]["n_test"] && l["split_seed"] == of[0]["split_seed"]));
        }
    }
    let solver_of = |f: &str| {
        all.iter()
            .find(|l| l["formulation"] == f)
            .map(|l| l["solver"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(solver_of("oct"), "highs");
    assert_eq!(solver_of("logistic_l1"), "lbfgs");
    assert_eq!(solver_of("cart"), "none");
    assert!(all
        .iter()
        .all(|l| l["test_accuracy"].as_f64().unwrap() > 0.5));

    // Resume: nothing left. Shards merged: the same lines apart from timings.
    let again = engine::run(&exp, &run_options(whole.clone(), None)).unwrap();
    assert_eq!((again.solved_units, again.done_units), (0, 16));
    let shards: Vec<PathBuf> = (1..=2)
        .map(|i| {
            let out = dir.path().join(format!("shard{i}"));
            let shard = engine::Shard { index: i, count: 2 };
            let o = engine::run(&exp, &run_options(out.clone(), Some(shard))).unwrap();
            assert_eq!(o.ending, Ending::Finished);
            out
        })
        .collect();
    let merged = dir.path().join("merged");
    glassbox::experiment::store::merge(&merged, &shards, false).unwrap();
    let merged_lines: Vec<Value> = lines(&merged.join("results.jsonl"))
        .into_iter()
        .map(untimed)
        .collect();
    let whole_lines: Vec<Value> = all.into_iter().map(untimed).collect();
    assert_eq!(merged_lines, whole_lines);

    // Another data set list is another experiment: refused in the same folder.
    let one = text.replace(&format!(", \"{}\"", dataset("wine.csv")), "");
    std::fs::write(&path, &one).unwrap();
    let fewer = Experiment::load(&path).unwrap();
    assert_eq!(fewer.blocks.len(), 3);
    assert_ne!(fewer.fingerprint, exp.fingerprint);
    let refused = engine::run(&fewer, &run_options(whole, None))
        .err()
        .unwrap()
        .to_string();
    assert!(refused.contains("another config"), "{refused}");
}
