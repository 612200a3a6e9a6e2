//! The trust store: `<agent dir>/trust.json`, pi's saved project-trust decisions.
//!
//! The file is one JSON object from canonical directory paths to `true` (trusted), `false`
//! (untrusted) or `null` (no decision). A directory inherits the decision of its closest
//! ancestor that has one. Writes keep the keys sorted and end with a newline, exactly as pi
//! 1.6.0 writes them, under pi's lock (a `trust.json.lock` directory, as `proper-lockfile`
//! makes), so a Rust and a TypeScript pi sharing one agent dir never lose a decision.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value};

use super::TrustError;

/// How many times the lock is tried before giving up (pi: 10 attempts, 20 ms apart).
const LOCK_ATTEMPTS: u32 = 10;
const LOCK_DELAY: Duration = Duration::from_millis(20);
/// A lock older than this is stale and taken over (proper-lockfile's default).
const LOCK_STALE: Duration = Duration::from_secs(10);

/// A saved decision and the directory it was saved for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustEntry {
    /// The directory key in `trust.json` (the cwd itself or an ancestor).
    pub path: String,
    /// Trusted or not.
    pub decision: bool,
}

/// One change to the store: `None` removes the directory's decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustUpdate {
    /// The directory (canonicalized before it is saved).
    pub path: PathBuf,
    /// The decision; `None` clears it.
    pub decision: Option<bool>,
}

/// pi's `ProjectTrustStore`: `<agent dir>/trust.json`.
///
/// ```
/// use pi_coding_agent::trust::ProjectTrustStore;
/// let agent = tempfile::tempdir().unwrap();
/// let project = tempfile::tempdir().unwrap();
/// let store = ProjectTrustStore::new(agent.path());
/// assert_eq!(store.get(project.path()).unwrap(), None);
/// store.set(project.path(), true).unwrap();
/// assert_eq!(store.get(&project.path().join("sub")).unwrap(), Some(true));
/// ```
#[derive(Clone, Debug)]
pub struct ProjectTrustStore {
    path: PathBuf,
}

impl ProjectTrustStore {
    /// The store of `agent_dir` (`<agent_dir>/trust.json`).
    pub fn new(agent_dir: impl AsRef<Path>) -> Self {
        ProjectTrustStore { path: crate::session::resolve_path(agent_dir.as_ref()).join("trust.json") }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The decision that applies to `cwd`: its own or its closest ancestor's (pi's `get`).
    pub fn get(&self, cwd: &Path) -> Result<Option<bool>, TrustError> {
        Ok(self.get_entry(cwd)?.map(|e| e.decision))
    }

    /// The entry that applies to `cwd`, with the directory it was saved for (pi's `getEntry`).
    pub fn get_entry(&self, cwd: &Path) -> Result<Option<TrustEntry>, TrustError> {
        self.with_lock(|| {
            let data = read_trust_file(&self.path)?;
            Ok(find_nearest_entry(&data, cwd))
        })
    }

    /// Saves one decision for `cwd`.
    pub fn set(&self, cwd: &Path, decision: bool) -> Result<(), TrustError> {
        self.set_many(&[TrustUpdate { path: cwd.to_path_buf(), decision: Some(decision) }])
    }

    /// Applies several changes at once (pi's `setMany`).
    pub fn set_many(&self, updates: &[TrustUpdate]) -> Result<(), TrustError> {
        self.with_lock(|| {
            let mut data = read_trust_file(&self.path)?;
            for update in updates {
                let key = normalize_cwd(&update.path).to_string_lossy().into_owned();
                data.remove(&key);
                if let Some(decision) = update.decision {
                    data.insert(key, Some(decision));
                }
            }
            write_trust_file(&self.path, &data)
        })
    }

    fn with_lock<T>(&self, f: impl FnOnce() -> Result<T, TrustError>) -> Result<T, TrustError> {
        let lock = acquire_lock(&self.path)?;
        let result = f();
        drop(lock);
        result
    }
}

/// pi's `normalizeCwd`: `~` expanded, made absolute, symlinks resolved when the path exists.
pub fn normalize_cwd(cwd: &Path) -> PathBuf {
    let resolved = crate::session::resolve_path(cwd);
    std::fs::canonicalize(&resolved).unwrap_or(resolved)
}

type TrustData = BTreeMap<String, Option<bool>>;

fn io_error(path: &Path, e: std::io::Error) -> TrustError {
    TrustError::Io { path: path.to_path_buf(), message: e.to_string() }
}

fn read_trust_file(path: &Path) -> Result<TrustData, TrustError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TrustData::new()),
        Err(e) => return Err(io_error(path, e)),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let parsed: Value = serde_json::from_str(text)
        .map_err(|e| TrustError::Invalid(format!("Failed to read trust store {}: {e}", path.display())))?;
    let Value::Object(map) = parsed else {
        return Err(TrustError::Invalid(format!("Invalid trust store {}: expected an object", path.display())));
    };
    let mut data = TrustData::new();
    for (key, value) in map {
        let decision = match value {
            Value::Bool(b) => Some(b),
            Value::Null => None,
            _ => {
                return Err(TrustError::Invalid(format!(
                    "Invalid trust store {}: value for {} must be true, false, or null",
                    path.display(),
                    Value::String(key)
                )));
            }
        };
        data.insert(key, decision);
    }
    Ok(data)
}

fn write_trust_file(path: &Path, data: &TrustData) -> Result<(), TrustError> {
    let mut sorted = Map::new();
    for (key, value) in data {
        sorted.insert(key.clone(), value.map_or(Value::Null, Value::Bool));
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(sorted)).unwrap_or_else(|_| "{}".into());
    text.push('\n');
    std::fs::write(path, text).map_err(|e| io_error(path, e))
}

fn find_nearest_entry(data: &TrustData, cwd: &Path) -> Option<TrustEntry> {
    let start = normalize_cwd(cwd);
    for dir in start.ancestors() {
        let key = dir.to_string_lossy();
        if let Some(Some(decision)) = data.get(key.as_ref()) {
            return Some(TrustEntry { path: key.into_owned(), decision: *decision });
        }
    }
    None
}

/// The `trust.json.lock` directory; removed when dropped.
struct LockGuard(PathBuf);

impl Drop for LockGuard {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn acquire_lock(path: &Path) -> Result<LockGuard, TrustError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
    let mut lock = path.as_os_str().to_owned();
    lock.push(".lock");
    let lock = PathBuf::from(lock);
    for attempt in 1..=LOCK_ATTEMPTS {
        match std::fs::create_dir(&lock) {
            Ok(()) => return Ok(LockGuard(lock)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let stale = std::fs::metadata(&lock)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| SystemTime::now().duration_since(t).ok())
                    .is_some_and(|age| age > LOCK_STALE);
                if stale {
                    let _ = std::fs::remove_dir(&lock);
                    continue;
                }
                if attempt == LOCK_ATTEMPTS {
                    return Err(TrustError::Locked(lock));
                }
                std::thread::sleep(LOCK_DELAY);
            }
            Err(e) => return Err(io_error(&lock, e)),
        }
    }
    Err(TrustError::Locked(lock))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_sorted_keys_with_a_newline_and_clears_with_null() {
        let agent = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        let root_path = std::fs::canonicalize(root.path()).unwrap();
        let b = root_path.join("b");
        let a = root_path.join("a");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let store = ProjectTrustStore::new(agent.path());
        store.set(&b, false).unwrap();
        store.set(&a, true).unwrap();
        let text = std::fs::read_to_string(store.path()).unwrap();
        assert_eq!(text, format!("{{\n  \"{}\": true,\n  \"{}\": false\n}}\n", a.display(), b.display()));
        store.set_many(&[TrustUpdate { path: a.clone(), decision: None }]).unwrap();
        assert_eq!(store.get(&a).unwrap(), None);
        assert_eq!(
            store.get_entry(&b.join("x")).unwrap(),
            Some(TrustEntry { path: b.display().to_string(), decision: false })
        );
        assert!(!PathBuf::from(format!("{}.lock", store.path().display())).exists());
    }

    #[test]
    fn invalid_files_are_errors_with_pis_wording() {
        let agent = tempfile::tempdir().unwrap();
        let store = ProjectTrustStore::new(agent.path());
        std::fs::write(store.path(), "[]").unwrap();
        let err = store.get(agent.path()).unwrap_err().to_string();
        assert_eq!(err, format!("Invalid trust store {}: expected an object", store.path().display()));
        std::fs::write(store.path(), "{\"/x\": 1}").unwrap();
        let err = store.get(agent.path()).unwrap_err().to_string();
        assert!(err.ends_with("value for \"/x\" must be true, false, or null"), "{err}");
    }
}
