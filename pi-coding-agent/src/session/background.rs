//! Session writes off the async workers: a dedicated writer thread per manager.
//!
//! In background mode ([`SessionManager::write_in_background`](crate::session::SessionManager::write_in_background))
//! the manager still builds every line synchronously (cheap), but the `write` + `sync_data` run on
//! a `pi-session-writer` thread, in the order they were queued. Each queued write hands back an
//! acknowledgement; [`PendingWrites::wait`] awaits them without blocking a worker, so a caller
//! keeps pi's guarantee "an entry is durable before the next event that depends on it" by
//! awaiting the pending writes before it emits that event.
//!
//! After a failed write the thread writes nothing more to that file (the file stays a valid
//! prefix of the session: no later entry with a missing parent); the failure is reported once,
//! through the acknowledgement of the write that failed.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::mpsc;

use tokio::sync::oneshot;

use crate::session::{JsonlWriter, SessionError};

/// What the writer thread does with one queued write.
enum Kind {
    /// Create the file exclusively with these bytes (the first flush).
    Create(Vec<u8>),
    /// Append these bytes (complete lines).
    Append(Vec<u8>),
    /// Replace the whole file atomically.
    Rewrite(Vec<u8>),
}

struct Job {
    path: PathBuf,
    kind: Kind,
    done: oneshot::Sender<Result<(), SessionError>>,
}

/// The handle of a manager's writer thread; the thread ends when the handle is dropped (after
/// finishing what was queued).
#[derive(Debug)]
pub(crate) struct BackgroundWriter {
    tx: mpsc::Sender<Job>,
    pending: Vec<oneshot::Receiver<Result<(), SessionError>>>,
}

/// Writes queued in background mode and not yet awaited.
#[derive(Debug, Default)]
#[must_use = "a pending write is durable only once awaited"]
pub struct PendingWrites(Vec<oneshot::Receiver<Result<(), SessionError>>>);

impl PendingWrites {
    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Waits until every write is on disk (synced); the first failure, if any.
    pub async fn wait(self) -> Result<(), SessionError> {
        let mut first = Ok(());
        for ack in self.0 {
            let outcome = ack.await.unwrap_or_else(|_| Err(writer_gone()));
            if first.is_ok() {
                first = outcome;
            }
        }
        first
    }
}

fn writer_gone() -> SessionError {
    SessionError::io("writing the session", std::io::Error::other("the session writer thread stopped"))
}

impl BackgroundWriter {
    /// Starts the writer thread.
    pub(crate) fn start() -> Result<Self, SessionError> {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("pi-session-writer".into())
            .spawn(move || run(rx))
            .map_err(|e| SessionError::io("starting the session writer thread", e))?;
        Ok(BackgroundWriter { tx, pending: Vec::new() })
    }

    fn queue(&mut self, path: PathBuf, kind: Kind) {
        let (done, ack) = oneshot::channel();
        if let Err(mpsc::SendError(job)) = self.tx.send(Job { path, kind, done }) {
            // The thread is gone (it panicked): the write fails, visibly.
            let _ = job.done.send(Err(writer_gone()));
        }
        self.pending.push(ack);
    }

    /// Queues the first flush: the file created exclusively with `bytes`.
    pub(crate) fn create(&mut self, path: PathBuf, bytes: Vec<u8>) {
        self.queue(path, Kind::Create(bytes));
    }

    /// Queues an append of complete lines.
    pub(crate) fn append(&mut self, path: PathBuf, bytes: Vec<u8>) {
        self.queue(path, Kind::Append(bytes));
    }

    /// Queues an atomic replacement of the whole file.
    pub(crate) fn rewrite(&mut self, path: PathBuf, bytes: Vec<u8>) {
        self.queue(path, Kind::Rewrite(bytes));
    }

    /// Takes the acknowledgements of everything queued so far.
    pub(crate) fn take_pending(&mut self) -> PendingWrites {
        PendingWrites(std::mem::take(&mut self.pending))
    }
}

fn run(rx: mpsc::Receiver<Job>) {
    let mut failed: HashSet<PathBuf> = HashSet::new();
    for Job { path, kind, done } in rx {
        if failed.contains(&path) {
            // Already reported: nothing after a lost entry is written.
            let _ = done.send(Ok(()));
            continue;
        }
        let outcome = match kind {
            Kind::Create(bytes) => JsonlWriter::create_new_bytes(&path, &bytes).map(drop),
            Kind::Append(bytes) => JsonlWriter::open_append(&path).and_then(|mut w| w.append_bytes(&bytes)),
            Kind::Rewrite(bytes) => JsonlWriter::rewrite_bytes(&path, &bytes),
        };
        if outcome.is_err() {
            failed.insert(path);
        }
        let _ = done.send(outcome);
    }
}
