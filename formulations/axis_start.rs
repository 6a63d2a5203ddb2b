//! An axis-aligned tree (CART's, grown on the scaled training rows) laid into the branch
//! nodes of a randomized tree of depth D, for the starts of S-ORCT, l0tree and S-ORRT and
//! for S-ORCT's data-driven split scale.
//!
//! A randomized tree sends row x left at branch t with probability F(gamma (a_t.x / p -
//! mu_t)) (S-ORCT (2), S-ORRT (1)); its hard version sends x left when a_t.x / p - mu_t >= 0.
//! A CART split `x_j <= s` (scaled units) is the point with one nonzero coefficient,
//! a_jt = -1 and mu_t = -s / p: then z = (s - x_j) / p, which is >= 0 exactly when
//! x_j <= s, and a one-feature split is as sharp as the box a in [-1, 1]^p allows (slope
//! gamma / p per scaled unit). A position of the complete tree where CART did not split (its
//! node is a leaf above the last level) gets a = 0, mu = 1: z = -1, every row goes right,
//! as [`BfsTree`]'s convention routes rows through a non-splitting position.
//!
//! Depends on the core (`tree`) and on CART's tree type (`formulations/cart`).

use crate::cart::grow::{Criterion, Targets};
use crate::cart::tree::{BfsNode, BfsTree};
use crate::cart::CartConfig;
use glassbox_core::tree::TreeShape;
use nalgebra::DMatrix;

/// The branch nodes of a randomized tree that a hard axis-aligned tree defines, with the
/// leaf each training row reaches in the hard tree.
#[derive(Clone, Debug, PartialEq)]
pub struct AxisSplits {
    /// a (p x |tau_B|): -1 at the split feature of each splitting position, 0 elsewhere.
    pub a: DMatrix<f64>,
    /// mu (|tau_B|): -threshold / p at a splitting position, 1 elsewhere.
    pub mu: Vec<f64>,
    /// The leaf (0..2^D) each row of the data it was laid on reaches in the hard tree.
    pub leaf_of: Vec<usize>,
    /// Which branch positions split (the others send every row right).
    pub splits: Vec<bool>,
}

/// CART of depth `depth` (Gini for classes, squared error for values; one row per leaf at
/// least, no pruning: the greedy tree as deep as the randomized one) on the rows of `x`.
pub fn cart_tree(
    x: &DMatrix<f64>,
    targets: Targets<'_>,
    depth: usize,
) -> crate::cart::tree::AxisTree {
    let criterion = match targets {
        Targets::Classes { .. } => Criterion::Gini,
        Targets::Values(_) => Criterion::SquaredError,
    };
    let config = CartConfig {
        criterion,
        depth: Some(depth),
        ..CartConfig::default()
    };
    config.fit_tree(x, targets, &vec![1.0; x.nrows()])
}

/// Lays `bfs` (a tree of depth at most `bfs.depth`, encoded on the complete tree) into the
/// branch nodes of a randomized tree on the rows of `x` (N x p, the scaled features the
/// tree was grown on).
pub fn axis_splits(bfs: &BfsTree, x: &DMatrix<f64>) -> AxisSplits {
    let p = x.ncols();
    let branches = (1usize << bfs.depth) - 1;
    let mut a = DMatrix::zeros(p, branches);
    let mut mu = vec![1.0; branches];
    let mut splits = vec![false; branches];
    for t in 0..branches {
        if let BfsNode::Branch(s) = &bfs.nodes[t] {
            a[(s.feature, t)] = -1.0;
            mu[t] = -s.threshold / p as f64;
            splits[t] = true;
        }
    }
    let leaf_of = (0..x.nrows())
        .map(|i| {
            let mut t = 0;
            while t < branches {
                t = match &bfs.nodes[t] {
                    BfsNode::Branch(s) if s.goes_left(x, i) => 2 * t + 1,
                    _ => 2 * t + 2,
                };
            }
            t - branches
        })
        .collect();
    AxisSplits {
        a,
        mu,
        leaf_of,
        splits,
    }
}

/// CART of depth `depth` on `x` laid into a randomized tree of that depth (see
/// [`axis_splits`]).
pub fn cart_splits(x: &DMatrix<f64>, targets: Targets<'_>, depth: usize) -> AxisSplits {
    let tree = cart_tree(x, targets, depth);
    // CART's depth limit is `depth`, so the tree fits the complete tree of that depth.
    let bfs = tree
        .to_bfs(depth)
        .expect("a CART tree grown with max_depth D fits depth D");
    axis_splits(&bfs, x)
}

/// The mean over the rows of `x` of the probability that the randomized tree of slope
/// `gamma` sends a row to the leaf its hard version sends it to: 1 for a hard tree, about
/// 1/2^D for one whose splits are flat over the data.
pub fn agreement(splits: &AxisSplits, x: &DMatrix<f64>, gamma: f64) -> f64 {
    let n = x.nrows();
    if n == 0 {
        return 1.0;
    }
    let depth = (splits.mu.len() + 1).trailing_zeros() as usize;
    let shape = TreeShape::new(depth);
    let p = x.ncols() as f64;
    let z = x * &splits.a;
    let mut total = 0.0;
    for i in 0..n {
        let mut reach = 1.0;
        for &(t, goes_left) in shape.path(splits.leaf_of[i]) {
            let left = logistic(gamma * (z[(i, t)] / p - splits.mu[t]));
            reach *= if goes_left { left } else { 1.0 - left };
        }
        total += reach;
    }
    total / n as f64
}

fn logistic(v: f64) -> f64 {
    1.0 / (1.0 + (-v).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two features; class 1 exactly when x0 > 0.5 and x1 > 0.25.
    fn data() -> (DMatrix<f64>, Vec<usize>) {
        let mut rows = Vec::new();
        let mut y = Vec::new();
        for i in 0..10 {
            for j in 0..10 {
                let (u, v) = (i as f64 / 9.0, j as f64 / 9.0);
                rows.extend([u, v]);
                y.push(usize::from(u > 0.5 && v > 0.25));
            }
        }
        (DMatrix::from_row_slice(100, 2, &rows), y)
    }

    #[test]
    fn cart_splits_route_rows_as_the_hard_tree_and_sharpen_with_gamma() {
        let (x, y) = data();
        let targets = Targets::Classes {
            y: &y,
            n_classes: 2,
        };
        let tree = cart_tree(&x, targets, 2);
        let splits = cart_splits(&x, targets, 2);
        // The hard randomized tree routes every row to the leaf CART does: the leaves of
        // class 1 hold exactly the rows of class 1.
        let predicted = tree.predict_class(&x);
        assert_eq!(predicted, y, "CART separates this data at depth 2");
        for i in 0..x.nrows() {
            let z = |t: usize| (x.row(i) * splits.a.column(t))[0] / 2.0 - splits.mu[t];
            // Descend the hard randomized tree: left when z >= 0.
            let mut t = 0;
            while t < 3 {
                t = if z(t) >= 0.0 { 2 * t + 1 } else { 2 * t + 2 };
            }
            assert_eq!(t - 3, splits.leaf_of[i], "row {i}");
        }
        // One coefficient per splitting node, -1.
        for t in 0..3 {
            let nonzero: Vec<f64> = splits
                .a
                .column(t)
                .iter()
                .copied()
                .filter(|v| *v != 0.0)
                .collect();
            assert!(
                nonzero.is_empty() || nonzero == vec![-1.0],
                "node {t}: {nonzero:?}"
            );
        }
        let soft = agreement(&splits, &x, 1.0);
        let sharp = agreement(&splits, &x, 1e5);
        assert!(soft < 0.5, "gamma = 1 is flat: {soft}");
        assert!(sharp > 0.999, "gamma = 1e5 is hard: {sharp}");
    }

    #[test]
    fn an_unsplit_position_sends_every_row_right() {
        let (x, _) = data();
        // Pure labels: CART does not split at all.
        let y = vec![0usize; x.nrows()];
        let splits = cart_splits(
            &x,
            Targets::Classes {
                y: &y,
                n_classes: 2,
            },
            2,
        );
        assert_eq!(splits.splits, vec![false; 3]);
        assert!(splits.leaf_of.iter().all(|&l| l == 3));
        assert!(agreement(&splits, &x, 512.0) > 0.99);
    }
}
