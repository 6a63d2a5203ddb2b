//! S-ORRT: Sparse Optimal Randomized Regression Trees (Blanquero, Carrizosa, Molero-Río,
//! Romero Morales, EJOR 2022; `shared/papers/002_fb39fdf1f4a8d520.txt`): oblique randomized
//! splits at the branch nodes, linear predictions at the leaves, MSE plus l1 (local) and
//! l-infinity (global) penalties over branch and leaf coefficients.
//!
//! - [`SorrtConfig`]: the parameters as a config writes them (absolute lambdas, the paper's
//!   grid `2^r / (p (|tau_B| + |tau_L|))` and `2^r / p`, or fractions of the Proposition 2
//!   bounds), with the cost-sensitivity and fairness constraints of Section 2.4 on groups
//!   named by a raw column and a condition ([`GroupSpec`]).
//! - [`SorrtProblem`]: the smooth NLP (3)-(5) and the constraints, exact gradient and
//!   Hessian.
//! - [`starts`]: data-aware starting points.
//! - [`SorrtModel`]: the fitted tree: prediction (2), sparsity, rules and leaf models in the
//!   user's units, local explanations (7), JSON.
//! - [`explain`]: explanations as CSV and the parallel-coordinates plot of the paper's Fig. 2.
//! - [`lambda_bounds`]: the bounds of Proposition 2.
//!
//! Config syntax of the constraints (groups are computed on the raw values of the training
//! rows; quantiles interpolate linearly between order statistics, as numpy's default):
//!
//! ```toml
//! [[formulation.cost_sensitive]]        # MSE(J) <= rho, one table per group J
//! group = { column = "x4", equals = 1 }
//! rho = 20.0
//!
//! [formulation.fairness]                # sensitive group S against the training sample I
//! group = { column = "x12", above_quantile = 0.75 }
//! mean_prediction_gap = 0.6             # (6): |mean phi(S) - mean phi(I)| <= C
//! mse_gap = 5.0                         # |MSE(S) - MSE(I)| <= C
//! ```
//!
//! A group condition is exactly one of `above_quantile = q` (value > the q-quantile),
//! `below_quantile = q` (value < the q-quantile), `above = v` (value > v), `below = v`
//! (value < v), or `equals = v` (a number for a numeric column, a level for a categorical
//! one).
//!
//! # Leaf bounds (our choice)
//!
//! The paper bounds a_B and mu_B by [-1, 1] and leaves the leaf coefficients free. Solved
//! to convergence at lambda = 0 (IPOPT; the paper's SLSQP stops at 100 iterations), free
//! leaves overfit catastrophically: with gamma = 512 a leaf still receives weights P_il of
//! 1e-6 from rows routed elsewhere, and it can fit their residuals with coefficients in the
//! thousands (and features constant on its own rows, such as a dummy, leave flat directions
//! IPOPT drifts along), so test rows in that leaf get predictions in the thousands: Boston
//! D=2 gave test R squared from 0.85 down to -8.7e6 across starts. We therefore bound the
//! leaves, in scaled units, by `|a_jl| <= leaf_bound * (max y - min y)` (a feature moving
//! across its whole training range may move the leaf's prediction by the whole target
//! range) and `|mu_l| <= max |y| + p * that`; `leaf_bound = 1` by default, 0 frees them as
//! the paper writes them. Reasonable leaf models never reach the bound (Boston's OLS
//! coefficients in scaled units are at most about 0.45 of the target range).
//!
//! # Leaf ridge, clipped predictions, cross-validated choice (defaults, not in the paper)
//!
//! After each start's solve the leaves are refitted with the splits held, by least squares
//! with `leaf_ridge` times the squared leaf slopes added (`ridge`): the leaves of the
//! converged NLP overfit, and the ridge weight 1e-3 raised the mean test R^2 on Boston and
//! red wine at depths 2 and 3 (with clipping on, it lowered Boston D=1 from 0.799 to
//! 0.769: benches/README, "S-ORRT Table 4"). The fitted tree
//! clips its predictions to the training targets' range (`clip_predictions`). After the
//! multistart, `selection_folds`-fold cross-validation chooses between the best objective's
//! tree and the CART start kept as it is (leaves refitted), as S-ORCT's choice does
//! (the experiment engine's `regression_selection`). `leaf_ridge = 0`,
//! `clip_predictions = false`, `selection_folds = 0` give the paper's problem, prediction
//! and protocol.
//!
//! # Leaf size (optional, not in the paper)
//!
//! `min_leaf_fraction = f` adds, per leaf, the smooth constraint `sum_i P_il >= f N` (an
//! expected minimum leaf size, as CART's `min_samples_leaf`); off by default.
//!
//! # Proposition 2 in practice
//!
//! [`lambda_bounds`] gives the lambdas above which the sparsest tree is stationary (tested
//! exactly by [`SorrtProblem::sparsest_tree_is_stationary`]). It is a saddle, not a
//! minimum: the leaf intercepts can spread at no cost while a = 0, and then a branch
//! coefficient of size e makes a split as sharp as gamma e / p allows, buying a first-order
//! drop in the MSE for a penalty linear in e. Solvers started away from it therefore return
//! sparse but not empty trees even several times above the bounds; use the bounds to scale a
//! lambda grid (`lambda_local_fraction`, `lambda_global_fraction`).
//!
//! Depends on the core (`nlp`, `tree`, `data`, `metrics`, `model`, `formulation`), never on
//! a backend.

pub mod explain;
mod fused;
mod model;
mod problem;
mod ridge;
pub mod starts;
#[cfg(feature = "torch")]
mod tensor;

pub use model::{sorrt_diagram, SorrtModel};
pub use problem::SorrtProblem;

use glassbox_core::data::{ColumnData, Encoding, MinMaxScaler, Table};
use glassbox_core::formulation::{
    FormulationInfo, NlpRegressorFormulation, ParamSpec, ReportedParams, TrainingRows,
};
use glassbox_core::nlp::NlpProblem;
use glassbox_core::starts::{GreedyStart, StartContext};
use glassbox_core::{GlassboxError, NlpSolver, Result, SolveOptions, SolveResult};
use nalgebra::DMatrix;
use problem::SmoothRow;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The name configs use.
pub const NAME: &str = "sorrt";

/// The default of [`SorrtConfig::leaf_bound`].
pub const DEFAULT_LEAF_BOUND: f64 = 1.0;

/// The default of [`SorrtConfig::min_leaf_fraction`].
pub const DEFAULT_MIN_LEAF_FRACTION: f64 = 0.0;

/// The default of [`SorrtConfig::leaf_ridge`] (benches/README, "S-ORRT Table 4").
pub const DEFAULT_LEAF_RIDGE: f64 = 1e-3;

/// The default of [`SorrtConfig::selection_folds`].
pub const DEFAULT_SELECTION_FOLDS: usize = 5;

/// How far a greedy tree kept as it is may be outside a user's constraint and still be
/// kept by the cross-validated choice (the feasibility the solves are held to).
const KEPT_TREE_TOLERANCE: f64 = 1e-6;

/// The parameters of S-ORRT as written in the `[formulation]` table of a config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SorrtConfig {
    /// Depth D of the tree.
    pub depth: usize,
    /// Slope gamma of the logistic CDF F(z) = 1 / (1 + exp(-gamma z)).
    pub gamma: f64,
    /// lambda_L, absolute.
    pub lambda_local: f64,
    /// lambda_G, absolute.
    pub lambda_global: f64,
    /// lambda_L on the paper's grid: `2^r / (p (|tau_B| + |tau_L|))` with r this value
    /// (overrides `lambda_local`).
    pub lambda_local_log2: Option<f64>,
    /// lambda_G on the paper's grid: `2^r / p` with r this value (overrides
    /// `lambda_global`).
    pub lambda_global_log2: Option<f64>,
    /// lambda_L as a fraction of the Proposition 2 bound on the training rows (overrides
    /// the other two).
    pub lambda_local_fraction: Option<f64>,
    /// lambda_G as a fraction of the Proposition 2 bound on the training rows.
    pub lambda_global_fraction: Option<f64>,
    /// Cost-sensitivity constraints MSE(J_j) <= rho_j.
    pub cost_sensitive: Vec<CostSensitive>,
    /// Fairness constraints on a sensitive group.
    pub fairness: Option<Fairness>,
    /// The smallest share of the training rows each leaf must receive in expectation,
    /// `sum_i P_il >= min_leaf_fraction * N` (0 switches it off). Not in the paper: see
    /// the module comment, "Leaf size".
    pub min_leaf_fraction: f64,
    /// The leaf coefficients are bounded, |a_jl| <= this * (max y - min y) in scaled units,
    /// and the intercepts |mu_l| <= max |y| + p times that (0 or less: unbounded, as the
    /// paper writes the leaves). See the module comment, "Leaf bounds".
    pub leaf_bound: f64,
    /// After each start's solve, the leaves are refitted with the splits held, by least
    /// squares plus this weight times the squared leaf slopes (scaled units); 0 switches it
    /// off (the paper). Not in the paper: see the module comment, "Leaf ridge, clipped
    /// predictions, cross-validated choice".
    pub leaf_ridge: f64,
    /// Whether the fitted tree clips its predictions to the range of the training targets
    /// (as a tree with constant leaves never leaves it); false: the paper's prediction (2).
    /// Not in the paper: see the module comment, "Leaf ridge, clipped predictions,
    /// cross-validated choice".
    pub clip_predictions: bool,
    /// k >= 2: after a split's multistart, k-fold cross-validation on the training rows
    /// chooses between the best objective's tree and the CART start kept as it is (its
    /// leaves refitted); the CART tree is returned unless the optimized one's held-out
    /// squared errors are lower by more than one standard error. 0: the best objective (the
    /// paper). Not in the paper: see the module comment, "Leaf ridge, clipped predictions,
    /// cross-validated choice".
    pub selection_folds: usize,
    /// How random starts are drawn: "data" (default) or "uniform".
    pub initialization: starts::Initialization,
    /// The (encoded) features the random starts' split directions use: the branch
    /// coefficients of the others start at 0 (they are still free in the solve). Empty
    /// (the default): all of them. The paper's Section 4.4 starts from a multistart in
    /// which only the features of high random-forest importance play a role; this is that
    /// first step's starting points (see `starts`).
    pub start_features: Vec<String>,
    /// Whether the CART regression tree of the same depth is one of the starts (its splits,
    /// least-squares leaves; see `starts::cart_start`). The paper's protocol has random
    /// starts only.
    pub cart_start: bool,
}

impl Default for SorrtConfig {
    fn default() -> Self {
        SorrtConfig {
            depth: 2,
            gamma: 512.0,
            lambda_local: 0.0,
            lambda_global: 0.0,
            lambda_local_log2: None,
            lambda_global_log2: None,
            lambda_local_fraction: None,
            lambda_global_fraction: None,
            cost_sensitive: Vec::new(),
            fairness: None,
            min_leaf_fraction: DEFAULT_MIN_LEAF_FRACTION,
            leaf_bound: DEFAULT_LEAF_BOUND,
            leaf_ridge: DEFAULT_LEAF_RIDGE,
            clip_predictions: true,
            selection_folds: DEFAULT_SELECTION_FOLDS,
            initialization: starts::Initialization::Data,
            start_features: Vec::new(),
            cart_start: true,
        }
    }
}

/// A group of individuals named by a raw column and one condition (see the module comment).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    /// The raw column (as in the CSV header).
    pub column: String,
    /// Value > the q-quantile of the training rows.
    pub above_quantile: Option<f64>,
    /// Value < the q-quantile of the training rows.
    pub below_quantile: Option<f64>,
    /// Value > this.
    pub above: Option<f64>,
    /// Value < this.
    pub below: Option<f64>,
    /// Value equal to this (number or level).
    pub equals: Option<Level>,
}

/// A value to compare a cell with: a number or a categorical level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Level {
    /// A number.
    Number(f64),
    /// A level (text).
    Text(String),
}

/// One cost-sensitivity constraint MSE(J) <= rho.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostSensitive {
    /// The group J.
    pub group: GroupSpec,
    /// The threshold rho (in squared target units).
    pub rho: f64,
}

/// The fairness constraints of Section 2.4 on a sensitive group S (against the whole
/// training sample I, as the paper writes them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fairness {
    /// The sensitive group S.
    pub group: GroupSpec,
    /// C of (6): |mean prediction(S) - mean prediction(I)| <= C.
    pub mean_prediction_gap: Option<f64>,
    /// C of |MSE(S) - MSE(I)| <= C.
    pub mse_gap: Option<f64>,
}

/// Parameters resolved for one training set (absolute lambdas).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SorrtParams {
    /// Depth D.
    pub depth: usize,
    /// gamma.
    pub gamma: f64,
    /// lambda_L.
    pub lambda_local: f64,
    /// lambda_G.
    pub lambda_global: f64,
    /// The Proposition 2 bounds on these training rows.
    pub bounds: LambdaBounds,
    /// Bounds on the leaf coefficients and intercepts (infinite when off).
    pub leaf_bounds: (f64, f64),
    /// Whether the fitted model clips its predictions to the training targets' range.
    pub clip_predictions: bool,
}

impl SorrtParams {
    /// Whether a sparsity penalty is on (lambda_L or lambda_G positive).
    pub fn penalized(&self) -> bool {
        self.lambda_local > 0.0 || self.lambda_global > 0.0
    }
}

/// The description `glassbox formulations` prints.
pub fn info() -> FormulationInfo {
    const PARAMS: &[ParamSpec] = &[
        ParamSpec {
            name: "depth",
            default: "2",
            help: "depth D of the tree (1 to 6)",
        },
        ParamSpec {
            name: "gamma",
            default: "512",
            help: "slope of the logistic CDF F at the branch nodes",
        },
        ParamSpec {
            name: "lambda_local",
            default: "0",
            help: "lambda_L, l1 (local sparsity) penalty over branch and leaf coefficients",
        },
        ParamSpec {
            name: "lambda_global",
            default: "0",
            help: "lambda_G, l-infinity (global sparsity) penalty, absolute",
        },
        ParamSpec {
            name: "lambda_local_log2",
            default: "",
            help: "r: lambda_L = 2^r / (p (|tau_B|+|tau_L|)), the paper's grid",
        },
        ParamSpec {
            name: "lambda_global_log2",
            default: "",
            help: "r: lambda_G = 2^r / p, the paper's grid",
        },
        ParamSpec {
            name: "lambda_local_fraction",
            default: "",
            help: "lambda_L as a fraction of the Proposition 2 bound (overrides the others)",
        },
        ParamSpec {
            name: "lambda_global_fraction",
            default: "",
            help: "lambda_G as a fraction of the Proposition 2 bound (overrides the others)",
        },
        ParamSpec {
            name: "cost_sensitive",
            default: "[] (off)",
            help: "[[formulation.cost_sensitive]] group = {column, condition}, rho: MSE(J) <= rho",
        },
        ParamSpec {
            name: "fairness",
            default: "off",
            help: "[formulation.fairness] group, mean_prediction_gap (6) and/or mse_gap: C",
        },
        ParamSpec {
            name: "leaf_bound",
            default: "1",
            help: "|a_L| <= this * range(y) (scaled units), |mu_L| <= max|y| + p * that; 0: free",
        },
        ParamSpec {
            name: "leaf_ridge",
            default: "0.001",
            help: "after each solve, refit the leaves (splits held) with this ridge weight on their slopes; 0: off (the paper)",
        },
        ParamSpec {
            name: "clip_predictions",
            default: "true",
            help: "clip predictions to the training targets' range (false: the paper's prediction)",
        },
        ParamSpec {
            name: "selection_folds",
            default: "5",
            help: "k-fold choice between the optimized tree and the CART start kept (leaves refitted); 0: best objective (the paper)",
        },
        ParamSpec {
            name: "min_leaf_fraction",
            default: "0 (off)",
            help: "each leaf's expected share of training rows sum_i P_il / N at least this",
        },
        ParamSpec {
            name: "start_features",
            default: "[] (all)",
            help: "features the random starts' split directions use (the others start at 0)",
        },
        ParamSpec {
            name: "cart_start",
            default: "true",
            help: "also start from the CART regression tree of the same depth (false: random starts only, the paper)",
        },
        ParamSpec {
            name: "initialization",
            default: "\"data\"",
            help: "random starts: \"data\" (splits through the points, least-squares leaves) or \"uniform\"",
        },
    ];
    FormulationInfo {
        name: NAME,
        kind: "nlp",
        description: "Sparse Optimal Randomized Regression Tree (Blanquero et al. 2022), smooth NLP (3)-(5) with cost-sensitivity and fairness constraints",
        parameters: PARAMS,
    }
}

fn err<T>(m: impl Into<String>) -> Result<T> {
    Err(GlassboxError::formulation(NAME, m))
}

impl SorrtConfig {
    /// Checks what does not depend on the data.
    pub fn check_params(&self) -> Result<()> {
        if !(1..=6).contains(&self.depth) {
            return err(format!("depth must be between 1 and 6, got {}", self.depth));
        }
        if !(self.gamma.is_finite() && self.gamma > 0.0) {
            return err(format!("gamma must be positive, got {}", self.gamma));
        }
        let leaves = (1usize << self.depth) as f64;
        if !(self.min_leaf_fraction >= 0.0 && self.min_leaf_fraction * leaves < 1.0) {
            return err(format!(
                "min_leaf_fraction must be in [0, 1 / 2^D) = [0, {}) so that every leaf can \
                 hold that share, got {}",
                1.0 / leaves,
                self.min_leaf_fraction
            ));
        }
        if self.selection_folds == 1 {
            return err("selection_folds must be 0 (no selection) or at least 2, got 1");
        }
        if !(self.leaf_ridge.is_finite() && self.leaf_ridge >= 0.0) {
            return err(format!(
                "leaf_ridge must be a finite number >= 0, got {}",
                self.leaf_ridge
            ));
        }
        for (name, v) in [
            ("lambda_local", Some(self.lambda_local)),
            ("lambda_global", Some(self.lambda_global)),
            ("lambda_local_fraction", self.lambda_local_fraction),
            ("lambda_global_fraction", self.lambda_global_fraction),
        ] {
            if let Some(v) = v {
                if !(v.is_finite() && v >= 0.0) {
                    return err(format!("{name} must be a finite number >= 0, got {v}"));
                }
            }
        }
        for c in &self.cost_sensitive {
            if !(c.rho.is_finite() && c.rho > 0.0) {
                return err(format!(
                    "cost_sensitive rho must be positive (an MSE), got {}",
                    c.rho
                ));
            }
        }
        if let Some(f) = &self.fairness {
            if f.mean_prediction_gap.is_none() && f.mse_gap.is_none() {
                return err(
                    "[formulation.fairness] needs mean_prediction_gap = C and/or mse_gap = C",
                );
            }
            for (name, v) in [
                ("mean_prediction_gap", f.mean_prediction_gap),
                ("mse_gap", f.mse_gap),
            ] {
                if let Some(v) = v {
                    if !(v.is_finite() && v >= 0.0) {
                        return err(format!(
                            "fairness {name} must be a finite number >= 0, got {v}"
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Resolves the lambdas for scaled training features `x` and targets `y`.
    pub fn resolve(&self, x: &DMatrix<f64>, y: &[f64]) -> Result<SorrtParams> {
        self.check_params()?;
        let p = x.ncols();
        let nodes = (1usize << (self.depth + 1)) - 1;
        let bounds = lambda_bounds(x, y, self.depth);
        let lambda_local = match (self.lambda_local_fraction, self.lambda_local_log2) {
            (Some(f), _) => f * bounds.local,
            (None, Some(r)) => 2f64.powf(r) / (p * nodes) as f64,
            (None, None) => self.lambda_local,
        };
        let lambda_global = match (self.lambda_global_fraction, self.lambda_global_log2) {
            (Some(f), _) => f * bounds.global,
            (None, Some(r)) => 2f64.powf(r) / p as f64,
            (None, None) => self.lambda_global,
        };
        for (name, v) in [
            ("lambda_local", lambda_local),
            ("lambda_global", lambda_global),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return err(format!("{name} must be a finite number >= 0, got {v}"));
            }
        }
        let leaf_bounds = if self.leaf_bound > 0.0 && self.leaf_bound.is_finite() {
            let (lo, hi) = problem::target_range(y);
            let coef = self.leaf_bound * (hi - lo).max(1e-9);
            let top = lo.abs().max(hi.abs());
            (coef, top + p as f64 * coef)
        } else {
            (f64::INFINITY, f64::INFINITY)
        };
        Ok(SorrtParams {
            depth: self.depth,
            gamma: self.gamma,
            lambda_local,
            lambda_global,
            bounds,
            leaf_bounds,
            clip_predictions: self.clip_predictions,
        })
    }

    /// Builds the NLP on scaled training features `x` (N x p) and targets `y`; `train`
    /// gives the raw rows the groups of the constraints are computed on.
    pub fn problem(
        &self,
        x: Arc<DMatrix<f64>>,
        y: Arc<Vec<f64>>,
        train: TrainingRows<'_>,
    ) -> Result<SorrtProblem> {
        let n = x.nrows();
        if n != y.len() || n == 0 || train.rows.len() != n {
            return err(format!(
                "{} rows of features, {} targets and {} raw rows: they must agree and not be empty",
                n,
                y.len(),
                train.rows.len()
            ));
        }
        if let Some(v) = y.iter().find(|v| !v.is_finite()) {
            return err(format!("the targets must be finite numbers, got {v}"));
        }
        let params = self.resolve(&x, &y)?;
        let rows = self.constraint_rows(train, n)?;
        let min_leaf = (self.min_leaf_fraction > 0.0).then_some(self.min_leaf_fraction * n as f64);
        let start_features = self.start_feature_indices(train.table, x.ncols())?;
        let mut problem = SorrtProblem::new(x, y, params, rows, min_leaf);
        problem.start_features = start_features;
        Ok(problem)
    }

    /// The positions of `start_features` among the encoded features of `table` (`None`:
    /// all features).
    fn start_feature_indices(&self, table: &Table, p: usize) -> Result<Option<Vec<usize>>> {
        if self.start_features.is_empty() {
            return Ok(None);
        }
        let names = glassbox_core::data::Encoding::fit(table).feature_names();
        if names.len() != p {
            return err(format!(
                "start_features: the table has {} encoded features, the problem {p}",
                names.len()
            ));
        }
        self.start_features
            .iter()
            .map(|f| {
                names.iter().position(|n| n == f).ok_or_else(|| {
                    GlassboxError::formulation(
                        NAME,
                        format!(
                            "start_features: '{f}' is not a feature (features: {})",
                            names.join(", ")
                        ),
                    )
                })
            })
            .collect::<Result<Vec<usize>>>()
            .map(Some)
    }

    /// The smooth constraint rows of Section 2.4 for these training rows.
    fn constraint_rows(&self, train: TrainingRows<'_>, n: usize) -> Result<Vec<SmoothRow>> {
        let mut rows = Vec::new();
        for (k, c) in self.cost_sensitive.iter().enumerate() {
            let (members, label) = c.group.members(train)?;
            let mut quad = vec![0.0; n];
            for &i in &members {
                quad[i] = 1.0 / members.len() as f64;
            }
            rows.push(SmoothRow {
                label: format!("MSE(J_{} = {label}) <= {}", k + 1, c.rho),
                quad,
                lin: vec![0.0; n],
                lower: f64::NEG_INFINITY,
                upper: c.rho,
            });
        }
        if let Some(f) = &self.fairness {
            let (members, label) = f.group.members(train)?;
            let mut weights = vec![-1.0 / n as f64; n];
            for &i in &members {
                weights[i] += 1.0 / members.len() as f64;
            }
            if let Some(c) = f.mse_gap {
                rows.push(SmoothRow {
                    label: format!("|MSE(S = {label}) - MSE(I)| <= {c}"),
                    quad: weights.clone(),
                    lin: vec![0.0; n],
                    lower: -c,
                    upper: c,
                });
            }
            if let Some(c) = f.mean_prediction_gap {
                rows.push(SmoothRow {
                    label: format!("|mean phi(S = {label}) - mean phi(I)| <= {c}"),
                    quad: vec![0.0; n],
                    lin: weights,
                    lower: -c,
                    upper: c,
                });
            }
        }
        Ok(rows)
    }

    /// Every group the constraints name, checked against a table (columns exist, conditions
    /// fit the column's type, exactly one condition each).
    fn check_groups(&self, table: &Table) -> Result<()> {
        let rows: Vec<usize> = (0..table.n_rows()).collect();
        let train = TrainingRows { table, rows: &rows };
        for c in &self.cost_sensitive {
            c.group.members(train)?;
        }
        if let Some(f) = &self.fairness {
            f.group.members(train)?;
        }
        Ok(())
    }
}

impl GroupSpec {
    /// The positions (into `train.rows`) of the training rows in this group, with a label
    /// that says what the group is (thresholds resolved).
    pub fn members(&self, train: TrainingRows<'_>) -> Result<(Vec<usize>, String)> {
        let table = train.table;
        let Some(j) = table.feature_names.iter().position(|f| *f == self.column) else {
            return err(format!(
                "group column '{}' is not a feature column of {} (columns: {})",
                self.column,
                table.source,
                table.feature_names.join(", ")
            ));
        };
        let given = [
            self.above_quantile.is_some(),
            self.below_quantile.is_some(),
            self.above.is_some(),
            self.below.is_some(),
            self.equals.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count();
        if given != 1 {
            return err(format!(
                "the group on '{}' needs exactly one condition: above_quantile, below_quantile, \
                 above, below or equals (got {given})",
                self.column
            ));
        }
        let col = &self.column;
        let (members, label): (Vec<usize>, String) = match &table.columns[j] {
            ColumnData::Numeric(values) => {
                let vals: Vec<f64> = train.rows.iter().map(|&r| values[r]).collect();
                for q in [self.above_quantile, self.below_quantile]
                    .into_iter()
                    .flatten()
                {
                    if !(0.0..=1.0).contains(&q) {
                        return err(format!("a quantile must be in [0, 1], got {q}"));
                    }
                }
                let pick = |f: &dyn Fn(f64) -> bool| -> Vec<usize> {
                    (0..vals.len()).filter(|&i| f(vals[i])).collect()
                };
                if let Some(q) = self.above_quantile {
                    let th = quantile(&vals, q);
                    (pick(&|v| v > th), format!("{col} > q{q} ({th:.4})"))
                } else if let Some(q) = self.below_quantile {
                    let th = quantile(&vals, q);
                    (pick(&|v| v < th), format!("{col} < q{q} ({th:.4})"))
                } else if let Some(th) = self.above {
                    (pick(&|v| v > th), format!("{col} > {th}"))
                } else if let Some(th) = self.below {
                    (pick(&|v| v < th), format!("{col} < {th}"))
                } else {
                    let target = match &self.equals {
                        Some(Level::Number(v)) => *v,
                        Some(Level::Text(s)) => match s.trim().parse::<f64>() {
                            Ok(v) => v,
                            Err(_) => {
                                return err(format!(
                                    "column '{col}' is numeric; equals = \"{s}\" is not a number"
                                ))
                            }
                        },
                        None => unreachable!("one condition is given"),
                    };
                    (pick(&|v| v == target), format!("{col} = {target}"))
                }
            }
            ColumnData::Categorical(values) => {
                let level = match &self.equals {
                    Some(Level::Text(s)) => s.clone(),
                    Some(Level::Number(v)) => format!("{v}"),
                    None => {
                        return err(format!(
                            "column '{col}' is categorical: its group needs equals = \"level\""
                        ))
                    }
                };
                let m = (0..train.rows.len())
                    .filter(|&i| values[train.rows[i]] == level)
                    .collect();
                (m, format!("{col} = {level}"))
            }
        };
        if members.is_empty() {
            return err(format!(
                "the group {label} has no training rows; choose another condition"
            ));
        }
        Ok((members, label))
    }
}

/// The q-quantile of `values` by linear interpolation between order statistics (numpy's
/// default).
pub fn quantile(values: &[f64], q: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return f64::NAN;
    }
    let h = (v.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(v.len() - 1);
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
}

impl NlpRegressorFormulation for SorrtConfig {
    type Problem = SorrtProblem;
    type Model = SorrtModel;

    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, table: &Table, features: usize) -> Result<()> {
        crate::heuristic::check_features(NAME, features)?;
        self.check_params()?;
        self.check_groups(table)
    }

    fn problem(
        &self,
        x: Arc<DMatrix<f64>>,
        y: Arc<Vec<f64>>,
        train: TrainingRows<'_>,
    ) -> Result<SorrtProblem> {
        SorrtConfig::problem(self, x, y, train)
    }

    fn random_start(&self, problem: &SorrtProblem, rng: &mut ChaCha8Rng) -> Vec<f64> {
        starts::random_start(problem, self.initialization, rng)
    }

    fn greedy_start_count(&self) -> usize {
        usize::from(self.cart_start)
    }

    fn selection_folds(&self) -> usize {
        self.selection_folds
    }

    fn greedy_kept(&self, problem: &SorrtProblem, point: &[f64]) -> Vec<f64> {
        ridge::refit_leaves(problem, point, self.leaf_ridge).unwrap_or_else(|| point.to_vec())
    }

    fn meets_constraints(&self, problem: &SorrtProblem, point: &[f64]) -> bool {
        problem.meets_user_constraints(point, KEPT_TREE_TOLERANCE)
    }

    fn greedy_starts(&self, problem: &SorrtProblem) -> Vec<GreedyStart> {
        match self.cart_start {
            true => vec![GreedyStart {
                origin: "cart",
                point: starts::cart_start(problem),
            }],
            false => Vec::new(),
        }
    }

    fn solve_start(
        &self,
        problem: &SorrtProblem,
        solver: &dyn NlpSolver,
        options: &SolveOptions,
        _start: StartContext,
    ) -> Result<SolveResult> {
        let mut result = solver.solve(problem, options)?;
        if !result.status.has_solution() {
            return Ok(result);
        }
        if let Some(point) = ridge::refit_leaves(problem, &result.primal, self.leaf_ridge) {
            result.objective = Some(problem.objective(&point));
            result.primal = point;
            result.raw_status = format!(
                "{}; leaves refitted with ridge {}",
                result.raw_status, self.leaf_ridge
            );
            // The multipliers belong to the solve's point, not to the refitted one.
            result.clear_multipliers();
        }
        Ok(result)
    }

    fn model(
        &self,
        problem: &SorrtProblem,
        x: &[f64],
        scaler: MinMaxScaler,
        target: String,
        encoding: Encoding,
    ) -> SorrtModel {
        SorrtModel::from_solution(problem, x, scaler, target, encoding)
    }

    fn warm_start(
        &self,
        model: &SorrtModel,
        problem: &SorrtProblem,
        scaler: &MinMaxScaler,
    ) -> Result<Vec<f64>> {
        model.start_point(problem, scaler)
    }

    fn load_model(&self, path: &std::path::Path) -> Result<SorrtModel> {
        SorrtModel::load(path)
    }

    fn reported_params(&self, problem: &SorrtProblem) -> ReportedParams {
        ReportedParams {
            depth: Some(problem.params.depth),
            lambda_local: Some(problem.params.lambda_local),
            lambda_global: Some(problem.params.lambda_global),
            gamma: Some(problem.params.gamma),
        }
    }

    fn sparsity(&self, model: &SorrtModel) -> (f64, f64) {
        (
            model.delta_local(glassbox_core::metrics::SPARSITY_TOLERANCE),
            model.delta_global(glassbox_core::metrics::SPARSITY_TOLERANCE),
        )
    }

    fn lambda_bounds(&self, problem: &SorrtProblem) -> Option<(f64, f64)> {
        Some((problem.params.bounds.local, problem.params.bounds.global))
    }
}

/// The lambda bounds of Proposition 2 for a training set: for lambda_L >= `local`
/// (sigma = 0) or lambda_G >= `global` (sigma = 1), the sparsest tree a = 0 (with
/// mu_L = -mean(y), Corollary 1) is a stationary point of (1).
///
/// At a = 0 every row has the same leaf probabilities u_l(mu_B), every leaf predicts
/// mean(y), so the prediction's derivative in a branch score vanishes (both subtrees predict
/// the same) and only the leaf coefficients have a gradient:
/// `dMSE/da_jl = (2/N) u_l sum_i (mean(y) - y_i) x_ij`. With `S_j = sum_i (y_i - mean(y))
/// x_ij`, `||grad_{a_j.}||_1 = 2 |S_j| / N` whatever mu_B, and `||grad_{a_j.}||_inf =
/// 2 |S_j| max_l u_l / N`, smallest at mu_B = 0 where u_l = 2^-D. Hence, the smallest bounds
/// the proposition gives: `local = 2 max_j |S_j| / (N 2^D)`, `global = 2 max_j |S_j| / N`
/// (and `(1 - sigma) local, sigma global` for the mixed pairs of its statement).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LambdaBounds {
    /// Bound on lambda_L (sigma = 0), at mu_B = 0.
    pub local: f64,
    /// Bound on lambda_G (sigma = 1).
    pub global: f64,
}

/// See [`LambdaBounds`]; `x` are the scaled training features, `y` the targets.
pub fn lambda_bounds(x: &DMatrix<f64>, y: &[f64], depth: usize) -> LambdaBounds {
    let n = x.nrows();
    if n == 0 {
        return LambdaBounds::default();
    }
    let mean = y.iter().sum::<f64>() / n as f64;
    let widest = (0..x.ncols())
        .map(|j| (0..n).map(|i| (y[i] - mean) * x[(i, j)]).sum::<f64>().abs())
        .fold(0.0, f64::max);
    let global = 2.0 * widest / n as f64;
    LambdaBounds {
        local: global / (1usize << depth) as f64,
        global,
    }
}
