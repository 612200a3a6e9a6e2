//! Provider implementations, one module per wire protocol.

pub mod anthropic;
pub mod openai_completions;
