//! What a backend registers: its name, description, capabilities, raw options, constructor
//! and option check. The registry of the `glassbox` crate lists such entries (the built-in
//! backends of `solvers/` and any a program adds), creates backends by name and checks
//! options against them; a backend crate only builds its entry.
//!
//! Depends on the core's solver traits, options and errors.

use crate::options::{check_raw_options, OptionSpec};
use crate::solver::{Capabilities, MilpSolver, NlpSolver, TreeSearchSolver};
use crate::{Result, SolveOptions};

/// A constructor of a backend.
#[derive(Clone, Copy)]
pub enum Constructor {
    /// Creates an NLP backend.
    Nlp(fn() -> Box<dyn NlpSolver>),
    /// Creates a MILP backend.
    Milp(fn() -> Box<dyn MilpSolver>),
    /// Creates an optimal-tree search backend.
    TreeSearch(fn() -> Box<dyn TreeSearchSolver>),
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
    /// "nlp", "milp" or "tree_search".
    pub fn problem_kind(&self) -> &'static str {
        match self.constructor {
            Constructor::Nlp(_) => "nlp",
            Constructor::Milp(_) => "milp",
            Constructor::TreeSearch(_) => "tree_search",
        }
    }

    /// "an NLP", "a MILP" or "a tree-search", for messages.
    pub fn kind_phrase(&self) -> &'static str {
        match self.constructor {
            Constructor::Nlp(_) => "an NLP",
            Constructor::Milp(_) => "a MILP",
            Constructor::TreeSearch(_) => "a tree-search",
        }
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
