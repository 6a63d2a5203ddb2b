//! `glassbox status DIR`: how far a sharded run is, while it runs and after. For each shard:
//! cell-splits done out of its total (read from its results file, whole units only), its
//! state (finished, running, pending and why, stopped, failed), its attempts; the failures
//! with their message and the end of their log; the merge; and the estimated time left.
//!
//! A shard's state comes from the files first (a shard with all its cell-splits on disk is
//! finished) and then from where it runs: SLURM's queue (`squeue`) for the SLURM executor, the
//! process table of this host for local processes. An attempt that recorded no end and no
//! longer runs was killed (SIGKILL after KillWait, the out-of-memory killer, a node failure);
//! a submitted shard that left the queue without recording any attempt failed before
//! glassbox started (a `setup` line, a binary the node cannot run), if its job wrote its log
//! since the submission; without a log it never started (cancelled while pending) and is
//! stopped. The merge job is judged the same way.
//!
//! The time left: each shard's measured seconds per cell-split (its attempts' wall time over
//! the cell-splits they solved; the run's mean for a shard without one) times its remaining
//! cell-splits; the run's is the longest shard's, or the remaining work spread over the
//! tasks that run at once (as many as run now; else the submission's slots), whichever is
//! more.
//!
//! A folder of a plain engine run (`glassbox run --out DIR`, with or without `--shard`)
//! gets its cell-splits done out of its total.
//!
//! Depends on the store's manifest, the plan, the records and the SLURM clients.

use super::plan::{now, Executor, Layout, Plan};
use super::records::{self, Attempt, Event, Outcome};
use super::sizing::duration;
use super::slurm::{self, Queued};
use crate::experiment::store;
use crate::Result;
use std::fmt::Write as _;
use std::path::Path;

/// Where a shard stands.
#[derive(Clone, Debug, PartialEq)]
pub enum ShardState {
    /// Every cell-split is on disk.
    Finished,
    /// A process runs it now.
    Running,
    /// Waiting to run (SLURM's reason, or a free local slot).
    Pending(String),
    /// Stopped (interrupted, or requeued but no longer queued): submit it again to go on.
    Stopped(String),
    /// Failed: the message says why.
    Failed(String),
    /// Never submitted (or its queue state cannot be read).
    NotStarted,
}

/// One shard's status.
#[derive(Clone, Debug)]
pub struct ShardStatus {
    /// Shard number (1-based).
    pub shard: usize,
    /// Cell-splits on disk.
    pub done: usize,
    /// Its cell-splits.
    pub of: usize,
    /// Its state.
    pub state: ShardState,
    /// Attempts recorded.
    pub attempts: usize,
    /// Wall seconds of its attempts, and the cell-splits they solved.
    pub measured: (f64, usize),
}

/// The status of a sharded run.
#[derive(Clone, Debug)]
pub struct RunStatus {
    /// The folder.
    pub layout: Layout,
    /// Its plan.
    pub plan: Plan,
    /// Each shard.
    pub shards: Vec<ShardStatus>,
    /// The merge: done, or where it stands.
    pub merge: String,
    /// Whether every shard's results are merged into DIR.
    pub merged: bool,
    /// Whether the merge's last try failed (or its job left the queue without one).
    pub merge_failed: bool,
    /// A note on what could not be read (squeue unavailable).
    pub note: Option<String>,
}

impl RunStatus {
    /// Measured seconds per cell-split over the whole run, if any was solved.
    pub fn seconds_per_unit(&self) -> Option<f64> {
        let (secs, units) = self
            .shards
            .iter()
            .fold((0.0, 0), |(s, u), x| (s + x.measured.0, u + x.measured.1));
        (units > 0).then(|| secs / units as f64)
    }

    /// Estimated seconds left of each shard (none without a measurement).
    pub fn shard_time_left(&self, s: &ShardStatus) -> Option<f64> {
        let remaining = s.of.saturating_sub(s.done) as f64;
        if remaining == 0.0 {
            return Some(0.0);
        }
        let spu = if s.measured.1 > 0 {
            Some(s.measured.0 / s.measured.1 as f64)
        } else {
            self.seconds_per_unit()
        };
        spu.map(|x| x * remaining)
    }

    /// Estimated seconds left of the run (see the module comment).
    pub fn time_left(&self) -> Option<f64> {
        let lefts: Vec<f64> = self
            .shards
            .iter()
            .filter(|s| s.done < s.of)
            .map(|s| self.shard_time_left(s))
            .collect::<Option<_>>()?;
        if lefts.is_empty() {
            return Some(0.0);
        }
        let running = self
            .shards
            .iter()
            .filter(|s| s.state == ShardState::Running)
            .count();
        let slots = if running > 0 {
            running
        } else {
            self.plan.submissions.last().map_or(1, |s| s.slots.max(1))
        };
        let longest = lefts.iter().copied().fold(0.0, f64::max);
        let spread = lefts.iter().sum::<f64>() / slots as f64;
        Some(longest.max(spread))
    }

    /// The shards that failed, with why.
    pub fn failed(&self) -> Vec<(usize, &str)> {
        self.shards
            .iter()
            .filter_map(|s| match &s.state {
                ShardState::Failed(m) => Some((s.shard, m.as_str())),
                _ => None,
            })
            .collect()
    }

    /// The report `glassbox status` prints.
    pub fn render(&self, log_lines: usize) -> String {
        let mut out = String::new();
        let plan = &self.plan;
        let jobs: Vec<String> = plan
            .submissions
            .iter()
            .filter_map(|s| s.array_job.clone())
            .collect();
        let _ = writeln!(
            out,
            "{}: {} in {} shards ({} executor{})",
            self.layout.root.display(),
            plan.config.display(),
            plan.shards,
            plan.executor,
            if jobs.is_empty() {
                String::new()
            } else {
                format!(", array job {}", jobs.join(", "))
            }
        );
        let _ = writeln!(
            out,
            "{:>5}  {:>13}  {:<10} {:>8} {:>8} {:>10}  note",
            "shard", "cell-splits", "state", "attempts", "s/cell", "time left"
        );
        for s in &self.shards {
            let (word, note) = match &s.state {
                ShardState::Finished => ("finished", String::new()),
                ShardState::Running => ("running", String::new()),
                ShardState::Pending(why) => ("pending", why.clone()),
                ShardState::Stopped(why) => ("stopped", why.clone()),
                ShardState::Failed(_) => ("FAILED", "see below".to_string()),
                ShardState::NotStarted => ("not run", String::new()),
            };
            let spu = if s.measured.1 > 0 {
                format!("{:.3}", s.measured.0 / s.measured.1 as f64)
            } else {
                "-".into()
            };
            let left = match (s.done >= s.of, self.shard_time_left(s)) {
                (true, _) => "-".to_string(),
                (false, Some(t)) => duration(t),
                (false, None) => "?".to_string(),
            };
            let _ = writeln!(
                out,
                "{:>5}  {:>13}  {:<10} {:>8} {:>8} {:>10}  {note}",
                s.shard,
                format!("{}/{}", s.done, s.of),
                word,
                s.attempts,
                spu,
                left
            );
        }
        let done: usize = self.shards.iter().map(|s| s.done).sum();
        let _ = write!(
            out,
            "all shards: {done}/{} cell-splits ({:.1}%)",
            plan.units,
            100.0 * done as f64 / plan.units.max(1) as f64
        );
        match (self.seconds_per_unit(), self.time_left()) {
            (_, Some(t)) if done >= plan.units || t == 0.0 => out.push('\n'),
            (Some(spu), Some(t)) => {
                let _ = writeln!(
                    out,
                    ", {spu:.3} s per cell-split measured; time left about {}",
                    duration(t)
                );
            }
            _ => out.push_str("; time left unknown until a cell-split is solved\n"),
        }
        let _ = writeln!(out, "merge: {}", self.merge);
        if let Some(note) = &self.note {
            let _ = writeln!(out, "note: {note}");
        }
        for (shard, message) in self.failed() {
            let log = self.layout.log(shard);
            let _ = writeln!(out, "shard {shard} failed: {message}");
            let _ = writeln!(out, "  log {}, last lines:", log.display());
            for line in tail(&log, log_lines) {
                let _ = writeln!(out, "    {line}");
            }
        }
        let unfinished = self
            .shards
            .iter()
            .any(|s| matches!(s.state, ShardState::Failed(_) | ShardState::Stopped(_)));
        let busy = self
            .shards
            .iter()
            .any(|s| matches!(s.state, ShardState::Running | ShardState::Pending(_)));
        if !unfinished && !busy && self.merge_failed {
            let _ = writeln!(
                out,
                "to go on: glassbox run {} --out {} --executor {} (every shard is finished: it \
                 merges them)",
                plan.config.display(),
                self.layout.root.display(),
                plan.executor
            );
        }
        if unfinished {
            let _ = writeln!(
                out,
                "to go on: glassbox run {} --out {} --executor {} (submits the shards that are \
                 neither finished nor queued; finished cell-splits are kept)",
                plan.config.display(),
                self.layout.root.display(),
                plan.executor
            );
        }
        out
    }
}

/// The last `n` lines of a log (none if it cannot be read).
pub fn tail(path: &Path, n: usize) -> Vec<String> {
    let Ok(bytes) = std::fs::read(path) else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| l.to_string())
        .collect()
}

/// Whether process `pid` runs on this host.
fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The status of the sharded run in `dir`.
pub fn read(dir: &Path) -> Result<RunStatus> {
    let layout = Layout::new(dir);
    let plan = Plan::read(&layout)?;
    let host = super::task::host_name();
    // SLURM's queue, for the jobs of every submission.
    let mut note = None;
    let queued: Vec<Queued> = if plan.executor == Executor::Slurm
        || plan.submissions.iter().any(|s| s.array_job.is_some())
    {
        let jobs: Vec<String> = plan
            .submissions
            .iter()
            .flat_map(|s| s.array_job.iter().chain(s.merge_job.iter()).cloned())
            .collect();
        match slurm::queue(&jobs) {
            Ok(q) => q,
            Err(e) => {
                note = Some(format!("SLURM's queue could not be read: {e}"));
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    let queue_known = note.is_none();
    let local_runner = plan
        .submissions
        .last()
        .and_then(|s| s.local_pid)
        .filter(|&pid| alive(pid));
    let mut shards = Vec::new();
    for i in plan.all_shards() {
        let progress = records::progress(&layout.shard(i).join(store::RESULTS))?;
        let attempts = records::attempts(&records::read(&layout.records(i))?);
        let of = plan.shard_units[i - 1];
        let in_queue = queued.iter().find(|q| {
            q.task == Some(i)
                && plan
                    .submissions
                    .iter()
                    .any(|s| s.array_job.as_deref() == Some(q.array_job.as_str()))
        });
        let submitted = plan
            .submissions
            .iter()
            .rev()
            .find(|s| s.shards.contains(&i));
        let last = attempts.last();
        let running_here = last.is_some_and(|a| {
            a.end.is_none()
                && matches!(&a.start, Event::Start { host: h, pid, job: None, .. } if *h == host && alive(*pid))
        });
        let state = if progress.done_units >= of {
            ShardState::Finished
        } else if let Some(q) = in_queue {
            let running = matches!(
                q.state.as_str(),
                "RUNNING" | "COMPLETING" | "CONFIGURING" | "STAGE_OUT"
            );
            match (running, last.and_then(|a| a.outcome())) {
                (true, None) => ShardState::Running,
                // Its job still ends (SLURM shows it a moment longer than glassbox runs).
                (true, Some(o)) if o != Outcome::Requeued => {
                    from_records(last, submitted, queue_known, plan.executor, &layout.log(i))
                }
                _ => ShardState::Pending(queue_words(q)),
            }
        } else if running_here {
            ShardState::Running
        } else if local_runner.is_some()
            && submitted.is_some_and(|s| last.is_none_or(|a| a.started() < s.at))
        {
            ShardState::Pending("waiting for a free local slot".into())
        } else {
            from_records(last, submitted, queue_known, plan.executor, &layout.log(i))
        };
        let measured = measure(&attempts, progress.done_units, state == ShardState::Running);
        shards.push(ShardStatus {
            shard: i,
            done: progress.done_units,
            of,
            state,
            attempts: attempts.len(),
            measured,
        });
    }
    let (merged, merge, merge_failed) = merge_state(&layout, &plan, &queued, queue_known);
    Ok(RunStatus {
        layout,
        plan,
        shards,
        merge,
        merged,
        merge_failed,
        note,
    })
}

/// The state of a shard that does not run (nor wait to) from its last attempt's record, its
/// last submission and its log.
fn from_records(
    last: Option<&Attempt>,
    submitted: Option<&super::plan::Submission>,
    queue_known: bool,
    executor: Executor,
    log: &Path,
) -> ShardState {
    match (last, submitted) {
        (Some(a), _) => match a.outcome() {
            Some(Outcome::Interrupted) => ShardState::Stopped("interrupted".into()),
            Some(Outcome::Requeued) if queue_known => {
                ShardState::Stopped("requeued, but no longer in SLURM's queue".into())
            }
            Some(Outcome::Requeued) => ShardState::Stopped("requeued".into()),
            Some(Outcome::Finished) => {
                ShardState::Stopped("ended, yet results are missing (removed since?)".into())
            }
            Some(Outcome::Failed) => ShardState::Failed(
                a.message()
                    .unwrap_or("an error (no message recorded)")
                    .to_string(),
            ),
            Some(o @ (Outcome::TimeTooShort | Outcome::BudgetSpent)) => {
                ShardState::Failed(format!(
                    "{}{}",
                    super::task::outcome_word(o),
                    a.message().map_or(String::new(), |m| format!(": {m}"))
                ))
            }
            None if !queue_known && executor == Executor::Slurm => {
                ShardState::Stopped("state unknown (no end recorded)".into())
            }
            None => ShardState::Failed(
                "its last attempt ended without a record: killed (SIGKILL after SLURM's \
                 KillWait, out of memory, a node failure?)"
                    .into(),
            ),
        },
        // SLURM opens a job's log when the job starts: a task cancelled while pending has
        // none, one whose setup line failed has the error in it.
        (None, Some(s)) if s.array_job.is_some() && queue_known => {
            if written_since(log, s.at) {
                ShardState::Failed(
                    "its job left SLURM's queue before glassbox started (a setup line that \
                     failed, a binary the node cannot run?): see its log"
                        .into(),
                )
            } else {
                ShardState::Stopped(
                    "left SLURM's queue without starting (cancelled while pending?)".into(),
                )
            }
        }
        _ => ShardState::NotStarted,
    }
}

/// Whether the file `path` was written since `at` (seconds since the Unix epoch), with a
/// second's slack for the clocks of the nodes and the file server.
fn written_since(path: &Path, at: f64) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .is_some_and(|t| t.as_secs_f64() >= at - 1.0)
}

/// A job's state in the queue in words, with SLURM's reason when it gives one
/// (`pending (Resources)`, `running`).
fn queue_words(q: &Queued) -> String {
    let state = q.state.to_lowercase();
    match q.reason.as_str() {
        "" | "None" => state,
        "Dependency" => format!("{state} (waiting for the array)"),
        r => format!("{state} ({r})"),
    }
}

/// Wall seconds of a shard's attempts and the cell-splits they solved: ended attempts as
/// recorded, the running one (the last, when `running`) until now with what is on disk now.
/// A killed attempt recorded no end, so its time is unknown: it is left out.
fn measure(attempts: &[Attempt], done_now: usize, running: bool) -> (f64, usize) {
    let t = now();
    let last = attempts.len().saturating_sub(1);
    let mut total = (0.0, 0);
    for (k, a) in attempts.iter().enumerate() {
        let Event::Start {
            at: start_at,
            done_units: start_done,
            ..
        } = a.start
        else {
            continue;
        };
        let (end_at, solved) = match &a.end {
            Some(Event::End {
                at, solved_units, ..
            }) => (*at, *solved_units),
            _ if running && k == last => (t, done_now.saturating_sub(start_done)),
            _ => continue,
        };
        total.0 += (end_at - start_at).max(0.0);
        total.1 += solved;
    }
    total
}

/// Whether the run is merged, the merge's state in words, and whether the merge failed.
fn merge_state(
    layout: &Layout,
    plan: &Plan,
    queued: &[Queued],
    queue_known: bool,
) -> (bool, String, bool) {
    let merged = store::read_manifest(&layout.root)
        .is_ok_and(|m| m.shard.is_none() && m.config_fingerprint == plan.config_fingerprint)
        && records::progress(&layout.root.join(store::RESULTS))
            .is_ok_and(|p| p.done_units >= plan.units);
    if merged {
        return (
            true,
            format!("done: {}", layout.root.join(store::RESULTS).display()),
            false,
        );
    }
    let submission = plan.submissions.last();
    let merge_job = submission.and_then(|s| s.merge_job.clone());
    if let Some(q) = merge_job
        .as_ref()
        .and_then(|j| queued.iter().find(|q| &q.array_job == j))
    {
        return (false, format!("job {} {}", q.id, queue_words(q)), false);
    }
    let log = layout.merge_log();
    let last = records::attempts(&records::read(&layout.merge_records()).unwrap_or_default()).pop();
    // The last submission's merge job has left the queue: as for a shard, without an attempt
    // of its own it never started glassbox, and without an end its attempt was killed. (A
    // merge job starts once the array has ended: an earlier attempt is long before it.)
    if let (Some(job), Some(s), true) = (&merge_job, submission, queue_known) {
        let failed = |why: String| {
            let line = tail(&log, 1)
                .pop()
                .map_or(String::new(), |l| format!(": {l}"));
            (
                false,
                format!("failed: job {job} {why} (log {}{line})", log.display()),
                true,
            )
        };
        match &last {
            None => {}
            Some(a) if a.started() < s.at => {}
            Some(a) if a.end.is_none() => {
                return failed(
                    "ended without a record: killed (out of memory, a node failure?)".into(),
                )
            }
            Some(_) => return merge_ended(last.as_ref(), &log),
        }
        if written_since(&log, s.at) {
            return failed(
                "left SLURM's queue before glassbox started (a setup line that failed, a binary \
                 the node cannot run?)"
                    .into(),
            );
        }
        return (
            false,
            format!(
                "job {job} left SLURM's queue without starting (cancelled while pending?): \
                 running the run command again submits a merge"
            ),
            true,
        );
    }
    merge_ended(last.as_ref(), &log)
}

/// The merge's state from its last attempt's record.
fn merge_ended(last: Option<&Attempt>, log: &Path) -> (bool, String, bool) {
    match last.and_then(|a| a.outcome().map(|o| (o, a.message()))) {
        Some((Outcome::Failed, m)) => (
            false,
            format!(
                "failed: {} (log {})",
                m.unwrap_or("see the log"),
                log.display()
            ),
            true,
        ),
        _ => (false, "not yet".into(), false),
    }
}

/// The status of a plain engine output folder: its cell-splits done out of its total.
pub fn engine_folder(dir: &Path) -> Result<String> {
    let manifest = store::read_manifest(dir)?;
    let p = records::progress(&dir.join(store::RESULTS))?;
    Ok(format!(
        "{}: {} ({}): {}/{} cell-splits ({:.1}%), {:.1} s of solves\n",
        dir.display(),
        manifest.config,
        manifest
            .shard
            .map_or("the whole run".to_string(), |s| format!("shard {s}")),
        p.done_units,
        manifest.shard_units,
        100.0 * p.done_units as f64 / manifest.shard_units.max(1) as f64,
        p.solve_seconds
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_states_read_as_words_without_slurms_none() {
        let q = |state: &str, reason: &str| Queued {
            id: "12".into(),
            array_job: "12".into(),
            task: None,
            state: state.into(),
            reason: reason.into(),
        };
        assert_eq!(queue_words(&q("RUNNING", "None")), "running");
        assert_eq!(
            queue_words(&q("PENDING", "Dependency")),
            "pending (waiting for the array)"
        );
        assert_eq!(
            queue_words(&q("PENDING", "Resources")),
            "pending (Resources)"
        );
    }
}
