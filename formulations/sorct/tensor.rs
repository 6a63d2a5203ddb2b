//! S-ORCT's objective (9) in tensor operations, for the `torch` backend (cargo feature
//! `torch`): z = X a / p - mu, p_it = sigmoid(gamma z_it), P_il = the product of p_it or
//! 1 - p_it along the root-to-leaf path of leaf l, the cost sum_i sum_l P_il sum_k
//! (W_{y_i k} / N) C_kl, plus lambda_L sum(a+ + a-) and lambda_G sum(beta) — the same
//! function as [`SorctProblem`]'s `NlpProblem::objective`, in the same variable layout.
//! The scaled features X (N x p) and the weights W_{y_i k} / N (N x K) are uploaded once.

use super::problem::{Layout, SorctProblem};
use glassbox_core::tensor::{matrix_tensor, PreparedObjective, TensorObjective};
use nalgebra::DMatrix;
use tch::{Device, Kind, Tensor};

struct PreparedSorct {
    x: Tensor,
    weights: Tensor,
    layout: Layout,
    paths: Vec<Vec<(i64, bool)>>,
    gamma: f64,
    lambda_local: f64,
    lambda_global: f64,
}

impl TensorObjective for SorctProblem {
    fn prepare(&self, device: Device, kind: Kind) -> Box<dyn PreparedObjective> {
        let n = self.x.nrows();
        let lay = &self.layout;
        let weights =
            DMatrix::from_fn(n, lay.classes, |i, k| self.costs[(self.y[i], k)] / n as f64);
        let paths = (0..lay.leaves)
            .map(|l| {
                self.shape
                    .path(l)
                    .iter()
                    .map(|&(t, left)| (t as i64, left))
                    .collect()
            })
            .collect();
        Box::new(PreparedSorct {
            x: matrix_tensor(&self.x, device, kind),
            weights: matrix_tensor(&weights, device, kind),
            layout: lay.clone(),
            paths,
            gamma: self.params.gamma,
            lambda_local: self.params.lambda_local,
            lambda_global: self.params.lambda_global,
        })
    }

    /// X (N x p) times the branch nodes' coefficients (p x branches).
    fn evaluation_size(&self) -> usize {
        self.x.nrows() * self.layout.p * self.layout.branches
    }
}

impl PreparedObjective for PreparedSorct {
    fn objective(&self, x: &Tensor) -> Tensor {
        let lay = &self.layout;
        let b = lay.branches as i64;
        let a = lay.node_coefficients().tensor(x);
        let mu = x.narrow(0, lay.mu as i64, b);
        let c = x
            .narrow(0, lay.c as i64, (lay.classes * lay.leaves) as i64)
            .view([lay.classes as i64, lay.leaves as i64]);
        let z = self.x.matmul(&a) / (lay.p as f64) - mu;
        let left = (z * self.gamma).sigmoid();
        let reach = glassbox_core::tensor::leaf_reach(&left, &self.paths);
        let cost = self.weights.matmul(&c);
        let cost = (reach * cost).sum(x.kind());
        glassbox_core::tensor::with_sparsity_penalties(
            cost,
            x,
            lay.split.then_some((lay.mu, self.lambda_local)),
            lay.beta.then_some((lay.beta_at, lay.p, self.lambda_global)),
        )
    }
}
