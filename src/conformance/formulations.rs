//! The formulation conformance suite: the checks every formulation of a registry must pass,
//! whoever wrote it, run on small generated data (in the manner of the backends' suites):
//! - every NLP formulation: its gradient, constraint Jacobian and Hessian of the Lagrangian
//!   agree with central finite differences at seeded random points ([`derivatives`]);
//! - every MILP formulation: the registry's MILP backends prove the same optimum on a small
//!   instance ([`milp_backends_agree`]);
//! - every formulation: fitted, saved, loaded through the registry and predicting, it gives
//!   the predictions (the accuracies or R2 its results line reports) of the model it fitted,
//!   and a loaded model saves back to the same file ([`fit_save_load_predict`]).
//!
//! A formulation this build cannot fit (its fit needs a cargo feature left out, e.g. CCT
//! without `torch`) is skipped with the reason printed. [`run_all`] runs every check that
//! applies to a formulation; `tests/conformance_formulations.rs` runs it on every built-in
//! formulation, `examples/extension` on the one it adds, so a new formulation is covered with
//! no edit to the suite.
//!
//! [`printed_defaults`] is a check beside them, typed: the defaults a formulation's `info()`
//! prints are its config type's `Default`. It is called with the config type (a registry
//! entry does not keep it), by the registry's tests on every built-in formulation and by
//! `examples/extension` on its own.
//!
//! Depends on the registry, the experiment engine and the core.

use crate::experiment::engine::{self, SplitSpec};
use crate::experiment::{self, EngineData, ExperimentConfig, SolveRecord};
use crate::formulation::FormulationInfo;
use crate::model::{save_fitted, FittedModel};
use crate::nlp::check;
use crate::registry::{FormulationEntry, Registry};
use crate::{metrics, GlassboxError};
use serde::de::DeserializeOwned;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The checks, by name, in the order [`run_all`] runs them.
pub const CHECKS: &[(&str, Check)] = &[
    ("derivatives", derivatives),
    ("milp_backends_agree", milp_backends_agree),
    ("fit_save_load_predict", fit_save_load_predict),
];

/// A check of formulation `name` of `registry`.
pub type Check = fn(&Arc<Registry>, &str);

/// Runs every check on formulation `name` of `registry`; panics on the first failure.
pub fn run_all(registry: &Arc<Registry>, name: &str) {
    for (check_name, check) in CHECKS {
        eprintln!("conformance (formulation) {name}: {check_name}");
        check(registry, name);
    }
}

/// Seeded random points per NLP formulation.
const POINTS: usize = 3;

/// Rows of the generated data sets (30% of them test rows).
const ROWS: usize = 60;

/// Rows of the MILP instances every backend must prove optimal (small enough for CBC on
/// a busy machine: OCT-H at depth 2 on 21 training rows).
const MILP_ROWS: usize = 30;

/// (1) The NLP's derivatives against central finite differences at seeded random points
/// (each point a formulation's random start, moved off it by a seeded perturbation), with
/// an objective factor and multipliers of both signs. The error is the smallest over a
/// ladder of steps (a wrong derivative is wrong at every step; a right one is right at
/// some step whatever the problem's scale).
pub fn derivatives(registry: &Arc<Registry>, name: &str) {
    let entry = entry(registry, name);
    if entry.info.kind != "nlp" {
        return;
    }
    let setup = Setup::new(registry, entry, None, ROWS);
    let (config, data, split) = setup.prepared();
    let Some(nlp) = config
        .formulation
        .nlp_problem(&config, &data, &split, POINTS)
        .unwrap_or_else(|e| panic!("{name}: building its NLP: {e}"))
    else {
        panic!("{name}: an NLP formulation builds no NLP");
    };
    let problem = nlp.problem.as_ref();
    let steps = [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8];
    let best = |error: &dyn Fn(f64) -> f64| {
        steps
            .iter()
            .map(|&h| error(h))
            .fold(f64::INFINITY, f64::min)
    };
    let (lower, upper) = problem.variable_bounds();
    let m = problem.num_constraints();
    for (k, start) in nlp.starts.iter().enumerate() {
        // Off the start (which may sit on a bound or a symmetric point), inside the bounds.
        let x: Vec<f64> = start
            .iter()
            .enumerate()
            .map(|(j, &v)| {
                let nudge = 1e-2 * (((j * 7 + k * 13) % 11) as f64 / 11.0 - 0.5);
                (v + nudge).clamp(lower[j], upper[j])
            })
            .collect();
        let gradient = best(&|h| check::gradient_error(problem, &x, h));
        assert!(
            gradient < 1e-5,
            "{name}: gradient error {gradient} at point {k}"
        );
        if m > 0 {
            let jacobian = best(&|h| check::jacobian_error(problem, &x, h));
            assert!(
                jacobian < 1e-5,
                "{name}: Jacobian error {jacobian} at point {k}"
            );
        }
        let lambda: Vec<f64> = (0..m)
            .map(|i| 0.5 - ((i * 5 + k) % 7) as f64 / 7.0)
            .collect();
        for sigma in [1.0, 0.3] {
            let hessian =
                best(&|h| check::hessian_error(problem, &x, sigma, &lambda, h).unwrap_or(0.0));
            assert!(
                hessian < 1e-4,
                "{name}: Hessian error {hessian} at point {k} (obj_factor {sigma})"
            );
        }
    }
}

/// (2) Every MILP backend of the registry proves the same optimum on a small instance
/// (the formulation's problem on the training rows of `MILP_ROWS` generated rows),
/// within 1e-6 relative.
pub fn milp_backends_agree(registry: &Arc<Registry>, name: &str) {
    let entry = entry(registry, name);
    if entry.info.kind != "milp" {
        return;
    }
    let backends: Vec<&'static str> = registry
        .backends()
        .iter()
        .filter(|b| b.problem_kind() == "milp")
        .map(|b| b.name)
        .collect();
    assert!(
        !backends.is_empty(),
        "{name}: the registry has no MILP backend"
    );
    let mut optima: Vec<(&str, f64)> = Vec::new();
    for backend in backends {
        let setup = Setup::new(registry, entry, Some(backend), MILP_ROWS);
        let Some(records) = setup.fit() else { return };
        let record = &records[0];
        assert_eq!(
            record.status, "optimal",
            "{name} on {backend}: not proven optimal ({})",
            record.raw_status
        );
        optima.push((
            backend,
            record.objective.expect("an optimum has an objective"),
        ));
    }
    for pair in optima.windows(2) {
        let ((a, x), (b, y)) = (pair[0], pair[1]);
        assert!(
            (x - y).abs() <= 1e-6 * (1.0 + x.abs()),
            "{name}: {a} proves {x}, {b} proves {y}"
        );
    }
}

/// (3) Fit, save, load (through the registry), predict: the loaded model reproduces the
/// metrics its results line reports on the same training and test rows, and saves back to
/// the file it was read from.
pub fn fit_save_load_predict(registry: &Arc<Registry>, name: &str) {
    let entry = entry(registry, name);
    let setup = Setup::new(registry, entry, None, ROWS);
    let Some(records) = setup.fit() else { return };
    let Some(selected) = records.iter().find(|r| r.selected) else {
        panic!("{name}: no start was selected: {records:?}");
    };
    let path = setup.out.join("models/split-0.json");
    let loaded = registry
        .load_model(&path)
        .unwrap_or_else(|e| panic!("{name}: loading its model: {e}"));
    assert_eq!(loaded.kind, name, "{name}: the model file's kind");
    let (_, data, split) = setup.prepared();
    let measured = |rows: &[usize]| measure(loaded.model.as_ref(), &data, rows);
    let (train, test) = (measured(&split.train), measured(&split.test));
    let expected = match &selected.regression {
        Some(m) => (m.train_r2, m.test_r2),
        None => (selected.train_accuracy, selected.test_accuracy),
    };
    assert_eq!(
        (train, test),
        expected,
        "{name}: the loaded model's (train, test) metrics differ from its results line's"
    );
    // Saved again, the model reads back to the same file.
    let again = setup.out.join("again.json");
    save_fitted(&again, &loaded.kind, loaded.model.as_ref()).expect("saving the loaded model");
    let read = |p: &Path| {
        let text = std::fs::read_to_string(p).expect("a model file");
        let mut v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        v["version"] = serde_json::Value::Null;
        v
    };
    assert_eq!(
        read(&path),
        read(&again),
        "{name}: a saved model does not round-trip"
    );
    let twice = registry
        .load_model(&again)
        .expect("the model saved again loads");
    assert_eq!(
        measure(twice.model.as_ref(), &data, &split.test),
        test,
        "{name}: the model saved again predicts differently"
    );
}

/// The defaults `glassbox formulations` prints for a formulation (the [`ParamSpec`](crate::formulation::ParamSpec) text of
/// its `info()`) are its config type `F`'s `Default`: the printed defaults that are TOML
/// values are read into `F` as a `[formulation]` table would be (then `setup`, as the
/// registry entry does after parsing: `FormulationEntry::learner_with`'s, or `|_| {}`), and
/// the result must be `F::default()` after the same `setup`, with at least one printed
/// default read. A printed default that is not a TOML value ("" for a required key, prose
/// such as "0.5 off the diagonal") is not read. Returns how many were. Unlike the checks of
/// [`CHECKS`] it needs the config type, which a registry entry does not keep, so it is
/// called with it: `printed_defaults::<MyConfig>(&my::info(), |_| {})`. The registry's
/// tests call it on every built-in formulation (`src/registry/printed_defaults.rs`).
pub fn printed_defaults<F>(info: &FormulationInfo, setup: fn(&mut F)) -> usize
where
    F: DeserializeOwned + Default + PartialEq + Debug,
{
    let table = crate::registry::printed_defaults(info.parameters);
    let mut read: F = table
        .clone()
        .try_into()
        .unwrap_or_else(|e| panic!("{}: its printed defaults do not parse: {e}", info.name));
    setup(&mut read);
    let mut default = F::default();
    setup(&mut default);
    assert_eq!(
        read, default,
        "{}: the printed defaults {table:?}",
        info.name
    );
    assert!(
        !table.is_empty(),
        "{}: no printed default is a value",
        info.name
    );
    table.len()
}

/// The printed defaults that are TOML values, as a `[formulation]` table would hold them.
/// The metric a results line reports for `model` on `rows` of the run's encoded data:
/// accuracy for a classifier, R2 for a regressor.
fn measure(model: &dyn FittedModel, data: &EngineData, rows: &[usize]) -> f64 {
    if let Some(r) = model.as_regressor() {
        let part = data
            .regression(r.target())
            .expect("regression data")
            .rows(rows);
        return metrics::r_squared(&part.y, &r.predict(&part.x));
    }
    let c = model
        .as_classifier()
        .expect("a model classifies or predicts numbers");
    let part = data
        .classification("model")
        .expect("classification data")
        .rows(rows);
    metrics::accuracy(&part.y, &c.predict(&part.x))
}

fn entry<'a>(registry: &'a Registry, name: &str) -> &'a FormulationEntry {
    registry.formulation(name).unwrap_or_else(|e| panic!("{e}"))
}

/// A formulation's run on small generated data: its config, data file and output folder
/// (a fresh temporary folder, removed when the setup is dropped).
struct Setup {
    name: String,
    config: ExperimentConfig,
    out: PathBuf,
    dir: PathBuf,
}

impl Setup {
    /// `entry`'s default config on small generated data of its task (binary classes: every
    /// classifier takes them), with `backend` (or the registry's first backend of its kind).
    fn new(
        registry: &Arc<Registry>,
        entry: &FormulationEntry,
        backend: Option<&str>,
        rows: usize,
    ) -> Self {
        let name = entry.info.name.to_string();
        let dir = scratch_dir(&name);
        let regression = entry.tasks.regression && !entry.tasks.classification;
        let data_path = dir.join("data.csv");
        write_data(&data_path, regression, rows);
        let default = entry
            .parse(toml::Table::new())
            .unwrap_or_else(|e| panic!("{name}: its default config: {e}"));
        let solver = match (backend, default.uses_solver()) {
            (Some(b), _) => format!("[solver]\nname = \"{b}\"\ntime_limit = 60.0\n"),
            (None, false) => String::new(),
            (None, true) => {
                let kind = if entry.info.kind == "milp" {
                    "milp"
                } else {
                    "nlp"
                };
                let b = first_backend(registry, kind)
                    .unwrap_or_else(|| panic!("{name}: the registry has no {kind} backend"));
                format!("[solver]\nname = \"{b}\"\ntime_limit = 60.0\n")
            }
        };
        let starts = if entry.info.kind == "nlp" { 2 } else { 1 };
        let text = format!(
            "[data]\npath = \"{}\"\n[split]\ntest_fraction = 0.3\nrepeats = 1\nseed = 1\n\
             [formulation]\nname = \"{name}\"\n{solver}[multistart]\nstarts = {starts}\n",
            data_path.display()
        );
        let config =
            ExperimentConfig::parse_with(&dir.join("config.toml"), &text, registry.clone())
                .unwrap_or_else(|e| panic!("{name}: its config: {e}\n{text}"));
        Setup {
            name,
            config,
            out: dir.join("out"),
            dir,
        }
    }

    /// The config, its data and its one split.
    fn prepared(&self) -> (ExperimentConfig, EngineData, SplitSpec) {
        let config = self.config.clone();
        let data = EngineData::load(&config, config.formulation.regression())
            .unwrap_or_else(|e| panic!("{}: its data: {e}", self.name));
        let split = engine::holdout_splits(&config, &data)
            .unwrap_or_else(|e| panic!("{}: its split: {e}", self.name))
            .remove(0);
        (config, data, split)
    }

    /// Fits the formulation (the one-setting run into `out`); `None` when this build cannot
    /// fit it (a cargo feature left out), which is printed.
    fn fit(&self) -> Option<Vec<SolveRecord>> {
        match experiment::run(&self.config, &self.out, true, false) {
            Ok(outcome) => Some(outcome.records),
            Err(e) if skipped(&e) => {
                eprintln!("conformance (formulation) {}: skipped: {e}", self.name);
                None
            }
            Err(e) => panic!("{}: fitting: {e}", self.name),
        }
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether `e` says that this build cannot fit the formulation (a cargo feature left out).
fn skipped(e: &GlassboxError) -> bool {
    e.to_string().contains("cargo feature")
}

/// The first backend of the registry for problems of `kind` that takes problems without a
/// tensor form (IPOPT first where it is compiled in).
fn first_backend(registry: &Registry, kind: &str) -> Option<&'static str> {
    let of_kind = || {
        registry
            .backends()
            .iter()
            .filter(move |b| b.problem_kind() == kind && b.name != "torch")
    };
    of_kind()
        .find(|b| b.name == "ipopt")
        .or_else(|| of_kind().next())
        .map(|b| b.name)
}

/// A fresh temporary folder for `name`'s run.
fn scratch_dir(name: &str) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "glassbox-conformance-{}-{name}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

/// Writes `rows` seeded rows of 4 features: for classification, binary features (every
/// classifier takes them, including those that need binary features) and a binary class
/// given by a rule on three of them with 10% of the labels flipped; for regression,
/// continuous features and a noisy piecewise-linear target.
fn write_data(path: &Path, regression: bool, rows: usize) {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut uniform = move || {
        // xorshift64*: a seeded stream without a dependency.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut text = String::from("x1,x2,x3,x4,target\n");
    for _ in 0..rows {
        let x: Vec<f64> = (0..4).map(|_| uniform()).collect();
        let line = if regression {
            let v = if x[0] + x[1] > 1.0 {
                2.0 * x[0] - x[2]
            } else {
                -x[1] + 0.5 * x[3]
            };
            let noise = 0.05 * (uniform() - 0.5);
            format!(
                "{:.6},{:.6},{:.6},{:.6},{:.6}",
                x[0],
                x[1],
                x[2],
                x[3],
                v + noise
            )
        } else {
            let b: Vec<u8> = x.iter().map(|&v| u8::from(v > 0.5)).collect();
            let rule = (b[0] == 1 && b[1] == 1) || b[2] == 1;
            let label = rule != (uniform() < 0.1);
            format!(
                "{},{},{},{},{}",
                b[0],
                b[1],
                b[2],
                b[3],
                if label { "yes" } else { "no" }
            )
        };
        text.push_str(&line);
        text.push('\n');
    }
    std::fs::write(path, text).expect("writing the generated data");
}
