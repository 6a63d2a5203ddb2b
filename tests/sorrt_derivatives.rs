//! S-ORRT's exact derivatives against finite differences at random points, in every
//! variable layout (a split or not, beta present or not), at depths 1 to 4, and with the
//! cost-sensitivity and both fairness constraints present (random multipliers, so every
//! term of the Lagrangian's Hessian is exercised).

use glassbox::data::{CsvOptions, MinMaxScaler, Table};
use glassbox::formulation::TrainingRows;
use glassbox::formulations::sorrt::{
    starts, CostSensitive, Fairness, GroupSpec, Level, SorrtConfig, SorrtProblem,
};
use glassbox::nlp::{check, NlpProblem};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::sync::Arc;

fn boston() -> Table {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/boston_housing.csv");
    Table::from_csv(&path, &CsvOptions::default()).unwrap()
}

/// A small Boston problem: every `step`-th row.
fn problem(config: &SorrtConfig, step: usize) -> SorrtProblem {
    let table = boston();
    let data = table.encode_regression().unwrap();
    let rows: Vec<usize> = (0..data.n_samples()).step_by(step).collect();
    let train = data.rows(&rows);
    let x = MinMaxScaler::fit(&train.x).transform(&train.x);
    config
        .problem(
            Arc::new(x),
            Arc::new(train.y.clone()),
            TrainingRows {
                table: &table,
                rows: &rows,
            },
        )
        .unwrap()
}

fn check_all(config: &SorrtConfig, step: usize, seed: u64) {
    let problem = problem(config, step);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (lower, upper) = problem.variable_bounds();
    for _ in 0..2 {
        let mut x = starts::random_start(&problem, config.initialization, &mut rng);
        // Move off zero coefficients and the start's exact values so every term is used.
        for (k, v) in x.iter_mut().enumerate() {
            *v = (*v + rng.random_range(-0.05..0.05)).clamp(lower[k], upper[k]);
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

fn group(column: &str, q: f64) -> GroupSpec {
    GroupSpec {
        column: column.into(),
        above_quantile: Some(q),
        ..Default::default()
    }
}

fn all_constraints() -> (Vec<CostSensitive>, Option<Fairness>) {
    (
        vec![
            CostSensitive {
                group: GroupSpec {
                    column: "x4".into(),
                    equals: Some(Level::Number(0.0)),
                    ..Default::default()
                },
                rho: 20.0,
            },
            CostSensitive {
                group: group("x13", 0.5),
                rho: 30.0,
            },
        ],
        Some(Fairness {
            group: group("x12", 0.75),
            mean_prediction_gap: Some(0.5),
            mse_gap: Some(2.0),
        }),
    )
}

#[test]
fn plain_mse_depth_two() {
    check_all(
        &SorrtConfig {
            gamma: 32.0,
            ..Default::default()
        },
        8,
        1,
    );
}

#[test]
fn gamma_512_depth_two() {
    check_all(&SorrtConfig::default(), 8, 2);
}

#[test]
fn local_and_global_penalties_split_layout() {
    check_all(
        &SorrtConfig {
            gamma: 32.0,
            lambda_local: 0.01,
            lambda_global: 0.02,
            ..Default::default()
        },
        8,
        3,
    );
}

#[test]
fn global_penalty_only_uses_17_18() {
    check_all(
        &SorrtConfig {
            gamma: 32.0,
            lambda_global: 0.05,
            ..Default::default()
        },
        8,
        4,
    );
}

#[test]
fn cost_sensitivity_and_fairness_constraints_active() {
    let (cost_sensitive, fairness) = all_constraints();
    check_all(
        &SorrtConfig {
            gamma: 32.0,
            lambda_local: 0.01,
            cost_sensitive,
            fairness,
            ..Default::default()
        },
        8,
        5,
    );
}

#[test]
fn depth_one_with_constraints() {
    let (cost_sensitive, fairness) = all_constraints();
    check_all(
        &SorrtConfig {
            depth: 1,
            gamma: 64.0,
            lambda_global: 0.01,
            cost_sensitive,
            fairness,
            ..Default::default()
        },
        6,
        6,
    );
}

#[test]
fn depth_three_with_fairness() {
    let (_, fairness) = all_constraints();
    check_all(
        &SorrtConfig {
            depth: 3,
            gamma: 16.0,
            fairness,
            ..Default::default()
        },
        10,
        7,
    );
}

#[test]
fn minimum_leaf_size_rows() {
    let (_, fairness) = all_constraints();
    check_all(
        &SorrtConfig {
            gamma: 32.0,
            min_leaf_fraction: 0.1,
            fairness,
            ..Default::default()
        },
        8,
        9,
    );
}

#[test]
fn depth_four_all_terms() {
    let (cost_sensitive, fairness) = all_constraints();
    check_all(
        &SorrtConfig {
            depth: 4,
            gamma: 16.0,
            lambda_local: 0.01,
            lambda_global: 0.01,
            min_leaf_fraction: 0.02,
            cost_sensitive,
            fairness,
            ..Default::default()
        },
        12,
        8,
    );
}
