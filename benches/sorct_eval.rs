//! Criterion benchmarks of the S-ORCT NLP's evaluations on real data, and of whole IPOPT
//! solves.
//!
//! Run with `cargo bench --bench sorct_eval` (about two to three minutes); filter with e.g.
//! `cargo bench --bench sorct_eval -- thyroid`. Criterion writes its estimates (mean,
//! median, ...) under `target/criterion/<group>/<benchmark>/new/estimates.json`;
//! `benches/README.md` shows how to print the medians and lists measured numbers.
//!
//! # What is measured
//!
//! Group `sorct_eval/<data>_D2` (lambda_L = lambda_G = 0, gamma = 512, the default
//! formulation), one benchmark per evaluation IPOPT asks for:
//! - `objective`, `gradient`, `objective+gradient` (the pair IPOPT requests at every new
//!   trial point; the second call reuses the first one's forward pass, as in a solve);
//! - `hessian_lagrangian` and `jacobian_rho`: on the same data with the per-class
//!   performance constraints (8) switched on (rho = 0.1 for every class), so that the
//!   Jacobian has its nonlinear rows and the Lagrangian's Hessian weights them
//!   (obj_factor 1, multiplier 0.5 on each rho row, 0 on the linear rows).
//!
//! Data: iris, thyroid and spambase from `../shared/datasets`, each on the training part of
//! the experiment protocol's first split (stratified, test fraction 0.25, seed 1), min-max
//! scaled with the scaler fitted on that training part: exactly the problem a solve sees.
//!
//! # The problem's cache
//!
//! `SorctProblem` caches the forward pass (probabilities of every row at every node) of the
//! last point it was evaluated at, keyed by the whole vector x. Evaluating twice at one x
//! would time a cache hit. Every benchmark therefore alternates between two different
//! points (two data-aware random starts, seeds 1 and 2) from one iteration to the next, so
//! each iteration pays the full forward pass, as IPOPT's first call at a new trial point
//! does.
//!
//! Group `sorct_ipopt/thyroid_D2`: one whole IPOPT solve from a fixed data-aware random
//! start (seed 1) on thyroid D=2, lambda = 0, default options (tol 1e-8), once with the
//! exact Hessian (`exact_hessian`) and once with `raw.hessian_approximation =
//! "limited-memory"` (`limited_memory`). 10 samples of one solve each (flat sampling).
//! Before timing, each variant prints its status, iterations and objective once: the two
//! need not stop at the same point.
//!
//! Depends on the library's public API only.

use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, SamplingMode};
use glassbox::data::{stratified_split, CsvOptions, MinMaxScaler, Table};
use glassbox::formulations::sorct::{
    starts::{random_start, Initialization},
    SorctConfig, SorctProblem,
};
use glassbox::{registry, NlpProblem, RawOptionValue, SolveOptions, WarmStart};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Test fraction and seed of the split whose training part the benchmarks use.
const TEST_FRACTION: f64 = 0.25;
const SPLIT_SEED: u64 = 1;

/// The data sets of the evaluation benchmarks (file stem in `../shared/datasets`).
const DATASETS: &[&str] = &["iris", "thyroid", "spambase"];

/// Scaled training features, labels and number of classes of `stem`'s first split.
struct Training {
    x: Arc<nalgebra::DMatrix<f64>>,
    y: Arc<Vec<usize>>,
    classes: usize,
}

fn training(stem: &str) -> Training {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/datasets")
        .join(format!("{stem}.csv"));
    let table = Table::from_csv(&path, &CsvOptions::default())
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let data = table
        .encode_classification()
        .unwrap_or_else(|e| panic!("{stem}: {e}"));
    let (train, _test) = stratified_split(&data.y, TEST_FRACTION, SPLIT_SEED)
        .unwrap_or_else(|e| panic!("{stem}: {e}"));
    let part = data.rows(&train);
    let scaler = MinMaxScaler::fit(&part.x);
    Training {
        x: Arc::new(scaler.transform(&part.x)),
        y: Arc::new(part.y.clone()),
        classes: data.n_classes(),
    }
}

fn problem(data: &Training, config: &SorctConfig) -> SorctProblem {
    config
        .problem(data.x.clone(), data.y.clone(), data.classes)
        .unwrap_or_else(|e| panic!("cannot build the S-ORCT problem: {e}"))
}

/// A data-aware random start (the experiment runner's default kind of start).
fn start(problem: &SorctProblem, seed: u64) -> Vec<f64> {
    random_start(
        problem,
        Initialization::Data,
        &mut ChaCha8Rng::seed_from_u64(seed),
    )
}

/// Two different points to alternate between, so that no evaluation hits the cache.
struct Alternating {
    points: [Vec<f64>; 2],
    next: usize,
}

impl Alternating {
    fn new(problem: &SorctProblem) -> Self {
        let points = [start(problem, 1), start(problem, 2)];
        assert_ne!(points[0], points[1], "the two points must differ");
        Alternating { points, next: 0 }
    }

    fn next(&mut self) -> &[f64] {
        self.next ^= 1;
        &self.points[self.next]
    }
}

fn configure(group: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    group
        .warm_up_time(Duration::from_millis(700))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30);
}

fn evaluations(c: &mut Criterion) {
    for &stem in DATASETS {
        let data = training(stem);
        let plain = problem(&data, &SorctConfig::default());
        let with_rho = problem(
            &data,
            &SorctConfig {
                rho: vec![0.1],
                ..SorctConfig::default()
            },
        );
        let n = plain.num_variables();
        let mut group = c.benchmark_group(format!("sorct_eval/{stem}_D2"));
        configure(&mut group);

        let mut points = Alternating::new(&plain);
        group.bench_function("objective", |b| {
            b.iter(|| black_box(plain.objective(black_box(points.next()))))
        });

        let mut grad = vec![0.0; n];
        group.bench_function("gradient", |b| {
            b.iter(|| {
                plain.gradient(black_box(points.next()), &mut grad);
                black_box(grad[0])
            })
        });

        group.bench_function("objective+gradient", |b| {
            b.iter(|| {
                let x = points.next();
                let f = plain.objective(black_box(x));
                plain.gradient(x, &mut grad);
                black_box((f, grad[0]))
            })
        });

        let mut points = Alternating::new(&with_rho);
        let m = with_rho.num_constraints();
        let mut lambda = vec![0.0; m];
        let linear_rows = m - data.classes;
        lambda[linear_rows..].fill(0.5);
        let hessian_len = with_rho
            .hessian_structure()
            .expect("S-ORCT gives its Hessian")
            .len();
        let mut hessian = vec![0.0; hessian_len];
        group.bench_function("hessian_lagrangian", |b| {
            b.iter(|| {
                with_rho.hessian_values(black_box(points.next()), 1.0, &lambda, &mut hessian);
                black_box(hessian[0])
            })
        });

        let mut jacobian = vec![0.0; with_rho.jacobian_structure().len()];
        group.bench_function("jacobian_rho", |b| {
            b.iter(|| {
                with_rho.jacobian_values(black_box(points.next()), &mut jacobian);
                black_box(jacobian[jacobian.len() - 1])
            })
        });
        group.finish();
    }
}

#[cfg(feature = "ipopt")]
fn ipopt_start(c: &mut Criterion) {
    let data = training("thyroid");
    let problem = problem(&data, &SorctConfig::default());
    let x0 = start(&problem, 1);
    let mut group = c.benchmark_group("sorct_ipopt/thyroid_D2");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let variants: [(&str, Option<&str>); 2] = [
        ("exact_hessian", None),
        ("limited_memory", Some("limited-memory")),
    ];
    for (name, approximation) in variants {
        let mut options = SolveOptions::default();
        if let Some(a) = approximation {
            options.raw.insert(
                "hessian_approximation".to_string(),
                RawOptionValue::Str(a.to_string()),
            );
        }
        let solver = registry::nlp_solver("ipopt", &options)
            .unwrap_or_else(|e| panic!("cannot create the IPOPT backend: {e}"));
        let options = options.with_warm_start(Some(WarmStart::primal(x0.clone())));
        // Say what is timed: a fast solve that stops at a poor point is not a fast solver.
        let probe = solver
            .solve(&problem, &options)
            .unwrap_or_else(|e| panic!("IPOPT refused the problem: {e}"));
        eprintln!(
            "sorct_ipopt/thyroid_D2/{name}: {} after {} iterations, objective {:.5}",
            probe.status.as_str(),
            probe.iterations,
            probe.objective.unwrap_or(f64::NAN)
        );
        group.bench_function(name, |b| {
            b.iter(|| {
                let result = solver
                    .solve(&problem, &options)
                    .unwrap_or_else(|e| panic!("IPOPT refused the problem: {e}"));
                assert!(
                    result.status.has_solution(),
                    "IPOPT found no solution: {}",
                    result.raw_status
                );
                black_box(result.objective)
            })
        });
    }
    group.finish();
}

/// Without the IPOPT backend (`--no-default-features`) there is no solve to time.
#[cfg(not(feature = "ipopt"))]
fn ipopt_start(_c: &mut Criterion) {
    eprintln!("sorct_ipopt: skipped, this build has no IPOPT backend (feature `ipopt`)");
}

criterion_group!(benches, evaluations, ipopt_start);
criterion_main!(benches);
