//! `openai-codex-responses`: ChatGPT's Codex backend (`POST {baseUrl}/codex/responses`), the
//! Responses protocol with a ChatGPT login token, built on the `openai-responses` code.
//!
//! - Headers: `Authorization: Bearer <token>`, `chatgpt-account-id` read from the token's
//!   `https://api.openai.com/auth` claim, `originator: pi`, `OpenAI-Beta: responses=experimental`,
//!   and the session id as `session-id` / `x-client-request-id`.
//! - Body: the system prompt as a leading developer/system item, `text.verbosity: "low"`,
//!   `include: ["reasoning.encrypted_content"]`, `tool_choice` (default `auto`),
//!   `parallel_tool_calls: true`, tools with `strict: true` or `null`, and reasoning always stated
//!   for reasoning models (`effort: "none"` when off).
//! - Model compat flags no catalog model sets yet, as pi: tool changes in place
//!   ([`tool_support`]: `additional_tools` items with their incremental and removal notices, or
//!   synthetic `tool_search_call` / `tool_search_output` items), and `configuration_update` items
//!   carrying the effort (`supportsMidConvoEffort`: before each same-model answer with its
//!   `providerThinkingLevel` and at the end, `reasoning.effort` then fixed at `medium`).
//! - Response: [`CodexStream`]: Codex's `error` and `response.failed` events become errors,
//!   `response.done` / `response.incomplete` count as `response.completed`, then the Responses
//!   stream parser does the rest.
//!
//! Transport ([`StreamOptions::transport`]): SSE with a zstd-compressed body
//! (`content-encoding: zstd`), or with `websocket` / `websocket-cached` / `auto` first the
//! WebSocket of [`websocket`] (uncompressed `response.create` frames), falling back to SSE when
//! the socket cannot be used before the answer started (see [`transport`]).

use base64::Engine;
use serde_json::{Map, Value, json};

use crate::http::{HeaderMap, HttpRequest, ProviderOutput, SseHandler, StreamContext, user_agent};
use crate::models::clamp_thinking_level;
use crate::options::{CacheRetention, StreamOptions, ToolChoice};
use crate::provider::ApiProvider;
use crate::providers::openai_responses::{self, ResponsesDelta, ResponsesStream};
use crate::sse::{SseEvent, SseEventRef};
use crate::stream::AssistantMessageEventStream;

pub mod transport;
pub mod websocket;

use crate::transcript::{ToolChangeSupport, TranscriptContext, resolve_transcript_tools};
use crate::types::{Model, ThinkingLevel};
pub use websocket::{WebSocketStats, close_websocket_sessions, reset_websocket_debug_stats, websocket_debug_stats};

/// The API id.
pub const API: &str = "openai-codex-responses";
/// Where Codex requests go without a base URL.
pub const DEFAULT_BASE_URL: &str = "https://chatgpt.com/backend-api";
/// A token with the account id `offline`, for building bodies without a login
/// ([`request_body`](crate::providers::request_body)).
pub const OFFLINE_TOKEN: &str =
    "e30.eyJodHRwczovL2FwaS5vcGVuYWkuY29tL2F1dGgiOnsiY2hhdGdwdF9hY2NvdW50X2lkIjoib2ZmbGluZSJ9fQ.offline";
const JWT_CLAIM: &str = "https://api.openai.com/auth";
const MIN_OUTPUT_TOKENS: u64 = 16;
/// `reasoning.effort` while `configuration_update` items carry the thinking level.
const CONFIGURATION_UPDATE_REQUEST_EFFORT: &str = "medium";

/// The `openai-codex-responses` provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenAiCodexResponses;

impl ApiProvider for OpenAiCodexResponses {
    fn api(&self) -> &str {
        API
    }

    fn stream(&self, model: &Model, context: TranscriptContext, options: StreamOptions) -> AssistantMessageEventStream {
        transport::stream(model, &context, options)
    }
}

/// The ChatGPT account id in a Codex access token (a JWT), as pi's `extractAccountId`.
pub fn account_id(token: &str) -> Result<String, String> {
    let fail = || "Failed to extract accountId from token".to_owned();
    let parts: Vec<&str> = token.split('.').collect();
    let [_, payload, _] = parts.as_slice() else { return Err(fail()) };
    let cleaned: String = payload
        .chars()
        .filter(|c| *c != '=')
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    let bytes = base64::engine::general_purpose::STANDARD_NO_PAD.decode(cleaned).map_err(|_| fail())?;
    let claims: Value = serde_json::from_slice(&bytes).map_err(|_| fail())?;
    claims
        .get(JWT_CLAIM)
        .and_then(|c| c.get("chatgpt_account_id"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .ok_or_else(fail)
}

/// pi's `resolveCodexUrl`.
pub fn codex_url(base_url: &str) -> String {
    let raw = if base_url.trim().is_empty() { DEFAULT_BASE_URL } else { base_url };
    let normalized = raw.trim_end_matches('/');
    if normalized.ends_with("/codex/responses") {
        normalized.to_owned()
    } else if normalized.ends_with("/codex") {
        format!("{normalized}/responses")
    } else {
        format!("{normalized}/codex/responses")
    }
}

/// The provider-native effort of the requested level (pi's `resolveReasoningEffort` after
/// `streamSimple`): `none` for off on reasoning models, mapped through the model's thinking-level
/// map (`null` there means no effort).
fn effort_value(model: &Model, options: &StreamOptions) -> Option<Value> {
    let level = options.reasoning.map(|l| clamp_thinking_level(model, l)).unwrap_or(ThinkingLevel::Off);
    let map = model.thinking_level_map.as_ref();
    if level != ThinkingLevel::Off {
        return Some(
            map.and_then(|m| m.get(level.as_str()))
                .filter(|v| !v.is_null())
                .cloned()
                .unwrap_or_else(|| json!(level.as_str())),
        );
    }
    if !model.reasoning {
        return None;
    }
    match map.and_then(|m| m.get("off")) {
        None => Some(json!("none")),
        Some(Value::Null) => None,
        Some(v) => Some(v.clone()),
    }
}

/// The effort `configuration_update` items carry (`compat.supportsMidConvoEffort`), else `None`
/// and the effort goes in `reasoning.effort` (pi's `getConfigurationUpdateEffort`).
pub fn configuration_update_effort(model: &Model, options: &StreamOptions) -> Option<Value> {
    if compat_flag(model, "supportsMidConvoEffort") != Some(true) {
        return None;
    }
    effort_value(model, options)
}

/// The `reasoning` field: `{effort, summary: "auto"}`, the effort fixed at `medium` while
/// `configuration_update` items carry it.
pub fn reasoning_field(model: &Model, options: &StreamOptions) -> Option<Value> {
    let effort = match configuration_update_effort(model, options) {
        Some(_) => json!(CONFIGURATION_UPDATE_REQUEST_EFFORT),
        None => effort_value(model, options)?,
    };
    Some(json!({"effort": effort, "summary": "auto"}))
}

/// How tool changes go in place (pi's `getResponsesToolSupport`): `additional_tools` items with
/// mid-conversation system messages and `supportsAdditionalTools`, else tool search items with
/// `supportsToolSearch`, else none (every tool in the top-level list).
pub fn tool_support(model: &Model) -> ToolChangeSupport {
    let flag = |name| compat_flag(model, name).unwrap_or(false);
    if flag("supportsMidConvoSystemMessages") && flag("supportsAdditionalTools") {
        ToolChangeSupport::Changes
    } else if flag("supportsToolSearch") {
        ToolChangeSupport::Additions
    } else {
        ToolChangeSupport::None
    }
}

/// Codex's tool declarations: the Responses ones with `strict: null` for non-strict tools, and
/// `defer_loading: true` (before `strict`) as a tool search result.
fn codex_tools(tools: &[crate::types::Tool], compat: &openai_responses::ResponsesCompat, search: bool) -> Vec<Value> {
    let mut converted = openai_responses::convert_tools(tools, compat);
    for tool in &mut converted {
        let Some(t) = tool.as_object_mut() else { continue };
        if t.get("strict") == Some(&Value::Bool(false)) {
            t.insert("strict".into(), Value::Null);
        }
        if search {
            let strict = t.shift_remove("strict");
            t.insert("defer_loading".into(), json!(true));
            if let Some(strict) = strict {
                t.insert("strict".into(), strict);
            }
        }
    }
    converted
}

fn codex_compat(model: &Model) -> openai_responses::ResponsesCompat {
    let mut compat = openai_responses::resolve_compat(model);
    compat.supports_strict_mode = compat_flag(model, "supportsStrictMode").unwrap_or(true);
    compat
}

fn body_fields(
    model: &Model,
    tools: &[crate::types::Tool],
    options: &StreamOptions,
    session: Option<&str>,
) -> Map<String, Value> {
    let compat = codex_compat(model);
    let mut p = Map::new();
    p.insert("model".into(), json!(model.id));
    p.insert("store".into(), json!(false));
    p.insert("stream".into(), json!(true));
    p.insert("input".into(), Value::Null);
    p.insert("text".into(), json!({"verbosity": "low"}));
    p.insert("include".into(), json!(["reasoning.encrypted_content"]));
    if let Some(session) = session {
        p.insert("prompt_cache_key".into(), json!(session));
    }
    p.insert("tool_choice".into(), json!(if options.tool_choice == Some(ToolChoice::None) { "none" } else { "auto" }));
    p.insert("parallel_tool_calls".into(), json!(true));
    if let Some(max) =
        options.max_tokens.filter(|m| *m > 0 && compat_flag(model, "supportsMaxOutputTokens").unwrap_or(true))
    {
        p.insert("max_output_tokens".into(), json!(max.max(MIN_OUTPUT_TOKENS)));
    }
    if let Some(t) = options.temperature {
        p.insert("temperature".into(), json!(t));
    }
    if !tools.is_empty() {
        p.insert("tools".into(), Value::Array(codex_tools(tools, &compat, false)));
    }
    if let Some(reasoning) = reasoning_field(model, options) {
        p.insert("reasoning".into(), reasoning);
    }
    p
}

fn compat_flag(model: &Model, name: &str) -> Option<bool> {
    model.compat.as_ref().and_then(|c| c.get(name)).and_then(Value::as_bool)
}

/// Builds the complete request (URL, headers, body), or the setup error text.
pub fn build_request_ref(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    let token = options
        .api_key
        .clone()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| format!("No API key for provider: {}", model.provider))?;
    let account = account_id(&token)?;
    let strict = compat_flag(model, "supportsStrictMode").unwrap_or(true);
    crate::providers::constrained::check_tools(&crate::transcript::declared_tools(context.messages()), strict, None)?;
    let retention = options.cache_retention.unwrap_or_else(CacheRetention::from_env);
    let session: Option<String> =
        options.session_id.as_ref().filter(|_| retention != CacheRetention::None).map(|s| s.chars().take(64).collect());
    let supports_mid = compat_flag(model, "supportsMidConvoSystemMessages").unwrap_or(false);
    let head = crate::http::body::collapsed_head(context.messages(), supports_mid);
    let view = crate::http::body::resolved_view(context.messages(), &head, supports_mid);
    let handed_off = openai_responses::handoff(model, &view);
    let grammar = crate::providers::constrained::grammar_input_properties(
        &crate::transcript::declared_tools(&view),
        compat_flag(model, "supportsOpenAIGrammarTools").unwrap_or(false),
    )?;
    let support = tool_support(model);
    let resolved = resolve_transcript_tools(&view, support);
    let compat = codex_compat(model);
    let convert = |tools: &[crate::types::Tool], search: bool| codex_tools(tools, &compat, search);
    let extras = openai_responses::Extras {
        support,
        folded_system_messages: resolved.folded_system_messages,
        tools: &convert,
        configuration_update_effort: configuration_update_effort(model, options),
    };
    let items = openai_responses::convert_items_with(model, &handed_off, &grammar, Some(&extras));
    let fields = body_fields(model, &resolved.request_tools, options, session.as_deref().filter(|s| !s.is_empty()));
    let size_hint = crate::http::body::body_size_hint(&view);
    let body = crate::http::body::encode_body(fields, "input", &items, size_hint)?;
    let mut headers = base_headers(model, options, &token, &account);
    headers.set("OpenAI-Beta", "responses=experimental");
    headers.set("accept", "text/event-stream");
    headers.set("content-type", "application/json");
    if let Some(session) = session.filter(|s| !s.is_empty()) {
        headers.set("session-id", session.clone());
        headers.set("x-client-request-id", session);
    }
    Ok(HttpRequest { url: codex_url(&model.base_url), headers, body: body.into(), source: None })
}

/// pi's `buildBaseCodexHeaders`: `originator` and the user agent, the model's and the request's
/// headers, then the token and the account id.
fn base_headers(model: &Model, options: &StreamOptions, token: &str, account: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.set("originator", "pi");
    headers.set("User-Agent", user_agent());
    if let Some(h) = &model.headers {
        headers.merge_json(h);
    }
    headers.merge(options.headers.iter().map(|(k, v)| (k.as_str(), v.clone())));
    headers.set("Authorization", format!("Bearer {token}"));
    headers.set("chatgpt-account-id", account.to_owned());
    headers
}

/// pi's `buildWebSocketHeaders`: the base headers, `OpenAI-Beta:
/// responses_websockets=2026-02-06`, and `request_id` (the session id, else a UUIDv7) as
/// `x-client-request-id` and `session-id`.
pub fn websocket_headers(model: &Model, options: &StreamOptions, request_id: &str) -> Result<HeaderMap, String> {
    let token = options
        .api_key
        .clone()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| format!("No API key for provider: {}", model.provider))?;
    let account = account_id(&token)?;
    let mut headers = base_headers(model, options, &token, &account);
    headers.merge([("accept", None), ("content-type", None), ("OpenAI-Beta", None)]);
    headers.set("OpenAI-Beta", websocket::OPENAI_BETA_RESPONSES_WEBSOCKETS);
    headers.set("x-client-request-id", request_id.to_owned());
    headers.set("session-id", request_id.to_owned());
    Ok(headers)
}

/// The type of an event, read without building the rest.
#[derive(serde::Deserialize)]
struct EventHead<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<std::borrow::Cow<'a, str>>,
}

const STATUSES: [&str; 6] = ["completed", "incomplete", "failed", "cancelled", "queued", "in_progress"];

/// Codex events → the Responses parser (pi's `mapCodexEvents` in front of `processResponsesStream`).
#[derive(Debug, Default)]
pub struct CodexStream {
    inner: ResponsesStream,
    done: bool,
}

impl CodexStream {
    /// A fresh handler.
    pub fn new() -> Self {
        CodexStream::default()
    }

    /// Maps the calls of grammar tools (name → input property) back to their arguments.
    pub fn with_grammar_tools(mut self, grammar: std::collections::HashMap<String, String>) -> Self {
        self.inner = self.inner.with_grammar_tools(grammar);
        self
    }
}

impl SseHandler for CodexStream {
    fn on_event(
        &mut self,
        event: SseEventRef<'_>,
        ctx: &StreamContext,
        out: &mut ProviderOutput,
    ) -> Result<(), String> {
        let data = event.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(());
        }
        // The common delta, read typed before anything else (no one sees the raw event).
        if ctx.options.on_provider_stream_event.is_none()
            && event.event != Some("error")
            && let Some(delta) = ResponsesDelta::read(data)
        {
            self.inner.typed_delta(delta, out);
            return Ok(());
        }
        // Most events (the deltas) go to the Responses parser as they are: read only their type.
        let head: EventHead<'_> = serde_json::from_str(data).map_err(|e| format!("Invalid Codex SSE JSON: {e}"))?;
        let kind = head.kind.unwrap_or_default();
        if !matches!(
            &*kind,
            "" | "error" | "response.failed" | "response.done" | "response.completed" | "response.incomplete"
        ) {
            return self.inner.on_event(event, ctx, out);
        }
        let mut parsed: Value = serde_json::from_str(data).map_err(|e| format!("Invalid Codex SSE JSON: {e}"))?;
        match &*kind {
            "" => return Ok(()),
            "error" => {
                let nested = parsed.get("error");
                let text = |k: &str| {
                    parsed
                        .get(k)
                        .and_then(Value::as_str)
                        .or_else(|| nested.and_then(|n| n.get(k)).and_then(Value::as_str))
                };
                let detail =
                    text("message").filter(|m| !m.is_empty()).or_else(|| text("code").filter(|c| !c.is_empty()));
                return Err(format!("Codex error: {}", detail.map_or_else(|| parsed.to_string(), str::to_owned)));
            }
            "response.failed" => {
                let message =
                    parsed.pointer("/response/error/message").and_then(Value::as_str).filter(|m| !m.is_empty());
                return Err(message.unwrap_or("Codex response failed").to_owned());
            }
            _ => {
                if let Some(end_turn) = parsed.pointer("/response/end_turn").and_then(Value::as_bool) {
                    out.message_mut().end_turn = Some(end_turn);
                }
                parsed["type"] = json!("response.completed");
                if let Some(response) = parsed.get_mut("response").and_then(Value::as_object_mut) {
                    let status = response.get("status").and_then(Value::as_str).filter(|s| STATUSES.contains(s));
                    match status.map(str::to_owned) {
                        Some(s) => response.insert("status".into(), json!(s)),
                        None => response.remove("status"),
                    };
                }
                self.done = true;
            }
        }
        let event = SseEvent { event: Some("response.completed".to_owned()), data: parsed.to_string(), id: None };
        self.inner.on_event(event.view(), ctx, out)
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn on_end(&mut self, ctx: &StreamContext, out: &mut ProviderOutput) -> Result<(), String> {
        self.inner.on_end(ctx, out)
    }

    fn on_error(&mut self, out: &mut ProviderOutput) {
        self.inner.on_error(out);
    }

    fn on_abort(&mut self, _ctx: &StreamContext, _out: &mut ProviderOutput) -> String {
        "This operation was aborted".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_account_ids() {
        assert_eq!(codex_url(""), "https://chatgpt.com/backend-api/codex/responses");
        assert_eq!(codex_url("http://h/x/codex/"), "http://h/x/codex/responses");
        let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(r#"{"https://api.openai.com/auth":{"chatgpt_account_id":"acc"}}"#);
        assert_eq!(account_id(&format!("h.{payload}.s")).as_deref(), Ok("acc"));
        assert_eq!(account_id("nope").unwrap_err(), "Failed to extract accountId from token");
    }
}
