//! S-ORCT's exact derivatives against finite differences at random points, in every
//! variable layout (a split or not, beta present or not) and with the per-class
//! performance constraints (8) active.

use glassbox::data::{CsvOptions, MinMaxScaler, Table};
use glassbox::formulations::sorct::{starts, SorctConfig, SorctProblem};
use glassbox::nlp::{check, NlpProblem};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::sync::Arc;

fn iris_problem(config: &SorctConfig, rows: usize) -> SorctProblem {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/iris.csv");
    let data = Table::from_csv(&path, &CsvOptions::default())
        .unwrap()
        .encode_classification()
        .unwrap();
    // Every third row keeps all three classes in a small, fast problem.
    let idx: Vec<usize> = (0..data.n_samples()).step_by(150 / rows).collect();
    let data = data.rows(&idx);
    let x = MinMaxScaler::fit(&data.x).transform(&data.x);
    config
        .problem(Arc::new(x), Arc::new(data.y.clone()), 3)
        .unwrap()
}

fn check_all(config: &SorctConfig, seed: u64) {
    let problem = iris_problem(config, 50);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..3 {
        let mut x = starts::random_start(&problem, config.initialization, &mut rng);
        // Move off the vertex of C and off zero coefficients so every term is exercised.
        for v in x.iter_mut() {
            *v += rng.random_range(-0.05..0.05);
        }
        let step = 1e-6 / config.gamma.max(1.0).sqrt();
        let grad = check::gradient_error(&problem, &x, step);
        assert!(grad < 1e-5, "gradient error {grad}");
        let jac = check::jacobian_error(&problem, &x, step);
        assert!(jac < 1e-5, "jacobian error {jac}");
        let m = problem.num_constraints();
        let lambda: Vec<f64> = (0..m).map(|_| rng.random_range(-2.0..2.0)).collect();
        let obj_factor = rng.random_range(0.5..2.0);
        let hess = check::hessian_error(&problem, &x, obj_factor, &lambda, step).unwrap();
        assert!(hess < 1e-4, "hessian error {hess}");
    }
}

#[test]
fn orct_derivatives_depth_two() {
    check_all(
        &SorctConfig {
            gamma: 32.0,
            ..Default::default()
        },
        1,
    );
}

#[test]
fn derivatives_with_gamma_512() {
    check_all(
        &SorctConfig {
            gamma: 512.0,
            ..Default::default()
        },
        2,
    );
}

#[test]
fn local_and_global_penalties_split_layout() {
    check_all(
        &SorctConfig {
            gamma: 32.0,
            lambda_local: 0.01,
            lambda_global: 0.02,
            ..Default::default()
        },
        3,
    );
}

#[test]
fn global_penalty_only_uses_17_18() {
    check_all(
        &SorctConfig {
            gamma: 32.0,
            lambda_global: 0.05,
            ..Default::default()
        },
        4,
    );
}

#[test]
fn performance_constraints_active() {
    check_all(
        &SorctConfig {
            gamma: 32.0,
            lambda_local: 0.01,
            rho: vec![0.1, 0.3, 0.5],
            ..Default::default()
        },
        5,
    );
}

#[test]
fn depth_three_with_constraints() {
    check_all(
        &SorctConfig {
            depth: 3,
            gamma: 16.0,
            rho: vec![0.2],
            ..Default::default()
        },
        6,
    );
}

#[test]
fn depth_one_binary() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/monks3.csv");
    let data = Table::from_csv(&path, &CsvOptions::default())
        .unwrap()
        .encode_classification()
        .unwrap();
    let x = MinMaxScaler::fit(&data.x).transform(&data.x);
    let config = SorctConfig {
        depth: 1,
        gamma: 64.0,
        lambda_local: 0.01,
        rho: vec![0.1],
        ..Default::default()
    };
    let problem = config
        .problem(Arc::new(x), Arc::new(data.y.clone()), 2)
        .unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let x0 = starts::random_start(&problem, config.initialization, &mut rng);
    assert!(check::gradient_error(&problem, &x0, 1e-7) < 1e-5);
    let lambda = vec![0.7; problem.num_constraints()];
    assert!(check::hessian_error(&problem, &x0, 1.0, &lambda, 1e-7).unwrap() < 1e-4);
}
