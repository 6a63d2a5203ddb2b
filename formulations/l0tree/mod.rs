//! l0tree: sparse multivariate randomized classification trees with concave approximations
//! of the l0 "norm" (Amaldi, Consolo, Manno; `shared/papers/001_64807dfed1a45238.txt`,
//! section 3.1): local sparsity (5)-(6) on z_jt >= |a_jt|, global sparsity (7) on
//! beta_j >= |a_jt|, formulation (8). The paper's L0loc is lambda_G = 0, L0glob lambda_L = 0.
//!
//! - [`L0TreeConfig`]: the `[formulation]` table (`name = "l0tree"`).
//! - [`L0TreeProblem`]: the NLP, built on an inner S-ORCT problem (see `problem.rs`).
//! - [`L0TreeModel`]: the fitted tree (an S-ORCT tree plus the l0 parameters), JSON.
//! - [`proposition1_bound`]: the bound of Proposition 1 on lambda_L + lambda_G.
//!
//! Choices where the paper is silent or ambiguous (also in the report of this work):
//! - alpha is not given in the paper; the default 5 is Bradley and Mangasarian's \[24\].
//! - Section 4.1 sets "q = 1 and epsilon = 10e-6" for all approximations, but appr1 requires
//!   0 < q < 1 ((u + eps)^1 is linear): q defaults to 1 for appr2 (as the paper) and 0.5 for
//!   appr1 (0 < q <= 1 is accepted, so q = 1 reproduces the paper's literal setting);
//!   epsilon defaults to 1e-6 (we read "10e-6" as 10^-6).
//! - (8) sums the misclassification cost over the N samples; S-ORCT divides by N. `loss =
//!   "sum"` (default) follows (8), so the paper's lambdas (the grid 2^r, Car 0.25, Thyroid
//!   0.5) apply as they are; `loss = "mean"` gives S-ORCT's scale.
//! - The leaf probabilities are substituted by default (strategy (ii), S-ORCT's and the
//!   faster); `leaf_probabilities = "explicit"` gives strategy (i), the paper's choice.
//! - With `split_scale = "data"` (not in the paper; S-ORCT's) a random start's zeros are
//!   settled at the configured gamma, where the approximation has the paper's shape, and held
//!   while gamma rises (`formulations/continuation.rs`). Warm starts and the CART start are
//!   solved at the raised gamma only, where the steep approximation rarely makes a used
//!   feature unused: a lambda path that should become sparse is best solved from fresh
//!   starts at every lambda (`warm_path = false`, as the paper's protocol).
//!
//! Depends on the core and on S-ORCT's building blocks (`formulations/sorct`).

mod problem;

pub use problem::{Concave, L0TreeProblem};

use crate::sorct::{self, starts, SorctConfig, SorctModel};
use glassbox_core::data::{Encoding, MinMaxScaler};
use glassbox_core::formulation::{
    FormulationInfo, NlpClassifierFormulation, NodeBlocks, ParamSpec, ReportedParams,
};
use glassbox_core::model::{CheckedModel, Classifier};
use glassbox_core::starts::{FoldStarts, GreedyStart, StartContext};
use glassbox_core::{GlassboxError, Result};
use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

/// The name configs use.
pub const NAME: &str = "l0tree";

/// l0tree's default `selection_folds`: S-ORCT's choice with its folds starting from the
/// multistart's best point (docs/QUALITY.md "Never worse than CART").
pub const DEFAULT_SELECTION_FOLDS: usize = 5;

/// The concave approximation of the step function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Approximation {
    /// 1 - exp(-alpha u) (the paper's main one).
    #[default]
    Exp,
    /// (u + eps)^q, 0 < q < 1.
    Appr1,
    /// -1 / (u + eps)^q, q >= 1.
    Appr2,
    /// ln(u + eps).
    Log,
}

/// How the leaf probabilities P_il enter the NLP (section 4.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeafProbabilities {
    /// Replaced by the right-hand side of (1) in the objective (strategy ii).
    #[default]
    Substituted,
    /// Variables P_il with the equality constraints (1) (strategy i).
    Explicit,
}

/// Whether the misclassification cost is summed over the samples, as (8) writes it, or
/// averaged, as S-ORCT does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Loss {
    /// sum_i (formulation (8)).
    #[default]
    Sum,
    /// (1/N) sum_i (S-ORCT).
    Mean,
}

/// The parameters of l0tree as a config writes them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct L0TreeConfig {
    /// Depth D.
    pub depth: usize,
    /// Slope gamma of the logistic CDF.
    pub gamma: f64,
    /// The concave approximation.
    pub approximation: Approximation,
    /// alpha of the exponential approximation.
    pub alpha: f64,
    /// q of appr1 / appr2 (default 0.5 for appr1, 1 for appr2).
    pub q: Option<f64>,
    /// epsilon of appr1, appr2, log.
    pub eps: f64,
    /// lambda_0^L, absolute.
    pub lambda_local: f64,
    /// lambda_0^G, absolute.
    pub lambda_global: f64,
    /// r: lambda_0^L = 2^r, the paper's grid (overrides lambda_local).
    pub lambda_local_log2: Option<f64>,
    /// r: lambda_0^G = 2^r (overrides lambda_global).
    pub lambda_global_log2: Option<f64>,
    /// Sum (as (8)) or mean (as S-ORCT) of the misclassification cost.
    pub loss: Loss,
    /// Substituted or explicit leaf probabilities.
    pub leaf_probabilities: LeafProbabilities,
    /// Misclassification costs W (K x K); default 0.5 off the diagonal.
    pub costs: Option<Vec<Vec<f64>>>,
    /// rho_k of S-ORCT's performance constraints (the paper uses 0.1 for every class).
    pub rho: Vec<f64>,
    /// How random starts are drawn (S-ORCT's starts).
    pub initialization: starts::Initialization,
    /// How gamma is chosen (S-ORCT's `split_scale`: "data", the default, or "fixed", the
    /// paper's).
    pub split_scale: sorct::scale::SplitScale,
    /// S-ORCT's `sharpness` for `split_scale = "data"`.
    pub sharpness: f64,
    /// Whether the CART tree of the same depth is one of the starts (S-ORCT's
    /// `cart_start`; the default). The paper's protocol has random starts only.
    pub cart_start: bool,
    /// S-ORCT's `continuation` of random starts along gamma.
    pub continuation: bool,
    /// S-ORCT's `continuation_factor`.
    pub continuation_factor: f64,
    /// S-ORCT's `screen`.
    pub screen: f64,
    /// S-ORCT's `selection_folds` ([`DEFAULT_SELECTION_FOLDS`] by default; 0: the best
    /// objective, the paper).
    pub selection_folds: usize,
}

impl Default for L0TreeConfig {
    fn default() -> Self {
        L0TreeConfig {
            depth: 2,
            gamma: 512.0,
            approximation: Approximation::Exp,
            alpha: 5.0,
            q: None,
            eps: 1e-6,
            lambda_local: 0.0,
            lambda_global: 0.0,
            lambda_local_log2: None,
            lambda_global_log2: None,
            loss: Loss::Sum,
            leaf_probabilities: LeafProbabilities::Substituted,
            costs: None,
            rho: Vec::new(),
            initialization: starts::Initialization::Data,
            split_scale: sorct::scale::SplitScale::Data,
            sharpness: sorct::scale::DEFAULT_SHARPNESS,
            cart_start: true,
            continuation: true,
            continuation_factor: sorct::scale::DEFAULT_CONTINUATION_FACTOR,
            screen: sorct::scale::DEFAULT_SCREEN,
            selection_folds: DEFAULT_SELECTION_FOLDS,
        }
    }
}

/// Parameters resolved for one data set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct L0Params {
    /// Depth D.
    pub depth: usize,
    /// gamma.
    pub gamma: f64,
    /// lambda_0^L.
    pub lambda_local: f64,
    /// lambda_0^G.
    pub lambda_global: f64,
    /// Whether the loss is the sum over samples.
    pub sum_loss: bool,
    /// The leaf-probability strategy.
    pub leaf_probabilities: LeafProbabilities,
}

impl L0Params {
    /// Whether a sparsity penalty is on (lambda_0^L or lambda_0^G positive).
    pub fn penalized(&self) -> bool {
        self.lambda_local > 0.0 || self.lambda_global > 0.0
    }
}

/// The description `glassbox formulations` prints.
pub fn info() -> FormulationInfo {
    const PARAMS: &[ParamSpec] = &[
        ParamSpec { name: "depth", default: "2", help: "depth D of the tree (1 to 6)" },
        ParamSpec { name: "gamma", default: "512", help: "slope of the logistic CDF F" },
        ParamSpec { name: "approximation", default: "\"exp\"", help: "concave l0 approximation: \"exp\" 1-exp(-alpha u), \"appr1\" (u+eps)^q, \"appr2\" -1/(u+eps)^q, \"log\" ln(u+eps)" },
        ParamSpec { name: "alpha", default: "5", help: "alpha of the exponential approximation" },
        ParamSpec { name: "q", default: "0.5 (appr1), 1 (appr2)", help: "exponent q of appr1 (0 < q <= 1) and appr2 (q >= 1)" },
        ParamSpec { name: "eps", default: "1e-6", help: "epsilon of appr1, appr2 and log" },
        ParamSpec { name: "lambda_local", default: "0", help: "lambda_0^L, local sparsity (5)-(6), absolute" },
        ParamSpec { name: "lambda_global", default: "0", help: "lambda_0^G, global sparsity (7), absolute" },
        ParamSpec { name: "lambda_local_log2", default: "", help: "r: lambda_0^L = 2^r, the paper's grid (overrides lambda_local)" },
        ParamSpec { name: "lambda_global_log2", default: "", help: "r: lambda_0^G = 2^r (overrides lambda_global)" },
        ParamSpec { name: "loss", default: "\"sum\"", help: "\"sum\" of the misclassification cost over samples as (8), or \"mean\" as S-ORCT" },
        ParamSpec { name: "leaf_probabilities", default: "\"substituted\"", help: "\"substituted\" into the objective, or \"explicit\" P_it variables with equality constraints" },
        ParamSpec { name: "costs", default: "0.5 off the diagonal", help: "misclassification costs W, K x K, row = true class" },
        ParamSpec { name: "rho", default: "[] (off)", help: "rho_k of the per-class correct-classification constraints (the paper: [0.1])" },
        ParamSpec { name: "initialization", default: "\"data\"", help: "random starts: \"data\" or \"uniform\" (S-ORCT's)" },
        ParamSpec { name: "split_scale", default: "\"data\"", help: "S-ORCT's: \"data\" raises gamma until CART's randomized tree is `sharpness` sharp; \"fixed\" keeps it (the paper)" },
        ParamSpec { name: "sharpness", default: "0.99", help: "S-ORCT's sharpness for split_scale = \"data\"" },
        ParamSpec { name: "cart_start", default: "true", help: "also start from the CART tree of the same depth (false: random starts only, the paper)" },
        ParamSpec { name: "continuation", default: "true", help: "S-ORCT's: random starts climb from gamma to the data's gamma in stages" },
        ParamSpec { name: "continuation_factor", default: "4", help: "S-ORCT's: gamma's factor per stage" },
        ParamSpec { name: "screen", default: "2", help: "S-ORCT's: climb past the first stage only within screen x the split's best objective" },
        ParamSpec { name: "selection_folds", default: "5", help: "S-ORCT's: folds of the cross-validated choice between the best objective's tree and the CART tree kept as it is (0: the best objective, the paper)" },
    ];
    FormulationInfo {
        name: NAME,
        kind: "nlp",
        description: "l0-sparse randomized classification tree (Amaldi, Consolo, Manno), formulation (8) with concave l0 approximations",
        parameters: PARAMS,
    }
}

/// An error of the inner S-ORCT config's checks, named as l0tree's own: the parameters it
/// checks are l0tree's keys.
fn as_l0tree(e: GlassboxError) -> GlassboxError {
    match e {
        GlassboxError::Formulation { message, .. } => GlassboxError::formulation(NAME, message),
        other => other,
    }
}

impl L0TreeConfig {
    /// The inner S-ORCT config: same tree, costs, rho and starts, no l1 / l-infinity terms.
    fn inner_config(&self) -> SorctConfig {
        SorctConfig {
            depth: self.depth,
            gamma: self.gamma,
            lambda_local: 0.0,
            lambda_global: 0.0,
            lambda_local_log2: None,
            lambda_global_log2: None,
            costs: self.costs.clone(),
            rho: self.rho.clone(),
            initialization: self.initialization,
            split_scale: self.split_scale,
            sharpness: self.sharpness,
            cart_start: self.cart_start,
            // Not offered for l0tree (its greedy starts are the CART tree's alone).
            tao_start: false,
            continuation: self.continuation,
            continuation_factor: self.continuation_factor,
            screen: self.screen,
            // The steep approximation at the raised gamma does not shrink what it keeps.
            refit_support: false,
            refit_starts: sorct::DEFAULT_REFIT_STARTS,
            selection_folds: self.selection_folds,
            selection_starts: FoldStarts::BestPoint,
            selection_fold_solves: 0,
            selection_margin: sorct::DEFAULT_SELECTION_MARGIN,
            // l0tree's own choice (its `selection_folds`) keeps the two candidates.
            selection_polished: false,
        }
    }

    fn err<T>(message: String) -> Result<T> {
        Err(GlassboxError::formulation(NAME, message))
    }

    /// The concave approximation with its parameters checked.
    pub fn concave(&self) -> Result<Concave> {
        let q = self.q.unwrap_or(match self.approximation {
            Approximation::Appr1 => 0.5,
            _ => 1.0,
        });
        match self.approximation {
            Approximation::Exp if !(self.alpha.is_finite() && self.alpha > 0.0) => {
                return Self::err(format!("alpha must be > 0, got {}", self.alpha))
            }
            Approximation::Appr1 if !(q > 0.0 && q <= 1.0) => {
                return Self::err(format!("appr1 needs 0 < q <= 1, got q = {q}"))
            }
            Approximation::Appr2 if !(q.is_finite() && q >= 1.0) => {
                return Self::err(format!("appr2 needs q >= 1, got q = {q}"))
            }
            _ => {}
        }
        if self.approximation != Approximation::Exp && !(self.eps.is_finite() && self.eps > 0.0) {
            return Self::err(format!("eps must be > 0, got {}", self.eps));
        }
        Ok(Concave {
            approximation: self.approximation,
            alpha: self.alpha,
            q,
            eps: self.eps,
            scale: 1.0,
        })
    }

    /// Checks the parameters and resolves them for `p` features and `classes` classes.
    pub fn resolve(&self, p: usize, classes: usize) -> Result<L0Params> {
        self.inner_config().resolve(p, classes).map_err(as_l0tree)?;
        self.concave()?;
        let lambda_local = self
            .lambda_local_log2
            .map_or(self.lambda_local, |r| 2f64.powf(r));
        let lambda_global = self
            .lambda_global_log2
            .map_or(self.lambda_global, |r| 2f64.powf(r));
        for (name, v) in [
            ("lambda_local", lambda_local),
            ("lambda_global", lambda_global),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Self::err(format!("{name} must be a finite number >= 0, got {v}"));
            }
        }
        Ok(L0Params {
            depth: self.depth,
            gamma: self.gamma,
            lambda_local,
            lambda_global,
            sum_loss: self.loss == Loss::Sum,
            leaf_probabilities: self.leaf_probabilities,
        })
    }

    /// Builds the NLP on scaled training features `x` (N x p) and classes `y`.
    pub fn problem(
        &self,
        x: Arc<DMatrix<f64>>,
        y: Arc<Vec<usize>>,
        classes: usize,
    ) -> Result<L0TreeProblem> {
        let mut params = self.resolve(x.ncols(), classes)?;
        let inner = self
            .inner_config()
            .problem(x, y, classes)
            .map_err(as_l0tree)?;
        // The inner problem's gamma is the one solved (split_scale may have raised it); the
        // penalty then applies to the coefficients scaled by the same factor, so that a
        // lambda means what it means at the configured gamma (see `Concave`).
        let mut concave = self.concave()?;
        concave.scale = inner.params.gamma / params.gamma;
        params.gamma = inner.params.gamma;
        Ok(L0TreeProblem::new(inner, params, concave))
    }
}

/// Proposition 1: for lambda_0^L + lambda_0^G at or above this value, a stationary point with
/// a = 0 exists. The proposition's max_jt |xi_jt(0)| depends on (mu, C) at that point; we
/// take its supremum over mu in [-1, 1] and C, which S-ORCT's Theorem 2 bound computes in
/// closed form (`sorct::lambda_bounds`, per node), scaled to this loss (times N for the sum).
/// The proposition is written for the exponential approximation (divide by alpha = phi'(0));
/// its proof holds for any phi with phi'(0) > 0, so we divide by phi'(0) for every variant.
pub fn proposition1_bound(problem: &L0TreeProblem) -> f64 {
    let inner = &problem.inner;
    let xi = sorct::lambda_bounds(
        &inner.x,
        &inner.y,
        &inner.costs,
        problem.params.gamma,
        problem.params.depth,
    )
    .local;
    problem.loss_scale * xi / problem.concave.d1(0.0)
}

/// A fitted l0tree: the randomized tree (a, mu, C as S-ORCT's) and the l0 parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct L0TreeModel {
    /// The tree.
    pub tree: SorctModel,
    /// The approximation it was fitted with.
    pub approximation: Approximation,
    /// alpha.
    pub alpha: f64,
    /// q.
    pub q: f64,
    /// eps.
    pub eps: f64,
    /// lambda_0^L.
    pub lambda_local: f64,
    /// lambda_0^G.
    pub lambda_global: f64,
}

impl L0TreeModel {
    /// Saves the model as JSON.
    pub fn save(&self, path: &Path) -> Result<()> {
        glassbox_core::model::save_json(path, NAME, self)
    }

    /// Loads a model saved by [`L0TreeModel::save`] (checked by [`CheckedModel`]).
    pub fn load(path: &Path) -> Result<Self> {
        glassbox_core::model::load_json(path, NAME)
    }
}

impl CheckedModel for L0TreeModel {
    /// The randomized tree's checks: the rest only prints.
    fn check(&self, kind: &str) -> std::result::Result<(), String> {
        self.tree.check(kind)
    }
}

impl Classifier for L0TreeModel {
    fn classes(&self) -> &[String] {
        self.tree.classes()
    }

    fn encoding(&self) -> &Encoding {
        self.tree.encoding()
    }

    fn describe(&self) -> String {
        format!(
            "l0tree: {:?} approximation (alpha {}, q {}, eps {}), lambda_L {}, lambda_G {}\n{}",
            self.approximation,
            self.alpha,
            self.q,
            self.eps,
            self.lambda_local,
            self.lambda_global,
            self.tree.describe()
        )
    }

    fn predict_proba(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        self.tree.predict_proba(x)
    }
}

impl NlpClassifierFormulation for L0TreeConfig {
    type Problem = L0TreeProblem;
    type Model = L0TreeModel;

    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, features: usize, classes: usize) -> Result<()> {
        self.resolve(features, classes)?;
        self.inner_config()
            .cost_matrix(classes)
            .map(|_| ())
            .map_err(as_l0tree)
    }

    fn selection_folds(&self) -> usize {
        self.selection_folds
    }

    fn problem(
        &self,
        x: Arc<DMatrix<f64>>,
        y: Arc<Vec<usize>>,
        classes: usize,
    ) -> Result<L0TreeProblem> {
        L0TreeConfig::problem(self, x, y, classes)
    }

    fn random_start(&self, problem: &L0TreeProblem, rng: &mut ChaCha8Rng) -> Vec<f64> {
        problem.lift(&starts::random_start(
            &problem.inner,
            self.initialization,
            rng,
        ))
    }

    fn greedy_start_count(&self) -> usize {
        usize::from(self.cart_start)
    }

    fn point_on_rows(&self, problem: &L0TreeProblem, point: &[f64]) -> Vec<f64> {
        problem.on_these_rows(point)
    }

    fn greedy_starts(
        &self,
        problem: &L0TreeProblem,
        _solver: &dyn glassbox_core::NlpSolver,
        _options: &glassbox_core::SolveOptions,
    ) -> Vec<GreedyStart> {
        match self.cart_start {
            true => vec![GreedyStart {
                origin: "cart",
                point: problem.lift(&starts::cart_start(&problem.inner)),
            }],
            false => Vec::new(),
        }
    }

    fn solve_start(
        &self,
        problem: &L0TreeProblem,
        solver: &dyn glassbox_core::NlpSolver,
        options: &glassbox_core::SolveOptions,
        start: StartContext,
    ) -> Result<glassbox_core::SolveResult> {
        let penalized = problem.params.penalized();
        crate::continuation::solve_start(
            &self
                .inner_config()
                .continuation_settings()
                .for_penalty(penalized),
            self.gamma,
            problem.params.gamma,
            start,
            |g| problem.with_gamma(g),
            |x| problem.settled_zeros(x),
            problem,
            None,
            solver,
            options,
        )
    }

    fn model(
        &self,
        problem: &L0TreeProblem,
        x: &[f64],
        scaler: MinMaxScaler,
        classes: Vec<String>,
        encoding: Encoding,
    ) -> L0TreeModel {
        let concave = problem.concave;
        L0TreeModel {
            tree: SorctModel::from_solution(
                &problem.inner,
                &x[..problem.layout.inner],
                scaler,
                classes,
                encoding,
            ),
            approximation: concave.approximation,
            alpha: concave.alpha,
            q: concave.q,
            eps: concave.eps,
            lambda_local: problem.params.lambda_local,
            lambda_global: problem.params.lambda_global,
        }
    }

    fn greedy_model(
        &self,
        problem: &L0TreeProblem,
        point: &[f64],
        scaler: MinMaxScaler,
        classes: Vec<String>,
        encoding: Encoding,
    ) -> L0TreeModel {
        let model = self.model(problem, point, scaler, classes, encoding);
        L0TreeModel {
            tree: model.tree.kept_as_greedy(&problem.inner),
            ..model
        }
    }

    fn meets_constraints(&self, problem: &L0TreeProblem, predicted: &[usize]) -> bool {
        problem.inner.meets_performance(predicted)
    }

    fn warm_start(
        &self,
        model: &L0TreeModel,
        problem: &L0TreeProblem,
        scaler: &MinMaxScaler,
    ) -> Result<Vec<f64>> {
        let inner = model
            .tree
            .start_point(&problem.inner, scaler)
            .map_err(as_l0tree)?;
        Ok(problem.lift(&inner))
    }

    fn load_model(&self, path: &Path) -> Result<L0TreeModel> {
        L0TreeModel::load(path)
    }

    fn reported_params(&self, problem: &L0TreeProblem) -> ReportedParams {
        ReportedParams {
            depth: Some(problem.params.depth),
            lambda_local: Some(problem.params.lambda_local),
            lambda_global: Some(problem.params.lambda_global),
            gamma: Some(problem.params.gamma),
        }
    }

    fn sparsity(&self, model: &L0TreeModel) -> (f64, f64) {
        (
            model
                .tree
                .delta_local(glassbox_core::metrics::SPARSITY_TOLERANCE),
            model
                .tree
                .delta_global(glassbox_core::metrics::SPARSITY_TOLERANCE),
        )
    }

    fn lambda_bound(&self, problem: &L0TreeProblem) -> Option<f64> {
        Some(proposition1_bound(problem))
    }

    fn decomposable(&self) -> bool {
        true
    }

    fn node_blocks(&self, problem: &L0TreeProblem) -> Option<NodeBlocks> {
        let lay = &problem.inner.layout;
        let mut blocks = sorct::node_blocks_of(lay);
        if let Some(z) = problem.layout.z {
            for (t, block) in blocks.branches.iter_mut().enumerate() {
                block
                    .auxiliary
                    .extend((0..lay.p).map(|j| z + t * lay.p + j));
            }
        }
        if let Some(b) = problem.layout.beta {
            blocks.shared.extend(b..b + lay.p);
        }
        if let Some(r) = problem.layout.reach {
            blocks.shared.extend(r..problem.layout.n);
        }
        Some(blocks)
    }
}

glassbox_core::fitted_model!(
    L0TreeModel,
    classifier,
    diagram = |m: &L0TreeModel| sorct::sorct_diagram(&m.tree, "l0 tree")
);

// Kept here, not in problem.rs, so that the NLP's file holds the NLP only.
impl L0TreeProblem {
    /// The variables that `x` leaves at zero, which a continuation's sharper stages hold
    /// there after its first stage (as `SorctProblem::settled_zeros`): the zero a_jt with
    /// their z_jt, and beta_j where all of feature j's coefficients are zero; none without
    /// a lambda.
    pub(crate) fn settled_zeros(&self, x: &[f64]) -> Vec<usize> {
        if !self.params.penalized() {
            return Vec::new();
        }
        let zeros = self.inner.zero_coefficients(x);
        let lay = &self.inner.layout;
        let mut fixed: Vec<usize> = zeros.iter().map(|&(j, t)| lay.a(j, t)).collect();
        if let Some(z) = self.layout.z {
            fixed.extend(zeros.iter().map(|&(j, t)| z + t * lay.p + j));
        }
        if let Some(b) = self.layout.beta {
            fixed.extend(sorct::scale::unused_features(&zeros, lay.branches).map(|j| b + j));
        }
        fixed
    }

    /// The same problem with slope `gamma` (a stage of a gamma continuation). The penalty's
    /// scale follows gamma as `split_scale` set it (see `L0TreeConfig::problem`), so a stage
    /// penalizes the tree its point holds as the configured gamma would: the first stage of
    /// a random start is the paper's problem, where 1 - exp(-alpha u) still has a slope on
    /// most of [0, 1] and pulls coefficients to zero; at the target the approximation is
    /// steep (near the step function), keeps those zeros and no longer shrinks the rest.
    /// With the target's scale at every stage a random start's coefficients sat on the flat
    /// part from the first iteration and no lambda made a tree sparse.
    pub(crate) fn with_gamma(&self, gamma: f64) -> L0TreeProblem {
        let params = L0Params {
            gamma,
            ..self.params.clone()
        };
        let concave = Concave {
            scale: self.concave.scale * gamma / self.params.gamma,
            ..self.concave
        };
        L0TreeProblem::new(self.inner.with_gamma(gamma), params, concave)
    }
}
