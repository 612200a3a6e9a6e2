//! The transcript owns the system prompt.
//!
//! There is no system-prompt setter anywhere in pi: the prompt and the tool set are a replay of
//! the transcript's system messages. The leading one is the prompt plus the initial tools; a later
//! one appends `content`, patches named `sections` (`None` deletes) and adds or removes tools.
//!
//! - [`replay`](current_system_message): [`current_system_message`], [`current_system_prompt`],
//!   [`current_tools`], [`declared_tools`];
//! - text: [`content_text`], [`system_message_text`], [`render_system_message_update`];
//! - tool state: [`to_tool_declaration`], [`tool_state_changes`],
//!   [`has_non_additive_tool_changes`], [`resolve_transcript_tools`];
//! - normalisation: [`normalize_context`] → [`TranscriptContext`] (the only way to build one),
//!   [`collapse_system_messages`] for providers without mid-conversation system messages.
//!
//! ```
//! use pi_ai::{Message, SystemMessage, UserMessage};
//! use pi_ai::transcript::current_system_prompt;
//!
//! let transcript = vec![
//!     Message::System(SystemMessage::new("You are terse.")
//!         .with_sections([("skills", Some("<skills>a</skills>".to_owned()))]).into()),
//!     Message::User(UserMessage::new("hi").into()),
//!     Message::System(SystemMessage::new("")
//!         .with_sections([("skills", Some("<skills>b</skills>".to_owned()))]).into()),
//! ];
//! assert_eq!(current_system_prompt(&transcript), "You are terse.\n\n<skills>b</skills>");
//! ```

mod normalize;
mod replay;
mod text;
mod tool_state;

pub use normalize::{
    TranscriptContext, collapse_system_messages, create_initial_system_message, initial_system_message,
    normalize_context, resolve_transcript, without_initial_system_message,
};
pub use replay::{
    TranscriptEntry, current_system_message, current_system_prompt, current_tools, declared_tools, is_system_message,
};
pub use text::{blocks_text, content_text, content_text_with, render_system_message_update, system_message_text};
pub use tool_state::{
    ResolvedTools, ToolChangeSupport, ToolStateChanges, declarations_equal, has_non_additive_tool_changes,
    resolve_transcript_tools, to_tool_declaration, tool_state_changes,
};
