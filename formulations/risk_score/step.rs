//! One step of the thesis' warm start solved exactly by enumeration: the best single rule
//! (feature, threshold, points in A) and intercept, given constant scores `c_i` of the rules
//! held fixed, for the approximate loss `sum_i g(y_i (c_i + s z_i + beta))` with `g` the
//! tangent under-estimator. This is the one-rule MILP of ORS or OGRS (the same rules are
//! allowed: for OGRS, thresholds that leave rows on both sides (4.16h-i) with values at least
//! epsilon apart (4.16f-g)), solved to optimality without a MILP solver: for fixed points s,
//! the loss is convex piecewise linear in beta, so its minimum is at a beta where some row's
//! margin sits on a breakpoint of `g`; for each such beta, prefix sums over the rows sorted
//! by a feature give the loss of every threshold at once.
//!
//! The work grows as |A| N^2 (p + |V|): seconds for the thesis' data sets (N < 1000). A
//! deadline bounds it on larger data: past it, a step returns the best rule found so far
//! (still a valid rule, no longer proven best), so the warm start keeps to a time limit.

use super::{BinaryData, RiskScoreData, ScaledRule, ScaledScore, ScoreSet};
use crate::logloss_tangents::TangentSet;
use glassbox_core::deadline_passed;
use nalgebra::DMatrix;
use std::time::Instant;

/// The rules one feature allows: its rows in ascending order of value, and the cuts `(k,
/// threshold)` (the rule holds for rows `order[k..]`), ascending in `k`.
#[derive(Clone, Debug)]
pub struct FeatureCuts {
    /// The feature.
    pub feature: usize,
    /// Row indices, ascending in the feature's value.
    pub order: Vec<usize>,
    /// Allowed cuts and their thresholds (scaled units).
    pub cuts: Vec<(usize, f64)>,
}

fn sorted_rows(x: &DMatrix<f64>, j: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..x.nrows()).collect();
    order.sort_by(|&a, &b| x[(a, j)].total_cmp(&x[(b, j)]));
    order
}

/// The rules of OGRS: a cut between two consecutive distinct values at least `epsilon`
/// apart, threshold at their midpoint (as [`super::ogrs::OgrsProblem`] decodes a solution).
pub fn ogrs_cuts(data: &RiskScoreData, epsilon: f64) -> Vec<FeatureCuts> {
    (0..data.x.ncols())
        .map(|j| {
            let order = sorted_rows(&data.x, j);
            let cuts = (1..order.len())
                .filter_map(|k| {
                    let (low, high) = (data.x[(order[k - 1], j)], data.x[(order[k], j)]);
                    (high - low >= epsilon).then_some((k, 0.5 * (low + high)))
                })
                .collect();
            FeatureCuts {
                feature: j,
                order,
                cuts,
            }
        })
        .collect()
}

/// The rules of ORS: the binary feature itself (threshold: the one that made it).
pub fn ors_cuts(data: &BinaryData) -> Vec<FeatureCuts> {
    (0..data.x.ncols())
        .map(|j| {
            let order = sorted_rows(&data.x, j);
            let zeros = order.iter().filter(|&&i| data.x[(i, j)] < 0.5).count();
            FeatureCuts {
                feature: j,
                order,
                cuts: vec![(zeros, data.thresholds[j])],
            }
        })
        .collect()
}

/// The best single rule and intercept for labels `y` (+-1) and constant scores `offsets`,
/// features in `excluded` left out: `(rule, beta, approximate loss)`, or `None` when no
/// feature is left. Ties go to the first found (points ascending, then features, then cuts).
/// Past `deadline`, the best found so far (see the module comment).
pub fn best_rule(
    cuts: &[FeatureCuts],
    excluded: &[usize],
    y: &[f64],
    offsets: &[f64],
    scores: ScoreSet,
    tangents: TangentSet,
    deadline: Option<Instant>,
) -> Option<(ScaledRule, f64, f64)> {
    let lines = tangents.lines();
    let kinks = tangents.breakpoints();
    let g = |m: f64| {
        lines
            .iter()
            .fold(f64::NEG_INFINITY, |acc, l| acc.max(l.at(m)))
    };
    let usable: Vec<&FeatureCuts> = cuts
        .iter()
        .filter(|c| !excluded.contains(&c.feature) && !c.cuts.is_empty())
        .collect();
    let first = usable.first()?;
    let n = y.len();
    let (mut a, mut b) = (vec![0.0; n], vec![0.0; n]);
    let mut best: Option<(f64, ScaledRule, f64)> = None;
    let mut evaluated = false;
    let mut consider = |loss: f64, feature: usize, threshold: f64, points: i64, beta: f64| {
        if best.as_ref().is_none_or(|(l, _, _)| loss < l - 1e-12) {
            let rule = ScaledRule {
                feature,
                threshold,
                points,
            };
            best = Some((loss, rule, beta));
        }
    };
    // Points 0 first: the rule that changes nothing is always an answer.
    let order =
        std::iter::once(0).chain((scores.min as i64..=scores.max as i64).filter(|&s| s != 0));
    // Past the deadline both loops end: the points too (a score set of 10^9 points would
    // otherwise keep building and sorting the breakpoints of every one of them).
    'points: for s in order {
        if evaluated && deadline_passed(deadline) {
            break;
        }
        let points = s as f64;
        let mut betas: Vec<f64> = Vec::with_capacity(2 * n * kinks.len());
        for i in 0..n {
            for k in &kinks {
                betas.push(y[i] * k - offsets[i]);
                if s != 0 {
                    betas.push(y[i] * k - offsets[i] - points);
                }
            }
        }
        betas.sort_by(f64::total_cmp);
        betas.dedup();
        for &beta in &betas {
            // The first beta (points 0) always runs, so there is an answer.
            if evaluated && deadline_passed(deadline) {
                break 'points;
            }
            evaluated = true;
            for i in 0..n {
                a[i] = g(y[i] * (offsets[i] + beta));
            }
            let total_a: f64 = a.iter().sum();
            if s == 0 {
                consider(total_a, first.feature, first.cuts[0].1, 0, beta);
                continue;
            }
            for i in 0..n {
                b[i] = g(y[i] * (offsets[i] + beta + points));
            }
            for fc in &usable {
                // Loss of cut k: total_a + sum over order[k..] of (b - a).
                let mut suffix = 0.0;
                let mut next = fc.order.len();
                let mut losses = Vec::with_capacity(fc.cuts.len());
                for &(k, threshold) in fc.cuts.iter().rev() {
                    while next > k {
                        next -= 1;
                        let i = fc.order[next];
                        suffix += b[i] - a[i];
                    }
                    losses.push((total_a + suffix, threshold));
                }
                for &(loss, threshold) in losses.iter().rev() {
                    consider(loss, fc.feature, threshold, s, beta);
                }
            }
        }
    }
    best.map(|(loss, rule, beta)| (rule, beta, loss))
}

/// The thesis' warm start with every step solved by [`best_rule`]: T rules, one at a time,
/// the rules before held fixed (their scores are constants of each row, their features
/// excluded), the intercept free. `x` are the scaled features the thresholds refer to;
/// each step stops at `step_seconds` (if given) with the best rule found so far.
pub fn greedy_by_enumeration(
    cuts: &[FeatureCuts],
    x: &DMatrix<f64>,
    y: &[f64],
    rules: usize,
    scores: ScoreSet,
    tangents: TangentSet,
    step_seconds: Option<f64>,
) -> Option<ScaledScore> {
    let mut score = ScaledScore {
        rules: Vec::new(),
        intercept: 0.0,
    };
    for _ in 0..rules {
        let offsets = score.totals(x);
        let excluded: Vec<usize> = score.rules.iter().map(|r| r.feature).collect();
        let deadline = step_seconds.map(|s| Instant::now() + std::time::Duration::from_secs_f64(s));
        let (rule, beta, _) = best_rule(cuts, &excluded, y, &offsets, scores, tangents, deadline)?;
        score.rules.push(rule);
        score.intercept = beta;
    }
    Some(score)
}
