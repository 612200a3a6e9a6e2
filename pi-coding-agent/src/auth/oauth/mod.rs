//! OAuth sign-in and token refresh for every provider pi 1.6.0 signs in to (pi-ai's
//! `auth/oauth/`): each provider's [`OAuthFlow`] logs in (PKCE with the loopback callback server
//! and a pasted-code fallback, or device-code polling), refreshes, and derives how requests
//! authenticate ([`OAuthRequestAuth`]: a key, headers, a base URL).
//!
//! A stored OAuth credential that expires within five minutes is refreshed under the auth.json
//! lock (re-checked there, so concurrent processes refresh once), and the new tokens are written
//! before the lock is released. A refresh that fails leaves the stored credential as it was.

mod anthropic;
pub mod callback;
pub mod device;
mod github_copilot;
mod kimi;
mod meta;
mod openai_chatgpt;
mod openai_codex;
mod openrouter;
mod page;
mod radius;
pub mod rate_limit;
mod refresh;
pub mod support;
mod xai;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::credential::Credential;
use super::login::{AuthInteraction, LoginError};
use super::storage::AuthError;

pub use anthropic::AnthropicOAuth;
pub use github_copilot::{GitHubCopilotOAuth, copilot_base_url};
pub use kimi::KimiCodingOAuth;
pub use meta::MetaOAuth;
pub use openai_chatgpt::OpenAIChatGPTOAuth;
pub use openai_codex::OpenAICodexOAuth;
pub use openrouter::OpenRouterOAuth;
pub use radius::{DEFAULT_RADIUS_GATEWAY, RadiusOAuth};
pub use refresh::{RefreshWhen, expires_soon};
pub use xai::XaiOAuth;

pub use pi_ai::js::now_ms;

/// How long before expiry a token is refreshed (pi-ai's five minutes).
pub const REFRESH_BEFORE_EXPIRY: Duration = Duration::from_secs(5 * 60);

/// The bound on one refresh request (pi-ai's 15 s).
pub const REFRESH_TIMEOUT: Duration = Duration::from_secs(15);

/// Why a refresh failed.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    /// auth.json could not be read, locked or written.
    #[error(transparent)]
    Storage(#[from] AuthError),
    /// The provider refused or the request failed (pi's wording).
    #[error("OAuth refresh failed for {provider}: {message}")]
    Refresh {
        /// Provider id.
        provider: String,
        /// pi's detail text.
        message: String,
    },
}

/// How a request authenticates with an OAuth credential (pi-ai's `ModelAuth` from `toAuth`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OAuthRequestAuth {
    /// Sent as the API's key (`Authorization: Bearer` for most APIs).
    pub api_key: Option<String>,
    /// Headers sent instead of or besides the key.
    pub headers: Vec<(String, String)>,
    /// The base URL requests go to instead of the model's (GitHub Copilot's proxy endpoint).
    pub base_url: Option<String>,
}

impl OAuthRequestAuth {
    /// Just a key.
    pub fn key(key: impl Into<String>) -> Self {
        OAuthRequestAuth { api_key: Some(key.into()), ..Default::default() }
    }
}

/// What the app tells a login (pi-ai's `LoginOptions`).
#[derive(Clone, Debug, Default)]
pub struct LoginOptions {
    /// This installation's stable id (a UUID; settings' `deviceId`), for OpenAI's agent host id.
    pub device_id: Option<String>,
    /// The name the app introduces itself with (pi's own name when absent).
    pub agent_name: Option<String>,
}

/// One provider's OAuth (pi-ai's `OAuthAuth`).
#[async_trait]
pub trait OAuthFlow: Send + Sync + std::fmt::Debug {
    /// The name `/login` shows ("Anthropic (Claude Pro/Max)").
    fn name(&self) -> &str;

    /// Runs the sign-in through `interaction`.
    async fn login(&self, interaction: &dyn AuthInteraction, options: &LoginOptions) -> Result<Credential, LoginError>;

    /// Exchanges the refresh token; pi's message on failure.
    async fn refresh(&self, credential: &Credential) -> Result<Credential, String>;

    /// How requests authenticate with `credential`.
    fn to_auth(&self, credential: &Credential) -> OAuthRequestAuth;
}

/// Where a flow sends its requests: the provider's own URLs, or (in tests) the same paths under
/// a local origin (see [`support::endpoint_with`]).
#[derive(Clone, Debug, Default)]
pub struct Endpoints {
    /// The local origin that replaces `https://<host>`.
    pub origin: Option<String>,
}

impl Endpoints {
    /// The provider's own URLs, or `PI_TEST_OAUTH_ORIGIN`'s when the tests set it.
    pub fn from_env() -> Self {
        Endpoints { origin: std::env::var(support::TEST_ORIGIN_ENV).ok().filter(|o| !o.is_empty()) }
    }

    /// Everything under `origin`.
    pub fn local(origin: impl Into<String>) -> Self {
        Endpoints { origin: Some(origin.into()) }
    }

    /// `url` as sent.
    pub fn url(&self, url: &str) -> String {
        support::endpoint_with(url, self.origin.as_deref())
    }
}

/// The OAuth flow of a built-in provider (`anthropic`, `openai`, `openai-codex`,
/// `github-copilot`, `openrouter`, `kimi-coding`, `meta`, `xai`, `radius`), with its requests sent
/// to `endpoints`.
pub fn builtin_flow(provider_id: &str, endpoints: &Endpoints) -> Option<Arc<dyn OAuthFlow>> {
    let e = endpoints.clone();
    Some(match provider_id {
        "anthropic" => Arc::new(AnthropicOAuth::new(e)),
        "openai" => Arc::new(OpenAIChatGPTOAuth::new(e)),
        "openai-codex" => Arc::new(OpenAICodexOAuth::new(e)),
        "github-copilot" => Arc::new(GitHubCopilotOAuth::new(e)),
        "openrouter" => Arc::new(OpenRouterOAuth::new(e)),
        "kimi-coding" => Arc::new(KimiCodingOAuth::new(e)),
        "meta" => Arc::new(MetaOAuth::new(e)),
        "xai" => Arc::new(XaiOAuth::new(e)),
        "radius" => Arc::new(RadiusOAuth::new(e, "Radius", DEFAULT_RADIUS_GATEWAY)),
        _ => return None,
    })
}
