//! pi-ai's `fetchWithRateLimitRetry` for Copilot's model list and policy calls: a 429 is retried
//! after the server's `Retry-After` (seconds or an HTTP date) or `500 ms · 2^n`, up to a number
//! of retries and within a total time budget. A wait the budget cannot cover, or a `Retry-After`
//! that is neither a number nor a date, returns the 429 as it is.

use std::time::{Duration, Instant, SystemTime};

use tokio_util::sync::CancellationToken;

use super::Endpoints;
use super::support::{Body, Reply, SendError, send};

/// Each attempt's own time limit (pi's `AbortSignal.timeout(5000)`).
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);

/// How often and for how long a 429 is retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// The budget for every attempt and wait together (zero: no budget).
    pub max_elapsed: Duration,
}

impl RetryPolicy {
    /// One attempt, no retry (pi's token refresh).
    pub const NONE: RetryPolicy = RetryPolicy { max_retries: 0, max_elapsed: Duration::ZERO };
    /// Two retries within five seconds (pi's login and policy calls).
    pub const LOGIN: RetryPolicy = RetryPolicy { max_retries: 2, max_elapsed: Duration::from_secs(5) };
}

/// Sends `body` to `url`, retrying a 429 under `policy`. Fails with pi's timeout wording when the
/// budget runs out during an attempt.
pub async fn send_with_rate_limit_retry(
    endpoints: &Endpoints,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Body,
    cancel: &CancellationToken,
    policy: RetryPolicy,
) -> Result<Reply, SendError> {
    let budgeted = policy.max_retries > 0 && !policy.max_elapsed.is_zero();
    let deadline = budgeted.then(|| Instant::now() + policy.max_elapsed);
    let mut retry = 0u32;
    loop {
        let timeout = match deadline {
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(SendError::Failed(TIMEOUT.into()));
                }
                left.min(ATTEMPT_TIMEOUT)
            }
            None => ATTEMPT_TIMEOUT,
        };
        let reply = send(endpoints, method, url, headers, body.clone(), timeout, cancel).await?;
        if reply.status != 429 || retry == policy.max_retries {
            return Ok(reply);
        }
        let delay = match reply.retry_after.as_deref() {
            Some(value) => match retry_after_delay(value, SystemTime::now()) {
                Some(d) => d,
                None => return Ok(reply),
            },
            None => Duration::from_millis(500u64 << retry.min(20)),
        };
        if let Some(d) = deadline
            && delay >= d.saturating_duration_since(Instant::now())
        {
            return Ok(reply);
        }
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(SendError::Cancelled),
            _ = tokio::time::sleep(delay) => {}
        }
        retry += 1;
    }
}

const TIMEOUT: &str = "The operation was aborted due to timeout";

/// The wait a `Retry-After` value asks for, as pi reads it: `parseFloat` seconds, else an HTTP
/// date relative to `now` (a past date waits zero). `None` when it is neither.
pub fn retry_after_delay(value: &str, now: SystemTime) -> Option<Duration> {
    if let Some(seconds) = parse_float_prefix(value) {
        return Some(Duration::from_secs_f64((seconds * 1000.0).max(0.0) / 1000.0));
    }
    let at = httpdate::parse_http_date(value.trim()).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// JavaScript's `Number.parseFloat`: the longest leading decimal number, `None` when there is
/// none (or it is not finite).
fn parse_float_prefix(text: &str) -> Option<f64> {
    let t = text.trim_start();
    let bytes = t.as_bytes();
    let mut end = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        end = 1;
    }
    let digits_start = end;
    let mut seen_dot = false;
    while let Some(&b) = bytes.get(end) {
        if b.is_ascii_digit() || (b == b'.' && !seen_dot) {
            seen_dot |= b == b'.';
            end += 1;
        } else {
            break;
        }
    }
    if !t[digits_start..end].bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    t[..end].parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_like_parse_float() {
        let now = SystemTime::UNIX_EPOCH;
        assert_eq!(retry_after_delay("2", now), Some(Duration::from_secs(2)));
        assert_eq!(retry_after_delay("0.25s", now), Some(Duration::from_millis(250)));
        assert_eq!(retry_after_delay("-3", now), Some(Duration::ZERO));
        assert_eq!(retry_after_delay("soon", now), None);
    }

    #[test]
    fn retry_after_reads_an_http_date() {
        let now = httpdate::parse_http_date("Tue, 01 Dec 2026 10:00:00 GMT").unwrap();
        assert_eq!(retry_after_delay("Tue, 01 Dec 2026 10:00:03 GMT", now), Some(Duration::from_secs(3)));
        assert_eq!(retry_after_delay("Tue, 01 Dec 2026 09:00:00 GMT", now), Some(Duration::ZERO));
    }
}
