//! Node-based decomposition of randomized-tree NLPs: NB-DEC (Algorithm 1) and its practical
//! version S-NB-DEC (Algorithm 2) of Amaldi, Consolo, Manno (`shared/papers/
//! 001_64807dfed1a45238.txt`, section 6), for any formulation that groups its variables by
//! tree node ([`NodeBlocks`]: l0tree, S-ORCT), each subproblem solved by any NLP backend.
//!
//! One decomposition step fixes every variable outside the working set (the branch nodes
//! W_B, the leaves W_L, plus the shared variables beta and explicit P) at its current value
//! and solves the subproblem (20): the full objective plus the proximal term
//! psi/2 (||A_WB - A_WB^s||^2 + ||C_WL - C_WL^s||^2), over the free variables, under the
//! constraints that involve a free variable (the others are constants). [`Restricted`] is
//! that subproblem as an [`NlpProblem`], derived from the full problem's own evaluations
//! (exact gradient and Hessian carried over, plus the proximal diagonal), then the solution
//! is written back (21). Its evaluations ask the full problem only for the free variables'
//! part (its `MaskedEvaluations`, where it has them: `gradient_among`,
//! `jacobian_values_among`, `hessian_values_among`), and the tree formulations cache each
//! fixed branch node's routing between evaluations (S-ORCT's `BranchColumns`), so a
//! subproblem evaluation costs about its working set's share.
//! A linear row with a single free variable (`NlpProblem::linear_constraints`; in l0tree
//! and S-ORCT the fixed nodes' sign rows beta_j >= +-a_jt, since beta is always free)
//! becomes that variable's bound, tightened to the strongest one implied (beta_j >=
//! max over the fixed nodes of |a_jt|): the same subproblem with a KKT system of about the
//! working set's size. This is done generically for any declared-linear row and any
//! nonzero coefficient, not for the sign rows by name. With `warm_start_duals`, such a
//! row's multiplier is not updated by the subproblem (its bound's multiplier is stored as
//! the variable's bound multiplier): only a starting guess.
//!
//! Working-set rules: `single_branch` is S-NB-DEC (per macro-iteration every branch node
//! once, in a seeded random order, W_B = {t}, W_L = all leaves); `alternating` is C-NB-DEC
//! of section 6.2 (all branch nodes with no leaf, then all leaves with no branch node).
//! The optional initialization runs the backend `init_iterations` iterations on the full
//! problem first; subproblems are capped at `subproblem_iterations` backend iterations (the
//! paper: 5 and 40, the defaults for IPOPT; see [`Caps`] for first-order backends), and
//! both at the solver's `iteration_limit` where it is lower (a limit per backend solve). The
//! stopping criterion is a number of macro-iterations (and the solver's
//! time limit, for the whole run); a stop request (Ctrl-C) ends the run at its next solve,
//! with the interrupted status the undecomposed solve would report.
//!
//! With l0tree's explicit P_il (strategy (i)) the equality rows P_il = prod(...) are in
//! every subproblem and, at the 40-iteration cap, stay violated (2e-2 on iris): the final
//! point is then reported without a solution. Decompose the substituted form, which is the
//! paper's (17).
//!
//! Choices: a subproblem's point is accepted whenever the backend returns one (the paper
//! updates unconditionally, (21)), except from numerical failures, where the step is
//! skipped; the initialization's point is taken even when the iteration limit leaves it
//! slightly infeasible (the first subproblems, which free every C, restore feasibility).
//! With `monotone`, a point that raises the full objective O is rejected too, so that O
//! never increases: the requirement (22) of section 6.1, which the paper expects from "any
//! descent algorithm". IPOPT started at a point on its bounds is not one (it first pushes
//! the point inside), and on Car the rule made S-NB-DEC worse (experiments/l0tree/README.md),
//! so the unconditional update (21) stays the default.
//!
//! Depends on the core (NLP, solver trait, options, results), on no formulation or backend.

use glassbox_core::formulation::NodeBlocks;
use glassbox_core::nlp::{self, max_violation, NlpProblem};
use glassbox_core::WarmStart;
use glassbox_core::{
    GlassboxError, Limit, NlpSolver, Result, SolveOptions, SolveResult, TerminationStatus,
};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// The largest constraint or bound violation at which the final point counts as feasible:
/// Ipopt's default `constr_viol_tol`, as the ipopt backend judges a point at a limit
/// (subproblems stopped at their iteration cap leave equality rows such as explicit P_il
/// satisfied to about that).
pub const FEASIBILITY_TOLERANCE: f64 = 1e-4;

/// How working sets are chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkingSets {
    /// S-NB-DEC: one branch node at a time (random order) with every leaf.
    #[default]
    SingleBranch,
    /// C-NB-DEC: every branch node, then every leaf.
    Alternating,
}

/// The `[decomposition]` table of a config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DecompositionConfig {
    /// The working-set rule.
    pub working_sets: WorkingSets,
    /// Number of macro-iterations (max_iter).
    pub macro_iterations: usize,
    /// Proximal coefficient psi >= 0 (in the objective's units).
    pub psi: f64,
    /// Whether to run the backend on the full problem first.
    pub initialization: bool,
    /// Backend iterations of the initialization (init_iter); unset: [`Caps::of`].
    pub init_iterations: Option<u64>,
    /// Backend iterations per subproblem; unset: [`Caps::of`].
    pub subproblem_iterations: Option<u64>,
    /// Convergence tolerance of the subproblems (default: the solver's); a looser one lets
    /// a subproblem stop before its iteration cap (the paper keeps IPOPT's 1e-8).
    pub subproblem_tolerance: Option<f64>,
    /// Warm-start each subproblem with the multipliers of the constraints and bounds from
    /// the previous solves (not in the paper, whose subproblems start cold; needs a
    /// backend that takes multipliers, e.g. IPOPT, which then starts with a small barrier).
    pub warm_start_duals: bool,
    /// Keep the current point when a subproblem's point has a higher full objective, so
    /// that the objective never increases ((22) of the paper; default: the unconditional
    /// update (21)).
    pub monotone: bool,
}

impl Default for DecompositionConfig {
    fn default() -> Self {
        DecompositionConfig {
            working_sets: WorkingSets::SingleBranch,
            macro_iterations: 10,
            psi: 0.0,
            initialization: true,
            init_iterations: None,
            subproblem_iterations: None,
            subproblem_tolerance: None,
            warm_start_duals: false,
            monotone: false,
        }
    }
}

impl DecompositionConfig {
    /// Checks the values.
    pub fn check(&self) -> Result<()> {
        let bad = |m: &str| Err(GlassboxError::Config(format!("[decomposition]: {m}")));
        if self.macro_iterations == 0 {
            return bad("macro_iterations must be at least 1");
        }
        if !(self.psi.is_finite() && self.psi >= 0.0) {
            return bad(&format!(
                "psi must be a finite number >= 0, got {}",
                self.psi
            ));
        }
        if self
            .subproblem_tolerance
            .is_some_and(|t| !(t.is_finite() && t > 0.0))
        {
            return bad("subproblem_tolerance must be > 0");
        }
        if self.subproblem_iterations == Some(0)
            || (self.initialization && self.init_iterations == Some(0))
        {
            return bad("subproblem_iterations and init_iterations must be at least 1");
        }
        Ok(())
    }
}

/// The iteration caps of a run: the config's, or where it leaves them unset the paper's
/// (5 and 40) for a backend whose iterations are Newton steps (IPOPT, the paper's), and 25
/// times those for a first-order one (lbfgs, torch). A choice of ours: at the paper's 40
/// L-BFGS iterations lbfgs's augmented Lagrangian ends subproblems before they are
/// feasible, and 2 of 12 l0tree iris runs and 1 of 15 S-ORCT wine runs ended without a
/// solution; at 1000 (and 125 to initialize) none did, and the mean objective fell (wine
/// 0.079 to 0.066).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// Iterations of the initialization.
    pub init: u64,
    /// Iterations per subproblem.
    pub subproblem: u64,
}

impl Caps {
    /// The caps of `config` run on `solver`.
    pub fn of(config: &DecompositionConfig, solver: &dyn NlpSolver) -> Caps {
        let scale = if solver.capabilities().newton_steps {
            1
        } else {
            FIRST_ORDER_SCALE
        };
        Caps {
            init: config.init_iterations.unwrap_or(5 * scale),
            subproblem: config.subproblem_iterations.unwrap_or(40 * scale),
        }
    }
}

/// How many first-order iterations an unset cap allows per Newton step of the paper's.
const FIRST_ORDER_SCALE: u64 = 25;

/// The state after one macro-iteration (0: after the initialization, or the start).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MacroIteration {
    /// Macro-iteration index s (0 is the initialization or the start).
    pub macro_iteration: usize,
    /// Objective of the full problem.
    pub objective: f64,
    /// Cumulative wall-clock seconds of the solves so far (evaluating the accuracies is
    /// not counted).
    pub seconds: f64,
    /// Cumulative backend iterations.
    pub iterations: u64,
    /// Training accuracy of the tree at this point.
    pub train_accuracy: f64,
    /// Test accuracy of the tree at this point.
    pub test_accuracy: f64,
}

/// A decomposition run: the final point as a [`SolveResult`] and the trace.
pub struct Outcome {
    /// Final point, full objective, status (at the macro-iteration or time limit).
    pub result: SolveResult,
    /// One entry per macro-iteration, the initialization first.
    pub trace: Vec<MacroIteration>,
}

/// Runs NB-DEC on `problem` from the warm start in `options` (required). `observe` gives
/// (train, test) accuracy at a point, for the trace; `seed` orders the branch nodes.
pub fn solve(
    problem: &dyn NlpProblem,
    blocks: &NodeBlocks,
    solver: &dyn NlpSolver,
    options: &SolveOptions,
    config: &DecompositionConfig,
    seed: u64,
    observe: &mut dyn FnMut(&[f64]) -> (f64, f64),
) -> Result<Outcome> {
    config.check()?;
    let n = problem.num_variables();
    let mut x = options
        .warm_start
        .as_ref()
        .map(|w| w.primal.clone())
        .filter(|p| p.len() == n)
        .ok_or_else(|| {
            GlassboxError::InvalidProblem(format!(
                "decomposition of {} needs a starting point of {n} values",
                problem.name()
            ))
        })?;
    if config.warm_start_duals && !solver.capabilities().warm_start_duals {
        return Err(GlassboxError::Capability {
            solver: solver.name().to_string(),
            what: "warm start with multipliers ([decomposition] warm_start_duals)".into(),
        });
    }
    let caps = Caps::of(config, solver);
    let setup = Instant::now();
    let structure = Structure::of(problem);
    let mut duals = Duals::new(problem.num_constraints(), n);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut solving = setup.elapsed().as_secs_f64();
    let mut iterations = 0u64;
    let mut trace = Vec::new();
    let mut skipped = 0usize;
    let mut rejected = 0usize;
    let mut subproblems = 0usize;
    // The limit that ended the run early (time, or a stop request), if one did.
    let mut stopped: Option<Limit> = None;
    let remaining = |solving: f64| options.time_limit.map(|t| (t - solving).max(0.0));
    let mut record = |s: usize, x: &[f64], solving: f64, iterations: u64| {
        let (train, test) = observe(x);
        trace.push(MacroIteration {
            macro_iteration: s,
            objective: problem.objective(x),
            seconds: solving,
            iterations,
            train_accuracy: train,
            test_accuracy: test,
        });
    };

    // The iteration limit of `options` holds for every backend solve of the run, the
    // initialization's as the subproblems'; the caps only lower it.
    let capped = |cap: u64| Some(options.iteration_limit.map_or(cap, |l| l.min(cap)));
    if config.initialization {
        let mut opts = options.clone();
        opts.iteration_limit = capped(caps.init);
        opts.warm_start = Some(WarmStart::primal(x.clone()));
        let started = Instant::now();
        let r = solver.solve(problem, &opts)?;
        solving += started.elapsed().as_secs_f64();
        iterations += r.iterations;
        stopped = clock_limit(&r);
        if r.primal.len() == n && usable(&r) {
            duals.update(
                &r,
                &(0..problem.num_constraints()).collect::<Vec<_>>(),
                &(0..n).collect::<Vec<_>>(),
            );
            x = r.primal;
        }
    }
    record(0, &x, solving, iterations);
    // The full objective at x, for the monotone rule; each candidate's is evaluated on the
    // solve clock, as part of the step.
    let mut current = config.monotone.then(|| problem.objective(&x));

    'outer: for s in 1..=config.macro_iterations {
        for (branches, leaves) in working_sets(blocks, config.working_sets, &mut rng) {
            if remaining(solving) == Some(0.0) {
                stopped = Some(Limit::Time);
            } else if options.interrupt.as_ref().is_some_and(|i| i.requested()) {
                // Ctrl-C: each subproblem would return at once, but thousands of them
                // (a run of many macro-iterations) would still take their setup time.
                stopped = Some(Limit::Interrupted);
            }
            if stopped.is_some() {
                break 'outer;
            }
            // The clock covers building the subproblem too.
            let started = Instant::now();
            let sub = Restricted::new(
                problem, &structure, blocks, &branches, &leaves, &x, config.psi,
            );
            let mut opts = options.clone();
            opts.iteration_limit = capped(caps.subproblem);
            opts.time_limit = remaining(solving);
            opts.tolerance = config.subproblem_tolerance.or(options.tolerance);
            opts.warm_start = Some(match config.warm_start_duals {
                true => duals.warm_start(sub.local(&x), &sub.rows, &sub.free),
                false => WarmStart::primal(sub.local(&x)),
            });
            let r = solver.solve(&sub, &opts)?;
            iterations += r.iterations;
            subproblems += 1;
            if r.primal.len() == sub.free.len() && usable(&r) {
                let candidate = sub.full(&r.primal);
                let after = current.map(|_| problem.objective(&candidate));
                if matches!((after, current), (Some(a), Some(now)) if a > now) {
                    rejected += 1;
                } else {
                    current = after;
                    duals.update(&r, &sub.rows, &sub.free);
                    x = candidate;
                }
            } else {
                skipped += 1;
            }
            solving += started.elapsed().as_secs_f64();
            stopped = clock_limit(&r);
            if stopped.is_some() {
                break 'outer;
            }
        }
        record(s, &x, solving, iterations);
    }

    let violation = max_violation(problem, &x);
    let limit = stopped.unwrap_or(Limit::Iteration);
    let status = if violation <= FEASIBILITY_TOLERANCE {
        TerminationStatus::FeasibleAtLimit(limit)
    } else {
        TerminationStatus::NoSolutionAtLimit(limit)
    };
    let objective = problem.objective(&x);
    let monotone = if config.monotone {
        format!(", {rejected} rejected by the monotone rule")
    } else {
        String::new()
    };
    // Subproblem points are taken as the paper takes them, feasible or not; a backend that
    // reaches feasibility only as it converges (lbfgs's augmented Lagrangian) can leave the
    // constraints violated at the iteration cap.
    // The cap that stopped them: the solver's iteration_limit where it is the lower.
    let cap = match options.iteration_limit {
        Some(l) if l < caps.subproblem => format!("the solver's iteration_limit = {l}"),
        _ => format!("subproblem_iterations = {}", caps.subproblem),
    };
    // (A run ended early by the clock or a stop request says so in its status.)
    let hint = match status.has_solution() || stopped.is_some() {
        true => String::new(),
        false => format!(
            "; the constraints are violated beyond {FEASIBILITY_TOLERANCE:.0e}: the \
             subproblems stop at {cap} before they are feasible, raise it"
        ),
    };
    Ok(Outcome {
        result: SolveResult {
            solver: solver.name().to_string(),
            status,
            objective: Some(objective),
            max_violation: Some(violation),
            iterations,
            wall_seconds: solving,
            raw_status: format!(
                "NB-DEC ({:?}): {} macro-iterations, {subproblems} subproblems ({skipped} without a usable point{monotone}), max violation {violation:.1e}{hint}",
                config.working_sets,
                trace.len() - 1
            ),
            primal: x,
            ..SolveResult::failed(solver.name(), status, "")
        },
        trace,
    })
}

/// The limit of a backend solve that ends the whole run: the time limit (the subproblems
/// get what is left of the run's) or a stop request (Ctrl-C), which the result then
/// carries as the undecomposed solve's would.
fn clock_limit(r: &SolveResult) -> Option<Limit> {
    r.status
        .limit()
        .filter(|l| matches!(l, Limit::Time | Limit::Interrupted))
}

/// The latest multipliers of every constraint and bound of the full problem, gathered from
/// the solves that freed them (`known` once every one has been seen).
struct Duals {
    constraints: Vec<f64>,
    lower: Vec<f64>,
    upper: Vec<f64>,
    known: bool,
}

impl Duals {
    fn new(m: usize, n: usize) -> Self {
        Duals {
            constraints: vec![0.0; m],
            lower: vec![0.0; n],
            upper: vec![0.0; n],
            known: false,
        }
    }

    /// Stores the multipliers of a solve over the full `rows` and variables `vars`.
    fn update(&mut self, r: &SolveResult, rows: &[usize], vars: &[usize]) {
        let (Some(c), Some(l), Some(u)) = (
            &r.constraint_multipliers,
            &r.lower_bound_multipliers,
            &r.upper_bound_multipliers,
        ) else {
            return;
        };
        for (&row, &v) in rows.iter().zip(c) {
            self.constraints[row] = v;
        }
        for (&var, (&lv, &uv)) in vars.iter().zip(l.iter().zip(u)) {
            self.lower[var] = lv;
            self.upper[var] = uv;
        }
        // Rows and bounds a solve never freed keep 0, a valid (if poor) guess; the first
        // full solve (the initialization) or the first sweep fills them.
        self.known = true;
    }

    /// The warm start of a subproblem at `primal` with its `rows` and variables `vars`.
    fn warm_start(&self, primal: Vec<f64>, rows: &[usize], vars: &[usize]) -> WarmStart {
        if !self.known {
            return WarmStart::primal(primal);
        }
        WarmStart {
            primal,
            constraint_multipliers: Some(rows.iter().map(|&r| self.constraints[r]).collect()),
            lower_bound_multipliers: Some(vars.iter().map(|&v| self.lower[v]).collect()),
            upper_bound_multipliers: Some(vars.iter().map(|&v| self.upper[v]).collect()),
            explore: false,
        }
    }
}

/// Whether a subproblem's point may replace the current one.
fn usable(r: &SolveResult) -> bool {
    !matches!(
        r.status,
        TerminationStatus::NumericalError
            | TerminationStatus::Error
            | TerminationStatus::Infeasible
            | TerminationStatus::Unbounded
    ) && r.objective.is_none_or(f64::is_finite)
        && r.primal.iter().all(|v| v.is_finite())
}

/// The working sets (branch nodes, leaves) of one macro-iteration.
fn working_sets(
    blocks: &NodeBlocks,
    rule: WorkingSets,
    rng: &mut ChaCha8Rng,
) -> Vec<(Vec<usize>, Vec<usize>)> {
    let all_leaves: Vec<usize> = (0..blocks.leaves.len()).collect();
    match rule {
        WorkingSets::SingleBranch => {
            let mut order: Vec<usize> = (0..blocks.branches.len()).collect();
            order.shuffle(rng);
            order
                .into_iter()
                .map(|t| (vec![t], all_leaves.clone()))
                .collect()
        }
        WorkingSets::Alternating => vec![
            ((0..blocks.branches.len()).collect(), Vec::new()),
            (Vec::new(), all_leaves),
        ],
    }
}

/// The values of the variables `vars` in a full vector.
fn local_of(vars: &[usize], x: &[f64]) -> Vec<f64> {
    vars.iter().map(|&v| x[v]).collect()
}

/// The full problem's sparsity structures and linear rows, read once per run.
struct Structure {
    jacobian: Vec<(usize, usize)>,
    hessian: Option<Vec<(usize, usize)>>,
    linear: Vec<bool>,
}

impl Structure {
    fn of(problem: &dyn NlpProblem) -> Self {
        Structure {
            jacobian: problem.jacobian_structure(),
            hessian: problem.hessian_structure(),
            linear: problem.linear_constraints(),
        }
    }
}

/// The decomposition subproblem (20) as an NLP over the free variables of a working set.
pub struct Restricted<'a> {
    full: &'a dyn NlpProblem,
    /// The current point of the full problem (fixed values of the other variables).
    base: Vec<f64>,
    /// Full indices of the free variables, in local order.
    free: Vec<usize>,
    /// (local index, current value) of the proximal variables.
    proximal: Vec<(usize, f64)>,
    psi: f64,
    /// Full indices of the constraints kept (those with a free variable, except the linear
    /// ones with a single free variable, which are bounds here).
    rows: Vec<usize>,
    /// Bounds of the free variables: the full problem's, tightened by those rows.
    lower: Vec<f64>,
    upper: Vec<f64>,
    jacobian: Vec<(usize, usize)>,
    /// Position of each kept Jacobian entry in the full Jacobian's values.
    jacobian_pick: Vec<usize>,
    full_jacobian_len: usize,
    /// Local Hessian entries (from the full Hessian, then proximal diagonals not in it).
    hessian: Option<Vec<(usize, usize)>>,
    hessian_pick: Vec<usize>,
    full_hessian_len: usize,
    /// For each proximal variable, the local Hessian entry its psi adds to.
    proximal_at: Vec<usize>,
    /// Which full variables are free.
    free_mask: Vec<bool>,
}

impl<'a> Restricted<'a> {
    fn new(
        full: &'a dyn NlpProblem,
        structure: &Structure,
        blocks: &NodeBlocks,
        branches: &[usize],
        leaves: &[usize],
        base: &[f64],
        psi: f64,
    ) -> Self {
        let n = full.num_variables();
        let mut local = vec![usize::MAX; n];
        let mut free = Vec::new();
        let mut proximal_vars = Vec::new();
        let mut add = |v: usize, prox: bool, free: &mut Vec<usize>| {
            if local[v] == usize::MAX {
                local[v] = free.len();
                free.push(v);
                if prox {
                    proximal_vars.push(v);
                }
            }
        };
        for &t in branches {
            blocks.branches[t]
                .proximal
                .iter()
                .for_each(|&v| add(v, true, &mut free));
            blocks.branches[t]
                .auxiliary
                .iter()
                .for_each(|&v| add(v, false, &mut free));
        }
        for &l in leaves {
            blocks.leaves[l]
                .iter()
                .for_each(|&v| add(v, true, &mut free));
        }
        blocks.shared.iter().for_each(|&v| add(v, false, &mut free));
        let proximal: Vec<(usize, f64)> =
            proximal_vars.iter().map(|&v| (local[v], base[v])).collect();

        let m = full.num_constraints();
        let free_mask: Vec<bool> = local.iter().map(|&l| l != usize::MAX).collect();
        // Each row's free columns: NONE, the single one, or MANY.
        const NONE: usize = usize::MAX;
        const MANY: usize = usize::MAX - 1;
        let mut single = vec![NONE; m];
        for &(r, c) in &structure.jacobian {
            if free_mask[c] {
                single[r] = match single[r] {
                    NONE => c,
                    s if s == c => c,
                    _ => MANY,
                };
            }
        }
        let (full_lower, full_upper) = full.variable_bounds();
        let (mut lower, mut upper) = (local_of(&free, &full_lower), local_of(&free, &full_upper));
        let mut as_bound = vec![false; m];
        if (0..m).any(|r| structure.linear[r] && single[r] < MANY) {
            // A linear row with one free variable v is coef v + rest with rest constant
            // (here: a fixed node's sign row beta_j -+ a_jt >= 0), so gl <= row <= gu is the
            // bound (gl - rest) / coef <= v <= (gu - rest) / coef (swapped when coef < 0):
            // the same feasible set without a row in the KKT system.
            let mut g = vec![0.0; m];
            full.constraints(base, &mut g);
            let mut values = vec![0.0; structure.jacobian.len()];
            nlp::jacobian_values_among(full, base, &free_mask, &mut values);
            let mut coef = vec![0.0; m];
            for (&(r, c), &value) in structure.jacobian.iter().zip(&values) {
                if free_mask[c] {
                    coef[r] += value;
                }
            }
            let (gl, gu) = full.constraint_bounds();
            for r in 0..m {
                let (v, a) = (single[r], coef[r]);
                if !(structure.linear[r] && v < MANY && a != 0.0 && a.is_finite()) {
                    continue;
                }
                let rest = g[r] - a * base[v];
                let (lo, hi) = ((gl[r] - rest) / a, (gu[r] - rest) / a);
                let (lo, hi) = if a > 0.0 { (lo, hi) } else { (hi, lo) };
                lower[local[v]] = lower[local[v]].max(lo);
                upper[local[v]] = upper[local[v]].min(hi);
                as_bound[r] = true;
            }
        }
        let mut row_local = vec![usize::MAX; m];
        let mut rows = Vec::new();
        for r in 0..m {
            if single[r] != NONE && !as_bound[r] {
                row_local[r] = rows.len();
                rows.push(r);
            }
        }
        let mut jacobian = Vec::new();
        let mut jacobian_pick = Vec::new();
        for (at, &(r, c)) in structure.jacobian.iter().enumerate() {
            if local[c] != usize::MAX && row_local[r] != usize::MAX {
                jacobian.push((row_local[r], local[c]));
                jacobian_pick.push(at);
            }
        }
        let (hessian, hessian_pick, full_hessian_len, proximal_at) = match &structure.hessian {
            None => (None, Vec::new(), 0, Vec::new()),
            Some(h) => {
                let mut entries = Vec::new();
                let mut pick = Vec::new();
                let mut diagonal = vec![usize::MAX; free.len()];
                for (at, &(r, c)) in h.iter().enumerate() {
                    if local[r] != usize::MAX && local[c] != usize::MAX {
                        let (lr, lc) = (local[r].max(local[c]), local[r].min(local[c]));
                        if lr == lc && diagonal[lr] == usize::MAX {
                            diagonal[lr] = entries.len();
                        }
                        entries.push((lr, lc));
                        pick.push(at);
                    }
                }
                let mut proximal_at = Vec::new();
                for &(v, _) in &proximal {
                    if diagonal[v] == usize::MAX {
                        diagonal[v] = entries.len();
                        entries.push((v, v));
                    }
                    proximal_at.push(diagonal[v]);
                }
                (Some(entries), pick, h.len(), proximal_at)
            }
        };
        Restricted {
            full,
            base: base.to_vec(),
            free,
            proximal,
            psi,
            rows,
            lower,
            upper,
            jacobian,
            jacobian_pick,
            full_jacobian_len: structure.jacobian.len(),
            hessian,
            hessian_pick,
            full_hessian_len,
            proximal_at,
            free_mask,
        }
    }

    /// The subproblem of working set (`branches`, `leaves`) of `blocks` at the full point
    /// `base`, with proximal coefficient `psi` (what [`solve`] builds for each step).
    pub fn of(
        full: &'a dyn NlpProblem,
        blocks: &NodeBlocks,
        branches: &[usize],
        leaves: &[usize],
        base: &[f64],
        psi: f64,
    ) -> Self {
        let structure = Structure::of(full);
        Self::new(full, &structure, blocks, branches, leaves, base, psi)
    }

    /// The free variables' values in a full point.
    pub fn local(&self, x: &[f64]) -> Vec<f64> {
        local_of(&self.free, x)
    }

    /// The full indices of the free variables, in local order.
    pub fn free(&self) -> &[usize] {
        &self.free
    }

    /// The full point with the free variables at `xl`.
    pub fn full(&self, xl: &[f64]) -> Vec<f64> {
        let mut x = self.base.clone();
        for (&v, &value) in self.free.iter().zip(xl) {
            x[v] = value;
        }
        x
    }
}

impl NlpProblem for Restricted<'_> {
    fn num_variables(&self) -> usize {
        self.free.len()
    }

    fn num_constraints(&self) -> usize {
        self.rows.len()
    }

    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        (self.lower.clone(), self.upper.clone())
    }

    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        let (l, u) = self.full.constraint_bounds();
        (
            self.rows.iter().map(|&r| l[r]).collect(),
            self.rows.iter().map(|&r| u[r]).collect(),
        )
    }

    fn objective(&self, xl: &[f64]) -> f64 {
        let prox: f64 = self
            .proximal
            .iter()
            .map(|&(v, c)| (xl[v] - c).powi(2))
            .sum();
        self.full.objective(&self.full(xl)) + 0.5 * self.psi * prox
    }

    fn gradient(&self, xl: &[f64], grad: &mut [f64]) {
        let mut g = vec![0.0; self.base.len()];
        nlp::gradient_among(self.full, &self.full(xl), &self.free_mask, &mut g);
        for (out, &v) in grad.iter_mut().zip(&self.free) {
            *out = g[v];
        }
        for &(v, c) in &self.proximal {
            grad[v] += self.psi * (xl[v] - c);
        }
    }

    fn constraints(&self, xl: &[f64], g: &mut [f64]) {
        let mut all = vec![0.0; self.full.num_constraints()];
        self.full.constraints(&self.full(xl), &mut all);
        for (out, &r) in g.iter_mut().zip(&self.rows) {
            *out = all[r];
        }
    }

    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        self.jacobian.clone()
    }

    fn jacobian_values(&self, xl: &[f64], values: &mut [f64]) {
        let mut all = vec![0.0; self.full_jacobian_len];
        nlp::jacobian_values_among(self.full, &self.full(xl), &self.free_mask, &mut all);
        for (out, &at) in values.iter_mut().zip(&self.jacobian_pick) {
            *out = all[at];
        }
    }

    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        self.hessian.clone()
    }

    fn hessian_values(&self, xl: &[f64], obj_factor: f64, lambda: &[f64], values: &mut [f64]) {
        let mut full_lambda = vec![0.0; self.full.num_constraints()];
        for (&r, &l) in self.rows.iter().zip(lambda) {
            full_lambda[r] = l;
        }
        let mut all = vec![0.0; self.full_hessian_len];
        nlp::hessian_values_among(
            self.full,
            &self.full(xl),
            obj_factor,
            &full_lambda,
            &self.free_mask,
            &mut all,
        );
        values.fill(0.0);
        for (out, &at) in values.iter_mut().zip(&self.hessian_pick) {
            *out = all[at];
        }
        for &at in &self.proximal_at {
            values[at] += obj_factor * self.psi;
        }
    }

    fn name(&self) -> String {
        format!(
            "{} (working set of {} variables)",
            self.full.name(),
            self.free.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glassbox_core::formulation::BranchBlock;

    /// A small coupled problem: f = sum (x_i - i)^2 + x0 x1 x2, g0 = x0 + x1 (>= 1),
    /// g1 = x2 (fixed-only when x2 is not free).
    struct Coupled;

    impl NlpProblem for Coupled {
        fn num_variables(&self) -> usize {
            3
        }
        fn num_constraints(&self) -> usize {
            2
        }
        fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
            (vec![-5.0; 3], vec![5.0; 3])
        }
        fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
            (vec![1.0, -5.0], vec![f64::INFINITY, 5.0])
        }
        fn objective(&self, x: &[f64]) -> f64 {
            (0..3).map(|i| (x[i] - i as f64).powi(2)).sum::<f64>() + x[0] * x[1] * x[2]
        }
        fn gradient(&self, x: &[f64], g: &mut [f64]) {
            for i in 0..3 {
                g[i] = 2.0 * (x[i] - i as f64);
            }
            g[0] += x[1] * x[2];
            g[1] += x[0] * x[2];
            g[2] += x[0] * x[1];
        }
        fn constraints(&self, x: &[f64], g: &mut [f64]) {
            g[0] = x[0] + x[1];
            g[1] = x[2];
        }
        fn jacobian_structure(&self) -> Vec<(usize, usize)> {
            vec![(0, 0), (0, 1), (1, 2)]
        }
        fn jacobian_values(&self, _x: &[f64], v: &mut [f64]) {
            v.fill(1.0);
        }
        fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
            Some(vec![(0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)])
        }
        fn hessian_values(&self, x: &[f64], s: f64, _l: &[f64], v: &mut [f64]) {
            v.copy_from_slice(&[2.0 * s, s * x[2], 2.0 * s, s * x[1], s * x[0], 2.0 * s]);
        }
    }

    fn blocks() -> NodeBlocks {
        NodeBlocks {
            branches: vec![
                BranchBlock {
                    proximal: vec![0],
                    auxiliary: vec![],
                },
                BranchBlock {
                    proximal: vec![2],
                    auxiliary: vec![],
                },
            ],
            leaves: vec![vec![1]],
            shared: vec![],
        }
    }

    #[test]
    fn restricted_problem_derivatives_and_rows() {
        let structure = Structure::of(&Coupled);
        let base = [0.3, -0.7, 1.9];
        let sub = Restricted::new(&Coupled, &structure, &blocks(), &[0], &[0], &base, 0.8);
        assert_eq!(sub.free, vec![0, 1]);
        // Row 1 involves only x2, which is fixed: dropped.
        assert_eq!(sub.rows, vec![0]);
        let xl = [0.5, 0.2];
        let grad = glassbox_core::nlp::check::gradient_error(&sub, &xl, 1e-6);
        assert!(grad < 1e-7, "gradient error {grad}");
        let hess = glassbox_core::nlp::check::hessian_error(&sub, &xl, 0.7, &[0.4], 1e-6).unwrap();
        assert!(hess < 1e-7, "Hessian error {hess}");
        // The proximal term is zero at the current point and the full objective there.
        assert!((sub.objective(&[0.3, -0.7]) - Coupled.objective(&base)).abs() < 1e-12);
        assert_eq!(sub.full(&xl), vec![0.5, 0.2, 1.9]);
    }

    /// Coupled's objective with linear rows x0 - 2 x1 in [1, 4] and x2 in [-5, 5], declared.
    struct LinearRows;

    impl NlpProblem for LinearRows {
        fn num_variables(&self) -> usize {
            3
        }
        fn num_constraints(&self) -> usize {
            2
        }
        fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
            Coupled.variable_bounds()
        }
        fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
            (vec![1.0, -5.0], vec![4.0, 5.0])
        }
        fn objective(&self, x: &[f64]) -> f64 {
            Coupled.objective(x)
        }
        fn gradient(&self, x: &[f64], g: &mut [f64]) {
            Coupled.gradient(x, g)
        }
        fn constraints(&self, x: &[f64], g: &mut [f64]) {
            g[0] = x[0] - 2.0 * x[1];
            g[1] = x[2];
        }
        fn jacobian_structure(&self) -> Vec<(usize, usize)> {
            // x1's entry twice (a structure may repeat an entry; values add up).
            vec![(0, 0), (0, 1), (0, 1), (1, 2)]
        }
        fn jacobian_values(&self, _x: &[f64], v: &mut [f64]) {
            v.copy_from_slice(&[1.0, -1.0, -1.0, 1.0]);
        }
        fn linear_constraints(&self) -> Vec<bool> {
            vec![true, true]
        }
    }

    #[test]
    fn linear_rows_with_one_free_variable_become_bounds() {
        let structure = Structure::of(&LinearRows);
        let base = [0.3, -0.7, 1.9];
        // Only x1 free: row 0 is 0.3 - 2 x1 in [1, 4], i.e. x1 in [-1.85, -0.35].
        let sub = Restricted::new(&LinearRows, &structure, &blocks(), &[], &[0], &base, 0.0);
        assert_eq!((sub.free.clone(), sub.rows.clone()), (vec![1], vec![]));
        let (l, u) = sub.variable_bounds();
        assert!((l[0] + 1.85).abs() < 1e-12 && (u[0] + 0.35).abs() < 1e-12);
        assert!(sub.jacobian_structure().is_empty());
        // x0 and x1 free: row 0 has two free variables and stays a row.
        let sub = Restricted::new(&LinearRows, &structure, &blocks(), &[0], &[0], &base, 0.0);
        assert_eq!(sub.rows, vec![0]);
        assert_eq!(sub.variable_bounds(), (vec![-5.0; 2], vec![5.0; 2]));
    }

    #[test]
    fn working_sets_cover_every_branch_once_in_seeded_order() {
        let b = NodeBlocks {
            branches: vec![BranchBlock::default(); 7],
            leaves: vec![vec![]; 8],
            shared: vec![],
        };
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let sets = working_sets(&b, WorkingSets::SingleBranch, &mut rng);
        let mut order: Vec<usize> = sets.iter().map(|(br, _)| br[0]).collect();
        assert!(sets.iter().all(|(br, l)| br.len() == 1 && l.len() == 8));
        let again = working_sets(
            &b,
            WorkingSets::SingleBranch,
            &mut ChaCha8Rng::seed_from_u64(3),
        );
        assert_eq!(sets, again);
        order.sort_unstable();
        assert_eq!(order, (0..7).collect::<Vec<_>>());
        let alt = working_sets(&b, WorkingSets::Alternating, &mut rng);
        assert_eq!(alt.len(), 2);
        assert_eq!(
            (
                alt[0].0.len(),
                alt[0].1.len(),
                alt[1].0.len(),
                alt[1].1.len()
            ),
            (7, 0, 0, 8)
        );
    }
}
