//! The commands on saved models: `predict`, `draw` and `explain`, each through the
//! registry's loader, so they work on the models of every registered formulation.

use crate::data::{check_finite_outputs, check_finite_predictions, read_for_model};
use crate::metrics;
use crate::model::model_kind;
use crate::model::Regressor;
use crate::registry::{FormulationEntry, Registry};
use anyhow::{bail, Context, Result};
use std::path::Path;

/// Refuses an output path that names one of the command's input files (or another output of
/// it): writing it would destroy the model or data the command reads. `-` is refused too: it
/// would be a file named `-`, where a user means standard output.
pub(super) fn check_outputs(inputs: &[&Path], outputs: &[&Path]) -> Result<()> {
    let same = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    for (k, out) in outputs.iter().enumerate() {
        if *out == Path::new("-") {
            bail!(
                "-: the output is a file, not standard output; give a file's name (or /dev/stdout)"
            );
        }
        if let Some(input) = inputs.iter().find(|i| same(i, out)) {
            bail!(
                "{}: the output would overwrite the input {}; write it elsewhere",
                out.display(),
                input.display()
            );
        }
        if let Some(other) = outputs[..k].iter().find(|o| same(o, out)) {
            bail!(
                "{}: two outputs of the command are the same file ({}); give each its own",
                out.display(),
                other.display()
            );
        }
    }
    Ok(())
}

/// `field` as a CSV field: quoted (quotes doubled) where it holds a comma, a quote or a
/// line break, as a class label may.
fn csv_field(field: &str) -> std::borrow::Cow<'_, str> {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\"")).into()
    } else {
        field.into()
    }
}

/// `v` as a CSV number, exactly (it reads back to the same f64): in exponent form where the
/// plain form would be long (1e-300 as 300 digits).
fn csv_number(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-4..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// `glassbox draw`: the tree of a saved model as a `.png` or `.svg` file.
pub(super) fn draw(registry: &Registry, model: &Path, out: &Path) -> Result<()> {
    crate::plot::plot_extension(out)?;
    check_outputs(&[model], &[out])?;
    let kind = model_kind(model)?;
    let able = |e: &FormulationEntry| e.draws;
    if !registry.formulation(&kind).is_ok_and(able) {
        bail!(
            "{}: a '{kind}' model cannot be drawn; drawable kinds: {}",
            model.display(),
            names(registry, able)
        );
    }
    let loaded = registry.load_model(model)?;
    let Some(diagram) = loaded.model.diagram() else {
        bail!(
            "{}: this '{kind}' model has no tree to draw",
            model.display()
        );
    };
    if let Some(note) = diagram.save(out)? {
        eprintln!("note: {note}");
    }
    println!("wrote {}", out.display());
    Ok(())
}

/// The names of the formulations of `registry` that `able` accepts.
fn names(registry: &Registry, able: impl Fn(&FormulationEntry) -> bool) -> String {
    registry
        .formulations()
        .iter()
        .filter(|e| able(e))
        .map(|e| e.info.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `glassbox explain`: the local explanations of a saved model's predictions on a CSV file,
/// for the models that give them (S-ORRT, CCT, CRT).
pub(super) fn explain(
    registry: &Registry,
    model: &Path,
    data: &Path,
    out: &Path,
    plot: Option<&Path>,
) -> Result<()> {
    let kind = model_kind(model)?;
    let able = |e: &FormulationEntry| e.explains;
    if !registry.formulation(&kind).is_ok_and(able) {
        bail!(
            "{}: explain works on the models of {}, this is a '{kind}' model",
            model.display(),
            names(registry, able)
        );
    }
    // A plot we cannot draw fails before the model is read.
    if let Some(plot) = plot {
        crate::plot::plot_extension(plot)?;
    }
    let outputs: Vec<&Path> = std::iter::once(out).chain(plot).collect();
    check_outputs(&[model, data], &outputs)?;
    let loaded = registry.load_model(model)?;
    let Some(explainer) = loaded.model.explainer() else {
        bail!(
            "{}: this '{kind}' model gives no explanations",
            model.display()
        );
    };
    let report = explainer.explain(data, out, plot)?;
    for note in &report.notes {
        eprintln!("note: {note}");
    }
    for line in &report.messages {
        println!("{line}");
    }
    Ok(())
}

/// `glassbox predict`: predictions (classes and probabilities, or numbers) on a CSV file,
/// and the metrics when the file has the target.
pub(super) fn predict(
    registry: &Registry,
    model_path: &Path,
    data_path: &Path,
    out: Option<&Path>,
    target: Option<&str>,
) -> Result<()> {
    if let Some(out) = out {
        check_outputs(&[model_path, data_path], &[out])?;
    }
    let loaded = registry.load_model(model_path)?;
    if let Some(r) = loaded.model.as_regressor() {
        return predict_regression(r, data_path, out, target);
    }
    let Some(model) = loaded.model.as_classifier() else {
        bail!(
            "{}: a '{}' model neither classifies nor predicts numbers",
            model_path.display(),
            loaded.kind
        );
    };
    // The labels are in the column the model was trained with, unless --target says
    // (models saved before the encoding recorded it: `target`).
    let given = target;
    let target = given
        .or(model.encoding().target.as_deref())
        .unwrap_or("target");
    let (table, x) = read_for_model(model.encoding(), data_path, target)?;
    let proba = model.predict_proba(&x);
    check_finite_outputs(&proba, &table)?;
    let pred = model.predict(&x);
    if let Some(out) = out {
        let mut text = String::from("prediction");
        for c in model.classes() {
            text.push_str(&format!(",{}", csv_field(&format!("proba_{c}"))));
        }
        text.push('\n');
        for (i, &k) in pred.iter().enumerate() {
            text.push_str(&csv_field(&model.classes()[k]));
            for &v in proba.row(i).iter() {
                text.push(',');
                text.push_str(&csv_number(v));
            }
            text.push('\n');
        }
        crate::model::write_atomically(out, text.as_bytes())
            .with_context(|| format!("writing {}", out.display()))?;
        println!("wrote {} predictions to {}", pred.len(), out.display());
    } else {
        for &k in &pred {
            println!("{}", model.classes()[k]);
        }
    }
    if table.target.is_empty() && given.is_some() {
        eprintln!(
            "note: {} has no column '{target}' (--target): no accuracy to report",
            data_path.display()
        );
    }
    if !table.target.is_empty() {
        // A label the model never saw counts as misclassified.
        let y: Vec<usize> = table
            .target
            .iter()
            .map(|t| class_of(model.classes(), t).unwrap_or(usize::MAX))
            .collect();
        let unseen = y.iter().filter(|&&k| k == usize::MAX).count();
        println!(
            "accuracy {:.4} on {} rows",
            metrics::accuracy(&y, &pred),
            y.len()
        );
        if model.classes().len() == 2 {
            // The ROC AUC of the probability of the second (positive) class, over the rows
            // whose label the model knows (an unseen one is neither class).
            let known: Vec<usize> = (0..y.len()).filter(|&i| y[i] != usize::MAX).collect();
            let positive: Vec<bool> = known.iter().map(|&i| y[i] == 1).collect();
            let risk: Vec<f64> = known.iter().map(|&i| proba[(i, 1)]).collect();
            match metrics::roc_auc(&positive, &risk) {
                auc if auc.is_nan() => {
                    println!("auc undefined: the rows' known labels are all of one class")
                }
                auc => println!("auc {auc:.4}"),
            }
        }
        if unseen > 0 {
            println!(
                "note: {unseen} rows have a label the model was not trained on (counted as errors)"
            );
        }
    }
    Ok(())
}

/// The class of a file's `label`: the class of that text, or else the one class that is
/// the same number (a model trained on labels `0` / `1` reads a file labelled `0.0` / `1.0`).
fn class_of(classes: &[String], label: &str) -> Option<usize> {
    classes.iter().position(|c| c == label).or_else(|| {
        let value = label.parse::<f64>().ok()?;
        let mut same = classes
            .iter()
            .enumerate()
            .filter(|(_, c)| c.parse::<f64>().ok() == Some(value));
        match (same.next(), same.next()) {
            (Some((k, _)), None) => Some(k),
            _ => None,
        }
    })
}

/// `glassbox predict` for a regressor: predictions, and R squared and MSE when the file has
/// the target (the model's target column unless `--target` names another).
fn predict_regression(
    model: &dyn Regressor,
    data_path: &Path,
    out: Option<&Path>,
    target: Option<&str>,
) -> Result<()> {
    let target = target.unwrap_or(model.target());
    let (table, x) = read_for_model(model.encoding(), data_path, target)?;
    // The target is read before anything is written: a bad value fails the command whole.
    let y: Vec<f64> = table
        .target
        .iter()
        .enumerate()
        .map(|(i, t)| {
            t.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .with_context(|| {
                    format!(
                        "{}: column '{}', {}: '{t}' is not a number",
                        data_path.display(),
                        table.target_name,
                        table.place_of_row(i)
                    )
                })
        })
        .collect::<Result<_>>()?;
    let pred = model.predict(&x);
    check_finite_predictions(&pred, &table)?;
    if let Some(out) = out {
        let mut text = String::from("prediction\n");
        for &v in &pred {
            text.push_str(&csv_number(v));
            text.push('\n');
        }
        crate::model::write_atomically(out, text.as_bytes())
            .with_context(|| format!("writing {}", out.display()))?;
        println!("wrote {} predictions to {}", pred.len(), out.display());
    } else {
        for v in &pred {
            println!("{v}");
        }
    }
    if !y.is_empty() {
        println!(
            "r2 {:.4} mse {:.4} on {} rows",
            metrics::r_squared(&y, &pred),
            metrics::mean_squared_error(&y, &pred),
            y.len()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{csv_field, csv_number};

    #[test]
    fn csv_cells_read_back_as_written() {
        for v in [0.0, 0.5, 1.0, 1e-300, 3.8e-9, -2.5e-7, 1e20, 123.25, 5e-324] {
            let text = csv_number(v);
            assert!(text.len() < 30, "{text}");
            assert_eq!(text.parse::<f64>().unwrap(), v, "{text}");
        }
        assert_eq!(csv_number(0.25), "0.25");
        assert_eq!(csv_field("setosa"), "setosa");
        assert_eq!(csv_field("a, \"b\""), "\"a, \"\"b\"\"\"");
    }
}
