//! Auto-retry and a server's `Retry-After` (issue 18, item 10): a 429 or 503 answer that says
//! how long to wait is retried after that delay (beyond pi 1.6.0, which always backs off
//! exponentially), never longer than `retry.maxAgentDelayMs`; other statuses keep the back-off.
//! Real HTTP on 127.0.0.1; the delays are read from `auto_retry_start`, never timed.

use std::sync::{Arc, Mutex};

use http_support::{Setup, text_reply};
use pi_coding_agent::sdk::{RetrySettings, SessionEvent, SessionSettings};

#[path = "http_support/mod.rs"]
mod http_support;

/// A whole HTTP error response with extra headers.
fn error_with(status: u16, headers: &[(&str, &str)]) -> String {
    let body = serde_json::json!({"error": {"message": "Rate limit exceeded, slow down"}}).to_string();
    let extra: String = headers.iter().map(|(k, v)| format!("{k}: {v}\r\n")).collect();
    format!(
        "HTTP/1.1 {status} Error\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// The `delayMs` of every `auto_retry_start` of one prompt that ends in "ok".
async fn retry_delays(first: String, max_delay_ms: u64) -> Vec<u64> {
    let retry = RetrySettings { enabled: true, max_retries: 2, base_delay_ms: 1, max_delay_ms };
    let settings = SessionSettings { retry, ..SessionSettings::manual() };
    let h =
        Setup { replies: vec![first, text_reply("ok")], settings: Some(settings), ..Default::default() }.start().await;
    let delays = Arc::new(Mutex::new(Vec::new()));
    let sink = delays.clone();
    let _sub = h.session.subscribe(move |e| {
        if let SessionEvent::AutoRetryStart { delay_ms, .. } = e {
            sink.lock().unwrap().push(*delay_ms);
        }
    });
    h.session.prompt("hi").await.unwrap();
    assert_eq!(h.session.get_last_assistant_text().as_deref(), Some("ok"));
    assert_eq!(h.server.count(), 2, "one failed request, one retry");
    delays.lock().unwrap().clone()
}

#[tokio::test]
async fn a_429_retry_after_in_milliseconds_sets_the_delay() {
    assert_eq!(retry_delays(error_with(429, &[("retry-after-ms", "40")]), 60_000).await, [40]);
}

#[tokio::test]
async fn a_503_retry_after_in_seconds_sets_the_delay() {
    assert_eq!(retry_delays(error_with(503, &[("retry-after", "0.05")]), 60_000).await, [50]);
}

#[tokio::test]
async fn a_retry_after_beyond_the_maximum_delay_is_capped() {
    assert_eq!(retry_delays(error_with(429, &[("retry-after", "120")]), 30).await, [30]);
}

#[tokio::test]
async fn other_statuses_and_answers_without_retry_after_back_off() {
    // baseDelayMs 1: the first back-off is 1 ms.
    assert_eq!(retry_delays(error_with(500, &[("retry-after", "5")]), 60_000).await, [1]);
    assert_eq!(retry_delays(error_with(429, &[]), 60_000).await, [1]);
}
