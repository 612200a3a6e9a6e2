//! Default renderings of transcript messages, after pi's interactive components: user messages
//! on the `userMessageBg` background, skill invocations as a `[skill]` line (the block when
//! expanded), assistant text as markdown, tool results in a coloured box, `!` commands, and
//! compaction / branch summaries.

use std::rc::Rc;

use pi_ai::{AssistantBlock, AssistantMessage, ToolResultMessage, UserMessage};
use pi_tui::components::DefaultTextStyle;
use pi_tui::theme::{bold, italic};
use pi_tui::{ComponentRef, Container, Markdown, Spacer, Text, shared};

use super::TranscriptRenderer;
use super::custom::content_text;
use crate::messages::BashExecutionMessage;
use crate::sdk::parse_skill_block;

/// The default key of pi's `app.tools.expand` binding, named in collapsed items' hints.
const EXPAND_KEY: &str = "ctrl+o";

impl TranscriptRenderer {
    fn styled_markdown(
        &self,
        text: &str,
        pad: usize,
        pad_y: usize,
        fg: &'static str,
        bg: Option<&'static str>,
        message_type: &str,
    ) -> Markdown {
        let mut md = Markdown::new(text, pad, pad_y, self.markdown.clone());
        md.set_transform(self.markdown_transform(message_type, false));
        let (t1, t2) = (self.theme.clone(), self.theme.clone());
        md.set_default_style(Some(DefaultTextStyle {
            color: Some(Rc::new(move |s: &str| t1.fg(fg, s))),
            bg_color: bg.map(|bg| Rc::new(move |s: &str| t2.bg(bg, s)) as pi_tui::StyleFn),
            ..Default::default()
        }));
        md
    }

    /// A user message; a `<skill>` block is shown as a skill invocation, then the user's text.
    pub fn user_message(&self, message: &UserMessage) -> Vec<ComponentRef> {
        let text = content_text(&message.content);
        if text.is_empty() {
            return Vec::new();
        }
        let pad = self.options.output_pad;
        let mut out: Vec<ComponentRef> = vec![shared(Spacer::new(1))];
        let Some(block) = parse_skill_block(&text) else {
            out.push(shared(self.styled_markdown(&text, pad, 1, "userMessageText", Some("userMessageBg"), "user")));
            return out;
        };
        let label = self.theme.fg("customMessageLabel", "\x1b[1m[skill]\x1b[22m");
        if self.options.expanded {
            let mut c = Container::new();
            c.add_child(shared(Text::new(label, pad, 0)));
            let body = format!("**{}**\n\n{}", block.name, block.content);
            c.add_child(shared(self.styled_markdown(&body, pad, 0, "customMessageText", None, "custom")));
            out.push(shared(c));
        } else {
            let line = format!(
                "{label} {}{}",
                self.theme.fg("customMessageText", &block.name),
                self.theme.fg("dim", &format!(" ({EXPAND_KEY} to expand)"))
            );
            out.push(shared(Text::new(line, pad, 0)));
        }
        if let Some(user) = &block.user_message {
            out.push(shared(Spacer::new(1)));
            out.push(shared(self.styled_markdown(user, pad, 1, "userMessageText", Some("userMessageBg"), "user")));
        }
        out
    }

    /// An assistant message (pi's `AssistantMessageComponent`): text as markdown, each run of
    /// thinking blocks as italic markdown (or the `Thinking...` label when hidden), a blank line
    /// before each visible block, then the truncation, abort or error line.
    pub fn assistant_message(&self, message: &AssistantMessage) -> Vec<ComponentRef> {
        self.assistant_message_drawn(message, false)
    }

    /// [`Self::assistant_message`] for a message still `streaming` (the extensions' Markdown
    /// transformers are told).
    pub fn assistant_message_drawn(&self, message: &AssistantMessage, streaming: bool) -> Vec<ComponentRef> {
        let pad = self.options.output_pad;
        let mut out: Vec<ComponentRef> = Vec::new();
        let mut needs_spacer = true;
        let add = |out: &mut Vec<ComponentRef>, c: ComponentRef, spacer: &mut bool| {
            if *spacer {
                out.push(shared(Spacer::new(1)));
                *spacer = false;
            }
            out.push(c);
        };
        let blocks = &message.content;
        let mut i = 0;
        while i < blocks.len() {
            match &blocks[i] {
                AssistantBlock::Text(t) if !t.text.trim().is_empty() => {
                    let mut md = Markdown::new(t.text.trim(), pad, 0, self.markdown.clone());
                    md.set_transform(self.markdown_transform("assistant", streaming));
                    add(&mut out, shared(md), &mut needs_spacer);
                }
                AssistantBlock::Thinking(_) => {
                    let mut run = Vec::new();
                    while let Some(AssistantBlock::Thinking(t)) = blocks.get(i) {
                        if !t.thinking.trim().is_empty() {
                            run.push(t.thinking.trim());
                        }
                        i += 1;
                    }
                    if !run.is_empty() {
                        let component: ComponentRef = if self.options.hide_thinking {
                            shared(Text::new(italic(&self.theme.fg("thinkingText", "Thinking...")), pad, 0))
                        } else {
                            let mut md = Markdown::new(run.join("\n\n"), pad, 0, self.markdown.clone());
                            let th = self.theme.clone();
                            md.set_default_style(Some(DefaultTextStyle {
                                color: Some(Rc::new(move |s: &str| th.fg("thinkingText", s))),
                                italic: true,
                                ..Default::default()
                            }));
                            md.set_transform(self.markdown_transform("assistant-thinking", streaming));
                            shared(md)
                        };
                        add(&mut out, component, &mut needs_spacer);
                        needs_spacer = true;
                    }
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        let has_tool_calls = blocks.iter().any(|b| matches!(b, AssistantBlock::ToolCall(_)));
        let line = |text: &str| -> Vec<ComponentRef> {
            vec![shared(Spacer::new(1)), shared(Text::new(self.theme.fg("error", text), pad, 0))]
        };
        match message.stop_reason {
            pi_ai::StopReason::Length => out.extend(line("Response was truncated before completion.")),
            pi_ai::StopReason::Aborted if !has_tool_calls => {
                let text = match message.error_message.as_deref() {
                    Some(e) if e != "Request was aborted" => e,
                    _ => "Operation aborted",
                };
                out.extend(line(text));
            }
            pi_ai::StopReason::Error if !has_tool_calls => {
                let e = message.error_message.as_deref().filter(|e| !e.is_empty()).unwrap_or("Unknown error");
                out.extend(line(&format!("Error: {e}")));
            }
            _ => {}
        }
        out
    }

    /// The extensions' Markdown transform for a `message_type` (none without extensions).
    pub(super) fn markdown_transform(
        &self,
        message_type: &str,
        streaming: bool,
    ) -> Option<pi_tui::components::MarkdownTransform> {
        let meta = self.entry_meta.borrow().clone();
        self.runner.as_ref()?.markdown_transform_for(message_type, streaming, meta)
    }

    /// A tool call with its result, as pi's tool row (see `render/tools.rs`).
    pub fn tool_result(&self, result: &ToolResultMessage, call: Option<&pi_ai::ToolCall>) -> Vec<ComponentRef> {
        let output = super::ToolOutput {
            text: result.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("\n"),
            is_error: result.is_error,
            details: result.details.clone(),
            duration_ms: result.duration_ms,
        };
        let empty = serde_json::Map::new();
        let args = call.map_or(&empty, |c| &c.arguments);
        let row = super::ToolRow { name: &result.tool_name, args, output: Some(&output), partial: false };
        vec![shared(Spacer::new(1)), self.tool_row(&row)]
    }

    /// A user `!command` and its output (pi's `BashExecutionComponent`).
    pub fn bash_execution(&self, message: &BashExecutionMessage) -> Vec<ComponentRef> {
        self.bash_block(message, false)
    }

    /// A user `!command` while it runs (`running`) or finished: a spacer, a border in the bash
    /// colour (dim for `!!`), the bold command, the output's last 20 lines, the status, a border.
    pub fn bash_block(&self, message: &BashExecutionMessage, running: bool) -> Vec<ComponentRef> {
        const PREVIEW_LINES: usize = 20;
        let pad = self.options.output_pad;
        let color = if message.exclude_from_context == Some(true) { "dim" } else { "bashMode" };
        let theme = self.theme.clone();
        let border = move |width: usize| theme.fg(color, &"─".repeat(width.max(1)));
        let mut c = Container::new();
        c.add_child(shared(Spacer::new(1)));
        c.add_child(shared(super::Border::new(border.clone())));
        c.add_child(shared(Text::new(self.theme.fg(color, &bold(&format!("$ {}", message.command))), pad, 0)));
        let lines: Vec<&str> =
            if message.output.is_empty() { Vec::new() } else { message.output.split('\n').collect() };
        let shown =
            if self.options.expanded { &lines[..] } else { &lines[lines.len().saturating_sub(PREVIEW_LINES)..] };
        if !shown.is_empty() {
            let body = shown.iter().map(|l| self.theme.fg("muted", l)).collect::<Vec<_>>().join("\n");
            c.add_child(shared(Text::new(format!("\n{body}"), pad, 0)));
        }
        if running {
            let spinner = self.theme.fg(color, "⠋");
            let text = self.theme.fg("muted", "Running... (escape to cancel)");
            c.add_child(shared(Text::new(format!("\n{spinner} {text}"), pad, 0)));
        } else {
            let mut status = Vec::new();
            let hidden = lines.len() - shown.len();
            if hidden > 0 {
                status.push(format!(
                    "{}{}{}{}",
                    self.theme.fg("muted", &format!("... {hidden} more lines (")),
                    self.theme.fg("dim", EXPAND_KEY),
                    self.theme.fg("muted", " to expand"),
                    self.theme.fg("muted", ")")
                ));
            }
            if message.cancelled {
                status.push(self.theme.fg("warning", "(cancelled)"));
            } else if let Some(code) = message.exit_code.filter(|c| *c != 0) {
                status.push(self.theme.fg("error", &format!("(exit {code})")));
            }
            if message.truncated
                && let Some(path) = &message.full_output_path
            {
                status.push(self.theme.fg("warning", &format!("Output truncated. Full output: {path}")));
            }
            if !status.is_empty() {
                c.add_child(shared(Text::new(format!("\n{}", status.join("\n")), pad, 0)));
            }
        }
        c.add_child(shared(super::Border::new(border)));
        vec![shared(c)]
    }

    /// A compaction or branch summary: a label, the summary when expanded.
    pub fn summary(&self, label: &str, summary: &str) -> Vec<ComponentRef> {
        let theme = self.theme.clone();
        let mut b =
            pi_tui::Box::new(self.options.output_pad, 1, Some(Rc::new(move |t: &str| theme.bg("customMessageBg", t))));
        b.add_child(shared(Text::new(self.theme.fg("customMessageLabel", &bold(&format!("[{label}]"))), 0, 0)));
        if self.options.expanded {
            b.add_child(shared(Spacer::new(1)));
            b.add_child(shared(self.styled_markdown(summary, 0, 0, "customMessageText", None, "summary")));
        } else {
            b.add_child(shared(Text::new(self.theme.fg("dim", &italic(&format!("({EXPAND_KEY} to expand)"))), 0, 0)));
        }
        vec![shared(Spacer::new(1)), shared(b)]
    }
}
