//! The bound-constrained inner methods, written as argmin [`Solver`]s so that argmin's
//! `Executor` drives them (iteration limit, timeout, observers):
//!
//! - [`ProjectedLbfgs`] (the default): L-BFGS on the variables off their bounds, in the
//!   manner of Bertsekas's projected Newton method. At `x` with gradient `g`, the
//!   epsilon-active set holds the variables within `eps = min(1e-3, |P(x - g) - x|)` of a
//!   bound that the gradient pushes against; the two-loop recursion applied to `g` restricted
//!   to the free variables gives their direction, the active ones take a scaled steepest
//!   descent step. The recursion starts from a diagonal inverse Hessian `D`, updated with
//!   every pair by Gilbert and Lemaréchal's diagonal BFGS formula (M1QN3's DIS mode) rather
//!   than the scalar `s^T y / y^T y`: on problems whose variables see curvatures of very
//!   different orders (a soft tree's split variables against its leaf coefficients) the
//!   scalar fits one group and the method crawls (the diagonal is not handed on between
//!   outer iterations: a new inner solve starts from the scalar of the pairs it is given).
//!   The projected path `P(x + t d)` is searched by backtracking (safeguarded quadratic
//!   interpolation) until the Armijo condition `f(x_t) <= f(x) + c1 g^T (x_t - x)` holds,
//!   or, where `f(x_t)` is within rounding of `f(x)`, the decrease estimated from the
//!   gradients does (Hager and Zhang's approximate Wolfe condition); the rounding band is
//!   float64's unless the problem declares a coarser one (`objective_rounding`: the torch
//!   backend's float32). A unit step that leaves the bounds alone and still descends
//!   steeply (the Wolfe curvature condition fails) is doubled while the Armijo condition
//!   holds, which is what walks an unbounded direction down to -1e20 quickly. Pairs
//!   `(s, y)` with non-positive curvature (`s^T y <= 1e-10 |s| |y|`) are skipped; when the
//!   quasi-Newton path fails, the memory (pairs and diagonal) is cleared and projected
//!   steepest descent is tried.
//! - [`Spg`]: the nonmonotone spectral projected gradient method of Birgin, Martínez and
//!   Raydan (SPG2): direction `P(x - alpha g) - x` with the Barzilai–Borwein step `alpha`,
//!   Armijo condition against the largest of the last ten values.
//!
//! Both stop when the projected gradient `|P(x - g) - x|_inf` is at most their tolerance
//! (argmin's `SolverConverged`), when the deadline passes (checked before every
//! evaluation: `Timeout`), when the cost falls below -1e20, when an evaluation panics or is
//! not finite at the starting point, or when no progress is possible (`SolverExit`, with
//! the reason in [`Stop`]).
//!
//! Depends on argmin only (the problem is any argmin `CostFunction` + `Gradient` on
//! `Vec<f64>`).

use super::barrier::Barrier;
use super::subproblem::clamp;
use argmin::core::{
    CostFunction, Error, Gradient, IterState, Problem, Solver, State, TerminationReason,
    TerminationStatus, KV,
};
use glassbox_core::{deadline_passed, Interrupt};
use std::collections::VecDeque;
use std::time::Instant;

/// The iteration state of both methods: point, gradient and cost.
pub(crate) type InnerState = IterState<Vec<f64>, Vec<f64>, (), (), (), f64>;

/// A cost below this counts as unbounded below.
pub(crate) const UNBOUNDED_BELOW: f64 = -1e20;

/// Sufficient-decrease constant of the Armijo condition.
const C1: f64 = 1e-4;
/// Relative width of the band around the reference cost within which the cost is taken to
/// be rounding noise (in float64; at least [`ROUNDING_MARGIN`] times a coarser rounding).
const NOISE: f64 = 1e-10;
/// How many times the objective's relative rounding (`NlpProblem::objective_rounding`) the
/// noise band and the stagnation test are at least wide: a sum over N rows rounds to a few
/// dozen ulps. Changes nothing in float64 (1e2 x 2.2e-16 is below [`NOISE`]); in float32 the
/// band is 1.2e-5.
const ROUNDING_MARGIN: f64 = 1e2;
/// Curvature constant under which a unit step is doubled.
const C2: f64 = 0.9;
/// Trial points of one line search before it gives up.
const MAX_TRIALS: usize = 60;
/// Doublings of a unit step at most.
const MAX_EXPANSIONS: usize = 80;
/// Upper limit of the epsilon of the epsilon-active set.
pub(super) const ACTIVE_EPSILON: f64 = 1e-3;
/// Iterations in a row without a new lowest cost or projected gradient after which L-BFGS
/// gives up (it accepts steps that raise the cost by rounding errors only).
const LBFGS_MAX_STALLED: u32 = 10;
/// The same for the nonmonotone SPG.
const SPG_MAX_STALLED: u32 = 50;
/// Iterations over which the lowest cost must fall by a relative [`STAGNATION`].
const STAGNATION_WINDOW: usize = 100;
/// See [`STAGNATION_WINDOW`].
const STAGNATION: f64 = 1e-10;

/// Why an inner method stopped, beyond argmin's own reasons (iterations, timeout).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Stop {
    /// The projected gradient is within the tolerance.
    Converged,
    /// The deadline passed, or a stop was requested (`Settings::interrupted` tells which).
    Timeout,
    /// The cost fell below -1e20.
    Unbounded,
    /// An evaluation panicked (or failed otherwise); the message says how.
    EvaluationFailed(String),
    /// The cost or gradient at the starting point is not finite.
    NonFinite,
    /// The line search found no acceptable point, or the cost stopped decreasing.
    NoProgress(String),
}

impl Stop {
    /// The argmin termination reason of this stop.
    pub fn reason(&self) -> TerminationReason {
        match self {
            Stop::Converged => TerminationReason::SolverConverged,
            Stop::Timeout => TerminationReason::Timeout,
            Stop::Unbounded => TerminationReason::SolverExit("cost below -1e20".into()),
            Stop::EvaluationFailed(message) => TerminationReason::SolverExit(message.clone()),
            Stop::NonFinite => TerminationReason::SolverExit(
                "non-finite cost or gradient at the starting point".into(),
            ),
            Stop::NoProgress(why) => TerminationReason::SolverExit(format!("no progress: {why}")),
        }
    }
}

/// What both methods share: the bounds, the tolerance, the deadline and the reason they
/// stopped.
#[derive(Clone, Debug)]
pub(crate) struct Common {
    pub(super) lower: Vec<f64>,
    pub(super) upper: Vec<f64>,
    /// Bounds every step must stay strictly inside (a barrier's; the fraction-to-the-boundary
    /// rule of [`Barrier::step_to_boundary`]).
    interior: Option<(Vec<f64>, Vec<f64>)>,
    tolerance: f64,
    deadline: Option<Instant>,
    /// A stop request from outside, checked with the deadline.
    interrupt: Option<Interrupt>,
    /// Why the method stopped, when it stopped by itself.
    pub stop: Option<Stop>,
    /// The lowest cost so far and the iterations since it last went down.
    best: f64,
    best_pg: f64,
    stalled: u32,
    /// The lowest cost after each of the last iterations.
    recent_best: VecDeque<f64>,
    /// The relative rounding of the cost's values (`NlpProblem::objective_rounding`).
    rounding: f64,
}

/// The outcome of a line search.
pub(super) enum Search {
    /// A new point, its cost and gradient, and the step length.
    Accepted(Vec<f64>, f64, Vec<f64>, f64),
    /// No acceptable point along the direction.
    Failed,
    /// The search had to stop (deadline, failed evaluation).
    Stopped(Stop),
}

pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn inf_norm(a: &[f64]) -> f64 {
    a.iter().fold(0.0, |m, v| m.max(v.abs()))
}

impl Common {
    pub fn new(
        lower: Vec<f64>,
        upper: Vec<f64>,
        tolerance: f64,
        deadline: Option<Instant>,
    ) -> Self {
        Common {
            lower,
            upper,
            interior: None,
            tolerance,
            deadline,
            interrupt: None,
            stop: None,
            best: f64::INFINITY,
            best_pg: f64::INFINITY,
            stalled: 0,
            recent_best: VecDeque::new(),
            rounding: f64::EPSILON,
        }
    }

    /// The same, for a cost whose values are rounded to a relative `rounding` (coarser than
    /// float64's: the line search's noise band and the stagnation test widen with it).
    pub fn with_rounding(mut self, rounding: f64) -> Self {
        self.rounding = rounding.max(f64::EPSILON);
        self
    }

    /// The relative width of the band within which cost differences are rounding.
    fn noise(&self) -> f64 {
        NOISE.max(ROUNDING_MARGIN * self.rounding)
    }

    /// The relative fall of the lowest cost over [`STAGNATION_WINDOW`] iterations below which
    /// the method stagnates.
    fn stagnation(&self) -> f64 {
        STAGNATION.max(ROUNDING_MARGIN * self.rounding)
    }

    /// The same, with steps kept strictly inside `interior` (the bounds of a barrier).
    pub fn with_interior(mut self, interior: Option<(Vec<f64>, Vec<f64>)>) -> Self {
        self.interior = interior;
        self
    }

    /// The same, stopping (as at the deadline) once `interrupt` is requested.
    pub fn with_interrupt(mut self, interrupt: Option<Interrupt>) -> Self {
        self.interrupt = interrupt;
        self
    }

    /// The longest step along `d` from `x` that the interior allows (infinite without one).
    fn longest_step(&self, x: &[f64], d: &[f64]) -> f64 {
        self.interior.as_ref().map_or(f64::INFINITY, |(l, u)| {
            Barrier::step_to_boundary(l, u, x, d)
        })
    }

    fn project(&self, x: &mut [f64]) {
        for ((v, &l), &u) in x.iter_mut().zip(&self.lower).zip(&self.upper) {
            *v = clamp(*v, l, u);
        }
    }

    /// `|P(x - g) - x|_inf`.
    pub(super) fn projected_gradient_norm(&self, x: &[f64], g: &[f64]) -> f64 {
        (0..x.len()).fold(0.0, |m, j| {
            m.max(clamp(-g[j], self.lower[j] - x[j], self.upper[j] - x[j]).abs())
        })
    }

    /// The epsilon-active set at `x` (Bertsekas 1982): variables within
    /// min(ACTIVE_EPSILON, projected gradient norm) of a bound that the gradient pushes
    /// against. Both inner methods fix them and move only the others.
    pub(super) fn active_set(&self, x: &[f64], g: &[f64]) -> Vec<bool> {
        let eps = ACTIVE_EPSILON.min(self.projected_gradient_norm(x, g));
        (0..x.len())
            .map(|j| {
                (x[j] - self.lower[j] <= eps && g[j] > 0.0)
                    || (self.upper[j] - x[j] <= eps && g[j] < 0.0)
            })
            .collect()
    }

    /// The deadline has passed or a stop was requested.
    fn past_deadline(&self) -> bool {
        self.interrupt.as_ref().is_some_and(Interrupt::requested) || deadline_passed(self.deadline)
    }

    /// Projects the starting point and evaluates cost and gradient there.
    pub(super) fn init<O>(&mut self, problem: &mut Problem<O>, state: InnerState) -> InnerState
    where
        O: CostFunction<Param = Vec<f64>, Output = f64>
            + Gradient<Param = Vec<f64>, Gradient = Vec<f64>>,
    {
        let mut x = state.get_param().cloned().unwrap_or_default();
        self.project(&mut x);
        let evaluated = problem
            .cost(&x)
            .and_then(|f| problem.gradient(&x).map(|g| (f, g)));
        match evaluated {
            Ok((f, g)) => {
                if !(f.is_finite() && g.iter().all(|v| v.is_finite())) {
                    self.stop = Some(Stop::NonFinite);
                }
                self.best = f;
                self.recent_best = VecDeque::from([f]);
                self.best_pg = self.projected_gradient_norm(&x, &g);
                state.param(x).cost(f).gradient(g)
            }
            Err(e) => {
                self.stop = Some(Stop::EvaluationFailed(e.to_string()));
                state.param(x)
            }
        }
    }

    /// The methods' own stopping tests, before every iteration.
    pub(super) fn terminate(&mut self, state: &InnerState) -> TerminationStatus {
        if self.stop.is_none() {
            if let (Some(x), Some(g)) = (state.get_param(), state.get_gradient()) {
                if state.get_cost() < UNBOUNDED_BELOW {
                    self.stop = Some(Stop::Unbounded);
                } else if self.projected_gradient_norm(x, g) <= self.tolerance {
                    self.stop = Some(Stop::Converged);
                }
            }
        }
        if self.stop.is_none() && self.past_deadline() {
            self.stop = Some(Stop::Timeout);
        }
        match &self.stop {
            Some(stop) => TerminationStatus::Terminated(stop.reason()),
            None => TerminationStatus::NotTerminated,
        }
    }

    /// Stops the method with `stop`.
    pub(super) fn halt(&mut self, state: InnerState, stop: Stop) -> InnerState {
        let reason = stop.reason();
        self.stop = Some(stop);
        state.terminate_with(reason)
    }

    /// Records an iteration's cost and projected gradient; `Some(why)` when the method
    /// should give up: `limit` iterations in a row with neither a new lowest cost nor a new
    /// smallest projected gradient, or a lowest cost that fell by less than
    /// `1e-10 max(1, |f|)` (100 times a coarser rounding of the cost: `stagnation`) over the
    /// last [`STAGNATION_WINDOW`] iterations (a valley so flat that the tolerance is out of
    /// reach in any useful time).
    pub(super) fn stalled(&mut self, f_new: f64, pg_new: f64, limit: u32) -> Option<String> {
        if f_new < self.best || pg_new < self.best_pg {
            self.best = self.best.min(f_new);
            self.best_pg = self.best_pg.min(pg_new);
            self.stalled = 0;
        } else {
            self.stalled += 1;
        }
        if self.stalled >= limit {
            return Some(format!(
                "neither the cost nor the projected gradient went down in {limit} iterations"
            ));
        }
        if self.recent_best.len() > STAGNATION_WINDOW {
            self.recent_best.pop_front();
        }
        self.recent_best.push_back(self.best);
        let oldest = self.recent_best[0];
        if self.recent_best.len() > STAGNATION_WINDOW
            && oldest - self.best <= self.stagnation() * self.best.abs().max(1.0)
        {
            return Some(format!(
                "the cost fell by only {:.1e} in {STAGNATION_WINDOW} iterations",
                oldest - self.best
            ));
        }
        None
    }

    /// Searches the projected path `P(x + t d)` from `t = 1` (or the longest step the
    /// interior allows, when shorter) for a point with
    /// `f(x_t) <= f_ref + c1 g^T (x_t - x)` (up to rounding in `f_ref`) and a finite
    /// gradient. With `expand`, a unit step that the bounds leave alone and that fails the
    /// curvature condition is doubled while the Armijo condition holds.
    pub(super) fn search<O>(
        &self,
        problem: &mut Problem<O>,
        x: &[f64],
        f_ref: f64,
        grad: &[f64],
        d: &[f64],
        expand: bool,
    ) -> Search
    where
        O: CostFunction<Param = Vec<f64>, Output = f64>
            + Gradient<Param = Vec<f64>, Gradient = Vec<f64>>,
    {
        let gd = dot(grad, d);
        let slack = 10.0 * self.rounding * f_ref.abs();
        let trial = |t: f64| -> (Vec<f64>, bool) {
            let mut clipped = false;
            let xt = (0..x.len())
                .map(|j| {
                    let v = x[j] + t * d[j];
                    let p = clamp(v, self.lower[j], self.upper[j]);
                    clipped |= p != v;
                    p
                })
                .collect();
            (xt, clipped)
        };
        let longest = self.longest_step(x, d);
        let mut t = longest.min(1.0);
        let mut accepted = None;
        for _ in 0..MAX_TRIALS {
            if self.past_deadline() {
                return Search::Stopped(Stop::Timeout);
            }
            let (xt, clipped) = trial(t);
            let step: Vec<f64> = xt.iter().zip(x).map(|(a, b)| a - b).collect();
            let decrease = dot(grad, &step);
            if step.iter().all(|&s| s == 0.0) {
                break;
            }
            if decrease >= 0.0 {
                // The projection turned the step uphill: a shorter one bends less.
                t *= 0.5;
                continue;
            }
            let ft = match problem.cost(&xt) {
                Ok(v) => v,
                Err(e) => return Search::Stopped(Stop::EvaluationFailed(e.to_string())),
            };
            let armijo = ft.is_finite() && ft <= f_ref + C1 * decrease + slack;
            // Within rounding noise of f_ref, the cost cannot tell a good step from a bad
            // one: the decrease is estimated from the gradients instead (trapezoidal rule,
            // exact for a quadratic), as in Hager and Zhang's approximate Wolfe conditions.
            let noisy = ft.is_finite() && (ft - f_ref).abs() <= self.noise() * f_ref.abs();
            if armijo || noisy {
                let gt = match problem.gradient(&xt) {
                    Ok(v) => v,
                    Err(e) => return Search::Stopped(Stop::EvaluationFailed(e.to_string())),
                };
                if gt.iter().all(|v| v.is_finite()) {
                    let estimated = 0.5 * (decrease + dot(&gt, &step));
                    if armijo || estimated <= C1 * decrease {
                        accepted = Some((xt, ft, gt, clipped));
                        break;
                    }
                } else {
                    t *= 0.1;
                    continue;
                }
            }
            t = if ft.is_finite() {
                // Minimizer of the quadratic through f(x), g^T d and f(x_t), safeguarded.
                let denominator = 2.0 * (ft - f_ref - gd * t);
                let interpolated = if denominator > 0.0 {
                    -gd * t * t / denominator
                } else {
                    0.5 * t
                };
                interpolated.clamp(0.1 * t, 0.5 * t)
            } else {
                0.1 * t
            };
        }
        let Some((mut xt, mut ft, mut gt, clipped)) = accepted else {
            return Search::Failed;
        };
        if expand && t == 1.0 && !clipped {
            for _ in 0..MAX_EXPANSIONS {
                if ft < UNBOUNDED_BELOW
                    || dot(&gt, d) >= C2 * gd
                    || 2.0 * t > longest
                    || self.past_deadline()
                {
                    break;
                }
                let (x2, clipped) = trial(2.0 * t);
                if clipped {
                    break;
                }
                let Ok(f2) = problem.cost(&x2) else { break };
                if !(f2.is_finite() && f2 <= f_ref + C1 * 2.0 * t * gd + slack && f2 < ft) {
                    break;
                }
                let Ok(g2) = problem.gradient(&x2) else { break };
                if !g2.iter().all(|v| v.is_finite()) {
                    break;
                }
                t *= 2.0;
                (xt, ft, gt) = (x2, f2, g2);
            }
        }
        Search::Accepted(xt, ft, gt, t)
    }
}

/// The steepest descent direction, scaled so that its largest entry is at most 1.
pub(super) fn steepest(g: &[f64]) -> Vec<f64> {
    let scale = 1f64.min(1.0 / inf_norm(g).max(f64::MIN_POSITIVE));
    g.iter().map(|v| -scale * v).collect()
}

/// L-BFGS correction pairs `(s, y)`, oldest first.
pub(crate) type Pairs = (VecDeque<Vec<f64>>, VecDeque<Vec<f64>>);

/// Projected L-BFGS with an epsilon-active set (see the module documentation).
#[derive(Clone, Debug)]
pub(crate) struct ProjectedLbfgs {
    /// Bounds, tolerance, deadline and the reason the method stopped.
    pub common: Common,
    memory: usize,
    s: VecDeque<Vec<f64>>,
    y: VecDeque<Vec<f64>>,
    /// The diagonal initial inverse Hessian of the two-loop recursion (empty: the scalar
    /// `s^T y / y^T y` of the last pair).
    diagonal: Vec<f64>,
}

impl ProjectedLbfgs {
    pub fn new(common: Common, memory: usize) -> Self {
        ProjectedLbfgs {
            common,
            memory: memory.max(1),
            s: VecDeque::new(),
            y: VecDeque::new(),
            diagonal: Vec::new(),
        }
    }

    /// Starts from the correction pairs of an earlier solve (the outer loop hands them on
    /// while the penalty, and so the curvature of the subproblem, stays the same).
    pub fn with_memory(mut self, pairs: Pairs) -> Self {
        let (mut s, mut y) = pairs;
        while s.len() > self.memory {
            s.pop_front();
            y.pop_front();
        }
        self.s = s;
        self.y = y;
        self
    }

    /// The correction pairs.
    pub fn into_memory(self) -> Pairs {
        (self.s, self.y)
    }

    /// The quasi-Newton direction: the two-loop recursion on the free part of `g`; the
    /// variables in `active` take `-h0_j g_j`, with `h0` the initial inverse Hessian (the
    /// diagonal, or the scalar of the last pair before there is one).
    fn direction(&self, g: &[f64], active: &[bool]) -> Vec<f64> {
        let gamma = match (self.s.back(), self.y.back()) {
            (Some(s), Some(y)) => dot(s, y) / dot(y, y),
            _ => 1f64.min(1.0 / inf_norm(g).max(f64::MIN_POSITIVE)),
        };
        let mut q: Vec<f64> = g
            .iter()
            .zip(active)
            .map(|(&v, &a)| if a { 0.0 } else { v })
            .collect();
        let h0 = |j: usize| {
            if self.diagonal.is_empty() {
                gamma
            } else {
                self.diagonal[j]
            }
        };
        let mut alpha = vec![0.0; self.s.len()];
        let pairs = self.s.iter().zip(&self.y).zip(alpha.iter_mut());
        for ((s, y), a) in pairs.rev() {
            *a = dot(s, &q) / dot(y, s);
            for (qj, yj) in q.iter_mut().zip(y) {
                *qj -= *a * yj;
            }
        }
        for (j, qj) in q.iter_mut().enumerate() {
            *qj *= h0(j);
        }
        for ((s, y), a) in self.s.iter().zip(&self.y).zip(&alpha) {
            let beta = dot(y, &q) / dot(y, s);
            for (qj, sj) in q.iter_mut().zip(s) {
                *qj += (a - beta) * sj;
            }
        }
        q.iter()
            .zip(g)
            .zip(active)
            .enumerate()
            .map(|(j, ((&r, &gj), &a))| if a { -h0(j) * gj } else { -r })
            .collect()
    }

    /// Updates the diagonal initial inverse Hessian with the pair `(s, y)` (`s^T y > 0`):
    /// Gilbert and Lemaréchal's diagonal update (M1QN3's DIS mode), the diagonal of the
    /// BFGS update of the Oren–Spedicato-scaled diagonal `D (y^T D y / s^T y)^-1`. One
    /// scalar cannot serve variables whose curvatures differ by orders of magnitude (the
    /// split variables of a soft tree against its leaf coefficients); the diagonal learns
    /// a scale per variable.
    fn update_diagonal(&mut self, s: &[f64], y: &[f64], sy: f64) {
        if self.diagonal.len() != s.len() {
            self.diagonal = vec![sy / dot(y, y); s.len()];
        }
        let d = &self.diagonal;
        let ydy: f64 = (0..s.len()).map(|j| y[j] * d[j] * y[j]).sum();
        let sds: f64 = (0..s.len()).map(|j| s[j] * s[j] / d[j]).sum();
        let c = ydy / sy;
        let updated: Vec<f64> = (0..s.len())
            .map(|j| {
                let sj = s[j] / d[j];
                1.0 / (c / d[j] + y[j] * y[j] / sy - c * sj * sj / sds)
            })
            .collect();
        if updated.iter().all(|v| v.is_finite() && *v > 0.0) {
            self.diagonal = updated;
        } else {
            self.diagonal.clear();
        }
    }
}

impl<O> Solver<O, InnerState> for ProjectedLbfgs
where
    O: CostFunction<Param = Vec<f64>, Output = f64>
        + Gradient<Param = Vec<f64>, Gradient = Vec<f64>>,
{
    fn name(&self) -> &str {
        "projected L-BFGS"
    }

    fn init(
        &mut self,
        problem: &mut Problem<O>,
        state: InnerState,
    ) -> Result<(InnerState, Option<KV>), Error> {
        Ok((self.common.init(problem, state), None))
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<O>,
        state: InnerState,
    ) -> Result<(InnerState, Option<KV>), Error> {
        let (Some(x), Some(g)) = (state.get_param().cloned(), state.get_gradient().cloned()) else {
            return Ok((
                state.terminate_with(TerminationReason::SolverExit("no point".into())),
                None,
            ));
        };
        let f = state.get_cost();
        let c = &self.common;
        let active = c.active_set(&x, &g);
        let mut d = self.direction(&g, &active);
        let slope = dot(&g, &d);
        if slope.is_nan() || slope >= 0.0 {
            self.s.clear();
            self.y.clear();
            self.diagonal.clear();
            d = steepest(&g);
        }
        let mut outcome = self.common.search(problem, &x, f, &g, &d, true);
        if matches!(outcome, Search::Failed) && !self.s.is_empty() {
            self.s.clear();
            self.y.clear();
            self.diagonal.clear();
            outcome = self.common.search(problem, &x, f, &g, &steepest(&g), true);
        }
        let (xt, ft, gt, t) = match outcome {
            Search::Accepted(xt, ft, gt, t) => (xt, ft, gt, t),
            Search::Failed => {
                let stop = Stop::NoProgress("the line search found no lower point".into());
                return Ok((self.common.halt(state, stop), None));
            }
            Search::Stopped(stop) => return Ok((self.common.halt(state, stop), None)),
        };
        let s: Vec<f64> = xt.iter().zip(&x).map(|(a, b)| a - b).collect();
        let y: Vec<f64> = gt.iter().zip(&g).map(|(a, b)| a - b).collect();
        let sy = dot(&s, &y);
        if sy > 1e-10 * (dot(&s, &s) * dot(&y, &y)).sqrt() {
            self.update_diagonal(&s, &y, sy);
            if self.s.len() == self.memory {
                self.s.pop_front();
                self.y.pop_front();
            }
            self.s.push_back(s);
            self.y.push_back(y);
        }
        let pg = self.common.projected_gradient_norm(&xt, &gt);
        let stalled = self.common.stalled(ft, pg, LBFGS_MAX_STALLED);
        let state = state.param(xt).cost(ft).gradient(gt);
        let kv = argmin::kv!("step" => t; "projected_gradient" => pg;);
        if let Some(why) = stalled {
            return Ok((self.common.halt(state, Stop::NoProgress(why)), Some(kv)));
        }
        Ok((state, Some(kv)))
    }

    fn terminate(&mut self, state: &InnerState) -> TerminationStatus {
        self.common.terminate(state)
    }
}

/// Nonmonotone spectral projected gradient (SPG2; see the module documentation).
#[derive(Clone, Debug)]
pub(crate) struct Spg {
    /// Bounds, tolerance, deadline and the reason the method stopped.
    pub common: Common,
    alpha: f64,
    history: VecDeque<f64>,
}

/// Safeguards of the spectral step.
const ALPHA_MIN: f64 = 1e-10;
const ALPHA_MAX: f64 = 1e10;
/// Costs the nonmonotone Armijo condition looks back at.
const SPG_WINDOW: usize = 10;

impl Spg {
    pub fn new(common: Common) -> Self {
        Spg {
            common,
            alpha: 1.0,
            history: VecDeque::new(),
        }
    }
}

impl<O> Solver<O, InnerState> for Spg
where
    O: CostFunction<Param = Vec<f64>, Output = f64>
        + Gradient<Param = Vec<f64>, Gradient = Vec<f64>>,
{
    fn name(&self) -> &str {
        "spectral projected gradient"
    }

    fn init(
        &mut self,
        problem: &mut Problem<O>,
        state: InnerState,
    ) -> Result<(InnerState, Option<KV>), Error> {
        let state = self.common.init(problem, state);
        if let (Some(x), Some(g)) = (state.get_param(), state.get_gradient()) {
            let pg = self.common.projected_gradient_norm(x, g);
            self.alpha = (1.0 / pg.max(f64::MIN_POSITIVE)).clamp(ALPHA_MIN, ALPHA_MAX);
            self.history.push_back(state.get_cost());
        }
        Ok((state, None))
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<O>,
        state: InnerState,
    ) -> Result<(InnerState, Option<KV>), Error> {
        let (Some(x), Some(g)) = (state.get_param().cloned(), state.get_gradient().cloned()) else {
            return Ok((
                state.terminate_with(TerminationReason::SolverExit("no point".into())),
                None,
            ));
        };
        let f = state.get_cost();
        let mut target: Vec<f64> = x
            .iter()
            .zip(&g)
            .map(|(v, gj)| v - self.alpha * gj)
            .collect();
        self.common.project(&mut target);
        let d: Vec<f64> = target.iter().zip(&x).map(|(a, b)| a - b).collect();
        let f_ref = self.history.iter().fold(f, |m, &v| m.max(v));
        let (xt, ft, gt, t) = match self.common.search(problem, &x, f_ref, &g, &d, false) {
            Search::Accepted(xt, ft, gt, t) => (xt, ft, gt, t),
            Search::Failed => {
                let stop = Stop::NoProgress("the line search found no acceptable point".into());
                return Ok((self.common.halt(state, stop), None));
            }
            Search::Stopped(stop) => return Ok((self.common.halt(state, stop), None)),
        };
        let s: Vec<f64> = xt.iter().zip(&x).map(|(a, b)| a - b).collect();
        let y: Vec<f64> = gt.iter().zip(&g).map(|(a, b)| a - b).collect();
        let sy = dot(&s, &y);
        self.alpha = if sy <= 0.0 {
            ALPHA_MAX
        } else {
            (dot(&s, &s) / sy).clamp(ALPHA_MIN, ALPHA_MAX)
        };
        if self.history.len() == SPG_WINDOW {
            self.history.pop_front();
        }
        self.history.push_back(ft);
        let pg = self.common.projected_gradient_norm(&xt, &gt);
        let stalled = self.common.stalled(ft, pg, SPG_MAX_STALLED);
        let state = state.param(xt).cost(ft).gradient(gt);
        let kv = argmin::kv!("step" => t; "projected_gradient" => pg;);
        if let Some(why) = stalled {
            return Ok((self.common.halt(state, Stop::NoProgress(why)), Some(kv)));
        }
        Ok((state, Some(kv)))
    }

    fn terminate(&mut self, state: &InnerState) -> TerminationStatus {
        self.common.terminate(state)
    }
}
