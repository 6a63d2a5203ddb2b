//! The cross-validated choice for the NLP regressors (S-ORRT's `selection_folds`, docs/QUALITY.md
//! "S-ORRT's leaves"), the regression counterpart of `selection.rs`: after a split's
//! multistart, the training rows are dealt into k folds (shuffled, seeded); on each fold the
//! greedy starts, the multistart's best point and ceil(starts / k) - 1 random starts are
//! solved on the other rows, and every training row is predicted by the fold's
//! best-objective tree and by the fold's greedy trees kept as they are. The greedy tree of
//! all the training rows is returned unless the optimized trees' squared errors are lower
//! by more than one standard error of the paired differences ([`clearly_lower`]), or it
//! breaks the problem's constraints on those rows (fairness, cost-sensitivity, the minimum
//! leaf size: it would be no solution of the problem posed); otherwise the multistart's
//! best objective is. Either way one line is added and selected: the
//! returned tree's, carrying the folds' mean squared errors and the paired difference with
//! its standard error in `raw_status`, and the folds' iterations and seconds.
//!
//! Why: at depth 3 the optimized linear-leaf tree generalizes worse than the CART tree with
//! refitted leaves on most splits of Boston and red wine (benches/README "S-ORRT Table 4").
//!
//! Why the best point starts each fold: `multistart::best_of_fold`. Measured for S-ORRT
//! (red wine, numpy's splits, benches/README "S-ORRT's choice"): without it the folds
//! preferred CART on 10 of 10 splits at D = 2 where the test rows preferred the optimized
//! tree on average; with it mean test R^2 rose from 0.355 to 0.362 at D = 2 and from 0.350
//! to 0.359 at D = 1, at fewer iterations.

use super::super::engine::SplitSpec;
use super::super::unit::{EngineData, UnitCarry};
use super::super::ExperimentConfig;
use super::multistart::{self, Ran};
use super::nlp_regressor::{NlpRegressor, Prepared};
use crate::data::{stratified_kfold, RegressionData};
use crate::formulation::NlpRegressorFormulation;
use crate::model::Regressor;
use crate::nlp::NlpProblem;
use crate::starts::FoldStarts;
use crate::Result;
use std::time::Instant;

/// What the folds found: per greedy start (by origin) and for the optimized trees, the
/// squared error of every training row (in fold order) when held out, with the folds'
/// iterations.
struct FoldErrors {
    optimized: Vec<f64>,
    greedy: Vec<(&'static str, Vec<f64>)>,
    iterations: u64,
}

impl<F> NlpRegressor<F>
where
    F: NlpRegressorFormulation + Send + Sync,
    F::Problem: 'static,
{
    /// Whether the formulation asks for the choice and has a greedy start to choose.
    pub(super) fn chooses(&self) -> bool {
        self.0.selection_folds() >= 2 && self.0.greedy_start_count() > 0
    }

    /// The cross-validated choice (module comment) after the multistart `ran` on `split`'s
    /// training rows (`prepared`); `ran` as it is where the formulation does not choose, no
    /// start returned a usable tree, the unit was interrupted, or the training rows are
    /// too few for the folds.
    pub(super) fn select_by_cross_validation(
        &self,
        config: &ExperimentConfig,
        data: &EngineData,
        split: &SplitSpec,
        carry: &UnitCarry<'_>,
        prepared: &Prepared<F>,
        mut ran: Ran<F::Model>,
    ) -> Result<Ran<F::Model>> {
        let f = &self.0;
        let folds = f.selection_folds();
        if !self.chooses() || ran.interrupted {
            return Ok(ran);
        }
        let Some((best_start, _)) = ran.best.as_ref() else {
            return Ok(ran);
        };
        let best_start = *best_start;
        // S-ORRT's folds start from the best point (no `selection_starts` key).
        let plan = multistart::FoldPlan::new(
            FoldStarts::BestPoint,
            None,
            config,
            split,
            folds,
            &ran.records,
            &ran.points[best_start],
        );
        let d = data.regression(f.name())?;
        // One "class": plain shuffled folds.
        let Ok(dealt) = stratified_kfold(
            &vec![0; split.train.len()],
            folds,
            split.seed ^ multistart::FOLD_SEED,
        ) else {
            multistart::note_too_few_rows(&mut ran, best_start, folds, split.train.len());
            return Ok(ran);
        };
        let started = Instant::now();
        let Some(errors) = self.fold_errors(config, data, d, split, carry, &dealt, &plan)? else {
            ran.interrupted = true;
            return Ok(ran);
        };
        // Per greedy start, the optimized trees' gain over it (computed once: it decides and
        // it is reported).
        let gains: Vec<(f64, f64)> = errors
            .greedy
            .iter()
            .map(|(_, e)| paired_difference(&errors.optimized, e))
            .collect();
        let rows = errors.optimized.len();
        // The greedy trees of all the training rows kept as they are; one that breaks the
        // problem's constraints on those rows (fairness, cost-sensitivity) is no candidate.
        let kept_points: Vec<Vec<f64>> = f
            .greedy_starts(&prepared.problem)
            .iter()
            .map(|start| f.greedy_kept(&prepared.problem, &start.point))
            .collect();
        let eligible: Vec<bool> = kept_points
            .iter()
            .map(|point| f.meets_constraints(&prepared.problem, point))
            .collect();
        let kept = (0..errors.greedy.len())
            .filter(|&g| eligible[g] && !clearly_lower(gains[g], rows))
            .min_by(|&a, &b| mean(&errors.greedy[a].1).total_cmp(&mean(&errors.greedy[b].1)));
        let breaking_note: String = (0..errors.greedy.len())
            .filter(|&g| !eligible[g])
            .map(|g| {
                format!(
                    "; the {} tree kept as it is breaks the problem's constraints on the \
                     training rows, so it is not chosen",
                    errors.greedy[g].0
                )
            })
            .collect();
        let mses: Vec<String> =
            std::iter::once(format!("optimized {:.6}", mean(&errors.optimized)))
                .chain(errors.greedy.iter().zip(&gains).map(
                    |((origin, e), (difference, standard_error))| {
                        format!(
                            "{origin} {:.6} (the optimized tree lower by {difference:.6}, \
                             one standard error {standard_error:.6})",
                            mean(e)
                        )
                    },
                ))
                .collect();
        let summary = format!(
            "{folds}-fold selection, mean squared error on the held-out rows: {}{breaking_note}",
            mses.join(", ")
        );
        let seconds = started.elapsed().as_secs_f64();
        let (record, model) = match kept {
            Some(g) => {
                let point = &kept_points[g];
                let model = self.model_at(prepared, data, d, point);
                let record = multistart::kept_greedy_line(
                    &ran.records[best_start],
                    &summary,
                    multistart::NOT_BETTER,
                    errors.greedy[g].0,
                    prepared.problem.objective(point),
                    errors.iterations,
                    seconds,
                );
                let (train, test) = (d.rows(&split.train), d.rows(&split.test));
                (self.measured(record, &model, &train, &test), model)
            }
            None => {
                let (_, model) = ran.best.take().expect("checked above");
                let record = multistart::kept_optimized_line(
                    &ran.records[best_start],
                    &summary,
                    best_start,
                    "optimized",
                    errors.iterations,
                    seconds,
                );
                (record, model)
            }
        };
        multistart::add_choice(&mut ran, record, model, carry);
        Ok(ran)
    }

    /// Solves the folds `dealt` (pairs of positions in `split.train`): per fold the greedy
    /// starts, `plan`'s: the multistart's best point (`multistart::best_of_fold`) and the
    /// first ceil(starts / k) - 1 seeded random starts on the fold's training rows; the best
    /// objective's tree and the greedy trees predict the held-out rows. `None` when a stop
    /// request came before or after a solve.
    #[allow(clippy::too_many_arguments)]
    fn fold_errors(
        &self,
        config: &ExperimentConfig,
        data: &EngineData,
        d: &RegressionData,
        split: &SplitSpec,
        carry: &UnitCarry<'_>,
        dealt: &[(Vec<usize>, Vec<usize>)],
        plan: &multistart::FoldPlan<'_>,
    ) -> Result<Option<FoldErrors>> {
        let f = &self.0;
        let solver = config
            .registry
            .nlp_solver(&config.solver.name, &config.solver.options)?;
        let mut errors = FoldErrors {
            optimized: Vec::new(),
            greedy: Vec::new(),
            iterations: 0,
        };
        let rows = |positions: &[usize]| -> Vec<usize> {
            positions.iter().map(|&k| split.train[k]).collect()
        };
        for (k, (fit, held_out)) in dealt.iter().enumerate() {
            let prepared = self.prepare(data, d, &rows(fit))?;
            let problem = &prepared.problem;
            let held_out = d.rows(&rows(held_out));
            let squared = |m: &F::Model| -> Vec<f64> {
                m.predict(&held_out.x)
                    .iter()
                    .zip(&held_out.y)
                    .map(|(p, y)| (p - y) * (p - y))
                    .collect()
            };
            let greedy = f.greedy_starts(problem);
            let Some(best) = multistart::best_of_fold(
                config,
                carry,
                problem.num_variables(),
                &greedy,
                plan,
                |rng| f.random_start(problem, rng),
                |options, context| f.solve_start(problem, &*solver, options, context),
            )?
            else {
                return Ok(None);
            };
            errors.iterations += best.iterations;
            // A fold without a usable tree counts its rows as infinitely badly predicted.
            errors.optimized.extend(match &best.point {
                Some(x) => squared(&self.model_at(&prepared, data, d, x)),
                None => vec![f64::INFINITY; held_out.y.len()],
            });
            for (g, start) in greedy.iter().enumerate() {
                let kept = f.greedy_kept(problem, &start.point);
                let model = self.model_at(&prepared, data, d, &kept);
                if k == 0 {
                    errors.greedy.push((start.origin, Vec::new()));
                }
                errors.greedy[g].1.extend(squared(&model));
            }
        }
        Ok(Some(errors))
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// By how much the squared errors `a` are lower than `b` (the same rows) on average, and
/// the standard error of that mean paired difference (NaN with fewer than two rows,
/// infinite or NaN where an error is infinite).
fn paired_difference(a: &[f64], b: &[f64]) -> (f64, f64) {
    let diff: Vec<f64> = a.iter().zip(b).map(|(x, y)| y - x).collect();
    let n = diff.len() as f64;
    let m = mean(&diff);
    let var = diff.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0);
    (m, (var / n).sqrt())
}

/// Whether squared errors lower than others on `rows` rows by `(difference,
/// standard_error)` ([`paired_difference`]) are lower by more than one standard error: the
/// one-standard-error rule, which keeps the simpler tree unless the more complex one is
/// clearly better.
fn clearly_lower((difference, standard_error): (f64, f64), rows: usize) -> bool {
    rows >= 2 && standard_error.is_finite() && difference > standard_error
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lower(a: &[f64], b: &[f64]) -> bool {
        clearly_lower(paired_difference(a, b), a.len())
    }

    #[test]
    fn the_optimized_tree_must_be_lower_by_more_than_one_standard_error() {
        // The same errors: not lower.
        assert!(!lower(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]));
        // Lower on every row by the same amount: the difference has no spread.
        assert!(lower(&[1.0, 2.0, 3.0], &[2.0, 3.0, 4.0]));
        // Lower on average, but by less than the spread of the differences allows:
        // differences 3, -1, -1, mean 1/3, standard error 4/3 (the test below).
        assert!(!lower(&[0.0, 2.0, 2.0], &[3.0, 1.0, 1.0]));
        // Never the other way round, and a fold without a tree (infinite error) never wins.
        assert!(!lower(&[2.0, 3.0, 4.0], &[1.0, 2.0, 3.0]));
        assert!(!lower(&[f64::INFINITY, 0.0], &[1.0, 1.0]));
        assert!(!lower(&[0.0], &[5.0]));
    }

    #[test]
    fn the_paired_difference_is_the_mean_gain_with_its_standard_error() {
        // Differences 3, -1, -1: mean 1/3, sample variance 16/3, standard error 4/3.
        let (m, se) = paired_difference(&[0.0, 2.0, 2.0], &[3.0, 1.0, 1.0]);
        assert!((m - 1.0 / 3.0).abs() < 1e-12);
        assert!((se - 4.0 / 3.0).abs() < 1e-12);
    }
}
