//! FlowOCT: the flow-based optimal classification tree of Aghaei, Gómez and Vayanos,
//! "Strong optimal classification trees" (2021), the stronger formulation for binary
//! features that the thesis (`shared/papers/004_31090f2e54e0166e.txt`, chapter 3) cites, as
//! a MILP any MILP backend (HiGHS, CBC) solves. Multiclass natively (a class per predicting
//! node), with the paper's regularization lambda: the objective is maximized,
//! `(1 - lambda) * correctly classified training points - lambda * splits`, on the same
//! scale as ODTlearn's `FlowOCT(_lambda = lambda)` (the authors' package).
//!
//! Features: FlowOCT branches on binary features ([`binarize`]). A 0/1 column is used as it
//! is; glassbox's encoding dummy-codes a categorical column drop-first (`data.rs`), so its
//! reference level is the point with all its dummies 0 and a split cannot single it out; to
//! give FlowOCT a test for every level (full one-hot, as ODTlearn's users do), write the
//! one-hot columns into the file as 0/1 numbers. A numeric column becomes the tests
//! `x_j >= v` at up to `thresholds` cut values.
//!
//! - [`FlowOctConfig`]: the `[formulation]` table (`name = "flowoct"`), [`info`];
//! - [`FlowOctProblem`] (`problem.rs`): the MILP, problem (4) of the paper, and how to read
//!   and write its points as trees;
//! - [`start`]: the MIP starts (a greedy Gini tree pruned for the objective, a fitted model);
//! - [`FlowOctStatement`] (`tree_search.rs`): the same problem as an optimal-tree search, for
//!   a tree-search backend (`[solver] name = "dp"`), read back as the MILP point of the tree;
//! - [`FlowOctModel`] (`model.rs`): the fitted tree, OCT's tree model tagged `flowoct`.
//!
//! Depends on the core (`milp`, `data`, `metrics`, `model`, `formulation`, `tree_search`) and on OCT's
//! fitted tree and greedy tree (`formulations/oct`), never on a backend.

pub mod binarize;
mod model;
mod problem;
pub mod start;
mod tree_search;

pub use model::FlowOctModel;
pub use problem::{check_params, FlowNode, FlowOctParams, FlowOctProblem, FlowTree, Layout};
pub use tree_search::FlowOctStatement;

use crate::oct::{OctModel, Split};
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

/// The name configs and saved models use.
pub const NAME: &str = "flowoct";

/// The MIP start a run gives the backend when no model is given as `multistart.warm_start`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StartChoice {
    /// The greedy Gini tree on the binary features, pruned for the objective
    /// ([`start::greedy_tree`]).
    #[default]
    Greedy,
    /// No MIP start.
    None,
}

/// FlowOCT's `[formulation]` table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FlowOctConfig {
    /// Depth D (1 to 4).
    pub depth: usize,
    /// The regularization lambda in [0, 1] (ODTlearn's `_lambda`).
    pub lambda: f64,
    /// Most cut values `x_j >= v` per column of more than two distinct values.
    pub thresholds: usize,
    /// The MIP start: "greedy" or "none".
    pub start: StartChoice,
}

impl Default for FlowOctConfig {
    fn default() -> Self {
        FlowOctConfig {
            depth: 2,
            lambda: 0.0,
            thresholds: 10,
            start: StartChoice::Greedy,
        }
    }
}

impl FlowOctConfig {
    /// The problem's parameters.
    pub fn params(&self) -> FlowOctParams {
        FlowOctParams {
            depth: self.depth,
            lambda: self.lambda,
            thresholds: self.thresholds,
        }
    }
}

/// FlowOCT for `glassbox formulations`.
pub fn info() -> FormulationInfo {
    const PARAMS: &[ParamSpec] = &[
        ParamSpec {
            name: "depth",
            default: "2",
            help: "depth D of the tree (1 to 4)",
        },
        ParamSpec {
            name: "lambda",
            default: "0.0",
            help: "regularization in [0, 1]: maximize (1 - lambda) * correct - lambda * splits \
                   (ODTlearn's _lambda; reported as lambda_local)",
        },
        ParamSpec {
            name: "thresholds",
            default: "10",
            help: "most cut values x_j >= v per column of more than two values (all of them \
                   when there are fewer, else quantiles); 0/1 columns are used as they are",
        },
        ParamSpec {
            name: "start",
            default: "\"greedy\"",
            help: "MIP start: \"greedy\" (Gini tree on the binary features, pruned for the \
                   objective) or \"none\"",
        },
    ];
    FormulationInfo {
        name: NAME,
        kind: "milp",
        description: "FlowOCT, flow-based optimal classification tree on binary features \
                      (Aghaei, Gomez and Vayanos 2021) as a MILP",
        parameters: PARAMS,
    }
}

/// Builds the problem of `params` (the entry point for code outside the runner).
pub fn build(
    x: Arc<DMatrix<f64>>,
    y: Arc<Vec<usize>>,
    classes: usize,
    params: FlowOctParams,
) -> Result<FlowOctProblem> {
    FlowOctProblem::new(NAME, x, y, classes, params)
}

/// The greedy MIP start of a built problem.
pub fn greedy_start(problem: &FlowOctProblem) -> Vec<f64> {
    problem.point_of_tree(&start::greedy_tree(problem))
}

/// OCT's splits and leaf labels of a FlowOCT tree (see `model.rs`): a branch node splits
/// between its feature's cut and the training value below it; a node that predicts does
/// not split, and its class goes to the rightmost leaf below it, where its points end.
fn oct_nodes(
    problem: &FlowOctProblem,
    tree: &FlowTree,
) -> (Vec<Option<Split>>, Vec<Option<usize>>) {
    let branches = problem.num_branches();
    let nodes = (0..branches)
        .map(|t| match tree.nodes[t] {
            FlowNode::Branch(f) => {
                let feature = problem.features[f];
                Some(Split {
                    weights: vec![(feature.column, 1.0)],
                    threshold: binarize::midpoint_threshold(&problem.x, feature),
                })
            }
            _ => None,
        })
        .collect();
    let mut labels = vec![None; branches + 1];
    for (t, node) in tree.nodes.iter().enumerate() {
        if let FlowNode::Predict(k) = *node {
            let mut leaf = t;
            while leaf < branches {
                leaf = 2 * leaf + 2;
            }
            labels[leaf - branches] = Some(k);
        }
    }
    (nodes, labels)
}

/// The fitted model of a FlowOCT tree.
pub fn model_of_tree(
    problem: &FlowOctProblem,
    tree: &FlowTree,
    scaler: MinMaxScaler,
    classes: Vec<String>,
    encoding: Encoding,
) -> FlowOctModel {
    let (nodes, labels) = oct_nodes(problem, tree);
    FlowOctModel {
        tree: OctModel::new(
            NAME,
            problem.params.depth,
            nodes,
            &labels,
            &problem.x,
            &problem.y,
            scaler,
            classes,
            encoding,
        ),
    }
}

/// The fitted model at a MILP point.
pub fn model_of(
    problem: &FlowOctProblem,
    point: &[f64],
    scaler: MinMaxScaler,
    classes: Vec<String>,
    encoding: Encoding,
) -> FlowOctModel {
    model_of_tree(
        problem,
        &problem.tree_of_point(point),
        scaler,
        classes,
        encoding,
    )
}

/// The MIP start of a fitted model on a problem (pruned for the problem's objective).
pub fn start_of_model(
    model: &FlowOctModel,
    problem: &FlowOctProblem,
    scaler: &MinMaxScaler,
) -> Result<Vec<f64>> {
    let tree = start::tree_of_model(&model.tree, problem, scaler)?;
    Ok(problem.point_of_tree(&start::prune(problem, tree)))
}

impl MilpClassifierFormulation for FlowOctConfig {
    type Problem = FlowOctProblem;
    type Model = FlowOctModel;

    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, features: usize, classes: usize) -> Result<()> {
        if features == 0 || classes == 0 {
            return Err(GlassboxError::formulation(
                NAME,
                "the data have no features or no classes",
            ));
        }
        check_params(NAME, &self.params())
    }

    fn problem(
        &self,
        x: Arc<DMatrix<f64>>,
        y: Arc<Vec<usize>>,
        classes: usize,
    ) -> Result<FlowOctProblem> {
        build(x, y, classes, self.params())
    }

    fn milp<'a>(&self, problem: &'a FlowOctProblem) -> &'a MilpProblem {
        &problem.milp
    }

    fn heuristic_start(&self, problem: &FlowOctProblem) -> Option<Vec<f64>> {
        match self.start {
            StartChoice::Greedy => Some(greedy_start(problem)),
            StartChoice::None => None,
        }
    }

    fn warm_start(
        &self,
        model: &FlowOctModel,
        problem: &FlowOctProblem,
        scaler: &MinMaxScaler,
    ) -> Result<Vec<f64>> {
        start_of_model(model, problem, scaler)
    }

    fn model(
        &self,
        problem: &FlowOctProblem,
        x: &[f64],
        scaler: MinMaxScaler,
        classes: Vec<String>,
        encoding: Encoding,
    ) -> FlowOctModel {
        model_of(problem, x, scaler, classes, encoding)
    }

    fn load_model(&self, path: &Path) -> Result<FlowOctModel> {
        FlowOctModel::load(path)
    }

    fn reported_params(&self, problem: &FlowOctProblem) -> ReportedParams {
        ReportedParams {
            depth: Some(problem.params.depth),
            lambda_local: Some(problem.params.lambda),
            lambda_global: None,
            gamma: None,
        }
    }

    fn check_tree_search(&self) -> Result<()> {
        // Every FlowOCT is a tree search over its binary features (tree_search.rs).
        Ok(())
    }

    fn tree_search<'a>(
        &self,
        problem: &'a FlowOctProblem,
    ) -> Result<Box<dyn TreeSearchStatement + 'a>> {
        Ok(Box::new(FlowOctStatement::new(NAME, problem)?))
    }

    fn sparsity(&self, model: &FlowOctModel) -> (f64, f64) {
        let a = model.tree.coefficients();
        (
            metrics::delta_local(&a, metrics::SPARSITY_TOLERANCE),
            metrics::delta_global(&a, metrics::SPARSITY_TOLERANCE),
        )
    }
}
