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

use nalgebra::DMatrix;
use tch::{Device, Kind, Tensor};

/// A problem's objective in tensor operations.
pub trait TensorObjective: Send + Sync {
    /// Uploads the data the objective needs to `device`, as floating-point tensors of
    /// `kind` (`Kind::Double` or `Kind::Float`), and returns the objective ready to evaluate.
    fn prepare(&self, device: Device, kind: Kind) -> Box<dyn PreparedObjective>;

    /// A measure of one evaluation's work: the multiply-adds of the objective's largest
    /// product (for a tree, N rows x p features x the columns of its coefficient matrix).
    /// `device = "auto"` keeps a problem smaller than the measured crossover on the CPU,
    /// where a GPU spends more on launching its kernels than it saves on them.
    fn evaluation_size(&self) -> usize;
}

/// An objective whose data lives on a device.
pub trait PreparedObjective: Send {
    /// `f(x)` as a 0-dimensional tensor, for `x` a 1-D tensor of the problem's `n`
    /// variables on the device (in the prepared kind, usually with `requires_grad`). It
    /// must equal [`crate::NlpProblem::objective`] up to rounding and be built only from
    /// differentiable tensor operations on `x`.
    fn objective(&self, x: &Tensor) -> Tensor;
}

/// A column-major nalgebra matrix as a (rows x cols) tensor of `kind` on `device`.
pub fn matrix_tensor(m: &DMatrix<f64>, device: Device, kind: Kind) -> Tensor {
    Tensor::from_slice(m.as_slice())
        .view([m.ncols() as i64, m.nrows() as i64])
        .tr()
        .contiguous()
        .to_kind(kind)
        .to_device(device)
}

/// The probabilities of reaching each leaf of a randomized tree, N x leaves: `left` holds
/// the probability of going left at each branch node (N x branches), and `paths[l]` the
/// root-to-leaf path of leaf `l` as (branch node, goes left) pairs. Shared by the tensor
/// forms of S-ORCT and S-ORRT.
pub fn leaf_reach(left: &Tensor, paths: &[Vec<(i64, bool)>]) -> Tensor {
    let columns: Vec<Tensor> = paths
        .iter()
        .map(|path| {
            path.iter()
                .map(|&(t, goes_left)| {
                    let q = left.select(1, t);
                    if goes_left {
                        q
                    } else {
                        1.0 - q
                    }
                })
                .reduce(|r, q| r * q)
                // A tree without branches: every row reaches its single leaf.
                .unwrap_or_else(|| left.select(1, 0).ones_like())
        })
        .collect();
    Tensor::stack(&columns, 1)
}

/// `loss` plus the sparsity penalties of a randomized tree in its smooth form: with
/// `local = Some((len, lambda_L))`, lambda_L times the sum of the first `len` variables (the
/// split parts a+ and a-); with `global = Some((at, p, lambda_G))`, lambda_G times the sum of
/// the `p` variables from `at` (the bounds beta_j).
pub fn with_sparsity_penalties(
    loss: Tensor,
    x: &Tensor,
    local: Option<(usize, f64)>,
    global: Option<(usize, usize, f64)>,
) -> Tensor {
    // Out-of-place sums: autograd differentiates through them.
    let local = local.map(|(len, lambda)| x.narrow(0, 0, len as i64).sum(x.kind()) * lambda);
    let global =
        global.map(|(at, p, lambda)| x.narrow(0, at as i64, p as i64).sum(x.kind()) * lambda);
    [local, global]
        .into_iter()
        .flatten()
        .fold(loss, |total, penalty| total + penalty)
}
