//! The cache of subtrees, keyed by the set of rows a subtree sees (MurTree's and STreeD's
//! dataset cache): for each row set and each (depth, branch-node budget) it keeps the best
//! lower bound proven so far and, once found, the optimal subtree's root. Two branches that
//! select the same rows (x1 = 1 then x2 = 0, or x2 = 0 then x1 = 1; a threshold implied by
//! another) share one entry.
//!
//! Budgets are normalized before they reach the cache (`nodes <= 2^depth - 1`,
//! `depth <= nodes`), so equivalent requests share a slot.
//!
//! Depends on [`super::depth2`] (the shape of its small trees) only.

use super::depth2::SmallTree;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A child of a cached split.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Child {
    /// A leaf.
    Leaf,
    /// A single split on a feature with two leaves below.
    Stump(u32),
    /// The optimal subtree of its row set for this (normalized) budget, itself cached.
    Subtree {
        /// Its depth.
        depth: u32,
        /// Its branch-node budget.
        nodes: u32,
    },
}

/// An optimal subtree: its cost and root.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Solution {
    /// Misclassified weight + penalty * branch nodes.
    pub cost: f64,
    /// The root's feature, or `None` for a leaf.
    pub feature: Option<u32>,
    /// Its zero child.
    pub zero: Child,
    /// Its one child.
    pub one: Child,
    /// Branch nodes of the whole subtree.
    pub branch_nodes: u32,
}

impl Solution {
    /// A single leaf.
    pub fn leaf(cost: f64) -> Self {
        Solution {
            cost,
            feature: None,
            zero: Child::Leaf,
            one: Child::Leaf,
            branch_nodes: 0,
        }
    }

    /// A tree of the depth-2 kernel.
    pub fn small(tree: &SmallTree) -> Self {
        let child = |f: u32| {
            if f == super::depth2::NONE {
                Child::Leaf
            } else {
                Child::Stump(f)
            }
        };
        if tree.root == super::depth2::NONE {
            return Solution::leaf(tree.cost);
        }
        Solution {
            cost: tree.cost,
            feature: Some(tree.root),
            zero: child(tree.zero),
            one: child(tree.one),
            branch_nodes: tree.branch_nodes(),
        }
    }
}

/// What is known of one row set for one budget.
#[derive(Clone, Copy, Debug)]
struct Slot {
    depth: u32,
    nodes: u32,
    lower_bound: f64,
    solution: Option<Solution>,
}

/// FxHash's word mixing: the keys are bitsets whose words are already well spread.
#[derive(Default)]
pub(crate) struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    // A slice of words arrives here as its bytes, all at once.
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.write_u64(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        for &b in chunks.remainder() {
            self.write_u64(u64::from(b));
        }
    }

    #[inline]
    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// The subtree cache.
#[derive(Default)]
pub(crate) struct Cache {
    entries: HashMap<Box<[u64]>, Vec<Slot>, BuildHasherDefault<WordHasher>>,
}

impl Cache {
    /// The proven lower bound of `rows` for the budget (0 when nothing is known).
    pub fn lower_bound(&self, rows: &[u64], depth: u32, nodes: u32) -> f64 {
        self.slot(rows, depth, nodes).map_or(0.0, |s| s.lower_bound)
    }

    /// The optimal subtree of `rows` for the budget, if it was found.
    pub fn solution(&self, rows: &[u64], depth: u32, nodes: u32) -> Option<Solution> {
        self.slot(rows, depth, nodes).and_then(|s| s.solution)
    }

    /// Raises the lower bound of `rows` for the budget to `bound` (never lowers it).
    pub fn raise_lower_bound(&mut self, rows: &[u64], depth: u32, nodes: u32, bound: f64) {
        let slot = self.slot_mut(rows, depth, nodes);
        if bound > slot.lower_bound {
            slot.lower_bound = bound;
        }
    }

    /// Stores the optimal subtree of `rows` for the budget (its cost is then the bound).
    pub fn store(&mut self, rows: &[u64], depth: u32, nodes: u32, solution: Solution) {
        let slot = self.slot_mut(rows, depth, nodes);
        slot.lower_bound = solution.cost;
        slot.solution = Some(solution);
    }

    /// Number of row sets cached.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    fn slot(&self, rows: &[u64], depth: u32, nodes: u32) -> Option<&Slot> {
        self.entries
            .get(rows)?
            .iter()
            .find(|s| s.depth == depth && s.nodes == nodes)
    }

    fn slot_mut(&mut self, rows: &[u64], depth: u32, nodes: u32) -> &mut Slot {
        if !self.entries.contains_key(rows) {
            self.entries.insert(rows.into(), Vec::new());
        }
        let slots = self.entries.get_mut(rows).expect("inserted above");
        let i = match slots
            .iter()
            .position(|s| s.depth == depth && s.nodes == nodes)
        {
            Some(i) => i,
            None => {
                slots.push(Slot {
                    depth,
                    nodes,
                    lower_bound: 0.0,
                    solution: None,
                });
                slots.len() - 1
            }
        };
        &mut slots[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_only_rise_and_solutions_set_them() {
        let mut cache = Cache::default();
        let rows = [0b1011u64, 7];
        assert_eq!(cache.lower_bound(&rows, 2, 3), 0.0);
        cache.raise_lower_bound(&rows, 2, 3, 4.0);
        cache.raise_lower_bound(&rows, 2, 3, 2.0);
        assert_eq!(cache.lower_bound(&rows, 2, 3), 4.0);
        assert_eq!(cache.lower_bound(&rows, 2, 2), 0.0);
        assert!(cache.solution(&rows, 2, 3).is_none());
        cache.store(&rows, 2, 3, Solution::leaf(5.0));
        assert_eq!(cache.lower_bound(&rows, 2, 3), 5.0);
        assert_eq!(cache.solution(&rows, 2, 3), Some(Solution::leaf(5.0)));
        assert_eq!(cache.len(), 1);
    }
}
