//! pi's checks of a provider registration (`validateExtensionProvider`): the registration alone,
//! over the built-in provider of the same id and that id's `models.json` entry, before it is
//! stored. Then the re-registration merge (`ModelRuntime.registerProvider`): defined values of
//! the new registration over the previous one, whichever extension made it.
//!
//! The checks, in pi's order, with pi's messages (`X` the provider, `M` a model id):
//! - `streamSimple` without `api`: `Provider X: "api" is required when registering streamSimple.`
//! - the `models.json` entry of `X` (pi's `applyModelsJson`): `oauth` without `baseUrl`
//!   (`Provider X: "baseUrl" is required when "oauth" is set.`), an entry that sets nothing
//!   (`Provider X: must specify "baseUrl", "headers", "compat", "modelOverrides", or "models".`),
//!   and per model: no api (`Provider X, model M: no "api" specified. Set at provider or model
//!   level.`), no baseUrl (`Provider X: "baseUrl" is required when defining custom models.`), a
//!   `contextWindow` / `maxTokens` ≤ 0 (`Provider X, model M: invalid contextWindow` / `invalid
//!   maxTokens`);
//! - each model of the registration (pi's `extensionModelFromDefinition`): no api from the model,
//!   the registration (chat models) or a default model of the same type (`Provider X, model M:
//!   no "api" specified. Set it at model level or provider level.`, without `or provider level`
//!   for other types), no baseUrl likewise.
//!
//! pi's `Provider X: no authentication method configured.` cannot happen (a registration without
//! `oauth` always gets an API-key method), and pi checks no `contextWindow` of a registration's
//! own models.

use serde_json::{Map, Value};

use super::errors::ExtensionLoadError;
use super::registrations::RegisteredProvider;
use super::runtime::{Runtime, lock};

/// The type of a model definition (`type`, absent means `chat`).
fn model_type(model: &Value) -> &str {
    model.get("type").and_then(Value::as_str).unwrap_or("chat")
}

/// A JavaScript-truthy field.
fn truthy(object: &Value, key: &str) -> bool {
    match object.get(key) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(_) => true,
    }
}

/// A non-empty string field.
fn text<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// pi's `findExtensionModelDefaults` / `findModelDefaults`: among `models` of `kind`, the one
/// with the id, else one of the api, else (chat) an `openai-completions` one, else the first.
fn defaults<'a>(models: &'a [Value], kind: &str, id: Option<&str>, api: Option<&str>) -> Option<&'a Value> {
    let candidates: Vec<&Value> = models.iter().filter(|m| model_type(m) == kind).collect();
    let with = |key: &str, value: Option<&str>| {
        value.and_then(|v| candidates.iter().copied().find(|m| m.get(key).and_then(Value::as_str) == Some(v)))
    };
    with("id", id)
        .or_else(|| with("api", api))
        .or_else(|| (kind == "chat").then(|| with("api", Some("openai-completions"))).flatten())
        .or_else(|| candidates.first().copied())
}

/// pi's `applyModelsJson` for one provider: `base` (the built-in models as JSON) with the
/// `models.json` entry applied, or the entry's error (pi-ai's
/// [`apply_models_json`](pi_ai::models::apply_models_json), which the registry composes with too).
pub(crate) fn apply_models_json(id: &str, base: Vec<Value>, config: Option<&Value>) -> Result<Vec<Value>, String> {
    match config {
        Some(config) => pi_ai::models::apply_models_json(id, base, config),
        None => Ok(base),
    }
}

/// pi's `applyExtension` checks: each model of the registration gets an api and a baseUrl.
fn check_extension_models(id: &str, models: &[Value], config: &Value) -> Result<(), String> {
    let Some(definitions) = config.get("models").and_then(Value::as_array) else { return Ok(()) };
    for definition in definitions {
        let kind = model_type(definition);
        let model_id = definition.get("id").and_then(Value::as_str).unwrap_or_default();
        let own_api = text(definition, "api");
        let default = defaults(models, kind, Some(model_id), own_api);
        let api = own_api
            .or_else(|| (kind == "chat").then(|| text(config, "api")).flatten())
            .or_else(|| default.and_then(|d| text(d, "api")));
        if api.is_none() {
            let level = if kind == "chat" { "model level or provider level" } else { "model level" };
            return Err(format!("Provider {id}, model {model_id}: no \"api\" specified. Set it at {level}."));
        }
        let base_url = text(definition, "baseUrl")
            .or_else(|| text(config, "baseUrl"))
            .or_else(|| default.and_then(|d| text(d, "baseUrl")));
        if base_url.is_none() {
            return Err(format!("Provider {id}: \"baseUrl\" is required when defining custom models."));
        }
    }
    Ok(())
}

/// pi's `validateExtensionProvider`: `config` registered as `id` over the built-in models of `id`
/// (`builtin`, as JSON) and `id`'s `models.json` entry; the first error, pi's message.
pub fn validate_provider(
    id: &str,
    config: &Value,
    builtin: Vec<Value>,
    models_json: Option<&Value>,
) -> Result<(), String> {
    if truthy(config, "streamSimple") && !truthy(config, "api") {
        return Err(format!("Provider {id}: \"api\" is required when registering streamSimple."));
    }
    let models = apply_models_json(id, builtin, models_json)?;
    check_extension_models(id, &models, config)
}

/// The agent dir's `models.json` entries as written, read as the registry reads them (none when
/// the file is missing, unreadable or invalid: its own loader reports it).
fn models_json_entries(agent_dir: &std::path::Path) -> indexmap::IndexMap<String, Value> {
    pi_ai::models::ModelsConfig::load(agent_dir.join("models.json"))
        .map(|c| c.providers.into_iter().map(|(id, p)| (id, p.entry)).collect())
        .unwrap_or_default()
}

/// [`validate_provider`] over pi-ai's built-in catalog and the agent dir's `models.json` (an
/// unreadable or broken file counts as no entry: its own loader reports it).
pub(crate) fn validate_in_agent_dir(id: &str, config: &Value, agent_dir: &std::path::Path) -> Result<(), String> {
    let builtin: Vec<Value> =
        pi_ai::models::get_models(id).iter().filter_map(|m| serde_json::to_value(m).ok()).collect();
    let models_json = models_json_entries(agent_dir).shift_remove(id);
    validate_provider(id, config, builtin, models_json.as_ref())
}

/// What the JavaScript host's copy of these checks (`js-host/provider-validate.mjs`) needs:
/// `builtinIds`, the built-in provider ids, and `modelsJson`, the agent dir's `models.json`
/// providers (as written; none when it is unreadable).
pub(crate) fn provider_bases(agent_dir: &std::path::Path) -> Value {
    let models_json: Map<String, Value> = models_json_entries(agent_dir).into_iter().collect();
    serde_json::json!({"builtinIds": pi_ai::models::get_providers(), "modelsJson": models_json})
}

/// pi's re-registration merge: the values `config` defines over `previous`'s.
pub(crate) fn merge_registration(previous: Option<&Value>, config: Value) -> Value {
    let Some(Value::Object(previous)) = previous else { return config };
    let Value::Object(new) = config else { return config };
    let mut merged: Map<String, Value> = previous.clone();
    for (key, value) in new {
        if !value.is_null() {
            merged.insert(key, value);
        }
    }
    Value::Object(merged)
}

/// pi's `registerProvider(name, config)` from the extension at `path`, for every kind of
/// extension: validated, then merged over the previous registration of `name` and stored. A
/// rejected registration throws into the extension once the runner is bound; while extensions
/// load, pi queues registrations and reports a rejected one when it flushes them (`Extension
/// "<path>" error: <message>`, see [`ExtensionRunner::provider_errors`](super::ExtensionRunner::provider_errors)),
/// and the extension loads.
pub(crate) fn register_provider(runtime: &Runtime, name: &str, config: Value, path: &str) -> Result<(), String> {
    let agent_dir = lock(&runtime.agent_dir).clone().unwrap_or_else(crate::session::get_agent_dir);
    // pi checks no native pi-ai Provider (the JavaScript host marks one `native`).
    let native = config.get("native").is_some();
    let checked = if native { Ok(()) } else { validate_in_agent_dir(name, &config, &agent_dir) };
    if let Err(message) = checked {
        if runtime.actions().is_ok() {
            return Err(message);
        }
        lock(&runtime.provider_errors).push(ExtensionLoadError { path: path.to_owned(), error: message });
        return Ok(());
    }
    let mut providers = lock(&runtime.providers);
    let previous = providers.iter().rev().find(|p| p.name == name).map(|p| p.config.clone());
    // A native provider replaces the previous registration (pi's `registerNativeProvider`).
    let config = if native { config } else { merge_registration(previous.as_ref(), config) };
    providers.retain(|p| p.name != name);
    providers.push(RegisteredProvider { name: name.to_owned(), config, extension_path: path.to_owned() });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(config: Value) -> Result<(), String> {
        validate_provider("x", &config, Vec::new(), None)
    }

    #[test]
    fn registrations_get_pis_messages() {
        let ok = json!({"baseUrl": "http://h", "api": "openai-completions", "models": [{"id": "m"}]});
        assert_eq!(check(ok), Ok(()));
        assert_eq!(
            check(json!({"streamSimple": true, "models": []})),
            Err("Provider x: \"api\" is required when registering streamSimple.".to_owned())
        );
        assert_eq!(
            check(json!({"baseUrl": "http://h", "models": [{"id": "m"}]})),
            Err("Provider x, model m: no \"api\" specified. Set it at model level or provider level.".to_owned())
        );
        assert_eq!(
            check(json!({"baseUrl": "http://h", "api": "a", "models": [{"id": "i", "type": "image"}]})),
            Err("Provider x, model i: no \"api\" specified. Set it at model level.".to_owned())
        );
        assert_eq!(
            check(json!({"api": "a", "models": [{"id": "m"}]})),
            Err("Provider x: \"baseUrl\" is required when defining custom models.".to_owned())
        );
        // pi checks no limits of a registration's own models, and a registration without models
        // needs neither api nor baseUrl.
        assert_eq!(check(json!({"baseUrl": "h", "api": "a", "models": [{"id": "m", "contextWindow": 0}]})), Ok(()));
        assert_eq!(check(json!({"apiKey": "k"})), Ok(()));
    }

    #[test]
    fn a_builtin_provider_lends_its_api_and_base_url() {
        let builtin = vec![json!({"id": "b", "api": "openai-responses", "baseUrl": "https://b"})];
        assert_eq!(validate_provider("openai", &json!({"models": [{"id": "new"}]}), builtin.clone(), None), Ok(()));
        // Not to an image model.
        let image = json!({"models": [{"id": "i", "type": "image"}]});
        assert!(validate_provider("openai", &image, builtin, None).is_err());
    }

    #[test]
    fn the_models_json_entry_is_checked_too() {
        let at = |entry: Value| validate_provider("x", &json!({}), Vec::new(), Some(&entry));
        let model = |extra: Value| {
            let mut m = json!({"id": "m", "api": "a"});
            m.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            json!({"baseUrl": "h", "models": [m]})
        };
        assert_eq!(at(model(json!({"contextWindow": 0}))), Err("Provider x, model m: invalid contextWindow".into()));
        assert_eq!(at(model(json!({"maxTokens": -1}))), Err("Provider x, model m: invalid maxTokens".into()));
        assert_eq!(
            at(json!({"baseUrl": "h", "models": [{"id": "m"}]})),
            Err("Provider x, model m: no \"api\" specified. Set at provider or model level.".into())
        );
        assert_eq!(
            at(json!({"api": "a", "models": [{"id": "m"}]})),
            Err("Provider x: \"baseUrl\" is required when defining custom models.".into())
        );
        assert_eq!(
            at(json!({"oauth": true})),
            Err("Provider x: \"baseUrl\" is required when \"oauth\" is set.".into())
        );
        assert_eq!(
            at(json!({"name": "n"})),
            Err("Provider x: must specify \"baseUrl\", \"headers\", \"compat\", \"modelOverrides\", or \"models\"."
                .into())
        );
        assert_eq!(at(json!({"apiKey": "k"})), Ok(()));
    }

    #[test]
    fn a_re_registration_keeps_what_it_does_not_set() {
        let previous = json!({"apiKey": "k", "baseUrl": "a"});
        assert_eq!(
            merge_registration(Some(&previous), json!({"baseUrl": "b", "api": "x"})),
            json!({"apiKey": "k", "baseUrl": "b", "api": "x"})
        );
        assert_eq!(merge_registration(None, json!({"a": 1})), json!({"a": 1}));
    }
}
