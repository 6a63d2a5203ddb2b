//! The barrier path (`path = "barrier"`, and the default `path = "auto"` on problems with
//! variable bounds only, or beside the direct path from a multistart's random start): before
//! the solve proper, a sequence of log-barrier problems keeps the iterates strictly inside
//! the variable bounds while the barrier weight `mu` falls,
//! the way an interior-point method (IPOPT) approaches the bounds.
//!
//! # Why
//!
//! The projected methods move a variable onto its bound as soon as the gradient pushes it
//! there. On the soft trees (S-ORRT, S-ORCT at gamma = 512) the branch variables in [-1, 1]
//! hit their bounds in the first iterations, the sigmoids saturate, and the method ends in
//! a flat degenerate minimum near the start. An interior method instead follows the central
//! path: each variable approaches its bound only as `mu` falls.
//!
//! # Method
//!
//! For `mu_0 = barrier_initial` (default 0.1, IPOPT's `mu_init`) down to `barrier_final`
//! (default 1e-6; the first stage always runs), each stage minimizes
//!
//! ```text
//!   phi_mu(x) = f(x) - mu sum_j [ln(x_j - l_j) + ln(u_j - x_j)]  (+ kappa_d mu (x_j - l_j)
//!               for a variable bounded on one side only, IPOPT's damping, kappa_d = 1e-5)
//! ```
//!
//! subject to the general constraints, with the augmented Lagrangian method of
//! [`super::augmented_lagrangian`] unchanged: [`Barrier`] is applied inside [`Nlp`] (its
//! values, gradient and Hessian include the barrier terms; the barred bounds are no longer
//! projected onto), and the inner methods limit every step to the fraction 0.995 of the
//! distance to a barred bound (IPOPT's fraction-to-the-boundary rule, in
//! [`super::projected::Common::search`]). A stage is solved to the (relative) tolerance
//! `10 mu` (IPOPT's `barrier_tol_factor`), warm-starting from the last stage's point and
//! multipliers, and `mu` falls as IPOPT's monotone rule `max(mu_final, min(0.2 mu, mu^1.5))`.
//! The first point is pushed off the bounds as IPOPT's `bound_push` = `bound_frac` = 1e-2
//! do. With `path = "barrier"`, `refine_after` defaults to 0: where the problem gives a
//! Hessian (and `refine = "newton"`), every inner solve takes projected Newton steps from
//! its start, as IPOPT takes Newton steps; otherwise (no Hessian, `refine = "none"`, or the
//! `torch` backend, whose autograd Hessian costs `n` gradients and so refines only on a
//! stall) L-BFGS's.
//! Measured on the soft trees (`benches/README.md`), the path with L-BFGS steps ends
//! farther from IPOPT's point per start (iris: IPOPT's level on 7 of 20 starts, against 9
//! with Newton steps) but lower on Boston (median 0.94 times IPOPT per start), and its best
//! over 20 starts is within 1% of IPOPT's best or lower on both (issue 24's multistart
//! criterion, which Newton steps miss on Boston by 1.3%): for a multistart, set
//! `refine_after` to at least `inner_iterations` (Newton only on a stall), as the `auto`
//! path does by default.
//!
//! After the last stage the solve proper (projected method, projected Newton stage,
//! statuses) runs on the problem without barrier from the path's point and multipliers:
//! the path only chooses where the solve proper starts, and the status, the tolerances and
//! the limits are those of the solve proper (the path's iterations and time count towards
//! them).
//!
//! Variables with equal bounds, or none, are left to the projection. A warm start that
//! carries constraint multipliers (a [`glassbox_core::SolveResult::warm_start`]) continues a solve
//! and skips the path, as the IPOPT backend then sets `warm_start_init_point`.

use super::augmented_lagrangian;
use super::subproblem::Nlp;
use super::Settings;
use glassbox_core::{SolveResult, TerminationStatus};
use std::time::Instant;

/// IPOPT's `bound_push` and `bound_frac`: how far the first point is moved inside.
const BOUND_PUSH: f64 = 1e-2;
/// IPOPT's `barrier_tol_factor`: a stage is solved to this times `mu`.
const STAGE_TOLERANCE: f64 = 10.0;
/// IPOPT's `mu_linear_decrease_factor` and `mu_superlinear_decrease_power`.
const MU_LINEAR: f64 = 0.2;
const MU_SUPERLINEAR: f64 = 1.5;
/// IPOPT's `kappa_d`: the linear damping of a variable bounded on one side only.
const DAMPING: f64 = 1e-5;
/// The fraction of the distance to a barred bound a step may cover (IPOPT's `tau_min`).
pub(crate) const FRACTION_TO_BOUNDARY: f64 = 0.995;

/// The log barrier of weight `mu` on the variables with a finite bound (and unequal ones).
#[derive(Clone, Debug)]
pub(crate) struct Barrier {
    pub mu: f64,
    /// The barred bounds (infinite where a variable has none, or is not barred).
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
}

impl Barrier {
    /// The barrier of weight `mu` for the bounds `[lower, upper]`, or `None` when no variable
    /// has a finite bound below a different upper one.
    pub fn new(mu: f64, lower: &[f64], upper: &[f64]) -> Option<Self> {
        let barred = |j: usize| lower[j] < upper[j];
        let pick = |bounds: &[f64], none: f64| -> Vec<f64> {
            (0..bounds.len())
                .map(|j| if barred(j) { bounds[j] } else { none })
                .collect()
        };
        let barrier = Barrier {
            mu,
            lower: pick(lower, f64::NEG_INFINITY),
            upper: pick(upper, f64::INFINITY),
        };
        let any = barrier
            .lower
            .iter()
            .zip(&barrier.upper)
            .any(|(l, u)| l.is_finite() || u.is_finite());
        any.then_some(barrier)
    }

    /// Whether `x` lies strictly inside the barred bounds.
    pub fn interior(&self, x: &[f64]) -> bool {
        (0..x.len()).all(|j| self.lower[j] < x[j] && x[j] < self.upper[j])
    }

    /// The barrier terms at an interior `x`.
    pub fn value(&self, x: &[f64]) -> f64 {
        let mu = self.mu;
        (0..x.len())
            .map(|j| {
                let (l, u) = (self.lower[j], self.upper[j]);
                match (l.is_finite(), u.is_finite()) {
                    (true, true) => -mu * ((x[j] - l).ln() + (u - x[j]).ln()),
                    (true, false) => -mu * (x[j] - l).ln() + DAMPING * mu * (x[j] - l),
                    (false, true) => -mu * (u - x[j]).ln() + DAMPING * mu * (u - x[j]),
                    (false, false) => 0.0,
                }
            })
            .sum()
    }

    /// Adds the barrier's gradient at `x` to `grad`.
    pub fn add_gradient(&self, x: &[f64], grad: &mut [f64]) {
        let mu = self.mu;
        for (j, gj) in grad.iter_mut().enumerate() {
            let (l, u) = (self.lower[j], self.upper[j]);
            *gj += match (l.is_finite(), u.is_finite()) {
                (true, true) => -mu / (x[j] - l) + mu / (u - x[j]),
                (true, false) => -mu / (x[j] - l) + DAMPING * mu,
                (false, true) => mu / (u - x[j]) - DAMPING * mu,
                (false, false) => 0.0,
            };
        }
    }

    /// The barrier's Hessian (diagonal) at `x`, entry `j`.
    pub fn hessian_diagonal(&self, x: &[f64], j: usize) -> f64 {
        let (l, u) = (self.lower[j], self.upper[j]);
        let below = if l.is_finite() {
            self.mu / ((x[j] - l) * (x[j] - l))
        } else {
            0.0
        };
        let above = if u.is_finite() {
            self.mu / ((u - x[j]) * (u - x[j]))
        } else {
            0.0
        };
        below + above
    }

    /// Moves `x` inside the barred bounds as IPOPT moves its starting point: at least
    /// `min(1e-2 max(1, |bound|), 1e-2 (u - l))` from each finite bound.
    pub fn push_inside(&self, x: &mut [f64]) {
        for (j, v) in x.iter_mut().enumerate() {
            let (l, u) = (self.lower[j], self.upper[j]);
            let range = u - l;
            if l.is_finite() {
                let push = (BOUND_PUSH * l.abs().max(1.0)).min(BOUND_PUSH * range);
                *v = v.max(l + push);
            }
            if u.is_finite() {
                let push = (BOUND_PUSH * u.abs().max(1.0)).min(BOUND_PUSH * range);
                *v = v.min(u - push);
            }
        }
    }

    /// The largest step `t` with which `x + t d` covers at most [`FRACTION_TO_BOUNDARY`] of
    /// the distance to every finite bound in `lower` / `upper` (infinite when none limits it).
    pub fn step_to_boundary(lower: &[f64], upper: &[f64], x: &[f64], d: &[f64]) -> f64 {
        (0..x.len()).fold(f64::INFINITY, |t, j| {
            if d[j] < 0.0 && lower[j].is_finite() {
                t.min(FRACTION_TO_BOUNDARY * (x[j] - lower[j]) / -d[j])
            } else if d[j] > 0.0 && upper[j].is_finite() {
                t.min(FRACTION_TO_BOUNDARY * (upper[j] - x[j]) / d[j])
            } else {
                t
            }
        })
    }
}

/// IPOPT's monotone update of the barrier weight.
fn next_mu(mu: f64) -> f64 {
    (MU_LINEAR * mu).min(mu.powf(MU_SUPERLINEAR))
}

/// Solves along the barrier path (see the module documentation), then the problem itself
/// from the path's end. `start` is when the solve began.
pub(crate) fn solve(
    nlp: &Nlp,
    settings: &Settings,
    mut x: Vec<f64>,
    mut lambda: Option<Vec<f64>>,
    start: Instant,
) -> SolveResult {
    let deadline = settings.deadline(start);
    let mut iterations = 0u64;
    let mut stages = 0u32;
    let mut mu = settings.barrier_initial;
    nlp.project(&mut x);
    if let Some(mut barrier) = Barrier::new(mu, &nlp.x_lower, &nlp.x_upper) {
        barrier.push_inside(&mut x);
        loop {
            let remaining = settings
                .iteration_limit
                .map_or(u64::MAX, |l| l.saturating_sub(iterations));
            if remaining == 0 || settings.out_of_time(deadline) {
                break;
            }
            barrier.mu = mu;
            let barred = nlp.with_barrier(barrier.clone());
            let stage = Settings {
                tolerance: STAGE_TOLERANCE * mu,
                constraint_tolerance: settings.constraint_tolerance.max(STAGE_TOLERANCE * mu),
                iteration_limit: Some(remaining),
                ..settings.clone()
            };
            if settings.verbosity >= 2 {
                eprintln!("{}: barrier stage {}, mu {mu:.2e}", super::NAME, stages + 1);
            }
            let result =
                augmented_lagrangian::solve(&barred, &stage, x.clone(), lambda.clone(), start);
            iterations += result.iterations;
            stages += 1;
            let usable = result.primal.len() == x.len()
                && result.primal.iter().all(|v| v.is_finite())
                && barrier.interior(&result.primal);
            if !usable
                || matches!(
                    result.status,
                    TerminationStatus::NumericalError | TerminationStatus::Error
                )
            {
                break;
            }
            x = result.primal;
            lambda = result.constraint_multipliers.or(lambda);
            mu = next_mu(mu);
            if mu < settings.barrier_final {
                break;
            }
        }
    }
    let mut result =
        augmented_lagrangian::solve(nlp, &settings.after(iterations), x, lambda, start);
    if stages > 0 {
        result.iterations += iterations;
        result.raw_status = format!(
            "{} [after a barrier path of {stages} stages and {iterations} iterations]",
            result.raw_status
        );
    }
    result
}
