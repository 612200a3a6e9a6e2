//! OpenRouter: PKCE whose code is exchanged for a permanent API key (stored as `access`, with an
//! empty `refresh` and an expiry that never comes), the callback on a random path of a free port
//! raced against a pasted redirect URL.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::callback::{
    CallbackOptions, CallbackOrManual, CallbackServer, Complete, callback_host, wait_for_callback_or_manual_input,
};
use super::support::{Body, Pkce, SendError, SimpleUrl, credential, form, query_get, query_pairs, send, str_of};
use super::{Endpoints, LoginOptions, OAuthFlow, OAuthRequestAuth};
use crate::auth::Credential;
use crate::auth::login::{AuthEvent, AuthInteraction, LoginError};

const AUTHORIZE_URL: &str = "https://openrouter.ai/auth";
const TOKEN_URL: &str = "https://openrouter.ai/api/v1/auth/keys";
const LOGIN_TIMEOUT: Duration = Duration::from_secs(5 * 60);
/// JavaScript's `Number.MAX_SAFE_INTEGER`: the expiry of a key that does not expire.
pub const NEVER: i64 = 9_007_199_254_740_991;

/// OpenRouter's OAuth.
#[derive(Clone, Debug, Default)]
pub struct OpenRouterOAuth {
    endpoints: Endpoints,
}

fn parse_input(input: &str) -> Option<String> {
    let value = input.trim();
    if value.is_empty() {
        return None;
    }
    if let Some(url) = SimpleUrl::parse(value) {
        return query_get(&query_pairs(&url.query), "code").map(str::to_owned);
    }
    if value.contains("code=") {
        return query_get(&query_pairs(value), "code").map(str::to_owned);
    }
    Some(value.to_owned())
}

fn error_detail(body: &Map<String, Value>) -> Option<String> {
    for key in ["error_description", "message", "error"] {
        if let Some(s) = str_of(body, key) {
            return Some(s.to_owned());
        }
    }
    body.get("error").and_then(|e| e.get("message")).and_then(Value::as_str).map(str::to_owned)
}

async fn exchange(
    endpoints: &Endpoints,
    code: &str,
    verifier: &str,
    cancel: &CancellationToken,
) -> Result<Credential, LoginError> {
    if cancel.is_cancelled() {
        return Err(LoginError::Cancelled);
    }
    let headers = [("accept", "application/json"), ("content-type", "application/json")];
    let body = Body::Json(json!({"code": code, "code_verifier": verifier, "code_challenge_method": "S256"}));
    let reply = match send(endpoints, "POST", TOKEN_URL, &headers, body, Duration::from_secs(30), cancel).await {
        Ok(r) => r,
        Err(SendError::Failed(m)) if m.contains("timeout") => {
            return Err(LoginError::Failed("OpenRouter OAuth token exchange timed out".into()));
        }
        Err(e) => return Err(e.into()),
    };
    let body = reply.object();
    if body.is_none() && reply.ok() && serde_json::from_str::<Value>(&reply.text).is_err() {
        return Err(LoginError::Failed("OpenRouter OAuth returned invalid JSON".into()));
    }
    let body = body.unwrap_or_default();
    if !reply.ok() {
        let detail = error_detail(&body).map(|d| format!(": {d}")).unwrap_or_default();
        return Err(LoginError::Failed(format!(
            "OpenRouter OAuth key exchange failed (HTTP {}){detail}",
            reply.status
        )));
    }
    let Some(key) = str_of(&body, "key").filter(|k| !k.is_empty()) else {
        return Err(LoginError::Failed("OpenRouter OAuth response carries no \"key\"".into()));
    };
    Ok(credential(vec![("access", Value::from(key)), ("refresh", Value::from("")), ("expires", Value::from(NEVER))]))
}

impl OpenRouterOAuth {
    /// Requests go to `endpoints`.
    pub fn new(endpoints: Endpoints) -> Self {
        OpenRouterOAuth { endpoints }
    }
}

#[async_trait]
impl OAuthFlow for OpenRouterOAuth {
    fn name(&self) -> &str {
        "OpenRouter OAuth"
    }

    async fn login(
        &self,
        interaction: &dyn AuthInteraction,
        _options: &LoginOptions,
    ) -> Result<Credential, LoginError> {
        let pkce = Pkce::generate();
        let cancel = interaction.cancel();
        let options = CallbackOptions {
            provider_name: "OpenRouter".into(),
            host: callback_host(),
            port: 0,
            path: format!("/oauth/callback/{}", uuid::Uuid::new_v4()),
            redirect_host: None,
            state: None,
            timeout: Some(LOGIN_TIMEOUT),
        };
        let complete: Complete<Credential> = {
            let (endpoints, verifier, cancel) = (self.endpoints.clone(), pkce.verifier.clone(), cancel.clone());
            Arc::new(move |code, _| {
                let (endpoints, verifier, cancel) = (endpoints.clone(), verifier.clone(), cancel.clone());
                Box::pin(async move { exchange(&endpoints, &code, &verifier, &cancel).await })
            })
        };
        let callback = CallbackServer::start(options, complete, &cancel).await?;
        let result = async {
            let query = form(&[("callback_url", &callback.redirect_uri), ("code_challenge", &pkce.challenge), ("code_challenge_method", "S256")]);
            interaction.notify(AuthEvent::Progress { message: format!("Listening for OpenRouter OAuth callback on {}", callback.redirect_uri) });
            interaction.notify(AuthEvent::AuthUrl {
                url: format!("{AUTHORIZE_URL}?{query}"),
                instructions: Some("Complete sign-in in your browser. If the browser is on another machine, paste the final redirect URL here.".into()),
            });
            let got = wait_for_callback_or_manual_input(
                interaction,
                Some(&callback),
                "Complete sign-in in your browser, or paste the authorization code / redirect URL here:",
                Some(callback.redirect_uri.clone()),
            )
            .await?;
            match got {
                CallbackOrManual::Callback(credential) => Ok(credential),
                CallbackOrManual::Manual(input) => {
                    let code = parse_input(&input).ok_or_else(|| LoginError::Failed("Missing authorization code".into()))?;
                    interaction.notify(AuthEvent::Progress { message: "Exchanging authorization code for an API key...".into() });
                    exchange(&self.endpoints, &code, &pkce.verifier, &cancel).await
                }
            }
        }
        .await;
        callback.close();
        result
    }

    async fn refresh(&self, credential: &Credential) -> Result<Credential, String> {
        Ok(credential.clone())
    }

    fn to_auth(&self, credential: &Credential) -> OAuthRequestAuth {
        OAuthRequestAuth::key(credential.access().unwrap_or_default())
    }
}
