//! `ui_prompt_start` / `ui_prompt_end` (pi's `wrapUIPromptContext`): the UI host set on the
//! runner is wrapped so that its blocking prompts (`select`, `confirm`, `input`, `editor`,
//! `custom`) announce themselves. Nested prompts count as one (the outer prompt's kind and title
//! are reported). As pi (which queues them as microtasks) the events are emitted after the prompt
//! was opened, without holding it up, in order.
//!
//! Every other method is forwarded unchanged; a method added to [`UiHost`] must be forwarded here.

use std::sync::{Arc, Mutex, OnceLock};

use async_trait::async_trait;
use pi_tui::Theme;
use tokio::sync::mpsc::UnboundedSender;

use super::events::NotifyEvent;
use super::lifecycle_events::UiPromptKind;
use super::runner::ExtensionRunner;
use crate::ui::{
    ComponentFactory, CustomFactory, CustomOptions, CustomResult, DialogOptions, NotifyKind, ThemeInfo, UiHost,
    WidgetContent, WidgetPlacement, WorkingIndicator,
};

/// The outer prompt being awaited and how deep prompts are nested.
#[derive(Default)]
struct PromptState {
    depth: usize,
    active: Option<(UiPromptKind, Option<String>)>,
}

/// A [`UiHost`] that emits the prompt events around the wrapped host's prompts.
pub(crate) struct PromptEventsUi {
    inner: Arc<dyn UiHost>,
    emitter: Arc<ExtensionRunner>,
    state: Mutex<PromptState>,
    queue: OnceLock<UnboundedSender<NotifyEvent>>,
}

impl PromptEventsUi {
    pub(crate) fn wrap(inner: Arc<dyn UiHost>, emitter: ExtensionRunner) -> Arc<dyn UiHost> {
        Arc::new(PromptEventsUi {
            inner,
            emitter: Arc::new(emitter),
            state: Mutex::new(PromptState::default()),
            queue: OnceLock::new(),
        })
    }

    /// Queues an event for the in-order emitter task (started on first use).
    fn send(&self, event: NotifyEvent) {
        let queue = self.queue.get_or_init(|| {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<NotifyEvent>();
            let emitter = self.emitter.clone();
            tokio::spawn(async move {
                while let Some(event) = rx.recv().await {
                    emitter.emit(event).await;
                }
            });
            tx
        });
        // The task ends only when this host is dropped, so a failed send has nobody to tell.
        let _ = queue.send(event);
    }

    fn start(&self, kind: UiPromptKind, title: Option<&str>) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.depth += 1;
        if st.depth == 1 {
            st.active = Some((kind, title.map(str::to_owned)));
            drop(st);
            self.send(NotifyEvent::ui_prompt(true, kind, title));
        }
    }

    fn finish(&self, kind: UiPromptKind, title: Option<&str>) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.depth = st.depth.saturating_sub(1);
        if st.depth > 0 {
            return;
        }
        let (kind, title) = st.active.take().unwrap_or((kind, title.map(str::to_owned)));
        drop(st);
        self.send(NotifyEvent::ui_prompt(false, kind, title.as_deref()));
    }

    async fn prompt<T>(
        &self,
        kind: UiPromptKind,
        title: Option<&str>,
        run: impl std::future::Future<Output = T>,
    ) -> T {
        self.start(kind, title);
        // The end is sent even when the prompt's future is dropped (cancelled).
        struct Finish<'a>(&'a PromptEventsUi, UiPromptKind, Option<&'a str>);
        impl Drop for Finish<'_> {
            fn drop(&mut self) {
                self.0.finish(self.1, self.2);
            }
        }
        let _finish = Finish(self, kind, title);
        run.await
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

    fn set_theme(&self, name: &str) -> Result<(), String> {
        self.inner.set_theme(name)
    }

    fn get_tools_expanded(&self) -> bool {
        self.inner.get_tools_expanded()
    }

    fn set_tools_expanded(&self, expanded: bool) {
        self.inner.set_tools_expanded(expanded)
    }
}
