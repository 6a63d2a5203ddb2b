//! Continuation along the slope gamma of a randomized tree: a start is solved at a soft
//! gamma, where its splits feel every row, then at gammas raised step by step to the
//! target, each stage warm-started from the last. S-ORCT and l0tree use it for their random
//! starts when `split_scale = "data"` raised gamma (`formulations/sorct/scale.rs`
//! says when and why).
//!
//! After the first stage a `screen` decides whether the start is worth the sharper stages:
//! the runner tells the formulation the best objective of the split so far, and a start
//! whose soft solution, read at the target gamma, is far above it stops there. A stopped
//! start is reported as feasible at a limit of its own ("other"), with the target
//! problem's objective at its point, or as having no solution when that point violates the
//! target problem's constraints (S-ORCT's (8) depends on gamma).
//!
//! With a sparsity penalty the first stage also settles the support: the coefficients it
//! leaves at zero are held at zero in the sharper stages (`Frozen`). The first stage is
//! the problem at the configured gamma, where the penalty has the shape its paper gives it;
//! at a raised gamma a steep penalty (l0tree's 1 - exp(-alpha u)) cannot hold a zero
//! against the sharper loss's gradient, and every feature came back (see `with_gamma` in
//! `sorct/scale.rs` and `l0tree/mod.rs`).
//!
//! Depends on the core (`nlp`, `solver`, `options`, `result`, `starts`) and on S-ORCT's
//! continuation settings (`sorct/scale.rs`).

use glassbox_core::nlp::{max_violation, NlpProblem};
use glassbox_core::starts::StartContext;
use glassbox_core::{
    Limit, NlpSolver, Result, SolveOptions, SolveResult, TerminationStatus, WarmStart,
};
use std::time::Instant;

/// Largest constraint or bound violation accepted for a point read at the target gamma.
const FEASIBILITY_TOLERANCE: f64 = 1e-6;

/// The gammas of a continuation from `from` to `to`: `from`, `from * factor`, ... while
/// below `to`, then `to`. Just `[to]` when `from >= to`.
pub fn schedule(from: f64, to: f64, factor: f64) -> Vec<f64> {
    let mut stages = Vec::new();
    let mut g = from;
    while g < to && factor > 1.0 {
        stages.push(g);
        g *= factor;
    }
    stages.push(to);
    stages
}

/// Solves `target` (the problem at the last gamma of `stages`) from the warm start of
/// `options`, through the problems `at(gamma)` of the earlier stages. `screen(objective)`
/// receives the target problem's objective at the first stage's point and says whether to
/// go on. `settled(point)` names the variables the first stage's point leaves at zero for
/// good (none without a sparsity penalty); the later stages hold them there. The result is
/// the last stage's, with the iterations and seconds of every stage; `raw_status` lists
/// the stages. The time and iteration limits of `options` are the whole continuation's: a
/// stage that spends one (or ends after a stop request) is the last, its point read at the
/// target and reported at that limit, screen or not.
pub fn solve<P: NlpProblem>(
    stages: &[f64],
    at: impl Fn(f64) -> P,
    target: &dyn NlpProblem,
    solver: &dyn NlpSolver,
    options: &SolveOptions,
    screen: impl Fn(f64) -> bool,
    settled: impl Fn(&[f64]) -> Vec<usize>,
) -> Result<SolveResult> {
    let started = Instant::now();
    // One stage is no continuation: the backend's own result, its raw status untouched.
    let Some((_, earlier)) = stages
        .split_last()
        .filter(|(_, earlier)| !earlier.is_empty())
    else {
        return solver.solve(target, options);
    };
    let mut options = options.clone();
    let mut iterations = 0;
    let mut trail = Vec::new();
    let mut fixed = Vec::new();
    for (k, &gamma) in earlier.iter().enumerate() {
        // Spent before the first stage (an iteration limit of 0, a stop already requested;
        // later stages return below instead): no point to read at the target, whose solve
        // reports the limit.
        if exhausted(&options, started, iterations).is_some() {
            break;
        }
        let stage_options = for_stage(&options, started, iterations);
        let stage = at(gamma);
        let result = solver.solve(&Frozen::new(&stage, &fixed), &stage_options)?;
        iterations += result.iterations;
        trail.push(format!("gamma {gamma}: {}", result.status));
        if result.primal.len() != target.num_variables() {
            return Ok(finish(result, iterations, started, &trail));
        }
        let mut point = result.primal.clone();
        if k == 0 {
            fixed = settled(&point);
            if !fixed.is_empty() {
                trail.push(format!("{} coefficients held at zero", fixed.len()));
            }
        }
        for &j in &fixed {
            point[j] = 0.0;
        }
        options.warm_start = Some(WarmStart::primal(point));
        // A limit spent in this stage ends the continuation here, before the screen: a start
        // stopped by the time or the iteration limit (or a stop request) is reported at
        // that limit, not as screened out, and no later stage runs past the limit.
        if let Some((limit, words)) = exhausted(&options, started, iterations) {
            trail.push(format!("{words} before the target gamma"));
            return Ok(read_at_target(
                result, target, limit, iterations, started, &trail,
            ));
        }
        let screened_out = k == 0 && {
            let at_target = target.objective(&result.primal);
            trail.push(format!("objective at the target {at_target:.6e}"));
            !screen(at_target)
        };
        if screened_out {
            trail.push("screened out".to_string());
            return Ok(read_at_target(
                result,
                target,
                Limit::Other,
                iterations,
                started,
                &trail,
            ));
        }
    }
    let stage_options = for_stage(&options, started, iterations);
    let result = solver.solve(&Frozen::new(target, &fixed), &stage_options)?;
    iterations += result.iterations;
    trail.push(format!(
        "gamma {}: {}",
        stages[stages.len() - 1],
        result.raw_status
    ));
    Ok(finish(result, iterations, started, &trail))
}

/// The limit, with its words, that leaves a continuation begun at `started` no room for
/// another stage after `iterations`: the time limit once it has passed, else a stop
/// request (as the backends rank them), else the iteration limit once used up.
fn exhausted(
    options: &SolveOptions,
    started: Instant,
    iterations: u64,
) -> Option<(Limit, &'static str)> {
    if options
        .time_limit
        .is_some_and(|limit| started.elapsed().as_secs_f64() >= limit)
    {
        Some((Limit::Time, "time limit"))
    } else if options.interrupt.as_ref().is_some_and(|i| i.requested()) {
        Some((Limit::Interrupted, "stop request"))
    } else if options.iteration_limit.is_some_and(|l| iterations >= l) {
        Some((Limit::Iteration, "iteration limit"))
    } else {
        None
    }
}

/// The options of a stage: the time and the iterations left. Unlike [`with_remaining`]
/// the iterations are not raised to 1: a stage never starts with none left unless the
/// limit is 0, where the target's solve gets 0, as without a continuation.
fn for_stage(options: &SolveOptions, started: Instant, iterations: u64) -> SolveOptions {
    let mut o = with_remaining(options, started.elapsed().as_secs_f64(), iterations);
    o.iteration_limit = options
        .iteration_limit
        .map(|l| l.saturating_sub(iterations));
    o
}

/// Solves one start of a randomized tree whose configured slope is `configured` and whose
/// problem `problem` has the slope `target` (raised by `split_scale = "data"`): random starts
/// climb from `configured` to `target` as `settings` say, the others are solved at `target`
/// ([`solve`]); `at(gamma)` is the problem at another slope, `settled` the variables a
/// point leaves at zero for good. With `refit` the start's tree is then refit on its
/// support ([`Refit`]). S-ORCT's and l0tree's `solve_start`.
#[allow(clippy::too_many_arguments)]
pub fn solve_start<P: NlpProblem>(
    settings: &crate::sorct::scale::Continuation,
    configured: f64,
    target: f64,
    start: StartContext,
    at: impl Fn(f64) -> P,
    settled: impl Fn(&[f64]) -> Vec<usize>,
    problem: &dyn NlpProblem,
    refit: Option<Refit<'_>>,
    solver: &dyn NlpSolver,
    options: &SolveOptions,
) -> Result<SolveResult> {
    let stages = settings.stages(start.kind, configured, target);
    let result = solve(
        &stages,
        at,
        problem,
        solver,
        options,
        |objective| settings.go_on(objective, start.incumbent),
        &settled,
    )?;
    match refit {
        Some(how) => how.apply(result, problem, &settled, solver, options),
        None => Ok(result),
    }
}

/// The relaxed fit of a penalized solve (as the relaxed lasso): the start's tree solved
/// again on `relaxed`, the problem without its penalty, with the variables the penalized
/// point leaves at zero (`settled`) held there, so the features the penalty chose keep
/// their splits unshrunk. Two refits are compared, and the one of lower loss is kept:
/// - from the start's own point;
/// - the best tree of the formulation's own multistart on the features the point uses
///   (`on_support`: for S-ORCT, S-ORCT on those columns alone,
///   `formulations/sorct/support_refit.rs`, run once per support and split), as it is or
///   solved again on `relaxed` from there, whichever has the lower loss.
///
/// The start's own refit alone kept the shrunk tree's basin: on the sparse-tree
/// generator's seeds 3, 5 and 7 every start that ended on exactly the relevant features
/// refit into a tree at 64-89% test accuracy, where S-ORCT on those three features alone
/// reaches 92-94% (benches/README "Sparse structure on synthetic trees").
///
/// The objective reported, on which the starts are compared, is the refit's loss plus the
/// penalty the penalized solve paid for its support: a start whose support refits to a
/// better basin wins over one with the same support and a worse refit, while the penalty
/// still prices the support (the penalty of the unshrunk refit coefficients would favour
/// the empty tree). A refit that ends without a point leaves the penalized result as it
/// was.
pub struct Refit<'a> {
    /// The problem without its penalty.
    pub relaxed: &'a dyn NlpProblem,
    /// The formulation's multistart on the features a penalized point uses: its best tree
    /// as a result on `relaxed` (a point of it, its loss there) with the iterations this
    /// call took (0 where an earlier start ran it; `None`: no feature used, or no solve
    /// ended with a point).
    pub on_support: &'a SupportMultistart<'a>,
}

/// See [`Refit::on_support`].
pub type SupportMultistart<'a> =
    dyn Fn(&[f64], &SolveOptions) -> Result<Option<(SolveResult, u64)>> + 'a;

impl Refit<'_> {
    fn apply(
        &self,
        result: SolveResult,
        penalized: &dyn NlpProblem,
        settled: impl Fn(&[f64]) -> Vec<usize>,
        solver: &dyn NlpSolver,
        options: &SolveOptions,
    ) -> Result<SolveResult> {
        let n = penalized.num_variables();
        if !result.status.has_solution() || result.primal.len() != n {
            return Ok(result);
        }
        let fixed = settled(&result.primal);
        let mut point = result.primal.clone();
        for &j in &fixed {
            point[j] = 0.0;
        }
        let o = with_remaining(options, result.wall_seconds, result.iterations);
        let started = Instant::now();
        let own = self.solve_from(point, &fixed, solver, &o)?;
        let mut iterations = own.iterations;
        let mut trail = vec![format!(
            "refit on its support ({} held at zero): {}",
            fixed.len(),
            own.raw_status
        )];
        let own = usable(own, n);
        let o = with_remaining(&o, started.elapsed().as_secs_f64(), iterations);
        let support = match (self.on_support)(&result.primal, &o)? {
            Some((tree, spent)) => {
                iterations += spent;
                // Solved again on the full problem from there (what the tree leaves at zero
                // of the settled variables stays held), and kept as it is where that solve
                // ends higher: from a sharp tree without multipliers IPOPT's first barrier
                // steps can leave its basin (seed 1: loss 0.025 to 0.092).
                let held: Vec<usize> = fixed
                    .iter()
                    .copied()
                    .filter(|&j| tree.primal[j] == 0.0)
                    .collect();
                let o = with_remaining(&o, started.elapsed().as_secs_f64(), iterations);
                let polished = self.solve_from(tree.primal.clone(), &held, solver, &o)?;
                iterations += polished.iterations;
                trail.push(format!(
                    "{} ({spent} iterations here); solved again on all features: {}",
                    tree.raw_status, polished.raw_status
                ));
                [usable(tree, n), usable(polished, n)]
                    .into_iter()
                    .flatten()
                    .min_by(|a, b| loss(a).total_cmp(&loss(b)))
            }
            None => {
                trail.push("the support's multistart: no tree".to_string());
                None
            }
        };
        let chosen = match (own, support) {
            (Some(a), Some(b)) if loss(&b) < loss(&a) => Some((b, "the support's multistart")),
            (Some(a), _) => Some((a, "its own point")),
            (None, Some(b)) => Some((b, "the support's multistart")),
            (None, None) => None,
        };
        let Some((mut refit, from)) = chosen else {
            let mut result = result;
            result.raw_status = format!(
                "{}; {}; the penalized point kept",
                result.raw_status,
                trail.join("; ")
            );
            return Ok(result);
        };
        trail.push(format!("kept the refit from {from}"));
        // The penalized point's penalty: its objective less its loss (the relaxed
        // objective), both evaluated here at the same point rather than taking the
        // backend's reported objective, so the difference is the penalty alone.
        let paid = penalized.objective(&result.primal) - self.relaxed.objective(&result.primal);
        refit.objective = refit.objective.map(|loss| loss + paid);
        refit.iterations = result.iterations + iterations;
        refit.wall_seconds = result.wall_seconds + started.elapsed().as_secs_f64();
        refit.raw_status = format!("{}; {}", result.raw_status, trail.join("; "));
        // The multipliers belong to the relaxed problem.
        refit.clear_multipliers();
        Ok(refit)
    }

    /// `relaxed` solved from `from` with the variables `held` at zero.
    fn solve_from(
        &self,
        from: Vec<f64>,
        held: &[usize],
        solver: &dyn NlpSolver,
        options: &SolveOptions,
    ) -> Result<SolveResult> {
        let mut o = options.clone();
        o.warm_start = Some(WarmStart::primal(from));
        solver.solve(&Frozen::new(self.relaxed, held), &o)
    }
}

/// `refit` when it ended with a point of a problem of `n` variables.
pub(crate) fn usable(refit: SolveResult, n: usize) -> Option<SolveResult> {
    (refit.status.has_solution() && refit.primal.len() == n && refit.objective.is_some())
        .then_some(refit)
}

/// A refit's loss (its objective on the relaxed problem).
fn loss(refit: &SolveResult) -> f64 {
    refit.objective.unwrap_or(f64::INFINITY)
}

/// `problem` with the variables `fixed` held at zero (both bounds 0); every evaluation is
/// the problem's own.
struct Frozen<'a> {
    problem: &'a dyn NlpProblem,
    fixed: &'a [usize],
}

impl<'a> Frozen<'a> {
    fn new(problem: &'a dyn NlpProblem, fixed: &'a [usize]) -> Self {
        Frozen { problem, fixed }
    }
}

impl NlpProblem for Frozen<'_> {
    fn num_variables(&self) -> usize {
        self.problem.num_variables()
    }
    fn num_constraints(&self) -> usize {
        self.problem.num_constraints()
    }
    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        let (mut lower, mut upper) = self.problem.variable_bounds();
        for &j in self.fixed {
            lower[j] = 0.0;
            upper[j] = 0.0;
        }
        (lower, upper)
    }
    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        self.problem.constraint_bounds()
    }
    fn objective(&self, x: &[f64]) -> f64 {
        self.problem.objective(x)
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        self.problem.gradient(x, grad)
    }
    fn constraints(&self, x: &[f64], g: &mut [f64]) {
        self.problem.constraints(x, g)
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        self.problem.jacobian_structure()
    }
    fn jacobian_values(&self, x: &[f64], values: &mut [f64]) {
        self.problem.jacobian_values(x, values)
    }
    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        self.problem.hessian_structure()
    }
    fn hessian_values(&self, x: &[f64], obj_factor: f64, lambda: &[f64], values: &mut [f64]) {
        self.problem.hessian_values(x, obj_factor, lambda, values)
    }
    fn linear_constraints(&self) -> Vec<bool> {
        self.problem.linear_constraints()
    }
    fn name(&self) -> String {
        self.problem.name()
    }
    fn masked(&self) -> Option<&dyn glassbox_core::nlp::MaskedEvaluations> {
        self.problem.masked()
    }
    #[cfg(feature = "torch")]
    fn tensor_objective(&self) -> Option<&dyn glassbox_core::tensor::TensorObjective> {
        self.problem.tensor_objective()
    }
}

/// `options` with the time and iterations left after `seconds` and `iterations` spent.
fn with_remaining(options: &SolveOptions, seconds: f64, iterations: u64) -> SolveOptions {
    let mut o = options.clone();
    if let Some(limit) = o.time_limit {
        o.time_limit = Some((limit - seconds).max(1e-3));
    }
    if let Some(limit) = o.iteration_limit {
        o.iteration_limit = Some(limit.saturating_sub(iterations).max(1));
    }
    o
}

fn finish(
    mut result: SolveResult,
    iterations: u64,
    started: Instant,
    trail: &[String],
) -> SolveResult {
    result.iterations = iterations;
    result.wall_seconds = started.elapsed().as_secs_f64();
    result.raw_status = format!("continuation: {}", trail.join("; "));
    result
}

/// The last stage's point as a point of the target problem, stopped by `limit`: its
/// objective there, feasible at that limit when it satisfies the target's constraints and
/// bounds, without a solution otherwise.
fn read_at_target(
    mut result: SolveResult,
    target: &dyn NlpProblem,
    limit: Limit,
    iterations: u64,
    started: Instant,
    trail: &[String],
) -> SolveResult {
    let x = &result.primal;
    let violation = max_violation(target, x);
    result.objective = Some(target.objective(x));
    result.max_violation = Some(violation);
    result.status = if violation <= FEASIBILITY_TOLERANCE {
        TerminationStatus::FeasibleAtLimit(limit)
    } else {
        TerminationStatus::NoSolutionAtLimit(limit)
    };
    // The multipliers belong to another problem.
    result.clear_multipliers();
    finish(result, iterations, started, trail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_raise_by_the_factor_and_end_at_the_target() {
        assert_eq!(schedule(512.0, 512.0, 4.0), vec![512.0]);
        assert_eq!(schedule(512.0, 8192.0, 4.0), vec![512.0, 2048.0, 8192.0]);
        assert_eq!(schedule(512.0, 4096.0, 4.0), vec![512.0, 2048.0, 4096.0]);
        assert_eq!(schedule(1024.0, 512.0, 4.0), vec![512.0]);
    }
}
