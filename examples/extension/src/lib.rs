//! An extension of glassbox from outside its workspace: the formulation [`l1svm`] and the
//! backend [`microlp_backend`], and [`registry`], glassbox's built-in registry with both
//! added. Nothing here edits glassbox: a formulation is a config type implementing one of the
//! core's formulation traits, a backend a type implementing one of its solver traits, each
//! made known by one registry call.

pub mod l1svm;
pub mod microlp_backend;

use glassbox::registry::{FormulationEntry, Registry};

/// glassbox's built-in formulations and backends, with `l1svm` and `microlp`.
pub fn registry() -> Registry {
    Registry::builtin()
        .with_formulation(FormulationEntry::milp_classifier::<l1svm::L1SvmConfig>(
            l1svm::info(),
        ))
        .with_backend(microlp_backend::entry())
}
