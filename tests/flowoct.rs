//! FlowOCT (Aghaei, Gómez and Vayanos) solved by HiGHS and CBC: optima against a
//! brute-force search over every tree of depth 1 and 2 on small binary data, with and
//! without lambda; equal optima of both backends on small samples of monks-1, car (four
//! classes) and iris (numeric columns binarized); MIP starts that are feasible and score
//! their tree; fit, save, load and predict; runs from config; parameter errors. Small
//! samples keep every solve to a few seconds.

use glassbox::data::{ClassificationData, CsvOptions, MinMaxScaler, Table};
use glassbox::experiment::{self, ExperimentConfig};
use glassbox::formulations::flowoct::{
    self, start, FlowNode, FlowOctModel, FlowOctParams, FlowOctProblem,
};
use glassbox::model::Classifier;
use glassbox::{registry, SolveOptions, SolveResult, TerminationStatus, WarmStart};
use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::sync::Arc;

fn datasets() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets")
}

fn dataset(name: &str, categorical: &[&str]) -> ClassificationData {
    let options = CsvOptions {
        categorical: categorical.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    Table::from_csv(&datasets().join(name), &options)
        .unwrap()
        .encode_classification()
        .unwrap()
}

/// The rows `rows` of `data`, and their features min-max scaled on them.
fn part_of(
    data: &ClassificationData,
    rows: &[usize],
) -> (Arc<DMatrix<f64>>, Arc<Vec<usize>>, ClassificationData) {
    let part = data.rows(rows);
    let x = MinMaxScaler::fit(&part.x).transform(&part.x);
    (Arc::new(x), Arc::new(part.y.clone()), part)
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

fn solve(solver: &str, problem: &FlowOctProblem, start: Option<Vec<f64>>) -> SolveResult {
    let options = exact().with_warm_start(start.map(WarmStart::primal));
    let backend = registry::milp_solver(solver, &options).unwrap();
    backend.solve(&problem.milp, &options).unwrap()
}

fn params(depth: usize, lambda: f64) -> FlowOctParams {
    FlowOctParams {
        depth,
        lambda,
        thresholds: 10,
    }
}

/// The best FlowOCT objective `(1 - lambda) correct - lambda splits` of any tree of depth at
/// most `depth` on the 0/1 matrix `x`, by enumeration: at every node, predicting (the best
/// class of its points) or branching on each feature, both subtrees searched the same way.
fn brute_force(
    x: &DMatrix<f64>,
    y: &[usize],
    classes: usize,
    members: &[usize],
    depth: usize,
    lambda: f64,
) -> f64 {
    let mut counts = vec![0usize; classes];
    for &i in members {
        counts[y[i]] += 1;
    }
    let mut best = (1.0 - lambda) * *counts.iter().max().unwrap() as f64;
    if depth == 0 {
        return best;
    }
    for f in 0..x.ncols() {
        let (left, right): (Vec<usize>, Vec<usize>) =
            members.iter().partition(|&&i| x[(i, f)] < 0.5);
        let split = -lambda
            + brute_force(x, y, classes, &left, depth - 1, lambda)
            + brute_force(x, y, classes, &right, depth - 1, lambda);
        best = best.max(split);
    }
    best
}

/// `(1 - lambda) correct - lambda splits` of a fitted model on its training rows.
fn model_objective(model: &FlowOctModel, part: &ClassificationData, lambda: f64) -> f64 {
    let correct = model
        .predict(&part.x)
        .iter()
        .zip(&part.y)
        .filter(|(p, y)| p == y)
        .count();
    (1.0 - lambda) * correct as f64 - lambda * model.num_splits() as f64
}

fn fitted(
    problem: &FlowOctProblem,
    result: &SolveResult,
    part: &ClassificationData,
) -> FlowOctModel {
    flowoct::model_of(
        problem,
        &result.primal,
        MinMaxScaler::fit(&part.x),
        part.classes.clone(),
        part.encoding.clone(),
    )
}

/// Seeded 0/1 data: `n` rows, `p` features, three classes that depend on the first three
/// features with 20% of the labels drawn at random.
fn random_binary(n: usize, p: usize, seed: u64) -> (DMatrix<f64>, Vec<usize>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let x = DMatrix::from_fn(n, p, |_, _| if rng.random_bool(0.5) { 1.0 } else { 0.0 });
    let y = (0..n)
        .map(|i| {
            if rng.random_bool(0.2) {
                rng.random_range(0..3)
            } else if x[(i, 0)] > 0.5 {
                if x[(i, 1)] > 0.5 {
                    2
                } else {
                    1
                }
            } else {
                usize::from(x[(i, 2)] > 0.5)
            }
        })
        .collect();
    (x, y)
}

#[test]
fn optimum_equals_brute_force_at_depth_one_and_two_with_and_without_lambda() {
    for seed in [1, 2] {
        let (x, y) = random_binary(18, 4, seed);
        let all: Vec<usize> = (0..y.len()).collect();
        for depth in [1, 2] {
            for lambda in [0.0, 0.1, 0.6] {
                let truth = brute_force(&x, &y, 3, &all, depth, lambda);
                let problem = flowoct::build(
                    Arc::new(x.clone()),
                    Arc::new(y.clone()),
                    3,
                    params(depth, lambda),
                )
                .unwrap();
                problem.milp.validate().unwrap();
                for solver in ["highs", "cbc"] {
                    let r = solve(solver, &problem, None);
                    let case = format!("seed {seed} D={depth} lambda={lambda} {solver}");
                    assert_eq!(
                        r.status,
                        TerminationStatus::Optimal,
                        "{case}: {}",
                        r.raw_status
                    );
                    let objective = r.objective.unwrap();
                    assert!(
                        (objective - truth).abs() < 1e-6,
                        "{case}: FlowOCT {objective}, brute force {truth}"
                    );
                    // The tree read from the solution scores the same by routing the rows.
                    let tree = problem.tree_of_point(&r.primal);
                    let scored = problem.tree_objective(&tree);
                    assert!(
                        (scored - truth).abs() < 1e-6,
                        "{case}: tree scores {scored}"
                    );
                }
            }
        }
    }
}

#[test]
fn highs_and_cbc_prove_the_same_optimum_on_small_samples() {
    let monks = dataset("monks1.csv", &["a1", "a2", "a3", "a4", "a5", "a6"]);
    let car = dataset("car.csv", &["doors", "persons"]);
    let iris = dataset("iris.csv", &[]);
    let every = |data: &ClassificationData, step: usize, take: usize| -> Vec<usize> {
        (0..data.n_samples()).step_by(step).take(take).collect()
    };
    // A stratified 2.5% of car: 44 rows, all four classes.
    let (car_rows, _) = glassbox::data::stratified_split(&car.y, 0.975, 1).unwrap();
    for (name, data, rows, depth, lambda, thresholds) in [
        ("monks1", &monks, every(&monks, 3, 40), 2, 0.0, 10),
        ("car", &car, car_rows, 2, 0.05, 10),
        ("iris", &iris, every(&iris, 3, 50), 2, 0.2, 4),
    ] {
        let (x, y, part) = part_of(data, &rows);
        let p = FlowOctParams {
            thresholds,
            ..params(depth, lambda)
        };
        let problem = flowoct::build(x, y, part.n_classes(), p).unwrap();
        let start = flowoct::greedy_start(&problem);
        assert!(
            problem.milp.is_feasible(&start),
            "{name}: greedy start infeasible"
        );
        let results: Vec<SolveResult> = ["highs", "cbc"]
            .iter()
            .map(|solver| solve(solver, &problem, Some(start.clone())))
            .collect();
        for r in &results {
            assert_eq!(
                r.status,
                TerminationStatus::Optimal,
                "{name} {}: {}",
                r.solver,
                r.raw_status
            );
            assert!(r.objective.unwrap() >= problem.milp.objective_value(&start) - 1e-9);
            // The fitted model classifies the training rows as the MILP counts.
            let model = fitted(&problem, r, &part);
            let recomputed = model_objective(&model, &part, lambda);
            assert!(
                (recomputed - r.objective.unwrap()).abs() < 1e-6,
                "{name} {}: model {recomputed}, MILP {:?}",
                r.solver,
                r.objective
            );
        }
        let (h, c) = (results[0].objective.unwrap(), results[1].objective.unwrap());
        assert!((h - c).abs() < 1e-6, "{name}: highs {h}, cbc {c}");
    }
}

#[test]
fn greedy_start_is_feasible_scores_its_tree_and_pruning_never_loses() {
    let wine = dataset("wine.csv", &[]);
    let rows: Vec<usize> = (0..wine.n_samples()).step_by(2).collect();
    let (x, y, part) = part_of(&wine, &rows);
    for depth in 1..=4 {
        for lambda in [0.0, 0.3] {
            let p = FlowOctParams {
                thresholds: 3,
                ..params(depth, lambda)
            };
            let problem = flowoct::build(x.clone(), y.clone(), part.n_classes(), p).unwrap();
            problem.milp.validate().unwrap();
            let tree = start::greedy_tree(&problem);
            let point = problem.point_of_tree(&tree);
            let violation = problem.milp.max_violation(&point);
            assert!(
                violation <= 1e-9,
                "D={depth} lambda={lambda}: violation {violation}"
            );
            let objective = problem.milp.objective_value(&point);
            assert!((objective - problem.tree_objective(&tree)).abs() < 1e-9);
            // Pruning a complete tree (node t on feature t mod F, majority labels) for the
            // objective never lowers it, and leaves a feasible start.
            let features = problem.features.len();
            let full = flowoct::FlowTree {
                nodes: (0..tree.nodes.len())
                    .map(|t| {
                        if t < (1 << depth) - 1 {
                            FlowNode::Branch(t % features)
                        } else {
                            FlowNode::Predict(0)
                        }
                    })
                    .collect(),
            };
            let full = problem.with_majority_labels(full);
            let pruned = start::prune(&problem, full.clone());
            assert!(problem.tree_objective(&pruned) >= problem.tree_objective(&full) - 1e-9);
            assert!(problem.milp.is_feasible(&problem.point_of_tree(&pruned)));
            assert_eq!(
                problem.tree_of_point(&point),
                tree,
                "D={depth}: tree read back"
            );
        }
    }
}

#[test]
fn fit_save_load_predict_and_draw() {
    let monks = dataset("monks3.csv", &["a1", "a2", "a3", "a4", "a5", "a6"]);
    let rows: Vec<usize> = (0..monks.n_samples()).step_by(2).collect();
    let (x, y, part) = part_of(&monks, &rows);
    let problem = flowoct::build(x, y, part.n_classes(), params(2, 0.01)).unwrap();
    let result = solve("highs", &problem, Some(flowoct::greedy_start(&problem)));
    assert_eq!(
        result.status,
        TerminationStatus::Optimal,
        "{}",
        result.raw_status
    );
    let model = fitted(&problem, &result, &part);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flowoct.json");
    model.save(&path).unwrap();
    assert_eq!(glassbox::model::model_kind(&path).unwrap(), "flowoct");
    let loaded = FlowOctModel::load(&path).unwrap();
    assert_eq!(loaded, model);
    // Predictions on the training rows and on the rows not trained on.
    assert_eq!(loaded.predict(&monks.x), model.predict(&monks.x));
    // The root's rule in the user's units sends left exactly the raw rows below it.
    let split = model.tree.nodes[0].clone().expect("the root splits");
    let (j, w) = split.weights[0];
    let user = model.tree.user_threshold(j, w, split.threshold);
    let text = loaded.describe();
    let rule = format!("node 0: {} < {:.6}", part.feature_names[j], user);
    assert!(text.starts_with("FlowOCT depth 2"), "{text}");
    assert!(text.contains(&rule), "{rule} not in\n{text}");
    let scaled = MinMaxScaler::fit(&part.x).transform(&part.x);
    for i in 0..part.n_samples() {
        assert_eq!(
            w * scaled[(i, j)] < split.threshold,
            part.x[(i, j)] < user,
            "row {i}"
        );
    }
    let loaded = glassbox::registry::Registry::builtin()
        .load_model(&path)
        .unwrap();
    let diagram = loaded.model.diagram().expect("FlowOCT draws its tree");
    assert!(diagram.title.starts_with("FlowOCT"), "{}", diagram.title);
    // The model warm-starts the same problem at its own objective.
    let start = flowoct::start_of_model(&model, &problem, &MinMaxScaler::fit(&part.x)).unwrap();
    assert!(problem.milp.is_feasible(&start));
    assert!((problem.milp.objective_value(&start) - result.objective.unwrap()).abs() < 1e-9);
    // A model of another kind is refused, naming both kinds.
    glassbox::model::save_json(&path, "oct", &model.tree).unwrap();
    let err = FlowOctModel::load(&path).unwrap_err().to_string();
    assert!(err.contains("'oct'") && err.contains("'flowoct'"), "{err}");
}

fn write_config(dir: &Path, formulation: &str, solver: &str) -> std::path::PathBuf {
    let text = format!(
        "[data]\npath = \"{}\"\ncategorical = [\"a1\", \"a2\", \"a3\", \"a4\", \"a5\", \"a6\"]\n\
         [split]\ntest_fraction = 0.7\nrepeats = 1\nseed = 3\n\
         [formulation]\n{formulation}\n[solver]\n{solver}\n",
        datasets().join("monks1.csv").display()
    );
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn runs_from_config_on_both_backends_with_the_same_optimum() {
    let dir = tempfile::tempdir().unwrap();
    let mut objectives = Vec::new();
    for solver in ["highs", "cbc"] {
        let config = ExperimentConfig::load(&write_config(
            dir.path(),
            "name = \"flowoct\"\ndepth = 2\nlambda = 0.02",
            &format!("name = \"{solver}\"\nrelative_gap = 0.0\ntime_limit = 60.0"),
        ))
        .unwrap();
        let out = dir.path().join(solver);
        let outcome = experiment::run(&config, &out, true, false).unwrap();
        let r = &outcome.records[0];
        assert_eq!(r.status, "optimal", "{solver}: {r:?}");
        assert_eq!(r.formulation, "flowoct");
        assert_eq!(r.lambda_local, Some(0.02));
        let model = FlowOctModel::load(&out.join("models/split-0.json")).unwrap();
        assert_eq!(model.tree.depth, 2);
        // The objective is the model's on the training rows.
        let objective = r.objective.unwrap();
        let correct = (r.train_accuracy * r.n_train as f64).round();
        let recomputed = 0.98 * correct - 0.02 * model.num_splits() as f64;
        assert!(
            (recomputed - objective).abs() < 1e-6,
            "{solver}: {recomputed} vs {objective}"
        );
        objectives.push(objective);
    }
    assert!(
        (objectives[0] - objectives[1]).abs() < 1e-6,
        "{objectives:?}"
    );
}

#[test]
fn bad_parameters_are_errors_that_name_them() {
    let dir = tempfile::tempdir().unwrap();
    let load = |formulation: &str, solver: &str| {
        ExperimentConfig::load(&write_config(dir.path(), formulation, solver))
            .and_then(|c| experiment::run(&c, &dir.path().join("out"), true, false).map(|_| ()))
            .unwrap_err()
            .to_string()
    };
    let highs = "name = \"highs\"";
    for (formulation, expected) in [
        ("depth = 0", "depth must be 1 to 4"),
        ("depth = 5", "depth must be 1 to 4"),
        ("lambda = -0.1", "lambda must be in [0, 1]"),
        ("lambda = 1.5", "lambda must be in [0, 1]"),
        ("lambda = nan", "lambda must be in [0, 1]"),
        ("thresholds = 0", "thresholds must be at least 1"),
        ("alpha = 0.1", "alpha"),
        ("start = \"cart\"", "cart"),
    ] {
        let e = load(&format!("name = \"flowoct\"\n{formulation}"), highs);
        assert!(e.contains(expected), "{formulation}: {e}");
    }
    // An NLP backend cannot solve it.
    let e = load("name = \"flowoct\"", "name = \"ipopt\"");
    assert!(e.contains("ipopt") && e.contains("mixed-integer"), "{e}");
    // Data that are not scaled are refused by the problem itself.
    let x = Arc::new(DMatrix::from_row_slice(2, 1, &[0.0, 3.0]));
    let e = flowoct::build(x, Arc::new(vec![0, 1]), 2, params(1, 0.0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("scaled"), "{e}");
}

#[test]
fn the_example_config_parses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/flowoct_monks1.toml");
    let config = ExperimentConfig::load(&path).unwrap();
    assert_eq!(config.formulation.name(), "flowoct");
}
