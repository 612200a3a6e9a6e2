//! `ui_prompt_start` / `ui_prompt_end` (pi's `wrapUIPromptContext`): the UI host set on the
//! runner is wrapped so that its blocking prompts (`select`, `confirm`, `input`, `editor`,
//! `custom`) announce themselves. Nested prompts count as one (the outer prompt's kind and title
//! are reported). As pi (which queues them as microtasks) the events go through the runtime's
//! event queue without holding the prompt up, and have reached the handlers when the prompt's
//! caller resumes.
//!
//! Every other method is forwarded unchanged; a method added to [`UiHost`] must be forwarded here.

use std::sync::{Arc, Mutex, Weak};

use async_trait::async_trait;
use pi_tui::Theme;
use tokio::sync::oneshot;

use super::api::ExtensionRecord;
use super::event_queue;
use super::events::NotifyEvent;
use super::runtime::Runtime;
use crate::ui::{
    ComponentFactory, CustomFactory, CustomOptions, CustomResult, DialogOptions, NotifyKind, ThemeInfo, UiHost,
    WidgetContent, WidgetPlacement, WorkingIndicator,
};

/// The outer prompt being awaited and how deep prompts are nested.
/// The kind of a blocking extension UI prompt (pi's `UIPromptKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UiPromptKind {
    /// `ctx.ui.select`.
    Select,
    /// `ctx.ui.confirm`.
    Confirm,
    /// `ctx.ui.input`.
    Input,
    /// `ctx.ui.editor`.
    Editor,
    /// `ctx.ui.custom`.
    Custom,
}

impl UiPromptKind {
    /// pi's name of the kind.
    pub fn as_str(self) -> &'static str {
        match self {
            UiPromptKind::Select => "select",
            UiPromptKind::Confirm => "confirm",
            UiPromptKind::Input => "input",
            UiPromptKind::Editor => "editor",
            UiPromptKind::Custom => "custom",
        }
    }
}

#[derive(Default)]
struct PromptState {
    depth: usize,
    active: Option<(UiPromptKind, Option<String>)>,
}

/// A [`UiHost`] that emits the prompt events around the wrapped host's prompts.
pub(crate) struct PromptEventsUi {
    inner: Arc<dyn UiHost>,
    /// Weak: the runtime holds this host.
    runtime: Weak<Runtime>,
    extensions: Vec<Arc<ExtensionRecord>>,
    state: Mutex<PromptState>,
}

/// Queues the end event when a prompt's future is dropped before it finished.
struct Finish<'a> {
    ui: &'a PromptEventsUi,
    kind: UiPromptKind,
    title: Option<&'a str>,
    armed: bool,
}

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.ui.finish(self.kind, self.title, false);
        }
    }
}

impl PromptEventsUi {
    pub(crate) fn wrap(
        inner: Arc<dyn UiHost>,
        runtime: Weak<Runtime>,
        extensions: Vec<Arc<ExtensionRecord>>,
    ) -> Arc<dyn UiHost> {
        Arc::new(PromptEventsUi { inner, runtime, extensions, state: Mutex::new(PromptState::default()) })
    }

    fn send(&self, event: NotifyEvent, wait: bool) -> Option<oneshot::Receiver<()>> {
        let runtime = self.runtime.upgrade()?;
        event_queue::start(&runtime, self.extensions.clone());
        event_queue::push(&runtime, event, wait)
    }

    fn start(&self, kind: UiPromptKind, title: Option<&str>) -> Option<oneshot::Receiver<()>> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.depth += 1;
        if st.depth != 1 {
            return None;
        }
        st.active = Some((kind, title.map(str::to_owned)));
        drop(st);
        self.send(NotifyEvent::ui_prompt(true, kind, title), true)
    }

    fn finish(&self, kind: UiPromptKind, title: Option<&str>, wait: bool) -> Option<oneshot::Receiver<()>> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.depth = st.depth.saturating_sub(1);
        if st.depth > 0 {
            return None;
        }
        let (kind, title) = st.active.take().unwrap_or((kind, title.map(str::to_owned)));
        drop(st);
        self.send(NotifyEvent::ui_prompt(false, kind, title.as_deref()), wait)
    }

    /// Runs a prompt: its start event is delivered while the prompt is open (never holding it
    /// up), its end event before the prompt's answer is returned.
    async fn prompt<T>(&self, kind: UiPromptKind, title: Option<&str>, run: impl std::future::Future<Output = T>) -> T {
        let started = self.start(kind, title);
        let mut guard = Finish { ui: self, kind, title, armed: true };
        let delivered = async {
            if let Some(rx) = started {
                // A dropped queue has delivered nothing more; there is nothing to wait for.
                let _ = rx.await;
            }
        };
        let (answer, ()) = tokio::join!(run, delivered);
        guard.armed = false;
        if let Some(rx) = self.finish(kind, title, true) {
            let _ = rx.await;
        }
        answer
    }
}

#[async_trait]
impl UiHost for PromptEventsUi {
    fn has_ui(&self) -> bool {
        self.inner.has_ui()
    }

    async fn select(&self, title: &str, options: &[String], opts: DialogOptions) -> Option<String> {
        self.prompt(UiPromptKind::Select, Some(title), self.inner.select(title, options, opts)).await
    }

    async fn confirm(&self, title: &str, message: &str, opts: DialogOptions) -> bool {
        self.prompt(UiPromptKind::Confirm, Some(title), self.inner.confirm(title, message, opts)).await
    }

    async fn input(&self, title: &str, placeholder: Option<&str>, opts: DialogOptions) -> Option<String> {
        self.prompt(UiPromptKind::Input, Some(title), self.inner.input(title, placeholder, opts)).await
    }

    async fn editor(&self, title: &str, prefill: Option<&str>) -> Option<String> {
        self.prompt(UiPromptKind::Editor, Some(title), self.inner.editor(title, prefill)).await
    }

    fn notify(&self, message: &str, kind: NotifyKind) {
        self.inner.notify(message, kind)
    }

    fn set_status(&self, key: &str, text: Option<&str>) {
        self.inner.set_status(key, text)
    }

    fn set_working_message(&self, message: Option<&str>) {
        self.inner.set_working_message(message)
    }

    fn set_working_visible(&self, visible: bool) {
        self.inner.set_working_visible(visible)
    }

    fn set_working_indicator(&self, indicator: Option<WorkingIndicator>) {
        self.inner.set_working_indicator(indicator)
    }

    fn set_hidden_thinking_label(&self, label: Option<&str>) {
        self.inner.set_hidden_thinking_label(label)
    }

    fn set_widget(&self, key: &str, content: Option<WidgetContent>, placement: WidgetPlacement) {
        self.inner.set_widget(key, content, placement)
    }

    fn set_footer(&self, factory: Option<ComponentFactory>) {
        self.inner.set_footer(factory)
    }

    fn set_header(&self, factory: Option<ComponentFactory>) {
        self.inner.set_header(factory)
    }

    fn set_title(&self, title: &str) {
        self.inner.set_title(title)
    }

    fn request_render(&self) {
        self.inner.request_render()
    }

    async fn custom(&self, factory: CustomFactory, opts: CustomOptions) -> Option<CustomResult> {
        self.prompt(UiPromptKind::Custom, None, self.inner.custom(factory, opts)).await
    }

    fn paste_to_editor(&self, text: &str) {
        self.inner.paste_to_editor(text)
    }

    fn set_editor_text(&self, text: &str) {
        self.inner.set_editor_text(text)
    }

    fn get_editor_text(&self) -> String {
        self.inner.get_editor_text()
    }

    fn get_all_themes(&self) -> Vec<ThemeInfo> {
        self.inner.get_all_themes()
    }

    fn theme(&self) -> Option<Theme> {
        self.inner.theme()
    }

    fn set_overlay_visible(&self, key: &str, visible: Option<crate::ui::OverlayVisible>) {
        self.inner.set_overlay_visible(key, visible)
    }

    fn get_theme(&self, name: &str) -> Option<Theme> {
        self.inner.get_theme(name)
    }

    fn keybindings(&self) -> Vec<(String, Vec<String>)> {
        self.inner.keybindings()
    }

    fn set_theme(&self, name: &str) -> Result<(), String> {
        self.inner.set_theme(name)
    }

    fn get_tools_expanded(&self) -> bool {
        self.inner.get_tools_expanded()
    }

    fn set_tools_expanded(&self, expanded: bool) {
        self.inner.set_tools_expanded(expanded)
    }

    fn show_overlay(&self, key: &str, factory: ComponentFactory, options: Option<serde_json::Value>) {
        self.inner.show_overlay(key, factory, options)
    }

    fn overlay(&self, key: &str, op: crate::ui::OverlayOp) {
        self.inner.overlay(key, op)
    }

    fn set_editor_component(&self, factory: Option<crate::ui::EditorComponentFactory>) {
        self.inner.set_editor_component(factory)
    }

    fn set_terminal_input_listener(&self, key: &str, listener: Option<crate::ui::TerminalInputListener>) {
        self.inner.set_terminal_input_listener(key, listener)
    }

    fn add_autocomplete_provider(&self, wrapper: crate::ui::AutocompleteWrapper) {
        self.inner.add_autocomplete_provider(wrapper)
    }

    fn extension_statuses(&self) -> Vec<(String, String)> {
        self.inner.extension_statuses()
    }

    fn available_provider_count(&self) -> usize {
        self.inner.available_provider_count()
    }
}
