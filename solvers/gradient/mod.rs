//! The gradient backend `"lbfgs"`: projected L-BFGS (or spectral projected gradient) inside
//! an augmented Lagrangian, on [argmin](https://argmin-rs.org). It solves any [`NlpProblem`]
//! (variable bounds, general range constraints `g_L <= g(x) <= g_U`, equalities included)
//! with first derivatives only, to a point that is feasible and stationary to tolerance (a
//! local method: its optima are [`TerminationStatus::LocallyOptimal`]).
//!
//! # Design
//!
//! - `subproblem`: the augmented Lagrangian of the general constraints (PHR in ALGENCAN's
//!   shifted form, one formula for equalities and one- or two-sided ranges) as an argmin
//!   `CostFunction` + `Gradient`, with guarded evaluations (panics caught).
//! - `projected`: the bound-constrained inner methods, each an argmin `Solver`
//!   (`init` / `next_iter` / `terminate`) — argmin has none that handles bounds. argmin's
//!   `Executor` runs them: its iteration limit, its timeout and its observers (the log)
//!   apply, and its `TerminationReason` says why an inner solve ended. Checkpointing is not
//!   used: an inner solve is one step of the outer loop below, whose state (multipliers,
//!   penalty) argmin's checkpoints would not hold; a glassbox solve is restarted from a
//!   [`glassbox_core::SolveResult::warm_start`] instead.
//! - `newton`: the second stage of an inner solve, projected Newton with the exact
//!   Hessian of the subproblem (also an argmin `Solver`), run from the first-order method's
//!   point when that stops short of the tolerance and the problem gives a Hessian (raw
//!   `refine`, below).
//! - `augmented_lagrangian`: the outer loop (multiplier and penalty updates, statuses).
//! - `barrier`: a log-barrier path inside the variable bounds (decreasing weights, IPOPT's
//!   schedule, Newton steps where there is a Hessian) chooses the point the solve above
//!   starts from, as an interior-point method approaches the bounds. Raw `path` says when:
//!   `"barrier"` always, `"direct"` never (the projected methods start at the start), and
//!   `"auto"` (the default) on problems with variable bounds only, no general constraints,
//!   with L-BFGS steps along the path (`refine_after` unset: Newton only on a stall); on
//!   problems with general constraints, both paths from an exploring start (a multistart's
//!   random one, `WarmStart::explore`), keeping the lower objective, and the direct path
//!   from any other start. Why (issue 24, `benches/README.md` "The `auto` path"): with
//!   bounds only the projected methods from the start fix early which bounds end active,
//!   and the best of 20 starts on S-ORRT (Boston, D=2) ended 8.7% above IPOPT's best on the
//!   direct path; along the barrier path it is below IPOPT's, at about twice the seconds a
//!   solve. On S-ORCT (class-assignment rows) from random starts at lambda = 0 the direct
//!   path's best of 20 met IPOPT's on iris only of 5 sets, the barrier's on 4; but with
//!   lambda_L = 0.005 (iris) the barrier ended at the empty tree from 191 of 220 starts, so
//!   neither path alone is the default there; a point to keep (CART's tree, a
//!   continuation's previous stage) is not pushed back into the interior.
//!
//! # Why a second-order stage
//!
//! On badly conditioned problems the first-order methods stop "for lack of progress" short
//! of a local optimum: on S-ORRT (Boston, depth 2, gamma = 512) projected L-BFGS stalled on
//! 17 of 20 starts after 3,000-23,500 iterations, at points IPOPT restarted from lowered by
//! up to 72% (`benches/README.md`, "lbfgs against IPOPT per start"). A user expects the point
//! of a local method to be stationary to tolerance, so by default (`refine = "newton"`) an
//! inner solve that stalls (or reaches `refine_after` iterations) goes on with Bertsekas's
//! projected Newton method on the exact Hessian of the augmented Lagrangian (the problem's
//! Hessian of the Lagrangian at the multiplier update plus the penalty's `rho J^T J` on the
//! constraints outside their shifted range). It runs only when the problem gives a Hessian
//! (`NlpProblem::hessian_structure`) and has at most `newton::MAX_VARIABLES` (2000)
//! variables, since the Hessian is dense (the `torch` backend gives autograd's Hessian of the
//! objective); otherwise, and with `refine = "none"`, the method is first-order only. The
//! status is decided as before, by the projected gradient at the final point, so a stage that
//! does not reach the tolerance still reports `other_limit_feasible`; the raw status says how
//! many iterations the Newton stage took.
//!
//! # How options map
//!
//! - `tolerance` (default 1e-8): the projected gradient of the Lagrangian,
//!   `|P(x - grad_x L) - x|_inf`, must be at most `tolerance * max(1, |grad f(x)|_inf)`.
//! - raw `constraint_tolerance` (default 1e-6): the largest violation of a constraint (and
//!   ALGENCAN's complementarity measure) at a locally optimal point, and the violation under
//!   which a point at a limit counts as feasible. Bounds always hold exactly (iterates are
//!   projected onto them).
//! - `iteration_limit`: the total of inner iterations, first-order and Newton (the status
//!   says `Iteration`); raw `inner_iterations` caps one inner solve (both stages),
//!   `outer_iterations` the outer loop.
//! - `time_limit`: wall-clock. The deadline is handed to argmin's executor as the timeout of
//!   every inner solve and checked by the inner methods before every evaluation and by the
//!   outer loop between inner solves, so a solve overshoots by at most one evaluation of
//!   the problem (and the final evaluations when the deadline falls between them).
//! - `interrupt` (a stop request: Ctrl-C in `glassbox run`) is read by the same checks; the
//!   solve returns with [`Limit::Interrupted`] and the last point ([`Limit::Time`] where the
//!   deadline has passed too, as the IPOPT backend reports it).
//! - `verbosity` 0 and 1: nothing is printed (the one-line summary of verbosity 1 is the
//!   caller's); 2: a line per outer iteration on stderr (the end of each inner solve, through
//!   an argmin observer, and the violation, complementarity and stationarity after it);
//!   3 and more: also a line per inner iteration.
//! - `seed` is ignored: the method is deterministic. `threads` is ignored: it runs on the
//!   calling thread (a problem may parallelize its own evaluations).
//! - `relative_gap` / `absolute_gap` are refused (no dual bound), and so is
//!   `integrality_tolerance` (no integer variables).
//! - raw options: see [`OPTIONS`]; values are checked, ranges included.
//!
//! # Starting point and multipliers
//!
//! Without a warm start the solve starts from the projection of 0 onto the bounds; a warm
//! start's primal point is projected onto the bounds. Its constraint multipliers, when
//! given, are the first multipliers of the augmented Lagrangian (and a start that already
//! satisfies the KKT conditions with them returns at once, with 0 iterations); bound
//! multipliers are checked for length and otherwise not needed (the method handles bounds
//! by projection).
//!
//! Results carry Ipopt's sign convention: `grad f + J^T lambda - z_L + z_U = 0`.
//! `constraint_multipliers` are the last multiplier update; the bound multipliers are read
//! off the gradient of the Lagrangian `r`: the part of `-r` the bounds cut off in the
//! projected-gradient step goes to `z_U` (pushing up) or `z_L` (pushing down), so the
//! stationarity residual with them is exactly the projected gradient.
//!
//! Depends on the core (`nlp`, `options`, `result`, `solver`, `registry`) and argmin.

mod augmented_lagrangian;
mod barrier;
mod newton;
mod projected;
mod subproblem;

/// The most variables for which the projected Newton stage runs (its Hessian is dense); the
/// torch backend offers its autograd Hessian only up to it.
#[cfg(feature = "torch")]
pub(crate) const NEWTON_MAX_VARIABLES: usize = newton::MAX_VARIABLES;

use augmented_lagrangian::PENALTY_MAX;
use glassbox_core::backend::{BackendEntry, Constructor};
use glassbox_core::nlp::NlpProblem;
use glassbox_core::options::{
    check_raw_options, OptionKind, OptionSpec, RawOptionValue, WarmStart,
};
use glassbox_core::solver::{refuse_milp_options, Capabilities, NlpSolver};
use glassbox_core::{
    deadline_passed, GlassboxError, Interrupt, Limit, Result, SolveOptions, SolveResult,
    TerminationStatus,
};
use std::time::{Duration, Instant};

/// The registry name of this backend.
pub const NAME: &str = "lbfgs";

/// What the backend can do.
pub const CAPABILITIES: Capabilities = Capabilities {
    integers: false,
    constraints: true,
    exact_hessian: true,
    warm_start: true,
    warm_start_duals: true,
    dual_bound: false,
    gpu: false,
    newton_steps: false,
    tensor_objective_only: false,
};

/// Default of `tolerance`.
pub const DEFAULT_TOLERANCE: f64 = 1e-8;
/// Default of the raw `constraint_tolerance`.
pub const DEFAULT_CONSTRAINT_TOLERANCE: f64 = 1e-6;

/// The raw options this backend accepts.
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "method",
        kind: OptionKind::Choice(&["lbfgs", "spg"]),
        help: "inner method over the bounds: projected L-BFGS or nonmonotone spectral projected gradient (default lbfgs)",
    },
    OptionSpec {
        name: "memory",
        kind: OptionKind::Int,
        help: "L-BFGS correction pairs, 1 to 1000 (default 10)",
    },
    OptionSpec {
        name: "inner_iterations",
        kind: OptionKind::Int,
        help: "iterations of one inner solve at most, >= 1 (default 10000)",
    },
    OptionSpec {
        name: "outer_iterations",
        kind: OptionKind::Int,
        help: "augmented Lagrangian iterations at most, >= 1 (default 100)",
    },
    OptionSpec {
        name: "penalty_initial",
        kind: OptionKind::Float,
        help: "first penalty parameter, in (0, 1e20] (default: ALGENCAN's 10 max(1,|f|) / max(1, violation^2 / 2), within [1e-8, 1e8])",
    },
    OptionSpec {
        name: "penalty_growth",
        kind: OptionKind::Float,
        help: "factor on the penalty when the violation did not halve, > 1 (default 10)",
    },
    OptionSpec {
        name: "constraint_tolerance",
        kind: OptionKind::Float,
        help: "largest constraint violation of a solution, and of a feasible point at a limit, > 0 (default 1e-6)",
    },
    OptionSpec {
        name: "refine",
        kind: OptionKind::Choice(&["newton", "none"]),
        help: "second stage of an inner solve that stops short of the tolerance: projected Newton on the exact Hessian (used when the problem gives one and has at most 2000 variables) or none (default newton)",
    },
    OptionSpec {
        name: "refine_after",
        kind: OptionKind::Int,
        help: "first-order iterations of an inner solve after which projected Newton takes over, >= 0 (0: Newton only; default: 0 with path = barrier, otherwise, path = auto included, only when the first-order method stalls)",
    },
    OptionSpec {
        name: "path",
        kind: OptionKind::Choice(PATH_CHOICES),
        help: "direct: solve from the start with the projected methods; barrier: first follow a log-barrier path inside the variable bounds, as an interior-point method does, then solve from its end; auto: barrier (with L-BFGS steps unless refine_after is set) on problems without general constraints; with general constraints, both paths from a multistart's random start, keeping the lower objective, direct from any other start (default auto: on Boston S-ORRT the direct path's best of 20 starts was 8.7% above IPOPT's, the barrier's below it; benches/README.md)",
    },
    OptionSpec {
        name: "barrier_initial",
        kind: OptionKind::Float,
        help: "path = barrier: the first barrier weight, > 0 (default 0.1, IPOPT's mu_init)",
    },
    OptionSpec {
        name: "barrier_final",
        kind: OptionKind::Float,
        help: "path = barrier: the path ends before the barrier weight falls below this, > 0 (default 1e-6; the first stage always runs)",
    },
];

/// The registry entry of this backend.
pub fn entry() -> BackendEntry {
    BackendEntry {
        name: NAME,
        description: "projected L-BFGS + augmented Lagrangian on argmin, refined by projected Newton when the problem gives a Hessian (local optima)",
        capabilities: CAPABILITIES,
        options: OPTIONS,
        constructor: Constructor::Nlp(|| Box::new(LbfgsSolver::new())),
        check_options,
    }
}

/// The values of raw `path` (also `torch`'s, whose default differs).
pub(crate) const PATH_CHOICES: &[&str] = &["auto", "direct", "barrier"];

/// When a barrier path ([`barrier`]) precedes the solve (raw `path`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    /// The projected methods from the start.
    Direct,
    /// Always the barrier path.
    Barrier,
    /// The barrier path on problems with variable bounds only; with general constraints,
    /// the direct path, and from an exploring start ([`WarmStart::explore`]) both paths,
    /// keeping the lower objective.
    Auto,
}

/// What a solve runs before (or as) the solve proper, from [`Path::plan`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PathPlan {
    Direct,
    Barrier,
    /// The direct path, then the barrier path from the same start; the lower objective wins.
    Both,
}

impl Path {
    /// What a problem with `constraints` general constraints runs from a start that
    /// `explores` or not.
    ///
    /// With general constraints (S-ORCT's class-assignment rows) neither path alone is the
    /// better multistart: from random starts at lambda = 0 the barrier's best of 20 met
    /// IPOPT's on 4 of 5 S-ORCT sets where the direct path met it on iris alone, while with
    /// iris's lambda_L = 0.005 (the engine's `sorct_iris_lbfgs.toml`) the barrier ended at
    /// the empty tree from 191 of 220 starts (benches/README.md "The `auto` path"). So an
    /// exploring start runs both and keeps the lower; a point to keep (CART's tree, a
    /// continuation's previous stage) the direct path only.
    pub fn plan(self, constraints: usize, explores: bool) -> PathPlan {
        match self {
            Path::Direct => PathPlan::Direct,
            Path::Barrier => PathPlan::Barrier,
            Path::Auto if constraints == 0 => PathPlan::Barrier,
            Path::Auto if explores => PathPlan::Both,
            Path::Auto => PathPlan::Direct,
        }
    }
}

/// The inner method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    Lbfgs,
    Spg,
}

/// Everything a solve is run with, from the typed and the raw options.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub method: Method,
    pub memory: usize,
    pub inner_iterations: u64,
    pub outer_iterations: u64,
    pub penalty_initial: Option<f64>,
    pub penalty_growth: f64,
    pub constraint_tolerance: f64,
    /// Whether projected Newton follows a first-order inner solve that stops short.
    pub refine: bool,
    /// First-order iterations of an inner solve before Newton takes over (`u64::MAX`: only
    /// when the first-order method stalls).
    pub refine_after: u64,
    /// When a barrier path ([`barrier`]) precedes the solve, and its first and last weights.
    pub path: Path,
    pub barrier_initial: f64,
    pub barrier_final: f64,
    pub tolerance: f64,
    pub time_limit: Option<Duration>,
    pub iteration_limit: Option<u64>,
    pub verbosity: u8,
    /// A stop request from outside (`SolveOptions::interrupt`), checked wherever the
    /// deadline is.
    pub interrupt: Option<Interrupt>,
}

/// Checks a config's options: as a solve does (see [`Settings::checked`]), and none that
/// another one turns off ([`refuse_unused_options`]).
pub(crate) fn check_options(options: &SolveOptions) -> Result<()> {
    refuse_unused_options(&options.raw)?;
    check_settings(options)
}

/// Checks the options as a solve does (see [`Settings::checked`]): for `torch`, whose own
/// defaults combine options a user may not (`refine = "none"` beside its `refine_after`).
pub(crate) fn check_settings(options: &SolveOptions) -> Result<()> {
    Settings::checked(options).map(|_| ())
}

/// Refuses a user's raw option that another one turns off, which would be silently unused:
/// `barrier_initial` / `barrier_final` with `path = "direct"`, `refine_after` with
/// `refine = "none"`.
pub(crate) fn refuse_unused_options(
    raw: &std::collections::BTreeMap<String, RawOptionValue>,
) -> Result<()> {
    let choice = |name: &str, value: &str| matches!(raw.get(name), Some(RawOptionValue::Str(s)) if s == value);
    for (name, off, by) in [
        (
            "barrier_initial",
            choice("path", "direct"),
            "path = \"direct\"",
        ),
        (
            "barrier_final",
            choice("path", "direct"),
            "path = \"direct\"",
        ),
        (
            "refine_after",
            choice("refine", "none"),
            "refine = \"none\"",
        ),
    ] {
        if off && raw.contains_key(name) {
            return Err(GlassboxError::InvalidOption {
                solver: NAME.to_string(),
                option: name.to_string(),
                message: format!("{by} leaves it unused: remove {name}, or change {by}"),
            });
        }
    }
    Ok(())
}

impl Settings {
    /// The settings of `options` after every check a solve makes: types, names, ranges, and
    /// no gap (a local method has no dual bound).
    fn checked(options: &SolveOptions) -> Result<Self> {
        options.validate()?;
        check_raw_options(NAME, OPTIONS, &options.raw)?;
        refuse_milp_options(NAME, options)?;
        Settings::new(options)
    }

    /// Reads and range-checks the options (their types were checked before).
    fn new(options: &SolveOptions) -> Result<Self> {
        let invalid = |name: &str, message: String| GlassboxError::InvalidOption {
            solver: NAME.to_string(),
            option: name.to_string(),
            message,
        };
        let int = |name: &str, lo: i64, hi: i64, default: i64| -> Result<i64> {
            match options.raw.get(name) {
                Some(RawOptionValue::Int(i)) if (lo..=hi).contains(i) => Ok(*i),
                Some(RawOptionValue::Int(i)) => {
                    Err(invalid(name, format!("must be in [{lo}, {hi}], got {i}")))
                }
                _ => Ok(default),
            }
        };
        let float = |name: &str| -> Option<f64> {
            match options.raw.get(name) {
                Some(RawOptionValue::Float(x)) => Some(*x),
                Some(RawOptionValue::Int(i)) => Some(*i as f64),
                _ => None,
            }
        };
        let penalty_initial = float("penalty_initial");
        // Above the cap the first outer iteration that neither converges nor stops at a
        // limit ends the solve as a numerical error: no second one could run.
        if let Some(p) = penalty_initial.filter(|p| !(*p > 0.0 && *p <= PENALTY_MAX)) {
            // 1e21, not 1000000000000000000000.
            let shown = match p.abs() {
                a if (1e-4..1e6).contains(&a) => p.to_string(),
                _ => format!("{p:e}"),
            };
            return Err(invalid(
                "penalty_initial",
                format!(
                    "must be in (0, {PENALTY_MAX:e}] (a penalty above {PENALTY_MAX:e} ends the solve as a numerical error), got {shown}"
                ),
            ));
        }
        let penalty_growth = float("penalty_growth").unwrap_or(10.0);
        if penalty_growth.is_nan() || penalty_growth <= 1.0 {
            return Err(invalid(
                "penalty_growth",
                format!("must be > 1, got {penalty_growth}"),
            ));
        }
        let constraint_tolerance =
            float("constraint_tolerance").unwrap_or(DEFAULT_CONSTRAINT_TOLERANCE);
        if constraint_tolerance.is_nan() || constraint_tolerance <= 0.0 {
            return Err(invalid(
                "constraint_tolerance",
                format!("must be > 0, got {constraint_tolerance}"),
            ));
        }
        let barrier_initial = float("barrier_initial").unwrap_or(0.1);
        if barrier_initial.is_nan() || barrier_initial <= 0.0 {
            return Err(invalid(
                "barrier_initial",
                format!("must be > 0, got {barrier_initial}"),
            ));
        }
        let barrier_final = float("barrier_final").unwrap_or(1e-6);
        if barrier_final.is_nan() || barrier_final <= 0.0 {
            return Err(invalid(
                "barrier_final",
                format!("must be > 0, got {barrier_final}"),
            ));
        }
        let path = match options.raw.get("path") {
            Some(RawOptionValue::Str(s)) if s == "barrier" => Path::Barrier,
            Some(RawOptionValue::Str(s)) if s == "direct" => Path::Direct,
            _ => Path::Auto,
        };
        let method = match options.raw.get("method") {
            Some(RawOptionValue::Str(s)) if s == "spg" => Method::Spg,
            _ => Method::Lbfgs,
        };
        Ok(Settings {
            method,
            memory: int("memory", 1, 1000, 10)? as usize,
            inner_iterations: int("inner_iterations", 1, i64::MAX, 10_000)? as u64,
            outer_iterations: int("outer_iterations", 1, i64::MAX, 100)? as u64,
            penalty_initial,
            penalty_growth,
            constraint_tolerance,
            refine: !matches!(options.raw.get("refine"), Some(RawOptionValue::Str(s)) if s == "none"),
            // Along a path asked for, Newton steps from the start, as IPOPT takes (per start
            // nearer IPOPT's point); the auto path takes L-BFGS steps, whose best of 20 starts
            // was the lowest on Boston S-ORRT (benches/README.md).
            refine_after: int(
                "refine_after",
                0,
                i64::MAX,
                if path == Path::Barrier { 0 } else { i64::MAX },
            )? as u64,
            path,
            barrier_initial,
            barrier_final,
            tolerance: options.tolerance.unwrap_or(DEFAULT_TOLERANCE),
            time_limit: options.time_limit_duration(),
            iteration_limit: options.iteration_limit,
            verbosity: options.verbosity,
            interrupt: options.interrupt.clone(),
        })
    }

    /// Whether a stop was requested from outside.
    pub fn interrupted(&self) -> bool {
        self.interrupt.as_ref().is_some_and(Interrupt::requested)
    }

    /// When a solve that began at `start` must end (none without a time limit).
    pub fn deadline(&self, start: Instant) -> Option<Instant> {
        self.time_limit.and_then(|d| start.checked_add(d))
    }

    /// These settings for what is left of the solve after `spent` iterations of it.
    pub fn after(&self, spent: u64) -> Settings {
        Settings {
            iteration_limit: self.iteration_limit.map(|l| l.saturating_sub(spent)),
            ..self.clone()
        }
    }

    /// Whether the solve must stop now: `deadline` has passed or a stop was requested.
    pub fn out_of_time(&self, deadline: Option<Instant>) -> bool {
        self.interrupted() || deadline_passed(deadline)
    }

    /// The limit a solve stopped by [`Settings::out_of_time`] (or by its inner solver's
    /// timeout) reports, and its words: the time limit once `deadline` has passed, also
    /// where a stop was requested too, as the IPOPT backend reports it (the solve ran its
    /// time either way); a stop request before the deadline.
    pub fn clock_limit(&self, deadline: Option<Instant>) -> (Limit, &'static str) {
        if self.interrupted() && !deadline_passed(deadline) {
            (Limit::Interrupted, "stop request")
        } else {
            (Limit::Time, "time limit")
        }
    }
}

/// The argmin backend. It holds no state; solves on different threads are independent.
#[derive(Clone, Copy, Debug, Default)]
pub struct LbfgsSolver;

impl LbfgsSolver {
    /// A new backend.
    pub fn new() -> Self {
        LbfgsSolver
    }
}

impl NlpSolver for LbfgsSolver {
    fn name(&self) -> &str {
        NAME
    }

    fn capabilities(&self) -> Capabilities {
        CAPABILITIES
    }

    fn solve(&self, problem: &dyn NlpProblem, options: &SolveOptions) -> Result<SolveResult> {
        let settings = Settings::checked(options)?;
        glassbox_core::nlp::validate(problem)?;
        let nlp = subproblem::Nlp::new(problem);
        let (x0, lambda0) = match &options.warm_start {
            None => (vec![0.0; nlp.n], None),
            Some(warm) => warm_start(problem, warm, nlp.n, nlp.m)?,
        };
        let start = Instant::now();
        if nlp.n == 0 {
            return Ok(solve_without_variables(&nlp, &settings, start));
        }
        // A warm start with multipliers continues a solve (as the IPOPT backend's
        // `warm_start_init_point`): no path back from the interior.
        let explores = options.warm_start.as_ref().is_some_and(|w| w.explore);
        let plan = match lambda0 {
            Some(_) => PathPlan::Direct,
            None => settings.path.plan(nlp.m, explores),
        };
        Ok(match plan {
            PathPlan::Direct => augmented_lagrangian::solve(&nlp, &settings, x0, lambda0, start),
            PathPlan::Barrier => barrier::solve(&nlp, &settings, x0, lambda0, start),
            PathPlan::Both => both_paths(&nlp, &settings, x0, start),
        })
    }
}

/// The direct path, then the barrier path from the same start `x0` within the limits left
/// (both count from `start`); the result with the lower objective among those with a
/// solution, its iterations the two solves' sum.
fn both_paths(
    nlp: &subproblem::Nlp,
    settings: &Settings,
    x0: Vec<f64>,
    start: Instant,
) -> SolveResult {
    let direct = augmented_lagrangian::solve(nlp, settings, x0.clone(), None, start);
    let rest = settings.after(direct.iterations);
    if settings.out_of_time(settings.deadline(start)) || rest.iteration_limit == Some(0) {
        return direct;
    }
    let barrier = barrier::solve(nlp, &rest, x0, None, start);
    let iterations = direct.iterations + barrier.iterations;
    let (mut kept, other, path) = if barrier_wins(&direct, &barrier) {
        (barrier, direct, "barrier")
    } else {
        (direct, barrier, "direct")
    };
    kept.iterations = iterations;
    kept.wall_seconds = start.elapsed().as_secs_f64();
    let other_objective = other
        .objective
        .map_or_else(|| "no objective".to_string(), |f| format!("{f:.6e}"));
    kept.raw_status = format!(
        "{} [auto: the {path} path's end, the lower of both paths' (the other: {other_objective}, {})]",
        kept.raw_status, other.status
    );
    kept
}

/// Whether [`both_paths`] keeps the barrier path's result: it has a solution and the direct
/// path's has none or a higher objective (a tie keeps the direct path's).
fn barrier_wins(direct: &SolveResult, barrier: &SolveResult) -> bool {
    let solution = |r: &SolveResult| r.objective.filter(|_| r.status.has_solution());
    match (solution(direct), solution(barrier)) {
        (Some(d), Some(b)) => b < d,
        (None, Some(_)) => true,
        (_, None) => false,
    }
}

/// The starting point and constraint multipliers of a warm start, checked by the core
/// ([`WarmStart::check`]; the bound multipliers are checked, not used).
fn warm_start(
    problem: &dyn NlpProblem,
    warm: &WarmStart,
    n: usize,
    m: usize,
) -> Result<(Vec<f64>, Option<Vec<f64>>)> {
    warm.check(&problem.name(), n, m)?;
    Ok((warm.primal.clone(), warm.constraint_multipliers.clone()))
}

/// A problem without variables: its only point is optimal if it satisfies the constraints.
fn solve_without_variables(
    nlp: &subproblem::Nlp,
    settings: &Settings,
    start: Instant,
) -> SolveResult {
    let mut result = SolveResult::failed(NAME, TerminationStatus::NumericalError, "");
    match nlp.values(&[]) {
        Ok(point) => {
            let violation = nlp.max_violation(&[], &point.g);
            let feasible = violation <= settings.constraint_tolerance;
            result.status = if !point.finite_values() {
                TerminationStatus::NumericalError
            } else if feasible {
                TerminationStatus::Optimal
            } else {
                TerminationStatus::Infeasible
            };
            result.objective = Some(point.f).filter(|f| f.is_finite());
            result.max_violation = Some(violation);
            result.raw_status = "no variables: the only point was evaluated".to_string();
        }
        Err(message) => result.raw_status = message,
    }
    result.wall_seconds = start.elapsed().as_secs_f64();
    result
}

#[cfg(test)]
mod tests;
