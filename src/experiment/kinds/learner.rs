//! The heuristic learners' kind (CART, forest, TAO, TMO, oblique TAO, CCT / CRT): no
//! problem and no scaling. Each split's training rows (encoded, unscaled) are fitted once
//! and one line is written with the same metric fields as the optimization formulations
//! (`objective` is the training loss: the misclassification rate, or the mean squared error
//! for regression). A warm path runs cold. CCT / CRT need the `torch` build: their fit says so.

use super::super::engine::SplitSpec;
use super::super::unit::{Encoded, EngineData, Formulation, UnitCarry, UnitOut};
use super::super::{ExperimentConfig, RegressionMetrics, SolveRecord};
use super::multistart::{self, Solved, Start};
use crate::formulation::ReportedParams;
use crate::learner::{HeuristicLearner, Targets, TrainingSet, TreeTask};
use crate::model::FittedModel;
use crate::{metrics, GlassboxError, Result};
use std::time::Instant;

/// A heuristic learner's config, as the engine runs it.
pub struct Learner<F>(pub F);

impl<F: HeuristicLearner> Learner<F> {
    /// The saved model to start from (`multistart.warm_start`), checked against the data
    /// (its size, and its columns by name).
    fn start(&self, config: &ExperimentConfig, data: &EngineData) -> Result<Option<F::Model>> {
        let Some(path) = &config.multistart.warm_start else {
            return Ok(None);
        };
        let (features, classes) = match &data.encoded {
            Encoded::Classification(d) => (d.n_features(), d.n_classes()),
            Encoded::Regression(d) => (d.n_features(), 0),
        };
        let path = config.resolve(path);
        let model = self.0.load_start(&path, features, classes)?;
        multistart::check_model_columns(&path, &model, data)?;
        Ok(Some(model))
    }

    fn solver(&self, config: &ExperimentConfig) -> Result<Option<Box<dyn crate::NlpSolver>>> {
        if !self.0.uses_solver() {
            return Ok(None);
        }
        config
            .registry
            .nlp_solver(&config.solver.name, &config.solver.options)
            .map(Some)
    }
}

impl<F> Formulation for Learner<F>
where
    F: HeuristicLearner + Send + Sync,
{
    fn name(&self) -> &str {
        self.0.name()
    }
    fn regression(&self) -> bool {
        self.0.is_regression()
    }
    fn carries(&self) -> bool {
        false
    }
    fn uses_solver(&self) -> bool {
        self.0.uses_solver()
    }
    fn starts_from_model(&self) -> bool {
        self.0.refines_a_model()
    }

    fn check(&self, config: &ExperimentConfig, data: &EngineData) -> Result<()> {
        let features = match &data.encoded {
            Encoded::Classification(d) => d.n_features(),
            Encoded::Regression(d) => d.n_features(),
        };
        self.0.check(self.0.is_regression(), features)?;
        self.start(config, data)?;
        self.solver(config).map(|_| ())
    }

    fn run(
        &self,
        config: &ExperimentConfig,
        data: &EngineData,
        split: &SplitSpec,
        carry: &UnitCarry<'_>,
    ) -> Result<UnitOut> {
        let learner = &self.0;
        let name = learner.name();
        let start = self.start(config, data)?;
        let solver = self.solver(config)?;
        let (x, encoding, task, class_y, value_y) = match &data.encoded {
            Encoded::Classification(d) => (
                &d.x,
                &d.encoding,
                TreeTask::Classification {
                    classes: d.classes.clone(),
                },
                d.y.as_slice(),
                &[][..],
            ),
            Encoded::Regression(d) => (
                &d.x,
                &d.encoding,
                TreeTask::Regression {
                    target: data.table.target_name.clone(),
                },
                &[][..],
                d.y.as_slice(),
            ),
        };
        let regression = learner.is_regression();
        let n_classes = task.classes().len();
        let x_train = x.select_rows(split.train.iter());
        let x_test = x.select_rows(split.test.iter());
        let pick = |y: &[usize], rows: &[usize]| rows.iter().map(|&i| y[i]).collect::<Vec<_>>();
        let pick_f = |y: &[f64], rows: &[usize]| rows.iter().map(|&i| y[i]).collect::<Vec<_>>();
        let (yc_train, yc_test, yv_train, yv_test) = if regression {
            let (a, b) = (pick_f(value_y, &split.train), pick_f(value_y, &split.test));
            (Vec::new(), Vec::new(), a, b)
        } else {
            let (a, b) = (pick(class_y, &split.train), pick(class_y, &split.test));
            (a, b, Vec::new(), Vec::new())
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
            task: &task,
            encoding,
            interrupt: config.solver.options.interrupt.as_ref(),
        };
        let blank = SolveRecord {
            depth: learner.depth(),
            ..SolveRecord::blank(
                config,
                name,
                ReportedParams::default(),
                split.id,
                split.seed,
                (split.train.len(), split.test.len()),
            )
        };
        // The learner's own seed is varied per split so that splits are independent draws.
        let only = Start::only(Vec::new(), Some(split.seed));
        multistart::run(name, vec![only], carry, |_, _, _| {
            let started = Instant::now();
            let fit = learner.fit(
                &training,
                split.seed,
                start.as_ref(),
                solver.as_deref().map(|s| (s, &config.solver.options)),
            )?;
            let seconds = started.elapsed().as_secs_f64();
            let mut record = blank.clone();
            let objective =
                if regression {
                    let model = fit.model.as_regressor().ok_or_else(|| {
                        GlassboxError::formulation(name, "learns classifiers only")
                    })?;
                    let (p_train, p_test) = (model.predict(&x_train), model.predict(&x_test));
                    let train_mse = metrics::mean_squared_error(&yv_train, &p_train);
                    record.regression = Some(RegressionMetrics {
                        train_r2: metrics::r_squared(&yv_train, &p_train),
                        test_r2: metrics::r_squared(&yv_test, &p_test),
                        train_mse,
                        test_mse: metrics::mean_squared_error(&yv_test, &p_test),
                        lambda_local_bound: None,
                        lambda_global_bound: None,
                    });
                    train_mse
                } else {
                    let model = fit.model.as_classifier().ok_or_else(|| {
                        GlassboxError::formulation(name, "learns regressors only")
                    })?;
                    let (p_train, p_test) = (model.predict(&x_train), model.predict(&x_test));
                    record.train_accuracy = metrics::accuracy(&yc_train, &p_train);
                    record.test_accuracy = metrics::accuracy(&yc_test, &p_test);
                    record.test_balanced_accuracy =
                        metrics::balanced_accuracy(&yc_test, &p_test, n_classes);
                    1.0 - record.train_accuracy
                };
            (record.delta_local, record.delta_global) = learner.sparsity(&fit.model);
            Ok(Solved {
                record: SolveRecord {
                    // A heuristic proves nothing about optimality: "heuristic", or the limit it hit.
                    status: if fit.hit_time_limit {
                        "time_limit_feasible"
                    } else {
                        "heuristic"
                    }
                    .to_string(),
                    raw_status: fit.note.clone(),
                    objective: Some(objective),
                    solve_seconds: seconds,
                    iterations: fit.iterations,
                    ..record
                },
                model: Some(fit.model),
                usable: true,
                point: Vec::new(),
            })
        })
    }
}
