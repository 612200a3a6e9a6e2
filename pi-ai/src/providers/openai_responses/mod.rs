//! `openai-responses`: OpenAI's Responses API over HTTP (`POST {baseUrl}/responses`), used by all
//! first-party OpenAI models.
//!
//! - Request: [`build_body`]: instructions as `developer` (reasoning models) or `system` items,
//!   same-model reasoning items replayed verbatim from `thinkingSignature`, text items with their
//!   stored ids (`msg_pi_<n>` otherwise), `function_call` / `function_call_output` items,
//!   `reasoning: {effort, summary: "auto"}` plus `include: ["reasoning.encrypted_content"]`.
//! - Response: [`ResponsesStream`]: one slot per `output_index`; `response.completed` /
//!   `response.incomplete` carry the status, usage and id; stop with tool calls becomes toolUse.
//!
//! Grammar tools (`constrainedSampling: {type: "grammar"}` with `compat.supportsOpenAIGrammarTools`)
//! go as `custom` tools; their calls stream as `custom_tool_call` items and replay as such.
//!
//! Not ported: `additional_tools`, tool search,
//! `configuration_update`, service tiers or websockets.

mod request;
mod stream;
mod wire;

pub use request::{
    ResponsesCompat, ResponsesCompatOverrides, build_body, convert_messages, convert_tools, normalize_tool_call_id,
    reasoning_effort, resolve_compat,
};
pub(crate) use stream::ResponsesDelta;
pub use stream::{ResponsesStream, map_stop_reason};

/// Shared with the other Responses-family APIs (`azure-openai-responses`, `openai-codex-responses`).
pub(crate) use request::build_body_parts;
/// Shared with the other Responses-family APIs.
pub(crate) use wire::{Extras, convert as convert_items, convert_with as convert_items_with, handoff, handoff_plan};

use crate::http::body::BodyContext;
use crate::http::{ErrorStyle, HeaderMap, HttpRequest, ProviderOutput, StreamContext, stream_sse, user_agent};
use crate::options::{CacheRetention, StreamOptions};
use crate::provider::ApiProvider;
use crate::stream::AssistantMessageEventStream;
use crate::transcript::TranscriptContext;
use crate::types::Model;

/// The API id.
pub const API: &str = "openai-responses";

/// The `openai-responses` provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenAiResponses;

/// The declared grammar tools' input properties (name → property), for parsing their calls
/// back into arguments; empty when the model's compat has no grammar tools. (A declaration error
/// is reported by the request build, not here.)
pub(crate) fn grammar_tool_properties(
    model: &Model,
    context: &TranscriptContext,
) -> std::collections::HashMap<String, String> {
    crate::providers::constrained::grammar_input_properties(
        &crate::transcript::declared_tools(context.messages()),
        resolve_compat(model).supports_openai_grammar_tools,
    )
    .unwrap_or_default()
}

impl ApiProvider for OpenAiResponses {
    fn api(&self) -> &str {
        API
    }

    fn stream(&self, model: &Model, context: TranscriptContext, options: StreamOptions) -> AssistantMessageEventStream {
        let out = ProviderOutput::new(model);
        let grammar = grammar_tool_properties(model, &context);
        let request = build_request_from(model, BodyContext::Owned(std::sync::Arc::new(context)), &options);
        let ctx = StreamContext { model: model.clone(), options };
        let handler = ResponsesStream::new().with_grammar_tools(grammar);
        stream_sse(ctx, out, request, ErrorStyle::responses(&model.provider), handler)
    }
}

/// Builds the complete request (URL, headers, body), or the setup error text.
pub fn build_request(
    model: &Model,
    context: TranscriptContext,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    build_request_ref(model, &context, options)
}

/// [`build_request`] from a borrowed transcript (nothing in it is copied or moved).
pub fn build_request_ref(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    build_request_from(model, BodyContext::Borrowed(context), options)
}

/// The request from a borrowed transcript (the body built whole) or one the request owns (a large
/// body written into the connection as it is produced).
fn build_request_from(model: &Model, context: BodyContext<'_>, options: &StreamOptions) -> Result<HttpRequest, String> {
    let key = match options.api_key.as_ref().filter(|k| !k.is_empty()) {
        Some(key) => key.clone(),
        None => {
            let has = |name: &str| {
                options
                    .headers
                    .iter()
                    .any(|(k, v)| k.eq_ignore_ascii_case(name) && v.as_ref().is_some_and(|v| !v.trim().is_empty()))
            };
            if has("authorization") || has("cf-aig-authorization") {
                "unused".to_owned()
            } else {
                return Err(format!("No API key for provider: {}", model.provider));
            }
        }
    };
    let compat = resolve_compat(model);
    let declared = crate::transcript::declared_tools(context.get().messages());
    crate::providers::constrained::check_tools(&declared, compat.supports_strict_mode, None)?;
    crate::providers::constrained::check_grammar_tools(
        context.get().messages(),
        &declared,
        compat.supports_openai_grammar_tools,
    )?;
    let size_hint = crate::http::body::size_hint_for(context.get().messages().len());
    let (owned_model, owned_options, owned_compat) = (model.clone(), options.clone(), compat.clone());
    let memo = crate::http::body::HandoffMemo::default();
    let (body, source) = crate::http::body::request_body(&context, size_hint, move |context, out, flush| {
        write_body(&owned_model, context, &owned_options, &owned_compat, &memo, out, flush)
    })?;
    let context = context.get();
    let mut headers = HeaderMap::new();
    headers.set("Accept", "application/json");
    headers.set("Content-Type", "application/json");
    headers.set("Authorization", format!("Bearer {key}"));
    headers.set("User-Agent", user_agent());
    if let Some(h) = &model.headers {
        headers.merge_json(h);
    }
    crate::providers::copilot_headers::apply(&mut headers, &model.provider, context.messages());
    let cache_on = options.cache_retention.unwrap_or_else(CacheRetention::from_env) != CacheRetention::None;
    if let Some(session) = options.session_id.as_ref().filter(|_| cache_on) {
        if compat.session_affinity_format == "openrouter" {
            headers.set("x-session-id", session.clone());
        } else {
            if compat.session_affinity_format == "openai" {
                headers.set("session-id", session.clone());
            }
            headers.set("x-client-request-id", session.clone());
        }
    }
    headers.merge(options.headers.iter().map(|(k, v)| (k.as_str(), v.clone())));
    let url = format!("{}/responses", model.base_url.trim_end_matches('/'));
    Ok(HttpRequest { url, headers, body, source })
}

/// Writes the JSON body into `out`, calling `flush` between input items.
fn write_body(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
    compat: &ResponsesCompat,
    memo: &crate::http::body::HandoffMemo,
    out: &mut Vec<u8>,
    flush: &mut dyn FnMut(&mut Vec<u8>),
) -> Result<(), String> {
    let supports_mid = compat.supports_mid_convo_system_messages;
    let head = crate::http::body::collapsed_head(context.messages(), supports_mid);
    let view = crate::http::body::resolved_view(context.messages(), &head, supports_mid);
    let handed_off = memo.handed_off(&view, || wire::handoff_plan(model, &view));
    let (fields, items) = request::build_body_parts(model, &view, &handed_off, options, compat);
    crate::http::body::encode_body_flushing(&fields, "input", &items, out, flush)
}
