//! One stored credential of auth.json: `{"type":"api_key","key":…,"env":{…}}` or
//! `{"type":"oauth","refresh":…,"access":…,"expires":…, …provider fields}`, kept as the JSON object
//! it was read as (key order and provider-specific fields survive a rewrite).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The `type` of a stored credential.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CredentialType {
    /// `"api_key"`.
    ApiKey,
    /// `"oauth"`.
    OAuth,
    /// Any other value (kept, never used for requests).
    Other(String),
}

impl CredentialType {
    /// The string auth.json stores.
    pub fn as_str(&self) -> &str {
        match self {
            CredentialType::ApiKey => "api_key",
            CredentialType::OAuth => "oauth",
            CredentialType::Other(s) => s,
        }
    }
}

/// A credential as auth.json stores it.
///
/// ```
/// use pi_coding_agent::auth::{Credential, CredentialType};
/// let key = Credential::api_key("sk-1");
/// assert_eq!(serde_json::to_string(&key).unwrap(), r#"{"type":"api_key","key":"sk-1"}"#);
/// let oauth = Credential::oauth("acc", "ref", 1_700_000_000_000);
/// assert_eq!(oauth.kind(), CredentialType::OAuth);
/// assert_eq!(serde_json::to_string(&oauth).unwrap(), r#"{"type":"oauth","refresh":"ref","access":"acc","expires":1700000000000}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Credential(Map<String, Value>);

impl Credential {
    /// `{"type":"api_key","key":key}` (what pi's API-key login stores).
    pub fn api_key(key: impl Into<String>) -> Self {
        let mut map = Map::new();
        map.insert("type".into(), "api_key".into());
        map.insert("key".into(), Value::String(key.into()));
        Credential(map)
    }

    /// `{"type":"oauth","refresh":…,"access":…,"expires":…}` (pi's OAuth login: the type, then the
    /// provider's credentials); `expires` is milliseconds since the epoch.
    pub fn oauth(access: impl Into<String>, refresh: impl Into<String>, expires_ms: u64) -> Self {
        let mut map = Map::new();
        map.insert("type".into(), "oauth".into());
        map.insert("refresh".into(), Value::String(refresh.into()));
        map.insert("access".into(), Value::String(access.into()));
        map.insert("expires".into(), expires_ms.into());
        Credential(map)
    }

    /// Wraps a JSON object read from auth.json.
    pub fn from_json(map: Map<String, Value>) -> Self {
        Credential(map)
    }

    /// The JSON object.
    pub fn as_json(&self) -> &Map<String, Value> {
        &self.0
    }

    /// The JSON object, by value.
    pub fn into_json(self) -> Map<String, Value> {
        self.0
    }

    /// Its `type`.
    pub fn kind(&self) -> CredentialType {
        match self.0.get("type").and_then(Value::as_str) {
            Some("api_key") => CredentialType::ApiKey,
            Some("oauth") => CredentialType::OAuth,
            Some(other) => CredentialType::Other(other.to_owned()),
            None => CredentialType::Other(String::new()),
        }
    }

    fn str_field(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(Value::as_str)
    }

    /// An API-key credential's `key` as written (`$VAR`, `!command` or literal).
    pub fn key(&self) -> Option<&str> {
        self.str_field("key")
    }

    /// An OAuth credential's access token.
    pub fn access(&self) -> Option<&str> {
        self.str_field("access")
    }

    /// An OAuth credential's refresh token.
    pub fn refresh(&self) -> Option<&str> {
        self.str_field("refresh")
    }

    /// An OAuth credential's expiry, milliseconds since the epoch.
    pub fn expires(&self) -> Option<f64> {
        self.0.get("expires").and_then(Value::as_f64)
    }

    /// The credential's `env` object: variables that take priority over the process environment
    /// for this provider.
    pub fn env(&self) -> HashMap<String, String> {
        self.0
            .get("env")
            .and_then(Value::as_object)
            .map(|env| env.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect())
            .unwrap_or_default()
    }

    /// Any field.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name)
    }

    /// Sets a field (kept in place when it exists, appended otherwise).
    pub fn set(&mut self, name: &str, value: Value) {
        self.0.insert(name.to_owned(), value);
    }

    /// pi's shape check of one entry (`ReadOnlyAuthStorage`): an `api_key` whose `key` is a string
    /// and whose `env` values are strings, or an `oauth` with string `access`/`refresh` and a
    /// finite `expires`.
    pub fn is_valid(&self) -> bool {
        match self.kind() {
            CredentialType::ApiKey => {
                let key_ok = self.0.get("key").is_none_or(Value::is_string);
                let env_ok =
                    self.0.get("env").is_none_or(|e| e.as_object().is_some_and(|o| o.values().all(Value::is_string)));
                key_ok && env_ok
            }
            CredentialType::OAuth => {
                self.access().is_some() && self.refresh().is_some() && self.expires().is_some_and(f64::is_finite)
            }
            CredentialType::Other(_) => false,
        }
    }
}
