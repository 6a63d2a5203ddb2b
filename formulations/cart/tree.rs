//! The fitted axis-aligned tree every heuristic learner shares (CART, the forest's trees,
//! TAO, TMO), and its fixed-length breadth-first encoding for warm starts and crossover.
//!
//! Storage is an arena: `nodes[0]` is the root and a branch names its children by index,
//! so trees of any depth (CART without a depth limit) stay small. A row goes to the left
//! child when `x[feature] <= threshold` (scikit-learn's convention), in the encoded but
//! unscaled features of the user's table.
//!
//! For formulations that work on a complete binary tree of depth D (OCT warm starts, TMO's
//! crossover) [`AxisTree::to_bfs`] gives the heap-ordered encoding [`BfsTree`]; see its
//! comment for the node numbering.
//!
//! Depends on the core only.

use glassbox_core::{GlassboxError, Result};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

/// The test of a branch node: left when `x[feature] <= threshold`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AxisSplit {
    /// Encoded feature index.
    pub feature: usize,
    /// Threshold, in the feature's (unscaled) units.
    pub threshold: f64,
}

impl AxisSplit {
    /// Whether row `i` of `x` goes left.
    pub fn goes_left(&self, x: &DMatrix<f64>, i: usize) -> bool {
        x[(i, self.feature)] <= self.threshold
    }
}

/// A branch: its test and its children (indices into [`AxisTree::nodes`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Branch {
    /// The test.
    pub split: AxisSplit,
    /// Left child.
    pub left: usize,
    /// Right child.
    pub right: usize,
}

/// One node. Every node, branch or leaf, keeps the statistics of the training rows that
/// reached it, so pruning (a branch becoming a leaf) needs no data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// The test and children; `None` for a leaf.
    pub branch: Option<Branch>,
    /// What the node predicts: class fractions (classification, one entry per class) or
    /// the mean target (regression, one entry).
    pub value: Vec<f64>,
    /// Training rows that reached it (distinct rows; a bootstrap duplicate counts once).
    pub n_samples: usize,
    /// Their total sample weight.
    pub weight: f64,
    /// Impurity of those rows under the criterion it was grown with (0 where unknown).
    pub impurity: f64,
}

impl Node {
    /// A leaf predicting `value`.
    pub fn leaf(value: Vec<f64>) -> Self {
        Node {
            branch: None,
            value,
            n_samples: 0,
            weight: 0.0,
            impurity: 0.0,
        }
    }

    /// The class with the largest fraction (ties to the lower index).
    pub fn class(&self) -> usize {
        argmax(&self.value)
    }
}

/// The index of the largest entry (ties to the lower index; 0 for an empty slice).
pub fn argmax(v: &[f64]) -> usize {
    let mut best = 0;
    for k in 1..v.len() {
        if v[k] > v[best] {
            best = k;
        }
    }
    best
}

/// A binary tree of axis-aligned splits (see the module comment).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AxisTree {
    /// The nodes; `nodes[0]` is the root. After [`AxisTree::compact`] they are in
    /// breadth-first order (left child first) and every node is reachable.
    pub nodes: Vec<Node>,
}

impl AxisTree {
    /// A tree of one leaf.
    pub fn single_leaf(value: Vec<f64>) -> Self {
        AxisTree {
            nodes: vec![Node::leaf(value)],
        }
    }

    /// Checks what predicting relies on, for a tree read from a file: every branch tests
    /// one of `features` features and names existing children, each node is reached once
    /// from the root (no cycle), and every node holds `values` numbers. The message says
    /// what is wrong.
    pub fn check(&self, features: usize, values: usize) -> std::result::Result<(), String> {
        let children = |t: usize| self.nodes[t].branch.map(|b| (b.left, b.right));
        check_links(self.nodes.len(), children, |t| {
            let node = &self.nodes[t];
            if node.value.len() != values {
                return Err(format!(
                    "node {t} holds {} value(s), expected {values}",
                    node.value.len()
                ));
            }
            match &node.branch {
                Some(b) if b.split.feature >= features => Err(format!(
                    "node {t} tests feature {} but the model has {features}",
                    b.split.feature
                )),
                _ => Ok(()),
            }
        })
    }

    /// The leaf row `i` of `x` reaches.
    pub fn leaf_of(&self, x: &DMatrix<f64>, i: usize) -> usize {
        self.leaf_from(0, x, i)
    }

    /// The leaf row `i` reaches from node `start`.
    pub fn leaf_from(&self, start: usize, x: &DMatrix<f64>, i: usize) -> usize {
        let mut t = start;
        while let Some(b) = &self.nodes[t].branch {
            t = if b.split.goes_left(x, i) {
                b.left
            } else {
                b.right
            };
        }
        t
    }

    /// The value of the leaf each row of `x` reaches.
    pub fn values(&self, x: &DMatrix<f64>) -> Vec<&[f64]> {
        (0..x.nrows())
            .map(|i| self.nodes[self.leaf_of(x, i)].value.as_slice())
            .collect()
    }

    /// The class each row reaches (classification trees).
    pub fn predict_class(&self, x: &DMatrix<f64>) -> Vec<usize> {
        (0..x.nrows())
            .map(|i| self.nodes[self.leaf_of(x, i)].class())
            .collect()
    }

    /// The indices of the reachable nodes, breadth-first (left child first), with their
    /// depth (root 0).
    pub fn bfs_order(&self) -> Vec<(usize, usize)> {
        let mut out = vec![(0, 0)];
        let mut k = 0;
        while k < out.len() {
            let (t, d) = out[k];
            if let Some(b) = &self.nodes[t].branch {
                out.push((b.left, d + 1));
                out.push((b.right, d + 1));
            }
            k += 1;
        }
        out
    }

    /// The depth: the longest root-to-leaf path, in edges (a single leaf has depth 0).
    pub fn depth(&self) -> usize {
        self.bfs_order().iter().map(|&(_, d)| d).max().unwrap_or(0)
    }

    /// The number of reachable leaves.
    pub fn n_leaves(&self) -> usize {
        self.bfs_order()
            .iter()
            .filter(|&&(t, _)| self.nodes[t].branch.is_none())
            .count()
    }

    /// The splits of the reachable branch nodes, breadth-first.
    pub fn splits(&self) -> Vec<AxisSplit> {
        self.bfs_order()
            .iter()
            .filter_map(|&(t, _)| self.nodes[t].branch.map(|b| b.split))
            .collect()
    }

    /// Makes node `t` a leaf (its subtree becomes unreachable; [`AxisTree::compact`]
    /// drops it).
    pub fn make_leaf(&mut self, t: usize) {
        self.nodes[t].branch = None;
    }

    /// Drops unreachable nodes and renumbers the rest breadth-first, left child first.
    pub fn compact(&mut self) {
        let order = self.bfs_order();
        let mut new_index = vec![usize::MAX; self.nodes.len()];
        for (k, &(t, _)) in order.iter().enumerate() {
            new_index[t] = k;
        }
        let nodes = order
            .iter()
            .map(|&(t, _)| {
                let mut node = self.nodes[t].clone();
                if let Some(b) = &mut node.branch {
                    b.left = new_index[b.left];
                    b.right = new_index[b.right];
                }
                node
            })
            .collect();
        self.nodes = nodes;
    }

    /// The `p x (number of branch nodes)` matrix with a 1 at (feature, node) for each split:
    /// the coefficient matrix of an oblique tree whose splits are these, for the sparsity
    /// measures of `metrics`.
    pub fn coefficient_matrix(&self, p: usize) -> DMatrix<f64> {
        let splits = self.splits();
        let mut a = DMatrix::zeros(p, splits.len());
        for (t, s) in splits.iter().enumerate() {
            if s.feature < p {
                a[(s.feature, t)] = 1.0;
            }
        }
        a
    }

    /// The heap-ordered encoding of this tree in the complete binary tree of depth `depth`
    /// (see [`BfsTree`]); an error if the tree is deeper.
    pub fn to_bfs(&self, depth: usize) -> Result<BfsTree> {
        let own = self.depth();
        if own > depth {
            return Err(GlassboxError::Config(format!(
                "a tree of depth {own} does not fit a complete tree of depth {depth}"
            )));
        }
        let mut nodes = vec![BfsNode::Nil; (1usize << (depth + 1)) - 1];
        let mut stack = vec![(0usize, 0usize)];
        while let Some((t, heap)) = stack.pop() {
            let node = &self.nodes[t];
            match &node.branch {
                Some(b) => {
                    nodes[heap] = BfsNode::Branch(b.split);
                    stack.push((b.left, 2 * heap + 1));
                    stack.push((b.right, 2 * heap + 2));
                }
                None => nodes[heap] = BfsNode::Leaf(node.value.clone()),
            }
        }
        Ok(BfsTree { depth, nodes })
    }

    /// The tree a [`BfsTree`] encodes (node statistics other than the values are zero).
    pub fn from_bfs(bfs: &BfsTree) -> Result<Self> {
        let bad = |m: String| GlassboxError::Config(format!("malformed BFS tree: {m}"));
        if bfs.nodes.len() != (1usize << (bfs.depth + 1)) - 1 {
            return Err(bad(format!(
                "{} nodes for depth {}",
                bfs.nodes.len(),
                bfs.depth
            )));
        }
        let mut tree = AxisTree { nodes: Vec::new() };
        // (heap position, arena index) of nodes whose children are still to be linked.
        let mut queue = std::collections::VecDeque::from([(0usize, 0usize)]);
        tree.nodes.push(Node::leaf(Vec::new()));
        while let Some((heap, t)) = queue.pop_front() {
            match &bfs.nodes[heap] {
                BfsNode::Leaf(value) => tree.nodes[t].value = value.clone(),
                BfsNode::Nil => return Err(bad(format!("node {heap} is nil below a branch"))),
                BfsNode::Branch(split) => {
                    if 2 * heap + 2 >= bfs.nodes.len() {
                        return Err(bad(format!("branch {heap} on the last level")));
                    }
                    let left = tree.nodes.len();
                    tree.nodes.push(Node::leaf(Vec::new()));
                    tree.nodes.push(Node::leaf(Vec::new()));
                    tree.nodes[t].branch = Some(Branch {
                        split: *split,
                        left,
                        right: left + 1,
                    });
                    queue.push_back((2 * heap + 1, left));
                    queue.push_back((2 * heap + 2, left + 1));
                }
            }
        }
        Ok(tree)
    }
}

/// Checks the links of a tree stored as an arena of `len` nodes, root at 0, read from a
/// file: every child named by `children(t)` exists and each node is reached once from the
/// root (no cycle, no shared subtree), so walks from the root end. `node(t)` checks each
/// reached node's own content. The message says what is wrong.
pub fn check_links(
    len: usize,
    children: impl Fn(usize) -> Option<(usize, usize)>,
    mut node: impl FnMut(usize) -> std::result::Result<(), String>,
) -> std::result::Result<(), String> {
    if len == 0 {
        return Err("the tree has no nodes".to_string());
    }
    let mut reached = vec![false; len];
    let mut stack = vec![0];
    while let Some(t) = stack.pop() {
        if std::mem::replace(&mut reached[t], true) {
            return Err(format!("node {t} is reached twice (the tree has a cycle)"));
        }
        node(t)?;
        if let Some((left, right)) = children(t) {
            for child in [left, right] {
                if child >= len {
                    return Err(format!(
                        "node {t} names child {child} but the tree has {len} nodes"
                    ));
                }
                stack.push(child);
            }
        }
    }
    Ok(())
}

/// One position of a [`BfsTree`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum BfsNode {
    /// A branch node with its test.
    Branch(AxisSplit),
    /// A leaf with its value (class fractions, or the mean target).
    Leaf(Vec<f64>),
    /// No node here: an ancestor is a leaf.
    Nil,
}

/// A tree laid into the complete binary tree of depth D, in heap (breadth-first, left
/// first) order: position `t` has children `2t + 1` and `2t + 2`; positions
/// `0..2^D - 1` are the branch positions (tau_B of `glassbox_core::tree::TreeShape`) and
/// `2^D - 1 + l` is leaf `l` of tau_L. A node CART did not split above the last level is a
/// `Leaf` at its own position, and everything below it is `Nil` (the thesis' encoding of
/// Figure 3.10, with the last level kept so leaf values travel with the tree).
///
/// For MILP formulations that need every branch position to carry a split decision
/// (OCT's d_t), [`BfsTree::branch_splits`] gives `None` at positions that do not split and
/// [`BfsTree::leaf_classes`] the class per leaf of tau_L under the convention that rows
/// at a non-splitting position continue to its right child.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BfsTree {
    /// D.
    pub depth: usize,
    /// `2^(D+1) - 1` positions.
    pub nodes: Vec<BfsNode>,
}

impl BfsTree {
    /// The split at each branch position `0..2^D - 1` (`None` where nothing splits).
    pub fn branch_splits(&self) -> Vec<Option<AxisSplit>> {
        (0..(1usize << self.depth) - 1)
            .map(|t| match &self.nodes[t] {
                BfsNode::Branch(s) => Some(*s),
                _ => None,
            })
            .collect()
    }

    /// The class of each leaf of tau_L (`None` for a leaf no row can reach): the class of
    /// the node that stopped splitting above it, when the leaf is that node's right-most
    /// descendant (rows pass a non-splitting position to the right, as OCT does with
    /// d_t = 0), else none.
    pub fn leaf_classes(&self) -> Vec<Option<usize>> {
        let first_leaf = (1usize << self.depth) - 1;
        (0..1usize << self.depth)
            .map(|l| {
                let mut t = first_leaf + l;
                loop {
                    match &self.nodes[t] {
                        BfsNode::Leaf(v) => return Some(argmax(v)),
                        BfsNode::Branch(_) => return None,
                        BfsNode::Nil => {
                            // Climb only while t is a right child.
                            if t == 0 || t % 2 == 1 {
                                return None;
                            }
                            t = (t - 1) / 2;
                        }
                    }
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stump() -> AxisTree {
        // root: x0 <= 1.5 ; left: leaf class 0 ; right: x1 <= 0 -> class 1 / class 0
        let split = |feature, threshold| AxisSplit { feature, threshold };
        AxisTree {
            nodes: vec![
                Node {
                    branch: Some(Branch {
                        split: split(0, 1.5),
                        left: 2,
                        right: 1,
                    }),
                    ..Node::leaf(vec![0.5, 0.5])
                },
                Node {
                    branch: Some(Branch {
                        split: split(1, 0.0),
                        left: 3,
                        right: 4,
                    }),
                    ..Node::leaf(vec![0.2, 0.8])
                },
                Node::leaf(vec![1.0, 0.0]),
                Node::leaf(vec![0.0, 1.0]),
                Node::leaf(vec![0.6, 0.4]),
            ],
        }
    }

    #[test]
    fn bfs_encoding_round_trip_and_oct_views() {
        let tree = stump();
        assert_eq!(tree.depth(), 2);
        assert_eq!(tree.n_leaves(), 3);
        let bfs = tree.to_bfs(2).unwrap();
        assert_eq!(bfs.nodes.len(), 7);
        assert!(matches!(bfs.nodes[1], BfsNode::Leaf(_)));
        assert_eq!(bfs.nodes[3], BfsNode::Nil);
        assert_eq!(bfs.branch_splits()[1], None);
        assert_eq!(bfs.branch_splits()[2].unwrap().feature, 1);
        // Leaf 1 (heap 4) is the right-most descendant of the unsplit node 1.
        assert_eq!(bfs.leaf_classes(), vec![None, Some(0), Some(1), Some(0)]);
        let mut back = AxisTree::from_bfs(&bfs).unwrap();
        let mut compacted = tree.clone();
        compacted.compact();
        back.compact();
        assert_eq!(back.splits(), compacted.splits());
        assert!(tree.to_bfs(1).is_err());
        let x = DMatrix::from_row_slice(3, 2, &[1.0, 5.0, 2.0, -1.0, 2.0, 1.0]);
        assert_eq!(tree.predict_class(&x), vec![0, 1, 0]);
        assert_eq!(back.predict_class(&x), vec![0, 1, 0]);
    }
}
