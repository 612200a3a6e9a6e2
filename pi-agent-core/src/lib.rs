//! # pi-agent-core: the agent loop of pi (under construction)
//!
//! This layer turns pi-ai's one-request streaming API into an agent: a transcript of
//! `AgentMessage`s wider than what a model understands, the two hooks that narrow it for each
//! request (`transform_context`, then `convert_to_llm`), tools with their execution rules, and the
//! event stream a UI follows. So far it holds the [`AgentTool`] trait.

#![cfg_attr(not(test), warn(clippy::unwrap_used))]
#![warn(clippy::print_stdout, clippy::print_stderr)]

mod message;
mod tool;

pub use message::{AgentMessage, CustomMessage, UnknownMessage};
pub use tool::{AgentTool, AgentToolResult, ExecutionMode, ToolContext, ToolError};
