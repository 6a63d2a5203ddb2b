//! Experiments are data: a TOML config names a data set, a split protocol, a formulation
//! with its parameters, a solver with its options and a multistart; running it appends one
//! JSON line per solve to `results.jsonl` and saves the selected model of every split.
//!
//! ```toml
//! [data]
//! path = "../../shared/datasets/iris.csv"  # relative to this file
//! # synthetic = { rows = 300, features = 4, classes = 3, seed = 7 }  # instead of path
//! target = "target"
//! categorical = []
//! drop_missing = false
//!
//! [split]
//! test_fraction = 0.25
//! repeats = 10
//! seed = 1
//!
//! [formulation]
//! name = "sorct"
//! depth = 2
//!
//! [solver]
//! name = "ipopt"
//! time_limit = 60.0
//!
//! [multistart]
//! starts = 20
//! seed = 1
//! ```
//!
//! This module sees the formulations and the registry: it is one of the outer layers.

use crate::data::{self, ClassificationData, CsvOptions, MinMaxScaler, Table};
use crate::formulation::{NlpClassifierFormulation, ReportedParams};
use crate::formulations::decomposition::{self, DecompositionConfig, MacroIteration};
use crate::formulations::heuristic::HeuristicConfig;
use crate::formulations::l0tree::{self, L0TreeConfig};
use crate::formulations::logistic_l1::{self, LogisticL1Config};
use crate::formulations::loss_tree::{self, LossTreeConfig};
use crate::formulations::oct::{self, OctConfig, OcthConfig};
use crate::formulations::risk_score::{self as risk_scores, RiskScoreConfig};
use crate::formulations::sorct::{self, SorctConfig};
use crate::formulations::sorrt::{self, SorrtConfig};
use crate::metrics;
use crate::model::Classifier;
use crate::nlp::NlpProblem;
use crate::{registry, GlassboxError, Result, SolveOptions, WarmStart};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// The regression path (S-ORRT): splits, multistart and results for
/// `NlpRegressorFormulation`s.
mod regression;

/// The heuristic learners' path (CART, forest, TAO, TMO): no solver, no scaling.
mod heuristic;
/// The MILP path (OCT, OCT-H): one solve per split with a MIP start, MILP statistics in
/// the results.
mod milp;
/// The risk-score path (ORS, OGRS): one MILP solve per split, AUC in the results.
mod risk_score;
pub use risk_score::RiskScoreMetrics;

/// The experiment engine: grids on split protocols, warm-started paths, parallel chains,
/// resume, shards.
pub mod engine;
/// Grids: the config grammar of axes, cells, split protocols, fingerprints.
pub mod grid;
/// The engine's results on disk: manifest, whole-unit appends, resume scan, merge.
pub mod store;
/// What the engine needs of a formulation to run one (cell, split): the `GridUnit` trait.
pub mod units;

/// Where the data come from.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DataConfig {
    /// A CSV file, relative to the config file's folder.
    pub path: Option<PathBuf>,
    /// A test file: `path` is then the training part and `test_path` the test part, one
    /// fixed split instead of the `[split]` protocol (e.g. to share splits with another
    /// tool). Both files are encoded together (same dummy levels); scaling is fitted on
    /// the training file only, as always.
    #[serde(default)]
    pub test_path: Option<PathBuf>,
    /// A generated data set instead of a file (the demo's).
    pub synthetic: Option<SyntheticConfig>,
    /// The target column.
    #[serde(default = "default_target")]
    pub target: String,
    /// Columns to treat as categorical (non-numeric columns are detected).
    #[serde(default)]
    pub categorical: Vec<String>,
    /// Drop rows with missing cells (`?` or empty) instead of failing.
    #[serde(default)]
    pub drop_missing: bool,
}

fn default_target() -> String {
    "target".to_string()
}

/// The seeded oblique classification set of [`data::synthetic_oblique`].
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SyntheticConfig {
    /// Rows.
    pub rows: usize,
    /// Features.
    pub features: usize,
    /// Classes (2 to 4).
    pub classes: usize,
    /// Seed.
    pub seed: u64,
}

/// The split protocol: repeated stratified holdout.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct SplitConfig {
    /// Fraction of rows in the test part.
    pub test_fraction: f64,
    /// Number of seeded splits.
    pub repeats: usize,
    /// Seed of the first split (split r uses seed + r).
    pub seed: u64,
}

impl Default for SplitConfig {
    fn default() -> Self {
        SplitConfig {
            test_fraction: 0.25,
            repeats: 1,
            seed: 1,
        }
    }
}

/// Multistart: n seeded random starts, plus optionally a start from a saved model.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct MultistartConfig {
    /// Number of random starts per split.
    pub starts: usize,
    /// Seed of the starts (start s of split r uses a generator seeded with
    /// `seed * 1_000_003 + r * 1_000 + s`).
    pub seed: u64,
    /// A saved model to start from (in addition to the random starts), relative to the
    /// config file's folder.
    pub warm_start: Option<PathBuf>,
}

impl Default for MultistartConfig {
    fn default() -> Self {
        MultistartConfig {
            starts: 1,
            seed: 1,
            warm_start: None,
        }
    }
}

/// The `[solver]` table: a backend name and its options.
#[derive(Clone, Debug)]
pub struct SolverConfig {
    /// Registry name.
    pub name: String,
    /// Options.
    pub options: SolveOptions,
}

/// The `[formulation]` table, resolved to a known formulation.
#[derive(Clone, Debug)]
pub enum FormulationConfig {
    /// S-ORCT.
    Sorct(SorctConfig),
    /// l1-regularized logistic regression.
    LogisticL1(LogisticL1Config),
    /// S-ORRT (regression).
    Sorrt(SorrtConfig),
    /// A heuristic learner (CART, forest, TAO, TMO); it takes no `[solver]` table.
    Heuristic(HeuristicConfig),
    /// OCT (MILP).
    Oct(OctConfig),
    /// OCT-H (MILP).
    OctH(OcthConfig),
    /// l0-sparse randomized classification tree.
    L0Tree(L0TreeConfig),
    /// A risk score, ORS or OGRS (its `kind`).
    RiskScore(RiskScoreConfig),
    /// Loss-optimal tree (MILP).
    LossTree(LossTreeConfig),
}

impl FormulationConfig {
    /// The formulation's name.
    pub fn name(&self) -> &'static str {
        match self {
            FormulationConfig::Sorct(_) => sorct::NAME,
            FormulationConfig::LogisticL1(_) => logistic_l1::NAME,
            FormulationConfig::Sorrt(_) => sorrt::NAME,
            FormulationConfig::Heuristic(h) => h.name(),
            FormulationConfig::Oct(_) => oct::NAME,
            FormulationConfig::OctH(_) => oct::NAME_H,
            FormulationConfig::L0Tree(_) => l0tree::NAME,
            FormulationConfig::RiskScore(f) => f.name(),
            FormulationConfig::LossTree(_) => loss_tree::NAME,
        }
    }

    /// Whether it is solved by a backend (and so needs a `[solver]` table).
    pub fn uses_solver(&self) -> bool {
        match self {
            FormulationConfig::Heuristic(h) => h.uses_solver(),
            _ => true,
        }
    }
}

/// A whole experiment config.
#[derive(Clone, Debug)]
pub struct ExperimentConfig {
    /// The config file (for relative paths and messages).
    pub file: PathBuf,
    /// Data source.
    pub data: DataConfig,
    /// Split protocol.
    pub split: SplitConfig,
    /// Formulation and parameters.
    pub formulation: FormulationConfig,
    /// Backend and options.
    pub solver: SolverConfig,
    /// Multistart.
    pub multistart: MultistartConfig,
    /// Node-based decomposition of each solve (`[decomposition]`), for tree formulations.
    pub decomposition: Option<DecompositionConfig>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    data: DataConfig,
    #[serde(default)]
    split: SplitConfig,
    formulation: toml::Table,
    #[serde(default)]
    solver: Option<toml::Table>,
    #[serde(default)]
    multistart: MultistartConfig,
    #[serde(default)]
    decomposition: Option<DecompositionConfig>,
}

impl ExperimentConfig {
    /// Reads and checks a config file: unknown keys, unknown formulations and solvers,
    /// ill-typed options are errors naming the key.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| GlassboxError::io(path, e))?;
        Self::parse(path, &text)
    }

    /// Parses config text; `path` locates relative paths and names the file in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Self> {
        let file = path.display().to_string();
        let bad = |m: String| GlassboxError::Config(format!("{file}: {m}"));
        let raw: RawConfig = toml::from_str(text).map_err(|e| bad(in_table(text, &e)))?;
        let mut formulation = raw.formulation;
        let name = take_name(&mut formulation)
            .ok_or_else(|| bad("[formulation] needs a name, e.g. name = \"sorct\"".into()))?;
        let formulation = match name.as_str() {
            sorct::NAME => FormulationConfig::Sorct(parse_table(formulation, &bad)?),
            logistic_l1::NAME => FormulationConfig::LogisticL1(parse_table(formulation, &bad)?),
            sorrt::NAME => FormulationConfig::Sorrt(parse_table(formulation, &bad)?),
            oct::NAME => FormulationConfig::Oct(parse_table(formulation, &bad)?),
            oct::NAME_H => FormulationConfig::OctH(parse_table(formulation, &bad)?),
            l0tree::NAME => FormulationConfig::L0Tree(parse_table(formulation, &bad)?),
            loss_tree::NAME => FormulationConfig::LossTree(parse_table(formulation, &bad)?),
            risk_scores::ORS | risk_scores::OGRS => {
                let mut f: RiskScoreConfig = parse_table(formulation, &bad)?;
                f.kind = if name == risk_scores::ORS {
                    risk_scores::Kind::Ors
                } else {
                    risk_scores::Kind::Ogrs
                };
                FormulationConfig::RiskScore(f)
            }
            other => match HeuristicConfig::parse(other, formulation) {
                Some(parsed) => FormulationConfig::Heuristic(
                    parsed.map_err(|e| bad(format!("[formulation]: {}", one_line(&e))))?,
                ),
                None => {
                    let known: Vec<&str> =
                        crate::formulations::all().iter().map(|f| f.name).collect();
                    return Err(bad(format!(
                        "unknown formulation '{other}': known formulations are {}",
                        known.join(", ")
                    )));
                }
            },
        };
        let (solver_name, options) = match (raw.solver, formulation.uses_solver()) {
            (Some(mut solver), true) => {
                let solver_name = take_name(&mut solver)
                    .ok_or_else(|| bad("[solver] needs a name, e.g. name = \"ipopt\"".into()))?;
                let options: SolveOptions = solver.try_into().map_err(|e: toml::de::Error| {
                    bad(format!("[solver]: {}", one_line(&e.to_string())))
                })?;
                let entry = registry::find(&solver_name)?;
                registry::validate_options(&entry, &options)?;
                (solver_name, options)
            }
            (None, true) => {
                return Err(bad(
                    "a [solver] table is needed, e.g. [solver] name = \"ipopt\"".into(),
                ))
            }
            (Some(_), false) => {
                return Err(bad(format!(
                    "'{}' is a heuristic learner and uses no solver: remove the [solver] table",
                    formulation.name()
                )))
            }
            (None, false) => ("none".to_string(), SolveOptions::default()),
        };
        let split = raw.split;
        if !(split.test_fraction > 0.0 && split.test_fraction < 1.0) {
            return Err(bad(format!(
                "split.test_fraction must be in (0, 1), got {}",
                split.test_fraction
            )));
        }
        if raw.data.test_path.is_some() && (split.repeats != 1 || raw.data.synthetic.is_some()) {
            return Err(bad("data.test_path gives one fixed split: set split.repeats = 1 (and use data.path, not synthetic)".into()));
        }
        if split.repeats == 0 {
            return Err(bad("split.repeats must be at least 1".into()));
        }
        if raw.multistart.starts == 0 && raw.multistart.warm_start.is_none() {
            return Err(bad(
                "multistart.starts must be at least 1 (or give multistart.warm_start)".into(),
            ));
        }
        if raw.data.path.is_some() == raw.data.synthetic.is_some() {
            return Err(bad(
                "[data] needs exactly one of path = \"file.csv\" or synthetic = { ... }".into(),
            ));
        }
        if let Some(d) = &raw.decomposition {
            d.check().map_err(|e| bad(e.to_string()))?;
            if !matches!(
                formulation,
                FormulationConfig::Sorct(_) | FormulationConfig::L0Tree(_)
            ) {
                return Err(bad(format!(
                    "[decomposition] needs a tree formulation (sorct or l0tree), not '{name}'"
                )));
            }
        }
        Ok(ExperimentConfig {
            file: path.to_path_buf(),
            data: raw.data,
            split,
            formulation,
            solver: SolverConfig {
                name: solver_name,
                options,
            },
            multistart: raw.multistart,
            decomposition: raw.decomposition,
        })
    }

    /// A path from the config, relative to the config file's folder.
    pub fn resolve(&self, relative: &Path) -> PathBuf {
        if relative.is_absolute() {
            relative.to_path_buf()
        } else {
            self.file.parent().unwrap_or(Path::new(".")).join(relative)
        }
    }

    /// Loads the data set the config names (with `data.test_path`, the training rows
    /// followed by the test rows).
    pub fn load_table(&self) -> Result<Table> {
        Ok(self.load_data()?.0)
    }

    /// Loads the data set and, with `data.test_path`, the number of training rows.
    pub fn load_data(&self) -> Result<(Table, Option<usize>)> {
        if let Some(s) = &self.data.synthetic {
            if !(2..=4).contains(&s.classes) || s.rows < 4 * s.classes || s.features == 0 {
                return Err(GlassboxError::Config(format!(
                    "{}: data.synthetic needs 2 to 4 classes, at least 1 feature and 4 rows per class",
                    self.file.display()
                )));
            }
            return Ok((
                data::synthetic_oblique(s.rows, s.features, s.classes, s.seed),
                None,
            ));
        }
        let path = self.resolve(self.data.path.as_deref().unwrap_or(Path::new("")));
        let options = CsvOptions {
            target: self.data.target.clone(),
            categorical: self.data.categorical.clone(),
            drop_missing: self.data.drop_missing,
            target_optional: false,
        };
        let table = Table::from_csv(&path, &options)?;
        match &self.data.test_path {
            Some(test) => {
                let n_train = table.n_rows();
                Ok((
                    table.append(&Table::from_csv(&self.resolve(test), &options)?)?,
                    Some(n_train),
                ))
            }
            None => Ok((table, None)),
        }
    }

    /// The (train, test) row indices of every split of `n` rows: the fixed split of
    /// `data.test_path` (its first `n_train` rows train), else `protocol(seed)` for each
    /// repeat of `[split]`.
    pub fn splits(
        &self,
        n: usize,
        fixed_train: Option<usize>,
        protocol: impl Fn(u64) -> Result<(Vec<usize>, Vec<usize>)>,
    ) -> Result<Vec<(Vec<usize>, Vec<usize>)>> {
        if let Some(n_train) = fixed_train {
            return Ok(vec![((0..n_train).collect(), (n_train..n).collect())]);
        }
        (0..self.split.repeats)
            .map(|r| protocol(self.split.seed + r as u64))
            .collect()
    }

    /// The data set's name for results: the file stem or the synthetic name.
    pub fn dataset_name(&self) -> String {
        match &self.data.path {
            Some(p) => p
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default(),
            None => "synthetic".to_string(),
        }
    }
}

/// Reads the `[formulation]` table as the formulation's config type `T`: unknown keys and
/// ill-typed values are errors that name them (through `bad`, which names the file).
fn parse_table<T: serde::de::DeserializeOwned>(
    table: toml::Table,
    bad: &dyn Fn(String) -> GlassboxError,
) -> Result<T> {
    table
        .try_into()
        .map_err(|e: toml::de::Error| bad(format!("[formulation]: {}", one_line(&e.to_string()))))
}

fn take_name(table: &mut toml::Table) -> Option<String> {
    match table.remove("name") {
        Some(toml::Value::String(s)) => Some(s),
        _ => None,
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A TOML error as "[table]: message", the table found above the error's position in
/// `text`. The text parsed here is a cell of the grid written back as TOML
/// (`experiment/grid.rs`), so toml's line numbers would point into that, not into the
/// user's file (whose syntax errors the grid's own parse reports with their lines).
fn in_table(text: &str, e: &toml::de::Error) -> String {
    let message = one_line(e.message());
    let is_header = |line: &str| line.trim_start().starts_with('[');
    let table = e.span().and_then(|span| {
        let before = text.get(..span.start)?;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        // An error on a header line is about the table's own name (a key of the root).
        if is_header(&text[line_start..]) {
            return None;
        }
        before[..line_start]
            .lines()
            .rev()
            .find(|line| is_header(line))
            .map(str::trim)
    });
    match table {
        Some(table) => format!("{table}: {message}"),
        None => message,
    }
}

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
    /// Local sparsity (percent).
    pub delta_local: f64,
    /// Global sparsity (percent).
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
}

impl SolveRecord {
    /// The record of one solve on split `split` (seeded `split_seed`, `n_train` and
    /// `n_test` rows) of `config`'s run: who and what was solved, with every outcome empty
    /// (no status, NaN metrics, no extensions). Each runner path fills in what it measured,
    /// with struct update syntax, so a new optional field is added here once.
    pub(crate) fn blank(
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
        }
    }

    /// This record with the backend's status, objective and iteration count of `result`,
    /// solved in `seconds`.
    pub(crate) fn solved(self, result: &crate::SolveResult, seconds: f64) -> Self {
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

/// The metrics of a regression solve (the `train_r2`, `test_r2`, `train_mse`, `test_mse`
/// fields of a results line; null when the solve returned no point).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RegressionMetrics {
    /// R squared on the training part.
    pub train_r2: f64,
    /// R squared on the test part.
    pub test_r2: f64,
    /// Mean squared error on the training part.
    pub train_mse: f64,
    /// Mean squared error on the test part.
    pub test_mse: f64,
    /// The smallest lambda_L giving the sparsest model on this split's training part, where
    /// the formulation knows it (S-ORRT: Proposition 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lambda_local_bound: Option<f64>,
    /// The same for lambda_G.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lambda_global_bound: Option<f64>,
}

/// What a run produced.
pub struct RunOutcome {
    /// Every solve, in order.
    pub records: Vec<SolveRecord>,
    /// The results file.
    pub results_path: PathBuf,
}

/// Runs an experiment into `out_dir`, which must not hold results already unless `force`.
/// Everything that can fail on the config or the data fails before the results file is
/// created; each solve's line is appended (and flushed) as soon as it is known.
pub fn run(
    config: &ExperimentConfig,
    out_dir: &Path,
    force: bool,
    progress: bool,
) -> Result<RunOutcome> {
    let results_path = out_dir.join("results.jsonl");
    if results_path.exists() && !force {
        return Err(GlassboxError::Config(format!(
            "{} already exists: choose another --out folder, or pass --force to replace it",
            results_path.display()
        )));
    }
    let (table, fixed_train) = config.load_data()?;
    if let FormulationConfig::Heuristic(h) = &config.formulation {
        return heuristic::run_heuristic(config, h, &table, fixed_train, out_dir, &results_path);
    }
    if let FormulationConfig::Sorrt(f) = &config.formulation {
        return regression::run_regression(
            config,
            f,
            &table,
            fixed_train,
            out_dir,
            &results_path,
            progress,
        );
    }
    let data = table.encode_classification()?;
    // The classification paths all take the same arguments; only the runner differs.
    macro_rules! with {
        ($runner:path, $f:expr) => {
            $runner(
                config,
                $f,
                &data,
                fixed_train,
                out_dir,
                &results_path,
                progress,
            )
        };
    }
    match &config.formulation {
        FormulationConfig::Sorct(f) => with!(run_formulation, f),
        FormulationConfig::LogisticL1(f) => with!(run_formulation, f),
        FormulationConfig::L0Tree(f) => with!(run_formulation, f),
        FormulationConfig::Oct(f) => with!(milp::run_milp_formulation, f),
        FormulationConfig::OctH(f) => with!(milp::run_milp_formulation, f),
        FormulationConfig::LossTree(f) => with!(milp::run_milp_formulation, f),
        FormulationConfig::RiskScore(f) => with!(risk_score::run_risk_score, f),
        FormulationConfig::Sorrt(_) | FormulationConfig::Heuristic(_) => {
            unreachable!("regression and heuristic learners returned above")
        }
    }
}

fn run_formulation<F: NlpClassifierFormulation>(
    config: &ExperimentConfig,
    formulation: &F,
    data: &ClassificationData,
    fixed_train: Option<usize>,
    out_dir: &Path,
    results_path: &Path,
    progress: bool,
) -> Result<RunOutcome> {
    // Check the formulation against the data before anything is written.
    formulation.check(data.n_features(), data.n_classes())?;
    let solver = registry::nlp_solver(&config.solver.name, &config.solver.options)?;
    let warm_model = match &config.multistart.warm_start {
        Some(p) => Some(formulation.load_model(&config.resolve(p))?),
        None => None,
    };
    let splits = config.splits(data.n_samples(), fixed_train, |seed| {
        data.stratified_split(config.split.test_fraction, seed)
    })?;

    let mut writer = ResultsWriter::create(out_dir, results_path)?;
    let bar = run_progress_bar(config, splits.len(), warm_model.is_some(), progress);
    for (r, (train, test)) in splits.iter().enumerate() {
        let split_seed = config.split.seed + r as u64;
        let fitted = fit_split(
            config,
            formulation,
            &*solver,
            data,
            train,
            test,
            r,
            split_seed,
            warm_model.as_ref(),
            &bar,
            &Carry::default(),
        )?;
        writer.write_split(r, formulation.name(), fitted.records, fitted.model.as_ref())?;
    }
    bar.finish_and_clear();
    Ok(writer.finish())
}

/// The progress bar of a run: one step per solve, `starts` random starts plus the warm
/// start (if any) on each of `n_splits` splits.
fn run_progress_bar(
    config: &ExperimentConfig,
    n_splits: usize,
    warm_start: bool,
    show: bool,
) -> indicatif::ProgressBar {
    let total = (n_splits * (config.multistart.starts + usize::from(warm_start))) as u64;
    progress_bar(total, show)
}

/// What a run writes as it goes: the out folder, its `models` folder, `results.jsonl` (one
/// flushed JSON line per solve) and the selected model of every split; it keeps the records
/// for the [`RunOutcome`].
struct ResultsWriter {
    file: std::fs::File,
    results_path: PathBuf,
    models_dir: PathBuf,
    records: Vec<SolveRecord>,
}

impl ResultsWriter {
    /// Creates `out_dir`, its `models` folder and (empty) `results_path`.
    fn create(out_dir: &Path, results_path: &Path) -> Result<Self> {
        std::fs::create_dir_all(out_dir).map_err(|e| GlassboxError::io(out_dir, e))?;
        let models_dir = out_dir.join("models");
        std::fs::create_dir_all(&models_dir).map_err(|e| GlassboxError::io(&models_dir, e))?;
        let file =
            std::fs::File::create(results_path).map_err(|e| GlassboxError::io(results_path, e))?;
        Ok(Self {
            file,
            results_path: results_path.to_path_buf(),
            models_dir,
            records: Vec::new(),
        })
    }

    /// Appends the records of split `split` to `results.jsonl`, one flushed JSON line each,
    /// and saves its selected model (if any) as `models/split-<split>.json` with the
    /// formulation's name `kind`.
    fn write_split<M: Serialize>(
        &mut self,
        split: usize,
        kind: &str,
        records: Vec<SolveRecord>,
        model: Option<&M>,
    ) -> Result<()> {
        for record in &records {
            self.append(record)?;
        }
        if let Some(model) = model {
            crate::model::save_json(
                &self.models_dir.join(format!("split-{split}.json")),
                kind,
                model,
            )?;
        }
        self.records.extend(records);
        Ok(())
    }

    /// Appends `record` to `results.jsonl` as one JSON line, flushed.
    fn append<R: Serialize>(&mut self, record: &R) -> Result<()> {
        let mut line =
            serde_json::to_string(record).map_err(|e| GlassboxError::Config(e.to_string()))?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.flush())
            .map_err(|e| GlassboxError::io(&self.results_path, e))
    }

    /// The records written and the path of `results.jsonl`.
    fn finish(self) -> RunOutcome {
        RunOutcome {
            records: self.records,
            results_path: self.results_path,
        }
    }
}

fn progress_bar(total: u64, show: bool) -> indicatif::ProgressBar {
    if !show || total <= 1 {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} solves {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

struct FittedSplit<M> {
    records: Vec<SolveRecord>,
    model: Option<M>,
    /// The final point of every start (its starting point when the solve returned none):
    /// what a warm-started grid path carries to the next cell.
    points: Vec<Vec<f64>>,
    /// Whether `Carry::stop` cut the multistart short (the records are then incomplete).
    interrupted: bool,
}

/// What the experiment engine (`grid` runs) hands to a split's multistart: the starting
/// points carried from the previous grid cell (replacing the seeded random starts, one per
/// start, same seeds reported) and a check, between solves, that asks it to stop.
#[derive(Default)]
struct Carry<'a> {
    starts: Option<&'a [Vec<f64>]>,
    stop: Option<&'a (dyn Fn() -> bool + Sync)>,
}

/// Multistart on one split: every start solved, each one recorded, the best objective
/// selected.
#[allow(clippy::too_many_arguments)]
fn fit_split<F: NlpClassifierFormulation>(
    config: &ExperimentConfig,
    formulation: &F,
    solver: &dyn crate::NlpSolver,
    data: &ClassificationData,
    train: &[usize],
    test: &[usize],
    r: usize,
    split_seed: u64,
    warm_model: Option<&F::Model>,
    bar: &indicatif::ProgressBar,
    carry: &Carry<'_>,
) -> Result<FittedSplit<F::Model>> {
    let train_data = data.rows(train);
    let test_data = data.rows(test);
    let scaler = MinMaxScaler::fit(&train_data.x);
    let x_train = Arc::new(scaler.transform(&train_data.x));
    let problem = formulation.problem(x_train, Arc::new(train_data.y.clone()), data.n_classes())?;
    let mut starts_list: Vec<(Vec<f64>, Option<u64>)> = (0..config.multistart.starts)
        .map(|s| {
            let seed = config
                .multistart
                .seed
                .wrapping_mul(1_000_003)
                .wrapping_add((r * 1_000 + s) as u64);
            if let Some(carried) = carry.starts {
                return (carried[s].clone(), Some(seed));
            }
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            (formulation.random_start(&problem, &mut rng), Some(seed))
        })
        .collect();
    if let Some(model) = warm_model {
        let x0 = match carry.starts {
            Some(carried) => carried[starts_list.len()].clone(),
            None => formulation.warm_start(model, &problem, &scaler)?,
        };
        starts_list.push((x0, None));
    }
    check_carried_sizes(&starts_list, problem.num_variables())?;
    let mut records = Vec::new();
    let mut points = Vec::new();
    let mut best: Option<(f64, usize, F::Model)> = None;
    for (s, (x0, seed)) in starts_list.into_iter().enumerate() {
        if carry.stop.is_some_and(|stop| stop()) {
            return Ok(FittedSplit {
                records,
                model: None,
                points,
                interrupted: true,
            });
        }
        let options = config
            .solver
            .options
            .with_warm_start(Some(WarmStart::primal(x0.clone())));
        let started = Instant::now();
        let (result, trace) = match &config.decomposition {
            None => (solver.solve(&problem, &options)?, None),
            Some(dec) => {
                let observe = |x: &[f64]| {
                    let model = formulation.model(
                        &problem,
                        x,
                        scaler.clone(),
                        data.classes.clone(),
                        data.encoding.clone(),
                    );
                    (
                        metrics::accuracy(&train_data.y, &model.predict(&train_data.x)),
                        metrics::accuracy(&test_data.y, &model.predict(&test_data.x)),
                    )
                };
                let outcome = decompose(
                    formulation,
                    &problem,
                    solver,
                    &options,
                    dec,
                    seed,
                    s,
                    observe,
                )?;
                (outcome.result, Some(outcome.trace))
            }
        };
        // The decomposition's own clock leaves out the accuracies of its trace.
        let seconds = match &trace {
            Some(_) => result.wall_seconds,
            None => started.elapsed().as_secs_f64(),
        };
        bar.inc(1);
        let (train_acc, test_acc, test_bal, dl, dg, model) =
            if result.primal.len() == problem.num_variables() {
                let model = formulation.model(
                    &problem,
                    &result.primal,
                    scaler.clone(),
                    data.classes.clone(),
                    data.encoding.clone(),
                );
                let (dl, dg) = formulation.sparsity(&model);
                let train_pred = model.predict(&train_data.x);
                let test_pred = model.predict(&test_data.x);
                (
                    metrics::accuracy(&train_data.y, &train_pred),
                    metrics::accuracy(&test_data.y, &test_pred),
                    metrics::balanced_accuracy(&test_data.y, &test_pred, data.n_classes()),
                    dl,
                    dg,
                    Some(model),
                )
            } else {
                (f64::NAN, f64::NAN, f64::NAN, f64::NAN, f64::NAN, None)
            };
        if let (Some(obj), Some(model)) = (result.objective, model) {
            if result.status.has_solution() && best.as_ref().is_none_or(|(b, _, _)| obj < *b) {
                best = Some((obj, s, model));
            }
        }
        let params = formulation.reported_params(&problem);
        points.push(if result.primal.len() == problem.num_variables() {
            result.primal.clone()
        } else {
            x0
        });
        records.push(SolveRecord {
            start: s,
            seed,
            train_accuracy: train_acc,
            test_accuracy: test_acc,
            test_balanced_accuracy: test_bal,
            delta_local: dl,
            delta_global: dg,
            lambda_bound: formulation.lambda_bound(&problem),
            decomposition: trace,
            ..SolveRecord::blank(
                config,
                formulation.name(),
                params,
                r,
                split_seed,
                (train.len(), test.len()),
            )
            .solved(&result, seconds)
        });
    }
    let model = best.map(|(_, s, model)| {
        records[s].selected = true;
        model
    });
    Ok(FittedSplit {
        records,
        model,
        points,
        interrupted: false,
    })
}

/// Checks that every start has the problem's `n` variables (a warm path's carried points
/// cannot cross an axis that changes the problem's size through a model, e.g. depth).
fn check_carried_sizes(starts: &[(Vec<f64>, Option<u64>)], n: usize) -> Result<()> {
    match starts.iter().find(|(x0, _)| x0.len() != n) {
        Some(bad) => Err(GlassboxError::Config(format!(
            "a carried start has {} values but this cell's problem has {n} variables: a warm \
             path cannot cross an axis that changes the problem's size (e.g. depth)",
            bad.0.len()
        ))),
        None => Ok(()),
    }
}

/// One solve by node-based decomposition (`[decomposition]`), the branch order seeded by the
/// start's seed (or its index for a warm start).
#[allow(clippy::too_many_arguments)]
fn decompose<F: NlpClassifierFormulation>(
    formulation: &F,
    problem: &F::Problem,
    solver: &dyn crate::NlpSolver,
    options: &SolveOptions,
    config: &DecompositionConfig,
    seed: Option<u64>,
    start: usize,
    mut observe: impl FnMut(&[f64]) -> (f64, f64),
) -> Result<decomposition::Outcome> {
    let blocks = formulation.node_blocks(problem).ok_or_else(|| {
        GlassboxError::Config(format!(
            "[decomposition]: formulation '{}' has no tree nodes to decompose",
            formulation.name()
        ))
    })?;
    decomposition::solve(
        problem,
        &blocks,
        solver,
        options,
        config,
        seed.unwrap_or(start as u64),
        &mut observe,
    )
}

/// Mean and sample standard deviation.
pub fn mean_std(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    if values.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mean = values.iter().sum::<f64>() / n;
    let var = if values.len() > 1 {
        values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var.sqrt())
}

/// Median (NaN for none).
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    }
}

/// The last line of a run's summary: how many solves, their mean and median seconds per
/// start, and how many ended in each status. Takes (seconds, status) per solve.
pub(crate) fn solves_line<'a>(solves: impl Iterator<Item = (f64, &'a str)>) -> String {
    let mut secs = Vec::new();
    let mut counts = std::collections::BTreeMap::new();
    for (s, status) in solves {
        secs.push(s);
        *counts.entry(status).or_insert(0usize) += 1;
    }
    format!(
        "{} solves: mean {:.3} s, median {:.3} s per start; statuses: {}\n",
        secs.len(),
        mean_std(&secs).0,
        median(&secs),
        counts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The readable summary of a run: one row per split (its selected start), then the means.
pub fn summary_table(records: &[SolveRecord]) -> String {
    use std::fmt::Write as _;
    if records.iter().any(|r| r.regression.is_some()) {
        return regression::summary_table(records);
    }
    if records.iter().any(|r| r.risk_score.is_some()) {
        return risk_score::summary_table(records);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>5} {:>10} {:>9} {:>9} {:>8} {:>8} {:>12} {:>22}",
        "split",
        "objective",
        "train_acc",
        "test_acc",
        "delta_L",
        "delta_G",
        "sec/start",
        "status (selected)"
    );
    let splits: std::collections::BTreeSet<usize> = records.iter().map(|r| r.split).collect();
    let mut tests = Vec::new();
    let mut trains = Vec::new();
    let mut dls = Vec::new();
    let mut dgs = Vec::new();
    for s in &splits {
        let of_split: Vec<&SolveRecord> = records.iter().filter(|r| r.split == *s).collect();
        let secs: Vec<f64> = of_split.iter().map(|r| r.solve_seconds).collect();
        let Some(sel) = of_split.iter().find(|r| r.selected) else {
            let _ = writeln!(out, "{s:>5} no start returned a solution");
            continue;
        };
        tests.push(sel.test_accuracy);
        trains.push(sel.train_accuracy);
        dls.push(sel.delta_local);
        dgs.push(sel.delta_global);
        let _ = writeln!(
            out,
            "{:>5} {:>10.5} {:>9.3} {:>9.3} {:>8.1} {:>8.1} {:>12.3} {:>22}",
            s,
            sel.objective.unwrap_or(f64::NAN),
            sel.train_accuracy,
            sel.test_accuracy,
            sel.delta_local,
            sel.delta_global,
            secs.iter().sum::<f64>() / secs.len() as f64,
            sel.status
        );
    }
    let (test_mean, test_std) = mean_std(&tests);
    let _ = writeln!(
        out,
        "mean over {} splits: test accuracy {:.4} (sd {:.4}), train accuracy {:.4}, delta_L {:.1}%, delta_G {:.1}%",
        tests.len(),
        test_mean,
        test_std,
        mean_std(&trains).0,
        mean_std(&dls).0,
        mean_std(&dgs).0
    );
    out.push_str(&solves_line(
        records.iter().map(|r| (r.solve_seconds, r.status.as_str())),
    ));
    out.push_str(&milp::stats_lines(records));
    out
}
