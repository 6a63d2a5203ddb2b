//! The local executor: the shards of a plan as processes on this machine, `slots` at a time,
//! each `glassbox task DIR --shard I` with its output appended to `DIR/logs/task-I.log`,
//! exactly as a SLURM array task runs it; then the merge. IPOPT and CBC solve one problem at
//! a time per process (their libraries are not reentrant), so processes, not threads, are how
//! a grid on them uses the cores.
//!
//! The children run in process groups of their own, so a Ctrl-C at the terminal reaches this
//! process only; a stop request (SIGINT / SIGTERM through `stop`) is passed on to each
//! running child once, as SIGTERM (its running solves end, its finished cell-splits stay
//! on disk), no further shard is started, and the run can be resumed by running the same
//! command again.
//!
//! Depends on the plan, the task runner (for the merge) and the status (failure messages).

use super::plan::{Layout, Plan};
use super::status;
use super::task;
use crate::{GlassboxError, Result};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What the local run did.
pub struct LocalOutcome {
    /// What to print.
    pub text: String,
    /// Whether every shard finished and the merge succeeded.
    pub success: bool,
}

/// Runs `shards` of `plan`, `slots` at a time, then merges if every shard is finished.
pub fn run(
    layout: &Layout,
    plan: &Plan,
    shards: &[usize],
    slots: usize,
    stop: &Arc<AtomicBool>,
) -> Result<LocalOutcome> {
    let slots = slots.max(1);
    let mut waiting: std::collections::VecDeque<usize> = shards.iter().copied().collect();
    let mut running: Vec<(usize, Child)> = Vec::new();
    let mut ended: Vec<(usize, Option<i32>)> = Vec::new();
    let mut signalled = false;
    loop {
        let stopping = stop.load(Ordering::SeqCst);
        if stopping && !signalled {
            for (_, child) in &running {
                terminate(child);
            }
            signalled = true;
        }
        while !stopping && running.len() < slots {
            let Some(i) = waiting.pop_front() else { break };
            running.push((i, spawn(layout, plan, i)?));
        }
        let mut k = 0;
        while k < running.len() {
            let status = running[k].1.try_wait().map_err(|e| {
                GlassboxError::Config(format!("waiting for shard {}: {e}", running[k].0))
            })?;
            match status {
                Some(s) => {
                    let (i, _) = running.swap_remove(k);
                    ended.push((i, s.code()));
                    // 143 / 130: the task stopped cleanly on the SIGTERM it was passed (or
                    // ended at once on a second signal), which is no error.
                    let word = match s.code() {
                        _ if s.success() => "finished",
                        Some(143 | 130) if stopping => "stopped",
                        _ => "ended with an error",
                    };
                    eprintln!(
                        "shard {i}/{} {word} ({} of {} shards ended)",
                        plan.shards,
                        ended.len(),
                        shards.len()
                    );
                }
                None => k += 1,
            }
        }
        if running.is_empty() && (waiting.is_empty() || stopping) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }

    // This process no longer runs shards: their status is read from what they left.
    let mut ended_plan = Plan::read(layout)?;
    if let Some(last) = ended_plan
        .submissions
        .iter_mut()
        .rev()
        .find(|s| s.local_pid == Some(std::process::id()))
    {
        last.local_pid = None;
        ended_plan.write(layout)?;
    }
    let st = status::read(&layout.root)?;
    let unfinished: Vec<&status::ShardStatus> =
        st.shards.iter().filter(|s| s.done < s.of).collect();
    let mut text = String::new();
    if unfinished.is_empty() {
        let ending = task::merge(&layout.root)?;
        text.push_str(&ending.message);
        return Ok(LocalOutcome {
            text,
            success: ending.exit_code() == 0,
        });
    }
    text.push_str(&st.render(10));
    if stop.load(Ordering::SeqCst) {
        text.push_str("interrupted: every finished cell-split is on disk; run the same command again to go on\n");
    }
    Ok(LocalOutcome {
        text,
        success: false,
    })
}

/// Starts `glassbox task DIR --shard I` with its output appended to its log.
fn spawn(layout: &Layout, plan: &Plan, i: usize) -> Result<Child> {
    let log_path = layout.log(i);
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|e| GlassboxError::io(&log_path, e))?;
    let err = log
        .try_clone()
        .map_err(|e| GlassboxError::io(&log_path, e))?;
    Command::new(&plan.binary)
        .arg("task")
        .arg(&layout.root)
        .arg("--shard")
        .arg(i.to_string())
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        // Its own process group: a Ctrl-C reaches this process, which passes it on once.
        .process_group(0)
        .spawn()
        .map_err(|e| {
            GlassboxError::Config(format!(
                "starting {} for shard {i}: {e}",
                plan.binary.display()
            ))
        })
}

/// Sends SIGTERM to `child` (it stops cleanly; see [`super::task`]).
fn terminate(child: &Child) {
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) with a pid of our own child and a valid signal; no memory involved.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
}
