//! The one runner every kind of formulation goes through: a unit's starts solved in order,
//! each recorded, the best usable objective selected and its model saved; a stop request
//! before or after a solve abandons the unit. Also the starts of a multistart (the
//! formulation's greedy starts, seeded random points, a saved model's point, or the points a
//! warm path carries from the previous cell), and what the cross-validated choices after a
//! multistart share (`selection.rs`, `regression_selection.rs`): a fold's best start, the
//! choice's line.

use super::super::unit::{UnitCarry, UnitOut};
use super::super::{ExperimentConfig, SolveRecord};
use crate::data::MinMaxScaler;
use crate::experiment::engine::SplitSpec;
use crate::experiment::unit::{Encoded, EngineData};
use crate::formulation::ModelFile;
use crate::model::{FittedModel, JsonValue};
use crate::starts::{FoldStarts, GreedyStart, StartContext, StartKind};
use crate::{GlassboxError, Result, WarmStart};
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;

/// One start of a unit: its point (empty where the kind starts from nothing or from its own
/// heuristic), the seed it was drawn with (none for a warm or greedy start), what kind of
/// start it is and, for a greedy start, where it comes from.
pub(crate) struct Start {
    /// The starting point.
    pub x0: Vec<f64>,
    /// Its seed.
    pub seed: Option<u64>,
    /// Its kind (a point carried along a warm path is `Given`).
    pub kind: StartKind,
    /// A greedy start's origin (e.g. `"cart"`), as its results line reports it.
    pub origin: Option<&'static str>,
}

/// The warm start a backend gets for a start's point `x0`: a random start is one to
/// explore from ([`WarmStart::explore`]), every other kind a solution to keep.
pub(crate) fn warm_start(x0: Vec<f64>, kind: StartKind) -> WarmStart {
    match kind {
        StartKind::Random => WarmStart::exploring(x0),
        StartKind::Greedy | StartKind::Given => WarmStart::primal(x0),
    }
}

impl Start {
    /// The one start of a kind that solves once from its own heuristic or from nothing.
    pub(crate) fn only(x0: Vec<f64>, seed: Option<u64>) -> Start {
        Start {
            x0,
            seed,
            kind: StartKind::Given,
            origin: None,
        }
    }
}

/// What one solve of a unit produced.
pub(crate) struct Solved<M> {
    /// Its results line (`start`, `seed` and `selected` are the runner's to fill).
    pub record: SolveRecord,
    /// The model read from its solution, if it returned one.
    pub model: Option<M>,
    /// Whether its objective may be selected (the solve returned a usable solution).
    pub usable: bool,
    /// The point a warm path carries on: the final point, or the start without one.
    pub point: Vec<f64>,
}

impl<M> Solved<M> {
    /// An NLP solve from `start`: `model` is the one read from the solve's final point,
    /// `None` where it returned no point of the problem's size; the warm path then carries
    /// the start on.
    pub(crate) fn of_nlp(
        result: crate::SolveResult,
        start: &[f64],
        record: SolveRecord,
        model: Option<M>,
    ) -> Solved<M> {
        Solved {
            record,
            usable: result.status.has_solution(),
            point: match model {
                Some(_) => result.primal,
                None => start.to_vec(),
            },
            model,
        }
    }
}

/// The lines of an NLP formulation's unit: its greedy starts, the random starts, the warm
/// start's model if any, and the cross-validated choice's line where it `chooses`.
pub(crate) fn nlp_solves_per_unit(
    greedy_starts: usize,
    config: &ExperimentConfig,
    chooses: bool,
) -> usize {
    greedy_starts
        + config.multistart.starts
        + usize::from(config.multistart.warm_start.is_some())
        + usize::from(chooses)
}

/// The starts of a unit, solved: one record and one point per start, the best usable
/// objective's start and model, and whether a stop request cut the starts short.
pub(crate) struct Ran<M> {
    /// One record per solve.
    pub records: Vec<SolveRecord>,
    /// The point a warm path carries on, per start.
    pub points: Vec<Vec<f64>>,
    /// The record to select (the best usable objective's, unless a later stage chose
    /// another) and its model.
    pub best: Option<(usize, M)>,
    /// Whether a stop request abandoned the unit.
    pub interrupted: bool,
}

/// Runs `starts` in order with `solve` (given each start's index and the best usable
/// objective before it; see the module comment), then selects the best and saves its model
/// ([`finish`]). `kind` tags the saved model.
pub(crate) fn run<M: ModelFile>(
    kind: &str,
    starts: Vec<Start>,
    carry: &UnitCarry<'_>,
    solve: impl FnMut(usize, &Start, Option<f64>) -> Result<Solved<M>>,
) -> Result<UnitOut> {
    finish(kind, carry, solve_starts(starts, carry, solve)?)
}

/// The solving half of [`run`]: every start in order, the best usable objective kept. A
/// stop request seen before or after a solve abandons the unit (`interrupted`).
pub(crate) fn solve_starts<M>(
    starts: Vec<Start>,
    carry: &UnitCarry<'_>,
    mut solve: impl FnMut(usize, &Start, Option<f64>) -> Result<Solved<M>>,
) -> Result<Ran<M>> {
    let mut records = Vec::with_capacity(starts.len());
    let mut points = Vec::with_capacity(starts.len());
    let mut best: Option<(f64, usize, M)> = None;
    let abandoned = |records, points| Ran {
        records,
        points,
        best: None,
        interrupted: true,
    };
    for (s, start) in starts.iter().enumerate() {
        if (carry.stop)() {
            return Ok(abandoned(records, points));
        }
        let solved = solve(s, start, best.as_ref().map(|(b, _, _)| *b))?;
        // A stop request during the solve may have cut it short (`SolveOptions::interrupt`):
        // its line would not be the solve's.
        if (carry.stop)() {
            return Ok(abandoned(records, points));
        }
        carry.progress.inc(1);
        if let (true, Some(objective), Some(model)) =
            (solved.usable, solved.record.objective, solved.model)
        {
            if best.as_ref().is_none_or(|(b, _, _)| objective < *b) {
                best = Some((objective, s, model));
            }
        }
        records.push(SolveRecord {
            start: s,
            seed: start.seed,
            origin: start.origin.map(str::to_string),
            ..solved.record
        });
        points.push(solved.point);
    }
    Ok(Ran {
        records,
        points,
        best: best.map(|(_, s, model)| (s, model)),
        interrupted: false,
    })
}

/// The selecting half of [`run`]: marks `ran.best`'s record selected and saves its model
/// (an interrupted unit selects nothing).
pub(crate) fn finish<M: ModelFile>(
    kind: &str,
    carry: &UnitCarry<'_>,
    ran: Ran<M>,
) -> Result<UnitOut> {
    let Ran {
        mut records,
        points,
        best,
        interrupted,
    } = ran;
    let model = match best.filter(|_| !interrupted) {
        Some((s, model)) => {
            records[s].selected = true;
            if let Some(path) = carry.model_path {
                save_model(path, kind, &model)?;
            }
            Some(Box::new(model) as Box<dyn crate::model::FittedModel>)
        }
        None => None,
    };
    Ok(UnitOut {
        records,
        points,
        interrupted,
        model,
    })
}

/// Saves a unit's model as `path` (creating its folder) with the formulation's `kind`.
fn save_model<M: Serialize>(path: &Path, kind: &str, model: &M) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| GlassboxError::io(dir, e))?;
    }
    crate::model::save_json(path, kind, model)
}

/// Mixed into a split's seed for the seed of its selection folds (the cross-validated
/// choices of `selection.rs` and `regression_selection.rs`), so that they are not the same
/// draw as the split itself.
pub(crate) const FOLD_SEED: u64 = 0x005E_ED0F_F01D;

/// What [`best_of_fold`] found: the best usable objective's point (none if no start
/// returned one), each greedy start's solution (in the order of the greedy starts; none
/// where its solve returned none) and the iterations of all the fold's solves.
pub(crate) struct FoldBest {
    pub point: Option<Vec<f64>>,
    pub greedy_solutions: Vec<Option<Vec<f64>>>,
    pub iterations: u64,
}

/// What each fold of a cross-validated choice solves besides the greedy starts
/// ([`best_of_fold`]): a point of the multistart solved as a start of the given kind, then
/// seeded random starts drawn on the fold's rows.
pub(crate) struct FoldPlan<'a> {
    /// The point and how it is solved (as a solution, or climbing the continuation).
    pub point: Option<(&'a [f64], StartKind)>,
    /// The random starts' seeds.
    pub seeds: Vec<u64>,
}

impl<'a> FoldPlan<'a> {
    /// The solves a fold spends besides the greedy starts.
    pub(crate) fn solves(&self) -> usize {
        self.seeds.len() + usize::from(self.point.is_some())
    }

    /// The plan `kind` asks for after a multistart of `folds` folds on `split` that ran
    /// `records` and whose best point is `best`: `solves` solves besides the greedy starts,
    /// or as [`FoldStarts`] describes (ceil(starts / folds), all the starts for `Whole`),
    /// never more than the split's random starts (a fold is not worth more than its split).
    pub(crate) fn new(
        kind: FoldStarts,
        solves: Option<usize>,
        config: &ExperimentConfig,
        split: &SplitSpec,
        folds: usize,
        records: &[SolveRecord],
        best: &'a [f64],
    ) -> FoldPlan<'a> {
        let starts = config.multistart.starts;
        let solves = solves
            .unwrap_or(match kind {
                FoldStarts::Whole => starts,
                _ => starts.div_ceil(folds),
            })
            .min(starts);
        // The best point, solved as a greedy start is (at the target slope) or as a random
        // one (climbing the continuation), takes the place of one random start.
        let solved_as = match kind {
            FoldStarts::BestPoint => StartKind::Greedy,
            FoldStarts::Softened => StartKind::Random,
            FoldStarts::Replay => {
                return FoldPlan {
                    point: None,
                    seeds: best_seeds(records, solves),
                }
            }
            FoldStarts::Whole => {
                return FoldPlan {
                    point: None,
                    seeds: (0..solves)
                        .map(|s| start_seed(config, split.id, s))
                        .collect(),
                }
            }
        };
        FoldPlan {
            point: Some((best, solved_as)),
            seeds: (0..solves.saturating_sub(1))
                .map(|s| start_seed(config, split.id, s))
                .collect(),
        }
    }
}

/// The seeds of the `count` random starts of `records` (a multistart's lines) with the
/// lowest objectives, best first; starts without a seed or an objective are skipped.
fn best_seeds(records: &[SolveRecord], count: usize) -> Vec<u64> {
    let mut seeded: Vec<(f64, u64)> = records
        .iter()
        .filter_map(|r| Some((r.objective.filter(|o| o.is_finite())?, r.seed?)))
        .collect();
    seeded.sort_by(|a, b| a.0.total_cmp(&b.0));
    seeded
        .into_iter()
        .take(count)
        .map(|(_, seed)| seed)
        .collect()
}

/// The starts of one cross-validation fold of the choice between an optimized and a greedy
/// tree (`selection.rs`, `regression_selection.rs`): the `greedy` starts, then `plan`'s
/// (by the trait's default the multistart's best point, solved like the greedy starts, with
/// no gamma continuation: it is a solution already, and the first ceil(starts / folds) - 1
/// seeded random starts of `split`: the best point takes the place of one, so the folds
/// cost no more), random starts drawn by `random_start`; each solved by `solve` (the
/// formulation's `solve_start` on the fold's problem of `n` variables); `None` when a stop
/// request came before or after a solve.
///
/// Why the best point: the tree a split returns is the best of 1 + starts solves, a fold's
/// would otherwise be the best of 1 + ceil(starts / folds), often in a poorer basin, and
/// the folds judged another tree than the one returned (benches/README "The folds start
/// from the multistart's best point", "S-ORRT's choice"). The point has seen the held-out
/// rows, so a fold's tree from it is optimistic: over 30 splits the folds overstate the
/// optimized tree's gain over CART by 4-7 points on haberman D=4, ionosphere D=2 and heart
/// D=3, more than the choices' one-standard-error margin absorbs (benches/README "Thirty
/// splits"), while on iris and car D=2 they understate it. Replaying the best *start* on
/// the fold's rows instead (no leak) was measured there too and lost more on the sets the
/// best point had helped (monks2, ionosphere, sonar at D=1) than it won on those three.
/// S-ORCT's default plan avoids both faults at a price: each fold runs the split's first 14
/// random starts again from their seeds on its rows, nothing fitted on a held-out row and
/// nearly as many starts as the split's (benches/README "The whole multistart per fold").
pub(crate) fn best_of_fold(
    config: &ExperimentConfig,
    carry: &UnitCarry<'_>,
    n: usize,
    greedy: &[GreedyStart],
    plan: &FoldPlan<'_>,
    random_start: impl Fn(&mut ChaCha8Rng) -> Vec<f64>,
    mut solve: impl FnMut(&crate::SolveOptions, StartContext) -> Result<crate::SolveResult>,
) -> Result<Option<FoldBest>> {
    let starts = greedy
        .iter()
        .map(|g| (g.point.clone(), StartKind::Greedy))
        .chain(plan.point.map(|(x, kind)| (x.to_vec(), kind)))
        .chain(plan.seeds.iter().map(|&seed| {
            (
                random_start(&mut ChaCha8Rng::seed_from_u64(seed)),
                StartKind::Random,
            )
        }));
    let mut best: Option<(f64, Vec<f64>)> = None;
    let mut greedy_solutions = Vec::with_capacity(greedy.len());
    let mut iterations = 0;
    for (s, (x0, kind)) in starts.enumerate() {
        if (carry.stop)() {
            return Ok(None);
        }
        let options = config
            .solver
            .options
            .with_warm_start(Some(warm_start(x0, kind)));
        let context = StartContext {
            kind,
            incumbent: best.as_ref().map(|(b, _)| *b),
        };
        let result = solve(&options, context)?;
        if (carry.stop)() {
            return Ok(None);
        }
        iterations += result.iterations;
        let usable = result.status.has_solution() && result.primal.len() == n;
        let solution = match (usable, result.objective) {
            (true, Some(objective)) => Some((objective, result.primal)),
            _ => None,
        };
        if s < greedy.len() {
            greedy_solutions.push(solution.as_ref().map(|(_, x)| x.clone()));
        }
        if let Some((objective, x)) = solution {
            if best.as_ref().is_none_or(|(b, _)| objective < *b) {
                best = Some((objective, x));
            }
        }
    }
    Ok(Some(FoldBest {
        point: best.map(|(_, x)| x),
        greedy_solutions,
        iterations,
    }))
}

/// Why a choice keeps a greedy tree, in the usual case.
pub(crate) const NOT_BETTER: &str = "the optimized trees not better by the margin";

/// The line of a cross-validated choice that kept greedy tree `origin` as it is (its
/// `objective` at the kept point), built on the best start's line `best`; `summary` says
/// what the folds found and `why` why the greedy tree was kept (the default, [`NOT_BETTER`]:
/// the optimized trees were not better by the margin), `iterations` and `seconds` are the
/// folds'.
pub(crate) fn kept_greedy_line(
    best: &SolveRecord,
    summary: &str,
    why: &str,
    origin: &str,
    objective: f64,
    iterations: u64,
    seconds: f64,
) -> SolveRecord {
    SolveRecord {
        status: crate::TerminationStatus::FeasibleAtLimit(crate::Limit::Other)
            .as_str()
            .to_string(),
        raw_status: format!("{summary}: the {origin} tree kept as it is, {why}"),
        objective: Some(objective),
        iterations,
        solve_seconds: seconds,
        backend_seconds: None,
        origin: Some(format!("selection ({origin})")),
        ..best.clone()
    }
}

/// The line of a cross-validated choice that kept the optimized tree of start
/// `best_start` (whose line is `best`): the best objective's (`origin` "optimized") or
/// the one optimized from a greedy start (e.g. "cart optimized").
pub(crate) fn kept_optimized_line(
    best: &SolveRecord,
    summary: &str,
    best_start: usize,
    origin: &str,
    iterations: u64,
    seconds: f64,
) -> SolveRecord {
    SolveRecord {
        raw_status: format!("{summary}: the optimized tree of start {best_start} kept"),
        iterations,
        solve_seconds: seconds,
        backend_seconds: None,
        origin: Some(format!("selection ({origin})")),
        ..best.clone()
    }
}

/// Says on the best start's line (`best`, the one selected) why no cross-validated choice
/// was made: the `folds` asked for are more than the split's `rows` training rows.
pub(crate) fn note_too_few_rows<M>(ran: &mut Ran<M>, best: usize, folds: usize, rows: usize) {
    ran.records[best].raw_status.push_str(&format!(
        "; no cross-validated choice: selection_folds = {folds} is more than the {rows} \
         training rows"
    ));
}

/// Appends a choice's line to `ran` as the one to select, with its model.
pub(crate) fn add_choice<M>(
    ran: &mut Ran<M>,
    record: SolveRecord,
    model: M,
    carry: &UnitCarry<'_>,
) {
    ran.records.push(SolveRecord {
        start: ran.records.len(),
        seed: None,
        ..record
    });
    ran.best = Some((ran.records.len() - 1, model));
    carry.progress.inc(1);
}

/// The first `starts` seeded random starting points of `split`, each drawn by `draw` from
/// a generator seeded with [`start_seed`] (the points of
/// [`super::super::unit::Formulation::nlp_problem`]).
pub(crate) fn seeded_points(
    config: &ExperimentConfig,
    split: &SplitSpec,
    starts: usize,
    draw: impl Fn(&mut ChaCha8Rng) -> Vec<f64>,
) -> Vec<Vec<f64>> {
    (0..starts)
        .map(|s| {
            draw(&mut ChaCha8Rng::seed_from_u64(start_seed(
                config, split.id, s,
            )))
        })
        .collect()
}

/// The seed of random start `s` of split `r`.
pub(crate) fn start_seed(config: &ExperimentConfig, r: usize, s: usize) -> u64 {
    config
        .multistart
        .seed
        .wrapping_mul(1_000_003)
        .wrapping_add((r * 1_000 + s) as u64)
}

/// The starts of a multistart on split `r` of a problem with `n` variables: the
/// formulation's `greedy` starts first (so that the random starts know an incumbent), then
/// `multistart.starts` seeded random points (`random`), then the point of the saved model
/// (`warm`, if any). A warm path's `carried` points replace them one for one (same seeds;
/// the previous cell had the same starts in the same order).
pub(crate) fn starts(
    config: &ExperimentConfig,
    r: usize,
    n: usize,
    carried: Option<Vec<Vec<f64>>>,
    greedy: Vec<GreedyStart>,
    random: impl Fn(&mut ChaCha8Rng) -> Vec<f64>,
    warm: Option<&dyn Fn() -> Result<Vec<f64>>>,
) -> Result<Vec<Start>> {
    let kinds: Vec<(StartKind, Option<&'static str>)> = greedy
        .iter()
        .map(|g| (StartKind::Greedy, Some(g.origin)))
        .chain((0..config.multistart.starts).map(|_| (StartKind::Random, None)))
        .chain(warm.map(|_| (StartKind::Given, None)))
        .collect();
    let seeds: Vec<Option<u64>> = greedy
        .iter()
        .map(|_| None)
        .chain((0..config.multistart.starts).map(|s| Some(start_seed(config, r, s))))
        .chain(warm.map(|_| None))
        .collect();
    let from_path = carried.is_some();
    let points: Vec<Vec<f64>> = match carried {
        Some(points) if points.len() != seeds.len() => {
            return Err(GlassboxError::Config(format!(
                "{} points carried from the previous cell for {} starts: a warm path keeps \
                 [multistart] the same along its cells",
                points.len(),
                seeds.len()
            )))
        }
        Some(points) => points,
        None => {
            let mut points: Vec<Vec<f64>> = greedy.into_iter().map(|g| g.point).collect();
            points.extend(
                seeds
                    .iter()
                    .flatten()
                    .map(|&seed| random(&mut ChaCha8Rng::seed_from_u64(seed))),
            );
            if let Some(warm) = warm {
                points.push(warm()?);
            }
            points
        }
    };
    if let Some(bad) = points.iter().find(|x0| x0.len() != n) {
        // A warm path's carried points cannot cross an axis that changes the problem's size
        // through a model (e.g. depth).
        return Err(GlassboxError::Config(format!(
            "a carried start has {} values but this cell's problem has {n} variables: a warm \
             path cannot cross an axis that changes the problem's size (e.g. depth)",
            bad.len()
        )));
    }
    Ok(points
        .into_iter()
        .zip(seeds)
        .zip(kinds)
        .map(|((x0, seed), (kind, origin))| Start {
            x0,
            seed,
            kind: if from_path { StartKind::Given } else { kind },
            origin,
        })
        .collect())
}

/// The points a warm path carries into this cell's problem of `n` variables on `split`: a
/// point of that size as it is, any other through its model (the previous cell's model at
/// the point, `warm_start` turns it into a point of this problem: S-ORCT adds its a+/a- and
/// beta variables when its lambdas become positive). `None` without a previous cell.
pub(crate) fn carried_points(
    carry: &UnitCarry<'_>,
    data: &EngineData,
    split: &SplitSpec,
    n: usize,
    warm_start: impl Fn(JsonValue) -> Result<Vec<f64>>,
) -> Result<Option<Vec<Vec<f64>>>> {
    let Some((previous, points)) = carry.previous else {
        return Ok(None);
    };
    let other: Vec<Vec<f64>> = points.iter().filter(|p| p.len() != n).cloned().collect();
    let mut models = if other.is_empty() {
        Vec::new()
    } else {
        previous
            .formulation
            .models_at(previous, data, split, &other)?
    }
    .into_iter();
    points
        .iter()
        .map(|p| match p.len() == n {
            true => Ok(p.clone()),
            false => warm_start(models.next().ok_or_else(|| {
                GlassboxError::Config("a carried point has no model".to_string())
            })?),
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// A model of type `M` from the JSON a previous cell's [`crate::experiment::Formulation::models_at`]
/// gave (a warm path stays within one formulation, so the types agree).
pub(crate) fn model_from_json<M: serde::de::DeserializeOwned>(
    name: &str,
    json: JsonValue,
) -> Result<M> {
    serde_json::from_value(json).map_err(|e| {
        GlassboxError::formulation(name, format!("a carried model does not read back: {e}"))
    })
}

/// A split's training features scaled to [0, 1] on themselves: the scaler (kept in the
/// model) and the scaled matrix every kind builds its problem on.
pub(crate) fn scaled(train_x: &DMatrix<f64>) -> (MinMaxScaler, Arc<DMatrix<f64>>) {
    let scaler = MinMaxScaler::fit(train_x);
    let x = Arc::new(scaler.transform(train_x));
    (scaler, x)
}

/// The saved model that `multistart.warm_start` names, read by `load` (the formulation's
/// loader) and checked against `data`'s columns ([`check_model_columns`]); `None` without
/// one.
pub(crate) fn warm_model<M: FittedModel>(
    config: &ExperimentConfig,
    data: &EngineData,
    load: impl FnOnce(&Path) -> Result<M>,
) -> Result<Option<M>> {
    let Some(path) = &config.multistart.warm_start else {
        return Ok(None);
    };
    let path = config.resolve(path);
    let model = load(&path)?;
    check_model_columns(&path, &model, data)?;
    Ok(Some(model))
}

/// Checks that `model` (the saved model at `path`) was fitted on the columns of `data`: its
/// encoded feature names, in the same order. The formulations' loaders check only the
/// number of columns, so a file with its columns reordered or renamed would have had the
/// model's splits read on other columns.
pub(crate) fn check_model_columns(
    path: &Path,
    model: &dyn FittedModel,
    data: &EngineData,
) -> Result<()> {
    let encoding = match (model.as_classifier(), model.as_regressor()) {
        (Some(c), _) => c.encoding(),
        (None, Some(r)) => r.encoding(),
        (None, None) => return Ok(()),
    };
    let saved = encoding.feature_names();
    let columns = match &data.encoded {
        Encoded::Classification(d) => &d.feature_names,
        Encoded::Regression(d) => &d.feature_names,
    };
    if &saved == columns {
        return Ok(());
    }
    Err(GlassboxError::Config(format!(
        "{}: multistart.warm_start names a model fitted on the columns [{}], but the data's \
         are [{}]: a model starts a run only on the same columns in the same order",
        path.display(),
        saved.join(", "),
        columns.join(", ")
    )))
}

/// The starts of an NLP multistart on `split` for a problem of `n` variables: a warm path's
/// carried points (a carried model through `warm_start`),
/// else the formulation's `greedy` starts and the seeded `random` points, then the point of
/// `warm` (the model of `multistart.warm_start`) through `warm_start`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn nlp_starts<M: serde::de::DeserializeOwned>(
    config: &ExperimentConfig,
    carry: &UnitCarry<'_>,
    data: &EngineData,
    split: &SplitSpec,
    name: &str,
    n: usize,
    warm: Option<&M>,
    warm_start: impl Fn(&M) -> Result<Vec<f64>>,
    greedy: Vec<GreedyStart>,
    random: impl Fn(&mut ChaCha8Rng) -> Vec<f64>,
) -> Result<Vec<Start>> {
    let carried = carried_points(carry, data, split, n, |json| {
        warm_start(&model_from_json(name, json)?)
    })?;
    let warm_point = warm.map(|m| {
        let warm_start = &warm_start;
        move || warm_start(m)
    });
    starts(
        config,
        split.id,
        n,
        carried,
        greedy,
        random,
        warm_point
            .as_ref()
            .map(|w| w as &dyn Fn() -> Result<Vec<f64>>),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn config(starts: usize) -> ExperimentConfig {
        let text = format!(
            "[data]\nsynthetic = {{ rows = 20, features = 2, classes = 2, seed = 1 }}\n\
             [formulation]\nname = \"sorct\"\ndepth = 1\n[solver]\nname = \"ipopt\"\n\
             [multistart]\nstarts = {starts}\nseed = 3\n"
        );
        ExperimentConfig::parse(Path::new("x.toml"), &text).unwrap()
    }

    fn greedy() -> Vec<GreedyStart> {
        vec![GreedyStart {
            origin: "cart",
            point: vec![9.0],
        }]
    }

    #[test]
    fn best_seeds_rank_the_seeded_starts_by_objective() {
        let config = config(4);
        let blank = SolveRecord::blank(&config, "sorct", Default::default(), 0, 0, (1, 1));
        let line = |seed: Option<u64>, objective: Option<f64>| SolveRecord {
            seed,
            objective,
            ..blank.clone()
        };
        let records = [
            line(None, Some(0.1)), // a greedy start: no seed to replay
            line(Some(11), Some(3.0)),
            line(Some(12), None), // no solution
            line(Some(13), Some(1.0)),
            line(Some(14), Some(f64::NAN)),
            line(Some(15), Some(2.0)),
        ];
        assert_eq!(best_seeds(&records, 2), vec![13, 15]);
        assert_eq!(best_seeds(&records, 9), vec![13, 15, 11]);
        assert!(best_seeds(&records, 0).is_empty());
    }

    #[test]
    fn greedy_starts_come_first_then_random_then_warm_and_carried_points_replace_them() {
        let config = config(2);
        let random = |rng: &mut ChaCha8Rng| vec![rand::Rng::random::<f64>(rng)];
        let warm = || Ok(vec![7.0]);
        let first = starts(&config, 0, 1, None, greedy(), random, Some(&warm)).unwrap();
        assert_eq!(first.len(), 4);
        assert_eq!(first[0].x0, vec![9.0]);
        assert_eq!(
            (first[0].kind, first[0].origin),
            (StartKind::Greedy, Some("cart"))
        );
        assert_eq!(first[0].seed, None);
        // The random starts keep the seeds they have without a greedy start.
        for s in 0..2 {
            assert_eq!(first[1 + s].kind, StartKind::Random);
            assert_eq!(first[1 + s].seed, Some(start_seed(&config, 0, s)));
        }
        assert_eq!(
            (first[3].x0.clone(), first[3].kind),
            (vec![7.0], StartKind::Given)
        );
        // A warm path's points replace every start, in order, as given points.
        let carried: Vec<Vec<f64>> = (0..4).map(|i| vec![i as f64]).collect();
        let again = starts_of(&config, Some(carried), &warm);
        let points: Vec<f64> = again.iter().map(|s| s.x0[0]).collect();
        assert_eq!(points, vec![0.0, 1.0, 2.0, 3.0]);
        assert!(again.iter().all(|s| s.kind == StartKind::Given));
        assert_eq!(again[0].origin, Some("cart"));
        // A path that carried another number of points, or points of another size, is refused.
        let short = starts(
            &config,
            0,
            1,
            Some(vec![vec![0.0]]),
            greedy(),
            random,
            Some(&warm),
        );
        assert!(short.is_err());
        let wrong = starts(&config, 0, 2, None, greedy(), random, Some(&warm));
        assert!(wrong.is_err());
    }

    fn starts_of(
        config: &ExperimentConfig,
        carried: Option<Vec<Vec<f64>>>,
        warm: &dyn Fn() -> Result<Vec<f64>>,
    ) -> Vec<Start> {
        starts(config, 0, 1, carried, greedy(), |_| vec![0.5], Some(warm)).unwrap()
    }
}
