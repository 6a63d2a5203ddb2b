//! The built-in backends (`solvers/`, each behind its cargo feature), and how the registry
//! creates a backend from its entry: options checked first, a backend of the wrong problem
//! kind refused with a clear error.

use glassbox_core::backend::{validate_options, BackendEntry, Constructor};
use glassbox_core::solver::{MilpSolver, NlpSolver, TreeSearchSolver};
use glassbox_core::{GlassboxError, Result, SolveOptions};

/// Backends that exist but were left out of this build, with the cargo feature that adds them.
const NOT_COMPILED: &[(&str, &str)] = &[
    #[cfg(not(feature = "ipopt"))]
    ("ipopt", "ipopt"),
    #[cfg(not(feature = "highs"))]
    ("highs", "highs"),
    #[cfg(not(feature = "cbc"))]
    ("cbc", "cbc"),
    #[cfg(not(feature = "torch"))]
    ("torch", "torch"),
];

/// Every backend compiled into this build.
// One `push` per backend, each behind its cargo feature (`vec![]` cannot hold `#[cfg]`s).
#[allow(clippy::vec_init_then_push)]
pub fn builtin_backends() -> Vec<BackendEntry> {
    #[allow(unused_mut)]
    let mut entries = Vec::new();
    #[cfg(feature = "ipopt")]
    entries.push(crate::solvers::ipopt::entry());
    #[cfg(feature = "highs")]
    entries.push(crate::solvers::highs::entry());
    #[cfg(feature = "cbc")]
    entries.push(crate::solvers::cbc::entry());
    entries.push(crate::solvers::gradient::entry());
    entries.push(crate::solvers::dp::entry());
    #[cfg(feature = "torch")]
    entries.push(crate::solvers::torch::entry());
    entries
}

/// Finds a built-in backend by name.
pub fn find(name: &str) -> Result<BackendEntry> {
    let entries = builtin_backends();
    entries
        .iter()
        .find(|e| e.name == name)
        .copied()
        .ok_or_else(|| unknown(name, &entries))
}

/// The error for a backend `name` not among `entries`: the known names, and the cargo
/// feature that adds it where it is a built-in backend left out of this build.
pub(super) fn unknown(name: &str, entries: &[BackendEntry]) -> GlassboxError {
    let names: Vec<&str> = entries.iter().map(|e| e.name).collect();
    let known = if names.is_empty() {
        "none (no backend was compiled in)".to_string()
    } else {
        names.join(", ")
    };
    let known = match NOT_COMPILED.iter().find(|(n, _)| *n == name) {
        Some((_, feature)) => format!(
            "{known} ('{name}' was not compiled into this build: rebuild with `--features {feature}`)"
        ),
        None => known,
    };
    GlassboxError::UnknownSolver {
        name: name.to_string(),
        known,
    }
}

/// Creates the NLP backend of `entry`, after checking `options` against it.
pub(super) fn create_nlp(
    entry: &BackendEntry,
    options: &SolveOptions,
) -> Result<Box<dyn NlpSolver>> {
    validate_options(entry, options)?;
    match entry.constructor {
        Constructor::Nlp(create) => Ok(create()),
        _ => Err(GlassboxError::Capability {
            solver: entry.name.to_string(),
            what: format!(
                "solve nonlinear programs (it is {} backend)",
                entry.kind_phrase()
            ),
        }),
    }
}

/// Creates the MILP backend of `entry`, after checking `options` against it.
pub(super) fn create_milp(
    entry: &BackendEntry,
    options: &SolveOptions,
) -> Result<Box<dyn MilpSolver>> {
    validate_options(entry, options)?;
    match entry.constructor {
        Constructor::Milp(create) => Ok(create()),
        _ => Err(GlassboxError::Capability {
            solver: entry.name.to_string(),
            what: format!(
                "solve mixed-integer linear programs (it is {} backend)",
                entry.kind_phrase()
            ),
        }),
    }
}

/// Creates the optimal-tree search backend of `entry`, after checking `options` against it.
pub(super) fn create_tree_search(
    entry: &BackendEntry,
    options: &SolveOptions,
) -> Result<Box<dyn TreeSearchSolver>> {
    validate_options(entry, options)?;
    match entry.constructor {
        Constructor::TreeSearch(create) => Ok(create()),
        _ => Err(GlassboxError::Capability {
            solver: entry.name.to_string(),
            what: format!(
                "solve optimal-tree search problems (it is {} backend)",
                entry.kind_phrase()
            ),
        }),
    }
}

/// Creates the built-in NLP backend `name`, after checking `options` against it.
pub fn nlp_solver(name: &str, options: &SolveOptions) -> Result<Box<dyn NlpSolver>> {
    create_nlp(&find(name)?, options)
}

/// Creates the built-in MILP backend `name`, after checking `options` against it.
pub fn milp_solver(name: &str, options: &SolveOptions) -> Result<Box<dyn MilpSolver>> {
    create_milp(&find(name)?, options)
}

/// Creates the built-in optimal-tree search backend `name`, after checking `options`
/// against it.
pub fn tree_search_solver(name: &str, options: &SolveOptions) -> Result<Box<dyn TreeSearchSolver>> {
    create_tree_search(&find(name)?, options)
}
