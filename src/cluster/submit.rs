//! `glassbox run CONFIG --out DIR --executor slurm|local`: plans a sharded run in DIR (or
//! picks up the one there), then hands the shards that are neither finished nor already
//! queued to SLURM (a job array and a merge job after it) or to local processes.
//!
//! Running the same command again is how a run goes on after a failure, a cancellation or a
//! change of executor: the plan in DIR fixes the shards (their number and their cell-splits),
//! the finished cell-splits on disk are kept, and only what is missing is submitted. Once
//! every shard is finished, the command merges them (if the merge job has not).
//! `--force` starts over (refused while tasks of the run are queued or running); every check
//! that can refuse the command is made before it removes anything.
//!
//! Depends on the plan, sizing, scripts, SLURM clients, local executor and status of this
//! module, and on the grid ([`Experiment`]).

use super::config::ClusterConfig;
use super::plan::{self, now, Executor, Layout, Plan, Submission};
use super::status::{self, ShardState};
use super::{local, sbatch, sizing, slurm, task};
use crate::experiment::grid::Experiment;
use crate::registry::Registry;
use crate::{GlassboxError, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// What the user asked for.
pub struct Request {
    /// The config file.
    pub config: PathBuf,
    /// The run's folder.
    pub out: PathBuf,
    /// Where the shards run.
    pub executor: Executor,
    /// `--shards`.
    pub shards: Option<usize>,
    /// `--jobs`: local processes at once (local executor).
    pub jobs: Option<usize>,
    /// `--cluster KEY=VALUE` overrides of `[cluster]`.
    pub overrides: Vec<String>,
    /// `--force`: start over.
    pub force: bool,
    /// Set by a signal handler (local executor): stop the processes cleanly.
    pub stop: Arc<AtomicBool>,
    /// The formulations and backends the config is read with (the tasks run this program's
    /// binary, or `[cluster] binary`, which must know the same ones).
    pub registry: Arc<Registry>,
}

/// What the command did, to print.
pub struct Report {
    /// The text for the user.
    pub text: String,
    /// Whether the run is complete and merged (local executor: whether it succeeded).
    pub success: bool,
}

/// Plans or resumes the run, then submits or runs what is missing (see the module comment).
pub fn run(request: &Request) -> Result<Report> {
    let exp = Experiment::load_with(&request.config, request.registry.clone())?;
    let cluster = ClusterConfig::load(&request.config, &request.overrides)?;
    let out = std::path::absolute(&request.out).map_err(|e| GlassboxError::io(&request.out, e))?;
    let layout = Layout::new(&out);
    if request.executor == Executor::Slurm {
        if request.jobs.is_some() {
            return Err(GlassboxError::Config(
                "--jobs counts local processes (--executor local); a SLURM task's CPUs are \
                 [cluster] cpus (--cluster cpus=N)"
                    .into(),
            ));
        }
        sbatch::check_sbatch_path(&out)?;
    }
    // Every check that can refuse comes before --force removes anything: a refused command
    // leaves the folder as it was.
    if request.force {
        check_idle(&layout)?;
    }
    let (mut plan, mut text) = plan_or_resume(request, &exp, &cluster, &layout)?;
    if request.force {
        remove_run_files(&layout.root)?;
    }
    plan.write(&layout)?;
    layout.create()?;

    let status = status::read(&layout.root)?;
    let to_run: Vec<usize> = status
        .shards
        .iter()
        .filter(|s| {
            !matches!(
                s.state,
                ShardState::Finished | ShardState::Running | ShardState::Pending(_)
            )
        })
        .map(|s| s.shard)
        .collect();
    let busy: Vec<usize> = status
        .shards
        .iter()
        .filter(|s| matches!(s.state, ShardState::Running | ShardState::Pending(_)))
        .map(|s| s.shard)
        .collect();
    if to_run.is_empty() && busy.is_empty() {
        if status.merged {
            text.push_str(&format!(
                "every shard is finished and merged: {}\n",
                out.join(crate::experiment::store::RESULTS).display()
            ));
            return Ok(Report {
                text,
                success: true,
            });
        }
        let ending = task::merge(&out)?;
        text.push_str(&ending.message);
        return Ok(Report {
            success: ending.exit_code() == 0,
            text,
        });
    }
    if to_run.is_empty() {
        text.push_str(&format!(
            "shards {} are queued or running already: nothing to submit; follow them with \
             `glassbox status {}`\n",
            slurm::array_list(&busy),
            out.display()
        ));
        return Ok(Report {
            text,
            success: true,
        });
    }
    if !busy.is_empty() {
        text.push_str(&format!(
            "shards {} are queued or running already: left as they are\n",
            slurm::array_list(&busy)
        ));
    }
    match request.executor {
        Executor::Slurm => {
            let stop_before = cluster.stop_before_limit(longest_solve(&exp));
            submit_slurm(
                &cluster,
                &layout,
                &mut plan,
                &to_run,
                stop_before,
                &mut text,
            )?;
            Ok(Report {
                text,
                success: true,
            })
        }
        Executor::Local => {
            let slots = request.jobs.unwrap_or(1);
            plan.submissions.push(Submission {
                at: now(),
                shards: to_run.clone(),
                array_job: None,
                merge_job: None,
                local_pid: Some(std::process::id()),
                slots,
            });
            plan.write(&layout)?;
            let outcome = local::run(&layout, &plan, &to_run, slots, &request.stop)?;
            text.push_str(&outcome.text);
            Ok(Report {
                text,
                success: outcome.success,
            })
        }
    }
}

/// The longest solver time limit of the grid's cells (none without one).
fn longest_solve(exp: &Experiment) -> Option<f64> {
    exp.cells
        .iter()
        .filter(|c| c.config.formulation.uses_solver())
        .filter_map(|c| c.config.solver.options.time_limit)
        .fold(None, |m: Option<f64>, t| Some(m.map_or(t, |m| m.max(t))))
}

/// The plan in DIR, checked against the request, or a new one (`--force`: always a new one);
/// and what to tell the user about it. Writes nothing: the caller writes the plan once
/// `--force` has removed the earlier run.
fn plan_or_resume(
    request: &Request,
    exp: &Experiment,
    cluster: &ClusterConfig,
    layout: &Layout,
) -> Result<(Plan, String)> {
    let out = &layout.root;
    // [cluster] binary is the one the nodes run; local processes run this one.
    let binary = match (&cluster.binary, request.executor) {
        (Some(b), Executor::Slurm) => {
            std::path::absolute(b).map_err(|e| GlassboxError::io(b, e))?
        }
        _ => std::env::current_exe()
            .map_err(|e| GlassboxError::Config(format!("finding the glassbox binary: {e}")))?,
    };
    if request.executor == Executor::Slurm && cluster.binary.is_some() && !binary.is_file() {
        // A binary only the nodes see is fine; say so rather than refuse.
        eprintln!(
            "note: [cluster] binary {} is not a file here: it must be one on the nodes",
            binary.display()
        );
    }
    let threads = match request.executor {
        Executor::Slurm => cluster.cpus.unwrap_or(1),
        Executor::Local => 1,
    };
    if layout.plan().exists() && !request.force {
        let mut plan = Plan::read(layout)?;
        if plan.config_fingerprint != exp.fingerprint {
            return Err(GlassboxError::Config(format!(
                "{} holds a sharded run of another config ({}, fingerprint {}; this config's is \
                 {}): choose another --out folder, or pass --force to start over",
                out.display(),
                plan.config.display(),
                plan.config_fingerprint,
                exp.fingerprint
            )));
        }
        // Only --shards is checked: [cluster] shards sizes a new plan, and the plan on disk
        // wins over it (the resume command `glassbox status` prints gives no --shards).
        if let Some(n) = request.shards.filter(|&n| n != plan.shards) {
            return Err(GlassboxError::Config(format!(
                "{} was planned in {} shards, whose results are there: leave --shards out (or \
                 give {}) to go on, or pass --force to start over in {n} shards",
                out.display(),
                plan.shards,
                plan.shards,
            )));
        }
        plan.executor = request.executor;
        plan.threads = threads;
        plan.binary = binary;
        if request.executor == Executor::Slurm {
            slurm::check_clients()?;
        }
        let mut text = format!(
            "{}: going on with its plan: {} shards of {}\n",
            out.display(),
            plan.shards,
            plan.config.display()
        );
        if let Some(n) = cluster
            .shards
            .filter(|&n| n != plan.shards && request.shards.is_none())
        {
            text.push_str(&format!(
                "note: [cluster] shards = {n} applies to a new plan only: pass --force to start \
                 over in {n} shards\n"
            ));
        }
        return Ok((plan, text));
    }
    if !request.force
        && (out.join(crate::experiment::store::MANIFEST).exists()
            || out.join(crate::experiment::store::RESULTS).exists())
    {
        return Err(GlassboxError::Config(format!(
            "{} holds the results of a run that was not sharded by an executor: choose another \
             --out folder, or pass --force to replace them",
            out.display()
        )));
    }
    let chains = plan::chain_lengths(exp)?;
    let spu = cluster
        .seconds_per_cell
        .map(|s| (s, "[cluster] seconds_per_cell"));
    let task_seconds = cluster
        .time_seconds()
        .map(|t| t.saturating_sub(cluster.stop_before_limit(longest_solve(exp))));
    let shards = match (request.shards.or(cluster.shards), request.executor) {
        (Some(n), _) => n,
        (None, Executor::Local) => request.jobs.unwrap_or(1).min(chains.len()).max(1),
        (None, Executor::Slurm) => match (spu, task_seconds) {
            (Some((s, _)), Some(t)) => {
                sizing::fewest_shards(&chains, s, t as f64).unwrap_or(chains.len())
            }
            _ => {
                return Err(GlassboxError::Config(format!(
                    "how many shards? give --shards N (at most {}, one per chain of cells), or \
                     [cluster] seconds_per_cell and time to size them (glassbox status \
                     measures seconds per cell-split on a pilot run)",
                    chains.len()
                )))
            }
        },
    };
    let plan = plan::new_plan(exp, request.executor, shards, threads, binary, &chains)?;
    // Nothing is written for a submission that cannot be made.
    if request.executor == Executor::Slurm {
        slurm::check_clients()?;
    }
    let text = format!(
        "{}: {}\n",
        out.display(),
        sizing::describe(
            &plan.shard_units,
            spu,
            task_seconds.filter(|_| request.executor == Executor::Slurm)
        )
    );
    Ok((plan, text))
}

/// `--force`: refused while tasks of the run in DIR are queued or running (checked before
/// anything is removed, as every other check).
fn check_idle(layout: &Layout) -> Result<()> {
    if !layout.plan().exists() {
        return Ok(());
    }
    let status = status::read(&layout.root)?;
    let busy: Vec<usize> = status
        .shards
        .iter()
        .filter(|s| matches!(s.state, ShardState::Running | ShardState::Pending(_)))
        .map(|s| s.shard)
        .collect();
    if !busy.is_empty() {
        let jobs: Vec<String> = status
            .plan
            .submissions
            .iter()
            .flat_map(|s| s.array_job.iter().chain(s.merge_job.iter()).cloned())
            .collect();
        return Err(GlassboxError::Config(format!(
            "--force: shards {} of {} are queued or running: stop them first ({}), then start over",
            slurm::array_list(&busy),
            layout.root.display(),
            if jobs.is_empty() {
                "end the local executor".to_string()
            } else {
                format!("scancel {}", jobs.join(" "))
            }
        )));
    }
    Ok(())
}

/// Removes the files and folders a sharded run writes in `dir`.
fn remove_run_files(dir: &Path) -> Result<()> {
    for name in ["shards", "logs", "tasks", "slurm", "models"] {
        let p = dir.join(name);
        if p.is_dir() {
            std::fs::remove_dir_all(&p).map_err(|e| GlassboxError::io(&p, e))?;
        }
    }
    for name in [
        "cluster.json",
        "results.jsonl",
        "experiment.json",
        "nested.json",
    ] {
        let p = dir.join(name);
        if p.exists() {
            std::fs::remove_file(&p).map_err(|e| GlassboxError::io(&p, e))?;
        }
    }
    Ok(())
}

/// Writes the scripts, submits the array of `shards` and the merge job after it, records them.
fn submit_slurm(
    cluster: &ClusterConfig,
    layout: &Layout,
    plan: &mut Plan,
    shards: &[usize],
    stop_before_limit: u64,
    text: &mut String,
) -> Result<()> {
    let input = sbatch::ScriptInput {
        layout,
        config: &plan.config,
        binary: &plan.binary,
        shards: plan.shards,
        stop_before_limit,
    };
    let array = sbatch::array_script(cluster, &input)?;
    let merge = sbatch::merge_script(cluster, &input)?;
    let dir = layout.array_script();
    if let Some(d) = dir.parent() {
        std::fs::create_dir_all(d).map_err(|e| GlassboxError::io(d, e))?;
    }
    crate::model::write_atomically(&layout.array_script(), array.as_bytes())?;
    crate::model::write_atomically(&layout.merge_script(), merge.as_bytes())?;
    let mut range = slurm::array_list(shards);
    if let Some(n) = cluster.max_running {
        range.push_str(&format!("%{n}"));
    }
    // Array jobs of earlier submissions still queued (a requeued task): the merge waits for
    // them too.
    let earlier: Vec<String> = plan
        .submissions
        .iter()
        .filter_map(|s| s.array_job.clone())
        .collect();
    let mut still_queued: Vec<String> = slurm::queue(&earlier)?
        .into_iter()
        .map(|q| q.array_job)
        .filter(|j| earlier.contains(j))
        .collect();
    still_queued.sort();
    still_queued.dedup();
    // Taken before sbatch: a task may start (and write its log) before sbatch answers, and
    // `glassbox status` compares the logs' times with it.
    let at = now();
    let array_job = slurm::sbatch(&[format!("--array={range}")], &layout.array_script())?;
    plan.submissions.push(Submission {
        at,
        shards: shards.to_vec(),
        array_job: Some(array_job.clone()),
        merge_job: None,
        local_pid: None,
        slots: cluster
            .max_running
            .unwrap_or(shards.len())
            .min(shards.len()),
    });
    // Recorded before the merge job is submitted: the array runs whatever happens next.
    plan.write(layout)?;
    let mut after = vec![array_job.clone()];
    after.extend(still_queued.iter().cloned());
    let merge_job = slurm::sbatch(
        &[format!("--dependency=afterany:{}", after.join(":"))],
        &layout.merge_script(),
    )
    .map_err(|e| {
        GlassboxError::Config(format!(
            "job array {array_job} is submitted, but its merge job is not: {e}; once the array \
             has ended, running the same command again merges the shards"
        ))
    })?;
    if let Some(last) = plan.submissions.last_mut() {
        last.merge_job = Some(merge_job.clone());
    }
    plan.write(layout)?;
    text.push_str(&format!(
        "submitted job array {array_job} (shards {range} of {}) and merge job {merge_job} (after \
         job {})\nscripts: {}, {}\nfollow: glassbox status {}   (or: squeue -j {array_job},{merge_job}; \
         logs in {})\nresults, once merged: {}\n",
        plan.shards,
        after.join(", "),
        layout.array_script().display(),
        layout.merge_script().display(),
        layout.root.display(),
        layout.root.join("logs").display(),
        layout.root.join(crate::experiment::store::RESULTS).display()
    ));
    Ok(())
}
