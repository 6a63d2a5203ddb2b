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
    let not_a_model = || GlassboxError::Model {
        file: path.display().to_string(),
        message: "not a glassbox model (no \"glassbox_model\" field)".to_string(),
    };
    match serde_json::from_str::<Tag>(text) {
        Ok(tag) => tag.glassbox_model.ok_or_else(not_a_model),
        Err(e) if e.is_data() => Err(not_a_model()),
        Err(e) => Err(GlassboxError::Model {
            file: path.display().to_string(),
            message: format!("not valid JSON: {e}"),
        }),
    }
}

/// Loads a model saved by [`save_json`], checking that it was made by formulation `kind`.
pub fn load_json<T: DeserializeOwned>(path: &Path, kind: &str) -> Result<T> {
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
        file,
        message: format!("malformed '{kind}' model: {e}"),
    })?;
    Ok(envelope.model)
}

/// For a model read from `path`, checks the sizes predicting relies on: the scaler fits
/// the encoding, the depth is at most `max_depth` (a larger one would size heaps of
/// 2^depth nodes), and each `(what, found, expected)` agrees. The error names the first
/// that does not (the fuzzer found hand-made files whose sizes disagree panicking at
/// predict).
pub fn check_sizes(
    path: &Path,
    scaler: &crate::data::MinMaxScaler,
    encoding: &crate::data::Encoding,
    depth: (usize, usize),
    sizes: impl FnOnce() -> Vec<(&'static str, usize, usize)>,
) -> Result<()> {
    let bad = |message: String| GlassboxError::Model {
        file: path.display().to_string(),
        message,
    };
    scaler.check_against(encoding).map_err(bad)?;
    let (depth, max_depth) = depth;
    if depth > max_depth {
        return Err(bad(format!("depth {depth} is above {max_depth}")));
    }
    match sizes()
        .into_iter()
        .find(|(_, found, expected)| found != expected)
    {
        Some((what, found, expected)) => {
            Err(bad(format!("{what} is {found}, expected {expected}")))
        }
        None => Ok(()),
    }
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

/// Like [`write_atomically`], for content that `write` streams (large files): the
/// temporary file is removed when `write` or the rename fails.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "out".to_string());
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let written = std::fs::File::create(&tmp).and_then(|mut file| write(&mut file));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(GlassboxError::io(&tmp, e));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        GlassboxError::io(path, e)
    })
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
