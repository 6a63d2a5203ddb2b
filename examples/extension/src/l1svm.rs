//! `l1svm`: the 1-norm support vector machine of Bradley and Mangasarian ("Feature
//! selection via concave minimization and support vector machines", ICML 1998; the LP of
//! their section 2.2), a sparse linear classifier for two classes, added to glassbox from
//! outside. It shows what a formulation written outside glassbox needs: a config type
//! implementing the core's [`MilpClassifierFormulation`], a fitted model implementing
//! [`Classifier`] and [`CheckedModel`] (with `fitted_model!` for the rest), and an
//! [`FormulationInfo`] for `glassbox formulations`.
//!
//! On features scaled to [0, 1] and labels y_i = -1 (the first class) or +1 (the second):
//!
//! ```text
//! min  sum_j (u_j + v_j) + C sum_i xi_i
//! s.t. y_i (x_i . (u - v) + b) + xi_i >= 1     i = 1..N
//!      u, v, xi >= 0,  b free
//! ```
//!
//! so w = u - v and ||w||_1 = sum (u + v) at an optimum. With `max_features = k > 0`, binary
//! z_j switch feature j on (u_j + v_j <= W z_j, sum z_j <= k, W = `weight_bound`): a MILP,
//! where the paper's LP is the case k = 0 (no limit). The choice of the bound W is ours: the
//! paper has no cardinality limit.

use glassbox::data::{Encoding, MinMaxScaler};
use glassbox::formulation::{
    FormulationInfo, MilpClassifierFormulation, ParamSpec, ReportedParams,
};
use glassbox::milp::{MilpProblem, Sense};
use glassbox::model::{CheckedModel, Classifier};
use glassbox::{metrics, GlassboxError, Result};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

/// The name configs and model files use.
pub const NAME: &str = "l1svm";

/// The `[formulation]` table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct L1SvmConfig {
    /// C, the weight of the hinge losses against ||w||_1 (> 0).
    pub c: f64,
    /// At most this many features with a nonzero weight (0: no limit, the paper's LP).
    pub max_features: usize,
    /// W, the bound on |w_j| that links w_j to its switch z_j (scaled units; used only with
    /// `max_features`).
    pub weight_bound: f64,
}

impl Default for L1SvmConfig {
    fn default() -> Self {
        L1SvmConfig {
            c: 1.0,
            max_features: 0,
            weight_bound: 100.0,
        }
    }
}

/// What `glassbox formulations` shows.
pub fn info() -> FormulationInfo {
    const PARAMS: &[ParamSpec] = &[
        ParamSpec {
            name: "c",
            default: "1.0",
            help: "C, weight of the hinge losses against ||w||_1 (> 0)",
        },
        ParamSpec {
            name: "max_features",
            default: "0",
            help: "most features with a nonzero weight (0: no limit, an LP)",
        },
        ParamSpec {
            name: "weight_bound",
            default: "100.0",
            help: "W, bound on |w_j| in scaled units (with max_features)",
        },
    ];
    FormulationInfo {
        name: NAME,
        kind: "milp",
        description: "1-norm SVM (Bradley and Mangasarian 1998), a sparse linear classifier \
                      for two classes, as an LP (a MILP with max_features)",
        parameters: PARAMS,
    }
}

/// The built problem: the MILP, the data it was built on and where its columns are.
pub struct L1SvmProblem {
    /// The MILP.
    pub milp: MilpProblem,
    x: Arc<DMatrix<f64>>,
    /// +1 or -1 per row.
    signs: Vec<f64>,
    /// Whether the problem has the switches z.
    switched: bool,
}

// Column layout: u_0..u_{p-1}, v_0..v_{p-1}, b, xi_0..xi_{N-1}, then z_0..z_{p-1} if
// switched.
impl L1SvmProblem {
    fn p(&self) -> usize {
        self.x.ncols()
    }
    fn u(&self, j: usize) -> usize {
        j
    }
    fn v(&self, j: usize) -> usize {
        self.p() + j
    }
    fn b(&self) -> usize {
        2 * self.p()
    }
    fn xi(&self, i: usize) -> usize {
        2 * self.p() + 1 + i
    }
    fn z(&self, j: usize) -> usize {
        2 * self.p() + 1 + self.x.nrows() + j
    }

    /// The MILP point of weights `w` and bias `b` (scaled units): the smallest hinge
    /// losses, and the switches of the nonzero weights. Feasible when at most
    /// `max_features` weights are nonzero and each is within W.
    fn point(&self, w: &[f64], b: f64) -> Vec<f64> {
        let mut point = vec![0.0; self.milp.num_columns()];
        for (j, &wj) in w.iter().enumerate() {
            point[self.u(j)] = wj.max(0.0);
            point[self.v(j)] = (-wj).max(0.0);
            if self.switched {
                point[self.z(j)] = if wj != 0.0 { 1.0 } else { 0.0 };
            }
        }
        point[self.b()] = b;
        for i in 0..self.x.nrows() {
            let score: f64 = b + (0..self.p()).map(|j| self.x[(i, j)] * w[j]).sum::<f64>();
            point[self.xi(i)] = (1.0 - self.signs[i] * score).max(0.0);
        }
        point
    }
}

impl L1SvmConfig {
    fn check_params(&self) -> Result<()> {
        let bad = |message: String| Err(GlassboxError::formulation(NAME, message));
        if !(self.c.is_finite() && self.c > 0.0) {
            return bad(format!("c must be a positive number, got {}", self.c));
        }
        if !(self.weight_bound.is_finite() && self.weight_bound > 0.0) {
            return bad(format!(
                "weight_bound must be a positive number, got {}",
                self.weight_bound
            ));
        }
        Ok(())
    }
}

impl MilpClassifierFormulation for L1SvmConfig {
    type Problem = L1SvmProblem;
    type Model = L1SvmModel;

    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, features: usize, classes: usize) -> Result<()> {
        if classes != 2 {
            return Err(GlassboxError::formulation(
                NAME,
                format!("l1svm separates two classes; the data have {classes}"),
            ));
        }
        if features == 0 {
            return Err(GlassboxError::formulation(
                NAME,
                "the data have no features",
            ));
        }
        self.check_params()
    }

    fn problem(
        &self,
        x: Arc<DMatrix<f64>>,
        y: Arc<Vec<usize>>,
        classes: usize,
    ) -> Result<L1SvmProblem> {
        self.check(x.ncols(), classes)?;
        let (n, p) = x.shape();
        let switched = self.max_features > 0 && self.max_features < p;
        let weight_upper = if switched {
            self.weight_bound
        } else {
            f64::INFINITY
        };
        let mut milp = MilpProblem::new("l1svm");
        milp.sense = Sense::Minimize;
        for side in ["u", "v"] {
            for j in 0..p {
                milp.add_column(format!("{side}_{j}"), 0.0, weight_upper, 1.0, false);
            }
        }
        milp.add_column("b", f64::NEG_INFINITY, f64::INFINITY, 0.0, false);
        for i in 0..n {
            milp.add_column(format!("xi_{i}"), 0.0, f64::INFINITY, self.c, false);
        }
        let signs: Vec<f64> = y.iter().map(|&k| if k == 1 { 1.0 } else { -1.0 }).collect();
        let problem = L1SvmProblem {
            milp,
            x,
            signs,
            switched,
        };
        let mut milp = problem.milp.clone();
        for i in 0..n {
            let s = problem.signs[i];
            let mut row = Vec::with_capacity(2 * p + 2);
            for j in 0..p {
                let a = s * problem.x[(i, j)];
                if a != 0.0 {
                    row.push((problem.u(j), a));
                    row.push((problem.v(j), -a));
                }
            }
            row.push((problem.b(), s));
            row.push((problem.xi(i), 1.0));
            milp.add_row(format!("margin_{i}"), 1.0, f64::INFINITY, row);
        }
        if switched {
            for j in 0..p {
                milp.add_binary(format!("z_{j}"), 0.0);
            }
            for j in 0..p {
                let row = vec![
                    (problem.u(j), 1.0),
                    (problem.v(j), 1.0),
                    (problem.z(j), -self.weight_bound),
                ];
                milp.add_row(format!("switch_{j}"), f64::NEG_INFINITY, 0.0, row);
            }
            let count = (0..p).map(|j| (problem.z(j), 1.0)).collect();
            milp.add_row(
                "max_features",
                f64::NEG_INFINITY,
                self.max_features as f64,
                count,
            );
        }
        Ok(L1SvmProblem { milp, ..problem })
    }

    fn milp<'a>(&self, problem: &'a L1SvmProblem) -> &'a MilpProblem {
        &problem.milp
    }

    /// w = 0, b = 0: every hinge loss 1, feasible for any parameters.
    fn heuristic_start(&self, problem: &L1SvmProblem) -> Option<Vec<f64>> {
        Some(problem.point(&vec![0.0; problem.p()], 0.0))
    }

    /// The model's hyperplane in this split's scaled units (its scaler may differ), with
    /// weights clipped to W.
    fn warm_start(
        &self,
        model: &L1SvmModel,
        problem: &L1SvmProblem,
        scaler: &MinMaxScaler,
    ) -> Result<Vec<f64>> {
        let (user_w, user_b) = model.user_units();
        if user_w.len() != problem.p() {
            return Err(GlassboxError::formulation(
                NAME,
                format!(
                    "the warm start model has {} features, the data {}",
                    user_w.len(),
                    problem.p()
                ),
            ));
        }
        let w: Vec<f64> = (0..problem.p())
            .map(|j| user_w[j] * scaler.scale_of(j))
            .map(|w| {
                if problem.switched {
                    w.clamp(-self.weight_bound, self.weight_bound)
                } else {
                    w
                }
            })
            .collect();
        let b = user_b
            + (0..problem.p())
                .map(|j| user_w[j] * scaler.min[j])
                .sum::<f64>();
        Ok(problem.point(&w, b))
    }

    fn model(
        &self,
        problem: &L1SvmProblem,
        x: &[f64],
        scaler: MinMaxScaler,
        classes: Vec<String>,
        encoding: Encoding,
    ) -> L1SvmModel {
        let weights = (0..problem.p())
            .map(|j| x[problem.u(j)] - x[problem.v(j)])
            .map(|w| {
                if w.abs() <= metrics::SPARSITY_TOLERANCE {
                    0.0
                } else {
                    w
                }
            })
            .collect();
        L1SvmModel {
            weights,
            bias: x[problem.b()],
            scaler,
            classes,
            encoding,
        }
    }

    fn load_model(&self, path: &Path) -> Result<L1SvmModel> {
        L1SvmModel::load(path)
    }

    /// C is reported as lambda_local.
    fn reported_params(&self, _problem: &L1SvmProblem) -> ReportedParams {
        ReportedParams {
            lambda_local: Some(self.c),
            ..ReportedParams::default()
        }
    }

    fn sparsity(&self, model: &L1SvmModel) -> (f64, f64) {
        let w = DMatrix::from_column_slice(model.weights.len(), 1, &model.weights);
        let delta = metrics::delta_local(&w, metrics::SPARSITY_TOLERANCE);
        (delta, delta)
    }
}

/// A fitted 1-norm SVM: predicts the second class where w . x_scaled + b > 0.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct L1SvmModel {
    /// w, one weight per encoded feature, on features scaled by `scaler`.
    pub weights: Vec<f64>,
    /// b.
    pub bias: f64,
    /// The training split's scaling.
    pub scaler: MinMaxScaler,
    /// The two class labels (the first is y = -1).
    pub classes: Vec<String>,
    /// The encoding of the table's columns.
    pub encoding: Encoding,
}

impl L1SvmModel {
    /// Saves the model as JSON, tagged `l1svm`.
    pub fn save(&self, path: &Path) -> Result<()> {
        glassbox::model::save_json(path, NAME, self)
    }

    /// Loads a model saved by [`L1SvmModel::save`] (or a run).
    pub fn load(path: &Path) -> Result<Self> {
        glassbox::model::load_json(path, NAME)
    }

    /// The hyperplane in the user's units: weights w_j / scale_j and the bias that goes
    /// with them.
    pub fn user_units(&self) -> (Vec<f64>, f64) {
        let w: Vec<f64> = (0..self.weights.len())
            .map(|j| self.weights[j] / self.scaler.scale_of(j))
            .collect();
        let b = self.bias - (0..w.len()).map(|j| w[j] * self.scaler.min[j]).sum::<f64>();
        (w, b)
    }

    /// w . x + b per row of scaled features.
    fn scores(&self, x: &DMatrix<f64>) -> Vec<f64> {
        let z = self.scaler.transform(x);
        (0..z.nrows())
            .map(|i| {
                self.bias
                    + (0..z.ncols())
                        .map(|j| z[(i, j)] * self.weights[j])
                        .sum::<f64>()
            })
            .collect()
    }
}

impl CheckedModel for L1SvmModel {
    fn check(&self, _kind: &str) -> std::result::Result<(), String> {
        let p = self.encoding.n_features();
        if self.weights.len() != p {
            return Err(format!(
                "weights has {} values but the encoding gives {p} features",
                self.weights.len()
            ));
        }
        if self.classes.len() != 2 {
            return Err(format!(
                "classes has {} labels, expected 2",
                self.classes.len()
            ));
        }
        if !self.bias.is_finite() || self.weights.iter().any(|w| !w.is_finite()) {
            return Err("a weight or the bias is not a finite number".into());
        }
        self.scaler.check_against(&self.encoding)
    }
}

impl Classifier for L1SvmModel {
    fn classes(&self) -> &[String] {
        &self.classes
    }

    fn encoding(&self) -> &Encoding {
        &self.encoding
    }

    /// The hyperplane in the user's units, its nonzero terms only.
    fn describe(&self) -> String {
        let (w, b) = self.user_units();
        let names = self.encoding.feature_names();
        let mut text = format!(
            "1-norm SVM: predicts '{}' where\n  {b:+.6}",
            self.classes[1]
        );
        let mut used = 0;
        for (j, &wj) in w.iter().enumerate() {
            if self.weights[j] != 0.0 {
                used += 1;
                let _ = write!(text, " {wj:+.6} * {}", names[j]);
            }
        }
        let _ = write!(
            text,
            " > 0\nand '{}' elsewhere; {used} of {} features used\n",
            self.classes[0],
            w.len()
        );
        text
    }

    /// One-hot: the side of the hyperplane (0 goes to the first class).
    fn predict_proba(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        let scores = self.scores(x);
        DMatrix::from_fn(scores.len(), 2, |i, k| {
            let second = scores[i] > 0.0;
            if (k == 1) == second {
                1.0
            } else {
                0.0
            }
        })
    }
}

glassbox::fitted_model!(L1SvmModel, classifier);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::microlp_backend::MicrolpSolver;
    use glassbox::{MilpSolver, SolveOptions, TerminationStatus};

    fn solve(
        config: &L1SvmConfig,
        x: DMatrix<f64>,
        y: Vec<usize>,
    ) -> (L1SvmProblem, Vec<f64>, f64) {
        let problem = config.problem(Arc::new(x), Arc::new(y), 2).unwrap();
        let result = MicrolpSolver
            .solve(&problem.milp, &SolveOptions::default())
            .unwrap();
        assert_eq!(
            result.status,
            TerminationStatus::Optimal,
            "{}",
            result.raw_status
        );
        let objective = result.objective.unwrap();
        (problem, result.primal, objective)
    }

    /// Two points x = 0 (first class) and x = 1 (second): with C = 2 the margin costs
    /// |w| = 2 (w = 2, b = -1, no loss) against 4 for w = 0 (losses xi_1 + xi_2 >= 2).
    #[test]
    fn two_points_are_separated_at_the_known_optimum() {
        let config = L1SvmConfig {
            c: 2.0,
            ..L1SvmConfig::default()
        };
        let x = DMatrix::from_row_slice(2, 1, &[0.0, 1.0]);
        let (problem, point, objective) = solve(&config, x, vec![0, 1]);
        assert!((objective - 2.0).abs() < 1e-6, "{objective}");
        let w = point[problem.u(0)] - point[problem.v(0)];
        let b = point[problem.b()];
        assert!(
            (w - 2.0).abs() < 1e-6 && (b + 1.0).abs() < 1e-6,
            "w {w}, b {b}"
        );
    }

    /// A feature that carries no information gets no weight, and max_features = 1 keeps
    /// the informative one of two.
    #[test]
    fn the_l1_norm_and_the_limit_drop_useless_features() {
        // Column 0 separates the classes; column 1 is the same for both.
        let rows = [[0.0, 0.3], [0.2, 0.7], [0.8, 0.3], [1.0, 0.7]];
        let x = DMatrix::from_fn(4, 2, |i, j| rows[i][j]);
        for max_features in [0, 1] {
            let config = L1SvmConfig {
                c: 10.0,
                max_features,
                ..L1SvmConfig::default()
            };
            let (problem, point, _) = solve(&config, x.clone(), vec![0, 0, 1, 1]);
            let w1 = point[problem.u(1)] - point[problem.v(1)];
            assert!(w1.abs() < 1e-6, "max_features {max_features}: w_1 = {w1}");
        }
    }

    #[test]
    fn bad_parameters_and_data_are_named() {
        let x = Arc::new(DMatrix::from_row_slice(2, 1, &[0.0, 1.0]));
        let y = Arc::new(vec![0, 1]);
        let config = L1SvmConfig {
            c: -1.0,
            ..L1SvmConfig::default()
        };
        let err = config.problem(x.clone(), y.clone(), 2).err().unwrap();
        assert!(err.to_string().contains("c must be"), "{err}");
        let err = L1SvmConfig::default().check(1, 3).unwrap_err();
        assert!(err.to_string().contains("two classes"), "{err}");
    }
}
