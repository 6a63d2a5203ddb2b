//! The MILPs of OCT (axis-aligned splits) and OCT-H (oblique splits) of Bertsimas and Dunn
//! (2017), as the thesis (`shared/papers/004_31090f2e54e0166e.txt`, section 3.2) presents
//! them, on features min-max scaled to [0, 1] on the training rows.
//!
//! Variables (heap order of [`TreeShape`]: branch nodes t, leaves l):
//! - `a[j,t]` split coefficients: binary for OCT, in [-1, 1] for OCT-H (with `ahat[j,t] >=
//!   |a[j,t]|` and binary `s[j,t]`, feature j used at t); `b[t]` thresholds; binary `d[t]`,
//!   node t splits;
//! - binary `z[i,l]`, point i in leaf l; binary `l[l]`, leaf l holds points; binary
//!   `c[k,l]`, leaf l predicts class k; `N[l]`, `N[k,l]` point counts; `L[l]` the points of
//!   leaf l misclassified.
//!
//! Objective: `(1 / Lhat) sum_l L[l] + alpha * (sum_t d[t])` for OCT and `+ alpha * sum_jt
//! s[j,t]` for OCT-H, Lhat the misclassifications of predicting the majority class.
//!
//! Routing uses the thesis' aggregated form (3.7): one pair of rows per point and branch
//! node, with `sum z` over the leaves of the node's left or right subtree (Bertsimas and
//! Dunn write one row per leaf and ancestor; the aggregated rows have the same integer
//! points and a tighter relaxation). Point i goes left at t when `a_t . x_i < b_t`, right
//! when `a_t . x_i >= b_t`, with Bertsimas and Dunn's margins:
//! - OCT: `sum_j a_jt (x_ij + eps_j - eps_min) + eps_min <= b_t + (1 + eps_max)(1 - sum z)`,
//!   `eps_j` the smallest gap between distinct training values of feature j. The `eps_min`
//!   terms make a node that does not split (`a = 0, b = 0`) send every point right. The
//!   sum `sum_j a_jt (eps_j - eps_min)` is one column `e[t]` defined by one row per node, so
//!   each routing row has the data's nonzeros only (same integer points, same relaxation).
//! - OCT-H: `a_t . x_i + mu <= b_t + (2 + mu)(1 - sum z)` with Bertsimas and Dunn's
//!   `mu = 0.005` by default.
//!
//! The margins are small against the big-Ms (OCT's eps_min is the data's finest gap, 4e-7
//! on climate's training rows), so the MILP asks the backend for an integrality tolerance
//! that keeps them ([`OctProblem::integrality_tolerance`]).
//!
//! Depends on the core (`milp`, `tree`), never on a backend.

use glassbox_core::milp::{self, MilpProblem};
use glassbox_core::tree::TreeShape;
use glassbox_core::{GlassboxError, Result};
use nalgebra::DMatrix;
use std::sync::Arc;

/// Which splits the tree makes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SplitKind {
    /// OCT: one feature per split.
    Axis,
    /// OCT-H: a hyperplane per split, points within `mu` below it cannot go left.
    Oblique {
        /// The margin mu of the left-branch rows.
        mu: f64,
    },
}

/// The parameters of one OCT / OCT-H problem.
#[derive(Clone, Debug, PartialEq)]
pub struct OctParams {
    /// Depth D (1 to 4).
    pub depth: usize,
    /// Complexity penalty alpha (per split for OCT, per feature used per split for OCT-H).
    pub alpha: f64,
    /// Minimum number of points N_min in a leaf that holds points.
    pub min_leaf: usize,
    /// Axis-aligned or oblique splits.
    pub kind: SplitKind,
}

/// Where each group of variables starts in the MILP's columns.
#[derive(Clone, Debug)]
pub struct Layout {
    p: usize,
    k: usize,
    leaves: usize,
    a: usize,
    ahat: usize,
    s: usize,
    b: usize,
    d: usize,
    leaf_used: usize,
    c: usize,
    z: usize,
    loss: usize,
    n_t: usize,
    n_kt: usize,
    margin: usize,
}

impl Layout {
    /// Column of `a[j,t]`.
    pub fn a(&self, j: usize, t: usize) -> usize {
        self.a + t * self.p + j
    }
    /// Column of `ahat[j,t]` (OCT-H).
    pub fn ahat(&self, j: usize, t: usize) -> usize {
        self.ahat + t * self.p + j
    }
    /// Column of `s[j,t]` (OCT-H).
    pub fn s(&self, j: usize, t: usize) -> usize {
        self.s + t * self.p + j
    }
    /// Column of `b[t]`.
    pub fn b(&self, t: usize) -> usize {
        self.b + t
    }
    /// Column of `d[t]`.
    pub fn d(&self, t: usize) -> usize {
        self.d + t
    }
    /// Column of `l[leaf]`.
    pub fn leaf_used(&self, leaf: usize) -> usize {
        self.leaf_used + leaf
    }
    /// Column of `c[k,leaf]`.
    pub fn c(&self, k: usize, leaf: usize) -> usize {
        self.c + leaf * self.k + k
    }
    /// Column of `z[i,leaf]`.
    pub fn z(&self, i: usize, leaf: usize) -> usize {
        self.z + i * self.leaves + leaf
    }
    /// Column of `L[leaf]`.
    pub fn loss(&self, leaf: usize) -> usize {
        self.loss + leaf
    }
    /// Column of `N[leaf]`.
    pub fn n_t(&self, leaf: usize) -> usize {
        self.n_t + leaf
    }
    /// Column of `N[k,leaf]`.
    pub fn n_kt(&self, k: usize, leaf: usize) -> usize {
        self.n_kt + leaf * self.k + k
    }
    /// Column of `e[t] = sum_j a_jt (eps_j - eps_min)` (OCT).
    pub fn margin(&self, t: usize) -> usize {
        self.margin + t
    }
}

/// An OCT or OCT-H problem built on scaled training data.
#[derive(Clone, Debug)]
pub struct OctProblem {
    /// The MILP.
    pub milp: MilpProblem,
    /// Where its variables are.
    pub layout: Layout,
    /// The tree.
    pub shape: TreeShape,
    /// The parameters.
    pub params: OctParams,
    /// Scaled training features (N x p).
    pub x: Arc<DMatrix<f64>>,
    /// Training classes.
    pub y: Arc<Vec<usize>>,
    /// Number of classes K.
    pub classes: usize,
    /// eps_j of every feature (OCT).
    pub epsilon: Vec<f64>,
    /// Lhat, the baseline misclassifications (at least 1).
    pub baseline: f64,
}

/// One split of a tree in scaled units: go left when `weights . x < threshold`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Split {
    /// `(feature, coefficient)`, nonzero coefficients only (one, equal to 1, for OCT).
    pub weights: Vec<(usize, f64)>,
    /// The threshold.
    pub threshold: f64,
}

/// eps_j: the smallest gap between two distinct values of each column of `x` (1 for a
/// column with fewer than two distinct values, which cannot split the data).
pub fn feature_epsilons(x: &DMatrix<f64>) -> Vec<f64> {
    x.column_iter()
        .map(|column| {
            let mut v: Vec<f64> = column.iter().copied().collect();
            v.sort_by(f64::total_cmp);
            v.dedup();
            v.windows(2).map(|w| w[1] - w[0]).fold(1.0, f64::min)
        })
        .collect()
}

/// The checks every tree MILP makes of its training data: as many labels as rows, rows and
/// features, labels below `classes`, features scaled to [0, 1] (the training rows' min-max
/// scaling). Errors name the formulation `name`.
pub fn check_scaled_data(name: &str, x: &DMatrix<f64>, y: &[usize], classes: usize) -> Result<()> {
    let bad = |m: String| GlassboxError::formulation(name, m);
    let (n, p) = x.shape();
    if y.len() != n {
        return Err(bad(format!("{n} rows of features but {} labels", y.len())));
    }
    if n == 0 || p == 0 {
        return Err(bad("the training data have no rows or no features".into()));
    }
    if let Some(&k) = y.iter().find(|&&k| k >= classes) {
        return Err(bad(format!("label {k} out of range for {classes} classes")));
    }
    if x.iter()
        .any(|v| !v.is_finite() || *v < -1e-9 || *v > 1.0 + 1e-9)
    {
        return Err(bad(
            "the features must be scaled to [0, 1] on the training rows".into(),
        ));
    }
    Ok(())
}

impl OctProblem {
    /// Builds the MILP. `x` must be scaled to [0, 1] (the training rows' min-max scaling).
    pub fn new(
        name: &str,
        x: Arc<DMatrix<f64>>,
        y: Arc<Vec<usize>>,
        classes: usize,
        params: OctParams,
    ) -> Result<Self> {
        check_scaled_data(name, &x, &y, classes)?;
        let bad = |m: String| GlassboxError::formulation(name, m);
        let (n, p) = x.shape();
        check_params(name, &params)?;
        if n < params.min_leaf {
            return Err(bad(format!(
                "min_leaf = {} exceeds the {n} training rows",
                params.min_leaf
            )));
        }
        let shape = TreeShape::new(params.depth);
        let (branches, leaves) = (shape.num_branches(), shape.num_leaves());
        let oblique = matches!(params.kind, SplitKind::Oblique { .. });
        let k = classes;
        let mut at = 0;
        let mut next = |size: usize| {
            at += size;
            at - size
        };
        let layout = Layout {
            p,
            k,
            leaves,
            a: next(p * branches),
            ahat: next(if oblique { p * branches } else { 0 }),
            s: next(if oblique { p * branches } else { 0 }),
            b: next(branches),
            d: next(branches),
            leaf_used: next(leaves),
            c: next(k * leaves),
            z: next(n * leaves),
            loss: next(leaves),
            n_t: next(leaves),
            n_kt: next(k * leaves),
            margin: next(if oblique { 0 } else { branches }),
        };
        let mut counts = vec![0usize; k];
        for &c in y.iter() {
            counts[c] += 1;
        }
        let baseline = ((n - counts.iter().max().copied().unwrap_or(0)) as f64).max(1.0);
        let epsilon = feature_epsilons(&x);

        let mut m = MilpProblem::new(name);
        m.columns.reserve(at);
        let alpha = params.alpha;
        for t in 0..branches {
            for j in 0..p {
                if oblique {
                    m.add_column(format!("a[{j},{t}]"), -1.0, 1.0, 0.0, false);
                } else {
                    m.add_binary(format!("a[{j},{t}]"), 0.0);
                }
            }
        }
        if oblique {
            for t in 0..branches {
                for j in 0..p {
                    m.add_column(format!("ahat[{j},{t}]"), 0.0, 1.0, 0.0, false);
                }
            }
            for t in 0..branches {
                for j in 0..p {
                    m.add_binary(format!("s[{j},{t}]"), alpha);
                }
            }
        }
        let b_lower = if oblique { -1.0 } else { 0.0 };
        for t in 0..branches {
            m.add_column(format!("b[{t}]"), b_lower, 1.0, 0.0, false);
        }
        for t in 0..branches {
            m.add_binary(format!("d[{t}]"), if oblique { 0.0 } else { alpha });
        }
        for l in 0..leaves {
            m.add_binary(format!("l[{l}]"), 0.0);
        }
        for l in 0..leaves {
            for c in 0..k {
                m.add_binary(format!("c[{c},{l}]"), 0.0);
            }
        }
        for i in 0..n {
            for l in 0..leaves {
                m.add_binary(format!("z[{i},{l}]"), 0.0);
            }
        }
        for l in 0..leaves {
            m.add_column(format!("L[{l}]"), 0.0, f64::INFINITY, 1.0 / baseline, false);
        }
        for l in 0..leaves {
            m.add_column(format!("N[{l}]"), 0.0, f64::INFINITY, 0.0, false);
        }
        for l in 0..leaves {
            for c in 0..k {
                m.add_column(format!("N[{c},{l}]"), 0.0, f64::INFINITY, 0.0, false);
            }
        }
        let eps_max = epsilon.iter().copied().fold(0.0, f64::max);
        let eps_min = epsilon.iter().copied().fold(f64::INFINITY, f64::min);
        if !oblique {
            for t in 0..branches {
                m.add_column(format!("e[{t}]"), 0.0, eps_max - eps_min, 0.0, false);
            }
        }
        debug_assert_eq!(m.columns.len(), at);
        let lay = &layout;
        let nf = n as f64;
        let inf = f64::INFINITY;

        // Leaf losses: L >= N - N_k - n (1 - c_k) and L <= N - N_k + n c_k.
        for l in 0..leaves {
            for c in 0..k {
                let row = vec![
                    (lay.loss(l), 1.0),
                    (lay.n_t(l), -1.0),
                    (lay.n_kt(c, l), 1.0),
                    (lay.c(c, l), -nf),
                ];
                m.add_row(format!("loss_lo[{c},{l}]"), -nf, inf, row.clone());
                m.add_row(format!("loss_up[{c},{l}]"), -inf, 0.0, row);
            }
        }
        // Counts: N_k = sum_{i: y_i = k} z_il, N = sum_i z_il; N >= N_min l.
        for l in 0..leaves {
            for c in 0..k {
                let mut row = vec![(lay.n_kt(c, l), 1.0)];
                row.extend((0..n).filter(|&i| y[i] == c).map(|i| (lay.z(i, l), -1.0)));
                m.add_row(format!("count[{c},{l}]"), 0.0, 0.0, row);
            }
            let mut row = vec![(lay.n_t(l), 1.0)];
            row.extend((0..n).map(|i| (lay.z(i, l), -1.0)));
            m.add_row(format!("size[{l}]"), 0.0, 0.0, row);
            m.add_row(
                format!("min_leaf[{l}]"),
                0.0,
                inf,
                vec![
                    (lay.n_t(l), 1.0),
                    (lay.leaf_used(l), -(params.min_leaf as f64)),
                ],
            );
            // One label in a leaf that holds points: sum_k c_kl = l_l.
            let mut row: Vec<(usize, f64)> = (0..k).map(|c| (lay.c(c, l), 1.0)).collect();
            row.push((lay.leaf_used(l), -1.0));
            m.add_row(format!("label[{l}]"), 0.0, 0.0, row);
        }
        // Every point in one leaf, and only in a leaf that holds points.
        for i in 0..n {
            let row = (0..leaves).map(|l| (lay.z(i, l), 1.0)).collect();
            m.add_row(format!("assign[{i}]"), 1.0, 1.0, row);
            for l in 0..leaves {
                m.add_row(
                    format!("used[{i},{l}]"),
                    -inf,
                    0.0,
                    vec![(lay.z(i, l), 1.0), (lay.leaf_used(l), -1.0)],
                );
            }
        }
        // Splits: which variables a node may use, and the hierarchy d_t <= d_parent.
        for t in 0..branches {
            match params.kind {
                SplitKind::Axis => {
                    let mut row: Vec<(usize, f64)> = (0..p).map(|j| (lay.a(j, t), 1.0)).collect();
                    row.push((lay.d(t), -1.0));
                    m.add_row(format!("one_feature[{t}]"), 0.0, 0.0, row);
                    m.add_row(
                        format!("threshold[{t}]"),
                        -inf,
                        0.0,
                        vec![(lay.b(t), 1.0), (lay.d(t), -1.0)],
                    );
                }
                SplitKind::Oblique { .. } => {
                    let mut norm: Vec<(usize, f64)> =
                        (0..p).map(|j| (lay.ahat(j, t), 1.0)).collect();
                    norm.push((lay.d(t), -1.0));
                    m.add_row(format!("l1_norm[{t}]"), -inf, 0.0, norm);
                    for j in 0..p {
                        let (a, ah, s) = (lay.a(j, t), lay.ahat(j, t), lay.s(j, t));
                        m.add_row(
                            format!("abs_up[{j},{t}]"),
                            0.0,
                            inf,
                            vec![(ah, 1.0), (a, -1.0)],
                        );
                        m.add_row(
                            format!("abs_lo[{j},{t}]"),
                            0.0,
                            inf,
                            vec![(ah, 1.0), (a, 1.0)],
                        );
                        m.add_row(
                            format!("used_up[{j},{t}]"),
                            -inf,
                            0.0,
                            vec![(a, 1.0), (s, -1.0)],
                        );
                        m.add_row(
                            format!("used_lo[{j},{t}]"),
                            0.0,
                            inf,
                            vec![(a, 1.0), (s, 1.0)],
                        );
                        m.add_row(
                            format!("used_d[{j},{t}]"),
                            -inf,
                            0.0,
                            vec![(s, 1.0), (lay.d(t), -1.0)],
                        );
                    }
                    let mut some: Vec<(usize, f64)> = (0..p).map(|j| (lay.s(j, t), 1.0)).collect();
                    some.push((lay.d(t), -1.0));
                    m.add_row(format!("some_feature[{t}]"), 0.0, inf, some);
                    m.add_row(
                        format!("threshold_up[{t}]"),
                        -inf,
                        0.0,
                        vec![(lay.b(t), 1.0), (lay.d(t), -1.0)],
                    );
                    m.add_row(
                        format!("threshold_lo[{t}]"),
                        0.0,
                        inf,
                        vec![(lay.b(t), 1.0), (lay.d(t), 1.0)],
                    );
                }
            }
            if t > 0 {
                m.add_row(
                    format!("hierarchy[{t}]"),
                    -inf,
                    0.0,
                    vec![(lay.d(t), 1.0), (lay.d((t - 1) / 2), -1.0)],
                );
            }
        }
        // OCT's margin of node t in one column, e_t = sum_j a_jt (eps_j - eps_min), so that
        // the left-branch rows below stay as sparse as the data (the same integer points
        // and LP relaxation as Bertsimas and Dunn's dense rows).
        if !oblique {
            for t in 0..branches {
                let mut row = vec![(lay.margin(t), 1.0)];
                row.extend(
                    (0..p)
                        .filter(|&j| epsilon[j] != eps_min)
                        .map(|j| (lay.a(j, t), -(epsilon[j] - eps_min))),
                );
                m.add_row(format!("margin[{t}]"), 0.0, 0.0, row);
            }
        }
        // Routing (3.7) with Bertsimas and Dunn's margins (see the module comment).
        let subtrees: Vec<(Vec<usize>, Vec<usize>)> =
            (0..branches).map(|t| shape.leaves_below(t)).collect();
        for i in 0..n {
            for (t, (left, right)) in subtrees.iter().enumerate() {
                let mut left_row = Vec::with_capacity(p + 1 + left.len());
                let mut right_row = Vec::with_capacity(p + 1 + right.len());
                let (left_big_m, left_rhs, right_big_m) = match params.kind {
                    SplitKind::Axis => {
                        for j in 0..p {
                            let xij = x[(i, j)];
                            if xij != 0.0 {
                                left_row.push((lay.a(j, t), xij));
                                right_row.push((lay.a(j, t), xij));
                            }
                        }
                        left_row.push((lay.margin(t), 1.0));
                        (1.0 + eps_max, 1.0 + eps_max - eps_min, 1.0)
                    }
                    SplitKind::Oblique { mu } => {
                        for j in 0..p {
                            let xij = x[(i, j)];
                            if xij != 0.0 {
                                left_row.push((lay.a(j, t), xij));
                                right_row.push((lay.a(j, t), xij));
                            }
                        }
                        (2.0 + mu, 2.0, 2.0)
                    }
                };
                left_row.retain(|&(_, v)| v != 0.0);
                left_row.push((lay.b(t), -1.0));
                right_row.push((lay.b(t), -1.0));
                left_row.extend(left.iter().map(|&l| (lay.z(i, l), left_big_m)));
                right_row.extend(right.iter().map(|&l| (lay.z(i, l), -right_big_m)));
                m.add_row(format!("left[{i},{t}]"), -inf, left_rhs, left_row);
                m.add_row(format!("right[{i},{t}]"), -right_big_m, inf, right_row);
            }
        }
        Ok(OctProblem {
            milp: m,
            layout,
            shape,
            params,
            x,
            y,
            classes,
            epsilon,
            baseline,
        })
    }

    /// eps_min: the smallest of the features' gaps eps_j.
    fn eps_min(&self) -> f64 {
        self.epsilon.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// eps_max: the largest of the features' gaps eps_j.
    fn eps_max(&self) -> f64 {
        self.epsilon.iter().copied().fold(0.0, f64::max)
    }

    /// The integrality tolerance at which a point the MILP sends left keeps its margin
    /// (OCT: eps_min, OCT-H: mu) against the big-M rows
    /// ([`milp::integrality_tolerance_for_margin`]; a routing row sums z over up to half the
    /// leaves, each with coefficient 1 + eps_max, resp. 2 + mu). Without it HiGHS's default
    /// 1e-6 let OCT on climate at depth 2 (eps_min about 4e-7) report 0 errors as optimal
    /// for a tree that misclassifies 34 training rows. OCT's is kept at
    /// [`milp::TIGHTEST_INTEGRALITY_TOLERANCE`] or above: features whose distinct values lie
    /// closer than about 1e-9 (scaled) may then be split between their two closest values
    /// inexactly, rather than the run being refused.
    pub fn integrality_tolerance(&self) -> f64 {
        let (margin, big_m) = match self.params.kind {
            SplitKind::Axis => (self.eps_min(), 1.0 + self.eps_max()),
            SplitKind::Oblique { mu } => (mu, 2.0 + mu),
        };
        let summed = self.shape.leaves_below(0).0.len().max(1) as f64;
        milp::integrality_tolerance_for_margin(margin, summed * big_m)
            .max(milp::TIGHTEST_INTEGRALITY_TOLERANCE)
    }

    /// The MILP point of a tree of axis-aligned splits `(feature, v)` per branch node
    /// (`None`: no split, every point goes right), where a point goes right when
    /// `x_j >= v` and `v` is a training value of feature j (so that a point that goes left
    /// has `x_j + eps_j <= v`; for OCT-H `v` must be at least `mu` above every value that
    /// goes left). Leaves predict the majority class of their points (the best labels
    /// for this routing). The point is feasible when the tree respects `min_leaf` and the
    /// hierarchy (no split below a node that does not split).
    pub fn point_of_axis_tree(&self, nodes: &[Option<(usize, f64)>]) -> Vec<f64> {
        let lay = &self.layout;
        let mut point = vec![0.0; self.milp.columns.len()];
        let oblique = matches!(self.params.kind, SplitKind::Oblique { .. });
        let eps_min = self.eps_min();
        for (t, node) in nodes.iter().enumerate().take(self.shape.num_branches()) {
            if let Some((j, v)) = *node {
                point[lay.a(j, t)] = 1.0;
                if oblique {
                    point[lay.ahat(j, t)] = 1.0;
                    point[lay.s(j, t)] = 1.0;
                }
                point[lay.b(t)] = v;
                point[lay.d(t)] = 1.0;
                if !oblique {
                    point[lay.margin(t)] = self.epsilon[j] - eps_min;
                }
            }
        }
        let leaves = self.shape.num_leaves();
        let mut counts = vec![vec![0usize; self.classes]; leaves];
        for i in 0..self.x.nrows() {
            let leaf = route(&self.shape, |t| nodes[t].map(|(j, v)| self.x[(i, j)] < v));
            point[lay.z(i, leaf)] = 1.0;
            counts[leaf][self.y[i]] += 1;
        }
        for (l, counts) in counts.iter().enumerate() {
            let size: usize = counts.iter().sum();
            point[lay.n_t(l)] = size as f64;
            for (c, &count) in counts.iter().enumerate() {
                point[lay.n_kt(c, l)] = count as f64;
            }
            if size > 0 {
                let best = argmax(counts);
                point[lay.leaf_used(l)] = 1.0;
                point[lay.c(best, l)] = 1.0;
                point[lay.loss(l)] = (size - counts[best]) as f64;
            }
        }
        point
    }

    /// The splits of a MILP point, in scaled units (`None`: the node does not split).
    ///
    /// A MILP solution fixes which points go left only up to the solver's tolerances, and
    /// any threshold between two consecutive training values routes the training points
    /// alike. Our choice: OCT's threshold is the midpoint between the smallest training
    /// value of the feature at or above `b` less eps_min / 2 (what goes right) and the value
    /// below it (`axis_threshold`); OCT-H's is `b - mu / 2`, the middle of the margin no
    /// training point lies in.
    pub fn splits_of(&self, point: &[f64]) -> Vec<Option<Split>> {
        let lay = &self.layout;
        let p = self.x.ncols();
        let eps_min = self.eps_min();
        (0..self.shape.num_branches())
            .map(|t| {
                if point[lay.d(t)] < 0.5 {
                    return None;
                }
                let b = point[lay.b(t)];
                match self.params.kind {
                    SplitKind::Axis => {
                        let j = (0..p)
                            .max_by(|&u, &v| point[lay.a(u, t)].total_cmp(&point[lay.a(v, t)]))
                            .unwrap_or(0);
                        Some(Split {
                            weights: vec![(j, 1.0)],
                            threshold: axis_threshold(
                                self.x.column(j).iter().copied(),
                                b,
                                0.5 * eps_min,
                            ),
                        })
                    }
                    SplitKind::Oblique { mu } => Some(Split {
                        weights: (0..p)
                            .map(|j| (j, point[lay.a(j, t)]))
                            .filter(|&(j, w)| w.abs() > 1e-9 && point[lay.s(j, t)] > 0.5)
                            .collect(),
                        threshold: b - mu / 2.0,
                    }),
                }
            })
            .collect()
    }

    /// The class of each leaf at a MILP point (`None` for a leaf with no label).
    pub fn labels_of(&self, point: &[f64]) -> Vec<Option<usize>> {
        (0..self.shape.num_leaves())
            .map(|l| (0..self.classes).find(|&c| point[self.layout.c(c, l)] > 0.5))
            .collect()
    }
}

/// Checks depth, alpha, min_leaf and mu.
pub fn check_params(name: &str, params: &OctParams) -> Result<()> {
    let bad = |m: String| GlassboxError::formulation(name, m);
    if !(1..=4).contains(&params.depth) {
        return Err(bad(format!(
            "depth must be 1 to 4, got {} (the MILP grows as 2^depth times the rows)",
            params.depth
        )));
    }
    if !(params.alpha.is_finite() && params.alpha >= 0.0) {
        return Err(bad(format!(
            "alpha must be a number >= 0, got {}",
            params.alpha
        )));
    }
    if params.min_leaf == 0 {
        return Err(bad("min_leaf must be at least 1".into()));
    }
    if let SplitKind::Oblique { mu } = params.kind {
        if !(mu.is_finite() && mu > 0.0 && mu < 1.0) {
            return Err(bad(format!("mu must be in (0, 1), got {mu}")));
        }
    }
    Ok(())
}

/// The midpoint between the smallest of `values` at or above `b` (within `window`, for the
/// solver's tolerances) and the largest value below that one; that smallest value when none
/// is below it, `b` when none is above. With `window` = eps_min / 2 and the problem's
/// integrality tolerance ([`OctProblem::integrality_tolerance`]) the values that go left,
/// at most `b - eps_j` plus less than eps_min / 4, are all below the window.
pub fn axis_threshold(values: impl Iterator<Item = f64>, b: f64, window: f64) -> f64 {
    let values: Vec<f64> = values.collect();
    let above = values
        .iter()
        .copied()
        .filter(|&v| v >= b - window)
        .fold(f64::INFINITY, f64::min);
    if !above.is_finite() {
        return b;
    }
    let below = values
        .iter()
        .copied()
        .filter(|&v| v < above)
        .fold(f64::NEG_INFINITY, f64::max);
    if below.is_finite() {
        0.5 * (above + below)
    } else {
        above
    }
}

/// The leaf a point reaches, given for each branch node whether the point goes left
/// (`Some(true)`), right (`Some(false)`) or the node does not split (`None`: right).
pub fn route(shape: &TreeShape, mut goes_left: impl FnMut(usize) -> Option<bool>) -> usize {
    let branches = shape.num_branches();
    let mut node = 0;
    while node < branches {
        node = if goes_left(node) == Some(true) {
            2 * node + 1
        } else {
            2 * node + 2
        };
    }
    node - branches
}

/// The index of the largest count (the lowest index among ties).
pub fn argmax(counts: &[usize]) -> usize {
    let mut best = 0;
    for (c, &v) in counts.iter().enumerate() {
        if v > counts[best] {
            best = c;
        }
    }
    best
}
