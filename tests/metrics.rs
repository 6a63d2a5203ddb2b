//! Hand-computed values for every metric.

use glassbox::metrics::{
    accuracy, balanced_accuracy, confusion_matrix, delta_global, delta_local, mean_squared_error,
    r_squared, SPARSITY_TOLERANCE,
};
use nalgebra::DMatrix;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn accuracy_counts_matches() {
    assert!(close(accuracy(&[0, 1, 2, 1], &[0, 2, 2, 1]), 0.75));
    assert!(close(accuracy(&[1, 1], &[1, 1]), 1.0));
    assert!(close(accuracy(&[1, 1], &[0, 0]), 0.0));
    assert!(accuracy(&[], &[]).is_nan());
}

#[test]
fn balanced_accuracy_is_mean_recall_over_present_classes() {
    // Class 0: 3 of 4 right (0.75); class 1: 1 of 2 right (0.5); class 2 absent from
    // y_true, so left out even though it is predicted: (0.75 + 0.5) / 2 = 0.625.
    let y_true = [0, 0, 0, 0, 1, 1];
    let y_pred = [0, 0, 0, 2, 1, 0];
    assert!(close(balanced_accuracy(&y_true, &y_pred, 3), 0.625));
    // Imbalanced: always predicting the majority gives 0.5 for two classes.
    assert!(close(
        balanced_accuracy(&[0, 0, 0, 1], &[0, 0, 0, 0], 2),
        0.5
    ));
    assert!(balanced_accuracy(&[], &[], 2).is_nan());
}

#[test]
fn confusion_matrix_rows_true_columns_predicted() {
    let c = confusion_matrix(&[0, 0, 1, 2, 2, 2], &[0, 1, 1, 2, 0, 2], 3);
    assert_eq!(c, vec![vec![1, 1, 0], vec![0, 1, 0], vec![1, 0, 2]]);
    // Grows for a label beyond n_classes instead of panicking.
    let c = confusion_matrix(&[0, 1], &[2, 1], 2);
    assert_eq!(c, vec![vec![0, 0, 1], vec![0, 1, 0], vec![0, 0, 0]]);
}

/// p = 4 features, |tau_B| = 3 branch nodes (one column each).
fn coefficients() -> DMatrix<f64> {
    DMatrix::from_row_slice(
        4,
        3,
        &[
            0.5, 0.0, 1e-8, // feature 1: zero at nodes 2 and 3 (1e-8 within tolerance)
            0.0, 0.0, 0.0, // feature 2: unused everywhere
            -2.0, 3e-7, 1.0, // feature 3: used at nodes 1 and 3
            1e-9, -1e-7, 0.0, // feature 4: unused everywhere (within tolerance)
        ],
    )
}

#[test]
fn delta_local_with_tolerance() {
    // Zeros per node: node 1 {2, 4} = 2, node 2 {1, 2, 3, 4} = 4, node 3 {1, 2, 4} = 3.
    // delta_L = (2/4 + 4/4 + 3/4) / 3 * 100 = 75.
    assert!(close(
        delta_local(&coefficients(), SPARSITY_TOLERANCE),
        75.0
    ));
    // Exact zeros only: node 1 {2} = 1, node 2 {1, 2} = 2, node 3 {2, 4} = 2 -> 5/12.
    assert!(close(delta_local(&coefficients(), 0.0), 500.0 / 12.0));
}

#[test]
fn delta_global_with_tolerance() {
    // Features 2 and 4 are zero at every node: 2 / 4 * 100 = 50.
    assert!(close(
        delta_global(&coefficients(), SPARSITY_TOLERANCE),
        50.0
    ));
    // Exact zeros only: only feature 2: 25.
    assert!(close(delta_global(&coefficients(), 0.0), 25.0));
}

#[test]
fn depth_one_local_equals_global() {
    let a = DMatrix::from_column_slice(5, 1, &[1.0, 0.0, 2e-7, -3.0, 0.0]);
    assert!(close(delta_local(&a, SPARSITY_TOLERANCE), 60.0));
    assert!(close(delta_global(&a, SPARSITY_TOLERANCE), 60.0));
}

#[test]
fn sparsity_degenerate_shapes() {
    assert_eq!(
        delta_local(&DMatrix::zeros(3, 0), SPARSITY_TOLERANCE),
        100.0
    );
    assert_eq!(
        delta_global(&DMatrix::zeros(3, 0), SPARSITY_TOLERANCE),
        100.0
    );
    assert_eq!(delta_local(&DMatrix::zeros(0, 2), SPARSITY_TOLERANCE), 0.0);
    assert_eq!(delta_global(&DMatrix::zeros(0, 2), SPARSITY_TOLERANCE), 0.0);
    // NaN never counts as zero.
    let a = DMatrix::from_column_slice(2, 1, &[f64::NAN, 0.0]);
    assert!(close(delta_local(&a, SPARSITY_TOLERANCE), 50.0));
}

#[test]
fn r_squared_and_mse() {
    let y = [3.0, -0.5, 2.0, 7.0];
    let p = [2.5, 0.0, 2.0, 8.0];
    // SS_res = 0.25 + 0.25 + 0 + 1 = 1.5; mean = 2.875;
    // SS_tot = 0.015625 + 11.390625 + 0.765625 + 17.015625 = 29.1875.
    assert!(close(mean_squared_error(&y, &p), 0.375));
    assert!(close(r_squared(&y, &p), 1.0 - 1.5 / 29.1875));
    // Predicting the mean gives 0; worse than the mean is negative.
    assert!(close(r_squared(&[1.0, 3.0], &[2.0, 2.0]), 0.0));
    assert!(close(r_squared(&[1.0, 3.0], &[3.0, 1.0]), -3.0));
    // Constant target: 1 if perfect, else 0.
    assert!(close(r_squared(&[2.0, 2.0], &[2.0, 2.0]), 1.0));
    assert!(close(r_squared(&[2.0, 2.0], &[2.0, 3.0]), 0.0));
    assert!(r_squared(&[], &[]).is_nan());
    assert!(mean_squared_error(&[], &[]).is_nan());
}

#[test]
#[should_panic(expected = "y_true has 2 values but y_pred has 1")]
fn mismatched_lengths_panic_with_a_message() {
    accuracy(&[0, 1], &[0]);
}

#[test]
fn median_in_place_of_odd_even_and_no_values() {
    use glassbox::metrics::median_in_place;
    assert_eq!(median_in_place(&mut [3.0, 1.0, 2.0]), Some(2.0));
    assert_eq!(median_in_place(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
    assert_eq!(median_in_place(&mut []), None);
}
