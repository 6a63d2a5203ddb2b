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
//! Depends on the library's public API only.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use glassbox::data::{CsvOptions, MinMaxScaler, Table};
use glassbox::formulations::oct::{self, OctParams, SplitKind};
use nalgebra::DMatrix;
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

criterion_group!(benches, build);
criterion_main!(benches);
