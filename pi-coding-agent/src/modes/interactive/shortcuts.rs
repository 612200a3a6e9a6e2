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

/// The built-in action that owns `key`, as pi's `buildBuiltinKeybindings` resolves it: a later
/// action of the same kind replaces an earlier one, and a reserved action is never replaced by
/// one that is not.
fn builtin_action(keys: &Keybindings, key: &str) -> Option<(String, bool)> {
    let key = key.to_lowercase();
    let mut found: Option<(String, bool)> = None;
    let actions = DEFAULT_BINDINGS.iter().chain(super::keys::APP_BINDINGS.iter()).map(|(a, _)| *a);
    for action in actions {
        if keys.keys(action).iter().any(|k| k.to_lowercase() == key) {
            let reserved = RESERVED.contains(&action);
            if found.as_ref().is_none_or(|(_, r)| !*r || reserved) {
                found = Some((action.to_owned(), reserved));
            }
        }
    }
    found
}

/// pi's `formatPathWithSource` for an extension file: `user`/`project` for the agent's and the
/// project's extension folders, `path (temp)` for one given on the command line; `~` for home.
fn source_label(path: &str, agent_dir: &std::path::Path, cwd: &std::path::Path) -> String {
    let p = std::path::Path::new(path);
    let label = if p.starts_with(agent_dir.join("extensions")) {
        "user"
    } else if p.starts_with(cwd.join(".pi").join("extensions")) {
        "project"
    } else {
        "path (temp)"
    };
    let home = std::env::var("HOME").unwrap_or_default();
    let shown = match path.strip_prefix(&home) {
        Some(rest) if !home.is_empty() && rest.starts_with('/') => format!("~{rest}"),
        _ => path.to_owned(),
    };
    format!("{label} {shown}")
}

impl App {
    /// Binds the extensions' shortcuts; returns pi's diagnostics as `(extension path, message)`.
    pub(crate) fn bind_extension_shortcuts(&mut self) -> Vec<(String, String)> {
        let mut warnings = Vec::new();
        let mut list: Vec<(String, String)> = Vec::new();
        let mut owners: Vec<(String, String)> = Vec::new();
        let Some(runner) = self.session.extension_runner() else { return warnings };
        for s in runner.shortcuts() {
            let path = s.extension_path.clone();
            match builtin_action(&self.keys, &s.shortcut) {
                Some((_, true)) => {
                    let m = format!(
                        "Extension shortcut '{}' from {path} conflicts with built-in shortcut. Skipping.",
                        s.shortcut
                    );
                    warnings.push((path, m));
                    continue;
                }
                Some((action, false)) => {
                    let m = format!(
                        "Extension shortcut conflict: '{}' is built-in shortcut for {action} and {path}. Using {path}.",
                        s.shortcut
                    );
                    warnings.push((path.clone(), m));
                }
                None => {}
            }
            let key = s.shortcut.to_lowercase();
            if let Some(i) = owners.iter().position(|(k, _)| *k == key) {
                let m = format!(
                    "Extension shortcut conflict: '{}' registered by both {} and {path}. Using {path}.",
                    s.shortcut, owners[i].1
                );
                warnings.push((path.clone(), m));
                owners.remove(i);
                list.remove(i);
            }
            let description = s.description.clone().unwrap_or_else(|| path.clone());
            owners.push((key, path));
            list.push((s.shortcut.clone(), description));
        }
        self.shortcut_list = list;
        warnings
    }

    /// pi's `[Extension issues]` section below the loaded resources: each diagnostic as its
    /// extension's path (with its source) and the message, in the warning colour.
    pub(crate) fn show_extension_issues(&mut self, issues: &[(String, String)]) {
        if issues.is_empty() {
            return;
        }
        let cwd = std::path::PathBuf::from(self.session.cwd());
        let mut lines = vec![self.theme.fg("warning", "[Extension issues]")];
        for (path, message) in issues {
            lines.push(self.theme.fg("warning", &format!("  {}", source_label(path, &self.agent_dir, &cwd))));
            lines.push(self.theme.fg("warning", &format!("    {message}")));
        }
        let mut header = self.header.borrow_mut();
        header.add_child(pi_tui::shared(pi_tui::Text::new(lines.join("\n"), 0, 0)));
        header.add_child(pi_tui::shared(pi_tui::Spacer::new(1)));
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
