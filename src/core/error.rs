//! The library's error type. Every message names what was wrong (file, column, value,
//! option) and, where possible, how to fix it. The CLI prints it as one line.

use thiserror::Error;

/// Errors raised by glassbox. Backend failures during a solve are *not* errors: they are
/// reported as a [`crate::TerminationStatus`] in the [`crate::SolveResult`].
#[derive(Debug, Error)]
pub enum GlassboxError {
    /// A data file could not be read or has a problem (missing column, mixed types, ...).
    #[error("data error in {file}: {message}")]
    Data { file: String, message: String },
    /// A configuration value is invalid.
    #[error("config error: {0}")]
    Config(String),
    /// No backend of that name is registered (or it was not compiled in).
    #[error("unknown solver '{name}': known solvers are {known}")]
    UnknownSolver { name: String, known: String },
    /// An option for a backend is unknown or of the wrong type.
    #[error("invalid option '{option}' for solver '{solver}': {message}")]
    InvalidOption {
        solver: String,
        option: String,
        message: String,
    },
    /// A backend was asked for something it cannot do.
    #[error("solver '{solver}' cannot {what}")]
    Capability { solver: String, what: String },
    /// A problem given to a backend is malformed (dimension mismatch, bad bounds, ...).
    #[error("invalid problem: {0}")]
    InvalidProblem(String),
    /// A learning problem cannot be built on this data with these parameters.
    #[error("{formulation}: {message}")]
    Formulation {
        formulation: String,
        message: String,
    },
    /// A model file could not be read or is of another kind.
    #[error("model error in {file}: {message}")]
    Model { file: String, message: String },
    /// An I/O error with the path it concerned. The OS's message is part of this message
    /// and not also a `source()`: a reporter that prints the chain (anyhow's `{:#}`, as
    /// `glassbox` does) would print it twice.
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
}

/// Shorthand for results with [`GlassboxError`].
pub type Result<T> = std::result::Result<T, GlassboxError>;

impl GlassboxError {
    /// An I/O error on `path`.
    pub fn io(path: impl AsRef<std::path::Path>, source: std::io::Error) -> Self {
        GlassboxError::Io {
            path: path.as_ref().display().to_string(),
            error: source,
        }
    }

    /// A data error in `file`.
    pub fn data(file: impl Into<String>, message: impl Into<String>) -> Self {
        GlassboxError::Data {
            file: file.into(),
            message: message.into(),
        }
    }

    /// The error as a config error about `context` (a grid cell, a file): "context:
    /// message", with one "config error:" in front where it was one already.
    pub fn within(self, context: &str) -> Self {
        let message = match self {
            GlassboxError::Config(m) => m,
            other => other.to_string(),
        };
        GlassboxError::Config(format!("{context}: {message}"))
    }

    /// A formulation error.
    pub fn formulation(formulation: impl Into<String>, message: impl Into<String>) -> Self {
        GlassboxError::Formulation {
            formulation: formulation.into(),
            message: message.into(),
        }
    }
}
