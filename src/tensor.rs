//! The tensor form of an NLP objective, for the `torch` backend (cargo feature `torch`).
//!
//! A problem whose objective can be written in libtorch tensor operations implements
//! [`TensorObjective`] and returns it from [`crate::NlpProblem::tensor_objective`]. The
//! backend calls [`TensorObjective::prepare`] once per solve, which uploads the problem's
//! data to the chosen device in the chosen floating-point kind; the returned
//! [`PreparedObjective`] keeps it there between iterations and evaluates `f(x)` as a scalar
//! tensor, whose gradient the backend takes by autograd. Only the objective has a tensor
//! form: the general constraints and their Jacobian are still evaluated through
//! [`crate::NlpProblem`] on the CPU.
//!
//! Depends on the core and `tch`.

use tch::{Device, Kind, Tensor};

/// A problem's objective in tensor operations.
pub trait TensorObjective: Send + Sync {
    /// Uploads the data the objective needs to `device`, as floating-point tensors of
    /// `kind` (`Kind::Double` or `Kind::Float`), and returns the objective ready to evaluate.
    fn prepare(&self, device: Device, kind: Kind) -> Box<dyn PreparedObjective>;
}

/// An objective whose data lives on a device.
pub trait PreparedObjective: Send {
    /// `f(x)` as a 0-dimensional tensor, for `x` a 1-D tensor of the problem's `n`
    /// variables on the device (in the prepared kind, usually with `requires_grad`). It
    /// must equal [`crate::NlpProblem::objective`] up to rounding and be built only from
    /// differentiable tensor operations on `x`.
    fn objective(&self, x: &Tensor) -> Tensor;
}
