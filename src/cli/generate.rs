//! `glassbox generate`: the synthetic data sets as CSV. By default the regression data of
//! the S-ORRT paper's Section 4.4 (`crate::synthetic`); with `--kind sparse-tree`,
//! classification data drawn from a sparse oblique tree (`crate::synthetic::tree`), whose
//! relevant features and Bayes accuracy are printed.
//!
//! Depends on the core's synthetic generators only.

use anyhow::{bail, Result};
use std::path::Path;

/// The data sets `glassbox generate` draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum GenerateKind {
    /// The S-ORRT paper's Section 4.4 regression data.
    Sorrt,
    /// Classification data from a sparse oblique tree.
    SparseTree,
}

/// What to draw, and the sparse tree's shape (its options are refused for the other kind).
#[derive(clap::Args, Debug)]
pub(crate) struct KindArgs {
    /// What to draw: `sorrt` (the S-ORRT paper's Section 4.4) or `sparse-tree`.
    #[arg(long, value_enum, default_value_t = GenerateKind::Sorrt)]
    kind: GenerateKind,
    /// sparse-tree: features p (default 20).
    #[arg(long)]
    features: Option<usize>,
    /// sparse-tree: features the tree uses (default 3).
    #[arg(long)]
    relevant: Option<usize>,
    /// sparse-tree: depth of the tree (default 2).
    #[arg(long)]
    depth: Option<usize>,
    /// sparse-tree: classes (default 3).
    #[arg(long)]
    classes: Option<usize>,
    /// sparse-tree: probability that a label is replaced by another class (default 0.05).
    #[arg(long, allow_negative_numbers = true)]
    noise: Option<f64>,
}

/// Writes `rows` rows drawn with `seed` to `out` (replacing it only with `force`).
pub(crate) fn generate(
    args: &KindArgs,
    rows: usize,
    seed: u64,
    out: &Path,
    force: bool,
) -> Result<()> {
    if out == Path::new("-") {
        bail!("--out -: generate writes a file, whole or not at all; give the file's name");
    }
    remove_partial_file_on_signals(out)?;
    match args.kind {
        GenerateKind::Sorrt => {
            if args.features.is_some()
                || args.relevant.is_some()
                || args.depth.is_some()
                || args.classes.is_some()
                || args.noise.is_some()
            {
                bail!(
                    "--features, --relevant, --depth, --classes and --noise are options of \
                     --kind sparse-tree"
                );
            }
            crate::synthetic::generate_file(rows, seed, out, force)?;
            println!("wrote {rows} rows (seed {seed}) to {}", out.display());
        }
        GenerateKind::SparseTree => {
            use crate::synthetic::tree::{generate_file, SparseTreeSpec};
            let d = SparseTreeSpec::default();
            let spec = SparseTreeSpec {
                rows,
                features: args.features.unwrap_or(d.features),
                relevant: args.relevant.unwrap_or(d.relevant),
                depth: args.depth.unwrap_or(d.depth),
                classes: args.classes.unwrap_or(d.classes),
                noise: args.noise.unwrap_or(d.noise),
                seed,
            };
            let data = generate_file(&spec, out, force)?;
            let names: Vec<String> = data
                .relevant
                .iter()
                .map(|j| format!("x{}", j + 1))
                .collect();
            println!(
                "wrote {rows} rows (seed {seed}) to {}: relevant features {}, Bayes accuracy {}",
                out.display(),
                names.join(", "),
                spec.bayes_accuracy()
            );
        }
    }
    Ok(())
}

/// On SIGINT or SIGTERM, removes the partial temporary file that `out` is being written
/// through (a large file takes minutes), then exits as the signal would (130 / 143).
fn remove_partial_file_on_signals(out: &Path) -> Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let tmp = crate::model::temporary_path(out);
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            let _ = std::fs::remove_file(&tmp);
            std::process::exit(if signal == SIGINT { 130 } else { 143 });
        }
    });
    Ok(())
}
