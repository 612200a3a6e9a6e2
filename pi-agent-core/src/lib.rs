//! # pi-agent-core: the agent loop of pi
//!
//! This layer turns pi-ai's one-request streaming API into an agent. It keeps a transcript of
//! [`AgentMessage`]s, which is **wider than what a model understands** (applications add roles of
//! their own), and before every provider request narrows it through two hooks, always in this
//! order and in exactly one place ([`agent_loop`]):
//!
//! ```text
//! AgentMessage[] → transform_context() → AgentMessage[] → convert_to_llm() → Message[] → LLM
//!                   (optional: prune, inject)               (required: filter, convert)
//! ```
//!
//! See [`hooks`] for the contract of each. The system prompt is not a field you set: it is a
//! replay of the transcript's system messages ([`AgentState::system_prompt`]); change it by
//! appending a system message. When the executable tools differ from what the transcript declares,
//! the next request first adds a system message with `toolsAdded` / `toolsRemoved`
//! ([`tool_diff`]).
//!
//! What this crate does not do: sessions on disk, extensions, built-in tools, terminals (those are
//! `pi-coding-agent` and `pi-tui`), or HTTP (that is `pi-ai`).
//!
//! ## Custom roles, both ways
//!
//! [`AgentMessage<C>`] is generic over the application's roles `C`:
//!
//! ```
//! use pi_agent_core::{AgentMessage, BoxError, CustomMessage, UnknownMessage};
//! use serde::{Deserialize, Serialize};
//!
//! // 1. Typed roles (the seed's `auditNote`), with a fallback for roles written by others.
//! #[derive(Clone, Debug, Serialize, Deserialize)]
//! #[serde(tag = "role", rename_all = "camelCase")]
//! enum MyRoles {
//!     AuditNote { text: String, level: String, timestamp: u64 },
//!     #[serde(untagged)]
//!     Other(UnknownMessage),
//! }
//! impl CustomMessage for MyRoles {
//!     fn role(&self) -> &str {
//!         match self { MyRoles::AuditNote { .. } => "auditNote", MyRoles::Other(u) => u.role() }
//!     }
//! }
//! let note: AgentMessage<MyRoles> = AgentMessage::Custom(MyRoles::AuditNote {
//!     text: "skipped 3 generated files".into(), level: "info".into(), timestamp: 1,
//! });
//!
//! // 2. No declaration at all: unknown roles are kept as raw JSON.
//! let raw: AgentMessage = serde_json::from_str(r#"{"role":"notification","text":"hi","timestamp":1}"#).unwrap();
//! assert_eq!(raw.role(), "notification");
//! ```
//!
//! Either way, without a converter that handles them, custom roles are **silently dropped** by
//! [`DefaultConvertToLlm`] and never reach the model.

#![cfg_attr(not(test), warn(clippy::unwrap_used))]
#![warn(clippy::print_stdout, clippy::print_stderr)]

mod agent;
pub mod agent_loop;
mod event;
pub mod hooks;
mod message;
mod sink;
mod stream_fn;
mod tool;
pub mod tool_diff;
mod tool_exec;
mod tool_hooks;
mod turn_hooks;
mod typed_tool;

pub use agent::{
    AbortHandle, Agent, AgentBuilder, AgentError, AgentState, PromptInput, QueueMode, StreamingMessage, Unsubscribe,
    WeakAgent,
};
pub use agent_loop::{
    AgentContext, AgentLoopConfig, AgentLoopError, EventSink, FnSink, run_agent_loop, run_agent_loop_continue,
};
pub use event::AgentEvent;
pub use hooks::{BoxError, ConvertToLlm, DefaultConvertToLlm, TransformContext, default_convert_to_llm};
pub use message::{AgentMessage, CustomMessage, UnknownMessage};
pub use stream_fn::{StreamFn, provider_stream_fn};
pub use tool::{AgentTool, AgentToolResult, ExecutionMode, LoadoutChanges, ToolContext, ToolError};
pub use tool_exec::ToolExecution;
pub use tool_hooks::{
    AfterToolCallContext, AfterToolCallResult, BeforeToolCallContext, BeforeToolCallResult, ToolCallHooks,
};
pub use turn_hooks::{AgentTurnContext, NextTurnUpdate, PrepareRequestContext, RequestUpdate, TurnDecision, TurnHooks};
pub use typed_tool::{Typed, TypedTool};
