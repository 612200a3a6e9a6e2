//! The editor's border colour and what Escape does at the editor, as pi's interactive mode has
//! them (`updateEditorBorderColor` and the editor's `onEscape`): the border takes the thinking
//! level's colour, or `bashMode` while the text starts with `!`; Escape leaves bash mode (the
//! text is cleared), and a second Escape within half a second at an empty editor opens the tree
//! navigator or the fork selector (`doubleEscapeAction`).

use std::rc::Rc;
use std::time::{Duration, Instant};

use pi_ai::ThinkingLevel;
use pi_tui::{CrosstermTerminal, Tui};

use super::app::App;
use crate::settings::DoubleEscapeAction;

/// pi's window for a double Escape.
const DOUBLE_ESCAPE: Duration = Duration::from_millis(500);

/// pi's `getThinkingBorderColor`: the theme colour of a thinking level.
fn thinking_color(level: ThinkingLevel) -> &'static str {
    match level {
        ThinkingLevel::Off => "thinkingOff",
        ThinkingLevel::Minimal => "thinkingMinimal",
        ThinkingLevel::Low => "thinkingLow",
        ThinkingLevel::Medium => "thinkingMedium",
        ThinkingLevel::High => "thinkingHigh",
        ThinkingLevel::Xhigh => "thinkingXhigh",
        ThinkingLevel::Max => "thinkingMax",
    }
}

/// pi's `isBashMode`: the editor's text starts with `!` once leading white space is skipped.
fn is_bash_mode(text: &str) -> bool {
    text.trim_start().starts_with('!')
}

impl App {
    /// Gives the editor's border the colour pi gives it now (checked before each frame: the
    /// thinking level, the model, the text and the theme all change it).
    pub(crate) fn sync_editor_border(&mut self) {
        let key = if is_bash_mode(&self.editor.borrow().text()) {
            "bashMode"
        } else {
            thinking_color(self.session.thinking_level())
        };
        if self.border_key == key {
            return;
        }
        self.border_key = key;
        let theme = self.theme.clone();
        self.editor.borrow_mut().set_border_color(Rc::new(move |s: &str| theme.fg(key, s)));
    }

    /// A new theme draws the border in its own colours at the next frame.
    pub(crate) fn forget_editor_border(&mut self) {
        self.border_key = "";
    }

    /// Escape at the editor while nothing streams and no bash command runs.
    pub(crate) fn escape_at_editor(&mut self, tui: &mut Tui<CrosstermTerminal>) {
        let text = self.editor.borrow().text();
        if is_bash_mode(&text) {
            self.editor.borrow_mut().set_text("");
            self.dirty = true;
            return;
        }
        if !text.trim().is_empty() {
            return;
        }
        let action = self.session.settings_manager().settings().double_escape_action();
        if action == DoubleEscapeAction::None {
            return;
        }
        let now = Instant::now();
        if self.last_escape.is_some_and(|t| now.duration_since(t) < DOUBLE_ESCAPE) {
            self.last_escape = None;
            match action {
                DoubleEscapeAction::Fork => self.command_fork(tui, false),
                _ => self.command_tree(tui, None),
            }
        } else {
            self.last_escape = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_mode_and_thinking_colours_follow_pi() {
        assert!(is_bash_mode("  !ls"));
        assert!(!is_bash_mode("ls !"));
        assert_eq!(thinking_color(ThinkingLevel::Off), "thinkingOff");
        assert_eq!(thinking_color(ThinkingLevel::Xhigh), "thinkingXhigh");
    }
}
