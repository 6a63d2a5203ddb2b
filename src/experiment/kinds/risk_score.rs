//! The risk scores' kind (ORS, OGRS): a score card learned by MILP, once per split (the
//! thesis' greedy warm start as MIP start, computed with the same backend), with the metrics
//! risk scores are judged by (`train_auc`, `test_auc`, the exact log-loss, rules used) and
//! the MILP's `mip_gap`, `dual_bound` and `nodes`. A warm path runs cold.

use super::super::engine::SplitSpec;
use super::super::unit::{EngineData, Formulation, UnitCarry, UnitOut};
use super::super::{ExperimentConfig, MilpStats, RiskScoreMetrics, SolveRecord};
use super::multistart::{self, Solved, Start};
use crate::data::ClassificationData;
use crate::formulation::ReportedParams;
use crate::formulations::logloss_tangents::logistic_loss;
use crate::formulations::risk_score::{self, RiskScoreConfig, RiskScoreModel};
use crate::model::Classifier;
use crate::{metrics, GlassboxError, Result};

/// A risk score's config, as the engine runs it.
pub struct RiskScore(pub RiskScoreConfig);

impl Formulation for RiskScore {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn regression(&self) -> bool {
        false
    }
    fn carries(&self) -> bool {
        false
    }
    /// One MILP solve per split, warm-started by its own heuristic (`[formulation]
    /// warm_start`), never from a saved model.
    fn starts_from_model(&self) -> bool {
        false
    }

    fn check(&self, config: &ExperimentConfig, data: &EngineData) -> Result<()> {
        let d = data.classification(self.name())?;
        self.0.check(d.n_classes())?;
        self.0.check_features(&d.x, &d.feature_names)?;
        if config.multistart.starts != 1 || config.multistart.warm_start.is_some() {
            return Err(GlassboxError::Config(format!(
                "{}: a risk score is one MILP solve per split: leave [multistart] out (starts = 1, \
                 no warm_start); its warm start is [formulation] warm_start",
                config.file.display()
            )));
        }
        config
            .registry
            .milp_solver(&config.solver.name, &config.solver.options)
            .map(|_| ())
    }

    /// The features' check again on the split's training rows, which the fit sees: fewer
    /// rows can leave fewer features varying (OGRS) or splittable by epsilon.
    fn check_split(
        &self,
        config: &ExperimentConfig,
        data: &EngineData,
        split: &SplitSpec,
    ) -> Result<()> {
        let d = data.classification(self.name())?;
        self.0
            .check_features(&d.rows(&split.train).x, &d.feature_names)
            .map_err(|e| e.within(&format!("{}: {}", config.file.display(), split.describe())))
    }

    fn run(
        &self,
        config: &ExperimentConfig,
        data: &EngineData,
        split: &SplitSpec,
        carry: &UnitCarry<'_>,
    ) -> Result<UnitOut> {
        let d = data.classification(self.name())?;
        let solver = config
            .registry
            .milp_solver(&config.solver.name, &config.solver.options)?;
        let only = Start::only(Vec::new(), None);
        multistart::run(self.name(), vec![only], carry, |_, _, _| {
            fit_split(config, &self.0, &*solver, d, split)
        })
    }
}

/// Fits the risk score on `split`: its results line and model.
fn fit_split(
    config: &ExperimentConfig,
    formulation: &RiskScoreConfig,
    solver: &dyn crate::MilpSolver,
    data: &ClassificationData,
    split: &SplitSpec,
) -> Result<Solved<RiskScoreModel>> {
    let train_data = data.rows(&split.train);
    let test_data = data.rows(&split.test);
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
    let nan3 = (f64::NAN, f64::NAN, f64::NAN);
    let (train_m, test_m) = match &fit.model {
        Some(m) => (evaluate(m, &train_data), evaluate(m, &test_data)),
        None => (nan3, nan3),
    };
    let p = data.n_features() as f64;
    let used = fit.model.as_ref().map_or(0, |m| m.rules.len());
    let unused_percent = 100.0 * (p - used as f64) / p;
    let record = SolveRecord {
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
            tree_search: false,
            // The risk scores' MILPs minimize their loss.
            maximize: false,
            integrality_tolerance: config.solver.options.integrality_tolerance,
        }),
        delta_local: unused_percent,
        delta_global: unused_percent,
        ..SolveRecord::blank(
            config,
            formulation.name(),
            ReportedParams::default(),
            split.id,
            split.seed,
            (split.train.len(), split.test.len()),
        )
        .solved(result, result.wall_seconds)
    };
    Ok(Solved {
        record,
        usable: fit.model.is_some(),
        model: fit.model,
        point: Vec::new(),
    })
}
