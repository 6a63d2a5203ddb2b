//! FlowOCT stated as an optimal-tree search problem
//! ([`glassbox_core::tree_search::TreeSearchProblem`]), for exact tree-search backends such
//! as `dp`, beside its statement as a MILP ([`super::FlowOctProblem`]).
//!
//! The two describe the same trees. FlowOCT branches on its binary features
//! ([`super::binarize`]: the problem's `features` and `bits`), points with feature 0 left and
//! 1 right, as the search's zero and one children; any node may predict (`p_n`), and then no
//! node below it is reached, as a leaf of the search may sit at any depth up to D. FlowOCT
//! has no minimum leaf size and no limit on splits besides the depth, so the search has
//! neither (minimum leaf size 1). Both heap orders coincide: FlowOCT's node n (children
//! `2n + 1`, `2n + 2`) is the search encoding's slot `n + 1` (children `2(n + 1)` and
//! `2(n + 1) + 1`), stored at index n.
//!
//! Objective: FlowOCT maximizes `(1 - lambda) * correct - lambda * splits`; with N training
//! points that is `(1 - lambda) * N - ((1 - lambda) * misclassified + lambda * splits)`. The
//! search minimizes the bracket: every row weighs `1 - lambda` (rows keep weight 1 when
//! lambda is 0, so the backend counts rows), and a branch node costs `lambda`. Our choice of
//! this mapping over dividing by `1 - lambda`: it is exact for every lambda in [0, 1], lambda
//! = 1 included (all weights 0: the best tree does not split). [`FlowOctStatement`] reads a
//! search objective `s` (and a bound) back as `(1 - lambda) * N - s`, a lower bound of the
//! search becoming an upper bound of the maximization, and recomputes the relative gap in
//! FlowOCT's units.
//!
//! The tree found is read back as FlowOCT's MILP point of that tree
//! ([`super::FlowOctProblem::point_of_tree`]), checked feasible for the MILP and equal in
//! objective, so the model, the records and the warm paths are those of a MILP solution.
//!
//! A warm start (a saved model's point, a warm path's, FlowOCT's greedy start) enters the
//! search as the tree of its MILP point ([`super::FlowOctProblem::tree_of_point`]).
//!
//! Depends on the core (`tree_search`, `milp`, `result`) and FlowOCT's problem types, never
//! on a backend.

use super::problem::{FlowNode, FlowOctProblem, FlowTree};
use glassbox_core::milp::relative_gap;
use glassbox_core::tree_search::{encode_tree, SearchTree, TreeSearchProblem, TreeSearchStatement};
use glassbox_core::{GlassboxError, Result, SolveResult};

/// FlowOCT's tree-search statement on a built FlowOCT problem: the search problem, and how
/// a tree found reads back as the MILP point of that tree.
pub struct FlowOctStatement<'a> {
    name: String,
    search: TreeSearchProblem,
    milp: &'a FlowOctProblem,
}

impl<'a> FlowOctStatement<'a> {
    /// The statement of `problem`, named `name` in errors.
    pub fn new(name: &str, problem: &'a FlowOctProblem) -> Result<Self> {
        let bad = |m: String| GlassboxError::formulation(name, m);
        let n = problem.y.len();
        let columns: Vec<Vec<bool>> = (0..problem.features.len())
            .map(|f| (0..n).map(|i| problem.bits[(i, f)] > 0.5).collect())
            .collect();
        let names = problem
            .features
            .iter()
            .map(|f| format!("x{} >= {}", f.column, f.value))
            .collect();
        let lambda = problem.params.lambda;
        // The search needs two classes at least; a class FlowOCT does not have is never the
        // majority of a leaf, and a tree that predicted one would fail the MILP check.
        let classes = problem.classes.max(2);
        let mut search = TreeSearchProblem::from_columns(
            &columns,
            problem.y.to_vec(),
            classes,
            problem.params.depth,
        )
        .and_then(|s| s.with_branch_penalty(lambda))
        .and_then(|s| s.with_feature_names(names))
        .map_err(|e| bad(e.to_string()))?;
        if lambda > 0.0 {
            search = search
                .with_weights(vec![1.0 - lambda; n])
                .map_err(|e| bad(e.to_string()))?;
        }
        Ok(FlowOctStatement {
            name: name.to_string(),
            search,
            milp: problem,
        })
    }

    /// FlowOCT's objective (`(1 - lambda) * correct - lambda * splits`) of a tree-search
    /// objective (`(1 - lambda) * misclassified + lambda * splits`).
    pub fn flowoct_objective(&self, tree_search_objective: f64) -> f64 {
        (1.0 - self.milp.params.lambda) * self.milp.y.len() as f64 - tree_search_objective
    }

    /// FlowOCT's tree of the point `tree` in the search's heap encoding.
    pub fn flow_tree(&self, tree: &[f64]) -> Result<FlowTree> {
        let tree = self.search.decode(tree)?;
        let mut nodes = vec![FlowNode::Unreachable; (1usize << (self.milp.params.depth + 1)) - 1];
        place(&tree, 0, &mut nodes);
        Ok(FlowTree { nodes })
    }
}

/// Writes `tree` into FlowOCT's heap `nodes` with its root at node `at`; the nodes below a
/// leaf stay unreachable. The search's depth is FlowOCT's, so every branch fits.
fn place(tree: &SearchTree, at: usize, nodes: &mut [FlowNode]) {
    match tree {
        SearchTree::Leaf { class } => nodes[at] = FlowNode::Predict(*class),
        SearchTree::Branch { feature, zero, one } => {
            nodes[at] = FlowNode::Branch(*feature);
            place(zero, 2 * at + 1, nodes);
            place(one, 2 * at + 2, nodes);
        }
    }
}

/// The search's tree of FlowOCT's heap `nodes` from node `at` (the inverse of [`place`]);
/// an unreachable node, which a well-formed tree never reaches here, is a leaf of class 0.
fn search_tree(nodes: &[FlowNode], at: usize) -> SearchTree {
    match nodes[at] {
        FlowNode::Branch(feature) if 2 * at + 2 < nodes.len() => SearchTree::branch(
            feature,
            search_tree(nodes, 2 * at + 1),
            search_tree(nodes, 2 * at + 2),
        ),
        FlowNode::Predict(class) => SearchTree::leaf(class),
        _ => SearchTree::leaf(0),
    }
}

impl TreeSearchStatement for FlowOctStatement<'_> {
    fn problem(&self) -> &TreeSearchProblem {
        &self.search
    }

    fn read(&self, mut result: SolveResult) -> Result<SolveResult> {
        result.objective = result.objective.map(|v| self.flowoct_objective(v));
        result.dual_bound = result.dual_bound.map(|v| self.flowoct_objective(v));
        result.gap = relative_gap(result.objective, result.dual_bound);
        if !result.status.has_solution() || result.primal.is_empty() {
            result.primal.clear();
            return Ok(result);
        }
        let tree = self.flow_tree(&result.primal)?;
        let point = self.milp.point_of_tree(&tree);
        crate::oct::tree_search::check_read_back(
            &self.name,
            "FlowOCT",
            &self.milp.milp,
            &point,
            &result,
        )?;
        result.primal = point;
        Ok(result)
    }

    fn warm_start(&self, point: &[f64]) -> Result<Vec<f64>> {
        crate::oct::tree_search::check_warm_start_size(&self.name, &self.milp.milp, point)?;
        let tree = self.milp.tree_of_point(point);
        encode_tree(&search_tree(&tree.nodes, 0), self.milp.params.depth)
    }
}
