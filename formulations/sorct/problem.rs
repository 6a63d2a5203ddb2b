//! The S-ORCT smooth NLP (9)-(16) of Blanquero, Carrizosa, Molero-Río and Romero Morales,
//! "Sparsity in Optimal Randomized Classification Trees" (EJOR 2019), with the
//! simplification (17)-(18) when lambda_L = 0 and the per-class performance constraints (8).
//!
//! Variables, in this order (`Layout`):
//! - `a+`, `a-` (p x |tau_B| each, in [0, 1]) when lambda_L > 0, so that |a| = a+ + a-
//!   (13); when lambda_L = 0 a single `a` in [-1, 1] (4) replaces them, as the paper says;
//! - `mu` (|tau_B|, in [-1, 1]) (15);
//! - `C` (K x |tau_L|, in [0, 1]) (16);
//! - `beta` (p, in [0, 1]) (14), only when lambda_G > 0. With lambda_G = 0 the variables
//!   beta and constraints (12) / (17)-(18) do not change the problem (any `a` has a
//!   feasible beta at zero cost), so they are left out; this is our choice, documented here.
//!
//! Constraints: (10) sum_k C_kt = 1; (11) sum_t C_kt >= 1; (12) beta_j >= a+_jt + a-_jt or
//! (17)-(18) beta_j >= +-a_jt; (8) sum_{i in I_k} sum_t P_it C_kt >= rho_k |I_k| for the
//! classes with rho_k > 0.
//!
//! The objective and constraint (8) are both of the form
//! `Phi(a, mu, C; w) = sum_i sum_t P_it(a, mu) sum_k w_ik C_kt` for a weight matrix `w`
//! (w_ik = W_{y_i k} / N for the objective; w_ik = [y_i = k] [k = class] for (8)), so the
//! Hessian of the Lagrangian is the Hessian of Phi with the combined weights
//! `obj_factor * W/N + sum_k lambda_k [y_i = k]`: one routine computes every second
//! derivative, exactly.

use super::SorctParams;
use crate::coefficients::{BetaLinks, CoefficientBlock};
use glassbox_core::linalg::{column, column_mut, column_sums, tr_mul, tr_mul_vector};
use glassbox_core::nlp::{MaskedEvaluations, NlpProblem, PointCache};
use glassbox_core::tree::TreeShape;
use nalgebra::{DMatrix, DVector};
use std::sync::{Arc, Mutex};

/// Where each group of variables starts in the NLP's variable vector.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub p: usize,
    pub branches: usize,
    pub leaves: usize,
    pub classes: usize,
    /// Whether `a` is split into `a+` and `a-` (lambda_L > 0).
    pub split: bool,
    /// Whether the beta variables are present (lambda_G > 0).
    pub beta: bool,
    pub a_plus: usize,
    pub a_minus: usize,
    pub mu: usize,
    pub c: usize,
    pub beta_at: usize,
    pub n: usize,
}

impl Layout {
    fn new(p: usize, shape: &TreeShape, classes: usize, split: bool, beta: bool) -> Self {
        let branches = shape.num_branches();
        let leaves = shape.num_leaves();
        let pb = p * branches;
        let a_plus = 0;
        let a_minus = if split { pb } else { 0 };
        let mu = if split { 2 * pb } else { pb };
        let c = mu + branches;
        let beta_at = c + classes * leaves;
        let n = beta_at + if beta { p } else { 0 };
        Layout {
            p,
            branches,
            leaves,
            classes,
            split,
            beta,
            a_plus,
            a_minus,
            mu,
            c,
            beta_at,
            n,
        }
    }

    /// Index of coefficient a_jt (or a+_jt) in the variable vector: node-major.
    pub fn a(&self, j: usize, t: usize) -> usize {
        self.node_coefficients().plus_index(j, t)
    }

    /// Index of a-_jt (only when `split`).
    pub fn a_neg(&self, j: usize, t: usize) -> usize {
        self.node_coefficients().minus_index(j, t)
    }

    /// Index of C_kt.
    pub fn c(&self, k: usize, leaf: usize) -> usize {
        self.c + k * self.leaves + leaf
    }

    /// The coefficient matrix a (p x |tau_B|) at `x`.
    pub fn coefficients(&self, x: &[f64]) -> DMatrix<f64> {
        self.node_coefficients().matrix(x)
    }

    /// The branch nodes' coefficients a (a+ and a-).
    pub(crate) fn node_coefficients(&self) -> CoefficientBlock {
        CoefficientBlock {
            p: self.p,
            columns: self.branches,
            split: self.split,
            plus: self.a_plus,
            minus: self.a_minus,
        }
    }

    /// The rows (12) / (17)-(18) over the branch nodes, when beta is present.
    pub(crate) fn beta_links(&self) -> Option<BetaLinks> {
        self.beta
            .then(|| self.node_coefficients().beta_links(self.beta_at))
    }

    /// The class-probability matrix C (K x |tau_L|) at `x`.
    pub fn leaf_classes(&self, x: &[f64]) -> DMatrix<f64> {
        DMatrix::from_fn(self.classes, self.leaves, |k, l| x[self.c(k, l)])
    }

    /// Size of the "smooth" variable space (a, mu, C) on which the misclassification cost
    /// depends: index `t * p + j` for a_jt, then mu, then C.
    fn smooth_len(&self) -> usize {
        self.p * self.branches + self.branches + self.classes * self.leaves
    }
    fn s_mu(&self, t: usize) -> usize {
        self.p * self.branches + t
    }
    fn s_c(&self, k: usize, leaf: usize) -> usize {
        self.p * self.branches + self.branches + k * self.leaves + leaf
    }

    /// The NLP variables a smooth variable stands for, with the sign of its derivative.
    fn real_of_smooth(&self, s: usize) -> Vec<(usize, f64)> {
        let pb = self.p * self.branches;
        if s < pb {
            if self.split {
                vec![(self.a_plus + s, 1.0), (self.a_minus + s, -1.0)]
            } else {
                vec![(self.a_plus + s, 1.0)]
            }
        } else if s < pb + self.branches {
            vec![(self.mu + (s - pb), 1.0)]
        } else {
            vec![(self.c + (s - pb - self.branches), 1.0)]
        }
    }
}

/// The quantities of one evaluation point shared by the objective, gradient, constraints
/// and Hessian (IPOPT asks for them at the same point in turn).
pub(crate) struct Forward {
    pub(crate) c: DMatrix<f64>,
    /// p_it = F(z_it), the probability of going left at branch t (N x |tau_B|).
    pub(crate) left: DMatrix<f64>,
    /// F'(z_it) = gamma p (1 - p).
    pub(crate) d1: DMatrix<f64>,
    /// F''(z_it) = gamma^2 p (1 - p) (1 - 2p).
    pub(crate) d2: DMatrix<f64>,
    /// P_it, the probability of reaching leaf t (N x |tau_L|).
    pub(crate) reach: DMatrix<f64>,
}

impl Forward {
    /// The factors of P_il along the path of leaf l, one column (every row) per depth:
    /// p_it on a left turn, 1 - p_it on a right turn.
    fn path_columns(&self, path: &[(usize, bool)]) -> Vec<Vec<f64>> {
        path.iter()
            .map(|&(t, goes_left)| {
                let left = column(&self.left, t);
                if goes_left {
                    left.to_vec()
                } else {
                    left.iter().map(|pl| 1.0 - pl).collect()
                }
            })
            .collect()
    }
}

/// The branch nodes and leaves whose variables are free (see `phi_hessian`).
pub(crate) struct NodeMask {
    pub branches: Vec<bool>,
    pub leaves: Vec<bool>,
}

/// out_i = the product of row i's path factors `q` but those at depths `skip1` and
/// `skip2`, multiplied from 1.0 in path order (as `Iterator::product` would).
fn product_except(q: &[Vec<f64>], skip1: usize, skip2: usize, out: &mut [f64]) {
    out.fill(1.0);
    for (e, factors) in q.iter().enumerate() {
        if e != skip1 && e != skip2 {
            out.iter_mut().zip(factors).for_each(|(o, v)| *o *= v);
        }
    }
}

/// One S-ORCT instance: scaled training data, parameters, variable layout.
pub struct SorctProblem {
    pub(crate) x: Arc<DMatrix<f64>>,
    /// x transposed (p x N), for [`Self::xt_times`].
    xt: DMatrix<f64>,
    pub(crate) y: Arc<Vec<usize>>,
    pub(crate) shape: TreeShape,
    pub(crate) params: SorctParams,
    pub(crate) layout: Layout,
    /// Misclassification costs W (K x K, row = true class).
    pub(crate) costs: DMatrix<f64>,
    /// W_{y_i k} / N (N x K): the objective's weights.
    objective_weights: DMatrix<f64>,
    /// The classes with a performance constraint (8), with their right-hand sides.
    rho_rows: Vec<(usize, f64)>,
    /// The training rows of each class (I_k).
    members: Vec<Vec<usize>>,
    hessian: HessianMap,
    cache: PointCache<Forward>,
    /// Per branch node, its last (a_t, mu_t) and routing columns (see [`BranchColumns`]).
    branch_cache: Mutex<Vec<Option<CachedBranch>>>,
    /// `refit_support`'s multistart per support, run once for the split's starts.
    pub(crate) support_refits: super::support_refit::SupportRefits,
}

/// A branch node's (a_t, mu_t) and its routing columns there.
type CachedBranch = (Vec<f64>, Arc<BranchColumns>);

/// The routing of every row at one branch node: p_it, F'(z_it), F''(z_it) (length N each).
/// A decomposition subproblem fixes every branch node but one, so between its evaluations
/// these columns of the fixed nodes do not change: [`SorctProblem::forward`] keeps the last
/// columns of each node keyed by the node's exact (a_t, mu_t) and recomputes only the nodes
/// whose variables moved. Each column is always computed the same way (its own
/// matrix-vector product), so a cached column equals a recomputed one bit for bit.
pub(crate) struct BranchColumns {
    left: Vec<f64>,
    d1: Vec<f64>,
    d2: Vec<f64>,
}

/// The Hessian's structure in NLP variables, and for each entry the smooth-space entry it
/// copies and the sign it takes (a- enters with a minus).
struct HessianMap {
    structure: Vec<(usize, usize)>,
    source: Vec<(usize, usize, f64)>,
}

impl SorctProblem {
    /// Builds the NLP on scaled features `x` (N x p, in [0, 1] on the training rows) and
    /// class indices `y` in `0..classes`. The caller (`Sorct::problem`) has validated them.
    pub(crate) fn new(
        x: Arc<DMatrix<f64>>,
        y: Arc<Vec<usize>>,
        classes: usize,
        params: SorctParams,
        costs: DMatrix<f64>,
    ) -> Self {
        let (split, beta) = (params.lambda_local > 0.0, params.lambda_global > 0.0);
        Self::with_layout(x, y, classes, params, costs, split, beta)
    }

    /// The same problem with lambda_L = lambda_G = 0 on the same variables (its points are
    /// this problem's points): a refit of the tree without the penalty.
    pub(crate) fn without_penalty(&self) -> SorctProblem {
        let params = SorctParams {
            lambda_local: 0.0,
            lambda_global: 0.0,
            ..self.params.clone()
        };
        Self::with_layout(
            self.x.clone(),
            self.y.clone(),
            self.layout.classes,
            params,
            self.costs.clone(),
            self.layout.split,
            self.layout.beta,
        )
    }

    fn with_layout(
        x: Arc<DMatrix<f64>>,
        y: Arc<Vec<usize>>,
        classes: usize,
        params: SorctParams,
        costs: DMatrix<f64>,
        split: bool,
        beta: bool,
    ) -> Self {
        let shape = TreeShape::new(params.depth);
        let n = x.nrows();
        let layout = Layout::new(x.ncols(), &shape, classes, split, beta);
        let objective_weights = DMatrix::from_fn(n, classes, |i, k| costs[(y[i], k)] / n as f64);
        let mut members = vec![Vec::new(); classes];
        for (i, &k) in y.iter().enumerate() {
            members[k].push(i);
        }
        let rho_rows = params
            .rho
            .iter()
            .enumerate()
            .filter(|(_, r)| **r > 0.0)
            .map(|(k, r)| (k, r * members[k].len() as f64))
            .collect();
        let hessian = hessian_map(&layout, &shape);
        let branch_cache = Mutex::new(vec![None; layout.branches]);
        SorctProblem {
            xt: x.transpose(),
            x,
            y,
            shape,
            params,
            layout,
            costs,
            objective_weights,
            rho_rows,
            members,
            hessian,
            cache: PointCache::default(),
            branch_cache,
            support_refits: Default::default(),
        }
    }

    /// The shared quantities at `x` (cached per point).
    pub(crate) fn forward(&self, x: &[f64]) -> Arc<Forward> {
        self.cache.get_or_compute(x, || self.compute_forward(x))
    }

    fn compute_forward(&self, x: &[f64]) -> Forward {
        let lay = &self.layout;
        let a = lay.coefficients(x);
        let c = lay.leaf_classes(x);
        let n = self.x.nrows();
        let mut left = DMatrix::zeros(n, lay.branches);
        let mut d1 = DMatrix::zeros(n, lay.branches);
        let mut d2 = DMatrix::zeros(n, lay.branches);
        let mut cache = self.branch_cache.lock().unwrap_or_else(|e| e.into_inner());
        for t in 0..lay.branches {
            let mut key: Vec<f64> = a.column(t).iter().copied().collect();
            key.push(x[lay.mu + t]);
            let columns = match &cache[t] {
                Some((at, columns)) if *at == key => columns.clone(),
                _ => {
                    let columns = Arc::new(self.branch_columns(&key));
                    cache[t] = Some((key, columns.clone()));
                    columns
                }
            };
            column_mut(&mut left, t).copy_from_slice(&columns.left);
            column_mut(&mut d1, t).copy_from_slice(&columns.d1);
            column_mut(&mut d2, t).copy_from_slice(&columns.d2);
        }
        drop(cache);
        let reach = leaf_probabilities(&left, &self.shape);
        Forward {
            c,
            left,
            d1,
            d2,
            reach,
        }
    }

    /// The routing columns of one branch node with coefficients and location `a_mu`
    /// (p values of a_t, then mu_t).
    fn branch_columns(&self, a_mu: &[f64]) -> BranchColumns {
        let p = self.layout.p;
        let gamma = self.params.gamma;
        let a = DVector::from_column_slice(&a_mu[..p]);
        let z = &*self.x * a;
        let left: Vec<f64> = z
            .iter()
            .map(|v| logistic(gamma * (v / p as f64 - a_mu[p])))
            .collect();
        BranchColumns {
            d1: left.iter().map(|pl| gamma * pl * (1.0 - pl)).collect(),
            d2: left
                .iter()
                .map(|pl| gamma * gamma * pl * (1.0 - pl) * (1.0 - 2.0 * pl))
                .collect(),
            left,
        }
    }

    /// x^T m. `tr_mul` computes one dot product per entry (nalgebra's, bit for bit), and
    /// nalgebra `xt * m` as a blocked (matrixmultiply) product only when every dimension
    /// exceeds 5, else as column-by-column axpys; the blocked product is 2.4 times faster
    /// for spambase's p x p Hessian blocks (p = 57), the dots faster on iris (p = 4).
    fn xt_times(&self, m: &DMatrix<f64>) -> DMatrix<f64> {
        const BLOCKED_ABOVE: usize = 5;
        if self.layout.p > BLOCKED_ABOVE && m.ncols() > BLOCKED_ABOVE {
            &self.xt * m
        } else {
            tr_mul(&self.x, m)
        }
    }

    /// The gradient of Phi(w) = sum_i sum_l P_il sum_k w_ik C_kl over the smooth variables:
    /// (d/da as p x |tau_B|, d/dmu, d/dC as K x |tau_L|). `w` is zero outside `rows` (every
    /// row when `None`), so only those rows are visited for the split derivatives. With
    /// `nodes`, the derivatives in the fixed branch nodes' a and mu are skipped (left zero).
    fn phi_gradient(
        &self,
        f: &Forward,
        w: &DMatrix<f64>,
        rows: Option<&[usize]>,
        nodes: Option<&NodeMask>,
    ) -> (DMatrix<f64>, Vec<f64>, DMatrix<f64>) {
        let branch_free = |t: usize| nodes.is_none_or(|m| m.branches[t]);
        let lay = &self.layout;
        let n = self.x.nrows();
        // dPhi/dC_kl = sum_i w_ik P_il, and each row's cost at each leaf, sum_k w_ik C_kl:
        // two small matrix products (N x K times K x |tau_L|), vectorized by nalgebra.
        let g_c = tr_mul(w, &f.reach);
        let cost = w * &f.c;
        // dPhi/dz_it = sum over the leaves l below t of cost_il dP_il/dz_it, where
        // dP_il/dz_it = (+-) F'(z_it) times the other factors of P_il's path product.
        let mut g_z = DMatrix::zeros(n, lay.branches);
        for l in 0..lay.leaves {
            let path = self.shape.path(l);
            // The path's columns of p_it (not their factors: `rows` may be a few of them).
            let lefts: Vec<(&[f64], bool)> = path
                .iter()
                .map(|&(u, goes_left)| (column(&f.left, u), goes_left))
                .collect();
            let cost_l = column(&cost, l);
            for (d, &(t, goes_left)) in path.iter().enumerate() {
                if !branch_free(t) {
                    continue;
                }
                let sign = if goes_left { 1.0 } else { -1.0 };
                let d1_t = column(&f.d1, t);
                let out = column_mut(&mut g_z, t);
                let mut add = |i: usize| {
                    let mut term = sign * cost_l[i] * d1_t[i];
                    for (e, &(left, goes_left)) in lefts.iter().enumerate() {
                        if e != d {
                            term *= if goes_left { left[i] } else { 1.0 - left[i] };
                        }
                    }
                    out[i] += term;
                };
                match rows {
                    Some(rows) => rows.iter().for_each(|&i| add(i)),
                    None => (0..n).for_each(add),
                }
            }
        }
        let p = lay.p as f64;
        let mut g_a = DMatrix::zeros(lay.p, lay.branches);
        for t in (0..lay.branches).filter(|&t| branch_free(t)) {
            g_a.set_column(t, &(tr_mul_vector(&self.x, column(&g_z, t)) / p));
        }
        let g_mu = (0..lay.branches).map(|t| -g_z.column(t).sum()).collect();
        (g_a, g_mu, g_c)
    }

    /// dP_il / dz_it for every row i, leaf l and the branch node t at depth d of its path,
    /// in column `l * D + d` (N x |tau_L| D); z_it = a_t.x_i / p - mu_t.
    pub(crate) fn path_derivatives(&self, f: &Forward) -> DMatrix<f64> {
        self.path_derivatives_among(f, &self.path_columns(f), None)
    }

    /// Every leaf's path factors ([`Forward::path_columns`]), leaf by leaf.
    fn path_columns(&self, f: &Forward) -> Vec<Vec<Vec<f64>>> {
        (0..self.layout.leaves)
            .map(|l| f.path_columns(self.shape.path(l)))
            .collect()
    }

    /// [`Self::path_derivatives`] from the leaves' path factors `paths`, with `nodes` only
    /// for the free branch nodes (the others' columns left zero).
    fn path_derivatives_among(
        &self,
        f: &Forward,
        paths: &[Vec<Vec<f64>>],
        nodes: Option<&NodeMask>,
    ) -> DMatrix<f64> {
        let lay = &self.layout;
        let n = self.x.nrows();
        let depth = self.shape.depth();
        let mut e = DMatrix::zeros(n, lay.leaves * depth);
        let mut others = vec![0.0; n];
        for (l, q) in paths.iter().enumerate() {
            for (d, &(t, goes_left)) in self.shape.path(l).iter().enumerate() {
                if nodes.is_some_and(|m| !m.branches[t]) {
                    continue;
                }
                let sign = if goes_left { 1.0 } else { -1.0 };
                product_except(q, d, d, &mut others);
                let d1 = column(&f.d1, t);
                let out = column_mut(&mut e, l * depth + d);
                for i in 0..n {
                    out[i] = sign * d1[i] * others[i];
                }
            }
        }
        e
    }

    /// The Hessian of Phi(w) over the smooth variables, as a dense lower-triangular matrix.
    /// With `reach_weights` (v, N x |tau_L|) it also adds `sum_il v_il grad^2 P_il` to the
    /// (a, mu) block: the Hessian of constraints that name P_il (l0tree's explicit P).
    /// With `nodes` (branch nodes, leaves that are free) only the blocks between free nodes
    /// are computed, the rest left zero: what a decomposition subproblem needs.
    pub(crate) fn phi_hessian(
        &self,
        f: &Forward,
        w: &DMatrix<f64>,
        reach_weights: Option<&DMatrix<f64>>,
        nodes: Option<&NodeMask>,
    ) -> DMatrix<f64> {
        let branch_free = |t: usize| nodes.is_none_or(|m| m.branches[t]);
        let leaf_free = |l: usize| nodes.is_none_or(|m| m.leaves[l]);
        let lay = &self.layout;
        let n = self.x.nrows();
        let depth = self.shape.depth();
        let p = lay.p as f64;
        let pairs = self.shape.related_pairs();
        let pair_index =
            |t: usize, u: usize| pairs.iter().position(|&pr| pr == (t.min(u), t.max(u)));
        // Second derivatives of Phi in z (per sample, per related pair) and the first
        // derivatives dP_il/dz_it (per sample, per leaf and depth) for the C cross terms.
        let mut h_z = DMatrix::zeros(n, pairs.len());
        let paths = self.path_columns(f);
        let e = self.path_derivatives_among(f, &paths, nodes);
        let mut pair_of = vec![vec![0usize; depth]; depth * lay.leaves];
        for l in 0..lay.leaves {
            let path = self.shape.path(l);
            for d1 in 0..depth {
                for d2 in 0..depth {
                    pair_of[l * depth + d1][d2] = pair_index(path[d1].0, path[d2].0).unwrap_or(0);
                }
            }
        }
        // Row by row, the terms reach each h_z entry in the order leaf, depth, second depth,
        // whatever the loops' nesting: the columns below add them in that order.
        let mut cost = vec![0.0; n];
        let mut others = vec![0.0; n];
        // Leaves below no free branch node add nothing to the free blocks of h_z.
        let leaves =
            (0..lay.leaves).filter(|&l| self.shape.path(l).iter().any(|&(t, _)| branch_free(t)));
        for l in leaves {
            let (path, q) = (self.shape.path(l), &paths[l]);
            // Each row's cost at leaf l: v_il + sum_k w_ik C_kl, added in class order.
            match reach_weights {
                Some(v) => cost.copy_from_slice(column(v, l)),
                None => cost.fill(0.0),
            }
            for k in 0..lay.classes {
                let c_kl = f.c[(k, l)];
                cost.iter_mut()
                    .zip(column(w, k))
                    .for_each(|(c, w_ik)| *c += w_ik * c_kl);
            }
            for d in 0..depth {
                let (t, left_d) = path[d];
                if !branch_free(t) {
                    continue;
                }
                let s_d = if left_d { 1.0 } else { -1.0 };
                let (d1_t, d2_t) = (column(&f.d1, t), column(&f.d2, t));
                product_except(q, d, d, &mut others);
                let out = column_mut(&mut h_z, pair_of[l * depth + d][d]);
                for i in 0..n {
                    // A zero cost adds a zero term: skipped, as a sum of zeros adds nothing.
                    if cost[i] != 0.0 {
                        out[i] += cost[i] * s_d * d2_t[i] * others[i];
                    }
                }
                for d2 in 0..d {
                    let (u, left_d2) = path[d2];
                    if !branch_free(u) {
                        continue;
                    }
                    let s_d2 = if left_d2 { 1.0 } else { -1.0 };
                    let d1_u = column(&f.d1, u);
                    product_except(q, d, d2, &mut others);
                    let out = column_mut(&mut h_z, pair_of[l * depth + d][d2]);
                    for i in 0..n {
                        if cost[i] != 0.0 {
                            out[i] += cost[i] * s_d * s_d2 * d1_t[i] * d1_u[i] * others[i];
                        }
                    }
                }
            }
        }
        let ns = lay.smooth_len();
        let mut h = DMatrix::zeros(ns, ns);
        let mut add = |r: usize, c: usize, v: f64| {
            let (r, c) = if r >= c { (r, c) } else { (c, r) };
            h[(r, c)] += v;
        };
        let x = &*self.x;
        let hz_sums = column_sums(&h_z);
        let mut scaled = DMatrix::zeros(n, lay.p);
        for (pi, &(t, u)) in pairs.iter().enumerate() {
            if !(branch_free(t) && branch_free(u)) {
                continue;
            }
            let hz = column(&h_z, pi);
            for j in 0..lay.p {
                column_mut(&mut scaled, j)
                    .iter_mut()
                    .zip(column(x, j))
                    .zip(hz)
                    .for_each(|((s, x_ij), hz_i)| *s = x_ij * hz_i);
            }
            let block = self.xt_times(&scaled) / (p * p);
            let cross = tr_mul_vector(x, hz) / (-p);
            for j1 in 0..lay.p {
                for j2 in 0..lay.p {
                    if t == u && j2 > j1 {
                        continue;
                    }
                    add(u * lay.p + j1, t * lay.p + j2, block[(j1, j2)]);
                }
                add(lay.s_mu(u), t * lay.p + j1, cross[j1]);
                if t != u {
                    add(lay.s_mu(t), u * lay.p + j1, cross[j1]);
                }
            }
            add(lay.s_mu(u), lay.s_mu(t), hz_sums[pi]);
        }
        // The (C, a_t) and (C, mu_t) blocks: d2 Phi / dC_kl dz_it = w_ik dP_il/dz_it. Per
        // free branch node t, one column per (leaf below t, class), all in one product.
        for t in (0..lay.branches).filter(|&t| branch_free(t)) {
            let below: Vec<(usize, usize)> = (0..lay.leaves)
                .filter(|&l| leaf_free(l))
                .filter_map(|l| {
                    let path = self.shape.path(l);
                    path.iter().position(|&(u, _)| u == t).map(|d| (l, d))
                })
                .collect();
            if below.is_empty() {
                continue;
            }
            let mut weighted = DMatrix::zeros(n, below.len() * lay.classes);
            for (b, &(l, d)) in below.iter().enumerate() {
                let col = column(&e, l * depth + d);
                for k in 0..lay.classes {
                    column_mut(&mut weighted, b * lay.classes + k)
                        .iter_mut()
                        .zip(column(w, k))
                        .zip(col)
                        .for_each(|((out, w_ik), e_i)| *out = w_ik * e_i);
                }
            }
            let ga = self.xt_times(&weighted) / p;
            let weighted_sums = column_sums(&weighted);
            for (b, &(l, _)) in below.iter().enumerate() {
                for k in 0..lay.classes {
                    let column = b * lay.classes + k;
                    let sc = lay.s_c(k, l);
                    for j in 0..lay.p {
                        add(sc, t * lay.p + j, ga[(j, column)]);
                    }
                    add(sc, lay.s_mu(t), -weighted_sums[column]);
                }
            }
        }
        h
    }

    /// The Hessian of the Lagrangian in the order of the Hessian structure, plus (with
    /// `reach_weights` v) `sum_il v_il grad^2 P_il`: the Hessian of other constraints on the
    /// leaf probabilities, for formulations that extend this one (l0tree's explicit P).
    pub(crate) fn lagrangian_hessian(
        &self,
        x: &[f64],
        obj_factor: f64,
        lambda: &[f64],
        reach_weights: Option<&DMatrix<f64>>,
        free: Option<&[bool]>,
        values: &mut [f64],
    ) {
        let f = self.forward(x);
        let nodes = free.map(|free| self.node_mask(free));
        let mut w = &self.objective_weights * obj_factor;
        let first_rho = self.linear_rows();
        for (r, &(k, _)) in self.rho_rows.iter().enumerate() {
            let mult = lambda[first_rho + r];
            for &i in &self.members[k] {
                w[(i, k)] += mult;
            }
        }
        let h = self.phi_hessian(&f, &w, reach_weights, nodes.as_ref());
        for (v, &(s1, s2, sign)) in values.iter_mut().zip(&self.hessian.source) {
            *v = sign * h[(s1, s2)];
        }
    }

    /// Which branch nodes and leaves have a free variable, for a mask over the NLP
    /// variables (its first `layout.n` entries).
    pub(crate) fn node_mask(&self, free: &[bool]) -> NodeMask {
        let lay = &self.layout;
        let blocks = super::node_blocks_of(lay);
        NodeMask {
            branches: blocks
                .branches
                .iter()
                .map(|b| b.proximal.iter().any(|&v| free[v]))
                .collect(),
            leaves: blocks
                .leaves
                .iter()
                .map(|c| c.iter().any(|&v| free[v]))
                .collect(),
        }
    }

    /// Whether a tree that predicts `predicted` on the training rows meets the performance
    /// constraints (8): of each class k with rho_k > 0, at least rho_k |I_k| rows right. For
    /// a deterministic tree the expected count of (8) is the count.
    pub(crate) fn meets_performance(&self, predicted: &[usize]) -> bool {
        self.rho_rows.iter().all(|&(k, rhs)| {
            let right = self
                .y
                .iter()
                .zip(predicted)
                .filter(|(&y, &p)| y == k && p == k)
                .count();
            right as f64 >= rhs
        })
    }

    /// W_{y_i k} / N (N x K), the weights of the misclassification cost.
    pub(crate) fn objective_weights(&self) -> &DMatrix<f64> {
        &self.objective_weights
    }

    /// The misclassification cost g(a, mu, C) of (9), without the penalties.
    pub fn misclassification_cost(&self, x: &[f64]) -> f64 {
        let f = self.forward(x);
        let cost = &self.objective_weights * &f.c;
        f.reach.component_mul(&cost).sum()
    }

    /// The indicator weights of class `k` (w_ik = [y_i = k] [column k]).
    fn class_weights(&self, k: usize) -> DMatrix<f64> {
        let mut w = DMatrix::zeros(self.x.nrows(), self.layout.classes);
        for &i in &self.members[k] {
            w[(i, k)] = 1.0;
        }
        w
    }

    fn scatter_smooth_gradient(
        &self,
        g_a: &DMatrix<f64>,
        g_mu: &[f64],
        g_c: &DMatrix<f64>,
        out: &mut [f64],
    ) {
        let lay = &self.layout;
        for t in 0..lay.branches {
            for j in 0..lay.p {
                out[lay.a(j, t)] += g_a[(j, t)];
                if lay.split {
                    out[lay.a_neg(j, t)] -= g_a[(j, t)];
                }
            }
            out[lay.mu + t] += g_mu[t];
        }
        for k in 0..lay.classes {
            for l in 0..lay.leaves {
                out[lay.c(k, l)] += g_c[(k, l)];
            }
        }
    }

    /// The gradient (with `nodes`, only the free branch nodes' a and mu entries, the
    /// others left zero).
    fn gradient_for(&self, x: &[f64], nodes: Option<&NodeMask>, grad: &mut [f64]) {
        let lay = &self.layout;
        let f = self.forward(x);
        grad.fill(0.0);
        let (g_a, g_mu, g_c) = self.phi_gradient(&f, &self.objective_weights, None, nodes);
        self.scatter_smooth_gradient(&g_a, &g_mu, &g_c, grad);
        if lay.split {
            grad[lay.a_plus..lay.mu]
                .iter_mut()
                .for_each(|g| *g += self.params.lambda_local);
        }
        if lay.beta {
            grad[lay.beta_at..]
                .iter_mut()
                .for_each(|g| *g += self.params.lambda_global);
        }
    }

    /// The Jacobian values (with `nodes`, the fixed branch nodes' a and mu columns of the
    /// rho rows left zero).
    fn jacobian_for(&self, x: &[f64], nodes: Option<&NodeMask>, values: &mut [f64]) {
        let lay = &self.layout;
        let mut at = lay.leaves * lay.classes * 2;
        values[..at].fill(1.0);
        if let Some(links) = lay.beta_links() {
            at += links.jacobian_values(&mut values[at..]);
        }
        if self.rho_rows.is_empty() {
            return;
        }
        let f = self.forward(x);
        let mut dense = vec![0.0; lay.n];
        for &(k, _) in &self.rho_rows {
            dense.fill(0.0);
            let w = self.class_weights(k);
            let (g_a, g_mu, g_c) = self.phi_gradient(&f, &w, Some(&self.members[k]), nodes);
            self.scatter_smooth_gradient(&g_a, &g_mu, &g_c, &mut dense);
            let len = lay.c - lay.a_plus;
            values[at..at + len].copy_from_slice(&dense[lay.a_plus..lay.c]);
            at += len;
            for l in 0..lay.leaves {
                values[at] = dense[lay.c(k, l)];
                at += 1;
            }
        }
    }

    /// Number of general constraints before the rho rows.
    fn linear_rows(&self) -> usize {
        let lay = &self.layout;
        lay.leaves + lay.classes + lay.beta_links().map_or(0, |b| b.rows())
    }
}

/// p_it = F(a_t.x_i / p - mu_t) for every row of `x` (N x p) and branch node.
pub(crate) fn left_probabilities(
    x: &DMatrix<f64>,
    a: &DMatrix<f64>,
    mu: &[f64],
    gamma: f64,
) -> DMatrix<f64> {
    let p = x.ncols() as f64;
    let mut z = x * a;
    for (t, &m) in mu.iter().enumerate() {
        z.column_mut(t)
            .apply(|v| *v = logistic(gamma * (*v / p - m)));
    }
    z
}

/// P_it, the probability of reaching each leaf, from the left probabilities.
pub(crate) fn leaf_probabilities(left: &DMatrix<f64>, shape: &TreeShape) -> DMatrix<f64> {
    let n = left.nrows();
    let mut reach = DMatrix::from_element(n, shape.num_leaves(), 1.0);
    for l in 0..shape.num_leaves() {
        for &(t, goes_left) in shape.path(l) {
            let factors = column(left, t).iter();
            let out = column_mut(&mut reach, l).iter_mut();
            if goes_left {
                out.zip(factors).for_each(|(r, pl)| *r *= pl);
            } else {
                out.zip(factors).for_each(|(r, pl)| *r *= 1.0 - pl);
            }
        }
    }
    reach
}

fn logistic(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// The Hessian structure: pairs of smooth variables that can have a nonzero second
/// derivative (coefficients and locations of related branch nodes; those with the classes
/// of the leaves below them), mapped to NLP variables.
fn hessian_map(lay: &Layout, shape: &TreeShape) -> HessianMap {
    let mut smooth = Vec::new();
    let p = lay.p;
    for (t, u) in shape.related_pairs() {
        for j1 in 0..p {
            for j2 in 0..p {
                if t == u && j2 > j1 {
                    continue;
                }
                smooth.push((u * p + j1, t * p + j2));
            }
            smooth.push((lay.s_mu(u), t * p + j1));
            if t != u {
                smooth.push((lay.s_mu(t), u * p + j1));
            }
        }
        smooth.push((lay.s_mu(u), lay.s_mu(t)));
    }
    for l in 0..lay.leaves {
        for &(t, _) in shape.path(l) {
            for k in 0..lay.classes {
                for j in 0..p {
                    smooth.push((lay.s_c(k, l), t * p + j));
                }
                smooth.push((lay.s_c(k, l), lay.s_mu(t)));
            }
        }
    }
    let mut structure = Vec::new();
    let mut source = Vec::new();
    for &(s1, s2) in &smooth {
        let mut seen = Vec::new();
        for &(r1, g1) in &lay.real_of_smooth(s1) {
            for &(r2, g2) in &lay.real_of_smooth(s2) {
                let entry = (r1.max(r2), r1.min(r2));
                if s1 == s2 && seen.contains(&entry) {
                    continue;
                }
                seen.push(entry);
                structure.push(entry);
                source.push((s1, s2, g1 * g2));
            }
        }
    }
    HessianMap { structure, source }
}

impl NlpProblem for SorctProblem {
    /// (10), (11) and the beta rows are linear; the rho rows (8) are not.
    fn linear_constraints(&self) -> Vec<bool> {
        let linear = self.linear_rows();
        (0..self.num_constraints()).map(|r| r < linear).collect()
    }

    fn num_variables(&self) -> usize {
        self.layout.n
    }

    fn num_constraints(&self) -> usize {
        self.linear_rows() + self.rho_rows.len()
    }

    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        let lay = &self.layout;
        let mut lower = vec![0.0; lay.n];
        let upper = vec![1.0; lay.n];
        if !lay.split {
            lower[..lay.p * lay.branches].fill(-1.0);
        }
        lower[lay.mu..lay.mu + lay.branches].fill(-1.0);
        (lower, upper)
    }

    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        let lay = &self.layout;
        let mut lower = vec![1.0; lay.leaves];
        let mut upper = vec![1.0; lay.leaves];
        lower.extend(std::iter::repeat_n(1.0, lay.classes));
        upper.extend(std::iter::repeat_n(f64::INFINITY, lay.classes));
        let beta_rows = self.linear_rows() - lay.leaves - lay.classes;
        lower.extend(std::iter::repeat_n(0.0, beta_rows));
        upper.extend(std::iter::repeat_n(f64::INFINITY, beta_rows));
        for &(_, rhs) in &self.rho_rows {
            lower.push(rhs);
            upper.push(f64::INFINITY);
        }
        (lower, upper)
    }

    fn objective(&self, x: &[f64]) -> f64 {
        let lay = &self.layout;
        let mut value = self.misclassification_cost(x);
        if lay.split {
            let ab: f64 = x[lay.a_plus..lay.mu].iter().sum();
            value += self.params.lambda_local * ab;
        }
        if lay.beta {
            value += self.params.lambda_global * x[lay.beta_at..].iter().sum::<f64>();
        }
        value
    }

    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        self.gradient_for(x, None, grad);
    }

    fn constraints(&self, x: &[f64], g: &mut [f64]) {
        let lay = &self.layout;
        let mut row = 0;
        for l in 0..lay.leaves {
            g[row] = (0..lay.classes).map(|k| x[lay.c(k, l)]).sum();
            row += 1;
        }
        for k in 0..lay.classes {
            g[row] = (0..lay.leaves).map(|l| x[lay.c(k, l)]).sum();
            row += 1;
        }
        if let Some(links) = lay.beta_links() {
            links.values(x, &mut g[row..]);
            row += links.rows();
        }
        if !self.rho_rows.is_empty() {
            let f = self.forward(x);
            for &(k, _) in &self.rho_rows {
                g[row] = self.members[k]
                    .iter()
                    .map(|&i| {
                        (0..lay.leaves)
                            .map(|l| f.reach[(i, l)] * f.c[(k, l)])
                            .sum::<f64>()
                    })
                    .sum();
                row += 1;
            }
        }
    }

    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        let lay = &self.layout;
        let mut s = Vec::new();
        let mut row = 0;
        for l in 0..lay.leaves {
            for k in 0..lay.classes {
                s.push((row, lay.c(k, l)));
            }
            row += 1;
        }
        for k in 0..lay.classes {
            for l in 0..lay.leaves {
                s.push((row, lay.c(k, l)));
            }
            row += 1;
        }
        if let Some(links) = lay.beta_links() {
            links.jacobian_structure(row, &mut s);
            row += links.rows();
        }
        for &(k, _) in &self.rho_rows {
            for col in lay.a_plus..lay.c {
                s.push((row, col));
            }
            for l in 0..lay.leaves {
                s.push((row, lay.c(k, l)));
            }
            row += 1;
        }
        s
    }

    fn jacobian_values(&self, x: &[f64], values: &mut [f64]) {
        self.jacobian_for(x, None, values);
    }

    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        Some(self.hessian.structure.clone())
    }

    fn hessian_values(&self, x: &[f64], obj_factor: f64, lambda: &[f64], values: &mut [f64]) {
        self.lagrangian_hessian(x, obj_factor, lambda, None, None, values);
    }

    fn name(&self) -> String {
        format!("sorct(D={})", self.params.depth)
    }

    fn masked(&self) -> Option<&dyn MaskedEvaluations> {
        Some(self)
    }

    #[cfg(feature = "torch")]
    fn tensor_objective(&self) -> Option<&dyn glassbox_core::tensor::TensorObjective> {
        Some(self)
    }
}

/// A decomposition subproblem's evaluations: only the nodes of free variables are
/// recomputed (the fixed branch nodes' routing is cached, see `BranchColumns`).
impl MaskedEvaluations for SorctProblem {
    fn gradient_among(&self, x: &[f64], free: &[bool], grad: &mut [f64]) {
        self.gradient_for(x, Some(&self.node_mask(free)), grad);
    }

    fn jacobian_values_among(&self, x: &[f64], free: &[bool], values: &mut [f64]) {
        self.jacobian_for(x, Some(&self.node_mask(free)), values);
    }

    fn hessian_values_among(
        &self,
        x: &[f64],
        obj_factor: f64,
        lambda: &[f64],
        free: &[bool],
        values: &mut [f64],
    ) {
        self.lagrangian_hessian(x, obj_factor, lambda, None, Some(free), values);
    }
}
