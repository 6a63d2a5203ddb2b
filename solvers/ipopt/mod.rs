//! The IPOPT backend: solves an [`NlpProblem`] with Ipopt's primal-dual interior-point method
//! (a local method: its optima are [`TerminationStatus::LocallyOptimal`]).
//!
//! # Why a thin binding of our own
//!
//! Debian ships Ipopt 3.11 (`coinor-libipopt-dev`). Its `ipopt.pc` lists `-lm` beside a
//! folder that holds `libm.a`, which makes the `ipopt-sys` crate believe it must link Ipopt
//! statically; it then falls back to downloading and building Ipopt from source, which is
//! impossible offline. Ipopt's C interface (`IpStdCInterface.h`) is eight functions, so this
//! backend binds them itself (`ffi.rs`) and gains full control of two things the crates
//! hide: Ipopt's output (silent by default, no banner, no `ipopt.opt` read from the working
//! directory) and the intermediate callback (wall-clock time limit, iteration count).
//! `build.rs` links `-lipopt`.
//!
//! # How options map
//!
//! - `tolerance` -> `tol`; `iteration_limit` -> `max_iter`.
//! - `time_limit` is wall-clock and enforced here: every callback checks the deadline and
//!   the intermediate callback (called once per Ipopt iteration) stops the solve once it has
//!   passed. The limit is also passed as `max_cpu_time`, which Ipopt 3.11 checks against
//!   its CPU clock; that clock reads the wall clock once `overheads.rs` has removed Ipopt's
//!   `getrusage` calls (the default), and otherwise CPU time <= wall time with the
//!   sequential MUMPS and reference BLAS Debian ships, so it never fires first by much.
//!   Either way the status carries [`Limit::Time`].
//!   Ipopt cannot be interrupted inside an iteration: a solve overshoots its limit by at
//!   most one iteration (its evaluations and one factorization).
//! - `interrupt` (a stop request: Ctrl-C in `glassbox run`) is checked by the same
//!   intermediate callback; the solve returns at the next iteration with
//!   [`Limit::Interrupted`] and the point it has ([`Limit::Time`] where the deadline has
//!   passed too; the gradient backends say the same).
//! - `verbosity` 0 and 1 -> `print_level 0`, `sb yes` (nothing at all is printed: the
//!   one-line summary of verbosity 1 is the caller's); 2 and more -> `print_level 5`,
//!   Ipopt's iteration log on stdout.
//! - `seed` is ignored: Ipopt is deterministic. `threads` is ignored: Debian's MUMPS is the
//!   sequential build and its BLAS is single-threaded, so Ipopt uses one thread.
//! - `relative_gap` / `absolute_gap` are refused (Ipopt proves no bound, so it cannot stop
//!   at a gap), and so is `integrality_tolerance` (no integer variables).
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
//! # Files
//!
//! - `mod.rs` (this file): the backend, its registry entry, and the solve: the request
//!   checked before Ipopt is called (dimensions, structures, starting point), the Ipopt
//!   problem created, solved and freed, a problem without variables solved without Ipopt.
//! - `options.rs`: the raw options table ([`OPTIONS`]), their checks, and how the typed and
//!   raw options are set on an Ipopt problem.
//! - `ffi.rs`: the binding of Ipopt's C interface (linked, or opened with `dlopen` under the
//!   `torch` feature), its return codes, and a guard that owns an Ipopt problem.
//! - `callbacks.rs`: the evaluation and intermediate callbacks Ipopt calls, and the context
//!   they share with the solve.
//! - `status.rs`: what Ipopt returned, mapped to the core's [`TerminationStatus`] and
//!   [`glassbox_core::SolveResult`].
//! - `overheads.rs`: two fixed costs of Debian's Ipopt 3.11 and MUMPS 5.5 (MUMPS's
//!   save-size estimate at every call, Ipopt's `getrusage` timers), removed from this
//!   process before the first solve; no number a solve computes with changes.
//! - `tests.rs`: the unit tests.
//!
//! Depends on the core (`backend`, `nlp`, `options`, `result`, `solver`) and, for
//! `overheads.rs`, on `crate::import_slots`.
//!
//! [`Limit::Time`]: glassbox_core::Limit::Time
//! [`Limit::Interrupted`]: glassbox_core::Limit::Interrupted

mod callbacks;
#[allow(non_snake_case, dead_code)]
mod ffi;
mod options;
pub mod overheads;
mod status;
#[cfg(test)]
mod tests;

pub use options::OPTIONS;

use callbacks::{eval_f, eval_g, eval_grad_f, eval_h, eval_jac_g, intermediate, Context};
use ffi::ProblemGuard;
use glassbox_core::backend::{BackendEntry, Constructor};
use glassbox_core::nlp::NlpProblem;
use glassbox_core::options::{RawOptionValue, WarmStart};
use glassbox_core::solver::{Capabilities, NlpSolver};
use glassbox_core::{GlassboxError, Result, SolveOptions, SolveResult, TerminationStatus};
use options::{check_options, set_options};
use status::{evaluate, finish};
use std::cell::{Cell, RefCell};
use std::ffi::{c_int, c_void};
use std::sync::Mutex;
use std::time::Instant;

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
    newton_steps: true,
    tensor_objective_only: false,
};

/// Absolute constraint violation under which a point counts as feasible when Ipopt stops
/// at a limit (Ipopt's own default of `constr_viol_tol`; the raw option overrides it).
const DEFAULT_FEASIBILITY_TOLERANCE: f64 = 1e-4;

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
        overheads::remove();
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

/// The starting point and multipliers of a warm start, checked by the core
/// ([`WarmStart::check`]); missing multipliers of a warm start that has some are zeros.
fn warm_start(
    problem: &dyn NlpProblem,
    warm: &WarmStart,
    n: usize,
    m: usize,
) -> Result<(Vec<f64>, Option<Duals>)> {
    warm.check(&problem.name(), n, m)?;
    let any = warm.constraint_multipliers.is_some()
        || warm.lower_bound_multipliers.is_some()
        || warm.upper_bound_multipliers.is_some();
    let or_zeros =
        |values: &Option<Vec<f64>>, len: usize| values.clone().unwrap_or_else(|| vec![0.0; len]);
    let duals = any.then(|| {
        (
            or_zeros(&warm.constraint_multipliers, m),
            or_zeros(&warm.lower_bound_multipliers, n),
            or_zeros(&warm.upper_bound_multipliers, n),
        )
    });
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
        time_limit: options.time_limit_duration(),
        iterations: Cell::new(0),
        time_up: Cell::new(false),
        interrupt: options.interrupt.clone(),
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
