//! Unit tests of the IPOPT backend: real solves through Ipopt of small problems that end in
//! every status, option checks, warm starts, concurrency, and silence at verbosity 0.

use super::*;
use crate::test_support::{self, raw};
use glassbox_core::options::OptionKind;
use glassbox_core::{Interrupt, Limit};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const INF: f64 = f64::INFINITY;

/// min sum_j (x_j - target_j)^2 over a box, with optional linear constraints
/// `rows * x` in `[g_lower, g_upper]` given densely.
#[derive(Clone)]
struct Quadratic {
    target: Vec<f64>,
    lower: Vec<f64>,
    upper: Vec<f64>,
    rows: Vec<Vec<f64>>,
    g_lower: Vec<f64>,
    g_upper: Vec<f64>,
    hessian: bool,
    /// Burn this much CPU in every objective evaluation.
    busy: Duration,
    /// Panic in the objective when x[0] is above this.
    panic_above: f64,
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
            hessian: true,
            busy: Duration::ZERO,
            panic_above: INF,
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
        let start = Instant::now();
        while start.elapsed() < self.busy {
            std::hint::spin_loop();
        }
        x.iter()
            .zip(&self.target)
            .map(|(x, t)| (x - t).powi(2))
            .sum()
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        for ((g, x), t) in grad.iter_mut().zip(x).zip(&self.target) {
            *g = 2.0 * (x - t);
        }
    }
    fn constraints(&self, x: &[f64], g: &mut [f64]) {
        for (g, row) in g.iter_mut().zip(&self.rows) {
            *g = row.iter().zip(x).map(|(a, x)| a * x).sum();
        }
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        let mut s = vec![];
        for (i, row) in self.rows.iter().enumerate() {
            for (j, a) in row.iter().enumerate() {
                if *a != 0.0 {
                    s.push((i, j));
                }
            }
        }
        s
    }
    fn jacobian_values(&self, _x: &[f64], values: &mut [f64]) {
        let nonzeros = self.rows.iter().flatten().filter(|a| **a != 0.0);
        for (v, a) in values.iter_mut().zip(nonzeros) {
            *v = *a;
        }
    }
    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        self.hessian
            .then(|| (0..self.target.len()).map(|i| (i, i)).collect())
    }
    fn hessian_values(&self, _x: &[f64], sigma: f64, _lambda: &[f64], values: &mut [f64]) {
        values.fill(2.0 * sigma);
    }
}

fn solve(problem: &dyn NlpProblem, options: &SolveOptions) -> SolveResult {
    IpoptSolver::new().solve(problem, options).expect("solve")
}

#[test]
fn solver_is_send_sync_and_matches_its_entry() {
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<IpoptSolver>();
    let entry = entry();
    assert_eq!(entry.name, IpoptSolver::new().name());
    assert_eq!(entry.problem_kind(), "nlp");
    assert!(entry.options.iter().all(|o| !o.help.is_empty()));
    let mut names: Vec<&str> = entry.options.iter().map(|o| o.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), entry.options.len(), "duplicate option names");
}

#[test]
fn every_return_code_has_a_name() {
    for code in [
        0, 1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -10, -11, -12, -13, -100, -101, -102, -199,
    ] {
        assert!(ffi::status_name(code).is_some(), "{code}");
    }
    assert!(ffi::status_name(7).is_none());
}

#[test]
fn warm_start_with_multipliers_and_no_constraints() {
    let mut problem = Quadratic::new(&[2.0, -1.0]);
    problem.lower = vec![0.0, 0.0];
    problem.upper = vec![1.0, 1.0];
    let cold = solve(&problem, &SolveOptions::default());
    assert_eq!(cold.status, TerminationStatus::LocallyOptimal);
    let warm = solve(
        &problem,
        &SolveOptions::default().with_warm_start(Some(cold.warm_start())),
    );
    assert_eq!(
        warm.status,
        TerminationStatus::LocallyOptimal,
        "{}",
        warm.raw_status
    );
    assert!(warm.iterations <= 3, "{} iterations", warm.iterations);
    // Only some multipliers: the others are zeros.
    let partial = WarmStart {
        lower_bound_multipliers: cold.lower_bound_multipliers.clone(),
        ..WarmStart::primal(cold.primal.clone())
    };
    let warm = solve(
        &problem,
        &SolveOptions::default().with_warm_start(Some(partial)),
    );
    assert_eq!(
        warm.status,
        TerminationStatus::LocallyOptimal,
        "{}",
        warm.raw_status
    );
}

#[test]
fn no_variables_is_solved_without_ipopt() {
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
fn constant_constraints_get_a_padded_jacobian() {
    // One constraint row with no entries: g(x) = 0 in [-1, 1].
    let mut problem = Quadratic::new(&[3.0]);
    problem.rows = vec![vec![0.0]];
    problem.g_lower = vec![-1.0];
    problem.g_upper = vec![1.0];
    let result = solve(&problem, &SolveOptions::default());
    assert_eq!(
        result.status,
        TerminationStatus::LocallyOptimal,
        "{}",
        result.raw_status
    );
    assert!((result.primal[0] - 3.0).abs() < 1e-6);
    assert_eq!(
        result.constraint_multipliers.as_ref().map(Vec::len),
        Some(1)
    );
}

#[test]
fn fixed_variables() {
    let mut problem = Quadratic::new(&[3.0, 1.0]);
    problem.lower = vec![1.0, -INF];
    problem.upper = vec![1.0, INF];
    let result = solve(&problem, &SolveOptions::default());
    assert_eq!(
        result.status,
        TerminationStatus::LocallyOptimal,
        "{}",
        result.raw_status
    );
    assert_eq!(result.primal[0], 1.0);
    assert!((result.primal[1] - 1.0).abs() < 1e-8);
    // Every variable fixed.
    problem.lower = vec![1.0, 2.0];
    problem.upper = vec![1.0, 2.0];
    let result = solve(&problem, &SolveOptions::default());
    eprintln!("all fixed: {} ({})", result.status, result.raw_status);
    assert!(
        result.status.has_solution(),
        "{} ({})",
        result.status,
        result.raw_status
    );
    assert_eq!(result.primal, vec![1.0, 2.0]);
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
    // The solver is usable afterwards.
    let result = solve(&Quadratic::new(&[3.0]), &SolveOptions::default());
    assert_eq!(result.status, TerminationStatus::LocallyOptimal);
}

#[test]
fn a_huge_time_limit_is_no_limit() {
    let options = SolveOptions {
        time_limit: Some(1e300),
        ..SolveOptions::default()
    };
    let result = solve(&Quadratic::new(&[3.0]), &options);
    assert_eq!(
        result.status,
        TerminationStatus::LocallyOptimal,
        "{}",
        result.raw_status
    );
}

/// Rosenbrock's function in 2D, burning CPU in every objective evaluation.
struct BusyRosenbrock(Duration);

impl NlpProblem for BusyRosenbrock {
    fn num_variables(&self) -> usize {
        2
    }
    fn num_constraints(&self) -> usize {
        0
    }
    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![-INF; 2], vec![INF; 2])
    }
    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![], vec![])
    }
    fn objective(&self, x: &[f64]) -> f64 {
        let start = Instant::now();
        while start.elapsed() < self.0 {
            std::hint::spin_loop();
        }
        100.0 * (x[1] - x[0] * x[0]).powi(2) + (1.0 - x[0]).powi(2)
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        grad[0] = -400.0 * x[0] * (x[1] - x[0] * x[0]) - 2.0 * (1.0 - x[0]);
        grad[1] = 200.0 * (x[1] - x[0] * x[0]);
    }
    fn constraints(&self, _x: &[f64], _g: &mut [f64]) {}
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        vec![]
    }
    fn jacobian_values(&self, _x: &[f64], _values: &mut [f64]) {}
}

#[test]
fn cpu_time_limit_is_a_time_limit() {
    // L-BFGS from the standard start needs dozens of evaluations of 30 ms each.
    let options = SolveOptions {
        raw: raw(&[("max_cpu_time", RawOptionValue::Float(0.1))]),
        ..SolveOptions::default()
    }
    .with_warm_start(Some(WarmStart::primal(vec![-1.2, 1.0])));
    let result = solve(&BusyRosenbrock(Duration::from_millis(30)), &options);
    assert_eq!(
        result.status,
        TerminationStatus::FeasibleAtLimit(Limit::Time),
        "{}",
        result.raw_status
    );
    assert_eq!(result.raw_status, "Maximum_CpuTime_Exceeded");
    // The wall-clock limit, in the intermediate callback, gives the same status.
    let options = SolveOptions {
        time_limit: Some(0.1),
        ..options.clone()
    };
    let result = solve(&BusyRosenbrock(Duration::from_millis(30)), &options);
    assert_eq!(
        result.status,
        TerminationStatus::FeasibleAtLimit(Limit::Time),
        "{}",
        result.raw_status
    );
}

#[test]
fn a_stop_request_ends_the_solve_at_the_next_iteration_as_interrupted() {
    // Dozens of 30 ms evaluations without the request; a minute's time limit never fires.
    let flag = Arc::new(AtomicBool::new(false));
    let options = SolveOptions {
        time_limit: Some(60.0),
        interrupt: Some(Interrupt::new(flag.clone())),
        ..SolveOptions::default()
    }
    .with_warm_start(Some(WarmStart::primal(vec![-1.2, 1.0])));
    let full = solve(
        &BusyRosenbrock(Duration::from_millis(30)),
        &SolveOptions {
            interrupt: None,
            ..options.clone()
        },
    );
    assert_eq!(full.status, TerminationStatus::LocallyOptimal);
    let setter = {
        let flag = flag.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            flag.store(true, Ordering::SeqCst);
        })
    };
    let result = solve(&BusyRosenbrock(Duration::from_millis(30)), &options);
    setter.join().unwrap();
    assert_eq!(
        result.status,
        TerminationStatus::FeasibleAtLimit(Limit::Interrupted),
        "{}",
        result.raw_status
    );
    assert!(
        result.iterations < full.iterations,
        "{} of {} iterations",
        result.iterations,
        full.iterations
    );
    // A request made before the solve stops it at its first iteration.
    let result = solve(&BusyRosenbrock(Duration::from_millis(1)), &options);
    assert_eq!(
        result.status,
        TerminationStatus::FeasibleAtLimit(Limit::Interrupted)
    );
    assert_eq!(result.iterations, 0);
}

#[test]
fn options_are_checked_before_ipopt_sees_them() {
    let problem = Quadratic::new(&[1.0]);
    let cases = [
        ("mu_init", RawOptionValue::Float(-1.0)),
        ("print_level", RawOptionValue::Int(13)),
        ("bound_frac", RawOptionValue::Float(0.7)),
        ("acceptable_iter", RawOptionValue::Int(-1)),
        ("acceptable_iter", RawOptionValue::Int(1 << 40)),
        ("linear_solver", RawOptionValue::Str("ma27".into())),
        ("max_iter", RawOptionValue::Int(3)),
    ];
    for (name, value) in cases {
        let options = SolveOptions {
            raw: raw(&[(name, value.clone())]),
            ..SolveOptions::default()
        };
        let err = IpoptSolver::new()
            .solve(&problem, &options)
            .expect_err(&format!("{name} = {value}"));
        assert!(err.to_string().contains(name), "{err}");
    }
    // Every declared option is accepted by Ipopt with a valid value.
    for spec in OPTIONS {
        let value = match spec.kind {
            OptionKind::Choice(choices) => RawOptionValue::Str(choices[0].to_string()),
            OptionKind::Int => RawOptionValue::Int(if spec.name == "print_level" { 0 } else { 5 }),
            OptionKind::Float => RawOptionValue::Float(0.25),
            OptionKind::Bool => RawOptionValue::Bool(true),
        };
        let options = SolveOptions {
            raw: raw(&[(spec.name, value.clone())]),
            ..SolveOptions::default()
        };
        let result = IpoptSolver::new()
            .solve(&problem, &options)
            .unwrap_or_else(|e| panic!("{} = {value}: {e}", spec.name));
        assert!(
            !matches!(result.status, TerminationStatus::Error),
            "{} = {value}: {}",
            spec.name,
            result.raw_status
        );
    }
    let without_hessian = Quadratic {
        hessian: false,
        ..Quadratic::new(&[1.0])
    };
    let options = SolveOptions {
        raw: raw(&[("hessian_approximation", RawOptionValue::Str("exact".into()))]),
        ..SolveOptions::default()
    };
    let err = IpoptSolver::new()
        .solve(&without_hessian, &options)
        .unwrap_err();
    assert!(err.to_string().contains("hessian_approximation"), "{err}");
    let options = SolveOptions {
        relative_gap: Some(0.01),
        ..SolveOptions::default()
    };
    let err = IpoptSolver::new().solve(&problem, &options).unwrap_err();
    assert!(err.to_string().contains("relative_gap"), "{err}");
}

#[test]
fn concurrent_solves_take_turns_safely() {
    let solver: Box<dyn NlpSolver> = Box::new(IpoptSolver::new());
    std::thread::scope(|scope| {
        for t in 0..8 {
            let solver = dyn_clone::clone_box(&*solver);
            scope.spawn(move || {
                for k in 0..10 {
                    let target = [t as f64, k as f64, -1.0];
                    let mut problem = Quadratic::new(&target);
                    problem.rows = vec![vec![1.0, 1.0, 1.0]];
                    problem.g_lower = vec![-INF];
                    problem.g_upper = vec![1.0];
                    let result = solver.solve(&problem, &SolveOptions::default()).unwrap();
                    assert_eq!(result.status, TerminationStatus::LocallyOptimal);
                }
            });
        }
    });
}

/// Solves a few problems at verbosity 0, ending in every kind of status, when run as
/// the child of [`nothing_is_printed_at_verbosity_0`]; does nothing otherwise.
#[test]
fn silent_child() {
    let Ok(mode) = std::env::var("GLASSBOX_IPOPT_CHILD") else {
        return;
    };
    let verbosity = if mode == "loud" { 2 } else { 0 };
    let quiet = SolveOptions {
        verbosity,
        ..SolveOptions::default()
    };
    let mut problem = Quadratic::new(&[2.0, -1.0]);
    problem.rows = vec![vec![1.0, 1.0]];
    problem.g_lower = vec![-INF];
    problem.g_upper = vec![0.5];
    let result = solve(&problem, &quiet);
    // An `ipopt.opt` in the working directory sets max_iter 1: it must be ignored.
    assert_eq!(
        result.status,
        TerminationStatus::LocallyOptimal,
        "{}",
        result.raw_status
    );
    let _ = solve(&problem, &quiet.with_warm_start(Some(result.warm_start())));
    let mut infeasible = problem.clone();
    infeasible.lower = vec![1.0, 1.0];
    let _ = solve(&infeasible, &quiet);
    let _ = solve(
        &problem,
        &SolveOptions {
            iteration_limit: Some(1),
            ..quiet.clone()
        },
    );
    let mut slow = problem.clone();
    slow.busy = Duration::from_millis(20);
    let _ = solve(
        &slow,
        &SolveOptions {
            time_limit: Some(0.05),
            ..quiet.clone()
        },
    );
}

/// The test that [`nothing_is_printed_at_verbosity_0`] runs in a child process.
const CHILD: &str = "ipopt::tests::silent_child";

fn run_child(mode: &str) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ipopt.opt"), "print_level 12\nmax_iter 1\n").unwrap();
    test_support::run_child(CHILD, "GLASSBOX_IPOPT_CHILD", mode, Some(dir.path()))
}

/// Runs [`silent_child`] in a child process (Ipopt writes to the C `stdout`, which the
/// test harness does not capture) from a folder that holds an `ipopt.opt`, and checks
/// that nothing but the harness's own lines was printed.
#[test]
fn nothing_is_printed_at_verbosity_0() {
    if std::env::var("GLASSBOX_IPOPT_CHILD").is_ok() {
        return;
    }
    let (stdout, stderr) = run_child("quiet");
    test_support::assert_nothing_printed(CHILD, &stdout, &stderr);

    let (stdout, _) = run_child("loud");
    assert!(
        stdout.contains("EXIT:"),
        "no Ipopt log at verbosity 2:\n{stdout}"
    );
}

/// The two fixed costs of `overheads.rs` are removed here (Debian's Ipopt 3.11 and MUMPS
/// 5.5, what CI runs on): Ipopt's clock always, MUMPS's save-size estimate wherever the
/// loaded MUMPS has it. And a solve after the rewrite still converges, counting its seconds.
#[test]
fn fixed_costs_are_removed_before_a_solve() {
    let problem = Quadratic::new(&[1.0, -2.0]);
    let result = solve(&problem, &SolveOptions::default());
    assert_eq!(
        result.status,
        TerminationStatus::LocallyOptimal,
        "{result:?}"
    );
    let removed = overheads::remove();
    assert_eq!(removed.ipopt_cpu_clock, Ok(()), "{removed:?}");
    extern "C" {
        fn dlsym(
            handle: *mut std::ffi::c_void,
            name: *const std::ffi::c_char,
        ) -> *mut std::ffi::c_void;
    }
    // SAFETY: RTLD_DEFAULT (null) and a NUL-terminated name.
    let mumps_has_it = !unsafe {
        dlsym(
            std::ptr::null_mut(),
            c"__dmumps_save_restore_MOD_dmumps_compute_memory_save".as_ptr(),
        )
    }
    .is_null();
    if mumps_has_it {
        assert_eq!(removed.mumps_save_size, Ok(()), "{removed:?}");
    }
    let limited = SolveOptions {
        time_limit: Some(10.0),
        ..SolveOptions::default()
    };
    let again = solve(&problem, &limited);
    assert_eq!(again.status, TerminationStatus::LocallyOptimal, "{again:?}");
    assert!(again.wall_seconds >= 0.0 && again.wall_seconds < 10.0);
}
