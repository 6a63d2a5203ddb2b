//! The conformance suites: the checks every backend of a problem kind must pass, and the
//! checks every formulation must pass, written once and run by glassbox's own tests on its
//! built-in backends and formulations, and by a crate that extends glassbox on its own
//! (`examples/extension` runs them on the backend and the formulation it adds). A check
//! panics with a message naming the backend or formulation and what failed, so it is called
//! from a `#[test]`.
//!
//! - [`milp`]: the MILP backends' suite, with its problems in [`milp_problems`];
//! - [`formulations`]: the formulations' suite, iterating a registry.
//!
//! Depends on the core and the registry.

pub mod formulations;
pub mod milp;
pub mod milp_problems;
