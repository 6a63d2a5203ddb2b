//! Random forest (Breiman 2001): CART trees grown on bootstrap samples with a random subset
//! of `max_features` features drawn at every node; the forest predicts the mean of its
//! trees' class fractions (scikit-learn's soft vote) or values. It is a learner of its own
//! and TMO's initial population (thesis, Algorithm 3, line 2).
//!
//! Seeded and parallel: tree `t` draws its bootstrap sample and its features from its own
//! generator (ChaCha8 seeded with `seed`, stream `t`), and the trees are grown in parallel
//! with rayon and collected in order, so a seed gives the same forest whatever the number
//! of threads. A stop request (`TrainingSet::interrupt`) is checked before each tree: the
//! trees not yet started are skipped (all but the first, so that the forest stays a model)
//! and the fit returns the ones grown (the runner then abandons the unit).
//!
//! Depends on the core and on `cart` (the tree type and its growth).

use crate::cart::grow::{self, Criterion, GrowParams, Targets};
use crate::cart::tree::AxisTree;
use crate::cart::{CartConfig, TreeTask};
use glassbox_core::data::Encoding;
use glassbox_core::formulation::{FormulationInfo, ParamSpec};
use glassbox_core::learner::{HeuristicFit, HeuristicLearner, TrainingSet};
use glassbox_core::model::{CheckedModel, Classifier, Regressor};
use glassbox_core::{GlassboxError, Interrupt, Result};
use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// The most trees a forest (or TMO's population) may have: far beyond what any fit needs,
/// and below sizes whose bookkeeping alone would exhaust memory (10^12 aborted the process).
pub const MAX_TREES: usize = 1_000_000;
/// The name configs and saved models use.
pub const NAME: &str = "forest";

/// How many features each node draws.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MaxFeatures {
    /// This many.
    Count(usize),
    /// This fraction of p (rounded down, at least 1).
    Fraction(f64),
    /// "sqrt", "log2" (of p, rounded down, at least 1) or "all".
    Rule(String),
}

impl MaxFeatures {
    /// The number of features for `p` features.
    pub fn resolve(&self, p: usize) -> Result<usize> {
        let err = |m: String| Err(GlassboxError::formulation(NAME, m));
        let m = match self {
            MaxFeatures::Count(m) if *m >= 1 && *m <= p.max(1) => *m,
            // As scikit-learn: a count beyond the data's features is a mistake, not "all".
            MaxFeatures::Count(m) if *m >= 1 => {
                return err(format!(
                    "max_features = {m} is more than the data's {p} features (a count must be \
                     1 to {p}; \"all\" or 1.0 takes every feature)"
                ))
            }
            MaxFeatures::Count(_) => return err("max_features must be at least 1".into()),
            MaxFeatures::Fraction(f) if *f > 0.0 && *f <= 1.0 => (f * p as f64) as usize,
            MaxFeatures::Fraction(f) => {
                return err(format!("max_features as a fraction must be in (0, 1], got {f}"))
            }
            MaxFeatures::Rule(r) => match r.as_str() {
                "sqrt" => (p as f64).sqrt() as usize,
                "log2" => (p as f64).log2() as usize,
                "all" => p,
                other => {
                    return err(format!(
                        "max_features '{other}' is unknown: use \"sqrt\", \"log2\", \"all\", a count or a fraction"
                    ))
                }
            },
        };
        Ok(m.clamp(1, p.max(1)))
    }
}

/// The `[formulation]` table of the random forest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ForestConfig {
    /// Number of trees.
    pub n_trees: usize,
    /// Criterion of the trees.
    pub criterion: Criterion,
    /// Maximum depth of the trees; none for no limit.
    pub depth: Option<usize>,
    /// Minimum rows per leaf.
    pub min_leaf: usize,
    /// Minimum rows to split a node.
    pub min_split: usize,
    /// Features drawn per node; default "sqrt" for classification, "all" for regression
    /// (scikit-learn's defaults).
    pub max_features: Option<MaxFeatures>,
    /// Grow each tree on a bootstrap sample (else on every row).
    pub bootstrap: bool,
    /// Seed.
    pub seed: u64,
}

impl Default for ForestConfig {
    fn default() -> Self {
        ForestConfig {
            n_trees: 100,
            criterion: Criterion::Gini,
            depth: None,
            min_leaf: 1,
            min_split: 2,
            max_features: None,
            bootstrap: true,
            seed: 1,
        }
    }
}

/// The description `glassbox formulations` prints.
pub fn info() -> FormulationInfo {
    const PARAMS: &[ParamSpec] = &[
        ParamSpec {
            name: "n_trees",
            default: "100",
            help: "number of trees",
        },
        ParamSpec {
            name: "criterion",
            default: "\"gini\"",
            help: "gini | entropy | squared_error (regression)",
        },
        ParamSpec {
            name: "depth",
            default: "",
            help: "maximum depth of each tree; none for no limit",
        },
        ParamSpec {
            name: "min_leaf",
            default: "1",
            help: "minimum training rows per leaf",
        },
        ParamSpec {
            name: "min_split",
            default: "2",
            help: "minimum training rows to split a node",
        },
        ParamSpec {
            name: "max_features",
            default: "",
            help: "features drawn per node: \"sqrt\" | \"log2\" | \"all\" | count | fraction (default sqrt, all for regression)",
        },
        ParamSpec {
            name: "bootstrap",
            default: "true",
            help: "grow each tree on a bootstrap sample",
        },
        ParamSpec {
            name: "seed",
            default: "1",
            help: "seed of the bootstrap samples and feature draws",
        },
    ];
    FormulationInfo {
        name: NAME,
        kind: "heuristic",
        description: "random forest of CART trees: bootstrap samples, max_features per node, seeded and parallel",
        parameters: PARAMS,
    }
}

impl ForestConfig {
    /// The CART parameters of one tree.
    fn cart(&self) -> CartConfig {
        CartConfig {
            criterion: self.criterion,
            depth: self.depth,
            min_leaf: self.min_leaf,
            min_split: self.min_split,
            ccp_alpha: 0.0,
            cp: None,
        }
    }

    /// Checks the parameters for a task with `p` features.
    pub fn check(&self, regression: bool, p: usize) -> Result<()> {
        self.cart()
            .check(regression)
            .map_err(|e| GlassboxError::formulation(NAME, e.to_string()))?;
        if self.n_trees == 0 || self.n_trees > MAX_TREES {
            return Err(GlassboxError::formulation(
                NAME,
                format!("n_trees must be 1 to {MAX_TREES}, got {}", self.n_trees),
            ));
        }
        self.max_features(regression).resolve(p).map(|_| ())
    }

    fn max_features(&self, regression: bool) -> MaxFeatures {
        self.max_features.clone().unwrap_or_else(|| {
            MaxFeatures::Rule(if regression { "all" } else { "sqrt" }.to_string())
        })
    }

    /// Grows the forest's trees on the rows of `x` (see the module comment).
    pub fn fit_trees(&self, x: &DMatrix<f64>, targets: Targets<'_>) -> Result<Vec<AxisTree>> {
        self.fit_trees_until(x, targets, || false)
    }

    /// [`Self::fit_trees`], skipping every tree but the first not yet started once `stop()`
    /// says so (a stop request, a time limit): the trees grown, in order (fewer than
    /// `n_trees` if it said so in time, never none).
    pub fn fit_trees_until(
        &self,
        x: &DMatrix<f64>,
        targets: Targets<'_>,
        stop: impl Fn() -> bool + Sync,
    ) -> Result<Vec<AxisTree>> {
        let regression = matches!(targets, Targets::Values(_));
        let m = self.max_features(regression).resolve(x.ncols())?;
        let params = GrowParams {
            max_features: Some(m),
            ..self.cart().grow_params()
        };
        let n = x.nrows();
        let grown: Vec<Option<AxisTree>> = (0..self.n_trees)
            .into_par_iter()
            .map(|t| {
                if t > 0 && stop() {
                    return None;
                }
                let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
                rng.set_stream(t as u64);
                let weights = if self.bootstrap {
                    bootstrap_weights(n, &mut rng)
                } else {
                    vec![1.0; n]
                };
                Some(grow::grow(x, targets, &weights, &params, Some(&mut rng)))
            })
            .collect();
        Ok(grown.into_iter().flatten().collect())
    }
}

/// A bootstrap sample of `n` rows as weights: how many times each row was drawn.
pub fn bootstrap_weights(n: usize, rng: &mut ChaCha8Rng) -> Vec<f64> {
    let mut w = vec![0.0; n];
    for _ in 0..n {
        w[rng.random_range(0..n)] += 1.0;
    }
    w
}

/// A fitted random forest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForestModel {
    /// Criterion of the trees.
    pub criterion: Criterion,
    /// Classes or target.
    pub task: TreeTask,
    /// Encoded feature names.
    pub feature_names: Vec<String>,
    /// How raw columns are encoded.
    pub encoding: Encoding,
    /// The trees.
    pub trees: Vec<AxisTree>,
}

impl CheckedModel for ForestModel {
    fn check(&self, _kind: &str) -> std::result::Result<(), String> {
        crate::cart::check_trees(&self.task, &self.feature_names, &self.encoding, &self.trees)
    }
}

impl ForestModel {
    /// Saves the model as JSON.
    pub fn save(&self, path: &Path) -> Result<()> {
        glassbox_core::model::save_json(path, NAME, self)
    }

    /// Loads a model saved by [`ForestModel::save`] (checked by [`CheckedModel`]).
    pub fn load(path: &Path) -> Result<Self> {
        glassbox_core::model::load_json(path, NAME)
    }

    /// Whether it is a regression forest.
    pub fn is_regression(&self) -> bool {
        matches!(self.task, TreeTask::Regression { .. })
    }

    /// Local and global sparsity (percent) over the splits of all trees.
    pub fn sparsity(&self) -> (f64, f64) {
        let p = self.feature_names.len();
        let blocks: Vec<DMatrix<f64>> =
            self.trees.iter().map(|t| t.coefficient_matrix(p)).collect();
        let cols: usize = blocks.iter().map(|b| b.ncols()).sum();
        let mut a = DMatrix::zeros(p, cols);
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

    /// The mean of the trees' leaf values per row.
    fn mean_values(&self, x: &DMatrix<f64>, width: usize) -> DMatrix<f64> {
        let mut sum = DMatrix::zeros(x.nrows(), width);
        for tree in &self.trees {
            for (i, v) in tree.values(x).iter().enumerate() {
                for (c, value) in v.iter().enumerate().take(width) {
                    sum[(i, c)] += value;
                }
            }
        }
        sum / self.trees.len().max(1) as f64
    }

    fn text(&self) -> String {
        let mut out = String::new();
        let depths: Vec<usize> = self.trees.iter().map(AxisTree::depth).collect();
        let leaves: usize = self.trees.iter().map(AxisTree::n_leaves).sum();
        let _ = writeln!(
            out,
            "random forest ({}) of {} trees, depth {} to {}, {:.1} leaves per tree",
            self.criterion.as_str(),
            self.trees.len(),
            depths.iter().min().unwrap_or(&0),
            depths.iter().max().unwrap_or(&0),
            leaves as f64 / self.trees.len().max(1) as f64
        );
        let mut uses = vec![0usize; self.feature_names.len()];
        for t in &self.trees {
            for s in t.splits() {
                if let Some(u) = uses.get_mut(s.feature) {
                    *u += 1;
                }
            }
        }
        let mut order: Vec<usize> = (0..uses.len()).filter(|&j| uses[j] > 0).collect();
        order.sort_by_key(|&j| std::cmp::Reverse(uses[j]));
        let _ = writeln!(out, "features by number of splits:");
        for j in order.iter().take(15) {
            let _ = writeln!(out, "  {:<30} {}", self.feature_names[*j], uses[*j]);
        }
        out
    }
}

impl Classifier for ForestModel {
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
        self.mean_values(x, self.classes().len())
    }
}

impl Regressor for ForestModel {
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
        self.mean_values(x, 1).column(0).iter().copied().collect()
    }
}

glassbox_core::fitted_model!(ForestModel, either);

/// The random forest as a heuristic learner; its seed varies by split.
impl HeuristicLearner for ForestConfig {
    type Model = ForestModel;

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
        ForestConfig::check(self, regression, features)
    }
    fn fit(
        &self,
        data: &TrainingSet<'_>,
        seed: u64,
        _start: Option<&ForestModel>,
        _solver: Option<(&dyn glassbox_core::NlpSolver, &glassbox_core::SolveOptions)>,
    ) -> Result<HeuristicFit<ForestModel>> {
        let c = ForestConfig {
            seed: crate::heuristic::split_seed(self.seed, seed),
            ..self.clone()
        };
        let trees = c.fit_trees_until(data.x, data.targets, || {
            data.interrupt.is_some_and(Interrupt::requested)
        })?;
        let note = if trees.len() < c.n_trees {
            format!(
                "stopped on request after {} of {} trees",
                trees.len(),
                c.n_trees
            )
        } else {
            format!("{} trees", c.n_trees)
        };
        Ok(HeuristicFit {
            model: ForestModel {
                criterion: c.criterion,
                task: data.task.clone(),
                feature_names: data.encoding.feature_names(),
                encoding: data.encoding.clone(),
                trees,
            },
            iterations: 0,
            hit_time_limit: false,
            note,
        })
    }
    fn sparsity(&self, model: &ForestModel) -> (f64, f64) {
        model.sparsity()
    }
}
