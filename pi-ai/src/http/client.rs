//! The shared client, the `User-Agent` and header merging.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The process-wide HTTP client, built on first use (rustls, HTTP/1.1 and HTTP/2, connection
/// pooling), with the default connect timeout. The idle timeouts are applied per request by
/// [`send_with_retries`](super::send_with_retries) and per read by
/// [`ResponseBody`](super::ResponseBody), not here.
pub fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| build_client(crate::options::DEFAULT_CONNECT_TIMEOUT))
}

/// The client for a connect timeout: the shared one for the default, otherwise one per distinct
/// value, kept for the process (a connect timeout is a property of a client in reqwest).
pub fn client_with_connect_timeout(connect_timeout: Duration) -> reqwest::Client {
    if connect_timeout == crate::options::DEFAULT_CONNECT_TIMEOUT {
        return client().clone();
    }
    static OTHERS: OnceLock<Mutex<HashMap<Duration, reqwest::Client>>> = OnceLock::new();
    let mut others = OTHERS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    others.entry(connect_timeout).or_insert_with(|| build_client(connect_timeout)).clone()
}

fn build_client(connect_timeout: Duration) -> reqwest::Client {
    let mut builder = reqwest::Client::builder();
    // `Duration::MAX` (no limit) would overflow reqwest's deadline arithmetic.
    if connect_timeout < Duration::from_secs(u64::from(u32::MAX)) {
        builder = builder.connect_timeout(connect_timeout);
    }
    builder.build().unwrap_or_else(|error| {
        tracing::warn!(%error, "could not build the configured HTTP client; using defaults");
        reqwest::Client::new()
    })
}

/// The version of pi this port follows, stated once: the `User-Agent` and `pi --version` use it.
pub const PI_VERSION: &str = "1.6.0";

/// pi's detailed `User-Agent`: `pi/<version> (<os>; <runtime>; <arch>)`, with Node's spelling of
/// the architecture (`x64`, `arm64`) and `rust` as the runtime.
pub fn user_agent() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        "x86" => "ia32",
        other => other,
    };
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    format!("pi/{PI_VERSION} ({os}; rust/{}; {arch})", rust_version())
}

fn rust_version() -> &'static str {
    option_env!("CARGO_PKG_RUST_VERSION").filter(|v| !v.is_empty()).unwrap_or("unknown")
}

/// Request headers: an ordered list whose names compare case-insensitively.
///
/// Setting an existing name replaces its value but keeps the spelling and slot of the first
/// setter, as JavaScript's `Headers` does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeaderMap {
    entries: Vec<(String, String)>,
}

impl HeaderMap {
    /// No headers.
    pub fn new() -> Self {
        HeaderMap::default()
    }

    /// Sets `name` to `value`.
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<String>) {
        let name = name.into();
        let value = value.into();
        match self.entries.iter_mut().find(|(k, _)| k.eq_ignore_ascii_case(&name)) {
            Some(slot) => slot.1 = value,
            None => self.entries.push((name, value)),
        }
    }

    /// Removes `name`.
    pub fn remove(&mut self, name: &str) {
        self.entries.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
    }

    /// Merges `headers` over these: `Some` sets, `None` removes.
    pub fn merge<I, K>(&mut self, headers: I)
    where
        I: IntoIterator<Item = (K, Option<String>)>,
        K: AsRef<str>,
    {
        for (name, value) in headers {
            match value {
                Some(value) => self.set(name.as_ref(), value),
                None => self.remove(name.as_ref()),
            }
        }
    }

    /// Merges a JSON object of string values (a model's `headers`); `null` removes.
    pub fn merge_json(&mut self, headers: &serde_json::Map<String, serde_json::Value>) {
        for (name, value) in headers {
            match value {
                serde_json::Value::String(s) => self.set(name.as_str(), s.clone()),
                serde_json::Value::Null => self.remove(name),
                other => self.set(name.as_str(), other.to_string()),
            }
        }
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.entries.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// Whether `name` is set to a non-blank value.
    pub fn has_value(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| !v.trim().is_empty())
    }

    /// The entries, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}
