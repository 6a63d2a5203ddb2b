//! The formulation conformance suite (`glassbox::conformance::formulations`) on every
//! formulation of the built-in registry: derivatives of every NLP formulation against finite
//! differences, every MILP formulation's optimum the same on every MILP backend, and every
//! formulation fitted, saved, loaded and predicting as it fitted. A new formulation is
//! covered as soon as it is registered.

use glassbox::conformance::formulations::{self, CHECKS};
use glassbox::registry::Registry;

/// Every check on every built-in formulation, one test per check (each reports every
/// formulation that fails it, not just the first).
fn for_each_formulation(check: formulations::Check) {
    let registry = Registry::shared_builtin();
    let mut failures = Vec::new();
    for entry in registry.formulations() {
        let name = entry.info.name;
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&registry, name)));
        if let Err(panic) = outcome {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failures.push(format!("{name}: {message}"));
        }
    }
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}

#[test]
fn derivatives_match_finite_differences() {
    for_each_formulation(CHECKS[0].1);
}

#[test]
fn milp_backends_agree_on_every_milp_formulation() {
    for_each_formulation(CHECKS[1].1);
}

#[test]
fn fit_save_load_predict_agree() {
    for_each_formulation(CHECKS[2].1);
}
