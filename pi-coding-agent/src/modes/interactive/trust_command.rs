//! `/trust` in the interactive mode (pi's `showTrustSelector`): the trust selector in place of
//! the editor; a choice is saved to the trust store and reported as pi reports it.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use pi_tui::{CrosstermTerminal, Tui, shared};

use super::app::App;
use crate::trust::{TrustChoice, TrustSelectorComponent, save_trust_selection, trust_selector};

impl App {
    /// Opens the `/trust` selector for the session's folder.
    pub(crate) fn command_trust(&mut self, tui: &mut Tui<CrosstermTerminal>) {
        let agent_dir = crate::session::get_agent_dir();
        let cwd = PathBuf::from(self.session.cwd());
        let trusted = self.session.settings_manager().is_project_trusted();
        let selector = match trust_selector(&agent_dir, &cwd, trusted) {
            Ok(s) => s,
            Err(e) => {
                self.show_error(&e.to_string());
                return;
            }
        };
        let options = selector.options.clone();
        let done: TrustChoice = Rc::new(RefCell::new(None));
        let component = TrustSelectorComponent::new(self.theme.clone(), self.keys.clone(), selector, done.clone());
        self.open_dialog(
            tui,
            shared(component),
            done,
            Box::new(move |app, choice| {
                let Some(option) = choice.and_then(|c| c.parse::<usize>().ok()).and_then(|i| options.get(i)) else {
                    return;
                };
                match save_trust_selection(&agent_dir, option) {
                    Ok(line) => app.show_status(&line),
                    Err(e) => app.show_error(&format!("Could not save trust decision: {e}")),
                }
            }),
        );
    }
}
