//! What the experiment engine needs of a formulation to run one *unit* (one grid cell on one
//! split): the [`Formulation`] trait, which every registry entry's config becomes (see
//! `registry/formulations.rs`; one implementation per problem kind, in [`super::kinds`]).
//! A one-setting run is the engine's one-cell grid on the holdout splits, so every
//! formulation runs one way.
//!
//! A formulation's tunable hyperparameters are its `[formulation]` keys: the grid writes
//! every cell back as a one-setting config and parses it with the formulation's own (serde,
//! `deny_unknown_fields`) config type, so any scalar parameter can be an axis and a bad key
//! or value is an error naming it. Warm starts are optional: a kind that cannot carry a
//! solution from one cell to the next ([`Formulation::carries`] false) walks a warm path
//! cold, and its lines say so (`path_start = "cold"`).

use super::engine::SplitSpec;
use super::{ExperimentConfig, SolveRecord};
use crate::data::{ClassificationData, DummyCoding, RegressionData, Table};
use crate::model::{FittedModel, JsonValue};
use crate::nlp::NlpProblem;
use crate::{GlassboxError, Result};
use std::path::Path;

/// A formulation as the experiment engine runs it (see the module comment).
pub trait Formulation: Send + Sync {
    /// The name configs and saved models use.
    fn name(&self) -> &str;
    /// Whether its targets are numbers (the data are then encoded for regression and the
    /// splits are not stratified).
    fn regression(&self) -> bool;
    /// Whether a warm path can start a cell from the previous cell's solutions; when not, a
    /// warm path runs its cells cold.
    fn carries(&self) -> bool;
    /// Whether it is solved by a backend (and so needs a `[solver]` table).
    fn uses_solver(&self) -> bool {
        true
    }
    /// Whether it can start from a saved model of its own (`[multistart] warm_start`);
    /// Python's `warm_start=True` refits from the previous model only where it can.
    fn starts_from_model(&self) -> bool {
        true
    }
    /// Whether `[decomposition]` may train it (its problem has tree nodes).
    fn decomposable(&self) -> bool {
        false
    }
    /// Whether `[multistart] starts` and `seed` apply: the NLP kinds' multistart. The
    /// others solve once per split (a MILP backend searches globally, a learner is seeded
    /// by the split) and ignore them, as a config of several formulations needs.
    fn random_starts(&self) -> bool {
        false
    }
    /// Solves per unit that a progress bar counts (the starts of a multistart).
    fn solves_per_unit(&self, _config: &ExperimentConfig) -> usize {
        1
    }
    /// Checks the cell's formulation, solver, multistart and warm start against the data
    /// before anything is written.
    fn check(&self, config: &ExperimentConfig, data: &EngineData) -> Result<()>;
    /// Checks what depends on `split`'s training rows (after [`Formulation::check`], for
    /// every split before anything is written), so that a split that cannot be fitted
    /// fails the run before the splits ahead of it write their lines.
    fn check_split(
        &self,
        _config: &ExperimentConfig,
        _data: &EngineData,
        _split: &SplitSpec,
    ) -> Result<()> {
        Ok(())
    }
    /// Runs the unit of `config`'s cell on `split`.
    fn run(
        &self,
        config: &ExperimentConfig,
        data: &EngineData,
        split: &SplitSpec,
        carry: &UnitCarry<'_>,
    ) -> Result<UnitOut>;
    /// The NLP this formulation builds on `split`'s training rows, with `starts` seeded
    /// random starting points; none for a formulation that builds no NLP. For checks that
    /// treat every NLP formulation alike (the formulation conformance suite's derivative
    /// checks).
    fn nlp_problem(
        &self,
        _config: &ExperimentConfig,
        _data: &EngineData,
        _split: &SplitSpec,
        _starts: usize,
    ) -> Result<Option<SeededNlp>> {
        Ok(None)
    }
    /// The fitted models (as JSON) at final `points` of this formulation's problem on
    /// `split`: a warm path hands its points to a next cell whose problem has another size
    /// through their models (the paper feeds "the solutions", i.e. the trees, to the next
    /// pair). Only formulations that carry need it.
    fn models_at(
        &self,
        _config: &ExperimentConfig,
        _data: &EngineData,
        _split: &SplitSpec,
        _points: &[Vec<f64>],
    ) -> Result<Vec<JsonValue>> {
        Err(GlassboxError::formulation(
            self.name(),
            "cannot carry solutions along a warm path",
        ))
    }
}

/// An NLP with seeded random starting points (see [`Formulation::nlp_problem`]).
pub struct SeededNlp {
    /// The problem.
    pub problem: Box<dyn NlpProblem>,
    /// Random starting points, one per seed.
    pub starts: Vec<Vec<f64>>,
}

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
        Self::of_table(table, fixed_train, regression, config.data.dummies)
    }

    /// The rows of `table` (its first `fixed_train` rows the training part of a fixed
    /// split, if given) encoded for a regression (`regression`) or a classification task,
    /// categorical columns coded by `dummies`: for programs that hold their data in memory
    /// (the Python package).
    pub fn of_table(
        table: Table,
        fixed_train: Option<usize>,
        regression: bool,
        dummies: DummyCoding,
    ) -> Result<Self> {
        let encoded = if regression {
            Encoded::Regression(table.encode_regression_with(dummies)?)
        } else {
            let d = table.encode_classification_with(dummies)?;
            // The classes are counted on both files together (they are encoded alike); a
            // model learns from the training file alone, which must hold two of them.
            if let Some(n_train) = fixed_train {
                let first = d.y[..n_train].first().copied();
                if d.y[..n_train].iter().all(|&k| Some(k) == first) {
                    let file = table.file_parts().remove(0).1;
                    return Err(GlassboxError::data(
                        file,
                        format!(
                            "the target column '{}' has a single class '{}' in the training \
                             file (data.path); classification needs at least two",
                            table.target_name,
                            first.map_or("", |k| d.classes[k].as_str())
                        ),
                    ));
                }
            }
            Encoded::Classification(d)
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

    /// The rows encoded for classification, or an error naming formulation `name`.
    pub fn classification(&self, name: &str) -> Result<&ClassificationData> {
        match &self.encoded {
            Encoded::Classification(d) => Ok(d),
            Encoded::Regression(_) => Err(GlassboxError::formulation(
                name,
                "is a classifier but the run's data were encoded for regression",
            )),
        }
    }

    /// The rows encoded for regression, or an error naming formulation `name`.
    pub fn regression(&self, name: &str) -> Result<&RegressionData> {
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
    /// The previous cell of a warm path: its config and final points (only for
    /// formulations that carry).
    pub previous: Option<(&'a ExperimentConfig, &'a [Vec<f64>])>,
    /// Asked before and after each solve: stop (the unit is then abandoned).
    pub stop: &'a (dyn Fn() -> bool + Sync),
    /// Where to save the unit's selected model, if anywhere.
    pub model_path: Option<&'a Path>,
    /// Advanced by one per solve.
    pub progress: &'a indicatif::ProgressBar,
}

/// What one unit produced.
pub struct UnitOut {
    /// One record per solve (start).
    pub records: Vec<SolveRecord>,
    /// The final point of every solve, for formulations that carry (else empty).
    pub points: Vec<Vec<f64>>,
    /// Whether a stop request cut it short (its records are then incomplete).
    pub interrupted: bool,
    /// The selected start's model (none when no start returned a usable solution, or when
    /// the unit was cut short).
    pub model: Option<Box<dyn FittedModel>>,
}
