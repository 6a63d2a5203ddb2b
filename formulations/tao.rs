//! TAO, Tree Alternating Optimization (Carreira-Perpinan and Tavallali, NeurIPS 2018), for
//! axis-aligned classification trees: given a tree, it lowers the (weighted) 0/1 training
//! loss by optimizing one node at a time with the rest of the tree fixed.
//!
//! One pass visits the nodes bottom-up, level by level (nodes of one level have disjoint
//! rows, so they could be optimized independently):
//! - a leaf takes the majority class of the rows that reach it;
//! - a branch node looks at its *care points*: the rows that reach it and that exactly one
//!   of its two subtrees classifies correctly. Sending a care point to that subtree is the
//!   only thing the node decides; the others are misclassified (or not) either way. The
//!   node takes the axis-aligned split with the fewest misrouted care points (weighted),
//!   found exactly by sweeping every feature, and keeps its split unless one is strictly
//!   better.
//!
//! Each step minimizes the training loss over the variables of one node, so the loss never
//! increases. Passes repeat until one changes nothing, `max_passes` is reached or a stop is
//! requested (`Rows::stop`, checked before each pass).
//!
//! The node's reduced problem also has the two constant decisions, every care point to the
//! left or every one to the right (the paper's "dead branches"): when one of them misroutes
//! strictly less weight than the best split, the node is replaced by the subtree it keeps,
//! which is the paper's pruning of dead branches done at once. Without them the node step
//! would not be exact (a node whose care points nearly all want one side would keep a split
//! that misroutes some of them), and TAO could stop above the loss it reaches with them.
//!
//! Choices where the paper leaves room: candidate thresholds are midpoints between
//! consecutive distinct values of the care points (the current split is always kept as a
//! candidate); ties go to the lower feature, then the lower threshold, and a split to a
//! constant decision with the same loss; a leaf no row reaches keeps its class; trees
//! whose type cannot drop a subtree ([`TaoTree::collapse`] returns false: the oblique
//! trees) keep their structure.
//!
//! Depends on the core and on `cart` (the tree type, and CART for the starting tree).

use crate::cart::grow::{Criterion, Targets};
use crate::cart::tree::{argmax, AxisSplit, AxisTree};
use crate::cart::CartConfig;
use crate::cart::{TreeModel, TreeTask};
use glassbox_core::formulation::{FormulationInfo, ParamSpec};
use glassbox_core::learner::{HeuristicFit, HeuristicLearner, TrainingSet};
use glassbox_core::{GlassboxError, Interrupt, Result};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The name configs and saved models use.
pub const NAME: &str = "tao";

/// Values closer than this count as equal when placing thresholds (as in CART).
const FEATURE_THRESHOLD: f64 = 1e-7;

/// The `[formulation]` table of TAO: the tree it starts from is CART with these parameters
/// (or the saved tree of `multistart.warm_start`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TaoConfig {
    /// Criterion of the starting CART tree.
    pub criterion: Criterion,
    /// Depth of the starting CART tree.
    pub depth: Option<usize>,
    /// Minimum rows per leaf of the starting CART tree.
    pub min_leaf: usize,
    /// Maximum TAO passes.
    pub max_passes: usize,
}

impl Default for TaoConfig {
    fn default() -> Self {
        TaoConfig {
            criterion: Criterion::Gini,
            depth: None,
            min_leaf: 1,
            max_passes: 50,
        }
    }
}

/// The description `glassbox formulations` prints.
pub fn info() -> FormulationInfo {
    const PARAMS: &[ParamSpec] = &[
        ParamSpec {
            name: "criterion",
            default: "\"gini\"",
            help: "criterion of the starting CART tree (gini | entropy)",
        },
        ParamSpec {
            name: "depth",
            default: "",
            help: "depth of the starting CART tree; none for no limit",
        },
        ParamSpec {
            name: "min_leaf",
            default: "1",
            help: "minimum rows per leaf of the starting CART tree",
        },
        ParamSpec {
            name: "max_passes",
            default: "50",
            help: "maximum bottom-up passes (stops earlier when a pass changes nothing)",
        },
    ];
    FormulationInfo {
        name: NAME,
        kind: "heuristic",
        description: "TAO (Carreira-Perpinan & Tavallali 2018): alternating optimization of the 0/1 loss of an axis-aligned tree over its care points, from CART or a saved tree",
        parameters: PARAMS,
    }
}

impl TaoConfig {
    /// The CART config of the starting tree.
    pub fn cart(&self) -> CartConfig {
        CartConfig {
            criterion: self.criterion,
            depth: self.depth,
            min_leaf: self.min_leaf,
            min_split: 2,
            ccp_alpha: 0.0,
            cp: None,
        }
    }

    /// Checks the parameters; TAO minimizes a classification loss.
    pub fn check(&self, regression: bool) -> Result<()> {
        if regression {
            return Err(GlassboxError::formulation(
                NAME,
                "TAO minimizes the 0/1 loss: it needs a classification target (criterion gini or entropy)",
            ));
        }
        if self.max_passes == 0 {
            return Err(GlassboxError::formulation(
                NAME,
                "max_passes must be at least 1",
            ));
        }
        self.cart()
            .check(false)
            .map_err(|e| GlassboxError::formulation(NAME, e.to_string()))
    }
}

// ---------------------------------------------------------------------------------------
// The algorithm, for any tree whose nodes route rows left or right

/// A tree TAO can optimize: its nodes route rows, its leaves hold class fractions, and a
/// branch node's decision can be replaced. Implemented by the axis-aligned
/// [`AxisTree`] and by the oblique trees of `tao_oblique`.
pub trait TaoTree {
    /// A branch node's decision.
    type Split;
    /// Nodes in the arena (reachable or not).
    fn node_count(&self) -> usize;
    /// Reachable nodes with their depth, breadth-first.
    fn nodes_by_depth(&self) -> Vec<(usize, usize)>;
    /// The children of branch node `t`; none for a leaf.
    fn children(&self, t: usize) -> Option<(usize, usize)>;
    /// Whether row `i` of `x` goes left at branch node `t`.
    fn goes_left(&self, t: usize, x: &DMatrix<f64>, i: usize) -> bool;
    /// The value (class fractions) of node `t`.
    fn value(&self, t: usize) -> &[f64];
    /// Sets the value of node `t`.
    fn set_value(&mut self, t: usize, value: Vec<f64>);
    /// Sets the decision of branch node `t`.
    fn set_split(&mut self, t: usize, split: Self::Split);
    /// Records how many rows (and what weight) reach node `t`.
    fn set_counts(&mut self, t: usize, rows: usize, weight: f64);
    /// Replaces branch node `t` by its left (or right) subtree, the other one dropped;
    /// whether the tree type can (the default cannot, and leaves the tree as it is).
    fn collapse(&mut self, _t: usize, _keep_left: bool) -> bool {
        false
    }

    /// The class of node `t` (its largest fraction).
    fn class(&self, t: usize) -> usize {
        argmax(self.value(t))
    }

    /// The leaf row `i` reaches from node `t`.
    fn leaf_from(&self, mut t: usize, x: &DMatrix<f64>, i: usize) -> usize {
        while let Some((left, right)) = self.children(t) {
            t = if self.goes_left(t, x, i) { left } else { right };
        }
        t
    }
}

/// The care points of a branch node: rows that exactly one of its subtrees classifies
/// correctly, with the side that does and the row's weight.
#[derive(Clone, Debug, Default)]
pub struct CarePoints {
    /// Row indices.
    pub rows: Vec<usize>,
    /// Whether each should go left.
    pub left: Vec<bool>,
    /// Their weights.
    pub weights: Vec<f64>,
    /// The weight the node's current decision misroutes.
    pub current_errors: f64,
}

/// The per-node problem of TAO: a decision for a branch node that misroutes less weight of
/// its care points than the current one, or none.
pub trait NodeOptimizer<T: TaoTree> {
    /// A strictly better decision for node `t`, or none.
    fn improve(&self, tree: &T, t: usize, care: &CarePoints) -> Option<T::Split>;
}

/// A training set of rows with classes, for any TAO variant.
#[derive(Clone, Copy, Debug)]
pub struct Rows<'a> {
    /// Features.
    pub x: &'a DMatrix<f64>,
    /// Classes in `0..n_classes`.
    pub y: &'a [usize],
    /// K.
    pub n_classes: usize,
    /// A stop request, checked before each pass (a pass is short): once it is made,
    /// [`Rows::optimize`] returns the tree as the passes before it left it.
    pub stop: Option<&'a Interrupt>,
}

impl Rows<'_> {
    /// The weighted number of rows `tree` misclassifies.
    pub fn errors<T: TaoTree>(&self, tree: &T, weights: &[f64]) -> f64 {
        (0..self.x.nrows())
            .filter(|&i| weights[i] > 0.0)
            .filter(|&i| tree.class(tree.leaf_from(0, self.x, i)) != self.y[i])
            .map(|i| weights[i])
            .sum::<f64>()
            // (+ 0.0: an empty f64 sum is -0.0, which messages would print as "-0")
            + 0.0
    }

    /// The rows (of positive weight) reaching each node.
    fn reach<T: TaoTree>(&self, tree: &T, weights: &[f64]) -> Vec<Vec<usize>> {
        let mut reach = vec![Vec::new(); tree.node_count()];
        for i in (0..self.x.nrows()).filter(|&i| weights[i] > 0.0) {
            let mut t = 0;
            reach[t].push(i);
            while let Some((left, right)) = tree.children(t) {
                t = if tree.goes_left(t, self.x, i) {
                    left
                } else {
                    right
                };
                reach[t].push(i);
            }
        }
        reach
    }

    /// TAO on `tree` with `optimizer` over the rows of positive `weights` (see the module
    /// comment), then [`Rows::refresh`].
    pub fn optimize<T: TaoTree>(
        &self,
        tree: &mut T,
        optimizer: &impl NodeOptimizer<T>,
        weights: &[f64],
        max_passes: usize,
    ) -> TaoOutcome {
        let errors_before = self.errors(tree, weights);
        let mut passes = 0;
        let mut converged = false;
        let mut interrupted = false;
        while passes < max_passes {
            if self.stop.is_some_and(Interrupt::requested) {
                interrupted = true;
                break;
            }
            passes += 1;
            if !self.pass(tree, optimizer, weights) {
                converged = true;
                break;
            }
        }
        self.refresh(tree, weights);
        TaoOutcome {
            passes,
            converged,
            interrupted,
            errors_before,
            errors_after: self.errors(tree, weights),
        }
    }

    /// One bottom-up pass; whether anything changed.
    fn pass<T: TaoTree>(
        &self,
        tree: &mut T,
        optimizer: &impl NodeOptimizer<T>,
        weights: &[f64],
    ) -> bool {
        let reach = self.reach(tree, weights);
        let mut order = tree.nodes_by_depth();
        // Deepest level first; within a level, any order (rows are disjoint).
        order.sort_by_key(|&(t, d)| (std::cmp::Reverse(d), t));
        let mut changed = false;
        for (t, _) in order {
            let rows = &reach[t];
            if rows.is_empty() {
                continue;
            }
            match tree.children(t) {
                None => {
                    let counts = self.class_weights(rows, weights);
                    let old = tree.class(t);
                    let new = argmax(&counts);
                    // Keep the current class on a tie (no change without a strict gain).
                    let unset = tree.value(t).len() != self.n_classes;
                    if unset || counts[new] > counts[old] {
                        let total: f64 = counts.iter().sum();
                        tree.set_value(t, counts.iter().map(|c| c / total).collect());
                        changed = true;
                    }
                }
                Some((left, right)) => {
                    let mut care = CarePoints::default();
                    for &i in rows {
                        let ok_left = tree.class(tree.leaf_from(left, self.x, i)) == self.y[i];
                        let ok_right = tree.class(tree.leaf_from(right, self.x, i)) == self.y[i];
                        if ok_left != ok_right {
                            care.rows.push(i);
                            care.left.push(ok_left);
                            care.weights.push(weights[i]);
                            if tree.goes_left(t, self.x, i) != ok_left {
                                care.current_errors += weights[i];
                            }
                        }
                    }
                    if care.current_errors <= 0.0 {
                        continue;
                    }
                    if let Some(split) = optimizer.improve(tree, t, &care) {
                        tree.set_split(t, split);
                        changed = true;
                    }
                    // The constant decisions (see the module comment).
                    let (mut want_left, mut want_right, mut misrouted) = (0.0, 0.0, 0.0);
                    for ((&i, &left), &w) in care.rows.iter().zip(&care.left).zip(&care.weights) {
                        if left {
                            want_left += w;
                        } else {
                            want_right += w;
                        }
                        if tree.goes_left(t, self.x, i) != left {
                            misrouted += w;
                        }
                    }
                    let keep_left = want_right <= want_left;
                    if want_right.min(want_left) < misrouted && tree.collapse(t, keep_left) {
                        changed = true;
                    }
                }
            }
        }
        changed
    }

    fn class_weights(&self, rows: &[usize], weights: &[f64]) -> Vec<f64> {
        let mut counts = vec![0.0; self.n_classes];
        for &i in rows {
            counts[self.y[i]] += weights[i];
        }
        counts
    }

    /// Recomputes every node's rows, weight and value from the rows with positive
    /// `weights`; a leaf keeps the class TAO chose (its fractions follow the rows), a node
    /// no row reaches keeps its value, or takes its parent's if it has none (a leaf a
    /// crossover created).
    pub fn refresh<T: TaoTree>(&self, tree: &mut T, weights: &[f64]) {
        let reach = self.reach(tree, weights);
        for (t, rows) in reach.iter().enumerate() {
            let counts = self.class_weights(rows, weights);
            let total: f64 = counts.iter().sum();
            tree.set_counts(t, rows.len(), total);
            let unset = tree.value(t).len() != self.n_classes;
            let is_branch = tree.children(t).is_some();
            if total > 0.0 && (is_branch || unset || argmax(&counts) == tree.class(t)) {
                tree.set_value(t, counts.iter().map(|c| c / total).collect());
            }
        }
        for (t, _) in tree.nodes_by_depth() {
            if let Some((left, right)) = tree.children(t) {
                for c in [left, right] {
                    if tree.value(c).len() != self.n_classes {
                        let v = tree.value(t).to_vec();
                        tree.set_value(c, v);
                    }
                }
            }
        }
    }
}

/// What a TAO run did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TaoOutcome {
    /// Passes made.
    pub passes: usize,
    /// Whether the last pass changed nothing (a local optimum over single nodes).
    pub converged: bool,
    /// Whether a stop request ended it (before `max_passes` and convergence).
    pub interrupted: bool,
    /// Weighted training errors before and after.
    pub errors_before: f64,
    /// See `errors_before`.
    pub errors_after: f64,
}

impl TaoOutcome {
    /// How it ended, as a fit's note says: "converged", "pass limit" or "stopped on request".
    pub fn ending(&self) -> &'static str {
        if self.interrupted {
            "stopped on request"
        } else if self.converged {
            "converged"
        } else {
            "pass limit"
        }
    }
}

// ---------------------------------------------------------------------------------------
// Axis-aligned trees

impl TaoTree for AxisTree {
    type Split = AxisSplit;

    fn node_count(&self) -> usize {
        self.nodes.len()
    }

    fn nodes_by_depth(&self) -> Vec<(usize, usize)> {
        self.bfs_order()
    }

    fn children(&self, t: usize) -> Option<(usize, usize)> {
        self.nodes[t].branch.map(|b| (b.left, b.right))
    }

    fn goes_left(&self, t: usize, x: &DMatrix<f64>, i: usize) -> bool {
        self.nodes[t]
            .branch
            .is_some_and(|b| b.split.goes_left(x, i))
    }

    fn value(&self, t: usize) -> &[f64] {
        &self.nodes[t].value
    }

    fn set_value(&mut self, t: usize, value: Vec<f64>) {
        self.nodes[t].value = value;
    }

    fn set_split(&mut self, t: usize, split: AxisSplit) {
        if let Some(b) = &mut self.nodes[t].branch {
            b.split = split;
        }
    }

    fn set_counts(&mut self, t: usize, rows: usize, weight: f64) {
        let node = &mut self.nodes[t];
        node.n_samples = rows;
        node.weight = weight;
        // The growth criterion's impurity no longer describes the node.
        node.impurity = 0.0;
    }

    /// The kept child's node moves up into `t`; the other subtree becomes unreachable
    /// ([`Tao::optimize`] compacts the arena).
    fn collapse(&mut self, t: usize, keep_left: bool) -> bool {
        let Some(b) = self.nodes[t].branch else {
            return false;
        };
        self.nodes[t] = self.nodes[if keep_left { b.left } else { b.right }].clone();
        true
    }
}

/// TAO for axis-aligned trees on one training set: the rows, their classes, and each
/// feature's rows sorted by value (computed once, shared by every tree optimized on these
/// rows). The node problem is solved exactly: every feature is swept for the threshold
/// that misroutes the least care-point weight.
pub struct Tao<'a> {
    rows: Rows<'a>,
    sorted: Vec<Vec<usize>>,
}

impl<'a> Tao<'a> {
    /// Prepares TAO on rows `x` with classes `y` in `0..n_classes`.
    pub fn new(x: &'a DMatrix<f64>, y: &'a [usize], n_classes: usize) -> Self {
        let sorted = (0..x.ncols())
            .map(|j| {
                let mut rows: Vec<usize> = (0..x.nrows()).collect();
                rows.sort_by(|&a, &b| x[(a, j)].total_cmp(&x[(b, j)]).then(a.cmp(&b)));
                rows
            })
            .collect();
        Tao {
            rows: Rows {
                x,
                y,
                n_classes,
                stop: None,
            },
            sorted,
        }
    }

    /// The same, ending an [`Tao::optimize`] before a pass once `stop` is requested.
    pub fn with_stop(mut self, stop: Option<&'a Interrupt>) -> Self {
        self.rows.stop = stop;
        self
    }

    /// The weighted number of rows `tree` misclassifies.
    pub fn errors(&self, tree: &AxisTree, weights: &[f64]) -> f64 {
        self.rows.errors(tree, weights)
    }

    /// Optimizes `tree` on the rows with positive `weights`; the result is compact
    /// (subtrees TAO dropped are gone from the arena).
    pub fn optimize(&self, tree: &mut AxisTree, weights: &[f64], max_passes: usize) -> TaoOutcome {
        let outcome = self.rows.optimize(tree, self, weights, max_passes);
        tree.compact();
        outcome
    }

    /// Recomputes node statistics (see [`Rows::refresh`]).
    pub fn refresh(&self, tree: &mut AxisTree, weights: &[f64]) {
        self.rows.refresh(tree, weights)
    }
}

impl NodeOptimizer<AxisTree> for Tao<'_> {
    fn improve(&self, _tree: &AxisTree, _t: usize, care: &CarePoints) -> Option<AxisSplit> {
        let x = self.rows.x;
        // target[i] = Some((goes left, weight)) for the care points.
        let mut target: Vec<Option<(bool, f64)>> = vec![None; x.nrows()];
        let mut total_left = 0.0;
        for ((&i, &left), &w) in care.rows.iter().zip(&care.left).zip(&care.weights) {
            target[i] = Some((left, w));
            if left {
                total_left += w;
            }
        }
        let mut best: Option<(f64, AxisSplit)> = None;
        for (j, sorted) in self.sorted.iter().enumerate() {
            // Sweep the care points in order of feature j: errors of "left iff x_j <= v"
            // = right-targets on the left + left-targets on the right.
            let (mut right_on_left, mut left_on_left) = (0.0, 0.0);
            let mut previous: Option<f64> = None;
            for &i in sorted {
                let Some((goes_left, w)) = target[i] else {
                    continue;
                };
                let v = x[(i, j)];
                if let Some(prev) = previous {
                    if v > prev + FEATURE_THRESHOLD {
                        let errors = right_on_left + (total_left - left_on_left);
                        if errors < care.current_errors && best.is_none_or(|(e, _)| errors < e) {
                            let mut threshold = 0.5 * (prev + v);
                            if threshold >= v {
                                threshold = prev;
                            }
                            best = Some((
                                errors,
                                AxisSplit {
                                    feature: j,
                                    threshold,
                                },
                            ));
                        }
                    }
                }
                if goes_left {
                    left_on_left += w;
                } else {
                    right_on_left += w;
                }
                previous = Some(v);
            }
        }
        best.map(|(_, s)| s)
    }
}

/// Grows the starting CART tree of `config` on the classification rows `x`, `y`.
pub fn starting_tree(
    config: &TaoConfig,
    x: &DMatrix<f64>,
    y: &[usize],
    n_classes: usize,
) -> AxisTree {
    config
        .cart()
        .fit_tree(x, Targets::Classes { y, n_classes }, &vec![1.0; x.nrows()])
}

/// TAO as a heuristic learner: from CART's tree (or the saved tree of
/// `multistart.warm_start`), alternating optimization of the nodes until no pass improves.
impl HeuristicLearner for TaoConfig {
    type Model = TreeModel;

    fn name(&self) -> &'static str {
        NAME
    }
    fn is_regression(&self) -> bool {
        self.criterion.is_regression()
    }
    fn depth(&self) -> Option<usize> {
        self.depth
    }
    fn check(&self, regression: bool, features: usize) -> Result<()> {
        crate::heuristic::check_features(NAME, features)?;
        TaoConfig::check(self, regression)
    }
    fn refines_a_model(&self) -> bool {
        true
    }
    fn load_start(&self, path: &Path, features: usize, n_classes: usize) -> Result<TreeModel> {
        let model = TreeModel::load(path)?;
        let classes = match &model.task {
            TreeTask::Classification { classes } => classes.len(),
            TreeTask::Regression { .. } => 0,
        };
        if classes != n_classes || model.feature_names.len() != features {
            return Err(GlassboxError::formulation(
                NAME,
                format!(
                    "the warm-start tree has {} features and {classes} classes, the data {features} and {n_classes}",
                    model.feature_names.len()
                ),
            ));
        }
        // TAO refines the tree it starts from, whose depth is the model's.
        if let Some(depth) = self.depth.filter(|&d| d != model.tree.depth()) {
            return Err(GlassboxError::formulation(
                NAME,
                format!(
                    "depth = {depth}, but the warm-start tree has depth {}: TAO refines the \
                     tree it starts from (leave depth out to refine it as it is)",
                    model.tree.depth()
                ),
            ));
        }
        Ok(model)
    }
    fn fit(
        &self,
        data: &TrainingSet<'_>,
        _seed: u64,
        start: Option<&TreeModel>,
        _solver: Option<(&dyn glassbox_core::NlpSolver, &glassbox_core::SolveOptions)>,
    ) -> Result<HeuristicFit<TreeModel>> {
        let (y, n_classes) = data.classes(NAME)?;
        let mut tree = match start {
            Some(m) => m.tree.clone(),
            None => starting_tree(self, data.x, y, n_classes),
        };
        let optimizer = Tao::new(data.x, y, n_classes).with_stop(data.interrupt);
        let outcome = optimizer.optimize(&mut tree, &vec![1.0; data.x.nrows()], self.max_passes);
        Ok(HeuristicFit {
            model: crate::heuristic::tree_model(data, NAME, self.criterion, tree),
            iterations: outcome.passes as u64,
            hit_time_limit: false,
            note: format!(
                "{} after {} passes; training errors {} -> {}",
                outcome.ending(),
                outcome.passes,
                outcome.errors_before,
                outcome.errors_after
            ),
        })
    }
    fn sparsity(&self, model: &TreeModel) -> (f64, f64) {
        model.sparsity()
    }
}
