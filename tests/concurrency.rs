//! Concurrency: the registry, the backends, the problems and the fitted models can be sent
//! to and shared between threads (checked at compile time), and 100 MILP solves on HiGHS and
//! CBC running in parallel threads give the optima a sequential run gives (and enumeration
//! confirms).

use glassbox::conformance::milp_problems::{knapsack_by_enumeration, knapsack_with};
use glassbox::milp::MilpProblem;
use glassbox::registry::{self, BackendEntry, Constructor};
use glassbox::{MilpSolver, NlpSolver, SolveOptions, SolveResult, TerminationStatus};
use std::sync::Arc;

/// Compiles only if `T` is `Send + Sync`.
const fn send_sync<T: Send + Sync + ?Sized>() {}

// What threads share: the registry's entries and constructors, the backends (as the trait
// objects the registry hands out and as their concrete types), options and results, the
// problems, the data and every fitted model kind. A type losing `Send` or `Sync` (an `Rc`, a
// raw pointer, a `RefCell` cache) fails this file's build.
const _: () = {
    send_sync::<BackendEntry>();
    send_sync::<Constructor>();
    send_sync::<Box<dyn NlpSolver>>();
    send_sync::<Box<dyn MilpSolver>>();
    #[cfg(feature = "ipopt")]
    send_sync::<glassbox::solvers::ipopt::IpoptSolver>();
    #[cfg(feature = "highs")]
    send_sync::<glassbox::solvers::highs::HighsSolver>();
    #[cfg(feature = "cbc")]
    send_sync::<glassbox::solvers::cbc::CbcSolver>();
    send_sync::<glassbox::solvers::gradient::LbfgsSolver>();
    send_sync::<SolveOptions>();
    send_sync::<SolveResult>();
    send_sync::<MilpProblem>();
    send_sync::<dyn glassbox::NlpProblem>();
    send_sync::<glassbox::formulations::sorct::SorctProblem>();
    send_sync::<glassbox::formulations::sorrt::SorrtProblem>();
    send_sync::<glassbox::formulations::l0tree::L0TreeProblem>();
    send_sync::<glassbox::experiment::ExperimentConfig>();
    send_sync::<glassbox::data::Table>();
    send_sync::<glassbox::data::ClassificationData>();
    send_sync::<glassbox::data::RegressionData>();
    send_sync::<glassbox::data::MinMaxScaler>();
    send_sync::<glassbox::data::Encoding>();
    send_sync::<glassbox::formulations::sorct::SorctModel>();
    send_sync::<glassbox::formulations::sorrt::SorrtModel>();
    send_sync::<glassbox::formulations::logistic_l1::LogisticL1Model>();
    send_sync::<glassbox::formulations::l0tree::L0TreeModel>();
    send_sync::<glassbox::formulations::cart::TreeModel>();
    send_sync::<glassbox::formulations::forest::ForestModel>();
    send_sync::<glassbox::formulations::oct::OctModel>();
    send_sync::<glassbox::formulations::risk_score::RiskScoreModel>();
    send_sync::<glassbox::formulations::tao_oblique::ObliqueTreeModel>();
    send_sync::<glassbox::formulations::loss_tree::LossTreeModel>();
};

/// The MILP backends of this build (HiGHS and CBC in the default build).
fn milp_backends() -> Vec<(&'static str, Box<dyn MilpSolver>)> {
    registry::backends()
        .into_iter()
        .filter_map(|entry| match entry.constructor {
            Constructor::Milp(create) => Some((entry.name, create())),
            Constructor::Nlp(_) | Constructor::TreeSearch(_) => None,
        })
        .collect()
}

/// The 100 problems: 0-1 knapsacks of 12 items, capacities 40 to 535.
fn capacities() -> Vec<f64> {
    (0..100).map(|k| 40.0 + 5.0 * k as f64).collect()
}

fn optimum(solver: &dyn MilpSolver, capacity: f64) -> f64 {
    let result = solver
        .solve(&knapsack_with(capacity), &SolveOptions::default())
        .unwrap();
    assert_eq!(
        result.status,
        TerminationStatus::Optimal,
        "{} at capacity {capacity}: {}",
        solver.name(),
        result.raw_status
    );
    result.objective.unwrap()
}

#[test]
fn a_hundred_parallel_milp_solves_per_backend_match_the_sequential_ones() {
    let backends = milp_backends();
    for name in ["highs", "cbc"] {
        assert!(
            backends.iter().any(|(n, _)| *n == name),
            "{name} is not in this build"
        );
    }
    let capacities = capacities();
    // Sequential reference, checked against enumeration.
    let sequential: Vec<Vec<f64>> = backends
        .iter()
        .map(|(_, solver)| {
            capacities
                .iter()
                .map(|&c| optimum(solver.as_ref(), c))
                .collect()
        })
        .collect();
    for (b, (name, _)) in backends.iter().enumerate() {
        for (k, &c) in capacities.iter().enumerate() {
            let exact = knapsack_by_enumeration(c);
            assert!(
                (sequential[b][k] - exact).abs() < 1e-6,
                "{name} capacity {c}: {} vs {exact}",
                sequential[b][k]
            );
        }
    }

    // Parallel: 8 threads per backend, all backends at once; each thread takes every 8th
    // problem. Even threads share one backend object (`Sync`), odd ones solve on a clone.
    let threads = 8;
    let shared: Vec<Arc<Box<dyn MilpSolver>>> = backends
        .iter()
        .map(|(_, s)| Arc::new(dyn_clone::clone_box(s.as_ref())))
        .collect();
    let mut parallel: Vec<Vec<f64>> = vec![vec![f64::NAN; capacities.len()]; backends.len()];
    std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for (b, solver) in shared.iter().enumerate() {
            for t in 0..threads {
                let solver = solver.clone();
                let capacities = &capacities;
                handles.push((
                    b,
                    scope.spawn(move || {
                        let own;
                        let solver: &dyn MilpSolver = if t % 2 == 0 {
                            solver.as_ref().as_ref()
                        } else {
                            own = dyn_clone::clone_box(solver.as_ref().as_ref());
                            own.as_ref()
                        };
                        (t..capacities.len())
                            .step_by(threads)
                            .map(|k| (k, optimum(solver, capacities[k])))
                            .collect::<Vec<_>>()
                    }),
                ));
            }
        }
        for (b, handle) in handles {
            for (k, objective) in handle.join().expect("a solve thread panicked") {
                parallel[b][k] = objective;
            }
        }
    });
    for (b, (name, _)) in backends.iter().enumerate() {
        for k in 0..capacities.len() {
            assert!(
                (parallel[b][k] - sequential[b][k]).abs() < 1e-9,
                "{name} capacity {}: parallel {} vs sequential {}",
                capacities[k],
                parallel[b][k],
                sequential[b][k]
            );
        }
    }
}
