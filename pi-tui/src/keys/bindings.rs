//! Keybindings: named actions with pi's default keys and user overrides.

use std::collections::HashMap;

use super::matches_key;

/// pi 1.6.0's default bindings for the built-in components.
pub const DEFAULT_BINDINGS: &[(&str, &[&str])] = &[
    ("tui.editor.cursorUp", &["up"]),
    ("tui.editor.cursorDown", &["down"]),
    ("tui.editor.cursorLeft", &["left", "ctrl+b"]),
    ("tui.editor.cursorRight", &["right", "ctrl+f"]),
    ("tui.editor.cursorWordLeft", &["alt+left", "ctrl+left", "alt+b"]),
    ("tui.editor.cursorWordRight", &["alt+right", "ctrl+right", "alt+f"]),
    ("tui.editor.cursorLineStart", &["home", "ctrl+a"]),
    ("tui.editor.cursorLineEnd", &["end", "ctrl+e"]),
    ("tui.editor.jumpForward", &["ctrl+]"]),
    ("tui.editor.jumpBackward", &["ctrl+alt+]"]),
    ("tui.editor.pageUp", &["pageUp", "ctrl+pageUp"]),
    ("tui.editor.pageDown", &["pageDown", "ctrl+pageDown"]),
    ("tui.editor.deleteCharBackward", &["backspace"]),
    ("tui.editor.deleteCharForward", &["delete", "ctrl+d"]),
    ("tui.editor.deleteWordBackward", &["ctrl+w", "alt+backspace"]),
    ("tui.editor.deleteWordForward", &["alt+d", "alt+delete"]),
    ("tui.editor.deleteToLineStart", &["ctrl+u"]),
    ("tui.editor.deleteToLineEnd", &["ctrl+k"]),
    ("tui.editor.yank", &["ctrl+y"]),
    ("tui.editor.yankPop", &["alt+y"]),
    ("tui.editor.undo", &["ctrl+-"]),
    ("tui.input.newLine", &["shift+enter", "ctrl+j"]),
    ("tui.input.submit", &["enter"]),
    ("tui.input.tab", &["tab"]),
    ("tui.input.copy", &["ctrl+c"]),
    ("tui.select.up", &["up"]),
    ("tui.select.down", &["down"]),
    ("tui.select.pageUp", &["pageUp"]),
    ("tui.select.pageDown", &["pageDown"]),
    ("tui.select.confirm", &["enter"]),
    ("tui.select.cancel", &["escape", "ctrl+c"]),
    ("tui.altScreen.pageUp", &["pageUp"]),
    ("tui.altScreen.pageDown", &["pageDown"]),
    ("tui.altScreen.halfPageUp", &[]),
    ("tui.altScreen.halfPageDown", &[]),
    ("tui.altScreen.lineUp", &[]),
    ("tui.altScreen.lineDown", &[]),
    ("tui.altScreen.search", &["ctrl+shift+f"]),
    ("tui.altScreen.searchNext", &["enter", "ctrl+g"]),
    ("tui.altScreen.searchPrevious", &["shift+enter", "ctrl+shift+g"]),
    ("tui.altScreen.searchClose", &["escape"]),
    ("tui.altScreen.top", &["ctrl+home"]),
    ("tui.altScreen.bottom", &["ctrl+end"]),
];

/// Action → key ids. Starts from [`DEFAULT_BINDINGS`]; overrides replace an action's keys.
#[derive(Debug, Clone)]
pub struct Keybindings {
    map: HashMap<String, Vec<String>>,
}

impl Default for Keybindings {
    fn default() -> Self {
        let map = DEFAULT_BINDINGS
            .iter()
            .map(|(a, keys)| (a.to_string(), keys.iter().map(|k| k.to_string()).collect()))
            .collect();
        Self { map }
    }
}

impl Keybindings {
    /// Replace the keys of one action (an empty list disables it).
    pub fn set(&mut self, action: &str, keys: &[&str]) {
        self.map.insert(action.to_string(), keys.iter().map(|k| k.to_string()).collect());
    }

    /// The keys bound to an action.
    pub fn keys(&self, action: &str) -> &[String] {
        self.map.get(action).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Whether raw input `data` triggers `action`.
    pub fn matches(&self, data: &str, action: &str) -> bool {
        self.keys(action).iter().any(|k| matches_key(data, k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let mut kb = Keybindings::default();
        assert!(kb.matches("\x1b[13;2u", "tui.input.newLine"));
        assert!(kb.matches("\x03", "tui.select.cancel"));
        kb.set("tui.input.submit", &["ctrl+s"]);
        assert!(!kb.matches("\r", "tui.input.submit"));
        assert!(kb.matches("\x13", "tui.input.submit"));
    }
}
