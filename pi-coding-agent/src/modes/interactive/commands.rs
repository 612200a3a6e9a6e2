//! Built-in slash commands and the UI requests of extensions, on the UI task.

use std::cell::RefCell;
use std::rc::Rc;

use pi_tui::{ComponentRef, CrosstermTerminal, Markdown, Spacer, Text, Tui, shared};

use super::app::{App, DialogDone, UiEvent};
use super::dialogs::{DoneCell, InputDialog, Selector};
use super::host::UiRequest;
use crate::ui::{NotifyKind, WidgetContent, WidgetPlacement};

/// pi 1.6.0's built-in commands (`BUILTIN_SLASH_COMMANDS`): name, argument hint, description;
/// then this port's `/context`.
pub(crate) const BUILTIN_COMMANDS: &[(&str, &str, &str)] = &[
    ("settings", "", "Open settings menu"),
    ("model", "<provider/model>", "Select model (opens selector UI)"),
    ("tree", "", "Navigate session tree (switch branches)"),
    ("thinking", "<level>", "Set thinking level"),
    ("scoped-models", "", "Enable/disable models for Ctrl+P cycling"),
    ("export", "", "Export session (HTML default, or specify path: .html/.jsonl)"),
    ("import", "", "Import a JSONL session, preserving its ID and working directory"),
    ("share", "", "Share session via a Radius artifact or a GitHub gist"),
    ("bug", "<description>", "Report a bug to the Pi developers"),
    ("copy", "", "Copy last agent message to clipboard"),
    ("name", "", "Set session display name"),
    ("session", "", "Show session info and stats"),
    ("changelog", "", "Show changelog entries"),
    ("hotkeys", "", "Show all keyboard shortcuts"),
    ("fork", "", "Create a new fork from a previous user message"),
    ("clone", "", "Duplicate the current session at the current position"),
    ("trust", "", "Save project trust decision for future sessions"),
    ("login", "<provider>", "Configure provider authentication"),
    ("logout", "", "Remove provider authentication"),
    ("new", "", "Start a new session"),
    ("compact", "", "Manually compact the session context"),
    ("resume", "", "Resume another session"),
    ("reload", "", "Reload keybindings, extensions, skills, prompts, themes, and context files"),
    ("quit", "", "Quit pi"),
    ("context", "", "Show what the model saw in the last request"),
    ("mcp", "", "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure"),
];

fn done_cell() -> DoneCell {
    Rc::new(RefCell::new(None))
}

impl App {
    /// Opens a selector in place of the editor, `preselect` highlighted; `on_done` gets the chosen
    /// value, or `None` when the selector is dismissed.
    fn open_selector(
        &mut self,
        tui: &mut Tui<CrosstermTerminal>,
        title: &str,
        options: Vec<(String, String)>,
        searchable: bool,
        preselect: Option<&str>,
        on_done: DialogDone,
    ) {
        let done = done_cell();
        let mut selector =
            Selector::new(self.theme.clone(), self.keys.clone(), title, options, searchable, done.clone());
        if let Some(value) = preselect {
            selector.select_value(value);
        }
        self.open_dialog(tui, shared(selector), done, on_done);
    }

    /// Runs a built-in command; `false` lets the text go on as a prompt (extension commands,
    /// skills and templates are handled by the session's prompt).
    pub(crate) fn handle_command(&mut self, tui: &mut Tui<CrosstermTerminal>, text: &str) -> bool {
        let body = &text[1..];
        let (name, args) = body.split_once(' ').map_or((body, ""), |(n, a)| (n, a.trim()));
        match name {
            "quit" => self.quit = Some(0),
            "model" => self.command_model(tui, args),
            "thinking" => self.command_thinking(tui, args),
            "new" => self.spawn_switch(SwitchKind::New),
            "resume" => self.command_resume(tui),
            "name" => self.command_name(args),
            "session" => self.command_session(),
            "compact" => {
                let session = self.session.clone();
                let tx = self.tx.clone();
                let instructions = (!args.is_empty()).then(|| args.to_owned());
                tokio::spawn(async move {
                    if let Err(e) = session.compact(instructions.as_deref()).await {
                        let _ = tx.send(UiEvent::Error(e.to_string()));
                    }
                });
            }
            "copy" => self.command_copy(),
            "hotkeys" => self.command_hotkeys(),
            "reload" => {
                self.rebuild_transcript();
                self.show_line("dim", "Reloaded keybindings and themes");
            }
            "fork" => self.command_fork(tui, false),
            "clone" => self.command_fork(tui, true),
            "tree" => self.command_tree(tui),
            "context" => self.command_context(),
            "export" => self.command_export(args),
            "settings" | "scoped-models" | "import" | "changelog" => {
                self.show_line("warning", &format!("/{name} is not available in this port yet"))
            }
            "login" | "logout" | "mcp" | "trust" | "share" | "bug" => {
                self.show_line("warning", &format!("/{name} arrives with its feature; it is not available yet"))
            }
            _ => return false,
        }
        true
    }

    pub(crate) fn command_model(&mut self, tui: &mut Tui<CrosstermTerminal>, search: &str) {
        let models = if self.scoped_models.is_empty() { self.models.clone() } else { self.scoped_models.clone() };
        if let Some(m) = (!search.is_empty())
            .then(|| models.iter().find(|m| m.id == search || format!("{}/{}", m.provider, m.id) == search))
            .flatten()
        {
            self.apply_model(&format!("{}/{}", m.provider, m.id));
            return;
        }
        let current = self.session.model();
        let options: Vec<(String, String)> = models
            .iter()
            .map(|m| {
                let mark = if m.provider == current.provider && m.id == current.id { " ✓" } else { "" };
                (format!("{} [{}]{mark}", m.id, m.provider), format!("{}/{}", m.provider, m.id))
            })
            .collect();
        self.open_selector(
            tui,
            "Select model",
            options,
            true,
            Some(&format!("{}/{}", current.provider, current.id)),
            Box::new(|app, v| {
                if let Some(v) = v {
                    app.apply_model(&v);
                }
            }),
        );
    }

    fn apply_model(&mut self, key: &str) {
        let Some(model) = self.models.iter().find(|m| format!("{}/{}", m.provider, m.id) == key).cloned() else {
            self.show_error(&format!("Model not found: {key}"));
            return;
        };
        let id = model.id.clone();
        match self.session.set_model(model) {
            Ok(()) => self.show_line("dim", &format!("Model: {id}")),
            Err(e) => self.show_error(&e.to_string()),
        }
    }

    fn command_thinking(&mut self, tui: &mut Tui<CrosstermTerminal>, arg: &str) {
        let model = self.session.model();
        let levels = pi_ai::models::supported_thinking_levels(&model);
        if let Some(level) = pi_ai::ThinkingLevel::parse(arg) {
            self.set_thinking(level);
            return;
        }
        let options = levels.iter().map(|l| (l.as_str().to_owned(), l.as_str().to_owned())).collect();
        self.open_selector(
            tui,
            "Select thinking level",
            options,
            false,
            Some(self.session.thinking_level().as_str()),
            Box::new(|app, v| {
                if let Some(level) = v.as_deref().and_then(pi_ai::ThinkingLevel::parse) {
                    app.set_thinking(level);
                }
            }),
        );
    }

    fn set_thinking(&mut self, level: pi_ai::ThinkingLevel) {
        match self.session.set_thinking_level(level) {
            Ok(()) => self.show_line("dim", &format!("Thinking level: {}", level.as_str())),
            Err(e) => self.show_error(&e.to_string()),
        }
    }

    fn command_resume(&mut self, tui: &mut Tui<CrosstermTerminal>) {
        let (cwd, dir) = self.session.with_session_manager(|sm| {
            (sm.cwd().to_owned(), sm.session_file().and_then(|f| f.parent().map(|p| p.to_path_buf())))
        });
        let sessions = crate::session::SessionManager::list(&cwd, dir.as_deref());
        if sessions.is_empty() {
            self.show_line("dim", "No sessions found");
            return;
        }
        let options = sessions
            .iter()
            .map(|s| {
                let label = s.name.clone().unwrap_or_else(|| s.first_message.lines().next().unwrap_or("").to_owned());
                (format!("{label} ({} messages)", s.message_count), s.path.display().to_string())
            })
            .collect();
        self.open_selector(
            tui,
            "Resume session",
            options,
            true,
            None,
            Box::new(|app, v| {
                if let Some(path) = v {
                    app.spawn_switch(SwitchKind::Resume(path.into()));
                }
            }),
        );
    }

    fn spawn_switch(&mut self, kind: SwitchKind) {
        let session = self.session.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let (result, done) = match kind {
                SwitchKind::New => (session.new_session(None).await.map(|o| o.cancelled), "✓ New session started"),
                SwitchKind::Resume(path) => {
                    (session.switch_session(&path).await.map(|o| o.cancelled), "Resumed session")
                }
            };
            match result {
                Ok(false) => {
                    let _ = tx.send(UiEvent::Info(format!("\u{1}{done}")));
                }
                Ok(true) => {}
                Err(e) => {
                    let _ = tx.send(UiEvent::Error(e.to_string()));
                }
            }
        });
    }

    fn command_name(&mut self, name: &str) {
        if name.is_empty() {
            let current = self.session.session_name();
            match current {
                Some(n) => self.show_line("dim", &format!("Session name: {n}")),
                None => self.show_line("warning", "Usage: /name <name>"),
            }
            return;
        }
        match self.session.set_session_name(name) {
            Ok(()) => self.show_line("dim", &format!("Session name set: {name}")),
            Err(e) => self.show_error(&e.to_string()),
        }
    }

    fn command_session(&mut self) {
        let s = self.session.get_session_stats();
        let name = self.session.session_name();
        let mut text = String::from("**Session Info**\n\n");
        if let Some(n) = name {
            text.push_str(&format!("Name: {n}\n"));
        }
        text.push_str(&format!("File: {}\n", s.session_file.as_deref().unwrap_or("In-memory")));
        text.push_str(&format!("ID: {}\n\n", s.session_id));
        text.push_str("**Messages**\n\n");
        text.push_str(&format!(
            "User: {}\nAssistant: {}\nTool Calls: {}\nTool Results: {}\nTotal: {}\n\n",
            s.user_messages, s.assistant_messages, s.tool_calls, s.tool_results, s.total_messages
        ));
        text.push_str("**Tokens**\n\n");
        text.push_str(&format!("Input: {}\nOutput: {}\n", s.tokens.input, s.tokens.output));
        if s.tokens.cache_read > 0 {
            text.push_str(&format!("Cache Read: {}\n", s.tokens.cache_read));
        }
        if s.tokens.cache_write > 0 {
            text.push_str(&format!("Cache Write: {}\n", s.tokens.cache_write));
        }
        text.push_str(&format!("Total: {}\n", s.tokens.total()));
        if s.cost > 0.0 {
            text.push_str(&format!("\n**Cost**\n\nTotal: {:.4}\n", s.cost));
        }
        let md = self.live.renderer.markdown_theme();
        self.add_chat(shared(Spacer::new(1)));
        self.add_chat(shared(Markdown::new(text.replace('\n', "  \n"), 1, 0, md)));
    }

    fn command_copy(&mut self) {
        match self.session.get_last_assistant_text() {
            Some(text) => {
                // OSC 52: the terminal puts the text on the clipboard.
                use base64::Engine;
                let b64 = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
                let mut out = std::io::stdout();
                let _ = std::io::Write::write_all(&mut out, format!("\x1b]52;c;{b64}\x07").as_bytes());
                self.show_line("dim", "Copied last agent message to clipboard");
            }
            None => self.show_error("No agent messages to copy yet."),
        }
    }

    fn command_hotkeys(&mut self) {
        let k = |a: &str| super::keys::key_text(&self.keys, a);
        let rows = [
            (k("tui.input.submit"), "Send message"),
            (k("tui.input.newLine"), "New line"),
            (k("app.interrupt"), "Cancel autocomplete / abort streaming"),
            (k("app.clear"), "Clear editor (first) / exit (second)"),
            (k("app.exit"), "Exit (when editor is empty)"),
            (k("app.thinking.cycle"), "Cycle thinking level"),
            (format!("{}/{}", k("app.model.cycleForward"), k("app.model.cycleBackward")), "Cycle models"),
            (k("app.model.select"), "Open model selector"),
            (k("app.tools.expand"), "Toggle tool output expansion"),
            (k("app.thinking.toggle"), "Toggle thinking block visibility"),
            (k("app.message.followUp"), "Queue follow-up message"),
            (k("app.message.dequeue"), "Restore queued messages"),
            (k("app.context.show"), "Show what the model saw (/context)"),
            ("/".to_owned(), "Slash commands"),
            ("!".to_owned(), "Run bash command"),
            ("!!".to_owned(), "Run bash command (excluded from context)"),
        ];
        let mut md = String::from("| Key | Action |\n|-----|--------|\n");
        for (key, action) in rows {
            md.push_str(&format!("| `{key}` | {action} |\n"));
        }
        let theme = self.theme.clone();
        self.add_chat(shared(Spacer::new(1)));
        self.add_chat(shared(Text::new(theme.fg("accent", &pi_tui::theme::bold("Keyboard Shortcuts")), 1, 0)));
        self.add_chat(shared(Spacer::new(1)));
        let mdt = self.live.renderer.markdown_theme();
        self.add_chat(shared(Markdown::new(md.trim(), 1, 1, mdt)));
    }

    fn command_fork(&mut self, tui: &mut Tui<CrosstermTerminal>, clone: bool) {
        if clone {
            let leaf = self.session.leaf_id();
            let Some(leaf) = leaf else {
                self.show_error("Nothing to clone yet.");
                return;
            };
            self.spawn_fork(leaf, true);
            return;
        }
        let messages = self.session.get_fork_messages();
        if messages.is_empty() {
            self.show_line("dim", "No messages to fork from");
            return;
        }
        let options = messages
            .iter()
            .rev()
            .map(|m| (m.text.lines().next().unwrap_or("").to_owned(), m.entry_id.clone()))
            .collect();
        self.open_selector(
            tui,
            "Fork from message",
            options,
            true,
            None,
            Box::new(|app, v| {
                if let Some(id) = v {
                    app.spawn_fork(id, false);
                }
            }),
        );
    }

    fn spawn_fork(&mut self, entry: String, clone: bool) {
        let session = self.session.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let r = if clone { session.clone_at(&entry).await } else { session.fork(&entry).await };
            match r {
                Ok(o) if !o.cancelled => {
                    let label = if clone { "Cloned session" } else { "Forked session" };
                    let _ = tx.send(UiEvent::Info(format!("\u{1}{label}")));
                    if let Some(text) = o.selected_text {
                        let _ = tx.send(UiEvent::Ui(UiRequest::SetEditorText(text)));
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    let _ = tx.send(UiEvent::Error(e.to_string()));
                }
            }
        });
    }

    fn command_tree(&mut self, tui: &mut Tui<CrosstermTerminal>) {
        let options: Vec<(String, String)> = self.session.with_session_manager(|sm| {
            sm.entries()
                .iter()
                .filter_map(|e| match e {
                    crate::session::SessionEntry::Message(m) => {
                        let text = match &m.message {
                            pi_agent_core::AgentMessage::User(u) => {
                                format!("user: {}", crate::render::content_text_of(&u.content))
                            }
                            pi_agent_core::AgentMessage::Assistant(a) => format!(
                                "assistant: {}",
                                a.content
                                    .iter()
                                    .filter_map(|b| match b {
                                        pi_ai::AssistantBlock::Text(t) => Some(t.text.as_str()),
                                        _ => None,
                                    })
                                    .collect::<Vec<_>>()
                                    .join(" ")
                            ),
                            _ => return None,
                        };
                        Some((text.lines().next().unwrap_or("").to_owned(), m.id.clone()))
                    }
                    _ => None,
                })
                .collect()
        });
        if options.is_empty() {
            self.show_line("dim", "No entries in session");
            return;
        }
        self.open_selector(
            tui,
            "Session tree",
            options,
            true,
            None,
            Box::new(|app, v| {
                if let Some(id) = v {
                    let session = app.session.clone();
                    let tx = app.tx.clone();
                    tokio::spawn(async move {
                        match session.navigate_tree(&id, Default::default()).await {
                            Ok(_) => {
                                let _ = tx.send(UiEvent::Info("\u{1}Navigated to selected point".into()));
                            }
                            Err(e) => {
                                let _ = tx.send(UiEvent::Error(e.to_string()));
                            }
                        }
                    });
                }
            }),
        );
    }

    fn command_export(&mut self, path: &str) {
        let Some(file) = self.session.session_file() else {
            self.show_error("Cannot export an in-memory session");
            return;
        };
        let target = if path.is_empty() {
            let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "session".into());
            format!("pi-session-{stem}.jsonl")
        } else {
            path.to_owned()
        };
        if !target.ends_with(".jsonl") {
            self.show_error("This port exports .jsonl from the interactive mode; use `pi --export` for HTML");
            return;
        }
        let dest = std::path::Path::new(self.session.cwd()).join(&target);
        match std::fs::copy(&file, &dest) {
            Ok(_) => self.show_line("dim", &format!("Session exported to: {}", dest.display())),
            Err(e) => self.show_error(&format!("Failed to export session: {e}")),
        }
    }

    /// A UI request from an extension or a spawned call.
    pub(crate) fn on_ui_request(&mut self, tui: &mut Tui<CrosstermTerminal>, req: UiRequest) {
        self.dirty = true;
        match req {
            UiRequest::Select { title, options, reply } => {
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
                NotifyKind::Info => self.show_line("dim", &message),
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
            UiRequest::Header(factory) => {
                let mut h = self.header.borrow_mut();
                h.clear();
                if let Some(f) = factory {
                    h.add_child(shared(crate::render::ExtensionComponent(f(&self.theme))));
                }
            }
            UiRequest::Title(title) => {
                use pi_tui::Terminal;
                tui.terminal_mut().set_title(&title);
            }
            UiRequest::SetEditorText(text) => self.editor.borrow_mut().set_text(&text),
            UiRequest::Paste(text) => {
                pi_tui::Component::handle_input(&mut *self.editor.borrow_mut(), &format!("\x1b[200~{text}\x1b[201~"));
            }
            UiRequest::Custom { factory, reply } => {
                let (done_handle, rx) = crate::ui::CustomDone::new();
                let component = factory(&self.theme, done_handle);
                let cell = done_cell();
                let watcher = cell.clone();
                let component: ComponentRef = shared(crate::render::ExtensionComponent(component));
                self.open_dialog(tui, component, cell, Box::new(|_, _| {}));
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    let result = rx.await.ok().flatten();
                    let _ = reply.send(result);
                    let _ = tx.send(UiEvent::Ui(UiRequest::CloseDialog));
                });
                drop(watcher);
            }
            UiRequest::ToolsExpanded(expanded) => self.set_expanded(expanded),
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

/// Which session switch to run.
enum SwitchKind {
    New,
    Resume(std::path::PathBuf),
}
