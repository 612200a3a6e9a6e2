//! `/reload` and live theme changes: the theme file is read again and every themed part of the
//! screen (transcript, header, editor border, footer) is drawn with it.

use std::rc::Rc;

use pi_tui::Component;

use super::app::App;

impl App {
    /// Switches to the theme `name` (built-in or a file of the agent's or project's `themes/`),
    /// reading its file again; a theme that does not load keeps the current one and says why.
    pub(crate) fn apply_theme(&mut self, name: &str) {
        let themes = self.session.extension_themes();
        let (theme, warning) =
            super::app::load_theme_with(Some(name), &self.agent_dir, self.session.cwd(), self.color_mode, &themes);
        if let Some(w) = warning {
            self.show_warning(&w);
            return;
        }
        self.theme_name = Some(name.to_owned());
        self.set_theme(Rc::new(theme));
    }

    /// Updates the theme names `ctx.ui.setTheme` accepts and the files of the themes extensions
    /// provided (`ctx.ui.getTheme` / `getAllThemes`), after extensions provided themes.
    pub(crate) fn refresh_theme_names(&self) {
        let names = super::settings_menu::available_themes(&self.agent_dir, self.session.cwd(), &self.session);
        *self.theme_names.lock().unwrap_or_else(|e| e.into_inner()) = names;
        *self.extension_theme_files.lock().unwrap_or_else(|e| e.into_inner()) = self.session.extension_themes();
    }

    pub(crate) fn set_theme(&mut self, theme: Rc<pi_tui::Theme>) {
        self.theme = theme.clone();
        {
            let mut f = self.footer.borrow_mut();
            f.theme = theme.clone();
            f.invalidate();
        }
        self.forget_editor_border();
        self.sync_editor_border();
        if let Some(h) = &self.header_text {
            let text = if self.expanded {
                super::header::header_text_expanded(&theme, &self.keys, &self.version)
            } else {
                super::header::header_text(&theme, &self.keys, &self.version)
            };
            h.borrow_mut().set_text(text);
        }
        self.rebuild_transcript();
    }

    /// pi's `/reload` of what the interactive mode owns: keybindings, the theme file (live),
    /// the settings the screen reads (hidden thinking), then the transcript drawn again.
    pub(crate) fn command_reload(&mut self) {
        if self.session.is_streaming() {
            self.show_warning("Wait for the current response to finish before reloading.");
            return;
        }
        let (keys, warnings) = super::keys::load_keybindings(&self.agent_dir);
        self.keys = Rc::new(keys);
        self.editor.borrow_mut().set_keybindings(self.keys.clone());
        let sm = self.session.settings_manager().clone();
        sm.reload();
        let settings = sm.settings();
        self.hide_thinking = settings.hide_thinking_block();
        let name = settings.theme().map(str::to_owned).or_else(|| self.theme_name.clone());
        self.refresh_theme_names();
        let themes = self.session.extension_themes();
        let (theme, warning) =
            super::app::load_theme_with(name.as_deref(), &self.agent_dir, self.session.cwd(), self.color_mode, &themes);
        self.set_theme(Rc::new(theme));
        for w in warnings.into_iter().chain(warning) {
            self.show_warning(&w);
        }
        self.show_status("Reloaded keybindings, extensions, skills, prompts, themes, and context files");
    }
}
