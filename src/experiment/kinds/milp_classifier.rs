//! The MILP classifiers' kind (OCT, OCT-H, loss-optimal trees): on every split the MILP is
//! built on the scaled training rows and solved once by the configured MILP backend, from a
//! MIP start: the point a warm path carries from the previous cell (read through its model
//! when the problem's size differs), else the model of `multistart.warm_start`, else the
//! formulation's own heuristic start (made with its NLP backend when it names one, e.g.
//! OLCT's greedy logistic tree). The model read from the solution may then be refined with
//! that backend (OLCT's last layer, Remark 1). Lines carry the classification metrics and
//! the MILP statistics `mip_gap`, `dual_bound` and `nodes`. `multistart.starts` and
//! `multistart.seed` do not apply: a MILP backend searches globally.
//!
//! A tree-search backend (`dp`) solves instead the formulation's statement as an
//! optimal-tree search problem ([`MilpClassifierFormulation::tree_search`], OCT's), read
//! back as a MILP point, so that models, records and warm paths are as from the MILP; a
//! formulation without such a statement is refused before the run. The MIP start is its
//! first incumbent, as the same tree in the search's encoding
//! ([`TreeSearchStatement::warm_start`]); a start that has no such tree is left out, and the
//! line's `raw_status` says why. The search is exact either way: the start changes how
//! much it searches, and which of several optimal trees it returns.

use super::super::engine::SplitSpec;
use super::super::unit::{EngineData, Formulation, UnitCarry, UnitOut};
use super::super::{ExperimentConfig, MilpStats, SolveRecord};
use super::multistart::{self, Solved, Start};
use crate::data::{ClassificationData, MinMaxScaler};
use crate::formulation::MilpClassifierFormulation;
use crate::model::{json_of, Classifier, JsonValue};
use crate::registry::Constructor;
use crate::tree_search::TreeSearchStatement;
use crate::WarmStart;
use crate::{metrics, GlassboxError, MilpSolver, Result, SolveOptions, TreeSearchSolver};
use std::sync::Arc;
use std::time::Instant;

/// A MILP classifier's config, as the engine runs it.
pub struct MilpClassifier<F>(pub F);

/// A split's training rows scaled, and the problem built on them.
struct Prepared<F: MilpClassifierFormulation> {
    scaler: MinMaxScaler,
    problem: F::Problem,
}

/// The configured backend: a MILP backend solves the MILP, a tree-search backend the
/// formulation's tree-search statement.
enum Backend {
    Milp(Box<dyn MilpSolver>),
    TreeSearch(Box<dyn TreeSearchSolver>),
}

/// What one split solves: the MILP, or the tree-search statement built on the split.
enum Solve<'a> {
    Milp(&'a dyn MilpSolver),
    TreeSearch(&'a dyn TreeSearchSolver, Box<dyn TreeSearchStatement + 'a>),
}

impl<F: MilpClassifierFormulation> MilpClassifier<F> {
    /// Creates the configured backend; a tree-search backend only for a formulation that
    /// states itself as a tree search, else an error naming both.
    fn backend(&self, config: &ExperimentConfig) -> Result<Backend> {
        let (name, options) = (&config.solver.name, &config.solver.options);
        match config.registry.backend(name)?.constructor {
            Constructor::TreeSearch(_) => {
                self.0.check_tree_search().map_err(|e| {
                    GlassboxError::Config(format!(
                        "formulation '{}' cannot be solved by the tree-search backend '{name}': \
                         {e}",
                        self.0.name()
                    ))
                })?;
                Ok(Backend::TreeSearch(
                    config.registry.tree_search_solver(name, options)?,
                ))
            }
            _ => Ok(Backend::Milp(config.registry.milp_solver(name, options)?)),
        }
    }

    fn prepare(&self, d: &ClassificationData, split: &SplitSpec) -> Result<Prepared<F>> {
        let train = d.rows(&split.train);
        let (scaler, x) = multistart::scaled(&train.x);
        let problem = self
            .0
            .problem(x, Arc::new(train.y.clone()), d.n_classes())?;
        Ok(Prepared { scaler, problem })
    }

    fn warm_model(&self, config: &ExperimentConfig, data: &EngineData) -> Result<Option<F::Model>> {
        multistart::warm_model(config, data, |p| self.0.load_model(p))
    }
}

impl<F> Formulation for MilpClassifier<F>
where
    F: MilpClassifierFormulation + Send + Sync,
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

    fn check(&self, config: &ExperimentConfig, data: &EngineData) -> Result<()> {
        let d = data.classification(self.name())?;
        self.0.check(d.n_features(), d.n_classes())?;
        self.backend(config)?;
        if let Some(name) = self.0.nlp_backend() {
            config.registry.nlp_solver(name, &SolveOptions::default())?;
        }
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
        let d = data.classification(f.name())?;
        let backend = self.backend(config)?;
        let nlp = match f.nlp_backend() {
            Some(name) => Some(config.registry.nlp_solver(name, &SolveOptions::default())?),
            None => None,
        };
        let Prepared { scaler, problem } = self.prepare(d, split)?;
        let columns = f.milp(&problem).num_columns();
        // A tree-search statement is built before the clock starts, as the MILP is.
        let solve = match &backend {
            Backend::TreeSearch(solver) => {
                Solve::TreeSearch(solver.as_ref(), f.tree_search(&problem)?)
            }
            Backend::Milp(solver) => Solve::Milp(solver.as_ref()),
        };
        // A previous cell that returned neither a solution nor a start carries nothing.
        let carry_point = carry
            .previous
            .filter(|(_, points)| points.first().is_some_and(|p| !p.is_empty()));
        let carried = match carry_point {
            Some((previous, points)) => multistart::carried_points(
                &UnitCarry {
                    previous: Some((previous, &points[..1])),
                    ..*carry
                },
                data,
                split,
                columns,
                |json| {
                    let model = multistart::model_from_json(f.name(), json)?;
                    f.warm_start(&model, &problem, &scaler)
                },
            )?
            .and_then(|mut p| p.pop()),
            None => None,
        };
        let start = match (carried, self.warm_model(config, data)?, &nlp) {
            (Some(point), _, _) => Some(point),
            (None, Some(model), _) => Some(f.warm_start(&model, &problem, &scaler)?),
            (None, None, Some(nlp)) => f.start_with_nlp(&problem, nlp.as_ref())?,
            (None, None, None) => f.heuristic_start(&problem),
        };
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
        let only = Start::only(start.unwrap_or_default(), None);
        let milp_options = config
            .solver
            .options
            .with_integrality_at_most(f.integrality_tolerance(&problem));
        multistart::run(f.name(), vec![only], carry, |_, start, _| {
            // The start, in the search's encoding for a tree search, before the clock starts.
            let (options, unused_start) = match &solve {
                Solve::TreeSearch(_, statement) => {
                    tree_search_options(statement.as_ref(), &config.solver.options, &start.x0)
                }
                Solve::Milp(_) => {
                    let mip_start =
                        (!start.x0.is_empty()).then(|| WarmStart::primal(start.x0.clone()));
                    (milp_options.with_warm_start(mip_start), None)
                }
            };
            let started = Instant::now();
            let mut result = match &solve {
                Solve::TreeSearch(solver, statement) => {
                    statement.read(solver.solve(statement.problem(), &options)?)?
                }
                Solve::Milp(solver) => solver.solve(f.milp(&problem), &options)?,
            };
            if let Some(why) = unused_start {
                result
                    .raw_status
                    .push_str(&format!("; warm start not used ({why})"));
            }
            let seconds = started.elapsed().as_secs_f64();
            let solved = result.status.has_solution() && result.primal.len() == columns;
            let model = solved.then(|| {
                f.model(
                    &problem,
                    &result.primal,
                    scaler.clone(),
                    d.classes.clone(),
                    d.encoding.clone(),
                )
            });
            let model = match (model, &nlp) {
                (Some(model), Some(nlp)) => Some(f.refine(&problem, model, nlp.as_ref())?),
                (model, _) => model,
            };
            let mut record = SolveRecord {
                milp: Some(MilpStats {
                    mip_gap: result.gap,
                    dual_bound: result.dual_bound,
                    nodes: result.nodes,
                    tree_search: matches!(solve, Solve::TreeSearch(..)),
                    maximize: f.milp(&problem).sense == crate::milp::Sense::Maximize,
                    integrality_tolerance: match solve {
                        Solve::Milp(_) => milp_options.integrality_tolerance,
                        Solve::TreeSearch(..) => None,
                    },
                }),
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
                usable: model.is_some(),
                model,
                point: if solved {
                    result.primal
                } else {
                    start.x0.clone()
                },
            })
        })
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

/// The options of a tree-search solve: `options` with the MIP start `start` (none when
/// empty) as the same tree in the search's encoding, and why a start that has no such tree
/// is left out.
fn tree_search_options(
    statement: &dyn TreeSearchStatement,
    options: &SolveOptions,
    start: &[f64],
) -> (SolveOptions, Option<String>) {
    if start.is_empty() {
        return (options.clone(), None);
    }
    match statement.warm_start(start) {
        Ok(tree) => (options.with_warm_start(Some(WarmStart::primal(tree))), None),
        Err(e) => (options.clone(), Some(e.to_string())),
    }
}
