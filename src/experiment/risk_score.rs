//! The risk-score path of the experiment runner (ORS, OGRS): MILPs solved once per split
//! (the thesis' warm start as MIP start), stratified holdout splits, and results lines with
//! the metrics risk scores are judged by (`train_auc`, `test_auc`, the exact log-loss) and
//! the MILP's `mip_gap`, `dual_bound` and `nodes`.

use super::{
    mean_std, run_progress_bar, solves_line, ExperimentConfig, MilpStats, ResultsWriter,
    RunOutcome, SolveRecord,
};
use crate::data::ClassificationData;
use crate::formulation::ReportedParams;
use crate::formulations::logloss_tangents::logistic_loss;
use crate::formulations::risk_score::{self, RiskScoreConfig, RiskScoreModel};
use crate::metrics;
use crate::model::Classifier;
use crate::{registry, GlassboxError, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The metrics of a risk-score solve (fields of its results line).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RiskScoreMetrics {
    /// ROC AUC of the predicted risk on the training part.
    pub train_auc: f64,
    /// ROC AUC of the predicted risk on the test part.
    pub test_auc: f64,
    /// Mean (exact) log-loss on the training part.
    pub train_log_loss: f64,
    /// Mean (exact) log-loss on the test part.
    pub test_log_loss: f64,
    /// Rules with non-zero points.
    pub rules_used: usize,
    /// The approximate loss of the warm start (its objective in the MILP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_start_objective: Option<f64>,
    /// Seconds of the warm start (not in `solve_seconds`).
    pub warm_start_seconds: f64,
    /// Columns of the MILP.
    pub milp_columns: usize,
    /// Rows of the MILP.
    pub milp_rows: usize,
}

/// Runs ORS or OGRS on the encoded `data` (see the module comment).
pub(super) fn run_risk_score(
    config: &ExperimentConfig,
    formulation: &RiskScoreConfig,
    data: &ClassificationData,
    fixed_train: Option<usize>,
    out_dir: &Path,
    results_path: &Path,
    progress: bool,
) -> Result<RunOutcome> {
    check(config, formulation, data)?;
    let solver = registry::milp_solver(&config.solver.name, &config.solver.options)?;
    let splits = config.splits(data.n_samples(), fixed_train, |seed| {
        data.stratified_split(config.split.test_fraction, seed)
    })?;
    let mut writer = ResultsWriter::create(out_dir, results_path)?;
    let bar = run_progress_bar(config, splits.len(), false, progress);
    for (r, (train, test)) in splits.iter().enumerate() {
        let (record, model) = fit_split(
            config,
            formulation,
            &*solver,
            data,
            (train, test),
            (r, config.split.seed + r as u64),
        )?;
        bar.inc(1);
        writer.write_split(r, formulation.name(), vec![record], model.as_ref())?;
    }
    bar.finish_and_clear();
    Ok(writer.finish())
}

/// Checks a risk score's config against the data before anything is written.
pub(super) fn check(
    config: &ExperimentConfig,
    formulation: &RiskScoreConfig,
    data: &ClassificationData,
) -> Result<()> {
    formulation.check(data.n_features(), data.n_classes())?;
    formulation.check_features(&data.x, &data.feature_names)?;
    if config.multistart.starts != 1 || config.multistart.warm_start.is_some() {
        return Err(GlassboxError::Config(format!(
            "{}: a risk score is one MILP solve per split: leave [multistart] out (starts = 1, \
             no warm_start); its warm start is [formulation] warm_start",
            config.file.display()
        )));
    }
    Ok(())
}

/// Fits the risk score on split `r` (seeded `split_seed`): its results line and model.
pub(super) fn fit_split(
    config: &ExperimentConfig,
    formulation: &RiskScoreConfig,
    solver: &dyn crate::MilpSolver,
    data: &ClassificationData,
    (train, test): (&[usize], &[usize]),
    (r, split_seed): (usize, u64),
) -> Result<(SolveRecord, Option<RiskScoreModel>)> {
    let train_data = data.rows(train);
    let test_data = data.rows(test);
    let fit = risk_score::fit(
        formulation,
        solver,
        &config.solver.options,
        &train_data.x,
        &train_data.y,
        data.classes.clone(),
        data.encoding.clone(),
    )?;
    let result = &fit.result;
    let evaluate = |model: &RiskScoreModel, part: &ClassificationData| {
        let logits: Vec<f64> = model
            .scores(&part.x)
            .into_iter()
            .map(|s| s as f64 + model.intercept)
            .collect();
        let risks = model.risks(&part.x);
        let positive: Vec<bool> = part.y.iter().map(|&k| k == 1).collect();
        let log_loss = logits
            .iter()
            .zip(&positive)
            .map(|(&logit, &pos)| logistic_loss(if pos { logit } else { -logit }))
            .sum::<f64>()
            / logits.len() as f64;
        (
            metrics::roc_auc(&positive, &risks),
            metrics::accuracy(&part.y, &model.predict(&part.x)),
            log_loss,
        )
    };
    let (train_m, test_m) = match &fit.model {
        Some(m) => (evaluate(m, &train_data), evaluate(m, &test_data)),
        None => (
            (f64::NAN, f64::NAN, f64::NAN),
            (f64::NAN, f64::NAN, f64::NAN),
        ),
    };
    let p = data.n_features() as f64;
    let used = fit.model.as_ref().map_or(0, |m| m.rules.len());
    let unused_percent = 100.0 * (p - used as f64) / p;
    let record = SolveRecord {
        selected: fit.model.is_some(),
        train_accuracy: train_m.1,
        test_accuracy: test_m.1,
        test_balanced_accuracy: match &fit.model {
            Some(m) => metrics::balanced_accuracy(&test_data.y, &m.predict(&test_data.x), 2),
            None => f64::NAN,
        },
        risk_score: Some(RiskScoreMetrics {
            train_auc: train_m.0,
            test_auc: test_m.0,
            train_log_loss: train_m.2,
            test_log_loss: test_m.2,
            rules_used: used,
            warm_start_objective: fit.warm_start_objective,
            warm_start_seconds: fit.warm_start_seconds,
            milp_columns: fit.size.0,
            milp_rows: fit.size.1,
        }),
        milp: Some(MilpStats {
            mip_gap: result.gap,
            dual_bound: result.dual_bound,
            nodes: result.nodes,
        }),
        delta_local: unused_percent,
        delta_global: unused_percent,
        ..SolveRecord::blank(
            config,
            formulation.name(),
            ReportedParams::default(),
            r,
            split_seed,
            (train.len(), test.len()),
        )
        .solved(result, result.wall_seconds)
    };
    Ok((record, fit.model))
}

/// The readable summary of a risk-score run: one row per split, then the means.
pub(super) fn summary_table(records: &[SolveRecord]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>5} {:>10} {:>10} {:>9} {:>9} {:>8} {:>5} {:>8} {:>9} {:>22}",
        "split",
        "objective",
        "warm_obj",
        "train_auc",
        "test_auc",
        "test_acc",
        "rules",
        "gap",
        "seconds",
        "status"
    );
    let (mut aucs, mut accs, mut train_aucs) = (Vec::new(), Vec::new(), Vec::new());
    for r in records {
        let Some(m) = &r.risk_score else { continue };
        let _ = writeln!(
            out,
            "{:>5} {:>10.4} {:>10.4} {:>9.4} {:>9.4} {:>8.4} {:>5} {:>8.4} {:>9.2} {:>22}",
            r.split,
            r.objective.unwrap_or(f64::NAN),
            m.warm_start_objective.unwrap_or(f64::NAN),
            m.train_auc,
            m.test_auc,
            r.test_accuracy,
            m.rules_used,
            r.milp.as_ref().and_then(|s| s.mip_gap).unwrap_or(f64::NAN),
            r.solve_seconds + m.warm_start_seconds,
            r.status
        );
        if r.selected {
            aucs.push(m.test_auc);
            accs.push(r.test_accuracy);
            train_aucs.push(m.train_auc);
        }
    }
    let (auc, auc_sd) = mean_std(&aucs);
    let _ = writeln!(
        out,
        "mean over {} splits: test AUC {:.4} (sd {:.4}), train AUC {:.4}, test accuracy {:.4}",
        aucs.len(),
        auc,
        auc_sd,
        mean_std(&train_aucs).0,
        mean_std(&accs).0
    );
    out.push_str(&solves_line(
        records.iter().map(|r| (r.solve_seconds, r.status.as_str())),
    ));
    out
}
