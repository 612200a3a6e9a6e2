//! Credentials: `auth.json` (`AuthStorage`), its lock and lookup order, and the model registry with auth.
//!
//! A program that only needs a key asks [`AuthStorage::api_key`] (runtime key, auth.json,
//! environment) or, with models.json too, [`ModelRegistry::api_key`].

pub mod cloud_logins;
mod configured_headers;
mod credential;
pub mod guidance;
pub mod lock;
pub mod login;
pub mod logins;
pub mod oauth;
mod registry;
pub(crate) use configured_headers::{failed_request, with_configured_request};
pub(crate) use registry::with_provider_auth;
mod storage;
pub mod typed_models;

pub use credential::{Credential, CredentialType};
pub use login::{AuthEvent, AuthInteraction, AuthPrompt, LoginError, LoginKind, LoginProvider, LoginRegistry};
pub use logins::{ApiKeyLogin, OAuthLogin, builtin_login_registry};
pub use oauth::{AnthropicOAuth, OAuthError, OAuthFlow};
pub use registry::{ModelRegistry, RegistryError};
pub use storage::{AuthError, AuthStorage};
