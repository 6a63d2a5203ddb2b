//! S-ORRT's objective (3) in tensor operations, for the `torch` backend (cargo feature
//! `torch`): scores S = X a (N x nodes), p_it = sigmoid(gamma (S_it / p - mu_t)) at the
//! branch nodes, P_il = the product of p_it or 1 - p_it along the root-to-leaf path of leaf
//! l, leaf predictions r_il = S_il - mu_l, phi_i = sum_l P_il r_il, and the objective
//! sum_i (phi_i - y_i)^2 / N + lambda_L sum(a+ + a-) + lambda_G sum(beta): the same function
//! as [`SorrtProblem`]'s `NlpProblem::objective`, in the same variable layout. The scaled
//! features X (N x p) and the targets y are uploaded once per solve.

use super::problem::{Layout, SorrtProblem};
use glassbox_core::tensor::{matrix_tensor, PreparedObjective, TensorObjective};
use tch::{Device, Kind, Tensor};

struct PreparedSorrt {
    x: Tensor,
    y: Tensor,
    rows: f64,
    layout: Layout,
    paths: Vec<Vec<(i64, bool)>>,
    gamma: f64,
    lambda_local: f64,
    lambda_global: f64,
}

impl TensorObjective for SorrtProblem {
    fn prepare(&self, device: Device, kind: Kind) -> Box<dyn PreparedObjective> {
        let lay = &self.layout;
        let paths = (0..lay.leaves)
            .map(|l| {
                self.shape
                    .path(l)
                    .iter()
                    .map(|&(t, left)| (t as i64, left))
                    .collect()
            })
            .collect();
        Box::new(PreparedSorrt {
            x: matrix_tensor(&self.x, device, kind),
            y: Tensor::from_slice(self.y.as_slice())
                .to_kind(kind)
                .to_device(device),
            rows: self.x.nrows() as f64,
            layout: lay.clone(),
            paths,
            gamma: self.params.gamma,
            lambda_local: self.params.lambda_local,
            lambda_global: self.params.lambda_global,
        })
    }

    /// X (N x p) times every node's coefficients (p x nodes: the leaves' too).
    fn evaluation_size(&self) -> usize {
        self.x.nrows() * self.layout.p * self.layout.nodes
    }
}

impl PreparedObjective for PreparedSorrt {
    fn objective(&self, x: &Tensor) -> Tensor {
        let lay = &self.layout;
        let (nodes, branches) = (lay.nodes as i64, lay.branches as i64);
        let a = lay.node_coefficients().tensor(x);
        let mu = x.narrow(0, lay.mu as i64, nodes);
        let scores = self.x.matmul(&a);
        let z = scores.narrow(1, 0, branches) / (lay.p as f64) - mu.narrow(0, 0, branches);
        let left = (z * self.gamma).sigmoid();
        let leaf_pred = scores.narrow(1, branches, lay.leaves as i64)
            - mu.narrow(0, branches, lay.leaves as i64);
        let reach = glassbox_core::tensor::leaf_reach(&left, &self.paths);
        let phi = (reach * leaf_pred).sum_dim_intlist(1, false, x.kind());
        let residual = phi - &self.y;
        let mse = (&residual * &residual).sum(x.kind()) / self.rows;
        glassbox_core::tensor::with_sparsity_penalties(
            mse,
            x,
            lay.split.then_some((lay.mu, self.lambda_local)),
            lay.beta.then_some((lay.beta_at, lay.p, self.lambda_global)),
        )
    }
}
