//! The synthetic regression data of the S-ORRT paper's scalability study (Blanquero,
//! Carrizosa, Molero-Río, Romero Morales, "On Sparse Optimal Regression Trees", EJOR 2022,
//! Section 4.4; `shared/papers/002_fb39fdf1f4a8d520.txt`), behind `glassbox generate`.
//!
//! p = 25 features. X1 and X2 define two balanced groups, drawn from bivariate normals
//! N(eta_k, Sigma_k): eta_1 = (0.50, 0.75), eta_2 = (0.25, 0.50), Sigma_1 = Sigma_2 =
//! diag(0.005, 0.00375). X3..X25 are U(0, 1). The response is
//! Y = X3 + 2 X4 + 5 + eps in group 1 and Y = -X5 - 2 X6 - 15 + eps in group 2, with
//! eps ~ N(0, 0.5); X7..X25 have no effect on Y.
//!
//! Where the paper's text is ambiguous, our choices:
//! - "Y = -X5 - 2X6 - 1 5 + eps" (the text as extracted splits the constant): read as -15,
//!   the digits as they stand ([`GROUP_2_INTERCEPT`]).
//! - N(0, 0.5): the second parameter is a variance, as in N(eta_k, Sigma_k) where Sigma_k
//!   is a covariance matrix, so eps has standard deviation sqrt(0.5)
//!   ([`NOISE_VARIANCE`]).
//! - "Balanced groups": exactly ceil(N/2) rows in group 1 and floor(N/2) in group 2, in a
//!   seeded random order.
//! - Values are written with [`DECIMALS`] decimals (the file is the data set: a model read
//!   from it sees exactly these values).
//!
//! The rows are drawn one by one from one seeded ChaCha8 stream, so the same `rows` and
//! `seed` give the same data, and a file of 10^7 rows is written without holding it in
//! memory.
//!
//! Depends on the core's error type and `model::write_atomically_with`, the synthetic
//! module's `standard_normal`, `nalgebra`, `rand`.

use super::standard_normal;
use crate::{GlassboxError, Result};
use nalgebra::DMatrix;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::Write;
use std::path::Path;

/// Number of features, p.
pub const FEATURES: usize = 25;
/// Means of (X1, X2) in group 1 and in group 2.
pub const GROUP_MEANS: [[f64; 2]; 2] = [[0.50, 0.75], [0.25, 0.50]];
/// Variances of X1 and X2 (the diagonal of Sigma_1 = Sigma_2; the covariance is 0).
pub const X12_VARIANCES: [f64; 2] = [0.005, 0.00375];
/// The constant of group 1's response.
pub const GROUP_1_INTERCEPT: f64 = 5.0;
/// The constant of group 2's response (see the module comment).
pub const GROUP_2_INTERCEPT: f64 = -15.0;
/// Variance of the noise eps.
pub const NOISE_VARIANCE: f64 = 0.5;
/// Decimals written per value.
pub const DECIMALS: usize = 6;

/// One drawn row: the features X1..X25, the response and the group (1 or 2).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// X1..X25.
    pub x: [f64; FEATURES],
    /// Y.
    pub y: f64,
    /// 1 or 2.
    pub group: u8,
}

/// The generator: a seeded stream of rows with exactly balanced groups.
pub struct Generator {
    rng: ChaCha8Rng,
    groups: Vec<u8>,
    next: usize,
}

impl Generator {
    /// `rows` rows from `seed`; an error naming `--rows` when the machine cannot hold the
    /// groups' shuffle (one byte a row).
    pub fn new(rows: usize, seed: u64) -> std::result::Result<Self, String> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut groups: Vec<u8> = Vec::new();
        groups.try_reserve_exact(rows).map_err(|_| {
            format!(
                "--rows {rows}: the balanced groups' shuffle needs {} MB of memory, more than \
                 could be reserved; ask for fewer rows",
                rows / 1_048_576
            )
        })?;
        groups.extend((0..rows).map(|i| if i < rows.div_ceil(2) { 1 } else { 2 }));
        groups.shuffle(&mut rng);
        Ok(Generator {
            rng,
            groups,
            next: 0,
        })
    }

    /// The response of a row of `group` with features `x`, noise drawn from the stream.
    fn response(&mut self, group: u8, x: &[f64; FEATURES]) -> f64 {
        let eps = NOISE_VARIANCE.sqrt() * standard_normal(&mut self.rng);
        if group == 1 {
            x[2] + 2.0 * x[3] + GROUP_1_INTERCEPT + eps
        } else {
            -x[4] - 2.0 * x[5] + GROUP_2_INTERCEPT + eps
        }
    }
}

impl Iterator for Generator {
    type Item = Row;

    fn next(&mut self) -> Option<Row> {
        let group = *self.groups.get(self.next)?;
        self.next += 1;
        let mut x = [0.0; FEATURES];
        let mean = GROUP_MEANS[usize::from(group - 1)];
        for j in 0..2 {
            x[j] = mean[j] + X12_VARIANCES[j].sqrt() * standard_normal(&mut self.rng);
        }
        for v in x.iter_mut().skip(2) {
            *v = self.rng.random::<f64>();
        }
        let y = self.response(group, &x);
        Some(Row { x, y, group })
    }
}

/// The data in memory: features (N x 25), response, group of every row. For the sizes a
/// test or an example holds in memory (a size the machine cannot hold aborts).
pub fn sample(rows: usize, seed: u64) -> (DMatrix<f64>, Vec<f64>, Vec<u8>) {
    let mut x = DMatrix::zeros(rows, FEATURES);
    let mut y = Vec::with_capacity(rows);
    let mut groups = Vec::with_capacity(rows);
    let generator = Generator::new(rows, seed).unwrap_or_else(|m| panic!("{m}"));
    for (i, row) in generator.enumerate() {
        for j in 0..FEATURES {
            x[(i, j)] = row.x[j];
        }
        y.push(row.y);
        groups.push(row.group);
    }
    (x, y, groups)
}

/// Writes the rows of `generator` as CSV (header `x1,..,x25,target`, the response last) to
/// `writer`.
pub fn write_csv(generator: Generator, writer: &mut dyn Write) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::with_capacity(1 << 20, writer);
    let header: Vec<String> = (1..=FEATURES).map(|j| format!("x{j}")).collect();
    writeln!(out, "{},target", header.join(","))?;
    for row in generator {
        for v in &row.x {
            write!(out, "{v:.DECIMALS$},")?;
        }
        writeln!(out, "{:.DECIMALS$}", row.y)?;
    }
    out.flush()
}

/// `glassbox generate`: writes the data to `path` atomically (a temporary file in the same
/// folder, then a rename). An existing file is an error unless `force`.
pub fn generate_file(rows: usize, seed: u64, path: &Path, force: bool) -> Result<()> {
    if rows == 0 {
        return Err(GlassboxError::data(
            path.display().to_string(),
            "--rows must be at least 1".to_string(),
        ));
    }
    // Made before the output file, so that a size the machine cannot hold leaves no file.
    let generator = Generator::new(rows, seed)
        .map_err(|m| GlassboxError::data(path.display().to_string(), m))?;
    super::check_output(path, force)?;
    crate::model::write_atomically_with(path, |w| write_csv(generator, w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean(v: impl Iterator<Item = f64>) -> (f64, f64) {
        let v: Vec<f64> = v.collect();
        let m = v.iter().sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / (v.len() - 1) as f64;
        (m, var)
    }

    #[test]
    fn shape_groups_and_the_papers_distributions() {
        let n = 40_001;
        let (x, y, groups) = sample(n, 7);
        assert_eq!((x.nrows(), x.ncols(), y.len()), (n, FEATURES, n));
        let g1: Vec<usize> = (0..n).filter(|&i| groups[i] == 1).collect();
        let g2: Vec<usize> = (0..n).filter(|&i| groups[i] == 2).collect();
        assert_eq!((g1.len(), g2.len()), (20_001, 20_000));
        // Groups interleave (a seeded shuffle, not two halves).
        assert!(groups[..1000].contains(&1) && groups[..1000].contains(&2));
        for (k, rows) in [&g1, &g2].into_iter().enumerate() {
            for j in 0..2 {
                let (m, v) = mean(rows.iter().map(|&i| x[(i, j)]));
                assert!(
                    (m - GROUP_MEANS[k][j]).abs() < 0.003,
                    "group {k} X{j}: mean {m}"
                );
                assert!(
                    (v / X12_VARIANCES[j] - 1.0).abs() < 0.05,
                    "group {k} X{j}: var {v}"
                );
            }
        }
        for j in 2..FEATURES {
            let col: Vec<f64> = x.column(j).iter().copied().collect();
            assert!(col.iter().all(|v| (0.0..1.0).contains(v)));
            let (m, v) = mean(col.into_iter());
            assert!(
                (m - 0.5).abs() < 0.01 && (v - 1.0 / 12.0).abs() < 0.003,
                "X{j}"
            );
        }
        // The residual of the paper's response is the noise: mean 0, variance 0.5.
        let residual = (0..n).map(|i| {
            let r = |j: usize| x[(i, j)];
            if groups[i] == 1 {
                y[i] - (r(2) + 2.0 * r(3) + 5.0)
            } else {
                y[i] - (-r(4) - 2.0 * r(5) - 15.0)
            }
        });
        let (m, v) = mean(residual);
        assert!(
            m.abs() < 0.02 && (v / NOISE_VARIANCE - 1.0).abs() < 0.03,
            "eps: {m}, {v}"
        );
    }

    #[test]
    fn seeded_and_deterministic() {
        let a = sample(500, 3);
        assert_eq!(a, sample(500, 3));
        assert_ne!(a.1, sample(500, 4).1);
        let mut first = Vec::new();
        write_csv(Generator::new(500, 3).unwrap(), &mut first).unwrap();
        let mut second = Vec::new();
        write_csv(Generator::new(500, 3).unwrap(), &mut second).unwrap();
        assert_eq!(first, second);
        let text = String::from_utf8(first).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 501);
        assert!(lines[0].starts_with("x1,x2,") && lines[0].ends_with(",x25,target"));
        let cells: Vec<f64> = lines[1].split(',').map(|c| c.parse().unwrap()).collect();
        assert_eq!(cells.len(), FEATURES + 1);
        assert!((cells[FEATURES] - a.1[0]).abs() <= 0.5e-6 + 1e-12);
    }

    #[test]
    fn refuses_to_overwrite_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.csv");
        generate_file(10, 1, &path, false).unwrap();
        let before = std::fs::read(&path).unwrap();
        let e = generate_file(10, 2, &path, false).unwrap_err().to_string();
        assert!(e.contains("--force") && e.contains("s.csv"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
        generate_file(10, 2, &path, true).unwrap();
        assert_ne!(std::fs::read(&path).unwrap(), before);
        let e = generate_file(0, 1, &dir.path().join("t.csv"), false).unwrap_err();
        assert!(e.to_string().contains("--rows"), "{e}");
        // More rows than memory holds: an error naming --rows, and no file, temporary or not.
        let e = generate_file(usize::MAX / 2, 1, &dir.path().join("huge.csv"), false).unwrap_err();
        assert!(
            e.to_string().contains("--rows") && e.to_string().contains("memory"),
            "{e}"
        );
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "only s.csv: {left:?}");
        let e = generate_file(5, 1, &dir.path().join("no/such/dir.csv"), false).unwrap_err();
        assert!(e.to_string().contains("no/such"), "{e}");
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
