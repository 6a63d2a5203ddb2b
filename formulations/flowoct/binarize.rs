//! FlowOCT's binary features: the tests `x_j >= v` its splits choose from, built from the
//! scaled training columns.
//!
//! FlowOCT (Aghaei, Gómez and Vayanos) branches on binary features: a point goes left when
//! the feature is 0 and right when it is 1. Every binary feature here is one test
//! `x_j >= v` on a scaled column j with `v` a training value of that column:
//!
//! - a column with two distinct training values (a 0/1 column, a dummy of glassbox's
//!   drop-first encoding, a two-level column) is one feature, `x_j >= 1` after min-max
//!   scaling, i.e. the column itself;
//! - a column with more values (numeric, or an ordinal coded as numbers) becomes the
//!   cumulative tests `x_j >= v` for cut values `v`: every distinct training value but the
//!   smallest when there are at most `thresholds` of them, otherwise `thresholds` values at
//!   evenly spaced quantiles of the training rows (the value at sorted position
//!   `floor(q N / (thresholds + 1))`, q = 1..thresholds, duplicates and the minimum dropped);
//! - a constant column gives no feature: its test sends every point the same way, which no
//!   optimal tree needs (it changes nothing and, with lambda > 0, costs a split).
//!
//! Depends on nothing in glassbox but nalgebra's matrix.

use nalgebra::DMatrix;

/// One binary feature: the test `x[column] >= value` on the scaled data (1 when it holds:
/// the point goes right).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BinaryFeature {
    /// The (encoded, scaled) column it tests.
    pub column: usize,
    /// The cut value, a training value of the column in scaled units.
    pub value: f64,
}

/// The binary features of scaled `x`, column by column, at most `thresholds` per column of
/// more than two distinct values (see the module comment).
pub fn binary_features(x: &DMatrix<f64>, thresholds: usize) -> Vec<BinaryFeature> {
    let mut features = Vec::new();
    for (column, values) in x.column_iter().enumerate() {
        let mut sorted: Vec<f64> = values.iter().copied().collect();
        sorted.sort_by(f64::total_cmp);
        let mut distinct = sorted.clone();
        distinct.dedup();
        let cuts: Vec<f64> = if distinct.len() <= thresholds + 1 {
            distinct.iter().skip(1).copied().collect()
        } else {
            let n = sorted.len();
            let mut cuts: Vec<f64> = (1..=thresholds)
                .map(|q| sorted[(q * n / (thresholds + 1)).min(n - 1)])
                .filter(|&v| v > distinct[0])
                .collect();
            cuts.dedup();
            cuts
        };
        features.extend(
            cuts.into_iter()
                .map(|value| BinaryFeature { column, value }),
        );
    }
    features
}

/// The 0/1 matrix (N x F) of `features` on the rows of scaled `x`.
pub fn feature_matrix(x: &DMatrix<f64>, features: &[BinaryFeature]) -> DMatrix<f64> {
    DMatrix::from_fn(x.nrows(), features.len(), |i, f| {
        let feature = features[f];
        if x[(i, feature.column)] >= feature.value {
            1.0
        } else {
            0.0
        }
    })
}

/// The threshold between the two sides of `feature` on the training values of its column:
/// the midpoint of `value` and the largest training value below it (a point goes right
/// when `x >= threshold`; the training points go the same way as with `x >= value`).
pub fn midpoint_threshold(x: &DMatrix<f64>, feature: BinaryFeature) -> f64 {
    let below = x
        .column(feature.column)
        .iter()
        .copied()
        .filter(|&v| v < feature.value)
        .fold(f64::NEG_INFINITY, f64::max);
    if below.is_finite() {
        0.5 * (below + feature.value)
    } else {
        feature.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_columns_stay_and_constant_columns_go() {
        // Columns: 0/1, constant, four values, two values not 0/1.
        let x = DMatrix::from_row_slice(
            4,
            4,
            &[
                0.0, 0.3, 0.0, 0.2, //
                1.0, 0.3, 0.25, 0.2, //
                1.0, 0.3, 0.5, 0.9, //
                0.0, 0.3, 1.0, 0.9,
            ],
        );
        let f = binary_features(&x, 10);
        let expect = [(0, 1.0), (2, 0.25), (2, 0.5), (2, 1.0), (3, 0.9)];
        assert_eq!(f.len(), expect.len());
        for (got, (column, value)) in f.iter().zip(expect) {
            assert_eq!((got.column, got.value), (column, value));
        }
        let m = feature_matrix(&x, &f);
        assert_eq!(m.column(0).as_slice(), &[0.0, 1.0, 1.0, 0.0]);
        assert_eq!(m.column(2).as_slice(), &[0.0, 0.0, 1.0, 1.0]);
        assert_eq!(midpoint_threshold(&x, f[2]), 0.375);
    }

    #[test]
    fn many_values_give_quantile_cuts() {
        let x = DMatrix::from_fn(100, 1, |i, _| i as f64 / 99.0);
        let f = binary_features(&x, 3);
        let values: Vec<f64> = f.iter().map(|f| f.value).collect();
        assert_eq!(values, vec![25.0 / 99.0, 50.0 / 99.0, 75.0 / 99.0]);
    }
}
