//! Fitted models are data: they predict, report their sparsity, serialize to JSON, and say
//! which formulation made them. This module holds the traits every fitted model implements
//! and the JSON envelope that lets a loader reject a file of another kind with a clear error.
//!
//! Depends on the core's error type.

use crate::{GlassboxError, Result};
use nalgebra::DMatrix;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::path::Path;

/// A fitted classifier over the features of the user's table (in the user's units: the
/// model carries its own scaling).
pub trait Classifier {
    /// The class labels, in the order of the columns of [`Classifier::predict_proba`].
    fn classes(&self) -> &[String];
    /// How the raw columns of a table are encoded into this model's features.
    fn encoding(&self) -> &crate::data::Encoding;
    /// The model as text a person reads (rules in the user's units, leaves, sparsity).
    fn describe(&self) -> String;
    /// Class probabilities, one row per row of `x`, one column per class.
    fn predict_proba(&self, x: &DMatrix<f64>) -> DMatrix<f64>;
    /// The most probable class index per row (ties go to the lower index).
    fn predict(&self, x: &DMatrix<f64>) -> Vec<usize> {
        let proba = self.predict_proba(x);
        (0..proba.nrows())
            .map(|i| {
                let row = proba.row(i);
                let mut best = 0;
                for k in 1..row.len() {
                    if row[k] > row[best] {
                        best = k;
                    }
                }
                best
            })
            .collect()
    }
}

/// The file format of a saved model: which formulation made it, the glassbox version, and
/// the model itself.
#[derive(Serialize, Deserialize)]
struct Envelope<T> {
    glassbox_model: String,
    version: String,
    model: T,
}

/// Saves `model` as JSON, tagged with `kind` (the formulation's name). The file is written
/// to a temporary name and renamed, so a crash never leaves half a model behind.
pub fn save_json<T: Serialize>(path: &Path, kind: &str, model: &T) -> Result<()> {
    let envelope = Envelope {
        glassbox_model: kind.to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        model,
    };
    let text = serde_json::to_string_pretty(&envelope).map_err(|e| GlassboxError::Model {
        file: path.display().to_string(),
        message: e.to_string(),
    })?;
    write_atomically(path, text.as_bytes())
}

/// The envelope's tag alone: reading it skips the model instead of building it (a model
/// over 10^6 features is a file of 100 MB).
#[derive(Deserialize)]
struct Tag {
    #[serde(default)]
    glassbox_model: Option<String>,
}

/// The formulation name `text` (the content of model file `path`) declares.
fn read_tag(path: &Path, text: &str) -> Result<String> {
    let not_a_model = |why: String| GlassboxError::Model {
        file: path.display().to_string(),
        message: format!("not a glassbox model ({why})"),
    };
    match serde_json::from_str::<Tag>(text) {
        Ok(tag) => tag
            .glassbox_model
            .ok_or_else(|| not_a_model("no \"glassbox_model\" field".to_string())),
        // Only a file that is no model comes here, so reading it whole costs nothing.
        Err(e) if e.is_data() => {
            let tag = serde_json::from_str::<serde_json::Value>(text)
                .ok()
                .and_then(|v| v.get("glassbox_model").cloned());
            Err(not_a_model(match tag {
                Some(tag) => {
                    format!("its \"glassbox_model\" field is {tag}, not the name of a formulation")
                }
                None => "no \"glassbox_model\" field".to_string(),
            }))
        }
        Err(e) => Err(GlassboxError::Model {
            file: path.display().to_string(),
            message: format!("not valid JSON: {e}"),
        }),
    }
}

/// What every model read from a file must pass before anything uses it: [`load_json`]
/// calls it after parsing, so no model kind can skip it. A file that parses may still be
/// inconsistent (edited by hand, damaged, or made by the fuzzer): sizes that disagree, a
/// tree link out of range or in a cycle, a depth whose heap would not fit in memory.
pub trait CheckedModel {
    /// Checks that the parts of the model agree (weights against features, classes and
    /// nodes; tree links; depth against node counts; the scaler against the encoding), so
    /// that predicting, describing, explaining and drawing a model that passes cannot
    /// panic. `kind` is the file's tag. The message names the first inconsistent field
    /// and its sizes.
    fn check(&self, kind: &str) -> std::result::Result<(), String>;
}

/// Loads a model saved by [`save_json`], checking that it was made by formulation `kind`
/// and that it is consistent ([`CheckedModel::check`]).
pub fn load_json<T: DeserializeOwned + CheckedModel>(path: &Path, kind: &str) -> Result<T> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| GlassboxError::io(path, e))?;
    let found = read_tag(path, &text)?;
    if found != kind {
        return Err(GlassboxError::Model {
            file,
            message: format!("this is a '{found}' model, expected a '{kind}' model"),
        });
    }
    let envelope: Envelope<T> = serde_json::from_str(&text).map_err(|e| GlassboxError::Model {
        file: file.clone(),
        message: format!("malformed '{kind}' model: {e}"),
    })?;
    envelope
        .model
        .check(kind)
        .map_err(|m| GlassboxError::Model {
            file,
            message: format!("inconsistent '{kind}' model: {m}"),
        })?;
    Ok(envelope.model)
}

/// Checks that the scaler fits the encoding and that each `(what, found, expected)`
/// agrees; the message names the first that does not (the fuzzer found hand-made files
/// whose sizes disagree panicking at predict).
pub fn check_sizes(
    scaler: &crate::data::MinMaxScaler,
    encoding: &crate::data::Encoding,
    sizes: &[(&str, usize, usize)],
) -> std::result::Result<(), String> {
    scaler.check_against(encoding)?;
    match sizes.iter().find(|(_, found, expected)| found != expected) {
        Some((what, found, expected)) => Err(format!("{what} is {found}, expected {expected}")),
        None => Ok(()),
    }
}

/// Checks a depth read from a file against the depths the formulation fits (a larger one
/// would size heaps of 2^depth nodes).
pub fn check_depth(
    depth: usize,
    range: std::ops::RangeInclusive<usize>,
) -> std::result::Result<(), String> {
    if range.contains(&depth) {
        return Ok(());
    }
    Err(format!(
        "depth {depth} is outside {}..={}",
        range.start(),
        range.end()
    ))
}

/// Checks that a classifier read from a file has at least `least` classes (predicting
/// names the class of each column of probabilities).
pub fn check_classes(classes: &[String], least: usize) -> std::result::Result<(), String> {
    if classes.len() < least {
        return Err(format!(
            "{} class(es), expected at least {least}",
            classes.len()
        ));
    }
    Ok(())
}

/// Deserializes a matrix as nalgebra writes it, `[data, nrows, ncols]`, with a size check
/// that cannot overflow (nalgebra's own computes `nrows * ncols`, which panics in a debug
/// build on a file naming huge sizes). For `#[serde(deserialize_with = ...)]`.
pub fn checked_matrix<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<DMatrix<f64>, D::Error> {
    let (data, nrows, ncols): (Vec<f64>, usize, usize) = Deserialize::deserialize(deserializer)?;
    if nrows.checked_mul(ncols) != Some(data.len()) {
        return Err(serde::de::Error::custom(format!(
            "a {nrows} x {ncols} matrix holds {} number(s)",
            data.len()
        )));
    }
    Ok(DMatrix::from_vec(nrows, ncols, data))
}

/// The formulation name a saved model file declares.
pub fn model_kind(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path).map_err(|e| GlassboxError::io(path, e))?;
    read_tag(path, &text)
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomically_with(path, |w| w.write_all(bytes))
}

/// The folder a file is written in (`.` for a bare name).
pub(crate) fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Like [`write_atomically`], for content that `write` streams (large files): the
/// temporary file is removed when `write` or the rename fails.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<()> {
    // A path that is no regular file (`/dev/null`, a FIFO, `>(cmd)`) is written into: a
    // rename would replace it, and its folder may take no temporary file.
    if is_special_file(path) {
        return std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|mut into| write(&mut into))
            .map_err(|e| GlassboxError::io(path, e));
    }
    let tmp = temporary_path(path);
    let written = std::fs::File::create(&tmp).and_then(|mut file| write(&mut file));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        // Named by the file the user asked for, not the temporary one.
        return Err(GlassboxError::io(path, e));
    }
    put_in_place(&tmp, path).map_err(|e| GlassboxError::io(path, e))
}

/// The temporary file [`write_atomically_with`] writes `path` through (`.NAME.tmpPID` in
/// its folder), for a front end that must remove it when the process is interrupted.
pub fn temporary_path(path: &Path) -> std::path::PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "out".to_string());
    folder_of(path).join(format!(".{name}.tmp{}", std::process::id()))
}

/// Whether `path` (links followed) exists and is neither a regular file nor a folder: a
/// device, a FIFO, a socket, which are written into rather than replaced.
fn is_special_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Puts the finished temporary file `tmp` at `path`, as the user means the path: renamed
/// over a regular file; written into what is not one (`/dev/null`, a FIFO, `>(cmd)`), which
/// a rename would replace; renamed over the target of a symbolic link, which stays a link.
/// `tmp` is removed in every case.
pub(crate) fn put_in_place(tmp: &Path, path: &Path) -> std::io::Result<()> {
    let result = (|| {
        if is_special_file(path) {
            let mut into = std::fs::OpenOptions::new().write(true).open(path)?;
            std::io::copy(&mut std::fs::File::open(tmp)?, &mut into)?;
            return std::fs::remove_file(tmp);
        }
        let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        let target = match is_link {
            true => std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
            false => path.to_path_buf(),
        };
        match std::fs::rename(tmp, &target) {
            // A link to another file system: copied there instead.
            Err(e) if is_link && e.kind() == std::io::ErrorKind::CrossesDevices => {
                std::fs::copy(tmp, &target)?;
                std::fs::remove_file(tmp)
            }
            other => other,
        }
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(tmp);
    }
    result
}

/// A fitted regressor over the features of the user's table (in the user's units: the
/// model carries its own scaling).
pub trait Regressor {
    /// The name of the target column it predicts.
    fn target(&self) -> &str;
    /// How the raw columns of a table are encoded into this model's features.
    fn encoding(&self) -> &crate::data::Encoding;
    /// The model as text a person reads (rules and leaf models in the user's units).
    fn describe(&self) -> String;
    /// One prediction per row of `x` (encoded, unscaled features).
    fn predict(&self, x: &DMatrix<f64>) -> Vec<f64>;
}

/// A fitted model as the front ends see it (`glassbox predict`, `show`, `draw`, `explain`,
/// the Python package), whatever formulation made it: the formulation registry's loaders
/// return one. A model implements what it can; the rest answers `None`.
pub trait FittedModel: Send + Sync {
    /// The model as a classifier, if it classifies.
    fn as_classifier(&self) -> Option<&dyn Classifier> {
        None
    }
    /// The model as a regressor, if it predicts numbers.
    fn as_regressor(&self) -> Option<&dyn Regressor> {
        None
    }
    /// The drawing of a tree model.
    fn diagram(&self) -> Option<crate::diagram::TreeDiagram> {
        None
    }
    /// The local explanations of a model that gives them.
    fn explainer(&self) -> Option<&dyn Explainer> {
        None
    }
    /// The model as JSON: the `model` field of its saved file.
    fn to_json(&self) -> Result<serde_json::Value>;
    /// The model as text a person reads (its rules, leaves and sparsity).
    fn describe(&self) -> String {
        match (self.as_regressor(), self.as_classifier()) {
            (Some(r), _) => r.describe(),
            (None, Some(c)) => c.describe(),
            (None, None) => String::new(),
        }
    }
}

/// What the models of a type can do beyond predicting, known without a model: the
/// formulation registry records it, so a front end refuses a request (draw, explain) before
/// reading a file and lists the formulations that can serve it. [`crate::fitted_model!`]
/// implements it with [`FittedModel`].
pub trait ModelAbilities {
    /// Its models draw as trees ([`FittedModel::diagram`] gives one).
    const DRAWS: bool = false;
    /// Its models explain their predictions ([`FittedModel::explainer`] gives one).
    const EXPLAINS: bool = false;
}

/// JSON values (what [`FittedModel::to_json`] returns).
pub use serde_json::Value as JsonValue;

/// The JSON of a serializable model, for [`FittedModel::to_json`].
pub fn json_of<T: Serialize>(model: &T) -> Result<serde_json::Value> {
    serde_json::to_value(model).map_err(|e| GlassboxError::Config(format!("model to JSON: {e}")))
}

/// Saves a model through the [`FittedModel`] trait, tagged with `kind`, as [`save_json`].
pub fn save_fitted(path: &Path, kind: &str, model: &dyn FittedModel) -> Result<()> {
    save_json(path, kind, &model.to_json()?)
}

/// Local explanations of a model's predictions on a CSV file (`glassbox explain`).
pub trait Explainer {
    /// Explains the rows of the CSV file `data`, writes the explanations as CSV to `out` and,
    /// where the model draws them, a plot to `plot`. Returns what to tell the user (lines for
    /// stdout) and notes (for stderr). A plot the model cannot draw is an error before
    /// anything is written.
    fn explain(&self, data: &Path, out: &Path, plot: Option<&Path>) -> Result<ExplainReport>;
}

/// What [`Explainer::explain`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExplainReport {
    /// Lines for the user (files written).
    pub messages: Vec<String>,
    /// Notes (e.g. a plot drawn without text for want of a font).
    pub notes: Vec<String>,
}

/// Implements [`FittedModel`] for a model type that is a [`Classifier`] (`classifier`), a
/// [`Regressor`] (`regressor`) or either, as its content says (`either`: the type has
/// `fn is_regression(&self) -> bool`), with an optional `diagram = f` (`f(&model)` draws it)
/// and `explainer = Explainer` (the type implements [`Explainer`]).
#[macro_export]
macro_rules! fitted_model {
    ($t:ty, classifier $(, diagram = $d:expr)? $(, explainer = $ex:ident)?) => {
        $crate::fitted_model!(@abilities $t $(, diagram = $d)? $(, explainer = $ex)?);
        impl $crate::model::FittedModel for $t {
            fn as_classifier(&self) -> Option<&dyn $crate::model::Classifier> {
                Some(self)
            }
            $crate::fitted_model!(@rest $t $(, diagram = $d)? $(, explainer = $ex)?);
        }
    };
    ($t:ty, regressor $(, diagram = $d:expr)? $(, explainer = $ex:ident)?) => {
        $crate::fitted_model!(@abilities $t $(, diagram = $d)? $(, explainer = $ex)?);
        impl $crate::model::FittedModel for $t {
            fn as_regressor(&self) -> Option<&dyn $crate::model::Regressor> {
                Some(self)
            }
            $crate::fitted_model!(@rest $t $(, diagram = $d)? $(, explainer = $ex)?);
        }
    };
    ($t:ty, either $(, diagram = $d:expr)? $(, explainer = $ex:ident)?) => {
        $crate::fitted_model!(@abilities $t $(, diagram = $d)? $(, explainer = $ex)?);
        impl $crate::model::FittedModel for $t {
            fn as_classifier(&self) -> Option<&dyn $crate::model::Classifier> {
                (!self.is_regression()).then_some(self as &dyn $crate::model::Classifier)
            }
            fn as_regressor(&self) -> Option<&dyn $crate::model::Regressor> {
                self.is_regression().then_some(self as &dyn $crate::model::Regressor)
            }
            $crate::fitted_model!(@rest $t $(, diagram = $d)? $(, explainer = $ex)?);
        }
    };
    (@abilities $t:ty $(, diagram = $d:expr)? $(, explainer = $ex:ident)?) => {
        impl $crate::model::ModelAbilities for $t {
            $(const DRAWS: bool = { let _ = stringify!($d); true };)?
            $(const EXPLAINS: bool = { let _ = stringify!($ex); true };)?
        }
    };
    (@rest $t:ty $(, diagram = $d:expr)? $(, explainer = $ex:ident)?) => {
        fn to_json(&self) -> $crate::Result<$crate::model::JsonValue> {
            $crate::model::json_of(self)
        }
        $(
            fn diagram(&self) -> Option<$crate::diagram::TreeDiagram> {
                Some(($d)(self))
            }
        )?
        $(
            fn explainer(&self) -> Option<&dyn $crate::model::Explainer> {
                // The type implements the trait named here.
                Some(self as &dyn $crate::model::$ex)
            }
        )?
    };
}

#[cfg(test)]
mod tests {
    use super::read_tag;
    use std::path::Path;

    #[test]
    fn the_tag_must_be_a_formulation_name() {
        let tag = |text: &str| read_tag(Path::new("m.json"), text).map_err(|e| e.to_string());
        assert_eq!(tag(r#"{"glassbox_model": "sorct"}"#).unwrap(), "sorct");
        let e = tag(r#"{"glassbox_model": 1, "version": "9"}"#).unwrap_err();
        assert!(
            e.contains("its \"glassbox_model\" field is 1, not the name"),
            "{e}"
        );
        let e = tag(r#"{"model": {}}"#).unwrap_err();
        assert!(e.contains("no \"glassbox_model\" field"), "{e}");
        let e = tag("[1, 2, 3]").unwrap_err();
        assert!(e.contains("no \"glassbox_model\" field"), "{e}");
        let e = tag("{not json").unwrap_err();
        assert!(e.contains("not valid JSON"), "{e}");
    }
}
