//! What the heuristic learners (CART, random forest, TAO, TMO) have in common, as the
//! experiment runner drives them: a config parsed from the `[formulation]` table, a check
//! against the task, and a fit on the encoded (unscaled) training rows that returns a
//! model saved with the formulation's name. No solver is involved.
//!
//! Depends on the core and on the heuristic learners' own modules.

use super::cart::grow::Targets;
use super::cart::{self, CartConfig, TreeModel, TreeTask};
use crate::data::Encoding;
use crate::model::{Classifier, Regressor};
use crate::{GlassboxError, Result};
use nalgebra::DMatrix;
use serde::Serialize;
use std::path::Path;

/// The training rows a heuristic learner fits.
#[derive(Clone, Copy, Debug)]
pub struct TrainingSet<'a> {
    /// Encoded, unscaled features (N x p).
    pub x: &'a DMatrix<f64>,
    /// Classes or numbers.
    pub targets: Targets<'a>,
    /// Class labels or target name.
    pub task: &'a TreeTask,
    /// The encoding of the raw columns.
    pub encoding: &'a Encoding,
}

impl TrainingSet<'_> {
    /// The model around `tree` for this data, made by `learner`.
    pub fn tree_model(
        &self,
        learner: &str,
        criterion: cart::grow::Criterion,
        tree: cart::tree::AxisTree,
    ) -> TreeModel {
        TreeModel {
            learner: learner.to_string(),
            criterion,
            task: self.task.clone(),
            feature_names: self.encoding.feature_names(),
            encoding: self.encoding.clone(),
            tree,
        }
    }
}

/// A fitted heuristic model.
#[derive(Clone, Debug)]
pub enum FittedModel {
    /// One tree (CART, TAO, TMO).
    Tree(TreeModel),
}

impl FittedModel {
    /// As a classifier.
    pub fn classifier(&self) -> &dyn Classifier {
        match self {
            FittedModel::Tree(m) => m,
        }
    }

    /// As a regressor.
    pub fn regressor(&self) -> &dyn Regressor {
        match self {
            FittedModel::Tree(m) => m,
        }
    }

    /// Local and global sparsity in percent.
    pub fn sparsity(&self) -> (f64, f64) {
        match self {
            FittedModel::Tree(m) => m.sparsity(),
        }
    }

    /// Saves it as JSON with the formulation's name `kind`.
    pub fn save(&self, path: &Path, kind: &str) -> Result<()> {
        match self {
            FittedModel::Tree(m) => crate::model::save_json(path, kind, m),
        }
    }
}

impl Serialize for FittedModel {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            FittedModel::Tree(m) => m.serialize(s),
        }
    }
}

/// What a fit returns besides the model.
#[derive(Clone, Debug)]
pub struct HeuristicFit {
    /// The model.
    pub model: FittedModel,
    /// Iterations of the learner (TAO passes, TMO generations; 0 for CART).
    pub iterations: u64,
    /// Whether it stopped at its wall-clock limit.
    pub hit_time_limit: bool,
    /// One line on how it ended (the `raw_status` of the results line).
    pub note: String,
}

/// A heuristic learner's `[formulation]` table, resolved.
#[derive(Clone, Debug)]
pub enum HeuristicConfig {
    /// CART.
    Cart(CartConfig),
}

impl HeuristicConfig {
    /// The config of heuristic learner `name` from its `[formulation]` table (without
    /// `name`); `None` if `name` is not a heuristic learner.
    pub fn parse(name: &str, table: toml::Table) -> Option<std::result::Result<Self, String>> {
        fn parse<T: serde::de::DeserializeOwned>(
            table: toml::Table,
        ) -> std::result::Result<T, String> {
            table.try_into().map_err(|e: toml::de::Error| e.to_string())
        }
        Some(match name {
            cart::NAME => parse(table).map(HeuristicConfig::Cart),
            _ => return None,
        })
    }

    /// The formulation's name.
    pub fn name(&self) -> &'static str {
        match self {
            HeuristicConfig::Cart(_) => cart::NAME,
        }
    }

    /// Whether it learns a regression model.
    pub fn is_regression(&self) -> bool {
        match self {
            HeuristicConfig::Cart(c) => c.criterion.is_regression(),
        }
    }

    /// The tree depth to report.
    pub fn depth(&self) -> Option<usize> {
        match self {
            HeuristicConfig::Cart(c) => c.depth,
        }
    }

    /// Checks the parameters for a task (`regression`) with `features` features.
    pub fn check(&self, regression: bool, features: usize) -> Result<()> {
        if features == 0 {
            return Err(GlassboxError::formulation(
                self.name(),
                "the data have no feature columns",
            ));
        }
        match self {
            HeuristicConfig::Cart(c) => c.check(regression),
        }
    }

    /// Fits on `data`; `seed` seeds the learner's random choices (split-specific);
    /// `start` is a saved tree to start from, for learners that refine one.
    pub fn fit(
        &self,
        data: &TrainingSet<'_>,
        _seed: u64,
        _start: Option<&TreeModel>,
    ) -> Result<HeuristicFit> {
        match self {
            HeuristicConfig::Cart(c) => {
                let weights = vec![1.0; data.x.nrows()];
                let tree = c.fit_tree(data.x, data.targets, &weights);
                Ok(HeuristicFit {
                    model: FittedModel::Tree(data.tree_model(cart::NAME, c.criterion, tree)),
                    iterations: 0,
                    hit_time_limit: false,
                    note: "grown greedily".to_string(),
                })
            }
        }
    }
}
