//! The runner path of the heuristic learners (CART, forest, TAO, TMO): no solver and no
//! scaling. Each split's training rows are fitted once, the model is saved as
//! `models/split-<r>.json` and one line is appended to `results.jsonl` with the same
//! metric fields as the optimization formulations (`objective` is the training loss:
//! the misclassification rate, or the mean squared error for regression). Splits are
//! stratified holdouts for classification, random holdouts for regression (as the other
//! paths), or the fixed split of `data.test_path`.

use super::{ExperimentConfig, RegressionMetrics, ResultsWriter, RunOutcome, SolveRecord};
use crate::data::{self, Encoding, Table};
use crate::formulation::ReportedParams;
use crate::formulations::cart::grow::Targets;
use crate::formulations::cart::{TreeModel, TreeTask};
use crate::formulations::heuristic::{FittedModel, HeuristicConfig, TrainingSet};
use crate::{metrics, Result};
use nalgebra::DMatrix;
use std::path::Path;
use std::time::Instant;

/// Runs heuristic learner `learner` on `table` (see the module comment).
pub(super) fn run_heuristic(
    config: &ExperimentConfig,
    learner: &HeuristicConfig,
    table: &Table,
    fixed_train: Option<usize>,
    out_dir: &Path,
    results_path: &Path,
) -> Result<RunOutcome> {
    let prepared = Prepared::new(config, learner, table)?;
    let n = prepared.x.nrows();
    let splits = config.splits(n, fixed_train, |seed| {
        if prepared.regression {
            data::random_split(n, config.split.test_fraction, seed)
        } else {
            data::stratified_split_named(
                &prepared.class_y,
                config.split.test_fraction,
                seed,
                &table.source,
                prepared.task.classes(),
            )
        }
    })?;
    let mut writer = ResultsWriter::create(out_dir, results_path)?;
    for (r, (train, test)) in splits.iter().enumerate() {
        let split_seed = config.split.seed + r as u64;
        let (record, model) = prepared.fit_split(config, r, split_seed, train, test)?;
        writer.write_split(r, learner.name(), vec![record], Some(&model))?;
    }
    Ok(writer.finish())
}

/// A heuristic learner with its data encoded for its task and checked: what every split's
/// fit needs (the one-setting runner's and the experiment engine's).
pub(super) struct Prepared<'a> {
    learner: &'a HeuristicConfig,
    regression: bool,
    x: DMatrix<f64>,
    class_y: Vec<usize>,
    value_y: Vec<f64>,
    task: TreeTask,
    encoding: Encoding,
    start: Option<TreeModel>,
    solver: Option<Box<dyn crate::NlpSolver>>,
}

impl<'a> Prepared<'a> {
    /// Encodes `table` for `learner`'s task and checks the learner, its saved start
    /// (`multistart.warm_start`) and its solver before anything is written.
    pub(super) fn new(
        config: &ExperimentConfig,
        learner: &'a HeuristicConfig,
        table: &Table,
    ) -> Result<Self> {
        let regression = learner.is_regression();
        let (x, class_y, value_y, task, encoding) = if regression {
            let d = table.encode_regression()?;
            let task = TreeTask::Regression {
                target: table.target_name.clone(),
            };
            (d.x, Vec::new(), d.y, task, d.encoding)
        } else {
            let d = table.encode_classification()?;
            let task = TreeTask::Classification { classes: d.classes };
            (d.x, d.y, Vec::new(), task, d.encoding)
        };
        learner.check(regression, x.ncols())?;
        let start = match &config.multistart.warm_start {
            Some(p) => Some(TreeModel::load(&config.resolve(p))?),
            None => None,
        };
        learner.check_start(start.as_ref(), x.ncols(), task.classes().len())?;
        let solver = if learner.uses_solver() {
            Some(crate::registry::nlp_solver(
                &config.solver.name,
                &config.solver.options,
            )?)
        } else {
            None
        };
        Ok(Prepared {
            learner,
            regression,
            x,
            class_y,
            value_y,
            task,
            encoding,
            start,
            solver,
        })
    }

    /// Fits the learner on the `train` rows of split `r` (seeded `split_seed`) and
    /// evaluates it on `test`: the split's results line and model.
    pub(super) fn fit_split(
        &self,
        config: &ExperimentConfig,
        r: usize,
        split_seed: u64,
        train: &[usize],
        test: &[usize],
    ) -> Result<(SolveRecord, FittedModel)> {
        let (learner, regression) = (self.learner, self.regression);
        let n_classes = self.task.classes().len();
        let x_train = self.x.select_rows(train.iter());
        let x_test = self.x.select_rows(test.iter());
        let pick_usize = |rows: &[usize]| rows.iter().map(|&i| self.class_y[i]).collect::<Vec<_>>();
        let pick_f64 = |rows: &[usize]| rows.iter().map(|&i| self.value_y[i]).collect::<Vec<_>>();
        let (yc_train, yc_test) = if regression {
            (Vec::new(), Vec::new())
        } else {
            (pick_usize(train), pick_usize(test))
        };
        let (yv_train, yv_test) = if regression {
            (pick_f64(train), pick_f64(test))
        } else {
            (Vec::new(), Vec::new())
        };
        let targets = if regression {
            Targets::Values(&yv_train)
        } else {
            Targets::Classes {
                y: &yc_train,
                n_classes,
            }
        };
        let training = TrainingSet {
            x: &x_train,
            targets,
            task: &self.task,
            encoding: &self.encoding,
        };
        let started = Instant::now();
        // The learner's own seed is varied per split so that splits are independent draws.
        let fit = learner.fit(
            &training,
            split_seed,
            self.start.as_ref(),
            self.solver.as_deref().map(|s| (s, &config.solver.options)),
        )?;
        let seconds = started.elapsed().as_secs_f64();
        let nan = f64::NAN;
        let (mut train_acc, mut test_acc, mut test_bal, mut reg) = (nan, nan, nan, None);
        let objective = if regression {
            let model = fit.model.regressor().ok_or_else(|| {
                crate::GlassboxError::formulation(learner.name(), "learns classifiers only")
            })?;
            let (p_train, p_test) = (model.predict(&x_train), model.predict(&x_test));
            let train_mse = metrics::mean_squared_error(&yv_train, &p_train);
            reg = Some(RegressionMetrics {
                train_r2: metrics::r_squared(&yv_train, &p_train),
                test_r2: metrics::r_squared(&yv_test, &p_test),
                train_mse,
                test_mse: metrics::mean_squared_error(&yv_test, &p_test),
                lambda_local_bound: None,
                lambda_global_bound: None,
            });
            train_mse
        } else {
            let model = fit.model.classifier();
            let (p_train, p_test) = (model.predict(&x_train), model.predict(&x_test));
            train_acc = metrics::accuracy(&yc_train, &p_train);
            test_acc = metrics::accuracy(&yc_test, &p_test);
            test_bal = metrics::balanced_accuracy(&yc_test, &p_test, n_classes);
            1.0 - train_acc
        };
        let (dl, dg) = fit.model.sparsity();
        let record = SolveRecord {
            seed: Some(split_seed),
            selected: true,
            // A heuristic proves nothing about optimality: "heuristic", or the limit it hit.
            status: if fit.hit_time_limit {
                "time_limit_feasible"
            } else {
                "heuristic"
            }
            .to_string(),
            raw_status: fit.note.clone(),
            objective: Some(objective),
            train_accuracy: train_acc,
            test_accuracy: test_acc,
            test_balanced_accuracy: test_bal,
            regression: reg,
            delta_local: dl,
            delta_global: dg,
            solve_seconds: seconds,
            iterations: fit.iterations,
            depth: learner.depth(),
            ..SolveRecord::blank(
                config,
                learner.name(),
                ReportedParams::default(),
                r,
                split_seed,
                (train.len(), test.len()),
            )
        };
        Ok((record, fit.model))
    }
}
