//! l1-regularized logistic regression: exact derivatives against finite differences
//! (binary and multinomial, split and unsplit layouts, with and without sample weights),
//! end-to-end solves with IPOPT (accuracy, sparsity, stationarity), the fitted model in
//! the user's units, save / load, warm starts, and the example config.

use glassbox::data::{self, ClassificationData, CsvOptions, MinMaxScaler, Table};
use glassbox::experiment::{self, ExperimentConfig};
use glassbox::formulation::NlpClassifierFormulation;
use glassbox::formulations::logistic_l1::{
    self, LogisticL1Config, LogisticL1Model, LogisticL1Problem, LogisticWeights,
};
use glassbox::metrics;
use glassbox::model::Classifier;
use glassbox::nlp::{check, NlpProblem};
use glassbox::{registry, NlpSolver, SolveOptions, SolveResult, TerminationStatus, WarmStart};
use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::sync::Arc;

const BREAST_CANCER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/datasets/breast_cancer_wisconsin.csv"
);
const IRIS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/datasets/iris.csv");

fn load(path: &str) -> ClassificationData {
    Table::from_csv(Path::new(path), &CsvOptions::default())
        .unwrap()
        .encode_classification()
        .unwrap()
}

fn ipopt() -> Box<dyn NlpSolver> {
    registry::nlp_solver("ipopt", &SolveOptions::default()).unwrap()
}

/// Scaled features and labels of `data` (the scaler fitted on these rows).
fn scaled(data: &ClassificationData) -> (Arc<DMatrix<f64>>, Arc<Vec<usize>>, MinMaxScaler) {
    let scaler = MinMaxScaler::fit(&data.x);
    (
        Arc::new(scaler.transform(&data.x)),
        Arc::new(data.y.clone()),
        scaler,
    )
}

fn solve(problem: &LogisticL1Problem, x0: Vec<f64>) -> SolveResult {
    let options = SolveOptions::default().with_warm_start(Some(WarmStart::primal(x0)));
    let result = ipopt().solve(problem, &options).unwrap();
    eprintln!(
        "{}: {} ({}), objective {:?}, {} iterations, {:.3} s",
        problem.name(),
        result.status,
        result.raw_status,
        result.objective,
        result.iterations,
        result.wall_seconds
    );
    assert_eq!(
        result.status,
        TerminationStatus::LocallyOptimal,
        "{}",
        result.raw_status
    );
    result
}

// ---------------------------------------------------------------------------------------
// Derivatives

fn check_derivatives(data: &ClassificationData, lambda: f64, weighted: bool, seed: u64) {
    let (x, y, _) = scaled(data);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let weights = weighted.then(|| {
        (0..y.len())
            .map(|_| rng.random_range(0.0..3.0))
            .collect::<Vec<f64>>()
    });
    let problem = LogisticL1Problem::new(x, y, data.n_classes(), lambda, weights).unwrap();
    assert_eq!(problem.layout().split, lambda > 0.0);
    assert_eq!(problem.num_constraints(), 0);
    let (lower, _) = problem.variable_bounds();
    for _ in 0..3 {
        // Large random weights, so that probabilities are far from uniform and every
        // term of the Hessian matters; split variables stay inside their bounds.
        let x: Vec<f64> = lower
            .iter()
            .map(|&l| {
                if l == 0.0 {
                    rng.random_range(0.0..3.0)
                } else {
                    rng.random_range(-3.0..3.0)
                }
            })
            .collect();
        let step = 1e-6;
        let grad = check::gradient_error(&problem, &x, step);
        assert!(grad < 1e-6, "{}: gradient error {grad}", problem.name());
        let obj_factor = rng.random_range(0.5..2.0);
        let hess = check::hessian_error(&problem, &x, obj_factor, &[], step).unwrap();
        assert!(hess < 1e-6, "{}: Hessian error {hess}", problem.name());
        eprintln!(
            "{} lambda {lambda} weighted {weighted}: gradient error {grad:.2e}, Hessian error {hess:.2e}",
            problem.name()
        );
    }
}

/// Every fifth row of breast cancer (binary, 30 features).
fn breast_cancer_subset() -> ClassificationData {
    let data = load(BREAST_CANCER);
    let idx: Vec<usize> = (0..data.n_samples()).step_by(5).collect();
    data.rows(&idx)
}

#[test]
fn derivatives_binary() {
    let data = breast_cancer_subset();
    assert_eq!(data.n_classes(), 2);
    check_derivatives(&data, 0.05, false, 1);
    check_derivatives(&data, 0.05, true, 2);
    check_derivatives(&data, 0.0, false, 3);
    check_derivatives(&data, 0.0, true, 4);
}

#[test]
fn derivatives_multinomial() {
    let data = load(IRIS);
    assert_eq!(data.n_classes(), 3);
    check_derivatives(&data, 0.05, false, 5);
    check_derivatives(&data, 0.05, true, 6);
    check_derivatives(&data, 0.0, false, 7);
    check_derivatives(&data, 0.0, true, 8);
}

#[test]
fn extreme_scores_stay_finite() {
    let data = load(IRIS);
    let (x, y, _) = scaled(&data);
    let problem = LogisticL1Problem::new(x, y, 3, 0.1, None).unwrap();
    let point = vec![500.0; problem.num_variables()];
    let mut point_neg = point.clone();
    point_neg[..problem.layout().w_minus].fill(0.0);
    for z in [&point, &point_neg] {
        assert!(problem.objective(z).is_finite());
        let mut g = vec![0.0; problem.num_variables()];
        problem.gradient(z, &mut g);
        assert!(g.iter().all(|v| v.is_finite()));
    }
}

// ---------------------------------------------------------------------------------------
// Solves

#[test]
fn breast_cancer_small_lambda_fits_and_large_lambda_zeroes_every_weight() {
    let data = load(BREAST_CANCER);
    let (x, y, scaler) = scaled(&data);
    let config = LogisticL1Config {
        lambda: 1e-3,
        lambda_log2: None,
    };
    let problem = config.problem(x.clone(), y.clone(), 2).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let result = solve(&problem, config.random_start(&problem, &mut rng));
    let model = config.model(
        &problem,
        &result.primal,
        scaler.clone(),
        data.classes.clone(),
        data.encoding.clone(),
    );
    let accuracy = metrics::accuracy(&data.y, &model.predict(&data.x));
    let (dl, dg) = config.sparsity(&model);
    eprintln!("lambda 1e-3: training accuracy {accuracy:.4}, delta_L {dl:.1}%, delta_G {dg:.1}%");
    assert!(accuracy > 0.95, "training accuracy {accuracy}");
    assert_eq!(model.coefficients.weights.shape(), (30, 1));
    assert_eq!(config.reported_params(&problem).lambda_local, Some(1e-3));
    assert_eq!(config.reported_params(&problem).depth, None);

    // Every |dloss/dw| <= 1 on features in [0, 1], so lambda = 2 makes w = 0 optimal.
    let config = LogisticL1Config {
        lambda: 2.0,
        lambda_log2: None,
    };
    let problem = config.problem(x, y, 2).unwrap();
    let result = solve(&problem, config.random_start(&problem, &mut rng));
    let model = config.model(
        &problem,
        &result.primal,
        scaler,
        data.classes.clone(),
        data.encoding.clone(),
    );
    let largest = model.coefficients.weights.amax();
    eprintln!("lambda 2: largest |w| {largest:.2e}");
    assert!(
        largest <= metrics::SPARSITY_TOLERANCE,
        "largest |w| {largest}"
    );
    assert_eq!(config.sparsity(&model), (100.0, 100.0));
    // With no weights the model predicts the prior: the intercept is log(n1 / n0).
    let n1 = data.y.iter().filter(|&&k| k == 1).count() as f64;
    let n0 = data.y.len() as f64 - n1;
    let b = model.coefficients.intercepts[0];
    assert!((b - (n1 / n0).ln()).abs() < 1e-6, "intercept {b}");
}

/// N points in [0, 1]^3 with labels drawn from a softmax of a known linear model: classes
/// overlap, so no hyperplane separates them and the unpenalized optimum is finite.
fn noisy_data(n: usize, classes: usize, seed: u64) -> (Arc<DMatrix<f64>>, Arc<Vec<usize>>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = DMatrix::from_fn(n, 3, |_, _| rng.random_range(0.0..1.0));
    let truth = DMatrix::from_fn(3, classes, |j, k| ((j + 2 * k) % 5) as f64 - 2.0);
    let scores = &x * &truth;
    let y = (0..n)
        .map(|i| {
            let e: Vec<f64> = scores.row(i).iter().map(|s| s.exp()).collect();
            let mut u = rng.random_range(0.0..e.iter().sum::<f64>());
            for (k, v) in e.iter().enumerate() {
                if u < *v {
                    return k;
                }
                u -= v;
            }
            classes - 1
        })
        .collect();
    (Arc::new(x), Arc::new(y))
}

fn check_unpenalized(classes: usize, seed: u64) {
    let (x, y) = noisy_data(300, classes, seed);
    let fitted = logistic_l1::fit(
        x.clone(),
        y.clone(),
        classes,
        0.0,
        None,
        ipopt().as_ref(),
        &SolveOptions::default(),
    )
    .unwrap();
    assert_eq!(fitted.result.status, TerminationStatus::LocallyOptimal);
    let problem = LogisticL1Problem::new(x, y, classes, 0.0, None).unwrap();
    assert!(!problem.layout().split);
    let coefficients = fitted.coefficients.unwrap();
    let point = problem.layout().point(&coefficients);
    let mut grad = vec![0.0; problem.num_variables()];
    problem.gradient(&point, &mut grad);
    let norm = grad.iter().map(|g| g * g).sum::<f64>().sqrt();
    let best = problem.objective(&point);
    let mut rng = ChaCha8Rng::seed_from_u64(seed + 100);
    let mut others = Vec::new();
    for scale in [0.1, 1.0, 3.0] {
        for _ in 0..5 {
            // Random points, and random perturbations of the solution.
            let random: Vec<f64> = (0..point.len())
                .map(|_| rng.random_range(-scale..scale))
                .collect();
            let near: Vec<f64> = point
                .iter()
                .map(|v| v + rng.random_range(-scale..scale) * 0.01)
                .collect();
            others.push(problem.objective(&random));
            others.push(problem.objective(&near));
        }
    }
    let lowest_other = others.iter().copied().fold(f64::INFINITY, f64::min);
    eprintln!(
        "K={classes}, lambda 0: objective {best:.6}, gradient norm {norm:.2e}, best of {} other points {lowest_other:.6}, {} iterations",
        others.len(),
        fitted.result.iterations
    );
    assert!(norm < 1e-5, "gradient norm {norm} at the solution");
    assert!(best < lowest_other, "objective {best} >= {lowest_other}");
    assert!((fitted.result.objective.unwrap() - best).abs() < 1e-12);
}

#[test]
fn unpenalized_solution_is_stationary_and_lowest_binary() {
    check_unpenalized(2, 11);
}

#[test]
fn unpenalized_solution_is_stationary_and_lowest_multinomial() {
    check_unpenalized(3, 12);
}

#[test]
fn iris_multinomial_test_accuracy() {
    let data = load(IRIS);
    let (train, test) = data::stratified_split(&data.y, 0.3, 1).unwrap();
    let (train, test) = (data.rows(&train), data.rows(&test));
    let (x, y, scaler) = scaled(&train);
    let config = LogisticL1Config {
        lambda: 1e-3,
        lambda_log2: None,
    };
    config.check(4, 3).unwrap();
    let problem = config.problem(x, y, 3).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let result = solve(&problem, config.random_start(&problem, &mut rng));
    let model = config.model(
        &problem,
        &result.primal,
        scaler.clone(),
        data.classes.clone(),
        data.encoding.clone(),
    );
    let accuracy = metrics::accuracy(&test.y, &model.predict(&test.x));
    let (dl, dg) = config.sparsity(&model);
    eprintln!(
        "iris, lambda 1e-3: test accuracy {accuracy:.4} on {} rows, delta_L {dl:.1}%, delta_G {dg:.1}%",
        test.y.len()
    );
    assert!(accuracy > 0.9, "test accuracy {accuracy}");
    assert_eq!(model.coefficients.weights.shape(), (4, 3));

    // A warm start from the model is the model's own point (same scaler) and converges
    // at once.
    let start = config.warm_start(&model, &problem, &scaler).unwrap();
    let again = config.model(
        &problem,
        &start,
        scaler,
        data.classes.clone(),
        data.encoding.clone(),
    );
    let diff = (&again.coefficients.weights - &model.coefficients.weights).amax();
    assert!(diff < 1e-12, "warm start moved the weights by {diff}");
    let warm = solve(&problem, start);
    assert!(warm.iterations <= result.iterations);
}

#[test]
fn sample_weights_match_the_subproblem_they_select() {
    // Zero weight on half the rows is the same problem as the other half alone, with
    // lambda scaled by N / N_rest (the objective divides by N); weight 2 everywhere with
    // twice lambda is the same problem as weight 1.
    let data = breast_cancer_subset();
    let (x, y, _) = scaled(&data);
    let n = y.len();
    let keep: Vec<usize> = (0..n).filter(|i| i % 2 == 0).collect();
    let weights: Vec<f64> = (0..n).map(|i| if i % 2 == 0 { 1.0 } else { 0.0 }).collect();
    let lambda = 0.01;
    let solver = ipopt();
    let options = SolveOptions::default();
    let weighted = logistic_l1::fit(
        x.clone(),
        y.clone(),
        2,
        lambda,
        Some(weights),
        solver.as_ref(),
        &options,
    )
    .unwrap();
    let rest = data.rows(&keep);
    let x_rest = Arc::new(DMatrix::from_fn(keep.len(), x.ncols(), |i, j| {
        x[(keep[i], j)]
    }));
    let subset = logistic_l1::fit(
        x_rest,
        Arc::new(rest.y.clone()),
        2,
        lambda * n as f64 / keep.len() as f64,
        None,
        solver.as_ref(),
        &options,
    )
    .unwrap();
    let doubled = logistic_l1::fit(
        x.clone(),
        y.clone(),
        2,
        2.0 * lambda,
        Some(vec![2.0; n]),
        solver.as_ref(),
        &options,
    )
    .unwrap();
    let plain = logistic_l1::fit(x, y, 2, lambda, None, solver.as_ref(), &options).unwrap();
    let close = |a: &LogisticWeights, b: &LogisticWeights| {
        (&a.weights - &b.weights)
            .amax()
            .max((a.intercepts[0] - b.intercepts[0]).abs())
    };
    // The objectives agree to about the solver's tolerance (1e-8, scaled, plus the
    // barrier's bias); the coefficients, on 30 correlated
    // features, to a looser one.
    let ratio = keep.len() as f64 / n as f64;
    let (fw, fs) = (
        weighted.result.objective.unwrap(),
        subset.result.objective.unwrap() * ratio,
    );
    let (fd, fp) = (
        doubled.result.objective.unwrap(),
        plain.result.objective.unwrap() * 2.0,
    );
    eprintln!("objectives: {fw:.10} vs {fs:.10}; {fd:.10} vs {fp:.10}");
    assert!((fw - fs).abs() < 1e-6 * fw.abs().max(1.0));
    assert!((fd - fp).abs() < 1e-6 * fd.abs().max(1.0));
    let (w, s, d, p) = (
        weighted.coefficients.unwrap(),
        subset.coefficients.unwrap(),
        doubled.coefficients.unwrap(),
        plain.coefficients.unwrap(),
    );
    eprintln!(
        "zero weights vs subset: {:.2e}; doubled vs plain: {:.2e}",
        close(&w, &s),
        close(&d, &p)
    );
    assert!(close(&w, &s) < 1e-3);
    assert!(close(&d, &p) < 1e-3);
}

#[test]
fn bad_inputs_are_errors() {
    let data = load(IRIS);
    let (x, y, _) = scaled(&data);
    let new = |lambda: f64, w: Option<Vec<f64>>, classes: usize| {
        LogisticL1Problem::new(x.clone(), y.clone(), classes, lambda, w)
    };
    assert!(new(-1.0, None, 3).is_err());
    assert!(new(f64::NAN, None, 3).is_err());
    assert!(new(0.1, Some(vec![1.0; 3]), 3).is_err());
    assert!(new(0.1, Some(vec![-1.0; y.len()]), 3).is_err());
    assert!(new(0.1, None, 2).is_err(), "labels 2 with 2 classes");
    assert!(new(0.1, None, 1).is_err());
    let config = LogisticL1Config {
        lambda: -0.5,
        lambda_log2: None,
    };
    assert!(config.check(4, 3).is_err());
    let config = LogisticL1Config {
        lambda: -0.5,
        lambda_log2: Some(-2.0),
    };
    assert_eq!(config.resolve(4).unwrap(), 0.25 / 4.0);
}

// ---------------------------------------------------------------------------------------
// The fitted model

#[test]
fn model_in_user_units_save_load_and_warm_start_across_scalers() {
    let data = load(IRIS);
    let (x, y, scaler) = scaled(&data);
    let config = LogisticL1Config::default();
    let problem = config.problem(x, y, 3).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let result = solve(&problem, config.random_start(&problem, &mut rng));
    let model = config.model(
        &problem,
        &result.primal,
        scaler.clone(),
        data.classes.clone(),
        data.encoding.clone(),
    );

    // The user-unit coefficients predict the same probabilities on raw rows.
    let user = model.user_units();
    let direct = user.predict_proba(&data.x);
    let through_scaler = model.predict_proba(&data.x);
    assert!((&direct - &through_scaler).amax() < 1e-10);
    for i in 0..direct.nrows() {
        assert!((direct.row(i).sum() - 1.0).abs() < 1e-12);
    }
    let text = model.describe();
    eprintln!("{text}");
    assert!(text.contains("score_Iris-setosa"));
    assert!(text.contains("petal_width"));

    // Save and load.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.json");
    model.save(&path).unwrap();
    assert_eq!(glassbox::model::model_kind(&path).unwrap(), "logistic_l1");
    let loaded = LogisticL1Model::load(&path).unwrap();
    // JSON keeps every coefficient to within an ulp or so.
    assert_eq!(loaded.classes, model.classes);
    assert_eq!(loaded.encoding, model.encoding);
    assert_eq!(loaded.scaler, model.scaler);
    let diff = (&loaded.coefficients.weights - &model.coefficients.weights).amax();
    assert!(diff < 1e-12, "weights changed by {diff}");
    assert_eq!(
        loaded.predict(&data.x),
        model.predict(&data.x),
        "predictions changed"
    );
    assert!(config.load_model(&path).is_ok());

    // A warm start on rows 0..100 (another scaler) carries the model over: the start
    // predicts those rows as the model does.
    let idx: Vec<usize> = (0..100).collect();
    let part = data.rows(&idx);
    let (xp, yp, scaler_p) = scaled(&part);
    let problem_p = config.problem(xp.clone(), yp, 3).unwrap();
    let start = config.warm_start(&model, &problem_p, &scaler_p).unwrap();
    let carried = problem_p.coefficients(&start);
    let diff = (carried.predict_proba(&xp) - model.predict_proba(&part.x)).amax();
    assert!(
        diff < 1e-10,
        "warm start changed the probabilities by {diff}"
    );

    // A model of another shape is refused as a start.
    let binary = load(BREAST_CANCER);
    let (xb, yb, scaler_b) = scaled(&binary);
    let problem_b = config.problem(xb, yb, 2).unwrap();
    assert!(config.warm_start(&model, &problem_b, &scaler_b).is_err());
}

#[test]
fn binary_probabilities_are_stable_and_complementary() {
    let w = LogisticWeights {
        weights: DMatrix::from_element(1, 1, 1.0),
        intercepts: vec![0.0],
    };
    let x = DMatrix::from_column_slice(4, 1, &[-1000.0, -1.0, 0.0, 1000.0]);
    let p = w.predict_proba(&x);
    assert_eq!(p.shape(), (4, 2));
    assert_eq!(p[(0, 0)], 1.0);
    assert_eq!(p[(3, 1)], 1.0);
    assert!((p[(2, 0)] - 0.5).abs() < 1e-15);
    assert!((p[(1, 1)] - 1.0 / (1.0 + 1f64.exp())).abs() < 1e-15);
    assert_eq!(w.predict(&x), vec![0, 0, 0, 1]);
    assert_eq!(w.classes(), 2);
}

// ---------------------------------------------------------------------------------------
// The runner

#[test]
fn example_config_runs() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/logistic_l1_iris.toml");
    let config = ExperimentConfig::load(&path).unwrap();
    let parsed: LogisticL1Config = config.formulation_table.clone().try_into().unwrap();
    assert!(parsed.lambda_log2.is_some());
    assert_eq!(config.formulation.name(), "logistic_l1");
    let out = tempfile::tempdir().unwrap();
    let outcome = experiment::run(&config, out.path(), false, false).unwrap();
    let selected: Vec<_> = outcome.records.iter().filter(|r| r.selected).collect();
    assert_eq!(selected.len(), config.split.repeats);
    let mean = selected.iter().map(|r| r.test_accuracy).sum::<f64>() / selected.len() as f64;
    eprintln!(
        "example: mean test accuracy {mean:.4} over {} splits",
        selected.len()
    );
    assert!(mean > 0.9);
    for r in &selected {
        assert_eq!(r.formulation, "logistic_l1");
        assert_eq!(r.lambda_local, Some(2f64.powi(-6) / 4.0));
        assert!(r.depth.is_none() && r.gamma.is_none());
    }
    let model = out.path().join("models/split-0.json");
    assert!(LogisticL1Model::load(&model).is_ok());
}

#[test]
fn unknown_keys_are_rejected() {
    let text = r#"
[data]
path = "iris.csv"
[formulation]
name = "logistic_l1"
lambda = 0.1
depth = 2
[solver]
name = "ipopt"
"#;
    let err = ExperimentConfig::parse(Path::new("x.toml"), text).unwrap_err();
    assert!(err.to_string().contains("depth"), "{err}");
    assert!(glassbox::registry::Registry::builtin()
        .formulation("logistic_l1")
        .is_ok());
}
