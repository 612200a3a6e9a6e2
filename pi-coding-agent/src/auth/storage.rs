//! `AuthStorage`: credentials in `<agentDir>/auth.json`, as pi 1.6.0 stores them (one object keyed
//! by provider id, written with two-space indentation, file mode 0600 on creation, parent directory
//! 0700), every read and write under the lock pi takes (see [`super::lock`]), so a pi process and
//! ours never corrupt it. A file that does not parse is reported and never overwritten.

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use pi_ai::models::{ResolvedAuth, resolve_config_value_with, resolve_provider_auth};
use serde_json::{Map, Value};

use super::credential::{Credential, CredentialType};
use super::lock::FileLock;

/// Why auth.json could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The file could not be read, written or locked.
    #[error("Failed to access auth.json at {path}: {source}")]
    Io {
        /// auth.json.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a JSON object of credentials.
    #[error("Failed to read auth.json at {path}: {message}")]
    Parse {
        /// auth.json.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A models.json `apiKey` command gave no key (pi's `resolveConfigValueOrThrow`):
    /// `Failed to resolve API key for provider "p" from shell command: cmd`.
    #[error("Failed to resolve API key for provider \"{provider}\" from shell command: {command}")]
    ConfiguredKeyCommand {
        /// The provider.
        provider: String,
        /// The command, without its `!`.
        command: String,
    },
}

type Revision = (i64, i64, u64, u64);

fn revision(path: &Path) -> Option<Revision> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.mtime(), m.mtime_nsec(), m.len(), m.ino()))
}

#[derive(Debug, Default)]
struct Snapshot {
    data: Map<String, Value>,
    revision: Option<Revision>,
    /// Whether `data` was read at all (a missing file has no revision but is read).
    loaded: bool,
}

#[derive(Debug)]
enum Backend {
    File(PathBuf),
    Memory(Mutex<Option<String>>),
}

#[derive(Debug)]
struct Inner {
    backend: Backend,
    snapshot: Mutex<Snapshot>,
    runtime: Mutex<HashMap<String, String>>,
}

/// Credential storage backed by auth.json (or memory). Cheap to clone; clones share state.
///
/// ```
/// use pi_coding_agent::auth::{AuthStorage, Credential};
/// let dir = tempfile::tempdir().unwrap();
/// let auth = AuthStorage::create(dir.path().join("auth.json"));
/// auth.set("groq", Credential::api_key("gsk-1")).unwrap();
/// assert_eq!(auth.stored_api_key("groq").unwrap().as_deref(), Some("gsk-1"));
/// let text = std::fs::read_to_string(dir.path().join("auth.json")).unwrap();
/// assert_eq!(text, "{\n  \"groq\": {\n    \"type\": \"api_key\",\n    \"key\": \"gsk-1\"\n  }\n}");
/// ```
#[derive(Clone, Debug)]
pub struct AuthStorage {
    inner: Arc<Inner>,
}

thread_local! {
    /// The storage (its shared state's address) whose snapshot this thread has pinned; 0: none.
    static PINNED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Pins a storage's snapshot on this thread until dropped (then the previous pin is back).
struct Pin {
    previous: usize,
}

impl Pin {
    fn new(key: usize) -> Self {
        Pin { previous: PINNED.with(|p| p.replace(key)) }
    }
}

impl Drop for Pin {
    fn drop(&mut self) {
        PINNED.with(|p| p.set(self.previous));
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl AuthStorage {
    /// Storage at `path` (pi's `AuthStorage.create`). Nothing is touched until the first read; a
    /// read of a broken file returns [`AuthError::Parse`].
    pub fn create(path: impl Into<PathBuf>) -> Self {
        Self::with_backend(Backend::File(path.into()))
    }

    /// `<agent_dir>/auth.json`.
    pub fn for_agent_dir(agent_dir: &Path) -> Self {
        Self::create(agent_dir.join("auth.json"))
    }

    /// Storage in memory, starting with `data` (pi's `AuthStorage.inMemory`).
    pub fn in_memory(data: Map<String, Value>) -> Self {
        let text = serde_json::to_string_pretty(&Value::Object(data)).ok();
        Self::with_backend(Backend::Memory(Mutex::new(text)))
    }

    fn with_backend(backend: Backend) -> Self {
        AuthStorage {
            inner: Arc::new(Inner {
                backend,
                snapshot: Mutex::new(Snapshot::default()),
                runtime: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The file, for file storage.
    pub fn path(&self) -> Option<&Path> {
        match &self.inner.backend {
            Backend::File(p) => Some(p),
            Backend::Memory(_) => None,
        }
    }

    fn display_path(&self) -> PathBuf {
        self.path().map_or_else(|| PathBuf::from("<memory>"), Path::to_path_buf)
    }

    fn io(&self, source: std::io::Error) -> AuthError {
        AuthError::Io { path: self.display_path(), source }
    }

    /// Runs `f` on the current text under the lock; writes what it returns as the new text.
    fn with_lock<R>(
        &self,
        f: impl FnOnce(Option<&str>) -> Result<(R, Option<String>), AuthError>,
    ) -> Result<R, AuthError> {
        match &self.inner.backend {
            Backend::Memory(text) => {
                let mut text = lock(text);
                let (result, next) = f(text.as_deref())?;
                if let Some(next) = next {
                    *text = Some(next);
                }
                Ok(result)
            }
            Backend::File(path) => {
                self.ensure_file(path).map_err(|e| self.io(e))?;
                let _held = FileLock::acquire(path).map_err(|e| self.io(e))?;
                let current = match std::fs::read_to_string(path) {
                    Ok(text) => Some(text),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                    Err(e) => return Err(self.io(e)),
                };
                let (result, next) = f(current.as_deref())?;
                if let Some(next) = next {
                    write_file(path, &next).map_err(|e| self.io(e))?;
                }
                Ok(result)
            }
        }
    }

    fn ensure_file(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        }
        if !path.exists() {
            create_empty(path)?;
        }
        Ok(())
    }

    fn parse(&self, text: Option<&str>) -> Result<Map<String, Value>, AuthError> {
        let Some(text) = text else { return Ok(Map::new()) };
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if text.is_empty() {
            return Ok(Map::new());
        }
        let parse_error = |message: String| AuthError::Parse { path: self.display_path(), message };
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err(parse_error("expected an object".into())),
            Err(e) => Err(parse_error(e.to_string())),
        }
    }

    /// Parses auth.json text (for callers that hold the lock themselves).
    pub(super) fn parse_text(&self, text: &str) -> Result<Map<String, Value>, AuthError> {
        self.parse(Some(text))
    }

    /// Writes `data` to `path` while the caller holds the lock, and remembers it.
    pub(super) fn write_locked(&self, path: &Path, data: &Map<String, Value>) -> Result<(), AuthError> {
        let text = serde_json::to_string_pretty(data)
            .map_err(|e| AuthError::Parse { path: self.display_path(), message: e.to_string() })?;
        write_file(path, &text).map_err(|e| self.io(e))?;
        *lock(&self.inner.snapshot) = Snapshot { data: data.clone(), revision: revision(path), loaded: true };
        Ok(())
    }

    /// Re-reads the file (under the lock). On failure the last good contents stay in memory and
    /// the error is returned.
    pub fn reload(&self) -> Result<(), AuthError> {
        let path = self.path().map(Path::to_path_buf);
        let (data, rev) = self.with_lock(|text| {
            let data = self.parse(text)?;
            Ok(((data, path.as_deref().and_then(revision)), None))
        })?;
        *lock(&self.inner.snapshot) = Snapshot { data, revision: rev, loaded: true };
        Ok(())
    }

    /// The credentials as stored, re-read when the file changed since the last read.
    pub fn data(&self) -> Result<Map<String, Value>, AuthError> {
        self.with_data(Map::clone)
    }

    /// `f` of the credentials as stored (re-read first when the file changed), without copying
    /// them. Inside [`with_snapshot`](Self::with_snapshot) on this thread the file is not asked again.
    fn with_data<R>(&self, f: impl FnOnce(&Map<String, Value>) -> R) -> Result<R, AuthError> {
        let stale = match self.path() {
            Some(path) => {
                let snapshot = lock(&self.inner.snapshot);
                !snapshot.loaded || (!self.is_pinned() && revision(path) != snapshot.revision)
            }
            None => true,
        };
        if stale {
            self.reload()?;
        }
        Ok(f(&lock(&self.inner.snapshot).data))
    }

    /// Runs `f` with auth.json asked for changes once, when `f` starts: the reads `f` makes on
    /// this thread use that snapshot (a listing of every provider's credentials reads the file's
    /// metadata once, not a few times per provider). A file that cannot be read is not pinned:
    /// every read inside `f` reports it, as outside.
    pub fn with_snapshot<R>(&self, f: impl FnOnce() -> R) -> R {
        if self.is_pinned() || self.with_data(|_| ()).is_err() {
            return f();
        }
        let _pin = Pin::new(self.pin_key());
        f()
    }

    fn pin_key(&self) -> usize {
        Arc::as_ptr(&self.inner) as usize
    }

    fn is_pinned(&self) -> bool {
        PINNED.with(|p| p.get() == self.pin_key())
    }

    /// One provider's stored credential, exactly as stored (nothing resolved).
    pub fn get(&self, provider: &str) -> Result<Option<Credential>, AuthError> {
        self.with_data(|data| data.get(provider).and_then(Value::as_object).cloned().map(Credential::from_json))
    }

    /// Whether auth.json holds a credential for `provider`.
    pub fn has(&self, provider: &str) -> Result<bool, AuthError> {
        self.with_data(|data| data.contains_key(provider))
    }

    /// Every stored provider with its credential type, in file order (values not resolved).
    pub fn list(&self) -> Result<Vec<(String, CredentialType)>, AuthError> {
        let data = self.data()?;
        Ok(data
            .iter()
            .map(|(id, v)| {
                let kind = v.as_object().cloned().map(Credential::from_json).map(|c| c.kind());
                (id.clone(), kind.unwrap_or(CredentialType::Other(String::new())))
            })
            .collect())
    }

    /// Changes one provider's credential under the lock, against the file's current contents:
    /// `f` receives the stored credential and returns the new one, or `None` to leave the file
    /// alone. Returns the credential stored afterwards.
    pub fn modify(
        &self,
        provider: &str,
        f: impl FnOnce(Option<Credential>) -> Option<Credential>,
    ) -> Result<Option<Credential>, AuthError> {
        let path = self.path().map(Path::to_path_buf);
        let (result, data) = self.with_lock(|text| {
            let mut data = self.parse(text)?;
            let current = data.get(provider).and_then(Value::as_object).cloned().map(Credential::from_json);
            match f(current.clone()) {
                None => Ok(((current, data), None)),
                Some(next) => {
                    data.insert(provider.to_owned(), Value::Object(next.clone().into_json()));
                    let text = serde_json::to_string_pretty(&data)
                        .map_err(|e| AuthError::Parse { path: self.display_path(), message: e.to_string() })?;
                    Ok(((Some(next), data), Some(text)))
                }
            }
        })?;
        *lock(&self.inner.snapshot) = Snapshot { data, revision: path.as_deref().and_then(revision), loaded: true };
        Ok(result)
    }

    /// Stores `credential` for `provider` (what `/login` does).
    pub fn set(&self, provider: &str, credential: Credential) -> Result<(), AuthError> {
        self.modify(provider, |_| Some(credential)).map(drop)
    }

    /// Removes `provider`'s stored credential (what `/logout` does). Environment variables and
    /// models.json keys stay.
    pub fn remove(&self, provider: &str) -> Result<(), AuthError> {
        let path = self.path().map(Path::to_path_buf);
        let data = self.with_lock(|text| {
            let mut data = self.parse(text)?;
            data.shift_remove(provider);
            let text = serde_json::to_string_pretty(&data)
                .map_err(|e| AuthError::Parse { path: self.display_path(), message: e.to_string() })?;
            Ok((data, Some(text)))
        })?;
        *lock(&self.inner.snapshot) = Snapshot { data, revision: path.as_deref().and_then(revision), loaded: true };
        lock(&self.inner.runtime).remove(provider);
        Ok(())
    }

    /// A key for this process only, never written (pi's `--api-key`): it wins over everything.
    pub fn set_runtime_api_key(&self, provider: &str, key: impl Into<String>) {
        lock(&self.inner.runtime).insert(provider.to_owned(), key.into());
    }

    /// Forgets a runtime key.
    pub fn remove_runtime_api_key(&self, provider: &str) {
        lock(&self.inner.runtime).remove(provider);
    }

    /// The runtime key of `provider`, if one was set.
    pub fn runtime_api_key(&self, provider: &str) -> Option<String> {
        lock(&self.inner.runtime).get(provider).cloned()
    }

    /// The key auth.json gives `provider` (no environment): an `api_key` credential's `key`
    /// resolved (`$VAR` from the credential's `env`, then the process; `!command`), or an `oauth`
    /// credential's access token. `None` when nothing is stored or the key does not resolve.
    pub fn stored_api_key(&self, provider: &str) -> Result<Option<String>, AuthError> {
        let Some(credential) = self.get(provider)? else { return Ok(None) };
        Ok(match credential.kind() {
            CredentialType::ApiKey => credential.key().and_then(|key| {
                let env = credential.env();
                resolve_config_value_with(key, &|name| env.get(name).cloned())
            }),
            CredentialType::OAuth => credential.access().map(str::to_owned),
            CredentialType::Other(_) => None,
        })
    }

    /// The API key for `provider` the way pi resolves one without models.json: the runtime key,
    /// else the stored credential (which owns the provider: an `api_key` credential without a
    /// usable `key` falls back to the provider's environment variables, seen through the
    /// credential's `env`), else the environment variables of pi's `env-api-keys.js`. A provider
    /// authenticated by a header instead (`ANTHROPIC_AUTH_TOKEN`) has no key: see
    /// [`AuthStorage::resolve`].
    ///
    /// ```
    /// use pi_coding_agent::auth::{AuthStorage, Credential};
    /// let auth = AuthStorage::in_memory(Default::default());
    /// auth.set("openai", Credential::api_key("sk-stored")).unwrap();
    /// assert_eq!(auth.api_key("openai").unwrap().as_deref(), Some("sk-stored"));
    /// auth.set_runtime_api_key("openai", "sk-cli");
    /// assert_eq!(auth.api_key("openai").unwrap().as_deref(), Some("sk-cli"));
    /// ```
    pub fn api_key(&self, provider: &str) -> Result<Option<String>, AuthError> {
        Ok(self.resolve(provider, None, None)?.and_then(|a| a.api_key))
    }

    /// The whole auth of a request to `provider` (key, headers, variables such as Cloudflare's
    /// account id), in pi's order: `override_key` (a request's own key), the runtime key, the
    /// stored credential, then `configured` (a models.json `apiKey` as written, which owns the
    /// provider when present: a `$VAR` it names that is unset gives nothing), then the
    /// environment.
    pub fn resolve(
        &self,
        provider: &str,
        override_key: Option<&str>,
        configured: Option<&str>,
    ) -> Result<Option<ResolvedAuth>, AuthError> {
        let process = |name: &str| std::env::var(name).ok();
        if let Some(key) = override_key.map(str::to_owned).or_else(|| self.runtime_api_key(provider)) {
            return Ok(resolve_provider_auth(provider, Some(&key), &process));
        }
        if let Some(credential) = self.get(provider)? {
            if credential.kind() == CredentialType::OAuth {
                return Ok(credential.access().map(ResolvedAuth::key));
            }
            if credential.kind() != CredentialType::ApiKey {
                return Ok(None);
            }
            let env = credential.env();
            let lookup = |name: &str| env.get(name).cloned().or_else(|| std::env::var(name).ok());
            let key = credential.key().and_then(|k| resolve_config_value_with(k, &|n| env.get(n).cloned()));
            // pi hands the credential's `env` to the provider as `options.env` (Bedrock's
            // `AWS_PROFILE`, Vertex's project and location): it travels with the request.
            return Ok(resolve_provider_auth(provider, key.as_deref(), &lookup).map(|mut auth| {
                for (name, value) in &env {
                    auth.env.entry(name.clone()).or_insert_with(|| value.clone());
                }
                auth
            }));
        }
        if let Some(raw) = configured {
            let key = pi_ai::models::resolve_config_value(raw);
            if key.is_none()
                && let Some(command) = raw.strip_prefix('!')
            {
                // A command counts as configured auth without running, so its failure is the
                // request's error (an unset `$VAR` leaves the provider unconfigured instead).
                let (provider, command) = (provider.to_owned(), command.to_owned());
                return Err(AuthError::ConfiguredKeyCommand { provider, command });
            }
            return Ok(key.and_then(|k| resolve_provider_auth(provider, Some(&k), &process)));
        }
        Ok(resolve_provider_auth(provider, None, &process))
    }
}

/// Creates `path` holding `{}` (pi's `ensureFileExists`), before the lock can be taken (the lock
/// needs the file). The file appears with its content at once, never empty: it is written under
/// another name and linked into place, so a process that locks it and writes meanwhile is never
/// overwritten by a late `{}`. Where hard links are not possible, it is created and then written.
fn create_empty(path: &Path) -> std::io::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let unique = format!(".{name}.{}.{:?}.new", std::process::id(), std::thread::current().id());
    let staged = path.with_file_name(unique.replace(['(', ')'], ""));
    let linked = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&staged)
        .and_then(|mut f| f.write_all(b"{}"))
        .and_then(|()| std::fs::hard_link(&staged, path));
    let _ = std::fs::remove_file(&staged);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(_) => match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
            Ok(mut f) => f.write_all(b"{}"),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(e),
        },
    }
}

/// Writes auth.json in place (pi's `writeFileSync` with mode 0600, which applies on creation only,
/// so modes and ACLs set by an administrator stay).
fn write_file(path: &Path, text: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(path)?;
    file.write_all(text.as_bytes())?;
    file.sync_data()
}
