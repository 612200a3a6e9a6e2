//! pi's MCP OAuth credential store (`McpOAuthCredentialStore` in `extensions/mcp/oauth.ts`):
//! `<agent-dir>/mcp-auth.json`, one state per server keyed `mcp__<server>|<url>` (the legacy key,
//! the URL alone, is taken over on first load), written as `JSON.stringify(states, null, 2)` with
//! mode 0600 under an exclusive file lock.
//!
//! A state holds `serverUrl`, `discovery`, `clientInformation`, `oauthState`, `codeVerifier`,
//! `tokens` and `tokensExpireAt`, as pi-mcp's `McpOAuthProvider` writes them.

use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::naming::mcp_namespace;

/// A server's stored state (a JSON object).
pub type OAuthState = Map<String, Value>;

/// Reading or writing `mcp-auth.json` failed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct StoreError(pub String);

/// `mcp-auth.json` of an agent directory.
#[derive(Clone, Debug)]
pub struct McpOAuthCredentialStore {
    path: PathBuf,
}

/// The normalised URL (`String(new URL(url))`): a bare origin gets its `/`.
pub fn normalize_url(url: &str) -> String {
    reqwest::Url::parse(url).map(|u| u.to_string()).unwrap_or_else(|_| url.to_owned())
}

fn store_keys(name: &str, server_url: &str) -> (String, String) {
    let legacy = normalize_url(server_url);
    (format!("{}|{legacy}", mcp_namespace(name)), legacy)
}

fn parse_states(text: &str) -> Result<Map<String, Value>, StoreError> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Ok(Map::new()),
        Err(e) => Err(StoreError(format!("Invalid mcp-auth.json: {e}"))),
    }
}

fn serialize_states(states: &Map<String, Value>) -> String {
    format!("{}\n", super::json_text::to_string_indented(&Value::Object(states.clone()), "  "))
}

impl McpOAuthCredentialStore {
    /// The store of `agent_dir`.
    pub fn new(agent_dir: &Path) -> Self {
        McpOAuthCredentialStore { path: agent_dir.join("mcp-auth.json") }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `update` on the parsed states under an exclusive lock; writes them back when it returns
    /// `true`.
    fn with_lock<T>(&self, update: impl FnOnce(&mut Map<String, Value>) -> (T, bool)) -> Result<T, StoreError> {
        use std::os::unix::fs::OpenOptionsExt;
        let err = |e: std::io::Error| StoreError(format!("{}: {e}", self.path.display()));
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&self.path)
            .map_err(err)?;
        let lock = nix::fcntl::Flock::lock(file.try_clone().map_err(err)?, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| StoreError(format!("{}: {e}", self.path.display())))?;
        let mut text = String::new();
        file.read_to_string(&mut text).map_err(err)?;
        let mut states = parse_states(&text)?;
        let (result, write) = update(&mut states);
        if write {
            file.set_len(0).map_err(err)?;
            file.rewind().map_err(err)?;
            file.write_all(serialize_states(&states).as_bytes()).map_err(err)?;
        }
        drop(lock);
        Ok(result)
    }

    /// The store of one server.
    pub fn for_server(&self, name: &str, server_url: &str) -> ServerStore {
        let (key, legacy_key) = store_keys(name, server_url);
        ServerStore { store: self.clone(), key, legacy_key }
    }

    /// Removes a server's state; `true` when one was stored.
    pub fn remove(&self, name: &str, server_url: &str) -> Result<bool, StoreError> {
        let (key, legacy_key) = store_keys(name, server_url);
        self.with_lock(|states| {
            let stored = if states.contains_key(&key) {
                key
            } else if states.contains_key(&legacy_key) {
                legacy_key
            } else {
                return (false, false);
            };
            states.shift_remove(&stored);
            (true, true)
        })
    }
}

/// The state of one server in the store.
#[derive(Clone, Debug)]
pub struct ServerStore {
    store: McpOAuthCredentialStore,
    key: String,
    legacy_key: String,
}

impl ServerStore {
    /// The stored state; the first server to load legacy state takes it over.
    pub fn load(&self) -> Result<Option<OAuthState>, StoreError> {
        let (key, legacy) = (self.key.clone(), self.legacy_key.clone());
        self.store.with_lock(move |states| {
            if let Some(Value::Object(state)) = states.get(&key) {
                return (Some(state.clone()), false);
            }
            match states.shift_remove(&legacy) {
                Some(Value::Object(state)) => {
                    states.insert(key, Value::Object(state.clone()));
                    (Some(state), true)
                }
                Some(other) => {
                    states.insert(legacy, other);
                    (None, false)
                }
                None => (None, false),
            }
        })
    }

    /// Replaces the stored state.
    pub fn save(&self, state: OAuthState) -> Result<(), StoreError> {
        let key = self.key.clone();
        self.store.with_lock(move |states| {
            states.insert(key, Value::Object(state));
            ((), true)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn states_are_keyed_by_name_and_url_and_legacy_state_is_taken_over() {
        let dir = tempfile::tempdir().expect("dir");
        let store = McpOAuthCredentialStore::new(dir.path());
        std::fs::write(store.path(), r#"{"http://h/mcp": {"serverUrl": "http://h/mcp"}}"#).expect("write");
        let server = store.for_server("my-server", "http://h/mcp");
        let loaded = server.load().expect("load").expect("state");
        assert_eq!(loaded["serverUrl"], json!("http://h/mcp"));
        let text = std::fs::read_to_string(store.path()).expect("read");
        assert!(text.contains("\"mcp__my_server|http://h/mcp\""), "{text}");
        assert!(text.ends_with("}\n"));
        assert!(store.remove("my-server", "http://h/mcp").expect("remove"));
        assert!(!store.remove("my-server", "http://h/mcp").expect("remove"));
        assert_eq!(std::fs::read_to_string(store.path()).expect("read"), "{}\n");
    }
}
