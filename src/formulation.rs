//! What every learning problem declares about itself, so that `glassbox formulations` can
//! list them with their parameters and defaults and a config can be checked against them.
//!
//! Depends on nothing in glassbox.

use serde::Serialize;

/// One parameter of a formulation, as written in the `[formulation]` table of a config.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ParamSpec {
    /// The key in the config.
    pub name: &'static str,
    /// Its default, as TOML text ("" when it is required).
    pub default: &'static str,
    /// What it means (with the paper's symbol where the paper names it).
    pub help: &'static str,
}

/// A learning problem known to glassbox.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct FormulationInfo {
    /// The name configs use, e.g. `"sorct"`.
    pub name: &'static str,
    /// "nlp", "milp" or "heuristic".
    pub kind: &'static str,
    /// One line on what it learns and where it comes from.
    pub description: &'static str,
    /// Its parameters.
    pub parameters: &'static [ParamSpec],
}
