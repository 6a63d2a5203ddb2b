//! Criterion benchmark of building the OCT and OCT-H MILPs (`formulations/oct`), against
//! the number of training rows N: the build is one pass over rows x branch nodes x features,
//! so it should grow linearly in N and stay far below any useful solve time.
//!
//! Run with `cargo bench --bench oct_build` (about a minute, plus the build; `--profile dev`
//! reuses the test build). Data: N
//! evenly spaced rows of spambase (p = 57, 2 classes), min-max scaled, N in {500, 1000, 2000,
//! 4000}; depth 3 (7 branch nodes, 8 leaves), alpha = 0.01, min_leaf = 5. Before timing,
//! each size prints the MILP's columns, rows and nonzeros. The greedy MIP start is timed too
//! (`greedy_start`), as a run builds it before every solve.
//!
//! `olct_build` times building the OLCT MILP (`loss_tree`, `loss = "logloss"`, V0, depth 2:
//! the "under 1 s" target) on N = 10,000 rows x p = 100 features of synthetic data
//! (uniform features, labels from a random hyperplane; the build depends on the sizes only).
//!
//! Depends on the library's public API only.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use glassbox::data::{CsvOptions, MinMaxScaler, Table};
use glassbox::formulations::logloss_tangents::TangentSet;
use glassbox::formulations::loss_tree::{Loss, LossTreeConfig};
use glassbox::formulations::oct::{self, OctParams, SplitKind};
use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

fn spambase(rows: usize) -> (Arc<DMatrix<f64>>, Arc<Vec<usize>>) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/spambase.csv");
    let data = Table::from_csv(&path, &CsvOptions::default())
        .expect("spambase.csv")
        .encode_classification()
        .expect("classification data");
    // Evenly spaced rows: the file lists every spam row first, so its first rows are one class.
    let total = data.n_samples();
    let idx: Vec<usize> = (0..rows.min(total))
        .map(|k| k * total / rows.min(total))
        .collect();
    let part = data.rows(&idx);
    let x = MinMaxScaler::fit(&part.x).transform(&part.x);
    (Arc::new(x), Arc::new(part.y))
}

fn build(c: &mut Criterion) {
    let mut group = c.benchmark_group("oct_build");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for n in [500, 1000, 2000, 4000] {
        let (x, y) = spambase(n);
        for (name, kind) in [
            (oct::NAME, SplitKind::Axis),
            (
                oct::NAME_H,
                SplitKind::Oblique {
                    mu: oct::DEFAULT_MU,
                },
            ),
        ] {
            let params = OctParams {
                depth: 3,
                alpha: 0.01,
                min_leaf: 5,
                kind,
            };
            let problem = oct::build(name, x.clone(), y.clone(), 2, params.clone()).unwrap();
            eprintln!(
                "{name} D=3 N={n}: {} columns, {} rows, {} nonzeros",
                problem.milp.num_columns(),
                problem.milp.num_rows(),
                problem.milp.num_nonzeros()
            );
            group.bench_with_input(BenchmarkId::new(format!("{name}_D3"), n), &n, |b, _| {
                b.iter(|| {
                    black_box(oct::build(name, x.clone(), y.clone(), 2, params.clone()).unwrap())
                })
            });
            if name == oct::NAME {
                group.bench_with_input(BenchmarkId::new("greedy_start_D3", n), &n, |b, _| {
                    b.iter(|| black_box(oct::greedy_start(&problem)))
                });
            }
        }
    }
    group.finish();
}

/// N rows of p uniform features in [0, 1] and labels from a random hyperplane through the
/// middle, seeded.
fn synthetic(n: usize, p: usize) -> (Arc<DMatrix<f64>>, Vec<usize>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let x = DMatrix::from_fn(n, p, |_, _| rng.random::<f64>());
    let w: Vec<f64> = (0..p).map(|_| rng.random::<f64>() - 0.5).collect();
    let y = (0..n)
        .map(|i| usize::from((0..p).map(|j| w[j] * (x[(i, j)] - 0.5)).sum::<f64>() > 0.0))
        .collect();
    (Arc::new(x), y)
}

fn olct_build(c: &mut Criterion) {
    let mut group = c.benchmark_group("olct_build");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(10));
    let (n, p) = (10_000, 100);
    let (x, y) = synthetic(n, p);
    let config = LossTreeConfig {
        depth: 2,
        loss: Loss::Logloss,
        tangents: TangentSet::V0,
        lambda: 1.0,
        ..Default::default()
    };
    let problem = config.build(x.clone(), &y).unwrap();
    eprintln!(
        "olct D=2 V0 N={n} p={p}: {} columns, {} rows, {} nonzeros",
        problem.milp.num_columns(),
        problem.milp.num_rows(),
        problem.milp.num_nonzeros()
    );
    drop(problem);
    group.bench_function(BenchmarkId::new("olct_V0_D2_p100", n), |b| {
        b.iter(|| black_box(config.build(x.clone(), &y).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, build, olct_build);
criterion_main!(benches);
