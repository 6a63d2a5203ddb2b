//! What every MILP backend shares when it turns its own answer into a [`SolveResult`]: its
//! report in glassbox's terms ([`BackendReport`]), checked against the problem and completed
//! alike for every backend ([`assemble_result`]: objective from the point, the MIP start
//! kept at a limit, bound and [`relative_gap`]); the check that settles "infeasible or
//! unbounded" ([`feasibility_problem`], [`settle_by_feasibility_check`]); and the words for
//! a limit in messages ([`limit_name`]).
//!
//! Depends on the MILP problem type and the core's result types only.

use super::{MilpProblem, Sense};
use crate::result::{Limit, SolveResult, TerminationStatus};

/// The relative gap `|objective - bound| / |objective|` between an incumbent and a proven
/// bound (the convention of Gurobi, HiGHS and OR-Tools), 0 when they are equal, `None` when
/// either is missing or not finite, or the objective is 0 and the bound is not.
pub fn relative_gap(objective: Option<f64>, bound: Option<f64>) -> Option<f64> {
    let (o, b) = (objective?, bound?);
    if !o.is_finite() || !b.is_finite() {
        return None;
    }
    let difference = (o - b).abs();
    if difference == 0.0 {
        Some(0.0)
    } else if o == 0.0 {
        None
    } else {
        Some(difference / o.abs())
    }
}

/// What a MILP backend found, in glassbox's terms, before [`assemble_result`] checks it
/// against the problem and adds what every backend reports alike.
#[derive(Clone, Debug)]
pub struct BackendReport {
    /// The status the backend's answer maps to. For a limit, say `FeasibleAtLimit` when the
    /// backend has an incumbent, `NoSolutionAtLimit` otherwise; the incumbent goes in
    /// `primal`.
    pub status: TerminationStatus,
    /// The backend's point (its incumbent for a MILP), one value per column.
    pub primal: Option<Vec<f64>>,
    /// The backend's proven bound on the optimum, offset included, in the problem's sense.
    pub dual_bound: Option<f64>,
    /// Simplex (or other LP) iterations.
    pub iterations: u64,
    /// Branch-and-bound nodes.
    pub nodes: Option<u64>,
    /// The backend's status text, with any note on how it was mapped.
    pub raw_status: String,
}

/// Turns a backend's report into the [`SolveResult`] every MILP backend returns:
/// - the objective is computed from the returned point (offset included), so it always
///   agrees with the point, and `max_violation` is measured on it;
/// - when the solve stopped at a limit and the MIP start is feasible and better than what
///   the backend returned (or the backend returned nothing), the MIP start is the
///   incumbent (a backend may lose a start in presolve): the status becomes
///   `FeasibleAtLimit` and `raw_status` says so;
/// - the dual bound is kept only where it is finite, and never worse than the objective of
///   an optimal point; the gap is [`relative_gap`] of the two.
pub fn assemble_result(
    solver: &str,
    problem: &MilpProblem,
    report: BackendReport,
    start: Option<&[f64]>,
    wall_seconds: f64,
) -> SolveResult {
    let BackendReport {
        mut status,
        mut primal,
        dual_bound,
        iterations,
        nodes,
        mut raw_status,
    } = report;
    if !status.has_solution() {
        // Only a limit status may carry a (non-feasible) point; none other keeps one.
        if status.limit().is_none() {
            primal = None;
        }
    }
    if primal
        .as_ref()
        .is_some_and(|x| x.len() != problem.columns.len())
    {
        primal = None;
    }
    if let (Some(limit), Some(start)) = (status.limit(), start) {
        let start_objective = problem.objective_value(start);
        let backend_is_better = status.has_solution()
            && primal
                .as_ref()
                .is_some_and(|x| !problem.better(start_objective, problem.objective_value(x)));
        if !backend_is_better && problem.is_feasible(start) {
            primal = Some(start.to_vec());
            status = TerminationStatus::FeasibleAtLimit(limit);
            raw_status.push_str("; incumbent: the MIP start (glassbox kept it)");
        }
    }
    let objective = if status.has_solution() {
        primal.as_deref().map(|x| problem.objective_value(x))
    } else {
        None
    };
    let mut dual_bound = dual_bound.filter(|b| b.is_finite());
    if let (TerminationStatus::Optimal, Some(o)) = (status, objective) {
        // A bound is never worse than an optimal point; an LP's bound is its objective.
        let b = dual_bound.unwrap_or(o);
        dual_bound = Some(match problem.sense {
            Sense::Minimize => b.min(o),
            Sense::Maximize => b.max(o),
        });
    }
    if matches!(
        status,
        TerminationStatus::Infeasible | TerminationStatus::Unbounded
    ) {
        dual_bound = None;
    }
    let max_violation = primal.as_deref().map(|x| problem.max_violation(x));
    SolveResult {
        solver: solver.to_string(),
        status,
        objective,
        dual_bound,
        gap: relative_gap(objective, dual_bound),
        primal: primal.unwrap_or_default(),
        constraint_multipliers: None,
        lower_bound_multipliers: None,
        upper_bound_multipliers: None,
        max_violation,
        iterations,
        nodes,
        wall_seconds,
        raw_status,
    }
}

/// A backend's answer under a cutoff the user set through a raw option (CBC's `cutoff`,
/// HiGHS's `objective_bound`): its search looked only at solutions better than `cutoff`,
/// so "optimal" holds only for a feasible point better than it, and "infeasible" says only
/// that none is. Any other finished answer becomes the 'other' limit, with the backend's
/// point where it is feasible (else [`assemble_result`] keeps a feasible MIP start), and
/// `raw_status` says why. Before, such an answer was taken as proven: a cutoff below the
/// optimum read "optimal" at a worse point, or "infeasible".
pub fn under_user_cutoff(
    problem: &MilpProblem,
    report: BackendReport,
    option: &str,
    cutoff: f64,
) -> BackendReport {
    let proven = match report.status {
        TerminationStatus::Optimal => report.primal.as_deref().is_some_and(|x| {
            problem.is_feasible(x) && problem.better(problem.objective_value(x), cutoff)
        }),
        TerminationStatus::Infeasible => false,
        _ => return report,
    };
    if proven {
        return report;
    }
    let point = report.primal.filter(|x| problem.is_feasible(x));
    BackendReport {
        status: match point {
            Some(_) => TerminationStatus::FeasibleAtLimit(Limit::Other),
            None => TerminationStatus::NoSolutionAtLimit(Limit::Other),
        },
        primal: point,
        dual_bound: None,
        raw_status: format!(
            "{}; under the raw option {option} = {cutoff}, which only a better solution \
             passes, that proves nothing of the problem",
            report.raw_status
        ),
        ..report
    }
}

/// The same problem with a zero objective: what a backend solves to tell "infeasible" from
/// "unbounded" when it could only say "infeasible or unbounded". If this problem is feasible
/// and the original's (LP relaxation) is unbounded, the original is unbounded (for rational
/// data, Meyer 1974); if it is infeasible, so is the original.
pub fn feasibility_problem(problem: &MilpProblem) -> MilpProblem {
    let mut feasibility = problem.clone();
    feasibility.sense = Sense::Minimize;
    feasibility.objective_offset = 0.0;
    for column in &mut feasibility.columns {
        column.cost = 0.0;
    }
    feasibility
}

/// What a backend reports for a problem it could only call "infeasible or unbounded" (its
/// status text `raw_status`), from `check`, its report on the [`feasibility_problem`]:
/// feasible means unbounded, infeasible means infeasible, anything else is undecided.
pub fn settle_by_feasibility_check(raw_status: &str, check: BackendReport) -> BackendReport {
    let (status, note) = match check.status {
        TerminationStatus::Optimal => (
            TerminationStatus::Unbounded,
            "the problem with a zero objective is feasible, so it is unbounded",
        ),
        TerminationStatus::Infeasible => (
            TerminationStatus::Infeasible,
            "the problem with a zero objective is infeasible",
        ),
        TerminationStatus::FeasibleAtLimit(limit) | TerminationStatus::NoSolutionAtLimit(limit) => {
            (
                TerminationStatus::NoSolutionAtLimit(limit),
                "the check of feasibility stopped at a limit: undecided",
            )
        }
        _ => (
            TerminationStatus::Error,
            "the check of feasibility failed: undecided",
        ),
    };
    BackendReport {
        status,
        primal: None,
        dual_bound: None,
        iterations: check.iterations,
        nodes: check.nodes,
        raw_status: format!("{raw_status}; {note} ({})", check.raw_status),
    }
}

/// The limit (if any) that `status` names, as a word for messages.
pub fn limit_name(limit: Limit) -> &'static str {
    match limit {
        Limit::Time => "time limit",
        Limit::Iteration => "iteration limit",
        Limit::Node => "node limit",
        Limit::Interrupted => "interrupt",
        Limit::Other => "limit",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INF: f64 = f64::INFINITY;

    #[test]
    fn gaps() {
        assert_eq!(relative_gap(Some(10.0), Some(9.0)), Some(0.1));
        assert_eq!(relative_gap(Some(-10.0), Some(-9.0)), Some(0.1));
        assert_eq!(relative_gap(Some(0.0), Some(0.0)), Some(0.0));
        assert_eq!(relative_gap(Some(0.0), Some(-1.0)), None);
        assert_eq!(relative_gap(Some(1.0), None), None);
        assert_eq!(relative_gap(Some(1.0), Some(f64::NEG_INFINITY)), None);
    }

    #[test]
    fn a_user_cutoff_proves_only_what_beats_it() {
        // max 3a + 2b, a + b <= 1: the optimum is a = 1 at 3.
        let mut p = MilpProblem::new("k");
        let a = p.add_binary("a", 3.0);
        let b = p.add_binary("b", 2.0);
        p.add_row("cap", -INF, 1.0, vec![(a, 1.0), (b, 1.0)]);
        p.sense = Sense::Maximize;
        let answer = |status, primal: Option<Vec<f64>>| BackendReport {
            status,
            primal,
            dual_bound: Some(3.0),
            iterations: 1,
            nodes: Some(0),
            raw_status: "finished".into(),
        };
        // "Optimal" at a point better than the cutoff holds.
        let r = under_user_cutoff(
            &p,
            answer(TerminationStatus::Optimal, Some(vec![1.0, 0.0])),
            "cutoff",
            2.5,
        );
        assert_eq!(r.status, TerminationStatus::Optimal);
        assert_eq!(r.dual_bound, Some(3.0));
        // "Optimal" at a point no better than the cutoff: the 'other' limit, with the point.
        let r = under_user_cutoff(
            &p,
            answer(TerminationStatus::Optimal, Some(vec![0.0, 1.0])),
            "objective_bound",
            2.5,
        );
        assert_eq!(r.status, TerminationStatus::FeasibleAtLimit(Limit::Other));
        assert_eq!(r.primal, Some(vec![0.0, 1.0]));
        assert_eq!(r.dual_bound, None);
        assert!(
            r.raw_status.contains("objective_bound = 2.5"),
            "{}",
            r.raw_status
        );
        // "Infeasible" above the optimum: nothing better than the cutoff, no point.
        let r = under_user_cutoff(
            &p,
            answer(TerminationStatus::Infeasible, None),
            "cutoff",
            4.0,
        );
        assert_eq!(r.status, TerminationStatus::NoSolutionAtLimit(Limit::Other));
        // A limit is left as it is.
        let limit = TerminationStatus::FeasibleAtLimit(Limit::Time);
        let r = under_user_cutoff(&p, answer(limit, Some(vec![0.0, 1.0])), "cutoff", 4.0);
        assert_eq!(r.status, limit);
    }

    #[test]
    fn assembling_keeps_a_better_mip_start_at_a_limit() {
        let mut p = MilpProblem::new("k");
        let a = p.add_binary("a", 3.0);
        let b = p.add_binary("b", 2.0);
        p.add_row("cap", -INF, 1.0, vec![(a, 1.0), (b, 1.0)]);
        p.sense = Sense::Maximize;
        let report = BackendReport {
            status: TerminationStatus::NoSolutionAtLimit(Limit::Time),
            primal: None,
            dual_bound: Some(3.5),
            iterations: 1,
            nodes: Some(2),
            raw_status: "time".into(),
        };
        let r = assemble_result("t", &p, report.clone(), Some(&[0.0, 1.0]), 0.1);
        assert_eq!(r.status, TerminationStatus::FeasibleAtLimit(Limit::Time));
        assert_eq!(r.objective, Some(2.0));
        assert_eq!(r.gap, Some(0.75));
        assert!(r.raw_status.contains("MIP start"));
        // An infeasible start is not kept.
        let r = assemble_result("t", &p, report.clone(), Some(&[1.0, 1.0]), 0.1);
        assert_eq!(r.status, TerminationStatus::NoSolutionAtLimit(Limit::Time));
        assert_eq!(r.objective, None);
        // A better backend incumbent wins.
        let better = BackendReport {
            status: TerminationStatus::FeasibleAtLimit(Limit::Time),
            primal: Some(vec![1.0, 0.0]),
            ..report
        };
        let r = assemble_result("t", &p, better, Some(&[0.0, 1.0]), 0.1);
        assert_eq!(r.objective, Some(3.0));
        assert!(!r.raw_status.contains("MIP start"));
    }
}
