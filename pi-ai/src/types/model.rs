//! Model descriptions and the public request context.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Message, Tool};
use crate::json_object;

json_object! {
    /// Rates in USD per million tokens.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ModelCost {
        /// Input rate.
        input: num f64 = "input",
        /// Output rate.
        output: num f64 = "output",
        /// Cache-read rate.
        cache_read: num f64 = "cacheRead",
        /// Cache-write rate.
        cache_write: num f64 = "cacheWrite",
        /// Tiered rates: each entry holds the four rates plus `inputTokensAbove`.
        tiers: opt Vec<Value> = "tiers",
    }
}

json_object! {
    /// A chat model: which API speaks to it, where, and what it can do.
    ///
    /// ```
    /// let m: pi_ai::Model = serde_json::from_value(serde_json::json!({
    ///     "id": "smollm2-135m", "name": "SmolLM2", "api": "openai-completions", "provider": "local",
    ///     "baseUrl": "http://127.0.0.1:8765/v1", "reasoning": false, "input": ["text"],
    ///     "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    ///     "contextWindow": 4096, "maxTokens": 512
    /// })).unwrap();
    /// assert_eq!(m.base_url, "http://127.0.0.1:8765/v1");
    /// ```
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Model {
        /// Model id sent to the provider.
        id: req String = "id",
        /// Display name.
        name: req String = "name",
        /// API id (wire protocol).
        api: req String = "api",
        /// Provider id.
        provider: req String = "provider",
        /// Base URL; the API appends its path.
        base_url: req String = "baseUrl",
        /// Whether the model reasons (supports thinking levels).
        reasoning: req bool = "reasoning",
        /// Input modalities: `"text"`, `"image"`.
        input: req Vec<String> = "input",
        /// Per-million-token rates.
        cost: req ModelCost = "cost",
        /// Context window in tokens.
        context_window: req u64 = "contextWindow",
        /// Maximum output tokens.
        max_tokens: req u64 = "maxTokens",
        /// Extra HTTP headers.
        headers: opt Map<String, Value> = "headers",
        /// API-specific compatibility overrides (see each provider module).
        compat: opt Map<String, Value> = "compat",
        /// Model type; absent means chat.
        model_type: opt String = "type",
        /// pi thinking level to provider value; `null` marks a level unsupported.
        thinking_level_map: opt Map<String, Value> = "thinkingLevelMap",
        /// Prompt cache lifetimes.
        prompt_cache: opt Value = "promptCache",
        /// Provider input limits.
        input_limits: opt Value = "inputLimits",
        /// Default sampling parameters (OpenAI-compatible APIs).
        sampling_params: opt Map<String, Value> = "samplingParams",
        /// Sampling overrides per thinking level.
        sampling_params_by_thinking_level: opt Map<String, Value> = "samplingParamsByThinkingLevel",
    }
}

impl Model {
    /// Whether the model accepts image input.
    pub fn supports_images(&self) -> bool {
        self.input.iter().any(|i| i == "image")
    }

    /// pi's `modelsAreEqual`: same type, id and provider.
    pub fn same_as(&self, other: &Model) -> bool {
        self.id == other.id
            && self.provider == other.provider
            && self.model_type.as_deref().unwrap_or("chat") == other.model_type.as_deref().unwrap_or("chat")
    }
}

/// The public request input: a shorthand system prompt and tool list plus the messages.
///
/// Providers never see this type: [`normalize_context`](crate::transcript::normalize_context)
/// folds `system_prompt` and `tools` into a leading system message and returns a
/// [`TranscriptContext`](crate::transcript::TranscriptContext).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    /// Shorthand for the leading system message's content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// The transcript.
    pub messages: Vec<Message>,
    /// Shorthand for the leading system message's tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
}
