//! The fitted S-ORCT: coefficients a, locations mu and leaf labels C in the scaled units
//! the problem was solved in, plus the scaler, so the tree predicts on raw rows and prints
//! its rules in the user's units.

use super::problem::{leaf_probabilities, left_probabilities, SorctProblem};
use super::{starts, NAME};
use glassbox_core::data::{Encoding, MinMaxScaler};
use glassbox_core::diagram::{complete_tree, nonzero_terms, oblique_lines, TreeDiagram};
use glassbox_core::metrics;
use glassbox_core::metrics::SPARSITY_TOLERANCE;
use glassbox_core::model::{CheckedModel, Classifier};
use glassbox_core::tree::TreeShape;
use glassbox_core::Result;
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// A fitted Sparse Optimal Randomized Classification Tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SorctModel {
    /// Depth D.
    pub depth: usize,
    /// Slope gamma of the logistic CDF.
    pub gamma: f64,
    /// lambda_L it was fitted with.
    pub lambda_local: f64,
    /// lambda_G it was fitted with.
    pub lambda_global: f64,
    /// Class labels (column order of `predict_proba`).
    pub classes: Vec<String>,
    /// Feature names (after dummy coding).
    pub feature_names: Vec<String>,
    /// How raw columns are encoded into the features (applied to new data at predict).
    pub encoding: Encoding,
    /// The min-max scaler fitted on the training rows.
    pub scaler: MinMaxScaler,
    /// Split coefficients a (p x |tau_B|), scaled units.
    #[serde(deserialize_with = "glassbox_core::model::checked_matrix")]
    pub a: DMatrix<f64>,
    /// Split locations mu (|tau_B|), scaled units.
    pub mu: Vec<f64>,
    /// Leaf class probabilities C (K x |tau_L|).
    #[serde(deserialize_with = "glassbox_core::model::checked_matrix")]
    pub c: DMatrix<f64>,
}

/// The gamma of [`SorctModel::kept_as_greedy`]: a split at distance 1e-9 (scaled units, 1/p
/// factor included) from a row still sends it to its side with probability 1 - e^-1000.
pub const HARD_GAMMA: f64 = 1e12;

/// How far [`SorctModel::kept_as_greedy`] moves each split towards its right side (in
/// a_t.x / p - mu_t), so that a row on a threshold goes left, as CART's `x_j <= s` sends
/// it. On integer features CART's midpoints are often values of test rows (haberman's ages:
/// 45 and 47 give 46), and at the threshold itself the CDF is 1/2 at any gamma.
const TIE_MARGIN: f64 = 1e-9;

impl SorctModel {
    /// The model at the NLP point `x` of `problem`.
    pub fn from_solution(
        problem: &SorctProblem,
        x: &[f64],
        scaler: MinMaxScaler,
        classes: Vec<String>,
        encoding: Encoding,
    ) -> Self {
        let lay = &problem.layout;
        SorctModel {
            depth: problem.params.depth,
            gamma: problem.params.gamma,
            lambda_local: problem.params.lambda_local,
            lambda_global: problem.params.lambda_global,
            classes,
            feature_names: encoding.feature_names(),
            encoding,
            scaler,
            a: lay.coefficients(x),
            mu: x[lay.mu..lay.mu + lay.branches].to_vec(),
            c: lay.leaf_classes(x),
        }
    }

    /// The NLP point of `problem` that starts from this model (warm start). If the
    /// problem's data were scaled differently, the splits are carried over through the
    /// user's units, then clipped to the bounds [-1, 1].
    pub fn start_point(&self, problem: &SorctProblem, scaler: &MinMaxScaler) -> Result<Vec<f64>> {
        let lay = &problem.layout;
        if self.a.nrows() != lay.p
            || self.depth != problem.params.depth
            || self.c.nrows() != lay.classes
        {
            return Err(glassbox_core::GlassboxError::formulation(
                NAME,
                format!(
                    "cannot warm start from a model with depth {}, {} features and {} classes: \
                     the problem has depth {}, {} features and {} classes",
                    self.depth,
                    self.a.nrows(),
                    self.c.nrows(),
                    problem.params.depth,
                    lay.p,
                    lay.classes
                ),
            ));
        }
        let (w, b) = self.user_units();
        let p = lay.p as f64;
        let a = DMatrix::from_fn(lay.p, lay.branches, |j, t| {
            w[(j, t)] * p * scaler.scale_of(j)
        });
        let mu: Vec<f64> = (0..lay.branches)
            .map(|t| b[t] - (0..lay.p).map(|j| w[(j, t)] * scaler.min[j]).sum::<f64>())
            .collect();
        Ok(starts::point(problem, &a, &mu, &self.c))
    }

    /// The greedy tree of `problem`'s training rows laid into this model's splits, kept as
    /// it is: hard splits (gamma so large that every row goes to one side with probability
    /// 1, to rounding; a row on a split goes left, `TIE_MARGIN`) and each leaf labelled with the
    /// class of least misclassification cost among the training rows it receives, with no
    /// class forced onto a leaf (constraint (3) binds the NLP, not a tree kept unsolved).
    /// An axis-aligned tree laid in by [`crate::axis_start`] then predicts exactly as that
    /// tree does.
    pub fn kept_as_greedy(self, problem: &SorctProblem) -> SorctModel {
        let mu = self.mu.iter().map(|m| m - TIE_MARGIN).collect();
        let hard = SorctModel {
            gamma: HARD_GAMMA,
            mu,
            ..self
        };
        let shape = TreeShape::new(hard.depth);
        let left = left_probabilities(&problem.x, &hard.a, &hard.mu, hard.gamma);
        let reach = leaf_probabilities(&left, &shape);
        let leaf_of: Vec<usize> = (0..reach.nrows())
            .map(|i| {
                (0..reach.ncols())
                    .max_by(|&a, &b| reach[(i, a)].total_cmp(&reach[(i, b)]))
                    .unwrap_or(0)
            })
            .collect();
        SorctModel {
            c: starts::cheapest_labels(problem, &leaf_of),
            ..hard
        }
    }

    /// The splits in the user's units: node t sends x left with probability
    /// F(gamma (w_t . x - b_t)); returns (w as p x |tau_B|, b).
    pub fn user_units(&self) -> (DMatrix<f64>, Vec<f64>) {
        let p = self.a.nrows() as f64;
        let w = DMatrix::from_fn(self.a.nrows(), self.a.ncols(), |j, t| {
            self.a[(j, t)] / (p * self.scaler.scale_of(j))
        });
        let b = (0..self.a.ncols())
            .map(|t| {
                self.mu[t]
                    + (0..self.a.nrows())
                        .map(|j| w[(j, t)] * self.scaler.min[j])
                        .sum::<f64>()
            })
            .collect();
        (w, b)
    }

    /// Class probabilities for rows already scaled.
    pub fn predict_proba_scaled(&self, xs: &DMatrix<f64>) -> DMatrix<f64> {
        let shape = TreeShape::new(self.depth);
        let left = left_probabilities(xs, &self.a, &self.mu, self.gamma);
        let reach = leaf_probabilities(&left, &shape);
        reach * self.c.transpose()
    }

    /// Local sparsity delta_L (percent), coefficients with |a| <= `tol` counting as zero.
    pub fn delta_local(&self, tol: f64) -> f64 {
        metrics::delta_local(&self.a, tol)
    }

    /// Global sparsity delta_G (percent).
    pub fn delta_global(&self, tol: f64) -> f64 {
        metrics::delta_global(&self.a, tol)
    }

    /// The class each leaf predicts (its largest C_kt).
    pub fn leaf_labels(&self) -> Vec<usize> {
        (0..self.c.ncols())
            .map(|l| {
                (0..self.c.nrows())
                    .max_by(|&a, &b| self.c[(a, l)].total_cmp(&self.c[(b, l)]))
                    .unwrap_or(0)
            })
            .collect()
    }

    /// The tree as text in the user's units, zero coefficients left out.
    fn text(&self) -> String {
        let (w, b) = self.user_units();
        let shape = TreeShape::new(self.depth);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "S-ORCT depth {} (gamma {}), delta_L {:.1}%, delta_G {:.1}%",
            self.depth,
            self.gamma,
            self.delta_local(metrics::SPARSITY_TOLERANCE),
            self.delta_global(metrics::SPARSITY_TOLERANCE)
        );
        for t in 0..shape.num_branches() {
            let terms: Vec<String> = (0..w.nrows())
                .filter(|&j| self.a[(j, t)].abs() > metrics::SPARSITY_TOLERANCE)
                .map(|j| {
                    format!(
                        "{:+.4} * {}",
                        w[(j, t)],
                        self.feature_names.get(j).map_or("?", |s| s.as_str())
                    )
                })
                .collect();
            let rule = if terms.is_empty() {
                "0".to_string()
            } else {
                terms.join(" ")
            };
            let _ = writeln!(
                out,
                "{}node {t}: left with probability F({} * ({rule} {:+.4}))",
                "  ".repeat(shape.node_depth(t)),
                self.gamma,
                -b[t]
            );
        }
        for (l, &k) in self.leaf_labels().iter().enumerate() {
            let _ = writeln!(
                out,
                "{}leaf {l}: class {} (C = {:.3})",
                "  ".repeat(self.depth),
                self.classes.get(k).map_or("?", |s| s.as_str()),
                self.c[(k, l)]
            );
        }
        out
    }

    /// Saves the model as JSON.
    pub fn save(&self, path: &Path) -> Result<()> {
        glassbox_core::model::save_json(path, NAME, self)
    }

    /// Loads a model saved by [`SorctModel::save`] (checked by [`CheckedModel`]).
    pub fn load(path: &Path) -> Result<Self> {
        glassbox_core::model::load_json(path, NAME)
    }
}

impl CheckedModel for SorctModel {
    fn check(&self, _kind: &str) -> std::result::Result<(), String> {
        glassbox_core::model::check_depth(self.depth, 1..=12)?;
        glassbox_core::model::check_classes(&self.classes, 1)?;
        let p = self.encoding.n_features();
        let shape = TreeShape::new(self.depth);
        let (branches, leaves) = (shape.num_branches(), shape.num_leaves());
        glassbox_core::model::check_sizes(
            &self.scaler,
            &self.encoding,
            &[
                ("the number of feature names", self.feature_names.len(), p),
                ("the rows of a", self.a.nrows(), p),
                ("the columns of a", self.a.ncols(), branches),
                ("the length of mu", self.mu.len(), branches),
                ("the rows of c", self.c.nrows(), self.classes.len()),
                ("the columns of c", self.c.ncols(), leaves),
            ],
        )
    }
}

impl Classifier for SorctModel {
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
        self.predict_proba_scaled(&self.scaler.transform(x))
    }
}

/// S-ORCT (and l0tree's) tree: node t sends x left with probability
/// F(gamma (w_t . x - b_t)), more likely left than right exactly when w_t . x >= b_t.
pub fn sorct_diagram(model: &SorctModel, title: &str) -> TreeDiagram {
    let (w, b) = model.user_units();
    let labels = model.leaf_labels();
    complete_tree(
        format!(
            "{title} depth {} (gamma {}), delta_L {:.1}%, delta_G {:.1}%",
            model.depth,
            model.gamma,
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
            let mut lines = vec![format!(
                "leaf {l}: {}",
                model.classes.get(labels[l]).map_or("?", |s| s.as_str())
            )];
            for (k, class) in model.classes.iter().enumerate() {
                lines.push(format!("P({class}) = {:.3}", model.c[(k, l)]));
            }
            lines
        },
    )
}

glassbox_core::fitted_model!(
    SorctModel,
    classifier,
    diagram = |m| sorct_diagram(m, "S-ORCT")
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sorct::SorctConfig;
    use glassbox_core::formulation::NlpClassifierFormulation;
    use std::sync::Arc;

    /// A depth-1 S-ORCT problem on one feature `x` (100 rows) and classes `y`, CART's tree
    /// of depth 1 on them, and CART's start laid into the problem.
    fn depth_one(
        x: &DMatrix<f64>,
        y: &[usize],
    ) -> (
        SorctConfig,
        SorctProblem,
        crate::cart::tree::AxisTree,
        Vec<f64>,
    ) {
        let config = SorctConfig {
            depth: 1,
            ..SorctConfig::default()
        };
        let problem = config
            .problem(Arc::new(x.clone()), Arc::new(y.to_vec()), 2)
            .unwrap();
        let cart = crate::axis_start::cart_tree(
            x,
            glassbox_core::learner::Targets::Classes { y, n_classes: 2 },
            1,
        );
        let start = crate::sorct::starts::cart_start(&problem);
        (config, problem, cart, start)
    }

    fn classes() -> Vec<String> {
        vec!["0".to_string(), "1".to_string()]
    }

    /// One feature, class 1 on every seventh row from the fourth: CART's depth-1 split
    /// leaves class 0 the majority on both sides, so the CART tree predicts class 0
    /// everywhere. The CART start labels a leaf with class 1 (every class must label a leaf
    /// in the NLP); the greedy tree kept as it is must predict as CART does.
    #[test]
    fn a_kept_greedy_tree_predicts_as_cart_does() {
        let x = DMatrix::from_fn(100, 1, |i, _| i as f64 / 99.0);
        let y: Vec<usize> = (0..100).map(|i| usize::from(i % 7 == 3)).collect();
        let (config, problem, cart, start) = depth_one(&x, &y);
        let by_cart: Vec<usize> = (0..100)
            .map(|i| {
                let value = &cart.nodes[cart.leaf_of(&x, i)].value;
                usize::from(value[1] > value[0])
            })
            .collect();
        assert_eq!(
            by_cart,
            vec![0; 100],
            "the data should make CART all class 0"
        );
        let scaler = MinMaxScaler::fit(&x);
        let labels = |m: &SorctModel| -> Vec<usize> {
            let p = m.predict_proba_scaled(&x);
            (0..100)
                .map(|i| usize::from(p[(i, 1)] > p[(i, 0)]))
                .collect()
        };
        let started = config.model(
            &problem,
            &start,
            scaler.clone(),
            classes(),
            Encoding::default(),
        );
        assert!(labels(&started).contains(&1));
        let kept = config.greedy_model(&problem, &start, scaler, classes(), Encoding::default());
        assert_eq!(kept.gamma, HARD_GAMMA);
        assert_eq!(labels(&kept), vec![0; 100]);
    }

    #[test]
    fn a_kept_greedy_tree_sends_a_row_on_a_threshold_where_cart_does() {
        // Class 1 on the left: a row on CART's threshold is class 1 (x <= s goes left).
        let x = DMatrix::from_fn(100, 1, |i, _| i as f64 / 99.0);
        let y: Vec<usize> = (0..100).map(|i| usize::from(i < 50)).collect();
        let (config, problem, cart, start) = depth_one(&x, &y);
        let kept = config.greedy_model(
            &problem,
            &start,
            MinMaxScaler::fit(&x),
            classes(),
            Encoding::default(),
        );
        let threshold = cart.nodes[0].branch.as_ref().unwrap().split.threshold;
        let on_it = DMatrix::from_element(1, 1, threshold);
        assert_eq!(cart.nodes[cart.leaf_of(&on_it, 0)].class(), 1);
        let p = kept.predict_proba_scaled(&on_it);
        assert!(p[(0, 1)] > 0.999, "{p}");
    }
}
