//! GitHub Copilot's rate-limited calls as pi-ai's `fetchWithRateLimitRetry` makes them, against a
//! local server on 127.0.0.1: at login the model list and each policy call retry a 429 after its
//! `Retry-After`, a rate limit that outlasts two retries stops enabling models, and a token
//! refresh does not retry at all.

mod auth_support;

use auth_support::{Answer, Scripted, Seen, Server};
use pi_coding_agent::auth::Credential;
use pi_coding_agent::auth::oauth::{Endpoints, GitHubCopilotOAuth, LoginOptions, OAuthFlow};
use serde_json::json;

type Reply = (u16, Vec<(String, String)>, String);

fn ok(body: serde_json::Value) -> Reply {
    (200, Vec::new(), body.to_string())
}

fn limited(retry_after: Option<&str>) -> Reply {
    let headers = retry_after.map(|v| vec![("retry-after".to_owned(), v.to_owned())]).unwrap_or_default();
    (429, headers, "{\"message\":\"slow down\"}".into())
}

/// A Copilot account whose model list is rate limited `models_429` times, and whose policy
/// endpoint is rate limited for every call to `claude-haiku-4.5`.
fn server(models_429: usize) -> Server {
    Server::start_with_headers(move |req: &Seen, before: &[Seen]| {
        let count = before.iter().filter(|s| s.path == req.path).count();
        match req.path.as_str() {
            "/github.com/login/device/code" => ok(json!({"device_code": "dc", "user_code": "WXYZ-1234",
                "verification_uri": "https://github.com/login/device", "interval": 1, "expires_in": 900})),
            "/github.com/login/oauth/access_token" => ok(json!({"access_token": "ghu_github"})),
            "/api.github.com/copilot_internal/v2/token" => ok(
                json!({"token": "tid=1;proxy-ep=proxy.individual.githubcopilot.com", "expires_at": 4_000_000_000u64}),
            ),
            "/api.individual.githubcopilot.com/models" if count < models_429 => limited(Some("0")),
            "/api.individual.githubcopilot.com/models" => ok(json!({"data": [
                {"id": "gpt-4o", "model_picker_enabled": true, "policy": {"state": "enabled"}},
                {"id": "claude-haiku-4.5", "model_picker_enabled": true, "policy": {"state": "unconfigured"}},
                {"id": "claude-opus-4.8", "model_picker_enabled": true, "policy": {"state": "unconfigured"}}
            ]})),
            "/api.individual.githubcopilot.com/models/claude-haiku-4.5/policy" => limited(None),
            "/api.individual.githubcopilot.com/models/claude-opus-4.8/policy" => ok(json!({})),
            other => panic!("unexpected {other}"),
        }
    })
}

fn exact(server: &Server, path: &str) -> usize {
    server.requests(path).iter().filter(|s| s.path == path).count()
}

async fn login(server: &Server) -> Result<Credential, pi_coding_agent::auth::login::LoginError> {
    let flow = GitHubCopilotOAuth::new(Endpoints::local(&server.origin));
    let script = Scripted::new(vec![Answer::Text(String::new())], None);
    flow.login(&script, &LoginOptions::default()).await
}

#[tokio::test]
async fn login_retries_a_rate_limited_model_list_and_stops_enabling_when_the_limit_outlasts_its_retries() {
    let server = server(1);
    let credential = login(&server).await.unwrap();
    assert_eq!(exact(&server, "/api.individual.githubcopilot.com/models"), 2, "one 429, then the list");
    // The first policy call met 429 three times (two retries after 500 ms and 1 s), so the batch
    // stopped before the second model.
    assert_eq!(server.requests("/api.individual.githubcopilot.com/models/claude-haiku-4.5/policy").len(), 3);
    assert!(server.requests("/api.individual.githubcopilot.com/models/claude-opus-4.8/policy").is_empty());
    assert_eq!(
        credential.get("availableModelIds"),
        Some(&json!(["gpt-4o", "claude-haiku-4.5", "claude-opus-4.8"])),
        "picker-enabled models stay available"
    );
}

#[tokio::test]
async fn a_model_list_rate_limited_past_its_retries_fails_the_login_with_the_status() {
    let server = server(usize::MAX);
    let err = login(&server).await.unwrap_err().to_string();
    assert!(err.starts_with("429"), "{err}");
    assert_eq!(exact(&server, "/api.individual.githubcopilot.com/models"), 3, "two retries");
}

#[tokio::test]
async fn refresh_does_not_retry_a_rate_limited_model_list() {
    let server = server(usize::MAX);
    let flow = GitHubCopilotOAuth::new(Endpoints::local(&server.origin));
    let old = Credential::oauth("tid=0", "ghu_github", 0);
    let err = flow.refresh(&old).await.unwrap_err();
    assert!(err.starts_with("429"), "{err}");
    assert_eq!(exact(&server, "/api.individual.githubcopilot.com/models"), 1);
}
