//! The callbacks Ipopt calls during a solve: the objective, its gradient, the constraints,
//! their Jacobian, the Hessian of the Lagrangian, and the intermediate callback (once per
//! iteration). They reach the Rust problem through a [`Context`] that the solve owns and
//! passes to Ipopt as user data; every callback checks the arrays Ipopt gives it, catches
//! panics, and rejects non-finite values (see "Soundness" in the backend's documentation).
//!
//! Depends on the core's [`NlpProblem`] and on `ffi.rs`'s C types.

use super::ffi;
use glassbox_core::nlp::NlpProblem;
use std::cell::{Cell, RefCell};
use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// What the callbacks see: the problem, the structures given to Ipopt, the clock, and what
/// they report back. Ipopt calls the callbacks one at a time on the solving thread, so
/// interior mutability through `Cell` / `RefCell` suffices.
pub(super) struct Context<'a> {
    pub(super) problem: &'a dyn NlpProblem,
    pub(super) n: usize,
    pub(super) m: usize,
    pub(super) jacobian: &'a [(usize, usize)],
    pub(super) jacobian_padded: bool,
    pub(super) hessian: Option<&'a [(usize, usize)]>,
    pub(super) start: Instant,
    pub(super) time_limit: Option<Duration>,
    pub(super) iterations: Cell<u64>,
    pub(super) time_up: Cell<bool>,
    /// A stop request from outside (`SolveOptions::interrupt`), checked once per iteration.
    pub(super) interrupt: Option<glassbox_core::Interrupt>,
    /// The message of the first panic of an evaluation; the solve stops after one.
    pub(super) panic: RefCell<Option<String>>,
    /// The last failed evaluation (non-finite value, bad input from Ipopt).
    pub(super) evaluation_error: RefCell<Option<String>>,
}

impl Context<'_> {
    pub(super) fn past_deadline(&self) -> bool {
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
pub(super) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
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

/// Writes a sparsity structure (`(row, column)` pairs) into the index arrays Ipopt gives
/// `callback` when it asks for the structure rather than the values.
///
/// # Safety
/// `rows` and `cols` must each be null or valid for `structure.len()` writes.
unsafe fn write_structure(
    rows: *mut ffi::Index,
    cols: *mut ffi::Index,
    structure: &[(usize, usize)],
    callback: &str,
) -> Result<(), String> {
    let len = structure.len();
    let rows = output(rows, len).ok_or_else(|| bad_arguments(callback))?;
    let cols = output(cols, len).ok_or_else(|| bad_arguments(callback))?;
    for ((r, c), &(i, j)) in rows.iter_mut().zip(cols.iter_mut()).zip(structure) {
        // In range: validated against n and m, which fit in c_int.
        *r = i as c_int;
        *c = j as c_int;
    }
    Ok(())
}

fn bad_arguments(what: &str) -> String {
    format!("Ipopt passed inconsistent arrays to {what}")
}

fn first_non_finite(values: &[f64]) -> Option<usize> {
    values.iter().position(|v| !v.is_finite())
}

pub(super) unsafe extern "C" fn eval_f(
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

pub(super) unsafe extern "C" fn eval_grad_f(
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

pub(super) unsafe extern "C" fn eval_g(
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

pub(super) unsafe extern "C" fn eval_jac_g(
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
            return write_structure(i_row, j_col, ctx.jacobian, "eval_jac_g");
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

pub(super) unsafe extern "C" fn eval_h(
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
            return write_structure(i_row, j_col, hessian, "eval_h");
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

/// Called once per iteration: counts iterations and stops the solve at the deadline, on a
/// stop request or after a panic.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe extern "C" fn intermediate(
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
        !ctx.interrupt.as_ref().is_some_and(|i| i.requested())
    }));
    if keep_going.unwrap_or(false) {
        ffi::TRUE
    } else {
        ffi::FALSE
    }
}
