//! The fitted loss-optimal tree: prediction, the rules in the user's units, JSON, and the
//! thesis' interpretation of OLCTs ("Interpreting OLCTs", section 3.2): the influence
//! `r_jt = w_jt sigma_jt` of feature j at branch node t (sigma_jt the standard deviation of
//! feature j over the training points reaching t, `1 / N_t` as the thesis writes it), and the
//! per-node probabilities `sigmoid(w_t . x + b_t)` along a point's path (at an upper node the
//! confidence of going right; at the last node of a logistic tree, P(y = +1 | x)).
//!
//! `r_jt` is the same in scaled and in user units (w scales by 1 / scale_j, sigma by scale_j),
//! so it is computed once on the scaled training rows.

use super::{layer_of, score, Loss, NAME};
use glassbox_core::data::{Encoding, MinMaxScaler};
use glassbox_core::model::{CheckedModel, Classifier};
use glassbox_core::Result;
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// A fitted loss-optimal tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LossTreeModel {
    /// Branching layers d.
    pub depth: usize,
    /// The loss it was fitted with.
    pub loss: Loss,
    /// `(w_t, b_t)` per branch node, scaled units.
    pub planes: Vec<(Vec<f64>, f64)>,
    /// eps of the MILP: a score of at least eps / 2 goes right (and, for the hinge and
    /// misclassification losses, predicts +1).
    pub epsilon: f64,
    /// The training rows' scaling.
    pub scaler: MinMaxScaler,
    /// The two class labels (index 1 is y = +1).
    pub classes: Vec<String>,
    /// Encoded feature names.
    pub feature_names: Vec<String>,
    /// How raw columns are encoded.
    pub encoding: Encoding,
    /// `r_jt` per branch node (heap order) and feature, on the training rows.
    #[serde(default)]
    pub influence: Vec<Vec<f64>>,
    /// N_t: the training points reaching each branch node.
    #[serde(default)]
    pub node_sizes: Vec<usize>,
    /// Whether the last layer was refit by exact logistic regressions (Remark 1).
    #[serde(default)]
    pub refined: bool,
}

/// The logistic function.
pub(super) fn sigmoid(v: f64) -> f64 {
    if v >= 0.0 {
        1.0 / (1.0 + (-v).exp())
    } else {
        let e = v.exp();
        e / (1.0 + e)
    }
}

impl LossTreeModel {
    /// The score `w_t . z + b_t` of the last-layer node each scaled row reaches, and that node.
    pub fn scores_scaled(&self, z: &DMatrix<f64>) -> Vec<(usize, f64)> {
        self.paths_scaled(z)
            .into_iter()
            .map(|path| *path.last().expect("depth >= 1"))
            .collect()
    }

    /// Every `(node, score)` on each scaled row's path, root first.
    fn paths_scaled(&self, z: &DMatrix<f64>) -> Vec<Vec<(usize, f64)>> {
        (0..z.nrows())
            .map(|i| {
                let mut path = Vec::with_capacity(self.depth);
                let mut t = 0;
                loop {
                    let s = score(z, i, &self.planes[t]);
                    path.push((t, s));
                    if layer_of(t) + 1 == self.depth {
                        return path;
                    }
                    t = if s < self.cut() { 2 * t + 1 } else { 2 * t + 2 };
                }
            })
            .collect()
    }

    /// The per-node probabilities of each row of raw features `x`: `(node, sigmoid(score))`
    /// along its path, root first, the score being `w_t . x + b_t` (the confidence of going
    /// right at an upper node; at the last node of a logistic tree, P(y = +1 | x)).
    pub fn node_probabilities(&self, x: &DMatrix<f64>) -> Vec<Vec<(usize, f64)>> {
        self.paths_scaled(&self.scaler.transform(x))
            .into_iter()
            .map(|path| path.into_iter().map(|(t, s)| (t, sigmoid(s))).collect())
            .collect()
    }

    /// The score from which a point goes right (and a hinge or misclassification tree
    /// predicts +1).
    pub fn cut(&self) -> f64 {
        self.epsilon / 2.0
    }

    /// Computes the feature influences r_jt and node sizes N_t on the scaled training rows.
    pub fn set_interpretation(&mut self, z: &DMatrix<f64>) {
        let p = z.ncols();
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); self.planes.len()];
        for (i, path) in self.paths_scaled(z).into_iter().enumerate() {
            for (t, _) in path {
                members[t].push(i);
            }
        }
        self.node_sizes = members.iter().map(Vec::len).collect();
        self.influence = members
            .iter()
            .zip(&self.planes)
            .map(|(rows, (w, _))| {
                (0..p)
                    .map(|j| {
                        if rows.is_empty() || w[j] == 0.0 {
                            return 0.0;
                        }
                        let n = rows.len() as f64;
                        let mean = rows.iter().map(|&i| z[(i, j)]).sum::<f64>() / n;
                        let var = rows
                            .iter()
                            .map(|&i| (z[(i, j)] - mean).powi(2))
                            .sum::<f64>()
                            / n;
                        w[j] * var.sqrt()
                    })
                    .collect()
            })
            .collect();
    }

    /// Saves the model as JSON.
    pub fn save(&self, path: &Path) -> Result<()> {
        glassbox_core::model::save_json(path, NAME, self)
    }

    /// Loads a saved model (checked by [`CheckedModel`]).
    pub fn load(path: &Path) -> Result<Self> {
        glassbox_core::model::load_json(path, NAME)
    }

    /// The coefficients as a p x (branch nodes) matrix (scaled units).
    pub(super) fn coefficients(&self) -> DMatrix<f64> {
        let mut a = DMatrix::zeros(self.scaler.n_features(), self.planes.len());
        for (t, (w, _)) in self.planes.iter().enumerate() {
            for (j, &v) in w.iter().enumerate() {
                a[(j, t)] = v;
            }
        }
        a
    }

    fn feature(&self, j: usize) -> &str {
        self.feature_names.get(j).map_or("?", |s| s.as_str())
    }
}

impl CheckedModel for LossTreeModel {
    fn check(&self, _kind: &str) -> std::result::Result<(), String> {
        // Predicting walks `depth` layers of the heap of planes: sizes must agree (the
        // fuzzer's third model_loader crash was a file with too few planes).
        glassbox_core::model::check_depth(self.depth, 1..=8)?;
        let p = self.encoding.n_features();
        let plane_width = |(w, _): &(Vec<f64>, f64)| w.len();
        let odd_plane = self.planes.iter().map(plane_width).find(|&n| n != p);
        glassbox_core::model::check_sizes(
            &self.scaler,
            &self.encoding,
            &[
                (
                    "the number of planes",
                    self.planes.len(),
                    (1 << self.depth) - 1,
                ),
                ("the weights of a plane", odd_plane.unwrap_or(p), p),
                ("the number of feature names", self.feature_names.len(), p),
                ("the number of classes", self.classes.len(), 2),
            ],
        )
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
        let positive = self.classes.get(1).map_or("?", |s| s.as_str());
        let negative = self.classes.first().map_or("?", |s| s.as_str());
        let last = match self.loss {
            Loss::Logloss => format!(
                "P('{positive}' | x) = sigmoid(score), class '{positive}' when it exceeds 0.5, else '{negative}'"
            ),
            _ => format!(
                "class '{positive}' when the score >= {}, else '{negative}'",
                self.cut()
            ),
        };
        let _ = writeln!(
            out,
            "loss-optimal tree ({:?} loss{}), {} layer(s); upper nodes: left when the score < {} \
             (sigmoid(score): confidence of going right); last layer: {last}",
            self.loss,
            if self.refined {
                ", last layer refined"
            } else {
                ""
            },
            self.depth,
            self.cut(),
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
                    format!("{:+.6} * {}", v / scale, self.feature(j))
                })
                .collect();
            let indent = "  ".repeat(layer_of(t));
            let _ = writeln!(
                out,
                "{indent}node {t}: score = {} {:+.6}{}",
                if terms.is_empty() {
                    "0".to_string()
                } else {
                    terms.join(" ")
                },
                shift,
                self.node_sizes
                    .get(t)
                    .map_or(String::new(), |n| format!("   (N_t = {n})"))
            );
            if let Some(r) = self.influence.get(t) {
                let mut ranked: Vec<(usize, f64)> = r
                    .iter()
                    .copied()
                    .enumerate()
                    .filter(|(_, v)| *v != 0.0)
                    .collect();
                ranked.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
                if !ranked.is_empty() {
                    let text: Vec<String> = ranked
                        .iter()
                        .map(|&(j, v)| format!("{} {v:+.4}", self.feature(j)))
                        .collect();
                    let _ = writeln!(out, "{indent}  influence r_jt: {}", text.join(", "));
                }
            }
        }
        out
    }

    fn predict_proba(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        let scores = self.scores_scaled(&self.scaler.transform(x));
        let mut proba = DMatrix::zeros(x.nrows(), self.classes.len());
        for (i, (_, s)) in scores.into_iter().enumerate() {
            if self.loss == Loss::Logloss {
                let p = sigmoid(s);
                proba[(i, 1)] = p;
                proba[(i, 0)] = sigmoid(-s);
            } else {
                proba[(i, usize::from(s >= self.cut()))] = 1.0;
            }
        }
        proba
    }
}

glassbox_core::fitted_model!(LossTreeModel, classifier);
