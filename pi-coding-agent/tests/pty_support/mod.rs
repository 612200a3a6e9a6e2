//! A real pseudo-terminal of 100×30 running the `pi` binary, its output replayed into vt100
//! (shared by `packages_config.rs` and `trust_interactive.rs`).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

use super::cli_support::Env;

pub const COLS: u16 = 100;
pub const ROWS: u16 = 30;

/// A running `pi` in a pty.
pub struct Pty {
    parser: Arc<Mutex<vt100::Parser>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
}

impl Pty {
    /// Starts `pi ARGS` in the project dir of `env`.
    pub fn spawn(env: &Env, args: &[&str]) -> Pty {
        let pair = native_pty_system()
            .openpty(PtySize { rows: ROWS, cols: COLS, pixel_width: 0, pixel_height: 0 })
            .expect("openpty");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_pi"));
        cmd.args(args);
        cmd.cwd(env.proj());
        cmd.env("PI_CODING_AGENT_DIR", env.agent());
        cmd.env("HOME", env.dir.path());
        cmd.env("TERM", "xterm-256color");
        cmd.env("PI_OFFLINE", "1");
        cmd.env_remove("PI_CODING_AGENT_SESSION_DIR");
        cmd.env_remove("OPENAI_API_KEY");
        let child = pair.slave.spawn_command(cmd).expect("spawn pi");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("reader");
        let writer = pair.master.take_writer().expect("writer");
        let parser = Arc::new(Mutex::new(vt100::Parser::new(
            std::num::NonZero::new(ROWS).expect("rows"),
            std::num::NonZero::new(COLS).expect("cols"),
            0,
        )));
        let p = parser.clone();
        std::thread::spawn(move || {
            let _master = pair.master;
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                p.lock().unwrap().process(&buf[..n]);
            }
        });
        Pty { parser, writer, child }
    }

    /// Types `keys`.
    pub fn send(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).expect("write keys");
        self.writer.flush().expect("flush");
    }

    /// The screen, rows right-trimmed.
    pub fn screen(&self) -> String {
        let p = self.parser.lock().unwrap();
        p.screen().rows(0, COLS).map(|r| r.trim_end().to_owned()).collect::<Vec<_>>().join("\n")
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

    /// Waits for the exit code.
    pub fn wait_exit(&mut self) -> u32 {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status.exit_code();
            }
            assert!(Instant::now() < deadline, "pi did not exit; screen:\n{}", self.screen());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
