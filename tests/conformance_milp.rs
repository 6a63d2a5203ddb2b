//! The MILP conformance suite (`glassbox::conformance::milp`, the checks every MILP backend
//! must pass) on the built-in backends: each `#[test]` runs one check against every MILP
//! backend the registry lists, so a new backend is covered as soon as it is registered. The
//! last tests compare the backends with each other and check the suite itself.
//!
//! Run with `cargo test --test conformance_milp`; add `-- --nocapture` to see every
//! backend's status and raw status on each problem.

use glassbox::conformance::milp::*;
use glassbox::conformance::milp_problems::*;
use glassbox::milp::MilpProblem;
use glassbox::registry::{self, BackendEntry, Constructor};
use glassbox::{Interrupt, Limit, MilpSolver, SolveOptions, TerminationStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Every MILP backend of this build, created through the registry.
fn milp_backends() -> Vec<(BackendEntry, Box<dyn MilpSolver>)> {
    registry::backends()
        .into_iter()
        .filter_map(|entry| match entry.constructor {
            Constructor::Milp(create) => Some((entry, create())),
            Constructor::Nlp(_) | Constructor::TreeSearch(_) => None,
        })
        .collect()
}

/// Runs `check` against every MILP backend.
fn for_each_backend(check: fn(&BackendEntry, &dyn MilpSolver)) {
    for (entry, solver) in milp_backends() {
        check(&entry, solver.as_ref());
    }
}

// ---------------------------------------------------------------------------------------
// The tests: one per check, each over every MILP backend.

#[test]
fn every_build_registers_its_milp_backends() {
    let names: Vec<&str> = milp_backends().iter().map(|(e, _)| e.name).collect();
    if cfg!(feature = "highs") {
        assert!(names.contains(&"highs"), "MILP backends: {names:?}");
    }
    if cfg!(feature = "cbc") {
        assert!(names.contains(&"cbc"), "MILP backends: {names:?}");
    }
    for (entry, solver) in milp_backends() {
        assert_eq!(entry.name, solver.name());
        assert_eq!(entry.capabilities, solver.capabilities());
        assert!(entry.capabilities.integers, "{}", entry.name);
        assert!(entry.capabilities.constraints, "{}", entry.name);
        assert!(
            registry::nlp_solver(entry.name, &SolveOptions::default()).is_err(),
            "{} is not an NLP backend",
            entry.name
        );
    }
}

#[test]
fn conformance_known_optima() {
    for_each_backend(known_optima);
}

#[test]
fn conformance_infeasible() {
    for_each_backend(infeasible);
}

#[test]
fn conformance_unbounded() {
    for_each_backend(unbounded);
}

#[test]
fn conformance_time_limit() {
    for_each_backend(time_limit);
}

#[test]
fn conformance_mip_start() {
    for_each_backend(mip_start);
}

#[test]
fn conformance_options_checked() {
    for_each_backend(options_checked);
}

#[test]
fn conformance_gap_options() {
    for_each_backend(gap_options);
}

#[test]
fn conformance_threads_seed_verbosity() {
    for_each_backend(threads_seed_verbosity);
}

#[test]
fn conformance_parallel_solves() {
    for_each_backend(parallel_solves);
}

#[test]
fn conformance_mps_round_trip() {
    for_each_backend(mps_round_trip);
}

#[test]
fn conformance_malformed_and_empty() {
    for_each_backend(malformed_and_empty);
}

/// A stop request (`SolveOptions::interrupt`, Ctrl-C in `glassbox run`) from another thread
/// ends a run on the hard market split of the time-limit check (a 5 x 40 instance that runs
/// for minutes) as interrupted, within a second of the request and long before its 5 s
/// limit: HiGHS from its interrupt callback, CBC (which cannot be interrupted) from the
/// watch that runs it, leaving CBC to finish in the background.
#[test]
fn a_stop_request_ends_a_run_as_interrupted() {
    let _turn = timed();
    let (problem, _) = market_split(5, 40, 7);
    for name in ["highs", "cbc"] {
        let flag = Arc::new(AtomicBool::new(false));
        let options = SolveOptions {
            time_limit: Some(5.0),
            interrupt: Some(Interrupt::new(flag.clone())),
            ..SolveOptions::default()
        };
        let setter = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(500));
            flag.store(true, Ordering::SeqCst);
        });
        let solver = registry::milp_solver(name, &options).unwrap();
        let clock = Instant::now();
        let result = solve(solver.as_ref(), &problem, &options);
        let elapsed = clock.elapsed().as_secs_f64();
        setter.join().unwrap();
        assert_eq!(
            result.status.limit(),
            Some(Limit::Interrupted),
            "{name}: {} ({})",
            result.status,
            result.raw_status
        );
        assert!(elapsed < 1.5, "{name}: {elapsed:.2} s");
    }
}

/// Every backend reaches the same optimum on every known problem, within 1e-6, and on a
/// few random knapsacks and market splits small enough to solve exactly.
#[test]
fn backends_agree_on_every_optimum() {
    let _turn = timed();
    let mut problems: Vec<MilpProblem> = all_known().into_iter().map(|k| k.problem).collect();
    for seed in 0..3 {
        problems.push(market_split(2, 12, seed).0);
    }
    for capacity in [50.0, 123.0, 200.0, 333.0] {
        problems.push(knapsack_with(capacity));
    }
    let exact = SolveOptions {
        relative_gap: Some(0.0),
        absolute_gap: Some(1e-9),
        ..SolveOptions::default()
    };
    for problem in &problems {
        let results: Vec<(String, f64)> = milp_backends()
            .iter()
            .map(|(entry, solver)| {
                let result = solve(solver.as_ref(), problem, &exact);
                assert_eq!(
                    result.status,
                    TerminationStatus::Optimal,
                    "{} on {}: {}",
                    entry.name,
                    problem.name,
                    result.raw_status
                );
                (entry.name.to_string(), result.objective.unwrap())
            })
            .collect();
        for pair in results.windows(2) {
            assert!(
                (pair[0].1 - pair[1].1).abs() <= 1e-6,
                "{}: {} says {}, {} says {}",
                problem.name,
                pair[0].0,
                pair[0].1,
                pair[1].0,
                pair[1].1
            );
        }
    }
}

/// The enumerable optima of the suite are right (which checks the suite itself).
#[test]
fn the_suite_optima_are_right() {
    assert_eq!(knapsack_by_enumeration(165.0), knapsack().objective);
    let known = knapsack();
    assert_eq!(
        known
            .problem
            .objective_value(known.solution.as_ref().unwrap()),
        known.objective
    );
    // Assignment: the best of the 24 permutations.
    let mut best = f64::INFINITY;
    let mut perm = [0usize, 1, 2, 3];
    fn permutations(k: usize, perm: &mut [usize; 4], best: &mut f64) {
        if k == 4 {
            let cost: f64 = (0..4).map(|i| ASSIGNMENT_COSTS[i][perm[i]]).sum();
            *best = best.min(cost);
            return;
        }
        for i in k..4 {
            perm.swap(k, i);
            permutations(k + 1, perm, best);
            perm.swap(k, i);
        }
    }
    permutations(0, &mut perm, &mut best);
    assert_eq!(best, assignment().objective);
    for known in all_known() {
        let x = known.solution.as_ref().unwrap();
        assert!(known.problem.is_feasible(x), "{}", known.problem.name);
        assert!(
            (known.problem.objective_value(x) - known.objective).abs() < 1e-12,
            "{}",
            known.problem.name
        );
        assert!(known.problem.validate().is_ok());
    }
    let (problem, start) = market_split(5, 40, 7);
    assert!(problem.is_feasible(&start));
}

#[test]
fn unknown_solver_lists_the_known_ones() {
    let err = registry::milp_solver("no-such-solver", &SolveOptions::default())
        .err()
        .expect("an unknown solver name must be refused");
    let message = err.to_string();
    for entry in registry::backends() {
        assert!(message.contains(entry.name), "{message}");
    }
}
