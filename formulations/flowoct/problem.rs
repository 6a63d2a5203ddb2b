//! The MILP of FlowOCT, the flow-based formulation of Aghaei, Gómez and Vayanos, "Strong
//! optimal classification trees" (2021), problem (4), on binary features
//! ([`super::binarize`]).
//!
//! Every point i is a unit of flow from a source s into the root, down the tree through the
//! arcs that agree with its features, to a sink t; it may leave for the sink at a node that
//! predicts its class. The flow that reaches the sink counts the correctly classified
//! points. Nodes are in heap order (root 0, children `2n + 1` left and `2n + 2` right):
//! branch nodes B = `0..2^D - 1`, leaves L = the next `2^D`; A(n) are the ancestors of n.
//!
//! ```text
//! max  (1 - lambda) sum_i sum_{n in B u L} z^i_{n,t}  -  lambda sum_{n in B} sum_f b_{n,f}
//!      (written as (1 - lambda) sum_i z^i_{s,1} - ..., equal by (4d)-(4e); see below)
//! (4b) sum_f b_{n,f} + p_n + sum_{m in A(n)} p_m = 1          n in B
//! (4c) p_n + sum_{m in A(n)} p_m = 1                          n in L
//! (4d) z^i_{a(n),n} = z^i_{n,l(n)} + z^i_{n,r(n)} + z^i_{n,t}  n in B, all i
//! (4e) z^i_{a(n),n} = z^i_{n,t}                                n in L, all i
//! (4f) z^i_{s,1} <= 1                                          all i
//! (4g) z^i_{n,l(n)} <= sum_{f: x^i_f = 0} b_{n,f}              n in B, all i
//! (4h) z^i_{n,r(n)} <= sum_{f: x^i_f = 1} b_{n,f}              n in B, all i
//! (4i) z^i_{n,t} <= w_{n,y^i}                                  n in B u L, all i
//! (4j) sum_k w_{n,k} = p_n                                     n in B u L
//!      b, p, w binary; z >= 0
//! ```
//!
//! `b_{n,f}`: node n branches on feature f; `p_n`: node n predicts (no split below it);
//! `w_{n,k}`: node n predicts class k; `z^i_{a(n),n}` (column `inflow[i,n]`, the arc into n,
//! from s for the root) and `z^i_{n,t}` (column `sink[i,n]`). With lambda in [0, 1] the
//! objective is ODTlearn's `(1 - _lambda) * correct - _lambda * splits`, so the two compare
//! directly.
//!
//! Two choices of ours, each with the same integer points, the same LP relaxation and the
//! same objective value at every point of it:
//! - the flow of the objective is counted where it enters, `sum_i z^i_{s,1}`, as ODTlearn
//!   writes it, instead of where it leaves, `sum_i sum_n z^i_{n,t}`: by (4d)-(4e) the two
//!   sums are equal. HiGHS's simplex proves optimality faster with it (CPU seconds of single
//!   runs, greedy start: car depth 1 9.7 against 20.6, monks-3 depth 2 1.7 against 3.4,
//!   tic-tac-toe depth 1 3.4 against 3.8, monks-1 depth 2 4.8 against 5.4; benches/README.md);
//! - by (4b) the right side of (4g) equals `1 - p_n - sum_{m in A(n)} p_m - sum_{f: x^i_f = 1}
//!   b_{n,f}`, and that of (4h) `1 - p_n - sum_{m in A(n)} p_m - sum_{f: x^i_f = 0} b_{n,f}`;
//!   each arc row is written in whichever form has fewer nonzeros (one-hot data have few ones
//!   per row, so (4g) as printed would hold almost every feature; car depth 1: 9.7 CPU
//!   seconds against 15.0 with the rows as printed).
//!
//! Depends on the core (`milp`, `tree`) and the binary features, never on a backend.

use super::binarize::{binary_features, feature_matrix, BinaryFeature};
use glassbox_core::milp::{MilpProblem, Sense};
use glassbox_core::{GlassboxError, Result};
use nalgebra::DMatrix;
use std::sync::Arc;

/// The parameters of one FlowOCT problem.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowOctParams {
    /// Depth D (1 to 4).
    pub depth: usize,
    /// The regularization lambda in [0, 1]: the objective is `(1 - lambda) * correctly
    /// classified - lambda * splits`.
    pub lambda: f64,
    /// Most cut values per column of more than two distinct values ([`super::binarize`]).
    pub thresholds: usize,
}

/// What a node of a FlowOCT tree does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowNode {
    /// Branches on binary feature f: points with feature 0 go left, with 1 right.
    Branch(usize),
    /// Predicts class k for every point that reaches it.
    Predict(usize),
    /// Below a node that predicts: no point reaches it.
    Unreachable,
}

/// A FlowOCT tree: one [`FlowNode`] per node of the complete tree of depth D, heap order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowTree {
    /// The nodes, branch nodes then leaves.
    pub nodes: Vec<FlowNode>,
}

impl FlowTree {
    /// The number of nodes that branch.
    pub fn num_splits(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| matches!(n, FlowNode::Branch(_)))
            .count()
    }
}

/// Where each group of variables starts in the MILP's columns.
#[derive(Clone, Debug)]
pub struct Layout {
    features: usize,
    classes: usize,
    nodes: usize,
    b: usize,
    p: usize,
    w: usize,
    inflow: usize,
    sink: usize,
}

impl Layout {
    /// Column of `b_{n,f}` (n a branch node).
    pub fn b(&self, n: usize, f: usize) -> usize {
        self.b + n * self.features + f
    }
    /// Column of `p_n`.
    pub fn p(&self, n: usize) -> usize {
        self.p + n
    }
    /// Column of `w_{n,k}`.
    pub fn w(&self, n: usize, k: usize) -> usize {
        self.w + n * self.classes + k
    }
    /// Column of `z^i_{a(n),n}`, the flow of point i into node n.
    pub fn inflow(&self, i: usize, n: usize) -> usize {
        self.inflow + i * self.nodes + n
    }
    /// Column of `z^i_{n,t}`, the flow of point i from node n to the sink.
    pub fn sink(&self, i: usize, n: usize) -> usize {
        self.sink + i * self.nodes + n
    }
}

/// A FlowOCT problem built on scaled training data.
#[derive(Clone, Debug)]
pub struct FlowOctProblem {
    /// The MILP (maximized).
    pub milp: MilpProblem,
    /// Where its variables are.
    pub layout: Layout,
    /// The parameters.
    pub params: FlowOctParams,
    /// Scaled training features (N x p).
    pub x: Arc<DMatrix<f64>>,
    /// Training classes.
    pub y: Arc<Vec<usize>>,
    /// Number of classes K.
    pub classes: usize,
    /// The binary features the tree branches on.
    pub features: Vec<BinaryFeature>,
    /// The training rows' binary features (N x F, 0 or 1).
    pub bits: DMatrix<f64>,
}

/// Checks depth, lambda and thresholds.
pub fn check_params(name: &str, params: &FlowOctParams) -> Result<()> {
    let bad = |m: String| GlassboxError::formulation(name, m);
    if !(1..=4).contains(&params.depth) {
        return Err(bad(format!(
            "depth must be 1 to 4, got {} (the MILP grows as 2^depth times the rows)",
            params.depth
        )));
    }
    if !(params.lambda.is_finite() && (0.0..=1.0).contains(&params.lambda)) {
        return Err(bad(format!(
            "lambda must be in [0, 1] (the weight of a split against (1 - lambda) per \
             correctly classified point), got {}",
            params.lambda
        )));
    }
    if params.thresholds == 0 {
        return Err(bad(
            "thresholds must be at least 1 (cut values per numeric column)".into(),
        ));
    }
    Ok(())
}

/// The number of nodes of the complete tree of depth `depth`.
fn node_count(depth: usize) -> usize {
    (1usize << (depth + 1)) - 1
}

/// The ancestors of heap node `n`, parent first.
fn ancestors(mut n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    while n > 0 {
        n = (n - 1) / 2;
        out.push(n);
    }
    out
}

impl FlowOctProblem {
    /// Builds the MILP. `x` must be scaled to [0, 1] (the training rows' min-max scaling).
    pub fn new(
        name: &str,
        x: Arc<DMatrix<f64>>,
        y: Arc<Vec<usize>>,
        classes: usize,
        params: FlowOctParams,
    ) -> Result<Self> {
        crate::oct::check_scaled_data(name, &x, &y, classes)?;
        let n = x.nrows();
        check_params(name, &params)?;
        let features = binary_features(&x, params.thresholds);
        let bits = feature_matrix(&x, &features);
        let f_count = features.len();
        let branches = (1usize << params.depth) - 1;
        let nodes = node_count(params.depth);
        let k = classes;
        let layout = Layout {
            features: f_count,
            classes: k,
            nodes,
            b: 0,
            p: branches * f_count,
            w: branches * f_count + nodes,
            inflow: branches * f_count + nodes + nodes * k,
            sink: branches * f_count + nodes + nodes * k + n * nodes,
        };
        let lay = &layout;
        let lambda = params.lambda;

        let mut m = MilpProblem::new(name);
        m.sense = Sense::Maximize;
        m.columns.reserve(lay.sink + n * nodes);
        for t in 0..branches {
            for f in 0..f_count {
                m.add_binary(format!("b[{t},{f}]"), -lambda);
            }
        }
        for t in 0..nodes {
            m.add_binary(format!("p[{t}]"), 0.0);
        }
        for t in 0..nodes {
            for c in 0..k {
                m.add_binary(format!("w[{t},{c}]"), 0.0);
            }
        }
        for i in 0..n {
            for t in 0..nodes {
                // (4f): only the arc from the source is bounded. The objective's flow is
                // counted on this arc (module comment).
                let (upper, cost) = if t == 0 {
                    (1.0, 1.0 - lambda)
                } else {
                    (f64::INFINITY, 0.0)
                };
                m.add_column(format!("z[{i},in{t}]"), 0.0, upper, cost, false);
            }
        }
        for i in 0..n {
            for t in 0..nodes {
                m.add_column(format!("z[{i},{t}t]"), 0.0, f64::INFINITY, 0.0, false);
            }
        }
        debug_assert_eq!(m.columns.len(), lay.sink + n * nodes);
        let inf = f64::INFINITY;

        // (4b), (4c): one prediction on every path, a split at each node above it.
        let path_p = |t: usize| -> Vec<(usize, f64)> {
            std::iter::once(t)
                .chain(ancestors(t))
                .map(|u| (lay.p(u), 1.0))
                .collect()
        };
        for t in 0..nodes {
            let mut row = path_p(t);
            if t < branches {
                row.extend((0..f_count).map(|f| (lay.b(t, f), 1.0)));
            }
            m.add_row(format!("structure[{t}]"), 1.0, 1.0, row);
        }
        // (4j): one class at a node that predicts.
        for t in 0..nodes {
            let mut row: Vec<(usize, f64)> = (0..k).map(|c| (lay.w(t, c), 1.0)).collect();
            row.push((lay.p(t), -1.0));
            m.add_row(format!("class[{t}]"), 0.0, 0.0, row);
        }
        for i in 0..n {
            let ones: Vec<usize> = (0..f_count).filter(|&f| bits[(i, f)] > 0.5).collect();
            let zeros: Vec<usize> = (0..f_count).filter(|&f| bits[(i, f)] <= 0.5).collect();
            for t in 0..nodes {
                // (4d), (4e): flow conservation.
                let mut row = vec![(lay.inflow(i, t), 1.0), (lay.sink(i, t), -1.0)];
                if t < branches {
                    row.push((lay.inflow(i, 2 * t + 1), -1.0));
                    row.push((lay.inflow(i, 2 * t + 2), -1.0));
                }
                m.add_row(format!("flow[{i},{t}]"), 0.0, 0.0, row);
                // (4i): to the sink only where the node predicts the point's class.
                m.add_row(
                    format!("sink[{i},{t}]"),
                    -inf,
                    0.0,
                    vec![(lay.sink(i, t), 1.0), (lay.w(t, y[i]), -1.0)],
                );
            }
            for t in 0..branches {
                // (4g) left arc (features at 0), (4h) right arc (features at 1), each as
                // printed or through (4b), whichever is sparser (module comment).
                let ancestry = 1 + ancestors(t).len();
                for (child, same, other, side) in [
                    (2 * t + 1, &zeros, &ones, "left"),
                    (2 * t + 2, &ones, &zeros, "right"),
                ] {
                    let arc = (lay.inflow(i, child), 1.0);
                    if same.len() <= other.len() + ancestry {
                        let mut row = vec![arc];
                        row.extend(same.iter().map(|&f| (lay.b(t, f), -1.0)));
                        m.add_row(format!("{side}[{i},{t}]"), -inf, 0.0, row);
                    } else {
                        let mut row = vec![arc];
                        row.extend(other.iter().map(|&f| (lay.b(t, f), 1.0)));
                        row.extend(path_p(t));
                        m.add_row(format!("{side}[{i},{t}]"), -inf, 1.0, row);
                    }
                }
            }
        }
        Ok(FlowOctProblem {
            milp: m,
            layout,
            params,
            x,
            y,
            classes,
            features,
            bits,
        })
    }

    /// The number of branch nodes |B|.
    pub fn num_branches(&self) -> usize {
        (1usize << self.params.depth) - 1
    }

    /// The node where training point `i` gets its prediction in `tree` (a `Predict` node),
    /// following its binary features from the root.
    pub fn predicting_node(&self, tree: &FlowTree, i: usize) -> usize {
        let mut t = 0;
        loop {
            match tree.nodes[t] {
                FlowNode::Branch(f) if t < self.num_branches() => {
                    t = if self.bits[(i, f)] > 0.5 {
                        2 * t + 2
                    } else {
                        2 * t + 1
                    };
                }
                _ => return t,
            }
        }
    }

    /// FlowOCT's objective of `tree` on the training rows, computed by routing them:
    /// `(1 - lambda) * correctly classified - lambda * splits`.
    pub fn tree_objective(&self, tree: &FlowTree) -> f64 {
        let correct = (0..self.y.len())
            .filter(|&i| tree.nodes[self.predicting_node(tree, i)] == FlowNode::Predict(self.y[i]))
            .count();
        let lambda = self.params.lambda;
        (1.0 - lambda) * correct as f64 - lambda * tree.num_splits() as f64
    }

    /// The MILP point of `tree` (which must predict at every leaf it reaches and at no node
    /// below a node that predicts): its b, p, w, and a unit of flow from the source to the
    /// sink along the path of every point it classifies correctly (no flow for the others).
    pub fn point_of_tree(&self, tree: &FlowTree) -> Vec<f64> {
        let lay = &self.layout;
        let mut point = vec![0.0; self.milp.columns.len()];
        for (t, node) in tree.nodes.iter().enumerate() {
            match *node {
                FlowNode::Branch(f) => point[lay.b(t, f)] = 1.0,
                FlowNode::Predict(k) => {
                    point[lay.p(t)] = 1.0;
                    point[lay.w(t, k)] = 1.0;
                }
                FlowNode::Unreachable => {}
            }
        }
        for i in 0..self.y.len() {
            let end = self.predicting_node(tree, i);
            if tree.nodes[end] != FlowNode::Predict(self.y[i]) {
                continue;
            }
            point[lay.sink(i, end)] = 1.0;
            point[lay.inflow(i, end)] = 1.0;
            for u in ancestors(end) {
                point[lay.inflow(i, u)] = 1.0;
            }
        }
        point
    }

    /// The tree of a MILP point: a node predicts where `p_n` is set (its class the largest
    /// `w_{n,k}`), a node below one that predicts is unreachable, any other node branches
    /// on its largest `b_{n,f}` (a leaf, which cannot branch, predicts).
    pub fn tree_of_point(&self, point: &[f64]) -> FlowTree {
        let lay = &self.layout;
        let nodes = node_count(self.params.depth);
        let argmax = |range: std::ops::Range<usize>, column: &dyn Fn(usize) -> usize| {
            range
                .max_by(|&a, &b| point[column(a)].total_cmp(&point[column(b)]))
                .unwrap_or(0)
        };
        let mut out: Vec<FlowNode> = Vec::with_capacity(nodes);
        for t in 0..nodes {
            let parent_stops = t > 0 && !matches!(out[(t - 1) / 2], FlowNode::Branch(_));
            let node = if parent_stops {
                FlowNode::Unreachable
            } else if point[lay.p(t)] > 0.5 || t >= self.num_branches() || self.features.is_empty()
            {
                FlowNode::Predict(argmax(0..self.classes, &|k| lay.w(t, k)))
            } else {
                FlowNode::Branch(argmax(0..self.features.len(), &|f| lay.b(t, f)))
            };
            out.push(node);
        }
        FlowTree { nodes: out }
    }

    /// The best labels for the routing of `tree`: every node that predicts gets the
    /// majority class of the training points it receives (the lowest class among ties, and
    /// the majority of the whole training set where it receives none).
    pub fn with_majority_labels(&self, mut tree: FlowTree) -> FlowTree {
        let mut counts = vec![vec![0usize; self.classes]; tree.nodes.len()];
        for i in 0..self.y.len() {
            counts[self.predicting_node(&tree, i)][self.y[i]] += 1;
        }
        let mut overall = vec![0usize; self.classes];
        for &c in self.y.iter() {
            overall[c] += 1;
        }
        for (t, node) in tree.nodes.iter_mut().enumerate() {
            if let FlowNode::Predict(k) = node {
                let source = if counts[t].iter().sum::<usize>() > 0 {
                    &counts[t]
                } else {
                    &overall
                };
                *k = argmax_count(source);
            }
        }
        tree
    }
}

/// The index of the largest count (the lowest index among ties).
pub fn argmax_count(counts: &[usize]) -> usize {
    let mut best = 0;
    for (c, &v) in counts.iter().enumerate() {
        if v > counts[best] {
            best = c;
        }
    }
    best
}
