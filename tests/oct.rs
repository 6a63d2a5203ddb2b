//! OCT and OCT-H solved by HiGHS and CBC: depth-1 optima against a brute-force search over
//! every axis-aligned split, equal optima of both backends at depth 2, MIP starts that are
//! feasible, models consistent with the MILP's objective, save / load, runs from config and
//! config errors. Small subsamples keep every solve to a few seconds.

use glassbox::data::{ClassificationData, CsvOptions, MinMaxScaler, Table};
use glassbox::experiment::{self, ExperimentConfig};
use glassbox::formulations::oct::{self, OctModel, OctParams, OctProblem, SplitKind};
use glassbox::model::Classifier;
use glassbox::{registry, SolveOptions, SolveResult, TerminationStatus, WarmStart};
use nalgebra::DMatrix;
use std::path::Path;
use std::sync::Arc;

fn dataset(name: &str) -> ClassificationData {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/datasets")
        .join(name);
    Table::from_csv(&path, &CsvOptions::default())
        .unwrap()
        .encode_classification()
        .unwrap()
}

/// Every `step`-th row of `name`, first `take` of them, min-max scaled.
fn subsample(
    name: &str,
    step: usize,
    take: usize,
) -> (Arc<DMatrix<f64>>, Arc<Vec<usize>>, ClassificationData) {
    let data = dataset(name);
    let rows: Vec<usize> = (0..data.n_samples()).step_by(step).take(take).collect();
    let part = data.rows(&rows);
    let scaler = MinMaxScaler::fit(&part.x);
    (
        Arc::new(scaler.transform(&part.x)),
        Arc::new(part.y.clone()),
        part,
    )
}

fn exact() -> SolveOptions {
    SolveOptions {
        relative_gap: Some(0.0),
        absolute_gap: Some(0.0),
        time_limit: Some(60.0),
        threads: Some(1),
        ..Default::default()
    }
}

/// Solves as the runner does: with the integrality tolerance the problem's margins need.
fn solve(solver: &str, problem: &OctProblem, start: Option<Vec<f64>>) -> SolveResult {
    let options = exact()
        .with_integrality_at_most(Some(problem.integrality_tolerance()))
        .with_warm_start(start.map(WarmStart::primal));
    let backend = registry::milp_solver(solver, &options).unwrap();
    backend.solve(&problem.milp, &options).unwrap()
}

fn params(depth: usize, alpha: f64, min_leaf: usize) -> OctParams {
    OctParams {
        depth,
        alpha,
        min_leaf,
        kind: SplitKind::Axis,
    }
}

/// The fewest training errors of any depth-1 axis-aligned tree (or no split), with both
/// leaves of a split holding at least `min_leaf` points: every feature, every threshold
/// between consecutive distinct values.
fn brute_force_depth1(x: &DMatrix<f64>, y: &[usize], classes: usize, min_leaf: usize) -> usize {
    let errors = |members: &[usize]| {
        let mut counts = vec![0usize; classes];
        for &i in members {
            counts[y[i]] += 1;
        }
        members.len() - counts.iter().max().unwrap()
    };
    let all: Vec<usize> = (0..y.len()).collect();
    let mut best = errors(&all);
    for j in 0..x.ncols() {
        let mut values: Vec<f64> = x.column(j).iter().copied().collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        for w in values.windows(2) {
            let threshold = 0.5 * (w[0] + w[1]);
            let (left, right): (Vec<usize>, Vec<usize>) =
                all.iter().partition(|&&i| x[(i, j)] < threshold);
            if left.len() >= min_leaf && right.len() >= min_leaf {
                best = best.min(errors(&left) + errors(&right));
            }
        }
    }
    best
}

fn training_errors(model: &OctModel, part: &ClassificationData) -> usize {
    let pred = model.predict(&part.x);
    pred.iter().zip(&part.y).filter(|(p, y)| p != y).count()
}

fn model_of(problem: &OctProblem, result: &SolveResult, part: &ClassificationData) -> OctModel {
    oct::model_of(
        oct::NAME,
        problem,
        &result.primal,
        MinMaxScaler::fit(&part.x),
        part.classes.clone(),
        part.encoding.clone(),
    )
}

/// Solves `problem` with `solver` (no start) and checks that it proves the optimum of
/// `truth` training errors and that the fitted model makes exactly the errors the MILP
/// counts.
fn assert_solves_to(
    solver: &str,
    problem: &OctProblem,
    part: &ClassificationData,
    truth: usize,
    name: &str,
) {
    let result = solve(solver, problem, None);
    assert_eq!(
        result.status,
        TerminationStatus::Optimal,
        "{name} {solver}: {}",
        result.raw_status
    );
    let errors = result.objective.unwrap() * problem.baseline;
    assert!(
        (errors - truth as f64).abs() < 1e-6,
        "{name} {solver}: OCT {errors} errors, brute force {truth}"
    );
    let model = model_of(problem, &result, part);
    assert_eq!(training_errors(&model, part), truth, "{name} {solver}");
}

#[test]
fn depth_one_matches_brute_force_on_both_backends() {
    for (name, step, take, min_leaf) in [
        ("iris.csv", 3, 50, 1),
        ("haberman.csv", 4, 70, 1),
        ("wine.csv", 3, 50, 8),
    ] {
        let (x, y, part) = subsample(name, step, take);
        let k = part.n_classes();
        let truth = brute_force_depth1(&x, &y, k, min_leaf);
        let problem =
            oct::build(oct::NAME, x.clone(), y.clone(), k, params(1, 0.0, min_leaf)).unwrap();
        for solver in ["highs", "cbc"] {
            assert_solves_to(solver, &problem, &part, truth, name);
        }
    }
}

/// A feature whose distinct values lie 4e-7 apart (scaled, as climate's closest values):
/// eps_min = 4e-7 is below the backends' default integrality tolerance (1e-6) times the
/// big-M, which let HiGHS send points of equal value both ways and report 0 errors as
/// optimal. With the problem's own tolerance both backends find the true optimum, and the
/// model makes exactly the MILP's errors. Gaps of 1e-8 are also below CBC's default row
/// tolerance (1e-7), which let CBC report 0 errors until the request tightened it too.
#[test]
fn depth_one_is_exact_when_the_data_gaps_are_tiny() {
    for gap in [4e-7, 1e-8] {
        depth_one_is_exact_with_gap(gap);
    }
}

fn depth_one_is_exact_with_gap(gap: f64) {
    let mut csv = String::from("x,noise,target\n0,0,a\n1,1,b\n");
    for k in 0..20 {
        let label = if k % 2 == 0 { "a" } else { "b" };
        csv.push_str(&format!("{},{},{label}\n", 0.5 + k as f64 * gap, k % 3));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny_gaps.csv");
    std::fs::write(&path, csv).unwrap();
    let part = Table::from_csv(&path, &CsvOptions::default())
        .unwrap()
        .encode_classification()
        .unwrap();
    let scaler = MinMaxScaler::fit(&part.x);
    let (x, y) = (
        Arc::new(scaler.transform(&part.x)),
        Arc::new(part.y.clone()),
    );
    let truth = brute_force_depth1(&x, &y, 2, 1);
    assert!(
        truth >= 5,
        "the cluster is not separable by one split: {truth}"
    );
    let problem = oct::build(oct::NAME, x, y, 2, params(1, 0.0, 1)).unwrap();
    let tolerance = problem.integrality_tolerance();
    assert!(
        tolerance < gap / 4.0,
        "eps_min = {gap} needs a tight tolerance, got {tolerance}"
    );
    for solver in ["highs", "cbc"] {
        assert_solves_to(solver, &problem, &part, truth, &format!("gaps {gap}"));
    }
}

#[test]
fn depth_two_highs_and_cbc_agree() {
    // haberman: the greedy start (1/3) is not optimal (1/6); wine: the start is optimal,
    // which CBC 2.10 loses under its own cutoff (the backend keeps it).
    for (name, step, alpha, min_leaf) in [("haberman.csv", 15, 0.0, 1), ("wine.csv", 9, 0.02, 3)] {
        let (x, y, part) = subsample(name, step, 20);
        let k = part.n_classes();
        let problem = oct::build(oct::NAME, x, y, k, params(2, alpha, min_leaf)).unwrap();
        let start = oct::greedy_start(&problem);
        assert!(
            problem.milp.is_feasible(&start),
            "{name}: greedy start infeasible"
        );
        let highs = solve("highs", &problem, Some(start.clone()));
        let cbc = solve("cbc", &problem, Some(start.clone()));
        for r in [&highs, &cbc] {
            assert_eq!(
                r.status,
                TerminationStatus::Optimal,
                "{name} {}: {}",
                r.solver,
                r.raw_status
            );
            assert!(problem.milp.objective_value(&start) >= r.objective.unwrap() - 1e-9);
            assert!(
                r.gap.unwrap() < 1e-9,
                "{name} {}: gap {:?}",
                r.solver,
                r.gap
            );
        }
        let (h, c) = (highs.objective.unwrap(), cbc.objective.unwrap());
        assert!((h - c).abs() < 1e-6, "{name}: highs {h}, cbc {c}");
        // The objective is errors / Lhat + alpha * splits, and the model reproduces it.
        for r in [&highs, &cbc] {
            let model = model_of(&problem, r, &part);
            let recomputed = training_errors(&model, &part) as f64 / problem.baseline
                + alpha * model.num_splits() as f64;
            assert!(
                (recomputed - h).abs() < 1e-6,
                "{name} {}: model {recomputed}, MILP {h}",
                r.solver
            );
            for leaf in &model.leaves {
                let size: usize = leaf.counts.iter().sum();
                assert!(size == 0 || size >= min_leaf, "leaf of {size} < {min_leaf}");
            }
        }
    }
}

#[test]
fn oct_h_depth_one_is_at_least_as_good_as_oct_and_backends_agree() {
    let (x, y, part) = subsample("haberman.csv", 6, 40);
    let k = part.n_classes();
    let axis = oct::build(oct::NAME, x.clone(), y.clone(), k, params(1, 0.0, 1)).unwrap();
    let oblique_params = OctParams {
        kind: SplitKind::Oblique {
            mu: oct::DEFAULT_MU,
        },
        ..params(1, 0.0, 1)
    };
    let oblique = oct::build(oct::NAME_H, x.clone(), y.clone(), k, oblique_params).unwrap();
    let start = oct::greedy_start(&oblique);
    assert!(
        oblique.milp.is_feasible(&start),
        "OCT-H greedy start infeasible"
    );
    let axis_best = solve("highs", &axis, None).objective.unwrap();
    let highs = solve("highs", &oblique, Some(start.clone()));
    let cbc = solve("cbc", &oblique, Some(start));
    for r in [&highs, &cbc] {
        assert_eq!(
            r.status,
            TerminationStatus::Optimal,
            "{}: {}",
            r.solver,
            r.raw_status
        );
    }
    let (h, c) = (highs.objective.unwrap(), cbc.objective.unwrap());
    assert!((h - c).abs() < 1e-6, "highs {h}, cbc {c}");
    assert!(
        h <= axis_best + 1e-9,
        "oblique {h} worse than axis {axis_best}"
    );
    let model = oct::model_of(
        oct::NAME_H,
        &oblique,
        &highs.primal,
        MinMaxScaler::fit(&part.x),
        part.classes.clone(),
        part.encoding.clone(),
    );
    let recomputed = training_errors(&model, &part) as f64 / oblique.baseline;
    assert!(
        (recomputed - h).abs() < 1e-6,
        "model {recomputed}, MILP {h}"
    );
}

#[test]
fn oct_h_penalty_counts_features_used() {
    // With a large alpha a split is worth less than its feature: no split at all.
    let (x, y, part) = subsample("iris.csv", 5, 30);
    let p = OctParams {
        kind: SplitKind::Oblique {
            mu: oct::DEFAULT_MU,
        },
        ..params(1, 2.0, 1)
    };
    let problem = oct::build(oct::NAME_H, x, y, part.n_classes(), p).unwrap();
    let r = solve("highs", &problem, None);
    assert_eq!(r.status, TerminationStatus::Optimal);
    // Predicting the majority class: Lhat / Lhat = 1.
    assert!(
        (r.objective.unwrap() - 1.0).abs() < 1e-9,
        "{:?}",
        r.objective
    );
}

#[test]
fn model_save_load_and_warm_start() {
    let (x, y, part) = subsample("iris.csv", 5, 30);
    let problem = oct::build(oct::NAME, x, y, part.n_classes(), params(2, 0.0, 1)).unwrap();
    let result = solve("highs", &problem, Some(oct::greedy_start(&problem)));
    let model = model_of(&problem, &result, &part);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("oct.json");
    model.save(&path).unwrap();
    let loaded = OctModel::load(&path).unwrap();
    assert_eq!(loaded, model);
    assert_eq!(loaded.predict(&part.x), model.predict(&part.x));
    // The root's rule in the user's units: the raw values of the training rows that the
    // model sends left are exactly those below the printed threshold.
    let split = model.nodes[0].clone().expect("the root splits");
    let (j, w) = split.weights[0];
    let user = model.user_threshold(j, w, split.threshold);
    let text = loaded.describe();
    let rule = format!("node 0: {} < {:.6}", part.feature_names[j], user);
    assert!(text.contains(&rule), "{rule} not in\n{text}");
    let scaled = MinMaxScaler::fit(&part.x).transform(&part.x);
    for i in 0..part.n_samples() {
        let left_scaled = w * scaled[(i, j)] < split.threshold;
        assert_eq!(left_scaled, part.x[(i, j)] < user, "row {i}");
    }
    // A model of another kind is refused with a message naming both kinds.
    glassbox::model::save_json(&path, "sorct", &model).unwrap();
    let err = OctModel::load(&path).unwrap_err().to_string();
    assert!(err.contains("'sorct'") && err.contains("'oct'"), "{err}");
    // The fitted model warm-starts the same problem at its own objective.
    let start = oct::start_of_model(&model, &problem, &MinMaxScaler::fit(&part.x)).unwrap();
    assert!(problem.milp.is_feasible(&start));
    let start_objective = problem.milp.objective_value(&start);
    assert!((start_objective - result.objective.unwrap()).abs() < 1e-9);
}

fn write_config(dir: &Path, formulation: &str, solver: &str) -> std::path::PathBuf {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/iris.csv");
    let text = format!(
        "[data]\npath = \"{}\"\n[split]\ntest_fraction = 0.5\nrepeats = 1\nseed = 3\n\
         [formulation]\n{formulation}\n[solver]\n{solver}\n",
        data.display()
    );
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn runs_from_config_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    for (formulation, solver) in [
        (
            "name = \"oct\"\ndepth = 1",
            "name = \"highs\"\nrelative_gap = 0.0",
        ),
        (
            "name = \"oct\"\ndepth = 1",
            "name = \"cbc\"\nrelative_gap = 0.0",
        ),
        (
            "name = \"oct_h\"\ndepth = 1\nalpha = 0.01",
            "name = \"highs\"\ntime_limit = 5.0",
        ),
    ] {
        let config =
            ExperimentConfig::load(&write_config(dir.path(), formulation, solver)).unwrap();
        let out = dir.path().join("out");
        let outcome = experiment::run(&config, &out, true, false).unwrap();
        let r = &outcome.records[0];
        assert!(
            r.selected && r.test_accuracy > 0.6,
            "{formulation} {solver}: {r:?}"
        );
        let line: serde_json::Value = serde_json::from_str(
            std::fs::read_to_string(&outcome.results_path)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        assert!(
            line.get("nodes").is_some() && line.get("dual_bound").is_some(),
            "{line}"
        );
        let model = OctModel::load(&out.join("models/split-0.json")).unwrap();
        assert_eq!(model.depth, 1);
        if solver.contains("relative_gap") {
            assert_eq!(r.status, "optimal");
            assert_eq!(line["mip_gap"].as_f64(), Some(0.0));
        }
    }
}

#[test]
fn a_saved_model_warm_starts_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let first = write_config(dir.path(), "name = \"oct\"\ndepth = 1", "name = \"highs\"");
    let config = ExperimentConfig::load(&first).unwrap();
    let out = dir.path().join("first");
    let fitted = experiment::run(&config, &out, true, false).unwrap().records[0].clone();
    // The same split, started from the saved model (not the greedy tree), with the
    // backend's search cut at the root: at least as good as the model.
    let text = std::fs::read_to_string(&first).unwrap().replace(
        "[solver]\nname = \"highs\"",
        &format!(
            "[solver]\nname = \"highs\"\nraw = {{ mip_max_nodes = 0 }}\n[multistart]\nwarm_start = \"{}\"",
            out.join("models/split-0.json").display()
        ),
    );
    std::fs::write(&first, text).unwrap();
    let config = ExperimentConfig::load(&first).unwrap();
    let again = experiment::run(&config, &dir.path().join("second"), true, false).unwrap();
    let r = &again.records[0];
    assert!(
        r.objective.unwrap() <= fitted.objective.unwrap() + 1e-9,
        "{r:?}"
    );
}

#[test]
fn config_errors_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let load = |formulation: &str, solver: &str| {
        ExperimentConfig::load(&write_config(dir.path(), formulation, solver))
            .and_then(|c| experiment::run(&c, &dir.path().join("out"), true, false).map(|_| ()))
            .unwrap_err()
            .to_string()
    };
    let e = load("name = \"oct\"\ndepht = 2", "name = \"highs\"");
    assert!(e.contains("depht"), "{e}");
    let e = load("name = \"oct\"\ndepth = 5", "name = \"highs\"");
    assert!(e.contains("depth must be 1 to 4"), "{e}");
    let e = load("name = \"oct\"\nalpha = -1.0", "name = \"cbc\"");
    assert!(e.contains("alpha"), "{e}");
    let e = load("name = \"oct\"\nmin_leaf = 0", "name = \"highs\"");
    assert!(e.contains("min_leaf"), "{e}");
    let e = load("name = \"oct_h\"\nmu = 0.0", "name = \"highs\"");
    assert!(e.contains("mu"), "{e}");
    let e = load("name = \"oct\"\nstart = \"tmo\"", "name = \"highs\"");
    assert!(e.contains("tmo") && e.contains("cart"), "{e}");
    // An NLP backend cannot solve a MILP formulation.
    let e = load("name = \"oct\"", "name = \"ipopt\"");
    assert!(e.contains("ipopt") && e.contains("mixed-integer"), "{e}");
    // A training part smaller than min_leaf.
    let e = load("name = \"oct\"\nmin_leaf = 500", "name = \"highs\"");
    assert!(e.contains("min_leaf"), "{e}");
}

#[test]
fn greedy_start_is_feasible_at_every_depth() {
    let (x, y, part) = subsample("wine.csv", 2, 89);
    for depth in 1..=4 {
        for kind in [
            SplitKind::Axis,
            SplitKind::Oblique {
                mu: oct::DEFAULT_MU,
            },
        ] {
            let p = OctParams {
                kind,
                ..params(depth, 0.01, 5)
            };
            let problem = oct::build(oct::NAME, x.clone(), y.clone(), part.n_classes(), p).unwrap();
            problem.milp.validate().unwrap();
            let start = oct::greedy_start(&problem);
            let violation = problem.milp.max_violation(&start);
            assert!(
                violation <= 1e-9,
                "depth {depth} {kind:?}: violation {violation}"
            );
        }
    }
}

/// Both backends prove the same optimum (and at depth 1 the brute force's) on the issue's
/// acceptance instances: monks-1 at depth 1 (all 124 rows) and depth 2 (every fifth row, 25:
/// CBC does not prove optimality on every third row within a minute), and a 60-row
/// stratified sample of iris at depth 1 (at depth 2 OCT's weak relaxation leaves HiGHS
/// short of a proof after 60 s on this sample, so it is not a test).
#[test]
fn monks1_and_an_iris_sample_prove_the_same_optimum_on_both_backends() {
    let monks = dataset("monks1.csv");
    let iris = dataset("iris.csv");
    let (train, _) = glassbox::data::stratified_split(&iris.y, 0.6, 1).unwrap();
    assert_eq!(train.len(), 60);
    let every_fifth: Vec<usize> = (0..monks.n_samples()).step_by(5).collect();
    let all: Vec<usize> = (0..monks.n_samples()).collect();
    for (name, part, depth) in [
        ("monks1", monks.rows(&all), 1),
        ("monks1/5", monks.rows(&every_fifth), 2),
        ("iris60", iris.rows(&train), 1),
    ] {
        let scaler = MinMaxScaler::fit(&part.x);
        let x = Arc::new(scaler.transform(&part.x));
        let y = Arc::new(part.y.clone());
        let k = part.n_classes();
        let problem =
            oct::build(oct::NAME, x.clone(), y.clone(), k, params(depth, 0.0, 1)).unwrap();
        let start = oct::greedy_start(&problem);
        let objectives: Vec<f64> = ["highs", "cbc"]
            .iter()
            .map(|solver| {
                let r = solve(solver, &problem, Some(start.clone()));
                assert_eq!(
                    r.status,
                    TerminationStatus::Optimal,
                    "{name} D={depth} {solver}: {}",
                    r.raw_status
                );
                r.objective.unwrap()
            })
            .collect();
        assert!(
            (objectives[0] - objectives[1]).abs() < 1e-6,
            "{name} D={depth}: highs {}, cbc {}",
            objectives[0],
            objectives[1]
        );
        if depth == 1 {
            let truth = brute_force_depth1(&x, &y, k, 1) as f64 / problem.baseline;
            assert!(
                (objectives[0] - truth).abs() < 1e-6,
                "{name}: OCT {} brute force {truth}",
                objectives[0]
            );
        }
    }
}

#[test]
fn cart_start_is_feasible_and_scores_cart_tree() {
    let (x, y, part) = subsample("wine.csv", 2, 89);
    // OCT-H's margin mu may cut through a gap CART split in: then no CART start (and a
    // run falls back to the greedy tree); with mu = 1e-3 it fits these rows.
    for (kind, alpha) in [
        (SplitKind::Axis, 0.01),
        (SplitKind::Oblique { mu: 1e-3 }, 0.0),
    ] {
        let p = OctParams {
            kind,
            ..params(2, alpha, 3)
        };
        let problem = oct::build(oct::NAME, x.clone(), y.clone(), part.n_classes(), p).unwrap();
        let start = oct::cart_start(&problem).expect("a feasible CART start");
        assert!(problem.milp.is_feasible(&start));
        // Its objective is CART's training errors / Lhat + the penalty of its splits.
        let cart = glassbox::formulations::cart::CartConfig {
            depth: Some(2),
            min_leaf: 3,
            ..Default::default()
        };
        let tree = cart.fit_tree(
            &x,
            glassbox::formulations::cart::grow::Targets::Classes {
                y: &y,
                n_classes: part.n_classes(),
            },
            &vec![1.0; y.len()],
        );
        let errors = tree
            .predict_class(&x)
            .iter()
            .zip(y.iter())
            .filter(|(a, b)| a != b)
            .count();
        let splits = tree.splits().len() as f64;
        let penalty = if matches!(kind, SplitKind::Axis) {
            alpha * splits
        } else {
            0.0
        };
        let expected = errors as f64 / problem.baseline + penalty;
        let got = problem.milp.objective_value(&start);
        assert!(
            (got - expected).abs() < 1e-9,
            "{kind:?}: start {got}, CART {expected}"
        );
    }
    // From config.
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(
        dir.path(),
        "name = \"oct\"\ndepth = 2\nstart = \"cart\"",
        "name = \"cbc\"\ntime_limit = 5.0",
    );
    let config = ExperimentConfig::load(&path).unwrap();
    let outcome = experiment::run(&config, &dir.path().join("out"), true, false).unwrap();
    assert!(outcome.records[0].selected && outcome.records[0].test_accuracy > 0.8);
}
