//! Extension-rendered transcript items, isolated from failing renderers:
//!
//! - a `custom` **entry** is shown only when an extension registered a renderer for its
//!   `customType` and the renderer returned a component (pi's `CustomEntryComponent`); a renderer
//!   that panics is replaced by an error line `[customType] renderer failed: …`;
//! - a `custom` **message** with `display: true` uses its renderer when there is one and it
//!   returns a component, and the default box otherwise; a panicking renderer falls back to the
//!   default (pi's `CustomMessageComponent`); `display: false` messages are not shown.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use pi_tui::components::DefaultTextStyle;
use pi_tui::{Component, ComponentRef, Container, Lines, Markdown, Spacer, Text, shared};

use super::TranscriptRenderer;
use crate::extensions::MessageRenderOptions;
use crate::messages::CustomRoleMessage;
use crate::session::CustomEntry;

/// A component an extension returned, usable as a child.
pub struct ExtensionComponent(pub Box<dyn Component>);

impl Component for ExtensionComponent {
    fn render(&mut self, width: usize) -> Lines {
        self.0.render(width)
    }

    fn render_segments(&mut self, width: usize, out: &mut Vec<Lines>) {
        self.0.render_segments(width, out);
    }

    fn invalidate(&mut self) {
        self.0.invalidate();
    }

    // A focused custom component (`ctx.ui.custom`) gets the keys and the focus.
    fn handle_input(&mut self, data: &str) {
        self.0.handle_input(data);
    }

    fn wants_key_release(&self) -> bool {
        self.0.wants_key_release()
    }

    fn captures_viewport_input(&self) -> bool {
        self.0.captures_viewport_input()
    }

    fn set_focused(&mut self, focused: bool) {
        self.0.set_focused(focused);
    }

    fn handle_mouse(&mut self, event: &pi_tui::MouseEvent) -> Option<pi_tui::MouseReply> {
        self.0.handle_mouse(event)
    }
}

/// The text of a panic payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "renderer panicked".to_owned()
    }
}

thread_local! {
    /// How many isolated renderers are running on this thread (see [`inside_isolated_renderer`]).
    static ISOLATING: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Whether the current thread is inside an isolated extension renderer: a panic there is caught
/// and drawn as an error line, so a panic hook must not tear the terminal down for it.
pub fn inside_isolated_renderer() -> bool {
    ISOLATING.with(|c| c.get() > 0)
}

/// Runs a renderer; a panic becomes `Err(message)`.
pub(crate) fn isolate<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    ISOLATING.with(|c| c.set(c.get() + 1));
    let result = catch_unwind(AssertUnwindSafe(f)).map_err(|p| panic_message(p.as_ref()));
    ISOLATING.with(|c| c.set(c.get().saturating_sub(1)));
    result
}

/// The text of a custom message's content: text blocks joined by newlines.
pub fn content_text(content: &pi_ai::Content<pi_ai::UserBlock>) -> String {
    match content {
        pi_ai::Content::Text(s) => s.clone(),
        pi_ai::Content::Blocks(blocks) => blocks.iter().filter_map(|b| b.as_text()).collect::<Vec<_>>().join("\n"),
    }
}

impl TranscriptRenderer {
    /// A `custom` entry: a spacer and the extension's component, or `None` when no renderer
    /// produced one (such entries are state, not transcript).
    pub fn custom_entry(&self, entry: &CustomEntry) -> Option<ComponentRef> {
        let runner = self.runner.as_ref()?;
        if !runner.has_entry_renderer(&entry.custom_type) {
            return None;
        }
        let component: ComponentRef = match isolate(|| runner.render_entry(entry, self.options.expanded, &self.theme)) {
            Ok(Some(component)) => shared(ExtensionComponent(component)),
            Ok(None) => return None,
            Err(message) => {
                tracing::warn!(custom_type = %entry.custom_type, %message, "entry renderer failed");
                let theme = self.theme.clone();
                let mut b = pi_tui::Box::new(
                    self.options.output_pad,
                    1,
                    Some(Rc::new(move |t: &str| theme.bg("customMessageBg", t))),
                );
                let line = format!("[{}] renderer failed: {message}", entry.custom_type);
                b.add_child(shared(Text::new(self.theme.fg("error", &line), 0, 0)));
                shared(b)
            }
        };
        let mut container = Container::new();
        container.add_child(shared(Spacer::new(1)));
        container.add_child(component);
        Some(shared(container))
    }

    /// A `custom` message: `None` when `display` is false, else a spacer and the extension's
    /// component or the default box (`[customType]` label and the content as markdown).
    pub fn custom_message(&self, message: &CustomRoleMessage) -> Option<ComponentRef> {
        if !message.display {
            return None;
        }
        let mut container = Container::new();
        container.add_child(shared(Spacer::new(1)));
        let rendered = self.runner.as_ref().and_then(|runner| {
            let options = MessageRenderOptions { expanded: self.options.expanded, output_pad: self.options.output_pad };
            match isolate(|| runner.render_message(message, options, &self.theme)) {
                Ok(component) => component,
                Err(error) => {
                    tracing::warn!(custom_type = %message.custom_type, %error, "message renderer failed");
                    None
                }
            }
        });
        match rendered {
            Some(component) => container.add_child(shared(ExtensionComponent(component))),
            None => container.add_child(self.default_custom_message(message)),
        }
        Some(shared(container))
    }

    fn default_custom_message(&self, message: &CustomRoleMessage) -> ComponentRef {
        let theme = self.theme.clone();
        let mut b =
            pi_tui::Box::new(self.options.output_pad, 1, Some(Rc::new(move |t: &str| theme.bg("customMessageBg", t))));
        let label = self.theme.fg("customMessageLabel", &format!("\x1b[1m[{}]\x1b[22m", message.custom_type));
        b.add_child(shared(Text::new(label, 0, 0)));
        b.add_child(shared(Spacer::new(1)));
        let theme = self.theme.clone();
        let mut md = Markdown::new(content_text(&message.content), 0, 0, self.markdown.clone());
        md.set_default_style(Some(DefaultTextStyle {
            color: Some(Rc::new(move |t: &str| theme.fg("customMessageText", t))),
            ..Default::default()
        }));
        md.set_transform(self.markdown_transform("custom", false));
        b.add_child(shared(md));
        shared(b)
    }
}
