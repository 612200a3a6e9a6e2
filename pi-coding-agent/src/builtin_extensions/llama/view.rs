//! `/llama`'s screen (pi's `LlamaView` of `ui.js`): one custom component whose content the
//! command's flow replaces (the model list, selectors, the Hugging Face search, status and
//! progress). The flow lives in the `Send` world and talks to the component through [`LlamaUi`];
//! the component (on the UI thread) draws what the shared state holds and answers through it.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex, MutexGuard};

use pi_tui::components::{SelectListLayout, SelectListTheme};
use pi_tui::keys::Keybindings;
use pi_tui::{Component, Container, Lines, SelectItem, SelectList, Spacer, Text, Theme, shared};
use tokio::sync::oneshot;

use super::client::Progress;
use super::router::RouterModel;
use super::search::{SearchState, SearchView};
use crate::ui::{CustomDone, UiHost};

/// The value of the "Download model…" row.
pub const DOWNLOAD_VALUE: &str = "\0download";

/// What the user chose in the model list.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelsAction {
    /// Escape.
    Close,
    /// "Download model…".
    Download,
    /// A model.
    Model(RouterModel),
}

/// The progress screen's state (pi's `ProgressState`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProgressState {
    /// `Loading model` / `Downloading model`.
    pub title: String,
    /// The model.
    pub model: String,
    /// The latest progress.
    pub progress: Progress,
}

pub(crate) enum Screen {
    Loading,
    List {
        title: String,
        server_url: Option<String>,
        items: Vec<SelectItem>,
        models_layout: bool,
        hints: (&'static str, &'static str),
    },
    Search,
    Status {
        title: String,
        message: String,
    },
    Progress(ProgressState),
}

/// What the flow and the component share.
pub(crate) struct Shared {
    pub(crate) screen: Screen,
    pub(crate) generation: u64,
    pub(crate) reply: Option<oneshot::Sender<Option<String>>>,
    pub(crate) stop: Option<oneshot::Sender<()>>,
    pub(crate) search: SearchState,
    done: Option<Arc<CustomDone>>,
    finished: bool,
}

/// The flow's handle on the screen.
#[derive(Clone)]
pub struct LlamaUi {
    pub(crate) shared: Arc<Mutex<Shared>>,
    pub(crate) host: Arc<dyn UiHost>,
}

pub(crate) fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

fn context_label(model: &RouterModel) -> Option<String> {
    let label = |c: u64| if c >= 1000 { format!("{}k", (c as f64 / 1000.0).round() as u64) } else { c.to_string() };
    model.n_ctx().or_else(|| model.n_ctx_train()).or_else(|| model.configured_context()).map(label)
}

/// pi's `modelDescription`: `loaded · 8k context`, `downloading`, or nothing.
pub fn model_description(model: &RouterModel) -> String {
    let mut details = Vec::new();
    if model.is_loaded() {
        details.push("loaded".to_owned());
        if let Some(context) = context_label(model) {
            details.push(format!("{context} context"));
        }
    } else if model.status != "unloaded" {
        details.push(model.status.clone());
    }
    details.join(" · ")
}

impl LlamaUi {
    /// A screen showing "Loading…", drawn through `host`.
    pub fn new(host: Arc<dyn UiHost>, search: SearchState) -> Self {
        let shared = Shared {
            screen: Screen::Loading,
            generation: 0,
            reply: None,
            stop: None,
            search,
            done: None,
            finished: false,
        };
        LlamaUi { shared: Arc::new(Mutex::new(shared)), host }
    }

    fn set_screen(&self, screen: Screen, reply: Option<oneshot::Sender<Option<String>>>) {
        {
            let mut s = lock(&self.shared);
            s.screen = screen;
            s.generation += 1;
            s.reply = reply;
            s.stop = None;
        }
        self.host.request_render();
    }

    async fn ask(&self, screen: Screen) -> Option<String> {
        let (tx, rx) = oneshot::channel();
        self.set_screen(screen, Some(tx));
        rx.await.ok().flatten()
    }

    /// The model list (pi's `showModels`): loaded first, then by id, and "Download model…".
    pub async fn show_models(&self, server_url: &str, models: &[RouterModel]) -> ModelsAction {
        let mut sorted: Vec<&RouterModel> = models.iter().collect();
        sorted.sort_by(|a, b| (b.status == "loaded").cmp(&(a.status == "loaded")).then_with(|| a.id.cmp(&b.id)));
        let mut items: Vec<SelectItem> =
            sorted.iter().map(|m| SelectItem::new(m.id.clone(), m.id.clone(), Some(&model_description(m)))).collect();
        items.push(SelectItem::new(DOWNLOAD_VALUE, "Download model…", Some("Hugging Face owner/repository[:quant]")));
        let screen = Screen::List {
            title: "llama.cpp models".into(),
            server_url: Some(server_url.to_owned()),
            items,
            models_layout: true,
            hints: ("load/unload/download", "close"),
        };
        match self.ask(screen).await {
            None => ModelsAction::Close,
            Some(v) if v == DOWNLOAD_VALUE => ModelsAction::Download,
            Some(id) => {
                sorted.into_iter().find(|m| m.id == id).cloned().map_or(ModelsAction::Close, ModelsAction::Model)
            }
        }
    }

    /// A selector (pi's `select`).
    pub async fn select(&self, title: &str, options: &[&str]) -> Option<String> {
        let items = options.iter().map(|o| SelectItem::new(*o, *o, None)).collect();
        let screen = Screen::List {
            title: title.to_owned(),
            server_url: None,
            items,
            models_layout: false,
            hints: ("select", "cancel"),
        };
        self.ask(screen).await
    }

    /// Yes or No (pi's `confirm`).
    pub async fn confirm(&self, title: &str, message: &str) -> bool {
        self.select(&format!("{title}\n{message}"), &["Yes", "No"]).await.as_deref() == Some("Yes")
    }

    /// "llama.cpp unavailable": whether the user chose Retry.
    pub async fn connection_error(&self, server_url: &str, message: &str) -> bool {
        let title = format!("llama.cpp unavailable\n{server_url}\n\n{message}");
        self.select(&title, &["Retry", "Close"]).await.as_deref() == Some("Retry")
    }

    /// The Hugging Face search (pi's `searchModels`): the chosen `owner/repository[:quant]`.
    pub async fn search_models(&self) -> Option<String> {
        lock(&self.shared).search.reset();
        self.ask(Screen::Search).await
    }

    /// A title and a message (pi's `showStatus`).
    pub fn show_status(&self, title: &str, message: &str) {
        self.set_screen(Screen::Status { title: title.to_owned(), message: message.to_owned() }, None);
    }

    /// Shows the progress screen; the receiver fires when the user presses Escape.
    pub fn progress(&self, state: ProgressState) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        {
            let mut s = lock(&self.shared);
            s.screen = Screen::Progress(state);
            s.generation += 1;
            s.reply = None;
            s.stop = Some(tx);
        }
        self.host.request_render();
        rx
    }

    /// Updates the progress screen while it is shown (pi's `updateProgress`).
    pub fn update_progress(&self, state: &ProgressState) {
        {
            let mut s = lock(&self.shared);
            let Screen::Progress(current) = &mut s.screen else { return };
            *current = state.clone();
            s.generation += 1;
        }
        self.host.request_render();
    }

    /// Ends the custom component (pi's `done()`).
    pub fn finish(&self) {
        let done = {
            let mut s = lock(&self.shared);
            s.finished = true;
            s.reply = None;
            s.stop = None;
            s.done.take()
        };
        if let Some(done) = done {
            done.done(None);
        }
    }

    /// The component the host draws (built on the UI thread).
    pub fn component(&self, theme: &Theme, done: Arc<CustomDone>) -> LlamaView {
        let finished = {
            let mut s = lock(&self.shared);
            s.done = Some(done.clone());
            s.finished
        };
        if finished {
            done.done(None);
        }
        LlamaView::new(self.clone(), theme.clone())
    }
}

/// pi's `frame`: an accent border, the bold title, the body, a dim footer, a border.
pub(crate) fn frame(theme: &Theme, title: &str, body: Vec<pi_tui::ComponentRef>, footer: Option<&str>) -> Container {
    let mut container = Container::new();
    let border = |t: &Theme| shared(super::search::Border(t.clone()));
    container.add_child(border(theme));
    container.add_child(shared(Text::new(theme.fg("accent", &pi_tui::theme::bold(title)), 1, 0)));
    for child in body {
        container.add_child(child);
    }
    if let Some(footer) = footer {
        container.add_child(shared(Spacer::new(1)));
        container.add_child(shared(Text::new(theme.fg("dim", footer), 1, 0)));
    }
    container.add_child(border(theme));
    container
}

/// pi's `keyHint(action, description)`.
pub(crate) fn key_hint(theme: &Theme, keys: &Keybindings, action: &str, description: &str) -> String {
    format!("{}{}", theme.fg("dim", &keys.keys(action).join("/")), theme.fg("muted", &format!(" {description}")))
}

fn select_theme(theme: &Theme) -> SelectListTheme {
    let (a, m, d, w) = (theme.clone(), theme.clone(), theme.clone(), theme.clone());
    SelectListTheme {
        selected_text: Rc::new(move |t| a.fg("accent", t)),
        description: Rc::new(move |t| m.fg("muted", t)),
        scroll_info: Rc::new(move |t| d.fg("dim", t)),
        no_match: Rc::new(move |t| w.fg("warning", t)),
    }
}

type Chosen = Rc<RefCell<Option<Option<String>>>>;

/// The component.
pub struct LlamaView {
    ui: LlamaUi,
    theme: Theme,
    keys: Rc<Keybindings>,
    built: Option<u64>,
    content: Container,
    list: Option<Rc<RefCell<SelectList>>>,
    search: Option<Rc<RefCell<SearchView>>>,
    chosen: Chosen,
    focused: bool,
}

impl LlamaView {
    fn new(ui: LlamaUi, theme: Theme) -> Self {
        LlamaView {
            ui,
            theme,
            keys: Rc::new(Keybindings::default()),
            built: None,
            content: Container::new(),
            list: None,
            search: None,
            chosen: Rc::new(RefCell::new(None)),
            focused: false,
        }
    }

    fn rebuild(&mut self) {
        let generation = lock(&self.ui.shared).generation;
        if self.built == Some(generation) {
            return;
        }
        self.built = Some(generation);
        self.list = None;
        self.search = None;
        let theme = self.theme.clone();
        let s = lock(&self.ui.shared);
        self.content = match &s.screen {
            Screen::Loading => {
                frame(&theme, "llama.cpp models", vec![shared(Text::new(theme.fg("muted", "Loading…"), 1, 1))], None)
            }
            Screen::List { title, server_url, items, models_layout, hints } => {
                let mut list = SelectList::new(items.clone(), items.len().min(12), select_theme(&theme));
                if *models_layout {
                    list.set_layout(SelectListLayout {
                        min_primary_column_width: Some(36),
                        max_primary_column_width: Some(56),
                    });
                }
                let (on_select, on_cancel) = (self.chosen.clone(), self.chosen.clone());
                list.on_select = Some(Box::new(move |item| *on_select.borrow_mut() = Some(Some(item.value.clone()))));
                list.on_cancel = Some(Box::new(move || *on_cancel.borrow_mut() = Some(None)));
                let list = shared(list);
                self.list = Some(list.clone());
                let mut body: Vec<pi_tui::ComponentRef> = Vec::new();
                if let Some(url) = server_url {
                    body.push(shared(Text::new(theme.fg("dim", url), 1, 0)));
                }
                body.push(shared(Spacer::new(1)));
                body.push(list);
                let footer = format!(
                    "{} • {}",
                    key_hint(&theme, &self.keys, "tui.select.confirm", hints.0),
                    key_hint(&theme, &self.keys, "tui.select.cancel", hints.1)
                );
                frame(&theme, title, body, Some(&footer))
            }
            Screen::Search => {
                let view =
                    shared(SearchView::new(self.ui.clone(), theme.clone(), self.keys.clone(), self.chosen.clone()));
                self.search = Some(view.clone());
                let footer = format!(
                    "{} • {}",
                    key_hint(&theme, &self.keys, "tui.select.confirm", "select"),
                    key_hint(&theme, &self.keys, "tui.select.cancel", "back")
                );
                frame(&theme, "Download model", vec![shared(Spacer::new(1)), view], Some(&footer))
            }
            Screen::Status { title, message } => frame(
                &theme,
                title,
                vec![shared(Spacer::new(1)), shared(Text::new(theme.fg("muted", message), 1, 0))],
                None,
            ),
            Screen::Progress(state) => progress_frame(&theme, &self.keys, state),
        };
    }

    fn answer(&mut self) {
        let Some(chosen) = self.chosen.borrow_mut().take() else { return };
        let reply = lock(&self.ui.shared).reply.take();
        if let Some(reply) = reply {
            let _ = reply.send(chosen);
        }
    }
}

fn progress_frame(theme: &Theme, keys: &Keybindings, state: &ProgressState) -> Container {
    let mut body: Vec<pi_tui::ComponentRef> = vec![
        shared(Text::new(theme.fg("text", &state.model), 1, 0)),
        shared(Spacer::new(1)),
        shared(Text::new(theme.fg("muted", &state.progress.message), 1, 0)),
    ];
    if let Some(ratio) = state.progress.ratio {
        let filled = (ratio.clamp(0.0, 1.0) * 40.0).round() as usize;
        let bar = format!("{}{} {}%", "█".repeat(filled), "─".repeat(40 - filled), (ratio * 100.0).round() as i64);
        body.push(shared(Text::new(theme.fg("accent", &bar), 1, 0)));
    }
    if let Some(detail) = &state.progress.detail {
        body.push(shared(Text::new(theme.fg("dim", detail), 1, 0)));
    }
    frame(theme, &state.title, body, Some(&key_hint(theme, keys, "tui.select.cancel", "stop")))
}

impl Component for LlamaView {
    fn render(&mut self, width: usize) -> Lines {
        self.rebuild();
        let lines = self.content.render(width);
        lines
            .iter()
            .map(|l| {
                if pi_tui::ansi::visible_width(l) > width {
                    pi_tui::ansi::truncate_to_width_with(l, width, "", false)
                } else {
                    l.clone()
                }
            })
            .collect::<Vec<_>>()
            .into()
    }

    fn handle_input(&mut self, data: &str) {
        self.rebuild();
        let stop = {
            let mut s = lock(&self.ui.shared);
            if s.stop.is_some() && self.keys.matches(data, "tui.select.cancel") { s.stop.take() } else { None }
        };
        if let Some(stop) = stop {
            let _ = stop.send(());
            return;
        }
        if let Some(list) = &self.list {
            list.borrow_mut().handle_input(data);
        } else if let Some(search) = &self.search {
            search.borrow_mut().handle_input(data);
        }
        self.answer();
    }

    fn captures_viewport_input(&self) -> bool {
        self.search.is_some()
    }

    fn invalidate(&mut self) {
        self.content.invalidate();
    }

    fn set_focused(&mut self, focused: bool) {
        self.focused = focused;
        if let Some(search) = &self.search {
            search.borrow_mut().set_focused(focused);
        }
    }
}
