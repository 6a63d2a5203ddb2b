//! The NLP classifiers' kind (S-ORCT, l0 trees, logistic_l1): on each split the NLP is built
//! on the min-max scaled training rows and solved from every start of the multistart (seeded
//! random starts, the saved model of `multistart.warm_start`, or a warm path's carried
//! points), optionally by node-based decomposition (`[decomposition]`); the best objective is
//! selected, then, where the formulation asks for it (`selection_folds`, S-ORCT's and
//! l0tree's default), chosen by cross-validation against the greedy tree (`selection.rs`).
//! Lines carry the classification metrics, delta_L and delta_G, the formulation's lambda
//! bound and the decomposition's trace.

use super::super::engine::SplitSpec;
use super::super::unit::{EngineData, Formulation, SeededNlp, UnitCarry, UnitOut};
use super::super::{ExperimentConfig, SolveRecord};
use super::multistart::{self, Solved};
use crate::data::{ClassificationData, MinMaxScaler};
use crate::formulation::NlpClassifierFormulation;
use crate::formulations::decomposition::{self, DecompositionConfig};
use crate::model::{json_of, Classifier, JsonValue};
use crate::nlp::NlpProblem;
use crate::starts::StartContext;
use crate::{metrics, GlassboxError, Result, SolveOptions};
use std::sync::Arc;
use std::time::Instant;

/// An NLP classifier's config, as the engine runs it.
pub struct NlpClassifier<F>(pub F);

/// A split's training rows scaled, and the problem built on them.
pub(super) struct Prepared<F: NlpClassifierFormulation> {
    pub(super) scaler: MinMaxScaler,
    pub(super) problem: F::Problem,
}

impl<F: NlpClassifierFormulation> NlpClassifier<F> {
    /// The problem on the training rows `rows`, their features scaled on themselves.
    pub(super) fn prepare(&self, d: &ClassificationData, rows: &[usize]) -> Result<Prepared<F>> {
        let train = d.rows(rows);
        let (scaler, x) = multistart::scaled(&train.x);
        let problem = self
            .0
            .problem(x, Arc::new(train.y.clone()), d.n_classes())?;
        Ok(Prepared { scaler, problem })
    }

    fn warm_model(&self, config: &ExperimentConfig, data: &EngineData) -> Result<Option<F::Model>> {
        multistart::warm_model(config, data, |p| self.0.load_model(p))
    }

    /// The model at point `x` of a problem prepared on some rows.
    pub(super) fn model_at(
        &self,
        prepared: &Prepared<F>,
        d: &ClassificationData,
        x: &[f64],
    ) -> F::Model {
        self.0.model(
            &prepared.problem,
            x,
            prepared.scaler.clone(),
            d.classes.clone(),
            d.encoding.clone(),
        )
    }

    /// `record` with what `model` measures on the training rows it was fitted on and on
    /// the test rows.
    pub(super) fn measured(
        &self,
        record: SolveRecord,
        model: &F::Model,
        train: &ClassificationData,
        test: &ClassificationData,
    ) -> SolveRecord {
        let (delta_local, delta_global) = self.0.sparsity(model);
        let test_pred = model.predict(&test.x);
        SolveRecord {
            delta_local,
            delta_global,
            train_accuracy: metrics::accuracy(&train.y, &model.predict(&train.x)),
            test_accuracy: metrics::accuracy(&test.y, &test_pred),
            test_balanced_accuracy: metrics::balanced_accuracy(
                &test.y,
                &test_pred,
                test.n_classes(),
            ),
            ..record
        }
    }

    /// The starts of a split solved on its training rows (`prepared`), each recorded with
    /// its accuracies.
    fn solve_starts(
        &self,
        config: &ExperimentConfig,
        data: &EngineData,
        split: &SplitSpec,
        carry: &UnitCarry<'_>,
        prepared: &Prepared<F>,
    ) -> Result<multistart::Ran<F::Model>> {
        let f = &self.0;
        let d = data.classification(f.name())?;
        let problem = &prepared.problem;
        let n = problem.num_variables();
        let warm_model = self.warm_model(config, data)?;
        let solver = config
            .registry
            .nlp_solver(&config.solver.name, &config.solver.options)?;
        let starts = multistart::nlp_starts(
            config,
            carry,
            data,
            split,
            f.name(),
            n,
            warm_model.as_ref(),
            |m| f.warm_start(m, problem, &prepared.scaler),
            f.greedy_starts(problem, &*solver, &config.solver.options),
            |rng| f.random_start(problem, rng),
        )?;
        let train = d.rows(&split.train);
        let test = d.rows(&split.test);
        let blank = SolveRecord {
            configured_lambdas: f.configured_lambdas(problem),
            ..SolveRecord::blank(
                config,
                f.name(),
                f.reported_params(problem),
                split.id,
                split.seed,
                (split.train.len(), split.test.len()),
            )
        };
        multistart::solve_starts(starts, carry, |s, start, incumbent| {
            let options = config
                .solver
                .options
                .with_warm_start(Some(multistart::warm_start(start.x0.clone(), start.kind)));
            let started = Instant::now();
            let (result, trace) = match &config.decomposition {
                None => {
                    let context = StartContext {
                        kind: start.kind,
                        incumbent,
                    };
                    (f.solve_start(problem, &*solver, &options, context)?, None)
                }
                Some(dec) => {
                    let observe = |x: &[f64]| {
                        let model = self.model_at(prepared, d, x);
                        (
                            metrics::accuracy(&train.y, &model.predict(&train.x)),
                            metrics::accuracy(&test.y, &model.predict(&test.x)),
                        )
                    };
                    let seed = start.seed.unwrap_or(s as u64);
                    let outcome = decompose(f, problem, &*solver, &options, dec, seed, observe)?;
                    (outcome.result, Some(outcome.trace))
                }
            };
            // The decomposition's own clock leaves out the accuracies of its trace.
            let seconds = match &trace {
                Some(_) => result.wall_seconds,
                None => started.elapsed().as_secs_f64(),
            };
            let has_point = result.primal.len() == n;
            let model = has_point.then(|| self.model_at(prepared, d, &result.primal));
            let mut record = SolveRecord {
                lambda_bound: f.lambda_bound(problem),
                decomposition: trace,
                ..blank.clone().solved(&result, seconds)
            };
            if let Some(model) = &model {
                record = self.measured(record, model, &train, &test);
            }
            Ok(Solved::of_nlp(result, &start.x0, record, model))
        })
    }
}

impl<F> Formulation for NlpClassifier<F>
where
    F: NlpClassifierFormulation + Send + Sync,
    F::Problem: 'static,
{
    fn name(&self) -> &str {
        self.0.name()
    }
    fn regression(&self) -> bool {
        false
    }
    fn carries(&self) -> bool {
        true
    }
    fn decomposable(&self) -> bool {
        self.0.decomposable()
    }
    fn random_starts(&self) -> bool {
        true
    }

    fn solves_per_unit(&self, config: &ExperimentConfig) -> usize {
        multistart::nlp_solves_per_unit(self.0.greedy_start_count(), config, self.chooses())
    }

    fn check(&self, config: &ExperimentConfig, data: &EngineData) -> Result<()> {
        let d = data.classification(self.name())?;
        self.0.check(d.n_features(), d.n_classes())?;
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
        let prepared = self.prepare(data.classification(self.name())?, &split.train)?;
        let ran = self.solve_starts(config, data, split, carry, &prepared)?;
        let ran = self.select_by_cross_validation(config, data, split, carry, &prepared, ran)?;
        multistart::finish(self.0.name(), carry, ran)
    }

    fn nlp_problem(
        &self,
        config: &ExperimentConfig,
        data: &EngineData,
        split: &SplitSpec,
        starts: usize,
    ) -> Result<Option<SeededNlp>> {
        let d = data.classification(self.name())?;
        let Prepared { problem, .. } = self.prepare(d, &split.train)?;
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
        let d = data.classification(self.name())?;
        let prepared = self.prepare(d, &split.train)?;
        points
            .iter()
            .map(|p| json_of(&self.model_at(&prepared, d, p)))
            .collect()
    }
}

/// One solve by node-based decomposition (`[decomposition]`), the branch order seeded by
/// `seed`.
fn decompose<F: NlpClassifierFormulation>(
    formulation: &F,
    problem: &F::Problem,
    solver: &dyn crate::NlpSolver,
    options: &SolveOptions,
    config: &DecompositionConfig,
    seed: u64,
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
        seed,
        &mut observe,
    )
}
