//! Classification data drawn from a sparse oblique tree, for checking that a sparse tree
//! learner recovers the features that matter (issue 24's "sparse structure recovered";
//! `glassbox generate --kind sparse-tree`).
//!
//! The generator, seeded:
//! - `features` = p features, each U(0, 1), independent.
//! - `relevant` of them, a seeded random subset (sorted), are the only ones the tree uses.
//! - A complete tree of depth `depth`: each branch node t sends a row left when
//!   `w_t . x <= b_t`, w_t with independent N(0, 1) entries on the relevant features and 0
//!   elsewhere (every split is oblique on all relevant features), b_t the median of w_t . x
//!   over the drawn rows that reach t (so every node splits its rows in halves).
//! - Leaf l (0..2^D, left to right) has class `l mod classes`, so every class labels a leaf
//!   when 2^D >= classes.
//! - Label noise: each row's label is replaced, with probability `noise`, by one of the
//!   other classes drawn uniformly.
//!
//! The clean label is a function of x, so the Bayes classifier is the tree itself and the
//! Bayes accuracy is exactly `1 - noise` (0.95 at the default 5%), for a noise below
//! `(classes - 1) / classes` (a higher one is refused); [`SparseTreeData`] keeps
//! the clean labels so the accuracy of the Bayes rule on any rows can be measured too.
//! Defaults (`SparseTreeSpec::default`): 1000 rows, p = 20, 3 relevant, depth 2, 3 classes,
//! 5% noise.
//!
//! Depends on the core's error type, `model::write_atomically_with`, the module's shared
//! normal draw, `nalgebra`, `rand`.

use super::standard_normal;
use crate::{GlassboxError, Result};
use nalgebra::DMatrix;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::Write;
use std::path::Path;

/// Decimals written per feature value.
pub const DECIMALS: usize = 6;

/// What to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct SparseTreeSpec {
    /// Rows N.
    pub rows: usize,
    /// Features p.
    pub features: usize,
    /// Features the tree uses (at most p).
    pub relevant: usize,
    /// Depth D of the tree (1 to 6).
    pub depth: usize,
    /// Classes K (2 to 2^D).
    pub classes: usize,
    /// Probability that a label is replaced by another class.
    pub noise: f64,
    /// Seed.
    pub seed: u64,
}

impl Default for SparseTreeSpec {
    fn default() -> Self {
        SparseTreeSpec {
            rows: 1000,
            features: 20,
            relevant: 3,
            depth: 2,
            classes: 3,
            noise: 0.05,
            seed: 1,
        }
    }
}

impl SparseTreeSpec {
    /// Checks the numbers; the message names the one that is wrong.
    pub fn check(&self) -> std::result::Result<(), String> {
        if self.rows == 0 {
            return Err("rows must be at least 1".into());
        }
        if self.features == 0 {
            return Err("features must be at least 1".into());
        }
        if self.rows.checked_mul(self.features).is_none() {
            return Err(format!(
                "rows x features ({} x {}) is more values than this machine can address",
                self.rows, self.features
            ));
        }
        if self.relevant == 0 || self.relevant > self.features {
            return Err(format!(
                "relevant must be between 1 and features ({}), got {}",
                self.features, self.relevant
            ));
        }
        if !(1..=6).contains(&self.depth) {
            return Err(format!("depth must be between 1 and 6, got {}", self.depth));
        }
        if self.classes < 2 || self.classes > 1 << self.depth {
            return Err(format!(
                "classes must be between 2 and 2^depth ({}), got {}",
                1 << self.depth,
                self.classes
            ));
        }
        // At (K - 1) / K a row keeps its tree's class no more often than it takes any
        // other: beyond it the tree is no longer the Bayes rule.
        let most = (self.classes - 1) as f64 / self.classes as f64;
        if !(self.noise >= 0.0 && self.noise < most) {
            return Err(format!(
                "noise must be at least 0 and below (classes - 1) / classes = {most:.4} (where \
                 the tree stops being the Bayes rule), got {}",
                self.noise
            ));
        }
        Ok(())
    }

    /// The accuracy of the Bayes classifier (the generating tree): `1 - noise`.
    pub fn bayes_accuracy(&self) -> f64 {
        1.0 - self.noise
    }
}

/// Drawn data and the tree that generated it.
#[derive(Clone, Debug, PartialEq)]
pub struct SparseTreeData {
    /// Features (N x p).
    pub x: DMatrix<f64>,
    /// Labels, with noise.
    pub y: Vec<usize>,
    /// The tree's labels (without noise).
    pub clean: Vec<usize>,
    /// The relevant features (sorted indices).
    pub relevant: Vec<usize>,
    /// Per branch node (heap order), the weights w_t (p entries).
    pub weights: Vec<Vec<f64>>,
    /// Per branch node, the threshold b_t.
    pub thresholds: Vec<f64>,
}

impl SparseTreeData {
    /// The tree's class for the features `row` (p values).
    pub fn tree_class(&self, row: &[f64], classes: usize) -> usize {
        let branches = self.thresholds.len();
        let mut t = 0;
        while t < branches {
            let v: f64 = self.weights[t].iter().zip(row).map(|(w, x)| w * x).sum();
            t = if v <= self.thresholds[t] {
                2 * t + 1
            } else {
                2 * t + 2
            };
        }
        (t - branches) % classes
    }
}

/// Draws the data of `spec` (see the module comment).
pub fn sample(spec: &SparseTreeSpec) -> Result<SparseTreeData> {
    spec.check()
        .map_err(|m| GlassboxError::Config(format!("sparse-tree generator: {m}")))?;
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let (n, p) = (spec.rows, spec.features);
    let mut all: Vec<usize> = (0..p).collect();
    all.shuffle(&mut rng);
    let mut relevant = all[..spec.relevant].to_vec();
    relevant.sort_unstable();
    let branches = (1usize << spec.depth) - 1;
    let weights: Vec<Vec<f64>> = (0..branches)
        .map(|_| {
            let mut w = vec![0.0; p];
            for &j in &relevant {
                w[j] = standard_normal(&mut rng);
            }
            w
        })
        .collect();
    // Column by column, as DMatrix::from_fn draws them, into memory reserved up front: a
    // size the machine cannot hold is an error naming it, not an abort.
    let mut values: Vec<f64> = Vec::new();
    values.try_reserve_exact(n * p).map_err(|_| {
        GlassboxError::Config(format!(
            "sparse-tree generator: rows x features ({n} x {p}) needs {} MB of memory, more \
             than could be reserved; ask for fewer rows",
            n * p / 131_072
        ))
    })?;
    values.extend((0..n * p).map(|_| rng.random::<f64>()));
    let x = DMatrix::from_vec(n, p, values);
    // Thresholds level by level: the median of w_t . x over the rows at t.
    let mut node_of = vec![0usize; n];
    let mut thresholds = vec![0.0; branches];
    for t in 0..branches {
        let rows: Vec<usize> = (0..n).filter(|&i| node_of[i] == t).collect();
        let score = |i: usize| (0..p).map(|j| weights[t][j] * x[(i, j)]).sum::<f64>();
        let mut values: Vec<f64> = rows.iter().map(|&i| score(i)).collect();
        thresholds[t] = crate::metrics::median_in_place(&mut values).unwrap_or(0.0);
        for &i in &rows {
            node_of[i] = if score(i) <= thresholds[t] {
                2 * t + 1
            } else {
                2 * t + 2
            };
        }
    }
    let clean: Vec<usize> = node_of
        .iter()
        .map(|&v| (v - branches) % spec.classes)
        .collect();
    let y = clean
        .iter()
        .map(|&k| {
            if rng.random::<f64>() < spec.noise {
                // One of the other classes, uniformly.
                let other = rng.random_range(0..spec.classes - 1);
                if other >= k {
                    other + 1
                } else {
                    other
                }
            } else {
                k
            }
        })
        .collect();
    Ok(SparseTreeData {
        x,
        y,
        clean,
        relevant,
        weights,
        thresholds,
    })
}

/// Writes the data as CSV: header `x1,..,xp,target`, classes named `c0`, `c1`, ...
pub fn write_csv(data: &SparseTreeData, writer: &mut dyn Write) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(writer);
    let p = data.x.ncols();
    let header: Vec<String> = (1..=p).map(|j| format!("x{j}")).collect();
    writeln!(out, "{},target", header.join(","))?;
    for i in 0..data.x.nrows() {
        for j in 0..p {
            write!(out, "{:.DECIMALS$},", data.x[(i, j)])?;
        }
        writeln!(out, "c{}", data.y[i])?;
    }
    out.flush()
}

/// `glassbox generate --kind sparse-tree`: draws `spec` and writes it to `path` atomically;
/// an existing file is an error unless `force`. Returns the data (for the summary line).
pub fn generate_file(spec: &SparseTreeSpec, path: &Path, force: bool) -> Result<SparseTreeData> {
    let data = sample(spec)?;
    super::check_output(path, force)?;
    crate::model::write_atomically_with(path, |w| write_csv(&data, w))?;
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_uses_only_the_relevant_features_and_noise_is_as_specified() {
        let spec = SparseTreeSpec {
            rows: 20_000,
            ..SparseTreeSpec::default()
        };
        let data = sample(&spec).unwrap();
        assert_eq!(data.relevant.len(), 3);
        for w in &data.weights {
            for (j, v) in w.iter().enumerate() {
                assert_eq!(*v != 0.0, data.relevant.contains(&j), "feature {j}");
            }
        }
        // The clean labels are the tree's, row by row.
        for i in (0..spec.rows).step_by(97) {
            let row: Vec<f64> = data.x.row(i).iter().copied().collect();
            assert_eq!(data.tree_class(&row, spec.classes), data.clean[i]);
        }
        // Leaves 0..3 hold a quarter of the rows each: class 0 (leaves 0 and 3) half.
        let share = |k: usize| data.clean.iter().filter(|&&c| c == k).count() as f64 / 20_000.0;
        assert!((share(0) - 0.5).abs() < 0.01 && (share(1) - 0.25).abs() < 0.01);
        let flipped = data
            .y
            .iter()
            .zip(&data.clean)
            .filter(|(a, b)| a != b)
            .count();
        let rate = flipped as f64 / spec.rows as f64;
        assert!((rate - 0.05).abs() < 0.006, "noise rate {rate}");
        assert!((spec.bayes_accuracy() - 0.95).abs() < 1e-12);
        // Moving an irrelevant feature never changes the tree's class.
        let irrelevant = (0..spec.features)
            .find(|j| !data.relevant.contains(j))
            .unwrap();
        for i in 0..200 {
            let mut row: Vec<f64> = data.x.row(i).iter().copied().collect();
            let before = data.tree_class(&row, spec.classes);
            row[irrelevant] = 1.0 - row[irrelevant];
            assert_eq!(data.tree_class(&row, spec.classes), before);
        }
    }

    #[test]
    fn seeded_written_and_checked() {
        let spec = SparseTreeSpec {
            rows: 50,
            ..SparseTreeSpec::default()
        };
        assert_eq!(sample(&spec).unwrap(), sample(&spec).unwrap());
        let other = SparseTreeSpec {
            seed: 2,
            ..spec.clone()
        };
        assert_ne!(sample(&spec).unwrap().x, sample(&other).unwrap().x);
        let mut text = Vec::new();
        write_csv(&sample(&spec).unwrap(), &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 51);
        assert!(lines[0].starts_with("x1,") && lines[0].ends_with("x20,target"));
        assert!(lines[1].rsplit(',').next().unwrap().starts_with('c'));
        for (bad, word) in [
            (
                SparseTreeSpec {
                    relevant: 21,
                    ..spec.clone()
                },
                "relevant",
            ),
            (
                SparseTreeSpec {
                    classes: 5,
                    ..spec.clone()
                },
                "classes",
            ),
            (
                SparseTreeSpec {
                    noise: 1.0,
                    ..spec.clone()
                },
                "noise",
            ),
            // 3 classes: at 2/3 the tree's class is no likelier than another.
            (
                SparseTreeSpec {
                    noise: 2.0 / 3.0,
                    ..spec.clone()
                },
                "noise",
            ),
            (
                SparseTreeSpec {
                    rows: usize::MAX / 4,
                    ..spec.clone()
                },
                "rows x features",
            ),
            // A size that fits the address space but not memory: an error, not an abort.
            (
                SparseTreeSpec {
                    rows: usize::MAX / 64,
                    ..spec.clone()
                },
                "memory",
            ),
            (
                SparseTreeSpec {
                    depth: 0,
                    ..spec.clone()
                },
                "depth",
            ),
            (
                SparseTreeSpec {
                    rows: 0,
                    ..spec.clone()
                },
                "rows",
            ),
        ] {
            let e = sample(&bad).unwrap_err().to_string();
            assert!(e.contains(word), "{e}");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        generate_file(&spec, &path, false).unwrap();
        let e = generate_file(&spec, &path, false).unwrap_err().to_string();
        assert!(e.contains("--force"), "{e}");
    }
}
