//! The application state of the UI task: the component tree, the live transcript rows, input
//! dispatch and the session's events.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Instant;

use pi_ai::Model;
use pi_tui::components::{EditorTheme, SelectListTheme};
use pi_tui::keys::Keybindings;
use pi_tui::{
    ColorMode, Component, ComponentRef, Container, CrosstermTerminal, Editor, Spacer, Terminal, Text, Theme, Tui,
    shared,
};
use tokio::sync::mpsc::UnboundedSender;

use super::InteractiveOptions;
use super::dialog_stack::Dialog;
use super::footer::Footer;
use super::header::{header_text, header_text_expanded, resource_sections};
use super::host::UiRequest;
use super::keys::load_keybindings;
use super::layout::ChatLayout;
use super::live::Live;
use crate::render::{RenderOptions, TranscriptRenderer};
use crate::sdk::{AgentSession, PromptOptions, SessionEvent};

/// What reaches the UI task.
pub(crate) enum UiEvent {
    /// Stdin has data (the reader thread's wake-up).
    Wake,
    /// A session event.
    Session(Box<SessionEvent>),
    /// A request of an extension or command through the UI seam.
    Ui(UiRequest),
    /// A spawned session call failed.
    Error(String),
    /// A spawned call finished with something to show.
    Info(String),
    /// Open the session picker (`pi --resume`).
    OpenResume,
    /// The summary choice after a `/tree` selection (`None`: dismissed).
    TreeChoice { id: String, choice: Option<String> },
    /// A dim status line (pi's `showStatus`).
    Status(String),
    /// The session changed under the UI: the transcript is drawn again, then a status line.
    Rebuilt(String),
    /// A user `!command` finished.
    BashDone { id: u64, result: Result<crate::sdk::BashResult, String> },
    /// A step of `/login` (its selectors and its dialog's end).
    Login(super::login_flow::LoginStep),
    /// An extension called `ctx.shutdown()`.
    ShutdownRequested,
}

pub(crate) struct App {
    pub(crate) session: AgentSession,
    pub(crate) tx: UnboundedSender<UiEvent>,
    pub(crate) theme: Rc<Theme>,
    pub(crate) keys: Rc<Keybindings>,
    pub(crate) header: Rc<RefCell<Container>>,
    pub(crate) chat: Rc<RefCell<Container>>,
    pub(crate) pending: Rc<RefCell<Container>>,
    pub(crate) widgets_above: Rc<RefCell<Container>>,
    pub(crate) editor_slot: Rc<RefCell<Container>>,
    pub(crate) widgets_below: Rc<RefCell<Container>>,
    pub(crate) footer_slot: Rc<RefCell<Container>>,
    pub(crate) footer: Rc<RefCell<Footer>>,
    pub(crate) editor: Rc<RefCell<Editor>>,
    pub(crate) layout: Rc<RefCell<ChatLayout>>,
    pub(crate) rows: Rc<Cell<usize>>,
    pub(crate) regular: bool,
    /// The fullscreen mode's mouse gestures.
    pub(crate) mouse: super::mouse::MouseState,
    /// The transcript search's box while it is open (fullscreen mode).
    pub(crate) search_overlay: Option<pi_tui::OverlayId>,
    submitted: Rc<RefCell<Vec<String>>>,
    pub(crate) live: Live,
    pub(crate) dirty: bool,
    pub(crate) last_ctrl_c: Option<Instant>,
    /// The last Escape at an empty editor (pi's double Escape).
    pub(crate) last_escape: Option<Instant>,
    /// The theme colour the editor's border has (`""` before the first frame and after a theme
    /// change).
    pub(crate) border_key: &'static str,
    pub(crate) quit: Option<i32>,
    /// An extension called `ctx.shutdown()`: quit once the session is idle.
    pub(crate) shutdown_requested: bool,
    pub(crate) cache_notice: Option<super::cache_notice::CacheNotice>,
    pub(crate) expanded: bool,
    pub(crate) hide_thinking: bool,
    pub(crate) statuses: BTreeMap<String, String>,
    pub(crate) widgets: BTreeMap<String, (bool, ComponentRef)>,
    pub(crate) dialog: Option<Dialog>,
    /// Dialogs hidden under the open one, each with its component (pi's extension dialog stack:
    /// closing the open dialog shows the previous one again).
    pub(crate) dialog_stack: Vec<(Dialog, ComponentRef)>,
    /// The next `open_dialog` opens an extension's dialog.
    pub(crate) opening_extension_dialog: bool,
    /// The `blocked` status of the extension dialog being opened.
    pub(crate) opening_blocked: Option<super::program_status::Blocked>,
    pub(crate) program_status: super::program_status::ProgramStatusReporter,
    git_branch: Option<String>,
    pub(crate) models: Vec<Model>,
    pub(crate) scoped_models: Vec<Model>,
    pub(crate) editor_text: std::sync::Arc<std::sync::Mutex<String>>,
    pub(crate) next_bash: u64,
    /// Running user `!cmd`s.
    pub(crate) bash_rows: BTreeMap<u64, BashRow>,
    pub(crate) version: String,
    pub(crate) header_text: Option<Rc<RefCell<Text>>>,
    last_status: Option<(ComponentRef, Rc<RefCell<Text>>)>,
    /// The agent dir (themes, keybindings).
    pub(crate) agent_dir: std::path::PathBuf,
    /// Changes an open settings-like dialog reported, applied after each key.
    pub(crate) dialog_changes: Option<super::settings_list::Changes>,
    /// The theme setting in force (`/reload` loads it again).
    pub(crate) theme_name: Option<String>,
    /// The theme names `ctx.ui.setTheme` accepts (built-in, files, extensions' themes).
    pub(crate) theme_names: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    /// The themes extensions provided (`resources_discover`, packages), for `ctx.ui.getTheme`.
    pub(crate) extension_theme_files: std::sync::Arc<std::sync::Mutex<Vec<crate::sdk::ExtensionTheme>>>,
    /// The picker of `pi --resume` is open: dismissing it quits.
    pub(crate) startup_resume: bool,
    /// A line printed after the terminal is restored (`No session selected`).
    pub(crate) exit_note: Option<String>,
    /// Extensions' custom components on screen.
    pub(crate) customs: super::custom_component::Customs,
    /// The open tree navigator (its label changes).
    pub(crate) tree_view: Option<Rc<RefCell<super::tree_view::TreeView>>>,
    /// The open session picker (its delete and rename requests).
    pub(crate) picker: Option<Rc<RefCell<super::session_picker::SessionPicker>>>,
    /// Extension shortcuts bound in the editor: `(key, description)`.
    pub(crate) shortcut_list: Vec<(String, String)>,
    /// The colours the terminal takes.
    pub(crate) color_mode: ColorMode,
}

/// A running user `!cmd`: the command, excluded from context, its row, the output so far.
pub(crate) type BashRow = (String, bool, Rc<RefCell<Container>>, String);

pub(crate) fn select_theme(theme: &Rc<Theme>) -> SelectListTheme {
    let (a, b, c, d) = (theme.clone(), theme.clone(), theme.clone(), theme.clone());
    SelectListTheme {
        selected_text: Rc::new(move |s: &str| a.fg("accent", s)),
        description: Rc::new(move |s: &str| b.fg("muted", s)),
        scroll_info: Rc::new(move |s: &str| c.fg("dim", s)),
        no_match: Rc::new(move |s: &str| d.fg("warning", s)),
    }
}

/// The theme named by the setting: pi's generated `system` theme (no setting, `system`, or a
/// `light/dark` pair that does not resolve), built-in `dark` / `light`, or `<name>.json` in the
/// agent's or the project's `themes/` folder; the system theme when it cannot be loaded (with
/// pi's error).
pub(crate) fn load_theme(
    name: Option<&str>,
    agent_dir: &std::path::Path,
    cwd: &str,
    mode: ColorMode,
) -> (Theme, Option<String>) {
    load_theme_with(name, agent_dir, cwd, mode, &[])
}

/// [`load_theme`], also finding the themes extensions provided (`resources_discover`) by name.
pub(crate) fn load_theme_with(
    name: Option<&str>,
    agent_dir: &std::path::Path,
    cwd: &str,
    mode: ColorMode,
    extension_themes: &[crate::sdk::ExtensionTheme],
) -> (Theme, Option<String>) {
    let fallback = || super::theme_controller::system_theme(mode);
    // A `light/dark` pair picks by the terminal's appearance (pi's `resolveThemeSetting`).
    let name = pi_tui::theme::auto::resolve_theme_setting(name, super::theme_controller::terminal_appearance());
    let Some(name) = name.filter(|n| !n.is_empty() && *n != "system") else { return (fallback(), None) };
    if let Ok(t) = Theme::builtin(name, mode) {
        return (t, None);
    }
    let failed = |e: &str| format!("Failed to load theme \"{name}\": {e}\nFell back to the system theme.");
    let mut candidates = vec![
        agent_dir.join("themes").join(format!("{name}.json")),
        std::path::Path::new(cwd).join(".pi/themes").join(format!("{name}.json")),
    ];
    candidates.extend(extension_themes.iter().filter(|t| t.name == name).map(|t| t.path.clone()));
    for path in candidates {
        if let Ok(text) = std::fs::read_to_string(&path) {
            return match Theme::from_json(&text, mode) {
                Ok(t) => (t, None),
                Err(e) => (fallback(), Some(failed(&e.to_string()))),
            };
        }
    }
    (fallback(), Some(failed(&format!("Theme not found: {name}"))))
}

/// pi's compact extension label: the file name, or the folder of an `index.*` file.
fn extension_label(path: &str) -> String {
    let p = std::path::Path::new(path);
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.to_owned());
    if name.starts_with("index.")
        && let Some(dir) = p.parent().and_then(|d| d.file_name())
    {
        return dir.to_string_lossy().into_owned();
    }
    name
}

fn git_branch(cwd: &str) -> Option<String> {
    let mut dir = std::path::PathBuf::from(cwd);
    loop {
        let head = dir.join(".git/HEAD");
        if let Ok(text) = std::fs::read_to_string(&head) {
            let t = text.trim();
            return Some(match t.strip_prefix("ref: refs/heads/") {
                Some(b) => b.to_owned(),
                None => "detached".to_owned(),
            });
        }
        if !dir.pop() {
            return None;
        }
    }
}

impl App {
    pub(crate) fn new(
        session: AgentSession,
        tx: UnboundedSender<UiEvent>,
        options: &InteractiveOptions,
        tui: &mut Tui<CrosstermTerminal>,
    ) -> Self {
        let (theme, theme_warning) = load_theme(
            options.theme.as_deref(),
            &options.agent_dir,
            session.cwd(),
            options.color_mode.unwrap_or_else(ColorMode::detect),
        );
        let theme = Rc::new(theme);
        let (keys, key_warnings) = load_keybindings(&options.agent_dir);
        let keys = Rc::new(keys);
        let border_theme = theme.clone();
        let mut editor = Editor::new(EditorTheme {
            border_color: Rc::new(move |s: &str| border_theme.fg("borderMuted", s)),
            select_list: select_theme(&theme),
        });
        editor.set_keybindings(keys.clone());
        editor.set_terminal_rows(tui.terminal().rows());
        let submitted = Rc::new(RefCell::new(Vec::new()));
        let sink = submitted.clone();
        editor.on_submit = Some(Box::new(move |t: &str| sink.borrow_mut().push(t.to_owned())));
        let editor = shared(editor);
        let header = shared(Container::new());
        let chat = shared(Container::new());
        let pending = shared(Container::new());
        let status = shared(Container::new());
        let widgets_above = shared(Container::new());
        // pi keeps one empty line above the editor while no widget is shown.
        widgets_above.borrow_mut().add_child(shared(Spacer::new(1)));
        let editor_slot = shared(Container::new());
        editor_slot.borrow_mut().add_child(editor.clone());
        let widgets_below = shared(Container::new());
        let footer = shared(Footer::new(theme.clone()));
        let footer_slot = shared(Container::new());
        footer_slot.borrow_mut().add_child(footer.clone());
        let rows = Rc::new(Cell::new(if options.regular_screen { 0 } else { tui.terminal().rows() }));
        let document: Vec<ComponentRef> = vec![header.clone(), chat.clone()];
        let dock: Vec<ComponentRef> = vec![
            pending.clone(),
            status.clone(),
            widgets_above.clone(),
            editor_slot.clone(),
            widgets_below.clone(),
            footer_slot.clone(),
        ];
        // pi's dock gives the editor's slot at least 3 rows (`minSize: 3`).
        let layout = shared(ChatLayout::new(document, dock, rows.clone()).with_dock_min_sizes(vec![0, 0, 0, 3, 0, 0]));
        tui.add_child(layout.clone());
        tui.set_focus(Some(editor.clone()));
        let renderer_options = RenderOptions { hide_thinking: options.hide_thinking, ..RenderOptions::default() };
        let renderer =
            Rc::new(TranscriptRenderer::new(theme.clone(), session.extension_runner().cloned(), renderer_options));
        let git = git_branch(session.cwd());
        let mut app = App {
            live: Live::new(renderer),
            session,
            tx,
            theme,
            keys,
            header,
            chat,
            pending,
            widgets_above,
            editor_slot,
            widgets_below,
            footer_slot,
            footer,
            editor,
            layout,
            rows,
            regular: options.regular_screen,
            submitted,
            dirty: true,
            last_ctrl_c: None,
            last_escape: None,
            border_key: "",
            quit: None,
            shutdown_requested: false,
            cache_notice: None,
            expanded: false,
            hide_thinking: options.hide_thinking,
            statuses: BTreeMap::new(),
            widgets: BTreeMap::new(),
            dialog: None,
            dialog_stack: Vec::new(),
            opening_extension_dialog: false,
            opening_blocked: None,
            program_status: Default::default(),
            git_branch: git,
            models: options.models.clone(),
            scoped_models: options.scoped_models.clone(),
            editor_text: Default::default(),
            next_bash: 0,
            bash_rows: BTreeMap::new(),
            version: options.version.clone(),
            header_text: None,
            last_status: None,
            agent_dir: options.agent_dir.clone(),
            dialog_changes: None,
            theme_name: options.theme.clone(),
            theme_names: Default::default(),
            extension_theme_files: Default::default(),
            shortcut_list: Vec::new(),
            picker: None,
            tree_view: None,
            customs: Default::default(),
            startup_resume: false,
            exit_note: None,
            color_mode: options.color_mode.unwrap_or_else(ColorMode::detect),
            mouse: Default::default(),
            search_overlay: None,
        };
        for w in theme_warning.into_iter().chain(key_warnings) {
            app.show_warning(&w);
        }
        app
    }

    /// Header, resumed transcript, extension binding, then the command-line messages.
    pub(crate) async fn start(&mut self, options: InteractiveOptions) {
        if !options.quiet_startup {
            let mut h = self.header.borrow_mut();
            h.add_child(shared(Spacer::new(1)));
            let text = shared(Text::new(header_text(&self.theme, &self.keys, &self.version), 1, 0));
            h.add_child(text.clone());
            self.header_text = Some(text);
            h.add_child(shared(Spacer::new(1)));
            if !options.resources.context_files.is_empty() {
                h.add_child(shared(Spacer::new(1)));
            }
            let mut resources = options.resources.clone();
            if resources.extensions.is_empty()
                && let Some(runner) = self.session.extension_runner()
            {
                // pi lists the extensions a user loaded, not its built-in ones (`builtin:mcp`, …).
                resources.extensions = runner
                    .extension_paths()
                    .iter()
                    .filter(|p| !p.starts_with("builtin:"))
                    .map(|p| extension_label(p))
                    .collect();
            }
            for section in resource_sections(&self.theme, &resources) {
                h.add_child(shared(Text::new(section, 0, 0)));
                h.add_child(shared(Spacer::new(1)));
            }
        }
        let host = super::host::TuiHost::new(self.tx.clone(), self.editor_text.clone(), (*self.theme).clone())
            .with_theme_names(self.theme_names.clone())
            .with_extension_themes(self.extension_theme_files.clone());
        host.set_sources(super::host::UiSources {
            keys: super::keys::action_keys(&self.keys),
            agent_dir: self.agent_dir.clone(),
            cwd: self.session.cwd().to_owned(),
            mode: self.color_mode,
        });
        host.set_provider_count(
            self.models.iter().map(|m| m.provider.as_str()).collect::<std::collections::BTreeSet<_>>().len(),
        );
        if let Some(runner) = self.session.extension_runner() {
            runner.set_mode(crate::extensions::ExtensionMode::Tui, true);
            runner.set_ui(std::sync::Arc::new(host));
        }
        let tx = self.tx.clone();
        let _unsubscribe_on_drop = self.session.subscribe(move |ev| {
            let _ = tx.send(UiEvent::Session(Box::new(ev.clone())));
        });
        std::mem::forget(_unsubscribe_on_drop);
        let shutdown = self.tx.clone();
        self.session.set_extension_shutdown_handler(move || {
            let _ = shutdown.send(UiEvent::ShutdownRequested);
        });
        let errors = self.tx.clone();
        self.session
            .bind_extensions(move |e| {
                let _ = errors.send(UiEvent::Ui(UiRequest::ExtensionError(e.clone())));
            })
            .await;
        self.refresh_theme_names();
        let issues = self.bind_extension_shortcuts();
        self.show_extension_issues(&issues);
        self.install_completions(&options.commands);
        self.rebuild_transcript();
        // Startup warnings (no models available) come after the resumed transcript, as pi's.
        for w in &options.warnings {
            self.show_warning(w);
        }
        if options.resume_picker {
            self.startup_resume = true;
            let _ = self.tx.send(UiEvent::OpenResume);
        }
        let mut queue: Vec<(String, PromptOptions)> = options.initial.into_iter().collect();
        queue.extend(options.rest.into_iter().map(|m| (m, PromptOptions::default())));
        if !queue.is_empty() {
            let session = self.session.clone();
            let tx = self.tx.clone();
            tokio::spawn(async move {
                for (text, opts) in queue {
                    if let Err(e) = session.prompt_with(&text, opts).await {
                        let _ = tx.send(UiEvent::Error(e.to_string()));
                        break;
                    }
                }
            });
        }
        self.dirty = true;
    }

    /// The `/` menu (built-ins, then templates and skills, then extension commands) and file
    /// completion.
    fn install_completions(&mut self, extra: &[(String, String)]) {
        let mut commands: Vec<(String, String)> = super::commands::BUILTIN_COMMANDS
            .iter()
            .map(|(n, hint, d)| {
                let d = if hint.is_empty() { (*d).to_owned() } else { format!("{hint} — {d}") };
                ((*n).to_owned(), d)
            })
            .collect();
        commands.extend(extra.iter().cloned());
        if let Some(runner) = self.session.extension_runner() {
            for (name, c) in runner.commands() {
                if !commands.iter().any(|(n, _)| *n == name) {
                    commands.push((name, c.description.unwrap_or_default()));
                }
            }
        }
        let cwd = std::path::PathBuf::from(self.session.cwd());
        let provider = self.wrap_autocomplete(Rc::new(super::autocomplete::Completions { commands, cwd }));
        self.editor.borrow_mut().set_autocomplete_provider(provider);
    }

    /// Redraws the whole transcript from the session's branch (resume, expand toggle, /tree).
    pub(crate) fn rebuild_transcript(&mut self) {
        let opts =
            RenderOptions { expanded: self.expanded, hide_thinking: self.hide_thinking, ..RenderOptions::default() };
        let renderer =
            Rc::new(TranscriptRenderer::new(self.theme.clone(), self.session.extension_runner().cloned(), opts));
        let (container, notice, user_first) = self.branch_with_cache_notices(&renderer);
        self.cache_notice = notice;
        let mut chat = self.chat.borrow_mut();
        chat.clear();
        // As live: the first user message follows the header's spacer directly.
        let skip = usize::from(user_first);
        for c in container.children().iter().skip(skip) {
            chat.add_child(c.clone());
        }
        drop(chat);
        self.live = Live::new(renderer);
        self.dirty = true;
    }

    /// pi's `setToolsExpanded`: the header, the transcript, then a status line.
    pub(crate) fn set_expanded(&mut self, expanded: bool) {
        if expanded == self.expanded {
            return;
        }
        self.expanded = expanded;
        if let Some(h) = &self.header_text {
            let text = if expanded {
                header_text_expanded(&self.theme, &self.keys, &self.version)
            } else {
                header_text(&self.theme, &self.keys, &self.version)
            };
            h.borrow_mut().set_text(text);
        }
        self.rebuild_transcript();
        self.show_status(&format!("Tool output: {}", if expanded { "expanded" } else { "collapsed" }));
    }

    /// pi's `showStatus`: a dim line, replacing the previous status when it is still the last item.
    pub(crate) fn show_status(&mut self, message: &str) {
        let line = self.theme.fg("dim", message);
        if let Some((spacer, text)) = &self.last_status {
            let chat = self.chat.borrow();
            let n = chat.children().len();
            let text_ref: ComponentRef = text.clone();
            if n >= 2 && Rc::ptr_eq(&chat.children()[n - 1], &text_ref) && Rc::ptr_eq(&chat.children()[n - 2], spacer) {
                drop(chat);
                text.borrow_mut().set_text(line);
                self.dirty = true;
                return;
            }
        }
        let spacer: ComponentRef = shared(Spacer::new(1));
        let text = shared(Text::new(line, 1, 0));
        self.add_chat(spacer.clone());
        self.add_chat(text.clone());
        self.last_status = Some((spacer, text));
    }

    pub(crate) fn add_chat(&mut self, c: ComponentRef) {
        self.chat.borrow_mut().add_child(c);
        self.dirty = true;
    }

    /// A line in the transcript (pi's `showStatus`-like notices).
    pub(crate) fn show_line(&mut self, token: &str, text: &str) {
        self.add_chat(shared(Spacer::new(1)));
        let line = self.theme.fg(token, text);
        self.add_chat(shared(Text::new(line, 1, 0)));
    }

    pub(crate) fn show_error(&mut self, text: &str) {
        self.show_line("error", &format!("Error: {text}"));
    }

    pub(crate) fn show_warning(&mut self, text: &str) {
        self.show_line("warning", &format!("Warning: {text}"));
    }

    pub(crate) fn needs_frame(&self) -> bool {
        self.dirty || self.live.dirty
    }

    pub(crate) fn animating(&self) -> bool {
        self.live.working.is_some() || self.layout.borrow().view.hide_deadline().is_some()
    }

    /// Advances animations (the working loader, an `auto` scrollbar that hides).
    pub(crate) fn tick(&mut self, _tui: &mut Tui<CrosstermTerminal>) {
        let hide = self.layout.borrow().view.hide_deadline();
        if hide.is_some_and(|at| Instant::now() >= at) {
            self.layout.borrow_mut().view.clear_transient();
            self.dirty = true;
        }
        if let Some(w) = self.live.working.as_mut() {
            let due = w.due_frame();
            if due != w.frame {
                w.frame = due;
                self.dirty = true;
            }
        }
    }

    /// Refreshes what frames read from the session: the live assistant row and the footer.
    pub(crate) fn before_frame(&mut self, tui: &mut Tui<CrosstermTerminal>) {
        if !self.regular {
            self.rows.set(tui.terminal().rows());
            self.sync_fullscreen_view();
        }
        self.live.refresh(&self.session);
        let status = self.live.working.as_ref().map(|w| w.text(&self.theme));
        self.editor.borrow_mut().set_top_status(status);
        self.sync_editor_border();
        self.footer.borrow_mut().data = self.footer_data();
        self.dirty = false;
        tui.request_render(false);
    }

    fn footer_data(&self) -> super::footer::FooterData {
        let stats = self.session.get_session_stats();
        let model = self.session.model();
        let usage = stats.context_usage;
        let (cwd, name, hit_rate) = self.session.with_session_manager(|sm| {
            // pi's `latestCacheHitRate`: the cache reads of the latest request's prompt.
            let latest = sm.entries().iter().rev().find_map(|e| match e {
                crate::session::SessionEntry::Message(m) => m.message.as_assistant().map(|a| a.usage.clone()),
                _ => None,
            });
            let rate = latest.and_then(|u| {
                let prompt = u.input + u.cache_read + u.cache_write;
                (prompt > 0).then(|| u.cache_read as f64 / prompt as f64 * 100.0)
            });
            (sm.cwd().to_owned(), sm.session_name(), rate)
        });
        let home = std::env::var("HOME").ok();
        let providers: std::collections::BTreeSet<&str> = self.models.iter().map(|m| m.provider.as_str()).collect();
        super::footer::FooterData {
            cwd: super::footer::format_cwd(&cwd, home.as_deref()),
            git_branch: self.git_branch.clone(),
            session_name: name,
            input: stats.tokens.input,
            output: stats.tokens.output,
            cache_read: stats.tokens.cache_read,
            cache_write: stats.tokens.cache_write,
            cache_hit_rate: hit_rate,
            cost: stats.cost,
            context_percent: usage.as_ref().map_or(Some(0.0), |u| u.percent),
            context_window: usage.as_ref().map_or(self.session.limits_model().context_window, |u| u.context_window),
            auto_compact: self.session.settings().compaction.enabled,
            model_id: Some(model.id.clone()),
            provider: Some(model.provider.clone()),
            reasoning: model.reasoning,
            thinking_level: self.session.thinking_level().as_str().to_owned(),
            routed: self.session.routed_model().map(|(m, level)| (m.id, level.map(|l| l.as_str().to_owned()))),
            provider_count: providers.len(),
            statuses: self.statuses.clone(),
        }
    }

    pub(crate) fn on_resize(&mut self, tui: &mut Tui<CrosstermTerminal>) {
        self.editor.borrow_mut().set_terminal_rows(tui.terminal().rows());
        tui.request_render(true);
        self.dirty = true;
    }

    /// One input sequence: a dialog gets everything; otherwise the app's keys, then the editor.
    pub(crate) fn on_input(&mut self, tui: &mut Tui<CrosstermTerminal>, data: &str) {
        let was_dirty = self.dirty;
        self.dirty = true;
        // pi's viewport listener runs before the extensions' terminal input listeners.
        if self.on_mouse(tui, data) {
            // A component that took the event without asking for a frame is drawn later.
            self.dirty = was_dirty || self.mouse.frame;
            return;
        }
        if self.on_search_key(tui, data) {
            return;
        }
        let Some(data) = self.listen_terminal_input(data) else { return };
        let data = data.as_str();
        if self.search_focused(tui) {
            self.search_input(data);
            return;
        }
        if self.dialog.is_some() {
            if let Err(e) = tui.handle_input(data) {
                tracing::warn!(error = %e, "input handling failed");
            }
            self.apply_dialog_changes();
            self.apply_picker_requests();
            self.apply_tree_labels();
            self.finish_dialog(tui);
            return;
        }
        match self.custom_editor_keys(tui, data) {
            Some(keys) => keys.iter().for_each(|key| self.on_editor_key(tui, key)),
            None => self.on_editor_key(tui, data),
        }
    }

    /// A key for the editor: the app's keys, then the editor itself.
    fn on_editor_key(&mut self, tui: &mut Tui<CrosstermTerminal>, data: &str) {
        if self.handle_app_key(tui, data) {
            return;
        }
        if let Err(e) = tui.handle_input(data) {
            tracing::warn!(error = %e, "input handling failed");
        }
        *self.editor_text.lock().unwrap_or_else(|e| e.into_inner()) = self.editor.borrow().text();
        let submitted: Vec<String> = self.submitted.borrow_mut().drain(..).collect();
        for text in submitted {
            self.on_submit(tui, text, false);
        }
    }

    pub(crate) fn on_event(&mut self, tui: &mut Tui<CrosstermTerminal>, ev: UiEvent) {
        match ev {
            UiEvent::Wake => {}
            UiEvent::Session(ev) => self.on_session_event(*ev),
            UiEvent::Ui(req) => self.on_ui_request(tui, req),
            UiEvent::Error(e) => self.show_error(&e),
            UiEvent::Info(t) => match t.strip_prefix('\u{1}') {
                Some(done) => {
                    self.rebuild_transcript();
                    self.reset_program_status();
                    self.show_line("accent", done);
                }
                None => self.show_line("dim", &t),
            },
            UiEvent::Status(t) => self.show_status(&t),
            UiEvent::OpenResume => self.command_resume(tui),
            UiEvent::Login(step) => self.on_login_step(tui, step),
            UiEvent::ShutdownRequested => {
                self.shutdown_requested = true;
                if !self.session.is_streaming() {
                    self.quit = Some(0);
                }
            }
            UiEvent::TreeChoice { id, choice } => self.on_tree_choice(tui, id, choice),
            UiEvent::Rebuilt(t) => {
                self.rebuild_transcript();
                if !t.starts_with("Navigated") {
                    self.reset_program_status();
                }
                self.show_status(&t);
            }
            UiEvent::BashDone { id, result } => {
                if let Some((command, exclude, slot, _)) = self.bash_rows.remove(&id) {
                    match result {
                        Ok(r) => {
                            let row = self.live.bash_row(&command, exclude, Some(&r), "");
                            let mut s = slot.borrow_mut();
                            s.clear();
                            s.add_child(row);
                        }
                        Err(e) => self.show_error(&format!("Bash command failed: {e}")),
                    }
                }
                self.dirty = true;
            }
        }
    }

    fn on_session_event(&mut self, ev: SessionEvent) {
        self.dirty = true;
        if let SessionEvent::BashExecutionUpdate { id: Some(tag), delta } = &ev
            && let Some(id) = tag.strip_prefix("ui-").and_then(|n| n.parse::<u64>().ok())
        {
            self.bash_output(id, delta);
            return;
        }
        if !matches!(
            ev,
            SessionEvent::Agent(_)
                | SessionEvent::NestedToolExecution { .. }
                | SessionEvent::QueueUpdate { .. }
                | SessionEvent::BashExecutionUpdate { .. }
        ) {
            // Extensions' components see the session as it is now.
            crate::extensions::node::session_changed();
        }
        let theme = self.theme.clone();
        let chat = self.chat.clone();
        self.live.on_event(&ev, &theme, &chat);
        let session = &self.session;
        self.program_status.handle_event(&ev, || session.session_name());
        match &ev {
            SessionEvent::AgentSettled { .. } if self.shutdown_requested => self.quit = Some(0),
            SessionEvent::EntryAppended { entry } => self.on_cache_warm_entry(entry),
            SessionEvent::Agent(pi_agent_core::AgentEvent::MessageEnd {
                message: pi_agent_core::AgentMessage::Assistant(a),
            }) => self.on_assistant_end(a),
            _ => {}
        }
        if let SessionEvent::QueueUpdate { .. } = &ev {
            self.update_pending();
        }
        if let SessionEvent::Agent(pi_agent_core::AgentEvent::MessageStart { .. }) = &ev {
            self.update_pending();
        }
    }

    /// Live output of a running user `!cmd`: its row drawn again with the output so far.
    fn bash_output(&mut self, id: u64, delta: &str) {
        let Some((command, exclude, slot, output)) = self.bash_rows.get_mut(&id) else { return };
        output.push_str(delta);
        let row = self.live.bash_row(command, *exclude, None, output);
        let mut s = slot.borrow_mut();
        s.clear();
        s.add_child(row);
    }

    pub(crate) fn shutdown(&mut self) {
        self.live.working = None;
    }

    /// pi's "To resume this session:" hint after quitting.
    pub(crate) fn resume_hint(&self) -> Option<String> {
        let file = self.session.session_file()?;
        if !file.exists() {
            return None;
        }
        Some(format!("\x1b[2mTo resume this session:\x1b[22m\npi --session {}", self.session.session_id()))
    }
}

/// Renders a component tree once (tests of the layout use it).
#[allow(dead_code)]
pub(crate) fn render_once(c: &mut dyn Component, width: usize) -> Vec<String> {
    c.render(width).to_vec()
}
