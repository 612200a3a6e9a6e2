//! pi's `InteractiveThemeController` and the terminal colour query of its `TUI`: the terminal is
//! asked for its colours (OSC 10, 11, 4 for 0–15, then DA1); the replies are taken out of the input
//! before any component sees them; the query completes at the DA1 reply, when all 18 colours
//! arrived, or after 100 ms (replies that come later still apply). The `system` theme and the
//! light/dark choice follow what the terminal reported; a light/dark report (mode 2031) asks again.
//!
//! Like pi's module-level state, what the terminal reported lives here for the UI thread, so every
//! theme load (`--theme`, `/settings`, `/reload`) sees it.

use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};
use std::rc::Rc;
use std::time::{Duration, Instant};

use pi_tui::theme::auto::{Appearance, colorfgbg_appearance, parse_auto_theme_setting, resolve_theme_setting};
use pi_tui::theme::osc::{
    OscTarget, is_device_attributes_reply, parse_color_scheme_report, parse_osc_color_response, terminal_color_query,
};
use pi_tui::theme::system::{Rgb, SYSTEM_THEME_NAME, TerminalColors};
use pi_tui::{ColorMode, CrosstermTerminal, Terminal, TerminalEvent, Theme, Tui};

use super::app::App;

/// How long the system theme waits for the terminal before falling back (pi's 100 ms).
pub(crate) const TERMINAL_QUERY_TIMEOUT: Duration = Duration::from_millis(100);
const PALETTE_SIZE: usize = 16;
const REPLY_COUNT: usize = 2 + PALETTE_SIZE;

/// One colour query waiting for its DA1 reply.
struct Query {
    foreground: Option<Rgb>,
    background: Option<Rgb>,
    palette: [Option<Rgb>; PALETTE_SIZE],
    replied: HashSet<String>,
    deadline: Instant,
    /// Still delivering (pi's `deliver`): before completion, or late after a timeout.
    delivering: bool,
    timed_out: bool,
}

impl Query {
    fn result(&self) -> TerminalColors {
        let palette =
            self.palette.iter().all(Option::is_some).then(|| self.palette.iter().flatten().copied().collect());
        TerminalColors { foreground: self.foreground, background: self.background, palette }
    }
}

#[derive(Default)]
struct State {
    /// The last reported colours (a query that times out keeps them).
    colors: Option<TerminalColors>,
    /// The first query is in flight: the system theme is grayscale.
    pending: bool,
    /// The terminal's last light/dark report.
    scheme: Option<Appearance>,
    queries: VecDeque<Query>,
    /// Mode 2031 notifications are on.
    auto_sync: bool,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// pi's `getTerminalTheme`: the reported background decides (as the system theme classifies it);
/// without one, the terminal's light/dark report, then `COLORFGBG`, then dark.
pub(crate) fn terminal_appearance() -> Appearance {
    STATE.with_borrow(|s| {
        if let Some(c) = &s.colors
            && let Some(bg) = c.background
        {
            return pi_tui::theme::system::terminal_appearance(bg, c.foreground);
        }
        s.scheme
            .or_else(|| colorfgbg_appearance(std::env::var("COLORFGBG").ok().as_deref()))
            .unwrap_or(Appearance::Dark)
    })
}

/// The `system` theme for what the terminal reported so far.
pub(crate) fn system_theme(mode: ColorMode) -> Theme {
    let (colors, pending) = STATE.with_borrow(|s| (s.colors.clone().unwrap_or_default(), s.pending));
    let hint = terminal_appearance();
    Theme::system(&colors, pending, hint, mode)
        .or_else(|_| Theme::system(&TerminalColors::default(), false, hint, mode))
        .unwrap_or_else(|_| Theme::dark(ColorMode::Ansi256).expect("built-in theme"))
}

/// What [`consume`] did with a piece of input.
enum Consumed {
    /// Not a terminal reply: it is the user's input.
    No,
    /// A reply, taken out of the input.
    Yes,
    /// A reply that completed a query (or a late one): these colours apply.
    Colors(TerminalColors),
    /// A light/dark report.
    Scheme(Appearance),
}

/// pi's `consumeTerminalColorResponse` and `consumeTerminalColorSchemeReport`.
fn consume(data: &str) -> Consumed {
    STATE.with_borrow_mut(|s| {
        if let Some(scheme) = parse_color_scheme_report(data) {
            return Consumed::Scheme(scheme);
        }
        if s.queries.is_empty() {
            // A DA1 reply is never a key, whoever asked.
            return if is_device_attributes_reply(data) { Consumed::Yes } else { Consumed::No };
        }
        if is_device_attributes_reply(data) {
            let Some(query) = s.queries.pop_front() else { return Consumed::Yes };
            return if query.delivering { Consumed::Colors(query.result()) } else { Consumed::Yes };
        }
        let Some(reply) = parse_osc_color_response(data) else { return Consumed::No };
        let Some(query) = s.queries.front_mut() else { return Consumed::Yes };
        let key = match reply.target {
            OscTarget::Foreground => "foreground".to_owned(),
            OscTarget::Background => "background".to_owned(),
            OscTarget::Palette(i) => i.to_string(),
        };
        if !query.delivering || !query.replied.insert(key) {
            return Consumed::Yes;
        }
        match reply.target {
            OscTarget::Foreground => query.foreground = reply.rgb,
            OscTarget::Background => query.background = reply.rgb,
            OscTarget::Palette(i) if (i as usize) < PALETTE_SIZE => query.palette[i as usize] = reply.rgb,
            OscTarget::Palette(_) => {}
        }
        if query.replied.len() == REPLY_COUNT {
            query.delivering = false;
            return Consumed::Colors(query.result());
        }
        Consumed::Yes
    })
}

/// Writes the colour query; the replies are collected by [`App::consume_terminal_reply`].
fn send_query(tui: &mut Tui<CrosstermTerminal>) {
    STATE.with_borrow_mut(|s| {
        s.queries.push_back(Query {
            foreground: None,
            background: None,
            palette: [None; PALETTE_SIZE],
            replied: HashSet::new(),
            deadline: Instant::now() + TERMINAL_QUERY_TIMEOUT,
            delivering: true,
            timed_out: false,
        })
    });
    tui.terminal_mut().write(&terminal_color_query());
}

/// Queries that reached their timeout: their replies so far (pi resolves the promise with them).
fn take_timeouts(now: Instant) -> Vec<TerminalColors> {
    STATE.with_borrow_mut(|s| {
        s.queries
            .iter_mut()
            .filter(|q| q.delivering && !q.timed_out && q.deadline <= now)
            .map(|q| {
                q.timed_out = true;
                q.result()
            })
            .collect()
    })
}

/// pi's `applyTerminalColors`: merges the reported colours into the last ones; whether they
/// changed (or were the first report).
fn record_colors(reported: TerminalColors) -> bool {
    STATE.with_borrow_mut(|s| {
        let previous = s.colors.clone();
        let next = TerminalColors {
            foreground: reported.foreground.or(previous.as_ref().and_then(|p| p.foreground)),
            background: reported.background.or(previous.as_ref().and_then(|p| p.background)),
            palette: reported.palette.or(previous.as_ref().and_then(|p| p.palette.clone())),
        };
        if previous.as_ref() == Some(&next) {
            return false;
        }
        s.colors = Some(next);
        s.pending = false;
        true
    })
}

/// Asks the terminal for its colours at startup and waits (at most the reference's 100 ms, less
/// when the terminal answers) so the first frame is drawn with them. Input that is not a reply is
/// returned to be handled once the UI exists.
pub(crate) fn startup_query(tui: &mut Tui<CrosstermTerminal>) -> Vec<TerminalEvent> {
    STATE.with_borrow_mut(|s| s.pending = true);
    send_query(tui);
    let mut held = Vec::new();
    let deadline = Instant::now() + TERMINAL_QUERY_TIMEOUT;
    loop {
        let now = Instant::now();
        let waiting = STATE.with_borrow(|s| s.queries.front().is_some_and(|q| q.delivering));
        if !waiting || now >= deadline {
            break;
        }
        let Some(event) = tui.terminal_mut().poll_event(deadline - now) else { continue };
        match &event {
            TerminalEvent::Input(data) => match consume(data) {
                Consumed::No => held.push(event),
                Consumed::Yes => {}
                Consumed::Colors(colors) => {
                    record_colors(colors);
                }
                Consumed::Scheme(scheme) => STATE.with_borrow_mut(|s| s.scheme = Some(scheme)),
            },
            TerminalEvent::Resize => held.push(event),
        }
    }
    for colors in take_timeouts(Instant::now() + TERMINAL_QUERY_TIMEOUT) {
        record_colors(colors);
    }
    // A terminal that answered nothing ends the grayscale state too (pi's `setTerminalColors({})`).
    STATE.with_borrow_mut(|s| {
        s.pending = false;
        s.colors.get_or_insert_with(TerminalColors::default);
    });
    held
}

/// The earliest moment a query times out (the event loop wakes for it).
pub(crate) fn next_deadline() -> Option<Instant> {
    STATE.with_borrow(|s| s.queries.iter().filter(|q| q.delivering && !q.timed_out).map(|q| q.deadline).min())
}

/// Turns mode 2031 off before the terminal is handed back (pi's `stop`).
pub(crate) fn before_stop(tui: &mut Tui<CrosstermTerminal>) {
    if STATE.with_borrow(|s| s.auto_sync) {
        tui.terminal_mut().write("\x1b[?2031l");
    }
}

/// Turns mode 2031 on again once the terminal is ours (pi's `start`).
pub(crate) fn after_start(tui: &mut Tui<CrosstermTerminal>) {
    if STATE.with_borrow(|s| s.auto_sync) {
        tui.terminal_mut().write("\x1b[?2031h");
    }
}

/// pi's `setAutoSync`: light/dark notifications while a pair or the system theme is in use.
fn set_auto_sync(tui: &mut Tui<CrosstermTerminal>, enabled: bool) {
    let changed = STATE.with_borrow_mut(|s| std::mem::replace(&mut s.auto_sync, enabled) != enabled);
    if changed {
        tui.terminal_mut().write(if enabled { "\x1b[?2031h" } else { "\x1b[?2031l" });
    }
}

/// Whether a theme setting follows the terminal (a `light/dark` pair or the system theme).
fn follows_terminal(setting: Option<&str>) -> bool {
    setting.is_some_and(|s| parse_auto_theme_setting(s).is_some())
        || resolve_theme_setting(setting, terminal_appearance()).is_none_or(|n| n.is_empty() || n == SYSTEM_THEME_NAME)
}

impl App {
    /// Turns on the light/dark notifications the theme setting needs (pi's `applyFromSettings`).
    pub(crate) fn sync_theme_notifications(&mut self, tui: &mut Tui<CrosstermTerminal>) {
        set_auto_sync(tui, follows_terminal(self.theme_name.as_deref()));
    }

    /// Takes terminal replies out of the input: colour replies (applied), DA1 replies, light/dark
    /// reports (re-detected). `true` when `data` was a reply and no component may see it.
    pub(crate) fn consume_terminal_reply(&mut self, tui: &mut Tui<CrosstermTerminal>, data: &str) -> bool {
        match consume(data) {
            Consumed::No => false,
            Consumed::Yes => true,
            Consumed::Colors(colors) => {
                self.apply_terminal_colors(colors);
                true
            }
            Consumed::Scheme(scheme) => {
                self.apply_color_scheme(tui, scheme);
                true
            }
        }
    }

    /// Applies the replies of queries that timed out (called by the event loop every turn).
    pub(crate) fn check_color_query_timeouts(&mut self) {
        for colors in take_timeouts(Instant::now()) {
            self.apply_terminal_colors(colors);
        }
    }

    fn apply_terminal_colors(&mut self, colors: TerminalColors) {
        if record_colors(colors) {
            self.reapply_for_terminal();
        }
    }

    /// pi's `applyTerminalColorSchemeChange`: record the report, re-apply when the appearance
    /// changed, and query the colours again (they decide the appearance).
    fn apply_color_scheme(&mut self, tui: &mut Tui<CrosstermTerminal>, scheme: Appearance) {
        if !STATE.with_borrow(|s| s.auto_sync) {
            return;
        }
        let previous = terminal_appearance();
        STATE.with_borrow_mut(|s| s.scheme = Some(scheme));
        if terminal_appearance() != previous {
            self.reapply_for_terminal();
        }
        send_query(tui);
    }

    /// pi's `reapplyForTerminal`: regenerate the system theme, or switch the theme of a pair.
    fn reapply_for_terminal(&mut self) {
        let setting = self.theme_name.clone();
        let resolved = resolve_theme_setting(setting.as_deref(), terminal_appearance())
            .filter(|n| !n.is_empty())
            .unwrap_or(SYSTEM_THEME_NAME)
            .to_owned();
        // A named theme only uses the terminal's colours for its `""` tokens, which the terminal
        // draws itself: nothing changes.
        if resolved != SYSTEM_THEME_NAME && resolved == self.theme.name() {
            return;
        }
        // As pi's `applyThemeName` without `showError`: a theme that fails falls back silently.
        let themes = self.session.extension_themes();
        let (theme, _) =
            super::app::load_theme_with(Some(&resolved), &self.agent_dir, self.session.cwd(), self.color_mode, &themes);
        self.set_theme(Rc::new(theme));
        self.dirty = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reset() {
        STATE.with_borrow_mut(|s| *s = State::default());
    }

    fn push_query() {
        STATE.with_borrow_mut(|s| {
            s.queries.push_back(Query {
                foreground: None,
                background: None,
                palette: [None; PALETTE_SIZE],
                replied: HashSet::new(),
                deadline: Instant::now() + TERMINAL_QUERY_TIMEOUT,
                delivering: true,
                timed_out: false,
            })
        });
    }

    #[test]
    fn replies_complete_the_query_at_the_da1_reply_and_are_never_input() {
        reset();
        push_query();
        assert!(matches!(consume("\x1b]11;rgb:0000/0000/0000\x1b\\"), Consumed::Yes));
        assert!(matches!(consume("a"), Consumed::No));
        match consume("\x1b[?62;c") {
            Consumed::Colors(c) => {
                assert_eq!(c.background, Some(Rgb { r: 0, g: 0, b: 0 }));
                assert_eq!(c.foreground, None);
                assert_eq!(c.palette, None);
            }
            _ => panic!("the DA1 reply completes the query"),
        }
        // No query waits: a stray DA1 reply is still not input, a colour reply is.
        assert!(matches!(consume("\x1b[?62;c"), Consumed::Yes));
        assert!(matches!(consume("\x1b]10;#ffffff\x07"), Consumed::No));
    }

    #[test]
    fn a_timed_out_query_delivers_late_replies_once() {
        reset();
        push_query();
        let timed_out = take_timeouts(Instant::now() + TERMINAL_QUERY_TIMEOUT * 2);
        assert_eq!(timed_out, vec![TerminalColors::default()]);
        assert!(take_timeouts(Instant::now() + TERMINAL_QUERY_TIMEOUT * 2).is_empty());
        assert!(matches!(consume("\x1b]10;#ffffff\x07"), Consumed::Yes));
        match consume("\x1b[?1;2c") {
            Consumed::Colors(c) => assert_eq!(c.foreground, Some(Rgb { r: 255, g: 255, b: 255 })),
            _ => panic!("a late reply still applies"),
        }
    }

    #[test]
    fn colours_merge_and_decide_the_appearance() {
        reset();
        assert!(record_colors(TerminalColors {
            background: Some(Rgb { r: 250, g: 250, b: 250 }),
            ..Default::default()
        }));
        assert_eq!(terminal_appearance(), Appearance::Light);
        // A timeout with nothing keeps what was reported and changes nothing.
        assert!(!record_colors(TerminalColors::default()));
        assert_eq!(terminal_appearance(), Appearance::Light);
        assert!(follows_terminal(None));
        assert!(follows_terminal(Some("light/dark")));
        assert!(!follows_terminal(Some("dark")));
    }
}
