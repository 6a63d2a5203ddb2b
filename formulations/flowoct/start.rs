//! FlowOCT's MIP starts: trees laid into the flow variables by
//! [`FlowOctProblem::point_of_tree`].
//!
//! - [`greedy_tree`]: OCT's greedy Gini tree ([`crate::oct::greedy`]) grown on
//!   the binary features, then pruned bottom-up for FlowOCT's objective: a node keeps its
//!   split only when its subtree scores more than predicting its majority class there
//!   (`(1 - lambda)` per correct point against `lambda` per split).
//! - [`tree_of_model`]: a fitted tree (a saved FlowOCT model, or the previous cell of a warm
//!   path) mapped onto this problem's binary features.
//!
//! Depends on the core, the problem and OCT's greedy tree.

use super::binarize::BinaryFeature;
use super::problem::{argmax_count, FlowNode, FlowOctProblem, FlowTree};
use crate::oct::{greedy, OctModel};
use glassbox_core::data::MinMaxScaler;
use glassbox_core::{GlassboxError, Result};

/// The greedy Gini tree on the problem's binary features, pruned for its objective, with
/// majority labels.
pub fn greedy_tree(problem: &FlowOctProblem) -> FlowTree {
    let depth = problem.params.depth;
    let splits = greedy::greedy_tree(&problem.bits, &problem.y, problem.classes, depth, 1, 0.0);
    // A split (f, v) of the greedy tree sends `bits >= v` right, v = 1 on 0/1 columns.
    let branches = problem.num_branches();
    let mut nodes = vec![FlowNode::Unreachable; 2 * branches + 1];
    for t in 0..nodes.len() {
        let reached = t == 0 || matches!(nodes[(t - 1) / 2], FlowNode::Branch(_));
        if !reached {
            continue;
        }
        nodes[t] = match splits.get(t).copied().flatten() {
            Some((f, _)) if t < branches => FlowNode::Branch(f),
            _ => FlowNode::Predict(0),
        };
    }
    let tree = problem.with_majority_labels(FlowTree { nodes });
    prune(problem, tree)
}

/// Prunes `tree` bottom-up: a branch node whose subtree scores no more than predicting the
/// majority class of its points becomes a prediction node (ties go to the smaller tree).
pub fn prune(problem: &FlowOctProblem, tree: FlowTree) -> FlowTree {
    let lambda = problem.params.lambda;
    let total = tree.nodes.len();
    // Class counts of the points that pass through each node.
    let mut counts = vec![vec![0usize; problem.classes]; total];
    for i in 0..problem.y.len() {
        let mut t = problem.predicting_node(&tree, i);
        loop {
            counts[t][problem.y[i]] += 1;
            if t == 0 {
                break;
            }
            t = (t - 1) / 2;
        }
    }
    let mut nodes = tree.nodes;
    // Score of the subtree at each node, children before parents.
    let mut score = vec![0.0; total];
    for t in (0..total).rev() {
        let majority = argmax_count(&counts[t]);
        let predict = (1.0 - lambda) * counts[t][majority] as f64;
        match nodes[t] {
            FlowNode::Branch(_) => {
                let split = score[2 * t + 1] + score[2 * t + 2] - lambda;
                if split > predict + 1e-9 {
                    score[t] = split;
                } else {
                    score[t] = predict;
                    nodes[t] = FlowNode::Predict(majority);
                }
            }
            FlowNode::Predict(k) => score[t] = (1.0 - lambda) * counts[t][k] as f64,
            FlowNode::Unreachable => {}
        }
    }
    // Below a node that now predicts, nothing is reached.
    for t in 1..total {
        if !matches!(nodes[(t - 1) / 2], FlowNode::Branch(_)) {
            nodes[t] = FlowNode::Unreachable;
        }
    }
    FlowTree { nodes }
}

/// The tree of a fitted model on this problem: each split `x_j < threshold` (user units
/// through the model's scaler) becomes the problem's binary feature on column j whose cut
/// is the smallest at or above the threshold in this problem's scaling (the same routing of
/// the training rows when that cut exists); a split with no such feature, and a node that
/// does not split, predict. Labels are the majority of the points each node receives.
pub fn tree_of_model(
    model: &OctModel,
    problem: &FlowOctProblem,
    scaler: &MinMaxScaler,
) -> Result<FlowTree> {
    let bad = |m: String| GlassboxError::formulation(super::NAME, m);
    if model.depth != problem.params.depth {
        return Err(bad(format!(
            "the warm-start model has depth {}, the problem depth {}",
            model.depth, problem.params.depth
        )));
    }
    if model.scaler.n_features() != problem.x.ncols() {
        return Err(bad(format!(
            "the warm-start model has {} features, the data {}",
            model.scaler.n_features(),
            problem.x.ncols()
        )));
    }
    let branches = problem.num_branches();
    let mut nodes = vec![FlowNode::Unreachable; 2 * branches + 1];
    for t in 0..nodes.len() {
        let reached = t == 0 || matches!(nodes[(t - 1) / 2], FlowNode::Branch(_));
        if !reached {
            continue;
        }
        let split = model.nodes.get(t).cloned().flatten();
        let feature = split.and_then(|split| match split.weights.as_slice() {
            &[(j, w)] if w > 0.0 => {
                let user = model.user_threshold(j, w, split.threshold);
                let scaled = (user - scaler.min[j]) / scaler.scale_of(j);
                nearest_cut(&problem.features, j, scaled)
            }
            _ => None,
        });
        nodes[t] = match feature {
            Some(f) if t < branches => FlowNode::Branch(f),
            _ => FlowNode::Predict(0),
        };
    }
    Ok(problem.with_majority_labels(FlowTree { nodes }))
}

/// The feature on `column` with the smallest cut at or above `threshold` (within 1e-9).
fn nearest_cut(features: &[BinaryFeature], column: usize, threshold: f64) -> Option<usize> {
    features
        .iter()
        .enumerate()
        .filter(|(_, f)| f.column == column && f.value >= threshold - 1e-9)
        .min_by(|a, b| a.1.value.total_cmp(&b.1.value))
        .map(|(f, _)| f)
}
