//! S-ORCT solved by IPOPT: Theorem 2 (above the computed lambda bounds a = 0 is returned),
//! global sparsity rising with lambda_G (paper Table 5), and warm starts from a fitted
//! model and from a solve's own result.

#[path = "common/iris_split.rs"]
mod iris_split;

use glassbox::data::{self, MinMaxScaler};
use glassbox::experiment::{self, ExperimentConfig};
use glassbox::formulations::sorct::{lambda_bounds, starts, SorctConfig, SorctModel};
use glassbox::model::Classifier;
use glassbox::nlp::NlpProblem;
use glassbox::{registry, SolveOptions, WarmStart};
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

fn iris_train() -> (
    DMatrix<f64>,
    Vec<usize>,
    MinMaxScaler,
    data::ClassificationData,
) {
    let (x, scaler, train) = iris_split::iris_train_rows();
    (x, train.y.clone(), scaler, train)
}

/// Solves from `starts` data-aware starts and returns the best coefficient matrix a.
fn best_coefficients(
    config: &SorctConfig,
    x: &DMatrix<f64>,
    y: &[usize],
    starts_n: u64,
) -> DMatrix<f64> {
    let problem = config
        .problem(Arc::new(x.clone()), Arc::new(y.to_vec()), 3)
        .unwrap();
    let solver = registry::nlp_solver("ipopt", &SolveOptions::default()).unwrap();
    let mut best: Option<(f64, Vec<f64>)> = None;
    for s in 0..starts_n {
        let mut rng = ChaCha8Rng::seed_from_u64(s);
        let x0 = starts::random_start(&problem, config.initialization, &mut rng);
        let options = SolveOptions::default().with_warm_start(Some(WarmStart::primal(x0)));
        let result = solver.solve(&problem, &options).unwrap();
        assert!(result.status.has_solution(), "{:?}", result.status);
        let obj = result.objective.unwrap();
        if best.as_ref().is_none_or(|(b, _)| obj < *b) {
            best = Some((obj, result.primal));
        }
    }
    let x_best = best.unwrap().1;
    // The coefficients a = a+ - a- (or a) are the first p |tau_B| (or 2 p |tau_B|) entries.
    let model = SorctModel::from_solution(
        &problem,
        &x_best,
        MinMaxScaler::fit(x),
        vec!["a".into(), "b".into(), "c".into()],
        Default::default(),
    );
    model.a
}

#[test]
fn theorem_2_above_the_local_bound_a_is_zero() {
    let (x, y, _, _) = iris_train();
    let costs = SorctConfig::default().cost_matrix(3).unwrap();
    let bounds = lambda_bounds(&x, &y, &costs, 512.0, 2);
    assert!(bounds.local > 0.0 && bounds.global >= bounds.local);
    let above = SorctConfig {
        lambda_local: 1.01 * bounds.local,
        ..Default::default()
    };
    let a = best_coefficients(&above, &x, &y, 3);
    assert!(
        a.amax() < 1e-6,
        "max |a| = {} above the bound {}",
        a.amax(),
        bounds.local
    );
    // Far below the bound the tree uses its features.
    let below = SorctConfig {
        lambda_local: 1e-4 * bounds.local,
        ..Default::default()
    };
    assert!(best_coefficients(&below, &x, &y, 3).amax() > 1e-2);
}

#[test]
fn theorem_2_above_the_global_bound_a_is_zero() {
    let (x, y, _, _) = iris_train();
    let costs = SorctConfig::default().cost_matrix(3).unwrap();
    let bounds = lambda_bounds(&x, &y, &costs, 512.0, 2);
    let above = SorctConfig {
        lambda_global: 1.01 * bounds.global,
        ..Default::default()
    };
    let a = best_coefficients(&above, &x, &y, 3);
    assert!(
        a.amax() < 1e-6,
        "max |a| = {} above the bound {}",
        a.amax(),
        bounds.global
    );
}

fn run_wine(lambda_global_log2: Option<i32>) -> (f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let lambda = lambda_global_log2
        .map(|r| format!("lambda_global_log2 = {r}"))
        .unwrap_or_default();
    let text = format!(
        "[data]\npath = \"{}/../shared/datasets/wine.csv\"\n[split]\nrepeats = 3\n\
         [formulation]\nname = \"sorct\"\ndepth = 2\n{lambda}\n[solver]\nname = \"ipopt\"\n\
         [multistart]\nstarts = 5\n",
        env!("CARGO_MANIFEST_DIR")
    );
    let config = ExperimentConfig::parse(&dir.path().join("c.toml"), &text).unwrap();
    let outcome = experiment::run(&config, &dir.path().join("out"), false, false).unwrap();
    let selected: Vec<_> = outcome.records.iter().filter(|r| r.selected).collect();
    assert_eq!(selected.len(), 3);
    let acc = selected.iter().map(|r| r.test_accuracy).sum::<f64>() / 3.0;
    let dg = selected.iter().map(|r| r.delta_global).sum::<f64>() / 3.0;
    (acc, dg)
}

#[test]
fn global_sparsity_rises_and_accuracy_falls_with_lambda_global() {
    // Paper Table 5 (wine): delta_G 0% at lambda_G = 0, 85% with accuracy 71.1% at 2^3/p.
    let (acc0, dg0) = run_wine(None);
    let (acc3, dg3) = run_wine(Some(3));
    assert!(dg0 < 10.0, "delta_G {dg0} at lambda_G = 0");
    assert!(dg3 > 50.0, "delta_G {dg3} at lambda_G = 2^3/p");
    assert!(acc3 < acc0, "accuracy {acc3} at 2^3/p vs {acc0} at 0");
}

#[test]
fn warm_start_from_result_and_from_model() {
    let (x, y, scaler, train) = iris_train();
    let config = SorctConfig {
        lambda_local: 0.001,
        ..Default::default()
    };
    let problem = config
        .problem(Arc::new(x.clone()), Arc::new(y.clone()), 3)
        .unwrap();
    let solver = registry::nlp_solver("ipopt", &SolveOptions::default()).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let x0 = starts::random_start(&problem, config.initialization, &mut rng);
    let first = solver
        .solve(
            &problem,
            &SolveOptions::default().with_warm_start(Some(WarmStart::primal(x0))),
        )
        .unwrap();
    assert!(first.status.has_solution());
    // Primal and multipliers from the result: IPOPT restarts at the solution.
    let again = solver
        .solve(
            &problem,
            &SolveOptions::default().with_warm_start(Some(first.warm_start())),
        )
        .unwrap();
    assert!(
        again.iterations < first.iterations,
        "{} vs {}",
        again.iterations,
        first.iterations
    );
    assert!((again.objective.unwrap() - first.objective.unwrap()).abs() < 1e-6);
    // From a fitted model, through the user's units: the same predictions.
    let model = SorctModel::from_solution(
        &problem,
        &first.primal,
        scaler.clone(),
        train.classes.clone(),
        train.encoding.clone(),
    );
    let back = model.start_point(&problem, &scaler).unwrap();
    assert!((problem.objective(&back) - problem.objective(&first.primal)).abs() < 1e-6);
    assert_eq!(model.predict(&train.x), {
        let m2 = SorctModel::from_solution(
            &problem,
            &back,
            scaler,
            train.classes.clone(),
            train.encoding.clone(),
        );
        m2.predict(&train.x)
    });
}

#[test]
fn model_json_round_trip() {
    let (x, y, scaler, train) = iris_train();
    let config = SorctConfig::default();
    let problem = config.problem(Arc::new(x), Arc::new(y), 3).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let x0 = starts::random_start(&problem, config.initialization, &mut rng);
    let model = SorctModel::from_solution(
        &problem,
        &x0,
        scaler,
        train.classes.clone(),
        train.encoding.clone(),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.json");
    model.save(&path).unwrap();
    assert_eq!(SorctModel::load(&path).unwrap(), model);
    std::fs::write(
        &path,
        "{\"glassbox_model\": \"ogrs\", \"version\": \"0\", \"model\": {}}",
    )
    .unwrap();
    let err = SorctModel::load(&path).unwrap_err().to_string();
    assert!(err.contains("ogrs") && err.contains("sorct"), "{err}");
}

/// A gamma continuation 32 -> 128 -> 512 on iris's training rows, repeated `copies` times,
/// from a random start, solved by `solver` under `options`, with `screen` after the first
/// stage.
fn continuation_on_iris(
    solver: &str,
    options: &SolveOptions,
    screen: bool,
    copies: usize,
) -> glassbox::SolveResult {
    use glassbox::formulations::continuation;
    let (x, y, _, _) = iris_train();
    let rows: Vec<usize> = (0..copies).flat_map(|_| 0..x.nrows()).collect();
    let x = Arc::new(x.select_rows(&rows));
    let y = Arc::new(rows.iter().map(|&i| y[i]).collect::<Vec<_>>());
    let at = |gamma: f64| {
        SorctConfig {
            gamma,
            ..Default::default()
        }
        .problem(x.clone(), y.clone(), 3)
        .unwrap()
    };
    let target = at(512.0);
    let x0 = starts::random_start(
        &target,
        SorctConfig::default().initialization,
        &mut ChaCha8Rng::seed_from_u64(2),
    );
    let options = options.with_warm_start(Some(WarmStart::primal(x0)));
    let solver = registry::nlp_solver(solver, &options).unwrap();
    continuation::solve(
        &[32.0, 128.0, 512.0],
        at,
        &target,
        &*solver,
        &options,
        |_| screen,
        |_| Vec::new(),
    )
    .unwrap()
}

/// The iteration limit is the whole continuation's: a first stage that spends it is the
/// last (each later stage was given one more iteration: 12 of 10 on wine with IPOPT), and
/// the start is reported at the iteration limit, not screened out (`other_limit`), when the
/// screen would have stopped it.
#[test]
fn continuation_stops_at_the_iteration_limit_between_stages() {
    use glassbox::Limit;
    for (solver, limit) in [("ipopt", 5), ("lbfgs", 20)] {
        let options = SolveOptions {
            iteration_limit: Some(limit),
            ..SolveOptions::default()
        };
        for screen in [true, false] {
            let r = continuation_on_iris(solver, &options, screen, 1);
            let who = format!("{solver}, screen passes: {screen}: {}", r.raw_status);
            assert!(r.iterations <= limit, "{who}: {} iterations", r.iterations);
            assert_eq!(r.status.limit(), Some(Limit::Iteration), "{who}");
            assert!(
                r.raw_status
                    .contains("iteration limit before the target gamma"),
                "{who}"
            );
            assert!(!r.raw_status.contains("screened out"), "{who}");
            assert!(!r.raw_status.contains("gamma 128"), "{who}");
        }
    }
    // A limit of 0: no stage iterates, the target's solve reports the start at the limit.
    let options = SolveOptions {
        iteration_limit: Some(0),
        ..SolveOptions::default()
    };
    let r = continuation_on_iris("lbfgs", &options, true, 1);
    assert_eq!(r.iterations, 0, "{}", r.raw_status);
    assert_eq!(r.status.limit(), Some(Limit::Iteration), "{}", r.raw_status);
}

/// A time limit or a stop request (Ctrl-C) met in the first stage is reported as such, not
/// hidden by the screen as `other_limit` (wine, IPOPT, time_limit = 0.01 s: start 2 was
/// "screened out").
#[test]
fn continuation_reports_a_time_limit_or_stop_request_before_the_screen() {
    use glassbox::{Interrupt, Limit};
    use std::sync::atomic::AtomicBool;
    let stop = SolveOptions {
        interrupt: Some(Interrupt::new(Arc::new(AtomicBool::new(true)))),
        ..SolveOptions::default()
    };
    // 1 ms (a stage gets at least that): lbfgs's first stage took 4 ms on iris once, so on
    // 8 copies of it the limit falls well inside that stage.
    let clock = SolveOptions {
        time_limit: Some(1e-3),
        ..SolveOptions::default()
    };
    // A stop requested before the solve: no stage runs, the target's solve reports it.
    for (options, limit, words) in [
        (stop, Limit::Interrupted, "gamma 512: stop request"),
        (clock, Limit::Time, "time limit before the target gamma"),
    ] {
        let r = continuation_on_iris("lbfgs", &options, false, 8);
        assert_eq!(r.status.limit(), Some(limit), "{}", r.raw_status);
        assert!(r.raw_status.contains(words), "{}", r.raw_status);
        assert!(!r.raw_status.contains("screened out"), "{}", r.raw_status);
    }
}
