//! The fitted FlowOCT tree. It reuses OCT's fitted tree ([`OctModel`]: axis splits in scaled
//! units with the scaler and encoding, prediction, leaf counts, JSON, drawing), tagged
//! `flowoct`: a FlowOCT split on the binary feature `x_j >= v` is OCT's split
//! `x_j < threshold` to the left with the threshold between v and the training value below
//! it, and a FlowOCT node that predicts is OCT's node that does not split (every point goes
//! right, to the leaf that carries the node's class). Its description shows the prediction
//! nodes as FlowOCT has them.

use crate::oct::OctModel;
use glassbox_core::data::Encoding;
use glassbox_core::diagram::TreeDiagram;
use glassbox_core::model::{CheckedModel, Classifier};
use glassbox_core::Result;
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// A fitted FlowOCT tree (saved with the tag `flowoct`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FlowOctModel {
    /// The tree, as OCT's fitted tree (its `kind` is `flowoct`).
    pub tree: OctModel,
}

impl FlowOctModel {
    /// Number of nodes that split.
    pub fn num_splits(&self) -> usize {
        self.tree.num_splits()
    }

    /// The rules in the user's units, depth first: a node that splits shows its rule (a
    /// point goes left when it holds), a node that predicts its class and the training
    /// points per class it receives.
    pub fn text(&self) -> String {
        let tree = &self.tree;
        let branches = tree.nodes.len();
        let name = |j: usize| tree.feature_names.get(j).map_or("?", |s| s.as_str());
        let class = |k: usize| tree.classes.get(k).map_or("?", |s| s.as_str());
        let mut out = String::new();
        let _ = writeln!(
            out,
            "FlowOCT depth {}, {} split(s); a point goes left when the rule holds",
            tree.depth,
            self.num_splits()
        );
        let mut stack = vec![(0usize, 0usize)];
        while let Some((t, level)) = stack.pop() {
            let indent = "  ".repeat(level);
            let split = if t < branches {
                tree.nodes[t].as_ref()
            } else {
                None
            };
            match split {
                Some(split) => {
                    let rule = match split.weights.as_slice() {
                        &[(j, w)] if w > 0.0 => format!(
                            "{} < {:.6}",
                            name(j),
                            tree.user_threshold(j, w, split.threshold)
                        ),
                        _ => "(not an axis split)".to_string(),
                    };
                    let _ = writeln!(out, "{indent}node {t}: {rule}");
                    stack.push((2 * t + 2, level + 1));
                    stack.push((2 * t + 1, level + 1));
                }
                None => {
                    // Every point that reaches t ends in the rightmost leaf below it.
                    let mut leaf = t;
                    while leaf < branches {
                        leaf = 2 * leaf + 2;
                    }
                    let leaf = &tree.leaves[leaf - branches];
                    let _ = writeln!(
                        out,
                        "{indent}node {t}: predict {} (training points per class: {:?})",
                        class(leaf.class),
                        leaf.counts
                    );
                }
            }
        }
        out
    }

    /// Saves the model as JSON, tagged `flowoct`.
    pub fn save(&self, path: &Path) -> Result<()> {
        glassbox_core::model::save_json(path, super::NAME, self)
    }

    /// Loads a model saved by [`FlowOctModel::save`] (or a run).
    pub fn load(path: &Path) -> Result<Self> {
        glassbox_core::model::load_json(path, super::NAME)
    }
}

impl CheckedModel for FlowOctModel {
    /// OCT's checks of the tree, and its kind.
    fn check(&self, kind: &str) -> std::result::Result<(), String> {
        if self.tree.kind != super::NAME {
            return Err(format!(
                "the tree's kind is '{}', expected '{}'",
                self.tree.kind,
                super::NAME
            ));
        }
        self.tree.check(kind)
    }
}

impl Classifier for FlowOctModel {
    fn classes(&self) -> &[String] {
        self.tree.classes()
    }

    fn encoding(&self) -> &Encoding {
        self.tree.encoding()
    }

    fn describe(&self) -> String {
        self.text()
    }

    /// One-hot at the class of the node where the row's path ends.
    fn predict_proba(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        self.tree.predict_proba(x)
    }
}

/// OCT's drawing of the same tree (a node that predicts shows as one that does not split),
/// under FlowOCT's name.
pub fn flowoct_diagram(model: &FlowOctModel) -> TreeDiagram {
    let mut diagram = crate::oct::oct_diagram(&model.tree);
    diagram.title = diagram.title.replacen("OCT", "FlowOCT", 1);
    diagram
}

glassbox_core::fitted_model!(FlowOctModel, classifier, diagram = flowoct_diagram);
