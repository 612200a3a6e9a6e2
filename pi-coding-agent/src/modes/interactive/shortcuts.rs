//! Shortcuts extensions register (`pi.registerShortcut`), bound in the editor as pi binds them:
//! a key of a reserved built-in action (`app.interrupt`, `tui.input.submit`, …) is refused with
//! pi's warning, a key of another built-in action goes to the extension (with pi's warning),
//! and a matching key runs the handler on the session's runtime.

use pi_tui::keys::{DEFAULT_BINDINGS, Keybindings, matches_key};

use super::app::App;

/// pi's `RESERVED_KEYBINDINGS_FOR_EXTENSION_CONFLICTS`.
const RESERVED: &[&str] = &[
    "app.interrupt",
    "app.clear",
    "app.exit",
    "app.suspend",
    "app.thinking.cycle",
    "app.model.cycleForward",
    "app.model.cycleBackward",
    "app.model.select",
    "app.tools.expand",
    "app.thinking.toggle",
    "app.editor.external",
    "app.message.copy",
    "app.message.followUp",
    "tui.input.submit",
    "tui.select.confirm",
    "tui.select.cancel",
    "tui.input.copy",
    "tui.editor.deleteToLineEnd",
];

/// The action names of `keys` that bind `key`, reserved ones first.
fn builtin_action(keys: &Keybindings, key: &str) -> Option<(String, bool)> {
    let key = key.to_lowercase();
    let mut found: Option<(String, bool)> = None;
    let actions = DEFAULT_BINDINGS.iter().chain(super::keys::APP_BINDINGS.iter()).map(|(a, _)| *a);
    for action in actions {
        if keys.keys(action).iter().any(|k| k.to_lowercase() == key) {
            let reserved = RESERVED.contains(&action);
            if found.as_ref().is_none_or(|(_, r)| !r && reserved) {
                found = Some((action.to_owned(), reserved));
            }
        }
    }
    found
}

impl App {
    /// Binds the extensions' shortcuts; returns pi's diagnostics.
    pub(crate) fn bind_extension_shortcuts(&mut self) -> Vec<String> {
        let mut warnings = Vec::new();
        let mut list = Vec::new();
        let Some(runner) = self.session.extension_runner() else { return warnings };
        for s in runner.shortcuts() {
            match builtin_action(&self.keys, &s.shortcut) {
                Some((_, true)) => {
                    warnings.push(format!(
                        "Extension shortcut '{}' from {} conflicts with built-in shortcut. Skipping.",
                        s.shortcut, s.extension_path
                    ));
                    continue;
                }
                Some((action, false)) => warnings.push(format!(
                    "Extension shortcut conflict: '{}' is built-in shortcut for {action} and {}. Using {}.",
                    s.shortcut, s.extension_path, s.extension_path
                )),
                None => {}
            }
            let description = s.description.clone().unwrap_or_else(|| s.extension_path.clone());
            list.push((s.shortcut.clone(), description));
        }
        self.shortcut_list = list;
        warnings
    }

    /// `(key, description)` of the bound extension shortcuts (`/hotkeys`).
    pub(crate) fn extension_shortcuts(&self) -> Vec<(String, String)> {
        self.shortcut_list.clone()
    }

    /// Runs the extension shortcut `data` is, if any.
    pub(crate) fn run_extension_shortcut(&mut self, data: &str) -> bool {
        let Some((key, _)) = self.shortcut_list.iter().find(|(k, _)| matches_key(data, k)).cloned() else {
            return false;
        };
        let Some(runner) = self.session.extension_runner().cloned() else { return false };
        tokio::spawn(async move {
            runner.run_shortcut(&key).await;
        });
        true
    }
}
