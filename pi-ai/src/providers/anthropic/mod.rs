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
//! Not ported: message threads, native tool changes, managed effort, server-side fallbacks, the
//! strict-tool-limit retry.

mod compat;
pub mod oauth;
mod request;
mod stream;
mod wire;

pub use compat::{AnthropicCompat, AnthropicCompatOverrides, resolve_compat};
pub use request::{
    Thinking, beta_features, build_body, convert_messages, convert_tools, normalize_tool_call_id, plan_thinking,
};
pub(crate) use stream::force_stream;
pub use stream::{AnthropicStream, map_stop_reason};

use crate::http::{ErrorStyle, HeaderMap, HttpRequest, ProviderOutput, StreamContext, stream_sse, user_agent};
use crate::options::StreamOptions;
use crate::provider::ApiProvider;
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
        let request = build_request(model, context, &options);
        let ctx = StreamContext { model: model.clone(), options };
        stream_sse(ctx, out, request, ErrorStyle::Anthropic, parser)
    }
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
    let key = options.api_key.clone().filter(|k| !k.is_empty());
    if key.is_none() && !["authorization", "x-api-key", "cf-aig-authorization"].iter().any(|h| has_header(options, h)) {
        return Err(format!("No API key for provider: {}", model.provider));
    }
    let mut compat = resolve_compat(model);
    compat.claude_code_identity = uses_claude_code_identity(model, options);
    request::check_strict_tools(&crate::transcript::current_tools(context.messages()), &compat)?;
    let (max_tokens, thinking) = plan_thinking(model, context, options, &compat);
    let supports_mid = compat.supports_mid_convo_system_messages;
    let head = crate::http::body::collapsed_head(context.messages(), supports_mid);
    let view = crate::http::body::resolved_view(context.messages(), &head, supports_mid);
    let handed_off = request::handoff(model, &view);
    let (fields, messages) =
        request::build_body_parts(model, &view, &handed_off, options, &compat, max_tokens, &thinking);
    let size_hint = crate::http::body::body_size_hint(&view);
    let body = crate::http::body::encode_body(fields, "messages", &messages, size_hint)?;
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
    Ok(HttpRequest { url, headers, body })
}
