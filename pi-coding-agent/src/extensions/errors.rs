//! Errors of the extension system: handler failures reported to `on_error` listeners, load
//! failures, and API misuse.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Boxed error returned by handlers, commands and setup functions.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What pi's action methods throw before the runner is bound.
pub const RUNTIME_NOT_INITIALIZED: &str =
    "Extension runtime not initialized. Action methods cannot be called during extension loading.";

/// What `context_with_system` reports when a handler drops the leading system message.
pub const REMOVED_LEADING_SYSTEM_MESSAGE: &str = "Handler removed the leading system message; the request has no prompt or initial tool declarations. Keep it at index 0 or replace a dropped prefix with getCurrentSystemMessage().";

/// What `message_end` reports when a handler changes the role of the message.
pub const MESSAGE_END_SAME_ROLE: &str = "message_end handlers must return a message with the same role";

/// What `user_bash` reports (and returns) for a result that is neither `{operations}` nor a valid
/// `{result}`.
pub const INVALID_USER_BASH_RESULT: &str = "Invalid user_bash handler result: return undefined for local execution or exactly one valid { operations } or { result } object";

/// A handler failure (pi's `ExtensionError`), reported to every [`on_error`] listener.
///
/// Serializes as pi does: `{"extensionPath", "event", "error", "stack"?}`.
///
/// [`on_error`]: crate::extensions::ExtensionRunner::on_error
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Error)]
#[serde(rename_all = "camelCase")]
#[error("Extension error ({extension_path}): {error}")]
pub struct ExtensionError {
    /// The extension's path (`<inline:N>` for inline ones, `command:<name>` for commands).
    pub extension_path: String,
    /// The event (`context`, `tool_result`, …) or action that failed.
    pub event: String,
    /// The error message (a panic's message for a panicking handler).
    pub error: String,
    /// A stack trace, when one is known (never for Rust handlers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
}

impl ExtensionError {
    /// An error without a stack.
    pub fn new(extension_path: impl Into<String>, event: impl Into<String>, error: impl Into<String>) -> Self {
        ExtensionError { extension_path: extension_path.into(), event: event.into(), error: error.into(), stack: None }
    }
}

/// An extension that failed to load (pi's `{path, error}` entry of `LoadExtensionsResult.errors`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Error)]
#[error("{path}: {error}")]
pub struct ExtensionLoadError {
    /// The path (or inline name) of the extension.
    pub path: String,
    /// `Failed to load extension: <message>`.
    pub error: String,
}

/// Errors of the extension API itself (registration and actions).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ExtensionApiError {
    /// An action was called before the runner was bound to a session.
    #[error("{}", RUNTIME_NOT_INITIALIZED)]
    NotInitialized,
    /// The extension failed to load; its captured API no longer works.
    #[error("Extension \"{0}\" failed to load and its API is no longer active.")]
    Inactive(String),
    /// A registration was rejected (pi's exact message).
    #[error("{0}")]
    Invalid(String),
    /// The bound runtime failed the action.
    #[error("{0}")]
    Action(String),
}

/// The message of a panic payload.
pub(crate) fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "handler panicked".to_owned()
    }
}
