//! The NLP as the gradient backend sees it ([`Nlp`]: guarded evaluations, violations,
//! projections) and the augmented Lagrangian subproblem the inner method minimizes over the
//! variable bounds ([`Subproblem`], an argmin `CostFunction` + `Gradient`).
//!
//! # The augmented Lagrangian
//!
//! For `g_L <= g(x) <= g_U` (equalities, one-sided and two-sided ranges alike) the
//! Powell–Hestenes–Rockafellar function in the shifted form of LANCELOT / ALGENCAN is
//!
//! ```text
//!   L_rho(x; lambda) = f(x) + rho/2 sum_i dist(g_i(x) + lambda_i / rho, [g_L,i, g_U,i])^2
//! ```
//!
//! (dropping the constant `-sum_i lambda_i^2 / (2 rho)`). Its gradient is
//! `grad f + J^T mu` with `mu_i = rho (t_i - P_i(t_i))`, `t_i = g_i + lambda_i / rho` and `P_i`
//! the projection onto `[g_L,i, g_U,i]`; `mu` is the first-order multiplier update, with
//! Ipopt's signs (`mu_i > 0` where the upper bound of `g_i` binds, `< 0` where the lower one
//! does). For an inactive inequality `t_i` lies inside its range and the term vanishes: the
//! `max(0, .)` of the classical inequality penalty.
//!
//! Depends on the core's `NlpProblem` and on argmin's problem traits.

use super::barrier::Barrier;
use argmin::core::{CostFunction, Error as ArgminError, Gradient, Hessian};
use glassbox_core::nlp::NlpProblem;
use nalgebra::DMatrix;
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The problem with its fixed data (bounds, Jacobian structure), evaluated through guards
/// that turn a panic into an error message. With a [`Barrier`] (the barrier path), the
/// objective is the barrier function and the barred bounds are not projected onto.
#[derive(Clone)]
pub(crate) struct Nlp<'a> {
    pub problem: &'a dyn NlpProblem,
    pub n: usize,
    pub m: usize,
    pub x_lower: Vec<f64>,
    pub x_upper: Vec<f64>,
    pub g_lower: Vec<f64>,
    pub g_upper: Vec<f64>,
    pub jacobian: Vec<(usize, usize)>,
    /// The lower-triangle structure of the Hessian of the Lagrangian, when the problem gives
    /// one (the projected Newton stage needs it).
    pub hessian: Option<Vec<(usize, usize)>>,
    /// The log barrier added to the objective, on a view of the problem made by
    /// [`Nlp::with_barrier`]; its bounds are then infinite in `x_lower` / `x_upper`.
    pub barrier: Option<Barrier>,
}

/// The objective and constraints at a point, and their derivatives once asked for.
#[derive(Clone, Debug)]
pub(crate) struct Point {
    pub x: Vec<f64>,
    pub f: f64,
    pub g: Vec<f64>,
    /// The gradient of `f` and the Jacobian values, once computed.
    pub derivatives: Option<(Vec<f64>, Vec<f64>)>,
}

impl Point {
    /// Whether the objective and every constraint value are finite.
    pub fn finite_values(&self) -> bool {
        self.f.is_finite() && self.g.iter().all(|v| v.is_finite())
    }

    /// Whether the derivatives are there and finite.
    pub fn finite_derivatives(&self) -> bool {
        self.derivatives
            .as_ref()
            .is_some_and(|(gf, jv)| gf.iter().chain(jv).all(|v| v.is_finite()))
    }
}

/// The message of a caught panic.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Projects `v` onto `[lower, upper]` (either may be infinite).
#[inline]
pub(crate) fn clamp(v: f64, lower: f64, upper: f64) -> f64 {
    v.max(lower).min(upper)
}

impl<'a> Nlp<'a> {
    pub fn new(problem: &'a dyn NlpProblem) -> Self {
        let (x_lower, x_upper) = problem.variable_bounds();
        let (g_lower, g_upper) = problem.constraint_bounds();
        Nlp {
            problem,
            n: problem.num_variables(),
            m: problem.num_constraints(),
            x_lower,
            x_upper,
            g_lower,
            g_upper,
            jacobian: problem.jacobian_structure(),
            hessian: problem.hessian_structure(),
            barrier: None,
        }
    }

    /// The problem with `barrier` added to its objective: the barred bounds become infinite
    /// for the projection (the barrier and the inner methods' fraction-to-the-boundary rule
    /// keep the iterates strictly inside them instead).
    pub fn with_barrier(&self, barrier: Barrier) -> Nlp<'a> {
        let mut view = self.clone();
        for j in 0..self.n {
            if barrier.lower[j].is_finite() {
                view.x_lower[j] = f64::NEG_INFINITY;
            }
            if barrier.upper[j].is_finite() {
                view.x_upper[j] = f64::INFINITY;
            }
        }
        view.barrier = Some(barrier);
        view
    }

    /// The bounds the inner methods' steps must stay strictly inside (those of the barrier).
    pub fn interior_bounds(&self) -> Option<(Vec<f64>, Vec<f64>)> {
        self.barrier
            .as_ref()
            .map(|b| (b.lower.clone(), b.upper.clone()))
    }

    /// Projects `x` onto the variable bounds in place.
    pub fn project(&self, x: &mut [f64]) {
        for ((v, &l), &u) in x.iter_mut().zip(&self.x_lower).zip(&self.x_upper) {
            *v = clamp(*v, l, u);
        }
    }

    /// `f(x)` (plus the barrier) and `g(x)`; a panic of the problem is an `Err` with its
    /// message. Outside the barrier's interior `f` is `+inf` (the problem is not evaluated).
    pub fn values(&self, x: &[f64]) -> Result<Point, String> {
        let problem = self.problem;
        let m = self.m;
        if self.barrier.as_ref().is_some_and(|b| !b.interior(x)) {
            return Ok(Point {
                x: x.to_vec(),
                f: f64::INFINITY,
                g: vec![f64::NAN; m],
                derivatives: None,
            });
        }
        catch_unwind(AssertUnwindSafe(|| {
            let mut f = problem.objective(x);
            if let Some(barrier) = &self.barrier {
                f += barrier.value(x);
            }
            let mut g = vec![0.0; m];
            problem.constraints(x, &mut g);
            (f, g)
        }))
        .map(|(f, g)| Point {
            x: x.to_vec(),
            f,
            g,
            derivatives: None,
        })
        .map_err(|payload| {
            format!(
                "an evaluation of {} panicked: {}",
                problem.name(),
                panic_message(payload.as_ref())
            )
        })
    }

    /// Adds the objective gradient and the Jacobian values to `point`.
    pub fn differentiate(&self, point: &mut Point) -> Result<(), String> {
        if point.derivatives.is_some() {
            return Ok(());
        }
        let problem = self.problem;
        let (n, nnz) = (self.n, self.jacobian.len());
        let x = &point.x;
        let derivatives = catch_unwind(AssertUnwindSafe(|| {
            let mut grad = vec![0.0; n];
            problem.gradient(x, &mut grad);
            if let Some(barrier) = &self.barrier {
                barrier.add_gradient(x, &mut grad);
            }
            let mut jac = vec![0.0; nnz];
            problem.jacobian_values(x, &mut jac);
            (grad, jac)
        }))
        .map_err(|payload| {
            format!(
                "an evaluation of {} panicked: {}",
                problem.name(),
                panic_message(payload.as_ref())
            )
        })?;
        point.derivatives = Some(derivatives);
        Ok(())
    }

    /// `f`, `g` and their derivatives at `x`.
    pub fn evaluate(&self, x: &[f64]) -> Result<Point, String> {
        let mut point = self.values(x)?;
        self.differentiate(&mut point)?;
        Ok(point)
    }

    /// `grad f + J^T mu` at a differentiated point.
    pub fn lagrangian_gradient(&self, point: &Point, mu: &[f64]) -> Vec<f64> {
        let (grad_f, jac) = point
            .derivatives
            .as_ref()
            .expect("the point was differentiated");
        let mut r = grad_f.clone();
        for (&(i, j), v) in self.jacobian.iter().zip(jac) {
            r[j] += mu[i] * v;
        }
        r
    }

    /// The largest violation of a variable bound or a constraint (NaN counts as infinite).
    pub fn max_violation(&self, x: &[f64], g: &[f64]) -> f64 {
        let mut worst: f64 = 0.0;
        let pairs = x
            .iter()
            .zip(self.x_lower.iter().zip(&self.x_upper))
            .chain(g.iter().zip(self.g_lower.iter().zip(&self.g_upper)));
        for (&v, (&l, &u)) in pairs {
            if v.is_nan() {
                return f64::INFINITY;
            }
            worst = worst.max(l - v).max(v - u);
        }
        worst
    }

    /// The projected-gradient step `P(x - r) - x` and its largest entry, for a gradient `r`.
    pub fn projected_step(&self, x: &[f64], r: &[f64]) -> (Vec<f64>, f64) {
        let mut norm: f64 = 0.0;
        let step: Vec<f64> = x
            .iter()
            .zip(r)
            .zip(self.x_lower.iter().zip(&self.x_upper))
            .map(|((&v, &rj), (&l, &u))| {
                // P(x - r) - x, written so that no rounding of x - r hides a small r.
                let d = clamp(-rj, l - v, u - v);
                norm = norm.max(d.abs());
                d
            })
            .collect();
        (step, norm)
    }

    /// Bound multipliers from the gradient of the Lagrangian `r`: the part of `-r` the bounds
    /// cut off in the projected-gradient step goes to `z_U` (pushing up) or `z_L` (pushing
    /// down), so that `r - z_L + z_U = -(P(x - r) - x)`, the projected gradient.
    pub fn bound_multipliers(&self, x: &[f64], r: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let (step, _) = self.projected_step(x, r);
        let mut z_lower = vec![0.0; self.n];
        let mut z_upper = vec![0.0; self.n];
        for j in 0..self.n {
            let cut = -r[j] - step[j];
            if cut > 0.0 {
                z_upper[j] = cut;
            } else {
                z_lower[j] = -cut;
            }
        }
        (z_lower, z_upper)
    }

    /// The shifted constraint values `t = g + lambda / rho` and their projections onto the
    /// constraint ranges.
    fn shifted<'b>(
        &'b self,
        g: &'b [f64],
        lambda: &'b [f64],
        rho: f64,
    ) -> impl Iterator<Item = (f64, f64)> + 'b {
        (0..self.m).map(move |i| {
            let t = g[i] + lambda[i] / rho;
            (t, clamp(t, self.g_lower[i], self.g_upper[i]))
        })
    }

    /// The first-order multiplier update `mu = rho (t - P(t))`.
    pub fn multiplier_update(&self, g: &[f64], lambda: &[f64], rho: f64) -> Vec<f64> {
        self.shifted(g, lambda, rho)
            .map(|(t, p)| rho * (t - p))
            .collect()
    }

    /// ALGENCAN's joint measure of infeasibility and complementarity,
    /// `max_i |g_i - P_i(g_i + lambda_i / rho)|`: the violation of an equality, and for an
    /// inequality the smaller of its slack and `|lambda_i| / rho` (or its violation).
    pub fn complementarity(&self, g: &[f64], lambda: &[f64], rho: f64) -> f64 {
        self.shifted(g, lambda, rho)
            .zip(g)
            .map(|((_, p), &gi)| (gi - p).abs())
            .fold(0.0, f64::max)
    }

    /// How far a differentiated point is from stationarity of the squared violation
    /// `h(x) = 1/2 sum_i dist(g_i(x), [g_L,i, g_U,i])^2` over the bounds: the largest entry
    /// of the projected gradient of `h`, scaled by `1 / max(1, largest residual)`. Near 0 at
    /// a point that violates the constraints, it is a (local) certificate of infeasibility.
    pub fn violation_stationarity(&self, point: &Point) -> f64 {
        let residual: Vec<f64> = (0..self.m)
            .map(|i| point.g[i] - clamp(point.g[i], self.g_lower[i], self.g_upper[i]))
            .collect();
        let scale = residual.iter().fold(1f64, |s, r| s.max(r.abs()));
        let (_, jac) = point
            .derivatives
            .as_ref()
            .expect("the point was differentiated");
        let mut grad = vec![0.0; self.n];
        for (&(i, j), v) in self.jacobian.iter().zip(jac) {
            grad[j] += residual[i] * v / scale;
        }
        self.projected_step(&point.x, &grad).1
    }

    /// The dense Hessian of the augmented Lagrangian `L_rho(.; lambda)` at a differentiated
    /// point: the problem's Hessian of the Lagrangian with the multiplier update `mu`
    /// (`grad^2 f + sum_i mu_i grad^2 g_i`, plus the barrier's diagonal) plus
    /// `rho grad g_i grad g_i^T` for every
    /// constraint whose shifted value `t_i` lies outside its range (the generalized Hessian of
    /// the squared distance, which is not twice differentiable where `t_i` meets a bound).
    /// Entries listed twice in the structure are summed. Non-finite values are left for the
    /// caller to detect.
    pub fn augmented_hessian(
        &self,
        point: &Point,
        lambda: &[f64],
        rho: f64,
    ) -> Result<DMatrix<f64>, String> {
        let structure = self
            .hessian
            .as_ref()
            .ok_or_else(|| format!("{} gives no Hessian", self.problem.name()))?;
        let n = self.n;
        let mu = self.multiplier_update(&point.g, lambda, rho);
        let problem = self.problem;
        let x = &point.x;
        let values = catch_unwind(AssertUnwindSafe(|| {
            let mut values = vec![0.0; structure.len()];
            problem.hessian_values(x, 1.0, &mu, &mut values);
            values
        }))
        .map_err(|payload| {
            format!(
                "an evaluation of {} panicked: {}",
                problem.name(),
                panic_message(payload.as_ref())
            )
        })?;
        let mut h = DMatrix::zeros(n, n);
        for (&(r, c), v) in structure.iter().zip(&values) {
            h[(r, c)] += v;
            if r != c {
                h[(c, r)] += v;
            }
        }
        if let Some(barrier) = &self.barrier {
            for j in 0..n {
                h[(j, j)] += barrier.hessian_diagonal(x, j);
            }
        }
        if self.m > 0 {
            let (_, jac) = point
                .derivatives
                .as_ref()
                .expect("the point was differentiated");
            let outside: Vec<bool> = self
                .shifted(&point.g, lambda, rho)
                .map(|(t, p)| t != p)
                .collect();
            let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); self.m];
            for (&(i, j), &v) in self.jacobian.iter().zip(jac) {
                if outside[i] {
                    rows[i].push((j, v));
                }
            }
            for row in &rows {
                for &(j, vj) in row {
                    for &(k, vk) in row {
                        h[(j, k)] += rho * vj * vk;
                    }
                }
            }
        }
        Ok(h)
    }

    /// The initial penalty of ALGENCAN: `10 max(1, |f|) / max(1, h)` with `h` half the
    /// squared violation, clamped to `[1e-8, 1e8]`.
    pub fn initial_penalty(&self, point: &Point) -> f64 {
        let h: f64 = (0..self.m)
            .map(|i| {
                let r = point.g[i] - clamp(point.g[i], self.g_lower[i], self.g_upper[i]);
                0.5 * r * r
            })
            .sum();
        (10.0 * point.f.abs().max(1.0) / h.max(1.0)).clamp(1e-8, 1e8)
    }
}

/// The augmented Lagrangian `L_rho(.; lambda)` of [`Nlp`] as an argmin problem. It caches
/// the last point it evaluated and the last point it differentiated, so that the gradient at
/// a point the line search accepted reuses the constraint values computed for its cost, and
/// the outer loop reuses the final point's evaluations (the final point is always the last
/// one differentiated).
pub(crate) struct Subproblem<'a> {
    nlp: &'a Nlp<'a>,
    lambda: Vec<f64>,
    rho: f64,
    values: RefCell<Option<Point>>,
    full: RefCell<Option<Point>>,
}

impl<'a> Subproblem<'a> {
    /// The subproblem of multipliers `lambda` and penalty `rho`; `start` is a point already
    /// evaluated (and differentiated), to be reused.
    pub fn new(nlp: &'a Nlp<'a>, lambda: Vec<f64>, rho: f64, start: Option<Point>) -> Self {
        Subproblem {
            nlp,
            lambda,
            rho,
            values: RefCell::new(None),
            full: RefCell::new(start.filter(|p| p.derivatives.is_some())),
        }
    }

    /// The last point differentiated.
    pub fn into_last(self) -> Option<Point> {
        self.full.into_inner()
    }

    /// Runs `read` on the point at `x` (with its derivatives if asked for and its values
    /// are finite), from the caches or evaluated.
    fn with_point<R>(
        &self,
        x: &[f64],
        derivatives: bool,
        read: impl FnOnce(&Point) -> R,
    ) -> Result<R, ArgminError> {
        if let Some(point) = self.full.borrow().as_ref().filter(|p| p.x.as_slice() == x) {
            return Ok(read(point));
        }
        let mut values = self.values.borrow_mut();
        if !values.as_ref().is_some_and(|p| p.x.as_slice() == x) {
            *values = Some(self.nlp.values(x).map_err(ArgminError::msg)?);
        }
        if !derivatives {
            return Ok(read(values.as_ref().expect("just set")));
        }
        let mut point = values.take().expect("just set");
        if point.finite_values() {
            self.nlp
                .differentiate(&mut point)
                .map_err(ArgminError::msg)?;
        }
        let result = read(&point);
        *self.full.borrow_mut() = Some(point);
        Ok(result)
    }

    fn penalty(&self, g: &[f64]) -> f64 {
        let rho = self.rho;
        0.5 * rho
            * self
                .nlp
                .shifted(g, &self.lambda, rho)
                .map(|(t, p)| (t - p) * (t - p))
                .sum::<f64>()
    }
}

impl CostFunction for Subproblem<'_> {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, x: &Vec<f64>) -> Result<f64, ArgminError> {
        self.with_point(x, false, |point| {
            if point.finite_values() {
                point.f + self.penalty(&point.g)
            } else {
                f64::NAN
            }
        })
    }
}

impl Gradient for Subproblem<'_> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;

    fn gradient(&self, x: &Vec<f64>) -> Result<Vec<f64>, ArgminError> {
        self.with_point(x, true, |point| {
            if !(point.finite_values() && point.finite_derivatives()) {
                return vec![f64::NAN; self.nlp.n];
            }
            let mu = self.nlp.multiplier_update(&point.g, &self.lambda, self.rho);
            self.nlp.lagrangian_gradient(point, &mu)
        })
    }
}

impl Hessian for Subproblem<'_> {
    type Param = Vec<f64>;
    type Hessian = DMatrix<f64>;

    fn hessian(&self, x: &Vec<f64>) -> Result<DMatrix<f64>, ArgminError> {
        self.with_point(x, true, |point| {
            if !(point.finite_values() && point.finite_derivatives()) {
                return Ok(DMatrix::from_element(self.nlp.n, self.nlp.n, f64::NAN));
            }
            self.nlp.augmented_hessian(point, &self.lambda, self.rho)
        })?
        .map_err(ArgminError::msg)
    }
}
