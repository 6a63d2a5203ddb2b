//! The leaf refit with a ridge penalty (`SorrtConfig::leaf_ridge`, not in the paper).
//!
//! Why: solved to convergence at lambda = 0, S-ORRT's linear leaves overfit. On Boston at
//! D = 3 (8 leaves x 14 coefficients on 379 rows) the training R^2 is 0.99 against a test
//! R^2 near 0.6, and single test rows get predictions far outside the targets' range (97.7
//! where they end at 50) from leaves whose slopes sit at the leaf bound (benches/README,
//! "S-ORRT Table 4").
//!
//! What: once a start's solve has ended, the splits are held as they are and the leaves
//! are fitted again, by least squares with a ridge term on their slopes:
//! `min_theta (1/N) sum_i (y_i - sum_l P_il (a_.l . x_i - mu_l))^2 + leaf_ridge sum_l
//! ||a_.l||^2` (scaled features, so the weight is one number whatever the features' units;
//! intercepts unpenalized). With the splits fixed the prediction is linear in the leaves, so
//! this is one linear system of size |tau_L| (p + 1). A coefficient the solve left at zero
//! (within the sparsity tolerance) is set to exactly zero and stays out of the fit, so the
//! refit keeps the support the sparsity penalties chose; the result is clipped to the leaf
//! bounds, and the global-sparsity betas are set to the largest |a_jt| of each feature (the
//! smallest feasible value), so the point stays feasible.
//!
//! A posterior refit rather than a term of the NLP: the splits of the paper's problem are
//! kept, the NLP (and every backend's evaluation of it) is unchanged, and the refit costs
//! one factorization. Skipped where the problem has cost-sensitivity or fairness
//! constraints (they bind the predictions, which the refit moves).

use super::problem::{evaluate, SorrtProblem};
use glassbox_core::metrics::SPARSITY_TOLERANCE;
use nalgebra::{DMatrix, DVector};

/// Added to the intercepts' diagonal (relative to the system's largest diagonal entry) so
/// that a leaf no row reaches does not make the system singular.
const INTERCEPT_JITTER: f64 = 1e-12;

/// The point `x` of `problem` with its leaves refitted under `ridge` (module comment), or
/// `None` where the refit does not apply (no ridge, constraints on the predictions, a
/// system that does not factor).
pub(crate) fn refit_leaves(problem: &SorrtProblem, x: &[f64], ridge: f64) -> Option<Vec<f64>> {
    if ridge.is_nan() || ridge <= 0.0 || !problem.rows.is_empty() || x.len() != problem.layout.n {
        return None;
    }
    let lay = &problem.layout;
    let (n, p) = (problem.x.nrows(), lay.p);
    let a = lay.coefficients(x);
    let mu = lay.locations(x);
    let reach = evaluate(&problem.x, &a, &mu, problem.params.gamma, &problem.shape).reach;
    let sparse = problem.params.penalized();
    // Per leaf, the features refitted (all, or the solve's support) and then the intercept.
    let a = &a;
    let columns: Vec<(usize, Option<usize>)> = (0..lay.leaves)
        .flat_map(|l| {
            let t = lay.branches + l;
            (0..p)
                .filter(move |&j| !sparse || a[(j, t)].abs() > SPARSITY_TOLERANCE)
                .map(move |j| (l, Some(j)))
                .chain(std::iter::once((l, None)))
        })
        .collect();
    let z = DMatrix::from_fn(n, columns.len(), |i, c| match columns[c] {
        (l, Some(j)) => reach[(i, l)] * problem.x[(i, j)],
        (l, None) => reach[(i, l)],
    });
    let mut gram = z.tr_mul(&z) / n as f64;
    let rhs = z.tr_mul(&DVector::from_column_slice(&problem.y)) / n as f64;
    let jitter = INTERCEPT_JITTER * gram.diagonal().max().max(1.0);
    for (c, (_, feature)) in columns.iter().enumerate() {
        gram[(c, c)] += if feature.is_some() { ridge } else { jitter };
    }
    let theta = gram.cholesky()?.solve(&rhs);
    let (slope_bound, intercept_bound) = (lay.leaf_coefficient_bound, lay.leaf_intercept_bound);
    let mut out = x.to_vec();
    // Coefficients outside the support are set to exactly zero (the solve left them within
    // the sparsity tolerance of it); the refitted ones are written below.
    for t in lay.branches..lay.nodes {
        for j in 0..p {
            out[lay.a(j, t)] = 0.0;
            if lay.split {
                out[lay.a_neg(j, t)] = 0.0;
            }
        }
    }
    for (c, &(l, feature)) in columns.iter().enumerate() {
        let t = lay.branches + l;
        match feature {
            Some(j) => {
                let v = theta[c].clamp(-slope_bound, slope_bound);
                if lay.split {
                    out[lay.a(j, t)] = v.max(0.0);
                    out[lay.a_neg(j, t)] = (-v).max(0.0);
                } else {
                    out[lay.a(j, t)] = v;
                }
            }
            // The prediction adds theta for the intercept; the NLP's variable is -mu_l.
            None => out[lay.mu + t] = (-theta[c]).clamp(-intercept_bound, intercept_bound),
        }
    }
    if lay.beta {
        // The smallest feasible beta_j (4): the largest |a_jt| over every node.
        let coefficients = lay.coefficients(&out);
        for j in 0..p {
            out[lay.beta_at + j] = coefficients.row(j).amax();
        }
    }
    Some(out)
}
