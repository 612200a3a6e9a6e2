//! Sending a request: status check, retries, idle timeout and cancellation.

use std::error::Error as StdError;
use std::hash::{BuildHasher, Hasher};
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;

use super::{ErrorStyle, HeaderMap, HttpError, client_with_connect_timeout};
use crate::options::StreamOptions;

/// pi's default cap on a server-requested retry delay.
const DEFAULT_MAX_RETRY_DELAY: Duration = Duration::from_secs(60);

/// One POST request with a JSON body.
#[derive(Clone, Debug)]
pub struct HttpRequest {
    /// The full URL.
    pub url: String,
    /// Headers, already merged (defaults, model headers, option headers).
    pub headers: HeaderMap,
    /// The serialized JSON body, shared (not copied) by every attempt to send it. Empty when
    /// [`source`](Self::source) writes the body.
    pub body: Bytes,
    /// A large body written into the connection as it is produced (with its `Content-Length`),
    /// instead of [`body`](Self::body); [`HttpRequest::materialize`] turns it into `body`.
    pub source: Option<BodySource>,
}

impl HttpRequest {
    /// A request with a body held whole.
    pub fn new(url: String, headers: HeaderMap, body: Bytes) -> Self {
        HttpRequest { url, headers, body, source: None }
    }

    /// Writes a [`source`](Self::source) body whole into [`body`](Self::body) (for a payload hook
    /// that must see it, or a transport that needs the bytes); a whole body is left as it is.
    pub fn materialize(&mut self) -> Result<(), String> {
        if let Some(source) = self.source.take() {
            self.body = source.materialize()?;
        }
        Ok(())
    }
}

/// What writes a body: JSON into the buffer, calling the flush callback where the text may be cut.
type BodyWrite = dyn Fn(&mut Vec<u8>, &mut dyn FnMut(&mut Vec<u8>)) -> Result<(), String> + Send + Sync;

/// A request body written on demand, each time it is sent, in pieces handed to the connection as
/// they are produced (so it is never held whole), with its length known beforehand.
#[derive(Clone)]
pub struct BodySource {
    len: u64,
    write: std::sync::Arc<BodyWrite>,
}

impl std::fmt::Debug for BodySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BodySource").field("len", &self.len).finish_non_exhaustive()
    }
}

impl BodySource {
    /// A body of `len` bytes that `write` writes (the same bytes every time).
    pub fn new(
        len: u64,
        write: impl Fn(&mut Vec<u8>, &mut dyn FnMut(&mut Vec<u8>)) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        BodySource { len, write: std::sync::Arc::new(write) }
    }

    /// The body's length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the body is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The whole body.
    pub fn materialize(&self) -> Result<Bytes, String> {
        let mut out = Vec::with_capacity(usize::try_from(self.len).unwrap_or(0));
        (self.write)(&mut out, &mut |_| {})?;
        self.check_len(out.len() as u64)?;
        Ok(out.into())
    }

    fn check_len(&self, written: u64) -> Result<(), String> {
        if written == self.len {
            return Ok(());
        }
        Err(format!("Could not serialize the request: its body changed length ({written} bytes, not {})", self.len))
    }

    /// The body as a stream of pieces, written on a blocking thread at most two pieces ahead of
    /// the connection. Dropping the stream stops handing pieces over.
    fn stream(&self) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(2);
        let source = self.clone();
        tokio::task::spawn_blocking(move || source.produce(&tx));
        futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|item| (item, rx)) })
    }

    fn produce(&self, tx: &tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>) {
        let chunk = crate::http::body::STREAMED_BODY_CHUNK;
        let mut written = 0u64;
        let mut closed = false;
        let mut hand_over = |buf: &mut Vec<u8>, at_least: usize| {
            if buf.len() < at_least.max(1) {
                return;
            }
            written += buf.len() as u64;
            let piece = std::mem::replace(buf, Vec::with_capacity(chunk + chunk / 8));
            // A closed channel: the request was dropped; the rest is written and discarded.
            closed = closed || tx.blocking_send(Ok(Bytes::from(piece))).is_err();
        };
        let mut out = Vec::with_capacity(chunk + chunk / 8);
        let result = (self.write)(&mut out, &mut |buf| hand_over(buf, chunk));
        if result.is_ok() {
            hand_over(&mut out, 1);
        }
        if let Err(error) = result.and_then(|()| self.check_len(written)) {
            let _ = tx.blocking_send(Err(std::io::Error::other(error)));
        }
    }
}

type ByteStream = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

/// The body of a successful response, read chunk by chunk.
///
/// Every read waits at most the idle timeout and stops at once when the cancellation token fires.
pub struct ResponseBody {
    inner: ByteStream,
    idle: Option<Duration>,
    cancel: CancellationToken,
}

impl std::fmt::Debug for ResponseBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseBody").field("idle", &self.idle).finish_non_exhaustive()
    }
}

impl ResponseBody {
    /// A body over any byte stream (for tests and alternative transports).
    pub fn from_stream(
        inner: impl Stream<Item = reqwest::Result<Bytes>> + Send + 'static,
        idle: Option<Duration>,
        cancel: CancellationToken,
    ) -> Self {
        ResponseBody { inner: Box::pin(inner), idle, cancel }
    }

    /// The next chunk, `Ok(None)` at the end of the body.
    pub async fn next_chunk(&mut self) -> Result<Option<Bytes>, HttpError> {
        let read = async {
            match self.idle {
                Some(idle) => tokio::time::timeout(idle, self.inner.next()).await.map_err(|_| HttpError::BodyTimeout),
                None => Ok(self.inner.next().await),
            }
        };
        let result = tokio::select! {
            biased;
            _ = self.cancel.cancelled() => return Err(HttpError::Aborted),
            r = read => r?,
        };
        match result {
            None => Ok(None),
            Some(Ok(bytes)) => Ok(Some(bytes)),
            Some(Err(error)) => Err(HttpError::Body { cause: deepest_cause(&error) }),
        }
    }
}

/// The response of [`send_with_retries`]: status, headers (lower-case names) and body.
pub type SentResponse = (u16, Vec<(String, String)>, ResponseBody);

/// Sends `request`, retrying as pi's `retryProviderRequest` does.
///
/// - A 2xx answer returns its body unread. Any other status reads the whole body into
///   [`HttpError::Status`].
/// - Retries (`options.max_retries`, default 0) cover 408, 409, 429, 5xx and connection
///   failures, or exactly what an `x-should-retry: true|false` header says. The delay is
///   `retry-after-ms` / `retry-after` when given (over `max_retry_delay` fails at once), else
///   `min(0.5·2^i, 8)` s minus up to 25 % jitter.
/// - Retries never happen once a 2xx answer arrived: the body is the caller's.
/// - `options.timeout` (default [`DEFAULT_IDLE_TIMEOUT`](crate::options::DEFAULT_IDLE_TIMEOUT))
///   bounds the wait for the response headers (and, through [`ResponseBody`], each later read);
///   `options.connect_timeout` bounds connecting. No request waits forever. The cancellation token
///   aborts everything, also the backoff sleep.
pub async fn send_with_retries(
    request: &HttpRequest,
    options: &StreamOptions,
    style: &ErrorStyle,
) -> Result<SentResponse, HttpError> {
    let cancel = options.cancel_token();
    let max_retries = options.max_retries;
    let mut retries_left = max_retries;
    let mut stale_retry_used = false;
    loop {
        if cancel.is_cancelled() {
            return Err(HttpError::Aborted);
        }
        let attempt = send_once(request, options, &cancel).await;
        let idle = Some(options.idle_timeout());
        let (error, headers) = match attempt {
            Ok((status, headers, response)) if (200..300).contains(&status) => {
                let body = ResponseBody::from_stream(response.bytes_stream(), idle, cancel.clone());
                return Ok((status, headers, body));
            }
            Ok((status, headers, response)) => {
                let body = read_error_body(response, idle, &cancel).await?;
                (HttpError::Status { status, body }, headers)
            }
            // A pooled keep-alive connection the server had already closed: the request never
            // reached it, so send it once more on a fresh connection (not counted as a retry).
            Err(HttpError::Connection { cause }) if !stale_retry_used && is_stale_connection(&cause) => {
                stale_retry_used = true;
                tracing::debug!(%cause, "stale pooled connection; resending");
                continue;
            }
            Err(error) => (error, Vec::new()),
        };
        if cancel.is_cancelled() || matches!(error, HttpError::Aborted) {
            return Err(HttpError::Aborted);
        }
        let headers = if style.retries_read_headers() { headers } else { Vec::new() };
        let retryable = match &error {
            HttpError::Status { status, body } => style.status_retryable(*status, body),
            _ => None,
        };
        if retries_left == 0 || !retryable.unwrap_or_else(|| is_retryable(&error, &headers)) {
            report_error_response(&error, headers, options);
            return Err(error);
        }
        let retry_index = max_retries - retries_left;
        retries_left -= 1;
        let delay = match retry_delay(&error, &headers, retry_index, options.max_retry_delay, style) {
            Ok(delay) => delay,
            Err(too_long) => {
                report_error_response(&error, headers, options);
                return Err(too_long);
            }
        };
        tracing::debug!(?delay, retry_index, url = %request.url, "retrying provider request");
        tokio::select! {
            _ = cancel.cancelled() => return Err(HttpError::Aborted),
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

/// Tells `options.on_error_response` about the failed response a request ends with.
fn report_error_response(error: &HttpError, headers: Vec<(String, String)>, options: &StreamOptions) {
    if let (HttpError::Status { status, .. }, Some(hook)) = (error, &options.on_error_response) {
        hook(&crate::options::ProviderResponse { status: *status, headers });
    }
}

async fn send_once(
    request: &HttpRequest,
    options: &StreamOptions,
    cancel: &CancellationToken,
) -> Result<(u16, Vec<(String, String)>, reqwest::Response), HttpError> {
    let timeout = Some(options.idle_timeout());
    let client = client_with_connect_timeout(options.effective_connect_timeout());
    let mut builder = client.post(&request.url);
    for (name, value) in request.headers.iter() {
        builder = builder.header(name, value);
    }
    builder = match &request.source {
        Some(source) => builder
            .header(reqwest::header::CONTENT_LENGTH, source.len())
            .body(reqwest::Body::wrap_stream(source.stream())),
        None => builder.body(reqwest::Body::from(request.body.clone())),
    };
    let send = builder.send();
    let result = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(HttpError::Aborted),
        r = async {
            match timeout {
                Some(t) => tokio::time::timeout(t, send).await.map_err(|_| HttpError::Timeout),
                None => Ok(send.await),
            }
        } => r?,
    };
    let response = result.map_err(|error| {
        if error.is_timeout() { HttpError::Timeout } else { HttpError::Connection { cause: deepest_cause(&error) } }
    })?;
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_ascii_lowercase(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    Ok((status, headers, response))
}

async fn read_error_body(
    response: reqwest::Response,
    timeout: Option<Duration>,
    cancel: &CancellationToken,
) -> Result<String, HttpError> {
    let mut body = ResponseBody::from_stream(response.bytes_stream(), timeout, cancel.clone());
    let mut bytes = Vec::new();
    loop {
        match body.next_chunk().await {
            Ok(Some(chunk)) => bytes.extend_from_slice(&chunk),
            Ok(None) => break,
            Err(HttpError::Aborted) => return Err(HttpError::Aborted),
            // The SDKs keep what they could read of an error body.
            Err(_) => break,
        }
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn is_stale_connection(cause: &str) -> bool {
    cause.contains("connection closed before message completed")
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

fn is_retryable(error: &HttpError, headers: &[(String, String)]) -> bool {
    match header(headers, "x-should-retry") {
        Some("true") => return true,
        Some("false") => return false,
        _ => {}
    }
    match error {
        HttpError::Status { status, .. } => matches!(status, 408 | 409 | 429) || *status >= 500,
        HttpError::Connection { .. } | HttpError::Timeout => true,
        HttpError::Body { .. } | HttpError::BodyTimeout | HttpError::Aborted | HttpError::RetryDelayTooLong(_) => false,
    }
}

/// The delay a server asked for: `retry-after-ms` (milliseconds) or `retry-after` (seconds), as
/// the SDKs read them (the leading number of the value); `None` when neither is given.
/// `headers` have lower-case names, as [`ProviderResponse`](crate::options::ProviderResponse) holds them.
///
/// ```
/// use std::time::Duration;
/// let h = vec![("retry-after".to_owned(), "2".to_owned())];
/// assert_eq!(pi_ai::http::server_retry_delay(&h), Some(Duration::from_secs(2)));
/// ```
pub fn server_retry_delay(headers: &[(String, String)]) -> Option<Duration> {
    server_delay_ms(headers).map(|ms| Duration::from_secs_f64(ms.max(0.0) / 1000.0))
}

fn server_delay_ms(headers: &[(String, String)]) -> Option<f64> {
    header(headers, "retry-after-ms")
        .and_then(parse_js_float)
        .or_else(|| header(headers, "retry-after").and_then(parse_js_float).map(|s| s * 1000.0))
}

fn retry_delay(
    error: &HttpError,
    headers: &[(String, String)],
    retry_index: u32,
    max_retry_delay: Option<Duration>,
    style: &ErrorStyle,
) -> Result<Duration, HttpError> {
    let server_delay_ms = server_delay_ms(headers);
    if let Some(ms) = server_delay_ms {
        let max = max_retry_delay.unwrap_or(DEFAULT_MAX_RETRY_DELAY);
        let max_ms = max.as_secs_f64() * 1000.0;
        if max_ms > 0.0 && ms > max_ms {
            let head =
                format!("Server requested {}s retry delay (max: {}s)", (ms / 1000.0).ceil(), (max_ms / 1000.0).ceil());
            if !style.retry_delay_names_the_error() {
                return Err(HttpError::RetryDelayTooLong(head));
            }
            let sdk_message = match error {
                HttpError::Status { status, body } => style.sdk_message(*status, body),
                other => style.format(other),
            };
            return Err(HttpError::RetryDelayTooLong(format!("{head}. {sdk_message}")));
        }
        return Ok(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    let base = (0.5 * 2f64.powi(retry_index.min(16) as i32)).min(8.0);
    Ok(Duration::from_secs_f64(base * (1.0 - random_unit() * 0.25)))
}

/// `Number.parseFloat` for the leading number of a header value.
fn parse_js_float(text: &str) -> Option<f64> {
    let t = text.trim_start();
    let end = t
        .char_indices()
        .take_while(|(i, c)| c.is_ascii_digit() || *c == '.' || (*i == 0 && (*c == '-' || *c == '+')))
        .map(|(i, c)| i + c.len_utf8())
        .last()?;
    t[..end].parse::<f64>().ok().filter(|v| v.is_finite())
}

/// A uniformly distributed number in `[0, 1)` for jitter (no cryptographic quality needed).
fn random_unit() -> f64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// The message of the deepest `source()` of an error (pi appends the deepest `cause`).
fn deepest_cause(error: &(dyn StdError + 'static)) -> String {
    let mut current: &(dyn StdError + 'static) = error;
    let mut depth = 0;
    while let Some(next) = current.source() {
        current = next;
        depth += 1;
        if depth > 8 {
            break;
        }
    }
    current.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retryable_statuses() {
        let s = |status| HttpError::Status { status, body: String::new() };
        for code in [408, 409, 429, 500, 503] {
            assert!(is_retryable(&s(code), &[]), "{code}");
        }
        for code in [400, 401, 404] {
            assert!(!is_retryable(&s(code), &[]), "{code}");
        }
        let no = vec![("x-should-retry".to_owned(), "false".to_owned())];
        assert!(!is_retryable(&s(500), &no));
        let yes = vec![("x-should-retry".to_owned(), "true".to_owned())];
        assert!(is_retryable(&s(400), &yes));
    }

    #[test]
    fn backoff_is_exponential_with_jitter_and_capped() {
        let e = HttpError::Status { status: 500, body: String::new() };
        for (i, base) in [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (9, 8.0)] {
            let d = retry_delay(&e, &[], i, None, &ErrorStyle::OpenAiCompletions).unwrap().as_secs_f64();
            assert!(d <= base && d >= base * 0.75, "{i}: {d}");
        }
    }

    #[test]
    fn server_delays_are_honoured_or_refused() {
        let e = HttpError::Status { status: 429, body: r#"{"error":{"message":"slow down"}}"#.to_owned() };
        let h = vec![("retry-after".to_owned(), "2".to_owned())];
        assert_eq!(retry_delay(&e, &h, 0, None, &ErrorStyle::OpenAiCompletions).unwrap(), Duration::from_secs(2));
        let h = vec![("retry-after-ms".to_owned(), "1500".to_owned())];
        assert_eq!(retry_delay(&e, &h, 0, None, &ErrorStyle::OpenAiCompletions).unwrap(), Duration::from_millis(1500));
        let h = vec![("retry-after".to_owned(), "120".to_owned())];
        let err = retry_delay(&e, &h, 0, None, &ErrorStyle::OpenAiCompletions).unwrap_err();
        assert_eq!(
            err,
            HttpError::RetryDelayTooLong("Server requested 120s retry delay (max: 60s). 429 slow down".into())
        );
        assert!(retry_delay(&e, &h, 0, Some(Duration::ZERO), &ErrorStyle::OpenAiCompletions).is_ok());
    }
}
