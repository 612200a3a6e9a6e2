//! Compatibility flags of Anthropic-compatible endpoints (`model.compat`).

use serde::Deserialize;
use serde_json::Value;

use crate::types::Model;

/// `model.compat` of an `anthropic-messages` model (every field optional).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AnthropicCompatOverrides {
    /// See [`AnthropicCompat::supports_eager_tool_input_streaming`].
    pub supports_eager_tool_input_streaming: Option<bool>,
    /// See [`AnthropicCompat::supports_long_cache_retention`].
    pub supports_long_cache_retention: Option<bool>,
    /// See [`AnthropicCompat::send_session_affinity_headers`].
    pub send_session_affinity_headers: Option<bool>,
    /// See [`AnthropicCompat::session_affinity_format`].
    pub session_affinity_format: Option<String>,
    /// See [`AnthropicCompat::supports_cache_control_on_tools`].
    pub supports_cache_control_on_tools: Option<bool>,
    /// See [`AnthropicCompat::supports_temperature`].
    pub supports_temperature: Option<bool>,
    /// See [`AnthropicCompat::allow_empty_signature`].
    pub allow_empty_signature: Option<bool>,
    /// See [`AnthropicCompat::supports_mid_convo_system_messages`].
    pub supports_mid_convo_system_messages: Option<bool>,
    /// See [`AnthropicCompat::force_adaptive_thinking`].
    pub force_adaptive_thinking: Option<bool>,
    /// See [`AnthropicCompat::supports_strict_tools`].
    pub supports_strict_tools: Option<bool>,
    /// Other fields pi knows ( threads, fallbacks, managed effort) are accepted and
    /// not acted on.
    #[serde(flatten)]
    pub other: serde_json::Map<String, Value>,
}

/// Resolved flags (pi's `getAnthropicCompat`, for the features ported).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnthropicCompat {
    /// Tools carry `eager_input_streaming: true`; when false and tools exist, the
    /// `fine-grained-tool-streaming` beta is sent instead.
    pub supports_eager_tool_input_streaming: bool,
    /// `cacheRetention: long` adds `ttl: "1h"` to cache markers.
    pub supports_long_cache_retention: bool,
    /// Send a session-affinity header with `sessionId`.
    pub send_session_affinity_headers: bool,
    /// `openrouter` (`x-session-id`) or anything else (`x-session-affinity`).
    pub session_affinity_format: Option<String>,
    /// The last tool carries a cache marker.
    pub supports_cache_control_on_tools: bool,
    /// `temperature` is sent (never with thinking).
    pub supports_temperature: bool,
    /// Unsigned thinking is replayed as thinking with `signature: ""` instead of as text.
    pub allow_empty_signature: bool,
    /// Later system messages go on the wire in place (held until the next assistant message).
    pub supports_mid_convo_system_messages: bool,
    /// Adaptive thinking with an effort instead of a token budget.
    pub force_adaptive_thinking: bool,
    /// Tools declaring JSON-schema constrained sampling are sent with `strict: true`.
    pub supports_strict_tools: bool,
    /// The key is a Claude subscription OAuth token (`sk-ant-oat…`): bearer auth and Claude
    /// Code's identity (not from `model.compat`; set per request).
    pub claude_code_identity: bool,
    /// `"prefer"` strict tools go non-strict: the session's strict tools exceeded Claude's limits
    /// (not from `model.compat`; set per request).
    pub disable_preferred_strict_tools: bool,
}

/// Resolves the flags of `model`.
pub fn resolve_compat(model: &Model) -> AnthropicCompat {
    let o: AnthropicCompatOverrides = model
        .compat
        .as_ref()
        .and_then(|raw| match serde_json::from_value(Value::Object(raw.clone())) {
            Ok(o) => Some(o),
            Err(error) => {
                tracing::warn!(%error, model = %model.id, "ignoring unreadable anthropic-messages compat");
                None
            }
        })
        .unwrap_or_default();
    let is_open_router = model.provider == "openrouter" || model.base_url.contains("openrouter.ai");
    AnthropicCompat {
        supports_eager_tool_input_streaming: o.supports_eager_tool_input_streaming.unwrap_or(true),
        supports_long_cache_retention: o.supports_long_cache_retention.unwrap_or(true),
        send_session_affinity_headers: o.send_session_affinity_headers.unwrap_or(is_open_router),
        session_affinity_format: o.session_affinity_format.or_else(|| is_open_router.then(|| "openrouter".to_owned())),
        supports_cache_control_on_tools: o.supports_cache_control_on_tools.unwrap_or(true),
        supports_temperature: o.supports_temperature.unwrap_or(true),
        supports_strict_tools: o.supports_strict_tools.unwrap_or(false),
        claude_code_identity: false,
        disable_preferred_strict_tools: false,
        allow_empty_signature: o.allow_empty_signature.unwrap_or(false),
        supports_mid_convo_system_messages: o.supports_mid_convo_system_messages.unwrap_or(false),
        force_adaptive_thinking: o.force_adaptive_thinking.unwrap_or(false),
    }
}
