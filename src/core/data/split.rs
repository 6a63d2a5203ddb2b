//! Seeded splits of the samples: a stratified train/test split ([`stratified_split`], with
//! errors naming the data's classes: [`stratified_split_named`]), stratified k-fold
//! cross-validation ([`stratified_kfold`]), and a random train/test split for regression
//! ([`random_split`]). The same arguments always give the same split.
//!
//! Depends on the core's error type, `rand` and `rand_chacha`.

use crate::{GlassboxError, Result};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The sample indices of each class present in `y`, in class order.
fn indices_by_class(y: &[usize]) -> Vec<(usize, Vec<usize>)> {
    let mut by_class: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for (i, &k) in y.iter().enumerate() {
        by_class.entry(k).or_default().push(i);
    }
    by_class.into_iter().collect()
}

/// A seeded stratified train/test split of the samples with labels `y`. Returns
/// `(train, test)`, each sorted.
///
/// For every class with `n_k` samples, its shuffled indices put `round(test_fraction * n_k)`
/// in the test set, but always keep at least one in the training set. `test_fraction` must
/// be in (0, 1); every class needs at least two samples; the test set must not come out
/// empty. The same `y`, fraction and seed give the same split.
pub fn stratified_split(
    y: &[usize],
    test_fraction: f64,
    seed: u64,
) -> Result<(Vec<usize>, Vec<usize>)> {
    split_impl(y, test_fraction, seed, "the class labels", &|k| {
        format!("class {k}")
    })
}

/// [`stratified_split`] with errors that name the data's `source` and the class labels
/// `classes` (indexed by the values of `y`) instead of class indices.
pub fn stratified_split_named(
    y: &[usize],
    test_fraction: f64,
    seed: u64,
    source: &str,
    classes: &[String],
) -> Result<(Vec<usize>, Vec<usize>)> {
    split_impl(y, test_fraction, seed, source, &|k| match classes.get(k) {
        Some(c) => format!("class '{c}'"),
        None => format!("class {k}"),
    })
}

fn split_impl(
    y: &[usize],
    test_fraction: f64,
    seed: u64,
    source: &str,
    class_label: &dyn Fn(usize) -> String,
) -> Result<(Vec<usize>, Vec<usize>)> {
    if !(test_fraction > 0.0 && test_fraction < 1.0) {
        return Err(GlassboxError::Config(format!(
            "the test fraction must be strictly between 0 and 1, got {test_fraction}"
        )));
    }
    if y.is_empty() {
        return Err(GlassboxError::data(source, "there are no samples to split"));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut train = Vec::with_capacity(y.len());
    let mut test = Vec::new();
    for (k, mut idx) in indices_by_class(y) {
        if idx.len() < 2 {
            return Err(GlassboxError::data(
                source,
                format!(
                    "{} has only {} sample(s), so it cannot appear in both the training and \
                     the test set; a stratified split needs at least 2 samples per class \
                     (add samples or merge the class)",
                    class_label(k),
                    idx.len()
                ),
            ));
        }
        idx.shuffle(&mut rng);
        let n_test = ((test_fraction * idx.len() as f64).round() as usize).min(idx.len() - 1);
        test.extend_from_slice(&idx[..n_test]);
        train.extend_from_slice(&idx[n_test..]);
    }
    if test.is_empty() {
        return Err(GlassboxError::Config(format!(
            "a test fraction of {test_fraction} of {} sample(s) rounds to no test sample in \
             any class, so the test set would be empty; raise the test fraction",
            y.len()
        )));
    }
    train.sort_unstable();
    test.sort_unstable();
    Ok((train, test))
}

/// Seeded stratified k-fold cross-validation: returns `k` pairs `(train, test)`, each
/// sorted; every sample is in exactly one test fold.
///
/// Each class's indices are shuffled and dealt round-robin over the folds, the deal
/// continuing from one class to the next, so fold sizes differ by at most one and every
/// fold keeps the class proportions as far as the counts allow. `k` must be at least 2 and
/// at most the number of samples.
pub fn stratified_kfold(y: &[usize], k: usize, seed: u64) -> Result<Vec<(Vec<usize>, Vec<usize>)>> {
    kfold_impl(y, k, seed, "the class labels")
}

pub(super) fn kfold_impl(
    y: &[usize],
    k: usize,
    seed: u64,
    source: &str,
) -> Result<Vec<(Vec<usize>, Vec<usize>)>> {
    if k < 2 {
        return Err(GlassboxError::Config(format!(
            "k-fold cross-validation needs at least 2 folds, got {k}"
        )));
    }
    if k > y.len() {
        return Err(GlassboxError::Config(format!(
            "{k} folds were asked for but {source} has only {} sample(s); use at most {} \
             folds",
            y.len(),
            y.len()
        )));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut fold_of = vec![0usize; y.len()];
    let mut next = 0usize;
    for (_, mut idx) in indices_by_class(y) {
        idx.shuffle(&mut rng);
        for i in idx {
            fold_of[i] = next % k;
            next += 1;
        }
    }
    Ok((0..k)
        .map(|f| {
            let (test, train): (Vec<usize>, Vec<usize>) =
                (0..y.len()).partition(|&i| fold_of[i] == f);
            (train, test)
        })
        .collect())
}

/// A seeded random train/test split of `n` samples (for regression, where stratification
/// does not apply). Returns `(train, test)`, each sorted: the shuffled indices put
/// `round(test_fraction * n)` samples in the test set, at least one in each part. `n` must be
/// at least 2 and `test_fraction` in (0, 1). The same arguments give the same split.
pub fn random_split(n: usize, test_fraction: f64, seed: u64) -> Result<(Vec<usize>, Vec<usize>)> {
    if !(test_fraction > 0.0 && test_fraction < 1.0) {
        return Err(GlassboxError::Config(format!(
            "the test fraction must be strictly between 0 and 1, got {test_fraction}"
        )));
    }
    if n < 2 {
        return Err(GlassboxError::Config(format!(
            "a train/test split needs at least 2 samples, got {n}"
        )));
    }
    let mut idx: Vec<usize> = (0..n).collect();
    idx.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    let n_test = ((test_fraction * n as f64).round() as usize).clamp(1, n - 1);
    let mut test = idx[..n_test].to_vec();
    let mut train = idx[n_test..].to_vec();
    train.sort_unstable();
    test.sort_unstable();
    Ok((train, test))
}
