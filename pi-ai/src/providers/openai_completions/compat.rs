//! Compatibility flags of OpenAI-compatible servers: detected from provider and base URL, then
//! overridden field by field by `model.compat`.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::types::Model;

/// `model.compat` of an `openai-completions` model, as written in a catalog (every field optional).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CompletionsCompatOverrides {
    /// See [`CompletionsCompat::supports_store`].
    pub supports_store: Option<bool>,
    /// See [`CompletionsCompat::supports_developer_role`].
    pub supports_developer_role: Option<bool>,
    /// See [`CompletionsCompat::supports_reasoning_effort`].
    pub supports_reasoning_effort: Option<bool>,
    /// See [`CompletionsCompat::supports_usage_in_streaming`].
    pub supports_usage_in_streaming: Option<bool>,
    /// See [`CompletionsCompat::supports_finish_reason`].
    pub supports_finish_reason: Option<bool>,
    /// See [`CompletionsCompat::max_tokens_field`].
    pub max_tokens_field: Option<String>,
    /// See [`CompletionsCompat::requires_tool_result_name`].
    pub requires_tool_result_name: Option<bool>,
    /// See [`CompletionsCompat::requires_assistant_after_tool_result`].
    pub requires_assistant_after_tool_result: Option<bool>,
    /// See [`CompletionsCompat::requires_non_null_assistant_content`].
    pub requires_non_null_assistant_content: Option<bool>,
    /// See [`CompletionsCompat::requires_tools_with_tool_history`].
    pub requires_tools_with_tool_history: Option<bool>,
    /// See [`CompletionsCompat::requires_thinking_as_text`].
    pub requires_thinking_as_text: Option<bool>,
    /// See [`CompletionsCompat::requires_reasoning_content_on_assistant_messages`].
    pub requires_reasoning_content_on_assistant_messages: Option<bool>,
    /// See [`CompletionsCompat::thinking_format`].
    pub thinking_format: Option<String>,
    /// See [`CompletionsCompat::open_router_routing`].
    pub open_router_routing: Option<Value>,
    /// See [`CompletionsCompat::vercel_gateway_routing`].
    pub vercel_gateway_routing: Option<Value>,
    /// See [`CompletionsCompat::chat_template_kwargs`].
    pub chat_template_kwargs: Option<Map<String, Value>>,
    /// See [`CompletionsCompat::chat_template_args`].
    pub chat_template_args: Option<Map<String, Value>>,
    /// See [`CompletionsCompat::zai_tool_stream`].
    pub zai_tool_stream: Option<bool>,
    /// See [`CompletionsCompat::supports_thinking_token_budget`].
    pub supports_thinking_token_budget: Option<bool>,
    /// See [`CompletionsCompat::thinking_token_budget_field`].
    pub thinking_token_budget_field: Option<String>,
    /// See [`CompletionsCompat::supports_strict_mode`].
    pub supports_strict_mode: Option<bool>,
    /// See [`CompletionsCompat::supports_openai_grammar_tools`].
    #[serde(rename = "supportsOpenAIGrammarTools")]
    pub supports_openai_grammar_tools: Option<bool>,
    /// See [`CompletionsCompat::supports_mid_convo_system_messages`].
    pub supports_mid_convo_system_messages: Option<bool>,
    /// See [`CompletionsCompat::supports_mid_convo_tool_additions`].
    pub supports_mid_convo_tool_additions: Option<bool>,
    /// See [`CompletionsCompat::cache_control_format`].
    pub cache_control_format: Option<String>,
    /// See [`CompletionsCompat::send_session_affinity_headers`].
    pub send_session_affinity_headers: Option<bool>,
    /// See [`CompletionsCompat::session_affinity_format`].
    pub session_affinity_format: Option<String>,
    /// See [`CompletionsCompat::supports_long_cache_retention`].
    pub supports_long_cache_retention: Option<bool>,
    /// See [`CompletionsCompat::prompt_cache_key_mode`].
    pub prompt_cache_key_mode: Option<String>,
    /// See [`CompletionsCompat::vllm_priority`].
    pub vllm_priority: Option<Value>,
}

/// Resolved compatibility flags (pi's `getCompat` for `openai-completions`).
#[derive(Clone, Debug, PartialEq)]
pub struct CompletionsCompat {
    /// Send `store: false`.
    pub supports_store: bool,
    /// Use the `developer` role for instructions (reasoning models only).
    pub supports_developer_role: bool,
    /// Send `reasoning_effort`.
    pub supports_reasoning_effort: bool,
    /// Send `stream_options: {include_usage: true}`.
    pub supports_usage_in_streaming: bool,
    /// The server always sends a `finish_reason`; without it the stream is an error.
    pub supports_finish_reason: bool,
    /// `max_completion_tokens` (default) or `max_tokens`.
    pub max_tokens_field: String,
    /// Tool results carry `name`.
    pub requires_tool_result_name: bool,
    /// A user message may not follow tool results directly.
    pub requires_assistant_after_tool_result: bool,
    /// Assistant `content` is `""` instead of `null`.
    pub requires_non_null_assistant_content: bool,
    /// Send `tools: []` when the history has tool calls but no tools are declared.
    pub requires_tools_with_tool_history: bool,
    /// Replay thinking as a text part.
    pub requires_thinking_as_text: bool,
    /// Assistant messages of reasoning models always carry `reasoning_content`.
    pub requires_reasoning_content_on_assistant_messages: bool,
    /// How reasoning is requested: `openai`, `qwen`, `qwen-chat-template`, `chat-template`,
    /// `baseten`, `deepseek`, `zai`, `openrouter`, `ant-ling`, `together`, `string-thinking`.
    pub thinking_format: String,
    /// OpenRouter `provider` routing preferences.
    pub open_router_routing: Option<Value>,
    /// Vercel AI Gateway routing preferences.
    pub vercel_gateway_routing: Option<Value>,
    /// `chat_template_kwargs` template for the `chat-template` format.
    pub chat_template_kwargs: Map<String, Value>,
    /// `chat_template_args` template for the `baseten` format.
    pub chat_template_args: Map<String, Value>,
    /// Send `tool_stream: true` (Z.ai).
    pub zai_tool_stream: bool,
    /// Send `thinking_token_budget`.
    pub supports_thinking_token_budget: bool,
    /// Name of a top-level thinking budget field.
    pub thinking_token_budget_field: Option<String>,
    /// Add `strict` to tools.
    pub supports_strict_mode: bool,
    /// Tools declaring grammar constrained sampling go as `custom` tools (`supportsOpenAIGrammarTools`).
    pub supports_openai_grammar_tools: bool,
    /// Keep later system messages in place instead of collapsing them into the first.
    pub supports_mid_convo_system_messages: bool,
    /// Declare tools added by later system messages in place.
    pub supports_mid_convo_tool_additions: bool,
    /// `anthropic` adds `cache_control` markers (OpenRouter's Anthropic models).
    pub cache_control_format: Option<String>,
    /// Send session-affinity headers.
    pub send_session_affinity_headers: bool,
    /// `openrouter` or `openai` affinity header names.
    pub session_affinity_format: String,
    /// The server supports 24h / 1h cache retention.
    pub supports_long_cache_retention: bool,
    /// `auto` (default), `enabled` or anything else (disabled) for `prompt_cache_key`.
    pub prompt_cache_key_mode: Option<String>,
    /// vLLM `priority`.
    pub vllm_priority: Option<Value>,
}

/// pi's `detectCompat`: flags guessed from the provider id and base URL.
pub fn detect_compat(model: &Model) -> CompletionsCompat {
    let provider = model.provider.as_str();
    let url = model.base_url.as_str();
    let is_zai =
        matches!(provider, "zai" | "zai-coding-cn") || url.contains("api.z.ai") || url.contains("open.bigmodel.cn");
    let is_together = provider == "together" || url.contains("api.together.ai") || url.contains("api.together.xyz");
    let is_moonshot = matches!(provider, "moonshotai" | "moonshotai-cn") || url.contains("api.moonshot.");
    let is_open_router = provider == "openrouter" || url.contains("openrouter.ai");
    let is_cf_workers = provider == "cloudflare-workers-ai" || url.contains("api.cloudflare.com");
    let is_cf_gateway = provider == "cloudflare-ai-gateway" || url.contains("gateway.ai.cloudflare.com");
    let is_nvidia = provider == "nvidia" || url.contains("integrate.api.nvidia.com");
    let is_ant_ling = provider == "ant-ling" || url.contains("api.ant-ling.com");
    let is_cerebras = provider == "cerebras" || url.contains("cerebras.ai");
    let is_deepseek = provider == "deepseek" || url.to_lowercase().contains("deepseek.com");
    let is_grok = provider == "xai" || url.contains("api.x.ai");
    let is_non_standard = is_nvidia
        || is_cerebras
        || is_grok
        || is_together
        || url.contains("chutes.ai")
        || is_deepseek
        || is_zai
        || is_moonshot
        || provider == "opencode"
        || url.contains("opencode.ai")
        || is_cf_workers
        || is_cf_gateway
        || is_ant_ling;
    let use_max_tokens = url.contains("chutes.ai")
        || is_deepseek
        || is_moonshot
        || is_cf_gateway
        || is_together
        || is_nvidia
        || is_ant_ling
        || is_zai;
    let is_openai = provider == "openai" || url.contains("api.openai.com");
    let thinking_format = if is_deepseek {
        "deepseek"
    } else if is_zai {
        "zai"
    } else if is_together {
        "together"
    } else if is_ant_ling {
        "ant-ling"
    } else if is_open_router {
        "openrouter"
    } else {
        "openai"
    };
    CompletionsCompat {
        supports_store: !is_non_standard,
        supports_developer_role: is_openai,
        supports_reasoning_effort: !is_grok
            && !is_zai
            && !is_moonshot
            && !is_together
            && !is_cf_gateway
            && !is_nvidia
            && !is_ant_ling,
        supports_usage_in_streaming: true,
        supports_finish_reason: true,
        max_tokens_field: if use_max_tokens { "max_tokens" } else { "max_completion_tokens" }.to_owned(),
        requires_tool_result_name: false,
        requires_assistant_after_tool_result: false,
        requires_non_null_assistant_content: false,
        requires_tools_with_tool_history: false,
        requires_thinking_as_text: false,
        requires_reasoning_content_on_assistant_messages: is_deepseek,
        thinking_format: thinking_format.to_owned(),
        open_router_routing: None,
        vercel_gateway_routing: None,
        chat_template_kwargs: Map::new(),
        chat_template_args: Map::new(),
        zai_tool_stream: false,
        supports_thinking_token_budget: false,
        thinking_token_budget_field: None,
        supports_strict_mode: false,
        supports_openai_grammar_tools: false,
        supports_mid_convo_system_messages: false,
        supports_mid_convo_tool_additions: false,
        cache_control_format: (provider == "openrouter" && model.id.starts_with("anthropic/"))
            .then(|| "anthropic".to_owned()),
        send_session_affinity_headers: is_open_router,
        session_affinity_format: if is_open_router { "openrouter" } else { "openai" }.to_owned(),
        supports_long_cache_retention: !(is_together || is_cf_workers || is_cf_gateway || is_nvidia || is_ant_ling),
        prompt_cache_key_mode: None,
        vllm_priority: None,
    }
}

/// pi's `getCompat`: detected flags overridden by `model.compat` (an unreadable `compat` is
/// ignored with a warning).
pub fn resolve_compat(model: &Model) -> CompletionsCompat {
    let detected = detect_compat(model);
    let Some(raw) = &model.compat else {
        return detected;
    };
    let o: CompletionsCompatOverrides = match serde_json::from_value(Value::Object(raw.clone())) {
        Ok(o) => o,
        Err(error) => {
            tracing::warn!(%error, model = %model.id, "ignoring unreadable openai-completions compat");
            return detected;
        }
    };
    CompletionsCompat {
        supports_store: o.supports_store.unwrap_or(detected.supports_store),
        supports_developer_role: o.supports_developer_role.unwrap_or(detected.supports_developer_role),
        supports_reasoning_effort: o.supports_reasoning_effort.unwrap_or(detected.supports_reasoning_effort),
        supports_usage_in_streaming: o.supports_usage_in_streaming.unwrap_or(detected.supports_usage_in_streaming),
        supports_finish_reason: o.supports_finish_reason.unwrap_or(detected.supports_finish_reason),
        max_tokens_field: o.max_tokens_field.unwrap_or(detected.max_tokens_field),
        requires_tool_result_name: o.requires_tool_result_name.unwrap_or(detected.requires_tool_result_name),
        requires_assistant_after_tool_result: o
            .requires_assistant_after_tool_result
            .unwrap_or(detected.requires_assistant_after_tool_result),
        requires_non_null_assistant_content: o
            .requires_non_null_assistant_content
            .unwrap_or(detected.requires_non_null_assistant_content),
        requires_tools_with_tool_history: o
            .requires_tools_with_tool_history
            .unwrap_or(detected.requires_tools_with_tool_history),
        requires_thinking_as_text: o.requires_thinking_as_text.unwrap_or(detected.requires_thinking_as_text),
        requires_reasoning_content_on_assistant_messages: o
            .requires_reasoning_content_on_assistant_messages
            .unwrap_or(detected.requires_reasoning_content_on_assistant_messages),
        thinking_format: o.thinking_format.unwrap_or(detected.thinking_format),
        // pi: `model.compat.openRouterRouting ?? {}` (the detected value is not used).
        open_router_routing: o.open_router_routing,
        vercel_gateway_routing: o.vercel_gateway_routing.or(detected.vercel_gateway_routing),
        chat_template_kwargs: o.chat_template_kwargs.unwrap_or(detected.chat_template_kwargs),
        chat_template_args: o.chat_template_args.unwrap_or(detected.chat_template_args),
        zai_tool_stream: o.zai_tool_stream.unwrap_or(detected.zai_tool_stream),
        supports_thinking_token_budget: o
            .supports_thinking_token_budget
            .unwrap_or(detected.supports_thinking_token_budget),
        thinking_token_budget_field: o.thinking_token_budget_field.or(detected.thinking_token_budget_field),
        supports_strict_mode: o.supports_strict_mode.unwrap_or(detected.supports_strict_mode),
        supports_openai_grammar_tools: o
            .supports_openai_grammar_tools
            .unwrap_or(detected.supports_openai_grammar_tools),
        supports_mid_convo_system_messages: o
            .supports_mid_convo_system_messages
            .unwrap_or(detected.supports_mid_convo_system_messages),
        supports_mid_convo_tool_additions: o
            .supports_mid_convo_tool_additions
            .unwrap_or(detected.supports_mid_convo_tool_additions),
        cache_control_format: o.cache_control_format.or(detected.cache_control_format),
        send_session_affinity_headers: o
            .send_session_affinity_headers
            .unwrap_or(detected.send_session_affinity_headers),
        session_affinity_format: o.session_affinity_format.unwrap_or(detected.session_affinity_format),
        supports_long_cache_retention: o
            .supports_long_cache_retention
            .unwrap_or(detected.supports_long_cache_retention),
        prompt_cache_key_mode: o.prompt_cache_key_mode,
        vllm_priority: o.vllm_priority,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(provider: &str, url: &str) -> Model {
        Model { provider: provider.into(), base_url: url.into(), id: "m".into(), ..Default::default() }
    }

    #[test]
    fn detection_by_provider_and_url() {
        let openai = detect_compat(&model("openai", "https://api.openai.com/v1"));
        assert!(openai.supports_store && openai.supports_developer_role);
        let deepseek = detect_compat(&model("custom", "https://api.DeepSeek.com/v1"));
        assert!(!deepseek.supports_store);
        assert_eq!(deepseek.max_tokens_field, "max_tokens");
        assert_eq!(deepseek.thinking_format, "deepseek");
        let local = detect_compat(&model("local", "http://127.0.0.1:8080/v1"));
        assert!(local.supports_store && !local.supports_developer_role && local.supports_reasoning_effort);
    }

    #[test]
    fn model_compat_overrides_field_by_field() {
        let mut m = model("local", "http://127.0.0.1/v1");
        m.compat = Some(serde_json::from_str(r#"{"supportsStore":false,"maxTokensField":"max_tokens"}"#).unwrap());
        let c = resolve_compat(&m);
        assert!(!c.supports_store);
        assert_eq!(c.max_tokens_field, "max_tokens");
        assert!(c.supports_usage_in_streaming);
    }
}
