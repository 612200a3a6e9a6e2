//! The `/mcp` manager view (pi's `extensions/mcp/ui.ts`, `McpManagerView`): a frame with a title,
//! menus rebuilt on every render (so states update while servers connect), a status screen, and
//! the sign-in screen that shows the authorization URL and accepts a pasted redirect URL.
//!
//! The view is a [`Component`] shown with [`crate::ui::UiHost::custom`]; [`ManagerUi`] drives it
//! from async code.

use std::sync::{Arc, Mutex};

use pi_tui::ansi::{truncate_to_width_with, visible_width};
use pi_tui::components::{Input, SelectItem, SelectList, SelectListTheme, Spacer, Text};
use pi_tui::keys::matches_key;
use pi_tui::{Component, Theme};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// pi's `MAX_VISIBLE_ITEMS`.
const MAX_VISIBLE_ITEMS: usize = 12;

/// One menu (pi's `ManagerMenu`).
#[derive(Clone, Debug, Default)]
pub struct Menu {
    /// The title.
    pub title: String,
    /// Muted lines under the title.
    pub details: Option<String>,
    /// Error lines.
    pub error: Option<String>,
    /// `(value, label, description)`.
    pub items: Vec<(String, String, Option<String>)>,
    /// The value selected first.
    pub selected: Option<String>,
    /// Shown when there are no items.
    pub empty: Option<String>,
    /// The Enter hint.
    pub confirm_label: String,
    /// The Escape hint.
    pub cancel_label: String,
}

/// Builds a menu at render time.
pub type MenuBuilder = Arc<dyn Fn() -> Menu + Send + Sync>;

enum Screen {
    Loading,
    Menu { build: MenuBuilder, selected: Option<String>, reply: Option<oneshot::Sender<Option<String>>> },
    Status { title: String, message: String, cancel: Option<CancellationToken> },
    Redirect { title: String, url: String, reply: Option<oneshot::Sender<Option<String>>> },
}

type Shared = Arc<Mutex<Screen>>;

fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, Screen> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// The component.
pub struct ManagerView {
    shared: Shared,
    theme: Theme,
    input: Input,
    showing_redirect: bool,
}

fn border(theme: &Theme, width: usize) -> String {
    theme.fg("accent", &"─".repeat(width))
}

fn select_theme(theme: &Theme) -> SelectListTheme {
    let (a, b, c, d) = (theme.clone(), theme.clone(), theme.clone(), theme.clone());
    SelectListTheme {
        selected_text: std::rc::Rc::new(move |s: &str| a.fg("accent", s)),
        description: std::rc::Rc::new(move |s: &str| b.fg("muted", s)),
        scroll_info: std::rc::Rc::new(move |s: &str| c.fg("dim", s)),
        no_match: std::rc::Rc::new(move |s: &str| d.fg("warning", s)),
    }
}

impl ManagerView {
    fn frame(&self, width: usize, title: &str, body: Vec<String>, footer: Option<&str>) -> Vec<String> {
        let mut lines = vec![border(&self.theme, width)];
        lines.extend(
            Text::new(self.theme.fg("accent", &pi_tui::theme::bold(title)), 1, 0).render(width).iter().cloned(),
        );
        lines.extend(body);
        if let Some(footer) = footer {
            lines.extend(Spacer::new(1).render(width).iter().cloned());
            lines.extend(Text::new(self.theme.fg("dim", footer), 1, 0).render(width).iter().cloned());
        }
        lines.push(border(&self.theme, width));
        lines
    }

    fn text(&self, token: &str, text: &str, width: usize, pad_y: usize) -> Vec<String> {
        Text::new(self.theme.fg(token, text), 1, pad_y).render(width).to_vec()
    }

    fn render_menu(&self, width: usize, menu: &Menu, selected: Option<&str>) -> Vec<String> {
        let mut body = Vec::new();
        if let Some(d) = &menu.details {
            body.extend(self.text("muted", d, width, 0));
        }
        if let Some(e) = &menu.error {
            body.extend(self.text("error", e, width, 0));
        }
        body.extend(Spacer::new(1).render(width).iter().cloned());
        if menu.items.is_empty() {
            body.extend(self.text("muted", menu.empty.as_deref().unwrap_or("Nothing to show."), width, 0));
            let footer = format!("escape/ctrl+c {}", menu.cancel_label);
            return self.frame(width, &menu.title, body, Some(&footer));
        }
        let items: Vec<SelectItem> =
            menu.items.iter().map(|(v, l, d)| SelectItem::new(v.clone(), l.clone(), d.as_deref())).collect();
        let mut list = SelectList::new(items, menu.items.len().min(MAX_VISIBLE_ITEMS), select_theme(&self.theme));
        if let Some(i) = menu.items.iter().position(|(v, _, _)| Some(v.as_str()) == selected) {
            list.set_selected_index(i);
        }
        body.extend(list.render(width).iter().cloned());
        let footer = format!("enter {} • escape/ctrl+c {}", menu.confirm_label, menu.cancel_label);
        self.frame(width, &menu.title, body, Some(&footer))
    }
}

/// The value selected in `menu`: the remembered one when still offered, else the menu's, else the first.
fn current(menu: &Menu, selected: Option<&str>) -> Option<String> {
    let offered = |v: &str| menu.items.iter().any(|(value, _, _)| value == v);
    selected
        .filter(|s| offered(s))
        .or(menu.selected.as_deref().filter(|s| offered(s)))
        .or(menu.items.first().map(|(v, _, _)| v.as_str()))
        .map(str::to_owned)
}

impl Component for ManagerView {
    fn render(&mut self, width: usize) -> pi_tui::component::Lines {
        let lines = {
            let mut screen = lock(&self.shared);
            match &mut *screen {
                Screen::Loading => {
                    let body = self.text("muted", "Loading…", width, 1);
                    self.frame(width, "MCP servers", body, None)
                }
                Screen::Menu { build, selected, .. } => {
                    let menu = build();
                    *selected = current(&menu, selected.as_deref());
                    self.render_menu(width, &menu, selected.as_deref())
                }
                Screen::Status { title, message, cancel } => {
                    let mut body = Spacer::new(1).render(width).to_vec();
                    body.extend(self.text("muted", message, width, 0));
                    let footer = cancel.as_ref().map(|_| "escape/ctrl+c cancel");
                    self.frame(width, title, body, footer)
                }
                Screen::Redirect { title, url, .. } => {
                    let mut body = Spacer::new(1).render(width).to_vec();
                    let visit = "Approve access in your browser. If it did not open, visit:";
                    body.extend(self.text("muted", visit, width, 0));
                    body.extend(Text::new(self.theme.fg("accent", url), 1, 0).render(width).iter().cloned());
                    body.extend(Spacer::new(1).render(width).iter().cloned());
                    let paste = "If the browser runs on another machine, paste the URL it was redirected to:";
                    body.extend(self.text("muted", paste, width, 0));
                    body.extend(self.input.render(width).iter().cloned());
                    self.frame(width, title, body, Some("enter submit • escape/ctrl+c cancel"))
                }
            }
        };
        let lines: Vec<String> = lines
            .into_iter()
            .map(|l| if visible_width(&l) > width { truncate_to_width_with(&l, width, "", false) } else { l })
            .collect();
        lines.into()
    }

    fn handle_input(&mut self, data: &str) {
        let cancel = matches_key(data, "escape") || matches_key(data, "ctrl+c");
        let confirm = matches_key(data, "enter");
        let mut screen = lock(&self.shared);
        match &mut *screen {
            Screen::Loading => {}
            Screen::Menu { build, selected, reply } => {
                let menu = build();
                let current = current(&menu, selected.as_deref());
                if cancel || (confirm && current.is_some()) {
                    if let Some(tx) = reply.take() {
                        let _ = tx.send(if cancel { None } else { current });
                    }
                    return;
                }
                let n = menu.items.len();
                let at = menu.items.iter().position(|(v, _, _)| Some(v) == current.as_ref()).unwrap_or(0);
                let next = if matches_key(data, "up") && n > 0 {
                    Some((at + n - 1) % n)
                } else if matches_key(data, "down") && n > 0 {
                    Some((at + 1) % n)
                } else {
                    None
                };
                if let Some(i) = next {
                    *selected = menu.items.get(i).map(|(v, _, _)| v.clone());
                }
            }
            Screen::Status { cancel: token, .. } => {
                if cancel && let Some(t) = token {
                    t.cancel();
                }
            }
            Screen::Redirect { reply, .. } => {
                if !self.showing_redirect {
                    self.showing_redirect = true;
                    self.input.set_value("");
                }
                if confirm {
                    let value = self.input.value().trim().to_owned();
                    if !value.is_empty()
                        && let Some(tx) = reply.take()
                    {
                        let _ = tx.send(Some(value));
                    }
                } else if cancel {
                    if let Some(tx) = reply.take() {
                        let _ = tx.send(None);
                    }
                } else {
                    self.input.handle_input(data);
                }
            }
        }
    }

    fn set_focused(&mut self, focused: bool) {
        self.input.set_focused(focused);
    }
}

/// Drives a [`ManagerView`] from async code (pi's `McpManagerView` methods).
#[derive(Clone)]
pub struct ManagerUi {
    shared: Shared,
    ui: Arc<dyn crate::ui::UiHost>,
}

impl ManagerUi {
    /// A driver and the factory of its view, for [`crate::ui::UiHost::custom`].
    pub fn new(ui: Arc<dyn crate::ui::UiHost>) -> (Self, impl FnOnce(&Theme) -> ManagerView + Send) {
        let shared: Shared = Arc::new(Mutex::new(Screen::Loading));
        let view_shared = shared.clone();
        let factory = move |theme: &Theme| ManagerView {
            shared: view_shared,
            theme: theme.clone(),
            input: Input::default(),
            showing_redirect: false,
        };
        (ManagerUi { shared, ui }, factory)
    }

    /// Asks the host to draw again (a status update it shows nowhere).
    pub fn refresh(&self) {
        self.ui.set_status("mcp-manager", None);
    }

    /// Shows `build`'s menu until an item is chosen (`Some(value)`) or it is closed (`None`).
    pub async fn menu(&self, build: MenuBuilder) -> Option<String> {
        let (tx, rx) = oneshot::channel();
        *lock(&self.shared) = Screen::Menu { build, selected: None, reply: Some(tx) };
        self.refresh();
        rx.await.ok().flatten()
    }

    /// Shows a message; with `cancel`, Escape cancels it.
    pub fn status(&self, title: &str, message: &str, cancel: Option<CancellationToken>) {
        *lock(&self.shared) = Screen::Status { title: title.to_owned(), message: message.to_owned(), cancel };
        self.refresh();
    }

    /// The sign-in screen: the pasted redirect URL, or `None` when cancelled (or `cancel` fires).
    pub async fn redirect_url(&self, title: &str, url: &str, cancel: CancellationToken) -> Option<String> {
        let (tx, rx) = oneshot::channel();
        *lock(&self.shared) = Screen::Redirect { title: title.to_owned(), url: url.to_owned(), reply: Some(tx) };
        self.refresh();
        tokio::select! {
            r = rx => r.ok().flatten(),
            _ = cancel.cancelled() => None,
        }
    }
}
