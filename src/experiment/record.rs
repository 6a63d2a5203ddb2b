//! One line of `results.jsonl` ([`SolveRecord`]): who and what was solved (data set,
//! formulation, solver, parameters, split, start and seeds), how it ended (status,
//! objective, seconds, iterations) and what it measured (accuracies or the regression and
//! risk-score metrics, sparsity, MILP statistics, a decomposition's trace). Every kind of
//! formulation fills the same record; `docs/GRID_FORMAT.md` lists the fields.
//!
//! Depends on the core's results and formulation types.

use super::ExperimentConfig;
use crate::formulation::ReportedParams;
use crate::formulations::decomposition::MacroIteration;
use serde::{Deserialize, Serialize};

/// One line of `results.jsonl`: one solve (one start of one split).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SolveRecord {
    /// Data set name.
    pub dataset: String,
    /// Formulation name.
    pub formulation: String,
    /// Backend name.
    pub solver: String,
    /// Tree depth.
    pub depth: Option<usize>,
    /// lambda_L (absolute).
    pub lambda_local: Option<f64>,
    /// lambda_G (absolute).
    pub lambda_global: Option<f64>,
    /// gamma.
    pub gamma: Option<f64>,
    /// Split index.
    pub split: usize,
    /// Seed of the split.
    pub split_seed: u64,
    /// Start index within the split (the warm start from a model, if any, is last).
    pub start: usize,
    /// Seed of this start's random point (none for a warm start).
    pub seed: Option<u64>,
    /// Whether this start was selected (best objective of the split).
    pub selected: bool,
    /// Termination status.
    pub status: String,
    /// The backend's own status text.
    pub raw_status: String,
    /// Objective value.
    pub objective: Option<f64>,
    /// Training accuracy (classification; left out of the JSON line when not a number,
    /// as for regression).
    #[serde(default = "nan", skip_serializing_if = "is_nan")]
    pub train_accuracy: f64,
    /// Test accuracy (classification).
    #[serde(default = "nan", skip_serializing_if = "is_nan")]
    pub test_accuracy: f64,
    /// Test balanced accuracy (classification).
    #[serde(default = "nan", skip_serializing_if = "is_nan")]
    pub test_balanced_accuracy: f64,
    /// Regression metrics (regression formulations only).
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub regression: Option<RegressionMetrics>,
    /// Risk-score metrics (ORS, OGRS only).
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub risk_score: Option<RiskScoreMetrics>,
    /// Local sparsity (percent; NaN, written null, without a model).
    #[serde(deserialize_with = "nan_if_null")]
    pub delta_local: f64,
    /// Global sparsity (percent; NaN, written null, without a model).
    #[serde(deserialize_with = "nan_if_null")]
    pub delta_global: f64,
    /// Wall-clock seconds of the solve.
    pub solve_seconds: f64,
    /// Backend iterations.
    pub iterations: u64,
    /// The backend's own wall-clock seconds (IPOPT and CBC count from the moment they hold
    /// their process-wide lock, so `solve_seconds - backend_seconds` is the wait for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_seconds: Option<f64>,
    /// Training rows.
    pub n_train: usize,
    /// Test rows.
    pub n_test: usize,
    /// The formulation's bound on the sparsity lambdas, where it knows one (l0tree:
    /// Proposition 1's smallest lambda_L + lambda_G giving a stationary a = 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lambda_bound: Option<f64>,
    /// The decomposition's trace, one entry per macro-iteration (with `[decomposition]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decomposition: Option<Vec<MacroIteration>>,
    /// The MILP statistics `mip_gap`, `dual_bound`, `nodes` (MILP formulations only).
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub milp: Option<MilpStats>,
    /// Where a start the formulation built itself comes from (`"cart"`: the greedy tree of
    /// the same depth); absent for random starts and the warm start. The line of the
    /// cross-validated choice (`selection_folds`) is `"selection (optimized)"`,
    /// `"selection (cart)"` or (`selection_polished`) `"selection (cart optimized)"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// The kept tree's cross-validated accuracy on the training rows, on the line of the
    /// cross-validated choice (`selection_folds`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation_accuracy: Option<f64>,
    /// The fingerprint of the problem the line solved, whatever solved it
    /// (`ExperimentConfig::problem_fingerprint`): `glassbox compare` compares solvers'
    /// lines only where it agrees. Absent from lines written before 2026-12-07.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem_fingerprint: Option<String>,
    /// The lambdas (lambda_L, lambda_G) as configured, where the problem solved others:
    /// S-ORCT's `split_scale = "data"` raises gamma per split and the lambdas with it, so
    /// `lambda_local` and `lambda_global` differ between the splits of one setting, which
    /// plots group by these. Absent where they are the lambdas solved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configured_lambdas: Option<(f64, f64)>,
}

/// The MILP statistics of a results line (left out where the backend gave none).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MilpStats {
    /// Relative gap between the incumbent and the dual bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mip_gap: Option<f64>,
    /// The backend's proven bound on the optimal objective.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dual_bound: Option<f64>,
    /// Branch-and-bound nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u64>,
    /// Whether a tree-search backend (such as `dp`) solved the formulation's tree-search
    /// statement instead of a MILP backend its MILP; the other fields are then the search's,
    /// read back in the MILP's objective units. Written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tree_search: bool,
    /// Whether the formulation's objective is maximized (FlowOCT's), so that `glassbox
    /// compare` takes the largest objective of an instance as its best. Written only when
    /// true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub maximize: bool,
    /// The integrality tolerance the MILP backend was given, where one was: the user's
    /// `[solver] integrality_tolerance` or the tighter one the formulation's margins need
    /// (`MilpClassifierFormulation::integrality_tolerance`), so a run says what it solved to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrality_tolerance: Option<f64>,
}

/// Whether a results line of origin `origin` is the line a cross-validated choice adds
/// after a split's starts ([`SolveRecord::is_selection`]).
pub(crate) fn is_selection_origin(origin: Option<&str>) -> bool {
    origin.is_some_and(|o| o.starts_with("selection ("))
}

impl SolveRecord {
    /// Whether this is the line a cross-validated choice (`selection_folds`) adds after a
    /// split's starts, rather than the line of one start's solve.
    pub fn is_selection(&self) -> bool {
        is_selection_origin(self.origin.as_deref())
    }

    /// The record of one solve on split `split` (seeded `split_seed`, `n_train` and
    /// `n_test` rows) of `config`'s run: who and what was solved, with every outcome empty
    /// (no status, NaN metrics, no extensions). Each runner path fills in what it measured,
    /// with struct update syntax, so a new optional field is added here once.
    pub fn blank(
        config: &ExperimentConfig,
        formulation: &str,
        params: ReportedParams,
        split: usize,
        split_seed: u64,
        (n_train, n_test): (usize, usize),
    ) -> Self {
        SolveRecord {
            dataset: config.dataset_name(),
            formulation: formulation.to_string(),
            solver: config.solver.name.clone(),
            depth: params.depth,
            lambda_local: params.lambda_local,
            lambda_global: params.lambda_global,
            gamma: params.gamma,
            split,
            split_seed,
            start: 0,
            seed: None,
            selected: false,
            status: String::new(),
            raw_status: String::new(),
            objective: None,
            train_accuracy: f64::NAN,
            test_accuracy: f64::NAN,
            test_balanced_accuracy: f64::NAN,
            regression: None,
            risk_score: None,
            delta_local: f64::NAN,
            delta_global: f64::NAN,
            solve_seconds: f64::NAN,
            iterations: 0,
            backend_seconds: None,
            n_train,
            n_test,
            lambda_bound: None,
            decomposition: None,
            milp: None,
            origin: None,
            validation_accuracy: None,
            problem_fingerprint: Some(config.problem_fingerprint.clone()),
            configured_lambdas: None,
        }
    }

    /// This record with the backend's status, objective and iteration count of `result`,
    /// solved in `seconds`.
    pub fn solved(self, result: &crate::SolveResult, seconds: f64) -> Self {
        SolveRecord {
            status: result.status.as_str().to_string(),
            raw_status: result.raw_status.clone(),
            objective: result.objective,
            iterations: result.iterations,
            solve_seconds: seconds,
            backend_seconds: Some(result.wall_seconds),
            ..self
        }
    }
}

fn nan() -> f64 {
    f64::NAN
}

fn is_nan(v: &f64) -> bool {
    v.is_nan()
}

/// A metric read back: serde_json writes NaN (no model to measure) as null.
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// The metrics of a regression solve (the `train_r2`, `test_r2`, `train_mse`, `test_mse`
/// fields of a results line; null when the solve returned no point).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RegressionMetrics {
    /// R squared on the training part.
    #[serde(deserialize_with = "nan_if_null")]
    pub train_r2: f64,
    /// R squared on the test part.
    #[serde(deserialize_with = "nan_if_null")]
    pub test_r2: f64,
    /// Mean squared error on the training part.
    #[serde(deserialize_with = "nan_if_null")]
    pub train_mse: f64,
    /// Mean squared error on the test part.
    #[serde(deserialize_with = "nan_if_null")]
    pub test_mse: f64,
    /// The smallest lambda_L giving the sparsest model on this split's training part, where
    /// the formulation knows it (S-ORRT: Proposition 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lambda_local_bound: Option<f64>,
    /// The same for lambda_G.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lambda_global_bound: Option<f64>,
}

/// The metrics of a risk-score solve (fields of its results line).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RiskScoreMetrics {
    /// ROC AUC of the predicted risk on the training part.
    pub train_auc: f64,
    /// ROC AUC of the predicted risk on the test part.
    pub test_auc: f64,
    /// Mean (exact) log-loss on the training part.
    pub train_log_loss: f64,
    /// Mean (exact) log-loss on the test part.
    pub test_log_loss: f64,
    /// Rules with non-zero points.
    pub rules_used: usize,
    /// The approximate loss of the warm start (its objective in the MILP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_start_objective: Option<f64>,
    /// Seconds of the warm start (not in `solve_seconds`).
    pub warm_start_seconds: f64,
    /// Columns of the MILP.
    pub milp_columns: usize,
    /// Rows of the MILP.
    pub milp_rows: usize,
}
