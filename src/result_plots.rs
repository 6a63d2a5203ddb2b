//! Plots of experiment results (`glassbox plot`): the papers' figures drawn from
//! `results.jsonl` files written by `glassbox run`.
//!
//! - [`PlotKind::Heatmap`]: test accuracy, delta_L and delta_G over the (lambda_L, lambda_G)
//!   grid, one row of three heatmaps per data set (S-ORCT paper, Fig. 5);
//! - [`PlotKind::Lambda`]: accuracy and sparsity against the lambda that varies (S-ORCT
//!   paper, Figs. 2-4), one panel per data set;
//! - [`PlotKind::Scatter`]: accuracy (or R squared) against sparsity, one point per parameter
//!   setting, one series per results file, one panel per data set (S-ORRT paper, Fig. 4:
//!   S-ORRT against CART and random forest).
//!
//! Every point is the mean over splits of the selected start of each split (the start with
//! the best objective, `selected` in the results line), as the papers average their runs.
//! Bad input (a file that is not a results file, an empty file, a line without the fields a
//! plot needs) is one error naming the file, and no plot file is written.
//!
//! Depends on the core only (`experiment::SolveRecord`, `compare::parse_results`, `plot`).

use crate::compare::{has_solution, parse_results, TestMetric};

use crate::experiment::SolveRecord;
use crate::plot::{self, Figure};
use crate::{GlassboxError, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The most lambda labels an x axis carries: upright labels such as "5.21e-3" (11 px) fit
/// a panel of a third of the figure's width about eight times.
const MAX_UPRIGHT_LABELS: usize = 8;

/// The plots `glassbox plot` draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlotKind {
    /// Accuracy / delta_L / delta_G heatmaps over (lambda_L, lambda_G).
    Heatmap,
    /// Accuracy and sparsity against lambda.
    Lambda,
    /// Accuracy against sparsity, one series per results file.
    Scatter,
}

/// The results of one file: its path (for error messages), a series label, its lines.
#[derive(Clone, Debug)]
pub struct Series {
    /// The file the lines came from.
    pub path: PathBuf,
    /// The legend label.
    pub label: String,
    /// Its results lines (a nested protocol's inner-fold lines left out).
    pub records: Vec<SolveRecord>,
    /// Per line, the grid axes other than the lambdas, the depth and the solver (`gamma=2`),
    /// which make panels (and scatter points) of their own: empty for a line of no grid.
    pub other_axes: Vec<String>,
}

impl Series {
    /// Reads a results file; `label` defaults to the formulation (and depth) of its lines.
    /// A grid's lines are read with their axes: the inner folds of a nested protocol (model
    /// selection, not results) are left out, and its axes besides the lambdas and the depth
    /// are kept to panel by (averaging two gammas into one point told nothing).
    pub fn read(path: &Path, label: Option<String>) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| GlassboxError::io(path, e))?;
        let records = parse_results(path, &text)?;
        // parse_results parsed every non-empty line, so these are its lines, in order.
        let engine: Vec<(bool, String)> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let line: serde_json::Value = serde_json::from_str(l).unwrap_or_default();
                let inner = line.get("split_role").and_then(|r| r.as_str()) == Some("inner");
                (inner, other_axes(&line))
            })
            .collect();
        let (records, other_axes): (Vec<SolveRecord>, Vec<String>) = records
            .into_iter()
            .zip(engine)
            .filter(|(_, (inner, _))| !inner)
            .map(|(r, (_, axes))| (r, axes))
            .unzip();
        if records.is_empty() {
            return Err(missing(path, "only a nested protocol's inner-fold lines"));
        }
        let label = label.unwrap_or_else(|| default_label(&records));
        Ok(Series {
            path: path.to_path_buf(),
            label,
            records,
            other_axes,
        })
    }
}

/// A grid line's axes other than the lambdas and the depth, as `key=value, ...`.
fn other_axes(line: &serde_json::Value) -> String {
    let Some(grid) = line.get("grid").and_then(|g| g.as_object()) else {
        return String::new();
    };
    // The solver is a panel's own key already.
    grid.iter()
        .filter(|(k, _)| !k.starts_with("lambda_") && !["depth", "solver"].contains(&k.as_str()))
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// "sorct D=2", "cart", or "sorrt D=1, D=2" when a file mixes depths.
fn default_label(records: &[SolveRecord]) -> String {
    let mut formulations: Vec<&str> = records.iter().map(|r| r.formulation.as_str()).collect();
    formulations.dedup();
    formulations.sort_unstable();
    formulations.dedup();
    let mut depths: Vec<usize> = records.iter().filter_map(|r| r.depth).collect();
    depths.sort_unstable();
    depths.dedup();
    let depths: Vec<String> = depths.iter().map(|d| format!("D={d}")).collect();
    if depths.is_empty() {
        formulations.join("+")
    } else {
        format!("{} {}", formulations.join("+"), depths.join(", "))
    }
}

/// One parameter setting: what a point of a plot stands for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Setting {
    /// Tree depth.
    pub depth: Option<usize>,
    /// lambda_L (absolute; 0 where the line has none).
    pub lambda_local: f64,
    /// lambda_G (absolute; 0 where the line has none).
    pub lambda_global: f64,
}

/// The means over splits of the selected start's measures at one setting.
#[derive(Clone, Debug, PartialEq)]
pub struct SettingMeans {
    /// The setting.
    pub setting: Setting,
    /// Splits that had a selected start with a solution.
    pub splits: usize,
    /// Mean test metric (accuracy or R squared, as a fraction).
    pub metric: f64,
    /// Mean delta_L (percent).
    pub delta_local: f64,
    /// Mean delta_G (percent).
    pub delta_global: f64,
}

/// The means over splits of the selected start per setting (data set, formulation and
/// solver are the caller's to group), sorted by (depth, lambda_L, lambda_G), the lambdas as
/// configured (`configured_lambdas` where the line has them). A split's
/// selected start counts only if it has a point and a finite metric; a setting none of
/// whose splits counts is left out.
pub fn setting_means(records: &[&SolveRecord], metric: TestMetric) -> Vec<SettingMeans> {
    // Keyed by the bits of the lambdas: equal settings are written with equal numbers.
    type Key = (Option<usize>, u64, u64);
    let mut cells: BTreeMap<Key, Vec<(f64, f64, f64)>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.selected) {
        let Some(m) = metric_value(metric, r) else {
            continue;
        };
        // The lambdas as configured: S-ORCT's split_scale = "data" solves each split at its
        // own gamma, with lambdas raised alike.
        let (local, global) = r.configured_lambdas.unwrap_or((
            r.lambda_local.unwrap_or(0.0),
            r.lambda_global.unwrap_or(0.0),
        ));
        let key = (r.depth, local.to_bits(), global.to_bits());
        cells
            .entry(key)
            .or_default()
            .push((m, r.delta_local, r.delta_global));
    }
    let mut out: Vec<SettingMeans> = cells
        .into_iter()
        .map(|((depth, l, g), v)| {
            let n = v.len() as f64;
            SettingMeans {
                setting: Setting {
                    depth,
                    lambda_local: f64::from_bits(l),
                    lambda_global: f64::from_bits(g),
                },
                splits: v.len(),
                metric: v.iter().map(|x| x.0).sum::<f64>() / n,
                delta_local: mean_finite(v.iter().map(|x| x.1)),
                delta_global: mean_finite(v.iter().map(|x| x.2)),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        (
            a.setting.depth,
            a.setting.lambda_local,
            a.setting.lambda_global,
        )
            .partial_cmp(&(
                b.setting.depth,
                b.setting.lambda_local,
                b.setting.lambda_global,
            ))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    out
}

/// The mean of the finite values (a sparsity is NaN, written null, on a line without a
/// model's); NaN when there is none, which a plot leaves out.
fn mean_finite(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values
        .filter(|v| v.is_finite())
        .fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}

/// The values of a heatmap: `values[i][j]` at lambda_L = `rows[i]`, lambda_G = `columns[j]`
/// (`None`: that pair was not run).
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    /// The distinct lambda_L, increasing.
    pub rows: Vec<f64>,
    /// The distinct lambda_G, increasing.
    pub columns: Vec<f64>,
    /// The value per pair.
    pub values: Vec<Vec<Option<f64>>>,
}

/// Lays one measure of `means` out over the (lambda_L, lambda_G) grid; a value that is not
/// a number (no split had it) is a missing cell, as a pair not run.
pub fn grid_of(means: &[SettingMeans], value: impl Fn(&SettingMeans) -> f64) -> Grid {
    let distinct = |f: &dyn Fn(&SettingMeans) -> f64| {
        let mut v: Vec<f64> = means.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v
    };
    let rows = distinct(&|m| m.setting.lambda_local);
    let columns = distinct(&|m| m.setting.lambda_global);
    let mut values = vec![vec![None; columns.len()]; rows.len()];
    for m in means {
        let i = rows.partition_point(|&v| v < m.setting.lambda_local);
        let j = columns.partition_point(|&v| v < m.setting.lambda_global);
        values[i][j] = Some(value(m)).filter(|v| v.is_finite());
    }
    Grid {
        rows,
        columns,
        values,
    }
}

/// Which lambda varies along a path: local when every lambda_G is equal, else global when
/// every lambda_L is equal; `None` when both vary (a grid: draw a heatmap) or neither.
pub fn varying_lambda(means: &[SettingMeans]) -> Option<Lambda> {
    let all_equal =
        |f: &dyn Fn(&SettingMeans) -> f64| means.windows(2).all(|w| f(&w[0]) == f(&w[1]));
    let local_fixed = all_equal(&|m| m.setting.lambda_local);
    let global_fixed = all_equal(&|m| m.setting.lambda_global);
    match (local_fixed, global_fixed) {
        (false, true) => Some(Lambda::Local),
        (true, false) => Some(Lambda::Global),
        // A single setting: call it a (one-point) local path.
        (true, true) if means.len() == 1 => Some(Lambda::Local),
        _ => None,
    }
}

/// lambda_L or lambda_G.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lambda {
    /// lambda_L.
    Local,
    /// lambda_G.
    Global,
}

/// A lambda as a tick label: "0", "2^-3" when a power of two, else 3 significant digits.
pub fn lambda_label(v: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let r = v.log2();
    if (r - r.round()).abs() < 1e-9 {
        format!("2^{}", r.round() as i64)
    } else {
        format!("{v:.2e}")
    }
}

/// The lines of one data set (and formulation and depth): a panel of a plot.
struct Group<'a> {
    title: String,
    records: Vec<&'a SolveRecord>,
    /// The files its lines come from, for errors.
    files: Vec<&'a Path>,
}

/// Groups lines by (data set, formulation, solver, depth, other grid axes), in that order.
fn groups<'a>(series: &'a [Series]) -> Vec<Group<'a>> {
    type Lines<'a> = (Vec<&'a SolveRecord>, Vec<&'a Path>);
    type Key = (String, String, String, Option<usize>, String);
    let mut by: BTreeMap<Key, Lines<'a>> = BTreeMap::new();
    for s in series {
        for (r, axes) in s.records.iter().zip(&s.other_axes) {
            let (records, files) = by
                .entry((
                    r.dataset.clone(),
                    r.formulation.clone(),
                    r.solver.clone(),
                    r.depth,
                    axes.clone(),
                ))
                .or_default();
            records.push(r);
            if !files.contains(&s.path.as_path()) {
                files.push(&s.path);
            }
        }
    }
    by.into_iter()
        .map(
            |((dataset, formulation, solver, depth, axes), (records, files))| Group {
                title: match (depth, axes.is_empty()) {
                    (Some(d), true) => format!("{dataset}: {formulation} D={d} ({solver})"),
                    (Some(d), false) => {
                        format!("{dataset}: {formulation} D={d} ({solver}; {axes})")
                    }
                    (None, true) => format!("{dataset}: {formulation}"),
                    (None, false) => format!("{dataset}: {formulation} ({axes})"),
                },
                records,
                files,
            },
        )
        .collect()
}

fn missing(path: &Path, what: &str) -> GlassboxError {
    GlassboxError::Data {
        file: path.display().to_string(),
        message: format!("{what}: these results cannot be drawn as asked"),
    }
}

/// The error for a panel none of whose splits' selected starts has the test metric (every
/// one failed): there is nothing to draw in it.
fn nothing_to_draw(files: &[&Path], panel: &str, metric: TestMetric) -> GlassboxError {
    GlassboxError::Data {
        file: files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        message: format!(
            "{panel}: no split's selected start has a {} (they all failed), so its panel \
             would be empty: leave these lines out",
            metric.name()
        ),
    }
}

/// Checks that every line of `series` has what `kind` needs, naming the file otherwise.
fn check(series: &[Series], kind: PlotKind) -> Result<()> {
    if series.is_empty() {
        return Err(GlassboxError::Config("no results files given".to_string()));
    }
    for s in series {
        if kind != PlotKind::Scatter {
            if let Some(r) = s
                .records
                .iter()
                .find(|r| r.lambda_local.is_none() || r.lambda_global.is_none())
            {
                let lacks = match r.lambda_local {
                    None => "lambda_local",
                    Some(_) => "lambda_global",
                };
                return Err(missing(
                    &s.path,
                    &format!(
                        "a '{}' line has no {lacks} (only formulations with both sparsity \
                         lambdas, lambda_L and lambda_G, can be drawn against them)",
                        r.formulation
                    ),
                ));
            }
        }
        if !s.records.iter().any(|r| r.selected) {
            return Err(missing(&s.path, "no line is a selected start"));
        }
        let refs: Vec<&SolveRecord> = s.records.iter().collect();
        let metric = metric_of(&refs);
        if !s
            .records
            .iter()
            .any(|r| r.selected && metric_value(metric, r).is_some())
        {
            return Err(missing(
                &s.path,
                &format!("no selected start has a {}", metric.name()),
            ));
        }
    }
    Ok(())
}

/// Draws `kind` from `series` to `path` (`.png` or `.svg`); the note when drawn without text.
/// `sparsity` picks the scatter's x axis (delta_G by default, as the S-ORRT paper's Fig. 4).
pub fn draw(
    series: &[Series],
    kind: PlotKind,
    sparsity: Lambda,
    path: &Path,
) -> Result<Option<String>> {
    plot::plot_extension(path)?;
    check(series, kind)?;
    match kind {
        PlotKind::Heatmap => {
            let rows: Vec<HeatmapRow> = groups(series)
                .into_iter()
                .map(|g| {
                    let metric = metric_of(&g.records);
                    let means = setting_means(&g.records, metric);
                    if means.is_empty() {
                        return Err(nothing_to_draw(&g.files, &g.title, metric));
                    }
                    Ok(HeatmapRow {
                        title: g.title,
                        metric_name: metric.name(),
                        grids: [
                            grid_of(&means, |m| 100.0 * m.metric),
                            grid_of(&means, |m| m.delta_local),
                            grid_of(&means, |m| m.delta_global),
                        ],
                    })
                })
                .collect::<Result<_>>()?;
            let n = rows.len() as u32;
            plot::save(&Heatmaps { rows }, path, (1500, 480 * n))
        }
        PlotKind::Lambda => {
            let mut panels = Vec::new();
            for g in groups(series) {
                let metric = metric_of(&g.records);
                let means = setting_means(&g.records, metric);
                if means.is_empty() {
                    return Err(nothing_to_draw(&g.files, &g.title, metric));
                }
                let Some(lambda) = varying_lambda(&means) else {
                    return Err(GlassboxError::Config(format!(
                        "{}: both lambda_L and lambda_G vary (or neither does) in these \
                         results; draw the grid with `glassbox plot heatmap`, or give the \
                         files of one path",
                        g.title
                    )));
                };
                panels.push(LambdaPanel {
                    title: g.title,
                    metric_name: metric.name(),
                    lambda,
                    means,
                });
            }
            let (w, h) = panel_grid_size(panels.len(), (640, 420));
            plot::save(&LambdaPaths { panels }, path, (w, h))
        }
        PlotKind::Scatter => {
            let mut datasets: BTreeMap<String, Vec<ScatterSeries>> = BTreeMap::new();
            let mut files: BTreeMap<String, Vec<&Path>> = BTreeMap::new();
            // Files with the same label are one series (one colour), e.g. a lambda path
            // written as one run per lambda.
            let mut labels: Vec<&str> = Vec::new();
            for s in series {
                if !labels.contains(&s.label.as_str()) {
                    labels.push(&s.label);
                }
            }
            for s in series {
                let s_index = labels.iter().position(|l| *l == s.label).unwrap_or(0);
                // A point is one setting of one formulation and solver (and of a grid's
                // other axes): a file holding several (CART's lines beside S-ORRT's, two
                // gammas) never averages them together.
                type Runs<'a> = BTreeMap<(&'a str, &'a str, &'a str), Vec<&'a SolveRecord>>;
                let mut by_dataset: BTreeMap<&str, Runs> = BTreeMap::new();
                for (r, axes) in s.records.iter().zip(&s.other_axes) {
                    by_dataset
                        .entry(r.dataset.as_str())
                        .or_default()
                        .entry((r.formulation.as_str(), r.solver.as_str(), axes.as_str()))
                        .or_default()
                        .push(r);
                }
                for (dataset, runs) in by_dataset {
                    let all: Vec<&SolveRecord> = runs.values().flatten().copied().collect();
                    let metric = metric_of(&all);
                    let points = runs
                        .values()
                        .flat_map(|records| setting_means(records, metric))
                        .map(|m| {
                            let x = match sparsity {
                                Lambda::Local => m.delta_local,
                                Lambda::Global => m.delta_global,
                            };
                            (x, m.metric)
                        })
                        .filter(|(x, y)| x.is_finite() && y.is_finite())
                        .collect();
                    files
                        .entry(dataset.to_string())
                        .or_default()
                        .push(s.path.as_path());
                    datasets
                        .entry(dataset.to_string())
                        .or_default()
                        .push(ScatterSeries {
                            label: s.label.clone(),
                            color: s_index,
                            metric_name: metric.name(),
                            points,
                        });
                }
            }
            for (dataset, panel) in &datasets {
                if panel.iter().all(|s| s.points.is_empty()) {
                    let metric = panel.first().map_or("test metric", |s| s.metric_name);
                    return Err(GlassboxError::Data {
                        file: files[dataset]
                            .iter()
                            .map(|f| f.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", "),
                        message: format!(
                            "{dataset}: no split's selected start has a {metric} and a \
                             sparsity (they all failed), so its panel would be empty: leave \
                             these lines out"
                        ),
                    });
                }
            }
            let panels: Vec<ScatterPanel> = datasets
                .into_iter()
                .map(|(dataset, series)| ScatterPanel {
                    title: dataset,
                    sparsity,
                    series,
                })
                .collect();
            let (w, h) = panel_grid_size(panels.len(), (640, 460));
            plot::save(&Scatter { panels }, path, (w, h))
        }
    }
}

/// Whether a line's status gave a model: a solver's point (optimal, locally optimal,
/// feasible at a limit) or a heuristic learner's tree (`heuristic`).
pub fn has_model(status: &str) -> bool {
    has_solution(status) || status == "heuristic"
}

/// The test metric of a line that gave a model, when it is a number.
pub fn metric_value(metric: TestMetric, r: &SolveRecord) -> Option<f64> {
    let v = match metric {
        TestMetric::Accuracy => r.test_accuracy,
        TestMetric::R2 => r.regression.as_ref()?.test_r2,
    };
    (has_model(&r.status) && v.is_finite()).then_some(v)
}

/// The test metric of these lines: R squared when any line has regression metrics.
pub fn metric_of(records: &[&SolveRecord]) -> TestMetric {
    if records.iter().any(|r| r.regression.is_some()) {
        TestMetric::R2
    } else {
        TestMetric::Accuracy
    }
}

/// Panels laid out in up to three columns.
fn columns_for(n: usize) -> usize {
    n.clamp(1, 3)
}

fn panel_grid_size(n: usize, panel: (u32, u32)) -> (u32, u32) {
    let cols = columns_for(n);
    let rows = n.max(1).div_ceil(cols);
    (panel.0 * cols as u32, panel.1 * rows as u32)
}

/// A white canvas split into the panel grid of `panel_grid_size` (up to three columns).
fn panel_areas<DB: plotters::prelude::DrawingBackend>(
    root: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
    n: usize,
) -> std::result::Result<Vec<plotters::prelude::DrawingArea<DB, plotters::coord::Shift>>, String>
where
    DB::ErrorType: 'static,
{
    root.fill(&plotters::prelude::WHITE).map_err(err)?;
    let cols = columns_for(n);
    Ok(root.split_evenly((n.div_ceil(cols), cols)))
}

type DrawResult = std::result::Result<(), String>;

fn err(x: impl std::fmt::Display) -> String {
    x.to_string()
}

/// One row of the heatmap figure: a data set's accuracy, delta_L and delta_G grids.
struct HeatmapRow {
    title: String,
    metric_name: &'static str,
    grids: [Grid; 3],
}

struct Heatmaps {
    rows: Vec<HeatmapRow>,
}

/// A heatmap axis over `n` cells: cell k spans [k, k + 1], and the key points (the labels)
/// are the centres of every `every`-th cell.
#[derive(Clone)]
struct CellAxis {
    n: usize,
    every: usize,
}

impl plotters::prelude::Ranged for CellAxis {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let n = self.n.max(1) as f64;
        limit.0 + (f64::from(limit.1 - limit.0) * v / n).round() as i32
    }

    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, _: Hint) -> Vec<f64> {
        (0..self.n)
            .step_by(self.every.max(1))
            .map(|i| i as f64 + 0.5)
            .collect()
    }

    fn range(&self) -> std::ops::Range<f64> {
        0.0..self.n.max(1) as f64
    }
}

/// The paper's colour scale: dark red at the smallest value of the panel, white at the
/// largest.
fn heat_colour(v: f64, lo: f64, hi: f64) -> plotters::style::RGBColor {
    let t = if hi > lo {
        ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else {
        1.0
    };
    let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    plotters::style::RGBColor(mix(103.0, 255.0), mix(0.0, 255.0), mix(13.0, 255.0))
}

impl Figure for Heatmaps {
    fn draw<DB: plotters::prelude::DrawingBackend>(&self, backend: DB, text: bool) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        use plotters::prelude::*;
        let root = backend.into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let rows = root.split_evenly((self.rows.len(), 3));
        for (r, row) in self.rows.iter().enumerate() {
            let names = [
                format!("{} (%)", row.metric_name),
                "delta_L (%)".to_string(),
                "delta_G (%)".to_string(),
            ];
            for (k, grid) in row.grids.iter().enumerate() {
                let area = &rows[3 * r + k];
                let (nx, ny) = (grid.columns.len(), grid.rows.len());
                let finite = grid.values.iter().flatten().flatten().copied();
                let lo = finite.clone().fold(f64::INFINITY, f64::min);
                let hi = finite.fold(f64::NEG_INFINITY, f64::max);
                let mut builder = ChartBuilder::on(area);
                builder
                    .margin(8)
                    .x_label_area_size(if text { 40 } else { 5 })
                    .y_label_area_size(if text { 70 } else { 5 });
                if text {
                    builder.caption(format!("{}: {}", row.title, names[k]), ("sans-serif", 15));
                }
                // Cell (i, j) is the unit square [j, j + 1] x [i, i + 1], its label at the
                // centre. (plotters' segmented and slice ranges collapse a range of one value
                // to a point, so a grid of one lambda_L or one lambda_G drew no cell.)
                // Upright labels (rotated ones render garbled in PNGs), so at most
                // MAX_UPRIGHT_LABELS of them on the x axis.
                let every = nx.div_ceil(MAX_UPRIGHT_LABELS).max(1);
                let mut chart = builder
                    .build_cartesian_2d(CellAxis { n: nx, every }, CellAxis { n: ny, every: 1 })
                    .map_err(err)?;
                // The index of the cell whose centre is at `v`.
                let cell = |v: f64, n: usize| {
                    let i = (v - 0.5).round();
                    ((v - 0.5 - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n)
                        .then_some(i as usize)
                };
                if text {
                    let xl = |v: &f64| {
                        cell(*v, nx).map_or(String::new(), |i| lambda_label(grid.columns[i]))
                    };
                    let yl = |v: &f64| {
                        cell(*v, ny).map_or(String::new(), |i| lambda_label(grid.rows[i]))
                    };
                    chart
                        .configure_mesh()
                        .disable_mesh()
                        .x_labels(nx.max(1))
                        .y_labels(ny.max(1))
                        .x_label_formatter(&xl)
                        .y_label_formatter(&yl)
                        .x_label_style(("sans-serif", 11))
                        .y_label_style(("sans-serif", 11))
                        .x_desc("lambda_G")
                        .y_desc("lambda_L")
                        .axis_desc_style(("sans-serif", 13))
                        .draw()
                        .map_err(err)?;
                }
                for (i, row_values) in grid.values.iter().enumerate() {
                    for (j, v) in row_values.iter().enumerate() {
                        let corner = |a: usize, b: usize| (a as f64, b as f64);
                        let style = match v {
                            Some(v) => heat_colour(*v, lo, hi).filled(),
                            // Not run: grey hatching would need more code; light grey says it.
                            None => RGBColor(220, 220, 220).filled(),
                        };
                        chart
                            .draw_series(std::iter::once(Rectangle::new(
                                [corner(j, i), corner(j + 1, i + 1)],
                                style,
                            )))
                            .map_err(err)?;
                        if let (Some(v), true) = (v, text && nx <= 20) {
                            let t = if hi > lo { (v - lo) / (hi - lo) } else { 1.0 };
                            let colour = if t < 0.45 { WHITE } else { BLACK };
                            chart
                                .draw_series(std::iter::once(Text::new(
                                    format!("{v:.0}"),
                                    (j as f64 + 0.5, i as f64 + 0.5),
                                    ("sans-serif", 10).into_font().color(&colour).pos(
                                        plotters::style::text_anchor::Pos::new(
                                            plotters::style::text_anchor::HPos::Center,
                                            plotters::style::text_anchor::VPos::Center,
                                        ),
                                    ),
                                )))
                                .map_err(err)?;
                        }
                    }
                }
            }
        }
        root.present().map_err(err)?;
        Ok(())
    }
}

/// One data set's path: the means at each lambda of the path.
struct LambdaPanel {
    title: String,
    metric_name: &'static str,
    lambda: Lambda,
    means: Vec<SettingMeans>,
}

struct LambdaPaths {
    panels: Vec<LambdaPanel>,
}

impl Figure for LambdaPaths {
    fn draw<DB: plotters::prelude::DrawingBackend>(&self, backend: DB, text: bool) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        use plotters::prelude::*;
        let root = backend.into_drawing_area();
        let areas = panel_areas(&root, self.panels.len())?;
        for (panel, area) in self.panels.iter().zip(&areas) {
            let n = panel.means.len();
            let lambdas: Vec<f64> = panel
                .means
                .iter()
                .map(|m| match panel.lambda {
                    Lambda::Local => m.setting.lambda_local,
                    Lambda::Global => m.setting.lambda_global,
                })
                .collect();
            let metric: Vec<f64> = panel.means.iter().map(|m| 100.0 * m.metric).collect();
            let lo = metric.iter().copied().fold(0.0f64, f64::min);
            let mut builder = ChartBuilder::on(area);
            builder
                .margin(10)
                .x_label_area_size(if text { 55 } else { 5 })
                .y_label_area_size(if text { 50 } else { 5 });
            if text {
                builder.caption(&panel.title, ("sans-serif", 16));
            }
            let mut chart = builder
                .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), lo..102.0)
                .map_err(err)?;
            if text {
                // Upright labels (rotated ones render garbled in PNGs) that do not overlap.
                let every = n.div_ceil(MAX_UPRIGHT_LABELS).max(1);
                let xl = |v: &f64| {
                    let i = v.round();
                    if (v - i).abs() < 1e-6
                        && i >= 0.0
                        && (i as usize) < n
                        && (i as usize).is_multiple_of(every)
                    {
                        lambda_label(lambdas[i as usize])
                    } else {
                        String::new()
                    }
                };
                chart
                    .configure_mesh()
                    .x_labels(n.max(2) * 2)
                    .x_label_formatter(&xl)
                    .x_label_style(("sans-serif", 11))
                    .x_desc(match panel.lambda {
                        Lambda::Local => "lambda_L",
                        Lambda::Global => "lambda_G",
                    })
                    .y_desc("%")
                    .label_style(("sans-serif", 12))
                    .axis_desc_style(("sans-serif", 13))
                    .draw()
                    .map_err(err)?;
            }
            let lines: [(&str, Vec<f64>, RGBColor); 3] = [
                (panel.metric_name, metric, RGBColor(200, 30, 30)),
                (
                    "delta_L",
                    panel.means.iter().map(|m| m.delta_local).collect(),
                    RGBColor(30, 60, 200),
                ),
                (
                    "delta_G",
                    panel.means.iter().map(|m| m.delta_global).collect(),
                    RGBColor(30, 150, 60),
                ),
            ];
            for (name, values, colour) in lines {
                let points: Vec<(f64, f64)> = values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (i as f64, *v))
                    // A measure no split had (NaN) is no point.
                    .filter(|(_, v)| v.is_finite())
                    .collect();
                let series = chart
                    .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))
                    .map_err(err)?;
                if text {
                    series.label(name).legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
                    });
                }
                chart
                    .draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                    .map_err(err)?;
            }
            if text {
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::MiddleLeft)
                    .background_style(WHITE.mix(0.8))
                    .border_style(BLACK)
                    .label_font(("sans-serif", 12))
                    .draw()
                    .map_err(err)?;
            }
        }
        root.present().map_err(err)?;
        Ok(())
    }
}

/// The points of one results file in one data set's panel.
struct ScatterSeries {
    label: String,
    color: usize,
    metric_name: &'static str,
    points: Vec<(f64, f64)>,
}

struct ScatterPanel {
    title: String,
    sparsity: Lambda,
    series: Vec<ScatterSeries>,
}

struct Scatter {
    panels: Vec<ScatterPanel>,
}

impl Figure for Scatter {
    fn draw<DB: plotters::prelude::DrawingBackend>(&self, backend: DB, text: bool) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        use plotters::prelude::*;
        let root = backend.into_drawing_area();
        let areas = panel_areas(&root, self.panels.len())?;
        for (panel, area) in self.panels.iter().zip(&areas) {
            let ys = panel
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1));
            let (ylo, yhi) = (
                ys.clone().fold(f64::INFINITY, f64::min),
                ys.fold(f64::NEG_INFINITY, f64::max),
            );
            let pad = ((yhi - ylo) * 0.1).max(0.01);
            let mut builder = ChartBuilder::on(area);
            builder
                .margin(10)
                .x_label_area_size(if text { 45 } else { 5 })
                .y_label_area_size(if text { 60 } else { 5 });
            if text {
                builder.caption(&panel.title, ("sans-serif", 16));
            }
            let mut chart = builder
                .build_cartesian_2d(-3.0f64..103.0, (ylo - pad)..(yhi + pad))
                .map_err(err)?;
            if text {
                chart
                    .configure_mesh()
                    .x_desc(match panel.sparsity {
                        Lambda::Local => "delta_L (%)",
                        Lambda::Global => "delta_G (%)",
                    })
                    .y_desc(panel.series.first().map_or("", |s| s.metric_name))
                    .label_style(("sans-serif", 12))
                    .axis_desc_style(("sans-serif", 13))
                    .draw()
                    .map_err(err)?;
            }
            let mut labelled: Vec<usize> = Vec::new();
            for s in &panel.series {
                let colour = Palette99::pick(s.color).to_rgba();
                let drawn = chart
                    .draw_series(s.points.iter().map(|&p| Circle::new(p, 5, colour.filled())))
                    .map_err(err)?;
                if text && !labelled.contains(&s.color) {
                    labelled.push(s.color);
                    drawn
                        .label(s.label.as_str())
                        .legend(move |(x, y)| Circle::new((x + 8, y), 5, colour.filled()));
                }
            }
            if text {
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::UpperRight)
                    .background_style(WHITE.mix(0.8))
                    .border_style(BLACK)
                    .label_font(("sans-serif", 12))
                    .draw()
                    .map_err(err)?;
            }
        }
        root.present().map_err(err)?;
        Ok(())
    }
}
