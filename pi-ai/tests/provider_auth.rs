//! Provider auth applied to real requests on 127.0.0.1: `ANTHROPIC_AUTH_TOKEN` sent as
//! `Authorization: Bearer` (never `x-api-key`), Cloudflare's `{CLOUDFLARE_ACCOUNT_ID}` and
//! `{CLOUDFLARE_GATEWAY_ID}` filled into the base URL, AI Gateway's `cf-aig-authorization`, and a
//! failing credential store failing the request with its text.

mod support;

use std::collections::HashMap;
use std::sync::Arc;

use pi_ai::models::resolve_provider_auth;
use pi_ai::registry::{KeySource, Models, ProviderAuth, ProviderEntry};
use pi_ai::{Context, Message, Model, StopReason, UserMessage};
use support::fixtures::ok_reply;
use support::{MockServer, Reply, run};

fn context() -> Context {
    Context { messages: vec![Message::User(UserMessage::new("hi").into())], ..Default::default() }
}

fn model(provider: &str, api: &str, base_url: String) -> Model {
    let mut m = support::fixtures::model(api, "http://unused");
    m.provider = provider.into();
    m.base_url = base_url;
    m
}

/// A collection whose one provider resolves through `resolve_provider_auth` over `vars`.
fn models(model: &Model, vars: &[(&str, &str)]) -> Models {
    let vars: Arc<HashMap<String, String>> =
        Arc::new(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect());
    let mut models = Models::new();
    for api in pi_ai::providers::http_apis() {
        models.register_api(api);
    }
    let source =
        KeySource::new(move |provider, key| Ok(resolve_provider_auth(provider, key, &|n: &str| vars.get(n).cloned())));
    models.set_provider(ProviderEntry {
        id: model.provider.clone(),
        models: vec![model.clone()].into(),
        auth: ProviderAuth::Source(source),
        apis: HashMap::new(),
    });
    models
}

#[tokio::test]
async fn anthropic_auth_token_is_a_bearer_header() {
    let server = MockServer::start([Reply::sse(ok_reply("anthropic-messages"))]).await;
    let m = model("anthropic", "anthropic-messages", server.url());
    let models = models(&m, &[("ANTHROPIC_AUTH_TOKEN", "tok-1"), ("ANTHROPIC_API_KEY", "sk-ignored")]);
    let (_, reply) = run(models.stream(&m, context(), Default::default())).await;
    assert_eq!(reply.stop_reason, StopReason::Stop, "{:?}", reply.error_message);
    let request = &server.requests()[0];
    assert_eq!(request.header("authorization"), Some("Bearer tok-1"));
    assert_eq!(request.header("x-api-key"), None);
}

#[tokio::test]
async fn cloudflare_workers_ai_fills_the_account_into_the_url() {
    let server = MockServer::start([Reply::sse(ok_reply("openai-completions"))]).await;
    let base = format!("{}/client/v4/accounts/{{CLOUDFLARE_ACCOUNT_ID}}/ai/v1", server.url());
    let m = model("cloudflare-workers-ai", "openai-completions", base);
    let models = models(&m, &[("CLOUDFLARE_API_KEY", "cf-key"), ("CLOUDFLARE_ACCOUNT_ID", "acc-9")]);
    let (_, reply) = run(models.stream(&m, context(), Default::default())).await;
    assert_eq!(reply.stop_reason, StopReason::Stop, "{:?}", reply.error_message);
    let request = &server.requests()[0];
    assert_eq!(request.path, "/client/v4/accounts/acc-9/ai/v1/chat/completions");
    assert_eq!(request.header("authorization"), Some("Bearer cf-key"));
}

#[tokio::test]
async fn cloudflare_ai_gateway_sends_its_own_header_only() {
    let server = MockServer::start([Reply::sse(ok_reply("anthropic-messages"))]).await;
    let base = format!("{}/v1/{{CLOUDFLARE_ACCOUNT_ID}}/{{CLOUDFLARE_GATEWAY_ID}}/anthropic", server.url());
    let m = model("cloudflare-ai-gateway", "anthropic-messages", base);
    let vars = [("CLOUDFLARE_API_KEY", "cf-key"), ("CLOUDFLARE_ACCOUNT_ID", "acc"), ("CLOUDFLARE_GATEWAY_ID", "gw")];
    let models = models(&m, &vars);
    let (_, reply) = run(models.stream(&m, context(), Default::default())).await;
    assert_eq!(reply.stop_reason, StopReason::Stop, "{:?}", reply.error_message);
    let request = &server.requests()[0];
    assert!(request.path.starts_with("/v1/acc/gw/anthropic/v1/messages"), "{}", request.path);
    assert_eq!(request.header("cf-aig-authorization"), Some("Bearer cf-key"));
    assert_eq!(request.header("authorization"), None);
    assert_eq!(request.header("x-api-key"), None);
}

#[tokio::test]
async fn no_credential_and_a_failing_store_are_errors() {
    let m = model("cloudflare-workers-ai", "openai-completions", "http://127.0.0.1:9/{CLOUDFLARE_ACCOUNT_ID}".into());
    let models = models(&m, &[("CLOUDFLARE_API_KEY", "cf-key")]);
    let reply = models.complete(&m, context(), Default::default()).await;
    assert_eq!(reply.error_message.as_deref(), Some("No API key for provider: cloudflare-workers-ai"));

    let mut failing = Models::new();
    failing.set_provider(ProviderEntry {
        id: m.provider.clone(),
        models: vec![m.clone()].into(),
        auth: ProviderAuth::Source(KeySource::new(|_, _| Err("auth.json is broken".into()))),
        apis: HashMap::new(),
    });
    let reply = failing.complete(&m, context(), Default::default()).await;
    assert_eq!(reply.stop_reason, StopReason::Error);
    assert_eq!(reply.error_message.as_deref(), Some("auth.json is broken"));
}

#[tokio::test]
async fn azure_chat_models_use_the_configured_endpoint_and_deployment() {
    let server = MockServer::start([Reply::sse(ok_reply("openai-completions"))]).await;
    let mut m = model("azure", "openai-completions", String::new());
    m.id = "gpt-4o".into();
    let base = format!("{}/openai/v1", server.url());
    let vars = [
        ("AZURE_OPENAI_API_KEY", "az-key"),
        ("AZURE_OPENAI_BASE_URL", base.as_str()),
        ("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "gpt-4o=prod-4o,other=x"),
    ];
    let (_, reply) = run(models(&m, &vars).stream(&m, context(), Default::default())).await;
    assert_eq!(reply.stop_reason, StopReason::Stop, "{:?}", reply.error_message);
    assert_eq!(reply.model, "gpt-4o", "the catalog id stays the message's model");
    let request = &server.requests()[0];
    assert_eq!(request.path, "/openai/v1/chat/completions");
    assert_eq!(request.body["model"], "prod-4o");
    assert_eq!(request.header("authorization"), Some("Bearer az-key"));

    let reply = models(&m, &[("AZURE_OPENAI_API_KEY", "az-key")]).complete(&m, context(), Default::default()).await;
    assert!(reply.error_message.as_deref().is_some_and(|e| e.starts_with("Azure OpenAI base URL is required.")));
}
