//! The backend registry: creates a backend from the name a config gives, lists the
//! registered backends with their capabilities and options, and rejects unknown names and
//! unknown or ill-typed options with a clear error. It is one of the few places that sees
//! every backend (`solvers/`).

use crate::options::{check_raw_options, OptionSpec};
use crate::solver::{Capabilities, MilpSolver, NlpSolver};
use crate::{GlassboxError, Result, SolveOptions};

/// A constructor of a backend.
#[derive(Clone, Copy)]
pub enum Constructor {
    /// Creates an NLP backend.
    Nlp(fn() -> Box<dyn NlpSolver>),
    /// Creates a MILP backend.
    Milp(fn() -> Box<dyn MilpSolver>),
}

/// What the registry knows of a backend.
#[derive(Clone, Copy)]
pub struct BackendEntry {
    /// The name configs use.
    pub name: &'static str,
    /// One line on what it is.
    pub description: &'static str,
    /// What it can do.
    pub capabilities: Capabilities,
    /// The raw options it accepts.
    pub options: &'static [OptionSpec],
    /// How to create it.
    pub constructor: Constructor,
    /// Checks options as its solves do, without a problem (types, ranges, refusals), so a
    /// config with a bad value fails before a run writes anything.
    pub check_options: fn(&SolveOptions) -> Result<()>,
}

impl BackendEntry {
    /// "nlp" or "milp".
    pub fn problem_kind(&self) -> &'static str {
        match self.constructor {
            Constructor::Nlp(_) => "nlp",
            Constructor::Milp(_) => "milp",
        }
    }
}

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
pub fn backends() -> Vec<BackendEntry> {
    #[allow(unused_mut)]
    let mut entries = Vec::new();
    #[cfg(feature = "ipopt")]
    entries.push(crate::solvers::ipopt::entry());
    #[cfg(feature = "highs")]
    entries.push(crate::solvers::highs::entry());
    #[cfg(feature = "cbc")]
    entries.push(crate::solvers::cbc::entry());
    entries.push(crate::solvers::gradient::entry());
    #[cfg(feature = "torch")]
    entries.push(crate::solvers::torch::entry());
    entries
}

/// Finds a backend by name.
pub fn find(name: &str) -> Result<BackendEntry> {
    if let Some(entry) = backends().into_iter().find(|e| e.name == name) {
        return Ok(entry);
    }
    if let Some((_, feature)) = NOT_COMPILED.iter().find(|(n, _)| *n == name) {
        return Err(GlassboxError::UnknownSolver {
            name: name.to_string(),
            known: format!(
                "{} ('{name}' was not compiled into this build: rebuild with `--features {feature}`)",
                known_names()
            ),
        });
    }
    Err(GlassboxError::UnknownSolver {
        name: name.to_string(),
        known: known_names(),
    })
}

fn known_names() -> String {
    let names: Vec<&str> = backends().iter().map(|e| e.name).collect();
    if names.is_empty() {
        "none (no backend was compiled in)".to_string()
    } else {
        names.join(", ")
    }
}

/// Checks a backend's options: the typed ones and every raw option, with the backend's own
/// checks (ranges, options it refuses). The generic checks run first, so a backend's check
/// may assume known names and right types.
pub fn validate_options(entry: &BackendEntry, options: &SolveOptions) -> Result<()> {
    options.validate()?;
    check_raw_options(entry.name, entry.options, &options.raw)?;
    (entry.check_options)(options)
}

/// Creates the NLP backend `name`, after checking `options` against it.
pub fn nlp_solver(name: &str, options: &SolveOptions) -> Result<Box<dyn NlpSolver>> {
    let entry = find(name)?;
    validate_options(&entry, options)?;
    match entry.constructor {
        Constructor::Nlp(create) => Ok(create()),
        Constructor::Milp(_) => Err(GlassboxError::Capability {
            solver: name.to_string(),
            what: "solve nonlinear programs (it is a MILP backend)".to_string(),
        }),
    }
}

/// Creates the MILP backend `name`, after checking `options` against it.
pub fn milp_solver(name: &str, options: &SolveOptions) -> Result<Box<dyn MilpSolver>> {
    let entry = find(name)?;
    validate_options(&entry, options)?;
    match entry.constructor {
        Constructor::Milp(create) => Ok(create()),
        Constructor::Nlp(_) => Err(GlassboxError::Capability {
            solver: name.to_string(),
            what: "solve mixed-integer linear programs (it is an NLP backend)".to_string(),
        }),
    }
}
