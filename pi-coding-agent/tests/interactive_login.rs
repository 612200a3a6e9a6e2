//! `/login` in a pty: an API key typed into the provider's prompt, and xAI's device-code sign-in
//! against a local authorization server, each stored in auth.json.
//!
//! `/logout` in a pty compared with the reference pi 1.6.0's screens (recorded at the same size by
//! `fixtures/auth/record_logout.sh`): the selector over auth.json's credentials (an Anthropic
//! account and a Groq key, each with its type), and the removal of the chosen one, with pi's line
//! and the file left as pi leaves it.

mod auth_support;
mod cli_support;
mod interactive_support;

use cli_support::{Env, ScriptedServer};
use interactive_support::*;

fn reference(name: &str) -> String {
    let path = format!("{}/tests/fixtures/auth/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn logout(keys: &[&str], done: impl Fn(&str) -> bool, name: &str) -> (String, String, Env) {
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    let auth = r#"{"anthropic":{"type":"oauth","refresh":"r","access":"a","expires":4102444800000},"groq":{"type":"api_key","key":"gsk-x"}}"#;
    std::fs::write(env.agent().join("auth.json"), auth).unwrap();
    let mut pty = Pty::spawn(&env, &["--model", "local/smollm2-135m"]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, keys);
    let screen = pty.wait_for(name, done);
    pty.quit();
    let proj = env.proj().display().to_string();
    (normalize(&screen, &proj), normalize(&reference(&format!("{name}.ref.txt")), &proj), env)
}

#[test]
fn logout_lists_the_stored_credentials_as_the_reference_does() {
    let (ours, reference, _env) =
        logout(&["/logout", "WAIT", "Enter"], |s| s.contains("Groq [API key]"), "logout_selector");
    pretty_assertions::assert_eq!(ours, reference);
}

#[test]
fn logout_removes_the_chosen_credential() {
    let (ours, reference, env) = logout(
        &["/logout", "WAIT", "Enter", "WAIT", "Down", "Enter"],
        |s| s.contains("Removed stored API key for Groq"),
        "logout_removed",
    );
    pretty_assertions::assert_eq!(ours, reference);
    let file = std::fs::read_to_string(env.agent().join("auth.json")).unwrap();
    assert_eq!(file, reference_auth());
}

fn reference_auth() -> String {
    reference("logout_removed.auth.json").trim_end().to_owned()
}

fn login_env() -> (ScriptedServer, Env) {
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    (server, env)
}

#[test]
fn login_with_an_api_key_stores_it() {
    let (_server, env) = login_env();
    let mut pty = Pty::spawn(&env, &["--model", "local/smollm2-135m"]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["/login groq", "WAIT", "Enter"]);
    pty.wait_for("the key prompt", |s| s.contains("Enter Groq API key"));
    type_keys(&mut pty, &["gsk-typed-here", "Enter"]);
    pty.wait_for("the saved line", |s| s.contains("Saved API key for Groq"));
    pty.quit();
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent().join("auth.json")).unwrap()).unwrap();
    assert_eq!(file["groq"], serde_json::json!({"type": "api_key", "key": "gsk-typed-here"}));
}

#[test]
fn login_with_a_device_code_signs_in_to_xai() {
    let oauth = auth_support::Server::start(|req, _| match req.path.as_str() {
        "/auth.x.ai/oauth2/device/code" => (
            200,
            serde_json::json!({"device_code": "d", "user_code": "XAI-PTY",
            "verification_uri": "https://accounts.x.ai/device", "interval": 1, "expires_in": 60})
            .to_string(),
        ),
        _ => (
            200,
            serde_json::json!({"access_token": "xai-a", "refresh_token": "xai-r", "expires_in": 3600}).to_string(),
        ),
    });
    let (_server, env) = login_env();
    let mut pty = Pty::spawn_with(&env, &["--model", "local/smollm2-135m"], &[("PI_TEST_OAUTH_ORIGIN", &oauth.origin)]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["/login xai", "WAIT", "Enter"]);
    let screen = pty.wait_for("the provider list", |s| s.contains("Select provider to configure:"));
    assert!(screen.contains("xAI [subscription] • not configured"), "{screen}");
    assert!(screen.contains("xAI [API key] • not configured"), "{screen}");
    type_keys(&mut pty, &["Enter"]);
    pty.wait_for("the signed-in line", |s| s.contains("Logged in to xAI"));
    let screen = pty.screen();
    assert!(screen.contains("Open https://accounts.x.ai/device and enter code: XAI-PTY"), "{screen}");
    pty.quit();
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent().join("auth.json")).unwrap()).unwrap();
    assert_eq!(file["xai"]["access"], "xai-a");
    assert_eq!(file["xai"]["type"], "oauth");
}
