//! `glassbox-ext`, glassbox's CLI with the extension registered, on the extension's configs:
//! `formulations` and `solvers` list the additions; `run` fits l1svm with microlp and with
//! HiGHS; `compare` puts the two runs in one table; `predict` and `show` read the model.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ext(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_glassbox-ext"))
        .args(args)
        .output()
        .expect("glassbox-ext runs");
    assert!(
        output.status.success(),
        "glassbox-ext {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn config(solver: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("configs/l1svm_breast_cancer_{solver}.toml"))
}

#[test]
fn the_listings_show_the_additions() {
    let formulations = stdout(&ext(&["formulations"]));
    assert!(formulations.contains("l1svm"), "{formulations}");
    assert!(formulations.contains("max_features"), "{formulations}");
    let solvers = stdout(&ext(&["solvers"]));
    assert!(solvers.contains("microlp"), "{solvers}");
}

#[test]
fn run_compare_predict_and_show_work_on_the_configs() {
    let dir = tempfile::tempdir().unwrap();
    let mut results = Vec::new();
    let mut objectives = Vec::new();
    for solver in ["microlp", "highs"] {
        let out = dir.path().join(solver);
        let path = config(solver);
        ext(&[
            "run",
            path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        let lines = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
        let records: Vec<serde_json::Value> = lines
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(records.len(), 3, "{solver}: one record per split");
        for r in &records {
            assert_eq!(r["status"], "optimal", "{solver}: {r}");
            assert!(r["test_accuracy"].as_f64().unwrap() > 0.85, "{solver}: {r}");
        }
        objectives.push(
            records
                .iter()
                .map(|r| r["objective"].as_f64().unwrap())
                .collect::<Vec<_>>(),
        );
        results.push(out.join("results.jsonl"));
    }
    // Both backends prove the same optima (within the default relative gap 1e-4).
    for (a, b) in objectives[0].iter().zip(&objectives[1]) {
        assert!((a - b).abs() <= 2e-4 * a.abs(), "microlp {a}, highs {b}");
    }

    let profile = dir.path().join("time.svg");
    let table = stdout(&ext(&[
        "compare",
        results[0].to_str().unwrap(),
        results[1].to_str().unwrap(),
        "--time-profile",
        profile.to_str().unwrap(),
    ]));
    assert!(
        table.contains("microlp") && table.contains("highs"),
        "{table}"
    );
    assert!(std::fs::metadata(&profile).unwrap().len() > 0);

    let model = dir.path().join("microlp/models/split-0.json");
    let shown = stdout(&ext(&["show", model.to_str().unwrap()]));
    assert!(shown.contains("1-norm SVM"), "{shown}");
    let used: usize = shown
        .split(" of ")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("the description counts the features used");
    assert!(
        used <= 5,
        "max_features = 5, the model uses {used}: {shown}"
    );

    let data = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/datasets/breast_cancer_wisconsin.csv");
    let predictions = dir.path().join("predictions.csv");
    ext(&[
        "predict",
        model.to_str().unwrap(),
        data.to_str().unwrap(),
        "--out",
        predictions.to_str().unwrap(),
    ]);
    let written = std::fs::read_to_string(&predictions).unwrap();
    assert_eq!(
        written.lines().count(),
        570,
        "a header and one line per row"
    );
}
