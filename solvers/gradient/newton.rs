//! The second stage of the inner solve: Bertsekas's projected Newton method for bound
//! constraints (Bertsekas 1982, "Projected Newton methods for optimization problems with
//! simple constraints") with the exact Hessian, written as an argmin [`Solver`] like the
//! first-order methods of [`super::projected`].
//!
//! At `x` with gradient `g` and Hessian `H`, the epsilon-active set holds the variables
//! within `eps = min(1e-3, |P(x - g) - x|)` of a bound that the gradient pushes against
//! (the same set as projected L-BFGS). The free variables take the Newton direction
//! `-(H_FF + tau I)^-1 g_F`, with the smallest `tau` in `0, tau_0, 10 tau_0, ...` for which
//! the Cholesky factorization succeeds (`tau_0` = the most negative diagonal entry plus
//! `1e-8` times the largest one: a nonconvex region gets a positive definite model, a
//! convex one the pure Newton step); the active ones take `-g_j / H_jj` (a positive
//! diagonal scaling, clipped by the bound they move to). The projected path `P(x + t d)` is
//! searched from `t = 1` by the Armijo backtracking of [`Common::search`]; where the
//! Hessian is not finite, or the Newton path finds no lower point, scaled projected steepest
//! descent is tried. Near a nondegenerate local minimizer the active set is identified and
//! the steps are Newton steps on the free variables: quadratic convergence, where the
//! first-order methods crawl in the narrow valleys of a badly conditioned problem (the
//! S-ORRT objective at gamma = 512).
//!
//! The Hessian is dense (`n x n`, a Cholesky factorization of the free block per
//! iteration), so the stage is used only up to [`MAX_VARIABLES`] variables.

use super::projected::{dot, steepest, Common, InnerState, Search, Stop};
use argmin::core::{
    CostFunction, Error, Gradient, Hessian, Problem, Solver, State, TerminationReason,
    TerminationStatus, KV,
};
use nalgebra::{Cholesky, DMatrix, DVector};

/// The largest number of variables for which the stage runs: its dense Hessian takes
/// `8 n^2` bytes (32 MB at 2000) and its factorization `n^3 / 3` flops per iteration
/// (about a second at 2000 on a shared core).
pub(crate) const MAX_VARIABLES: usize = 2000;

/// Iterations in a row without a new lowest cost or projected gradient after which the
/// method gives up.
const MAX_STALLED: u32 = 10;
/// Factorizations tried per iteration, `tau` growing tenfold between them.
const MAX_FACTORIZATIONS: usize = 40;

/// Projected Newton with an epsilon-active set and a modified Cholesky factorization (see
/// the module documentation).
#[derive(Clone, Debug)]
pub(crate) struct ProjectedNewton {
    /// Bounds, tolerance, deadline and the reason the method stopped.
    pub common: Common,
}

impl ProjectedNewton {
    pub fn new(common: Common) -> Self {
        ProjectedNewton { common }
    }

    /// The projected Newton direction, or `None` when the Hessian is not finite.
    fn direction(
        h: &DMatrix<f64>,
        g: &[f64],
        active: &[bool],
        regularization: f64,
    ) -> Option<Vec<f64>> {
        let free: Vec<usize> = (0..g.len()).filter(|&j| !active[j]).collect();
        let diagonal_max = (0..g.len()).fold(0f64, |m, j| m.max(h[(j, j)].abs()));
        if !diagonal_max.is_finite() {
            return None;
        }
        let floor = 1e-8 * diagonal_max.max(f64::MIN_POSITIVE);
        let mut d: Vec<f64> = (0..g.len()).map(|j| -g[j] / h[(j, j)].max(floor)).collect();
        if free.is_empty() {
            return Some(d);
        }
        let hff = DMatrix::from_fn(free.len(), free.len(), |a, b| h[(free[a], free[b])]);
        if hff.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let rhs = DVector::from_iterator(free.len(), free.iter().map(|&j| -g[j]));
        let diagonal_min = hff.diagonal().min();
        let mut tau = regularization;
        let first_shift = ((-diagonal_min).max(0.0) + floor).max(10.0 * regularization);
        for _ in 0..MAX_FACTORIZATIONS {
            let mut shifted = hff.clone();
            for a in 0..free.len() {
                shifted[(a, a)] += tau;
            }
            if let Some(cholesky) = Cholesky::new(shifted) {
                let step = cholesky.solve(&rhs);
                if step.iter().all(|v| v.is_finite()) {
                    for (a, &j) in free.iter().enumerate() {
                        d[j] = step[a];
                    }
                    return Some(d);
                }
            }
            tau = if tau < first_shift {
                first_shift
            } else {
                10.0 * tau
            };
        }
        None
    }
}

impl<O> Solver<O, InnerState> for ProjectedNewton
where
    O: CostFunction<Param = Vec<f64>, Output = f64>
        + Gradient<Param = Vec<f64>, Gradient = Vec<f64>>
        + Hessian<Param = Vec<f64>, Hessian = DMatrix<f64>>,
{
    fn name(&self) -> &str {
        "projected Newton"
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
        let h = match problem.hessian(&x) {
            Ok(h) => h,
            Err(e) => {
                let stop = Stop::EvaluationFailed(e.to_string());
                return Ok((self.common.halt(state, stop), None));
            }
        };
        // The regularized Newton step of Li, Fukushima, Qi and Yamashita (2004): a shift of
        // the order of the projected gradient keeps fast local convergence where the
        // minimizers are not isolated (flat directions: a zero eigenvalue of the Hessian, as
        // at the S-ORRT points where leaves receive no data), where the pure Newton step
        // oscillates along the flat directions.
        let regularization = c.projected_gradient_norm(&x, &g);
        let newton = Self::direction(&h, &g, &active, regularization).filter(|d| {
            let slope = dot(&g, d);
            slope.is_finite() && slope < 0.0
        });
        let mut outcome = match &newton {
            Some(d) => self.common.search(problem, &x, f, &g, d, false),
            None => Search::Failed,
        };
        if matches!(outcome, Search::Failed) {
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
        let pg = self.common.projected_gradient_norm(&xt, &gt);
        let stalled = self.common.stalled(ft, pg, MAX_STALLED);
        let state = state.param(xt).cost(ft).gradient(gt);
        let kv =
            argmin::kv!("step" => t; "projected_gradient" => pg; "newton" => newton.is_some(););
        if let Some(why) = stalled {
            return Ok((self.common.halt(state, Stop::NoProgress(why)), Some(kv)));
        }
        Ok((state, Some(kv)))
    }

    fn terminate(&mut self, state: &InnerState) -> TerminationStatus {
        self.common.terminate(state)
    }
}
