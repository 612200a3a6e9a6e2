//! The UI requests of extensions and spawned calls on the UI task (`UiRequest` from the
//! interactive `UiHost`): dialogs, notifications, statuses, widgets, titles and the rest of
//! `ctx.ui`, dispatched to the components that draw them.

use pi_tui::{CrosstermTerminal, Spacer, Text, Tui, shared};

use super::app::App;
use super::commands::done_cell;
use super::dialogs::InputDialog;
use super::host::UiRequest;
use super::program_status::Blocked;
use crate::ui::{NotifyKind, WidgetContent, WidgetPlacement};
use pi_tui::program_status::BlockedKind;

impl App {
    /// A UI request from an extension or a spawned call.
    pub(crate) fn on_ui_request(&mut self, tui: &mut Tui<CrosstermTerminal>, req: UiRequest) {
        self.dirty = true;
        match req {
            UiRequest::Select { title, options, reply } => {
                self.opening_extension_dialog = true;
                self.opening_blocked = Some(Blocked::new(BlockedKind::Question, title.clone()));
                let opts = options.iter().map(|o| (o.clone(), o.clone())).collect();
                self.open_selector(
                    tui,
                    &title,
                    opts,
                    false,
                    None,
                    Box::new(move |_, v| {
                        let _ = reply.send(v);
                    }),
                );
            }
            UiRequest::Confirm { title, message, reply } => {
                self.opening_extension_dialog = true;
                self.opening_blocked = Some(Blocked::new(BlockedKind::Permission, title.clone()));
                let opts = vec![("Yes".to_owned(), "yes".to_owned()), ("No".to_owned(), "no".to_owned())];
                let title = if message.is_empty() { title } else { format!("{title}\n{message}") };
                self.open_selector(
                    tui,
                    &title,
                    opts,
                    false,
                    None,
                    Box::new(move |_, v| {
                        let _ = reply.send(v.as_deref() == Some("yes"));
                    }),
                );
            }
            UiRequest::Input { title, placeholder, prefill, reply } => {
                self.opening_extension_dialog = true;
                self.opening_blocked = Some(Blocked::new(BlockedKind::Question, title.clone()));
                let done = done_cell();
                let dialog =
                    InputDialog::new(self.theme.clone(), &title, placeholder.as_deref(), &prefill, done.clone());
                self.open_dialog(
                    tui,
                    shared(dialog),
                    done,
                    Box::new(move |_, v| {
                        let _ = reply.send(v);
                    }),
                );
            }
            UiRequest::CloseDialog => {
                if let Some(d) = &self.dialog {
                    *d.done.borrow_mut() = Some(None);
                }
                self.finish_dialog(tui);
            }
            UiRequest::Notify { message, kind } => match kind {
                // pi's `showStatus`: replaces the previous status while it is still the last line.
                NotifyKind::Info => self.show_status(&message),
                NotifyKind::Warning => self.show_warning(&message),
                NotifyKind::Error => self.show_error(&message),
            },
            UiRequest::Status { key, text } => {
                match text {
                    Some(t) => self.statuses.insert(key, t),
                    None => self.statuses.remove(&key),
                };
            }
            UiRequest::Widget { key, content, placement } => self.set_widget(key, content, placement),
            UiRequest::Footer(factory) => {
                let mut slot = self.footer_slot.borrow_mut();
                slot.clear();
                match factory {
                    Some(f) => slot.add_child(shared(crate::render::ExtensionComponent(f(&self.theme)))),
                    None => slot.add_child(self.footer.clone()),
                }
            }
            UiRequest::Header(factory) => self.set_extension_header(factory),
            UiRequest::Title(title) => {
                use pi_tui::Terminal;
                tui.terminal_mut().set_title(&title);
            }
            UiRequest::SetEditorText(text) => self.editor.borrow_mut().set_text(&text),
            UiRequest::Paste(text) => {
                pi_tui::Component::handle_input(&mut *self.editor.borrow_mut(), &format!("\x1b[200~{text}\x1b[201~"));
            }
            UiRequest::Custom { factory, opts, reply } => self.open_custom(tui, factory, opts, reply),
            UiRequest::CloseCustom(token) => self.close_custom(tui, token),
            UiRequest::Redraw => {}
            UiRequest::ExtensionError(error) => self.show_extension_error(&error),
            UiRequest::ToolsExpanded(expanded) => self.set_expanded(expanded),
            UiRequest::SetTheme(name) => {
                // pi saves the theme of a successful `setTheme`.
                if self.session.settings_manager().settings().theme() != Some(name.as_str())
                    && let Err(e) = self.session.settings_manager().set_theme(&name)
                {
                    self.show_warning(&e.to_string());
                }
                self.apply_theme(&name);
            }
            req @ (UiRequest::ShowOverlay { .. }
            | UiRequest::Overlay { .. }
            | UiRequest::OverlayVisible { .. }
            | UiRequest::EditorComponent(_)
            | UiRequest::TerminalInput { .. }
            | UiRequest::Autocomplete(_)) => self.on_extension_ui(tui, req),
            UiRequest::WorkingMessage(message) => {
                if let Some(w) = self.live.working.as_mut() {
                    w.message = message.unwrap_or_else(|| "Working".to_owned());
                }
            }
        }
    }

    fn set_widget(&mut self, key: String, content: Option<WidgetContent>, placement: WidgetPlacement) {
        match content {
            None => {
                self.widgets.remove(&key);
            }
            Some(WidgetContent::Lines(lines)) => {
                let text = shared(Text::new(lines.join("\n"), 1, 0));
                self.widgets.insert(key, (placement == WidgetPlacement::AboveEditor, text));
            }
            Some(WidgetContent::Component(f)) => {
                let c = shared(crate::render::ExtensionComponent(f(&self.theme)));
                self.widgets.insert(key, (placement == WidgetPlacement::AboveEditor, c));
            }
        }
        let (mut above, mut below) = (self.widgets_above.borrow_mut(), self.widgets_below.borrow_mut());
        above.clear();
        below.clear();
        for (is_above, c) in self.widgets.values() {
            if *is_above { above.add_child(c.clone()) } else { below.add_child(c.clone()) }
        }
        if above.children().is_empty() {
            above.add_child(shared(Spacer::new(1)));
        }
    }
}
