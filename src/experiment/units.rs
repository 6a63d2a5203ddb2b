//! What the experiment engine needs of a formulation to run one *unit* (one grid cell on one
//! split): the small [`GridUnit`] trait, implemented once per runner path (NLP classifiers,
//! MILP classifiers, NLP regressors, risk scores, heuristic learners) by delegating to that
//! path's per-split function, the same one the one-setting runner calls. A formulation's
//! tunable hyperparameters are its `[formulation]` keys: the grid writes every cell back as a
//! one-setting config and parses it with the formulation's own (serde, `deny_unknown_fields`)
//! config type, so any scalar parameter can be an axis and a bad key or value is an error
//! naming it. Warm starts are optional: a path that cannot carry a solution from one cell to
//! the next ([`GridUnit::carries`] false) walks a warm path cold, and its lines say so
//! (`path_start = "cold"`).
//!
//! Adding a formulation to the engine: implement its path's formulation trait (it then gets
//! `GridUnit` through the `grid_unit!` list below) or, for a new path, implement `GridUnit`.

use super::engine::SplitSpec;
use super::{regression, Carry, ExperimentConfig, FormulationConfig, SolveRecord};
use crate::data::{ClassificationData, MinMaxScaler, RegressionData, Table};
use crate::formulation::{
    MilpClassifierFormulation, NlpClassifierFormulation, NlpRegressorFormulation, TrainingRows,
};
use crate::formulations::heuristic::HeuristicConfig;
use crate::formulations::l0tree::L0TreeConfig;
use crate::formulations::logistic_l1::LogisticL1Config;
use crate::formulations::loss_tree::LossTreeConfig;
use crate::formulations::oct::{OctConfig, OcthConfig};
use crate::formulations::risk_score::RiskScoreConfig;
use crate::formulations::sorct::SorctConfig;
use crate::formulations::sorrt::SorrtConfig;
use crate::nlp::NlpProblem;
use crate::{registry, GlassboxError, Result};
use std::any::Any;
use std::path::Path;
use std::sync::Arc;

/// The data of an engine run, read once and encoded for its formulations' task.
pub struct EngineData {
    /// The table as read (raw columns).
    pub table: Table,
    /// With `data.test_path`: the number of training rows (the first ones).
    pub fixed_train: Option<usize>,
    /// The encoded rows.
    pub encoded: Encoded,
}

/// Rows encoded for classification or regression.
pub enum Encoded {
    /// Class targets.
    Classification(ClassificationData),
    /// Numeric targets.
    Regression(RegressionData),
}

impl EngineData {
    /// Reads `config`'s data and encodes it for a regression (`regression`) or a
    /// classification task.
    pub fn load(config: &ExperimentConfig, regression: bool) -> Result<Self> {
        let (table, fixed_train) = config.load_data()?;
        let encoded = if regression {
            Encoded::Regression(table.encode_regression()?)
        } else {
            Encoded::Classification(table.encode_classification()?)
        };
        Ok(EngineData {
            table,
            fixed_train,
            encoded,
        })
    }

    /// Rows.
    pub fn n_samples(&self) -> usize {
        match &self.encoded {
            Encoded::Classification(d) => d.n_samples(),
            Encoded::Regression(d) => d.n_samples(),
        }
    }

    /// The class labels splits are stratified on; none for regression.
    pub fn labels(&self) -> Option<&[usize]> {
        match &self.encoded {
            Encoded::Classification(d) => Some(&d.y),
            Encoded::Regression(_) => None,
        }
    }

    fn classification(&self, name: &str) -> Result<&ClassificationData> {
        match &self.encoded {
            Encoded::Classification(d) => Ok(d),
            Encoded::Regression(_) => Err(GlassboxError::formulation(
                name,
                "is a classifier but the run's data were encoded for regression",
            )),
        }
    }

    fn regression(&self, name: &str) -> Result<&RegressionData> {
        match &self.encoded {
            Encoded::Regression(d) => Ok(d),
            Encoded::Classification(_) => Err(GlassboxError::formulation(
                name,
                "is a regressor but the run's data were encoded for classification",
            )),
        }
    }
}

/// What a unit gets from its chain besides its split.
pub struct UnitCarry<'a> {
    /// The previous cell of a warm path: its formulation and final points (only for
    /// formulations that carry).
    pub previous: Option<(&'a dyn GridUnit, &'a [Vec<f64>])>,
    /// Asked between solves: stop (the unit is then abandoned).
    pub stop: &'a (dyn Fn() -> bool + Sync),
    /// Where to save the unit's selected model, if anywhere.
    pub model_path: Option<&'a Path>,
}

/// What one unit produced.
pub struct UnitOut {
    /// One record per solve (start).
    pub records: Vec<SolveRecord>,
    /// The final point of every solve, for formulations that carry (else empty).
    pub points: Vec<Vec<f64>>,
    /// Whether a stop request cut it short (its records are then incomplete).
    pub interrupted: bool,
}

/// A formulation as the experiment engine runs it (see the module comment).
pub trait GridUnit: Sync {
    /// Whether its targets are numbers (the data are then encoded for regression and the
    /// splits are not stratified).
    fn regression(&self) -> bool;
    /// Whether a warm path can start a cell from the previous cell's solutions; when not, a
    /// warm path runs its cells cold.
    fn carries(&self) -> bool;
    /// Checks the cell's formulation, solver and multistart against the data before
    /// anything is written.
    fn check(&self, config: &ExperimentConfig, data: &EngineData) -> Result<()>;
    /// Runs the unit of `config`'s cell on `split`.
    fn run(
        &self,
        config: &ExperimentConfig,
        data: &EngineData,
        split: &SplitSpec,
        carry: &UnitCarry<'_>,
    ) -> Result<UnitOut>;
    /// The formulation's config, for a warm path to read the previous cell's solutions
    /// (downcast to the same type).
    fn as_any(&self) -> &dyn Any;
}

/// The engine's view of a cell's formulation.
pub fn of(formulation: &FormulationConfig) -> &dyn GridUnit {
    match formulation {
        FormulationConfig::Sorct(f) => f,
        FormulationConfig::LogisticL1(f) => f,
        FormulationConfig::L0Tree(f) => f,
        FormulationConfig::Sorrt(f) => f,
        FormulationConfig::Oct(f) => f,
        FormulationConfig::OctH(f) => f,
        FormulationConfig::LossTree(f) => f,
        FormulationConfig::RiskScore(f) => f,
        FormulationConfig::Heuristic(f) => f,
    }
}

/// `GridUnit` for the formulations of a runner path, by its module of `check` and `run`.
macro_rules! grid_unit {
    ($path:ident, regression = $regression:expr, $($t:ty),+) => {$(
        impl GridUnit for $t {
            fn regression(&self) -> bool {
                $regression
            }
            fn carries(&self) -> bool {
                true
            }
            fn check(&self, config: &ExperimentConfig, data: &EngineData) -> Result<()> {
                $path::check(self, config, data)
            }
            fn run(
                &self,
                config: &ExperimentConfig,
                data: &EngineData,
                split: &SplitSpec,
                carry: &UnitCarry<'_>,
            ) -> Result<UnitOut> {
                $path::run(self, config, data, split, carry)
            }
            fn as_any(&self) -> &dyn Any {
                self
            }
        }
    )+};
}

grid_unit!(
    nlp_classifier,
    regression = false,
    SorctConfig,
    L0TreeConfig,
    LogisticL1Config
);
grid_unit!(
    milp_classifier,
    regression = false,
    OctConfig,
    OcthConfig,
    LossTreeConfig
);
grid_unit!(nlp_regressor, regression = true, SorrtConfig);

/// The previous cell's formulation, if it is of type `F` (a warm path stays within one
/// formulation).
fn previous_as<'a, F: 'static>(carry: &UnitCarry<'a>) -> Option<(&'a F, &'a [Vec<f64>])> {
    carry
        .previous
        .and_then(|(unit, points)| unit.as_any().downcast_ref::<F>().map(|f| (f, points)))
}

/// Saves a unit's model as `path` (creating its folder) with the formulation's `kind`.
fn save_model<M: serde::Serialize>(
    path: Option<&Path>,
    kind: &str,
    model: Option<&M>,
) -> Result<()> {
    if let (Some(path), Some(model)) = (path, model) {
        create_parent_dir(path)?;
        crate::model::save_json(path, kind, model)?;
    }
    Ok(())
}

fn create_parent_dir(path: &Path) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| GlassboxError::io(dir, e))?;
    }
    Ok(())
}

/// A unit's output with its selected model saved, unless a stop cut the unit short (its
/// model is then not the selection of all its starts).
fn finish<M: serde::Serialize>(
    carry: &UnitCarry<'_>,
    kind: &str,
    model: Option<&M>,
    records: Vec<SolveRecord>,
    points: Vec<Vec<f64>>,
    interrupted: bool,
) -> Result<UnitOut> {
    if !interrupted {
        save_model(carry.model_path, kind, model)?;
    }
    Ok(UnitOut {
        records,
        points,
        interrupted,
    })
}

/// Carried points as starting points of this cell's problem of `n` variables: a point of
/// that size as it is, any other through `via_model` (the previous problem's model at the
/// point, then this formulation's warm start from it: S-ORCT adds its a+/a- and beta
/// variables when its lambdas become positive; the paper feeds "the solutions", i.e. the
/// trees, to the next pair).
fn carry_points(
    points: &[Vec<f64>],
    n: usize,
    via_model: impl Fn(&[f64]) -> Result<Vec<f64>>,
) -> Result<Vec<Vec<f64>>> {
    points
        .iter()
        .map(|p| {
            if p.len() == n {
                Ok(p.clone())
            } else {
                via_model(p)
            }
        })
        .collect()
}

/// The NLP classifiers (S-ORCT, l0 trees, logistic_l1): the one-setting runner's multistart
/// with the carried starts and the stop check.
mod nlp_classifier {
    use super::*;

    pub(super) fn check<F: NlpClassifierFormulation>(
        f: &F,
        config: &ExperimentConfig,
        data: &EngineData,
    ) -> Result<()> {
        let d = data.classification(f.name())?;
        f.check(d.n_features(), d.n_classes())?;
        registry::nlp_solver(&config.solver.name, &config.solver.options).map(|_| ())
    }

    pub(super) fn run<F: NlpClassifierFormulation + 'static>(
        f: &F,
        config: &ExperimentConfig,
        data: &EngineData,
        split: &SplitSpec,
        carry: &UnitCarry<'_>,
    ) -> Result<UnitOut> {
        let d = data.classification(f.name())?;
        let carried = match previous_as::<F>(carry) {
            Some((before, points)) => {
                let train = d.rows(&split.train);
                let scaler = MinMaxScaler::fit(&train.x);
                let x = Arc::new(scaler.transform(&train.x));
                let y = Arc::new(train.y.clone());
                let problem = f.problem(x.clone(), y.clone(), d.n_classes())?;
                let previous = before.problem(x, y, d.n_classes())?;
                Some(carry_points(points, problem.num_variables(), |p| {
                    let model = before.model(
                        &previous,
                        p,
                        scaler.clone(),
                        d.classes.clone(),
                        d.encoding.clone(),
                    );
                    f.warm_start(&model, &problem, &scaler)
                })?)
            }
            None => None,
        };
        let solver = registry::nlp_solver(&config.solver.name, &config.solver.options)?;
        let warm_model = match &config.multistart.warm_start {
            Some(p) => Some(f.load_model(&config.resolve(p))?),
            None => None,
        };
        let fitted = super::super::fit_split(
            config,
            f,
            &*solver,
            d,
            &split.train,
            &split.test,
            split.id,
            split.seed,
            warm_model.as_ref(),
            &indicatif::ProgressBar::hidden(),
            &Carry {
                starts: carried.as_deref(),
                stop: Some(carry.stop),
            },
        )?;
        finish(
            carry,
            f.name(),
            fitted.model.as_ref(),
            fitted.records,
            fitted.points,
            fitted.interrupted,
        )
    }
}

/// The NLP regressors (S-ORRT): the regression runner's multistart with the carried starts
/// and the stop check.
mod nlp_regressor {
    use super::*;

    pub(super) fn check<F: NlpRegressorFormulation>(
        f: &F,
        config: &ExperimentConfig,
        data: &EngineData,
    ) -> Result<()> {
        let d = data.regression(f.name())?;
        f.check(&data.table, d.n_features())?;
        registry::nlp_solver(&config.solver.name, &config.solver.options).map(|_| ())
    }

    pub(super) fn run<F: NlpRegressorFormulation + 'static>(
        f: &F,
        config: &ExperimentConfig,
        data: &EngineData,
        split: &SplitSpec,
        carry: &UnitCarry<'_>,
    ) -> Result<UnitOut> {
        let d = data.regression(f.name())?;
        let carried = match previous_as::<F>(carry) {
            Some((before, points)) => {
                let train = d.rows(&split.train);
                let scaler = MinMaxScaler::fit(&train.x);
                let x = Arc::new(scaler.transform(&train.x));
                let y = Arc::new(train.y.clone());
                let rows = TrainingRows {
                    table: &data.table,
                    rows: &split.train,
                };
                let problem = f.problem(x.clone(), y.clone(), rows)?;
                let previous = before.problem(x, y, rows)?;
                Some(carry_points(points, problem.num_variables(), |p| {
                    let model = before.model(
                        &previous,
                        p,
                        scaler.clone(),
                        data.table.target_name.clone(),
                        d.encoding.clone(),
                    );
                    f.warm_start(&model, &problem, &scaler)
                })?)
            }
            None => None,
        };
        let solver = registry::nlp_solver(&config.solver.name, &config.solver.options)?;
        let warm_model = match &config.multistart.warm_start {
            Some(p) => Some(f.load_model(&config.resolve(p))?),
            None => None,
        };
        let fitted = regression::fit_split(
            config,
            f,
            &*solver,
            (&data.table, d),
            &regression::Split {
                index: split.id,
                seed: split.seed,
                train: &split.train,
                test: &split.test,
            },
            warm_model.as_ref(),
            &indicatif::ProgressBar::hidden(),
            &Carry {
                starts: carried.as_deref(),
                stop: Some(carry.stop),
            },
        )?;
        finish(
            carry,
            f.name(),
            fitted.model.as_ref(),
            fitted.records,
            fitted.points,
            fitted.interrupted,
        )
    }
}

/// The MILP classifiers (OCT, OCT-H, loss-optimal trees): one solve per split, the MIP
/// start carried from the previous cell of a warm path.
mod milp_classifier {
    use super::*;

    pub(super) fn check<F: MilpClassifierFormulation>(
        f: &F,
        config: &ExperimentConfig,
        data: &EngineData,
    ) -> Result<()> {
        let d = data.classification(f.name())?;
        f.check(d.n_features(), d.n_classes())?;
        registry::milp_solver(&config.solver.name, &config.solver.options)?;
        if let Some(name) = f.nlp_backend() {
            registry::nlp_solver(name, &crate::SolveOptions::default())?;
        }
        Ok(())
    }

    pub(super) fn run<F: MilpClassifierFormulation + 'static>(
        f: &F,
        config: &ExperimentConfig,
        data: &EngineData,
        split: &SplitSpec,
        carry: &UnitCarry<'_>,
    ) -> Result<UnitOut> {
        let d = data.classification(f.name())?;
        let solver = registry::milp_solver(&config.solver.name, &config.solver.options)?;
        let nlp = match f.nlp_backend() {
            Some(name) => Some(registry::nlp_solver(name, &crate::SolveOptions::default())?),
            None => None,
        };
        let warm_model = match &config.multistart.warm_start {
            Some(p) => Some(f.load_model(&config.resolve(p))?),
            None => None,
        };
        let carried = previous_as::<F>(carry)
            .and_then(|(before, points)| points.first().map(|p| (before, p.as_slice())));
        let solved = super::super::milp::solve_split(
            config,
            f,
            (&*solver, nlp.as_deref()),
            d,
            (&split.train, &split.test),
            (split.id, split.seed),
            warm_model.as_ref(),
            carried,
        )?;
        finish(
            carry,
            f.name(),
            solved.model.as_ref(),
            vec![solved.record],
            vec![solved.point],
            false,
        )
    }
}

/// Risk scores (ORS, OGRS): one MILP solve per split from the formulation's own warm start;
/// a warm path runs cold.
impl GridUnit for RiskScoreConfig {
    fn regression(&self) -> bool {
        false
    }
    fn carries(&self) -> bool {
        false
    }
    fn check(&self, config: &ExperimentConfig, data: &EngineData) -> Result<()> {
        super::risk_score::check(config, self, data.classification(self.name())?)?;
        registry::milp_solver(&config.solver.name, &config.solver.options).map(|_| ())
    }
    fn run(
        &self,
        config: &ExperimentConfig,
        data: &EngineData,
        split: &SplitSpec,
        carry: &UnitCarry<'_>,
    ) -> Result<UnitOut> {
        let solver = registry::milp_solver(&config.solver.name, &config.solver.options)?;
        let (record, model) = super::risk_score::fit_split(
            config,
            self,
            &*solver,
            data.classification(self.name())?,
            (&split.train, &split.test),
            (split.id, split.seed),
        )?;
        finish(
            carry,
            self.name(),
            model.as_ref(),
            vec![record],
            Vec::new(),
            false,
        )
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The heuristic learners (CART, forest, TAO, TMO, oblique TAO, CCT / CRT): one fit per
/// split on the unscaled rows; a warm path runs cold. CCT / CRT need the `torch` build: their
/// check says so before anything runs.
impl GridUnit for HeuristicConfig {
    fn regression(&self) -> bool {
        self.is_regression()
    }
    fn carries(&self) -> bool {
        false
    }
    fn check(&self, config: &ExperimentConfig, data: &EngineData) -> Result<()> {
        super::heuristic::Prepared::new(config, self, &data.table).map(|_| ())
    }
    fn run(
        &self,
        config: &ExperimentConfig,
        data: &EngineData,
        split: &SplitSpec,
        carry: &UnitCarry<'_>,
    ) -> Result<UnitOut> {
        // Encoding the table again per unit costs far less than a fit.
        let prepared = super::heuristic::Prepared::new(config, self, &data.table)?;
        let (record, model) =
            prepared.fit_split(config, split.id, split.seed, &split.train, &split.test)?;
        if let Some(path) = carry.model_path {
            create_parent_dir(path)?;
            model.save(path, self.name())?;
        }
        Ok(UnitOut {
            records: vec![record],
            points: Vec::new(),
            interrupted: false,
        })
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
