//! Loss-optimal trees (thesis (3.6)-(3.13) with the l1 regularizer) solved by HiGHS and CBC:
//! both backends reach the same optimum, the fitted model reproduces the MILP's objective
//! (hinge loss plus lambda times the l1 norms), the misclassification tree of depth 1 is at
//! least as good as every axis-aligned split and its MILP objective (run by the engine) is
//! the fitted tree's training errors, runs from config and refuses multiclass data.

use glassbox::data::{ClassificationData, CsvOptions, MinMaxScaler, Table};
use glassbox::experiment::{self, ExperimentConfig};
use glassbox::formulation::MilpClassifierFormulation;
use glassbox::formulations::loss_tree::{Loss, LossTreeConfig, LossTreeModel, LossTreeProblem};
use glassbox::model::Classifier;
use glassbox::{registry, SolveOptions, SolveResult, TerminationStatus};
use std::path::Path;
use std::sync::Arc;

fn part(name: &str, step: usize, take: usize) -> ClassificationData {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/datasets")
        .join(name);
    let data = Table::from_csv(&path, &CsvOptions::default())
        .unwrap()
        .encode_classification()
        .unwrap();
    let rows: Vec<usize> = (0..data.n_samples()).step_by(step).take(take).collect();
    data.rows(&rows)
}

fn solve(solver: &str, problem: &LossTreeProblem) -> SolveResult {
    let options = SolveOptions {
        relative_gap: Some(0.0),
        absolute_gap: Some(0.0),
        time_limit: Some(60.0),
        threads: Some(1),
        ..Default::default()
    };
    let backend = registry::milp_solver(solver, &options).unwrap();
    backend.solve(&problem.milp, &options).unwrap()
}

fn fit(config: &LossTreeConfig, data: &ClassificationData) -> (LossTreeProblem, Vec<SolveResult>) {
    let x = Arc::new(MinMaxScaler::fit(&data.x).transform(&data.x));
    let problem = config
        .problem(x, Arc::new(data.y.clone()), data.n_classes())
        .unwrap();
    problem.milp.validate().unwrap();
    let results: Vec<SolveResult> = ["highs", "cbc"]
        .iter()
        .map(|s| solve(s, &problem))
        .collect();
    for r in &results {
        assert_eq!(
            r.status,
            TerminationStatus::Optimal,
            "{}: {}",
            r.solver,
            r.raw_status
        );
    }
    let (h, c) = (results[0].objective.unwrap(), results[1].objective.unwrap());
    assert!(
        (h - c).abs() <= 1e-6 * h.abs().max(1.0),
        "highs {h}, cbc {c}"
    );
    (problem, results)
}

fn model(
    config: &LossTreeConfig,
    problem: &LossTreeProblem,
    r: &SolveResult,
    data: &ClassificationData,
) -> LossTreeModel {
    config.model(
        problem,
        &r.primal,
        MinMaxScaler::fit(&data.x),
        data.classes.clone(),
        data.encoding.clone(),
    )
}

/// sum over layers of the hinge losses of the nodes each point reaches, plus lambda times
/// the l1 norms (3.12), computed from the model alone.
fn hinge_objective(model: &LossTreeModel, data: &ClassificationData, lambda: f64) -> f64 {
    let z = model.scaler.transform(&data.x);
    let mut total = 0.0;
    for i in 0..data.n_samples() {
        let y = if data.y[i] == 1 { 1.0 } else { -1.0 };
        let mut t = 0;
        for _ in 0..model.depth {
            let (w, b) = &model.planes[t];
            let s: f64 = w
                .iter()
                .enumerate()
                .map(|(j, v)| v * z[(i, j)])
                .sum::<f64>()
                + b;
            total += (1.0 - y * s).max(0.0);
            t = if s < model.cut() {
                2 * t + 1
            } else {
                2 * t + 2
            };
        }
    }
    let l1: f64 = model
        .planes
        .iter()
        .flat_map(|(w, _)| w.iter())
        .map(|v| v.abs())
        .sum();
    total + lambda * l1
}

#[test]
fn hinge_trees_agree_across_backends_and_match_the_model() {
    let data = part("haberman.csv", 10, 30);
    for depth in [1, 2] {
        let config = LossTreeConfig {
            depth,
            loss: Loss::Hinge,
            lambda: 0.1,
            ..Default::default()
        };
        let (problem, results) = fit(&config, &data);
        for r in &results {
            let m = model(&config, &problem, r, &data);
            let recomputed = hinge_objective(&m, &data, config.lambda);
            let objective = r.objective.unwrap();
            assert!(
                (recomputed - objective).abs() < 1e-5 * objective.max(1.0),
                "depth {depth} {}: model {recomputed}, MILP {objective}",
                r.solver
            );
        }
    }
}

#[test]
fn misclassification_depth_one_beats_every_axis_split() {
    let data = part("haberman.csv", 8, 36);
    let config = LossTreeConfig {
        depth: 1,
        loss: Loss::Misclassification,
        lambda: 0.0,
        ..Default::default()
    };
    let (problem, results) = fit(&config, &data);
    let errors = results[0].objective.unwrap();
    // The best axis-aligned split (either side may predict either class).
    let x = MinMaxScaler::fit(&data.x).transform(&data.x);
    let n = data.n_samples();
    let mut best_axis = n
        .min(data.y.iter().filter(|&&k| k == 1).count())
        .min(n - data.y.iter().filter(|&&k| k == 1).count());
    for j in 0..x.ncols() {
        for i0 in 0..n {
            let threshold = x[(i0, j)];
            let above_is_one: usize = (0..n)
                .filter(|&i| (x[(i, j)] > threshold) != (data.y[i] == 1))
                .count();
            best_axis = best_axis.min(above_is_one).min(n - above_is_one);
        }
    }
    assert!(
        errors <= best_axis as f64 + 1e-6,
        "oblique {errors} > axis {best_axis}"
    );
    let m = model(&config, &problem, &results[0], &data);
    let wrong = m
        .predict(&data.x)
        .iter()
        .zip(&data.y)
        .filter(|(p, y)| p != y)
        .count();
    // Points exactly on the hyperplane may count for either class in the MILP.
    assert!(
        (wrong as f64 - errors).abs() <= 1.0 + 1e-6,
        "model {wrong}, MILP {errors}"
    );
}

/// The runner tightens the backend's integrality tolerance to what the misclassification
/// rows need (`integrality_tolerance`): on pima's 8 features at the defaults (epsilon 1e-4,
/// weight_bound 10, so M = 162) HiGHS's own 1e-6 let the second split's MILP report 2
/// errors as optimal for a tree that misclassifies 14 of its 38 training rows.
#[test]
fn misclassification_objective_is_the_fitted_trees_training_errors() {
    let dir = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/pima.csv");
    for solver in ["highs", "cbc"] {
        let path = dir.path().join(format!("{solver}.toml"));
        std::fs::write(
            &path,
            format!(
                "[data]\npath = \"{}\"\n[split]\ntest_fraction = 0.95\nrepeats = 3\nseed = 1\n\
                 [formulation]\nname = \"loss_tree\"\ndepth = 1\nloss = \"misclassification\"\n\
                 lambda = 0.0\n[solver]\nname = \"{solver}\"\ntime_limit = 30.0\n",
                data.display()
            ),
        )
        .unwrap();
        let config = ExperimentConfig::load(&path).unwrap();
        let out = dir.path().join(solver);
        let outcome = experiment::run(&config, &out, true, false).unwrap();
        assert_eq!(outcome.records.len(), 3);
        let mut some_errors = false;
        for r in &outcome.records {
            assert_eq!(r.status, "optimal", "{solver}: {r:?}");
            // The record says what the backend solved to: tighter than the default 1e-6.
            let tolerance = r.milp.as_ref().unwrap().integrality_tolerance.unwrap();
            assert!(tolerance < 1e-6, "{solver}: {tolerance}");
            let objective = r.objective.unwrap();
            let errors = (1.0 - r.train_accuracy) * r.n_train as f64;
            assert!(
                (objective - errors).abs() < 1e-3,
                "{solver} split {}: MILP objective {objective}, the tree's errors {errors}",
                r.split
            );
            some_errors |= errors > 0.5;
        }
        assert!(
            some_errors,
            "{solver}: every split separable, nothing checked"
        );
    }
}

#[test]
fn runs_from_config_and_refuses_multiclass() {
    let dir = tempfile::tempdir().unwrap();
    let write = |data: &str| {
        let path = dir.path().join("c.toml");
        let data = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/datasets")
            .join(data);
        std::fs::write(
            &path,
            format!(
                "[data]\npath = \"{}\"\n[split]\ntest_fraction = 0.9\nseed = 1\n\
                 [formulation]\nname = \"loss_tree\"\ndepth = 2\nlambda = 0.1\n\
                 [solver]\nname = \"highs\"\ntime_limit = 10.0\n",
                data.display()
            ),
        )
        .unwrap();
        ExperimentConfig::load(&path).unwrap()
    };
    let out = dir.path().join("out");
    let outcome = experiment::run(&write("haberman.csv"), &out, true, false).unwrap();
    let r = &outcome.records[0];
    assert!(r.selected && r.test_accuracy > 0.5, "{r:?}");
    let loaded = LossTreeModel::load(&out.join("models/split-0.json")).unwrap();
    assert!(loaded.describe().contains("node 0: score"));
    let err = experiment::run(&write("iris.csv"), &out, true, false)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("binary") && err.contains("3 classes"), "{err}");
}
