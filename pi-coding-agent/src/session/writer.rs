//! Writing a session file: created exclusively, then appended entry by entry, each write synced.
//!
//! Every entry is serialized first and written with a single `write_all` of one complete line,
//! then `sync_data`. A writer killed mid-append therefore leaves at most one torn last line, which
//! the reader skips with a warning.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::session::SessionError;

/// An open session file in append mode.
#[derive(Debug)]
pub struct JsonlWriter {
    file: File,
    path: PathBuf,
}

fn line_of<T: Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) -> Result<(), SessionError> {
    serde_json::to_writer(&mut *out, value)?;
    out.push(b'\n');
    Ok(())
}

/// `values` as JSON lines, each ending in `\n` (what a session file holds).
pub fn lines_of<'a, T: Serialize + 'a>(
    values: impl IntoIterator<Item = &'a T>,
    capacity: usize,
) -> Result<Vec<u8>, SessionError> {
    let mut buf = Vec::with_capacity(capacity);
    for v in values {
        line_of(v, &mut buf)?;
    }
    Ok(buf)
}

fn sync_dir(path: &Path) {
    // Make the new directory entry durable too; best effort (not every platform allows it).
    if let Some(dir) = path.parent()
        && let Ok(d) = File::open(dir)
    {
        let _ = d.sync_all();
    }
}

impl JsonlWriter {
    /// Creates `path` exclusively (`O_EXCL`, like pi's `wx`) and writes `lines`, one JSON line
    /// each, in one write; then syncs the file and its directory.
    pub fn create_new<'a, T: Serialize + 'a>(
        path: &Path,
        lines: impl IntoIterator<Item = &'a T>,
    ) -> Result<Self, SessionError> {
        Self::create_new_bytes(path, &lines_of(lines, 4096)?)
    }

    /// [`create_new`](Self::create_new) with the lines already encoded ([`lines_of`]).
    pub fn create_new_bytes(path: &Path, buf: &[u8]) -> Result<Self, SessionError> {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| SessionError::io(format!("creating session file {}", path.display()), e))?;
        file.write_all(buf).map_err(|e| SessionError::io(format!("writing {}", path.display()), e))?;
        file.sync_all().map_err(|e| SessionError::io(format!("syncing {}", path.display()), e))?;
        sync_dir(path);
        // Reopen in append mode so later writes always land at the end.
        drop(file);
        Self::open_append(path)
    }

    /// Opens an existing file for appending.
    pub fn open_append(path: &Path) -> Result<Self, SessionError> {
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| SessionError::io(format!("opening session file {}", path.display()), e))?;
        Ok(JsonlWriter { file, path: path.to_path_buf() })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends raw bytes (used to terminate a last line that lacks `\n`) and syncs.
    pub fn append_bytes(&mut self, bytes: &[u8]) -> Result<(), SessionError> {
        self.file.write_all(bytes).map_err(|e| SessionError::io(format!("appending to {}", self.path.display()), e))?;
        self.file.sync_data().map_err(|e| SessionError::io(format!("syncing {}", self.path.display()), e))
    }

    /// Appends one value as a JSON line and syncs it to disk.
    pub fn append<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SessionError> {
        let mut buf = Vec::with_capacity(512);
        line_of(value, &mut buf)?;
        self.append_bytes(&buf)
    }

    /// Replaces the whole file with `lines` atomically (temporary file, sync, rename). Used only
    /// after a migration.
    pub fn rewrite<'a, T: Serialize + 'a>(
        path: &Path,
        lines: impl IntoIterator<Item = &'a T>,
    ) -> Result<(), SessionError> {
        Self::rewrite_bytes(path, &lines_of(lines, 1 << 16)?)
    }

    /// [`rewrite`](Self::rewrite) with the lines already encoded ([`lines_of`]).
    pub fn rewrite_bytes(path: &Path, buf: &[u8]) -> Result<(), SessionError> {
        let tmp = path.with_extension(format!("jsonl.tmp-{}", std::process::id()));
        let res = (|| {
            let mut f = File::create(&tmp)?;
            f.write_all(buf)?;
            f.sync_all()?;
            std::fs::rename(&tmp, path)
        })();
        if let Err(e) = res {
            let _ = std::fs::remove_file(&tmp);
            return Err(SessionError::io(format!("rewriting {}", path.display()), e));
        }
        sync_dir(path);
        Ok(())
    }
}
