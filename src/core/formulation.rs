//! The formulation interfaces. What every learning problem declares about itself
//! ([`FormulationInfo`]: name, kind, parameters with defaults and help, for `glassbox
//! formulations`, config checks and the Python estimators), and the typed traits a
//! formulation implements for its kind: an NLP classifier or regressor, a MILP classifier
//! (the heuristic learners' trait is in [`crate::learner`]). The `glassbox` crate's
//! formulation registry turns an implementation into a registry entry with one line, and its
//! experiment engine runs every entry the same way.
//!
//! Depends on the core's data, problem and model types.

use crate::model::{CheckedModel, FittedModel, ModelAbilities};
use serde::Serialize;

/// What a fitted model of any formulation is: a [`FittedModel`] whose abilities are known
/// by its type, saved and loaded as JSON (checked when read) and cloned.
pub trait ModelFile:
    FittedModel
    + ModelAbilities
    + serde::Serialize
    + serde::de::DeserializeOwned
    + CheckedModel
    + Clone
    + 'static
{
}

impl<T> ModelFile for T where
    T: FittedModel
        + ModelAbilities
        + serde::Serialize
        + serde::de::DeserializeOwned
        + CheckedModel
        + Clone
        + 'static
{
}

/// One parameter of a formulation, as written in the `[formulation]` table of a config.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ParamSpec {
    /// The key in the config.
    pub name: &'static str,
    /// Its default, as TOML text ("" when it is required).
    pub default: &'static str,
    /// What it means (with the paper's symbol where the paper names it).
    pub help: &'static str,
}

/// A learning problem known to glassbox.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct FormulationInfo {
    /// The name configs use, e.g. `"sorct"`.
    pub name: &'static str,
    /// "nlp", "milp" or "heuristic".
    pub kind: &'static str,
    /// One line on what it learns and where it comes from.
    pub description: &'static str,
    /// Its parameters.
    pub parameters: &'static [ParamSpec],
}

/// The values of the parameters every results line reports (absent where a formulation
/// has no such parameter).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ReportedParams {
    /// Tree depth.
    pub depth: Option<usize>,
    /// lambda_L (or the formulation's l1 penalty), absolute.
    pub lambda_local: Option<f64>,
    /// lambda_G, absolute.
    pub lambda_global: Option<f64>,
    /// Slope of the CDF of a randomized tree.
    pub gamma: Option<f64>,
}

/// The default margin of the cross-validated choice, in standard errors
/// ([`NlpClassifierFormulation::selection_margin`]).
pub const DEFAULT_SELECTION_MARGIN: f64 = 1.0;

/// A classification problem solved as an NLP, as the experiment runner drives it: build
/// the NLP on scaled training data, draw starting points, map a solution to a fitted
/// model and a fitted model back to a starting point. Implement it and register the
/// formulation (one line in the `glassbox` crate's registry, or
/// `Registry::with_formulation` from another crate) to make it runnable from a config; see
/// docs/EXTENDING.md.
pub trait NlpClassifierFormulation {
    /// The NLP it builds.
    type Problem: crate::NlpProblem;
    /// The fitted model.
    type Model: crate::model::Classifier + ModelFile;

    /// The name configs and saved models use.
    fn name(&self) -> &'static str;
    /// Checks the parameters for data with `features` columns and `classes` classes, so a
    /// run fails before it writes anything.
    fn check(&self, features: usize, classes: usize) -> crate::Result<()>;
    /// Builds the NLP on scaled features `x` (N x p) and class indices `y`.
    fn problem(
        &self,
        x: std::sync::Arc<nalgebra::DMatrix<f64>>,
        y: std::sync::Arc<Vec<usize>>,
        classes: usize,
    ) -> crate::Result<Self::Problem>;
    /// A seeded random starting point.
    fn random_start(&self, problem: &Self::Problem, rng: &mut rand_chacha::ChaCha8Rng) -> Vec<f64>;
    /// Starting points the formulation builds from the training data itself, solved before
    /// the seeded random starts (S-ORCT, l0tree: the CART tree of the same depth; S-ORCT's
    /// oblique TAO tree, whose node regressions `solver` solves with `options`); none by
    /// default.
    fn greedy_starts(
        &self,
        _problem: &Self::Problem,
        _solver: &dyn crate::NlpSolver,
        _options: &crate::SolveOptions,
    ) -> Vec<crate::starts::GreedyStart> {
        Vec::new()
    }
    /// How many [`Self::greedy_starts`] a split has (for progress bars; 0 by default).
    fn greedy_start_count(&self) -> usize {
        0
    }
    /// Solves `problem` from the start in `options` (its warm start) with `solver`: one solve
    /// by default. A formulation may solve a sequence of problems instead (S-ORCT's gamma
    /// continuation of random starts); the result is then that of the last, with the
    /// iterations and seconds of all.
    fn solve_start(
        &self,
        problem: &Self::Problem,
        solver: &dyn crate::NlpSolver,
        options: &crate::SolveOptions,
        _start: crate::starts::StartContext,
    ) -> crate::Result<crate::SolveResult> {
        solver.solve(problem, options)
    }
    /// The fitted model at NLP point `x`.
    fn model(
        &self,
        problem: &Self::Problem,
        x: &[f64],
        scaler: crate::data::MinMaxScaler,
        classes: Vec<String>,
        encoding: crate::data::Encoding,
    ) -> Self::Model;
    /// The NLP point that starts from a fitted model (warm start).
    fn warm_start(
        &self,
        model: &Self::Model,
        problem: &Self::Problem,
        scaler: &crate::data::MinMaxScaler,
    ) -> crate::Result<Vec<f64>>;
    /// Loads a saved model of this formulation.
    fn load_model(&self, path: &std::path::Path) -> crate::Result<Self::Model>;
    /// The parameter values to report for this problem.
    fn reported_params(&self, problem: &Self::Problem) -> ReportedParams;
    /// The lambdas (lambda_L, lambda_G) as configured, where `problem` solves others (its
    /// reported ones); `None` by default (they are the same).
    fn configured_lambdas(&self, problem: &Self::Problem) -> Option<(f64, f64)> {
        let _ = problem;
        None
    }
    /// Local and global sparsity of a model, in percent (delta_L, delta_G).
    fn sparsity(&self, model: &Self::Model) -> (f64, f64);
    /// A bound on the sparsity lambdas above which the sparsest tree is stationary, where
    /// the formulation knows one (l0tree: Proposition 1's bound on lambda_L + lambda_G).
    fn lambda_bound(&self, _problem: &Self::Problem) -> Option<f64> {
        None
    }
    /// The number of folds of the cross-validated choice between the multistart's best
    /// objective and the greedy starts kept as they are (0 by default: the best objective
    /// is returned, as the papers do). With k >= 2 the runner solves, on each of k
    /// stratified folds of the training rows, the greedy starts, the multistart's best
    /// point and ceil(starts / k) - 1 random ones, and returns the greedy tree of all the
    /// training rows ([`Self::greedy_model`]) unless the folds' optimized trees are more
    /// accurate than it by more than one standard error (docs/QUALITY.md "Never worse than CART").
    fn selection_folds(&self) -> usize {
        0
    }
    /// Which starts the choice's folds ([`Self::selection_folds`]) solve besides the greedy
    /// ones: the multistart's best point unless the formulation says otherwise (S-ORCT's
    /// default is the whole multistart per fold; benches/README "Thirty splits" for the
    /// best point's optimism).
    fn fold_starts(&self) -> crate::starts::FoldStarts {
        crate::starts::FoldStarts::BestPoint
    }
    /// `point`, a point of this formulation's problem on other training rows (the
    /// multistart's best point, which the choice's folds may solve), as a point of
    /// `problem`, whose rows are a fold's: unchanged by default, where no variable belongs
    /// to a row (l0tree's explicit leaf probabilities P_il do).
    fn point_on_rows(&self, _problem: &Self::Problem, point: &[f64]) -> Vec<f64> {
        point.to_vec()
    }
    /// How many solves besides the greedy starts each of the choice's folds spends, at most
    /// the split's starts (`None`, the default: what [`Self::fold_starts`] says, ceil(starts
    /// / k) or all the starts).
    fn fold_solves(&self) -> Option<usize> {
        None
    }
    /// By how many standard errors of the paired difference the folds' optimized trees
    /// must beat the greedy tree to be returned ([`Self::selection_folds`]): 1, CART's
    /// authors' one-standard-error rule, by default ([`DEFAULT_SELECTION_MARGIN`]).
    fn selection_margin(&self) -> f64 {
        DEFAULT_SELECTION_MARGIN
    }
    /// Whether the choice ([`Self::selection_folds`]) also judges the tree the multistart
    /// optimized from the chosen greedy start (false by default): it replaces the greedy
    /// tree when more accurate by the margin, and the best objective's tree must then beat
    /// it by the margin. No more solves: each fold solves the greedy starts anyway.
    fn selection_polished(&self) -> bool {
        false
    }
    /// The model of a greedy start kept as it is (by the choice of
    /// [`Self::selection_folds`]): the model at its point by default; a randomized tree
    /// returns it with hard splits, so that it predicts exactly as the greedy tree does.
    fn greedy_model(
        &self,
        problem: &Self::Problem,
        point: &[f64],
        scaler: crate::data::MinMaxScaler,
        classes: Vec<String>,
        encoding: crate::data::Encoding,
    ) -> Self::Model {
        self.model(problem, point, scaler, classes, encoding)
    }
    /// Whether a tree that predicts the classes `predicted` on the problem's training rows
    /// (in its row order) meets the constraints the user set on the problem (S-ORCT's and
    /// l0tree's per-class performance constraints (8), `rho`). The choice of
    /// [`Self::selection_folds`] keeps a greedy tree as it is only where it does: one that
    /// breaks them is no solution of the problem posed. True by default (no such
    /// constraints).
    fn meets_constraints(&self, _problem: &Self::Problem, _predicted: &[usize]) -> bool {
        true
    }
    /// Whether the problem's objective is the fit to its training rows alone, every error
    /// weighed alike (no sparsity penalty, no costs): then an optimized tree that is less
    /// accurate on them than a greedy tree kept as it is ended in a worse basin, not in a
    /// sparser or cheaper tree, and the choice of [`Self::selection_folds`] does not return
    /// it. False by default.
    fn fit_alone(&self, _problem: &Self::Problem) -> bool {
        false
    }
    /// Whether [`NlpClassifierFormulation::node_blocks`] gives the problem's tree nodes, so a
    /// config may train it by node-based decomposition (`[decomposition]`).
    fn decomposable(&self) -> bool {
        false
    }
    /// The problem's variables grouped by tree node, for the node-based decomposition
    /// (`[decomposition]` in a config); `None` when the formulation has no tree nodes.
    fn node_blocks(&self, _problem: &Self::Problem) -> Option<NodeBlocks> {
        None
    }
}

/// The variables of a tree NLP grouped by node, as the node-based decomposition
/// (NB-DEC, Amaldi, Consolo, Manno, section 6) selects them into working sets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeBlocks {
    /// Per branch node: its split variables (a or a+ / a-, and mu), which the proximal term
    /// psi of (20) pulls towards their current values, and auxiliary variables bound to
    /// them only (z of l0tree's local sparsity), free with the node but not proximal.
    pub branches: Vec<BranchBlock>,
    /// Per leaf: its variables (the column C_.t), proximal.
    pub leaves: Vec<Vec<usize>>,
    /// Variables in every working set and not proximal (beta, explicit P_it).
    pub shared: Vec<usize>,
}

/// The variables of one branch node (see [`NodeBlocks`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BranchBlock {
    /// Split variables, under the proximal term.
    pub proximal: Vec<usize>,
    /// Auxiliary variables of this node, not under the proximal term.
    pub auxiliary: Vec<usize>,
}

/// The raw training rows a regression formulation is built on: the table as read (raw
/// columns, before encoding and scaling) and the indices of the training rows in it, in the
/// order of the problem's rows. Formulations whose constraints name groups of individuals by
/// a raw column (S-ORRT's cost-sensitivity and fairness groups) resolve them here.
#[derive(Clone, Copy, Debug)]
pub struct TrainingRows<'a> {
    /// The whole table.
    pub table: &'a crate::data::Table,
    /// The training rows, as indices into `table`.
    pub rows: &'a [usize],
}

/// A regression problem solved as an NLP, as the experiment runner drives it: the
/// regression counterpart of [`NlpClassifierFormulation`] (targets are numbers, the model a
/// [`crate::model::Regressor`]). Implement it and register the formulation to make it
/// runnable from a config.
pub trait NlpRegressorFormulation {
    /// The NLP it builds.
    type Problem: crate::NlpProblem;
    /// The fitted model.
    type Model: crate::model::Regressor + ModelFile;

    /// The name configs and saved models use.
    fn name(&self) -> &'static str;
    /// Checks the parameters against the table and its `features` encoded columns, so a
    /// run fails before it writes anything.
    fn check(&self, table: &crate::data::Table, features: usize) -> crate::Result<()>;
    /// Builds the NLP on scaled features `x` (N x p) and targets `y` of the training rows
    /// `train` (raw rows of the same individuals, in the same order).
    fn problem(
        &self,
        x: std::sync::Arc<nalgebra::DMatrix<f64>>,
        y: std::sync::Arc<Vec<f64>>,
        train: TrainingRows<'_>,
    ) -> crate::Result<Self::Problem>;
    /// A seeded random starting point.
    fn random_start(&self, problem: &Self::Problem, rng: &mut rand_chacha::ChaCha8Rng) -> Vec<f64>;
    /// Starting points the formulation builds from the training data itself, solved before
    /// the seeded random starts (S-ORRT: the CART regression tree of the same depth); none by
    /// default.
    fn greedy_starts(&self, _problem: &Self::Problem) -> Vec<crate::starts::GreedyStart> {
        Vec::new()
    }
    /// How many [`Self::greedy_starts`] a split has (for progress bars; 0 by default).
    fn greedy_start_count(&self) -> usize {
        0
    }
    /// k >= 2: after a split's multistart, the cross-validated choice between the best
    /// objective's tree and the greedy trees kept as they are ([`Self::greedy_kept`]), on
    /// the held-out rows' squared errors, as the classifiers' (docs/QUALITY.md "S-ORRT's leaves");
    /// 0 (the default): the best objective.
    fn selection_folds(&self) -> usize {
        0
    }
    /// The point of a greedy start kept as it is, not optimized (by the choice of
    /// [`Self::selection_folds`]): the start's point by default (S-ORRT refits its leaves).
    fn greedy_kept(&self, _problem: &Self::Problem, point: &[f64]) -> Vec<f64> {
        point.to_vec()
    }
    /// Whether the tree at `point` (a greedy start kept, [`Self::greedy_kept`]) meets the
    /// constraints the user set on the problem (S-ORRT's cost-sensitive and fairness
    /// constraints, its minimum leaf size) on the training rows. The choice of
    /// [`Self::selection_folds`] keeps a greedy tree only where it does. True by default.
    fn meets_constraints(&self, _problem: &Self::Problem, _point: &[f64]) -> bool {
        true
    }
    /// Solves `problem` from the start in `options` (its warm start) with `solver`: one solve
    /// by default. A formulation may solve a sequence of problems instead (a continuation);
    /// the result is then that of the last, with the iterations and seconds of all.
    fn solve_start(
        &self,
        problem: &Self::Problem,
        solver: &dyn crate::NlpSolver,
        options: &crate::SolveOptions,
        _start: crate::starts::StartContext,
    ) -> crate::Result<crate::SolveResult> {
        solver.solve(problem, options)
    }
    /// The fitted model at NLP point `x`.
    fn model(
        &self,
        problem: &Self::Problem,
        x: &[f64],
        scaler: crate::data::MinMaxScaler,
        target: String,
        encoding: crate::data::Encoding,
    ) -> Self::Model;
    /// The NLP point that starts from a fitted model (warm start).
    fn warm_start(
        &self,
        model: &Self::Model,
        problem: &Self::Problem,
        scaler: &crate::data::MinMaxScaler,
    ) -> crate::Result<Vec<f64>>;
    /// Loads a saved model of this formulation.
    fn load_model(&self, path: &std::path::Path) -> crate::Result<Self::Model>;
    /// The parameter values to report for this problem.
    fn reported_params(&self, problem: &Self::Problem) -> ReportedParams;
    /// Local and global sparsity of a model, in percent (delta_L, delta_G).
    fn sparsity(&self, model: &Self::Model) -> (f64, f64);
    /// The smallest (lambda_L, lambda_G) above which the sparsest model is stationary, for
    /// this problem's training data, where the formulation knows them.
    fn lambda_bounds(&self, _problem: &Self::Problem) -> Option<(f64, f64)> {
        None
    }
}

/// A classification problem solved as a MILP (OCT, OCT-H), as the experiment runner drives
/// it: build the MILP on scaled training data, give a MIP start (the formulation's own
/// heuristic, or a fitted model), and map a solution to a fitted model. One solve per split:
/// a MILP backend searches globally, so there is no multistart. Implement it and register
/// the formulation to make a new MILP formulation runnable from a config.
pub trait MilpClassifierFormulation {
    /// The built problem (the MILP and what is needed to read its solutions).
    type Problem;
    /// The fitted model.
    type Model: crate::model::Classifier + ModelFile;

    /// The name configs and saved models use.
    fn name(&self) -> &'static str;
    /// Checks the parameters for data with `features` columns and `classes` classes, so a
    /// run fails before it writes anything.
    fn check(&self, features: usize, classes: usize) -> crate::Result<()>;
    /// Builds the problem on scaled features `x` (N x p) and class indices `y`.
    fn problem(
        &self,
        x: std::sync::Arc<nalgebra::DMatrix<f64>>,
        y: std::sync::Arc<Vec<usize>>,
        classes: usize,
    ) -> crate::Result<Self::Problem>;
    /// The MILP of a built problem.
    fn milp<'a>(&self, problem: &'a Self::Problem) -> &'a crate::milp::MilpProblem;
    /// The formulation's own MIP start (a heuristic solution), if it makes one.
    fn heuristic_start(&self, problem: &Self::Problem) -> Option<Vec<f64>>;
    /// The loosest integrality tolerance at which the MILP's solutions are the
    /// formulation's, where the backend's default may be too loose: a big-M row that
    /// separates by a margin eps with M x tolerance above eps lets an "integer" 1 - tolerance
    /// switch the row off. The runner tightens the backend's tolerance to it
    /// ([`crate::SolveOptions::with_integrality_at_most`]). `None` (the default): the
    /// backend's own.
    fn integrality_tolerance(&self, _problem: &Self::Problem) -> Option<f64> {
        None
    }
    /// The MIP start from a fitted model (a tree fitted on another split, or by the user).
    fn warm_start(
        &self,
        model: &Self::Model,
        problem: &Self::Problem,
        scaler: &crate::data::MinMaxScaler,
    ) -> crate::Result<Vec<f64>>;
    /// The fitted model at MILP point `x`.
    fn model(
        &self,
        problem: &Self::Problem,
        x: &[f64],
        scaler: crate::data::MinMaxScaler,
        classes: Vec<String>,
        encoding: crate::data::Encoding,
    ) -> Self::Model;
    /// Loads a saved model of this formulation.
    fn load_model(&self, path: &std::path::Path) -> crate::Result<Self::Model>;
    /// The parameter values to report for this problem.
    fn reported_params(&self, problem: &Self::Problem) -> ReportedParams;
    /// Local and global sparsity of a model, in percent (delta_L, delta_G).
    fn sparsity(&self, model: &Self::Model) -> (f64, f64);
    /// The registry name of an NLP backend the formulation needs besides the MILP backend
    /// (loss-optimal trees: the per-node logistic regressions of the greedy start and of
    /// OLCT's refinement), or `None`.
    fn nlp_backend(&self) -> Option<&str> {
        None
    }
    /// The MIP start made with that NLP backend; the runner calls it instead of
    /// [`MilpClassifierFormulation::heuristic_start`] when `nlp_backend` names one.
    fn start_with_nlp(
        &self,
        problem: &Self::Problem,
        _nlp: &dyn crate::NlpSolver,
    ) -> crate::Result<Option<Vec<f64>>> {
        Ok(self.heuristic_start(problem))
    }
    /// Improves the model read from the MILP's solution with that NLP backend (OLCT: the
    /// refinement of the last layer, the thesis' Remark 1); the identity by default.
    fn refine(
        &self,
        _problem: &Self::Problem,
        model: Self::Model,
        _nlp: &dyn crate::NlpSolver,
    ) -> crate::Result<Self::Model> {
        Ok(model)
    }
    /// Whether this formulation, as configured, states itself as an optimal-tree search
    /// problem (so a tree-search backend such as `dp` solves it): `Ok` when
    /// [`MilpClassifierFormulation::tree_search`] gives a statement, else an error saying
    /// why not. None by default.
    fn check_tree_search(&self) -> crate::Result<()> {
        Err(crate::GlassboxError::formulation(
            self.name(),
            "it has no statement as an optimal-tree search problem, only its MILP",
        ))
    }
    /// The built problem stated as an optimal-tree search problem, whose results read back
    /// as from the MILP (see [`crate::tree_search::TreeSearchStatement`]). A formulation
    /// that overrides [`MilpClassifierFormulation::check_tree_search`] overrides this too.
    fn tree_search<'a>(
        &self,
        _problem: &'a Self::Problem,
    ) -> crate::Result<Box<dyn crate::tree_search::TreeSearchStatement + 'a>> {
        Err(crate::GlassboxError::formulation(
            self.name(),
            "it has no statement as an optimal-tree search problem, only its MILP",
        ))
    }
}
