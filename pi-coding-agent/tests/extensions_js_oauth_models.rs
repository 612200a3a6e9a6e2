//! A provider's `oauth.modifyModels` and `refreshModels` (`fixtures/js_extensions/
//! oauth-modify-models.ts`), against the reference pi 1.6.0: with an OAuth credential in
//! auth.json, `modifyModels` moves `modprov`'s models to the server the credential names and adds
//! a team model; `refreshModels` replaces `refprov`'s models. `--list-models` lists what the
//! reference lists (`oauth-modify-models.*.ref.txt`, recorded with `anchor.sh pi -e … --list-models`
//! and the same auth.json), and a request to the added model goes to the credential's server, as
//! the reference's does (it asks `POST /v1/chat/completions` for `team-core`).

mod cli_support;
mod js_support;

use cli_support::{Env, ScriptedServer, text_reply};
use serde_json::json;

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/js_extensions/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn reference(name: &str) -> String {
    let path = fixture(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// An environment whose auth.json holds `modprov`'s OAuth credential naming `server`.
fn env_with_credential(base_url: &str, server: &str) -> Env {
    let env = Env::new(base_url);
    let auth = json!({"modprov": {"type": "oauth", "refresh": "r-1", "access": "acc-1", "expires": 4102444800000u64,
        "server": server, "team": "core"}});
    std::fs::write(env.agent().join("auth.json"), auth.to_string()).expect("auth.json");
    env
}

/// `pi -e oauth-modify-models.ts ARGS` with Node; `None` (skipped) without Node.
fn run(env: &Env, args: &[&str]) -> Option<std::process::Output> {
    let node = js_support::node_path()?;
    let extension = fixture("oauth-modify-models.ts");
    let output = env.pi().env("PI_NODE", node).arg("-e").arg(&extension).args(args).output().expect("run pi");
    Some(output)
}

/// The model table without pi-rs's local provider (the reference ran without models.json).
fn listed(output: &std::process::Output) -> String {
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "pi failed: {text}\n{}", String::from_utf8_lossy(&output.stderr));
    text.lines().filter(|l| !l.starts_with("local ")).map(|l| format!("{l}\n")).collect()
}

#[test]
fn list_models_shows_modified_and_refreshed_models_as_the_reference_does() {
    let env = env_with_credential("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1");
    let Some(output) = run(&env, &["--list-models"]) else { return };
    pretty_assertions::assert_eq!(listed(&output), reference("oauth-modify-models.list.ref.txt"));
}

#[test]
fn without_an_oauth_credential_the_oauth_provider_is_not_listed_as_in_the_reference() {
    let env = Env::new("http://127.0.0.1:9/v1");
    let Some(output) = run(&env, &["--list-models"]) else { return };
    // An OAuth-only provider without a stored login has no configured auth: pi leaves it out.
    pretty_assertions::assert_eq!(listed(&output), reference("oauth-modify-models.nocred.ref.txt"));
}

#[test]
fn a_request_to_a_modified_model_goes_to_the_credentials_server() {
    let server = ScriptedServer::start(vec![text_reply(&["hello"])]);
    let env = env_with_credential("http://127.0.0.1:9/v1", &server.base_url);
    let Some(output) = run(&env, &["--model", "modprov/team-core", "-p", "hi"]) else { return };
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "pi failed: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(stdout.trim(), "hello");
    let requests = server.requests.lock().unwrap();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0]["model"], "team-core");
}
