//! TAO for oblique trees (Carreira-Perpinan and Tavallali 2018, their "sparse oblique
//! trees"): the bottom-up pass of `tao` over care points, where the node problem, a
//! weighted 0/1 loss over the care points with a linear decision, is replaced as in the
//! paper by an l1-regularized logistic regression (class "left" against "right", each care
//! point weighted by its row's weight), solved by any NLP backend through
//! `logistic_l1::fit`. The fitted hyperplane is kept only if it misroutes strictly less
//! care-point weight than the node's current one, so the training error never increases.
//!
//! The starting tree is CART's (its splits as hyperplanes with one nonzero coefficient).
//! Features are min-max scaled for the regressions (the penalty treats them alike); the
//! hyperplanes are stored in the user's units: a row goes left when `c . x <= threshold`.
//!
//! Choices where the paper leaves room: lambda is one absolute penalty on the scaled
//! features for every node (the paper's C is tuned per data set); when every care point
//! wants the same side, the node takes the constant decision sending all its rows there
//! (no regression); a backend that returns no point leaves the node as it was (counted in
//! the run's note); weights at most `metrics::SPARSITY_TOLERANCE` in scaled units (an
//! interior point's stand-in for zero) are set to exactly zero before the split is scored.
//!
//! Depends on the core, `cart` (starting tree), `tao` (the pass) and `logistic_l1`.

use crate::axis_start::AxisSplits;
use crate::cart::grow::Criterion;
use crate::cart::tree::{check_links, AxisTree};
use crate::logistic_l1;
use crate::tao::{self, CarePoints, NodeOptimizer, Rows, TaoConfig, TaoTree};
use glassbox_core::data::{Encoding, MinMaxScaler};
use glassbox_core::formulation::{FormulationInfo, ParamSpec};
use glassbox_core::learner::{HeuristicFit, HeuristicLearner, TrainingSet};
use glassbox_core::model::{CheckedModel, Classifier};
use glassbox_core::tree::TreeShape;
use glassbox_core::{metrics, GlassboxError, NlpSolver, Result, SolveOptions};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::path::Path;
use std::sync::Arc;

/// The name configs and saved models use.
pub const NAME: &str = "tao_oblique";

/// The `[formulation]` table of oblique TAO (it needs a `[solver]` table: an NLP backend).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TaoObliqueConfig {
    /// Criterion of the starting CART tree.
    pub criterion: Criterion,
    /// Depth of the starting CART tree.
    pub depth: Option<usize>,
    /// Minimum rows per leaf of the starting CART tree.
    pub min_leaf: usize,
    /// Maximum TAO passes.
    pub max_passes: usize,
    /// l1 penalty of each node's logistic regression (scaled features), absolute.
    pub lambda: f64,
}

impl Default for TaoObliqueConfig {
    fn default() -> Self {
        TaoObliqueConfig {
            criterion: Criterion::Gini,
            depth: Some(3),
            min_leaf: 1,
            max_passes: 20,
            lambda: 0.01,
        }
    }
}

/// The description `glassbox formulations` prints.
pub fn info() -> FormulationInfo {
    const PARAMS: &[ParamSpec] = &[
        ParamSpec {
            name: "criterion",
            default: "\"gini\"",
            help: "criterion of the starting CART tree (gini | entropy)",
        },
        ParamSpec {
            name: "depth",
            default: "3",
            help: "depth of the starting CART tree",
        },
        ParamSpec {
            name: "min_leaf",
            default: "1",
            help: "minimum rows per leaf of the starting CART tree",
        },
        ParamSpec {
            name: "max_passes",
            default: "20",
            help: "maximum bottom-up passes",
        },
        ParamSpec {
            name: "lambda",
            default: "0.01",
            help: "l1 penalty of the node regressions (scaled features), absolute",
        },
    ];
    FormulationInfo {
        name: NAME,
        kind: "heuristic",
        description: "TAO for sparse oblique trees: care-point l1-logistic regression per node through an NLP backend ([solver] needed), from CART",
        parameters: PARAMS,
    }
}

impl TaoObliqueConfig {
    /// Checks the parameters.
    pub fn check(&self, regression: bool) -> Result<()> {
        let axis = TaoConfig {
            criterion: self.criterion,
            depth: self.depth,
            min_leaf: self.min_leaf,
            max_passes: self.max_passes,
        };
        axis.check(regression)
            .map_err(|e| GlassboxError::formulation(NAME, e.to_string()))?;
        if !(self.lambda.is_finite() && self.lambda >= 0.0) {
            return Err(GlassboxError::formulation(
                NAME,
                format!("lambda must be a finite number >= 0, got {}", self.lambda),
            ));
        }
        Ok(())
    }

    /// Fits: CART, then oblique TAO with `solver`. Returns the tree, the outcome and the
    /// number of node regressions whose backend returned no point.
    pub fn fit(
        &self,
        x: &DMatrix<f64>,
        y: &[usize],
        n_classes: usize,
        solver: &dyn NlpSolver,
        options: &SolveOptions,
    ) -> Result<(ObliqueTree, tao::TaoOutcome, usize)> {
        let axis = TaoConfig {
            criterion: self.criterion,
            depth: self.depth,
            min_leaf: self.min_leaf,
            max_passes: self.max_passes,
        };
        let start = tao::starting_tree(&axis, x, y, n_classes);
        let mut tree = ObliqueTree::from_axis(&start, x.ncols());
        let scaler = MinMaxScaler::fit(x);
        let optimizer = LogisticNodes {
            x,
            scaled: scaler.transform(x),
            scaler,
            lambda: self.lambda,
            solver,
            options,
            failures: Cell::new(0),
        };
        // A stop request also ends the node solves in flight (IPOPT checks it), so the pass
        // it falls in is quick.
        let rows = Rows {
            x,
            y,
            n_classes,
            stop: options.interrupt.as_ref(),
        };
        let outcome = rows.optimize(
            &mut tree,
            &optimizer,
            &vec![1.0; x.nrows()],
            self.max_passes,
        );
        Ok((tree, outcome, optimizer.failures.get()))
    }
}

/// A hyperplane decision: a row goes left when `coefficients . x <= threshold`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinearSplit {
    /// One per encoded feature, user units.
    pub coefficients: Vec<f64>,
    /// Threshold, user units.
    pub threshold: f64,
}

impl LinearSplit {
    /// Whether row `i` of `x` goes left.
    pub fn goes_left(&self, x: &DMatrix<f64>, i: usize) -> bool {
        let s: f64 = self
            .coefficients
            .iter()
            .enumerate()
            .filter(|(_, c)| **c != 0.0)
            .map(|(j, c)| c * x[(i, j)])
            .sum();
        s <= self.threshold
    }
}

/// One node of an oblique tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObliqueNode {
    /// The decision and the children (arena indices); none for a leaf.
    pub branch: Option<(LinearSplit, usize, usize)>,
    /// Class fractions of the training rows reaching it.
    pub value: Vec<f64>,
    /// Training rows reaching it.
    pub n_samples: usize,
}

/// An oblique tree; `nodes[0]` is the root.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObliqueTree {
    /// The nodes.
    pub nodes: Vec<ObliqueNode>,
}

impl ObliqueTree {
    /// The axis-aligned tree as hyperplanes (one coefficient 1 per split) over `p`
    /// features.
    pub fn from_axis(tree: &AxisTree, p: usize) -> Self {
        ObliqueTree {
            nodes: tree
                .nodes
                .iter()
                .map(|n| ObliqueNode {
                    branch: n.branch.map(|b| {
                        let mut coefficients = vec![0.0; p];
                        coefficients[b.split.feature] = 1.0;
                        (
                            LinearSplit {
                                coefficients,
                                threshold: b.split.threshold,
                            },
                            b.left,
                            b.right,
                        )
                    }),
                    value: n.value.clone(),
                    n_samples: n.n_samples,
                })
                .collect(),
        }
    }

    /// The class each row of `x` reaches.
    pub fn predict_class(&self, x: &DMatrix<f64>) -> Vec<usize> {
        (0..x.nrows())
            .map(|i| self.class(self.leaf_from(0, x, i)))
            .collect()
    }

    /// The `p x (branch nodes)` coefficient matrix of the reachable branch nodes.
    pub fn coefficient_matrix(&self, p: usize) -> DMatrix<f64> {
        let splits: Vec<&LinearSplit> = self
            .nodes_by_depth()
            .iter()
            .filter_map(|&(t, _)| self.nodes[t].branch.as_ref().map(|b| &b.0))
            .collect();
        DMatrix::from_fn(p, splits.len(), |j, t| {
            splits[t].coefficients.get(j).copied().unwrap_or(0.0)
        })
    }

    /// Lays the tree into the branch nodes of a randomized tree of depth `depth` on the rows
    /// of `x` (N x p, the units the tree was fitted in), as
    /// [`crate::axis_start::axis_splits`] lays CART's: a split `c . x <= s` becomes a = -c /
    /// m, mu = -s / (m p) with m = max_j |c_j|, so that a.x / p - mu = (s - c.x) / (m p),
    /// which is at least 0 exactly when the row goes left, and the largest coefficient is at
    /// the box's bound (as sharp as a in [-1, 1]^p allows). A constant decision (no coefficient) sends every
    /// row its way (mu = -1 left, 1 right); a position below a leaf, or a leaf above the
    /// last level, sends every row right (a = 0, mu = 1), as for CART. `None` when the tree
    /// is deeper than `depth`.
    pub fn randomized_splits(&self, x: &DMatrix<f64>, depth: usize) -> Option<AxisSplits> {
        let p = x.ncols();
        let branches = (1usize << depth) - 1;
        let mut a = DMatrix::zeros(p, branches);
        let mut mu = vec![1.0; branches];
        let mut splits = vec![false; branches];
        // The arena node at each position of the complete tree (none on a left child of a
        // position that does not split).
        let mut at: Vec<Option<usize>> = vec![None; 2 * branches + 1];
        at[0] = Some(0);
        for t in 0..branches {
            let Some(node) = at[t] else { continue };
            match &self.nodes[node].branch {
                Some((split, left, right)) => {
                    let m = split
                        .coefficients
                        .iter()
                        .fold(0.0, |m: f64, c| m.max(c.abs()));
                    if m > 0.0 {
                        for (j, c) in split.coefficients.iter().enumerate() {
                            a[(j, t)] = -c / m;
                        }
                        mu[t] = -split.threshold / (m * p as f64);
                    } else {
                        mu[t] = if split.threshold >= 0.0 { -1.0 } else { 1.0 };
                    }
                    splits[t] = true;
                    at[2 * t + 1] = Some(*left);
                    at[2 * t + 2] = Some(*right);
                }
                None => at[2 * t + 2] = Some(node),
            }
        }
        // A branch node at a leaf position: the tree is deeper than `depth`.
        if at[branches..]
            .iter()
            .flatten()
            .any(|&node| self.nodes[node].branch.is_some())
        {
            return None;
        }
        let shape = TreeShape::new(depth);
        let leaf_of = (0..x.nrows())
            .map(|i| {
                crate::oct::route(&shape, |t| {
                    let z = (0..p).map(|j| a[(j, t)] * x[(i, j)]).sum::<f64>() / p as f64;
                    Some(z - mu[t] >= 0.0)
                })
            })
            .collect();
        Some(AxisSplits {
            a,
            mu,
            leaf_of,
            splits,
        })
    }
}

impl TaoTree for ObliqueTree {
    type Split = LinearSplit;

    fn node_count(&self) -> usize {
        self.nodes.len()
    }

    fn nodes_by_depth(&self) -> Vec<(usize, usize)> {
        let mut out = vec![(0, 0)];
        let mut k = 0;
        while k < out.len() {
            let (t, d) = out[k];
            if let Some((_, l, r)) = &self.nodes[t].branch {
                out.push((*l, d + 1));
                out.push((*r, d + 1));
            }
            k += 1;
        }
        out
    }

    fn children(&self, t: usize) -> Option<(usize, usize)> {
        self.nodes[t].branch.as_ref().map(|(_, l, r)| (*l, *r))
    }

    fn goes_left(&self, t: usize, x: &DMatrix<f64>, i: usize) -> bool {
        self.nodes[t]
            .branch
            .as_ref()
            .is_some_and(|(s, _, _)| s.goes_left(x, i))
    }

    fn value(&self, t: usize) -> &[f64] {
        &self.nodes[t].value
    }

    fn set_value(&mut self, t: usize, value: Vec<f64>) {
        self.nodes[t].value = value;
    }

    fn set_split(&mut self, t: usize, split: LinearSplit) {
        if let Some(b) = &mut self.nodes[t].branch {
            b.0 = split;
        }
    }

    fn set_counts(&mut self, t: usize, rows: usize, _weight: f64) {
        self.nodes[t].n_samples = rows;
    }
}

/// The node problem as weighted l1-logistic regressions on the care points.
struct LogisticNodes<'a> {
    x: &'a DMatrix<f64>,
    scaled: DMatrix<f64>,
    scaler: MinMaxScaler,
    lambda: f64,
    solver: &'a dyn NlpSolver,
    options: &'a SolveOptions,
    failures: Cell<usize>,
}

impl LogisticNodes<'_> {
    fn candidate(&self, care: &CarePoints) -> Option<LinearSplit> {
        let p = self.scaled.ncols();
        let n_left = care.left.iter().filter(|&&l| l).count();
        if n_left == 0 || n_left == care.left.len() {
            // Every care point wants one side: send all rows there.
            return Some(LinearSplit {
                coefficients: vec![0.0; p],
                threshold: if n_left > 0 { 0.0 } else { -1.0 },
            });
        }
        let xs = self.scaled.select_rows(care.rows.iter());
        let y: Vec<usize> = care.left.iter().map(|&l| usize::from(l)).collect();
        let fit = logistic_l1::fit(
            Arc::new(xs),
            Arc::new(y),
            2,
            self.lambda,
            Some(care.weights.clone()),
            self.solver,
            self.options,
        );
        let Some(mut weights) = fit.ok().and_then(|f| f.coefficients) else {
            self.failures.set(self.failures.get() + 1);
            return None;
        };
        // An interior point leaves the weights the penalty zeroes at tiny nonzeros: make
        // them exact zeros (the split is then scored as it will be used).
        for w in weights.weights.iter_mut() {
            if w.abs() <= metrics::SPARSITY_TOLERANCE {
                *w = 0.0;
            }
        }
        // Class 1 ("left") when x . w + b > 0, i.e. (-w) . x < b, in the user's units.
        let user = weights.to_user_units(&self.scaler);
        Some(LinearSplit {
            coefficients: user.weights.column(0).iter().map(|w| -w).collect(),
            threshold: user.intercepts[0],
        })
    }
}

impl NodeOptimizer<ObliqueTree> for LogisticNodes<'_> {
    fn improve(&self, _tree: &ObliqueTree, _t: usize, care: &CarePoints) -> Option<LinearSplit> {
        let split = self.candidate(care)?;
        // The split routes raw rows (the scaled ones were for the regression).
        let x = self.x;
        let errors: f64 = care
            .rows
            .iter()
            .zip(&care.left)
            .zip(&care.weights)
            .filter(|((&i, &left), _)| split.goes_left(x, i) != left)
            .map(|(_, w)| w)
            .sum();
        (errors < care.current_errors).then_some(split)
    }
}

/// A fitted oblique TAO tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObliqueTreeModel {
    /// l1 penalty of the node regressions.
    pub lambda: f64,
    /// Class labels.
    pub classes: Vec<String>,
    /// Encoded feature names.
    pub feature_names: Vec<String>,
    /// How raw columns are encoded.
    pub encoding: Encoding,
    /// The tree.
    pub tree: ObliqueTree,
}

impl ObliqueTreeModel {
    /// Saves the model as JSON.
    pub fn save(&self, path: &Path) -> Result<()> {
        glassbox_core::model::save_json(path, NAME, self)
    }

    /// Loads a model saved by [`ObliqueTreeModel::save`] (checked by [`CheckedModel`]).
    pub fn load(path: &Path) -> Result<Self> {
        glassbox_core::model::load_json(path, NAME)
    }

    /// Local and global sparsity (percent) of the hyperplanes.
    pub fn sparsity(&self) -> (f64, f64) {
        let a = self.tree.coefficient_matrix(self.feature_names.len());
        (
            metrics::delta_local(&a, 0.0),
            metrics::delta_global(&a, 0.0),
        )
    }

    /// The tree as indented rules.
    fn write_rules(&self, out: &mut String) {
        let nodes = &self.tree.nodes;
        let branch = |t: usize| {
            let Some((split, _, _)) = &nodes[t].branch else {
                return (String::new(), String::new());
            };
            let terms: Vec<String> = split
                .coefficients
                .iter()
                .enumerate()
                .filter(|(_, c)| **c != 0.0)
                .map(|(j, c)| {
                    format!(
                        "{c:+.4} * {}",
                        self.feature_names.get(j).map_or("?", |s| s.as_str())
                    )
                })
                .collect();
            let rule = if terms.is_empty() {
                "0".to_string()
            } else {
                terms.join(" ")
            };
            (
                format!(
                    "if {rule} <= {}:",
                    glassbox_core::diagram::number(split.threshold, 6)
                ),
                "else:".to_string(),
            )
        };
        let leaf = |t: usize| {
            let k = self.tree.class(t);
            format!(
                "class {} (fraction {:.3})  [{} training rows]",
                self.classes.get(k).map_or("?", |s| s.as_str()),
                nodes[t].value.get(k).copied().unwrap_or(f64::NAN),
                nodes[t].n_samples
            )
        };
        let children = |t: usize| nodes[t].branch.as_ref().map(|(_, l, r)| (*l, *r));
        crate::cart::write_rules(out, children, branch, leaf);
    }
}

impl CheckedModel for ObliqueTreeModel {
    /// Tree links in range and acyclic, one coefficient per encoded feature at every
    /// split, one fraction per class at every node.
    fn check(&self, _kind: &str) -> std::result::Result<(), String> {
        glassbox_core::model::check_classes(&self.classes, 1)?;
        let p = self.encoding.n_features();
        if self.feature_names.len() != p {
            return Err(format!(
                "{} feature names but the encoding gives {p} features",
                self.feature_names.len()
            ));
        }
        let (nodes, k) = (&self.tree.nodes, self.classes.len());
        let children = |t: usize| nodes[t].branch.as_ref().map(|(_, l, r)| (*l, *r));
        check_links(nodes.len(), children, |t| {
            if nodes[t].value.len() != k {
                return Err(format!(
                    "node {t} holds {} class fraction(s), expected {k}",
                    nodes[t].value.len()
                ));
            }
            match &nodes[t].branch {
                Some((split, _, _)) if split.coefficients.len() != p => Err(format!(
                    "node {t} has {} coefficient(s), expected {p}",
                    split.coefficients.len()
                )),
                _ => Ok(()),
            }
        })
    }
}

impl Classifier for ObliqueTreeModel {
    fn classes(&self) -> &[String] {
        &self.classes
    }

    fn encoding(&self) -> &Encoding {
        &self.encoding
    }

    fn describe(&self) -> String {
        let (dl, dg) = self.sparsity();
        let mut out = format!(
            "oblique TAO tree (lambda {}), delta_L {dl:.1}%, delta_G {dg:.1}%\n",
            self.lambda
        );
        self.write_rules(&mut out);
        out
    }

    fn predict_proba(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        let k = self.classes.len();
        let leaves: Vec<usize> = (0..x.nrows())
            .map(|i| self.tree.leaf_from(0, x, i))
            .collect();
        DMatrix::from_fn(x.nrows(), k, |i, c| {
            self.tree.nodes[leaves[i]]
                .value
                .get(c)
                .copied()
                .unwrap_or(0.0)
        })
    }
}

glassbox_core::fitted_model!(ObliqueTreeModel, classifier);

/// Oblique TAO as a heuristic learner that drives an NLP backend (the node regressions).
impl HeuristicLearner for TaoObliqueConfig {
    type Model = ObliqueTreeModel;

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
        TaoObliqueConfig::check(self, regression)
    }
    fn uses_solver(&self) -> bool {
        true
    }
    fn fit(
        &self,
        data: &TrainingSet<'_>,
        _seed: u64,
        _start: Option<&ObliqueTreeModel>,
        solver: Option<(&dyn glassbox_core::NlpSolver, &glassbox_core::SolveOptions)>,
    ) -> Result<HeuristicFit<ObliqueTreeModel>> {
        let (y, n_classes) = data.classes(NAME)?;
        let Some((solver, options)) = solver else {
            return Err(GlassboxError::formulation(
                NAME,
                "needs an NLP backend: add a [solver] table",
            ));
        };
        let (tree, outcome, failures) =
            TaoObliqueConfig::fit(self, data.x, y, n_classes, solver, options)?;
        Ok(HeuristicFit {
            model: ObliqueTreeModel {
                lambda: self.lambda,
                classes: data.task.classes().to_vec(),
                feature_names: data.encoding.feature_names(),
                encoding: data.encoding.clone(),
                tree,
            },
            iterations: outcome.passes as u64,
            hit_time_limit: false,
            note: format!(
                "{} after {} passes; training errors {} -> {}; {failures} node regressions without a point",
                outcome.ending(),
                outcome.passes,
                outcome.errors_before,
                outcome.errors_after
            ),
        })
    }
    fn sparsity(&self, model: &ObliqueTreeModel) -> (f64, f64) {
        model.sparsity()
    }
}
