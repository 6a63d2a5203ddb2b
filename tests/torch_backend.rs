//! The torch backend (cargo feature `torch`): run with
//! `scripts/with-torch.sh cargo test --features torch --test torch_backend -- --nocapture`.
//!
//! - S-ORCT's tensor objective equals `SorctProblem::objective` to 1e-10 (float64) and its
//!   autograd gradient equals `NlpProblem::gradient` to 1e-8, for every variable layout.
//! - The NLP conformance problems (`glassbox::conformance::nlp_problems`; the suite checks
//!   that "torch" refuses them: they have no tensor form there) with tensor forms of their
//!   objectives: known optima, infeasible, unbounded, iteration limit, warm start; float32
//!   too.
//! - S-ORCT on iris D=2 with "torch" against IPOPT (and "lbfgs") from the same starts: best
//!   objective within 1% of IPOPT's, constraints to 1e-6; and from a config.
//! - S-ORRT: its tensor objective equals `SorrtProblem::objective` and its gradient, for
//!   every variable layout; on Boston D=2 "torch" against IPOPT as `tests/sorrt_gradient.rs`
//!   does for "lbfgs" (constraints to 1e-6, within 1% of IPOPT from IPOPT's local optimum;
//!   that file says why not from the same starts); with the projected Newton stage on
//!   autograd's Hessian it ends locally optimal where L-BFGS alone stops at a limit; and
//!   `glassbox run` from `examples/sorrt_boston_torch.toml`.
//! - IPOPT in a torch build: MUMPS's `dgemm_` binds to the system's libblas, not to the one
//!   libtorch exports (libipopt opened with RTLD_DEEPBIND), read from `LD_DEBUG=bindings`.
//! - On a GPU: asking for CUDA opens `libtorch_cuda.so` (checked on any machine with the
//!   wheel's CUDA build); where libtorch sees a GPU, the objective, gradient and Hessian
//!   checks above run on CUDA too, and iris solves on CUDA end where the CPU's do
//!   (`benches/torch_gpu.sh` runs these on a GPU machine); `device = "auto"` keeps iris on
//!   the CPU and takes CUDA (where there is one) from `CUDA_MIN_EVALUATION_SIZE` on.

#![cfg(feature = "torch")]

#[path = "common/best_objectives.rs"]
mod best_objectives;
#[path = "common/iris_split.rs"]
mod iris_split;
#[path = "common/sorrt_boston.rs"]
mod sorrt_boston;

use best_objectives::best_objectives;
use glassbox::conformance::nlp_problems::*;
use glassbox::data::{self, MinMaxScaler};
use glassbox::experiment::{self, ExperimentConfig};
use glassbox::formulations::sorct::{starts, SorctConfig};
use glassbox::tensor::{PreparedObjective, TensorObjective};
use glassbox::{
    registry, GlassboxError, Interrupt, Limit, NlpProblem, NlpSolver, RawOptionValue, SolveOptions,
    SolveResult, TerminationStatus, WarmStart,
};
use iris_split::iris_train;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use tch::{Device, Kind, Tensor};

fn torch() -> Box<dyn NlpSolver> {
    registry::nlp_solver("torch", &SolveOptions::default()).unwrap()
}

/// `options` with the raw option `name` set.
trait WithRaw {
    fn with_raw(self, name: &str, value: RawOptionValue) -> Self;
}

impl WithRaw for SolveOptions {
    fn with_raw(mut self, name: &str, value: RawOptionValue) -> Self {
        self.raw.insert(name.to_string(), value);
        self
    }
}

fn cpu() -> SolveOptions {
    SolveOptions::default().with_raw("device", RawOptionValue::Str("cpu".into()))
}

// ---------------------------------------------------------------------------------------
// Tensor forms of the conformance problems.

/// A problem `P` with its objective also given as a tensor function.
struct Tensorized<P> {
    inner: P,
    f: fn(&Tensor) -> Tensor,
}

struct PreparedFn(fn(&Tensor) -> Tensor);

impl PreparedObjective for PreparedFn {
    fn objective(&self, x: &Tensor) -> Tensor {
        (self.0)(x)
    }
}

impl<P: NlpProblem> TensorObjective for Tensorized<P> {
    fn prepare(&self, _device: Device, _kind: Kind) -> Box<dyn PreparedObjective> {
        Box::new(PreparedFn(self.f))
    }

    /// No data: a few scalar operations.
    fn evaluation_size(&self) -> usize {
        self.inner.num_variables()
    }
}

impl<P: NlpProblem> NlpProblem for Tensorized<P> {
    fn num_variables(&self) -> usize {
        self.inner.num_variables()
    }
    fn num_constraints(&self) -> usize {
        self.inner.num_constraints()
    }
    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        self.inner.variable_bounds()
    }
    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        self.inner.constraint_bounds()
    }
    fn objective(&self, x: &[f64]) -> f64 {
        self.inner.objective(x)
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        self.inner.gradient(x, grad)
    }
    fn constraints(&self, x: &[f64], g: &mut [f64]) {
        self.inner.constraints(x, g)
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        self.inner.jacobian_structure()
    }
    fn jacobian_values(&self, x: &[f64], values: &mut [f64]) {
        self.inner.jacobian_values(x, values)
    }
    fn name(&self) -> String {
        self.inner.name()
    }
    fn tensor_objective(&self) -> Option<&dyn TensorObjective> {
        Some(self)
    }
}

fn e(x: &Tensor, i: i64) -> Tensor {
    x.get(i)
}

fn bounded_quadratic() -> Tensorized<BoundedQuadratic> {
    Tensorized {
        inner: BoundedQuadratic,
        f: |x| (e(x, 0) - 2.0).square() + (e(x, 1) + 1.0).square(),
    }
}

fn hs071() -> Tensorized<Hs071> {
    Tensorized {
        inner: Hs071,
        f: |x| e(x, 0) * e(x, 3) * (e(x, 0) + e(x, 1) + e(x, 2)) + e(x, 2),
    }
}

fn rosenbrock() -> Tensorized<Rosenbrock> {
    Tensorized {
        inner: Rosenbrock::new(2),
        f: |x| 100.0 * (e(x, 1) - e(x, 0).square()).square() + (e(x, 0) - 1.0).square(),
    }
}

/// A (locally) optimal result at `optimum` with `objective`, feasible, named "torch".
fn assert_solved(
    problem: &dyn NlpProblem,
    result: &SolveResult,
    optimum: &[f64],
    objective: f64,
    tol: f64,
) {
    assert!(
        matches!(
            result.status,
            TerminationStatus::Optimal | TerminationStatus::LocallyOptimal
        ),
        "{}: {} ({})",
        problem.name(),
        result.status,
        result.raw_status
    );
    assert_eq!(result.solver, "torch");
    for (x, x_star) in result.primal.iter().zip(optimum) {
        assert!(
            (x - x_star).abs() <= tol * (1.0 + x_star.abs()),
            "{x} vs {x_star}"
        );
    }
    let f = result.objective.unwrap();
    assert!(
        (f - objective).abs() <= tol * (1.0 + objective.abs()),
        "{f}"
    );
    assert!((f - problem.objective(&result.primal)).abs() <= 1e-9 * (1.0 + f.abs()));
    assert!(result.max_violation.unwrap() <= 1e-6);
}

#[test]
fn conformance_problems_with_tensor_objectives() {
    let solver = torch();
    let p = bounded_quadratic();
    let r = solver.solve(&p, &cpu()).unwrap();
    eprintln!("{}: {} ({})", p.name(), r.status, r.raw_status);
    assert_solved(
        &p,
        &r,
        &BoundedQuadratic::OPTIMUM,
        BoundedQuadratic::OBJECTIVE,
        1e-6,
    );

    let p = hs071();
    let cold = solver
        .solve(
            &p,
            &cpu().with_warm_start(Some(WarmStart::primal(Hs071::START.to_vec()))),
        )
        .unwrap();
    assert_solved(&p, &cold, &Hs071::OPTIMUM, Hs071::OBJECTIVE, 1e-6);
    let warm = solver
        .solve(&p, &cpu().with_warm_start(Some(cold.warm_start())))
        .unwrap();
    assert_solved(&p, &warm, &Hs071::OPTIMUM, Hs071::OBJECTIVE, 1e-6);
    assert!(warm.iterations <= 3, "{} iterations", warm.iterations);

    let p = Tensorized {
        inner: EqualityConstrained,
        f: |x| e(x, 0).square() + e(x, 1).square(),
    };
    let r = solver.solve(&p, &cpu()).unwrap();
    assert_solved(
        &p,
        &r,
        &EqualityConstrained::OPTIMUM,
        EqualityConstrained::OBJECTIVE,
        1e-6,
    );

    let p = Tensorized {
        inner: InequalityConstrained,
        f: |x| (e(x, 0) - 2.0).square() + (e(x, 1) - 2.0).square(),
    };
    let r = solver.solve(&p, &cpu()).unwrap();
    assert_solved(
        &p,
        &r,
        &InequalityConstrained::OPTIMUM,
        InequalityConstrained::OBJECTIVE,
        1e-6,
    );

    let p = Tensorized {
        inner: Infeasible,
        f: |x| e(x, 0).square(),
    };
    let r = solver.solve(&p, &cpu()).unwrap();
    assert_eq!(r.status, TerminationStatus::Infeasible, "{}", r.raw_status);

    let p = Tensorized {
        inner: Unbounded,
        f: |x| -e(x, 0) + e(x, 1).square(),
    };
    let r = solver.solve(&p, &cpu()).unwrap();
    assert!(
        !matches!(
            r.status,
            TerminationStatus::Optimal | TerminationStatus::LocallyOptimal
        ),
        "{}",
        r.status
    );

    let p = rosenbrock();
    let options = SolveOptions {
        iteration_limit: Some(3),
        ..cpu().with_warm_start(Some(WarmStart::primal(p.inner.start())))
    };
    let r = solver.solve(&p, &options).unwrap();
    assert_eq!(
        r.status,
        TerminationStatus::FeasibleAtLimit(Limit::Iteration)
    );
    assert!(r.iterations <= 3);
}

#[test]
fn float32_solves_to_float32_accuracy() {
    let p = bounded_quadratic();
    let options = SolveOptions {
        tolerance: Some(1e-5),
        ..cpu().with_raw("dtype", RawOptionValue::Str("float32".into()))
    };
    let r = torch().solve(&p, &options).unwrap();
    assert!(r.raw_status.contains("Float"), "{}", r.raw_status);
    assert_solved(
        &p,
        &r,
        &BoundedQuadratic::OPTIMUM,
        BoundedQuadratic::OBJECTIVE,
        1e-5,
    );
}

/// In float32 L-BFGS stalls on iris's S-ORCT before the default tolerance (the cost's
/// rounding, about 1e-7 relative, hides its last decreases); the default `finish = "float64"`
/// continues such a solve in float64 from its point, which ends locally optimal, where
/// `finish = "none"` stops at the stall.
#[test]
fn float32_solves_that_stall_are_finished_in_float64() {
    let (x, y) = iris_train();
    let (_, config) = sorct_configs().into_iter().next().unwrap();
    let problem = config.problem(Arc::new(x), Arc::new(y), 3).unwrap();
    let mut finished = 0;
    for seed in 0..3 {
        let x0 = starts::random_start(
            &problem,
            config.initialization,
            &mut ChaCha8Rng::seed_from_u64(seed),
        );
        let float32 = |finish: &str| {
            let options = cpu()
                .with_warm_start(Some(WarmStart::primal(x0.clone())))
                .with_raw("dtype", RawOptionValue::Str("float32".into()))
                .with_raw("finish", RawOptionValue::Str(finish.into()));
            torch().solve(&problem, &options).unwrap()
        };
        let r = float32("float64");
        if r.raw_status.contains("finished in float64") {
            finished += 1;
            assert!(
                r.raw_status
                    .ends_with("(libtorch on Cpu, Float, then Double)"),
                "{}",
                r.raw_status
            );
            assert_eq!(
                r.status,
                TerminationStatus::LocallyOptimal,
                "{}",
                r.raw_status
            );
            let stalled = float32("none");
            assert_eq!(
                stalled.status,
                TerminationStatus::FeasibleAtLimit(Limit::Other),
                "{}",
                stalled.raw_status
            );
        } else {
            assert!(r.status.has_solution(), "{}", r.raw_status);
            assert!(
                r.raw_status.ends_with("(libtorch on Cpu, Float)"),
                "{}",
                r.raw_status
            );
        }
    }
    assert!(
        finished > 0,
        "no float32 solve stalled: nothing was finished in float64"
    );
}

/// The files of the shared libraries mapped into this process.
fn mapped_libraries() -> Vec<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .filter(|file| file.contains(".so"))
        .map(str::to_string)
        .collect()
}

/// With a CUDA build of libtorch (the PyPI wheel's: libtorch_cuda.so beside libtorch_cpu.so),
/// asking for CUDA opens its CUDA library: the linker drops it from the binary, and without
/// it libtorch saw no GPU even on a machine with one. Holds on a machine without a GPU too.
#[test]
fn asking_for_cuda_opens_libtorch_cuda() {
    let cpu_library = mapped_libraries()
        .into_iter()
        .find(|file| file.ends_with("/libtorch_cpu.so"))
        .expect("libtorch_cpu.so is mapped");
    let cuda_library = Path::new(&cpu_library).with_file_name("libtorch_cuda.so");
    let available = glassbox::solvers::torch::cuda_is_available();
    let mapped = mapped_libraries();
    eprintln!(
        "libtorch_cuda.so beside libtorch_cpu.so: {}; CUDA available: {available}",
        cuda_library.exists()
    );
    if cuda_library.exists() {
        assert!(
            mapped
                .iter()
                .any(|file| file.ends_with("/libtorch_cuda.so")),
            "{} exists but was not opened",
            cuda_library.display()
        );
    } else {
        assert!(!available);
    }
}

#[test]
fn options_and_capabilities() {
    // Without a tensor form: a capability error naming the problem.
    let err = torch().solve(&BoundedQuadratic, &cpu()).unwrap_err();
    assert!(matches!(err, GlassboxError::Capability { .. }), "{err}");
    assert!(err.to_string().contains("bounded"), "{err}");
    // Unknown choices are refused by the registry; lbfgs's options are accepted.
    let bad = SolveOptions::default().with_raw("device", RawOptionValue::Str("tpu".into()));
    assert!(registry::nlp_solver("torch", &bad).is_err());
    let ok = cpu().with_raw("memory", RawOptionValue::Int(5));
    assert!(torch()
        .solve(&bounded_quadratic(), &ok)
        .unwrap()
        .status
        .has_solution());
    let bad = cpu().with_raw("memory", RawOptionValue::Int(0));
    let err = torch().solve(&bounded_quadratic(), &bad).unwrap_err();
    assert!(err.to_string().contains("torch"), "{err}");
    // A user's refine_after with refine = "none" is unused, as with lbfgs (torch's own
    // defaults combine the two, and its float32 stage solves so).
    let unused = cpu()
        .with_raw("refine", RawOptionValue::Str("none".into()))
        .with_raw("refine_after", RawOptionValue::Int(5));
    let err = torch()
        .solve(&bounded_quadratic(), &unused)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("torch") && err.contains("refine_after"),
        "{err}"
    );
    // ... and by the registry, before any solve (a config fails before a run writes).
    let err = registry::nlp_solver("torch", &bad)
        .err()
        .expect("memory = 0 refused");
    assert!(err.to_string().contains("torch"), "{err}");
    // The option list states torch's own default of refine_after, once.
    let entry = registry::find("torch").unwrap();
    let refine_after: Vec<_> = entry
        .options
        .iter()
        .filter(|o| o.name == "refine_after")
        .collect();
    assert_eq!(refine_after.len(), 1);
    assert!(
        refine_after[0].help.contains("on both paths"),
        "{}",
        refine_after[0].help
    );
    if !glassbox::solvers::torch::cuda_is_available() {
        let cuda = SolveOptions::default().with_raw("device", RawOptionValue::Str("cuda".into()));
        let err = torch().solve(&bounded_quadratic(), &cuda).unwrap_err();
        assert!(matches!(err, GlassboxError::Capability { .. }), "{err}");
    }
}

/// The devices the tensor objectives are checked on: the CPU, and CUDA where libtorch sees a
/// GPU (so on a machine with one these tests check the GPU's objective and gradient too).
fn devices() -> Vec<Device> {
    let mut devices = vec![Device::Cpu];
    if glassbox::solvers::torch::cuda_is_available() {
        devices.push(Device::Cuda(0));
    }
    devices
}

/// The prepared objective's value and gradient (autograd's) at `point`, in float64 on the
/// device it was prepared for.
fn value_and_gradient(
    prepared: &dyn PreparedObjective,
    point: &[f64],
    device: Device,
) -> (f64, Vec<f64>) {
    let xt = Tensor::from_slice(point)
        .to_device(device)
        .set_requires_grad(true);
    let value = prepared.objective(&xt);
    value.backward();
    let grad = Vec::<f64>::try_from(&xt.grad().to_device(Device::Cpu)).unwrap();
    (value.double_value(&[]), grad)
}

// ---------------------------------------------------------------------------------------
// S-ORCT.

fn sorct_configs() -> Vec<(&'static str, SorctConfig)> {
    vec![
        ("lambda = 0", SorctConfig::default()),
        (
            "lambda_L = 0.005",
            SorctConfig {
                lambda_local: 0.005,
                ..Default::default()
            },
        ),
        (
            "lambda_L, lambda_G, rho",
            SorctConfig {
                lambda_local: 0.01,
                lambda_global: 0.02,
                rho: vec![0.1],
                ..Default::default()
            },
        ),
        (
            "lambda_G only",
            SorctConfig {
                lambda_global: 0.02,
                ..Default::default()
            },
        ),
    ]
}

#[test]
fn sorct_tensor_objective_equals_the_objective_and_its_gradient() {
    let (x, y) = iris_train();
    let (x, y) = (Arc::new(x), Arc::new(y));
    for (name, config) in sorct_configs() {
        let problem = config.problem(x.clone(), y.clone(), 3).unwrap();
        let objective = problem
            .tensor_objective()
            .expect("S-ORCT has a tensor objective");
        let (xl, xu) = problem.variable_bounds();
        for device in devices() {
            let prepared = objective.prepare(device, Kind::Double);
            let mut rng = ChaCha8Rng::seed_from_u64(7);
            for _ in 0..5 {
                let point: Vec<f64> = xl
                    .iter()
                    .zip(&xu)
                    .map(|(l, u)| l + (u - l) * rng.random::<f64>())
                    .collect();
                let (f, grad) = value_and_gradient(prepared.as_ref(), &point, device);
                let f_ref = problem.objective(&point);
                let mut g_ref = vec![0.0; point.len()];
                problem.gradient(&point, &mut g_ref);
                assert!(
                    (f - f_ref).abs() <= 1e-10,
                    "{name}, {device:?}: {f} vs {f_ref}"
                );
                for (j, (a, b)) in grad.iter().zip(&g_ref).enumerate() {
                    assert!(
                        (a - b).abs() <= 1e-8,
                        "{name}, {device:?}: d/dx{j} {a} vs {b}"
                    );
                }
            }
        }
    }
}

fn max_violation(problem: &dyn NlpProblem, x: &[f64]) -> f64 {
    let (xl, xu) = problem.variable_bounds();
    let (gl, gu) = problem.constraint_bounds();
    let mut g = vec![0.0; problem.num_constraints()];
    problem.constraints(x, &mut g);
    let mut worst: f64 = 0.0;
    for (v, (l, u)) in x.iter().zip(xl.iter().zip(&xu)) {
        worst = worst.max(l - v).max(v - u);
    }
    for (v, (l, u)) in g.iter().zip(gl.iter().zip(&gu)) {
        worst = worst.max(l - v).max(v - u);
    }
    worst
}

#[test]
fn sorct_iris_torch_against_ipopt_and_lbfgs() {
    let (x, y) = iris_train();
    let (x, y) = (Arc::new(x), Arc::new(y));
    for (name, config) in sorct_configs().into_iter().take(3) {
        let problem = config.problem(x.clone(), y.clone(), 3).unwrap();
        let mut best = [f64::INFINITY; 3];
        let mut seconds = [Vec::new(), Vec::new(), Vec::new()];
        eprintln!("{name}: seed, objective and seconds of ipopt, lbfgs, torch (cpu)");
        for seed in 0..6 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let x0 = starts::random_start(&problem, config.initialization, &mut rng);
            let mut row = String::new();
            for (s, solver) in ["ipopt", "lbfgs", "torch"].iter().enumerate() {
                let options = SolveOptions::default()
                    .with_warm_start(Some(WarmStart::primal(x0.clone())))
                    .with_raw("device", RawOptionValue::Str("cpu".into()));
                let options = if *solver == "torch" {
                    options
                } else {
                    SolveOptions {
                        raw: Default::default(),
                        ..options
                    }
                };
                let r = registry::nlp_solver(solver, &options)
                    .unwrap()
                    .solve(&problem, &options)
                    .unwrap();
                assert!(r.status.has_solution(), "{solver}: {}", r.raw_status);
                let f = r.objective.unwrap();
                if *solver != "ipopt" {
                    let v = max_violation(&problem, &r.primal);
                    assert!(v <= 1e-6, "{name}, seed {seed}, {solver}: violation {v}");
                }
                best[s] = best[s].min(f);
                seconds[s].push(r.wall_seconds);
                row += &format!("  {f:.8e} ({:.3} s)", r.wall_seconds);
            }
            eprintln!("  {seed}{row}");
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        eprintln!(
            "  best: ipopt {:.8e}, lbfgs {:.8e}, torch {:.8e}; median s per start: ipopt {:.4}, lbfgs {:.4}, torch {:.4}",
            best[0],
            best[1],
            best[2],
            median(&mut seconds[0]),
            median(&mut seconds[1]),
            median(&mut seconds[2])
        );
        assert!(
            best[2] <= 1.01 * best[0],
            "{name}: torch {} vs ipopt {}",
            best[2],
            best[0]
        );
    }
}

/// The same S-ORCT solves (iris, D=2, six starts) on the GPU end where the CPU's do: the
/// objective and gradient agree to rounding (above), and iris's optima are well separated
/// (1.7e-4, 1.7e-3, 9.1e-3, ...), so the two trajectories reach the same one, to the solver's
/// tolerance. Checks something only where libtorch sees a
/// GPU; elsewhere it says so and returns.
#[test]
fn sorct_iris_on_the_gpu_ends_where_the_cpu_does() {
    if !glassbox::solvers::torch::cuda_is_available() {
        eprintln!("no CUDA device: nothing to compare");
        return;
    }
    let (x, y) = iris_train();
    let (name, config) = sorct_configs().into_iter().next().unwrap();
    let problem = config.problem(Arc::new(x), Arc::new(y), 3).unwrap();
    for seed in 0..6 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x0 = starts::random_start(&problem, config.initialization, &mut rng);
        let objective = |device: &str| {
            let options = SolveOptions::default()
                .with_warm_start(Some(WarmStart::primal(x0.clone())))
                .with_raw("device", RawOptionValue::Str(device.into()));
            let r = torch().solve(&problem, &options).unwrap();
            assert!(r.status.has_solution(), "{device}: {}", r.raw_status);
            r.objective.unwrap()
        };
        let (cpu, cuda) = (objective("cpu"), objective("cuda"));
        eprintln!("{name}, seed {seed}: cpu {cpu:.8e}, cuda {cuda:.8e}");
        assert!(
            (cpu - cuda).abs() <= 1e-4 * cpu.abs(),
            "{name}, seed {seed}: cpu {cpu} vs cuda {cuda}"
        );
    }
}

/// `device = "auto"` (the default) runs a problem smaller than the GPU's crossover on the
/// CPU, also on a machine with a GPU (iris's S-ORCT: 111 training rows), and one from the crossover
/// on CUDA where there is a device.
#[test]
fn auto_picks_the_device_by_the_problems_size() {
    use glassbox::solvers::torch::{auto_device, CUDA_MIN_EVALUATION_SIZE};
    let (x, y) = iris_train();
    let (_, config) = sorct_configs().into_iter().next().unwrap();
    let problem = config.problem(Arc::new(x), Arc::new(y), 3).unwrap();
    let size = problem.tensor_objective().unwrap().evaluation_size();
    assert_eq!(size, 111 * 4 * 3, "N x p x branch nodes");
    let r = torch().solve(&problem, &SolveOptions::default()).unwrap();
    assert!(r.raw_status.contains("on Cpu"), "{}", r.raw_status);
    assert_eq!(auto_device(CUDA_MIN_EVALUATION_SIZE - 1), Device::Cpu);
    let large = if glassbox::solvers::torch::cuda_is_available() {
        Device::Cuda(0)
    } else {
        Device::Cpu
    };
    assert_eq!(auto_device(CUDA_MIN_EVALUATION_SIZE), large);
}

#[test]
fn glassbox_run_with_torch_from_a_config() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sorct_iris_lbfgs.toml");
    let text = std::fs::read_to_string(&example)
        .unwrap()
        .replace("repeats = 10", "repeats = 2")
        .replace("starts = 20", "starts = 8");
    let dir = tempfile::tempdir().unwrap();
    let run = |solver: &str| {
        let text = text.replace("name = \"lbfgs\"", &format!("name = \"{solver}\""));
        let config = ExperimentConfig::parse(&example, &text).unwrap();
        let run = experiment::run(&config, &dir.path().join(solver), false, false).unwrap();
        run.records
            .iter()
            .map(|r| serde_json::to_value(r).unwrap())
            .collect::<Vec<_>>()
    };
    let torch = run("torch");
    let ipopt = run("ipopt");
    assert_eq!(torch.len(), ipopt.len());
    for record in &torch {
        assert_eq!(record["solver"], "torch");
    }
    for ((_, f_torch), (_, f_ipopt)) in best_objectives(&torch)
        .into_iter()
        .zip(best_objectives(&ipopt))
    {
        eprintln!("best objective torch {f_torch:.8e}, IPOPT {f_ipopt:.8e}");
        assert!(
            f_torch <= 1.01 * f_ipopt,
            "torch {f_torch} vs IPOPT {f_ipopt}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// S-ORRT.

/// Boston configurations covering the three variable layouts: single `a`; `a+`, `a-`
/// (lambda_L > 0) with the fairness constraint; beta (lambda_G > 0).
fn sorrt_layouts() -> Vec<(&'static str, glassbox::formulations::sorrt::SorrtConfig)> {
    let mut configs = sorrt_boston::boston_configs();
    configs.push((
        "S-ORRT boston D=3, lambda_G",
        glassbox::formulations::sorrt::SorrtConfig {
            depth: 3,
            lambda_global: 0.05,
            ..Default::default()
        },
    ));
    configs
}

#[test]
fn sorrt_tensor_objective_equals_the_objective_and_its_gradient() {
    for (name, config) in sorrt_layouts() {
        let problem = sorrt_boston::boston_problem(&config);
        let objective = problem
            .tensor_objective()
            .expect("S-ORRT has a tensor objective");
        for device in devices() {
            let prepared = objective.prepare(device, Kind::Double);
            let mut rng = ChaCha8Rng::seed_from_u64(11);
            for _ in 0..4 {
                let point = glassbox::formulations::sorrt::starts::random_start(
                    &problem,
                    config.initialization,
                    &mut rng,
                );
                let (f, grad) = value_and_gradient(prepared.as_ref(), &point, device);
                let f_ref = problem.objective(&point);
                let mut g_ref = vec![0.0; point.len()];
                problem.gradient(&point, &mut g_ref);
                assert!(
                    (f - f_ref).abs() <= 1e-10 * f_ref.abs().max(1.0),
                    "{name}, {device:?}: {f} vs {f_ref}"
                );
                for (j, (a, b)) in grad.iter().zip(&g_ref).enumerate() {
                    assert!(
                        (a - b).abs() <= 1e-8 * b.abs().max(1.0),
                        "{name}, {device:?}: d/dx{j} {a} vs {b}"
                    );
                }
            }
        }
    }
}

#[test]
fn sorrt_boston_torch_against_ipopt() {
    for (name, config) in sorrt_boston::boston_configs() {
        let problem = sorrt_boston::boston_problem(&config);
        let c = sorrt_boston::compare_with_ipopt(
            name,
            &config,
            &problem,
            &["torch"],
            &[("device", "cpu")],
            3000,
            0..2,
        );
        assert!(
            c.from_ipopt[0] <= 1.01,
            "{name}: from IPOPT's point, ratio {}",
            c.from_ipopt[0]
        );
    }
}

/// With autograd's Hessian the projected Newton stage runs for torch too: on Boston D=2
/// (badly conditioned, gamma = 512) the solves from the first two data-aware starts end
/// locally optimal, where L-BFGS alone (`refine = "none"`) stops at its line search's limit
/// (every one of 20 starts did before the Hessian, `benches/README.md`).
#[test]
fn sorrt_boston_torch_ends_stationary_with_the_newton_stage() {
    let config = glassbox::formulations::sorrt::SorrtConfig::default();
    let problem = sorrt_boston::boston_problem(&config);
    for seed in 0..2 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x0 = glassbox::formulations::sorrt::starts::random_start(
            &problem,
            config.initialization,
            &mut rng,
        );
        let solve = |refine: &str| {
            let options = cpu()
                .with_raw("refine", RawOptionValue::Str(refine.into()))
                .with_warm_start(Some(WarmStart::primal(x0.clone())));
            torch().solve(&problem, &options).unwrap()
        };
        let newton = solve("newton");
        eprintln!(
            "seed {seed}: {} ({}), objective {:.6e}, {:.2} s",
            newton.status,
            newton.raw_status,
            newton.objective.unwrap(),
            newton.wall_seconds
        );
        assert_eq!(
            newton.status,
            TerminationStatus::LocallyOptimal,
            "seed {seed}: {}",
            newton.raw_status
        );
        let first_order = solve("none");
        eprintln!(
            "seed {seed}, refine = none: {} ({}), objective {:.6e}",
            first_order.status,
            first_order.raw_status,
            first_order.objective.unwrap()
        );
        assert_ne!(
            first_order.status,
            TerminationStatus::LocallyOptimal,
            "seed {seed}: L-BFGS alone reached the tolerance; the test no longer shows the stage"
        );
    }
}

#[test]
fn glassbox_run_sorrt_with_torch_from_the_example_config() {
    sorrt_boston::run_cut_down_example("sorrt_boston_torch.toml", "torch");
}

/// Limits on a problem torch cannot finish quickly (S-ORCT, depth 3, 5000 x 20 synthetic
/// rows, as `tests/limits.rs` gives the other backends): a 0.2 s wall-clock limit is honoured
/// within 20% + 1 s with a time-limit status; an iteration limit of 3 stops it with the
/// limit named.
#[test]
fn limits_on_a_problem_it_cannot_finish_quickly() {
    let d = data::synthetic_oblique(5000, 20, 4, 5)
        .encode_classification()
        .unwrap();
    let x = MinMaxScaler::fit(&d.x).transform(&d.x);
    let config = SorctConfig {
        depth: 3,
        ..SorctConfig::default()
    };
    let problem = config
        .problem(Arc::new(x), Arc::new(d.y.clone()), 4)
        .unwrap();
    let start = starts::random_start(
        &problem,
        config.initialization,
        &mut ChaCha8Rng::seed_from_u64(1),
    );
    let from_start = || cpu().with_warm_start(Some(WarmStart::primal(start.clone())));
    let solver = torch();

    // torch converges on this problem in about 0.65 s on a quiet machine (a fresh-clone CI
    // run), so the limit is well below that and the tolerance out of reach.
    let limit = 0.2;
    let options = SolveOptions {
        time_limit: Some(limit),
        tolerance: Some(1e-14),
        ..from_start()
    };
    let clock = std::time::Instant::now();
    let r = solver.solve(&problem, &options).unwrap();
    let elapsed = clock.elapsed().as_secs_f64();
    eprintln!(
        "torch: {} ({}) after {elapsed:.2} s",
        r.status, r.raw_status
    );
    assert!(elapsed <= 1.2 * limit + 1.0, "{elapsed} s, limit {limit} s");
    assert_eq!(r.status.limit(), Some(Limit::Time), "{}", r.status);

    let options = SolveOptions {
        iteration_limit: Some(3),
        time_limit: Some(60.0),
        ..from_start()
    };
    let r = solver.solve(&problem, &options).unwrap();
    assert_eq!(r.status.limit(), Some(Limit::Iteration), "{}", r.status);
    assert!(r.iterations <= 3, "{}", r.iterations);

    // A stop request (Ctrl-C in `glassbox run`) reaches the inner gradient solve.
    let options = SolveOptions {
        time_limit: Some(60.0),
        interrupt: Some(Interrupt::new(Arc::new(AtomicBool::new(true)))),
        ..from_start()
    };
    let r = solver.solve(&problem, &options).unwrap();
    assert_eq!(r.status.limit(), Some(Limit::Interrupted), "{}", r.status);
}

/// In a torch build IPOPT's MUMPS calls the system's BLAS, not the one libtorch carries and
/// exports (`solvers/ipopt/ffi.rs`, `dynamic`): the dynamic linker's own account of its
/// bindings (`LD_DEBUG=bindings`) during a `glassbox run` of an IPOPT solve, read for
/// MUMPS's `dgemm_`. Before libipopt was opened with RTLD_DEEPBIND it bound to libtorch_cpu.
#[test]
fn ipopt_in_a_torch_build_runs_mumps_on_the_system_blas() {
    let dir = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/iris.csv");
    let config = dir.path().join("iris.toml");
    std::fs::write(
        &config,
        format!(
            "[data]\npath = {:?}\n[split]\nrepeats = 1\n[formulation]\nname = \"sorct\"\n\
             depth = 2\n[solver]\nname = \"ipopt\"\n[multistart]\nstarts = 1\n",
            data.display().to_string()
        ),
    )
    .unwrap();
    let trace = dir.path().join("ld");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_glassbox"))
        .arg("run")
        .arg(&config)
        .arg("--out")
        .arg(dir.path().join("out"))
        .env("LD_DEBUG", "bindings")
        .env("LD_DEBUG_OUTPUT", &trace)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    // LD_DEBUG_OUTPUT names the file trace.PID.
    let mut bindings = String::new();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("ld.")
        {
            bindings += &std::fs::read_to_string(path).unwrap();
        }
    }
    let mumps_dgemm: Vec<&str> = bindings
        .lines()
        .filter(|l| l.contains("dmumps") && l.contains("symbol `dgemm_'"))
        .collect();
    assert!(
        !mumps_dgemm.is_empty(),
        "no binding of MUMPS's dgemm_ traced"
    );
    for line in mumps_dgemm {
        assert!(
            line.contains("libblas") && !line.contains("torch"),
            "MUMPS's dgemm_: {line}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// The adapter's autograd Hessian against the formulations' analytic ones (moved from the
// backend's unit tests: the backend crate cannot see the formulations).

mod autograd_hessian {
    use glassbox::data::{self, CsvOptions, MinMaxScaler, Table};
    use glassbox::formulation::TrainingRows;
    use glassbox::formulations::{sorct, sorrt};
    use glassbox::nlp::NlpProblem;
    use glassbox::solvers::torch::TorchProblem;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use std::path::Path;
    use std::sync::Arc;
    use std::time::Instant;
    use tch::{Device, Kind};

    fn adapter(
        problem: &dyn NlpProblem,
        device: Device,
        deadline: Option<Instant>,
    ) -> TorchProblem<'_> {
        let tensor = problem.tensor_objective().expect("a tensor objective");
        TorchProblem::new(problem, tensor, device, Kind::Double, deadline)
    }

    /// The dense symmetric matrix of a Hessian given as (row, column, value) entries.
    fn dense(n: usize, structure: &[(usize, usize)], values: &[f64]) -> Vec<f64> {
        let mut h = vec![0.0; n * n];
        for (&(r, c), v) in structure.iter().zip(values) {
            h[r * n + c] += v;
            if r != c {
                h[c * n + r] += v;
            }
        }
        h
    }

    /// The adapter's Hessian of the Lagrangian (autograd for the objective, the problem's
    /// for the constraints) equals the problem's analytic one at random points, with an
    /// objective factor and random multipliers, on every device of `super::devices()`.
    fn assert_hessians_agree(name: &str, problem: &dyn NlpProblem, points: &[Vec<f64>]) {
        for device in super::devices() {
            assert_hessians_agree_on(&format!("{name}, {device:?}"), problem, points, device);
        }
    }

    fn assert_hessians_agree_on(
        name: &str,
        problem: &dyn NlpProblem,
        points: &[Vec<f64>],
        device: Device,
    ) {
        let torch = adapter(problem, device, None);
        let n = problem.num_variables();
        let structure = problem.hessian_structure().expect("an analytic Hessian");
        let ours = torch.hessian_structure().expect("the autograd Hessian");
        assert_eq!(ours.len(), n * (n + 1) / 2, "{name}");
        let lambda: Vec<f64> = (0..problem.num_constraints())
            .map(|i| 0.3 + 0.1 * (i % 7) as f64)
            .collect();
        for x in points {
            let mut values = vec![0.0; structure.len()];
            problem.hessian_values(x, 0.7, &lambda, &mut values);
            let expected = dense(n, &structure, &values);
            let mut values = vec![0.0; ours.len()];
            torch.hessian_values(x, 0.7, &lambda, &mut values);
            let got = dense(n, &ours, &values);
            let scale = expected.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
            for (k, (a, b)) in got.iter().zip(&expected).enumerate() {
                assert!(
                    (a - b).abs() <= 1e-9 * scale,
                    "{name}: H[{}][{}] autograd {a} vs analytic {b}",
                    k / n,
                    k % n
                );
            }
        }
    }

    #[test]
    fn autograd_hessians_equal_the_analytic_ones() {
        // S-ORCT with the per-class performance rows (nonlinear constraints: their Hessian
        // comes from the problem) and without (linear rows only).
        let table = data::synthetic_oblique(200, 4, 3, 9);
        let d = table.encode_classification().unwrap();
        let x = Arc::new(MinMaxScaler::fit(&d.x).transform(&d.x));
        let y = Arc::new(d.y.clone());
        for config in [
            sorct::SorctConfig {
                lambda_local: 0.01,
                lambda_global: 0.02,
                rho: vec![0.1],
                ..Default::default()
            },
            sorct::SorctConfig::default(),
        ] {
            let problem = config.problem(x.clone(), y.clone(), 3).unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(3);
            let points: Vec<Vec<f64>> = (0..3)
                .map(|_| sorct::starts::random_start(&problem, config.initialization, &mut rng))
                .collect();
            assert_hessians_agree("S-ORCT", &problem, &points);
        }

        // S-ORRT on Boston, depth 2 (the problem the Newton stage is for).
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/boston_housing.csv");
        let table = Table::from_csv(&path, &CsvOptions::default()).unwrap();
        let (train, _) = data::random_split(table.n_rows(), 0.25, 1).unwrap();
        let d = table.encode_regression().unwrap().rows(&train);
        let x = MinMaxScaler::fit(&d.x).transform(&d.x);
        let config = sorrt::SorrtConfig::default();
        let problem = config
            .problem(
                Arc::new(x),
                Arc::new(d.y.clone()),
                TrainingRows {
                    table: &table,
                    rows: &train,
                },
            )
            .unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let points: Vec<Vec<f64>> = (0..2)
            .map(|_| sorrt::starts::random_start(&problem, config.initialization, &mut rng))
            .collect();
        assert_hessians_agree("S-ORRT", &problem, &points);
    }

    /// Past the solve's deadline the Hessian is not computed (NaN), so a Newton stage on a
    /// large data set cannot overrun a time limit by a whole Hessian.
    #[test]
    fn no_hessian_past_the_deadline() {
        let table = data::synthetic_oblique(100, 3, 2, 4);
        let d = table.encode_classification().unwrap();
        let x = Arc::new(MinMaxScaler::fit(&d.x).transform(&d.x));
        let config = sorct::SorctConfig::default();
        let problem = config.problem(x, Arc::new(d.y.clone()), 2).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let point = sorct::starts::random_start(&problem, config.initialization, &mut rng);
        let torch = adapter(&problem, Device::Cpu, None);
        assert!(torch
            .objective_hessian(&point)
            .iter()
            .all(|v| v.is_finite()));
        let past = adapter(&problem, Device::Cpu, Some(Instant::now()));
        assert!(past.objective_hessian(&point).iter().all(|v| v.is_nan()));
        // Nor once a stop was requested.
        let stopped = adapter(&problem, Device::Cpu, None).with_interrupt(Some(
            glassbox::Interrupt::new(Arc::new(std::sync::atomic::AtomicBool::new(true))),
        ));
        assert!(stopped.objective_hessian(&point).iter().all(|v| v.is_nan()));
    }
}
