//! The fitted OCT / OCT-H: a deterministic tree in scaled units that carries its scaler and
//! encoding, so it predicts on raw rows and prints its rules in the user's units.

use super::problem::{argmax, route, Split};
use glassbox_core::data::{Encoding, MinMaxScaler};
use glassbox_core::diagram::{complete_tree, feature, oblique_lines, TreeDiagram};
use glassbox_core::model::{CheckedModel, Classifier};
use glassbox_core::tree::TreeShape;
use glassbox_core::{GlassboxError, Result};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// One leaf: its class and the training points of each class it holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Leaf {
    /// The predicted class (index into `classes`).
    pub class: usize,
    /// Training points per class that reach the leaf.
    pub counts: Vec<usize>,
}

/// A fitted optimal classification tree (OCT or OCT-H).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OctModel {
    /// "oct" or "oct_h": the formulation that made it (and the tag of its file).
    pub kind: String,
    /// Depth D.
    pub depth: usize,
    /// Per branch node (heap order): its split in scaled units, `None` when it does not
    /// split (every point goes right).
    pub nodes: Vec<Option<Split>>,
    /// The leaves, in order.
    pub leaves: Vec<Leaf>,
    /// The training rows' min-max scaling.
    pub scaler: MinMaxScaler,
    /// The class labels.
    pub classes: Vec<String>,
    /// The encoded feature names.
    pub feature_names: Vec<String>,
    /// How raw columns are encoded.
    pub encoding: Encoding,
}

impl OctModel {
    /// The model of `nodes` and MILP leaf `labels` on scaled training data `(x, y)`. A leaf
    /// with no label (it holds no training point) predicts the majority class of the
    /// training points of its nearest ancestor that holds some.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        kind: &str,
        depth: usize,
        nodes: Vec<Option<Split>>,
        labels: &[Option<usize>],
        x: &DMatrix<f64>,
        y: &[usize],
        scaler: MinMaxScaler,
        classes: Vec<String>,
        encoding: Encoding,
    ) -> Self {
        let shape = TreeShape::new(depth);
        let k = classes.len();
        let mut model = OctModel {
            kind: kind.to_string(),
            depth,
            nodes,
            leaves: Vec::new(),
            scaler,
            classes,
            feature_names: encoding.feature_names(),
            encoding,
        };
        // Counts of every heap node (branch nodes, then leaves).
        let total = shape.num_branches() + shape.num_leaves();
        let mut counts = vec![vec![0usize; k]; total];
        for i in 0..x.nrows() {
            let mut node = 0;
            loop {
                counts[node][y[i]] += 1;
                if node >= shape.num_branches() {
                    break;
                }
                node = if model.goes_left(node, |j| x[(i, j)]) == Some(true) {
                    2 * node + 1
                } else {
                    2 * node + 2
                };
            }
        }
        model.leaves = (0..shape.num_leaves())
            .map(|l| {
                let heap = shape.num_branches() + l;
                let mut class = labels.get(l).copied().flatten();
                if counts[heap].iter().sum::<usize>() == 0 || class.is_none() {
                    let mut node = heap;
                    while class.is_none() {
                        if counts[node].iter().sum::<usize>() > 0 || node == 0 {
                            class = Some(argmax(&counts[node]));
                        } else {
                            node = (node - 1) / 2;
                        }
                    }
                }
                Leaf {
                    class: class.unwrap_or(0),
                    counts: counts[heap].clone(),
                }
            })
            .collect();
        model
    }

    fn goes_left(&self, t: usize, value: impl Fn(usize) -> f64) -> Option<bool> {
        self.nodes[t]
            .as_ref()
            .map(|s| s.weights.iter().map(|&(j, w)| w * value(j)).sum::<f64>() < s.threshold)
    }

    /// The leaf of every row of scaled features `z`.
    pub fn leaves_of_scaled(&self, z: &DMatrix<f64>) -> Vec<usize> {
        let shape = TreeShape::new(self.depth);
        (0..z.nrows())
            .map(|i| route(&shape, |t| self.goes_left(t, |j| z[(i, j)])))
            .collect()
    }

    /// The `p x |tau_B|` matrix of split coefficients (scaled units), for sparsity.
    pub fn coefficients(&self) -> DMatrix<f64> {
        let mut a = DMatrix::zeros(self.scaler.n_features(), self.nodes.len());
        for (t, node) in self.nodes.iter().enumerate() {
            for &(j, w) in node.iter().flat_map(|s| &s.weights) {
                a[(j, t)] = w;
            }
        }
        a
    }

    /// The threshold in the user's units of a one-feature split `w * x_j < threshold`
    /// (scaled units): the raw value of feature j where `w * x_j` crosses it.
    pub fn user_threshold(&self, j: usize, w: f64, threshold: f64) -> f64 {
        self.scaler.min[j] + self.scaler.scale_of(j) * threshold / w
    }

    /// Number of branch nodes that split.
    pub fn num_splits(&self) -> usize {
        self.nodes.iter().filter(|n| n.is_some()).count()
    }

    /// The rules in the user's units.
    pub fn text(&self) -> String {
        let shape = TreeShape::new(self.depth);
        let name = |j: usize| self.feature_names.get(j).map_or("?", |s| s.as_str());
        let mut out = String::new();
        let title = if self.kind == super::NAME_H {
            "OCT-H"
        } else {
            "OCT"
        };
        let _ = writeln!(
            out,
            "{title} depth {}, {} split(s); a point goes left when the rule holds",
            self.depth,
            self.num_splits()
        );
        for (t, node) in self.nodes.iter().enumerate() {
            let indent = "  ".repeat(shape.node_depth(t));
            let Some(split) = node else {
                let _ = writeln!(out, "{indent}node {t}: no split (all points go right)");
                continue;
            };
            // w . (x - min) / scale < theta  <=>  sum (w / scale) x < theta + sum w min / scale
            let mut shift = split.threshold;
            let terms: Vec<String> = split
                .weights
                .iter()
                .map(|&(j, w)| {
                    let scale = self.scaler.scale_of(j);
                    shift += w * self.scaler.min[j] / scale;
                    format!("{:+.6} * {}", w / scale, name(j))
                })
                .collect();
            let rule = match split.weights.as_slice() {
                // w (x - min) / scale < theta  <=>  x < min + scale theta / w  (w > 0)
                [(j, w)] if *w != 0.0 => format!(
                    "{} {} {:.6}",
                    name(*j),
                    if *w > 0.0 { "<" } else { ">" },
                    self.user_threshold(*j, *w, split.threshold)
                ),
                _ => format!("{} < {:.6}", terms.join(" "), shift),
            };
            let _ = writeln!(out, "{indent}node {t}: {rule}");
        }
        for (l, leaf) in self.leaves.iter().enumerate() {
            let _ = writeln!(
                out,
                "{}leaf {l}: class {} (training points per class: {:?})",
                "  ".repeat(self.depth),
                self.classes.get(leaf.class).map_or("?", |s| s.as_str()),
                leaf.counts
            );
        }
        out
    }

    /// Saves the model as JSON, tagged with its kind.
    pub fn save(&self, path: &Path) -> Result<()> {
        glassbox_core::model::save_json(path, &self.kind, self)
    }

    /// Loads an OCT or OCT-H model saved by [`OctModel::save`] (or a run).
    pub fn load(path: &Path) -> Result<Self> {
        let kind = glassbox_core::model::model_kind(path)?;
        if kind != super::NAME && kind != super::NAME_H {
            return Err(GlassboxError::Model {
                file: path.display().to_string(),
                message: format!(
                    "this is a '{kind}' model, expected a '{}' or '{}' model",
                    super::NAME,
                    super::NAME_H
                ),
            });
        }
        glassbox_core::model::load_json(path, &kind)
    }
}

impl CheckedModel for OctModel {
    /// What predicting and printing rely on: the heap sizes of its depth, splits on
    /// existing features, leaf classes and counts that match the classes, a scaler that
    /// fits the encoding.
    fn check(&self, _kind: &str) -> std::result::Result<(), String> {
        // Depth 4 is the formulation's limit; a larger one would be a heap of 2^depth nodes.
        glassbox_core::model::check_depth(self.depth, 1..=4)?;
        let shape = TreeShape::new(self.depth);
        if self.nodes.len() != shape.num_branches() || self.leaves.len() != shape.num_leaves() {
            return Err(format!(
                "{} branch node(s) and {} leaves, expected {} and {} at depth {}",
                self.nodes.len(),
                self.leaves.len(),
                shape.num_branches(),
                shape.num_leaves(),
                self.depth
            ));
        }
        self.scaler.check_against(&self.encoding)?;
        let p = self.encoding.n_features();
        if self.feature_names.len() != p {
            return Err(format!(
                "{} feature names but the encoding gives {p} features",
                self.feature_names.len()
            ));
        }
        for (t, split) in self.nodes.iter().enumerate() {
            if let Some(&(j, _)) = split.iter().flat_map(|s| &s.weights).find(|(j, _)| *j >= p) {
                return Err(format!("node {t} tests feature {j} but the model has {p}"));
            }
        }
        let k = self.classes.len();
        for (l, leaf) in self.leaves.iter().enumerate() {
            if leaf.class >= k || leaf.counts.len() != k {
                return Err(format!(
                    "leaf {l} predicts class {} with {} count(s) but the model has {k} classes",
                    leaf.class,
                    leaf.counts.len()
                ));
            }
        }
        Ok(())
    }
}

impl Classifier for OctModel {
    fn classes(&self) -> &[String] {
        &self.classes
    }

    fn encoding(&self) -> &Encoding {
        &self.encoding
    }

    fn describe(&self) -> String {
        self.text()
    }

    /// One-hot at the class of the row's leaf.
    fn predict_proba(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        let leaves = self.leaves_of_scaled(&self.scaler.transform(x));
        let mut proba = DMatrix::zeros(x.nrows(), self.classes.len());
        for (i, l) in leaves.into_iter().enumerate() {
            proba[(i, self.leaves[l].class)] = 1.0;
        }
        proba
    }
}

/// OCT / OCT-H: deterministic splits `w . x < theta` (left), in the user's units.
pub fn oct_diagram(model: &OctModel) -> TreeDiagram {
    let name = if model.kind == super::NAME_H {
        "OCT-H"
    } else {
        "OCT"
    };
    complete_tree(
        format!(
            "{name} depth {}, {} split(s)",
            model.depth,
            model.num_splits()
        ),
        model.depth,
        |t| match &model.nodes[t] {
            None => vec![
                format!("node {t}: no split"),
                "(every point goes right)".into(),
            ],
            Some(split) => {
                // w (x - min) / scale < theta  <=>  sum (w / scale) x < theta + sum w min / scale
                let mut shift = split.threshold;
                let terms = split
                    .weights
                    .iter()
                    .map(|&(j, w)| {
                        let scale = model.scaler.scale_of(j);
                        shift += w * model.scaler.min[j] / scale;
                        (feature(&model.feature_names, j), w / scale, w)
                    })
                    .collect::<Vec<_>>();
                match terms.as_slice() {
                    [(f, w, _)] if *w != 0.0 => vec![
                        format!("node {t}:"),
                        format!("{f} {} {:.4}", if *w > 0.0 { "<" } else { ">" }, shift / w),
                    ],
                    _ => oblique_lines(format!("node {t}: s ="), terms, format!("s < {shift:.4}")),
                }
            }
        },
        |l| {
            let leaf = &model.leaves[l];
            vec![
                format!(
                    "leaf {l}: {}",
                    model.classes.get(leaf.class).map_or("?", |s| s.as_str())
                ),
                format!("training points {:?}", leaf.counts),
            ]
        },
    )
}

glassbox_core::fitted_model!(OctModel, classifier, diagram = oct_diagram);
