//! Whether a provider an extension registered is available (pi's `ModelRuntime.hasConfiguredAuth`
//! after its availability pass over the composed provider): only then are its models listed
//! (`--list-models`, `/model`, `ctx.modelRegistry.getAvailable()`), restored or chosen as a
//! fallback.
//!
//! Available, in pi's order: a runtime key (`--api-key`) or a credential stored in `auth.json`
//! (an API key or an OAuth login); else the configured `apiKey` (the registration's, else the
//! provider's `models.json` `apiKey`, pi's `configuredRequestAuthStatus`): a `!command` counts
//! without running it, a value naming `$VARIABLES` counts when they are all set, a literal counts;
//! else, without a configured key, pi-ai's environment key of a known provider id. An OAuth-only
//! provider without a stored login, a provider with no key at all (`authHeader: false` changes
//! nothing) and a `streamSimple` provider without a key are not available. A native pi-ai
//! Provider an extension registered (`pi.registerProvider(provider)`) with an API-key method
//! counts as configured: pi asks its `check` / `resolve`, which run in the JavaScript host.

use std::path::Path;

use serde_json::Value;

use super::registrations::RegisteredProvider;
use crate::auth::AuthStorage;

/// The `apiKey` the provider's `models.json` entry configures, as written.
fn models_json_api_key(agent_dir: &Path, provider: &str) -> Option<String> {
    let config = pi_ai::models::ModelsConfig::load(agent_dir.join("models.json")).ok()?;
    config.providers.get(provider)?.api_key.clone()
}

/// pi's `configuredRequestAuthStatus(...).configured` for a configured key as written.
fn configured_key_counts(raw: &str) -> bool {
    pi_ai::models::is_command_config_value(raw)
        || pi_ai::models::config_value_env_names(raw).iter().all(|n| std::env::var(n).is_ok_and(|v| !v.is_empty()))
}

/// Whether `provider` has configured auth with the credentials of `agent_dir` (see the module
/// docs).
pub fn has_configured_auth(provider: &RegisteredProvider, agent_dir: &Path) -> bool {
    let name = provider.name.as_str();
    let storage = AuthStorage::for_agent_dir(agent_dir);
    if storage.runtime_api_key(name).is_some() || storage.has(name).unwrap_or(false) {
        return true;
    }
    // A native pi-ai Provider from the JavaScript host resolves its own key there.
    if provider.config.pointer("/native/apiKey") == Some(&Value::Bool(true)) {
        return true;
    }
    let own = provider.config.get("apiKey").and_then(Value::as_str).map(str::to_owned);
    match own.or_else(|| models_json_api_key(agent_dir, name)) {
        Some(raw) => configured_key_counts(&raw),
        None => pi_ai::models::env_api_key(name).is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn provider(name: &str, config: Value) -> RegisteredProvider {
        RegisteredProvider { name: name.to_owned(), config, extension_path: "x".to_owned() }
    }

    #[test]
    fn only_configured_keys_and_stored_credentials_count() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path();
        std::fs::write(
            agent.join("auth.json"),
            r#"{"stored": {"type": "api_key", "key": "s"}, "loggedin": {"type": "oauth", "access": "a", "refresh": "r", "expires": 1}}"#,
        )
        .unwrap();
        std::fs::write(agent.join("models.json"), r#"{"providers": {"fromjson": {"apiKey": "lit"}}}"#).unwrap();
        let available = |name: &str, config: Value| has_configured_auth(&provider(name, config), agent);
        assert!(available("withkey", json!({"apiKey": "k"})));
        assert!(available("bang", json!({"apiKey": "!false"})));
        assert!(!available("dollar", json!({"apiKey": "$PI_PROVREG_SURELY_UNSET"})));
        assert!(available("path", json!({"apiKey": "$PATH"})));
        assert!(!available("nokey", json!({})));
        assert!(!available("authhdr", json!({"authHeader": false})));
        assert!(!available("oauthonly", json!({"oauth": {"name": "O"}})));
        assert!(available("loggedin", json!({"oauth": {"name": "O"}})));
        assert!(available("stored", json!({})));
        assert!(available("fromjson", json!({})));
        // The registration's key wins over the models.json one.
        assert!(!available("fromjson", json!({"apiKey": "$PI_PROVREG_SURELY_UNSET"})));
    }
}
