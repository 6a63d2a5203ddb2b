//! `glassbox task DIR --shard I` and `glassbox task DIR --merge`: what one array task (or one
//! local process) runs, and the merge after them.
//!
//! A shard task runs the engine's shard `I/N` of the planned config into `DIR/shards/I`,
//! resumably: the engine skips the cell-splits already on disk and drops a unit left
//! half-written, so a requeued, preempted, cancelled and resubmitted or crashed task goes on
//! from its last whole cell-split and nothing is solved twice into the results. An attempt
//! first claims its shard (a lock on its records file, held while it runs): a second attempt
//! on a running shard (`glassbox task` typed by hand, a resubmission) is refused before it
//! records anything. Around the run the task records its attempt ([`super::records`]) and
//! handles the signals a cluster sends:
//!
//! - SIGTERM (scancel, preemption, the time limit; SLURM sends SIGKILL `KillWait` seconds
//!   later) and SIGINT: the running solves end (IPOPT, HiGHS, lbfgs and torch at their next
//!   iteration, the others when they finish), their unfinished units are abandoned, the
//!   attempt ends `interrupted` (a second signal ends the process at once; a unit being
//!   written is then dropped by the next attempt).
//! - SIGUSR1, which the job script asks SLURM to send `stop_before_limit` seconds before the
//!   time limit (`--signal=B:USR1@...`): the task stops the same way and, if this attempt
//!   finished at least one cell-split, requeues itself (`scontrol requeue`), so that a shard
//!   longer than a task's time limit still completes over several attempts. An attempt that
//!   finished nothing is not requeued (the next one would not get further): it ends
//!   `time_too_short` and `glassbox status` reports it.
//!
//! The merge task checks that every shard is finished, then joins them into DIR as
//! `glassbox merge DIR DIR/shards/*` does (the results of an unsharded run, apart from
//! timings), with the nested protocol's selection and the summary in its log.
//!
//! Depends on the engine's public surface (`engine::run`, `store::merge`, the summaries).

use super::plan::{now, Layout, Plan};
use super::records::{self, Event, Outcome};
use crate::experiment::engine::{self, Ending, RunOptions};
use crate::experiment::grid::Experiment;
use crate::experiment::store;
use crate::registry::Registry;
use crate::{GlassboxError, Result};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What a task process runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskKind {
    /// Shard `I` (1-based).
    Shard(usize),
    /// The merge of every shard.
    Merge,
}

/// How a task ended, and the process's exit status for it.
#[derive(Clone, Debug)]
pub struct TaskEnding {
    /// How.
    pub outcome: Outcome,
    /// What to print (the log's last lines).
    pub message: String,
}

impl TaskEnding {
    /// The exit status: 0 when finished or requeued, 143 when stopped by a signal (as a
    /// process killed by SIGTERM), 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self.outcome {
            Outcome::Finished | Outcome::Requeued => 0,
            Outcome::Interrupted => 143,
            Outcome::TimeTooShort | Outcome::BudgetSpent | Outcome::Failed => 1,
        }
    }
}

/// Runs the task `kind` of the sharded run in `dir` (see the module comment). Errors before
/// the attempt is recorded (no plan, a bad shard number) are returned; errors of the run are
/// recorded and returned as a `failed` ending. The config is read with `registry`'s
/// formulations and backends (the submitting program's: its binary runs the tasks).
pub fn run(dir: &Path, kind: TaskKind, registry: Arc<Registry>) -> Result<TaskEnding> {
    let layout = Layout::new(dir);
    let plan = Plan::read(&layout)?;
    match kind {
        TaskKind::Shard(i) => {
            if i == 0 || i > plan.shards {
                return Err(GlassboxError::Config(format!(
                    "{}: shard {i} does not exist: the run has shards 1 to {}",
                    dir.display(),
                    plan.shards
                )));
            }
            run_shard(&layout, &plan, i, registry)
        }
        TaskKind::Merge => run_merge(&layout, &plan),
    }
}

/// The merge task of the sharded run in `dir` ([`run`] with [`TaskKind::Merge`], which reads
/// no config).
pub fn merge(dir: &Path) -> Result<TaskEnding> {
    let layout = Layout::new(dir);
    let plan = Plan::read(&layout)?;
    run_merge(&layout, &plan)
}

/// The signal flags of a task: `stop` for SIGTERM / SIGINT / SIGUSR1, `time_up` for SIGUSR1.
struct Signals {
    stop: Arc<AtomicBool>,
    time_up: Arc<AtomicBool>,
}

fn install_signals() -> Result<Signals> {
    use signal_hook::consts::{SIGINT, SIGTERM, SIGUSR1};
    let stop = Arc::new(AtomicBool::new(false));
    let time_up = Arc::new(AtomicBool::new(false));
    let failed =
        |e: std::io::Error| GlassboxError::Config(format!("installing the signal handlers: {e}"));
    // A second SIGTERM / SIGINT ends the process at once (the first set `stop`).
    for (signal, code) in [(SIGINT, 130), (SIGTERM, 143)] {
        signal_hook::flag::register_conditional_shutdown(signal, code, stop.clone())
            .and_then(|_| signal_hook::flag::register(signal, stop.clone()))
            .map_err(failed)?;
    }
    signal_hook::flag::register(SIGUSR1, time_up.clone())
        .and_then(|_| signal_hook::flag::register(SIGUSR1, stop.clone()))
        .map_err(failed)?;
    Ok(Signals { stop, time_up })
}

/// The SLURM job of this process (`ARRAYJOB_TASK` for an array task), none outside SLURM.
fn slurm_job() -> Option<String> {
    let var = |k| std::env::var(k).ok().filter(|v: &String| !v.is_empty());
    match (var("SLURM_ARRAY_JOB_ID"), var("SLURM_ARRAY_TASK_ID")) {
        (Some(array), Some(task)) => Some(format!("{array}_{task}")),
        _ => var("SLURM_JOB_ID"),
    }
}

/// CPU seconds (user + system, every thread) this process has used.
fn cpu_seconds() -> Option<f64> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes the struct it is given (zeroed, so initialized either way).
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: zeroed above and filled by getrusage.
    let u = unsafe { usage.assume_init() };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Some(seconds(u.ru_utime) + seconds(u.ru_stime))
}

/// This host's name.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}

fn start_event(done_units: usize) -> Event {
    Event::Start {
        at: now(),
        host: host_name(),
        pid: std::process::id(),
        job: slurm_job(),
        restart: std::env::var("SLURM_RESTART_COUNT")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
        done_units,
    }
}

/// The end of the attempt that began with `start` (its process and job, so that the end
/// pairs with this attempt's start: see [`records::attempts`]).
fn end_event(
    start: &Event,
    outcome: Outcome,
    done_units: usize,
    solved_units: usize,
    message: Option<String>,
) -> Event {
    let (pid, job) = match start {
        Event::Start { pid, job, .. } => (Some(*pid), job.clone()),
        Event::End { .. } => (None, None),
    };
    Event::End {
        at: now(),
        outcome,
        done_units,
        solved_units,
        message,
        cpu_seconds: cpu_seconds(),
        pid,
        job,
    }
}

/// Shard `i`'s claim for this attempt: an exclusive lock on its records file, held until the
/// attempt ends (dropped). The engine's own lock on the shard's folder is taken only once the
/// config and data are read, and this attempt records its start before that; the claim comes
/// first, so that a second attempt is refused before it writes anything. (Not the engine's
/// lock file itself: a second lock on it would conflict with the engine's, in this process.)
fn claim_shard(layout: &Layout, i: usize) -> Result<std::fs::File> {
    let path = layout.records(i);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| GlassboxError::io(dir, e))?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| GlassboxError::io(&path, e))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(GlassboxError::Config(format!(
                "shard {i} of {} is running already{}: a second attempt on it is refused (its \
                 state and records are left as they are); wait for that attempt to end, or \
                 stop it first",
                layout.root.display(),
                running_attempt(&path)
            )))
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(GlassboxError::io(&path, e)),
    }
    // A run outside the executor (`glassbox run --out DIR/shards/I`) holds the engine's lock.
    let out = layout.shard(i);
    if !engine_lock_free(&out) {
        return Err(GlassboxError::Config(format!(
            "{} is being written by another glassbox run (it holds the lock {}): wait for that \
             run to end or stop it, then run shard {i} again",
            out.display(),
            out.join(store::LOCK).display()
        )));
    }
    Ok(file)
}

/// Which attempt runs, from the last open start of the records file `path` (", pid P on
/// HOST, job J"), or nothing.
fn running_attempt(path: &Path) -> String {
    let attempts = records::attempts(&records::read(path).unwrap_or_default());
    match attempts
        .iter()
        .rev()
        .find(|a| a.end.is_none())
        .map(|a| &a.start)
    {
        Some(Event::Start { host, pid, job, .. }) => format!(
            " (pid {pid} on {host}{})",
            job.as_ref().map_or(String::new(), |j| format!(", job {j}"))
        ),
        _ => String::new(),
    }
}

/// Whether no process holds the engine's lock on the folder `out` (true for a folder without
/// a lock file). Takes the lock and lets it go at once.
fn engine_lock_free(out: &Path) -> bool {
    match std::fs::File::open(out.join(store::LOCK)) {
        Ok(f) => !matches!(f.try_lock(), Err(std::fs::TryLockError::WouldBlock)),
        Err(_) => true,
    }
}

/// Loads the planned config and checks that it is still the one planned.
fn load_config(plan: &Plan, registry: Arc<Registry>) -> Result<Experiment> {
    let exp = Experiment::load_with(&plan.config, registry)?;
    if exp.fingerprint != plan.config_fingerprint {
        return Err(GlassboxError::Config(format!(
            "{} changed since this run was planned (fingerprint {}, planned {}): its results \
             would not merge with the other shards'; restore it, or start the run over with \
             --force",
            plan.config.display(),
            exp.fingerprint,
            plan.config_fingerprint
        )));
    }
    Ok(exp)
}

fn run_shard(
    layout: &Layout,
    plan: &Plan,
    i: usize,
    registry: Arc<Registry>,
) -> Result<TaskEnding> {
    let out = layout.shard(i);
    let records_path = layout.records(i);
    // Before anything is recorded: a second attempt on a running shard is refused here, and
    // leaves the running one's state and records as they are.
    let _claim = claim_shard(layout, i)?;
    let done_before = records::progress(&out.join(store::RESULTS))?.done_units;
    let start = start_event(done_before);
    records::append(&records_path, &start)?;
    println!(
        "glassbox task: shard {i}/{} on {}{}, {done_before} of {} cell-splits done before",
        plan.shards,
        host_name(),
        slurm_job().map_or(String::new(), |j| format!(" (job {j})")),
        plan.shard_units[i - 1]
    );
    let signals = install_signals()?;
    let result = load_config(plan, registry).and_then(|exp| {
        engine::run(
            &exp,
            &RunOptions {
                out: out.clone(),
                force: false,
                jobs: plan.threads.max(1),
                shard: Some(plan.shard(i)),
                progress: false,
                stop: signals.stop.clone(),
            },
        )
    });
    let (outcome, done, solved, message) = match result {
        Ok(o) => {
            let (outcome, message) = match o.ending {
                Ending::Finished => {
                    print!("{}", o.summary);
                    (Outcome::Finished, None)
                }
                Ending::BudgetSpent => (
                    Outcome::BudgetSpent,
                    Some("the config's [experiment] time_budget is spent".to_string()),
                ),
                Ending::Interrupted if signals.time_up.load(Ordering::SeqCst) => {
                    if o.solved_units == 0 {
                        (
                            Outcome::TimeTooShort,
                            Some(
                                "the time limit came before this attempt finished a cell-split: \
                                 give the tasks more time ([cluster] time) and resubmit"
                                    .to_string(),
                            ),
                        )
                    } else {
                        (Outcome::Requeued, None)
                    }
                }
                Ending::Interrupted => (Outcome::Interrupted, None),
            };
            (outcome, o.done_units, o.solved_units, message)
        }
        Err(e) => {
            // What is on disk counts only if no other run writes the folder now (the engine
            // released its lock when it failed; another holder's units are not this attempt's).
            let done = if engine_lock_free(&out) {
                records::progress(&out.join(store::RESULTS))
                    .map(|p| p.done_units)
                    .unwrap_or(done_before)
            } else {
                done_before
            };
            (
                Outcome::Failed,
                done,
                done.saturating_sub(done_before),
                Some(e.to_string()),
            )
        }
    };
    // Recorded before a requeue: SLURM ends this job when it requeues it.
    records::append(
        &records_path,
        &end_event(&start, outcome, done, solved, message.clone()),
    )?;
    let mut text = format!(
        "glassbox task: shard {i}/{} {}: {done} of {} cell-splits done, {solved} in this attempt",
        plan.shards,
        outcome_word(outcome),
        plan.shard_units[i - 1]
    );
    if let Some(m) = &message {
        text.push_str(&format!(": {m}"));
    }
    if outcome == Outcome::Requeued {
        // ARRAY_TASK, not SLURM_JOB_ID: one task of an array may carry the array's own id,
        // and `scontrol requeue ARRAY` requeues every task of it.
        match slurm_job() {
            Some(job) => match super::slurm::requeue(&job) {
                Ok(()) => text.push_str(&format!(" (job {job} requeued)")),
                Err(e) => {
                    text.push_str(&format!(": requeueing job {job} failed: {e}"));
                    return Ok(TaskEnding {
                        outcome: Outcome::Interrupted,
                        message: text,
                    });
                }
            },
            None => {
                text.push_str(" (not a SLURM job: rerun it to go on)");
                return Ok(TaskEnding {
                    outcome: Outcome::Interrupted,
                    message: text,
                });
            }
        }
    }
    Ok(TaskEnding {
        outcome,
        message: text,
    })
}

/// A word for an outcome, as the logs and `glassbox status` write it.
pub fn outcome_word(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Finished => "finished",
        Outcome::Interrupted => "interrupted",
        Outcome::Requeued => "stopped before its time limit and requeued",
        Outcome::TimeTooShort => "reached its time limit without finishing a cell-split",
        Outcome::BudgetSpent => "spent its time budget",
        Outcome::Failed => "failed",
    }
}

/// The shards of `plan` that are not finished: (shard, done, of).
pub fn unfinished_shards(layout: &Layout, plan: &Plan) -> Result<Vec<(usize, usize, usize)>> {
    let mut out = Vec::new();
    for i in plan.all_shards() {
        let done = records::progress(&layout.shard(i).join(store::RESULTS))?.done_units;
        let of = plan.shard_units[i - 1];
        if done < of {
            out.push((i, done, of));
        }
    }
    Ok(out)
}

fn run_merge(layout: &Layout, plan: &Plan) -> Result<TaskEnding> {
    let records_path = layout.merge_records();
    let start = start_event(0);
    records::append(&records_path, &start)?;
    let result = merge_shards(layout, plan);
    let (outcome, message, text) = match result {
        Ok(text) => (Outcome::Finished, None, text),
        Err(e) => {
            let m = e.to_string();
            (
                Outcome::Failed,
                Some(m.clone()),
                format!("glassbox task: merge failed: {m}"),
            )
        }
    };
    records::append(&records_path, &end_event(&start, outcome, 0, 0, message))?;
    Ok(TaskEnding {
        outcome,
        message: text,
    })
}

/// Merges the finished shards into DIR; the summary, or which shards are unfinished.
pub fn merge_shards(layout: &Layout, plan: &Plan) -> Result<String> {
    let unfinished = unfinished_shards(layout, plan)?;
    if !unfinished.is_empty() {
        let list: Vec<String> = unfinished
            .iter()
            .map(|(i, d, of)| format!("shard {i} ({d} of {of})"))
            .collect();
        return Err(GlassboxError::Config(format!(
            "not every shard is finished: {}; `glassbox status {}` shows why, and running the \
             same `glassbox run ... --executor` command again submits them",
            list.join(", "),
            layout.root.display()
        )));
    }
    let dirs: Vec<_> = plan.all_shards().iter().map(|&i| layout.shard(i)).collect();
    // Replaces an earlier merge: the shards are the results.
    let manifest = store::merge(&layout.root, &dirs, true)?;
    let results = layout.root.join(store::RESULTS);
    let done = store::scan(&results, &manifest.config_fingerprint, false)?;
    let mut text = engine::summary(&manifest, &done);
    if let Some(report) = engine::nested_report(&manifest, &done) {
        let path = layout.root.join("nested.json");
        crate::model::write_atomically(&path, format!("{report:#}\n").as_bytes())?;
        text.push_str(&format!("nested selection: {}\n", path.display()));
    }
    text.push_str(&format!(
        "merged {} shards: {} cell-splits into {}\n",
        plan.shards,
        done.len(),
        results.display()
    ));
    Ok(text)
}
