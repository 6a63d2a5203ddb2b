//! The NLP conformance suite: small problems with known answers (in [`super::nlp_problems`])
//! that every NLP backend must pass, whoever wrote it. Each check is a function of the
//! backend's registry entry (for its capabilities and raw options) and a backend; it panics
//! with a message naming the backend and the problem when the backend fails it.
//! `tests/conformance_nlp.rs` runs every check on every built-in NLP backend; a crate that
//! adds a backend runs [`run_all`] on it.
//!
//! Checks that need a capability a backend lacks (general constraints, warm starts) are
//! skipped for it; a backend must then refuse such requests with an error, which is checked
//! too. A backend that solves only problems with a tensor form of their objective
//! (`NlpProblem::tensor_objective`, which the problems here do not give; its capability
//! `tensor_objective_only`) is instead checked to refuse them ([`TENSOR_FORM_CHECKS`]);
//! `tests/torch_backend.rs` runs the built-in one on tensor forms of these problems.
//!
//! Depends on the core's NLP types, backend traits and entries, and the registry.

use super::nlp_problems::*;
use crate::backend::{BackendEntry, Constructor};
use crate::nlp::max_violation;
use crate::options::OptionKind;
use crate::registry::Registry;
use crate::solver::Capabilities;
use crate::{
    GlassboxError, Limit, NlpProblem, NlpSolver, RawOptionValue, Result, SolveOptions, SolveResult,
    TerminationStatus, WarmStart,
};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// A check of an NLP backend (its registry entry and the backend).
pub type Check = fn(&BackendEntry, &dyn NlpSolver);

/// The checks, by name, in the order [`run_all`] runs them.
pub const CHECKS: &[(&str, Check)] = &[
    ("bounded_quadratic", bounded_quadratic),
    ("hs071_exact_hessian", hs071_exact_hessian),
    ("hs071_quasi_newton", hs071_quasi_newton),
    ("equality_constrained", equality_constrained),
    ("inequality_constrained", inequality_constrained),
    ("infeasible", infeasible),
    ("unbounded", unbounded),
    ("time_limit", time_limit),
    ("iteration_limit", iteration_limit),
    ("warm_start", warm_start),
    ("warm_start_mismatch", warm_start_mismatch),
    ("raw_options_checked", raw_options_checked),
    ("nan_objective", nan_objective),
    ("malformed_problem", malformed_problem),
];

/// The checks of a backend that solves only problems with a tensor form of their objective,
/// in place of [`CHECKS`].
pub const TENSOR_FORM_CHECKS: &[(&str, Check)] = &[(
    "refuses_problems_without_a_tensor_form",
    refuses_problems_without_a_tensor_form,
)];

/// Whether the backend of `entry` solves only problems with a tensor form of their objective
/// (its capability `tensor_objective_only`): [`run_all`] runs [`TENSOR_FORM_CHECKS`] on it.
pub fn needs_tensor_form(entry: &BackendEntry) -> bool {
    entry.capabilities.tensor_objective_only
}

/// Runs every check on the NLP backend of `entry` (created by [`backend`]): [`CHECKS`], or
/// [`TENSOR_FORM_CHECKS`] for a backend that [`needs_tensor_form`]. Panics on the first
/// failure with a message naming the backend and the check; an entry that is not an NLP
/// backend, or whose backend disagrees with it, is a failure too.
pub fn run_all(entry: &BackendEntry) {
    let solver = backend(entry);
    let checks = if needs_tensor_form(entry) {
        TENSOR_FORM_CHECKS
    } else {
        CHECKS
    };
    run_checks(entry, solver.as_ref(), checks);
}

/// Creates the NLP backend of `entry` and checks that it agrees with its entry (name and
/// capabilities) and declares no integers; panics otherwise, or if `entry` is not an NLP
/// backend.
pub fn backend(entry: &BackendEntry) -> Box<dyn NlpSolver> {
    let Constructor::Nlp(create) = entry.constructor else {
        panic!("{} is not an NLP backend", entry.name);
    };
    let solver = create();
    assert_eq!(entry.name, solver.name(), "entry and backend names differ");
    assert_eq!(
        entry.capabilities,
        solver.capabilities(),
        "{}: entry and backend capabilities differ",
        entry.name
    );
    assert!(
        !entry.capabilities.integers,
        "{}: an NLP backend with integers",
        entry.name
    );
    solver
}

/// Runs `checks` on `solver`, the backend of `entry` or a variant of it (such as
/// [`WithRawOptions`]), in order. The first that fails panics again with a message naming
/// the backend and the check, after the check's own message.
pub fn run_checks(entry: &BackendEntry, solver: &dyn NlpSolver, checks: &[(&str, Check)]) {
    for (name, check) in checks {
        eprintln!("conformance (NLP) {}: {name}", entry.name);
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| check(entry, solver))) {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied());
            match message {
                Some(message) => panic!(
                    "NLP conformance: the backend {} failed the check {name}: {message}",
                    entry.name
                ),
                None => resume_unwind(panic),
            }
        }
    }
}

/// A backend with raw options added to every solve (those the caller set win), so that the
/// checks run against a variant of a backend (`tests/conformance_nlp.rs` runs them on the
/// gradient backend with `path = "barrier"`).
#[derive(Clone)]
pub struct WithRawOptions {
    /// The backend.
    pub solver: Box<dyn NlpSolver>,
    /// The raw options added to every solve that does not set them.
    pub raw: Vec<(&'static str, RawOptionValue)>,
}

impl NlpSolver for WithRawOptions {
    fn name(&self) -> &str {
        self.solver.name()
    }
    fn capabilities(&self) -> Capabilities {
        self.solver.capabilities()
    }
    fn solve(&self, problem: &dyn NlpProblem, options: &SolveOptions) -> Result<SolveResult> {
        let mut options = options.clone();
        for (name, value) in &self.raw {
            options
                .raw
                .entry(name.to_string())
                .or_insert_with(|| value.clone());
        }
        self.solver.solve(problem, &options)
    }
}

/// Solves `problem`, panicking on an error; prints the backend's status and raw status.
pub fn solve(
    solver: &dyn NlpSolver,
    problem: &dyn NlpProblem,
    options: &SolveOptions,
) -> SolveResult {
    let result = solver.solve(problem, options).unwrap_or_else(|e| {
        panic!(
            "{} on {}: unexpected error: {e}",
            solver.name(),
            problem.name()
        )
    });
    eprintln!(
        "{} on {}: {} ({}), objective {:?}, {} iterations, {:.3} s",
        solver.name(),
        problem.name(),
        result.status,
        result.raw_status,
        result.objective,
        result.iterations,
        result.wall_seconds
    );
    result
}

/// Options for a quiet solve, started from `x0` where the backend takes a starting point.
pub fn options_from(solver: &dyn NlpSolver, x0: &[f64]) -> SolveOptions {
    SolveOptions {
        warm_start: solver
            .capabilities()
            .warm_start
            .then(|| WarmStart::primal(x0.to_vec())),
        ..SolveOptions::default()
    }
}

fn has_option(entry: &BackendEntry, name: &str) -> bool {
    entry.options.iter().any(|o| o.name == name)
}

/// Asserts a (locally) optimal solve at `optimum` with objective `objective`, feasible, and
/// with a consistent result record.
pub fn assert_solved(
    solver: &dyn NlpSolver,
    problem: &dyn NlpProblem,
    result: &SolveResult,
    optimum: &[f64],
    objective: f64,
    tolerance: f64,
) {
    let who = format!("{} on {}", solver.name(), problem.name());
    assert!(
        matches!(
            result.status,
            TerminationStatus::Optimal | TerminationStatus::LocallyOptimal
        ),
        "{who}: status {} ({})",
        result.status,
        result.raw_status
    );
    assert!(result.status.has_solution() && result.status.limit().is_none());
    assert_eq!(
        result.solver,
        solver.name(),
        "{who}: result names another solver"
    );
    assert_eq!(
        result.primal.len(),
        problem.num_variables(),
        "{who}: primal length"
    );
    for (j, (x, x_star)) in result.primal.iter().zip(optimum).enumerate() {
        assert!(
            (x - x_star).abs() <= tolerance * (1.0 + x_star.abs()),
            "{who}: x[{j}] = {x}, expected {x_star}"
        );
    }
    let f = result
        .objective
        .expect("an optimal result has an objective");
    assert!(
        (f - objective).abs() <= tolerance * (1.0 + objective.abs()),
        "{who}: objective {f}, expected {objective}"
    );
    assert!(
        (f - problem.objective(&result.primal)).abs() <= 1e-9 * (1.0 + f.abs()),
        "{who}: the reported objective is not the objective at the reported point"
    );
    let violation = result
        .max_violation
        .expect("an optimal result reports its violation");
    assert!(violation <= 1e-6, "{who}: max violation {violation}");
    assert!(
        (violation - max_violation(problem, &result.primal)).abs() <= 1e-9,
        "{who}: max_violation disagrees with the point"
    );
    assert!(result.wall_seconds >= 0.0 && result.wall_seconds.is_finite());
    check_multipliers(solver, problem, result);
}

/// Where a backend reports multipliers, they satisfy stationarity in glassbox's (Ipopt's)
/// convention, `grad f + J^T lambda - z_L + z_U = 0`, with `z_L, z_U >= 0`.
pub fn check_multipliers(solver: &dyn NlpSolver, problem: &dyn NlpProblem, result: &SolveResult) {
    let who = format!("{} on {}", solver.name(), problem.name());
    let (n, m) = (problem.num_variables(), problem.num_constraints());
    let Some(lambda) = &result.constraint_multipliers else {
        return;
    };
    assert_eq!(lambda.len(), m, "{who}: constraint multipliers length");
    let z_l = result
        .lower_bound_multipliers
        .clone()
        .unwrap_or(vec![0.0; n]);
    let z_u = result
        .upper_bound_multipliers
        .clone()
        .unwrap_or(vec![0.0; n]);
    assert_eq!(
        (z_l.len(), z_u.len()),
        (n, n),
        "{who}: bound multipliers length"
    );
    assert!(
        z_l.iter().chain(&z_u).all(|&z| z >= -1e-8),
        "{who}: negative bound multipliers {z_l:?} {z_u:?}"
    );
    let x = &result.primal;
    let mut r = vec![0.0; n];
    problem.gradient(x, &mut r);
    let structure = problem.jacobian_structure();
    let mut values = vec![0.0; structure.len()];
    problem.jacobian_values(x, &mut values);
    for (&(i, j), v) in structure.iter().zip(&values) {
        r[j] += lambda[i] * v;
    }
    for j in 0..n {
        r[j] += z_u[j] - z_l[j];
    }
    let worst = r.iter().fold(0f64, |w, v| w.max(v.abs()));
    assert!(
        worst <= 1e-5,
        "{who}: stationarity residual {worst} ({r:?})"
    );
}

// ---------------------------------------------------------------------------------------
// The checks.

/// (1) A bounded convex quadratic, optimum on two bounds; no general constraints.
pub fn bounded_quadratic(_: &BackendEntry, solver: &dyn NlpSolver) {
    let problem = BoundedQuadratic;
    let result = solve(solver, &problem, &SolveOptions::default());
    assert_solved(
        solver,
        &problem,
        &result,
        &BoundedQuadratic::OPTIMUM,
        BoundedQuadratic::OBJECTIVE,
        1e-6,
    );
}

/// (2) HS71 with the exact Hessian.
pub fn hs071_exact_hessian(_: &BackendEntry, solver: &dyn NlpSolver) {
    if !solver.capabilities().constraints {
        return;
    }
    let problem = Hs071;
    let result = solve(solver, &problem, &options_from(solver, &Hs071::START));
    assert_solved(
        solver,
        &problem,
        &result,
        &Hs071::OPTIMUM,
        Hs071::OBJECTIVE,
        1e-6,
    );
}

/// (2') HS71 with a quasi-Newton Hessian: forced through the raw option where the backend
/// has one, and chosen by the backend for a problem that gives no Hessian.
pub fn hs071_quasi_newton(entry: &BackendEntry, solver: &dyn NlpSolver) {
    if !solver.capabilities().constraints {
        return;
    }
    if has_option(entry, "hessian_approximation") {
        let mut options = options_from(solver, &Hs071::START);
        options.raw.insert(
            "hessian_approximation".into(),
            RawOptionValue::Str("limited-memory".into()),
        );
        let result = solve(solver, &Hs071, &options);
        assert_solved(
            solver,
            &Hs071,
            &result,
            &Hs071::OPTIMUM,
            Hs071::OBJECTIVE,
            1e-5,
        );
    }
    let problem = WithoutHessian(Hs071);
    let result = solve(solver, &problem, &options_from(solver, &Hs071::START));
    assert_solved(
        solver,
        &problem,
        &result,
        &Hs071::OPTIMUM,
        Hs071::OBJECTIVE,
        1e-5,
    );
}

/// (3) An equality constraint, with the multiplier's sign checked.
pub fn equality_constrained(_: &BackendEntry, solver: &dyn NlpSolver) {
    if !solver.capabilities().constraints {
        return;
    }
    let problem = EqualityConstrained;
    let result = solve(solver, &problem, &SolveOptions::default());
    assert_solved(
        solver,
        &problem,
        &result,
        &EqualityConstrained::OPTIMUM,
        EqualityConstrained::OBJECTIVE,
        1e-6,
    );
    if let Some(lambda) = &result.constraint_multipliers {
        assert!(
            (lambda[0] + 1.0).abs() < 1e-6,
            "multiplier {lambda:?}, expected [-1]"
        );
    }
}

/// (4) An inequality constraint active at the optimum.
pub fn inequality_constrained(_: &BackendEntry, solver: &dyn NlpSolver) {
    if !solver.capabilities().constraints {
        return;
    }
    let problem = InequalityConstrained;
    let result = solve(solver, &problem, &SolveOptions::default());
    assert_solved(
        solver,
        &problem,
        &result,
        &InequalityConstrained::OPTIMUM,
        InequalityConstrained::OBJECTIVE,
        1e-6,
    );
    // The constraint g <= 2 is active: its multiplier is positive, 1 in this convention.
    if let Some(lambda) = &result.constraint_multipliers {
        assert!(
            (lambda[0] - 1.0).abs() < 1e-5,
            "multiplier {lambda:?}, expected [1]"
        );
    }
}

/// (5) An infeasible problem is reported infeasible, with no solution.
pub fn infeasible(_: &BackendEntry, solver: &dyn NlpSolver) {
    if !solver.capabilities().constraints {
        return;
    }
    let result = solve(solver, &Infeasible, &SolveOptions::default());
    assert_eq!(
        result.status,
        TerminationStatus::Infeasible,
        "{} ({})",
        result.status,
        result.raw_status
    );
    assert!(!result.status.has_solution());
}

/// (6) An unbounded problem is reported unbounded, or at least not optimal.
pub fn unbounded(_: &BackendEntry, solver: &dyn NlpSolver) {
    if !solver.capabilities().constraints {
        return;
    }
    let result = solve(solver, &Unbounded, &SolveOptions::default());
    assert!(
        !matches!(
            result.status,
            TerminationStatus::Optimal | TerminationStatus::LocallyOptimal
        ),
        "unbounded problem reported {} ({})",
        result.status,
        result.raw_status
    );
}

/// (7) The wall-clock time limit stops a solve that cannot finish in time (every
/// evaluation sleeps), within the limit plus a margin.
pub fn time_limit(_: &BackendEntry, solver: &dyn NlpSolver) {
    let problem = Rosenbrock::slow(2, Duration::from_millis(40));
    let limit = 0.5;
    let options = SolveOptions {
        time_limit: Some(limit),
        ..options_from(solver, &problem.start())
    };
    let clock = Instant::now();
    let result = solve(solver, &problem, &options);
    let elapsed = clock.elapsed().as_secs_f64();
    assert!(
        elapsed <= limit * 1.2 + 1.0,
        "the solve took {elapsed} s with a limit of {limit} s"
    );
    assert_eq!(
        result.status.limit(),
        Some(Limit::Time),
        "{} ({})",
        result.status,
        result.raw_status
    );
    // The problem is unconstrained: whatever point came back is feasible.
    assert_eq!(
        result.status,
        TerminationStatus::FeasibleAtLimit(Limit::Time)
    );
    assert_eq!(result.primal.len(), 2);
    assert!(result.wall_seconds <= elapsed + 1e-3);
}

/// (8) The iteration limit.
pub fn iteration_limit(_: &BackendEntry, solver: &dyn NlpSolver) {
    let problem = Rosenbrock::new(2);
    let options = SolveOptions {
        iteration_limit: Some(3),
        ..options_from(solver, &problem.start())
    };
    let result = solve(solver, &problem, &options);
    assert_eq!(
        result.status.limit(),
        Some(Limit::Iteration),
        "{} ({})",
        result.status,
        result.raw_status
    );
    assert_eq!(
        result.status,
        TerminationStatus::FeasibleAtLimit(Limit::Iteration)
    );
    assert!(result.iterations <= 3, "{} iterations", result.iterations);
    assert_eq!(result.primal.len(), 2);
}

/// (9) A warm start from a solution (primal and multipliers) converges at once.
pub fn warm_start(_: &BackendEntry, solver: &dyn NlpSolver) {
    let caps = solver.capabilities();
    if !(caps.warm_start && caps.constraints) {
        return;
    }
    let cold = solve(solver, &Hs071, &options_from(solver, &Hs071::START));
    assert_solved(
        solver,
        &Hs071,
        &cold,
        &Hs071::OPTIMUM,
        Hs071::OBJECTIVE,
        1e-6,
    );
    let warm_start = if caps.warm_start_duals {
        cold.warm_start()
    } else {
        WarmStart::primal(cold.primal.clone())
    };
    let warm = solve(
        solver,
        &Hs071,
        &SolveOptions::default().with_warm_start(Some(warm_start)),
    );
    assert_solved(
        solver,
        &Hs071,
        &warm,
        &Hs071::OPTIMUM,
        Hs071::OBJECTIVE,
        1e-6,
    );
    if caps.warm_start_duals {
        assert!(
            warm.iterations <= 3,
            "warm start took {} iterations (cold: {})",
            warm.iterations,
            cold.iterations
        );
    }
    assert!(warm.iterations <= cold.iterations);
}

/// (10) A warm start of the wrong dimension is an error, not a crash or a silent fix; so
/// is one with multipliers of the wrong dimension.
pub fn warm_start_mismatch(_: &BackendEntry, solver: &dyn NlpSolver) {
    let options = SolveOptions::default().with_warm_start(Some(WarmStart::primal(vec![0.0; 3])));
    let err = solver
        .solve(&BoundedQuadratic, &options)
        .expect_err("a warm start of 3 values for 2 variables must be refused");
    eprintln!("{}: {err}", solver.name());
    if solver.capabilities().warm_start_duals && solver.capabilities().constraints {
        let bad = WarmStart {
            constraint_multipliers: Some(vec![0.0; 5]),
            ..WarmStart::primal(Hs071::START.to_vec())
        };
        let err = solver
            .solve(&Hs071, &SolveOptions::default().with_warm_start(Some(bad)))
            .expect_err("5 constraint multipliers for 2 constraints must be refused");
        eprintln!("{}: {err}", solver.name());
    }
}

/// (11) Options are checked: an unknown or ill-typed raw option is an error naming it,
/// through the registry (the built-in one with `entry` registered, as an extension
/// registers its backend) and through the backend itself.
pub fn raw_options_checked(entry: &BackendEntry, solver: &dyn NlpSolver) {
    let registry = Registry::builtin().with_backend(*entry);
    let mut options = SolveOptions::default();
    options
        .raw
        .insert("no_such_option".into(), RawOptionValue::Int(1));
    let err = registry
        .nlp_solver(entry.name, &options)
        .err()
        .expect("an unknown raw option must be refused");
    assert!(err.to_string().contains("no_such_option"), "{err}");
    let err = solver
        .solve(&BoundedQuadratic, &options)
        .expect_err("the backend must refuse an unknown raw option itself too");
    assert!(err.to_string().contains("no_such_option"), "{err}");

    let Some(spec) = entry.options.first() else {
        return;
    };
    let wrong = match spec.kind {
        OptionKind::Int | OptionKind::Float => RawOptionValue::Str("not a number".into()),
        OptionKind::Choice(_) => RawOptionValue::Str("no-such-choice".into()),
        OptionKind::Bool => RawOptionValue::Int(3),
    };
    let mut options = SolveOptions::default();
    options.raw.insert(spec.name.into(), wrong);
    let err = registry
        .nlp_solver(entry.name, &options)
        .err()
        .expect("an ill-typed raw option must be refused");
    assert!(err.to_string().contains(spec.name), "{err}");
    let err = solver
        .solve(&BoundedQuadratic, &options)
        .expect_err("the backend must refuse an ill-typed raw option itself too");
    assert!(err.to_string().contains(spec.name), "{err}");
}

/// (12) A NaN objective is a numerical error, not a solution and not a crash.
pub fn nan_objective(_: &BackendEntry, solver: &dyn NlpSolver) {
    struct NanObjective;
    impl NlpProblem for NanObjective {
        fn num_variables(&self) -> usize {
            1
        }
        fn num_constraints(&self) -> usize {
            0
        }
        fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
            (vec![-1.0], vec![1.0])
        }
        fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
            (vec![], vec![])
        }
        fn objective(&self, _x: &[f64]) -> f64 {
            f64::NAN
        }
        fn gradient(&self, _x: &[f64], grad: &mut [f64]) {
            grad[0] = f64::NAN;
        }
        fn constraints(&self, _x: &[f64], _g: &mut [f64]) {}
        fn jacobian_structure(&self) -> Vec<(usize, usize)> {
            vec![]
        }
        fn jacobian_values(&self, _x: &[f64], _values: &mut [f64]) {}
        fn name(&self) -> String {
            "nan_objective".into()
        }
    }
    let result = solve(solver, &NanObjective, &SolveOptions::default());
    assert_eq!(
        result.status,
        TerminationStatus::NumericalError,
        "{} ({})",
        result.status,
        result.raw_status
    );
}

/// (13) A malformed problem is an error before the backend runs.
pub fn malformed_problem(_: &BackendEntry, solver: &dyn NlpSolver) {
    struct BadBounds;
    impl NlpProblem for BadBounds {
        fn num_variables(&self) -> usize {
            2
        }
        fn num_constraints(&self) -> usize {
            0
        }
        fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
            (vec![0.0], vec![1.0])
        }
        fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
            (vec![], vec![])
        }
        fn objective(&self, _x: &[f64]) -> f64 {
            0.0
        }
        fn gradient(&self, _x: &[f64], grad: &mut [f64]) {
            grad.fill(0.0);
        }
        fn constraints(&self, _x: &[f64], _g: &mut [f64]) {}
        fn jacobian_structure(&self) -> Vec<(usize, usize)> {
            vec![]
        }
        fn jacobian_values(&self, _x: &[f64], _values: &mut [f64]) {}
    }
    solver
        .solve(&BadBounds, &SolveOptions::default())
        .expect_err("bounds of the wrong length must be refused");
}

/// (Backends that [`needs_tensor_form`] only.) A problem without a tensor form of its
/// objective is refused with a capability error.
pub fn refuses_problems_without_a_tensor_form(entry: &BackendEntry, solver: &dyn NlpSolver) {
    let error = solver
        .solve(&BoundedQuadratic, &SolveOptions::default())
        .expect_err("a problem without a tensor objective must be refused");
    assert!(
        matches!(error, GlassboxError::Capability { .. }),
        "{}: {error}",
        entry.name
    );
    eprintln!("{}: {error}", entry.name);
}
