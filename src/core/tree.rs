//! The topology of a complete binary tree of depth D, shared by every tree formulation.
//!
//! Nodes are numbered in breadth-first (heap) order: branch nodes `0..2^D - 1` (the set
//! tau_B of the papers), leaves `0..2^D` (tau_L), leaf `l` being heap node `2^D - 1 + l`.
//! The children of heap node `t` are `2t + 1` (left) and `2t + 2` (right).
//!
//! Depends on nothing.

use serde::{Deserialize, Serialize};

/// A complete binary tree of a given depth.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeShape {
    depth: usize,
    /// For each leaf, its path from the root: `(branch node, goes_left)`.
    paths: Vec<Vec<(usize, bool)>>,
}

impl TreeShape {
    /// The tree of depth `depth` (at least 1).
    pub fn new(depth: usize) -> Self {
        let depth = depth.max(1);
        let branches = (1usize << depth) - 1;
        let paths = (0..1usize << depth)
            .map(|l| {
                let mut node = branches + l;
                let mut path = Vec::with_capacity(depth);
                while node > 0 {
                    let parent = (node - 1) / 2;
                    path.push((parent, node == 2 * parent + 1));
                    node = parent;
                }
                path.reverse();
                path
            })
            .collect();
        TreeShape { depth, paths }
    }

    /// The depth D.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// |tau_B|, the number of branch nodes.
    pub fn num_branches(&self) -> usize {
        (1 << self.depth) - 1
    }

    /// |tau_L|, the number of leaves.
    pub fn num_leaves(&self) -> usize {
        1 << self.depth
    }

    /// The path from the root to leaf `l`: `(branch node, goes_left)`, root first. The
    /// nodes with `goes_left` form N_L(l), the others N_R(l).
    pub fn path(&self, leaf: usize) -> &[(usize, bool)] {
        &self.paths[leaf]
    }

    /// The depth of branch node `t` (the root has depth 0).
    pub fn node_depth(&self, t: usize) -> usize {
        (usize::BITS - 1 - (t + 1).leading_zeros()) as usize
    }

    /// Whether branch node `t` is an ancestor of (or equal to) branch node `u`.
    pub fn is_ancestor_or_self(&self, t: usize, u: usize) -> bool {
        let mut v = u;
        loop {
            if v == t {
                return true;
            }
            if v == 0 || v < t {
                return false;
            }
            v = (v - 1) / 2;
        }
    }

    /// The leaves below branch node `t`, split into those reached through its left child
    /// and those through its right child.
    pub fn leaves_below(&self, t: usize) -> (Vec<usize>, Vec<usize>) {
        let mut left = Vec::new();
        let mut right = Vec::new();
        for l in 0..self.num_leaves() {
            if let Some(&(_, goes_left)) = self.paths[l].iter().find(|(u, _)| *u == t) {
                if goes_left {
                    left.push(l);
                } else {
                    right.push(l);
                }
            }
        }
        (left, right)
    }

    /// Pairs `(t, u)` of branch nodes with `t` an ancestor of or equal to `u`: the pairs
    /// whose split parameters share a root-to-leaf path, hence the only ones with
    /// nonzero mixed second derivatives in a randomized tree.
    pub fn related_pairs(&self) -> Vec<(usize, usize)> {
        let b = self.num_branches();
        let mut pairs = Vec::new();
        for u in 0..b {
            for t in 0..=u {
                if self.is_ancestor_or_self(t, u) {
                    pairs.push((t, u));
                }
            }
        }
        pairs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_two_paths() {
        let tree = TreeShape::new(2);
        assert_eq!(tree.num_branches(), 3);
        assert_eq!(tree.num_leaves(), 4);
        assert_eq!(tree.path(0), &[(0, true), (1, true)]);
        assert_eq!(tree.path(1), &[(0, true), (1, false)]);
        assert_eq!(tree.path(2), &[(0, false), (2, true)]);
        assert_eq!(tree.path(3), &[(0, false), (2, false)]);
        assert_eq!(tree.node_depth(0), 0);
        assert_eq!(tree.node_depth(2), 1);
        assert_eq!(tree.node_depth(3), 2);
        assert!(tree.is_ancestor_or_self(0, 2));
        assert!(!tree.is_ancestor_or_self(1, 2));
        assert_eq!(
            tree.related_pairs(),
            vec![(0, 0), (0, 1), (1, 1), (0, 2), (2, 2)]
        );
        assert_eq!(tree.leaves_below(2), (vec![2], vec![3]));
    }
}
