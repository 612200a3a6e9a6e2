//! A provider a TypeScript extension registers with `oauth`
//! (`fixtures/js_extensions/oauth-provider.ts`), against the reference pi 1.6.0: `/login` lists it
//! by its name, runs its `login` in the host with pi's callbacks drawn in the login dialog (the
//! sign-in URL, the progress line, the code prompt), and stores the credential in auth.json as pi
//! does (screens and file recorded by `fixtures/auth/record_extension_oauth.sh`). Requests take
//! their key from `getApiKey`, an expired credential is refreshed through `refreshToken` and
//! written back, and `ctx.modelRegistry`'s auth members and `complete` answer as the reference's
//! (`oauth-provider.pi.json`, recorded with the same extension).

mod cli_support;
mod http_support;
mod interactive_support;
mod js_support;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cli_support::{Env, ScriptedServer};
use http_support::Setup;
use interactive_support::{Pty, dark_theme, normalize};
use pi_coding_agent::auth::{AuthEvent, AuthInteraction, AuthPrompt, AuthStorage, LoginError, LoginKind};
use pi_coding_agent::extensions::{Extension, ExtensionApi, FnExtension};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn fixture_path(name: &str) -> String {
    format!("{}/tests/fixtures/js_extensions/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn reference(name: &str) -> String {
    let path = format!("{}/tests/fixtures/auth/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn recorded() -> Value {
    serde_json::from_str(include_str!("fixtures/js_extensions/oauth-provider.pi.json")).expect("fixture")
}

/// What differs by run: the project and agent dirs.
fn normalized(screen: &str, proj: &str, agent: &str) -> String {
    let saved = regex::Regex::new(r"Credentials saved to \S*auth\.json").expect("regex");
    let text = normalize(screen, proj).replace(agent, "<AGENT>");
    saved.replace_all(&text, "Credentials saved to <AGENT>/auth.json").into_owned()
}

/// `/login` with the extension loaded, in a pty: the screen after `keys` (`WAIT` waits a beat)
/// and the reference's, normalised, with the environment.
fn login_screen(keys: &[&str], done: impl Fn(&str) -> bool, name: &str) -> Option<(String, String, Env)> {
    let node = js_support::node_path()?;
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    std::fs::write(env.agent().join("auth.json"), r#"{"groq":{"type":"api_key","key":"gsk-x"}}"#).expect("auth.json");
    let node = node.to_string_lossy().into_owned();
    let extension = fixture_path("oauth-provider.ts");
    let mut pty = Pty::spawn_with(
        &env,
        &["-e", &extension, "--model", "local/smollm2-135m"],
        &[("PI_NODE", &node), ("BROWSER", "true")],
    );
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    interactive_support::type_keys(&mut pty, keys);
    let screen = pty.wait_for(name, done);
    pty.quit();
    let (proj, agent) = (env.proj().display().to_string(), env.agent().display().to_string());
    let ours = normalized(&screen, &proj, &agent);
    Some((ours, normalized(&reference(&format!("{name}.ref.txt")), &proj, &agent), env))
}

const TO_LIST: [&str; 8] = ["/login", "WAIT", "Enter", "WAIT", "Enter", "WAIT", "oauth", "WAIT"];

#[test]
fn login_lists_the_extension_provider_by_its_name_as_the_reference_does() {
    let Some((ours, reference, _env)) = login_screen(&TO_LIST, |s| s.contains("(1/10)"), "ext_oauth_list") else {
        return;
    };
    pretty_assertions::assert_eq!(ours, reference);
}

#[test]
fn the_extension_login_draws_its_callbacks_as_the_reference_does() {
    let keys = [&TO_LIST[..], &["Enter"]].concat();
    let Some((ours, reference, _env)) =
        login_screen(&keys, |s| s.contains("Paste the code from the SSO page:"), "ext_oauth_prompt")
    else {
        return;
    };
    pretty_assertions::assert_eq!(ours, reference);
}

#[test]
fn the_extension_login_saves_the_credential_as_the_reference_does() {
    let keys = [&TO_LIST[..], &["Enter", "WAIT", "1234", "Enter"]].concat();
    let Some((ours, reference, env)) = login_screen(&keys, |s| s.contains("Logged in to OAuth"), "ext_oauth_saved")
    else {
        return;
    };
    pretty_assertions::assert_eq!(ours, reference);
    let file: Value = serde_json::from_str(&std::fs::read_to_string(env.agent().join("auth.json")).expect("auth.json"))
        .expect("JSON");
    let theirs: Value = serde_json::from_str(&self::reference("ext_oauth_saved.auth.json")).expect("JSON");
    assert_eq!(serde_json::to_string(&file).unwrap(), serde_json::to_string(&theirs).unwrap());
}

/// Answers the login's questions from a script and records what it was told.
#[derive(Default)]
struct Scripted {
    log: Mutex<Vec<String>>,
    cancel: CancellationToken,
}

#[async_trait]
impl AuthInteraction for Scripted {
    async fn prompt(&self, prompt: AuthPrompt) -> Result<String, LoginError> {
        self.log.lock().unwrap().push(format!("prompt {prompt:?}"));
        Ok("1234".into())
    }

    fn notify(&self, event: AuthEvent) {
        self.log.lock().unwrap().push(format!("notify {event:?}"));
    }

    fn cancel(&self) -> CancellationToken {
        self.cancel.clone()
    }
}

fn entry_data(h: &http_support::HttpSession, custom_type: &str) -> Value {
    let entries = h.entries();
    let entry = entries.iter().rev().find(|e| e["customType"] == custom_type);
    entry.unwrap_or_else(|| panic!("no {custom_type} entry: {:?}", h.error_pairs()))["data"].clone()
}

/// The login through the session's login registry (what `/login` runs), then requests with the
/// stored credential, `ctx.modelRegistry`'s answers, and the refresh of an expired credential.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_use_get_api_key_and_refresh_as_the_reference_does() {
    if !js_support::node_available() {
        return;
    }
    let pi = recorded();
    let slot: Arc<Mutex<Option<ExtensionApi>>> = Arc::default();
    let keep = slot.clone();
    let handle: Arc<dyn Extension> = Arc::new(FnExtension::new("<inline:handle>", move |pi| {
        *keep.lock().unwrap() = Some(pi.clone());
        Ok(())
    }));
    let h = Setup {
        extensions: vec![handle],
        extension_paths: vec![fixture_path("oauth-provider.ts").into()],
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    let agent_dir = h.dir.path().join("agent");
    let runner = h.session.extension_runner().expect("runner");
    let login = runner.login_providers().get_kind("oauthprov", LoginKind::OAuth).expect("the provider's login");
    assert_eq!((login.name(), login.provider_name()), ("OAuth Prov (SSO)", Some("OAuth Prov (SSO)")));
    let interaction = Arc::new(Scripted::default());
    let credential = login.login(&*interaction).await.expect("login");
    assert_eq!(
        *interaction.log.lock().unwrap(),
        [
            "notify AuthUrl { url: \"https://sso.example.test/authorize?client=pi\", instructions: Some(\"Sign in with your SSO account\") }",
            "notify Progress { message: \"Waiting for the code...\" }",
            "prompt Text { message: \"Paste the code from the SSO page:\", placeholder: None }",
        ]
    );
    let auth = AuthStorage::for_agent_dir(&agent_dir);
    auth.set("oauthprov", credential).expect("stored");
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(agent_dir.as_path().join("auth.json")).unwrap()).unwrap();
    let theirs: Value = serde_json::from_str(&reference("ext_oauth_saved.auth.json")).unwrap();
    assert_eq!(stored["oauthprov"].to_string(), theirs["oauthprov"].to_string());

    let api = slot.lock().unwrap().clone().expect("the handle");
    assert!(api.set_model("oauthprov", "probe").await.unwrap(), "{:?}", h.error_pairs());
    h.session.prompt("hello").await.unwrap();
    let last = h.entries().into_iter().rev().find(|e| e["message"]["role"] == "assistant").expect("an answer");
    assert_eq!(last["message"]["content"], json!([{"type": "text", "text": "apiKey=key:acc-1234"}]));

    h.session.prompt("/oauth-registry").await.unwrap();
    assert_eq!(entry_data(&h, "oauth-registry"), pi["stored"]);

    // Expired: the next request refreshes it (written back as pi writes it) and uses the new key.
    let mut expired = stored["oauthprov"].clone();
    expired["expires"] = json!(0);
    std::fs::write(agent_dir.as_path().join("auth.json"), json!({"oauthprov": expired}).to_string()).unwrap();
    h.session.prompt("/oauth-registry").await.unwrap();
    assert_eq!(entry_data(&h, "oauth-registry"), pi["expired"]["answer"]);
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(agent_dir.as_path().join("auth.json")).unwrap()).unwrap();
    assert_eq!(file.to_string(), pi["expired"]["auth"].to_string());
    assert!(h.error_pairs().is_empty(), "{:?}", h.error_pairs());
}
