//! S-ORRT on Boston Housing for the backend tests (`tests/sorrt_gradient.rs` and, with the
//! `torch` feature, `tests/torch_backend.rs`): the training rows of the first 75/25 split,
//! the configurations compared, and one comparison of backends from the same data-aware
//! starting points.

#![allow(dead_code)]

use glassbox::data::{self, CsvOptions, MinMaxScaler, Table};
use glassbox::formulation::TrainingRows;
use glassbox::formulations::sorrt::{starts, Fairness, GroupSpec, SorrtConfig, SorrtProblem};
use glassbox::{registry, NlpProblem, RawOptionValue, SolveOptions, WarmStart};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::sync::Arc;

/// The S-ORRT problem of `config` on the training rows of Boston's first 75/25 split
/// (379 rows, 13 features), scaled on themselves.
pub fn boston_problem(config: &SorrtConfig) -> SorrtProblem {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/boston_housing.csv");
    let table = Table::from_csv(&path, &CsvOptions::default()).unwrap();
    let (train, _) = data::random_split(table.n_rows(), 0.25, 1).unwrap();
    let data = table.encode_regression().unwrap().rows(&train);
    let x = MinMaxScaler::fit(&data.x).transform(&data.x);
    config
        .problem(
            Arc::new(x),
            Arc::new(data.y.clone()),
            TrainingRows {
                table: &table,
                rows: &train,
            },
        )
        .unwrap()
}

/// Depth 2: the paper's Table 4 setting (no penalty, no constraint), and local sparsity in
/// the split layout (a+, a-) with the fairness constraint (6) on the rows above the third
/// quartile of B (`x12`), a general nonlinear constraint.
pub fn boston_configs() -> Vec<(&'static str, SorrtConfig)> {
    vec![
        ("S-ORRT boston D=2, lambda = 0", SorrtConfig::default()),
        (
            "S-ORRT boston D=2, lambda_L = 0.05 bound, fairness (6) C = 0.5",
            SorrtConfig {
                lambda_local_fraction: Some(0.05),
                fairness: Some(Fairness {
                    group: GroupSpec {
                        column: "x12".into(),
                        above_quantile: Some(0.75),
                        ..Default::default()
                    },
                    mean_prediction_gap: Some(0.5),
                    mse_gap: None,
                }),
                ..Default::default()
            },
        ),
    ]
}

/// The largest violation of a variable bound or a constraint at `x`.
pub fn max_violation(problem: &dyn NlpProblem, x: &[f64]) -> f64 {
    let (xl, xu) = problem.variable_bounds();
    let (gl, gu) = problem.constraint_bounds();
    let mut g = vec![0.0; problem.num_constraints()];
    problem.constraints(x, &mut g);
    let mut worst: f64 = 0.0;
    for (v, (l, u)) in x.iter().zip(xl.iter().zip(&xu)) {
        worst = worst.max(l - v).max(v - u);
    }
    for (v, (l, u)) in g.iter().zip(gl.iter().zip(&gu)) {
        worst = worst.max(l - v).max(v - u);
    }
    worst
}

/// What [`compare_with_ipopt`] found: best objectives over the starts, and the largest
/// ratio backend / IPOPT when the backend is warm-started at IPOPT's local optimum.
pub struct Comparison {
    /// Best objective of IPOPT, then of each backend, from the same data-aware starts.
    pub best: Vec<f64>,
    /// Per backend: the largest objective ratio (backend / IPOPT) over the starts when the
    /// backend starts from IPOPT's solution.
    pub from_ipopt: Vec<f64>,
}

/// Solves `problem` from the data-aware starts of `seeds` with IPOPT and each of
/// `backends` (with `raw` options and at most `iterations` iterations for every backend but
/// IPOPT), then each backend again from IPOPT's solution (point and multipliers). Every backend point that reports
/// a solution must satisfy the bounds and constraints to 1e-6 and report its objective;
/// from IPOPT's solution the backend must report one. Objectives, seconds and statuses per
/// start are printed.
pub fn compare_with_ipopt(
    name: &str,
    config: &SorrtConfig,
    problem: &SorrtProblem,
    backends: &[&str],
    raw: &[(&str, &str)],
    iterations: u64,
    seeds: std::ops::Range<u64>,
) -> Comparison {
    let mut best = vec![f64::INFINITY; backends.len() + 1];
    let mut from_ipopt = vec![0.0f64; backends.len()];
    eprintln!(
        "{name}: seed, IPOPT objective (s), then per backend ({}): objective (s) from the same start, objective from IPOPT's solution",
        backends.join(", ")
    );
    // (objective, point, seconds, status) of one solve; a backend's point that reports a
    // solution must be feasible to 1e-6 and report its own objective.
    let solve = |solver: &str, start: WarmStart| {
        let mut options = SolveOptions::default().with_warm_start(Some(start));
        if solver != "ipopt" {
            options.iteration_limit = Some(iterations);
            for (k, v) in raw {
                options
                    .raw
                    .insert(k.to_string(), RawOptionValue::Str(v.to_string()));
            }
        }
        let r = registry::nlp_solver(solver, &options)
            .unwrap()
            .solve(problem, &options)
            .unwrap();
        let f = problem.objective(&r.primal);
        if solver != "ipopt" && r.status.has_solution() {
            let v = max_violation(problem, &r.primal);
            assert!(v <= 1e-6, "{name}, {solver}: violation {v}");
            let reported = r.objective.unwrap();
            assert!(
                (reported - f).abs() <= 1e-9 * f.abs().max(1.0),
                "{f} vs {reported}"
            );
        }
        (f, r.warm_start(), r.wall_seconds, r.status)
    };
    for seed in seeds {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x0 = starts::random_start(problem, config.initialization, &mut rng);
        let (f_ipopt, ipopt_solution, s_ipopt, status) =
            solve("ipopt", WarmStart::primal(x0.clone()));
        assert!(
            status.has_solution(),
            "{name}, seed {seed}, ipopt: {status:?}"
        );
        best[0] = best[0].min(f_ipopt);
        let mut line = format!("  {seed}  {f_ipopt:.6e} ({s_ipopt:.2} s)");
        for (b, solver) in backends.iter().enumerate() {
            // From the same start: within the iteration budget the augmented Lagrangian may
            // not have reached feasibility yet (a limit status without a solution).
            let (f, _, s, status) = solve(solver, WarmStart::primal(x0.clone()));
            if status.has_solution() {
                best[b + 1] = best[b + 1].min(f);
            }
            // From IPOPT's local optimum and multipliers: a solution, within 1% (checked by
            // the caller).
            let (f_warm, _, _, warm_status) = solve(solver, ipopt_solution.clone());
            assert!(
                warm_status.has_solution(),
                "{name}, seed {seed}, {solver} from IPOPT's point: {warm_status:?}"
            );
            from_ipopt[b] = from_ipopt[b].max(f_warm / f_ipopt);
            line += &format!("  {solver}: {f:.6e} ({s:.2} s, {status:?}), {f_warm:.6e}");
        }
        eprintln!("{line}");
    }
    for (solver, b) in backends.iter().zip(&best[1..]) {
        eprintln!(
            "  best: ipopt {:.8e}, {solver} {b:.8e} (ratio {:.4})",
            best[0],
            b / best[0]
        );
    }
    Comparison { best, from_ipopt }
}

/// Runs `examples/<example>` cut down to one split, two starts and 1000 iterations, and checks
/// that every solve was made by `solver` and reaches a test R squared above 0.6.
pub fn run_cut_down_example(example: &str, solver: &str) {
    let example = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(example);
    let text = std::fs::read_to_string(&example)
        .unwrap()
        .replace("repeats = 10", "repeats = 1")
        .replace("starts = 20", "starts = 2")
        .replace(
            "time_limit = 60.0",
            "time_limit = 60.0\niteration_limit = 1000",
        );
    let config = glassbox::experiment::ExperimentConfig::parse(&example, &text).unwrap();
    assert_eq!(config.solver.name, solver);
    let dir = tempfile::tempdir().unwrap();
    let run = glassbox::experiment::run(&config, dir.path(), false, false).unwrap();
    // The CART start, the two random starts and the cross-validated choice's line.
    assert_eq!(run.records.len(), 4);
    for r in &run.records {
        let record = serde_json::to_value(r).unwrap();
        assert_eq!(record["solver"], solver);
        let r2 = record["test_r2"].as_f64().unwrap();
        assert!(r2 > 0.6, "test R2 {r2}");
    }
}
