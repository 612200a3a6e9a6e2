//! `/login`: the authentication-method choice, the provider list (with each provider's status),
//! and the provider's login driven through an [`AuthInteraction`] on the interactive UI (its
//! selectors and inputs; the sign-in URL, device code and progress as notifications). The
//! credential is written to auth.json.
//!
//! The dialogs are the interactive mode's extension dialogs (pi draws its own login dialog and a
//! searchable provider list: see README's deliberate differences).

use std::sync::Arc;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::app::App;
use crate::auth::login::{AuthEvent, AuthInteraction, AuthPrompt, LoginError, LoginKind, LoginProvider, LoginRegistry};
use crate::auth::oauth::{Endpoints, LoginOptions};
use crate::auth::{AuthStorage, builtin_login_registry};
use crate::ui::{DialogOptions, NotifyKind, UiHost};

/// An [`AuthInteraction`] on the interactive UI.
struct UiInteraction {
    ui: Arc<dyn UiHost>,
    cancel: CancellationToken,
}

/// Closes a dialog whose answer is no longer wanted (the browser callback won the race).
struct CloseOnDrop(CancellationToken);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

#[async_trait]
impl AuthInteraction for UiInteraction {
    async fn prompt(&self, prompt: AuthPrompt) -> Result<String, LoginError> {
        let close = CloseOnDrop(self.cancel.child_token());
        let opts = DialogOptions { cancel: Some(close.0.clone()), timeout: None };
        let answer = match prompt {
            AuthPrompt::Select { message, options } => {
                let labels: Vec<String> = options.iter().map(|o| o.label.clone()).collect();
                let chosen = self.ui.select(&message, &labels, opts).await;
                chosen.and_then(|label| options.into_iter().find(|o| o.label == label).map(|o| o.id))
            }
            AuthPrompt::Text { message, placeholder }
            | AuthPrompt::Secret { message, placeholder }
            | AuthPrompt::ManualCode { message, placeholder } => {
                self.ui.input(&message, placeholder.as_deref(), opts).await
            }
        };
        drop(close);
        answer.ok_or_else(|| {
            self.cancel.cancel();
            LoginError::Cancelled
        })
    }

    fn notify(&self, event: AuthEvent) {
        let text = match event {
            AuthEvent::AuthUrl { url, instructions } => match instructions {
                Some(i) => format!("Open this URL to sign in:\n{url}\n{i}"),
                None => format!("Open this URL to sign in:\n{url}"),
            },
            AuthEvent::DeviceCode { user_code, verification_uri, .. } => {
                format!("Open {verification_uri} and enter code: {user_code}\nWaiting for authentication...")
            }
            AuthEvent::Info { message, links } => {
                let links: Vec<String> = links
                    .into_iter()
                    .map(|l| format!("  {}{}", l.label.map(|x| format!("{x}: ")).unwrap_or_default(), l.url))
                    .collect();
                std::iter::once(message).chain(links).collect::<Vec<_>>().join("\n")
            }
            AuthEvent::Progress { message } => message,
        };
        self.ui.notify(&text, NotifyKind::Info);
    }

    fn cancel(&self) -> CancellationToken {
        self.cancel.clone()
    }
}

/// The provider's display name.
/// The name `/login` shows: the built-in provider's, else the login's own ("llama.cpp server").
fn login_name(provider: &dyn LoginProvider) -> String {
    match pi_ai::models::provider_info(provider.provider_id()) {
        Some(info) => info.name.clone(),
        None => provider.name().to_owned(),
    }
}

/// How many models an extension-registered provider has now (for llama.cpp's guidance).
type ModelCount = Arc<dyn Fn(&str) -> usize + Send + Sync>;

/// Runs `/login [provider]` on `ui` with `logins`, storing into `auth`.
pub(crate) async fn run_login(
    ui: Arc<dyn UiHost>,
    logins: LoginRegistry,
    auth: AuthStorage,
    provider_ref: String,
    extension_models: Option<ModelCount>,
) {
    let all = logins.list();
    let candidates: Vec<Arc<dyn LoginProvider>> = if provider_ref.is_empty() {
        let options = vec!["Sign in with an account".to_owned(), "Sign in with an API key".to_owned()];
        let Some(choice) = ui.select("Select authentication method:", &options, DialogOptions::default()).await else {
            return;
        };
        let kind = if choice == options[0] { LoginKind::OAuth } else { LoginKind::ApiKey };
        all.into_iter().filter(|p| p.kind() == kind).collect()
    } else {
        let wanted = provider_ref.to_lowercase();
        all.into_iter().filter(|p| p.provider_id().to_lowercase() == wanted).collect()
    };
    let chosen = match candidates.as_slice() {
        [] => return ui.notify(&format!("Unknown provider \"{provider_ref}\"."), NotifyKind::Error),
        [only] => only.clone(),
        many => {
            let stored = auth.list().unwrap_or_default();
            let labels: Vec<String> = many
                .iter()
                .map(|p| {
                    let configured = stored.iter().any(|(id, _)| id == p.provider_id());
                    let status = if configured { " ✓ configured" } else { " • not configured" };
                    let kind = if p.kind() == LoginKind::OAuth { "subscription" } else { "API key" };
                    format!("{} [{kind}]{status}", login_name(p.as_ref()))
                })
                .collect();
            let Some(label) = ui.select("Select provider to configure:", &labels, DialogOptions::default()).await
            else {
                return;
            };
            let Some(i) = labels.iter().position(|l| *l == label) else { return };
            many[i].clone()
        }
    };
    let name = login_name(chosen.as_ref());
    let interaction = UiInteraction { ui: ui.clone(), cancel: CancellationToken::new() };
    let result = chosen.login(&interaction).await;
    let stored = result.and_then(|c| auth.set(chosen.provider_id(), c).map_err(LoginError::from));
    if stored.is_ok() {
        chosen.after_stored().await;
    }
    match stored {
        Ok(()) if chosen.kind() == LoginKind::OAuth => ui.notify(&format!("Logged in to {name}"), NotifyKind::Info),
        Ok(()) if chosen.provider_id() == crate::builtin_extensions::llama::LLAMA_PROVIDER_ID => {
            let models = extension_models.map_or(0, |count| count(chosen.provider_id()));
            let guidance =
                crate::builtin_extensions::llama::post_login_guidance(&format!("Saved API key for {name}"), models);
            ui.notify(&guidance, NotifyKind::Info)
        }
        Ok(()) => ui.notify(&format!("Saved API key for {name}"), NotifyKind::Info),
        Err(LoginError::Cancelled) => ui.notify("Login cancelled", NotifyKind::Info),
        Err(e) => ui.notify(&format!("Failed to login to {name}: {e}"), NotifyKind::Error),
    }
}

impl App {
    /// `/login [provider]`.
    pub(crate) fn command_login(&mut self, args: &str) {
        let agent_dir = crate::session::get_agent_dir();
        let options = LoginOptions {
            device_id: self.session.settings_manager().get_or_create_device_id().ok(),
            agent_name: None,
        };
        let logins = builtin_login_registry(&Endpoints::from_env(), &options);
        // Logins extensions registered (llama.cpp's server URL and key) follow the built-in ones.
        let mut extension_models = None;
        if let Some(runner) = self.session.extension_runner() {
            for provider in runner.login_providers().list() {
                logins.register(provider);
            }
            let runner = runner.clone();
            extension_models = Some(Arc::new(move |provider: &str| {
                runner
                    .registered_providers()
                    .iter()
                    .filter(|p| p.name == provider)
                    .map(|p| p.model_values().len())
                    .sum()
            }) as ModelCount);
        }
        let ui: Arc<dyn UiHost> =
            Arc::new(super::host::TuiHost::new(self.tx.clone(), self.editor_text.clone(), (*self.theme).clone()));
        let auth = AuthStorage::for_agent_dir(&agent_dir);
        tokio::spawn(run_login(ui, logins, auth, args.trim().to_owned(), extension_models));
    }
}
