//! The interactive mode run in the test's own process (`run_interactive_on`) on a real
//! pseudo-terminal of 100×30 in raw mode, its output replayed into vt100 (shared by
//! `interactive_extension_themes.rs` and `extensions_shutdown_interactive.rs`), and the
//! extension command both use to quit (`/bye`: pi's `ctx.shutdown()`).

#![allow(dead_code)]

use std::fs::File;
use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::pty::{Winsize, openpty};
use nix::sys::termios::{SetArg, cfmakeraw, tcgetattr, tcsetattr};
use pi_coding_agent::extensions::ExtensionApi;
use pi_coding_agent::modes::interactive::InteractiveOptions;
use pi_tui::CrosstermTerminal;

use crate::http_support::HttpSession;

pub const COLS: u16 = 100;
pub const ROWS: u16 = 30;

/// A pty in raw mode: the vt100 screen its output draws, the master end keys are written to,
/// and the terminal the interactive mode runs on (the slave end).
pub fn open_screen() -> (Arc<Mutex<vt100::Parser>>, File, CrosstermTerminal) {
    let size = Winsize { ws_row: ROWS, ws_col: COLS, ws_xpixel: 0, ws_ypixel: 0 };
    let pty = openpty(Some(&size), None).expect("openpty");
    let mut attrs = tcgetattr(&pty.slave).expect("tcgetattr");
    cfmakeraw(&mut attrs);
    tcsetattr(&pty.slave, SetArg::TCSANOW, &attrs).expect("raw mode");
    let slave = File::from(pty.slave);
    let input = std::os::fd::OwnedFd::from(slave.try_clone().expect("slave clone"));
    let terminal = CrosstermTerminal::from_fd(input, Box::new(slave), Box::new(|| (COLS as usize, ROWS as usize)));
    let mut master = File::from(pty.master);
    let keys = master.try_clone().expect("master clone");
    let parser = Arc::new(Mutex::new(vt100::Parser::new(
        std::num::NonZero::new(ROWS).expect("rows"),
        std::num::NonZero::new(COLS).expect("cols"),
        0,
    )));
    let p = parser.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            p.lock().expect("parser").process(&buf[..n]);
        }
    });
    (parser, keys, terminal)
}

/// The screen, rows right-trimmed.
pub fn screen_text(parser: &Mutex<vt100::Parser>) -> String {
    let p = parser.lock().expect("parser");
    p.screen().rows(0, COLS).map(|r| r.trim_end().to_owned()).collect::<Vec<_>>().join("\n")
}

/// Waits (at most 30 s) until the screen shows `text`; whether it did.
pub fn wait_for(parser: &Mutex<vt100::Parser>, text: &str) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(30) {
        if screen_text(parser).contains(text) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("--- waited in vain for {text:?}; the screen:\n{}", screen_text(parser));
    false
}

/// The interactive options of the harness's session: its agent dir, the dark theme, its model.
pub fn options(hs: &HttpSession) -> InteractiveOptions {
    InteractiveOptions {
        agent_dir: hs.dir.path().canonicalize().expect("dir").join("agent"),
        theme: Some("dark".into()),
        models: vec![hs.session.model()],
        version: "1.6.0".into(),
        ..Default::default()
    }
}

/// Registers `/bye`, which asks pi to quit (`ctx.shutdown()`).
pub fn register_bye(pi: &ExtensionApi) -> Result<(), pi_coding_agent::extensions::ExtensionApiError> {
    pi.register_command("bye", Some("Quit"), |_args, ctx| {
        Box::pin(async move {
            ctx.shutdown();
            Ok(())
        })
    })
}
