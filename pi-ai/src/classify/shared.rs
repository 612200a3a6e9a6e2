//! What every classifier API shares (pi-ai's `classifier-shared`): one JSON POST with bearer
//! auth, a fresh timeout per attempt and provider retries; usage priced from the catalog; and the
//! error wording of `formatProviderError`.

use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::ClassifierModel;
use crate::http::{MAX_ERROR_BODY_CHARS, truncate_error_text};
use crate::types::{Cost, Usage};

/// pi's default cap on a server-requested retry delay.
const DEFAULT_MAX_RETRY_DELAY: Duration = Duration::from_secs(60);

/// Options of one classification (pi's `ClassifierOptions`).
#[derive(Clone, Debug, Default)]
pub struct ClassifyOptions {
    /// The credential (`Authorization: Bearer …`). System One and Decisions fail without one.
    pub api_key: Option<String>,
    /// Extra headers over the model's; `None` removes a header.
    pub headers: Vec<(String, Option<String>)>,
    /// llama.cpp only: divides the label log-probabilities (default 1).
    pub temperature: Option<f64>,
    /// Per-attempt timeout (none by default).
    pub timeout: Option<Duration>,
    /// Retries of retryable failures (default 2).
    pub max_retries: Option<u32>,
    /// Longest server-requested retry delay honoured (default 60 s; zero disables the limit).
    pub max_retry_delay: Option<Duration>,
    /// Cancels the call.
    pub cancel: Option<CancellationToken>,
}

impl ClassifyOptions {
    pub(crate) fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(CancellationToken::is_cancelled)
    }
}

/// Why a request failed, with what pi's error normalisation reads from it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Failure {
    /// A non-2xx answer: pi's `<label> returned <status>` with the body.
    Status { label: String, status: u16, body: String },
    /// Anything else, already worded.
    Message(String),
    /// The call was cancelled.
    Aborted,
}

impl From<String> for Failure {
    fn from(text: String) -> Self {
        Failure::Message(text)
    }
}

impl Failure {
    /// pi's `formatProviderError(normalizeProviderError(error), prefix)`.
    pub(crate) fn format(&self, prefix: &str) -> String {
        match self {
            Failure::Status { label, status, body } => {
                let message = format!("{label} returned {status}");
                let body = body.trim();
                if body.is_empty() || message.contains(body) {
                    format!("{prefix} ({status}): {message}")
                } else {
                    format!("{prefix} ({status}): {}", truncate_error_text(body, MAX_ERROR_BODY_CHARS))
                }
            }
            Failure::Message(text) => text.clone(),
            Failure::Aborted => "Request aborted".to_owned(),
        }
    }

    /// The HTTP status, if the service answered.
    pub(crate) fn status(&self) -> Option<u16> {
        match self {
            Failure::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// Request headers as pi's `providerHeadersToRecord` merges them: later sources replace earlier
/// ones case-insensitively (taking their spelling), `None` removes.
pub(crate) fn merge_headers(
    base: Vec<(String, Option<String>)>,
    model: Option<&Map<String, Value>>,
    options: &[(String, Option<String>)],
) -> Vec<(String, String)> {
    let mut merged: Vec<(String, String)> = Vec::new();
    let mut apply = |name: &str, value: Option<&str>| {
        merged.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        if let Some(value) = value {
            merged.push((name.to_owned(), value.to_owned()));
        }
    };
    for (name, value) in &base {
        apply(name, value.as_deref());
    }
    for (name, value) in model.into_iter().flatten() {
        match value {
            Value::Null => apply(name, None),
            Value::String(s) => apply(name, Some(s)),
            other => apply(name, Some(&other.to_string())),
        }
    }
    for (name, value) in options {
        apply(name, value.as_deref());
    }
    merged
}

/// The default headers: pi's identity `User-Agent`, then the bearer key and the JSON content type.
pub(crate) fn default_headers(api_key: Option<&str>) -> Vec<(String, Option<String>)> {
    let mut headers = vec![("User-Agent".to_owned(), Some(crate::http::user_agent()))];
    if let Some(key) = api_key {
        headers.push(("authorization".to_owned(), Some(format!("Bearer {key}"))));
    }
    headers.push(("content-type".to_owned(), Some("application/json".to_owned())));
    headers
}

/// One POST request's parameters.
pub(crate) struct Post<'a> {
    /// `System One API`, `llama.cpp`: the start of `<label> returned <status>`.
    pub label: &'a str,
    /// The full URL.
    pub url: String,
    /// Merged headers.
    pub headers: Vec<(String, String)>,
    /// The body, already JSON.
    pub body: String,
    /// Statuses that fail at once although they are normally retried.
    pub no_retry_statuses: &'a [u16],
}

/// Posts `post`, retrying as pi's `retryProviderRequest` does (default two retries), and returns
/// the parsed JSON answer.
pub(crate) async fn post_json(post: &Post<'_>, options: &ClassifyOptions) -> Result<Value, Failure> {
    let max_retries = options.max_retries.unwrap_or(2);
    let cancel = options.cancel.clone().unwrap_or_default();
    let mut retries_left = max_retries;
    loop {
        if cancel.is_cancelled() {
            return Err(Failure::Aborted);
        }
        let attempt = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(Failure::Aborted),
            r = attempt(post, options.timeout) => r,
        };
        let (failure, headers) = match attempt {
            Ok(value) => return Ok(value),
            Err(e) => e,
        };
        let retryable = match header(&headers, "x-should-retry") {
            Some("true") => true,
            Some("false") => false,
            _ => match &failure {
                Failure::Status { status, .. } => matches!(status, 408 | 409 | 429) || *status >= 500,
                // pi's timeout error carries no status; a failed fetch is no provider error.
                Failure::Message(text) => text.starts_with("Request timed out after "),
                Failure::Aborted => false,
            },
        };
        let blocked = failure.status().is_some_and(|s| post.no_retry_statuses.contains(&s));
        if retries_left == 0 || !retryable || blocked {
            return Err(failure);
        }
        let index = max_retries - retries_left;
        retries_left -= 1;
        let message = match &failure {
            Failure::Status { label, status, .. } => format!("{label} returned {status}"),
            other => other.format(""),
        };
        let delay = retry_delay(&headers, index, options.max_retry_delay, &message)?;
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(Failure::Aborted),
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

type AttemptError = (Failure, Vec<(String, String)>);

async fn attempt(post: &Post<'_>, timeout: Option<Duration>) -> Result<Value, AttemptError> {
    let send = async {
        let mut request = crate::http::client().post(&post.url);
        for (name, value) in &post.headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let response = request
            .body(post.body.clone())
            .send()
            .await
            .map_err(|e| (Failure::Message(format!("fetch failed: {}", deepest_cause(&e))), Vec::new()))?;
        let status = response.status().as_u16();
        let headers: Vec<(String, String)> = response
            .headers()
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
            .collect();
        let bytes = response.bytes().await.map_err(|e| (Failure::Message(format!("terminated: {e}")), Vec::new()))?;
        if !(200..300).contains(&status) {
            let body = String::from_utf8_lossy(&bytes).into_owned();
            return Err((Failure::Status { label: post.label.to_owned(), status, body }, headers));
        }
        serde_json::from_slice::<Value>(&bytes).map_err(|e| (Failure::Message(json_error(&bytes, &e)), Vec::new()))
    };
    match timeout {
        Some(limit) => tokio::time::timeout(limit, send).await.unwrap_or_else(|_| {
            Err((Failure::Message(format!("Request timed out after {}ms", limit.as_millis())), Vec::new()))
        }),
        None => send.await,
    }
}

/// The text of a body that is not JSON, worded as V8's `JSON.parse` words it for the common case.
fn json_error(bytes: &[u8], error: &serde_json::Error) -> String {
    let text = String::from_utf8_lossy(bytes);
    match text.trim_start().chars().next() {
        None => "Unexpected end of JSON input".to_owned(),
        Some(c) => {
            format!("Unexpected token '{c}', \"{}\" is not valid JSON ({error})", truncate_error_text(&text, 30))
        }
    }
}

fn deepest_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

/// pi's `getRetryDelayMs`: the server's `retry-after-ms` / `retry-after` (over the cap fails at
/// once), else `min(0.5·2^i, 8)` s minus up to 25 % jitter.
fn retry_delay(
    headers: &[(String, String)],
    index: u32,
    max: Option<Duration>,
    message: &str,
) -> Result<Duration, Failure> {
    let server = header(headers, "retry-after-ms")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .or_else(|| header(headers, "retry-after").and_then(|v| v.trim().parse::<f64>().ok()).map(|s| s * 1000.0));
    if let Some(ms) = server.filter(|ms| ms.is_finite()) {
        let max = max.unwrap_or(DEFAULT_MAX_RETRY_DELAY);
        if !max.is_zero() && ms > max.as_millis() as f64 {
            return Err(Failure::Message(format!(
                "Server requested {}s retry delay (max: {}s). {message}",
                (ms / 1000.0).ceil(),
                max.as_secs_f64().ceil()
            )));
        }
        return Ok(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    let base = (0.5 * 2f64.powi(index as i32)).min(8.0);
    let jitter = (std::collections::hash_map::RandomState::new().build_hasher().finish() % 1000) as f64 / 1000.0;
    Ok(Duration::from_secs_f64(base * (1.0 - jitter * 0.25)))
}

/// A number field of the answer, or pi's `<label> returned an invalid <field>`.
pub(crate) fn required_number(label: &str, value: Option<&Value>, field: &str) -> Result<f64, Failure> {
    value
        .and_then(Value::as_f64)
        .filter(|n| n.is_finite())
        .ok_or_else(|| Failure::Message(format!("{label} returned an invalid {field}")))
}

fn token_count(value: Option<&Value>) -> u64 {
    value.and_then(Value::as_f64).filter(|n| n.is_finite() && *n > 0.0).map(|n| n as u64).unwrap_or(0)
}

/// pi's `parseClassifierUsage`: `{ input_tokens, output_tokens }` priced from the catalog; none
/// when the object is missing or has neither count.
pub(crate) fn parse_usage(value: Option<&Value>, model: &ClassifierModel) -> Option<Usage> {
    let object = value?.as_object()?;
    if !object.contains_key("input_tokens") && !object.contains_key("output_tokens") {
        return None;
    }
    let input = token_count(object.get("input_tokens"));
    let output = token_count(object.get("output_tokens"));
    let mut usage = Usage { input, output, total_tokens: input + output, cost: Cost::default(), ..Default::default() };
    crate::models::calculate_cost(&model.pricing(), &mut usage);
    Some(usage)
}

/// `base_url` without trailing slashes, joined with `path` (pi's `new URL(path, base + "/")`).
pub(crate) fn join_url(base_url: &str, path: &str) -> String {
    format!("{}/{path}", base_url.trim_end_matches('/'))
}
