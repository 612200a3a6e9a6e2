//! `/logout` in a pty compared with the reference pi 1.6.0's screens (recorded at the same size by
//! `fixtures/auth/record_logout.sh`): the selector over auth.json's credentials (an Anthropic
//! account and a Groq key, each with its type), and the removal of the chosen one, with pi's line
//! and the file left as pi leaves it.

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
