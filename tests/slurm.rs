//! The SLURM executor on a real SLURM: a one-node cluster started on this machine by
//! `scripts/slurm-cluster.sh` (munged, slurmctld and slurmd in a temporary folder, stopped
//! when this test binary ends), real `sbatch` / `squeue` / `scancel` / `scontrol`, and the real
//! glassbox binary in the jobs.
//!
//! - A grid of 2 data sets x 2 formulations (S-ORCT with IPOPT, CART) x 5 cells x 2 splits as a
//!   job array of 4 tasks and a merge job: the merged results equal an unsharded run's apart
//!   from the timings, and `glassbox status` says every shard is finished and merged.
//! - A slower grid in 2 shards: task 1 cancelled mid-run (`scancel`: SIGTERM), task 2 told
//!   its time limit is near (SIGUSR1, as `--signal=B:USR1@...` sends it) so that it requeues
//!   itself; running the same `glassbox run --executor slurm` again submits task 1 only (task
//!   2 is queued). In the end every cell-split is there once (no fingerprint twice), the lines
//!   written before the interruptions are kept as they were, and the attempts are recorded.
//! - A task killed by SIGKILL (no clean stop, no record of its end) is reported as killed;
//!   resubmitted, it resumes and the results are complete, each solve once.
//! - A task that fails (its shard's model folder is a file, so its first cell-split errors):
//!   `glassbox status` reports it with its error and the end of its log, the other tasks
//!   finish, the merge job reports the unfinished shard; once the cause is removed, the same
//!   command again completes the run.
//!
//! Where SLURM cannot be started (not root, no package repository, no munge user), every test
//! here prints why to stderr and passes without running, except in CI (`CI=true`, as CI
//! services set it) or with GLASSBOX_REQUIRE_SLURM=1: there it fails with the reason, so that
//! CI cannot pass without having run them.

use glassbox::cluster::plan::{Layout, Plan};
use glassbox::cluster::records::{self, Event, Outcome};
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

#[path = "common/sharded_runs.rs"]
mod sharded_runs;
use sharded_runs::{lines, slow_grid, small_grid, states, untimed};

/// The cluster of this test binary, or why it could not be started.
struct Cluster {
    conf: PathBuf,
}

static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();
/// The tests take turns: the node has 2 CPUs, and the interruption test times its signals.
static SERIAL: Mutex<()> = Mutex::new(());

fn start_cluster() -> Result<Cluster, String> {
    let dir = std::env::temp_dir().join(format!("glassbox-slurm-{}", std::process::id()));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-cluster.sh");
    let output = Command::new(&script)
        .arg("start")
        .arg(&dir)
        .arg("--watch")
        .arg(std::process::id().to_string())
        .output()
        .map_err(|e| format!("running {}: {e}", script.display()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("scripts/slurm-cluster.sh start failed")
            .to_string());
    }
    Ok(Cluster {
        conf: dir.join("slurm.conf"),
    })
}

/// Whether a cluster that cannot start fails the tests: in CI, or when asked.
fn slurm_required() -> bool {
    let set = |k: &str| std::env::var(k).is_ok_and(|v| v == "1" || v == "true");
    set("CI") || set("GLASSBOX_REQUIRE_SLURM")
}

/// The cluster, or `None` after saying why there is none (on the real stderr: the test
/// harness shows a passing test's printed output only with --nocapture).
fn cluster(test: &str) -> Option<&'static Cluster> {
    match CLUSTER.get_or_init(start_cluster) {
        Ok(c) => Some(c),
        Err(reason) => {
            if slurm_required() {
                panic!(
                    "SLURM could not be started, and this run requires it (CI=true or \
                     GLASSBOX_REQUIRE_SLURM=1): {reason}"
                );
            }
            let _ = writeln!(
                std::io::stderr(),
                "tests/slurm.rs {test}: skipped, SLURM could not be started: {reason}"
            );
            None
        }
    }
}

impl Cluster {
    /// A SLURM client or the glassbox binary, pointed at this cluster.
    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf).env("CI", "true");
        c
    }

    fn glassbox(&self, args: &[&str]) -> Output {
        self.command(env!("CARGO_BIN_EXE_glassbox"))
            .args(args)
            .output()
            .unwrap()
    }

    /// The jobs of `ids` still in the queue (`squeue`), one per array task. A failed `squeue`
    /// (slurmctld busy on a loaded machine: "Socket timed out") is asked again, not read as an
    /// empty queue, which could end a wait before the jobs have.
    fn queued(&self, ids: &[String]) -> Vec<String> {
        let mut tries = 0;
        loop {
            let out = self
                .command("squeue")
                .args(["--noheader", "--array", "--format=%i %T"])
                .arg(format!("--jobs={}", ids.join(",")))
                .output()
                .unwrap();
            if out.status.success() {
                return String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .map(str::to_string)
                    .collect();
            }
            // Every job listed has left SLURM's memory (as src/cluster/slurm.rs reads it).
            if String::from_utf8_lossy(&out.stderr).contains("Invalid job id") {
                return Vec::new();
            }
            tries += 1;
            assert!(
                tries < 20,
                "squeue failed {tries} times: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// Waits until no job of the run in `dir` is queued.
    fn wait_for_jobs(&self, dir: &Path, limit: Duration) {
        let started = Instant::now();
        loop {
            let ids = job_ids(dir);
            let q = self.queued(&ids);
            if q.is_empty() {
                return;
            }
            assert!(
                started.elapsed() < limit,
                "jobs still queued after {limit:?}: {q:?}\n{}",
                self.status(dir)
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn status(&self, dir: &Path) -> String {
        let out = self.glassbox(&["status", dir.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Submits (`glassbox run CONFIG --out DIR --executor slurm ARGS`); its stdout.
    fn submit(&self, config: &Path, dir: &Path, args: &[&str]) -> String {
        let mut all = vec![
            "run",
            config.to_str().unwrap(),
            "--out",
            dir.to_str().unwrap(),
            "--executor",
            "slurm",
        ];
        all.extend_from_slice(args);
        let out = self.glassbox(&all);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }
}

/// The array and merge job ids of every submission of the run in `dir`.
fn job_ids(dir: &Path) -> Vec<String> {
    Plan::read(&Layout::new(dir))
        .unwrap()
        .submissions
        .iter()
        .flat_map(|s| s.array_job.iter().chain(s.merge_job.iter()).cloned())
        .collect()
}

#[test]
fn a_grid_as_a_job_array_merges_to_the_unsharded_run() {
    let Some(cluster) = cluster("a_grid_as_a_job_array_merges_to_the_unsharded_run") else {
        return;
    };
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let config = small_grid(tmp.path(), "-1000.0, -4.0, -2.0", "");
    let dir = tmp.path().join("array");
    let stdout = cluster.submit(&config, &dir, &["--shards", "4"]);
    assert!(
        stdout.contains("4 shards of 5 cell-splits (20 in all)")
            && stdout.contains("submitted job array")
            && stdout.contains("merge job"),
        "{stdout}"
    );
    let script = std::fs::read_to_string(dir.join("slurm/array.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --signal=B:USR1@90"), "{script}");
    cluster.wait_for_jobs(&dir, Duration::from_secs(300));

    let status = cluster.status(&dir);
    assert_eq!(states(&status), vec!["finished"; 4], "{status}");
    assert!(
        status.contains("all shards: 20/20 cell-splits (100.0%)"),
        "{status}"
    );
    assert!(status.contains("merge: done"), "{status}");
    assert!(
        std::fs::read_to_string(dir.join("logs/merge.log"))
            .unwrap()
            .contains("merged 4 shards: 20 cell-splits"),
        "the merge job's log"
    );

    // The same config in one process, unsharded.
    let whole = tmp.path().join("whole");
    let out = cluster.glassbox(&[
        "run",
        config.to_str().unwrap(),
        "--out",
        whole.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged: Vec<Value> = lines(&dir.join("results.jsonl"))
        .into_iter()
        .map(untimed)
        .collect();
    let unsharded: Vec<Value> = lines(&whole.join("results.jsonl"))
        .into_iter()
        .map(untimed)
        .collect();
    // S-ORCT: 2 data sets x 3 cells x 2 splits x 2 starts; CART: 2 x 2 x 2 x 1 fit.
    assert_eq!(merged.len(), 24 + 8);
    assert_eq!(merged, unsharded);
}

/// Waits until shard `i` of the run in `dir` has at least one cell-split on disk (and says
/// how many it has), failing if it finishes first.
fn wait_mid_run(dir: &Path, i: usize, of: usize) -> usize {
    let results = Layout::new(dir).shard(i).join("results.jsonl");
    let started = Instant::now();
    loop {
        let done = records::progress(&results).unwrap().done_units;
        assert!(
            done < of,
            "shard {i} finished before it could be interrupted"
        );
        if done >= 1 {
            return done;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "shard {i} made no progress"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until `dir`'s shard `i` has recorded an attempt's end; its outcome.
fn wait_for_end(dir: &Path, i: usize, attempt: usize) -> Outcome {
    let started = Instant::now();
    loop {
        let a = records::attempts(&records::read(&Layout::new(dir).records(i)).unwrap());
        if let Some(o) = a.get(attempt).and_then(|a| a.outcome()) {
            return o;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no end recorded: {a:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_cancelled_task_resubmitted_and_a_task_out_of_time_requeued_lose_and_repeat_nothing() {
    let Some(cluster) = cluster("a_cancelled_task_resubmitted_and_a_task_out_of_time_requeued")
    else {
        return;
    };
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let config = slow_grid(tmp.path());
    let dir = tmp.path().join("run");
    cluster.submit(&config, &dir, &["--shards", "2"]);
    let array = Plan::read(&Layout::new(&dir)).unwrap().submissions[0]
        .array_job
        .clone()
        .unwrap();

    // Task 1: cancelled (SIGTERM) mid-run.
    let before_1 = wait_mid_run(&dir, 1, 4);
    let out = cluster
        .command("scancel")
        .arg(format!("{array}_1"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(wait_for_end(&dir, 1, 0), Outcome::Interrupted);
    // Task 2: SIGUSR1 to its batch shell (glassbox), as SLURM sends it before the time limit.
    let before_2 = wait_mid_run(&dir, 2, 4);
    let out = cluster
        .command("scancel")
        .args(["--batch", "--signal=USR1"])
        .arg(format!("{array}_2"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(wait_for_end(&dir, 2, 0), Outcome::Requeued);
    let kept: Vec<Value> = [1, 2]
        .iter()
        .flat_map(|&i| lines(&Layout::new(&dir).shard(i).join("results.jsonl")))
        .collect();
    assert!(kept.len() >= (before_1 + before_2) * 3);

    // The requeued task waits (SLURM holds a requeued job a while); the cancelled one is
    // stopped, and the same command submits it again, and only it.
    let status = cluster.status(&dir);
    assert!(status.contains("stopped"), "{status}");
    let queue = cluster.queued(std::slice::from_ref(&array));
    assert!(
        queue.iter().any(|l| l.starts_with(&format!("{array}_2 "))),
        "task 2 is not requeued: {queue:?}"
    );
    let stdout = cluster.submit(&config, &dir, &[]);
    assert!(
        stdout.contains("shards 2 are queued or running already")
            && stdout.contains("(shards 1 of 2)"),
        "{stdout}"
    );
    // Release the requeued task before SLURM's hold ends, but not within the second of its
    // requeue: slurmd revokes a killed job's credential with a time in whole seconds, and
    // refuses ("Job N already killed, do not launch batch job") a relaunch of the same job id
    // whose credential is from that second; the task then fails for good, unstarted. SLURM's
    // own hold on a requeued job is what avoids this on a cluster.
    let out = cluster
        .command("scontrol")
        .args(["update", &format!("JobId={array}_2"), "StartTime=now+2"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    cluster.wait_for_jobs(&dir, Duration::from_secs(300));

    let status = cluster.status(&dir);
    assert!(status.contains("merge: done"), "{status}");
    let all = lines(&dir.join("results.jsonl"));
    assert_eq!(all.len(), 8 * 3);
    let fingerprints: BTreeSet<&str> = all
        .iter()
        .map(|l| l["fingerprint"].as_str().unwrap())
        .collect();
    assert_eq!(
        fingerprints.len(),
        all.len(),
        "a solve is in the results twice"
    );
    let units: BTreeSet<(u64, u64)> = all
        .iter()
        .map(|l| (l["cell"].as_u64().unwrap(), l["split"].as_u64().unwrap()))
        .collect();
    assert_eq!(units.len(), 8);
    // What the interrupted attempts wrote is kept as written: not solved again.
    for l in &kept {
        assert!(all.contains(l), "a line of the first attempts changed: {l}");
    }
    // Each task's attempts: shard 1 interrupted then finished (resubmitted), shard 2
    // requeued (SLURM_RESTART_COUNT 1 the second time) then finished.
    for (i, first) in [(1, Outcome::Interrupted), (2, Outcome::Requeued)] {
        let a = records::attempts(&records::read(&Layout::new(&dir).records(i)).unwrap());
        assert_eq!(a.len(), 2, "shard {i}: {a:?}");
        assert_eq!(a[0].outcome(), Some(first));
        assert_eq!(a[1].outcome(), Some(Outcome::Finished));
        if i == 2 {
            assert!(
                matches!(a[1].start, Event::Start { restart: 1, .. }),
                "{a:?}"
            );
        }
    }
}

#[test]
fn a_failing_task_is_reported_with_its_log_and_the_others_finish() {
    let Some(cluster) = cluster("a_failing_task_is_reported_with_its_log_and_the_others_finish")
    else {
        return;
    };
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let config = small_grid(tmp.path(), "-1000.0, -4.0, -2.0", "save_models = true");
    let dir = tmp.path().join("run");
    // Shard 2's model folder is a file: its first cell-split cannot save its model.
    let blocker = Layout::new(&dir).shard(2).join("models");
    std::fs::create_dir_all(blocker.parent().unwrap()).unwrap();
    std::fs::write(&blocker, "not a folder").unwrap();
    cluster.submit(&config, &dir, &["--shards", "4"]);
    cluster.wait_for_jobs(&dir, Duration::from_secs(300));

    let status = cluster.status(&dir);
    assert_eq!(
        states(&status),
        vec!["finished", "FAILED", "finished", "finished"],
        "{status}"
    );
    assert!(status.contains("shard 2 failed: "), "{status}");
    assert!(
        status.contains("models"),
        "the error names the model path: {status}"
    );
    // The end of its log, with the task's own last line.
    assert!(status.contains("logs/task-2.log, last lines:"), "{status}");
    assert!(
        status.contains("glassbox task: shard 2/4 failed"),
        "{status}"
    );
    assert!(
        status.contains("merge: failed: ")
            && status.contains("not every shard is finished: shard 2 (0 of 5)"),
        "{status}"
    );
    assert!(status.contains("to go on: glassbox run"), "{status}");

    // The cause removed, the same command finishes the run.
    std::fs::remove_file(&blocker).unwrap();
    let stdout = cluster.submit(&config, &dir, &[]);
    assert!(stdout.contains("(shards 2 of 4)"), "{stdout}");
    cluster.wait_for_jobs(&dir, Duration::from_secs(300));
    let status = cluster.status(&dir);
    assert!(status.contains("merge: done"), "{status}");
    assert_eq!(lines(&dir.join("results.jsonl")).len(), 32);
}

#[test]
fn a_task_killed_without_warning_is_reported_and_its_resubmission_resumes() {
    let Some(cluster) =
        cluster("a_task_killed_without_warning_is_reported_and_its_resubmission_resumes")
    else {
        return;
    };
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let config = slow_grid(tmp.path());
    let dir = tmp.path().join("run");
    cluster.submit(&config, &dir, &["--shards", "2"]);
    // SIGKILL to the task's glassbox, as the out-of-memory killer deals it (`scancel
    // --signal=KILL` would end the job SLURM's way, SIGTERM first): no clean stop, no record
    // of the end, possibly a unit half-written.
    let before = wait_mid_run(&dir, 1, 4);
    let attempts = records::attempts(&records::read(&Layout::new(&dir).records(1)).unwrap());
    let Event::Start { pid, .. } = attempts[0].start else {
        panic!("{attempts:?}")
    };
    let out = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    cluster.wait_for_jobs(&dir, Duration::from_secs(300));
    let status = cluster.status(&dir);
    assert_eq!(states(&status), vec!["FAILED", "finished"], "{status}");
    assert!(
        status.contains("shard 1 failed: its last attempt ended without a record: killed"),
        "{status}"
    );
    let kept = lines(&Layout::new(&dir).shard(1).join("results.jsonl"));
    assert!(kept.len() >= before * 3);

    let stdout = cluster.submit(&config, &dir, &[]);
    assert!(stdout.contains("(shards 1 of 2)"), "{stdout}");
    cluster.wait_for_jobs(&dir, Duration::from_secs(300));
    let status = cluster.status(&dir);
    assert!(status.contains("merge: done"), "{status}");
    let all = lines(&dir.join("results.jsonl"));
    assert_eq!(all.len(), 8 * 3);
    let fingerprints: BTreeSet<&str> = all
        .iter()
        .map(|l| l["fingerprint"].as_str().unwrap())
        .collect();
    assert_eq!(
        fingerprints.len(),
        all.len(),
        "a solve is in the results twice"
    );
    // Whole units written before the kill are kept as written.
    let whole = kept.len() - kept.len() % 3;
    for l in &kept[..whole] {
        assert!(
            all.contains(l),
            "a line written before the kill changed: {l}"
        );
    }
}

#[test]
fn a_task_cancelled_while_pending_and_jobs_that_die_in_their_setup_are_told_apart() {
    let Some(cluster) = cluster("a_task_cancelled_while_pending_and_jobs_that_die_in_their_setup")
    else {
        return;
    };
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();

    // A task cancelled while it waits for its turn (the array runs one task at a time) never
    // started: stopped, to be submitted again, not a failure of its setup.
    let config = slow_grid(tmp.path());
    let dir = tmp.path().join("cancelled");
    cluster.submit(
        &config,
        &dir,
        &["--shards", "2", "--cluster", "max_running=1"],
    );
    let array = Plan::read(&Layout::new(&dir)).unwrap().submissions[0]
        .array_job
        .clone()
        .unwrap();
    wait_mid_run(&dir, 1, 4);
    let out = cluster
        .command("scancel")
        .arg(format!("{array}_2"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let started = Instant::now();
    while cluster
        .queued(std::slice::from_ref(&array))
        .iter()
        .any(|l| l.starts_with(&format!("{array}_2 ")))
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "task 2 stays queued"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = cluster.status(&dir);
    assert_eq!(states(&status), vec!["running", "stopped"], "{status}");
    assert!(
        status.contains("left SLURM's queue without starting (cancelled while pending?)")
            && status.contains("to go on: glassbox run")
            && !status.contains("failed"),
        "{status}"
    );
    // The merge job waits for the array, in words, without SLURM's "None".
    assert!(status.contains("(waiting for the array)"), "{status}");
    assert!(!status.contains("(None)"), "{status}");
    let out = cluster
        .command("scancel")
        .args(job_ids(&dir))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    cluster.wait_for_jobs(&dir, Duration::from_secs(120));

    // A setup line that fails ends every job before glassbox starts, the merge job's too:
    // failures, each with its log, the merge's error from its log.
    let config = small_grid(tmp.path(), "-1000.0", "");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("[cluster]\nsetup = [\"no-such-setup-command\"]\n");
    std::fs::write(&config, text).unwrap();
    let dir = tmp.path().join("setup");
    cluster.submit(&config, &dir, &["--shards", "2"]);
    cluster.wait_for_jobs(&dir, Duration::from_secs(120));
    let status = cluster.status(&dir);
    assert_eq!(states(&status), vec!["FAILED", "FAILED"], "{status}");
    assert!(
        status.contains("shard 1 failed: its job left SLURM's queue before glassbox started"),
        "{status}"
    );
    let merge = status
        .lines()
        .find(|l| l.starts_with("merge: "))
        .unwrap_or_default();
    assert!(
        merge.contains("left SLURM's queue before glassbox started")
            && merge.contains("logs/merge.log")
            && merge.contains("no-such-setup-command"),
        "{status}"
    );
}
