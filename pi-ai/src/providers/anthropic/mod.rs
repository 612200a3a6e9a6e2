//! `anthropic-messages`: Anthropic's Messages API over HTTP (`POST {baseUrl}/v1/messages`).
//!
//! - Request: [`build_body`]: the leading system message becomes `system`, tools get
//!   `eager_input_streaming`, consecutive tool results form one user message (an error result's
//!   images move after all results), `cache_control` markers go on the system block, the last
//!   tool and the last user block (retention `none` removes them, `long` adds `ttl: "1h"`), and
//!   `options.reasoning` becomes a thinking budget (or adaptive effort with
//!   `compat.forceAdaptiveThinking`).
//! - Response: [`AnthropicStream`]: `*_end` at each `content_block_stop`; blocks are keyed by
//!   Anthropic's index, signatures accumulate silently, redacted thinking keeps its payload in the
//!   signature.
//!
//! - A Claude subscription token (`sk-ant-oat…`) is sent as pi sends it: see [`oauth`].
//!
//! - A request whose `"prefer"` strict tools exceed Claude's limits (a 400 naming them) is sent
//!   once more with those tools non-strict, and the session remembers it
//!   ([`strict_limits`]).
//!
//! Not ported: message threads, native tool changes, managed effort, server-side fallbacks.

mod compat;
pub mod oauth;
mod request;
mod stream;
mod wire;

pub use compat::{AnthropicCompat, AnthropicCompatOverrides, resolve_compat};
pub use request::{
    Thinking, beta_features, build_body, convert_messages, convert_tools, has_preferred_strict_tools,
    normalize_tool_call_id, plan_thinking,
};
pub(crate) use stream::force_stream;
pub use stream::{AnthropicStream, map_stop_reason};

use crate::http::body::BodyContext;
use crate::http::{ErrorStyle, HeaderMap, HttpRequest, ProviderOutput, StreamContext, stream_sse, user_agent};
use crate::options::StreamOptions;
use crate::provider::ApiProvider;
use crate::providers::constrained::strict_limits;
use crate::stream::AssistantMessageEventStream;
use crate::transcript::TranscriptContext;
use crate::types::Model;

/// The API id.
pub const API: &str = "anthropic-messages";

/// The `anthropic-messages` provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnthropicMessages;

impl ApiProvider for AnthropicMessages {
    fn api(&self) -> &str {
        API
    }

    fn stream(&self, model: &Model, context: TranscriptContext, options: StreamOptions) -> AssistantMessageEventStream {
        let out = ProviderOutput::new(model);
        let mut parser = AnthropicStream::new();
        if uses_claude_code_identity(model, &options) {
            // Tool calls come back in Claude Code's casing: map them to the declared names.
            let names = crate::transcript::current_tools(context.messages()).into_iter().map(|t| t.name).collect();
            parser = parser.with_tool_names(names);
        }
        let context = std::sync::Arc::new(context);
        let session = options.session_id.clone();
        let disabled = strict_limits::has_exceeded(session.as_deref());
        let tools = crate::transcript::current_tools(context.messages());
        let mut compat = resolve_compat(model);
        compat.disable_preferred_strict_tools = disabled;
        if !has_preferred_strict_tools(&tools, &compat) {
            let request = build_request_from(model, BodyContext::Owned(context), &options, disabled);
            let ctx = StreamContext { model: model.clone(), options };
            return stream_sse(ctx, out, request, ErrorStyle::Anthropic, parser);
        }
        // pi's strict-tool-limit fallback: a rejected request (never a started stream) is sent once
        // more with the "prefer" tools non-strict.
        let first = {
            let request = build_request_from(model, BodyContext::Owned(context.clone()), &options, false);
            let ctx = StreamContext { model: model.clone(), options: options.clone() };
            stream_sse(ctx, out, request, ErrorStyle::Anthropic, parser.clone())
        };
        let model = model.clone();
        AssistantMessageEventStream::new(async_stream::stream! {
            use futures::StreamExt;
            let mut first = first;
            let Some(event) = first.next().await else { return };
            let rejected = match &event {
                crate::stream::AssistantMessageEvent::Error { error, .. } if !options.is_cancelled() => {
                    error.error_message.as_deref().filter(|t| is_strict_limit_rejection(t)).map(str::to_owned)
                }
                _ => None,
            };
            let Some(text) = rejected else {
                yield event;
                while let Some(event) = first.next().await { yield event; }
                return;
            };
            strict_limits::mark_exceeded(session.as_deref());
            let diagnostic = serde_json::json!({"type": "anthropic_strict_tools_fallback", "timestamp": crate::types::now_ms(),
                "error": {"message": strict_limit_message(&text)}, "details": {"reason": "strict_tool_limits_exceeded"}});
            let request = build_request_from(&model, BodyContext::Owned(context), &options, true);
            let ctx = StreamContext { model: model.clone(), options };
            let mut second = stream_sse(ctx, ProviderOutput::new(&model), request, ErrorStyle::Anthropic, parser);
            while let Some(mut event) = second.next().await {
                match &mut event {
                    crate::stream::AssistantMessageEvent::Done { message, .. }
                    | crate::stream::AssistantMessageEvent::Error { error: message, .. } => {
                        message.diagnostics.get_or_insert_with(Vec::new).push(diagnostic.clone());
                    }
                    _ => {}
                }
                yield event;
            }
        })
    }
}

/// Whether an error text is Anthropic's 400 `invalid_request_error` about strict-tool limits.
fn is_strict_limit_rejection(text: &str) -> bool {
    text.starts_with("400 ") && text.contains("invalid_request_error") && strict_limits::is_limit_error(text)
}

/// The API's own message inside a `400 {…}` error text.
fn strict_limit_message(text: &str) -> String {
    let body = text.strip_prefix("400 ").unwrap_or(text);
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.pointer("/error/message").and_then(serde_json::Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| text.to_owned())
}

fn has_header(options: &StreamOptions, name: &str) -> bool {
    options
        .headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case(name) && v.as_ref().is_some_and(|v| !v.trim().is_empty()))
}

/// Whether a request authenticates with a Claude subscription token (never for GitHub Copilot,
/// which takes its token as plain bearer auth).
fn uses_claude_code_identity(model: &Model, options: &StreamOptions) -> bool {
    model.provider != "github-copilot" && options.api_key.as_deref().is_some_and(oauth::is_oauth_token)
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
    let disabled = strict_limits::has_exceeded(options.session_id.as_deref());
    build_request_with(model, context, options, disabled)
}

/// [`build_request_ref`] with `"prefer"` strict tools sent non-strict when `disable_preferred_strict`.
pub fn build_request_with(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
    disable_preferred_strict: bool,
) -> Result<HttpRequest, String> {
    build_request_from(model, BodyContext::Borrowed(context), options, disable_preferred_strict)
}

/// [`build_request_with`] from a borrowed transcript (the body built whole) or one the request
/// owns (a large body written into the connection as it is produced).
fn build_request_from(
    model: &Model,
    context: BodyContext<'_>,
    options: &StreamOptions,
    disable_preferred_strict: bool,
) -> Result<HttpRequest, String> {
    let key = options.api_key.clone().filter(|k| !k.is_empty());
    if key.is_none() && !["authorization", "x-api-key", "cf-aig-authorization"].iter().any(|h| has_header(options, h)) {
        return Err(format!("No API key for provider: {}", model.provider));
    }
    let mut compat = resolve_compat(model);
    compat.claude_code_identity = uses_claude_code_identity(model, options);
    compat.disable_preferred_strict_tools = disable_preferred_strict;
    request::check_strict_tools(&crate::transcript::current_tools(context.get().messages()), &compat)?;
    let (max_tokens, thinking) = plan_thinking(model, context.get(), options, &compat);
    let size_hint = crate::http::body::size_hint_for(context.get().messages().len());
    let plan = BodyPlan {
        model: model.clone(),
        options: options.clone(),
        compat: compat.clone(),
        max_tokens,
        thinking: thinking.clone(),
        memo: Default::default(),
    };
    let (body, source) = crate::http::body::request_body(&context, size_hint, move |context, out, flush| {
        plan.write(context, out, flush)
    })?;
    let context = context.get();
    let mut headers = HeaderMap::new();
    headers.set("Accept", "application/json");
    headers.set("Content-Type", "application/json");
    headers.set("anthropic-version", "2023-06-01");
    match &key {
        Some(token) if compat.claude_code_identity => {
            headers.set("Authorization", format!("Bearer {token}"));
        }
        Some(token) if model.provider == "github-copilot" => {
            headers.set("Authorization", format!("Bearer {token}"));
        }
        Some(key) => headers.set("x-api-key", key.clone()),
        None => {}
    }
    if compat.claude_code_identity {
        headers.set("anthropic-dangerous-direct-browser-access", "true");
        headers.set("User-Agent", format!("claude-cli/{}", oauth::CLAUDE_CODE_VERSION));
        headers.set("x-app", "cli");
    } else {
        headers.set("User-Agent", user_agent());
        headers.set("anthropic-dangerous-direct-browser-access", "true");
    }
    let cache_on = options.cache_retention.unwrap_or_else(crate::options::CacheRetention::from_env)
        != crate::options::CacheRetention::None;
    let affinity = cache_on && compat.send_session_affinity_headers && !compat.claude_code_identity;
    if let Some(session) = options.session_id.as_ref().filter(|_| affinity) {
        let name = if compat.session_affinity_format.as_deref() == Some("openrouter") {
            "x-session-id"
        } else {
            "x-session-affinity"
        };
        headers.set(name, session.clone());
    }
    // A configured `anthropic-beta` (model or option headers) replaces pi's list; `None` removes it.
    let configured = model
        .headers
        .as_ref()
        .into_iter()
        .flat_map(|h| {
            h.iter()
                .filter(|(k, _)| k.eq_ignore_ascii_case("anthropic-beta"))
                .map(|(_, v)| v.as_str().map(str::to_owned))
        })
        .chain(options.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case("anthropic-beta")).map(|(_, v)| v.clone()))
        .last();
    if let Some(h) = &model.headers {
        headers.merge_json(h);
    }
    crate::providers::copilot_headers::apply(&mut headers, &model.provider, context.messages());
    headers.merge(options.headers.iter().map(|(k, v)| (k.as_str(), v.clone())));
    let features: Vec<String> = match configured {
        Some(None) => Vec::new(),
        Some(Some(list)) => {
            let mut seen = Vec::new();
            for f in list.split(',').map(str::trim).filter(|f| !f.is_empty()) {
                if !seen.iter().any(|s: &String| s == f) {
                    seen.push(f.to_owned());
                }
            }
            seen
        }
        None => beta_features(model, context, &thinking, &compat),
    };
    headers.remove("anthropic-beta");
    if !features.is_empty() {
        headers.set("anthropic-beta", features.join(","));
    }
    let url = format!("{}/v1/messages?beta=true", model.base_url.trim_end_matches('/'));
    Ok(HttpRequest { url, headers, body, source })
}

/// What the body is written from, besides the transcript.
struct BodyPlan {
    model: Model,
    options: StreamOptions,
    compat: AnthropicCompat,
    max_tokens: u64,
    thinking: Thinking,
    /// The handoff, planned on the first writing.
    memo: crate::http::body::HandoffMemo,
}

impl BodyPlan {
    /// Writes the JSON body into `out`, calling `flush` between messages.
    fn write(
        &self,
        context: &TranscriptContext,
        out: &mut Vec<u8>,
        flush: &mut dyn FnMut(&mut Vec<u8>),
    ) -> Result<(), String> {
        let supports_mid = self.compat.supports_mid_convo_system_messages;
        let head = crate::http::body::collapsed_head(context.messages(), supports_mid);
        let view = crate::http::body::resolved_view(context.messages(), &head, supports_mid);
        let handed_off = self.memo.handed_off(&view, || request::handoff_plan(&self.model, &view));
        let (fields, messages) = request::build_body_parts(
            &self.model,
            &view,
            &handed_off,
            &self.options,
            &self.compat,
            self.max_tokens,
            &self.thinking,
        );
        crate::http::body::encode_body_flushing(&fields, "messages", &messages, out, flush)
    }
}
