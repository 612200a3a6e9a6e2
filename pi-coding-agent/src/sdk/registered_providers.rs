//! Requests to the models of providers extensions registered (pi's `registerProvider`): such a
//! model is sent through pi-ai's HTTP APIs with the provider's `apiKey` (literal, `$VAR` or
//! `!command` as in models.json) and `headers`, read at request time, so a provider registered
//! again (llama.cpp after `/llama`) is used at once. Other models go to the session's stream.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use pi_agent_core::StreamFn;
use pi_ai::options::StreamOptions;
use pi_ai::registry::{Models, ProviderAuth, ProviderEntry};
use pi_ai::transcript::TranscriptContext;
use pi_ai::{AssistantMessage, AssistantMessageEventStream, Context, Model, StopReason};
use serde_json::Value;

use crate::extensions::{ExtensionRunner, RegisteredProvider};

/// `inner`, except for models whose provider an extension registered.
pub(crate) fn with_registered_providers(runner: Arc<ExtensionRunner>, inner: StreamFn) -> StreamFn {
    Arc::new(move |model: &Model, transcript, mut options| {
        let registered = runner.registered_providers().into_iter().rev().find(|p| p.name == model.provider);
        let Some(provider) = registered else { return inner(model, transcript, options) };
        if provider.config.get("streamSimple").and_then(Value::as_bool) == Some(true) {
            return runner.js_provider_stream(&provider, model, transcript, options);
        }
        // A provider with `oauth` takes its key from the stored credential (refreshed, through its
        // `getApiKey`), resolved when the request starts.
        if provider.config.get("oauth").is_some_and(Value::is_object) && options.api_key.is_none() {
            let (runner, model) = (runner.clone(), model.clone());
            let start = async move {
                match runner.registered_provider_auth(&provider).await {
                    Ok(auth) => {
                        options.api_key = auth.api_key;
                        http_stream(&provider, &model, transcript, options)
                    }
                    Err(error) => AssistantMessageEventStream::failed(AssistantMessage {
                        api: model.api.clone(),
                        provider: model.provider.clone(),
                        model: model.id.clone(),
                        stop_reason: StopReason::Error,
                        error_message: Some(error),
                        timestamp: pi_ai::now_ms(),
                        ..Default::default()
                    }),
                }
            };
            return AssistantMessageEventStream::new(futures::stream::once(start).flatten());
        }
        http_stream(&provider, model, transcript, options)
    })
}

/// A request to `provider`'s model through pi-ai's HTTP APIs.
fn http_stream(
    provider: &RegisteredProvider,
    model: &Model,
    transcript: TranscriptContext,
    mut options: StreamOptions,
) -> AssistantMessageEventStream {
    {
        let key = options.api_key.clone().or_else(|| {
            provider.config.get("apiKey").and_then(Value::as_str).and_then(pi_ai::models::resolve_config_value)
        });
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
    }
}
