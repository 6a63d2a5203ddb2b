//! The IPOPT backend: solves an [`NlpProblem`] with Ipopt's primal-dual interior-point method
//! (a local method: its optima are [`TerminationStatus::LocallyOptimal`]).
//!
//! # Why a thin binding of our own
//!
//! Debian ships Ipopt 3.11 (`coinor-libipopt-dev`). Its `ipopt.pc` lists `-lm` beside a
//! folder that holds `libm.a`, which makes the `ipopt-sys` crate believe it must link Ipopt
//! statically; it then falls back to downloading and building Ipopt from source, which is
//! impossible offline. Ipopt's C interface (`IpStdCInterface.h`) is eight functions, so this
//! file binds them itself (the `ffi` module below) and gains full control of two things the
//! crates hide: Ipopt's output (silent by default, no banner, no `ipopt.opt` read from the
//! working directory) and the intermediate callback (wall-clock time limit, iteration count).
//! `build.rs` links `-lipopt`.
//!
//! # How options map
//!
//! - `tolerance` -> `tol`; `iteration_limit` -> `max_iter`.
//! - `time_limit` is wall-clock and enforced here: every callback checks the deadline and
//!   the intermediate callback (called once per Ipopt iteration) stops the solve once it has
//!   passed. The limit is also passed as `max_cpu_time` (Ipopt 3.11 knows only CPU time;
//!   with the sequential MUMPS and reference BLAS Debian ships, CPU time <= wall time, so
//!   this cap never fires first by much). Either way the status carries [`Limit::Time`].
//!   Ipopt cannot be interrupted inside an iteration: a solve overshoots its limit by at
//!   most one iteration (its evaluations and one factorization).
//! - `verbosity` 0 and 1 -> `print_level 0`, `sb yes` (nothing at all is printed: the
//!   one-line summary of verbosity 1 is the caller's); 2 and more -> `print_level 5`,
//!   Ipopt's iteration log on stdout.
//! - `seed` is ignored: Ipopt is deterministic. `threads` is ignored: Debian's MUMPS is the
//!   sequential build and its BLAS is single-threaded, so Ipopt uses one thread.
//! - `relative_gap` / `absolute_gap` are refused (Ipopt proves no bound, so it cannot stop
//!   at a gap).
//! - `raw` options (checked against [`OPTIONS`], including their ranges) are passed last,
//!   so they override the mappings above.
//!
//! # Starting point
//!
//! Without a warm start, Ipopt starts from the projection of 0 onto the variable bounds
//! (and then pushes it into the interior, see `bound_push`). A warm start gives the primal
//! point; when it also carries multipliers (as [`glassbox_core::SolveResult::warm_start`] does),
//! they are passed to Ipopt with `warm_start_init_point yes`, and the barrier parameter and
//! the pushes away from the bounds are set small (`mu_init`, `warm_start_*_push` = 1e-9), so
//! that a solve started at an optimum stops within an iteration or two. Raw options
//! override these defaults.
//!
//! # Multipliers
//!
//! Results carry Ipopt's sign convention: the Lagrangian is
//! `f(x) + lambda^T g(x) - z_L^T (x - x_L) + z_U^T (x - x_U)`, so at a KKT point
//! `grad f + J^T lambda - z_L + z_U = 0` with `z_L, z_U >= 0` (`lower_bound_multipliers` and
//! `upper_bound_multipliers`) and `lambda` (`constraint_multipliers`) of either sign.
//!
//! # Soundness
//!
//! The problem handed to Ipopt is freed by a drop guard; the callbacks reach the Rust
//! problem through a pointer to a struct that outlives the solve; every callback catches
//! panics (a panic stops the solve, which is reported as [`TerminationStatus::NumericalError`]
//! with the panic message in `raw_status`) and rejects non-finite values (Ipopt then treats
//! the point as an evaluation error, e.g. shortens its step). MUMPS is not reentrant (Ipopt
//! serializes MUMPS calls only from 3.14 on), so concurrent solves in one process take
//! turns on a process-wide lock; `time_limit` and `wall_seconds` count from the moment a
//! solve holds it. Run experiments in several processes to solve in parallel.
//!
//! Depends on the core (`nlp`, `options`, `result`, `solver`, `registry`) only.

use glassbox_core::backend::{BackendEntry, Constructor};
use glassbox_core::nlp::NlpProblem;
use glassbox_core::options::{
    check_raw_options, OptionKind, OptionSpec, RawOptionValue, WarmStart,
};
use glassbox_core::solver::{refuse_gaps, Capabilities, NlpSolver};
use glassbox_core::{GlassboxError, Limit, Result, SolveOptions, SolveResult, TerminationStatus};
use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_int, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The registry name of this backend.
pub const NAME: &str = "ipopt";

/// What Ipopt can do.
pub const CAPABILITIES: Capabilities = Capabilities {
    integers: false,
    constraints: true,
    exact_hessian: true,
    warm_start: true,
    warm_start_duals: true,
    dual_bound: false,
    gpu: false,
};

/// Absolute constraint violation under which a point counts as feasible when Ipopt stops
/// at a limit (Ipopt's own default of `constr_viol_tol`; the raw option overrides it).
const DEFAULT_FEASIBILITY_TOLERANCE: f64 = 1e-4;

/// The barrier parameter and bound pushes of a warm start with multipliers.
const WARM_START_PUSH: f64 = 1e-9;

/// The raw options this backend accepts: a curated subset of Ipopt's options, typed.
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "linear_solver",
        kind: OptionKind::Choice(&["mumps"]),
        help: "linear solver for the KKT systems (this Ipopt build has only MUMPS)",
    },
    OptionSpec {
        name: "mu_strategy",
        kind: OptionKind::Choice(&["monotone", "adaptive"]),
        help: "update strategy of the barrier parameter (default monotone)",
    },
    OptionSpec {
        name: "mu_init",
        kind: OptionKind::Float,
        help: "initial barrier parameter, > 0 (default 0.1; 1e-9 with a warm start with multipliers)",
    },
    OptionSpec {
        name: "hessian_approximation",
        kind: OptionKind::Choice(&["exact", "limited-memory"]),
        help: "exact Hessian of the Lagrangian, or L-BFGS (default: exact when the problem gives one)",
    },
    OptionSpec {
        name: "limited_memory_max_history",
        kind: OptionKind::Int,
        help: "number of L-BFGS correction pairs, >= 0 (default 6)",
    },
    OptionSpec {
        name: "acceptable_tol",
        kind: OptionKind::Float,
        help: "'acceptable' optimality tolerance, > 0 (default 1e-6)",
    },
    OptionSpec {
        name: "acceptable_iter",
        kind: OptionKind::Int,
        help: "acceptable iterates in a row before stopping as 'acceptable', >= 0 (0 disables; default 15)",
    },
    OptionSpec {
        name: "acceptable_constr_viol_tol",
        kind: OptionKind::Float,
        help: "'acceptable' absolute constraint violation, > 0 (default 0.01)",
    },
    OptionSpec {
        name: "constr_viol_tol",
        kind: OptionKind::Float,
        help: "absolute constraint violation for convergence and for 'feasible at a limit', > 0 (default 1e-4)",
    },
    OptionSpec {
        name: "dual_inf_tol",
        kind: OptionKind::Float,
        help: "absolute dual infeasibility for convergence, > 0 (default 1)",
    },
    OptionSpec {
        name: "compl_inf_tol",
        kind: OptionKind::Float,
        help: "absolute complementarity for convergence, > 0 (default 1e-4)",
    },
    OptionSpec {
        name: "bound_push",
        kind: OptionKind::Float,
        help: "absolute push of the starting point into the interior, > 0 (default 0.01)",
    },
    OptionSpec {
        name: "bound_frac",
        kind: OptionKind::Float,
        help: "relative push of the starting point into the interior, in (0, 0.5] (default 0.01)",
    },
    OptionSpec {
        name: "bound_relax_factor",
        kind: OptionKind::Float,
        help: "relative relaxation of the bounds, >= 0 (default 1e-8)",
    },
    OptionSpec {
        name: "nlp_scaling_method",
        kind: OptionKind::Choice(&["gradient-based", "none"]),
        help: "scaling of the problem (default gradient-based)",
    },
    OptionSpec {
        name: "obj_scaling_factor",
        kind: OptionKind::Float,
        help: "factor on the objective (negative maximizes), != 0 (default 1)",
    },
    OptionSpec {
        name: "print_level",
        kind: OptionKind::Int,
        help: "Ipopt's output, 0 to 12 (default: 0 at verbosity 0 and 1, 5 from verbosity 2)",
    },
    OptionSpec {
        name: "max_cpu_time",
        kind: OptionKind::Float,
        help: "CPU-time limit in seconds, > 0 (default: time_limit)",
    },
    OptionSpec {
        name: "warm_start_init_point",
        kind: OptionKind::Choice(&["yes", "no"]),
        help: "start from the given multipliers (default: yes when the warm start has multipliers)",
    },
    OptionSpec {
        name: "warm_start_bound_push",
        kind: OptionKind::Float,
        help: "absolute push of a warm start into the interior, > 0 (default 1e-9 with multipliers)",
    },
    OptionSpec {
        name: "warm_start_bound_frac",
        kind: OptionKind::Float,
        help: "relative push of a warm start into the interior, in (0, 0.5] (default 1e-9 with multipliers)",
    },
    OptionSpec {
        name: "warm_start_slack_bound_push",
        kind: OptionKind::Float,
        help: "absolute push of a warm start's slacks, > 0 (default 1e-9 with multipliers)",
    },
    OptionSpec {
        name: "warm_start_slack_bound_frac",
        kind: OptionKind::Float,
        help: "relative push of a warm start's slacks, in (0, 0.5] (default 1e-9 with multipliers)",
    },
    OptionSpec {
        name: "warm_start_mult_bound_push",
        kind: OptionKind::Float,
        help: "push of a warm start's bound multipliers away from 0, > 0 (default 1e-9 with multipliers)",
    },
    OptionSpec {
        name: "fixed_variable_treatment",
        kind: OptionKind::Choice(&["make_parameter", "make_constraint", "relax_bounds"]),
        help: "how variables with equal bounds are handled (default make_parameter)",
    },
    OptionSpec {
        name: "jac_c_constant",
        kind: OptionKind::Choice(&["yes", "no"]),
        help: "the equality constraints are linear (Jacobian evaluated once; default no)",
    },
    OptionSpec {
        name: "jac_d_constant",
        kind: OptionKind::Choice(&["yes", "no"]),
        help: "the inequality constraints are linear (Jacobian evaluated once; default no)",
    },
    OptionSpec {
        name: "hessian_constant",
        kind: OptionKind::Choice(&["yes", "no"]),
        help: "the problem is a QP (Hessian evaluated once; default no)",
    },
    OptionSpec {
        name: "expect_infeasible_problem",
        kind: OptionKind::Choice(&["yes", "no"]),
        help: "enable heuristics that detect infeasibility quickly (default no)",
    },
    OptionSpec {
        name: "diverging_iterates_tol",
        kind: OptionKind::Float,
        help: "|x| above which iterates count as diverging (reported unbounded), > 0 (default 1e20)",
    },
    OptionSpec {
        name: "mumps_mem_percent",
        kind: OptionKind::Int,
        help: "percent increase of MUMPS's work space, >= 0 (default 1000)",
    },
    OptionSpec {
        name: "mumps_pivtol",
        kind: OptionKind::Float,
        help: "MUMPS's pivot tolerance, in [0, 1] (default 1e-6)",
    },
];

/// The range a raw option's value must lie in, so that Ipopt never rejects (and prints
/// about) a value our type check let through.
fn check_range(name: &str, value: f64) -> std::result::Result<(), String> {
    enum Range {
        Positive,
        NonNegative,
        NonZero,
        HalfOpen(f64, f64),
        Closed(f64, f64),
    }
    let range = match name {
        "limited_memory_max_history"
        | "acceptable_iter"
        | "bound_relax_factor"
        | "mumps_mem_percent" => Range::NonNegative,
        "bound_frac" | "warm_start_bound_frac" | "warm_start_slack_bound_frac" => {
            Range::HalfOpen(0.0, 0.5)
        }
        "obj_scaling_factor" => Range::NonZero,
        "print_level" => Range::Closed(0.0, 12.0),
        "mumps_pivtol" => Range::Closed(0.0, 1.0),
        _ => Range::Positive,
    };
    let ok = match range {
        Range::Positive => value > 0.0,
        Range::NonNegative => value >= 0.0,
        Range::NonZero => value != 0.0,
        Range::HalfOpen(lo, hi) => value > lo && value <= hi,
        Range::Closed(lo, hi) => (lo..=hi).contains(&value),
    };
    if ok {
        return Ok(());
    }
    let expected = match range {
        Range::Positive => "> 0".to_string(),
        Range::NonNegative => ">= 0".to_string(),
        Range::NonZero => "not 0".to_string(),
        Range::HalfOpen(lo, hi) => format!("in ({lo}, {hi}]"),
        Range::Closed(lo, hi) => format!("in [{lo}, {hi}]"),
    };
    Err(format!("must be {expected}, got {value}"))
}

/// Checks the options as a solve does, before any Ipopt call: types, the ranges of
/// [`check_range`], 32-bit integers, and no gap (a local method has no dual bound).
fn check_options(options: &SolveOptions) -> Result<()> {
    options.validate()?;
    check_raw_options(NAME, OPTIONS, &options.raw)?;
    for (name, value) in &options.raw {
        let number = match value {
            RawOptionValue::Int(i) => Some(*i as f64),
            RawOptionValue::Float(x) => Some(*x),
            _ => None,
        };
        let invalid = |message| GlassboxError::InvalidOption {
            solver: NAME.to_string(),
            option: name.clone(),
            message,
        };
        if let (RawOptionValue::Int(i), Some(OptionKind::Int)) = (value, options_kind(name)) {
            if c_int::try_from(*i).is_err() {
                return Err(invalid(format!("{i} does not fit in a 32-bit integer")));
            }
        }
        if let Some(x) = number {
            check_range(name, x).map_err(invalid)?;
        }
    }
    refuse_gaps(NAME, options)
}

/// The registry entry of this backend.
pub fn entry() -> BackendEntry {
    BackendEntry {
        name: NAME,
        description: "Ipopt 3.11 interior-point method for NLPs (local optima; MUMPS)",
        capabilities: CAPABILITIES,
        options: OPTIONS,
        constructor: Constructor::Nlp(|| Box::new(IpoptSolver::new())),
        check_options,
    }
}

/// The IPOPT backend. It holds no state: every solve creates and frees its own Ipopt
/// problem, so one value can be shared by threads (their solves take turns, see the module
/// documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct IpoptSolver;

impl IpoptSolver {
    /// A new IPOPT backend.
    pub fn new() -> Self {
        IpoptSolver
    }
}

/// Serializes Ipopt solves within the process: MUMPS 5 (sequential) is not reentrant.
static IPOPT_LOCK: Mutex<()> = Mutex::new(());

impl NlpSolver for IpoptSolver {
    fn name(&self) -> &str {
        NAME
    }

    fn capabilities(&self) -> Capabilities {
        CAPABILITIES
    }

    fn solve(&self, problem: &dyn NlpProblem, options: &SolveOptions) -> Result<SolveResult> {
        #[cfg(feature = "torch")]
        ffi::dynamic::load().map_err(|e| GlassboxError::Capability {
            solver: NAME.to_string(),
            what: format!("load libipopt ({e})"),
        })?;
        check_options(options)?;
        glassbox_core::nlp::validate(problem)?;
        let request = Request::new(problem, options)?;
        if request.n == 0 {
            return Ok(solve_without_variables(problem, &request));
        }
        let lock = IPOPT_LOCK
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let start = Instant::now();
        let raw = run_ipopt(problem, options, &request, start);
        drop(lock);
        Ok(finish(problem, options, &request, raw?, start))
    }
}

/// Multipliers of the constraints, the lower bounds and the upper bounds.
type Duals = (Vec<f64>, Vec<f64>, Vec<f64>);

/// What a solve needs besides the problem, computed and checked before Ipopt is called.
struct Request {
    n: usize,
    m: usize,
    x_lower: Vec<f64>,
    x_upper: Vec<f64>,
    g_lower: Vec<f64>,
    g_upper: Vec<f64>,
    /// The Jacobian structure given to Ipopt: the problem's, or one explicit zero at
    /// (0, 0) when the problem has constraints but an empty Jacobian (Ipopt 3.11 refuses
    /// `nele_jac = 0` with `m > 0`).
    jacobian: Vec<(usize, usize)>,
    jacobian_padded: bool,
    /// The Hessian structure when the exact Hessian is used.
    hessian: Option<Vec<(usize, usize)>>,
    x0: Vec<f64>,
    /// Starting multipliers (constraints, lower bounds, upper bounds) of a warm start.
    duals: Option<Duals>,
}

impl Request {
    fn new(problem: &dyn NlpProblem, options: &SolveOptions) -> Result<Self> {
        let n = problem.num_variables();
        let m = problem.num_constraints();
        let too_big = |what: &str, count: usize| {
            GlassboxError::InvalidProblem(format!(
                "{}: {count} {what} is more than Ipopt can index ({})",
                problem.name(),
                c_int::MAX
            ))
        };
        if c_int::try_from(n).is_err() {
            return Err(too_big("variables", n));
        }
        if c_int::try_from(m).is_err() {
            return Err(too_big("constraints", m));
        }
        let (x_lower, x_upper) = problem.variable_bounds();
        let (g_lower, g_upper) = problem.constraint_bounds();

        let mut jacobian = problem.jacobian_structure();
        let jacobian_padded = m > 0 && jacobian.is_empty();
        if jacobian_padded && n > 0 {
            jacobian.push((0, 0));
        }
        if c_int::try_from(jacobian.len()).is_err() {
            return Err(too_big("Jacobian entries", jacobian.len()));
        }

        let wants = match options.raw.get("hessian_approximation") {
            Some(RawOptionValue::Str(s)) => Some(s.as_str()),
            _ => None,
        };
        let hessian = match (problem.hessian_structure(), wants) {
            (Some(_), Some("limited-memory")) => None,
            (Some(h), _) => Some(h),
            (None, Some("exact")) => {
                return Err(GlassboxError::InvalidOption {
                    solver: NAME.to_string(),
                    option: "hessian_approximation".to_string(),
                    message: format!(
                    "\"exact\" needs a Hessian, but problem {} gives none; use \"limited-memory\"",
                    problem.name()
                ),
                })
            }
            (None, _) => None,
        };
        if let Some(h) = &hessian {
            if c_int::try_from(h.len()).is_err() {
                return Err(too_big("Hessian entries", h.len()));
            }
        }

        let (x0, duals) = match &options.warm_start {
            None => (
                x_lower
                    .iter()
                    .zip(&x_upper)
                    .map(|(&l, &u)| 0f64.max(l).min(u))
                    .collect(),
                None,
            ),
            Some(warm) => warm_start(problem, warm, n, m)?,
        };
        Ok(Request {
            n,
            m,
            x_lower,
            x_upper,
            g_lower,
            g_upper,
            jacobian,
            jacobian_padded,
            hessian,
            x0,
            duals,
        })
    }
}

/// Checks a warm start against the problem's dimensions; missing multipliers of a warm
/// start that has some are zeros.
fn warm_start(
    problem: &dyn NlpProblem,
    warm: &WarmStart,
    n: usize,
    m: usize,
) -> Result<(Vec<f64>, Option<Duals>)> {
    let check = |what: &str, values: &[f64], expected: usize| {
        if values.len() != expected {
            return Err(GlassboxError::InvalidProblem(format!(
                "{}: the warm start's {what} has {} values, the problem needs {expected}",
                problem.name(),
                values.len()
            )));
        }
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(GlassboxError::InvalidProblem(format!(
                "{}: the warm start's {what} has the non-finite value {} at index {i}",
                problem.name(),
                values[i]
            )));
        }
        Ok(())
    };
    check("primal point", &warm.primal, n)?;
    let given = [
        (&warm.constraint_multipliers, "constraint multipliers", m),
        (&warm.lower_bound_multipliers, "lower-bound multipliers", n),
        (&warm.upper_bound_multipliers, "upper-bound multipliers", n),
    ];
    let mut any = false;
    let mut duals = Vec::with_capacity(3);
    for (values, what, len) in given {
        match values {
            Some(v) => {
                check(what, v, len)?;
                any = true;
                duals.push(v.clone());
            }
            None => duals.push(vec![0.0; len]),
        }
    }
    let duals = if any {
        let upper = duals.pop().unwrap_or_default();
        let lower = duals.pop().unwrap_or_default();
        let constraint = duals.pop().unwrap_or_default();
        Some((constraint, lower, upper))
    } else {
        None
    };
    Ok((warm.primal.clone(), duals))
}

/// What Ipopt returned.
struct RawOutcome {
    /// The return code, or `None` when Ipopt could not even create the problem.
    code: Option<c_int>,
    /// Whether Ipopt wrote its final point (it does not after early failures).
    finalized: bool,
    x: Vec<f64>,
    mult_g: Vec<f64>,
    mult_x_lower: Vec<f64>,
    mult_x_upper: Vec<f64>,
    iterations: u64,
    time_up: bool,
    panic: Option<String>,
    evaluation_error: Option<String>,
}

/// Creates the Ipopt problem, sets the options, solves, and frees the problem.
fn run_ipopt(
    problem: &dyn NlpProblem,
    options: &SolveOptions,
    request: &Request,
    start: Instant,
) -> Result<RawOutcome> {
    let (n, m) = (request.n, request.m);
    let context = Context {
        problem,
        n,
        m,
        jacobian: &request.jacobian,
        jacobian_padded: request.jacobian_padded,
        hessian: request.hessian.as_deref(),
        start,
        // A limit too large for a Duration (validated finite and positive) is no limit.
        time_limit: options
            .time_limit
            .and_then(|t| Duration::try_from_secs_f64(t).ok()),
        iterations: Cell::new(0),
        time_up: Cell::new(false),
        panic: RefCell::new(None),
        evaluation_error: RefCell::new(None),
    };
    let mut outcome = RawOutcome {
        code: None,
        finalized: false,
        x: request.x0.clone(),
        mult_g: vec![0.0; m],
        mult_x_lower: vec![0.0; n],
        mult_x_upper: vec![0.0; n],
        iterations: 0,
        time_up: false,
        panic: None,
        evaluation_error: None,
    };
    if let Some((g, l, u)) = &request.duals {
        outcome.mult_g.clone_from(g);
        outcome.mult_x_lower.clone_from(l);
        outcome.mult_x_upper.clone_from(u);
    }
    // Ipopt copies the bounds; it reads g_L / g_U only when m > 0.
    let mut bounds = [
        request.x_lower.clone(),
        request.x_upper.clone(),
        request.g_lower.clone(),
        request.g_upper.clone(),
    ];
    let [x_lower, x_upper, g_lower, g_upper] = &mut bounds;
    // SAFETY: the four arrays have the lengths Ipopt reads (n, n, m, m); Ipopt copies them
    // and keeps no pointer to them. The callbacks match the C signatures. Dimensions fit in
    // c_int (checked in `Request::new`).
    let handle = unsafe {
        ffi::CreateIpoptProblem(
            n as c_int,
            x_lower.as_mut_ptr(),
            x_upper.as_mut_ptr(),
            m as c_int,
            g_lower.as_mut_ptr(),
            g_upper.as_mut_ptr(),
            request.jacobian.len() as c_int,
            request.hessian.as_ref().map_or(0, Vec::len) as c_int,
            0,
            Some(eval_f),
            Some(eval_g),
            Some(eval_grad_f),
            Some(eval_jac_g),
            Some(eval_h),
        )
    };
    let Some(handle) = ProblemGuard::new(handle) else {
        return Ok(outcome);
    };
    set_options(&handle, options, request).map_err(|name| GlassboxError::InvalidOption {
        solver: NAME.to_string(),
        option: name,
        message: "Ipopt refused this option or its value".to_string(),
    })?;
    // SAFETY: `handle` is a live problem.
    unsafe {
        ffi::SetIntermediateCallback(handle.0, Some(intermediate));
    }
    let mut g = vec![0.0; m];
    let mut objective = f64::NAN;
    let user_data = &context as *const Context as *mut c_void;
    // SAFETY: `x` has n values; `g` and `mult_g` have m values and `mult_x_*` n values (a
    // vector of length 0 has a dangling, non-null pointer that Ipopt never reads); all live
    // until IpoptSolve returns. `user_data` points to `context`, which outlives the call;
    // the callbacks only read it through a shared reference.
    let code = unsafe {
        ffi::IpoptSolve(
            handle.0,
            outcome.x.as_mut_ptr(),
            g.as_mut_ptr(),
            &mut objective,
            outcome.mult_g.as_mut_ptr(),
            outcome.mult_x_lower.as_mut_ptr(),
            outcome.mult_x_upper.as_mut_ptr(),
            user_data,
        )
    };
    drop(handle);
    outcome.code = Some(code);
    // Ipopt writes the objective (which starts as NaN) only when it finalizes a point.
    outcome.finalized = !objective.is_nan();
    outcome.iterations = context.iterations.get();
    outcome.time_up = context.time_up.get() || context.past_deadline();
    outcome.panic = context.panic.take();
    outcome.evaluation_error = context.evaluation_error.take();
    Ok(outcome)
}

/// Sets Ipopt's options: the mapped typed options, then the raw ones. On failure returns
/// the name of the option Ipopt refused.
fn set_options(
    handle: &ProblemGuard,
    options: &SolveOptions,
    request: &Request,
) -> std::result::Result<(), String> {
    // Never read an `ipopt.opt` from the working directory: every option is explicit.
    handle.set_str("option_file_name", "")?;
    if options.verbosity >= 2 {
        handle.set_int("print_level", 5)?;
    } else {
        handle.set_int("print_level", 0)?;
        handle.set_str("sb", "yes")?;
    }
    if let Some(tol) = options.tolerance {
        handle.set_num("tol", tol)?;
    }
    if let Some(iterations) = options.iteration_limit {
        handle.set_int("max_iter", iterations.min(c_int::MAX as u64) as c_int)?;
    }
    if let Some(seconds) = options.time_limit {
        handle.set_num("max_cpu_time", seconds)?;
    }
    if request.hessian.is_none() {
        handle.set_str("hessian_approximation", "limited-memory")?;
    }
    if request.duals.is_some() {
        handle.set_str("warm_start_init_point", "yes")?;
        for name in [
            "mu_init",
            "warm_start_bound_push",
            "warm_start_bound_frac",
            "warm_start_slack_bound_push",
            "warm_start_slack_bound_frac",
            "warm_start_mult_bound_push",
        ] {
            handle.set_num(name, WARM_START_PUSH)?;
        }
    }
    for (name, value) in &options.raw {
        match value {
            RawOptionValue::Str(s) => handle.set_str(name, s)?,
            RawOptionValue::Bool(b) => handle.set_str(name, if *b { "yes" } else { "no" })?,
            RawOptionValue::Float(x) => handle.set_num(name, *x)?,
            RawOptionValue::Int(i) => match options_kind(name) {
                Some(OptionKind::Int) => {
                    let i = c_int::try_from(*i).map_err(|_| name.clone())?;
                    handle.set_int(name, i)?
                }
                _ => handle.set_num(name, *i as f64)?,
            },
        }
    }
    Ok(())
}

fn options_kind(name: &str) -> Option<OptionKind> {
    OPTIONS.iter().find(|s| s.name == name).map(|s| s.kind)
}

/// Builds the result from what Ipopt returned.
fn finish(
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
struct Evaluated {
    objective: Option<f64>,
    max_violation: f64,
}

fn evaluate(problem: &dyn NlpProblem, request: &Request, x: &[f64]) -> Evaluated {
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

/// A problem without variables is not Ipopt's to solve (it refuses n = 0): its only point
/// is optimal if it satisfies the constraints.
fn solve_without_variables(problem: &dyn NlpProblem, request: &Request) -> SolveResult {
    let start = Instant::now();
    let e = evaluate(problem, request, &[]);
    let feasible = e.max_violation <= DEFAULT_FEASIBILITY_TOLERANCE;
    SolveResult {
        solver: NAME.to_string(),
        status: if feasible {
            TerminationStatus::Optimal
        } else {
            TerminationStatus::Infeasible
        },
        primal: Vec::new(),
        objective: e.objective,
        dual_bound: None,
        gap: None,
        constraint_multipliers: None,
        lower_bound_multipliers: None,
        upper_bound_multipliers: None,
        max_violation: Some(e.max_violation),
        iterations: 0,
        nodes: None,
        wall_seconds: start.elapsed().as_secs_f64(),
        raw_status: "no variables: solved without Ipopt".to_string(),
    }
}

/// Frees the Ipopt problem when dropped.
struct ProblemGuard(ffi::IpoptProblem);

impl ProblemGuard {
    fn new(handle: ffi::IpoptProblem) -> Option<Self> {
        (!handle.is_null()).then_some(ProblemGuard(handle))
    }

    fn set_str(&self, name: &str, value: &str) -> std::result::Result<(), String> {
        let (Ok(key), Ok(val)) = (CString::new(name), CString::new(value)) else {
            return Err(name.to_string());
        };
        // SAFETY: live problem; Ipopt copies both strings and never writes through them.
        let ok = unsafe {
            ffi::AddIpoptStrOption(
                self.0,
                key.as_ptr() as *mut c_char,
                val.as_ptr() as *mut c_char,
            )
        };
        (ok != ffi::FALSE)
            .then_some(())
            .ok_or_else(|| name.to_string())
    }

    fn set_num(&self, name: &str, value: f64) -> std::result::Result<(), String> {
        let key = CString::new(name).map_err(|_| name.to_string())?;
        // SAFETY: live problem; Ipopt copies the string.
        let ok = unsafe { ffi::AddIpoptNumOption(self.0, key.as_ptr() as *mut c_char, value) };
        (ok != ffi::FALSE)
            .then_some(())
            .ok_or_else(|| name.to_string())
    }

    fn set_int(&self, name: &str, value: c_int) -> std::result::Result<(), String> {
        let key = CString::new(name).map_err(|_| name.to_string())?;
        // SAFETY: live problem; Ipopt copies the string.
        let ok = unsafe { ffi::AddIpoptIntOption(self.0, key.as_ptr() as *mut c_char, value) };
        (ok != ffi::FALSE)
            .then_some(())
            .ok_or_else(|| name.to_string())
    }
}

impl Drop for ProblemGuard {
    fn drop(&mut self) {
        // SAFETY: created by CreateIpoptProblem, freed exactly once.
        unsafe { ffi::FreeIpoptProblem(self.0) }
    }
}

/// What the callbacks see: the problem, the structures given to Ipopt, the clock, and what
/// they report back. Ipopt calls the callbacks one at a time on the solving thread, so
/// interior mutability through `Cell` / `RefCell` suffices.
struct Context<'a> {
    problem: &'a dyn NlpProblem,
    n: usize,
    m: usize,
    jacobian: &'a [(usize, usize)],
    jacobian_padded: bool,
    hessian: Option<&'a [(usize, usize)]>,
    start: Instant,
    time_limit: Option<Duration>,
    iterations: Cell<u64>,
    time_up: Cell<bool>,
    /// The message of the first panic of an evaluation; the solve stops after one.
    panic: RefCell<Option<String>>,
    /// The last failed evaluation (non-finite value, bad input from Ipopt).
    evaluation_error: RefCell<Option<String>>,
}

impl Context<'_> {
    fn past_deadline(&self) -> bool {
        self.time_limit
            .is_some_and(|limit| self.start.elapsed() >= limit)
    }

    /// Runs one evaluation: checks the deadline (the intermediate callback acts on it),
    /// catches panics, and turns an error into Ipopt's FALSE.
    fn guarded(&self, evaluation: impl FnOnce() -> std::result::Result<(), String>) -> ffi::Bool {
        if self.past_deadline() {
            self.time_up.set(true);
        }
        if self.panic.borrow().is_some() {
            return ffi::FALSE;
        }
        match catch_unwind(AssertUnwindSafe(evaluation)) {
            Ok(Ok(())) => ffi::TRUE,
            Ok(Err(message)) => {
                *self.evaluation_error.borrow_mut() = Some(message);
                ffi::FALSE
            }
            Err(payload) => {
                *self.panic.borrow_mut() = Some(panic_message(payload.as_ref()));
                ffi::FALSE
            }
        }
    }
}

/// The message of a caught panic.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-string payload".to_string())
}

/// Recovers the context from Ipopt's user data.
///
/// # Safety
/// `user_data` must be the pointer `run_ipopt` passed to `IpoptSolve`.
unsafe fn context<'a>(user_data: ffi::UserDataPtr) -> &'a Context<'a> {
    &*(user_data as *const Context<'a>)
}

/// A slice of `len` values at `ptr`; `None` if Ipopt gave a null pointer for a non-empty
/// array or a length that disagrees with the problem's.
///
/// # Safety
/// A non-null `ptr` must point to `len` readable values that outlive `'a`.
unsafe fn input<'a>(ptr: *const f64, len: c_int, expected: usize) -> Option<&'a [f64]> {
    if usize::try_from(len).ok()? != expected {
        return None;
    }
    if expected == 0 {
        Some(&[])
    } else if ptr.is_null() {
        None
    } else {
        Some(std::slice::from_raw_parts(ptr, expected))
    }
}

/// As [`input`], for an array Ipopt wants written.
///
/// # Safety
/// A non-null `ptr` must point to `len` writable values, not aliased, that outlive `'a`.
unsafe fn output<'a, T>(ptr: *mut T, len: usize) -> Option<&'a mut [T]> {
    if len == 0 {
        Some(&mut [])
    } else if ptr.is_null() {
        None
    } else {
        Some(std::slice::from_raw_parts_mut(ptr, len))
    }
}

fn bad_arguments(what: &str) -> String {
    format!("Ipopt passed inconsistent arrays to {what}")
}

fn first_non_finite(values: &[f64]) -> Option<usize> {
    values.iter().position(|v| !v.is_finite())
}

unsafe extern "C" fn eval_f(
    n: ffi::Index,
    x: *mut ffi::Number,
    _new_x: ffi::Bool,
    obj_value: *mut ffi::Number,
    user_data: ffi::UserDataPtr,
) -> ffi::Bool {
    let ctx = context(user_data);
    ctx.guarded(|| {
        let x = input(x, n, ctx.n).ok_or_else(|| bad_arguments("eval_f"))?;
        if obj_value.is_null() {
            return Err(bad_arguments("eval_f"));
        }
        let f = ctx.problem.objective(x);
        if !f.is_finite() {
            return Err(format!("the objective is {f}"));
        }
        *obj_value = f;
        Ok(())
    })
}

unsafe extern "C" fn eval_grad_f(
    n: ffi::Index,
    x: *mut ffi::Number,
    _new_x: ffi::Bool,
    grad_f: *mut ffi::Number,
    user_data: ffi::UserDataPtr,
) -> ffi::Bool {
    let ctx = context(user_data);
    ctx.guarded(|| {
        let x = input(x, n, ctx.n).ok_or_else(|| bad_arguments("eval_grad_f"))?;
        let grad = output(grad_f, ctx.n).ok_or_else(|| bad_arguments("eval_grad_f"))?;
        ctx.problem.gradient(x, grad);
        match first_non_finite(grad) {
            Some(i) => Err(format!("gradient entry {i} is {}", grad[i])),
            None => Ok(()),
        }
    })
}

unsafe extern "C" fn eval_g(
    n: ffi::Index,
    x: *mut ffi::Number,
    _new_x: ffi::Bool,
    m: ffi::Index,
    g: *mut ffi::Number,
    user_data: ffi::UserDataPtr,
) -> ffi::Bool {
    let ctx = context(user_data);
    ctx.guarded(|| {
        let x = input(x, n, ctx.n).ok_or_else(|| bad_arguments("eval_g"))?;
        if usize::try_from(m).ok() != Some(ctx.m) {
            return Err(bad_arguments("eval_g"));
        }
        let g = output(g, ctx.m).ok_or_else(|| bad_arguments("eval_g"))?;
        ctx.problem.constraints(x, g);
        match first_non_finite(g) {
            Some(i) => Err(format!("constraint {i} is {}", g[i])),
            None => Ok(()),
        }
    })
}

unsafe extern "C" fn eval_jac_g(
    n: ffi::Index,
    x: *mut ffi::Number,
    _new_x: ffi::Bool,
    m: ffi::Index,
    nele_jac: ffi::Index,
    i_row: *mut ffi::Index,
    j_col: *mut ffi::Index,
    values: *mut ffi::Number,
    user_data: ffi::UserDataPtr,
) -> ffi::Bool {
    let ctx = context(user_data);
    ctx.guarded(|| {
        let len = ctx.jacobian.len();
        if usize::try_from(m).ok() != Some(ctx.m) || usize::try_from(nele_jac).ok() != Some(len) {
            return Err(bad_arguments("eval_jac_g"));
        }
        if !i_row.is_null() {
            let rows = output(i_row, len).ok_or_else(|| bad_arguments("eval_jac_g"))?;
            let cols = output(j_col, len).ok_or_else(|| bad_arguments("eval_jac_g"))?;
            for ((r, c), &(i, j)) in rows.iter_mut().zip(cols.iter_mut()).zip(ctx.jacobian) {
                // In range: validated against n and m, which fit in c_int.
                *r = i as c_int;
                *c = j as c_int;
            }
            return Ok(());
        }
        let x = input(x, n, ctx.n).ok_or_else(|| bad_arguments("eval_jac_g"))?;
        let values = output(values, len).ok_or_else(|| bad_arguments("eval_jac_g"))?;
        if ctx.jacobian_padded {
            values.fill(0.0);
            return Ok(());
        }
        ctx.problem.jacobian_values(x, values);
        match first_non_finite(values) {
            Some(k) => Err(format!(
                "Jacobian entry {:?} is {}",
                ctx.jacobian[k], values[k]
            )),
            None => Ok(()),
        }
    })
}

unsafe extern "C" fn eval_h(
    n: ffi::Index,
    x: *mut ffi::Number,
    _new_x: ffi::Bool,
    obj_factor: ffi::Number,
    m: ffi::Index,
    lambda: *mut ffi::Number,
    _new_lambda: ffi::Bool,
    nele_hess: ffi::Index,
    i_row: *mut ffi::Index,
    j_col: *mut ffi::Index,
    values: *mut ffi::Number,
    user_data: ffi::UserDataPtr,
) -> ffi::Bool {
    let ctx = context(user_data);
    ctx.guarded(|| {
        let Some(hessian) = ctx.hessian else {
            return Err("Ipopt asked for a Hessian the problem does not give".to_string());
        };
        let len = hessian.len();
        if usize::try_from(nele_hess).ok() != Some(len) {
            return Err(bad_arguments("eval_h"));
        }
        if !i_row.is_null() {
            let rows = output(i_row, len).ok_or_else(|| bad_arguments("eval_h"))?;
            let cols = output(j_col, len).ok_or_else(|| bad_arguments("eval_h"))?;
            for ((r, c), &(i, j)) in rows.iter_mut().zip(cols.iter_mut()).zip(hessian) {
                *r = i as c_int;
                *c = j as c_int;
            }
            return Ok(());
        }
        let x = input(x, n, ctx.n).ok_or_else(|| bad_arguments("eval_h"))?;
        let lambda = input(lambda, m, ctx.m).ok_or_else(|| bad_arguments("eval_h"))?;
        let values = output(values, len).ok_or_else(|| bad_arguments("eval_h"))?;
        if !obj_factor.is_finite() {
            return Err(format!("Ipopt passed obj_factor {obj_factor}"));
        }
        ctx.problem.hessian_values(x, obj_factor, lambda, values);
        match first_non_finite(values) {
            Some(k) => Err(format!("Hessian entry {:?} is {}", hessian[k], values[k])),
            None => Ok(()),
        }
    })
}

/// Called once per iteration: counts iterations and stops the solve at the deadline or
/// after a panic.
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn intermediate(
    _alg_mod: ffi::Index,
    iter_count: ffi::Index,
    _obj_value: ffi::Number,
    _inf_pr: ffi::Number,
    _inf_du: ffi::Number,
    _mu: ffi::Number,
    _d_norm: ffi::Number,
    _regularization_size: ffi::Number,
    _alpha_du: ffi::Number,
    _alpha_pr: ffi::Number,
    _ls_trials: ffi::Index,
    user_data: ffi::UserDataPtr,
) -> ffi::Bool {
    let ctx = context(user_data);
    let keep_going = catch_unwind(AssertUnwindSafe(|| {
        ctx.iterations.set(u64::try_from(iter_count).unwrap_or(0));
        if ctx.panic.borrow().is_some() {
            return false;
        }
        if ctx.time_up.get() || ctx.past_deadline() {
            ctx.time_up.set(true);
            return false;
        }
        true
    }));
    if keep_going.unwrap_or(false) {
        ffi::TRUE
    } else {
        ffi::FALSE
    }
}

/// Declares Ipopt's C functions: an `extern` block in the default build; with the `torch`
/// feature, functions of the same names that call through pointers `dlsym`'d from libipopt
/// opened with `RTLD_DEEPBIND` (see [`ffi::dynamic`]).
macro_rules! ipopt_functions {
    ($( $(#[$meta:meta])* pub fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?; )*) => {
        #[cfg(not(feature = "torch"))]
        extern "C" {
            $( $(#[$meta])* pub fn $name($($arg: $ty),*) $(-> $ret)?; )*
        }

        /// The addresses of Ipopt's functions, looked up once.
        #[cfg(feature = "torch")]
        pub struct Functions {
            $( $name: unsafe extern "C" fn($($ty),*) $(-> $ret)?, )*
        }

        #[cfg(feature = "torch")]
        impl Functions {
            /// # Safety
            /// `library` is a live handle of libipopt.
            unsafe fn look_up(library: *mut c_void) -> Result<Self, String> {
                Ok(Functions {
                    $( $name: {
                        let symbol = dynamic::symbol(library, concat!(stringify!($name), "\0"))?;
                        // SAFETY: the symbol is Ipopt's function of this C signature.
                        unsafe {
                            std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($ty),*) $(-> $ret)?>(symbol)
                        }
                    }, )*
                })
            }
        }

        $(
            #[cfg(feature = "torch")]
            $(#[$meta])*
            /// # Safety
            /// As Ipopt's C function; [`dynamic::load`] has succeeded.
            #[allow(clippy::too_many_arguments)] // the C signature's
            pub unsafe fn $name($($arg: $ty),*) $(-> $ret)? {
                let functions = dynamic::loaded().expect("ipopt: solve() loads the library first");
                // SAFETY: the caller upholds the C function's contract.
                unsafe { (functions.$name)($($arg),*) }
            }
        )*
    };
}

/// Ipopt's C interface (`coin/IpStdCInterface.h`, return codes from
/// `coin/IpReturnCodes_inc.h`), as Ipopt 3.11 declares it.
#[allow(non_snake_case, dead_code)]
mod ffi {
    use std::ffi::{c_char, c_int, c_void};

    pub type Index = c_int;
    pub type Number = f64;
    pub type Int = c_int;
    pub type Bool = c_int;
    pub type UserDataPtr = *mut c_void;

    pub const TRUE: Bool = 1;
    pub const FALSE: Bool = 0;

    /// Ipopt's opaque problem.
    #[repr(C)]
    pub struct IpoptProblemInfo {
        _private: [u8; 0],
    }
    pub type IpoptProblem = *mut IpoptProblemInfo;

    pub type EvalF =
        unsafe extern "C" fn(Index, *mut Number, Bool, *mut Number, UserDataPtr) -> Bool;
    pub type EvalGradF =
        unsafe extern "C" fn(Index, *mut Number, Bool, *mut Number, UserDataPtr) -> Bool;
    pub type EvalG =
        unsafe extern "C" fn(Index, *mut Number, Bool, Index, *mut Number, UserDataPtr) -> Bool;
    pub type EvalJacG = unsafe extern "C" fn(
        Index,
        *mut Number,
        Bool,
        Index,
        Index,
        *mut Index,
        *mut Index,
        *mut Number,
        UserDataPtr,
    ) -> Bool;
    pub type EvalH = unsafe extern "C" fn(
        Index,
        *mut Number,
        Bool,
        Number,
        Index,
        *mut Number,
        Bool,
        Index,
        *mut Index,
        *mut Index,
        *mut Number,
        UserDataPtr,
    ) -> Bool;
    pub type IntermediateCb = unsafe extern "C" fn(
        Index,
        Index,
        Number,
        Number,
        Number,
        Number,
        Number,
        Number,
        Number,
        Number,
        Index,
        UserDataPtr,
    ) -> Bool;

    // Linked at build time, except with `torch` (see `dynamic`): one list of functions.
    ipopt_functions! {
        pub fn CreateIpoptProblem(
            n: Index,
            x_L: *mut Number,
            x_U: *mut Number,
            m: Index,
            g_L: *mut Number,
            g_U: *mut Number,
            nele_jac: Index,
            nele_hess: Index,
            index_style: Index,
            eval_f: Option<EvalF>,
            eval_g: Option<EvalG>,
            eval_grad_f: Option<EvalGradF>,
            eval_jac_g: Option<EvalJacG>,
            eval_h: Option<EvalH>,
        ) -> IpoptProblem;
        pub fn FreeIpoptProblem(ipopt_problem: IpoptProblem);
        pub fn AddIpoptStrOption(
            ipopt_problem: IpoptProblem,
            keyword: *mut c_char,
            val: *mut c_char,
        ) -> Bool;
        pub fn AddIpoptNumOption(
            ipopt_problem: IpoptProblem,
            keyword: *mut c_char,
            val: Number,
        ) -> Bool;
        pub fn AddIpoptIntOption(
            ipopt_problem: IpoptProblem,
            keyword: *mut c_char,
            val: Int,
        ) -> Bool;
        pub fn OpenIpoptOutputFile(
            ipopt_problem: IpoptProblem,
            file_name: *mut c_char,
            print_level: Int,
        ) -> Bool;
        pub fn SetIntermediateCallback(
            ipopt_problem: IpoptProblem,
            intermediate_cb: Option<IntermediateCb>,
        ) -> Bool;
        /// Returns an `enum ApplicationReturnStatus` (an `int` in the C ABI).
        pub fn IpoptSolve(
            ipopt_problem: IpoptProblem,
            x: *mut Number,
            g: *mut Number,
            obj_val: *mut Number,
            mult_g: *mut Number,
            mult_x_L: *mut Number,
            mult_x_U: *mut Number,
            user_data: UserDataPtr,
        ) -> c_int;
    }

    // enum ApplicationReturnStatus
    pub const SOLVE_SUCCEEDED: c_int = 0;
    pub const SOLVED_TO_ACCEPTABLE_LEVEL: c_int = 1;
    pub const INFEASIBLE_PROBLEM_DETECTED: c_int = 2;
    pub const SEARCH_DIRECTION_BECOMES_TOO_SMALL: c_int = 3;
    pub const DIVERGING_ITERATES: c_int = 4;
    pub const USER_REQUESTED_STOP: c_int = 5;
    pub const FEASIBLE_POINT_FOUND: c_int = 6;
    pub const MAXIMUM_ITERATIONS_EXCEEDED: c_int = -1;
    pub const RESTORATION_FAILED: c_int = -2;
    pub const ERROR_IN_STEP_COMPUTATION: c_int = -3;
    pub const MAXIMUM_CPUTIME_EXCEEDED: c_int = -4;
    pub const NOT_ENOUGH_DEGREES_OF_FREEDOM: c_int = -10;
    pub const INVALID_PROBLEM_DEFINITION: c_int = -11;
    pub const INVALID_OPTION: c_int = -12;
    pub const INVALID_NUMBER_DETECTED: c_int = -13;
    pub const UNRECOVERABLE_EXCEPTION: c_int = -100;
    pub const NONIPOPT_EXCEPTION_THROWN: c_int = -101;
    pub const INSUFFICIENT_MEMORY: c_int = -102;
    pub const INTERNAL_ERROR: c_int = -199;

    /// With the `torch` feature, libipopt is opened at the first solve with `RTLD_DEEPBIND`
    /// instead of being linked. Why: libtorch_cpu exports the BLAS and LAPACK functions of the
    /// library it carries (`dgemm_`, `dgetrf_`, ...) and, linked into the binary, comes before
    /// the system's libblas in the dynamic linker's search order, so MUMPS ran on libtorch's
    /// BLAS and IPOPT's iterates (on S-ORRT even its local optima) depended on the cargo
    /// feature. Linking the system's libblas first instead is no fix: libtorch calls its own
    /// `dgemm_` through the dynamic linker too, and torch would run on the reference BLAS.
    /// `RTLD_DEEPBIND` makes libipopt and the libraries it brings (MUMPS, BLAS, LAPACK) look
    /// up symbols in their own dependencies first, leaving the global order, and torch, as
    /// they are.
    #[cfg(feature = "torch")]
    pub mod dynamic {
        use super::Functions;
        use std::ffi::{c_char, c_int, c_void, CStr, CString};
        use std::sync::OnceLock;

        const RTLD_NOW: c_int = 2;
        const RTLD_LOCAL: c_int = 0;
        const RTLD_DEEPBIND: c_int = 8;

        extern "C" {
            fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
            fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
            fn dlerror() -> *mut c_char;
        }

        static FUNCTIONS: OnceLock<Result<Functions, String>> = OnceLock::new();

        fn last_error() -> String {
            // SAFETY: dlerror returns null or a C string valid until the next dl* call.
            unsafe {
                let message = dlerror();
                if message.is_null() {
                    "unknown error".to_string()
                } else {
                    CStr::from_ptr(message).to_string_lossy().into_owned()
                }
            }
        }

        /// `name` ends with a NUL.
        pub(super) fn symbol(library: *mut c_void, name: &str) -> Result<*mut c_void, String> {
            // SAFETY: a live handle and a NUL-terminated name.
            let address = unsafe { dlsym(library, name.as_ptr().cast()) };
            if address.is_null() {
                Err(format!("{}: {}", name.trim_end_matches('\0'), last_error()))
            } else {
                Ok(address)
            }
        }

        /// The library files tried in turn: the build's libdir (`IPOPT_LIB_DIR` or
        /// pkg-config's, recorded by build.rs), then the loader's search path.
        fn candidates() -> Vec<String> {
            let mut files = Vec::new();
            if let Some(dir) = option_env!("GLASSBOX_IPOPT_LIB_DIR").filter(|d| !d.is_empty()) {
                files.push(format!("{dir}/libipopt.so"));
            }
            files.extend(["libipopt.so", "libipopt.so.1", "libipopt.so.3"].map(String::from));
            files
        }

        fn open() -> Result<Functions, String> {
            let mut errors = Vec::new();
            for file in candidates() {
                let name = CString::new(file.as_str()).map_err(|e| e.to_string())?;
                // SAFETY: a NUL-terminated file name; the handle is never closed.
                let library =
                    unsafe { dlopen(name.as_ptr(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND) };
                if library.is_null() {
                    errors.push(last_error());
                    continue;
                }
                // SAFETY: `library` is a live handle of libipopt.
                return unsafe { Functions::look_up(library) };
            }
            Err(errors.join("; "))
        }

        /// Opens libipopt once; the error names each file tried.
        pub fn load() -> Result<&'static Functions, String> {
            FUNCTIONS.get_or_init(open).as_ref().map_err(Clone::clone)
        }

        pub(super) fn loaded() -> Option<&'static Functions> {
            FUNCTIONS.get().and_then(|f| f.as_ref().ok())
        }
    }

    /// Ipopt's name of a return code.
    pub fn status_name(code: c_int) -> Option<&'static str> {
        Some(match code {
            SOLVE_SUCCEEDED => "Solve_Succeeded",
            SOLVED_TO_ACCEPTABLE_LEVEL => "Solved_To_Acceptable_Level",
            INFEASIBLE_PROBLEM_DETECTED => "Infeasible_Problem_Detected",
            SEARCH_DIRECTION_BECOMES_TOO_SMALL => "Search_Direction_Becomes_Too_Small",
            DIVERGING_ITERATES => "Diverging_Iterates",
            USER_REQUESTED_STOP => "User_Requested_Stop",
            FEASIBLE_POINT_FOUND => "Feasible_Point_Found",
            MAXIMUM_ITERATIONS_EXCEEDED => "Maximum_Iterations_Exceeded",
            RESTORATION_FAILED => "Restoration_Failed",
            ERROR_IN_STEP_COMPUTATION => "Error_In_Step_Computation",
            MAXIMUM_CPUTIME_EXCEEDED => "Maximum_CpuTime_Exceeded",
            NOT_ENOUGH_DEGREES_OF_FREEDOM => "Not_Enough_Degrees_Of_Freedom",
            INVALID_PROBLEM_DEFINITION => "Invalid_Problem_Definition",
            INVALID_OPTION => "Invalid_Option",
            INVALID_NUMBER_DETECTED => "Invalid_Number_Detected",
            UNRECOVERABLE_EXCEPTION => "Unrecoverable_Exception",
            NONIPOPT_EXCEPTION_THROWN => "NonIpopt_Exception_Thrown",
            INSUFFICIENT_MEMORY => "Insufficient_Memory",
            INTERNAL_ERROR => "Internal_Error",
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{self, raw};

    const INF: f64 = f64::INFINITY;

    /// min sum_j (x_j - target_j)^2 over a box, with optional linear constraints
    /// `rows * x` in `[g_lower, g_upper]` given densely.
    #[derive(Clone)]
    struct Quadratic {
        target: Vec<f64>,
        lower: Vec<f64>,
        upper: Vec<f64>,
        rows: Vec<Vec<f64>>,
        g_lower: Vec<f64>,
        g_upper: Vec<f64>,
        hessian: bool,
        /// Burn this much CPU in every objective evaluation.
        busy: Duration,
        /// Panic in the objective when x[0] is above this.
        panic_above: f64,
    }

    impl Quadratic {
        fn new(target: &[f64]) -> Self {
            let n = target.len();
            Quadratic {
                target: target.to_vec(),
                lower: vec![-INF; n],
                upper: vec![INF; n],
                rows: vec![],
                g_lower: vec![],
                g_upper: vec![],
                hessian: true,
                busy: Duration::ZERO,
                panic_above: INF,
            }
        }
    }

    impl NlpProblem for Quadratic {
        fn num_variables(&self) -> usize {
            self.target.len()
        }
        fn num_constraints(&self) -> usize {
            self.rows.len()
        }
        fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
            (self.lower.clone(), self.upper.clone())
        }
        fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
            (self.g_lower.clone(), self.g_upper.clone())
        }
        fn objective(&self, x: &[f64]) -> f64 {
            if x.first().is_some_and(|&v| v > self.panic_above) {
                panic!("objective exploded at {x:?}");
            }
            let start = Instant::now();
            while start.elapsed() < self.busy {
                std::hint::spin_loop();
            }
            x.iter()
                .zip(&self.target)
                .map(|(x, t)| (x - t).powi(2))
                .sum()
        }
        fn gradient(&self, x: &[f64], grad: &mut [f64]) {
            for ((g, x), t) in grad.iter_mut().zip(x).zip(&self.target) {
                *g = 2.0 * (x - t);
            }
        }
        fn constraints(&self, x: &[f64], g: &mut [f64]) {
            for (g, row) in g.iter_mut().zip(&self.rows) {
                *g = row.iter().zip(x).map(|(a, x)| a * x).sum();
            }
        }
        fn jacobian_structure(&self) -> Vec<(usize, usize)> {
            let mut s = vec![];
            for (i, row) in self.rows.iter().enumerate() {
                for (j, a) in row.iter().enumerate() {
                    if *a != 0.0 {
                        s.push((i, j));
                    }
                }
            }
            s
        }
        fn jacobian_values(&self, _x: &[f64], values: &mut [f64]) {
            let nonzeros = self.rows.iter().flatten().filter(|a| **a != 0.0);
            for (v, a) in values.iter_mut().zip(nonzeros) {
                *v = *a;
            }
        }
        fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
            self.hessian
                .then(|| (0..self.target.len()).map(|i| (i, i)).collect())
        }
        fn hessian_values(&self, _x: &[f64], sigma: f64, _lambda: &[f64], values: &mut [f64]) {
            values.fill(2.0 * sigma);
        }
    }

    fn solve(problem: &dyn NlpProblem, options: &SolveOptions) -> SolveResult {
        IpoptSolver::new().solve(problem, options).expect("solve")
    }

    #[test]
    fn solver_is_send_sync_and_matches_its_entry() {
        fn assert_send_sync<T: Send + Sync + Clone>() {}
        assert_send_sync::<IpoptSolver>();
        let entry = entry();
        assert_eq!(entry.name, IpoptSolver::new().name());
        assert_eq!(entry.problem_kind(), "nlp");
        assert!(entry.options.iter().all(|o| !o.help.is_empty()));
        let mut names: Vec<&str> = entry.options.iter().map(|o| o.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), entry.options.len(), "duplicate option names");
    }

    #[test]
    fn every_return_code_has_a_name() {
        for code in [
            0, 1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -10, -11, -12, -13, -100, -101, -102, -199,
        ] {
            assert!(ffi::status_name(code).is_some(), "{code}");
        }
        assert!(ffi::status_name(7).is_none());
    }

    #[test]
    fn warm_start_with_multipliers_and_no_constraints() {
        let mut problem = Quadratic::new(&[2.0, -1.0]);
        problem.lower = vec![0.0, 0.0];
        problem.upper = vec![1.0, 1.0];
        let cold = solve(&problem, &SolveOptions::default());
        assert_eq!(cold.status, TerminationStatus::LocallyOptimal);
        let warm = solve(
            &problem,
            &SolveOptions::default().with_warm_start(Some(cold.warm_start())),
        );
        assert_eq!(
            warm.status,
            TerminationStatus::LocallyOptimal,
            "{}",
            warm.raw_status
        );
        assert!(warm.iterations <= 3, "{} iterations", warm.iterations);
        // Only some multipliers: the others are zeros.
        let partial = WarmStart {
            lower_bound_multipliers: cold.lower_bound_multipliers.clone(),
            ..WarmStart::primal(cold.primal.clone())
        };
        let warm = solve(
            &problem,
            &SolveOptions::default().with_warm_start(Some(partial)),
        );
        assert_eq!(
            warm.status,
            TerminationStatus::LocallyOptimal,
            "{}",
            warm.raw_status
        );
    }

    #[test]
    fn no_variables_is_solved_without_ipopt() {
        let mut problem = Quadratic::new(&[]);
        problem.rows = vec![vec![]];
        problem.g_lower = vec![-1.0];
        problem.g_upper = vec![1.0];
        let result = solve(&problem, &SolveOptions::default());
        assert_eq!(result.status, TerminationStatus::Optimal);
        assert_eq!(result.objective, Some(0.0));
        problem.g_lower = vec![1.0];
        problem.g_upper = vec![2.0];
        let result = solve(&problem, &SolveOptions::default());
        assert_eq!(result.status, TerminationStatus::Infeasible);
    }

    #[test]
    fn constant_constraints_get_a_padded_jacobian() {
        // One constraint row with no entries: g(x) = 0 in [-1, 1].
        let mut problem = Quadratic::new(&[3.0]);
        problem.rows = vec![vec![0.0]];
        problem.g_lower = vec![-1.0];
        problem.g_upper = vec![1.0];
        let result = solve(&problem, &SolveOptions::default());
        assert_eq!(
            result.status,
            TerminationStatus::LocallyOptimal,
            "{}",
            result.raw_status
        );
        assert!((result.primal[0] - 3.0).abs() < 1e-6);
        assert_eq!(
            result.constraint_multipliers.as_ref().map(Vec::len),
            Some(1)
        );
    }

    #[test]
    fn fixed_variables() {
        let mut problem = Quadratic::new(&[3.0, 1.0]);
        problem.lower = vec![1.0, -INF];
        problem.upper = vec![1.0, INF];
        let result = solve(&problem, &SolveOptions::default());
        assert_eq!(
            result.status,
            TerminationStatus::LocallyOptimal,
            "{}",
            result.raw_status
        );
        assert_eq!(result.primal[0], 1.0);
        assert!((result.primal[1] - 1.0).abs() < 1e-8);
        // Every variable fixed.
        problem.lower = vec![1.0, 2.0];
        problem.upper = vec![1.0, 2.0];
        let result = solve(&problem, &SolveOptions::default());
        eprintln!("all fixed: {} ({})", result.status, result.raw_status);
        assert!(
            result.status.has_solution(),
            "{} ({})",
            result.status,
            result.raw_status
        );
        assert_eq!(result.primal, vec![1.0, 2.0]);
    }

    #[test]
    fn a_panicking_evaluation_is_a_numerical_error() {
        let mut problem = Quadratic::new(&[3.0]);
        problem.panic_above = 1.0;
        let result = solve(&problem, &SolveOptions::default());
        assert_eq!(result.status, TerminationStatus::NumericalError);
        assert!(
            result.raw_status.contains("objective exploded"),
            "{}",
            result.raw_status
        );
        // The solver is usable afterwards.
        let result = solve(&Quadratic::new(&[3.0]), &SolveOptions::default());
        assert_eq!(result.status, TerminationStatus::LocallyOptimal);
    }

    #[test]
    fn a_huge_time_limit_is_no_limit() {
        let options = SolveOptions {
            time_limit: Some(1e300),
            ..SolveOptions::default()
        };
        let result = solve(&Quadratic::new(&[3.0]), &options);
        assert_eq!(
            result.status,
            TerminationStatus::LocallyOptimal,
            "{}",
            result.raw_status
        );
    }

    /// Rosenbrock's function in 2D, burning CPU in every objective evaluation.
    struct BusyRosenbrock(Duration);

    impl NlpProblem for BusyRosenbrock {
        fn num_variables(&self) -> usize {
            2
        }
        fn num_constraints(&self) -> usize {
            0
        }
        fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
            (vec![-INF; 2], vec![INF; 2])
        }
        fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
            (vec![], vec![])
        }
        fn objective(&self, x: &[f64]) -> f64 {
            let start = Instant::now();
            while start.elapsed() < self.0 {
                std::hint::spin_loop();
            }
            100.0 * (x[1] - x[0] * x[0]).powi(2) + (1.0 - x[0]).powi(2)
        }
        fn gradient(&self, x: &[f64], grad: &mut [f64]) {
            grad[0] = -400.0 * x[0] * (x[1] - x[0] * x[0]) - 2.0 * (1.0 - x[0]);
            grad[1] = 200.0 * (x[1] - x[0] * x[0]);
        }
        fn constraints(&self, _x: &[f64], _g: &mut [f64]) {}
        fn jacobian_structure(&self) -> Vec<(usize, usize)> {
            vec![]
        }
        fn jacobian_values(&self, _x: &[f64], _values: &mut [f64]) {}
    }

    #[test]
    fn cpu_time_limit_is_a_time_limit() {
        // L-BFGS from the standard start needs dozens of evaluations of 30 ms each.
        let options = SolveOptions {
            raw: raw(&[("max_cpu_time", RawOptionValue::Float(0.1))]),
            ..SolveOptions::default()
        }
        .with_warm_start(Some(WarmStart::primal(vec![-1.2, 1.0])));
        let result = solve(&BusyRosenbrock(Duration::from_millis(30)), &options);
        assert_eq!(
            result.status,
            TerminationStatus::FeasibleAtLimit(Limit::Time),
            "{}",
            result.raw_status
        );
        assert_eq!(result.raw_status, "Maximum_CpuTime_Exceeded");
        // The wall-clock limit, in the intermediate callback, gives the same status.
        let options = SolveOptions {
            time_limit: Some(0.1),
            ..options.clone()
        };
        let result = solve(&BusyRosenbrock(Duration::from_millis(30)), &options);
        assert_eq!(
            result.status,
            TerminationStatus::FeasibleAtLimit(Limit::Time),
            "{}",
            result.raw_status
        );
    }

    #[test]
    fn options_are_checked_before_ipopt_sees_them() {
        let problem = Quadratic::new(&[1.0]);
        let cases = [
            ("mu_init", RawOptionValue::Float(-1.0)),
            ("print_level", RawOptionValue::Int(13)),
            ("bound_frac", RawOptionValue::Float(0.7)),
            ("acceptable_iter", RawOptionValue::Int(-1)),
            ("acceptable_iter", RawOptionValue::Int(1 << 40)),
            ("linear_solver", RawOptionValue::Str("ma27".into())),
            ("max_iter", RawOptionValue::Int(3)),
        ];
        for (name, value) in cases {
            let options = SolveOptions {
                raw: raw(&[(name, value.clone())]),
                ..SolveOptions::default()
            };
            let err = IpoptSolver::new()
                .solve(&problem, &options)
                .expect_err(&format!("{name} = {value}"));
            assert!(err.to_string().contains(name), "{err}");
        }
        // Every declared option is accepted by Ipopt with a valid value.
        for spec in OPTIONS {
            let value = match spec.kind {
                OptionKind::Choice(choices) => RawOptionValue::Str(choices[0].to_string()),
                OptionKind::Int => {
                    RawOptionValue::Int(if spec.name == "print_level" { 0 } else { 5 })
                }
                OptionKind::Float => RawOptionValue::Float(0.25),
                OptionKind::Bool => RawOptionValue::Bool(true),
            };
            let options = SolveOptions {
                raw: raw(&[(spec.name, value.clone())]),
                ..SolveOptions::default()
            };
            let result = IpoptSolver::new()
                .solve(&problem, &options)
                .unwrap_or_else(|e| panic!("{} = {value}: {e}", spec.name));
            assert!(
                !matches!(result.status, TerminationStatus::Error),
                "{} = {value}: {}",
                spec.name,
                result.raw_status
            );
        }
        let without_hessian = Quadratic {
            hessian: false,
            ..Quadratic::new(&[1.0])
        };
        let options = SolveOptions {
            raw: raw(&[("hessian_approximation", RawOptionValue::Str("exact".into()))]),
            ..SolveOptions::default()
        };
        let err = IpoptSolver::new()
            .solve(&without_hessian, &options)
            .unwrap_err();
        assert!(err.to_string().contains("hessian_approximation"), "{err}");
        let options = SolveOptions {
            relative_gap: Some(0.01),
            ..SolveOptions::default()
        };
        let err = IpoptSolver::new().solve(&problem, &options).unwrap_err();
        assert!(err.to_string().contains("relative_gap"), "{err}");
    }

    #[test]
    fn concurrent_solves_take_turns_safely() {
        let solver: Box<dyn NlpSolver> = Box::new(IpoptSolver::new());
        std::thread::scope(|scope| {
            for t in 0..8 {
                let solver = dyn_clone::clone_box(&*solver);
                scope.spawn(move || {
                    for k in 0..10 {
                        let target = [t as f64, k as f64, -1.0];
                        let mut problem = Quadratic::new(&target);
                        problem.rows = vec![vec![1.0, 1.0, 1.0]];
                        problem.g_lower = vec![-INF];
                        problem.g_upper = vec![1.0];
                        let result = solver.solve(&problem, &SolveOptions::default()).unwrap();
                        assert_eq!(result.status, TerminationStatus::LocallyOptimal);
                    }
                });
            }
        });
    }

    /// Solves a few problems at verbosity 0, ending in every kind of status, when run as
    /// the child of [`nothing_is_printed_at_verbosity_0`]; does nothing otherwise.
    #[test]
    fn silent_child() {
        let Ok(mode) = std::env::var("GLASSBOX_IPOPT_CHILD") else {
            return;
        };
        let verbosity = if mode == "loud" { 2 } else { 0 };
        let quiet = SolveOptions {
            verbosity,
            ..SolveOptions::default()
        };
        let mut problem = Quadratic::new(&[2.0, -1.0]);
        problem.rows = vec![vec![1.0, 1.0]];
        problem.g_lower = vec![-INF];
        problem.g_upper = vec![0.5];
        let result = solve(&problem, &quiet);
        // An `ipopt.opt` in the working directory sets max_iter 1: it must be ignored.
        assert_eq!(
            result.status,
            TerminationStatus::LocallyOptimal,
            "{}",
            result.raw_status
        );
        let _ = solve(&problem, &quiet.with_warm_start(Some(result.warm_start())));
        let mut infeasible = problem.clone();
        infeasible.lower = vec![1.0, 1.0];
        let _ = solve(&infeasible, &quiet);
        let _ = solve(
            &problem,
            &SolveOptions {
                iteration_limit: Some(1),
                ..quiet.clone()
            },
        );
        let mut slow = problem.clone();
        slow.busy = Duration::from_millis(20);
        let _ = solve(
            &slow,
            &SolveOptions {
                time_limit: Some(0.05),
                ..quiet.clone()
            },
        );
    }

    /// The test that [`nothing_is_printed_at_verbosity_0`] runs in a child process.
    const CHILD: &str = "ipopt::tests::silent_child";

    fn run_child(mode: &str) -> (String, String) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ipopt.opt"), "print_level 12\nmax_iter 1\n").unwrap();
        test_support::run_child(CHILD, "GLASSBOX_IPOPT_CHILD", mode, Some(dir.path()))
    }

    /// Runs [`silent_child`] in a child process (Ipopt writes to the C `stdout`, which the
    /// test harness does not capture) from a folder that holds an `ipopt.opt`, and checks
    /// that nothing but the harness's own lines was printed.
    #[test]
    fn nothing_is_printed_at_verbosity_0() {
        if std::env::var("GLASSBOX_IPOPT_CHILD").is_ok() {
            return;
        }
        let (stdout, stderr) = run_child("quiet");
        test_support::assert_nothing_printed(CHILD, &stdout, &stderr);

        let (stdout, _) = run_child("loud");
        assert!(
            stdout.contains("EXIT:"),
            "no Ipopt log at verbosity 2:\n{stdout}"
        );
    }
}
