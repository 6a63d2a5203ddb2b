//! Build time against solve time of OLCT (`loss_tree`, `loss = "logloss"`, V0, depth 2,
//! lambda 1) on evenly spaced rows of breast_cancer_wisconsin (p = 30): for N rows, the
//! median of 5 builds of the MILP, the greedy logistic start (IPOPT), and one HiGHS solve
//! from that start (1 thread, `TIME_LIMIT` seconds, default 60), with its status and gap.
//!
//!     cargo run --release --example olct_build_vs_solve
//!
//! The point (the acceptance): building the model is never the bottleneck.

use glassbox::data::{CsvOptions, MinMaxScaler, Table};
use glassbox::formulation::MilpClassifierFormulation;
use glassbox::formulations::logloss_tangents::TangentSet;
use glassbox::formulations::loss_tree::{Loss, LossTreeConfig};
use glassbox::{registry, SolveOptions, WarmStart};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

fn main() -> glassbox::Result<()> {
    let limit: f64 = std::env::var("TIME_LIMIT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60.0);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/datasets/breast_cancer_wisconsin.csv");
    let data = Table::from_csv(&path, &CsvOptions::default())?.encode_classification()?;
    let config = LossTreeConfig {
        depth: 2,
        loss: Loss::Logloss,
        tangents: TangentSet::V0,
        lambda: 1.0,
        ..Default::default()
    };
    let nlp = registry::nlp_solver("ipopt", &SolveOptions::default())?;
    let options = SolveOptions {
        time_limit: Some(limit),
        threads: Some(1),
        ..Default::default()
    };
    let highs = registry::milp_solver("highs", &options)?;
    println!("| N | columns | rows | nonzeros | build s (median of 5) | greedy start s | HiGHS s | status | gap | solve / build |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for n in [50, 100, 200, 400] {
        let total = data.n_samples();
        let idx: Vec<usize> = (0..n).map(|k| k * total / n).collect();
        let part = data.rows(&idx);
        let x = Arc::new(MinMaxScaler::fit(&part.x).transform(&part.x));
        let mut builds = Vec::new();
        let mut problem = None;
        for _ in 0..5 {
            let started = Instant::now();
            problem = Some(config.build(x.clone(), &part.y)?);
            builds.push(started.elapsed().as_secs_f64());
        }
        builds.sort_by(f64::total_cmp);
        let build = builds[2];
        let problem = problem.expect("built");
        let started = Instant::now();
        let start = config.start_with_nlp(&problem, nlp.as_ref())?;
        let start_seconds = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let result = highs.solve(
            &problem.milp,
            &options.with_warm_start(start.map(WarmStart::primal)),
        )?;
        let solve = started.elapsed().as_secs_f64();
        println!(
            "| {n} | {} | {} | {} | {build:.4} | {start_seconds:.2} | {solve:.1} | {} | {} | {:.0} |",
            problem.milp.num_columns(),
            problem.milp.num_rows(),
            problem.milp.num_nonzeros(),
            result.status,
            result.gap.map_or("-".into(), |g| format!("{g:.3}")),
            solve / build
        );
    }
    Ok(())
}
