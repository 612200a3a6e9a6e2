//! `pi auth login <provider>` for an account, driven through a scripted terminal against a local
//! authorization server: pi's lines for a device code, a browser sign-in (with the hint naming
//! the skipped method) and `--no-browser`, the credential written to auth.json, and a failure.

mod auth_support;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use auth_support::Server;
use pi_coding_agent::auth::login::LoginError;
use pi_coding_agent::auth::oauth::{Endpoints, LoginOptions};
use pi_coding_agent::auth::{AuthStorage, LoginKind, builtin_login_registry};
use pi_coding_agent::cli::auth_login::{LoginTerminal, run_oauth_login};
use serde_json::{Value, json};

#[derive(Default)]
struct Terminal {
    out: Mutex<Vec<String>>,
    err: Mutex<Vec<String>>,
    answers: Mutex<Vec<String>>,
    opened: Mutex<Vec<String>>,
}

#[async_trait]
impl LoginTerminal for Terminal {
    fn write(&self, line: &str) {
        self.out.lock().unwrap().push(line.to_owned());
    }
    fn error(&self, line: &str) {
        self.err.lock().unwrap().push(line.to_owned());
    }
    async fn question(&self, message: &str) -> Result<String, LoginError> {
        self.out.lock().unwrap().push(message.to_owned());
        self.answers.lock().unwrap().pop().ok_or(LoginError::Cancelled)
    }
    async fn secret(&self, message: &str) -> Result<String, LoginError> {
        self.question(message).await
    }
    fn open_url(&self, url: &str) {
        self.opened.lock().unwrap().push(url.to_owned());
    }
}

fn xai_server(token: &'static str) -> Server {
    Server::start(move |req, _| match req.path.as_str() {
        "/auth.x.ai/oauth2/device/code" => (
            200,
            json!({"device_code": "d", "user_code": "XAI-CODE",
            "verification_uri": "https://accounts.x.ai/device", "interval": 1, "expires_in": 60})
            .to_string(),
        ),
        _ if token.is_empty() => (400, json!({"error": "access_denied"}).to_string()),
        _ => (200, json!({"access_token": token, "refresh_token": "xr", "expires_in": 3600}).to_string()),
    })
}

#[tokio::test]
async fn a_device_code_login_prints_the_code_and_saves_the_credential() {
    let server = xai_server("xai-access");
    let dir = tempfile::tempdir().unwrap();
    let auth = AuthStorage::create(dir.path().join("auth.json"));
    let logins = builtin_login_registry(&Endpoints::local(&server.origin), &LoginOptions::default());
    let login = logins.get_kind("xai", LoginKind::OAuth).unwrap();
    let terminal = Terminal::default();
    let code = run_oauth_login(login, "xAI", true, &auth, &terminal).await;
    assert_eq!(code, 0, "{:?}", terminal.err.lock().unwrap());
    let path = dir.path().join("auth.json").display().to_string();
    assert_eq!(
        *terminal.out.lock().unwrap(),
        [
            "Open https://accounts.x.ai/device and enter code: XAI-CODE".to_owned(),
            "Waiting for authentication...".to_owned(),
            format!("Logged in to xAI. Credentials saved to {path}"),
        ]
    );
    assert_eq!(*terminal.opened.lock().unwrap(), ["https://accounts.x.ai/device"]);
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(file["xai"]["access"], "xai-access");
    assert_eq!(file["xai"]["type"], "oauth");
}

#[tokio::test]
async fn a_denied_login_reports_it_and_stores_nothing() {
    let server = xai_server("");
    let dir = tempfile::tempdir().unwrap();
    let auth = AuthStorage::create(dir.path().join("auth.json"));
    let logins = builtin_login_registry(&Endpoints::local(&server.origin), &LoginOptions::default());
    let terminal = Terminal::default();
    let code = run_oauth_login(logins.get_kind("xai", LoginKind::OAuth).unwrap(), "xAI", false, &auth, &terminal).await;
    assert_eq!(code, 1);
    assert_eq!(*terminal.err.lock().unwrap(), ["Failed to log in to xAI: xAI device authorization was denied"]);
    assert!(terminal.opened.lock().unwrap().is_empty(), "--no-browser opens nothing");
    assert!(!auth.has("xai").unwrap());
}

#[tokio::test]
async fn the_browser_sign_in_names_the_skipped_method_and_no_browser_picks_it() {
    let server =
        Server::start(|_, _| (200, json!({"access_token": "a", "refresh_token": "r", "expires_in": 60}).to_string()));
    let dir = tempfile::tempdir().unwrap();
    let auth = AuthStorage::create(dir.path().join("auth.json"));
    let logins = builtin_login_registry(&Endpoints::local(&server.origin), &LoginOptions::default());
    let login = logins.get_kind("anthropic", LoginKind::OAuth).unwrap();
    // --no-browser: the copy-code login, announced on one line, the pasted code exchanged.
    let terminal = Terminal { answers: Mutex::new(vec!["the-code".into()]), ..Default::default() };
    let code = run_oauth_login(login.clone(), "Anthropic", false, &auth, &terminal).await;
    assert_eq!(code, 0, "{:?}", terminal.err.lock().unwrap());
    let out = terminal.out.lock().unwrap().clone();
    assert_eq!(out[0], "Select Anthropic login method: Copy code login (headless)");
    assert!(
        out[1].starts_with("Open this URL to sign in:\n  https://claude.ai/oauth/authorize?code=true&"),
        "{}",
        out[1]
    );
    assert!(out[1].contains("redirect_uri=https%3A%2F%2Fplatform.claude.com%2Foauth%2Fcode%2Fcallback"));
    assert_eq!(out[2], "Complete login in your browser, then copy the code Anthropic shows and paste it here.");
    assert_eq!(out[3], "Paste the code Anthropic shows after you sign in: (code#state): ");
    assert_eq!(out[4], "Exchanging authorization code for tokens...");
    assert!(terminal.opened.lock().unwrap().is_empty());
    assert_eq!(auth.get("anthropic").unwrap().unwrap().access(), Some("a"));

    // The browser sign-in: the hint names the method it skipped; a dismissed prompt cancels.
    let terminal = Terminal::default();
    let code = run_oauth_login(login, "Anthropic", true, &auth, &terminal).await;
    assert_eq!(code, 1);
    let out = terminal.out.lock().unwrap().clone();
    assert_eq!(
        out[1],
        "Complete login in your browser. If the browser is on another machine, paste the final redirect URL here."
    );
    assert_eq!(out[2], "To use \"Copy code login (headless)\" instead, run \"pi auth login anthropic --no-browser\"");
    assert_eq!(terminal.opened.lock().unwrap().len(), 1);
    assert_eq!(*terminal.err.lock().unwrap(), ["Login cancelled."]);
    let _ = Arc::new(());
}
