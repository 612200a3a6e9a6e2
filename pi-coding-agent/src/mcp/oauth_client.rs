//! OAuth on an MCP connection (pi-mcp's `createMcpAuthProvider` in `oauth/auth-provider.ts`):
//! requests carry the stored access token, refreshed first when it is about to expire; after a 401
//! the token is refreshed once and the request retried. When that is not possible the connection
//! needs sign-in; it never starts a browser flow on its own.
//!
//! [`OAuthHttpClient`] wraps rmcp's reqwest client as its `StreamableHttpClient`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use serde_json::Value;

use super::oauth::{Flow, OAuthSettings, epoch_ms, refresh_stored_tokens};
use super::oauth_http::{Challenge, parse_www_authenticate};
use super::oauth_store::ServerStore;

/// Access tokens this close to expiry are refreshed before they are sent.
const REFRESH_SKEW_MS: f64 = 30_000.0;

/// The auth state of one OAuth server's connections.
pub struct McpAuthProvider {
    server_url: String,
    store: ServerStore,
    settings: OAuthSettings,
    refreshing: tokio::sync::Mutex<()>,
    /// The server's last challenge.
    challenge: Mutex<Option<Challenge>>,
    needs_sign_in: AtomicBool,
}

impl std::fmt::Debug for McpAuthProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpAuthProvider").field("server_url", &self.server_url).finish()
    }
}

impl McpAuthProvider {
    /// The provider of the server at `server_url`.
    pub fn new(server_url: &str, store: ServerStore, settings: OAuthSettings) -> Self {
        McpAuthProvider {
            server_url: server_url.to_owned(),
            store,
            settings,
            refreshing: tokio::sync::Mutex::new(()),
            challenge: Mutex::new(None),
            needs_sign_in: AtomicBool::new(false),
        }
    }

    /// Whether a request failed because the user has to sign in.
    pub fn needs_sign_in(&self) -> bool {
        self.needs_sign_in.load(Ordering::Acquire)
    }

    /// Clears the sign-in mark before a new connection.
    pub fn reset(&self) {
        self.needs_sign_in.store(false, Ordering::Release);
    }

    /// Marks the server as needing sign-in (after the user signed out).
    pub fn mark_needs_sign_in(&self) {
        self.needs_sign_in.store(true, Ordering::Release);
    }

    /// Forgets the last challenge (a sign-in answered it).
    pub fn clear_challenge(&self) {
        *self.challenge.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// The server's last `WWW-Authenticate` challenge.
    pub fn challenge(&self) -> Option<Challenge> {
        self.challenge.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn stored_token(&self) -> (Option<String>, Option<f64>, bool) {
        let state = self.store.load().ok().flatten();
        let tokens = state.as_ref().and_then(|s| s.get("tokens"));
        let access = tokens.and_then(|t| t.get("access_token")).and_then(Value::as_str).map(str::to_owned);
        let refresh = tokens.and_then(|t| t.get("refresh_token")).is_some();
        let expires = state.as_ref().and_then(|s| s.get("tokensExpireAt")).and_then(Value::as_f64);
        (access, expires, refresh)
    }

    /// The access token to send, refreshed first when it is about to expire.
    pub async fn token(&self) -> Option<String> {
        let (token, expires, refreshable) = self.stored_token();
        let expired = expires.is_some_and(|at| at - REFRESH_SKEW_MS <= epoch_ms());
        if !expired || !refreshable {
            return token;
        }
        // A failed refresh sends the old token; the server's 401 decides.
        let _ = self.refresh(token.as_deref()).await;
        self.stored_token().0
    }

    /// Replaces `stale`; `Err` when the user has to sign in.
    async fn refresh(&self, stale: Option<&str>) -> Result<(), ()> {
        let _guard = self.refreshing.lock().await;
        let state = self.store.load().ok().flatten();
        let Some(state) = state else { return Err(()) };
        let tokens = state.get("tokens");
        let current = tokens.and_then(|t| t.get("access_token")).and_then(Value::as_str);
        if current != stale {
            return Ok(());
        }
        if tokens.and_then(|t| t.get("refresh_token")).is_none() {
            return Err(());
        }
        let rmu = self.challenge().and_then(|c| c.resource_metadata_url);
        match refresh_stored_tokens(&self.server_url, &self.settings, self.store.clone(), &state, None, rmu).await {
            Ok(Flow::Authorized) => Ok(()),
            _ => Err(()),
        }
    }

    /// After a 401 with `header` to a request that carried `sent`: `Ok` when a retry may succeed.
    async fn on_unauthorized(&self, sent: Option<&str>, header: &str) -> Result<(), ()> {
        let challenge = parse_www_authenticate(header);
        let insufficient = challenge.error.as_deref() == Some("insufficient_scope");
        *self.challenge.lock().unwrap_or_else(|e| e.into_inner()) = Some(challenge);
        if insufficient {
            return Err(());
        }
        self.refresh(sent).await
    }

    /// Runs `call` with the token; after a 401, refreshes once and retries.
    async fn call<T, E, F, Fut>(&self, call: F) -> Result<T, StreamableHttpError<E>>
    where
        E: std::error::Error + Send + Sync + 'static,
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<E>>>,
    {
        let token = self.token().await;
        let challenged = match call(token.clone()).await {
            Err(StreamableHttpError::AuthRequired(e)) => e,
            Err(StreamableHttpError::InsufficientScope(e)) => {
                let _ = self.on_unauthorized(token.as_deref(), &e.www_authenticate_header).await;
                self.needs_sign_in.store(true, Ordering::Release);
                return Err(StreamableHttpError::InsufficientScope(e));
            }
            other => return other,
        };
        if self.on_unauthorized(token.as_deref(), &challenged.www_authenticate_header).await.is_err() {
            self.needs_sign_in.store(true, Ordering::Release);
            return Err(StreamableHttpError::AuthRequired(challenged));
        }
        let result = call(self.stored_token().0).await;
        if matches!(result, Err(StreamableHttpError::AuthRequired(_) | StreamableHttpError::InsufficientScope(_))) {
            self.needs_sign_in.store(true, Ordering::Release);
        }
        result
    }
}

type Headers = HashMap<HeaderName, HeaderValue>;
type SseStream = BoxStream<'static, Result<sse_stream::Sse, SseError>>;
type HttpResult<T> = Result<T, StreamableHttpError<rmcp_reqwest::Error>>;

/// rmcp's reqwest client with pi's OAuth: tokens from the store, refresh and one retry after a 401.
#[derive(Clone)]
pub struct OAuthHttpClient {
    inner: rmcp_reqwest::Client,
    auth: Arc<McpAuthProvider>,
}

impl OAuthHttpClient {
    /// A client sending `auth`'s tokens.
    pub fn new(auth: Arc<McpAuthProvider>) -> Self {
        OAuthHttpClient { inner: rmcp_reqwest::Client::new(), auth }
    }
}

impl StreamableHttpClient for OAuthHttpClient {
    type Error = rmcp_reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth: Option<String>,
        headers: Headers,
    ) -> HttpResult<StreamableHttpPostResponse> {
        self.auth
            .call(|t| {
                StreamableHttpClient::post_message(
                    &self.inner,
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    t,
                    headers.clone(),
                )
            })
            .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth: Option<String>,
        headers: Headers,
        max: usize,
    ) -> HttpResult<StreamableHttpPostResponse> {
        self.auth
            .call(|t| {
                StreamableHttpClient::post_message_with_max_sse_event_size(
                    &self.inner,
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    t,
                    headers.clone(),
                    max,
                )
            })
            .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth: Option<String>,
        headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> HttpResult<StreamableHttpPostResponse> {
        self.auth
            .call(|t| {
                StreamableHttpClient::post_message_with_response_limits(
                    &self.inner,
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    t,
                    headers.clone(),
                    limits,
                )
            })
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth: Option<String>,
        headers: Headers,
    ) -> HttpResult<()> {
        self.auth
            .call(|t| {
                StreamableHttpClient::delete_session(&self.inner, uri.clone(), session_id.clone(), t, headers.clone())
            })
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth: Option<String>,
        headers: Headers,
    ) -> HttpResult<SseStream> {
        self.auth
            .call(|t| {
                StreamableHttpClient::get_stream(
                    &self.inner,
                    uri.clone(),
                    session_id.clone(),
                    last_event_id.clone(),
                    t,
                    headers.clone(),
                )
            })
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth: Option<String>,
        headers: Headers,
        max: usize,
    ) -> HttpResult<SseStream> {
        self.auth
            .call(|t| {
                StreamableHttpClient::get_stream_with_max_sse_event_size(
                    &self.inner,
                    uri.clone(),
                    session_id.clone(),
                    last_event_id.clone(),
                    t,
                    headers.clone(),
                    max,
                )
            })
            .await
    }
}
