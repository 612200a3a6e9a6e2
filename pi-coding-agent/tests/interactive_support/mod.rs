//! The pseudo-terminal harness of the interactive tests (the only one: `packages_config.rs`,
//! `trust_interactive.rs` and `mcp_command.rs` use it too): the real `pi` binary in a pty of
//! 100×30, its output replayed into vt100, screens read once they stop changing, and the
//! reference's recorded screens (`fixtures/interactive/*.ref.txt`).
#![allow(dead_code)]

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::cli_support::{Env, ScriptedServer};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};

pub const COLS: u16 = 100;
pub const ROWS: u16 = 30;

pub struct Pty {
    pub parser: Arc<Mutex<vt100::Parser>>,
    pub writer: Box<dyn Write + Send>,
    pub child: Box<dyn portable_pty::Child + Send + Sync>,
    pub raw: Arc<Mutex<Vec<u8>>>,
    pub reader: Option<std::thread::JoinHandle<()>>,
    /// The terminal's device, to read its modes (`None` where the pty has no name).
    pub tty: Option<std::path::PathBuf>,
}

impl Pty {
    pub fn spawn(env: &Env, args: &[&str]) -> Pty {
        Self::spawn_with(env, args, &[])
    }

    /// As [`Pty::spawn`], with more environment variables.
    pub fn spawn_with(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> Pty {
        Self::spawn_program(env, env!("CARGO_BIN_EXE_pi"), args, vars)
    }

    /// As [`Pty::spawn_with`], running `program` (a wrapper that starts pi) instead of pi.
    pub fn spawn_program(env: &Env, program: &str, args: &[&str], vars: &[(&str, &str)]) -> Pty {
        Self::spawn_inner(env, program, args, vars, true)
    }

    /// `pi ARGS` offline (`PI_OFFLINE=1`), `COLORTERM` left as the test's environment has it (the
    /// `pi config` and project trust screens).
    pub fn spawn_offline(env: &Env, args: &[&str]) -> Pty {
        Self::spawn_inner(env, env!("CARGO_BIN_EXE_pi"), args, &[("PI_OFFLINE", "1")], false)
    }

    fn spawn_inner(env: &Env, program: &str, args: &[&str], vars: &[(&str, &str)], truecolor: bool) -> Pty {
        let pair = native_pty_system()
            .openpty(PtySize { rows: ROWS, cols: COLS, pixel_width: 0, pixel_height: 0 })
            .expect("openpty");
        let mut cmd = CommandBuilder::new(program);
        cmd.args(args);
        cmd.cwd(env.proj());
        cmd.env("PI_CODING_AGENT_DIR", env.agent());
        cmd.env("HOME", env.dir.path());
        cmd.env("TERM", "xterm-256color");
        if truecolor {
            cmd.env("COLORTERM", "truecolor");
        }
        cmd.env_remove("PI_CODING_AGENT_SESSION_DIR");
        cmd.env_remove("OPENAI_API_KEY");
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let child = pair.slave.spawn_command(cmd).expect("spawn pi");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("reader");
        let writer = pair.master.take_writer().expect("writer");
        let tty = pair.master.tty_name();
        let parser = Arc::new(Mutex::new(vt100::Parser::new(
            std::num::NonZero::new(ROWS).expect("rows"),
            std::num::NonZero::new(COLS).expect("cols"),
            0,
        )));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let (p, r) = (parser.clone(), raw.clone());
        let reader = std::thread::spawn(move || {
            let _master = pair.master;
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                p.lock().unwrap().process(&buf[..n]);
                r.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Pty { parser, writer, child, raw, reader: Some(reader), tty }
    }

    /// Everything the process wrote, once it exited and the pty reached end of file.
    pub fn output_after_exit(&mut self) -> String {
        if let Some(r) = self.reader.take() {
            r.join().expect("reader thread");
        }
        String::from_utf8_lossy(&self.raw.lock().unwrap()).into_owned()
    }

    pub fn send(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).expect("write keys");
        self.writer.flush().expect("flush");
    }

    pub fn screen(&self) -> String {
        let p = self.parser.lock().unwrap();
        let text = p.screen().rows(0, COLS).map(|r| r.trim_end().to_owned()).collect::<Vec<_>>().join("\n");
        // The working spinner animates; its frame is not part of what a test waits for.
        text.chars().map(|c| if ('\u{2800}'..='\u{28ff}').contains(&c) { '*' } else { c }).collect()
    }

    /// Waits until `pred` holds on the screen and the screen then stays the same for 300 ms.
    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut last = String::new();
        let mut stable_since = Instant::now();
        loop {
            let s = self.screen();
            if s != last {
                last = s.clone();
                stable_since = Instant::now();
            } else if pred(&s) && stable_since.elapsed() >= Duration::from_millis(300) {
                return s;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}; screen:\n{s}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Quits as a user does: Escape closes what dialogs are open (waiting for the screen to settle
    /// after each; an Escape that changes nothing ends them: a second one at an empty editor
    /// would be pi's double Escape), then Ctrl+C twice in one write, and no key after that once
    /// pi left raw mode (a key reaching the terminal then would be a real SIGINT).
    ///
    /// On a loaded machine pi can take longer than the settling wait to act on a key, so a later
    /// key may reach it in the same read as an Escape (`ESC ^C` is Alt+Ctrl+C, not Ctrl+C) or
    /// before a dialog the Escape reopens (the branch summary prompt goes back to the tree). While
    /// pi still reads keys in raw mode after a while, the same keys are sent again.
    pub fn quit(&mut self) -> u32 {
        for _ in 0..3 {
            for _ in 0..3 {
                if let Some(status) = self.child.try_wait().expect("try_wait") {
                    return status.exit_code();
                }
                let before = self.screen();
                self.send("\x1b");
                if self.wait_for("quiet", |_| true) == before {
                    break;
                }
            }
            self.send("\x03\x03");
            if let Some(code) = self.wait_exit_within(Duration::from_secs(10)) {
                return code;
            }
            if !self.reads_keys_raw() {
                break;
            }
        }
        self.wait_exit()
    }

    /// Whether pi still has the terminal in raw mode (echo off), reading keys itself.
    pub fn reads_keys_raw(&self) -> bool {
        use nix::sys::termios::{LocalFlags, tcgetattr};
        let Some(tty) = self.tty.as_ref().and_then(|t| std::fs::File::open(t).ok()) else { return false };
        tcgetattr(&tty).is_ok_and(|t| !t.local_flags.contains(LocalFlags::ECHO))
    }

    /// The exit code, if pi exits within `limit`.
    pub fn wait_exit_within(&mut self, limit: Duration) -> Option<u32> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some(status.exit_code());
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn wait_exit(&mut self) -> u32 {
        // A safety net only: a debug build on a loaded machine can take long to dispose a session.
        if let Some(code) = self.wait_exit_within(Duration::from_secs(90)) {
            return code;
        }
        // Whether pi began to quit (left raw mode, or the alternate screen) tells a lost key from a
        // slow exit.
        let raw = String::from_utf8_lossy(&self.raw.lock().unwrap()).into_owned();
        let left = raw.rfind("\x1b[?1049l").is_some_and(|l| raw.rfind("\x1b[?1049h").is_none_or(|h| l > h));
        let keys = self.reads_keys_raw();
        panic!("pi did not exit (raw mode: {keys}, alternate screen left: {left}); screen:\n{}", self.screen());
    }
}

/// Normalises what differs by machine: the project path in the footer and tool timings.
pub fn normalize(screen: &str, proj: &str) -> String {
    let re = regex::Regex::new(r"Took \d+\.\ds").expect("regex");
    screen
        .lines()
        .map(|l| {
            let l = l.trim_end();
            let l = if l == proj || l == "~/proj" { "<PROJ>".to_owned() } else { l.to_owned() };
            let l = l.replace(proj, "<PROJ>").replace("~/proj", "<PROJ>");
            re.replace_all(&l, "Took <T>").into_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/interactive/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub fn dark_theme(env: &Env) {
    std::fs::write(env.agent().join("settings.json"), r#"{"theme":"dark"}"#).expect("settings");
}

pub fn tool_reply(id: &str, name: &str, args: serde_json::Value) -> String {
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        let c = serde_json::json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"scripted",
            "choices":[{"index":0,"delta":delta,"finish_reason":finish}]});
        format!("data: {c}\n\n")
    };
    let mut out = chunk(serde_json::json!({"role":"assistant","content":""}), None);
    out.push_str(&chunk(
        serde_json::json!({"tool_calls":[{"index":0,"id":id,"type":"function","function":{"name":name,"arguments":args.to_string()}}]}),
        None,
    ));
    out.push_str(&chunk(serde_json::json!({}), Some("tool_calls")));
    let usage = serde_json::json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"scripted",
        "choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13}});
    out.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    out
}

/// The bytes of a tmux key name the recordings send (`Enter`, `C-o`, `M-Enter`, `PageDown`, …);
/// anything else is typed as text.
pub fn tmux_key(name: &str) -> &str {
    match name {
        "Enter" => "\r",
        "Escape" => "\x1b",
        "Tab" => "\t",
        "Space" => " ",
        "BSpace" => "\x7f",
        "Up" => "\x1b[A",
        "Down" => "\x1b[B",
        "Right" => "\x1b[C",
        "Left" => "\x1b[D",
        "Home" => "\x1b[H",
        "PageDown" => "\x1b[6~",
        "C-a" => "\x01",
        "C-g" => "\x07",
        "C-j" => "\n",
        "C-k" => "\x0b",
        "C-o" => "\x0f",
        "C-s" => "\x13",
        "C-t" => "\x14",
        "C-v" => "\x16",
        "C-w" => "\x17",
        "C-x" => "\x18",
        "C-Left" => "\x1b[1;5D",
        "M-Enter" => "\x1b\r",
        "M-Up" => "\x1b[1;3A",
        text => text,
    }
}

/// Types tmux-style keys ([`tmux_key`]), `WAIT` waiting for quiet.
pub fn type_keys(pty: &mut Pty, keys: &[&str]) {
    for k in keys {
        if *k == "WAIT" {
            pty.wait_for("quiet", |_| true);
        } else {
            pty.send(tmux_key(k));
        }
    }
}

/// A step of a recorded scenario: keys to send (tmux names, see [`tmux_key`], or text), then what
/// the screen must show before the next step.
pub type Step<'a> = (&'a [&'a str], &'a dyn Fn(&str) -> bool);

/// The reference's examples folder, or `None` (skip; a failure under CI).
pub fn examples_dir() -> Option<std::path::PathBuf> {
    let root = std::env::var_os("PI_ANCHOR_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache/pi-anchor")))?;
    let dir = root.join("node_modules/@earendil-works/pi-coding-agent/examples/extensions");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(std::env::var_os("CI").is_none(), "the reference pi 1.6.0 is missing: CI must install it");
    eprintln!("SKIP: the reference's examples are not installed (anchor.sh path or PI_ANCHOR_DIR)");
    None
}

/// The screen as the screen tests compare it: the machine's paths out ([`normalize`]), spinner
/// frames as `*` (as [`Pty::screen`] shows them).
pub fn comparable(screen: &str, proj: &str) -> String {
    let screen: String = screen.chars().map(|c| if ('\u{2800}'..='\u{28ff}').contains(&c) { '*' } else { c }).collect();
    normalize(&screen, proj)
}

/// Waits until the screen is `ready`, plays `steps` in `pty` (each step's keys, then waits until
/// the screen shows what it expects) and asserts the last screen is the reference's
/// `NAME.ref.txt` (both [`comparable`]).
pub fn play_and_compare(pty: &mut Pty, env: &Env, name: &str, ready: &dyn Fn(&str) -> bool, steps: &[Step<'_>]) {
    let mut screen = pty.wait_for("the footer", ready);
    for (keys, done) in steps {
        for k in *keys {
            pty.send(tmux_key(k));
        }
        screen = pty.wait_for(name, done);
    }
    let proj = env.proj().display().to_string();
    let want = fixture(&format!("{name}.ref.txt"));
    assert_eq!(comparable(&screen, &proj), comparable(&want, &proj), "{name}: our screen (left) and the reference's");
}

/// Runs one recorded scenario (see `fixtures/interactive/record.sh`) and returns our screen and
/// the reference's, both normalised.
pub fn scenario(
    replies: Vec<String>,
    setup: impl Fn(&Env),
    keys: &[&str],
    done: impl Fn(&str) -> bool,
    name: &str,
) -> (String, String) {
    let server = ScriptedServer::start(replies);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    setup(&env);
    let mut pty = Pty::spawn(&env, &[]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, keys);
    let screen = pty.wait_for(name, done);
    pty.quit();
    let proj = env.proj().display().to_string();
    (normalize(&screen, &proj), normalize(&fixture(&format!("{name}.ref.txt")), &proj))
}
