//! `ctx.shutdown()` in the interactive mode (pi's `shutdownHandler`): an extension command asks
//! for it while the session is idle, and the UI quits with status 0, drawn on a real
//! pseudo-terminal (no key quits it; a fallback Ctrl+C pair only ends a failing run).

mod http_support;

use std::fs::File;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_support::Setup;
use nix::pty::{Winsize, openpty};
use nix::sys::termios::{SetArg, cfmakeraw, tcgetattr, tcsetattr};
use pi_coding_agent::extensions::{Extension, FnExtension};
use pi_coding_agent::modes::interactive::{InteractiveOptions, run_interactive_on};
use pi_tui::CrosstermTerminal;

const COLS: u16 = 100;
const ROWS: u16 = 30;

fn open_screen() -> (Arc<Mutex<vt100::Parser>>, File, CrosstermTerminal) {
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

fn screen_text(parser: &Mutex<vt100::Parser>) -> String {
    let p = parser.lock().expect("parser");
    p.screen().rows(0, COLS).map(|r| r.trim_end().to_owned()).collect::<Vec<_>>().join("\n")
}

fn bye_extension() -> FnExtension {
    FnExtension::new("/ext/bye.ts", |pi| {
        pi.register_command("bye", Some("Quit"), |_args, ctx| {
            Box::pin(async move {
                ctx.shutdown();
                Ok(())
            })
        })?;
        Ok(())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interactive_quits_on_ctx_shutdown() {
    let exts: Vec<Arc<dyn Extension>> = vec![Arc::new(bye_extension())];
    let hs = Setup { extensions: exts, ..Default::default() }.start().await;
    let (parser, mut keys, terminal) = open_screen();
    let options = InteractiveOptions {
        agent_dir: hs.dir.path().canonicalize().expect("dir").join("agent"),
        theme: Some("dark".into()),
        models: vec![hs.session.model()],
        version: "1.6.0".into(),
        ..Default::default()
    };
    let done = Arc::new(AtomicBool::new(false));
    let fallback = Arc::new(AtomicBool::new(false));
    let (d, f) = (done.clone(), fallback.clone());
    let user = std::thread::spawn(move || {
        let start = Instant::now();
        while !screen_text(&parser).contains("smollm2-135m") && start.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(20));
        }
        keys.write_all(b"/bye\r").expect("keys");
        // Only a failing run gets here: the UI did not quit by itself within a minute.
        let asked = Instant::now();
        while !d.load(Ordering::SeqCst) {
            if asked.elapsed() > Duration::from_secs(60) {
                f.store(true, Ordering::SeqCst);
                let _ = keys.write_all(b"\x03\x03");
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let code = run_interactive_on(hs.session.clone(), options, terminal).await;
    done.store(true, Ordering::SeqCst);
    user.join().expect("user thread");
    assert!(!fallback.load(Ordering::SeqCst), "ctx.shutdown() did not quit the interactive mode");
    assert_eq!(code, 0);
}
