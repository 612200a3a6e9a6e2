//! Device-code polling (RFC 8628) as pi-ai's `pollOAuthDeviceCodeFlow`: the provider's interval
//! (5 s when it gives none, never under 1 s), `slow_down` taking the server's new interval or adding
//! 5 s, and the code's expiry ending the wait with pi's messages.

use std::future::Future;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::super::login::LoginError;

const MINIMUM_INTERVAL_MS: u64 = 1000;
const DEFAULT_POLL_INTERVAL_SECONDS: f64 = 5.0;
const SLOW_DOWN_INCREMENT_MS: u64 = 5000;

/// pi's "Device flow timed out".
pub const TIMEOUT_MESSAGE: &str = "Device flow timed out";

/// pi's message when the code expired after `slow_down` answers.
pub const SLOW_DOWN_TIMEOUT_MESSAGE: &str = "Device flow timed out after one or more slow_down responses. This is often caused by clock drift in WSL or VM environments. Please sync or restart the VM clock and try again.";

/// One poll's answer.
#[derive(Debug)]
pub enum PollStatus<T> {
    /// Not authorized yet.
    Pending,
    /// Poll less often; the server's new interval in seconds when it gave one.
    SlowDown(Option<f64>),
    /// Authorized.
    Complete(T),
    /// Refused; pi's message.
    Failed(String),
}

/// How to poll.
#[derive(Clone, Copy, Debug, Default)]
pub struct PollOptions {
    /// The provider's interval in seconds.
    pub interval_seconds: Option<f64>,
    /// How long the code is valid, in seconds (no limit when absent).
    pub expires_in_seconds: Option<f64>,
    /// Wait one interval before the first poll.
    pub wait_before_first_poll: bool,
}

fn interval_ms(seconds: f64) -> u64 {
    ((seconds * 1000.0).floor().max(0.0) as u64).max(MINIMUM_INTERVAL_MS)
}

async fn sleep(ms: u64, cancel: &CancellationToken) -> Result<(), LoginError> {
    tokio::select! {
        _ = cancel.cancelled() => Err(LoginError::Cancelled),
        _ = tokio::time::sleep(Duration::from_millis(ms)) => Ok(()),
    }
}

/// Polls until `poll` completes or fails, the code expires, or `cancel` fires.
pub async fn poll_device_code<T, F, Fut>(
    options: PollOptions,
    cancel: &CancellationToken,
    mut poll: F,
) -> Result<T, LoginError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<PollStatus<T>, LoginError>>,
{
    let start = Instant::now();
    let deadline = options.expires_in_seconds.map(|s| start + Duration::from_millis((s * 1000.0).max(0.0) as u64));
    let remaining = || deadline.map_or(u64::MAX, |d| d.saturating_duration_since(Instant::now()).as_millis() as u64);
    let mut interval = interval_ms(options.interval_seconds.unwrap_or(DEFAULT_POLL_INTERVAL_SECONDS));
    let mut slow_downs = 0;
    if options.wait_before_first_poll && remaining() > 0 {
        sleep(interval.min(remaining()), cancel).await?;
    }
    while remaining() > 0 {
        if cancel.is_cancelled() {
            return Err(LoginError::Cancelled);
        }
        match poll().await? {
            PollStatus::Complete(value) => return Ok(value),
            PollStatus::Failed(message) => return Err(LoginError::Failed(message)),
            PollStatus::SlowDown(server) => {
                slow_downs += 1;
                interval = match server.filter(|s| s.is_finite() && *s > 0.0) {
                    Some(s) => interval_ms(s),
                    None => (interval + SLOW_DOWN_INCREMENT_MS).max(MINIMUM_INTERVAL_MS),
                };
            }
            PollStatus::Pending => {}
        }
        let left = remaining();
        if left == 0 {
            break;
        }
        sleep(interval.min(left), cancel).await?;
    }
    Err(LoginError::Failed(if slow_downs > 0 { SLOW_DOWN_TIMEOUT_MESSAGE } else { TIMEOUT_MESSAGE }.to_owned()))
}
