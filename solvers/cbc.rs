//! The CBC backend: solves a [`MilpProblem`] (LP or MILP) with COIN-OR CBC's branch-and-cut
//! (Clp for the LPs), through the `coin_cbc` crate's raw model against Debian's
//! `coinor-libcbc-dev` (CBC 2.10).
//!
//! # How a solve runs
//!
//! CBC's C interface drives CBC's command-line solver (`CbcMain1`): every option is a
//! command-line parameter (`-name value`). Two consequences shape this file:
//! - For a problem without integer columns, CBC's C interface bypasses that driver and
//!   calls Clp directly, ignoring every parameter (time limit, log level, threads). This
//!   backend therefore gives an LP one extra integer column fixed at 0 (no cost, no
//!   coefficients; CBC's preprocessing removes it), so LPs and MILPs take the same, fully
//!   parametrized path. The extra column never appears in results.
//! - CBC is not thread-safe: `CbcMain1` keeps static state. The `coin_cbc` crate holds a
//!   process-wide lock while it creates, solves and frees a model (its default feature
//!   `singlethread-cbc`, which this build keeps); this backend holds its own process-wide
//!   lock around the whole solve as well, so that a solve knows when it starts. Concurrent
//!   CBC solves in one process are correct and take turns; `time_limit` and
//!   `wall_seconds` count from the moment a solve holds the lock. Run experiments in several
//!   processes to solve with CBC in parallel.
//!
//! # How options map
//!
//! - `time_limit` is wall-clock: CBC gets `-timeMode elapsed` (it counts CPU time
//!   otherwise) and `-seconds` with what is left of the limit. CBC checks the time between
//!   nodes and in its heuristics, and cannot be interrupted from outside (its C interface has
//!   no event handler and no interrupt in 2.10), so this backend also runs CBC on a worker
//!   thread and watches the deadline: if CBC has not returned 10% + 0.5 s after the limit,
//!   the solve returns [`Limit::Time`] at once, with the MIP start as incumbent when it is
//!   feasible, and CBC finishes in the background (the lock stays held until it does, so a
//!   later CBC solve waits for it). A limit is thus never exceeded by more than 20% + 1 s.
//! - `interrupt` (a stop request: Ctrl-C in `glassbox run`) is checked by the same watch,
//!   every 50 ms: the solve returns [`Limit::Interrupted`] at once (with the MIP start when
//!   it is feasible) and CBC finishes in the background, by its time limit if it has one (a
//!   later CBC solve in the process waits for it, as after the watchdog). A request made
//!   before CBC starts skips CBC.
//! - `relative_gap` / `absolute_gap` -> `-ratioGap` / `-allowableGap`, defaulting to
//!   [`glassbox_core::milp::DEFAULT_RELATIVE_GAP`] / [`glassbox_core::milp::DEFAULT_ABSOLUTE_GAP`] (CBC's own
//!   default relative gap is 0).
//! - `tolerance` -> `-primalTolerance`, `-dualTolerance` and `-integerTolerance`;
//!   `integrality_tolerance` -> `-integerTolerance` (it overrides `tolerance` there) and,
//!   where tighter than the primal tolerance in effect, `-primalTolerance` too, as HiGHS's
//!   `mip_feasibility_tolerance` bounds both (a margin row off by the primal tolerance
//!   loses its margin as surely as a fractional integer).
//! - `iteration_limit` is refused: CBC 2.10's `-maxIterations` does not stop its
//!   branch-and-bound (checked: a search ran on for a minute past a limit of 10). Use
//!   `time_limit` or the raw option `maxNodes`.
//! - `threads` -> `-threads` (Debian's CBC is built with threads).
//! - `seed` -> `-randomSeed` (Clp) and `-randomCbcSeed` (CBC), modulo 2^31 - 1.
//! - `verbosity` 0 and 1 -> log level 0 and `-log 0 -slogLevel 0`, first on the command
//!   line so that nothing is printed; 2 and more -> CBC's log on stdout.
//! - a warm start -> `Cbc_setInitialSolution` with its primal point (CBC checks it and keeps
//!   it as incumbent when feasible). Multipliers are ignored.
//! - `raw` options (checked against [`OPTIONS`]) come last on the command line and override
//!   the mappings.
//!
//! # Statuses
//!
//! Proven optimal (or stopped on the gap) is `Optimal`; proven infeasible (or the LP
//! relaxation infeasible) is `Infeasible`; stopped on time, nodes, iterations, solutions or
//! a user event are [`Limit::Time`], [`Limit::Node`], [`Limit::Iteration`], [`Limit::Other`]
//! and [`Limit::Interrupted`], each `FeasibleAtLimit` when CBC has an incumbent and
//! `NoSolutionAtLimit` otherwise; abandoned (numerical trouble) is
//! [`TerminationStatus::NumericalError`]. An unbounded LP relaxation says only "infeasible
//! or unbounded": it is settled by solving the problem again with a zero objective
//! (feasible means unbounded, infeasible means infeasible), and `raw_status` says so.
//! CBC reports no dual bound for an LP; the bound of an optimal LP is its objective.
//!
//! Before CBC sees a problem, [`milp::presolve`] answers problems without columns (CBC's
//! C interface fails on them) and rounds the bounds of integer columns inward.
//!
//! Depends on the core (`milp`, `options`, `result`, `solver`, `registry`) only.

use coin_cbc::raw;
use glassbox_core::backend::{BackendEntry, Constructor};
use glassbox_core::milp::{self, BackendReport, MilpProblem, Sense};
use glassbox_core::options::{
    check_raw_options, Interrupt, OptionKind, OptionSpec, RawOptionValue,
};
use glassbox_core::solver::{Capabilities, MilpSolver};
use glassbox_core::{GlassboxError, Limit, Result, SolveOptions, SolveResult, TerminationStatus};
use std::ffi::{c_int, c_void, CString};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The registry name of this backend.
pub const NAME: &str = "cbc";

/// What CBC can do.
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

/// The choices of CBC's cut generator switches.
const CUT_CHOICES: &[&str] = &["off", "on", "root", "ifmove", "forceOn"];

/// The raw options this backend accepts: a curated subset of CBC's command-line parameters,
/// typed, spelled as CBC spells them.
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "maxNodes",
        kind: OptionKind::Int,
        help: "branch-and-bound node limit, >= 0 (a node limit status)",
    },
    OptionSpec {
        name: "maxSolutions",
        kind: OptionKind::Int,
        help: "stop after this many improving solutions, >= 1 (an 'other' limit)",
    },
    OptionSpec {
        name: "cutoff",
        kind: OptionKind::Float,
        help: "only solutions better than this are searched for (in the problem's sense)",
    },
    OptionSpec {
        name: "increment",
        kind: OptionKind::Float,
        help: "a new solution must be better than the incumbent by at least this",
    },
    OptionSpec {
        name: "integerTolerance",
        kind: OptionKind::Float,
        help: "how far from an integer a value may be and count as integer, > 0 (default 1e-7)",
    },
    OptionSpec {
        name: "primalTolerance",
        kind: OptionKind::Float,
        help: "primal feasibility tolerance of Clp, > 0 (default 1e-7)",
    },
    OptionSpec {
        name: "dualTolerance",
        kind: OptionKind::Float,
        help: "dual feasibility tolerance of Clp, > 0 (default 1e-7)",
    },
    OptionSpec {
        name: "strongBranching",
        kind: OptionKind::Int,
        help: "variables evaluated by strong branching, >= 0 (default 5)",
    },
    OptionSpec {
        name: "trustPseudoCosts",
        kind: OptionKind::Int,
        help: "strong branchings before pseudo costs are trusted, >= -1 (default 10)",
    },
    OptionSpec {
        name: "passCuts",
        kind: OptionKind::Int,
        help: "cut passes at the root (negative: as many while they improve enough)",
    },
    OptionSpec {
        name: "cutsOnOff",
        kind: OptionKind::Choice(CUT_CHOICES),
        help: "all cut generators at once (default on)",
    },
    OptionSpec {
        name: "gomoryCuts",
        kind: OptionKind::Choice(CUT_CHOICES),
        help: "Gomory cuts (default ifmove)",
    },
    OptionSpec {
        name: "probingCuts",
        kind: OptionKind::Choice(CUT_CHOICES),
        help: "probing (default ifmove)",
    },
    OptionSpec {
        name: "cliqueCuts",
        kind: OptionKind::Choice(CUT_CHOICES),
        help: "clique cuts (default ifmove)",
    },
    OptionSpec {
        name: "knapsackCuts",
        kind: OptionKind::Choice(CUT_CHOICES),
        help: "knapsack cover cuts (default ifmove)",
    },
    OptionSpec {
        name: "mixedIntegerRoundingCuts",
        kind: OptionKind::Choice(CUT_CHOICES),
        help: "mixed-integer rounding cuts (default ifmove)",
    },
    OptionSpec {
        name: "flowCoverCuts",
        kind: OptionKind::Choice(CUT_CHOICES),
        help: "flow cover cuts (default ifmove)",
    },
    OptionSpec {
        name: "twoMirCuts",
        kind: OptionKind::Choice(CUT_CHOICES),
        help: "two-step MIR cuts (default root)",
    },
    OptionSpec {
        name: "zeroHalfCuts",
        kind: OptionKind::Choice(CUT_CHOICES),
        help: "zero-half cuts (default ifmove)",
    },
    OptionSpec {
        name: "heuristicsOnOff",
        kind: OptionKind::Choice(&["off", "on"]),
        help: "all primal heuristics at once (default on)",
    },
    OptionSpec {
        name: "feasibilityPump",
        kind: OptionKind::Choice(&["off", "on", "both", "before"]),
        help: "feasibility pump heuristic (default on)",
    },
    OptionSpec {
        name: "Rins",
        kind: OptionKind::Choice(&["off", "on", "both", "before", "often"]),
        help: "relaxation-induced neighbourhood search (default on)",
    },
    OptionSpec {
        name: "nodeStrategy",
        kind: OptionKind::Choice(&[
            "hybrid",
            "fewest",
            "depth",
            "upfewest",
            "downfewest",
            "updepth",
            "downdepth",
        ]),
        help: "order in which nodes are explored (default fewest)",
    },
    OptionSpec {
        name: "preprocess",
        kind: OptionKind::Choice(&[
            "off",
            "on",
            "equal",
            "sos",
            "trysos",
            "equalall",
            "strategy",
            "aggregate",
        ]),
        help: "integer preprocessing (default sos)",
    },
    OptionSpec {
        name: "presolve",
        kind: OptionKind::Choice(&["on", "off", "more"]),
        help: "Clp's presolve of the LPs (default on)",
    },
];

/// The registry entry of this backend.
pub fn entry() -> BackendEntry {
    BackendEntry {
        name: NAME,
        description: "COIN-OR CBC 2.10 branch-and-cut for MILPs (Clp for LPs); solves take turns",
        capabilities: CAPABILITIES,
        options: OPTIONS,
        constructor: Constructor::Milp(|| Box::new(CbcSolver::new())),
        check_options,
    }
}

/// The CBC backend. It holds no state: every solve creates and frees its own CBC model.
/// One value can be shared by threads; their solves take turns (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct CbcSolver;

impl CbcSolver {
    /// A new CBC backend.
    pub fn new() -> Self {
        CbcSolver
    }
}

/// Serializes CBC solves within the process (see the module documentation).
static CBC_LOCK: Mutex<()> = Mutex::new(());

/// Extra time after the limit before the watchdog returns without CBC.
fn grace(limit: Duration) -> Duration {
    limit.mul_f64(0.1) + Duration::from_millis(500)
}

impl MilpSolver for CbcSolver {
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
        if options.iteration_limit.is_some() {
            return Err(GlassboxError::Capability {
                solver: NAME.to_string(),
                what: "stop at an iteration limit (CBC 2.10 does not honour one): use \
                       time_limit or the raw option maxNodes"
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
        let job = Job::new(problem, options, start.as_deref());
        let limit = options.time_limit_duration();
        let (mut report, clock) = run_watched(job, limit);
        if report.raw_status == UNBOUNDED_OR_INFEASIBLE {
            let spent = clock.elapsed();
            let remaining = limit.map(|l| l.saturating_sub(spent));
            report = settle_unbounded_or_infeasible(problem, options, remaining);
        }
        // Under the user's cutoff a start worse than it is expected to be "lost".
        let cutoff = options
            .raw
            .get("cutoff")
            .and_then(RawOptionValue::as_number);
        match (&start, cutoff) {
            (_, Some(cutoff)) => {
                report = milp::under_user_cutoff(original, report, "cutoff", cutoff);
            }
            (Some(start), None) => {
                if contradicts_start(original, &report, start) {
                    let spent = clock.elapsed();
                    let remaining = limit.map(|l| l.saturating_sub(spent));
                    report = solve_without_start(problem, options, remaining, report);
                }
                report = keep_lost_start(original, report, start);
            }
            (None, None) => {}
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

/// Whether CBC's finished answer contradicts a feasible MIP start: "infeasible", or
/// "optimal" with a point worse than the start. CBC 2.10 can lose a start given through
/// `Cbc_setInitialSolution` and keep the cutoff it implies (its preprocessing rebuilds the
/// model). The OCT tests found it with a start that was itself optimal; the extension
/// crate's 1-norm SVM found it on an LP (the start w = 0 at objective 21, "linear
/// relaxation infeasible", while the optimum is 3.2). So the answer proves nothing.
fn contradicts_start(problem: &MilpProblem, report: &BackendReport, start: &[f64]) -> bool {
    let finished = matches!(
        report.status,
        TerminationStatus::Optimal | TerminationStatus::Infeasible
    );
    if !finished || !problem.is_feasible(start) {
        return false;
    }
    let start_objective = problem.objective_value(start);
    report.primal.as_deref().is_none_or(|x| {
        report.status != TerminationStatus::Optimal
            || problem.better(start_objective, problem.objective_value(x))
    })
}

/// CBC's answer to the same problem without the MIP start, in the time that is left (none
/// left: the answer it replaces, which [`keep_lost_start`] then settles).
fn solve_without_start(
    problem: &MilpProblem,
    options: &SolveOptions,
    remaining: Option<Duration>,
    lost: BackendReport,
) -> BackendReport {
    if remaining.is_some_and(|r| r.is_zero()) {
        return lost;
    }
    let mut again = options.with_warm_start(None);
    again.time_limit = remaining.map(|r| r.as_secs_f64().max(1e-3));
    let (mut report, clock) = run_watched(Job::new(problem, &again, None), remaining);
    if report.raw_status == UNBOUNDED_OR_INFEASIBLE {
        let left = remaining.map(|r| r.saturating_sub(clock.elapsed()));
        report = settle_unbounded_or_infeasible(problem, &again, left);
    }
    report.raw_status = format!(
        "{}; CBC lost the MIP start ({}): solved again without it",
        report.raw_status, lost.raw_status
    );
    report
}

/// When CBC still contradicts a feasible MIP start (no time was left to solve again, or
/// the second answer is worse too), the start is the incumbent: `Optimal` if CBC's search
/// finished under the start's cutoff, as its answer claims, which `raw_status` says. A
/// bound above the start's objective is dropped.
fn keep_lost_start(problem: &MilpProblem, report: BackendReport, start: &[f64]) -> BackendReport {
    if !contradicts_start(problem, &report, start) {
        return report;
    }
    let start_objective = problem.objective_value(start);
    let dual_bound = report
        .dual_bound
        .filter(|&b| !problem.better(start_objective, b));
    BackendReport {
        status: TerminationStatus::Optimal,
        primal: Some(start.to_vec()),
        dual_bound,
        raw_status: format!(
            "{}; CBC lost the MIP start under its own cutoff: the start is optimal (glassbox kept it)",
            report.raw_status
        ),
        ..report
    }
}

/// The raw status that [`settle_unbounded_or_infeasible`] resolves.
const UNBOUNDED_OR_INFEASIBLE: &str = "linear relaxation unbounded (infeasible or unbounded)";

/// Checks the raw options beyond their types, so that CBC never complains (on stdout)
/// about a value.
fn check_options(options: &SolveOptions) -> Result<()> {
    options.validate()?;
    check_raw_options(NAME, OPTIONS, &options.raw)?;
    for (name, value) in &options.raw {
        let number = match value {
            RawOptionValue::Int(i) => *i as f64,
            RawOptionValue::Float(x) => *x,
            _ => continue,
        };
        if let RawOptionValue::Int(i) = value {
            if c_int::try_from(*i).is_err() {
                return Err(GlassboxError::InvalidOption {
                    solver: NAME.to_string(),
                    option: name.clone(),
                    message: format!("{i} does not fit in a 32-bit integer"),
                });
            }
        }
        let (ok, expected) = match name.as_str() {
            "maxNodes" | "strongBranching" => (number >= 0.0, ">= 0"),
            "maxSolutions" => (number >= 1.0, ">= 1"),
            "trustPseudoCosts" => (number >= -1.0, ">= -1"),
            "passCuts" | "cutoff" => (true, ""),
            "increment" => (number.abs() < 1e20, "finite"),
            _ => (number > 0.0, "> 0"),
        };
        if !ok {
            return Err(GlassboxError::InvalidOption {
                solver: NAME.to_string(),
                option: name.clone(),
                message: format!("must be {expected}, got {number}"),
            });
        }
    }
    Ok(())
}

/// CBC indexes with 32-bit integers.
fn check_size(problem: &MilpProblem) -> Result<()> {
    for (what, count) in [
        ("columns", problem.num_columns() + 1),
        ("rows", problem.num_rows()),
        ("nonzeros", problem.num_nonzeros()),
    ] {
        if c_int::try_from(count).is_err() {
            return Err(GlassboxError::InvalidProblem(format!(
                "{}: {count} {what} is more than CBC can index ({})",
                problem.name,
                c_int::MAX
            )));
        }
    }
    Ok(())
}

/// Everything a solve needs, owned, so that it can run on a worker thread that may outlive
/// the call (see the watchdog in the module docs).
struct Job {
    /// Columns given to CBC: the problem's, plus the fixed integer column of an LP.
    num_columns: usize,
    /// The problem's own columns.
    num_problem_columns: usize,
    num_rows: usize,
    starts: Vec<c_int>,
    indices: Vec<c_int>,
    values: Vec<f64>,
    column_lower: Vec<f64>,
    column_upper: Vec<f64>,
    cost: Vec<f64>,
    row_lower: Vec<f64>,
    row_upper: Vec<f64>,
    integers: Vec<usize>,
    sense: Sense,
    objective_offset: f64,
    /// The MIP start, extended to `num_columns`.
    start: Option<Vec<f64>>,
    /// Command-line parameters, in order, without the time limit (set when CBC starts).
    parameters: Vec<(String, String)>,
    /// Log level of the model's message handler.
    log_level: c_int,
    /// The wall-clock limit, from the moment the solve holds the lock.
    time_limit: Option<Duration>,
    /// Whether the problem has integer columns of its own.
    is_mip: bool,
    /// The stop request the watch checks.
    stop: Option<Interrupt>,
    /// A pause before CBC runs, for the test of the watchdog.
    #[cfg(test)]
    delay: Duration,
}

/// The problem name for which a test build pauses before CBC runs (see `Job::delay`).
#[cfg(test)]
const SLOW_PROBLEM: &str = "glassbox-cbc-watchdog-test";

impl Job {
    fn new(problem: &MilpProblem, options: &SolveOptions, start: Option<&[f64]>) -> Self {
        let n = problem.columns.len();
        let is_mip = problem.num_integers() > 0;
        let num_columns = if is_mip { n } else { n + 1 };
        // Column-major matrix; rows are visited in order, so each column's row indices
        // ascend, as CBC's loader requires.
        let mut counts = vec![0usize; num_columns + 1];
        for row in &problem.rows {
            for &(j, _) in &row.coefficients {
                counts[j + 1] += 1;
            }
        }
        for j in 0..num_columns {
            counts[j + 1] += counts[j];
        }
        let nonzeros = counts[num_columns];
        let mut next = counts.clone();
        let mut indices = vec![0 as c_int; nonzeros];
        let mut values = vec![0.0; nonzeros];
        for (i, row) in problem.rows.iter().enumerate() {
            for &(j, a) in &row.coefficients {
                indices[next[j]] = i as c_int;
                values[next[j]] = a;
                next[j] += 1;
            }
        }
        let starts = counts.iter().map(|&s| s as c_int).collect();
        let mut column_lower: Vec<f64> = problem.columns.iter().map(|c| c.lower).collect();
        let mut column_upper: Vec<f64> = problem.columns.iter().map(|c| c.upper).collect();
        let mut cost: Vec<f64> = problem.columns.iter().map(|c| c.cost).collect();
        let mut integers: Vec<usize> = (0..n).filter(|&j| problem.columns[j].integer).collect();
        let mut start = start.map(<[f64]>::to_vec);
        if !is_mip {
            column_lower.push(0.0);
            column_upper.push(0.0);
            cost.push(0.0);
            integers.push(n);
            if let Some(x) = &mut start {
                x.push(0.0);
            }
        }
        Job {
            num_columns,
            num_problem_columns: n,
            num_rows: problem.rows.len(),
            starts,
            indices,
            values,
            column_lower,
            column_upper,
            cost,
            row_lower: problem.rows.iter().map(|r| r.lower).collect(),
            row_upper: problem.rows.iter().map(|r| r.upper).collect(),
            integers,
            sense: problem.sense,
            objective_offset: problem.objective_offset,
            start,
            parameters: parameters(options),
            log_level: if options.verbosity >= 2 { 1 } else { 0 },
            time_limit: options.time_limit_duration(),
            is_mip,
            stop: options.interrupt.clone(),
            #[cfg(test)]
            delay: if problem.name == SLOW_PROBLEM {
                Duration::from_secs(2)
            } else {
                Duration::ZERO
            },
        }
    }
}

/// Clp's default primal feasibility tolerance (`primalTolerance`).
const CLP_PRIMAL_TOLERANCE: f64 = 1e-7;

/// The command line for CBC, without the time limit: quiet first, then the mapped typed
/// options, then the raw ones.
fn parameters(options: &SolveOptions) -> Vec<(String, String)> {
    let mut p: Vec<(String, String)> = Vec::new();
    let mut add = |name: &str, value: String| p.push((name.to_string(), value));
    if options.verbosity >= 2 {
        add("log", "1".into());
    } else {
        add("log", "0".into());
        add("slogLevel", "0".into());
    }
    add("timeMode", "elapsed".into());
    add(
        "ratioGap",
        number(options.relative_gap.unwrap_or(milp::DEFAULT_RELATIVE_GAP)),
    );
    add(
        "allowableGap",
        number(options.absolute_gap.unwrap_or(milp::DEFAULT_ABSOLUTE_GAP)),
    );
    if let Some(tol) = options.tolerance {
        add("primalTolerance", number(tol));
        add("dualTolerance", number(tol));
        add("integerTolerance", number(tol));
    }
    if let Some(tol) = options.integrality_tolerance {
        add("integerTolerance", number(tol));
        // CBC accepts a solution whose rows are off by its primal tolerance, so a margin
        // finer than that is lost whatever the integers do; HiGHS's
        // mip_feasibility_tolerance covers rows and integers alike, and so does this.
        let primal = options.tolerance.unwrap_or(CLP_PRIMAL_TOLERANCE);
        if tol < primal {
            add("primalTolerance", number(tol));
        }
    }
    if let Some(threads) = options.threads {
        add("threads", threads.min(c_int::MAX as usize).to_string());
    }
    if let Some(seed) = options.seed {
        let seed = (seed % c_int::MAX as u64).to_string();
        add("randomSeed", seed.clone());
        add("randomCbcSeed", seed);
    }
    for (name, value) in &options.raw {
        let text = match value {
            RawOptionValue::Int(i) => i.to_string(),
            RawOptionValue::Float(x) => number(*x),
            RawOptionValue::Bool(b) => (if *b { "on" } else { "off" }).to_string(),
            RawOptionValue::Str(s) => s.clone(),
        };
        add(name, text);
    }
    p
}

/// A number as CBC's parameter parser reads it (plain or exponent notation, no `inf`).
fn number(x: f64) -> String {
    let plain = format!("{x}");
    let exp = format!("{x:e}");
    if exp.len() < plain.len() {
        exp
    } else {
        plain
    }
}

/// What the worker thread tells the caller.
enum Message {
    /// The solve holds the lock and starts now.
    Started(Instant),
    /// CBC returned.
    Finished(BackendReport),
}

/// How often the watch checks the stop request while CBC runs.
const STOP_POLL: Duration = Duration::from_millis(50);

/// What the watch saw first.
enum Watched {
    Message(Message),
    /// The worker thread ended without sending.
    Lost,
    /// The deadline passed.
    Overran,
    /// A stop was requested.
    Stopped,
}

/// The next message from the worker, or the deadline (none: wait without one) or the stop
/// request if either comes first.
fn watch(
    receiver: &mpsc::Receiver<Message>,
    deadline: Option<Instant>,
    stop: Option<&Interrupt>,
) -> Watched {
    loop {
        // The time limit wins where both have passed, as in the other backends.
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            return Watched::Overran;
        }
        if stop.is_some_and(Interrupt::requested) {
            return Watched::Stopped;
        }
        let mut wait = deadline.map_or(Duration::MAX, |d| d - now);
        if stop.is_some() {
            wait = wait.min(STOP_POLL);
        }
        match receiver.recv_timeout(wait) {
            Ok(message) => return Watched::Message(message),
            Err(mpsc::RecvTimeoutError::Disconnected) => return Watched::Lost,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
}

/// Runs `job` on a worker thread under the lock and waits for it, at most until the
/// watchdog's deadline or a stop request. Returns the report and the moment the solve
/// started (the moment the wait ended where the solve never held the lock).
fn run_watched(job: Job, limit: Option<Duration>) -> (BackendReport, Instant) {
    let stop = job.stop.clone();
    let without_cbc = |status: TerminationStatus, why: &str, clock: Instant| {
        (
            BackendReport {
                status,
                primal: None,
                dual_bound: None,
                iterations: 0,
                nodes: None,
                raw_status: why.to_string(),
            },
            clock,
        )
    };
    let stopped = |clock| {
        without_cbc(
            TerminationStatus::NoSolutionAtLimit(Limit::Interrupted),
            "stop requested: glassbox returned without CBC (CBC finishes in the background)",
            clock,
        )
    };
    let failed = |why: &str, clock| without_cbc(TerminationStatus::Error, why, clock);
    if stop.as_ref().is_some_and(Interrupt::requested) {
        return stopped(Instant::now());
    }
    let (sender, receiver) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("glassbox-cbc".into())
        .stack_size(64 << 20)
        .spawn(move || {
            let _lock = CBC_LOCK.lock().unwrap_or_else(|p| p.into_inner());
            if job.stop.as_ref().is_some_and(Interrupt::requested) {
                return; // the caller has returned: CBC is not needed
            }
            let started = Instant::now();
            let _ = sender.send(Message::Started(started));
            let report = run_cbc(&job, started);
            let _ = sender.send(Message::Finished(report));
        });
    if spawned.is_err() {
        return failed("could not start a thread for CBC", Instant::now());
    }
    // Another solve (one the watchdog left behind) may hold the lock: no deadline yet.
    let started = match watch(&receiver, None, stop.as_ref()) {
        Watched::Message(Message::Started(t)) => t,
        Watched::Stopped => return stopped(Instant::now()),
        _ => return failed("the CBC thread stopped before it started", Instant::now()),
    };
    let watchdog = limit.map(|limit| started + limit + grace(limit));
    match watch(&receiver, watchdog, stop.as_ref()) {
        Watched::Message(Message::Finished(report)) => (report, started),
        Watched::Message(Message::Started(_)) | Watched::Lost => failed(
            "CBC failed (the thread that ran it stopped without an answer)",
            started,
        ),
        Watched::Stopped => stopped(started),
        // CBC overran: return now, with the MIP start if it is feasible (added by
        // `assemble_result`), and let CBC finish in the background.
        Watched::Overran => without_cbc(
            TerminationStatus::NoSolutionAtLimit(Limit::Time),
            "CBC had not stopped at the time limit: glassbox's watchdog returned without it \
             (CBC finishes in the background)",
            started,
        ),
    }
}

extern "C" {
    // Functions of CBC's C interface that the `coin_cbc` crate does not wrap (the library
    // is linked by `coin_cbc_sys`).
    fn Cbc_getNodeCount(model: *mut c_void) -> c_int;
    fn Cbc_bestSolution(model: *mut c_void) -> *const f64;
    fn Cbc_getNumCols(model: *mut c_void) -> c_int;
}

/// The C handle inside the crate's model, for the getters the crate does not wrap.
fn handle(model: &raw::Model) -> *mut c_void {
    // `coin_cbc::raw::Model` (0.1.9, pinned in Cargo.toml) is a struct whose only field is
    // the handle; a change of its size fails the build here.
    const _: () = assert!(std::mem::size_of::<raw::Model>() == std::mem::size_of::<*mut c_void>());
    // SAFETY: the struct is exactly one pointer (checked above), so its bytes are the handle.
    unsafe { std::mem::transmute_copy::<raw::Model, *mut c_void>(model) }
}

/// Builds the CBC model, solves it and reads the answer. Runs under the lock.
fn run_cbc(job: &Job, started: Instant) -> BackendReport {
    let mut model = raw::Model::new();
    model.load_problem(
        job.num_columns,
        job.num_rows,
        &job.starts,
        &job.indices,
        &job.values,
        Some(&job.column_lower),
        Some(&job.column_upper),
        Some(&job.cost),
        Some(&job.row_lower),
        Some(&job.row_upper),
    );
    for &j in &job.integers {
        model.set_integer(j);
    }
    model.set_obj_sense(match job.sense {
        Sense::Minimize => raw::Sense::Minimize,
        Sense::Maximize => raw::Sense::Maximize,
    });
    model.set_log_level(job.log_level);
    let mut parameters = job.parameters.clone();
    if let Some(limit) = job.time_limit {
        let left = limit.saturating_sub(started.elapsed());
        // Right after `timeMode`; CBC reads at least a millisecond.
        let at = parameters
            .iter()
            .position(|(name, _)| name == "timeMode")
            .map_or(0, |k| k + 1);
        parameters.insert(at, ("seconds".into(), number(left.as_secs_f64().max(1e-3))));
    }
    for (name, value) in &parameters {
        // Names and values come from typed options: no NUL inside.
        if let (Ok(name), Ok(value)) = (CString::new(name.as_str()), CString::new(value.as_str())) {
            model.set_parameter(&name, &value);
        }
    }
    if let Some(x) = &job.start {
        model.set_initial_solution(x);
    }
    let ptr = handle(&model);
    // SAFETY: `ptr` is the live model's handle; this reads its column count.
    debug_assert_eq!(unsafe { Cbc_getNumCols(ptr) } as usize, job.num_columns);
    #[cfg(test)]
    std::thread::sleep(job.delay);
    model.solve();

    let status = model.status();
    let secondary = model.secondary_status();
    // SAFETY: `ptr` is live; CBC's best solution has one value per column, or is null.
    let incumbent = unsafe {
        let best = Cbc_bestSolution(ptr);
        (!best.is_null()).then(|| {
            std::slice::from_raw_parts(best, job.num_columns)[..job.num_problem_columns].to_vec()
        })
    };
    // SAFETY: `ptr` is live.
    let nodes = unsafe { Cbc_getNodeCount(ptr) }.max(0) as u64;
    let iterations = model.iteration_count().max(0) as u64;
    let bound = model.best_possible_value() + job.objective_offset;
    let bound = (bound.is_finite() && bound.abs() < 1e50).then_some(bound);
    let mut raw_status = format!("{status:?} ({secondary:?})");
    let has_solution = incumbent.is_some();
    let at_limit = |limit| {
        if has_solution {
            TerminationStatus::FeasibleAtLimit(limit)
        } else {
            TerminationStatus::NoSolutionAtLimit(limit)
        }
    };
    // Within 2% of the limit counts as having run out (CBC's clock and ours differ).
    let out_of_time = model.is_seconds_limit_reached()
        || job
            .time_limit
            .is_some_and(|limit| started.elapsed().as_secs_f64() >= 0.98 * limit.as_secs_f64());
    use raw::SecondaryStatus as S;
    let status = if model.is_abandoned() || status == raw::Status::Abandoned {
        TerminationStatus::NumericalError
    } else if out_of_time
        && (model.is_proven_infeasible() || secondary == S::LinearRelaxationInfeasible)
    {
        // CBC 2.10 reports a root LP that its `seconds` limit stopped as an infeasible
        // relaxation (seen on OCT, depth 3, 300 rows, 1 s): believed only with time left.
        at_limit(Limit::Time)
    } else if model.is_proven_infeasible() || secondary == S::LinearRelaxationInfeasible {
        TerminationStatus::Infeasible
    } else if model.is_continuous_unbounded() || secondary == S::LinearRelaxationUnbounded {
        raw_status = UNBOUNDED_OR_INFEASIBLE.to_string();
        TerminationStatus::Error
    } else if model.is_proven_optimal() && has_solution {
        TerminationStatus::Optimal
    } else {
        match secondary {
            S::HasSolution | S::StoppedOnGap if has_solution => TerminationStatus::Optimal,
            S::StoppedOnTime => at_limit(Limit::Time),
            S::StoppedOnNodes => at_limit(Limit::Node),
            S::StoppedOnIterationLimit => at_limit(Limit::Iteration),
            S::StoppedOnSolutions => at_limit(Limit::Other),
            S::StoppedOnUserEvent => at_limit(Limit::Interrupted),
            _ if model.is_seconds_limit_reached() => at_limit(Limit::Time),
            _ if model.is_node_limit_reached() => at_limit(Limit::Node),
            _ if model.is_solution_limit_reached() => at_limit(Limit::Other),
            _ => TerminationStatus::Error,
        }
    };
    // CBC gives no bound for an LP (it solves it at the root): an optimal LP's bound is its
    // objective, which `assemble_result` uses when the bound is missing.
    let dual_bound = if job.is_mip { bound } else { None };
    drop(model);
    BackendReport {
        status,
        primal: incumbent,
        dual_bound,
        iterations,
        nodes: Some(nodes),
        raw_status,
    }
}

/// Settles "infeasible or unbounded" by solving the problem with a zero objective in the
/// time that is left.
fn settle_unbounded_or_infeasible(
    problem: &MilpProblem,
    options: &SolveOptions,
    remaining: Option<Duration>,
) -> BackendReport {
    let feasibility = milp::feasibility_problem(problem);
    let mut check_options = options.with_warm_start(None);
    check_options.time_limit = remaining.map(|r| r.as_secs_f64().max(1e-3));
    let job = Job::new(&feasibility, &check_options, None);
    let (check, _) = run_watched(job, remaining);
    milp::settle_by_feasibility_check(UNBOUNDED_OR_INFEASIBLE, check)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_problems::{parity, small_lp, small_mip};
    use crate::test_support::{self, raw};
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    const INF: f64 = f64::INFINITY;

    fn solve(problem: &MilpProblem, options: &SolveOptions) -> SolveResult {
        CbcSolver::new().solve(problem, options).unwrap()
    }

    #[test]
    fn the_registry_entry_matches_the_solver() {
        fn assert_send_sync<T: Send + Sync + Clone>() {}
        assert_send_sync::<CbcSolver>();
        test_support::check_entry(&entry(), CbcSolver::new().name(), "milp");
    }

    #[test]
    fn the_column_major_matrix_is_right() {
        let job = Job::new(
            &small_lp(),
            &SolveOptions::default(),
            Some(&[1.0, 2.0, 3.0]),
        );
        assert_eq!(job.num_columns, 4);
        assert_eq!(job.starts, vec![0, 3, 6, 9, 9]);
        assert_eq!(job.indices, vec![0, 1, 2, 0, 1, 2, 0, 1, 2]);
        assert_eq!(
            job.values,
            vec![2.0, 4.0, 3.0, 3.0, 1.0, 4.0, 1.0, 2.0, 2.0]
        );
        assert_eq!(job.integers, vec![3]);
        assert_eq!(job.start, Some(vec![1.0, 2.0, 3.0, 0.0]));
        assert_eq!(job.parameters[0], ("log".to_string(), "0".to_string()));
        let job = Job::new(&small_mip(), &SolveOptions::default(), None);
        assert_eq!(job.num_columns, 3);
        assert_eq!(job.integers, vec![0, 1, 2]);
    }

    /// The value CBC keeps for a parameter: it applies them in order.
    fn last(p: &[(String, String)], name: &str) -> Option<String> {
        p.iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }

    /// `integrality_tolerance`, after `tolerance`, is the integer tolerance CBC keeps, and
    /// the primal tolerance where it is the tighter one; a looser one leaves the rows alone.
    #[test]
    fn integrality_tolerance_overrides_tolerance() {
        let p = parameters(&SolveOptions {
            tolerance: Some(1e-7),
            integrality_tolerance: Some(1e-9),
            ..Default::default()
        });
        assert_eq!(last(&p, "integerTolerance").as_deref(), Some("1e-9"));
        assert_eq!(last(&p, "primalTolerance").as_deref(), Some("1e-9"));
        assert_eq!(last(&p, "dualTolerance").as_deref(), Some("1e-7"));
        let p = parameters(&SolveOptions {
            integrality_tolerance: Some(1e-6),
            ..Default::default()
        });
        assert_eq!(last(&p, "integerTolerance").as_deref(), Some("1e-6"));
        assert_eq!(last(&p, "primalTolerance"), None);
        let p = parameters(&SolveOptions {
            integrality_tolerance: Some(1e-8),
            ..Default::default()
        });
        assert_eq!(last(&p, "primalTolerance").as_deref(), Some("1e-8"));
    }

    #[test]
    fn every_declared_option_is_accepted() {
        for spec in OPTIONS {
            let value = match spec.kind {
                OptionKind::Choice(choices) => RawOptionValue::Str(choices[0].to_string()),
                OptionKind::Int => RawOptionValue::Int(100),
                OptionKind::Float => RawOptionValue::Float(match spec.name {
                    "cutoff" => 1.0,
                    "increment" => 1e-4,
                    _ => 1e-6,
                }),
                OptionKind::Bool => RawOptionValue::Bool(true),
            };
            for problem in [small_mip(), small_lp()] {
                let options = SolveOptions {
                    raw: raw(&[(spec.name, value.clone())]),
                    ..SolveOptions::default()
                };
                let result = CbcSolver::new()
                    .solve(&problem, &options)
                    .unwrap_or_else(|e| panic!("{} = {value}: {e}", spec.name));
                assert_eq!(
                    result.status,
                    TerminationStatus::Optimal,
                    "{} = {value} on {}: {}",
                    spec.name,
                    problem.name,
                    result.raw_status
                );
            }
        }
        for (name, value) in [
            ("maxNodes", RawOptionValue::Int(-1)),
            ("maxNodes", RawOptionValue::Int(1 << 40)),
            ("integerTolerance", RawOptionValue::Float(0.0)),
            ("cutsOnOff", RawOptionValue::Str("maybe".into())),
            ("timeMode", RawOptionValue::Str("cpu".into())),
        ] {
            let options = SolveOptions {
                raw: raw(&[(name, value.clone())]),
                ..SolveOptions::default()
            };
            let err = CbcSolver::new()
                .solve(&small_mip(), &options)
                .expect_err(&format!("{name} = {value}"));
            assert!(err.to_string().contains(name), "{err}");
        }
    }

    #[test]
    fn node_limit_and_no_iteration_limit() {
        let p = parity(25);
        let options = SolveOptions {
            raw: raw(&[
                ("maxNodes", RawOptionValue::Int(0)),
                ("preprocess", RawOptionValue::Str("off".into())),
                ("cutsOnOff", RawOptionValue::Str("off".into())),
            ]),
            ..SolveOptions::default()
        };
        let result = solve(&p, &options);
        eprintln!("node limit: {} ({})", result.status, result.raw_status);
        assert!(
            matches!(
                result.status,
                TerminationStatus::NoSolutionAtLimit(Limit::Node) | TerminationStatus::Infeasible
            ),
            "{} ({})",
            result.status,
            result.raw_status
        );
        let options = SolveOptions {
            iteration_limit: Some(10),
            ..SolveOptions::default()
        };
        let err = CbcSolver::new().solve(&p, &options).unwrap_err();
        assert!(err.to_string().contains("iteration"), "{err}");
    }

    /// The 1-norm SVM's LP (the extension crate's l1svm on 21 rows, 3 features) from the
    /// start w = 0 (objective 21): CBC 2.10 answers "linear relaxation infeasible" under the
    /// start's cutoff; the backend solves again without the start and finds the optimum.
    #[test]
    fn an_lp_whose_start_cbc_loses_is_solved_again() {
        let (n, p) = (21, 3);
        let x = |i: usize, j: usize| ((i * 7 + j * 3) % 5) as f64 / 4.0;
        let sign = |i: usize| if (i * 7) % 5 >= 2 { 1.0 } else { -1.0 };
        let mut problem = MilpProblem::new("l1svm");
        for j in 0..2 * p {
            problem.add_column(format!("w{j}"), 0.0, INF, 1.0, false);
        }
        let b = problem.add_column("b", -INF, INF, 0.0, false);
        for i in 0..n {
            let xi = problem.add_column(format!("xi{i}"), 0.0, INF, 1.0, false);
            let mut row: Vec<(usize, f64)> = (0..p)
                .flat_map(|j| [(j, sign(i) * x(i, j)), (p + j, -sign(i) * x(i, j))])
                .filter(|&(_, a)| a != 0.0)
                .collect();
            row.extend([(b, sign(i)), (xi, 1.0)]);
            problem.add_row(format!("margin{i}"), 1.0, INF, row);
        }
        let mut start = vec![0.0; problem.num_columns()];
        start[b + 1..].iter_mut().for_each(|v| *v = 1.0);
        assert!(problem.is_feasible(&start));
        let reference = solve(&problem, &SolveOptions::default());
        assert_eq!(reference.status, TerminationStatus::Optimal);
        let optimum = reference.objective.unwrap();
        assert!(optimum < 20.0, "{optimum}");
        let options =
            SolveOptions::default().with_warm_start(Some(glassbox_core::WarmStart::primal(start)));
        let result = solve(&problem, &options);
        assert_eq!(
            result.status,
            TerminationStatus::Optimal,
            "{}",
            result.raw_status
        );
        let objective = result.objective.unwrap();
        assert!(
            (objective - optimum).abs() < 1e-6,
            "{objective} vs {optimum}: {}",
            result.raw_status
        );
    }

    #[test]
    fn a_lp_takes_the_parametrized_path() {
        let result = solve(&small_lp(), &SolveOptions::default());
        assert_eq!(
            result.status,
            TerminationStatus::Optimal,
            "{}",
            result.raw_status
        );
        assert_eq!(result.primal.len(), 3);
        let objective = result.objective.unwrap();
        assert!((objective - 13.0).abs() < 1e-6, "{objective}");
        assert_eq!(result.dual_bound, result.objective);
    }

    /// A CBC that does not stop at its limit is left behind by the watchdog: the solve
    /// returns within 10% + 0.5 s of the limit, with the MIP start as incumbent.
    #[test]
    fn the_watchdog_returns_when_cbc_overruns() {
        let mut problem = small_mip();
        problem.name = SLOW_PROBLEM.to_string();
        let limit = 0.2;
        let options = SolveOptions {
            time_limit: Some(limit),
            ..SolveOptions::default()
        }
        .with_warm_start(Some(glassbox_core::WarmStart::primal(vec![1.0, 1.0, 0.0])));
        let clock = Instant::now();
        let result = solve(&problem, &options);
        let elapsed = clock.elapsed().as_secs_f64();
        assert!(elapsed <= 1.1 * limit + 0.5 + 0.2, "{elapsed} s");
        assert!(elapsed >= 1.1 * limit + 0.5 - 0.01, "{elapsed} s");
        assert_eq!(
            result.status,
            TerminationStatus::FeasibleAtLimit(Limit::Time),
            "{}",
            result.raw_status
        );
        assert_eq!(result.objective, Some(9.0));
        assert!(
            result.raw_status.contains("watchdog"),
            "{}",
            result.raw_status
        );
        assert!(
            result.raw_status.contains("MIP start"),
            "{}",
            result.raw_status
        );
        // The next solve waits for the abandoned one, then works.
        let result = solve(&small_mip(), &SolveOptions::default());
        assert_eq!(result.objective, Some(13.0));
    }

    /// A stop request while CBC runs returns at once with the MIP start as incumbent; CBC
    /// finishes in the background and the next solve waits for it. A request made before
    /// the solve skips CBC.
    #[test]
    fn a_stop_request_returns_without_cbc() {
        let flag = Arc::new(AtomicBool::new(false));
        let mut problem = small_mip();
        problem.name = SLOW_PROBLEM.to_string(); // CBC starts 2 s after the lock
        let options = SolveOptions {
            interrupt: Some(Interrupt::new(flag.clone())),
            ..SolveOptions::default()
        }
        .with_warm_start(Some(glassbox_core::WarmStart::primal(vec![1.0, 1.0, 0.0])));
        let setter = {
            let flag = flag.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(200));
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
            })
        };
        let clock = Instant::now();
        let result = solve(&problem, &options);
        let elapsed = clock.elapsed().as_secs_f64();
        setter.join().unwrap();
        assert!((0.2..1.0).contains(&elapsed), "{elapsed} s");
        assert_eq!(
            result.status,
            TerminationStatus::FeasibleAtLimit(Limit::Interrupted),
            "{}",
            result.raw_status
        );
        assert_eq!(result.objective, Some(9.0));
        assert!(
            result.raw_status.contains("stop requested"),
            "{}",
            result.raw_status
        );
        // Requested before the solve: no CBC, no wait for the one in the background.
        let clock = Instant::now();
        let result = solve(&small_mip(), &options);
        assert!(clock.elapsed().as_secs_f64() < 0.5);
        assert_eq!(result.status.limit(), Some(Limit::Interrupted));
        let result = solve(&small_mip(), &SolveOptions::default());
        assert_eq!(result.objective, Some(13.0));
    }

    /// Solves a few problems at verbosity 0, ending in every kind of status, when run as
    /// the child of [`nothing_is_printed_at_verbosity_0`]; does nothing otherwise.
    #[test]
    fn silent_child() {
        let Ok(mode) = std::env::var("GLASSBOX_CBC_CHILD") else {
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
        let mut unbounded = small_mip();
        unbounded.rows.clear();
        unbounded.columns[0].upper = INF;
        let _ = solve(&unbounded, &quiet);
        let _ = solve(
            &small_mip(),
            &quiet.with_warm_start(Some(glassbox_core::WarmStart::primal(vec![1.0, 1.0, 0.0]))),
        );
        let _ = solve(
            &small_mip(),
            &SolveOptions {
                time_limit: Some(5.0),
                threads: Some(2),
                seed: Some(7),
                tolerance: Some(1e-7),
                ..quiet.clone()
            },
        );
    }

    /// The test that [`nothing_is_printed_at_verbosity_0`] runs in a child process.
    const CHILD: &str = "cbc::tests::silent_child";

    fn run_child(mode: &str) -> (String, String) {
        test_support::run_child(CHILD, "GLASSBOX_CBC_CHILD", mode, None)
    }

    /// Runs [`silent_child`] in a child process (CBC writes to the C `stdout`, which the
    /// test harness does not capture) and checks that nothing but the harness's own lines
    /// was printed.
    #[test]
    fn nothing_is_printed_at_verbosity_0() {
        if std::env::var("GLASSBOX_CBC_CHILD").is_ok() {
            return;
        }
        let (stdout, stderr) = run_child("quiet");
        test_support::assert_nothing_printed(CHILD, &stdout, &stderr);
        let (stdout, _) = run_child("loud");
        assert!(
            stdout.contains("Cbc"),
            "no CBC log at verbosity 2:\n{stdout}"
        );
    }
}
