//! OCT solved by the tree-search backend `dp` from a config (`[solver] name = "dp"`), through
//! the experiment engine and the `glassbox` command: the run's records, model and summary
//! are those of a MILP run (the objective equals HiGHS's on the same split), the model
//! predicts, shows and draws; a formulation without a tree-search statement (OCT-H, the
//! loss tree, an NLP formulation) given `dp` is a clear error naming the formulation and the
//! backend, before anything is written.

use glassbox::experiment::{self, ExperimentConfig};
use glassbox::formulations::oct::OctModel;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn shared(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/datasets")
        .join(name)
}

fn write_config(dir: &Path, data: &str, formulation: &str, solver: &str) -> PathBuf {
    // car's doors and persons hold numbers and words ("5more", "more").
    let categorical = if data == "car.csv" {
        "categorical = [\"doors\", \"persons\"]\n"
    } else {
        ""
    };
    let text = format!(
        "[data]\npath = \"{}\"\n{categorical}[split]\ntest_fraction = 0.5\nrepeats = 2\nseed = 3\n\
         [formulation]\n{formulation}\n[solver]\n{solver}\n",
        shared(data).display()
    );
    let path = dir.join(format!("{}.toml", solver.len() + formulation.len()));
    std::fs::write(&path, text).unwrap();
    path
}

fn glassbox(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_glassbox"))
        .args(args)
        .output()
        .expect("the glassbox binary runs")
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn dp_runs_oct_from_a_config_with_highs_objectives() {
    let dir = tempfile::tempdir().unwrap();
    let formulation = "name = \"oct\"\ndepth = 1\nalpha = 0.01";
    let mut objectives = Vec::new();
    for solver in ["name = \"dp\"", "name = \"highs\"\nrelative_gap = 0.0"] {
        let path = write_config(dir.path(), "iris.csv", formulation, solver);
        let config = ExperimentConfig::load(&path).unwrap();
        let out = dir
            .path()
            .join(if solver.contains("dp") { "dp" } else { "highs" });
        let outcome = experiment::run(&config, &out, true, false).unwrap();
        assert_eq!(outcome.records.len(), 2);
        for r in &outcome.records {
            assert_eq!(r.status, "optimal", "{solver}: {r:?}");
            assert!(r.selected && r.test_accuracy > 0.5, "{solver}: {r:?}");
        }
        let line: serde_json::Value = serde_json::from_str(
            std::fs::read_to_string(&outcome.results_path)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(line["mip_gap"].as_f64(), Some(0.0), "{line}");
        assert!(line.get("dual_bound").is_some(), "{line}");
        let model = OctModel::load(&out.join("models/split-0.json")).unwrap();
        assert_eq!(model.depth, 1);
        objectives.push(
            outcome
                .records
                .iter()
                .map(|r| r.objective.unwrap())
                .collect::<Vec<f64>>(),
        );
    }
    for (dp, highs) in objectives[0].iter().zip(&objectives[1]) {
        assert!((dp - highs).abs() < 1e-6, "dp {dp}, highs {highs}");
    }
}

#[test]
fn a_dp_model_predicts_shows_and_draws() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(
        dir.path(),
        "car.csv",
        "name = \"oct\"\ndepth = 3\nmin_leaf = 2",
        "name = \"dp\"\ntime_limit = 60.0",
    );
    let out = dir.path().join("out");
    ok(&glassbox(&[
        "run",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    let model_path = out.join("models/split-0.json");
    let model = OctModel::load(&model_path).unwrap();
    assert!(model.num_splits() >= 3, "{}", model.text());
    let predicted = ok(&glassbox(&[
        "predict",
        model_path.to_str().unwrap(),
        shared("car.csv").to_str().unwrap(),
    ]));
    let accuracy: f64 = predicted
        .lines()
        .find_map(|l| l.strip_prefix("accuracy "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("an accuracy line");
    assert!(accuracy > 0.75, "{predicted}");
    assert!(ok(&glassbox(&["show", model_path.to_str().unwrap()])).contains("node 0"));
    let drawing = dir.path().join("tree.svg");
    ok(&glassbox(&[
        "draw",
        model_path.to_str().unwrap(),
        drawing.to_str().unwrap(),
    ]));
    assert!(std::fs::metadata(&drawing).unwrap().len() > 0);
}

#[test]
fn formulations_without_a_tree_search_statement_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (data, formulation, needles) in [
        (
            "iris.csv",
            "name = \"oct_h\"\ndepth = 1",
            &["oct_h", "'dp'", "axis-aligned"][..],
        ),
        (
            "iris.csv",
            "name = \"sorct\"\ndepth = 2",
            &["dp", "nonlinear"][..],
        ),
        (
            "haberman.csv",
            "name = \"loss_tree\"\ndepth = 1",
            &["loss_tree", "'dp'", "oblique"][..],
        ),
    ] {
        let path = write_config(dir.path(), data, formulation, "name = \"dp\"");
        let out = dir.path().join("refused");
        let output = glassbox(&[
            "run",
            path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{formulation}: {stderr}");
        for needle in needles {
            assert!(stderr.contains(needle), "'{needle}' not in: {stderr}");
        }
        assert!(!out.join("results.jsonl").exists(), "{formulation}");
    }
    // dp's options are checked as every backend's: an unknown one is refused by name.
    let path = write_config(
        dir.path(),
        "iris.csv",
        "name = \"oct\"\ndepth = 1",
        "name = \"dp\"\n[solver.raw]\nno_such_option = 1",
    );
    let output = glassbox(&["run", path.to_str().unwrap(), "--out", "unused"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success() && stderr.contains("no_such_option"),
        "{stderr}"
    );
}

#[test]
fn dp_starts_from_the_mip_start_and_proves_the_same_optimum() {
    let dir = tempfile::tempdir().unwrap();
    let run = |formulation: &str, multistart: &str, out: &str| {
        let path = write_config(
            dir.path(),
            "wine.csv",
            &format!("{formulation}{multistart}"),
            "name = \"dp\"",
        );
        let config = ExperimentConfig::load(&path).unwrap();
        experiment::run(&config, &dir.path().join(out), true, false)
            .unwrap()
            .records
    };
    let base = "name = \"oct\"\ndepth = 2\nalpha = 0.01\n";
    // OCT's greedy MIP start (the default) is dp's first incumbent; without it the search
    // starts from the best leaf; either way it proves the same optimum.
    let greedy = run(base, "", "greedy");
    let cold = run(&format!("{base}start = \"none\"\n"), "", "cold");
    for (g, c) in greedy.iter().zip(&cold) {
        assert_eq!(g.status, "optimal", "{g:?}");
        assert_eq!(c.status, "optimal", "{c:?}");
        assert!(
            g.raw_status.contains("warm start the first incumbent"),
            "{}",
            g.raw_status
        );
        assert!(!c.raw_status.contains("warm start"), "{}", c.raw_status);
        let (g, c) = (g.objective.unwrap(), c.objective.unwrap());
        assert!((g - c).abs() < 1e-9, "greedy {g}, cold {c}");
    }
    // A saved model named by `multistart.warm_start` is a start too, even with the
    // formulation's own start off.
    let model = dir.path().join("cold/models/split-0.json");
    let warm = run(
        &format!("{base}start = \"none\"\n"),
        &format!("[multistart]\nwarm_start = \"{}\"\n", model.display()),
        "warm",
    );
    assert!(
        warm[0]
            .raw_status
            .contains("warm start the first incumbent"),
        "{}",
        warm[0].raw_status
    );
    assert!((warm[0].objective.unwrap() - cold[0].objective.unwrap()).abs() < 1e-9);
}
