//! OpenAI Codex (ChatGPT Plus/Pro): PKCE in the browser with the callback on port 1455 (shared
//! with the Codex CLI; a pasted redirect URL when taken), or OpenAI's device-code login; the
//! account id read from the access token's claims and stored as `accountId`.

use std::time::Duration;

use async_trait::async_trait;
use base64::Engine;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::callback::{
    CallbackOptions, CallbackOrManual, CallbackServer, callback_host, wait_for_callback_or_manual_input,
};
use super::device::{PollOptions, PollStatus, poll_device_code};
use super::support::{
    Body, Pkce, Reply, credential, form, js_json, now, parse_authorization_input, random_bytes, send, str_of,
};
use super::{Endpoints, LoginOptions, OAuthFlow, OAuthRequestAuth};
use crate::auth::Credential;
use crate::auth::login::{AuthEvent, AuthInteraction, AuthOption, AuthPrompt, LoginError};

const CLIENT_ID: &str = "app_EMoamEEZ73f0CkXaXp7hrann";
const AUTHORIZE_URL: &str = "https://auth.openai.com/oauth/authorize";
const TOKEN_URL: &str = "https://auth.openai.com/oauth/token";
const REDIRECT_URI: &str = "http://localhost:1455/auth/callback";
const DEVICE_USER_CODE_URL: &str = "https://auth.openai.com/api/accounts/deviceauth/usercode";
const DEVICE_TOKEN_URL: &str = "https://auth.openai.com/api/accounts/deviceauth/token";
const DEVICE_VERIFICATION_URI: &str = "https://auth.openai.com/codex/device";
const DEVICE_REDIRECT_URI: &str = "https://auth.openai.com/deviceauth/callback";
const DEVICE_CODE_TIMEOUT_SECONDS: f64 = 15.0 * 60.0;
const SCOPE: &str = "openid profile email offline_access";
const JWT_CLAIM_PATH: &str = "https://api.openai.com/auth";
const FORM: [(&str, &str); 1] = [("Content-Type", "application/x-www-form-urlencoded")];
const JSON: [(&str, &str); 1] = [("Content-Type", "application/json")];

/// OpenAI Codex's OAuth.
#[derive(Clone, Debug, Default)]
pub struct OpenAICodexOAuth {
    endpoints: Endpoints,
    /// The callback port (1455; tests may use 0).
    pub callback_port: Option<u16>,
}

/// The `chatgpt_account_id` claim of an access token.
pub fn account_id(access: &str) -> Option<String> {
    let parts: Vec<&str> = access.split('.').collect();
    if parts.len() != 3 {
        return None;
    }
    let engine = base64::engine::general_purpose::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    let bytes = engine.decode(parts[1]).ok()?;
    let payload: Value = serde_json::from_slice(&bytes).ok()?;
    let id = payload.get(JWT_CLAIM_PATH)?.get("chatgpt_account_id")?.as_str()?;
    (!id.is_empty()).then(|| id.to_owned())
}

impl OpenAICodexOAuth {
    /// Requests go to `endpoints`.
    pub fn new(endpoints: Endpoints) -> Self {
        OpenAICodexOAuth { endpoints, callback_port: None }
    }

    fn read_tokens(reply: &Reply, operation: &str) -> Result<Credential, String> {
        if !reply.ok() {
            let text = if reply.text.is_empty() { reply.status_text.clone() } else { reply.text.clone() };
            return Err(format!("OpenAI Codex token {operation} failed ({}): {text}", reply.status));
        }
        let json = reply.object();
        let ok = json.as_ref().is_some_and(|j| {
            str_of(j, "access_token").is_some_and(|s| !s.is_empty())
                && str_of(j, "refresh_token").is_some_and(|s| !s.is_empty())
                && j.get("expires_in").is_some_and(Value::is_number)
        });
        let Some(j) = json.filter(|_| ok) else {
            return Err(format!("OpenAI Codex token {operation} response missing fields: {}", reply.text.trim()));
        };
        let access = str_of(&j, "access_token").unwrap_or_default().to_owned();
        let expires = now() + j.get("expires_in").and_then(Value::as_f64).unwrap_or(0.0) * 1000.0;
        let Some(account) = account_id(&access) else {
            return Err("Failed to extract accountId from token".into());
        };
        Ok(credential(vec![
            ("access", Value::from(access)),
            ("refresh", j.get("refresh_token").cloned().unwrap_or(Value::Null)),
            ("expires", Value::from(expires.round() as i64)),
            ("accountId", Value::from(account)),
        ]))
    }

    async fn exchange(
        &self,
        code: &str,
        verifier: &str,
        redirect_uri: &str,
        cancel: &CancellationToken,
    ) -> Result<Credential, LoginError> {
        let body = form(&[
            ("grant_type", "authorization_code"),
            ("client_id", CLIENT_ID),
            ("code", code),
            ("code_verifier", verifier),
            ("redirect_uri", redirect_uri),
        ]);
        let reply =
            send(&self.endpoints, "POST", TOKEN_URL, &FORM, Body::Form(body), Duration::from_secs(60), cancel).await?;
        Self::read_tokens(&reply, "exchange").map_err(LoginError::Failed)
    }

    async fn login_device(&self, interaction: &dyn AuthInteraction) -> Result<Credential, LoginError> {
        let cancel = interaction.cancel();
        let body = Body::Json(json!({"client_id": CLIENT_ID}));
        let reply =
            send(&self.endpoints, "POST", DEVICE_USER_CODE_URL, &JSON, body, Duration::from_secs(60), &cancel).await?;
        if !reply.ok() {
            if reply.status == 404 {
                return Err(LoginError::Failed("OpenAI Codex device code login is not enabled for this server. Use browser login or verify the server URL.".into()));
            }
            let suffix = if reply.text.is_empty() { String::new() } else { format!(": {}", reply.text) };
            return Err(LoginError::Failed(format!(
                "OpenAI Codex device code request failed with status {}{suffix}",
                reply.status
            )));
        }
        let json = reply.object();
        let interval = json.as_ref().and_then(|j| match j.get("interval") {
            Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
            Some(v) => v.as_f64(),
            None => None,
        });
        let (Some(j), Some(interval)) = (json.as_ref(), interval.filter(|i| i.is_finite() && *i >= 0.0)) else {
            return Err(LoginError::Failed(format!(
                "Invalid OpenAI Codex device code response: {}",
                js_json(json.as_ref())
            )));
        };
        let (Some(device_auth_id), Some(user_code)) =
            (str_of(j, "device_auth_id").filter(|s| !s.is_empty()), str_of(j, "user_code").filter(|s| !s.is_empty()))
        else {
            return Err(LoginError::Failed(format!("Invalid OpenAI Codex device code response: {}", js_json(Some(j)))));
        };
        interaction.notify(AuthEvent::DeviceCode {
            user_code: user_code.to_owned(),
            verification_uri: DEVICE_VERIFICATION_URI.into(),
            open_browser_on_confirm: true,
            copy_code_on_confirm: true,
            interval_seconds: Some(interval as u64),
            expires_in_seconds: Some(DEVICE_CODE_TIMEOUT_SECONDS as u64),
        });
        let poll_body = json!({"device_auth_id": device_auth_id, "user_code": user_code});
        let options = PollOptions {
            interval_seconds: Some(interval),
            expires_in_seconds: Some(DEVICE_CODE_TIMEOUT_SECONDS),
            wait_before_first_poll: false,
        };
        let (code, verifier) = poll_device_code(options, &cancel, || {
            let body = Body::Json(poll_body.clone());
            let cancel = cancel.clone();
            async move {
                let reply =
                    send(&self.endpoints, "POST", DEVICE_TOKEN_URL, &JSON, body, Duration::from_secs(60), &cancel)
                        .await?;
                Ok(device_poll_status(&reply))
            }
        })
        .await?;
        self.exchange(&code, &verifier, DEVICE_REDIRECT_URI, &cancel).await
    }

    async fn login_browser(
        &self,
        interaction: &dyn AuthInteraction,
        options: &LoginOptions,
    ) -> Result<Credential, LoginError> {
        let pkce = Pkce::generate();
        let state: String = random_bytes(16).iter().map(|b| format!("{b:02x}")).collect();
        let originator = options.agent_name.clone().unwrap_or_else(|| "pi".into());
        let query = form(&[
            ("response_type", "code"),
            ("client_id", CLIENT_ID),
            ("redirect_uri", REDIRECT_URI),
            ("scope", SCOPE),
            ("code_challenge", &pkce.challenge),
            ("code_challenge_method", "S256"),
            ("state", &state),
            ("id_token_add_organizations", "true"),
            ("codex_cli_simplified_flow", "true"),
            ("originator", &originator),
        ]);
        let url = format!("{AUTHORIZE_URL}?{query}");
        let cancel = interaction.cancel();
        let callback_options = CallbackOptions {
            provider_name: "OpenAI".into(),
            host: callback_host(),
            port: self.callback_port.unwrap_or(1455),
            path: "/auth/callback".into(),
            redirect_host: None,
            state: Some(state.clone()),
            timeout: None,
        };
        let complete = super::callback::code_only();
        let callback = CallbackServer::start(callback_options, complete, &cancel).await.ok();
        interaction.notify(AuthEvent::AuthUrl {
            url,
            instructions: Some("A browser window should open. Complete login to finish.".into()),
        });
        let result = async {
            let got = wait_for_callback_or_manual_input(
                interaction,
                callback.as_ref(),
                "Complete login in your browser, or paste the authorization code / redirect URL here:",
                Some(REDIRECT_URI.into()),
            )
            .await?;
            let code = match got {
                CallbackOrManual::Callback(code) => Some(code),
                CallbackOrManual::Manual(input) => {
                    let (code, got_state) = parse_authorization_input(&input);
                    if got_state.is_some_and(|s| s != state) {
                        return Err(LoginError::Failed("State mismatch".into()));
                    }
                    code
                }
            };
            let code = code
                .filter(|c| !c.is_empty())
                .ok_or_else(|| LoginError::Failed("Missing authorization code".into()))?;
            self.exchange(&code, &pkce.verifier, REDIRECT_URI, &cancel).await
        }
        .await;
        if let Some(c) = &callback {
            c.close();
        }
        result
    }
}

fn device_poll_status(reply: &Reply) -> PollStatus<(String, String)> {
    if reply.ok() {
        let json = reply.object();
        let pair = json.as_ref().and_then(|j| {
            Some((
                str_of(j, "authorization_code").filter(|s| !s.is_empty())?.to_owned(),
                str_of(j, "code_verifier").filter(|s| !s.is_empty())?.to_owned(),
            ))
        });
        return match pair {
            Some(pair) => PollStatus::Complete(pair),
            None => PollStatus::Failed(format!(
                "Invalid OpenAI Codex device auth token response: {}",
                js_json(json.as_ref())
            )),
        };
    }
    if reply.status == 403 || reply.status == 404 {
        return PollStatus::Pending;
    }
    let json: Option<Map<String, Value>> = reply.object();
    let code = json.as_ref().and_then(|j| match j.get("error") {
        Some(Value::Object(e)) => e.get("code").and_then(Value::as_str).map(str::to_owned),
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    });
    match code.as_deref() {
        Some("deviceauth_authorization_pending") => PollStatus::Pending,
        Some("slow_down") => PollStatus::SlowDown(None),
        _ => {
            let suffix = if reply.text.is_empty() { String::new() } else { format!(": {}", reply.text) };
            PollStatus::Failed(format!("OpenAI Codex device auth failed with status {}{suffix}", reply.status))
        }
    }
}

#[async_trait]
impl OAuthFlow for OpenAICodexOAuth {
    fn name(&self) -> &str {
        "OpenAI (ChatGPT Plus/Pro)"
    }

    async fn login(&self, interaction: &dyn AuthInteraction, options: &LoginOptions) -> Result<Credential, LoginError> {
        let option = |id: &str, label: &str| AuthOption { id: id.into(), label: label.into(), description: None };
        let method = interaction
            .prompt(AuthPrompt::Select {
                message: "Select OpenAI Codex login method:".into(),
                options: vec![
                    option("browser", "Browser login (default)"),
                    option("device_code", "Device code login (headless)"),
                ],
            })
            .await?;
        match method.as_str() {
            "device_code" => self.login_device(interaction).await,
            "browser" => self.login_browser(interaction, options).await,
            other => Err(LoginError::Failed(format!("Unknown OpenAI Codex login method: {other}"))),
        }
    }

    async fn refresh(&self, credential: &Credential) -> Result<Credential, String> {
        let body = form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", credential.refresh().unwrap_or_default()),
            ("client_id", CLIENT_ID),
        ]);
        let reply = send(
            &self.endpoints,
            "POST",
            TOKEN_URL,
            &FORM,
            Body::Form(body),
            Duration::from_secs(60),
            &CancellationToken::new(),
        )
        .await
        .map_err(|e| format!("OpenAI Codex token refresh error: {e}"))?;
        Self::read_tokens(&reply, "refresh")
    }

    fn to_auth(&self, credential: &Credential) -> OAuthRequestAuth {
        OAuthRequestAuth::key(credential.access().unwrap_or_default())
    }
}
