//! Conformance of the tree-search backends (`dp`): seeded random small problems checked
//! against a brute-force enumeration of every tree at depths 1, 2 and 3, with and without
//! weights, branch penalty, branch-node limit and minimum leaf size; anytime behaviour at
//! the time and step limits and at a stop request; warm starts; infeasible and malformed
//! requests.

use glassbox::registry::{self, BackendEntry, Constructor};
use glassbox::solver::TreeSearchSolver;
use glassbox::tree_search::{encode_tree, SearchTree, TreeSearchProblem};
use glassbox::{
    Interrupt, Limit, RawOptionValue, SolveOptions, SolveResult, TerminationStatus, WarmStart,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Every tree-search backend of this build.
fn backends() -> Vec<(BackendEntry, Box<dyn TreeSearchSolver>)> {
    registry::backends()
        .into_iter()
        .filter_map(|entry| match entry.constructor {
            Constructor::TreeSearch(create) => Some((entry, create())),
            _ => None,
        })
        .collect()
}

/// A random problem: `n` rows, `f` features of density 0.2 to 0.8, `k` classes.
fn random_problem(
    rng: &mut ChaCha8Rng,
    n: usize,
    f: usize,
    k: usize,
    depth: usize,
) -> TreeSearchProblem {
    let density: Vec<f64> = (0..f).map(|_| rng.random_range(0.2..0.8)).collect();
    let rows: Vec<Vec<bool>> = (0..n)
        .map(|_| density.iter().map(|&p| rng.random_bool(p)).collect())
        .collect();
    // Labels that depend on the first features a little, so that trees beat leaves.
    let labels: Vec<usize> = rows
        .iter()
        .map(|row| {
            if rng.random_bool(0.3) {
                rng.random_range(0..k)
            } else {
                (usize::from(row[0]) + 2 * usize::from(row.get(1).copied().unwrap_or(false))) % k
            }
        })
        .collect();
    TreeSearchProblem::from_rows(&rows, labels, k, depth).unwrap()
}

/// The brute-force optimum: every feature at every node, every split of the budget, every
/// leaf's best class; empty leaves allowed, leaves holding rows hold at least the minimum.
fn brute_force(problem: &TreeSearchProblem) -> f64 {
    let rows: Vec<usize> = (0..problem.n_rows()).collect();
    best(
        problem,
        &rows,
        problem.depth(),
        problem.branch_node_budget(),
    )
}

fn best(problem: &TreeSearchProblem, rows: &[usize], depth: usize, nodes: usize) -> f64 {
    let leaf = if !rows.is_empty() && rows.len() < problem.min_leaf_size() {
        f64::INFINITY
    } else {
        (0..problem.n_classes())
            .map(|class| {
                rows.iter()
                    .filter(|&&r| problem.labels()[r] != class)
                    .map(|&r| problem.weight(r))
                    .sum::<f64>()
            })
            .fold(f64::INFINITY, f64::min)
    };
    if depth == 0 || nodes == 0 {
        return leaf;
    }
    let mut result = leaf;
    for f in 0..problem.n_features() {
        let (one, zero): (Vec<usize>, Vec<usize>) =
            rows.iter().partition(|&&r| problem.value(r, f));
        for zero_nodes in 0..nodes {
            let cost = problem.branch_penalty()
                + best(problem, &zero, depth - 1, zero_nodes)
                + best(problem, &one, depth - 1, nodes - 1 - zero_nodes);
            result = result.min(cost);
        }
    }
    result
}

fn solve(
    solver: &dyn TreeSearchSolver,
    problem: &TreeSearchProblem,
    options: &SolveOptions,
) -> SolveResult {
    solver.solve(problem, options).unwrap()
}

/// The checks every returned tree passes: it decodes, is feasible, and its objective is the
/// reported one; the bound is below it.
fn check_result(who: &str, problem: &TreeSearchProblem, result: &SolveResult) -> SearchTree {
    assert!(result.status.has_solution(), "{who}: {}", result.status);
    let tree = problem.decode(&result.primal).unwrap();
    let evaluation = problem.evaluate(&tree).unwrap();
    let objective = result.objective.unwrap();
    assert!(
        (evaluation.objective - objective).abs() < 1e-9,
        "{who}: reported {objective}, the tree's objective is {}",
        evaluation.objective
    );
    let bound = result.dual_bound.unwrap();
    assert!(
        bound <= objective + 1e-9,
        "{who}: bound {bound} above {objective}"
    );
    assert!(result.gap.is_some() || objective == 0.0, "{who}: no gap");
    tree
}

/// The option variants every random problem is solved with: the default search, and with
/// the kernel or the similarity bound switched off (each must be exact on its own).
fn variants() -> Vec<(&'static str, SolveOptions)> {
    let with = |name: &str, on: bool| SolveOptions {
        raw: [(name.to_string(), RawOptionValue::Bool(on))].into(),
        ..SolveOptions::default()
    };
    vec![
        ("default", SolveOptions::default()),
        ("no kernel", with("depth2_kernel", false)),
        ("no similarity", with("similarity_bound", false)),
    ]
}

/// Random problems at depth `depth`, `count` of them, with the extras `extras` draws.
fn check_random(
    depth: usize,
    count: usize,
    seed: u64,
    extras: impl Fn(&mut ChaCha8Rng, TreeSearchProblem) -> TreeSearchProblem,
) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let all = backends();
    assert!(!all.is_empty(), "no tree-search backend in this build");
    for case in 0..count {
        let n = rng.random_range(1..40);
        let f = rng.random_range(1..if depth >= 3 { 5 } else { 7 });
        let k = rng.random_range(2..4);
        let problem = random_problem(&mut rng, n, f, k, depth);
        let problem = extras(&mut rng, problem);
        let optimum = brute_force(&problem);
        for (entry, solver) in &all {
            for (variant, options) in variants() {
                let who = format!("{} ({variant}), depth {depth}, case {case}", entry.name);
                let result = solve(solver.as_ref(), &problem, &options);
                if optimum.is_infinite() {
                    assert_eq!(result.status, TerminationStatus::Infeasible, "{who}");
                    continue;
                }
                assert_eq!(
                    result.status,
                    TerminationStatus::Optimal,
                    "{who}: {}",
                    result.raw_status
                );
                check_result(&who, &problem, &result);
                let objective = result.objective.unwrap();
                assert!(
                    (objective - optimum).abs() < 1e-9,
                    "{who}: objective {objective}, brute force {optimum}"
                );
                assert_eq!(result.gap, Some(0.0), "{who}");
                assert_eq!(result.dual_bound, result.objective, "{who}");
            }
        }
    }
}

fn plain(_: &mut ChaCha8Rng, p: TreeSearchProblem) -> TreeSearchProblem {
    p
}

/// Weights (integers or reals), penalty, branch-node limit and minimum leaf size, each
/// drawn or not.
fn extras(rng: &mut ChaCha8Rng, mut p: TreeSearchProblem) -> TreeSearchProblem {
    if rng.random_bool(0.5) {
        let integer = rng.random_bool(0.5);
        let weights = (0..p.n_rows())
            .map(|_| {
                if integer {
                    rng.random_range(0..4) as f64
                } else {
                    rng.random_range(0.0..3.0)
                }
            })
            .collect();
        p = p.with_weights(weights).unwrap();
    }
    if rng.random_bool(0.5) {
        p = p
            .with_branch_penalty([0.5, 1.0, 1.7, 3.0][rng.random_range(0..4)])
            .unwrap();
    }
    if rng.random_bool(0.5) {
        let limit = rng.random_range(0..=p.branch_node_budget());
        p = p.with_max_branch_nodes(limit).unwrap();
    }
    if rng.random_bool(0.5) {
        p = p.with_min_leaf_size(rng.random_range(1..6)).unwrap();
    }
    p
}

#[test]
fn every_build_registers_dp() {
    let names: Vec<&str> = backends().iter().map(|(e, _)| e.name).collect();
    assert!(names.contains(&"dp"), "{names:?}");
    for (entry, solver) in backends() {
        assert_eq!(entry.name, solver.name());
        assert_eq!(entry.capabilities, solver.capabilities());
        assert!(entry.capabilities.dual_bound);
        assert!(registry::milp_solver(entry.name, &SolveOptions::default()).is_err());
        assert!(registry::nlp_solver(entry.name, &SolveOptions::default()).is_err());
        assert!(registry::tree_search_solver(entry.name, &SolveOptions::default()).is_ok());
    }
    if cfg!(feature = "highs") {
        let error = registry::tree_search_solver("highs", &SolveOptions::default())
            .err()
            .expect("HiGHS is not a tree-search backend");
        assert!(error.to_string().contains("MILP backend"), "{error}");
    }
}

#[test]
fn random_depth_one_against_brute_force() {
    check_random(1, 40, 11, plain);
    check_random(1, 60, 12, extras);
}

#[test]
fn random_depth_two_against_brute_force() {
    check_random(2, 40, 21, plain);
    check_random(2, 80, 22, extras);
}

#[test]
fn random_depth_three_against_brute_force() {
    check_random(3, 15, 31, plain);
    check_random(3, 30, 32, extras);
}

/// Minimum leaf sizes above 1, where the similarity bound must not use row sets that gain
/// rows (a leaf of the new set's tree could hold too few rows of the old set).
fn min_leaf_only(rng: &mut ChaCha8Rng, p: TreeSearchProblem) -> TreeSearchProblem {
    p.with_min_leaf_size(rng.random_range(2..7)).unwrap()
}

#[test]
fn random_min_leaf_sizes_against_brute_force() {
    check_random(2, 60, 41, min_leaf_only);
    check_random(3, 40, 42, min_leaf_only);
}

/// A problem too large to finish quickly: random labels, many features, depth 4.
fn hard_problem() -> TreeSearchProblem {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (n, f) = (3000, 120);
    let rows: Vec<Vec<bool>> = (0..n)
        .map(|_| (0..f).map(|_| rng.random_bool(0.5)).collect())
        .collect();
    let labels = (0..n).map(|_| rng.random_range(0..2)).collect();
    TreeSearchProblem::from_rows(&rows, labels, 2, 4).unwrap()
}

/// Solves `problem` with `options` that stop it after about half a second (by the time
/// limit or a stop request): the search must end then with `limit`, the best tree found
/// so far and a bound below it.
fn assert_stops_with_a_bound(
    name: &str,
    solver: &dyn TreeSearchSolver,
    problem: &TreeSearchProblem,
    options: &SolveOptions,
    limit: Limit,
) {
    let clock = Instant::now();
    let result = solve(solver, problem, options);
    let elapsed = clock.elapsed().as_secs_f64();
    assert_eq!(
        result.status,
        TerminationStatus::FeasibleAtLimit(limit),
        "{name}"
    );
    assert!(elapsed < 0.5 + 0.5, "{name}: {elapsed} s");
    check_result(name, problem, &result);
    let (objective, bound) = (result.objective.unwrap(), result.dual_bound.unwrap());
    assert!(bound < objective, "{name}: stopped with no gap");
    assert!(result.gap.unwrap() > 0.0, "{name}");
}

#[test]
fn time_limit_returns_the_best_tree_with_a_bound() {
    let problem = hard_problem();
    for (entry, solver) in backends() {
        let options = SolveOptions {
            time_limit: Some(0.5),
            ..SolveOptions::default()
        };
        assert_stops_with_a_bound(entry.name, solver.as_ref(), &problem, &options, Limit::Time);
    }
}

/// A stop request (Ctrl-C in `glassbox run`) ends a search that would run for its whole
/// minute at the next step, as the time limit does.
#[test]
fn a_stop_request_returns_the_best_tree_with_a_bound() {
    let problem = hard_problem();
    for (entry, solver) in backends() {
        let flag = Arc::new(AtomicBool::new(false));
        let options = SolveOptions {
            time_limit: Some(60.0),
            interrupt: Some(Interrupt::new(flag.clone())),
            ..SolveOptions::default()
        };
        let request = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(500));
            flag.store(true, Ordering::SeqCst);
        });
        let limit = Limit::Interrupted;
        assert_stops_with_a_bound(entry.name, solver.as_ref(), &problem, &options, limit);
        request.join().unwrap();
    }
}

#[test]
fn step_limit_bounds_the_optimum_from_below() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let problem = random_problem(&mut rng, 300, 12, 2, 3);
    for (entry, solver) in backends() {
        let optimal = solve(solver.as_ref(), &problem, &SolveOptions::default());
        assert_eq!(optimal.status, TerminationStatus::Optimal);
        let optimum = optimal.objective.unwrap();
        for steps in [0, 1, 3, 10] {
            let options = SolveOptions {
                iteration_limit: Some(steps),
                ..SolveOptions::default()
            };
            let result = solve(solver.as_ref(), &problem, &options);
            let who = format!("{} with {steps} steps", entry.name);
            if result.status == TerminationStatus::Optimal {
                assert!((result.objective.unwrap() - optimum).abs() < 1e-9, "{who}");
                continue;
            }
            assert_eq!(
                result.status,
                TerminationStatus::FeasibleAtLimit(Limit::Iteration),
                "{who}"
            );
            check_result(&who, &problem, &result);
            assert!(result.objective.unwrap() >= optimum - 1e-9, "{who}");
            assert!(result.dual_bound.unwrap() <= optimum + 1e-9, "{who}");
            assert!(result.iterations <= steps, "{who}");
        }
    }
}

#[test]
fn warm_starts_are_used_or_refused() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let problem = random_problem(&mut rng, 200, 6, 2, 2);
    for (entry, solver) in backends() {
        let optimal = solve(solver.as_ref(), &problem, &SolveOptions::default());
        let tree = check_result(entry.name, &problem, &optimal);
        // The optimum as a start: still optimal, same objective.
        let options = SolveOptions::default()
            .with_warm_start(Some(WarmStart::primal(encode_tree(&tree, 2).unwrap())));
        let again = solve(solver.as_ref(), &problem, &options);
        assert_eq!(again.status, TerminationStatus::Optimal);
        assert_eq!(again.objective, optimal.objective);
        // A malformed point is an error naming the slot.
        let bad = SolveOptions::default().with_warm_start(Some(WarmStart::primal(vec![9.0; 7])));
        let error = solver.solve(&problem, &bad).unwrap_err().to_string();
        assert!(error.contains("slot 1"), "{error}");
        // A start that breaks the node limit is ignored and said so.
        let limited = problem.clone().with_max_branch_nodes(1).unwrap();
        let ignored = solve(solver.as_ref(), &limited, &options);
        assert_eq!(ignored.status, TerminationStatus::Optimal);
        if tree.branch_nodes() > 1 {
            assert!(
                ignored.raw_status.contains("warm start ignored"),
                "{}",
                ignored.raw_status
            );
        }
    }
}

#[test]
fn too_few_rows_for_a_leaf_is_infeasible() {
    let rows = vec![vec![true, false], vec![false, true], vec![true, true]];
    let problem = TreeSearchProblem::from_rows(&rows, vec![0, 1, 1], 2, 2)
        .unwrap()
        .with_min_leaf_size(4)
        .unwrap();
    for (entry, solver) in backends() {
        let result = solve(solver.as_ref(), &problem, &SolveOptions::default());
        assert_eq!(
            result.status,
            TerminationStatus::Infeasible,
            "{}",
            entry.name
        );
        assert!(result.primal.is_empty());
    }
}

#[test]
fn options_it_cannot_honour_are_refused_through_the_registry() {
    for (entry, _) in backends() {
        let options = SolveOptions {
            threads: Some(4),
            ..SolveOptions::default()
        };
        let error = registry::tree_search_solver(entry.name, &options)
            .err()
            .expect("threads = 4 must be refused");
        assert!(error.to_string().contains("thread"), "{error}");
    }
}

#[test]
fn depth_zero_and_no_features_give_the_best_leaf() {
    let rows = vec![vec![], vec![], vec![]];
    let problem = TreeSearchProblem::from_rows(&rows, vec![0, 1, 1], 2, 3).unwrap();
    let depth_zero =
        TreeSearchProblem::from_rows(&[vec![true], vec![false], vec![true]], vec![0, 1, 1], 2, 0)
            .unwrap();
    for (entry, solver) in backends() {
        for p in [&problem, &depth_zero] {
            let result = solve(solver.as_ref(), p, &SolveOptions::default());
            assert_eq!(result.status, TerminationStatus::Optimal, "{}", entry.name);
            assert_eq!(result.objective, Some(1.0));
            assert_eq!(p.decode(&result.primal).unwrap(), SearchTree::leaf(1));
        }
    }
}
