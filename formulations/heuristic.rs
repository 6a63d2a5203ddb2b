//! What the heuristic learners (CART, random forest, TAO, TMO, CCT / CRT) have in common, as the
//! experiment runner drives them: a config parsed from the `[formulation]` table, a check
//! against the task, and a fit on the encoded (unscaled) training rows that returns a
//! model saved with the formulation's name. No solver is involved.
//!
//! Depends on the core and on the heuristic learners' own modules.

use super::cart::grow::Targets;
use super::cart::{self, CartConfig, TreeModel, TreeTask};
use super::contextual::{self, ContextualConfig, ContextualTreeModel};
use super::forest::{self, ForestConfig, ForestModel};
use super::tao::{self, Tao, TaoConfig};
use super::tao_oblique::{self, ObliqueTreeModel, TaoObliqueConfig};
use super::tmo::{self, TmoConfig};
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
    /// A random forest.
    Forest(ForestModel),
    /// An oblique tree.
    Oblique(ObliqueTreeModel),
    /// A contextual tree (CCT, CRT).
    Contextual(ContextualTreeModel),
}

impl FittedModel {
    /// As a classifier.
    pub fn classifier(&self) -> &dyn Classifier {
        match self {
            FittedModel::Tree(m) => m,
            FittedModel::Forest(m) => m,
            FittedModel::Oblique(m) => m,
            FittedModel::Contextual(m) => m,
        }
    }

    /// As a regressor; none for a model that only classifies.
    pub fn regressor(&self) -> Option<&dyn Regressor> {
        match self {
            FittedModel::Tree(m) => Some(m),
            FittedModel::Forest(m) => Some(m),
            FittedModel::Oblique(_) => None,
            FittedModel::Contextual(m) => Some(m),
        }
    }

    /// Local and global sparsity in percent.
    pub fn sparsity(&self) -> (f64, f64) {
        match self {
            FittedModel::Tree(m) => m.sparsity(),
            FittedModel::Forest(m) => m.sparsity(),
            FittedModel::Oblique(m) => m.sparsity(),
            FittedModel::Contextual(m) => m.sparsity(),
        }
    }

    /// Saves it as JSON with the formulation's name `kind`.
    pub fn save(&self, path: &Path, kind: &str) -> Result<()> {
        match self {
            FittedModel::Tree(m) => crate::model::save_json(path, kind, m),
            FittedModel::Forest(m) => crate::model::save_json(path, kind, m),
            FittedModel::Oblique(m) => crate::model::save_json(path, kind, m),
            FittedModel::Contextual(m) => crate::model::save_json(path, kind, m),
        }
    }
}

impl Serialize for FittedModel {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            FittedModel::Tree(m) => m.serialize(s),
            FittedModel::Forest(m) => m.serialize(s),
            FittedModel::Oblique(m) => m.serialize(s),
            FittedModel::Contextual(m) => m.serialize(s),
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
    /// Random forest.
    Forest(ForestConfig),
    /// TAO from CART (or a saved tree).
    Tao(TaoConfig),
    /// TMO.
    Tmo(TmoConfig),
    /// TAO for oblique trees (needs an NLP backend).
    TaoOblique(TaoObliqueConfig),
    /// Contextual classification tree (needs the `torch` feature to fit).
    Cct(ContextualConfig),
    /// Contextual regression tree (needs the `torch` feature to fit).
    Crt(ContextualConfig),
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
            forest::NAME => parse(table).map(HeuristicConfig::Forest),
            tao::NAME => parse(table).map(HeuristicConfig::Tao),
            tmo::NAME => parse(table).map(HeuristicConfig::Tmo),
            tao_oblique::NAME => parse(table).map(HeuristicConfig::TaoOblique),
            contextual::CCT => parse(table).map(HeuristicConfig::Cct),
            contextual::CRT => parse(table).map(HeuristicConfig::Crt),
            _ => return None,
        })
    }

    /// The formulation's name.
    pub fn name(&self) -> &'static str {
        match self {
            HeuristicConfig::Cart(_) => cart::NAME,
            HeuristicConfig::Forest(_) => forest::NAME,
            HeuristicConfig::Tao(_) => tao::NAME,
            HeuristicConfig::Tmo(_) => tmo::NAME,
            HeuristicConfig::TaoOblique(_) => tao_oblique::NAME,
            HeuristicConfig::Cct(_) => contextual::CCT,
            HeuristicConfig::Crt(_) => contextual::CRT,
        }
    }

    /// Whether it learns a regression model.
    pub fn is_regression(&self) -> bool {
        match self {
            HeuristicConfig::Cart(c) => c.criterion.is_regression(),
            HeuristicConfig::Forest(c) => c.criterion.is_regression(),
            HeuristicConfig::Tao(c) => c.criterion.is_regression(),
            HeuristicConfig::Tmo(c) => c.criterion.is_regression(),
            HeuristicConfig::TaoOblique(c) => c.criterion.is_regression(),
            HeuristicConfig::Cct(_) => false,
            HeuristicConfig::Crt(_) => true,
        }
    }

    /// The tree depth to report.
    pub fn depth(&self) -> Option<usize> {
        match self {
            HeuristicConfig::Cart(c) => c.depth,
            HeuristicConfig::Forest(c) => c.depth,
            HeuristicConfig::Tao(c) => c.depth,
            HeuristicConfig::Tmo(c) => Some(c.depth),
            HeuristicConfig::TaoOblique(c) => c.depth,
            HeuristicConfig::Cct(c) | HeuristicConfig::Crt(c) => Some(c.depth),
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
            HeuristicConfig::Forest(c) => c.check(regression, features),
            HeuristicConfig::Tao(c) => c.check(regression),
            HeuristicConfig::Tmo(c) => c.check(regression, features),
            HeuristicConfig::TaoOblique(c) => c.check(regression),
            HeuristicConfig::Cct(c) | HeuristicConfig::Crt(c) => {
                c.check(self.name(), regression, features)
            }
        }
    }

    /// Whether it solves problems with a backend (then the config needs a `[solver]`).
    pub fn uses_solver(&self) -> bool {
        matches!(self, HeuristicConfig::TaoOblique(_))
    }

    /// Checks a saved tree to start from (`multistart.warm_start`) against the data:
    /// only TAO starts from one, a classification tree with the data's `features` and
    /// `n_classes`.
    pub fn check_start(
        &self,
        start: Option<&TreeModel>,
        features: usize,
        n_classes: usize,
    ) -> Result<()> {
        let Some(m) = start else { return Ok(()) };
        let classes = match &m.task {
            TreeTask::Classification { classes } => classes.len(),
            TreeTask::Regression { .. } => 0,
        };
        let problem = match self {
            HeuristicConfig::Tao(_) if classes == n_classes && m.feature_names.len() == features => {
                return Ok(())
            }
            HeuristicConfig::Tao(_) => format!(
                "the warm-start tree has {} features and {classes} classes, the data {features} and {n_classes}",
                m.feature_names.len()
            ),
            _ => "multistart.warm_start is used by tao only: remove it".to_string(),
        };
        Err(GlassboxError::formulation(self.name(), problem))
    }

    /// Fits on `data` (with `solver`, for learners that use one); `seed` seeds the learner's random choices (split-specific);
    /// `start` is a saved tree to start from, for learners that refine one.
    pub fn fit(
        &self,
        data: &TrainingSet<'_>,
        seed: u64,
        start: Option<&TreeModel>,
        solver: Option<(&dyn crate::NlpSolver, &crate::SolveOptions)>,
    ) -> Result<HeuristicFit> {
        // The learner's seed, varied by the split's seed.
        let mix = |own: u64| own.wrapping_mul(1_000_003).wrapping_add(seed);
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
            HeuristicConfig::Forest(c) => {
                let c = ForestConfig {
                    seed: mix(c.seed),
                    ..c.clone()
                };
                let trees = c.fit_trees(data.x, data.targets)?;
                Ok(HeuristicFit {
                    model: FittedModel::Forest(ForestModel {
                        criterion: c.criterion,
                        task: data.task.clone(),
                        feature_names: data.encoding.feature_names(),
                        encoding: data.encoding.clone(),
                        trees,
                    }),
                    iterations: 0,
                    hit_time_limit: false,
                    note: format!("{} trees", c.n_trees),
                })
            }
            HeuristicConfig::Tao(c) => {
                let (y, n_classes) = classes_of(data, tao::NAME)?;
                self.check_start(start, data.x.ncols(), n_classes)?;
                let mut tree = match start {
                    Some(m) => m.tree.clone(),
                    None => tao::starting_tree(c, data.x, y, n_classes),
                };
                let optimizer = Tao::new(data.x, y, n_classes);
                let outcome =
                    optimizer.optimize(&mut tree, &vec![1.0; data.x.nrows()], c.max_passes);
                Ok(HeuristicFit {
                    model: FittedModel::Tree(data.tree_model(tao::NAME, c.criterion, tree)),
                    iterations: outcome.passes as u64,
                    hit_time_limit: false,
                    note: format!(
                        "{} after {} passes; training errors {} -> {}",
                        if outcome.converged {
                            "converged"
                        } else {
                            "pass limit"
                        },
                        outcome.passes,
                        outcome.errors_before,
                        outcome.errors_after
                    ),
                })
            }
            HeuristicConfig::Tmo(c) => {
                let (y, n_classes) = classes_of(data, tmo::NAME)?;
                let c = TmoConfig {
                    seed: mix(c.seed),
                    ..c.clone()
                };
                let outcome = c.run(data.x, y, n_classes)?;
                Ok(HeuristicFit {
                    model: FittedModel::Tree(data.tree_model(
                        tmo::NAME,
                        c.criterion,
                        outcome.tree,
                    )),
                    iterations: outcome.generations as u64,
                    hit_time_limit: outcome.hit_time_limit,
                    note: format!(
                        "{} generations; training accuracy {:.4} (best of the initial population {:.4})",
                        outcome.generations, outcome.fitness, outcome.initial_fitness
                    ),
                })
            }
            HeuristicConfig::TaoOblique(c) => {
                let (y, n_classes) = classes_of(data, tao_oblique::NAME)?;
                let Some((solver, options)) = solver else {
                    return Err(GlassboxError::formulation(
                        tao_oblique::NAME,
                        "needs an NLP backend: add a [solver] table",
                    ));
                };
                let (tree, outcome, failures) = c.fit(data.x, y, n_classes, solver, options)?;
                let classes = match data.task {
                    TreeTask::Classification { classes } => classes.clone(),
                    TreeTask::Regression { .. } => Vec::new(),
                };
                Ok(HeuristicFit {
                    model: FittedModel::Oblique(ObliqueTreeModel {
                        lambda: c.lambda,
                        classes,
                        feature_names: data.encoding.feature_names(),
                        encoding: data.encoding.clone(),
                        tree,
                    }),
                    iterations: outcome.passes as u64,
                    hit_time_limit: false,
                    note: format!(
                        "{} after {} passes; training errors {} -> {}; {failures} node regressions without a point",
                        if outcome.converged { "converged" } else { "pass limit" },
                        outcome.passes,
                        outcome.errors_before,
                        outcome.errors_after
                    ),
                })
            }
            HeuristicConfig::Cct(c) | HeuristicConfig::Crt(c) => {
                let name = self.name();
                let c = ContextualConfig {
                    seed: mix(c.seed),
                    ..c.clone()
                };
                let fit =
                    contextual::fit(&c, name, data.x, data.targets, data.task, data.encoding)?;
                let what = if name == contextual::CRT {
                    "mse"
                } else {
                    "accuracy"
                };
                Ok(HeuristicFit {
                    note: format!(
                        "{} epochs, kept epoch {}; validation {what} {:.4} (best single tree {:.4}, forest {:.4}); mean training reward {:.4}",
                        fit.epochs,
                        fit.best_epoch,
                        fit.validation_score,
                        fit.best_tree_validation_score,
                        fit.forest_validation_score,
                        fit.training_reward
                    ),
                    iterations: fit.epochs as u64,
                    hit_time_limit: false,
                    model: FittedModel::Contextual(fit.model),
                })
            }
        }
    }
}

/// The class targets of `data`, or an error naming `learner` for a regression target.
fn classes_of<'a>(data: &TrainingSet<'a>, learner: &str) -> Result<(&'a [usize], usize)> {
    match data.targets {
        Targets::Classes { y, n_classes } => Ok((y, n_classes)),
        Targets::Values(_) => Err(GlassboxError::formulation(
            learner,
            "needs a classification target",
        )),
    }
}
