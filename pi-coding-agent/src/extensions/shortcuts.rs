//! Keyboard shortcuts extensions register (pi's `registerShortcut`): the interactive mode binds
//! them; [`ExtensionRunner::run_shortcut`](crate::extensions::ExtensionRunner::run_shortcut) runs
//! one with a fresh context, reporting a failure as pi does (`{extensionPath, event: "shortcut"}`).

use std::sync::Arc;

use futures::future::BoxFuture;

use super::errors::BoxError;
use super::runtime::ExtensionContext;

/// A shortcut handler: `(ctx)`.
pub type ShortcutHandler = Arc<dyn Fn(ExtensionContext) -> BoxFuture<'static, Result<(), BoxError>> + Send + Sync>;

/// A shortcut an extension registered.
#[derive(Clone)]
pub struct RegisteredShortcut {
    /// The key, as written by the extension (`"ctrl+shift+p"`).
    pub shortcut: String,
    /// What it does.
    pub description: Option<String>,
    /// The handler.
    pub handler: ShortcutHandler,
    /// The extension's path.
    pub extension_path: String,
}

impl std::fmt::Debug for RegisteredShortcut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredShortcut").field("shortcut", &self.shortcut).finish_non_exhaustive()
    }
}
