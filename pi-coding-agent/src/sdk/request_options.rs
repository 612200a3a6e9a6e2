//! The request options settings give every provider call (pi's `buildRequestOptions` in
//! `sdk.ts`): `httpIdleTimeoutMs` (default 5 minutes; `0` or `"disabled"` for none) or
//! `retry.provider.timeoutMs` as the idle timeout, `retry.provider.maxRetries` and
//! `retry.provider.maxRetryDelayMs` (default 60 s; `0` for no cap on a server's `Retry-After`),
//! and, beyond pi, `httpConnectTimeoutMs` (default 30 s; `0` or `"disabled"` for none).
//! Options already set by the caller win.

use std::time::Duration;

use pi_ai::options::StreamOptions;
use serde_json::Value;

use crate::settings::Settings;

/// A timeout setting: milliseconds, `0` / `"disabled"` = no limit (`Duration::MAX`), anything
/// else = not set.
fn timeout_setting(value: Option<&Value>) -> Option<Duration> {
    match value? {
        Value::String(s) if s == "disabled" => Some(Duration::MAX),
        v => {
            let ms = v.as_f64().filter(|ms| ms.is_finite() && *ms >= 0.0)?;
            Some(if ms == 0.0 { Duration::MAX } else { Duration::from_millis(ms as u64) })
        }
    }
}

/// `base` with what `settings` says about timeouts and provider retries filled in where `base`
/// leaves it unset.
///
/// ```
/// use pi_coding_agent::sdk::request_options::request_options_from_settings;
/// use pi_coding_agent::settings::Settings;
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("settings.json"),
///     r#"{"httpIdleTimeoutMs": 1500, "retry": {"provider": {"maxRetries": 2, "maxRetryDelayMs": 0}}}"#).unwrap();
/// let (settings, _) = Settings::load(dir.path(), dir.path(), false);
/// let o = request_options_from_settings(&settings, Default::default());
/// assert_eq!(o.timeout, Some(std::time::Duration::from_millis(1500)));
/// assert_eq!((o.max_retries, o.max_retry_delay), (2, Some(std::time::Duration::ZERO)));
/// assert_eq!(o.transport, Some(pi_ai::options::Transport::Auto));
/// ```
pub fn request_options_from_settings(settings: &Settings, base: StreamOptions) -> StreamOptions {
    let mut o = base;
    if o.timeout.is_none() {
        o.timeout = timeout_setting(settings.get_path("retry.provider.timeoutMs"))
            .or_else(|| timeout_setting(settings.get("httpIdleTimeoutMs")));
    }
    if o.connect_timeout.is_none() {
        o.connect_timeout = timeout_setting(settings.get("httpConnectTimeoutMs"));
    }
    if o.max_retries == 0
        && let Some(n) = settings.get_path("retry.provider.maxRetries").and_then(Value::as_u64)
    {
        o.max_retries = u32::try_from(n).unwrap_or(u32::MAX);
    }
    if o.max_retry_delay.is_none()
        && let Some(ms) = settings.get_path("retry.provider.maxRetryDelayMs").and_then(Value::as_u64)
    {
        o.max_retry_delay = Some(Duration::from_millis(ms));
    }
    // pi's agent always passes the `transport` setting (default `auto`: Codex tries its WebSocket).
    if o.transport.is_none() {
        o.transport = Some(match settings.transport() {
            crate::settings::Transport::Auto => pi_ai::options::Transport::Auto,
            crate::settings::Transport::Sse => pi_ai::options::Transport::Sse,
            crate::settings::Transport::Websocket => pi_ai::options::Transport::WebSocket,
            crate::settings::Transport::WebsocketCached => pi_ai::options::Transport::WebSocketCached,
        });
    }
    o
}
