//! Greedy top-down growth of an axis-aligned tree (CART, Breiman et al. 1984), as
//! scikit-learn's `DecisionTreeClassifier` / `DecisionTreeRegressor` grow it, with
//! deterministic tie-breaking: among splits of equal quality the lowest feature index wins,
//! then the lowest threshold (scikit-learn draws the order of features at random instead).
//!
//! - Candidate thresholds are midpoints between consecutive distinct values of a feature
//!   among the node's rows (values closer than 1e-7 count as equal, as in scikit-learn).
//! - A node is a leaf when it is at `max_depth`, has fewer than `min_samples_split` rows or
//!   fewer than `2 * min_samples_leaf`, is pure, or no split leaves `min_samples_leaf` rows
//!   on each side. Otherwise the split minimising the weighted child impurity is taken,
//!   even when it does not lower the impurity (scikit-learn's `min_impurity_decrease = 0`).
//! - Rows carry weights (a bootstrap sample is a weight per row: its count); rows of
//!   weight 0 are left out, and the `min_samples_*` rules count distinct rows.
//! - With `max_features`, each node draws that many features without replacement and, if
//!   none of them splits the node, keeps drawing until one does (scikit-learn's rule).

use super::tree::{AxisSplit, AxisTree, Branch, Node};
use nalgebra::DMatrix;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Values closer than this count as equal when placing thresholds (scikit-learn's
/// `FEATURE_THRESHOLD`).
const FEATURE_THRESHOLD: f64 = 1e-7;

/// The impurity a split minimises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Criterion {
    /// Gini index `1 - sum_k p_k^2` (classification).
    Gini,
    /// Entropy `-sum_k p_k log2 p_k` (classification).
    Entropy,
    /// Mean squared error around the node mean, i.e. the variance (regression).
    SquaredError,
}

impl Criterion {
    /// Whether it is a regression criterion.
    pub fn is_regression(self) -> bool {
        self == Criterion::SquaredError
    }

    /// The name configs use.
    pub fn as_str(self) -> &'static str {
        match self {
            Criterion::Gini => "gini",
            Criterion::Entropy => "entropy",
            Criterion::SquaredError => "squared_error",
        }
    }
}

pub use glassbox_core::learner::Targets;

/// How a tree grows.
#[derive(Clone, Debug, PartialEq)]
pub struct GrowParams {
    /// The impurity.
    pub criterion: Criterion,
    /// Maximum depth (edges from the root); `None` for no limit.
    pub max_depth: Option<usize>,
    /// Minimum rows in a leaf.
    pub min_samples_leaf: usize,
    /// Minimum rows for a node to be split.
    pub min_samples_split: usize,
    /// Features drawn per node (`None`: all, in index order).
    pub max_features: Option<usize>,
}

/// Sufficient statistics of a set of weighted rows.
#[derive(Clone, Debug)]
enum Stats {
    Classes(Vec<f64>),
    /// Sums of `v - offset`: with the node's own mean as the offset the sums stay near 0, so
    /// the split search's `-sum^2 / w` keeps the targets' spread however far from 0 they lie
    /// (a constant added to every target leaves the tree as it is; raw sums of targets near
    /// 1e9 lost it and picked other splits).
    Values {
        offset: f64,
        w: f64,
        sum: f64,
        sum_sq: f64,
    },
}

impl Stats {
    /// The statistics of `rows`.
    fn of_rows(targets: &Targets<'_>, rows: &[usize], weights: &[f64]) -> Self {
        let offset = match targets {
            Targets::Classes { .. } => 0.0,
            Targets::Values(v) => {
                let (w, sum) = rows.iter().fold((0.0, 0.0), |(w, s), &i| {
                    (w + weights[i], s + weights[i] * v[i])
                });
                if w > 0.0 && (sum / w).is_finite() {
                    sum / w
                } else {
                    0.0
                }
            }
        };
        let mut stats = Stats::empty(targets, offset);
        for &i in rows {
            stats.add(targets, i, weights[i], 1.0);
        }
        stats
    }

    fn empty(targets: &Targets<'_>, offset: f64) -> Self {
        match targets {
            Targets::Classes { n_classes, .. } => Stats::Classes(vec![0.0; *n_classes]),
            Targets::Values(_) => Stats::Values {
                offset,
                w: 0.0,
                sum: 0.0,
                sum_sq: 0.0,
            },
        }
    }

    /// No rows, with the same offset (the other side of a split of this node).
    fn emptied(&self, targets: &Targets<'_>) -> Self {
        match self {
            Stats::Values { offset, .. } => Stats::empty(targets, *offset),
            Stats::Classes(_) => Stats::empty(targets, 0.0),
        }
    }

    fn add(&mut self, targets: &Targets<'_>, i: usize, w: f64, sign: f64) {
        match (self, targets) {
            (Stats::Classes(c), Targets::Classes { y, .. }) => c[y[i]] += sign * w,
            (
                Stats::Values {
                    offset,
                    w: sw,
                    sum,
                    sum_sq,
                },
                Targets::Values(v),
            ) => {
                let d = v[i] - *offset;
                *sw += sign * w;
                *sum += sign * w * d;
                *sum_sq += sign * w * d * d;
            }
            _ => unreachable!("statistics built for these targets"),
        }
    }

    fn weight(&self) -> f64 {
        match self {
            Stats::Classes(c) => c.iter().sum(),
            Stats::Values { w, .. } => *w,
        }
    }

    /// The node's impurity under `criterion`.
    fn impurity(&self, criterion: Criterion) -> f64 {
        let w = self.weight();
        if w <= 0.0 {
            return 0.0;
        }
        match (self, criterion) {
            (Stats::Classes(c), Criterion::Gini) => {
                1.0 - c.iter().map(|&ck| (ck / w) * (ck / w)).sum::<f64>()
            }
            (Stats::Classes(c), _) => -c
                .iter()
                .filter(|&&ck| ck > 0.0)
                .map(|&ck| (ck / w) * (ck / w).log2())
                .sum::<f64>(),
            (Stats::Values { sum, sum_sq, .. }, _) => {
                let mean = sum / w;
                (sum_sq / w - mean * mean).max(0.0)
            }
        }
    }

    /// The quantity the split search minimises for this child: its weighted impurity, up
    /// to terms that are the same for every split of a node (for squared error,
    /// `-sum^2 / w`, scikit-learn's proxy, which is exact in the sums).
    fn cost(&self, criterion: Criterion) -> f64 {
        match self {
            Stats::Values { w, sum, .. } => {
                if *w <= 0.0 {
                    0.0
                } else {
                    -sum * sum / w
                }
            }
            Stats::Classes(_) => self.weight() * self.impurity(criterion),
        }
    }

    fn value(&self) -> Vec<f64> {
        let w = self.weight();
        match self {
            Stats::Classes(c) => c
                .iter()
                .map(|&ck| if w > 0.0 { ck / w } else { 0.0 })
                .collect(),
            Stats::Values { offset, sum, .. } => {
                vec![if w > 0.0 { offset + sum / w } else { 0.0 }]
            }
        }
    }
}

/// Grows a tree on the rows of `x` with positive `weights` (see the module comment).
/// `rng` draws the features of each node when `params.max_features` is set.
pub fn grow(
    x: &DMatrix<f64>,
    targets: Targets<'_>,
    weights: &[f64],
    params: &GrowParams,
    mut rng: Option<&mut ChaCha8Rng>,
) -> AxisTree {
    let rows: Vec<usize> = (0..x.nrows()).filter(|&i| weights[i] > 0.0).collect();
    let mut nodes: Vec<Node> = Vec::new();
    // (node index, its rows, its depth); left children are processed first.
    let mut stack = vec![(0usize, rows, 0usize)];
    nodes.push(Node::leaf(Vec::new()));
    while let Some((t, rows, depth)) = stack.pop() {
        let stats = Stats::of_rows(&targets, &rows, weights);
        let impurity = stats.impurity(params.criterion);
        nodes[t] = Node {
            branch: None,
            value: stats.value(),
            n_samples: rows.len(),
            weight: stats.weight(),
            impurity,
        };
        let min_leaf = params.min_samples_leaf.max(1);
        let stop = params.max_depth.is_some_and(|d| depth >= d)
            || rows.len() < params.min_samples_split.max(2)
            || rows.len() < 2 * min_leaf
            || impurity <= f64::EPSILON;
        if stop {
            continue;
        }
        let Some(split) = best_split(
            x,
            &targets,
            weights,
            &rows,
            &stats,
            params,
            rng.as_deref_mut(),
        ) else {
            continue;
        };
        let (left_rows, right_rows): (Vec<usize>, Vec<usize>) =
            rows.iter().partition(|&&i| split.goes_left(x, i));
        let left = nodes.len();
        nodes.push(Node::leaf(Vec::new()));
        nodes.push(Node::leaf(Vec::new()));
        nodes[t].branch = Some(Branch {
            split,
            left,
            right: left + 1,
        });
        stack.push((left + 1, right_rows, depth + 1));
        stack.push((left, left_rows, depth + 1));
    }
    let mut tree = AxisTree { nodes };
    tree.compact();
    tree
}

/// The best split of a node's `rows`, or none if no threshold leaves `min_samples_leaf`
/// rows on both sides.
fn best_split(
    x: &DMatrix<f64>,
    targets: &Targets<'_>,
    weights: &[f64],
    rows: &[usize],
    total: &Stats,
    params: &GrowParams,
    rng: Option<&mut ChaCha8Rng>,
) -> Option<AxisSplit> {
    let p = x.ncols();
    let min_leaf = params.min_samples_leaf.max(1);
    let mut best: Option<(f64, AxisSplit)> = None;
    let consider = |j: usize, best: &mut Option<(f64, AxisSplit)>| {
        let mut sorted: Vec<(f64, usize)> = rows.iter().map(|&i| (x[(i, j)], i)).collect();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut left = total.emptied(targets);
        let mut right = total.clone();
        let n = sorted.len();
        for k in 0..n - 1 {
            let (v, i) = sorted[k];
            left.add(targets, i, weights[i], 1.0);
            right.add(targets, i, weights[i], -1.0);
            let next = sorted[k + 1].0;
            if next <= v + FEATURE_THRESHOLD || k + 1 < min_leaf || n - k - 1 < min_leaf {
                continue;
            }
            let cost = left.cost(params.criterion) + right.cost(params.criterion);
            if best.as_ref().is_none_or(|(b, _)| cost < *b) {
                let mut threshold = 0.5 * (v + next);
                if threshold >= next || !threshold.is_finite() {
                    threshold = v;
                }
                *best = Some((
                    cost,
                    AxisSplit {
                        feature: j,
                        threshold,
                    },
                ));
            }
        }
    };
    match (params.max_features, rng) {
        (Some(m), Some(rng)) if m < p => {
            // Draw features one at a time (a partial Fisher-Yates shuffle); after m draws,
            // stop as soon as some feature has given a split. The drawn ones are searched
            // in index order so that ties break as without subsampling.
            let mut order: Vec<usize> = (0..p).collect();
            let mut drawn = 0;
            while drawn < p {
                let batch_end = if drawn < m { m } else { drawn + 1 };
                let mut batch = Vec::new();
                while drawn < batch_end.min(p) {
                    let k = rng.random_range(drawn..p);
                    order.swap(drawn, k);
                    batch.push(order[drawn]);
                    drawn += 1;
                }
                batch.sort_unstable();
                for j in batch {
                    consider(j, &mut best);
                }
                if best.is_some() {
                    break;
                }
            }
        }
        _ => {
            for j in 0..p {
                consider(j, &mut best);
            }
        }
    }
    best.map(|(_, s)| s)
}
