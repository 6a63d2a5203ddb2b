//! The backends, one module per solver, each behind its cargo feature. A backend knows
//! nothing about trees: it sees only the core's problem types (`NlpProblem`, `MilpProblem`).

pub mod gradient;
#[cfg(feature = "ipopt")]
pub mod ipopt;

#[cfg(feature = "highs")]
pub mod highs;

#[cfg(feature = "cbc")]
pub mod cbc;

#[cfg(feature = "torch")]
pub mod torch;
