//! `/context` (beyond pi 1.6.0): what the model saw. The view shows the context of the last
//! request exactly as the provider's stream function received it (captured by the session, after
//! `transform_context`, `convert_to_llm` and `normalize_context`): the system head (its sections
//! and tools), every message the model received, and, marked, every transcript item that did not
//! reach it and why. Before the first request there is nothing to show, and it says so.

use pi_agent_core::AgentMessage;
use pi_ai::Message;
use pi_tui::{Markdown, Spacer, shared};

use super::app::App;
use crate::messages::{CodingAgentMessage, CodingMessage};
use crate::session::SessionEntry;

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    if line.chars().count() > 70 {
        format!("{}…", line.chars().take(70).collect::<String>())
    } else {
        line.to_owned()
    }
}

fn system_len(c: &pi_ai::Content<pi_ai::TextContent>) -> usize {
    match c {
        pi_ai::Content::Text(t) => t.len(),
        pi_ai::Content::Blocks(b) => b.iter().map(|t| t.text.len()).sum(),
    }
}

fn role_line(m: &Message) -> String {
    match m {
        Message::System(s) => format!("system ({} chars)", system_len(&s.content)),
        Message::User(u) => format!("user: {}", first_line(&crate::render::content_text_of(&u.content))),
        Message::Assistant(a) => {
            let text: Vec<&str> = a
                .content
                .iter()
                .filter_map(|b| match b {
                    pi_ai::AssistantBlock::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect();
            let calls = a.content.iter().filter(|b| matches!(b, pi_ai::AssistantBlock::ToolCall(_))).count();
            let calls = if calls > 0 { format!(" (+{calls} tool calls)") } else { String::new() };
            format!("assistant: {}{calls}", first_line(&text.join(" ")))
        }
        Message::ToolResult(r) => format!(
            "toolResult {}: {}",
            r.tool_name,
            first_line(&r.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join(" "))
        ),
    }
}

/// Why a transcript message does not reach the model (`None`: it does).
fn dropped_reason(m: &CodingAgentMessage) -> Option<&'static str> {
    match m {
        AgentMessage::Custom(CodingMessage::Custom(c)) if !c.display => None,
        AgentMessage::Custom(CodingMessage::BashExecution(b)) if b.exclude_from_context == Some(true) => {
            Some("`!!` command: excluded from context")
        }
        AgentMessage::Custom(CodingMessage::Other(_)) => Some("unknown role: convert_to_llm drops it"),
        _ => None,
    }
}

impl App {
    /// Shows the model view of the current context.
    pub(crate) fn command_context(&mut self) {
        let Some(request) = self.session.last_request() else {
            self.show_line("dim", "No request yet: /context shows the last request sent to the model.");
            return;
        };
        let (context, custom_entries) = self.session.with_session_manager(|sm| {
            let custom: Vec<String> = sm
                .get_branch(None)
                .iter()
                .filter_map(|e| match e {
                    SessionEntry::Custom(c) => Some(c.custom_type.clone()),
                    _ => None,
                })
                .collect();
            (sm.build_session_context().messages, custom)
        });
        let tools = pi_ai::transcript::current_tools(request.messages());
        let head = pi_ai::transcript::current_system_message(request.messages());
        let normalized = request;
        let mut md = String::from(
            "**What the model saw** (last request: transform_context → convert_to_llm → normalize_context)\n\n",
        );
        if let Some(head) = &head {
            let sections: Vec<String> =
                head.sections.as_ref().map(|s| s.keys().map(str::to_owned).collect()).unwrap_or_default();
            md.push_str(&format!(
                "System head: {} chars, sections: {}\n\n",
                system_len(&head.content),
                if sections.is_empty() { "none".to_owned() } else { sections.join(", ") }
            ));
        }
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        md.push_str(&format!("Tools ({}): {}\n\n", names.len(), names.join(", ")));
        md.push_str(&format!("**Messages sent ({})**\n\n", normalized.messages().len()));
        for (i, m) in normalized.messages().iter().enumerate() {
            md.push_str(&format!("{}. {}\n", i + 1, role_line(m).replace('|', "\\|")));
        }
        let mut dropped: Vec<String> =
            context.iter().filter_map(|m| dropped_reason(m).map(|why| format!("- {} — {why}", m.role()))).collect();
        for c in custom_entries {
            dropped.push(format!("- custom entry `{c}` — session state, never sent (entry renderers only draw it)"));
        }
        dropped.push("- `details` of tool results and custom messages — UI data, never sent".to_owned());
        md.push_str(&format!("\n**Not sent to the model ({})**\n\n{}\n", dropped.len(), dropped.join("\n")));
        let mdt = self.live.renderer.markdown_theme();
        self.add_chat(shared(Spacer::new(1)));
        self.add_chat(shared(Markdown::new(md, 1, 0, mdt)));
    }
}
