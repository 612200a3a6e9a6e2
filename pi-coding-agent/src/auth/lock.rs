//! The auth.json lock, compatible with the `proper-lockfile` lock pi takes: a directory named
//! `<resolved file>.lock`, created with `mkdir` (atomic), removed on release, and taken over when
//! its modification time is older than the stale limit (a holder that died). A pi 1.6.0 process
//! and ours therefore exclude each other.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// How old a lock directory must be before it counts as abandoned (pi's async lock: 30 s).
pub const STALE_AFTER: Duration = Duration::from_secs(30);

/// How long to wait for another holder before giving up (pi waits up to the stale limit).
pub const WAIT_AT_MOST: Duration = Duration::from_secs(30);

/// A held lock; released (the directory removed) on drop.
#[derive(Debug)]
pub struct FileLock {
    dir: PathBuf,
}

impl FileLock {
    /// Locks `file` (which must exist): its symlinks resolved, so aliases share one lock. Waits
    /// with growing pauses (10 ms doubling, at most 1 s) while another process holds it, up to
    /// [`WAIT_AT_MOST`]; then fails with pi's "Lock file is already being held".
    pub fn acquire(file: &Path) -> io::Result<FileLock> {
        Self::acquire_within(file, WAIT_AT_MOST)
    }

    /// [`FileLock::acquire`] with another wait limit.
    pub fn acquire_within(file: &Path, wait: Duration) -> io::Result<FileLock> {
        let resolved = std::fs::canonicalize(file)?;
        let mut dir = resolved.into_os_string();
        dir.push(".lock");
        let dir = PathBuf::from(dir);
        let deadline = Instant::now() + wait;
        let mut pause = Duration::from_millis(10);
        loop {
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(FileLock { dir }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    if is_stale(&dir) {
                        // Another waiter may remove it first; either way, try again at once.
                        let _ = std::fs::remove_dir(&dir);
                        continue;
                    }
                }
                Err(e) => return Err(e),
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(io::Error::new(io::ErrorKind::WouldBlock, "Lock file is already being held"));
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_secs(1));
        }
    }

    /// The lock directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }
}

fn is_stale(dir: &Path) -> bool {
    let Ok(modified) = std::fs::metadata(dir).and_then(|m| m.modified()) else {
        return false;
    };
    SystemTime::now().duration_since(modified).is_ok_and(|age| age > STALE_AFTER)
}

impl Drop for FileLock {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir(&self.dir) {
            tracing::warn!(dir = %self.dir.display(), error = %e, "could not release the auth.json lock");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_excludes_and_a_released_one_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth.json");
        std::fs::write(&file, "{}").unwrap();
        let held = FileLock::acquire(&file).unwrap();
        assert!(held.path().is_dir());
        let err = FileLock::acquire_within(&file, Duration::ZERO).unwrap_err();
        assert_eq!(err.to_string(), "Lock file is already being held");
        drop(held);
        assert!(!dir.path().join("auth.json.lock").exists());
        FileLock::acquire_within(&file, Duration::ZERO).unwrap();
    }

    #[test]
    fn a_stale_lock_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth.json");
        std::fs::write(&file, "{}").unwrap();
        let lock_dir = dir.path().join("auth.json.lock");
        std::fs::create_dir(&lock_dir).unwrap();
        let old = SystemTime::now() - Duration::from_secs(120);
        std::fs::File::open(&lock_dir).unwrap().set_modified(old).unwrap();
        FileLock::acquire_within(&file, Duration::ZERO).unwrap();
    }
}
