//! The HiGHS backend: solves a [`MilpProblem`] (LP or MILP) with HiGHS's dual simplex and
//! branch-and-cut, through the `highs` crate (which builds HiGHS from source through
//! `highs-sys`; this build carries HiGHS 1.15). The crate builds the model (column-wise
//! matrix, bounds, integrality); the few calls it does not wrap (objective offset, the
//! interrupt callback, the run itself, info values) go through `highs-sys` on the model's
//! handle, so that a failed run keeps its handle and its diagnosis.
//!
//! # How options map
//!
//! - `time_limit` is wall-clock. It is passed as HiGHS's `time_limit` (HiGHS measures wall
//!   time) for what is left of it when HiGHS starts, and enforced here as well: an interrupt
//!   callback (simplex, IPM and MIP) stops the run if HiGHS has not stopped 5% + 0.1 s after
//!   the deadline. Either way the status carries [`Limit::Time`]. Building the model counts
//!   against the limit. HiGHS calls no interrupt callback in its MIP setup (presolve,
//!   probing, before the root LP: 0.5 s of the 1 s test in `tests/limits.rs` on 2 shared
//!   cores), so there only HiGHS's own time checks stop it; on 2 cores shared with another
//!   test binary a run once spent 2.87 s against a 1 s limit before its first simplex
//!   iteration.
//! - `interrupt` (a stop request: Ctrl-C in `glassbox run`) is checked by the same callback;
//!   the run stops at HiGHS's next check with [`Limit::Interrupted`].
//! - `relative_gap` / `absolute_gap` -> `mip_rel_gap` / `mip_abs_gap`, defaulting to
//!   [`glassbox_core::milp::DEFAULT_RELATIVE_GAP`] / [`glassbox_core::milp::DEFAULT_ABSOLUTE_GAP`].
//! - `tolerance` -> `primal_feasibility_tolerance`, `dual_feasibility_tolerance` and
//!   `mip_feasibility_tolerance`; `integrality_tolerance` -> `mip_feasibility_tolerance`
//!   (HiGHS's integrality tolerance; it overrides `tolerance` there).
//! - `iteration_limit` -> `simplex_iteration_limit` and `ipm_iteration_limit` for an LP. A
//!   MILP is refused: HiGHS has no limit on the total LP iterations of a branch-and-bound
//!   (use `time_limit`, or the raw option `mip_max_nodes`).
//! - `threads` -> `threads`. HiGHS keeps one task scheduler per calling thread and refuses a
//!   run whose `threads` differs from the scheduler's; this backend remembers what each
//!   thread's scheduler was made for and resets it (`Highs_resetGlobalScheduler`) when a
//!   solve on that thread asks for another count. Unset: HiGHS's default (half the cores).
//! - `seed` -> `random_seed` (modulo 2^31 - 1).
//! - `verbosity` 0 and 1 -> `output_flag false` (nothing is printed); 2 and more ->
//!   HiGHS's log on stdout.
//! - a warm start -> `Highs_setSolution` with its primal point (a MIP start; HiGHS checks
//!   it and, if it is feasible, starts with it as incumbent). Multipliers are ignored.
//! - `raw` options (checked against [`OPTIONS`]) are set last and override the mappings.
//!
//! # Statuses
//!
//! `Optimal` (within the gaps), `Infeasible` and `Unbounded` map to themselves;
//! `ReachedTimeLimit` and an interrupt by the deadline to [`Limit::Time`],
//! `ReachedIterationLimit` to [`Limit::Iteration`], `ReachedSolutionLimit` to
//! [`Limit::Node`] when the node count reached `mip_max_nodes` (HiGHS reports node, leaf and
//! improving-solution limits alike) and [`Limit::Other`] otherwise, objective bound and
//! target and the memory limit to [`Limit::Other`]; each as `FeasibleAtLimit` when HiGHS has
//! a feasible point, `NoSolutionAtLimit` otherwise. `UnboundedOrInfeasible` is settled by
//! solving the problem again with a zero objective: feasible means unbounded, infeasible
//! means infeasible; `raw_status` says that this was done. `SolveError` is a
//! [`TerminationStatus::NumericalError`]; load, model, presolve and postsolve errors and
//! `Unknown` are [`TerminationStatus::Error`].
//!
//! Before HiGHS sees a problem, [`milp::presolve`] answers problems without columns and
//! rounds the bounds of integer columns inward: HiGHS 1.15 returns a wrong "optimal" point
//! when an integer column has a fractional upper bound.
//!
//! HiGHS instances are independent: solves run in parallel on separate threads without a
//! lock.
//!
//! Depends on the core (`milp`, `options`, `result`, `solver`, `registry`) only.

use glassbox_core::backend::{BackendEntry, Constructor};
use glassbox_core::milp::{self, BackendReport, MilpProblem, Sense};
use glassbox_core::options::{check_raw_options, OptionKind, OptionSpec, RawOptionValue};
use glassbox_core::solver::{Capabilities, MilpSolver};
use glassbox_core::{
    deadline_passed, GlassboxError, Limit, Result, SolveOptions, SolveResult, TerminationStatus,
};
use highs_sys as sys;
use std::cell::Cell;
use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The registry name of this backend.
pub const NAME: &str = "highs";

/// What HiGHS can do.
pub const CAPABILITIES: Capabilities = Capabilities {
    integers: true,
    constraints: true,
    exact_hessian: false,
    warm_start: true,
    warm_start_duals: false,
    dual_bound: true,
    gpu: false,
    newton_steps: false,
    tensor_objective_only: false,
};

/// The raw options this backend accepts: a curated subset of HiGHS's options, typed.
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "presolve",
        kind: OptionKind::Choice(&["choose", "on", "off"]),
        help: "presolve (default choose)",
    },
    OptionSpec {
        name: "solver",
        kind: OptionKind::Choice(&["choose", "simplex", "ipm"]),
        help: "LP algorithm of an LP (default choose; a MILP uses the simplex method)",
    },
    OptionSpec {
        name: "parallel",
        kind: OptionKind::Choice(&["choose", "on", "off"]),
        help: "parallel dual simplex (default choose)",
    },
    OptionSpec {
        name: "run_crossover",
        kind: OptionKind::Choice(&["choose", "on", "off"]),
        help: "crossover after the interior-point method (default on)",
    },
    OptionSpec {
        name: "simplex_strategy",
        kind: OptionKind::Int,
        help: "simplex variant: 0 choose, 1 dual, 2 dual (tasks), 3 dual (multi), 4 primal (default 1)",
    },
    OptionSpec {
        name: "mip_max_nodes",
        kind: OptionKind::Int,
        help: "branch-and-bound node limit, >= 0 (a node limit status)",
    },
    OptionSpec {
        name: "mip_max_leaves",
        kind: OptionKind::Int,
        help: "branch-and-bound leaf limit, >= 0",
    },
    OptionSpec {
        name: "mip_max_stall_nodes",
        kind: OptionKind::Int,
        help: "nodes without improvement before stopping, >= 0",
    },
    OptionSpec {
        name: "mip_max_improving_sols",
        kind: OptionKind::Int,
        help: "improving solutions before stopping, >= 1",
    },
    OptionSpec {
        name: "mip_pool_soft_limit",
        kind: OptionKind::Int,
        help: "soft limit on the cut pool's size, >= 1 (default 10000)",
    },
    OptionSpec {
        name: "mip_lp_age_limit",
        kind: OptionKind::Int,
        help: "age after which a cut leaves the LP, 0 to 32767 (default 10)",
    },
    OptionSpec {
        name: "mip_feasibility_tolerance",
        kind: OptionKind::Float,
        help: "integrality and feasibility tolerance of the MIP solver, > 0 (default 1e-6)",
    },
    OptionSpec {
        name: "primal_feasibility_tolerance",
        kind: OptionKind::Float,
        help: "primal feasibility tolerance, > 0 (default 1e-7)",
    },
    OptionSpec {
        name: "dual_feasibility_tolerance",
        kind: OptionKind::Float,
        help: "dual feasibility tolerance, > 0 (default 1e-7)",
    },
    OptionSpec {
        name: "mip_heuristic_effort",
        kind: OptionKind::Float,
        help: "share of effort spent in primal heuristics, in [0, 1] (default 0.05)",
    },
    OptionSpec {
        name: "mip_heuristic_run_feasibility_jump",
        kind: OptionKind::Bool,
        help: "run the feasibility jump heuristic (default true)",
    },
    OptionSpec {
        name: "mip_heuristic_run_rins",
        kind: OptionKind::Bool,
        help: "run the RINS heuristic (default true)",
    },
    OptionSpec {
        name: "mip_heuristic_run_rens",
        kind: OptionKind::Bool,
        help: "run the RENS heuristic (default true)",
    },
    OptionSpec {
        name: "mip_heuristic_run_root_reduced_cost",
        kind: OptionKind::Bool,
        help: "run the root reduced-cost heuristic (default true)",
    },
    OptionSpec {
        name: "mip_heuristic_run_zi_round",
        kind: OptionKind::Bool,
        help: "run the ZI rounding heuristic (default false)",
    },
    OptionSpec {
        name: "mip_heuristic_run_shifting",
        kind: OptionKind::Bool,
        help: "run the shifting heuristic (default false)",
    },
    OptionSpec {
        name: "mip_detect_symmetry",
        kind: OptionKind::Bool,
        help: "detect and exploit symmetry (default true)",
    },
    OptionSpec {
        name: "mip_allow_restart",
        kind: OptionKind::Bool,
        help: "allow restarts of the branch-and-bound (default true)",
    },
    OptionSpec {
        name: "mip_allow_cut_separation_at_nodes",
        kind: OptionKind::Bool,
        help: "separate cuts below the root (default true)",
    },
    OptionSpec {
        name: "objective_bound",
        kind: OptionKind::Float,
        help: "stop once the dual bound proves no solution is better than this (an 'other' limit)",
    },
    OptionSpec {
        name: "objective_target",
        kind: OptionKind::Float,
        help: "stop once an LP reaches this objective (an 'other' limit)",
    },
    OptionSpec {
        name: "small_matrix_value",
        kind: OptionKind::Float,
        help: "coefficients below this in magnitude are dropped, > 0 (default 1e-9)",
    },
    OptionSpec {
        name: "large_matrix_value",
        kind: OptionKind::Float,
        help: "coefficients above this in magnitude are an error, > 0 (default 1e15)",
    },
    OptionSpec {
        name: "allow_unbounded_or_infeasible",
        kind: OptionKind::Bool,
        help: "let HiGHS stop at 'unbounded or infeasible' (glassbox then settles it; default false)",
    },
];

/// The registry entry of this backend.
pub fn entry() -> BackendEntry {
    BackendEntry {
        name: NAME,
        description: "HiGHS 1.15 dual simplex and branch-and-cut for LPs and MILPs",
        capabilities: CAPABILITIES,
        options: OPTIONS,
        constructor: Constructor::Milp(|| Box::new(HighsSolver::new())),
        check_options,
    }
}

/// The HiGHS backend. It holds no state: every solve creates and frees its own HiGHS
/// instance, so one value can be shared by threads, which solve in parallel.
#[derive(Clone, Copy, Debug, Default)]
pub struct HighsSolver;

impl HighsSolver {
    /// A new HiGHS backend.
    pub fn new() -> Self {
        HighsSolver
    }
}

impl MilpSolver for HighsSolver {
    fn name(&self) -> &str {
        NAME
    }

    fn capabilities(&self) -> Capabilities {
        CAPABILITIES
    }

    fn solve(&self, problem: &MilpProblem, options: &SolveOptions) -> Result<SolveResult> {
        check_options(options)?;
        milp::validate(problem)?;
        check_size(problem)?;
        if options.iteration_limit.is_some() && problem.num_integers() > 0 {
            return Err(GlassboxError::Capability {
                solver: NAME.to_string(),
                what: "limit the LP iterations of a MILP (HiGHS has no such limit): use \
                       time_limit or the raw option mip_max_nodes"
                    .to_string(),
            });
        }
        let start = milp::mip_start(problem, options)?;
        let original = problem;
        let problem = match milp::presolve(NAME, problem) {
            Ok(problem) => problem,
            Err(answer) => return Ok(*answer),
        };
        let problem = problem.as_ref();
        let clock = Instant::now();
        let deadline = options.deadline_from(clock);
        let mut report = run(problem, options, start.as_deref(), deadline)?;
        if report.raw_status == UNBOUNDED_OR_INFEASIBLE {
            report = settle_unbounded_or_infeasible(problem, options, deadline)?;
        }
        let bound = options.raw.get("objective_bound");
        if let Some(cutoff) = bound.and_then(RawOptionValue::as_number) {
            report = milp::under_user_cutoff(original, report, "objective_bound", cutoff);
        }
        Ok(milp::assemble_result(
            NAME,
            original,
            report,
            start.as_deref(),
            clock.elapsed().as_secs_f64(),
        ))
    }
}

/// HiGHS's name of the status that [`settle_unbounded_or_infeasible`] resolves.
const UNBOUNDED_OR_INFEASIBLE: &str = "Unbounded or infeasible";

/// Checks the typed and raw options beyond their types: ranges HiGHS would refuse (and
/// print about) and integers that must fit HiGHS's 32-bit integers.
fn check_options(options: &SolveOptions) -> Result<()> {
    options.validate()?;
    check_raw_options(NAME, OPTIONS, &options.raw)?;
    for (name, value) in &options.raw {
        let invalid = |message: String| GlassboxError::InvalidOption {
            solver: NAME.to_string(),
            option: name.clone(),
            message,
        };
        let number = match value {
            RawOptionValue::Int(i) => *i as f64,
            RawOptionValue::Float(x) => *x,
            _ => continue,
        };
        if let RawOptionValue::Int(i) = value {
            if c_int::try_from(*i).is_err() {
                return Err(invalid(format!("{i} does not fit in a 32-bit integer")));
            }
        }
        let (ok, expected) = match name.as_str() {
            "simplex_strategy" => ((0.0..=4.0).contains(&number), "in [0, 4]"),
            "mip_max_nodes" | "mip_max_leaves" | "mip_max_stall_nodes" => (number >= 0.0, ">= 0"),
            "mip_max_improving_sols" | "mip_pool_soft_limit" => (number >= 1.0, ">= 1"),
            "mip_lp_age_limit" => ((0.0..=32767.0).contains(&number), "in [0, 32767]"),
            "mip_heuristic_effort" => ((0.0..=1.0).contains(&number), "in [0, 1]"),
            "objective_bound" | "objective_target" => (true, ""),
            _ => (number > 0.0, "> 0"),
        };
        if !ok {
            return Err(invalid(format!("must be {expected}, got {number}")));
        }
    }
    Ok(())
}

/// HiGHS indexes with 32-bit integers.
fn check_size(problem: &MilpProblem) -> Result<()> {
    for (what, count) in [
        ("columns", problem.num_columns()),
        ("rows", problem.num_rows()),
        ("nonzeros", problem.num_nonzeros()),
    ] {
        if c_int::try_from(count).is_err() {
            return Err(GlassboxError::InvalidProblem(format!(
                "{}: {count} {what} is more than HiGHS can index ({})",
                problem.name,
                c_int::MAX
            )));
        }
    }
    Ok(())
}

thread_local! {
    /// What HiGHS's task scheduler on this thread was made for: `None` before any run here,
    /// `Some(None)` for HiGHS's default thread count, `Some(Some(t))` for `threads = t`.
    static SCHEDULER: Cell<Option<Option<usize>>> = const { Cell::new(None) };
}

/// Makes this thread's HiGHS scheduler fit a run with `threads`.
fn prepare_scheduler(threads: Option<usize>) {
    let Some(wanted) = threads else {
        // threads = 0 accepts any scheduler.
        if SCHEDULER.get().is_none() {
            SCHEDULER.set(Some(None));
        }
        return;
    };
    if let Some(previous) = SCHEDULER.get() {
        if previous != Some(wanted) {
            // SAFETY: no HiGHS run is in progress on this thread (runs are synchronous), and
            // the scheduler is this thread's own.
            unsafe { sys::Highs_resetGlobalScheduler(1) };
        }
    }
    SCHEDULER.set(Some(Some(wanted)));
}

/// Shared with the interrupt callback during a run.
struct CallbackState {
    deadline: Option<Instant>,
    /// Whether the deadline stopped the run (a stop request's interrupt leaves it false).
    interrupted: AtomicBool,
    /// A stop request from outside (`SolveOptions::interrupt`).
    stop: Option<glassbox_core::Interrupt>,
}

/// HiGHS's callback: asks HiGHS to stop once the deadline has passed or a stop was
/// requested.
unsafe extern "C" fn interrupt_callback(
    _callback_type: c_int,
    _message: *const c_char,
    _data_out: *const sys::HighsCallbackDataOut,
    data_in: *mut sys::HighsCallbackDataIn,
    user_data: *mut c_void,
) {
    if user_data.is_null() || data_in.is_null() {
        return;
    }
    // SAFETY: `user_data` is the `CallbackState` passed to `Highs_setCallback`, which lives
    // until the run returns; it is only read here (the flag is atomic).
    let state = unsafe { &*(user_data as *const CallbackState) };
    if deadline_passed(state.deadline) {
        state.interrupted.store(true, Ordering::Relaxed);
        // SAFETY: HiGHS passes a valid input record for the interrupt callbacks.
        unsafe { (*data_in).user_interrupt = 1 };
    } else if state.stop.as_ref().is_some_and(|s| s.requested()) {
        // SAFETY: as above.
        unsafe { (*data_in).user_interrupt = 1 };
    }
}

/// Builds the HiGHS model, sets the options, runs HiGHS and reads its answer.
fn run(
    problem: &MilpProblem,
    options: &SolveOptions,
    start: Option<&[f64]>,
    deadline: Option<Instant>,
) -> Result<BackendReport> {
    let is_mip = problem.num_integers() > 0;
    let mut rows = highs::RowProblem::default();
    let columns: Vec<highs::Col> = problem
        .columns
        .iter()
        .map(|c| rows.add_column_with_integrality(c.cost, c.lower..=c.upper, c.integer))
        .collect();
    for row in &problem.rows {
        rows.add_row(
            row.lower..=row.upper,
            row.coefficients.iter().map(|&(j, a)| (columns[j], a)),
        );
    }
    let mut model = highs::Model::try_new(rows).map_err(|status| {
        GlassboxError::InvalidProblem(format!(
            "{}: HiGHS refused the model ({status:?})",
            problem.name
        ))
    })?;
    model.set_sense(match problem.sense {
        Sense::Minimize => highs::Sense::Minimise,
        Sense::Maximize => highs::Sense::Maximise,
    });
    let remaining = match deadline {
        None => None,
        Some(d) => match d.checked_duration_since(Instant::now()) {
            Some(left) if !left.is_zero() => Some(left.as_secs_f64()),
            _ => {
                return Ok(BackendReport {
                    status: TerminationStatus::NoSolutionAtLimit(Limit::Time),
                    primal: None,
                    dual_bound: None,
                    iterations: 0,
                    nodes: Some(0),
                    raw_status: "time limit reached before HiGHS started".to_string(),
                })
            }
        },
    };
    set_options(&mut model, options, remaining, is_mip)?;
    if let Some(x) = start {
        model
            .try_set_solution(Some(x), None, None, None)
            .map_err(|status| {
                GlassboxError::InvalidProblem(format!(
                    "{}: HiGHS refused the MIP start ({status:?})",
                    problem.name
                ))
            })?;
    }
    let ptr = model.as_mut_ptr();
    // SAFETY: `ptr` is the live HiGHS instance owned by `model`.
    let status = unsafe { sys::Highs_changeObjectiveOffset(ptr, problem.objective_offset) };
    if status == sys::STATUS_ERROR {
        return Err(GlassboxError::InvalidProblem(format!(
            "{}: HiGHS refused the objective offset {}",
            problem.name, problem.objective_offset
        )));
    }

    // glassbox's own deadline is a backstop a little after HiGHS's time limit, so that
    // HiGHS normally stops by itself (and says so).
    let state = CallbackState {
        deadline: deadline.map(|d| match remaining {
            Some(left) => d + Duration::from_secs_f64(0.05 * left + 0.1),
            None => d,
        }),
        interrupted: AtomicBool::new(false),
        stop: options.interrupt.clone(),
    };
    let watched = deadline.is_some() || state.stop.is_some();
    if watched {
        // SAFETY: `ptr` is live. `state` outlives the run, and the callback is unset below,
        // right after the run, so HiGHS never holds a dangling pointer to it.
        unsafe {
            sys::Highs_setCallback(
                ptr,
                Some(interrupt_callback),
                &state as *const CallbackState as *mut c_void,
            );
            for kind in [
                sys::kHighsCallbackSimplexInterrupt,
                sys::kHighsCallbackIpmInterrupt,
                sys::kHighsCallbackMipInterrupt,
            ] {
                sys::Highs_startCallback(ptr, kind);
            }
        }
    }
    prepare_scheduler(options.threads);
    // SAFETY: `ptr` is live; the callback data lives until after the run.
    let run_status = unsafe { sys::Highs_run(ptr) };
    if watched {
        // SAFETY: as above; after this HiGHS keeps no pointer to `state`.
        unsafe {
            for kind in [
                sys::kHighsCallbackSimplexInterrupt,
                sys::kHighsCallbackIpmInterrupt,
                sys::kHighsCallbackMipInterrupt,
            ] {
                sys::Highs_stopCallback(ptr, kind);
            }
            sys::Highs_setCallback(ptr, None, std::ptr::null_mut());
        }
    }
    let interrupted = state.interrupted.load(Ordering::Relaxed);
    Ok(read_answer(
        &model,
        problem,
        options,
        is_mip,
        run_status,
        interrupted,
    ))
}

/// Sets the mapped typed options, then the raw ones.
fn set_options(
    model: &mut highs::Model,
    options: &SolveOptions,
    remaining_seconds: Option<f64>,
    is_mip: bool,
) -> Result<()> {
    fn set<V: highs::HighsOptionValue>(
        model: &mut highs::Model,
        name: &str,
        value: V,
    ) -> Result<()> {
        model
            .try_set_option(name, value)
            .map_err(|_| GlassboxError::InvalidOption {
                solver: NAME.to_string(),
                option: name.to_string(),
                message: "HiGHS refused this option or its value".to_string(),
            })
    }
    // The crate made the model quiet; verbosity 2 turns the log on.
    if options.verbosity >= 2 {
        set(model, "output_flag", true)?;
        set(model, "log_to_console", true)?;
    }
    if let Some(seconds) = remaining_seconds {
        set(model, "time_limit", seconds)?;
    }
    set(
        model,
        "mip_rel_gap",
        options.relative_gap.unwrap_or(milp::DEFAULT_RELATIVE_GAP),
    )?;
    set(
        model,
        "mip_abs_gap",
        options.absolute_gap.unwrap_or(milp::DEFAULT_ABSOLUTE_GAP),
    )?;
    if let Some(tol) = options.tolerance {
        set(model, "primal_feasibility_tolerance", tol)?;
        set(model, "dual_feasibility_tolerance", tol)?;
        set(model, "mip_feasibility_tolerance", tol)?;
    }
    if let Some(tol) = options.integrality_tolerance {
        set(model, "mip_feasibility_tolerance", tol)?;
    }
    if let Some(limit) = options.iteration_limit {
        if !is_mip {
            let limit = limit.min(c_int::MAX as u64) as c_int;
            set(model, "simplex_iteration_limit", limit)?;
            set(model, "ipm_iteration_limit", limit)?;
        }
    }
    if let Some(threads) = options.threads {
        set(model, "threads", threads.min(c_int::MAX as usize) as c_int)?;
    }
    if let Some(seed) = options.seed {
        set(model, "random_seed", (seed % (c_int::MAX as u64)) as c_int)?;
    }
    for (name, value) in &options.raw {
        let kind = OPTIONS
            .iter()
            .find(|o| o.name == name)
            .map(|o| o.kind)
            .unwrap_or(OptionKind::Float);
        match (kind, value) {
            (OptionKind::Int, RawOptionValue::Int(i)) => set(model, name, *i as c_int)?,
            (OptionKind::Float, RawOptionValue::Int(i)) => set(model, name, *i as f64)?,
            (_, RawOptionValue::Float(x)) => set(model, name, *x)?,
            (_, RawOptionValue::Bool(b)) => set(model, name, *b)?,
            (_, RawOptionValue::Str(s)) => set(model, name, s.as_str())?,
            (_, RawOptionValue::Int(i)) => set(model, name, *i as c_int)?,
        }
    }
    Ok(())
}

/// Reads an integer info value, if HiGHS has it.
fn int_info(ptr: *const c_void, name: &str) -> Option<i64> {
    let name = CString::new(name).ok()?;
    let mut value: sys::HighsInt = 0;
    // SAFETY: `ptr` is live, `name` is a C string, `value` is written on success only.
    let status = unsafe { sys::Highs_getIntInfoValue(ptr, name.as_ptr(), &mut value) };
    (status == sys::STATUS_OK).then_some(value as i64)
}

/// Reads a 64-bit integer info value, if HiGHS has it.
fn int64_info(ptr: *const c_void, name: &str) -> Option<i64> {
    let name = CString::new(name).ok()?;
    let mut value: i64 = 0;
    // SAFETY: as for `int_info`.
    let status = unsafe { sys::Highs_getInt64InfoValue(ptr, name.as_ptr(), &mut value) };
    (status == sys::STATUS_OK).then_some(value)
}

/// Reads a floating-point info value, if HiGHS has it.
fn double_info(ptr: *const c_void, name: &str) -> Option<f64> {
    let name = CString::new(name).ok()?;
    let mut value = 0.0;
    // SAFETY: as for `int_info`.
    let status = unsafe { sys::Highs_getDoubleInfoValue(ptr, name.as_ptr(), &mut value) };
    (status == sys::STATUS_OK).then_some(value)
}

/// HiGHS's name of a model status.
fn model_status_name(status: c_int) -> &'static str {
    match status {
        sys::MODEL_STATUS_NOTSET => "Not set",
        sys::MODEL_STATUS_LOAD_ERROR => "Load error",
        sys::MODEL_STATUS_MODEL_ERROR => "Model error",
        sys::MODEL_STATUS_PRESOLVE_ERROR => "Presolve error",
        sys::MODEL_STATUS_SOLVE_ERROR => "Solve error",
        sys::MODEL_STATUS_POSTSOLVE_ERROR => "Postsolve error",
        sys::MODEL_STATUS_MODEL_EMPTY => "Empty",
        sys::MODEL_STATUS_OPTIMAL => "Optimal",
        sys::MODEL_STATUS_INFEASIBLE => "Infeasible",
        sys::MODEL_STATUS_UNBOUNDED_OR_INFEASIBLE => UNBOUNDED_OR_INFEASIBLE,
        sys::MODEL_STATUS_UNBOUNDED => "Unbounded",
        sys::MODEL_STATUS_OBJECTIVE_BOUND => "Bound on objective reached",
        sys::MODEL_STATUS_OBJECTIVE_TARGET => "Target for objective reached",
        sys::MODEL_STATUS_REACHED_TIME_LIMIT => "Time limit reached",
        sys::MODEL_STATUS_REACHED_ITERATION_LIMIT => "Iteration limit reached",
        sys::MODEL_STATUS_UNKNOWN => "Unknown",
        sys::MODEL_STATUS_REACHED_SOLUTION_LIMIT => "Solution limit reached",
        sys::MODEL_STATUS_REACHED_INTERRUPT => "Interrupted by user",
        sys::MODEL_STATUS_REACHED_MEMORY_LIMIT => "Memory limit reached",
        _ => "Unrecognised HiGHS status",
    }
}

/// Maps HiGHS's answer to a [`BackendReport`].
fn read_answer(
    model: &highs::Model,
    problem: &MilpProblem,
    options: &SolveOptions,
    is_mip: bool,
    run_status: c_int,
    interrupted: bool,
) -> BackendReport {
    let ptr = model.as_ptr();
    // SAFETY: `ptr` is live.
    let model_status = unsafe { sys::Highs_getModelStatus(ptr) };
    let has_point = int_info(ptr, "primal_solution_status") == Some(2);
    let nodes = if is_mip {
        int64_info(ptr, "mip_node_count").map(|n| n.max(0) as u64)
    } else {
        Some(0)
    };
    let iterations = ["simplex_iteration_count", "ipm_iteration_count"]
        .iter()
        .filter_map(|name| int_info(ptr, name))
        .map(|n| n.max(0) as u64)
        .sum();
    let mut raw_status = model_status_name(model_status).to_string();
    if run_status == sys::STATUS_ERROR {
        raw_status.push_str(" (Highs_run returned an error)");
    }
    let at_limit = |limit: Limit| {
        if has_point {
            TerminationStatus::FeasibleAtLimit(limit)
        } else {
            TerminationStatus::NoSolutionAtLimit(limit)
        }
    };
    let status = match model_status {
        sys::MODEL_STATUS_OPTIMAL | sys::MODEL_STATUS_MODEL_EMPTY => TerminationStatus::Optimal,
        sys::MODEL_STATUS_INFEASIBLE => TerminationStatus::Infeasible,
        sys::MODEL_STATUS_UNBOUNDED => TerminationStatus::Unbounded,
        // Settled by the caller.
        sys::MODEL_STATUS_UNBOUNDED_OR_INFEASIBLE => TerminationStatus::Error,
        sys::MODEL_STATUS_REACHED_TIME_LIMIT => at_limit(Limit::Time),
        sys::MODEL_STATUS_REACHED_INTERRUPT if interrupted => {
            raw_status.push_str(" (glassbox's deadline)");
            at_limit(Limit::Time)
        }
        sys::MODEL_STATUS_REACHED_INTERRUPT => at_limit(Limit::Interrupted),
        sys::MODEL_STATUS_REACHED_ITERATION_LIMIT => at_limit(Limit::Iteration),
        sys::MODEL_STATUS_REACHED_SOLUTION_LIMIT => {
            let node_limit = match options.raw.get("mip_max_nodes") {
                Some(RawOptionValue::Int(limit)) => nodes.is_some_and(|n| n as i64 >= *limit),
                _ => false,
            };
            at_limit(if node_limit {
                Limit::Node
            } else {
                Limit::Other
            })
        }
        sys::MODEL_STATUS_OBJECTIVE_BOUND
        | sys::MODEL_STATUS_OBJECTIVE_TARGET
        | sys::MODEL_STATUS_REACHED_MEMORY_LIMIT => at_limit(Limit::Other),
        sys::MODEL_STATUS_SOLVE_ERROR => TerminationStatus::NumericalError,
        _ => TerminationStatus::Error,
    };
    let primal = if has_point || status == TerminationStatus::Optimal {
        let mut x = vec![0.0; problem.columns.len()];
        // SAFETY: `x` has one slot per column; the other outputs are not requested.
        unsafe {
            sys::Highs_getSolution(
                ptr,
                x.as_mut_ptr(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        Some(x)
    } else {
        None
    };
    let dual_bound = if is_mip {
        double_info(ptr, "mip_dual_bound")
    } else if status == TerminationStatus::Optimal {
        double_info(ptr, "objective_function_value")
    } else {
        None
    };
    BackendReport {
        status,
        primal,
        dual_bound,
        iterations,
        nodes,
        raw_status,
    }
}

/// Settles HiGHS's "unbounded or infeasible" by solving the problem with a zero objective
/// in the time that is left.
fn settle_unbounded_or_infeasible(
    problem: &MilpProblem,
    options: &SolveOptions,
    deadline: Option<Instant>,
) -> Result<BackendReport> {
    let feasibility = milp::feasibility_problem(problem);
    let check = run(&feasibility, options, None, deadline)?;
    Ok(milp::settle_by_feasibility_check(
        UNBOUNDED_OR_INFEASIBLE,
        check,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_problems::{parity, small_lp, small_mip};
    use crate::test_support::{self, raw};

    const INF: f64 = f64::INFINITY;

    fn solve(problem: &MilpProblem, options: &SolveOptions) -> SolveResult {
        HighsSolver::new().solve(problem, options).unwrap()
    }

    #[test]
    fn the_registry_entry_matches_the_solver() {
        fn assert_send_sync<T: Send + Sync + Clone>() {}
        assert_send_sync::<HighsSolver>();
        test_support::check_entry(&entry(), HighsSolver::new().name(), "milp");
    }

    #[test]
    fn every_declared_option_is_accepted() {
        for spec in OPTIONS {
            let value = match spec.kind {
                OptionKind::Choice(choices) => RawOptionValue::Str(choices[0].to_string()),
                OptionKind::Int => RawOptionValue::Int(match spec.name {
                    "simplex_strategy" => 1,
                    "mip_lp_age_limit" => 10,
                    _ => 1000,
                }),
                OptionKind::Float => RawOptionValue::Float(match spec.name {
                    "mip_heuristic_effort" => 0.1,
                    "objective_bound" | "objective_target" => 1000.0,
                    "large_matrix_value" => 1e12,
                    "small_matrix_value" => 1e-10,
                    _ => 1e-6,
                }),
                OptionKind::Bool => RawOptionValue::Bool(true),
            };
            for problem in [small_mip(), small_lp()] {
                let options = SolveOptions {
                    raw: raw(&[(spec.name, value.clone())]),
                    ..SolveOptions::default()
                };
                let result = HighsSolver::new()
                    .solve(&problem, &options)
                    .unwrap_or_else(|e| panic!("{} = {value}: {e}", spec.name));
                assert!(
                    result.status.has_solution(),
                    "{} = {value} on {}: {} ({})",
                    spec.name,
                    problem.name,
                    result.status,
                    result.raw_status
                );
            }
        }
        for (name, value) in [
            ("simplex_strategy", RawOptionValue::Int(7)),
            ("mip_max_nodes", RawOptionValue::Int(-1)),
            ("mip_max_nodes", RawOptionValue::Int(1 << 40)),
            ("mip_heuristic_effort", RawOptionValue::Float(2.0)),
            ("mip_feasibility_tolerance", RawOptionValue::Float(0.0)),
            ("presolve", RawOptionValue::Str("maybe".into())),
        ] {
            let options = SolveOptions {
                raw: raw(&[(name, value.clone())]),
                ..SolveOptions::default()
            };
            let err = HighsSolver::new()
                .solve(&small_mip(), &options)
                .expect_err(&format!("{name} = {value}"));
            assert!(err.to_string().contains(name), "{err}");
        }
    }

    #[test]
    fn iteration_limits_apply_to_lps_only() {
        let options = SolveOptions {
            iteration_limit: Some(1),
            ..SolveOptions::default()
        };
        let err = HighsSolver::new()
            .solve(&small_mip(), &options)
            .unwrap_err();
        assert!(err.to_string().contains("mip_max_nodes"), "{err}");
        let options = SolveOptions {
            iteration_limit: Some(1),
            raw: raw(&[("presolve", RawOptionValue::Str("off".into()))]),
            ..SolveOptions::default()
        };
        let result = solve(&small_lp(), &options);
        assert_eq!(
            result.status.limit(),
            Some(Limit::Iteration),
            "{} ({})",
            result.status,
            result.raw_status
        );
    }

    #[test]
    fn node_limit_is_reported_as_such() {
        let p = parity(15);
        let options = SolveOptions {
            raw: raw(&[
                ("mip_max_nodes", RawOptionValue::Int(0)),
                ("presolve", RawOptionValue::Str("off".into())),
            ]),
            ..SolveOptions::default()
        };
        let result = solve(&p, &options);
        eprintln!("{} ({})", result.status, result.raw_status);
        assert!(
            matches!(
                result.status,
                TerminationStatus::NoSolutionAtLimit(Limit::Node) | TerminationStatus::Infeasible
            ),
            "{} ({})",
            result.status,
            result.raw_status
        );
    }

    #[test]
    fn threads_may_change_between_solves_on_one_thread() {
        for threads in [Some(1), Some(2), None, Some(1), Some(2)] {
            let options = SolveOptions {
                threads,
                ..SolveOptions::default()
            };
            let result = solve(&small_mip(), &options);
            assert_eq!(
                result.status,
                TerminationStatus::Optimal,
                "threads {threads:?}: {}",
                result.raw_status
            );
            assert_eq!(result.objective, Some(13.0));
        }
    }

    /// The exported MPS and LP files, read by HiGHS's own readers, give the same optimum.
    #[test]
    fn highs_reads_the_exports_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut problems = vec![small_mip(), small_lp()];
        // Ranges, equalities, free and negative columns, an offset, minimization.
        let mut p = MilpProblem::new("mixed [test]");
        let x = p.add_column("x y", -INF, INF, 1.0, false);
        let y = p.add_column("y", -3.5, 4.0, -2.0, true);
        let z = p.add_binary("z", 0.5);
        let w = p.add_column("", 1.0, 1.0, 3.0, false);
        p.add_row("eq", 2.0, 2.0, vec![(x, 1.0), (y, 1.0), (w, 1.0)]);
        p.add_row("range", -1.0, 2.5, vec![(y, 2.0), (z, -1.0)]);
        p.add_row("ge", -10.0, INF, vec![(x, 1.0)]);
        p.add_row("free", -INF, INF, vec![(x, 1.0), (z, 1.0)]);
        p.objective_offset = -7.25;
        problems.push(p);
        for problem in &problems {
            let expected = solve(problem, &SolveOptions::default());
            assert_eq!(expected.status, TerminationStatus::Optimal);
            for ext in ["mps", "lp"] {
                let path = dir.path().join(format!("model.{ext}"));
                match ext {
                    "mps" => problem.write_mps(&path).unwrap(),
                    _ => problem.write_lp(&path).unwrap(),
                }
                let objective = read_and_solve(&path);
                assert!(
                    (objective - expected.objective.unwrap()).abs() < 1e-9,
                    "{} via {ext}: {objective} vs {:?}\n{}",
                    problem.name,
                    expected.objective,
                    std::fs::read_to_string(&path).unwrap()
                );
            }
        }
    }

    /// Reads a model file with HiGHS and solves it; the optimal objective.
    fn read_and_solve(path: &std::path::Path) -> f64 {
        let file = CString::new(path.to_str().unwrap()).unwrap();
        let mut model = highs::Model::new(highs::ColProblem::default());
        model.make_quiet();
        let ptr = model.as_mut_ptr();
        // SAFETY: `ptr` is live; `file` is a C string.
        unsafe {
            assert_ne!(sys::Highs_readModel(ptr, file.as_ptr()), sys::STATUS_ERROR);
            assert_ne!(sys::Highs_run(ptr), sys::STATUS_ERROR);
            assert_eq!(sys::Highs_getModelStatus(ptr), sys::MODEL_STATUS_OPTIMAL);
            sys::Highs_getObjectiveValue(ptr)
        }
    }

    /// Solves a few problems at verbosity 0, ending in every kind of status, when run as
    /// the child of [`nothing_is_printed_at_verbosity_0`]; does nothing otherwise.
    #[test]
    fn silent_child() {
        let Ok(mode) = std::env::var("GLASSBOX_HIGHS_CHILD") else {
            return;
        };
        let quiet = SolveOptions {
            verbosity: if mode == "loud" { 2 } else { 0 },
            ..SolveOptions::default()
        };
        let _ = solve(&small_mip(), &quiet);
        let _ = solve(&small_lp(), &quiet);
        let mut infeasible = small_mip();
        infeasible.add_row("sum", 100.0, INF, vec![(0, 1.0), (1, 1.0), (2, 1.0)]);
        let _ = solve(&infeasible, &quiet);
        let mut unbounded = small_lp();
        unbounded.rows.clear();
        unbounded.columns[0].upper = INF;
        let _ = solve(&unbounded, &quiet);
        let _ = solve(
            &small_mip(),
            &quiet.with_warm_start(Some(glassbox_core::WarmStart::primal(vec![1.0, 1.0, 0.0]))),
        );
        let _ = HighsSolver::new().solve(
            &small_mip(),
            &SolveOptions {
                raw: raw(&[("mip_feasibility_tolerance", RawOptionValue::Float(-1.0))]),
                ..quiet.clone()
            },
        );
    }

    /// The test that [`nothing_is_printed_at_verbosity_0`] runs in a child process.
    const CHILD: &str = "highs::tests::silent_child";

    fn run_child(mode: &str) -> (String, String) {
        test_support::run_child(CHILD, "GLASSBOX_HIGHS_CHILD", mode, None)
    }

    /// Runs [`silent_child`] in a child process (HiGHS writes to the C `stdout`, which the
    /// test harness does not capture) and checks that nothing but the harness's own lines
    /// was printed.
    #[test]
    fn nothing_is_printed_at_verbosity_0() {
        if std::env::var("GLASSBOX_HIGHS_CHILD").is_ok() {
            return;
        }
        let (stdout, stderr) = run_child("quiet");
        test_support::assert_nothing_printed(CHILD, &stdout, &stderr);
        let (stdout, _) = run_child("loud");
        assert!(
            stdout.contains("HiGHS"),
            "no HiGHS log at verbosity 2:\n{stdout}"
        );
    }
}
