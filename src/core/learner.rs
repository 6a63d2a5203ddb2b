//! The heuristic learners' interface (CART, random forest, TAO, TMO, oblique TAO, CCT / CRT):
//! a learner fits a model on encoded, unscaled training rows directly, with no problem for a
//! backend to solve (oblique TAO drives an NLP backend itself, node by node). The experiment
//! engine runs every learner through [`HeuristicLearner`]; the formulation registry lists
//! them like the optimization formulations.
//!
//! Depends on the core's data, model and solver types.

use crate::data::Encoding;
use crate::{GlassboxError, Interrupt, NlpSolver, Result, SolveOptions};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The targets of the rows.
#[derive(Clone, Copy, Debug)]
pub enum Targets<'a> {
    /// Class indices `0..n_classes`.
    Classes {
        /// One per row.
        y: &'a [usize],
        /// K.
        n_classes: usize,
    },
    /// Numbers.
    Values(&'a [f64]),
}

/// What a tree model predicts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TreeTask {
    /// Classes, in the order of the leaf values.
    Classification {
        /// Class labels.
        classes: Vec<String>,
    },
    /// A number.
    Regression {
        /// The target column.
        target: String,
    },
}

impl TreeTask {
    /// The class labels; none for regression.
    pub fn classes(&self) -> &[String] {
        match self {
            TreeTask::Classification { classes } => classes,
            TreeTask::Regression { .. } => &[],
        }
    }

    /// The target column of a regression; empty for classification.
    pub fn target(&self) -> &str {
        match self {
            TreeTask::Regression { target } => target,
            TreeTask::Classification { .. } => "",
        }
    }
}

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
    /// A stop request (Ctrl-C in `glassbox run`): a learner that runs long checks it where
    /// it checks its time limit (TMO, between children) or ends an iteration (CCT and CRT,
    /// after an epoch; TAO, before a pass; the forest, before a tree) and returns what it
    /// has; the runner then abandons the unit. A learner that drives an NLP backend passes
    /// it on in the solver's options.
    pub interrupt: Option<&'a Interrupt>,
}

impl<'a> TrainingSet<'a> {
    /// The class targets, or an error naming `learner` for a regression target.
    pub fn classes(&self, learner: &str) -> Result<(&'a [usize], usize)> {
        match self.targets {
            Targets::Classes { y, n_classes } => Ok((y, n_classes)),
            Targets::Values(_) => Err(GlassboxError::formulation(
                learner,
                "needs a classification target",
            )),
        }
    }
}

/// What a fit returns.
#[derive(Clone, Debug)]
pub struct HeuristicFit<M> {
    /// The model.
    pub model: M,
    /// Iterations of the learner (TAO passes, TMO generations; 0 for CART).
    pub iterations: u64,
    /// Whether it stopped at its wall-clock limit.
    pub hit_time_limit: bool,
    /// One line on how it ended (the `raw_status` of the results line).
    pub note: String,
}

/// A heuristic learner as the experiment engine runs it (see the module comment): its
/// config is its `[formulation]` table.
pub trait HeuristicLearner {
    /// The fitted model.
    type Model: crate::formulation::ModelFile;

    /// The name configs and saved models use.
    fn name(&self) -> &'static str;
    /// Whether it learns a regression model (the data are then encoded for regression).
    fn is_regression(&self) -> bool;
    /// The tree depth to report.
    fn depth(&self) -> Option<usize>;
    /// Checks the parameters for a task (`regression`) with `features` features.
    fn check(&self, regression: bool, features: usize) -> Result<()>;
    /// Whether it drives an NLP backend (then the config needs a `[solver]` table).
    fn uses_solver(&self) -> bool {
        false
    }
    /// Whether it refines a given model ([`Self::load_start`] reads one); false by default.
    fn refines_a_model(&self) -> bool {
        false
    }
    /// The saved model of `multistart.warm_start` to start from, checked against data with
    /// `features` features and `n_classes` classes. Only learners that refine a model take
    /// one; the others refuse it.
    fn load_start(&self, _path: &Path, _features: usize, _n_classes: usize) -> Result<Self::Model> {
        Err(GlassboxError::formulation(
            self.name(),
            "multistart.warm_start is used by tao only: remove it",
        ))
    }
    /// Fits on `data`; `seed` seeds the learner's random choices (it varies by split);
    /// `start` is the model to refine; `solver` the NLP backend of a learner that uses one.
    fn fit(
        &self,
        data: &TrainingSet<'_>,
        seed: u64,
        start: Option<&Self::Model>,
        solver: Option<(&dyn NlpSolver, &SolveOptions)>,
    ) -> Result<HeuristicFit<Self::Model>>;
    /// Local and global sparsity of a model, in percent.
    fn sparsity(&self, model: &Self::Model) -> (f64, f64);
}
