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

/// Which starts, besides its greedy ones, each fold of a cross-validated choice between an
/// optimized and a greedy tree solves on its rows
/// ([`crate::formulation::NlpClassifierFormulation::fold_starts`]). With k folds and N
/// random starts per split, each spends ceil(N / k) solves, except `Whole` (N), unless the
/// formulation says otherwise
/// ([`crate::formulation::NlpClassifierFormulation::fold_solves`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FoldStarts {
    /// The multistart's best point, as a solution (at the target slope), then the first
    /// ceil(N / k) - 1 seeded random starts (the trait's default: l0tree's and S-ORRT's
    /// folds, and S-ORCT's until 2026-11-29, whose default is now `Whole`). The point was
    /// fitted on every training row, the held-out ones included, so a fold's tree from it
    /// is optimistic on noisy data.
    #[default]
    BestPoint,
    /// The multistart's best ceil(N / k) random starts replayed from their seeds on the
    /// fold's rows: no row's fit reaches the fold, only the ranking of the starts.
    Replay,
    /// The best point solved as a random start is (a randomized tree's slope continuation
    /// from its configured gamma up), so that the fold re-fits it where splits are soft,
    /// then the first ceil(N / k) - 1 seeded random starts.
    Softened,
    /// All N random starts of the split's multistart, from their seeds, on the fold's rows:
    /// the whole multistart again per fold, so that neither a fitted point nor a ranking
    /// of the starts reaches the held-out rows and the fold's tree is the best of as many
    /// starts as the returned one (k N solves on (k - 1) / k of the rows).
    Whole,
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
