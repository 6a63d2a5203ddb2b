//! The MIP start of OCT and OCT-H: a greedy top-down tree of axis-aligned splits, each
//! chosen to minimize the weighted Gini impurity of its two children (CART's criterion,
//! Bertsimas and Dunn warm-start with CART), with no pruning. It is deliberately small:
//! only what a MIP start needs (a full CART learner lives elsewhere).
//!
//! A node splits only when both children keep at least `min_leaf` points and the impurity
//! strictly decreases; below a node that does not split, nothing splits (all its points go
//! right, as in the MILP). Thresholds lie between training values at least `min_gap` apart
//! (OCT-H's margin mu; 0 for OCT).

use nalgebra::DMatrix;

/// Greedy axis-aligned tree of depth `depth` on scaled `x`: per branch node (heap order)
/// `Some((feature, v))`, points with `x_j >= v` going right, `v` a training value.
pub fn greedy_tree(
    x: &DMatrix<f64>,
    y: &[usize],
    classes: usize,
    depth: usize,
    min_leaf: usize,
    min_gap: f64,
) -> Vec<Option<(usize, f64)>> {
    let branches = (1usize << depth) - 1;
    let mut nodes = vec![None; branches];
    let mut members: Vec<Option<Vec<usize>>> = vec![None; branches];
    members[0] = Some((0..y.len()).collect());
    for t in 0..branches {
        let Some(idx) = members[t].take() else {
            continue;
        };
        let split = best_split(x, y, classes, &idx, min_leaf, min_gap);
        let (left, right): (Vec<usize>, Vec<usize>) = match split {
            Some((j, v)) => {
                nodes[t] = Some((j, v));
                idx.iter().partition(|&&i| x[(i, j)] < v)
            }
            None => (Vec::new(), idx),
        };
        // A node that does not split sends everything right, and its subtree stays unsplit.
        if 2 * t + 2 < branches && nodes[t].is_some() {
            members[2 * t + 1] = Some(left);
            members[2 * t + 2] = Some(right);
        }
    }
    nodes
}

fn gini_mass(counts: &[usize], total: usize) -> f64 {
    if total == 0 {
        return 0.0;
    }
    let n = total as f64;
    n - counts.iter().map(|&c| (c * c) as f64).sum::<f64>() / n
}

/// The split of the points `idx` with the lowest weighted Gini impurity, if one improves
/// on the node's own.
fn best_split(
    x: &DMatrix<f64>,
    y: &[usize],
    classes: usize,
    idx: &[usize],
    min_leaf: usize,
    min_gap: f64,
) -> Option<(usize, f64)> {
    let n = idx.len();
    if n < 2 * min_leaf.max(1) {
        return None;
    }
    let mut total = vec![0usize; classes];
    for &i in idx {
        total[y[i]] += 1;
    }
    let parent = gini_mass(&total, n);
    if parent <= 0.0 {
        return None;
    }
    let mut best: Option<(f64, usize, f64)> = None;
    let mut order = idx.to_vec();
    for j in 0..x.ncols() {
        order.sort_by(|&a, &b| x[(a, j)].total_cmp(&x[(b, j)]));
        let mut left = vec![0usize; classes];
        for q in 1..n {
            left[y[order[q - 1]]] += 1;
            let (lo, hi) = (x[(order[q - 1], j)], x[(order[q], j)]);
            if hi - lo <= min_gap.max(0.0) || hi == lo || q < min_leaf || n - q < min_leaf {
                continue;
            }
            let right: Vec<usize> = total.iter().zip(&left).map(|(t, l)| t - l).collect();
            let impurity = gini_mass(&left, q) + gini_mass(&right, n - q);
            if best.is_none_or(|(b, _, _)| impurity < b - 1e-12) {
                best = Some((impurity, j, hi));
            }
        }
    }
    best.filter(|&(impurity, _, _)| impurity < parent - 1e-12)
        .map(|(_, j, v)| (j, v))
}
