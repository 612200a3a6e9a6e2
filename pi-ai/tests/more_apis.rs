//! The APIs of issue 16 (`google-generative-ai`, `google-vertex`, `mistral-conversations`,
//! `azure-openai-responses`, `openai-codex-responses`) over real HTTP on 127.0.0.1: request bodies
//! compared byte for byte with what real pi 1.6.0 sent (`tests/fixtures/http/apis/`, captured by
//! `scripts/fixtures/http_requests_apis.mjs`), the fault matrix against pi's recorded outcomes
//! (`scripts/fixtures/http_faults_apis.mjs`), and streams replayed from constructed fixtures.

mod support;

#[path = "more_apis/common.rs"]
mod common;
#[path = "more_apis/faults.rs"]
mod faults;
#[path = "more_apis/streams.rs"]
mod streams;
#[path = "more_apis/vertex_adc.rs"]
mod vertex_adc;

use common::{APIS, captured, ok_reply, provider, scenario, scenario_names};
use support::{MockServer, Reply};

/// Runs every scenario of `api` and compares the request with pi's, key order included.
async fn check_bodies(api: &str) {
    for name in scenario_names() {
        let server = MockServer::start([Reply::sse(ok_reply(api))]).await;
        let (model, context, options) = scenario(api, &name, &server.url());
        let result = provider(api).stream(&model, context, options).result().await;
        let pi = captured(api, &name);
        assert_eq!(result.error_message.as_deref(), pi["result"]["errorMessage"].as_str(), "{api}/{name}: error");
        let requests = server.requests();
        if pi["path"].is_null() {
            assert!(requests.is_empty(), "{api}/{name}: pi sent nothing");
            continue;
        }
        assert_eq!(requests.len(), 1, "{api}/{name}");
        let ours = &requests[0];
        assert_eq!(ours.path, pi["path"].as_str().unwrap_or_default(), "{api}/{name}: path");
        pretty_assertions::assert_eq!(
            serde_json::to_string_pretty(&ours.body).unwrap_or_default(),
            serde_json::to_string_pretty(&pi["body"]).unwrap_or_default(),
            "{api}/{name}: body differs from pi 1.6.0's"
        );
        for header in [
            "authorization",
            "x-goog-api-key",
            "api-key",
            "content-type",
            "chatgpt-account-id",
            "openai-beta",
            "originator",
            "session-id",
            "x-client-request-id",
            "x-affinity",
            "content-encoding",
        ] {
            assert_eq!(ours.header(header), pi["headers"][header].as_str(), "{api}/{name}: header {header}");
        }
        let ua = ours.header("user-agent").unwrap_or_default();
        assert!(ua.starts_with("pi/"), "{api}/{name}: {ua}");
    }
}

#[tokio::test]
async fn gemini_bodies_match_pi() {
    check_bodies(APIS[0]).await;
}

#[tokio::test]
async fn vertex_bodies_match_pi() {
    check_bodies(APIS[1]).await;
}

#[tokio::test]
async fn mistral_bodies_match_pi() {
    check_bodies(APIS[2]).await;
}

#[tokio::test]
async fn azure_bodies_match_pi() {
    check_bodies(APIS[3]).await;
}

#[tokio::test]
async fn codex_bodies_match_pi() {
    check_bodies(APIS[4]).await;
}

/// Every catalog model of the five APIs has its implementation registered and builds a request
/// offline (Azure models without a configured endpoint fail as pi does).
#[test]
fn every_catalog_model_of_the_new_apis_builds_a_request() {
    let registered: Vec<String> = pi_ai::providers::http_apis().iter().map(|a| a.api().to_owned()).collect();
    let context = pi_ai::transcript::normalize_context(pi_ai::Context {
        system_prompt: Some("s".into()),
        messages: vec![pi_ai::Message::User(pi_ai::UserMessage::new("hi").into())],
        ..Default::default()
    });
    let mut seen = 0;
    for models in pi_ai::models::builtin_catalog().values() {
        for model in models.iter().filter(|m| APIS.contains(&m.api.as_str())) {
            seen += 1;
            assert!(registered.contains(&model.api), "{}: {}", model.id, model.api);
            let body =
                futures::executor::block_on(pi_ai::providers::request_body(model, &context, &Default::default()));
            let azure_env =
                ["AZURE_OPENAI_BASE_URL", "AZURE_OPENAI_RESOURCE_NAME"].iter().any(|v| std::env::var_os(v).is_some());
            if model.api == "azure-openai-responses" && model.base_url.is_empty() && !azure_env {
                assert!(body.unwrap_err().starts_with("Azure OpenAI base URL is required."), "{}", model.id);
                continue;
            }
            let body = body.unwrap_or_else(|e| panic!("{}/{}: {e}", model.provider, model.id));
            assert!(body.is_object(), "{}", model.id);
        }
    }
    assert!(seen > 100, "{seen} models");
}
