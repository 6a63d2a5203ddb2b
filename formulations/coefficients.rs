//! The coefficient block of the smooth formulations, and the global-sparsity rows over it.
//!
//! S-ORCT, S-ORRT and logistic_l1 store a p x m coefficient matrix column by column (entry
//! (j, c) at `plus + c * p + j`; a column is a tree node's a_.t, or a class's weights),
//! split into a+ and a- (a second block at `minus`) when an l1 penalty needs |a| = a+ + a-.
//! S-ORCT has a column per branch node, S-ORRT per node. [`CoefficientBlock`] reads the
//! matrix back from a point, or, for the `torch` backend, as a differentiable tensor.
//!
//! With lambda_G > 0 a variable beta_j bounds feature j's coefficient at every node, so that
//! lambda_G sum_j beta_j penalizes the features the tree uses ([`BetaLinks`]). S-ORCT (12)
//! and S-ORRT (4) write the rows as beta_j >= a+_jt + a-_jt when `a` is split; with a single
//! `a` they are the S-ORCT paper's (17)-(18), beta_j >= a_jt and beta_j >= -a_jt. They are
//! linear, written as `beta_j - a+_jt - a-_jt >= 0` or `beta_j -+ a_jt >= 0`, node by node
//! and, within a node, feature by feature.

use nalgebra::DMatrix;

/// Where a problem's coefficient matrix sits in its variable vector.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CoefficientBlock {
    /// Features: the matrix's rows.
    pub p: usize,
    /// The matrix's columns (S-ORCT: branch nodes; S-ORRT: all nodes; logistic_l1: score
    /// columns).
    pub columns: usize,
    /// Whether the matrix is split into a+ (at `plus`) and a- (at `minus`).
    pub split: bool,
    pub plus: usize,
    pub minus: usize,
}

impl CoefficientBlock {
    /// Index of entry (j, c), or of its a+ part.
    pub fn plus_index(&self, j: usize, c: usize) -> usize {
        self.plus + c * self.p + j
    }

    /// Index of entry (j, c)'s a- part (only when `split`).
    pub fn minus_index(&self, j: usize, c: usize) -> usize {
        self.minus + c * self.p + j
    }

    /// The matrix (p x columns) at `x`.
    pub fn matrix(&self, x: &[f64]) -> DMatrix<f64> {
        DMatrix::from_fn(self.p, self.columns, |j, c| {
            let v = x[self.plus_index(j, c)];
            if self.split {
                v - x[self.minus_index(j, c)]
            } else {
                v
            }
        })
    }

    /// The matrix (p x columns) of the 1-D tensor `x`, differentiable in `x`.
    #[cfg(feature = "torch")]
    pub fn tensor(&self, x: &tch::Tensor) -> tch::Tensor {
        let (p, columns) = (self.p as i64, self.columns as i64);
        // Column by column: view as columns x p, then transpose. No in-place operations
        // (`-=`): x requires grad and these are views of it.
        let plus = x.narrow(0, self.plus as i64, p * columns);
        let a = if self.split {
            plus - x.narrow(0, self.minus as i64, p * columns)
        } else {
            plus
        };
        a.view([columns, p]).tr()
    }

    /// The rows tying beta (at `beta_at`, p of them) to every column's coefficients.
    pub fn beta_links(self, beta_at: usize) -> BetaLinks {
        BetaLinks {
            coefficients: self,
            beta_at,
        }
    }
}

/// The global-sparsity rows: beta_j (at `beta_at + j`) bounds feature j's coefficient at
/// every node.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BetaLinks {
    coefficients: CoefficientBlock,
    beta_at: usize,
}

impl BetaLinks {
    /// The number of rows: one per coefficient (split) or two (single `a`).
    pub fn rows(&self) -> usize {
        let c = &self.coefficients;
        let per = if c.split { 1 } else { 2 };
        per * c.p * c.columns
    }

    /// The coefficients (j, t) in row order.
    fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let c = &self.coefficients;
        (0..c.columns).flat_map(move |t| (0..c.p).map(move |j| (j, t)))
    }

    /// Writes the rows' values at `x` into `g[..self.rows()]`.
    pub fn values(&self, x: &[f64], g: &mut [f64]) {
        let c = &self.coefficients;
        let mut row = 0;
        for (j, t) in self.pairs() {
            let (beta, a) = (x[self.beta_at + j], x[c.plus_index(j, t)]);
            if c.split {
                g[row] = beta - a - x[c.minus_index(j, t)];
                row += 1;
            } else {
                g[row] = beta - a;
                g[row + 1] = beta + a;
                row += 2;
            }
        }
    }

    /// Appends the Jacobian's structure, the first row numbered `first_row`.
    pub fn jacobian_structure(&self, first_row: usize, s: &mut Vec<(usize, usize)>) {
        let c = &self.coefficients;
        let mut row = first_row;
        for (j, t) in self.pairs() {
            let (beta, a) = (self.beta_at + j, c.plus_index(j, t));
            if c.split {
                s.extend([(row, beta), (row, a), (row, c.minus_index(j, t))]);
                row += 1;
            } else {
                s.extend([(row, beta), (row, a), (row + 1, beta), (row + 1, a)]);
                row += 2;
            }
        }
    }

    /// Writes the Jacobian's values (constant: the rows are linear) in the order of
    /// [`Self::jacobian_structure`]; returns how many were written.
    pub fn jacobian_values(&self, values: &mut [f64]) -> usize {
        let c = &self.coefficients;
        let entries: &[f64] = if c.split {
            &[1.0, -1.0, -1.0]
        } else {
            &[1.0, -1.0, 1.0, 1.0]
        };
        let written = entries.len() * c.p * c.columns;
        for chunk in values[..written].chunks_exact_mut(entries.len()) {
            chunk.copy_from_slice(entries);
        }
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(split: bool) -> BetaLinks {
        // p = 2, 3 nodes; a+ at 0, a- at 6, beta at 20.
        CoefficientBlock {
            p: 2,
            columns: 3,
            split,
            plus: 0,
            minus: 6,
        }
        .beta_links(20)
    }

    /// The Jacobian's entries, laid into a dense matrix, are the rows' exact derivatives:
    /// the rows are linear, so g(x + e_c) - g(x) is column c.
    #[test]
    fn jacobian_is_the_derivative_of_the_rows() {
        for split in [true, false] {
            let b = links(split);
            let n = 22;
            let x: Vec<f64> = (0..n).map(|i| 0.1 * i as f64 - 0.7).collect();
            let mut s = Vec::new();
            b.jacobian_structure(0, &mut s);
            let mut v = vec![0.0; s.len()];
            assert_eq!(b.jacobian_values(&mut v), s.len());
            let mut dense = vec![vec![0.0; n]; b.rows()];
            for (&(r, c), &val) in s.iter().zip(&v) {
                dense[r][c] += val;
            }
            let mut g0 = vec![0.0; b.rows()];
            b.values(&x, &mut g0);
            for c in 0..n {
                let mut xc = x.clone();
                xc[c] += 1.0;
                let mut g1 = vec![0.0; b.rows()];
                b.values(&xc, &mut g1);
                for r in 0..b.rows() {
                    assert!(
                        (g1[r] - g0[r] - dense[r][c]).abs() < 1e-12,
                        "split {split}: row {r}, column {c}"
                    );
                }
            }
        }
    }

    /// beta_j = max_t |a_jt| satisfies every row with equality somewhere; a smaller beta
    /// violates one.
    #[test]
    fn rows_hold_exactly_when_beta_bounds_every_coefficient() {
        let b = links(false);
        let mut x = vec![0.0; 22];
        x[..6].copy_from_slice(&[0.3, -0.5, -0.8, 0.1, 0.2, 0.4]);
        x[20] = 0.8; // feature 0: |a| at most 0.8
        x[21] = 0.5; // feature 1: |a| at most 0.5
        let mut g = vec![0.0; b.rows()];
        b.values(&x, &mut g);
        assert!(g.iter().all(|&r| r >= 0.0), "{g:?}");
        assert!(g.contains(&0.0));
        x[20] = 0.7;
        b.values(&x, &mut g);
        assert!(g.iter().any(|&r| r < 0.0));
    }
}
