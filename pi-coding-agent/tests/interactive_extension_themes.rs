//! Themes an extension returns from `resources_discover` (pi's `themePaths`), in the interactive
//! mode on a real pseudo-terminal: `/settings` offers them by the name in their JSON, and
//! `ctx.ui.setTheme(name)` switches to one (and saves it, as pi does); an unknown name fails with
//! pi's "Theme not found" and changes nothing.

mod http_support;
mod in_process_pty;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_support::Setup;
use in_process_pty::{open_screen, options, register_bye, screen_text, wait_for};
use pi_coding_agent::extensions::{Extension, FnExtension, ResourcesDiscoverEvent, ResourcesDiscoverResult};
use pi_coding_agent::modes::interactive::run_interactive_on;

/// The built-in dark theme renamed `ext-ocean`, written to `dir`.
fn theme_file(dir: &std::path::Path) -> std::path::PathBuf {
    let dark =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../pi-tui/themes/dark.json")).expect("dark");
    let mut theme: serde_json::Value = serde_json::from_str(&dark).expect("theme json");
    theme["name"] = serde_json::json!("ext-ocean");
    let path = dir.join("ocean.json");
    std::fs::write(&path, theme.to_string()).expect("theme file");
    path
}

type Answers = Arc<Mutex<Vec<Result<(), String>>>>;

fn themes_extension(theme: String, answers: Answers) -> FnExtension {
    FnExtension::new("/ext/themes.ts", move |pi| {
        let theme = theme.clone();
        pi.on_sync::<ResourcesDiscoverEvent>(move |_, _| {
            Ok(Some(ResourcesDiscoverResult { theme_paths: Some(vec![theme.clone()]), ..Default::default() }))
        });
        let answers = answers.clone();
        pi.register_command("pick-theme", Some("Switch to the extension's theme"), move |_args, ctx| {
            let answers = answers.clone();
            Box::pin(async move {
                let ui = ctx.ui();
                answers.lock().unwrap().push(ui.set_theme("nope"));
                answers.lock().unwrap().push(ui.set_theme("ext-ocean"));
                Ok(())
            })
        })?;
        register_bye(pi)?;
        Ok(())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_discover_themes_are_offered_and_selectable() {
    let themes_dir = tempfile::tempdir().expect("tempdir");
    let theme = theme_file(themes_dir.path()).display().to_string();
    let answers: Answers = Arc::default();
    let exts: Vec<Arc<dyn Extension>> = vec![Arc::new(themes_extension(theme, answers.clone()))];
    let hs = Setup { extensions: exts, ..Default::default() }.start().await;
    let (parser, mut keys, terminal) = open_screen();
    let options = options(&hs);
    let done = Arc::new(AtomicBool::new(false));
    let offered = Arc::new(AtomicBool::new(false));
    let (d, o, a) = (done.clone(), offered.clone(), answers.clone());
    let user = std::thread::spawn(move || {
        if !wait_for(&parser, "smollm2-135m") {
            let _ = keys.write_all(b"\x03\x03");
            return;
        }
        keys.write_all(b"/settings\r").expect("keys");
        wait_for(&parser, "Type to search");
        keys.write_all(b"Theme").expect("keys");
        wait_for(&parser, "Color theme for the interface");
        keys.write_all(b"\r").expect("keys");
        o.store(wait_for(&parser, "ext-ocean"), Ordering::SeqCst);
        // Back to the list, then out of `/settings` (apart, so no key reads as Alt+key).
        keys.write_all(b"\x1b").expect("keys");
        wait_for(&parser, "Type to search");
        std::thread::sleep(Duration::from_millis(200));
        keys.write_all(b"\x1b").expect("keys");
        let start = Instant::now();
        while screen_text(&parser).contains("Type to search") && start.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(200));
        keys.write_all(b"/pick-theme\r").expect("keys");
        let start = Instant::now();
        while a.lock().unwrap().len() < 2 && start.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(20));
        }
        keys.write_all(b"/bye\r").expect("keys");
        let asked = Instant::now();
        while !d.load(Ordering::SeqCst) {
            if asked.elapsed() > Duration::from_secs(30) {
                eprintln!("--- /bye did not quit:\n{}", screen_text(&parser));
                let _ = keys.write_all(b"\x03\x03");
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let run = run_interactive_on(hs.session.clone(), options, terminal);
    let code = tokio::time::timeout(Duration::from_secs(150), run).await.expect("the interactive mode quits");
    done.store(true, Ordering::SeqCst);
    user.join().expect("user thread");
    assert_eq!(code, 0);
    assert!(offered.load(Ordering::SeqCst), "/settings did not offer the extension's theme");
    assert_eq!(*answers.lock().unwrap(), vec![Err("Theme not found: nope".to_owned()), Ok(())]);
    assert_eq!(hs.session.settings_manager().settings().theme(), Some("ext-ocean"));
    assert_eq!(hs.session.extension_themes().iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["ext-ocean"]);
}
