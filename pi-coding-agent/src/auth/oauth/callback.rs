//! The loopback redirect handler of browser sign-ins (pi-ai's `startOAuthCallbackServer`): one
//! server on the provider's host, port and path that checks the state, hands the code to the flow
//! (which may exchange it before the browser gets its page), and answers the browser with pi's
//! pages; and the race between that callback and a pasted code or redirect URL.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::super::login::{AuthInteraction, AuthPrompt, LoginError};
use super::page::{error_page, success_page};
use super::support::{SimpleUrl, query_get, query_pairs};

/// Turns the received code (and the callback's whole query) into the flow's result (an exchange,
/// or the code itself).
pub type Complete<T> = Arc<
    dyn Fn(String, Vec<(String, String)>) -> Pin<Box<dyn Future<Output = Result<T, LoginError>> + Send>> + Send + Sync,
>;

/// Where and how the server listens.
#[derive(Clone, Debug)]
pub struct CallbackOptions {
    /// The provider's name in pages and errors.
    pub provider_name: String,
    /// The address bound (`127.0.0.1`, or `PI_OAUTH_CALLBACK_HOST`).
    pub host: String,
    /// The port (0 for any).
    pub port: u16,
    /// The only path answered.
    pub path: String,
    /// The host named in the redirect URI, when not `host`.
    pub redirect_host: Option<String>,
    /// The `state` a callback must carry.
    pub state: Option<String>,
    /// Gives up after this long.
    pub timeout: Option<Duration>,
}

type Outcome<T> = Option<Result<Option<T>, String>>;

struct Shared<T> {
    claimed: bool,
    tx: watch::Sender<Outcome<T>>,
}

/// A running callback server.
pub struct CallbackServer<T: Clone + Send + Sync + 'static> {
    /// The redirect URI to send to the provider.
    pub redirect_uri: String,
    shared: Arc<Mutex<Shared<T>>>,
    rx: watch::Receiver<Outcome<T>>,
    stop: CancellationToken,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn finish<T>(shared: &Mutex<Shared<T>>, outcome: Result<Option<T>, String>) {
    let guard = lock(shared);
    guard.tx.send_if_modified(|slot| {
        if slot.is_some() {
            return false;
        }
        *slot = Some(outcome);
        true
    });
}

/// pi's `PI_OAUTH_CALLBACK_HOST`, else `127.0.0.1`.
pub fn callback_host() -> String {
    std::env::var("PI_OAUTH_CALLBACK_HOST").ok().filter(|h| !h.is_empty()).unwrap_or_else(|| "127.0.0.1".into())
}

impl<T: Clone + Send + Sync + 'static> CallbackServer<T> {
    /// Binds and starts serving; fails when the port cannot be bound.
    pub async fn start(
        options: CallbackOptions,
        complete: Complete<T>,
        cancel: &CancellationToken,
    ) -> Result<Self, LoginError> {
        if cancel.is_cancelled() {
            return Err(LoginError::Cancelled);
        }
        let listener = TcpListener::bind((options.host.as_str(), options.port))
            .await
            .map_err(|e| LoginError::Failed(e.to_string()))?;
        let port = listener.local_addr().map_err(|e| LoginError::Failed(e.to_string()))?.port();
        let (tx, rx) = watch::channel(None);
        let shared = Arc::new(Mutex::new(Shared { claimed: false, tx }));
        let stop = CancellationToken::new();
        let redirect_host = options.redirect_host.clone().unwrap_or_else(|| options.host.clone());
        let host = if redirect_host.contains(':') { format!("[{redirect_host}]") } else { redirect_host };
        let redirect_uri = format!("http://{host}:{port}{}", options.path);
        let options = Arc::new(options);
        {
            let (shared, stop, cancel, options) = (shared.clone(), stop.clone(), cancel.clone(), options.clone());
            tokio::spawn(async move {
                let timeout = async {
                    match options.timeout {
                        Some(t) => tokio::time::sleep(t).await,
                        None => std::future::pending().await,
                    }
                };
                tokio::pin!(timeout);
                loop {
                    tokio::select! {
                        _ = stop.cancelled() => return,
                        _ = cancel.cancelled() => { finish(&shared, Err("Login cancelled".into())); return }
                        _ = &mut timeout => {
                            finish(&shared, Err(format!("{} sign-in timed out", options.provider_name)));
                            return;
                        }
                        accepted = listener.accept() => {
                            let Ok((socket, _)) = accepted else { continue };
                            let (shared, options, complete) = (shared.clone(), options.clone(), complete.clone());
                            tokio::spawn(async move { handle(socket, &shared, &options, complete).await });
                        }
                    }
                }
            });
        }
        Ok(CallbackServer { redirect_uri, shared, rx, stop })
    }

    /// Waits for the callback: its value, `None` when [`CallbackServer::cancel`] stopped waiting
    /// before a callback arrived, or the failure.
    pub async fn wait(&self) -> Result<Option<T>, LoginError> {
        let mut rx = self.rx.clone();
        let outcome = rx
            .wait_for(Option::is_some)
            .await
            .map_err(|_| LoginError::Failed("OAuth callback server closed".into()))?;
        match outcome.clone() {
            Some(Ok(value)) => Ok(value),
            Some(Err(message)) if message == "Login cancelled" => Err(LoginError::Cancelled),
            Some(Err(message)) => Err(LoginError::Failed(message)),
            None => Ok(None),
        }
    }

    /// Stops waiting unless a callback is already being handled.
    pub fn cancel(&self) {
        let claimed = lock(&self.shared).claimed;
        if !claimed {
            finish(&self.shared, Ok(None));
        }
    }

    /// Closes the server.
    pub fn close(&self) {
        finish(&self.shared, Err("OAuth callback server closed".into()));
        self.stop.cancel();
    }
}

impl<T: Clone + Send + Sync + 'static> Drop for CallbackServer<T> {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn respond(socket: &mut tokio::net::TcpStream, status: u16, html: &str) {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        409 => "Conflict",
        _ => "Bad Gateway",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: text/html; charset=utf-8\r\ncache-control: no-store\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        html.len()
    );
    let _ = socket.write_all(head.as_bytes()).await;
    let _ = socket.write_all(html.as_bytes()).await;
    let _ = socket.shutdown().await;
}

async fn read_head(socket: &mut tokio::net::TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 64 * 1024 {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let text = String::from_utf8_lossy(&buf).into_owned();
    Some(text.lines().next()?.to_owned())
}

async fn handle<T: Clone + Send + Sync + 'static>(
    mut socket: tokio::net::TcpStream,
    shared: &Mutex<Shared<T>>,
    options: &CallbackOptions,
    complete: Complete<T>,
) {
    let Some(line) = read_head(&mut socket).await else { return };
    let mut parts = line.split(' ');
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let params = query_pairs(query);
    if method != "GET" || path != options.path {
        return respond(&mut socket, 404, &error_page("Callback route not found.", None)).await;
    }
    if let Some(state) = &options.state
        && query_get(&params, "state") != Some(state.as_str())
    {
        return respond(&mut socket, 400, &error_page("State mismatch.", None)).await;
    }
    let settled = { lock(shared).tx.borrow().is_some() };
    if lock(shared).claimed || settled {
        return respond(&mut socket, 409, &error_page("This sign-in has already been handled.", None)).await;
    }
    let name = &options.provider_name;
    if let Some(error) = query_get(&params, "error") {
        let description = query_get(&params, "error_description").unwrap_or(error).to_owned();
        respond(&mut socket, 400, &error_page(&format!("{name} authorization failed."), Some(&description))).await;
        return finish(shared, Err(format!("{name} authorization failed: {description}")));
    }
    let Some(code) = query_get(&params, "code").filter(|c| !c.is_empty()).map(str::to_owned) else {
        return respond(&mut socket, 400, &error_page("Missing authorization code.", None)).await;
    };
    lock(shared).claimed = true;
    match complete(code, params.clone()).await {
        Ok(value) => {
            let page = success_page(&format!("Signed in to {name}. You may now close this page."));
            respond(&mut socket, 200, &page).await;
            finish(shared, Ok(Some(value)));
        }
        Err(e) => {
            let message = e.to_string();
            respond(&mut socket, 502, &error_page(&format!("{name} sign-in failed."), Some(&message))).await;
            finish(shared, Err(message));
        }
    }
}

/// What [`wait_for_callback_or_manual_input`] got.
#[derive(Debug)]
pub enum CallbackOrManual<T> {
    /// The browser reached the server.
    Callback(T),
    /// The user pasted this.
    Manual(String),
}

/// Waits for the browser callback or for the user to paste the code or redirect URL (pi-ai's
/// `waitForCallbackOrManualInput`); without a server only the prompt is used.
pub async fn wait_for_callback_or_manual_input<T: Clone + Send + Sync + 'static>(
    interaction: &dyn AuthInteraction,
    callback: Option<&CallbackServer<T>>,
    message: &str,
    placeholder: Option<String>,
) -> Result<CallbackOrManual<T>, LoginError> {
    let prompt = interaction.prompt(AuthPrompt::ManualCode { message: message.to_owned(), placeholder });
    let Some(callback) = callback else {
        return prompt.await.map(CallbackOrManual::Manual);
    };
    tokio::pin!(prompt);
    tokio::select! {
        value = callback.wait() => match value? {
            Some(v) => Ok(CallbackOrManual::Callback(v)),
            None => prompt.await.map(CallbackOrManual::Manual),
        },
        manual = &mut prompt => {
            callback.cancel();
            let value = callback.wait().await;
            let input = manual?;
            match value? {
                Some(v) => Ok(CallbackOrManual::Callback(v)),
                None => Ok(CallbackOrManual::Manual(input)),
            }
        }
    }
}

/// Parses a pasted callback URL into its path and query pairs.
pub fn parse_callback_url(input: &str) -> Option<(SimpleUrl, Vec<(String, String)>)> {
    let url = SimpleUrl::parse(input)?;
    let q = query_pairs(&url.query);
    Some((url, q))
}

/// A [`Complete`] that hands back the code itself.
pub fn code_only() -> Complete<String> {
    Arc::new(|code, _| Box::pin(async move { Ok(code) }))
}
