//! The MILP conformance suite: small LPs and MILPs with known optima, infeasible and
//! unbounded problems, a time-limited hard instance, MIP starts, options, parallel solves,
//! exports and malformed problems: the checks every MILP backend must pass, whoever wrote
//! it. Each check is a function of the backend's registry entry and a backend; it panics
//! with a message naming the backend and the problem when the backend fails it (in the
//! manner of MathOptInterface's `MOI.Test`). `tests/conformance_milp.rs` runs every check on
//! every built-in MILP backend; a crate that adds a backend runs [`run_all`] on it (as
//! `examples/extension` does).
//!
//! Depends on the core's MILP type, backend traits and entries.

use super::milp_problems::*;
use crate::backend::{validate_options, BackendEntry, Constructor};
use crate::milp::{self, MilpProblem, Sense};
use crate::options::OptionKind;
use crate::{
    Limit, MilpSolver, RawOptionValue, SolveOptions, SolveResult, TerminationStatus, WarmStart,
};
use std::sync::Mutex;
use std::time::Instant;

/// A check of a MILP backend (its registry entry and the backend).
pub type Check = fn(&BackendEntry, &dyn MilpSolver);

/// The checks, by name, in the order [`run_all`] runs them.
pub const CHECKS: &[(&str, Check)] = &[
    ("known_optima", known_optima),
    ("infeasible", infeasible),
    ("unbounded", unbounded),
    ("time_limit", time_limit),
    ("mip_start", mip_start),
    ("options_checked", options_checked),
    ("gap_options", gap_options),
    ("threads_seed_verbosity", threads_seed_verbosity),
    ("parallel_solves", parallel_solves),
    ("mps_round_trip", mps_round_trip),
    ("malformed_and_empty", malformed_and_empty),
];

/// Runs every check on the MILP backend of `entry` (created by its constructor); panics on
/// the first failure. An entry that is not a MILP backend is a failure too.
pub fn run_all(entry: &BackendEntry) {
    let Constructor::Milp(create) = entry.constructor else {
        panic!("{} is not a MILP backend", entry.name);
    };
    let solver = create();
    assert_eq!(entry.name, solver.name(), "entry and backend names differ");
    assert_eq!(
        entry.capabilities,
        solver.capabilities(),
        "{}: entry and backend capabilities differ",
        entry.name
    );
    for (name, check) in CHECKS {
        eprintln!("conformance (MILP) {}: {name}", entry.name);
        check(entry, solver.as_ref());
    }
}

/// Tests that time solves, or solve for long, take turns: a backend that serializes its
/// solves (CBC) would otherwise count another test's solve in a time limit.
static TIMED: Mutex<()> = Mutex::new(());

pub fn timed() -> std::sync::MutexGuard<'static, ()> {
    TIMED.lock().unwrap_or_else(|p| p.into_inner())
}

pub fn solve(
    solver: &dyn MilpSolver,
    problem: &MilpProblem,
    options: &SolveOptions,
) -> SolveResult {
    let result = solver.solve(problem, options).unwrap_or_else(|e| {
        panic!(
            "{} on {}: unexpected error: {e}",
            solver.name(),
            problem.name
        )
    });
    eprintln!(
        "{} on {}: {} ({}), objective {:?}, bound {:?}, gap {:?}, {:?} nodes, {} iterations, {:.3} s",
        solver.name(),
        problem.name,
        result.status,
        result.raw_status,
        result.objective,
        result.dual_bound,
        result.gap,
        result.nodes,
        result.iterations,
        result.wall_seconds
    );
    result
}

/// Asserts an optimal solve of `known`, with a consistent result record.
pub fn assert_optimal(solver: &dyn MilpSolver, known: &Known, result: &SolveResult) {
    let problem = &known.problem;
    let who = format!("{} on {}", solver.name(), problem.name);
    assert_eq!(
        result.status,
        TerminationStatus::Optimal,
        "{who}: {}",
        result.raw_status
    );
    assert_eq!(
        result.solver,
        solver.name(),
        "{who}: result names another solver"
    );
    assert_eq!(
        result.primal.len(),
        problem.num_columns(),
        "{who}: primal length"
    );
    let objective = result
        .objective
        .expect("an optimal result has an objective");
    assert!(
        (objective - known.objective).abs() <= 1e-6 * (1.0 + known.objective.abs()),
        "{who}: objective {objective}, expected {}",
        known.objective
    );
    assert!(
        (objective - problem.objective_value(&result.primal)).abs()
            <= 1e-9 * (1.0 + objective.abs()),
        "{who}: the objective is not the objective at the point"
    );
    if let Some(x_star) = &known.solution {
        for (j, (x, s)) in result.primal.iter().zip(x_star).enumerate() {
            assert!(
                (x - s).abs() <= 1e-6 * (1.0 + s.abs()),
                "{who}: x[{j}] = {x}, expected {s}"
            );
        }
    }
    let violation = result
        .max_violation
        .expect("a point comes with its violation");
    assert!(violation <= 1e-6, "{who}: max violation {violation}");
    let bound = result.dual_bound.expect("an optimal result has a bound");
    let valid_bound = match problem.sense {
        Sense::Minimize => bound <= objective + 1e-6,
        Sense::Maximize => bound >= objective - 1e-6,
    };
    assert!(
        valid_bound,
        "{who}: bound {bound} beyond objective {objective}"
    );
    let gap = result.gap.expect("an optimal result has a gap");
    assert!(gap <= milp::DEFAULT_RELATIVE_GAP + 1e-9, "{who}: gap {gap}");
    if problem.num_integers() > 0 {
        assert!(result.nodes.is_some(), "{who}: no node count");
    }
    assert!(result.wall_seconds >= 0.0 && result.wall_seconds.is_finite());
    assert!(!result.raw_status.is_empty());
}

// ---------------------------------------------------------------------------------------
// The checks.

/// (1) Every known problem is solved to its optimum.
pub fn known_optima(_: &BackendEntry, solver: &dyn MilpSolver) {
    for known in all_known() {
        let result = solve(solver, &known.problem, &SolveOptions::default());
        assert_optimal(solver, &known, &result);
    }
}

/// (2) Infeasible LPs and MILPs are reported infeasible, with no point.
pub fn infeasible(_: &BackendEntry, solver: &dyn MilpSolver) {
    for problem in [infeasible_lp(), infeasible_mip()] {
        let result = solve(solver, &problem, &SolveOptions::default());
        assert_eq!(
            result.status,
            TerminationStatus::Infeasible,
            "{} on {}: {}",
            solver.name(),
            problem.name,
            result.raw_status
        );
        assert!(result.objective.is_none() && result.dual_bound.is_none());
        assert!(result.primal.is_empty());
    }
}

/// (3) Unbounded LPs and MILPs are reported unbounded (an "infeasible or unbounded" answer
/// of the backend is settled by glassbox and said so in `raw_status`).
pub fn unbounded(_: &BackendEntry, solver: &dyn MilpSolver) {
    for problem in [unbounded_lp(), unbounded_mip()] {
        let result = solve(solver, &problem, &SolveOptions::default());
        assert_eq!(
            result.status,
            TerminationStatus::Unbounded,
            "{} on {}: {}",
            solver.name(),
            problem.name,
            result.raw_status
        );
        assert!(result.objective.is_none());
    }
}

/// (4) A hard instance stops at a 1 s wall-clock limit, within 20% + 1 s, with the limit
/// named; with a MIP start it returns an incumbent at least as good as the start, a bound
/// and a gap.
pub fn time_limit(_: &BackendEntry, solver: &dyn MilpSolver) {
    let _turn = timed();
    let (problem, start) = market_split(5, 40, 7);
    let limit = 1.0;
    let start_objective = problem.objective_value(&start);
    for with_start in [false, true] {
        let mut options = SolveOptions {
            time_limit: Some(limit),
            ..SolveOptions::default()
        };
        if with_start {
            options.warm_start = Some(WarmStart::primal(start.clone()));
        }
        let clock = Instant::now();
        let result = solve(solver, &problem, &options);
        let elapsed = clock.elapsed().as_secs_f64();
        let who = format!("{} (start: {with_start})", solver.name());
        assert!(
            elapsed <= 1.2 * limit + 1.0,
            "{who}: the solve took {elapsed} s with a limit of {limit} s"
        );
        assert!(result.wall_seconds <= elapsed + 1e-3);
        assert_eq!(
            result.status.limit(),
            Some(Limit::Time),
            "{who}: {} ({})",
            result.status,
            result.raw_status
        );
        if with_start {
            assert_eq!(
                result.status,
                TerminationStatus::FeasibleAtLimit(Limit::Time),
                "{who}: {}",
                result.raw_status
            );
        }
        if result.status.has_solution() {
            let objective = result.objective.unwrap();
            assert!(result.max_violation.unwrap() <= 1e-6, "{who}");
            if with_start {
                assert!(
                    objective <= start_objective + 1e-9,
                    "{who}: incumbent {objective} worse than the start {start_objective}"
                );
                let bound = result.dual_bound.expect("a bound at the limit");
                assert!(bound <= objective + 1e-6, "{who}: bound {bound}");
                let gap = result.gap.expect("a gap at the limit");
                assert!(gap > milp::DEFAULT_RELATIVE_GAP, "{who}: gap {gap}");
            }
        } else {
            assert!(result.objective.is_none());
        }
    }
}

/// (5) A MIP start is accepted: the result is optimal and at least as good; an infeasible
/// start is no error; a start of the wrong length or with a NaN is an error.
pub fn mip_start(_: &BackendEntry, solver: &dyn MilpSolver) {
    let known = knapsack();
    // Greedy: items 0, 1, 2, 10 (weight 100, value 229).
    let mut greedy = vec![0.0; 12];
    for j in [0, 1, 2, 10] {
        greedy[j] = 1.0;
    }
    assert!(known.problem.is_feasible(&greedy));
    for start in [greedy, known.solution.clone().unwrap(), vec![1.0; 12]] {
        let options = SolveOptions::default().with_warm_start(Some(WarmStart::primal(start)));
        let result = solve(solver, &known.problem, &options);
        assert_optimal(solver, &known, &result);
    }
    let known = negative_and_free();
    let options = SolveOptions::default()
        .with_warm_start(Some(WarmStart::primal(known.solution.clone().unwrap())));
    assert_optimal(solver, &known, &solve(solver, &known.problem, &options));
    for bad in [vec![0.0; 3], vec![f64::NAN; 12]] {
        let options = SolveOptions::default().with_warm_start(Some(WarmStart::primal(bad)));
        let err = solver
            .solve(&knapsack().problem, &options)
            .expect_err("a bad MIP start must be refused");
        eprintln!("{}: {err}", solver.name());
    }
}

/// (6) Options are checked: an unknown or ill-typed raw option is an error naming it,
/// through the registry and through the backend itself; so are invalid gaps.
pub fn options_checked(entry: &BackendEntry, solver: &dyn MilpSolver) {
    let problem = knapsack().problem;
    let mut options = SolveOptions::default();
    options
        .raw
        .insert("no_such_option".into(), RawOptionValue::Int(1));
    let err = validate_options(entry, &options).expect_err("an unknown raw option must be refused");
    assert!(err.to_string().contains("no_such_option"), "{err}");
    let err = solver
        .solve(&problem, &options)
        .expect_err("the backend must refuse an unknown raw option itself too");
    assert!(err.to_string().contains("no_such_option"), "{err}");

    for spec in entry.options {
        let wrong = match spec.kind {
            OptionKind::Int | OptionKind::Float => RawOptionValue::Str("not a number".into()),
            OptionKind::Choice(_) => RawOptionValue::Str("no-such-choice".into()),
            OptionKind::Bool => RawOptionValue::Int(3),
        };
        let mut options = SolveOptions::default();
        options.raw.insert(spec.name.into(), wrong);
        let err =
            validate_options(entry, &options).expect_err("an ill-typed raw option must be refused");
        assert!(err.to_string().contains(spec.name), "{err}");
        let err = solver
            .solve(&problem, &options)
            .expect_err("the backend must refuse an ill-typed raw option itself too");
        assert!(err.to_string().contains(spec.name), "{err}");
    }

    for options in [
        SolveOptions {
            relative_gap: Some(-0.1),
            ..SolveOptions::default()
        },
        SolveOptions {
            absolute_gap: Some(f64::NAN),
            ..SolveOptions::default()
        },
        SolveOptions {
            time_limit: Some(0.0),
            ..SolveOptions::default()
        },
        SolveOptions {
            threads: Some(0),
            ..SolveOptions::default()
        },
    ] {
        let err = solver
            .solve(&problem, &options)
            .expect_err("invalid typed options must be refused");
        eprintln!("{}: {err}", solver.name());
        assert!(validate_options(entry, &options).is_err());
    }
}

/// (7) The gap options stop the search: on the hard instance (whose bound stays 0), a
/// relative gap above 1 or an absolute gap above the start's objective is met by the first
/// incumbent, and the solve ends `Optimal` long before its time limit.
pub fn gap_options(_: &BackendEntry, solver: &dyn MilpSolver) {
    let _turn = timed();
    let (problem, start) = market_split(5, 40, 7);
    let start_objective = problem.objective_value(&start);
    for (relative, absolute) in [(Some(1.5), None), (None, Some(2.0 * start_objective))] {
        let options = SolveOptions {
            relative_gap: relative,
            absolute_gap: absolute,
            time_limit: Some(30.0),
            ..SolveOptions::default()
        }
        .with_warm_start(Some(WarmStart::primal(start.clone())));
        let result = solve(solver, &problem, &options);
        let who = format!("{} (gaps {relative:?}, {absolute:?})", solver.name());
        assert_eq!(
            result.status,
            TerminationStatus::Optimal,
            "{who}: {}",
            result.raw_status
        );
        assert!(
            result.wall_seconds < 15.0,
            "{who}: {} s",
            result.wall_seconds
        );
        let (objective, bound) = (result.objective.unwrap(), result.dual_bound.unwrap());
        if let Some(r) = relative {
            assert!(result.gap.unwrap() <= r, "{who}");
        }
        if let Some(a) = absolute {
            assert!(objective - bound <= a, "{who}");
        }
    }
}

/// (8) Threads and seeds are accepted and do not change an optimum; verbosity 2 still
/// solves (its log goes to stdout).
pub fn threads_seed_verbosity(_: &BackendEntry, solver: &dyn MilpSolver) {
    for (threads, seed) in [
        (Some(1), Some(1)),
        (Some(2), Some(12345)),
        (None, Some(u64::MAX)),
    ] {
        let options = SolveOptions {
            threads,
            seed,
            ..SolveOptions::default()
        };
        for known in [knapsack(), assignment()] {
            let result = solve(solver, &known.problem, &options);
            assert_optimal(solver, &known, &result);
        }
    }
    let known = maximize_with_offset();
    let options = SolveOptions {
        verbosity: 2,
        ..SolveOptions::default()
    };
    assert_optimal(solver, &known, &solve(solver, &known.problem, &options));
}

/// (9) Solves from several threads at once get the right optima (a backend that is not
/// thread-safe must serialize its solves).
pub fn parallel_solves(_: &BackendEntry, solver: &dyn MilpSolver) {
    let _turn = timed();
    std::thread::scope(|scope| {
        for t in 0..4 {
            let solver = dyn_clone::clone_box(solver);
            scope.spawn(move || {
                for k in 0..6 {
                    let capacity = 60.0 + 25.0 * (t * 6 + k) as f64;
                    let problem = knapsack_with(capacity);
                    let result = solver.solve(&problem, &SolveOptions::default()).unwrap();
                    assert_eq!(result.status, TerminationStatus::Optimal);
                    let expected = knapsack_by_enumeration(capacity);
                    let objective = result.objective.unwrap();
                    assert!(
                        (objective - expected).abs() < 1e-6,
                        "{}: capacity {capacity}: {objective}, expected {expected}",
                        solver.name()
                    );
                }
            });
        }
    });
}

/// (10) The exported MPS reads back (with the suite's own reader) to the same problem, and
/// the read problem solves to the same optimum.
pub fn mps_round_trip(_: &BackendEntry, solver: &dyn MilpSolver) {
    for known in all_known() {
        let text = known.problem.to_mps();
        let back = parse_mps(&text);
        let original = &known.problem;
        assert_eq!(back.sense, original.sense);
        assert_eq!(back.objective_offset, original.objective_offset);
        assert_eq!(back.num_columns(), original.num_columns());
        assert_eq!(back.num_rows(), original.num_rows());
        for (a, b) in back.columns.iter().zip(&original.columns) {
            assert_eq!(
                (a.lower, a.upper, a.cost, a.integer),
                (b.lower, b.upper, b.cost, b.integer),
                "{}: column {}",
                original.name,
                b.name
            );
        }
        for (a, b) in back.rows.iter().zip(&original.rows) {
            assert_eq!((a.lower, a.upper), (b.lower, b.upper), "row {}", b.name);
            let mut ca = a.coefficients.clone();
            let mut cb = b.coefficients.clone();
            ca.sort_by_key(|c| c.0);
            cb.sort_by_key(|c| c.0);
            assert_eq!(ca, cb, "row {}", b.name);
        }
        let read = Known {
            problem: back,
            objective: known.objective,
            solution: known.solution.clone(),
        };
        assert_optimal(
            solver,
            &read,
            &solve(solver, &read.problem, &SolveOptions::default()),
        );
    }
}

/// (11) Malformed problems are errors before the backend runs; a problem without columns
/// is answered without it.
pub fn malformed_and_empty(_: &BackendEntry, solver: &dyn MilpSolver) {
    let mut bad = knapsack().problem;
    bad.rows[0].coefficients.push((99, 1.0));
    assert!(solver.solve(&bad, &SolveOptions::default()).is_err());
    let mut bad = knapsack().problem;
    bad.columns[0].lower = 2.0;
    assert!(solver.solve(&bad, &SolveOptions::default()).is_err());
    let mut bad = knapsack().problem;
    bad.rows[0].coefficients.push((0, 1.0));
    assert!(solver.solve(&bad, &SolveOptions::default()).is_err());

    let mut empty = MilpProblem::new("no_columns");
    empty.objective_offset = 4.0;
    empty.add_row("trivial", -1.0, 1.0, vec![]);
    let result = solve(solver, &empty, &SolveOptions::default());
    assert_eq!(result.status, TerminationStatus::Optimal);
    assert_eq!(result.objective, Some(4.0));
    empty.add_row("impossible", 1.0, 2.0, vec![]);
    let result = solve(solver, &empty, &SolveOptions::default());
    assert_eq!(result.status, TerminationStatus::Infeasible);
}
