//! The binary's `tracing` subscriber: warnings (for example "could not persist a message") are
//! never dropped. By default they are appended to `<agent_dir>/pi.log` (filter `warn`), so stderr
//! carries exactly the messages pi writes there. `PI_LOG`, else `RUST_LOG`, sets the filter; with
//! one set, print and json modes log to stderr instead (rpc's stdout is the protocol and the
//! interactive terminal is the UI, so those keep the file).

use std::path::Path;
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;

/// Where the log goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogTarget {
    /// stderr (print and json modes).
    Stderr,
    /// `<agent_dir>/pi.log` (rpc and interactive modes).
    AgentDirFile,
}

fn env_spec() -> Option<String> {
    std::env::var("PI_LOG").ok().filter(|s| !s.is_empty()).or_else(|| std::env::var("RUST_LOG").ok())
}

/// Installs the subscriber once for the process. A log file that cannot be opened falls back to
/// stderr, saying so.
pub fn init_logging(target: LogTarget, agent_dir: &Path) {
    let spec = env_spec();
    let to_stderr = target == LogTarget::Stderr && spec.is_some();
    let filter = spec.and_then(|s| EnvFilter::try_new(s).ok()).unwrap_or_else(|| EnvFilter::new("warn"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_target(true);
    let file = match to_stderr {
        true => None,
        false => {
            let path = agent_dir.join("pi.log");
            let opened = std::fs::create_dir_all(agent_dir)
                .and_then(|()| std::fs::OpenOptions::new().create(true).append(true).open(&path));
            match opened {
                Ok(f) => Some(f),
                Err(e) => {
                    #[allow(clippy::print_stderr)]
                    {
                        eprintln!("Warning: cannot open the log file {}: {e}; logging to stderr", path.display());
                    }
                    None
                }
            }
        }
    };
    // `try_init` fails only when a subscriber is already installed (tests, embedders): keep theirs.
    let _ = match file {
        Some(f) => builder.with_ansi(false).with_writer(Mutex::new(f)).try_init(),
        None => {
            use std::io::IsTerminal;
            builder.with_ansi(std::io::stderr().is_terminal()).with_writer(std::io::stderr).try_init()
        }
    };
}
