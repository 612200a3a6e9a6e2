//! Session events as pi's JSON wire records: the SDK's one serializer
//! ([`crate::sdk::wire`]), shared by the json and rpc modes and SDK users.

pub use crate::sdk::wire::{JsonEventEncoder, agent_settled, assistant_event_json, tool_result_json};
