//! Signing in to an OAuth MCP server (pi's `signInMcpServer` on pi-mcp's `oauth/sign-in.ts`,
//! `oauth/loopback.ts` and `oauth/callback.ts`): refresh the stored tokens when possible, else
//! prepare the browser step, show the authorization URL, and take the authorization response from
//! a loopback callback server on 127.0.0.1 (or a redirect URL the user pastes), then exchange the
//! code.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::Url;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::oneshot;

use super::oauth::{
    Flow, FlowOptions, OAuthSettings, Provider, authorize_mcp, loopback_settings, offers_client_metadata_document,
    refresh_stored_tokens, registered_redirect_urls, server_specific_path,
};
use super::oauth_http::Challenge;
use super::oauth_store::ServerStore;

/// The authorization response: `(code, state, iss)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthorizationResponse {
    /// The code.
    pub code: String,
    /// The state.
    pub state: String,
    /// The `iss` parameter.
    pub iss: Option<String>,
}

/// Why a sign-in ended without tokens.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SignInError {
    /// Cancelled or timed out (pi's `McpSignInCancelledError`).
    #[error("Sign-in cancelled")]
    Cancelled,
    /// Any other failure.
    #[error("{0}")]
    Failed(String),
}

type Pending = Option<(String, String, oneshot::Sender<Result<AuthorizationResponse, String>>)>;

/// The loopback callback server (pi-mcp's `OAuthCallbackServer`).
pub struct CallbackServer {
    /// Its redirect URI.
    pub redirect_url: String,
    pending: Arc<Mutex<Pending>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for CallbackServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// pi's callback page (`oauthSuccessHtml` / `oauthErrorHtml`).
fn page(ok: bool, message: &str, details: Option<&str>) -> String {
    let heading = if ok { "Authentication successful" } else { "Authentication failed" };
    let message = if ok { "Signed in to the MCP server. You may now close this page." } else { message };
    let details = details.map(|d| format!("<div class=\"details\">{}</div>", escape_html(d))).unwrap_or_default();
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n  <meta charset=\"utf-8\" />\n  <title>{heading}</title>\n</head>\n<body>\n  <main>\n    <h1>{heading}</h1>\n    <p>{}</p>\n    {details}\n  </main>\n</body>\n</html>",
        escape_html(message)
    )
}

async fn reply(stream: &mut tokio::net::TcpStream, status: u16, ok: bool, message: &str, details: Option<&str>) {
    let body = page(ok, message, details);
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        _ => "Bad Request",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: text/html; charset=utf-8\r\ncache-control: no-store\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(body.as_bytes()).await;
    let _ = stream.shutdown().await;
}

async fn handle(mut stream: tokio::net::TcpStream, base: Url, paths: Arc<Vec<String>>, pending: Arc<Mutex<Pending>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 2048];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 64 * 1024 {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let head = String::from_utf8_lossy(&buf);
    let target = head.split_whitespace().nth(1).unwrap_or("/");
    let Ok(url) = base.join(target) else {
        return reply(&mut stream, 400, false, "Bad request", None).await;
    };
    if !paths.iter().any(|p| p == url.path()) {
        return reply(&mut stream, 404, false, "Not found", None).await;
    }
    let param = |k: &str| url.query_pairs().find(|(n, _)| n == k).map(|(_, v)| v.into_owned());
    let state = param("state");
    let waiting = {
        let mut guard = pending.lock().unwrap_or_else(|e| e.into_inner());
        match (&state, guard.as_ref()) {
            (Some(s), Some((expected, _, _))) if s == expected => guard.take(),
            _ => None,
        }
    };
    let (Some(state), Some((_, path, tx))) = (state, waiting) else {
        return reply(&mut stream, 400, false, "Invalid or expired OAuth state", None).await;
    };
    if url.path() != path {
        let _ = tx.send(Err("The authorization response arrived on another redirect URI".into()));
        return reply(&mut stream, 400, false, "Unexpected redirect URI", None).await;
    }
    if let Some(error) = param("error") {
        let description = param("error_description").unwrap_or(error);
        let _ = tx.send(Err(description.clone()));
        return reply(&mut stream, 200, false, "Authorization failed. You may close this window.", Some(&description))
            .await;
    }
    let Some(code) = param("code") else {
        let _ = tx.send(Err("OAuth callback did not include an authorization code".into()));
        return reply(&mut stream, 400, false, "Missing authorization code", None).await;
    };
    let _ = tx.send(Ok(AuthorizationResponse { code, state, iss: param("iss") }));
    reply(&mut stream, 200, true, "", None).await;
}

impl CallbackServer {
    /// Listens on `host:port` (0: any free port) for `path` and `extra_paths`.
    pub async fn listen(
        host: &str,
        redirect_host: &str,
        port: u16,
        path: &str,
        extra_paths: Vec<String>,
    ) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind((host, port)).await?;
        let port = listener.local_addr()?.port();
        let host_part =
            if redirect_host.contains(':') { format!("[{redirect_host}]") } else { redirect_host.to_owned() };
        let redirect_url = format!("http://{host_part}:{port}{path}");
        let base = Url::parse(&redirect_url).map_err(std::io::Error::other)?;
        let mut paths = vec![path.to_owned()];
        paths.extend(extra_paths);
        let paths = Arc::new(paths);
        let pending: Arc<Mutex<Pending>> = Arc::new(Mutex::new(None));
        let shared = pending.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(handle(stream, base.clone(), paths.clone(), shared.clone()));
            }
        });
        Ok(CallbackServer { redirect_url, pending, task })
    }

    /// Waits for the response carrying `state` on `path`.
    pub fn wait_for(&self, state: &str, path: &str) -> oneshot::Receiver<Result<AuthorizationResponse, String>> {
        let (tx, rx) = oneshot::channel();
        *self.pending.lock().unwrap_or_else(|e| e.into_inner()) = Some((state.to_owned(), path.to_owned(), tx));
        rx
    }
}

/// The authorization response in a pasted redirect URL (pi-mcp's `responseFromRedirectUrl`).
pub fn response_from_redirect_url(
    input: &str,
    redirect_url: &str,
    state: &str,
) -> Result<AuthorizationResponse, String> {
    let url = Url::parse(input.trim()).map_err(|_| "Expected the full redirect URL from the browser address bar")?;
    let expected = Url::parse(redirect_url).map_err(|e| e.to_string())?;
    if url.origin() != expected.origin() || url.path() != expected.path() {
        return Err("The redirect URL does not match this sign-in's redirect URI".into());
    }
    let param = |k: &str| url.query_pairs().find(|(n, _)| n == k).map(|(_, v)| v.into_owned());
    if let Some(error) = param("error") {
        return Err(param("error_description").unwrap_or(error));
    }
    if param("state").as_deref() != Some(state) {
        return Err("The redirect URL belongs to a different sign-in".into());
    }
    let Some(code) = param("code") else {
        return Err("The redirect URL does not contain an authorization code".into());
    };
    Ok(AuthorizationResponse { code, state: state.to_owned(), iss: param("iss") })
}

/// One sign-in's inputs (pi's `signInMcpServer` options).
pub struct SignIn<'a> {
    /// The server URL.
    pub server_url: &'a str,
    /// Its store.
    pub store: ServerStore,
    /// Its `oauth` settings.
    pub settings: &'a OAuthSettings,
    /// The server's last challenge.
    pub challenge: Option<Challenge>,
}

/// Listens for the authorization response where the settings say (pi-mcp's `listenForLoopbackSignIn`).
async fn listen(s: &SignIn<'_>) -> Result<(CallbackServer, String), String> {
    let loopback = loopback_settings(s.settings)?;
    let stored = s.store.load().map_err(|e| e.0)?;
    let registered = registered_redirect_urls(stored.as_ref()).into_iter().next();
    let port = loopback.port.or_else(|| registered.and_then(|r| Url::parse(&r).ok()).and_then(|u| u.port()));
    let extra = if offers_client_metadata_document(s.settings, &loopback.url) {
        vec![server_specific_path(&loopback.path, s.server_url)]
    } else {
        Vec::new()
    };
    let open =
        |port| CallbackServer::listen(&loopback.host, &loopback.redirect_host, port, &loopback.path, extra.clone());
    let callback = match open(port.unwrap_or(0)).await {
        Ok(c) => c,
        Err(e) if loopback.port.is_some() || port.is_none() => return Err(e.to_string()),
        Err(_) => open(0).await.map_err(|e| e.to_string())?,
    };
    let redirect = loopback.fixed_redirect_url.clone().unwrap_or_else(|| callback.redirect_url.clone());
    Ok((callback, redirect))
}

/// The stored state for a browser step: without the last `state`, and without a client (and its
/// tokens) that cannot use `redirect_url`.
fn prepare_state(s: &SignIn<'_>, redirect_url: &str) -> Result<(), String> {
    let Some(mut next) = s.store.load().map_err(|e| e.0)? else { return Ok(()) };
    next.shift_remove("oauthState");
    let keep = s.settings.client_id.is_some()
        || if next.contains_key("clientInformation") {
            s.settings.client_registration.as_deref() != Some("cimd")
                && registered_redirect_urls(Some(&next)).iter().any(|u| u == redirect_url)
        } else {
            offers_client_metadata_document(s.settings, redirect_url)
        };
    if !keep {
        for key in ["clientInformation", "tokens", "tokensExpireAt"] {
            next.shift_remove(key);
        }
    }
    s.store.save(next).map_err(|e| e.0)
}

fn merge_scopes(scopes: &[Option<&str>]) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for scope in scopes.iter().flatten() {
        for s in scope.split_whitespace() {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    (!out.is_empty()).then(|| out.join(" "))
}

/// A prepared browser step: the URL to open, and what the code exchange needs.
struct Authorization {
    url: Url,
    redirect_url: String,
    state: String,
    scope: Option<String>,
}

async fn start(s: &SignIn<'_>, redirect_url: &str) -> Result<Option<Authorization>, String> {
    let step_up = s.challenge.as_ref().and_then(|c| c.error.as_deref()) == Some("insufficient_scope");
    let stored = s.store.load().map_err(|e| e.0)?;
    let refreshable = stored.as_ref().and_then(|st| st.get("tokens")).and_then(|t| t.get("refresh_token")).is_some();
    let cimd_replaces = s.settings.client_registration.as_deref() == Some("cimd")
        && stored.as_ref().is_some_and(|st| st.contains_key("clientInformation"))
        && s.settings.client_id.is_none();
    if !step_up
        && refreshable
        && !cimd_replaces
        && let Some(state) = &stored
    {
        let rmu = s.challenge.as_ref().and_then(|c| c.resource_metadata_url.clone());
        let refreshed =
            refresh_stored_tokens(s.server_url, s.settings, s.store.clone(), state, Some(redirect_url), rmu).await;
        if refreshed.map_err(|e| e.to_string())? == Flow::Authorized {
            return Ok(None);
        }
    }
    prepare_state(s, redirect_url)?;
    let provider = Provider::new(s.server_url, s.settings, s.store.clone(), redirect_url);
    let granted = s.store.load().map_err(|e| e.0)?;
    let granted = granted.as_ref().and_then(|st| st.get("tokens")).and_then(|t| t.get("scope")).and_then(Value::as_str);
    let challenged = s.challenge.as_ref().and_then(|c| c.scope.as_deref());
    let extra = if step_up && challenged.is_some() {
        merge_scopes(&[granted, challenged])
    } else {
        challenged.map(str::to_owned)
    };
    let scope = merge_scopes(&[s.settings.scope.as_deref(), extra.as_deref()]);
    let options = FlowOptions {
        resource_metadata_url: s.challenge.as_ref().and_then(|c| c.resource_metadata_url.clone()),
        scope,
        skip_refresh: true,
        ..Default::default()
    };
    authorize_mcp(&provider, &options).await.map_err(|e| e.to_string())?;
    let url = provider.authorization_url.lock().unwrap_or_else(|e| e.into_inner()).take();
    let Some(url) = url else { return Err("OAuth flow did not produce an authorization URL".into()) };
    let param = |k: &str| url.query_pairs().find(|(n, _)| n == k).map(|(_, v)| v.into_owned());
    Ok(Some(Authorization {
        redirect_url: param("redirect_uri").unwrap_or_else(|| redirect_url.to_owned()),
        state: provider.state().map_err(|e| e.to_string())?,
        scope: param("scope").filter(|s| !s.is_empty()),
        url,
    }))
}

async fn complete(
    s: &SignIn<'_>,
    redirect_url: &str,
    a: &Authorization,
    response: AuthorizationResponse,
) -> Result<(), String> {
    if response.state != a.state {
        return Err("The authorization response belongs to a different sign-in".into());
    }
    let stored = s.store.load().map_err(|e| e.0)?;
    if stored.as_ref().and_then(|st| st.get("oauthState")).and_then(Value::as_str) != Some(a.state.as_str()) {
        return Err("Another sign-in to this MCP server started since; sign in again".into());
    }
    let provider = Provider::new(s.server_url, s.settings, s.store.clone(), redirect_url);
    let options = FlowOptions {
        resource_metadata_url: s.challenge.as_ref().and_then(|c| c.resource_metadata_url.clone()),
        scope: a.scope.clone(),
        authorization_code: Some(response.code),
        authorization_redirect_url: Some(a.redirect_url.clone()),
        iss: response.iss,
        ..Default::default()
    };
    authorize_mcp(&provider, &options).await.map(|_| ()).map_err(|e| e.to_string())
}

/// A redirect URL the user pastes; `None` when there is no terminal to ask (or on EOF).
pub type PastePrompt = Box<dyn FnOnce() -> futures::future::BoxFuture<'static, Option<String>> + Send>;

/// Signs in (pi's `signInMcpServer`): refreshes, or shows the authorization URL with `show_url`
/// and waits at most `timeout` for the callback (or a pasted redirect URL), then exchanges the code.
pub async fn sign_in(
    s: SignIn<'_>,
    show_url: &(dyn Fn(&Url) + Send + Sync),
    paste: Option<PastePrompt>,
    timeout: Duration,
) -> Result<(), SignInError> {
    let work = async {
        let (callback, redirect_url) = listen(&s).await.map_err(SignInError::Failed)?;
        let Some(authorization) = start(&s, &redirect_url).await.map_err(SignInError::Failed)? else {
            return Ok(());
        };
        // The callback is armed before the URL is shown: a browser (or a test) that follows it at
        // once must not find the state unknown.
        let path = Url::parse(&authorization.redirect_url).map(|u| u.path().to_owned()).unwrap_or_default();
        let from_browser = callback.wait_for(&authorization.state, &path);
        show_url(&authorization.url);
        let from_user = async {
            match paste {
                Some(prompt) => match prompt().await {
                    Some(input) if !input.trim().is_empty() => {
                        response_from_redirect_url(&input, &authorization.redirect_url, &authorization.state)
                            .map_err(SignInError::Failed)
                    }
                    _ => Err(SignInError::Cancelled),
                },
                None => futures::future::pending().await,
            }
        };
        let response = tokio::select! {
            r = from_browser => match r {
                Ok(Ok(r)) => r,
                Ok(Err(e)) => return Err(SignInError::Failed(e)),
                Err(_) => return Err(SignInError::Cancelled),
            },
            r = from_user => r?,
        };
        drop(callback);
        complete(&s, &redirect_url, &authorization, response).await.map_err(SignInError::Failed)
    };
    match tokio::time::timeout(timeout, work).await {
        Ok(r) => r,
        Err(_) => Err(SignInError::Cancelled),
    }
}
