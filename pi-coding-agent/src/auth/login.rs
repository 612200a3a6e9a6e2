//! The seam between a provider's login flow and whoever drives it (pi-ai's `AuthInteraction`,
//! `ApiKeyAuth.login` and `OAuthAuth.login`): a flow asks questions through
//! [`AuthInteraction::prompt`] and reports progress through [`AuthInteraction::notify`]; the
//! interactive mode's `/login`, `pi`'s non-interactive login and tests each drive it their own way.
//!
//! A [`LoginProvider`] is one entry of `/login`'s list: a built-in OAuth provider, or a provider
//! an extension registers with a login (llama.cpp's server URL and key). [`LoginRegistry`] holds
//! them in the order `/login` lists them.

use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::credential::Credential;
use super::storage::AuthError;

/// One choice of an [`AuthPrompt::Select`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthOption {
    /// What the prompt answers when this is chosen.
    pub id: String,
    /// What the user sees.
    pub label: String,
    /// A second line, when the provider gives one.
    pub description: Option<String>,
}

/// A question a login flow asks (pi-ai's `AuthPrompt`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthPrompt {
    /// Free text.
    Text {
        /// The question.
        message: String,
        /// Shown while the answer is empty.
        placeholder: Option<String>,
    },
    /// Text that is never echoed (an API key).
    Secret {
        /// The question.
        message: String,
        /// Shown while the answer is empty.
        placeholder: Option<String>,
    },
    /// One of several options; answers the option's `id`.
    Select {
        /// The question.
        message: String,
        /// The choices, in order.
        options: Vec<AuthOption>,
    },
    /// A code or redirect URL pasted by hand when the browser callback cannot reach pi.
    ManualCode {
        /// The question.
        message: String,
        /// Shown while the answer is empty.
        placeholder: Option<String>,
    },
}

/// A link shown with an [`AuthEvent::Info`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthInfoLink {
    /// Where it points.
    pub url: String,
    /// Its text, when not the URL itself.
    pub label: Option<String>,
}

/// Something a login flow tells the user (pi-ai's `AuthEvent`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthEvent {
    /// A message, with links.
    Info {
        /// The text.
        message: String,
        /// Links shown under it.
        links: Vec<AuthInfoLink>,
    },
    /// Open this URL in a browser to authorize (PKCE flows).
    AuthUrl {
        /// The authorization URL.
        url: String,
        /// What to do there, when the provider says.
        instructions: Option<String>,
    },
    /// Enter this code at this address (device-code flows).
    DeviceCode {
        /// The code the user types.
        user_code: String,
        /// Where they type it.
        verification_uri: String,
        /// Offer to open the browser when the user confirms (pi's default: true).
        open_browser_on_confirm: bool,
        /// Offer to copy the code when the user confirms (pi's default: true).
        copy_code_on_confirm: bool,
        /// The provider's polling interval.
        interval_seconds: Option<u64>,
        /// How long the code stays valid.
        expires_in_seconds: Option<u64>,
    },
    /// The flow is working ("Waiting for authorization…").
    Progress {
        /// The text.
        message: String,
    },
}

/// Why a login did not produce a credential.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// The user dismissed a prompt or the flow was cancelled (pi: "Login cancelled").
    #[error("Login cancelled")]
    Cancelled,
    /// The provider refused or a request failed; the text is pi's message for it.
    #[error("{0}")]
    Failed(String),
    /// auth.json could not be read, locked or written.
    #[error(transparent)]
    Storage(#[from] AuthError),
}

/// Whoever drives a login: asks the user and shows what the flow reports (pi-ai's
/// `ProviderAuthInteraction`).
#[async_trait]
pub trait AuthInteraction: Send + Sync {
    /// Asks `prompt`; [`LoginError::Cancelled`] when the user dismisses it or the flow is
    /// cancelled.
    async fn prompt(&self, prompt: AuthPrompt) -> Result<String, LoginError>;

    /// Shows `event` (never blocks).
    fn notify(&self, event: AuthEvent);

    /// Cancelled when the user abandons the whole login; flows stop their requests and waits.
    fn cancel(&self) -> CancellationToken;
}

/// Which kind of credential a provider's login produces (pi-ai's `AuthType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoginKind {
    /// An API key, with optional variables (`{"type":"api_key",…}`).
    ApiKey,
    /// OAuth tokens (`{"type":"oauth",…}`).
    OAuth,
}

/// A provider `/login` can log in to.
#[async_trait]
pub trait LoginProvider: Send + Sync {
    /// The provider id the credential is stored under in auth.json.
    fn provider_id(&self) -> &str;

    /// The name `/login` lists (pi's `auth.oauth.name` / `auth.apiKey.name`).
    fn name(&self) -> &str;

    /// What the login produces.
    fn kind(&self) -> LoginKind;

    /// The provider's name in `/login`'s lists when it is not a built-in provider (pi's
    /// provider `name`: an extension's `name` or its `oauth.name`); `None` lists its id.
    fn provider_name(&self) -> Option<&str> {
        None
    }

    /// Runs the login through `interaction`; the caller stores the credential.
    async fn login(&self, interaction: &dyn AuthInteraction) -> Result<Credential, LoginError>;

    /// Called once the caller stored the credential (pi refreshes the provider's models then);
    /// a failure is the provider's to report.
    async fn after_stored(&self) {}
}

/// The providers `/login` offers, in registration order; a later registration with the same
/// provider id and [`LoginKind`] replaces the earlier one in place (a provider may offer both an
/// account sign-in and an API key).
#[derive(Clone, Default)]
pub struct LoginRegistry {
    providers: Arc<RwLock<Vec<Arc<dyn LoginProvider>>>>,
}

impl LoginRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `provider`, replacing one with the same id and kind.
    pub fn register(&self, provider: Arc<dyn LoginProvider>) {
        let mut providers = self.providers.write().unwrap_or_else(|e| e.into_inner());
        let same =
            |p: &Arc<dyn LoginProvider>| p.provider_id() == provider.provider_id() && p.kind() == provider.kind();
        match providers.iter_mut().find(|p| same(p)) {
            Some(slot) => *slot = provider,
            None => providers.push(provider),
        }
    }

    /// Removes the provider with this id; whether one was there.
    pub fn unregister(&self, provider_id: &str) -> bool {
        let mut providers = self.providers.write().unwrap_or_else(|e| e.into_inner());
        let before = providers.len();
        providers.retain(|p| p.provider_id() != provider_id);
        providers.len() != before
    }

    /// The provider with this id.
    pub fn get(&self, provider_id: &str) -> Option<Arc<dyn LoginProvider>> {
        let providers = self.providers.read().unwrap_or_else(|e| e.into_inner());
        providers.iter().find(|p| p.provider_id() == provider_id).cloned()
    }

    /// The login of this id and kind.
    pub fn get_kind(&self, provider_id: &str, kind: LoginKind) -> Option<Arc<dyn LoginProvider>> {
        let providers = self.providers.read().unwrap_or_else(|e| e.into_inner());
        providers.iter().find(|p| p.provider_id() == provider_id && p.kind() == kind).cloned()
    }

    /// Every provider, in order.
    pub fn list(&self) -> Vec<Arc<dyn LoginProvider>> {
        self.providers.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl std::fmt::Debug for LoginRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<String> = self.list().iter().map(|p| p.provider_id().to_owned()).collect();
        f.debug_struct("LoginRegistry").field("providers", &ids).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(&'static str, &'static str);

    #[async_trait]
    impl LoginProvider for Fixed {
        fn provider_id(&self) -> &str {
            self.0
        }
        fn name(&self) -> &str {
            self.1
        }
        fn kind(&self) -> LoginKind {
            LoginKind::ApiKey
        }
        async fn login(&self, interaction: &dyn AuthInteraction) -> Result<Credential, LoginError> {
            let key = interaction.prompt(AuthPrompt::Secret { message: "API key".into(), placeholder: None }).await?;
            Ok(Credential::api_key(key))
        }
    }

    struct Answers(&'static str);

    #[async_trait]
    impl AuthInteraction for Answers {
        async fn prompt(&self, _prompt: AuthPrompt) -> Result<String, LoginError> {
            if self.0.is_empty() { Err(LoginError::Cancelled) } else { Ok(self.0.to_owned()) }
        }
        fn notify(&self, _event: AuthEvent) {}
        fn cancel(&self) -> CancellationToken {
            CancellationToken::new()
        }
    }

    #[test]
    fn a_later_registration_replaces_in_place() {
        let registry = LoginRegistry::new();
        registry.register(Arc::new(Fixed("a", "A")));
        registry.register(Arc::new(Fixed("b", "B")));
        registry.register(Arc::new(Fixed("a", "A2")));
        let names: Vec<String> = registry.list().iter().map(|p| p.name().to_owned()).collect();
        assert_eq!(names, ["A2", "B"]);
        assert!(registry.unregister("a"));
        assert!(!registry.unregister("a"));
        assert!(registry.get("b").is_some());
    }

    #[tokio::test]
    async fn a_login_asks_through_the_interaction() {
        let provider = Fixed("x", "X");
        let credential = provider.login(&Answers("sk-9")).await.unwrap();
        assert_eq!(credential, Credential::api_key("sk-9"));
        let cancelled = provider.login(&Answers("")).await;
        assert!(matches!(cancelled, Err(LoginError::Cancelled)));
    }
}
