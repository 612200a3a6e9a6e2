//! The settings a session reads while it runs (pi's `settingsManager.getCompactionSettings()` and
//! `getRetrySettings()`), taken from [`Settings`] when the session is created.

use crate::compaction::CompactionSettings;
use crate::settings::Settings;

/// Auto-retry of retryable provider errors (`retry.*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetrySettings {
    /// Whether failed requests are retried.
    pub enabled: bool,
    /// Attempts after the first failure.
    pub max_retries: u32,
    /// Back-off of the first retry; doubled for each later one.
    pub base_delay_ms: u64,
    /// The longest wait before a retry (pi's `retry.maxAgentDelayMs`, default 60 s): it caps the
    /// back-off and a server's `Retry-After`.
    pub max_delay_ms: u64,
}

impl Default for RetrySettings {
    /// pi's defaults: enabled, 3 retries, 2000 ms.
    fn default() -> Self {
        RetrySettings { enabled: true, max_retries: 3, base_delay_ms: 2000, max_delay_ms: 60_000 }
    }
}

impl RetrySettings {
    /// pi's `retryDelayMs`: `baseDelayMs * 2^(attempt-1)`, at most `max_delay_ms`.
    pub fn delay_ms(&self, attempt: u32) -> u64 {
        self.base_delay_ms.saturating_mul(1u64 << attempt.saturating_sub(1).min(32)).min(self.max_delay_ms)
    }

    /// The wait before retry `attempt`: the server's `Retry-After` of a 429 or 503 answer when it
    /// gave one (beyond pi, which always backs off exponentially), else [`Self::delay_ms`];
    /// either way at most `max_delay_ms`.
    pub fn delay_for(&self, attempt: u32, retry_after: Option<std::time::Duration>) -> u64 {
        match retry_after {
            Some(wait) => u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).min(self.max_delay_ms),
            None => self.delay_ms(attempt),
        }
    }
}

/// The shell of user `!cmd`s (pi's `getShellCommandPrefix()` and `getShellPath()`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShellSettings {
    /// `shellCommandPrefix`: run as `prefix\ncommand` (e.g. `shopt -s expand_aliases`).
    pub command_prefix: Option<String>,
    /// `shellPath`: the shell instead of `/bin/bash`.
    pub shell_path: Option<String>,
}

impl ShellSettings {
    /// The shell settings of merged settings files.
    pub fn from_settings(settings: &Settings) -> Self {
        ShellSettings {
            command_prefix: settings.shell_command_prefix().map(str::to_owned),
            shell_path: settings.shell_path(),
        }
    }
}

/// What a session reads from the settings while it runs.
///
/// [`SessionSettings::default`] is what an empty settings file gives (pi's defaults: automatic
/// compaction and retry on), so passing it and passing no settings at all mean the same.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SessionSettings {
    /// `compaction.*` (`enabled` switches automatic compaction; manual compaction always works).
    pub compaction: CompactionSettings,
    /// `retry.*`.
    pub retry: RetrySettings,
}

impl Default for SessionSettings {
    /// pi's defaults, as [`SessionSettings::from_settings`] of empty settings.
    fn default() -> Self {
        SessionSettings { compaction: CompactionSettings::default(), retry: RetrySettings::default() }
    }
}

impl SessionSettings {
    /// Neither automatic compaction nor auto-retry (pi's defaults otherwise).
    pub fn manual() -> Self {
        SessionSettings {
            compaction: CompactionSettings { enabled: false, ..CompactionSettings::default() },
            retry: RetrySettings { enabled: false, ..RetrySettings::default() },
        }
    }

    /// The session settings of merged settings files (pi's defaults for unset keys).
    pub fn from_settings(settings: &Settings) -> Self {
        SessionSettings {
            compaction: CompactionSettings {
                enabled: settings.compaction_enabled(),
                reserve_tokens: settings.compaction_reserve_tokens(),
                keep_recent_tokens: settings.compaction_keep_recent_tokens(),
            },
            retry: RetrySettings {
                enabled: settings.retry_enabled(),
                max_retries: u32::try_from(settings.retry_max_retries()).unwrap_or(u32::MAX),
                base_delay_ms: settings.retry_base_delay_ms(),
                max_delay_ms: settings.retry_max_agent_delay_ms(),
            },
        }
    }
}
