//! Session statistics (pi's `getSessionStats` and `getContextUsage`): counts and usage over
//! **every** entry of the file (compacted history and other branches included, since that is
//! what was billed), and the current context usage.

use pi_agent_core::AgentMessage;
use pi_ai::{StopReason, Usage};
use serde_json::{Map, Value, json};

use super::AgentSession;
use crate::compaction::{calculate_context_tokens, estimate_projected_context_tokens};
use crate::session::SessionEntry;

/// Token totals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenStats {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cache reads.
    pub cache_read: u64,
    /// Cache writes.
    pub cache_write: u64,
}

impl TokenStats {
    /// All four summed.
    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_write
    }
}

/// The current context usage (pi's `ContextUsage`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContextUsage {
    /// Estimated context tokens; `None` right after a compaction until the next response.
    pub tokens: Option<u64>,
    /// The model's context window.
    pub context_window: u64,
    /// `tokens / context_window * 100`.
    pub percent: Option<f64>,
}

/// pi's `SessionStats`.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionStats {
    /// The session file (persisted sessions).
    pub session_file: Option<String>,
    /// The session id.
    pub session_id: String,
    /// User messages.
    pub user_messages: usize,
    /// Assistant messages.
    pub assistant_messages: usize,
    /// Tool calls in assistant messages.
    pub tool_calls: usize,
    /// Tool results.
    pub tool_results: usize,
    /// Every `message` entry.
    pub total_messages: usize,
    /// Token totals.
    pub tokens: TokenStats,
    /// Total cost.
    pub cost: f64,
    /// The current context usage (none without a context window).
    pub context_usage: Option<ContextUsage>,
}

impl SessionStats {
    /// pi's wire shape.
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        if let Some(f) = &self.session_file {
            o.insert("sessionFile".into(), json!(f));
        }
        o.insert("sessionId".into(), json!(self.session_id));
        o.insert("userMessages".into(), json!(self.user_messages));
        o.insert("assistantMessages".into(), json!(self.assistant_messages));
        o.insert("toolCalls".into(), json!(self.tool_calls));
        o.insert("toolResults".into(), json!(self.tool_results));
        o.insert("totalMessages".into(), json!(self.total_messages));
        let t = &self.tokens;
        o.insert(
            "tokens".into(),
            json!({"input": t.input, "output": t.output, "cacheRead": t.cache_read, "cacheWrite": t.cache_write,
                   "total": t.total()}),
        );
        o.insert("cost".into(), json!(self.cost));
        if let Some(c) = &self.context_usage {
            o.insert(
                "contextUsage".into(),
                json!({"tokens": c.tokens, "contextWindow": c.context_window, "percent": c.percent}),
            );
        }
        Value::Object(o)
    }
}

fn add(tokens: &mut TokenStats, cost: &mut f64, usage: &Usage) {
    tokens.input += usage.input;
    tokens.output += usage.output;
    tokens.cache_read += usage.cache_read;
    tokens.cache_write += usage.cache_write;
    *cost += usage.cost.total;
}

impl AgentSession {
    /// pi's `getSessionStats`.
    pub fn get_session_stats(&self) -> SessionStats {
        let (mut user, mut assistant, mut calls, mut results, mut total) = (0, 0, 0, 0, 0);
        let mut tokens = TokenStats::default();
        let mut cost = 0.0;
        let (session_file, session_id) = {
            let sm = self.lock_session_manager();
            for entry in sm.entries() {
                match entry {
                    SessionEntry::Usage(u) => add(&mut tokens, &mut cost, &u.usage),
                    SessionEntry::BranchSummary(b) => {
                        if let Some(u) = &b.usage {
                            add(&mut tokens, &mut cost, u);
                        }
                    }
                    SessionEntry::Compaction(c) => {
                        if let Some(u) = &c.usage {
                            add(&mut tokens, &mut cost, u);
                        }
                    }
                    SessionEntry::Message(m) => {
                        total += 1;
                        match &m.message {
                            AgentMessage::User(_) => user += 1,
                            AgentMessage::ToolResult(r) => {
                                results += 1;
                                if let Some(u) = &r.usage {
                                    add(&mut tokens, &mut cost, u);
                                }
                            }
                            AgentMessage::Assistant(a) => {
                                assistant += 1;
                                calls += a.tool_calls().count();
                                add(&mut tokens, &mut cost, &a.usage);
                            }
                            _ => {}
                        }
                    }
                    _ => {}
                }
            }
            (sm.session_file().map(|p| p.display().to_string()), sm.session_id().to_owned())
        };
        SessionStats {
            session_file,
            session_id,
            user_messages: user,
            assistant_messages: assistant,
            tool_calls: calls,
            tool_results: results,
            total_messages: total,
            tokens,
            cost,
            context_usage: self.get_context_usage(),
        }
    }

    /// pi's `getContextUsage`: unknown (`tokens: None`) after a compaction until a response
    /// arrives after it.
    pub fn get_context_usage(&self) -> Option<ContextUsage> {
        // pi's `_limitsModel`: under a virtual selection, the model the latest response came from.
        let context_window = self.limits_model().context_window;
        if context_window == 0 {
            return None;
        }
        let sm = self.lock_session_manager();
        let branch = sm.get_branch(None);
        let projection = sm.build_session_projection();
        if let Some(index) = branch.iter().rposition(|e| matches!(e, SessionEntry::Compaction(_))) {
            let usable = |e: &SessionEntry| {
                e.as_message().and_then(|m| m.as_assistant()).is_some_and(|a| {
                    !matches!(a.stop_reason, StopReason::Aborted | StopReason::Error)
                        && calculate_context_tokens(&a.usage) > 0
                })
            };
            let projected: Vec<&str> =
                projection.entries.iter().filter(|p| usable(p.source)).map(|p| p.source.id()).collect();
            if !branch[index + 1..].iter().any(|e| projected.contains(&e.id())) {
                return Some(ContextUsage { tokens: None, context_window, percent: None });
            }
        }
        let tokens = estimate_projected_context_tokens(&projection, &branch).tokens;
        Some(ContextUsage {
            tokens: Some(tokens),
            context_window,
            percent: Some(tokens as f64 / context_window as f64 * 100.0),
        })
    }
}
