//! The extension's backend and formulation against glassbox's conformance suites, run from
//! outside glassbox as any extension would run them.

use glassbox::conformance::{formulations, milp};
use glassbox_extension_example::{l1svm, microlp_backend, registry};
use std::sync::Arc;

/// Every check of the MILP backends' suite on `microlp`.
#[test]
fn microlp_passes_the_milp_conformance_suite() {
    milp::run_all(&microlp_backend::entry());
}

/// Every check of the formulation suite on `l1svm`: fitted, saved, loaded and predicting
/// through the registry, and HiGHS, CBC and microlp proving the same optimum.
#[test]
fn l1svm_passes_the_formulation_conformance_suite() {
    formulations::run_all(&Arc::new(registry()), l1svm::NAME);
}

/// The defaults `glassbox-ext formulations` prints for `l1svm` are its config's `Default`.
#[test]
fn l1svm_prints_its_defaults() {
    let read = formulations::printed_defaults::<l1svm::L1SvmConfig>(&l1svm::info(), |_| {});
    assert_eq!(read, 3, "c, max_features and weight_bound");
}

/// The registry lists both additions beside the built-in ones.
#[test]
fn the_registry_has_both_additions() {
    let registry = registry();
    assert_eq!(registry.formulation(l1svm::NAME).unwrap().info.kind, "milp");
    let options = glassbox::SolveOptions::default();
    assert!(registry
        .milp_solver(microlp_backend::NAME, &options)
        .is_ok());
    assert!(
        registry.formulation("oct").is_ok(),
        "the built-in ones stay"
    );
}
