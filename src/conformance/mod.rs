//! The conformance suites: the checks every backend of a problem kind must pass, and the
//! checks every formulation must pass, written once and run by glassbox's own tests on its
//! built-in backends and formulations, and by a crate that extends glassbox on its own
//! (`examples/extension` runs them on the backend and the formulation it adds). A check
//! panics with a message naming the backend or formulation and what failed, so it is called
//! from a `#[test]`.
//!
//! - [`nlp`]: the NLP backends' suite, with its problems in [`nlp_problems`]
//!   (`tests/conformance_nlp.rs` runs it on every built-in NLP backend);
//! - [`milp`]: the MILP backends' suite, with its problems in [`milp_problems`]
//!   (`tests/conformance_milp.rs`);
//! - [`formulations`]: the formulations' suite, iterating a registry
//!   (`tests/conformance_formulations.rs`), and [`formulations::printed_defaults`], the
//!   check that the defaults a formulation's `info()` prints are its config type's
//!   `Default` (typed, so called with the config type; the registry's tests call it on every
//!   built-in formulation).
//!
//! Depends on the core and the registry.

pub mod formulations;
pub mod milp;
pub mod milp_problems;
pub mod nlp;
pub mod nlp_problems;
