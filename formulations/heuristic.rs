//! What the heuristic learners (CART, random forest, TAO, TMO, oblique TAO, CCT / CRT) share
//! as `glassbox_core::learner::HeuristicLearner`s: the checks and seeds every learner applies
//! the same way, and the tree model of a fitted axis-aligned tree. Each learner's trait
//! implementation lives in its own module.
//!
//! Depends on the core and on the CART module's tree types.

use crate::cart::{self, TreeModel};
use glassbox_core::learner::TrainingSet;
use glassbox_core::{GlassboxError, Result};

/// Refuses data without features, for learner `name`.
pub fn check_features(name: &str, features: usize) -> Result<()> {
    if features == 0 {
        return Err(GlassboxError::formulation(
            name,
            "the data have no feature columns",
        ));
    }
    Ok(())
}

/// A learner's own seed `own` varied by the split's `seed`, so that splits are independent
/// draws.
pub fn split_seed(own: u64, seed: u64) -> u64 {
    own.wrapping_mul(1_000_003).wrapping_add(seed)
}

/// The model around axis-aligned `tree` fitted on `data` by `learner`.
pub fn tree_model(
    data: &TrainingSet<'_>,
    learner: &str,
    criterion: cart::grow::Criterion,
    tree: cart::tree::AxisTree,
) -> TreeModel {
    TreeModel {
        learner: learner.to_string(),
        criterion,
        task: data.task.clone(),
        feature_names: data.encoding.feature_names(),
        encoding: data.encoding.clone(),
        tree,
    }
}
