//! Experiments are data: a TOML config names a data set, a split protocol, a formulation
//! with its parameters, a solver with its options and a multistart; running it appends one
//! JSON line per solve to `results.jsonl` and saves the selected model of every split.
//!
//! ```toml
//! [data]
//! path = "../../shared/datasets/iris.csv"  # relative to this file
//! # synthetic = { rows = 300, features = 4, classes = 3, seed = 7 }  # instead of path
//! target = "target"
//! categorical = []
//! drop_missing = false
//!
//! [split]
//! test_fraction = 0.25
//! repeats = 10
//! seed = 1
//!
//! [formulation]
//! name = "sorct"
//! depth = 2
//!
//! [solver]
//! name = "ipopt"
//! time_limit = 60.0
//!
//! [multistart]
//! starts = 20
//! seed = 1
//! ```
//!
//! - [`config`]: the config of one setting; [`grid`]: grids of them (axes, protocols).
//! - [`mod@unit`]: the engine's view of a formulation; [`kinds`]: one implementation per problem
//!   kind, all run by one runner; [`engine`]: grids on split protocols, warm paths, parallel
//!   chains, resume, shards; [`run()`]: a one-setting run, the engine's one-cell grid.
//! - [`record`]: the results lines; [`store`]: the engine's results on disk; [`summary`]:
//!   the readable tables.
//!
//! This module sees the formulations and the registry: it is one of the outer layers.

pub mod config;
/// The experiment engine: grids on split protocols, warm-started paths, parallel chains,
/// resume, shards.
pub mod engine;
/// Grids: the config grammar of axes, cells, split protocols, fingerprints.
pub mod grid;
pub mod kinds;
pub mod record;
mod run;
/// The engine's results on disk: manifest, whole-unit appends, resume scan, merge.
pub mod store;
pub mod summary;
pub mod unit;

pub use config::{
    DataConfig, ExperimentConfig, MultistartConfig, SolverConfig, SplitConfig, SyntheticConfig,
};
pub use record::{MilpStats, RegressionMetrics, RiskScoreMetrics, SolveRecord};
pub use run::{run, run_until, RunOutcome};
pub use summary::{mean_std, median, solves_line, summary_table};
pub use unit::{EngineData, Formulation, SeededNlp};
