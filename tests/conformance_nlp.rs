//! The NLP conformance suite (`glassbox::conformance::nlp`, the checks every NLP backend must
//! pass) on the built-in backends: each `#[test]` runs one check against every NLP backend
//! the registry lists, so a new backend (argmin, torch, ...) is covered as soon as it is
//! registered. Backends that solve only problems with a tensor form (`tensor_objective_only`)
//! are checked to refuse the suite's problems instead. The last tests run the suite on a
//! variant of a backend and check the suite itself.
//!
//! Run with `cargo test --test conformance_nlp`; add `-- --nocapture` to see every
//! backend's status and raw status on each problem.

use glassbox::conformance::nlp::{self, Check, WithRawOptions};
use glassbox::conformance::nlp_problems::*;
use glassbox::nlp::check;
use glassbox::registry::{self, BackendEntry, Constructor};
use glassbox::{NlpProblem, RawOptionValue, SolveOptions};

/// Every NLP backend of this build, tensor-only ones included.
fn nlp_entries() -> Vec<BackendEntry> {
    registry::backends()
        .into_iter()
        .filter(|entry| matches!(entry.constructor, Constructor::Nlp(_)))
        .collect()
}

/// Runs the check `name` against every NLP backend that solves any NLP, each created
/// through the registry (and checked against its entry).
fn for_each_backend(name: &str, check: Check) {
    for entry in nlp_entries() {
        if nlp::needs_tensor_form(&entry) {
            continue;
        }
        let solver = nlp::backend(&entry);
        nlp::run_checks(&entry, solver.as_ref(), &[(name, check)]);
    }
}

/// One `#[test]` per check of the suite, each over every NLP backend, and a test that they
/// are all of `nlp::CHECKS`, in its order.
macro_rules! one_test_per_check {
    ($($test:ident: $check:ident),+ $(,)?) => {
        $(
            #[test]
            fn $test() {
                for_each_backend(stringify!($check), nlp::$check);
            }
        )+

        #[test]
        fn there_is_one_test_per_check() {
            let names: Vec<&str> = nlp::CHECKS.iter().map(|(name, _)| *name).collect();
            assert_eq!(names, [$(stringify!($check)),+]);
        }
    };
}

one_test_per_check! {
    conformance_bounded_quadratic: bounded_quadratic,
    conformance_hs071_exact_hessian: hs071_exact_hessian,
    conformance_hs071_quasi_newton: hs071_quasi_newton,
    conformance_equality_constrained: equality_constrained,
    conformance_inequality_constrained: inequality_constrained,
    conformance_infeasible: infeasible,
    conformance_unbounded: unbounded,
    conformance_time_limit: time_limit,
    conformance_iteration_limit: iteration_limit,
    conformance_warm_start: warm_start,
    conformance_warm_start_mismatch: warm_start_mismatch,
    conformance_raw_options_checked: raw_options_checked,
    conformance_nan_objective: nan_objective,
    conformance_malformed_problem: malformed_problem,
}

/// Every NLP backend agrees with its entry (name, capabilities, no integers); a build with
/// IPOPT registers it.
#[test]
fn every_build_with_ipopt_registers_it() {
    let names: Vec<&str> = nlp_entries().iter().map(|e| e.name).collect();
    if cfg!(feature = "ipopt") {
        assert!(names.contains(&"ipopt"), "NLP backends: {names:?}");
    }
    for entry in nlp_entries() {
        nlp::backend(&entry);
    }
}

/// The whole suite (`nlp::run_all`) on every backend that solves only problems with a tensor
/// form: they refuse the suite's problems with a capability error.
#[test]
fn tensor_backends_refuse_problems_without_a_tensor_form() {
    for entry in nlp_entries() {
        if nlp::needs_tensor_form(&entry) {
            nlp::run_all(&entry);
        }
    }
}

/// The whole suite again for every backend with a barrier path (raw `path = "barrier"`:
/// the gradient backend), which changes where the projected methods start.
#[test]
fn conformance_barrier_path() {
    let mut ran = 0;
    for entry in nlp_entries() {
        if nlp::needs_tensor_form(&entry) {
            continue;
        }
        let Some(spec) = entry.options.iter().find(|o| o.name == "path") else {
            continue;
        };
        assert!(
            matches!(spec.kind, glassbox::options::OptionKind::Choice(c) if c.contains(&"barrier")),
            "{}: option path without the choice barrier",
            entry.name
        );
        let variant = WithRawOptions {
            solver: nlp::backend(&entry),
            raw: vec![("path", RawOptionValue::Str("barrier".into()))],
        };
        nlp::run_checks(&entry, &variant, nlp::CHECKS);
        ran += 1;
    }
    assert!(ran > 0 || registry::backends().iter().all(|e| e.name != "lbfgs"));
}

#[test]
fn unknown_solver_lists_the_known_ones() {
    let err = registry::nlp_solver("no-such-solver", &SolveOptions::default())
        .err()
        .expect("an unknown solver name must be refused");
    let message = err.to_string();
    assert!(message.contains("no-such-solver"), "{message}");
    for entry in registry::backends() {
        assert!(
            message.contains(entry.name),
            "{message} does not list {}",
            entry.name
        );
    }
}

/// The derivative checks formulations rely on accept the suite's problems (which also
/// checks the suite itself) and catch a wrong derivative.
#[test]
fn derivative_checks_pass_on_the_suite_problems() {
    let hs071_points: [&[f64]; 3] = [&Hs071::START, &Hs071::OPTIMUM, &[2.3, 1.7, 4.1, 3.3]];
    let lambdas: [&[f64]; 3] = [&[0.0, 0.0], &[1.0, -2.0], &[-0.3, 0.7]];
    for x in hs071_points {
        assert!(check::gradient_error(&Hs071, x, 1e-6) < 1e-6);
        assert!(check::jacobian_error(&Hs071, x, 1e-6) < 1e-6);
        for lambda in lambdas {
            for sigma in [1.0, 0.5, 0.0] {
                let e = check::hessian_error(&Hs071, x, sigma, lambda, 1e-5).unwrap();
                assert!(e < 1e-5, "HS71 Hessian error {e} at {x:?}");
            }
        }
    }
    let problems: Vec<(Box<dyn NlpProblem>, Vec<f64>)> = vec![
        (Box::new(BoundedQuadratic), vec![0.3, 0.9]),
        (Box::new(EqualityConstrained), vec![0.3, -1.9]),
        (Box::new(InequalityConstrained), vec![1.3, 0.4]),
        (Box::new(Infeasible), vec![0.4]),
        (Box::new(Unbounded), vec![3.0, -0.5]),
        (Box::new(Rosenbrock::new(5)), vec![-1.2, 1.0, 0.3, 0.7, 1.1]),
    ];
    for (problem, x) in &problems {
        let problem = problem.as_ref();
        let m = problem.num_constraints();
        assert!(
            check::gradient_error(problem, x, 1e-6) < 1e-6,
            "{}",
            problem.name()
        );
        assert!(
            check::jacobian_error(problem, x, 1e-6) < 1e-6,
            "{}",
            problem.name()
        );
        let lambda = vec![0.7; m];
        let e = check::hessian_error(problem, x, 1.3, &lambda, 1e-5).unwrap();
        assert!(e < 1e-5, "{}: Hessian error {e}", problem.name());
    }
    assert!(
        check::hessian_error(&WithoutHessian(Hs071), &Hs071::START, 1.0, &[0.0; 2], 1e-5).is_none()
    );

    // A wrong derivative is caught.
    struct WrongGradient;
    impl NlpProblem for WrongGradient {
        fn num_variables(&self) -> usize {
            1
        }
        fn num_constraints(&self) -> usize {
            0
        }
        fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
            (vec![f64::NEG_INFINITY], vec![f64::INFINITY])
        }
        fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
            (vec![], vec![])
        }
        fn objective(&self, x: &[f64]) -> f64 {
            x[0].powi(3)
        }
        fn gradient(&self, x: &[f64], grad: &mut [f64]) {
            grad[0] = 2.0 * x[0] * x[0];
        }
        fn constraints(&self, _x: &[f64], _g: &mut [f64]) {}
        fn jacobian_structure(&self) -> Vec<(usize, usize)> {
            vec![]
        }
        fn jacobian_values(&self, _x: &[f64], _values: &mut [f64]) {}
    }
    assert!(check::gradient_error(&WrongGradient, &[1.5], 1e-6) > 0.1);
}
