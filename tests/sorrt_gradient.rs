//! S-ORRT solved by the gradient backend `"lbfgs"` against IPOPT on Boston Housing at
//! depth 2, from the same data-aware starting points, and `glassbox run` with
//! `solver = "lbfgs"` from the example config. `tests/torch_backend.rs` does the same for
//! `"torch"` (the same method with autograd derivatives).
//!
//! What is asserted: every lbfgs point that reports a solution satisfies the bounds and the
//! constraints to 1e-6; started at IPOPT's local optimum, lbfgs reports a solution within 1%
//! of IPOPT's objective (the two agree on what a local optimum is); without the fairness
//! constraint, lbfgs's best objective over the three starts (3000 iterations each, on the
//! direct path, not the default `auto` path's barrier) is within
//! 10% of IPOPT's best (a guard on the diagonal initial Hessian of projected L-BFGS, see
//! `solvers/gradient/projected.rs`; with the scalar `s^T y / y^T y` alone it was 2.03 times
//! IPOPT's).
//!
//! Issue 5's "within 1% of IPOPT from the same starting point" is NOT met per start on
//! S-ORRT, and is measured, not asserted (`cargo run --release --example gradient_vs_ipopt
//! -- 20 lbfgs`; numbers in `benches/README.md`, "lbfgs against IPOPT per start"): over 20
//! data-aware starts on Boston D=2, lambda = 0, run until it stops by itself, lbfgs is
//! within 1% of IPOPT on 0 starts, lower than IPOPT on 6 (down to 0.62 times), higher on 14
//! (median ratio 1.087, up to 2.15); every run ends "no progress" (`other_limit_feasible`)
//! after 3000-23500 iterations, short of the 1e-8 tolerance. With gamma = 512 the problem is
//! badly conditioned (branch coefficients see curvatures of order (gamma / p)^2 times the gaps
//! between leaf predictions, leaf coefficients of order one): the first-order method stalls
//! in a narrow valley, and from the same start the two methods take different paths to
//! different points. The first three starts (IPOPT 3.33, 5.00, 4.71; lbfgs 3.59, 3.52, 4.38
//! when run to its end, 4.90, 3.52, 4.38 after 3000 iterations) are the ones tested here. With
//! the fairness constraint, 3000 iterations reach a feasible point from every start (21.4,
//! 21.9, 27.7 against IPOPT's 9.71, 10.19, 11.48); from IPOPT's point and multipliers lbfgs
//! keeps IPOPT's objective. Times are printed with `-- --nocapture`, not asserted.
//!
//! With the projected Newton stage (`refine = "newton"`, the default when the problem gives a
//! Hessian, `solvers/gradient/newton.rs`), an lbfgs solve run until it stops by itself ends
//! stationary to tolerance (`locally_optimal`, projected gradient <= 1e-8 max(1, |grad f|))
//! where L-BFGS alone stalls ("no progress", `other_limit_feasible`): asserted on starts 1
//! and 2 (18 of 20 starts in `benches/README.md`). The objective barely moves (the stall
//! points were already close in value), and it is still not IPOPT's: the points are
//! stationary with a reduced Hessian that is positive semidefinite to rounding (smallest
//! eigenvalue about -1e-9 against entries of order 1e3), i.e. flat directions, from which
//! IPOPT's interior-point start (pushed off the bounds) finds lower points.

#[path = "common/sorrt_boston.rs"]
mod sorrt_boston;

use glassbox::formulations::sorrt::starts;
use glassbox::{
    registry, Limit, NlpProblem, RawOptionValue, SolveOptions, TerminationStatus, WarmStart,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sorrt_boston::*;

/// Iterations per lbfgs solve (a budget: the tests stay short).
const ITERATIONS: u64 = 3000;

#[test]
fn sorrt_boston_lbfgs_against_ipopt() {
    for (name, config) in boston_configs() {
        let problem = boston_problem(&config);
        // The direct path: this guards the projected method's diagonal scaling under an
        // iteration budget; lbfgs's default (`path = "auto"`, the barrier on this bounds-only
        // problem) spends part of the budget on the path, and its best of 20 starts run to
        // their end is asserted in tests/gradient_best_of_starts.rs.
        let direct = [("path", "direct")];
        let c = compare_with_ipopt(
            name,
            &config,
            &problem,
            &["lbfgs"],
            &direct,
            ITERATIONS,
            0..3,
        );
        if config.fairness.is_none() {
            let ratio = c.best[1] / c.best[0];
            assert!(ratio <= 1.10, "{name}: best lbfgs / best IPOPT {ratio}");
        }
        assert!(
            c.from_ipopt[0] <= 1.01,
            "{name}: from IPOPT's point, ratio {}",
            c.from_ipopt[0]
        );
    }
}

#[test]
fn glassbox_run_sorrt_with_lbfgs_from_the_example_config() {
    run_cut_down_example("sorrt_boston_lbfgs.toml", "lbfgs");
}

/// `|P(x - grad f) - x|_inf` and `max(1, |grad f|_inf)` (the problem has bounds only).
fn projected_gradient(problem: &dyn NlpProblem, x: &[f64]) -> (f64, f64) {
    let mut grad = vec![0.0; problem.num_variables()];
    problem.gradient(x, &mut grad);
    let (xl, xu) = problem.variable_bounds();
    let pg = (0..x.len()).fold(0f64, |m, j| {
        m.max((-grad[j]).clamp(xl[j] - x[j], xu[j] - x[j]).abs())
    });
    (pg, grad.iter().fold(1f64, |m, v| m.max(v.abs())))
}

#[test]
fn sorrt_boston_lbfgs_with_newton_ends_stationary() {
    let (name, config) = boston_configs().remove(0);
    let problem = boston_problem(&config);
    assert_eq!(problem.num_constraints(), 0, "{name}");
    for seed in 1..3u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let start = starts::random_start(&problem, config.initialization, &mut rng);
        let solve = |refine: &str| {
            let mut options =
                SolveOptions::default().with_warm_start(Some(WarmStart::primal(start.clone())));
            options
                .raw
                .insert("refine".into(), RawOptionValue::Str(refine.into()));
            registry::nlp_solver("lbfgs", &options)
                .unwrap()
                .solve(&problem, &options)
                .unwrap()
        };
        let result = solve("newton");
        let (pg, scale) = projected_gradient(&problem, &result.primal);
        eprintln!(
            "{name}, seed {seed}: {} objective {:.6e}, projected gradient {pg:.2e} (scale {scale:.2e}), {} iterations, {:.2} s: {}",
            result.status,
            result.objective.unwrap(),
            result.iterations,
            result.wall_seconds,
            result.raw_status
        );
        assert_eq!(
            result.status,
            TerminationStatus::LocallyOptimal,
            "{}",
            result.raw_status
        );
        assert!(pg <= 1e-8 * scale, "seed {seed}: projected gradient {pg:e}");
        assert!(
            result.raw_status.contains("projected Newton"),
            "{}",
            result.raw_status
        );
        if seed == 1 {
            // Without the Newton stage, L-BFGS stalls short of the tolerance.
            let alone = solve("none");
            eprintln!("  refine = none: {} ({})", alone.status, alone.raw_status);
            assert_eq!(
                alone.status,
                TerminationStatus::FeasibleAtLimit(Limit::Other),
                "{}",
                alone.raw_status
            );
            let (pg_alone, _) = projected_gradient(&problem, &alone.primal);
            assert!(pg_alone > 1e-8 * scale, "{pg_alone:e}");
        }
    }
}
