//! The application's keybindings (pi's `KeybindingsManager`): pi-tui's editor and list actions
//! plus the `app.*` actions, with `keybindings.json` from the agent dir overriding them.

use std::path::Path;

use pi_tui::keys::Keybindings;
use serde_json::Value;

/// pi 1.6.0's defaults of the `app.*` actions (`docs/keybindings.md`), in pi's order (which
/// decides the action an extension shortcut's conflict names), plus this port's
/// `app.context.show` (the model view of `/context`).
pub(crate) const APP_BINDINGS: &[(&str, &[&str])] = &[
    ("app.interrupt", &["escape"]),
    ("app.clear", &["ctrl+c"]),
    ("app.exit", &["ctrl+d"]),
    ("app.suspend", &["ctrl+z"]),
    ("app.thinking.cycle", &["shift+tab"]),
    ("app.thinking.save", &["ctrl+s"]),
    ("app.model.cycleForward", &["ctrl+p"]),
    ("app.model.cycleBackward", &["shift+ctrl+p"]),
    ("app.model.select", &["ctrl+l"]),
    ("app.tools.expand", &["ctrl+o"]),
    ("app.thinking.toggle", &["ctrl+t"]),
    ("app.session.toggleNamedFilter", &["ctrl+n"]),
    ("app.editor.external", &["ctrl+g"]),
    ("app.message.copy", &["ctrl+x"]),
    ("app.message.followUp", &["alt+enter"]),
    ("app.message.dequeue", &["alt+up"]),
    ("app.clipboard.pasteImage", &["ctrl+v"]),
    ("app.session.new", &[]),
    ("app.session.tree", &[]),
    ("app.session.fork", &[]),
    ("app.session.resume", &[]),
    ("app.tree.foldOrUp", &["ctrl+left", "alt+left"]),
    ("app.tree.unfoldOrDown", &["ctrl+right", "alt+right"]),
    ("app.tree.editLabel", &["shift+l"]),
    ("app.tree.toggleLabelTimestamp", &["shift+t"]),
    ("app.session.togglePath", &["ctrl+p"]),
    ("app.session.toggleSort", &["ctrl+s"]),
    ("app.session.rename", &["ctrl+r"]),
    ("app.session.delete", &["ctrl+d"]),
    ("app.session.deleteNoninvasive", &["ctrl+backspace"]),
    ("app.models.save", &["ctrl+s"]),
    ("app.models.enableAll", &["ctrl+a"]),
    ("app.models.clearAll", &["ctrl+x"]),
    ("app.models.toggleProvider", &["ctrl+p"]),
    ("app.models.reorderUp", &["alt+up"]),
    ("app.models.reorderDown", &["alt+down"]),
    ("app.tree.filter.default", &["ctrl+d"]),
    ("app.tree.filter.noTools", &["ctrl+t"]),
    ("app.tree.filter.userOnly", &["ctrl+u"]),
    ("app.tree.filter.labeledOnly", &["ctrl+l"]),
    ("app.tree.filter.all", &["ctrl+a"]),
    ("app.tree.filter.cycleForward", &["ctrl+o"]),
    ("app.tree.filter.cycleBackward", &["shift+ctrl+o"]),
    ("app.context.show", &["alt+c"]),
];

/// The bindings in force and the problems found reading `keybindings.json`.
pub(crate) fn load_keybindings(agent_dir: &Path) -> (Keybindings, Vec<String>) {
    let mut keys = Keybindings::default();
    for (action, defaults) in APP_BINDINGS {
        keys.set(action, defaults);
    }
    // pi's Windows keybindings (WSL): the transcript search is on Ctrl+F.
    let wsl = ["WSL_DISTRO_NAME", "WSL_INTEROP"].iter().any(|k| std::env::var_os(k).is_some_and(|v| !v.is_empty()));
    if wsl {
        keys.set("tui.altScreen.search", &["ctrl+f"]);
    }
    let path = agent_dir.join("keybindings.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (keys, Vec::new()),
        Err(e) => return (keys, vec![format!("Failed to read {}: {e}", path.display())]),
    };
    let mut warnings = Vec::new();
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => {
            for (action, value) in map {
                let list: Option<Vec<&str>> = match &value {
                    Value::String(k) => Some(vec![k.as_str()]),
                    Value::Array(items) => items.iter().map(Value::as_str).collect(),
                    _ => None,
                };
                match list {
                    Some(list) => keys.set(&action, &list),
                    None => warnings.push(format!("Invalid keybinding for \"{action}\" in {}", path.display())),
                }
            }
        }
        Ok(_) => warnings.push(format!("Invalid keybindings file {}: expected an object", path.display())),
        Err(e) => warnings.push(format!("Invalid keybindings file {}: {e}", path.display())),
    }
    (keys, warnings)
}

/// Every action of pi's keybindings manager with its keys in force: pi-tui's, then the
/// application's (what `custom()` factories get as `keybindings`).
pub(crate) fn action_keys(keys: &Keybindings) -> Vec<(String, Vec<String>)> {
    pi_tui::keys::DEFAULT_BINDINGS
        .iter()
        .map(|(action, _)| *action)
        .chain(APP_BINDINGS.iter().map(|(action, _)| *action))
        .map(|action| (action.to_owned(), keys.keys(action).to_vec()))
        .collect()
}

/// How a key list is shown in hints: `ctrl+c/ctrl+d` style, joined with `/`.
pub(crate) fn key_text(keys: &Keybindings, action: &str) -> String {
    keys.keys(action).join("/")
}

/// pi's `keyDisplayText`: each part of each key capitalised (`Ctrl+S`, `Alt+Up/Alt+Down`).
pub(crate) fn key_display(keys: &Keybindings, action: &str) -> String {
    keys.keys(action)
        .iter()
        .map(|k| {
            k.split('+')
                .map(|part| {
                    let mut c = part.chars();
                    c.next().map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
                })
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_replace_an_actions_keys() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("keybindings.json"), r#"{"app.exit":"ctrl+q","app.clear":[]}"#).expect("write");
        let (keys, warnings) = load_keybindings(dir.path());
        assert!(warnings.is_empty());
        assert!(keys.matches("\x11", "app.exit"));
        assert!(!keys.matches("\x04", "app.exit"));
        assert!(!keys.matches("\x03", "app.clear"));
        assert!(keys.matches("\x1b", "app.interrupt"));
    }
}
