//! A whole `pi -p` run on an account login, for GitHub Copilot and Kimi Code, against one local
//! server on 127.0.0.1 that plays the OAuth endpoints (`PI_TEST_OAUTH_ORIGIN`) and the model API:
//! the expired token in auth.json is refreshed first and written back (keeping mode 0600), and the chat
//! request carries the refreshed token and the provider's headers (Copilot's proxy base URL from
//! the token, `X-Initiator`, `Openai-Intent` and its client identity; Kimi's bearer header).

mod auth_support;
mod cli_support;

use std::os::unix::fs::PermissionsExt;

use auth_support::{Seen, Server};
use serde_json::{Value, json};

fn chat_reply(text: &str) -> String {
    let chunk = json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": "stop"}]});
    format!("data: {chunk}\n\ndata: [DONE]\n\n")
}

fn run(env: &cli_support::Env, origin: &str, args: &[&str]) -> (String, String, i32) {
    let out = env.pi().env("PI_TEST_OAUTH_ORIGIN", origin).args(args).output().expect("run pi");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

fn store(env: &cli_support::Env, credentials: &Value) {
    let path = env.agent().join("auth.json");
    std::fs::write(&path, credentials.to_string()).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

fn stored(env: &cli_support::Env) -> Value {
    let path = env.agent().join("auth.json");
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn copilot_refreshes_its_token_then_asks_the_proxy_named_in_it() {
    let server = Server::start(|req: &Seen, _| match req.path.as_str() {
        "/api.github.com/copilot_internal/v2/token" => {
            assert_eq!(req.header("authorization"), Some("Bearer ghu_github"));
            (
                200,
                json!({"token": "tid=new;proxy-ep=proxy.individual.githubcopilot.com", "expires_at": 4_000_000_000u64})
                    .to_string(),
            )
        }
        "/api.individual.githubcopilot.com/models" => (
            200,
            json!({"data": [
                {"id": "kimi-k3", "model_picker_enabled": true, "policy": {"state": "enabled"}}
            ]})
            .to_string(),
        ),
        "/api.individual.githubcopilot.com/chat/completions" => (200, chat_reply("hello from copilot")),
        other => panic!("unexpected {other}"),
    });
    let env = cli_support::Env::new("http://127.0.0.1:9/v1");
    std::fs::remove_file(env.agent().join("models.json")).unwrap();
    let old = json!({"github-copilot": {"type": "oauth", "refresh": "ghu_github",
        "access": "tid=old;proxy-ep=proxy.individual.githubcopilot.com", "expires": 0, "availableModelIds": ["kimi-k3"]}});
    store(&env, &old);
    let (stdout, stderr, code) =
        run(&env, &server.origin, &["-p", "--provider", "github-copilot", "--model", "kimi-k3", "--no-session", "hi"]);
    assert_eq!((stdout.as_str(), code), ("hello from copilot\n", 0), "{stderr}");
    let chat = &server.requests("/api.individual.githubcopilot.com/chat/completions")[0];
    assert_eq!(chat.header("authorization"), Some("Bearer tid=new;proxy-ep=proxy.individual.githubcopilot.com"));
    assert_eq!(chat.header("x-initiator"), Some("user"));
    assert_eq!(chat.header("openai-intent"), Some("conversation-edits"));
    assert_eq!(chat.header("copilot-integration-id"), Some("vscode-chat"));
    assert_eq!(chat.header("editor-version"), Some("vscode/1.107.0"));
    let body: Value = serde_json::from_str(&chat.body).unwrap();
    assert_eq!(body["model"], "kimi-k3");
    let saved = &stored(&env)["github-copilot"];
    assert_eq!(saved["access"], "tid=new;proxy-ep=proxy.individual.githubcopilot.com");
    assert_eq!(saved["availableModelIds"], json!(["kimi-k3"]));
    assert_eq!(saved["expires"], json!(4_000_000_000_000i64 - 300_000));
}

#[test]
fn kimi_refreshes_its_token_then_sends_it_as_a_bearer_header() {
    let server = Server::start(|req: &Seen, _| match req.path.as_str() {
        "/auth.kimi.com/api/oauth/token" => {
            assert_eq!(req.field("grant_type").as_deref(), Some("refresh_token"));
            assert_eq!(req.field("refresh_token").as_deref(), Some("kimi-refresh"));
            (
                200,
                json!({"access_token": "kimi-new", "refresh_token": "kimi-refresh-2", "expires_in": 3600}).to_string(),
            )
        }
        "/kimi/v1/chat/completions" => (200, chat_reply("hello from kimi")),
        other => panic!("unexpected {other}"),
    });
    let env = cli_support::Env::new("http://127.0.0.1:9/v1");
    let models = json!({"providers": {"kimi-coding": {"baseUrl": format!("{}/kimi/v1", server.origin)}}});
    std::fs::write(env.agent().join("models.json"), models.to_string()).unwrap();
    let old = json!({"kimi-coding": {"type": "oauth", "refresh": "kimi-refresh", "access": "kimi-old", "expires": 0}});
    store(&env, &old);
    let (stdout, stderr, code) = run(
        &env,
        &server.origin,
        &["-p", "--provider", "kimi-coding", "--model", "kimi-for-coding", "--no-session", "hi"],
    );
    assert_eq!((stdout.as_str(), code), ("hello from kimi\n", 0), "{stderr}");
    let chat = &server.requests("/kimi/v1/chat/completions")[0];
    assert_eq!(chat.header("authorization"), Some("Bearer kimi-new"));
    let saved = &stored(&env)["kimi-coding"];
    assert_eq!((saved["access"].as_str(), saved["refresh"].as_str()), (Some("kimi-new"), Some("kimi-refresh-2")));
}
