//! xAI (SuperGrok / X Premium): device-code login against `auth.x.ai`, refresh keeping the old
//! refresh token when xAI does not rotate it, tokens stored five minutes short of their expiry.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::device::{PollOptions, PollStatus, poll_device_code};
use super::support::{Body, FORM_HEADERS, SendError, SimpleUrl, credential, form, now, positive, send, str_of};
use super::{Endpoints, LoginOptions, OAuthFlow, OAuthRequestAuth};
use crate::auth::Credential;
use crate::auth::login::{AuthEvent, AuthInteraction, LoginError};

const CLIENT_ID: &str = "b1a00492-073a-47ea-816f-4c329264a828";
const SCOPE: &str = "openid profile email offline_access grok-cli:access api:access";
const DEVICE_CODE_URL: &str = "https://auth.x.ai/oauth2/device/code";
const TOKEN_URL: &str = "https://auth.x.ai/oauth2/token";
const SKEW_MS: f64 = 5.0 * 60.0 * 1000.0;
const DEFAULT_LIFETIME_SECONDS: f64 = 3600.0;

/// xAI's OAuth.
#[derive(Clone, Debug, Default)]
pub struct XaiOAuth {
    endpoints: Endpoints,
}

struct FormReply {
    ok: bool,
    status: u16,
    body: Map<String, Value>,
}

fn required<'a>(body: &'a Map<String, Value>, field: &str) -> Result<&'a str, String> {
    str_of(body, field).filter(|s| !s.is_empty()).ok_or_else(|| format!("Invalid xAI OAuth response field: {field}"))
}

fn number(body: &Map<String, Value>, field: &str) -> Result<f64, String> {
    positive(body, field).ok_or_else(|| format!("Invalid xAI OAuth response field: {field}"))
}

fn https_uri(raw: &str) -> Result<String, String> {
    match SimpleUrl::parse(raw) {
        Some(u) if u.scheme == "https" => {
            Ok(super::support::trusted_http_url(Some(&Value::from(raw))).unwrap_or_else(|| raw.to_owned()))
        }
        _ => Err("Untrusted verification URI in xAI OAuth response".into()),
    }
}

fn failure(action: &str, reply: &FormReply) -> String {
    let detail: Vec<&str> = [str_of(&reply.body, "error"), str_of(&reply.body, "error_description")]
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .collect();
    let detail = if detail.is_empty() { String::new() } else { format!(": {}", detail.join(": ")) };
    format!("xAI OAuth {action} failed (HTTP {}){detail}", reply.status)
}

fn tokens(body: &Map<String, Value>, previous_refresh: Option<&str>) -> Result<Credential, String> {
    let access = required(body, "access_token")?;
    let refresh = match (body.get("refresh_token"), previous_refresh) {
        (None, Some(p)) if !p.is_empty() => p.to_owned(),
        _ => required(body, "refresh_token")?.to_owned(),
    };
    let lifetime = if body.contains_key("expires_in") { number(body, "expires_in")? } else { DEFAULT_LIFETIME_SECONDS };
    Ok(credential(vec![
        ("access", Value::from(access)),
        ("refresh", Value::from(refresh)),
        ("expires", Value::from((now() + lifetime * 1000.0 - SKEW_MS).round() as i64)),
    ]))
}

impl XaiOAuth {
    /// Requests go to `endpoints`.
    pub fn new(endpoints: Endpoints) -> Self {
        XaiOAuth { endpoints }
    }

    async fn post(
        &self,
        url: &str,
        fields: &[(&str, &str)],
        cancel: &CancellationToken,
    ) -> Result<FormReply, LoginError> {
        let reply = send(
            &self.endpoints,
            "POST",
            url,
            &FORM_HEADERS,
            Body::Form(form(fields)),
            Duration::from_secs(60),
            cancel,
        )
        .await
        .map_err(|e| match e {
            SendError::Cancelled => LoginError::Cancelled,
            SendError::Failed(m) => LoginError::Failed(m),
        })?;
        let body = match serde_json::from_str::<Value>(&reply.text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => Map::new(),
            Err(_) => {
                return Err(LoginError::Failed(format!("xAI OAuth returned invalid JSON (HTTP {})", reply.status)));
            }
        };
        Ok(FormReply { ok: reply.ok(), status: reply.status, body })
    }
}

fn poll_status(reply: FormReply) -> PollStatus<Credential> {
    if reply.ok {
        return match tokens(&reply.body, None) {
            Ok(c) => PollStatus::Complete(c),
            Err(m) => PollStatus::Failed(m),
        };
    }
    match str_of(&reply.body, "error") {
        Some("authorization_pending") => PollStatus::Pending,
        Some("slow_down") => PollStatus::SlowDown(reply.body.get("interval").and_then(Value::as_f64)),
        Some("access_denied" | "authorization_denied") => {
            PollStatus::Failed("xAI device authorization was denied".into())
        }
        Some("expired_token") => PollStatus::Failed("xAI device code expired".into()),
        _ => PollStatus::Failed(failure("device token polling", &reply)),
    }
}

#[async_trait]
impl OAuthFlow for XaiOAuth {
    fn name(&self) -> &str {
        "xAI (Grok/X subscription)"
    }

    async fn login(
        &self,
        interaction: &dyn AuthInteraction,
        _options: &LoginOptions,
    ) -> Result<Credential, LoginError> {
        let cancel = interaction.cancel();
        let reply = self
            .post(DEVICE_CODE_URL, &[("client_id", CLIENT_ID), ("scope", SCOPE), ("referrer", "pi")], &cancel)
            .await?;
        if !reply.ok {
            return Err(LoginError::Failed(failure("device authorization", &reply)));
        }
        let b = &reply.body;
        let interval = positive(b, "interval");
        let complete = match str_of(b, "verification_uri_complete").filter(|s| !s.is_empty()) {
            Some(raw) => Some(https_uri(raw).map_err(LoginError::Failed)?),
            None => None,
        };
        let device_code = required(b, "device_code").map_err(LoginError::Failed)?.to_owned();
        let user_code = required(b, "user_code").map_err(LoginError::Failed)?.to_owned();
        let verification =
            https_uri(required(b, "verification_uri").map_err(LoginError::Failed)?).map_err(LoginError::Failed)?;
        let expires = number(b, "expires_in").map_err(LoginError::Failed)?;
        interaction.notify(AuthEvent::DeviceCode {
            user_code,
            verification_uri: complete.unwrap_or(verification),
            open_browser_on_confirm: true,
            copy_code_on_confirm: true,
            interval_seconds: interval.map(|i| i as u64),
            expires_in_seconds: Some(expires as u64),
        });
        let options =
            PollOptions { interval_seconds: interval, expires_in_seconds: Some(expires), wait_before_first_poll: true };
        poll_device_code(options, &cancel, || {
            let (device_code, cancel) = (device_code.clone(), cancel.clone());
            async move {
                let fields = [
                    ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
                    ("client_id", CLIENT_ID),
                    ("device_code", device_code.as_str()),
                ];
                Ok(poll_status(self.post(TOKEN_URL, &fields, &cancel).await?))
            }
        })
        .await
    }

    async fn refresh(&self, credential: &Credential) -> Result<Credential, String> {
        let token = credential.refresh().unwrap_or_default();
        let fields = [("grant_type", "refresh_token"), ("client_id", CLIENT_ID), ("refresh_token", token)];
        let reply = self.post(TOKEN_URL, &fields, &CancellationToken::new()).await.map_err(|e| e.to_string())?;
        if !reply.ok {
            return Err(failure("token refresh", &reply));
        }
        tokens(&reply.body, Some(token))
    }

    fn to_auth(&self, credential: &Credential) -> OAuthRequestAuth {
        OAuthRequestAuth::key(credential.access().unwrap_or_default())
    }
}
