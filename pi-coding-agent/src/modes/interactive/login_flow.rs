//! `/login` as pi 1.6.0 runs it: the authentication-method menu (an account, an API key, Radius
//! directly), the provider selector of that kind (`login.rs`, searchable, each provider's status),
//! and the chosen provider's login in pi's login dialog (`login_dialog.rs`); the credential is
//! written to auth.json and the result reported as pi reports it. `/login <provider>` starts that
//! provider's login (or its method menu when it has both kinds). Logins extensions registered
//! (llama.cpp) are listed with the built-in ones.
//!
//! Each step ends in a [`LoginStep`] sent back to the UI loop, so a cancelled step can reopen the
//! one it came from, as pi's `onBack` does.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use pi_tui::{CrosstermTerminal, Tui, shared};
use tokio_util::sync::CancellationToken;

use super::app::{App, UiEvent};
use super::dialogs::{DoneCell, Selector};
use super::login::{AuthRow, AuthSelector, compare_rows, format_status};
use super::login_dialog::{DialogInteraction, DialogModel, LoginDialog};
use crate::auth::login::{LoginError, LoginKind, LoginProvider};
use crate::auth::oauth::{Endpoints, LoginOptions};
use crate::auth::{AuthStorage, CredentialType, builtin_login_registry};

/// pi's docs page on providers, as `/login` for Amazon Bedrock names it.
const PROVIDERS_DOC_URL: &str =
    "https://github.com/earendil-works/pi/blob/main/packages/coding-agent/docs/providers.md";

/// One entry of `/login`'s lists (pi's login provider option).
#[derive(Clone)]
pub(crate) struct LoginOption {
    id: String,
    name: String,
    kind: LoginKind,
    /// The method's name ("Anthropic (Claude Pro/Max)", "Groq API key").
    method_name: String,
    /// The account sign-in's label for a single provider's menu ("Sign in with ChatGPT").
    login_label: Option<String>,
    subscription: bool,
    status: Option<(String, String)>,
    provider: Arc<dyn LoginProvider>,
}

impl LoginOption {
    fn auth_type(&self) -> &'static str {
        if self.kind == LoginKind::OAuth { "oauth" } else { "api_key" }
    }

    fn row(&self) -> AuthRow {
        AuthRow {
            id: self.id.clone(),
            name: self.name.clone(),
            auth_type: self.auth_type().to_owned(),
            subscription: self.subscription,
            status: self.status.clone(),
            method_name: self.method_name.clone(),
        }
    }
}

/// Where a cancelled login returns to (pi's `onBack`).
#[derive(Clone)]
pub(crate) enum Back {
    /// The top menu, or one provider's method menu.
    Methods(Option<Vec<LoginOption>>),
    /// The provider selector of this kind, with this search.
    Providers(Option<LoginKind>, Option<String>),
}

/// How a login ended.
pub(crate) enum Finished {
    /// Stored.
    Saved,
    /// A prompt was dismissed: back to where the login started.
    Cancelled,
    /// The dialog was closed while the flow was waiting (pi: "This operation was aborted").
    Aborted,
    /// The flow or the write failed.
    Failed(String),
}

/// A step of `/login`, run on the UI loop.
pub(crate) enum LoginStep {
    /// Show this menu or selector.
    Back(Back),
    /// Start this login; a cancel returns to `Back`.
    Start(Box<LoginOption>, Option<Back>),
    /// A login ended.
    Done(Box<LoginOption>, Option<Back>, Finished),
}

thread_local! {
    /// The open login dialog's result cell, to close it when its login ends.
    static OPEN: RefCell<Option<DoneCell>> = const { RefCell::new(None) };
}

/// The source of a provider's credentials from the environment, as pi labels it.
fn env_source(id: &str) -> Option<String> {
    let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.is_empty());
    if let Some(name) = pi_ai::models::env_api_key_vars(id).and_then(|vars| vars.iter().find(|n| set(n))) {
        return Some((*name).to_owned());
    }
    match id {
        "amazon-bedrock" => {
            let found = [
                ("AWS_BEARER_TOKEN_BEDROCK", "AWS_BEARER_TOKEN_BEDROCK"),
                ("AWS_PROFILE", "AWS_PROFILE"),
                ("AWS_ACCESS_KEY_ID", "AWS access keys"),
                ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "ECS task role"),
                ("AWS_CONTAINER_CREDENTIALS_FULL_URI", "ECS task role"),
                ("AWS_WEB_IDENTITY_TOKEN_FILE", "web identity token"),
            ];
            found.iter().find(|(var, _)| set(var)).map(|(_, label)| (*label).to_owned())
        }
        "google-vertex" => pi_ai::models::env_api_key_with(id, |n| std::env::var(n).ok())
            .map(|_| "gcloud application default credentials".to_owned()),
        _ => None,
    }
}

impl App {
    /// Every login `/login` offers (of `kind`, or all), sorted as pi sorts them.
    fn login_options(&self, kind: Option<LoginKind>) -> Vec<LoginOption> {
        let agent_dir = crate::session::get_agent_dir();
        let options = LoginOptions {
            device_id: self.session.settings_manager().get_or_create_device_id().ok(),
            agent_name: None,
        };
        let logins = builtin_login_registry(&Endpoints::from_env(), &options);
        if let Some(runner) = self.session.extension_runner() {
            for provider in runner.login_providers().list() {
                logins.register(provider);
            }
        }
        let auth = AuthStorage::for_agent_dir(&agent_dir);
        let stored = auth.list().unwrap_or_default();
        let table = crate::auth::logins::builtin_logins();
        let mut out: Vec<LoginOption> = logins
            .list()
            .into_iter()
            .filter(|p| kind.is_none_or(|k| p.kind() == k))
            .map(|p| {
                let id = p.provider_id().to_owned();
                let info = table.get(&id);
                let oauth = info.and_then(|i| i.oauth.as_ref());
                let status = if auth.runtime_api_key(&id).is_some() {
                    Some(("api_key".to_owned(), "runtime".to_owned()))
                } else if let Some((_, k)) = stored.iter().find(|(s, _)| *s == id) {
                    let t = if *k == CredentialType::OAuth { "oauth" } else { "api_key" };
                    Some((t.to_owned(), "stored".to_owned()))
                } else {
                    env_source(&id).map(|source| ("api_key".to_owned(), source))
                };
                LoginOption {
                    // An extension's provider is named by its `name` (or its `oauth.name`), else by
                    // its id (llama.cpp), as pi names it.
                    name: info.map_or_else(|| p.provider_name().unwrap_or(&id).to_owned(), |i| i.name.clone()),
                    kind: p.kind(),
                    method_name: p.name().to_owned(),
                    login_label: oauth.and_then(|o| o.login_label.clone()),
                    subscription: oauth.is_some_and(|o| o.is_subscription),
                    status,
                    provider: p,
                    id,
                }
            })
            .collect();
        // Stable: a provider's account sign-in stays above its API key.
        out.sort_by(|a, b| compare_rows(&a.id, &a.name, &b.id, &b.name));
        out
    }

    /// `/login [provider]`.
    pub(crate) fn command_login(&mut self, tui: &mut Tui<CrosstermTerminal>, args: &str) {
        let reference = args.trim().to_lowercase();
        if reference.is_empty() {
            return self.show_login_methods(tui, None);
        }
        let matching: Vec<LoginOption> = self
            .login_options(None)
            .into_iter()
            .filter(|o| o.id.to_lowercase() == reference || o.name.to_lowercase() == reference)
            .collect();
        match matching.as_slice() {
            [only] => self.start_login(tui, only.clone(), None),
            [first, rest @ ..] if rest.iter().all(|o| o.id == first.id) => {
                self.show_login_methods(tui, Some(matching.clone()))
            }
            _ => self.show_login_providers(tui, None, Some(args.trim().to_owned())),
        }
    }

    /// One step of `/login`.
    pub(crate) fn on_login_step(&mut self, tui: &mut Tui<CrosstermTerminal>, step: LoginStep) {
        match step {
            LoginStep::Back(Back::Methods(options)) => self.show_login_methods(tui, options),
            LoginStep::Back(Back::Providers(kind, search)) => self.show_login_providers(tui, kind, search),
            LoginStep::Start(option, back) => self.start_login(tui, *option, back),
            LoginStep::Done(option, back, finished) => self.finish_login(tui, *option, back, finished),
        }
    }

    fn send_login(&self, step: LoginStep) {
        let _ = self.tx.send(UiEvent::Login(step));
    }

    /// pi's `showLoginAuthTypeSelector`: an account, an API key, and (at the top level) Radius.
    fn show_login_methods(&mut self, tui: &mut Tui<CrosstermTerminal>, options: Option<Vec<LoginOption>>) {
        let radius = match &options {
            Some(_) => None,
            None => self.login_options(Some(LoginKind::OAuth)).into_iter().find(|o| o.id == "radius"),
        };
        let radius_label = radius.as_ref().map(|r| {
            format!("Sign in with {}{}", r.name, format_status(&self.theme, "oauth", r.subscription, r.status.as_ref()))
        });
        let oauth_label = options
            .as_ref()
            .and_then(|o| o.iter().find(|o| o.kind == LoginKind::OAuth))
            .and_then(|o| o.login_label.clone())
            .unwrap_or_else(|| "Sign in with an account".to_owned());
        let has = |kind: LoginKind| options.as_ref().is_none_or(|o| o.iter().any(|o| o.kind == kind));
        let mut labels = Vec::new();
        if has(LoginKind::OAuth) {
            labels.push(oauth_label.clone());
        }
        if has(LoginKind::ApiKey) {
            labels.push("Sign in with an API key".to_owned());
        }
        labels.extend(radius_label.clone());
        if labels.is_empty() {
            return self.show_status("No login methods available.");
        }
        if let Some(only) = options.as_ref().filter(|_| labels.len() == 1).and_then(|o| o.first()) {
            return self.start_login(tui, only.clone(), None);
        }
        let title = match options.as_ref().and_then(|o| o.first()) {
            Some(first) => format!("Select authentication method for {}:", first.name),
            None => "Select authentication method:".to_owned(),
        };
        let done: DoneCell = Rc::new(RefCell::new(None));
        let values = labels.iter().map(|l| (l.clone(), l.clone())).collect();
        let selector = Selector::new(self.theme.clone(), self.keys.clone(), &title, values, false, done.clone());
        self.open_dialog(
            tui,
            shared(selector),
            done,
            Box::new(move |app, choice| {
                let Some(choice) = choice else { return };
                if let Some(radius) = radius.filter(|_| Some(&choice) == radius_label.as_ref()) {
                    return app.send_login(LoginStep::Start(Box::new(radius), Some(Back::Methods(None))));
                }
                let kind = if choice == oauth_label { LoginKind::OAuth } else { LoginKind::ApiKey };
                match options {
                    Some(options) => {
                        if let Some(option) = options.iter().find(|o| o.kind == kind) {
                            let back = Back::Methods(Some(options.clone()));
                            app.send_login(LoginStep::Start(Box::new(option.clone()), Some(back)));
                        }
                    }
                    None => app.send_login(LoginStep::Back(Back::Providers(Some(kind), None))),
                }
            }),
        );
    }

    /// pi's `showLoginProviderSelector`.
    fn show_login_providers(
        &mut self,
        tui: &mut Tui<CrosstermTerminal>,
        kind: Option<LoginKind>,
        search: Option<String>,
    ) {
        let options = self.login_options(kind);
        if options.is_empty() {
            return self.show_status(match kind {
                Some(LoginKind::OAuth) => "No account providers available.",
                Some(LoginKind::ApiKey) => "No API key providers available.",
                None => "No login providers available.",
            });
        }
        let done: DoneCell = Rc::new(RefCell::new(None));
        let rows = options.iter().map(LoginOption::row).collect();
        let selector =
            AuthSelector::new(self.theme.clone(), self.keys.clone(), true, rows, search.as_deref(), done.clone());
        self.open_dialog(
            tui,
            shared(selector),
            done,
            Box::new(move |app, choice| {
                let Some(choice) = choice else {
                    if kind.is_some() {
                        app.send_login(LoginStep::Back(Back::Methods(None)));
                    }
                    return;
                };
                let Some((id, auth_type)) = choice.split_once('\n') else { return };
                if let Some(option) = options.into_iter().find(|o| o.id == id && o.auth_type() == auth_type) {
                    let back = Back::Providers(kind, search);
                    app.send_login(LoginStep::Start(Box::new(option), Some(back)));
                }
            }),
        );
    }

    /// pi's `showLoginDialog` / `showApiKeyLoginDialog`: the login runs in the dialog.
    fn start_login(&mut self, tui: &mut Tui<CrosstermTerminal>, option: LoginOption, back: Option<Back>) {
        let model = DialogModel::new(&format!("Login to {}", option.name));
        if option.id == "amazon-bedrock" && option.kind == LoginKind::ApiKey {
            let details = vec![
                (Some("text"), "You can also use an AWS profile, IAM keys, or role-based credentials.".to_owned()),
                (Some("muted"), "See:".to_owned()),
                (Some("accent"), format!("  {PROVIDERS_DOC_URL}")),
            ];
            model.lock().unwrap_or_else(|e| e.into_inner()).show_details(details);
        }
        let cancel = CancellationToken::new();
        let dialog = LoginDialog::new(self.theme.clone(), self.keys.clone(), model.clone(), cancel.clone());
        let done: DoneCell = Rc::new(RefCell::new(None));
        OPEN.with(|open| *open.borrow_mut() = Some(done.clone()));
        self.set_login_blocked(Some(&option.name));
        self.open_dialog(tui, shared(dialog), done, Box::new(|_, _| {}));
        let auth = AuthStorage::for_agent_dir(&crate::session::get_agent_dir());
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let interaction = DialogInteraction::new(model, cancel.clone(), tx.clone());
            let result = option.provider.login(&interaction).await;
            let stored = result.and_then(|c| auth.set(&option.id, c).map_err(LoginError::from));
            if stored.is_ok() {
                // pi refreshes the provider's models once the credential is stored (llama.cpp).
                option.provider.after_stored().await;
            }
            let finished = match stored {
                Ok(()) => Finished::Saved,
                Err(LoginError::Cancelled) if interaction.prompt_dismissed() => Finished::Cancelled,
                Err(LoginError::Cancelled) if cancel.is_cancelled() => Finished::Aborted,
                Err(LoginError::Cancelled) => Finished::Cancelled,
                Err(e) => Finished::Failed(e.to_string()),
            };
            let _ = tx.send(UiEvent::Login(LoginStep::Done(Box::new(option), back, finished)));
        });
    }

    /// The dialog closes; the result is reported as pi reports it.
    fn finish_login(
        &mut self,
        tui: &mut Tui<CrosstermTerminal>,
        option: LoginOption,
        back: Option<Back>,
        finished: Finished,
    ) {
        if let Some(done) = OPEN.with(|open| open.borrow_mut().take()) {
            *done.borrow_mut() = Some(None);
            self.finish_dialog(tui);
        }
        self.set_login_blocked(None);
        let name = &option.name;
        let oauth = option.kind == LoginKind::OAuth;
        match finished {
            Finished::Saved => {
                self.refresh_available_models();
                let action = if oauth { format!("Logged in to {name}") } else { format!("Saved API key for {name}") };
                let path = crate::session::get_agent_dir().join("auth.json");
                match self.select_after_login(&option.id, &action) {
                    Ok(Some(id)) => {
                        self.show_status(&format!("{action}. Selected {id}. Credentials saved to {}", path.display()))
                    }
                    Ok(None) => self.show_status(&format!("{action}. Credentials saved to {}", path.display())),
                    Err(e) => {
                        self.show_status(&format!("{action}. Credentials saved to {}", path.display()));
                        self.show_error(&e);
                    }
                }
            }
            Finished::Cancelled => {
                if let Some(back) = back {
                    self.on_login_step(tui, LoginStep::Back(back));
                }
            }
            Finished::Aborted => self.show_error(&format!("Failed to login to {name}: This operation was aborted")),
            Finished::Failed(e) if oauth => self.show_error(&format!("Failed to login to {name}: {e}")),
            Finished::Failed(e) => self.show_error(&format!("Failed to save API key for {name}: {e}")),
        }
    }

    /// pi's `completeProviderAuthentication`: on the placeholder model of a start without
    /// credentials, the new provider's default model is selected (and saved as the default);
    /// `Ok(Some(id))` names it, `Err` is pi's reason it could not.
    fn select_after_login(&mut self, provider: &str, action: &str) -> Result<Option<String>, String> {
        if !crate::sdk::default_models::is_unknown_model(&self.session.model()) {
            return Ok(None);
        }
        let models: Vec<pi_ai::Model> = self.models.iter().filter(|m| m.provider == provider).cloned().collect();
        if provider == crate::builtin_extensions::llama::LLAMA_PROVIDER_ID {
            return Err(crate::builtin_extensions::llama::post_login_guidance(action, models.len()));
        }
        let Some(default_id) = crate::sdk::default_models::default_model_id(provider) else {
            return Err(format!(
                "{action}, but no default model is configured for provider \"{provider}\". Use /model to select a model."
            ));
        };
        if models.is_empty() {
            return Err(format!(
                "{action}, but no models are available for that provider. Use /model to select a model."
            ));
        }
        let chosen = models
            .iter()
            .find(|m| m.id == default_id)
            .or_else(|| if provider == "radius" { models.first() } else { None })
            .cloned()
            .ok_or_else(|| {
                format!(
                    "{action}, but its default model \"{default_id}\" is not available. Use /model to select a model."
                )
            })?;
        let id = chosen.id.clone();
        let (chosen_provider, chosen_id) = (chosen.provider.clone(), chosen.id.clone());
        self.session
            .set_model(chosen)
            .map_err(|e| e.to_string())
            // pi selects it with `persist: true`: the next start opens on it too.
            .and_then(|()| {
                self.session
                    .settings_manager()
                    .set_default_model_and_provider(&chosen_provider, &chosen_id)
                    .map_err(|e| e.to_string())
            })
            .map_err(|e| {
                format!("{action}, but selecting its default model failed: {e}. Use /model to select a model.")
            })?;
        self.dirty = true;
        Ok(Some(id))
    }
}
