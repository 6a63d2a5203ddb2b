//! What a formulation may add to, and learn about, the starts of a split's multistart: its
//! own starts built from the training data ([`GreedyStart`]: a greedy tree laid into its
//! variables), solved before the seeded random ones, and, for each start it solves, what
//! kind of start it is and the best objective found before it ([`StartContext`]), so that a
//! formulation that solves a start as a sequence of problems (continuation) can stop early.
//!
//! Depends on nothing else of the core.

/// What a start of a split's multistart is, as the runner tells the formulation that
/// solves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartKind {
    /// A seeded random start.
    Random,
    /// One of the formulation's greedy starts ([`GreedyStart`]).
    Greedy,
    /// A point given from outside: a saved model's warm start, or a point carried along a
    /// warm-started grid path.
    Given,
}

/// The start being solved and what the split's multistart has found before it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StartContext {
    /// What kind of start it is.
    pub kind: StartKind,
    /// The best usable objective among the split's earlier starts (none before the first).
    pub incumbent: Option<f64>,
}

/// A starting point a formulation builds from the training data (a greedy tree mapped into
/// its variables), with where it comes from, as the results line reports it (`origin`).
#[derive(Clone, Debug, PartialEq)]
pub struct GreedyStart {
    /// What it is, e.g. `"cart"`.
    pub origin: &'static str,
    /// The NLP point.
    pub point: Vec<f64>,
}
