//! HTTP failures and pi's wording of them per API.

use serde_json::Value;

/// Error bodies are cut to this many characters (pi's `MAX_PROVIDER_ERROR_BODY_CHARS`).
pub const MAX_ERROR_BODY_CHARS: usize = 4000;

/// pi's `truncateErrorText`: `text` cut to `max` characters plus `... [truncated N chars]`.
///
/// ```
/// assert_eq!(pi_ai::http::truncate_error_text("abcdef", 4), "abcd... [truncated 2 chars]");
/// ```
pub fn truncate_error_text(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}... [truncated {} chars]", total - max)
}

/// A request that failed before or while its answer streamed.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum HttpError {
    /// The server answered with a non-2xx status.
    #[error("HTTP {status}")]
    Status {
        /// The status code.
        status: u16,
        /// The response body (read in full, decoded lossily).
        body: String,
    },
    /// No response: the connection failed. The text is the deepest cause.
    #[error("Connection error.")]
    Connection {
        /// The deepest cause, e.g. `Connection refused (os error 111)`.
        cause: String,
    },
    /// The body broke off while streaming. The text is the deepest cause.
    #[error("terminated")]
    Body {
        /// The deepest cause.
        cause: String,
    },
    /// The response headers did not arrive within the timeout.
    #[error("Request timed out.")]
    Timeout,
    /// The body went idle for longer than the timeout.
    #[error("Request timed out.")]
    BodyTimeout,
    /// The cancellation token fired.
    #[error("Request was aborted")]
    Aborted,
    /// The server asked for a retry delay longer than allowed (pi's wording, ready to show).
    #[error("{0}")]
    RetryDelayTooLong(String),
}

/// How an API words an HTTP error (each of pi's APIs goes through a different SDK).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorStyle {
    /// `openai-completions`: `400: {"message":…}` (the body's `error` object).
    OpenAiCompletions,
    /// `openai-responses`: `<Provider> API error (400): {"message":…}`; holds the display name.
    OpenAiResponses(String),
    /// `anthropic-messages`: `400 {"type":"error",…}` (the whole body).
    Anthropic,
    /// `google-generative-ai` / `google-vertex`: the `@google/genai` SDK's message (the error body
    /// as compact JSON); retries ignore the response headers, as the SDK's errors carry none.
    Google,
    /// `mistral-conversations`: `Mistral API error (401): <body>`.
    Mistral,
    /// `openai-codex-responses`: the body's `error.message`, or ChatGPT's usage-limit text.
    Codex,
}

impl ErrorStyle {
    /// The Responses style for a provider id (`openai` displays as `OpenAI`).
    pub fn responses(provider: &str) -> Self {
        ErrorStyle::OpenAiResponses(if provider == "openai" { "OpenAI".to_owned() } else { provider.to_owned() })
    }

    fn prefix(&self) -> Option<String> {
        match self {
            ErrorStyle::OpenAiResponses(name) => Some(format!("{name} API error")),
            _ => None,
        }
    }

    /// The SDK's own message for a status error, and the error object pi extracts from the body.
    fn sdk_error(&self, status: u16, body: &str) -> (String, Option<Value>) {
        let parsed: Option<Value> = serde_json::from_str(body).ok();
        let error = match self {
            ErrorStyle::Anthropic => parsed.clone(),
            _ => parsed.as_ref().and_then(|v| v.get("error")).cloned(),
        };
        let error = error.filter(|e| !e.is_null());
        // `makeMessage(status, error, message)` of both SDKs.
        let msg = match &error {
            Some(e) => match e.get("message").filter(|m| is_truthy(m)) {
                Some(Value::String(s)) => Some(s.clone()),
                Some(other) => Some(other.to_string()),
                None if is_truthy(e) => Some(e.to_string()),
                None => None,
            },
            None if parsed.is_none() && !body.is_empty() => Some(body.to_owned()),
            None => None,
        };
        let message = match msg {
            Some(m) => format!("{status} {m}"),
            None => format!("{status} status code (no body)"),
        };
        (message, error)
    }

    /// The text of a request cancelled before it was sent.
    pub fn pre_abort_text(&self) -> &'static str {
        match self {
            ErrorStyle::Anthropic | ErrorStyle::Mistral => "This operation was aborted",
            ErrorStyle::Codex => "Request was aborted",
            _ => "Request aborted",
        }
    }

    /// An API's own retry rule for a status error (`None`: the shared rule). Codex (pi's
    /// `isRetryableError`) retries 429 unless the text says the quota is spent, 500/502/503/504,
    /// and any status whose text names a rate limit, an overload or an unavailable upstream.
    pub fn status_retryable(&self, status: u16, body: &str) -> Option<bool> {
        if *self != ErrorStyle::Codex {
            return None;
        }
        let text = body.to_ascii_lowercase();
        let terminal = [
            "gousagelimiterror",
            "freeusagelimiterror",
            "monthly usage limit reached",
            "available balance",
            "insufficient_quota",
            "out of budget",
            "quota exceeded",
            "billing",
        ];
        if status == 429 && terminal.iter().any(|t| text.contains(t)) {
            return Some(false);
        }
        if matches!(status, 429 | 500 | 502 | 503 | 504) {
            return Some(true);
        }
        let squeeze = |a: &str, b: &str| {
            text.contains(&format!("{a}{b}"))
                || text.contains(&format!("{a} {b}"))
                || text.contains(&format!("{a}_{b}"))
                || text.contains(&format!("{a}-{b}"))
        };
        Some(
            squeeze("rate", "limit")
                || text.contains("overloaded")
                || squeeze("service", "unavailable")
                || squeeze("upstream", "connect")
                || squeeze("connection", "refused"),
        )
    }

    /// Whether retries look at the response headers (`retry-after`, `x-should-retry`).
    pub fn retries_read_headers(&self) -> bool {
        !matches!(self, ErrorStyle::Google)
    }

    /// Whether a too-long server retry delay is reported with the SDK's message after it.
    pub(crate) fn retry_delay_names_the_error(&self) -> bool {
        !matches!(self, ErrorStyle::Codex)
    }

    /// The SDK message of a status error (what pi puts before `Server requested …s retry delay`).
    pub fn sdk_message(&self, status: u16, body: &str) -> String {
        truncate_error_text(&self.sdk_error(status, body).0, MAX_ERROR_BODY_CHARS)
    }

    /// pi's `formatProviderError(normalizeProviderError(error), prefix)` for this API.
    pub fn format(&self, error: &HttpError) -> String {
        if let Some(text) = self.format_fetch_style(error) {
            return text;
        }
        let prefix = self.prefix();
        match error {
            HttpError::Status { status, body } => {
                let (message, error_obj) = self.sdk_error(*status, body);
                let message = truncate_error_text(&message, MAX_ERROR_BODY_CHARS);
                // Only a non-empty plain object counts as a body.
                let body = error_obj
                    .filter(|e| e.as_object().is_some_and(|o| !o.is_empty()))
                    .map(|e| truncate_error_text(e.to_string().trim(), MAX_ERROR_BODY_CHARS));
                match body {
                    Some(body) if !message.contains(&body) => match prefix {
                        Some(p) => format!("{p} ({status}): {body}"),
                        None => format!("{status}: {body}"),
                    },
                    _ => match prefix {
                        Some(p) => format!("{p} ({status}): {message}"),
                        None => message,
                    },
                }
            }
            HttpError::Connection { cause } => with_cause("Connection error.", cause),
            HttpError::Body { cause } => with_cause("terminated", cause),
            // The OpenAI SDK's timeout error carries the abort that implements it as its cause.
            HttpError::Timeout => match self {
                ErrorStyle::Anthropic => "Request timed out.".to_owned(),
                _ => "Request timed out.: This operation was aborted (20)".to_owned(),
            },
            HttpError::BodyTimeout => "Request timed out.".to_owned(),
            // Cancelled while the request was being sent (pi's retry wrapper's wording).
            HttpError::Aborted => "Request aborted".to_owned(),
            HttpError::RetryDelayTooLong(text) => text.clone(),
        }
    }
}

impl ErrorStyle {
    /// The wording of the APIs that pi drives with `fetch` or the Google SDK (`None` for the
    /// OpenAI and Anthropic SDK styles).
    fn format_fetch_style(&self, error: &HttpError) -> Option<String> {
        if !matches!(self, ErrorStyle::Google | ErrorStyle::Mistral | ErrorStyle::Codex) {
            return None;
        }
        Some(match error {
            HttpError::Status { status, body } => match self {
                ErrorStyle::Google => truncate_error_text(&google_message(*status, body), MAX_ERROR_BODY_CHARS),
                ErrorStyle::Mistral => match body.trim() {
                    "" => format!("Mistral API error ({status}): {}", status_text(*status)),
                    text => {
                        format!("Mistral API error ({status}): {}", truncate_error_text(text, MAX_ERROR_BODY_CHARS))
                    }
                },
                _ => codex_message(*status, body),
            },
            HttpError::Connection { cause } => with_cause("fetch failed", cause),
            HttpError::Body { cause } if *self != ErrorStyle::Mistral => with_cause("terminated", cause),
            HttpError::Body { .. } => "terminated".to_owned(),
            HttpError::Timeout | HttpError::BodyTimeout => "Request timed out.".to_owned(),
            HttpError::Aborted => self.pre_abort_text().to_owned(),
            HttpError::RetryDelayTooLong(text) => text.clone(),
        })
    }
}

/// The status line's text (`fetch`'s `statusText`).
fn status_text(status: u16) -> String {
    reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .map_or_else(|| format!("Request failed with status {status}"), str::to_owned)
}

/// The `@google/genai` SDK's `ApiError` message: a JSON body re-serialized, any other body wrapped
/// as `{"error":{"message","code","status"}}`.
fn google_message(status: u16, body: &str) -> String {
    match serde_json::from_str::<Value>(body) {
        Ok(value) => value.to_string(),
        Err(_) => {
            serde_json::json!({"error": {"message": body, "code": status, "status": status_text(status)}}).to_string()
        }
    }
}

/// pi's `parseErrorResponse` for Codex: ChatGPT's usage-limit text for 429 and usage codes, else
/// the error's message, else the body.
fn codex_message(status: u16, body: &str) -> String {
    let mut message = if body.is_empty() { status_text(status) } else { body.to_owned() };
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let Some(err) = parsed.as_ref().and_then(|p| p.get("error")).filter(|e| is_truthy(e)) else { return message };
    let text = |k: &str| err.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    let code = text("code").or_else(|| text("type")).unwrap_or_default().to_ascii_lowercase();
    let mut friendly = None;
    if ["usage_limit_reached", "usage_not_included", "rate_limit_exceeded"].iter().any(|c| code.contains(c))
        || status == 429
    {
        let plan = text("plan_type").map(|p| format!(" ({} plan)", p.to_lowercase())).unwrap_or_default();
        let when = err.get("resets_at").and_then(Value::as_f64).map(|at| {
            let now =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
            format!(" Try again in ~{} min.", ((at - now) / 60.0).round().max(0.0))
        });
        friendly =
            Some(format!("You have hit your ChatGPT usage limit{plan}.{}", when.unwrap_or_default()).trim().to_owned());
    }
    if let Some(m) = text("message") {
        message = m.to_owned();
    } else if let Some(f) = &friendly {
        message = f.clone();
    }
    friendly.unwrap_or(message)
}

/// pi's `withCauseDetail`: `message: cause` unless the cause is empty or already included.
fn with_cause(message: &str, cause: &str) -> String {
    let cause = cause.trim();
    if cause.is_empty() || message.contains(cause) { message.to_owned() } else { format!("{message}: {cause}") }
}

use crate::js::is_truthy;

#[cfg(test)]
mod tests {
    use super::*;

    fn status(status: u16, body: &str) -> HttpError {
        HttpError::Status { status, body: body.to_owned() }
    }

    #[test]
    fn completions_shows_the_error_object() {
        let e = status(400, r#"{"error":{"message":"bad","type":"invalid_request_error"}}"#);
        assert_eq!(
            ErrorStyle::OpenAiCompletions.format(&e),
            r#"400: {"message":"bad","type":"invalid_request_error"}"#
        );
    }

    #[test]
    fn anthropic_shows_the_whole_body() {
        let e = status(400, r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}"#);
        assert_eq!(
            ErrorStyle::Anthropic.format(&e),
            r#"400 {"type":"error","error":{"type":"invalid_request_error","message":"bad"}}"#
        );
    }

    #[test]
    fn responses_prefix_names_the_provider() {
        let e = status(401, r#"{"error":{"message":"no key"}}"#);
        assert_eq!(ErrorStyle::responses("openai").format(&e), r#"OpenAI API error (401): {"message":"no key"}"#);
        assert_eq!(
            ErrorStyle::responses("local").format(&status(500, "")),
            "local API error (500): 500 status code (no body)"
        );
    }

    #[test]
    fn plain_text_and_empty_bodies() {
        assert_eq!(ErrorStyle::OpenAiCompletions.format(&status(502, "Bad gateway")), "502 Bad gateway");
        assert_eq!(ErrorStyle::Anthropic.format(&status(500, "")), "500 status code (no body)");
    }

    #[test]
    fn codex_retry_rule() {
        let c = ErrorStyle::Codex;
        assert_eq!(c.status_retryable(429, r#"{"error":{"code":"insufficient_quota"}}"#), Some(false));
        assert_eq!(c.status_retryable(429, "slow"), Some(true));
        assert_eq!(c.status_retryable(400, "Rate limit hit"), Some(true));
        assert_eq!(c.status_retryable(400, "bad"), Some(false));
        assert_eq!(ErrorStyle::Google.status_retryable(429, ""), None);
        assert_eq!(
            c.format(&status(429, r#"{"error":{"message":"m","plan_type":"PLUS"}}"#)),
            "You have hit your ChatGPT usage limit (plus plan)."
        );
        assert_eq!(c.format(&status(500, "")), "Internal Server Error");
        assert_eq!(ErrorStyle::Mistral.format(&status(502, "")), "Mistral API error (502): Bad Gateway");
        assert_eq!(
            ErrorStyle::Google.format(&status(503, "down")),
            r#"{"error":{"message":"down","code":503,"status":"Service Unavailable"}}"#
        );
    }

    #[test]
    fn long_bodies_are_capped() {
        let long = format!(r#"{{"error":{{"message":"{}"}}}}"#, "x".repeat(5000));
        let text = ErrorStyle::OpenAiCompletions.format(&status(400, &long));
        assert!(text.ends_with("chars]"), "{text}");
        assert!(text.len() < 4100);
    }
}
