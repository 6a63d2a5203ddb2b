//! FlowOCT as a tree-search problem (`formulations/flowoct/tree_search.rs`): the `dp`
//! backend's optimum of FlowOCT's statement, read back into FlowOCT's terms, equals HiGHS's
//! and CBC's optimum of the FlowOCT MILP (backends from the registry), on seeded binary data
//! at every lambda from 0 to 1 and on small samples of monks-1, car and iris; the point read
//! back is the MILP point of a tree that scores that objective, also for a solve stopped at a
//! limit (its bound above its objective, the gap in FlowOCT's units). Through the engine,
//! `[solver] name = "dp"` on `[formulation] name = "flowoct"` gives HiGHS's objectives and a
//! FlowOCT model, and the summary labels its solves "tree search", HiGHS's "MILP". Small samples keep every MILP solve to seconds.

use glassbox::data::{ClassificationData, CsvOptions, MinMaxScaler, Table};
use glassbox::experiment::grid::Experiment;
use glassbox::experiment::{self, ExperimentConfig};
use glassbox::formulation::MilpClassifierFormulation;
use glassbox::formulations::flowoct::{
    self, FlowNode, FlowOctConfig, FlowOctModel, FlowOctProblem, FlowTree,
};
use glassbox::{registry, SolveOptions, TerminationStatus};
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

fn exact() -> SolveOptions {
    SolveOptions {
        relative_gap: Some(0.0),
        absolute_gap: Some(0.0),
        time_limit: Some(60.0),
        threads: Some(1),
        ..Default::default()
    }
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
                1 + usize::from(x[(i, 1)] > 0.5)
            } else {
                usize::from(x[(i, 2)] > 0.5)
            }
        })
        .collect();
    (x, y)
}

/// Solves `problem`'s statement with `dp` and HiGHS and CBC its MILP; asserts that all are
/// optimal with the same objective, and that `dp`'s point, read back, is a feasible MILP
/// point whose tree scores that objective.
fn assert_dp_equals_the_milp_backends(
    case: &str,
    config: &FlowOctConfig,
    problem: &FlowOctProblem,
) {
    let statement = config.tree_search(problem).unwrap();
    assert_eq!(
        statement.problem().n_features(),
        problem.features.len(),
        "{case}: one search feature per binary feature"
    );
    let dp = registry::tree_search_solver("dp", &SolveOptions::default()).unwrap();
    let raw = dp
        .solve(statement.problem(), &SolveOptions::default())
        .unwrap();
    let result = statement.read(raw).unwrap();
    assert_eq!(result.status, TerminationStatus::Optimal, "{case}");
    assert_eq!(result.gap, Some(0.0), "{case}");
    let objective = result.objective.unwrap();
    assert!(problem.milp.is_feasible(&result.primal), "{case}");
    let tree = problem.tree_of_point(&result.primal);
    let scored = problem.tree_objective(&tree);
    assert!(
        (scored - objective).abs() < 1e-6,
        "{case}: dp's tree scores {scored}, dp says {objective}"
    );
    for backend in ["highs", "cbc"] {
        let solver = registry::milp_solver(backend, &exact()).unwrap();
        let milp = solver.solve(&problem.milp, &exact()).unwrap();
        assert_eq!(
            milp.status,
            TerminationStatus::Optimal,
            "{case} {backend}: {}",
            milp.raw_status
        );
        let optimum = milp.objective.unwrap();
        assert!(
            (optimum - objective).abs() < 1e-6,
            "{case}: {backend} {optimum}, dp {objective}"
        );
    }
}

#[test]
fn dp_equals_highs_and_cbc_on_binary_data_at_every_lambda() {
    for seed in [1, 2] {
        let (x, y) = random_binary(18, 4, seed);
        for depth in [1, 2] {
            // lambda = 1 weighs every row 0: the best tree does not split.
            for lambda in [0.0, 0.1, 0.6, 1.0] {
                let config = FlowOctConfig {
                    depth,
                    lambda,
                    ..Default::default()
                };
                let problem =
                    flowoct::build(Arc::new(x.clone()), Arc::new(y.clone()), 3, config.params())
                        .unwrap();
                let case = format!("seed {seed} D={depth} lambda={lambda}");
                assert_dp_equals_the_milp_backends(&case, &config, &problem);
            }
        }
    }
}

#[test]
fn dp_equals_highs_and_cbc_on_small_samples() {
    let monks = dataset("monks1.csv", &["a1", "a2", "a3", "a4", "a5", "a6"]);
    let car = dataset("car.csv", &["doors", "persons"]);
    let iris = dataset("iris.csv", &[]);
    let every = |data: &ClassificationData, step: usize, take: usize| -> Vec<usize> {
        (0..data.n_samples()).step_by(step).take(take).collect()
    };
    for (name, data, rows, depth, lambda, thresholds) in [
        ("monks1", &monks, every(&monks, 3, 40), 2, 0.0, 10),
        ("car", &car, every(&car, 40, 44), 2, 0.05, 10),
        ("iris", &iris, every(&iris, 3, 50), 2, 0.2, 4),
    ] {
        let part = data.rows(&rows);
        let x = MinMaxScaler::fit(&part.x).transform(&part.x);
        let config = FlowOctConfig {
            depth,
            lambda,
            thresholds,
            ..Default::default()
        };
        let problem = flowoct::build(
            Arc::new(x),
            Arc::new(part.y.clone()),
            part.n_classes(),
            config.params(),
        )
        .unwrap();
        assert_dp_equals_the_milp_backends(name, &config, &problem);
    }
}

#[test]
fn dp_runs_flowoct_from_a_config_with_highs_objectives() {
    let dir = tempfile::tempdir().unwrap();
    let mut objectives = Vec::new();
    for solver in ["dp", "highs"] {
        let text = format!(
            "[data]\npath = \"{}\"\ncategorical = [\"a1\", \"a2\", \"a3\", \"a4\", \"a5\", \"a6\"]\n\
             [split]\ntest_fraction = 0.7\nrepeats = 2\nseed = 3\n\
             [formulation]\nname = \"flowoct\"\ndepth = 2\nlambda = 0.02\n\
             [solver]\nname = \"{solver}\"\nrelative_gap = 0.0\ntime_limit = 60.0\n",
            datasets().join("monks1.csv").display()
        );
        let path = dir.path().join(format!("{solver}.toml"));
        std::fs::write(&path, text).unwrap();
        let config = ExperimentConfig::load(&path).unwrap();
        let out = dir.path().join(solver);
        let outcome = experiment::run(&config, &out, true, false).unwrap();
        assert_eq!(outcome.records.len(), 2);
        for r in &outcome.records {
            assert_eq!(r.status, "optimal", "{solver}: {r:?}");
            assert_eq!(r.formulation, "flowoct");
            assert_eq!(r.solver, solver);
        }
        // The summary labels each solve by what was solved: the search or the MILP.
        let summary = experiment::summary_table(&outcome.records);
        let (label, other) = if solver == "dp" {
            ("split 0 tree search: status optimal", "MILP:")
        } else {
            ("split 0 MILP: status optimal", "tree search:")
        };
        assert!(
            summary.contains(label) && !summary.contains(other),
            "{solver}: {summary}"
        );
        let line = std::fs::read_to_string(&outcome.results_path).unwrap();
        assert_eq!(
            line.contains("\"tree_search\":true"),
            solver == "dp",
            "{line}"
        );
        // FlowOCT maximizes: `glassbox compare` takes its largest objective as the best.
        assert!(line.contains("\"maximize\":true"), "{line}");
        // The model is FlowOCT's, and the objective is its own on the training rows.
        let model = FlowOctModel::load(&out.join("models/split-0.json")).unwrap();
        assert_eq!(model.tree.depth, 2);
        let r = &outcome.records[0];
        let correct = (r.train_accuracy * r.n_train as f64).round();
        let recomputed = 0.98 * correct - 0.02 * model.num_splits() as f64;
        let objective = r.objective.unwrap();
        assert!(
            (recomputed - objective).abs() < 1e-6,
            "{solver}: {recomputed} vs {objective}"
        );
        objectives.push(
            outcome
                .records
                .iter()
                .map(|r| r.objective.unwrap())
                .collect::<Vec<f64>>(),
        );
    }
    for (dp, highs) in objectives[0].iter().zip(&objectives[1]) {
        assert!((dp - highs).abs() < 1e-6, "dp {dp}, highs {highs}");
    }
}

#[test]
fn the_compare_example_configs_load_and_differ_only_in_the_backend() {
    for solver in ["dp", "highs", "cbc"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples")
            .join(format!("flowoct_monks1_{solver}.toml"));
        // A grid of two cells (depth 1 and 2), each a one-setting config.
        let grid = Experiment::load(&path).unwrap();
        assert_eq!(grid.cells.len(), 2);
        for cell in &grid.cells {
            assert_eq!(cell.config.solver.name, solver);
            assert_eq!(cell.config.formulation.name(), "flowoct");
        }
    }
}

#[test]
fn a_limited_dp_solve_reads_back_as_a_feasible_point_under_its_bound() {
    let (x, y) = random_binary(300, 12, 5);
    let config = FlowOctConfig {
        depth: 3,
        lambda: 0.01,
        ..Default::default()
    };
    let problem = flowoct::build(Arc::new(x), Arc::new(y), 3, config.params()).unwrap();
    let statement = config.tree_search(&problem).unwrap();
    let options = SolveOptions {
        iteration_limit: Some(1),
        ..Default::default()
    };
    let dp = registry::tree_search_solver("dp", &options).unwrap();
    let result = statement
        .read(dp.solve(statement.problem(), &options).unwrap())
        .unwrap();
    assert_eq!(result.status.as_str(), "iteration_limit_feasible");
    let (objective, bound) = (result.objective.unwrap(), result.dual_bound.unwrap());
    // FlowOCT maximizes: the search's lower bound reads back as an upper bound.
    assert!(bound > objective, "bound {bound}, objective {objective}");
    let gap = result.gap.unwrap();
    assert!(
        (gap - (bound - objective) / objective.abs()).abs() < 1e-12,
        "gap {gap}"
    );
    assert!(problem.milp.is_feasible(&result.primal));
    let scored = problem.tree_objective(&problem.tree_of_point(&result.primal));
    assert!((scored - objective).abs() < 1e-6, "{scored} vs {objective}");
}

#[test]
fn a_warm_start_enters_the_search_as_the_same_tree() {
    let (x, y) = random_binary(60, 5, 3);
    for (depth, lambda) in [(1, 0.0), (2, 0.0), (2, 0.1), (3, 0.05)] {
        let config = FlowOctConfig {
            depth,
            lambda,
            ..Default::default()
        };
        let problem =
            flowoct::build(Arc::new(x.clone()), Arc::new(y.clone()), 3, config.params()).unwrap();
        let statement = config.tree_search(&problem).unwrap();
        // The greedy start, and trees that branch on one feature everywhere (at depth 2,
        // but for a node that predicts above the leaves).
        let nodes = (1usize << (depth + 1)) - 1;
        let mut points = vec![flowoct::greedy_start(&problem)];
        for feature in [0, 4] {
            let mut tree = vec![FlowNode::Branch(feature); nodes];
            for node in tree.iter_mut().skip((1 << depth) - 1) {
                *node = FlowNode::Predict(0);
            }
            if depth == 2 {
                tree[2] = FlowNode::Predict(0);
                tree[5] = FlowNode::Unreachable;
                tree[6] = FlowNode::Unreachable;
            }
            let tree = problem.with_majority_labels(FlowTree { nodes: tree });
            points.push(problem.point_of_tree(&tree));
        }
        for (s, point) in points.iter().enumerate() {
            let case = format!("D={depth} lambda={lambda} start {s}");
            let encoded = statement.warm_start(point).unwrap();
            let tree = statement.problem().decode(&encoded).unwrap();
            let searched = statement.problem().evaluate(&tree).unwrap().objective;
            // FlowOCT's objective of the start, through the search's and from its tree.
            let from_search = (1.0 - lambda) * y.len() as f64 - searched;
            let own = problem.tree_objective(&problem.tree_of_point(point));
            assert!(
                (from_search - own).abs() < 1e-9,
                "{case}: search {from_search}, FlowOCT {own}"
            );
        }
    }
}
