//! Property tests (proptest) of preprocessing and of saved models:
//!
//! - min-max scaling maps the training rows into [0, 1], a constant column to 0, and inverts;
//! - dummy encoding gives one 0/1 feature per non-reference level, at most one 1 per column,
//!   and does not depend on the order of the table's columns;
//! - stratified splits partition the rows (disjoint, complete, sorted), keep every class in
//!   the training part with round(f n_k) (at most n_k - 1) of it in the test part, and are
//!   a function of the seed; k-fold puts every row in exactly one test fold; random splits
//!   partition the rows;
//! - a saved model predicts, after loading, exactly (bit for bit) what it predicted before.

use glassbox::data::{self, ColumnData, MinMaxScaler, Table};
use glassbox::formulation::NlpClassifierFormulation;
use glassbox::formulations::cart::grow::{Criterion, Targets};
use glassbox::formulations::cart::{CartConfig, TreeModel, TreeTask};
use glassbox::formulations::l0tree::{L0TreeConfig, L0TreeModel};
use glassbox::formulations::logistic_l1::{LogisticL1Config, LogisticL1Model};
use glassbox::formulations::sorct::{SorctConfig, SorctModel};
use glassbox::model::Classifier;
use nalgebra::DMatrix;
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// A matrix of `rows` x `cols` finite values of mixed magnitudes.
fn matrix(rows: usize, cols: usize) -> impl Strategy<Value = DMatrix<f64>> {
    prop::collection::vec(
        prop_oneof![-1e6..1e6f64, -1.0..1.0f64, Just(0.0), Just(3.5)],
        rows * cols,
    )
    .prop_map(move |v| DMatrix::from_vec(rows, cols, v))
}

/// Class labels of `n` rows over `k` classes, each class at least twice.
fn labels(max_rows: usize, k: usize) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0..k, 2 * k..max_rows).prop_map(move |mut y| {
        for c in 0..k {
            y[2 * c] = c;
            y[2 * c + 1] = c;
        }
        y
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn scaling_maps_training_rows_into_the_unit_box_and_inverts(
        x in (1usize..20, 1usize..6).prop_flat_map(|(r, c)| matrix(r, c)),
    ) {
        let scaler = MinMaxScaler::fit(&x);
        let z = scaler.transform(&x);
        for j in 0..x.ncols() {
            let constant = x.column(j).iter().all(|v| *v == x[(0, j)]);
            for i in 0..x.nrows() {
                prop_assert!((0.0..=1.0).contains(&z[(i, j)]), "z = {}", z[(i, j)]);
                if constant {
                    prop_assert_eq!(z[(i, j)], 0.0);
                }
            }
        }
        let back = scaler.inverse_transform(&z);
        for (a, b) in back.iter().zip(x.iter()) {
            prop_assert!((a - b).abs() <= 1e-9 * (1.0 + b.abs()), "{a} vs {b}");
        }
    }

    #[test]
    fn dummy_encoding_is_one_hot_minus_the_reference_and_order_free(
        levels in prop::collection::vec(0usize..5, 1..30),
        numbers in prop::collection::vec(-100.0..100.0f64, 30),
    ) {
        let n = levels.len();
        let words: Vec<String> = levels.iter().map(|l| format!("L{l}")).collect();
        let table = Table {
            source: "prop".into(),
            feature_names: vec!["num".into(), "cat".into()],
            columns: vec![
                ColumnData::Numeric(numbers[..n].to_vec()),
                ColumnData::Categorical(words.clone()),
            ],
            target_name: "target".into(),
            target: vec!["a".into(); n],
            line_numbers: (2..n + 2).collect(),
            rows_in_memory: false,
            parts: Vec::new(),
        };
        let encoding = data::Encoding::fit(&table);
        let x = encoding.transform(&table).unwrap();
        let distinct: std::collections::BTreeSet<&String> = words.iter().collect();
        prop_assert_eq!(x.ncols(), 1 + distinct.len() - 1);
        let reference = distinct.iter().next().unwrap();
        for i in 0..n {
            prop_assert_eq!(x[(i, 0)], numbers[i]);
            let ones: f64 = (1..x.ncols()).map(|j| x[(i, j)]).sum();
            prop_assert!((1..x.ncols()).all(|j| x[(i, j)] == 0.0 || x[(i, j)] == 1.0));
            prop_assert_eq!(ones, if &words[i] == *reference { 0.0 } else { 1.0 });
        }
        // The same encoding of the table with its columns swapped.
        let mut swapped = table.clone();
        swapped.feature_names.reverse();
        swapped.columns.reverse();
        prop_assert_eq!(encoding.transform(&swapped).unwrap(), x);
        // Every level coded (data.dummies = "all"): one-hot, the reference included.
        let all = data::Encoding::fit_with(&table, data::DummyCoding::All)
            .transform(&table)
            .unwrap();
        prop_assert_eq!(all.ncols(), 1 + distinct.len());
        for i in 0..n {
            let ones: f64 = (1..all.ncols()).map(|j| all[(i, j)]).sum();
            prop_assert_eq!(ones, 1.0);
        }
    }

    #[test]
    fn stratified_split_partitions_keeps_proportions_and_follows_the_seed(
        y in (2usize..5).prop_flat_map(|k| labels(80, k)),
        fraction in 0.05..0.95f64,
        seed in any::<u64>(),
    ) {
        let Ok((train, test)) = data::stratified_split(&y, fraction, seed) else {
            // Only when no class rounds to a test sample.
            let mut counts = std::collections::BTreeMap::<usize, usize>::new();
            for &k in &y { *counts.entry(k).or_default() += 1; }
            prop_assert!(counts.values().all(|&n| (fraction * n as f64).round() == 0.0));
            return Ok(());
        };
        prop_assert!(train.windows(2).all(|w| w[0] < w[1]));
        prop_assert!(test.windows(2).all(|w| w[0] < w[1]));
        let mut all: Vec<usize> = train.iter().chain(&test).copied().collect();
        all.sort_unstable();
        prop_assert_eq!(all, (0..y.len()).collect::<Vec<_>>());
        let k = y.iter().max().unwrap() + 1;
        for c in 0..k {
            let n = y.iter().filter(|&&v| v == c).count();
            let in_test = test.iter().filter(|&&i| y[i] == c).count();
            let expected = ((fraction * n as f64).round() as usize).min(n - 1);
            prop_assert_eq!(in_test, expected, "class {}", c);
        }
        prop_assert_eq!(data::stratified_split(&y, fraction, seed).unwrap(), (train, test));
    }

    #[test]
    fn kfold_and_random_split_partition_the_rows(
        y in (2usize..4).prop_flat_map(|k| labels(60, k)),
        folds in 2usize..6,
        seed in any::<u64>(),
    ) {
        // Fewer rows than folds leaves a fold empty: an error naming the counts.
        if y.len() < folds {
            let err = data::stratified_kfold(&y, folds, seed).unwrap_err().to_string();
            prop_assert!(err.contains("folds"), "{}", err);
            return Ok(());
        }
        let cv = data::stratified_kfold(&y, folds, seed).unwrap();
        prop_assert_eq!(cv.len(), folds);
        let mut seen = vec![0; y.len()];
        for (train, test) in &cv {
            prop_assert_eq!(train.len() + test.len(), y.len());
            prop_assert!(train.iter().all(|i| !test.contains(i)));
            for &i in test { seen[i] += 1; }
        }
        prop_assert!(seen.iter().all(|&s| s == 1));
        prop_assert_eq!(data::stratified_kfold(&y, folds, seed).unwrap(), cv);

        let (train, test) = data::random_split(y.len(), 0.3, seed).unwrap();
        prop_assert!(!train.is_empty() && !test.is_empty());
        let mut all: Vec<usize> = train.iter().chain(&test).copied().collect();
        all.sort_unstable();
        prop_assert_eq!(all, (0..y.len()).collect::<Vec<_>>());
    }
}

/// Saves `model` with `save`, loads it with `load`, and checks the loaded model's class
/// probabilities equal the original's bit for bit on `x`.
fn assert_round_trip<M: Classifier>(
    model: &M,
    x: &DMatrix<f64>,
    save: impl Fn(&M, &std::path::Path) -> glassbox::Result<()>,
    load: impl Fn(&std::path::Path) -> glassbox::Result<M>,
) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.json");
    save(model, &path).unwrap();
    let back = load(&path).unwrap();
    let (a, b) = (model.predict_proba(x), back.predict_proba(x));
    for (u, v) in a.iter().zip(b.iter()) {
        prop_assert_eq!(u.to_bits(), v.to_bits(), "{} vs {}", u, v);
    }
    prop_assert_eq!(model.predict(x), back.predict(x));
    Ok(())
}

/// Raw (unscaled) features, their scaler, scaled features and labels of a random data set.
type Fixture = (
    DMatrix<f64>,
    MinMaxScaler,
    Arc<DMatrix<f64>>,
    Arc<Vec<usize>>,
);

fn fixture(x: DMatrix<f64>, y: Vec<usize>) -> Fixture {
    let scaler = MinMaxScaler::fit(&x);
    let z = Arc::new(scaler.transform(&x));
    (x, scaler, z, Arc::new(y))
}

/// Data sets of 6 to 30 rows, 1 to 4 features, 2 or 3 classes.
fn data_sets() -> impl Strategy<Value = (DMatrix<f64>, Vec<usize>, usize)> {
    (6usize..30, 1usize..5, 2usize..4).prop_flat_map(|(n, p, k)| {
        (
            matrix(n, p),
            prop::collection::vec(0..k, n).prop_map(move |mut y| {
                (0..k).for_each(|c| y[c] = c);
                y
            }),
            Just(k),
        )
    })
}

fn names(k: usize) -> Vec<String> {
    (0..k).map(|c| format!("class{c}")).collect()
}

/// An NLP formulation's model at a seeded random start (no solve: any point is a model).
fn nlp_model<F: NlpClassifierFormulation>(
    f: &F,
    (x, scaler, z, y): &Fixture,
    k: usize,
    seed: u64,
) -> F::Model {
    let problem = f.problem(z.clone(), y.clone(), k).unwrap();
    let point = f.random_start(&problem, &mut ChaCha8Rng::seed_from_u64(seed));
    let encoding = data::Encoding {
        columns: (0..x.ncols())
            .map(|j| data::ColumnEncoding::Numeric {
                name: format!("x{j}"),
            })
            .collect(),
        target: None,
    };
    f.model(&problem, &point, scaler.clone(), names(k), encoding)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn saved_models_predict_exactly_as_before(
        (x, y, k) in data_sets(),
        seed in any::<u64>(),
        probe in matrix(7, 4),
    ) {
        let probe = probe.columns(0, x.ncols()).into_owned() * 3.0;
        let fx = fixture(x, y);

        let sorct = SorctConfig { depth: 2, ..SorctConfig::default() };
        let m: SorctModel = nlp_model(&sorct, &fx, k, seed);
        assert_round_trip(&m, &probe, SorctModel::save, SorctModel::load)?;

        let l0 = L0TreeConfig { depth: 2, ..L0TreeConfig::default() };
        let m: L0TreeModel = nlp_model(&l0, &fx, k, seed);
        assert_round_trip(&m, &probe, L0TreeModel::save, L0TreeModel::load)?;

        let m: LogisticL1Model = nlp_model(&LogisticL1Config::default(), &fx, k, seed);
        assert_round_trip(&m, &probe, LogisticL1Model::save, LogisticL1Model::load)?;

        let cart = CartConfig::default();
        let (x, _, _, y) = &fx;
        let tree = cart.fit_tree(x, Targets::Classes { y, n_classes: k }, &vec![1.0; y.len()]);
        let m = TreeModel {
            learner: "cart".into(),
            criterion: Criterion::Gini,
            task: TreeTask::Classification { classes: names(k) },
            feature_names: (0..x.ncols()).map(|j| format!("x{j}")).collect(),
            encoding: data::Encoding {
                columns: (0..x.ncols())
                    .map(|j| data::ColumnEncoding::Numeric { name: format!("x{j}") })
                    .collect(),
                target: None,
            },
            tree,
        };
        assert_round_trip(&m, &probe, TreeModel::save, TreeModel::load)?;
    }
}
