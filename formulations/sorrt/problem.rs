//! The S-ORRT smooth NLP (3)-(5) of Blanquero, Carrizosa, Molero-Río and Romero Morales,
//! "On Sparse Optimal Regression Trees" (EJOR 2022), with the cost-sensitivity and fairness
//! constraints of its Section 2.4.
//!
//! The tree has |tau_B| branch nodes and |tau_L| leaves; "nodes" below means all
//! |tau_B| + |tau_L| of them, branch nodes first (node `t < |tau_B|` is branch t, node
//! `|tau_B| + l` is leaf l). Every node t has coefficients a_.t (p) and a scalar mu_t: a
//! branch node sends x left with probability p_t(x) = F(a_.t.x / p - mu_t), F the logistic
//! CDF of slope gamma; a leaf predicts a_.t.x - mu_t; the tree predicts (2)
//! phi(x) = sum_l P_l(x) (a_.l.x - mu_l).
//!
//! Variables, in this order (`Layout`):
//! - `a+`, `a-` (p x nodes each, node-major) when lambda_L > 0, so that |a| = a+ + a- as
//!   in (3) and (5); when lambda_L = 0 a single `a` replaces them (the l1 term is absent, and
//!   the pair would leave a flat direction a+ = a- + c that an interior-point barrier has no
//!   minimum along). Branch coefficients lie in [-1, 1] (a+, a- in [0, 1]), as the paper
//!   restricts a_B; leaf coefficients are free (a+, a- >= 0), as the paper leaves them.
//! - `mu` (nodes): mu_B in [-1, 1], mu_L free (the leaf intercepts).
//! - `beta` (p, >= 0), only when lambda_G > 0, with the constraints (4)
//!   beta_j >= a+_jt + a-_jt (split layout) or beta_j >= a_jt and beta_j >= -a_jt (the
//!   S-ORCT paper's (17)-(18), single-`a` layout), over branch and leaf nodes. With
//!   lambda_G = 0 beta and (4) do not change the problem (any `a` has a feasible beta at zero
//!   cost), so they are left out; this is our choice, as in S-ORCT.
//!
//! Every smooth function of the problem, the MSE of the objective and each constraint of
//! Section 2.4, has the form
//! `g(a, mu) = sum_i q_i (phi_i - y_i)^2 + l_i phi_i` for per-sample weights q and l
//! ([`SmoothRow`]): MSE(J) <= rho has q = [i in J] / |J|; |MSE(S) - MSE(I)| <= C has
//! q = [i in S] / |S| - 1/N; (6) |mean phi(S) - mean phi(I)| <= C has
//! l = [i in S] / |S| - 1/N. Each fairness constraint |g| <= C is the pair of smooth
//! inequalities g <= C and -g <= C; the NLP contract writes the pair as one row with both
//! bounds, -C <= g <= C (at C = 0 IPOPT then sees one equality instead of two opposed
//! inequalities whose gradients are linearly dependent, which breaks its constraint
//! qualification).
//!
//! Hence the "phi with weights" trick: the gradient of g is `G^T w` with G (N x smooth) the
//! gradients of the predictions phi_i and `w_i = 2 q_i (phi_i - y_i) + l_i`, and the
//! Hessian of the Lagrangian `obj_factor * f + sum_c lambda_c g_c` is
//! `G^T diag(v) G + sum_i u_i Hess(phi_i)` with the combined first- and second-order weights
//! u and v: one routine computes every second derivative, exactly. Hess(phi_i) has two
//! kinds of blocks: branch-branch (the second derivatives of the leaf probabilities, weighted
//! by the leaf predictions) and branch-leaf (phi is linear in a leaf's parameters).

use super::fused::logistic;
use super::SorrtParams;
use crate::coefficients::{BetaLinks, CoefficientBlock};
use glassbox_core::linalg::{tr_mul, tr_mul_vector};
use glassbox_core::nlp::{NlpProblem, PointCache};
use glassbox_core::tree::TreeShape;
use nalgebra::DMatrix;
use std::sync::{Arc, OnceLock};

/// From this many training rows on, the objective and its gradient take the fused pass
/// (see [`SorrtProblem::uses_fused`]).
pub(crate) const FUSED_MIN_ROWS: usize = 10_000;

/// Where each group of variables starts in the NLP's variable vector.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub p: usize,
    pub branches: usize,
    pub leaves: usize,
    /// branches + leaves.
    pub nodes: usize,
    /// Whether `a` is split into `a+` and `a-` (lambda_L > 0).
    pub split: bool,
    /// Whether the beta variables are present (lambda_G > 0).
    pub beta: bool,
    /// Bounds on the leaf coefficients |a_jl| and intercepts |mu_l| (infinite: free).
    pub leaf_coefficient_bound: f64,
    pub leaf_intercept_bound: f64,
    pub a_minus: usize,
    pub mu: usize,
    pub beta_at: usize,
    pub n: usize,
}

impl Layout {
    fn new(p: usize, shape: &TreeShape, split: bool, beta: bool, leaf: (f64, f64)) -> Self {
        let branches = shape.num_branches();
        let leaves = shape.num_leaves();
        let nodes = branches + leaves;
        let pn = p * nodes;
        let a_minus = if split { pn } else { 0 };
        let mu = if split { 2 * pn } else { pn };
        let beta_at = mu + nodes;
        let n = beta_at + if beta { p } else { 0 };
        Layout {
            p,
            branches,
            leaves,
            nodes,
            split,
            beta,
            leaf_coefficient_bound: leaf.0,
            leaf_intercept_bound: leaf.1,
            a_minus,
            mu,
            beta_at,
            n,
        }
    }

    /// Index of a_jt (or a+_jt) for node t (branch nodes first, then leaves).
    pub fn a(&self, j: usize, t: usize) -> usize {
        self.node_coefficients().plus_index(j, t)
    }

    /// Index of a-_jt (only when `split`).
    pub fn a_neg(&self, j: usize, t: usize) -> usize {
        self.node_coefficients().minus_index(j, t)
    }

    /// Whether node t is a branch node.
    fn is_branch(&self, t: usize) -> bool {
        t < self.branches
    }

    /// Every node's coefficients a (a+ and a-).
    pub(crate) fn node_coefficients(&self) -> CoefficientBlock {
        CoefficientBlock {
            p: self.p,
            columns: self.nodes,
            split: self.split,
            plus: 0,
            minus: self.a_minus,
        }
    }

    /// The rows (4) over every node, when beta is present.
    pub(crate) fn beta_links(&self) -> Option<BetaLinks> {
        self.beta
            .then(|| self.node_coefficients().beta_links(self.beta_at))
    }

    /// The coefficients a (p x nodes) at `x`.
    pub fn coefficients(&self, x: &[f64]) -> DMatrix<f64> {
        self.node_coefficients().matrix(x)
    }

    /// mu (nodes) at `x`.
    pub fn locations(&self, x: &[f64]) -> Vec<f64> {
        x[self.mu..self.mu + self.nodes].to_vec()
    }

    /// Size of the "smooth" space (a, mu) the predictions depend on: index `t * p + j` for
    /// a_jt, then `p * nodes + t` for mu_t.
    pub fn smooth_len(&self) -> usize {
        (self.p + 1) * self.nodes
    }

    /// The smooth indices of node t's parameters: (a_.t, mu_t), p + 1 of them.
    fn node_smooth(&self, t: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.p)
            .map(move |j| t * self.p + j)
            .chain(std::iter::once(self.p * self.nodes + t))
    }

    /// The NLP variables a smooth variable stands for, with the sign of its derivative.
    fn real_of_smooth(&self, s: usize) -> Vec<(usize, f64)> {
        let pn = self.p * self.nodes;
        if s < pn {
            if self.split {
                vec![(s, 1.0), (self.a_minus + s, -1.0)]
            } else {
                vec![(s, 1.0)]
            }
        } else {
            vec![(self.mu + (s - pn), 1.0)]
        }
    }
}

/// One smooth function `g = sum_i quad_i (phi_i - y_i)^2 + lin_i phi_i` over the training
/// rows, with bounds when it is a constraint (see the module comment).
#[derive(Clone, Debug)]
pub(crate) struct SmoothRow {
    /// What it is, for messages ("MSE(J_1) <= rho", ...).
    pub label: String,
    pub quad: Vec<f64>,
    pub lin: Vec<f64>,
    pub lower: f64,
    pub upper: f64,
}

impl SmoothRow {
    fn value(&self, phi: &[f64], y: &[f64]) -> f64 {
        phi.iter()
            .zip(y)
            .zip(self.quad.iter().zip(&self.lin))
            .map(|((f, y), (q, l))| q * (f - y) * (f - y) + l * f)
            .sum()
    }

    /// dg/dphi_i.
    fn first(&self, phi: &[f64], y: &[f64]) -> Vec<f64> {
        (0..phi.len())
            .map(|i| 2.0 * self.quad[i] * (phi[i] - y[i]) + self.lin[i])
            .collect()
    }
}

/// Everything the tree computes for a set of (scaled) rows at one parameter point: routing
/// probabilities, leaf predictions, the prediction and its derivatives in the branch
/// scores z_it = a_.t.x_i / p - mu_t.
pub(crate) struct TreeEval {
    /// p_it = F(z_it), the probability of going left at branch t (N x |tau_B|).
    pub left: DMatrix<f64>,
    /// P_il, the probability of reaching leaf l (N x |tau_L|).
    pub reach: DMatrix<f64>,
    /// r_il = a_.l.x_i - mu_l, leaf l's prediction (N x |tau_L|).
    pub leaf_pred: DMatrix<f64>,
    /// phi_i = sum_l P_il r_il.
    pub phi: Vec<f64>,
}

/// First (and second) derivatives of the leaf probabilities in the branch scores.
pub(crate) struct TreeDerivs {
    /// F''(z_it) (N x |tau_B|).
    pub d2: DMatrix<f64>,
    /// F'(z_it) (N x |tau_B|).
    pub d1: DMatrix<f64>,
    /// dP_il / dz_{i, path(l)[d]}, column `l * D + d` (N x |tau_L| D).
    pub dreach: DMatrix<f64>,
    /// dphi_i / dz_it = sum_l r_il dP_il/dz_it (N x |tau_B|).
    pub dphi_dz: DMatrix<f64>,
}

/// (min, max) of `y`.
pub(crate) fn target_range(y: &[f64]) -> (f64, f64) {
    y.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(*v), hi.max(*v))
        })
}

/// Evaluates the tree (a: p x nodes, mu: nodes) on scaled rows `x`.
pub(crate) fn evaluate(
    x: &DMatrix<f64>,
    a: &DMatrix<f64>,
    mu: &[f64],
    gamma: f64,
    shape: &TreeShape,
) -> TreeEval {
    let (n, p) = (x.nrows(), x.ncols());
    let branches = shape.num_branches();
    let leaves = shape.num_leaves();
    let scores = x * a;
    let left = DMatrix::from_fn(n, branches, |i, t| {
        logistic(gamma * (scores[(i, t)] / p as f64 - mu[t]))
    });
    let mut reach = DMatrix::from_element(n, leaves, 1.0);
    for l in 0..leaves {
        for &(t, goes_left) in shape.path(l) {
            for i in 0..n {
                reach[(i, l)] *= if goes_left {
                    left[(i, t)]
                } else {
                    1.0 - left[(i, t)]
                };
            }
        }
    }
    let leaf_pred = DMatrix::from_fn(n, leaves, |i, l| {
        scores[(i, branches + l)] - mu[branches + l]
    });
    let phi = (0..n)
        .map(|i| (0..leaves).map(|l| reach[(i, l)] * leaf_pred[(i, l)]).sum())
        .collect();
    TreeEval {
        left,
        reach,
        leaf_pred,
        phi,
    }
}

/// The derivatives of [`TreeEval`] in the branch scores.
pub(crate) fn derivatives(ev: &TreeEval, gamma: f64, shape: &TreeShape) -> TreeDerivs {
    let n = ev.left.nrows();
    let depth = shape.depth();
    let leaves = shape.num_leaves();
    let d1 = ev.left.map(|pl| gamma * pl * (1.0 - pl));
    let d2 = ev
        .left
        .map(|pl| gamma * gamma * pl * (1.0 - pl) * (1.0 - 2.0 * pl));
    let mut dreach = DMatrix::zeros(n, leaves * depth);
    let mut dphi_dz = DMatrix::zeros(n, shape.num_branches());
    let mut q = vec![0.0; depth];
    for i in 0..n {
        for l in 0..leaves {
            let path = shape.path(l);
            for (d, &(t, goes_left)) in path.iter().enumerate() {
                q[d] = if goes_left {
                    ev.left[(i, t)]
                } else {
                    1.0 - ev.left[(i, t)]
                };
            }
            for (d, &(t, goes_left)) in path.iter().enumerate() {
                let others: f64 = (0..depth).filter(|&e| e != d).map(|e| q[e]).product();
                let sign = if goes_left { 1.0 } else { -1.0 };
                let v = sign * d1[(i, t)] * others;
                dreach[(i, l * depth + d)] = v;
                dphi_dz[(i, t)] += v * ev.leaf_pred[(i, l)];
            }
        }
    }
    TreeDerivs {
        d2,
        d1,
        dreach,
        dphi_dz,
    }
}

/// The gradient of the prediction with respect to the scaled features of every row
/// (N x p): `sum_l P_l a_.l + sum_t dphi/dz_t a_.t / p`, the local explanation (7).
/// `ev` is the tree's evaluation on those rows ([`evaluate`]).
pub(crate) fn feature_gradient(
    ev: &TreeEval,
    a: &DMatrix<f64>,
    gamma: f64,
    shape: &TreeShape,
) -> DMatrix<f64> {
    let dv = derivatives(ev, gamma, shape);
    let (n, p) = (ev.reach.nrows(), a.nrows());
    let branches = shape.num_branches();
    let a_branch = a.columns(0, branches);
    let a_leaf = a.columns(branches, shape.num_leaves());
    let mut out = &ev.reach * a_leaf.transpose();
    out += &dv.dphi_dz * a_branch.transpose() / p as f64;
    debug_assert_eq!(out.shape(), (n, p));
    out
}

/// The cached evaluation at one NLP point.
struct Forward {
    ev: TreeEval,
    derivs: OnceLock<TreeDerivs>,
    /// G (N x smooth): the gradient of phi_i in the smooth variables.
    jac: OnceLock<DMatrix<f64>>,
}

/// One S-ORRT instance: scaled training data, parameters, variable layout, constraints.
pub struct SorrtProblem {
    pub(crate) x: Arc<DMatrix<f64>>,
    pub(crate) y: Arc<Vec<f64>>,
    pub(crate) shape: TreeShape,
    pub(crate) params: SorrtParams,
    pub(crate) layout: Layout,
    /// The objective's MSE (quad = 1/N).
    mse: SmoothRow,
    /// The constraints of Section 2.4, in order.
    pub(crate) rows: Vec<SmoothRow>,
    /// The smallest expected number of training rows per leaf (`sum_i P_il >= this`), when
    /// the minimum leaf size is on (see `SorrtConfig::min_leaf_fraction`).
    min_leaf: Option<f64>,
    /// [X/p, -1] and [X, -1] (N x (p+1)): the gradients of a branch score and of a leaf
    /// prediction in that node's (a_.t, mu_t). Built when first needed (never by the
    /// objective and its gradient on large data, which take the fused pass).
    x_branch: OnceLock<DMatrix<f64>>,
    x_leaf: OnceLock<DMatrix<f64>>,
    hessian: HessianMap,
    cache: PointCache<Forward>,
    /// The MSE and its gradient in the smooth variables at the last point (`fused`).
    mse_cache: PointCache<(f64, Vec<f64>)>,
    /// The features random starts draw split directions on (`SorrtConfig::start_features`;
    /// `None`: all).
    pub(crate) start_features: Option<Vec<usize>>,
}

/// The Hessian's structure in NLP variables: for each entry, the smooth-space entry it
/// copies and the sign it takes (a- enters with a minus).
struct HessianMap {
    structure: Vec<(usize, usize)>,
    source: Vec<(usize, usize, f64)>,
}

impl SorrtProblem {
    /// Builds the NLP on scaled features `x` (N x p) and targets `y`, with the constraint
    /// rows already resolved to training rows. The caller (`SorrtConfig::problem`) has
    /// validated them.
    pub(crate) fn new(
        x: Arc<DMatrix<f64>>,
        y: Arc<Vec<f64>>,
        params: SorrtParams,
        rows: Vec<SmoothRow>,
        min_leaf: Option<f64>,
    ) -> Self {
        let shape = TreeShape::new(params.depth);
        let (n, p) = (x.nrows(), x.ncols());
        let layout = Layout::new(
            p,
            &shape,
            params.lambda_local > 0.0,
            params.lambda_global > 0.0,
            params.leaf_bounds,
        );
        let mse = SmoothRow {
            label: "MSE".into(),
            quad: vec![1.0 / n as f64; n],
            lin: vec![0.0; n],
            lower: f64::NEG_INFINITY,
            upper: f64::INFINITY,
        };
        let hessian = hessian_map(&layout);
        SorrtProblem {
            x,
            y,
            shape,
            params,
            layout,
            mse,
            rows,
            min_leaf,
            x_branch: OnceLock::new(),
            x_leaf: OnceLock::new(),
            hessian,
            cache: PointCache::default(),
            mse_cache: PointCache::default(),
            start_features: None,
        }
    }

    /// [X/p, -1] (see the field).
    fn x_branch(&self) -> &DMatrix<f64> {
        self.x_branch.get_or_init(|| {
            let (n, p) = (self.x.nrows(), self.x.ncols());
            DMatrix::from_fn(n, p + 1, |i, j| {
                if j < p {
                    self.x[(i, j)] / p as f64
                } else {
                    -1.0
                }
            })
        })
    }

    /// [X, -1] (see the field).
    fn x_leaf(&self) -> &DMatrix<f64> {
        self.x_leaf.get_or_init(|| {
            let (n, p) = (self.x.nrows(), self.x.ncols());
            DMatrix::from_fn(n, p + 1, |i, j| if j < p { self.x[(i, j)] } else { -1.0 })
        })
    }

    /// Whether the objective and its gradient take the fused pass (`fused`): from
    /// [`FUSED_MIN_ROWS`] rows on. Below, they come from the cached forward pass that IPOPT's
    /// Hessian at the same point reuses (one pass serves all three, and IPOPT's iterates
    /// stay those of the results already published for the small data sets).
    fn uses_fused(&self) -> bool {
        self.x.nrows() >= FUSED_MIN_ROWS
    }

    /// The gradient of the MSE in the smooth variables at `x`.
    fn mse_gradient(&self, x: &[f64]) -> Vec<f64> {
        if self.uses_fused() {
            self.mse_and_gradient(x).1.clone()
        } else {
            self.smooth_gradient(&self.forward(x), &self.mse)
        }
    }

    /// The MSE and its gradient in the smooth variables at `x`, in one parallel pass over
    /// the rows (`fused`), cached by the point.
    fn mse_and_gradient(&self, x: &[f64]) -> Arc<(f64, Vec<f64>)> {
        self.mse_cache.get_or_compute(x, || {
            let lay = &self.layout;
            let a = lay.coefficients(x);
            let mu = lay.locations(x);
            let tree = super::fused::TreeParams {
                a: &a,
                mu: &mu,
                gamma: self.params.gamma,
                branches: lay.branches,
            };
            let mut grad = vec![0.0; lay.smooth_len()];
            let value = super::fused::mse_and_gradient(&self.x, &self.y, &tree, Some(&mut grad));
            (value, grad)
        })
    }

    /// The resolved parameters.
    pub fn params(&self) -> &SorrtParams {
        &self.params
    }

    /// The labels of the constraints of Section 2.4, in row order after the rows (4).
    pub fn constraint_labels(&self) -> Vec<String> {
        self.rows.iter().map(|r| r.label.clone()).collect()
    }

    fn forward(&self, x: &[f64]) -> Arc<Forward> {
        self.cache.get_or_compute(x, || {
            let lay = &self.layout;
            let a = lay.coefficients(x);
            let mu = lay.locations(x);
            Forward {
                ev: evaluate(&self.x, &a, &mu, self.params.gamma, &self.shape),
                derivs: OnceLock::new(),
                jac: OnceLock::new(),
            }
        })
    }

    fn derivs<'a>(&self, f: &'a Forward) -> &'a TreeDerivs {
        f.derivs
            .get_or_init(|| derivatives(&f.ev, self.params.gamma, &self.shape))
    }

    /// G: row i is the gradient of phi_i in the smooth variables.
    fn jac<'a>(&self, f: &'a Forward) -> &'a DMatrix<f64> {
        f.jac.get_or_init(|| {
            let lay = &self.layout;
            let dv = self.derivs(f);
            let n = self.x.nrows();
            let (x_branch, x_leaf) = (self.x_branch(), self.x_leaf());
            let mut g = DMatrix::zeros(n, lay.smooth_len());
            for t in 0..lay.nodes {
                for (c, s) in lay.node_smooth(t).enumerate() {
                    for i in 0..n {
                        g[(i, s)] = if lay.is_branch(t) {
                            dv.dphi_dz[(i, t)] * x_branch[(i, c)]
                        } else {
                            f.ev.reach[(i, t - lay.branches)] * x_leaf[(i, c)]
                        };
                    }
                }
            }
            g
        })
    }

    /// The gradient of `row` in the smooth variables.
    fn smooth_gradient(&self, f: &Forward, row: &SmoothRow) -> Vec<f64> {
        let w = row.first(&f.ev.phi, &self.y);
        let g = tr_mul_vector(self.jac(f), &w);
        g.iter().copied().collect()
    }

    /// The Hessian over the smooth variables (dense, symmetric) of
    /// `sum_rows weight_r * g_r`.
    fn smooth_hessian(
        &self,
        f: &Forward,
        weighted: &[(&SmoothRow, f64)],
        leaf_mass: &[f64],
    ) -> DMatrix<f64> {
        let lay = &self.layout;
        let n = self.x.nrows();
        let depth = self.shape.depth();
        let (phi, y) = (&f.ev.phi, &*self.y);
        // u_i = d L / d phi_i, v_i = d^2 L / d phi_i^2.
        let mut u = vec![0.0; n];
        let mut v = vec![0.0; n];
        for &(row, w) in weighted {
            if w == 0.0 {
                continue;
            }
            for i in 0..n {
                u[i] += w * (2.0 * row.quad[i] * (phi[i] - y[i]) + row.lin[i]);
                v[i] += w * 2.0 * row.quad[i];
            }
        }
        // Gauss-Newton part: G^T diag(v) G.
        let g = self.jac(f);
        let mut gv = g.clone();
        for (i, vi) in v.iter().enumerate() {
            gv.row_mut(i).scale_mut(*vi);
        }
        let mut h = tr_mul(g, &gv);
        let dv = self.derivs(f);
        let p1 = lay.p + 1;
        let mut scaled = DMatrix::zeros(n, p1);
        // Adds sum_i w_i A_i B_i^T to the block (rows of node r, columns of node c) and
        // its transpose.
        let mut add_block = |h: &mut DMatrix<f64>,
                             r: usize,
                             c: usize,
                             w: &[f64],
                             a: &DMatrix<f64>,
                             b: &DMatrix<f64>| {
            for col in 0..p1 {
                for i in 0..n {
                    scaled[(i, col)] = w[i] * b[(i, col)];
                }
            }
            let block = tr_mul(a, &scaled);
            let rows: Vec<usize> = lay.node_smooth(r).collect();
            let cols: Vec<usize> = lay.node_smooth(c).collect();
            for (bi, &ri) in rows.iter().enumerate() {
                for (bj, &cj) in cols.iter().enumerate() {
                    h[(ri, cj)] += block[(bi, bj)];
                    if r != c {
                        h[(cj, ri)] += block[(bi, bj)];
                    }
                }
            }
        };
        // Branch-branch: sum_i u_i sum_l r_il d^2 P_il / dz_t dz_u.
        let pairs = self.shape.related_pairs();
        let mut hz = vec![vec![0.0; n]; pairs.len()];
        let pair_index = |t: usize, s: usize| {
            pairs
                .iter()
                .position(|&pr| pr == (t.min(s), t.max(s)))
                .unwrap_or(0)
        };
        let mut q = vec![0.0; depth];
        let mut sg = vec![0.0; depth];
        for (l, &mass) in leaf_mass.iter().enumerate() {
            let path = self.shape.path(l);
            let pidx: Vec<Vec<usize>> = (0..depth)
                .map(|d1| {
                    (0..depth)
                        .map(|d2| pair_index(path[d1].0, path[d2].0))
                        .collect()
                })
                .collect();
            for i in 0..n {
                let c = u[i] * f.ev.leaf_pred[(i, l)] + mass;
                if c == 0.0 {
                    continue;
                }
                for (d, &(t, goes_left)) in path.iter().enumerate() {
                    q[d] = if goes_left {
                        f.ev.left[(i, t)]
                    } else {
                        1.0 - f.ev.left[(i, t)]
                    };
                    sg[d] = if goes_left { 1.0 } else { -1.0 };
                }
                for d in 0..depth {
                    let t = path[d].0;
                    let others: f64 = (0..depth).filter(|&e| e != d).map(|e| q[e]).product();
                    hz[pidx[d][d]][i] += c * sg[d] * dv.d2[(i, t)] * others;
                    for d2 in 0..d {
                        let s = path[d2].0;
                        let rest: f64 = (0..depth)
                            .filter(|&e| e != d && e != d2)
                            .map(|e| q[e])
                            .product();
                        hz[pidx[d][d2]][i] +=
                            c * sg[d] * sg[d2] * dv.d1[(i, t)] * dv.d1[(i, s)] * rest;
                    }
                }
            }
        }
        for (k, &(t, s)) in pairs.iter().enumerate() {
            add_block(&mut h, s, t, &hz[k], self.x_branch(), self.x_branch());
        }
        // Branch-leaf: d^2 phi_i / d(leaf l) d z_t = dP_il/dz_t [x_i, -1].
        let mut w = vec![0.0; n];
        for l in 0..lay.leaves {
            for (d, &(t, _)) in self.shape.path(l).iter().enumerate() {
                for i in 0..n {
                    w[i] = u[i] * dv.dreach[(i, l * depth + d)];
                }
                add_block(
                    &mut h,
                    lay.branches + l,
                    t,
                    &w,
                    self.x_leaf(),
                    self.x_branch(),
                );
            }
        }
        h
    }

    /// The sparsest tree of Proposition 2 as an NLP point: a = 0, mu_B = 0 and every leaf
    /// predicting mean(y) (mu_L = -mean(y), Corollary 1).
    pub fn sparsest_tree(&self) -> Vec<f64> {
        let lay = &self.layout;
        let mean = self.y.iter().sum::<f64>() / self.y.len() as f64;
        let mut mu = vec![0.0; lay.nodes];
        mu[lay.branches..].fill(-mean);
        super::starts::point(self, &DMatrix::zeros(lay.p, lay.nodes), &mu)
    }

    /// Whether the sparsest tree ([`SorrtProblem::sparsest_tree`]) is a stationary point of
    /// (1) with this problem's lambdas: the MSE's gradient in mu vanishes (to `tol`) and,
    /// for every feature j, `0 in grad_{a_j.} MSE + lambda_L d||a_j.||_1 + lambda_G
    /// d||a_j.||_inf` at a_j. = 0, i.e. `sum_t max(0, |g_jt| - lambda_L) <= lambda_G + tol`.
    /// The constraints of Section 2.4 are not considered.
    pub fn sparsest_tree_is_stationary(&self, tol: f64) -> bool {
        let lay = &self.layout;
        let f = self.forward(&self.sparsest_tree());
        let g = self.smooth_gradient(&f, &self.mse);
        let pn = lay.p * lay.nodes;
        if g[pn..].iter().any(|v| v.abs() > tol) {
            return false;
        }
        (0..lay.p).all(|j| {
            let excess: f64 = (0..lay.nodes)
                .map(|t| (g[lay.a(j, t)].abs() - self.params.lambda_local).max(0.0))
                .sum();
            excess <= self.params.lambda_global + tol
        })
    }

    /// (min, max) of the training targets.
    pub fn target_range(&self) -> (f64, f64) {
        target_range(&self.y)
    }

    /// The mean squared error on the training rows at NLP point `x`.
    pub fn mse(&self, x: &[f64]) -> f64 {
        if self.uses_fused() {
            self.mse_and_gradient(x).0
        } else {
            let f = self.forward(x);
            self.mse.value(&f.ev.phi, &self.y)
        }
    }

    /// The predictions phi_i on the training rows at NLP point `x`.
    pub fn predictions(&self, x: &[f64]) -> Vec<f64> {
        self.forward(x).ev.phi.clone()
    }

    /// The value of each constraint of Section 2.4 at `x`, with its bounds.
    pub fn constraint_report(&self, x: &[f64]) -> Vec<(String, f64, f64, f64)> {
        let f = self.forward(x);
        self.rows
            .iter()
            .map(|r| {
                (
                    r.label.clone(),
                    r.value(&f.ev.phi, &self.y),
                    r.lower,
                    r.upper,
                )
            })
            .collect()
    }

    fn scatter_smooth(&self, g: &[f64], out: &mut [f64]) {
        for (s, &v) in g.iter().enumerate() {
            for (r, sign) in self.layout.real_of_smooth(s) {
                out[r] += sign * v;
            }
        }
    }

    /// The gradient of leaf l's expected size sum_i P_il in the smooth variables.
    fn leaf_mass_gradient(&self, f: &Forward, l: usize) -> Vec<f64> {
        let lay = &self.layout;
        let depth = self.shape.depth();
        let dv = self.derivs(f);
        let mut g = vec![0.0; lay.smooth_len()];
        let x_branch = self.x_branch();
        for (d, &(t, _)) in self.shape.path(l).iter().enumerate() {
            for (c, s) in lay.node_smooth(t).enumerate() {
                g[s] = (0..self.x.nrows())
                    .map(|i| dv.dreach[(i, l * depth + d)] * x_branch[(i, c)])
                    .sum();
            }
        }
        g
    }

    /// Number of leaf-size rows (after the smooth rows).
    fn leaf_rows(&self) -> usize {
        if self.min_leaf.is_some() {
            self.layout.leaves
        } else {
            0
        }
    }

    /// Number of rows (4) before the smooth rows.
    fn beta_rows(&self) -> usize {
        self.layout.beta_links().map_or(0, |b| b.rows())
    }

    /// Whether the tree at `x` meets the constraints the user set (Section 2.4's rows and
    /// the minimum leaf size) on the training rows, to `tolerance`. The rows of (4), which
    /// tie beta to the coefficients, are left out: they constrain a variable, not the tree.
    pub(crate) fn meets_user_constraints(&self, x: &[f64], tolerance: f64) -> bool {
        let first = self.beta_rows();
        if self.num_constraints() == first {
            return true;
        }
        let mut g = vec![0.0; self.num_constraints()];
        self.constraints(x, &mut g);
        let (lower, upper) = self.constraint_bounds();
        (first..g.len()).all(|r| g[r] >= lower[r] - tolerance && g[r] <= upper[r] + tolerance)
    }

    /// The NLP columns a smooth row's Jacobian covers (every real smooth-backed variable).
    fn smooth_columns(&self) -> usize {
        self.layout.beta_at
    }
}

/// The Hessian structure: the whole lower triangle over the smooth-backed NLP variables
/// (the Gauss-Newton term couples every pair), each entry mapped to its smooth entry.
fn hessian_map(lay: &Layout) -> HessianMap {
    let mut real: Vec<(usize, usize, f64)> = Vec::new();
    for s in 0..lay.smooth_len() {
        for (r, sign) in lay.real_of_smooth(s) {
            real.push((r, s, sign));
        }
    }
    real.sort_by_key(|e| e.0);
    let mut structure = Vec::new();
    let mut source = Vec::new();
    for (k, &(r1, s1, g1)) in real.iter().enumerate() {
        for &(r2, s2, g2) in &real[..=k] {
            structure.push((r1, r2));
            source.push((s1, s2, g1 * g2));
        }
    }
    HessianMap { structure, source }
}

impl NlpProblem for SorrtProblem {
    fn num_variables(&self) -> usize {
        self.layout.n
    }

    fn num_constraints(&self) -> usize {
        self.beta_rows() + self.rows.len() + self.leaf_rows()
    }

    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        let lay = &self.layout;
        let mut lower = vec![f64::NEG_INFINITY; lay.n];
        let mut upper = vec![f64::INFINITY; lay.n];
        for t in 0..lay.nodes {
            for j in 0..lay.p {
                let leaf = lay.leaf_coefficient_bound;
                let (lo, hi) = match (lay.split, lay.is_branch(t)) {
                    (true, true) => (0.0, 1.0),
                    (true, false) => (0.0, leaf),
                    (false, true) => (-1.0, 1.0),
                    (false, false) => (-leaf, leaf),
                };
                lower[lay.a(j, t)] = lo;
                upper[lay.a(j, t)] = hi;
                if lay.split {
                    lower[lay.a_neg(j, t)] = lo;
                    upper[lay.a_neg(j, t)] = hi;
                }
            }
        }
        for t in 0..lay.nodes {
            let b = if lay.is_branch(t) {
                1.0
            } else {
                lay.leaf_intercept_bound
            };
            lower[lay.mu + t] = -b;
            upper[lay.mu + t] = b;
        }
        if lay.beta {
            lower[lay.beta_at..].fill(0.0);
        }
        (lower, upper)
    }

    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        let b = self.beta_rows();
        let mut lower = vec![0.0; b];
        let mut upper = vec![f64::INFINITY; b];
        for r in &self.rows {
            lower.push(r.lower);
            upper.push(r.upper);
        }
        if let Some(m) = self.min_leaf {
            lower.extend(std::iter::repeat_n(m, self.layout.leaves));
            upper.extend(std::iter::repeat_n(f64::INFINITY, self.layout.leaves));
        }
        (lower, upper)
    }

    fn objective(&self, x: &[f64]) -> f64 {
        let lay = &self.layout;
        let mut value = self.mse(x);
        if lay.split {
            value += self.params.lambda_local * x[..lay.mu].iter().sum::<f64>();
        }
        if lay.beta {
            value += self.params.lambda_global * x[lay.beta_at..].iter().sum::<f64>();
        }
        value
    }

    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        let lay = &self.layout;
        grad.fill(0.0);
        self.scatter_smooth(&self.mse_gradient(x), grad);
        if lay.split {
            grad[..lay.mu]
                .iter_mut()
                .for_each(|g| *g += self.params.lambda_local);
        }
        if lay.beta {
            grad[lay.beta_at..]
                .iter_mut()
                .for_each(|g| *g += self.params.lambda_global);
        }
    }

    fn constraints(&self, x: &[f64], g: &mut [f64]) {
        let lay = &self.layout;
        let mut row = 0;
        if let Some(links) = lay.beta_links() {
            links.values(x, &mut g[row..]);
            row += links.rows();
        }
        if !self.rows.is_empty() || self.min_leaf.is_some() {
            let f = self.forward(x);
            for r in &self.rows {
                g[row] = r.value(&f.ev.phi, &self.y);
                row += 1;
            }
            for l in 0..self.leaf_rows() {
                g[row] = f.ev.reach.column(l).sum();
                row += 1;
            }
        }
    }

    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        let lay = &self.layout;
        let mut s = Vec::new();
        let mut row = 0;
        if let Some(links) = lay.beta_links() {
            links.jacobian_structure(row, &mut s);
            row += links.rows();
        }
        for _ in 0..self.rows.len() + self.leaf_rows() {
            s.extend((0..self.smooth_columns()).map(|c| (row, c)));
            row += 1;
        }
        s
    }

    fn jacobian_values(&self, x: &[f64], values: &mut [f64]) {
        let lay = &self.layout;
        let mut at = 0;
        if let Some(links) = lay.beta_links() {
            at += links.jacobian_values(&mut values[at..]);
        }
        if self.rows.is_empty() && self.min_leaf.is_none() {
            return;
        }
        let f = self.forward(x);
        let cols = self.smooth_columns();
        let mut dense = vec![0.0; lay.n];
        let gradients = self
            .rows
            .iter()
            .map(|r| self.smooth_gradient(&f, r))
            .chain((0..self.leaf_rows()).map(|l| self.leaf_mass_gradient(&f, l)));
        for g in gradients {
            dense.fill(0.0);
            self.scatter_smooth(&g, &mut dense);
            values[at..at + cols].copy_from_slice(&dense[..cols]);
            at += cols;
        }
    }

    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        Some(self.hessian.structure.clone())
    }

    fn hessian_values(&self, x: &[f64], obj_factor: f64, lambda: &[f64], values: &mut [f64]) {
        let f = self.forward(x);
        let first = self.beta_rows();
        let mut weighted = vec![(&self.mse, obj_factor)];
        for (k, r) in self.rows.iter().enumerate() {
            weighted.push((r, lambda[first + k]));
        }
        let first_leaf = first + self.rows.len();
        let leaf_mass: Vec<f64> = (0..self.layout.leaves)
            .map(|l| {
                if self.min_leaf.is_some() {
                    lambda[first_leaf + l]
                } else {
                    0.0
                }
            })
            .collect();
        let h = self.smooth_hessian(&f, &weighted, &leaf_mass);
        for (v, &(s1, s2, sign)) in values.iter_mut().zip(&self.hessian.source) {
            *v = sign * h[(s1, s2)];
        }
    }

    fn name(&self) -> String {
        format!("sorrt(D={})", self.params.depth)
    }

    #[cfg(feature = "torch")]
    fn tensor_objective(&self) -> Option<&dyn glassbox_core::tensor::TensorObjective> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The fused, blocked, parallel MSE and gradient (`fused`) equal the N x smooth path
    /// (`evaluate`, `G^T w`) on several blocks of rows, at every depth.
    #[test]
    fn fused_mse_and_gradient_equal_the_jacobian_path() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let (n, p) = (2 * super::super::fused::BLOCK + 77, 4);
        let x = DMatrix::from_fn(n, p, |_, _| rng.random::<f64>());
        let y: Vec<f64> = (0..n)
            .map(|i| x[(i, 0)] - 2.0 * x[(i, 1)] + rng.random::<f64>())
            .collect();
        let (x, y) = (Arc::new(x), Arc::new(y));
        for depth in 1..=3 {
            let config = super::super::SorrtConfig {
                depth,
                gamma: 8.0,
                lambda_local: 0.01,
                ..Default::default()
            };
            let params = config.resolve(&x, &y).unwrap();
            let problem = SorrtProblem::new(x.clone(), y.clone(), params, Vec::new(), None);
            let (lo, hi) = problem.variable_bounds();
            let point: Vec<f64> = lo
                .iter()
                .zip(&hi)
                .map(|(l, h)| rng.random_range(l.max(-2.0)..=h.min(2.0)))
                .collect();
            let f = problem.forward(&point);
            let reference = problem.mse.value(&f.ev.phi, &y);
            let reference_grad = problem.smooth_gradient(&f, &problem.mse);
            let (value, grad) = &*problem.mse_and_gradient(&point);
            assert!(
                (value - reference).abs() <= 1e-12 * reference.max(1.0),
                "D={depth}"
            );
            for (s, (a, b)) in grad.iter().zip(&reference_grad).enumerate() {
                assert!(
                    (a - b).abs() <= 1e-10 * b.abs().max(1.0),
                    "D={depth}, {s}: {a} vs {b}"
                );
            }
        }
    }
}
