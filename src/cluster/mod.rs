//! Experiment grids as shards in separate processes: on a SLURM cluster, a job array with one
//! task per shard and a merge job after it; on this machine, local processes. Both run each
//! shard the same way (`glassbox task DIR --shard I`: the engine's `--shard I/N`, resumably,
//! into `DIR/shards/I`), record each attempt, and merge the shards into DIR as `glassbox merge`
//! does, so the merged results equal an unsharded run's apart from the timings.
//!
//! One concern per file:
//! - [`config`]: the `[cluster]` table (resources per task, setup lines, sizing inputs).
//! - [`plan`]: the plan in `DIR/cluster.json` and the folder's layout.
//! - [`sizing`]: how many shards, so that a task fits its time limit.
//! - [`sbatch`]: the job scripts.
//! - [`slurm`]: `sbatch`, `squeue`, `scontrol requeue`.
//! - [`submit`]: `glassbox run --executor`: plan or resume, then submit or run what is missing.
//! - [`local`]: the local executor.
//! - [`task`]: what one task runs (a shard, or the merge), and how it handles SLURM's signals.
//! - [`records`]: the attempts of each task, and progress read from a results file.
//! - [`status`]: `glassbox status DIR`.
//!
//! Depends on the experiment engine's public surface only: the grid (read with the caller's
//! [`crate::registry::Registry`]), `engine::{run, load_and_check, plan_chains, Shard, summary,
//! nested_report}` and the store's manifest, scan and merge. Unix only (signals, process
//! groups).

pub mod config;
pub mod local;
pub mod plan;
pub mod records;
pub mod sbatch;
pub mod sizing;
pub mod slurm;
pub mod status;
pub mod submit;
pub mod task;

pub use plan::Executor;
