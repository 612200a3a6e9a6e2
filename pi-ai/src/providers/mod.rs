//! Provider implementations, one module per wire protocol.

pub mod openai_completions;
