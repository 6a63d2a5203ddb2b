//! `glassbox compare`: Dolan-More performance ratios and absolute gaps on hand-computed
//! examples (failures included), instance matching and its errors, and the command end to
//! end on the results of real S-ORCT runs on iris with IPOPT and the lbfgs backend, drawing
//! PNG and SVG plots.

use glassbox::compare::{
    absolute_gaps, fraction_at_most, match_instances, performance_ratios, Best, Mismatch,
};
use glassbox::experiment::SolveRecord;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const INF: f64 = f64::INFINITY;

#[test]
fn performance_ratios_by_hand() {
    // Three solvers, four instances; None = the solver failed on the instance.
    // Instance 0: best 1 -> ratios 1, 2, 4. Instance 1: best 2 (two ties) -> 1, 1, inf.
    // Instance 2: best 3 (only solver 1) -> inf, 1, inf. Instance 3: nobody -> inf for all.
    let costs = vec![
        vec![Some(1.0), Some(2.0), None, None],
        vec![Some(2.0), Some(2.0), Some(3.0), None],
        vec![Some(4.0), None, None, None],
    ];
    let r = performance_ratios(&costs);
    assert_eq!(r[0], vec![1.0, 1.0, INF, INF]);
    assert_eq!(r[1], vec![2.0, 1.0, 1.0, INF]);
    assert_eq!(r[2], vec![4.0, INF, INF, INF]);
    // rho_s(tau): the share of the four instances with ratio <= tau.
    assert_eq!(fraction_at_most(&r[0], 1.0), 0.5);
    assert_eq!(fraction_at_most(&r[1], 1.0), 0.5);
    assert_eq!(fraction_at_most(&r[1], 1.999), 0.5);
    assert_eq!(fraction_at_most(&r[1], 2.0), 0.75);
    assert_eq!(fraction_at_most(&r[2], 3.9), 0.0);
    assert_eq!(fraction_at_most(&r[2], 4.0), 0.25);
    // Failures never count, however large tau: the limit is the share solved.
    assert_eq!(fraction_at_most(&r[1], f64::MAX), 0.75);
    // A zero time does not divide by zero.
    let r = performance_ratios(&[vec![Some(0.0)], vec![Some(1e-3)]]);
    assert_eq!(r[0][0], 1.0);
    assert!(r[1][0].is_finite() && r[1][0] > 1.0);
}

#[test]
fn absolute_gaps_by_hand() {
    let values = vec![
        vec![Some(0.5), Some(1.0), None],
        vec![Some(0.25), None, None],
        vec![Some(1.5), Some(0.75), None],
    ];
    // Smaller is better (objective): best 0.25, then 0.75, then none.
    let g = absolute_gaps(&values, Best::Min);
    assert_eq!(g[0], vec![0.25, 0.25, INF]);
    assert_eq!(g[1], vec![0.0, INF, INF]);
    assert_eq!(g[2], vec![1.25, 0.0, INF]);
    // Larger is better (accuracy): best 1.5, then 1.0.
    let g = absolute_gaps(&values, Best::Max);
    assert_eq!(g[0], vec![1.0, 0.0, INF]);
    assert_eq!(g[1], vec![1.25, INF, INF]);
    assert_eq!(g[2], vec![0.0, 0.25, INF]);
    assert_eq!(fraction_at_most(&g[2], 0.0), 1.0 / 3.0);
}

/// A results line as `glassbox run` writes it.
fn record(solver: &str, split: usize, start: usize, lambda: f64, status: &str) -> SolveRecord {
    serde_json::from_value(serde_json::json!({
        "dataset": "iris", "formulation": "sorct", "solver": solver, "depth": 2,
        "lambda_local": lambda, "lambda_global": 0.0, "gamma": 512.0,
        "split": split, "split_seed": 1 + split, "start": start, "seed": 1000 + start,
        "selected": false, "status": status, "raw_status": "", "objective": 0.5,
        "train_accuracy": 1.0, "test_accuracy": 0.9, "test_balanced_accuracy": 0.9,
        "delta_local": 0.0, "delta_global": 0.0, "solve_seconds": 0.1, "iterations": 10,
        "n_train": 111, "n_test": 39
    }))
    .unwrap()
}

#[test]
fn instances_are_matched_across_solvers() {
    let mut records = Vec::new();
    for solver in ["lbfgs", "ipopt"] {
        for split in 0..2 {
            for start in 0..3 {
                records.push(record(solver, split, start, 0.005, "locally_optimal"));
            }
        }
    }
    // Read in any order: the comparison sorts solvers and instances.
    records.reverse();
    let c = match_instances(records.clone(), Mismatch::Refuse).unwrap();
    assert_eq!(c.solvers, vec!["ipopt", "lbfgs"]);
    assert_eq!(c.instances.len(), 6);
    for (s, row) in c.records.iter().enumerate() {
        for (i, r) in row.iter().enumerate() {
            assert_eq!(r.solver, c.solvers[s]);
            assert_eq!(
                (r.split, r.start),
                (c.instances[i].split, c.instances[i].start)
            );
        }
    }
    assert!(c.dropped.is_empty());

    // lbfgs misses one start and solved another with another lambda: refused, both named.
    let mut uneven: Vec<SolveRecord> = records
        .iter()
        .filter(|r| !(r.solver == "lbfgs" && r.split == 1 && r.start == 2))
        .cloned()
        .collect();
    let moved = uneven
        .iter_mut()
        .find(|r| r.solver == "lbfgs" && r.split == 0 && r.start == 0)
        .unwrap();
    moved.lambda_local = Some(0.01);
    let err = match_instances(uneven.clone(), Mismatch::Refuse)
        .unwrap_err()
        .to_string();
    assert!(err.contains("did not solve the same instances"), "{err}");
    assert!(err.contains("3 of 7"), "{err}");
    assert!(
        err.contains("lambda_L=0.01 lambda_G=0.0 gamma=512.0] split 0 (seed 1) start 0 (seed 1000) only by lbfgs"),
        "{err}"
    );
    assert!(
        err.contains("split 1 (seed 2) start 2 (seed 1002) only by ipopt"),
        "{err}"
    );
    assert!(err.contains("--drop-unmatched"), "{err}");

    // Dropping compares on the four common instances and lists the three others.
    let c = match_instances(uneven, Mismatch::Drop).unwrap();
    assert_eq!(c.instances.len(), 4);
    assert_eq!(c.dropped.len(), 3);

    // The same run given twice, and a single solver, are errors.
    let mut twice = records.clone();
    twice.push(records[0].clone());
    let err = match_instances(twice, Mismatch::Drop)
        .unwrap_err()
        .to_string();
    assert!(err.contains("has two results for the instance"), "{err}");
    let one: Vec<SolveRecord> = records
        .into_iter()
        .filter(|r| r.solver == "ipopt")
        .collect();
    let err = match_instances(one, Mismatch::Drop)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("at least two solvers") && err.contains("'ipopt'"),
        "{err}"
    );
}

#[test]
fn failed_solves_count_as_failures_in_the_profiles() {
    let records = vec![
        record("ipopt", 0, 0, 0.0, "locally_optimal"),
        record("ipopt", 0, 1, 0.0, "time_limit_feasible"),
        record("lbfgs", 0, 0, 0.0, "iteration_limit_no_solution"),
        record("lbfgs", 0, 1, 0.0, "locally_optimal"),
    ];
    let c = match_instances(records, Mismatch::Refuse).unwrap();
    // Time: only converged solves count.
    assert_eq!(
        c.times(),
        vec![vec![Some(0.1), None], vec![None, Some(0.1)]]
    );
    // Objective: any solve that returned a point.
    assert_eq!(
        c.objectives(),
        vec![vec![Some(0.5), Some(0.5)], vec![None, Some(0.5)]]
    );
    let table = c.summary();
    assert!(table.contains("time_limit_feasible"), "{table}");
    assert!(table.contains("iteration_limit_no_solution"), "{table}");
}

#[test]
fn the_best_objective_of_a_maximized_formulation_is_its_largest() {
    let line = |solver: &str, objective: f64, maximize: bool| {
        let mut r = record(solver, 0, 0, 0.0, "time_limit_feasible");
        r.formulation = "flowoct".into();
        r.objective = Some(objective);
        r.milp = Some(serde_json::from_value(serde_json::json!({ "maximize": maximize })).unwrap());
        r
    };
    // FlowOCT counts correct predictions: cbc's 12 is the best, highs is 2 short of it.
    let c = match_instances(
        vec![line("highs", 10.0, true), line("cbc", 12.0, true)],
        Mismatch::Refuse,
    )
    .unwrap();
    assert_eq!(c.solvers, vec!["cbc", "highs"]);
    assert_eq!(c.objective_gaps(), vec![vec![0.0], vec![2.0]]);
    // The same objectives of a minimized formulation: highs's 10 is the best.
    let c = match_instances(
        vec![line("highs", 10.0, false), line("cbc", 12.0, false)],
        Mismatch::Refuse,
    )
    .unwrap();
    assert_eq!(c.objective_gaps(), vec![vec![2.0], vec![0.0]]);
    // A results line of before the field reads as minimized.
    let r: glassbox::experiment::MilpStats = serde_json::from_str("{}").unwrap();
    assert!(!r.maximize);
}

// ---- the command end to end, on real runs ----

fn glassbox(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_glassbox"))
        .args(args)
        .output()
        .expect("the glassbox binary runs")
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).to_string()
}

/// Runs S-ORCT D=2 on iris (one split, two random starts, no CART start) with `solver`; its
/// results file.
fn run_iris(dir: &Path, solver: &str) -> PathBuf {
    let config = dir.join(format!("{solver}.toml"));
    std::fs::write(
        &config,
        format!(
            "[data]\npath = \"{}/../shared/datasets/iris.csv\"\n[split]\nrepeats = 1\nseed = 1\n\
             [formulation]\nname = \"sorct\"\ndepth = 2\nlambda_local = 0.005\ncart_start = false\n\
             [solver]\nname = \"{solver}\"\ntime_limit = 60.0\n[multistart]\nstarts = 2\nseed = 1\n",
            env!("CARGO_MANIFEST_DIR")
        ),
    )
    .unwrap();
    let out = dir.join(solver);
    ok(&glassbox(&[
        "run",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    out.join("results.jsonl")
}

#[test]
fn compare_command_on_ipopt_and_lbfgs_runs() {
    let dir = tempfile::tempdir().unwrap();
    let ipopt = run_iris(dir.path(), "ipopt");
    let lbfgs = run_iris(dir.path(), "lbfgs");
    let png = dir.path().join("time.png");
    let svg = dir.path().join("objective.svg");
    let metric = dir.path().join("accuracy.svg");
    let stdout = ok(&glassbox(&[
        "compare",
        ipopt.to_str().unwrap(),
        lbfgs.to_str().unwrap(),
        "--time-profile",
        png.to_str().unwrap(),
        "--objective-gaps",
        svg.to_str().unwrap(),
        "--metric-gaps",
        metric.to_str().unwrap(),
    ]));
    assert!(
        stdout.contains("2 instances solved by each of 2 solvers"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\nipopt ") && stdout.contains("\nlbfgs "),
        "{stdout}"
    );
    assert!(stdout.contains("test accuracy"), "{stdout}");
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG"), "not a PNG");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("<svg"), "not an SVG");
    // With a font (installed by install-deps), the legend names both solvers.
    if glassbox::plot::font_available() {
        assert!(
            text.contains("ipopt") && text.contains("lbfgs"),
            "no legend"
        );
    }
    assert!(std::fs::read_to_string(&metric).unwrap().contains("<svg"));
    // No temporary file is left beside the plots.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(!names.iter().any(|n| n.contains(".tmp")), "{names:?}");

    // One lbfgs start missing: refused with the instance named, nothing drawn.
    let lines = std::fs::read_to_string(&lbfgs).unwrap();
    let short = dir.path().join("short.jsonl");
    std::fs::write(&short, lines.lines().next().unwrap()).unwrap();
    let late = dir.path().join("late.png");
    let refused = glassbox(&[
        "compare",
        ipopt.to_str().unwrap(),
        short.to_str().unwrap(),
        "--time-profile",
        late.to_str().unwrap(),
    ]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("start 1") && err.contains("only by ipopt"),
        "{err}"
    );
    assert!(!late.exists());
    // ... or compared on the common instance with a warning.
    let dropped = glassbox(&[
        "compare",
        ipopt.to_str().unwrap(),
        short.to_str().unwrap(),
        "--drop-unmatched",
    ]);
    let stdout = ok(&dropped);
    assert!(stdout.contains("1 instances solved by each"), "{stdout}");
    assert!(String::from_utf8_lossy(&dropped.stderr).contains("warning: 1 instances"));

    // Bad input: a plot of another kind, a file that is not results.
    let bad = glassbox(&[
        "compare",
        ipopt.to_str().unwrap(),
        lbfgs.to_str().unwrap(),
        "--time-profile",
        dir.path().join("t.pdf").to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains(".png or .svg"));
    assert!(bad.stdout.is_empty(), "checked before any work");
    // Two plots to one file (the first was overwritten), a plot over an input.
    let same = dir.path().join("same.svg");
    let same = same.to_str().unwrap();
    let bad = glassbox(&[
        "compare",
        ipopt.to_str().unwrap(),
        lbfgs.to_str().unwrap(),
        "--time-profile",
        same,
        "--objective-gaps",
        same,
    ]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("two outputs of the command"));
    assert!(bad.stdout.is_empty(), "checked before any work");
    let bad = glassbox(&[
        "compare",
        ipopt.to_str().unwrap(),
        lbfgs.to_str().unwrap(),
        "--time-profile",
        lbfgs.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("would overwrite the input"));
    assert!(std::fs::read_to_string(&lbfgs).unwrap().starts_with('{'));
    let config = dir.path().join("ipopt.toml");
    let bad = glassbox(&["compare", config.to_str().unwrap(), lbfgs.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && err.contains("ipopt.toml") && err.contains("line 1"),
        "{err}"
    );
}

/// A solve without a solution writes its sparsities (NaN) as null; `compare` and `plot` read
/// such lines back (they refused the whole file).
#[test]
fn a_line_without_a_solution_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.jsonl");
    std::fs::write(
        &path,
        r#"{"dataset":"d","formulation":"oct","solver":"highs","depth":2,"lambda_local":0.0,"lambda_global":null,"gamma":null,"split":0,"split_seed":1,"start":0,"seed":null,"selected":false,"status":"time_limit_no_solution","raw_status":"Time limit reached","objective":null,"delta_local":null,"delta_global":null,"solve_seconds":0.09,"iterations":0,"n_train":427,"n_test":142}
"#,
    )
    .unwrap();
    let records = glassbox::compare::read_results(&path).unwrap();
    assert_eq!(records.len(), 1);
    assert!(records[0].delta_local.is_nan() && records[0].delta_global.is_nan());
    // And a record with NaN metrics survives the round trip.
    let line = serde_json::to_string(&records[0]).unwrap();
    let back: SolveRecord = serde_json::from_str(&line).unwrap();
    assert!(back.delta_local.is_nan());
}

#[test]
fn runs_of_different_configs_are_not_matched_as_one_instance() {
    // The same keys, but the highs run held out another test fraction: another problem.
    let a = record("dp", 0, 0, 0.0, "optimal");
    let mut b = record("highs", 0, 0, 0.0, "optimal");
    b.n_train = 105;
    b.n_test = 45;
    let err = match_instances(vec![a, b], Mismatch::Drop)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("not the same problem")
            && err.contains("111")
            && err.contains("105")
            && err.contains("'dp'")
            && err.contains("'highs'"),
        "{err}"
    );
}

/// Two OCT runs that differ in `min_leaf` only: the same instance keys and row counts, but
/// not the same problem. The problem fingerprint on every line tells them apart; the same
/// config with only the solver changed compares, a parameter written at its default or left
/// out alike.
#[test]
fn runs_that_pose_different_problems_are_not_compared() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, solver: &str, min_leaf: &str| {
        let config = dir.path().join(format!("{name}.toml"));
        std::fs::write(
            &config,
            format!(
                "[data]\npath = \"{}/../shared/datasets/iris.csv\"\n[split]\nrepeats = 1\nseed = 1\n\
                 [formulation]\nname = \"oct\"\ndepth = 1\n{min_leaf}\n\
                 [solver]\nname = \"{solver}\"\ntime_limit = 60.0\n",
                env!("CARGO_MANIFEST_DIR")
            ),
        )
        .unwrap();
        let out = dir.path().join(name);
        ok(&glassbox(&[
            "run",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]));
        out.join("results.jsonl").to_str().unwrap().to_string()
    };
    let dp = run("dp", "dp", "");
    let highs = run("highs", "highs", "min_leaf = 1");
    let highs5 = run("highs5", "highs", "min_leaf = 5");
    ok(&glassbox(&["compare", &dp, &highs]));
    let refused = glassbox(&["compare", &dp, &highs5]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("not the same problem") && err.contains("problem fingerprints"),
        "{err}"
    );
}

#[test]
fn an_instance_without_a_seed_is_not_called_a_warm_start() {
    // MILP and tree-search solves have one start and no seed.
    let mut r = record("dp", 0, 0, 0.0, "optimal");
    r.seed = None;
    let key = glassbox::compare::InstanceKey::of(&r);
    assert!(key.to_string().ends_with("(no seed)"), "{key}");
}

#[test]
fn a_partial_last_line_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let line = serde_json::to_string(&record("dp", 0, 0, 0.0, "optimal")).unwrap();
    let path = dir.path().join("results.jsonl");
    // A run interrupted while writing its second line.
    std::fs::write(&path, format!("{line}\n{}", &line[..40])).unwrap();
    let err = glassbox::compare::read_results(&path)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("results.jsonl")
            && err.contains("line 2, column ")
            && err.contains("partial last line")
            && !err.contains("at line 1"),
        "{err}"
    );
    // A bad line that is not the last is no partial line.
    std::fs::write(&path, format!("{}\n{line}\n", &line[..40])).unwrap();
    let err = glassbox::compare::read_results(&path)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("line 1, column ") && !err.contains("partial"),
        "{err}"
    );
}
