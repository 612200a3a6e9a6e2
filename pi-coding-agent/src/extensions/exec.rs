//! `pi.exec(command, args, options)`: run a real process (no shell) with a timeout, cancellation
//! and a combined output cap (pi's `execCommand`).

use std::process::Stdio;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// pi's default combined output cap: 256 MiB.
pub const DEFAULT_EXEC_MAX_BUFFER: usize = 256 * 1024 * 1024;
const FORCE_KILL_DELAY: Duration = Duration::from_millis(5000);
const STDIO_GRACE: Duration = Duration::from_millis(250);

/// Options of [`ExtensionApi::exec`](crate::extensions::ExtensionApi::exec).
#[derive(Clone, Debug, Default)]
pub struct ExecOptions {
    /// Cancels (kills) the command.
    pub cancel: Option<CancellationToken>,
    /// Kill after this many milliseconds (`0`/`None`: no timeout).
    pub timeout_ms: Option<u64>,
    /// Working directory (default: the session's cwd).
    pub cwd: Option<String>,
    /// Combined stdout+stderr byte cap; exceeding it kills the command with `truncated`.
    pub max_buffer: Option<usize>,
}

/// The result of [`ExtensionApi::exec`](crate::extensions::ExtensionApi::exec) (pi's `ExecResult`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecResult {
    /// Standard output.
    pub stdout: String,
    /// Standard error (the spawn error's message when the command could not start).
    pub stderr: String,
    /// Exit code, or 128 + signal number when a signal ended the command; never 0 when truncated.
    pub code: i32,
    /// pi terminated the command: timeout, cancellation or output over the cap.
    pub killed: bool,
    /// Output exceeded the cap; stdout and stderr are incomplete.
    pub truncated: bool,
}

enum Chunk {
    Out(Vec<u8>),
    Err(Vec<u8>),
    Eof,
}

fn spawn_reader<R: tokio::io::AsyncRead + Unpin + Send + 'static>(
    mut reader: R,
    tx: mpsc::Sender<Chunk>,
    wrap: fn(Vec<u8>) -> Chunk,
) {
    tokio::spawn(async move {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.send(wrap(buf[..n].to_vec())).await.is_err() {
                        return;
                    }
                }
            }
        }
        let _ = tx.send(Chunk::Eof).await;
    });
}

fn decode(bytes: &[u8], truncated: bool) -> String {
    let bytes = if truncated {
        match std::str::from_utf8(bytes) {
            Err(e) if e.error_len().is_none() => &bytes[..e.valid_up_to()],
            _ => bytes,
        }
    } else {
        bytes
    };
    String::from_utf8_lossy(bytes).into_owned()
}

fn terminate(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGTERM);
    }
}

/// Runs `command args…` in `cwd` (pi's `execCommand`). Never fails: a command that cannot start
/// gives `code: 1` and the error in `stderr`.
pub async fn exec_command(command: &str, args: &[String], cwd: &str, options: ExecOptions) -> ExecResult {
    let max_buffer = options.max_buffer.unwrap_or(DEFAULT_EXEC_MAX_BUFFER);
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args).current_dir(cwd).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return ExecResult { stderr: e.to_string(), code: 1, ..Default::default() },
    };
    let pid = child.id();
    let (tx, mut rx) = mpsc::channel::<Chunk>(64);
    let mut open = 0;
    if let Some(out) = child.stdout.take() {
        spawn_reader(out, tx.clone(), Chunk::Out);
        open += 1;
    }
    if let Some(err) = child.stderr.take() {
        spawn_reader(err, tx.clone(), Chunk::Err);
        open += 1;
    }
    drop(tx);

    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let (mut total, mut truncated, mut killed) = (0usize, false, false);
    let cancel = options.cancel.unwrap_or_default();
    let timeout = options.timeout_ms.filter(|t| *t > 0).map(Duration::from_millis);
    let far = Duration::from_secs(365 * 24 * 3600);
    let timeout_sleep = tokio::time::sleep(timeout.unwrap_or(far));
    tokio::pin!(timeout_sleep);
    let force_kill = tokio::time::sleep(far);
    tokio::pin!(force_kill);
    let mut status = None;
    let mut exited_at: Option<tokio::time::Instant> = None;

    let mut take = |chunk: Vec<u8>, to_err: bool, truncated: &mut bool, total: &mut usize| -> bool {
        if *truncated {
            return false;
        }
        let remaining = max_buffer - *total;
        let part = if chunk.len() <= remaining {
            *total += chunk.len();
            &chunk[..]
        } else {
            *truncated = true;
            &chunk[..remaining]
        };
        if to_err {
            stderr.extend_from_slice(part)
        } else {
            stdout.extend_from_slice(part)
        }
        *truncated
    };

    loop {
        if status.is_some() && open == 0 {
            break;
        }
        let grace = exited_at.map(|t| t + STDIO_GRACE);
        tokio::select! {
            chunk = rx.recv(), if open > 0 => match chunk {
                Some(Chunk::Out(b)) | Some(Chunk::Err(b)) if truncated => drop(b),
                Some(Chunk::Out(b)) => if take(b, false, &mut truncated, &mut total) && !killed {
                    killed = true; terminate(pid);
                    force_kill.as_mut().reset(tokio::time::Instant::now() + FORCE_KILL_DELAY);
                },
                Some(Chunk::Err(b)) => if take(b, true, &mut truncated, &mut total) && !killed {
                    killed = true; terminate(pid);
                    force_kill.as_mut().reset(tokio::time::Instant::now() + FORCE_KILL_DELAY);
                },
                Some(Chunk::Eof) => open -= 1,
                None => open = 0,
            },
            s = child.wait(), if status.is_none() => {
                status = Some(s);
                exited_at = Some(tokio::time::Instant::now());
            },
            _ = &mut timeout_sleep, if !killed && status.is_none() => {
                killed = true; terminate(pid);
                force_kill.as_mut().reset(tokio::time::Instant::now() + FORCE_KILL_DELAY);
            },
            _ = cancel.cancelled(), if !killed && status.is_none() => {
                killed = true; terminate(pid);
                force_kill.as_mut().reset(tokio::time::Instant::now() + FORCE_KILL_DELAY);
            },
            _ = &mut force_kill, if status.is_none() => { let _ = child.start_kill(); },
            _ = tokio::time::sleep_until(grace.unwrap_or_else(tokio::time::Instant::now)), if grace.is_some() => break,
        }
        if truncated && open > 0 {
            // Stop reading on overflow: pi destroys both pipes.
            rx.close();
            open = 0;
        }
    }

    let code = match status {
        Some(Ok(s)) => {
            use std::os::unix::process::ExitStatusExt;
            s.code().or_else(|| s.signal().map(|sig| 128 + sig)).unwrap_or(1)
        }
        Some(Err(e)) => {
            if stderr.is_empty() {
                stderr = e.to_string().into_bytes();
            }
            1
        }
        None => 1,
    };
    ExecResult {
        stdout: decode(&stdout, truncated),
        stderr: decode(&stderr, truncated),
        code: if truncated && code == 0 { 1 } else { code },
        killed,
        truncated,
    }
}
