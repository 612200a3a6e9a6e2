//! The headers a models.json entry adds to every request of its provider (pi's
//! `composeApiKeyAuth` / `composeOAuthAuth` with `withConfiguredAuth`, and `rawModelHeaders`):
//! the provider's `headers` (values resolved like `apiKey`: `$VAR`, `${VAR}`, `!command`,
//! literal) over the credential's own, `authHeader: true` adding `Authorization: Bearer <key>`,
//! then the model's `modelOverrides` and `models` headers over those. A value that does not
//! resolve fails the request with pi's message.

use pi_ai::models::{ProviderConfig, ResolvedAuth, resolve_config_value_or_err};
use pi_ai::options::StreamOptions;
use pi_ai::{AssistantMessage, AssistantMessageEventStream, Model, StopReason};
use serde_json::{Map, Value};

/// Resolves each header value (pi's `resolveHeadersOrThrow`); `description` names the owner.
fn resolve_headers(
    headers: &Map<String, Value>,
    description: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, String> {
    headers
        .iter()
        .map(|(name, value)| {
            let raw = value.as_str().unwrap_or_default();
            resolve_config_value_or_err(raw, &format!("{description} header \"{name}\""), env)
                .map(|v| (name.clone(), v))
        })
        .collect()
}

/// Sets `name` in `headers` as a JavaScript object spread does (an entry of the same name is
/// replaced).
fn set_header(headers: &mut Vec<(String, Option<String>)>, name: &str, value: String) {
    headers.retain(|(k, _)| k != name);
    headers.push((name.to_owned(), Some(value)));
}

/// pi's `withConfiguredAuth`: the provider's configured headers over `auth`'s, then
/// `Authorization: Bearer <key>` when the entry sets `authHeader`.
pub(crate) fn with_configured_headers(
    provider: &str,
    config: &ProviderConfig,
    mut auth: ResolvedAuth,
) -> Result<ResolvedAuth, String> {
    if let Some(headers) = &config.headers {
        let env = auth.env.clone();
        let resolved = resolve_headers(headers, &format!("provider \"{provider}\""), &|n| env.get(n).cloned())?;
        for (name, value) in resolved {
            set_header(&mut auth.headers, &name, value);
        }
    }
    if config.auth_header {
        let Some(key) = auth.api_key.clone() else { return Err("authHeader requires a resolved API key".into()) };
        set_header(&mut auth.headers, "Authorization", format!("Bearer {key}"));
    }
    Ok(auth)
}

/// The request options of a provider with a models.json entry: the model's own headers (which in
/// pi win over the provider's auth and configured headers), then its configured headers (pi's
/// `resolveConfiguredModelHeaders`), before the caller's own, which win (names compared without
/// case, as pi's `mergeHeaders`).
pub(crate) fn with_model_headers(
    config: Option<&ProviderConfig>,
    model: &Model,
    mut options: StreamOptions,
) -> Result<StreamOptions, String> {
    let Some(config) = config else { return Ok(options) };
    let chat = model.model_type.as_deref().is_none_or(|t| t == "chat");
    let own = model.headers.iter().flatten().filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())));
    let mut headers: Vec<(String, String)> = own.collect();
    if let Some(configured) = config.model_headers(&model.id).filter(|_| chat) {
        let env = options.env.clone();
        let lookup = |n: &str| env.as_ref().and_then(|e| e.get(n).cloned());
        let description = format!("model \"{}/{}\"", model.provider, model.id);
        for (name, value) in resolve_headers(&configured, &description, &lookup)? {
            headers.retain(|(k, _)| !k.eq_ignore_ascii_case(&name));
            headers.push((name, value));
        }
    }
    let mut merged: Vec<(String, Option<String>)> = headers
        .into_iter()
        .filter(|(name, _)| !options.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name)))
        .map(|(name, value)| (name, Some(value)))
        .collect();
    merged.append(&mut options.headers);
    options.headers = merged;
    Ok(options)
}

/// A request that failed before it was sent: one `error` event with `message`.
pub(crate) fn failed_request(model: &Model, message: String) -> AssistantMessageEventStream {
    AssistantMessageEventStream::failed(AssistantMessage {
        api: model.api.clone(),
        provider: model.provider.clone(),
        model: model.id.clone(),
        stop_reason: StopReason::Error,
        error_message: Some(message),
        timestamp: pi_ai::now_ms(),
        ..Default::default()
    })
}

/// A request through a registry whose credentials are not the agent dir's stored ones: the
/// provider's configured headers and `authHeader` (with the request's key, else `fallback_key`,
/// the entry's resolved `apiKey`), then the model's headers, before the caller's own.
pub(crate) fn with_configured_request(
    config: Option<&ProviderConfig>,
    fallback_key: Option<&str>,
    model: &Model,
    options: StreamOptions,
) -> Result<StreamOptions, String> {
    let Some(config) = config else { return Ok(options) };
    let mut options = with_model_headers(Some(config), model, options)?;
    let key = options.api_key.clone().or_else(|| fallback_key.map(str::to_owned));
    let auth = ResolvedAuth { api_key: key, ..Default::default() };
    let provider = &model.provider;
    let auth = with_configured_headers(provider, config, auth)
        .map_err(|e| format!("API key auth failed for provider {provider}: {e}"))?;
    let mut headers = auth.headers;
    headers.retain(|(name, _)| !options.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name)));
    headers.append(&mut options.headers);
    options.headers = headers;
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(entry: Value) -> ProviderConfig {
        let text = json!({"providers": {"p": entry}}).to_string();
        let parsed = pi_ai::models::ModelsConfig::parse("m.json", &text).expect("valid");
        parsed.providers["p"].clone()
    }

    #[test]
    fn provider_headers_resolve_and_auth_header_adds_the_bearer_key() {
        let c = config(json!({"apiKey": "k", "authHeader": true,
            "headers": {"x-lit": "1", "x-cmd": "!echo two", "Authorization": "ignored"}}));
        let auth = ResolvedAuth { headers: vec![("x-lit".into(), Some("old".into()))], ..ResolvedAuth::key("sk") };
        let out = with_configured_headers("p", &c, auth).expect("resolves");
        assert_eq!(
            out.headers,
            vec![
                ("x-lit".to_owned(), Some("1".to_owned())),
                ("x-cmd".to_owned(), Some("two".to_owned())),
                ("Authorization".to_owned(), Some("Bearer sk".to_owned())),
            ]
        );
    }

    #[test]
    fn unresolved_values_and_a_missing_key_fail_with_pis_messages() {
        let c = config(json!({"headers": {"x-a": "$PI_TEST_SURELY_UNSET_HEADER"}}));
        let err = with_configured_headers("p", &c, ResolvedAuth::key("k")).expect_err("unset");
        assert_eq!(
            err,
            "Failed to resolve provider \"p\" header \"x-a\" from environment variable: PI_TEST_SURELY_UNSET_HEADER"
        );
        let c = config(json!({"authHeader": true}));
        let err = with_configured_headers("p", &c, ResolvedAuth::default()).expect_err("no key");
        assert_eq!(err, "authHeader requires a resolved API key");
    }

    #[test]
    fn model_headers_come_before_the_callers() {
        let c = config(json!({"baseUrl": "u", "api": "openai-completions",
            "models": [{"id": "m", "headers": {"x-m": "def", "X-Call": "def"}}]}));
        let model: Model = serde_json::from_value(json!({"id": "m", "name": "m", "api": "openai-completions",
            "provider": "p", "baseUrl": "u", "reasoning": false, "input": ["text"],
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}, "contextWindow": 1, "maxTokens": 1}))
        .expect("model");
        let options = StreamOptions { headers: vec![("x-call".into(), Some("caller".into()))], ..Default::default() };
        let out = with_model_headers(Some(&c), &model, options).expect("resolves");
        assert_eq!(
            out.headers,
            vec![("x-m".to_owned(), Some("def".to_owned())), ("x-call".to_owned(), Some("caller".to_owned()))]
        );
    }

    #[test]
    fn a_request_without_stored_credentials_gets_provider_then_model_then_caller_headers() {
        let c = config(json!({"baseUrl": "u", "api": "openai-completions", "apiKey": "k", "authHeader": true,
            "headers": {"x-p": "prov", "x-both": "prov", "x-call": "prov"},
            "models": [{"id": "m", "headers": {"x-both": "model"}}]}));
        let model: Model = serde_json::from_value(json!({"id": "m", "name": "m", "api": "openai-completions",
            "provider": "p", "baseUrl": "u", "reasoning": false, "input": ["text"],
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}, "contextWindow": 1, "maxTokens": 1}))
        .expect("model");
        let options = StreamOptions { headers: vec![("X-Call".into(), Some("caller".into()))], ..Default::default() };
        let out = with_configured_request(Some(&c), Some("fallback"), &model, options).expect("resolves");
        let pairs: Vec<(&str, &str)> =
            out.headers.iter().map(|(k, v)| (k.as_str(), v.as_deref().unwrap_or_default())).collect();
        assert_eq!(
            pairs,
            [("x-p", "prov"), ("Authorization", "Bearer fallback"), ("x-both", "model"), ("X-Call", "caller")]
        );
        let none = with_configured_request(None, None, &model, StreamOptions::default()).expect("no entry");
        assert!(none.headers.is_empty());
    }
}
