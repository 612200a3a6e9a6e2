//! A provider's `refreshModels` and `oauth.modifyModels` (`pi.registerProvider(name, {
//! refreshModels, oauth: { modifyModels } })`): the functions stay in the JavaScript host, the
//! config pi-rs receives marks which exist (`refreshModels: true`, `oauth.modifyModels: true`).
//! As pi's composed provider does, pi-rs refreshes the provider's models after its registration,
//! once its extension is loaded (startup), and after a credential is stored or refreshed:
//! `refreshModels(context)`'s list replaces the registration's models, then, while an OAuth
//! credential is stored, `modifyModels(models, credential)` rewrites the chat models. The result
//! is kept in the runtime and listed instead of the registration's models (`/model`,
//! `--list-models`, requests).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::provider_oauth::{JsOAuth, has_oauth, host};
use super::request_auth::{agent_dir, registered};
use crate::auth::oauth::RefreshWhen;
use crate::auth::{AuthStorage, Credential, CredentialType};
use crate::extensions::ExtensionError;
use crate::extensions::RegisteredProvider;
use crate::extensions::runtime::{Runtime, lock};

const METHOD_REFRESH_MODELS: &str = "provider.refreshModels";
const METHOD_MODIFY_MODELS: &str = "provider.oauth.modifyModels";
/// `refreshModels` may reach a server; `modifyModels` is synchronous in pi.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// Whether `provider` was registered with a `refreshModels` in the host.
fn refreshes(provider: &RegisteredProvider) -> bool {
    provider.config.get("refreshModels") == Some(&Value::Bool(true))
}

/// Whether `provider` was registered with an `oauth.modifyModels` in the host.
fn modifies(provider: &RegisteredProvider) -> bool {
    has_oauth(provider) && provider.config.pointer("/oauth/modifyModels") == Some(&Value::Bool(true))
}

/// Whether `provider`'s models depend on the host's functions.
pub(crate) fn has_model_hooks(provider: &RegisteredProvider) -> bool {
    refreshes(provider) || modifies(provider)
}

/// `provider` as it is listed: its models replaced by the refreshed ones, if any.
pub(crate) fn with_live_models(runtime: &Runtime, mut provider: RegisteredProvider) -> RegisteredProvider {
    if let Some(models) = lock(&runtime.provider_models).get(&provider.name)
        && let Some(config) = provider.config.as_object_mut()
    {
        config.insert("models".into(), Value::Array(models.clone()));
    }
    provider
}

/// The provider's stored OAuth credential (refreshed when it expires soon), if any.
async fn oauth_credential(runtime: &Arc<Runtime>, provider: &RegisteredProvider) -> Result<Option<Credential>, String> {
    let storage = AuthStorage::for_agent_dir(&agent_dir(runtime));
    if storage.runtime_api_key(&provider.name).is_some() {
        return Ok(None);
    }
    let stored = storage.get(&provider.name).map_err(|e| e.to_string())?;
    if !stored.is_some_and(|c| c.kind() == CredentialType::OAuth) {
        return Ok(None);
    }
    let flow = JsOAuth::new(runtime, provider);
    let current =
        storage.refresh_oauth_with(&provider.name, &flow, RefreshWhen::ExpiresSoon).await.map_err(|e| e.to_string())?;
    Ok(current.filter(|c| c.kind() == CredentialType::OAuth))
}

async fn call(
    runtime: &Arc<Runtime>,
    provider: &RegisteredProvider,
    method: &str,
    mut params: Value,
) -> Result<Value, String> {
    let conn = host(runtime).await?;
    params["extensionPath"] = json!(provider.extension_path);
    params["provider"] = json!(provider.name);
    conn.call(method, method, params, CALL_TIMEOUT).await
}

/// The provider's models as the host's functions make them; `None` when they leave the
/// registration's models as they are.
async fn live_models(runtime: &Arc<Runtime>, provider: &RegisteredProvider) -> Result<Option<Vec<Value>>, String> {
    let credential = oauth_credential(runtime, provider).await?;
    let credential_json = credential.as_ref().map(Credential::as_json);
    let mut base = provider.clone();
    let mut changed = false;
    if refreshes(provider) {
        let params = json!({"credential": credential_json});
        if let Value::Array(models) = call(runtime, provider, METHOD_REFRESH_MODELS, params).await? {
            if let Some(config) = base.config.as_object_mut() {
                config.insert("models".into(), Value::Array(models));
            }
            changed = true;
        }
    }
    let models = base.model_values();
    let Some(credential) = credential_json.filter(|_| modifies(provider)) else {
        return Ok(changed.then_some(models));
    };
    // The hook is chat-only; other model types pass through untouched.
    let is_chat = |m: &Value| m.get("type").and_then(Value::as_str).is_none_or(|t| t == "chat");
    let (chat, other): (Vec<Value>, Vec<Value>) = models.into_iter().partition(is_chat);
    let params = json!({"models": chat, "credential": credential});
    let Value::Array(mut modified) = call(runtime, provider, METHOD_MODIFY_MODELS, params).await? else {
        return Err(format!("Provider {}: oauth.modifyModels returned no models", provider.name));
    };
    modified.extend(other);
    Ok(Some(modified))
}

/// Refreshes the models of the provider registered as `name` (see the module docs); an error is
/// reported as its extension's, and the registration's models stay listed.
pub(crate) async fn refresh(runtime: &Arc<Runtime>, name: &str) {
    let Some(provider) = registered(runtime, name).filter(has_model_hooks) else {
        lock(&runtime.provider_models).remove(name);
        return;
    };
    match live_models(runtime, &provider).await {
        Ok(models) => {
            // A registration that replaced this one while the host answered refreshes itself.
            if registered(runtime, name).as_ref() != Some(&provider) {
                return;
            }
            let mut live = lock(&runtime.provider_models);
            match models {
                Some(models) => live.insert(name.to_owned(), models),
                None => live.remove(name),
            };
        }
        Err(error) => runtime.report(ExtensionError::new(provider.extension_path, "refreshModels", error)),
    }
}

/// After `pi.registerProvider` / `pi.unregisterProvider`: the registration's own models are
/// listed until the host's functions answer (the call runs on the host's reader, so the refresh
/// runs beside it).
pub(crate) fn after_registry_call(runtime: &Arc<Runtime>, params: &Value) {
    let Some(name) = params.get("name").and_then(Value::as_str) else { return };
    lock(&runtime.provider_models).remove(name);
    if registered(runtime, name).is_some_and(|p| has_model_hooks(&p))
        && let Ok(handle) = tokio::runtime::Handle::try_current()
    {
        let (runtime, name) = (runtime.clone(), name.to_owned());
        handle.spawn(async move { refresh(&runtime, &name).await });
    }
}

/// Once the extension at `path` is loaded (pi's startup refresh): refreshes its providers' models.
pub(crate) async fn after_load(runtime: &Arc<Runtime>, path: &str) {
    let names: Vec<String> = lock(&runtime.providers)
        .iter()
        .filter(|p| p.extension_path == path && has_model_hooks(p))
        .map(|p| p.name.clone())
        .collect();
    for name in names {
        refresh(runtime, &name).await;
    }
}
