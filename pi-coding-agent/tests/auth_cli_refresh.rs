//! `pi auth check` and `pi auth print-bearer-token` refresh an expiring Anthropic OAuth token as
//! pi 1.6.0 does, against a local authorization server (`PI_TEST_OAUTH_ORIGIN`): the refreshed
//! token is printed and written to auth.json; `--no-refresh` leaves the file alone;
//! `--min-expiry` sets how long the printed token must stay valid; a refused refresh is reported.

mod auth_support;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use auth_support::Server;
use serde_json::{Value, json};

const TOKEN_PATH: &str = "/platform.claude.com/v1/oauth/token";

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

fn server(ok: bool) -> Server {
    Server::start(move |req, _| match (req.path.as_str(), ok) {
        (TOKEN_PATH, true) => {
            (200, json!({"access_token": "a-new", "refresh_token": "r-new", "expires_in": 3600}).to_string())
        }
        (TOKEN_PATH, false) => (400, json!({"error": "invalid_grant"}).to_string()),
        _ => (404, "{}".into()),
    })
}

/// An agent dir whose auth.json holds an Anthropic token expiring at `expires`.
fn agent(expires: u64) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let auth = json!({"anthropic": {"type": "oauth", "refresh": "r-old", "access": "a-old", "expires": expires}});
    std::fs::write(dir.path().join("auth.json"), auth.to_string()).unwrap();
    dir
}

fn pi(agent: &Path, origin: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(args)
        .current_dir(agent)
        .env("PI_CODING_AGENT_DIR", agent)
        .env("HOME", agent)
        .env("PI_TEST_OAUTH_ORIGIN", origin)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_OAUTH_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn stored(agent: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(agent.join("auth.json")).unwrap()).unwrap()
}

fn out(o: &Output) -> (String, String, Option<i32>) {
    (String::from_utf8_lossy(&o.stdout).into(), String::from_utf8_lossy(&o.stderr).into(), o.status.code())
}

#[test]
fn print_bearer_token_refreshes_an_expired_token_and_stores_it() {
    let server = server(true);
    let dir = agent(1_000);
    let o = pi(dir.path(), &server.origin, &["auth", "print-bearer-token", "--provider", "anthropic"]);
    assert_eq!(out(&o), ("a-new\n".into(), String::new(), Some(0)));
    let requests = server.requests(TOKEN_PATH);
    assert_eq!(requests.len(), 1);
    let body: Value = serde_json::from_str(&requests[0].body).unwrap();
    assert_eq!(body["grant_type"], "refresh_token");
    assert_eq!(body["refresh_token"], "r-old");
    let file = stored(dir.path());
    assert_eq!(file["anthropic"]["access"], "a-new");
    assert_eq!(file["anthropic"]["refresh"], "r-new");
    assert!(file["anthropic"]["expires"].as_u64().unwrap() > now_ms());
}

#[test]
fn print_bearer_token_keeps_the_token_min_expiry_allows() {
    let server = server(true);
    // Twenty minutes left: pi's default minimum (30m) refreshes, `--min-expiry 10m` does not.
    let dir = agent(now_ms() + 20 * 60_000);
    let args = ["auth", "print-bearer-token", "--provider", "anthropic", "--min-expiry", "10m"];
    assert_eq!(out(&pi(dir.path(), &server.origin, &args)).0, "a-old\n");
    assert!(server.requests(TOKEN_PATH).is_empty());
    let o = pi(dir.path(), &server.origin, &["auth", "print-bearer-token", "--provider", "anthropic"]);
    assert_eq!(out(&o).0, "a-new\n");
    assert_eq!(server.requests(TOKEN_PATH).len(), 1);
    let bad = pi(
        dir.path(),
        &server.origin,
        &["auth", "print-bearer-token", "--provider", "anthropic", "--min-expiry", "soon"],
    );
    assert_eq!(
        out(&bad),
        (String::new(), "Error: --min-expiry must use a duration such as 30m or 1h\n".into(), Some(1))
    );
    let misplaced =
        pi(dir.path(), &server.origin, &["auth", "print-api-key", "--provider", "anthropic", "--min-expiry", "1h"]);
    assert_eq!(out(&misplaced).1, "Error: --min-expiry is only supported by print-bearer-token\n");
}

#[test]
fn auth_check_refreshes_unless_told_not_to() {
    let server = server(true);
    let dir = agent(1_000);
    let o = pi(dir.path(), &server.origin, &["auth", "check", "--provider", "anthropic", "--no-refresh", "--json"]);
    assert_eq!(out(&o).0, "{\"status\":\"ready\",\"provider\":\"anthropic\",\"authType\":\"oauth\"}\n");
    assert!(server.requests(TOKEN_PATH).is_empty());
    assert_eq!(stored(dir.path())["anthropic"]["access"], "a-old");
    let o = pi(dir.path(), &server.origin, &["auth", "check", "--provider", "anthropic", "--credentials"]);
    assert_eq!(out(&o), ("a-new\n".into(), String::new(), Some(0)));
    assert_eq!(server.requests(TOKEN_PATH).len(), 1);
    assert_eq!(stored(dir.path())["anthropic"]["access"], "a-new");
}

#[test]
fn a_refused_refresh_is_reported_and_leaves_the_file() {
    let server = server(false);
    let dir = agent(1_000);
    let before = std::fs::read_to_string(dir.path().join("auth.json")).unwrap();
    let o = pi(dir.path(), &server.origin, &["auth", "check", "--provider", "anthropic", "--json"]);
    assert_eq!(
        out(&o),
        (
            "{\"status\":\"invalid\",\"provider\":\"anthropic\",\"reason\":\"invalid_state\"}\n".into(),
            String::new(),
            Some(2)
        )
    );
    let o = pi(dir.path(), &server.origin, &["auth", "print-bearer-token", "--provider", "anthropic"]);
    assert_eq!(out(&o), (String::new(), "Error: Failed to resolve credential\n".into(), Some(1)));
    assert_eq!(std::fs::read_to_string(dir.path().join("auth.json")).unwrap(), before);
    let o = pi(dir.path(), &server.origin, &["auth", "print-api-key", "--provider", "anthropic"]);
    assert_eq!(
        out(&o),
        (String::new(), "Error: Provider \"anthropic\" is configured with OAuth, not an API key\n".into(), Some(1))
    );
}
