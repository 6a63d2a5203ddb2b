//! What one evaluation of the `torch` backend's objective costs on the CPU and on a CUDA
//! device, by data size: the objective and its autograd gradient (one forward and one
//! backward pass, what every L-BFGS iteration pays) of S-ORCT and S-ORRT on random data of
//! N rows, median milliseconds over repeated evaluations at distinct points, in float64 and
//! in float32, on the CPU with one libtorch thread (the backend's default) and, where
//! libtorch sees one, on CUDA. The float64 ratio says from which size the GPU pays:
//! `device = "auto"` switches to CUDA at `CUDA_MIN_EVALUATION_SIZE` (`solvers/torch.rs`),
//! near where this table's ratio crossed 1 on an H200 (benches/README.md).
//!
//! ```sh
//! scripts/with-torch.sh cargo run --release --features torch --example torch_evaluation_cost
//! scripts/with-torch.sh cargo run --release --features torch --example torch_evaluation_cost \
//!     -- 30 1000 10000 100000      # evaluations per cell, then the row counts
//! ```
//!
//! The size column is the objective's `evaluation_size` (N x p x the columns of the
//! coefficient matrix: S-ORCT's branch nodes, S-ORRT's nodes).

use glassbox::data::{CsvOptions, Table};
use glassbox::formulation::TrainingRows;
use glassbox::formulations::{sorct, sorrt};
use glassbox::nlp::NlpProblem;
use glassbox::solvers::torch::{cuda_is_available, TorchProblem};
use glassbox::tensor::TensorObjective;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use std::time::Instant;
use tch::{Device, Kind};

/// Median milliseconds of one objective-and-gradient evaluation on `device` in `kind`, over
/// `evaluations` distinct points near `x0` (the backend caches by point).
fn milliseconds(
    problem: &dyn NlpProblem,
    tensor: &dyn TensorObjective,
    device: Device,
    kind: Kind,
    x0: &[f64],
    evaluations: usize,
) -> f64 {
    let torch = TorchProblem::new(problem, tensor, device, kind, None);
    let mut gradient = vec![0.0; x0.len()];
    let mut times = Vec::with_capacity(evaluations);
    // Three evaluations first: libtorch's first calls on a device allocate and load kernels.
    for e in 0..evaluations + 3 {
        let x: Vec<f64> = x0.iter().map(|v| v * (1.0 - 1e-3 * e as f64)).collect();
        let started = Instant::now();
        torch.objective(&x);
        torch.gradient(&x, &mut gradient);
        if e >= 3 {
            times.push(started.elapsed().as_secs_f64() * 1e3);
        }
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// One row of the table: the problem on the CPU and, where there is one, on CUDA.
fn report(name: &str, problem: &dyn NlpProblem, size: usize, x0: &[f64], evaluations: usize) {
    let tensor = problem
        .tensor_objective()
        .expect("S-ORCT and S-ORRT have a tensor objective");
    assert_eq!(
        tensor.evaluation_size(),
        size,
        "{name}: the size the backend sees"
    );
    let time = |device, kind| milliseconds(problem, tensor, device, kind, x0, evaluations);
    let cuda = cuda_is_available();
    let on_cuda = |kind| cuda.then(|| time(Device::Cuda(0), kind));
    let text = |ms: Option<f64>| ms.map_or("-".to_string(), |ms| format!("{ms:.3}"));
    let (cpu, cpu32) = (
        time(Device::Cpu, Kind::Double),
        time(Device::Cpu, Kind::Float),
    );
    let (gpu, gpu32) = (on_cuda(Kind::Double), on_cuda(Kind::Float));
    let ratio = gpu.map_or("-".to_string(), |ms| format!("{:.2}", ms / cpu));
    println!(
        "| {name} | {size} | {cpu:.3} | {} | {ratio} | {cpu32:.3} | {} |",
        text(gpu),
        text(gpu32)
    );
}

/// A table of `rows` random rows: `features` uniform features and a target column.
fn random_table(rows: usize, features: usize, classes: Option<usize>, seed: u64) -> Table {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut csv: String = (0..features).map(|j| format!("x{j},")).collect();
    csv.push_str("target\n");
    for _ in 0..rows {
        for _ in 0..features {
            csv.push_str(&format!("{:.6},", rng.random::<f64>()));
        }
        let target = match classes {
            Some(k) => format!("c{}", rng.random_range(0..k)),
            None => format!("{:.6}", rng.random::<f64>()),
        };
        csv.push_str(&target);
        csv.push('\n');
    }
    Table::from_reader("random", csv.as_bytes(), &CsvOptions::default()).unwrap()
}

fn sorct_row(rows: usize, depth: usize, features: usize, evaluations: usize) {
    let table = random_table(rows, features, Some(3), 1);
    let data = table.encode_classification().unwrap();
    let config = sorct::SorctConfig {
        depth,
        ..Default::default()
    };
    let x = Arc::new(data.x.clone());
    let problem = config.problem(x, Arc::new(data.y.clone()), 3).unwrap();
    let start = sorct::starts::random_start(
        &problem,
        config.initialization,
        &mut ChaCha8Rng::seed_from_u64(0),
    );
    // X times the branch nodes' coefficients.
    let branches = (1 << depth) - 1;
    let name = format!("S-ORCT D={depth}, p={features}, N={rows}");
    report(
        &name,
        &problem,
        rows * features * branches,
        &start,
        evaluations,
    );
}

fn sorrt_row(rows: usize, depth: usize, features: usize, evaluations: usize) {
    let table = random_table(rows, features, None, 2);
    let data = table.encode_regression().unwrap();
    let config = sorrt::SorrtConfig {
        depth,
        ..Default::default()
    };
    let all: Vec<usize> = (0..rows).collect();
    let train = TrainingRows {
        table: &table,
        rows: &all,
    };
    let x = Arc::new(data.x.clone());
    let problem = config.problem(x, Arc::new(data.y.clone()), train).unwrap();
    let start = sorrt::starts::random_start(
        &problem,
        config.initialization,
        &mut ChaCha8Rng::seed_from_u64(0),
    );
    // X times every node's coefficients (the leaves are linear too).
    let nodes = (1 << (depth + 1)) - 1;
    let name = format!("S-ORRT D={depth}, p={features}, N={rows}");
    report(
        &name,
        &problem,
        rows * features * nodes,
        &start,
        evaluations,
    );
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse()
                .expect("evaluations, then row counts: whole numbers")
        })
        .collect();
    let evaluations = args.first().copied().unwrap_or(20).max(1);
    let sizes = if args.len() > 1 {
        args[1..].to_vec()
    } else {
        vec![1_000, 3_000, 10_000, 30_000, 100_000, 300_000]
    };
    tch::set_num_threads(1);
    println!("CUDA available: {}", cuda_is_available());
    println!(concat!(
        "| problem | evaluation size | CPU ms (1 thread) | CUDA ms | CUDA / CPU ",
        "| CPU ms, float32 | CUDA ms, float32 |"
    ));
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for &rows in &sizes {
        sorct_row(rows, 2, 20, evaluations);
        sorrt_row(rows, 1, 25, evaluations);
        sorrt_row(rows, 2, 13, evaluations);
    }
}
