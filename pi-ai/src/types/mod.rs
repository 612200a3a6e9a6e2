//! The message model: content blocks, messages, usage, tools, models and the request context.
//!
//! Every type serializes exactly as pi 1.6.0's JSON: camelCase keys, `role`/`type` tags, optional
//! fields omitted, unknown fields kept in `extra`, and the key order of a value that was read kept
//! for writing it back.

mod content;
mod message;
mod model;
mod sections;
mod shared;
mod tool;
mod usage;

pub use content::{
    AssistantBlock, Content, ImageContent, MaybeText, TextContent, ThinkingContent, ToolCall, UserBlock,
};
pub use message::{AssistantMessage, Message, SystemMessage, ToolResultMessage, UserMessage, now_ms};
pub use model::{Context, Model, ModelCost};
pub use sections::Sections;
pub use shared::Shared;
pub use tool::{Tool, ToolReference};
pub use usage::{Cost, StopReason, ThinkingLevel, Usage};
