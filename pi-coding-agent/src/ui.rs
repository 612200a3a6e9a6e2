//! The UI seam (DESIGN decision 8): everything an extension or a command asks of a user goes
//! through one trait, [`UiHost`] (pi's `ExtensionUIContext`, `ctx.ui`).
//!
//! Three hosts implement it:
//! - the interactive mode draws it on pi-tui (`modes/interactive/`);
//! - the RPC mode carries the dialog and fire-and-forget methods as pi's `extension_ui_request` /
//!   `extension_ui_response` records (`docs/rpc-extension-ui.md` of the reference);
//! - print and json modes use [`NoUi`], which answers exactly as pi 1.6.0's `noOpUIContext`:
//!   dialogs resolve to "no answer" (`None` / `false`), setters do nothing, `get_editor_text` is
//!   empty and `set_theme` fails with "UI not available".
//!
//! Every method has that no-UI answer as its default, so a host overrides what it can show. The
//! trait lives below `extensions/` and `sdk/` (it is reached from
//! [`ExtensionContext::ui`](crate::extensions::ExtensionContext::ui)) and imports nothing above
//! it. Components cross into the UI thread as factories: pi-tui components are single-threaded,
//! so an extension (which lives in the `Send` world) hands over a `Send` closure that the UI
//! calls on its own thread to build the component.

use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use pi_tui::{ColorMode, Component, Theme};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Options of the dialog methods (pi's `ExtensionUIDialogOptions`).
#[derive(Clone, Debug, Default)]
pub struct DialogOptions {
    /// Dismisses the dialog when cancelled (pi's `signal`); the dialog then answers "no answer".
    pub cancel: Option<CancellationToken>,
    /// Dismisses the dialog after this long, with a live countdown (pi's `timeout`).
    pub timeout: Option<Duration>,
}

/// The kind of a notification (pi's `notify(message, type)`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NotifyKind {
    /// `"info"`, the default.
    #[default]
    Info,
    /// `"warning"`.
    Warning,
    /// `"error"`.
    Error,
}

impl NotifyKind {
    /// pi's wire name (`"info"`, `"warning"`, `"error"`).
    pub fn as_str(self) -> &'static str {
        match self {
            NotifyKind::Info => "info",
            NotifyKind::Warning => "warning",
            NotifyKind::Error => "error",
        }
    }
}

/// Where a widget is drawn (pi's `WidgetPlacement`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WidgetPlacement {
    /// `"aboveEditor"`, the default.
    #[default]
    AboveEditor,
    /// `"belowEditor"`.
    BelowEditor,
}

impl WidgetPlacement {
    /// pi's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            WidgetPlacement::AboveEditor => "aboveEditor",
            WidgetPlacement::BelowEditor => "belowEditor",
        }
    }
}

/// Builds a component on the UI thread, with the theme in force (pi's `(tui, theme) => Component`).
/// Called again when the theme changes or the UI is rebuilt.
pub type ComponentFactory = Arc<dyn Fn(&Theme) -> Box<dyn Component> + Send + Sync>;

/// The value a custom component finishes with (pi's `done(result)`); downcast by the caller.
pub type CustomResult = Box<dyn Any + Send>;

/// Finishes a [`UiHost::custom`] component: the first call wins, later calls do nothing.
pub struct CustomDone {
    tx: std::sync::Mutex<Option<oneshot::Sender<Option<CustomResult>>>>,
}

impl CustomDone {
    /// A completion handle and the receiver the host awaits.
    pub fn new() -> (Arc<CustomDone>, oneshot::Receiver<Option<CustomResult>>) {
        let (tx, rx) = oneshot::channel();
        (Arc::new(CustomDone { tx: std::sync::Mutex::new(Some(tx)) }), rx)
    }

    /// Finishes the component with `result` (`None`: dismissed without a value).
    pub fn done(&self, result: Option<CustomResult>) {
        let tx = self.tx.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(tx) = tx {
            let _ = tx.send(result);
        }
    }
}

impl fmt::Debug for CustomDone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CustomDone").finish_non_exhaustive()
    }
}

/// Builds a focused custom component that calls [`CustomDone::done`] when it finishes (pi's
/// `ctx.ui.custom(factory)`).
pub type CustomFactory = Box<dyn FnOnce(&Theme, Arc<CustomDone>) -> Box<dyn Component> + Send>;

/// Options of [`UiHost::custom`].
#[derive(Clone, Debug, Default)]
pub struct CustomOptions {
    /// Draw as an overlay over the screen instead of in place of the editor.
    pub overlay: bool,
    /// Where the overlay sits, as pi's `OverlayOptions` JSON (`width`, `minWidth`, `maxHeight`,
    /// `anchor`, `offsetX`, `offsetY`, `row`, `col`, `margin`, `nonCapturing`; sizes are numbers
    /// or `"N%"` strings); `None`: pi's defaults.
    pub overlay_options: Option<serde_json::Value>,
    /// The name [`UiHost::overlay`] controls the overlay by (pi's `onHandle`); `None`: none.
    pub handle_key: Option<String>,
    /// Report pi as blocked on the user (OSC 7501 program status) while the component waits for
    /// input (pi's `blocked` option): inline while shown, an overlay until it is done.
    pub blocked: Option<BlockedStatus>,
}

/// What a dialog waits for, as reported to terminals that support the Program Status Protocol
/// (OSC 7501): pi's `blocked` option of `custom()`, and its dialogs' own reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockedStatus {
    /// The kind of wait.
    pub kind: pi_tui::program_status::BlockedKind,
    /// A short text (the dialog's title).
    pub message: String,
}

impl BlockedStatus {
    /// A wait of `kind` titled `message`.
    pub fn new(kind: pi_tui::program_status::BlockedKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into() }
    }
}

/// An overlay's `visible` option (pi-tui's `OverlayOptions.visible`): asked every frame with the
/// terminal's columns and rows.
pub type OverlayVisible = Arc<dyn Fn(usize, usize) -> bool + Send + Sync>;

/// What an overlay handle asks of its overlay (pi-tui's `OverlayHandle`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverlayOp {
    /// Removes it for good (`hide`).
    Hide,
    /// Hides or shows it again (`setHidden`).
    SetHidden(bool),
    /// Gives it the focus and brings it to the front (`focus`).
    Focus,
    /// Hands the focus back (`unfocus`).
    Unfocus,
}

/// An extension's editor in place of the built-in one (pi's `setEditorComponent`), on the UI
/// thread: it sees each key first and passes on what the built-in editor should get (pi's
/// `super.handleInput`), and draws over the built-in editor's lines (`super.render`).
pub trait EditorComponent {
    /// A key, with the built-in editor's text; returns the keys passed on, in order.
    fn input(&mut self, data: &str, text: &str) -> Vec<String>;
    /// The lines at `width`, given the built-in editor's lines and text there.
    fn render(&mut self, width: usize, base: &pi_tui::Lines, text: &str) -> pi_tui::Lines;
    /// The theme changed.
    fn invalidate(&mut self) {}
    /// It got or lost the focus.
    fn set_focused(&mut self, _focused: bool) {}
}

/// Builds an [`EditorComponent`] on the UI thread with the theme in force.
pub type EditorComponentFactory = Arc<dyn Fn(&Theme) -> Box<dyn EditorComponent> + Send + Sync>;

/// A raw terminal input listener (pi's `onTerminalInput`): sees every input before anything else
/// and passes it, consumes it or replaces it. Called on the UI thread.
pub type TerminalInputListener = Arc<dyn Fn(&str) -> pi_tui::InputAction + Send + Sync>;

/// Wraps the editor's completion provider (pi's `addAutocompleteProvider(factory)`); called on the
/// UI thread with the provider in force.
pub type AutocompleteWrapper = Arc<
    dyn Fn(
            std::rc::Rc<dyn pi_tui::components::AutocompleteProvider>,
        ) -> std::rc::Rc<dyn pi_tui::components::AutocompleteProvider>
        + Send
        + Sync,
>;

/// What a widget shows (pi's `setWidget(key, string[] | factory)`).
#[derive(Clone)]
pub enum WidgetContent {
    /// Plain lines.
    Lines(Vec<String>),
    /// A component built on the UI thread.
    Component(ComponentFactory),
}

impl fmt::Debug for WidgetContent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WidgetContent::Lines(lines) => f.debug_tuple("Lines").field(lines).finish(),
            WidgetContent::Component(_) => f.write_str("Component(..)"),
        }
    }
}

/// Options of the working indicator (pi's `WorkingIndicatorOptions`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkingIndicator {
    /// Frames drawn in turn; one frame is static, none hides the indicator.
    pub frames: Vec<String>,
    /// Milliseconds per frame; `None` keeps the default.
    pub interval_ms: Option<u64>,
}

/// A theme the host knows (pi's `getAllThemes()` item).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThemeInfo {
    /// The theme's name.
    pub name: String,
    /// The file it was loaded from; `None` for a built-in theme.
    pub path: Option<String>,
}

/// The text of [`UiHost::set_theme`]'s error without a UI (pi's `noOpUIContext`).
pub const UI_NOT_AVAILABLE: &str = "UI not available";

/// What a user interface offers extensions and commands (pi's `ExtensionUIContext`).
///
/// The default of every method is pi's no-UI answer ([`NoUi`]); a host overrides what it shows.
#[async_trait]
pub trait UiHost: Send + Sync {
    /// Whether a user can see and answer (pi's `ctx.hasUI`): false for print/json modes.
    fn has_ui(&self) -> bool {
        false
    }

    /// Shows a selector; `None` when dismissed (pi's `select`).
    async fn select(&self, _title: &str, _options: &[String], _opts: DialogOptions) -> Option<String> {
        None
    }

    /// Asks yes or no; `false` when dismissed (pi's `confirm`).
    async fn confirm(&self, _title: &str, _message: &str, _opts: DialogOptions) -> bool {
        false
    }

    /// Asks for one line of text; `None` when dismissed (pi's `input`).
    async fn input(&self, _title: &str, _placeholder: Option<&str>, _opts: DialogOptions) -> Option<String> {
        None
    }

    /// Opens a multi-line editor; `None` when dismissed (pi's `editor`).
    async fn editor(&self, _title: &str, _prefill: Option<&str>) -> Option<String> {
        None
    }

    /// Shows a notification (pi's `notify`).
    fn notify(&self, _message: &str, _kind: NotifyKind) {}

    /// Sets (or with `None` clears) a keyed status text in the footer (pi's `setStatus`).
    fn set_status(&self, _key: &str, _text: Option<&str>) {}

    /// Sets the working message shown while streaming; `None` restores the default.
    fn set_working_message(&self, _message: Option<&str>) {}

    /// Shows or hides the working loader row.
    fn set_working_visible(&self, _visible: bool) {}

    /// Configures the working indicator; `None` restores the default spinner.
    fn set_working_indicator(&self, _indicator: Option<WorkingIndicator>) {}

    /// Sets the label of hidden thinking blocks; `None` restores the default.
    fn set_hidden_thinking_label(&self, _label: Option<&str>) {}

    /// Sets (or with `None` removes) a keyed widget above or below the editor (pi's `setWidget`).
    fn set_widget(&self, _key: &str, _content: Option<WidgetContent>, _placement: WidgetPlacement) {}

    /// Replaces the footer; `None` restores the built-in one (pi's `setFooter`).
    fn set_footer(&self, _factory: Option<ComponentFactory>) {}

    /// Replaces the startup header; `None` restores the built-in one (pi's `setHeader`).
    fn set_header(&self, _factory: Option<ComponentFactory>) {}

    /// Asks for a new frame: a component drawn by an extension changed (pi's
    /// `tui.requestRender()`).
    fn request_render(&self) {}

    /// Sets the terminal title (pi's `setTitle`).
    fn set_title(&self, _title: &str) {}

    /// Shows a focused custom component until it calls done; `None` without a UI (pi's `custom`).
    async fn custom(&self, _factory: CustomFactory, _opts: CustomOptions) -> Option<CustomResult> {
        None
    }

    /// Pastes text into the editor as a paste (pi's `pasteToEditor`).
    fn paste_to_editor(&self, _text: &str) {}

    /// Replaces the editor's text (pi's `setEditorText`).
    fn set_editor_text(&self, _text: &str) {}

    /// The editor's text; empty without a UI (pi's `getEditorText`).
    fn get_editor_text(&self) -> String {
        String::new()
    }

    /// The themes the host can switch to; empty without a UI (pi's `getAllThemes`).
    fn get_all_themes(&self) -> Vec<ThemeInfo> {
        Vec::new()
    }

    /// The theme in force (pi's `theme`): the built-in dark theme without a UI.
    fn theme(&self) -> Option<Theme> {
        Theme::dark(ColorMode::detect()).ok()
    }

    /// The theme named `name` (pi's `getTheme`): `None` when it cannot be loaded, and without a
    /// UI.
    fn get_theme(&self, _name: &str) -> Option<Theme> {
        None
    }

    /// The keybindings in force, each action id with its keys (pi's `KeybindingsManager` handed
    /// to `custom()` factories: pi-tui's and the application's actions, with the user's
    /// `keybindings.json`); empty without a UI.
    fn keybindings(&self) -> Vec<(String, Vec<String>)> {
        Vec::new()
    }

    /// Switches the theme by name; `Err(text)` on failure (pi's `setTheme`).
    fn set_theme(&self, _name: &str) -> Result<(), String> {
        Err(UI_NOT_AVAILABLE.to_string())
    }

    /// Whether tool output is expanded; `false` without a UI (pi's `getToolsExpanded`).
    fn get_tools_expanded(&self) -> bool {
        false
    }

    /// Expands or collapses tool output (pi's `setToolsExpanded`).
    fn set_tools_expanded(&self, _expanded: bool) {}

    /// Shows a component as an overlay without waiting for it (pi-tui's `tui.showOverlay`); `key`
    /// names it for [`UiHost::overlay`]. `options` as [`CustomOptions::overlay_options`].
    fn show_overlay(&self, _key: &str, _factory: ComponentFactory, _options: Option<serde_json::Value>) {}

    /// Sets the `visible` option of the overlay the next `show_overlay` or `custom` names `key`
    /// (`None`: always visible); without a UI nothing is drawn.
    fn set_overlay_visible(&self, _key: &str, _visible: Option<OverlayVisible>) {}

    /// Hides, shows, focuses or unfocuses the overlay named `key` (pi-tui's `OverlayHandle`).
    fn overlay(&self, _key: &str, _op: OverlayOp) {}

    /// Puts an extension's editor in place of the built-in one; `None` restores it (pi's
    /// `setEditorComponent`).
    fn set_editor_component(&self, _factory: Option<EditorComponentFactory>) {}

    /// Adds (or with `None` removes) the raw input listener named `key` (pi's `onTerminalInput`).
    fn set_terminal_input_listener(&self, _key: &str, _listener: Option<TerminalInputListener>) {}

    /// Wraps the editor's completion provider (pi's `addAutocompleteProvider`).
    fn add_autocomplete_provider(&self, _wrapper: AutocompleteWrapper) {}

    /// Every extension's footer status, in the order first set (pi's
    /// `footerData.getExtensionStatuses()`); empty without a UI.
    fn extension_statuses(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// How many providers have models (pi's `footerData.getAvailableProviderCount()`).
    fn available_provider_count(&self) -> usize {
        0
    }
}

/// The host of print and json modes, and of an unbound runner: pi's `noOpUIContext`.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoUi;

impl UiHost for NoUi {}

/// A shared [`NoUi`].
pub fn no_ui() -> Arc<dyn UiHost> {
    Arc::new(NoUi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn no_ui_answers_as_pi_no_op_ui_context() {
        let ui = NoUi;
        assert!(!ui.has_ui());
        assert_eq!(ui.select("t", &["a".into()], DialogOptions::default()).await, None);
        assert!(!ui.confirm("t", "m", DialogOptions::default()).await);
        assert_eq!(ui.input("t", None, DialogOptions::default()).await, None);
        assert_eq!(ui.editor("t", Some("x")).await, None);
        assert_eq!(ui.get_editor_text(), "");
        assert!(ui.get_all_themes().is_empty());
        assert_eq!(ui.set_theme("light"), Err("UI not available".to_string()));
        assert!(!ui.get_tools_expanded());
        let factory: CustomFactory = Box::new(|_, done| {
            done.done(None);
            Box::new(pi_tui::components::Text::new("x", 0, 0))
        });
        assert!(ui.custom(factory, CustomOptions::default()).await.is_none());
    }

    #[tokio::test]
    async fn custom_done_delivers_the_first_result_only() {
        let (done, rx) = CustomDone::new();
        done.done(Some(Box::new(7_u32)));
        done.done(Some(Box::new(8_u32)));
        let value = rx.await.ok().flatten().and_then(|v| v.downcast::<u32>().ok());
        assert_eq!(value.map(|v| *v), Some(7));
    }
}
