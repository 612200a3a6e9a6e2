//! Classification of failed assistant messages, as pi-ai 1.6.0 does it: context overflow
//! (`isContextOverflow`, handled by compaction) and retryable provider errors
//! (`isRetryableAssistantError`, handled by auto-retry).

use std::sync::LazyLock;

use pi_ai::{AssistantMessage, StopReason};
use regex::{Regex, RegexSet};

fn set(patterns: &[&str]) -> RegexSet {
    RegexSet::new(patterns.iter().map(|p| format!("(?i){p}"))).unwrap_or_else(|_| RegexSet::empty())
}

static OVERFLOW: LazyLock<RegexSet> = LazyLock::new(|| {
    set(&[
        r"prompt (?:is )?too long",
        r"prompt exceeds max length",
        r"request_too_large",
        r"input is too long for requested model",
        r"exceeds the context window",
        r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
        r"context window exceeded",
        r"input token count.*exceeds the maximum",
        r"maximum prompt length is \d+",
        r"reduce the length of the messages",
        r"maximum context length is \d+ tokens",
        r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
        r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
        r"exceeds the limit of \d+",
        r"exceeds the available context size",
        r"greater than the context length",
        r"context window exceeds limit",
        r"exceeded model token limit",
        r"too large for model with \d+ maximum context length",
        r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",
        r"model_context_window_exceeded",
        r"prompt too long; exceeded (?:max )?context length",
        r"range of input length should be",
        r"context[_ ]length[_ ]exceeded",
        r"too many tokens",
        r"token limit exceeded",
        r"^(?:[\w -]+ API error \(413\):|413(?:\s|:|$))",
    ])
});

static NON_OVERFLOW: LazyLock<RegexSet> =
    LazyLock::new(|| set(&[r"^(Throttling error|Service unavailable):", r"rate limit", r"too many requests"]));

static CEREBRAS_BODYLESS: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)^4(?:00|13)\s*(?:status code)?\s*\(no body\)").ok());

static NON_RETRYABLE_LIMIT: LazyLock<RegexSet> = LazyLock::new(|| {
    set(&[
        "GoUsageLimitError",
        "FreeUsageLimitError",
        "Monthly usage limit reached",
        "available balance",
        "insufficient_quota",
        "out of budget",
        "quota exceeded",
        "billing",
        "subscription_sharing_usage_limit_exceeded",
        "subscription_sharing_workplace_individual_usage_limit_exceeded",
        r#""code"\s*:\s*"?1308(?:[^0-9]|$)"#,
    ])
});

// JavaScript lookarounds `(?<![a-z0-9])…(?![a-z0-9])` become explicit boundaries.
static RETRYABLE: LazyLock<RegexSet> = LazyLock::new(|| {
    set(&[
        "overloaded",
        "server_busy",
        "servers are currently busy",
        "currently experiencing high demand",
        "model is at capacity",
        "rate.?limit",
        "too many requests",
        r"(?:^|[^a-z0-9])(?:429|500|502|503|504|520|524)(?:[^a-z0-9]|$)",
        "service.?(?:is.?)?(?:temporarily.?)?unavailable",
        "server.?error",
        "internal.?error",
        "provider.?returned.?(?:an.?)?error",
        "exceeded request buffer limit while retrying upstream",
        "unable to forward upstream",
        "upstream.?request.?failed",
        "upstream_stream_read_error",
        "stream was interrupted",
        "http/?2 stream failed",
        "network.?error",
        "connection.?error",
        "connection.?refused",
        "connection.?lost",
        "connection.?closed",
        "other side closed",
        "fetch failed",
        r"request to \S+ failed, reason:",
        "getaddrinfo",
        r"(?:^|[^a-z0-9_])(?:ECONNRESET|ECONNABORTED|ECONNREFUSED|ETIMEDOUT|EPIPE)(?:[^a-z0-9_]|$)",
        "connection reset by peer",
        "ENOTFOUND",
        "EAI_AGAIN",
        "upstream.?connect",
        "reset before headers",
        "socket hang up",
        "socket connection was closed",
        "timed? out",
        "timeout",
        "terminated",
        "websocket.?closed",
        "websocket.?error",
        "websocket.?connection.?limit.?reached",
        "ended without",
        "stream ended before message_stop",
        "stream ended before a terminal response event",
        "http2 request did not get a response",
        "stream disconnected before completion",
        "cut short after the reply had begun",
        "pending stream has been canceled",
        "retry delay",
        "you can retry your request",
        "try your request again",
        "please retry your request",
        "ResourceExhausted",
        "subscription_sharing_usage_unavailable",
        "subscription_sharing_user_unavailable",
    ])
});

/// pi-ai's `isContextOverflow(message, contextWindow)`.
pub fn is_context_overflow(message: &AssistantMessage, context_window: u64) -> bool {
    if message.stop_reason == StopReason::Error
        && let Some(error) = message.error_message.as_deref().filter(|e| !e.is_empty())
        && !NON_OVERFLOW.is_match(error)
    {
        if OVERFLOW.is_match(error) {
            return true;
        }
        if message.provider == "cerebras" && CEREBRAS_BODYLESS.as_ref().is_some_and(|r| r.is_match(error)) {
            return true;
        }
    }
    let input = message.usage.input + message.usage.cache_read;
    if context_window > 0 && message.stop_reason == StopReason::Stop && input > context_window {
        return true;
    }
    context_window > 0
        && message.stop_reason == StopReason::Length
        && message.usage.output == 0
        && (input as f64) >= context_window as f64 * 0.99
}

/// pi-ai's `isRetryableAssistantError`.
pub fn is_retryable_assistant_error(message: &AssistantMessage) -> bool {
    if message.stop_reason != StopReason::Error {
        return false;
    }
    let Some(error) = message.error_message.as_deref().filter(|e| !e.is_empty()) else { return false };
    !NON_RETRYABLE_LIMIT.is_match(error) && RETRYABLE.is_match(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(error: &str) -> AssistantMessage {
        AssistantMessage { stop_reason: StopReason::Error, error_message: Some(error.to_owned()), ..Default::default() }
    }

    #[test]
    fn classifies_like_pi() {
        assert!(is_retryable_assistant_error(&failed("OpenAI API error (503): Service Unavailable")));
        assert!(is_retryable_assistant_error(&failed("read ECONNRESET")));
        assert!(!is_retryable_assistant_error(&failed("error 4290 happened")));
        assert!(!is_retryable_assistant_error(&failed("429 insufficient_quota")));
        assert!(!is_retryable_assistant_error(&failed("invalid api key")));
        assert!(is_context_overflow(&failed("This model's maximum context length is 8192 tokens"), 0));
        assert!(!is_context_overflow(&failed("ThrottlingException: Too many tokens, rate limit"), 0));
        assert!(is_context_overflow(&failed("413 (no body)"), 0));
    }
}
