//! Requests to the models of providers extensions registered (pi's `registerProvider`): such a
//! model is sent through pi-ai's HTTP APIs with the provider's `apiKey` (literal, `$VAR` or
//! `!command` as in models.json) and `headers`, read at request time, so a provider registered
//! again (llama.cpp after `/llama`) is used at once. Other models go to the session's stream.

use std::collections::HashMap;
use std::sync::Arc;

use pi_agent_core::StreamFn;
use pi_ai::registry::{Models, ProviderAuth, ProviderEntry};
use pi_ai::{Context, Model};
use serde_json::Value;

use crate::extensions::ExtensionRunner;

/// `inner`, except for models whose provider an extension registered.
pub(crate) fn with_registered_providers(runner: Arc<ExtensionRunner>, inner: StreamFn) -> StreamFn {
    Arc::new(move |model: &Model, transcript, mut options| {
        let registered = runner.registered_providers().into_iter().rev().find(|p| p.name == model.provider);
        let Some(provider) = registered else { return inner(model, transcript, options) };
        if provider.config.get("streamSimple").and_then(Value::as_bool) == Some(true) {
            return runner.js_provider_stream(&provider, model, transcript, options);
        }
        let key = provider.config.get("apiKey").and_then(Value::as_str).and_then(pi_ai::models::resolve_config_value);
        if let Some(headers) = provider.config.get("headers").and_then(Value::as_object) {
            for (name, value) in headers {
                if let Some(v) = value.as_str().and_then(pi_ai::models::resolve_config_value)
                    && !options.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name))
                {
                    options.headers.push((name.clone(), Some(v)));
                }
            }
        }
        let mut models = Models::new();
        for api in pi_ai::providers::http_apis() {
            models.register_api(api);
        }
        let auth = match key {
            Some(k) => ProviderAuth::Key(k),
            None => ProviderAuth::Keyless,
        };
        models.set_provider(ProviderEntry {
            id: provider.name.clone(),
            models: Default::default(),
            auth,
            apis: HashMap::new(),
        });
        let context = Context { system_prompt: None, messages: transcript.into_messages(), tools: None };
        models.stream_simple(model, context, options)
    })
}
