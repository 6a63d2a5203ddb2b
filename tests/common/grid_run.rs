//! Runs a grid config through the experiment engine in the test's process (one job, no
//! progress bar, no stop request), for tests that read its summary or lines.

#![allow(dead_code)]

use glassbox::experiment::engine::{self, EngineOutcome, RunOptions};
use glassbox::experiment::grid::Experiment;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Runs the grid config at `config` into `out`.
pub fn run_grid(config: &Path, out: PathBuf) -> EngineOutcome {
    let options = RunOptions {
        out,
        force: false,
        jobs: 1,
        shard: None,
        progress: false,
        stop: Arc::new(AtomicBool::new(false)),
    };
    engine::run(&Experiment::load(config).unwrap(), &options).unwrap()
}
