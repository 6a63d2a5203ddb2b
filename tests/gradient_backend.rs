//! The gradient backend `"lbfgs"` (projected L-BFGS + augmented Lagrangian on argmin) on
//! S-ORCT, iris, depth 2, against IPOPT from the same starting points, and through a config
//! (`glassbox run examples/sorct_iris_lbfgs.toml`). The NLP conformance suite
//! (`tests/conformance_nlp.rs`) covers the backend on small problems with known optima.
//!
//! S-ORCT with gamma = 512 is strongly nonconvex: from one start two local methods can end in
//! different local optima (both are: each backend, warm-started at the other's point, stays
//! there), and which one is hard to predict (a change in how the starts are drawn moves many
//! starts from one local optimum to another, for both backends). So per start the checks are that lbfgs's point is
//! feasible to 1e-6 and that IPOPT accepts it as a local optimum; that where both end in the
//! same local optimum they agree to 1e-4; that over 200 starts (the config test) lbfgs is
//! within 1% of IPOPT or lower on at least 75% of them; and that over the starts its best
//! objective is within 1% of IPOPT's best (per split, in the config test).
//!
//! The per-start tests give lbfgs its start as a point to keep (`WarmStart::primal`), so
//! they check the direct path; the config test runs the engine, whose random starts explore
//! (`WarmStart::exploring`), so there lbfgs's default path runs both the direct and the
//! barrier path from each random start and keeps the lower.
//!
//! Run with `-- --nocapture` to see the objectives, ratios and times per start (times are
//! printed, not asserted: numbers come from benchmarks).

#[path = "common/best_objectives.rs"]
mod best_objectives;
#[path = "common/grid_run.rs"]
mod grid_run;
#[path = "common/iris_split.rs"]
mod iris_split;

use best_objectives::best_objectives;
use glassbox::experiment::{self, ExperimentConfig};
use glassbox::formulations::sorct::{starts, SorctConfig, SorctProblem};
use glassbox::nlp::NlpProblem;
use glassbox::{registry, SolveOptions, SolveResult, WarmStart};
use iris_split::iris_train;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

/// The training part of the first split of iris, scaled to [0, 1].
/// The largest violation of a bound or a constraint at `x`, from the problem itself.
fn max_violation(problem: &dyn NlpProblem, x: &[f64]) -> f64 {
    let (xl, xu) = problem.variable_bounds();
    let (gl, gu) = problem.constraint_bounds();
    let mut g = vec![0.0; problem.num_constraints()];
    problem.constraints(x, &mut g);
    let mut worst: f64 = 0.0;
    for (v, (l, u)) in x.iter().zip(xl.iter().zip(&xu)) {
        worst = worst.max(l - v).max(v - u);
    }
    for (v, (l, u)) in g.iter().zip(gl.iter().zip(&gu)) {
        assert!(v.is_finite());
        worst = worst.max(l - v).max(v - u);
    }
    worst
}

fn solve(solver: &str, problem: &SorctProblem, warm_start: WarmStart) -> SolveResult {
    let options = SolveOptions::default().with_warm_start(Some(warm_start));
    registry::nlp_solver(solver, &options)
        .unwrap()
        .solve(problem, &options)
        .unwrap()
}

/// One start solved by both backends.
struct Row {
    seed: u64,
    ipopt: SolveResult,
    lbfgs: SolveResult,
}

impl Row {
    fn ratio(&self) -> f64 {
        self.lbfgs.objective.unwrap() / self.ipopt.objective.unwrap()
    }
}

/// Solves `config` on iris from the starts of `seeds` with both backends, checks every lbfgs
/// result (a solution, feasible to 1e-6, a local optimum IPOPT accepts) and prints a table.
fn compare(name: &str, config: &SorctConfig, seeds: std::ops::Range<u64>) -> Vec<Row> {
    let (x, y) = iris_train();
    let problem = config.problem(Arc::new(x), Arc::new(y), 3).unwrap();
    let mut rows = Vec::new();
    eprintln!(
        "{name}: seed, IPOPT objective (s, iterations), lbfgs objective (s, iterations), ratio"
    );
    for seed in seeds {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x0 = starts::random_start(&problem, config.initialization, &mut rng);
        let ipopt = solve("ipopt", &problem, WarmStart::primal(x0.clone()));
        let lbfgs = solve("lbfgs", &problem, WarmStart::primal(x0));
        assert!(ipopt.status.has_solution(), "IPOPT: {}", ipopt.raw_status);
        assert!(
            lbfgs.status.has_solution(),
            "{name}, seed {seed}: {} ({})",
            lbfgs.status,
            lbfgs.raw_status
        );
        let f = lbfgs.objective.unwrap();
        assert!(
            (f - problem.objective(&lbfgs.primal)).abs() <= 1e-12 * f.abs().max(1.0),
            "the objective is not the objective at the point"
        );
        let violation = max_violation(&problem, &lbfgs.primal);
        assert!(
            violation <= 1e-6,
            "{name}, seed {seed}: violation {violation}"
        );
        assert!((violation - lbfgs.max_violation.unwrap()).abs() <= 1e-12);
        // IPOPT, started at lbfgs's point and multipliers, stays there: a local optimum.
        let check = solve("ipopt", &problem, lbfgs.warm_start());
        let drift = (check.objective.unwrap() - f).abs() / f.abs();
        assert!(
            drift <= 1e-4,
            "{name}, seed {seed}: IPOPT moved from lbfgs's {f} to {:?}",
            check.objective
        );
        let row = Row { seed, ipopt, lbfgs };
        eprintln!(
            "  {:>2}  {:.8e} ({:.3} s, {:>3})  {:.8e} ({:.3} s, {:>4})  {:.4}  {}",
            row.seed,
            row.ipopt.objective.unwrap(),
            row.ipopt.wall_seconds,
            row.ipopt.iterations,
            f,
            row.lbfgs.wall_seconds,
            row.lbfgs.iterations,
            row.ratio(),
            row.lbfgs.status
        );
        rows.push(row);
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    eprintln!(
        "  median seconds per start: IPOPT {:.4}, lbfgs {:.4}",
        median(rows.iter().map(|r| r.ipopt.wall_seconds).collect()),
        median(rows.iter().map(|r| r.lbfgs.wall_seconds).collect())
    );
    rows
}

/// Over the starts, lbfgs's best objective is within 1% of IPOPT's best (or better).
fn assert_best_within_one_percent(name: &str, rows: &[Row]) {
    let best = |f: fn(&Row) -> f64| rows.iter().map(f).fold(f64::INFINITY, f64::min);
    let ipopt = best(|r| r.ipopt.objective.unwrap());
    let lbfgs = best(|r| r.lbfgs.objective.unwrap());
    assert!(
        lbfgs <= 1.01 * ipopt,
        "{name}: best lbfgs objective {lbfgs} vs IPOPT's {ipopt}"
    );
}

#[test]
fn sorct_iris_lambda_local_same_starts_as_ipopt() {
    let config = SorctConfig {
        lambda_local: 0.005,
        ..Default::default()
    };
    let rows = compare("S-ORCT iris D=2, lambda_L = 0.005", &config, 0..8);
    assert_best_within_one_percent("lambda_L = 0.005", &rows);
    let within = rows
        .iter()
        .filter(|r| (r.ratio() - 1.0).abs() <= 0.01)
        .count();
    let not_worse = rows.iter().filter(|r| r.ratio() <= 1.01).count();
    eprintln!("  within 1% of IPOPT: {within} of 8; not worse by more than 1%: {not_worse} of 8");
    // Which local optimum a start ends in is hard to predict, so the share of starts is
    // asserted over the 200 starts of the config test below; here only that the two
    // methods agree on some starts.
    assert!(
        within >= 2,
        "lbfgs within 1% of IPOPT on {within} of 8 starts"
    );
    // Where both end in the same local optimum, they agree far closer than 1%.
    for row in rows.iter().filter(|r| (r.ratio() - 1.0).abs() <= 0.01) {
        assert!(
            (row.ratio() - 1.0).abs() <= 1e-4,
            "seed {}: ratio {}",
            row.seed,
            row.ratio()
        );
    }
}

#[test]
fn sorct_iris_performance_constraints_and_lambda_zero() {
    let with_rho = SorctConfig {
        rho: vec![0.1],
        ..Default::default()
    };
    let rows = compare("S-ORCT iris D=2, rho = 0.1", &with_rho, 0..6);
    assert_best_within_one_percent("rho = 0.1", &rows);
    let rows = compare("S-ORCT iris D=2, lambda = 0", &SorctConfig::default(), 0..6);
    assert_best_within_one_percent("lambda = 0", &rows);
}

#[test]
fn glassbox_run_with_lbfgs_from_a_config() {
    let example: PathBuf =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sorct_iris_lbfgs.toml");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("lbfgs");
    let output = Command::new(env!("CARGO_BIN_EXE_glassbox"))
        .args([
            "run",
            example.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lbfgs: Vec<serde_json::Value> = std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(out.join("models/split-0.json").exists());
    for record in &lbfgs {
        assert_eq!(record["solver"], "lbfgs");
        let status = record["status"].as_str().unwrap();
        assert!(
            ["locally_optimal", "other_limit_feasible"].contains(&status),
            "status {status}: {}",
            record["raw_status"]
        );
    }

    // The same config with IPOPT (same splits, same seeded starts), in process.
    let text = std::fs::read_to_string(&example)
        .unwrap()
        .replace("name = \"lbfgs\"", "name = \"ipopt\"");
    let config = ExperimentConfig::parse(&example, &text).unwrap();
    let ipopt = experiment::run(&config, &dir.path().join("ipopt"), false, false).unwrap();
    let ipopt: Vec<serde_json::Value> = ipopt
        .records
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    assert_eq!(ipopt.len(), lbfgs.len());

    let (mut within, mut better, mut worse) = (0, 0, 0);
    for (a, b) in lbfgs.iter().zip(&ipopt) {
        assert_eq!((&a["split"], &a["start"]), (&b["split"], &b["start"]));
        let ratio = a["objective"].as_f64().unwrap() / b["objective"].as_f64().unwrap();
        if (ratio - 1.0).abs() <= 0.01 {
            within += 1;
        } else if ratio < 1.0 {
            better += 1;
        } else {
            worse += 1;
        }
    }
    eprintln!(
        "per start: lbfgs within 1% of IPOPT {within}, better {better}, worse {worse} (of {})",
        lbfgs.len()
    );
    // From the same start, lbfgs ends within 1% of IPOPT or lower on at least 3 starts in 4
    // (about 90% in practice; the rest are other local optima, see the module comment).
    assert!(
        4 * (within + better) >= 3 * lbfgs.len(),
        "lbfgs worse than IPOPT by more than 1% on {worse} of {} starts",
        lbfgs.len()
    );
    for ((split, f_lbfgs), (_, f_ipopt)) in best_objectives(&lbfgs)
        .into_iter()
        .zip(best_objectives(&ipopt))
    {
        eprintln!(
            "split {split}: best objective lbfgs {f_lbfgs:.8e}, IPOPT {f_ipopt:.8e}, ratio {:.5}",
            f_lbfgs / f_ipopt
        );
        assert!(
            f_lbfgs <= 1.01 * f_ipopt,
            "split {split}: lbfgs {f_lbfgs} vs IPOPT {f_ipopt}"
        );
    }
    let median = |records: &[serde_json::Value]| {
        let mut v: Vec<f64> = records
            .iter()
            .map(|r| r["solve_seconds"].as_f64().unwrap())
            .collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    eprintln!(
        "median seconds per start: lbfgs {:.4}, IPOPT {:.4}",
        median(&lbfgs),
        median(&ipopt)
    );
}

/// A first penalty above the cap on the penalty (1e20) can only end the solve as a
/// numerical error once an outer iteration neither converges nor stops at a limit (it
/// ended 1 of 3 iris starts so after 10,000 iterations): the config is refused, naming the
/// option, the value and the range. The cap itself is taken.
#[test]
fn a_first_penalty_above_the_cap_is_refused() {
    let config = |value: &str| {
        let text = format!(
            "[data]\npath = \"{}/../shared/datasets/iris.csv\"\n[formulation]\nname = \"sorct\"\n\
             depth = 2\n[solver]\nname = \"lbfgs\"\nraw = {{ penalty_initial = {value} }}\n",
            env!("CARGO_MANIFEST_DIR")
        );
        ExperimentConfig::parse(Path::new("c.toml"), &text)
    };
    for (value, shown) in [("1e21", "1e21"), ("1e300", "1e300"), ("-2", "-2")] {
        let err = config(value).unwrap_err().to_string();
        for needle in ["penalty_initial", "(0, 1e20]", shown] {
            assert!(err.contains(needle), "{value}: {err}");
        }
    }
    config("1e20").unwrap();
}

/// The grid summary's multistart spread (best_obj, obj_range, at_best) counts only starts
/// that returned a solution: with 50 iterations every lbfgs start ends without one, and the
/// summary showed best_obj 0.00182 (an infeasible point's objective) beside test_acc NaN.
#[test]
fn grid_summary_spread_leaves_out_starts_without_a_solution() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("grid.toml");
    let text = format!(
        "[data]\npath = \"{}/../shared/datasets/iris.csv\"\n[split]\ntest_fraction = 0.25\n\
         repeats = 1\nseed = 1\n[multistart]\nstarts = 2\nseed = 1\n[formulation]\n\
         name = \"sorct\"\ndepth = 2\n[solver]\nname = [\"ipopt\", \"lbfgs\"]\n\
         time_limit = 30.0\niteration_limit = 50\n",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::write(&path, text).unwrap();
    let outcome = grid_run::run_grid(&path, dir.path().join("out"));
    let lines: Vec<serde_json::Value> =
        std::fs::read_to_string(dir.path().join("out/results.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    // The premise: no lbfgs start has a solution, yet each wrote an objective.
    let lbfgs: Vec<_> = lines.iter().filter(|l| l["solver"] == "lbfgs").collect();
    assert!(!lbfgs.is_empty());
    for l in &lbfgs {
        assert!(
            l["status"].as_str().unwrap().ends_with("_no_solution"),
            "{}",
            l["status"]
        );
        assert!(l["objective"].is_f64());
    }
    let row = |solver: &str| -> Vec<String> {
        let line = outcome
            .summary
            .lines()
            .find(|l| l.ends_with(&format!("solver={solver}")))
            .unwrap_or_else(|| panic!("{}", outcome.summary));
        line.split_whitespace().map(str::to_string).collect()
    };
    // cell splits test_acc delta_L delta_G best_obj obj_range at_best sec/solve cell
    let lbfgs = row("lbfgs");
    assert_eq!(lbfgs[5..8], ["NaN", "NaN", "0.00"], "{}", outcome.summary);
    // IPOPT's cell: a best objective among the starts with a solution.
    let best: f64 = row("ipopt")[5].parse().unwrap();
    assert!(best.is_finite() && best > 0.0, "{}", outcome.summary);
}
