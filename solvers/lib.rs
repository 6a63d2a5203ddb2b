//! glassbox-solvers: the backends, one module per solver, each behind its cargo feature. A
//! backend knows nothing about trees: it sees only the core's problem types (`NlpProblem`,
//! `MilpProblem`, `TreeSearchProblem`), options and results, and builds its registry entry
//! (`glassbox_core::backend::BackendEntry`).
//!
//! Depends on `glassbox-core` only.

pub mod dp;
#[cfg(feature = "torch")]
mod dynamic_library;
pub mod gradient;
#[cfg(feature = "ipopt")]
mod import_slots;
#[cfg(feature = "ipopt")]
pub mod ipopt;

#[cfg(feature = "highs")]
pub mod highs;

#[cfg(feature = "cbc")]
pub mod cbc;

#[cfg(feature = "torch")]
pub mod torch;

#[cfg(test)]
mod test_problems;
#[cfg(test)]
mod test_support;
