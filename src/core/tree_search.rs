//! [`TreeSearchProblem`]: the third problem kind beside the NLP and the MILP, an optimal
//! axis-aligned classification tree over binary features, for exact tree-search backends
//! (dynamic programming and branch-and-bound in the manner of MurTree, STreeD and DL8.5).
//!
//! The problem: rows with binary feature values and a class label `0..K`, optional per-row
//! weights (the cost of misclassifying that row), a maximum depth D, an optional limit on the
//! number of branch nodes, a penalty per branch node and a minimum leaf size. A tree
//! ([`SearchTree`]) splits on one feature per branch node: rows whose value is 0 go to the
//! *zero* (left) child, rows whose value is 1 to the *one* (right) child. Its objective is
//!
//! ```text
//! sum of the weights of the misclassified rows + branch_penalty * branch nodes
//! ```
//!
//! (weight 1 per row without weights). It is feasible when its depth is at most D, it has at
//! most the allowed branch nodes, and every leaf that holds a training row holds at least
//! `min_leaf_size` of them (leaves that hold none are allowed, as OCT's unused leaves are).
//!
//! # How a tree travels in a [`crate::SolveResult`]
//!
//! A formulation reads a tree-search solution from `SolveResult::primal` as it reads a MILP
//! point: [`encode_tree`] lays the tree into the complete binary tree of depth D in heap
//! order (slot `t = 1, 2, ...`, children `2t` (zero) and `2t + 1` (one), stored at index
//! `t - 1`), `2^(D+1) - 1` values:
//!
//! - a branch slot (`t < 2^D`) holds the feature index it splits on, or [`NO_SPLIT`] (-1)
//!   when the node does not split; as in OCT, a node that does not split sends every row to
//!   its one (right) child, and no node below it splits;
//! - a leaf slot (`t >= 2^D`) holds the class of the leaf, or [`NO_SPLIT`] when no row can
//!   reach it (the zero side of a node that does not split).
//!
//! So a leaf of the tree at depth k < D is the chain of non-splitting slots from its node
//! down the one side, with its class in the leaf slot at the end of the chain.
//! [`decode_tree`] reads such a point back exactly and refuses a malformed one.
//!
//! # How a formulation states itself as one
//!
//! A formulation that has such a statement (OCT) gives a [`TreeSearchStatement`] on its
//! built problem: the search problem, and how a backend's result is read back into the
//! formulation's own terms (its solution point, its objective's units), so that everything
//! downstream (models, records, warm paths) sees a result as from its MILP.
//!
//! Depends on std, serde and the core's error and result types only.

use crate::{GlassboxError, Result, SolveResult};
use serde::{Deserialize, Serialize};

/// A learning problem stated as an optimal-tree search problem: what a tree-search backend
/// solves for a formulation, and how its result becomes the formulation's own.
pub trait TreeSearchStatement: Send + Sync {
    /// The problem a tree-search backend solves.
    fn problem(&self) -> &TreeSearchProblem;
    /// A tree-search backend's `result` in the formulation's terms: the tree (heap encoding
    /// in `primal`) as the formulation's own solution point (for a MILP formulation, the
    /// MILP point of that tree), objective and bound in its objective's units. A result
    /// without a solution keeps an empty `primal`.
    fn read(&self, result: SolveResult) -> Result<SolveResult>;
    /// A point in the formulation's own terms (its warm start: a greedy tree, a saved
    /// model's, a warm path's carried solution) as the same tree in the search's heap
    /// encoding, which a backend takes as its first incumbent. The tree routes the training
    /// rows as the point does. An error says why a point has no such tree; by default no
    /// point has one (the engine then solves without it and says so in `raw_status`).
    fn warm_start(&self, point: &[f64]) -> Result<Vec<f64>> {
        let _ = point;
        Err(invalid(
            "this statement maps no warm start into the search's encoding".to_string(),
        ))
    }
}

/// The largest depth a problem may have: the heap encoding has `2^(D+1) - 1` values, and
/// exact tree search beyond a handful of levels is out of reach anyway.
pub const MAX_DEPTH: usize = 20;

/// The value of a branch slot that does not split (and of a leaf slot no row reaches) in
/// the heap encoding of [`encode_tree`].
pub const NO_SPLIT: f64 = -1.0;

/// Words of a bitset over `n` bits.
fn words_for(n: usize) -> usize {
    n.div_ceil(64)
}

/// An optimal-tree search problem over binary features; see the module documentation.
/// Built by [`TreeSearchProblem::from_rows`] or [`TreeSearchProblem::from_columns`] and the
/// `with_*` methods, each of which validates what it sets.
#[derive(Clone, Debug, PartialEq)]
pub struct TreeSearchProblem {
    n_rows: usize,
    /// Feature f's values as a bitset over the rows (bit r set: row r has value 1), so that
    /// a backend counts rows by popcount.
    columns: Vec<Vec<u64>>,
    labels: Vec<usize>,
    n_classes: usize,
    weights: Option<Vec<f64>>,
    depth: usize,
    max_branch_nodes: Option<usize>,
    branch_penalty: f64,
    min_leaf_size: usize,
    feature_names: Vec<String>,
}

impl TreeSearchProblem {
    /// A problem from one row of binary feature values per label: `rows[r][f]` is row r's
    /// value of feature f. Every row must have the same number of features.
    pub fn from_rows(
        rows: &[Vec<bool>],
        labels: Vec<usize>,
        n_classes: usize,
        depth: usize,
    ) -> Result<Self> {
        if rows.len() != labels.len() {
            return Err(invalid(format!(
                "{} rows of features but {} labels",
                rows.len(),
                labels.len()
            )));
        }
        let n_features = rows.first().map_or(0, Vec::len);
        if let Some(r) = rows.iter().position(|row| row.len() != n_features) {
            return Err(invalid(format!(
                "row {r} has {} features, row 0 has {n_features}",
                rows[r].len()
            )));
        }
        let words = words_for(rows.len());
        let mut columns = vec![vec![0u64; words]; n_features];
        for (r, row) in rows.iter().enumerate() {
            for (f, &value) in row.iter().enumerate() {
                if value {
                    columns[f][r / 64] |= 1 << (r % 64);
                }
            }
        }
        Self::from_bitsets(columns, labels, n_classes, depth)
    }

    /// A problem from one column of binary values per feature: `columns[f][r]` is row r's
    /// value of feature f. Every column must have one value per label.
    pub fn from_columns(
        columns: &[Vec<bool>],
        labels: Vec<usize>,
        n_classes: usize,
        depth: usize,
    ) -> Result<Self> {
        let n = labels.len();
        if let Some(f) = columns.iter().position(|c| c.len() != n) {
            return Err(invalid(format!(
                "feature column {f} has {} values, there are {n} labels",
                columns[f].len()
            )));
        }
        let bitsets = columns
            .iter()
            .map(|column| {
                let mut bits = vec![0u64; words_for(n)];
                for (r, &value) in column.iter().enumerate() {
                    if value {
                        bits[r / 64] |= 1 << (r % 64);
                    }
                }
                bits
            })
            .collect();
        Self::from_bitsets(bitsets, labels, n_classes, depth)
    }

    fn from_bitsets(
        columns: Vec<Vec<u64>>,
        labels: Vec<usize>,
        n_classes: usize,
        depth: usize,
    ) -> Result<Self> {
        let n_rows = labels.len();
        if n_rows == 0 {
            return Err(invalid("the problem has no rows".to_string()));
        }
        if n_classes < 2 {
            return Err(invalid(format!(
                "n_classes must be at least 2, got {n_classes}"
            )));
        }
        if let Some(r) = labels.iter().position(|&y| y >= n_classes) {
            return Err(invalid(format!(
                "row {r} has label {}, outside 0..{n_classes}",
                labels[r]
            )));
        }
        if depth > MAX_DEPTH {
            return Err(invalid(format!(
                "depth must be at most {MAX_DEPTH}, got {depth}"
            )));
        }
        let feature_names = (0..columns.len()).map(|f| format!("x{f}")).collect();
        Ok(TreeSearchProblem {
            n_rows,
            columns,
            labels,
            n_classes,
            weights: None,
            depth,
            max_branch_nodes: None,
            branch_penalty: 0.0,
            min_leaf_size: 1,
            feature_names,
        })
    }

    /// Sets per-row weights: misclassifying row r costs `weights[r]` (finite, >= 0).
    pub fn with_weights(mut self, weights: Vec<f64>) -> Result<Self> {
        if weights.len() != self.n_rows {
            return Err(invalid(format!(
                "{} weights for {} rows",
                weights.len(),
                self.n_rows
            )));
        }
        if let Some(r) = weights.iter().position(|w| !(w.is_finite() && *w >= 0.0)) {
            return Err(invalid(format!(
                "weight of row {r} must be finite and >= 0, got {}",
                weights[r]
            )));
        }
        self.weights = Some(weights);
        Ok(self)
    }

    /// Sets the penalty per branch node, in objective units (finite, >= 0).
    pub fn with_branch_penalty(mut self, penalty: f64) -> Result<Self> {
        if !(penalty.is_finite() && penalty >= 0.0) {
            return Err(invalid(format!(
                "branch_penalty must be finite and >= 0, got {penalty}"
            )));
        }
        self.branch_penalty = penalty;
        Ok(self)
    }

    /// Limits the number of branch nodes (0 allows only a single leaf).
    pub fn with_max_branch_nodes(mut self, limit: usize) -> Result<Self> {
        self.max_branch_nodes = Some(limit);
        Ok(self)
    }

    /// Sets the minimum number of rows of a leaf that holds rows (at least 1).
    pub fn with_min_leaf_size(mut self, size: usize) -> Result<Self> {
        if size == 0 {
            return Err(invalid(
                "min_leaf_size must be at least 1 (leaves that hold no row are always allowed)"
                    .to_string(),
            ));
        }
        self.min_leaf_size = size;
        Ok(self)
    }

    /// Names the features, for messages and printed trees.
    pub fn with_feature_names(mut self, names: Vec<String>) -> Result<Self> {
        if names.len() != self.columns.len() {
            return Err(invalid(format!(
                "{} feature names for {} features",
                names.len(),
                self.columns.len()
            )));
        }
        self.feature_names = names;
        Ok(self)
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of binary features.
    pub fn n_features(&self) -> usize {
        self.columns.len()
    }

    /// Number of classes K (labels are `0..K`).
    pub fn n_classes(&self) -> usize {
        self.n_classes
    }

    /// The maximum depth D.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The limit on branch nodes, if one was set.
    pub fn max_branch_nodes(&self) -> Option<usize> {
        self.max_branch_nodes
    }

    /// The number of branch nodes a tree may have: the limit, or the `2^D - 1` of the
    /// complete tree.
    pub fn branch_node_budget(&self) -> usize {
        let complete = (1usize << self.depth) - 1;
        self.max_branch_nodes.map_or(complete, |m| m.min(complete))
    }

    /// The penalty per branch node.
    pub fn branch_penalty(&self) -> f64 {
        self.branch_penalty
    }

    /// The minimum number of rows of a leaf that holds rows.
    pub fn min_leaf_size(&self) -> usize {
        self.min_leaf_size
    }

    /// The labels, one per row.
    pub fn labels(&self) -> &[usize] {
        &self.labels
    }

    /// The per-row weights, if set.
    pub fn weights(&self) -> Option<&[f64]> {
        self.weights.as_deref()
    }

    /// The weight of row r (1 without weights).
    pub fn weight(&self, r: usize) -> f64 {
        self.weights.as_ref().map_or(1.0, |w| w[r])
    }

    /// Feature f's values as a bitset over the rows: bit `r % 64` of word `r / 64` is row
    /// r's value. Bits past the last row are 0.
    pub fn column(&self, f: usize) -> &[u64] {
        &self.columns[f]
    }

    /// Row r's value of feature f.
    pub fn value(&self, r: usize, f: usize) -> bool {
        self.columns[f][r / 64] >> (r % 64) & 1 == 1
    }

    /// The name of feature f.
    pub fn feature_name(&self, f: usize) -> &str {
        &self.feature_names[f]
    }

    /// The names of the features.
    pub fn feature_names(&self) -> &[String] {
        &self.feature_names
    }

    /// Recomputes a tree's objective from the data, and checks that it is a feasible tree
    /// of this problem (features and classes in range, depth, branch nodes, leaf sizes); an
    /// infeasible or malformed tree is an error that says what is wrong.
    pub fn evaluate(&self, tree: &SearchTree) -> Result<TreeEvaluation> {
        let depth = tree.depth();
        if depth > self.depth {
            return Err(invalid(format!(
                "the tree has depth {depth}, the problem allows {}",
                self.depth
            )));
        }
        let branch_nodes = tree.branch_nodes();
        if branch_nodes > self.branch_node_budget() {
            return Err(invalid(format!(
                "the tree has {branch_nodes} branch nodes, the problem allows {}",
                self.branch_node_budget()
            )));
        }
        let mut all = vec![u64::MAX; words_for(self.n_rows)];
        if !self.n_rows.is_multiple_of(64) {
            *all.last_mut().expect("at least one row") = (1u64 << (self.n_rows % 64)) - 1;
        }
        let misclassified_weight = self.misclassified(tree, &all)?;
        Ok(TreeEvaluation {
            objective: misclassified_weight + self.branch_penalty * branch_nodes as f64,
            misclassified_weight,
            branch_nodes,
            depth,
        })
    }

    /// The weight of the rows of `rows` (a bitset) that `tree` misclassifies.
    fn misclassified(&self, tree: &SearchTree, rows: &[u64]) -> Result<f64> {
        match tree {
            SearchTree::Leaf { class } => {
                if *class >= self.n_classes {
                    return Err(invalid(format!(
                        "a leaf predicts class {class}, outside 0..{}",
                        self.n_classes
                    )));
                }
                let count: usize = rows.iter().map(|w| w.count_ones() as usize).sum();
                if count > 0 && count < self.min_leaf_size {
                    return Err(invalid(format!(
                        "a leaf holds {count} rows, fewer than min_leaf_size {}",
                        self.min_leaf_size
                    )));
                }
                let mut wrong = 0.0;
                for (i, &word) in rows.iter().enumerate() {
                    let mut bits = word;
                    while bits != 0 {
                        let r = i * 64 + bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        if self.labels[r] != *class {
                            wrong += self.weight(r);
                        }
                    }
                }
                Ok(wrong)
            }
            SearchTree::Branch { feature, zero, one } => {
                if *feature >= self.n_features() {
                    return Err(invalid(format!(
                        "a branch splits on feature {feature}, the problem has {}",
                        self.n_features()
                    )));
                }
                let column = &self.columns[*feature];
                let ones: Vec<u64> = rows.iter().zip(column).map(|(r, c)| r & c).collect();
                let zeros: Vec<u64> = rows.iter().zip(column).map(|(r, c)| r & !c).collect();
                Ok(self.misclassified(zero, &zeros)? + self.misclassified(one, &ones)?)
            }
        }
    }

    /// `tree` in the heap encoding of depth D (see [`encode_tree`]).
    pub fn encode(&self, tree: &SearchTree) -> Result<Vec<f64>> {
        encode_tree(tree, self.depth)
    }

    /// The tree of a point in the heap encoding of depth D (see [`decode_tree`]).
    pub fn decode(&self, primal: &[f64]) -> Result<SearchTree> {
        decode_tree(primal, self.depth, self.n_features(), self.n_classes)
    }

    /// The class a tree predicts for row r of this problem.
    pub fn predict_row(&self, tree: &SearchTree, r: usize) -> usize {
        let mut node = tree;
        loop {
            match node {
                SearchTree::Leaf { class } => return *class,
                SearchTree::Branch { feature, zero, one } => {
                    node = if self.value(r, *feature) { one } else { zero };
                }
            }
        }
    }
}

/// What [`TreeSearchProblem::evaluate`] recomputes of a tree.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TreeEvaluation {
    /// Misclassified weight + penalty * branch nodes.
    pub objective: f64,
    /// The weight of the misclassified rows.
    pub misclassified_weight: f64,
    /// Branch nodes of the tree.
    pub branch_nodes: usize,
    /// Depth of the tree (0 for a single leaf).
    pub depth: usize,
}

/// A binary classification tree over binary features: the solution of a
/// [`TreeSearchProblem`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchTree {
    /// A leaf that predicts `class`.
    Leaf {
        /// The predicted class.
        class: usize,
    },
    /// A branch node on `feature`: rows with value 0 go to `zero`, rows with value 1 to
    /// `one`.
    Branch {
        /// The feature split on.
        feature: usize,
        /// The subtree of the rows whose value is 0 (the left child).
        zero: Box<SearchTree>,
        /// The subtree of the rows whose value is 1 (the right child).
        one: Box<SearchTree>,
    },
}

impl SearchTree {
    /// A leaf.
    pub fn leaf(class: usize) -> Self {
        SearchTree::Leaf { class }
    }

    /// A branch node on `feature` with its two subtrees.
    pub fn branch(feature: usize, zero: SearchTree, one: SearchTree) -> Self {
        SearchTree::Branch {
            feature,
            zero: Box::new(zero),
            one: Box::new(one),
        }
    }

    /// The number of branch nodes.
    pub fn branch_nodes(&self) -> usize {
        match self {
            SearchTree::Leaf { .. } => 0,
            SearchTree::Branch { zero, one, .. } => 1 + zero.branch_nodes() + one.branch_nodes(),
        }
    }

    /// The depth (0 for a single leaf).
    pub fn depth(&self) -> usize {
        match self {
            SearchTree::Leaf { .. } => 0,
            SearchTree::Branch { zero, one, .. } => 1 + zero.depth().max(one.depth()),
        }
    }
}

/// The length of the heap encoding of a tree of depth at most `depth`: `2^(depth+1) - 1`.
pub fn encoded_len(depth: usize) -> usize {
    (1usize << (depth + 1)) - 1
}

/// Lays `tree` into the complete tree of depth `depth` in heap order (the encoding of the
/// module documentation). An error when the tree is deeper than `depth`.
pub fn encode_tree(tree: &SearchTree, depth: usize) -> Result<Vec<f64>> {
    if depth > MAX_DEPTH {
        return Err(invalid(format!(
            "depth must be at most {MAX_DEPTH}, got {depth}"
        )));
    }
    if tree.depth() > depth {
        return Err(invalid(format!(
            "a tree of depth {} does not fit the encoding of depth {depth}",
            tree.depth()
        )));
    }
    let mut primal = vec![NO_SPLIT; encoded_len(depth)];
    place(tree, 1, 0, depth, &mut primal);
    Ok(primal)
}

fn place(tree: &SearchTree, slot: usize, level: usize, depth: usize, primal: &mut [f64]) {
    match tree {
        SearchTree::Branch { feature, zero, one } => {
            primal[slot - 1] = *feature as f64;
            place(zero, 2 * slot, level + 1, depth, primal);
            place(one, 2 * slot + 1, level + 1, depth, primal);
        }
        SearchTree::Leaf { class } if level == depth => primal[slot - 1] = *class as f64,
        // A leaf above the last level: this slot does not split and its rows go on to the
        // one side, down to the leaf slot that holds the class.
        SearchTree::Leaf { .. } => place(tree, 2 * slot + 1, level + 1, depth, primal),
    }
}

/// Reads a tree back from its heap encoding of depth `depth` (see [`encode_tree`]), with
/// `n_features` features and `n_classes` classes. A point of the wrong length, a value that
/// is not a feature (branch slot) or class (leaf slot) index or -1, a split below a node
/// that does not split, or a missing class at a leaf that rows reach is an error naming the
/// slot.
pub fn decode_tree(
    primal: &[f64],
    depth: usize,
    n_features: usize,
    n_classes: usize,
) -> Result<SearchTree> {
    if depth > MAX_DEPTH {
        return Err(invalid(format!(
            "depth must be at most {MAX_DEPTH}, got {depth}"
        )));
    }
    if primal.len() != encoded_len(depth) {
        return Err(invalid(format!(
            "a tree point of depth {depth} has {} values, got {}",
            encoded_len(depth),
            primal.len()
        )));
    }
    let first_leaf = 1usize << depth;
    for (i, &v) in primal.iter().enumerate() {
        let slot = i + 1;
        let (limit, what) = if slot < first_leaf {
            (n_features, "a feature index")
        } else {
            (n_classes, "a class index")
        };
        if !(v == NO_SPLIT || (v >= 0.0 && v.fract() == 0.0 && v < limit as f64)) {
            return Err(invalid(format!(
                "tree point slot {slot} holds {v}, which is neither -1 nor {what} below {limit}"
            )));
        }
    }
    read(primal, 1, first_leaf)
}

fn read(primal: &[f64], slot: usize, first_leaf: usize) -> Result<SearchTree> {
    let value = primal[slot - 1];
    if slot >= first_leaf {
        if value == NO_SPLIT {
            return Err(invalid(format!(
                "tree point leaf slot {slot} is reached by rows but holds no class (-1)"
            )));
        }
        return Ok(SearchTree::leaf(value as usize));
    }
    if value != NO_SPLIT {
        return Ok(SearchTree::branch(
            value as usize,
            read(primal, 2 * slot, first_leaf)?,
            read(primal, 2 * slot + 1, first_leaf)?,
        ));
    }
    // No split: no slot below may split; the class is at the end of the one-side chain.
    if let Some(below) = first_split_below(primal, slot, first_leaf) {
        return Err(invalid(format!(
            "tree point slot {slot} does not split but slot {below} below it splits on \
             feature {}",
            primal[below - 1]
        )));
    }
    let mut leaf = slot;
    while leaf < first_leaf {
        leaf = 2 * leaf + 1;
    }
    read(primal, leaf, first_leaf)
}

/// The first branch slot below `slot` (in heap order) that splits.
fn first_split_below(primal: &[f64], slot: usize, first_leaf: usize) -> Option<usize> {
    let (mut lo, mut hi) = (2 * slot, 2 * slot + 1);
    while lo < first_leaf {
        if let Some(s) = (lo..=hi).find(|&s| primal[s - 1] != NO_SPLIT) {
            return Some(s);
        }
        lo *= 2;
        hi = 2 * hi + 1;
    }
    None
}

fn invalid(message: String) -> GlassboxError {
    GlassboxError::InvalidProblem(format!("tree search: {message}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> TreeSearchProblem {
        // Four rows, two features; class = x0 xor x1.
        let rows = vec![
            vec![false, false],
            vec![false, true],
            vec![true, false],
            vec![true, true],
        ];
        TreeSearchProblem::from_rows(&rows, vec![0, 1, 1, 0], 2, 2).unwrap()
    }

    #[test]
    fn evaluate_counts_misclassifications_and_penalty() {
        let p = small().with_branch_penalty(0.25).unwrap();
        let leaf = p.evaluate(&SearchTree::leaf(0)).unwrap();
        assert_eq!(leaf.objective, 2.0);
        let xor = SearchTree::branch(
            0,
            SearchTree::branch(1, SearchTree::leaf(0), SearchTree::leaf(1)),
            SearchTree::branch(1, SearchTree::leaf(1), SearchTree::leaf(0)),
        );
        let e = p.evaluate(&xor).unwrap();
        assert_eq!((e.objective, e.branch_nodes, e.depth), (0.75, 3, 2));
        let w = small()
            .with_weights(vec![1.0, 2.0, 3.0, 4.0])
            .unwrap()
            .evaluate(&SearchTree::leaf(1))
            .unwrap();
        assert_eq!(w.misclassified_weight, 5.0);
    }

    #[test]
    fn evaluate_refuses_infeasible_trees() {
        let p = small().with_max_branch_nodes(1).unwrap();
        let two = SearchTree::branch(
            0,
            SearchTree::branch(1, SearchTree::leaf(0), SearchTree::leaf(1)),
            SearchTree::leaf(1),
        );
        assert!(p
            .evaluate(&two)
            .unwrap_err()
            .to_string()
            .contains("branch nodes"));
        let p = small().with_min_leaf_size(2).unwrap();
        assert!(p
            .evaluate(&two)
            .unwrap_err()
            .to_string()
            .contains("min_leaf_size"));
        assert!(small().evaluate(&SearchTree::leaf(2)).is_err());
        let deep = SearchTree::branch(0, two.clone(), SearchTree::leaf(0));
        assert!(small()
            .evaluate(&deep)
            .unwrap_err()
            .to_string()
            .contains("depth"));
        // An empty leaf is allowed whatever the minimum size.
        let p = small().with_min_leaf_size(2).unwrap();
        let empty = SearchTree::branch(
            0,
            SearchTree::branch(0, SearchTree::leaf(0), SearchTree::leaf(1)),
            SearchTree::leaf(1),
        );
        assert_eq!(p.evaluate(&empty).unwrap().objective, 2.0);
    }

    #[test]
    fn encoding_round_trips_and_follows_oct() {
        let tree = SearchTree::branch(
            1,
            SearchTree::leaf(0),
            SearchTree::branch(0, SearchTree::leaf(1), SearchTree::leaf(0)),
        );
        let primal = encode_tree(&tree, 2).unwrap();
        // Slot 2 does not split; its class sits in leaf slot 5 (its one side).
        assert_eq!(primal, vec![1.0, -1.0, 0.0, -1.0, 0.0, 1.0, 0.0]);
        assert_eq!(decode_tree(&primal, 2, 2, 2).unwrap(), tree);
        let leaf = SearchTree::leaf(1);
        let primal = encode_tree(&leaf, 3).unwrap();
        assert_eq!(primal.len(), 15);
        assert_eq!(decode_tree(&primal, 3, 5, 2).unwrap(), leaf);
        assert!(encode_tree(&tree, 1).is_err());
    }

    #[test]
    fn decoding_refuses_malformed_points() {
        let cases: [(&[f64], &str); 5] = [
            (&[0.0, 1.0, 0.0], "has 7 values"),
            (&[2.0, -1.0, -1.0, 0.0, 1.0, 0.0, 1.0], "slot 1 holds 2"),
            (&[0.5, -1.0, -1.0, 0.0, 1.0, 0.0, 1.0], "slot 1 holds 0.5"),
            (&[-1.0, -1.0, 0.0, 0.0, 1.0, 0.0, 1.0], "slot 3 below it"),
            (&[0.0, -1.0, -1.0, 0.0, -1.0, 0.0, 1.0], "leaf slot 5"),
        ];
        for (primal, message) in cases {
            let error = decode_tree(primal, 2, 2, 2).unwrap_err().to_string();
            assert!(error.contains(message), "{error}");
        }
    }

    #[test]
    fn constructors_refuse_bad_problems() {
        let rows = vec![vec![true], vec![false]];
        let cases = [
            TreeSearchProblem::from_rows(&rows, vec![0], 2, 1).err(),
            TreeSearchProblem::from_rows(&rows, vec![0, 2], 2, 1).err(),
            TreeSearchProblem::from_rows(&rows, vec![0, 0], 1, 1).err(),
            TreeSearchProblem::from_rows(&[], vec![], 2, 1).err(),
            TreeSearchProblem::from_rows(&rows, vec![0, 1], 2, 21).err(),
            TreeSearchProblem::from_rows(&[vec![true], vec![]], vec![0, 1], 2, 1).err(),
            TreeSearchProblem::from_columns(&[vec![true]], vec![0, 1], 2, 1).err(),
        ];
        for (i, case) in cases.iter().enumerate() {
            assert!(case.is_some(), "case {i} was accepted");
        }
        let p = TreeSearchProblem::from_rows(&rows, vec![0, 1], 2, 1).unwrap();
        assert!(p.clone().with_weights(vec![1.0]).is_err());
        assert!(p.clone().with_weights(vec![1.0, -1.0]).is_err());
        assert!(p.clone().with_weights(vec![1.0, f64::NAN]).is_err());
        assert!(p.clone().with_branch_penalty(-0.1).is_err());
        assert!(p.clone().with_min_leaf_size(0).is_err());
        assert!(p.clone().with_feature_names(vec![]).is_err());
        let named = p.with_feature_names(vec!["a".into()]).unwrap();
        assert_eq!(named.feature_name(0), "a");
        assert!(named.value(0, 0) && !named.value(1, 0));
    }
}
