//! The live part of the transcript: the streaming assistant row (rebuilt from the agent's
//! partial message once per frame, never per delta), tool rows keyed by call id (pending, partial
//! and final results), the working loader, and user `!command` rows.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use pi_agent_core::{AgentEvent, AgentMessage, StreamingMessage};
use pi_ai::{AssistantBlock, AssistantMessage};
use pi_tui::{ComponentRef, Container, Spacer, Text, Theme, shared};
use serde_json::{Map, Value};

use crate::messages::{BashExecutionMessage, CodingMessage};
use crate::render::{ToolOutput, ToolRow, TranscriptRenderer};
use crate::sdk::{AgentSession, BashResult, SessionEvent};

/// A tool row being updated.
struct LiveTool {
    name: String,
    args: Map<String, Value>,
    output: Option<ToolOutput>,
    partial: bool,
    slot: Rc<RefCell<Container>>,
}

/// The working indicator embedded in the editor's top border (pi's `WorkingStatusIndicator`).
pub(crate) struct Working {
    since: std::time::Instant,
    pub(crate) message: String,
    pub(crate) frame: usize,
}

impl Working {
    fn new(message: &str) -> Self {
        Working { since: std::time::Instant::now(), message: message.to_owned(), frame: 0 }
    }

    /// The frame due now (80 ms per frame).
    pub(crate) fn due_frame(&self) -> usize {
        (self.since.elapsed().as_millis() / pi_tui::components::SPINNER_INTERVAL.as_millis()) as usize
            % pi_tui::components::SPINNER_FRAMES.len()
    }

    /// The status text for the border at `frame`.
    pub(crate) fn text(&self, theme: &Theme) -> String {
        let spinner = pi_tui::components::SPINNER_FRAMES[self.frame % pi_tui::components::SPINNER_FRAMES.len()];
        format!("{} {}", theme.fg("accent", spinner), theme.fg("muted", &self.message))
    }
}

pub(crate) struct Live {
    pub(crate) renderer: Rc<TranscriptRenderer>,
    streaming: Option<Rc<RefCell<Container>>>,
    tools: HashMap<String, LiveTool>,
    /// The working indicator: since when, the message, and the frame last drawn.
    pub(crate) working: Option<Working>,
    pub(crate) dirty: bool,
    bug_hint_shown: bool,
}

fn to_output(result: &pi_agent_core::AgentToolResult, duration_ms: Option<u64>) -> ToolOutput {
    ToolOutput {
        text: result.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("\n"),
        is_error: result.is_error,
        details: (!result.details.is_null()).then(|| result.details.clone()),
        duration_ms,
    }
}

impl Live {
    pub(crate) fn new(renderer: Rc<TranscriptRenderer>) -> Self {
        Live { renderer, streaming: None, tools: HashMap::new(), working: None, dirty: false, bug_hint_shown: false }
    }

    fn assistant_components(&self, message: &AssistantMessage) -> Vec<ComponentRef> {
        self.renderer.assistant_message(message)
    }

    /// Reads the partial message once and rebuilds the streaming row (called before a frame).
    pub(crate) fn refresh(&mut self, session: &AgentSession) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        let Some(slot) = &self.streaming else { return };
        let partial = session.agent().with_state(|s| match &s.streaming_message {
            Some(StreamingMessage::Assistant(p)) => Some(p.message().clone()),
            _ => None,
        });
        if let Some(message) = partial {
            let components = self.renderer.assistant_message_drawn(&message, true);
            let mut c = slot.borrow_mut();
            c.clear();
            for x in components {
                c.add_child(x);
            }
        }
    }

    fn tool_slot(&mut self, chat: &Rc<RefCell<Container>>, id: &str, name: &str, args: &Map<String, Value>) {
        if self.tools.contains_key(id) {
            return;
        }
        let slot = shared(Container::new());
        chat.borrow_mut().add_child(slot.clone());
        let tool = LiveTool { name: name.to_owned(), args: args.clone(), output: None, partial: false, slot };
        self.draw_tool(&tool);
        self.tools.insert(id.to_owned(), tool);
    }

    fn draw_tool(&self, tool: &LiveTool) {
        let row = ToolRow { name: &tool.name, args: &tool.args, output: tool.output.as_ref(), partial: tool.partial };
        let component = self.renderer.tool_row(&row);
        let mut s = tool.slot.borrow_mut();
        s.clear();
        s.add_child(shared(Spacer::new(1)));
        s.add_child(component);
    }

    fn set_tool_output(&mut self, id: &str, output: ToolOutput, partial: bool) {
        if let Some(mut tool) = self.tools.remove(id) {
            tool.output = Some(output);
            tool.partial = partial;
            self.draw_tool(&tool);
            self.tools.insert(id.to_owned(), tool);
        }
    }

    fn start_working(&mut self, message: &str) {
        if self.working.is_none() {
            self.working = Some(Working::new(message));
        }
    }

    fn stop_working(&mut self) {
        self.working = None;
    }

    /// Applies one session event to the transcript.
    pub(crate) fn on_event(&mut self, ev: &SessionEvent, theme: &Rc<Theme>, chat: &Rc<RefCell<Container>>) {
        match ev {
            SessionEvent::Agent(AgentEvent::AgentStart) => self.start_working("Working"),
            SessionEvent::Agent(AgentEvent::MessageStart { message }) => match message {
                AgentMessage::Assistant(_) => {
                    let slot = shared(Container::new());
                    chat.borrow_mut().add_child(slot.clone());
                    self.streaming = Some(slot);
                    self.dirty = true;
                }
                AgentMessage::User(m) => {
                    // pi's first user message follows the header's spacer directly.
                    let first = chat.borrow().children().is_empty();
                    for (i, c) in self.renderer.user_message(m).into_iter().enumerate() {
                        if first && i == 0 {
                            continue;
                        }
                        chat.borrow_mut().add_child(c);
                    }
                }
                AgentMessage::Custom(CodingMessage::Custom(m)) => {
                    if let Some(c) = self.renderer.custom_message(m) {
                        chat.borrow_mut().add_child(c);
                    }
                }
                AgentMessage::Custom(CodingMessage::BranchSummary(m)) => {
                    for c in self.renderer.summary("branch", &m.summary) {
                        chat.borrow_mut().add_child(c);
                    }
                }
                AgentMessage::Custom(CodingMessage::CompactionSummary(m)) => {
                    for c in self.renderer.summary("compaction", &m.summary) {
                        chat.borrow_mut().add_child(c);
                    }
                }
                _ => {}
            },
            SessionEvent::Agent(AgentEvent::MessageUpdate { .. }) => self.dirty = true,
            SessionEvent::Agent(AgentEvent::MessageEnd { message: AgentMessage::Assistant(a) }) => {
                if let Some(slot) = self.streaming.take() {
                    let components = self.assistant_components(a);
                    let mut c = slot.borrow_mut();
                    c.clear();
                    for x in components {
                        c.add_child(x);
                    }
                }
                for block in &a.content {
                    if let AssistantBlock::ToolCall(call) = block {
                        self.tool_slot(chat, &call.id, &call.name, &call.arguments);
                    }
                }
                self.maybe_suggest_bug_report(a, chat);
            }
            SessionEvent::Agent(AgentEvent::ToolExecutionStart { tool_call_id, tool_name, args }) => {
                self.tool_slot(chat, tool_call_id, tool_name, args);
            }
            SessionEvent::Agent(AgentEvent::ToolExecutionUpdate { tool_call_id, partial_result, .. }) => {
                self.set_tool_output(tool_call_id, to_output(partial_result, None), true);
            }
            SessionEvent::Agent(AgentEvent::ToolExecutionEnd { tool_call_id, result, duration_ms, .. }) => {
                self.set_tool_output(tool_call_id, to_output(result, *duration_ms), false);
            }
            SessionEvent::AgentSettled { .. } => {
                self.stop_working();
                self.tools.clear();
            }
            SessionEvent::EntryAppended { entry } => {
                if let crate::session::SessionEntry::Custom(e) = entry.as_ref()
                    && let Some(c) = self.renderer.custom_entry(e)
                {
                    chat.borrow_mut().add_child(c);
                }
            }
            other => self.on_record(other, theme, chat),
        }
    }

    /// Compaction and auto-retry notices, as pi's interactive mode draws them.
    fn on_record(&mut self, ev: &SessionEvent, theme: &Rc<Theme>, chat: &Rc<RefCell<Container>>) {
        let line = |token: &str, text: &str| -> Vec<ComponentRef> {
            vec![shared(Spacer::new(1)), shared(Text::new(theme.fg(token, text), 1, 0))]
        };
        let items = match ev {
            SessionEvent::CompactionStart { .. } => {
                self.working = Some(Working::new("Compacting context..."));
                Vec::new()
            }
            SessionEvent::CompactionEnd(end) => {
                self.stop_working();
                match (&end.error_message, &end.result) {
                    (Some(e), _) => line("error", &format!("Compaction failed: {e}")),
                    (None, _) if end.aborted => line("warning", "Compaction cancelled"),
                    (None, Some(result)) => self.renderer.summary("compaction", &result.summary),
                    (None, None) => Vec::new(),
                }
            }
            SessionEvent::AutoRetryStart { attempt, max_attempts, delay_ms, .. } => {
                let secs = delay_ms.div_ceil(1000);
                line("warning", &format!("Retrying ({attempt}/{max_attempts}) in {secs}s..."))
            }
            SessionEvent::AutoRetryEnd { success: false, final_error, .. } => {
                let e = final_error.as_deref().unwrap_or("unknown error");
                line("error", &format!("Retry failed: {e}"))
            }
            _ => Vec::new(),
        };
        for c in items {
            chat.borrow_mut().add_child(c);
        }
    }

    /// pi's `maybeSuggestBugReport`: once per run of the UI, after a non-retryable error that is
    /// not an abort.
    fn maybe_suggest_bug_report(&mut self, a: &AssistantMessage, chat: &Rc<RefCell<Container>>) {
        if self.bug_hint_shown
            || a.stop_reason != pi_ai::StopReason::Error
            || crate::sdk::is_retryable_assistant_error(a)
        {
            return;
        }
        let text = a.error_message.as_deref().unwrap_or("").to_lowercase();
        let abort =
            regex::Regex::new(r"\b(?:abort(?:ed)?|cancel(?:l?ed)?)\b").map(|r| r.is_match(&text)).unwrap_or(false);
        if abort {
            return;
        }
        self.bug_hint_shown = true;
        let hint =
            self.renderer.theme().fg("muted", "If this looks like a pi bug, /bug sends a report to the developers.");
        chat.borrow_mut().add_child(shared(Text::new(hint, self.renderer.options().output_pad, 0)));
    }

    /// A user `!command` row: running (no result yet) or finished.
    /// A user `!cmd` block: running (with the output so far) until `result` arrives.
    pub(crate) fn bash_row(
        &self,
        command: &str,
        exclude: bool,
        result: Option<&BashResult>,
        partial: &str,
    ) -> ComponentRef {
        let message = BashExecutionMessage {
            command: command.to_owned(),
            output: result.map_or_else(|| partial.to_owned(), |r| r.output.clone()),
            exit_code: result.and_then(|r| r.exit_code),
            cancelled: result.is_some_and(|r| r.cancelled),
            truncated: result.is_some_and(|r| r.truncated),
            exclude_from_context: exclude.then_some(true),
            ..Default::default()
        };
        let mut c = Container::new();
        for x in self.renderer.bash_block(&message, result.is_none()) {
            c.add_child(x);
        }
        shared(c)
    }
}
