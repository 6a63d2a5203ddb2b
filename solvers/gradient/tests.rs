//! Unit tests of the gradient backend: what the conformance suite does not reach (the SPG
//! method, two-sided ranges, option ranges, panics, deadlines inside a line search, output
//! at verbosity 0, problems without variables).

use super::*;
use glassbox_core::{Interrupt, Limit, RawOptionValue};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

const INF: f64 = f64::INFINITY;

/// min sum_j (x_j - target_j)^2 over bounds, with linear constraints `rows` in ranges.
#[derive(Clone)]
struct Quadratic {
    target: Vec<f64>,
    lower: Vec<f64>,
    upper: Vec<f64>,
    rows: Vec<Vec<f64>>,
    g_lower: Vec<f64>,
    g_upper: Vec<f64>,
    /// The objective panics at points with x_0 above this.
    panic_above: f64,
    /// Every objective evaluation sleeps this long.
    busy: Duration,
}

impl Quadratic {
    fn new(target: &[f64]) -> Self {
        let n = target.len();
        Quadratic {
            target: target.to_vec(),
            lower: vec![-INF; n],
            upper: vec![INF; n],
            rows: vec![],
            g_lower: vec![],
            g_upper: vec![],
            panic_above: INF,
            busy: Duration::ZERO,
        }
    }
}

impl NlpProblem for Quadratic {
    fn num_variables(&self) -> usize {
        self.target.len()
    }
    fn num_constraints(&self) -> usize {
        self.rows.len()
    }
    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (self.lower.clone(), self.upper.clone())
    }
    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (self.g_lower.clone(), self.g_upper.clone())
    }
    fn objective(&self, x: &[f64]) -> f64 {
        if x.first().is_some_and(|&v| v > self.panic_above) {
            panic!("objective exploded at {x:?}");
        }
        if !self.busy.is_zero() {
            std::thread::sleep(self.busy);
        }
        x.iter()
            .zip(&self.target)
            .map(|(v, t)| (v - t) * (v - t))
            .sum()
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        for ((g, v), t) in grad.iter_mut().zip(x).zip(&self.target) {
            *g = 2.0 * (v - t);
        }
    }
    fn constraints(&self, x: &[f64], g: &mut [f64]) {
        for (gi, row) in g.iter_mut().zip(&self.rows) {
            *gi = row.iter().zip(x).map(|(a, v)| a * v).sum();
        }
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        (0..self.rows.len())
            .flat_map(|i| (0..self.target.len()).map(move |j| (i, j)))
            .collect()
    }
    fn jacobian_values(&self, _x: &[f64], values: &mut [f64]) {
        let flat: Vec<f64> = self.rows.iter().flatten().copied().collect();
        values.copy_from_slice(&flat);
    }
    fn name(&self) -> String {
        "quadratic".into()
    }
}

fn raw(pairs: &[(&str, RawOptionValue)]) -> BTreeMap<String, RawOptionValue> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

fn solve(problem: &dyn NlpProblem, options: &SolveOptions) -> SolveResult {
    LbfgsSolver::new().solve(problem, options).unwrap()
}

fn spg() -> SolveOptions {
    SolveOptions {
        raw: raw(&[("method", RawOptionValue::Str("spg".into()))]),
        ..SolveOptions::default()
    }
}

/// `grad f + J^T lambda - z_L + z_U`, largest entry.
fn stationarity_residual(problem: &dyn NlpProblem, result: &SolveResult) -> f64 {
    let n = problem.num_variables();
    let mut r = vec![0.0; n];
    problem.gradient(&result.primal, &mut r);
    let lambda = result.constraint_multipliers.as_ref().unwrap();
    let mut values = vec![0.0; problem.jacobian_structure().len()];
    problem.jacobian_values(&result.primal, &mut values);
    for (&(i, j), v) in problem.jacobian_structure().iter().zip(&values) {
        r[j] += lambda[i] * v;
    }
    let z_l = result.lower_bound_multipliers.as_ref().unwrap();
    let z_u = result.upper_bound_multipliers.as_ref().unwrap();
    assert!(z_l.iter().chain(z_u).all(|&z| z >= 0.0));
    (0..n).fold(0f64, |w, j| w.max((r[j] - z_l[j] + z_u[j]).abs()))
}

#[test]
fn entry_matches_the_solver() {
    let entry = entry();
    assert_eq!(entry.name, LbfgsSolver::new().name());
    assert_eq!(entry.capabilities, LbfgsSolver::new().capabilities());
    assert_eq!(entry.problem_kind(), "nlp");
    assert!(entry.options.iter().all(|o| !o.help.is_empty()));
}

#[test]
fn two_sided_ranges_bind_on_either_side() {
    // min (x0 - t)^2 + (x1 - t)^2 s.t. 0 <= x0 + x1 <= 1. For t = 3 the upper side binds at
    // (0.5, 0.5) with multiplier +5; for t = -3 the lower side binds at (0, 0) with
    // multiplier -6 (Ipopt's signs: grad f + lambda grad g = 0).
    for (target, optimum, multiplier) in [(3.0, 0.5, 5.0), (-3.0, 0.0, -6.0)] {
        let mut problem = Quadratic::new(&[target, target]);
        problem.rows = vec![vec![1.0, 1.0]];
        problem.g_lower = vec![0.0];
        problem.g_upper = vec![1.0];
        for options in [SolveOptions::default(), spg()] {
            let result = solve(&problem, &options);
            assert_eq!(
                result.status,
                TerminationStatus::LocallyOptimal,
                "{}",
                result.raw_status
            );
            for v in &result.primal {
                assert!((v - optimum).abs() < 1e-6, "{:?}", result.primal);
            }
            let lambda = result.constraint_multipliers.as_ref().unwrap()[0];
            assert!((lambda - multiplier).abs() < 1e-5, "multiplier {lambda}");
            assert!(stationarity_residual(&problem, &result) < 1e-6);
        }
    }
}

#[test]
fn spg_solves_bounds_and_equalities() {
    // Bounds: (1, 0) on [0, 1]^2 for the target (2, -1).
    let mut problem = Quadratic::new(&[2.0, -1.0]);
    problem.lower = vec![0.0, 0.0];
    problem.upper = vec![1.0, 1.0];
    let result = solve(&problem, &spg());
    assert_eq!(result.status, TerminationStatus::LocallyOptimal);
    assert_eq!(result.primal, vec![1.0, 0.0]);
    assert_eq!(result.lower_bound_multipliers, Some(vec![0.0, 2.0]));
    assert_eq!(result.upper_bound_multipliers, Some(vec![2.0, 0.0]));
    // An equality: x0 + 2 x1 = 4 from the target 0: (0.8, 1.6).
    let mut problem = Quadratic::new(&[0.0, 0.0]);
    problem.rows = vec![vec![1.0, 2.0]];
    problem.g_lower = vec![4.0];
    problem.g_upper = vec![4.0];
    let result = solve(&problem, &spg());
    assert_eq!(
        result.status,
        TerminationStatus::LocallyOptimal,
        "{}",
        result.raw_status
    );
    assert!((result.primal[0] - 0.8).abs() < 1e-6 && (result.primal[1] - 1.6).abs() < 1e-6);
    assert!(stationarity_residual(&problem, &result) < 1e-6);
}

#[test]
fn warm_start_outside_the_bounds_is_projected() {
    let mut problem = Quadratic::new(&[0.5]);
    problem.lower = vec![0.0];
    problem.upper = vec![1.0];
    let options = SolveOptions::default().with_warm_start(Some(WarmStart::primal(vec![7.0])));
    let result = solve(&problem, &options);
    assert_eq!(result.status, TerminationStatus::LocallyOptimal);
    assert!((result.primal[0] - 0.5).abs() < 1e-9);
    let bad = SolveOptions::default().with_warm_start(Some(WarmStart::primal(vec![f64::NAN])));
    assert!(LbfgsSolver::new().solve(&problem, &bad).is_err());
    let bad = SolveOptions::default().with_warm_start(Some(WarmStart {
        upper_bound_multipliers: Some(vec![0.0; 2]),
        ..WarmStart::primal(vec![0.0])
    }));
    let err = LbfgsSolver::new().solve(&problem, &bad).unwrap_err();
    assert!(err.to_string().contains("upper-bound"), "{err}");
}

#[test]
fn options_are_range_checked() {
    let problem = Quadratic::new(&[1.0]);
    let cases = [
        ("memory", RawOptionValue::Int(0)),
        ("memory", RawOptionValue::Int(1 << 40)),
        ("inner_iterations", RawOptionValue::Int(0)),
        ("outer_iterations", RawOptionValue::Int(-3)),
        ("penalty_initial", RawOptionValue::Float(0.0)),
        // Above the penalty's cap (1e20): a numerical error at the first outer iteration
        // that does not end the solve.
        ("penalty_initial", RawOptionValue::Float(1e21)),
        ("penalty_growth", RawOptionValue::Float(1.0)),
        ("constraint_tolerance", RawOptionValue::Float(-1e-6)),
        ("method", RawOptionValue::Str("newton".into())),
        ("barrier_initial", RawOptionValue::Float(0.0)),
        ("barrier_final", RawOptionValue::Float(f64::NAN)),
        ("path", RawOptionValue::Str("central".into())),
        ("max_iter", RawOptionValue::Int(3)),
    ];
    for (name, value) in cases {
        let options = SolveOptions {
            raw: raw(&[(name, value.clone())]),
            ..SolveOptions::default()
        };
        let err = LbfgsSolver::new()
            .solve(&problem, &options)
            .expect_err(&format!("{name} = {value}"));
        assert!(err.to_string().contains(name), "{err}");
    }
    // A config's option that another one turns off is refused, naming it and the other.
    for (name, value, by) in [
        (
            "barrier_initial",
            RawOptionValue::Float(0.5),
            ("path", "direct"),
        ),
        (
            "barrier_final",
            RawOptionValue::Float(1e-4),
            ("path", "direct"),
        ),
        ("refine_after", RawOptionValue::Int(5), ("refine", "none")),
    ] {
        let options = SolveOptions {
            raw: raw(&[(name, value), (by.0, RawOptionValue::Str(by.1.into()))]),
            ..SolveOptions::default()
        };
        let err = super::check_options(&options).expect_err(name).to_string();
        assert!(
            err.contains(name) && err.contains(&format!("{} = \"{}\"", by.0, by.1)),
            "{err}"
        );
        // A solve takes them: torch's own defaults combine refine = "none" and refine_after.
        LbfgsSolver::new().solve(&problem, &options).unwrap();
    }
    // Every declared option with a valid value is taken.
    for spec in OPTIONS {
        let value = match spec.kind {
            OptionKind::Choice(choices) => RawOptionValue::Str(choices[1].to_string()),
            OptionKind::Int => RawOptionValue::Int(5),
            OptionKind::Float => RawOptionValue::Float(2.5),
            OptionKind::Bool => RawOptionValue::Bool(true),
        };
        let options = SolveOptions {
            raw: raw(&[(spec.name, value)]),
            ..SolveOptions::default()
        };
        let result = solve(&problem, &options);
        assert_eq!(
            result.status,
            TerminationStatus::LocallyOptimal,
            "{}",
            spec.name
        );
    }
    for options in [
        SolveOptions {
            relative_gap: Some(0.01),
            ..SolveOptions::default()
        },
        SolveOptions {
            absolute_gap: Some(0.0),
            ..SolveOptions::default()
        },
    ] {
        let err = LbfgsSolver::new().solve(&problem, &options).unwrap_err();
        assert!(matches!(err, GlassboxError::Capability { .. }), "{err}");
    }
    // Seed and threads are accepted (and ignored: the method is deterministic).
    let options = SolveOptions {
        seed: Some(3),
        threads: Some(4),
        ..SolveOptions::default()
    };
    let a = solve(&problem, &options);
    let b = solve(&problem, &SolveOptions::default());
    assert_eq!(a.primal, b.primal);
}

#[test]
fn a_panicking_evaluation_is_a_numerical_error() {
    let mut problem = Quadratic::new(&[3.0]);
    problem.panic_above = 1.0;
    let result = solve(&problem, &SolveOptions::default());
    assert_eq!(result.status, TerminationStatus::NumericalError);
    assert!(
        result.raw_status.contains("objective exploded"),
        "{}",
        result.raw_status
    );
    // The last good point comes back, within the region that evaluates.
    assert!(result.primal[0] <= 1.0);
    let result = solve(&Quadratic::new(&[3.0]), &SolveOptions::default());
    assert_eq!(result.status, TerminationStatus::LocallyOptimal);
}

#[test]
fn the_deadline_is_checked_inside_an_iteration() {
    // Every objective evaluation takes 30 ms; the limit of 0.1 s falls inside the solve.
    let mut problem = Quadratic::new(&[3.0, -2.0]);
    problem.busy = Duration::from_millis(30);
    problem.rows = vec![vec![1.0, 1.0]];
    problem.g_lower = vec![-INF];
    problem.g_upper = vec![0.0];
    let options = SolveOptions {
        time_limit: Some(0.1),
        ..SolveOptions::default()
    };
    let clock = Instant::now();
    let result = solve(&problem, &options);
    let elapsed = clock.elapsed().as_secs_f64();
    assert_eq!(
        result.status.limit(),
        Some(Limit::Time),
        "{}",
        result.raw_status
    );
    assert!(elapsed < 0.1 + 0.08, "took {elapsed} s");
    assert!(result.wall_seconds <= elapsed);
    // A huge limit is no limit.
    let options = SolveOptions {
        time_limit: Some(1e300),
        ..SolveOptions::default()
    };
    let result = solve(&Quadratic::new(&[3.0]), &options);
    assert_eq!(result.status, TerminationStatus::LocallyOptimal);
}

#[test]
fn a_stop_request_ends_the_solve_as_interrupted() {
    // The deadline's checks (inside an iteration, between inner solves, between barrier
    // stages) read the request too: one made before the solve ends it at the first of them,
    // on the direct and on the barrier path, where the solve alone ends optimal.
    let mut problem = Quadratic::new(&[3.0, -2.0]);
    problem.rows = vec![vec![1.0, 1.0]];
    problem.g_lower = vec![-INF];
    problem.g_upper = vec![0.0];
    for path in ["direct", "barrier"] {
        let options = SolveOptions {
            time_limit: Some(60.0),
            interrupt: Some(Interrupt::new(Arc::new(AtomicBool::new(true)))),
            raw: raw(&[("path", RawOptionValue::Str(path.into()))]),
            ..SolveOptions::default()
        };
        let result = solve(&problem, &options);
        assert_eq!(
            result.status.limit(),
            Some(Limit::Interrupted),
            "{path}: {} ({})",
            result.status,
            result.raw_status
        );
        // A stop request after the deadline: the time limit, as the IPOPT backend says.
        let late = solve(
            &problem,
            &SolveOptions {
                time_limit: Some(1e-9),
                ..options.clone()
            },
        );
        assert_eq!(
            late.status.limit(),
            Some(Limit::Time),
            "{path}: {} ({})",
            late.status,
            late.raw_status
        );
        let alone = solve(
            &problem,
            &SolveOptions {
                interrupt: None,
                ..options
            },
        );
        assert_eq!(alone.status, TerminationStatus::LocallyOptimal, "{path}");
        assert!(result.iterations < alone.iterations, "{path}");
    }
}

#[test]
fn iteration_limit_zero_and_a_kkt_start() {
    let problem = Quadratic::new(&[3.0]);
    let options = SolveOptions {
        iteration_limit: Some(0),
        ..SolveOptions::default()
    };
    let result = solve(&problem, &options);
    assert_eq!(
        result.status,
        TerminationStatus::FeasibleAtLimit(Limit::Iteration)
    );
    assert_eq!(result.iterations, 0);
    // Started at the optimum: done at once, even with no iterations allowed.
    let options = options.with_warm_start(Some(WarmStart::primal(vec![3.0])));
    let result = solve(&problem, &options);
    assert_eq!(result.status, TerminationStatus::LocallyOptimal);
    assert_eq!(result.iterations, 0);
}

#[test]
fn infeasible_equality() {
    // x0 + x1 = 5 with x in [0, 1]^2 is infeasible; the closest point is (1, 1).
    let mut problem = Quadratic::new(&[0.0, 0.0]);
    problem.lower = vec![0.0; 2];
    problem.upper = vec![1.0; 2];
    problem.rows = vec![vec![1.0, 1.0]];
    problem.g_lower = vec![5.0];
    problem.g_upper = vec![5.0];
    let result = solve(&problem, &SolveOptions::default());
    assert_eq!(
        result.status,
        TerminationStatus::Infeasible,
        "{}",
        result.raw_status
    );
    assert_eq!(result.primal, vec![1.0, 1.0]);
    let result = solve(&problem, &spg());
    assert_eq!(
        result.status,
        TerminationStatus::Infeasible,
        "{}",
        result.raw_status
    );
}

#[test]
fn no_variables() {
    let mut problem = Quadratic::new(&[]);
    problem.rows = vec![vec![]];
    problem.g_lower = vec![-1.0];
    problem.g_upper = vec![1.0];
    let result = solve(&problem, &SolveOptions::default());
    assert_eq!(result.status, TerminationStatus::Optimal);
    assert_eq!(result.objective, Some(0.0));
    problem.g_lower = vec![1.0];
    problem.g_upper = vec![2.0];
    let result = solve(&problem, &SolveOptions::default());
    assert_eq!(result.status, TerminationStatus::Infeasible);
}

#[test]
fn concurrent_solves_are_independent() {
    let solver: Box<dyn NlpSolver> = Box::new(LbfgsSolver::new());
    std::thread::scope(|scope| {
        for t in 0..4 {
            let solver = dyn_clone::clone_box(&*solver);
            scope.spawn(move || {
                let mut problem = Quadratic::new(&[t as f64, 2.0, -1.0]);
                problem.rows = vec![vec![1.0, 1.0, 1.0]];
                problem.g_lower = vec![-INF];
                problem.g_upper = vec![1.0];
                let result = solver.solve(&problem, &SolveOptions::default()).unwrap();
                assert_eq!(result.status, TerminationStatus::LocallyOptimal);
            });
        }
    });
}

/// Solves a few problems at the verbosity the parent asks for, ending in several statuses,
/// when run as the child of [`nothing_is_printed_at_verbosity_0`]; does nothing otherwise.
#[test]
fn verbosity_child() {
    let Ok(mode) = std::env::var("GLASSBOX_LBFGS_CHILD") else {
        return;
    };
    let verbosity = if mode == "loud" { 3 } else { 1 };
    let options = SolveOptions {
        verbosity,
        ..SolveOptions::default()
    };
    let mut problem = Quadratic::new(&[2.0, -1.0]);
    problem.rows = vec![vec![1.0, 1.0]];
    problem.g_lower = vec![-INF];
    problem.g_upper = vec![0.5];
    let result = solve(&problem, &options);
    assert_eq!(result.status, TerminationStatus::LocallyOptimal);
    let _ = solve(
        &problem,
        &options.with_warm_start(Some(result.warm_start())),
    );
    let mut infeasible = problem.clone();
    infeasible.lower = vec![1.0, 1.0];
    let _ = solve(&infeasible, &options);
    let limited = SolveOptions {
        iteration_limit: Some(1),
        ..options.clone()
    };
    let _ = solve(&problem, &limited);
    let _ = solve(
        &problem,
        &SolveOptions {
            raw: spg().raw,
            ..options
        },
    );
}

#[test]
fn nothing_is_printed_at_verbosity_0() {
    if std::env::var("GLASSBOX_LBFGS_CHILD").is_ok() {
        return;
    }
    const CHILD: &str = "gradient::tests::verbosity_child";
    let run =
        |mode: &str| crate::test_support::run_child(CHILD, "GLASSBOX_LBFGS_CHILD", mode, None);
    let (stdout, stderr) = run("quiet");
    crate::test_support::assert_nothing_printed(CHILD, &stdout, &stderr);
    let (_, loud) = run("loud");
    assert!(
        loud.contains("lbfgs: outer"),
        "no log at verbosity 3:\n{loud}"
    );
    assert!(
        loud.contains("inner"),
        "no inner log at verbosity 3:\n{loud}"
    );
}

/// min sum_j c_j (x_j - t_j)^2 over [-1, 1]^n with curvatures c_j from 1 to 1e6: one
/// scalar initial Hessian cannot fit them all.
struct BadlyScaled {
    curvature: Vec<f64>,
    target: Vec<f64>,
}

impl NlpProblem for BadlyScaled {
    fn num_variables(&self) -> usize {
        self.target.len()
    }
    fn num_constraints(&self) -> usize {
        0
    }
    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![-1.0; self.target.len()], vec![1.0; self.target.len()])
    }
    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![], vec![])
    }
    fn objective(&self, x: &[f64]) -> f64 {
        (0..x.len())
            .map(|j| self.curvature[j] * (x[j] - self.target[j]).powi(2))
            .sum()
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        for j in 0..x.len() {
            grad[j] = 2.0 * self.curvature[j] * (x[j] - self.target[j]);
        }
    }
    fn constraints(&self, _x: &[f64], _g: &mut [f64]) {}
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        vec![]
    }
    fn jacobian_values(&self, _x: &[f64], _values: &mut [f64]) {}
    fn name(&self) -> String {
        "badly scaled quadratic".into()
    }
}

#[test]
fn the_diagonal_initial_hessian_handles_bad_scaling() {
    let n = 100;
    let problem = BadlyScaled {
        curvature: (0..n).map(|j| 10f64.powf(6.0 * j as f64 / 99.0)).collect(),
        // Every third of the first 30 targets (curvatures up to 100) lies outside the
        // bounds: those variables end at a bound, with a gradient that keeps the relative
        // stationarity tolerance near 1e-6.
        target: (0..n)
            .map(|j| {
                if j < 30 && j % 3 == 0 {
                    1.5
                } else {
                    0.9 * (j as f64).sin()
                }
            })
            .collect(),
    };
    // With the scalar s^T y / y^T y alone the method stalled (the cost stagnated after
    // about 5000 iterations, short of the tolerance); with the diagonal about 300. The
    // direct path: this is a test of the projected method (the default path takes the
    // barrier on bounds only, whose stages add iterations of their own).
    let result = solve(&problem, &on_path("direct"));
    assert_eq!(result.status, TerminationStatus::LocallyOptimal);
    assert!(
        result.iterations <= 1000,
        "{} iterations",
        result.iterations
    );
    for j in 0..n {
        let expected = problem.target[j].clamp(-1.0, 1.0);
        assert!((result.primal[j] - expected).abs() <= 1e-6, "x_{j}");
    }
}

/// `f = x0^2 x1 + exp(x1)`, `g0 = x0 x1 = 1`, `g1 = x0^2 + x1^2 <= 1`, with exact Hessians.
struct Curved;

impl NlpProblem for Curved {
    fn num_variables(&self) -> usize {
        2
    }
    fn num_constraints(&self) -> usize {
        2
    }
    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![-INF; 2], vec![INF; 2])
    }
    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![1.0, -INF], vec![1.0, 1.0])
    }
    fn objective(&self, x: &[f64]) -> f64 {
        x[0] * x[0] * x[1] + x[1].exp()
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        grad[0] = 2.0 * x[0] * x[1];
        grad[1] = x[0] * x[0] + x[1].exp();
    }
    fn constraints(&self, x: &[f64], g: &mut [f64]) {
        g[0] = x[0] * x[1];
        g[1] = x[0] * x[0] + x[1] * x[1];
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        vec![(0, 0), (0, 1), (1, 0), (1, 1)]
    }
    fn jacobian_values(&self, x: &[f64], values: &mut [f64]) {
        values.copy_from_slice(&[x[1], x[0], 2.0 * x[0], 2.0 * x[1]]);
    }
    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        Some(vec![(0, 0), (1, 0), (1, 1)])
    }
    fn hessian_values(&self, x: &[f64], sigma: f64, lambda: &[f64], values: &mut [f64]) {
        values[0] = sigma * 2.0 * x[1] + 2.0 * lambda[1];
        values[1] = sigma * 2.0 * x[0] + lambda[0];
        values[2] = sigma * x[1].exp() + 2.0 * lambda[1];
    }
}

#[test]
fn the_augmented_hessian_matches_finite_differences() {
    use argmin::core::{Gradient, Hessian};
    let nlp = subproblem::Nlp::new(&Curved);
    // (1.1, 0.7): g1 = 1.7 violates its bound; with these multipliers both terms count.
    for (x, lambda) in [
        (vec![1.1, 0.7], vec![0.3, 0.2]),
        (vec![0.4, -0.9], vec![-0.5, 0.0]),
    ] {
        let al = subproblem::Subproblem::new(&nlp, lambda, 3.0, None);
        let h = al.hessian(&x).unwrap();
        let step = 1e-6;
        for j in 0..2 {
            let shifted = |t: f64| {
                let mut y = x.clone();
                y[j] += t;
                al.gradient(&y).unwrap()
            };
            let (plus, minus) = (shifted(step), shifted(-step));
            for i in 0..2 {
                let fd = (plus[i] - minus[i]) / (2.0 * step);
                assert!(
                    (fd - h[(i, j)]).abs() <= 1e-6 * h[(i, j)].abs().max(1.0),
                    "at {x:?}: H[{i},{j}] = {} against {fd}",
                    h[(i, j)]
                );
            }
        }
    }
}

/// [`Curved`] with bounds on both variables: `x0` in [0.2, 3], `x1` in [-2, inf).
struct BoundedCurved;

impl NlpProblem for BoundedCurved {
    fn num_variables(&self) -> usize {
        2
    }
    fn num_constraints(&self) -> usize {
        2
    }
    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![0.2, -2.0], vec![3.0, INF])
    }
    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        Curved.constraint_bounds()
    }
    fn objective(&self, x: &[f64]) -> f64 {
        Curved.objective(x)
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        Curved.gradient(x, grad)
    }
    fn constraints(&self, x: &[f64], g: &mut [f64]) {
        Curved.constraints(x, g)
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        Curved.jacobian_structure()
    }
    fn jacobian_values(&self, x: &[f64], values: &mut [f64]) {
        Curved.jacobian_values(x, values)
    }
    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        Curved.hessian_structure()
    }
    fn hessian_values(&self, x: &[f64], sigma: f64, lambda: &[f64], values: &mut [f64]) {
        Curved.hessian_values(x, sigma, lambda, values)
    }
}

/// The barrier terms (two-sided, lower-only, upper-only and free variables) against
/// central differences: value to gradient, gradient to Hessian diagonal.
#[test]
fn the_barrier_derivatives_match_finite_differences() {
    let lower = [-1.0, 0.5, -INF, -INF];
    let upper = [1.0, INF, 2.0, INF];
    let barrier = barrier::Barrier::new(0.3, &lower, &upper).unwrap();
    let x = [0.7, 0.6, 1.2, 5.0];
    let mut grad = vec![0.0; 4];
    barrier.add_gradient(&x, &mut grad);
    let step = 1e-6;
    for j in 0..4 {
        let at = |t: f64| {
            let mut y = x.to_vec();
            y[j] += t;
            y
        };
        let fd = (barrier.value(&at(step)) - barrier.value(&at(-step))) / (2.0 * step);
        assert!(
            (fd - grad[j]).abs() <= 1e-7 * grad[j].abs().max(1.0),
            "gradient {j}: {} against {fd}",
            grad[j]
        );
        let gradient_at = |y: &[f64]| {
            let mut g = vec![0.0; 4];
            barrier.add_gradient(y, &mut g);
            g[j]
        };
        let fd = (gradient_at(&at(step)) - gradient_at(&at(-step))) / (2.0 * step);
        let h = barrier.hessian_diagonal(&x, j);
        assert!(
            (fd - h).abs() <= 1e-6 * h.abs().max(1.0),
            "Hessian {j}: {h} against {fd}"
        );
    }
    assert_eq!(grad[3], 0.0, "a free variable has no barrier");
    assert!(barrier.interior(&x));
    assert!(
        !barrier.interior(&[1.0, 0.6, 1.2, 5.0]),
        "on a bound is not inside"
    );
    // Equal bounds, or none: no barrier.
    assert!(barrier::Barrier::new(0.1, &[1.0, -INF], &[1.0, INF]).is_none());
}

/// The augmented Lagrangian of the barrier problem: its gradient and Hessian against
/// central differences of its cost and gradient, and `+inf` outside the interior.
#[test]
fn the_barrier_subproblem_matches_finite_differences() {
    use argmin::core::{CostFunction, Gradient, Hessian};
    let nlp = subproblem::Nlp::new(&BoundedCurved);
    let barrier = barrier::Barrier::new(0.05, &nlp.x_lower, &nlp.x_upper).unwrap();
    let barred = nlp.with_barrier(barrier);
    assert!(barred
        .x_lower
        .iter()
        .chain(&barred.x_upper)
        .all(|b| b.is_infinite()));
    for (x, lambda) in [
        (vec![1.1, 0.7], vec![0.3, 0.2]),
        (vec![0.4, -0.9], vec![-0.5, 0.0]),
    ] {
        let al = subproblem::Subproblem::new(&barred, lambda, 3.0, None);
        let g = al.gradient(&x).unwrap();
        let h = al.hessian(&x).unwrap();
        let step = 1e-6;
        for j in 0..2 {
            let at = |t: f64| {
                let mut y = x.clone();
                y[j] += t;
                y
            };
            let fd = (al.cost(&at(step)).unwrap() - al.cost(&at(-step)).unwrap()) / (2.0 * step);
            assert!(
                (fd - g[j]).abs() <= 1e-6 * g[j].abs().max(1.0),
                "at {x:?}: g[{j}] = {} against {fd}",
                g[j]
            );
            let (plus, minus) = (
                al.gradient(&at(step)).unwrap(),
                al.gradient(&at(-step)).unwrap(),
            );
            for i in 0..2 {
                let fd = (plus[i] - minus[i]) / (2.0 * step);
                assert!(
                    (fd - h[(i, j)]).abs() <= 1e-6 * h[(i, j)].abs().max(1.0),
                    "at {x:?}: H[{i},{j}] = {} against {fd}",
                    h[(i, j)]
                );
            }
        }
    }
    let al = subproblem::Subproblem::new(&barred, vec![0.0; 2], 3.0, None);
    assert!(
        al.cost(&vec![0.2, 0.7]).unwrap().is_nan(),
        "on a bound: not a finite cost"
    );
}

/// The default options with raw `path` set.
fn on_path(path: &str) -> SolveOptions {
    SolveOptions {
        raw: raw(&[("path", RawOptionValue::Str(path.into()))]),
        ..SolveOptions::default()
    }
}

fn barrier_path() -> SolveOptions {
    on_path("barrier")
}

/// Two solves ended at the same point, to 1e-6.
fn assert_same_point(a: &SolveResult, b: &SolveResult) {
    for (x, y) in a.primal.iter().zip(&b.primal) {
        assert!(
            (x - y).abs() <= 1e-6,
            "{:?} against {:?}",
            a.primal,
            b.primal
        );
    }
}

/// min (x0 - 2)^2 + (x1 + 3)^2 + x2^2, x in [-1, 1]^3, x0 + x1 + x2 = 0.5: x0 binds at 1.
fn box_with_a_sum() -> Quadratic {
    let mut problem = Quadratic::new(&[2.0, -3.0, 0.0]);
    problem.lower = vec![-1.0; 3];
    problem.upper = vec![1.0; 3];
    problem.rows = vec![vec![1.0; 3]];
    problem.g_lower = vec![0.5];
    problem.g_upper = vec![0.5];
    problem
}

/// Along the barrier path the solve ends where the direct one does: at a bound that binds,
/// with an equality constraint (L-BFGS steps: the problem gives no Hessian; the conformance
/// suite runs the path with Newton steps on HS071).
#[test]
fn the_barrier_path_reaches_the_optimum() {
    let problem = box_with_a_sum();
    let direct = solve(&problem, &SolveOptions::default());
    let path = solve(&problem, &barrier_path());
    assert_eq!(
        path.status,
        TerminationStatus::LocallyOptimal,
        "{}",
        path.raw_status
    );
    assert!(
        path.raw_status.contains("barrier path"),
        "{}",
        path.raw_status
    );
    assert_same_point(&direct, &path);
    assert!(
        (path.primal[0] - 1.0).abs() <= 1e-9,
        "x0 on its bound: {:?}",
        path.primal
    );
    assert!(path.max_violation.unwrap() <= 1e-6);
    assert!(stationarity_residual(&problem, &path) <= 1e-6);
}

/// The default path (`auto`) follows the barrier on a problem with bounds only and starts
/// the projected methods at the start on one with a general constraint; both end at the
/// optimum the direct path reaches.
#[test]
fn the_auto_path_follows_the_barrier_on_bounds_only() {
    let mut problem = Quadratic::new(&[2.0, -3.0, 0.0]);
    problem.lower = vec![-1.0; 3];
    problem.upper = vec![1.0; 3];
    let direct = on_path("direct");
    for constrained in [false, true] {
        if constrained {
            problem.rows = vec![vec![1.0; 3]];
            problem.g_lower = vec![0.5];
            problem.g_upper = vec![0.5];
        }
        let auto = solve(&problem, &SolveOptions::default());
        let plain = solve(&problem, &direct);
        assert_eq!(
            auto.raw_status.contains("barrier path"),
            !constrained,
            "constrained {constrained}: {}",
            auto.raw_status
        );
        assert!(
            !plain.raw_status.contains("barrier path"),
            "{}",
            plain.raw_status
        );
        assert_eq!(
            auto.status,
            TerminationStatus::LocallyOptimal,
            "{}",
            auto.raw_status
        );
        assert_same_point(&auto, &plain);
    }
}

/// With a general constraint the auto path starts a point to keep (a plain warm start) on
/// the direct path only, and an exploring one (a multistart's random start) on both paths,
/// keeping the lower: the iterations are both solves', the point the better one's.
#[test]
fn the_auto_path_runs_both_paths_from_an_exploring_start_with_constraints() {
    let problem = box_with_a_sum();
    let x0 = vec![0.3, -0.2, 0.1];
    let from = |options: SolveOptions, warm: WarmStart| {
        solve(&problem, &options.with_warm_start(Some(warm)))
    };
    let kept = from(SolveOptions::default(), WarmStart::primal(x0.clone()));
    assert!(
        !kept.raw_status.contains("barrier path") && !kept.raw_status.contains("auto:"),
        "{}",
        kept.raw_status
    );
    let auto = from(SolveOptions::default(), WarmStart::exploring(x0.clone()));
    let direct = from(on_path("direct"), WarmStart::exploring(x0.clone()));
    let mut barrier_options = barrier_path();
    barrier_options
        .raw
        .insert("refine_after".into(), RawOptionValue::Int(i64::MAX));
    let barrier = from(barrier_options, WarmStart::exploring(x0));
    assert!(auto.raw_status.contains("auto: the"), "{}", auto.raw_status);
    assert_eq!(auto.iterations, direct.iterations + barrier.iterations);
    assert_eq!(auto.status, TerminationStatus::LocallyOptimal);
    let lowest = direct.objective.unwrap().min(barrier.objective.unwrap());
    assert!(auto.objective.unwrap() <= lowest, "{:?}", auto.objective);
    assert_same_point(&auto, &kept);
}

/// The auto path keeps the barrier path's end only where it has a solution and the direct
/// path's has none or a higher objective.
#[test]
fn both_paths_keep_the_lower_solution() {
    let result = |status: TerminationStatus, objective: f64| SolveResult {
        status,
        objective: Some(objective),
        ..SolveResult::failed(NAME, status, "")
    };
    let optimal = TerminationStatus::LocallyOptimal;
    let failed = TerminationStatus::NumericalError;
    assert!(barrier_wins(&result(optimal, 2.0), &result(optimal, 1.0)));
    assert!(!barrier_wins(&result(optimal, 1.0), &result(optimal, 2.0)));
    assert!(!barrier_wins(&result(optimal, 1.0), &result(optimal, 1.0)));
    assert!(barrier_wins(&result(failed, 0.5), &result(optimal, 1.0)));
    assert!(!barrier_wins(&result(optimal, 1.0), &result(failed, 0.5)));
}

/// The path's iterations count towards the limits: at a tiny iteration limit, or a spent
/// time limit, the result is a point at the limit of the problem itself (no barrier).
#[test]
fn the_barrier_path_honours_the_limits() {
    let mut problem = Quadratic::new(&[2.0, -3.0, 0.0]);
    problem.lower = vec![-1.0; 3];
    problem.upper = vec![1.0; 3];
    let options = SolveOptions {
        iteration_limit: Some(2),
        ..barrier_path()
    };
    let result = solve(&problem, &options);
    assert_eq!(
        result.status,
        TerminationStatus::FeasibleAtLimit(Limit::Iteration),
        "{}",
        result.raw_status
    );
    assert!(result.iterations <= 2, "{} iterations", result.iterations);
    assert_eq!(result.primal.len(), 3);
    let options = SolveOptions {
        time_limit: Some(1e-9),
        ..barrier_path()
    };
    let result = solve(&problem, &options);
    assert_eq!(
        result.status,
        TerminationStatus::FeasibleAtLimit(Limit::Time),
        "{}",
        result.raw_status
    );
    assert_eq!(result.max_violation, Some(0.0));
}

/// A constant that puts the optimum's cost where float32's rounding (6e-5 at 1e3) is
/// larger than the cost's fall over the last iterations.
const OFFSET: f64 = 1e3;

/// [`BadlyScaled`] plus [`OFFSET`], its values and gradient rounded to float32 as the `torch`
/// backend's float32 evaluations are; `declared` says whether the problem reports that
/// rounding (`NlpProblem::objective_rounding`).
struct RoundedToFloat32 {
    inner: BadlyScaled,
    declared: bool,
}

impl NlpProblem for RoundedToFloat32 {
    fn num_variables(&self) -> usize {
        self.inner.num_variables()
    }
    fn num_constraints(&self) -> usize {
        0
    }
    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        self.inner.variable_bounds()
    }
    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![], vec![])
    }
    fn objective(&self, x: &[f64]) -> f64 {
        // A sum over many rows in float32 is off by a few units in the last place, up or
        // down, from one point to the next: a deterministic function of x, up to 3 ulps.
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        x.iter().for_each(|v| v.to_bits().hash(&mut hasher));
        let ulps = (hasher.finish() % 7) as f64 - 3.0;
        let value = OFFSET + self.inner.objective(x);
        f64::from(value as f32) + ulps * value * f64::from(f32::EPSILON)
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        self.inner.gradient(x, grad);
        for g in grad.iter_mut() {
            *g = f64::from(*g as f32);
        }
    }
    fn constraints(&self, _x: &[f64], _g: &mut [f64]) {}
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        vec![]
    }
    fn jacobian_values(&self, _x: &[f64], _values: &mut [f64]) {}
    fn objective_rounding(&self) -> f64 {
        if self.declared {
            f64::from(f32::EPSILON)
        } else {
            f64::EPSILON
        }
    }
    fn name(&self) -> String {
        "badly scaled quadratic in float32".into()
    }
}

/// Cost values off by a few float32 ulps defeat a line search that takes differences above
/// float64's rounding as real: it finds no lower point far from the optimum. Declared, the
/// rounding widens the noise band, the search falls back on the gradients' estimate of the
/// decrease, and the solve converges (the gradient's float32 rounding is harmless).
#[test]
fn a_declared_float32_rounding_widens_the_line_search() {
    let n = 20;
    let problem = |declared| RoundedToFloat32 {
        inner: BadlyScaled {
            curvature: (0..n).map(|j| 10f64.powf(3.0 * j as f64 / 19.0)).collect(),
            target: (0..n).map(|j| 0.9 * (j as f64).sin()).collect(),
        },
        declared,
    };
    let undeclared = solve(&problem(false), &SolveOptions::default());
    assert_eq!(
        undeclared.status,
        TerminationStatus::FeasibleAtLimit(Limit::Other),
        "{}",
        undeclared.raw_status
    );
    let declared = solve(&problem(true), &SolveOptions::default());
    assert_eq!(
        declared.status,
        TerminationStatus::LocallyOptimal,
        "{}",
        declared.raw_status
    );
    for j in 0..n {
        let expected = 0.9 * (j as f64).sin();
        assert!((declared.primal[j] - expected).abs() <= 1e-5, "x_{j}");
    }
}
