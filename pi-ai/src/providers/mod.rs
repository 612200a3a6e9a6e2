//! Provider implementations, one module per wire protocol.

pub mod anthropic;
pub mod faux;
pub mod openai_completions;
