//! # pi-ai: the unified LLM layer of pi
//!
//! pi keeps a transcript of messages and talks to many model providers through one streaming
//! API. This crate is that layer and nothing above it: the message model, the rule that the
//! **transcript owns the system prompt**, and (in later modules) the streaming protocol and the
//! providers. It knows nothing of agents, tools that execute, sessions or terminals; those live
//! in `pi-agent-core` and `pi-coding-agent`.
//!
//! ## Main types
//!
//! - Messages a model understands: [`Message`] = [`SystemMessage`] | [`UserMessage`] |
//!   [`AssistantMessage`] | [`ToolResultMessage`], with content blocks [`TextContent`],
//!   [`ThinkingContent`], [`ImageContent`] and [`ToolCall`]. They serialize exactly as pi 1.6.0's
//!   JSON (camelCase, `role`/`type` tags, optional fields omitted, unknown fields and key order
//!   kept). Each variant holds its struct behind [`Shared`] (a reference count, copied on write),
//!   so a transcript is copied by copying pointers; build variants with `.into()`.
//! - [`transcript`]: the system-head replay ([`transcript::current_system_message`]) and
//!   [`transcript::normalize_context`], the only constructor of the
//!   [`transcript::TranscriptContext`] that providers receive.
//! - [`AssistantMessageEventStream`]: one streamed response, events plus the final message.
//!
//! ## The system prompt is a replay
//!
//! There is no setter for the system prompt. The first system message is the prompt and the
//! initial tools; later system messages append content, patch named `sections` and add or remove
//! tools. Replay gives the current head:
//!
//! ```
//! use pi_ai::{Message, SystemMessage, UserMessage};
//! use pi_ai::transcript::current_system_message;
//!
//! let transcript = vec![
//!     Message::System(SystemMessage::new("Base prompt.")
//!         .with_sections([("skills", Some("<skills>old</skills>".to_owned()))]).into()),
//!     Message::User(UserMessage::new("hi").into()),
//!     Message::System(SystemMessage::new("")
//!         .with_sections([("skills", Some("<skills>new</skills>".to_owned()))]).into()),
//! ];
//! let head = current_system_message(&transcript).unwrap();
//! assert_eq!(head.sections.unwrap().get("skills"), Some(Some("<skills>new</skills>")));
//! ```

#![cfg_attr(not(test), warn(clippy::unwrap_used))]
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod cache_warming;
pub mod classify;
pub mod handoff;
pub mod http;
pub mod images;
pub mod js;
pub mod json;
pub mod models;
pub mod options;
pub mod provider;
pub mod providers;
pub mod registry;
pub mod session_resources;
pub mod sse;
pub mod stream;
pub mod tool_args;
pub mod transcript;
pub mod types;
pub mod validate;

pub use provider::ApiProvider;
pub use stream::{AssistantMessageEvent, AssistantMessageEventStream, PartialMessage};
pub use types::*;
