//! Per-file mutation queue (pi's `withFileMutationQueue`): edits and writes of one file run one
//! after another, in the order they were queued; different files proceed in parallel.
//!
//! The key is the file's real path (symlinks resolved), or the resolved path when the file does not
//! exist yet. Each key holds a fair (FIFO) async mutex that is dropped from the table once nobody
//! holds or waits for it.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

type Queues = Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>;

static QUEUES: LazyLock<Queues> = LazyLock::new(|| Mutex::new(HashMap::new()));

async fn queue_key(path: &Path) -> PathBuf {
    match tokio::fs::canonicalize(path).await {
        Ok(real) => real,
        Err(_) => path.to_path_buf(),
    }
}

/// Runs `f` once every earlier mutation of the same file has finished.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use pi_coding_agent::tools::mutation_queue::with_file_mutation_queue;
/// let n = with_file_mutation_queue("/tmp/some-file", || async { 41 + 1 }).await;
/// assert_eq!(n, 42);
/// # });
/// ```
pub async fn with_file_mutation_queue<T, F, Fut>(path: impl AsRef<Path>, f: F) -> T
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = T>,
{
    let key = queue_key(path.as_ref()).await;
    let lock = {
        let mut queues = QUEUES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        queues.entry(key.clone()).or_default().clone()
    };
    let result = {
        let _guard = lock.clone().lock_owned().await;
        f().await
    };
    let mut queues = QUEUES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // Two references left (the table's and ours): nobody else holds or waits for this file.
    if Arc::strong_count(&lock) == 2 {
        queues.remove(&key);
    }
    result
}

/// How many files currently have a queue (for tests: queues are removed when idle).
pub fn active_queues() -> usize {
    QUEUES.lock().unwrap_or_else(std::sync::PoisonError::into_inner).len()
}
