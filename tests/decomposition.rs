//! Node-based decomposition (NB-DEC / S-NB-DEC, section 6 of the l0 paper) run from configs
//! for l0tree and S-ORCT: the trace per macro-iteration, the final point, the working-set
//! rules, and the config checks.

use glassbox::experiment::{self, ExperimentConfig, SolveRecord};
use glassbox::formulations::decomposition::WorkingSets;
use std::path::Path;

fn example() -> ExperimentConfig {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/l0tree_iris_decomposition.toml");
    let mut config = ExperimentConfig::load(&path).unwrap();
    config.split.repeats = 1;
    config.multistart.starts = 2;
    config
}

fn run(config: &ExperimentConfig) -> Vec<SolveRecord> {
    let dir = tempfile::tempdir().unwrap();
    experiment::run(config, dir.path(), false, false)
        .unwrap()
        .records
}

fn check_trace(record: &SolveRecord, macro_iterations: usize) {
    let trace = record
        .decomposition
        .as_ref()
        .expect("a decomposition trace");
    assert_eq!(trace.len(), macro_iterations + 1);
    for (s, m) in trace.iter().enumerate() {
        assert_eq!(m.macro_iteration, s);
        assert!(m.objective.is_finite());
        assert!((0.0..=1.0).contains(&m.test_accuracy));
    }
    assert!(trace
        .windows(2)
        .all(|w| w[1].seconds >= w[0].seconds && w[1].iterations > w[0].iterations));
    let last = trace.last().unwrap();
    assert_eq!(last.test_accuracy, record.test_accuracy);
    assert!((last.objective - record.objective.unwrap()).abs() < 1e-9);
    assert!((last.seconds - record.solve_seconds).abs() < 1e-9);
    // The decomposition improves on the 5-iteration initialization.
    assert!(
        last.objective < trace[0].objective,
        "{} vs {}",
        last.objective,
        trace[0].objective
    );
    assert!(
        record.status.starts_with("iteration_limit"),
        "{}",
        record.status
    );
}

#[test]
fn s_nb_dec_on_l0tree_traces_every_macro_iteration() {
    let config = example();
    let records = run(&config);
    for r in &records {
        check_trace(r, 5);
        assert!(r.raw_status.contains("15 subproblems"), "{}", r.raw_status);
    }
    let selected = records.iter().find(|r| r.selected).unwrap();
    assert!(selected.test_accuracy > 0.85, "{}", selected.test_accuracy);
    assert_eq!(selected.status, "iteration_limit_feasible");
}

#[test]
fn s_nb_dec_on_sorct_without_initialization_and_c_nb_dec() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sorct_iris.toml");
    let mut config = ExperimentConfig::load(&path).unwrap();
    config.split.repeats = 1;
    config.multistart.starts = 1;
    let mut dec = example().decomposition.unwrap();
    dec.initialization = false;
    dec.macro_iterations = 3;
    config.decomposition = Some(dec.clone());
    let records = run(&config);
    check_trace(&records[0], 3);
    assert!(
        records[0].test_accuracy > 0.85,
        "{}",
        records[0].test_accuracy
    );

    dec.working_sets = WorkingSets::Alternating;
    config.decomposition = Some(dec);
    let records = run(&config);
    check_trace(&records[0], 3);
    assert!(
        records[0].raw_status.contains("6 subproblems"),
        "{}",
        records[0].raw_status
    );
}

#[test]
fn decomposition_config_errors() {
    let file = Path::new("x.toml");
    let head = "[data]\npath = \"x.csv\"\n[solver]\nname = \"ipopt\"\n";
    for (rest, needle) in [
        (
            "[formulation]\nname = \"logistic_l1\"\n[decomposition]\n",
            "tree formulation",
        ),
        (
            "[formulation]\nname = \"sorct\"\n[decomposition]\npsi = -1.0\n",
            "psi",
        ),
        (
            "[formulation]\nname = \"sorct\"\n[decomposition]\nmacro_iterations = 0\n",
            "macro_iterations",
        ),
        (
            "[formulation]\nname = \"l0tree\"\n[decomposition]\nworking_set = \"x\"\n",
            "working_set",
        ),
        (
            "[formulation]\nname = \"l0tree\"\n[decomposition]\nsubproblem_tolerance = 0.0\n",
            "subproblem_tolerance",
        ),
    ] {
        let err = ExperimentConfig::parse(file, &format!("{head}{rest}"))
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{err}");
    }
}

/// Subproblems go through the registry: the gradient backend solves them as well.
#[test]
fn s_nb_dec_with_the_lbfgs_backend() {
    let mut config = example();
    config.multistart.starts = 1;
    config.solver.name = "lbfgs".into();
    let records = run(&config);
    check_trace(&records[0], 5);
    assert_eq!(records[0].solver, "lbfgs");
    assert!(
        records[0].test_accuracy > 0.85,
        "{}",
        records[0].test_accuracy
    );
}
