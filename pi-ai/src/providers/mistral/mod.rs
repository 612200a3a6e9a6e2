//! `mistral-conversations`: Mistral's native chat completions (`POST {baseUrl}/v1/chat/completions`),
//! as pi 1.6.0 calls it with `fetch`.
//!
//! - Request: the transcript collapsed into a leading system message unless the model's compat
//!   sets `supportsMidConvoSystemMessages` (later ones are then rendered as updates in place),
//!   chat messages (thinking replayed as `thinking` chunks, tool calls with `index: 0`, images
//!   as data URLs), tools with `strict` (opt-in through `supportsStrictMode`), `reasoning_effort`
//!   from the model's thinking-level map or `prompt_mode: "reasoning"`, and the session id as
//!   `prompt_cache_key` plus the `x-affinity` header.
//! - Response: [`MistralStream`]: string or chunked `content` deltas, thinking chunks, tool calls
//!   keyed by `index` and closed at the end of the stream; `[DONE]` ends it.
//! - Foreign tool-call ids become Mistral's nine alphanumerics (a stable hash when they do not
//!   fit). pi does not retry Mistral requests, so neither do we.

mod stream;
mod wire;

pub use stream::{MistralStream, map_stop_reason};

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::http::body::BodyContext;
use crate::http::{ErrorStyle, HeaderMap, HttpRequest, ProviderOutput, StreamContext, stream_sse, user_agent};
use crate::models::clamp_thinking_level;
use crate::options::{CacheRetention, StreamOptions, ToolChoice};
use crate::provider::ApiProvider;
use crate::stream::AssistantMessageEventStream;
use crate::transcript::TranscriptContext;
use crate::types::{Model, ThinkingLevel, Tool};

/// The API id.
pub const API: &str = "mistral-conversations";
const ID_LENGTH: usize = 9;

/// The `mistral-conversations` provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct MistralConversations;

impl ApiProvider for MistralConversations {
    fn api(&self) -> &str {
        API
    }

    fn stream(
        &self,
        model: &Model,
        context: TranscriptContext,
        mut options: StreamOptions,
    ) -> AssistantMessageEventStream {
        options.max_retries = 0;
        let out = ProviderOutput::new(model);
        let request = build_request_from(model, BodyContext::Owned(std::sync::Arc::new(context)), &options);
        let ctx = StreamContext { model: model.clone(), options };
        stream_sse(ctx, out, request, ErrorStyle::Mistral, MistralStream::new())
    }
}

/// One attempt of pi's `deriveMistralToolCallId`.
pub fn derive_tool_call_id(id: &str, attempt: u32) -> String {
    let normalized: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    if attempt == 0 && normalized.len() == ID_LENGTH {
        return normalized;
    }
    let base = if normalized.is_empty() { id } else { &normalized };
    let seed = if attempt == 0 { base.to_owned() } else { format!("{base}:{attempt}") };
    crate::handoff::short_hash(&seed).chars().filter(char::is_ascii_alphanumeric).take(ID_LENGTH).collect()
}

/// pi's per-request id normaliser: each foreign id maps to a distinct Mistral id.
#[derive(Debug, Default)]
struct IdNormalizer {
    forward: HashMap<String, String>,
    reverse: HashMap<String, String>,
}

impl IdNormalizer {
    fn normalize(&mut self, id: &str) -> String {
        if let Some(existing) = self.forward.get(id) {
            return existing.clone();
        }
        let mut attempt = 0;
        loop {
            let candidate = derive_tool_call_id(id, attempt);
            if self.reverse.get(&candidate).is_none_or(|owner| owner == id) {
                self.forward.insert(id.to_owned(), candidate.clone());
                self.reverse.insert(candidate.clone(), id.to_owned());
                return candidate;
            }
            attempt += 1;
        }
    }
}

/// `reasoning_effort` and `prompt_mode` as pi's `streamSimple` picks them.
pub fn reasoning_fields(model: &Model, options: &StreamOptions) -> (Option<Value>, Option<&'static str>) {
    let level = options.reasoning.map(|l| clamp_thinking_level(model, l)).filter(|l| *l != ThinkingLevel::Off);
    let map = model.thinking_level_map.as_ref().filter(|_| model.reasoning);
    let effort = match map {
        Some(map) => match level {
            Some(level) => {
                Some(map.get(level.as_str()).filter(|v| !v.is_null()).cloned().unwrap_or_else(|| json!("high")))
            }
            None => map.get("off").filter(|v| !v.is_null()).cloned(),
        },
        None => None,
    };
    let prompt_mode = (model.reasoning && map.is_none() && level.is_some()).then_some("reasoning");
    (effort.filter(|e| e.as_str() != Some("")), prompt_mode)
}

fn convert_tools(tools: &[Tool], supports_strict: bool) -> Value {
    Value::Array(
        tools
            .iter()
            .map(|tool| {
                let (strict, parameters) = crate::providers::constrained::tool_parameters(tool, supports_strict, None);
                json!({"type": "function", "function": {"name": tool.name, "description": tool.description, "parameters": parameters, "strict": strict}})
            })
            .collect(),
    )
}

fn compat_flag(model: &Model, name: &str) -> Option<bool> {
    model.compat.as_ref().and_then(|c| c.get(name)).and_then(Value::as_bool)
}

fn uses_prompt_caching(options: &StreamOptions) -> Option<&str> {
    let retention = options.cache_retention.unwrap_or_else(CacheRetention::from_env);
    options.session_id.as_deref().filter(|s| retention != CacheRetention::None && !s.is_empty())
}

/// Builds the complete request (URL, headers, body), or the setup error text.
pub fn build_request_ref(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    build_request_from(model, BodyContext::Borrowed(context), options)
}

/// [`build_request_ref`] from a borrowed transcript (the body built whole) or one the request
/// owns (a large body written into the connection as it is produced).
fn build_request_from(model: &Model, context: BodyContext<'_>, options: &StreamOptions) -> Result<HttpRequest, String> {
    let key = options
        .api_key
        .clone()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| format!("No API key for provider: {}", model.provider))?;
    let supports_strict = compat_flag(model, "supportsStrictMode").unwrap_or(false);
    let current = crate::transcript::current_tools(context.get().messages());
    crate::providers::constrained::check_tools(&current, supports_strict, None)?;
    let size_hint = crate::http::body::size_hint_for(context.get().messages().len());
    let (owned_model, owned_options) = (model.clone(), options.clone());
    let memo = crate::http::body::HandoffMemo::default();
    let (body, source) = crate::http::body::request_body(&context, size_hint, move |context, out, flush| {
        write_body(&owned_model, context, &owned_options, &memo, out, flush)
    })?;
    let session = uses_prompt_caching(options);
    let mut headers = HeaderMap::new();
    headers.set("User-Agent", user_agent());
    headers.set("accept", "text/event-stream");
    headers.set("authorization", format!("Bearer {key}"));
    headers.set("content-type", "application/json");
    if let Some(h) = &model.headers {
        headers.merge_json(h);
    }
    headers.merge(options.headers.iter().map(|(k, v)| (k.as_str(), v.clone())));
    let explicit_affinity =
        model.headers.as_ref().is_some_and(|h| h.keys().any(|k| k.eq_ignore_ascii_case("x-affinity")))
            || options.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("x-affinity"));
    if let Some(session) = session.filter(|_| !explicit_affinity) {
        headers.set("x-affinity", session.to_owned());
    }
    let url = format!("{}/v1/chat/completions", model.base_url.trim_end_matches('/'));
    Ok(HttpRequest { url, headers, body, source })
}

/// Writes the JSON body into `out`, calling `flush` between messages.
fn write_body(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
    memo: &crate::http::body::HandoffMemo,
    out: &mut Vec<u8>,
    flush: &mut dyn FnMut(&mut Vec<u8>),
) -> Result<(), String> {
    let supports_mid = compat_flag(model, "supportsMidConvoSystemMessages").unwrap_or(false);
    let supports_strict = compat_flag(model, "supportsStrictMode").unwrap_or(false);
    let messages = context.messages();
    let current = crate::transcript::current_tools(messages);
    let head = crate::http::body::collapsed_head(messages, supports_mid);
    let view = crate::http::body::resolved_view(messages, &head, supports_mid);
    let handed_off = memo.handed_off(&view, || {
        let ids = RefCell::new(IdNormalizer::default());
        crate::http::shared::plan_for_model(&view, model, &|id, _| ids.borrow_mut().normalize(id))
    });
    let wire_messages = wire::convert(&handed_off, model.supports_images());
    let mut p = Map::new();
    p.insert("model".into(), json!(model.id));
    p.insert("stream".into(), json!(true));
    p.insert("messages".into(), Value::Null);
    if !current.is_empty() {
        p.insert("tools".into(), convert_tools(&current, supports_strict));
    }
    if let Some(t) = options.temperature {
        p.insert("temperature".into(), json!(t));
    }
    if let Some(max) = options.max_tokens {
        p.insert("max_tokens".into(), json!(max));
    }
    if let Some(choice) = options.tool_choice {
        p.insert("tool_choice".into(), json!(if choice == ToolChoice::Auto { "auto" } else { "none" }));
    }
    let (effort, prompt_mode) = reasoning_fields(model, options);
    if let Some(effort) = effort {
        p.insert("reasoning_effort".into(), effort);
    }
    if let Some(mode) = prompt_mode {
        p.insert("prompt_mode".into(), json!(mode));
    }
    let session = uses_prompt_caching(options);
    if let Some(session) = session {
        p.insert("prompt_cache_key".into(), json!(session));
    }
    crate::http::body::encode_body_flushing(&p, "messages", &wire_messages, out, flush)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_fit_mistral() {
        assert_eq!(derive_tool_call_id("abc_DEF-12", 0), "abcDEF12".chars().collect::<String>().pipe_hash());
        assert_eq!(derive_tool_call_id("a1b2c3d4e", 0), "a1b2c3d4e");
        let mut n = IdNormalizer::default();
        let a = n.normalize("toolu_01A.b|c");
        assert_eq!(a.len(), 9);
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_eq!(n.normalize("toolu_01A.b|c"), a);
    }

    trait PipeHash {
        fn pipe_hash(self) -> String;
    }

    impl PipeHash for String {
        fn pipe_hash(self) -> String {
            crate::handoff::short_hash(&self).chars().take(ID_LENGTH).collect()
        }
    }
}
