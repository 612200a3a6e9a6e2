//! Keyboard shortcuts extensions register (pi's `registerShortcut`): the interactive mode binds
//! them; [`ExtensionRunner::run_shortcut`] runs one with a fresh context, reporting a failure as
//! pi does (`{extensionPath, event: "shortcut"}`).

use std::sync::Arc;

use futures::future::BoxFuture;

use super::api::ExtensionApi;
use super::errors::{BoxError, ExtensionApiError, ExtensionError};
use super::runner::ExtensionRunner;
use super::runtime::{ExtensionContext, lock};

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

impl ExtensionApi {
    /// Registers a keyboard shortcut (pi's `pi.registerShortcut(shortcut, {description, handler})`).
    pub fn register_shortcut(
        &self,
        shortcut: &str,
        description: Option<&str>,
        handler: impl Fn(ExtensionContext) -> BoxFuture<'static, Result<(), BoxError>> + Send + Sync + 'static,
    ) -> Result<(), ExtensionApiError> {
        let registered = RegisteredShortcut {
            shortcut: shortcut.to_owned(),
            description: description.map(str::to_owned),
            handler: Arc::new(handler),
            extension_path: self.path().to_owned(),
        };
        lock(&self.record.shortcuts).insert(shortcut.to_owned(), registered);
        Ok(())
    }
}

impl ExtensionRunner {
    /// Every registered shortcut, the first registration of a key winning.
    pub fn shortcuts(&self) -> Vec<RegisteredShortcut> {
        let mut out: Vec<RegisteredShortcut> = Vec::new();
        for ext in &self.extensions {
            for s in lock(&ext.shortcuts).values() {
                if !out.iter().any(|o| o.shortcut == s.shortcut) {
                    out.push(s.clone());
                }
            }
        }
        out
    }

    /// Runs the shortcut `key`; `false` when none is registered. A failure is reported.
    pub async fn run_shortcut(&self, key: &str) -> bool {
        let Some(shortcut) = self.shortcuts().into_iter().find(|s| s.shortcut == key) else {
            return false;
        };
        if let Err(error) = (shortcut.handler)(self.create_context()).await {
            self.emit_error(ExtensionError::new(&shortcut.extension_path, "shortcut", error.to_string()));
        }
        true
    }
}
