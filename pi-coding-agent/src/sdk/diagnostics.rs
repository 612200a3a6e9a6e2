//! Diagnostics of resource discovery (pi's `ResourceDiagnostic`): problems are reported, and
//! everything that could still be loaded is loaded.

use std::path::PathBuf;

/// The kind of a diagnostic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiagnosticKind {
    /// A problem that did not stop loading (or skipped one file).
    Warning,
    /// A configured path is missing.
    Error,
    /// Two resources share a name; the first one wins.
    Collision,
}

impl DiagnosticKind {
    /// pi's `type` string: `warning`, `error` or `collision`.
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticKind::Warning => "warning",
            DiagnosticKind::Error => "error",
            DiagnosticKind::Collision => "collision",
        }
    }
}

/// The two sides of a name collision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceCollision {
    /// `skill` or `prompt`.
    pub resource_type: &'static str,
    /// The shared name.
    pub name: String,
    /// The resource that was kept.
    pub winner_path: PathBuf,
    /// The resource that was dropped.
    pub loser_path: PathBuf,
}

/// One problem found while loading skills or prompt templates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceDiagnostic {
    /// Its kind.
    pub kind: DiagnosticKind,
    /// pi's message text.
    pub message: String,
    /// The file or path concerned.
    pub path: PathBuf,
    /// Set for collisions.
    pub collision: Option<ResourceCollision>,
}

impl ResourceDiagnostic {
    pub(crate) fn warning(message: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        ResourceDiagnostic {
            kind: DiagnosticKind::Warning,
            message: message.into(),
            path: path.into(),
            collision: None,
        }
    }

    pub(crate) fn error(message: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        ResourceDiagnostic { kind: DiagnosticKind::Error, message: message.into(), path: path.into(), collision: None }
    }

    pub(crate) fn collision(
        resource_type: &'static str,
        display_name: String,
        name: &str,
        winner: PathBuf,
        loser: PathBuf,
    ) -> Self {
        ResourceDiagnostic {
            kind: DiagnosticKind::Collision,
            message: format!("name \"{display_name}\" collision"),
            path: loser.clone(),
            collision: Some(ResourceCollision {
                resource_type,
                name: name.to_owned(),
                winner_path: winner,
                loser_path: loser,
            }),
        }
    }
}
