//! `openai-completions`: OpenAI Chat Completions over HTTP (`POST {baseUrl}/chat/completions`),
//! spoken by OpenAI, llama.cpp, Ollama, vLLM, LM Studio, SGLang, OpenRouter, Groq, DeepSeek, xAI
//! and most other servers.
//!
//! - Request: [`build_body`] (pi's `buildParams` + `convertMessages`), with the server quirks of
//!   [`CompletionsCompat`] detected from provider and base URL and overridden by `model.compat`.
//! - Response: [`CompletionsStream`] turns the SSE chunks into events. At most one thinking and one
//!   text block plus tool calls (matched by `index`, then `id`); every `*_end` comes after the
//!   stream ended, in content order.
//!
//! Mid-conversation system messages are collapsed into the first one unless
//! `compat.supportsMidConvoSystemMessages` is set.

mod chunk;
mod compat;
mod request;
mod stream;
mod wire;

pub use compat::{CompletionsCompat, CompletionsCompatOverrides, detect_compat, resolve_compat};
pub use request::{build_body, convert_messages, convert_tools, normalize_tool_call_id, reasoning_effort};
pub use stream::{CompletionsStream, map_stop_reason, parse_usage};

use crate::http::{ErrorStyle, HeaderMap, HttpRequest, ProviderOutput, StreamContext, stream_sse, user_agent};
use crate::options::StreamOptions;
use crate::provider::ApiProvider;
use crate::stream::AssistantMessageEventStream;
use crate::transcript::TranscriptContext;
use crate::types::Model;

/// The API id.
pub const API: &str = "openai-completions";

/// The `openai-completions` provider.
///
/// ```no_run
/// # async fn demo(model: pi_ai::Model) {
/// use pi_ai::ApiProvider;
/// use pi_ai::providers::openai_completions::OpenAiCompletions;
/// use pi_ai::transcript::normalize_context;
/// let context = normalize_context(pi_ai::Context {
///     messages: vec![pi_ai::Message::User(pi_ai::UserMessage::new("hi").into())],
///     ..Default::default()
/// });
/// let options = pi_ai::options::StreamOptions { api_key: Some("sk-…".into()), ..Default::default() };
/// let reply = OpenAiCompletions.stream(&model, context, options).result().await;
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenAiCompletions;

impl ApiProvider for OpenAiCompletions {
    fn api(&self) -> &str {
        API
    }

    fn stream(&self, model: &Model, context: TranscriptContext, options: StreamOptions) -> AssistantMessageEventStream {
        let compat = resolve_compat(model);
        let out = ProviderOutput::new(model);
        let grammar = crate::providers::constrained::grammar_input_properties(
            &crate::transcript::declared_tools(context.messages()),
            compat.supports_openai_grammar_tools,
        )
        .unwrap_or_default();
        let request = build_request_streamed(model, context, &options, &compat);
        let ctx = StreamContext { model: model.clone(), options };
        let handler = CompletionsStream::new(compat).with_grammar_tools(grammar);
        stream_sse(ctx, out, request, ErrorStyle::OpenAiCompletions, handler)
    }
}

/// pi's `getClientApiKey`: the key, or `"unused"` when the caller set an `Authorization` header.
fn client_api_key(model: &Model, options: &StreamOptions) -> Result<String, String> {
    if let Some(key) = options.api_key.as_ref().filter(|k| !k.is_empty()) {
        return Ok(key.clone());
    }
    let has = |name: &str| {
        options
            .headers
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case(name) && v.as_ref().is_some_and(|v| !v.trim().is_empty()))
    };
    if has("authorization") || has("cf-aig-authorization") {
        return Ok("unused".to_owned());
    }
    Err(format!("No API key for provider: {}", model.provider))
}

/// Builds the complete request (URL, headers, body), or the setup error text.
pub fn build_request(
    model: &Model,
    context: TranscriptContext,
    options: &StreamOptions,
    compat: &CompletionsCompat,
) -> Result<HttpRequest, String> {
    build_request_ref(model, &context, options, compat)
}

/// [`build_request`] from a borrowed transcript (nothing in it is copied or moved).
pub fn build_request_ref(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
    compat: &CompletionsCompat,
) -> Result<HttpRequest, String> {
    let key = check_request(model, context, options, compat)?;
    let size_hint = crate::http::body::size_hint_for(context.messages().len());
    let mut body = Vec::with_capacity(size_hint);
    write_body(model, context, options, compat, &Default::default(), &mut body, &mut |_| {})?;
    let (url, headers) = request_head(model, context.messages(), options, compat, &key);
    Ok(HttpRequest::new(url, headers, body.into()))
}

/// The request [`OpenAiCompletions::stream`] sends: as [`build_request`], but a large body is
/// not built whole: it is written into the connection as it is produced (the same bytes), from the
/// transcript the request owns (see [`crate::http::BodySource`]).
fn build_request_streamed(
    model: &Model,
    context: TranscriptContext,
    options: &StreamOptions,
    compat: &CompletionsCompat,
) -> Result<HttpRequest, String> {
    let key = check_request(model, &context, options, compat)?;
    let (url, headers) = request_head(model, context.messages(), options, compat, &key);
    let (owned_model, owned_options, owned_compat) = (model.clone(), options.clone(), compat.clone());
    let memo = crate::http::body::HandoffMemo::default();
    let (body, source) = crate::http::body::encode_or_defer(move |out, flush| {
        write_body(&owned_model, &context, &owned_options, &owned_compat, &memo, out, flush)
    })?;
    Ok(HttpRequest { url, headers, body, source })
}

/// The checks before a body is built; the API key.
fn check_request(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
    compat: &CompletionsCompat,
) -> Result<String, String> {
    let key = client_api_key(model, options)?;
    let declared = crate::transcript::declared_tools(context.messages());
    crate::providers::constrained::check_tools(&declared, compat.supports_strict_mode, None)?;
    crate::providers::constrained::check_grammar_tools(
        context.messages(),
        &declared,
        compat.supports_openai_grammar_tools,
    )?;
    Ok(key)
}

/// Writes the JSON body into `out`, calling `flush` between messages.
fn write_body(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
    compat: &CompletionsCompat,
    memo: &crate::http::body::HandoffMemo,
    out: &mut Vec<u8>,
    flush: &mut dyn FnMut(&mut Vec<u8>),
) -> Result<(), String> {
    let head = crate::http::body::collapsed_head(context.messages(), compat.supports_mid_convo_system_messages);
    let view = crate::http::body::resolved_view(context.messages(), &head, compat.supports_mid_convo_system_messages);
    let handed_off = memo.handed_off(&view, || request::handoff_plan(model, &view));
    let (fields, messages) = request::build_body_parts(model, &view, &handed_off, options, compat);
    crate::http::body::encode_body_flushing(&fields, "messages", &messages, out, flush)
}

/// The URL and headers (`messages` for Copilot's per-request headers).
fn request_head(
    model: &Model,
    messages: &[crate::types::Message],
    options: &StreamOptions,
    compat: &CompletionsCompat,
    key: &str,
) -> (String, HeaderMap) {
    let mut headers = HeaderMap::new();
    headers.set("Accept", "application/json");
    headers.set("Content-Type", "application/json");
    headers.set("Authorization", format!("Bearer {key}"));
    headers.set("User-Agent", user_agent());
    if let Some(h) = &model.headers {
        headers.merge_json(h);
    }
    crate::providers::copilot_headers::apply(&mut headers, &model.provider, messages);
    let cache_off = options.cache_retention.unwrap_or_else(crate::options::CacheRetention::from_env)
        == crate::options::CacheRetention::None;
    if let Some(session) = options.session_id.as_ref().filter(|_| !cache_off && compat.send_session_affinity_headers) {
        if compat.session_affinity_format == "openrouter" {
            headers.set("x-session-id", session.clone());
        } else {
            if compat.session_affinity_format == "openai" {
                headers.set("session_id", session.clone());
            }
            headers.set("x-client-request-id", session.clone());
            headers.set("x-session-affinity", session.clone());
        }
    }
    headers.merge(options.headers.iter().map(|(k, v)| (k.as_str(), v.clone())));
    let url = format!("{}/chat/completions", model.base_url.trim_end_matches('/'));
    (url, headers)
}
