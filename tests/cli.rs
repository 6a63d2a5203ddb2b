//! The `glassbox` command end to end: bad input gives one clear error line, a non-zero
//! exit and no results file; a time limit is honoured with a time-limit status; a saved
//! model predicts; output into a closed pipe ends the process quietly.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn shared(name: &str) -> String {
    format!("{}/../shared/datasets/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn glassbox(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_glassbox"))
        .args(args)
        .output()
        .expect("the glassbox binary runs")
}

/// Writes `config` in a fresh folder, runs it, and returns (output, out folder).
fn run_config(config: &str) -> (Output, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, config).unwrap();
    let out = dir.path().join("out");
    let output = glassbox(&[
        "run",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    (output, out, dir)
}

fn config(data: &str, formulation: &str, solver: &str) -> String {
    format!(
        "[data]\n{data}\n[split]\nrepeats = 1\n[formulation]\nname = \"sorct\"\n{formulation}\n\
         [solver]\nname = \"ipopt\"\n{solver}\n[multistart]\nstarts = 1\n"
    )
}

/// Asserts a failed run: non-zero exit, one line on stderr containing every `needle`, no
/// results file.
fn assert_clean_failure(output: &Output, out: &Path, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "expected failure, got success; stderr: {stderr}"
    );
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "one error line expected, got: {stderr}"
    );
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "'{n}' not in: {stderr}");
    }
    assert!(
        !out.join("results.jsonl").exists(),
        "a results file was left behind"
    );
}

fn write_csv(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn missing_file() {
    let (output, out, _dir) =
        run_config(&config("path = \"/nonexistent/data.csv\"", "depth = 2", ""));
    assert_clean_failure(&output, &out, &["/nonexistent/data.csv"]);
}

/// A misspelt key is named with its table; no line number, since the parser that finds it
/// reads the config written back per grid cell, whose lines are not the file's.
#[test]
fn unknown_keys_are_named_with_their_table() {
    let csv = shared("iris.csv");
    for (config, needles) in [
        (
            config(
                &format!("path = \"{csv}\"\nbogus_field = 3"),
                "depth = 2",
                "",
            ),
            ["[data]", "unknown field `bogus_field`"],
        ),
        (
            config(&format!("path = \"{csv}\""), "depth = 2", "time_limt = 5.0"),
            ["[solver]", "unknown field `time_limt`"],
        ),
        (
            format!(
                "{}[bogus]\nx = 1\n",
                config(&format!("path = \"{csv}\""), "depth = 2", "")
            ),
            ["unknown field `bogus`", "`decomposition`"],
        ),
    ] {
        let (output, out, _dir) = run_config(&config);
        assert_clean_failure(&output, &out, &needles);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("at line"), "{stderr}");
    }
}

/// `--jobs 0` is refused (it used to run as 1) before anything is written.
#[test]
fn zero_jobs_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let config = format!("{}/examples/demo.toml", env!("CARGO_MANIFEST_DIR"));
    let output = glassbox(&[
        "run",
        &config,
        "--out",
        out.to_str().unwrap(),
        "--jobs",
        "0",
    ]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--jobs"), "{stderr}");
    assert!(!out.exists());
}

#[test]
fn missing_config_file() {
    let output = glassbox(&["run", "/nonexistent/config.toml"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("/nonexistent/config.toml"));
}

#[test]
fn missing_target_column() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(dir.path(), "d.csv", "a,b,label\n1,2,x\n3,4,y\n");
    let (output, out, _d) = run_config(&config(&format!("path = \"{csv}\""), "depth = 1", ""));
    assert_clean_failure(&output, &out, &["target", "label"]);
}

#[test]
fn mixed_column_not_declared_categorical() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(
        dir.path(),
        "d.csv",
        "a,b,target\n1,2,x\n3,four,y\n5,6,x\n7,8,y\n",
    );
    let (output, out, _d) = run_config(&config(&format!("path = \"{csv}\""), "depth = 1", ""));
    assert_clean_failure(&output, &out, &["'b'", "four", "categorical"]);
}

#[test]
fn single_class_target() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(dir.path(), "d.csv", "a,b,target\n1,2,x\n3,4,x\n5,6,x\n");
    let (output, out, _d) = run_config(&config(&format!("path = \"{csv}\""), "depth = 1", ""));
    assert_clean_failure(&output, &out, &["single class"]);
}

#[test]
fn more_classes_than_leaves() {
    let (output, out, _d) = run_config(&config(
        &format!("path = \"{}\"", shared("iris.csv")),
        "depth = 1",
        "",
    ));
    assert_clean_failure(&output, &out, &["3 classes", "depth"]);
}

#[test]
fn unknown_solver() {
    let text = config(
        &format!("path = \"{}\"", shared("iris.csv")),
        "depth = 2",
        "",
    )
    .replace("\"ipopt\"", "\"gurobi\"");
    let (output, out, _d) = run_config(&text);
    assert_clean_failure(&output, &out, &["gurobi", "ipopt"]);
}

#[test]
fn unknown_raw_option() {
    let (output, out, _d) = run_config(&config(
        &format!("path = \"{}\"", shared("iris.csv")),
        "depth = 2",
        "raw = { no_such_option = 3 }",
    ));
    assert_clean_failure(&output, &out, &["no_such_option"]);
}

#[test]
fn ill_typed_raw_option() {
    let (output, out, _d) = run_config(&config(
        &format!("path = \"{}\"", shared("iris.csv")),
        "depth = 2",
        "raw = { mu_strategy = 3 }",
    ));
    assert_clean_failure(&output, &out, &["mu_strategy"]);
}

#[test]
fn unknown_formulation_parameter_and_solver_option() {
    let (output, out, _d) = run_config(&config(
        &format!("path = \"{}\"", shared("iris.csv")),
        "dept = 2",
        "",
    ));
    assert_clean_failure(&output, &out, &["dept"]);
    let (output, out, _d) = run_config(&config(
        &format!("path = \"{}\"", shared("iris.csv")),
        "depth = 2",
        "time_limt = 3",
    ));
    assert_clean_failure(&output, &out, &["time_limt"]);
}

#[test]
fn negative_time_limit() {
    let (output, out, _d) = run_config(&config(
        &format!("path = \"{}\"", shared("iris.csv")),
        "depth = 2",
        "time_limit = -1.0",
    ));
    assert_clean_failure(&output, &out, &["time_limit"]);
}

#[test]
fn existing_results_are_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(
        &path,
        config(
            &format!("path = \"{}\"", shared("iris.csv")),
            "depth = 2",
            "",
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("results.jsonl"), "earlier\n").unwrap();
    let output = glassbox(&[
        "run",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--force"));
    assert_eq!(
        std::fs::read_to_string(out.join("results.jsonl")).unwrap(),
        "earlier\n"
    );
}

/// Reads results.jsonl into JSON values.
fn results(out: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn time_limit_on_spambase_is_honoured() {
    let (output, out, _d) = run_config(&config(
        &format!("path = \"{}\"", shared("spambase.csv")),
        // One random start: this test is about the limit of one solve.
        "depth = 2\ncart_start = false",
        "time_limit = 0.5",
    ));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines = results(&out);
    assert_eq!(lines.len(), 1);
    let secs = lines[0]["solve_seconds"].as_f64().unwrap();
    let status = lines[0]["status"].as_str().unwrap();
    assert!(secs < 1.5, "the solve took {secs} s");
    assert!(status.starts_with("time_limit"), "status {status}");
}

#[test]
fn run_writes_every_field_then_predict_and_show() {
    let (output, out, _d) = run_config(&config(
        &format!("path = \"{}\"", shared("iris.csv")),
        "depth = 2",
        "",
    ));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("test accuracy"), "{stdout}");
    let line = &results(&out)[0];
    for field in [
        "dataset",
        "formulation",
        "solver",
        "depth",
        "lambda_local",
        "lambda_global",
        "seed",
        "split",
        "status",
        "objective",
        "train_accuracy",
        "test_accuracy",
        "delta_local",
        "delta_global",
        "solve_seconds",
        "iterations",
    ] {
        assert!(line.get(field).is_some(), "field {field} missing in {line}");
    }
    assert_eq!(line["dataset"], "iris");
    let model = out.join("models/split-0.json");
    let predicted = glassbox(&["predict", model.to_str().unwrap(), &shared("iris.csv")]);
    assert!(
        predicted.status.success(),
        "{}",
        String::from_utf8_lossy(&predicted.stderr)
    );
    let text = String::from_utf8_lossy(&predicted.stdout);
    let accuracy: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("accuracy "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("an accuracy line");
    assert!(accuracy > 0.85, "accuracy {accuracy}");
    let shown = glassbox(&["show", model.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&shown.stdout).contains("node 0"));
    // A file that is not a model of this kind is refused with a clear error.
    let not_model = glassbox(&["show", out.join("results.jsonl").to_str().unwrap()]);
    assert!(!not_model.status.success());
    assert!(String::from_utf8_lossy(&not_model.stderr).contains("results.jsonl"));
}

#[test]
fn listings() {
    let solvers = glassbox(&["solvers"]);
    assert!(String::from_utf8_lossy(&solvers.stdout).contains("ipopt"));
    let formulations = glassbox(&["formulations"]);
    let text = String::from_utf8_lossy(&formulations.stdout);
    assert!(
        text.contains("sorct") && text.contains("lambda_local"),
        "{text}"
    );
}

#[test]
fn fixed_split_from_a_test_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(shared("iris.csv")).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let (mut train, mut test) = (vec![header], vec![header]);
    for (i, line) in lines.enumerate() {
        if i % 4 == 0 {
            test.push(line);
        } else {
            train.push(line);
        }
    }
    let train_csv = write_csv(dir.path(), "train.csv", &train.join("\n"));
    let test_csv = write_csv(dir.path(), "test.csv", &test.join("\n"));
    let data = format!("path = \"{train_csv}\"\ntest_path = \"{test_csv}\"");
    let (output, out, _d) = run_config(&config(&data, "depth = 2", ""));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines = results(&out);
    // The CART start, the random start, and the line of the cross-validated choice.
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["origin"], "cart");
    assert!(lines[2]["origin"]
        .as_str()
        .unwrap()
        .starts_with("selection ("));
    for line in &lines {
        assert_eq!(line["n_train"], 112);
        assert_eq!(line["n_test"], 38);
    }
    // Several repeats make no sense with a fixed split.
    let (output, out, _d) =
        run_config(&config(&data, "depth = 2", "").replace("repeats = 1", "repeats = 3"));
    assert_clean_failure(&output, &out, &["test_path", "repeats"]);
    // A bad target in the test file, found once the two files are one table, is placed in
    // the test file (it said "line 3" of "train + test").
    let rows: String = (0..12).map(|i| format!("{i},{}\n", 2 * i)).collect();
    let reg_train = write_csv(dir.path(), "reg_train.csv", &format!("x,target\n{rows}"));
    let reg_test = write_csv(dir.path(), "reg_test.csv", "x,target\n1,2\n2,nan\n");
    let (output, out, _d) = run_config(&format!(
        "[data]\npath = \"{reg_train}\"\ntest_path = \"{reg_test}\"\n[formulation]\n\
         name = \"cart\"\ncriterion = \"squared_error\"\ndepth = 1\n"
    ));
    assert_clean_failure(&output, &out, &["column 'target', ", "reg_test.csv line 3"]);
    // The training file as its own test file would test on the training rows.
    let data = format!("path = \"{train_csv}\"\ntest_path = \"{train_csv}\"");
    let (output, out, _d) = run_config(&config(&data, "depth = 2", ""));
    assert_clean_failure(&output, &out, &["data.test_path is data.path"]);
    // A training file of one class cannot be learned from, whatever the test file holds.
    let setosa: Vec<&str> = train
        .iter()
        .copied()
        .filter(|l| l.ends_with("setosa") || *l == header)
        .collect();
    let one_class = write_csv(dir.path(), "one_class.csv", &setosa.join("\n"));
    let data = format!("path = \"{one_class}\"\ntest_path = \"{test_csv}\"");
    let (output, out, _d) = run_config(&config(&data, "depth = 2", ""));
    assert_clean_failure(
        &output,
        &out,
        &[
            "one_class.csv",
            "a single class 'Iris-setosa' in the training file",
        ],
    );
}

/// Without the `torch` feature a CCT config is refused before anything is written, with a
/// message that names the feature.
#[cfg(not(feature = "torch"))]
#[test]
fn cct_without_torch_is_a_clear_error() {
    let config = format!(
        "[data]\npath = \"{}\"\n[split]\nrepeats = 1\n[formulation]\nname = \"cct\"\ndepth = 2\n",
        shared("iris.csv")
    );
    let (output, out, _d) = run_config(&config);
    assert_clean_failure(&output, &out, &["cct", "torch"]);
}

/// Output into a pipe whose reader has gone (`glassbox formulations | head`) ends the
/// process by SIGPIPE, quietly, as it ends any Unix tool; it used to panic in `println!`
/// with a backtrace and exit 101.
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_the_listing_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let output = Command::new(env!("CARGO_BIN_EXE_glassbox"))
        .arg("formulations")
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.signal(), Some(libc::SIGPIPE), "{stderr}");
}

/// A run that fails on its first split (here a warm start from a model of another depth,
/// found only when the split's problem is built) leaves no folder behind, so the corrected
/// rerun is not refused; `--force`d over an earlier run, it leaves that run as it was.
#[test]
fn a_run_that_fails_on_its_first_split_leaves_nothing_behind() {
    let iris = shared("iris.csv");
    let (first, out, dir) = run_config(&config(
        &format!("path = \"{iris}\""),
        "depth = 2\nselection_folds = 0",
        "",
    ));
    assert!(first.status.success(), "{first:?}");
    let model = out.join("models/split-0.json");
    let results = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let deeper = format!(
        "{}warm_start = \"{}\"\n",
        config(&format!("path = \"{iris}\""), "depth = 3", ""),
        model.display()
    );
    let (failed, fresh, _d) = run_config(&deeper);
    assert_clean_failure(&failed, &fresh, &["cannot warm start", "depth 3"]);
    assert!(!fresh.exists(), "the failed run left {}", fresh.display());
    let path = dir.path().join("deeper.toml");
    std::fs::write(&path, &deeper).unwrap();
    let forced = glassbox(&[
        "run",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--force",
    ]);
    assert!(!forced.status.success());
    assert_eq!(
        std::fs::read_to_string(out.join("results.jsonl")).unwrap(),
        results
    );
    assert!(model.exists());
}

/// `glassbox status` on a one-setting run's folder reports its results (it said the folder
/// was no run), and on a missing folder says it is missing.
#[cfg(unix)]
#[test]
fn status_reads_a_one_setting_run_and_names_a_missing_folder() {
    let iris = shared("iris.csv");
    let (output, out, _d) = run_config(&config(
        &format!("path = \"{iris}\""),
        "depth = 2\nselection_folds = 0",
        "",
    ));
    assert!(output.status.success());
    let status = glassbox(&["status", out.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{status:?}");
    assert!(
        stdout.contains("a one-setting run (no plan is kept): 2 results lines, 1 splits whole"),
        "{stdout}"
    );
    let missing = out.join("nothing");
    let status = glassbox(&["status", missing.to_str().unwrap()]);
    assert_clean_failure(&status, &missing, &["no such folder"]);
}

/// The run's header counts starts only where they apply: a heuristic learner fits once per
/// split, so `[multistart] starts` gets a note instead of "x 7 starts"; S-ORCT's header
/// keeps its starts and no note.
#[test]
fn the_header_counts_starts_only_where_they_apply() {
    let iris = shared("iris.csv");
    let (output, _out, _dir) = run_config(&format!(
        "[data]\npath = \"{iris}\"\n[split]\nrepeats = 2\n[formulation]\nname = \"cart\"\n\
         depth = 2\n[multistart]\nstarts = 7\n"
    ));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(output.status.success(), "{stderr}");
    assert!(
        stdout.contains("cart on iris with none (2 splits)"),
        "{stdout}"
    );
    assert!(
        stderr.contains("note: cart solves once per split: [multistart] starts and seed"),
        "{stderr}"
    );
    let (output, _out, _dir) = run_config(&config(&format!("path = \"{iris}\""), "depth = 2", ""));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("(1 splits x 1 starts)"), "{stdout}");
    assert!(!stderr.contains("note:"), "{stderr}");
}

/// `predict` reads a file's labels from the column the model was trained with (a
/// classifier's `data.target = "label"` beside a feature named `target` was read as the
/// label, and the feature as missing), and only the model's columns: one it does not use
/// may hold text or gaps.
#[test]
fn predict_reads_the_trained_target_and_only_the_model_s_columns() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("x1,target,label\n");
    for i in 0..24 {
        text.push_str(&format!(
            "{i},{},{}\n",
            30 - i,
            if i < 12 { "a" } else { "b" }
        ));
    }
    let train = write_csv(dir.path(), "train.csv", &text);
    let config = dir.path().join("c.toml");
    std::fs::write(
        &config,
        format!(
            "[data]\npath = \"{train}\"\ntarget = \"label\"\n[split]\nrepeats = 1\n\
             [formulation]\nname = \"cart\"\ndepth = 1\n"
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let run = glassbox(&[
        "run",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let model = out.join("models/split-0.json");
    let predict = |file: &str| {
        let output = glassbox(&["predict", model.to_str().unwrap(), file]);
        let stderr = String::from_utf8_lossy(&output.stderr).to_string();
        assert!(output.status.success(), "{stderr}");
        String::from_utf8_lossy(&output.stdout).to_string()
    };
    assert!(predict(&train).contains("accuracy 1.0000 on 24 rows"));
    let extra = write_csv(
        dir.path(),
        "extra.csv",
        "notes,x1,target,label\nzz,1,29,a\n,20,10,b\n3,5,25,a\n",
    );
    let stdout = predict(&extra);
    assert!(stdout.starts_with("a\nb\na\n"), "{stdout}");
    assert!(stdout.contains("accuracy 1.0000 on 3 rows"), "{stdout}");
    // A file without the label column predicts without a note on --target (not given).
    let unlabelled = write_csv(dir.path(), "unlabelled.csv", "x1,target\n1,29\n20,10\n");
    let output = glassbox(&["predict", model.to_str().unwrap(), &unlabelled]);
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("a\nb\n"));
    assert!(!String::from_utf8_lossy(&output.stderr).contains("note"));
    // An empty file: the header it needs is the model's columns (the target is optional).
    let empty = write_csv(dir.path(), "empty.csv", "");
    let output = glassbox(&["predict", model.to_str().unwrap(), &empty]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("the file is empty") && !stderr.contains("target column"),
        "{stderr}"
    );
    // A file lacking the model's columns is refused naming one and listing the file's own
    // (the reader kept no column and panicked on "capacity overflow"); a file separated
    // by ';' says so.
    for (name, text, needles) in [
        (
            "other.csv",
            "a,b\n1,2\n",
            &[
                "there is no column 'x1', which the model was trained with",
                "'a', 'b'",
            ][..],
        ),
        (
            "semi.csv",
            "x1;target;label\n1;29;a\n",
            &["there is no column 'x1'", "seems separated by ';'"][..],
        ),
    ] {
        let file = write_csv(dir.path(), name, text);
        let output = glassbox(&["predict", model.to_str().unwrap(), &file]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success());
        assert!(!stderr.contains("panicked"), "{stderr}");
        for n in needles {
            assert!(stderr.contains(n), "'{n}' not in {stderr}");
        }
    }
    // --target naming one of the model's features is refused as such (it said the column
    // was missing, or advised a config key predict does not take).
    let output = glassbox(&["predict", model.to_str().unwrap(), &extra, "--target", "x1"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("'x1' is one of the model's feature columns")
            && stderr.contains("--target"),
        "{stderr}"
    );
}

/// `predict` matches a file's numeric labels to the model's classes by value (a model of
/// labels `0` / `1` scored a file labelled `0.0` / `1.0` at accuracy 0 with every
/// prediction right); text labels still match as text.
#[test]
fn predict_matches_numeric_labels_by_value() {
    let dir = tempfile::tempdir().unwrap();
    let rows: String = (0..20)
        .map(|i| format!("{i},{}\n", u8::from(i >= 10)))
        .collect();
    let train = write_csv(dir.path(), "train.csv", &format!("x,target\n{rows}"));
    let config = format!(
        "[data]\npath = \"{train}\"\n[split]\nrepeats = 1\n[formulation]\nname = \"cart\"\n\
         depth = 1\n"
    );
    let (output, out, _d) = run_config(&config);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let model = out.join("models/split-0.json");
    let floats = write_csv(
        dir.path(),
        "floats.csv",
        "x,target\n2,0.0\n15,1.0\n16,1e0\n",
    );
    let output = glassbox(&["predict", model.to_str().unwrap(), &floats]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("accuracy 1.0000 on 3 rows"), "{stdout}");
    assert!(!stdout.contains("note:"), "{stdout}");
    let text = write_csv(dir.path(), "text.csv", "x,target\n2,zero\n");
    let output = glassbox(&["predict", model.to_str().unwrap(), &text]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("accuracy 0.0000 on 1 rows"), "{stdout}");
    assert!(stdout.contains("note: 1 rows have a label"), "{stdout}");
}
