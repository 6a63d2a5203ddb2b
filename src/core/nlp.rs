//! The continuous nonlinear program (NLP), the contract between NLP formulations and NLP
//! backends:
//!
//! ```text
//!   minimize    f(x)
//!   subject to  g_lower <= g(x) <= g_upper
//!               x_lower <= x    <= x_upper
//! ```
//!
//! Infinite bounds are `f64::INFINITY` / `f64::NEG_INFINITY`; an equality has equal bounds.
//! Sparse matrices are given as a structure (a list of `(row, column)` pairs, fixed for the
//! life of the problem) and values in the same order. The Hessian of the Lagrangian
//! `sigma * grad^2 f(x) + sum_i lambda_i grad^2 g_i(x)` is optional and, being symmetric,
//! lists only its lower triangle (`row >= column`).
//!
//! Depends on nothing but `std`.

/// A smooth NLP. Evaluations take `&self`, so one problem can be read by many threads;
/// implementations that cache intermediate quantities do it behind interior mutability.
pub trait NlpProblem: Send + Sync {
    /// Number of variables `n`.
    fn num_variables(&self) -> usize;
    /// Number of general constraints `m`.
    fn num_constraints(&self) -> usize;
    /// Lower and upper bounds of the variables (length `n` each).
    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>);
    /// Lower and upper bounds of the constraints (length `m` each).
    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>);
    /// The objective `f(x)`.
    fn objective(&self, x: &[f64]) -> f64;
    /// The gradient of the objective, written into `grad` (length `n`).
    fn gradient(&self, x: &[f64], grad: &mut [f64]);
    /// The constraint values `g(x)`, written into `g` (length `m`).
    fn constraints(&self, x: &[f64], g: &mut [f64]);
    /// The sparsity structure of the constraint Jacobian: `(constraint, variable)` pairs.
    fn jacobian_structure(&self) -> Vec<(usize, usize)>;
    /// The Jacobian values in the order of [`NlpProblem::jacobian_structure`].
    fn jacobian_values(&self, x: &[f64], values: &mut [f64]);
    /// The lower-triangle structure of the Hessian of the Lagrangian, or `None` when the
    /// problem gives no Hessian (backends then use a quasi-Newton approximation).
    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        None
    }
    /// The Hessian of the Lagrangian `obj_factor * grad^2 f + sum_i lambda_i grad^2 g_i`,
    /// in the order of [`NlpProblem::hessian_structure`]. Called only when that is `Some`.
    fn hessian_values(&self, _x: &[f64], _obj_factor: f64, _lambda: &[f64], _values: &mut [f64]) {}
    /// The Hessian entries of [`NlpProblem::hessian_values`] whose row and column variables
    /// are both `free` (a mask of length `n`); the others may be left at any value (a
    /// decomposition subproblem, which fixes the rest, never reads them). Problems override
    /// it to skip work; the default computes everything.
    fn hessian_values_among(
        &self,
        x: &[f64],
        obj_factor: f64,
        lambda: &[f64],
        _free: &[bool],
        values: &mut [f64],
    ) {
        self.hessian_values(x, obj_factor, lambda, values);
    }
    /// The gradient entries of the `free` variables (a mask of length `n`); the others may
    /// be left at any value (a decomposition subproblem never reads them). Problems
    /// override it to skip the fixed variables' work; the default computes everything.
    fn gradient_among(&self, x: &[f64], _free: &[bool], grad: &mut [f64]) {
        self.gradient(x, grad);
    }
    /// The Jacobian entries of [`NlpProblem::jacobian_values`] in the columns of the `free`
    /// variables; the others may be left at any value. The default computes everything.
    fn jacobian_values_among(&self, x: &[f64], _free: &[bool], values: &mut [f64]) {
        self.jacobian_values(x, values);
    }
    /// Which constraints are linear (their Jacobian values do not depend on `x`), a mask of
    /// length `m`. A decomposition subproblem turns a linear row with a single free
    /// variable into a bound on that variable. The default claims none (always safe).
    fn linear_constraints(&self) -> Vec<bool> {
        vec![false; self.num_constraints()]
    }
    /// A short name for logs and error messages.
    fn name(&self) -> String {
        "nlp".to_string()
    }
    /// The objective in tensor operations, for the `torch` backend; `None` (the default)
    /// when the problem has none, which that backend refuses.
    #[cfg(feature = "torch")]
    fn tensor_objective(&self) -> Option<&dyn crate::tensor::TensorObjective> {
        None
    }
}

/// Checks that a problem's declared dimensions and bounds are consistent; backends call it
/// before solving so that a malformed problem is an error, not a crash inside a solver.
pub fn validate(problem: &dyn NlpProblem) -> crate::Result<()> {
    use crate::GlassboxError::InvalidProblem;
    let n = problem.num_variables();
    let m = problem.num_constraints();
    let (xl, xu) = problem.variable_bounds();
    let (gl, gu) = problem.constraint_bounds();
    if xl.len() != n || xu.len() != n {
        return Err(InvalidProblem(format!(
            "{}: {} variables but bounds of length {} and {}",
            problem.name(),
            n,
            xl.len(),
            xu.len()
        )));
    }
    if gl.len() != m || gu.len() != m {
        return Err(InvalidProblem(format!(
            "{}: {} constraints but bounds of length {} and {}",
            problem.name(),
            m,
            gl.len(),
            gu.len()
        )));
    }
    for (i, (l, u)) in xl.iter().zip(&xu).enumerate() {
        if l.is_nan() || u.is_nan() || l > u {
            return Err(InvalidProblem(format!(
                "{}: variable {i} has bounds [{l}, {u}]",
                problem.name()
            )));
        }
    }
    for (i, (l, u)) in gl.iter().zip(&gu).enumerate() {
        if l.is_nan() || u.is_nan() || l > u {
            return Err(InvalidProblem(format!(
                "{}: constraint {i} has bounds [{l}, {u}]",
                problem.name()
            )));
        }
    }
    for &(r, c) in &problem.jacobian_structure() {
        if r >= m || c >= n {
            return Err(InvalidProblem(format!(
                "{}: Jacobian entry ({r}, {c}) outside {m} x {n}",
                problem.name()
            )));
        }
    }
    if let Some(h) = problem.hessian_structure() {
        for &(r, c) in &h {
            if r >= n || c > r {
                return Err(InvalidProblem(format!(
                    "{}: Hessian entry ({r}, {c}) is not in the lower triangle of {n} x {n}",
                    problem.name()
                )));
            }
        }
    }
    Ok(())
}

/// Finite-difference checks of a problem's derivatives, for tests of every formulation.
pub mod check {
    use super::NlpProblem;

    /// The largest relative error between the gradient and central differences at `x`.
    pub fn gradient_error(problem: &dyn NlpProblem, x: &[f64], step: f64) -> f64 {
        let n = problem.num_variables();
        let mut grad = vec![0.0; n];
        problem.gradient(x, &mut grad);
        let mut xp = x.to_vec();
        let mut worst: f64 = 0.0;
        for j in 0..n {
            xp[j] = x[j] + step;
            let fp = problem.objective(&xp);
            xp[j] = x[j] - step;
            let fm = problem.objective(&xp);
            xp[j] = x[j];
            let fd = (fp - fm) / (2.0 * step);
            worst = worst.max(relative(grad[j], fd));
        }
        worst
    }

    /// The largest relative error between the constraint Jacobian and central differences.
    pub fn jacobian_error(problem: &dyn NlpProblem, x: &[f64], step: f64) -> f64 {
        let n = problem.num_variables();
        let m = problem.num_constraints();
        let structure = problem.jacobian_structure();
        let mut values = vec![0.0; structure.len()];
        problem.jacobian_values(x, &mut values);
        let mut dense = vec![0.0; m * n];
        for (&(r, c), v) in structure.iter().zip(&values) {
            dense[r * n + c] += v;
        }
        let (mut gp, mut gm) = (vec![0.0; m], vec![0.0; m]);
        let mut xp = x.to_vec();
        let mut worst: f64 = 0.0;
        for j in 0..n {
            xp[j] = x[j] + step;
            problem.constraints(&xp, &mut gp);
            xp[j] = x[j] - step;
            problem.constraints(&xp, &mut gm);
            xp[j] = x[j];
            for i in 0..m {
                let fd = (gp[i] - gm[i]) / (2.0 * step);
                worst = worst.max(relative(dense[i * n + j], fd));
            }
        }
        worst
    }

    /// The largest relative error between the Hessian of the Lagrangian and central
    /// differences of its gradient (objective gradient times `obj_factor` plus the
    /// Jacobian transposed times `lambda`). `None` if the problem has no Hessian.
    pub fn hessian_error(
        problem: &dyn NlpProblem,
        x: &[f64],
        obj_factor: f64,
        lambda: &[f64],
        step: f64,
    ) -> Option<f64> {
        let structure = problem.hessian_structure()?;
        let n = problem.num_variables();
        let mut values = vec![0.0; structure.len()];
        problem.hessian_values(x, obj_factor, lambda, &mut values);
        let mut dense = vec![0.0; n * n];
        for (&(r, c), v) in structure.iter().zip(&values) {
            dense[r * n + c] += v;
            if r != c {
                dense[c * n + r] += v;
            }
        }
        let lagrangian_gradient = |x: &[f64]| {
            let mut g = vec![0.0; n];
            problem.gradient(x, &mut g);
            g.iter_mut().for_each(|v| *v *= obj_factor);
            let js = problem.jacobian_structure();
            let mut jv = vec![0.0; js.len()];
            problem.jacobian_values(x, &mut jv);
            for (&(r, c), v) in js.iter().zip(&jv) {
                g[c] += lambda[r] * v;
            }
            g
        };
        let mut xp = x.to_vec();
        let mut worst: f64 = 0.0;
        for j in 0..n {
            xp[j] = x[j] + step;
            let gp = lagrangian_gradient(&xp);
            xp[j] = x[j] - step;
            let gm = lagrangian_gradient(&xp);
            xp[j] = x[j];
            for i in 0..n {
                let fd = (gp[i] - gm[i]) / (2.0 * step);
                worst = worst.max(relative(dense[i * n + j], fd));
            }
        }
        Some(worst)
    }

    /// |a - b| relative to max(1, |a|, |b|).
    fn relative(a: f64, b: f64) -> f64 {
        (a - b).abs() / 1f64.max(a.abs()).max(b.abs())
    }
}

/// The quantities a problem computed at its last evaluation point, which the objective,
/// gradient, constraints and Hessian share: a backend asks for them at the same point in
/// turn, so the work is done once per point. Keyed by the whole point, behind a mutex so
/// evaluations can take `&self`.
pub struct PointCache<T> {
    last: std::sync::Mutex<Option<(Vec<f64>, std::sync::Arc<T>)>>,
}

impl<T> Default for PointCache<T> {
    fn default() -> Self {
        PointCache {
            last: std::sync::Mutex::new(None),
        }
    }
}

impl<T> PointCache<T> {
    /// The cached value at `x`, or `compute()` stored as the new one.
    pub fn get_or_compute(&self, x: &[f64], compute: impl FnOnce() -> T) -> std::sync::Arc<T> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, value)) = last.as_ref() {
            if at.as_slice() == x {
                return value.clone();
            }
        }
        let value = std::sync::Arc::new(compute());
        *last = Some((x.to_vec(), value.clone()));
        value
    }
}
