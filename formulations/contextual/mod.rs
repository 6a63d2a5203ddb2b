//! Contextual classification and regression trees, CCT and CRT (the thesis' chapter 5;
//! Aldinucci, Civitelli, Di Gangi and Sestini 2022): a policy network reads a row and
//! picks one tree of a fitted random forest, and that single tree makes the prediction,
//! so every prediction comes with a shallow tree and the path the row takes through it.
//!
//! Fitting (`fit`):
//! 1. The training rows are split into a training part (for the forest and the policy) and
//!    a validation part (`validation_fraction` of them, stratified for CCT) used only for
//!    early stopping; with the runner's 80/20 holdout and the default 0.2 this is the
//!    thesis' 64/16/20.
//! 2. A random forest of `n_trees` trees of depth `depth` is grown on the training part
//!    (the thesis: 50 trees of depth at most 4, scikit-learn's other defaults).
//! 3. Every tree's reward on every training row is computed once: (5.4), +1 when the
//!    tree's class is the row's and -1 otherwise (CCT), or (5.5), 1 - 2d with d the tree's
//!    squared error normalized to [0, 1] between the row's best and worst tree (CRT).
//! 4. The policy pi_theta(a | x), a network with three linear layers (ReLU after the first
//!    two, one dropout layer of rate 0.2) and a softmax over the trees, is trained by
//!    REINFORCE with the entropy term of Algorithm 4 (`policy`, feature `torch`): per batch,
//!    a tree a_i ~ pi(.|x_i) is sampled per row and the loss
//!    -1/N sum_i (log pi(a_i|x_i) r(a_i) + lambda H(a_i|x_i)),
//!    H(a|x) = -pi(a|x) log pi(a|x), is minimized by Adam (learning rate 1e-3, no weight
//!    decay, cosine decay over the epochs). After every epoch the greedy policy is scored
//!    on the validation part (accuracy, or mean squared error for CRT); the best network is
//!    kept and training stops after `patience` epochs without improvement.
//! 5. A row is predicted by the tree i* = argmax_a pi_theta(a | x) (dropout off).
//!
//! The fitted model ([`ContextualTreeModel`]) stores the forest and the network's weights
//! as plain f32 arrays, so it predicts, explains and loads in any build; only fitting
//! needs the `torch` feature.
//!
//! Choices where the thesis is silent (each can be changed from the config):
//! - hidden layers of 128 units, dropout after the second hidden layer (before the output
//!   layer), batches of 128 rows, at most 2000 epochs (the thesis' Figure 5.2 trains about
//!   2000) and a patience of 100 epochs;
//! - the network reads the features standardized on the training part (mean 0, standard
//!   deviation 1; a constant feature is only centred);
//! - all randomness (weight initialization as torch's `nn.Linear` does it, uniform in
//!   +-1/sqrt(fan_in); batch order; dropout masks; sampled actions) is drawn from a ChaCha8
//!   generator seeded by the config, not from libtorch's global generator, so a fit is the
//!   same for a seed even when other threads use libtorch (`tch::manual_seed` is set too);
//! - the entropy term is Algorithm 4's, of the sampled action only, not the entropy of
//!   the whole distribution;
//! - the forest's trees are grown as `forest` grows them (`max_features` "sqrt" for CCT,
//!   all features for CRT, bootstrap samples), on the training part only.
//!
//! Depends on the core, on `cart` and `forest`, and (feature `torch`) on `tch`.

#[cfg(feature = "torch")]
pub mod policy;

use crate::cart::grow::{Criterion, Targets};
use crate::cart::tree::{argmax, AxisTree};
use crate::cart::TreeTask;
use crate::forest::{ForestConfig, MaxFeatures};
use glassbox_core::data::Encoding;
use glassbox_core::formulation::{FormulationInfo, ParamSpec};
use glassbox_core::learner::{HeuristicFit, HeuristicLearner, TrainingSet};
use glassbox_core::model::{CheckedModel, Classifier, Regressor};
use glassbox_core::{GlassboxError, Interrupt, Result};
use nalgebra::DMatrix;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// The name of contextual classification trees in configs and model files.
pub const CCT: &str = "cct";
/// The name of contextual regression trees.
pub const CRT: &str = "crt";

/// The `[formulation]` table of CCT and CRT.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContextualConfig {
    /// Criterion of the forest's trees (default gini for CCT, squared_error for CRT).
    pub criterion: Option<Criterion>,
    /// Maximum depth of the trees.
    pub depth: usize,
    /// Number of trees B (the actions).
    pub n_trees: usize,
    /// Features drawn per node by the forest.
    pub max_features: Option<MaxFeatures>,
    /// Minimum training rows per leaf of a tree.
    pub min_leaf: usize,
    /// Units of each of the two hidden layers.
    pub hidden: usize,
    /// Dropout rate of the dropout layer.
    pub dropout: f64,
    /// Adam's initial learning rate.
    pub learning_rate: f64,
    /// lambda, the weight of the entropy term.
    pub entropy_weight: f64,
    /// Rows per batch.
    pub batch_size: usize,
    /// Most epochs (also the period of the cosine decay).
    pub max_epochs: usize,
    /// Epochs without a better validation score before stopping.
    pub patience: usize,
    /// Part of the training rows held out for early stopping.
    pub validation_fraction: f64,
    /// Seed of the validation split, the forest and the network.
    pub seed: u64,
    /// CCT or CRT: set from the table's `name` by the formulation registry.
    #[serde(skip)]
    pub kind: ContextualKind,
    /// A stop request (Ctrl-C in `glassbox run`), checked after every epoch of the policy's
    /// training: the fit then ends with the best network so far (the runner abandons it).
    /// Not part of a config: the runner sets it from the training set's.
    #[serde(skip)]
    pub interrupt: Option<Interrupt>,
}

/// Which of the two learners a [`ContextualConfig`] configures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ContextualKind {
    /// The contextual classification tree.
    #[default]
    Cct,
    /// The contextual regression tree.
    Crt,
}

impl Default for ContextualConfig {
    fn default() -> Self {
        ContextualConfig {
            criterion: None,
            depth: 4,
            n_trees: 50,
            max_features: None,
            min_leaf: 1,
            hidden: 128,
            dropout: 0.2,
            learning_rate: 1e-3,
            entropy_weight: 1e-4,
            batch_size: 128,
            max_epochs: 2000,
            patience: 100,
            validation_fraction: 0.2,
            seed: 1,
            kind: ContextualKind::Cct,
            interrupt: None,
        }
    }
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "criterion",
        default: "",
        help: "criterion of the forest's trees (default gini for cct, squared_error for crt)",
    },
    ParamSpec {
        name: "depth",
        default: "4",
        help: "maximum depth of the forest's trees",
    },
    ParamSpec {
        name: "n_trees",
        default: "50",
        help: "trees in the forest: the policy's actions",
    },
    ParamSpec {
        name: "max_features",
        default: "",
        help: "features drawn per node by the forest (default sqrt for cct, all for crt)",
    },
    ParamSpec {
        name: "min_leaf",
        default: "1",
        help: "minimum training rows per leaf of a tree",
    },
    ParamSpec {
        name: "hidden",
        default: "128",
        help: "units of each of the policy's two hidden layers",
    },
    ParamSpec {
        name: "dropout",
        default: "0.2",
        help: "rate of the dropout layer (training only)",
    },
    ParamSpec {
        name: "learning_rate",
        default: "0.001",
        help: "Adam's initial learning rate (cosine decay over max_epochs)",
    },
    ParamSpec {
        name: "entropy_weight",
        default: "0.0001",
        help: "lambda of Algorithm 4: weight of the entropy term",
    },
    ParamSpec {
        name: "batch_size",
        default: "128",
        help: "rows per REINFORCE batch",
    },
    ParamSpec {
        name: "max_epochs",
        default: "2000",
        help: "most epochs",
    },
    ParamSpec {
        name: "patience",
        default: "100",
        help: "early stopping: epochs without a better validation score",
    },
    ParamSpec {
        name: "validation_fraction",
        default: "0.2",
        help: "part of the training rows held out for early stopping",
    },
    ParamSpec {
        name: "seed",
        default: "1",
        help: "seed of the validation split, the forest and the network",
    },
];

/// The description of CCT for `glassbox formulations`.
pub fn info_cct() -> FormulationInfo {
    FormulationInfo {
        name: CCT,
        kind: "heuristic",
        description: "contextual classification tree: a policy network trained by REINFORCE picks one tree of a random forest per row (thesis ch. 5; needs the torch feature to fit)",
        parameters: PARAMS,
    }
}

/// The description of CRT for `glassbox formulations`.
pub fn info_crt() -> FormulationInfo {
    FormulationInfo {
        name: CRT,
        kind: "heuristic",
        description: "contextual regression tree: as cct with the reward (5.5) on squared errors (thesis ch. 5; needs the torch feature to fit)",
        parameters: PARAMS,
    }
}

impl ContextualConfig {
    /// The criterion of the trees for learner `name` (CCT or CRT).
    pub fn criterion(&self, name: &str) -> Criterion {
        self.criterion.unwrap_or(if name == CRT {
            Criterion::SquaredError
        } else {
            Criterion::Gini
        })
    }

    /// The forest the policy chooses from, for learner `name`.
    pub fn forest(&self, name: &str) -> ForestConfig {
        ForestConfig {
            n_trees: self.n_trees,
            criterion: self.criterion(name),
            depth: Some(self.depth),
            min_leaf: self.min_leaf,
            max_features: self.max_features.clone(),
            seed: self.seed,
            ..ForestConfig::default()
        }
    }

    /// Checks the parameters of learner `name` for a task (`regression`) with `p` features.
    pub fn check(&self, name: &str, regression: bool, p: usize) -> Result<()> {
        let err = |m: String| Err(GlassboxError::formulation(name, m));
        if (name == CRT) != regression {
            return err(if regression {
                "the target is numeric: use name = \"crt\" for regression".into()
            } else {
                "the target is a class: use name = \"cct\" for classification".into()
            });
        }
        if self.criterion(name).is_regression() != regression {
            return err(format!(
                "criterion '{}' does not fit {name}: use {}",
                self.criterion(name).as_str(),
                if regression {
                    "\"squared_error\""
                } else {
                    "\"gini\" or \"entropy\""
                }
            ));
        }
        if self.depth == 0 {
            return err("depth must be at least 1".into());
        }
        if self.n_trees < 2 {
            return err(format!(
                "n_trees must be at least 2 (the policy chooses among them), got {}",
                self.n_trees
            ));
        }
        if self.hidden == 0 || self.batch_size == 0 || self.max_epochs == 0 {
            return err("hidden, batch_size and max_epochs must be at least 1".into());
        }
        if !(0.0..1.0).contains(&self.dropout) {
            return err(format!("dropout must be in [0, 1), got {}", self.dropout));
        }
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return err(format!(
                "learning_rate must be a positive number, got {}",
                self.learning_rate
            ));
        }
        if !(self.entropy_weight.is_finite() && self.entropy_weight >= 0.0) {
            return err(format!(
                "entropy_weight must be a number >= 0, got {}",
                self.entropy_weight
            ));
        }
        if !(self.validation_fraction > 0.0 && self.validation_fraction < 1.0) {
            return err(format!(
                "validation_fraction must be strictly between 0 and 1, got {}",
                self.validation_fraction
            ));
        }
        self.forest(name)
            .check(regression, p)
            .map_err(|e| GlassboxError::formulation(name, e.to_string()))?;
        if !cfg!(feature = "torch") {
            return err(
                "fitting needs the `torch` cargo feature (libtorch): rebuild with `--features torch` through scripts/with-torch.sh (saved models predict in any build)"
                    .into(),
            );
        }
        Ok(())
    }
}

/// The reward matrix (N x B) of (5.4): +1 where tree `b` classifies row `i` correctly,
/// -1 elsewhere.
pub fn classification_rewards(trees: &[AxisTree], x: &DMatrix<f64>, y: &[usize]) -> DMatrix<f32> {
    let mut r = DMatrix::zeros(x.nrows(), trees.len());
    for (b, tree) in trees.iter().enumerate() {
        for (i, k) in tree.predict_class(x).into_iter().enumerate() {
            r[(i, b)] = if k == y[i] { 1.0 } else { -1.0 };
        }
    }
    r
}

/// The reward matrix (N x B) of (5.5): 1 - 2d, with d the squared error of tree `b` on row
/// `i` normalized to [0, 1] between the row's best (d = 0) and worst (d = 1) tree; every
/// tree gets 1 on a row where all trees err alike.
pub fn regression_rewards(trees: &[AxisTree], x: &DMatrix<f64>, y: &[f64]) -> DMatrix<f32> {
    let errors = squared_errors(trees, x, y);
    let mut r = DMatrix::zeros(x.nrows(), trees.len());
    for i in 0..x.nrows() {
        let row = errors.row(i);
        let (lo, hi) = (row.min(), row.max());
        for b in 0..trees.len() {
            let d = if hi > lo {
                (errors[(i, b)] - lo) / (hi - lo)
            } else {
                0.0
            };
            r[(i, b)] = (1.0 - 2.0 * d) as f32;
        }
    }
    r
}

/// The squared error of every tree on every row (N x B).
fn squared_errors(trees: &[AxisTree], x: &DMatrix<f64>, y: &[f64]) -> DMatrix<f64> {
    let mut e = DMatrix::zeros(x.nrows(), trees.len());
    for (b, tree) in trees.iter().enumerate() {
        for (i, v) in tree.values(x).into_iter().enumerate() {
            e[(i, b)] = (v[0] - y[i]).powi(2);
        }
    }
    e
}

/// One dense layer `out = W in + b` of the policy network.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DenseLayer {
    /// Inputs.
    pub inputs: usize,
    /// Outputs.
    pub outputs: usize,
    /// W, `outputs x inputs`, row-major.
    pub weights: Vec<f32>,
    /// b, one per output.
    pub bias: Vec<f32>,
}

impl DenseLayer {
    /// A layer initialized as torch's `nn.Linear`: weights and bias uniform in
    /// +-1/sqrt(inputs).
    pub fn random(inputs: usize, outputs: usize, rng: &mut ChaCha8Rng) -> Self {
        let bound = 1.0 / (inputs as f32).sqrt();
        let mut draw =
            |n: usize| -> Vec<f32> { (0..n).map(|_| rng.random_range(-bound..bound)).collect() };
        let weights = draw(inputs * outputs);
        let bias = draw(outputs);
        DenseLayer {
            inputs,
            outputs,
            weights,
            bias,
        }
    }

    /// `W z + b` for the rows of `z` (N x inputs).
    fn apply(&self, z: &DMatrix<f64>) -> DMatrix<f64> {
        let w = DMatrix::from_fn(self.inputs, self.outputs, |j, o| {
            self.weights[o * self.inputs + j] as f64
        });
        let mut out = z * w;
        for mut row in out.row_iter_mut() {
            for (o, v) in row.iter_mut().enumerate() {
                *v += self.bias[o] as f64;
            }
        }
        out
    }
}

/// The policy pi_theta(a | x): standardization, then the dense layers with ReLU between
/// them, then a softmax over the trees (dropout is a training device only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PolicyNetwork {
    /// Per-feature mean of the training part.
    pub mean: Vec<f64>,
    /// Per-feature scale (standard deviation, 1 for a constant feature).
    pub scale: Vec<f64>,
    /// The layers, input first.
    pub layers: Vec<DenseLayer>,
}

impl PolicyNetwork {
    /// An initialized network for `p` features and `actions` trees with two hidden layers
    /// of `hidden` units, standardizing as the rows of `x` demand.
    pub fn new(x: &DMatrix<f64>, hidden: usize, actions: usize, rng: &mut ChaCha8Rng) -> Self {
        let p = x.ncols();
        let n = x.nrows().max(1) as f64;
        let mean: Vec<f64> = (0..p).map(|j| x.column(j).sum() / n).collect();
        let scale = (0..p)
            .map(|j| {
                let var = x
                    .column(j)
                    .iter()
                    .map(|v| (v - mean[j]).powi(2))
                    .sum::<f64>()
                    / n;
                if var > 0.0 {
                    var.sqrt()
                } else {
                    1.0
                }
            })
            .collect();
        let layers = vec![
            DenseLayer::random(p, hidden, rng),
            DenseLayer::random(hidden, hidden, rng),
            DenseLayer::random(hidden, actions, rng),
        ];
        PolicyNetwork {
            mean,
            scale,
            layers,
        }
    }

    /// The standardized features the network reads.
    pub fn standardize(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        DMatrix::from_fn(x.nrows(), x.ncols(), |i, j| {
            (x[(i, j)] - self.mean[j]) / self.scale[j]
        })
    }

    /// The probabilities pi(a | x) of every tree a for every row of `x` (N x B).
    pub fn probabilities(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        let mut z = self.standardize(x);
        for (k, layer) in self.layers.iter().enumerate() {
            z = layer.apply(&z);
            if k + 1 < self.layers.len() {
                z.apply(|v| *v = v.max(0.0));
            }
        }
        for mut row in z.row_iter_mut() {
            let top = row.max();
            row.apply(|v| *v = (*v - top).exp());
            let total = row.sum();
            row /= total;
        }
        z
    }

    /// The tree each row is given: argmax of pi(. | x) (ties to the lower index).
    pub fn choose(&self, x: &DMatrix<f64>) -> Vec<usize> {
        let pi = self.probabilities(x);
        (0..pi.nrows())
            .map(|i| argmax(&pi.row(i).iter().copied().collect::<Vec<_>>()))
            .collect()
    }
}

/// A fitted contextual tree: the forest, the policy, and what it needs to read the user's
/// table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContextualTreeModel {
    /// "cct" or "crt": the kind of its model file.
    pub learner: String,
    /// The criterion the trees were grown with.
    pub criterion: Criterion,
    /// Classes or target.
    pub task: TreeTask,
    /// Encoded feature names.
    pub feature_names: Vec<String>,
    /// How raw columns are encoded.
    pub encoding: Encoding,
    /// The forest's trees (the actions).
    pub trees: Vec<AxisTree>,
    /// The policy.
    pub policy: PolicyNetwork,
    /// How many training rows (training part) the policy gives to each tree.
    pub training_choices: Vec<usize>,
}

/// Why one row got its prediction: the tree the policy chose, with what probability, and
/// the row's path through it.
#[derive(Clone, Debug, PartialEq)]
pub struct Explanation {
    /// The chosen tree (index into the forest).
    pub tree: usize,
    /// pi(tree | x).
    pub probability: f64,
    /// The tests on the path, root first: (feature, threshold, went left).
    pub path: Vec<(usize, f64, bool)>,
    /// The leaf's value (class fractions or the mean target).
    pub leaf_value: Vec<f64>,
}

impl ContextualTreeModel {
    /// Saves the model as JSON, tagged with its learner.
    pub fn save(&self, path: &Path) -> Result<()> {
        glassbox_core::model::save_json(path, &self.learner, self)
    }

    /// Loads a model saved by [`ContextualTreeModel::save`] (CCT or CRT).
    pub fn load(path: &Path) -> Result<Self> {
        let kind = glassbox_core::model::model_kind(path)?;
        if kind == CCT || kind == CRT {
            // Checked by `CheckedModel`.
            glassbox_core::model::load_json(path, &kind)
        } else {
            Err(GlassboxError::Model {
                file: path.display().to_string(),
                message: format!("this is a '{kind}' model, expected '{CCT}' or '{CRT}'"),
            })
        }
    }

    /// Whether it is a CRT.
    pub fn is_regression(&self) -> bool {
        matches!(self.task, TreeTask::Regression { .. })
    }

    /// The explanation of every row of `x`.
    pub fn explain(&self, x: &DMatrix<f64>) -> Vec<Explanation> {
        let pi = self.policy.probabilities(x);
        (0..x.nrows())
            .map(|i| {
                let row: Vec<f64> = pi.row(i).iter().copied().collect();
                let b = argmax(&row);
                let tree = &self.trees[b];
                let mut path = Vec::new();
                let mut t = 0;
                while let Some(branch) = &tree.nodes[t].branch {
                    let left = branch.split.goes_left(x, i);
                    path.push((branch.split.feature, branch.split.threshold, left));
                    t = if left { branch.left } else { branch.right };
                }
                Explanation {
                    tree: b,
                    probability: row[b],
                    path,
                    leaf_value: tree.nodes[t].value.clone(),
                }
            })
            .collect()
    }

    /// An explanation as one line: "tree 7 (p 0.83): f1 <= 0.5 and f4 > 2 -> class yes".
    pub fn explanation_text(&self, e: &Explanation) -> String {
        let name = |j: usize| self.feature_names.get(j).map_or("?", |s| s.as_str());
        let tests: Vec<String> = e
            .path
            .iter()
            .map(|&(j, t, left)| format!("{} {} {t:.6}", name(j), if left { "<=" } else { ">" }))
            .collect();
        let outcome = match &self.task {
            TreeTask::Classification { classes } => {
                let k = argmax(&e.leaf_value);
                format!("class {}", classes.get(k).map_or("?", |s| s.as_str()))
            }
            TreeTask::Regression { target } => format!(
                "{target} = {:.6}",
                e.leaf_value.first().unwrap_or(&f64::NAN)
            ),
        };
        let tests = if tests.is_empty() {
            "(no test)".to_string()
        } else {
            tests.join(" and ")
        };
        format!(
            "tree {} (p {:.3}): {tests} -> {outcome}",
            e.tree, e.probability
        )
    }

    /// The leaf value of the chosen tree for every row.
    fn chosen_values(&self, x: &DMatrix<f64>) -> Vec<Vec<f64>> {
        let choice = self.policy.choose(x);
        choice
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                let tree = &self.trees[b];
                tree.nodes[tree.leaf_of(x, i)].value.clone()
            })
            .collect()
    }

    /// Local and global sparsity (percent) over the splits of all trees.
    pub fn sparsity(&self) -> (f64, f64) {
        let p = self.feature_names.len();
        let blocks: Vec<DMatrix<f64>> =
            self.trees.iter().map(|t| t.coefficient_matrix(p)).collect();
        let cols: usize = blocks.iter().map(|b| b.ncols()).sum();
        let mut a = DMatrix::zeros(p, cols.max(1));
        let mut c = 0;
        for b in &blocks {
            a.columns_mut(c, b.ncols()).copy_from(b);
            c += b.ncols();
        }
        (
            glassbox_core::metrics::delta_local(&a, 0.0),
            glassbox_core::metrics::delta_global(&a, 0.0),
        )
    }

    /// The model as text: the network's shape, how often each tree is chosen on the
    /// training part, and the most chosen trees in full.
    fn text(&self) -> String {
        let mut out = String::new();
        let shape: Vec<String> = std::iter::once(self.policy.mean.len())
            .chain(self.policy.layers.iter().map(|l| l.outputs))
            .map(|n| n.to_string())
            .collect();
        let _ = writeln!(
            out,
            "{} ({}): a policy network {} (ReLU, softmax) picks one of {} trees of depth <= {} per row; that tree predicts",
            if self.is_regression() { "contextual regression tree" } else { "contextual classification tree" },
            self.learner.to_uppercase(),
            shape.join("-"),
            self.trees.len(),
            self.trees.iter().map(AxisTree::depth).max().unwrap_or(0)
        );
        let total: usize = self.training_choices.iter().sum();
        let mut order: Vec<usize> = (0..self.training_choices.len())
            .filter(|&b| self.training_choices[b] > 0)
            .collect();
        order.sort_by_key(|&b| std::cmp::Reverse(self.training_choices[b]));
        let _ = writeln!(
            out,
            "trees chosen on the {total} training rows: {}",
            order
                .iter()
                .map(|&b| format!("tree {b} ({})", self.training_choices[b]))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for &b in order.iter().take(3) {
            let _ = writeln!(out, "\ntree {b}:");
            let tree = crate::cart::TreeModel {
                learner: "cart".to_string(),
                criterion: self.criterion,
                task: self.task.clone(),
                feature_names: self.feature_names.clone(),
                encoding: self.encoding.clone(),
                tree: self.trees[b].clone(),
            };
            out.push_str(&Classifier::describe(&tree));
        }
        out
    }
}

impl CheckedModel for ContextualTreeModel {
    /// The trees as a forest's; a CCT classifies and a CRT regresses; the policy reads the
    /// encoded features and scores every tree; one training count per tree.
    fn check(&self, kind: &str) -> std::result::Result<(), String> {
        if (kind == CRT) != self.is_regression() {
            return Err(format!(
                "a '{kind}' model with a {} task",
                if self.is_regression() {
                    "regression"
                } else {
                    "classification"
                }
            ));
        }
        crate::cart::check_trees(&self.task, &self.feature_names, &self.encoding, &self.trees)?;
        let b = self.trees.len();
        if self.training_choices.len() != b {
            return Err(format!(
                "{} training count(s) for {b} trees",
                self.training_choices.len()
            ));
        }
        if self
            .training_choices
            .iter()
            .try_fold(0usize, |sum, &n| sum.checked_add(n))
            .is_none()
        {
            return Err("the training counts overflow".to_string());
        }
        self.policy
            .check(self.encoding.n_features(), b)
            .map_err(|m| format!("policy: {m}"))
    }
}

impl PolicyNetwork {
    /// Checks a network read from a file: standardization of `features` features (positive
    /// scales), layers that chain from `features` inputs to `actions` outputs, each with
    /// `inputs x outputs` weights and `outputs` biases. (serde_json reads only finite
    /// numbers, and refuses one out of f32's range.)
    pub fn check(&self, features: usize, actions: usize) -> std::result::Result<(), String> {
        if self.mean.len() != features || self.scale.len() != features {
            return Err(format!(
                "{} mean(s) and {} scale(s) for {features} features",
                self.mean.len(),
                self.scale.len()
            ));
        }
        if let Some(j) = (0..features).find(|&j| self.scale[j] <= 0.0) {
            return Err(format!(
                "feature {j} has scale {}, expected a positive scale",
                self.scale[j]
            ));
        }
        if self.layers.is_empty() {
            return Err("the network has no layers".to_string());
        }
        let mut inputs = features;
        for (k, layer) in self.layers.iter().enumerate() {
            if layer.inputs != inputs {
                return Err(format!(
                    "layer {k} has {} inputs, expected {inputs}",
                    layer.inputs
                ));
            }
            if layer.inputs.checked_mul(layer.outputs) != Some(layer.weights.len())
                || layer.bias.len() != layer.outputs
            {
                return Err(format!(
                    "layer {k} ({} x {}) has {} weight(s) and {} bias(es)",
                    layer.outputs,
                    layer.inputs,
                    layer.weights.len(),
                    layer.bias.len()
                ));
            }
            inputs = layer.outputs;
        }
        if inputs != actions {
            return Err(format!(
                "the last layer has {inputs} outputs for {actions} trees"
            ));
        }
        Ok(())
    }
}

impl Classifier for ContextualTreeModel {
    fn classes(&self) -> &[String] {
        self.task.classes()
    }

    fn encoding(&self) -> &Encoding {
        &self.encoding
    }

    fn describe(&self) -> String {
        self.text()
    }

    /// The class fractions of the leaf the row reaches in its chosen tree.
    fn predict_proba(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        crate::cart::values_to_proba(&self.chosen_values(x), self.classes().len())
    }
}

impl Regressor for ContextualTreeModel {
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
        crate::cart::values_to_predictions(&self.chosen_values(x))
    }
}

/// What a fit reports besides the model.
#[derive(Clone, Debug)]
pub struct ContextualFit {
    /// The model.
    pub model: ContextualTreeModel,
    /// Epochs trained.
    pub epochs: usize,
    /// The epoch whose network was kept (1-based).
    pub best_epoch: usize,
    /// Its validation score (accuracy, or mean squared error for CRT).
    pub validation_score: f64,
    /// The score on the validation part of the forest's best single tree.
    pub best_tree_validation_score: f64,
    /// The forest's validation score (soft vote or mean).
    pub forest_validation_score: f64,
    /// The mean reward of the greedy policy on the training part.
    pub training_reward: f64,
    /// Seconds spent growing the forest and computing the rewards.
    pub forest_seconds: f64,
    /// Seconds spent training the policy.
    pub policy_seconds: f64,
    /// Whether the training ended on a stop request.
    pub interrupted: bool,
}

/// The validation part of rows with `targets`, per the module comment: `(train, val)`.
pub fn validation_split(
    targets: Targets<'_>,
    fraction: f64,
    seed: u64,
) -> Result<(Vec<usize>, Vec<usize>)> {
    match targets {
        Targets::Classes { y, .. } => glassbox_core::data::stratified_split(y, fraction, seed),
        Targets::Values(y) => glassbox_core::data::random_split(y.len(), fraction, seed),
    }
}

/// Accuracy (classification, higher is better) or minus the mean squared error
/// (regression) of predictions `leaf values` against `targets` restricted to `rows`.
fn score(values: &[Vec<f64>], targets: Targets<'_>, rows: &[usize]) -> f64 {
    match targets {
        Targets::Classes { y, .. } => {
            let hits = rows
                .iter()
                .zip(values)
                .filter(|(&i, v)| argmax(v) == y[i])
                .count();
            hits as f64 / rows.len().max(1) as f64
        }
        Targets::Values(y) => {
            -rows
                .iter()
                .zip(values)
                .map(|(&i, v)| (v[0] - y[i]).powi(2))
                .sum::<f64>()
                / rows.len().max(1) as f64
        }
    }
}

/// The score (accuracy, or minus the MSE) of the rows' chosen trees (`choice[k]` for row
/// `rows[k]`) as `score` gives it.
pub fn score_choices(
    trees: &[AxisTree],
    x: &DMatrix<f64>,
    choice: &[usize],
    targets: Targets<'_>,
    rows: &[usize],
) -> f64 {
    let values: Vec<Vec<f64>> = choice
        .iter()
        .enumerate()
        .map(|(k, &b)| trees[b].nodes[trees[b].leaf_of(x, k)].value.clone())
        .collect();
    score(&values, targets, rows)
}

/// Fits CCT (`name` = "cct") or CRT on `x` and `targets` (see the module comment).
#[cfg(feature = "torch")]
pub fn fit(
    config: &ContextualConfig,
    name: &str,
    x: &DMatrix<f64>,
    targets: Targets<'_>,
    task: &TreeTask,
    encoding: &Encoding,
) -> Result<ContextualFit> {
    let (train, val) = validation_split(targets, config.validation_fraction, config.seed)?;
    let x_train = x.select_rows(train.iter());
    let x_val = x.select_rows(val.iter());
    let pick = |rows: &[usize]| -> (Vec<usize>, Vec<f64>) {
        match targets {
            Targets::Classes { y, .. } => (rows.iter().map(|&i| y[i]).collect(), Vec::new()),
            Targets::Values(y) => (Vec::new(), rows.iter().map(|&i| y[i]).collect()),
        }
    };
    let (yc_train, yv_train) = pick(&train);
    let train_targets = match targets {
        Targets::Classes { n_classes, .. } => Targets::Classes {
            y: &yc_train,
            n_classes,
        },
        Targets::Values(_) => Targets::Values(&yv_train),
    };
    let started = std::time::Instant::now();
    let trees = config.forest(name).fit_trees(&x_train, train_targets)?;
    let rewards = match train_targets {
        Targets::Classes { y, .. } => classification_rewards(&trees, &x_train, y),
        Targets::Values(y) => regression_rewards(&trees, &x_train, y),
    };
    // Scores on the validation part: each tree's, the forest's, and the policy's per epoch.
    let best_tree_validation_score = trees
        .iter()
        .map(|t| {
            let values: Vec<Vec<f64>> = t.values(&x_val).into_iter().map(<[f64]>::to_vec).collect();
            score(&values, targets, &val)
        })
        .fold(f64::NEG_INFINITY, f64::max);
    let forest_validation_score = {
        let width = trees[0].nodes[0].value.len();
        let mut mean = vec![vec![0.0; width]; val.len()];
        for t in &trees {
            for (i, v) in t.values(&x_val).into_iter().enumerate() {
                for (m, a) in mean[i].iter_mut().zip(v) {
                    *m += a / trees.len() as f64;
                }
            }
        }
        score(&mean, targets, &val)
    };
    let validation = |choice: &[usize]| score_choices(&trees, &x_val, choice, targets, &val);
    let forest_seconds = started.elapsed().as_secs_f64();
    let trained = policy::train(config, &x_train, &rewards, &validation, &x_val)?;
    let policy_seconds = started.elapsed().as_secs_f64() - forest_seconds;
    let choices = trained.network.choose(&x_train);
    let mut training_choices = vec![0; trees.len()];
    let mut reward = 0.0;
    for (i, &b) in choices.iter().enumerate() {
        training_choices[b] += 1;
        reward += rewards[(i, b)] as f64;
    }
    let sign = if name == CRT { -1.0 } else { 1.0 };
    Ok(ContextualFit {
        model: ContextualTreeModel {
            learner: name.to_string(),
            criterion: config.criterion(name),
            task: task.clone(),
            feature_names: encoding.feature_names(),
            encoding: encoding.clone(),
            trees,
            policy: trained.network,
            training_choices,
        },
        epochs: trained.epochs,
        best_epoch: trained.best_epoch,
        validation_score: sign * trained.best_score,
        best_tree_validation_score: sign * best_tree_validation_score,
        forest_validation_score: sign * forest_validation_score,
        training_reward: reward / choices.len().max(1) as f64,
        forest_seconds,
        policy_seconds,
        interrupted: trained.interrupted,
    })
}

/// Without the `torch` feature a contextual tree cannot be fitted.
#[cfg(not(feature = "torch"))]
pub fn fit(
    _config: &ContextualConfig,
    name: &str,
    _x: &DMatrix<f64>,
    _targets: Targets<'_>,
    _task: &TreeTask,
    _encoding: &Encoding,
) -> Result<ContextualFit> {
    Err(GlassboxError::formulation(
        name,
        "fitting needs the `torch` cargo feature: rebuild with `--features torch`",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::tree::{AxisSplit, Branch, Node};
    use rand::SeedableRng;

    /// x0 <= 0.5 ? class 0 : class 1, and its mirror image.
    fn stumps() -> Vec<AxisTree> {
        let stump = |left: Vec<f64>, right: Vec<f64>| AxisTree {
            nodes: vec![
                Node {
                    branch: Some(Branch {
                        split: AxisSplit {
                            feature: 0,
                            threshold: 0.5,
                        },
                        left: 1,
                        right: 2,
                    }),
                    ..Node::leaf(vec![0.5, 0.5])
                },
                Node::leaf(left),
                Node::leaf(right),
            ],
        };
        vec![
            stump(vec![1.0, 0.0], vec![0.0, 1.0]),
            stump(vec![0.0, 1.0], vec![1.0, 0.0]),
        ]
    }

    #[test]
    fn rewards_are_those_of_5_4_and_5_5() {
        let trees = stumps();
        let x = DMatrix::from_row_slice(3, 1, &[0.0, 1.0, 1.0]);
        let r = classification_rewards(&trees, &x, &[0, 1, 0]);
        assert_eq!(
            r.row(0).iter().copied().collect::<Vec<_>>(),
            vec![1.0, -1.0]
        );
        assert_eq!(
            r.row(1).iter().copied().collect::<Vec<_>>(),
            vec![1.0, -1.0]
        );
        assert_eq!(
            r.row(2).iter().copied().collect::<Vec<_>>(),
            vec![-1.0, 1.0]
        );
        // Regression trees predicting 0 and 1 (leaf value [0] of the stumps' left leaf is
        // 1 for tree 0 and 0 for tree 1 at x <= 0.5), and a third predicting 0.5.
        let mut trees = stumps();
        trees.push(AxisTree::single_leaf(vec![0.5]));
        let x = DMatrix::from_row_slice(2, 1, &[0.0, 0.0]);
        let r = regression_rewards(&trees, &x, &[1.0, 0.5]);
        // Row 0: errors 0, 1, 0.25 -> d = 0, 1, 0.25 -> r = 1, -1, 0.5.
        assert_eq!(
            r.row(0).iter().copied().collect::<Vec<_>>(),
            vec![1.0, -1.0, 0.5]
        );
        // Row 1: errors 0.25, 0.25, 0 -> d = 1, 1, 0.
        assert_eq!(
            r.row(1).iter().copied().collect::<Vec<_>>(),
            vec![-1.0, -1.0, 1.0]
        );
        // All trees alike: every reward is 1.
        let same = vec![AxisTree::single_leaf(vec![2.0]); 3];
        assert!(regression_rewards(&same, &x, &[0.0, 1.0])
            .iter()
            .all(|&v| v == 1.0));
    }

    /// A model whose policy sends x0 <= 0.5 to tree 0 and the rest to tree 1.
    fn model() -> ContextualTreeModel {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let x = DMatrix::from_row_slice(2, 1, &[0.0, 1.0]);
        let mut policy = PolicyNetwork::new(&x, 2, 2, &mut rng);
        // Standardized x is -1 or +1. Hidden: h0 = relu(-z), h1 = relu(z); identity
        // second layer; output logits 5 h0 and 5 h1.
        policy.layers[0].weights = vec![-1.0, 1.0];
        policy.layers[0].bias = vec![0.0, 0.0];
        policy.layers[1].weights = vec![1.0, 0.0, 0.0, 1.0];
        policy.layers[1].bias = vec![0.0, 0.0];
        policy.layers[2].weights = vec![5.0, 0.0, 0.0, 5.0];
        policy.layers[2].bias = vec![0.0, 0.0];
        let table = glassbox_core::data::Table::from_reader(
            "test",
            "x0,target\n0,a\n1,b\n".as_bytes(),
            &glassbox_core::data::CsvOptions::default(),
        )
        .unwrap();
        let encoding = Encoding::fit(&table);
        ContextualTreeModel {
            learner: CCT.to_string(),
            criterion: Criterion::Gini,
            task: TreeTask::Classification {
                classes: vec!["a".into(), "b".into()],
            },
            feature_names: encoding.feature_names(),
            encoding,
            trees: stumps(),
            policy,
            training_choices: vec![1, 1],
        }
    }

    #[test]
    fn the_chosen_tree_predicts_and_explains_and_the_model_survives_a_round_trip() {
        let m = model();
        let x = DMatrix::from_row_slice(4, 1, &[0.0, 0.2, 0.9, 1.0]);
        assert_eq!(m.policy.choose(&x), vec![0, 0, 1, 1]);
        // Tree 0 says class 0 for x <= 0.5; tree 1 says class 0 for x > 0.5.
        assert_eq!(Classifier::predict(&m, &x), vec![0, 0, 0, 0]);
        let pi = m.policy.probabilities(&x);
        for i in 0..4 {
            assert!((pi.row(i).sum() - 1.0).abs() < 1e-12);
        }
        let e = m.explain(&x);
        assert_eq!(e[3].tree, 1);
        assert_eq!(e[3].path, vec![(0, 0.5, false)]);
        // z = +1: logits 5 and 0.
        let p = 1.0 / (1.0 + (-5.0f64).exp());
        assert!((e[3].probability - p).abs() < 1e-9);
        let text = m.explanation_text(&e[3]);
        assert!(text.starts_with("tree 1 (p 0.993): x0 > 0.5"), "{text}");
        assert!(text.ends_with("-> class a"), "{text}");
        assert!(m.describe_text().contains("network 1-2-2-2"));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.json");
        m.save(&path).unwrap();
        assert_eq!(ContextualTreeModel::load(&path).unwrap(), m);
        let forest = crate::forest::ForestModel {
            criterion: Criterion::Gini,
            task: m.task.clone(),
            feature_names: m.feature_names.clone(),
            encoding: m.encoding.clone(),
            trees: m.trees.clone(),
        };
        forest.save(&path).unwrap();
        let err = ContextualTreeModel::load(&path).unwrap_err().to_string();
        assert!(err.contains("'forest' model"), "{err}");
    }

    impl ContextualTreeModel {
        fn describe_text(&self) -> String {
            self.text()
        }
    }

    #[test]
    fn bad_parameters_are_errors_naming_them() {
        let c = ContextualConfig::default();
        let msg = |c: &ContextualConfig, name: &str, regression: bool| {
            c.check(name, regression, 3).unwrap_err().to_string()
        };
        assert!(msg(&c, CCT, true).contains("crt"));
        assert!(msg(&c, CRT, false).contains("cct"));
        let bad = ContextualConfig {
            dropout: 1.0,
            ..c.clone()
        };
        assert!(msg(&bad, CCT, false).contains("dropout"));
        let bad = ContextualConfig {
            n_trees: 1,
            ..c.clone()
        };
        assert!(msg(&bad, CCT, false).contains("n_trees"));
        let bad = ContextualConfig {
            validation_fraction: 0.0,
            ..c.clone()
        };
        assert!(msg(&bad, CCT, false).contains("validation_fraction"));
        let bad = ContextualConfig {
            criterion: Some(Criterion::SquaredError),
            ..c
        };
        assert!(msg(&bad, CCT, false).contains("criterion"));
    }
}

glassbox_core::fitted_model!(ContextualTreeModel, either, explainer = Explainer);

/// `glassbox explain` on a CCT or CRT: per row, the prediction, the tree the policy chose
/// (with its probability) and the row's path through it, as CSV. There is no plot.
impl glassbox_core::model::Explainer for ContextualTreeModel {
    fn explain(
        &self,
        data: &Path,
        out: &Path,
        plot: Option<&Path>,
    ) -> Result<glassbox_core::model::ExplainReport> {
        if plot.is_some() {
            return Err(GlassboxError::Config(
                "--plot draws S-ORRT explanations only: leave it out for a contextual tree"
                    .to_string(),
            ));
        }
        let target = match &self.task {
            TreeTask::Regression { target } => target.as_str(),
            // The column it was trained with (models saved before the encoding said: the
            // default name).
            TreeTask::Classification { .. } => self.encoding.target.as_deref().unwrap_or("target"),
        };
        let (table, x) = glassbox_core::data::read_for_model(&self.encoding, data, target)?;
        let explanations = ContextualTreeModel::explain(self, &x);
        let probabilities: Vec<f64> = explanations.iter().map(|e| e.probability).collect();
        glassbox_core::data::check_finite_predictions(&probabilities, &table)?;
        let mut text = String::from("row,tree,probability,explanation\n");
        for (i, e) in explanations.iter().enumerate() {
            let line = self.explanation_text(e).replace('"', "\"\"");
            text.push_str(&format!(
                "{},{},{},\"{line}\"\n",
                i + 1,
                e.tree,
                e.probability
            ));
        }
        glassbox_core::model::write_atomically(out, text.as_bytes())?;
        Ok(glassbox_core::model::ExplainReport {
            messages: vec![format!(
                "wrote the explanations of {} rows to {}",
                explanations.len(),
                out.display()
            )],
            notes: Vec::new(),
        })
    }
}

/// CCT and CRT as heuristic learners (fitting needs the `torch` feature; without it the fit is
/// an error saying so). The seed varies by split.
impl HeuristicLearner for ContextualConfig {
    type Model = ContextualTreeModel;

    fn name(&self) -> &'static str {
        match self.kind {
            ContextualKind::Cct => CCT,
            ContextualKind::Crt => CRT,
        }
    }
    fn is_regression(&self) -> bool {
        self.kind == ContextualKind::Crt
    }
    fn depth(&self) -> Option<usize> {
        Some(self.depth)
    }
    fn check(&self, regression: bool, features: usize) -> Result<()> {
        let name = HeuristicLearner::name(self);
        crate::heuristic::check_features(name, features)?;
        ContextualConfig::check(self, name, regression, features)
    }
    fn fit(
        &self,
        data: &TrainingSet<'_>,
        seed: u64,
        _start: Option<&ContextualTreeModel>,
        _solver: Option<(&dyn glassbox_core::NlpSolver, &glassbox_core::SolveOptions)>,
    ) -> Result<HeuristicFit<ContextualTreeModel>> {
        let name = HeuristicLearner::name(self);
        let c = ContextualConfig {
            seed: crate::heuristic::split_seed(self.seed, seed),
            interrupt: data.interrupt.cloned(),
            ..self.clone()
        };
        let fit = fit(&c, name, data.x, data.targets, data.task, data.encoding)?;
        let what = if name == CRT { "mse" } else { "accuracy" };
        Ok(HeuristicFit {
            note: format!(
                "{} epochs{}, kept epoch {}; validation {what} {:.4} (best single tree {:.4}, forest {:.4}); mean training reward {:.4}",
                fit.epochs,
                if fit.interrupted { " (stopped on request)" } else { "" },
                fit.best_epoch,
                fit.validation_score,
                fit.best_tree_validation_score,
                fit.forest_validation_score,
                fit.training_reward
            ),
            iterations: fit.epochs as u64,
            hit_time_limit: false,
            model: fit.model,
        })
    }
    fn sparsity(&self, model: &ContextualTreeModel) -> (f64, f64) {
        model.sparsity()
    }
}
