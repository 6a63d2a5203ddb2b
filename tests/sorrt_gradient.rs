//! S-ORRT solved by the gradient backend `"lbfgs"` against IPOPT on Boston Housing at
//! depth 2, from the same data-aware starting points, and `glassbox run` with
//! `solver = "lbfgs"` from the example config. `tests/torch_backend.rs` does the same for
//! `"torch"` (the same method with autograd derivatives).
//!
//! What is asserted: every lbfgs point that reports a solution satisfies the bounds and the
//! constraints to 1e-6; started at IPOPT's local optimum, lbfgs reports a solution within 1%
//! of IPOPT's objective (the two agree on what a local optimum is); without the fairness
//! constraint, lbfgs's best objective over the three starts (3000 iterations each) is within
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

#[path = "common/sorrt_boston.rs"]
mod sorrt_boston;

use sorrt_boston::*;

/// Iterations per lbfgs solve (a budget: the tests stay short).
const ITERATIONS: u64 = 3000;

#[test]
fn sorrt_boston_lbfgs_against_ipopt() {
    for (name, config) in boston_configs() {
        let problem = boston_problem(&config);
        let c = compare_with_ipopt(name, &config, &problem, &["lbfgs"], &[], ITERATIONS, 0..3);
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
