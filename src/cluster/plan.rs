//! The plan of a sharded run and the folder it lives in. `DIR/cluster.json` records which
//! config runs (its absolute path and fingerprint), on which executor, in how many shards of
//! how many cell-splits each, with which binary, and every submission (job ids, shards);
//! every task, the merge and `glassbox status` read it.
//!
//! The folder ([`Layout`]):
//!
//! ```text
//! DIR/cluster.json            the plan
//! DIR/shards/I/               shard I's engine output (experiment.json, results.jsonl, models/)
//! DIR/logs/task-I.log         shard I's output, every attempt appended (requeues included)
//! DIR/logs/merge.log          the merge's output
//! DIR/tasks/task-I.jsonl      shard I's attempts: one line when it starts, one when it ends
//! DIR/tasks/merge.jsonl       the merge's attempts
//! DIR/slurm/array.sbatch      the job scripts (SLURM executor)
//! DIR/slurm/merge.sbatch
//! DIR/results.jsonl           the merged results (as an unsharded run's), with
//! DIR/experiment.json         its manifest, DIR/models/ and DIR/nested.json (nested protocol)
//! ```
//!
//! Depends on the engine's public surface: the grid ([`Experiment`]), the split and chain
//! planning of [`engine`] (the same functions the engine runs, so the shards' sizes here are
//! the engine's).

use super::sizing;
use crate::experiment::engine;
use crate::experiment::grid::Experiment;
use crate::model::write_atomically;
use crate::{GlassboxError, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where the shards run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Executor {
    /// A SLURM job array, one task per shard, and a merge job after it.
    Slurm,
    /// Processes on this machine.
    Local,
}

impl std::str::FromStr for Executor {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "slurm" => Ok(Executor::Slurm),
            "local" => Ok(Executor::Local),
            _ => Err(format!("--executor '{s}': use slurm or local")),
        }
    }
}

impl std::fmt::Display for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Executor::Slurm => "slurm",
            Executor::Local => "local",
        })
    }
}

/// `DIR/cluster.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Plan {
    /// The config file, absolute.
    pub config: PathBuf,
    /// Its fingerprint ([`Experiment::fingerprint`]) when the run was planned: a task refuses
    /// a config that changed since.
    pub config_fingerprint: String,
    /// Where the shards run.
    pub executor: Executor,
    /// Number of shards.
    pub shards: usize,
    /// Cell-splits of each shard (shard I at I - 1).
    pub shard_units: Vec<usize>,
    /// Cell-splits of the whole run.
    pub units: usize,
    /// Chains of the run (the most shards that get work).
    pub chains: usize,
    /// Chains each task runs at once (the engine's `--jobs` inside a task).
    pub threads: usize,
    /// The glassbox binary the tasks run.
    pub binary: PathBuf,
    /// Every submission, oldest first.
    #[serde(default)]
    pub submissions: Vec<Submission>,
}

/// One submission of (some of) the shards.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Submission {
    /// When (seconds since the Unix epoch).
    pub at: f64,
    /// The shards submitted.
    pub shards: Vec<usize>,
    /// SLURM: the array job's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_job: Option<String>,
    /// SLURM: the merge job's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_job: Option<String>,
    /// Local: the pid of the process that runs the shards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_pid: Option<u32>,
    /// Shards that may run at once (local: `--jobs`; SLURM: the array throttle, else all).
    pub slots: usize,
}

/// The paths of a sharded run's folder (see the module comment).
#[derive(Clone, Debug)]
pub struct Layout {
    /// DIR.
    pub root: PathBuf,
}

impl Layout {
    /// The layout of `root`.
    pub fn new(root: &Path) -> Self {
        Layout {
            root: root.to_path_buf(),
        }
    }
    /// `DIR/cluster.json`.
    pub fn plan(&self) -> PathBuf {
        self.root.join("cluster.json")
    }
    /// Shard `i`'s engine output.
    pub fn shard(&self, i: usize) -> PathBuf {
        self.root.join("shards").join(i.to_string())
    }
    /// Shard `i`'s log.
    pub fn log(&self, i: usize) -> PathBuf {
        self.root.join("logs").join(format!("task-{i}.log"))
    }
    /// The merge's log.
    pub fn merge_log(&self) -> PathBuf {
        self.root.join("logs").join("merge.log")
    }
    /// Shard `i`'s attempt records.
    pub fn records(&self, i: usize) -> PathBuf {
        self.root.join("tasks").join(format!("task-{i}.jsonl"))
    }
    /// The merge's attempt records.
    pub fn merge_records(&self) -> PathBuf {
        self.root.join("tasks").join("merge.jsonl")
    }
    /// The job array's script.
    pub fn array_script(&self) -> PathBuf {
        self.root.join("slurm").join("array.sbatch")
    }
    /// The merge job's script.
    pub fn merge_script(&self) -> PathBuf {
        self.root.join("slurm").join("merge.sbatch")
    }
    /// Creates the folders tasks write into.
    pub fn create(&self) -> Result<()> {
        for d in ["shards", "logs", "tasks"] {
            let p = self.root.join(d);
            std::fs::create_dir_all(&p).map_err(|e| GlassboxError::io(&p, e))?;
        }
        Ok(())
    }
}

impl Plan {
    /// Reads `DIR/cluster.json`.
    pub fn read(layout: &Layout) -> Result<Plan> {
        let path = layout.plan();
        let text = std::fs::read_to_string(&path).map_err(|e| GlassboxError::io(&path, e))?;
        serde_json::from_str(&text).map_err(|e| {
            GlassboxError::Config(format!(
                "{}: not the plan of a sharded run: {e}",
                path.display()
            ))
        })
    }

    /// Writes `DIR/cluster.json` (atomically: a reader sees the old plan or the new one).
    pub fn write(&self, layout: &Layout) -> Result<()> {
        std::fs::create_dir_all(&layout.root).map_err(|e| GlassboxError::io(&layout.root, e))?;
        let text =
            serde_json::to_string_pretty(self).map_err(|e| GlassboxError::Config(e.to_string()))?;
        write_atomically(&layout.plan(), format!("{text}\n").as_bytes())
    }

    /// Shards `1..=shards`.
    pub fn all_shards(&self) -> Vec<usize> {
        (1..=self.shards).collect()
    }

    /// The engine's shard `i` of this plan.
    pub fn shard(&self, i: usize) -> engine::Shard {
        engine::Shard {
            index: i,
            count: self.shards,
        }
    }
}

/// The chains of `exp` (their lengths in cell-splits, in the engine's order), planned as the
/// engine plans them: each data set read and split once, then [`engine::plan_chains`]. Every
/// cell is checked against its data as the engine checks it before it solves anything, so
/// that a config error is found here, not in every task on the cluster.
pub fn chain_lengths(exp: &Experiment) -> Result<Vec<usize>> {
    let n_datasets = exp.blocks.iter().map(|b| b.dataset + 1).max().unwrap_or(1);
    let mut n_splits = None;
    for d in 0..n_datasets {
        let splits = engine::load_and_check(exp, d)?.1.len();
        if n_splits.is_some_and(|n| n != splits) {
            return Err(GlassboxError::Config(format!(
                "{}: the data sets give different numbers of splits",
                exp.file.display()
            )));
        }
        n_splits = Some(splits);
    }
    Ok(engine::plan_chains(exp, n_splits.unwrap_or(0))
        .iter()
        .map(|c| c.len())
        .collect())
}

/// A new plan of `exp` in `shards` shards (at most one per chain: a shard without a chain
/// would have nothing to do).
pub fn new_plan(
    exp: &Experiment,
    executor: Executor,
    shards: usize,
    threads: usize,
    binary: PathBuf,
    chains: &[usize],
) -> Result<Plan> {
    if shards == 0 {
        return Err(GlassboxError::Config("--shards must be at least 1".into()));
    }
    if shards > chains.len() {
        return Err(GlassboxError::Config(format!(
            "{}: {shards} shards for {} chains of cells: a chain (a split's warm path, or one \
             cell on one split without a path) runs in one shard, so use at most --shards {}",
            exp.file.display(),
            chains.len(),
            chains.len()
        )));
    }
    let config = std::path::absolute(&exp.file).map_err(|e| GlassboxError::io(&exp.file, e))?;
    Ok(Plan {
        config,
        config_fingerprint: exp.fingerprint.clone(),
        executor,
        shards,
        shard_units: sizing::shard_units(chains, shards),
        units: chains.iter().sum(),
        chains: chains.len(),
        threads,
        binary,
        submissions: Vec::new(),
    })
}

/// Seconds since the Unix epoch.
pub fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}
