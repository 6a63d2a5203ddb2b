//! Local explanations (7) of a fitted S-ORRT for a table of individuals: the exact
//! gradient of the prediction with respect to each feature, in the user's units and in
//! scaled units, written as CSV, and drawn as the parallel-coordinates plot of the paper's
//! Fig. 2 (one vertical axis per feature, one line per individual at its scaled gradient,
//! coloured from purple, a reliable prediction, to light pink by the ratio of its squared
//! error to the mean squared error when the table has the target).
//!
//! PNG and SVG text needs a TrueType font, read at run time (no system font library is
//! linked): the file named by `GLASSBOX_FONT`, else a DejaVu / Liberation / Noto sans font
//! from the usual system folders. Without one the plot is drawn without text and a note
//! says so.
//!
//! Depends on the core (`data`, `model`) and on `plotters`.

use super::SorrtModel;
use glassbox_core::data::{
    check_finite_outputs, check_finite_predictions, read_table_for_model, Table,
};
use glassbox_core::plot::font_available;
use glassbox_core::{GlassboxError, Result};
use nalgebra::DMatrix;
use std::fmt::Write as _;
use std::path::Path;

/// Explanations of a set of individuals.
#[derive(Clone, Debug)]
pub struct Explanations {
    /// Feature names (columns of the gradients).
    pub feature_names: Vec<String>,
    /// The prediction Pi(x) of each individual.
    pub prediction: Vec<f64>,
    /// The observed target, when the table has it.
    pub target: Option<Vec<f64>>,
    /// dPi/dx_j in the user's units (N x p).
    pub user: DMatrix<f64>,
    /// dPi/dx_j in scaled units, i.e. times feature j's training range (N x p).
    pub scaled: DMatrix<f64>,
}

impl Explanations {
    /// Explains every row of `table` (its target, if present, must be numeric).
    pub fn of_table(model: &SorrtModel, table: &Table) -> Result<Self> {
        let x = model.encoding.transform(table)?;
        let prediction = glassbox_core::model::Regressor::predict(model, &x);
        check_finite_predictions(&prediction, table)?;
        let target = if table.target.is_empty() {
            None
        } else {
            let mut y = Vec::with_capacity(table.target.len());
            for (i, t) in table.target.iter().enumerate() {
                match t.parse::<f64>() {
                    Ok(v) if v.is_finite() => y.push(v),
                    _ => {
                        return Err(GlassboxError::data(
                            &table.source,
                            format!(
                                "column '{}', {}: '{t}' is not a number; the target of a \
                                 regression must be numeric",
                                table.target_name,
                                table.place_of_row(i)
                            ),
                        ))
                    }
                }
            }
            Some(y)
        };
        let (user, scaled) = model.explain(&x);
        check_finite_outputs(&user, table)?;
        Ok(Explanations {
            feature_names: model.feature_names.clone(),
            prediction,
            target,
            user,
            scaled,
        })
    }

    /// Reads a CSV file the way `glassbox predict` does (target optional) and explains it.
    pub fn of_csv(model: &SorrtModel, path: &Path) -> Result<Self> {
        let table = read_table_for_model(&model.encoding, path, &model.target)?;
        Self::of_table(model, &table)
    }

    /// The ratio of each individual's squared error to the mean squared error (the
    /// reliability of the paper's Fig. 2), when the target is known.
    pub fn reliability(&self) -> Option<Vec<f64>> {
        let y = self.target.as_ref()?;
        // Errors in units of the largest error, so the ratios neither overflow (an error of
        // 1e200 squares beyond f64, and an infinite mean made every other ratio 0) nor
        // vanish beside a huge value; halved first where a difference itself overflows.
        let mut error: Vec<f64> = y.iter().zip(&self.prediction).map(|(t, p)| t - p).collect();
        if error.iter().any(|e| !e.is_finite()) {
            error = y
                .iter()
                .zip(&self.prediction)
                .map(|(t, p)| t / 2.0 - p / 2.0)
                .collect();
        }
        let unit = error.iter().fold(0.0_f64, |m, e| m.max(e.abs()));
        if unit == 0.0 {
            return Some(vec![0.0; error.len()]);
        }
        let se: Vec<f64> = error.iter().map(|e| (e / unit).powi(2)).collect();
        let mse = se.iter().sum::<f64>() / se.len() as f64;
        Some(se.iter().map(|e| e / mse).collect())
    }

    /// The explanations as CSV: `row, prediction[, target, squared_error_ratio]`, then
    /// `grad_<feature>` (user's units) and `scaled_grad_<feature>` for every feature.
    pub fn to_csv(&self) -> String {
        let mut out = String::from("row,prediction");
        if self.target.is_some() {
            out.push_str(",target,squared_error_ratio");
        }
        for f in &self.feature_names {
            let _ = write!(out, ",grad_{}", csv_name(f));
        }
        for f in &self.feature_names {
            let _ = write!(out, ",scaled_grad_{}", csv_name(f));
        }
        out.push('\n');
        let ratio = self.reliability();
        for i in 0..self.prediction.len() {
            let _ = write!(out, "{},{}", i + 1, self.prediction[i]);
            if let (Some(y), Some(r)) = (&self.target, &ratio) {
                let _ = write!(out, ",{},{}", y[i], r[i]);
            }
            for v in self.user.row(i).iter().chain(self.scaled.row(i).iter()) {
                let _ = write!(out, ",{v}");
            }
            out.push('\n');
        }
        out
    }

    /// Writes [`Explanations::to_csv`] to `path`.
    pub fn write_csv(&self, path: &Path) -> Result<()> {
        glassbox_core::model::write_atomically(path, self.to_csv().as_bytes())
    }

    /// Draws the parallel-coordinates plot to `path` (`.png` or `.svg`). Returns a note
    /// when the plot had to be drawn without text (no font found).
    pub fn plot(&self, path: &Path, title: &str) -> Result<Option<String>> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        let font = font_available();
        let size = (
            (140 + 90 * self.feature_names.len() as u32).clamp(800, 2400),
            700,
        );
        let drawn = match ext.as_str() {
            "png" => {
                let root = plotters::prelude::BitMapBackend::new(path, size);
                self.draw(root, title, font)
            }
            "svg" => {
                let root = plotters::prelude::SVGBackend::new(path, size);
                self.draw(root, title, font)
            }
            _ => {
                return Err(GlassboxError::Config(format!(
                    "{}: the plot must be a .png or .svg file",
                    path.display()
                )))
            }
        };
        drawn.map_err(|e| GlassboxError::Config(format!("drawing {}: {e}", path.display())))?;
        Ok((!font).then(|| {
            "no TrueType font found, so the plot has no text: set GLASSBOX_FONT=/path/to/font.ttf \
             (or install fonts-dejavu-core)"
                .to_string()
        }))
    }

    fn draw<DB: plotters::prelude::DrawingBackend>(
        &self,
        backend: DB,
        title: &str,
        text: bool,
    ) -> std::result::Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        use plotters::prelude::*;
        let e = |x: &dyn std::fmt::Display| x.to_string();
        let root = backend.into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let p = self.feature_names.len();
        let (mut lo, mut hi) = (0.0f64, 0.0f64);
        for v in self.scaled.iter() {
            lo = lo.min(*v);
            hi = hi.max(*v);
        }
        let pad = 0.05 * (hi - lo).max(1e-9);
        let (lo, hi) = (lo - pad, hi + pad);
        let mut builder = ChartBuilder::on(&root);
        builder
            .margin(20)
            .x_label_area_size(if text { 70 } else { 10 })
            .y_label_area_size(if text { 80 } else { 10 });
        if text {
            builder.caption(title, ("sans-serif", 22));
        }
        let mut chart = builder
            .build_cartesian_2d(-0.5f64..(p as f64 - 0.5), lo..hi)
            .map_err(|x| e(&x))?;
        if text {
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(0)
                .y_desc("dPi/dx (scaled units)")
                .axis_desc_style(("sans-serif", 18))
                .label_style(("sans-serif", 15))
                .draw()
                .map_err(|x| e(&x))?;
        }
        let grey = RGBColor(150, 150, 150);
        for j in 0..p {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(j as f64, lo), (j as f64, hi)],
                    grey.stroke_width(1),
                )))
                .map_err(|x| e(&x))?;
        }
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(-0.5, 0.0), (p as f64 - 0.5, 0.0)],
                BLACK.stroke_width(1),
            )))
            .map_err(|x| e(&x))?;
        // Least reliable first, so the reliable (purple) lines are drawn on top.
        let ratio = self.reliability();
        let mut order: Vec<usize> = (0..self.prediction.len()).collect();
        if let Some(r) = &ratio {
            order.sort_by(|&a, &b| r[b].total_cmp(&r[a]));
        }
        for &i in &order {
            let t = ratio.as_ref().map_or(0.0, |r| (r[i] / 2.0).clamp(0.0, 1.0));
            let color = mix((75, 0, 130), (255, 182, 193), t);
            let points: Vec<(f64, f64)> = (0..p).map(|j| (j as f64, self.scaled[(i, j)])).collect();
            chart
                .draw_series(std::iter::once(PathElement::new(
                    points,
                    color.mix(0.6).stroke_width(1),
                )))
                .map_err(|x| e(&x))?;
        }
        if text {
            let style = ("sans-serif", 15).into_font().color(&BLACK);
            for (j, name) in self.feature_names.iter().enumerate() {
                let (px, py) = chart.backend_coord(&(j as f64, lo));
                let w = 4 * name.len() as i32;
                root.draw(&Text::new(name.clone(), (px - w, py + 12), style.clone()))
                    .map_err(|x| e(&x))?;
            }
            let legend = if ratio.is_some() {
                "line colour: squared error / MSE, purple 0 (reliable) to pink >= 2"
            } else {
                "(no target in the data: lines uncoloured by reliability)"
            };
            let (px, py) = chart.backend_coord(&(-0.5, lo));
            root.draw(&Text::new(
                legend.to_string(),
                (px, py + 40),
                ("sans-serif", 15).into_font().color(&RGBColor(90, 90, 90)),
            ))
            .map_err(|x| e(&x))?;
        }
        root.present().map_err(|x| e(&x))?;
        Ok(())
    }
}

/// Linear interpolation between two RGB colours.
fn mix(a: (u8, u8, u8), b: (u8, u8, u8), t: f64) -> plotters::style::RGBColor {
    let f = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * t).round() as u8;
    plotters::style::RGBColor(f(a.0, b.0), f(a.1, b.1), f(a.2, b.2))
}

/// A feature name safe as a CSV header cell.
fn csv_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c == ',' || c == '"' || c == '\n' {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// `glassbox explain` on an S-ORRT: the explanations (7) of every row of a CSV file, and
/// the parallel-coordinates plot (Fig. 2) when asked for.
impl glassbox_core::model::Explainer for SorrtModel {
    fn explain(
        &self,
        data: &Path,
        out: &Path,
        plot: Option<&Path>,
    ) -> Result<glassbox_core::model::ExplainReport> {
        // A plot path we cannot draw to fails before the CSV is written.
        if let Some(plot) = plot {
            glassbox_core::plot::plot_extension(plot)?;
        }
        let explanations = Explanations::of_csv(self, data)?;
        explanations.write_csv(out)?;
        let mut report = glassbox_core::model::ExplainReport::default();
        report.messages.push(format!(
            "wrote the explanations of {} rows to {}",
            explanations.prediction.len(),
            out.display()
        ));
        if let Some(plot) = plot {
            let title = format!(
                "S-ORRT local explanations, {} (depth {})",
                data.file_stem()
                    .map(|s| s.to_string_lossy().to_string())
                    .unwrap_or_default(),
                self.depth
            );
            if let Some(note) = explanations.plot(plot, &title)? {
                report.notes.push(note);
            }
            report
                .messages
                .push(format!("wrote the plot to {}", plot.display()));
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::Explanations;
    use nalgebra::DMatrix;

    fn ratios(prediction: Vec<f64>, target: Vec<f64>) -> Vec<f64> {
        let n = prediction.len();
        Explanations {
            feature_names: vec![],
            prediction,
            target: Some(target),
            user: DMatrix::zeros(n, 0),
            scaled: DMatrix::zeros(n, 0),
        }
        .reliability()
        .unwrap()
    }

    #[test]
    fn reliability_is_each_squared_error_over_their_mean() {
        let r = ratios(vec![1.0, 2.0, 3.0], vec![2.0, 2.0, 6.0]);
        // Squared errors 1, 0, 9, mean 10 / 3.
        for (got, want) in r.iter().zip([0.3, 0.0, 2.7]) {
            assert!((got - want).abs() < 1e-12, "{r:?}");
        }
        assert_eq!(ratios(vec![1.0, 2.0], vec![1.0, 2.0]), vec![0.0, 0.0]);
        assert_eq!(ratios(vec![0.0, 0.0], vec![0.0, 0.0]), vec![0.0, 0.0]);
    }

    /// Small errors beside a huge value keep their ratios (units of the largest value
    /// squared them to 0).
    #[test]
    fn reliability_of_small_errors_beside_a_huge_value() {
        let r = ratios(vec![1e200, 1.0, 2.0], vec![1e200, 0.0, 0.0]);
        for (got, want) in r.iter().zip([0.0, 0.6, 2.4]) {
            assert!((got - want).abs() < 1e-12, "{r:?}");
        }
        let r = ratios(vec![-1e308, 0.0], vec![1e308, 0.0]);
        assert_eq!(r, vec![2.0, 0.0]);
    }

    /// An error of 1e200 squares beyond f64: the ratios are still finite, and the other rows'
    /// stay in proportion (the old sum gave an infinite mean and ratio 0 for every row).
    #[test]
    fn reliability_survives_an_error_whose_square_overflows() {
        let r = ratios(vec![0.0, 0.0, 0.0], vec![1e200, 1e200, 5e199]);
        assert!(r.iter().all(|v| v.is_finite()), "{r:?}");
        for (got, want) in r.iter().zip([4.0 / 3.0 * 1.0, 4.0 / 3.0, 1.0 / 3.0]) {
            assert!((got - want).abs() < 1e-12, "{r:?}");
        }
    }
}
