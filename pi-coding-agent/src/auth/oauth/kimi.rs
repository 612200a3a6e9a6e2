//! Kimi Code (subscription): RFC 8628 device login against `auth.kimi.com` (or
//! `KIMI_CODE_OAUTH_HOST` / `KIMI_OAUTH_HOST`), refresh with retries on 429 and 5xx, and the token
//! sent as an `Authorization: Bearer` header.

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

const CLIENT_ID: &str = "17e5f671-d194-4dfb-9706-5516cb48c098";
const DEFAULT_OAUTH_HOST: &str = "https://auth.kimi.com";
const DEVICE_CODE_TIMEOUT_SECONDS: f64 = 15.0 * 60.0;
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
const REFRESH_MAX_RETRIES: u32 = 3;

/// Kimi Code's OAuth.
#[derive(Clone, Debug, Default)]
pub struct KimiCodingOAuth {
    endpoints: Endpoints,
}

fn oauth_host() -> String {
    let get = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty());
    get("KIMI_CODE_OAUTH_HOST")
        .or_else(|| get("KIMI_OAUTH_HOST"))
        .unwrap_or_else(|| DEFAULT_OAUTH_HOST.into())
        .trim_end_matches('/')
        .to_owned()
}

fn parse_tokens(json: Option<&Map<String, Value>>, operation: &str) -> Result<Credential, String> {
    let fields = json.and_then(|j| {
        Some((
            str_of(j, "access_token").filter(|s| !s.is_empty())?,
            str_of(j, "refresh_token").filter(|s| !s.is_empty())?,
            positive(j, "expires_in")?,
        ))
    });
    let Some((access, refresh, expires_in)) = fields else {
        return Err(format!("Kimi Code token {operation} response missing fields: {}", js_json(json)));
    };
    Ok(credential(vec![
        ("access", Value::from(access)),
        ("refresh", Value::from(refresh)),
        ("expires", Value::from((now() + expires_in * 1000.0).round() as i64)),
    ]))
}

fn poll_status(reply: &Reply) -> PollStatus<Credential> {
    if reply.status >= 500 {
        let suffix = if reply.text.is_empty() { String::new() } else { format!(": {}", reply.text) };
        return PollStatus::Failed(format!(
            "Kimi Code device token request failed with status {}{suffix}",
            reply.status
        ));
    }
    let json = reply.object();
    if reply.ok() && json.as_ref().is_some_and(|j| str_of(j, "access_token").is_some()) {
        return match parse_tokens(json.as_ref(), "poll") {
            Ok(c) => PollStatus::Complete(c),
            Err(m) => PollStatus::Failed(m),
        };
    }
    let error = json.as_ref().and_then(|j| str_of(j, "error"));
    let description =
        json.as_ref().and_then(|j| str_of(j, "error_description")).map(|d| format!(": {d}")).unwrap_or_default();
    match error {
        Some("authorization_pending") => PollStatus::Pending,
        Some("slow_down") => PollStatus::SlowDown(json.as_ref().and_then(|j| positive(j, "interval"))),
        Some("expired_token") => {
            PollStatus::Failed("Kimi Code device authorization expired. Please restart login.".into())
        }
        Some("access_denied") => PollStatus::Failed("Kimi Code login was denied.".into()),
        other => PollStatus::Failed(format!(
            "Kimi Code device token request failed (status {}){}",
            reply.status,
            other.map(|e| format!(": {e}{description}")).unwrap_or_default()
        )),
    }
}

impl KimiCodingOAuth {
    /// Requests go to `endpoints`.
    pub fn new(endpoints: Endpoints) -> Self {
        KimiCodingOAuth { endpoints }
    }

    async fn post(
        &self,
        url: &str,
        fields: &[(&str, &str)],
        cancel: &CancellationToken,
    ) -> Result<Reply, super::support::SendError> {
        send(&self.endpoints, "POST", url, &FORM_HEADERS, Body::Form(form(fields)), REQUEST_TIMEOUT, cancel).await
    }
}

#[async_trait]
impl OAuthFlow for KimiCodingOAuth {
    fn name(&self) -> &str {
        "Kimi Code (subscription)"
    }

    async fn login(
        &self,
        interaction: &dyn AuthInteraction,
        _options: &LoginOptions,
    ) -> Result<Credential, LoginError> {
        let host = oauth_host();
        let cancel = interaction.cancel();
        let reply =
            self.post(&format!("{host}/api/oauth/device_authorization"), &[("client_id", CLIENT_ID)], &cancel).await?;
        if !reply.ok() {
            let suffix = if reply.text.is_empty() { String::new() } else { format!(": {}", reply.text) };
            return Err(LoginError::Failed(format!(
                "Kimi Code device authorization failed with status {}{suffix}",
                reply.status
            )));
        }
        let json = reply.object();
        let parsed = json.as_ref().and_then(|j| {
            Some((
                str_of(j, "device_code")?.to_owned(),
                str_of(j, "user_code")?.to_owned(),
                trusted_http_url(j.get("verification_uri"))?,
                trusted_http_url(j.get("verification_uri_complete"))?,
            ))
        });
        let Some((device_code, user_code, _, complete_uri)) = parsed else {
            return Err(LoginError::Failed(format!(
                "Invalid Kimi Code device authorization response: {}",
                js_json(json.as_ref())
            )));
        };
        let j = json.unwrap_or_default();
        let interval = positive(&j, "interval").unwrap_or(5.0);
        let expires = positive(&j, "expires_in").unwrap_or(DEVICE_CODE_TIMEOUT_SECONDS);
        interaction.notify(AuthEvent::DeviceCode {
            user_code,
            verification_uri: complete_uri,
            open_browser_on_confirm: true,
            copy_code_on_confirm: true,
            interval_seconds: Some(interval as u64),
            expires_in_seconds: Some(expires as u64),
        });
        let options = PollOptions {
            interval_seconds: Some(interval),
            expires_in_seconds: Some(expires),
            wait_before_first_poll: true,
        };
        let url = format!("{host}/api/oauth/token");
        poll_device_code(options, &cancel, || {
            let (url, device_code, cancel) = (url.clone(), device_code.clone(), cancel.clone());
            async move {
                let fields = [
                    ("client_id", CLIENT_ID),
                    ("device_code", device_code.as_str()),
                    ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
                ];
                let reply = self.post(&url, &fields, &cancel).await?;
                Ok(poll_status(&reply))
            }
        })
        .await
    }

    async fn refresh(&self, credential: &Credential) -> Result<Credential, String> {
        let url = format!("{}/api/oauth/token", oauth_host());
        let token = credential.refresh().unwrap_or_default();
        let cancel = CancellationToken::new();
        let mut last = None;
        for attempt in 0..=REFRESH_MAX_RETRIES {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(1000 * 2u64.pow(attempt - 1))).await;
            }
            let fields = [("client_id", CLIENT_ID), ("grant_type", "refresh_token"), ("refresh_token", token)];
            let reply = match self.post(&url, &fields, &cancel).await {
                Ok(r) => r,
                Err(e) => {
                    last = Some(e.to_string());
                    continue;
                }
            };
            let json = reply.object();
            if reply.ok() {
                return parse_tokens(json.as_ref(), "refresh");
            }
            if reply.status == 401
                || reply.status == 403
                || json.as_ref().and_then(|j| str_of(j, "error")) == Some("invalid_grant")
            {
                let description = json
                    .as_ref()
                    .and_then(|j| str_of(j, "error_description"))
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default();
                return Err(format!("Kimi Code token refresh unauthorized (status {}){description}", reply.status));
            }
            if (reply.status == 429 || reply.status >= 500) && attempt < REFRESH_MAX_RETRIES {
                last = Some(format!("Kimi Code token refresh failed with status {}", reply.status));
                continue;
            }
            return Err(format!(
                "Kimi Code token refresh failed with status {}: {}",
                reply.status,
                js_json(json.as_ref())
            ));
        }
        Err(last.unwrap_or_else(|| "Kimi Code token refresh failed".into()))
    }

    fn to_auth(&self, credential: &Credential) -> OAuthRequestAuth {
        let bearer = format!("Bearer {}", credential.access().unwrap_or_default());
        OAuthRequestAuth { api_key: None, headers: vec![("Authorization".into(), bearer)], base_url: None }
    }
}
