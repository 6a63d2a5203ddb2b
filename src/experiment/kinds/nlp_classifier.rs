//! The NLP classifiers' kind (S-ORCT, l0 trees, logistic_l1): on each split the NLP is built
//! on the min-max scaled training rows and solved from every start of the multistart (seeded
//! random starts, the saved model of `multistart.warm_start`, or a warm path's carried
//! points), optionally by node-based decomposition (`[decomposition]`); the best objective is
//! selected. Lines carry the classification metrics, delta_L and delta_G, the formulation's
//! lambda bound and the decomposition's trace.

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
use crate::{metrics, GlassboxError, Result, SolveOptions, WarmStart};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use std::time::Instant;

/// An NLP classifier's config, as the engine runs it.
pub struct NlpClassifier<F>(pub F);

/// A split's training rows scaled, and the problem built on them.
struct Prepared<F: NlpClassifierFormulation> {
    scaler: MinMaxScaler,
    problem: F::Problem,
}

impl<F: NlpClassifierFormulation> NlpClassifier<F> {
    fn prepare(&self, d: &ClassificationData, split: &SplitSpec) -> Result<Prepared<F>> {
        let train = d.rows(&split.train);
        let (scaler, x) = multistart::scaled(&train.x);
        let problem = self
            .0
            .problem(x, Arc::new(train.y.clone()), d.n_classes())?;
        Ok(Prepared { scaler, problem })
    }

    fn warm_model(&self, config: &ExperimentConfig) -> Result<Option<F::Model>> {
        multistart::warm_model(config, |p| self.0.load_model(p))
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
    fn solves_per_unit(&self, config: &ExperimentConfig) -> usize {
        self.0.greedy_start_count()
            + config.multistart.starts
            + usize::from(config.multistart.warm_start.is_some())
    }

    fn check(&self, config: &ExperimentConfig, data: &EngineData) -> Result<()> {
        let d = data.classification(self.name())?;
        self.0.check(d.n_features(), d.n_classes())?;
        config
            .registry
            .nlp_solver(&config.solver.name, &config.solver.options)?;
        self.warm_model(config).map(|_| ())
    }

    fn run(
        &self,
        config: &ExperimentConfig,
        data: &EngineData,
        split: &SplitSpec,
        carry: &UnitCarry<'_>,
    ) -> Result<UnitOut> {
        let f = &self.0;
        let d = data.classification(f.name())?;
        let Prepared { scaler, problem } = self.prepare(d, split)?;
        let n = problem.num_variables();
        let warm_model = self.warm_model(config)?;
        let starts = multistart::nlp_starts(
            config,
            carry,
            data,
            split,
            f.name(),
            n,
            warm_model.as_ref(),
            |m| f.warm_start(m, &problem, &scaler),
            f.greedy_starts(&problem),
            |rng| f.random_start(&problem, rng),
        )?;
        let solver = config
            .registry
            .nlp_solver(&config.solver.name, &config.solver.options)?;
        let train = d.rows(&split.train);
        let test = d.rows(&split.test);
        let blank = SolveRecord::blank(
            config,
            f.name(),
            f.reported_params(&problem),
            split.id,
            split.seed,
            (split.train.len(), split.test.len()),
        );
        let model_at = |x: &[f64]| {
            f.model(
                &problem,
                x,
                scaler.clone(),
                d.classes.clone(),
                d.encoding.clone(),
            )
        };
        multistart::run(f.name(), starts, carry, |s, start, incumbent| {
            let options = config
                .solver
                .options
                .with_warm_start(Some(WarmStart::primal(start.x0.clone())));
            let started = Instant::now();
            let (result, trace) = match &config.decomposition {
                None => {
                    let context = StartContext {
                        kind: start.kind,
                        incumbent,
                    };
                    (f.solve_start(&problem, &*solver, &options, context)?, None)
                }
                Some(dec) => {
                    let observe = |x: &[f64]| {
                        let model = model_at(x);
                        (
                            metrics::accuracy(&train.y, &model.predict(&train.x)),
                            metrics::accuracy(&test.y, &model.predict(&test.x)),
                        )
                    };
                    let seed = start.seed.unwrap_or(s as u64);
                    let outcome = decompose(f, &problem, &*solver, &options, dec, seed, observe)?;
                    (outcome.result, Some(outcome.trace))
                }
            };
            // The decomposition's own clock leaves out the accuracies of its trace.
            let seconds = match &trace {
                Some(_) => result.wall_seconds,
                None => started.elapsed().as_secs_f64(),
            };
            let has_point = result.primal.len() == n;
            let model = has_point.then(|| model_at(&result.primal));
            let mut record = SolveRecord {
                lambda_bound: f.lambda_bound(&problem),
                decomposition: trace,
                ..blank.clone().solved(&result, seconds)
            };
            if let Some(model) = &model {
                (record.delta_local, record.delta_global) = f.sparsity(model);
                let train_pred = model.predict(&train.x);
                let test_pred = model.predict(&test.x);
                record.train_accuracy = metrics::accuracy(&train.y, &train_pred);
                record.test_accuracy = metrics::accuracy(&test.y, &test_pred);
                record.test_balanced_accuracy =
                    metrics::balanced_accuracy(&test.y, &test_pred, d.n_classes());
            }
            Ok(Solved {
                record,
                model,
                usable: result.status.has_solution(),
                point: if has_point {
                    result.primal
                } else {
                    start.x0.clone()
                },
            })
        })
    }

    fn nlp_problem(
        &self,
        config: &ExperimentConfig,
        data: &EngineData,
        split: &SplitSpec,
        starts: usize,
    ) -> Result<Option<SeededNlp>> {
        let d = data.classification(self.name())?;
        let Prepared { problem, .. } = self.prepare(d, split)?;
        let starts = (0..starts)
            .map(|s| {
                let seed = multistart::start_seed(config, split.id, s);
                self.0
                    .random_start(&problem, &mut ChaCha8Rng::seed_from_u64(seed))
            })
            .collect();
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
        let Prepared { scaler, problem } = self.prepare(d, split)?;
        points
            .iter()
            .map(|p| {
                json_of(&self.0.model(
                    &problem,
                    p,
                    scaler.clone(),
                    d.classes.clone(),
                    d.encoding.clone(),
                ))
            })
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
