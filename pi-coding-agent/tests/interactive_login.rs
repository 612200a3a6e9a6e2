//! `/login` in a pty compared with the reference pi 1.6.0's screens (recorded at the same size by
//! `fixtures/auth/record_login.sh`, Kimi's device code against `fixtures/auth/kimi_pending.py`,
//! which the tests start too): the method menu, the account list, the searched API-key list (with
//! the built-in llama.cpp extension's login), the API-key prompt, the saved line and the file,
//! Anthropic's sign-in URL, Kimi's device code and its cancel, Amazon Bedrock's source choice and
//! profile prompt. xAI's device-code sign-in is stored in auth.json.
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
    std::fs::write(env.agent().join("auth.json"), r#"{"groq":{"type":"api_key","key":"gsk-x"}}"#).unwrap();
    (server, env)
}

/// A Kimi authorization server that never authorizes (`fixtures/auth/kimi_pending.py`).
struct Kimi {
    origin: String,
    child: std::process::Child,
}

impl Kimi {
    fn start() -> Kimi {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let script = format!("{}/tests/fixtures/auth/kimi_pending.py", env!("CARGO_MANIFEST_DIR"));
        let child = std::process::Command::new("python3").arg(script).arg(port.to_string()).spawn().unwrap();
        let origin = format!("http://127.0.0.1:{port}");
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Kimi { origin, child }
    }
}

impl Drop for Kimi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What differs by run: the agent dir in the saved line, the docs location, the PKCE values of
/// Anthropic's sign-in URL (the URL's lines become `<URL>`).
fn normalize_login(screen: &str, proj: &str, agent: &str) -> String {
    let docs = regex::Regex::new(r"\S*/docs/providers\.md").unwrap();
    let saved = regex::Regex::new(r"Credentials saved to \S*auth\.json").unwrap();
    let text = normalize(screen, proj).replace(agent, "<AGENT>");
    let text = docs.replace_all(&text, "<DOCS>/providers.md");
    let text = saved.replace_all(&text, "Credentials saved to <AGENT>/auth.json");
    let mut out = Vec::new();
    let mut in_url = false;
    for line in text.lines() {
        if line.starts_with(" https://claude.ai/oauth/authorize") {
            in_url = true;
            out.push("<URL>".to_owned());
        } else if in_url && !line.starts_with(" Ctrl+click") {
            continue;
        } else {
            in_url = false;
            out.push(line.to_owned());
        }
    }
    out.join("\n")
}

/// Runs `/login` keys in a pty (Kimi at `kimi`); our screen and the reference's, normalised.
fn login_screen(keys: &[&str], done: impl Fn(&str) -> bool, name: &str) -> (String, String, Env) {
    let (_server, env) = login_env();
    let kimi = Kimi::start();
    let vars = [("KIMI_CODE_OAUTH_HOST", kimi.origin.as_str()), ("BROWSER", "true")];
    let mut pty = Pty::spawn_with(&env, &["--model", "local/smollm2-135m"], &vars);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, keys);
    let screen = pty.wait_for(name, done);
    pty.quit();
    let proj = env.proj().display().to_string();
    let agent = env.agent().display().to_string();
    let ours = normalize_login(&screen, &proj, &agent);
    (ours, normalize_login(&reference(&format!("{name}.ref.txt")), &proj, &agent), env)
}

const METHODS: [&str; 3] = ["/login", "WAIT", "Enter"];

fn keys<'a>(parts: &[&[&'a str]]) -> Vec<&'a str> {
    parts.concat()
}

#[test]
fn login_opens_the_method_menu_as_the_reference_does() {
    let (ours, reference, _env) = login_screen(&METHODS, |s| s.contains("Sign in with Radius"), "login_methods");
    pretty_assertions::assert_eq!(ours, reference);
}

#[test]
fn login_lists_the_account_providers_as_the_reference_does() {
    let k = keys(&[&METHODS, &["WAIT", "Enter"]]);
    let (ours, reference, _env) = login_screen(&k, |s| s.contains("(1/9)"), "login_accounts");
    pretty_assertions::assert_eq!(ours, reference);
}

#[test]
fn login_searches_the_api_key_providers_as_the_reference_does() {
    let k = keys(&[&METHODS, &["WAIT", "Down", "Enter", "WAIT", "gro"]]);
    let (ours, reference, _env) = login_screen(&k, |s| s.contains("> gro") && s.contains("Groq"), "login_search");
    pretty_assertions::assert_eq!(ours, reference);
}

#[test]
fn the_llama_extension_login_is_in_the_same_list() {
    let k = keys(&[&METHODS, &["WAIT", "Down", "Enter", "WAIT", "llama"]]);
    let (ours, reference, _env) = login_screen(&k, |s| s.contains("> llama") && s.contains("llama.cpp"), "login_llama");
    pretty_assertions::assert_eq!(ours, reference);
}

#[test]
fn login_asks_the_api_key_in_its_dialog_as_the_reference_does() {
    let k = keys(&[&METHODS, &["WAIT", "Down", "Enter", "WAIT", "cereb", "WAIT", "Enter", "WAIT", "sk-1"]]);
    let (ours, reference, _env) = login_screen(&k, |s| s.contains("> sk-1"), "login_api_key");
    pretty_assertions::assert_eq!(ours, reference);
}

#[test]
fn login_saves_the_api_key_as_the_reference_does() {
    let k = keys(&[&METHODS, &["WAIT", "Down", "Enter", "WAIT", "cereb", "WAIT", "Enter", "WAIT", "sk-1", "Enter"]]);
    let (ours, reference, env) = login_screen(&k, |s| s.contains("Saved API key for Cerebras"), "login_saved");
    pretty_assertions::assert_eq!(ours, reference);
    let file = std::fs::read_to_string(env.agent().join("auth.json")).unwrap();
    assert_eq!(file.trim_end(), self::reference("login_saved.auth.json").trim_end());
}

#[test]
fn login_shows_the_sign_in_url_as_the_reference_does() {
    let k = keys(&[&METHODS, &["WAIT", "Enter", "WAIT", "anthro", "WAIT", "Enter", "WAIT", "Enter"]]);
    let (ours, reference, _env) = login_screen(&k, |s| s.contains("paste the authorization code"), "login_url");
    pretty_assertions::assert_eq!(ours, reference);
}

#[test]
fn login_shows_the_device_code_as_the_reference_does() {
    let k = keys(&[&METHODS, &["WAIT", "Enter", "WAIT", "kimi", "WAIT", "Enter"]]);
    let (ours, reference, _env) = login_screen(&k, |s| s.contains("Waiting for authentication..."), "login_device");
    pretty_assertions::assert_eq!(ours, reference);
}

#[test]
fn escape_while_waiting_aborts_as_the_reference_does() {
    let k = keys(&[&METHODS, &["WAIT", "Enter", "WAIT", "kimi", "WAIT", "Enter", "WAIT", "Escape"]]);
    let (ours, reference, _env) = login_screen(&k, |s| s.contains("This operation was aborted"), "login_cancelled");
    pretty_assertions::assert_eq!(ours, reference);
}

#[test]
fn bedrock_asks_for_its_credential_source_as_the_reference_does() {
    let k = keys(&[&METHODS, &["WAIT", "Down", "Enter", "WAIT", "bedrock", "WAIT", "Enter"]]);
    let (ours, reference, _env) = login_screen(&k, |s| s.contains("Existing AWS credential chain"), "login_bedrock");
    pretty_assertions::assert_eq!(ours, reference);
    let k = keys(&[&METHODS, &["WAIT", "Down", "Enter", "WAIT", "bedrock", "WAIT", "Enter", "WAIT", "Down", "Enter"]]);
    let (ours, reference, _env) = login_screen(&k, |s| s.contains("Enter AWS profile name"), "login_bedrock_profile");
    pretty_assertions::assert_eq!(ours, reference);
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
    let vars = [("PI_TEST_OAUTH_ORIGIN", oauth.origin.as_str()), ("BROWSER", "true")];
    let mut pty = Pty::spawn_with(&env, &["--model", "local/smollm2-135m"], &vars);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["/login xai", "WAIT", "Enter"]);
    let screen = pty.wait_for("the method menu", |s| s.contains("Select authentication method for xAI:"));
    assert!(screen.contains("Sign in with an API key"), "{screen}");
    type_keys(&mut pty, &["Enter"]);
    let screen = pty.wait_for("the signed-in line", |s| s.contains("Logged in to xAI. Credentials saved to"));
    assert!(!screen.contains("Login to xAI"), "the dialog closes: {screen}");
    pty.quit();
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent().join("auth.json")).unwrap()).unwrap();
    assert_eq!(file["xai"]["access"], "xai-a");
    assert_eq!(file["xai"]["type"], "oauth");
    assert_eq!(file["groq"]["key"], "gsk-x");
}
