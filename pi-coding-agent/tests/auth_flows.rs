//! Every OAuth sign-in of pi 1.6.0 against a local authorization server on 127.0.0.1 that speaks
//! the provider's endpoints (authorize via the loopback callback, token, device code, refresh):
//! success with the credential stored in the reference's shape, denial, an expired device code,
//! `slow_down`, a pasted code instead of the callback, and each provider's refresh and `toAuth`.

mod auth_support;

use std::sync::Arc;

use auth_support::{Answer, Scripted, Server, challenge_of, keys, pages_after, param, redirecting_browser};
use pi_coding_agent::auth::login::{AuthEvent, AuthPrompt, LoginError};
use pi_coding_agent::auth::oauth::{
    AnthropicOAuth, Endpoints, GitHubCopilotOAuth, KimiCodingOAuth, LoginOptions, MetaOAuth, OAuthFlow,
    OAuthRequestAuth, OpenAIChatGPTOAuth, OpenAICodexOAuth, OpenRouterOAuth, RadiusOAuth, XaiOAuth,
};
use pi_coding_agent::auth::{Credential, CredentialType};
use serde_json::{Value, json};

fn ok(body: Value) -> (u16, String) {
    (200, body.to_string())
}

fn text(s: &str) -> Answer {
    Answer::Text(s.to_owned())
}

async fn login(flow: &dyn OAuthFlow, script: &Scripted) -> Result<Credential, LoginError> {
    let options = LoginOptions { device_id: Some("0b3c0a4e-8f3a-4c55-9a52-2f3c1d9e7a10".into()), agent_name: None };
    flow.login(script, &options).await
}

fn device_code_event(script: &Scripted) -> (String, String) {
    script
        .events
        .lock()
        .unwrap()
        .iter()
        .find_map(|e| match e {
            AuthEvent::DeviceCode { user_code, verification_uri, .. } => {
                Some((user_code.clone(), verification_uri.clone()))
            }
            _ => None,
        })
        .expect("a device code was shown")
}

#[tokio::test]
async fn anthropic_browser_login_exchanges_the_callback_code_with_pkce() {
    let server = Server::start(|req, _| {
        assert_eq!(req.path, "/platform.claude.com/v1/oauth/token");
        ok(json!({"access_token": "sk-ant-oat01-a", "refresh_token": "sk-ant-ort01-r", "expires_in": 3600}))
    });
    let mut flow = AnthropicOAuth::new(Endpoints::local(&server.origin));
    flow.callback_port = Some(0);
    let (browser, pages) = redirecting_browser(|url| format!("code=the-code&state={}", param(url, "state").unwrap()));
    let script = Scripted::new(vec![text("browser"), Answer::Wait], Some(browser));
    let credential = login(&flow, &script).await.unwrap();
    assert_eq!(keys(credential.as_json()), ["type", "refresh", "access", "expires"]);
    assert_eq!((credential.access(), credential.refresh()), (Some("sk-ant-oat01-a"), Some("sk-ant-ort01-r")));
    let now = pi_coding_agent::auth::oauth::now_ms() as f64;
    let expires = credential.expires().unwrap();
    assert!(expires > now + 50.0 * 60_000.0 && expires <= now + 55.0 * 60_000.0, "an hour less pi's five minutes");
    assert_eq!(pages_after(&pages, 1), [200]);
    let token = &server.requests("/platform.claude.com")[0];
    let body: Value = serde_json::from_str(&token.body).unwrap();
    let url = script.events.lock().unwrap().iter().find_map(|e| match e {
        AuthEvent::AuthUrl { url, .. } => Some(url.clone()),
        _ => None,
    });
    let url = url.unwrap();
    assert!(url.starts_with("https://claude.ai/oauth/authorize?code=true&client_id=9d1c250a-e61b-44d9-88ed-5944d1962f5e&response_type=code&redirect_uri=http%3A%2F%2Flocalhost%3A"));
    let verifier = body["code_verifier"].as_str().unwrap();
    assert_eq!(param(&url, "code_challenge").unwrap(), challenge_of(verifier));
    assert_eq!(body["state"].as_str(), Some(verifier));
    assert_eq!(body["grant_type"], "authorization_code");
    assert_eq!(body["code"], "the-code");
    assert_eq!(body["redirect_uri"].as_str(), param(&url, "redirect_uri").as_deref());
    assert_eq!(token.header("content-type"), Some("application/json"));
    let prompts = script.prompts.lock().unwrap();
    assert!(
        matches!(&prompts[1], AuthPrompt::ManualCode { message, .. } if message == "Complete login in your browser, or paste the authorization code / redirect URL here:")
    );
}

#[tokio::test]
async fn anthropic_copy_code_login_takes_the_pasted_code_and_checks_the_state() {
    let server = Server::start(|_, _| ok(json!({"access_token": "a", "refresh_token": "r", "expires_in": 60})));
    let flow = AnthropicOAuth::new(Endpoints::local(&server.origin));
    let script = Scripted::new(vec![text("copy_code"), text("pasted#wrong-state")], None);
    let err = login(&flow, &script).await.unwrap_err();
    assert_eq!(err.to_string(), "OAuth state mismatch");
    assert!(server.requests("/").is_empty());
    let script = Scripted::new(vec![text("copy_code"), text("  pasted-code  ")], None);
    let credential = login(&flow, &script).await.unwrap();
    assert_eq!(credential.access(), Some("a"));
    let body: Value = serde_json::from_str(&server.requests("/")[0].body).unwrap();
    assert_eq!(body["redirect_uri"], "https://platform.claude.com/oauth/code/callback");
    assert_eq!(body["code"], "pasted-code");
}

#[tokio::test]
async fn anthropic_denied_in_the_browser_fails_with_the_providers_reason() {
    let server = Server::start(|_, _| (500, "{}".into()));
    let mut flow = AnthropicOAuth::new(Endpoints::local(&server.origin));
    flow.callback_port = Some(0);
    let (browser, pages) = redirecting_browser(|url| {
        format!("error=access_denied&error_description=User+said+no&state={}", param(url, "state").unwrap())
    });
    let script = Scripted::new(vec![text("browser"), Answer::Wait], Some(browser));
    let err = login(&flow, &script).await.unwrap_err();
    assert_eq!(err.to_string(), "Anthropic authorization failed: User said no");
    assert_eq!(pages_after(&pages, 1), [400]);
    assert!(server.requests("/").is_empty(), "no token request after a denial");
}

#[tokio::test]
async fn a_cancelled_prompt_cancels_the_login() {
    let flow = AnthropicOAuth::new(Endpoints::local("http://127.0.0.1:9"));
    let script = Scripted::new(vec![Answer::Cancel], None);
    assert!(matches!(login(&flow, &script).await, Err(LoginError::Cancelled)));
}

fn jwt(claims: Value) -> String {
    use base64::Engine;
    let enc = |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    format!("{}.{}.sig", enc(&json!({"alg": "none"})), enc(&claims))
}

#[tokio::test]
async fn codex_device_code_login_polls_through_pending_and_stores_the_account_id() {
    let access = jwt(json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-7"}}));
    let token = access.clone();
    let server = Server::start(move |req, before| match req.path.as_str() {
        "/auth.openai.com/api/accounts/deviceauth/usercode" => {
            ok(json!({"device_auth_id": "dev-1", "user_code": "ABCD-EFGH", "interval": "1"}))
        }
        "/auth.openai.com/api/accounts/deviceauth/token" => {
            let polls = before.iter().filter(|s| s.path == req.path).count();
            if polls == 0 {
                (403, "{}".into())
            } else {
                ok(json!({"authorization_code": "auth-code", "code_verifier": "server-verifier"}))
            }
        }
        "/auth.openai.com/oauth/token" => ok(json!({"access_token": token, "refresh_token": "rt", "expires_in": 100})),
        other => panic!("unexpected {other}"),
    });
    let flow = OpenAICodexOAuth::new(Endpoints::local(&server.origin));
    let script = Scripted::new(vec![text("device_code")], None);
    let credential = login(&flow, &script).await.unwrap();
    assert_eq!(keys(credential.as_json()), ["type", "access", "refresh", "expires", "accountId"]);
    assert_eq!(credential.get("accountId"), Some(&json!("acct-7")));
    assert_eq!(device_code_event(&script), ("ABCD-EFGH".into(), "https://auth.openai.com/codex/device".into()));
    let exchange = &server.requests("/auth.openai.com/oauth/token")[0];
    assert_eq!(exchange.field("code_verifier").as_deref(), Some("server-verifier"));
    assert_eq!(exchange.field("redirect_uri").as_deref(), Some("https://auth.openai.com/deviceauth/callback"));
    assert_eq!(server.requests("/auth.openai.com/api/accounts/deviceauth/token").len(), 2);
    assert_eq!(flow.to_auth(&credential), OAuthRequestAuth::key(access));
}

fn copilot_server(slow_down_first: bool) -> Server {
    Server::start(move |req, before| {
        let count = |p: &str| before.iter().filter(|s| s.path == p).count();
        match req.path.as_str() {
            "/ghe.example.com/login/device/code" => ok(json!({"device_code": "dc", "user_code": "WXYZ-1234",
                "verification_uri": "https://ghe.example.com/login/device", "interval": 1, "expires_in": 900})),
            "/ghe.example.com/login/oauth/access_token" => {
                if slow_down_first && count(&req.path) == 0 {
                    ok(json!({"error": "slow_down", "interval": 1}))
                } else {
                    ok(json!({"access_token": "ghu_github"}))
                }
            }
            "/api.ghe.example.com/copilot_internal/v2/token" => {
                assert_eq!(req.header("authorization"), Some("Bearer ghu_github"));
                assert_eq!(req.header("editor-version"), Some("vscode/1.107.0"));
                ok(json!({"token": "tid=9;proxy-ep=proxy.enterprise.test;exp=1", "expires_at": 4_000_000_000u64}))
            }
            "/api.enterprise.test/models" => ok(json!({"data": [
                {"id": "gpt-4o", "model_picker_enabled": true, "policy": {"state": "enabled"}},
                {"id": "no-tools", "model_picker_enabled": true, "capabilities": {"supports": {"tool_calls": false}}}
            ]})),
            other => panic!("unexpected {other}"),
        }
    })
}

#[tokio::test]
async fn copilot_enterprise_device_login_honours_slow_down_and_derives_the_proxy_base_url() {
    let server = copilot_server(true);
    let flow = GitHubCopilotOAuth::new(Endpoints::local(&server.origin));
    let script = Scripted::new(vec![text("https://ghe.example.com/")], None);
    let credential = login(&flow, &script).await.unwrap();
    assert_eq!(
        keys(credential.as_json()),
        ["type", "refresh", "access", "expires", "enterpriseUrl", "availableModelIds"]
    );
    assert_eq!(credential.refresh(), Some("ghu_github"));
    assert_eq!(credential.expires(), Some(4_000_000_000_000.0 - 300_000.0));
    assert_eq!(credential.get("enterpriseUrl"), Some(&json!("ghe.example.com")));
    assert_eq!(credential.get("availableModelIds"), Some(&json!(["gpt-4o"])));
    assert_eq!(server.requests("/ghe.example.com/login/oauth/access_token").len(), 2, "one slow_down, then the token");
    let poll = &server.requests("/ghe.example.com/login/oauth/access_token")[0];
    assert_eq!(poll.field("grant_type").as_deref(), Some("urn:ietf:params:oauth:grant-type:device_code"));
    let auth = flow.to_auth(&credential);
    // The proxy named in the token, reached through the test origin like every other URL.
    assert_eq!(auth.base_url, Some(format!("{}/api.enterprise.test", server.origin)));
    assert_eq!(auth.api_key.as_deref(), Some("tid=9;proxy-ep=proxy.enterprise.test;exp=1"));
    // Refresh: the GitHub token buys a new Copilot token for the same enterprise.
    let next = flow.refresh(&credential).await.unwrap();
    assert_eq!(next.get("enterpriseUrl"), Some(&json!("ghe.example.com")));
    assert_eq!(server.requests("/api.ghe.example.com/copilot_internal/v2/token").len(), 2);
}

#[tokio::test]
async fn copilot_rejects_an_invalid_enterprise_domain() {
    let flow = GitHubCopilotOAuth::new(Endpoints::local("http://127.0.0.1:9"));
    let script = Scripted::new(vec![text("http://")], None);
    assert_eq!(login(&flow, &script).await.unwrap_err().to_string(), "Invalid GitHub Enterprise URL/domain");
}

#[tokio::test]
async fn xai_expired_device_code_and_denial_use_pis_messages() {
    let server = Server::start(|req, _| match req.path.as_str() {
        "/auth.x.ai/oauth2/device/code" => ok(json!({"device_code": "d", "user_code": "U-1",
            "verification_uri": "https://accounts.x.ai/device", "verification_uri_complete": "https://accounts.x.ai/device?code=U-1",
            "interval": 1, "expires_in": 1})),
        _ => (400, json!({"error": "authorization_pending"}).to_string()),
    });
    let flow = XaiOAuth::new(Endpoints::local(&server.origin));
    let script = Scripted::new(vec![], None);
    assert_eq!(login(&flow, &script).await.unwrap_err().to_string(), "Device flow timed out");
    assert_eq!(device_code_event(&script).1, "https://accounts.x.ai/device?code=U-1");

    let server = Server::start(|req, _| match req.path.as_str() {
        "/auth.x.ai/oauth2/device/code" => ok(json!({"device_code": "d", "user_code": "U-1",
            "verification_uri": "https://accounts.x.ai/device", "interval": 1, "expires_in": 60})),
        _ => (400, json!({"error": "expired_token"}).to_string()),
    });
    let flow = XaiOAuth::new(Endpoints::local(&server.origin));
    assert_eq!(login(&flow, &Scripted::new(vec![], None)).await.unwrap_err().to_string(), "xAI device code expired");
}

#[tokio::test]
async fn xai_refresh_keeps_an_unrotated_refresh_token_and_reports_a_revoked_one() {
    let server = Server::start(|req, before| {
        assert_eq!(req.field("grant_type").as_deref(), Some("refresh_token"));
        if before.is_empty() {
            ok(json!({"access_token": "new-access", "expires_in": 3600}))
        } else {
            (400, json!({"error": "invalid_grant", "error_description": "Token revoked"}).to_string())
        }
    });
    let flow = XaiOAuth::new(Endpoints::local(&server.origin));
    let old = Credential::oauth("old", "keep-me", 0);
    let next = flow.refresh(&old).await.unwrap();
    assert_eq!((next.access(), next.refresh()), (Some("new-access"), Some("keep-me")));
    let err = flow.refresh(&old).await.unwrap_err();
    assert_eq!(err, "xAI OAuth token refresh failed (HTTP 400): invalid_grant: Token revoked");
}

#[tokio::test]
async fn kimi_denied_login_and_bearer_header_auth() {
    let server = Server::start(|req, _| match req.path.as_str() {
        "/auth.kimi.com/api/oauth/device_authorization" => ok(json!({"device_code": "d", "user_code": "K-1",
            "verification_uri": "https://www.kimi.com/code", "verification_uri_complete": "https://www.kimi.com/code?user_code=K-1",
            "interval": 1, "expires_in": 60})),
        _ => (400, json!({"error": "access_denied"}).to_string()),
    });
    let flow = KimiCodingOAuth::new(Endpoints::local(&server.origin));
    let script = Scripted::new(vec![], None);
    assert_eq!(login(&flow, &script).await.unwrap_err().to_string(), "Kimi Code login was denied.");
    assert_eq!(device_code_event(&script).1, "https://www.kimi.com/code?user_code=K-1");
    let auth = flow.to_auth(&Credential::oauth("kimi-access", "r", 0));
    assert_eq!(auth.api_key, None);
    assert_eq!(auth.headers, [("Authorization".to_owned(), "Bearer kimi-access".to_owned())]);
}

#[tokio::test]
async fn meta_login_mints_an_api_key_from_the_identity_token() {
    let server = Server::start(|req, _| match req.path.as_str() {
        "/auth.meta.com/oidc/device/authorization/" => ok(json!({"device_code": "d", "user_code": "M-1",
            "verification_uri": "https://meta.ai/device", "interval": 1, "expires_in": 60})),
        "/auth.meta.com/oidc/device/token/" => ok(json!({"access_token": "identity"})),
        "/api.meta.ai/muse-code/key" => {
            assert_eq!(req.header("authorization"), Some("Bearer identity"));
            assert_eq!(req.header("x-api-version"), Some("1.0.0"));
            ok(json!({"api_key": "meta-key"}))
        }
        other => panic!("unexpected {other}"),
    });
    let flow = MetaOAuth::new(Endpoints::local(&server.origin));
    let script = Scripted::new(vec![], None);
    let credential = login(&flow, &script).await.unwrap();
    assert_eq!(keys(credential.as_json()), ["type", "refresh", "access", "expires"]);
    assert_eq!((credential.access(), credential.refresh()), (Some("meta-key"), Some("identity")));
    let progress = script
        .events
        .lock()
        .unwrap()
        .iter()
        .any(|e| matches!(e, AuthEvent::Progress { message } if message == "Enabling Meta Model API access..."));
    assert!(progress);
}

#[tokio::test]
async fn openrouter_exchanges_the_code_for_a_permanent_key_in_the_callback() {
    let server = Server::start(|req, _| {
        assert_eq!(req.path, "/openrouter.ai/api/v1/auth/keys");
        let body: Value = serde_json::from_str(&req.body).unwrap();
        assert_eq!(body["code_challenge_method"], "S256");
        ok(json!({"key": "sk-or-v1-key"}))
    });
    let flow = OpenRouterOAuth::new(Endpoints::local(&server.origin));
    let (browser, pages) = redirecting_browser(|_| "code=or-code".into());
    let script = Scripted::new(vec![Answer::Wait], Some(browser));
    let credential = login(&flow, &script).await.unwrap();
    assert_eq!(
        credential.as_json(),
        json!({"type": "oauth", "access": "sk-or-v1-key", "refresh": "", "expires": 9_007_199_254_740_991u64})
            .as_object()
            .unwrap()
    );
    assert_eq!(pages_after(&pages, 1), [200]);
    assert_eq!(flow.refresh(&credential).await.unwrap(), credential);
}

#[tokio::test]
async fn radius_device_login_and_refresh_against_the_gateway() {
    let server = Server::start(|req, before| match req.path.as_str() {
        "/radius.pi.dev/v1/oauth/device" => ok(json!({"device_code": "d", "user_code": "R-1",
            "verification_uri": "https://radius.pi.dev/device", "interval": 1, "expires_in": 60})),
        "/radius.pi.dev/v1/oauth/token" => {
            let polls = before.iter().filter(|s| s.path == req.path).count();
            match polls {
                0 => (400, json!({"error": "authorization_pending"}).to_string()),
                _ => ok(
                    json!({"access_token": "rad-a", "refresh_token": "rad-r", "expires_in": 3600, "scope": "gateway offline_access"}),
                ),
            }
        }
        other => panic!("unexpected {other}"),
    });
    let flow = RadiusOAuth::new(Endpoints::local(&server.origin), "Radius", "radius.pi.dev/");
    let script = Scripted::new(vec![text("device-code")], None);
    let credential = login(&flow, &script).await.unwrap();
    assert_eq!(keys(credential.as_json()), ["type", "access", "refresh", "expires", "scope"]);
    assert!(
        matches!(&script.prompts.lock().unwrap()[0], AuthPrompt::Select { message, .. } if message == "Sign in to Radius:")
    );
    let next = flow.refresh(&credential).await.unwrap();
    assert_eq!(next.access(), Some("rad-a"));
    let refresh = server.requests("/radius.pi.dev/v1/oauth/token").pop().unwrap();
    assert_eq!(refresh.field("refresh_token").as_deref(), Some("rad-r"));
    assert_eq!(refresh.field("client_id").as_deref(), Some("pi-gateway"));
}

#[tokio::test]
async fn chatgpt_sign_in_uses_the_issued_client_id_and_requires_the_direct_scope() {
    let server = Server::start(|req, _| {
        assert_eq!(req.path, "/auth.openai.com/api/accounts/oauth/token");
        assert_eq!(req.field("client_id").as_deref(), Some("issued-client"));
        assert_eq!(req.field("resource").as_deref(), Some("https://api.openai.com/v1"));
        ok(json!({"access_token": "chatgpt-a", "refresh_token": "chatgpt-r", "id_token": "id", "expires_in": 3600,
            "scope": "openid chatgpt.tokens.use.direct"}))
    });
    let flow = OpenAIChatGPTOAuth::new(Endpoints::local(&server.origin));
    let (browser, pages) =
        redirecting_browser(|url| format!("code=c&state={}&client_id=issued-client", param(url, "state").unwrap()));
    let script = Scripted::new(vec![Answer::Wait], Some(browser));
    let credential = login(&flow, &script).await.unwrap();
    assert_eq!(keys(credential.as_json()), ["type", "access", "refresh", "expires", "clientId", "scopes"]);
    assert_eq!(credential.get("scopes"), Some(&json!(["openid", "chatgpt.tokens.use.direct"])));
    assert_eq!(pages_after(&pages, 1), [200]);
    let url = script.events.lock().unwrap().iter().find_map(|e| match e {
        AuthEvent::AuthUrl { url, .. } => Some(url.clone()),
        _ => None,
    });
    assert_eq!(
        param(&url.unwrap(), "ext_agent_host_id").as_deref(),
        Some("urn:uuid:0b3c0a4e-8f3a-4c55-9a52-2f3c1d9e7a10")
    );
    let no_device = flow.login(&Scripted::new(vec![], None), &LoginOptions::default()).await.unwrap_err();
    assert_eq!(no_device.to_string(), "Sign in with ChatGPT requires a device ID (UUID) for this installation");
}

#[test]
fn every_oauth_provider_of_the_reference_has_a_flow() {
    let logins = pi_coding_agent::auth::logins::builtin_logins();
    let oauth: Vec<&str> = logins.iter().filter(|(_, i)| i.oauth.is_some()).map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        oauth,
        ["anthropic", "github-copilot", "kimi-coding", "meta", "openai", "openai-codex", "openrouter", "radius", "xai"]
    );
    let endpoints = Endpoints::default();
    for id in oauth {
        let flow = pi_coding_agent::auth::oauth::builtin_flow(id, &endpoints).unwrap_or_else(|| panic!("{id}"));
        assert_eq!(Some(flow.name()), logins[id].oauth.as_ref().map(|o| o.name.as_str()), "{id}");
    }
    let registry = pi_coding_agent::auth::builtin_login_registry(&endpoints, &LoginOptions::default());
    assert!(registry.get_kind("anthropic", pi_coding_agent::auth::LoginKind::ApiKey).is_some());
    assert_eq!(Credential::oauth("a", "r", 1).kind(), CredentialType::OAuth);
    let _ = Arc::new(0);
}
