//! The NLP regressors' kind (S-ORRT): the NLP classifiers' multistart for formulations that
//! implement [`NlpRegressorFormulation`]. Splits are seeded random holdouts (stratification
//! does not apply to a numeric target); every solve's line carries the regression metrics
//! (`train_r2`, `test_r2`, `train_mse`, `test_mse`) and, where the formulation knows them,
//! the lambda bounds of its sparsest model.

use super::super::engine::SplitSpec;
use super::super::unit::{EngineData, Formulation, SeededNlp, UnitCarry, UnitOut};
use super::super::{ExperimentConfig, RegressionMetrics, SolveRecord};
use super::multistart::{self, Solved};
use crate::data::{MinMaxScaler, RegressionData};
use crate::formulation::{NlpRegressorFormulation, TrainingRows};
use crate::model::{json_of, JsonValue, Regressor};
use crate::nlp::NlpProblem;
use crate::{metrics, Result};
use std::sync::Arc;
use std::time::Instant;

/// An NLP regressor's config, as the engine runs it.
pub struct NlpRegressor<F>(pub F);

/// A split's training rows scaled, and the problem built on them.
pub(super) struct Prepared<F: NlpRegressorFormulation> {
    pub(super) scaler: MinMaxScaler,
    pub(super) problem: F::Problem,
}

impl<F: NlpRegressorFormulation> NlpRegressor<F> {
    /// The problem on the training rows `rows`, their features scaled on themselves.
    pub(super) fn prepare(
        &self,
        data: &EngineData,
        d: &RegressionData,
        rows: &[usize],
    ) -> Result<Prepared<F>> {
        let train = d.rows(rows);
        let (scaler, x) = multistart::scaled(&train.x);
        let raw = TrainingRows {
            table: &data.table,
            rows,
        };
        let problem = self.0.problem(x, Arc::new(train.y.clone()), raw)?;
        Ok(Prepared { scaler, problem })
    }

    /// The model at point `x` of a problem prepared on some rows.
    pub(super) fn model_at(
        &self,
        prepared: &Prepared<F>,
        data: &EngineData,
        d: &RegressionData,
        x: &[f64],
    ) -> F::Model {
        self.0.model(
            &prepared.problem,
            x,
            prepared.scaler.clone(),
            data.table.target_name.clone(),
            d.encoding.clone(),
        )
    }

    /// `record` with what `model` measures on the training rows it was fitted on and on
    /// the test rows.
    pub(super) fn measured(
        &self,
        mut record: SolveRecord,
        model: &F::Model,
        train: &RegressionData,
        test: &RegressionData,
    ) -> SolveRecord {
        (record.delta_local, record.delta_global) = self.0.sparsity(model);
        let train_pred = model.predict(&train.x);
        let test_pred = model.predict(&test.x);
        let m = record.regression.get_or_insert(RegressionMetrics {
            train_r2: f64::NAN,
            test_r2: f64::NAN,
            train_mse: f64::NAN,
            test_mse: f64::NAN,
            lambda_local_bound: None,
            lambda_global_bound: None,
        });
        m.train_r2 = metrics::r_squared(&train.y, &train_pred);
        m.test_r2 = metrics::r_squared(&test.y, &test_pred);
        m.train_mse = metrics::mean_squared_error(&train.y, &train_pred);
        m.test_mse = metrics::mean_squared_error(&test.y, &test_pred);
        record
    }

    fn warm_model(&self, config: &ExperimentConfig, data: &EngineData) -> Result<Option<F::Model>> {
        multistart::warm_model(config, data, |p| self.0.load_model(p))
    }
}

impl<F> Formulation for NlpRegressor<F>
where
    F: NlpRegressorFormulation + Send + Sync,
    F::Problem: 'static,
{
    fn name(&self) -> &str {
        self.0.name()
    }
    fn regression(&self) -> bool {
        true
    }
    fn carries(&self) -> bool {
        true
    }
    fn random_starts(&self) -> bool {
        true
    }

    fn solves_per_unit(&self, config: &ExperimentConfig) -> usize {
        multistart::nlp_solves_per_unit(self.0.greedy_start_count(), config, self.chooses())
    }

    fn check(&self, config: &ExperimentConfig, data: &EngineData) -> Result<()> {
        let d = data.regression(self.name())?;
        self.0.check(&data.table, d.n_features())?;
        config
            .registry
            .nlp_solver(&config.solver.name, &config.solver.options)?;
        self.warm_model(config, data).map(|_| ())
    }

    fn run(
        &self,
        config: &ExperimentConfig,
        data: &EngineData,
        split: &SplitSpec,
        carry: &UnitCarry<'_>,
    ) -> Result<UnitOut> {
        let f = &self.0;
        let d = data.regression(f.name())?;
        let prepared = self.prepare(data, d, &split.train)?;
        let problem = &prepared.problem;
        let n = problem.num_variables();
        let warm_model = self.warm_model(config, data)?;
        let starts = multistart::nlp_starts(
            config,
            carry,
            data,
            split,
            f.name(),
            n,
            warm_model.as_ref(),
            |m| f.warm_start(m, problem, &prepared.scaler),
            f.greedy_starts(problem),
            |rng| f.random_start(problem, rng),
        )?;
        let solver = config
            .registry
            .nlp_solver(&config.solver.name, &config.solver.options)?;
        let train = d.rows(&split.train);
        let test = d.rows(&split.test);
        let bounds = f.lambda_bounds(problem);
        let blank = SolveRecord::blank(
            config,
            f.name(),
            f.reported_params(problem),
            split.id,
            split.seed,
            (split.train.len(), split.test.len()),
        );
        let ran = multistart::solve_starts(starts, carry, |_, start, incumbent| {
            let options = config
                .solver
                .options
                .with_warm_start(Some(multistart::warm_start(start.x0.clone(), start.kind)));
            let started = Instant::now();
            let context = crate::starts::StartContext {
                kind: start.kind,
                incumbent,
            };
            let result = f.solve_start(problem, &*solver, &options, context)?;
            let seconds = started.elapsed().as_secs_f64();
            let nan = f64::NAN;
            let has_point = result.primal.len() == n;
            let model = has_point.then(|| self.model_at(&prepared, data, d, &result.primal));
            let mut record = blank.clone().solved(&result, seconds);
            record.regression = Some(RegressionMetrics {
                train_r2: nan,
                test_r2: nan,
                train_mse: nan,
                test_mse: nan,
                lambda_local_bound: bounds.map(|b| b.0),
                lambda_global_bound: bounds.map(|b| b.1),
            });
            if let Some(model) = &model {
                record = self.measured(record, model, &train, &test);
            }
            Ok(Solved::of_nlp(result, &start.x0, record, model))
        })?;
        let ran = self.select_by_cross_validation(config, data, split, carry, &prepared, ran)?;
        multistart::finish(f.name(), carry, ran)
    }

    fn nlp_problem(
        &self,
        config: &ExperimentConfig,
        data: &EngineData,
        split: &SplitSpec,
        starts: usize,
    ) -> Result<Option<SeededNlp>> {
        let d = data.regression(self.name())?;
        let Prepared { problem, .. } = self.prepare(data, d, &split.train)?;
        let starts = multistart::seeded_points(config, split, starts, |rng| {
            self.0.random_start(&problem, rng)
        });
        Ok(Some(SeededNlp {
            problem: Box::new(problem),
            starts,
        }))
    }

    fn models_at(
        &self,
        _config: &ExperimentConfig,
        data: &EngineData,
        split: &SplitSpec,
        points: &[Vec<f64>],
    ) -> Result<Vec<JsonValue>> {
        let d = data.regression(self.name())?;
        let prepared = self.prepare(data, d, &split.train)?;
        points
            .iter()
            .map(|p| json_of(&self.model_at(&prepared, data, d, p)))
            .collect()
    }
}
