//! Meta (Muse subscription): device-code login against `auth.meta.com` for an identity token,
//! exchanged for a Model API key that lives about a day (stored as `access`, the identity token as
//! `refresh`); "refresh" mints a new key.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::device::{PollOptions, PollStatus, poll_device_code};
use super::support::{
    Body, FORM_HEADERS, Reply, credential, form, js_json, now, positive, send, str_of, trusted_http_url,
};
use super::{Endpoints, LoginOptions, OAuthFlow, OAuthRequestAuth};
use crate::auth::Credential;
use crate::auth::login::{AuthEvent, AuthInteraction, LoginError};

const CLIENT_ID: &str = "1031625952748946";
const DEVICE_AUTHORIZATION_URL: &str = "https://auth.meta.com/oidc/device/authorization/";
const DEVICE_TOKEN_URL: &str = "https://auth.meta.com/oidc/device/token/";
const API_KEY_MINT_URL: &str = "https://api.meta.ai/muse-code/key";
const API_KEY_LIFETIME_MS: f64 = 24.0 * 60.0 * 60.0 * 1000.0;
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Meta's OAuth.
#[derive(Clone, Debug, Default)]
pub struct MetaOAuth {
    endpoints: Endpoints,
}

fn detail(json: Option<&Map<String, Value>>) -> String {
    for key in ["error_description", "detail", "message", "error"] {
        if let Some(v) = json.and_then(|j| str_of(j, key)).map(str::trim).filter(|v| !v.is_empty()) {
            return format!(": {v}");
        }
    }
    String::new()
}

fn poll_status(reply: &Reply) -> PollStatus<String> {
    let json = reply.object();
    if let Some(token) = json.as_ref().and_then(|j| str_of(j, "access_token")).filter(|t| reply.ok() && !t.is_empty()) {
        return PollStatus::Complete(token.to_owned());
    }
    match json.as_ref().and_then(|j| str_of(j, "error")) {
        Some("authorization_pending") => PollStatus::Pending,
        Some("slow_down") => PollStatus::SlowDown(json.as_ref().and_then(|j| positive(j, "interval"))),
        Some("access_denied") => PollStatus::Failed("Meta login was denied.".into()),
        Some("expired_token") => PollStatus::Failed("Meta device authorization expired. Please restart login.".into()),
        _ => PollStatus::Failed(format!(
            "Meta device token request failed with status {}{}",
            reply.status,
            detail(json.as_ref())
        )),
    }
}

impl MetaOAuth {
    /// Requests go to `endpoints`.
    pub fn new(endpoints: Endpoints) -> Self {
        MetaOAuth { endpoints }
    }

    async fn mint(&self, identity: &str, cancel: &CancellationToken) -> Result<Credential, String> {
        let auth = format!("Bearer {identity}");
        let headers = [
            ("Accept", "application/json"),
            ("Authorization", auth.as_str()),
            ("Content-Type", "application/json"),
            ("x-api-version", "1.0.0"),
        ];
        let reply = send(
            &self.endpoints,
            "POST",
            API_KEY_MINT_URL,
            &headers,
            Body::Json(Value::Object(Map::new())),
            REQUEST_TIMEOUT,
            cancel,
        )
        .await
        .map_err(|e| e.to_string())?;
        let json = reply.object();
        if reply.status == 401 || reply.status == 403 {
            return Err(format!(
                "Meta session expired (status {}). Run `/login meta` to sign in again.{}",
                reply.status,
                detail(json.as_ref())
            ));
        }
        if !reply.ok() {
            return Err(format!("Meta API key mint failed with status {}{}", reply.status, detail(json.as_ref())));
        }
        let Some(key) = json.as_ref().and_then(|j| str_of(j, "api_key")).filter(|k| !k.is_empty()) else {
            let action = trusted_http_url(json.as_ref().and_then(|j| j.get("action_url")));
            return Err(format!(
                "Meta did not issue an API key.{}",
                action.map(|a| format!(" Complete setup at {a}")).unwrap_or_default()
            ));
        };
        Ok(credential(vec![
            ("refresh", Value::from(identity)),
            ("access", Value::from(key)),
            ("expires", Value::from((now() + API_KEY_LIFETIME_MS).round() as i64)),
        ]))
    }

    async fn run(
        &self,
        interaction: &dyn AuthInteraction,
        cancel: &CancellationToken,
    ) -> Result<Credential, LoginError> {
        let body = Body::Form(form(&[("client_id", CLIENT_ID)]));
        let reply =
            send(&self.endpoints, "POST", DEVICE_AUTHORIZATION_URL, &FORM_HEADERS, body, REQUEST_TIMEOUT, cancel)
                .await?;
        let json = reply.object();
        if !reply.ok() {
            return Err(LoginError::Failed(format!(
                "Meta device authorization failed with status {}{}",
                reply.status,
                detail(json.as_ref())
            )));
        }
        let parsed = json.as_ref().and_then(|j| {
            let uri = trusted_http_url(j.get("verification_uri_complete"))
                .or_else(|| trusted_http_url(j.get("verification_uri")))?;
            Some((
                str_of(j, "device_code").filter(|s| !s.is_empty())?.to_owned(),
                str_of(j, "user_code").filter(|s| !s.is_empty())?.to_owned(),
                uri,
            ))
        });
        let Some((device_code, user_code, uri)) = parsed else {
            return Err(LoginError::Failed(format!(
                "Invalid Meta device authorization response: {}",
                js_json(json.as_ref())
            )));
        };
        let j = json.unwrap_or_default();
        let (interval, expires) = (positive(&j, "interval"), positive(&j, "expires_in"));
        interaction.notify(AuthEvent::DeviceCode {
            user_code,
            verification_uri: uri,
            open_browser_on_confirm: true,
            copy_code_on_confirm: true,
            interval_seconds: interval.map(|i| i as u64),
            expires_in_seconds: expires.map(|e| e as u64),
        });
        let options =
            PollOptions { interval_seconds: interval, expires_in_seconds: expires, wait_before_first_poll: true };
        let identity = poll_device_code(options, cancel, || {
            let (device_code, cancel) = (device_code.clone(), cancel.clone());
            async move {
                let fields = [
                    ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
                    ("device_code", device_code.as_str()),
                    ("client_id", CLIENT_ID),
                ];
                let reply = send(
                    &self.endpoints,
                    "POST",
                    DEVICE_TOKEN_URL,
                    &FORM_HEADERS,
                    Body::Form(form(&fields)),
                    REQUEST_TIMEOUT,
                    &cancel,
                )
                .await?;
                Ok(poll_status(&reply))
            }
        })
        .await?;
        interaction.notify(AuthEvent::Progress { message: "Enabling Meta Model API access...".into() });
        self.mint(&identity, cancel).await.map_err(LoginError::Failed)
    }
}

#[async_trait]
impl OAuthFlow for MetaOAuth {
    fn name(&self) -> &str {
        "Meta (Muse subscription)"
    }

    async fn login(
        &self,
        interaction: &dyn AuthInteraction,
        _options: &LoginOptions,
    ) -> Result<Credential, LoginError> {
        let cancel = interaction.cancel();
        let result = self.run(interaction, &cancel).await;
        if cancel.is_cancelled() { Err(LoginError::Cancelled) } else { result }
    }

    async fn refresh(&self, credential: &Credential) -> Result<Credential, String> {
        self.mint(credential.refresh().unwrap_or_default(), &CancellationToken::new()).await
    }

    fn to_auth(&self, credential: &Credential) -> OAuthRequestAuth {
        OAuthRequestAuth::key(credential.access().unwrap_or_default())
    }
}
