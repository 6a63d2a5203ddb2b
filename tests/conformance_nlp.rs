//! The NLP conformance suite: small problems with known answers that every NLP backend
//! must pass. Each check is a function of `&dyn NlpSolver` (and the backend's registry
//! entry, for its capabilities and raw options); each `#[test]` runs one check against
//! every NLP backend the registry lists, so a new backend (argmin, torch, ...) is covered
//! as soon as it is registered. Checks that need a capability a backend lacks (general
//! constraints, warm starts) are skipped for it; a backend must then refuse such requests
//! with an error, which is checked too.
//!
//! Run with `cargo test --test conformance_nlp`; add `-- --nocapture` to see every
//! backend's status and raw status on each problem.

#[path = "common/nlp_problems.rs"]
mod nlp_problems;

use glassbox::nlp::{check, max_violation};
use glassbox::registry::{self, BackendEntry, Constructor};
use glassbox::{
    Limit, NlpProblem, NlpSolver, RawOptionValue, SolveOptions, SolveResult, TerminationStatus,
    WarmStart,
};
use nlp_problems::*;
use std::time::{Duration, Instant};

/// Backends that solve only problems with a tensor form of their objective
/// (`NlpProblem::tensor_objective`), which the problems here do not give: they are left
/// out of the checks below (`tests/torch_backend.rs` runs them on tensor forms of these
/// problems) and must refuse these problems with a capability error (checked below).
const NEEDS_TENSOR_FORM: &[&str] = &["torch"];

/// Every NLP backend of this build that solves any NLP, created through the registry.
fn nlp_backends() -> Vec<(BackendEntry, Box<dyn NlpSolver>)> {
    registry::backends()
        .into_iter()
        .filter(|entry| !NEEDS_TENSOR_FORM.contains(&entry.name))
        .filter_map(|entry| match entry.constructor {
            Constructor::Nlp(create) => Some((entry, create())),
            Constructor::Milp(_) | Constructor::TreeSearch(_) => None,
        })
        .collect()
}

#[test]
fn tensor_backends_refuse_problems_without_a_tensor_form() {
    for entry in registry::backends() {
        let (true, Constructor::Nlp(create)) =
            (NEEDS_TENSOR_FORM.contains(&entry.name), entry.constructor)
        else {
            continue;
        };
        let error = create()
            .solve(&BoundedQuadratic, &SolveOptions::default())
            .expect_err("a problem without a tensor objective must be refused");
        assert!(
            matches!(error, glassbox::GlassboxError::Capability { .. }),
            "{}: {error}",
            entry.name
        );
        eprintln!("{}: {error}", entry.name);
    }
}

/// Runs `check` against every NLP backend.
fn for_each_backend(check: fn(&BackendEntry, &dyn NlpSolver)) {
    for (entry, solver) in nlp_backends() {
        check(&entry, solver.as_ref());
    }
}

fn solve(solver: &dyn NlpSolver, problem: &dyn NlpProblem, options: &SolveOptions) -> SolveResult {
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
fn options_from(solver: &dyn NlpSolver, x0: &[f64]) -> SolveOptions {
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
fn assert_solved(
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
fn check_multipliers(solver: &dyn NlpSolver, problem: &dyn NlpProblem, result: &SolveResult) {
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
fn bounded_quadratic(_: &BackendEntry, solver: &dyn NlpSolver) {
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
fn hs071_exact_hessian(_: &BackendEntry, solver: &dyn NlpSolver) {
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
fn hs071_quasi_newton(entry: &BackendEntry, solver: &dyn NlpSolver) {
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
fn equality_constrained(_: &BackendEntry, solver: &dyn NlpSolver) {
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
fn inequality_constrained(_: &BackendEntry, solver: &dyn NlpSolver) {
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
fn infeasible(_: &BackendEntry, solver: &dyn NlpSolver) {
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
fn unbounded(_: &BackendEntry, solver: &dyn NlpSolver) {
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
fn time_limit(_: &BackendEntry, solver: &dyn NlpSolver) {
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
fn iteration_limit(_: &BackendEntry, solver: &dyn NlpSolver) {
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
fn warm_start(_: &BackendEntry, solver: &dyn NlpSolver) {
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
fn warm_start_mismatch(_: &BackendEntry, solver: &dyn NlpSolver) {
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
/// through the registry and through the backend itself.
fn raw_options_checked(entry: &BackendEntry, solver: &dyn NlpSolver) {
    let mut options = SolveOptions::default();
    options
        .raw
        .insert("no_such_option".into(), RawOptionValue::Int(1));
    let err = registry::nlp_solver(entry.name, &options)
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
        glassbox::options::OptionKind::Int | glassbox::options::OptionKind::Float => {
            RawOptionValue::Str("not a number".into())
        }
        glassbox::options::OptionKind::Choice(_) => RawOptionValue::Str("no-such-choice".into()),
        glassbox::options::OptionKind::Bool => RawOptionValue::Int(3),
    };
    let mut options = SolveOptions::default();
    options.raw.insert(spec.name.into(), wrong);
    let err = registry::nlp_solver(entry.name, &options)
        .err()
        .expect("an ill-typed raw option must be refused");
    assert!(err.to_string().contains(spec.name), "{err}");
    let err = solver
        .solve(&BoundedQuadratic, &options)
        .expect_err("the backend must refuse an ill-typed raw option itself too");
    assert!(err.to_string().contains(spec.name), "{err}");
}

/// A NaN objective is a numerical error, not a solution and not a crash.
fn nan_objective(_: &BackendEntry, solver: &dyn NlpSolver) {
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

/// A malformed problem is an error before the backend runs.
fn malformed_problem(_: &BackendEntry, solver: &dyn NlpSolver) {
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

// ---------------------------------------------------------------------------------------
// The tests: one per check, each over every NLP backend.

#[test]
fn every_build_with_ipopt_registers_it() {
    let names: Vec<&str> = nlp_backends().iter().map(|(e, _)| e.name).collect();
    if cfg!(feature = "ipopt") {
        assert!(names.contains(&"ipopt"), "NLP backends: {names:?}");
    }
    for (entry, solver) in nlp_backends() {
        assert_eq!(entry.name, solver.name());
        assert_eq!(entry.capabilities, solver.capabilities());
        assert!(
            !entry.capabilities.integers,
            "{}: an NLP backend with integers",
            entry.name
        );
    }
}

#[test]
fn conformance_bounded_quadratic() {
    for_each_backend(bounded_quadratic);
}

#[test]
fn conformance_hs071_exact_hessian() {
    for_each_backend(hs071_exact_hessian);
}

#[test]
fn conformance_hs071_quasi_newton() {
    for_each_backend(hs071_quasi_newton);
}

#[test]
fn conformance_equality_constrained() {
    for_each_backend(equality_constrained);
}

#[test]
fn conformance_inequality_constrained() {
    for_each_backend(inequality_constrained);
}

#[test]
fn conformance_infeasible() {
    for_each_backend(infeasible);
}

#[test]
fn conformance_unbounded() {
    for_each_backend(unbounded);
}

#[test]
fn conformance_time_limit() {
    for_each_backend(time_limit);
}

#[test]
fn conformance_iteration_limit() {
    for_each_backend(iteration_limit);
}

#[test]
fn conformance_warm_start() {
    for_each_backend(warm_start);
}

#[test]
fn conformance_warm_start_mismatch() {
    for_each_backend(warm_start_mismatch);
}

#[test]
fn conformance_raw_options_checked() {
    for_each_backend(raw_options_checked);
}

#[test]
fn conformance_nan_objective() {
    for_each_backend(nan_objective);
}

#[test]
fn conformance_malformed_problem() {
    for_each_backend(malformed_problem);
}

/// A backend with raw options added to every solve (those the caller set win), so that the
/// checks run against a variant of a backend.
#[derive(Clone)]
struct WithRaw {
    solver: Box<dyn NlpSolver>,
    raw: Vec<(&'static str, RawOptionValue)>,
}

impl NlpSolver for WithRaw {
    fn name(&self) -> &str {
        self.solver.name()
    }
    fn capabilities(&self) -> glassbox::solver::Capabilities {
        self.solver.capabilities()
    }
    fn solve(
        &self,
        problem: &dyn NlpProblem,
        options: &SolveOptions,
    ) -> glassbox::Result<SolveResult> {
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

/// The whole suite again for every backend with a barrier path (raw `path = "barrier"`:
/// the gradient backend), which changes where the projected methods start.
#[test]
fn conformance_barrier_path() {
    let checks: [fn(&BackendEntry, &dyn NlpSolver); 14] = [
        bounded_quadratic,
        hs071_exact_hessian,
        hs071_quasi_newton,
        equality_constrained,
        inequality_constrained,
        infeasible,
        unbounded,
        time_limit,
        iteration_limit,
        warm_start,
        warm_start_mismatch,
        raw_options_checked,
        nan_objective,
        malformed_problem,
    ];
    let mut ran = 0;
    for (entry, solver) in nlp_backends() {
        let Some(spec) = entry.options.iter().find(|o| o.name == "path") else {
            continue;
        };
        assert!(
            matches!(spec.kind, glassbox::options::OptionKind::Choice(c) if c.contains(&"barrier")),
            "{}: option path without the choice barrier",
            entry.name
        );
        let variant = WithRaw {
            solver,
            raw: vec![("path", RawOptionValue::Str("barrier".into()))],
        };
        for check in checks {
            check(&entry, &variant);
        }
        ran += 1;
    }
    assert!(ran > 0 || registry::backends().iter().all(|e| e.name != "lbfgs"));
}

#[test]
fn unknown_solver_lists_the_known_ones() {
    let err = registry::nlp_solver("no-such-solver", &SolveOptions::default())
        .err()
        .expect("an unknown solver name must be refused");
    let message = err.to_string();
    assert!(message.contains("no-such-solver"), "{message}");
    for entry in registry::backends() {
        assert!(
            message.contains(entry.name),
            "{message} does not list {}",
            entry.name
        );
    }
}

/// The derivative checks formulations rely on accept the suite's problems (which also
/// checks the suite itself) and catch a wrong derivative.
#[test]
fn derivative_checks_pass_on_the_suite_problems() {
    let hs071_points: [&[f64]; 3] = [&Hs071::START, &Hs071::OPTIMUM, &[2.3, 1.7, 4.1, 3.3]];
    let lambdas: [&[f64]; 3] = [&[0.0, 0.0], &[1.0, -2.0], &[-0.3, 0.7]];
    for x in hs071_points {
        assert!(check::gradient_error(&Hs071, x, 1e-6) < 1e-6);
        assert!(check::jacobian_error(&Hs071, x, 1e-6) < 1e-6);
        for lambda in lambdas {
            for sigma in [1.0, 0.5, 0.0] {
                let e = check::hessian_error(&Hs071, x, sigma, lambda, 1e-5).unwrap();
                assert!(e < 1e-5, "HS71 Hessian error {e} at {x:?}");
            }
        }
    }
    let problems: Vec<(Box<dyn NlpProblem>, Vec<f64>)> = vec![
        (Box::new(BoundedQuadratic), vec![0.3, 0.9]),
        (Box::new(EqualityConstrained), vec![0.3, -1.9]),
        (Box::new(InequalityConstrained), vec![1.3, 0.4]),
        (Box::new(Infeasible), vec![0.4]),
        (Box::new(Unbounded), vec![3.0, -0.5]),
        (Box::new(Rosenbrock::new(5)), vec![-1.2, 1.0, 0.3, 0.7, 1.1]),
    ];
    for (problem, x) in &problems {
        let problem = problem.as_ref();
        let m = problem.num_constraints();
        assert!(
            check::gradient_error(problem, x, 1e-6) < 1e-6,
            "{}",
            problem.name()
        );
        assert!(
            check::jacobian_error(problem, x, 1e-6) < 1e-6,
            "{}",
            problem.name()
        );
        let lambda = vec![0.7; m];
        let e = check::hessian_error(problem, x, 1.3, &lambda, 1e-5).unwrap();
        assert!(e < 1e-5, "{}: Hessian error {e}", problem.name());
    }
    assert!(
        check::hessian_error(&WithoutHessian(Hs071), &Hs071::START, 1.0, &[0.0; 2], 1e-5).is_none()
    );

    // A wrong derivative is caught.
    struct WrongGradient;
    impl NlpProblem for WrongGradient {
        fn num_variables(&self) -> usize {
            1
        }
        fn num_constraints(&self) -> usize {
            0
        }
        fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
            (vec![f64::NEG_INFINITY], vec![f64::INFINITY])
        }
        fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
            (vec![], vec![])
        }
        fn objective(&self, x: &[f64]) -> f64 {
            x[0].powi(3)
        }
        fn gradient(&self, x: &[f64], grad: &mut [f64]) {
            grad[0] = 2.0 * x[0] * x[0];
        }
        fn constraints(&self, _x: &[f64], _g: &mut [f64]) {}
        fn jacobian_structure(&self) -> Vec<(usize, usize)> {
            vec![]
        }
        fn jacobian_values(&self, _x: &[f64], _values: &mut [f64]) {}
    }
    assert!(check::gradient_error(&WrongGradient, &[1.5], 1e-6) > 0.1);
}
