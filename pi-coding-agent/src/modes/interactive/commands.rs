//! Built-in slash commands, on the UI task.

use std::cell::RefCell;
use std::rc::Rc;

use pi_tui::{ComponentRef, CrosstermTerminal, Markdown, Spacer, Text, Tui, shared};

use super::app::{App, UiEvent};
use super::dialog_stack::DialogDone;
use super::dialogs::{DoneCell, Selector};
use super::host::UiRequest;

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

pub(crate) fn done_cell() -> DoneCell {
    Rc::new(RefCell::new(None))
}

impl App {
    /// Opens a selector in place of the editor, `preselect` highlighted; `on_done` gets the chosen
    /// value, or `None` when the selector is dismissed.
    pub(crate) fn open_selector(
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
            "new" => self.command_new(),
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
            "copy" => self.copy_last_message(tui, false, false),
            "hotkeys" => self.command_hotkeys(),
            "reload" => self.command_reload(),
            "fork" => self.command_fork(tui, false),
            "clone" => self.command_fork(tui, true),
            "tree" => self.command_tree(tui, None),
            "context" => self.command_context(),
            "export" => self.command_export(args),
            "settings" => self.command_settings(tui),
            "scoped-models" => self.command_scoped_models(tui),
            "changelog" => self.command_changelog(),
            "import" => self.command_import(tui, args),
            // Registered by a built-in or user extension (`/mcp`, `/trust`, …): the session runs it.
            "login" | "logout" | "mcp" | "trust" | "share" | "bug" | "llama" if self.extension_has_command(name) => {
                return false;
            }
            "trust" => self.command_trust(tui),
            "logout" => self.command_logout(tui),
            "login" => self.command_login(tui, args),
            "share" | "bug" => {
                self.show_line("warning", &format!("/{name} arrives with its feature; it is not available yet"))
            }
            _ => return false,
        }
        true
    }

    fn extension_has_command(&self, name: &str) -> bool {
        self.session.extension_runner().is_some_and(|r| r.commands().iter().any(|(n, _)| n == name))
    }

    pub(crate) fn command_model(&mut self, tui: &mut Tui<CrosstermTerminal>, search: &str) {
        let models =
            if self.scoped_models.is_empty() { self.with_extension_models() } else { self.scoped_models.clone() };
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

    /// The models with credentials, then those of providers extensions registered that have
    /// configured auth (llama.cpp's router models), which change during the session.
    fn with_extension_models(&self) -> Vec<pi_ai::Model> {
        let mut models = self.models.clone();
        let runner = self.session.extension_runner();
        let registered = runner.map(|r| r.registered_providers()).unwrap_or_default();
        // Only the providers with configured auth list their models (pi's available snapshot).
        let available = runner.map(|r| r.available_registered_providers()).unwrap_or_default();
        for provider in registered {
            models.retain(|m| m.provider != provider.name);
        }
        for provider in available {
            models.extend(provider.model_values().into_iter().filter_map(|v| serde_json::from_value(v).ok()));
        }
        let virtual_models = self.session.extension_runner().map(|r| r.virtual_models()).unwrap_or_default();
        crate::extensions::with_virtual_models(models, &virtual_models)
    }

    fn apply_model(&mut self, key: &str) {
        let Some(model) = self.with_extension_models().into_iter().find(|m| format!("{}/{}", m.provider, m.id) == key)
        else {
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

    /// `/resume`: pi's session picker.
    pub(crate) fn command_resume(&mut self, tui: &mut Tui<CrosstermTerminal>) {
        let (cwd, dir, current) = self.session.with_session_manager(|sm| {
            (sm.cwd().to_owned(), Some(sm.session_dir().to_path_buf()), sm.session_file().map(|p| p.to_path_buf()))
        });
        let done = done_cell();
        let picker = Rc::new(RefCell::new(super::session_picker::SessionPicker::new(
            self.theme.clone(),
            self.keys.clone(),
            cwd,
            dir,
            current,
            done.clone(),
        )));
        let component: ComponentRef = picker.clone();
        self.open_dialog(
            tui,
            component,
            done,
            Box::new(|app, v| {
                app.picker = None;
                let startup = std::mem::take(&mut app.startup_resume);
                match v {
                    Some(path) => app.spawn_switch(SwitchKind::Resume(path.into())),
                    None if startup => {
                        app.exit_note = Some("No session selected".to_owned());
                        app.quit = Some(0);
                    }
                    None => {}
                }
            }),
        );
        self.picker = Some(picker);
    }

    /// Runs what the session picker asked for after a key: delete or rename a session file.
    pub(crate) fn apply_picker_requests(&mut self) {
        let Some(picker) = self.picker.clone() else { return };
        let requests: Vec<_> = picker.borrow_mut().requests.drain(..).collect();
        for request in requests {
            let mut p = picker.borrow_mut();
            match request {
                super::session_picker::PickerRequest::Delete(path) => {
                    match super::session_picker::delete_session_file(&path) {
                        Ok(msg) => {
                            p.reload();
                            p.set_status(false, msg.to_owned());
                        }
                        Err(e) => p.set_status(true, format!("Failed to delete: {e}")),
                    }
                }
                super::session_picker::PickerRequest::Rename(path, name) => {
                    let result = crate::session::SessionManager::open(&path, None, None)
                        .and_then(|mut sm| sm.append_session_info(&name).map(|_| ()));
                    match result {
                        Ok(()) => p.reload(),
                        Err(e) => p.set_status(true, format!("Failed to rename: {e}")),
                    }
                }
            }
        }
    }

    /// `/new` (and `app.session.new`): a fresh session.
    pub(crate) fn command_new(&mut self) {
        self.spawn_switch(SwitchKind::New);
    }

    fn spawn_switch(&mut self, kind: SwitchKind) {
        let session = self.session.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let (result, done) = match kind {
                SwitchKind::New => (
                    session.new_session(None).await.map(|o| o.cancelled),
                    UiEvent::Info("\u{1}✓ New session started".to_owned()),
                ),
                SwitchKind::Resume(path) => (
                    session.switch_session(&path).await.map(|o| o.cancelled),
                    UiEvent::Rebuilt("Resumed session".to_owned()),
                ),
            };
            match result {
                Ok(false) => {
                    let _ = tx.send(done);
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

    /// pi's `/session`: name, file, id, message counts, tokens, cache warming, cost.
    fn command_session(&mut self) {
        let s = self.session.get_session_stats();
        let name = self.session.session_name();
        let mode = self.session.settings_manager().cache_warming().as_str().to_owned();
        let t = self.theme.clone();
        let dim = |x: &str| t.fg("dim", x);
        let b = pi_tui::theme::bold;
        let mut info = format!("{}\n\n", b("Session Info"));
        if let Some(n) = name {
            info.push_str(&format!("{} {n}\n", dim("Name:")));
        }
        info.push_str(&format!("{} {}\n", dim("File:"), s.session_file.as_deref().unwrap_or("In-memory")));
        info.push_str(&format!("{} {}\n\n", dim("ID:"), s.session_id));
        info.push_str(&format!("{}\n", b("Messages")));
        info.push_str(&format!("{} {}\n", dim("Total:"), s.total_messages));
        info.push_str(&format!("{} {}\n", dim("User:"), s.user_messages));
        info.push_str(&format!("{} {}\n", dim("Assistant:"), s.assistant_messages));
        info.push_str(&format!("{} {} calls, {} results\n\n", dim("Tools:"), s.tool_calls, s.tool_results));
        info.push_str(&format!("{}\n", b("Tokens")));
        let (input, read, write) = (s.tokens.input, s.tokens.cache_read, s.tokens.cache_write);
        let prompt = input + read + write;
        info.push_str(&format!("{} {}\n", dim("Input:"), grouped(prompt)));
        if prompt > 0 && (read > 0 || write > 0) {
            let rate = dim(&format!("({:.1}%)", read as f64 / prompt as f64 * 100.0));
            info.push_str(&format!("  {} {} {rate}\n", dim("Cached:"), grouped(read)));
            let written = if write > 0 {
                format!(" {}", dim(&format!("({} written to cache)", grouped(write))))
            } else {
                String::new()
            };
            info.push_str(&format!("  {} {}{written}\n", dim("Uncached:"), grouped(input + write)));
        }
        info.push_str(&format!("{} {}\n", dim("Output:"), grouped(s.tokens.output)));
        info.push_str(&format!("{} {}\n", dim("Total:"), grouped(s.tokens.total())));
        info.push_str(&self.session_cache_lines(&mode, s.cost));
        self.add_chat(shared(Spacer::new(1)));
        self.add_chat(shared(Text::new(info, 1, 0)));
    }

    /// pi's `handleCopyCommand` (`/copy`, and `app.message.copy` with both options): the
    /// fullscreen transcript's selection when one is active and not already copied on select,
    /// else the last answer's text; "Copied!" flashes in the fullscreen mode when asked to,
    /// otherwise the status line says so.
    pub(crate) fn copy_last_message(
        &mut self,
        tui: &mut Tui<CrosstermTerminal>,
        flash_confirmation: bool,
        prefer_selection: bool,
    ) {
        let fullscreen = !self.regular;
        if prefer_selection
            && fullscreen
            && !self.session.settings_manager().settings().fullscreen_copy_on_select()
            && let Some(text) = self.selection_text()
        {
            // pi's `hasActiveSelection` counts an empty selection too; then nothing is copied.
            if !text.is_empty() {
                self.copy_with_flash(tui, &text);
            }
            return;
        }
        let Some(text) = self.session.get_last_assistant_text().filter(|t| !t.is_empty()) else {
            self.show_error("No agent messages to copy yet.");
            return;
        };
        match super::mouse::copy_to_clipboard(tui, &text) {
            Ok(()) if flash_confirmation && fullscreen => self.flash_copied(),
            Ok(()) => self.show_status("Copied last agent message to clipboard"),
            Err(e) => self.show_error(&e),
        }
    }

    /// pi's `/hotkeys`: navigation, editing and other keys from the bindings in force, then
    /// the shortcuts extensions registered.
    fn command_hotkeys(&mut self) {
        let k = |a: &str| super::keys::key_display(&self.keys, a);
        let table = |title: &str, rows: &[(String, &str)]| {
            let mut t = format!("**{title}**\n| Key | Action |\n|-----|--------|\n");
            for (key, action) in rows {
                t.push_str(&format!("| {key} | {action} |\n"));
            }
            t
        };
        let c = |a: &str| format!("`{}`", k(a));
        let nav = [
            (
                format!(
                    "{} / {} / {} / {}",
                    c("tui.editor.cursorUp"),
                    c("tui.editor.cursorDown"),
                    c("tui.editor.cursorLeft"),
                    c("tui.editor.cursorRight")
                ),
                "Move cursor / browse history",
            ),
            (format!("{} / {}", c("tui.editor.cursorWordLeft"), c("tui.editor.cursorWordRight")), "Move by word"),
            (c("tui.editor.cursorLineStart"), "Start of line"),
            (c("tui.editor.cursorLineEnd"), "End of line"),
            (c("tui.editor.jumpForward"), "Jump forward to character"),
            (c("tui.editor.jumpBackward"), "Jump backward to character"),
            (format!("{} / {}", c("tui.editor.pageUp"), c("tui.editor.pageDown")), "Scroll by page"),
        ];
        let edit = [
            (c("tui.input.submit"), "Send message"),
            (c("tui.input.newLine"), "New line"),
            (c("tui.editor.deleteWordBackward"), "Delete word backwards"),
            (c("tui.editor.deleteWordForward"), "Delete word forwards"),
            (c("tui.editor.deleteToLineStart"), "Delete to start of line"),
            (c("tui.editor.deleteToLineEnd"), "Delete to end of line"),
            (c("tui.editor.yank"), "Paste the most-recently-deleted text"),
            (c("tui.editor.yankPop"), "Cycle through the deleted text after pasting"),
            (c("tui.editor.undo"), "Undo"),
        ];
        let other = [
            (c("tui.input.tab"), "Path completion / accept autocomplete"),
            (c("app.interrupt"), "Cancel autocomplete / abort streaming"),
            (c("app.clear"), "Clear editor (first) / exit (second)"),
            (c("app.exit"), "Exit (when editor is empty)"),
            (c("app.suspend"), "Suspend to background"),
            (c("app.thinking.cycle"), "Cycle thinking level"),
            (format!("{} / {}", c("app.model.cycleForward"), c("app.model.cycleBackward")), "Cycle models"),
            (c("app.model.select"), "Open model selector"),
            (c("app.tools.expand"), "Toggle tool output expansion"),
            (c("app.thinking.toggle"), "Toggle thinking block visibility"),
            (c("app.editor.external"), "Edit message in external editor"),
            (c("app.message.copy"), "Copy selection or last assistant message"),
            (c("app.message.followUp"), "Queue follow-up message"),
            (c("app.message.dequeue"), "Restore queued messages"),
            (c("app.clipboard.pasteImage"), "Paste files on macOS, images, or text from clipboard"),
            ("`/`".to_owned(), "Slash commands"),
            ("`!`".to_owned(), "Run bash command"),
            ("`!!`".to_owned(), "Run bash command (excluded from context)"),
        ];
        let mut md = format!("{}\n{}\n{}", table("Navigation", &nav), table("Editing", &edit), table("Other", &other));
        let shortcuts = self.extension_shortcuts();
        if !shortcuts.is_empty() {
            let rows: Vec<(String, &str)> =
                shortcuts.iter().map(|(key, d)| (format!("`{}`", capitalize_key(key)), d.as_str())).collect();
            md.push('\n');
            md.push_str(&table("Extensions", &rows));
        }
        let theme = self.theme.clone();
        self.add_chat(shared(Spacer::new(1)));
        self.add_chat(shared(super::dialogs::Border(theme.clone())));
        self.add_chat(shared(Text::new(theme.fg("accent", &pi_tui::theme::bold("Keyboard Shortcuts")), 1, 0)));
        self.add_chat(shared(Spacer::new(1)));
        let mdt = self.live.renderer.markdown_theme();
        self.add_chat(shared(Markdown::new(md.trim(), 1, 1, mdt)));
        self.add_chat(shared(super::dialogs::Border(theme)));
    }

    pub(crate) fn command_fork(&mut self, tui: &mut Tui<CrosstermTerminal>, clone: bool) {
        if clone {
            let leaf = self.session.leaf_id();
            let Some(leaf) = leaf else {
                self.show_status("Nothing to clone yet");
                return;
            };
            self.spawn_fork(leaf, true);
            return;
        }
        let messages = self.session.get_fork_messages();
        if messages.is_empty() {
            self.show_status("No messages to fork from");
            return;
        }
        let messages = messages.into_iter().map(|m| (m.entry_id, m.text)).collect();
        let done = done_cell();
        let selector =
            super::fork_selector::ForkSelector::new(self.theme.clone(), self.keys.clone(), messages, done.clone());
        self.open_dialog(
            tui,
            shared(selector),
            done,
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
                    // pi sets the editor's text (a clone's is empty), then says where it is.
                    let text = if clone { String::new() } else { o.selected_text.unwrap_or_default() };
                    let _ = tx.send(UiEvent::Ui(UiRequest::SetEditorText(text)));
                    let label = if clone { "Cloned to new session" } else { "Forked to new session" };
                    let _ = tx.send(UiEvent::Rebuilt(label.to_owned()));
                }
                Ok(_) => {}
                Err(e) => {
                    let _ = tx.send(UiEvent::Error(e.to_string()));
                }
            }
        });
    }

    /// `/tree`: pi's tree navigator, then the summary prompt and the switch.
    pub(crate) fn command_tree(&mut self, tui: &mut Tui<CrosstermTerminal>, initial: Option<String>) {
        let filter = self.session.settings_manager().settings().tree_filter_mode().as_str().to_owned();
        let rows = pi_tui::Terminal::rows(tui.terminal());
        let done = done_cell();
        let (theme, keys) = (self.theme.clone(), self.keys.clone());
        let built = self.session.with_session_manager(|sm| {
            let roots = sm.tree();
            if roots.is_empty() {
                return None;
            }
            let leaf = sm.leaf_id().map(str::to_owned);
            Some(super::tree_view::TreeView::new(theme, keys, &roots, leaf, initial, &filter, rows, done.clone()))
        });
        let Some(view) = built else {
            self.show_status("No entries in session");
            return;
        };
        let view = Rc::new(RefCell::new(view));
        let component: ComponentRef = view.clone();
        self.open_dialog(
            tui,
            component,
            done,
            Box::new(|app, v| {
                app.tree_view = None;
                if let Some(id) = v {
                    app.tree_selected(id);
                }
            }),
        );
        self.tree_view = Some(view);
    }

    /// Writes the labels the tree navigator changed.
    pub(crate) fn apply_tree_labels(&mut self) {
        self.apply_tree_copies();
        let Some(view) = self.tree_view.clone() else { return };
        let changes: Vec<_> = view.borrow_mut().label_changes.drain(..).collect();
        for (id, label) in changes {
            let r = self.session.with_session_manager(|sm| sm.append_label_change(&id, label.as_deref()).map(|_| ()));
            if let Err(e) = r {
                self.show_error(&e.to_string());
            }
        }
    }

    /// A node was chosen: pi's "Summarize branch?" prompt (unless `branchSummary.skipPrompt`).
    fn tree_selected(&mut self, id: String) {
        if self.session.leaf_id().as_deref() == Some(id.as_str()) {
            self.show_status("Already at this point");
            return;
        }
        if self.session.settings_manager().settings().branch_summary_skip_prompt() {
            self.spawn_navigate(id, false, None);
            return;
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        let options = ["No summary", "Summarize", "Summarize with custom prompt"].map(str::to_owned).to_vec();
        let _ =
            self.tx.send(UiEvent::Ui(UiRequest::Select { title: "Summarize branch?".to_owned(), options, reply: tx }));
        let events = self.tx.clone();
        tokio::spawn(async move {
            let choice = rx.await.ok().flatten();
            let _ = events.send(UiEvent::TreeChoice { id, choice });
        });
    }

    /// The summary choice for a tree switch (`None`: back to the navigator).
    pub(crate) fn on_tree_choice(&mut self, tui: &mut Tui<CrosstermTerminal>, id: String, choice: Option<String>) {
        match choice.as_deref() {
            None => self.command_tree(tui, Some(id)),
            Some("Summarize with custom prompt") => {
                let (tx, rx) = tokio::sync::oneshot::channel();
                self.on_ui_request(
                    tui,
                    UiRequest::Input {
                        title: "Custom summarization instructions".to_owned(),
                        placeholder: None,
                        prefill: String::new(),
                        reply: tx,
                    },
                );
                let events = self.tx.clone();
                tokio::spawn(async move {
                    let text = rx.await.ok().flatten();
                    let choice = text.map(|t| format!("\u{1}{t}"));
                    let _ = events.send(UiEvent::TreeChoice { id, choice: choice.or(Some("\u{2}".to_owned())) });
                });
            }
            Some("\u{2}") => self.tree_selected(id),
            Some(c) if c.starts_with('\u{1}') => self.spawn_navigate(id, true, Some(c[1..].to_owned())),
            Some(c) => self.spawn_navigate(id, c == "Summarize", None),
        }
    }

    fn spawn_navigate(&mut self, id: String, summarize: bool, instructions: Option<String>) {
        let session = self.session.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let options =
                crate::sdk::NavigateTreeOptions { summarize, custom_instructions: instructions, ..Default::default() };
            match session.navigate_tree(&id, options).await {
                Ok(o) if o.cancelled => {
                    let _ = tx.send(UiEvent::Status("Navigation cancelled".to_owned()));
                }
                Ok(o) => {
                    let _ = tx.send(UiEvent::Rebuilt("Navigated to selected point".to_owned()));
                    if let Some(text) = o.editor_text {
                        let _ = tx.send(UiEvent::Ui(UiRequest::SetEditorText(text)));
                    }
                }
                Err(e) => {
                    let _ = tx.send(UiEvent::Error(e.to_string()));
                }
            }
        });
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
}

/// pi's `formatKeyText(key, { capitalize: true })`.
pub(crate) fn capitalize_key(key: &str) -> String {
    key.split('/')
        .map(|k| {
            k.split('+')
                .map(|p| {
                    let mut c = p.chars();
                    c.next().map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
                })
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// JavaScript's `toLocaleString()` of an integer in the `en-US` locale: `12,345`.
pub(crate) fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Which session switch to run.
enum SwitchKind {
    New,
    Resume(std::path::PathBuf),
}
