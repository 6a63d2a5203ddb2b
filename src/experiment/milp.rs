//! The MILP path of the experiment runner, for formulations that implement
//! [`MilpClassifierFormulation`] (OCT, OCT-H): on every split of the `[split]` protocol the
//! MILP is built on the scaled training rows and solved once by the MILP backend the config
//! names, from a MIP start (the model of `multistart.warm_start` if given, else the
//! formulation's own heuristic start, made with the formulation's NLP backend when it names
//! one, e.g. OLCT's greedy logistic tree). The model read from the solution may then be
//! refined with that backend (OLCT's last layer, Remark 1). Each solve appends one line to `results.jsonl`, with
//! the classification metrics and the MILP statistics `mip_gap`, `dual_bound` and `nodes`;
//! the split's model is saved when the backend returned a solution. `multistart.starts` and
//! `multistart.seed` do not apply (a MILP backend searches globally).

use super::{progress_bar, ExperimentConfig, MilpStats, ResultsWriter, RunOutcome, SolveRecord};
use crate::data::{ClassificationData, MinMaxScaler};
use crate::formulation::MilpClassifierFormulation;
use crate::metrics;
use crate::model::Classifier;
use crate::{registry, Result, WarmStart};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Runs a MILP classification formulation (see the module comment).
pub(super) fn run_milp_formulation<F: MilpClassifierFormulation>(
    config: &ExperimentConfig,
    formulation: &F,
    data: &ClassificationData,
    fixed_train: Option<usize>,
    out_dir: &Path,
    results_path: &Path,
    progress: bool,
) -> Result<RunOutcome> {
    formulation.check(data.n_features(), data.n_classes())?;
    let solver = registry::milp_solver(&config.solver.name, &config.solver.options)?;
    let nlp = match formulation.nlp_backend() {
        Some(name) => Some(registry::nlp_solver(name, &crate::SolveOptions::default())?),
        None => None,
    };
    let warm_model = match &config.multistart.warm_start {
        Some(p) => Some(formulation.load_model(&config.resolve(p))?),
        None => None,
    };
    let splits = config.splits(data.n_samples(), fixed_train, |seed| {
        data.stratified_split(config.split.test_fraction, seed)
    })?;

    let mut writer = ResultsWriter::create(out_dir, results_path)?;
    let bar = progress_bar(splits.len() as u64, progress);
    for (r, (train, test)) in splits.iter().enumerate() {
        let solved = solve_split(
            config,
            formulation,
            (&*solver, nlp.as_deref()),
            data,
            (train, test),
            (r, config.split.seed + r as u64),
            warm_model.as_ref(),
            None,
        )?;
        bar.inc(1);
        writer.write_split(
            r,
            formulation.name(),
            vec![solved.record],
            solved.model.as_ref(),
        )?;
    }
    bar.finish_and_clear();
    Ok(writer.finish())
}

/// What one MILP solve on one split produced.
pub(super) struct MilpSplit<M> {
    /// Its results line.
    pub record: SolveRecord,
    /// The model read from the solution (refined where the formulation refines).
    pub model: Option<M>,
    /// The solution (the MIP start when the backend returned none; empty without either):
    /// what a warm-started grid path carries to the next cell.
    pub point: Vec<f64>,
}

/// Solves split `r` (seeded `split_seed`, rows `train` / `test`) once, with `solvers` (the
/// MILP backend and the formulation's NLP backend, if it names one). The MIP start is, in
/// order: the point carried from the previous cell of a warm path (`carried`: that cell's
/// formulation and solution, read through its model when the problem's size differs), the
/// model of `multistart.warm_start`, the formulation's own start.
#[allow(clippy::too_many_arguments)]
pub(super) fn solve_split<F: MilpClassifierFormulation>(
    config: &ExperimentConfig,
    formulation: &F,
    (solver, nlp): (&dyn crate::MilpSolver, Option<&dyn crate::NlpSolver>),
    data: &ClassificationData,
    (train, test): (&[usize], &[usize]),
    (r, split_seed): (usize, u64),
    warm_model: Option<&F::Model>,
    carried: Option<(&F, &[f64])>,
) -> Result<MilpSplit<F::Model>> {
    let train_data = data.rows(train);
    let test_data = data.rows(test);
    let scaler = MinMaxScaler::fit(&train_data.x);
    let x_train = Arc::new(scaler.transform(&train_data.x));
    let y_train = Arc::new(train_data.y.clone());
    let problem = formulation.problem(x_train.clone(), y_train.clone(), data.n_classes())?;
    let columns = formulation.milp(&problem).num_columns();
    let start = match (carried, warm_model, nlp) {
        (Some((_, point)), _, _) if point.len() == columns => Some(point.to_vec()),
        (Some((previous, point)), _, _) if !point.is_empty() => {
            let before = previous.problem(x_train, y_train, data.n_classes())?;
            let model = previous.model(
                &before,
                point,
                scaler.clone(),
                data.classes.clone(),
                data.encoding.clone(),
            );
            Some(formulation.warm_start(&model, &problem, &scaler)?)
        }
        (_, Some(model), _) => Some(formulation.warm_start(model, &problem, &scaler)?),
        (_, None, Some(nlp)) => formulation.start_with_nlp(&problem, nlp)?,
        (_, None, None) => formulation.heuristic_start(&problem),
    };
    let options = config
        .solver
        .options
        .with_warm_start(start.clone().map(WarmStart::primal));
    let started = Instant::now();
    let result = solver.solve(formulation.milp(&problem), &options)?;
    let seconds = started.elapsed().as_secs_f64();

    let solved = result.status.has_solution() && result.primal.len() == columns;
    let model = solved.then(|| {
        formulation.model(
            &problem,
            &result.primal,
            scaler.clone(),
            data.classes.clone(),
            data.encoding.clone(),
        )
    });
    let model = match (model, nlp) {
        (Some(model), Some(nlp)) => Some(formulation.refine(&problem, model, nlp)?),
        (model, _) => model,
    };
    let nan = f64::NAN;
    let (train_acc, test_acc, test_bal, dl, dg) = match &model {
        Some(model) => {
            let (dl, dg) = formulation.sparsity(model);
            let train_pred = model.predict(&train_data.x);
            let test_pred = model.predict(&test_data.x);
            (
                metrics::accuracy(&train_data.y, &train_pred),
                metrics::accuracy(&test_data.y, &test_pred),
                metrics::balanced_accuracy(&test_data.y, &test_pred, data.n_classes()),
                dl,
                dg,
            )
        }
        None => (nan, nan, nan, nan, nan),
    };
    let params = formulation.reported_params(&problem);
    let record = SolveRecord {
        selected: model.is_some(),
        train_accuracy: train_acc,
        test_accuracy: test_acc,
        test_balanced_accuracy: test_bal,
        delta_local: dl,
        delta_global: dg,
        milp: Some(MilpStats {
            mip_gap: result.gap,
            dual_bound: result.dual_bound,
            nodes: result.nodes,
        }),
        ..SolveRecord::blank(
            config,
            formulation.name(),
            params,
            r,
            split_seed,
            (train.len(), test.len()),
        )
        .solved(&result, seconds)
    };
    let point = if solved {
        result.primal
    } else {
        start.unwrap_or_default()
    };
    Ok(MilpSplit {
        record,
        model,
        point,
    })
}

/// One line per MILP solve of `records` with its incumbent, dual bound, gap and nodes (empty
/// when no record has MILP statistics), for the run's summary.
pub(super) fn stats_lines(records: &[SolveRecord]) -> String {
    use std::fmt::Write as _;
    let show = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.6}"));
    let mut out = String::new();
    for r in records {
        let Some(m) = &r.milp else { continue };
        let _ = writeln!(
            out,
            "split {} MILP: status {}, incumbent {}, dual bound {}, gap {}, nodes {}",
            r.split,
            r.status,
            show(r.objective),
            show(m.dual_bound),
            show(m.mip_gap),
            m.nodes.map_or("-".to_string(), |n| n.to_string())
        );
    }
    out
}
