//! Comparing solvers on the same instances (`glassbox compare`): results files written by
//! `glassbox run` are read, their solves matched instance by instance across solvers,
//! summarised per solver, and drawn as Dolan-More performance profiles of solve time and as
//! cumulative distributions of absolute gaps to the best objective and test metric per
//! instance, as the thesis does (chapter 3, "performance profiles").
//!
//! An instance is one start of one split of one parameter setting: the data set, the
//! formulation, its parameters (depth, lambda_L, lambda_G, gamma), the split and its seed,
//! the start and its seed. Every solver must have solved the same instances; where they
//! differ, matching refuses (or, asked to, drops the instances some solver lacks and lists
//! them), so no profile mixes instances.
//!
//! Depends on the core (`experiment::SolveRecord`, `plot`, `model::write_atomically`'s
//! discipline through `plot::stage`: the plots of one call are written all or none).

use crate::experiment::SolveRecord;
use crate::plot::{self, Figure};
use crate::{GlassboxError, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};
use std::path::Path;

/// Reads a results file (`results.jsonl`, one JSON line per solve); a bad line is an error
/// naming the file, the line and the column, and a last line cut short (no newline after
/// it: a run interrupted while writing) says so.
pub fn read_results(path: &Path) -> Result<Vec<SolveRecord>> {
    let text = std::fs::read_to_string(path).map_err(|e| GlassboxError::io(path, e))?;
    parse_results(path, &text)
}

/// [`read_results`] on the file's `text`, already read: one record per non-empty line, in
/// order (for a reader that needs the lines' other fields too).
pub fn parse_results(path: &Path, text: &str) -> Result<Vec<SolveRecord>> {
    let mut records = Vec::new();
    let n_lines = text.lines().count();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record = serde_json::from_str(line).map_err(|e| {
            // serde's message ends "at line 1 column C": its line is always 1 here.
            let what = e.to_string();
            let what = what
                .rsplit_once(" at line ")
                .map_or(what.as_str(), |(w, _)| w);
            let partial = if i + 1 == n_lines && !text.ends_with('\n') {
                " (a partial last line: the run was interrupted while writing it; resume \
                 the run, or delete that line)"
            } else {
                ""
            };
            GlassboxError::Data {
                file: path.display().to_string(),
                message: format!(
                    "line {}, column {}: not a results line of `glassbox run`: {what}{partial}",
                    i + 1,
                    e.column()
                ),
            }
        })?;
        records.push(record);
    }
    if records.is_empty() {
        return Err(GlassboxError::Data {
            file: path.display().to_string(),
            message: "no results lines".to_string(),
        });
    }
    Ok(records)
}

/// What identifies an instance: everything that decides the problem and its start.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InstanceKey {
    /// Data set name.
    pub dataset: String,
    /// Formulation name.
    pub formulation: String,
    /// The parameters, written exactly (f64 Debug round-trips), e.g. `depth=2 lambda_L=0.005`.
    pub parameters: String,
    /// Split index.
    pub split: usize,
    /// Seed of the split (the same folds).
    pub split_seed: u64,
    /// Start index.
    pub start: usize,
    /// Seed of the start's random point (none for a warm start).
    pub seed: Option<u64>,
}

impl InstanceKey {
    /// The key of a results line.
    pub fn of(r: &SolveRecord) -> Self {
        let mut parameters = Vec::new();
        if let Some(d) = r.depth {
            parameters.push(format!("depth={d}"));
        }
        for (name, v) in [
            ("lambda_L", r.lambda_local),
            ("lambda_G", r.lambda_global),
            ("gamma", r.gamma),
        ] {
            if let Some(v) = v {
                parameters.push(format!("{name}={v:?}"));
            }
        }
        InstanceKey {
            dataset: r.dataset.clone(),
            formulation: r.formulation.clone(),
            parameters: parameters.join(" "),
            split: r.split,
            split_seed: r.split_seed,
            start: r.start,
            seed: r.seed,
        }
    }
}

impl fmt::Display for InstanceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} [{}] split {} (seed {}) start {}",
            self.dataset,
            self.formulation,
            self.parameters,
            self.split,
            self.split_seed,
            self.start
        )?;
        // No seed: a warm start, or the one start of a MILP or tree-search solve.
        match self.seed {
            Some(s) => write!(f, " (seed {s})"),
            None => write!(f, " (no seed)"),
        }
    }
}

/// What to do when the solvers did not all solve the same instances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// Refuse, with an error listing the instances some solver lacks.
    Refuse,
    /// Compare on the instances every solver has; the others are listed in
    /// [`Comparison::dropped`].
    Drop,
}

/// Solves matched across solvers: `records[s][i]` is solver `s`'s solve of `instances[i]`.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// Solver names, sorted.
    pub solvers: Vec<String>,
    /// The instances every solver solved, sorted.
    pub instances: Vec<InstanceKey>,
    /// One row per solver, one solve per instance.
    pub records: Vec<Vec<SolveRecord>>,
    /// Instances left out (with [`Mismatch::Drop`]) and the solvers that had them.
    pub dropped: Vec<(InstanceKey, Vec<String>)>,
}

/// How many mismatched instances an error or warning lists before "and N more".
const LIST_AT_MOST: usize = 10;

/// Matches the solves of at least two solvers instance by instance. A solver solving an
/// instance twice (the same run given twice) is an error; so are instances some solver
/// lacks, unless `mismatch` is [`Mismatch::Drop`]. The line of a cross-validated choice
/// (S-ORCT's `selection_folds`) is not an instance: it reports a choice between trees,
/// not a solve from a start, and is left out.
pub fn match_instances(records: Vec<SolveRecord>, mismatch: Mismatch) -> Result<Comparison> {
    let mut by_solver: BTreeMap<String, BTreeMap<InstanceKey, SolveRecord>> = BTreeMap::new();
    for r in records.into_iter().filter(|r| !r.is_selection()) {
        let key = InstanceKey::of(&r);
        let solver = r.solver.clone();
        if by_solver
            .entry(solver.clone())
            .or_default()
            .insert(key.clone(), r)
            .is_some()
        {
            return Err(GlassboxError::Config(format!(
                "solver '{solver}' has two results for the instance {key}: give each run once"
            )));
        }
    }
    let solvers: Vec<String> = by_solver.keys().cloned().collect();
    check_same_problem(&by_solver)?;
    if solvers.len() < 2 {
        return Err(GlassboxError::Config(format!(
            "compare needs the results of at least two solvers; these files hold only {}",
            solvers
                .first()
                .map_or("none".to_string(), |s| format!("'{s}'"))
        )));
    }
    let all: BTreeSet<&InstanceKey> = by_solver.values().flat_map(|m| m.keys()).collect();
    let mut instances = Vec::new();
    let mut dropped = Vec::new();
    for key in all {
        let having: Vec<String> = solvers
            .iter()
            .filter(|s| by_solver[*s].contains_key(key))
            .cloned()
            .collect();
        if having.len() == solvers.len() {
            instances.push(key.clone());
        } else {
            dropped.push((key.clone(), having));
        }
    }
    if !dropped.is_empty() && mismatch == Mismatch::Refuse {
        return Err(GlassboxError::Config(format!(
            "the solvers did not solve the same instances ({} of {} are not solved by every \
             solver): {}; compare runs of the same config with only the solver changed, or \
             pass --drop-unmatched to compare on the common instances",
            dropped.len(),
            dropped.len() + instances.len(),
            list_dropped(&dropped)
        )));
    }
    if instances.is_empty() {
        return Err(GlassboxError::Config(format!(
            "the solvers have no instance in common: {}",
            list_dropped(&dropped)
        )));
    }
    let records = solvers
        .iter()
        .map(|s| {
            let mine = &by_solver[s];
            instances.iter().map(|k| mine[k].clone()).collect()
        })
        .collect();
    Ok(Comparison {
        solvers,
        instances,
        records,
        dropped,
    })
}

/// Checks that every solver of an instance solved the same problem: the same problem
/// fingerprint (data contents, split protocol, formulation and its parameters, which the
/// engine writes on each line), and, for lines written before it, as many training and test
/// rows. Runs of different configs (another test fraction, another `min_leaf`, another file
/// of the same name) share the instance keys but not the problem, and their times and
/// objectives must not be compared.
fn check_same_problem(
    by_solver: &BTreeMap<String, BTreeMap<InstanceKey, SolveRecord>>,
) -> Result<()> {
    let mut first: BTreeMap<&InstanceKey, (&str, &SolveRecord)> = BTreeMap::new();
    for (solver, instances) in by_solver {
        for (key, r) in instances {
            let (other, o) = *first.entry(key).or_insert((solver, r));
            let differ = match (&o.problem_fingerprint, &r.problem_fingerprint) {
                (Some(a), Some(b)) if a != b => Some(format!(
                    "'{other}' and '{solver}' ran different data, splits or formulation \
                     settings (problem fingerprints {a} and {b})"
                )),
                _ if (o.n_train, o.n_test) != (r.n_train, r.n_test) => Some(format!(
                    "'{other}' trained on {} rows and tested on {}, '{solver}' on {} and {}",
                    o.n_train, o.n_test, r.n_train, r.n_test
                )),
                _ => None,
            };
            if let Some(differ) = differ {
                return Err(GlassboxError::Config(format!(
                    "the instance {key} is not the same problem for every solver: {differ}; \
                     compare runs of the same config with only the solver changed"
                )));
            }
        }
    }
    Ok(())
}

/// The first few dropped instances, each with the solvers that had it, as one line.
pub fn list_dropped(dropped: &[(InstanceKey, Vec<String>)]) -> String {
    let mut out: Vec<String> = dropped
        .iter()
        .take(LIST_AT_MOST)
        .map(|(k, having)| format!("{k} only by {}", having.join(", ")))
        .collect();
    if dropped.len() > LIST_AT_MOST {
        out.push(format!("and {} more", dropped.len() - LIST_AT_MOST));
    }
    out.join("; ")
}

/// Whether a status returned a usable point (optimal, locally optimal, feasible at a limit):
/// the statuses of `TerminationStatus::has_solution`, by their results-file names.
pub fn has_solution(status: &str) -> bool {
    converged(status) || status.ends_with("_feasible")
}

/// Whether a solve converged: the backend certified optimality (MILP) or first-order
/// stationarity (NLP). The time profile counts only these as solved: a solve stopped by a
/// limit did not finish in its time, whatever point it returned (the thesis' MIP profiles
/// likewise count a solve as solved when it closed the gap within the time limit).
pub fn converged(status: &str) -> bool {
    status == "optimal" || status == "locally_optimal"
}

/// Times below this are taken as this, so a ratio never divides by zero.
const MIN_SECONDS: f64 = 1e-6;

/// Dolan-More performance ratios, `ratios[s][i] = c[s][i] / min_s' c[s'][i]`, from
/// `costs[s][i]` (`None`: solver `s` failed on instance `i`, ratio infinite). An instance no
/// solver solved has infinite ratios for all.
pub fn performance_ratios(costs: &[Vec<Option<f64>>]) -> Vec<Vec<f64>> {
    let n = costs.first().map_or(0, Vec::len);
    let best: Vec<Option<f64>> = (0..n)
        .map(|i| {
            costs
                .iter()
                .filter_map(|c| c[i].map(|v| v.max(MIN_SECONDS)))
                .reduce(f64::min)
        })
        .collect();
    costs
        .iter()
        .map(|c| {
            (0..n)
                .map(|i| match (c[i], best[i]) {
                    (Some(v), Some(b)) => v.max(MIN_SECONDS) / b,
                    _ => f64::INFINITY,
                })
                .collect()
        })
        .collect()
}

/// Whether the best value of a metric is its smallest (objective) or its largest (accuracy).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Best {
    /// Smaller is better.
    Min,
    /// Larger is better.
    Max,
}

/// The thesis' absolute gaps `|mu[s][i] - opt_s' mu[s'][i]|`, from `values[s][i]` (`None`:
/// no value, gap infinite).
pub fn absolute_gaps(values: &[Vec<Option<f64>>], best: Best) -> Vec<Vec<f64>> {
    let n = values.first().map_or(0, Vec::len);
    let opt: Vec<Option<f64>> = (0..n)
        .map(|i| {
            values.iter().filter_map(|v| v[i]).reduce(match best {
                Best::Min => f64::min,
                Best::Max => f64::max,
            })
        })
        .collect();
    values
        .iter()
        .map(|v| {
            (0..n)
                .map(|i| match (v[i], opt[i]) {
                    (Some(x), Some(o)) => (x - o).abs(),
                    _ => f64::INFINITY,
                })
                .collect()
        })
        .collect()
}

/// The profile `rho(tau)`: the fraction of instances whose ratio (or gap) is at most `tau`.
pub fn fraction_at_most(values: &[f64], tau: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.iter().filter(|&&v| v <= tau).count() as f64 / values.len() as f64
}

/// The test metric compared: accuracy for classification, R squared for regression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestMetric {
    /// `test_accuracy`.
    Accuracy,
    /// `test_r2`.
    R2,
}

impl TestMetric {
    /// The metric of these solves: R squared when any line has regression metrics.
    pub fn of(c: &Comparison) -> Self {
        if c.records.iter().flatten().any(|r| r.regression.is_some()) {
            TestMetric::R2
        } else {
            TestMetric::Accuracy
        }
    }

    /// Its name in tables and plots.
    pub fn name(self) -> &'static str {
        match self {
            TestMetric::Accuracy => "test accuracy",
            TestMetric::R2 => "test R2",
        }
    }

    /// Its value on a solve that returned a point.
    pub fn value(self, r: &SolveRecord) -> Option<f64> {
        let v = match self {
            TestMetric::Accuracy => r.test_accuracy,
            TestMetric::R2 => r.regression.as_ref()?.test_r2,
        };
        (has_solution(&r.status) && v.is_finite()).then_some(v)
    }
}

impl Comparison {
    /// `time[s][i]`: the solve time where the solve converged, else `None` (failed).
    pub fn times(&self) -> Vec<Vec<Option<f64>>> {
        self.column(|r| converged(&r.status).then_some(r.solve_seconds))
    }

    /// `objective[s][i]`: the objective where the solve returned a point.
    pub fn objectives(&self) -> Vec<Vec<Option<f64>>> {
        self.column(|r| {
            r.objective
                .filter(|v| v.is_finite() && has_solution(&r.status))
        })
    }

    /// The absolute gaps of [`Comparison::objectives`] to each instance's best objective:
    /// the smallest, or the largest where the formulation maximizes (its results lines say
    /// `"maximize": true`, as FlowOCT's do).
    pub fn objective_gaps(&self) -> Vec<Vec<f64>> {
        let objectives = self.objectives();
        let smallest = absolute_gaps(&objectives, Best::Min);
        let largest = absolute_gaps(&objectives, Best::Max);
        smallest
            .into_iter()
            .zip(largest)
            .map(|(to_min, to_max)| {
                (0..to_min.len())
                    .map(|i| {
                        if self.maximizes(i) {
                            to_max[i]
                        } else {
                            to_min[i]
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// Whether instance `i`'s formulation maximizes its objective.
    fn maximizes(&self, i: usize) -> bool {
        self.records
            .iter()
            .any(|row| row[i].milp.as_ref().is_some_and(|m| m.maximize))
    }

    /// `metric[s][i]`: the test metric where the solve returned a point.
    pub fn metrics(&self, metric: TestMetric) -> Vec<Vec<Option<f64>>> {
        self.column(|r| metric.value(r))
    }

    fn column(&self, f: impl Fn(&SolveRecord) -> Option<f64>) -> Vec<Vec<Option<f64>>> {
        self.records
            .iter()
            .map(|row| row.iter().map(&f).collect())
            .collect()
    }

    /// The per-solver tables: status counts, then times, objectives, gaps and the test
    /// metric, with the profile values at 1 (fastest, best).
    pub fn summary(&self) -> String {
        let metric = TestMetric::of(self);
        let ratios = performance_ratios(&self.times());
        let objectives = self.objectives();
        let objective_gaps = self.objective_gaps();
        let mut out = String::new();
        let n = self.instances.len();
        let _ = writeln!(
            out,
            "{n} instances solved by each of {} solvers",
            self.solvers.len()
        );
        // Status counts, one column per status seen.
        let statuses: BTreeSet<&str> = self
            .records
            .iter()
            .flatten()
            .map(|r| r.status.as_str())
            .collect();
        let w = self
            .solvers
            .iter()
            .map(String::len)
            .max()
            .unwrap_or(6)
            .max(6);
        let _ = write!(out, "\n{:<w$}", "solver");
        for s in &statuses {
            let _ = write!(out, "  {s:>w2$}", w2 = s.len().max(5));
        }
        out.push('\n');
        for (name, row) in self.solvers.iter().zip(&self.records) {
            let _ = write!(out, "{name:<w$}");
            for s in &statuses {
                let count = row.iter().filter(|r| r.status == *s).count();
                let _ = write!(out, "  {count:>w2$}", w2 = s.len().max(5));
            }
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "\n{:<w$}  {:>9}  {:>9}  {:>9}  {:>9}  {:>14}  {:>12}  {:>9}  {:>9}  {:>9}",
            "solver",
            "time mean",
            "time med",
            "fastest",
            "converged",
            "objective mean",
            "obj gap mean",
            "obj best",
            "mip gap",
            metric.name()
        );
        for (s, name) in self.solvers.iter().enumerate() {
            let row = &self.records[s];
            let times: Vec<f64> = row.iter().map(|r| r.solve_seconds).collect();
            let objective_values: Vec<f64> = objectives[s].iter().flatten().copied().collect();
            let finite_gaps: Vec<f64> = objective_gaps[s]
                .iter()
                .copied()
                .filter(|g| g.is_finite())
                .collect();
            let mip_gaps: Vec<f64> = row
                .iter()
                .filter_map(|r| r.milp.as_ref().and_then(|m| m.mip_gap))
                .filter(|g| g.is_finite())
                .collect();
            let metrics: Vec<f64> = row.iter().filter_map(|r| metric.value(r)).collect();
            let best = objective_gaps[s]
                .iter()
                .zip(&objectives[s])
                .filter(|(g, v)| v.is_some_and(|v| **g <= BEST_TOLERANCE * v.abs().max(1.0)))
                .count();
            let _ = writeln!(
                out,
                "{name:<w$}  {:>9}  {:>9}  {:>9}  {:>9}  {:>14}  {:>12}  {:>9}  {:>9}  {:>9}",
                fmt_num(mean(&times)),
                fmt_num(crate::experiment::median(&times)),
                format!("{:.0}%", 100.0 * fraction_at_most(&ratios[s], 1.0)),
                format!("{:.0}%", 100.0 * fraction_at_most(&ratios[s], f64::MAX)),
                fmt_num(mean(&objective_values)),
                fmt_num(mean(&finite_gaps)),
                format!("{:.0}%", 100.0 * best as f64 / n as f64),
                fmt_num(mean(&mip_gaps)),
                fmt_num(mean(&metrics)),
            );
        }
        let _ = writeln!(
            out,
            "\ntimes in seconds (means over all solves); fastest: share of instances where the \
             solver converged fastest (rho(1)); converged: share converged (optimal or locally \
             optimal); obj gap: |objective - best objective of the instance| over solves with \
             a point; obj best: share within {BEST_TOLERANCE:e} (relative) of the best; mip \
             gap where the backend reports one; - where none"
        );
        out
    }

    /// Draws every plot of `plots` (`.png` or `.svg`), all or none: each is drawn to a
    /// temporary file first, and put in place only when all were drawn. The notes of plots
    /// drawn without text.
    pub fn write_plots(&self, plots: &[(PlotKind, &Path)]) -> Result<Vec<String>> {
        let staged = plots
            .iter()
            .map(|&(kind, path)| self.plot(kind, path))
            .collect::<Result<Vec<_>>>()?;
        let mut notes: Vec<String> = staged.iter().filter_map(|s| s.note.clone()).collect();
        notes.dedup();
        for plot in staged {
            plot.put_in_place()?;
        }
        Ok(notes)
    }

    /// Draws `kind` for `path` (`.png` or `.svg`) into its temporary file.
    fn plot(&self, kind: PlotKind, path: &Path) -> Result<plot::Staged> {
        let (title, x_desc, values) = match kind {
            PlotKind::TimeProfile => {
                // On log2(tau), as Dolan and More draw it: ratios span orders of magnitude.
                let log2 = performance_ratios(&self.times())
                    .iter()
                    .map(|r| r.iter().map(|v| v.log2()).collect())
                    .collect();
                (
                    "Performance profile of solve time".to_string(),
                    "log2(tau): solve time / fastest solve time of the instance".to_string(),
                    log2,
                )
            }
            PlotKind::ObjectiveGaps => (
                "Absolute gap to the best objective".to_string(),
                "tau: |objective - best objective of the instance|".to_string(),
                self.objective_gaps(),
            ),
            PlotKind::MetricGaps => {
                let metric = TestMetric::of(self);
                (
                    format!("Absolute gap to the best {}", metric.name()),
                    format!("tau: |{0} - best {0} of the instance|", metric.name()),
                    absolute_gaps(&self.metrics(metric), Best::Max),
                )
            }
        };
        self.plot_distribution(path, &title, &x_desc, values)
    }

    fn plot_distribution(
        &self,
        path: &Path,
        title: &str,
        x_desc: &str,
        values: Vec<Vec<f64>>,
    ) -> Result<plot::Staged> {
        let figure = Distribution {
            title: format!("{title} ({} instances)", self.instances.len()),
            x_desc: x_desc.to_string(),
            solvers: self.solvers.clone(),
            values,
        };
        plot::stage(&figure, path, (900, 600))
    }
}

/// The plots `glassbox compare` draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlotKind {
    /// The Dolan-More performance profile of solve time (converged solves only).
    TimeProfile,
    /// The cumulative distribution of absolute gaps to the best objective per instance.
    ObjectiveGaps,
    /// The same for the test metric (accuracy, or R squared for regression).
    MetricGaps,
}

/// An objective within this relative distance of the instance's best counts as the best.
const BEST_TOLERANCE: f64 = 1e-6;

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        "-".to_string()
    } else if v != 0.0 && (v.abs() < 1e-3 || v.abs() >= 1e5) {
        format!("{v:.3e}")
    } else {
        format!("{v:.4}")
    }
}

/// Step curves `rho_s(tau)` of one value per instance and solver (infinite: never reached).
struct Distribution {
    title: String,
    x_desc: String,
    solvers: Vec<String>,
    values: Vec<Vec<f64>>,
}

impl Distribution {
    /// The x range: from the smallest value (0 for a ratio's log2 or a gap) to a little past
    /// the largest finite one, so the last step shows.
    fn x_range(&self) -> (f64, f64) {
        let finite = || {
            self.values
                .iter()
                .flatten()
                .copied()
                .filter(|v| v.is_finite())
        };
        let lo = finite().fold(0.0f64, f64::min);
        let hi = finite().fold(lo, f64::max);
        let span = if hi > lo { hi - lo } else { 1.0 };
        (lo, hi + 0.08 * span)
    }

    /// The step curve of one solver over `[lo, hi]`.
    fn steps(values: &[f64], lo: f64, hi: f64) -> Vec<(f64, f64)> {
        let n = values.len().max(1) as f64;
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        let mut points = vec![(lo, 0.0)];
        for (k, v) in sorted.iter().enumerate() {
            points.push((*v, k as f64 / n));
            points.push((*v, (k + 1) as f64 / n));
        }
        points.push((hi, sorted.len() as f64 / n));
        points
    }
}

impl Figure for Distribution {
    fn draw<DB: plotters::prelude::DrawingBackend>(
        &self,
        backend: DB,
        text: bool,
    ) -> std::result::Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        use plotters::prelude::*;
        let e = |x: &dyn std::fmt::Display| x.to_string();
        let root = backend.into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let (lo, hi) = self.x_range();
        let mut builder = ChartBuilder::on(&root);
        builder
            .margin(20)
            .x_label_area_size(if text { 60 } else { 10 })
            .y_label_area_size(if text { 70 } else { 10 });
        if text {
            builder.caption(&self.title, ("sans-serif", 22));
        }
        let mut chart = builder
            .build_cartesian_2d(lo..hi, 0.0f64..1.02)
            .map_err(|x| e(&x))?;
        if text {
            chart
                .configure_mesh()
                .x_desc(&self.x_desc)
                .y_desc("rho(tau): share of instances")
                .axis_desc_style(("sans-serif", 18))
                .label_style(("sans-serif", 15))
                .draw()
                .map_err(|x| e(&x))?;
        }
        for (s, name) in self.solvers.iter().enumerate() {
            let color = Palette99::pick(s).to_rgba();
            let series = chart
                .draw_series(LineSeries::new(
                    Distribution::steps(&self.values[s], lo, hi),
                    color.stroke_width(2),
                ))
                .map_err(|x| e(&x))?;
            if text {
                series
                    .label(name.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            }
        }
        if text {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .label_font(("sans-serif", 16))
                .draw()
                .map_err(|x| e(&x))?;
        }
        root.present().map_err(|x| e(&x))?;
        Ok(())
    }
}
