//! A deterministic synthetic classification table for demos and tests
//! ([`synthetic_oblique`]): points labelled by two random sparse oblique hyperplanes, so that
//! a depth-2 oblique tree separates them.
//!
//! Depends on the core's data types ([`crate::data::Table`], [`crate::data::ColumnData`]),
//! `rand` and `rand_chacha`.

use super::standard_normal;
use crate::data::{ColumnData, Table};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cmp::Ordering;

/// The `q`-quantile of `values` (nearest rank on a sorted copy).
fn quantile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
    let pos = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[pos.min(sorted.len() - 1)]
}

/// A deterministic synthetic classification table for demos and tests.
///
/// `rows` points uniform in `[0, 10]^features`, labelled by which side of two random
/// oblique hyperplanes `h1: a1·x = b1` and `h2: a2·x = b2` they fall on, so a depth-2
/// oblique tree (root `h1`, both children `h2`) separates them. Each hyperplane uses up to
/// three randomly chosen features (the others are noise, so sparse trees can do as well as
/// dense ones); the thresholds are quantiles of the projections, chosen so that the
/// classes are roughly balanced. Leaves (left = `a·x <= b`) map to classes as:
///
/// - 2 classes: class 0 iff left of both hyperplanes, class 1 otherwise;
/// - 3 classes: left of `h1` split by `h2` into classes 0 and 1, right of `h1` is class 2;
/// - 4 classes: one class per leaf.
///
/// About 3% of the labels are then flipped to another class at random, and if some class
/// is still absent (only possible for tiny `rows`) a sample is relabelled so that every
/// class appears whenever `rows >= classes`. Class names are `"c0"`.. `"c{K-1}"`, feature
/// names `"x1"`.. `"xp"`, the source is `"synthetic:oblique"`.
///
/// `classes` is clamped to 2..=4 and `features` to at least 1. The same arguments give the
/// same table.
pub fn synthetic_oblique(rows: usize, features: usize, classes: usize, seed: u64) -> Table {
    let classes = classes.clamp(2, 4);
    let p = features.max(1);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);

    let x: Vec<Vec<f64>> = (0..rows)
        .map(|_| (0..p).map(|_| 10.0 * rng.random::<f64>()).collect())
        .collect();

    let hyperplane = |rng: &mut ChaCha8Rng| -> Vec<f64> {
        let mut chosen: Vec<usize> = (0..p).collect();
        chosen.shuffle(rng);
        let mut a = vec![0.0; p];
        for &j in chosen.iter().take(p.min(3)) {
            let mut v = standard_normal(rng);
            if v.abs() < 0.3 {
                v = 0.3f64.copysign(v);
            }
            a[j] = v;
        }
        a
    };
    let a1 = hyperplane(&mut rng);
    let a2 = hyperplane(&mut rng);
    let project = |a: &[f64]| -> Vec<f64> {
        x.iter()
            .map(|xi| xi.iter().zip(a).map(|(u, v)| u * v).sum())
            .collect()
    };
    let (z1, z2) = (project(&a1), project(&a2));
    let (q1, q2) = match classes {
        2 => (
            std::f64::consts::FRAC_1_SQRT_2,
            std::f64::consts::FRAC_1_SQRT_2,
        ),
        3 => (2.0 / 3.0, 0.5),
        _ => (0.5, 0.5),
    };
    let (b1, b2) = (quantile(&z1, q1), quantile(&z2, q2));

    let mut labels: Vec<usize> = (0..rows)
        .map(|i| {
            let right1 = z1[i] > b1;
            let right2 = z2[i] > b2;
            match (classes, right1, right2) {
                (2, false, false) => 0,
                (2, _, _) => 1,
                (3, false, r2) => usize::from(r2),
                (3, true, _) => 2,
                (_, r1, r2) => 2 * usize::from(r1) + usize::from(r2),
            }
        })
        .collect();

    for label in labels.iter_mut() {
        if rng.random::<f64>() < 0.03 {
            let shift = 1 + rng.random_range(0..classes - 1);
            *label = (*label + shift) % classes;
        }
    }

    if rows >= classes {
        let mut counts = vec![0usize; classes];
        for &l in &labels {
            counts[l] += 1;
        }
        for c in 0..classes {
            if counts[c] == 0 {
                if let Some(i) = (0..rows).find(|&i| counts[labels[i]] > 1) {
                    counts[labels[i]] -= 1;
                    labels[i] = c;
                    counts[c] += 1;
                }
            }
        }
    }

    let columns = (0..p)
        .map(|j| ColumnData::Numeric(x.iter().map(|xi| xi[j]).collect()))
        .collect();
    Table {
        source: "synthetic:oblique".to_string(),
        feature_names: (1..=p).map(|j| format!("x{j}")).collect(),
        columns,
        target_name: "target".to_string(),
        target: labels.iter().map(|l| format!("c{l}")).collect(),
        line_numbers: (0..rows).map(|i| i + 2).collect(),
        rows_in_memory: false,
        parts: Vec::new(),
    }
}
