//! The greedy MIP start of loss-optimal trees and the refinement of OLCT's last layer
//! (thesis section 3.2, "Preliminary experiments" and Remark 1), with any NLP backend
//! through [`logistic_l1::fit`].
//!
//! Greedy start: from the root down, each branch node gets the l1 logistic regression of
//! the training points routed to it by the nodes above (the thesis' strategy, after
//! D'Onofrio et al.). Node t's regression minimizes `sum_{i at t} logloss_i + lambda ||w||_1`,
//! its own term of the OLCT objective (logistic_l1 divides by N_t, so it gets lambda / N_t).
//! Choices where the thesis is silent, so that the start is a feasible MILP point:
//! - a node whose points are all of one class (or none) gets `w = 0` and `b = +-1`, sending
//!   them all to the side (and predicting the class) of that label;
//! - `(w, b)` is scaled down uniformly into the MILP's bounds `|w_j| <= W`, `|b| <= B`
//!   (the routing is unchanged);
//! - with HFS (`max_features = k`), only the k largest |w_j| are kept;
//! - no training point may lie strictly between 0 and eps (3.7): the plane is scaled up
//!   (within the bounds) or, failing that, shifted down past such points (they go left).
//!
//! Refinement (Remark 1): each last-layer node is refit by the exact l1 logistic regression
//! of the points that reach it; it is kept only when it lowers the node's exact term
//! `sum logloss + lambda ||w||_1 + alpha ||w||_0` (so the tree's exact objective never
//! increases, even if the backend stops early). The routing is unchanged (last-layer nodes do
//! not route). Refit planes may leave the MILP's bound W: they belong to the model only.

use super::{last_layer, layer_of, score, LossTreeProblem, NAME};
use crate::logistic_l1;
use crate::logloss_tangents::logistic_loss;
use glassbox_core::{GlassboxError, NlpSolver, Result, SolveOptions};
use nalgebra::DMatrix;
use std::sync::Arc;

/// Iterations of each node's logistic regression (enough for IPOPT on these problems; a
/// separable node with lambda = 0 stops here instead of diverging).
const ITERATIONS: u64 = 300;

/// The rows `rows` of `x` and their labels in {0, 1}.
fn node_data(problem: &LossTreeProblem, rows: &[usize]) -> (DMatrix<f64>, Vec<usize>) {
    let x = DMatrix::from_fn(rows.len(), problem.p, |r, j| problem.x[(rows[r], j)]);
    let y = rows
        .iter()
        .map(|&i| usize::from(problem.y[i] > 0.0))
        .collect();
    (x, y)
}

/// The l1 logistic regression of the rows `rows` (None when they are one class, or the
/// backend returned no point).
fn fit_node(
    problem: &LossTreeProblem,
    rows: &[usize],
    nlp: &dyn NlpSolver,
) -> Result<Option<(Vec<f64>, f64)>> {
    let (x, y) = node_data(problem, rows);
    let positives = y.iter().filter(|&&k| k == 1).count();
    if positives == 0 || positives == y.len() {
        return Ok(None);
    }
    let options = SolveOptions {
        time_limit: Some(problem.config.nlp_time_limit),
        iteration_limit: Some(ITERATIONS),
        ..Default::default()
    };
    let lambda = problem.config.lambda / rows.len() as f64;
    let fit = logistic_l1::fit(Arc::new(x), Arc::new(y), 2, lambda, None, nlp, &options).map_err(
        |e| GlassboxError::formulation(NAME, format!("a node's logistic regression: {e}")),
    )?;
    Ok(fit.coefficients.map(|c| {
        let w = c
            .weights
            .column(0)
            .iter()
            .map(|&v| {
                // An interior point's stand-in for zero.
                if v.abs() <= glassbox_core::metrics::SPARSITY_TOLERANCE {
                    0.0
                } else {
                    v
                }
            })
            .collect();
        (w, c.intercepts[0])
    }))
}

/// The constant plane of a node whose points are one class (or none): all to that side.
fn constant_plane(problem: &LossTreeProblem, rows: &[usize]) -> (Vec<f64>, f64) {
    let positive = rows.first().is_none_or(|&i| problem.y[i] > 0.0);
    (vec![0.0; problem.p], if positive { 1.0 } else { -1.0 })
}

/// Makes a plane a feasible part of a MIP start (see the module comment).
fn fit_to_milp(
    problem: &LossTreeProblem,
    plane: &mut (Vec<f64>, f64),
    rows: &[usize],
    routes: bool,
) {
    let config = &problem.config;
    let (w_bound, b_bound) = (
        config.weight_bound,
        problem.p as f64 * config.weight_bound + 1.0,
    );
    keep_largest(plane, config.max_features);
    let largest = plane.0.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let shrink = 1.0f64
        .min(if largest > 0.0 {
            w_bound / largest
        } else {
            1.0
        })
        .min(if plane.1 != 0.0 {
            b_bound / plane.1.abs()
        } else {
            1.0
        });
    scale(plane, shrink);
    if !routes {
        return;
    }
    let eps = config.epsilon;
    let smallest_right = rows
        .iter()
        .map(|&i| score(&problem.x, i, plane))
        .filter(|&s| s > 0.0)
        .fold(f64::INFINITY, f64::min);
    if smallest_right < eps {
        let largest = plane.0.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let grow = eps / smallest_right;
        if largest * grow <= w_bound && plane.1.abs() * grow <= b_bound {
            scale(plane, grow);
            return;
        }
        // Shift down past the points in (0, eps); each pass sends at least one more left.
        loop {
            let inside = rows
                .iter()
                .map(|&i| score(&problem.x, i, plane))
                .filter(|&s| s > 0.0 && s < eps)
                .fold(f64::NEG_INFINITY, f64::max);
            if inside == f64::NEG_INFINITY {
                break;
            }
            plane.1 = (plane.1 - inside).max(-b_bound);
        }
    }
}

/// HFS: keeps the `k` largest |w_j| of a plane (all when `k` is None).
fn keep_largest(plane: &mut (Vec<f64>, f64), k: Option<usize>) {
    let Some(k) = k else { return };
    let mut order: Vec<usize> = (0..plane.0.len()).collect();
    order.sort_by(|&a, &b| plane.0[b].abs().total_cmp(&plane.0[a].abs()));
    for &j in order.iter().skip(k) {
        plane.0[j] = 0.0;
    }
}

fn scale(plane: &mut (Vec<f64>, f64), factor: f64) {
    if factor != 1.0 {
        plane.0.iter_mut().for_each(|v| *v *= factor);
        plane.1 *= factor;
    }
}

/// The greedy tree's hyperplanes (scaled units), heap order.
pub fn greedy_planes(
    problem: &LossTreeProblem,
    nlp: &dyn NlpSolver,
) -> Result<Vec<(Vec<f64>, f64)>> {
    let d = problem.config.depth;
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); problem.branches];
    members[0] = (0..problem.x.nrows()).collect();
    let mut planes = Vec::with_capacity(problem.branches);
    for t in 0..problem.branches {
        let rows = std::mem::take(&mut members[t]);
        let routes = layer_of(t) + 1 < d;
        let mut plane = match fit_node(problem, &rows, nlp)? {
            Some(plane) => plane,
            None => constant_plane(problem, &rows),
        };
        fit_to_milp(problem, &mut plane, &rows, routes);
        if routes {
            let (left, right): (Vec<usize>, Vec<usize>) = rows
                .iter()
                .partition(|&&i| score(&problem.x, i, &plane) <= 0.0);
            members[2 * t + 1] = left;
            members[2 * t + 2] = right;
        }
        planes.push(plane);
    }
    Ok(planes)
}

/// A last-layer node's exact term: its points' log-losses plus its penalties.
fn node_term(problem: &LossTreeProblem, rows: &[usize], plane: &(Vec<f64>, f64)) -> f64 {
    let config = &problem.config;
    let loss: f64 = rows
        .iter()
        .map(|&i| logistic_loss(problem.y[i] * score(&problem.x, i, plane)))
        .sum();
    let l1: f64 = plane.0.iter().map(|v| v.abs()).sum();
    let l0 = plane.0.iter().filter(|v| **v != 0.0).count() as f64;
    loss + config.lambda * l1 + config.l0_penalty * l0
}

/// Remark 1: the last layer refit by exact l1 logistic regressions (see the module
/// comment); `planes` are the MILP's, scaled units.
pub fn refine_last_layer(
    problem: &LossTreeProblem,
    planes: &[(Vec<f64>, f64)],
    nlp: &dyn NlpSolver,
) -> Result<Vec<(Vec<f64>, f64)>> {
    let leaves = problem.leaves_of(planes);
    let mut refined = planes.to_vec();
    for t in last_layer(problem.config.depth) {
        let rows: Vec<usize> = (0..leaves.len()).filter(|&i| leaves[i] == t).collect();
        let Some(mut plane) = fit_node(problem, &rows, nlp)? else {
            continue;
        };
        keep_largest(&mut plane, problem.config.max_features);
        if node_term(problem, &rows, &plane) < node_term(problem, &rows, &planes[t]) {
            refined[t] = plane;
        }
    }
    Ok(refined)
}
