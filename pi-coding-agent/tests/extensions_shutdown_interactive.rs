//! `ctx.shutdown()` in the interactive mode (pi's `shutdownHandler`): an extension command asks
//! for it while the session is idle, and the UI quits with status 0, drawn on a real
//! pseudo-terminal (no key quits it; a fallback Ctrl+C pair only ends a failing run).

mod http_support;
mod in_process_pty;

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use http_support::Setup;
use in_process_pty::{open_screen, options, register_bye, screen_text};
use pi_coding_agent::extensions::{Extension, FnExtension};
use pi_coding_agent::modes::interactive::run_interactive_on;

fn bye_extension() -> FnExtension {
    FnExtension::new("/ext/bye.ts", |pi| {
        register_bye(pi)?;
        Ok(())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interactive_quits_on_ctx_shutdown() {
    let exts: Vec<Arc<dyn Extension>> = vec![Arc::new(bye_extension())];
    let hs = Setup { extensions: exts, ..Default::default() }.start().await;
    let (parser, mut keys, terminal) = open_screen();
    let options = options(&hs);
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
