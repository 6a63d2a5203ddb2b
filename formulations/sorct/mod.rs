//! S-ORCT: Sparse Optimal Randomized Classification Trees (Blanquero, Carrizosa, Molero-Río,
//! Romero Morales, EJOR 2019; `shared/papers/000_5bd992e866fcf4f1.txt`). ORCT is the case
//! lambda_L = lambda_G = 0.
//!
//! - [`SorctConfig`]: the parameters as a config writes them (with the paper's normalised
//!   lambda grid `2^r / (p |tau_B|)` and `2^r / p`), resolved into [`SorctParams`].
//! - [`SorctProblem`]: the smooth NLP (9)-(16), exact gradient and Hessian.
//! - [`starts`]: starting points (the part that decides accuracy, see there), the CART
//!   tree of the same depth among them (`cart_start`).
//! - [`scale`]: the slope gamma for a data set (`split_scale`, a deviation from the paper).
//! - [`SorctModel`]: the fitted tree: prediction, sparsity, unscaled rules, JSON.
//! - [`lambda_bounds`]: the bounds of Theorem 2 above which a = 0 is stationary.
//!
//! Depends on the core (`nlp`, `tree`, `data`, `metrics`, `model`), never on a backend.

mod model;
mod problem;
pub mod scale;
pub mod starts;
mod support_refit;
#[cfg(feature = "torch")]
mod tensor;

pub use model::{sorct_diagram, SorctModel};
pub use problem::SorctProblem;

use glassbox_core::data::{Encoding, MinMaxScaler};
use glassbox_core::formulation::{
    BranchBlock, FormulationInfo, NlpClassifierFormulation, NodeBlocks, ParamSpec, ReportedParams,
};
use glassbox_core::starts::{FoldStarts, GreedyStart, StartContext};
use glassbox_core::{GlassboxError, Result};
use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The name configs use.
pub const NAME: &str = "sorct";

/// The parameters of S-ORCT as written in the `[formulation]` table of a config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SorctConfig {
    /// Depth D of the tree.
    pub depth: usize,
    /// Slope gamma of the logistic CDF F(z) = 1 / (1 + exp(-gamma z)).
    pub gamma: f64,
    /// lambda_L, absolute.
    pub lambda_local: f64,
    /// lambda_G, absolute.
    pub lambda_global: f64,
    /// lambda_L on the paper's grid: `2^r / (p |tau_B|)` with r this value (overrides
    /// `lambda_local`).
    pub lambda_local_log2: Option<f64>,
    /// lambda_G on the paper's grid: `2^r / p` with r this value (overrides `lambda_global`).
    pub lambda_global_log2: Option<f64>,
    /// Misclassification costs W (K x K, row = true class); default 0.5 off the diagonal.
    pub costs: Option<Vec<Vec<f64>>>,
    /// rho_k of the performance constraints (8): empty for none, one value for every
    /// class, or one per class (0 switches a class off).
    pub rho: Vec<f64>,
    /// How random starts are drawn: "data" (splits through the data, default) or "uniform".
    pub initialization: starts::Initialization,
    /// How gamma is chosen: "data" (raised until CART's randomized tree is `sharpness`
    /// sharp on the training rows; the default) or "fixed" (the paper's). See [`scale`].
    pub split_scale: scale::SplitScale,
    /// The agreement `split_scale = "data"` asks of CART's randomized tree.
    pub sharpness: f64,
    /// Whether the CART tree of the same depth is one of the starts (besides the random
    /// ones; the default). The paper's protocol has random starts only.
    pub cart_start: bool,
    /// Whether the oblique TAO tree of the same depth (CART's, its nodes refitted as
    /// l1-logistic regressions on their care points by the `[solver]` backend) is one of
    /// the starts too, and a tree the cross-validated choice may keep as it is. Not in the
    /// paper: see [`starts::tao_start`].
    pub tao_start: bool,
    /// Whether random starts climb from `gamma` to the data's gamma in stages when
    /// `split_scale = "data"` raised it (the default), instead of starting at it.
    pub continuation: bool,
    /// gamma's factor per stage of the continuation.
    pub continuation_factor: f64,
    /// A random start goes past its first stage only when its point there has an objective
    /// at the data's gamma at most `screen` times the split's best so far (0: always).
    pub screen: f64,
    /// With a lambda, whether each start's tree is refit without the penalty on the
    /// features it uses (false: the penalized optimum, the paper). A start's results line
    /// then reports the refit's loss plus the penalty the penalized solve paid (the starts
    /// are compared on it) and the refit tree. Not in the paper: see `refit` in
    /// `formulations/continuation.rs`.
    pub refit_support: bool,
    /// The random starts of `refit_support`'s multistart on each support: S-ORCT on those
    /// features alone (besides its CART start; `sorct/support_refit.rs`).
    pub refit_starts: usize,
    /// The folds of the cross-validated choice between the best objective's tree and the
    /// CART tree kept as it is (the default 3; 0: the best objective, the paper). A
    /// deviation from the paper: see [`NlpClassifierFormulation::selection_folds`] and
    /// docs/QUALITY.md "Never worse than CART".
    pub selection_folds: usize,
    /// Which starts the choice's folds solve besides the greedy ones: "whole" (the
    /// default), "best_point", "replay" or "softened" ([`FoldStarts`]).
    pub selection_starts: FoldStarts,
    /// How many solves besides the greedy starts each fold of the choice spends, at most
    /// the split's starts (the default 14; 0: ceil(starts / selection_folds), or all the
    /// starts with "whole").
    pub selection_fold_solves: usize,
    /// The choice's margin in standard errors (the default 1: the one-standard-error
    /// rule); benches/README "The choice's margin" measured others.
    pub selection_margin: f64,
    /// Whether the choice also judges the tree optimized from CART's start (the
    /// multistart's solve from it), between CART's tree kept as it is and the best
    /// objective's (false: those two). See
    /// [`NlpClassifierFormulation::selection_polished`].
    pub selection_polished: bool,
}

impl Default for SorctConfig {
    fn default() -> Self {
        SorctConfig {
            depth: 2,
            gamma: 512.0,
            lambda_local: 0.0,
            lambda_global: 0.0,
            lambda_local_log2: None,
            lambda_global_log2: None,
            costs: None,
            rho: Vec::new(),
            initialization: starts::Initialization::Data,
            split_scale: scale::SplitScale::Data,
            sharpness: scale::DEFAULT_SHARPNESS,
            cart_start: true,
            tao_start: false,
            continuation: true,
            continuation_factor: scale::DEFAULT_CONTINUATION_FACTOR,
            screen: scale::DEFAULT_SCREEN,
            refit_support: false,
            refit_starts: DEFAULT_REFIT_STARTS,
            selection_folds: DEFAULT_SELECTION_FOLDS,
            selection_starts: FoldStarts::Whole,
            selection_fold_solves: DEFAULT_SELECTION_FOLD_SOLVES,
            selection_margin: DEFAULT_SELECTION_MARGIN,
            selection_polished: false,
        }
    }
}

/// S-ORCT's default `refit_starts`: the paper's 20 starts, on each support once
/// (benches/README "Sparse structure on synthetic trees").
pub const DEFAULT_REFIT_STARTS: usize = 20;

/// S-ORCT's default `selection_folds` (l0tree has its own): with the whole multistart per
/// fold each fold costs about a multistart, so 3 rather than 5; 2 (half the rows a fold)
/// gave up 15.5 points over 29 cells (benches/README "The whole multistart per fold").
pub const DEFAULT_SELECTION_FOLDS: usize = 3;

/// S-ORCT's default `selection_fold_solves`: 14 of the paper's 20 random starts a fold kept
/// the accuracy of all 20 on the 18 cells run with both, at 3.0 times the multistart alone
/// (all 20: 3.7 times). 10 costs 2.4 times and is as accurate on average over the 62 cells
/// run with both, but below CART minus 0.5 points on one cell more (benches/README "Ten
/// solves a fold").
pub const DEFAULT_SELECTION_FOLD_SOLVES: usize = 14;

/// The default `selection_margin` of S-ORCT (l0tree's choice uses it too).
pub use glassbox_core::formulation::DEFAULT_SELECTION_MARGIN;

/// Parameters resolved for one data set (absolute lambdas, one rho per class).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SorctParams {
    /// Depth D.
    pub depth: usize,
    /// gamma.
    pub gamma: f64,
    /// lambda_L.
    pub lambda_local: f64,
    /// lambda_G.
    pub lambda_global: f64,
    /// rho_k per class (0: no constraint for that class).
    pub rho: Vec<f64>,
}

impl SorctParams {
    /// Whether a sparsity penalty is on (lambda_L or lambda_G positive).
    pub fn penalized(&self) -> bool {
        self.lambda_local > 0.0 || self.lambda_global > 0.0
    }
}

/// The description `glassbox formulations` prints.
pub fn info() -> FormulationInfo {
    const PARAMS: &[ParamSpec] = &[
        ParamSpec {
            name: "depth",
            default: "2",
            help: "depth D of the tree (1 to 6)",
        },
        ParamSpec {
            name: "gamma",
            default: "512",
            help: "slope of the logistic CDF F at the branch nodes",
        },
        ParamSpec {
            name: "lambda_local",
            default: "0",
            help: "lambda_L, l1 (local sparsity) penalty, absolute",
        },
        ParamSpec {
            name: "lambda_global",
            default: "0",
            help: "lambda_G, l-infinity (global sparsity) penalty, absolute",
        },
        ParamSpec {
            name: "lambda_local_log2",
            default: "",
            help: "r: lambda_L = 2^r / (p |tau_B|), the paper's grid (overrides lambda_local)",
        },
        ParamSpec {
            name: "lambda_global_log2",
            default: "",
            help: "r: lambda_G = 2^r / p, the paper's grid (overrides lambda_global)",
        },
        ParamSpec {
            name: "costs",
            default: "0.5 off the diagonal",
            help: "misclassification costs W, a K x K array, row = true class",
        },
        ParamSpec {
            name: "rho",
            default: "[] (off)",
            help: "rho_k of the per-class performance constraints (8): one value or one per class",
        },
        ParamSpec {
            name: "initialization",
            default: "\"data\"",
            help: "random starts: \"data\" (splits through the training points) or \"uniform\"",
        },
        ParamSpec {
            name: "split_scale",
            default: "\"data\"",
            help: "\"data\": gamma doubled until CART's tree, randomized, is `sharpness` sharp on the training rows; \"fixed\": gamma as given (the paper)",
        },
        ParamSpec {
            name: "sharpness",
            default: "0.99",
            help: "split_scale = \"data\": mean probability that CART's randomized tree sends a training row to its own leaf",
        },
        ParamSpec {
            name: "cart_start",
            default: "true",
            help: "also start from the CART tree of the same depth (false: random starts only, the paper)",
        },
        ParamSpec {
            name: "tao_start",
            default: "false",
            help: "also start from the oblique TAO tree of the same depth (CART's nodes refitted as l1-logistic regressions by the [solver] backend), which the cross-validated choice may keep",
        },
        ParamSpec {
            name: "continuation",
            default: "true",
            help: "random starts climb from gamma to the data's gamma in stages (when split_scale raised it)",
        },
        ParamSpec {
            name: "continuation_factor",
            default: "4",
            help: "gamma's factor per stage of the continuation",
        },
        ParamSpec {
            name: "refit_support",
            default: "false",
            help: "with a lambda: refit each start's tree without the penalty on the features it uses (relaxed lasso), from its own point and by S-ORCT on those features alone",
        },
        ParamSpec {
            name: "refit_starts",
            default: "20",
            help: "refit_support: random starts of S-ORCT on each support's features alone (besides its CART start), once per support",
        },
        ParamSpec {
            name: "screen",
            default: "2",
            help: "a random start climbs past its first stage only if its objective read at the data's gamma is at most screen x the split's best so far",
        },
        ParamSpec {
            name: "selection_folds",
            default: "3",
            help: "folds of the cross-validated choice between the best objective's tree and the CART tree kept as it is, which wins unless the optimized one is more accurate by more than one standard error (0: the best objective, the paper)",
        },
        ParamSpec {
            name: "selection_starts",
            default: "\"whole\"",
            help: "what the choice's folds solve besides the greedy starts: \"best_point\" (the multistart's best point, then random starts), \"replay\" (its best random starts from their seeds), \"softened\" (the best point climbing the gamma continuation, then random starts), \"whole\" (every random start of the multistart from its seed)",
        },
        ParamSpec {
            name: "selection_fold_solves",
            default: "14",
            help: "solves each fold of the choice spends besides the greedy starts, at most the split's starts (0: ceil(starts / selection_folds), or every start with selection_starts = \"whole\")",
        },
        ParamSpec {
            name: "selection_margin",
            default: "1",
            help: "by how many standard errors of the paired difference the folds' optimized trees must beat the CART tree for the choice to return the optimized one (1: the one-standard-error rule)",
        },
        ParamSpec {
            name: "selection_polished",
            default: "false",
            help: "the choice also judges the tree optimized from CART's start: it replaces CART's when more accurate by the margin, and the best objective's tree must then beat it by the margin (no more solves)",
        },
    ];
    FormulationInfo {
        name: NAME,
        kind: "nlp",
        description: "Sparse Optimal Randomized Classification Tree (Blanquero et al. 2019), smooth NLP (9)-(16)",
        parameters: PARAMS,
    }
}

impl SorctConfig {
    /// Checks the parameters and resolves them for `p` features and `classes` classes.
    pub fn resolve(&self, p: usize, classes: usize) -> Result<SorctParams> {
        let err = |m: String| Err(GlassboxError::formulation(NAME, m));
        crate::heuristic::check_features(NAME, p)?;
        if !(1..=6).contains(&self.depth) {
            return err(format!("depth must be between 1 and 6, got {}", self.depth));
        }
        if classes > 1 << 6 {
            return err(format!(
                "the data has {classes} classes, more than a tree of depth 6 (64 leaves) can \
                 label; if the target is a number to predict, use a regression formulation \
                 (sorrt, or cart with criterion = \"squared_error\")"
            ));
        }
        if (1usize << self.depth) < classes {
            return err(format!(
                "depth {} gives {} leaves but the data has {classes} classes: constraint (3) \
                 (every class labels at least one leaf) cannot hold; use depth >= {}",
                self.depth,
                1usize << self.depth,
                (classes as f64).log2().ceil() as usize
            ));
        }
        if !(self.gamma.is_finite() && self.gamma > 0.0) {
            return err(format!("gamma must be positive, got {}", self.gamma));
        }
        if let Err(m) = self.continuation_settings().check() {
            return err(m);
        }
        if self.selection_folds == 1 {
            return err(
                "selection_folds must be 0 (no selection) or at least 2, got 1".to_string(),
            );
        }
        if !(self.selection_margin.is_finite() && self.selection_margin >= 0.0) {
            return err(format!(
                "selection_margin must be a number of standard errors >= 0, got {}",
                self.selection_margin
            ));
        }
        if !(self.sharpness > 0.0 && self.sharpness < 1.0) {
            return err(format!(
                "sharpness must be in (0, 1), got {}",
                self.sharpness
            ));
        }
        let branches = (1usize << self.depth) - 1;
        let lambda_local = match self.lambda_local_log2 {
            Some(r) => 2f64.powf(r) / (p * branches) as f64,
            None => self.lambda_local,
        };
        let lambda_global = match self.lambda_global_log2 {
            Some(r) => 2f64.powf(r) / p as f64,
            None => self.lambda_global,
        };
        for (name, v) in [
            ("lambda_local", lambda_local),
            ("lambda_global", lambda_global),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return err(format!("{name} must be a finite number >= 0, got {v}"));
            }
        }
        let rho = match self.rho.len() {
            0 => vec![0.0; classes],
            1 => vec![self.rho[0]; classes],
            n if n == classes => self.rho.clone(),
            n => {
                return err(format!(
                    "rho has {n} values; give one, or one per class ({classes})"
                ))
            }
        };
        if let Some(r) = rho.iter().find(|r| !(0.0..=1.0).contains(*r)) {
            return err(format!("rho values must be in [0, 1], got {r}"));
        }
        Ok(SorctParams {
            depth: self.depth,
            gamma: self.gamma,
            lambda_local,
            lambda_global,
            rho,
        })
    }

    /// The continuation settings of this config.
    pub fn continuation_settings(&self) -> scale::Continuation {
        scale::Continuation {
            enabled: self.continuation,
            factor: self.continuation_factor,
            screen: self.screen,
        }
    }

    /// The cost matrix W for `classes` classes.
    pub fn cost_matrix(&self, classes: usize) -> Result<DMatrix<f64>> {
        match &self.costs {
            None => Ok(DMatrix::from_fn(classes, classes, |i, k| {
                if i == k {
                    0.0
                } else {
                    0.5
                }
            })),
            Some(rows) => {
                if rows.len() != classes || rows.iter().any(|r| r.len() != classes) {
                    return Err(GlassboxError::formulation(
                        NAME,
                        format!("costs must be a {classes} x {classes} array (one row per class)"),
                    ));
                }
                if rows.iter().flatten().any(|v| !(v.is_finite() && *v >= 0.0)) {
                    return Err(GlassboxError::formulation(
                        NAME,
                        "costs must be finite and >= 0",
                    ));
                }
                Ok(DMatrix::from_fn(classes, classes, |i, k| rows[i][k]))
            }
        }
    }

    /// Builds the NLP on scaled training features `x` (N x p) and classes `y`.
    pub fn problem(
        &self,
        x: Arc<DMatrix<f64>>,
        y: Arc<Vec<usize>>,
        classes: usize,
    ) -> Result<SorctProblem> {
        if x.nrows() != y.len() || x.nrows() == 0 {
            return Err(GlassboxError::formulation(
                NAME,
                format!("{} rows of features but {} labels", x.nrows(), y.len()),
            ));
        }
        if let Some(&k) = y.iter().find(|&&k| k >= classes) {
            return Err(GlassboxError::formulation(
                NAME,
                format!("label {k} out of range 0..{classes}"),
            ));
        }
        if classes < 2 {
            return Err(GlassboxError::formulation(
                NAME,
                "classification needs at least two classes",
            ));
        }
        let mut params = self.resolve(x.ncols(), classes)?;
        if self.split_scale == scale::SplitScale::Data {
            let cart = scale::cart_splits(&x, &y, classes, self.depth);
            let gamma = scale::data_gamma(&cart, &x, params.gamma, self.sharpness);
            // The lambdas rise with gamma: a tree then has the objective it has at the
            // configured gamma with coefficients gamma / configured gamma times larger
            // (see `scale`), so lambda keeps the paper's meaning.
            let factor = gamma / params.gamma;
            params.lambda_local *= factor;
            params.lambda_global *= factor;
            params.gamma = gamma;
        }
        let costs = self.cost_matrix(classes)?;
        Ok(SorctProblem::new(x, y, classes, params, costs))
    }
}

impl NlpClassifierFormulation for SorctConfig {
    type Problem = SorctProblem;
    type Model = SorctModel;

    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, features: usize, classes: usize) -> Result<()> {
        self.resolve(features, classes)?;
        self.cost_matrix(classes).map(|_| ())
    }

    fn selection_folds(&self) -> usize {
        self.selection_folds
    }

    fn fold_starts(&self) -> FoldStarts {
        self.selection_starts
    }

    fn fold_solves(&self) -> Option<usize> {
        (self.selection_fold_solves > 0).then_some(self.selection_fold_solves)
    }

    fn selection_margin(&self) -> f64 {
        self.selection_margin
    }
    fn selection_polished(&self) -> bool {
        self.selection_polished
    }

    fn problem(
        &self,
        x: Arc<DMatrix<f64>>,
        y: Arc<Vec<usize>>,
        classes: usize,
    ) -> Result<SorctProblem> {
        SorctConfig::problem(self, x, y, classes)
    }

    fn random_start(&self, problem: &SorctProblem, rng: &mut ChaCha8Rng) -> Vec<f64> {
        starts::random_start(problem, self.initialization, rng)
    }

    fn greedy_start_count(&self) -> usize {
        usize::from(self.cart_start) + usize::from(self.tao_start)
    }

    fn greedy_starts(
        &self,
        problem: &SorctProblem,
        solver: &dyn glassbox_core::NlpSolver,
        options: &glassbox_core::SolveOptions,
    ) -> Vec<GreedyStart> {
        let cart = self.cart_start.then(|| GreedyStart {
            origin: "cart",
            point: starts::cart_start(problem),
        });
        // A TAO that fails leaves the split one start short (its CART start is there).
        let tao = self
            .tao_start
            .then(|| starts::tao_start(problem, solver, options))
            .flatten()
            .map(|point| GreedyStart {
                origin: "tao",
                point,
            });
        cart.into_iter().chain(tao).collect()
    }

    fn solve_start(
        &self,
        problem: &SorctProblem,
        solver: &dyn glassbox_core::NlpSolver,
        options: &glassbox_core::SolveOptions,
        start: StartContext,
    ) -> Result<glassbox_core::SolveResult> {
        let penalized = problem.params.penalized();
        let relaxed = (self.refit_support && penalized).then(|| problem.without_penalty());
        let on_support = |x: &[f64], o: &glassbox_core::SolveOptions| {
            support_refit::best_on_support(self, problem, x, solver, o)
        };
        crate::continuation::solve_start(
            &self.continuation_settings().for_penalty(penalized),
            self.gamma,
            problem.params.gamma,
            start,
            |g| problem.with_gamma(g),
            |x| problem.settled_zeros(x),
            problem,
            relaxed.as_ref().map(|relaxed| crate::continuation::Refit {
                relaxed,
                on_support: &on_support,
            }),
            solver,
            options,
        )
    }

    fn model(
        &self,
        problem: &SorctProblem,
        x: &[f64],
        scaler: MinMaxScaler,
        classes: Vec<String>,
        encoding: Encoding,
    ) -> SorctModel {
        SorctModel::from_solution(problem, x, scaler, classes, encoding)
    }

    fn greedy_model(
        &self,
        problem: &SorctProblem,
        point: &[f64],
        scaler: MinMaxScaler,
        classes: Vec<String>,
        encoding: Encoding,
    ) -> SorctModel {
        self.model(problem, point, scaler, classes, encoding)
            .kept_as_greedy(problem)
    }

    fn meets_constraints(&self, problem: &SorctProblem, predicted: &[usize]) -> bool {
        problem.meets_performance(predicted)
    }

    /// Without a penalty and with the default costs (equal for every error, so the
    /// objective's hard counterpart is the accuracy the rule compares).
    fn fit_alone(&self, problem: &SorctProblem) -> bool {
        problem.params.lambda_local == 0.0
            && problem.params.lambda_global == 0.0
            && self.costs.is_none()
    }

    fn warm_start(
        &self,
        model: &SorctModel,
        problem: &SorctProblem,
        scaler: &MinMaxScaler,
    ) -> Result<Vec<f64>> {
        model.start_point(problem, scaler)
    }

    fn load_model(&self, path: &std::path::Path) -> Result<SorctModel> {
        SorctModel::load(path)
    }

    fn reported_params(&self, problem: &SorctProblem) -> ReportedParams {
        ReportedParams {
            depth: Some(problem.params.depth),
            lambda_local: Some(problem.params.lambda_local),
            lambda_global: Some(problem.params.lambda_global),
            gamma: Some(problem.params.gamma),
        }
    }

    fn configured_lambdas(&self, problem: &SorctProblem) -> Option<(f64, f64)> {
        // `problem` raised them with gamma (split_scale = "data").
        let configured = self
            .resolve(problem.x.ncols(), problem.layout.classes)
            .ok()?;
        let solved = &problem.params;
        (configured.lambda_local != solved.lambda_local
            || configured.lambda_global != solved.lambda_global)
            .then_some((configured.lambda_local, configured.lambda_global))
    }

    fn sparsity(&self, model: &SorctModel) -> (f64, f64) {
        (
            model.delta_local(glassbox_core::metrics::SPARSITY_TOLERANCE),
            model.delta_global(glassbox_core::metrics::SPARSITY_TOLERANCE),
        )
    }

    fn decomposable(&self) -> bool {
        true
    }

    fn node_blocks(&self, problem: &SorctProblem) -> Option<NodeBlocks> {
        let lay = &problem.layout;
        let mut blocks = node_blocks_of(lay);
        if lay.beta {
            blocks.shared.extend(lay.beta_at..lay.n);
        }
        Some(blocks)
    }
}

/// The variables of an S-ORCT layout by node: branch t holds a_.t (a+_.t and a-_.t when
/// split) and mu_t, leaf l the column C_.l. mu_t is a split variable: the paper's section 6
/// folds it into a through a constant feature, so the proximal term covers it too.
pub(crate) fn node_blocks_of(lay: &problem::Layout) -> NodeBlocks {
    let branches = (0..lay.branches)
        .map(|t| {
            let mut proximal: Vec<usize> = (0..lay.p).map(|j| lay.a(j, t)).collect();
            if lay.split {
                proximal.extend((0..lay.p).map(|j| lay.a_neg(j, t)));
            }
            proximal.push(lay.mu + t);
            BranchBlock {
                proximal,
                auxiliary: Vec::new(),
            }
        })
        .collect();
    let leaves = (0..lay.leaves)
        .map(|l| (0..lay.classes).map(|k| lay.c(k, l)).collect())
        .collect();
    NodeBlocks {
        branches,
        leaves,
        shared: Vec::new(),
    }
}

/// The lambda bounds of Theorem 2 for this training set: for lambda_L >= `local`
/// (sigma = 0) or lambda_G >= `global` (sigma = 1), a = 0 is a stationary point.
///
/// The theorem's bound is a maximum over mu in [-1, 1]^|tau_B| and binary feasible C of
/// the gradient of g at a = 0. We compute that maximum in closed form for the l-infinity
/// norm: at a = 0 every point has z_it = -mu_t, so
/// `dg/da_jt = F'(-mu_t) A_t (sum over leaves left of t - sum right of t of
/// pi_l v_jl) / (N p)` with A_t <= 1 the probability of reaching t, pi a distribution over
/// the leaves of each subtree and `v_jl = sum_i x_ij W_{y_i, class(l)}`. Its supremum is
/// `F'(0) / (N p) * max_j max_{k != k'} |S_jk - S_jk'|` with `S_jk = sum_i x_ij W_{y_i k}`
/// (F' peaks at 0; A_t and pi reach their extremes as mu goes to +-1). For the l1 norm
/// (the global bound) we sum that supremum over the |tau_B| branch nodes, an upper bound
/// of the theorem's maximum, so the guarantee still holds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LambdaBounds {
    /// Bound on lambda_L (sigma = 0).
    pub local: f64,
    /// Bound on lambda_G (sigma = 1).
    pub global: f64,
}

/// See [`LambdaBounds`].
pub fn lambda_bounds(
    x: &DMatrix<f64>,
    y: &[usize],
    costs: &DMatrix<f64>,
    gamma: f64,
    depth: usize,
) -> LambdaBounds {
    let (n, p) = (x.nrows(), x.ncols());
    let k = costs.nrows();
    let mut s = DMatrix::<f64>::zeros(p, k);
    for i in 0..n {
        for j in 0..p {
            for c in 0..k {
                s[(j, c)] += x[(i, j)] * costs[(y[i], c)];
            }
        }
    }
    let mut widest: f64 = 0.0;
    for j in 0..p {
        for c1 in 0..k {
            for c2 in 0..k {
                if c1 != c2 {
                    widest = widest.max((s[(j, c1)] - s[(j, c2)]).abs());
                }
            }
        }
    }
    let local = gamma / 4.0 * widest / (n * p) as f64;
    LambdaBounds {
        local,
        global: local * ((1usize << depth) - 1) as f64,
    }
}
