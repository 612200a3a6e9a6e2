//! Token estimates (`ceil(chars / 4)`, chars in UTF-16 units as JavaScript counts them) and the
//! compaction threshold.

use pi_agent_core::AgentMessage;
use pi_ai::transcript::current_system_message;
use pi_ai::{AssistantBlock, Content, StopReason, Usage, UserBlock};

use crate::messages::{CodingAgentMessage, CodingMessage};
use crate::session::{SessionEntry, SessionProjection};

/// Compaction settings (`compaction.*`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompactionSettings {
    /// Whether automatic compaction runs.
    pub enabled: bool,
    /// Tokens kept free for the prompt and the answer.
    pub reserve_tokens: u64,
    /// Recent tokens kept verbatim after compaction.
    pub keep_recent_tokens: u64,
}

impl Default for CompactionSettings {
    /// pi's defaults: enabled, 16384 reserved, 20000 kept.
    fn default() -> Self {
        CompactionSettings { enabled: true, reserve_tokens: 16384, keep_recent_tokens: 20000 }
    }
}

/// Characters an image counts as.
pub const ESTIMATED_IMAGE_CHARS: usize = 4800;

pub use pi_ai::js::js_len;

fn user_blocks_chars(blocks: &[UserBlock]) -> usize {
    blocks
        .iter()
        .map(|b| match b {
            UserBlock::Text(t) => js_len(&t.text),
            UserBlock::Image(_) => ESTIMATED_IMAGE_CHARS,
        })
        .sum()
}

fn content_chars(content: &Content<UserBlock>) -> usize {
    match content {
        Content::Text(s) => js_len(s),
        Content::Blocks(b) => user_blocks_chars(b),
    }
}

fn ceil4(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

/// Estimated tokens of one message (pi's `estimateTokens`); unknown roles count 0.
pub fn estimate_tokens(message: &CodingAgentMessage) -> u64 {
    match message {
        AgentMessage::System(s) => {
            let mut chars = match &s.content {
                Content::Text(t) => js_len(t),
                Content::Blocks(b) => b.iter().map(|t| js_len(&t.text)).sum(),
            };
            if let Some(sections) = &s.sections {
                chars += sections.iter().filter_map(|(_, v)| v).map(js_len).sum::<usize>();
            }
            if let Some(tools) = &s.tools_added {
                chars += serde_json::to_string(tools).map(|j| js_len(&j)).unwrap_or(0);
            }
            ceil4(chars)
        }
        AgentMessage::User(u) => ceil4(content_chars(&u.content)),
        AgentMessage::Assistant(a) => {
            let chars = a
                .content
                .iter()
                .map(|b| match b {
                    AssistantBlock::Text(t) => js_len(&t.text),
                    AssistantBlock::Thinking(t) => js_len(&t.thinking),
                    AssistantBlock::ToolCall(c) => {
                        js_len(&c.name) + serde_json::to_string(&c.arguments).map(|j| js_len(&j)).unwrap_or(0)
                    }
                })
                .sum();
            ceil4(chars)
        }
        AgentMessage::ToolResult(t) => ceil4(user_blocks_chars(&t.content)),
        AgentMessage::Custom(CodingMessage::Custom(c)) => ceil4(content_chars(&c.content)),
        AgentMessage::Custom(CodingMessage::BashExecution(b)) => ceil4(js_len(&b.command) + js_len(&b.output)),
        AgentMessage::Custom(CodingMessage::BranchSummary(s)) => ceil4(js_len(&s.summary)),
        AgentMessage::Custom(CodingMessage::CompactionSummary(s)) => ceil4(js_len(&s.summary)),
        AgentMessage::Custom(CodingMessage::Other(_)) => 0,
    }
}

/// Context tokens of a usage: `totalTokens`, or the sum of its parts when that is 0.
pub fn calculate_context_tokens(usage: &Usage) -> u64 {
    if usage.total_tokens > 0 {
        usage.total_tokens
    } else {
        usage.input + usage.output + usage.cache_read + usage.cache_write
    }
}

fn assistant_usage(m: &CodingAgentMessage) -> Option<&Usage> {
    match m {
        AgentMessage::Assistant(a)
            if !matches!(a.stop_reason, StopReason::Aborted | StopReason::Error)
                && calculate_context_tokens(&a.usage) > 0 =>
        {
            Some(&a.usage)
        }
        _ => None,
    }
}

/// The usage of the last assistant message with valid usage in `entries`.
pub fn last_assistant_usage<'a>(entries: &[&'a SessionEntry]) -> Option<&'a Usage> {
    entries.iter().rev().find_map(|e| e.as_message().and_then(assistant_usage))
}

/// An estimate of context tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ContextEstimate {
    /// Total.
    pub tokens: u64,
    /// From the last assistant usage.
    pub usage_tokens: u64,
    /// Estimated for messages after it.
    pub trailing_tokens: u64,
    /// Index of the message whose usage was used.
    pub last_usage_index: Option<usize>,
}

/// Context tokens: the last valid assistant usage plus estimates of later messages, or a pure
/// estimate when there is none.
pub fn estimate_context_tokens(messages: &[&CodingAgentMessage]) -> ContextEstimate {
    let found = messages.iter().enumerate().rev().find_map(|(i, m)| assistant_usage(m).map(|u| (i, u)));
    match found {
        None => {
            let t = messages.iter().map(|m| estimate_tokens(m)).sum();
            ContextEstimate { tokens: t, usage_tokens: 0, trailing_tokens: t, last_usage_index: None }
        }
        Some((i, u)) => {
            let usage_tokens = calculate_context_tokens(u);
            let trailing: u64 = messages[i + 1..].iter().map(|m| estimate_tokens(m)).sum();
            ContextEstimate {
                tokens: usage_tokens + trailing,
                usage_tokens,
                trailing_tokens: trailing,
                last_usage_index: Some(i),
            }
        }
    }
}

/// Context tokens of a projection, not trusting usage recorded before a later context edit or
/// compaction on `branch` (then a pure estimate: the replayed system message plus every
/// non-system message).
pub fn estimate_projected_context_tokens(
    projection: &SessionProjection<'_>,
    branch: &[&SessionEntry],
) -> ContextEstimate {
    let messages: Vec<&CodingAgentMessage> = projection.messages().collect();
    let estimate = estimate_context_tokens(&messages);
    if let Some(last) = estimate.last_usage_index {
        let mut index = 0;
        let mut usage_entry = None;
        for e in &projection.entries {
            let next = index + e.messages.len();
            if last < next {
                usage_entry = Some(e.source.id());
                break;
            }
            index = next;
        }
        let usage_pos = usage_entry.and_then(|id| branch.iter().position(|e| e.id() == id));
        let invalidating =
            branch.iter().rposition(|e| matches!(e, SessionEntry::ContextEdit(_) | SessionEntry::Compaction(_)));
        let valid = match (usage_pos, invalidating) {
            (Some(u), Some(inv)) => u > inv,
            (Some(_), None) => true,
            _ => false,
        };
        if valid {
            return estimate;
        }
    }
    let system = current_system_message(&messages);
    let mut tokens = system.map_or(0, |s| estimate_tokens(&AgentMessage::System(s.into())));
    tokens += messages.iter().filter(|m| m.role() != "system").map(|m| estimate_tokens(m)).sum::<u64>();
    ContextEstimate { tokens, usage_tokens: 0, trailing_tokens: tokens, last_usage_index: None }
}

/// Whether to compact: enabled and `context_tokens > context_window - reserve_tokens`.
///
/// ```
/// use pi_coding_agent::compaction::{should_compact, CompactionSettings};
/// let s = CompactionSettings::default();
/// assert!(!should_compact(100_000, 128_000, &s));
/// assert!(should_compact(111_617, 128_000, &s));
/// ```
pub fn should_compact(context_tokens: u64, context_window: u64, settings: &CompactionSettings) -> bool {
    settings.enabled && (context_tokens as i128) > context_window as i128 - settings.reserve_tokens as i128
}
