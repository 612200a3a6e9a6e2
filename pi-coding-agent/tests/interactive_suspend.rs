//! Suspending with real signals in a real pseudo-terminal (issue 14): an external `kill -TSTP`
//! restores the terminal before pi stops (alternate screen left, cursor shown, bracketed paste
//! and keyboard protocol off, cooked mode back) and SIGCONT re-enters with a full redraw; SIGINT
//! while suspended is ignored, as pi ignores it; SIGTERM and SIGHUP while suspended end pi on
//! SIGCONT with the session intact, the terminal restored and no process left behind.
//!
//! pi runs under a job-control parent (as under a shell): in a process group of its own that owns
//! the terminal, so stopping it is possible (an orphaned group cannot be stopped). Needs python3
//! (`PI_TEST_PYTHON`), as `interactive_keys.rs` does.

mod cli_support;
mod interactive_support;

use cli_support::{Env, ScriptedServer, text_reply};
use interactive_support::*;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The job-control parent: forks pi into its own foreground process group and reports each stop.
const WRAPPER: &str = r#"
import os, signal, sys
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    os.tcsetpgrp(0, os.getpid())
    signal.signal(signal.SIGTTOU, signal.SIG_DFL)
    os.execv(sys.argv[1], sys.argv[1:])
stops = 0
while True:
    _, status = os.waitpid(pid, os.WUNTRACED)
    if os.WIFSTOPPED(status):
        stops += 1
        sys.stdout.write("[stop %d of pi %d]\r\n" % (stops, pid))
        sys.stdout.flush()
        continue
    sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 100 + os.WTERMSIG(status))
"#;

fn python() -> Option<String> {
    let python = std::env::var("PI_TEST_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    if std::process::Command::new(&python).arg("--version").output().is_err() {
        assert!(std::env::var_os("CI").is_none(), "python3 is missing: CI must install it");
        eprintln!("SKIP: python3 not found (set PI_TEST_PYTHON)");
        return None;
    }
    Some(python)
}

fn stat_field(pid: i32, index: usize) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.split(' ').nth(index).map(str::to_owned)
}

/// pi's pid: the wrapper's child.
fn pi_pid(wrapper: u32) -> i32 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let found = std::fs::read_dir("/proc")
            .expect("/proc")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .find_map(|p| {
                let pid: i32 = p.parse().ok()?;
                (stat_field(pid, 1)?.parse::<u32>().ok()? == wrapper).then_some(pid)
            });
        if let Some(pid) = found {
            return pid;
        }
        assert!(std::time::Instant::now() < deadline, "pi's process not found");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The pty's line discipline as `stty -a` prints it.
fn stty(pid: i32) -> String {
    let tty = std::fs::read_link(format!("/proc/{pid}/fd/0")).expect("pi's stdin");
    let out = std::process::Command::new("stty").arg("-a").arg("-F").arg(&tty).output().expect("stty");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn cooked(settings: &str) -> bool {
    settings.split_whitespace().any(|w| w == "icanon") && settings.split_whitespace().any(|w| w == "echo")
}

/// Starts pi under the wrapper with one finished exchange in its session.
fn started(python: &str) -> (ScriptedServer, Env, Pty, i32) {
    let server = ScriptedServer::start(vec![text_reply(&["Kept answer."])]);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    let pty = Pty::spawn_program(&env, python, &["-c", WRAPPER, env!("CARGO_BIN_EXE_pi")], &[]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    let pid = pi_pid(pty.child.process_id().expect("wrapper pid"));
    (server, env, pty, pid)
}

fn exchange(pty: &mut Pty) {
    pty.send("first question");
    pty.wait_for("the draft", |s| s.contains("first question"));
    pty.send("\r");
    pty.wait_for("the answer", |s| s.contains("Kept answer.") && s.contains("smollm2-135m"));
}

/// Sends SIGTSTP from outside and checks everything pi restored before it stopped.
fn suspend_externally(pty: &Pty, pid: i32, stop: usize) {
    kill(Pid::from_raw(pid), Signal::SIGTSTP).expect("kill -TSTP");
    let marker = format!("[stop {stop} of pi {pid}]");
    let screen = pty.wait_for("the stop", |s| s.contains(&marker));
    assert_eq!(stat_field(pid, 0).as_deref(), Some("T"), "pi is stopped: {screen}");
    let raw = String::from_utf8_lossy(&pty.raw.lock().expect("raw")).into_owned();
    let entered = raw.rfind("\x1b[?1049h").expect("the alternate screen");
    for seq in ["\x1b[?1049l", "\x1b[?2004l", "\x1b[<u", "\x1b[?25h"] {
        assert!(raw[entered..].contains(seq), "{seq:?} missing before the stop");
    }
    let parser = pty.parser.lock().expect("parser");
    assert!(!parser.screen().alternate_screen() && !parser.screen().hide_cursor(), "terminal restored");
    drop(parser);
    assert!(cooked(&stty(pid)), "raw mode is off while stopped: {}", stty(pid));
}

#[test]
fn external_sigtstp_restores_the_terminal_and_sigcont_redraws() {
    let Some(python) = python() else { return };
    let (_server, _env, mut pty, pid) = started(&python);
    pty.send("draft");
    pty.wait_for("the draft", |s| s.contains("draft"));
    assert!(!cooked(&stty(pid)), "raw mode while running");
    suspend_externally(&pty, pid, 1);
    kill(Pid::from_raw(pid), Signal::SIGCONT).expect("kill -CONT");
    let screen = pty.wait_for("the redraw", |s| s.contains("smollm2-135m") && !s.contains("[stop "));
    assert!(screen.contains("draft"), "{screen}");
    assert!(pty.parser.lock().expect("parser").screen().alternate_screen(), "back on the alternate screen");
    assert!(!cooked(&stty(pid)), "raw mode again");
    pty.send(" more");
    pty.wait_for("typing after the resume", |s| s.contains("draft more"));
    // Twice: the handler stays installed.
    suspend_externally(&pty, pid, 2);
    kill(Pid::from_raw(pid), Signal::SIGCONT).expect("kill -CONT");
    pty.wait_for("the second redraw", |s| s.contains("draft more") && !s.contains("[stop "));
    assert_eq!(pty.quit(), 0);
}

#[test]
fn sigint_while_suspended_is_ignored() {
    let Some(python) = python() else { return };
    let (_server, _env, mut pty, pid) = started(&python);
    suspend_externally(&pty, pid, 1);
    kill(Pid::from_raw(pid), Signal::SIGINT).expect("kill -INT");
    kill(Pid::from_raw(pid), Signal::SIGCONT).expect("kill -CONT");
    pty.wait_for("the redraw", |s| s.contains("smollm2-135m") && !s.contains("[stop "));
    pty.send("still here");
    pty.wait_for("typing after the resume", |s| s.contains("still here"));
    assert!(stat_field(pid, 0).is_some_and(|s| s != "Z"), "pi lives");
    assert_eq!(pty.quit(), 0);
}

/// SIGTERM or SIGHUP while suspended: pi ends on SIGCONT with its own status.
fn ends_while_suspended(signal: Signal, status: u32) {
    let Some(python) = python() else { return };
    let (_server, env, mut pty, pid) = started(&python);
    exchange(&mut pty);
    let before = env.session_files();
    assert_eq!(before.len(), 1, "one session file");
    let text_before = std::fs::read_to_string(&before[0]).expect("session");
    suspend_externally(&pty, pid, 1);
    kill(Pid::from_raw(pid), signal).expect("kill");
    kill(Pid::from_raw(pid), Signal::SIGCONT).expect("kill -CONT");
    assert_eq!(pty.wait_exit(), status);
    // The wrapper exited with pi; the pty is still open on our side.
    let raw = pty.output_after_exit();
    let entered = raw.rfind("\x1b[?1049h").expect("the alternate screen");
    for seq in ["\x1b[?1049l", "\x1b[?2004l", "\x1b[?25h"] {
        assert!(raw[entered..].contains(seq), "{seq:?} missing after the exit");
    }
    assert!(stat_field(pid, 0).is_none(), "no pi process is left");
    let after = std::fs::read_to_string(&before[0]).expect("session");
    assert!(after.starts_with(&text_before), "finished entries are kept");
    let lines: Vec<serde_json::Value> = cli_support::json_lines(&after);
    let roles: Vec<&str> = lines.iter().filter_map(|l| l["message"]["role"].as_str()).collect();
    assert!(roles.ends_with(&["user", "assistant"]), "{after}");
}

#[test]
fn sigterm_while_suspended_ends_cleanly_on_sigcont() {
    ends_while_suspended(Signal::SIGTERM, 143);
}

#[test]
fn sighup_while_suspended_ends_cleanly_on_sigcont() {
    ends_while_suspended(Signal::SIGHUP, 129);
}
