//! OCT (axis-aligned) stated as an optimal-tree search problem
//! ([`glassbox_core::tree_search::TreeSearchProblem`]), for exact tree-search backends such as `dp`,
//! beside its statement as a MILP ([`super::OctProblem`]).
//!
//! Binarization: on the scaled training features, every threshold between two consecutive
//! distinct values of a feature is one binary column, `x_j >= v` for each distinct value `v`
//! of feature j but its smallest. An axis-aligned split of OCT sends a row right when
//! `x_j >= b`; on the training rows every such split (with `b` between two values) is one of
//! these columns, and a split that sends every row one way is no split. So the trees of the
//! search are exactly OCT's trees on the training rows, and the optima agree.
//!
//! Objective: OCT minimizes `misclassified / Lhat + alpha * splits` with `Lhat` the
//! misclassifications of the majority class ([`super::OctProblem::baseline`]); the search
//! minimizes `Lhat` times that, `misclassified + (alpha * Lhat) * splits`, so
//! [`OctTreeSearch::oct_objective`] divides by `Lhat`. OCT's `N_min` is the search's
//! minimum leaf size (both bound the leaves that hold rows). OCT has no limit on the number
//! of splits besides the depth.
//!
//! A split of the search on column c is OCT's split `x_j < t` left, `x_j >= t` right with
//! `t` the midpoint between `v` and the next smaller training value of feature j (so that
//! new rows are routed as CART routes them), [`OctTreeSearch::split`].
//!
//! A warm start (OCT's greedy start, a saved model's point, a warm path's) enters the search
//! as the tree that routes the training rows as the MILP point does
//! ([`TreeSearchStatement::warm_start`]): each split `x_j < t` becomes the column of
//! feature j with the smallest value at or above `t`, and a split that sends every row
//! reaching it one way is replaced by the subtree on that side (the search's trees have no
//! split with an empty side).
//!
//! [`OctStatement`] is the statement the experiment engine solves with a tree-search backend
//! (`[solver] name = "dp"` on `[formulation] name = "oct"`): it reads the tree found back
//! as the MILP point of that tree ([`super::OctProblem::point_of_axis_tree`]), so the model,
//! the records and the warm paths are those of a MILP solution, and the objective and bound
//! in OCT's units.
//!
//! Depends on the core (`tree_search`, `result`) and OCT's problem types, never on a
//! backend.

use super::problem::{check_params, OctParams, OctProblem, Split, SplitKind};
use glassbox_core::tree_search::{encode_tree, SearchTree, TreeSearchProblem, TreeSearchStatement};
use glassbox_core::{GlassboxError, Result, SolveResult};
use nalgebra::DMatrix;

/// Why OCT-H has no tree-search statement.
const OBLIQUE_REFUSAL: &str = "only axis-aligned OCT is a tree search over binary columns \
                               (OCT-H's splits are hyperplanes over several features)";

/// `Ok` when OCT with `params` has a tree-search statement (axis-aligned splits), else
/// the error that says why not.
pub fn check_statement(name: &str, params: &OctParams) -> Result<()> {
    match params.kind {
        SplitKind::Axis => Ok(()),
        SplitKind::Oblique { .. } => Err(GlassboxError::formulation(name, OBLIQUE_REFUSAL)),
    }
}

/// One binary column of the statement: scaled feature `feature` at or above `value`.
#[derive(Clone, Debug, PartialEq)]
pub struct ThresholdColumn {
    /// The feature j.
    pub feature: usize,
    /// The smallest training value of feature j on the one (right) side.
    pub value: f64,
    /// The midpoint between `value` and the next smaller training value: the split's
    /// threshold for new rows.
    pub threshold: f64,
}

/// OCT as a tree-search problem, with what maps its solutions back.
#[derive(Clone, Debug)]
pub struct OctTreeSearch {
    /// The tree-search problem.
    pub problem: TreeSearchProblem,
    /// What each binary column of the problem is.
    pub columns: Vec<ThresholdColumn>,
    /// Lhat, the misclassifications of the majority class (at least 1).
    pub baseline: f64,
}

impl OctTreeSearch {
    /// States OCT with `params` on `x` (scaled to [0, 1] on the training rows, as for
    /// [`super::OctProblem::new`]) and classes `y` in `0..classes`. OCT-H's oblique splits
    /// cannot be stated over binary columns and are refused.
    pub fn new(
        name: &str,
        x: &DMatrix<f64>,
        y: &[usize],
        classes: usize,
        params: &OctParams,
    ) -> Result<Self> {
        let bad = |m: String| GlassboxError::formulation(name, m);
        check_params(name, params)?;
        check_statement(name, params)?;
        let (n, p) = x.shape();
        if y.len() != n {
            return Err(bad(format!("{n} rows of features but {} labels", y.len())));
        }
        let mut columns = Vec::new();
        let mut bits: Vec<Vec<bool>> = Vec::new();
        for j in 0..p {
            let mut values: Vec<f64> = x.column(j).iter().copied().collect();
            if let Some(v) = values.iter().find(|v| !v.is_finite()) {
                return Err(bad(format!("feature {j} has the value {v}")));
            }
            values.sort_by(f64::total_cmp);
            values.dedup();
            for w in values.windows(2) {
                columns.push(ThresholdColumn {
                    feature: j,
                    value: w[1],
                    threshold: 0.5 * (w[0] + w[1]),
                });
                bits.push(x.column(j).iter().map(|&v| v >= w[1]).collect());
            }
        }
        let mut counts = vec![0usize; classes];
        for &c in y {
            if c >= classes {
                return Err(bad(format!("label {c} out of range for {classes} classes")));
            }
            counts[c] += 1;
        }
        let baseline = ((n - counts.iter().max().copied().unwrap_or(0)) as f64).max(1.0);
        let names = columns
            .iter()
            .map(|c| format!("x{} >= {}", c.feature, c.value))
            .collect();
        let problem = TreeSearchProblem::from_columns(&bits, y.to_vec(), classes, params.depth)
            .and_then(|p| p.with_branch_penalty(params.alpha * baseline))
            .and_then(|p| p.with_min_leaf_size(params.min_leaf))
            .and_then(|p| p.with_feature_names(names))
            .map_err(|e| bad(e.to_string()))?;
        Ok(OctTreeSearch {
            problem,
            columns,
            baseline,
        })
    }

    /// OCT's objective (`misclassified / Lhat + alpha * splits`) of a tree-search objective.
    pub fn oct_objective(&self, tree_search_objective: f64) -> f64 {
        tree_search_objective / self.baseline
    }

    /// OCT's split of binary column `column`: left when `x_j < threshold`.
    pub fn split(&self, column: usize) -> Split {
        let c = &self.columns[column];
        Split {
            weights: vec![(c.feature, 1.0)],
            threshold: c.threshold,
        }
    }
}

/// OCT's tree-search statement on a built OCT problem: the search problem, and how a tree
/// found reads back as the MILP point of that tree.
pub struct OctStatement<'a> {
    name: String,
    search: OctTreeSearch,
    milp: &'a OctProblem,
}

impl<'a> OctStatement<'a> {
    /// The statement of `problem` (axis-aligned OCT only), named `name` in errors.
    pub fn new(name: &str, problem: &'a OctProblem) -> Result<Self> {
        let search = OctTreeSearch::new(
            name,
            &problem.x,
            &problem.y,
            problem.classes,
            &problem.params,
        )?;
        Ok(OctStatement {
            name: name.to_string(),
            search,
            milp: problem,
        })
    }

    /// The binarized statement.
    pub fn search(&self) -> &OctTreeSearch {
        &self.search
    }

    /// The MILP point of the tree in heap encoding `tree` (a branch slot holds a binary
    /// column or -1, as [`glassbox_core::tree_search::encode_tree`] lays it).
    pub fn milp_point(&self, tree: &[f64]) -> Result<Vec<f64>> {
        // Decoding validates the point (slots, hierarchy) before it is used.
        self.search.problem.decode(tree)?;
        let branches = self.milp.shape.num_branches();
        let nodes: Vec<Option<(usize, f64)>> = tree[..branches]
            .iter()
            .map(|&c| {
                (c >= 0.0).then(|| {
                    let column = &self.search.columns[c as usize];
                    (column.feature, column.value)
                })
            })
            .collect();
        Ok(self.milp.point_of_axis_tree(&nodes))
    }
}

/// Where an axis split of OCT sends the training rows that reach its node.
enum Routing {
    /// As the binary column: value 0 left, 1 right.
    Column(usize),
    /// Every row left.
    AllLeft,
    /// Every row right (as a node that does not split).
    AllRight,
}

impl OctStatement<'_> {
    /// Where OCT's split `x_j < threshold` (left) sends `rows`, the training rows that
    /// reach its node: as the binary column of feature j with the smallest value at or
    /// above `threshold` (no training value lies between the two), or every row to one
    /// side. A threshold that is not a number sends every row right, as `x_j < NaN` does.
    fn routing(&self, feature: usize, threshold: f64, rows: &[usize]) -> Routing {
        let x = &self.milp.x;
        if threshold.is_nan() || rows.iter().all(|&i| x[(i, feature)] >= threshold) {
            return Routing::AllRight;
        }
        if rows.iter().all(|&i| x[(i, feature)] < threshold) {
            return Routing::AllLeft;
        }
        // Rows on both sides: a training value at or above the threshold that is not the
        // feature's smallest, so a column. The columns are in feature order, each
        // feature's in increasing value.
        self.search
            .columns
            .iter()
            .position(|c| c.feature == feature && c.value >= threshold)
            .map_or(Routing::AllLeft, Routing::Column)
    }

    /// The subtree of the search at OCT's node `node` (heap order, children `2t + 1` and
    /// `2t + 2`, leaves after the branch nodes) of a point's `splits` and leaf `labels`,
    /// for the training rows `rows` that reach it. A split that sends all of them one way
    /// is replaced by the subtree on that side, and a node that does not split by its right
    /// subtree, as OCT routes rows ([`super::problem::route`]), so the search's tree has
    /// no split with an empty side. A leaf that rows reach without a label predicts their
    /// majority, as OCT's model does; one that no row reaches, class 0.
    fn subtree(
        &self,
        splits: &[Option<Split>],
        labels: &[Option<usize>],
        node: usize,
        rows: Vec<usize>,
    ) -> SearchTree {
        let branches = splits.len();
        if node >= branches {
            let majority = || {
                let mut counts = vec![0usize; self.milp.classes];
                for &i in &rows {
                    counts[self.milp.y[i]] += 1;
                }
                super::problem::argmax(&counts)
            };
            return SearchTree::leaf(labels[node - branches].unwrap_or_else(majority));
        }
        // Axis-aligned OCT's splits have one weight (OCT-H has no statement).
        let routing = match &splits[node] {
            Some(Split { weights, threshold }) if weights.len() == 1 => {
                self.routing(weights[0].0, *threshold, &rows)
            }
            _ => Routing::AllRight,
        };
        let (left, right) = (2 * node + 1, 2 * node + 2);
        match routing {
            Routing::Column(c) => {
                let column = &self.search.columns[c];
                let (zero, one) = rows
                    .into_iter()
                    .partition(|&i| self.milp.x[(i, column.feature)] < column.value);
                SearchTree::branch(
                    c,
                    self.subtree(splits, labels, left, zero),
                    self.subtree(splits, labels, right, one),
                )
            }
            Routing::AllLeft => self.subtree(splits, labels, left, rows),
            Routing::AllRight => self.subtree(splits, labels, right, rows),
        }
    }
}

impl TreeSearchStatement for OctStatement<'_> {
    fn problem(&self) -> &TreeSearchProblem {
        &self.search.problem
    }

    fn read(&self, mut result: SolveResult) -> Result<SolveResult> {
        result.objective = result.objective.map(|v| self.search.oct_objective(v));
        result.dual_bound = result.dual_bound.map(|v| self.search.oct_objective(v));
        if !result.status.has_solution() || result.primal.is_empty() {
            result.primal.clear();
            return Ok(result);
        }
        let point = self.milp_point(&result.primal)?;
        check_read_back(&self.name, "OCT", &self.milp.milp, &point, &result)?;
        result.primal = point;
        Ok(result)
    }

    fn warm_start(&self, point: &[f64]) -> Result<Vec<f64>> {
        check_warm_start_size(&self.name, &self.milp.milp, point)?;
        let splits = self.milp.splits_of(point);
        let labels = self.milp.labels_of(point);
        let rows = (0..self.milp.y.len()).collect();
        let tree = self.subtree(&splits, &labels, 0, rows);
        encode_tree(&tree, self.milp.params.depth)
    }
}

/// Checks that `point`, the MILP point a formulation read from `result`'s tree, is a
/// feasible point of the formulation's MILP `milp` with `result`'s objective. The two
/// statements agree by construction (each one's module documentation); a point the MILP
/// refuses or values otherwise would be a bug of the mapping, never silently used.
pub(crate) fn check_read_back(
    name: &str,
    kind: &str,
    milp: &glassbox_core::milp::MilpProblem,
    point: &[f64],
    result: &SolveResult,
) -> Result<()> {
    let milp_objective = milp.objective_value(point);
    let agrees = result
        .objective
        .is_some_and(|v| (v - milp_objective).abs() <= 1e-9 * v.abs().max(1.0));
    if milp.is_feasible(point) && agrees {
        return Ok(());
    }
    Err(GlassboxError::formulation(
        name,
        format!(
            "the tree of {} (objective {:?}) is not a feasible {kind} MILP point of the same \
             objective (MILP objective {milp_objective})",
            result.solver, result.objective
        ),
    ))
}

/// Checks that a warm start `point` has one value per column of the formulation's MILP.
pub(crate) fn check_warm_start_size(
    name: &str,
    milp: &glassbox_core::milp::MilpProblem,
    point: &[f64],
) -> Result<()> {
    let columns = milp.columns.len();
    if point.len() == columns {
        return Ok(());
    }
    Err(GlassboxError::formulation(
        name,
        format!(
            "a warm start of {} values, the MILP has {columns}",
            point.len()
        ),
    ))
}
