//! Where settings live: the two files (with pi's lock) or memory (pi's `InMemorySettingsStorage`,
//! for SDK users and tests).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use super::SettingsScope;

/// A store of the two settings documents (pi's `SettingsStorage`).
pub trait SettingsStorage: Send + Sync {
    /// Runs `f` on the current text of `scope` (`None` when absent) under the store's lock; when
    /// `f` returns text, it is written before the lock is released.
    fn with_lock(&self, scope: SettingsScope, f: &mut dyn FnMut(Option<&str>) -> Option<String>) -> io::Result<()>;

    /// The path of `scope`'s file, for messages (`None` in memory).
    fn path(&self, scope: SettingsScope) -> Option<PathBuf> {
        let _ = scope;
        None
    }
}

/// `<agent_dir>/settings.json` and `<cwd>/.pi/settings.json` (pi's `FileSettingsStorage`).
#[derive(Clone, Debug)]
pub struct FileSettingsStorage {
    global: PathBuf,
    project: PathBuf,
}

impl FileSettingsStorage {
    /// The files of `cwd` and `agent_dir`.
    pub fn new(cwd: &Path, agent_dir: &Path) -> Self {
        FileSettingsStorage {
            global: crate::session::resolve_path(agent_dir).join("settings.json"),
            project: crate::session::resolve_path(cwd).join(".pi").join("settings.json"),
        }
    }

    fn file(&self, scope: SettingsScope) -> &Path {
        match scope {
            SettingsScope::Global => &self.global,
            SettingsScope::Project => &self.project,
        }
    }
}

/// pi's lock (`proper-lockfile`): the directory `<file>.lock`, taken with `mkdir`, retried 10
/// times 20 ms apart, considered stale after 10 s without an update.
struct FileLock(PathBuf);

impl FileLock {
    fn acquire(file: &Path) -> io::Result<Self> {
        let mut lock = file.as_os_str().to_owned();
        lock.push(".lock");
        let lock = PathBuf::from(lock);
        for attempt in 1..=10 {
            match std::fs::create_dir(&lock) {
                Ok(()) => return Ok(FileLock(lock)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let stale = std::fs::metadata(&lock)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| SystemTime::now().duration_since(t).ok())
                        .is_some_and(|age| age > Duration::from_secs(10));
                    if stale {
                        let _ = std::fs::remove_dir(&lock);
                        continue;
                    }
                    if attempt == 10 {
                        return Err(io::Error::new(io::ErrorKind::WouldBlock, "Lock file is already being held"));
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(io::ErrorKind::WouldBlock, "Lock file is already being held"))
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

impl SettingsStorage for FileSettingsStorage {
    fn with_lock(&self, scope: SettingsScope, f: &mut dyn FnMut(Option<&str>) -> Option<String>) -> io::Result<()> {
        let path = self.file(scope);
        let exists = path.exists();
        let mut lock = if exists { Some(FileLock::acquire(path)?) } else { None };
        let current = if exists { Some(std::fs::read_to_string(path)?) } else { None };
        if let Some(next) = f(current.as_deref()) {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            if lock.is_none() {
                lock = Some(FileLock::acquire(path)?);
            }
            std::fs::write(path, next)?;
        }
        drop(lock);
        Ok(())
    }

    fn path(&self, scope: SettingsScope) -> Option<PathBuf> {
        Some(self.file(scope).to_path_buf())
    }
}

/// Both documents in memory (pi's `InMemorySettingsStorage`).
#[derive(Debug, Default)]
pub struct InMemorySettingsStorage {
    docs: Mutex<[Option<String>; 2]>,
}

impl InMemorySettingsStorage {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The text of `scope`, as last written.
    pub fn text(&self, scope: SettingsScope) -> Option<String> {
        self.docs.lock().unwrap_or_else(|e| e.into_inner())[scope as usize].clone()
    }
}

impl SettingsStorage for InMemorySettingsStorage {
    fn with_lock(&self, scope: SettingsScope, f: &mut dyn FnMut(Option<&str>) -> Option<String>) -> io::Result<()> {
        let mut docs = self.docs.lock().unwrap_or_else(|e| e.into_inner());
        let slot = &mut docs[scope as usize];
        if let Some(next) = f(slot.as_deref()) {
            *slot = Some(next);
        }
        Ok(())
    }
}
