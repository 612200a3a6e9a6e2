//! A provider's auth at request time as extensions see it (pi's `ModelRuntime.getAuth`): for a
//! provider an extension registered, the runtime key, its stored OAuth credential (refreshed and
//! turned into a key by its `oauth` in the JavaScript host), a stored API key, or its configured
//! `apiKey`, with its configured `headers` (and `Authorization` when `authHeader`); for any other
//! provider what the agent dir's registry resolves (auth.json, models.json, environment).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};

use super::provider_oauth::{JsOAuth, has_oauth};
use crate::auth::{AuthStorage, CredentialType};
use crate::extensions::RegisteredProvider;
use crate::extensions::runtime::{Runtime, lock};

/// What a request to a provider authenticates with (pi-ai's `AuthResult`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProviderAuth {
    /// The API key (or token).
    pub api_key: Option<String>,
    /// Headers sent with it.
    pub headers: Vec<(String, String)>,
    /// Provider variables resolved with it.
    pub env: HashMap<String, String>,
    /// Where it came from ("OAuth", "stored credential", "configured API key", an env var name).
    pub source: Option<String>,
}

impl ProviderAuth {
    /// pi's `AuthResult` JSON: `{auth: {apiKey, headers}, env, source}`.
    pub fn to_json(&self) -> Value {
        let headers: serde_json::Map<String, Value> =
            self.headers.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
        let mut auth = json!({});
        if let Some(key) = &self.api_key {
            auth["apiKey"] = json!(key);
        }
        if !headers.is_empty() {
            auth["headers"] = Value::Object(headers);
        }
        let mut out = json!({"auth": auth});
        if !self.env.is_empty() {
            out["env"] = json!(self.env);
        }
        if let Some(source) = &self.source {
            out["source"] = json!(source);
        }
        out
    }
}

impl crate::extensions::ExtensionRunner {
    /// The agent dir whose auth.json and models.json the extensions' registry reads (the SDK
    /// sets the session's; else pi's default).
    pub fn set_agent_dir(&self, dir: PathBuf) {
        *lock(&self.runtime.agent_dir) = Some(dir);
    }

    /// The auth of a request to `provider`'s models (see the module docs).
    pub async fn registered_provider_auth(&self, provider: &RegisteredProvider) -> Result<ProviderAuth, String> {
        resolve_registered(&self.runtime, provider).await
    }
}

/// The session's agent dir.
pub(crate) fn agent_dir(runtime: &Runtime) -> PathBuf {
    lock(&runtime.agent_dir).clone().unwrap_or_else(crate::session::get_agent_dir)
}

/// The provider an extension registered under `name` (the last registration wins).
pub(crate) fn registered(runtime: &Runtime, name: &str) -> Option<RegisteredProvider> {
    lock(&runtime.providers).iter().rev().find(|p| p.name == name).cloned()
}

/// `provider`'s auth, `None` when it has none (see the module docs).
pub(crate) async fn resolve(runtime: &Arc<Runtime>, provider: &str) -> Result<Option<ProviderAuth>, String> {
    if let Some(registered) = registered(runtime, provider) {
        let auth = resolve_registered(runtime, &registered).await?;
        return Ok(auth.api_key.is_some().then_some(auth));
    }
    let registry = crate::auth::ModelRegistry::load(&agent_dir(runtime));
    if registry.needs_oauth_refresh(provider) {
        registry.refresh_oauth(provider).await.map_err(|e| e.to_string())?;
    }
    let Some(resolved) = registry.resolve(provider).map_err(|e| e.to_string())? else { return Ok(None) };
    let storage = registry.auth_storage();
    let source = if storage.runtime_api_key(provider).is_some() {
        "runtime".to_owned()
    } else {
        match storage.get(provider) {
            Ok(Some(c)) if c.kind() == CredentialType::OAuth => "OAuth".to_owned(),
            Ok(Some(_)) => "stored credential".to_owned(),
            _ => pi_ai::models::env_api_key_vars(provider)
                .and_then(|vars| vars.iter().find(|v| std::env::var(v).is_ok_and(|x| !x.is_empty())))
                .map_or_else(|| "configured API key".to_owned(), |v| (*v).to_owned()),
        }
    };
    Ok(Some(ProviderAuth {
        api_key: resolved.api_key,
        headers: resolved.headers.into_iter().filter_map(|(k, v)| Some((k, v?))).collect(),
        env: resolved.env,
        source: Some(source),
    }))
}

/// The auth of a provider an extension registered (a key may be absent).
pub(crate) async fn resolve_registered(
    runtime: &Arc<Runtime>,
    provider: &RegisteredProvider,
) -> Result<ProviderAuth, String> {
    let storage = AuthStorage::for_agent_dir(&agent_dir(runtime));
    let stored = storage.get(&provider.name).ok().flatten();
    let (api_key, source) = if let Some(key) = storage.runtime_api_key(&provider.name) {
        (Some(key), "runtime")
    } else if has_oauth(provider) && stored.as_ref().is_some_and(|c| c.kind() == CredentialType::OAuth) {
        (JsOAuth::new(runtime, provider).request_key(&storage).await?, "OAuth")
    } else if let Some(key) = stored.as_ref().and_then(|c| c.key()) {
        (Some(key.to_owned()), "stored credential")
    } else {
        let configured = provider.config.get("apiKey").and_then(Value::as_str);
        (configured.and_then(pi_ai::models::resolve_config_value), "configured API key")
    };
    let mut headers: Vec<(String, String)> = Vec::new();
    if let Some(configured) = provider.config.get("headers").and_then(Value::as_object) {
        for (name, value) in configured {
            if let Some(v) = value.as_str().and_then(pi_ai::models::resolve_config_value) {
                headers.push((name.clone(), v));
            }
        }
    }
    if provider.config.get("authHeader").and_then(Value::as_bool) == Some(true)
        && let Some(key) = &api_key
    {
        headers.push(("Authorization".into(), format!("Bearer {key}")));
    }
    Ok(ProviderAuth { api_key, headers, env: HashMap::new(), source: Some(source.to_owned()) })
}

/// pi's `getProviderAuthStatus(provider)`: `{configured, source?, label?}`.
pub(crate) fn auth_status(runtime: &Runtime, provider: &str) -> Value {
    let storage = AuthStorage::for_agent_dir(&agent_dir(runtime));
    if storage.runtime_api_key(provider).is_some() {
        return json!({"configured": true, "source": "runtime"});
    }
    if storage.has(provider).unwrap_or(false) {
        return json!({"configured": true, "source": "stored"});
    }
    if let Some(p) = registered(runtime, provider) {
        return match p.config.get("apiKey").and_then(Value::as_str) {
            Some(raw) if pi_ai::models::is_command_config_value(raw) => {
                json!({"configured": true, "source": "models_json_command"})
            }
            Some(_) => json!({"configured": true, "source": "models_json_key"}),
            None => json!({"configured": false}),
        };
    }
    match pi_ai::models::env_api_key_vars(provider)
        .and_then(|vars| vars.iter().find(|v| std::env::var(v).is_ok_and(|x| !x.is_empty())))
    {
        Some(var) => json!({"configured": true, "source": "environment", "label": var}),
        None => json!({"configured": false}),
    }
}

/// Whether requests to `provider` use a stored OAuth credential (pi's `isUsingOAuth`).
pub(crate) fn is_using_oauth(runtime: &Runtime, provider: &str) -> bool {
    let storage = AuthStorage::for_agent_dir(&agent_dir(runtime));
    storage.runtime_api_key(provider).is_none()
        && matches!(storage.get(provider), Ok(Some(c)) if c.kind() == CredentialType::OAuth)
}

/// pi's `getProviderDisplayName`: the registered `name`, its `oauth.name`, else the id.
pub(crate) fn display_name(runtime: &Runtime, provider: &str) -> String {
    let Some(p) = registered(runtime, provider) else { return provider.to_owned() };
    p.config
        .get("name")
        .or_else(|| p.config.pointer("/oauth/name"))
        .and_then(Value::as_str)
        .unwrap_or(provider)
        .to_owned()
}

/// pi's `getApiKeyAndHeaders(model)`: `{ok: true, apiKey?, headers?}` or `{ok: false, error}`.
pub(crate) async fn api_key_and_headers(runtime: &Arc<Runtime>, provider: &str) -> Value {
    match resolve(runtime, provider).await {
        Ok(Some(auth)) => {
            let mut out = auth.to_json()["auth"].clone();
            out["ok"] = json!(true);
            if !auth.env.is_empty() {
                out["env"] = json!(auth.env);
            }
            out
        }
        Ok(None) => match registered(runtime, provider) {
            Some(p) if p.config.get("authHeader").and_then(Value::as_bool) == Some(true) => {
                json!({"ok": false, "error": format!("No API key found for \"{provider}\"")})
            }
            _ => json!({"ok": true}),
        },
        Err(error) => json!({"ok": false, "error": error}),
    }
}
