//! Metrics: classification accuracy (plain and balanced, as scikit-learn names them), the
//! confusion matrix, the ROC AUC, regression R² and mean squared error, and the sparsity measures of the
//! S-ORCT paper (delta_L, delta_G), and the median of a sample.
//!
//! Depends on nalgebra only; nothing else in glassbox.
//!
//! Conventions: the label slices of one call must have the same length (a mismatch is a
//! programming error and panics); an empty input gives NaN where the metric is a mean over
//! samples. Percentages are in [0, 100].

use nalgebra::DMatrix;

fn check_lengths(what: &str, a: usize, b: usize) {
    assert_eq!(
        a, b,
        "{what}: y_true has {a} values but y_pred has {b}; they must have one value per sample"
    );
}

/// The median of `values`, sorting them in place (the mean of the two middle values for an
/// even count); `None` for no values.
pub fn median_in_place(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let m = values.len() / 2;
    Some(if values.len() % 2 == 1 {
        values[m]
    } else {
        0.5 * (values[m - 1] + values[m])
    })
}

/// The fraction of samples whose predicted class equals the true class, in [0, 1].
/// NaN for no samples.
///
/// # Panics
/// If `y_true` and `y_pred` differ in length.
pub fn accuracy(y_true: &[usize], y_pred: &[usize]) -> f64 {
    check_lengths("accuracy", y_true.len(), y_pred.len());
    if y_true.is_empty() {
        return f64::NAN;
    }
    let correct = y_true.iter().zip(y_pred).filter(|(t, p)| t == p).count();
    correct as f64 / y_true.len() as f64
}

/// Balanced accuracy, as scikit-learn defines it: the mean, over the classes present in
/// `y_true`, of the recall `|{i : y_i = k, ŷ_i = k}| / |{i : y_i = k}|`, in [0, 1]. Classes
/// absent from `y_true` are left out of the mean (a prediction of such a class is simply
/// wrong). NaN for no samples.
///
/// `n_classes` sizes the count buffers; labels beyond it are counted too.
///
/// # Panics
/// If `y_true` and `y_pred` differ in length.
pub fn balanced_accuracy(y_true: &[usize], y_pred: &[usize], n_classes: usize) -> f64 {
    check_lengths("balanced_accuracy", y_true.len(), y_pred.len());
    if y_true.is_empty() {
        return f64::NAN;
    }
    let size = y_true
        .iter()
        .map(|&k| k + 1)
        .max()
        .unwrap_or(0)
        .max(n_classes);
    let mut support = vec![0usize; size];
    let mut hits = vec![0usize; size];
    for (&t, &p) in y_true.iter().zip(y_pred) {
        support[t] += 1;
        if t == p {
            hits[t] += 1;
        }
    }
    let recalls: Vec<f64> = support
        .iter()
        .zip(&hits)
        .filter(|(s, _)| **s > 0)
        .map(|(s, h)| *h as f64 / *s as f64)
        .collect();
    recalls.iter().sum::<f64>() / recalls.len() as f64
}

/// The confusion matrix `c[t][p]`: how many samples of true class `t` were predicted as
/// class `p` (rows true, columns predicted, as in scikit-learn).
///
/// The matrix is `n x n` with `n = n_classes`, grown if a label is `>= n_classes`.
///
/// # Panics
/// If `y_true` and `y_pred` differ in length.
pub fn confusion_matrix(y_true: &[usize], y_pred: &[usize], n_classes: usize) -> Vec<Vec<usize>> {
    check_lengths("confusion_matrix", y_true.len(), y_pred.len());
    let size = y_true
        .iter()
        .chain(y_pred)
        .map(|&k| k + 1)
        .max()
        .unwrap_or(0)
        .max(n_classes);
    let mut c = vec![vec![0usize; size]; size];
    for (&t, &p) in y_true.iter().zip(y_pred) {
        c[t][p] += 1;
    }
    c
}

/// The tolerance below which a hyperplane coefficient counts as zero: `|a_jt| <= 1e-6`.
///
/// IPOPT's interior point method keeps iterates strictly inside the bounds, so the
/// variables that the sparsity penalty drives to 0 end at tiny nonzeros (around 1e-8)
/// rather than exact zeros; counting exact zeros would report no sparsity at all.
pub const SPARSITY_TOLERANCE: f64 = 1e-6;

/// Whether a coefficient counts as zero (NaN never does).
fn is_zero(value: f64, tol: f64) -> bool {
    value.abs() <= tol
}

/// Local sparsity delta_L, in percent: the average percentage of predictor variables not
/// used per branch node. In the S-ORCT paper (Section 4.2):
///
/// > delta_L = (1/|tau_B|) sum_{t in tau_B} |{a_jt = 0, j = 1, ..., p}| / p × 100.
///
/// `a` is the `p x |tau_B|` matrix of hyperplane coefficients, one column per branch node;
/// `|a_jt| <= tol` counts as zero (use [`SPARSITY_TOLERANCE`]).
///
/// Conventions for degenerate trees: with no features (p = 0) the result is 0; with no
/// branch nodes (a single leaf) it is 100, since no variable is used.
pub fn delta_local(a: &DMatrix<f64>, tol: f64) -> f64 {
    let (p, n_branch) = a.shape();
    if p == 0 {
        return 0.0;
    }
    if n_branch == 0 {
        return 100.0;
    }
    let zeros = a.iter().filter(|&&v| is_zero(v, tol)).count();
    zeros as f64 / (p * n_branch) as f64 * 100.0
}

/// Global sparsity delta_G, in percent: the percentage of predictor variables not used at
/// any of the branch nodes. In the S-ORCT paper (Section 4.2):
///
/// > delta_G = |{a_j. = 0, j = 1, ..., p}| / p × 100,
///
/// where `a_j.` is row `j` of `a` (feature `j`'s coefficients across all branch nodes).
/// `a` is `p x |tau_B|`; `|a_jt| <= tol` counts as zero (use [`SPARSITY_TOLERANCE`]).
///
/// Conventions: with p = 0 the result is 0; with no branch nodes it is 100.
pub fn delta_global(a: &DMatrix<f64>, tol: f64) -> f64 {
    let p = a.nrows();
    if p == 0 {
        return 0.0;
    }
    let unused = a
        .row_iter()
        .filter(|row| row.iter().all(|&v| is_zero(v, tol)))
        .count();
    unused as f64 / p as f64 * 100.0
}

/// The coefficient of determination, `R² = 1 - SS_res / SS_tot` with
/// `SS_res = sum_i (y_i - ŷ_i)²` and `SS_tot = sum_i (y_i - mean(y))²`. It can be negative
/// for a model worse than predicting the mean. When `y_true` is constant (SS_tot = 0) it is
/// 1 for a perfect prediction and 0 otherwise (scikit-learn's convention). NaN for no
/// samples.
///
/// # Panics
/// If `y_true` and `y_pred` differ in length.
pub fn r_squared(y_true: &[f64], y_pred: &[f64]) -> f64 {
    check_lengths("r_squared", y_true.len(), y_pred.len());
    if y_true.is_empty() {
        return f64::NAN;
    }
    let mean = y_true.iter().sum::<f64>() / y_true.len() as f64;
    let ss_res: f64 = y_true
        .iter()
        .zip(y_pred)
        .map(|(t, p)| (t - p).powi(2))
        .sum();
    let ss_tot: f64 = y_true.iter().map(|t| (t - mean).powi(2)).sum();
    if ss_tot == 0.0 {
        return if ss_res == 0.0 { 1.0 } else { 0.0 };
    }
    1.0 - ss_res / ss_tot
}

/// The mean squared error `(1/N) sum_i (y_i - ŷ_i)²`. NaN for no samples.
///
/// # Panics
/// If `y_true` and `y_pred` differ in length.
pub fn mean_squared_error(y_true: &[f64], y_pred: &[f64]) -> f64 {
    check_lengths("mean_squared_error", y_true.len(), y_pred.len());
    if y_true.is_empty() {
        return f64::NAN;
    }
    y_true
        .iter()
        .zip(y_pred)
        .map(|(t, p)| (t - p).powi(2))
        .sum::<f64>()
        / y_true.len() as f64
}

/// The area under the ROC curve of binary labels `positive` scored by `scores` (higher =
/// more likely positive), as scikit-learn's `roc_auc_score`: the probability that a random
/// positive scores above a random negative, ties counting one half (the Mann-Whitney
/// statistic, from average ranks). NaN when either class is absent.
///
/// # Panics
/// If `positive` and `scores` differ in length.
pub fn roc_auc(positive: &[bool], scores: &[f64]) -> f64 {
    assert_eq!(
        positive.len(),
        scores.len(),
        "roc_auc: {} labels but {} scores; they must have one value per sample",
        positive.len(),
        scores.len()
    );
    let n_pos = positive.iter().filter(|&&p| p).count();
    let n_neg = positive.len() - n_pos;
    if n_pos == 0 || n_neg == 0 {
        return f64::NAN;
    }
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    // Sum of the (1-based, tie-averaged) ranks of the positives.
    let mut rank_sum = 0.0;
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && scores[order[end]] == scores[order[start]] {
            end += 1;
        }
        let average_rank = (start + 1 + end) as f64 / 2.0;
        rank_sum +=
            average_rank * order[start..end].iter().filter(|&&i| positive[i]).count() as f64;
        start = end;
    }
    let (p, n) = (n_pos as f64, n_neg as f64);
    (rank_sum - p * (p + 1.0) / 2.0) / (p * n)
}
