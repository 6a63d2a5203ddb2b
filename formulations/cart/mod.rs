//! CART (Breiman et al. 1984; the thesis' section 3.1): greedy axis-aligned classification
//! trees (Gini or entropy) and regression trees (squared error) with a depth limit,
//! minimum rows per leaf and per split, and minimal cost-complexity pruning (`ccp_alpha`,
//! as scikit-learn defines it). The baseline every tree table compares against, and the
//! tree type ([`tree::AxisTree`], [`TreeModel`]) the other heuristic learners (forest,
//! TAO, TMO) share.
//!
//! Trees split the encoded features of the user's table without scaling, so thresholds
//! are in the user's units.
//!
//! Depends on the core only (`data`, `model`, `metrics`, `formulation`).

pub mod grow;
pub mod prune;
pub mod tree;

use glassbox_core::data::{ColumnEncoding, Encoding};
use glassbox_core::diagram::{feature, number, DiagramNode, TreeDiagram};
use glassbox_core::formulation::{FormulationInfo, ParamSpec};
use glassbox_core::learner::{HeuristicFit, HeuristicLearner, TrainingSet};
use glassbox_core::model::{CheckedModel, Classifier, Regressor};
use glassbox_core::{GlassboxError, Result};
use grow::{Criterion, GrowParams, Targets};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;
use tree::AxisTree;

/// The name configs and saved models use.
pub const NAME: &str = "cart";

/// The `[formulation]` table of CART.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CartConfig {
    /// "gini", "entropy" (classification) or "squared_error" (regression).
    pub criterion: Criterion,
    /// Maximum depth; none for no limit.
    pub depth: Option<usize>,
    /// Minimum rows per leaf.
    pub min_leaf: usize,
    /// Minimum rows for a node to be split.
    pub min_split: usize,
    /// Cost-complexity pruning parameter (0: no pruning).
    pub ccp_alpha: f64,
    /// rpart's complexity parameter: prune at `ccp_alpha = cp * impurity of the root` on the
    /// training rows (rpart's default tree is `cp = 0.01`, `min_split = 20`, `min_leaf = 7`).
    /// Excludes `ccp_alpha`.
    pub cp: Option<f64>,
}

impl Default for CartConfig {
    fn default() -> Self {
        CartConfig {
            criterion: Criterion::Gini,
            depth: None,
            min_leaf: 1,
            min_split: 2,
            ccp_alpha: 0.0,
            cp: None,
        }
    }
}

/// The description `glassbox formulations` prints.
pub fn info() -> FormulationInfo {
    FormulationInfo {
        name: NAME,
        kind: "heuristic",
        description: "CART: greedy axis-aligned classification (gini, entropy) or regression (squared_error) tree, cost-complexity pruning (thesis 3.1)",
        parameters: TREE_PARAMS,
    }
}

/// The parameters of a single CART tree, shared by the learners that grow one.
pub const TREE_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "criterion",
        default: "\"gini\"",
        help: "gini | entropy (classification) | squared_error (regression)",
    },
    ParamSpec {
        name: "depth",
        default: "",
        help: "maximum depth D (edges root to leaf); none for no limit",
    },
    ParamSpec {
        name: "min_leaf",
        default: "1",
        help: "minimum training rows per leaf",
    },
    ParamSpec {
        name: "min_split",
        default: "2",
        help: "minimum training rows for a node to be split",
    },
    ParamSpec {
        name: "ccp_alpha",
        default: "0.0",
        help: "cost-complexity pruning alpha (scikit-learn's definition)",
    },
    ParamSpec {
        name: "cp",
        default: "",
        help: "rpart's complexity parameter: ccp_alpha = cp * the root's impurity (rpart's default tree: cp = 0.01, min_split = 20, min_leaf = 7); excludes ccp_alpha",
    },
];

impl CartConfig {
    /// Checks the parameters; `regression` says which task the data are.
    pub fn check(&self, regression: bool) -> Result<()> {
        let err = |m: String| Err(GlassboxError::formulation(NAME, m));
        if self.criterion.is_regression() != regression {
            return err(format!(
                "criterion '{}' is for {}; use {}",
                self.criterion.as_str(),
                if regression {
                    "classification but the target is numeric (regression)"
                } else {
                    "regression"
                },
                if regression {
                    "\"squared_error\""
                } else {
                    "\"gini\" or \"entropy\" for classification"
                }
            ));
        }
        if self.min_leaf == 0 {
            return err("min_leaf must be at least 1".into());
        }
        if self.min_split < 2 {
            return err(format!(
                "min_split must be at least 2, got {}",
                self.min_split
            ));
        }
        if !(self.ccp_alpha.is_finite() && self.ccp_alpha >= 0.0) {
            return err(format!(
                "ccp_alpha must be a finite number >= 0, got {}",
                self.ccp_alpha
            ));
        }
        match self.cp {
            Some(cp) if !(cp.is_finite() && cp >= 0.0) => {
                return err(format!("cp must be a finite number >= 0, got {cp}"))
            }
            Some(cp) if self.ccp_alpha > 0.0 => {
                return err(format!(
                    "give one of ccp_alpha ({}) and cp ({cp}): both set the pruning alpha",
                    self.ccp_alpha
                ))
            }
            _ => {}
        }
        Ok(())
    }

    /// How trees grow under this config (all features per node).
    pub fn grow_params(&self) -> GrowParams {
        GrowParams {
            criterion: self.criterion,
            max_depth: self.depth,
            min_samples_leaf: self.min_leaf,
            min_samples_split: self.min_split,
            max_features: None,
        }
    }

    /// Grows and prunes a tree on the rows of `x` with positive `weights`.
    pub fn fit_tree(&self, x: &DMatrix<f64>, targets: Targets<'_>, weights: &[f64]) -> AxisTree {
        let mut tree = grow::grow(x, targets, weights, &self.grow_params(), None);
        // rpart's cp is relative to the root's risk; scikit-learn's R(root) is its impurity.
        let alpha = match self.cp {
            Some(cp) => cp * tree.nodes[0].impurity,
            None => self.ccp_alpha,
        };
        prune::prune(&mut tree, alpha);
        tree
    }
}

pub use glassbox_core::learner::TreeTask;

/// Leaf values (class fractions) of each row as a rows x `k` probability matrix.
pub(crate) fn values_to_proba<V: AsRef<[f64]>>(values: &[V], k: usize) -> DMatrix<f64> {
    DMatrix::from_fn(values.len(), k, |i, c| {
        values[i].as_ref().get(c).copied().unwrap_or(0.0)
    })
}

/// Leaf values (one number each) of each row as predictions.
pub(crate) fn values_to_predictions<V: AsRef<[f64]>>(values: &[V]) -> Vec<f64> {
    values
        .iter()
        .map(|v| v.as_ref().first().copied().unwrap_or(f64::NAN))
        .collect()
}

/// A fitted axis-aligned tree with what it needs to predict on the user's table and to
/// describe itself: the model file of CART, TAO and TMO (`learner` names which).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TreeModel {
    /// The formulation that made it ("cart", "tao", "tmo"): the kind of its model file.
    pub learner: String,
    /// The criterion it was grown with.
    pub criterion: Criterion,
    /// Classes or target.
    pub task: TreeTask,
    /// Encoded feature names.
    pub feature_names: Vec<String>,
    /// How raw columns are encoded (applied to new data at predict).
    pub encoding: Encoding,
    /// The tree.
    pub tree: AxisTree,
}

/// Checks trees read from a model file against the model around them (a file edited or
/// damaged by hand must be an error, not a panic at predict): as many feature names as
/// encoded features, and every tree valid for them ([`AxisTree::check`]) with one value per
/// class (one for regression).
pub(crate) fn check_trees(
    task: &TreeTask,
    feature_names: &[String],
    encoding: &Encoding,
    trees: &[AxisTree],
) -> std::result::Result<(), String> {
    let features = encoding.n_features();
    if feature_names.len() != features {
        return Err(format!(
            "{} feature names but the encoding gives {features} features",
            feature_names.len()
        ));
    }
    let values = match task {
        TreeTask::Classification { classes } if classes.is_empty() => {
            return Err("the model has no classes".to_string())
        }
        TreeTask::Classification { classes } => classes.len(),
        TreeTask::Regression { .. } => 1,
    };
    if trees.is_empty() {
        return Err("the model has no trees".to_string());
    }
    for (k, tree) in trees.iter().enumerate() {
        tree.check(features, values)
            .map_err(|m| format!("tree {k}: {m}"))?;
    }
    Ok(())
}

/// The learners whose model file is a [`TreeModel`].
pub const TREE_MODEL_KINDS: &[&str] = &[NAME, "tao", "tmo"];

impl TreeModel {
    /// Saves the model as JSON, tagged with its learner.
    pub fn save(&self, path: &Path) -> Result<()> {
        glassbox_core::model::save_json(path, &self.learner, self)
    }

    /// Loads a tree saved by any learner of [`TREE_MODEL_KINDS`].
    pub fn load(path: &Path) -> Result<Self> {
        let kind = glassbox_core::model::model_kind(path)?;
        match TREE_MODEL_KINDS.iter().find(|k| **k == kind) {
            Some(k) => glassbox_core::model::load_json(path, k),
            None => Err(GlassboxError::Model {
                file: path.display().to_string(),
                message: format!(
                    "this is a '{kind}' model, expected a tree of {}",
                    TREE_MODEL_KINDS.join(", ")
                ),
            }),
        }
    }

    /// Whether it is a regression tree.
    pub fn is_regression(&self) -> bool {
        matches!(self.task, TreeTask::Regression { .. })
    }

    /// Local and global sparsity (percent) of its splits, each split using one feature.
    pub fn sparsity(&self) -> (f64, f64) {
        let a = self.tree.coefficient_matrix(self.feature_names.len());
        (
            glassbox_core::metrics::delta_local(&a, 0.0),
            glassbox_core::metrics::delta_global(&a, 0.0),
        )
    }

    /// The tree as indented rules in the user's units.
    fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} tree ({}), depth {}, {} leaves",
            self.learner.to_uppercase(),
            self.criterion.as_str(),
            self.tree.depth(),
            self.tree.n_leaves()
        );
        let conditions = split_texts(&self.encoding, &self.feature_names);
        let nodes = &self.tree.nodes;
        let branch = |t: usize| match &nodes[t].branch {
            Some(b) => {
                let (left, right) = conditions(b.split.feature, b.split.threshold);
                (format!("if {left}:"), format!("else ({right}):"))
            }
            None => (String::new(), String::new()),
        };
        let leaf = |t: usize| {
            let node = &nodes[t];
            let what = match &self.task {
                TreeTask::Classification { classes } => {
                    let k = node.class();
                    format!(
                        "class {} (fraction {:.3})",
                        classes.get(k).map_or("?", |s| s.as_str()),
                        node.value.get(k).copied().unwrap_or(f64::NAN)
                    )
                }
                TreeTask::Regression { target } => {
                    format!("{target} = {:.4}", node.value.first().unwrap_or(&f64::NAN))
                }
            };
            format!("{what}  [{} training rows]", node.n_samples)
        };
        let children = |t: usize| nodes[t].branch.map(|b| (b.left, b.right));
        write_rules(&mut out, children, branch, leaf);
        out
    }
}

/// The deepest indentation of [`write_rules`]: deeper levels are printed at this one, so
/// a chain of n nodes (a file may hold one) prints O(n) characters, not O(n^2).
const MAX_INDENT: usize = 64;

/// Writes a tree from its root (node 0) as indented rules: a branch's `if` line, its left
/// subtree, its `else` line, its right subtree; a leaf's line. Iterative, as a tree read
/// from a file may be a chain deeper than the stack.
pub(crate) fn write_rules(
    out: &mut String,
    children: impl Fn(usize) -> Option<(usize, usize)>,
    branch: impl Fn(usize) -> (String, String),
    leaf: impl Fn(usize) -> String,
) {
    enum Step {
        Node(usize, usize),
        Else(String, usize),
    }
    let mut todo = vec![Step::Node(0, 0)];
    while let Some(step) = todo.pop() {
        match step {
            Step::Else(text, indent) => {
                let _ = writeln!(out, "{}{text}", "  ".repeat(indent.min(MAX_INDENT)));
            }
            Step::Node(t, indent) => {
                let pad = "  ".repeat(indent.min(MAX_INDENT));
                match children(t) {
                    Some((left, right)) => {
                        let (if_line, else_line) = branch(t);
                        let _ = writeln!(out, "{pad}{if_line}");
                        todo.push(Step::Node(right, indent + 1));
                        todo.push(Step::Else(else_line, indent));
                        todo.push(Step::Node(left, indent + 1));
                    }
                    None => {
                        let _ = writeln!(out, "{pad}{}", leaf(t));
                    }
                }
            }
        }
    }
}

/// Texts of the two sides of a split (feature, threshold).
type SplitTexts = dyn Fn(usize, f64) -> (String, String);

/// "name <= t" / "name > t" for a numeric feature, "col != level" / "col == level" for a
/// dummy feature split between 0 and 1.
fn split_texts(encoding: &Encoding, names: &[String]) -> Box<SplitTexts> {
    let mut dummies: Vec<Option<(String, String)>> = Vec::new();
    for c in &encoding.columns {
        match c {
            ColumnEncoding::Numeric { .. } => dummies.push(None),
            ColumnEncoding::Dummies { name, kept, .. } => {
                dummies.extend(kept.iter().map(|l| Some((name.clone(), l.clone()))))
            }
        }
    }
    let names = names.to_vec();
    Box::new(move |j, threshold| {
        if let Some(Some((col, level))) = dummies.get(j) {
            if (0.0..1.0).contains(&threshold) {
                return (format!("{col} != {level}"), format!("{col} == {level}"));
            }
        }
        let name = names.get(j).map_or("?", |s| s.as_str());
        (
            format!("{name} <= {}", number(threshold, 6)),
            format!("{name} > {}", number(threshold, 6)),
        )
    })
}

impl CheckedModel for TreeModel {
    fn check(&self, _kind: &str) -> std::result::Result<(), String> {
        check_trees(
            &self.task,
            &self.feature_names,
            &self.encoding,
            std::slice::from_ref(&self.tree),
        )
    }
}

impl Classifier for TreeModel {
    fn classes(&self) -> &[String] {
        self.task.classes()
    }

    fn encoding(&self) -> &Encoding {
        &self.encoding
    }

    fn describe(&self) -> String {
        self.text()
    }

    fn predict_proba(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        values_to_proba(&self.tree.values(x), self.classes().len())
    }
}

impl Regressor for TreeModel {
    fn target(&self) -> &str {
        self.task.target()
    }

    fn encoding(&self) -> &Encoding {
        &self.encoding
    }

    fn describe(&self) -> String {
        self.text()
    }

    fn predict(&self, x: &DMatrix<f64>) -> Vec<f64> {
        values_to_predictions(&self.tree.values(x))
    }
}

/// CART / TAO / TMO: axis splits `x_j <= threshold` (left), any shape.
pub fn axis_tree_diagram(model: &TreeModel) -> TreeDiagram {
    let tree = &model.tree;
    let nodes = tree
        .nodes
        .iter()
        .enumerate()
        .map(|(t, node)| match &node.branch {
            Some(b) => DiagramNode {
                lines: vec![
                    format!("node {t} ({} rows)", node.n_samples),
                    format!(
                        "{} <= {}",
                        feature(&model.feature_names, b.split.feature),
                        number(b.split.threshold, 4)
                    ),
                ],
                children: Some((b.left, b.right)),
            },
            None => DiagramNode {
                lines: match &model.task {
                    TreeTask::Classification { classes } => {
                        let best = (0..node.value.len())
                            .max_by(|&a, &b| node.value[a].total_cmp(&node.value[b]))
                            .unwrap_or(0);
                        let mut lines = vec![format!(
                            "leaf {t}: {} ({} rows)",
                            classes.get(best).map_or("?", |s| s.as_str()),
                            node.n_samples
                        )];
                        for (k, class) in classes.iter().enumerate() {
                            lines.push(format!(
                                "P({class}) = {:.3}",
                                node.value.get(k).copied().unwrap_or(0.0)
                            ));
                        }
                        lines
                    }
                    TreeTask::Regression { target } => vec![
                        format!("leaf {t} ({} rows)", node.n_samples),
                        format!(
                            "{target} = {:.4}",
                            node.value.first().copied().unwrap_or(f64::NAN)
                        ),
                    ],
                },
                children: None,
            },
        })
        .collect();
    TreeDiagram {
        title: format!("{} tree ({} nodes)", model.learner, tree.nodes.len()),
        left_label: "yes".to_string(),
        right_label: "no".to_string(),
        nodes,
    }
}

glassbox_core::fitted_model!(TreeModel, either, diagram = axis_tree_diagram);

/// CART as a heuristic learner: one greedy tree, grown to the depth and pruned as configured.
impl HeuristicLearner for CartConfig {
    type Model = TreeModel;

    fn name(&self) -> &'static str {
        NAME
    }
    fn is_regression(&self) -> bool {
        self.criterion.is_regression()
    }
    fn depth(&self) -> Option<usize> {
        self.depth
    }
    fn check(&self, regression: bool, features: usize) -> Result<()> {
        crate::heuristic::check_features(NAME, features)?;
        CartConfig::check(self, regression)
    }
    fn fit(
        &self,
        data: &TrainingSet<'_>,
        _seed: u64,
        _start: Option<&TreeModel>,
        _solver: Option<(&dyn glassbox_core::NlpSolver, &glassbox_core::SolveOptions)>,
    ) -> Result<HeuristicFit<TreeModel>> {
        let weights = vec![1.0; data.x.nrows()];
        let tree = self.fit_tree(data.x, data.targets, &weights);
        Ok(HeuristicFit {
            model: crate::heuristic::tree_model(data, NAME, self.criterion, tree),
            iterations: 0,
            hit_time_limit: false,
            note: "grown greedily".to_string(),
        })
    }
    fn sparsity(&self, model: &TreeModel) -> (f64, f64) {
        model.sparsity()
    }
}
