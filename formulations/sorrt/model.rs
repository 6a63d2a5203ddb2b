//! The fitted S-ORRT: coefficients a and locations mu of every node (branch nodes, then
//! leaves) in the scaled units the problem was solved in, plus the scaler, so the tree
//! predicts on raw rows, prints its rules and leaf models in the user's units, and explains
//! its predictions (7).

use super::problem::{evaluate, feature_gradient, SorrtProblem};
use super::{starts, NAME};
use glassbox_core::data::{Encoding, MinMaxScaler};
use glassbox_core::diagram::{complete_tree, nonzero_terms, oblique_lines, TreeDiagram};
use glassbox_core::metrics;
use glassbox_core::metrics::SPARSITY_TOLERANCE;
use glassbox_core::model::{CheckedModel, Regressor};
use glassbox_core::tree::TreeShape;
use glassbox_core::Result;
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// A fitted Sparse Optimal Randomized Regression Tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SorrtModel {
    /// Depth D.
    pub depth: usize,
    /// Slope gamma of the logistic CDF.
    pub gamma: f64,
    /// lambda_L it was fitted with.
    pub lambda_local: f64,
    /// lambda_G it was fitted with.
    pub lambda_global: f64,
    /// The target column's name.
    pub target: String,
    /// Feature names (after dummy coding).
    pub feature_names: Vec<String>,
    /// How raw columns are encoded into the features (applied to new data at predict).
    pub encoding: Encoding,
    /// The min-max scaler fitted on the training rows.
    pub scaler: MinMaxScaler,
    /// Coefficients a (p x (|tau_B| + |tau_L|)), scaled units: branch nodes, then leaves.
    #[serde(deserialize_with = "glassbox_core::model::checked_matrix")]
    pub a: DMatrix<f64>,
    /// mu (|tau_B| + |tau_L|): split locations, then minus the leaf intercepts.
    pub mu: Vec<f64>,
    /// The range of the training targets, which predictions are clipped to
    /// (`SorrtConfig::clip_predictions`); `None`: not clipped (the paper's prediction (2),
    /// and models saved before the option).
    #[serde(default)]
    pub prediction_range: Option<(f64, f64)>,
}

impl SorrtModel {
    /// The model at the NLP point `x` of `problem`.
    pub fn from_solution(
        problem: &SorrtProblem,
        x: &[f64],
        scaler: MinMaxScaler,
        target: String,
        encoding: Encoding,
    ) -> Self {
        let lay = &problem.layout;
        SorrtModel {
            depth: problem.params.depth,
            gamma: problem.params.gamma,
            lambda_local: problem.params.lambda_local,
            lambda_global: problem.params.lambda_global,
            target,
            feature_names: encoding.feature_names(),
            encoding,
            scaler,
            a: lay.coefficients(x),
            mu: lay.locations(x),
            prediction_range: problem
                .params
                .clip_predictions
                .then(|| problem.target_range()),
        }
    }

    fn shape(&self) -> TreeShape {
        TreeShape::new(self.depth)
    }

    fn branches(&self) -> usize {
        (1 << self.depth) - 1
    }

    /// The NLP point of `problem` that starts from this model (warm start). If the
    /// problem's data were scaled differently, the model is carried over through the
    /// user's units (splits then clipped to their bounds [-1, 1]).
    pub fn start_point(&self, problem: &SorrtProblem, scaler: &MinMaxScaler) -> Result<Vec<f64>> {
        let lay = &problem.layout;
        if self.a.nrows() != lay.p || self.depth != problem.params.depth {
            return Err(glassbox_core::GlassboxError::formulation(
                NAME,
                format!(
                    "cannot warm start from a model with depth {} and {} features: the problem \
                     has depth {} and {} features",
                    self.depth,
                    self.a.nrows(),
                    problem.params.depth,
                    lay.p
                ),
            ));
        }
        let (w, b) = self.split_rules();
        let (c, d) = self.leaf_models();
        let p = lay.p as f64;
        let branches = lay.branches;
        let mut a = DMatrix::zeros(lay.p, lay.nodes);
        let mut mu = vec![0.0; lay.nodes];
        for t in 0..branches {
            for j in 0..lay.p {
                a[(j, t)] = w[(j, t)] * p * scaler.scale_of(j);
            }
            mu[t] = b[t] - (0..lay.p).map(|j| w[(j, t)] * scaler.min[j]).sum::<f64>();
        }
        for l in 0..lay.leaves {
            for j in 0..lay.p {
                a[(j, branches + l)] = c[(j, l)] * scaler.scale_of(j);
            }
            mu[branches + l] = -(d[l] + (0..lay.p).map(|j| c[(j, l)] * scaler.min[j]).sum::<f64>());
        }
        Ok(starts::point(problem, &a, &mu))
    }

    /// The splits in the user's units: node t sends x left with probability
    /// F(gamma (w_t . x - b_t)); returns (w as p x |tau_B|, b).
    pub fn split_rules(&self) -> (DMatrix<f64>, Vec<f64>) {
        let p = self.a.nrows();
        let branches = self.branches();
        let w = DMatrix::from_fn(p, branches, |j, t| {
            self.a[(j, t)] / (p as f64 * self.scaler.scale_of(j))
        });
        let b = (0..branches)
            .map(|t| self.mu[t] + (0..p).map(|j| w[(j, t)] * self.scaler.min[j]).sum::<f64>())
            .collect();
        (w, b)
    }

    /// The leaf models in the user's units: leaf l predicts c_.l . x + d_l; returns (c as
    /// p x |tau_L|, d).
    pub fn leaf_models(&self) -> (DMatrix<f64>, Vec<f64>) {
        let p = self.a.nrows();
        let branches = self.branches();
        let leaves = 1 << self.depth;
        let c = DMatrix::from_fn(p, leaves, |j, l| {
            self.a[(j, branches + l)] / self.scaler.scale_of(j)
        });
        let d = (0..leaves)
            .map(|l| {
                -self.mu[branches + l] - (0..p).map(|j| c[(j, l)] * self.scaler.min[j]).sum::<f64>()
            })
            .collect();
        (c, d)
    }

    /// Predictions (2) for rows already scaled, clipped to [`Self::prediction_range`].
    pub fn predict_scaled(&self, xs: &DMatrix<f64>) -> Vec<f64> {
        let phi = evaluate(xs, &self.a, &self.mu, self.gamma, &self.shape()).phi;
        match self.prediction_range {
            Some((lo, hi)) => phi.into_iter().map(|v| v.clamp(lo, hi)).collect(),
            None => phi,
        }
    }

    /// The local explanations (7) for rows already scaled: the gradient of the prediction
    /// with respect to each scaled feature (N x p); zero on a row whose prediction is
    /// clipped (it does not move with the features there).
    pub fn explain_scaled(&self, xs: &DMatrix<f64>) -> DMatrix<f64> {
        let ev = evaluate(xs, &self.a, &self.mu, self.gamma, &self.shape());
        let mut gradient = feature_gradient(&ev, &self.a, self.gamma, &self.shape());
        if let Some((lo, hi)) = self.prediction_range {
            for (i, v) in ev.phi.iter().enumerate() {
                if *v < lo || *v > hi {
                    gradient.row_mut(i).fill(0.0);
                }
            }
        }
        gradient
    }

    /// The local explanations (7) for raw rows `x` (encoded, unscaled): (gradient in the
    /// user's units, gradient in scaled units), each N x p. The scaled gradient is the
    /// user's gradient times the feature's training range, so features compare on one axis
    /// (the paper's Fig. 2).
    pub fn explain(&self, x: &DMatrix<f64>) -> (DMatrix<f64>, DMatrix<f64>) {
        let scaled = self.explain_scaled(&self.scaler.transform(x));
        let user = DMatrix::from_fn(scaled.nrows(), scaled.ncols(), |i, j| {
            scaled[(i, j)] / self.scaler.scale_of(j)
        });
        (user, scaled)
    }

    /// Local sparsity delta_L (percent) over branch and leaf nodes, |a| <= `tol` counting
    /// as zero.
    pub fn delta_local(&self, tol: f64) -> f64 {
        metrics::delta_local(&self.a, tol)
    }

    /// Global sparsity delta_G (percent) over branch and leaf nodes.
    pub fn delta_global(&self, tol: f64) -> f64 {
        metrics::delta_global(&self.a, tol)
    }

    fn name_of(&self, j: usize) -> &str {
        self.feature_names.get(j).map_or("?", |s| s.as_str())
    }

    fn terms(&self, coefs: &[f64], scaled: &[f64]) -> String {
        let terms: Vec<String> = (0..coefs.len())
            .filter(|&j| scaled[j].abs() > metrics::SPARSITY_TOLERANCE)
            .map(|j| format!("{:+.5} * {}", coefs[j], self.name_of(j)))
            .collect();
        if terms.is_empty() {
            "0".to_string()
        } else {
            terms.join(" ")
        }
    }

    /// The tree as text in the user's units, zero coefficients left out.
    fn text(&self) -> String {
        let (w, b) = self.split_rules();
        let (c, d) = self.leaf_models();
        let shape = self.shape();
        let branches = self.branches();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "S-ORRT depth {} (gamma {}) predicting {}, delta_L {:.1}%, delta_G {:.1}%",
            self.depth,
            self.gamma,
            self.target,
            self.delta_local(metrics::SPARSITY_TOLERANCE),
            self.delta_global(metrics::SPARSITY_TOLERANCE)
        );
        for (t, bt) in b.iter().enumerate() {
            let coefs: Vec<f64> = w.column(t).iter().copied().collect();
            let scaled: Vec<f64> = self.a.column(t).iter().copied().collect();
            let _ = writeln!(
                out,
                "{}node {t}: left with probability F({} * ({} {:+.5}))",
                "  ".repeat(shape.node_depth(t)),
                self.gamma,
                self.terms(&coefs, &scaled),
                -bt
            );
        }
        for (l, dl) in d.iter().enumerate() {
            let coefs: Vec<f64> = c.column(l).iter().copied().collect();
            let scaled: Vec<f64> = self.a.column(branches + l).iter().copied().collect();
            let _ = writeln!(
                out,
                "{}leaf {l}: {} = {} {:+.5}",
                "  ".repeat(self.depth),
                self.target,
                self.terms(&coefs, &scaled),
                dl
            );
        }
        out
    }

    /// Saves the model as JSON.
    pub fn save(&self, path: &Path) -> Result<()> {
        glassbox_core::model::save_json(path, NAME, self)
    }

    /// Loads a model saved by [`SorrtModel::save`] (checked by [`CheckedModel`]).
    pub fn load(path: &Path) -> Result<Self> {
        glassbox_core::model::load_json(path, NAME)
    }
}

impl CheckedModel for SorrtModel {
    fn check(&self, _kind: &str) -> std::result::Result<(), String> {
        glassbox_core::model::check_depth(self.depth, 1..=12)?;
        let p = self.encoding.n_features();
        let shape = self.shape();
        let nodes = shape.num_branches() + shape.num_leaves();
        glassbox_core::model::check_sizes(
            &self.scaler,
            &self.encoding,
            &[
                ("the number of feature names", self.feature_names.len(), p),
                ("the rows of a", self.a.nrows(), p),
                (
                    "the columns of a (branch and leaf nodes)",
                    self.a.ncols(),
                    nodes,
                ),
                ("the length of mu", self.mu.len(), nodes),
            ],
        )
    }
}

impl Regressor for SorrtModel {
    fn target(&self) -> &str {
        &self.target
    }

    fn encoding(&self) -> &Encoding {
        &self.encoding
    }

    fn describe(&self) -> String {
        self.text()
    }

    fn predict(&self, x: &DMatrix<f64>) -> Vec<f64> {
        self.predict_scaled(&self.scaler.transform(x))
    }
}

/// S-ORRT: oblique splits as S-ORCT's, linear predictions at the leaves.
pub fn sorrt_diagram(model: &SorrtModel) -> TreeDiagram {
    let (w, b) = model.split_rules();
    let (c, d) = model.leaf_models();
    let branches = (1usize << model.depth) - 1;
    complete_tree(
        format!(
            "S-ORRT depth {} (gamma {}) predicting {}, delta_L {:.1}%, delta_G {:.1}%",
            model.depth,
            model.gamma,
            model.target,
            model.delta_local(SPARSITY_TOLERANCE),
            model.delta_global(SPARSITY_TOLERANCE)
        ),
        model.depth,
        |t| {
            oblique_lines(
                format!("node {t}: left w.p. F({}(s - b)), s =", model.gamma),
                nonzero_terms(&model.a, &w, t, &model.feature_names),
                format!("left more likely when s >= {:.4}", b[t]),
            )
        },
        |l| {
            let scaled = model.a.columns(branches + l, 1).into_owned();
            let user = c.columns(l, 1).into_owned();
            oblique_lines(
                format!("leaf {l}: {} =", model.target),
                nonzero_terms(&scaled, &user, 0, &model.feature_names),
                format!("{:+.4}", d[l]),
            )
        },
    )
}

glassbox_core::fitted_model!(
    SorrtModel,
    regressor,
    diagram = sorrt_diagram,
    explainer = Explainer
);
