//! `refit_support`'s multistart on a support (`Refit` in `formulations/continuation.rs`):
//! S-ORCT without its penalty on the columns a penalized tree uses, alone, its best tree
//! laid back into the full problem.
//!
//! Why a problem of its own rather than the full one with the other features held at zero:
//! the paper's 1/p factor makes a split on 3 of 20 features a small term of a_t.x / 20
//! against mu_t, and the data's gamma for 20 features a different slope than for 3. On the
//! sparse-tree generator's seed 5, 2 of 21 starts of the full problem with the irrelevant
//! columns zeroed reached the generator's tree (94% train) against 6 of 21 on the three
//! columns alone, and a refit's 11 starts on the full problem none (80%).
//!
//! A tree of the support's problem (slope g, p_s features) is a tree of the full problem
//! (slope G, p features) with the same probabilities: a_jt = a_s,jt g p / (G p_s) on the
//! support's features, 0 elsewhere, and mu_t = mu_s,t g / G, since then
//! G (a_t.x / p - mu_t) = g (a_s,t.x_s / p_s - mu_s,t). Where that a leaves the box
//! [-1, 1] (the full problem cannot be as sharp), a and mu are scaled into it together
//! (a softer tree, which the caller's solve on the full problem sharpens again).
//!
//! Depends on S-ORCT (`SorctConfig`, its problem and starts) and the core.

use super::{starts, SorctConfig, SorctProblem};
use glassbox_core::formulation::NlpClassifierFormulation;
use glassbox_core::nlp::NlpProblem;
use glassbox_core::starts::{StartContext, StartKind};
use glassbox_core::{NlpSolver, Result, SolveOptions, SolveResult, WarmStart};
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The best tree of `config`'s S-ORCT with lambda = 0 on the columns of `problem` that the
/// point `x` uses (a coefficient above the sparsity tolerance at some node), from the CART
/// start and `config.refit_starts` random starts seeded by the support, as a result on
/// `problem` without its penalty (a point of it and its loss there), with the iterations
/// this call solved (0 where an earlier start of the split ran the same support). `None`
/// when `x` uses no feature or no solve ended with a point. `options` bounds the whole
/// multistart's time.
pub(crate) fn best_on_support(
    config: &SorctConfig,
    problem: &SorctProblem,
    x: &[f64],
    solver: &dyn NlpSolver,
    options: &SolveOptions,
) -> Result<Option<(SolveResult, u64)>> {
    let a = problem.layout.coefficients(x);
    let used: Vec<usize> = (0..a.nrows())
        .filter(|&j| a.row(j).amax() > glassbox_core::metrics::SPARSITY_TOLERANCE)
        .collect();
    if used.is_empty() {
        return Ok(None);
    }
    if let Some(tree) = problem.support_refits.get(&used) {
        return Ok(tree.map(|tree| (tree, 0)));
    }
    let sub_config = SorctConfig {
        lambda_local: 0.0,
        lambda_global: 0.0,
        lambda_local_log2: None,
        lambda_global_log2: None,
        refit_support: false,
        ..config.clone()
    };
    let columns = Arc::new(problem.x.select_columns(&used));
    let sub = sub_config.problem(columns, problem.y.clone(), problem.layout.classes)?;
    let started = Instant::now();
    let mut rng = ChaCha8Rng::seed_from_u64(support_seed(&used));
    let cart = config
        .cart_start
        .then(|| (StartKind::Greedy, starts::cart_start(&sub)));
    let random = (0..config.refit_starts).map(|_| {
        (
            StartKind::Random,
            starts::random_start(&sub, config.initialization, &mut rng),
        )
    });
    let mut best: Option<SolveResult> = None;
    let mut iterations = 0;
    for (kind, from) in cart.into_iter().chain(random) {
        let mut o = options.clone();
        if let Some(limit) = o.time_limit {
            let left = limit - started.elapsed().as_secs_f64();
            if left <= 0.0 {
                break;
            }
            o.time_limit = Some(left);
        }
        o.warm_start = Some(WarmStart::primal(from));
        let incumbent = best.as_ref().and_then(|b| b.objective);
        let result = sub_config.solve_start(&sub, solver, &o, StartContext { kind, incumbent })?;
        iterations += result.iterations;
        if let Some(result) = crate::continuation::usable(result, sub.layout.n) {
            if incumbent.is_none_or(|b| result.objective.is_some_and(|v| v < b)) {
                best = Some(result);
            }
        }
    }
    let tree = best.map(|mut b| {
        // The sub-problem's result as a result on the full problem without its penalty.
        let relaxed = problem.without_penalty();
        b.primal = into_full(problem, &sub, &used, &b.primal);
        b.objective = Some(relaxed.objective(&b.primal));
        b.max_violation = Some(glassbox_core::nlp::max_violation(&relaxed, &b.primal));
        b.raw_status = format!(
            "S-ORCT on the {} features of the support alone, gamma {}: {}",
            used.len(),
            sub.params.gamma,
            b.raw_status
        );
        b.clear_multipliers();
        b
    });
    problem.support_refits.insert(used, tree.clone());
    Ok(tree.map(|tree| (tree, iterations)))
}

/// The support's best tree for each support the starts of a split ended on (its features),
/// so that the support's multistart runs once per split: `None` where it found none.
#[derive(Debug, Default)]
pub(crate) struct SupportRefits(Mutex<HashMap<Vec<usize>, Option<SolveResult>>>);

impl SupportRefits {
    fn get(&self, support: &[usize]) -> Option<Option<SolveResult>> {
        let memo = self.0.lock().unwrap_or_else(|e| e.into_inner());
        memo.get(support).cloned()
    }

    fn insert(&self, support: Vec<usize>, tree: Option<SolveResult>) {
        let mut memo = self.0.lock().unwrap_or_else(|e| e.into_inner());
        memo.insert(support, tree);
    }
}

/// The support's tree `x` (a point of `sub`, on the columns `used` of `problem`) as a point
/// of `problem` with the same probabilities, or as sharp as `problem`'s box allows (see the
/// module comment).
fn into_full(problem: &SorctProblem, sub: &SorctProblem, used: &[usize], x: &[f64]) -> Vec<f64> {
    let lay = &problem.layout;
    let (g, big_g) = (sub.params.gamma, problem.params.gamma);
    let a_factor = g * lay.p as f64 / (big_g * used.len() as f64);
    let a_sub = sub.layout.coefficients(x);
    let widest = a_sub.amax() * a_factor;
    let shrink = if widest > 1.0 { 1.0 / widest } else { 1.0 };
    let mut a = DMatrix::zeros(lay.p, lay.branches);
    for (row, &j) in used.iter().enumerate() {
        for t in 0..lay.branches {
            a[(j, t)] = a_sub[(row, t)] * a_factor * shrink;
        }
    }
    let mu: Vec<f64> = (0..lay.branches)
        .map(|t| x[sub.layout.mu + t] * g / big_g * shrink)
        .collect();
    starts::point(problem, &a, &mu, &sub.layout.leaf_classes(x))
}

/// A seed for the support's random starts: the same support gets the same starts.
fn support_seed(used: &[usize]) -> u64 {
    used.iter().fold(0xcbf2_9ce4_8422_2325, |h, &j| {
        (h ^ j as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sorct::scale::SplitScale;

    fn problems(full_gamma: f64, sub_gamma: f64) -> (SorctProblem, SorctProblem, Vec<usize>) {
        let x = DMatrix::from_fn(40, 6, |i, j| ((i * 7 + j * 13) % 17) as f64 / 16.0);
        let y: Vec<usize> = (0..40).map(|i| (i * 5 % 7) % 3).collect();
        let used = vec![1, 4];
        let config = |gamma: f64, lambda_global: f64| SorctConfig {
            gamma,
            lambda_global,
            split_scale: SplitScale::Fixed,
            ..SorctConfig::default()
        };
        let full = config(full_gamma, 0.01)
            .problem(Arc::new(x.clone()), Arc::new(y.clone()), 3)
            .unwrap();
        let sub = config(sub_gamma, 0.0)
            .problem(Arc::new(x.select_columns(&used)), Arc::new(y), 3)
            .unwrap();
        (full, sub, used)
    }

    #[test]
    fn a_tree_of_the_support_keeps_its_loss_in_the_full_problem() {
        let (full, sub, used) = problems(4096.0, 512.0);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..5 {
            let point = starts::random_start(&sub, starts::Initialization::Data, &mut rng);
            let mapped = into_full(&full, &sub, &used, &point);
            let (at_full, at_sub) = (
                full.without_penalty().objective(&mapped),
                sub.objective(&point),
            );
            assert!(
                (at_full - at_sub).abs() < 1e-12,
                "{at_full} against {at_sub}"
            );
            let a = full.layout.coefficients(&mapped);
            for j in (0..6).filter(|j| !used.contains(j)) {
                assert_eq!(a.row(j).amax(), 0.0, "feature {j}");
            }
            assert!(a.amax() > 0.0);
        }
    }

    #[test]
    fn a_tree_sharper_than_the_full_box_is_scaled_into_it() {
        // g p / (G p_s) = 4096 * 6 / (512 * 2) = 24: the support's tree is sharper than any
        // tree of the full problem, which gets the sharpest one in the same directions.
        let (full, sub, used) = problems(512.0, 4096.0);
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let point = starts::random_start(&sub, starts::Initialization::Data, &mut rng);
        let a = full
            .layout
            .coefficients(&into_full(&full, &sub, &used, &point));
        assert!((a.amax() - 1.0).abs() < 1e-12, "{}", a.amax());
        let sub_a = sub.layout.coefficients(&point);
        let ratio = a[(used[0], 0)] / sub_a[(0, 0)];
        for (row, &j) in used.iter().enumerate() {
            for t in 0..a.ncols() {
                assert!((a[(j, t)] - ratio * sub_a[(row, t)]).abs() < 1e-12);
            }
        }
    }
}
