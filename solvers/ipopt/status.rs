//! What Ipopt returned, turned into the core's result: Ipopt's return code mapped to a
//! [`TerminationStatus`] (a limit reached with a feasible point is feasible at that limit,
//! a panic in an evaluation a numerical error), the final point evaluated again for its
//! objective and violation, and the multipliers kept when Ipopt finalized a point.
//!
//! Depends on the core's problem, options and result types, and on `ffi.rs`'s return codes.

use super::callbacks::panic_message;
use super::{ffi, RawOutcome, Request, DEFAULT_FEASIBILITY_TOLERANCE, NAME};
use glassbox_core::nlp::NlpProblem;
use glassbox_core::options::RawOptionValue;
use glassbox_core::{Limit, SolveOptions, SolveResult, TerminationStatus};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

/// Builds the result from what Ipopt returned.
pub(super) fn finish(
    problem: &dyn NlpProblem,
    options: &SolveOptions,
    request: &Request,
    raw: RawOutcome,
    start: Instant,
) -> SolveResult {
    let Some(code) = raw.code else {
        let mut result = SolveResult::failed(
            NAME,
            TerminationStatus::Error,
            "CreateIpoptProblem refused the problem",
        );
        result.wall_seconds = start.elapsed().as_secs_f64();
        return result;
    };
    let feasibility_tolerance = match options.raw.get("constr_viol_tol") {
        Some(RawOptionValue::Float(x)) => *x,
        Some(RawOptionValue::Int(i)) => *i as f64,
        _ => DEFAULT_FEASIBILITY_TOLERANCE,
    };
    // The final point is evaluated again (objective, violation) unless an evaluation
    // panicked during the solve; a panic now is caught like one during the solve.
    let mut panic = raw.panic;
    let evaluated = if raw.finalized && panic.is_none() {
        match catch_unwind(AssertUnwindSafe(|| evaluate(problem, request, &raw.x))) {
            Ok(e) => Some(e),
            Err(payload) => {
                panic = Some(panic_message(payload.as_ref()));
                None
            }
        }
    } else {
        None
    };
    let max_violation = evaluated.as_ref().map(|e| e.max_violation);
    let feasible = max_violation.is_some_and(|v| v <= feasibility_tolerance);
    let at_limit = |limit| {
        if feasible {
            TerminationStatus::FeasibleAtLimit(limit)
        } else {
            TerminationStatus::NoSolutionAtLimit(limit)
        }
    };
    let mut raw_status = match ffi::status_name(code) {
        Some(name) => name.to_string(),
        None => format!("unknown Ipopt return code {code}"),
    };
    let status = match code {
        _ if panic.is_some() => TerminationStatus::NumericalError,
        ffi::SOLVE_SUCCEEDED | ffi::FEASIBLE_POINT_FOUND | ffi::SOLVED_TO_ACCEPTABLE_LEVEL => {
            TerminationStatus::LocallyOptimal
        }
        ffi::INFEASIBLE_PROBLEM_DETECTED => TerminationStatus::Infeasible,
        // A line search that can make no progress (or a restoration phase that fails) at a
        // feasible point still leaves a usable point, often all but converged: kept, as
        // feasible at a limit, rather than lost as an error.
        ffi::SEARCH_DIRECTION_BECOMES_TOO_SMALL | ffi::RESTORATION_FAILED if feasible => {
            at_limit(Limit::Other)
        }
        ffi::DIVERGING_ITERATES => TerminationStatus::Unbounded,
        ffi::USER_REQUESTED_STOP if raw.time_up => {
            raw_status.push_str(" (wall-clock time limit)");
            at_limit(Limit::Time)
        }
        ffi::USER_REQUESTED_STOP => at_limit(Limit::Interrupted),
        ffi::MAXIMUM_ITERATIONS_EXCEEDED => at_limit(Limit::Iteration),
        ffi::MAXIMUM_CPUTIME_EXCEEDED => at_limit(Limit::Time),
        ffi::SEARCH_DIRECTION_BECOMES_TOO_SMALL
        | ffi::RESTORATION_FAILED
        | ffi::ERROR_IN_STEP_COMPUTATION
        | ffi::INVALID_NUMBER_DETECTED => TerminationStatus::NumericalError,
        _ => TerminationStatus::Error,
    };
    if let Some(message) = &panic {
        raw_status.push_str(&format!(" (an evaluation panicked: {message})"));
    } else if let Some(message) = &raw.evaluation_error {
        if !status.has_solution() {
            raw_status.push_str(&format!(" (last evaluation error: {message})"));
        }
    }
    let objective = evaluated.and_then(|e| e.objective);
    // Without a final point from Ipopt, `x` and the multipliers are still the start.
    let (primal, constraint_multipliers, lower_bound_multipliers, upper_bound_multipliers) =
        if raw.finalized {
            (
                raw.x,
                Some(raw.mult_g),
                Some(raw.mult_x_lower),
                Some(raw.mult_x_upper),
            )
        } else {
            (Vec::new(), None, None, None)
        };
    SolveResult {
        solver: NAME.to_string(),
        status,
        primal,
        objective,
        dual_bound: None,
        gap: None,
        constraint_multipliers,
        lower_bound_multipliers,
        upper_bound_multipliers,
        max_violation,
        iterations: raw.iterations,
        nodes: None,
        wall_seconds: start.elapsed().as_secs_f64(),
        raw_status,
    }
}

/// The objective and the largest violation of a bound or constraint at a point.
pub(super) struct Evaluated {
    pub(super) objective: Option<f64>,
    pub(super) max_violation: f64,
}

pub(super) fn evaluate(problem: &dyn NlpProblem, request: &Request, x: &[f64]) -> Evaluated {
    let objective = Some(problem.objective(x)).filter(|f| f.is_finite());
    let mut worst: f64 = 0.0;
    for ((&v, &l), &u) in x.iter().zip(&request.x_lower).zip(&request.x_upper) {
        worst = worst.max(l - v).max(v - u);
    }
    let mut g = vec![0.0; request.m];
    problem.constraints(x, &mut g);
    for ((&v, &l), &u) in g.iter().zip(&request.g_lower).zip(&request.g_upper) {
        if v.is_nan() {
            worst = f64::INFINITY;
        }
        worst = worst.max(l - v).max(v - u);
    }
    Evaluated {
        objective,
        max_violation: worst,
    }
}
