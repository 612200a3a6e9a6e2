//! The UI seam for the interactive mode: [`TuiHost`] implements [`UiHost`] by sending requests to
//! the UI task (which owns the components) and awaiting its answers. Extensions call it from the
//! `Send` world; nothing here touches a component.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pi_tui::Theme;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::oneshot;

use super::app::UiEvent;
use crate::ui::{
    AutocompleteWrapper, ComponentFactory, CustomFactory, CustomOptions, CustomResult, DialogOptions,
    EditorComponentFactory, NotifyKind, OverlayOp, TerminalInputListener, ThemeInfo, UiHost, WidgetContent,
    WidgetPlacement,
};

/// A request to the UI task.
pub(crate) enum UiRequest {
    /// A selector (`None` reply: dismissed).
    Select { title: String, options: Vec<String>, reply: oneshot::Sender<Option<String>> },
    /// Yes or no.
    Confirm { title: String, message: String, reply: oneshot::Sender<bool> },
    /// One line of text.
    Input { title: String, placeholder: Option<String>, prefill: String, reply: oneshot::Sender<Option<String>> },
    /// Closes the open dialog (a timeout or a cancel token fired).
    CloseDialog,
    /// A notification.
    Notify { message: String, kind: NotifyKind },
    /// A footer status text.
    Status { key: String, text: Option<String> },
    /// A widget above or below the editor.
    Widget { key: String, content: Option<WidgetContent>, placement: WidgetPlacement },
    /// Replaces the footer.
    Footer(Option<ComponentFactory>),
    /// Replaces the header.
    Header(Option<ComponentFactory>),
    /// The terminal title.
    Title(String),
    /// The editor's text.
    SetEditorText(String),
    /// Pasted text.
    Paste(String),
    /// A focused custom component.
    Custom { factory: CustomFactory, opts: CustomOptions, reply: oneshot::Sender<Option<CustomResult>> },
    /// A custom component finished (its token).
    CloseCustom(u64),
    /// A component of an extension changed: draw a frame.
    Redraw,
    /// An extension failed (pi's `showExtensionError`).
    ExtensionError(crate::extensions::ExtensionError),
    /// Tool output expansion.
    ToolsExpanded(bool),
    /// The working message.
    WorkingMessage(Option<String>),
    /// An overlay shown without waiting (`tui.showOverlay`), named `key`.
    ShowOverlay { key: String, factory: ComponentFactory, options: Option<serde_json::Value> },
    /// An overlay handle's call.
    Overlay { key: String, op: OverlayOp },
    /// The `visible` option of the overlay shown next under `key`.
    OverlayVisible { key: String, visible: Option<crate::ui::OverlayVisible> },
    /// `ctx.ui.setTheme(name)` of a known theme: switch to it and save the setting.
    SetTheme(String),
    /// An extension's editor (`None`: the built-in one).
    EditorComponent(Option<EditorComponentFactory>),
    /// A raw input listener added or removed.
    TerminalInput { key: String, listener: Option<TerminalInputListener> },
    /// A completion provider wrapper.
    Autocomplete(AutocompleteWrapper),
}

/// The interactive mode's [`UiHost`].
pub(crate) struct TuiHost {
    tx: UnboundedSender<UiEvent>,
    editor_text: Arc<Mutex<String>>,
    theme: Theme,
    expanded: Mutex<bool>,
    /// Every status set, in the order first set (for extension footers).
    statuses: Mutex<Vec<(String, String)>>,
    provider_count: AtomicUsize,
    /// Where `getTheme` / `getAllThemes` look and the keybindings `custom()` factories get.
    sources: Mutex<Option<UiSources>>,
    /// The theme names `set_theme` accepts.
    theme_names: Arc<Mutex<Vec<String>>>,
    /// The themes extensions provided (`resources_discover`, packages), shared with the app.
    extension_themes: Arc<Mutex<Vec<crate::sdk::ExtensionTheme>>>,
}

/// What the interactive mode tells its [`TuiHost`] for `getTheme`, `getAllThemes` and the
/// keybindings of `custom()` factories.
pub(crate) struct UiSources {
    /// Each action id with its keys.
    pub(crate) keys: Vec<(String, Vec<String>)>,
    /// The agent dir (`themes/`).
    pub(crate) agent_dir: std::path::PathBuf,
    /// The project (`.pi/themes/`).
    pub(crate) cwd: String,
    /// The colour mode themes are loaded in.
    pub(crate) mode: pi_tui::ColorMode,
}

impl UiSources {
    /// The file of a custom theme named `name`: the themes folders' first, then the first theme
    /// of that name an extension provided (pi's custom themes, then its registered themes).
    fn theme_path(&self, name: &str, extension_themes: &[crate::sdk::ExtensionTheme]) -> Option<std::path::PathBuf> {
        [self.agent_dir.join("themes"), std::path::Path::new(&self.cwd).join(".pi/themes")]
            .into_iter()
            .map(|dir| dir.join(format!("{name}.json")))
            .find(|p| p.is_file())
            .or_else(|| extension_themes.iter().find(|t| t.name == name).map(|t| t.path.clone()))
    }
}

impl TuiHost {
    /// Sets where themes are looked up and the keybindings in force.
    pub(crate) fn set_sources(&self, sources: UiSources) {
        *self.sources.lock().unwrap_or_else(|e| e.into_inner()) = Some(sources);
    }

    /// Shares the themes extensions provided with the app (it refreshes them after discovery).
    pub(crate) fn with_extension_themes(mut self, themes: Arc<Mutex<Vec<crate::sdk::ExtensionTheme>>>) -> Self {
        self.extension_themes = themes;
        self
    }

    /// Shares the list of theme names `set_theme` accepts with the app.
    pub(crate) fn with_theme_names(mut self, names: Arc<Mutex<Vec<String>>>) -> Self {
        self.theme_names = names;
        self
    }

    pub(crate) fn new(tx: UnboundedSender<UiEvent>, editor_text: Arc<Mutex<String>>, theme: Theme) -> Self {
        TuiHost {
            tx,
            editor_text,
            theme,
            expanded: Mutex::new(false),
            statuses: Mutex::new(Vec::new()),
            provider_count: AtomicUsize::new(0),
            sources: Mutex::new(None),
            theme_names: Default::default(),
            extension_themes: Default::default(),
        }
    }

    /// Sets what `footerData.getAvailableProviderCount()` answers.
    pub(crate) fn set_provider_count(&self, count: usize) {
        self.provider_count.store(count, Ordering::Relaxed);
    }

    fn send(&self, req: UiRequest) {
        // The UI task is gone only while the process exits.
        let _ = self.tx.send(UiEvent::Ui(req));
    }

    /// Waits for the reply, or the dialog's timeout / cancel token (then closes the dialog).
    async fn wait<T>(&self, rx: oneshot::Receiver<T>, opts: &DialogOptions, dismissed: T) -> T {
        let cancel = opts.cancel.clone().unwrap_or_default();
        let timeout = opts.timeout;
        tokio::select! {
            r = rx => r.unwrap_or(dismissed),
            _ = cancel.cancelled(), if opts.cancel.is_some() => {
                self.send(UiRequest::CloseDialog);
                dismissed
            }
            _ = async { match timeout { Some(t) => tokio::time::sleep(t).await, None => std::future::pending().await } } => {
                self.send(UiRequest::CloseDialog);
                dismissed
            }
        }
    }
}

#[async_trait]
impl UiHost for TuiHost {
    fn has_ui(&self) -> bool {
        true
    }

    async fn select(&self, title: &str, options: &[String], opts: DialogOptions) -> Option<String> {
        let (reply, rx) = oneshot::channel();
        self.send(UiRequest::Select { title: title.to_owned(), options: options.to_vec(), reply });
        self.wait(rx, &opts, None).await
    }

    async fn confirm(&self, title: &str, message: &str, opts: DialogOptions) -> bool {
        let (reply, rx) = oneshot::channel();
        self.send(UiRequest::Confirm { title: title.to_owned(), message: message.to_owned(), reply });
        self.wait(rx, &opts, false).await
    }

    async fn input(&self, title: &str, placeholder: Option<&str>, opts: DialogOptions) -> Option<String> {
        let (reply, rx) = oneshot::channel();
        let placeholder = placeholder.map(str::to_owned);
        self.send(UiRequest::Input { title: title.to_owned(), placeholder, prefill: String::new(), reply });
        self.wait(rx, &opts, None).await
    }

    async fn editor(&self, title: &str, prefill: Option<&str>) -> Option<String> {
        let (reply, rx) = oneshot::channel();
        let prefill = prefill.unwrap_or("").to_owned();
        self.send(UiRequest::Input { title: title.to_owned(), placeholder: None, prefill, reply });
        rx.await.unwrap_or(None)
    }

    fn notify(&self, message: &str, kind: NotifyKind) {
        self.send(UiRequest::Notify { message: message.to_owned(), kind });
    }

    fn set_status(&self, key: &str, text: Option<&str>) {
        {
            let mut statuses = self.statuses.lock().unwrap_or_else(|e| e.into_inner());
            let at = statuses.iter().position(|(k, _)| k == key);
            match (at, text) {
                (Some(i), Some(t)) => statuses[i].1 = t.to_owned(),
                (None, Some(t)) => statuses.push((key.to_owned(), t.to_owned())),
                (Some(i), None) => {
                    statuses.remove(i);
                }
                (None, None) => {}
            }
        }
        self.send(UiRequest::Status { key: key.to_owned(), text: text.map(str::to_owned) });
    }

    fn set_working_message(&self, message: Option<&str>) {
        self.send(UiRequest::WorkingMessage(message.map(str::to_owned)));
    }

    fn set_widget(&self, key: &str, content: Option<WidgetContent>, placement: WidgetPlacement) {
        self.send(UiRequest::Widget { key: key.to_owned(), content, placement });
    }

    fn set_footer(&self, factory: Option<ComponentFactory>) {
        self.send(UiRequest::Footer(factory));
    }

    fn set_header(&self, factory: Option<ComponentFactory>) {
        self.send(UiRequest::Header(factory));
    }

    fn set_title(&self, title: &str) {
        self.send(UiRequest::Title(title.to_owned()));
    }

    fn request_render(&self) {
        self.send(UiRequest::Redraw);
    }

    async fn custom(&self, factory: CustomFactory, opts: CustomOptions) -> Option<CustomResult> {
        let (reply, rx) = oneshot::channel();
        self.send(UiRequest::Custom { factory, opts, reply });
        rx.await.unwrap_or(None)
    }

    fn paste_to_editor(&self, text: &str) {
        self.send(UiRequest::Paste(text.to_owned()));
    }

    fn set_editor_text(&self, text: &str) {
        *self.editor_text.lock().unwrap_or_else(|e| e.into_inner()) = text.to_owned();
        self.send(UiRequest::SetEditorText(text.to_owned()));
    }

    fn get_editor_text(&self) -> String {
        self.editor_text.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn get_all_themes(&self) -> Vec<ThemeInfo> {
        let sources = self.sources.lock().unwrap_or_else(|e| e.into_inner());
        let Some(src) = sources.as_ref() else {
            return vec![ThemeInfo { name: "dark".into(), path: None }, ThemeInfo { name: "light".into(), path: None }];
        };
        // The app keeps the names `/settings` offers (built-in, custom, extensions' themes).
        let extension_themes = self.extension_themes.lock().unwrap_or_else(|e| e.into_inner()).clone();
        self.theme_names
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .into_iter()
            .map(|name| {
                let path = src.theme_path(&name, &extension_themes).map(|p| p.display().to_string());
                ThemeInfo { name, path }
            })
            .collect()
    }

    fn get_theme(&self, name: &str) -> Option<Theme> {
        let sources = self.sources.lock().unwrap_or_else(|e| e.into_inner());
        let src = sources.as_ref()?;
        if name == "system" {
            return Some(super::theme_controller::system_theme(src.mode));
        }
        if let Ok(theme) = Theme::builtin(name, src.mode) {
            return Some(theme);
        }
        let extension_themes = self.extension_themes.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let text = std::fs::read_to_string(src.theme_path(name, &extension_themes)?).ok()?;
        Theme::from_json(&text, src.mode).ok()
    }

    fn keybindings(&self) -> Vec<(String, Vec<String>)> {
        self.sources.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|s| s.keys.clone()).unwrap_or_default()
    }

    fn theme(&self) -> Option<Theme> {
        Some(self.theme.clone())
    }

    fn set_theme(&self, name: &str) -> Result<(), String> {
        let known = self.theme_names.lock().unwrap_or_else(|e| e.into_inner()).iter().any(|n| n == name);
        if !known {
            return Err(format!("Theme not found: {name}"));
        }
        self.send(UiRequest::SetTheme(name.to_owned()));
        Ok(())
    }

    fn get_tools_expanded(&self) -> bool {
        *self.expanded.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_tools_expanded(&self, expanded: bool) {
        *self.expanded.lock().unwrap_or_else(|e| e.into_inner()) = expanded;
        self.send(UiRequest::ToolsExpanded(expanded));
    }

    fn show_overlay(&self, key: &str, factory: ComponentFactory, options: Option<serde_json::Value>) {
        self.send(UiRequest::ShowOverlay { key: key.to_owned(), factory, options });
    }

    fn set_overlay_visible(&self, key: &str, visible: Option<crate::ui::OverlayVisible>) {
        self.send(UiRequest::OverlayVisible { key: key.to_owned(), visible });
    }

    fn overlay(&self, key: &str, op: OverlayOp) {
        self.send(UiRequest::Overlay { key: key.to_owned(), op });
    }

    fn set_editor_component(&self, factory: Option<EditorComponentFactory>) {
        self.send(UiRequest::EditorComponent(factory));
    }

    fn set_terminal_input_listener(&self, key: &str, listener: Option<TerminalInputListener>) {
        self.send(UiRequest::TerminalInput { key: key.to_owned(), listener });
    }

    fn add_autocomplete_provider(&self, wrapper: AutocompleteWrapper) {
        self.send(UiRequest::Autocomplete(wrapper));
    }

    fn extension_statuses(&self) -> Vec<(String, String)> {
        self.statuses.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn available_provider_count(&self) -> usize {
        self.provider_count.load(Ordering::Relaxed)
    }
}
