//! Running a shell command as pi does (`utils/shell.ts`), shared by the `bash` tool and the
//! user's `!cmd`s: which shell (`getShellConfig`), the spawn in its own process group, the merged
//! output as chunks, and killing the whole group.

use std::collections::BTreeMap;
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

/// After the shell exits, output still arriving from its background processes is read until the
/// pipes are idle this long (pi's `EXIT_STDIO_GRACE_MS`).
pub(crate) const EXIT_STDIO_GRACE: Duration = Duration::from_millis(100);

/// Session variables pi sets for the bash tool's commands; inherited values are removed first
/// (and user `!cmd`s never see them).
pub(crate) const SESSION_ENV_KEYS: [&str; 5] =
    ["PI_SESSION_ID", "PI_SESSION_FILE", "PI_PROVIDER", "PI_MODEL", "PI_REASONING_LEVEL"];

/// pi's `getShellConfig`: the `shellPath` setting (which must exist; an empty one counts as
/// unset), else `/bin/bash`, else `bash` on `PATH`, else `sh`. The error is pi's text.
pub(crate) fn resolve_shell(custom: Option<&str>) -> Result<String, String> {
    if let Some(path) = custom.filter(|p| !p.is_empty()) {
        if std::path::Path::new(path).exists() {
            return Ok(path.to_owned());
        }
        return Err(format!("Custom shell path not found: {path}"));
    }
    if std::path::Path::new("/bin/bash").exists() {
        return Ok("/bin/bash".to_owned());
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join("bash");
            if candidate.is_file() {
                return Ok(candidate.to_string_lossy().into_owned());
            }
        }
    }
    Ok("sh".to_owned())
}

/// Starts `shell -c command` in `cwd` with exactly `env`, in its own process group, stdin closed,
/// stdout and stderr piped; the child is killed if dropped.
pub(crate) fn spawn_shell(
    shell: &str,
    command: &str,
    cwd: &str,
    env: &BTreeMap<String, String>,
) -> std::io::Result<Child> {
    Command::new(shell)
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env_clear()
        .envs(env)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
}

/// The child's stdout and stderr as chunks in arrival order; the channel closes when both pipes
/// have closed.
pub(crate) fn output_chunks(child: &mut Child) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel::<Vec<u8>>(64);
    if let Some(out) = child.stdout.take() {
        tokio::spawn(pump(out, tx.clone()));
    }
    if let Some(err) = child.stderr.take() {
        tokio::spawn(pump(err, tx));
    }
    rx
}

async fn pump(mut r: impl tokio::io::AsyncRead + Unpin, tx: mpsc::Sender<Vec<u8>>) {
    let mut buf = vec![0u8; 32 * 1024];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if tx.send(buf[..n].to_vec()).await.is_err() {
                    break;
                }
            }
        }
    }
}

/// The process groups of running shell commands (pi's `trackedDetachedChildPids`), killed by
/// [`kill_tracked_process_groups`] when pi is told to stop.
static TRACKED_GROUPS: std::sync::Mutex<std::collections::BTreeSet<u32>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// A running command's process group, tracked until this guard is dropped (the command ended).
#[must_use = "the group is untracked when the guard is dropped"]
pub(crate) struct TrackedGroup(u32);

/// Tracks the process group `pid` leads (see [`spawn_shell`]) while the guard lives.
pub(crate) fn track_group(pid: u32) -> TrackedGroup {
    if pid != 0 {
        TRACKED_GROUPS.lock().unwrap_or_else(|e| e.into_inner()).insert(pid);
    }
    TrackedGroup(pid)
}

impl Drop for TrackedGroup {
    fn drop(&mut self) {
        TRACKED_GROUPS.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.0);
    }
}

/// Kills every tracked process group (the bash tool's and the user's `!` commands, with their
/// children), as pi's `killTrackedDetachedChildren` on SIGTERM, SIGHUP and SIGINT; returns how
/// many groups were signalled.
pub fn kill_tracked_process_groups() -> usize {
    let groups = std::mem::take(&mut *TRACKED_GROUPS.lock().unwrap_or_else(|e| e.into_inner()));
    for &pid in &groups {
        kill_process_tree(pid);
    }
    groups.len()
}

/// Kills a process group with SIGKILL, or the process alone if the group is gone, and waits
/// (at most half a second) until no member of the group is still running, so a pi that exits
/// right after leaves no process behind (SIGKILL is delivered asynchronously: a member not yet
/// scheduled would otherwise outlive pi's exit by a moment).
pub fn kill_process_tree(pid: u32) {
    let Ok(raw) = i32::try_from(pid) else { return };
    if killpg(Pid::from_raw(raw), Signal::SIGKILL).is_err() {
        let _ = kill(Pid::from_raw(raw), Signal::SIGKILL);
        return;
    }
    let deadline = std::time::Instant::now() + KILL_WAIT;
    while group_has_running_member(raw) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// How long [`kill_process_tree`] waits for a killed group's members to die.
const KILL_WAIT: Duration = Duration::from_millis(500);

/// Whether a process of group `pgid` is still alive and not a zombie (an orphaned member is
/// reaped by whoever adopted it, and a zombie runs nothing).
fn group_has_running_member(pgid: i32) -> bool {
    if killpg(Pid::from_raw(pgid), None).is_err() {
        return false;
    }
    let Ok(entries) = std::fs::read_dir("/proc") else { return false };
    entries.flatten().any(|entry| {
        let is_pid = entry.file_name().to_str().is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()));
        is_pid && std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|stat| running_in_group(&stat, pgid))
    })
}

/// Parses `/proc/PID/stat` (`pid (comm) state ppid pgrp …`; comm may hold spaces and
/// parentheses): the process is in group `pgid` and neither a zombie nor dead.
fn running_in_group(stat: &str, pgid: i32) -> bool {
    let Some(rest) = stat.rfind(')').and_then(|i| stat.get(i + 2..)) else { return false };
    let mut fields = rest.split_whitespace();
    let state = fields.next().unwrap_or("Z");
    let group = fields.nth(1).and_then(|g| g.parse::<i32>().ok());
    group == Some(pgid) && state != "Z" && state != "X"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_names_the_group_and_the_state() {
        assert!(running_in_group("12 (sleep) S 11 40 40 0 -1", 40));
        assert!(running_in_group("12 (a (b) c) R 11 40 40 0 -1", 40));
        assert!(!running_in_group("12 (sleep) Z 11 40 40 0 -1", 40));
        assert!(!running_in_group("12 (sleep) S 11 41 41 0 -1", 40));
        assert!(!running_in_group("garbage", 40));
    }

    #[test]
    fn killing_a_group_returns_once_its_members_are_gone() {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30 & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = child.id() as i32;
        for _ in 0..500 {
            if std::fs::read_dir("/proc")
                .unwrap()
                .flatten()
                .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
                .filter(|s| running_in_group(s, pgid))
                .count()
                == 3
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        kill_process_tree(child.id());
        assert!(!group_has_running_member(pgid));
        let _ = child.wait();
    }

    #[test]
    fn a_missing_custom_shell_is_pis_error_and_an_empty_one_is_unset() {
        assert_eq!(
            resolve_shell(Some("/nonexistent/shell")),
            Err("Custom shell path not found: /nonexistent/shell".to_owned())
        );
        assert_eq!(resolve_shell(Some("")), resolve_shell(None));
    }
}
