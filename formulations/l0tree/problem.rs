//! The l0-based sparse randomized classification tree, formulation (8) of Amaldi, Consolo and
//! Manno (`shared/papers/001_64807dfed1a45238.txt`, section 3.1), as a smooth NLP with exact
//! gradient and Hessian.
//!
//! It extends S-ORCT rather than copying it: an inner [`SorctProblem`] with lambda_L =
//! lambda_G = 0 holds a (single, in [-1, 1]), mu and C and computes the misclassification
//! cost, the path probabilities P_il, their derivatives and the Hessian kernel; this problem
//! appends the variables and constraints of (8). Variables, in this order:
//! - the inner S-ORCT variables: a (p x |tau_B|, node-major), mu (|tau_B|), C (K x |tau_L|);
//! - z (p x |tau_B|, in [0, 1]) with -z_jt <= a_jt <= z_jt (6), only when lambda_L > 0;
//! - beta (p, in [0, 1]) with -beta_j <= a_jt <= beta_j (4), only when lambda_G > 0
//!   (without their lambda these variables change nothing, as in S-ORCT);
//! - P (N x |tau_L|, in [0, 1]) with P_il = prod_{left} p_it prod_{right} (1 - p_it) (1)
//!   as equality constraints, only with the explicit strategy (i) of section 4.1.
//!
//! Objective: s * sum_i sum_l P_il sum_k w_{y_i k} C_kl + lambda_L sum_jt phi(z_jt) +
//! lambda_G sum_j phi(beta_j), with w = W / N and s = N when the loss is the sum that (8)
//! writes (the paper's lambdas then apply as they are), s = 1 for S-ORCT's mean. phi is the
//! concave approximation of the step function, shifted so that phi(0) = 0 (a constant that
//! changes no solution, so that a zero coefficient costs nothing in the objective we report).
//! The per-class performance constraints (8) of S-ORCT (rho), which the paper uses in all its
//! experiments, are the inner problem's, in the substituted form under both strategies.

use super::{Approximation, L0Params, LeafProbabilities};
use crate::sorct::SorctProblem;
use glassbox_core::nlp::{MaskedEvaluations, NlpProblem};
use nalgebra::DMatrix;

/// The concave approximation phi of the step function 1(u > 0) on u >= 0, with its first
/// and second derivatives; phi(0) is subtracted from the value. It is applied to
/// `scale * u`: 1 in the paper's setting; when S-ORCT's `split_scale = "data"` raises gamma
/// by a factor k, the same tree has coefficients k times smaller, and `scale = k` gives it
/// the penalty it has at the paper's gamma. A stage of a gamma continuation scales it with
/// its own gamma (`L0TreeProblem::with_gamma`): 1 at the configured gamma, where the
/// approximation has the paper's shape on [0, 1]; k at the target, where it is k times
/// steeper and a start's coefficients away from 0 sit on its flat part.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Concave {
    /// Which approximation.
    pub approximation: Approximation,
    /// alpha of the exponential one.
    pub alpha: f64,
    /// q of appr1 and appr2.
    pub q: f64,
    /// epsilon of appr1, appr2 and log.
    pub eps: f64,
    /// The factor on u (see above).
    pub scale: f64,
}

impl Concave {
    fn raw(&self, u: f64) -> f64 {
        let v = u + self.eps;
        match self.approximation {
            Approximation::Exp => 1.0 - (-self.alpha * u).exp(),
            Approximation::Appr1 => v.powf(self.q),
            Approximation::Appr2 => -v.powf(-self.q),
            Approximation::Log => v.ln(),
        }
    }

    fn raw_d1(&self, u: f64) -> f64 {
        let v = u + self.eps;
        let q = self.q;
        match self.approximation {
            Approximation::Exp => self.alpha * (-self.alpha * u).exp(),
            Approximation::Appr1 => q * v.powf(q - 1.0),
            Approximation::Appr2 => q * v.powf(-q - 1.0),
            Approximation::Log => 1.0 / v,
        }
    }

    fn raw_d2(&self, u: f64) -> f64 {
        let v = u + self.eps;
        let q = self.q;
        match self.approximation {
            Approximation::Exp => -self.alpha * self.alpha * (-self.alpha * u).exp(),
            Approximation::Appr1 => q * (q - 1.0) * v.powf(q - 2.0),
            Approximation::Appr2 => -q * (q + 1.0) * v.powf(-q - 2.0),
            Approximation::Log => -1.0 / (v * v),
        }
    }

    /// phi(scale u) - phi(0).
    pub fn value(&self, u: f64) -> f64 {
        self.raw(self.scale * u) - self.raw(0.0)
    }

    /// d/du phi(scale u).
    pub fn d1(&self, u: f64) -> f64 {
        self.scale * self.raw_d1(self.scale * u)
    }

    /// d^2/du^2 phi(scale u).
    pub fn d2(&self, u: f64) -> f64 {
        self.scale * self.scale * self.raw_d2(self.scale * u)
    }
}

/// Where each group of variables starts.
#[derive(Clone, Debug)]
pub(crate) struct L0Layout {
    /// Variables of the inner S-ORCT problem (a, mu, C), first.
    pub inner: usize,
    pub z: Option<usize>,
    pub beta: Option<usize>,
    pub reach: Option<usize>,
    pub n: usize,
}

/// One instance of formulation (8).
pub struct L0TreeProblem {
    pub(crate) inner: SorctProblem,
    pub(crate) params: L0Params,
    pub(crate) concave: Concave,
    pub(crate) layout: L0Layout,
    /// s: N for the summed loss of (8), 1 for the mean.
    pub(crate) loss_scale: f64,
    /// Rows of the inner problem's constraints.
    inner_rows: usize,
    inner_hessian: Vec<(usize, usize)>,
}

impl L0TreeProblem {
    pub(crate) fn new(inner: SorctProblem, params: L0Params, concave: Concave) -> Self {
        let lay = &inner.layout;
        let (p, branches, rows) = (lay.p, lay.branches, inner.x.nrows());
        let mut at = lay.n;
        let mut take = |on: bool, len: usize| {
            on.then(|| {
                at += len;
                at - len
            })
        };
        let z = take(params.lambda_local > 0.0, p * branches);
        let beta = take(params.lambda_global > 0.0, p);
        let reach = take(
            params.leaf_probabilities == LeafProbabilities::Explicit,
            rows * lay.leaves,
        );
        let layout = L0Layout {
            inner: lay.n,
            z,
            beta,
            reach,
            n: at,
        };
        let loss_scale = if params.sum_loss { rows as f64 } else { 1.0 };
        let inner_rows = inner.num_constraints();
        let inner_hessian = inner.hessian_structure().unwrap_or_default();
        L0TreeProblem {
            inner,
            params,
            concave,
            layout,
            loss_scale,
            inner_rows,
            inner_hessian,
        }
    }

    fn n_rows(&self) -> usize {
        self.inner.x.nrows()
    }

    fn leaves(&self) -> usize {
        self.inner.layout.leaves
    }

    /// Index of P_il.
    pub(crate) fn reach_index(&self, i: usize, l: usize) -> Option<usize> {
        self.layout.reach.map(|r| r + i * self.leaves() + l)
    }

    /// Number of sign rows (-u <= a <= u) of each of z and beta.
    fn sign_rows(&self) -> usize {
        2 * self.inner.layout.p * self.inner.layout.branches
    }

    fn first_beta_row(&self) -> usize {
        self.inner_rows
            + if self.layout.z.is_some() {
                self.sign_rows()
            } else {
                0
            }
    }

    fn first_reach_row(&self) -> usize {
        self.first_beta_row()
            + if self.layout.beta.is_some() {
                self.sign_rows()
            } else {
                0
            }
    }

    /// The bounded variable u of (6) or (4) of coefficient a_jt: z_jt or beta_j.
    fn sign_rows_of(
        &self,
        start: usize,
        global: bool,
    ) -> impl Iterator<Item = (usize, usize)> + '_ {
        let lay = &self.inner.layout;
        (0..lay.branches).flat_map(move |t| {
            (0..lay.p).map(move |j| {
                let u = if global {
                    start + j
                } else {
                    start + t * lay.p + j
                };
                (u, lay.a(j, t))
            })
        })
    }

    /// The complete point for an inner S-ORCT point: z = |a|, beta_j = max_t |a_jt|, P at
    /// its path probabilities.
    pub(crate) fn lift(&self, inner_x: &[f64]) -> Vec<f64> {
        let lay = &self.inner.layout;
        let mut x = inner_x.to_vec();
        x.resize(self.layout.n, 0.0);
        if let Some(z) = self.layout.z {
            for t in 0..lay.branches {
                for j in 0..lay.p {
                    x[z + t * lay.p + j] = inner_x[lay.a(j, t)].abs().min(1.0);
                }
            }
        }
        if let Some(b) = self.layout.beta {
            for j in 0..lay.p {
                x[b + j] = (0..lay.branches)
                    .map(|t| inner_x[lay.a(j, t)].abs().min(1.0))
                    .fold(0.0, f64::max);
            }
        }
        self.fill_reach(&mut x);
        x
    }

    /// A point of this formulation on other training rows (the multistart's best point,
    /// solved on a fold's rows) as a point of this problem: its variables before the
    /// explicit P_il kept, P at this problem's path probabilities.
    pub(crate) fn on_these_rows(&self, point: &[f64]) -> Vec<f64> {
        let mut x = point[..self.layout.reach.unwrap_or(self.layout.n)].to_vec();
        x.resize(self.layout.n, 0.0);
        self.fill_reach(&mut x);
        x
    }

    /// Sets the explicit P_il (if any) of `x` to the path probabilities of its inner point,
    /// so that their equality constraints hold.
    fn fill_reach(&self, x: &mut [f64]) {
        if let Some(r) = self.layout.reach {
            let f = self.inner.forward(&x[..self.layout.inner]);
            for i in 0..self.n_rows() {
                for l in 0..self.leaves() {
                    x[r + i * self.leaves() + l] = f.reach[(i, l)];
                }
            }
        }
    }

    /// The misclassification term (without the penalties) at `x`.
    pub fn loss(&self, x: &[f64]) -> f64 {
        let inner_x = &x[..self.layout.inner];
        match self.layout.reach {
            None => self.loss_scale * self.inner.misclassification_cost(inner_x),
            Some(_) => {
                let lay = &self.inner.layout;
                let w = self.inner.objective_weights();
                let mut v = 0.0;
                for i in 0..self.n_rows() {
                    for l in 0..lay.leaves {
                        let cost: f64 = (0..lay.classes).map(|k| w[(i, k)] * x[lay.c(k, l)]).sum();
                        v += x[self.reach_index(i, l).unwrap_or(0)] * cost;
                    }
                }
                self.loss_scale * v
            }
        }
    }

    /// The sparsity penalties lambda_L sum phi(z) + lambda_G sum phi(beta) at `x`.
    pub fn penalty(&self, x: &[f64]) -> f64 {
        let mut v = 0.0;
        for (range, lambda) in self.penalized() {
            v += lambda * x[range].iter().map(|&u| self.concave.value(u)).sum::<f64>();
        }
        v
    }

    /// The penalized variables (z, beta) with their lambdas.
    fn penalized(&self) -> Vec<(std::ops::Range<usize>, f64)> {
        let pb = self.inner.layout.p * self.inner.layout.branches;
        let mut out = Vec::new();
        if let Some(z) = self.layout.z {
            out.push((z..z + pb, self.params.lambda_local));
        }
        if let Some(b) = self.layout.beta {
            out.push((b..b + self.inner.layout.p, self.params.lambda_global));
        }
        out
    }
}

impl NlpProblem for L0TreeProblem {
    /// The inner problem's linear rows, then the sign rows (linear); the P_il rows are not.
    fn linear_constraints(&self) -> Vec<bool> {
        let mut mask = self.inner.linear_constraints();
        mask.resize(self.inner_rows, false);
        mask.resize(self.first_reach_row(), true);
        mask.resize(self.num_constraints(), false);
        mask
    }

    fn num_variables(&self) -> usize {
        self.layout.n
    }

    fn num_constraints(&self) -> usize {
        self.first_reach_row()
            + if self.layout.reach.is_some() {
                self.n_rows() * self.leaves()
            } else {
                0
            }
    }

    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        let (mut lower, mut upper) = self.inner.variable_bounds();
        lower.resize(self.layout.n, 0.0);
        upper.resize(self.layout.n, 1.0);
        (lower, upper)
    }

    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        let (mut lower, mut upper) = self.inner.constraint_bounds();
        let sign = self.first_reach_row() - self.inner_rows;
        lower.extend(std::iter::repeat_n(0.0, sign));
        upper.extend(std::iter::repeat_n(f64::INFINITY, sign));
        let reach = self.num_constraints() - self.first_reach_row();
        lower.extend(std::iter::repeat_n(0.0, reach));
        upper.extend(std::iter::repeat_n(0.0, reach));
        (lower, upper)
    }

    fn objective(&self, x: &[f64]) -> f64 {
        self.loss(x) + self.penalty(x)
    }

    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        self.gradient_for(x, None, grad);
    }

    fn constraints(&self, x: &[f64], g: &mut [f64]) {
        let ni = self.layout.inner;
        self.inner.constraints(&x[..ni], &mut g[..self.inner_rows]);
        let mut row = self.inner_rows;
        for (start, global) in [(self.layout.z, false), (self.layout.beta, true)] {
            let Some(start) = start else { continue };
            for (u, a) in self.sign_rows_of(start, global) {
                g[row] = x[u] - x[a];
                g[row + 1] = x[u] + x[a];
                row += 2;
            }
        }
        if self.layout.reach.is_some() {
            let f = self.inner.forward(&x[..ni]);
            for i in 0..self.n_rows() {
                for l in 0..self.leaves() {
                    g[row] = x[self.reach_index(i, l).unwrap_or(0)] - f.reach[(i, l)];
                    row += 1;
                }
            }
        }
    }

    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        let mut s = self.inner.jacobian_structure();
        let mut row = self.inner_rows;
        for (start, global) in [(self.layout.z, false), (self.layout.beta, true)] {
            let Some(start) = start else { continue };
            for (u, a) in self.sign_rows_of(start, global) {
                s.extend([(row, u), (row, a), (row + 1, u), (row + 1, a)]);
                row += 2;
            }
        }
        if self.layout.reach.is_some() {
            let lay = &self.inner.layout;
            for i in 0..self.n_rows() {
                for l in 0..lay.leaves {
                    s.push((row, self.reach_index(i, l).unwrap_or(0)));
                    for &(t, _) in self.inner.shape.path(l) {
                        s.extend((0..lay.p).map(|j| (row, lay.a(j, t))));
                        s.push((row, lay.mu + t));
                    }
                    row += 1;
                }
            }
        }
        s
    }

    fn jacobian_values(&self, x: &[f64], values: &mut [f64]) {
        self.jacobian_for(x, None, values);
    }

    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        let mut s = self.inner_hessian.clone();
        if self.layout.reach.is_some() {
            let lay = &self.inner.layout;
            for i in 0..self.n_rows() {
                for l in 0..lay.leaves {
                    let r = self.reach_index(i, l).unwrap_or(0);
                    s.extend((0..lay.classes).map(|k| (r, lay.c(k, l))));
                }
            }
        }
        for (range, _) in self.penalized() {
            s.extend(range.map(|v| (v, v)));
        }
        Some(s)
    }

    fn hessian_values(&self, x: &[f64], obj_factor: f64, lambda: &[f64], values: &mut [f64]) {
        self.hessian(x, obj_factor, lambda, None, values);
    }

    fn name(&self) -> String {
        format!("l0tree(D={})", self.inner.shape.depth())
    }

    fn masked(&self) -> Option<&dyn MaskedEvaluations> {
        Some(self)
    }
}

/// A decomposition subproblem's evaluations, passing the mask on to the inner S-ORCT's.
impl MaskedEvaluations for L0TreeProblem {
    fn gradient_among(&self, x: &[f64], free: &[bool], grad: &mut [f64]) {
        self.gradient_for(x, Some(free), grad);
    }

    fn jacobian_values_among(&self, x: &[f64], free: &[bool], values: &mut [f64]) {
        self.jacobian_for(x, Some(free), values);
    }

    fn hessian_values_among(
        &self,
        x: &[f64],
        obj_factor: f64,
        lambda: &[f64],
        free: &[bool],
        values: &mut [f64],
    ) {
        self.hessian(x, obj_factor, lambda, Some(free), values);
    }
}

impl L0TreeProblem {
    /// The gradient (with `free`, the mask of a decomposition subproblem, the fixed
    /// variables' entries may be left at any value).
    fn gradient_for(&self, x: &[f64], free: Option<&[bool]>, grad: &mut [f64]) {
        let ni = self.layout.inner;
        grad.fill(0.0);
        let s = self.loss_scale;
        match self.layout.reach {
            None => {
                // The inner problem has no penalties: its gradient is the mean loss's.
                match free {
                    Some(free) => self
                        .inner
                        .gradient_among(&x[..ni], &free[..ni], &mut grad[..ni]),
                    None => self.inner.gradient(&x[..ni], &mut grad[..ni]),
                }

                grad[..ni].iter_mut().for_each(|g| *g *= s);
            }
            Some(_) => {
                let lay = &self.inner.layout;
                let w = self.inner.objective_weights();
                for i in 0..self.n_rows() {
                    for l in 0..lay.leaves {
                        let r = self.reach_index(i, l).unwrap_or(0);
                        let mut cost = 0.0;
                        for k in 0..lay.classes {
                            cost += w[(i, k)] * x[lay.c(k, l)];
                            grad[lay.c(k, l)] += s * w[(i, k)] * x[r];
                        }
                        grad[r] = s * cost;
                    }
                }
            }
        }
        for (range, lambda) in self.penalized() {
            for v in range {
                grad[v] += lambda * self.concave.d1(x[v]);
            }
        }
    }

    /// The Jacobian values (with `free`, the entries in fixed variables' columns may be
    /// left at any value).
    fn jacobian_for(&self, x: &[f64], free: Option<&[bool]>, values: &mut [f64]) {
        let ni = self.layout.inner;
        let inner_len = self.inner.jacobian_structure().len();
        match free {
            Some(free) => {
                self.inner
                    .jacobian_values_among(&x[..ni], &free[..ni], &mut values[..inner_len])
            }
            None => self
                .inner
                .jacobian_values(&x[..ni], &mut values[..inner_len]),
        }
        let mut at = inner_len;
        let sign_entries = 2 * (self.first_reach_row() - self.inner_rows);
        for chunk in values[at..at + sign_entries].chunks_mut(4) {
            chunk.copy_from_slice(&[1.0, -1.0, 1.0, 1.0]);
        }
        at += sign_entries;
        if self.layout.reach.is_some() {
            let lay = &self.inner.layout;
            let depth = self.inner.shape.depth();
            let f = self.inner.forward(&x[..ni]);
            let e = self.inner.path_derivatives(&f);
            let xs = &*self.inner.x;
            let p = lay.p as f64;
            for i in 0..self.n_rows() {
                for l in 0..lay.leaves {
                    values[at] = 1.0;
                    at += 1;
                    for d in 0..depth {
                        // d(-P_il)/da_jt = -dP/dz x_ij / p; d(-P_il)/dmu_t = +dP/dz.
                        let de = e[(i, l * depth + d)];
                        for j in 0..lay.p {
                            values[at] = -de * xs[(i, j)] / p;
                            at += 1;
                        }
                        values[at] = de;
                        at += 1;
                    }
                }
            }
        }
    }

    /// The Hessian of the Lagrangian (among the `free` variables only, if given).
    fn hessian(
        &self,
        x: &[f64],
        obj_factor: f64,
        lambda: &[f64],
        free: Option<&[bool]>,
        values: &mut [f64],
    ) {
        let ni = self.layout.inner;
        let free = free.map(|f| &f[..ni]);
        let nh = self.inner_hessian.len();
        let inner_lambda = &lambda[..self.inner_rows];
        let mut at = nh;
        match self.layout.reach {
            None => self.inner.lagrangian_hessian(
                &x[..ni],
                obj_factor * self.loss_scale,
                inner_lambda,
                None,
                free,
                &mut values[..nh],
            ),
            Some(_) => {
                // The rows P_il - prod(...) = 0 contribute -lambda_il grad^2 prod(...).
                let first = self.first_reach_row();
                let leaves = self.leaves();
                let v = DMatrix::from_fn(self.n_rows(), leaves, |i, l| {
                    -lambda[first + i * leaves + l]
                });
                self.inner.lagrangian_hessian(
                    &x[..ni],
                    0.0,
                    inner_lambda,
                    Some(&v),
                    free,
                    &mut values[..nh],
                );
                let lay = &self.inner.layout;
                let w = self.inner.objective_weights();
                let s = obj_factor * self.loss_scale;
                for i in 0..self.n_rows() {
                    for _ in 0..lay.leaves {
                        for k in 0..lay.classes {
                            values[at] = s * w[(i, k)];
                            at += 1;
                        }
                    }
                }
            }
        }
        for (range, lam) in self.penalized() {
            for v in range {
                values[at] = obj_factor * lam * self.concave.d2(x[v]);
                at += 1;
            }
        }
    }
}
