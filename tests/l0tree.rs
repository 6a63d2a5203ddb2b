//! l0tree (formulation (8) of the l0 paper): exact derivatives against finite differences in
//! every layout (local / global sparsity, each approximation, substituted or explicit leaf
//! probabilities, performance constraints), the two strategies agreeing, solves by IPOPT,
//! Proposition 1's bound, the model's JSON and warm starts, and configs.

use glassbox::data::{self, CsvOptions, MinMaxScaler, Table};
use glassbox::experiment::{self, ExperimentConfig};
use glassbox::formulation::NlpClassifierFormulation;
use glassbox::formulations::l0tree::{
    proposition1_bound, Approximation, L0TreeConfig, L0TreeModel, L0TreeProblem, LeafProbabilities,
    Loss,
};
use glassbox::model::Classifier;
use glassbox::nlp::{check, MaskedEvaluations, NlpProblem};
use glassbox::{registry, SolveOptions, WarmStart};
use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::sync::Arc;

fn dataset(name: &str) -> data::ClassificationData {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../shared/datasets/{name}"));
    Table::from_csv(&path, &CsvOptions::default())
        .unwrap()
        .encode_classification()
        .unwrap()
}

/// `rows` rows of iris (every k-th, all three classes), scaled.
fn iris_rows(rows: usize) -> (Arc<DMatrix<f64>>, Arc<Vec<usize>>) {
    let data = dataset("iris.csv");
    let idx: Vec<usize> = (0..data.n_samples()).step_by(150 / rows).collect();
    let data = data.rows(&idx);
    let x = MinMaxScaler::fit(&data.x).transform(&data.x);
    (Arc::new(x), Arc::new(data.y.clone()))
}

fn problem(config: &L0TreeConfig, rows: usize) -> L0TreeProblem {
    let (x, y) = iris_rows(rows);
    config.problem(x, y, 3).unwrap()
}

/// Gradient, Jacobian and Hessian against central differences at perturbed data starts,
/// kept inside the bounds so that every approximation is defined around the point.
fn check_all(config: &L0TreeConfig, rows: usize, seed: u64) {
    let problem = problem(config, rows);
    let (lower, upper) = problem.variable_bounds();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..2 {
        let mut x = config.random_start(&problem, &mut rng);
        for (v, (l, u)) in x.iter_mut().zip(lower.iter().zip(&upper)) {
            *v = (*v + rng.random_range(-0.05..0.05)).clamp(l + 0.02, u - 0.02);
        }
        let step = 1e-6 / config.gamma.sqrt();
        let grad = check::gradient_error(&problem, &x, step);
        assert!(grad < 1e-5, "{config:?}: gradient error {grad}");
        let jac = check::jacobian_error(&problem, &x, step);
        assert!(jac < 1e-5, "{config:?}: jacobian error {jac}");
        let m = problem.num_constraints();
        let lambda: Vec<f64> = (0..m).map(|_| rng.random_range(-2.0..2.0)).collect();
        let obj_factor = rng.random_range(0.5..2.0);
        let hess = check::hessian_error(&problem, &x, obj_factor, &lambda, step).unwrap();
        assert!(hess < 1e-4, "{config:?}: hessian error {hess}");
    }
}

fn base() -> L0TreeConfig {
    L0TreeConfig {
        gamma: 32.0,
        lambda_local: 0.3,
        lambda_global: 0.7,
        rho: vec![0.1],
        // Moderate epsilon so finite differences near u = 0.02 are meaningful.
        eps: 1e-2,
        ..Default::default()
    }
}

#[test]
fn derivatives_of_every_approximation_substituted() {
    for (approximation, q) in [
        (Approximation::Exp, None),
        (Approximation::Appr1, Some(0.5)),
        (Approximation::Appr2, Some(1.0)),
        (Approximation::Log, None),
    ] {
        check_all(
            &L0TreeConfig {
                approximation,
                q,
                ..base()
            },
            30,
            1,
        );
    }
}

#[test]
fn derivatives_explicit_leaf_probabilities() {
    for (depth, lambda_local, lambda_global, loss) in [
        (2, 0.3, 0.7, Loss::Sum),
        (2, 0.0, 0.5, Loss::Mean),
        (2, 0.4, 0.0, Loss::Sum),
    ] {
        check_all(
            &L0TreeConfig {
                depth,
                lambda_local,
                lambda_global,
                loss,
                leaf_probabilities: LeafProbabilities::Explicit,
                rho: if depth == 2 { vec![0.1] } else { vec![] },
                ..base()
            },
            30,
            2,
        );
    }
}

#[test]
fn derivatives_depth_three_without_penalties() {
    check_all(
        &L0TreeConfig {
            depth: 3,
            lambda_local: 0.0,
            lambda_global: 0.0,
            ..base()
        },
        30,
        3,
    );
}

#[test]
fn hessian_among_free_variables_matches_the_full_hessian() {
    for leaf_probabilities in [LeafProbabilities::Substituted, LeafProbabilities::Explicit] {
        let config = L0TreeConfig {
            leaf_probabilities,
            ..base()
        };
        let problem = problem(&config, 30);
        let x = config.random_start(&problem, &mut ChaCha8Rng::seed_from_u64(4));
        let n = problem.num_variables();
        let lambda = vec![0.3; problem.num_constraints()];
        let structure = problem.hessian_structure().unwrap();
        let mut all = vec![0.0; structure.len()];
        problem.hessian_values(&x, 1.3, &lambda, &mut all);
        // Free: every other variable (cuts across nodes, leaves and auxiliaries).
        let free: Vec<bool> = (0..n).map(|v| v % 2 == 0 || v % 5 == 0).collect();
        let mut among = vec![f64::NAN; structure.len()];
        problem.hessian_values_among(&x, 1.3, &lambda, &free, &mut among);
        for (at, &(r, c)) in structure.iter().enumerate() {
            if free[r] && free[c] {
                assert!(
                    (all[at] - among[at]).abs() <= 1e-12 * (1.0 + all[at].abs()),
                    "entry ({r}, {c}): {} vs {}",
                    all[at],
                    among[at]
                );
            }
        }
    }
}

/// The two leaf-probability strategies define the same objective on the same tree, and
/// IPOPT solves both from the same start to a tree that classifies the training rows.
#[test]
fn explicit_and_substituted_agree() {
    let mut trees = Vec::new();
    for leaf_probabilities in [LeafProbabilities::Substituted, LeafProbabilities::Explicit] {
        let config = L0TreeConfig {
            lambda_global: 0.5,
            leaf_probabilities,
            rho: vec![0.1],
            ..Default::default()
        };
        let problem = problem(&config, 50);
        let x0 = config.random_start(&problem, &mut ChaCha8Rng::seed_from_u64(7));
        let solver = registry::nlp_solver("ipopt", &SolveOptions::default()).unwrap();
        let options = SolveOptions::default().with_warm_start(Some(WarmStart::primal(x0.clone())));
        let result = solver.solve(&problem, &options).unwrap();
        assert!(result.status.has_solution(), "{:?}", result.status);
        let (x, y) = iris_rows(50);
        let model = config.model(
            &problem,
            &result.primal,
            MinMaxScaler::fit(&x),
            vec!["a".into(), "b".into(), "c".into()],
            Default::default(),
        );
        // x is already in [0, 1], so the model's scaler (fitted on it) is the identity.
        let accuracy = glassbox::metrics::accuracy(&y, &model.predict(&x));
        assert!(
            accuracy > 0.9,
            "{leaf_probabilities:?}: training accuracy {accuracy}"
        );
        trees.push((problem.objective(&x0), result.objective.unwrap()));
    }
    let (start_sub, end_sub) = trees[0];
    let (start_exp, end_exp) = trees[1];
    assert!((start_sub - start_exp).abs() < 1e-9 * start_sub.abs().max(1.0));
    // Both reach good local optima of the same function (not necessarily the same one).
    assert!(end_sub < start_sub && end_exp < start_exp);
    assert!(
        (end_sub - end_exp).abs() < 0.5 * end_sub.max(end_exp),
        "{end_sub} vs {end_exp}"
    );
}

/// Proposition 1: at any (mu, C) with a = 0 the loss's partial derivatives in a are at most
/// the bound times phi'(0) (the bound is their supremum over mu and C); and with
/// lambda_G above the bound IPOPT started at a = 0 stays at the sparsest tree.
#[test]
fn proposition_1_bound_holds_and_empties_the_tree() {
    let (x, y) = iris_rows(50);
    let config = L0TreeConfig::default();
    let problem = config.problem(x.clone(), y.clone(), 3).unwrap();
    let bound = proposition1_bound(&problem);
    assert!(bound > 0.0);
    let n = problem.num_variables();
    let p = x.ncols();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for _ in 0..20 {
        let mut point = config.random_start(&problem, &mut rng);
        // a (the first p |tau_B| variables) to zero, mu and C random.
        point[..3 * p].fill(0.0);
        for v in point[3 * p..3 * p + 3].iter_mut() {
            *v = rng.random_range(-1.0..1.0);
        }
        let mut grad = vec![0.0; n];
        problem.gradient(&point, &mut grad);
        let worst = grad[..3 * p].iter().fold(0.0f64, |m, g| m.max(g.abs()));
        assert!(
            worst <= bound * 5.0 + 1e-12,
            "|xi| = {worst} above bound * alpha = {}",
            bound * 5.0
        );
    }
    let above = L0TreeConfig {
        lambda_global: 1.05 * bound,
        ..Default::default()
    };
    let problem = above.problem(x.clone(), y, 3).unwrap();
    let solver = registry::nlp_solver("ipopt", &SolveOptions::default()).unwrap();
    // The stationary point of the proposition: a = 0 (and beta = 0), C from a start.
    let mut x0 = above.random_start(&problem, &mut ChaCha8Rng::seed_from_u64(1));
    x0[..3 * p].fill(0.0);
    // mu = 0, where F' peaks: the loss's gradient in a is largest there.
    x0[3 * p..3 * p + 3].fill(0.0);
    let n = x0.len();
    x0[n - p..].fill(0.0);
    let result = solver
        .solve(
            &problem,
            &SolveOptions::default().with_warm_start(Some(WarmStart::primal(x0.clone()))),
        )
        .unwrap();
    assert!(result.status.has_solution());
    let a_max = result.primal[..3 * p]
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(a_max < 1e-4, "max |a| = {a_max} above the bound");
    // Far below the bound the same start leaves a = 0.
    let below = L0TreeConfig {
        lambda_global: 1e-3 * bound,
        ..Default::default()
    };
    let problem = below.problem(x, iris_rows(50).1, 3).unwrap();
    let result = solver
        .solve(
            &problem,
            &SolveOptions::default().with_warm_start(Some(WarmStart::primal(x0))),
        )
        .unwrap();
    let a_max = result.primal[..3 * p]
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(a_max > 1e-2, "max |a| = {a_max} far below the bound");
}

#[test]
fn bad_parameters_are_errors_naming_them() {
    let (x, y) = iris_rows(30);
    for (config, needle) in [
        (
            L0TreeConfig {
                alpha: 0.0,
                ..Default::default()
            },
            "alpha",
        ),
        (
            L0TreeConfig {
                approximation: Approximation::Appr1,
                q: Some(1.5),
                ..Default::default()
            },
            "appr1 needs 0 < q <= 1",
        ),
        (
            L0TreeConfig {
                approximation: Approximation::Appr2,
                q: Some(0.5),
                ..Default::default()
            },
            "appr2 needs q >= 1",
        ),
        (
            L0TreeConfig {
                approximation: Approximation::Log,
                eps: 0.0,
                ..Default::default()
            },
            "eps",
        ),
        (
            L0TreeConfig {
                lambda_global: -1.0,
                ..Default::default()
            },
            "lambda_global",
        ),
        (
            L0TreeConfig {
                depth: 1,
                ..Default::default()
            },
            "classes",
        ),
    ] {
        let message = match config.problem(x.clone(), y.clone(), 3) {
            Ok(_) => panic!("{config:?} accepted"),
            Err(e) => e.to_string(),
        };
        assert!(
            message.contains("l0tree") && message.contains(needle),
            "{message}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    let text = "[data]\npath = \"x.csv\"\n[formulation]\nname = \"l0tree\"\napproximation = \"cubic\"\n[solver]\nname = \"ipopt\"\n";
    let err = ExperimentConfig::parse(&file, text)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("approximation") || err.contains("cubic"),
        "{err}"
    );
}

/// The example config runs; its saved model predicts as the run measured, survives a JSON
/// round trip, and warm-starts the next run's problem.
#[test]
fn example_config_runs_and_model_round_trips() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/l0tree_iris.toml");
    let mut config = ExperimentConfig::load(&path).unwrap();
    config.split.repeats = 1;
    config.multistart.starts = 2;
    let dir = tempfile::tempdir().unwrap();
    let outcome = experiment::run(&config, dir.path(), false, false).unwrap();
    let selected = outcome.records.iter().find(|r| r.selected).unwrap();
    assert!(selected.test_accuracy > 0.85, "{}", selected.test_accuracy);
    assert!(selected.lambda_bound.unwrap() > 0.0);
    let model_path = dir.path().join("models/split-0.json");
    let model = L0TreeModel::load(&model_path).unwrap();
    assert!(model.describe().contains("l0tree"));
    let copy = dir.path().join("copy.json");
    model.save(&copy).unwrap();
    assert_eq!(L0TreeModel::load(&copy).unwrap(), model);
    // A model of another kind is refused.
    assert!(glassbox::formulations::sorct::SorctModel::load(&model_path).is_err());

    let data = dataset("iris.csv");
    let proba = model.predict_proba(&data.x);
    assert_eq!(proba.shape(), (150, 3));
    // Warm start through the user's units: the start reproduces the model's predictions.
    assert_eq!(config.formulation.name(), "l0tree");
    let f: L0TreeConfig = config.formulation_table.clone().try_into().unwrap();
    let scaler = MinMaxScaler::fit(&data.x);
    let problem = f
        .problem(
            Arc::new(scaler.transform(&data.x)),
            Arc::new(data.y.clone()),
            3,
        )
        .unwrap();
    let x0 = f.warm_start(&model, &problem, &scaler).unwrap();
    assert_eq!(x0.len(), problem.num_variables());
    let again = f.model(
        &problem,
        &x0,
        scaler,
        model.tree.classes.clone(),
        model.tree.encoding.clone(),
    );
    let before = model.predict(&data.x);
    let after = again.predict(&data.x);
    let same = before.iter().zip(&after).filter(|(a, b)| a == b).count();
    assert!(same >= 148, "{same} of 150 predictions kept");
}

/// The choice's folds solve the multistart's best point on their own rows: with explicit
/// leaf probabilities (one P_il per training row) the point is moved onto the fold's rows,
/// its other variables kept and P at the fold's path probabilities, so that P's equality
/// constraints hold there; without them the point is the fold's as it is.
#[test]
fn the_best_point_moves_onto_a_folds_rows() {
    for leaf_probabilities in [LeafProbabilities::Explicit, LeafProbabilities::Substituted] {
        let config = L0TreeConfig {
            lambda_global: 0.5,
            leaf_probabilities,
            rho: vec![0.1],
            ..Default::default()
        };
        let split = problem(&config, 50);
        let fold = problem(&config, 30);
        let point = config.random_start(&split, &mut ChaCha8Rng::seed_from_u64(3));
        let moved = config.point_on_rows(&fold, &point);
        assert_eq!(moved.len(), fold.num_variables(), "{leaf_probabilities:?}");
        // The explicit P_il come last: one per fold row (30) and leaf (4 at depth 2).
        let reach_variables = match leaf_probabilities {
            LeafProbabilities::Explicit => 30 * 4,
            LeafProbabilities::Substituted => 0,
        };
        let kept = fold.num_variables() - reach_variables;
        assert_eq!(moved[..kept], point[..kept], "{leaf_probabilities:?}");
        let mut g = vec![0.0; fold.num_constraints()];
        fold.constraints(&moved, &mut g);
        let (lower, upper) = fold.constraint_bounds();
        for (r, v) in g.iter().enumerate() {
            // The rho rows are inequalities a random point may miss; every equality holds.
            if lower[r] == upper[r] {
                assert!(
                    (v - lower[r]).abs() < 1e-12,
                    "{leaf_probabilities:?}: row {r} is {v}, not {}",
                    lower[r]
                );
            }
        }
    }
}

/// The cross-validated choice (the default) with explicit leaf probabilities runs through
/// the engine: its folds once got the split's best point with the split's P_il and
/// refused it ("the warm start's primal point has 599 values, the problem needs 491").
#[test]
fn explicit_leaf_probabilities_run_with_the_choice() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/l0tree_iris.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\"substituted\"", "\"explicit\"");
    assert!(text.contains("\"explicit\""));
    let mut config = ExperimentConfig::parse(&path, &text).unwrap();
    config.split.repeats = 1;
    config.multistart.starts = 1;
    let dir = tempfile::tempdir().unwrap();
    let outcome = experiment::run(&config, dir.path(), false, false).unwrap();
    let choice = outcome
        .records
        .iter()
        .find(|r| {
            r.origin
                .as_deref()
                .is_some_and(|o| o.starts_with("selection"))
        })
        .expect("the choice's line");
    assert!(choice.selected && choice.test_accuracy > 0.85, "{choice:?}");
}
