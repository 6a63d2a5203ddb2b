//! The local executor (`glassbox run --executor local --jobs N`), which runs the shards of a
//! sharded run as processes here exactly as SLURM array tasks run them: merged results equal
//! to an unsharded run's apart from the timings, `glassbox status` during and after, an
//! interrupted run (SIGINT to the executor, passed on to its processes) resumed by the same
//! command without a cell-split solved twice, and the errors of a plan that does not fit.
//! (tests/slurm.rs runs the same shards on a real SLURM.)

use glassbox::cluster::plan::{Layout, Plan};
use glassbox::cluster::records::{self, Outcome};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

#[path = "common/sharded_runs.rs"]
mod sharded_runs;
use sharded_runs::{lines, slow_grid, small_grid, states, untimed};

fn glassbox(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_glassbox"))
        .args(args)
        .env("CI", "true")
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn local_processes_run_the_shards_and_merge_to_the_unsharded_run() {
    let tmp = tempfile::tempdir().unwrap();
    let config = small_grid(tmp.path(), "-1000.0, -3.0", "save_models = true");
    let cfg = config.to_str().unwrap();
    let dir = tmp.path().join("sharded");
    let d = dir.to_str().unwrap();
    let stdout = ok(&glassbox(&[
        "run",
        cfg,
        "--out",
        d,
        "--executor",
        "local",
        "--jobs",
        "2",
        "--shards",
        "4",
    ]));
    assert!(
        stdout.contains("4 shards of 4 cell-splits (16 in all)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("merged 4 shards: 16 cell-splits"),
        "{stdout}"
    );

    let whole = tmp.path().join("whole");
    ok(&glassbox(&["run", cfg, "--out", whole.to_str().unwrap()]));
    let merged: Vec<Value> = lines(&dir.join("results.jsonl"))
        .into_iter()
        .map(untimed)
        .collect();
    let unsharded: Vec<Value> = lines(&whole.join("results.jsonl"))
        .into_iter()
        .map(untimed)
        .collect();
    assert_eq!(merged.len(), 2 * 2 * 2 * 2 + 2 * 2 * 2);
    assert_eq!(merged, unsharded);
    // The models of every shard are merged too.
    assert_eq!(
        std::fs::read_dir(dir.join("models")).unwrap().count(),
        std::fs::read_dir(whole.join("models")).unwrap().count()
    );

    let status = ok(&glassbox(&["status", d]));
    assert_eq!(states(&status), vec!["finished"; 4], "{status}");
    assert!(
        status.contains("all shards: 16/16 cell-splits (100.0%)"),
        "{status}"
    );
    assert!(status.contains("merge: done"), "{status}");
    // The run's own folder reads as an engine run too.
    let shard = ok(&glassbox(&["status", &format!("{d}/shards/3")]));
    assert!(
        shard.contains("shard 3/4): 4/4 cell-splits (100.0%)"),
        "{shard}"
    );

    // Again: nothing to do.
    let again = ok(&glassbox(&["run", cfg, "--out", d, "--executor", "local"]));
    assert!(
        again.contains("every shard is finished and merged"),
        "{again}"
    );
}

#[test]
fn plans_that_do_not_fit_are_refused_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let config = small_grid(tmp.path(), "-1000.0, -3.0", "save_models = true");
    let cfg = config.to_str().unwrap();
    let d = tmp.path().join("run");
    let d = d.to_str().unwrap();
    let err = |args: &[&str]| {
        let out = glassbox(args);
        assert!(!out.status.success(), "{args:?} succeeded");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = err(&[
        "run",
        cfg,
        "--out",
        d,
        "--executor",
        "local",
        "--shards",
        "17",
    ]);
    assert!(
        e.contains("17 shards for 16 chains") && e.contains("at most --shards 16"),
        "{e}"
    );
    let e = err(&["run", cfg, "--out", d, "--executor", "slurm"]);
    assert!(e.contains("how many shards? give --shards N"), "{e}");
    let e = err(&[
        "run",
        cfg,
        "--out",
        d,
        "--executor",
        "slurm",
        "--shards",
        "2",
        "--jobs",
        "2",
    ]);
    assert!(e.contains("--jobs counts local processes"), "{e}");
    let e = err(&["run", cfg, "--out", d, "--shards", "2"]);
    assert!(e.contains("--executor"), "{e}");
    let e = err(&[
        "run",
        cfg,
        "--out",
        d,
        "--executor",
        "local",
        "--cluster",
        "timee=1",
    ]);
    assert!(e.contains("unknown field `timee`"), "{e}");

    // A plan of 2 shards in the folder: another count, or another config, is refused.
    ok(&glassbox(&[
        "run",
        cfg,
        "--out",
        d,
        "--executor",
        "local",
        "--jobs",
        "2",
    ]));
    let e = err(&[
        "run",
        cfg,
        "--out",
        d,
        "--executor",
        "local",
        "--shards",
        "4",
    ]);
    assert!(e.contains("was planned in 2 shards"), "{e}");
    let other = tmp.path().join("other.toml");
    std::fs::write(
        &other,
        std::fs::read_to_string(&config)
            .unwrap()
            .replace("seed = 5", "seed = 6"),
    )
    .unwrap();
    let e = err(&[
        "run",
        other.to_str().unwrap(),
        "--out",
        d,
        "--executor",
        "local",
    ]);
    assert!(e.contains("holds a sharded run of another config"), "{e}");

    // [cluster] shards sizes a new plan only: the resume command (no --shards) goes on with
    // the 2 shards on disk.
    let sized = tmp.path().join("sized.toml");
    std::fs::write(
        &sized,
        std::fs::read_to_string(&config).unwrap() + "[cluster]\nshards = 4\n",
    )
    .unwrap();
    let sized = sized.to_str().unwrap();
    let stdout = ok(&glassbox(&[
        "run",
        sized,
        "--out",
        d,
        "--executor",
        "local",
    ]));
    assert!(
        stdout.contains("going on with its plan: 2 shards")
            && stdout.contains("[cluster] shards = 4 applies to a new plan only")
            && stdout.contains("every shard is finished and merged"),
        "{stdout}"
    );

    // --force with an argument that is refused removes nothing: every check comes first.
    let results = Path::new(d).join("results.jsonl");
    let merged = lines(&results);
    let kept = |what: &str| {
        assert_eq!(lines(&results), merged, "{what}");
        assert_eq!(Plan::read(&Layout::new(Path::new(d))).unwrap().shards, 2);
        assert!(
            Path::new(d).join("shards/2/results.jsonl").exists(),
            "{what}"
        );
    };
    let e = err(&[
        "run",
        cfg,
        "--out",
        d,
        "--executor",
        "local",
        "--force",
        "--shards",
        "60",
    ]);
    assert!(e.contains("60 shards for 16 chains"), "{e}");
    kept("--force --shards 60");
    let e = err(&["run", cfg, "--out", d, "--executor", "slurm", "--force"]);
    assert!(e.contains("how many shards?"), "{e}");
    kept("--force without --shards on SLURM");
    // --force starts over.
    let stdout = ok(&glassbox(&[
        "run",
        cfg,
        "--out",
        d,
        "--executor",
        "local",
        "--shards",
        "4",
        "--force",
    ]));
    assert!(stdout.contains("merged 4 shards"), "{stdout}");
}

#[test]
fn an_interrupted_local_run_resumes_without_solving_anything_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let config = slow_grid(tmp.path());
    let cfg = config.to_str().unwrap();
    let dir = tmp.path().join("run");
    let d = dir.to_str().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_glassbox"))
        .args(["run", cfg, "--out", d, "--executor", "local", "--jobs", "2"])
        .env("CI", "true")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once both shards have a finished cell-split, and while `status` sees them run.
    let layout = Layout::new(&dir);
    let started = Instant::now();
    loop {
        let done: Vec<usize> = [1, 2]
            .iter()
            .map(|&i| {
                records::progress(&layout.shard(i).join("results.jsonl"))
                    .unwrap()
                    .done_units
            })
            .collect();
        assert!(
            done.iter().all(|&d| d < 4),
            "a shard finished before the interruption"
        );
        if done.iter().all(|&d| d >= 1) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(300), "no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = ok(&glassbox(&["status", d]));
    assert_eq!(states(&status), vec!["running"; 2], "{status}");
    assert!(status.contains("time left about"), "{status}");
    // A second attempt on a running shard is refused by it, and changes nothing: the shard
    // still runs, with one attempt recorded (whose end, below, is its own).
    let second = glassbox(&["task", d, "--shard", "1"]);
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "{stderr}");
    assert!(
        stderr.contains("shard 1 of") && stderr.contains("is running already"),
        "{stderr}"
    );
    let status = ok(&glassbox(&["status", d]));
    assert_eq!(states(&status), vec!["running"; 2], "{status}");
    assert_eq!(
        records::read(&layout.records(1)).unwrap().len(),
        1,
        "the refused attempt wrote records"
    );
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "an interrupted run must fail: {stdout}"
    );
    assert!(stdout.contains("interrupted"), "{stdout}");
    // A clean stop is no error.
    assert!(
        stderr.contains("shard 1/2 stopped") && !stderr.contains("ended with an error"),
        "{stderr}"
    );
    for i in [1, 2] {
        let a = records::attempts(&records::read(&layout.records(i)).unwrap());
        assert_eq!(a.len(), 1, "{a:?}");
        assert_eq!(
            a.last().unwrap().outcome(),
            Some(Outcome::Interrupted),
            "{a:?}"
        );
    }
    let kept: Vec<Value> = [1, 2]
        .iter()
        .flat_map(|&i| lines(&layout.shard(i).join("results.jsonl")))
        .collect();
    let status = ok(&glassbox(&["status", d]));
    assert_eq!(states(&status), vec!["stopped"; 2], "{status}");
    assert!(status.contains("to go on: glassbox run"), "{status}");

    let stdout = ok(&glassbox(&[
        "run",
        cfg,
        "--out",
        d,
        "--executor",
        "local",
        "--jobs",
        "2",
    ]));
    assert!(
        stdout.contains("going on with its plan: 2 shards"),
        "{stdout}"
    );
    let all = lines(&dir.join("results.jsonl"));
    assert_eq!(all.len(), 8 * 3);
    let fingerprints: BTreeSet<&str> = all
        .iter()
        .map(|l| l["fingerprint"].as_str().unwrap())
        .collect();
    assert_eq!(fingerprints.len(), all.len());
    for l in &kept {
        assert!(
            all.contains(l),
            "a line written before the interruption changed: {l}"
        );
    }
    let plan = Plan::read(&layout).unwrap();
    assert_eq!(plan.submissions.len(), 2);
}
