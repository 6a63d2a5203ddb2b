//! What each attempt of a task did, as JSON lines in `DIR/tasks/task-I.jsonl` (and
//! `merge.jsonl`): a `start` line when an attempt begins (where, which job, how much was done
//! already) and an `end` line when it ends (how, how much it solved, the error). A requeued or
//! resubmitted task appends a new attempt. An attempt without an `end` line either still runs
//! or was killed (SIGKILL after SLURM's KillWait, a node failure, the OOM killer):
//! `glassbox status` tells which from SLURM's queue or the process table.
//!
//! Also the tolerant reading of a results file while a run appends to it ([`progress`]).
//!
//! Depends on nothing else of glassbox but its error type.

use crate::{GlassboxError, Result};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

/// How an attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Every cell-split of the shard is on disk (merge: the shards are merged).
    Finished,
    /// Stopped by SIGTERM / SIGINT (scancel, preemption, the time limit, Ctrl-C): the
    /// finished cell-splits are on disk; a rerun resumes.
    Interrupted,
    /// Told that its time limit is near (SIGUSR1), stopped and requeued itself.
    Requeued,
    /// Told that its time limit is near, but it finished no cell-split in this attempt:
    /// not requeued (it would not get further next time).
    TimeTooShort,
    /// The config's `[experiment] time_budget` ran out.
    BudgetSpent,
    /// An error: the config, the data, the output folder (message in the record).
    Failed,
}

/// One line of a task's records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// An attempt begins.
    Start {
        /// Seconds since the Unix epoch.
        at: f64,
        /// The host it runs on.
        host: String,
        /// Its process id there.
        pid: u32,
        /// SLURM: the job id of the array task (`ARRAY_TASK`), none locally.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        job: Option<String>,
        /// SLURM: how many times the job was requeued before (`SLURM_RESTART_COUNT`).
        #[serde(default)]
        restart: u32,
        /// Cell-splits on disk when it began.
        done_units: usize,
    },
    /// An attempt ends.
    End {
        /// Seconds since the Unix epoch.
        at: f64,
        /// How.
        outcome: Outcome,
        /// Cell-splits on disk when it ended.
        done_units: usize,
        /// Cell-splits it solved.
        solved_units: usize,
        /// The error, or what to do.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// CPU seconds (user + system) of the attempt's process: against its wall time, how
        /// much of a core it had.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cpu_seconds: Option<f64>,
        /// The attempt's process id, as its start has it: the end pairs with the start of the
        /// same attempt (none in older records: the latest start).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pid: Option<u32>,
        /// SLURM: the attempt's job, as its start has it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        job: Option<String>,
    },
}

/// Appends `event` to the records file `path` (one line, one write).
pub fn append(path: &Path, event: &Event) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| GlassboxError::io(dir, e))?;
    }
    let mut line =
        serde_json::to_string(event).map_err(|e| GlassboxError::Config(e.to_string()))?;
    line.push('\n');
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .map_err(|e| GlassboxError::io(path, e))
}

/// The events of `path` (none when it does not exist); a line that does not parse (the
/// partial last line of a killed write) is skipped.
pub fn read(path: &Path) -> Result<Vec<Event>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(GlassboxError::io(path, e)),
    }
}

/// One attempt: its start and, once it ended, its end.
#[derive(Clone, Debug, PartialEq)]
pub struct Attempt {
    /// The `start` event.
    pub start: Event,
    /// The `end` event, if written.
    pub end: Option<Event>,
}

impl Attempt {
    /// When it started.
    pub fn started(&self) -> f64 {
        match self.start {
            Event::Start { at, .. } | Event::End { at, .. } => at,
        }
    }
    /// How it ended, if it wrote so.
    pub fn outcome(&self) -> Option<Outcome> {
        match self.end {
            Some(Event::End { outcome, .. }) => Some(outcome),
            _ => None,
        }
    }
    /// Its end's message.
    pub fn message(&self) -> Option<&str> {
        match &self.end {
            Some(Event::End { message, .. }) => message.as_deref(),
            _ => None,
        }
    }
}

/// The attempts of a records file, oldest first. An `end` pairs with the latest open
/// `start` of the same process and job: attempts may overlap (one is refused while another
/// runs, an older one ends late), and an end paired with another attempt's start would end
/// the wrong one. An `end` without its `start` is dropped.
pub fn attempts(events: &[Event]) -> Vec<Attempt> {
    let mut out: Vec<Attempt> = Vec::new();
    for e in events {
        match e {
            Event::Start { .. } => out.push(Attempt {
                start: e.clone(),
                end: None,
            }),
            Event::End { pid, job, .. } => {
                let open = match pid {
                    Some(p) => out.iter_mut().rev().find(|a| {
                        a.end.is_none()
                            && matches!(&a.start, Event::Start { pid: sp, job: sj, .. }
                                if sp == p && sj == job)
                    }),
                    // Older records name no process: the latest start, if still open.
                    None => out.last_mut().filter(|a| a.end.is_none()),
                };
                if let Some(a) = open {
                    a.end = Some(e.clone());
                }
            }
        }
    }
    out
}

/// What a results file holds so far, read while a run may be appending to it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Progress {
    /// Finished cell-splits (a unit's lines are written together; a unit counts once its
    /// last line is on disk).
    pub done_units: usize,
    /// Solve seconds of their lines, summed.
    pub solve_seconds: f64,
}

/// Reads `results` without changing it: counts the units whose last line is complete
/// (partial lines and unfinished units, which a resumed run drops, are not counted).
pub fn progress(results: &Path) -> Result<Progress> {
    #[derive(Deserialize)]
    struct Key {
        start: usize,
        unit_solves: usize,
        #[serde(default)]
        solve_seconds: f64,
    }
    let text = match std::fs::read(results) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Progress::default()),
        Err(e) => return Err(GlassboxError::io(results, e)),
    };
    let complete = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut p = Progress::default();
    let mut unit_seconds = 0.0;
    for line in String::from_utf8_lossy(&text[..complete]).lines() {
        let Ok(k) = serde_json::from_str::<Key>(line) else {
            continue;
        };
        if k.start == 0 {
            unit_seconds = 0.0;
        }
        unit_seconds += k.solve_seconds;
        if k.start + 1 == k.unit_solves {
            p.done_units += 1;
            p.solve_seconds += unit_seconds;
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_pair_starts_with_ends_and_a_killed_one_has_no_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tasks").join("task-1.jsonl");
        let start = |at| Event::Start {
            at,
            host: "node1".into(),
            pid: 7,
            job: Some("12_1".into()),
            restart: 0,
            done_units: 0,
        };
        let end = Event::End {
            at: 5.0,
            outcome: Outcome::Requeued,
            done_units: 3,
            solved_units: 3,
            message: None,
            cpu_seconds: Some(4.5),
            pid: Some(7),
            job: Some("12_1".into()),
        };
        for e in [&start(1.0), &end, &start(9.0)] {
            append(&path, e).unwrap();
        }
        // A killed write leaves a partial line: skipped.
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"event\":\"end\",\"at\":");
        std::fs::write(&path, text).unwrap();
        let a = attempts(&read(&path).unwrap());
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].outcome(), Some(Outcome::Requeued));
        assert_eq!(a[1].started(), 9.0);
        assert_eq!(a[1].end, None);
    }

    #[test]
    fn an_end_pairs_with_the_start_of_its_own_attempt() {
        let start = |at, pid| Event::Start {
            at,
            host: "node1".into(),
            pid,
            job: None,
            restart: 0,
            done_units: 0,
        };
        let end = |at, outcome, pid| Event::End {
            at,
            outcome,
            done_units: 1,
            solved_units: 1,
            message: None,
            cpu_seconds: None,
            pid,
            job: None,
        };
        // Attempt 7 runs; attempt 8 starts and fails beside it; then 7 is interrupted.
        let events = [
            start(1.0, 7),
            start(2.0, 8),
            end(3.0, Outcome::Failed, Some(8)),
            end(4.0, Outcome::Interrupted, Some(7)),
        ];
        let a = attempts(&events);
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].outcome(), Some(Outcome::Interrupted));
        assert_eq!(a[1].outcome(), Some(Outcome::Failed));
        // An end of another process pairs with nothing; one of older records (no pid) with
        // the latest open start.
        let a = attempts(&[start(1.0, 7), end(2.0, Outcome::Failed, Some(9))]);
        assert_eq!(a[0].end, None);
        let a = attempts(&[start(1.0, 7), end(2.0, Outcome::Finished, None)]);
        assert_eq!(a[0].outcome(), Some(Outcome::Finished));
    }

    #[test]
    fn progress_counts_whole_units_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        let line = |start, n, s| {
            format!(r#"{{"start":{start},"unit_solves":{n},"solve_seconds":{s},"cell":0}}"#)
        };
        let text = format!(
            "{}\n{}\n{}\n{}\n{{\"start\":1,\"unit",
            line(0, 2, 1.0),
            line(1, 2, 2.0),
            line(0, 1, 4.0),
            line(0, 2, 8.0)
        );
        std::fs::write(&path, text).unwrap();
        let p = progress(&path).unwrap();
        assert_eq!(p.done_units, 2);
        assert_eq!(p.solve_seconds, 7.0);
        assert_eq!(
            progress(&dir.path().join("missing")).unwrap(),
            Progress::default()
        );
    }
}
