//! Synthetic data sets, each drawn from one seeded ChaCha8 stream so that the same
//! arguments give the same data:
//! - [`regression`]: the regression data of the S-ORRT paper's scalability study, behind
//!   `glassbox generate` (its items are re-exported here: [`generate_file`], [`sample`],
//!   ...);
//! - [`oblique`]: a classification table labelled by two sparse oblique hyperplanes, for
//!   demos and tests ([`synthetic_oblique`], also found as
//!   [`crate::data::synthetic_oblique`]);
//! - [`tree`]: classification data drawn from a sparse oblique tree, for checking that a
//!   sparse tree learner recovers the relevant features (`glassbox generate --kind
//!   sparse-tree`).
//!
//! Depends on the core's error and data types, `model::write_atomically_with`, `nalgebra`,
//! `rand` and `rand_chacha`.

pub mod oblique;
pub mod regression;
pub mod tree;

pub use oblique::synthetic_oblique;
pub use regression::{
    generate_file, sample, write_csv, Generator, Row, DECIMALS, FEATURES, GROUP_1_INTERCEPT,
    GROUP_2_INTERCEPT, GROUP_MEANS, NOISE_VARIANCE, X12_VARIANCES,
};

use crate::{GlassboxError, Result};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// A standard normal draw (Box-Muller), shared by the generators.
fn standard_normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Whether `glassbox generate` may write its CSV to `path`: not a folder, and an existing
/// file only with `force`.
pub(crate) fn check_output(path: &std::path::Path, force: bool) -> Result<()> {
    let refuse = |message: &str| Err(GlassboxError::data(path.display().to_string(), message));
    if path.is_dir() {
        return refuse("is a folder: give the CSV file's path, e.g. --out DIR/data.csv");
    }
    if path.exists() && !force {
        return refuse("the file exists; pass --force to replace it");
    }
    Ok(())
}
