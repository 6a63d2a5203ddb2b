//! The augmented Lagrangian outer loop (ALGENCAN's safeguarded PHR method, Andreani,
//! Birgin, Martínez and Schuverdt 2007): each outer iteration minimizes the subproblem of
//! [`super::subproblem`] over the variable bounds with an inner method run by argmin's
//! `Executor`, then updates the multipliers (`lambda <- rho (t - P(t))`, kept within
//! +-1e20) and multiplies the penalty by `penalty_growth` when the joint measure of
//! infeasibility and complementarity did not fall below half its previous value. The inner
//! tolerance starts at 1e-3 (relative) and shrinks tenfold per outer iteration down to the
//! final one. With no general constraints there is a single inner solve.
//!
//! Statuses:
//! - locally optimal: violation and complementarity <= `constraint_tolerance` and the
//!   projected gradient of the Lagrangian <= `tolerance * max(1, |grad f|_inf)`; also
//!   ("acceptable") when the inner method can make no more progress with that gradient
//!   within 100 times the tolerance and the point is feasible;
//! - infeasible: for three outer iterations in a row the violation did not fall by 1% while
//!   the point is a stationary point of the squared violation (projected gradient of
//!   `1/2 |g - P(g)|^2`, scaled by the largest residual, <= 1e-6): a local certificate;
//! - unbounded: the objective fell below -1e20 at a feasible point;
//! - feasible / no solution at the time or iteration limit (or, when no progress is possible
//!   short of the tolerance, at limit `Other`), by the violation at the point returned;
//! - numerical error: a panic or a non-finite value where a finite one is needed, or the
//!   penalty exceeding 1e20.
//!
//! Depends on the core's result types and on argmin.

use super::newton::{self, ProjectedNewton};
use super::projected::{Common, InnerState, Pairs, ProjectedLbfgs, Spg, Stop, UNBOUNDED_BELOW};
use super::subproblem::{Nlp, Point, Subproblem};
use super::{Method, Settings, NAME};
use argmin::core::observers::{Observe, ObserverMode};
use argmin::core::{Error, Executor, OptimizationResult, Solver, State, TerminationReason, KV};
use glassbox_core::{Limit, SolveResult, TerminationStatus};
use std::time::Instant;

/// Multipliers are kept within +-this in the subproblems (ALGENCAN's safeguard).
const MULTIPLIER_MAX: f64 = 1e20;
/// A penalty above this ends the solve (so raw `penalty_initial` may not exceed it).
pub(super) const PENALTY_MAX: f64 = 1e20;
/// The penalty grows unless the infeasibility-complementarity measure falls below this
/// fraction of its previous value.
const DECREASE: f64 = 0.5;
/// The first inner tolerance, relative (the final one where smaller).
const FIRST_INNER_TOLERANCE: f64 = 1e-3;
/// Factor on the tolerance of an "acceptable" point.
const ACCEPTABLE: f64 = 100.0;
/// Scaled projected gradient of the squared violation under which an infeasible point is
/// stationary for the violation.
const INFEASIBLE_STATIONARITY: f64 = 1e-6;
/// Outer iterations in a row without a 1% decrease of the violation before infeasibility
/// can be declared.
const STALLED_OUTER: u32 = 3;

/// How far a point is from satisfying the KKT conditions, with given multipliers.
struct Assessment {
    violation: f64,
    complementarity: f64,
    stationarity: f64,
    /// `max(1, |grad f|_inf)`, the scale of the stationarity tolerance.
    scale: f64,
    multipliers: Vec<f64>,
}

impl Assessment {
    /// The measures at a differentiated point: `multipliers` for stationarity, the
    /// complementarity measure with the subproblem's `lambda` and `rho`.
    fn new(nlp: &Nlp, point: &Point, multipliers: Vec<f64>, lambda: &[f64], rho: f64) -> Self {
        let r = nlp.lagrangian_gradient(point, &multipliers);
        let (grad_f, _) = point.derivatives.as_ref().expect("differentiated");
        Assessment {
            violation: nlp.max_violation(&point.x, &point.g),
            complementarity: nlp.complementarity(&point.g, lambda, rho),
            stationarity: nlp.projected_step(&point.x, &r).1,
            scale: grad_f.iter().fold(1f64, |m, v| m.max(v.abs())),
            multipliers,
        }
    }

    fn feasible(&self, settings: &Settings) -> bool {
        self.violation <= settings.constraint_tolerance
            && self.complementarity <= settings.constraint_tolerance
    }

    fn optimal(&self, settings: &Settings, factor: f64) -> bool {
        self.feasible(settings) && self.stationarity <= factor * settings.tolerance * self.scale
    }

    fn summary(&self) -> String {
        format!(
            "violation {:.2e}, complementarity {:.2e}, stationarity {:.2e}",
            self.violation, self.complementarity, self.stationarity
        )
    }
}

/// Logs the inner solves: one line per outer iteration (verbosity >= 2) when the inner
/// solve ends, and one per inner iteration (verbosity >= 3).
struct Log {
    outer: u64,
    rho: f64,
    verbosity: u8,
}

impl Observe<InnerState> for Log {
    fn observe_iter(&mut self, state: &InnerState, kv: &KV) -> Result<(), Error> {
        if self.verbosity >= 3 {
            let get = |key: &str| kv.get(key).and_then(|v| v.get_float()).unwrap_or(f64::NAN);
            eprintln!(
                "{NAME}:   inner {:>6}  L {:.10e}  |pg| {:.2e}  step {:.2e}",
                state.get_iter(),
                state.get_cost(),
                get("projected_gradient"),
                get("step")
            );
        }
        Ok(())
    }

    fn observe_final(&mut self, state: &InnerState) -> Result<(), Error> {
        eprintln!(
            "{NAME}: outer {:>3}  rho {:.1e}  {:>6} inner iterations  L {:.10e}  ({})",
            self.outer,
            self.rho,
            state.get_iter(),
            state.get_cost(),
            state
                .get_termination_reason()
                .map_or("running", |r| r.text())
        );
        Ok(())
    }
}

/// What an inner solve returned.
struct Inner {
    x: Vec<f64>,
    iterations: u64,
    reason: Option<TerminationReason>,
    stop: Option<Stop>,
    /// The last point differentiated (normally at `x`).
    last: Option<Point>,
    /// L-BFGS's correction pairs at the end.
    pairs: Option<Pairs>,
    /// The iterations of the projected Newton stage (included in `iterations`).
    newton_iterations: u64,
}

/// The subproblem's data for one inner solve.
struct InnerRequest<'a> {
    start: Point,
    lambda: Vec<f64>,
    rho: f64,
    tolerance: f64,
    max_iters: u64,
    deadline: Option<Instant>,
    outer: u64,
    nlp: &'a Nlp<'a>,
    /// L-BFGS correction pairs to start from.
    pairs: Option<Pairs>,
}

/// Whether the projected Newton stage follows the first-order one: asked for (the default),
/// the problem gives a Hessian, and it is small enough for a dense one.
fn refines(settings: &Settings, nlp: &Nlp) -> bool {
    settings.refine && nlp.hessian.is_some() && nlp.n <= newton::MAX_VARIABLES
}

/// One inner solve: the first-order method and, when [`refines`] and it stopped short of
/// the tolerance (no progress, or `refine_after` iterations), projected Newton from its
/// point, within the same iteration budget and deadline.
fn run_inner(settings: &Settings, mut request: InnerRequest) -> Result<Inner, String> {
    let nlp = request.nlp;
    let refine = refines(settings, nlp);
    let max_iters = request.max_iters;
    if refine {
        request.max_iters = max_iters.min(settings.refine_after);
    }
    let (lambda, rho, tolerance, deadline, outer) = (
        request.lambda.clone(),
        request.rho,
        request.tolerance,
        request.deadline,
        request.outer,
    );
    // refine_after = 0: projected Newton from the start, no first-order stage.
    let mut first = if refine && settings.refine_after == 0 {
        Inner {
            x: request.start.x.clone(),
            iterations: 0,
            reason: Some(TerminationReason::MaxItersReached),
            stop: None,
            last: Some(request.start),
            pairs: request.pairs,
            newton_iterations: 0,
        }
    } else {
        run_first_order(settings, request)?
    };
    let stopped_short = match &first.stop {
        Some(Stop::NoProgress(_)) => true,
        None => first.reason == Some(TerminationReason::MaxItersReached),
        _ => false,
    };
    if !refine || !stopped_short || first.iterations >= max_iters {
        return Ok(first);
    }
    let start = match first
        .last
        .take()
        .filter(|p| p.x == first.x && p.derivatives.is_some())
    {
        Some(p) => p,
        None => match nlp.evaluate(&first.x) {
            Ok(p) => p,
            Err(message) => {
                first.stop = Some(Stop::EvaluationFailed(message));
                return Ok(first);
            }
        },
    };
    let common = Common::new(
        nlp.x_lower.clone(),
        nlp.x_upper.clone(),
        tolerance,
        deadline,
    )
    .with_interior(nlp.interior_bounds())
    .with_interrupt(settings.interrupt.clone())
    .with_rounding(nlp.problem.objective_rounding());
    let request = InnerRequest {
        start,
        lambda,
        rho,
        tolerance,
        max_iters: max_iters - first.iterations,
        deadline,
        outer,
        nlp,
        pairs: None,
    };
    let (second, _) = execute(settings, request, ProjectedNewton::new(common), |s| {
        s.common.stop.clone()
    })?;
    let stop = match second.stop {
        Some(Stop::NoProgress(why)) => Some(Stop::NoProgress(format!(
            "projected Newton after {} first-order iterations: {why}",
            first.iterations
        ))),
        other => other,
    };
    Ok(Inner {
        iterations: first.iterations + second.iterations,
        newton_iterations: second.iterations,
        stop,
        pairs: first.pairs,
        ..second
    })
}

/// The first-order stage of an inner solve (the configured `method`).
fn run_first_order(settings: &Settings, mut request: InnerRequest) -> Result<Inner, String> {
    let nlp = request.nlp;
    let common = Common::new(
        nlp.x_lower.clone(),
        nlp.x_upper.clone(),
        request.tolerance,
        request.deadline,
    )
    .with_interior(nlp.interior_bounds())
    .with_interrupt(settings.interrupt.clone())
    .with_rounding(nlp.problem.objective_rounding());
    match settings.method {
        Method::Lbfgs => {
            let mut solver = ProjectedLbfgs::new(common, settings.memory);
            if let Some(pairs) = request.pairs.take() {
                solver = solver.with_memory(pairs);
            }
            let (mut inner, solver) =
                execute(settings, request, solver, |s| s.common.stop.clone())?;
            inner.pairs = Some(solver.into_memory());
            Ok(inner)
        }
        Method::Spg => {
            let (inner, _) = execute(settings, request, Spg::new(common), |s| {
                s.common.stop.clone()
            })?;
            Ok(inner)
        }
    }
}

fn execute<'a, S>(
    settings: &Settings,
    request: InnerRequest<'a>,
    solver: S,
    stop_of: fn(&S) -> Option<Stop>,
) -> Result<(Inner, S), String>
where
    S: Solver<Subproblem<'a>, InnerState>,
{
    let x0 = request.start.x.clone();
    let subproblem = Subproblem::new(
        request.nlp,
        request.lambda,
        request.rho,
        Some(request.start),
    );
    let max_iters = request.max_iters;
    let mut executor = Executor::new(subproblem, solver)
        .configure(|state| state.param(x0).max_iters(max_iters))
        .ctrlc(false);
    if let Some(deadline) = request.deadline {
        executor = executor.timeout(deadline.saturating_duration_since(Instant::now()));
    }
    if settings.verbosity >= 2 {
        let log = Log {
            outer: request.outer,
            rho: request.rho,
            verbosity: settings.verbosity,
        };
        executor = executor.add_observer(log, ObserverMode::Always);
    }
    let OptimizationResult {
        mut problem,
        solver,
        state,
    } = executor.run().map_err(|e| e.to_string())?;
    let inner = Inner {
        x: state.get_param().cloned().unwrap_or_default(),
        iterations: state.get_iter(),
        reason: state.get_termination_reason().cloned(),
        stop: stop_of(&solver),
        last: problem.take_problem().and_then(Subproblem::into_last),
        pairs: None,
        newton_iterations: 0,
    };
    Ok((inner, solver))
}

/// Builds results.
struct Finisher<'a> {
    nlp: &'a Nlp<'a>,
    start: Instant,
    iterations: u64,
    /// The part of `iterations` spent in the projected Newton stage.
    newton_iterations: u64,
    constraint_tolerance: f64,
}

impl Finisher<'_> {
    /// A result at `point` (differentiated, or `None` when there is no usable point).
    fn result(
        &self,
        status: TerminationStatus,
        raw_status: String,
        point: Option<&Point>,
        assessment: Option<&Assessment>,
    ) -> SolveResult {
        let nlp = self.nlp;
        let raw_status = if self.newton_iterations > 0 {
            format!(
                "{raw_status} [{} of the {} iterations by projected Newton]",
                self.newton_iterations, self.iterations
            )
        } else {
            raw_status
        };
        let mut result = SolveResult::failed(NAME, status, raw_status);
        if let Some(point) = point {
            result.primal = point.x.clone();
            result.objective = Some(point.f).filter(|f| f.is_finite());
            result.max_violation = Some(nlp.max_violation(&point.x, &point.g));
            if let Some(a) = assessment.filter(|_| point.finite_derivatives()) {
                let r = nlp.lagrangian_gradient(point, &a.multipliers);
                let (z_lower, z_upper) = nlp.bound_multipliers(&point.x, &r);
                result.constraint_multipliers = Some(a.multipliers.clone());
                result.lower_bound_multipliers = Some(z_lower);
                result.upper_bound_multipliers = Some(z_upper);
            }
        }
        result.iterations = self.iterations;
        result.wall_seconds = self.start.elapsed().as_secs_f64();
        result
    }

    /// A result at a limit: feasible or not by the violation at the point.
    fn at_limit(&self, limit: Limit, why: &str, point: &Point, a: &Assessment) -> SolveResult {
        let status = if a.violation <= self.constraint_tolerance {
            TerminationStatus::FeasibleAtLimit(limit)
        } else {
            TerminationStatus::NoSolutionAtLimit(limit)
        };
        self.result(
            status,
            format!("{why} ({})", a.summary()),
            Some(point),
            Some(a),
        )
    }
}

/// Solves from `x0` (projected onto the bounds) and, when given, the constraint
/// multipliers `lambda0`. `start` is when the solve began.
pub(crate) fn solve(
    nlp: &Nlp,
    settings: &Settings,
    mut x0: Vec<f64>,
    lambda0: Option<Vec<f64>>,
    start: Instant,
) -> SolveResult {
    let deadline = settings.deadline(start);
    let mut done = Finisher {
        nlp,
        start,
        iterations: 0,
        newton_iterations: 0,
        constraint_tolerance: settings.constraint_tolerance,
    };
    nlp.project(&mut x0);
    let mut point = match nlp.evaluate(&x0) {
        Ok(point) => point,
        Err(message) => {
            return done.result(TerminationStatus::NumericalError, message, None, None);
        }
    };
    if !(point.finite_values() && point.finite_derivatives()) {
        let message = "non-finite objective, constraints or derivatives at the starting point";
        return done.result(
            TerminationStatus::NumericalError,
            message.into(),
            Some(&point),
            None,
        );
    }
    let m = nlp.m;
    let warm_duals = lambda0.is_some();
    let clamp_multipliers = |v: Vec<f64>| -> Vec<f64> {
        v.into_iter()
            .map(|l| l.clamp(-MULTIPLIER_MAX, MULTIPLIER_MAX))
            .collect()
    };
    let mut lambda = clamp_multipliers(lambda0.unwrap_or_else(|| vec![0.0; m]));
    let mut rho = settings
        .penalty_initial
        .unwrap_or_else(|| nlp.initial_penalty(&point));

    // A start that already satisfies the KKT conditions (with its own multipliers) is done.
    let a = Assessment::new(nlp, &point, lambda.clone(), &lambda, rho);
    if a.optimal(settings, 1.0) {
        let why = format!("the starting point is a KKT point ({})", a.summary());
        return done.result(
            TerminationStatus::LocallyOptimal,
            why,
            Some(&point),
            Some(&a),
        );
    }

    let mut inner_tolerance = if warm_duals || m == 0 {
        settings.tolerance
    } else {
        settings.tolerance.max(FIRST_INNER_TOLERANCE)
    };
    let mut previous_complementarity = f64::INFINITY;
    let mut best_violation = a.violation;
    let mut stalled = 0;
    let mut last = a;
    let mut pairs: Option<Pairs> = None;
    let mut outer = 0u64;
    loop {
        outer += 1;
        if settings.out_of_time(deadline) {
            let (limit, why) = settings.clock_limit(deadline);
            return done.at_limit(limit, why, &point, &last);
        }
        let remaining = settings
            .iteration_limit
            .map_or(u64::MAX, |l| l.saturating_sub(done.iterations));
        if remaining == 0 {
            return done.at_limit(Limit::Iteration, "iteration limit", &point, &last);
        }
        if outer > settings.outer_iterations {
            let why = format!("{} outer iterations", settings.outer_iterations);
            return done.at_limit(Limit::Iteration, &why, &point, &last);
        }
        let request = InnerRequest {
            tolerance: inner_tolerance * last.scale,
            start: point.clone(),
            lambda: lambda.clone(),
            rho,
            max_iters: settings.inner_iterations.min(remaining),
            deadline,
            outer,
            nlp,
            pairs: pairs.take(),
        };
        let mut inner = match run_inner(settings, request) {
            Ok(inner) => inner,
            Err(message) => {
                return done.result(TerminationStatus::Error, message, Some(&point), None);
            }
        };
        done.iterations += inner.iterations;
        done.newton_iterations += inner.newton_iterations;
        pairs = inner.pairs.take();
        match &inner.stop {
            Some(Stop::EvaluationFailed(message)) => {
                return done.result(
                    TerminationStatus::NumericalError,
                    message.clone(),
                    Some(&point),
                    None,
                );
            }
            Some(Stop::NonFinite) => {
                let why = "non-finite value of the augmented Lagrangian or its gradient";
                return done.result(
                    TerminationStatus::NumericalError,
                    why.into(),
                    Some(&point),
                    None,
                );
            }
            _ => {}
        }
        point = match inner
            .last
            .filter(|p| p.x == inner.x && p.derivatives.is_some())
        {
            Some(p) => p,
            None => match nlp.evaluate(&inner.x) {
                Ok(p) => p,
                Err(message) => {
                    return done.result(
                        TerminationStatus::NumericalError,
                        message,
                        Some(&point),
                        None,
                    );
                }
            },
        };
        if !(point.finite_values() && point.finite_derivatives()) {
            let why = "non-finite objective, constraints or derivatives";
            return done.result(
                TerminationStatus::NumericalError,
                why.into(),
                Some(&point),
                None,
            );
        }
        let multipliers = nlp.multiplier_update(&point.g, &lambda, rho);
        let a = Assessment::new(nlp, &point, multipliers, &lambda, rho);
        if settings.verbosity >= 2 {
            eprintln!(
                "{NAME}: outer {outer:>3}  objective {:.10e}  {}",
                point.f,
                a.summary()
            );
        }
        if point.f < UNBOUNDED_BELOW && a.violation <= settings.constraint_tolerance {
            let why = format!("objective {:.3e} below -1e20 at a feasible point", point.f);
            return done.result(TerminationStatus::Unbounded, why, Some(&point), Some(&a));
        }
        let iterations = done.iterations;
        if a.optimal(settings, 1.0) {
            let why = format!(
                "converged after {outer} outer and {iterations} inner iterations ({})",
                a.summary()
            );
            return done.result(
                TerminationStatus::LocallyOptimal,
                why,
                Some(&point),
                Some(&a),
            );
        }
        if inner.reason == Some(TerminationReason::Timeout) || settings.out_of_time(deadline) {
            let (limit, why) = settings.clock_limit(deadline);
            return done.at_limit(limit, why, &point, &a);
        }
        if settings
            .iteration_limit
            .is_some_and(|l| done.iterations >= l)
        {
            return done.at_limit(Limit::Iteration, "iteration limit", &point, &a);
        }
        if let Some(Stop::NoProgress(why)) = &inner.stop {
            if m == 0 || a.complementarity <= settings.constraint_tolerance {
                if a.optimal(settings, ACCEPTABLE) {
                    let why = format!("solved to an acceptable level, {why} ({})", a.summary());
                    return done.result(
                        TerminationStatus::LocallyOptimal,
                        why,
                        Some(&point),
                        Some(&a),
                    );
                }
                if a.feasible(settings) {
                    return done.at_limit(Limit::Other, why, &point, &a);
                }
                let why = format!("{why} at an infeasible point ({})", a.summary());
                return done.result(
                    TerminationStatus::NumericalError,
                    why,
                    Some(&point),
                    Some(&a),
                );
            }
        }
        // Infeasibility: the violation stalls at a stationary point of the violation.
        if a.violation < 0.99 * best_violation {
            best_violation = a.violation;
            stalled = 0;
        } else {
            stalled += 1;
        }
        let infeasible = |point: &Point| {
            a.violation > settings.constraint_tolerance
                && nlp.violation_stationarity(point) <= INFEASIBLE_STATIONARITY
        };
        if stalled >= STALLED_OUTER && infeasible(&point) {
            let why = format!(
                "locally infeasible: a stationary point of the constraint violation {:.3e}",
                a.violation
            );
            return done.result(TerminationStatus::Infeasible, why, Some(&point), Some(&a));
        }
        // Multipliers and penalty of the next subproblem.
        lambda = clamp_multipliers(a.multipliers.clone());
        if a.complementarity
            > (DECREASE * previous_complementarity).max(0.1 * settings.constraint_tolerance)
        {
            rho *= settings.penalty_growth;
            // The curvature of the penalty term changed: the correction pairs are stale.
            pairs = None;
        }
        if rho > PENALTY_MAX {
            if infeasible(&point) {
                let why = format!(
                    "locally infeasible: a stationary point of the constraint violation {:.3e}",
                    a.violation
                );
                return done.result(TerminationStatus::Infeasible, why, Some(&point), Some(&a));
            }
            let why = format!(
                "the penalty parameter exceeded {PENALTY_MAX:e} ({})",
                a.summary()
            );
            return done.result(
                TerminationStatus::NumericalError,
                why,
                Some(&point),
                Some(&a),
            );
        }
        previous_complementarity = a.complementarity;
        inner_tolerance = (0.1 * inner_tolerance).max(settings.tolerance);
        last = a;
    }
}
