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
//! [`NlpProblem`] holds what every backend needs. What only one kind of caller needs is a
//! trait of its own, reached from a `&dyn NlpProblem` through a hook that defaults to
//! `None`: [`MaskedEvaluations`] (evaluations restricted to free variables, for the
//! decomposition) through [`NlpProblem::masked`], and, with the `torch` feature, the tensor
//! form of the objective (`crate::tensor::TensorObjective`) through
//! `NlpProblem::tensor_objective`.
//!
//! Depends on nothing but `std` (and, with the `torch` feature, the core's `tensor`).

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
    /// The problem's evaluations restricted to a set of free variables, for decomposition
    /// methods ([`MaskedEvaluations`]); `None` (the default) when it has none, and callers
    /// then use the full evaluations ([`gradient_among`], [`jacobian_values_among`],
    /// [`hessian_values_among`] do).
    fn masked(&self) -> Option<&dyn MaskedEvaluations> {
        None
    }
    /// The relative rounding of [`NlpProblem::objective`]'s values: the machine epsilon of
    /// the arithmetic it is computed in, `f64::EPSILON` unless a lower precision is used (the
    /// `torch` backend's float32). The gradient backend's line search and stall tests treat
    /// cost differences within a band of this width as rounding.
    fn objective_rounding(&self) -> f64 {
        f64::EPSILON
    }

    /// The objective in tensor operations, for the `torch` backend; `None` (the default)
    /// when the problem has none, which that backend refuses.
    #[cfg(feature = "torch")]
    fn tensor_objective(&self) -> Option<&dyn crate::tensor::TensorObjective> {
        None
    }
}

/// Evaluations of an [`NlpProblem`] that only a decomposition method needs: the entries of
/// the free variables (a mask of length `n`), the others left at any value (a subproblem,
/// which fixes them, never reads them). A problem implements it to skip the fixed
/// variables' work and returns itself from [`NlpProblem::masked`]; each method defaults to
/// the full evaluation, so a problem overrides only those it can make cheaper.
pub trait MaskedEvaluations: NlpProblem {
    /// The gradient entries of the `free` variables.
    fn gradient_among(&self, x: &[f64], _free: &[bool], grad: &mut [f64]) {
        self.gradient(x, grad);
    }
    /// The Jacobian entries of [`NlpProblem::jacobian_values`] in the columns of the `free`
    /// variables.
    fn jacobian_values_among(&self, x: &[f64], _free: &[bool], values: &mut [f64]) {
        self.jacobian_values(x, values);
    }
    /// The Hessian entries of [`NlpProblem::hessian_values`] whose row and column variables
    /// are both `free`. Called only when the problem gives a Hessian.
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
}

/// The gradient entries of the `free` variables of `problem`: its masked evaluation where
/// it has one ([`NlpProblem::masked`]), else the full gradient.
pub fn gradient_among(problem: &dyn NlpProblem, x: &[f64], free: &[bool], grad: &mut [f64]) {
    match problem.masked() {
        Some(masked) => masked.gradient_among(x, free, grad),
        None => problem.gradient(x, grad),
    }
}

/// The Jacobian entries in the columns of the `free` variables of `problem`: its masked
/// evaluation where it has one ([`NlpProblem::masked`]), else the full Jacobian.
pub fn jacobian_values_among(
    problem: &dyn NlpProblem,
    x: &[f64],
    free: &[bool],
    values: &mut [f64],
) {
    match problem.masked() {
        Some(masked) => masked.jacobian_values_among(x, free, values),
        None => problem.jacobian_values(x, values),
    }
}

/// The Hessian entries of `problem` whose row and column variables are both `free`: its
/// masked evaluation where it has one ([`NlpProblem::masked`]), else the full Hessian.
pub fn hessian_values_among(
    problem: &dyn NlpProblem,
    x: &[f64],
    obj_factor: f64,
    lambda: &[f64],
    free: &[bool],
    values: &mut [f64],
) {
    match problem.masked() {
        Some(masked) => masked.hessian_values_among(x, obj_factor, lambda, free, values),
        None => problem.hessian_values(x, obj_factor, lambda, values),
    }
}

/// The largest violation of `problem`'s variable bounds and constraints at `x` (0 where
/// it is feasible): what a point that a solver or a stage returned is judged by.
pub fn max_violation(problem: &dyn NlpProblem, x: &[f64]) -> f64 {
    let (xl, xu) = problem.variable_bounds();
    let (gl, gu) = problem.constraint_bounds();
    let mut g = vec![0.0; problem.num_constraints()];
    problem.constraints(x, &mut g);
    let beyond = |v: f64, lo: f64, hi: f64| (lo - v).max(v - hi).max(0.0);
    let bounds = x
        .iter()
        .zip(xl.iter().zip(&xu))
        .map(|(v, (lo, hi))| beyond(*v, *lo, *hi));
    let rows = g
        .iter()
        .zip(gl.iter().zip(&gu))
        .map(|(v, (lo, hi))| beyond(*v, *lo, *hi));
    bounds.chain(rows).fold(0.0, f64::max)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// f(x) = sum_j (j + 1) x_j^2 with one row sum_j x_j, Hessian diagonal; with `masked`,
    /// its masked evaluations write only the free entries (the others stay NaN), so a
    /// test sees which evaluation ran.
    struct Diagonal {
        masked: bool,
    }

    impl NlpProblem for Diagonal {
        fn num_variables(&self) -> usize {
            3
        }
        fn num_constraints(&self) -> usize {
            1
        }
        fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
            (vec![f64::NEG_INFINITY; 3], vec![f64::INFINITY; 3])
        }
        fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
            (vec![0.0], vec![1.0])
        }
        fn objective(&self, x: &[f64]) -> f64 {
            x.iter()
                .enumerate()
                .map(|(j, v)| (j + 1) as f64 * v * v)
                .sum()
        }
        fn gradient(&self, x: &[f64], grad: &mut [f64]) {
            for (j, g) in grad.iter_mut().enumerate() {
                *g = 2.0 * (j + 1) as f64 * x[j];
            }
        }
        fn constraints(&self, x: &[f64], g: &mut [f64]) {
            g[0] = x.iter().sum();
        }
        fn jacobian_structure(&self) -> Vec<(usize, usize)> {
            (0..3).map(|j| (0, j)).collect()
        }
        fn jacobian_values(&self, _x: &[f64], values: &mut [f64]) {
            values.fill(1.0);
        }
        fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
            Some((0..3).map(|j| (j, j)).collect())
        }
        fn hessian_values(&self, _x: &[f64], obj_factor: f64, _lambda: &[f64], values: &mut [f64]) {
            for (j, h) in values.iter_mut().enumerate() {
                *h = obj_factor * 2.0 * (j + 1) as f64;
            }
        }
        fn masked(&self) -> Option<&dyn MaskedEvaluations> {
            self.masked.then_some(self as &dyn MaskedEvaluations)
        }
    }

    /// Overrides the gradient and the Jacobian; the Hessian keeps the full default.
    impl MaskedEvaluations for Diagonal {
        fn gradient_among(&self, x: &[f64], free: &[bool], grad: &mut [f64]) {
            for (j, g) in grad.iter_mut().enumerate() {
                if free[j] {
                    *g = 2.0 * (j + 1) as f64 * x[j];
                }
            }
        }
        fn jacobian_values_among(&self, _x: &[f64], free: &[bool], values: &mut [f64]) {
            for (j, v) in values.iter_mut().enumerate() {
                if free[j] {
                    *v = 1.0;
                }
            }
        }
    }

    fn entries(values: &[f64]) -> Vec<Option<f64>> {
        values.iter().map(|v| (!v.is_nan()).then_some(*v)).collect()
    }

    #[test]
    fn masked_evaluations_are_used_where_a_problem_has_them() {
        let problem = Diagonal { masked: true };
        let (x, free) = ([1.0, 2.0, 3.0], [true, false, true]);
        let mut grad = [f64::NAN; 3];
        gradient_among(&problem, &x, &free, &mut grad);
        assert_eq!(entries(&grad), [Some(2.0), None, Some(18.0)]);
        let mut jac = [f64::NAN; 3];
        jacobian_values_among(&problem, &x, &free, &mut jac);
        assert_eq!(entries(&jac), [Some(1.0), None, Some(1.0)]);
        // Not overridden: the trait's default, the full Hessian.
        let mut hess = [f64::NAN; 3];
        hessian_values_among(&problem, &x, 0.5, &[0.0], &free, &mut hess);
        assert_eq!(entries(&hess), [Some(1.0), Some(2.0), Some(3.0)]);
    }

    #[test]
    fn full_evaluations_are_used_where_a_problem_has_no_masked_ones() {
        let problem = Diagonal { masked: false };
        assert!(problem.masked().is_none());
        let (x, free) = ([1.0, 2.0, 3.0], [true, false, true]);
        let mut grad = [f64::NAN; 3];
        gradient_among(&problem, &x, &free, &mut grad);
        assert_eq!(entries(&grad), [Some(2.0), Some(8.0), Some(18.0)]);
        let mut jac = [f64::NAN; 3];
        jacobian_values_among(&problem, &x, &free, &mut jac);
        assert_eq!(entries(&jac), [Some(1.0); 3]);
        let mut hess = [f64::NAN; 3];
        hessian_values_among(&problem, &x, 2.0, &[0.0], &free, &mut hess);
        assert_eq!(entries(&hess), [Some(4.0), Some(8.0), Some(12.0)]);
    }
}
