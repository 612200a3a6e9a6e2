//! The application's own keys (pi's app keybindings: abort, quit, thinking and model cycling,
//! tool-output and thinking toggles, …), handled before the editor sees a key.

use std::time::Instant;

use pi_tui::CrosstermTerminal;
use pi_tui::Tui;

use super::app::App;

impl App {
    pub(crate) fn handle_app_key(&mut self, tui: &mut Tui<CrosstermTerminal>, data: &str) -> bool {
        if self.run_extension_shortcut(data) {
            return true;
        }
        let keys = self.keys.clone();
        let is = |action: &str| keys.matches(data, action);
        if is("app.interrupt") {
            if self.editor.borrow().is_autocomplete_open() {
                return false;
            }
            if self.session.is_streaming() {
                // pi's `restoreQueuedMessagesToEditor({ abort: true })`: nothing queued is lost.
                self.restore_queued_to_editor();
                let session = self.session.clone();
                tokio::spawn(async move { session.abort().await });
            } else if self.session.is_bash_running() {
                self.session.abort_bash();
            } else {
                self.escape_at_editor(tui);
            }
            return true;
        }
        if is("app.clear") {
            let now = Instant::now();
            if self.last_ctrl_c.is_some_and(|t| now.duration_since(t).as_millis() < 500) {
                self.quit = Some(0);
            } else {
                self.editor.borrow_mut().set_text("");
                self.last_ctrl_c = Some(now);
            }
            return true;
        }
        if is("app.suspend") {
            self.suspend(tui);
            return true;
        }
        if is("app.editor.external") {
            self.open_external_editor(tui);
            return true;
        }
        if is("app.exit") && self.editor.borrow().text().is_empty() {
            self.quit = Some(0);
            return true;
        }
        // pi's session actions, unbound unless keybindings.json binds them.
        if is("app.session.new") {
            self.command_new();
            return true;
        }
        if is("app.session.tree") {
            self.command_tree(tui, None);
            return true;
        }
        if is("app.session.fork") {
            self.command_fork(tui, false);
            return true;
        }
        if is("app.session.resume") {
            self.command_resume(tui);
            return true;
        }
        if is("app.message.copy") {
            self.copy_last_message(tui, true, true);
            return true;
        }
        if is("app.thinking.cycle") {
            self.cycle_thinking();
            return true;
        }
        if is("app.model.cycleForward") || is("app.model.cycleBackward") {
            self.cycle_model(is("app.model.cycleForward"));
            return true;
        }
        if is("app.model.select") {
            self.command_model(tui, "");
            return true;
        }
        if is("app.tools.expand") {
            self.set_expanded(!self.expanded);
            return true;
        }
        if is("app.thinking.toggle") {
            self.hide_thinking = !self.hide_thinking;
            self.rebuild_transcript();
            let state = if self.hide_thinking { "hidden" } else { "visible" };
            self.show_status(&format!("Thinking blocks: {state}"));
            return true;
        }
        if is("app.message.followUp") {
            let text = self.editor.borrow().expanded_text().trim().to_owned();
            if !text.is_empty() {
                self.editor.borrow_mut().set_text("");
                self.on_submit(tui, text, true);
            }
            return true;
        }
        if is("app.message.dequeue") {
            match self.restore_queued_to_editor() {
                0 => self.show_status("No queued messages to restore"),
                1 => self.show_status("Restored 1 queued message to editor"),
                n => self.show_status(&format!("Restored {n} queued messages to editor")),
            }
            return true;
        }
        if is("app.clipboard.pasteImage") {
            self.paste_from_clipboard();
            return true;
        }
        if is("app.context.show") {
            self.command_context();
            return true;
        }
        self.on_viewport_scroll_key(data)
    }

    /// The fullscreen transcript's scrolling keys (also while the search box has the focus).
    pub(crate) fn on_viewport_scroll_key(&mut self, data: &str) -> bool {
        if self.regular {
            return false;
        }
        let is = |action: &str| self.keys.matches(data, action);
        let page = self.layout.borrow().page();
        if is("tui.altScreen.pageUp") {
            self.layout.borrow_mut().scroll_by(Some(page));
            return true;
        }
        if is("tui.altScreen.pageDown") {
            self.layout.borrow_mut().scroll_by(Some(-page));
            return true;
        }
        if is("tui.altScreen.bottom") {
            self.layout.borrow_mut().scroll_by(None);
            return true;
        }
        false
    }

    fn cycle_thinking(&mut self) {
        let model = self.session.model();
        if !model.reasoning {
            self.show_line("dim", "Current model does not support thinking");
            return;
        }
        let levels = pi_ai::models::supported_thinking_levels(&model);
        let current = self.session.thinking_level();
        let i = levels.iter().position(|l| *l == current).map_or(0, |i| (i + 1) % levels.len().max(1));
        if let Some(level) = levels.get(i).copied() {
            match self.session.set_thinking_level(level) {
                Ok(()) => self.show_line("dim", &format!("Thinking level: {}", level.as_str())),
                Err(e) => self.show_error(&e.to_string()),
            }
        }
    }

    fn cycle_model(&mut self, forward: bool) {
        let list = if self.scoped_models.is_empty() { self.models.clone() } else { self.scoped_models.clone() };
        if list.len() < 2 {
            self.show_line("dim", "Only one model available");
            return;
        }
        let current = self.session.model();
        let i = list.iter().position(|m| m.provider == current.provider && m.id == current.id).unwrap_or(0);
        let next = if forward { (i + 1) % list.len() } else { (i + list.len() - 1) % list.len() };
        let model = list[next].clone();
        let label = format!("Switched to {}", model.id);
        match self.session.set_model(model) {
            Ok(()) => self.show_line("dim", &label),
            Err(e) => self.show_error(&e.to_string()),
        }
    }
}

impl App {
    /// pi's `restoreQueuedMessagesToEditor`: the queued steering and follow-up messages, then the
    /// editor's own text, joined by blank lines into the editor; how many were queued.
    pub(crate) fn restore_queued_to_editor(&mut self) -> usize {
        let (steer, follow) = self.session.clear_queue();
        let queued: Vec<String> = steer.into_iter().chain(follow).collect();
        if !queued.is_empty() {
            let current = self.editor.borrow().expanded_text();
            let parts = [queued.join("\n\n"), current];
            let text = parts.iter().filter(|t| !t.trim().is_empty()).cloned().collect::<Vec<_>>().join("\n\n");
            self.editor.borrow_mut().set_text(&text);
        }
        self.update_pending();
        queued.len()
    }
}
