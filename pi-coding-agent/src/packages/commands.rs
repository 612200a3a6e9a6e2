//! Running `npm` and `git` as pi does: output inherited for installs, captured for queries, and
//! pi's error texts (`<cmd> <args> failed with code N`). A missing program is named.

use std::path::Path;
use std::process::{Command, Stdio};

use super::PackageError;

fn spawn_error(command: &str, e: std::io::Error) -> PackageError {
    if e.kind() == std::io::ErrorKind::NotFound {
        PackageError::MissingProgram(command.to_string())
    } else {
        PackageError::Other(format!("Failed to run {command}: {e}"))
    }
}

/// Runs `command args` in `cwd` with the terminal's output (stdout goes to stderr when
/// `stdout_to_stderr`, so a caller's stdout stays clean), failing on a non-zero exit.
pub fn run(command: &str, args: &[String], cwd: Option<&Path>, stdout_to_stderr: bool) -> Result<(), PackageError> {
    let mut cmd = Command::new(command);
    cmd.args(args).stdin(Stdio::null());
    if stdout_to_stderr {
        cmd.stdout(std::io::stderr());
    }
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let status = cmd.status().map_err(|e| spawn_error(command, e))?;
    if status.success() {
        return Ok(());
    }
    let code = status.code().map_or_else(|| "null".to_string(), |c| c.to_string());
    Err(PackageError::Other(format!("{command} {} failed with code {code}", args.join(" "))))
}

/// Runs `command args` and returns its trimmed stdout (pi's `runCommandCapture`).
pub fn capture(command: &str, args: &[&str], cwd: Option<&Path>, env: &[(&str, &str)]) -> Result<String, PackageError> {
    let mut cmd = Command::new(command);
    cmd.args(args).stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let out = cmd.output().map_err(|e| spawn_error(command, e))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        return Ok(stdout.trim().to_string());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let status = match out.status.code() {
        Some(c) => format!("code {c}"),
        None => "signal unknown".to_string(),
    };
    let detail = if stderr.is_empty() { stdout } else { stderr.into_owned() };
    Err(PackageError::Other(format!("{command} {} failed with {status}: {detail}", args.join(" "))))
}
