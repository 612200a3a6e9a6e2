//! pi's `runClipboardCommand`: one clipboard tool (`wl-copy`, `xclip`, `xsel`, `wl-paste`, …) run
//! from `/` in a process group of its own (a writer that daemonizes to own the selection is not
//! stopped by Ctrl+Z sent to pi's group and does not pin pi's working directory), with its input
//! written to stdin, its output read (when there is no input) up to 50 MiB, and killed when it
//! takes longer than its timeout. A tool that cannot start, fails, times out or writes too much
//! gives `None`; an empty output is a success.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// pi's default timeout of a clipboard command.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_millis(3000);
/// pi's timeout of a text read or write (`timeoutMs: 5000`).
pub(crate) const TEXT_TIMEOUT: Duration = Duration::from_millis(5000);
/// pi's timeout of the list of types on the clipboard (`DEFAULT_LIST_TIMEOUT_MS`).
pub(crate) const LIST_TIMEOUT: Duration = Duration::from_millis(1000);
/// pi's `maxBufferBytes` default: more output than this fails the command.
const MAX_OUTPUT: usize = 50 * 1024 * 1024;

/// How often the child is polled while it runs.
const POLL: Duration = Duration::from_millis(5);

/// Runs `command` with `args`; `input` goes to its stdin (then its output is not read). The
/// output, or `None` (see the module docs).
pub(crate) fn run_clipboard_command(
    command: &str,
    args: &[&str],
    input: Option<&[u8]>,
    timeout: Duration,
) -> Option<Vec<u8>> {
    let mut cmd = Command::new(command);
    cmd.args(args)
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(if input.is_some() { Stdio::null() } else { Stdio::piped() })
        .stderr(Stdio::null())
        .process_group(0);
    let mut child = cmd.spawn().ok()?;
    let deadline = Instant::now() + timeout;
    // A writer may exit before it read everything: its broken pipe is not an error (as pi's).
    let stdin = child.stdin.take();
    let input = input.map(<[u8]>::to_vec);
    // Not joined: a daemon the tool left behind may hold the pipe without reading it.
    std::thread::spawn(move || {
        if let (Some(mut stdin), Some(input)) = (stdin, input) {
            let _ = stdin.write_all(&input);
        }
    });
    let (tx, rx) = mpsc::channel();
    if let Some(mut stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            let mut out = Vec::new();
            let read = (&mut stdout).take(MAX_OUTPUT as u64 + 1).read_to_end(&mut out);
            let _ = tx.send(read.ok().filter(|_| out.len() <= MAX_OUTPUT).map(|_| out));
        });
    } else {
        let _ = tx.send(Some(Vec::new()));
    }
    let status = wait_until(&mut child, deadline);
    let Some(status) = status else {
        kill(&mut child);
        return None;
    };
    // The output pipe closes when the tool (and whatever it left holding it) is done.
    let output = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())).ok().flatten();
    status.success().then_some(output).flatten()
}

/// The child's exit status, or `None` when it is still running at `deadline`.
fn wait_until(child: &mut Child, deadline: Instant) -> Option<std::process::ExitStatus> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL),
            Ok(None) | Err(_) => return None,
        }
    }
}

/// SIGKILL to the tool (pi kills the child alone; the group is the tool's own) and reaps it.
fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_read_and_an_empty_output_is_a_success() {
        assert_eq!(run_clipboard_command("printf", &["abc"], None, DEFAULT_TIMEOUT), Some(b"abc".to_vec()));
        assert_eq!(run_clipboard_command("true", &[], None, DEFAULT_TIMEOUT), Some(Vec::new()));
    }

    #[test]
    fn input_reaches_the_tool_and_a_failure_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out");
        let script = format!("cat > '{}'", file.display());
        assert!(run_clipboard_command("sh", &["-c", &script], Some(b"copied"), DEFAULT_TIMEOUT).is_some());
        assert_eq!(std::fs::read(&file).unwrap(), b"copied");
        assert_eq!(run_clipboard_command("sh", &["-c", "exit 3"], Some(b"x"), DEFAULT_TIMEOUT), None);
        assert_eq!(run_clipboard_command("/nonexistent/clipboard-tool", &[], None, DEFAULT_TIMEOUT), None);
    }

    #[test]
    fn a_tool_that_hangs_is_killed_at_its_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let script = format!("echo $$ > '{}'; exec sleep 30", pid_file.display());
        assert_eq!(run_clipboard_command("sh", &["-c", &script], None, Duration::from_millis(200)), None);
        let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
        // Killed and reaped when the call returns (a `sleep 30` left running would still exist).
        assert!(nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err());
    }

    #[test]
    fn the_tool_runs_from_the_root_in_its_own_process_group() {
        let out =
            run_clipboard_command("sh", &["-c", "pwd; cut -d' ' -f5 /proc/$$/stat"], None, DEFAULT_TIMEOUT).unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("/"));
        let pgid: i32 = lines.next().unwrap().trim().parse().unwrap();
        assert_ne!(pgid, nix::unistd::getpgrp().as_raw());
    }
}
