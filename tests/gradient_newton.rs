//! The projected Newton stage of the gradient backend `"lbfgs"` (`solvers/gradient/newton.rs`):
//! a nonconvex bound-constrained problem with known local minimizers (Rosenbrock in a box,
//! the minimizer on a bound and in the interior) reached to 1e-8, with the Newton stage
//! taking over at once (`refine_after = 1`) and after L-BFGS (the default); and S-ORCT on
//! iris (D=2), where lbfgs's point must be stationary to tolerance: the projected gradient
//! of the Lagrangian, computed here from the problem, at most `1e-8 max(1, |grad f|_inf)`.

use glassbox::data::{self, CsvOptions, MinMaxScaler, Table};
use glassbox::formulations::sorct;
use glassbox::nlp::NlpProblem;
use glassbox::{registry, RawOptionValue, SolveOptions, SolveResult, TerminationStatus, WarmStart};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::sync::Arc;

/// `(1 - x0)^2 + 100 (x1 - x0^2)^2` in a box, with its exact Hessian.
struct BoxedRosenbrock {
    lower: [f64; 2],
    upper: [f64; 2],
}

impl NlpProblem for BoxedRosenbrock {
    fn num_variables(&self) -> usize {
        2
    }
    fn num_constraints(&self) -> usize {
        0
    }
    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (self.lower.to_vec(), self.upper.to_vec())
    }
    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![], vec![])
    }
    fn objective(&self, x: &[f64]) -> f64 {
        (1.0 - x[0]).powi(2) + 100.0 * (x[1] - x[0] * x[0]).powi(2)
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        let r = x[1] - x[0] * x[0];
        grad[0] = -2.0 * (1.0 - x[0]) - 400.0 * x[0] * r;
        grad[1] = 200.0 * r;
    }
    fn constraints(&self, _: &[f64], _: &mut [f64]) {}
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        vec![]
    }
    fn jacobian_values(&self, _: &[f64], _: &mut [f64]) {}
    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        Some(vec![(0, 0), (1, 0), (1, 1)])
    }
    fn hessian_values(&self, x: &[f64], obj_factor: f64, _: &[f64], values: &mut [f64]) {
        values[0] = obj_factor * (2.0 - 400.0 * (x[1] - 3.0 * x[0] * x[0]));
        values[1] = obj_factor * (-400.0 * x[0]);
        values[2] = obj_factor * 200.0;
    }
}

fn lbfgs(problem: &dyn NlpProblem, start: &[f64], raw: &[(&str, RawOptionValue)]) -> SolveResult {
    let mut options =
        SolveOptions::default().with_warm_start(Some(WarmStart::primal(start.to_vec())));
    for (k, v) in raw {
        options.raw.insert(k.to_string(), v.clone());
    }
    registry::nlp_solver("lbfgs", &options)
        .unwrap()
        .solve(problem, &options)
        .unwrap()
}

#[test]
fn rosenbrock_in_a_box_on_a_bound_and_inside() {
    // x0 <= 0.5 binds: the minimizer is (0.5, 0.25), where df/dx0 = -1 pushes against it.
    let on_bound = BoxedRosenbrock {
        lower: [-2.0, -1.0],
        upper: [0.5, 2.0],
    };
    let inside = BoxedRosenbrock {
        lower: [-2.0, -2.0],
        upper: [2.0, 2.0],
    };
    let cases: [(&BoxedRosenbrock, [f64; 2]); 2] =
        [(&on_bound, [0.5, 0.25]), (&inside, [1.0, 1.0])];
    for (problem, optimum) in cases {
        for start in [[-1.2, 1.0], [-1.9, -0.9], [0.3, 1.9]] {
            for raw in [vec![], vec![("refine_after", RawOptionValue::Int(1))]] {
                let result = lbfgs(problem, &start, &raw);
                let error = (0..2).fold(0f64, |m, j| m.max((result.primal[j] - optimum[j]).abs()));
                assert_eq!(
                    result.status,
                    TerminationStatus::LocallyOptimal,
                    "{start:?} {raw:?}: {}",
                    result.raw_status
                );
                assert!(
                    error <= 1e-8,
                    "from {start:?} with {raw:?}: {:?}, error {error:e} ({})",
                    result.primal,
                    result.raw_status
                );
                if !raw.is_empty() {
                    // Newton took over after one L-BFGS iteration and says so.
                    assert!(
                        result.raw_status.contains("projected Newton"),
                        "{}",
                        result.raw_status
                    );
                    assert!(result.iterations < 100, "{} iterations", result.iterations);
                }
            }
        }
    }
}

#[test]
fn refine_none_and_bad_values_are_checked() {
    let problem = BoxedRosenbrock {
        lower: [-2.0, -2.0],
        upper: [2.0, 2.0],
    };
    let result = lbfgs(
        &problem,
        &[-1.2, 1.0],
        &[("refine", RawOptionValue::Str("none".into()))],
    );
    assert!(
        !result.raw_status.contains("projected Newton"),
        "{}",
        result.raw_status
    );
    for (key, value) in [
        ("refine", RawOptionValue::Str("bfgs".into())),
        ("refine_after", RawOptionValue::Int(-1)),
    ] {
        let mut options = SolveOptions::default();
        options.raw.insert(key.into(), value);
        let error = registry::nlp_solver("lbfgs", &options)
            .and_then(|s| s.solve(&problem, &options))
            .unwrap_err()
            .to_string();
        assert!(error.contains(key), "{error}");
    }
}

/// `|P(x - (grad f + J^T lambda)) - x|_inf` at the result and `max(1, |grad f|_inf)`.
fn projected_gradient(problem: &dyn NlpProblem, result: &SolveResult) -> (f64, f64) {
    let x = &result.primal;
    let n = problem.num_variables();
    let mut grad = vec![0.0; n];
    problem.gradient(x, &mut grad);
    let scale = grad.iter().fold(1f64, |m, v| m.max(v.abs()));
    let structure = problem.jacobian_structure();
    let mut values = vec![0.0; structure.len()];
    problem.jacobian_values(x, &mut values);
    let lambda = result.constraint_multipliers.clone().unwrap_or_default();
    for (&(i, j), v) in structure.iter().zip(&values) {
        grad[j] += lambda[i] * v;
    }
    let (xl, xu) = problem.variable_bounds();
    let pg = (0..n).fold(0f64, |m, j| {
        m.max((-grad[j]).clamp(xl[j] - x[j], xu[j] - x[j]).abs())
    });
    (pg, scale)
}

#[test]
fn sorct_iris_lbfgs_point_is_stationary() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/iris.csv");
    let table = Table::from_csv(&path, &CsvOptions::default()).unwrap();
    let data = table.encode_classification().unwrap();
    let (train, _) = data::stratified_split(&data.y, 0.25, 1).unwrap();
    let train = data.rows(&train);
    let x = MinMaxScaler::fit(&train.x).transform(&train.x);
    let config = sorct::SorctConfig::default();
    let problem = config
        .problem(Arc::new(x), Arc::new(train.y.clone()), 3)
        .unwrap();
    for seed in 0..2 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let start = sorct::starts::random_start(&problem, config.initialization, &mut rng);
        let result = lbfgs(&problem, &start, &[]);
        let (pg, scale) = projected_gradient(&problem, &result);
        println!(
            "seed {seed}: {} objective {:.6e}, projected gradient {pg:.2e} (scale {scale:.2e}), {} iterations, {:.2} s: {}",
            result.status,
            result.objective.unwrap_or(f64::NAN),
            result.iterations,
            result.wall_seconds,
            result.raw_status
        );
        assert_eq!(
            result.status,
            TerminationStatus::LocallyOptimal,
            "{}",
            result.raw_status
        );
        assert!(
            pg <= 1e-8 * scale,
            "seed {seed}: projected gradient {pg:e}, scale {scale:e}"
        );
    }
}
