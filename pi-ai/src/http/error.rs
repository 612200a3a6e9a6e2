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
            ErrorStyle::Anthropic => "This operation was aborted",
            _ => "Request aborted",
        }
    }

    /// The SDK message of a status error (what pi puts before `Server requested …s retry delay`).
    pub fn sdk_message(&self, status: u16, body: &str) -> String {
        truncate_error_text(&self.sdk_error(status, body).0, MAX_ERROR_BODY_CHARS)
    }

    /// pi's `formatProviderError(normalizeProviderError(error), prefix)` for this API.
    pub fn format(&self, error: &HttpError) -> String {
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
    fn long_bodies_are_capped() {
        let long = format!(r#"{{"error":{{"message":"{}"}}}}"#, "x".repeat(5000));
        let text = ErrorStyle::OpenAiCompletions.format(&status(400, &long));
        assert!(text.ends_with("chars]"), "{text}");
        assert!(text.len() < 4100);
    }
}
