//! The experiment engine: runs the cells of a grid ([`crate::experiment::grid::Experiment`]) on the
//! splits of its protocol, optionally along warm-started paths, in parallel, resumably and
//! shardably.
//!
//! - A *unit* is one cell on one split: its multistart (every start solved and recorded,
//!   the best objective selected). Its lines are appended to `results.jsonl` together
//!   ([`crate::experiment::store`]), so a unit is on disk whole or not at all and a rerun skips it.
//! - A *chain* is the units that must run in order: with `warm_path`, one split's walk over
//!   the formulation axes (per solver and multistart seed), each cell starting from the
//!   previous cell's final points; without it every unit is its own chain. Chains run in
//!   parallel on `--jobs` threads and are what `--shard i/n` deals out (chain index modulo n).
//! - IPOPT and CBC take a process-wide lock per solve (their libraries are not reentrant):
//!   with `--jobs > 1` their solves take turns, and each line records the wait
//!   (`lock_wait_seconds`) apart from the backend's own time (`backend_seconds`). Shards in
//!   separate processes solve in parallel.
//! - A stop request (SIGINT / SIGTERM through the flag the CLI sets) ends the running solves
//!   at their next iteration where the backend checks it (IPOPT, HiGHS, lbfgs, torch and dp
//!   through `SolveOptions::interrupt`, TMO, CCT and CRT through `TrainingSet::interrupt`;
//!   the CBC backend returns within 50 ms and leaves CBC to finish in the background; the
//!   other heuristics finish their solve); the end of the time budget lets them finish.
//!   Either way their units are abandoned and the run ends with every finished unit on disk.

use super::grid::{Cell, Experiment, InnerMetric, Protocol};
use super::store::{self, Done, Manifest, Store};
use super::unit::{Encoded, EngineData, UnitCarry};
use super::{ExperimentConfig, SolveRecord};
use crate::data;
use crate::options::deadline_passed;
use crate::{GlassboxError, Interrupt, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// `--shard i/n`: this process runs the chains whose index is `i - 1` modulo `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 1-based shard number.
    pub index: usize,
    /// Number of shards.
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let bad = || format!("--shard '{s}': write i/n with 1 <= i <= n, e.g. 1/4");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            i.trim().parse::<usize>().map_err(|_| bad())?,
            n.trim().parse::<usize>().map_err(|_| bad())?,
        );
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// How to run an experiment.
pub struct RunOptions {
    /// Output folder.
    pub out: PathBuf,
    /// Start over (remove earlier results in `out`).
    pub force: bool,
    /// Threads running chains.
    pub jobs: usize,
    /// Run one shard only.
    pub shard: Option<Shard>,
    /// Draw a progress bar on stderr.
    pub progress: bool,
    /// Set (by a signal handler) to stop: running solves end at their next iteration where
    /// the backend checks it (IPOPT, HiGHS, lbfgs, torch, CBC; the others finish), their units are
    /// abandoned.
    pub stop: Arc<AtomicBool>,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Every unit of the run (or shard) is on disk.
    Finished,
    /// Stopped by a signal.
    Interrupted,
    /// The time budget ran out.
    BudgetSpent,
}

/// What [`run`] did.
pub struct EngineOutcome {
    /// How it ended.
    pub ending: Ending,
    /// Units on disk (this shard).
    pub done_units: usize,
    /// Units solved by this process (the rest were on disk already).
    pub solved_units: usize,
    /// Units of this shard.
    pub shard_units: usize,
    /// The results file.
    pub results_path: PathBuf,
    /// The readable summary (finished runs).
    pub summary: String,
}

/// One split of the protocol, identified across the run by `id`.
#[derive(Clone, Debug)]
pub struct SplitSpec {
    /// Split id (the `split` field of the results).
    pub id: usize,
    /// The seed it was drawn with.
    pub seed: u64,
    /// `holdout`, `fold`, `outer` or `inner`.
    pub role: &'static str,
    /// Fold index (k-fold and nested).
    pub fold: Option<usize>,
    /// Nested: the outer fold of an inner split.
    pub outer_fold: Option<usize>,
    /// Training rows.
    pub train: Vec<usize>,
    /// Test rows.
    pub test: Vec<usize>,
}

impl SplitSpec {
    /// The split as its results lines name it, for messages: `split 3` (a `fold`, `outer`
    /// or `inner` split with its fold numbers).
    pub fn describe(&self) -> String {
        let mut text = format!("split {}", self.id);
        match (self.role, self.fold, self.outer_fold) {
            ("inner", Some(f), Some(o)) => text += &format!(" (outer fold {o}, inner fold {f})"),
            (role, Some(f), _) => text += &format!(" ({role} {f})"),
            _ => {}
        }
        text
    }
}

/// The holdout splits of a one-setting config (`[split]`, or `data.test_path`'s).
pub fn holdout_splits(config: &ExperimentConfig, data: &EngineData) -> Result<Vec<SplitSpec>> {
    plan(&Protocol::Holdout, config, data)
}

/// The splits of `protocol` on `data` (stratified on the classes for classification, not
/// for regression; the fixed split of `data.test_path` where it has one).
fn plan(protocol: &Protocol, base: &ExperimentConfig, data: &EngineData) -> Result<Vec<SplitSpec>> {
    let n = data.n_samples();
    let labels = data.labels();
    let fixed_train = data.fixed_train;
    // A plain k-fold is the stratified one with a single class.
    let unlabelled = vec![0; n];
    let y = labels.unwrap_or(&unlabelled);
    let seed = base.split.seed;
    let spec = |id, seed, role, (train, test): (Vec<usize>, Vec<usize>)| SplitSpec {
        id,
        seed,
        role,
        fold: None,
        outer_fold: None,
        train,
        test,
    };
    Ok(match protocol {
        Protocol::Holdout => base
            .splits(n, fixed_train, |s| match &data.encoded {
                Encoded::Classification(d) => d.stratified_split(base.split.test_fraction, s),
                Encoded::Regression(_) => data::random_split(n, base.split.test_fraction, s),
            })?
            .into_iter()
            .enumerate()
            .map(|(r, part)| spec(r, seed + r as u64, "holdout", part))
            .collect(),
        Protocol::Kfold { folds } => {
            let mut out = Vec::new();
            for rep in 0..base.split.repeats {
                let s = seed + rep as u64;
                for (f, part) in data::stratified_kfold(y, *folds, s)
                    .map_err(|e| about(&base.file, "split.folds", e))?
                    .into_iter()
                    .enumerate()
                {
                    out.push(SplitSpec {
                        fold: Some(f),
                        ..spec(rep * folds + f, s, "fold", part)
                    });
                }
            }
            out
        }
        Protocol::Nested {
            folds, inner_folds, ..
        } => {
            let outer = data::stratified_kfold(y, *folds, seed)
                .map_err(|e| about(&base.file, "split.folds", e))?;
            let mut out: Vec<SplitSpec> = outer
                .iter()
                .enumerate()
                .map(|(o, part)| SplitSpec {
                    fold: Some(o),
                    ..spec(o, seed, "outer", part.clone())
                })
                .collect();
            for (o, (outer_train, _)) in outer.iter().enumerate() {
                let y_outer: Vec<usize> = outer_train.iter().map(|&i| y[i]).collect();
                let s = seed + 1 + o as u64;
                for (i, (tr, te)) in data::stratified_kfold(&y_outer, *inner_folds, s)
                    .map_err(|e| {
                        about(
                            &base.file,
                            &format!("split.inner_folds (outer fold {o}'s training rows)"),
                            e,
                        )
                    })?
                    .into_iter()
                    .enumerate()
                {
                    let back = |v: Vec<usize>| v.into_iter().map(|j| outer_train[j]).collect();
                    out.push(SplitSpec {
                        fold: Some(i),
                        outer_fold: Some(o),
                        ..spec(
                            folds + o * inner_folds + i,
                            s,
                            "inner",
                            (back(tr), back(te)),
                        )
                    });
                }
            }
            out
        }
    })
}

/// The chains of the run: lists of (cell, split position) run in order (see the module
/// comment), in canonical order of their first unit.
pub fn plan_chains(exp: &Experiment, n_splits: usize) -> Vec<Vec<(usize, usize)>> {
    if !exp.engine.warm_path {
        return (0..exp.cells.len())
            .flat_map(|c| (0..n_splits).map(move |s| vec![(c, s)]))
            .collect();
    }
    // A chain is one block's walk over its formulation axes, per solver, seed and split.
    let mut index: HashMap<(usize, Vec<usize>, usize), usize> = HashMap::new();
    let mut chains: Vec<Vec<(usize, usize)>> = Vec::new();
    for cell in &exp.cells {
        let key: Vec<usize> = exp
            .axes_of(cell)
            .iter()
            .zip(&cell.coords)
            .filter(|(a, _)| a.section != super::grid::AxisSection::Formulation)
            .map(|(_, &i)| i)
            .collect();
        for s in 0..n_splits {
            let i = *index
                .entry((cell.block, key.clone(), s))
                .or_insert_with(|| {
                    chains.push(Vec::new());
                    chains.len() - 1
                });
            chains[i].push((cell.index, s));
        }
    }
    chains
}

/// One results line of the engine: the one-setting run's fields plus the engine's
/// (`docs/GRID_FORMAT.md`).
#[derive(Serialize)]
struct GridLine<'a> {
    #[serde(flatten)]
    record: &'a SolveRecord,
    #[serde(skip_serializing_if = "Option::is_none")]
    lock_wait_seconds: Option<f64>,
    config_fingerprint: &'a str,
    cell_fingerprint: &'a str,
    fingerprint: String,
    cell: usize,
    grid: &'a serde_json::Map<String, serde_json::Value>,
    grid_index: &'a BTreeMap<String, usize>,
    unit_solves: usize,
    split_role: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    fold: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    outer_fold: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    warm_from_cell: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path_start: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    x: Option<&'a [f64]>,
}

/// Everything a chain needs, shared by the threads.
struct Ctx<'a> {
    exp: &'a Experiment,
    splits: &'a [Vec<SplitSpec>],
    data: &'a [EngineData],
    done: &'a Done,
    store: &'a Store,
    out: &'a Path,
    stop: &'a (dyn Fn() -> bool + Sync),
    /// The signal's stop request, handed to every solve (the backends that check it return
    /// early; the unit is then abandoned like one stopped between solves).
    interrupt: Interrupt,
    bar: &'a indicatif::ProgressBar,
    solved: &'a AtomicUsize,
    failed: &'a AtomicBool,
}

/// Runs `exp` into `options.out` (see the module comment). Errors on the config, the data
/// or the output folder come before anything is solved.
pub fn run(exp: &Experiment, options: &RunOptions) -> Result<EngineOutcome> {
    // Each data set is read once and split once: every formulation and solver on it gets
    // the same splits (folds, seeds).
    let n_datasets = exp.blocks.iter().map(|b| b.dataset + 1).max().unwrap_or(1);
    let mut data = Vec::with_capacity(n_datasets);
    let mut splits = Vec::with_capacity(n_datasets);
    for d in 0..n_datasets {
        let (loaded, planned) = load_and_check(exp, d)?;
        splits.push(planned);
        data.push(loaded);
    }
    let n_splits = splits[0].len();
    if splits.iter().any(|s| s.len() != n_splits) {
        return Err(GlassboxError::Config(format!(
            "{}: the data sets give different numbers of splits",
            exp.file.display()
        )));
    }
    let chains = plan_chains(exp, n_splits);
    let mine: Vec<&Vec<(usize, usize)>> = chains
        .iter()
        .enumerate()
        .filter(|(i, _)| options.shard.is_none_or(|s| i % s.count == s.index - 1))
        .map(|(_, c)| c)
        .collect();
    let shard_units: usize = mine.iter().map(|c| c.len()).sum();
    let manifest = Manifest {
        config: exp.file.display().to_string(),
        config_fingerprint: exp.fingerprint.clone(),
        shard: options.shard.map(|s| s.to_string()),
        cells: exp.cells.len(),
        splits: n_splits,
        units: exp.cells.len() * n_splits,
        shard_units,
        protocol: exp.protocol.clone(),
        axes: manifest_axes(&exp.axes),
        blocks: if exp.blocks.len() > 1 {
            exp.blocks
                .iter()
                .map(|b| store::BlockInfo {
                    dataset: b.dataset_name.clone(),
                    formulation: b.formulation.clone(),
                    first_cell: b.first_cell,
                    cells: b.cells,
                    axes: manifest_axes(&b.axes),
                })
                .collect()
        } else {
            Vec::new()
        },
    };
    let (store, done) = store::open(&options.out, &manifest, options.force)?;
    let done_before = done.len();

    let started = Instant::now();
    let deadline = exp
        .engine
        .time_budget
        .map(|b| started + std::time::Duration::from_secs_f64(b));
    let failed = AtomicBool::new(false);
    let stop_flag = options.stop.clone();
    let stop = move || stop_flag.load(Ordering::SeqCst) || deadline_passed(deadline);
    // A failed chain stops the others too: its error is the run's.
    let stop_all = || stop() || failed.load(Ordering::SeqCst);
    let bar = progress_bar(shard_units as u64, done_before as u64, options.progress);
    let solved = AtomicUsize::new(0);
    let ctx = Ctx {
        exp,
        splits: &splits,
        data: &data,
        done: &done,
        store: &store,
        out: &options.out,
        stop: &stop_all,
        interrupt: Interrupt::new(options.stop.clone()),
        bar: &bar,
        solved: &solved,
        failed: &failed,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.jobs.max(1))
        .build()
        .map_err(|e| GlassboxError::Config(format!("--jobs: {e}")))?;
    let outcomes: Vec<Result<()>> = pool.install(|| {
        mine.par_iter()
            .map(|chain| run_chain(&ctx, chain))
            .collect()
    });
    bar.finish_and_clear();
    outcomes.into_iter().collect::<Result<Vec<()>>>()?;

    let solved_units = solved.load(Ordering::SeqCst);
    let done_units = done_before + solved_units;
    let results_path = store.path().to_path_buf();
    if done_units < shard_units {
        let ending = if options.stop.load(Ordering::SeqCst) {
            Ending::Interrupted
        } else {
            Ending::BudgetSpent
        };
        return Ok(EngineOutcome {
            ending,
            done_units,
            solved_units,
            shard_units,
            results_path,
            summary: String::new(),
        });
    }
    let all = store::scan(&results_path, &exp.fingerprint, false)?;
    store::write_canonical(&results_path, &all)?;
    // The folder's lock is held until the canonical rewrite is in place.
    drop(store);
    let mut summary = summary(&manifest, &all);
    if options.shard.is_none() {
        if let Some(report) = nested_report(&manifest, &all) {
            let path = options.out.join("nested.json");
            let text = serde_json::to_string_pretty(&report)
                .map_err(|e| GlassboxError::Config(e.to_string()))?;
            crate::model::write_atomically(&path, format!("{text}\n").as_bytes())?;
            summary.push_str(&format!("nested selection: {}\n", path.display()));
        }
    }
    Ok(EngineOutcome {
        ending: Ending::Finished,
        done_units,
        solved_units,
        shard_units,
        results_path,
        summary,
    })
}

/// Data set `d` of `exp` read and split, and every cell on it checked against the data and
/// against each split's training rows ([`Formulation::check`], then
/// [`Formulation::check_split`]): the errors a run can know before it writes anything.
///
/// [`Formulation::check`]: super::unit::Formulation::check
/// [`Formulation::check_split`]: super::unit::Formulation::check_split
pub fn load_and_check(exp: &Experiment, d: usize) -> Result<(EngineData, Vec<SplitSpec>)> {
    let cells: Vec<&Cell> = exp
        .cells
        .iter()
        .filter(|c| exp.blocks[c.block].dataset == d)
        .collect();
    let first = &cells
        .first()
        .ok_or_else(|| {
            GlassboxError::Config(format!("{}: data set {d} has no cells", exp.file.display()))
        })?
        .config;
    let regression = first.formulation.regression();
    check_task(exp, &cells, regression)?;
    let data = EngineData::load(first, regression)?;
    for cell in &cells {
        cell.config
            .formulation
            .check(&cell.config, &data)
            .map_err(|e| in_cell(exp, cell, e))?;
    }
    let splits = plan(&exp.protocol, first, &data)?;
    for cell in &cells {
        for split in &splits {
            cell.config
                .formulation
                .check_split(&cell.config, &data, split)
                .map_err(|e| in_cell(exp, cell, e))?;
        }
    }
    Ok((data, splits))
}

/// Checks that every cell of `cells` (one data set's) has the task of the first
/// (`regression`) and that a nested protocol's inner metric fits it.
fn check_task(exp: &Experiment, cells: &[&Cell], regression: bool) -> Result<()> {
    let bad = |m: String| GlassboxError::Config(format!("{}: {m}", exp.file.display()));
    let task = |r: bool| if r { "regression" } else { "classification" };
    for cell in cells {
        let f = &cell.config.formulation;
        if f.regression() != regression {
            return Err(bad(format!(
                "grid cell {} is a {} task but the first cell a {} task: one task per run",
                exp.describe(cell),
                task(!regression),
                task(regression)
            )));
        }
    }
    if let Protocol::Nested { metric, .. } = exp.protocol {
        if metric.is_regression() != regression {
            return Err(bad(format!(
                "split.inner_metric = \"{}\" is for {}, but '{}' is a {} formulation: use {}",
                metric.as_str(),
                task(metric.is_regression()),
                cells[0].config.formulation.name(),
                task(regression),
                if regression {
                    "\"r2\" or \"mse\""
                } else {
                    "\"accuracy\" or \"balanced_accuracy\""
                }
            )));
        }
    }
    Ok(())
}

/// `e` with the cell it happened in (for a grid of more than one cell).
fn in_cell(exp: &Experiment, cell: &Cell, e: GlassboxError) -> GlassboxError {
    if exp.cells.len() == 1 {
        e
    } else {
        e.within(&format!("grid cell {}", exp.describe(cell)))
    }
}

fn progress_bar(total: u64, done: u64, show: bool) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} cell-splits, ETA {eta}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_position(done);
    bar.reset_eta();
    bar
}

/// Runs one chain's unfinished units in order, carrying the final points along a warm path.
fn run_chain(ctx: &Ctx<'_>, chain: &[(usize, usize)]) -> Result<()> {
    let result = run_chain_inner(ctx, chain);
    if result.is_err() {
        ctx.failed.store(true, Ordering::SeqCst);
    }
    result
}

fn run_chain_inner(ctx: &Ctx<'_>, chain: &[(usize, usize)]) -> Result<()> {
    let warm_path = ctx.exp.engine.warm_path;
    // A chain runs one formulation: it carries its solutions along a warm path, or not.
    let carries = warm_path
        && chain
            .first()
            .is_some_and(|&(c, _)| ctx.exp.cells[c].config.formulation.carries());
    // The final points of the previous cell of the chain, and that cell.
    let mut carried: Option<Vec<Vec<f64>>> = None;
    let mut previous: Option<usize> = None;
    for &(c, s) in chain {
        let cell = &ctx.exp.cells[c];
        let dataset = ctx.exp.blocks[cell.block].dataset;
        let split = &ctx.splits[dataset][s];
        if let Some(unit) = ctx.done.get(&(c, split.id)) {
            if carries {
                // The starts' lines carry their points; the line a validation selection
                // adds after them (the refit) carries none.
                let points: Vec<Vec<f64>> = unit.points.iter().map_while(Clone::clone).collect();
                carried = Some(Some(points).filter(|p| !p.is_empty()).ok_or_else(|| {
                    GlassboxError::Config(format!(
                        "cell {c} split {} on disk lacks the final points ('x') a warm path \
                         continues from: pass --force to start over",
                        split.id
                    ))
                })?);
            }
            previous = Some(c);
            continue;
        }
        if (ctx.stop)() {
            return Ok(());
        }
        let model_path = ctx.exp.engine.save_models.then(|| {
            let name = format!("split-{}.json", split.id);
            if ctx.exp.cells.len() == 1 {
                ctx.out.join("models").join(name)
            } else {
                ctx.out.join("models").join(format!("cell-{c}")).join(name)
            }
        });
        let mut config = cell.config.clone();
        config.solver.options.interrupt = Some(ctx.interrupt.clone());
        let unit = config
            .formulation
            .run(
                &config,
                &ctx.data[dataset],
                split,
                &UnitCarry {
                    previous: previous
                        .zip(carried.as_deref())
                        .map(|(p, points)| (&ctx.exp.cells[p].config, points)),
                    stop: ctx.stop,
                    model_path: model_path.as_deref(),
                    progress: &indicatif::ProgressBar::hidden(),
                },
            )
            .map_err(|e| in_cell(ctx.exp, cell, e))?;
        if unit.interrupted {
            return Ok(());
        }
        let grid = ctx.exp.grid_values(cell);
        let grid_index = ctx.exp.grid_index(cell);
        let n = unit.records.len();
        let mut lines = Vec::with_capacity(n);
        let path_start = warm_path.then(|| match (carries, carried.is_some()) {
            (false, _) => "cold",
            (true, false) => "first",
            (true, true) => "carried",
        });
        for (i, record) in unit.records.iter().enumerate() {
            let fingerprint = super::grid::fingerprint(&[
                &cell.fingerprint,
                &split.id.to_string(),
                &split.seed.to_string(),
                &record.start.to_string(),
                &format!("{:?}", record.seed),
            ]);
            let line = GridLine {
                record,
                lock_wait_seconds: record
                    .backend_seconds
                    .map(|b| (record.solve_seconds - b).max(0.0)),
                config_fingerprint: &ctx.exp.fingerprint,
                cell_fingerprint: &cell.fingerprint,
                fingerprint,
                cell: c,
                grid: &grid,
                grid_index: &grid_index,
                unit_solves: n,
                split_role: split.role,
                fold: split.fold,
                outer_fold: split.outer_fold,
                warm_from_cell: carried.as_ref().and(previous),
                path_start,
                x: unit.points.get(i).filter(|_| carries).map(|p| p.as_slice()),
            };
            lines.push(
                serde_json::to_string(&line).map_err(|e| GlassboxError::Config(e.to_string()))?,
            );
        }
        ctx.store.append_unit(&lines)?;
        ctx.solved.fetch_add(1, Ordering::SeqCst);
        ctx.bar.inc(1);
        if carries {
            carried = Some(unit.points);
        }
        previous = Some(c);
    }
    Ok(())
}

/// The fields of a results line the summaries read.
#[derive(Deserialize)]
struct SummaryLine {
    cell: usize,
    split: usize,
    split_role: String,
    #[serde(default)]
    outer_fold: Option<usize>,
    selected: bool,
    objective: Option<f64>,
    status: String,
    #[serde(default)]
    test_accuracy: Option<f64>,
    #[serde(default)]
    test_balanced_accuracy: Option<f64>,
    #[serde(default)]
    test_r2: Option<f64>,
    #[serde(default)]
    test_mse: Option<f64>,
    #[serde(default)]
    delta_local: Option<f64>,
    #[serde(default)]
    delta_global: Option<f64>,
    solve_seconds: f64,
    #[serde(default)]
    lock_wait_seconds: Option<f64>,
    #[serde(default)]
    origin: Option<String>,
}

impl SummaryLine {
    /// Whether it is a cross-validated choice's line, not a start's solve.
    fn is_selection(&self) -> bool {
        super::record::is_selection_origin(self.origin.as_deref())
    }
}

fn summary_lines(done: &Done) -> Vec<SummaryLine> {
    let mut units: Vec<_> = done.iter().collect();
    units.sort_by_key(|(k, _)| **k);
    units
        .into_iter()
        .flat_map(|(_, u)| u.lines.iter())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Axis values of cell `c` from the manifest, as `key=value, ...`.
fn describe_cell(manifest: &Manifest, c: usize) -> String {
    let block = manifest
        .blocks
        .iter()
        .find(|b| (b.first_cell..b.first_cell + b.cells).contains(&c));
    let (mut rest, axes) = match block {
        Some(b) => (c - b.first_cell, &b.axes),
        None => (c, &manifest.axes),
    };
    let mut parts = Vec::new();
    for (label, values) in axes.iter().rev() {
        let i = rest % values.len().max(1);
        rest /= values.len().max(1);
        let value = match values.get(i) {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => String::new(),
        };
        parts.push(format!("{label}={value}"));
    }
    if let Some(b) = block {
        parts.push(format!("formulation={}", b.formulation));
        parts.push(format!("dataset={}", b.dataset));
    }
    parts.reverse();
    parts.join(", ")
}

/// Multistart statistics of one unit's starts: best objective, spread (max - min and
/// standard deviation of the objectives) and the share of starts within 1e-6 (relative)
/// of the best.
fn spread(objectives: &[f64]) -> (f64, f64, f64, f64) {
    let v: Vec<f64> = objectives
        .iter()
        .copied()
        .filter(|o| o.is_finite())
        .collect();
    if v.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN, 0.0);
    }
    let best = v.iter().copied().fold(f64::INFINITY, f64::min);
    let worst = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let at_best = v
        .iter()
        .filter(|&&o| o - best <= 1e-6 * best.abs().max(1.0))
        .count();
    let (_, sd) = super::mean_std(&v);
    (
        best,
        worst - best,
        sd,
        at_best as f64 / objectives.len() as f64,
    )
}

/// The readable summary of a finished run: one row per cell (means over its splits, outer
/// splits only for nested runs), the multistart spread, the solve times and lock waits.
pub fn summary(manifest: &Manifest, done: &Done) -> String {
    use std::fmt::Write as _;
    let lines = summary_lines(done);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>5} {:>7} {:>9} {:>8} {:>8} {:>11} {:>10} {:>8} {:>9}  cell",
        "cell",
        "splits",
        "test_acc",
        "delta_L",
        "delta_G",
        "best_obj",
        "obj_range",
        "at_best",
        "sec/solve"
    );
    let mut by_cell: BTreeMap<usize, BTreeMap<usize, Vec<&SummaryLine>>> = BTreeMap::new();
    for l in lines.iter().filter(|l| l.split_role != "inner") {
        by_cell
            .entry(l.cell)
            .or_default()
            .entry(l.split)
            .or_default()
            .push(l);
    }
    let mean = |v: &[f64]| super::mean_std(v).0;
    for (c, splits) in &by_cell {
        let (mut acc, mut dl, mut dg, mut best, mut range, mut share, mut secs) =
            (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
        for starts in splits.values() {
            // The spread and the seconds are the starts' (a choice's line holds the tree it
            // kept and the time of its folds).
            let solves = || starts.iter().filter(|l| !l.is_selection());
            // Only a start that gave a model (a point, or a heuristic learner's fit) has a
            // best objective to offer: one stopped without a solution still writes the
            // objective at its infeasible point.
            let objectives: Vec<f64> = solves()
                .map(|l| {
                    l.objective
                        .filter(|_| crate::result_plots::has_model(&l.status))
                        .unwrap_or(f64::NAN)
                })
                .collect();
            let (b, r, _, s) = spread(&objectives);
            // A split without one is left out of the means, as of test_acc's (its share
            // at the best, 0, stays in).
            if b.is_finite() {
                best.push(b);
                range.push(r);
            }
            share.push(s);
            secs.extend(solves().map(|l| l.solve_seconds));
            if let Some(sel) = starts.iter().find(|l| l.selected) {
                acc.push(sel.test_accuracy.or(sel.test_r2).unwrap_or(f64::NAN));
                dl.push(sel.delta_local.unwrap_or(f64::NAN));
                dg.push(sel.delta_global.unwrap_or(f64::NAN));
            }
        }
        let _ = writeln!(
            out,
            "{:>5} {:>7} {:>9.4} {:>8.1} {:>8.1} {:>11.5} {:>10.5} {:>8.2} {:>9.3}  {}",
            c,
            splits.len(),
            mean(&acc),
            mean(&dl),
            mean(&dg),
            mean(&best),
            mean(&range),
            mean(&share),
            mean(&secs),
            describe_cell(manifest, *c)
        );
    }
    let _ = writeln!(
        out,
        "(test_acc (test R^2 for regression), delta_L, delta_G: the selected tree (best objective, or the cross-validated choice's) of each split, mean over \
         splits; best_obj, obj_range (max - min over the starts), at_best (share of starts within \
         1e-6 of the best): multistart spread over the starts that returned a solution, mean over \
         splits)"
    );
    out.push_str(&super::solves_line(
        lines
            .iter()
            .filter(|l| !l.is_selection())
            .map(|l| (l.solve_seconds, l.status.as_str())),
    ));
    let waits: Vec<f64> = lines.iter().filter_map(|l| l.lock_wait_seconds).collect();
    // (+ 0.0: an empty f64 sum is -0.0)
    let total_wait: f64 = waits.iter().sum::<f64>() + 0.0;
    let total: f64 = lines.iter().map(|l| l.solve_seconds).sum::<f64>() + 0.0;
    let _ = writeln!(
        out,
        "solve time {total:.1} s in all, of which {total_wait:.1} s waiting for a solver's process-wide lock"
    );
    out
}

/// Nested k-fold: for each outer fold, the cell with the best mean inner metric (ties: the
/// lower cell index) and that cell's test metric on the outer split. A config of several
/// blocks (data sets x formulations) selects within each block: `blocks` lists them.
pub fn nested_report(manifest: &Manifest, done: &Done) -> Option<serde_json::Value> {
    let Protocol::Nested { metric, .. } = manifest.protocol else {
        return None;
    };
    let lines = summary_lines(done);
    if manifest.blocks.is_empty() {
        return Some(nested_select(manifest, metric, &lines, 0..manifest.cells));
    }
    let blocks: Vec<serde_json::Value> = manifest
        .blocks
        .iter()
        .map(|b| {
            let mut v = nested_select(
                manifest,
                metric,
                &lines,
                b.first_cell..b.first_cell + b.cells,
            );
            v["dataset"] = serde_json::json!(b.dataset);
            v["formulation"] = serde_json::json!(b.formulation);
            v
        })
        .collect();
    Some(serde_json::json!({ "metric": metric, "blocks": blocks }))
}

/// The nested selection among the cells `cells` (see [`nested_report`]).
fn nested_select(
    manifest: &Manifest,
    metric: InnerMetric,
    lines: &[SummaryLine],
    cells: std::ops::Range<usize>,
) -> serde_json::Value {
    let value = |l: &SummaryLine| match metric {
        InnerMetric::Accuracy => l.test_accuracy,
        InnerMetric::BalancedAccuracy => l.test_balanced_accuracy,
        InnerMetric::R2 => l.test_r2,
        InnerMetric::Mse => l.test_mse,
    };
    // Higher is better, except for an error.
    let score = |m: f64| if metric == InnerMetric::Mse { -m } else { m };
    // (outer fold, cell) -> inner values of the selected starts
    let mut inner: BTreeMap<(usize, usize), Vec<f64>> = BTreeMap::new();
    let mut outer: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    for l in lines
        .iter()
        .filter(|l| l.selected && cells.contains(&l.cell))
    {
        let v = value(l).unwrap_or(f64::NAN);
        match (l.split_role.as_str(), l.outer_fold) {
            ("inner", Some(o)) => inner.entry((o, l.cell)).or_default().push(v),
            ("outer", _) => {
                outer.insert((l.split, l.cell), v);
            }
            _ => {}
        }
    }
    let folds: std::collections::BTreeSet<usize> = inner.keys().map(|k| k.0).collect();
    let mut chosen = Vec::new();
    let mut tests = Vec::new();
    for o in folds {
        let best = inner
            .iter()
            .filter(|((f, _), _)| *f == o)
            .map(|((_, c), v)| (*c, super::mean_std(v).0))
            .filter(|(_, m)| m.is_finite())
            .fold(None, |b: Option<(usize, f64)>, (c, m)| match b {
                Some((_, bm)) if score(bm) >= score(m) => b,
                _ => Some((c, m)),
            });
        let Some((cell, inner_mean)) = best else {
            continue;
        };
        let test = outer.get(&(o, cell)).copied().unwrap_or(f64::NAN);
        tests.push(test);
        chosen.push(serde_json::json!({
            "outer_fold": o,
            "cell": cell,
            "grid": describe_cell(manifest, cell),
            "inner_mean": inner_mean,
            "outer_test": test,
        }));
    }
    let (m, sd) = super::mean_std(&tests);
    serde_json::json!({
        "metric": metric,
        "folds": chosen,
        "outer_test_mean": m,
        "outer_test_sd": sd,
    })
}

/// The manifest's record of grid axes: each axis's label and values, as JSON.
fn manifest_axes(axes: &[super::grid::Axis]) -> Vec<(String, Vec<serde_json::Value>)> {
    axes.iter()
        .map(|a| {
            (
                a.label().to_string(),
                a.values.iter().map(super::grid::toml_to_json).collect(),
            )
        })
        .collect()
}

/// `error` of splitting the rows, with the config file and the key that asked for it.
fn about(file: &std::path::Path, key: &str, error: GlassboxError) -> GlassboxError {
    let message = match error {
        GlassboxError::Config(m) => m,
        other => other.to_string(),
    };
    GlassboxError::Config(format!("{}: {key}: {message}", file.display()))
}
