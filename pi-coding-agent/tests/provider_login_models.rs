//! An OAuth-only provider a JavaScript extension registers (`fixtures/provider_registration/
//! login-models.ts`, run by the real Node) is not available until its login is stored (pi's
//! `hasConfiguredAuth`); after `/login`'s login and store its models are available and
//! `oauth.modifyModels` applies to them (the credential's server and team model), and after a
//! token refresh (an expired credential, refreshed by the next request) `modifyModels` applies
//! again with the refreshed credential.

mod http_support;
mod js_support;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use http_support::Setup;
use pi_coding_agent::auth::{AuthEvent, AuthInteraction, AuthPrompt, AuthStorage, LoginError, LoginKind};
use pi_coding_agent::extensions::{Extension, ExtensionApi, ExtensionRunner, FnExtension};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Answers the login's question with the server's URL.
struct Answer(String, CancellationToken);

#[async_trait]
impl AuthInteraction for Answer {
    async fn prompt(&self, _prompt: AuthPrompt) -> Result<String, LoginError> {
        Ok(self.0.clone())
    }

    fn notify(&self, _event: AuthEvent) {}

    fn cancel(&self) -> CancellationToken {
        self.1.clone()
    }
}

/// `loginprov`'s listed models as `id@baseUrl`.
fn listed(runner: &ExtensionRunner) -> Vec<String> {
    let provider = runner.registered_providers().into_iter().find(|p| p.name == "loginprov").expect("registered");
    provider
        .model_values()
        .iter()
        .map(|m| format!("{}@{}", m["id"].as_str().unwrap(), m["baseUrl"].as_str().unwrap()))
        .collect()
}

fn available(runner: &ExtensionRunner) -> bool {
    runner.available_registered_providers().iter().any(|p| p.name == "loginprov")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_makes_the_models_available_and_modify_models_follows_login_and_refresh() {
    if !js_support::node_available() {
        return;
    }
    let slot: Arc<Mutex<Option<ExtensionApi>>> = Arc::default();
    let keep = slot.clone();
    let handle: Arc<dyn Extension> = Arc::new(FnExtension::new("<inline:handle>", move |pi| {
        *keep.lock().unwrap() = Some(pi.clone());
        Ok(())
    }));
    let fixture = format!("{}/tests/fixtures/provider_registration/login-models.ts", env!("CARGO_MANIFEST_DIR"));
    let h =
        Setup { extensions: vec![handle], extension_paths: vec![fixture.into()], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    let runner = h.session.extension_runner().expect("runner").clone();
    let pi = slot.lock().unwrap().clone().expect("the handle");
    let server = h.server.base_url.clone();

    // No stored login: registered, not available, not selectable.
    assert_eq!(listed(&runner), ["base-model@http://127.0.0.1:9/unused"]);
    assert!(!available(&runner));
    assert!(!pi.set_model("loginprov", "base-model").await.unwrap());

    // `/login`: the login, the credential stored, then what pi runs once it is stored.
    let login = runner.login_providers().get_kind("loginprov", LoginKind::OAuth).expect("the provider's login");
    let credential = login.login(&Answer(server.clone(), CancellationToken::new())).await.expect("login");
    let agent_dir = h.dir.path().join("agent");
    AuthStorage::for_agent_dir(&agent_dir).set("loginprov", credential).expect("stored");
    login.after_stored().await;
    assert!(available(&runner));
    assert_eq!(listed(&runner), [format!("base-model@{server}"), format!("team-core@{server}")]);
    let ids: Vec<String> = runner
        .create_context()
        .model_registry()
        .get_available()
        .into_iter()
        .filter(|m| m.provider == "loginprov")
        .map(|m| m.id)
        .collect();
    assert_eq!(ids, ["base-model", "team-core"]);
    assert!(pi.set_model("loginprov", "team-core").await.unwrap(), "{:?}", h.error_pairs());
    h.session.prompt("hello").await.unwrap();
    assert_eq!(h.server.last()["model"], "team-core");

    // An expired credential: the next request refreshes it, and modifyModels runs again with it.
    let auth_path = agent_dir.join("auth.json");
    let mut stored: Value = serde_json::from_str(&std::fs::read_to_string(&auth_path).unwrap()).unwrap();
    stored["loginprov"]["expires"] = json!(0);
    std::fs::write(&auth_path, stored.to_string()).unwrap();
    h.session.prompt("again").await.unwrap();
    let refreshed: Value = serde_json::from_str(&std::fs::read_to_string(&auth_path).unwrap()).unwrap();
    assert_eq!(refreshed["loginprov"]["team"], "refreshed");
    // The models' refresh runs beside the request; wait for it.
    let want = [format!("base-model@{server}"), format!("team-refreshed@{server}")];
    for _ in 0..300 {
        if listed(&runner) == want {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(listed(&runner), want);
    assert!(h.error_pairs().is_empty(), "{:?}", h.error_pairs());
}
