//! SLURM's command-line clients, as glassbox calls them: `sbatch` to submit (its
//! `--parsable` answer read into a job id), `squeue` to see which tasks are pending or
//! running, `scontrol requeue` for a task that requeues itself. Clients find the cluster the
//! usual way (`slurm.conf`, or `SLURM_CONF` in the environment).
//!
//! Depends on nothing else of glassbox but its error type.

use crate::{GlassboxError, Result};
use std::path::Path;
use std::process::Command;

/// Runs a SLURM client; its stdout, or an error with its stderr.
fn client(program: &str, args: &[String]) -> Result<String> {
    let output = Command::new(program).args(args).output().map_err(|e| {
        GlassboxError::Config(if e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "`{program}` is not on PATH: the SLURM executor runs where SLURM's clients are \
                 (a login node); without SLURM use --executor local"
            )
        } else {
            format!("running `{program}`: {e}")
        })
    })?;
    if !output.status.success() {
        return Err(GlassboxError::Config(format!(
            "`{program} {}` failed ({}): {}",
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Checks that SLURM's clients are on PATH, before anything is written for a submission.
pub fn check_clients() -> Result<()> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for program in ["sbatch", "squeue"] {
        if !std::env::split_paths(&path).any(|d| d.join(program).is_file()) {
            return Err(GlassboxError::Config(format!(
                "`{program}` is not on PATH: the SLURM executor runs where SLURM's clients are \
                 (a login node); without SLURM use --executor local"
            )));
        }
    }
    Ok(())
}

/// Submits `script` with `options` (`sbatch --parsable OPTIONS SCRIPT`); the job id.
pub fn sbatch(options: &[String], script: &Path) -> Result<String> {
    let mut args = vec!["--parsable".to_string()];
    args.extend(options.iter().cloned());
    args.push(script.display().to_string());
    parse_job_id(&client("sbatch", &args)?)
}

/// The job id of `sbatch --parsable`'s answer (`ID` or `ID;CLUSTER`; warnings may come
/// before it).
pub fn parse_job_id(stdout: &str) -> Result<String> {
    let last = stdout.lines().rev().find(|l| !l.trim().is_empty());
    let id = last
        .map(|l| l.trim().split(';').next().unwrap_or("").trim())
        .filter(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()));
    id.map(str::to_string).ok_or_else(|| {
        GlassboxError::Config(format!(
            "sbatch answered without a job id: '{}'",
            stdout.trim()
        ))
    })
}

/// Requeues job `job` (`scontrol requeue JOB`).
pub fn requeue(job: &str) -> Result<()> {
    client("scontrol", &["requeue".to_string(), job.to_string()]).map(|_| ())
}

/// One job (or array task) in SLURM's queue.
#[derive(Clone, Debug, PartialEq)]
pub struct Queued {
    /// The job id SLURM prints (`123_4` for task 4 of array 123).
    pub id: String,
    /// The array job's id (the job's own for a job that is no array).
    pub array_job: String,
    /// The array task id.
    pub task: Option<usize>,
    /// PENDING, RUNNING, REQUEUED, COMPLETING, ...
    pub state: String,
    /// Why it waits (SLURM's reason: Resources, Priority, Dependency, BeginTime, ...).
    pub reason: String,
}

/// The jobs `jobs` (array jobs listed task by task) that are still in SLURM's queue (pending,
/// running, completing); none for jobs SLURM no longer knows.
pub fn queue(jobs: &[String]) -> Result<Vec<Queued>> {
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    let args = vec![
        "--noheader".to_string(),
        "--array".to_string(),
        format!("--jobs={}", jobs.join(",")),
        "--format=%i|%F|%K|%T|%r".to_string(),
    ];
    match client("squeue", &args) {
        Ok(text) => Ok(parse_queue(&text)),
        // Every job listed has left the queue (and SLURM's memory).
        Err(GlassboxError::Config(m)) if m.contains("Invalid job id") => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// Reads `squeue --format=%i|%F|%K|%T|%r` lines.
pub fn parse_queue(text: &str) -> Vec<Queued> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.trim().split('|').collect();
            (f.len() == 5).then(|| Queued {
                id: f[0].to_string(),
                array_job: f[1].to_string(),
                task: f[2].parse().ok(),
                state: f[3].to_string(),
                reason: f[4].to_string(),
            })
        })
        .collect()
}

/// Shards as an `--array` list: `1-4`, `2,5-7`.
pub fn array_list(shards: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < shards.len() {
        let mut j = i;
        while j + 1 < shards.len() && shards[j + 1] == shards[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            shards[i].to_string()
        } else {
            format!("{}-{}", shards[i], shards[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_ids_are_read_from_sbatch_answers() {
        assert_eq!(parse_job_id("123\n").unwrap(), "123");
        assert_eq!(parse_job_id("4567;cluster2\n").unwrap(), "4567");
        assert_eq!(parse_job_id("sbatch: warning: a note\n89\n").unwrap(), "89");
        assert!(parse_job_id("sbatch: error: no\n").is_err());
        assert!(parse_job_id("").is_err());
    }

    #[test]
    fn queue_lines_and_array_lists() {
        let q = parse_queue("12_3|12|3|RUNNING|None\n13|13|N/A|PENDING|Dependency\nbad\n");
        assert_eq!(q.len(), 2);
        assert_eq!(q[0].task, Some(3));
        assert_eq!(q[1].task, None);
        assert_eq!(q[1].reason, "Dependency");
        assert_eq!(array_list(&[1, 2, 3, 4]), "1-4");
        assert_eq!(array_list(&[2, 5, 6, 7, 9]), "2,5-7,9");
    }
}
