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
        let unit = formulation.run(
            &config,
            &data,
            split,
            &UnitCarry {
                previous: None,
                stop: &stopped,
                model_path: Some(&model_path),
                progress: &bar,
            },
        )?;
        if unit.interrupted {
            break;
        }
        writer.write(unit.records)?;
        done += 1;
    }
    bar.finish_and_clear();
    Ok(writer.finish(done, splits.len(), done < splits.len()))
}

/// What a run writes as it goes: the out folder, its `models` folder and `results.jsonl`
/// (one flushed JSON line per solve); it keeps the records for the [`RunOutcome`].
struct ResultsWriter {
    file: std::fs::File,
    results_path: PathBuf,
    models_dir: PathBuf,
    records: Vec<SolveRecord>,
}

impl ResultsWriter {
    /// Creates `out_dir`, its `models` folder and (empty) `results_path`.
    fn create(out_dir: &Path, results_path: &Path) -> Result<Self> {
        std::fs::create_dir_all(out_dir).map_err(|e| GlassboxError::io(out_dir, e))?;
        let models_dir = out_dir.join("models");
        std::fs::create_dir_all(&models_dir).map_err(|e| GlassboxError::io(&models_dir, e))?;
        let file =
            std::fs::File::create(results_path).map_err(|e| GlassboxError::io(results_path, e))?;
        Ok(Self {
            file,
            results_path: results_path.to_path_buf(),
            models_dir,
            records: Vec::new(),
        })
    }

    /// Appends `records` to `results.jsonl`, one flushed JSON line each.
    fn write(&mut self, records: Vec<SolveRecord>) -> Result<()> {
        for record in &records {
            let mut line =
                serde_json::to_string(record).map_err(|e| GlassboxError::Config(e.to_string()))?;
            line.push('\n');
            self.file
                .write_all(line.as_bytes())
                .and_then(|_| self.file.flush())
                .map_err(|e| GlassboxError::io(&self.results_path, e))?;
        }
        self.records.extend(records);
        Ok(())
    }

    /// The records written and the path of `results.jsonl`.
    fn finish(self, splits_done: usize, splits: usize, interrupted: bool) -> RunOutcome {
        RunOutcome {
            records: self.records,
            results_path: self.results_path,
            splits_done,
            splits,
            interrupted,
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
