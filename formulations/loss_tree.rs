//! Loss-optimal classification trees (thesis `shared/papers/004_31090f2e54e0166e.txt`,
//! section 3.2, "The Generalized Framework"): oblique trees whose branch nodes are linear
//! classifiers `w_t . x + b_t`, the last branching layer making the prediction, as MILPs.
//! Binary labels as in the thesis: class index 1 is y = +1, class index 0 is y = -1.
//!
//! ```text
//! routing   (3.6)  sum_{t in T_d} z_it = 1,  z binary
//!           (3.7a) w_t x_i + b_t <= M (1 - sum_{s in T_d^l(t)} z_is)        t not in T_d
//!           (3.7b) w_t x_i + b_t >= eps - M (1 - sum_{s in T_d^r(t)} z_is)
//! l1        (3.16) w = w+ - w-,  w+, w- >= 0
//! hinge     (3.13) zeta_ih >= 1 - y_i (w_t x_i + b_t) - M (1 - sum_{s in T_d(t)} z_is),
//!                  zeta >= 0, for every layer h and t in T_h;
//!           objective (3.12) sum_h (sum_i zeta_ih + lambda sum_{t in T_h} 1'(w+ + w-))
//! misclass. (3.9)  w_t x_i + b_t <= M (2 + yhat_i - z_it), >= eps - M (2 - yhat_i - z_it),
//!                  xi_i = (1 - y_i yhat_i) / 2, yhat in {-1, 1} (yhat = 2u - 1, u binary);
//!           objective (3.11) sum_i xi_i + lambda sum_{t in T_d} 1'(w+ + w-)
//! ```
//!
//! The thesis leaves M and the variables' ranges open. Our choice: features are min-max
//! scaled to [0, 1], `|w_jt| <= weight_bound` (W), `|b_t| <= B = p W + 1`, so that
//! `|w_t x + b_t| <= p W + B` and `M = p W + B + 1 + eps` is valid in every big-M row; eps
//! (default 1e-4) is the thesis' "small constant". (3.9) as printed lets a point with
//! `w x + b = 0` take either prediction, so `w = 0, b = 0` would classify every training
//! point correctly; we add eps to (3.9b) as (3.7b) has it: +1 needs `w x + b >= eps`, -1 needs
//! `w x + b <= 0`. The fitted model goes right, and predicts +1, when `w_t x + b_t >= eps / 2`
//! (the middle of the gap no training point lies in). The same lambda is used at every layer
//! (lambda_h = lambda).
//!
//! Depends on the core (`milp`, `data`, `model`, `formulation`, `metrics`), never on a backend.

use crate::data::{Encoding, MinMaxScaler};
use crate::formulation::{FormulationInfo, MilpClassifierFormulation, ParamSpec, ReportedParams};
use crate::milp::MilpProblem;
use crate::model::Classifier;
use crate::{metrics, GlassboxError, Result};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

/// The name configs use.
pub const NAME: &str = "loss_tree";

/// The loss of a loss-optimal tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Loss {
    /// Hinge loss at every layer (3.13), MARGOT-style with an l1 regularizer.
    #[default]
    Hinge,
    /// Misclassification loss at the last layer (3.9).
    Misclassification,
}

/// The `[formulation]` table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LossTreeConfig {
    /// Depth d (number of branching layers, 1 to 4).
    pub depth: usize,
    /// "hinge" or "misclassification".
    pub loss: Loss,
    /// The l1 weight lambda (every layer for the hinge loss, the last for misclassification).
    pub lambda: f64,
    /// W: bound on each |w_jt| (scaled units).
    pub weight_bound: f64,
    /// eps of the right-branch rows (3.7b).
    pub epsilon: f64,
}

impl Default for LossTreeConfig {
    fn default() -> Self {
        LossTreeConfig {
            depth: 2,
            loss: Loss::Hinge,
            lambda: 0.01,
            weight_bound: 10.0,
            epsilon: 1e-4,
        }
    }
}

/// For `glassbox formulations`.
pub fn info() -> FormulationInfo {
    const PARAMS: &[ParamSpec] = &[
        ParamSpec {
            name: "depth",
            default: "2",
            help: "branching layers d (1 to 4)",
        },
        ParamSpec {
            name: "loss",
            default: "\"hinge\"",
            help: "\"hinge\" (3.13) or \"misclassification\" (3.9)",
        },
        ParamSpec {
            name: "lambda",
            default: "0.01",
            help: "l1 weight lambda_h, the same at every layer (reported as lambda_local)",
        },
        ParamSpec {
            name: "weight_bound",
            default: "10.0",
            help: "W, bound on |w_jt| in scaled units (sets the big-M)",
        },
        ParamSpec {
            name: "epsilon",
            default: "1e-4",
            help: "eps of the routing rows (3.7b)",
        },
    ];
    FormulationInfo {
        name: NAME,
        kind: "milp",
        description: "loss-optimal oblique classification tree (thesis (3.6)-(3.13), l1), binary labels, as a MILP",
        parameters: PARAMS,
    }
}

/// The built MILP and what reads its points.
#[derive(Clone, Debug)]
pub struct LossTreeProblem {
    /// The MILP.
    pub milp: MilpProblem,
    /// The parameters.
    pub config: LossTreeConfig,
    /// Scaled training features.
    pub x: Arc<DMatrix<f64>>,
    /// Training labels in {-1, +1}.
    pub y: Vec<f64>,
    /// The big-M.
    pub big_m: f64,
    p: usize,
    branches: usize,
    wp: usize,
    wm: usize,
    b: usize,
    z: usize,
    loss: usize,
}

/// Branch nodes of the last layer, in heap order.
fn last_layer(depth: usize) -> std::ops::Range<usize> {
    (1 << (depth - 1)) - 1..(1 << depth) - 1
}

/// The last-layer nodes below heap node `t` (`t` itself when it is in the last layer).
fn last_below(depth: usize, t: usize) -> Vec<usize> {
    let last = last_layer(depth);
    let mut frontier = vec![t];
    while frontier.iter().any(|&u| u < last.start) {
        frontier = frontier
            .into_iter()
            .flat_map(|u| {
                if u < last.start {
                    vec![2 * u + 1, 2 * u + 2]
                } else {
                    vec![u]
                }
            })
            .collect();
    }
    frontier
}

fn layer_of(t: usize) -> usize {
    (usize::BITS - 1 - (t + 1).leading_zeros()) as usize
}

impl LossTreeConfig {
    fn check_params(&self) -> Result<()> {
        let bad = |m: String| GlassboxError::formulation(NAME, m);
        if !(1..=4).contains(&self.depth) {
            return Err(bad(format!("depth must be 1 to 4, got {}", self.depth)));
        }
        if !(self.lambda.is_finite() && self.lambda >= 0.0) {
            return Err(bad(format!("lambda must be >= 0, got {}", self.lambda)));
        }
        if !(self.weight_bound.is_finite() && self.weight_bound > 0.0) {
            return Err(bad(format!(
                "weight_bound must be positive, got {}",
                self.weight_bound
            )));
        }
        if !(self.epsilon.is_finite() && self.epsilon > 0.0 && self.epsilon < 1.0) {
            return Err(bad(format!(
                "epsilon must be in (0, 1), got {}",
                self.epsilon
            )));
        }
        Ok(())
    }

    /// Builds the MILP on scaled `x` (N x p) and class indices `y` in {0, 1}.
    pub fn build(&self, x: Arc<DMatrix<f64>>, y: &[usize]) -> Result<LossTreeProblem> {
        self.check_params()?;
        let (n, p) = x.shape();
        if y.len() != n || n == 0 || p == 0 || y.iter().any(|&k| k > 1) {
            return Err(GlassboxError::formulation(
                NAME,
                "needs rows, features and binary labels (class indices 0 and 1)",
            ));
        }
        let d = self.depth;
        let branches = (1usize << d) - 1;
        let last = last_layer(d);
        let w_bound = self.weight_bound;
        let b_bound = p as f64 * w_bound + 1.0;
        let big_m = p as f64 * w_bound + b_bound + 1.0 + self.epsilon;
        let ys: Vec<f64> = y.iter().map(|&k| if k == 1 { 1.0 } else { -1.0 }).collect();
        let mut m = MilpProblem::new(NAME);
        let regularized = |t: usize| self.loss == Loss::Hinge || last.contains(&t);
        let wp = m.columns.len();
        for t in 0..branches {
            let cost = if regularized(t) { self.lambda } else { 0.0 };
            for j in 0..p {
                m.add_column(format!("w+[{j},{t}]"), 0.0, w_bound, cost, false);
            }
        }
        let wm = m.columns.len();
        for t in 0..branches {
            let cost = if regularized(t) { self.lambda } else { 0.0 };
            for j in 0..p {
                m.add_column(format!("w-[{j},{t}]"), 0.0, w_bound, cost, false);
            }
        }
        let b = m.columns.len();
        for t in 0..branches {
            m.add_column(format!("b[{t}]"), -b_bound, b_bound, 0.0, false);
        }
        let z = m.columns.len();
        for i in 0..n {
            for s in last.clone() {
                m.add_binary(format!("z[{i},{s}]"), 0.0);
            }
        }
        let loss = m.columns.len();
        match self.loss {
            Loss::Hinge => {
                for i in 0..n {
                    for h in 0..d {
                        m.add_column(format!("zeta[{i},{h}]"), 0.0, f64::INFINITY, 1.0, false);
                    }
                }
            }
            Loss::Misclassification => {
                // xi_i = (1 - y_i (2 u_i - 1)) / 2: 1 - u_i for y = +1, u_i for y = -1.
                for (i, &yi) in ys.iter().enumerate() {
                    m.add_binary(format!("u[{i}]"), -yi);
                }
                m.objective_offset = ys.iter().filter(|&&v| v > 0.0).count() as f64;
            }
        }
        let mut problem = LossTreeProblem {
            milp: MilpProblem::default(),
            config: self.clone(),
            x: x.clone(),
            y: ys,
            big_m,
            p,
            branches,
            wp,
            wm,
            b,
            z,
            loss,
        };
        let inf = f64::INFINITY;
        let affine = |pb: &LossTreeProblem, i: usize, t: usize, scale: f64| {
            let mut row = Vec::with_capacity(2 * p + 1);
            for j in 0..p {
                let v = x[(i, j)] * scale;
                if v != 0.0 {
                    row.push((pb.wp + t * p + j, v));
                    row.push((pb.wm + t * p + j, -v));
                }
            }
            row.push((pb.b + t, scale));
            row
        };
        let subtrees: Vec<(Vec<usize>, Vec<usize>, Vec<usize>)> = (0..branches)
            .map(|t| {
                if t >= last.start {
                    (Vec::new(), Vec::new(), vec![t])
                } else {
                    (
                        last_below(d, 2 * t + 1),
                        last_below(d, 2 * t + 2),
                        last_below(d, t),
                    )
                }
            })
            .collect();
        for i in 0..n {
            let row = last.clone().map(|s| (problem.z_col(i, s), 1.0)).collect();
            m.add_row(format!("route[{i}]"), 1.0, 1.0, row);
            for (t, (left, right, below)) in subtrees.iter().enumerate() {
                if t < last.start {
                    let mut row = affine(&problem, i, t, 1.0);
                    row.extend(left.iter().map(|&s| (problem.z_col(i, s), big_m)));
                    m.add_row(format!("left[{i},{t}]"), -inf, big_m, row);
                    let mut row = affine(&problem, i, t, 1.0);
                    row.extend(right.iter().map(|&s| (problem.z_col(i, s), -big_m)));
                    m.add_row(format!("right[{i},{t}]"), self.epsilon - big_m, inf, row);
                }
                match self.loss {
                    Loss::Hinge => {
                        // zeta + y (w x + b) - M sum z >= 1 - M
                        let h = layer_of(t);
                        let mut row = affine(&problem, i, t, problem.y[i]);
                        row.push((loss + i * d + h, 1.0));
                        row.extend(below.iter().map(|&s| (problem.z_col(i, s), -big_m)));
                        m.add_row(format!("hinge[{i},{t}]"), 1.0 - big_m, inf, row);
                    }
                    Loss::Misclassification if t >= last.start => {
                        let (u, zc) = (loss + i, problem.z_col(i, t));
                        // w x + b - 2 M u + M z <= M
                        let mut row = affine(&problem, i, t, 1.0);
                        row.extend([(u, -2.0 * big_m), (zc, big_m)]);
                        m.add_row(format!("predict_lo[{i},{t}]"), -inf, big_m, row);
                        // w x + b - 2 M u - M z >= eps - 3 M
                        let mut row = affine(&problem, i, t, 1.0);
                        row.extend([(u, -2.0 * big_m), (zc, -big_m)]);
                        m.add_row(
                            format!("predict_hi[{i},{t}]"),
                            self.epsilon - 3.0 * big_m,
                            inf,
                            row,
                        );
                    }
                    Loss::Misclassification => {}
                }
            }
        }
        problem.milp = m;
        Ok(problem)
    }
}

impl LossTreeProblem {
    fn z_col(&self, i: usize, s: usize) -> usize {
        self.z + i * (1 << (self.config.depth - 1)) + (s - last_layer(self.config.depth).start)
    }

    /// `(w_t, b_t)` of every branch node at a MILP point (scaled units).
    pub fn hyperplanes(&self, point: &[f64]) -> Vec<(Vec<f64>, f64)> {
        (0..self.branches)
            .map(|t| {
                let w = (0..self.p)
                    .map(|j| {
                        let v = point[self.wp + t * self.p + j] - point[self.wm + t * self.p + j];
                        if v.abs() < 1e-9 {
                            0.0
                        } else {
                            v
                        }
                    })
                    .collect();
                (w, point[self.b + t])
            })
            .collect()
    }

    /// The MILP point of given hyperplanes: routing, slacks and predictions follow from them
    /// (feasible unless a point lies within eps above an upper node's hyperplane).
    pub fn point_of(&self, planes: &[(Vec<f64>, f64)]) -> Vec<f64> {
        let mut point = vec![0.0; self.milp.num_columns()];
        for (t, (w, b)) in planes.iter().enumerate() {
            for (j, &v) in w.iter().enumerate() {
                point[self.wp + t * self.p + j] = v.max(0.0);
                point[self.wm + t * self.p + j] = (-v).max(0.0);
            }
            point[self.b + t] = *b;
        }
        let d = self.config.depth;
        for i in 0..self.x.nrows() {
            let score = |t: usize| {
                let (w, b) = &planes[t];
                w.iter()
                    .enumerate()
                    .map(|(j, v)| v * self.x[(i, j)])
                    .sum::<f64>()
                    + b
            };
            let mut t = 0;
            for h in 0..d {
                let s = score(t);
                if self.config.loss == Loss::Hinge {
                    point[self.loss + i * d + h] = (1.0 - self.y[i] * s).max(0.0);
                }
                if h + 1 < d {
                    t = if s <= 0.0 { 2 * t + 1 } else { 2 * t + 2 };
                } else {
                    point[self.z_col(i, t)] = 1.0;
                    if self.config.loss == Loss::Misclassification {
                        point[self.loss + i] = if s >= self.config.epsilon { 1.0 } else { 0.0 };
                    }
                }
            }
        }
        point
    }
}

/// A fitted loss-optimal tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LossTreeModel {
    /// Branching layers d.
    pub depth: usize,
    /// The loss it was fitted with.
    pub loss: Loss,
    /// `(w_t, b_t)` per branch node, scaled units.
    pub planes: Vec<(Vec<f64>, f64)>,
    /// eps of the MILP: a score of at least eps / 2 goes right (and predicts +1).
    pub epsilon: f64,
    /// The training rows' scaling.
    pub scaler: MinMaxScaler,
    /// The two class labels (index 1 is y = +1).
    pub classes: Vec<String>,
    /// Encoded feature names.
    pub feature_names: Vec<String>,
    /// How raw columns are encoded.
    pub encoding: Encoding,
}

impl LossTreeModel {
    /// The score `w_t . z + b_t` of the last-layer node each scaled row reaches, and that node.
    pub fn scores_scaled(&self, z: &DMatrix<f64>) -> Vec<(usize, f64)> {
        (0..z.nrows())
            .map(|i| {
                let mut t = 0;
                loop {
                    let (w, b) = &self.planes[t];
                    let s = w
                        .iter()
                        .enumerate()
                        .map(|(j, v)| v * z[(i, j)])
                        .sum::<f64>()
                        + b;
                    if layer_of(t) + 1 == self.depth {
                        return (t, s);
                    }
                    t = if s < self.cut() { 2 * t + 1 } else { 2 * t + 2 };
                }
            })
            .collect()
    }

    /// The score from which a point goes right and the last layer predicts +1.
    pub fn cut(&self) -> f64 {
        self.epsilon / 2.0
    }

    /// Saves the model as JSON.
    pub fn save(&self, path: &Path) -> Result<()> {
        crate::model::save_json(path, NAME, self)
    }

    /// Loads a saved model.
    pub fn load(path: &Path) -> Result<Self> {
        crate::model::load_json(path, NAME)
    }

    fn coefficients(&self) -> DMatrix<f64> {
        let mut a = DMatrix::zeros(self.scaler.n_features(), self.planes.len());
        for (t, (w, _)) in self.planes.iter().enumerate() {
            for (j, &v) in w.iter().enumerate() {
                a[(j, t)] = v;
            }
        }
        a
    }
}

impl Classifier for LossTreeModel {
    fn classes(&self) -> &[String] {
        &self.classes
    }

    fn encoding(&self) -> &Encoding {
        &self.encoding
    }

    fn describe(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "loss-optimal tree ({:?} loss), {} layer(s); upper nodes: left when the score < {}; \
             last layer: class '{}' when the score >= {}, else '{}'",
            self.loss,
            self.depth,
            self.cut(),
            self.classes.get(1).map_or("?", |s| s.as_str()),
            self.cut(),
            self.classes.first().map_or("?", |s| s.as_str())
        );
        for (t, (w, b)) in self.planes.iter().enumerate() {
            // w . (x - min) / scale + b = sum (w / scale) x + (b - sum w min / scale)
            let mut shift = *b;
            let terms: Vec<String> = w
                .iter()
                .enumerate()
                .filter(|(_, v)| **v != 0.0)
                .map(|(j, &v)| {
                    let scale = self.scaler.scale_of(j);
                    shift -= v * self.scaler.min[j] / scale;
                    format!(
                        "{:+.6} * {}",
                        v / scale,
                        self.feature_names.get(j).map_or("?", |s| s.as_str())
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "{}node {t}: score = {} {:+.6}",
                "  ".repeat(layer_of(t)),
                if terms.is_empty() {
                    "0".to_string()
                } else {
                    terms.join(" ")
                },
                shift
            );
        }
        out
    }

    fn predict_proba(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        let scores = self.scores_scaled(&self.scaler.transform(x));
        let mut proba = DMatrix::zeros(x.nrows(), self.classes.len());
        for (i, (_, s)) in scores.into_iter().enumerate() {
            proba[(i, usize::from(s >= self.cut()))] = 1.0;
        }
        proba
    }
}

impl MilpClassifierFormulation for LossTreeConfig {
    type Problem = LossTreeProblem;
    type Model = LossTreeModel;

    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, features: usize, classes: usize) -> Result<()> {
        if classes != 2 || features == 0 {
            return Err(GlassboxError::formulation(
                NAME,
                format!(
                    "needs binary labels (the thesis' setting), the data have {classes} classes"
                ),
            ));
        }
        self.check_params()
    }

    fn problem(
        &self,
        x: Arc<DMatrix<f64>>,
        y: Arc<Vec<usize>>,
        _classes: usize,
    ) -> Result<LossTreeProblem> {
        self.build(x, &y)
    }

    fn milp<'a>(&self, problem: &'a LossTreeProblem) -> &'a MilpProblem {
        &problem.milp
    }

    fn heuristic_start(&self, _problem: &LossTreeProblem) -> Option<Vec<f64>> {
        None
    }

    fn warm_start(
        &self,
        model: &LossTreeModel,
        problem: &LossTreeProblem,
        scaler: &MinMaxScaler,
    ) -> Result<Vec<f64>> {
        if model.depth != self.depth || model.scaler.n_features() != problem.p {
            return Err(GlassboxError::formulation(
                NAME,
                "the warm-start model has another depth or number of features",
            ));
        }
        // Carry each hyperplane into this problem's scaling (through the user's units).
        let planes = model
            .planes
            .iter()
            .map(|(w, b)| {
                let mut bias = *b;
                let w2 = w
                    .iter()
                    .enumerate()
                    .map(|(j, &v)| {
                        let slope = v / model.scaler.scale_of(j);
                        bias += slope * (scaler.min[j] - model.scaler.min[j]);
                        slope * scaler.scale_of(j)
                    })
                    .collect();
                (w2, bias)
            })
            .collect::<Vec<_>>();
        Ok(problem.point_of(&planes))
    }

    fn model(
        &self,
        problem: &LossTreeProblem,
        x: &[f64],
        scaler: MinMaxScaler,
        classes: Vec<String>,
        encoding: Encoding,
    ) -> LossTreeModel {
        LossTreeModel {
            depth: self.depth,
            loss: self.loss,
            planes: problem.hyperplanes(x),
            epsilon: self.epsilon,
            scaler,
            classes,
            feature_names: encoding.feature_names(),
            encoding,
        }
    }

    fn load_model(&self, path: &Path) -> Result<LossTreeModel> {
        LossTreeModel::load(path)
    }

    fn reported_params(&self, _problem: &LossTreeProblem) -> ReportedParams {
        ReportedParams {
            depth: Some(self.depth),
            lambda_local: Some(self.lambda),
            lambda_global: None,
            gamma: None,
        }
    }

    fn sparsity(&self, model: &LossTreeModel) -> (f64, f64) {
        let a = model.coefficients();
        (
            metrics::delta_local(&a, metrics::SPARSITY_TOLERANCE),
            metrics::delta_global(&a, metrics::SPARSITY_TOLERANCE),
        )
    }
}
