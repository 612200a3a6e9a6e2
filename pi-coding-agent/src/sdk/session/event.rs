//! [`SessionEvent`]: everything an [`AgentSession`](super::AgentSession) tells its listeners, one
//! typed variant per record. pi's JSON shape of each is written by
//! [`crate::sdk::wire::JsonEventEncoder`], which the json and rpc modes use too.

use std::sync::Arc;

use pi_agent_core::AgentEvent;
use pi_ai::ThinkingLevel;

use super::compaction::CompactOutcome;
use crate::messages::{CodingAgentMessage, CodingMessage};
use crate::session::SessionEntry;

/// Why a compaction ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompactionReason {
    /// `compact()` was called (pi's `/compact`).
    Manual,
    /// The context passed the threshold after a turn.
    Threshold,
    /// The provider refused the request as too long.
    Overflow,
}

impl CompactionReason {
    /// pi's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            CompactionReason::Manual => "manual",
            CompactionReason::Threshold => "threshold",
            CompactionReason::Overflow => "overflow",
        }
    }

    /// Reads pi's spelling (anything unknown is `manual`).
    pub fn parse(text: &str) -> Self {
        match text {
            "threshold" => CompactionReason::Threshold,
            "overflow" => CompactionReason::Overflow,
            _ => CompactionReason::Manual,
        }
    }
}

/// pi's `compaction_end`.
#[derive(Clone, Debug, PartialEq)]
pub struct CompactionEnd {
    /// Why it ran.
    pub reason: CompactionReason,
    /// What it wrote (absent when it failed or was aborted).
    pub result: Option<CompactOutcome>,
    /// Whether it was aborted.
    pub aborted: bool,
    /// Whether the failed turn is retried after it.
    pub will_retry: bool,
    /// Why it failed.
    pub error_message: Option<String>,
}

/// An event of a session: the agent's events plus session-level ones.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)] // events are moved, not stored in bulk
pub enum SessionEvent {
    /// An agent event (`agent_start`, `message_update`, `tool_execution_end`, …); `agent_end` is
    /// [`SessionEvent::AgentEnd`].
    Agent(AgentEvent<CodingMessage>),
    /// A `tool_execution_*` event of a nested tool call (a tool's `ctx.executeTool`, such as a
    /// codemode script's): pi's event with `parentToolCallId`.
    NestedToolExecution {
        /// The id of the calling tool call.
        parent_tool_call_id: String,
        /// The `tool_execution_start` / `_update` / `_end` event.
        event: AgentEvent<CodingMessage>,
    },
    /// The agent's `agent_end` with pi's `willRetry`: auto-retry is about to retry the failed
    /// turn (retries enabled and left, no abort requested, the last assistant message failed with
    /// a retryable error).
    AgentEnd {
        /// The messages of the low-level run.
        messages: Vec<CodingAgentMessage>,
        /// Whether auto-retry will retry it.
        will_retry: bool,
    },
    /// A run settled (pi's `agent_settled`): no retry, compaction or queued message will
    /// continue it. Emitted after every run, including runs extensions started. The modes write
    /// it where they settle a prompt.
    AgentSettled {
        /// Whether the run was aborted.
        aborted: bool,
    },
    /// An entry was written to the session file (every entry; not one of pi's wire events).
    EntryPersisted {
        /// The entry id.
        id: String,
        /// The entry type (`message`, `custom`, `custom_message`, `context_edit`, …).
        entry_type: &'static str,
    },
    /// pi's `entry_appended`, for the entries pi announces: `custom` entries and the
    /// `context_edit`s hiding a failed attempt.
    EntryAppended {
        /// The entry.
        entry: Arc<SessionEntry>,
    },
    /// pi's `compaction_start`.
    CompactionStart {
        /// Why it runs.
        reason: CompactionReason,
    },
    /// pi's `compaction_end`.
    CompactionEnd(Box<CompactionEnd>),
    /// pi's `auto_retry_start`.
    AutoRetryStart {
        /// 1-based attempt.
        attempt: u32,
        /// `retry.maxRetries`.
        max_attempts: u32,
        /// The back-off before the attempt.
        delay_ms: u64,
        /// The failed request's error (`Unknown error` when it had none).
        error_message: String,
    },
    /// pi's `auto_retry_end`.
    AutoRetryEnd {
        /// Whether an attempt succeeded.
        success: bool,
        /// The last attempt.
        attempt: u32,
        /// Why the last attempt failed (`Retry cancelled` when cancelled).
        final_error: Option<String>,
    },
    /// pi's `queue_update`: the texts of the queued steering and follow-up messages.
    QueueUpdate {
        /// Steering texts.
        steering: Vec<String>,
        /// Follow-up texts.
        follow_up: Vec<String>,
    },
    /// pi's `bash_execution_update`: output of a user `!cmd` as it arrives.
    BashExecutionUpdate {
        /// The caller's id of the command.
        id: Option<String>,
        /// The new output.
        delta: String,
    },
    /// pi's `thinking_level_changed`.
    ThinkingLevelChanged {
        /// The new level.
        level: ThinkingLevel,
    },
    /// pi's `session_info_changed`.
    SessionInfoChanged {
        /// The session name now.
        name: Option<String>,
    },
}

impl SessionEvent {
    /// pi's `type` of the event (`message_update`, `compaction_end`, …; `entry_persisted` for
    /// [`SessionEvent::EntryPersisted`], which pi does not have).
    pub fn kind(&self) -> &'static str {
        match self {
            SessionEvent::Agent(e) => e.kind(),
            SessionEvent::NestedToolExecution { event, .. } => event.kind(),
            SessionEvent::AgentEnd { .. } => "agent_end",
            SessionEvent::AgentSettled { .. } => "agent_settled",
            SessionEvent::EntryPersisted { .. } => "entry_persisted",
            SessionEvent::EntryAppended { .. } => "entry_appended",
            SessionEvent::CompactionStart { .. } => "compaction_start",
            SessionEvent::CompactionEnd(_) => "compaction_end",
            SessionEvent::AutoRetryStart { .. } => "auto_retry_start",
            SessionEvent::AutoRetryEnd { .. } => "auto_retry_end",
            SessionEvent::QueueUpdate { .. } => "queue_update",
            SessionEvent::BashExecutionUpdate { .. } => "bash_execution_update",
            SessionEvent::ThinkingLevelChanged { .. } => "thinking_level_changed",
            SessionEvent::SessionInfoChanged { .. } => "session_info_changed",
        }
    }
}
