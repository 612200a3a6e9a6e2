//! The interactive mode with in-process extensions (issue 14): the founding document's
//! `audit-note` entry renderer (写法二) and the UI seam (`ctx.ui`), drawn by `run_interactive_on`
//! on a real pseudo-terminal opened by the test, read back through vt100 and compared with the
//! reference pi 1.6.0's screen of the same scenario (`fixtures/interactive/audit.ref.txt`, the
//! seed's `audit-extension.ts` loaded with `-e`); and a Rust extension's shortcuts bound in the
//! editor (`register_shortcut`: a free key runs, a reserved one is refused with pi's warning).

mod http_support;
mod in_process_pty;

use std::fs::File;
use std::io::Write;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_support::{Setup, text_reply, tool_reply};
use pi_coding_agent::extensions::{Extension, FnExtension, ToolResultEvent};
use pi_coding_agent::modes::interactive::{InteractiveOptions, run_interactive_on};
use pi_tui::{Box as TuiBox, Component, CrosstermTerminal, Text, shared};
use serde_json::json;

use in_process_pty::COLS;

/// The seed's audit extension: an `audit-note` entry per tool result and its Box/Text renderer.
fn audit_extension() -> FnExtension {
    FnExtension::new("/ext/audit-extension.ts", |pi| {
        let api = pi.clone();
        pi.on_sync::<ToolResultEvent>(move |event, _ctx| {
            let data = json!({ "toolName": event.tool_name, "toolCallId": event.tool_call_id, "at": pi_ai::now_ms() });
            api.append_entry("audit-note", data)?;
            Ok(None)
        });
        pi.register_entry_renderer("audit-note", |entry, options, theme| {
            let data = entry.data.clone().unwrap_or_default();
            let bg = theme.clone();
            let mut b = TuiBox::new(1, 1, Some(Rc::new(move |t: &str| bg.bg("customMessageBg", t))));
            let tool = data["toolName"].as_str().unwrap_or("unknown");
            b.add_child(shared(Text::new(format!("{} {tool}", theme.fg("accent", "[audit]")), 0, 0)));
            if options.expanded {
                b.add_child(shared(Text::new(theme.fg("dim", &format!("at {}", data["at"])), 0, 0)));
            }
            Some(Box::new(b) as Box<dyn Component>)
        })?;
        Ok(())
    })
}

/// A pseudo-terminal: the slave side becomes the UI's terminal, the master side is the user.
struct Screen {
    parser: Arc<Mutex<vt100::Parser>>,
    keys: File,
}

impl Screen {
    fn open() -> (Screen, CrosstermTerminal) {
        let (parser, keys, terminal) = in_process_pty::open_screen();
        (Screen { parser, keys }, terminal)
    }

    fn text(&self) -> String {
        let p = self.parser.lock().unwrap();
        p.screen().rows(0, COLS).map(|r| r.trim_end().to_owned()).collect::<Vec<_>>().join("\n")
    }

    /// Foreground and background of the cell at `col` of the first row containing `needle`,
    /// and the background of that row's last cell.
    fn colors(&self, needle: &str, col: u16) -> (vt100::Color, vt100::Color, vt100::Color) {
        let p = self.parser.lock().unwrap();
        let screen = p.screen();
        let row = screen.rows(0, COLS).position(|r| r.contains(needle)).expect("row") as u16;
        let cell = screen.cell(row, col).expect("cell");
        let last = screen.cell(row, COLS - 1).expect("last cell");
        (cell.fgcolor(), cell.bgcolor(), last.bgcolor())
    }

    fn send(&mut self, keys: &str) {
        self.keys.write_all(keys.as_bytes()).expect("keys");
    }

    /// Waits until `pred` holds and the screen then stays the same for 300 ms.
    fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        let (mut last, mut since) = (String::new(), Instant::now());
        loop {
            let s = self.text();
            if s != last {
                last = s.clone();
                since = Instant::now();
            } else if pred(&s) && since.elapsed() >= Duration::from_millis(300) {
                return s;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}; screen:\n{s}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn normalize(screen: &str, proj: &str) -> String {
    let took = regex::Regex::new(r"Took \d+\.\ds").expect("regex");
    screen
        .lines()
        .map(|l| {
            let l = l.trim_end();
            let l = if l == proj || l == "~/proj" { "<PROJ>" } else { l };
            took.replace_all(l, "Took <T>").into_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_note_entries_draw_as_the_reference_draws_them() {
    let exts: Vec<Arc<dyn Extension>> = vec![Arc::new(audit_extension())];
    let hs = Setup {
        replies: vec![tool_reply("call_1", "bash", json!({"command": "echo hi"})), text_reply("Audited.")],
        extensions: exts,
        ..Default::default()
    }
    .start()
    .await;
    let (mut screen, terminal) = Screen::open();
    let model = hs.session.model();
    let options = InteractiveOptions {
        agent_dir: hs.dir.path().canonicalize().expect("dir").join("agent"),
        theme: Some("dark".into()),
        models: vec![model],
        version: "1.6.0".into(),
        color_mode: Some(pi_tui::ColorMode::Truecolor),
        ..Default::default()
    };
    let proj = hs.cwd.display().to_string();
    let user = std::thread::spawn(move || {
        let steps = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            screen.wait_for("the footer", |s| s.contains("smollm2-135m"));
            screen.send("run it\r");
            let seen = screen.wait_for("the answer", |s| s.contains("Audited.") && s.contains("↑20"));
            (seen, screen.colors("[audit]", 1))
        }));
        // Quit in every case, so a failed step ends the UI instead of hanging the test.
        screen.send("\x03\x03");
        steps.unwrap_or_else(|p| std::panic::resume_unwind(p))
    });
    let code = run_interactive_on(hs.session.clone(), options, terminal).await;
    let (seen, (fg, bg, bg_last)) = user.join().expect("user thread");
    assert_eq!(code, 0);
    let reference =
        std::fs::read_to_string(format!("{}/tests/fixtures/interactive/audit.ref.txt", env!("CARGO_MANIFEST_DIR")))
            .expect("fixture");
    assert_eq!(normalize(&seen, &proj), normalize(&reference, &proj));
    // Colours as the reference's (its tmux capture with SGR): `accent` on `customMessageBg`,
    // the box's background across the whole row.
    let ansi = std::fs::read_to_string(format!(
        "{}/tests/fixtures/interactive/audit.ref.ansi.txt",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("ansi fixture");
    let rgb = |re: &str| {
        let caps = regex::Regex::new(re).expect("regex").captures(&ansi).expect("colour in fixture");
        let n = |i: usize| caps[i].parse::<u8>().expect("component");
        vt100::Color::Rgb(n(1), n(2), n(3))
    };
    let ref_bg = rgb(r"\x1b\[48;2;(\d+);(\d+);(\d+)m\n \x1b\[38;2;\d+;\d+;\d+m\[audit\]");
    let ref_fg = rgb(r"\x1b\[38;2;(\d+);(\d+);(\d+)m\[audit\]");
    assert_eq!((fg, bg, bg_last), (ref_fg, ref_bg, ref_bg));
    // The audit notes are session state: in the session, never in a request.
    let types: Vec<String> = hs.entries().iter().filter_map(|e| e["customType"].as_str().map(str::to_owned)).collect();
    assert_eq!(types, ["audit-note"]);
}

/// An extension whose `/pick` command asks through `ctx.ui` (as `fixtures/interactive/ui-extension.ts`).
fn ui_extension() -> FnExtension {
    FnExtension::new("/ext/ui-extension.ts", |pi| {
        pi.register_command("pick", Some("Pick a colour"), |_args, ctx| {
            Box::pin(async move {
                let ui = ctx.ui();
                let options = ["red".to_owned(), "blue".to_owned()];
                let choice = ui.select("Pick a colour", &options, Default::default()).await;
                let choice = choice.unwrap_or_else(|| "none".into());
                ui.set_status("pick", Some(&format!("picked {choice}")));
                ui.notify(&format!("You picked {choice}"), pi_coding_agent::ui::NotifyKind::Info);
                Ok(())
            })
        })?;
        Ok(())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_dialogs_go_through_the_ui_seam_as_the_reference_shows_them() {
    let exts: Vec<Arc<dyn Extension>> = vec![Arc::new(ui_extension())];
    let hs = Setup { extensions: exts, ..Default::default() }.start().await;
    let (mut screen, terminal) = Screen::open();
    let options = InteractiveOptions {
        agent_dir: hs.dir.path().canonicalize().expect("dir").join("agent"),
        theme: Some("dark".into()),
        models: vec![hs.session.model()],
        version: "1.6.0".into(),
        color_mode: Some(pi_tui::ColorMode::Truecolor),
        ..Default::default()
    };
    let proj = hs.cwd.display().to_string();
    let user = std::thread::spawn(move || {
        let steps = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            screen.wait_for("the footer", |s| s.contains("smollm2-135m"));
            screen.send("/pick\r");
            let dialog = screen.wait_for("the selector", |s| s.contains("Pick a colour") && s.contains("→ red"));
            screen.send("\x1b[B\r");
            let picked = screen.wait_for("the answer", |s| s.contains("You picked blue") && s.contains("picked blue"));
            (dialog, picked)
        }));
        // Quit in every case, so a failed step ends the UI instead of hanging the test.
        screen.send("\x03\x03");
        steps.unwrap_or_else(|p| std::panic::resume_unwind(p))
    });
    let code = run_interactive_on(hs.session.clone(), options, terminal).await;
    let (dialog, picked) = user.join().expect("user thread");
    assert_eq!(code, 0);
    let fixture = |name: &str| {
        std::fs::read_to_string(format!("{}/tests/fixtures/interactive/{name}", env!("CARGO_MANIFEST_DIR")))
            .expect("fixture")
    };
    assert_eq!(normalize(&dialog, &proj), normalize(&fixture("ui_select.ref.txt"), &proj));
    assert_eq!(normalize(&picked, &proj), normalize(&fixture("ui_picked.ref.txt"), &proj));
}

/// A Rust extension with two shortcuts: Alt+K notifies, Ctrl+C (reserved) is refused.
fn shortcut_extension() -> FnExtension {
    FnExtension::new("/ext/shortcut-extension.rs", |pi| {
        pi.register_shortcut("alt+k", Some("Say hello"), |ctx| {
            Box::pin(async move {
                ctx.ui().notify("rust shortcut ran", pi_coding_agent::ui::NotifyKind::Info);
                Ok(())
            })
        })?;
        pi.register_shortcut("ctrl+c", Some("Never bound"), |ctx| {
            Box::pin(async move {
                ctx.ui().notify("ctrl+c taken", pi_coding_agent::ui::NotifyKind::Info);
                Ok(())
            })
        })?;
        Ok(())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_extension_shortcuts_are_bound_in_the_editor() {
    let exts: Vec<Arc<dyn Extension>> = vec![Arc::new(shortcut_extension())];
    let hs = Setup { extensions: exts, ..Default::default() }.start().await;
    let (mut screen, terminal) = Screen::open();
    let options = InteractiveOptions {
        agent_dir: hs.dir.path().canonicalize().expect("dir").join("agent"),
        theme: Some("dark".into()),
        models: vec![hs.session.model()],
        version: "1.6.0".into(),
        color_mode: Some(pi_tui::ColorMode::Truecolor),
        ..Default::default()
    };
    let user = std::thread::spawn(move || {
        let steps = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let start = screen.wait_for("the footer", |s| s.contains("smollm2-135m"));
            screen.send("\x1bk");
            let ran = screen.wait_for("the notification", |s| s.contains("rust shortcut ran"));
            (start, ran)
        }));
        // Ctrl+C was refused to the extension: twice quits.
        screen.send("\x03\x03");
        steps.unwrap_or_else(|p| std::panic::resume_unwind(p))
    });
    let code = run_interactive_on(hs.session.clone(), options, terminal).await;
    let (start, ran) = user.join().expect("user thread");
    assert_eq!(code, 0);
    let flat = start.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("[Extension issues] path (temp) /ext/shortcut-extension.rs Extension shortcut 'ctrl+c' from /ext/shortcut-extension.rs conflicts with built-in shortcut. Skipping."),
        "{start}"
    );
    assert!(!ran.contains("ctrl+c taken"), "{ran}");
}
