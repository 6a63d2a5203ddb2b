//! The `dp` backend on a binarized data set, for `benches/compare_dp.py`: reads a CSV of 0/1
//! feature columns with the class (an integer `0..K`) in the last column, solves the
//! misclassification-optimal tree at each depth asked for, and prints one JSON line per
//! solve with the objective, status, bound and the seconds measured inside this process
//! (building the problem from the parsed matrix and solving it; reading the file is not
//! counted).
//!
//!     cargo run --release --example tree_search_bench -- FILE DEPTHS TIME_LIMIT REPEATS [BACKEND]
//!
//! e.g. `... -- monks1.csv 2,3,4 60 3`. BACKEND is `dp` (the default) or a MILP backend
//! (`highs`, `cbc`): then the same instance is solved as glassbox's OCT MILP (axis-aligned,
//! alpha 0, N_min 1, on the 0/1 columns, which OCT's scaling leaves as they are; a split
//! `x_j >= 1` is the binary column's split, so the optima agree), from OCT's greedy MIP start,
//! one thread, relative gap 0; objective and bound are reported in misclassifications (OCT's
//! objective times its baseline Lhat), and the seconds count building the MILP and solving.

use glassbox::formulations::oct::{self, OctParams, SplitKind};
use glassbox::registry;
use glassbox::tree_search::TreeSearchProblem;
use glassbox::{GlassboxError, Result, SolveOptions, SolveResult};
use nalgebra::DMatrix;
use std::sync::Arc;
use std::time::Instant;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (file, depths, limit, repeats, backend) = match args.as_slice() {
        [f, d, l, r] => (f, d, l, r, "dp"),
        [f, d, l, r, b] => (f, d, l, r, b.as_str()),
        _ => {
            return Err(GlassboxError::Config(
                "usage: tree_search_bench FILE DEPTHS(e.g. 2,3,4) TIME_LIMIT REPEATS [BACKEND]"
                    .to_string(),
            ))
        }
    };
    let config = |what: &str, value: &str| {
        GlassboxError::Config(format!("{what} must be a number, got '{value}'"))
    };
    let depths: Vec<usize> = depths
        .split(',')
        .map(|d| d.parse().map_err(|_| config("a depth", d)))
        .collect::<Result<_>>()?;
    let limit: f64 = limit.parse().map_err(|_| config("TIME_LIMIT", limit))?;
    let repeats: usize = repeats.parse().map_err(|_| config("REPEATS", repeats))?;
    let (names, rows, labels) = read(file)?;
    let n_classes = labels.iter().max().map_or(2, |&m| (m + 1).max(2));
    for &depth in &depths {
        for repeat in 0..repeats {
            let clock = Instant::now();
            let problem = TreeSearchProblem::from_rows(&rows, labels.clone(), n_classes, depth)?
                .with_feature_names(names.clone())?;
            let result = if backend == "dp" {
                let options = SolveOptions {
                    time_limit: Some(limit),
                    ..SolveOptions::default()
                };
                let solver = registry::tree_search_solver("dp", &options)?;
                solver.solve(&problem, &options)?
            } else {
                solve_oct_milp(backend, &rows, &labels, n_classes, depth, limit)?
            };
            let seconds = clock.elapsed().as_secs_f64();
            let line = serde_json::json!({
                "file": file,
                "backend": backend,
                "depth": depth,
                "repeat": repeat,
                "rows": problem.n_rows(),
                "features": problem.n_features(),
                "status": result.status.as_str(),
                "objective": result.objective,
                "bound": result.dual_bound,
                "gap": result.gap,
                "seconds": seconds,
                "solve_seconds": result.wall_seconds,
                "raw_status": result.raw_status,
            });
            println!("{line}");
        }
    }
    Ok(())
}

/// The instance as glassbox's OCT MILP on MILP backend `backend` (see the module
/// documentation), objective and bound in misclassifications.
fn solve_oct_milp(
    backend: &str,
    rows: &[Vec<bool>],
    labels: &[usize],
    n_classes: usize,
    depth: usize,
    limit: f64,
) -> Result<SolveResult> {
    let p = rows.first().map_or(0, Vec::len);
    let x = DMatrix::from_fn(rows.len(), p, |i, j| f64::from(u8::from(rows[i][j])));
    let params = OctParams {
        depth,
        alpha: 0.0,
        min_leaf: 1,
        kind: SplitKind::Axis,
    };
    let problem = oct::build(
        oct::NAME,
        Arc::new(x),
        Arc::new(labels.to_vec()),
        n_classes,
        params,
    )?;
    let options = SolveOptions {
        time_limit: Some(limit),
        relative_gap: Some(0.0),
        threads: Some(1),
        ..SolveOptions::default()
    }
    .with_warm_start(Some(glassbox::WarmStart::primal(oct::greedy_start(
        &problem,
    ))));
    let solver = registry::milp_solver(backend, &options)?;
    let mut result = solver.solve(&problem.milp, &options)?;
    result.objective = result.objective.map(|v| v * problem.baseline);
    result.dual_bound = result.dual_bound.map(|v| v * problem.baseline);
    Ok(result)
}

/// A binarized data set: feature names, rows of 0/1 values, class indices.
type Binarized = (Vec<String>, Vec<Vec<bool>>, Vec<usize>);

/// The feature names, rows of 0/1 values and labels of a binarized CSV.
fn read(file: &str) -> Result<Binarized> {
    let text = std::fs::read_to_string(file).map_err(|e| GlassboxError::io(file, e))?;
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .ok_or_else(|| GlassboxError::data(file, "empty file"))?
        .split(',')
        .map(str::to_string)
        .collect();
    let n_features = header.len().saturating_sub(1);
    let mut rows = Vec::new();
    let mut labels = Vec::new();
    for (i, line) in lines.enumerate().filter(|(_, l)| !l.is_empty()) {
        let cells: Vec<&str> = line.split(',').collect();
        if cells.len() != header.len() {
            return Err(GlassboxError::data(
                file,
                format!(
                    "line {} has {} cells, the header {}",
                    i + 2,
                    cells.len(),
                    header.len()
                ),
            ));
        }
        let row = cells[..n_features]
            .iter()
            .enumerate()
            .map(|(j, c)| match *c {
                "0" => Ok(false),
                "1" => Ok(true),
                other => Err(GlassboxError::data(
                    file,
                    format!(
                        "line {}, column '{}': '{other}' is not 0 or 1",
                        i + 2,
                        header[j]
                    ),
                )),
            })
            .collect::<Result<Vec<bool>>>()?;
        let label = cells[n_features].parse().map_err(|_| {
            GlassboxError::data(
                file,
                format!(
                    "line {}: label '{}' is not a class index",
                    i + 2,
                    cells[n_features]
                ),
            )
        })?;
        rows.push(row);
        labels.push(label);
    }
    Ok((header[..n_features].to_vec(), rows, labels))
}
