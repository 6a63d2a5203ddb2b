//! The torch backend `"torch"` (cargo feature `torch`): the objective and its gradient are
//! evaluated by libtorch autograd (through `tch`) on the CPU or a CUDA device, in float64 or
//! float32, and minimized by the gradient backend's method — projected L-BFGS (or SPG)
//! inside the safeguarded augmented Lagrangian of [`super::gradient`] — so options,
//! statuses, multipliers and warm starts mean exactly what they mean for `"lbfgs"`.
//!
//! # What a problem must give
//!
//! Only problems with a tensor form of their objective
//! ([`crate::NlpProblem::tensor_objective`], see [`crate::tensor`]) can be solved; others
//! are refused with a [`GlassboxError::Capability`] error that names the problem. The
//! backend prepares the objective once per solve (the problem's data is uploaded to the
//! device then and stays there between iterations) and evaluates it with one forward and
//! one backward pass per new point, caching value and gradient by the point.
//!
//! The general constraints and their Jacobian are evaluated through [`crate::NlpProblem`]
//! on the CPU, as for `"lbfgs"` (S-ORCT's are linear but for the per-class performance
//! rows (8)); only the objective runs on the device.
//!
//! # Options
//!
//! Every option of `"lbfgs"` (see [`super::gradient`]), plus the raw options
//! - `device`: `"cpu"`, `"cuda"` (an error when no CUDA device is available at run time),
//!   or `"auto"` (the default: CUDA when available, else the CPU);
//! - `dtype`: `"float64"` (the default) or `"float32"`. In float32 the objective and gradient
//!   carry about 7 significant digits, so `tolerance` should be loosened (to ~1e-5).
//!
//! `threads` (default 1) sets libtorch's intra-op threads on the CPU (process-wide).
//!
//! The capabilities are static: `gpu` is declared, whether a GPU is used is decided by
//! `device` at run time.
//!
//! Depends on the core (`nlp`, `tensor`, `options`, `result`, `solver`, `registry`), the
//! gradient backend (whose loop it reuses) and `tch`.

use super::gradient;
use crate::nlp::NlpProblem;
use crate::options::{check_raw_options, OptionKind, OptionSpec, RawOptionValue};
use crate::registry::{BackendEntry, Constructor};
use crate::solver::{Capabilities, NlpSolver};
use crate::tensor::PreparedObjective;
use crate::{GlassboxError, Result, SolveOptions, SolveResult};
use std::sync::Mutex;
use tch::{Device, Kind, Tensor};

/// The registry name of this backend.
pub const NAME: &str = "torch";

/// What the backend can do.
pub const CAPABILITIES: Capabilities = Capabilities {
    gpu: true,
    // Its problems give no Hessian (autograd derivatives are first order only), so the
    // gradient backend's projected Newton stage never runs.
    exact_hessian: false,
    ..gradient::CAPABILITIES
};

const OWN_OPTIONS: [OptionSpec; 2] = [
    OptionSpec {
        name: "device",
        kind: OptionKind::Choice(&["cpu", "cuda", "auto"]),
        help: "where the objective is evaluated: cpu, cuda, or auto = cuda when available (default auto)",
    },
    OptionSpec {
        name: "dtype",
        kind: OptionKind::Choice(&["float64", "float32"]),
        help: "floating-point type of the objective's tensors (default float64)",
    },
];

const NUM_OPTIONS: usize = OWN_OPTIONS.len() + gradient::OPTIONS.len();

const fn all_options() -> [OptionSpec; NUM_OPTIONS] {
    let mut out = [OWN_OPTIONS[0]; NUM_OPTIONS];
    let mut i = 0;
    while i < OWN_OPTIONS.len() {
        out[i] = OWN_OPTIONS[i];
        i += 1;
    }
    let mut j = 0;
    while j < gradient::OPTIONS.len() {
        out[i + j] = gradient::OPTIONS[j];
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

/// The device and kind the options ask for.
fn device_and_kind(options: &SolveOptions) -> Result<(Device, Kind)> {
    let device = match options.raw.get("device") {
        Some(RawOptionValue::Str(s)) if s == "cpu" => Device::Cpu,
        Some(RawOptionValue::Str(s)) if s == "cuda" => {
            if !tch::Cuda::is_available() {
                return Err(GlassboxError::Capability {
                    solver: NAME.to_string(),
                    what: "run on device \"cuda\": libtorch sees no CUDA device here (use device = \"cpu\" or \"auto\")".to_string(),
                });
            }
            Device::Cuda(0)
        }
        _ => Device::cuda_if_available(),
    };
    let kind = match options.raw.get("dtype") {
        Some(RawOptionValue::Str(s)) if s == "float32" => Kind::Float,
        _ => Kind::Double,
    };
    Ok((device, kind))
}

impl NlpSolver for TorchSolver {
    fn name(&self) -> &str {
        NAME
    }

    fn capabilities(&self) -> Capabilities {
        CAPABILITIES
    }

    fn solve(&self, problem: &dyn NlpProblem, options: &SolveOptions) -> Result<SolveResult> {
        options.validate()?;
        check_raw_options(NAME, OPTIONS, &options.raw)?;
        let Some(tensor) = problem.tensor_objective() else {
            return Err(GlassboxError::Capability {
                solver: NAME.to_string(),
                what: format!(
                    "solve {}: the problem has no tensor form of its objective (NlpProblem::tensor_objective); use solver \"lbfgs\" or \"ipopt\"",
                    problem.name()
                ),
            });
        };
        let (device, kind) = device_and_kind(options)?;
        crate::nlp::validate(problem)?;
        if device == Device::Cpu {
            // libtorch's intra-op threads are process-wide; on small problems (iris) one
            // thread is ~3x faster than libtorch's default on a loaded 2-core machine.
            let threads = options.threads.unwrap_or(1).clamp(1, i32::MAX as usize);
            tch::set_num_threads(threads as i32);
        }
        let adapter = TorchProblem {
            inner: problem,
            prepared: Mutex::new(tensor.prepare(device, kind)),
            device,
            kind,
            cache: Mutex::new(None),
        };
        let mut inner_options = options.clone();
        inner_options.raw.remove("device");
        inner_options.raw.remove("dtype");
        let mut result = gradient::LbfgsSolver::new()
            .solve(&adapter, &inner_options)
            .map_err(|e| match e {
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
            })?;
        result.solver = NAME.to_string();
        result.raw_status = format!("{} (libtorch on {device:?}, {kind:?})", result.raw_status);
        Ok(result)
    }
}

/// One evaluated point: x, f(x), grad f(x).
type Evaluation = (Vec<f64>, f64, Vec<f64>);

/// The problem as the gradient backend sees it: objective and gradient by autograd, the
/// rest from the wrapped problem.
struct TorchProblem<'a> {
    inner: &'a dyn NlpProblem,
    prepared: Mutex<Box<dyn PreparedObjective>>,
    device: Device,
    kind: Kind,
    cache: Mutex<Option<Evaluation>>,
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
}

impl NlpProblem for TorchProblem<'_> {
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
    fn name(&self) -> String {
        self.inner.name()
    }
}
