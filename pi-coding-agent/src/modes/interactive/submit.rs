//! What the editor submits: a slash command, a user `!command`, or a prompt (steering while
//! the agent runs, a follow-up with Alt+Enter), and the queued messages shown above the editor.

use pi_tui::{Container, CrosstermTerminal, Spacer, Text, Tui, shared};

use super::app::{App, UiEvent};
use crate::sdk::PromptOptions;

impl App {
    /// A submitted editor text: a command, `!cmd`, or a prompt (steered while streaming).
    pub(crate) fn on_submit(&mut self, tui: &mut Tui<CrosstermTerminal>, text: String, follow_up: bool) {
        let text = text.trim().to_owned();
        if text.is_empty() {
            return;
        }
        self.editor.borrow_mut().add_to_history(&text);
        if text.starts_with('/') && self.handle_command(tui, &text) {
            return;
        }
        if let Some(rest) = text.strip_prefix('!') {
            let (exclude, command) = match rest.strip_prefix('!') {
                Some(c) => (true, c.trim()),
                None => (false, rest.trim()),
            };
            if !command.is_empty() {
                self.run_user_bash(command.to_owned(), exclude);
                return;
            }
        }
        if crate::sdk::default_models::is_unknown_model(&self.session.model()) {
            // pi fails the prompt before it is sent or drawn: there is no model to answer it.
            self.show_error(&crate::auth::guidance::no_api_key_message(None));
            return;
        }
        let streaming = self.session.is_streaming();
        let behavior = if follow_up {
            Some(crate::extensions::StreamingBehavior::FollowUp)
        } else {
            Some(crate::extensions::StreamingBehavior::Steer)
        };
        let opts = PromptOptions { streaming_behavior: behavior, ..Default::default() };
        let session = self.session.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            if let Err(e) = session.prompt_with(&text, opts).await {
                let _ = tx.send(UiEvent::Error(e.to_string()));
            }
        });
        if streaming {
            self.update_pending_later();
        }
    }

    pub(crate) fn update_pending_later(&mut self) {
        self.dirty = true;
    }

    /// The queued steering / follow-up messages above the editor.
    pub(crate) fn update_pending(&mut self) {
        let (steer, follow) = {
            let st = self.session.shared.run_state();
            (st.steering_texts.clone(), st.follow_up_texts.clone())
        };
        let mut p = self.pending.borrow_mut();
        p.clear();
        if steer.is_empty() && follow.is_empty() {
            self.dirty = true;
            return;
        }
        p.add_child(shared(Spacer::new(1)));
        for t in steer {
            p.add_child(shared(Text::new(self.theme.fg("dim", &format!("Steering: {t}")), 1, 0)));
        }
        for t in follow {
            p.add_child(shared(Text::new(self.theme.fg("dim", &format!("Follow-up: {t}")), 1, 0)));
        }
        let hint =
            format!("↳ {} to edit all queued messages", super::keys::key_text(&self.keys, "app.message.dequeue"));
        p.add_child(shared(Text::new(self.theme.fg("dim", &hint), 1, 0)));
        self.dirty = true;
    }

    pub(crate) fn run_user_bash(&mut self, command: String, exclude: bool) {
        self.next_bash += 1;
        let id = self.next_bash;
        let row = self.live.bash_row(&command, exclude, None, "");
        let slot = shared(Container::new());
        slot.borrow_mut().add_child(row);
        self.add_chat(slot.clone());
        self.bash_rows.insert(id, (command.clone(), exclude, slot, String::new()));
        let session = self.session.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let tag = format!("ui-{id}");
            let result = session.execute_bash_with_id(&command, exclude, Some(&tag)).await.map_err(|e| e.to_string());
            let _ = tx.send(UiEvent::BashDone { id, result });
        });
    }
}
