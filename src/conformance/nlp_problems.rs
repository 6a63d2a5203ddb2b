//! Small NLPs with known solutions, for the NLP backends' conformance suite
//! ([`super::nlp`]) and any test that needs a ready-made problem (`tests/torch_backend.rs`
//! gives them tensor forms). Every problem gives exact derivatives (checked against finite
//! differences by `tests/conformance_nlp.rs`); the Hessian is optional and can be hidden with
//! [`WithoutHessian`].
//!
//! Depends on the core's `NlpProblem` only.

use crate::NlpProblem;
use std::time::Duration;

const INF: f64 = f64::INFINITY;

/// min (x0 - 2)^2 + (x1 + 1)^2 over the box [0, 1]^2: both bounds active at the optimum
/// (1, 0), objective 2. No general constraints (m = 0).
pub struct BoundedQuadratic;

impl BoundedQuadratic {
    pub const OPTIMUM: [f64; 2] = [1.0, 0.0];
    pub const OBJECTIVE: f64 = 2.0;
}

impl NlpProblem for BoundedQuadratic {
    fn num_variables(&self) -> usize {
        2
    }
    fn num_constraints(&self) -> usize {
        0
    }
    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![0.0, 0.0], vec![1.0, 1.0])
    }
    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![], vec![])
    }
    fn objective(&self, x: &[f64]) -> f64 {
        (x[0] - 2.0).powi(2) + (x[1] + 1.0).powi(2)
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        grad[0] = 2.0 * (x[0] - 2.0);
        grad[1] = 2.0 * (x[1] + 1.0);
    }
    fn constraints(&self, _x: &[f64], _g: &mut [f64]) {}
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        vec![]
    }
    fn jacobian_values(&self, _x: &[f64], _values: &mut [f64]) {}
    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        Some(vec![(0, 0), (1, 1)])
    }
    fn hessian_values(&self, _x: &[f64], obj_factor: f64, _lambda: &[f64], values: &mut [f64]) {
        values[0] = 2.0 * obj_factor;
        values[1] = 2.0 * obj_factor;
    }
    fn name(&self) -> String {
        "bounded_quadratic".into()
    }
}

/// Hock–Schittkowski problem 71:
///
/// ```text
/// min  x0 x3 (x0 + x1 + x2) + x2
/// s.t. x0 x1 x2 x3 >= 25
///      x0^2 + x1^2 + x2^2 + x3^2 = 40
///      1 <= x <= 5
/// ```
///
/// Optimum 17.0140173 at (1, 4.7429994, 3.8211503, 1.3794082); standard start (1, 5, 5, 1).
pub struct Hs071;

impl Hs071 {
    pub const OPTIMUM: [f64; 4] = [1.0, 4.742_999_4, 3.821_150_3, 1.379_408_2];
    pub const OBJECTIVE: f64 = 17.014_017_3;
    pub const START: [f64; 4] = [1.0, 5.0, 5.0, 1.0];
}

impl NlpProblem for Hs071 {
    fn num_variables(&self) -> usize {
        4
    }
    fn num_constraints(&self) -> usize {
        2
    }
    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![1.0; 4], vec![5.0; 4])
    }
    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![25.0, 40.0], vec![INF, 40.0])
    }
    fn objective(&self, x: &[f64]) -> f64 {
        x[0] * x[3] * (x[0] + x[1] + x[2]) + x[2]
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        grad[0] = x[3] * (2.0 * x[0] + x[1] + x[2]);
        grad[1] = x[0] * x[3];
        grad[2] = x[0] * x[3] + 1.0;
        grad[3] = x[0] * (x[0] + x[1] + x[2]);
    }
    fn constraints(&self, x: &[f64], g: &mut [f64]) {
        g[0] = x[0] * x[1] * x[2] * x[3];
        g[1] = x.iter().map(|v| v * v).sum();
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        (0..2).flat_map(|i| (0..4).map(move |j| (i, j))).collect()
    }
    fn jacobian_values(&self, x: &[f64], values: &mut [f64]) {
        values[0] = x[1] * x[2] * x[3];
        values[1] = x[0] * x[2] * x[3];
        values[2] = x[0] * x[1] * x[3];
        values[3] = x[0] * x[1] * x[2];
        for j in 0..4 {
            values[4 + j] = 2.0 * x[j];
        }
    }
    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        Some((0..4).flat_map(|i| (0..=i).map(move |j| (i, j))).collect())
    }
    fn hessian_values(&self, x: &[f64], sigma: f64, lambda: &[f64], values: &mut [f64]) {
        // Order: (0,0) (1,0) (1,1) (2,0) (2,1) (2,2) (3,0) (3,1) (3,2) (3,3).
        values[0] = sigma * 2.0 * x[3];
        values[1] = sigma * x[3];
        values[2] = 0.0;
        values[3] = sigma * x[3];
        values[4] = 0.0;
        values[5] = 0.0;
        values[6] = sigma * (2.0 * x[0] + x[1] + x[2]);
        values[7] = sigma * x[0];
        values[8] = sigma * x[0];
        values[9] = 0.0;

        values[1] += lambda[0] * x[2] * x[3];
        values[3] += lambda[0] * x[1] * x[3];
        values[4] += lambda[0] * x[0] * x[3];
        values[6] += lambda[0] * x[1] * x[2];
        values[7] += lambda[0] * x[0] * x[2];
        values[8] += lambda[0] * x[0] * x[1];

        for k in [0, 2, 5, 9] {
            values[k] += lambda[1] * 2.0;
        }
    }
    fn name(&self) -> String {
        "hs071".into()
    }
}

/// min x0^2 + x1^2 s.t. x0 + x1 = 1, x free: optimum (0.5, 0.5), objective 0.5,
/// constraint multiplier -1 (in the convention grad f + J^T lambda = 0).
pub struct EqualityConstrained;

impl EqualityConstrained {
    pub const OPTIMUM: [f64; 2] = [0.5, 0.5];
    pub const OBJECTIVE: f64 = 0.5;
}

impl NlpProblem for EqualityConstrained {
    fn num_variables(&self) -> usize {
        2
    }
    fn num_constraints(&self) -> usize {
        1
    }
    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![-INF; 2], vec![INF; 2])
    }
    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![1.0], vec![1.0])
    }
    fn objective(&self, x: &[f64]) -> f64 {
        x[0] * x[0] + x[1] * x[1]
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        grad[0] = 2.0 * x[0];
        grad[1] = 2.0 * x[1];
    }
    fn constraints(&self, x: &[f64], g: &mut [f64]) {
        g[0] = x[0] + x[1];
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        vec![(0, 0), (0, 1)]
    }
    fn jacobian_values(&self, _x: &[f64], values: &mut [f64]) {
        values[0] = 1.0;
        values[1] = 1.0;
    }
    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        Some(vec![(0, 0), (1, 1)])
    }
    fn hessian_values(&self, _x: &[f64], sigma: f64, _lambda: &[f64], values: &mut [f64]) {
        values[0] = 2.0 * sigma;
        values[1] = 2.0 * sigma;
    }
    fn name(&self) -> String {
        "equality_constrained".into()
    }
}

/// min (x0 - 2)^2 + (x1 - 2)^2 s.t. x0^2 + x1^2 <= 2: the constraint is active at the
/// optimum (1, 1), objective 2.
pub struct InequalityConstrained;

impl InequalityConstrained {
    pub const OPTIMUM: [f64; 2] = [1.0, 1.0];
    pub const OBJECTIVE: f64 = 2.0;
}

impl NlpProblem for InequalityConstrained {
    fn num_variables(&self) -> usize {
        2
    }
    fn num_constraints(&self) -> usize {
        1
    }
    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![-INF; 2], vec![INF; 2])
    }
    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![-INF], vec![2.0])
    }
    fn objective(&self, x: &[f64]) -> f64 {
        (x[0] - 2.0).powi(2) + (x[1] - 2.0).powi(2)
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        grad[0] = 2.0 * (x[0] - 2.0);
        grad[1] = 2.0 * (x[1] - 2.0);
    }
    fn constraints(&self, x: &[f64], g: &mut [f64]) {
        g[0] = x[0] * x[0] + x[1] * x[1];
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        vec![(0, 0), (0, 1)]
    }
    fn jacobian_values(&self, x: &[f64], values: &mut [f64]) {
        values[0] = 2.0 * x[0];
        values[1] = 2.0 * x[1];
    }
    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        Some(vec![(0, 0), (1, 1)])
    }
    fn hessian_values(&self, _x: &[f64], sigma: f64, lambda: &[f64], values: &mut [f64]) {
        values[0] = 2.0 * sigma + 2.0 * lambda[0];
        values[1] = 2.0 * sigma + 2.0 * lambda[0];
    }
    fn name(&self) -> String {
        "inequality_constrained".into()
    }
}

/// x in [0, 1] with the general constraint x >= 2: infeasible.
pub struct Infeasible;

impl NlpProblem for Infeasible {
    fn num_variables(&self) -> usize {
        1
    }
    fn num_constraints(&self) -> usize {
        1
    }
    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![0.0], vec![1.0])
    }
    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![2.0], vec![INF])
    }
    fn objective(&self, x: &[f64]) -> f64 {
        x[0] * x[0]
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        grad[0] = 2.0 * x[0];
    }
    fn constraints(&self, x: &[f64], g: &mut [f64]) {
        g[0] = x[0];
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        vec![(0, 0)]
    }
    fn jacobian_values(&self, _x: &[f64], values: &mut [f64]) {
        values[0] = 1.0;
    }
    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        Some(vec![(0, 0)])
    }
    fn hessian_values(&self, _x: &[f64], sigma: f64, _lambda: &[f64], values: &mut [f64]) {
        values[0] = 2.0 * sigma;
    }
    fn name(&self) -> String {
        "infeasible".into()
    }
}

/// min -x0 + x1^2 with x free and the harmless constraint x1 <= 1 (as a general
/// constraint): unbounded below along x0.
pub struct Unbounded;

impl NlpProblem for Unbounded {
    fn num_variables(&self) -> usize {
        2
    }
    fn num_constraints(&self) -> usize {
        1
    }
    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![-INF; 2], vec![INF; 2])
    }
    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![-INF], vec![1.0])
    }
    fn objective(&self, x: &[f64]) -> f64 {
        -x[0] + x[1] * x[1]
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        grad[0] = -1.0;
        grad[1] = 2.0 * x[1];
    }
    fn constraints(&self, x: &[f64], g: &mut [f64]) {
        g[0] = x[1];
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        vec![(0, 1)]
    }
    fn jacobian_values(&self, _x: &[f64], values: &mut [f64]) {
        values[0] = 1.0;
    }
    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        Some(vec![(1, 1)])
    }
    fn hessian_values(&self, _x: &[f64], sigma: f64, _lambda: &[f64], values: &mut [f64]) {
        values[0] = 2.0 * sigma;
    }
    fn name(&self) -> String {
        "unbounded".into()
    }
}

/// The extended Rosenbrock function `sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2`, minimum
/// 0 at (1, ..., 1), standard start (-1.2, 1, -1.2, 1, ...). `delay` is slept in every
/// objective and gradient evaluation, to make a solve slow on purpose.
pub struct Rosenbrock {
    pub n: usize,
    pub delay: Duration,
}

impl Rosenbrock {
    pub fn new(n: usize) -> Self {
        Rosenbrock {
            n,
            delay: Duration::ZERO,
        }
    }

    pub fn slow(n: usize, delay: Duration) -> Self {
        Rosenbrock { n, delay }
    }

    pub fn start(&self) -> Vec<f64> {
        (0..self.n)
            .map(|i| if i % 2 == 0 { -1.2 } else { 1.0 })
            .collect()
    }

    fn pause(&self) {
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
    }
}

impl NlpProblem for Rosenbrock {
    fn num_variables(&self) -> usize {
        self.n
    }
    fn num_constraints(&self) -> usize {
        0
    }
    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![-INF; self.n], vec![INF; self.n])
    }
    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![], vec![])
    }
    fn objective(&self, x: &[f64]) -> f64 {
        self.pause();
        x.windows(2)
            .map(|w| 100.0 * (w[1] - w[0] * w[0]).powi(2) + (1.0 - w[0]).powi(2))
            .sum()
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        self.pause();
        grad.fill(0.0);
        for i in 0..self.n.saturating_sub(1) {
            let t = x[i + 1] - x[i] * x[i];
            grad[i] += -400.0 * x[i] * t - 2.0 * (1.0 - x[i]);
            grad[i + 1] += 200.0 * t;
        }
    }
    fn constraints(&self, _x: &[f64], _g: &mut [f64]) {}
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        vec![]
    }
    fn jacobian_values(&self, _x: &[f64], _values: &mut [f64]) {}
    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        let mut s: Vec<(usize, usize)> = (0..self.n).map(|i| (i, i)).collect();
        s.extend((1..self.n).map(|i| (i, i - 1)));
        Some(s)
    }
    fn hessian_values(&self, x: &[f64], sigma: f64, _lambda: &[f64], values: &mut [f64]) {
        let n = self.n;
        values.fill(0.0);
        for i in 0..n.saturating_sub(1) {
            // Diagonal entries come first, then the subdiagonal (i + 1, i) at n + i.
            values[i] += sigma * (1200.0 * x[i] * x[i] - 400.0 * x[i + 1] + 2.0);
            values[i + 1] += sigma * 200.0;
            values[n + i] += sigma * (-400.0 * x[i]);
        }
    }
    fn name(&self) -> String {
        format!("rosenbrock_{}", self.n)
    }
}

/// Another problem with its Hessian hidden, to exercise quasi-Newton paths.
pub struct WithoutHessian<P>(pub P);

impl<P: NlpProblem> NlpProblem for WithoutHessian<P> {
    fn num_variables(&self) -> usize {
        self.0.num_variables()
    }
    fn num_constraints(&self) -> usize {
        self.0.num_constraints()
    }
    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        self.0.variable_bounds()
    }
    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        self.0.constraint_bounds()
    }
    fn objective(&self, x: &[f64]) -> f64 {
        self.0.objective(x)
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        self.0.gradient(x, grad)
    }
    fn constraints(&self, x: &[f64], g: &mut [f64]) {
        self.0.constraints(x, g)
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        self.0.jacobian_structure()
    }
    fn jacobian_values(&self, x: &[f64], values: &mut [f64]) {
        self.0.jacobian_values(x, values)
    }
    fn name(&self) -> String {
        format!("{}_without_hessian", self.0.name())
    }
}
