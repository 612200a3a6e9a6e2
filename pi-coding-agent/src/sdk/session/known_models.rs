//! The models a session knows (pi's `ModelRuntime` as `ctx.modelRegistry` and `setModel` see it):
//! the session's list, then the models of providers extensions registered, then the virtual
//! models.

use serde_json::Value;

use super::AgentSession;

/// `ctx.modelRegistry`'s models: the session's model list (the built-in catalog when it has
/// none; with `available_only`, its models whose provider has an environment key), then the
/// models of providers extensions registered (with `available_only`, of those with configured
/// auth).
pub(crate) fn session_models(session: &AgentSession, available_only: bool) -> Vec<pi_ai::Model> {
    let mut out: Vec<pi_ai::Model> = if !session.shared.models.is_empty() {
        session.shared.models.clone()
    } else {
        pi_ai::models::builtin_catalog()
            .iter()
            .filter(|(provider, _)| !available_only || pi_ai::models::env_api_key(provider).is_some())
            .flat_map(|(_, list)| list.iter().cloned())
            .collect()
    };
    let current = session.model();
    if !out.iter().any(|m| m.provider == current.provider && m.id == current.id) {
        out.insert(0, current);
    }
    if let Some(runner) = session.shared.runner.as_ref() {
        // pi lists a registered provider's models as available only when it has configured auth.
        // A registered provider's models replace the list's of that name (the startup list may
        // hold them already).
        let registered = runner.registered_providers();
        out.retain(|m| !registered.iter().any(|p| p.name == m.provider));
        let providers = if available_only { runner.available_registered_providers() } else { registered };
        for provider in providers {
            out.extend(provider.model_values().into_iter().filter_map(|m| serde_json::from_value(m).ok()));
        }
        out = crate::extensions::with_virtual_models(out, &runner.virtual_models());
    }
    out
}

/// The model `pi.setModel` switches to (and a resumed session restores): one the session can
/// use, else a virtual model or one of a provider an extension registered that has configured
/// auth (pi's `hasConfiguredAuth`).
pub(crate) fn extension_model(session: &AgentSession, provider: &str, id: &str) -> Option<pi_ai::Model> {
    if let Some(model) = session.available_model(provider, id) {
        return Some(model);
    }
    let runner = session.shared.runner.as_ref()?;
    if let Some(v) = runner.virtual_model(provider, id) {
        return Some(v.model);
    }
    runner
        .available_registered_providers()
        .into_iter()
        .rev()
        .find(|p| p.name == provider)?
        .model_values()
        .into_iter()
        .find(|m| m.get("id").and_then(Value::as_str) == Some(id))
        .and_then(|m| serde_json::from_value(m).ok())
}
