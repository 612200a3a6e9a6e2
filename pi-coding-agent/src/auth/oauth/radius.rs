//! Radius (a pi-messages gateway): sign-in in the browser (the authorization endpoint discovered
//! at `/v1/oauth`, the callback on 127.0.0.1:1456 exchanging the code) or with a device code; the
//! gateway's own token endpoint for refreshes.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::callback::{CallbackOptions, CallbackServer, Complete};
use super::device::{PollOptions, PollStatus, poll_device_code};
use super::support::{Body, Pkce, Reply, credential, form, now, send, str_of, trusted_http_url};
use super::{Endpoints, LoginOptions, OAuthFlow, OAuthRequestAuth};
use crate::auth::Credential;
use crate::auth::login::{AuthEvent, AuthInteraction, AuthOption, AuthPrompt, LoginError};

/// The gateway pi signs in to by default.
pub const DEFAULT_RADIUS_GATEWAY: &str = "https://radius.pi.dev";
const CALLBACK_HOST: &str = "127.0.0.1";
const CALLBACK_PORT: u16 = 1456;
const CALLBACK_PATH: &str = "/oauth/callback";
const REDIRECT_URI: &str = "http://127.0.0.1:1456/oauth/callback";
const SKEW_MS: f64 = 60_000.0;
const CLIENT_ID: &str = "pi-gateway";
const SCOPE: &str = "gateway offline_access";
const DEVICE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";
const FORM: [(&str, &str); 2] = [("accept", "application/json"), ("content-type", "application/x-www-form-urlencoded")];

/// A Radius gateway's OAuth.
#[derive(Clone, Debug)]
pub struct RadiusOAuth {
    endpoints: Endpoints,
    name: String,
    gateway: String,
}

/// An OAuth error answer: its `error` code and pi's message.
#[derive(Debug)]
struct OAuthAnswer {
    error: Option<String>,
    message: String,
}

fn oauth_answer(reply: &Reply, message: &str) -> OAuthAnswer {
    let (mut error, mut description) = (None, None);
    if !reply.text.is_empty() {
        match serde_json::from_str::<Value>(&reply.text) {
            Ok(v) => {
                error = v.get("error").and_then(Value::as_str).map(str::to_owned);
                description = v.get("error_description").and_then(Value::as_str).map(str::to_owned);
            }
            Err(_) => description = Some(reply.text.clone()),
        }
    }
    let detail = match (&error, &description) {
        (Some(e), Some(d)) => format!("{e}: {d}"),
        (Some(e), None) => e.clone(),
        (None, Some(d)) if !d.is_empty() => d.clone(),
        _ => reply.status.to_string(),
    };
    OAuthAnswer { error, message: format!("{message}: {detail}") }
}

fn token_credential(data: &Map<String, Value>) -> Credential {
    let expires_in = data.get("expires_in").and_then(Value::as_f64).unwrap_or(f64::NAN);
    let mut fields = vec![
        ("access", data.get("access_token").cloned().unwrap_or(Value::Null)),
        ("refresh", data.get("refresh_token").cloned().unwrap_or(Value::Null)),
        ("expires", Value::from((now() + expires_in * 1000.0 - SKEW_MS).round() as i64)),
    ];
    if let Some(scope) = data.get("scope") {
        fields.push(("scope", scope.clone()));
    }
    credential(fields)
}

async fn request_token(
    endpoints: &Endpoints,
    gateway: &str,
    body: String,
    cancel: &CancellationToken,
) -> Result<Credential, Result<OAuthAnswer, LoginError>> {
    let reply = send(
        endpoints,
        "POST",
        &format!("{gateway}/v1/oauth/token"),
        &FORM,
        Body::Form(body),
        Duration::from_secs(60),
        cancel,
    )
    .await
    .map_err(|e| Err(e.into()))?;
    if !reply.ok() {
        return Err(Ok(oauth_answer(&reply, "Radius OAuth token request failed")));
    }
    let data = reply.object().unwrap_or_default();
    Ok(token_credential(&data))
}

fn flatten(e: Result<OAuthAnswer, LoginError>) -> LoginError {
    match e {
        Ok(answer) => LoginError::Failed(answer.message),
        Err(e) => e,
    }
}

impl RadiusOAuth {
    /// The gateway at `gateway` (a scheme is added when missing), named `name` in prompts.
    pub fn new(endpoints: Endpoints, name: &str, gateway: &str) -> Self {
        let with_scheme = if gateway.starts_with("http://") || gateway.starts_with("https://") {
            gateway.to_owned()
        } else {
            format!("https://{gateway}")
        };
        RadiusOAuth { endpoints, name: name.to_owned(), gateway: with_scheme.trim_end_matches('/').to_owned() }
    }

    async fn browser(
        &self,
        interaction: &dyn AuthInteraction,
        cancel: &CancellationToken,
    ) -> Result<Credential, LoginError> {
        let gateway = &self.gateway;
        let reply = send(
            &self.endpoints,
            "GET",
            &format!("{gateway}/v1/oauth"),
            &[("accept", "application/json")],
            Body::None,
            Duration::from_secs(60),
            cancel,
        )
        .await?;
        if !reply.ok() {
            return Err(LoginError::Failed(format!(
                "Could not load Radius OAuth config from {gateway}: {} {}",
                reply.status, reply.text
            )));
        }
        let authorization = reply
            .object()
            .and_then(|d| trusted_http_url(d.get("authorizationEndpoint")))
            .ok_or_else(|| LoginError::Failed(format!("Invalid Radius OAuth config from {gateway}")))?;
        let pkce = Pkce::generate();
        let state = uuid::Uuid::new_v4().to_string();
        let query = form(&[
            ("response_type", "code"),
            ("client_id", CLIENT_ID),
            ("redirect_uri", REDIRECT_URI),
            ("scope", SCOPE),
            ("code_challenge", &pkce.challenge),
            ("code_challenge_method", "S256"),
            ("handoff", "url"),
            ("state", &state),
        ]);
        let authorize_url = format!("{}?{query}", authorization.split('?').next().unwrap_or(&authorization));
        let complete: Complete<Credential> = {
            let (endpoints, gateway, verifier, cancel) =
                (self.endpoints.clone(), gateway.clone(), pkce.verifier.clone(), cancel.clone());
            Arc::new(move |code, _| {
                let (endpoints, gateway, verifier, cancel) =
                    (endpoints.clone(), gateway.clone(), verifier.clone(), cancel.clone());
                Box::pin(async move {
                    let body = form(&[
                        ("grant_type", "authorization_code"),
                        ("client_id", CLIENT_ID),
                        ("redirect_uri", REDIRECT_URI),
                        ("code", &code),
                        ("code_verifier", &verifier),
                    ]);
                    request_token(&endpoints, &gateway, body, &cancel).await.map_err(flatten)
                })
            })
        };
        let options = CallbackOptions {
            provider_name: "Radius".into(),
            host: CALLBACK_HOST.into(),
            port: CALLBACK_PORT,
            path: CALLBACK_PATH.into(),
            redirect_host: None,
            state: Some(state),
            timeout: None,
        };
        let callback = CallbackServer::start(options, complete, cancel).await?;
        interaction.notify(AuthEvent::Progress { message: format!("Listening for OAuth callback on {REDIRECT_URI}") });
        interaction
            .notify(AuthEvent::AuthUrl { url: authorize_url, instructions: Some("Continue in your browser.".into()) });
        let result = callback.wait().await;
        callback.close();
        result?.ok_or_else(|| LoginError::Failed("OAuth callback did not complete.".into()))
    }

    async fn device(
        &self,
        interaction: &dyn AuthInteraction,
        cancel: &CancellationToken,
    ) -> Result<Credential, LoginError> {
        let gateway = &self.gateway;
        let body = Body::Form(form(&[("client_id", CLIENT_ID), ("scope", SCOPE)]));
        let reply = send(
            &self.endpoints,
            "POST",
            &format!("{gateway}/v1/oauth/device"),
            &FORM,
            body,
            Duration::from_secs(60),
            cancel,
        )
        .await?;
        if !reply.ok() {
            return Err(LoginError::Failed(oauth_answer(&reply, "Radius OAuth device authorization failed").message));
        }
        let data = reply.object().unwrap_or_default();
        let truthy =
            |k: &str| data.get(k).is_some_and(|v| !matches!(v, Value::Null | Value::Bool(false)) && v != "" && v != 0);
        if !["device_code", "user_code", "verification_uri", "expires_in"].iter().all(|k| truthy(k)) {
            return Err(LoginError::Failed(
                "Radius OAuth device authorization response is missing required fields".into(),
            ));
        }
        let uri = trusted_http_url(data.get("verification_uri")).ok_or_else(|| {
            LoginError::Failed("Untrusted verification_uri in Radius OAuth device authorization response".into())
        })?;
        let device_code = str_of(&data, "device_code").unwrap_or_default().to_owned();
        let interval = data.get("interval").and_then(Value::as_f64);
        let expires = data.get("expires_in").and_then(Value::as_f64);
        interaction.notify(AuthEvent::DeviceCode {
            user_code: str_of(&data, "user_code").unwrap_or_default().to_owned(),
            verification_uri: uri,
            open_browser_on_confirm: true,
            copy_code_on_confirm: true,
            interval_seconds: interval.map(|i| i as u64),
            expires_in_seconds: expires.map(|e| e as u64),
        });
        let options =
            PollOptions { interval_seconds: interval, expires_in_seconds: expires, wait_before_first_poll: false };
        poll_device_code(options, cancel, || {
            let (device_code, cancel) = (device_code.clone(), cancel.clone());
            async move {
                let body =
                    form(&[("grant_type", DEVICE_GRANT), ("client_id", CLIENT_ID), ("device_code", &device_code)]);
                match request_token(&self.endpoints, &self.gateway, body, &cancel).await {
                    Ok(c) => Ok(PollStatus::Complete(c)),
                    Err(Err(e)) => Err(e),
                    Err(Ok(answer)) => match answer.error.as_deref() {
                        Some("authorization_pending") => Ok(PollStatus::Pending),
                        Some("slow_down") => Ok(PollStatus::SlowDown(None)),
                        Some("expired_token") => Ok(PollStatus::Failed("Device authorization expired.".into())),
                        Some("access_denied") => Ok(PollStatus::Failed("Device authorization was denied.".into())),
                        _ => Err(LoginError::Failed(answer.message)),
                    },
                }
            }
        })
        .await
    }
}

#[async_trait]
impl OAuthFlow for RadiusOAuth {
    fn name(&self) -> &str {
        &self.name
    }

    async fn login(
        &self,
        interaction: &dyn AuthInteraction,
        _options: &LoginOptions,
    ) -> Result<Credential, LoginError> {
        let option = |id: &str, label: &str| AuthOption { id: id.into(), label: label.into(), description: None };
        let method = interaction
            .prompt(AuthPrompt::Select {
                message: format!("Sign in to {}:", self.name),
                options: vec![
                    option("browser", "Sign in with browser (recommended)"),
                    option("device-code", "Sign in with device code (when signing in from another device)"),
                ],
            })
            .await?;
        let cancel = interaction.cancel();
        match method.as_str() {
            "device-code" => self.device(interaction, &cancel).await,
            "browser" => self.browser(interaction, &cancel).await,
            other => Err(LoginError::Failed(format!("Unknown {} sign-in method: {other}", self.name))),
        }
    }

    async fn refresh(&self, credential: &Credential) -> Result<Credential, String> {
        let body = form(&[
            ("grant_type", "refresh_token"),
            ("client_id", CLIENT_ID),
            ("refresh_token", credential.refresh().unwrap_or_default()),
        ]);
        request_token(&self.endpoints, &self.gateway, body, &CancellationToken::new())
            .await
            .map_err(|e| flatten(e).to_string())
    }

    fn to_auth(&self, credential: &Credential) -> OAuthRequestAuth {
        OAuthRequestAuth::key(credential.access().unwrap_or_default())
    }
}
