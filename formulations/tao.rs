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
//! increases. Passes repeat until one changes nothing or `max_passes` is reached.
//!
//! Choices where the paper leaves room: candidate thresholds are midpoints between
//! consecutive distinct values of the care points (a split sending every care point to one
//! side is not considered; the current split is always kept as a candidate); ties go to
//! the lower feature, then the lower threshold; a leaf no row reaches keeps its class; the
//! tree's structure is kept (no pruning of nodes that become dead).
//!
//! Depends on the core and on `cart` (the tree type, and CART for the starting tree).

use crate::formulation::{FormulationInfo, ParamSpec};
use crate::formulations::cart::grow::{Criterion, Targets};
use crate::formulations::cart::tree::{argmax, AxisSplit, AxisTree};
use crate::formulations::cart::CartConfig;
use crate::{GlassboxError, Result};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

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

/// TAO on one training set: the rows, their classes, and each feature's rows sorted by
/// value (computed once, shared by every tree optimized on these rows).
pub struct Tao<'a> {
    x: &'a DMatrix<f64>,
    y: &'a [usize],
    n_classes: usize,
    sorted: Vec<Vec<usize>>,
}

/// What a TAO run did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TaoOutcome {
    /// Passes made.
    pub passes: usize,
    /// Whether the last pass changed nothing (a local optimum over single nodes).
    pub converged: bool,
    /// Weighted training errors before and after.
    pub errors_before: f64,
    /// See `errors_before`.
    pub errors_after: f64,
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
            x,
            y,
            n_classes,
            sorted,
        }
    }

    /// The rows.
    pub fn x(&self) -> &DMatrix<f64> {
        self.x
    }

    /// The weighted number of rows `tree` misclassifies.
    pub fn errors(&self, tree: &AxisTree, weights: &[f64]) -> f64 {
        (0..self.x.nrows())
            .filter(|&i| weights[i] > 0.0)
            .filter(|&i| tree.nodes[tree.leaf_of(self.x, i)].class() != self.y[i])
            .map(|i| weights[i])
            .sum()
    }

    /// Optimizes `tree` on the rows with positive `weights` (see the module comment), then
    /// refreshes every node's statistics on those rows.
    pub fn optimize(&self, tree: &mut AxisTree, weights: &[f64], max_passes: usize) -> TaoOutcome {
        let errors_before = self.errors(tree, weights);
        let mut passes = 0;
        let mut converged = false;
        while passes < max_passes {
            passes += 1;
            if !self.pass(tree, weights) {
                converged = true;
                break;
            }
        }
        self.refresh(tree, weights);
        TaoOutcome {
            passes,
            converged,
            errors_before,
            errors_after: self.errors(tree, weights),
        }
    }

    /// The rows (of positive weight) reaching each node.
    fn reach(&self, tree: &AxisTree, weights: &[f64]) -> Vec<Vec<usize>> {
        let mut reach = vec![Vec::new(); tree.nodes.len()];
        for i in (0..self.x.nrows()).filter(|&i| weights[i] > 0.0) {
            let mut t = 0;
            reach[t].push(i);
            while let Some(b) = &tree.nodes[t].branch {
                t = if b.split.goes_left(self.x, i) {
                    b.left
                } else {
                    b.right
                };
                reach[t].push(i);
            }
        }
        reach
    }

    /// One bottom-up pass; whether anything changed.
    fn pass(&self, tree: &mut AxisTree, weights: &[f64]) -> bool {
        let reach = self.reach(tree, weights);
        let mut order = tree.bfs_order();
        // Deepest level first; within a level, any order (rows are disjoint).
        order.sort_by_key(|&(t, d)| (std::cmp::Reverse(d), t));
        let mut changed = false;
        for (t, _) in order {
            let rows = &reach[t];
            if rows.is_empty() {
                continue;
            }
            match tree.nodes[t].branch {
                None => {
                    let mut counts = vec![0.0; self.n_classes];
                    for &i in rows {
                        counts[self.y[i]] += weights[i];
                    }
                    let old = tree.nodes[t].class();
                    let new = argmax(&counts);
                    // Keep the current class on a tie (no change without a strict gain).
                    let unset = tree.nodes[t].value.len() != self.n_classes;
                    if unset || counts[new] > counts[old] {
                        let total: f64 = counts.iter().sum();
                        tree.nodes[t].value = counts.iter().map(|c| c / total).collect();
                        changed = true;
                    }
                }
                Some(b) => {
                    if let Some(split) =
                        self.best_split(tree, b.split, b.left, b.right, rows, weights)
                    {
                        tree.nodes[t].branch.as_mut().expect("a branch").split = split;
                        changed = true;
                    }
                }
            }
        }
        changed
    }

    /// A split strictly better than `current` on the care points of a branch node with
    /// children `left`, `right` reached by `rows`, or none.
    fn best_split(
        &self,
        tree: &AxisTree,
        current: AxisSplit,
        left: usize,
        right: usize,
        rows: &[usize],
        weights: &[f64],
    ) -> Option<AxisSplit> {
        // care[i] = Some(true) when row i should go left, Some(false) right.
        let mut care: Vec<Option<bool>> = vec![None; self.x.nrows()];
        let mut total_left = 0.0;
        let mut current_errors = 0.0;
        let mut any = false;
        for &i in rows {
            let ok_left = tree.nodes[tree.leaf_from(left, self.x, i)].class() == self.y[i];
            let ok_right = tree.nodes[tree.leaf_from(right, self.x, i)].class() == self.y[i];
            if ok_left != ok_right {
                care[i] = Some(ok_left);
                any = true;
                if ok_left {
                    total_left += weights[i];
                }
                if current.goes_left(self.x, i) != ok_left {
                    current_errors += weights[i];
                }
            }
        }
        if !any || current_errors <= 0.0 {
            return None;
        }
        let mut best: Option<(f64, AxisSplit)> = None;
        for (j, sorted) in self.sorted.iter().enumerate() {
            // Sweep the care points in order of feature j: errors of "left iff x_j <= v"
            // = right-targets on the left + left-targets on the right.
            let (mut right_on_left, mut left_on_left) = (0.0, 0.0);
            let mut previous: Option<f64> = None;
            for &i in sorted {
                let Some(goes_left) = care[i] else { continue };
                let v = self.x[(i, j)];
                if let Some(prev) = previous {
                    if v > prev + FEATURE_THRESHOLD {
                        let errors = right_on_left + (total_left - left_on_left);
                        if errors < current_errors && best.is_none_or(|(e, _)| errors < e) {
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
                    left_on_left += weights[i];
                } else {
                    right_on_left += weights[i];
                }
                previous = Some(v);
            }
        }
        best.map(|(_, s)| s)
    }

    /// Recomputes every node's rows, weight and value from the rows with positive
    /// `weights`; a node no row reaches keeps its value.
    pub fn refresh(&self, tree: &mut AxisTree, weights: &[f64]) {
        let reach = self.reach(tree, weights);
        for (t, rows) in reach.iter().enumerate() {
            let node = &mut tree.nodes[t];
            node.n_samples = rows.len();
            let mut counts = vec![0.0; self.n_classes];
            for &i in rows {
                counts[self.y[i]] += weights[i];
            }
            let total: f64 = counts.iter().sum();
            node.weight = total;
            node.impurity = 0.0;
            if total > 0.0 && node.branch.is_some() {
                node.value = counts.iter().map(|c| c / total).collect();
            } else if total > 0.0
                && (node.value.len() != self.n_classes || argmax(&counts) == node.class())
            {
                // A leaf keeps the class TAO chose; its fractions follow the rows.
                node.value = counts.iter().map(|c| c / total).collect();
            }
        }
        // A node without rows and without a value (a leaf a crossover created) predicts
        // what its parent would.
        for (t, _) in tree.bfs_order() {
            if let Some(b) = tree.nodes[t].branch {
                for c in [b.left, b.right] {
                    if tree.nodes[c].value.len() != self.n_classes {
                        tree.nodes[c].value = tree.nodes[t].value.clone();
                    }
                }
            }
        }
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
