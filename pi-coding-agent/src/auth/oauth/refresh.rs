//! Refreshing a stored OAuth credential under the auth.json lock (pi-ai's
//! `refreshStoredOAuthCredential`): the need is re-checked under the lock, so concurrent requests
//! and processes refresh once, and the new credential is written before the lock is released.

use std::path::Path;

use serde_json::Value;

use super::super::credential::{Credential, CredentialType};
use super::super::lock::FileLock;
use super::super::storage::{AuthError, AuthStorage};
use super::{OAuthError, OAuthFlow, REFRESH_BEFORE_EXPIRY, REFRESH_TIMEOUT, now_ms};

/// Whether a credential expires within [`REFRESH_BEFORE_EXPIRY`] of `now_ms`.
pub fn expires_soon(credential: &Credential, now_ms: u64) -> bool {
    let limit = (now_ms + REFRESH_BEFORE_EXPIRY.as_millis() as u64) as f64;
    credential.expires().is_none_or(|e| limit >= e)
}

/// When a stored credential needs a refresh.
#[derive(Clone, Debug)]
pub enum RefreshWhen {
    /// It expires within five minutes.
    ExpiresSoon,
    /// Its access token is still this one (a request with it was refused); another process that
    /// already refreshed wins.
    AccessIs(String),
    /// It expires within this many milliseconds (`pi auth print-bearer-token --min-expiry`).
    ExpiresWithin(u64),
}

impl RefreshWhen {
    fn needed(&self, credential: &Credential) -> bool {
        match self {
            RefreshWhen::ExpiresSoon => expires_soon(credential, now_ms()),
            RefreshWhen::AccessIs(access) => credential.access() == Some(access.as_str()),
            RefreshWhen::ExpiresWithin(ms) => {
                let limit = (now_ms() + ms.max(&(REFRESH_BEFORE_EXPIRY.as_millis() as u64))) as f64;
                credential.expires().is_none_or(|e| limit >= e)
            }
        }
    }
}

fn io(path: &Path, source: std::io::Error) -> AuthError {
    AuthError::Io { path: path.to_path_buf(), source }
}

impl AuthStorage {
    /// Refreshes `provider`'s stored OAuth credential with `flow` when `when` says so; returns the
    /// credential stored afterwards (`None` when the provider has no OAuth credential). A refresh
    /// that fails leaves the file as it was.
    pub async fn refresh_oauth_with(
        &self,
        provider: &str,
        flow: &dyn OAuthFlow,
        when: RefreshWhen,
    ) -> Result<Option<Credential>, OAuthError> {
        match self.get(provider)? {
            Some(c) if c.kind() == CredentialType::OAuth && when.needed(&c) => {}
            Some(c) if c.kind() == CredentialType::OAuth => return Ok(Some(c)),
            _ => return Ok(None),
        }
        let Some(path) = self.path().map(Path::to_path_buf) else {
            let Some(current) = self.get(provider)? else { return Ok(None) };
            let next = refresh_with(provider, flow, &current).await?;
            self.set(provider, next.clone())?;
            return Ok(Some(next));
        };
        let lock_path = path.clone();
        let held = tokio::task::spawn_blocking(move || FileLock::acquire(&lock_path))
            .await
            .map_err(|e| io(&path, std::io::Error::other(e.to_string())))?
            .map_err(|source| io(&path, source))?;
        // Re-checked under the lock: another process may have refreshed already.
        let text = std::fs::read_to_string(&path).map_err(|source| io(&path, source))?;
        let mut data = self.parse_text(&text)?;
        let current = data.get(provider).and_then(Value::as_object).cloned().map(Credential::from_json);
        let current = match current {
            Some(c) if c.kind() == CredentialType::OAuth && when.needed(&c) => c,
            other => {
                drop(held);
                self.reload()?;
                return Ok(other.filter(|c| c.kind() == CredentialType::OAuth));
            }
        };
        let next = refresh_with(provider, flow, &current).await?;
        data.insert(provider.to_owned(), Value::Object(next.clone().into_json()));
        self.write_locked(&path, &data)?;
        drop(held);
        Ok(Some(next))
    }
}

async fn refresh_with(provider: &str, flow: &dyn OAuthFlow, current: &Credential) -> Result<Credential, OAuthError> {
    let refresh_error = |message: String| OAuthError::Refresh { provider: provider.to_owned(), message };
    let fresh = tokio::time::timeout(REFRESH_TIMEOUT, flow.refresh(current))
        .await
        .map_err(|_| refresh_error("The operation was aborted due to timeout".into()))?
        .map_err(refresh_error)?;
    let mut fresh = fresh.into_json();
    // pi stores what the provider's refresh returns, tagged "oauth".
    fresh.insert("type".into(), "oauth".into());
    Ok(Credential::from_json(fresh))
}
