//! A one-setting run (`glassbox run` on a config without grid axes): the engine's one-cell
//! grid on the holdout splits of `[split]` (or the fixed split of `data.test_path`), every
//! unit run by the formulation's kind exactly as a grid cell's, written as the plain
//! `results.jsonl` of one JSON line per solve (no engine fields) and `models/split-R.json`.
//! It refuses to overwrite earlier results unless forced. [`run_until`] is the same run
//! that a stop request (`glassbox run`'s Ctrl-C) ends after the splits already written.

use super::engine;
use super::unit::{EngineData, UnitCarry};
use super::{ExperimentConfig, SolveRecord};
use crate::{GlassboxError, Result};
use glassbox_core::Interrupt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What a run produced.
pub struct RunOutcome {
    /// Every solve, in order.
    pub records: Vec<SolveRecord>,
    /// The results file.
    pub results_path: PathBuf,
    /// The splits whose lines are in the results file.
    pub splits_done: usize,
    /// The splits the run has.
    pub splits: usize,
    /// Whether a stop request ended the run before its last split ([`run_until`]).
    pub interrupted: bool,
}

/// Runs an experiment into `out_dir`, which must not hold results already unless `force`.
/// Everything that can fail on the config or the data fails before the results file is
/// created; each unit's lines are appended (and flushed) as soon as they are known.
pub fn run(
    config: &ExperimentConfig,
    out_dir: &Path,
    force: bool,
    progress: bool,
) -> Result<RunOutcome> {
    run_until(config, out_dir, force, progress, None)
}

/// [`run`], which `stop` being set ends early: the running solves end at their backend's
/// next check (through `SolveOptions::interrupt`, TMO's, CCT's and CRT's through
/// `TrainingSet::interrupt`; CBC
/// and the other heuristics finish theirs), the split they belong to is left out of the
/// results file (its lines would be a part of a split) and no later split starts. The
/// outcome then says `interrupted`, with the splits that are in the file.
pub fn run_until(
    config: &ExperimentConfig,
    out_dir: &Path,
    force: bool,
    progress: bool,
    stop: Option<Arc<AtomicBool>>,
) -> Result<RunOutcome> {
    let results_path = out_dir.join("results.jsonl");
    if results_path.exists() && !force {
        return Err(GlassboxError::Config(format!(
            "{} already exists: choose another --out folder, or pass --force to replace it",
            results_path.display()
        )));
    }
    let formulation = &config.formulation;
    let data = EngineData::load(config, formulation.regression())?;
    formulation.check(config, &data)?;
    let splits = engine::holdout_splits(config, &data)?;

    let mut config = config.clone();
    if let Some(stop) = &stop {
        config.solver.options.interrupt = Some(Interrupt::new(stop.clone()));
    }
    let stopped = || stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed));
    let mut writer = ResultsWriter::create(out_dir, &results_path)?;
    let total = splits.len() * formulation.solves_per_unit(&config);
    let bar = progress_bar(total as u64, progress);
    let mut done = 0;
    for split in &splits {
        if stopped() {
            break;
        }
        let model_path = writer.models_dir.join(format!("split-{}.json", split.id));
        let unit = formulation
            .run(
                &config,
                &data,
                split,
                &UnitCarry {
                    previous: None,
                    stop: &stopped,
                    model_path: Some(&model_path),
                    progress: &bar,
                },
            )
            .and_then(|unit| match unit.interrupted {
                true => Ok(None),
                false => writer.write(unit.records).map(Some),
            });
        match unit {
            Ok(Some(())) => done += 1,
            Ok(None) => break,
            Err(e) => {
                bar.finish_and_clear();
                return Err(writer.abandon(e));
            }
        }
    }
    bar.finish_and_clear();
    writer.finish(done, splits.len(), done < splits.len())
}

/// What a run writes as it goes: the out folder, its `models` folder and `results.jsonl`
/// (one flushed JSON line per solve); it keeps the records for the [`RunOutcome`]. The
/// results file is created (a `--force`d one replaced) with the first split's lines, so a
/// run that fails before them leaves an earlier run's folder as it was, and a new folder
/// not at all ([`Self::abandon`]).
struct ResultsWriter {
    file: Option<std::fs::File>,
    results_path: PathBuf,
    models_dir: PathBuf,
    /// The folders this run created (the out folder, its `models`), innermost first.
    created: Vec<PathBuf>,
    records: Vec<SolveRecord>,
}

impl ResultsWriter {
    /// Creates `out_dir` and its `models` folder (the units save their models there).
    fn create(out_dir: &Path, results_path: &Path) -> Result<Self> {
        let models_dir = out_dir.join("models");
        let mut created = Vec::new();
        for dir in [out_dir, &models_dir] {
            if !dir.exists() {
                std::fs::create_dir_all(dir).map_err(|e| GlassboxError::io(dir, e))?;
                created.insert(0, dir.to_path_buf());
            }
        }
        Ok(Self {
            file: None,
            results_path: results_path.to_path_buf(),
            models_dir,
            created,
            records: Vec::new(),
        })
    }

    /// Appends `records` to `results.jsonl` (created, or replaced, on first use), one
    /// flushed JSON line each.
    fn write(&mut self, records: Vec<SolveRecord>) -> Result<()> {
        let path = &self.results_path;
        let file = open_once(&mut self.file, path)?;
        for record in &records {
            let mut line =
                serde_json::to_string(record).map_err(|e| GlassboxError::Config(e.to_string()))?;
            line.push('\n');
            file.write_all(line.as_bytes())
                .and_then(|_| file.flush())
                .map_err(|e| GlassboxError::io(path, e))?;
        }
        self.records.extend(records);
        Ok(())
    }

    /// The error `e` that ended the run, after removing what the run created if it wrote no
    /// line: the folders it made, where they are still empty (a results file written in
    /// part stays, with the whole splits before the error).
    fn abandon(self, e: GlassboxError) -> GlassboxError {
        if self.file.is_none() {
            for dir in &self.created {
                // Only an empty folder goes (a model another process wrote stays).
                let _ = std::fs::remove_dir(dir);
            }
        }
        e
    }

    /// The records written and the path of `results.jsonl` (created empty where no split
    /// was written, as an interrupted run's).
    fn finish(
        mut self,
        splits_done: usize,
        splits: usize,
        interrupted: bool,
    ) -> Result<RunOutcome> {
        open_once(&mut self.file, &self.results_path)?;
        Ok(RunOutcome {
            records: self.records,
            results_path: self.results_path,
            splits_done,
            splits,
            interrupted,
        })
    }
}

/// The file in `slot`, created at `path` (replacing one there) if the slot is empty.
fn open_once<'a>(
    slot: &'a mut Option<std::fs::File>,
    path: &Path,
) -> Result<&'a mut std::fs::File> {
    match slot {
        Some(file) => Ok(file),
        None => {
            let file = std::fs::File::create(path).map_err(|e| GlassboxError::io(path, e))?;
            Ok(slot.insert(file))
        }
    }
}

fn progress_bar(total: u64, show: bool) -> indicatif::ProgressBar {
    if !show || total <= 1 {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} solves {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}
