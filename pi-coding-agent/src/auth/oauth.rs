//! OAuth token refresh, as pi-ai's flows do it, and its place in auth.json: a stored OAuth
//! credential that expires within five minutes is refreshed under the auth.json lock (re-checked
//! there, so concurrent processes refresh once), and the new tokens are written before the lock
//! is released. A refresh that fails leaves the stored credential as it was.
//!
//! Implemented: Anthropic (Claude Pro/Max). The browser and device-code logins are not ported.

use std::time::Duration;

use serde_json::{Value, json};

use super::credential::{Credential, CredentialType};
use super::lock::FileLock;
use super::storage::{AuthError, AuthStorage};

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

pub use pi_ai::js::now_ms;

/// Anthropic's OAuth token endpoint (Claude Pro/Max subscriptions).
#[derive(Clone, Debug)]
pub struct AnthropicOAuth {
    /// `https://platform.claude.com/v1/oauth/token`.
    pub token_url: String,
    /// pi's public client id.
    pub client_id: String,
}

impl Default for AnthropicOAuth {
    fn default() -> Self {
        AnthropicOAuth {
            token_url: "https://platform.claude.com/v1/oauth/token".into(),
            client_id: "9d1c250a-e61b-44d9-88ed-5944d1962f5e".into(),
        }
    }
}

impl AnthropicOAuth {
    /// Exchanges a refresh token for new tokens: `POST {grant_type, client_id, refresh_token}` as
    /// JSON; the new credential expires five minutes before the server says (as pi stores it).
    pub async fn refresh(&self, refresh_token: &str) -> Result<Credential, String> {
        let url = &self.token_url;
        let body = json!({"grant_type": "refresh_token", "client_id": self.client_id, "refresh_token": refresh_token});
        let failed = |details: String| format!("Anthropic token refresh request failed. url={url}; details={details}");
        let response = reqwest::Client::new()
            .post(url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .timeout(Duration::from_secs(30))
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| failed(e.to_string()))?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(|e| failed(e.to_string()))?;
        if !(200..300).contains(&status) {
            return Err(failed(format!("HTTP request failed. status={status}; url={url}; body={text}")));
        }
        let data: Value = serde_json::from_str(&text).map_err(|e| {
            format!("Anthropic token refresh returned invalid JSON. url={url}; body={text}; details={e}")
        })?;
        let field = |name: &str| data.get(name).and_then(Value::as_str).map(str::to_owned);
        let (Some(access), Some(refresh)) = (field("access_token"), field("refresh_token")) else {
            return Err(format!("Anthropic token refresh returned no tokens. url={url}; body={text}"));
        };
        let expires_in = data.get("expires_in").and_then(Value::as_f64).unwrap_or(0.0);
        let expires = (now_ms() as f64 + expires_in * 1000.0 - 5.0 * 60.0 * 1000.0).max(0.0) as u64;
        Ok(Credential::oauth(access, refresh, expires))
    }
}

/// Whether a credential expires within [`REFRESH_BEFORE_EXPIRY`] of `now_ms`.
pub fn expires_soon(credential: &Credential, now_ms: u64) -> bool {
    let limit = (now_ms + REFRESH_BEFORE_EXPIRY.as_millis() as u64) as f64;
    credential.expires().is_none_or(|e| limit >= e)
}

impl AuthStorage {
    /// Refreshes `provider`'s stored OAuth credential with `anthropic` when it expires soon; returns
    /// the credential stored afterwards (`None` when the provider has no OAuth credential). Fields
    /// of the stored credential the refresh does not return are kept.
    pub async fn refresh_anthropic_oauth(
        &self,
        provider: &str,
        anthropic: &AnthropicOAuth,
    ) -> Result<Option<Credential>, OAuthError> {
        match self.get(provider)? {
            Some(c) if c.kind() == CredentialType::OAuth && expires_soon(&c, now_ms()) => {}
            Some(c) if c.kind() == CredentialType::OAuth => return Ok(Some(c)),
            _ => return Ok(None),
        }
        let Some(path) = self.path().map(std::path::Path::to_path_buf) else {
            return self.refresh_in_memory(provider, anthropic).await;
        };
        let lock_path = path.clone();
        let held = tokio::task::spawn_blocking(move || FileLock::acquire(&lock_path))
            .await
            .map_err(|e| AuthError::Io { path: path.clone(), source: std::io::Error::other(e.to_string()) })?
            .map_err(|source| AuthError::Io { path: path.clone(), source })?;
        // Re-checked under the lock: another process may have refreshed already.
        let text = std::fs::read_to_string(&path).map_err(|source| AuthError::Io { path: path.clone(), source })?;
        let mut data = self.parse_text(&text)?;
        let current = data.get(provider).and_then(Value::as_object).cloned().map(Credential::from_json);
        let current = match current {
            Some(c) if c.kind() == CredentialType::OAuth && expires_soon(&c, now_ms()) => c,
            other => {
                drop(held);
                return Ok(other.filter(|c| c.kind() == CredentialType::OAuth));
            }
        };
        let next = refresh_with(provider, anthropic, &current).await?;
        data.insert(provider.to_owned(), Value::Object(next.clone().into_json()));
        self.write_locked(&path, &data)?;
        drop(held);
        Ok(Some(next))
    }

    async fn refresh_in_memory(
        &self,
        provider: &str,
        anthropic: &AnthropicOAuth,
    ) -> Result<Option<Credential>, OAuthError> {
        let Some(current) = self.get(provider)? else { return Ok(None) };
        let next = refresh_with(provider, anthropic, &current).await?;
        self.set(provider, next.clone())?;
        Ok(Some(next))
    }
}

async fn refresh_with(
    provider: &str,
    anthropic: &AnthropicOAuth,
    current: &Credential,
) -> Result<Credential, OAuthError> {
    let refresh_error = |message: String| OAuthError::Refresh { provider: provider.to_owned(), message };
    let token = current.refresh().ok_or_else(|| refresh_error("the credential has no refresh token".into()))?;
    let fresh = tokio::time::timeout(REFRESH_TIMEOUT, anthropic.refresh(token))
        .await
        .map_err(|_| refresh_error("The operation timed out.".into()))?
        .map_err(refresh_error)?;
    let mut next = current.clone();
    for (k, v) in fresh.into_json() {
        next.set(&k, v);
    }
    Ok(next)
}
