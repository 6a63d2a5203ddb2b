//! Starting points for S-ORRT.
//!
//! As in S-ORCT, gamma = 512 makes the logistic CDF flat away from its split: a split that
//! misses the data has no gradient and stays where it is. The paper draws 1000 uniform
//! random starts; with the 20 a multistart usually affords, uniform starts leave most trees
//! with dead splits. Our default (`Initialization::Data`) draws a start that is already a
//! good model tree:
//!
//! 1. branch nodes, from the root down: a random oblique direction a_t ~ U[-1, 1]^p, and
//!    mu_t at the median of a_t.x / p over the training points that the (hard) splits of
//!    the ancestors route to t, so every split cuts the points that actually reach it and
//!    each leaf receives about N / 2^D of them;
//! 2. leaves: the least-squares linear model of y on the points routed to the leaf (a small
//!    ridge term, `RIDGE`, keeps it defined when a leaf has fewer points than features):
//!    a_.l the slopes, mu_l = -intercept. Leaves of a randomized tree with gamma = 512 are
//!    nearly hard, so the start's training MSE is close to that of this piecewise-linear
//!    tree, and IPOPT refines splits and leaves jointly from there.
//!
//! With `start_features` (the paper's Section 4.4 heuristic: only the features of high
//! importance play a role in the first step) the directions of step 1 use only those
//! features.
//!
//! The randomness of the directions is what the multistart explores. `Uniform` (a_B, mu_B
//! uniform in [-1, 1], every leaf predicting mean(y), the point of Corollary 1) is the
//! paper's kind of start; with a solver stopped early (the paper's SLSQP at 100 iterations)
//! it is the better choice where a converged S-ORRT overfits: `examples/
//! sorrt_wine_quality.toml` (data-aware leaves start as least-squares fits and overfit red
//! wine; `benches/README.md` has the numbers).

use super::problem::SorrtProblem;
use nalgebra::{DMatrix, DVector};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// Ridge penalty (in scaled units) of the leaves' least-squares starts.
pub const RIDGE: f64 = 1e-2;

/// How random starting points are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Initialization {
    /// Splits through the training points that reach each node, least-squares leaves (the
    /// default).
    #[default]
    Data,
    /// a_B and mu_B uniform in [-1, 1], leaves predicting the mean (the paper's kind of
    /// random start; see the module comment).
    Uniform,
}

/// A random starting point drawn as `init` says.
pub fn random_start<R: Rng>(problem: &SorrtProblem, init: Initialization, rng: &mut R) -> Vec<f64> {
    let lay = &problem.layout;
    let (p, branches, nodes) = (lay.p, lay.branches, lay.nodes);
    let x = &*problem.x;
    let y = &*problem.y;
    let n = x.nrows();
    let mean = y.iter().sum::<f64>() / n as f64;
    let mut a = DMatrix::zeros(p, nodes);
    let mut mu = vec![0.0; nodes];
    for t in 0..branches {
        for j in 0..p {
            a[(j, t)] = rng.random_range(-1.0..=1.0);
        }
        // Draws stay the same for every choice of start features (the stream does not
        // depend on them); the features left out start at 0.
        if let Some(keep) = &problem.start_features {
            for j in (0..p).filter(|j| !keep.contains(j)) {
                a[(j, t)] = 0.0;
            }
        }
    }
    match init {
        Initialization::Uniform => {
            for m in mu.iter_mut().take(branches) {
                *m = rng.random_range(-1.0..=1.0);
            }
            for m in mu.iter_mut().skip(branches) {
                *m = -mean;
            }
        }
        Initialization::Data => {
            let projection = x * a.columns(0, branches) / p as f64;
            let mut node_of = vec![0usize; n];
            for t in 0..branches {
                let mut values: Vec<f64> = (0..n)
                    .filter(|&i| node_of[i] == t)
                    .map(|i| projection[(i, t)])
                    .collect();
                if values.len() < 2 {
                    values = projection.column(t).iter().copied().collect();
                }
                mu[t] = glassbox_core::metrics::median_in_place(&mut values)
                    .unwrap_or(0.0)
                    .clamp(-1.0, 1.0);
                for i in 0..n {
                    if node_of[i] == t {
                        node_of[i] = if projection[(i, t)] - mu[t] >= 0.0 {
                            2 * t + 1
                        } else {
                            2 * t + 2
                        };
                    }
                }
            }
            for l in 0..lay.leaves {
                let rows: Vec<usize> = (0..n).filter(|&i| node_of[i] == branches + l).collect();
                let (slopes, intercept) = least_squares(x, y, &rows, mean);
                for j in 0..p {
                    a[(j, branches + l)] = slopes[j];
                }
                mu[branches + l] = -intercept;
            }
        }
    }
    point(problem, &a, &mu)
}

/// The CART regression tree of the problem's depth on its training rows as a start: one
/// coefficient -1 per splitting node at CART's threshold (`formulations/axis_start.rs`),
/// and at each leaf the least-squares linear model of the rows CART sends there (as the
/// data starts' leaves; the mean of y where a leaf receives none).
pub fn cart_start(problem: &SorrtProblem) -> Vec<f64> {
    use crate::axis_start;
    use crate::cart::grow::Targets;
    let lay = &problem.layout;
    let (x, y) = (&*problem.x, &*problem.y);
    let depth = (lay.leaves as f64).log2().round() as usize;
    let splits = axis_start::cart_splits(x, Targets::Values(y), depth);
    let mean = y.iter().sum::<f64>() / y.len().max(1) as f64;
    let mut a = DMatrix::zeros(lay.p, lay.nodes);
    let mut mu = vec![0.0; lay.nodes];
    a.columns_mut(0, lay.branches).copy_from(&splits.a);
    mu[..lay.branches].copy_from_slice(&splits.mu);
    for l in 0..lay.leaves {
        let rows: Vec<usize> = (0..x.nrows()).filter(|&i| splits.leaf_of[i] == l).collect();
        let (slopes, intercept) = least_squares(x, y, &rows, mean);
        for j in 0..lay.p {
            a[(j, lay.branches + l)] = slopes[j];
        }
        mu[lay.branches + l] = -intercept;
    }
    point(problem, &a, &mu)
}

/// Ridge least squares of `y` on the rows `rows` of `x`: (slopes, intercept), the
/// intercept unpenalized. No rows: slopes 0, intercept `fallback`.
pub(crate) fn least_squares(
    x: &DMatrix<f64>,
    y: &[f64],
    rows: &[usize],
    fallback: f64,
) -> (Vec<f64>, f64) {
    let p = x.ncols();
    if rows.is_empty() {
        return (vec![0.0; p], fallback);
    }
    let m = rows.len() as f64;
    let x_mean: Vec<f64> = (0..p)
        .map(|j| rows.iter().map(|&i| x[(i, j)]).sum::<f64>() / m)
        .collect();
    let y_mean = rows.iter().map(|&i| y[i]).sum::<f64>() / m;
    let xc = DMatrix::from_fn(rows.len(), p, |r, j| x[(rows[r], j)] - x_mean[j]);
    let yc = DVector::from_fn(rows.len(), |r, _| y[rows[r]] - y_mean);
    let mut gram = xc.tr_mul(&xc);
    for j in 0..p {
        gram[(j, j)] += RIDGE;
    }
    let rhs = xc.tr_mul(&yc);
    let slopes = match gram.cholesky() {
        Some(ch) => ch.solve(&rhs),
        None => DVector::zeros(p),
    };
    let intercept = y_mean - (0..p).map(|j| slopes[j] * x_mean[j]).sum::<f64>();
    (slopes.iter().copied().collect(), intercept)
}

/// The NLP variable vector of a tree given by its coefficients a (p x nodes) and mu
/// (nodes), clipped to their bounds (branch nodes [-1, 1], leaves the leaf bounds):
/// splits a into a+ and a- and sets beta to max_t |a_jt| as the layout requires.
pub fn point(problem: &SorrtProblem, a: &DMatrix<f64>, mu: &[f64]) -> Vec<f64> {
    let lay = &problem.layout;
    let mut x = vec![0.0; lay.n];
    let clip = |t: usize, v: f64, leaf: f64| {
        if t < lay.branches {
            v.clamp(-1.0, 1.0)
        } else {
            v.clamp(-leaf, leaf)
        }
    };
    let (ca, cm) = (lay.leaf_coefficient_bound, lay.leaf_intercept_bound);
    for t in 0..lay.nodes {
        for j in 0..lay.p {
            let v = clip(t, a[(j, t)], ca);
            if lay.split {
                x[lay.a(j, t)] = v.max(0.0);
                x[lay.a_neg(j, t)] = (-v).max(0.0);
            } else {
                x[lay.a(j, t)] = v;
            }
        }
        x[lay.mu + t] = clip(t, mu[t], cm);
    }
    if lay.beta {
        for j in 0..lay.p {
            x[lay.beta_at + j] = (0..lay.nodes)
                .map(|t| clip(t, a[(j, t)], ca).abs())
                .fold(0.0, f64::max);
        }
    }
    x
}
