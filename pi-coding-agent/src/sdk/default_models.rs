//! pi's `defaultModelPerProvider` (`core/model-resolver.js`): the chat model each built-in
//! provider starts with, used when no saved default applies (the first provider in this order with
//! credentials and this model wins) and after `/login` selects a model for the new provider.

use pi_ai::Model;

/// Each provider's default chat model id, in pi's order.
pub const DEFAULT_MODEL_PER_PROVIDER: &[(&str, &str)] = &[
    ("amazon-bedrock", "us.anthropic.claude-opus-5-5"),
    ("ant-ling", "Ring-2.6-1T"),
    ("anthropic", "claude-opus-5-5"),
    ("openai", "gpt-6.2-sol"),
    ("azure", "gpt-6.2-sol"),
    ("openai-codex", "gpt-6.2-sol"),
    ("radius", "balanced"),
    ("nvidia", "nvidia/nemotron-3.5-super-vl-120b-a12b"),
    ("deepseek", "deepseek-v4-pro"),
    ("google", "gemini-4-argon"),
    ("google-vertex", "gemini-4-argon"),
    ("github-copilot", "gpt-6.1-sol"),
    ("openrouter", "moonshotai/kimi-k2.7-code"),
    ("vercel-ai-gateway", "zai/glm-5.3"),
    ("xai", "grok-4.7"),
    ("groq", "openai/gpt-oss-120b"),
    ("cerebras", "gpt-oss-120b"),
    ("zai", "glm-5.3"),
    ("zai-coding-cn", "glm-5.3"),
    ("mistral", "devstral-medium-latest"),
    ("minimax", "MiniMax-M3"),
    ("minimax-cn", "MiniMax-M3"),
    ("moonshotai", "kimi-k2.7-code"),
    ("moonshotai-cn", "kimi-k2.7-code"),
    ("huggingface", "moonshotai/Kimi-K2.7-Code"),
    ("fireworks", "accounts/fireworks/models/kimi-k3"),
    ("together", "moonshotai/Kimi-K3"),
    ("baseten", "zai-org/GLM-5.3"),
    ("opencode", "kimi-k2.7-code"),
    ("opencode-go", "kimi-k3.1-pro"),
    ("kimi-coding", "kimi-for-coding"),
    ("meta", "muse-spark-1.3"),
    ("cloudflare-workers-ai", "@cf/moonshotai/kimi-k2.7-code"),
    ("cloudflare-ai-gateway", "workers-ai/@cf/moonshotai/kimi-k2.7-code"),
    ("qwen-token-plan", "qwen3.8-max"),
    ("qwen-token-plan-cn", "qwen3.8-max"),
    ("qwen-token-plan-individual", "qwen3.8-max"),
    ("qwen-token-plan-individual-cn", "qwen3.8-max"),
    ("xiaomi", "mimo-v2.6-pro"),
    ("xiaomi-token-plan-cn", "mimo-v2.6-pro"),
    ("xiaomi-token-plan-ams", "mimo-v2.6-pro"),
    ("xiaomi-token-plan-sgp", "mimo-v2.6-pro"),
];

/// pi-agent-core's placeholder model (`unknown` provider, id and api) an interactive session
/// starts with when no model has credentials; it cannot reach any server.
pub fn unknown_model() -> Model {
    Model {
        id: "unknown".into(),
        name: "unknown".into(),
        api: "unknown".into(),
        provider: "unknown".into(),
        ..Model::default()
    }
}

/// Whether `model` is the placeholder of [`unknown_model`] (pi's `isUnknownModel`).
pub fn is_unknown_model(model: &Model) -> bool {
    model.provider == "unknown" && model.id == "unknown" && model.api == "unknown"
}

/// The default model id of `provider`, when pi names one.
pub fn default_model_id(provider: &str) -> Option<&'static str> {
    DEFAULT_MODEL_PER_PROVIDER.iter().find(|(p, _)| *p == provider).map(|(_, id)| *id)
}

/// pi's `findInitialModel` step 3: among the models with credentials, the first provider's
/// default model in pi's order, else the first available model.
pub fn initial_available_model<'a>(available: &[&'a Model]) -> Option<&'a Model> {
    DEFAULT_MODEL_PER_PROVIDER
        .iter()
        .find_map(|(provider, id)| available.iter().find(|m| m.provider == *provider && m.id == *id))
        .or_else(|| available.first())
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_provider_with_its_default_model_wins() {
        let model = |provider: &str, id: &str| Model { provider: provider.into(), id: id.into(), ..Model::default() };
        let (groq_other, groq_default, anthropic) =
            (model("groq", "llama"), model("groq", "openai/gpt-oss-120b"), model("anthropic", "claude-opus-5-5"));
        assert_eq!(initial_available_model(&[&groq_other, &groq_default, &anthropic]), Some(&anthropic));
        assert_eq!(initial_available_model(&[&groq_other, &groq_default]), Some(&groq_default));
        assert_eq!(initial_available_model(&[&groq_other]), Some(&groq_other));
        assert_eq!(initial_available_model(&[]), None);
        assert_eq!(default_model_id("kimi-coding"), Some("kimi-for-coding"));
    }
}
