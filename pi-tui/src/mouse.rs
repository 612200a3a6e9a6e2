//! Mouse input on the alternate screen (pi-tui's `TuiMouseEvent` and the parsing half of
//! `TuiAltScreen`): the escape sequences that turn mouse reporting on and off, SGR and X10
//! mouse reports parsed into typed events with 0-based cells, and the wheel's line counts
//! (pi's `WheelScrollAccelerator`).

/// Mouse reporting for multiplexers: clicks, wheel, button motion, focus, SGR encoding.
pub const ENABLE_BUTTON_MOTION_MOUSE: &str = "\x1b[?1000h\x1b[?1002h\x1b[?1004h\x1b[?1006h";
/// Mouse reporting with every pointer motion (terminals outside a multiplexer).
pub const ENABLE_ALL_MOTION_MOUSE: &str = "\x1b[?1000h\x1b[?1002h\x1b[?1003h\x1b[?1004h\x1b[?1006h";
/// Turns every mouse mode the enable sequences set off again, in reverse order.
pub const DISABLE_MOUSE: &str = "\x1b[?1006l\x1b[?1004l\x1b[?1003l\x1b[?1002l\x1b[?1000l";
/// Focus-in report (mode 1004).
pub const FOCUS_IN: &str = "\x1b[I";
/// Focus-out report (mode 1004).
pub const FOCUS_OUT: &str = "\x1b[O";
/// Alt+wheel scrolls this many times the normal step.
pub const ALT_WHEEL_SCROLL_MULTIPLIER: i64 = 5;

/// The enable sequence pi picks: button motion only under tmux, zellij or screen (forwarding
/// every pointer move lags there), all motion elsewhere. `var` reads the environment.
pub fn mouse_enable_sequence(var: impl Fn(&str) -> Option<String>) -> &'static str {
    let term = var("TERM").unwrap_or_default().to_lowercase();
    let multiplexer = var("TMUX").is_some()
        || var("ZELLIJ").is_some()
        || var("STY").is_some()
        || term.starts_with("tmux")
        || term.starts_with("screen");
    if multiplexer { ENABLE_BUTTON_MOTION_MOUSE } else { ENABLE_ALL_MOTION_MOUSE }
}

/// What happened (pi's `TuiMouseEventType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseEventType {
    /// A button went down.
    Press,
    /// A button went up.
    Release,
    /// The pointer moved with no button down.
    Move,
    /// The pointer moved with a button down.
    Drag,
    /// A press and release on the same cell (synthesized, with a click count).
    Click,
    /// A wheel notch.
    Wheel,
}

impl MouseEventType {
    /// pi's name of the type (`"press"`, `"wheel"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Press => "press",
            Self::Release => "release",
            Self::Move => "move",
            Self::Drag => "drag",
            Self::Click => "click",
            Self::Wheel => "wheel",
        }
    }
}

/// The button (pi's `TuiMouseButton`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseButton {
    /// Left button.
    Left,
    /// Middle button.
    Middle,
    /// Right button.
    Right,
    /// No button (motion, release in X10, wheel).
    None,
}

impl MouseButton {
    /// The button of an SGR/X10 button code (its low two bits).
    pub fn decode(code: u32) -> Self {
        match code & 3 {
            0 => Self::Left,
            1 => Self::Middle,
            2 => Self::Right,
            _ => Self::None,
        }
    }

    /// pi's name of the button.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Left => "left",
            Self::Middle => "middle",
            Self::Right => "right",
            Self::None => "none",
        }
    }
}

/// A normalized mouse event (pi's `TuiMouseEvent`). `x`/`y` are relative to the receiving
/// component's rectangle of `width`×`height`; `screen_x`/`screen_y` are 0-based terminal cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MouseEvent {
    /// What happened.
    pub kind: MouseEventType,
    /// Which button (`None` for wheel and motion without a button).
    pub button: MouseButton,
    /// Column inside the component.
    pub x: i64,
    /// Row inside the component.
    pub y: i64,
    /// Column on the screen (0-based).
    pub screen_x: i64,
    /// Row on the screen (0-based).
    pub screen_y: i64,
    /// Width of the receiving rectangle (the terminal's for a screen event).
    pub width: usize,
    /// Height of the receiving rectangle.
    pub height: usize,
    /// Shift held.
    pub shift: bool,
    /// Alt held.
    pub alt: bool,
    /// Ctrl held.
    pub ctrl: bool,
    /// Signed lines for a wheel event (negative scrolls up).
    pub wheel_delta: Option<i64>,
    /// 1, 2 or 3 for a click.
    pub click_count: Option<u32>,
}

impl MouseEvent {
    /// pi's `createMouseEvent`: an event at screen cell (`x`, `y`) of a `width`×`height` screen.
    pub fn new(kind: MouseEventType, code: u32, x: i64, y: i64, width: usize, height: usize) -> Self {
        MouseEvent {
            kind,
            button: if kind == MouseEventType::Wheel { MouseButton::None } else { MouseButton::decode(code) },
            x,
            y,
            screen_x: x,
            screen_y: y,
            width: width.max(1),
            height: height.max(1),
            shift: code & 4 != 0,
            alt: code & 8 != 0,
            ctrl: code & 16 != 0,
            wheel_delta: None,
            click_count: None,
        }
    }

    /// The same event relative to a rectangle at (`rx`, `ry`) of `width`×`height`
    /// (pi's `retargetMouseEvent`).
    pub fn retarget(&self, rx: i64, ry: i64, width: usize, height: usize) -> Self {
        MouseEvent { x: self.screen_x - rx, y: self.screen_y - ry, width, height, ..self.clone() }
    }
}

/// A raw SGR report (pi's `parseSgrMouseEvent`): the button code, 0-based cell, release flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawMouse {
    /// The button code with its modifier (4, 8, 16), motion (32) and wheel (64) bits.
    pub code: u32,
    /// 0-based column.
    pub x: i64,
    /// 0-based row.
    pub y: i64,
    /// Whether the report ended in `m` (a release).
    pub release: bool,
}

impl RawMouse {
    /// Whether the motion bit is set.
    pub fn is_motion(&self) -> bool {
        self.code & 32 != 0
    }

    /// The event type pi derives: release, move (motion without a button), drag, or press.
    pub fn kind(&self) -> MouseEventType {
        if self.release {
            MouseEventType::Release
        } else if self.is_motion() {
            if MouseButton::decode(self.code) == MouseButton::None {
                MouseEventType::Move
            } else {
                MouseEventType::Drag
            }
        } else {
            MouseEventType::Press
        }
    }
}

/// Parse `CSI < code ; x ; y M|m` (1-based cells) into a [`RawMouse`].
pub fn parse_sgr_mouse(data: &str) -> Option<RawMouse> {
    let body = data.strip_prefix("\x1b[<")?;
    let release = body.ends_with('m');
    if !release && !body.ends_with('M') {
        return None;
    }
    let mut parts = body[..body.len() - 1].split(';');
    let mut num = || -> Option<u64> {
        let p = parts.next()?;
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        p.parse().ok()
    };
    let (code, x, y) = (num()?, num()?, num()?);
    if parts.next().is_some() {
        return None;
    }
    Some(RawMouse { code: u32::try_from(code).ok()?, x: x as i64 - 1, y: y as i64 - 1, release })
}

/// A wheel notch (pi's `parseWheelEvent`): direction -1 up / 1 down, 0-based cell, the code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WheelNotch {
    /// -1 scrolls up, 1 down.
    pub direction: i64,
    /// 0-based column.
    pub x: i64,
    /// 0-based row.
    pub y: i64,
    /// The button code (bit 8 is Alt).
    pub code: u32,
}

/// Parse an SGR or X10 (`CSI M b x y`) wheel report; other reports give `None`.
pub fn parse_wheel(data: &str) -> Option<WheelNotch> {
    let (code, x, y) = if let Some(raw) = parse_sgr_mouse(data) {
        (raw.code, raw.x, raw.y)
    } else {
        let bytes: Vec<char> = data.strip_prefix("\x1b[M")?.chars().collect();
        if bytes.len() != 3 {
            return None;
        }
        let b = (bytes[0] as u32).checked_sub(32)?;
        (b, bytes[1] as i64 - 33, bytes[2] as i64 - 33)
    };
    if code & 64 == 0 {
        return None;
    }
    let direction = match code & 3 {
        0 => -1,
        1 => 1,
        _ => return None,
    };
    Some(WheelNotch { direction, x, y, code })
}

/// Whether `data` is any mouse report (SGR or X10), consumed even when nothing handles it.
pub fn is_mouse_sequence(data: &str) -> bool {
    parse_sgr_mouse(data).is_some() || (data.starts_with("\x1b[M") && data.chars().count() == 6)
}

/// Lines per wheel event (pi's `fullscreenWheelScrollLines`): a fixed count or `Auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WheelLines {
    /// Velocity-dependent (1 to 6 lines per event) where the terminal does not accelerate.
    Auto,
    /// This many lines per event (at least 1).
    Fixed(u32),
}

const BURST_GAP_MS: f64 = 5.0;
const GESTURE_GAP_MS: f64 = 200.0;
const REFERENCE_GAP_MS: f64 = 100.0;
const MAX_AUTO_LINES: f64 = 6.0;

/// Converts wheel events into line counts (pi's `WheelScrollAccelerator`): in `Auto` mode an
/// isolated notch moves one line, a fast spin up to six per event (notches 100 ms apart move 1
/// line, 50 ms apart 2, 20 ms apart 5); events under 5 ms apart move one line each.
#[derive(Debug, Clone)]
pub struct WheelScrollAccelerator {
    lines: WheelLines,
    accelerate: bool,
    last_time: f64,
    last_direction: i64,
    average_gap: Option<f64>,
    carry: f64,
}

impl WheelScrollAccelerator {
    /// An accelerator; `accelerate` is false where the terminal already accelerates (local macOS).
    pub fn new(lines: WheelLines, accelerate: bool) -> Self {
        WheelScrollAccelerator {
            lines,
            accelerate,
            last_time: f64::NEG_INFINITY,
            last_direction: 0,
            average_gap: None,
            carry: 0.0,
        }
    }

    /// Change the setting (and forget the gesture).
    pub fn set_lines(&mut self, lines: WheelLines) {
        self.lines = lines;
        *self = Self::new(lines, self.accelerate);
    }

    /// The positive line count for a wheel event in `direction` at `now_ms` (milliseconds).
    pub fn next(&mut self, direction: i64, now_ms: f64) -> i64 {
        match self.lines {
            WheelLines::Fixed(n) => return i64::from(n.max(1)),
            WheelLines::Auto if !self.accelerate => return 1,
            WheelLines::Auto => {}
        }
        let gap = now_ms - self.last_time;
        let same_gesture = direction == self.last_direction && gap <= GESTURE_GAP_MS;
        self.last_time = now_ms;
        self.last_direction = direction;
        if !same_gesture {
            self.average_gap = None;
            self.carry = 0.0;
            return 1;
        }
        if gap < BURST_GAP_MS {
            return 1;
        }
        let average = self.average_gap.map_or(gap, |a| (a + gap) / 2.0);
        self.average_gap = Some(average);
        let lines = (REFERENCE_GAP_MS / average).clamp(1.0, MAX_AUTO_LINES) + self.carry;
        let whole = lines.floor();
        self.carry = lines - whole;
        whole as i64
    }
}

/// Whether the terminal accelerates wheel input itself (pi: local macOS, not over SSH).
pub fn terminal_accelerates_wheel() -> bool {
    cfg!(target_os = "macos")
        && ["SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY"].iter().all(|v| std::env::var_os(v).is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sgr_reports_parse_to_zero_based_cells() {
        assert_eq!(parse_sgr_mouse("\x1b[<0;10;5M"), Some(RawMouse { code: 0, x: 9, y: 4, release: false }));
        assert_eq!(parse_sgr_mouse("\x1b[<0;1;1m"), Some(RawMouse { code: 0, x: 0, y: 0, release: true }));
        assert_eq!(parse_sgr_mouse("\x1b[<32;3;4M").map(|r| r.kind()), Some(MouseEventType::Drag));
        assert_eq!(parse_sgr_mouse("\x1b[<35;3;4M").map(|r| r.kind()), Some(MouseEventType::Move));
        assert_eq!(parse_sgr_mouse("\x1b[<2;3;4M").map(|r| r.kind()), Some(MouseEventType::Press));
        assert_eq!(parse_sgr_mouse("\x1b[<0;1M"), None);
        assert_eq!(parse_sgr_mouse("\x1b[<0;1;2;3M"), None);
        assert_eq!(parse_sgr_mouse("\x1b[<a;1;2M"), None);
        assert_eq!(parse_sgr_mouse("\x1b[A"), None);
    }

    #[test]
    fn events_carry_buttons_and_modifiers() {
        let e = MouseEvent::new(MouseEventType::Press, 2 | 4 | 8 | 16, 3, 4, 80, 24);
        assert_eq!((e.button, e.shift, e.alt, e.ctrl), (MouseButton::Right, true, true, true));
        let w = MouseEvent::new(MouseEventType::Wheel, 65, 3, 4, 80, 24);
        assert_eq!(w.button, MouseButton::None);
        let r = e.retarget(1, 2, 10, 5);
        assert_eq!((r.x, r.y, r.screen_x, r.screen_y, r.width, r.height), (2, 2, 3, 4, 10, 5));
    }

    #[test]
    fn wheel_reports_in_sgr_and_x10() {
        assert_eq!(parse_wheel("\x1b[<64;10;5M"), Some(WheelNotch { direction: -1, x: 9, y: 4, code: 64 }));
        assert_eq!(parse_wheel("\x1b[<73;1;1M"), Some(WheelNotch { direction: 1, x: 0, y: 0, code: 73 }));
        assert_eq!(parse_wheel("\x1b[<66;1;1M"), None);
        assert_eq!(parse_wheel("\x1b[<0;1;1M"), None);
        // X10: button 64+32, column 10 and row 5 (1-based) + 32.
        assert_eq!(parse_wheel("\x1b[M`*%"), Some(WheelNotch { direction: -1, x: 9, y: 4, code: 64 }));
        assert!(is_mouse_sequence("\x1b[M`*%"));
        assert!(is_mouse_sequence("\x1b[<0;1;1m"));
        assert!(!is_mouse_sequence("\x1b[I"));
    }

    #[test]
    fn multiplexers_get_button_motion_only() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        assert_eq!(mouse_enable_sequence(env(&[("TERM", "xterm-256color")])), ENABLE_ALL_MOTION_MOUSE);
        assert_eq!(mouse_enable_sequence(env(&[("TMUX", "/tmp/x")])), ENABLE_BUTTON_MOTION_MOUSE);
        assert_eq!(mouse_enable_sequence(env(&[("TERM", "screen-256color")])), ENABLE_BUTTON_MOTION_MOUSE);
        assert_eq!(mouse_enable_sequence(env(&[("ZELLIJ", "0")])), ENABLE_BUTTON_MOTION_MOUSE);
    }

    #[test]
    fn auto_wheel_accelerates_with_velocity() {
        let mut w = WheelScrollAccelerator::new(WheelLines::Auto, true);
        assert_eq!(w.next(1, 0.0), 1, "an isolated notch");
        assert_eq!(w.next(1, 100.0), 1, "100 ms apart");
        assert_eq!(w.next(1, 150.0), 1, "average (100+50)/2 = 75 ms: 1.33 lines, carry 0.33");
        assert_eq!(w.next(1, 170.0), 2, "average 47.5 ms: 2.1 + 0.33");
        assert_eq!(w.next(1, 172.0), 1, "a burst under 5 ms");
        assert_eq!(w.next(-1, 180.0), 1, "a direction change starts a new gesture");
        assert_eq!(w.next(-1, 500.0), 1, "a pause over 200 ms too");
        for t in 1..20 {
            assert!(w.next(-1, 500.0 + 10.0 * t as f64) <= 6);
        }
        let mut fixed = WheelScrollAccelerator::new(WheelLines::Fixed(3), true);
        assert_eq!(fixed.next(1, 0.0), 3);
        assert_eq!(WheelScrollAccelerator::new(WheelLines::Fixed(0), true).next(1, 0.0), 1);
        assert_eq!(WheelScrollAccelerator::new(WheelLines::Auto, false).next(1, 0.0), 1);
    }
}
