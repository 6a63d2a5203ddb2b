//! S-ORRT's training MSE and its gradient in one pass over the rows: the path
//! [`super::SorrtProblem`]'s `objective` and `gradient` take from
//! `problem::FUSED_MIN_ROWS` training rows on, built for the large samples of the paper's
//! Section 4.4 (N = 10^5..10^7 rows).
//!
//! The rows are cut into fixed blocks of [`BLOCK`] rows, evaluated in parallel (rayon);
//! each block's partial sums are added in block order, so the result does not depend on the
//! number of threads. A block works in per-thread scratch buffers (`BLOCK x nodes`), so an
//! evaluation allocates nothing proportional to N (`problem.rs`'s `evaluate` keeps N x nodes
//! matrices and the N x smooth Jacobian G, which the Hessian and the constraints still use).
//!
//! The formulas are those of `problem.rs`, arranged by subtree (the tree is stored heap-wise:
//! branch t has children 2t+1 (left) and 2t+2 (right), leaf l is node |tau_B| + l). With
//! R_t the probability of reaching node t, p_t = F(z_t) and V_t the expected leaf prediction
//! below t (V_l = r_l = a_.l.x - mu_l at a leaf, V_t = p_t V_left + (1 - p_t) V_right),
//! phi = V_root and dphi/dz_t = R_t F'(z_t) (V_left - V_right), F' = gamma p (1 - p); a leaf's
//! prediction enters phi with weight R_l = P_l. With e = phi - y and w = 2 e / N, the MSE's
//! gradient is sum_i w_i dphi_i: in a branch node's (a_.t, mu_t) it is
//! sum_i w_i dphi_i/dz_t (x_i / p, -1), in a leaf's sum_i w_i P_il (x_i, -1).
//!
//! Depends on nalgebra and rayon only.

use nalgebra::DMatrix;
use rayon::prelude::*;
use std::cell::RefCell;

/// Rows per block: the unit of parallel work and of the fixed summation order.
pub(crate) const BLOCK: usize = 2048;

/// Most nodes a tree has (depth 6, the deepest `SorrtConfig` accepts).
const MAX_NODES: usize = 127;

thread_local! {
    /// A block's scores (node-major, `nodes x BLOCK`) and gradient coefficients (the same).
    static SCRATCH: RefCell<(Vec<f64>, Vec<f64>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// The tree at one point: coefficients (p x nodes, column t = node t), locations mu
/// (nodes), slope gamma and number of branch nodes.
pub(crate) struct TreeParams<'a> {
    pub a: &'a DMatrix<f64>,
    pub mu: &'a [f64],
    pub gamma: f64,
    pub branches: usize,
}

/// Sum over the rows of `(phi_i - y_i)^2 / N` and, when `gradient` is given (length
/// `(p + 1) * nodes`, the smooth layout of `problem.rs`: a_jt at `t * p + j`, mu_t at
/// `p * nodes + t`), its gradient written there.
pub(crate) fn mse_and_gradient(
    x: &DMatrix<f64>,
    y: &[f64],
    tree: &TreeParams<'_>,
    gradient: Option<&mut [f64]>,
) -> f64 {
    let n = x.nrows();
    let (p, nodes) = (x.ncols(), tree.a.ncols());
    assert!(nodes <= MAX_NODES && nodes == 2 * tree.branches + 1);
    let want = gradient.is_some();
    let len = if want { (p + 1) * nodes } else { 0 };
    let blocks = n.div_ceil(BLOCK);
    let run = |b: usize| {
        let rows = b * BLOCK..((b + 1) * BLOCK).min(n);
        let mut partial = vec![0.0; len + 1];
        let (sum, grad) = partial.split_last_mut().expect("not empty");
        *sum = block(x, y, tree, rows, want.then_some(grad));
        partial
    };
    let partials: Vec<Vec<f64>> = if blocks <= 1 {
        (0..blocks).map(run).collect()
    } else {
        (0..blocks).into_par_iter().map(run).collect()
    };
    let inv_n = 1.0 / n.max(1) as f64;
    let mut total = 0.0;
    if let Some(g) = gradient {
        g.fill(0.0);
        for part in &partials {
            for (gi, v) in g.iter_mut().zip(part) {
                *gi += v;
            }
        }
        // The blocks sum 2 e_i dphi_i; the 1/N is applied once here.
        g.iter_mut().for_each(|v| *v *= inv_n);
    }
    for part in &partials {
        total += part[len];
    }
    total * inv_n
}

/// One block of rows: returns sum_i e_i^2 and adds sum_i 2 e_i dphi_i to `grad`.
fn block(
    x: &DMatrix<f64>,
    y: &[f64],
    tree: &TreeParams<'_>,
    rows: std::ops::Range<usize>,
    grad: Option<&mut [f64]>,
) -> f64 {
    let (p, nodes, branches) = (x.ncols(), tree.a.ncols(), tree.branches);
    let m = rows.len();
    let start = rows.start;
    let inv_p = 1.0 / p as f64;
    SCRATCH.with(|cell| {
        let mut scratch = cell.borrow_mut();
        let (scores, coef) = &mut *scratch;
        scores.clear();
        scores.resize(nodes * m, 0.0);
        // scores[t * m + r] = a_.t . x_(start + r): one axpy per (feature, node).
        for j in 0..p {
            let col = column(x, j, start, m);
            for t in 0..nodes {
                let a = tree.a[(j, t)];
                if a == 0.0 {
                    continue;
                }
                let out = &mut scores[t * m..(t + 1) * m];
                for (o, v) in out.iter_mut().zip(col) {
                    *o += a * v;
                }
            }
        }
        if grad.is_some() {
            coef.clear();
            coef.resize(nodes * m, 0.0);
        }
        let mut sum = 0.0;
        let (mut left, mut reach, mut value) =
            ([0.0; MAX_NODES], [0.0; MAX_NODES], [0.0; MAX_NODES]);
        for r in 0..m {
            for t in 0..branches {
                left[t] = logistic(tree.gamma * (scores[t * m + r] * inv_p - tree.mu[t]));
            }
            reach[0] = 1.0;
            for t in 0..branches {
                reach[2 * t + 1] = reach[t] * left[t];
                reach[2 * t + 2] = reach[t] * (1.0 - left[t]);
            }
            for t in branches..nodes {
                value[t] = scores[t * m + r] - tree.mu[t];
            }
            for t in (0..branches).rev() {
                value[t] = left[t] * value[2 * t + 1] + (1.0 - left[t]) * value[2 * t + 2];
            }
            let e = value[0] - y[start + r];
            sum += e * e;
            if grad.is_some() {
                let w = 2.0 * e;
                for t in 0..branches {
                    let slope = tree.gamma * left[t] * (1.0 - left[t]);
                    let dz = reach[t] * slope * (value[2 * t + 1] - value[2 * t + 2]);
                    coef[t * m + r] = w * dz;
                }
                for t in branches..nodes {
                    coef[t * m + r] = w * reach[t];
                }
            }
        }
        if let Some(grad) = grad {
            // a_jt: sum_r coef_t,r x_rj (/ p at a branch); mu_t: -sum_r coef_t,r.
            for j in 0..p {
                let col = column(x, j, start, m);
                for t in 0..nodes {
                    let c = &coef[t * m..(t + 1) * m];
                    let dot = dot(c, col);
                    grad[t * p + j] += if t < branches { dot * inv_p } else { dot };
                }
            }
            let ones = [1.0; BLOCK];
            for t in 0..nodes {
                grad[p * nodes + t] -= dot(&coef[t * m..(t + 1) * m], &ones[..m]);
            }
        }
        sum
    })
}

/// The dot product of two slices, in eight independent partial sums: one running sum is
/// bound by the latency of its additions (a quarter of the speed, measured at N = 10^6).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f64 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for ((s, x), y) in acc.iter_mut().zip(x).zip(y) {
            *s += x * y;
        }
    }
    acc.iter().sum::<f64>() + tail
}

/// Rows `start..start + m` of column j of a column-major matrix.
fn column(x: &DMatrix<f64>, j: usize, start: usize, m: usize) -> &[f64] {
    let at = j * x.nrows() + start;
    &x.as_slice()[at..at + m]
}

/// The logistic function, without overflow for large |z|.
pub(crate) fn logistic(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}
