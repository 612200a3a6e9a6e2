//! Rendering a session's transcript into pi-tui components, with the extensions' entry and
//! message renderers (pi's interactive chat view, without the live parts).
//!
//! ```
//! use std::rc::Rc;
//! use pi_coding_agent::render::{RenderOptions, TranscriptRenderer, render_lines};
//! use pi_coding_agent::session::SessionManager;
//! use pi_tui::{ColorMode, Theme};
//!
//! let mut sm = SessionManager::in_memory("/tmp");
//! sm.append_custom_entry("audit-note", None).unwrap(); // no renderer: state, not transcript
//! let theme = Rc::new(Theme::dark(ColorMode::Truecolor).unwrap());
//! let renderer = TranscriptRenderer::new(theme, None, RenderOptions::default());
//! let mut transcript = renderer.render_branch(sm.get_branch(None));
//! assert!(render_lines(&mut transcript, 40).is_empty());
//! ```

mod custom;
mod messages;
mod tools;

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use pi_agent_core::AgentMessage;
use pi_tui::{Component, ComponentRef, Container, MarkdownTheme, Theme};

pub use custom::content_text as content_text_of;
pub use custom::{ExtensionComponent, inside_isolated_renderer};
pub use tools::{ToolOutput, ToolRow, format_duration};

use crate::extensions::ExtensionRunner;
use crate::messages::{CodingAgentMessage, CodingMessage, CustomRoleMessage};
use crate::session::SessionEntry;

/// How the transcript is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenderOptions {
    /// Show collapsible items (skills, tool output, summaries, extension renderers' `expanded`) in full.
    pub expanded: bool,
    /// Horizontal padding (pi's `outputPad` setting, default 1).
    pub output_pad: usize,
    /// Show thinking blocks as a one-line label (pi's `hideThinkingBlock`).
    pub hide_thinking: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions { expanded: false, output_pad: 1, hide_thinking: false }
    }
}

/// Turns session entries and messages into components.
pub struct TranscriptRenderer {
    theme: Rc<Theme>,
    markdown: MarkdownTheme,
    runner: Option<Arc<ExtensionRunner>>,
    options: RenderOptions,
    /// The id and ISO timestamp of the session entry being drawn (the Markdown transform
    /// context's `messageId` and `timestamp`, pi's `messageMeta`).
    entry_meta: std::cell::RefCell<Option<(String, String)>>,
}

impl TranscriptRenderer {
    /// A renderer with a theme and, optionally, the extensions whose renderers to use.
    pub fn new(theme: Rc<Theme>, runner: Option<Arc<ExtensionRunner>>, options: RenderOptions) -> Self {
        let markdown = MarkdownTheme::from_theme(&theme);
        TranscriptRenderer { theme, markdown, runner, options, entry_meta: Default::default() }
    }

    /// The markdown theme it draws with.
    pub fn markdown_theme(&self) -> MarkdownTheme {
        self.markdown.clone()
    }

    /// The theme it draws with.
    pub fn theme(&self) -> &Rc<Theme> {
        &self.theme
    }

    /// The options in use.
    pub fn options(&self) -> RenderOptions {
        self.options
    }

    /// The components of one message (none for system messages, hidden custom messages and
    /// roles without a rendering). `calls` maps tool call ids to calls, for tool results.
    pub fn message(&self, message: &CodingAgentMessage, calls: &HashMap<String, pi_ai::ToolCall>) -> Vec<ComponentRef> {
        match message {
            AgentMessage::System(_) => Vec::new(),
            AgentMessage::User(m) => self.user_message(m),
            AgentMessage::Assistant(m) => self.assistant_message(m),
            AgentMessage::ToolResult(m) => self.tool_result(m, calls.get(&m.tool_call_id)),
            AgentMessage::Custom(CodingMessage::Custom(m)) => self.custom_message(m).into_iter().collect(),
            AgentMessage::Custom(CodingMessage::BashExecution(m)) => self.bash_execution(m),
            AgentMessage::Custom(CodingMessage::CompactionSummary(m)) => self.summary("compaction", &m.summary),
            AgentMessage::Custom(CodingMessage::BranchSummary(m)) => self.summary("branch", &m.summary),
            AgentMessage::Custom(CodingMessage::Other(_)) => Vec::new(),
        }
    }

    /// The transcript of a branch (`SessionManager::get_branch`): messages, `custom_message`
    /// entries, extension-rendered `custom` entries and summaries, in order.
    pub fn render_branch<'a>(&self, entries: impl IntoIterator<Item = &'a SessionEntry>) -> Container {
        self.render_branch_with(entries, &mut |_, _| Vec::new())
    }

    /// [`Self::render_branch`], with what `after` adds after each entry's components (pi's
    /// cache notices on resume); it is told whether the entry drew anything.
    pub fn render_branch_with<'a>(
        &self,
        entries: impl IntoIterator<Item = &'a SessionEntry>,
        after: &mut dyn FnMut(&SessionEntry, bool) -> Vec<ComponentRef>,
    ) -> Container {
        let mut calls: HashMap<String, pi_ai::ToolCall> = HashMap::new();
        let mut container = Container::new();
        for entry in entries {
            *self.entry_meta.borrow_mut() = Some((entry.id().to_owned(), entry.timestamp().to_owned()));
            let components = match entry {
                SessionEntry::Message(e) => {
                    if let AgentMessage::Assistant(a) = &e.message {
                        for block in &a.content {
                            if let pi_ai::AssistantBlock::ToolCall(call) = block {
                                calls.insert(call.id.clone(), call.clone());
                            }
                        }
                    }
                    self.message(&e.message, &calls)
                }
                SessionEntry::CustomMessage(e) => {
                    let message = CustomRoleMessage {
                        custom_type: e.custom_type.clone(),
                        content: e.content.clone(),
                        display: e.display,
                        details: e.details.clone(),
                        ..Default::default()
                    };
                    self.custom_message(&message).into_iter().collect()
                }
                SessionEntry::Custom(e) => self.custom_entry(e).into_iter().collect(),
                SessionEntry::Compaction(e) => self.summary("compaction", &e.summary),
                SessionEntry::BranchSummary(e) => self.summary("branch", &e.summary),
                _ => Vec::new(),
            };
            *self.entry_meta.borrow_mut() = None;
            let drew = !components.is_empty();
            for c in components.into_iter().chain(after(entry, drew)) {
                container.add_child(c);
            }
        }
        container
    }

    /// The transcript of a list of messages (for example `AgentSession::messages`).
    pub fn render_messages(&self, messages: &[CodingAgentMessage]) -> Container {
        let mut calls: HashMap<String, pi_ai::ToolCall> = HashMap::new();
        let mut container = Container::new();
        for message in messages {
            if let AgentMessage::Assistant(a) = message {
                for block in &a.content {
                    if let pi_ai::AssistantBlock::ToolCall(call) = block {
                        calls.insert(call.id.clone(), call.clone());
                    }
                }
            }
            for c in self.message(message, &calls) {
                container.add_child(c);
            }
        }
        container
    }
}

/// A full-width horizontal rule drawn by a colour function (pi's `DynamicBorder`).
pub struct Border {
    draw: Box<dyn Fn(usize) -> String>,
    cache: Option<(usize, pi_tui::Lines)>,
}

impl Border {
    /// A border drawn by `draw(width)`.
    pub fn new(draw: impl Fn(usize) -> String + 'static) -> Self {
        Border { draw: Box::new(draw), cache: None }
    }
}

impl Component for Border {
    fn render(&mut self, width: usize) -> pi_tui::Lines {
        if let Some((w, lines)) = &self.cache
            && *w == width
        {
            return lines.clone();
        }
        let lines: pi_tui::Lines = vec![(self.draw)(width)].into();
        self.cache = Some((width, lines.clone()));
        lines
    }

    fn invalidate(&mut self) {
        self.cache = None;
    }
}

/// Renders a component at `width` into owned lines (ANSI styled).
pub fn render_lines(component: &mut dyn Component, width: usize) -> Vec<String> {
    component.render(width).to_vec()
}

/// The lines as terminal output: each line reset and ended by `\r\n` (for printing, or for
/// replaying into a terminal emulator).
pub fn to_terminal_bytes(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\x1b[0m\r\n")).collect()
}
