//! The llama.cpp router's HTTP API as pi's `client.js` calls it: `GET /models`, `GET /props`,
//! `POST /models/load`, `POST /models/unload`, `POST /models` (download), and the `/models/sse`
//! event stream that reports load and download progress.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::router::{RouterModel, parse_download_progress, parse_load_progress};

/// A request's own time limit (pi's `AbortSignal.timeout(15_000)`).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// Why a router call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlamaError {
    /// The server answered with an error, or the answer made no sense; the text is pi's.
    #[error("{0}")]
    Message(String),
    /// The server could not be reached (pi: `Could not reach llama.cpp server at <url>: <cause>`).
    #[error("Could not reach llama.cpp server at {url}: {detail}")]
    Unreachable {
        /// The server.
        url: String,
        /// The network-level cause.
        detail: String,
    },
    /// The request ran past its time limit (pi's `TimeoutError`).
    #[error("The operation was aborted due to timeout")]
    Timeout,
    /// The caller cancelled.
    #[error("Cancelled")]
    Cancelled,
}

impl LlamaError {
    /// pi's `isConnectionError`: a timeout or a network failure (these are not shown as errors
    /// after an action; the retry screen shows them).
    pub fn is_connection_error(&self) -> bool {
        matches!(self, LlamaError::Timeout)
    }
}

/// One progress report of a load or download (pi's `{message, ratio?, detail?}`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    /// The line shown under the model.
    pub message: String,
    /// 0..=1, drawn as a bar.
    pub ratio: Option<f64>,
    /// A dim line under the bar (`12.0 MiB / 90.0 MiB`).
    pub detail: Option<String>,
}

/// Where progress goes.
pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// pi's `normalizeLlamaServerUrl`: http(s) only, no query or fragment, no trailing `/` or `/v1`.
pub fn normalize_server_url(value: &str) -> Result<String, LlamaError> {
    let value = value.trim();
    let Some((scheme, rest)) = value.split_once("://") else {
        return Err(LlamaError::Message("Invalid URL".into()));
    };
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(LlamaError::Message("Server URL must use http or https".into()));
    }
    let rest = rest.split(['#', '?']).next().unwrap_or("");
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    if host.is_empty() {
        return Err(LlamaError::Message("Invalid URL".into()));
    }
    let mut host = host.to_ascii_lowercase();
    let default_port = if scheme == "http" { ":80" } else { ":443" };
    if let Some(stripped) = host.strip_suffix(default_port) {
        host = stripped.to_owned();
    }
    let trimmed = path.trim_end_matches('/');
    let path = trimmed.strip_suffix("/v1").unwrap_or(trimmed);
    Ok(format!("{scheme}://{host}{path}"))
}

/// pi's `llamaInferenceUrl`: the OpenAI-compatible base (`<server>/v1`).
pub fn inference_url(server_url: &str) -> Result<String, LlamaError> {
    Ok(format!("{}/v1", normalize_server_url(server_url)?))
}

/// pi's `formatBytes`: `512 B`, `1.50 KiB`, `12.0 MiB`.
pub fn format_bytes(bytes: u64) -> String {
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let units = ["KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64 / 1024.0;
    let mut unit = units[0];
    for u in &units[1..] {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = u;
    }
    if value >= 10.0 { format!("{value:.1} {unit}") } else { format!("{value:.2} {unit}") }
}

/// pi's `errorMessage(payload, fallback)`: `payload.error.message` when it is a non-empty string.
pub(crate) fn error_message(payload: &Value, fallback: &str) -> String {
    payload
        .get("error")
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .map_or_else(|| fallback.to_owned(), str::to_owned)
}

/// Node's wording of a failed connection (`connect ECONNREFUSED 127.0.0.1:9`), else the error's
/// innermost message.
fn connection_detail(error: &reqwest::Error, url: &str) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            let host = url.split_once("://").map_or(url, |(_, r)| r).split('/').next().unwrap_or("");
            return match io.kind() {
                std::io::ErrorKind::ConnectionRefused => format!("connect ECONNREFUSED {host}"),
                std::io::ErrorKind::ConnectionReset => "read ECONNRESET".to_owned(),
                _ => io.to_string(),
            };
        }
        match e.source() {
            Some(next) => source = Some(next),
            None => return e.to_string(),
        }
    }
    error.to_string()
}

async fn sleep(duration: Duration, cancel: &CancellationToken) -> Result<(), LlamaError> {
    tokio::select! {
        _ = tokio::time::sleep(duration) => Ok(()),
        _ = cancel.cancelled() => Err(LlamaError::Cancelled),
    }
}

/// A client of one router (pi's `LlamaClient`).
#[derive(Clone, Debug)]
pub struct LlamaClient {
    server_url: String,
    api_key: Option<String>,
    http: reqwest::Client,
}

impl LlamaClient {
    /// A client of `server_url` (normalised), sending `api_key` as a bearer token when set.
    pub fn new(server_url: &str, api_key: Option<String>) -> Result<Self, LlamaError> {
        Ok(LlamaClient {
            server_url: normalize_server_url(server_url)?,
            api_key: api_key.filter(|k| !k.is_empty()),
            http: reqwest::Client::new(),
        })
    }

    /// The normalised server URL.
    pub fn server_url(&self) -> &str {
        &self.server_url
    }

    fn builder(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let mut request = self.http.request(method, format!("{}{path}", self.server_url));
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        request
    }

    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        cancel: &CancellationToken,
    ) -> Result<reqwest::Response, LlamaError> {
        tokio::select! {
            response = request.send() => response.map_err(|e| {
                if e.is_timeout() {
                    LlamaError::Timeout
                } else {
                    LlamaError::Unreachable { url: self.server_url.clone(), detail: connection_detail(&e, &self.server_url) }
                }
            }),
            _ = cancel.cancelled() => Err(LlamaError::Cancelled),
        }
    }

    async fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
        cancel: &CancellationToken,
    ) -> Result<Value, LlamaError> {
        let mut request = self.builder(method, path).timeout(REQUEST_TIMEOUT);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = self.send(request, cancel).await?;
        let status = response.status();
        let payload = tokio::select! {
            bytes = response.bytes() => match bytes {
                Ok(b) => serde_json::from_slice::<Value>(&b).unwrap_or(Value::Null),
                Err(e) if e.is_timeout() => return Err(LlamaError::Timeout),
                Err(_) => Value::Null,
            },
            _ = cancel.cancelled() => return Err(LlamaError::Cancelled),
        };
        if !status.is_success() {
            return Err(LlamaError::Message(error_message(
                &payload,
                &format!("llama.cpp returned HTTP {}", status.as_u16()),
            )));
        }
        Ok(payload)
    }

    /// `GET /models` (`?reload=1` with `reload`): the router's models.
    pub async fn list(&self, reload: bool, cancel: &CancellationToken) -> Result<Vec<RouterModel>, LlamaError> {
        let path = if reload { "/models?reload=1" } else { "/models" };
        let payload = self.request(reqwest::Method::GET, path, None, cancel).await?;
        let Some(data) = payload.get("data").and_then(Value::as_array) else {
            return Err(LlamaError::Message("llama.cpp returned an invalid model catalog".into()));
        };
        data.iter()
            .map(|v| {
                RouterModel::parse(v)
                    .ok_or_else(|| LlamaError::Message("Server is not running in llama.cpp router mode".into()))
            })
            .collect()
    }

    /// `GET /props` (with `?model=<id>&autoload=false` for one model): `(models_autoload, chat_template)`.
    pub async fn props(
        &self,
        model: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<(Option<bool>, Option<String>), LlamaError> {
        let path = match model {
            Some(m) => format!("/props?model={}&autoload=false", form_encode(m)),
            None => "/props".to_owned(),
        };
        let payload = self.request(reqwest::Method::GET, &path, None, cancel).await?;
        Ok((
            payload.get("models_autoload").and_then(Value::as_bool),
            payload.get("chat_template").and_then(Value::as_str).map(str::to_owned),
        ))
    }

    /// `POST /models/load`.
    pub async fn load(&self, model: &str, cancel: &CancellationToken) -> Result<(), LlamaError> {
        self.request(reqwest::Method::POST, "/models/load", Some(json!({"model": model})), cancel).await.map(|_| ())
    }

    /// `POST /models/unload`.
    pub async fn unload(&self, model: &str, cancel: &CancellationToken) -> Result<(), LlamaError> {
        self.request(reqwest::Method::POST, "/models/unload", Some(json!({"model": model})), cancel).await.map(|_| ())
    }

    /// `POST /models`: starts a download of `owner/repository[:quant]`.
    pub async fn download(&self, model: &str, cancel: &CancellationToken) -> Result<(), LlamaError> {
        self.request(reqwest::Method::POST, "/models", Some(json!({"model": model})), cancel).await.map(|_| ())
    }

    /// Unloads and polls every 100 ms until the model is unloaded or gone.
    pub async fn unload_and_wait(&self, model: &str, cancel: &CancellationToken) -> Result<(), LlamaError> {
        self.unload(model, cancel).await?;
        loop {
            let models = self.list(false, cancel).await?;
            match models.iter().find(|m| m.id == model) {
                None => return Ok(()),
                Some(m) if m.status == "unloaded" => return Ok(()),
                Some(_) => sleep(Duration::from_millis(100), cancel).await?,
            }
        }
    }

    /// Reads `/models/sse` until it ends or `cancel` fires, handing each `{model, event, data}`
    /// record to `on_event`; malformed frames are skipped.
    pub async fn watch(
        &self,
        on_event: impl Fn(&str, &str, &Value),
        cancel: &CancellationToken,
    ) -> Result<(), LlamaError> {
        let response = self.send(self.builder(reqwest::Method::GET, "/models/sse"), cancel).await?;
        if !response.status().is_success() {
            return Err(LlamaError::Message(format!("llama.cpp SSE returned HTTP {}", response.status().as_u16())));
        }
        let mut stream = response.bytes_stream();
        let mut buffer = String::new();
        loop {
            let chunk = tokio::select! {
                c = stream.next() => c,
                _ = cancel.cancelled() => return Ok(()),
            };
            let Some(Ok(chunk)) = chunk else { return Ok(()) };
            buffer.push_str(&String::from_utf8_lossy(&chunk).replace("\r\n", "\n"));
            while let Some(boundary) = buffer.find("\n\n") {
                let frame: String = buffer.drain(..boundary + 2).collect();
                let data: Vec<&str> =
                    frame.split('\n').filter_map(|l| l.strip_prefix("data:")).map(str::trim_start).collect();
                if data.is_empty() {
                    continue;
                }
                if let Ok(event) = serde_json::from_str::<Value>(&data.join("\n"))
                    && let (Some(model), Some(kind)) =
                        (event.get("model").and_then(Value::as_str), event.get("event").and_then(Value::as_str))
                {
                    on_event(model, kind, event.get("data").unwrap_or(&Value::Null));
                }
            }
        }
    }

    /// Loads `model` and waits until the router reports it loaded (pi's `loadAndWait`): SSE
    /// progress is forwarded, the catalog polled every 250 ms.
    pub async fn load_and_wait(
        &self,
        model: &str,
        on_progress: ProgressFn,
        cancel: &CancellationToken,
    ) -> Result<RouterModel, LlamaError> {
        #[derive(Default)]
        struct Seen {
            loaded: bool,
            error: Option<String>,
        }
        let seen = Arc::new(Mutex::new(Seen::default()));
        let watcher = cancel.child_token();
        let _stop = watcher.clone().drop_guard();
        {
            let (client, seen, progress, target, watcher) =
                (self.clone(), seen.clone(), on_progress.clone(), model.to_owned(), watcher.clone());
            tokio::spawn(async move {
                let _ = client
                    .watch(
                        |m, kind, data| {
                            if m != target || (kind != "model_status" && kind != "status_change") {
                                return;
                            }
                            let mut s = seen.lock().unwrap_or_else(|e| e.into_inner());
                            match data.get("status").and_then(Value::as_str) {
                                Some("loaded") => s.loaded = true,
                                Some("unloaded") => s.error = Some("Model failed to load".into()),
                                _ => {}
                            }
                            drop(s);
                            if let Some(p) = parse_load_progress(data) {
                                progress(p);
                            }
                        },
                        &watcher,
                    )
                    .await;
            });
        }
        self.load(model, cancel).await?;
        on_progress(Progress { message: "Loading model".into(), ..Default::default() });
        loop {
            if cancel.is_cancelled() {
                return Err(LlamaError::Cancelled);
            }
            let models = self.list(false, cancel).await?;
            let entry = models.into_iter().find(|m| m.id == model);
            let (loaded, error) = {
                let s = seen.lock().unwrap_or_else(|e| e.into_inner());
                (s.loaded, s.error.clone())
            };
            if let Some(entry) = &entry
                && entry.status == "loaded"
            {
                return Ok(entry.clone());
            }
            if loaded && entry.is_none() {
                return Ok(RouterModel::new(model, "loaded"));
            }
            if entry.as_ref().is_some_and(|e| e.failed()) || error.is_some() {
                let text = match entry.as_ref().and_then(RouterModel::exit_code) {
                    Some(code) => format!("Model exited with code {code}"),
                    None => error.unwrap_or_else(|| "Model failed to load".into()),
                };
                return Err(LlamaError::Message(text));
            }
            sleep(Duration::from_millis(250), cancel).await?;
        }
    }

    /// Starts a download and waits for it (pi's `downloadAndWait`); answers the reloaded catalog.
    pub async fn download_and_wait(
        &self,
        model: &str,
        on_progress: ProgressFn,
        cancel: &CancellationToken,
    ) -> Result<Vec<RouterModel>, LlamaError> {
        #[derive(Default)]
        struct Seen {
            finished: bool,
            failure: Option<String>,
            downloading: bool,
        }
        let seen = Arc::new(Mutex::new(Seen::default()));
        let watcher = cancel.child_token();
        let _stop = watcher.clone().drop_guard();
        {
            let (client, seen, progress, target, watcher) =
                (self.clone(), seen.clone(), on_progress.clone(), model.to_owned(), watcher.clone());
            tokio::spawn(async move {
                let _ = client
                    .watch(
                        |m, kind, data| {
                            if m != target {
                                return;
                            }
                            let mut s = seen.lock().unwrap_or_else(|e| e.into_inner());
                            match kind {
                                "download_finished" => s.finished = true,
                                "download_failed" => s.failure = Some(error_message(data, "Download failed")),
                                "download_progress" => {
                                    s.downloading = true;
                                    drop(s);
                                    if let Some(p) = parse_download_progress(data) {
                                        progress(p);
                                    }
                                }
                                _ => {}
                            }
                        },
                        &watcher,
                    )
                    .await;
            });
        }
        self.download(model, cancel).await?;
        on_progress(Progress { message: "Downloading model".into(), ..Default::default() });
        let mut polls = 0;
        loop {
            if cancel.is_cancelled() {
                return Err(LlamaError::Cancelled);
            }
            if let Some(failure) = seen.lock().unwrap_or_else(|e| e.into_inner()).failure.clone() {
                return Err(LlamaError::Message(failure));
            }
            let models = self.list(false, cancel).await?;
            polls += 1;
            let entry = models.iter().find(|m| m.id == model);
            let (finished, downloading) = {
                let s = seen.lock().unwrap_or_else(|e| e.into_inner());
                (s.finished, s.downloading)
            };
            if let Some(entry) = entry.filter(|e| e.status == "downloading") {
                seen.lock().unwrap_or_else(|e| e.into_inner()).downloading = true;
                if let Some(p) = entry.raw_status().get("progress").and_then(parse_download_progress) {
                    on_progress(p);
                }
            } else if finished || (entry.is_some() && (downloading || polls >= 2)) {
                return self.list(true, cancel).await;
            }
            sleep(Duration::from_millis(500), cancel).await?;
        }
    }
}

/// `application/x-www-form-urlencoded` encoding of one value (pi's `URLSearchParams`).
pub(crate) fn form_encode(value: &str) -> String {
    let mut out = String::new();
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_urls_are_normalised_as_pi_does() {
        assert_eq!(normalize_server_url(" http://127.0.0.1:9931/v1/ ").unwrap(), "http://127.0.0.1:9931");
        assert_eq!(normalize_server_url("https://Host:443/x/v1?q=1#f").unwrap(), "https://host/x");
        assert_eq!(normalize_server_url("http://h/").unwrap(), "http://h");
        assert_eq!(normalize_server_url("ftp://h").unwrap_err().to_string(), "Server URL must use http or https");
        assert_eq!(inference_url("http://h:1").unwrap(), "http://h:1/v1");
    }

    #[test]
    fn bytes_are_formatted_as_pi_does() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(1536), "1.50 KiB");
        assert_eq!(format_bytes(12 * 1024 * 1024), "12.0 MiB");
        assert_eq!(format_bytes(3 * 1024 * 1024 * 1024), "3.00 GiB");
    }

    #[test]
    fn values_are_form_encoded() {
        assert_eq!(form_encode("ggml-org/a b:Q4_K_M"), "ggml-org%2Fa+b%3AQ4_K_M");
    }
}
