//! Errors of the session layer. Messages match pi 1.6.0 where pi has one.

use std::path::PathBuf;

/// What can go wrong opening, writing or navigating a session.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// A file or directory operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done (includes the path).
        context: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A non-empty file whose first entry is not a session header.
    #[error("Session file is not a valid pi session: {}", .0.display())]
    NotASession(PathBuf),
    /// A caller-chosen session id has a bad shape.
    #[error(
        "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character"
    )]
    InvalidSessionId,
    /// An entry id that is not in the session.
    #[error("Entry {0} not found")]
    EntryNotFound(String),
    /// A context edit whose target is not on the current branch.
    #[error("Entry {0} is not on the active branch")]
    NotOnActiveBranch(String),
    /// A context edit whose target adds no editable model content.
    #[error("Entry {0} does not contribute editable model content")]
    NotEditable(String),
    /// A context edit replacement that is neither `null` nor `{content: string | array}`.
    #[error("Context edit replacement must be null or contain string/array content")]
    InvalidReplacement,
    /// Forking from a file that holds no session.
    #[error("Cannot fork: source session file is empty or invalid: {}", .0.display())]
    ForkSourceInvalid(PathBuf),
    /// An entry could not be serialized.
    #[error("could not serialize a session entry: {0}")]
    Serialize(#[from] serde_json::Error),
}

impl SessionError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        SessionError::Io { context: context.into(), source }
    }
}
