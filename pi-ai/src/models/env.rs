//! API keys from the environment (pi's `env-api-keys.js`).

/// `ANTHROPIC_AUTH_TOKEN`: sent as `Authorization: Bearer`, so never returned as an API key.
pub const ANTHROPIC_AUTH_TOKEN_ENV: &str = "ANTHROPIC_AUTH_TOKEN";

/// The environment variables that may hold `provider`'s API key, in priority order.
///
/// ```
/// assert_eq!(pi_ai::models::env_api_key_vars("groq"), Some(&["GROQ_API_KEY"][..]));
/// assert_eq!(pi_ai::models::env_api_key_vars("nope"), None);
/// ```
pub fn env_api_key_vars(provider: &str) -> Option<&'static [&'static str]> {
    Some(match provider {
        "github-copilot" => &["COPILOT_GITHUB_TOKEN"],
        "anthropic" => &[ANTHROPIC_AUTH_TOKEN_ENV, "ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"],
        "ant-ling" => &["ANT_LING_API_KEY"],
        "qwen-token-plan" => &["QWEN_TOKEN_PLAN_TEAM_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"],
        "qwen-token-plan-cn" => &["QWEN_TOKEN_PLAN_TEAM_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"],
        "qwen-token-plan-individual" => &["QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"],
        "qwen-token-plan-individual-cn" => &["QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"],
        "openai" => &["OPENAI_API_KEY"],
        "azure" => &["AZURE_OPENAI_API_KEY"],
        "nvidia" => &["NVIDIA_API_KEY"],
        "deepseek" => &["DEEPSEEK_API_KEY"],
        "google" => &["GEMINI_API_KEY"],
        "google-vertex" => &["GOOGLE_CLOUD_API_KEY"],
        "groq" => &["GROQ_API_KEY"],
        "cerebras" => &["CEREBRAS_API_KEY"],
        "xai" => &["XAI_API_KEY"],
        "typesafe" => &["TYPESAFE_API_KEY"],
        "radius" => &["RADIUS_API_KEY"],
        "openrouter" => &["OPENROUTER_API_KEY"],
        "vercel-ai-gateway" => &["AI_GATEWAY_API_KEY"],
        "zai" => &["ZAI_API_KEY"],
        "zai-coding-cn" => &["ZAI_CODING_CN_API_KEY"],
        "mistral" => &["MISTRAL_API_KEY"],
        "minimax" => &["MINIMAX_API_KEY"],
        "minimax-cn" => &["MINIMAX_CN_API_KEY"],
        "moonshotai" | "moonshotai-cn" => &["MOONSHOT_API_KEY"],
        "huggingface" => &["HF_TOKEN"],
        "fireworks" => &["FIREWORKS_API_KEY"],
        "together" => &["TOGETHER_API_KEY"],
        "baseten" => &["BASETEN_API_KEY"],
        "opencode" | "opencode-go" => &["OPENCODE_API_KEY"],
        "kimi-coding" => &["KIMI_API_KEY"],
        "meta" => &["META_API_KEY"],
        "cloudflare-workers-ai" | "cloudflare-ai-gateway" => &["CLOUDFLARE_API_KEY"],
        "xiaomi" => &["XIAOMI_API_KEY"],
        "xiaomi-token-plan-cn" => &["XIAOMI_TOKEN_PLAN_CN_API_KEY"],
        "xiaomi-token-plan-ams" => &["XIAOMI_TOKEN_PLAN_AMS_API_KEY"],
        "xiaomi-token-plan-sgp" => &["XIAOMI_TOKEN_PLAN_SGP_API_KEY"],
        _ => return None,
    })
}

/// The API key for `provider` from the process environment (pi's `getEnvApiKey`).
pub fn env_api_key(provider: &str) -> Option<String> {
    env_api_key_with(provider, |name| std::env::var(name).ok())
}

/// [`env_api_key`] over any variable lookup (empty values count as unset).
///
/// ```
/// use pi_ai::models::env_api_key_with;
/// let env = |name: &str| (name == "ANTHROPIC_API_KEY").then(|| "sk-ant".to_owned());
/// assert_eq!(env_api_key_with("anthropic", env).as_deref(), Some("sk-ant"));
/// ```
pub fn env_api_key_with(provider: &str, env: impl Fn(&str) -> Option<String>) -> Option<String> {
    let get = |name: &str| env(name).filter(|v| !v.is_empty());
    if let Some(vars) = env_api_key_vars(provider) {
        let found = vars
            .iter()
            .find(|name| get(name).is_some() && !(provider == "anthropic" && **name == ANTHROPIC_AUTH_TOKEN_ENV));
        if let Some(name) = found {
            return get(name);
        }
    }
    match provider {
        "google-vertex" => {
            let credentials = match get("GOOGLE_APPLICATION_CREDENTIALS") {
                Some(path) => std::path::Path::new(&path).exists(),
                None => dirs::home_dir()
                    .is_some_and(|h| h.join(".config/gcloud/application_default_credentials.json").exists()),
            };
            let project = get("GOOGLE_CLOUD_PROJECT").is_some() || get("GCLOUD_PROJECT").is_some();
            (credentials && project && get("GOOGLE_CLOUD_LOCATION").is_some()).then(|| "<authenticated>".to_owned())
        }
        "amazon-bedrock" => {
            let ok = get("AWS_PROFILE").is_some()
                || (get("AWS_ACCESS_KEY_ID").is_some() && get("AWS_SECRET_ACCESS_KEY").is_some())
                || get("AWS_BEARER_TOKEN_BEDROCK").is_some()
                || get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI").is_some()
                || get("AWS_CONTAINER_CREDENTIALS_FULL_URI").is_some()
                || get("AWS_WEB_IDENTITY_TOKEN_FILE").is_some();
            ok.then(|| "<authenticated>".to_owned())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_skips_the_bearer_token() {
        let env = |name: &str| match name {
            "ANTHROPIC_AUTH_TOKEN" => Some("bearer".to_owned()),
            "ANTHROPIC_OAUTH_TOKEN" => Some("oauth".to_owned()),
            _ => None,
        };
        assert_eq!(env_api_key_with("anthropic", env).as_deref(), Some("oauth"));
        assert_eq!(env_api_key_with("anthropic", |n| (n == "ANTHROPIC_AUTH_TOKEN").then(String::new)), None);
        assert_eq!(env_api_key_with("openai", |_| Some(String::new())), None);
    }
}
