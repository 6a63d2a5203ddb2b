//! The regression path of the experiment runner: the counterpart of the classification
//! `run_formulation` / `fit_split` for formulations that implement
//! [`NlpRegressorFormulation`] (S-ORRT). Splits are seeded random holdouts
//! ([`data::random_split`]: stratification does not apply to a numeric target), each split
//! is fitted by multistart (best training objective selected), and every solve appends one
//! line to `results.jsonl` with the regression metrics (`train_r2`, `test_r2`, `train_mse`,
//! `test_mse`) and, where the formulation knows them, the lambda bounds of its sparsest model.

use super::{
    run_progress_bar, Carry, ExperimentConfig, FittedSplit, RegressionMetrics, ResultsWriter,
    RunOutcome, SolveRecord,
};
use crate::data::{self, MinMaxScaler, RegressionData, Table};
use crate::formulation::{NlpRegressorFormulation, TrainingRows};
use crate::metrics;
use crate::model::Regressor;
use crate::nlp::NlpProblem;
use crate::{registry, Result, WarmStart};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Runs a regression formulation on `table` (see the module comment).
pub(super) fn run_regression<F: NlpRegressorFormulation>(
    config: &ExperimentConfig,
    formulation: &F,
    table: &Table,
    fixed_train: Option<usize>,
    out_dir: &Path,
    results_path: &Path,
    progress: bool,
) -> Result<RunOutcome> {
    let data = table.encode_regression()?;
    formulation.check(table, data.n_features())?;
    let solver = registry::nlp_solver(&config.solver.name, &config.solver.options)?;
    let warm_model = match &config.multistart.warm_start {
        Some(p) => Some(formulation.load_model(&config.resolve(p))?),
        None => None,
    };
    let splits = config.splits(data.n_samples(), fixed_train, |seed| {
        data::random_split(data.n_samples(), config.split.test_fraction, seed)
    })?;

    let mut writer = ResultsWriter::create(out_dir, results_path)?;
    let bar = run_progress_bar(config, splits.len(), warm_model.is_some(), progress);
    for (r, (train, test)) in splits.iter().enumerate() {
        let split = Split {
            index: r,
            seed: config.split.seed + r as u64,
            train,
            test,
        };
        let fitted = fit_split(
            config,
            formulation,
            &*solver,
            (table, &data),
            &split,
            warm_model.as_ref(),
            &bar,
            &Carry::default(),
        )?;
        writer.write_split(r, formulation.name(), fitted.records, fitted.model.as_ref())?;
    }
    bar.finish_and_clear();
    Ok(writer.finish())
}

/// One split: its index and seed, its training and test rows.
pub(super) struct Split<'a> {
    pub index: usize,
    pub seed: u64,
    pub train: &'a [usize],
    pub test: &'a [usize],
}

/// Multistart on one split: every start solved and recorded, the best objective selected.
/// `carry` (the experiment engine's) replaces the seeded random starts by the points of the
/// previous cell of a warm path and may stop the multistart between solves.
#[allow(clippy::too_many_arguments)]
pub(super) fn fit_split<F: NlpRegressorFormulation>(
    config: &ExperimentConfig,
    formulation: &F,
    solver: &dyn crate::NlpSolver,
    (table, data): (&Table, &RegressionData),
    split: &Split<'_>,
    warm_model: Option<&F::Model>,
    bar: &indicatif::ProgressBar,
    carry: &Carry<'_>,
) -> Result<FittedSplit<F::Model>> {
    let r = split.index;
    let train_data = data.rows(split.train);
    let test_data = data.rows(split.test);
    let scaler = MinMaxScaler::fit(&train_data.x);
    let x_train = Arc::new(scaler.transform(&train_data.x));
    let problem = formulation.problem(
        x_train,
        Arc::new(train_data.y.clone()),
        TrainingRows {
            table,
            rows: split.train,
        },
    )?;
    let bounds = formulation.lambda_bounds(&problem);
    let mut starts_list: Vec<(Vec<f64>, Option<u64>)> = (0..config.multistart.starts)
        .map(|s| {
            let seed = config
                .multistart
                .seed
                .wrapping_mul(1_000_003)
                .wrapping_add((r * 1_000 + s) as u64);
            if let Some(carried) = carry.starts {
                return (carried[s].clone(), Some(seed));
            }
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            (formulation.random_start(&problem, &mut rng), Some(seed))
        })
        .collect();
    if let Some(model) = warm_model {
        let x0 = match carry.starts {
            Some(carried) => carried[starts_list.len()].clone(),
            None => formulation.warm_start(model, &problem, &scaler)?,
        };
        starts_list.push((x0, None));
    }
    super::check_carried_sizes(&starts_list, problem.num_variables())?;
    let params = formulation.reported_params(&problem);
    let mut records = Vec::new();
    let mut points = Vec::new();
    let mut best: Option<(f64, usize, F::Model)> = None;
    for (s, (x0, seed)) in starts_list.into_iter().enumerate() {
        if carry.stop.is_some_and(|stop| stop()) {
            return Ok(FittedSplit {
                records,
                model: None,
                points,
                interrupted: true,
            });
        }
        let options = config
            .solver
            .options
            .with_warm_start(Some(WarmStart::primal(x0.clone())));
        let started = Instant::now();
        let result = solver.solve(&problem, &options)?;
        let seconds = started.elapsed().as_secs_f64();
        bar.inc(1);
        let nan = f64::NAN;
        let (mut m, mut dl, mut dg, mut model) = (
            RegressionMetrics {
                train_r2: nan,
                test_r2: nan,
                train_mse: nan,
                test_mse: nan,
                lambda_local_bound: bounds.map(|b| b.0),
                lambda_global_bound: bounds.map(|b| b.1),
            },
            nan,
            nan,
            None,
        );
        if result.primal.len() == problem.num_variables() {
            let fitted = formulation.model(
                &problem,
                &result.primal,
                scaler.clone(),
                table.target_name.clone(),
                data.encoding.clone(),
            );
            (dl, dg) = formulation.sparsity(&fitted);
            let train_pred = fitted.predict(&train_data.x);
            let test_pred = fitted.predict(&test_data.x);
            m.train_r2 = metrics::r_squared(&train_data.y, &train_pred);
            m.test_r2 = metrics::r_squared(&test_data.y, &test_pred);
            m.train_mse = metrics::mean_squared_error(&train_data.y, &train_pred);
            m.test_mse = metrics::mean_squared_error(&test_data.y, &test_pred);
            model = Some(fitted);
        }
        if let (Some(obj), Some(model)) = (result.objective, model) {
            if result.status.has_solution() && best.as_ref().is_none_or(|(b, _, _)| obj < *b) {
                best = Some((obj, s, model));
            }
        }
        points.push(if result.primal.len() == problem.num_variables() {
            result.primal.clone()
        } else {
            x0
        });
        records.push(SolveRecord {
            start: s,
            seed,
            regression: Some(m),
            delta_local: dl,
            delta_global: dg,
            ..SolveRecord::blank(
                config,
                formulation.name(),
                params,
                r,
                split.seed,
                (split.train.len(), split.test.len()),
            )
            .solved(&result, seconds)
        });
    }
    let model = best.map(|(_, s, model)| {
        records[s].selected = true;
        model
    });
    Ok(FittedSplit {
        records,
        model,
        points,
        interrupted: false,
    })
}

/// The readable summary of a regression run: one row per split (its selected start), then
/// the means.
pub(super) fn summary_table(records: &[SolveRecord]) -> String {
    use super::{mean_std, solves_line};
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>5} {:>10} {:>9} {:>9} {:>10} {:>8} {:>8} {:>12} {:>22}",
        "split",
        "objective",
        "train_r2",
        "test_r2",
        "test_mse",
        "delta_L",
        "delta_G",
        "sec/start",
        "status (selected)"
    );
    let splits: std::collections::BTreeSet<usize> = records.iter().map(|r| r.split).collect();
    let (mut tests, mut trains, mut mses, mut dls, mut dgs) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut bounds = None;
    for s in &splits {
        let of_split: Vec<&SolveRecord> = records.iter().filter(|r| r.split == *s).collect();
        let secs: Vec<f64> = of_split.iter().map(|r| r.solve_seconds).collect();
        let Some(sel) = of_split.iter().find(|r| r.selected) else {
            let _ = writeln!(out, "{s:>5} no start returned a solution");
            continue;
        };
        let Some(m) = &sel.regression else { continue };
        tests.push(m.test_r2);
        trains.push(m.train_r2);
        mses.push(m.test_mse);
        dls.push(sel.delta_local);
        dgs.push(sel.delta_global);
        if bounds.is_none() {
            bounds = m.lambda_local_bound.zip(m.lambda_global_bound);
        }
        let _ = writeln!(
            out,
            "{:>5} {:>10.5} {:>9.4} {:>9.4} {:>10.4} {:>8.1} {:>8.1} {:>12.3} {:>22}",
            s,
            sel.objective.unwrap_or(f64::NAN),
            m.train_r2,
            m.test_r2,
            m.test_mse,
            sel.delta_local,
            sel.delta_global,
            secs.iter().sum::<f64>() / secs.len() as f64,
            sel.status
        );
    }
    let (test_mean, test_std) = mean_std(&tests);
    let _ = writeln!(
        out,
        "mean over {} splits: test R2 {:.4} (sd {:.4}), train R2 {:.4}, test MSE {:.4}, delta_L {:.1}%, delta_G {:.1}%",
        tests.len(),
        test_mean,
        test_std,
        mean_std(&trains).0,
        mean_std(&mses).0,
        mean_std(&dls).0,
        mean_std(&dgs).0
    );
    if let Some((local, global)) = bounds {
        let _ = writeln!(
            out,
            "lambda bounds of the sparsest tree (first split): lambda_L {local:.6}, lambda_G {global:.6}"
        );
    }
    out.push_str(&solves_line(
        records.iter().map(|r| (r.solve_seconds, r.status.as_str())),
    ));
    out
}
