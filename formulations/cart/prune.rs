//! Minimal cost-complexity pruning (Breiman et al. 1984, ch. 3), as scikit-learn defines
//! `ccp_alpha`: with `R(t) = (weight of t / weight of the root) * impurity(t)` and
//! `R(T_t)` the sum of `R` over the leaves of the subtree rooted at `t`, a branch node's
//! effective alpha is `(R(t) - R(T_t)) / (|leaves(T_t)| - 1)`. The weakest link (smallest
//! effective alpha, the first in depth-first preorder, left child first, on ties) is
//! made a leaf, over and over, while its alpha is at most `ccp_alpha`.

use super::tree::AxisTree;

/// One step of the pruning sequence.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PruningStep {
    /// The effective alpha of the pruned link (0 for the unpruned tree).
    pub alpha: f64,
    /// The total leaf impurity `R(T)` after the step.
    pub impurity: f64,
    /// Leaves after the step.
    pub leaves: usize,
}

/// Prunes `tree` in place with `ccp_alpha`; nothing happens for `ccp_alpha <= 0`
/// (scikit-learn's rule: even zero-gain splits stay).
pub fn prune(tree: &mut AxisTree, ccp_alpha: f64) {
    if ccp_alpha > 0.0 {
        run(tree, ccp_alpha);
    }
}

/// The whole pruning sequence of `tree`, from the tree itself down to its root: scikit-
/// learn's `cost_complexity_pruning_path`.
pub fn pruning_path(tree: &AxisTree) -> Vec<PruningStep> {
    let mut copy = tree.clone();
    run(&mut copy, f64::INFINITY)
}

fn run(tree: &mut AxisTree, ccp_alpha: f64) -> Vec<PruningStep> {
    let total = tree.nodes[0].weight;
    let r_node: Vec<f64> = tree
        .nodes
        .iter()
        .map(|n| {
            if total > 0.0 {
                n.weight / total * n.impurity
            } else {
                0.0
            }
        })
        .collect();
    let mut path = Vec::new();
    loop {
        let order = preorder(tree);
        // R(T_t) and leaf counts, children before parents.
        let mut r_branch = vec![0.0; tree.nodes.len()];
        let mut leaves = vec![0usize; tree.nodes.len()];
        for &t in order.iter().rev() {
            match &tree.nodes[t].branch {
                None => {
                    r_branch[t] = r_node[t];
                    leaves[t] = 1;
                }
                Some(b) => {
                    r_branch[t] = r_branch[b.left] + r_branch[b.right];
                    leaves[t] = leaves[b.left] + leaves[b.right];
                }
            }
        }
        if path.is_empty() {
            path.push(PruningStep {
                alpha: 0.0,
                impurity: r_branch[0],
                leaves: leaves[0],
            });
        }
        let weakest = order
            .iter()
            .filter(|&&t| tree.nodes[t].branch.is_some())
            .map(|&t| (t, (r_node[t] - r_branch[t]) / (leaves[t] - 1) as f64))
            .fold(None, |best: Option<(usize, f64)>, (t, a)| match best {
                Some((_, b)) if b <= a => best,
                _ => Some((t, a)),
            });
        let Some((t, alpha)) = weakest else { break };
        if alpha > ccp_alpha {
            break;
        }
        tree.make_leaf(t);
        let after = r_branch[0] - r_branch[t] + r_node[t];
        path.push(PruningStep {
            alpha,
            impurity: after,
            leaves: leaves[0] - leaves[t] + 1,
        });
    }
    tree.compact();
    path
}

/// Reachable nodes in depth-first preorder, left child first (scikit-learn's node order).
fn preorder(tree: &AxisTree) -> Vec<usize> {
    let mut out = Vec::new();
    let mut stack = vec![0];
    while let Some(t) = stack.pop() {
        out.push(t);
        if let Some(b) = &tree.nodes[t].branch {
            stack.push(b.right);
            stack.push(b.left);
        }
    }
    out
}
