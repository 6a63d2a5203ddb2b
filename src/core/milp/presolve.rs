//! What every MILP backend does before it calls its solver: check the MIP start of the
//! options against the problem ([`mip_start`]), and answer the problems that need no solver
//! or round the bounds of integer columns inward ([`presolve`]).
//!
//! Depends on the MILP problem type and the core's options, result and error types only.

use super::{Column, MilpProblem, FEASIBILITY_TOLERANCE};
use crate::options::SolveOptions;
use crate::result::{SolveResult, TerminationStatus};
use crate::{GlassboxError, Result};
use std::borrow::Cow;

/// The MIP start of `options` checked against `problem`: `None` without a warm start, the
/// primal point otherwise (multipliers of a warm start are ignored: a MILP backend takes a
/// primal point only). A point of the wrong length or with a non-finite value is an error;
/// an infeasible point is not (the backend may repair it or ignore it).
pub fn mip_start(problem: &MilpProblem, options: &SolveOptions) -> Result<Option<Vec<f64>>> {
    let Some(warm) = &options.warm_start else {
        return Ok(None);
    };
    let n = problem.columns.len();
    if warm.primal.len() != n {
        return Err(GlassboxError::InvalidProblem(format!(
            "the MIP start has {} values, the problem has {n} columns",
            warm.primal.len()
        )));
    }
    if let Some(j) = warm.primal.iter().position(|v| !v.is_finite()) {
        return Err(GlassboxError::InvalidProblem(format!(
            "the MIP start has the non-finite value {} for column {j}",
            warm.primal[j]
        )));
    }
    Ok(Some(warm.primal.clone()))
}

/// What every MILP backend does before it calls its solver: answers the problems that need
/// no solver, and gives the others with the bounds of integer columns rounded inward
/// (borrowed when there is nothing to round).
///
/// - No columns: optimal (objective = offset) when 0 lies within every row's bounds,
///   infeasible otherwise (HiGHS calls such a model empty, CBC's C interface fails on it).
/// - An integer column with no integer value within its bounds: infeasible.
/// - Fractional bounds of integer columns are rounded inward (within
///   [`FEASIBILITY_TOLERANCE`] of an integer, to that integer): HiGHS 1.15 returns a wrong
///   "optimal" point for an integer column with a fractional upper bound (found by the
///   conformance suite), and the rounded problem has the same integer points.
///
/// `Err` holds the finished result, `Ok` the problem to give the solver.
pub fn presolve<'a>(
    solver: &str,
    problem: &'a MilpProblem,
) -> std::result::Result<Cow<'a, MilpProblem>, Box<SolveResult>> {
    let answer = |status, raw_status: String, objective: Option<f64>| {
        Box::new(SolveResult {
            objective,
            dual_bound: objective,
            gap: objective.map(|_| 0.0),
            max_violation: objective.map(|_| 0.0),
            nodes: Some(0),
            ..SolveResult::failed(solver, status, raw_status)
        })
    };
    if problem.columns.is_empty() {
        let feasible = problem
            .rows
            .iter()
            .all(|r| r.lower <= FEASIBILITY_TOLERANCE && r.upper >= -FEASIBILITY_TOLERANCE);
        return Err(if feasible {
            answer(
                TerminationStatus::Optimal,
                "no columns: solved by glassbox".into(),
                Some(problem.objective_offset),
            )
        } else {
            answer(
                TerminationStatus::Infeasible,
                "no columns and a row whose bounds exclude 0: infeasible (found by glassbox)"
                    .into(),
                None,
            )
        });
    }
    let round = |c: &Column| {
        (
            (c.lower - FEASIBILITY_TOLERANCE).ceil(),
            (c.upper + FEASIBILITY_TOLERANCE).floor(),
        )
    };
    let fractional = |c: &Column| c.integer && round(c) != (c.lower, c.upper);
    if !problem.columns.iter().any(fractional) {
        return Ok(Cow::Borrowed(problem));
    }
    let mut rounded = problem.clone();
    for (j, c) in rounded.columns.iter_mut().enumerate() {
        if !c.integer {
            continue;
        }
        let (lower, upper) = round(c);
        if lower > upper {
            return Err(answer(
                TerminationStatus::Infeasible,
                format!(
                    "integer column {j} ('{}') has no integer value in [{}, {}]: infeasible \
                     (found by glassbox)",
                    c.name, c.lower, c.upper
                ),
                None,
            ));
        }
        (c.lower, c.upper) = (lower, upper);
    }
    Ok(Cow::Owned(rounded))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::milp::tests::small;

    #[test]
    fn presolve_answers_trivial_problems_and_rounds_integer_bounds() {
        let mut p = MilpProblem::new("empty");
        p.objective_offset = 2.0;
        p.add_row("r", -1.0, 1.0, vec![]);
        let r = presolve("t", &p).unwrap_err();
        assert_eq!(r.status, TerminationStatus::Optimal);
        assert_eq!(r.objective, Some(2.0));
        p.add_row("bad", 1.0, 2.0, vec![]);
        let r = presolve("t", &p).unwrap_err();
        assert_eq!(r.status, TerminationStatus::Infeasible);

        let p = small();
        assert!(matches!(presolve("t", &p), Ok(Cow::Borrowed(_))));
        let mut q = small();
        q.columns[1].lower = -2.5;
        q.columns[1].upper = 3.0000000001;
        q.columns[0].upper = 2.5; // continuous: kept
        let rounded = presolve("t", &q).unwrap();
        assert_eq!(
            (rounded.columns[1].lower, rounded.columns[1].upper),
            (-2.0, 3.0)
        );
        assert_eq!(rounded.columns[0].upper, 2.5);
        q.columns[1].lower = 0.2;
        q.columns[1].upper = 0.8;
        let r = presolve("t", &q).unwrap_err();
        assert_eq!(r.status, TerminationStatus::Infeasible);
        assert!(r.raw_status.contains("'y'"), "{}", r.raw_status);
    }
}
