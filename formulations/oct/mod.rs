//! OCT and OCT-H: the optimal classification trees of Bertsimas and Dunn (2017), axis-aligned
//! and oblique, as MILPs any MILP backend (HiGHS, CBC) solves; as the thesis
//! (`shared/papers/004_31090f2e54e0166e.txt`, section 3.2) presents them. Multiclass natively
//! (a class variable per leaf).
//!
//! - [`OctConfig`], [`OcthConfig`]: the `[formulation]` tables (`name = "oct"` / `"oct_h"`).
//! - [`OctProblem`]: the MILP and how to read its points (`problem.rs`, formulation there).
//! - [`greedy`]: the MIP start, a greedy Gini tree (Bertsimas and Dunn warm-start with CART).
//! - [`OctTreeSearch`], [`OctStatement`]: axis-aligned OCT stated as an optimal-tree search
//!   problem, for tree-search backends (`dp`) (`tree_search.rs`).
//! - [`OctModel`]: the fitted tree: prediction, rules in the user's units, JSON.
//!
//! Depends on the core (`milp`, `tree`, `data`, `metrics`, `model`, `formulation`), never on
//! a backend.

pub mod greedy;
mod model;
mod problem;
pub(crate) mod tree_search;

pub use model::{oct_diagram, Leaf, OctModel};
pub(crate) use problem::route;
pub use problem::{check_scaled_data, feature_epsilons, OctParams, OctProblem, Split, SplitKind};
pub use tree_search::{OctStatement, OctTreeSearch, ThresholdColumn};

use glassbox_core::data::{Encoding, MinMaxScaler};
use glassbox_core::formulation::{
    FormulationInfo, MilpClassifierFormulation, ParamSpec, ReportedParams,
};
use glassbox_core::milp::MilpProblem;
use glassbox_core::tree_search::TreeSearchStatement;
use glassbox_core::{metrics, GlassboxError, Result};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

/// The name configs use for OCT.
pub const NAME: &str = "oct";
/// The name configs use for OCT-H.
pub const NAME_H: &str = "oct_h";

/// Bertsimas and Dunn's margin mu of OCT-H's left-branch rows.
pub const DEFAULT_MU: f64 = 0.005;

/// The MIP start a run gives the backend when no model is given as `multistart.warm_start`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StartChoice {
    /// The greedy Gini tree of [`greedy`].
    #[default]
    Greedy,
    /// The CART learner's tree (`formulations/cart`: Gini, `min_leaf` as N_min, grown to
    /// the depth, not pruned) laid into the complete tree by its BFS encoding.
    Cart,
    /// No MIP start.
    None,
}

/// OCT's `[formulation]` table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OctConfig {
    /// Depth D (1 to 4).
    pub depth: usize,
    /// Complexity penalty alpha per split (the objective is misclassifications / Lhat +
    /// alpha * splits).
    pub alpha: f64,
    /// Minimum number of training points N_min in a leaf that holds points.
    pub min_leaf: usize,
    /// The MIP start: "greedy" or "none".
    pub start: StartChoice,
}

impl Default for OctConfig {
    fn default() -> Self {
        OctConfig {
            depth: 2,
            alpha: 0.0,
            min_leaf: 1,
            start: StartChoice::Greedy,
        }
    }
}

/// OCT-H's `[formulation]` table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OcthConfig {
    /// Depth D (1 to 4).
    pub depth: usize,
    /// Penalty alpha per feature used per split (`alpha * sum_jt s_jt`).
    pub alpha: f64,
    /// Minimum number of training points N_min in a leaf that holds points.
    pub min_leaf: usize,
    /// The margin mu of the left-branch rows (scaled units).
    pub mu: f64,
    /// The MIP start: "greedy" (axis-aligned, with gaps of at least mu) or "none".
    pub start: StartChoice,
}

impl Default for OcthConfig {
    fn default() -> Self {
        OcthConfig {
            depth: 2,
            alpha: 0.0,
            min_leaf: 1,
            mu: DEFAULT_MU,
            start: StartChoice::Greedy,
        }
    }
}

/// OCT for `glassbox formulations`.
pub fn info() -> FormulationInfo {
    const PARAMS: &[ParamSpec] = &[
        ParamSpec {
            name: "depth",
            default: "2",
            help: "depth D of the tree (1 to 4)",
        },
        ParamSpec {
            name: "alpha",
            default: "0.0",
            help: "complexity penalty per split (reported as lambda_local)",
        },
        ParamSpec {
            name: "min_leaf",
            default: "1",
            help: "N_min, fewest training points in a leaf that holds any",
        },
        ParamSpec {
            name: "start",
            default: "\"greedy\"",
            help:
                "MIP start: \"greedy\" (Gini tree), \"cart\" (the CART learner's tree) or \"none\"",
        },
    ];
    FormulationInfo {
        name: NAME,
        kind: "milp",
        description:
            "OCT, axis-aligned optimal classification tree (Bertsimas and Dunn 2017) as a MILP",
        parameters: PARAMS,
    }
}

/// OCT-H for `glassbox formulations`.
pub fn info_h() -> FormulationInfo {
    const PARAMS: &[ParamSpec] = &[
        ParamSpec {
            name: "depth",
            default: "2",
            help: "depth D of the tree (1 to 4)",
        },
        ParamSpec {
            name: "alpha",
            default: "0.0",
            help: "penalty per feature used per split, alpha * sum s_jt (reported as lambda_local)",
        },
        ParamSpec {
            name: "min_leaf",
            default: "1",
            help: "N_min, fewest training points in a leaf that holds any",
        },
        ParamSpec {
            name: "mu",
            default: "0.005",
            help: "margin mu of the left-branch rows (scaled units)",
        },
        ParamSpec {
            name: "start",
            default: "\"greedy\"",
            help: "MIP start: \"greedy\" (axis-aligned Gini tree), \"cart\" (the CART learner's tree) or \"none\"",
        },
    ];
    FormulationInfo {
        name: NAME_H,
        kind: "milp",
        description:
            "OCT-H, oblique optimal classification tree (Bertsimas and Dunn 2017) as a MILP",
        parameters: PARAMS,
    }
}

/// What distinguishes the configs of OCT and OCT-H; both are runner formulations through it.
pub trait OctVariant {
    /// The formulation's name.
    fn name(&self) -> &'static str;
    /// The problem's parameters.
    fn params(&self) -> OctParams;
    /// The MIP start to make.
    fn start(&self) -> StartChoice;
}

impl OctVariant for OctConfig {
    fn name(&self) -> &'static str {
        NAME
    }
    fn params(&self) -> OctParams {
        OctParams {
            depth: self.depth,
            alpha: self.alpha,
            min_leaf: self.min_leaf,
            kind: SplitKind::Axis,
        }
    }
    fn start(&self) -> StartChoice {
        self.start
    }
}

impl OctVariant for OcthConfig {
    fn name(&self) -> &'static str {
        NAME_H
    }
    fn params(&self) -> OctParams {
        OctParams {
            depth: self.depth,
            alpha: self.alpha,
            min_leaf: self.min_leaf,
            kind: SplitKind::Oblique { mu: self.mu },
        }
    }
    fn start(&self) -> StartChoice {
        self.start
    }
}

/// Builds the problem of `params` (the entry point for code outside the runner).
pub fn build(
    name: &str,
    x: Arc<DMatrix<f64>>,
    y: Arc<Vec<usize>>,
    classes: usize,
    params: OctParams,
) -> Result<OctProblem> {
    OctProblem::new(name, x, y, classes, params)
}

/// The greedy MIP start of a built problem.
pub fn greedy_start(problem: &OctProblem) -> Vec<f64> {
    let min_gap = match problem.params.kind {
        SplitKind::Axis => 0.0,
        SplitKind::Oblique { mu } => mu,
    };
    let nodes = greedy::greedy_tree(
        &problem.x,
        &problem.y,
        problem.classes,
        problem.params.depth,
        problem.params.min_leaf,
        min_gap,
    );
    problem.point_of_axis_tree(&nodes)
}

/// The MIP start of the CART learner's tree (Gini, `min_leaf` rows per leaf, grown to the
/// problem's depth) fitted on the problem's rows. CART's rule `x_j <= c` becomes OCT's
/// `x_j >= v` to the right with `v` the smallest training value above `c`. `None` when the
/// point is infeasible (an OCT-H margin mu wider than a gap CART split in).
pub fn cart_start(problem: &OctProblem) -> Option<Vec<f64>> {
    use crate::cart::{grow::Targets, CartConfig};
    let params = &problem.params;
    let cart = CartConfig {
        depth: Some(params.depth),
        min_leaf: params.min_leaf,
        ..Default::default()
    };
    let targets = Targets::Classes {
        y: &problem.y,
        n_classes: problem.classes,
    };
    let tree = cart.fit_tree(&problem.x, targets, &vec![1.0; problem.y.len()]);
    let bfs = tree.to_bfs(params.depth).ok()?;
    let nodes: Vec<Option<(usize, f64)>> = bfs
        .branch_splits()
        .into_iter()
        .map(|split| {
            let split = split?;
            let v = problem
                .x
                .column(split.feature)
                .iter()
                .copied()
                .filter(|&v| v > split.threshold)
                .fold(f64::INFINITY, f64::min);
            v.is_finite().then_some((split.feature, v))
        })
        .collect();
    let point = problem.point_of_axis_tree(&nodes);
    problem.milp.is_feasible(&point).then_some(point)
}

/// The fitted model at a MILP point.
pub fn model_of(
    name: &str,
    problem: &OctProblem,
    point: &[f64],
    scaler: MinMaxScaler,
    classes: Vec<String>,
    encoding: Encoding,
) -> OctModel {
    OctModel::new(
        name,
        problem.params.depth,
        problem.splits_of(point),
        &problem.labels_of(point),
        &problem.x,
        &problem.y,
        scaler,
        classes,
        encoding,
    )
}

/// The MIP start of a fitted axis-aligned tree (a saved OCT, or an OCT-H whose splits use one
/// feature each) on another problem: its thresholds in the user's units are carried into
/// the problem's scaling and moved to the smallest training value at or above them.
pub fn start_of_model(
    model: &OctModel,
    problem: &OctProblem,
    scaler: &MinMaxScaler,
) -> Result<Vec<f64>> {
    let name = if matches!(problem.params.kind, SplitKind::Axis) {
        NAME
    } else {
        NAME_H
    };
    let bad = |m: String| GlassboxError::formulation(name, m);
    if model.depth != problem.params.depth {
        return Err(bad(format!(
            "the warm-start model has depth {}, the problem depth {}",
            model.depth, problem.params.depth
        )));
    }
    if model.scaler.n_features() != problem.x.ncols() {
        return Err(bad(format!(
            "the warm-start model has {} features, the data {}",
            model.scaler.n_features(),
            problem.x.ncols()
        )));
    }
    let mut nodes = Vec::with_capacity(model.nodes.len());
    for (t, node) in model.nodes.iter().enumerate() {
        let Some(split) = node else {
            nodes.push(None);
            continue;
        };
        let &[(j, w)] = split.weights.as_slice() else {
            return Err(bad(format!(
                "the warm-start model's node {t} is oblique; only axis-aligned trees give a MIP start"
            )));
        };
        // Threshold in user units, then in this problem's scaled units (w > 0 for OCT).
        let user = model.user_threshold(j, w, split.threshold);
        let scaled = (user - scaler.min[j]) / scaler.scale_of(j);
        let v = problem
            .x
            .column(j)
            .iter()
            .copied()
            .filter(|&v| v >= scaled)
            .fold(f64::INFINITY, f64::min);
        // Below a node that does not split (or sends everything left), nothing splits.
        let parent_splits = t == 0 || nodes[(t - 1) / 2].is_some();
        nodes.push((v.is_finite() && w > 0.0 && parent_splits).then_some((j, v)));
    }
    Ok(problem.point_of_axis_tree(&nodes))
}

fn sparsity_of(model: &OctModel) -> (f64, f64) {
    let a = model.coefficients();
    (
        metrics::delta_local(&a, metrics::SPARSITY_TOLERANCE),
        metrics::delta_global(&a, metrics::SPARSITY_TOLERANCE),
    )
}

/// OCT and OCT-H are one formulation trait implementation over their [`OctVariant`]s (a
/// macro: a blanket impl of the core's trait is not allowed outside the core's crate).
macro_rules! oct_formulation {
    ($($t:ty),+) => {$(
        impl MilpClassifierFormulation for $t {
            type Problem = OctProblem;
            type Model = OctModel;

            fn name(&self) -> &'static str {
                OctVariant::name(self)
            }

            fn check(&self, features: usize, classes: usize) -> Result<()> {
                if features == 0 || classes == 0 {
                    return Err(GlassboxError::formulation(
                        OctVariant::name(self),
                        "the data have no features or no classes",
                    ));
                }
                problem::check_params(OctVariant::name(self), &self.params())
            }

            fn problem(
                &self,
                x: Arc<DMatrix<f64>>,
                y: Arc<Vec<usize>>,
                classes: usize,
            ) -> Result<OctProblem> {
                build(OctVariant::name(self), x, y, classes, self.params())
            }

            fn milp<'a>(&self, problem: &'a OctProblem) -> &'a MilpProblem {
                &problem.milp
            }

            fn integrality_tolerance(&self, problem: &OctProblem) -> Option<f64> {
                Some(problem.integrality_tolerance())
            }

            fn heuristic_start(&self, problem: &OctProblem) -> Option<Vec<f64>> {
                match self.start() {
                    StartChoice::Greedy => Some(greedy_start(problem)),
                    // An infeasible CART tree (OCT-H's margin) falls back to the greedy tree.
                    StartChoice::Cart => cart_start(problem).or_else(|| Some(greedy_start(problem))),
                    StartChoice::None => None,
                }
            }

            fn warm_start(
                &self,
                model: &OctModel,
                problem: &OctProblem,
                scaler: &MinMaxScaler,
            ) -> Result<Vec<f64>> {
                start_of_model(model, problem, scaler)
            }

            fn model(
                &self,
                problem: &OctProblem,
                x: &[f64],
                scaler: MinMaxScaler,
                classes: Vec<String>,
                encoding: Encoding,
            ) -> OctModel {
                model_of(
                    OctVariant::name(self),
                    problem,
                    x,
                    scaler,
                    classes,
                    encoding,
                )
            }

            fn load_model(&self, path: &Path) -> Result<OctModel> {
                OctModel::load(path)
            }

            fn reported_params(&self, problem: &OctProblem) -> ReportedParams {
                ReportedParams {
                    depth: Some(problem.params.depth),
                    lambda_local: Some(problem.params.alpha),
                    lambda_global: None,
                    gamma: None,
                }
            }

            fn check_tree_search(&self) -> Result<()> {
                tree_search::check_statement(OctVariant::name(self), &self.params())
            }

            fn tree_search<'a>(
                &self,
                problem: &'a OctProblem,
            ) -> Result<Box<dyn TreeSearchStatement + 'a>> {
                Ok(Box::new(OctStatement::new(OctVariant::name(self), problem)?))
            }

            fn sparsity(&self, model: &OctModel) -> (f64, f64) {
                sparsity_of(model)
            }
        }
    )+};
}

oct_formulation!(OctConfig, OcthConfig);
