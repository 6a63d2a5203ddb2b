//! `glassbox._native`: the Python package's extension module. A thin layer over the glassbox
//! library: it lists the registry (formulations, backends), fits one formulation on columns
//! held in memory through the experiment engine's per-split path (the very path every
//! `glassbox run` takes: `Formulation::run` on one split whose training rows are all the
//! rows), loads and saves models in the CLI's files, predicts, describes and draws them,
//! and runs configs and comparisons as the CLI does. The scikit-learn classes are Python
//! (`python/glassbox/`), generated from `formulations`.
//!
//! Every long call releases the GIL and runs on a worker thread while the calling thread
//! watches for Python signals (`interruptible`): Ctrl-C asks the run to stop (a running
//! IPOPT, HiGHS, lbfgs or torch solve at its next iteration, dp at its next search step,
//! another backend's solve when it ends) and is
//! then raised as `KeyboardInterrupt`, with nothing returned. Errors: a problem with the
//! input (config, data, parameters, options, model files) is a `ValueError` whose message
//! names it; a file that cannot be read or written an `OSError`; anything else a
//! `RuntimeError`.
//!
//! Depends on the `glassbox` crate (registry, experiment engine, core types) and PyO3.

mod convert;
mod model;

use convert::{columns_table, json_to_toml, to_py_err};
use glassbox::experiment::engine::{self, RunOptions, SplitSpec};
use glassbox::experiment::grid::Experiment;
use glassbox::experiment::unit::{EngineData, UnitCarry};
use glassbox::experiment::ExperimentConfig;
use glassbox::registry::Registry;
use glassbox::Interrupt;
use model::Model;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The name of the data set in the records of an in-memory fit (the `dataset` field).
const IN_MEMORY: &str = "in-memory";

/// Every formulation of the registry as a dict: name, kind, description, tasks, whether its
/// models draw and explain, and its parameters (name, default as TOML text, help, and the
/// default as a value where the text is one).
#[pyfunction]
fn formulations() -> PyResult<String> {
    let registry = Registry::shared_builtin();
    let list: Vec<serde_json::Value> = registry
        .formulations()
        .iter()
        .map(|e| {
            serde_json::json!({
                "name": e.info.name,
                "kind": e.info.kind,
                "description": e.info.description,
                "classification": e.tasks.classification,
                "regression": e.tasks.regression,
                "draws": e.draws,
                "explains": e.explains,
                // Whether a refit can start from the previous model (the formulation's
                // defaults decide: every entry parses an empty table).
                "starts_from_model": e
                    .parse(Default::default())
                    .is_ok_and(|f| f.starts_from_model()),
                "parameters": e.info.parameters.iter().map(|p| serde_json::json!({
                    "name": p.name,
                    "default": p.default,
                    "help": p.help,
                    "value": default_value(p.default),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    Ok(serde_json::Value::Array(list).to_string())
}

/// A parameter's default (TOML text, as the registry writes it for people) as a value, or
/// null where the text is not a TOML value ("-", "0.5 off the diagonal"): the formulation's
/// own default then applies.
fn default_value(text: &str) -> serde_json::Value {
    toml::from_str::<toml::Table>(&format!("v = {text}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .and_then(|v| serde_json::to_value(v).ok())
        .unwrap_or(serde_json::Value::Null)
}

/// What the formulation `name` with parameters `params` (a JSON object) is once read by its
/// registry entry: whether it uses a backend, learns a regression, can be decomposed. A
/// parameter the entry refuses is a `ValueError` naming it.
#[pyfunction]
fn probe(name: &str, params: &str) -> PyResult<String> {
    let registry = Registry::shared_builtin();
    let entry = registry.formulation(name).map_err(to_py_err)?;
    let table = json_to_toml(params)?;
    let formulation = entry
        .parse(table)
        .map_err(|e| PyValueError::new_err(format!("{name}: {e}")))?;
    Ok(serde_json::json!({
        "uses_solver": formulation.uses_solver(),
        "regression": formulation.regression(),
        "decomposable": formulation.decomposable(),
    })
    .to_string())
}

/// Every backend compiled into this build: name, problem kind, description, capabilities
/// and raw options (name, type, help), as `glassbox solvers` lists them.
#[pyfunction]
fn solvers() -> String {
    let list: Vec<serde_json::Value> = Registry::shared_builtin()
        .backends()
        .iter()
        .map(|e| {
            let options: Vec<serde_json::Value> = e
                .options
                .iter()
                .map(|o| {
                    serde_json::json!({
                        "name": o.name,
                        "type": format!("{:?}", o.kind),
                        "help": o.help,
                    })
                })
                .collect();
            serde_json::json!({
                "name": e.name,
                "problem_kind": e.problem_kind(),
                "description": e.description,
                "capabilities": e.capabilities.names(),
                "options": options,
            })
        })
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// Runs `work` on a worker thread with the GIL released, checking Python's signals on the
/// calling thread every 50 ms: on `KeyboardInterrupt` (or any exception a signal handler
/// raises) it sets `stop`, waits for the work to notice it (in a solve that checks it, else
/// between solves) and returns the exception instead of the work's result.
fn interruptible<T: Send>(
    py: Python<'_>,
    stop: &AtomicBool,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    let mut signal: Option<PyErr> = None;
    let out = py.allow_threads(|| {
        std::thread::scope(|scope| {
            let handle = scope.spawn(work);
            while !handle.is_finished() {
                std::thread::park_timeout(Duration::from_millis(50));
                if signal.is_none() {
                    if let Err(e) = Python::with_gil(|py| py.check_signals()) {
                        stop.store(true, Ordering::SeqCst);
                        signal = Some(e);
                    }
                }
            }
            handle.join()
        })
    });
    if let Some(e) = signal {
        return Err(e);
    }
    out.map_err(|_| {
        pyo3::exceptions::PyRuntimeError::new_err(
            "glassbox: the fit panicked (a bug: please report it)",
        )
    })
}

/// Fits formulation `name` with parameters `params` (a JSON object, the `[formulation]`
/// table without `name`) on the table of `columns` and `target` through the engine's
/// per-split path: one split whose training and test rows are all the rows, the multistart
/// of `starts` random starts seeded by `seed` (and the saved model `warm_start`, if given),
/// solved by backend `solver` with `time_limit`, `verbosity` and raw options
/// `solver_options` (a JSON object, checked against the backend's as a config's `[solver]
/// raw` table), categorical columns coded by `dummies` (a config's `[data] dummies`).
/// Returns the selected model (none when no start gave a usable solution) and the results
/// lines of the solves as a JSON array.
#[pyfunction]
#[pyo3(signature = (name, params, columns, target_name, target, solver, solver_options, time_limit, verbosity, starts, seed, warm_start, dummies))]
#[allow(clippy::too_many_arguments)]
fn fit(
    py: Python<'_>,
    name: &str,
    params: &str,
    columns: &Bound<'_, PyList>,
    target_name: &str,
    target: Vec<String>,
    solver: Option<String>,
    solver_options: &str,
    time_limit: Option<f64>,
    verbosity: u8,
    starts: usize,
    seed: u64,
    warm_start: Option<PathBuf>,
    dummies: &str,
) -> PyResult<(Option<Model>, String)> {
    let mut config = toml::Table::new();
    let mut data = toml::Table::new();
    data.insert("path".into(), IN_MEMORY.into());
    data.insert("target".into(), target_name.into());
    data.insert("dummies".into(), dummies.into());
    config.insert("data".into(), data.into());
    let mut formulation = json_to_toml(params)?;
    formulation.insert("name".into(), name.into());
    config.insert("formulation".into(), formulation.into());
    if let Some(solver) = solver {
        let mut table = toml::Table::new();
        table.insert("name".into(), solver.into());
        if let Some(t) = time_limit {
            table.insert("time_limit".into(), t.into());
        }
        table.insert("verbosity".into(), i64::from(verbosity).into());
        table.insert("raw".into(), json_to_toml(solver_options)?.into());
        config.insert("solver".into(), table.into());
    }
    let mut multistart = toml::Table::new();
    multistart.insert("starts".into(), (starts as i64).into());
    multistart.insert("seed".into(), convert::toml_u64(seed, "random_state")?);
    if let Some(path) = &warm_start {
        multistart.insert("warm_start".into(), path.display().to_string().into());
    }
    config.insert("multistart".into(), multistart.into());
    let text = toml::to_string(&config).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut config =
        ExperimentConfig::parse_with(Path::new("<python>"), &text, Registry::shared_builtin())
            .map_err(to_py_err)?;
    // Ctrl-C reaches the running solve too (IPOPT, HiGHS, lbfgs and torch stop at their next
    // iteration, CBC's backend returns within 50 ms).
    let stop = Arc::new(AtomicBool::new(false));
    config.solver.options.interrupt = Some(Interrupt::new(stop.clone()));

    let table = columns_table(IN_MEMORY, columns, target_name, target)?;
    let formulation = config.formulation.clone();
    let unit = interruptible(py, &stop, || {
        let data =
            EngineData::of_table(table, None, formulation.regression(), config.data.dummies)?;
        formulation.check(&config, &data)?;
        let rows: Vec<usize> = (0..data.n_samples()).collect();
        let split = SplitSpec {
            id: 0,
            seed: config.split.seed,
            role: "holdout",
            fold: None,
            outer_fold: None,
            train: rows.clone(),
            test: rows,
        };
        let bar = indicatif::ProgressBar::hidden();
        formulation.run(
            &config,
            &data,
            &split,
            &UnitCarry {
                previous: None,
                stop: &|| stop.load(Ordering::SeqCst),
                model_path: None,
                progress: &bar,
            },
        )
    })?
    .map_err(to_py_err)?;
    let records =
        serde_json::to_string(&unit.records).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let model = unit.model.map(|m| Model::new(name.to_string(), m));
    Ok((model, records))
}

/// Runs an experiment config (the file `path`, or the TOML text `text` whose relative paths
/// are resolved from `base`) on the experiment engine into `out`, as `glassbox run --jobs
/// JOBS` does: a grid, protocol or one setting; resumable and interruptible as the CLI's run.
/// Returns the results file's path.
#[pyfunction]
#[pyo3(signature = (path, text, base, out, force, jobs))]
fn run(
    py: Python<'_>,
    path: Option<PathBuf>,
    text: Option<String>,
    base: PathBuf,
    out: PathBuf,
    force: bool,
    jobs: usize,
) -> PyResult<String> {
    let registry = Registry::shared_builtin();
    let grid = match (path, text) {
        (Some(path), _) => Experiment::load_with(&path, registry),
        (None, Some(text)) => {
            let table = json_to_toml(&text)?;
            let text = toml::to_string(&table).map_err(|e| PyValueError::new_err(e.to_string()))?;
            Experiment::parse_with(&base.join("<dict>.toml"), &text, registry)
        }
        (None, None) => return Err(PyValueError::new_err("give a config path or a dict")),
    }
    .map_err(to_py_err)?;
    let stop = Arc::new(AtomicBool::new(false));
    let options = RunOptions {
        out,
        force,
        jobs: jobs.max(1),
        shard: None,
        progress: false,
        stop: stop.clone(),
    };
    let outcome = interruptible(py, &stop, || engine::run(&grid, &options))?.map_err(to_py_err)?;
    match outcome.ending {
        engine::Ending::Finished => Ok(outcome.results_path.display().to_string()),
        engine::Ending::BudgetSpent => Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
            "the time budget (experiment.time_budget) is spent: {} of {} cell-splits are in {}; \
             run again with the same out to finish the rest",
            outcome.done_units,
            outcome.shard_units,
            outcome.results_path.display()
        ))),
        // A stop is only asked for by a signal, which `interruptible` has raised.
        engine::Ending::Interrupted => Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(
            "interrupted",
        )),
    }
}

/// `glassbox compare`: matches the solves of the results files, draws the plots asked for
/// (time profile, objective gaps, metric gaps: paths or None) and returns the summary and
/// the instances left out (with `drop_unmatched`).
#[pyfunction]
#[pyo3(signature = (results, drop_unmatched, time_profile, objective_gaps, metric_gaps))]
fn compare(
    results: Vec<PathBuf>,
    drop_unmatched: bool,
    time_profile: Option<PathBuf>,
    objective_gaps: Option<PathBuf>,
    metric_gaps: Option<PathBuf>,
) -> PyResult<(String, String, Vec<String>)> {
    use glassbox::compare::{self, Mismatch, PlotKind};
    let plots = [
        (PlotKind::TimeProfile, time_profile),
        (PlotKind::ObjectiveGaps, objective_gaps),
        (PlotKind::MetricGaps, metric_gaps),
    ];
    for (_, path) in &plots {
        if let Some(path) = path {
            glassbox::plot::plot_extension(path).map_err(to_py_err)?;
        }
    }
    let mut records = Vec::new();
    for path in &results {
        records.extend(compare::read_results(path).map_err(to_py_err)?);
    }
    let mismatch = if drop_unmatched {
        Mismatch::Drop
    } else {
        Mismatch::Refuse
    };
    let comparison = compare::match_instances(records, mismatch).map_err(to_py_err)?;
    let dropped = if comparison.dropped.is_empty() {
        String::new()
    } else {
        compare::list_dropped(&comparison.dropped)
    };
    let asked: Vec<(PlotKind, &std::path::Path)> = plots
        .iter()
        .filter_map(|(kind, path)| Some((*kind, path.as_deref()?)))
        .collect();
    let notes = comparison.write_plots(&asked).map_err(to_py_err)?;
    Ok((comparison.summary(), dropped, notes))
}

/// The names of the backends compiled into this build (`torch` among them with that feature).
#[pyfunction]
fn build_features() -> Vec<&'static str> {
    Registry::shared_builtin()
        .backends()
        .iter()
        .map(|e| e.name)
        .collect()
}

/// The glassbox library's version.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    glassbox::allocator::keep_freed_memory();
    m.add_class::<Model>()?;
    m.add_function(wrap_pyfunction!(formulations, m)?)?;
    m.add_function(wrap_pyfunction!(probe, m)?)?;
    m.add_function(wrap_pyfunction!(solvers, m)?)?;
    m.add_function(wrap_pyfunction!(fit, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(model::load_model, m)?)?;
    m.add_function(wrap_pyfunction!(model::load_model_text, m)?)?;
    m.add_function(wrap_pyfunction!(build_features, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
