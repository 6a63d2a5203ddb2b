//! Loss-optimal classification trees (thesis `shared/papers/004_31090f2e54e0166e.txt`,
//! section 3.2, "The Generalized Framework" and "Optimal Logistic Classification Trees"):
//! oblique trees whose branch nodes are linear classifiers `w_t . x + b_t`, the last
//! branching layer making the prediction, as MILPs. Binary labels as in the thesis: class
//! index 1 is y = +1, class index 0 is y = -1 (more classes are refused).
//!
//! ```text
//! routing   (3.6)  sum_{t in T_d} z_it = 1,  z binary
//!           (3.7a) w_t x_i + b_t <= M (1 - sum_{s in T_d^l(t)} z_is)        t not in T_d
//!           (3.7b) w_t x_i + b_t >= eps - M (1 - sum_{s in T_d^r(t)} z_is)
//! l1        (3.16) w = w+ - w-,  w+, w- >= 0
//! hinge     (3.13) zeta_ih >= 1 - y_i (w_t x_i + b_t) - M (1 - sum_{s in T_d(t)} z_is),
//!                  zeta >= 0, for every layer h and t in T_h;
//!           objective (3.12) sum_h (sum_i zeta_ih + lambda sum_{t in T_h} 1'(w+ + w-))
//! logloss   (3.15) xi_ih >= f(v) + f'(v) (y_i (w_t x_i + b_t) - v) - M (1 - sum_{s in T_d(t)} z_is)
//!                  for every v of the tangent set V (V0..V3), xi >= 0: OLCT (3.17), the
//!                  objective as the hinge loss's (3.17a)
//! misclass. (3.9)  w_t x_i + b_t <= M (2 + yhat_i - z_it), >= eps - M (2 - yhat_i - z_it),
//!                  xi_i = (1 - y_i yhat_i) / 2, yhat in {-1, 1} (yhat = 2u - 1, u binary);
//!           objective (3.11) sum_i xi_i + lambda sum_{t in T_d} 1'(w+ + w-)
//! l0 (3.14)        delta_jt binary, -W delta_jt <= w_jt <= W delta_jt; HFS: sum_j delta_jt
//!                  <= k per node (`max_features`); SFS: + alpha sum_jt delta_jt (`l0_penalty`)
//! ```
//!
//! The thesis leaves M and the variables' ranges open. Our choice: features are min-max
//! scaled to [0, 1], `|w_jt| <= weight_bound` (W), `|b_t| <= B = p W + 1`, so that
//! `|w_t x + b_t| <= p W + B` and `M = p W + B + 1 + eps` is valid in every big-M row (a
//! tangent of the log-loss at a margin m is at most `log 2 + |m|`); eps (default 1e-4) is the
//! thesis' "small constant". `w` is a column of its own with the rows `w = w+ - w-` (3.16a),
//! so every routing and loss row holds p + 1 coefficients of the data, not 2p + 1. (3.9) as
//! printed lets a point with `w x + b = 0` take either prediction, so `w = 0, b = 0` would
//! classify every training point correctly; we add eps to (3.9b) as (3.7b) has it: +1 needs
//! `w x + b >= eps`, -1 needs `w x + b <= 0`. The fitted model goes right, and the hinge and
//! misclassification trees predict +1, when `w_t x + b_t >= eps / 2` (the middle of the gap
//! no training point lies in); the logistic tree predicts P(y = +1 | x) = sigmoid(w_t x + b_t)
//! at its last node. The same lambda is used at every layer (lambda_h = lambda), and the SFS
//! penalty alpha at every branch node.
//!
//! - [`greedy`]: the greedy MIP start (a logistic regression per node, root down) and the
//!   refinement of the last layer (Remark 1), with any NLP backend;
//! - [`LossTreeModel`] (`model.rs`): the fitted tree, its feature influences r_jt and
//!   per-node probabilities ("Interpreting OLCTs").
//!
//! Depends on the core (`milp`, `data`, `model`, `formulation`, `metrics`), the tangent sets
//! of [`crate::logloss_tangents`] and the logistic regression of
//! [`crate::logistic_l1`], never on a backend.

pub mod greedy;
mod model;

pub use model::LossTreeModel;

use crate::logloss_tangents::{logistic_loss, TangentSet};
use glassbox_core::data::{Encoding, MinMaxScaler};
use glassbox_core::formulation::{
    FormulationInfo, MilpClassifierFormulation, ParamSpec, ReportedParams,
};
use glassbox_core::milp::{self, MilpProblem};
use glassbox_core::{metrics, GlassboxError, NlpSolver, Result};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

/// The name configs use.
pub const NAME: &str = "loss_tree";

/// Why no loss tree is stated as an optimal-tree search problem. The hinge and log-loss
/// count margins, not misclassifications; the misclassification loss (3.9) counts them, but
/// over oblique splits `w_t x + b_t` with the penalty `lambda * |w_t|_1` on their weights'
/// size, which an axis-aligned tree over binary columns does not have. Only univariate
/// trees (`max_features = 1`) without penalties would coincide with such a search (of depth
/// D + 1, the last layer's hyperplanes being splits with two leaves), and then only when
/// `weight_bound` and `epsilon` let every gap between training values be split; that case
/// is not stated (yet), so every loss tree keeps its MILP only.
const TREE_SEARCH_REFUSAL: &str = "its splits are oblique hyperplanes w.x + b with an l1 \
    penalty on w, and only the misclassification loss counts errors: no loss tree is an \
    axis-aligned tree search over binary columns; solve its MILP (highs, cbc)";

/// The loss of a loss-optimal tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Loss {
    /// Hinge loss at every layer (3.13), MARGOT-style with an l1 regularizer.
    #[default]
    Hinge,
    /// Misclassification loss at the last layer (3.9).
    Misclassification,
    /// The piecewise-linear under-estimator of the log-loss at every layer (3.15): OLCT.
    Logloss,
}

/// The MIP start a run gives the backend when no model is given as `multistart.warm_start`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossTreeStart {
    /// The greedy tree of [`greedy`]: an l1 logistic regression per node, root down.
    #[default]
    Greedy,
    /// No MIP start.
    None,
}

/// The `[formulation]` table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LossTreeConfig {
    /// Depth d (number of branching layers, 1 to 4).
    pub depth: usize,
    /// "hinge", "misclassification" or "logloss" (OLCT).
    pub loss: Loss,
    /// Tangent points of the log-loss under-estimator (`loss = "logloss"`): V0 to V3.
    pub tangents: TangentSet,
    /// The l1 weight lambda (every layer for the hinge and log-loss, the last for
    /// misclassification).
    pub lambda: f64,
    /// W: bound on each |w_jt| (scaled units).
    pub weight_bound: f64,
    /// eps of the right-branch rows (3.7b).
    pub epsilon: f64,
    /// HFS: at most this many features per branch node (3.14).
    pub max_features: Option<usize>,
    /// SFS: penalty alpha per feature used per branch node (3.14).
    pub l0_penalty: f64,
    /// The MIP start: "greedy" or "none".
    pub start: LossTreeStart,
    /// Refit the last layer by exact l1 logistic regressions after the MILP (Remark 1);
    /// default: on for the log-loss (as the thesis' experiments), off otherwise.
    pub refine: Option<bool>,
    /// The NLP backend of the greedy start's and the refinement's logistic regressions.
    pub nlp_solver: String,
    /// Time limit in seconds of each of those logistic regressions.
    pub nlp_time_limit: f64,
}

impl Default for LossTreeConfig {
    fn default() -> Self {
        LossTreeConfig {
            depth: 2,
            loss: Loss::Hinge,
            tangents: TangentSet::V0,
            lambda: 0.01,
            weight_bound: 10.0,
            epsilon: 1e-4,
            max_features: None,
            l0_penalty: 0.0,
            start: LossTreeStart::Greedy,
            refine: None,
            nlp_solver: "ipopt".to_string(),
            nlp_time_limit: 30.0,
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
            help: "\"hinge\" (3.13), \"misclassification\" (3.9) or \"logloss\" (OLCT, 3.15-3.17)",
        },
        ParamSpec {
            name: "tangents",
            default: "\"V0\"",
            help: "tangent points of the log-loss under-estimator: \"V0\" .. \"V3\"",
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
        ParamSpec {
            name: "max_features",
            default: "",
            help: "HFS (3.14): at most k features per branch node (1: univariate, Remark 2)",
        },
        ParamSpec {
            name: "l0_penalty",
            default: "0.0",
            help: "SFS (3.14): penalty alpha per feature used per branch node",
        },
        ParamSpec {
            name: "start",
            default: "\"greedy\"",
            help: "MIP start: \"greedy\" (l1 logistic regression per node, root down) or \"none\"",
        },
        ParamSpec {
            name: "refine",
            default: "logloss: true",
            help: "refit the last layer by exact l1 logistic regressions (Remark 1)",
        },
        ParamSpec {
            name: "nlp_solver",
            default: "\"ipopt\"",
            help: "NLP backend of the greedy start and the refinement",
        },
        ParamSpec {
            name: "nlp_time_limit",
            default: "30.0",
            help: "seconds per logistic regression of the start and the refinement",
        },
    ];
    FormulationInfo {
        name: NAME,
        kind: "milp",
        description: "loss-optimal oblique classification tree (thesis (3.6)-(3.17): hinge, misclassification, OLCT log-loss; l1, l0), binary labels, as a MILP",
        parameters: PARAMS,
    }
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

/// The layer (0-based) of heap node `t`.
fn layer_of(t: usize) -> usize {
    (usize::BITS - 1 - (t + 1).leading_zeros()) as usize
}

/// The score `w . x_i + b` of row `i` of `x`.
fn score(x: &DMatrix<f64>, i: usize, plane: &(Vec<f64>, f64)) -> f64 {
    plane
        .0
        .iter()
        .enumerate()
        .filter(|(_, v)| **v != 0.0)
        .map(|(j, v)| v * x[(i, j)])
        .sum::<f64>()
        + plane.1
}

impl LossTreeConfig {
    /// B, the bound on each |b_t|, for `p` features (see the module comment).
    fn b_bound(&self, p: usize) -> f64 {
        p as f64 * self.weight_bound + 1.0
    }

    /// M of the big-M rows for `p` features (see the module comment).
    fn big_m(&self, p: usize) -> f64 {
        p as f64 * self.weight_bound + self.b_bound(p) + 1.0 + self.epsilon
    }

    /// The integrality tolerance the MILP needs for `p` features, where it has rows that
    /// separate by eps: the routing rows (3.7b) at depth >= 2 and the misclassification
    /// rows (3.9) ([`milp::integrality_tolerance_for_margin`]; their binaries' coefficients
    /// sum to M per last-layer node in a routing row, 3 M in (3.9): 2 M on u, M on z).
    /// Without it HiGHS's default (1e-6) let M x 1e-6 exceed eps = 1e-4 on monks2 (p = 17,
    /// M = 342): an "optimal" objective of 3e-5 for trees misclassifying a third of the
    /// training rows (benches/README, "Monks2 at depth 1"). `None` for the hinge and
    /// log-loss at depth 1, which have no such row.
    fn integrality_tolerance(&self, p: usize) -> Option<f64> {
        let misclassification = self.loss == Loss::Misclassification;
        if self.depth < 2 && !misclassification {
            return None;
        }
        let summed = (1usize << (self.depth - 1)) as f64;
        let big_ms = if misclassification {
            summed.max(3.0)
        } else {
            summed
        };
        Some(milp::integrality_tolerance_for_margin(
            self.epsilon,
            big_ms * self.big_m(p),
        ))
    }

    fn check_params(&self, p: usize) -> Result<()> {
        let bad = |m: String| GlassboxError::formulation(NAME, m);
        if !(1..=4).contains(&self.depth) {
            return Err(bad(format!("depth must be 1 to 4, got {}", self.depth)));
        }
        if !(self.lambda.is_finite() && self.lambda >= 0.0) {
            return Err(bad(format!(
                "lambda must be a finite number >= 0, got {}",
                self.lambda
            )));
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
        if self.max_features == Some(0) {
            return Err(bad(
                "max_features must be at least 1 (leave it out for no limit)".into(),
            ));
        }
        if let Some(tol) = self.integrality_tolerance(p) {
            if tol < milp::TIGHTEST_INTEGRALITY_TOLERANCE {
                return Err(bad(format!(
                    "epsilon = {} is too small against big-M = {} (p = {p} features, \
                     weight_bound = {}): a MILP backend would need an integrality tolerance \
                     of {tol:.1e} (below {:e}) to keep the \
                     rows that separate by epsilon; raise epsilon or lower weight_bound",
                    self.epsilon,
                    self.big_m(p),
                    self.weight_bound,
                    milp::TIGHTEST_INTEGRALITY_TOLERANCE
                )));
            }
        }
        if !(self.l0_penalty.is_finite() && self.l0_penalty >= 0.0) {
            return Err(bad(format!(
                "l0_penalty must be a finite number >= 0, got {}",
                self.l0_penalty
            )));
        }
        if self.refine == Some(true) && self.loss != Loss::Logloss {
            return Err(bad(
                "refine = true refits the last layer by logistic regressions: it needs loss = \"logloss\""
                    .into(),
            ));
        }
        if !(self.nlp_time_limit.is_finite() && self.nlp_time_limit > 0.0) {
            return Err(bad(format!(
                "nlp_time_limit must be positive, got {}",
                self.nlp_time_limit
            )));
        }
        Ok(())
    }

    /// Whether the last layer is refit after the MILP (Remark 1).
    pub fn refines(&self) -> bool {
        self.refine.unwrap_or(self.loss == Loss::Logloss)
    }

    /// Whether the MILP has the l0 indicators delta of (3.14).
    fn has_l0(&self) -> bool {
        self.max_features.is_some() || self.l0_penalty > 0.0
    }

    /// Builds the MILP on scaled `x` (N x p) and class indices `y` in {0, 1}.
    pub fn build(&self, x: Arc<DMatrix<f64>>, y: &[usize]) -> Result<LossTreeProblem> {
        let (n, p) = x.shape();
        self.check_params(p)?;
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
        let b_bound = self.b_bound(p);
        let big_m = self.big_m(p);
        let ys: Vec<f64> = y.iter().map(|&k| if k == 1 { 1.0 } else { -1.0 }).collect();
        let mut m = MilpProblem::new(NAME);
        let regularized = |t: usize| self.loss != Loss::Misclassification || last.contains(&t);
        let w = m.columns.len();
        for t in 0..branches {
            for j in 0..p {
                m.add_column(format!("w[{j},{t}]"), -w_bound, w_bound, 0.0, false);
            }
        }
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
        let delta = m.columns.len();
        if self.has_l0() {
            for t in 0..branches {
                for j in 0..p {
                    m.add_binary(format!("delta[{j},{t}]"), self.l0_penalty);
                }
            }
        }
        let z = m.columns.len();
        for i in 0..n {
            for s in last.clone() {
                m.add_binary(format!("z[{i},{s}]"), 0.0);
            }
        }
        let loss = m.columns.len();
        match self.loss {
            Loss::Hinge | Loss::Logloss => {
                let name = if self.loss == Loss::Hinge {
                    "zeta"
                } else {
                    "xi"
                };
                for i in 0..n {
                    for h in 0..d {
                        m.add_column(format!("{name}[{i},{h}]"), 0.0, f64::INFINITY, 1.0, false);
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
            w,
            wp,
            wm,
            b,
            delta,
            z,
            loss,
        };
        // (3.16a) w = w+ - w-, and (3.14) |w| <= W delta, 1' delta_t <= k.
        for t in 0..branches {
            for j in 0..p {
                let (wc, dc) = (w + t * p + j, delta + t * p + j);
                m.add_row(
                    format!("l1[{j},{t}]"),
                    0.0,
                    0.0,
                    vec![(wc, 1.0), (wp + t * p + j, -1.0), (wm + t * p + j, 1.0)],
                );
                if self.has_l0() {
                    let inf = f64::INFINITY;
                    m.add_row(
                        format!("l0_hi[{j},{t}]"),
                        -inf,
                        0.0,
                        vec![(wc, 1.0), (dc, -w_bound)],
                    );
                    m.add_row(
                        format!("l0_lo[{j},{t}]"),
                        0.0,
                        inf,
                        vec![(wc, 1.0), (dc, w_bound)],
                    );
                }
            }
            if let Some(k) = self.max_features {
                let row = (0..p).map(|j| (delta + t * p + j, 1.0)).collect();
                m.add_row(format!("hfs[{t}]"), f64::NEG_INFINITY, k as f64, row);
            }
        }
        let inf = f64::INFINITY;
        let affine = |i: usize, t: usize, scale: f64| {
            let mut row = Vec::with_capacity(p + 1 + (1 << d));
            for j in 0..p {
                let v = x[(i, j)] * scale;
                if v != 0.0 {
                    row.push((w + t * p + j, v));
                }
            }
            row.push((b + t, scale));
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
                    let mut row = affine(i, t, 1.0);
                    row.extend(left.iter().map(|&s| (problem.z_col(i, s), big_m)));
                    m.add_row(format!("left[{i},{t}]"), -inf, big_m, row);
                    let mut row = affine(i, t, 1.0);
                    row.extend(right.iter().map(|&s| (problem.z_col(i, s), -big_m)));
                    m.add_row(format!("right[{i},{t}]"), self.epsilon - big_m, inf, row);
                }
                match self.loss {
                    Loss::Hinge => {
                        // zeta + y (w x + b) - M sum z >= 1 - M
                        let h = layer_of(t);
                        let mut row = affine(i, t, problem.y[i]);
                        row.push((loss + i * d + h, 1.0));
                        row.extend(below.iter().map(|&s| (problem.z_col(i, s), -big_m)));
                        m.add_row(format!("hinge[{i},{t}]"), 1.0 - big_m, inf, row);
                    }
                    Loss::Logloss => {
                        // (3.15): xi - f'(v) y (w x + b) - M sum z >= f(v) - f'(v) v - M
                        let margin = affine(i, t, problem.y[i]);
                        let switch: Vec<usize> =
                            below.iter().map(|&s| problem.z_col(i, s)).collect();
                        self.tangents.add_switched_rows(
                            &mut m,
                            loss + i * d + layer_of(t),
                            &margin,
                            0.0,
                            &switch,
                            big_m,
                            &format!("logloss[{i},{t}]"),
                        );
                    }
                    Loss::Misclassification if t >= last.start => {
                        let (u, zc) = (loss + i, problem.z_col(i, t));
                        // w x + b - 2 M u + M z <= M
                        let mut row = affine(i, t, 1.0);
                        row.extend([(u, -2.0 * big_m), (zc, big_m)]);
                        m.add_row(format!("predict_lo[{i},{t}]"), -inf, big_m, row);
                        // w x + b - 2 M u - M z >= eps - 3 M
                        let mut row = affine(i, t, 1.0);
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
    w: usize,
    wp: usize,
    wm: usize,
    b: usize,
    delta: usize,
    z: usize,
    loss: usize,
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
                        let v = point[self.w + t * self.p + j];
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

    /// The last-layer node each training row reaches under `planes` (left when the score
    /// is at most 0, as the MILP's rows (3.7) route it).
    pub fn leaves_of(&self, planes: &[(Vec<f64>, f64)]) -> Vec<usize> {
        let d = self.config.depth;
        (0..self.x.nrows())
            .map(|i| {
                let mut t = 0;
                while layer_of(t) + 1 < d {
                    t = if score(&self.x, i, &planes[t]) <= 0.0 {
                        2 * t + 1
                    } else {
                        2 * t + 2
                    };
                }
                t
            })
            .collect()
    }

    /// The MILP point of given hyperplanes: routing, slacks, predictions and l0 indicators
    /// follow from them (feasible when the planes respect the bounds and, with HFS, k, and
    /// no point lies within eps above an upper node's hyperplane).
    pub fn point_of(&self, planes: &[(Vec<f64>, f64)]) -> Vec<f64> {
        let mut point = vec![0.0; self.milp.num_columns()];
        for (t, (w, b)) in planes.iter().enumerate() {
            for (j, &v) in w.iter().enumerate() {
                point[self.w + t * self.p + j] = v;
                point[self.wp + t * self.p + j] = v.max(0.0);
                point[self.wm + t * self.p + j] = (-v).max(0.0);
                if self.config.has_l0() && v != 0.0 {
                    point[self.delta + t * self.p + j] = 1.0;
                }
            }
            point[self.b + t] = *b;
        }
        let d = self.config.depth;
        for i in 0..self.x.nrows() {
            let mut t = 0;
            for h in 0..d {
                let s = score(&self.x, i, &planes[t]);
                let margin = self.y[i] * s;
                match self.config.loss {
                    Loss::Hinge => point[self.loss + i * d + h] = (1.0 - margin).max(0.0),
                    Loss::Logloss => {
                        point[self.loss + i * d + h] = self.config.tangents.value(margin).max(0.0)
                    }
                    Loss::Misclassification => {}
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

    /// The exact objective of `planes` on the training rows: (3.12) with the true loss
    /// of every layer (the log-loss itself, not its under-estimator, for OLCT), plus the
    /// l1 and SFS penalties; for the misclassification loss, the errors plus the penalties.
    pub fn exact_objective(&self, planes: &[(Vec<f64>, f64)]) -> f64 {
        let config = &self.config;
        let d = config.depth;
        let last = last_layer(d);
        let mut total = 0.0;
        for i in 0..self.x.nrows() {
            let mut t = 0;
            for h in 0..d {
                let s = score(&self.x, i, &planes[t]);
                let margin = self.y[i] * s;
                total += match config.loss {
                    Loss::Hinge => (1.0 - margin).max(0.0),
                    Loss::Logloss => logistic_loss(margin),
                    Loss::Misclassification if h + 1 == d => {
                        f64::from(u8::from((s >= config.epsilon) != (self.y[i] > 0.0)))
                    }
                    Loss::Misclassification => 0.0,
                };
                t = if s <= 0.0 { 2 * t + 1 } else { 2 * t + 2 };
            }
        }
        for (t, (w, _)) in planes.iter().enumerate() {
            if config.loss != Loss::Misclassification || last.contains(&t) {
                total += config.lambda * w.iter().map(|v| v.abs()).sum::<f64>();
            }
            let used = w.iter().filter(|v| **v != 0.0).count();
            total += config.l0_penalty * used as f64;
        }
        total
    }
}

impl MilpClassifierFormulation for LossTreeConfig {
    type Problem = LossTreeProblem;
    type Model = LossTreeModel;

    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, features: usize, classes: usize) -> Result<()> {
        crate::heuristic::check_features(NAME, features)?;
        if classes != 2 {
            return Err(GlassboxError::formulation(
                NAME,
                format!(
                    "needs binary labels (the thesis' setting), the data have {classes} classes"
                ),
            ));
        }
        self.check_params(features)
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

    fn integrality_tolerance(&self, problem: &LossTreeProblem) -> Option<f64> {
        LossTreeConfig::integrality_tolerance(self, problem.p)
    }

    fn nlp_backend(&self) -> Option<&str> {
        (self.start == LossTreeStart::Greedy || self.refines()).then_some(self.nlp_solver.as_str())
    }

    fn start_with_nlp(
        &self,
        problem: &LossTreeProblem,
        nlp: &dyn NlpSolver,
    ) -> Result<Option<Vec<f64>>> {
        if self.start == LossTreeStart::None {
            return Ok(None);
        }
        let planes = greedy::greedy_planes(problem, nlp)?;
        let point = problem.point_of(&planes);
        // A start the MILP would reject is not given (see greedy::greedy_planes).
        Ok(problem.milp.is_feasible(&point).then_some(point))
    }

    fn refine(
        &self,
        problem: &LossTreeProblem,
        mut model: LossTreeModel,
        nlp: &dyn NlpSolver,
    ) -> Result<LossTreeModel> {
        if self.refines() {
            model.planes = greedy::refine_last_layer(problem, &model.planes, nlp)?;
            model.refined = true;
            model.set_interpretation(&problem.x);
        }
        Ok(model)
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
        let mut model = LossTreeModel {
            depth: self.depth,
            loss: self.loss,
            planes: problem.hyperplanes(x),
            epsilon: self.epsilon,
            scaler,
            classes,
            feature_names: encoding.feature_names(),
            encoding,
            influence: Vec::new(),
            node_sizes: Vec::new(),
            refined: false,
        };
        model.set_interpretation(&problem.x);
        model
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

    fn check_tree_search(&self) -> Result<()> {
        Err(GlassboxError::formulation(NAME, TREE_SEARCH_REFUSAL))
    }

    fn sparsity(&self, model: &LossTreeModel) -> (f64, f64) {
        let a = model.coefficients();
        (
            metrics::delta_local(&a, metrics::SPARSITY_TOLERANCE),
            metrics::delta_global(&a, metrics::SPARSITY_TOLERANCE),
        )
    }
}
