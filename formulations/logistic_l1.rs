//! l1-regularized logistic regression as a smooth NLP: binary for K = 2 (one weight vector,
//! class 1 against class 0), multinomial (softmax) for K > 2 (one weight vector per class).
//! It is a learner in its own right and the node model of loss-optimal trees (the OLCT
//! warm start fits it per node on the points routed there, hence the sample weights).
//!
//! ```text
//!   minimize  (1/N) sum_i s_i logloss_i(w, b) + lambda sum_{j,k} (w+_jk + w-_jk)
//!   over      w+, w- >= 0 (p x K'), b free (K'),   w = w+ - w-
//! ```
//!
//! with K' = 1 for K = 2 and K' = K otherwise, `s_i` the sample weights (1 by default),
//! `logloss_i = LSE(scores_i) - score_{i, y_i}` where the scores of row i are
//! `x_i . w_k + b_k` (and, for K = 2, a fixed score 0 for class 0, so that LSE is the
//! softplus). The l1 norm is made smooth by the split variables of S-ORCT (|w| = w+ + w-
//! at an optimum, since lambda > 0 makes one of the pair zero). With lambda = 0 the split
//! would leave a direction of constant objective (w+ and w- growing together) along which
//! an interior-point barrier has no minimum, so a single free `w` replaces the pair, as
//! S-ORCT does for a = a+ - a-. No general constraints (m = 0).
//!
//! For K > 2 the softmax is invariant to adding one vector to every class's weights (and
//! one number to every intercept); the l1 penalty picks one representative for the
//! weights, while the intercepts keep a flat direction. That is harmless for an
//! interior-point method (the Hessian is positive semidefinite; IPOPT regularizes it) and
//! keeps the classes symmetric, as scikit-learn's multinomial model does.
//!
//! Exact gradient and Hessian: with P the class probabilities and
//! `A_icd = P_ic (delta_cd - P_id)`, the Hessian block of score columns (c, d) is
//! `(1/N) X~^T diag(s_i A_icd) X~` over the augmented features `X~ = [x, 1]`; the w+ / w-
//! copies take it with signs + / - (as S-ORCT's a+ / a-). Log-sum-exp is computed
//! around the largest score, so no exponential overflows.
//!
//! Depends on the core (`nlp`, `data`, `metrics`, `model`, `formulation`, the solver trait
//! and its options and results), never on a backend.

use crate::coefficients::CoefficientBlock;
use glassbox_core::data::{Encoding, MinMaxScaler};
use glassbox_core::formulation::{
    FormulationInfo, NlpClassifierFormulation, ParamSpec, ReportedParams,
};
use glassbox_core::linalg::tr_mul;
use glassbox_core::metrics;
use glassbox_core::model::{CheckedModel, Classifier};
use glassbox_core::nlp::{NlpProblem, PointCache};
use glassbox_core::{GlassboxError, NlpSolver, Result, SolveOptions, SolveResult, WarmStart};
use nalgebra::DMatrix;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

/// The name configs and saved models use.
pub const NAME: &str = "logistic_l1";

/// Half-width of the uniform distribution of the random starting weights (scaled units).
const START_WEIGHT: f64 = 0.1;

/// Smallest class prior used for the starting intercepts, so that a class without
/// (weighted) points gets a finite intercept.
const MIN_PRIOR: f64 = 1e-6;

// ---------------------------------------------------------------------------------------
// Config

/// The parameters of l1-regularized logistic regression as written in the `[formulation]`
/// table of a config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogisticL1Config {
    /// The l1 penalty lambda, absolute (on the scaled features).
    pub lambda: f64,
    /// lambda on a grid normalised by the number of features: `2^r / p` with r this value
    /// (overrides `lambda`).
    pub lambda_log2: Option<f64>,
}

impl Default for LogisticL1Config {
    fn default() -> Self {
        LogisticL1Config {
            lambda: 0.01,
            lambda_log2: None,
        }
    }
}

/// The description `glassbox formulations` prints.
pub fn info() -> FormulationInfo {
    const PARAMS: &[ParamSpec] = &[
        ParamSpec {
            name: "lambda",
            default: "0.01",
            help: "l1 penalty on the weights (scaled features), absolute",
        },
        ParamSpec {
            name: "lambda_log2",
            default: "",
            help: "r: lambda = 2^r / p (overrides lambda)",
        },
    ];
    FormulationInfo {
        name: NAME,
        kind: "nlp",
        description: "l1-regularized logistic regression (binary, or multinomial for K > 2), smooth NLP with split variables",
        parameters: PARAMS,
    }
}

impl LogisticL1Config {
    /// Checks the parameters and resolves the absolute lambda for `p` features.
    pub fn resolve(&self, p: usize) -> Result<f64> {
        let lambda = match self.lambda_log2 {
            Some(r) => 2f64.powf(r) / p.max(1) as f64,
            None => self.lambda,
        };
        if !(lambda.is_finite() && lambda >= 0.0) {
            return Err(GlassboxError::formulation(
                NAME,
                format!("lambda must be a finite number >= 0, got {lambda}"),
            ));
        }
        Ok(lambda)
    }

    /// Builds the NLP on scaled training features `x` (N x p) and classes `y`, every
    /// sample of weight 1.
    pub fn problem(
        &self,
        x: Arc<DMatrix<f64>>,
        y: Arc<Vec<usize>>,
        classes: usize,
    ) -> Result<LogisticL1Problem> {
        let lambda = self.resolve(x.ncols())?;
        LogisticL1Problem::new(x, y, classes, lambda, None)
    }
}

// ---------------------------------------------------------------------------------------
// Variables

/// Where each group of variables sits in the NLP's variable vector: `w+` (or `w` when
/// lambda = 0), then `w-` (only when split), then the intercepts `b`. Weights are
/// column-major: entry (j, c) at `c * p + j`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Features p.
    pub p: usize,
    /// Score columns K' (1 for K = 2, K otherwise).
    pub columns: usize,
    /// Whether w is split into w+ and w- (lambda > 0).
    pub split: bool,
    /// First index of w- (equal to `b` when not split).
    pub w_minus: usize,
    /// First index of the intercepts.
    pub b: usize,
    /// Number of variables.
    pub n: usize,
}

impl Layout {
    fn new(p: usize, columns: usize, split: bool) -> Self {
        let pk = p * columns;
        let b = if split { 2 * pk } else { pk };
        Layout {
            p,
            columns,
            split,
            w_minus: pk,
            b,
            n: b + columns,
        }
    }

    /// Index of w_jc (or w+_jc).
    pub fn w(&self, j: usize, c: usize) -> usize {
        self.weight_block().plus_index(j, c)
    }

    /// Index of w-_jc (only when split).
    pub fn w_neg(&self, j: usize, c: usize) -> usize {
        self.weight_block().minus_index(j, c)
    }

    /// The weights w (p x K') at `x`.
    pub fn weights(&self, x: &[f64]) -> DMatrix<f64> {
        self.weight_block().matrix(x)
    }

    /// The weights as a coefficient block (w+ first, then w-).
    fn weight_block(&self) -> CoefficientBlock {
        CoefficientBlock {
            p: self.p,
            columns: self.columns,
            split: self.split,
            plus: 0,
            minus: self.w_minus,
        }
    }

    /// The intercepts b (K') at `x`.
    pub fn intercepts(&self, x: &[f64]) -> Vec<f64> {
        x[self.b..self.b + self.columns].to_vec()
    }

    /// The weights and intercepts stacked as a (p + 1) x K' matrix (intercepts last).
    fn augmented(&self, x: &[f64]) -> DMatrix<f64> {
        let w = self.weights(x);
        DMatrix::from_fn(self.p + 1, self.columns, |j, c| {
            if j < self.p {
                w[(j, c)]
            } else {
                x[self.b + c]
            }
        })
    }

    /// The NLP point of given weights and intercepts (w+ = max(w, 0), w- = max(-w, 0)).
    pub fn point(&self, coefficients: &LogisticWeights) -> Vec<f64> {
        let mut x = vec![0.0; self.n];
        for c in 0..self.columns {
            for j in 0..self.p {
                let v = coefficients.weights[(j, c)];
                if self.split {
                    x[self.w(j, c)] = v.max(0.0);
                    x[self.w_neg(j, c)] = (-v).max(0.0);
                } else {
                    x[self.w(j, c)] = v;
                }
            }
            x[self.b + c] = coefficients.intercepts[c];
        }
        x
    }

    /// The entry of the augmented coefficients ((p + 1) x K', column-major: `c * (p + 1) +
    /// j`) a variable stands for, with the sign of its derivative.
    fn smooth_of(&self, r: usize) -> (usize, f64) {
        let q = self.p + 1;
        if r >= self.b {
            let c = r - self.b;
            (c * q + self.p, 1.0)
        } else if r >= self.w_minus && self.split {
            let k = r - self.w_minus;
            ((k / self.p) * q + k % self.p, -1.0)
        } else {
            ((r / self.p) * q + r % self.p, 1.0)
        }
    }
}

// ---------------------------------------------------------------------------------------
// The NLP

/// The quantities of one evaluation point shared by objective, gradient and Hessian.
struct Forward {
    /// Probabilities of the score columns (N x K'): for K = 2, P(class 1).
    proba: DMatrix<f64>,
    /// (1/N) sum_i s_i logloss_i.
    loss: f64,
}

/// One l1-regularized logistic regression instance: scaled data, sample weights, lambda.
pub struct LogisticL1Problem {
    /// Scaled features with a column of ones appended (N x (p + 1)).
    augmented: DMatrix<f64>,
    y: Arc<Vec<usize>>,
    classes: usize,
    lambda: f64,
    /// s_i / N.
    row_weights: Vec<f64>,
    /// Indicator of the true class per score column (N x K').
    targets: DMatrix<f64>,
    layout: Layout,
    cache: PointCache<Forward>,
}

impl LogisticL1Problem {
    /// Builds the NLP on scaled features `x` (N x p), class indices `y` in `0..classes`,
    /// penalty `lambda >= 0` and optional per-sample weights (finite, >= 0, one per row;
    /// `None` for all 1). The objective divides by N, not by the sum of the weights.
    pub fn new(
        x: Arc<DMatrix<f64>>,
        y: Arc<Vec<usize>>,
        classes: usize,
        lambda: f64,
        sample_weights: Option<Vec<f64>>,
    ) -> Result<Self> {
        let err = |m: String| Err(GlassboxError::formulation(NAME, m));
        let (n, p) = x.shape();
        if n != y.len() || n == 0 {
            return err(format!("{n} rows of features but {} labels", y.len()));
        }
        if classes < 2 {
            return err("classification needs at least two classes".into());
        }
        if let Some(&k) = y.iter().find(|&&k| k >= classes) {
            return err(format!("label {k} out of range 0..{classes}"));
        }
        if !(lambda.is_finite() && lambda >= 0.0) {
            return err(format!("lambda must be a finite number >= 0, got {lambda}"));
        }
        if x.iter().any(|v| !v.is_finite()) {
            return err("the features hold a non-finite value".into());
        }
        let weights = match sample_weights {
            None => vec![1.0; n],
            Some(w) => {
                if w.len() != n {
                    return err(format!("{} sample weights for {n} rows", w.len()));
                }
                if let Some(v) = w.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
                    return err(format!("sample weights must be finite and >= 0, got {v}"));
                }
                w
            }
        };
        let columns = score_columns(classes);
        let offset = classes - columns;
        let targets = DMatrix::from_fn(
            n,
            columns,
            |i, c| {
                if y[i] == c + offset {
                    1.0
                } else {
                    0.0
                }
            },
        );
        let augmented = DMatrix::from_fn(n, p + 1, |i, j| if j < p { x[(i, j)] } else { 1.0 });
        Ok(LogisticL1Problem {
            augmented,
            y,
            classes,
            lambda,
            row_weights: weights.iter().map(|s| s / n as f64).collect(),
            targets,
            layout: Layout::new(p, columns, lambda > 0.0),
            cache: PointCache::default(),
        })
    }

    /// The variable layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The absolute l1 penalty.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// The number of classes K.
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// Weights and intercepts at NLP point `x`.
    pub fn coefficients(&self, x: &[f64]) -> LogisticWeights {
        LogisticWeights {
            weights: self.layout.weights(x),
            intercepts: self.layout.intercepts(x),
        }
    }

    /// The deterministic start: zero weights, intercepts at the log of the (weighted)
    /// class priors.
    pub fn prior_start(&self) -> Vec<f64> {
        let lay = &self.layout;
        self.layout.point(&LogisticWeights {
            weights: DMatrix::zeros(lay.p, lay.columns),
            intercepts: self.prior_intercepts(),
        })
    }

    /// A seeded random start: weights uniform in [-0.1, 0.1], intercepts at the log priors.
    pub fn random_start(&self, rng: &mut ChaCha8Rng) -> Vec<f64> {
        let lay = &self.layout;
        let weights = DMatrix::from_fn(lay.p, lay.columns, |_, _| {
            rng.random_range(-START_WEIGHT..=START_WEIGHT)
        });
        self.layout.point(&LogisticWeights {
            weights,
            intercepts: self.prior_intercepts(),
        })
    }

    /// log P(k) (K > 2) or log P(1) / P(0) (K = 2), from the weighted class counts.
    fn prior_intercepts(&self) -> Vec<f64> {
        let mut mass = vec![0.0; self.classes];
        for (i, &k) in self.y.iter().enumerate() {
            mass[k] += self.row_weights[i];
        }
        let total: f64 = mass.iter().sum();
        let log_prior = |k: usize| {
            let prior = if total > 0.0 {
                mass[k] / total
            } else {
                1.0 / self.classes as f64
            };
            prior.max(MIN_PRIOR).ln()
        };
        if self.classes == 2 {
            vec![log_prior(1) - log_prior(0)]
        } else {
            (0..self.classes).map(log_prior).collect()
        }
    }

    fn forward(&self, x: &[f64]) -> Arc<Forward> {
        self.cache.get_or_compute(x, || self.compute_forward(x))
    }

    fn compute_forward(&self, x: &[f64]) -> Forward {
        let scores = &self.augmented * self.layout.augmented(x);
        let binary = self.classes == 2;
        let mut proba = DMatrix::zeros(scores.nrows(), scores.ncols());
        let mut loss = 0.0;
        for i in 0..scores.nrows() {
            let lse = softmax_row(&scores, i, binary, &mut proba);
            let target: f64 = (0..scores.ncols())
                .map(|c| self.targets[(i, c)] * scores[(i, c)])
                .sum();
            loss += self.row_weights[i] * (lse - target);
        }
        Forward { proba, loss }
    }

    /// The Hessian of the loss over the augmented coefficients, dense and symmetric
    /// ((p + 1) K' square, index `c * (p + 1) + j`).
    fn smooth_hessian(&self, f: &Forward) -> DMatrix<f64> {
        let q = self.layout.p + 1;
        let k = self.layout.columns;
        let n = self.augmented.nrows();
        let mut h = DMatrix::zeros(q * k, q * k);
        let mut scaled = self.augmented.clone();
        for c in 0..k {
            for d in 0..=c {
                for i in 0..n {
                    let pc = f.proba[(i, c)];
                    let delta = if c == d { 1.0 } else { 0.0 };
                    let a = self.row_weights[i] * pc * (delta - f.proba[(i, d)]);
                    for j in 0..q {
                        scaled[(i, j)] = self.augmented[(i, j)] * a;
                    }
                }
                let block = tr_mul(&self.augmented, &scaled);
                for j1 in 0..q {
                    for j2 in 0..q {
                        h[(c * q + j1, d * q + j2)] = block[(j1, j2)];
                        h[(d * q + j2, c * q + j1)] = block[(j1, j2)];
                    }
                }
            }
        }
        h
    }
}

/// Score columns K' for K classes.
fn score_columns(classes: usize) -> usize {
    if classes == 2 {
        1
    } else {
        classes
    }
}

/// Writes the probabilities of the score columns of row `i` into `proba` and returns the
/// log-sum-exp of the row's scores (with the implicit score 0 of class 0 when `binary`),
/// computed around the largest score.
fn softmax_row(scores: &DMatrix<f64>, i: usize, binary: bool, proba: &mut DMatrix<f64>) -> f64 {
    let k = scores.ncols();
    let mut top = if binary { 0.0 } else { f64::NEG_INFINITY };
    for c in 0..k {
        top = top.max(scores[(i, c)]);
    }
    let mut sum = if binary { (-top).exp() } else { 0.0 };
    for c in 0..k {
        let e = (scores[(i, c)] - top).exp();
        proba[(i, c)] = e;
        sum += e;
    }
    for c in 0..k {
        proba[(i, c)] /= sum;
    }
    top + sum.ln()
}

impl NlpProblem for LogisticL1Problem {
    fn num_variables(&self) -> usize {
        self.layout.n
    }

    fn num_constraints(&self) -> usize {
        0
    }

    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        let lay = &self.layout;
        let mut lower = vec![f64::NEG_INFINITY; lay.n];
        if lay.split {
            lower[..lay.b].fill(0.0);
        }
        (lower, vec![f64::INFINITY; lay.n])
    }

    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (Vec::new(), Vec::new())
    }

    fn objective(&self, x: &[f64]) -> f64 {
        let lay = &self.layout;
        let mut value = self.forward(x).loss;
        if lay.split {
            value += self.lambda * x[..lay.b].iter().sum::<f64>();
        }
        value
    }

    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        let lay = &self.layout;
        let f = self.forward(x);
        let residual = DMatrix::from_fn(f.proba.nrows(), lay.columns, |i, c| {
            self.row_weights[i] * (f.proba[(i, c)] - self.targets[(i, c)])
        });
        let g = tr_mul(&self.augmented, &residual);
        let q = lay.p + 1;
        for (r, v) in grad.iter_mut().enumerate() {
            let (s, sign) = lay.smooth_of(r);
            *v = sign * g[(s % q, s / q)];
            if lay.split && r < lay.b {
                *v += self.lambda;
            }
        }
    }

    fn constraints(&self, _x: &[f64], _g: &mut [f64]) {}

    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        Vec::new()
    }

    fn jacobian_values(&self, _x: &[f64], _values: &mut [f64]) {}

    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        let n = self.layout.n;
        Some((0..n).flat_map(|r| (0..=r).map(move |c| (r, c))).collect())
    }

    fn hessian_values(&self, x: &[f64], obj_factor: f64, _lambda: &[f64], values: &mut [f64]) {
        let lay = &self.layout;
        let f = self.forward(x);
        let h = self.smooth_hessian(&f);
        let mut at = 0;
        for r in 0..lay.n {
            let (s1, g1) = lay.smooth_of(r);
            for c in 0..=r {
                let (s2, g2) = lay.smooth_of(c);
                values[at] = obj_factor * g1 * g2 * h[(s1, s2)];
                at += 1;
            }
        }
    }

    fn name(&self) -> String {
        format!("logistic_l1(K={}, p={})", self.classes, self.layout.p)
    }
}

// ---------------------------------------------------------------------------------------
// Coefficients and the fitted model

/// The coefficients of a (binary or multinomial) logistic regression: weights (p x K') and
/// intercepts (K'), K' = 1 for two classes (the score of class 1; class 0 scores 0) and
/// K' = K otherwise. Units are those of the features they were fitted on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogisticWeights {
    /// Weights, one column per score column.
    #[serde(deserialize_with = "glassbox_core::model::checked_matrix")]
    pub weights: DMatrix<f64>,
    /// Intercepts, one per score column.
    pub intercepts: Vec<f64>,
}

impl LogisticWeights {
    /// The number of classes K.
    pub fn classes(&self) -> usize {
        if self.intercepts.len() == 1 {
            2
        } else {
            self.intercepts.len()
        }
    }

    /// The scores x . w_k + b_k (N x K').
    pub fn scores(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        let mut z = x * &self.weights;
        for (c, b) in self.intercepts.iter().enumerate() {
            z.column_mut(c).add_scalar_mut(*b);
        }
        z
    }

    /// Class probabilities (N x K).
    pub fn predict_proba(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        let z = self.scores(x);
        let binary = self.intercepts.len() == 1;
        let mut columns = DMatrix::zeros(z.nrows(), z.ncols());
        for i in 0..z.nrows() {
            softmax_row(&z, i, binary, &mut columns);
        }
        if !binary {
            return columns;
        }
        // P(class 0) = sigmoid(-z), computed directly rather than as 1 - P(class 1).
        DMatrix::from_fn(z.nrows(), 2, |i, k| {
            if k == 1 {
                columns[(i, 0)]
            } else {
                let v = -z[(i, 0)];
                if v >= 0.0 {
                    1.0 / (1.0 + (-v).exp())
                } else {
                    let e = v.exp();
                    e / (1.0 + e)
                }
            }
        })
    }

    /// The most probable class per row (ties to the lower index).
    pub fn predict(&self, x: &DMatrix<f64>) -> Vec<usize> {
        let proba = self.predict_proba(x);
        (0..proba.nrows())
            .map(|i| {
                let mut best = 0;
                for k in 1..proba.ncols() {
                    if proba[(i, k)] > proba[(i, best)] {
                        best = k;
                    }
                }
                best
            })
            .collect()
    }

    /// The same model on raw features, for coefficients fitted on `scaler`'s scaled
    /// features: w / scale and b - sum_j w_j min_j / scale_j.
    pub fn to_user_units(&self, scaler: &MinMaxScaler) -> LogisticWeights {
        let (p, k) = self.weights.shape();
        let weights = DMatrix::from_fn(p, k, |j, c| self.weights[(j, c)] / scaler.scale_of(j));
        let intercepts = (0..k)
            .map(|c| {
                self.intercepts[c] - (0..p).map(|j| weights[(j, c)] * scaler.min[j]).sum::<f64>()
            })
            .collect();
        LogisticWeights {
            weights,
            intercepts,
        }
    }

    /// The inverse of [`LogisticWeights::to_user_units`]: coefficients on raw features
    /// carried to `scaler`'s scaled features.
    pub fn to_scaled_units(&self, scaler: &MinMaxScaler) -> LogisticWeights {
        let (p, k) = self.weights.shape();
        let weights = DMatrix::from_fn(p, k, |j, c| self.weights[(j, c)] * scaler.scale_of(j));
        let intercepts = (0..k)
            .map(|c| {
                self.intercepts[c]
                    + (0..p)
                        .map(|j| self.weights[(j, c)] * scaler.min[j])
                        .sum::<f64>()
            })
            .collect();
        LogisticWeights {
            weights,
            intercepts,
        }
    }
}

/// A fitted l1-regularized logistic regression.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogisticL1Model {
    /// lambda it was fitted with (absolute).
    pub lambda: f64,
    /// Class labels (column order of `predict_proba`).
    pub classes: Vec<String>,
    /// Feature names (after dummy coding).
    pub feature_names: Vec<String>,
    /// How raw columns are encoded into the features.
    pub encoding: Encoding,
    /// The min-max scaler fitted on the training rows.
    pub scaler: MinMaxScaler,
    /// Weights and intercepts in scaled units.
    pub coefficients: LogisticWeights,
}

impl LogisticL1Model {
    /// The model at the NLP point `x` of `problem`.
    pub fn from_solution(
        problem: &LogisticL1Problem,
        x: &[f64],
        scaler: MinMaxScaler,
        classes: Vec<String>,
        encoding: Encoding,
    ) -> Self {
        LogisticL1Model {
            lambda: problem.lambda,
            classes,
            feature_names: encoding.feature_names(),
            encoding,
            scaler,
            coefficients: problem.coefficients(x),
        }
    }

    /// The NLP point of `problem` that starts from this model (warm start), carried over
    /// through the user's units when the problem's data were scaled differently.
    pub fn start_point(
        &self,
        problem: &LogisticL1Problem,
        scaler: &MinMaxScaler,
    ) -> Result<Vec<f64>> {
        let lay = problem.layout();
        let (p, k) = self.coefficients.weights.shape();
        if p != lay.p || k != lay.columns || scaler.n_features() != p {
            return Err(GlassboxError::formulation(
                NAME,
                format!(
                    "cannot warm start from a model with {p} features and {} classes: the \
                     problem has {} features and {} classes",
                    self.coefficients.classes(),
                    lay.p,
                    problem.classes
                ),
            ));
        }
        let user = self.coefficients.to_user_units(&self.scaler);
        Ok(lay.point(&user.to_scaled_units(scaler)))
    }

    /// Weights and intercepts in the user's units (raw features).
    pub fn user_units(&self) -> LogisticWeights {
        self.coefficients.to_user_units(&self.scaler)
    }

    /// Local sparsity: percent of zero weights (|w| <= `tol`) over all p x K' weights.
    pub fn delta_local(&self, tol: f64) -> f64 {
        metrics::delta_local(&self.coefficients.weights, tol)
    }

    /// Global sparsity: percent of features whose weights are all zero.
    pub fn delta_global(&self, tol: f64) -> f64 {
        metrics::delta_global(&self.coefficients.weights, tol)
    }

    /// The model as text, in the user's units, zero weights left out.
    fn text(&self) -> String {
        let user = self.user_units();
        let tol = metrics::SPARSITY_TOLERANCE;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "l1-regularized logistic regression (lambda {}), delta_L {:.1}%, delta_G {:.1}%",
            self.lambda,
            self.delta_local(tol),
            self.delta_global(tol)
        );
        let binary = user.intercepts.len() == 1;
        if binary {
            let _ = writeln!(
                out,
                "P(class {}) = 1 / (1 + exp(-score)), P(class {}) = 1 - that",
                self.classes.get(1).map_or("?", |s| s.as_str()),
                self.classes.first().map_or("?", |s| s.as_str())
            );
        } else {
            let _ = writeln!(
                out,
                "P(class k) = exp(score_k) / sum over classes of exp(score)"
            );
        }
        for c in 0..user.intercepts.len() {
            let label = if binary {
                "score".to_string()
            } else {
                format!("score_{}", self.classes.get(c).map_or("?", |s| s.as_str()))
            };
            let terms: Vec<String> = (0..user.weights.nrows())
                .filter(|&j| self.coefficients.weights[(j, c)].abs() > tol)
                .map(|j| {
                    format!(
                        "{:+.6} * {}",
                        user.weights[(j, c)],
                        self.feature_names.get(j).map_or("?", |s| s.as_str())
                    )
                })
                .collect();
            let rule = if terms.is_empty() {
                String::new()
            } else {
                format!("{} ", terms.join(" "))
            };
            let _ = writeln!(out, "  {label} = {rule}{:+.6}", user.intercepts[c]);
        }
        out
    }

    /// Saves the model as JSON.
    pub fn save(&self, path: &Path) -> Result<()> {
        glassbox_core::model::save_json(path, NAME, self)
    }

    /// Loads a model saved by [`LogisticL1Model::save`] (checked by [`CheckedModel`]).
    pub fn load(path: &Path) -> Result<Self> {
        glassbox_core::model::load_json(path, NAME)
    }
}

impl CheckedModel for LogisticL1Model {
    fn check(&self, _kind: &str) -> std::result::Result<(), String> {
        // Two classes share one score column; fewer would leave a column of
        // probabilities without its class.
        glassbox_core::model::check_classes(&self.classes, 2)?;
        let p = self.encoding.n_features();
        let w = &self.coefficients;
        let columns = if self.classes.len() == 2 {
            1
        } else {
            self.classes.len()
        };
        glassbox_core::model::check_sizes(
            &self.scaler,
            &self.encoding,
            &[
                ("the number of feature names", self.feature_names.len(), p),
                ("the rows of the weights", w.weights.nrows(), p),
                ("the columns of the weights", w.weights.ncols(), columns),
                ("the number of intercepts", w.intercepts.len(), columns),
            ],
        )
    }
}

impl Classifier for LogisticL1Model {
    fn classes(&self) -> &[String] {
        &self.classes
    }

    fn encoding(&self) -> &Encoding {
        &self.encoding
    }

    fn describe(&self) -> String {
        self.text()
    }

    fn predict_proba(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        self.coefficients.predict_proba(&self.scaler.transform(x))
    }
}

// ---------------------------------------------------------------------------------------
// Fitting with any backend

/// What [`fit`] returns: the coefficients (in the units of the features given to it),
/// when the backend returned a point, and the backend's result.
#[derive(Clone, Debug)]
pub struct LogisticFit {
    /// Weights and intercepts at the returned point (`None` when the backend returned
    /// none; see `result.status`).
    pub coefficients: Option<LogisticWeights>,
    /// The backend's result (status, objective, iterations, time).
    pub result: SolveResult,
}

/// Fits l1-regularized logistic regression on features `x` (N x p, scaled: the penalty
/// treats every column alike) and classes `y` in `0..classes`, with optional per-sample
/// weights, using any NLP backend. Starts from `options.warm_start` when it has the right
/// length, else from zero weights and log-prior intercepts (when the backend takes a
/// start at all).
pub fn fit(
    x: Arc<DMatrix<f64>>,
    y: Arc<Vec<usize>>,
    classes: usize,
    lambda: f64,
    sample_weights: Option<Vec<f64>>,
    solver: &dyn NlpSolver,
    options: &SolveOptions,
) -> Result<LogisticFit> {
    let problem = LogisticL1Problem::new(x, y, classes, lambda, sample_weights)?;
    let n = problem.num_variables();
    let given = options
        .warm_start
        .as_ref()
        .filter(|w| w.primal.len() == n)
        .cloned();
    let start = if solver.capabilities().warm_start {
        Some(given.unwrap_or_else(|| WarmStart::primal(problem.prior_start())))
    } else {
        None
    };
    let result = solver.solve(&problem, &options.with_warm_start(start))?;
    let coefficients = (result.primal.len() == n).then(|| problem.coefficients(&result.primal));
    Ok(LogisticFit {
        coefficients,
        result,
    })
}

// ---------------------------------------------------------------------------------------
// The runner's interface

impl NlpClassifierFormulation for LogisticL1Config {
    type Problem = LogisticL1Problem;
    type Model = LogisticL1Model;

    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, features: usize, classes: usize) -> Result<()> {
        crate::heuristic::check_features(NAME, features)?;
        if classes < 2 {
            return Err(GlassboxError::formulation(
                NAME,
                "classification needs at least two classes",
            ));
        }
        self.resolve(features).map(|_| ())
    }

    fn problem(
        &self,
        x: Arc<DMatrix<f64>>,
        y: Arc<Vec<usize>>,
        classes: usize,
    ) -> Result<LogisticL1Problem> {
        LogisticL1Config::problem(self, x, y, classes)
    }

    fn random_start(&self, problem: &LogisticL1Problem, rng: &mut ChaCha8Rng) -> Vec<f64> {
        problem.random_start(rng)
    }

    fn model(
        &self,
        problem: &LogisticL1Problem,
        x: &[f64],
        scaler: MinMaxScaler,
        classes: Vec<String>,
        encoding: Encoding,
    ) -> LogisticL1Model {
        LogisticL1Model::from_solution(problem, x, scaler, classes, encoding)
    }

    fn warm_start(
        &self,
        model: &LogisticL1Model,
        problem: &LogisticL1Problem,
        scaler: &MinMaxScaler,
    ) -> Result<Vec<f64>> {
        model.start_point(problem, scaler)
    }

    fn load_model(&self, path: &Path) -> Result<LogisticL1Model> {
        LogisticL1Model::load(path)
    }

    fn reported_params(&self, problem: &LogisticL1Problem) -> ReportedParams {
        ReportedParams {
            lambda_local: Some(problem.lambda),
            ..ReportedParams::default()
        }
    }

    fn sparsity(&self, model: &LogisticL1Model) -> (f64, f64) {
        (
            model.delta_local(metrics::SPARSITY_TOLERANCE),
            model.delta_global(metrics::SPARSITY_TOLERANCE),
        )
    }
}

glassbox_core::fitted_model!(LogisticL1Model, classifier);
