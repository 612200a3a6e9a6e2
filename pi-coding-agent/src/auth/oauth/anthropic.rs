//! Anthropic (Claude Pro/Max): PKCE in the browser with the callback on port 53692 (any free port
//! when taken) or a pasted redirect URL, or the copy-code login for headless machines; JSON token
//! requests; tokens stored five minutes short of their expiry.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::callback::{
    CallbackOptions, CallbackOrManual, CallbackServer, callback_host, wait_for_callback_or_manual_input,
};
use super::support::{Body, JSON_HEADERS, Pkce, credential, expires_in, form, parse_authorization_input, send};
use super::{Endpoints, LoginOptions, OAuthFlow, OAuthRequestAuth};
use crate::auth::Credential;
use crate::auth::login::{AuthEvent, AuthInteraction, AuthOption, AuthPrompt, LoginError};

const CLIENT_ID: &str = "9d1c250a-e61b-44d9-88ed-5944d1962f5e";
const AUTHORIZE_URL: &str = "https://claude.ai/oauth/authorize";
const TOKEN_URL: &str = "https://platform.claude.com/v1/oauth/token";
const CALLBACK_PORT: u16 = 53692;
const CALLBACK_PATH: &str = "/callback";
const COPY_CODE_REDIRECT_URI: &str = "https://platform.claude.com/oauth/code/callback";
const SCOPES: &str =
    "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload";

/// Anthropic's OAuth.
#[derive(Clone, Debug, Default)]
pub struct AnthropicOAuth {
    endpoints: Endpoints,
    /// The preferred callback port (53692; tests use 0).
    pub callback_port: Option<u16>,
}

impl AnthropicOAuth {
    /// Requests go to `endpoints`.
    pub fn new(endpoints: Endpoints) -> Self {
        AnthropicOAuth { endpoints, callback_port: None }
    }

    async fn post(&self, body: Value, cancel: &CancellationToken) -> Result<String, String> {
        let reply =
            send(&self.endpoints, "POST", TOKEN_URL, &JSON_HEADERS, Body::Json(body), Duration::from_secs(30), cancel)
                .await
                .map_err(|e| format!("TypeError: {e}"))?;
        if !reply.ok() {
            return Err(format!(
                "Error: HTTP request failed. status={}; url={TOKEN_URL}; body={}",
                reply.status, reply.text
            ));
        }
        Ok(reply.text)
    }

    fn tokens(text: &str, what: &str) -> Result<Credential, String> {
        let data: Value = serde_json::from_str(text).map_err(|e| {
            format!("{what} returned invalid JSON. url={TOKEN_URL}; body={text}; details=SyntaxError: {e}")
        })?;
        let expires = data.get("expires_in").and_then(Value::as_f64).unwrap_or(f64::NAN);
        Ok(credential(vec![
            ("refresh", data.get("refresh_token").cloned().unwrap_or(Value::Null)),
            ("access", data.get("access_token").cloned().unwrap_or(Value::Null)),
            ("expires", expires_in(expires, 5.0 * 60.0 * 1000.0)),
        ]))
    }

    async fn exchange(
        &self,
        code: &str,
        state: &str,
        verifier: &str,
        redirect_uri: &str,
        cancel: &CancellationToken,
    ) -> Result<Credential, LoginError> {
        let body = json!({"grant_type": "authorization_code", "client_id": CLIENT_ID, "code": code, "state": state,
            "redirect_uri": redirect_uri, "code_verifier": verifier});
        let text = self.post(body, cancel).await.map_err(|details| {
            LoginError::Failed(format!("Token exchange request failed. url={TOKEN_URL}; redirect_uri={redirect_uri}; response_type=authorization_code; details={details}"))
        })?;
        Self::tokens(&text, "Token exchange").map_err(LoginError::Failed)
    }

    fn authorize_url(challenge: &str, verifier: &str, redirect_uri: &str) -> String {
        let query = form(&[
            ("code", "true"),
            ("client_id", CLIENT_ID),
            ("response_type", "code"),
            ("redirect_uri", redirect_uri),
            ("scope", SCOPES),
            ("code_challenge", challenge),
            ("code_challenge_method", "S256"),
            ("state", verifier),
        ]);
        format!("{AUTHORIZE_URL}?{query}")
    }

    async fn login_browser(&self, interaction: &dyn AuthInteraction) -> Result<Credential, LoginError> {
        let pkce = Pkce::generate();
        let cancel = interaction.cancel();
        let start = |port: u16| {
            let options = CallbackOptions {
                provider_name: "Anthropic".into(),
                host: callback_host(),
                port,
                path: CALLBACK_PATH.into(),
                redirect_host: Some("localhost".into()),
                state: Some(pkce.verifier.clone()),
                timeout: None,
            };
            let complete = super::callback::code_only();
            CallbackServer::start(options, complete, &cancel)
        };
        let port = self.callback_port.unwrap_or(CALLBACK_PORT);
        let callback = match start(port).await {
            Ok(server) => Some(server),
            Err(_) => start(0).await.ok(),
        };
        let redirect_uri = callback
            .as_ref()
            .map_or_else(|| format!("http://localhost:{CALLBACK_PORT}{CALLBACK_PATH}"), |c| c.redirect_uri.clone());
        let result = async {
            interaction.notify(AuthEvent::AuthUrl {
                url: Self::authorize_url(&pkce.challenge, &pkce.verifier, &redirect_uri),
                instructions: Some("Complete login in your browser. If the browser is on another machine, paste the final redirect URL here.".into()),
            });
            let got = wait_for_callback_or_manual_input(
                interaction,
                callback.as_ref(),
                "Complete login in your browser, or paste the authorization code / redirect URL here:",
                Some(redirect_uri.clone()),
            )
            .await?;
            let (code, state) = match got {
                CallbackOrManual::Callback(code) => (Some(code), pkce.verifier.clone()),
                CallbackOrManual::Manual(input) => {
                    let (code, state) = parse_authorization_input(&input);
                    if state.as_ref().is_some_and(|s| *s != pkce.verifier) {
                        return Err(LoginError::Failed("OAuth state mismatch".into()));
                    }
                    (code, state.unwrap_or_else(|| pkce.verifier.clone()))
                }
            };
            let code = code.filter(|c| !c.is_empty()).ok_or_else(|| LoginError::Failed("Missing authorization code".into()))?;
            interaction.notify(AuthEvent::Progress { message: "Exchanging authorization code for tokens...".into() });
            self.exchange(&code, &state, &pkce.verifier, &redirect_uri, &cancel).await
        }
        .await;
        if let Some(c) = &callback {
            c.close();
        }
        result
    }

    async fn login_copy_code(&self, interaction: &dyn AuthInteraction) -> Result<Credential, LoginError> {
        let pkce = Pkce::generate();
        interaction.notify(AuthEvent::AuthUrl {
            url: Self::authorize_url(&pkce.challenge, &pkce.verifier, COPY_CODE_REDIRECT_URI),
            instructions: Some(
                "Complete login in your browser, then copy the code Anthropic shows and paste it here.".into(),
            ),
        });
        let input = interaction
            .prompt(AuthPrompt::ManualCode {
                message: "Paste the code Anthropic shows after you sign in:".into(),
                placeholder: Some("code#state".into()),
            })
            .await?;
        let (code, state) = parse_authorization_input(&input);
        if state.as_ref().is_some_and(|s| *s != pkce.verifier) {
            return Err(LoginError::Failed("OAuth state mismatch".into()));
        }
        let code =
            code.filter(|c| !c.is_empty()).ok_or_else(|| LoginError::Failed("Missing authorization code".into()))?;
        interaction.notify(AuthEvent::Progress { message: "Exchanging authorization code for tokens...".into() });
        let state = state.unwrap_or_else(|| pkce.verifier.clone());
        self.exchange(&code, &state, &pkce.verifier, COPY_CODE_REDIRECT_URI, &interaction.cancel()).await
    }
}

#[async_trait]
impl OAuthFlow for AnthropicOAuth {
    fn name(&self) -> &str {
        "Anthropic (Claude Pro/Max)"
    }

    async fn login(
        &self,
        interaction: &dyn AuthInteraction,
        _options: &LoginOptions,
    ) -> Result<Credential, LoginError> {
        let option = |id: &str, label: &str| AuthOption { id: id.into(), label: label.into(), description: None };
        let method = interaction
            .prompt(AuthPrompt::Select {
                message: "Select Anthropic login method:".into(),
                options: vec![
                    option("browser", "Browser login (default)"),
                    option("copy_code", "Copy code login (headless)"),
                ],
            })
            .await?;
        match method.as_str() {
            "copy_code" => self.login_copy_code(interaction).await,
            "browser" => self.login_browser(interaction).await,
            other => Err(LoginError::Failed(format!("Unknown Anthropic login method: {other}"))),
        }
    }

    async fn refresh(&self, credential: &Credential) -> Result<Credential, String> {
        let token = credential.refresh().unwrap_or_default();
        let body = json!({"grant_type": "refresh_token", "client_id": CLIENT_ID, "refresh_token": token});
        let text = self
            .post(body, &CancellationToken::new())
            .await
            .map_err(|details| format!("Anthropic token refresh request failed. url={TOKEN_URL}; details={details}"))?;
        Self::tokens(&text, "Anthropic token refresh")
    }

    fn to_auth(&self, credential: &Credential) -> OAuthRequestAuth {
        OAuthRequestAuth::key(credential.access().unwrap_or_default())
    }
}
