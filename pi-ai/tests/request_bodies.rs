//! Request bodies and headers of the three HTTP providers, scenario by scenario, against what the
//! real pi 1.6.0 sent (fixtures captured by `scripts/fixtures/http_requests.mjs`), plus insta
//! snapshots of our bodies for review.

mod support;

use pi_ai::ApiProvider;
use pi_ai::providers::anthropic::AnthropicMessages;
use pi_ai::providers::openai_completions::OpenAiCompletions;
use pi_ai::providers::openai_responses::OpenAiResponses;
use support::fixtures::{APIS, captured, ok_reply, scenario, scenario_names};
use support::{MockServer, Reply};

fn provider(api: &str) -> Option<Box<dyn ApiProvider>> {
    match api {
        "openai-completions" => Some(Box::new(OpenAiCompletions)),
        "anthropic-messages" => Some(Box::new(AnthropicMessages)),
        "openai-responses" => Some(Box::new(OpenAiResponses)),
        _ => None,
    }
}

/// Runs every scenario of `api` and compares bodies with pi's, key order included.
async fn check_api(api: &str) {
    let Some(provider) = provider(api) else { return };
    for name in scenario_names() {
        let server = MockServer::start([Reply::sse(ok_reply(api))]).await;
        let (model, context, options) = scenario(api, &name, &server.url());
        let result = provider.stream(&model, context, options).result().await;
        assert_eq!(result.error_message, None, "{api}/{name}");
        let requests = server.requests();
        assert_eq!(requests.len(), 1, "{api}/{name}");
        let ours = &requests[0];
        let pi = captured(api, &name);
        assert_eq!(ours.path, pi["path"].as_str().unwrap(), "{api}/{name}: path");
        pretty_assertions::assert_eq!(
            serde_json::to_string_pretty(&ours.body).unwrap(),
            serde_json::to_string_pretty(&pi["body"]).unwrap(),
            "{api}/{name}: body differs from pi 1.6.0's"
        );
        // Headers that carry meaning (SDK telemetry and transport headers are not ported).
        for header in ["authorization", "x-api-key", "anthropic-version", "anthropic-beta", "content-type", "accept"] {
            assert_eq!(ours.header(header), pi["headers"][header].as_str(), "{api}/{name}: header {header}");
        }
        let ua = ours.header("user-agent").unwrap();
        if let Some(claude_code) = pi["headers"]["user-agent"].as_str().filter(|u| u.starts_with("claude-cli/")) {
            // A subscription token presents Claude Code's identity instead of pi's.
            assert_eq!(ua, claude_code, "{api}/{name}: user-agent");
            assert_eq!(ours.header("x-app"), pi["headers"]["x-app"].as_str(), "{api}/{name}: x-app");
        } else {
            assert!(ua.starts_with("pi/") && ua.contains("(linux; rust/") || !cfg!(target_os = "linux"), "{ua}");
        }
        insta::assert_json_snapshot!(format!("{api}__{name}"), ours.body);
    }
}

#[tokio::test]
async fn completions_bodies_match_pi() {
    check_api(APIS[0]).await;
}

#[tokio::test]
async fn responses_bodies_match_pi() {
    check_api(APIS[1]).await;
}

#[tokio::test]
async fn anthropic_bodies_match_pi() {
    check_api(APIS[2]).await;
}
