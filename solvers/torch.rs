//! The torch backend `"torch"` (cargo feature `torch`): the objective and its gradient are
//! evaluated by libtorch autograd (through `tch`) on the CPU or a CUDA device, in float64 or
//! float32, and minimized by the gradient backend's method — projected L-BFGS (or SPG)
//! inside the safeguarded augmented Lagrangian of [`super::gradient`] — so options,
//! statuses, multipliers and warm starts mean exactly what they mean for `"lbfgs"`.
//!
//! # What a problem must give
//!
//! Only problems with a tensor form of their objective
//! ([`glassbox_core::NlpProblem::tensor_objective`], see [`glassbox_core::tensor`]) can be solved; others
//! are refused with a [`GlassboxError::Capability`] error that names the problem. The
//! backend prepares the objective once per solve (the problem's data is uploaded to the
//! device then and stays there between iterations) and evaluates it with one forward and
//! one backward pass per new point, caching value and gradient by the point.
//!
//! The general constraints and their Jacobian are evaluated through [`glassbox_core::NlpProblem`]
//! on the CPU, as for `"lbfgs"` (S-ORCT's are linear but for the per-class performance
//! rows (8)); only the objective runs on the device.
//!
//! # Second derivatives
//!
//! Like `"lbfgs"`, an inner solve that stalls goes on with projected Newton (`refine`,
//! see [`super::gradient`]). Its Hessian of the objective is autograd's too: the gradient
//! is taken with `create_graph`, and each of its `n` entries is differentiated once more
//! (double backward, on the device; `n` backward passes per Hessian, so about `n` times a
//! gradient's cost). The constraints' part of the Hessian of the Lagrangian comes from the
//! problem on the CPU (zero when every constraint is linear). So the stage runs when the
//! problem has at most 2000 variables (the dense Hessian's limit) and either gives a Hessian
//! or has linear constraints only; otherwise, and with `refine = "none"`, the method is
//! first-order. Without this stage a first-order method crawls in the narrow valleys of
//! S-ORRT (Boston, depth 2) until its iteration limit. Since a Hessian costs `n` gradients,
//! `refine_after` defaults to "only when L-BFGS stalls" on both paths (`"lbfgs"` takes
//! Newton steps from the start on `path = "barrier"`); set it to 0 for that behaviour.
//! `path` defaults to `"direct"`, not lbfgs's `"auto"`: on the CPU torch's direct path
//! already met issue 24's best-of-20 criterion on Boston S-ORRT, where its barrier path
//! cost 2.6 times the seconds a solve (median, on a loaded machine; `benches/README.md`,
//! "Best of 20 starts").
//!
//! # Options
//!
//! Every option of `"lbfgs"` (see [`super::gradient`]), plus the raw options
//! - `device`: `"cpu"`, `"cuda"` (an error when no CUDA device is available at run time),
//!   or `"auto"` (the default: CUDA when available and the problem is large enough for the
//!   GPU to pay, [`CUDA_MIN_EVALUATION_SIZE`], else the CPU); before CUDA is asked for,
//!   libtorch's CUDA library is opened (`load_libtorch_cuda`: the linker drops it from the
//!   binary);
//! - `dtype`: `"float64"` (the default) or `"float32"`. In float32 the objective and gradient
//!   carry about 7 significant digits: the problem declares that rounding
//!   (`NlpProblem::objective_rounding`), so that the line search takes cost differences
//!   within it as noise, and L-BFGS may still stall before the default tolerance;
//! - `finish`: `"float64"` (the default) continues a float32 solve that stalled in float64
//!   from its point and multipliers, without the projected Newton stage in float32 (whose
//!   float32 Hessian, n backward passes a step, stalled there too); `"none"` keeps the whole
//!   solve in float32 (then loosen `tolerance`, to ~1e-5).
//!
//! The raw status ends with where and in what the solve ran: `(libtorch on Cpu, Double)`, or
//! `(libtorch on Cuda(0), Float, then Double)` for a float32 solve finished in float64.
//!
//! `threads` (default 1) sets libtorch's intra-op threads on the CPU (process-wide).
//!
//! The capabilities are static: `gpu` is declared, whether a GPU is used is decided by
//! `device` at run time.
//!
//! Depends on the core (`nlp`, `tensor`, `options`, `result`, `solver`, `registry`), the
//! gradient backend (whose loop it reuses) and `tch`.

use super::gradient;
use glassbox_core::backend::{BackendEntry, Constructor};
use glassbox_core::nlp::NlpProblem;
use glassbox_core::options::{check_raw_options, OptionKind, OptionSpec, RawOptionValue};
use glassbox_core::solver::{Capabilities, NlpSolver};
use glassbox_core::tensor::{PreparedObjective, TensorObjective};
use glassbox_core::{deadline_passed, GlassboxError, Interrupt, Result, SolveOptions, SolveResult};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;
use tch::{Device, Kind, Tensor};

/// The registry name of this backend.
pub const NAME: &str = "torch";

/// What the backend can do.
pub const CAPABILITIES: Capabilities = Capabilities {
    gpu: true,
    // The objective's Hessian by double backward (see "Second derivatives" above).
    exact_hessian: true,
    // Only through a tensor form: the problem's closures cannot run on the device.
    tensor_objective_only: true,
    ..gradient::CAPABILITIES
};

const OWN_OPTIONS: [OptionSpec; 3] = [
    OptionSpec {
        name: "device",
        kind: OptionKind::Choice(&["cpu", "cuda", "auto"]),
        help: "where the objective is evaluated: cpu, cuda, or auto = cuda when available and the data is large enough to gain from it (default auto)",
    },
    OptionSpec {
        name: "dtype",
        kind: OptionKind::Choice(&["float64", "float32"]),
        help: "floating-point type of the objective's tensors (default float64)",
    },
    OptionSpec {
        name: "finish",
        kind: OptionKind::Choice(&["float64", "none"]),
        help: "with dtype = float32, a solve that stalls at float32's precision is finished in float64 from its point, or not (default float64)",
    },
];

/// lbfgs's `refine_after` and `path` with torch's defaults (see [`checked`]).
const REFINE_AFTER: OptionSpec = OptionSpec {
    name: "refine_after",
    kind: OptionKind::Int,
    help: "first-order iterations of an inner solve after which projected Newton takes over, >= 0 (0: Newton only; default: only when L-BFGS stalls, on both paths, since an autograd Hessian costs n backward passes)",
};
const PATH: OptionSpec = OptionSpec {
    name: "path",
    kind: OptionKind::Choice(gradient::PATH_CHOICES),
    help: "direct: solve from the start with the projected methods; barrier: first follow a log-barrier path inside the variable bounds; auto: barrier on problems without general constraints, and both paths from a multistart's random start where there are, keeping the lower, direct otherwise (default direct, unlike lbfgs: torch's direct path met the best-of-20 criterion on Boston S-ORRT on the CPU, benches/README.md)",
};

const NUM_OPTIONS: usize = OWN_OPTIONS.len() + gradient::OPTIONS.len();

const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut k = 0;
    while k < a.len() {
        if a[k] != b[k] {
            return false;
        }
        k += 1;
    }
    true
}

/// torch's own options, then lbfgs's (its `refine_after` and `path` with torch's defaults).
const fn all_options() -> [OptionSpec; NUM_OPTIONS] {
    let mut out = [OWN_OPTIONS[0]; NUM_OPTIONS];
    let mut i = 0;
    while i < OWN_OPTIONS.len() {
        out[i] = OWN_OPTIONS[i];
        i += 1;
    }
    let mut j = 0;
    while j < gradient::OPTIONS.len() {
        out[i + j] = if same_name(gradient::OPTIONS[j].name, REFINE_AFTER.name) {
            REFINE_AFTER
        } else if same_name(gradient::OPTIONS[j].name, PATH.name) {
            PATH
        } else {
            gradient::OPTIONS[j]
        };
        j += 1;
    }
    out
}

const ALL_OPTIONS: [OptionSpec; NUM_OPTIONS] = all_options();

/// The raw options this backend accepts: `device`, `dtype` and those of `"lbfgs"`.
pub const OPTIONS: &[OptionSpec] = &ALL_OPTIONS;

/// The registry entry of this backend.
pub fn entry() -> BackendEntry {
    BackendEntry {
        name: NAME,
        description: "libtorch autograd objective (CPU or CUDA, float64/float32) + the lbfgs augmented Lagrangian (problems with a tensor objective)",
        capabilities: CAPABILITIES,
        options: OPTIONS,
        constructor: Constructor::Nlp(|| Box::new(TorchSolver::new())),
        check_options,
    }
}

/// The torch backend. It holds no state.
#[derive(Clone, Copy, Debug, Default)]
pub struct TorchSolver;

impl TorchSolver {
    /// A new backend.
    pub fn new() -> Self {
        TorchSolver
    }
}

/// Opens libtorch's CUDA library (`libtorch_cuda.so`) once, and says why it could not be.
/// Why: torch-sys links it, but nothing of ours calls into it directly, so the linker's
/// `--as-needed` drops it from every binary, and a libtorch without it registers no CUDA
/// hooks: `device = "cuda"` failed with "no CUDA device" and `"auto"` ran on the CPU on a
/// machine with a GPU (seen on an H200). It is opened from the loader's search path, where
/// the binary finds `libtorch_cpu.so` too (torch/lib, see scripts/with-torch.sh); a CPU-only
/// libtorch has no such file, and the CPU is all there is. libtorch asks once whether CUDA
/// is there and keeps the answer, so this runs before the first such question.
fn load_libtorch_cuda() -> std::result::Result<(), &'static str> {
    use crate::dynamic_library::{open, RTLD_LOCAL, RTLD_NOW};
    static LOADED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    LOADED
        .get_or_init(|| open("libtorch_cuda.so", RTLD_NOW | RTLD_LOCAL).map(|_| ()))
        .as_ref()
        .copied()
        .map_err(String::as_str)
}

/// Whether libtorch sees a CUDA device (its CUDA library opened first).
pub fn cuda_is_available() -> bool {
    load_libtorch_cuda().is_ok() && tch::Cuda::is_available()
}

/// The CUDA device, or why there is none to run on.
fn cuda_device() -> Result<Device> {
    let why = match load_libtorch_cuda() {
        Ok(()) if tch::Cuda::is_available() => return Ok(Device::Cuda(0)),
        Ok(()) => "libtorch sees no CUDA device here".to_string(),
        Err(e) => format!("libtorch's CUDA library did not open ({e})"),
    };
    Err(GlassboxError::Capability {
        solver: NAME.to_string(),
        what: format!("run on device \"cuda\": {why} (use device = \"cpu\" or \"auto\")"),
    })
}

/// The smallest [`TensorObjective::evaluation_size`] that `device = "auto"` runs on CUDA.
/// A GPU evaluation is a few dozen small kernels whose launches cost about the same whatever
/// the size (1.1 to 2.4 ms on an H200); one CPU thread's cost grows with it. Measured on the
/// H200's machine (benches/README.md, "`device = "auto"` by problem size"): one evaluation
/// costs the same on CUDA and on one CPU thread at sizes 6e5 to 9e5 and 0.31 to 0.52 times
/// as much on CUDA at 1.8e6 to 2.7e6; one start's solves (S-ORRT) took 2.8 times as long on
/// CUDA at 2.25e5, 1.1 times at 7.5e5 and 0.59 times at 2.25e6.
pub const CUDA_MIN_EVALUATION_SIZE: usize = 1_000_000;

/// The device `"auto"` picks for an objective of `evaluation_size`: CUDA from
/// [`CUDA_MIN_EVALUATION_SIZE`] on where libtorch sees a device, else the CPU.
pub fn auto_device(evaluation_size: usize) -> Device {
    if evaluation_size >= CUDA_MIN_EVALUATION_SIZE && cuda_is_available() {
        Device::Cuda(0)
    } else {
        Device::Cpu
    }
}

/// The device the options ask for (`None`: `"auto"`, decided by the problem's size) and the
/// kind.
fn device_and_kind(options: &SolveOptions) -> Result<(Option<Device>, Kind)> {
    let device = match options.raw.get("device") {
        Some(RawOptionValue::Str(s)) if s == "cpu" => Some(Device::Cpu),
        Some(RawOptionValue::Str(s)) if s == "cuda" => Some(cuda_device()?),
        _ => None,
    };
    let kind = match options.raw.get("dtype") {
        Some(RawOptionValue::Str(s)) if s == "float32" => Kind::Float,
        _ => Kind::Double,
    };
    Ok((device, kind))
}

/// Checks the options as a solve does: torch's own (`device` included: "cuda" needs a CUDA
/// device here), then the rest as `"lbfgs"` checks them. Returns the device, the kind and
/// the options for the gradient backend's loop.
fn checked(options: &SolveOptions) -> Result<(Option<Device>, Kind, SolveOptions)> {
    options.validate()?;
    check_raw_options(NAME, OPTIONS, &options.raw)?;
    let (device, kind) = device_and_kind(options)?;
    let mut inner = options.clone();
    inner.raw.remove("device");
    inner.raw.remove("dtype");
    inner.raw.remove("finish");
    // The user's options only: the defaults set below may combine what a user may not.
    gradient::refuse_unused_options(&inner.raw).map_err(as_torch_error)?;
    // A Newton step costs n backward passes here, so projected Newton only takes over when
    // L-BFGS stalls, on the barrier path too (where lbfgs's default is Newton from the
    // start: 50 s per Boston start instead of 5, measured).
    inner
        .raw
        .entry("refine_after".to_string())
        .or_insert(RawOptionValue::Int(i64::MAX));
    inner
        .raw
        .entry("path".to_string())
        .or_insert(RawOptionValue::Str("direct".into()));
    gradient::check_settings(&inner).map_err(as_torch_error)?;
    Ok((device, kind, inner))
}

/// The gradient backend's option and capability errors, named as this backend's.
fn as_torch_error(e: GlassboxError) -> GlassboxError {
    match e {
        GlassboxError::InvalidOption {
            option, message, ..
        } => GlassboxError::InvalidOption {
            solver: NAME.to_string(),
            option,
            message,
        },
        GlassboxError::Capability { what, .. } => GlassboxError::Capability {
            solver: NAME.to_string(),
            what,
        },
        other => other,
    }
}

/// Checks the options as a solve does (the registry's check before a run).
fn check_options(options: &SolveOptions) -> Result<()> {
    checked(options).map(|_| ())
}

impl NlpSolver for TorchSolver {
    fn name(&self) -> &str {
        NAME
    }

    fn capabilities(&self) -> Capabilities {
        CAPABILITIES
    }

    fn solve(&self, problem: &dyn NlpProblem, options: &SolveOptions) -> Result<SolveResult> {
        let (device, kind, inner_options) = checked(options)?;
        let Some(tensor) = problem.tensor_objective() else {
            return Err(GlassboxError::Capability {
                solver: NAME.to_string(),
                what: format!(
                    "solve {}: the problem has no tensor form of its objective (NlpProblem::tensor_objective); use solver \"lbfgs\" or \"ipopt\"",
                    problem.name()
                ),
            });
        };
        glassbox_core::nlp::validate(problem)?;
        let device = device.unwrap_or_else(|| auto_device(tensor.evaluation_size()));
        if device == Device::Cpu {
            // libtorch's intra-op threads are process-wide; on small problems (iris) one
            // thread is ~3x faster than libtorch's default on a loaded 2-core machine.
            let threads = options.threads.unwrap_or(1).clamp(1, i32::MAX as usize);
            tch::set_num_threads(threads as i32);
        }
        let deadline = options.deadline_from(Instant::now());
        // The inner options carry `interrupt` to the gradient backend's checks as well.
        let solve_in = |kind: Kind, options: &SolveOptions| {
            let adapter = TorchProblem::new(problem, tensor, device, kind, deadline)
                .with_interrupt(options.interrupt.clone());
            gradient::LbfgsSolver::new()
                .solve(&adapter, options)
                .map_err(as_torch_error)
        };
        let finish = kind == Kind::Float
            && !matches!(options.raw.get("finish"), Some(RawOptionValue::Str(s)) if s == "none");
        let (mut result, kinds) = if finish {
            let first = solve_in(kind, &float32_stage(&inner_options))?;
            match finished_in_float64(first, &inner_options, |o| solve_in(Kind::Double, o))? {
                Finish::Finished(result) => (result, format!("{kind:?}, then {:?}", Kind::Double)),
                Finish::AsItWas(result) => (result, format!("{kind:?}")),
            }
        } else {
            (solve_in(kind, &inner_options)?, format!("{kind:?}"))
        };
        result.solver = NAME.to_string();
        result.raw_status = format!("{} (libtorch on {device:?}, {kinds})", result.raw_status);
        Ok(result)
    }
}

/// The float32 stage's options: without the projected Newton stage unless asked for, since
/// where L-BFGS stalls at float32's precision, Newton steps on a float32 Hessian (n backward
/// passes each) stall there too (measured: spambase S-ORCT D=2, 46 Newton steps, 8.7 s of a
/// 9 s start, ending at stationarity 4.6e-4).
fn float32_stage(options: &SolveOptions) -> SolveOptions {
    let mut options = options.clone();
    options
        .raw
        .entry("refine".to_string())
        .or_insert(RawOptionValue::Str("none".into()));
    options
}

/// What became of a float32 solve: finished in float64, or returned as it ended.
enum Finish {
    Finished(SolveResult),
    AsItWas(SolveResult),
}

/// A float32 solve that stopped short of the tolerance for a reason of its own (a stall:
/// `FeasibleAtLimit(Other)` or no solution at that limit), continued in float64 from its
/// point and multipliers by `solve_f64`, with what is left of the time and iteration limits.
/// Other endings (optimal, the user's limits, a stop request, errors) are returned as they
/// are.
fn finished_in_float64(
    first: SolveResult,
    options: &SolveOptions,
    solve_f64: impl Fn(&SolveOptions) -> Result<SolveResult>,
) -> Result<Finish> {
    use glassbox_core::{Limit, TerminationStatus::*};
    if !matches!(
        first.status,
        FeasibleAtLimit(Limit::Other) | NoSolutionAtLimit(Limit::Other)
    ) || first.primal.is_empty()
    {
        return Ok(Finish::AsItWas(first));
    }
    let mut finish = options.clone();
    finish.warm_start = Some(first.warm_start());
    finish.time_limit = finish
        .time_limit
        .map(|t| (t - first.wall_seconds).max(1e-3));
    finish.iteration_limit = finish
        .iteration_limit
        .map(|k| k.saturating_sub(first.iterations).max(1));
    let mut result = solve_f64(&finish)?;
    result.raw_status = format!(
        "float32: {} ({} iterations); finished in float64: {}",
        first.raw_status, first.iterations, result.raw_status
    );
    result.iterations += first.iterations;
    result.wall_seconds += first.wall_seconds;
    Ok(Finish::Finished(result))
}

/// One evaluated point: x, f(x), grad f(x).
type Evaluation = (Vec<f64>, f64, Vec<f64>);

/// Where the constraints' part of the Hessian of the Lagrangian comes from.
enum ConstraintHessian {
    /// Every constraint is linear: the part is zero.
    Zero,
    /// The problem's Hessian of the Lagrangian evaluated with `obj_factor = 0`, in this
    /// structure.
    Problem(Vec<(usize, usize)>),
    /// Neither: no Hessian is offered (or the problem is too large for a dense one).
    Unavailable,
}

impl ConstraintHessian {
    fn of(problem: &dyn NlpProblem) -> Self {
        if problem.num_variables() > gradient::NEWTON_MAX_VARIABLES {
            ConstraintHessian::Unavailable
        } else if problem.linear_constraints().iter().all(|&linear| linear) {
            ConstraintHessian::Zero
        } else if let Some(structure) = problem.hessian_structure() {
            ConstraintHessian::Problem(structure)
        } else {
            ConstraintHessian::Unavailable
        }
    }
}

/// The problem as the gradient backend sees it: objective, gradient and the objective's
/// Hessian by autograd, the rest from the wrapped problem. Public so that its autograd
/// Hessian can be checked against a formulation's analytic one (`tests/torch_backend.rs`).
pub struct TorchProblem<'a> {
    inner: &'a dyn NlpProblem,
    prepared: Mutex<Box<dyn PreparedObjective>>,
    device: Device,
    kind: Kind,
    cache: Mutex<Option<Evaluation>>,
    constraint_hessian: ConstraintHessian,
    /// The solve's wall-clock deadline: a Hessian (n backward passes, seconds on a large
    /// data set on the CPU) stops between passes when it is reached.
    deadline: Option<Instant>,
    /// A stop request from outside (`SolveOptions::interrupt`), read with the deadline.
    interrupt: Option<Interrupt>,
}

impl<'a> TorchProblem<'a> {
    /// `problem` with its tensor objective `tensor` on `device` in precision `kind`; a
    /// Hessian stops between its backward passes at `deadline`.
    pub fn new(
        problem: &'a dyn NlpProblem,
        tensor: &dyn TensorObjective,
        device: Device,
        kind: Kind,
        deadline: Option<Instant>,
    ) -> Self {
        TorchProblem {
            inner: problem,
            prepared: Mutex::new(tensor.prepare(device, kind)),
            device,
            kind,
            cache: Mutex::new(None),
            constraint_hessian: ConstraintHessian::of(problem),
            deadline,
            interrupt: None,
        }
    }

    /// The same, its Hessian also stopping between passes once `interrupt` is requested.
    pub fn with_interrupt(mut self, interrupt: Option<Interrupt>) -> Self {
        self.interrupt = interrupt;
        self
    }
}

impl TorchProblem<'_> {
    /// f(x) and grad f(x): one forward and one backward pass, cached by x.
    fn evaluate(&self, x: &[f64]) -> (f64, Vec<f64>) {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((cx, f, g)) = cache.as_ref() {
            if cx.as_slice() == x {
                return (*f, g.clone());
            }
        }
        let prepared = self.prepared.lock().unwrap_or_else(|e| e.into_inner());
        let (f, g) = tch::with_grad(|| {
            let xt = Tensor::from_slice(x)
                .to_kind(self.kind)
                .to_device(self.device)
                .set_requires_grad(true);
            let value = prepared.objective(&xt);
            value.backward();
            let f = value.to_kind(Kind::Double).double_value(&[]);
            let grad = xt
                .grad()
                .to_kind(Kind::Double)
                .to_device(Device::Cpu)
                .contiguous();
            let g = Vec::<f64>::try_from(&grad).expect("a 1-D float64 gradient");
            (f, g)
        });
        *cache = Some((x.to_vec(), f, g.clone()));
        (f, g)
    }

    /// The objective's Hessian at `x`, row-major `n x n`: the gradient with `create_graph`,
    /// then one backward pass per entry of it. A gradient entry that does not depend on `x`
    /// (an objective linear in that variable) has a zero row. Past the deadline it is NaN:
    /// the Newton stage then takes no Newton step, and its line search stops at the limit.
    pub fn objective_hessian(&self, x: &[f64]) -> Vec<f64> {
        let n = x.len();
        let prepared = self.prepared.lock().unwrap_or_else(|e| e.into_inner());
        tch::with_grad(|| {
            let xt = Tensor::from_slice(x)
                .to_kind(self.kind)
                .to_device(self.device)
                .set_requires_grad(true);
            let value = prepared.objective(&xt);
            let grad = Tensor::f_run_backward(&[&value], &[&xt], true, true)
                .unwrap_or_else(|e| panic!("autograd of the objective failed: {e}"))
                .remove(0);
            let mut hessian = vec![0.0; n * n];
            if !grad.requires_grad() {
                return hessian; // the objective is linear
            }
            for i in 0..n {
                if deadline_passed(self.deadline)
                    || self.interrupt.as_ref().is_some_and(Interrupt::requested)
                {
                    return vec![f64::NAN; n * n];
                }
                let entry = grad.get(i as i64);
                let row = Tensor::f_run_backward(&[&entry], &[&xt], true, false)
                    .unwrap_or_else(|e| panic!("the second backward pass failed: {e}"))
                    .remove(0);
                if !row.defined() {
                    continue;
                }
                let row = row
                    .to_kind(Kind::Double)
                    .to_device(Device::Cpu)
                    .contiguous();
                let row = Vec::<f64>::try_from(&row).expect("a 1-D float64 Hessian row");
                hessian[i * n..(i + 1) * n].copy_from_slice(&row);
            }
            hessian
        })
    }
}

impl NlpProblem for TorchProblem<'_> {
    fn num_variables(&self) -> usize {
        self.inner.num_variables()
    }
    fn objective_rounding(&self) -> f64 {
        match self.kind {
            Kind::Float => f64::from(f32::EPSILON),
            _ => f64::EPSILON,
        }
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
        self.evaluate(x).0
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        grad.copy_from_slice(&self.evaluate(x).1);
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
    /// The dense lower triangle, row by row, when the Hessian is offered (see
    /// [`ConstraintHessian`]).
    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        if matches!(self.constraint_hessian, ConstraintHessian::Unavailable) {
            return None;
        }
        let n = self.num_variables();
        Some((0..n).flat_map(|i| (0..=i).map(move |j| (i, j))).collect())
    }
    fn hessian_values(&self, x: &[f64], obj_factor: f64, lambda: &[f64], values: &mut [f64]) {
        let n = x.len();
        // Autograd's Hessian is symmetric up to rounding; the mean of the two triangles
        // keeps the model exactly symmetric.
        let h = self.objective_hessian(x);
        let lower = |i: usize| (0..=i).map(move |j| (i, j));
        for ((i, j), value) in (0..n).flat_map(lower).zip(values.iter_mut()) {
            *value = obj_factor * 0.5 * (h[i * n + j] + h[j * n + i]);
        }
        // The problem's Hessian at obj_factor 0 still walks every row (S-ORCT's does), so
        // it is skipped when every multiplier is 0 (no active nonlinear row): its part is 0.
        let any_multiplier = lambda.iter().any(|&l| l != 0.0);
        if let (ConstraintHessian::Problem(structure), true) =
            (&self.constraint_hessian, any_multiplier)
        {
            let mut part = vec![0.0; structure.len()];
            self.inner.hessian_values(x, 0.0, lambda, &mut part);
            for (&(r, c), v) in structure.iter().zip(&part) {
                let (i, j) = (r.max(c), r.min(c));
                values[i * (i + 1) / 2 + j] += v;
            }
        }
    }
    fn name(&self) -> String {
        self.inner.name()
    }
}
