//! The `microlp` backend: glassbox's MILP problem solved by [microlp], a pure-Rust simplex
//! and branch-and-bound solver. It shows what a backend written outside glassbox needs: a
//! type implementing the core's [`MilpSolver`], and a [`BackendEntry`] (name, capabilities,
//! raw options, constructor, option checks) that `Registry::with_backend` adds.
//!
//! How glassbox's options map onto microlp's:
//! - `time_limit` -> microlp's wall-clock budget (the rest of it at each resume);
//! - `relative_gap` -> `mip_gap` (glassbox's default 1e-4 when unset);
//! - `absolute_gap`: microlp has none. The search runs in batches of [`NODE_BATCH`]
//!   branch-and-bound nodes and stops as soon as incumbent - bound is within the absolute
//!   gap (glassbox's default 1e-6 when unset), as HiGHS and CBC do;
//! - `iteration_limit`: microlp counts nodes, not simplex iterations, so it is refused with
//!   a pointer to the raw option `node_limit`;
//! - `threads`, `seed`: accepted; microlp is single-threaded and deterministic, so neither
//!   changes a solve;
//! - `verbosity` >= 1 prints one line per solve (microlp itself prints nothing);
//! - a MIP start -> microlp's `warm_start` hint (microlp ignores an infeasible one).
//!
//! A stop at the gap is reported `Optimal`, as HiGHS and CBC report it. A batch that uses
//! up its nodes just as the time limit runs out is reported as stopped by the time limit.
//!
//! [microlp]: https://crates.io/crates/microlp

use glassbox::backend::{BackendEntry, Constructor};
use glassbox::milp::{self, BackendReport, MilpProblem, Sense};
use glassbox::options::{check_raw_options, OptionKind, OptionSpec};
use glassbox::{
    Capabilities, GlassboxError, Limit, MilpSolver, RawOptionValue, Result, SolveOptions,
    SolveResult, TerminationStatus,
};
use microlp::{
    ComparisonOp, OptimizationDirection, Problem, ResumeOptions, SolveOutcome, TerminationReason,
    Variable,
};
use std::time::{Duration, Instant};

/// The name configs use.
pub const NAME: &str = "microlp";

/// Branch-and-bound nodes between two checks of the absolute gap.
pub const NODE_BATCH: u64 = 200;

/// The raw options (`[solver.options]`).
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "node_limit",
        kind: OptionKind::Int,
        help: "most branch-and-bound nodes to solve (>= 0)",
    },
    OptionSpec {
        name: "presolve",
        kind: OptionKind::Bool,
        help: "reduce the problem before the search (default true)",
    },
];

/// The registry entry of the backend.
pub fn entry() -> BackendEntry {
    BackendEntry {
        name: NAME,
        description: "microlp, pure-Rust simplex and branch-and-bound (MILP; single-threaded)",
        capabilities: Capabilities {
            integers: true,
            constraints: true,
            warm_start: true,
            dual_bound: true,
            ..Capabilities::default()
        },
        options: OPTIONS,
        constructor: Constructor::Milp(|| Box::new(MicrolpSolver)),
        check_options,
    }
}

/// The backend (it holds no state: every solve builds its own microlp problem).
#[derive(Clone, Copy, Debug, Default)]
pub struct MicrolpSolver;

impl MilpSolver for MicrolpSolver {
    fn name(&self) -> &str {
        NAME
    }

    fn capabilities(&self) -> Capabilities {
        entry().capabilities
    }

    fn solve(&self, problem: &MilpProblem, options: &SolveOptions) -> Result<SolveResult> {
        check_options(options)?;
        milp::validate(problem)?;
        let start = milp::mip_start(problem, options)?;
        let original = problem;
        // Problems without columns, and integer bounds rounded inward, as every backend.
        let problem = match milp::presolve(NAME, problem) {
            Ok(problem) => problem,
            Err(answer) => return Ok(*answer),
        };
        let clock = Instant::now();
        let (model, columns) = build(&problem)?;
        let report = search(&problem, &model, &columns, options, start.as_deref(), clock);
        let result = milp::assemble_result(
            NAME,
            original,
            report,
            start.as_deref(),
            clock.elapsed().as_secs_f64(),
        );
        if options.verbosity >= 1 {
            println!(
                "microlp: {} objective {:?} bound {:?} nodes {:?} in {:.3} s",
                result.status,
                result.objective,
                result.dual_bound,
                result.nodes,
                result.wall_seconds
            );
        }
        Ok(result)
    }
}

/// The checks a solve makes of its options, also run by the registry before a run starts.
fn check_options(options: &SolveOptions) -> Result<()> {
    options.validate()?;
    check_raw_options(NAME, OPTIONS, &options.raw)?;
    if options.iteration_limit.is_some() {
        return Err(GlassboxError::Capability {
            solver: NAME.into(),
            what: "limit simplex iterations (microlp counts branch-and-bound nodes): use the \
                   raw option node_limit"
                .into(),
        });
    }
    if let Some(RawOptionValue::Int(n)) = options.raw.get("node_limit") {
        if *n < 0 {
            return Err(GlassboxError::InvalidOption {
                solver: NAME.into(),
                option: "node_limit".into(),
                message: format!("must be >= 0, got {n}"),
            });
        }
    }
    Ok(())
}

/// glassbox's problem as microlp's: one variable per column, a row with two finite sides
/// as two constraints (one when they are equal). Integer columns take microlp's `i32`
/// bounds; a finite integer bound outside them is refused.
fn build(problem: &MilpProblem) -> Result<(Problem, Vec<Variable>)> {
    let direction = match problem.sense {
        Sense::Minimize => OptimizationDirection::Minimize,
        Sense::Maximize => OptimizationDirection::Maximize,
    };
    let mut model = Problem::new(direction);
    let mut columns = Vec::with_capacity(problem.columns.len());
    for (j, c) in problem.columns.iter().enumerate() {
        let variable = if c.integer {
            let bound = |b: f64, open: i32| -> Result<i32> {
                if b.is_infinite() {
                    Ok(open)
                } else if b.abs() <= i32::MAX as f64 {
                    Ok(b as i32)
                } else {
                    Err(GlassboxError::InvalidProblem(format!(
                        "integer column {j} ('{}') has the bound {b}; microlp takes integer \
                         bounds within 32 bits",
                        c.name
                    )))
                }
            };
            model.add_integer_var(
                c.cost,
                (bound(c.lower, i32::MIN)?, bound(c.upper, i32::MAX)?),
            )
        } else {
            model.add_var(c.cost, (c.lower, c.upper))
        };
        columns.push(variable);
    }
    for row in &problem.rows {
        let expression: Vec<(Variable, f64)> = row
            .coefficients
            .iter()
            .map(|&(j, a)| (columns[j], a))
            .collect();
        if row.lower == row.upper {
            model.add_constraint(expression.as_slice(), ComparisonOp::Eq, row.lower);
            continue;
        }
        if row.lower.is_finite() {
            model.add_constraint(expression.as_slice(), ComparisonOp::Ge, row.lower);
        }
        if row.upper.is_finite() {
            model.add_constraint(expression.as_slice(), ComparisonOp::Le, row.upper);
        }
    }
    Ok((model, columns))
}

/// The search, in batches of nodes until the gap, a limit or the proof ends it; what it
/// found in glassbox's terms.
fn search(
    problem: &MilpProblem,
    model: &Problem,
    columns: &[Variable],
    options: &SolveOptions,
    start: Option<&[f64]>,
    clock: Instant,
) -> BackendReport {
    let relative_gap = options.relative_gap.unwrap_or(milp::DEFAULT_RELATIVE_GAP);
    let absolute_gap = options.absolute_gap.unwrap_or(milp::DEFAULT_ABSOLUTE_GAP);
    let node_limit = match options.raw.get("node_limit") {
        Some(RawOptionValue::Int(n)) => Some(*n as u64),
        _ => None,
    };
    // What is left of the time limit (None: no limit, or one too long for a Duration).
    let time_left = || {
        options
            .time_limit
            .and_then(|t| Duration::try_from_secs_f64(t).ok())
            .map(|t| t.saturating_sub(clock.elapsed()))
    };
    let batch = |solved: u64| Some(node_limit.map_or(NODE_BATCH, |n| NODE_BATCH.min(n - solved)));

    let mut settings = microlp::SolveOptions::default();
    settings.time_limit = time_left();
    settings.node_limit = batch(0);
    settings.mip_gap = relative_gap;
    if let Some(RawOptionValue::Bool(presolve)) = options.raw.get("presolve") {
        settings.presolve = *presolve;
    }
    if let Some(start) = start {
        let hint = columns.iter().copied().zip(start.iter().copied()).collect();
        settings.warm_start = Some(hint);
    }
    let mut outcome = match model.solve_with(settings) {
        Ok(outcome) => outcome,
        Err(e) => return failure(e),
    };
    loop {
        let stats = outcome.stats();
        let within_gap = match (&outcome, stats.best_bound) {
            (SolveOutcome::Solution(s), Some(bound)) => {
                (s.objective() - bound).abs() <= absolute_gap
            }
            _ => false,
        };
        let more_nodes = node_limit.is_none_or(|n| stats.nodes_solved < n);
        let out_of_time = time_left().is_some_and(|t| t.is_zero());
        let reason = outcome.termination_reason();
        if within_gap || reason != TerminationReason::NodeLimit || !more_nodes || out_of_time {
            let limit = stop_limit(reason, more_nodes, out_of_time);
            return report(problem, columns, &outcome, within_gap, limit);
        }
        let mut resume = ResumeOptions::default();
        resume.time_limit = time_left();
        resume.node_limit = batch(stats.nodes_solved);
        resume.mip_gap = Some(relative_gap);
        outcome = match outcome.resume_with(resume) {
            Ok(outcome) => outcome,
            Err(e) => return failure(e),
        };
    }
}

/// A finished (or stopped) search as glassbox's report.
fn report(
    problem: &MilpProblem,
    columns: &[Variable],
    outcome: &SolveOutcome,
    within_gap: bool,
    limit: Option<Limit>,
) -> BackendReport {
    let stats = outcome.stats();
    let reason = outcome.termination_reason();
    let primal = match outcome {
        SolveOutcome::Solution(s) => Some(
            columns
                .iter()
                .zip(&problem.columns)
                .map(|(&v, c)| {
                    let value = s.var_value(v);
                    // Integer values come within microlp's int_tol (1e-6) of an integer.
                    if c.integer {
                        value.round()
                    } else {
                        value
                    }
                })
                .collect(),
        ),
        SolveOutcome::Interrupted(_) => None,
    };
    let status = match (limit, &primal, within_gap) {
        (_, Some(_), true) | (None, Some(_), _) => TerminationStatus::Optimal,
        (Some(limit), Some(_), false) => TerminationStatus::FeasibleAtLimit(limit),
        (Some(limit), None, _) => TerminationStatus::NoSolutionAtLimit(limit),
        (None, None, _) => TerminationStatus::Error,
    };
    let raw_status = match (reason, within_gap, limit) {
        (_, true, _) => "absolute gap reached".to_string(),
        (TerminationReason::NodeLimit, false, Some(Limit::Time)) => {
            "NodeLimit of a batch, as the time limit ran out".to_string()
        }
        (reason, false, _) => format!("{reason:?}"),
    };
    BackendReport {
        status,
        primal,
        // microlp's bound leaves out the problem's constant.
        dual_bound: stats.best_bound.map(|b| b + problem.objective_offset),
        iterations: stats.lp_iterations,
        nodes: Some(stats.nodes_solved),
        raw_status,
    }
}

/// The limit that stopped the search (None: it ended by itself). A batch that uses up its
/// nodes as the clock runs out was stopped by the time limit: the batch's node limit is
/// ours, not the user's (`more_nodes`: the user's node limit, if any, is not reached).
fn stop_limit(reason: TerminationReason, more_nodes: bool, out_of_time: bool) -> Option<Limit> {
    match reason {
        TerminationReason::NodeLimit if more_nodes && out_of_time => Some(Limit::Time),
        TerminationReason::TimeLimit => Some(Limit::Time),
        TerminationReason::NodeLimit => Some(Limit::Node),
        TerminationReason::ProvenOptimal | TerminationReason::MipGap => None,
        // A reason added by a later microlp.
        _ => Some(Limit::Other),
    }
}

/// microlp's errors as statuses: proofs of infeasibility and unboundedness are answers, the
/// rest are failures of the backend.
fn failure(error: microlp::Error) -> BackendReport {
    let status = match error {
        microlp::Error::Infeasible => TerminationStatus::Infeasible,
        microlp::Error::Unbounded => TerminationStatus::Unbounded,
        _ => TerminationStatus::Error,
    };
    BackendReport {
        status,
        primal: None,
        dual_bound: None,
        iterations: 0,
        nodes: None,
        raw_status: format!("microlp: {error:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_ending_as_time_runs_out_is_a_time_stop() {
        let node = TerminationReason::NodeLimit;
        assert_eq!(stop_limit(node, true, true), Some(Limit::Time));
        // The user's own node limit reached: a node stop, whatever the clock says.
        assert_eq!(stop_limit(node, false, true), Some(Limit::Node));
        assert_eq!(stop_limit(node, false, false), Some(Limit::Node));
        assert_eq!(
            stop_limit(TerminationReason::TimeLimit, true, true),
            Some(Limit::Time)
        );
        assert_eq!(
            stop_limit(TerminationReason::ProvenOptimal, true, true),
            None
        );
        assert_eq!(stop_limit(TerminationReason::MipGap, true, false), None);
    }
}
