//! The tree-search backend `"dp"`: exact optimal classification trees over binary features
//! ([`TreeSearchProblem`]) by dynamic programming and branch-and-bound, after MurTree
//! (Demirović, Lukina, Hebrard, Chen, Bailey, Leckie, Ramamohanarao and Stuckey, "MurTree:
//! Optimal Decision Trees via Dynamic Programming and Search", JMLR 23, 2022) and its
//! successor STreeD (van der Linden, de Weerdt and Demirović, NeurIPS 2023). Written from
//! the paper and from reading MurTree's public code; no code is taken from either.
//!
//! # Design
//!
//! - `data`: rows renumbered by (class, weight) group into runs of 64-bit words, feature
//!   columns as bitsets, duplicate and constant features dropped.
//! - `depth2`: the specialized depth-2 kernel: the optimal trees of depth <= 2 with 1, 2
//!   and 3 branch nodes of a row set from pair frequency counts gathered in one pass
//!   (popcounts of packed bitsets).
//! - `cache`: optimal subtrees and lower bounds keyed by row set, depth and budget.
//! - `bounds`: the similarity-based lower bound from recently searched row sets.
//! - `search`: the recursion over features and budgets with upper bounds passed down,
//!   and the anytime incumbent and bound at a limit.
//!
//! # Choices where the paper leaves room
//!
//! - Costs are real numbers (weights, penalty), so upper bounds are *exclusive*: a search
//!   with bound `ub` finds a tree cheaper than `ub` or proves that none is (MurTree uses
//!   integers and `ub - 1`).
//! - Leaves that the search builds hold at least `max(1, min_leaf_size)` rows: a split that
//!   leaves a side empty is never needed (dropping it costs nothing and saves its penalty),
//!   so the optimum is that of the problem, whose empty leaves are allowed.
//! - With a branch penalty the search still walks budgets as MurTree does (a budget means
//!   *at most* that many branch nodes, and a larger tree replaces a smaller one only when
//!   strictly cheaper, so ties go to the smaller tree).
//! - Features are tried in their order (MurTree's default `in-order`); the child with the
//!   larger leaf cost is searched first (MurTree's dynamic child order).
//!
//! # How options map
//!
//! - `time_limit`: wall-clock, checked before every branch node and kernel call (a kernel
//!   call on the largest sets takes milliseconds). At the limit the result is the best tree
//!   found, [`TerminationStatus::FeasibleAtLimit`] with [`Limit::Time`], with a proven
//!   `dual_bound` (the cheapest of the leaf and the root's splits by what the cache knows of
//!   their children) and the `gap`. Building the bitsets counts against the limit.
//! - `iteration_limit`: the most search steps (branch nodes searched + kernel and depth-1
//!   calls), [`Limit::Iteration`] when reached, otherwise as the time limit.
//! - `interrupt` (a stop request: Ctrl-C in `glassbox run`): read at the same checks as the
//!   deadline; [`Limit::Interrupted`], otherwise as the time limit.
//! - `threads`: the search runs on the calling thread; `threads = 1` is accepted, more is
//!   refused (solves of different problems may run on different threads in parallel).
//! - `tolerance` and `integrality_tolerance`: refused; `relative_gap`, `absolute_gap`: 0 is
//!   accepted (what the search does anyway), a positive gap refused: the search is exact and
//!   stops at a proven optimum or at a limit. (So one `[solver]` table with `relative_gap =
//!   0` serves dp, HiGHS and CBC in a comparison.)
//! - `seed`: ignored (the search is deterministic).
//! - `verbosity` 0 and 1: nothing is printed; 2 and more: one line on stderr with the
//!   search's counts.
//! - a warm start: a tree in the heap encoding ([`glassbox_core::tree_search::encode_tree`]); if it
//!   is feasible and cheaper than the best leaf it is the first incumbent (the search then
//!   looks only for cheaper trees, and returns the start where none is), and `raw_status`
//!   says "warm start the first incumbent". A malformed point is an error; a
//!   feasible-looking point that breaks the problem's limits is ignored, and `raw_status`
//!   says so, as it does for a start no better than a leaf.
//! - raw options: [`OPTIONS`].
//!
//! # Statuses
//!
//! `Optimal` with gap 0; `FeasibleAtLimit(Time | Iteration | Interrupted)` with the
//! incumbent and bound;
//! `Infeasible` when the problem has fewer rows than `min_leaf_size` (no tree has a leaf
//! that large). The tree found is re-evaluated on the problem's own data
//! ([`TreeSearchProblem::evaluate`]); should that disagree with the search's cost, the
//! status is `Error` (a bug, never expected).
//!
//! Depends on the core (`tree_search`, `options`, `result`, `solver`, `backend`, and
//! `milp::relative_gap`) only.

mod bounds;
mod cache;
mod data;
mod depth2;
mod search;

use data::SearchData;
use glassbox_core::backend::{BackendEntry, Constructor};
use glassbox_core::options::{check_raw_options, OptionKind, OptionSpec, RawOptionValue};
use glassbox_core::solver::{Capabilities, TreeSearchSolver};
use glassbox_core::tree_search::{SearchTree, TreeSearchProblem};
use glassbox_core::{GlassboxError, Limit, Result, SolveOptions, SolveResult, TerminationStatus};
use search::{Search, StopRule};
use std::time::Instant;

/// The registry name of this backend.
pub const NAME: &str = "dp";

/// What the backend can do.
pub const CAPABILITIES: Capabilities = Capabilities {
    integers: false,
    constraints: false,
    exact_hessian: false,
    warm_start: true,
    warm_start_duals: false,
    dual_bound: true,
    gpu: false,
    newton_steps: false,
    tensor_objective_only: false,
};

/// The raw options this backend accepts.
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "similarity_bound",
        kind: OptionKind::Bool,
        help: "use the similarity-based lower bound (default true)",
    },
    OptionSpec {
        name: "depth2_kernel",
        kind: OptionKind::Bool,
        help: "solve subtrees of depth <= 2 with the frequency-count kernel (default true); \
               false recurses down to the leaves (slower, for checks)",
    },
];

/// The registry entry of this backend.
pub fn entry() -> BackendEntry {
    BackendEntry {
        name: NAME,
        description: "exact optimal classification trees over binary features by dynamic \
                      programming (MurTree's depth-2 kernel, cache and bounds)",
        capabilities: CAPABILITIES,
        options: OPTIONS,
        constructor: Constructor::TreeSearch(|| Box::new(DpSolver)),
        check_options,
    }
}

/// Checks the options as a solve does: the typed ones it refuses and the raw ones.
fn check_options(options: &SolveOptions) -> Result<()> {
    options.validate()?;
    check_raw_options(NAME, OPTIONS, &options.raw)?;
    let refuse = |what: &str| {
        Err(GlassboxError::Capability {
            solver: NAME.to_string(),
            what: what.to_string(),
        })
    };
    if options.tolerance.is_some() || options.integrality_tolerance.is_some() {
        return refuse(
            "take a tolerance (it is exact: it stops at a proven optimum or at a limit): \
             remove tolerance and integrality_tolerance",
        );
    }
    let positive = |gap: Option<f64>| gap.is_some_and(|g| g > 0.0);
    if positive(options.relative_gap) || positive(options.absolute_gap) {
        return refuse(
            "stop at a positive gap (it stops at a proven optimum or at a limit): set \
             relative_gap and absolute_gap to 0 or leave them out",
        );
    }
    if options.threads.is_some_and(|t| t > 1) {
        return refuse(
            "use more than one thread (the search runs on the calling thread): set threads = 1 \
             or leave it out",
        );
    }
    Ok(())
}

/// A raw boolean option, `default` when unset.
fn raw_bool(options: &SolveOptions, name: &str, default: bool) -> bool {
    match options.raw.get(name) {
        Some(RawOptionValue::Bool(b)) => *b,
        _ => default,
    }
}

/// The dynamic-programming backend. It holds no state: every solve has its own cache, so
/// one value can be shared by threads.
#[derive(Clone, Copy, Debug, Default)]
pub struct DpSolver;

impl TreeSearchSolver for DpSolver {
    fn name(&self) -> &str {
        NAME
    }

    fn capabilities(&self) -> Capabilities {
        CAPABILITIES
    }

    fn solve(&self, problem: &TreeSearchProblem, options: &SolveOptions) -> Result<SolveResult> {
        check_options(options)?;
        let clock = Instant::now();
        let warm = match &options.warm_start {
            Some(start) => Some(problem.decode(&start.primal)?),
            None => None,
        };
        let deadline = options.deadline_from(clock);
        let data = SearchData::new(problem);
        let (leaf_cost, leaf_class) = data.leaf(&data.all);
        if leaf_cost.is_infinite() {
            return Ok(SolveResult {
                wall_seconds: clock.elapsed().as_secs_f64(),
                ..SolveResult::failed(
                    NAME,
                    TerminationStatus::Infeasible,
                    format!(
                        "infeasible: {} rows, fewer than min_leaf_size {}",
                        problem.n_rows(),
                        problem.min_leaf_size()
                    ),
                )
            });
        }

        // The first incumbent: the best leaf, or the warm start when it is cheaper.
        let mut incumbent = (SearchTree::leaf(leaf_class), leaf_cost);
        let mut notes = Vec::new();
        if let Some(tree) = warm {
            match problem.evaluate(&tree) {
                Ok(e) if e.objective < leaf_cost => {
                    notes.push(format!(
                        "warm start the first incumbent (objective {})",
                        e.objective
                    ));
                    incumbent = (tree, e.objective);
                }
                Ok(_) => notes.push("warm start no better than a leaf".to_string()),
                Err(e) => notes.push(format!("warm start ignored ({e})")),
            }
        }

        let depth = problem.depth() as u32;
        let nodes = u32::try_from(problem.branch_node_budget()).unwrap_or(u32::MAX);
        let stop = StopRule {
            deadline,
            max_steps: options.iteration_limit,
            interrupt: options.interrupt.clone(),
        };
        let mut search = Search::new(
            &data,
            depth,
            stop,
            raw_bool(options, "depth2_kernel", true),
            raw_bool(options, "similarity_bound", true),
        );
        let found = search.solve(&data.all, depth, nodes, incumbent.1);
        let (status, tree, cost, bound) = match (found, search.stopped) {
            (Some(solution), _) => {
                let tree = search.tree(&data.all, &solution);
                (
                    TerminationStatus::Optimal,
                    tree,
                    solution.cost,
                    solution.cost,
                )
            }
            (None, None) => (
                TerminationStatus::Optimal,
                Ok(incumbent.0),
                incumbent.1,
                incumbent.1,
            ),
            (None, Some(limit)) => {
                let bound = search.root_lower_bound(depth, nodes);
                match search.incumbent {
                    Some(best) if best.cost < incumbent.1 => (
                        TerminationStatus::FeasibleAtLimit(limit),
                        search.tree(&data.all, &best),
                        best.cost,
                        bound.min(best.cost),
                    ),
                    _ => (
                        TerminationStatus::FeasibleAtLimit(limit),
                        Ok(incumbent.0),
                        incumbent.1,
                        bound.min(incumbent.1),
                    ),
                }
            }
        };
        let statistics = search.statistics;
        let cached = search.cached_row_sets();
        let wall_seconds = clock.elapsed().as_secs_f64();
        let checked = tree.and_then(|tree| {
            let evaluation = problem.evaluate(&tree).map_err(|e| e.to_string())?;
            if (evaluation.objective - cost).abs() > 1e-9 * cost.abs().max(1.0) {
                return Err(format!(
                    "the search's cost {cost} differs from the tree's objective {}",
                    evaluation.objective
                ));
            }
            Ok((tree, evaluation.objective))
        });
        let (tree, objective) = match checked {
            Ok(found) => found,
            Err(message) => {
                return Ok(SolveResult {
                    wall_seconds,
                    ..SolveResult::failed(
                        NAME,
                        TerminationStatus::Error,
                        format!("internal check failed: {message}"),
                    )
                })
            }
        };
        let mut raw_status = match status {
            TerminationStatus::Optimal => "optimal".to_string(),
            TerminationStatus::FeasibleAtLimit(Limit::Time) => {
                "time limit: best tree found, with a proven bound".to_string()
            }
            _ => "step limit: best tree found, with a proven bound".to_string(),
        };
        raw_status.push_str(&format!(
            "; {} branch nodes searched, {} depth-2 kernel calls, {} depth-1 calls, {} row sets \
             cached, {} of {} features kept",
            statistics.branch_nodes,
            statistics.kernel_calls,
            statistics.depth_one_calls,
            cached,
            data.n_features,
            problem.n_features()
        ));
        for note in notes {
            raw_status.push_str("; ");
            raw_status.push_str(&note);
        }
        if options.verbosity >= 2 {
            eprintln!(
                "dp: {status}, objective {objective}, bound {bound}, {wall_seconds:.3} s; {raw_status}"
            );
        }
        // Optimal: the bound is the objective (the search's sums may differ from the
        // tree's own in the last bits, with real weights).
        let bound = if status == TerminationStatus::Optimal {
            objective
        } else {
            bound.min(objective)
        };
        Ok(SolveResult {
            solver: NAME.to_string(),
            status,
            primal: problem.encode(&tree)?,
            objective: Some(objective),
            dual_bound: Some(bound),
            gap: glassbox_core::milp::relative_gap(Some(objective), Some(bound)),
            constraint_multipliers: None,
            lower_bound_multipliers: None,
            upper_bound_multipliers: None,
            max_violation: Some(0.0),
            iterations: statistics.steps(),
            nodes: Some(statistics.branch_nodes + statistics.kernel_calls),
            wall_seconds,
            raw_status,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{check_entry, raw};

    #[test]
    fn registry_entry() {
        check_entry(&entry(), NAME, "tree_search");
        assert_eq!(DpSolver.capabilities(), CAPABILITIES);
    }

    #[test]
    fn refuses_options_it_cannot_honour() {
        let refused = [
            SolveOptions {
                tolerance: Some(1e-6),
                ..SolveOptions::default()
            },
            SolveOptions {
                relative_gap: Some(0.01),
                ..SolveOptions::default()
            },
            SolveOptions {
                absolute_gap: Some(1.0),
                ..SolveOptions::default()
            },
            SolveOptions {
                threads: Some(2),
                ..SolveOptions::default()
            },
            SolveOptions {
                raw: raw(&[("no_such_option", RawOptionValue::Bool(true))]),
                ..SolveOptions::default()
            },
            SolveOptions {
                raw: raw(&[("similarity_bound", RawOptionValue::Int(1))]),
                ..SolveOptions::default()
            },
        ];
        for options in refused {
            assert!(check_options(&options).is_err(), "{options:?}");
        }
        let accepted = SolveOptions {
            threads: Some(1),
            seed: Some(3),
            relative_gap: Some(0.0),
            absolute_gap: Some(0.0),
            raw: raw(&[("depth2_kernel", RawOptionValue::Bool(false))]),
            ..SolveOptions::default()
        };
        assert!(check_options(&accepted).is_ok());
    }
}
