//! pi's `system` theme in a real pseudo-terminal (issue 14): pi asks the terminal for its colours
//! (OSC 10, 11, 4 for 0–15, DA1) and this test answers from the pty's side as a terminal would.
//! The colours drawn must be the ones pi 1.6.0's own generator makes for the same answers
//! (`pi-tui/tests/fixtures/system_theme/system_theme.json`, produced by running its JS); a silent
//! terminal gets palette indices and faint neutrals after the 100 ms timeout; replies that come
//! late still apply; a light/dark report (mode 2031) switches a `light/dark` pair and asks again;
//! and no reply ever reaches the editor.

mod cli_support;

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cli_support::{Env, ScriptedServer};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use serde_json::Value;

const COLS: u16 = 100;
const ROWS: u16 = 30;
const FIXTURE: &str = include_str!("../../pi-tui/tests/fixtures/system_theme/system_theme.json");
const COLOR_QUERY_START: &str = "\x1b]10;?\x07\x1b]11;?\x07";

/// How the fake terminal answers.
#[derive(Clone, Default)]
struct Answers {
    /// `(foreground, background, palette)` as `#rrggbb`; `None`: colour queries go unanswered.
    colors: Option<(String, String, Vec<String>)>,
    /// DA1 is answered (`ESC [ ? 62 ; 22 c`).
    da1: bool,
}

struct Term {
    parser: Arc<Mutex<vt100::Parser>>,
    raw: Arc<Mutex<Vec<u8>>>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    answers: Arc<Mutex<Answers>>,
    answering: Arc<AtomicBool>,
    answered: Arc<Mutex<usize>>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    /// The pty reader; it ends once pi has exited and its last output is read.
    reader: Option<std::thread::JoinHandle<()>>,
}

fn hex(c: &str) -> String {
    let ch = |i: usize| &c[i..i + 2];
    // xterm's 16-bit form, as real terminals answer.
    format!("rgb:{0}{0}/{1}{1}/{2}{2}", ch(1), ch(3), ch(5))
}

/// The replies owed for the queries in `text` from `from` on; the position after the last
/// complete query.
fn replies(text: &str, from: usize, answers: &Answers) -> (String, usize) {
    let mut out = String::new();
    let mut pos = from;
    loop {
        let rest = &text[pos..];
        let next = ["\x1b]10;?\x07", "\x1b]11;?\x07", "\x1b]4;", "\x1b[c"]
            .iter()
            .filter_map(|p| rest.find(p).map(|i| (i, *p)))
            .min_by_key(|(i, _)| *i);
        let Some((i, pattern)) = next else { return (out, pos) };
        let start = pos + i;
        let (end, reply) = match pattern {
            "\x1b[c" => (start + 3, answers.da1.then(|| "\x1b[?62;22c".to_owned())),
            "\x1b]4;" => {
                let Some(close) = text[start..].find('\x07') else { return (out, pos) };
                let body = &text[start + 4..start + close];
                let index: usize = body.trim_end_matches(";?").parse().unwrap_or(99);
                let reply = answers
                    .colors
                    .as_ref()
                    .and_then(|(_, _, p)| p.get(index))
                    .map(|c| format!("\x1b]4;{index};{}\x1b\\", hex(c)));
                (start + close + 1, reply)
            }
            p => {
                let which = if p.contains("10") { 10 } else { 11 };
                let reply = answers
                    .colors
                    .as_ref()
                    .map(|(fg, bg, _)| format!("\x1b]{which};{}\x07", hex(if which == 10 { fg } else { bg })));
                (start + p.len(), reply)
            }
        };
        out.push_str(&reply.unwrap_or_default());
        pos = end;
    }
}

/// Answers what was asked since the last answer (under the position's lock, so the reader thread
/// and the test never answer a query twice).
fn respond(
    raw: &Mutex<Vec<u8>>,
    answered: &Mutex<usize>,
    answers: &Mutex<Answers>,
    writer: &Mutex<Box<dyn Write + Send>>,
) {
    let mut pos = answered.lock().unwrap();
    let text = String::from_utf8_lossy(&raw.lock().unwrap()).into_owned();
    let (out, next) = replies(&text, *pos, &answers.lock().unwrap());
    *pos = next;
    if !out.is_empty() {
        let mut w = writer.lock().unwrap();
        let _ = w.write_all(out.as_bytes()).and_then(|()| w.flush());
    }
}

impl Term {
    fn spawn(env: &Env, answers: Answers, answering: bool) -> Term {
        let pair = native_pty_system()
            .openpty(PtySize { rows: ROWS, cols: COLS, pixel_width: 0, pixel_height: 0 })
            .expect("openpty");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_pi"));
        cmd.cwd(env.proj());
        cmd.env("PI_CODING_AGENT_DIR", env.agent());
        cmd.env("HOME", env.dir.path());
        cmd.env("TERM", "xterm-256color");
        cmd.env("COLORTERM", "truecolor");
        cmd.env_remove("COLORFGBG");
        cmd.env_remove("PI_CODING_AGENT_SESSION_DIR");
        cmd.env_remove("OPENAI_API_KEY");
        let child = pair.slave.spawn_command(cmd).expect("spawn pi");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("reader");
        let writer: Arc<Mutex<Box<dyn Write + Send>>> =
            Arc::new(Mutex::new(pair.master.take_writer().expect("writer")));
        let parser = Arc::new(Mutex::new(vt100::Parser::new(
            std::num::NonZero::new(ROWS).expect("rows"),
            std::num::NonZero::new(COLS).expect("cols"),
            0,
        )));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let answers = Arc::new(Mutex::new(answers));
        let answering = Arc::new(AtomicBool::new(answering));
        let answered = Arc::new(Mutex::new(0));
        let (p, r, w, a, on, at) =
            (parser.clone(), raw.clone(), writer.clone(), answers.clone(), answering.clone(), answered.clone());
        let reader = std::thread::spawn(move || {
            let _master = pair.master;
            let mut buf = [0u8; 8192];
            loop {
                let n = match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                p.lock().unwrap().process(&buf[..n]);
                r.lock().unwrap().extend_from_slice(&buf[..n]);
                if on.load(Ordering::SeqCst) {
                    respond(&r, &at, &a, &w);
                }
            }
        });
        Term { parser, raw, writer, answers, answering, answered, child, reader: Some(reader) }
    }

    fn send(&self, data: &str) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(data.as_bytes()).expect("write");
        w.flush().expect("flush");
    }

    /// Starts answering: queries already asked are answered now (late), later ones at once.
    fn answer(&self, answers: Answers) {
        *self.answers.lock().unwrap() = answers;
        self.answering.store(true, Ordering::SeqCst);
        respond(&self.raw, &self.answered, &self.answers, &self.writer);
    }

    fn raw(&self) -> String {
        String::from_utf8_lossy(&self.raw.lock().unwrap()).into_owned()
    }

    /// Waits until `pred` holds on the parsed screen (no timing: a 60 s safety net only).
    fn wait_for<T>(&self, what: &str, pred: impl Fn(&vt100::Screen) -> Option<T>) -> T {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(v) = pred(self.parser.lock().unwrap().screen()) {
                return v;
            }
            let text = self.parser.lock().unwrap().screen().contents();
            assert!(Instant::now() < deadline, "timed out waiting for {what}; screen:\n{text}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn quit(&mut self) -> u32 {
        self.send("\x03\x03");
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                // Everything pi wrote before exiting (the terminal restore) is read first.
                if let Some(reader) = self.reader.take() {
                    reader.join().expect("the pty reader");
                }
                return status.exit_code();
            }
            assert!(Instant::now() < deadline, "pi did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn row_text(screen: &vt100::Screen, row: u16) -> String {
    (0..COLS).map(|c| screen.cell(row, c).map_or(" ".to_owned(), |x| x.contents().to_owned())).collect()
}

/// The editor's top rule (the rule above the footer's pair): its colour (the thinking level's, `thinkingOff`
/// here, as pi draws it) and faintness.
fn border(screen: &vt100::Screen) -> Option<(vt100::Color, bool)> {
    let rules: Vec<u16> = (0..ROWS).filter(|r| row_text(screen, *r).starts_with("────")).collect();
    let [.., top, _] = rules.as_slice() else { return None };
    let cell = screen.cell(*top, 0)?;
    Some((cell.fgcolor(), cell.dim()))
}

/// The editor's lines between its two rules.
fn editor_lines(screen: &vt100::Screen) -> Vec<String> {
    let rules: Vec<u16> = (0..ROWS).filter(|r| row_text(screen, *r).starts_with("────")).collect();
    match rules.as_slice() {
        [.., a, b] => (a + 1..*b).map(|r| row_text(screen, r).trim().to_owned()).collect(),
        _ => Vec::new(),
    }
}

/// The footer's model name: its colour.
fn footer_model(screen: &vt100::Screen) -> Option<vt100::Color> {
    (0..ROWS).find_map(|r| {
        let text = row_text(screen, r);
        let col = text.find("smollm2-135m")?;
        Some(screen.cell(r, col as u16)?.fgcolor())
    })
}

fn rgb_of(hex: &str) -> vt100::Color {
    let ch = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex");
    vt100::Color::Rgb(ch(1), ch(3), ch(5))
}

/// One reference case: the terminal's answers and the generated colours.
fn case(name: &str) -> (Answers, serde_json::Map<String, Value>) {
    let cases: Vec<Value> = serde_json::from_str(FIXTURE).expect("fixture");
    let c = cases.into_iter().find(|c| c["name"] == name).expect("case");
    let s = |v: &Value| v.as_str().expect("hex").to_owned();
    let input = &c["input"];
    let palette = input["palette"].as_array().map(|p| p.iter().map(s).collect()).unwrap_or_default();
    let answers = Answers { colors: Some((s(&input["foreground"]), s(&input["background"]), palette)), da1: true };
    (answers, c["result"]["colors"].as_object().expect("colors").clone())
}

fn theme_color(theme: &pi_tui::Theme, token: &str) -> vt100::Color {
    let ansi = theme.fg_ansi(token).expect("token");
    let parts: Vec<u8> =
        ansi.trim_start_matches("\x1b[38;2;").trim_end_matches('m').split(';').filter_map(|p| p.parse().ok()).collect();
    vt100::Color::Rgb(parts[0], parts[1], parts[2])
}

fn project() -> (ScriptedServer, Env) {
    let server = ScriptedServer::start(Vec::new());
    let env = Env::new(&server.base_url);
    (server, env)
}

#[test]
fn answered_colours_draw_the_reference_system_theme_and_never_reach_the_editor() {
    let (_server, env) = project();
    let (answers, expected) = case("solarized-dark");
    let mut term = Term::spawn(&env, answers, true);
    let want_border = rgb_of(expected["thinkingOff"].as_str().expect("hex"));
    let want_dim = rgb_of(expected["dim"].as_str().expect("hex"));
    term.wait_for("the generated colours", |s| {
        (border(s) == Some((want_border, false)) && footer_model(s) == Some(want_dim)).then_some(())
    });
    term.send("hello");
    term.wait_for("the typed text alone", |s| {
        (editor_lines(s).first().map(String::as_str) == Some("hello")).then_some(())
    });
    let raw = term.raw();
    assert_eq!(raw.matches(COLOR_QUERY_START).count(), 1, "one colour query at startup");
    assert!(raw.contains("\x1b]4;15;?\x07\x1b[c"), "the palette query ends with DA1");
    assert!(raw.contains("\x1b[?2031h"), "the system theme follows light/dark reports");
    assert_eq!(term.quit(), 0);
    assert!(term.raw().contains("\x1b[?2031l"), "light/dark reports are turned off on exit");
}

#[test]
fn a_silent_terminal_gets_palette_indices_then_late_replies_still_apply() {
    let (_server, env) = project();
    // The terminal answers nothing, not even DA1: the first frame comes after the timeout.
    let term = Term::spawn(&env, Answers::default(), false);
    term.wait_for("the indexed system theme", |s| {
        // The editor border (thinkingOff) is a neutral below body text: the default colour, faint.
        (border(s) == Some((vt100::Color::Default, true)) && footer_model(s).is_some()).then_some(())
    });
    // The replies arrive long after the timeout: pi applies them all the same.
    let (answers, expected) = case("xterm-black");
    term.answer(answers);
    let want = rgb_of(expected["thinkingOff"].as_str().expect("hex"));
    term.wait_for("the late colours", |s| (border(s) == Some((want, false))).then_some(()));
    assert!(editor_lines(term.parser.lock().unwrap().screen()).iter().all(String::is_empty), "no reply is typed");
}

#[test]
fn a_light_dark_report_switches_the_pair_and_asks_for_the_colours_again() {
    let (_server, env) = project();
    std::fs::write(env.agent().join("settings.json"), r#"{"theme":"light/dark"}"#).expect("settings");
    // A terminal that answers DA1 but reports no colours: the pair follows its light/dark reports.
    let mut term = Term::spawn(&env, Answers { colors: None, da1: true }, true);
    let dark = theme_color(&pi_tui::Theme::dark(pi_tui::ColorMode::Truecolor).expect("dark"), "thinkingOff");
    let light = theme_color(&pi_tui::Theme::light(pi_tui::ColorMode::Truecolor).expect("light"), "thinkingOff");
    assert_ne!(dark, light);
    term.wait_for("the dark theme", |s| (border(s) == Some((dark, false))).then_some(()));
    assert!(term.raw().contains("\x1b[?2031h"), "a pair follows light/dark reports");
    term.send("\x1b[?997;2n");
    term.wait_for("the light theme", |s| (border(s) == Some((light, false))).then_some(()));
    term.wait_for("a second colour query", |_| (term.raw().matches(COLOR_QUERY_START).count() == 2).then_some(()));
    assert!(editor_lines(term.parser.lock().unwrap().screen()).iter().all(String::is_empty), "no reply is typed");
    assert_eq!(term.quit(), 0);
}
