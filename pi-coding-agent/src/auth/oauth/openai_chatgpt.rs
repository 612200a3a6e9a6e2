//! OpenAI (ChatGPT subscription), "Sign in with ChatGPT": PKCE against a client registered per
//! login (the issued client id comes back in the callback and is stored as `clientId`), the
//! callback on 127.0.0.1:1455 raced against a pasted callback URL, tokens that must carry the
//! `chatgpt.tokens.use.direct` scope, stored three minutes short of their expiry.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::callback::{CallbackOptions, CallbackServer, Complete, callback_host};
use super::support::{
    Body, Pkce, SimpleUrl, base64url, credential, form, now, query_get, query_pairs, random_bytes, send, str_of,
};
use super::{Endpoints, LoginOptions, OAuthFlow, OAuthRequestAuth};
use crate::auth::Credential;
use crate::auth::login::{AuthEvent, AuthInteraction, AuthPrompt, LoginError};

const DYNAMIC_CLIENT_ID: &str = "dynamic_agent_client";
const AGENT_NAME_HINT: &str = "Pi";
const AUTHORIZE_URL: &str = "https://auth.openai.com/api/accounts/authorize";
const TOKEN_URL: &str = "https://auth.openai.com/api/accounts/oauth/token";
const RESOURCE: &str = "https://api.openai.com/v1";
const CALLBACK_PORT: u16 = 1455;
const CALLBACK_PATH: &str = "/auth/callback";
const REDIRECT_URI: &str = "http://127.0.0.1:1455/auth/callback";
const DIRECT_TOKEN_SCOPE: &str = "chatgpt.tokens.use.direct";
const SCOPE: &str = "openid profile email offline_access resource.invoke chatgpt.tokens.use.direct";
const EXPIRY_MARGIN_MS: f64 = 3.0 * 60.0 * 1000.0;
const HEADERS: [(&str, &str); 2] =
    [("accept", "application/json"), ("content-type", "application/x-www-form-urlencoded")];

/// Sign in with ChatGPT.
#[derive(Clone, Debug, Default)]
pub struct OpenAIChatGPTOAuth {
    endpoints: Endpoints,
}

fn result_from_params(params: &[(String, String)], expected_state: &str) -> Result<(String, String), String> {
    let code = query_get(params, "code").filter(|c| !c.is_empty()).ok_or("Missing authorization code")?;
    let state = query_get(params, "state").filter(|s| !s.is_empty()).ok_or("Missing OAuth state")?;
    if state != expected_state {
        return Err("OAuth state mismatch".into());
    }
    let client_id = query_get(params, "client_id").map(str::trim).filter(|c| !c.is_empty());
    let client_id = client_id.ok_or("OpenAI OAuth registration callback did not contain an issued client ID")?;
    Ok((code.to_owned(), client_id.to_owned()))
}

fn result_from_manual(input: &str, expected_state: &str) -> Result<(String, String), String> {
    let url = SimpleUrl::parse(input).ok_or("Paste the full callback URL from the browser")?;
    if url.origin() != "http://127.0.0.1:1455" || url.path != CALLBACK_PATH {
        return Err(format!("The pasted callback URL must start with {REDIRECT_URI}"));
    }
    let params = query_pairs(&url.query);
    if let Some(error) = query_get(&params, "error") {
        return Err(format!("ChatGPT authorization failed: {error}"));
    }
    result_from_params(&params, expected_state)
}

fn credential_from(token: &Map<String, Value>, client_id: &str) -> Result<Credential, String> {
    let string = |f: &str| {
        str_of(token, f)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned)
            .ok_or_else(|| format!("OpenAI OAuth token response has invalid {f}"))
    };
    let (access, refresh, scope) = (string("access_token")?, string("refresh_token")?, string("scope")?);
    let expires_in = token.get("expires_in").and_then(Value::as_f64).filter(|e| e.is_finite() && *e > 0.0);
    let expires_in = expires_in.ok_or("OpenAI OAuth token response has invalid expires_in")?;
    let scopes: Vec<String> = scope.split_whitespace().map(str::to_owned).collect();
    if !scopes.iter().any(|s| s == DIRECT_TOKEN_SCOPE) {
        return Err(format!("OpenAI OAuth grant did not include {DIRECT_TOKEN_SCOPE}"));
    }
    Ok(credential(vec![
        ("access", Value::from(access)),
        ("refresh", Value::from(refresh)),
        ("expires", Value::from((now() + expires_in * 1000.0 - EXPIRY_MARGIN_MS).round() as i64)),
        ("clientId", Value::from(client_id)),
        ("scopes", Value::from(scopes)),
    ]))
}

impl OpenAIChatGPTOAuth {
    /// Requests go to `endpoints`.
    pub fn new(endpoints: Endpoints) -> Self {
        OpenAIChatGPTOAuth { endpoints }
    }

    async fn token(&self, fields: &[(&str, &str)], cancel: &CancellationToken) -> Result<Map<String, Value>, String> {
        let reply = send(
            &self.endpoints,
            "POST",
            TOKEN_URL,
            &HEADERS,
            Body::Form(form(fields)),
            Duration::from_secs(60),
            cancel,
        )
        .await
        .map_err(|e| e.to_string())?;
        if !reply.ok() {
            let body = if reply.text.is_empty() { reply.status_text.clone() } else { reply.text.clone() };
            return Err(format!("OpenAI OAuth token request failed ({}): {body}", reply.status));
        }
        reply.object().ok_or_else(|| "OpenAI OAuth token response must be an object".into())
    }

    async fn exchange(
        &self,
        code: &str,
        verifier: &str,
        client_id: &str,
        cancel: &CancellationToken,
    ) -> Result<Credential, String> {
        let fields = [
            ("grant_type", "authorization_code"),
            ("client_id", client_id),
            ("code", code),
            ("code_verifier", verifier),
            ("redirect_uri", REDIRECT_URI),
            ("resource", RESOURCE),
        ];
        let token = self.token(&fields, cancel).await?;
        if str_of(&token, "id_token").is_none_or(|t| t.trim().is_empty()) {
            return Err("OpenAI OAuth token response did not contain an ID token".into());
        }
        credential_from(&token, client_id)
    }
}

fn host_id(device_id: Option<&str>) -> Result<String, LoginError> {
    let valid = device_id.filter(|d| uuid::Uuid::parse_str(d).is_ok() && d.len() == 36);
    let id = valid.ok_or_else(|| {
        LoginError::Failed("Sign in with ChatGPT requires a device ID (UUID) for this installation".into())
    })?;
    Ok(format!("urn:uuid:{}", id.to_lowercase()))
}

#[async_trait]
impl OAuthFlow for OpenAIChatGPTOAuth {
    fn name(&self) -> &str {
        "OpenAI (ChatGPT subscription)"
    }

    async fn login(&self, interaction: &dyn AuthInteraction, options: &LoginOptions) -> Result<Credential, LoginError> {
        let host = host_id(options.device_id.as_deref())?;
        let pkce = Pkce::generate();
        let (state, nonce) = (base64url(&random_bytes(32)), base64url(&random_bytes(32)));
        let cancel = interaction.cancel();
        let complete: Complete<(String, String)> = {
            let state = state.clone();
            Arc::new(move |_code, params| {
                let result = result_from_params(&params, &state).map_err(LoginError::Failed);
                Box::pin(async move { result })
            })
        };
        let callback_options = CallbackOptions {
            provider_name: "ChatGPT".into(),
            host: callback_host(),
            port: CALLBACK_PORT,
            path: CALLBACK_PATH.into(),
            redirect_host: None,
            state: None,
            timeout: None,
        };
        let callback = CallbackServer::start(callback_options, complete, &cancel).await.map_err(|_| {
            LoginError::Failed(format!("Port {CALLBACK_PORT} is in use, probably by an unfinished login in another pi session or by the Codex CLI. Cancel that login and try again."))
        })?;
        let agent = options.agent_name.clone().unwrap_or_else(|| AGENT_NAME_HINT.into());
        let query = form(&[
            ("client_id", DYNAMIC_CLIENT_ID),
            ("agent_name_hint", &agent),
            ("ext_agent_host_id", &host),
            ("response_type", "code"),
            ("redirect_uri", REDIRECT_URI),
            ("resource", RESOURCE),
            ("scope", SCOPE),
            ("state", &state),
            ("code_challenge", &pkce.challenge),
            ("code_challenge_method", "S256"),
            ("nonce", &nonce),
        ]);
        interaction.notify(AuthEvent::AuthUrl {
            url: format!("{AUTHORIZE_URL}?{query}"),
            instructions: Some("Complete sign-in in your browser. If the callback does not complete, paste the final redirect URL here.".into()),
        });
        let prompt = interaction.prompt(AuthPrompt::ManualCode {
            message: "Complete login in your browser, or paste the final redirect URL here:".into(),
            placeholder: Some(REDIRECT_URI.into()),
        });
        let result = async {
            let (code, client_id) = tokio::select! {
                value = callback.wait() => value?.ok_or(LoginError::Cancelled)?,
                manual = prompt => result_from_manual(&manual?, &state).map_err(LoginError::Failed)?,
            };
            interaction.notify(AuthEvent::Progress { message: "Exchanging authorization code for tokens...".into() });
            self.exchange(&code, &pkce.verifier, &client_id, &cancel).await.map_err(LoginError::Failed)
        }
        .await;
        callback.close();
        if cancel.is_cancelled() { Err(LoginError::Cancelled) } else { result }
    }

    async fn refresh(&self, credential: &Credential) -> Result<Credential, String> {
        let client_id = credential.get("clientId").and_then(Value::as_str).filter(|c| !c.trim().is_empty());
        let client_id = client_id
            .ok_or("Stored OpenAI OAuth credential does not contain an issued client ID; reconnect ChatGPT")?;
        let fields = [
            ("grant_type", "refresh_token"),
            ("client_id", client_id),
            ("refresh_token", credential.refresh().unwrap_or_default()),
            ("resource", RESOURCE),
        ];
        let token = self.token(&fields, &CancellationToken::new()).await?;
        credential_from(&token, client_id)
    }

    fn to_auth(&self, credential: &Credential) -> OAuthRequestAuth {
        OAuthRequestAuth::key(credential.access().unwrap_or_default())
    }
}
