//! The fullscreen mode's mouse (pi's `TuiAltScreen.handleViewportInput` for mouse reports):
//! the wheel scrolls the transcript (`fullscreenWheelScrollLines`, Alt ×5), the scrollbar can be
//! clicked and dragged and lights up under the pointer, the "Jump to latest message" indicator
//! returns to the end, and other events go to the component under the pointer
//! ([`pi_tui::Component::handle_mouse`]), which can capture a drag: first the frontmost visible
//! overlay drawn there (pi's `dispatchMouseToOverlay`; what it does not use goes to nothing under
//! it, and a wheel it does not use scrolls the transcript), then the transcript and the dock.
//! While an overlay is visible the scrollbar is not a target. Focus reports are consumed.

use std::time::Instant;

use pi_tui::mouse::{
    ALT_WHEEL_SCROLL_MULTIPLIER, FOCUS_IN, FOCUS_OUT, MouseEvent, MouseEventType, RawMouse, WheelLines,
    WheelScrollAccelerator, is_mouse_sequence, parse_sgr_mouse, parse_wheel, terminal_accelerates_wheel,
};
use pi_tui::render::scrollbar::ScrollbarMode;
use pi_tui::{MouseDispatch, OverlayHit, Terminal, Tui, dispatch_mouse};

use super::app::App;
use super::selection::{Point, Selection, selected_text};
use super::transcript_view::ViewChrome;
use crate::settings::FullscreenScrollbar;

/// How long "Copied!" shows (pi's flash default), and a copy error.
const FLASH: std::time::Duration = std::time::Duration::from_millis(1000);
const ERROR_FLASH: std::time::Duration = std::time::Duration::from_millis(5000);
/// pi's limit of an OSC 52 copy (base64 characters).
const MAX_OSC52_ENCODED_LENGTH: usize = 100_000;

/// pi's `copyToClipboard` on Linux: `termux-clipboard-set`, `wl-copy`, `xclip`, `xsel` where
/// their environment is set, then OSC 52 (through the terminal) in a remote or headless session;
/// the error names what to install.
pub(crate) fn copy_to_clipboard<T: Terminal>(tui: &mut Tui<T>, text: &str) -> Result<(), String> {
    let env = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    let mut commands: Vec<(&str, &[&str])> = Vec::new();
    if env("TERMUX_VERSION") {
        commands.push(("termux-clipboard-set", &[]));
    }
    if env("WAYLAND_DISPLAY") {
        commands.push(("wl-copy", &[]));
    }
    if env("DISPLAY") {
        commands.push(("xclip", &["-selection", "clipboard"]));
        commands.push(("xsel", &["--clipboard", "--input"]));
    }
    let mut copied = commands.iter().any(|(cmd, args)| run_clipboard_command(cmd, args, text));
    let remote = env("SSH_CONNECTION")
        || env("SSH_CLIENT")
        || env("MOSH_CONNECTION")
        || std::env::var("PI_CLIPBOARD_OSC52").as_deref() == Ok("1");
    let headless = !env("DISPLAY") && !env("WAYLAND_DISPLAY") && !env("TERMUX_VERSION");
    let mut oversized = false;
    if remote || (!copied && headless) {
        use base64::Engine;
        let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
        if encoded.len() > MAX_OSC52_ENCODED_LENGTH {
            oversized = true;
        } else {
            tui.terminal_mut().write(&format!("\x1b]52;c;{encoded}\x07"));
            copied = true;
        }
    }
    if copied {
        return Ok(());
    }
    Err(if oversized {
        "Clipboard unavailable: text exceeds the OSC 52 size limit".to_owned()
    } else if env("TERMUX_VERSION") {
        "Clipboard unavailable: install the Termux:API app and `termux-api` package".to_owned()
    } else if env("WAYLAND_DISPLAY") {
        "Clipboard unavailable: install `wl-clipboard` (`wl-copy`) or check Wayland access".to_owned()
    } else if env("DISPLAY") {
        "Clipboard unavailable: install `xclip` or `xsel`, or check X11 access".to_owned()
    } else {
        "Clipboard unavailable".to_owned()
    })
}

/// Runs a clipboard tool with `text` on its stdin (pi's 5 s timeout); whether it succeeded.
fn run_clipboard_command(command: &str, args: &[&str], text: &str) -> bool {
    use super::clipboard_command::{TEXT_TIMEOUT, run_clipboard_command};
    run_clipboard_command(command, args, Some(text.as_bytes()), TEXT_TIMEOUT).is_some()
}

/// pi's `applyMouseDispatchResult`: whether a component's answer to an event of `kind` draws a
/// frame (its `render`, else a focus change or a press, click, drag or wheel).
fn wants_frame<T: Terminal>(tui: &Tui<T>, kind: MouseEventType, d: &MouseDispatch) -> bool {
    let target = d.focus_target.as_ref().unwrap_or(&d.component);
    let focus_changed = d.result.focus && !tui.focused().is_some_and(|f| std::rc::Rc::ptr_eq(&f, target));
    let default = focus_changed
        || matches!(kind, MouseEventType::Press | MouseEventType::Click | MouseEventType::Drag | MouseEventType::Wheel);
    d.result.render.unwrap_or(default)
}

/// The mouse gesture state of the fullscreen mode.
pub(crate) struct MouseState {
    wheel: WheelScrollAccelerator,
    wheel_setting: Option<u32>,
    epoch: Instant,
    /// The grabbed row of the thumb while the scrollbar is dragged.
    scrollbar_drag: Option<i64>,
    /// The component that took the press (or captured the drag), with the press cell.
    press: Option<(MouseDispatch, i64, i64, bool)>,
    /// A component that asked for the keyboard focus (applied after the event).
    focus_request: Option<pi_tui::ComponentRef>,
    /// The transcript's text selection.
    pub(crate) selection: Selection,
    /// Text to copy once the event is handled (the terminal is needed for OSC 52).
    copy: Option<String>,
    /// Whether the event asks for a frame: false when only a component got it and pi's
    /// `applyMouseDispatchResult` would not draw (a release, a move, `render: false`).
    pub(crate) frame: bool,
}

impl Default for MouseState {
    fn default() -> Self {
        MouseState {
            wheel: WheelScrollAccelerator::new(WheelLines::Auto, !terminal_accelerates_wheel()),
            wheel_setting: None,
            epoch: Instant::now(),
            scrollbar_drag: None,
            press: None,
            focus_request: None,
            selection: Selection::default(),
            copy: None,
            frame: true,
        }
    }
}

impl App {
    /// Handles a mouse or focus report in fullscreen mode; false for anything else.
    pub(crate) fn on_mouse<T: Terminal>(&mut self, tui: &mut Tui<T>, data: &str) -> bool {
        if self.regular {
            return false;
        }
        self.mouse.frame = true;
        if data == FOCUS_OUT {
            self.mouse.scrollbar_drag = None;
            self.mouse.press = None;
            if self.mouse.selection.pressed {
                self.mouse.selection.clear();
                self.sync_selection();
            }
            self.layout.borrow_mut().view.set_active(false);
            self.clear_search_hover();
            return true;
        }
        if data == FOCUS_IN {
            return true;
        }
        let (width, height) = (tui.terminal().columns().max(1), tui.terminal().rows().max(1));
        if let Some(notch) = parse_wheel(data) {
            let now = self.mouse.epoch.elapsed().as_secs_f64() * 1000.0;
            let lines = self.mouse.wheel.next(notch.direction, now);
            let alt = notch.code & 8 != 0;
            let delta = notch.direction * if alt { lines * ALT_WHEEL_SCROLL_MULTIPLIER } else { lines };
            let mut event = MouseEvent::new(MouseEventType::Wheel, notch.code, notch.x, notch.y, width, height);
            event.wheel_delta = Some(delta);
            if self.dispatch_to_overlay_or_layout(tui, &event).is_none() {
                self.layout.borrow_mut().view.scroll_lines(delta);
                let overlay = tui.has_visible_overlay();
                self.update_scrollbar_hover(notch.x, notch.y, overlay);
            }
            return true;
        }
        match parse_sgr_mouse(data) {
            Some(raw) => self.on_mouse_report(tui, raw, width, height),
            None => return is_mouse_sequence(data),
        }
        if let Some(target) = self.mouse.focus_request.take() {
            tui.set_focus(Some(target));
        }
        if let Some(text) = self.mouse.copy.take() {
            self.copy_with_flash(tui, &text);
        }
        true
    }

    /// Copies `text` as the fullscreen transcript does (pi's `copyTextToClipboard`): "Copied!"
    /// flashes, or the error does, longer.
    pub(crate) fn copy_with_flash<T: Terminal>(&mut self, tui: &mut Tui<T>, text: &str) {
        match copy_to_clipboard(tui, text) {
            Ok(()) => self.flash_copied(),
            Err(e) => self.layout.borrow_mut().view.flash = Some((e, Instant::now() + ERROR_FLASH)),
        }
    }

    /// "Copied!" flashes over the fullscreen transcript.
    pub(crate) fn flash_copied(&mut self) {
        self.layout.borrow_mut().view.flash = Some(("Copied!".to_owned(), Instant::now() + FLASH));
    }

    fn on_mouse_report<T: Terminal>(&mut self, tui: &Tui<T>, raw: RawMouse, width: usize, height: usize) {
        let kind = raw.kind();
        let event = MouseEvent::new(kind, raw.code, raw.x, raw.y, width, height);
        if let Some((target, px, py, moved)) = self.mouse.press.take() {
            let moved = moved || (raw.x, raw.y) != (px, py);
            let retargeted = event.retarget(target.origin_x, target.origin_y, target.width, target.height);
            let answer = dispatch_mouse(&target.component, &retargeted);
            self.mouse.frame = answer.is_some_and(|d| wants_frame(tui, kind, &d));
            if raw.release {
                if !moved {
                    let mut click = MouseEvent::new(MouseEventType::Click, raw.code, raw.x, raw.y, width, height)
                        .retarget(target.origin_x, target.origin_y, target.width, target.height);
                    click.click_count = Some(1);
                    let answer = dispatch_mouse(&target.component, &click);
                    self.mouse.frame |= answer.is_some_and(|d| wants_frame(tui, MouseEventType::Click, &d));
                }
            } else {
                self.mouse.press = Some((target, px, py, moved));
            }
            return;
        }
        if self.on_search_mouse(&raw, width, height) {
            return;
        }
        let overlay = tui.dispatch_mouse_to_overlay(&event);
        let result = match overlay {
            OverlayHit::Miss => {
                let has_overlay = tui.has_visible_overlay();
                if self.on_indicator(&raw) || self.on_scrollbar(&raw, has_overlay) {
                    return;
                }
                if self.mouse.scrollbar_drag.is_none() {
                    self.update_scrollbar_hover(raw.x, raw.y, has_overlay);
                }
                self.dispatch_to_layout(&event)
            }
            OverlayHit::Hit(result) => {
                self.layout.borrow_mut().view.set_active(false);
                self.apply_focus(result.as_ref());
                result
            }
        };
        if let Some(result) = result {
            self.mouse.frame = wants_frame(tui, kind, &result);
            if kind == MouseEventType::Press {
                self.mouse.selection.clear();
                self.sync_selection();
                self.mouse.press = Some((result, raw.x, raw.y, false));
            }
            return;
        }
        self.on_selection(tui, &raw, width, height);
    }

    /// pi's `handleSelectionMouseEvent` for the transcript: a left press starts a selection, a
    /// drag extends it, a release ends it (and copies it with `fullscreenCopyOnSelect`); a
    /// release where the press was is a click for the component under the pointer.
    fn on_selection<T: Terminal>(&mut self, tui: &Tui<T>, raw: &RawMouse, width: usize, height: usize) {
        let button = raw.code & 3;
        if button != 0 && !(raw.release && button == 3) {
            return;
        }
        let (top, rows, columns) = {
            let layout = self.layout.borrow();
            (layout.view.top, layout.view.height, width)
        };
        if rows == 0 {
            return;
        }
        let row = top + raw.y.clamp(0, rows as i64 - 1) as usize;
        let point = Point::at(row, raw.x.clamp(0, columns as i64 - 1) as usize);
        let line = self.layout.borrow().view.line(row).to_owned();
        let selection = &mut self.mouse.selection;
        if raw.release {
            if !selection.pressed {
                return;
            }
            selection.pressed = false;
            selection.extend(point, &line);
            if selection.is_click_at(&point) {
                let mut click = MouseEvent::new(MouseEventType::Click, raw.code, raw.x, raw.y, width, height);
                click.click_count = Some(selection.click_count());
                if self.dispatch_to_overlay_or_layout(tui, &click).is_some() {
                    self.mouse.selection.clear();
                    self.sync_selection();
                    return;
                }
            }
            if self.session.settings_manager().settings().fullscreen_copy_on_select() {
                self.mouse.copy = self.selection_text();
            }
        } else if raw.is_motion() {
            if !selection.pressed {
                return;
            }
            selection.dragged = true;
            selection.extend(point, &line);
        } else if raw.y < rows as i64 {
            selection.press(point, &line);
        } else {
            // The dock has no scroll view: pi selects screen cells there (not ported).
            selection.clear();
        }
        self.sync_selection();
    }

    /// The selected text of the transcript (pi's `getActiveSelectionText`).
    pub(crate) fn selection_text(&self) -> Option<String> {
        let bounds = self.mouse.selection.bounds()?;
        let layout = self.layout.borrow();
        let lines: Vec<&str> = (0..=bounds.1.row).map(|r| layout.view.line(r)).collect();
        selected_text(&lines, bounds)
    }

    fn sync_selection(&mut self) {
        self.layout.borrow_mut().view.selection = self.mouse.selection.bounds();
    }

    /// pi's `handleScrollToEndIndicatorMouseEvent`: a left press on the indicator.
    fn on_indicator(&mut self, raw: &RawMouse) -> bool {
        let mut layout = self.layout.borrow_mut();
        let Some((row, column, width)) = layout.view.indicator_rect else { return false };
        if raw.release || raw.is_motion() || raw.code & 3 != 0 {
            return false;
        }
        if raw.y != row as i64 || raw.x < column as i64 || raw.x >= (column + width) as i64 {
            return false;
        }
        layout.view.scroll_to_end();
        true
    }

    /// pi's `handleScrollbarMouseEvent`: a left press on the track jumps (the thumb centred on
    /// the pointer) and starts a drag; on the thumb it grabs it where pressed.
    fn on_scrollbar(&mut self, raw: &RawMouse, has_overlay: bool) -> bool {
        let mut layout = self.layout.borrow_mut();
        if let Some(grab) = self.mouse.scrollbar_drag {
            if raw.release {
                self.mouse.scrollbar_drag = None;
                return true;
            }
            if let Some(g) = layout.view.geometry(false) {
                let top = g.scroll_top_for_pointer(raw.y, grab);
                layout.view.scroll_to(top);
            }
            return true;
        }
        if raw.release || raw.is_motion() || raw.code & 3 != 0 || has_overlay {
            return false;
        }
        let Some(g) = layout.view.geometry(false).filter(|g| g.contains(raw.x, raw.y)) else { return false };
        layout.view.set_active(true);
        let on_thumb = g.on_thumb(raw.y);
        let grab = if on_thumb { raw.y - g.thumb_top as i64 } else { (g.thumb_height / 2) as i64 };
        if !on_thumb {
            let top = g.scroll_top_for_pointer(raw.y, grab);
            layout.view.scroll_to(top);
        }
        self.mouse.scrollbar_drag = Some(grab);
        true
    }

    fn update_scrollbar_hover(&mut self, x: i64, y: i64, has_overlay: bool) {
        let mut layout = self.layout.borrow_mut();
        let over = !has_overlay && layout.view.geometry(true).is_some_and(|g| g.contains(x, y));
        layout.view.set_active(over);
    }

    /// pi's `dispatchMouseToLayout`: the component drawn under the pointer, then its parents'
    /// boxes, until one handles the event.
    fn dispatch_to_layout(&mut self, event: &MouseEvent) -> Option<MouseDispatch> {
        let boxes = self.layout.borrow().boxes.clone();
        let y = event.screen_y;
        for b in boxes.iter().filter(|b| y >= b.top as i64 && y < (b.top + b.height) as i64) {
            let origin_y = b.top as i64 - b.first_line as i64;
            let height = b.first_line + b.height;
            let local = event.retarget(0, origin_y, event.width, height);
            if let Some(result) = dispatch_mouse(&b.component, &local) {
                self.apply_focus(Some(&result));
                return Some(result);
            }
        }
        None
    }

    /// The overlay drawn under the pointer gets the event; without one, the layout does.
    fn dispatch_to_overlay_or_layout<T: Terminal>(
        &mut self,
        tui: &Tui<T>,
        event: &MouseEvent,
    ) -> Option<MouseDispatch> {
        match tui.dispatch_mouse_to_overlay(event) {
            OverlayHit::Miss => self.dispatch_to_layout(event),
            OverlayHit::Hit(result) => {
                self.apply_focus(result.as_ref());
                result
            }
        }
    }

    /// A component that asked for the keyboard focus gets it after the event.
    fn apply_focus(&mut self, result: Option<&MouseDispatch>) {
        if let Some(result) = result.filter(|r| r.result.focus) {
            self.mouse.focus_request = Some(result.focus_target.clone().unwrap_or(result.component.clone()));
        }
    }

    /// Reads the fullscreen settings and the theme into the view (each frame: `/settings` and
    /// theme changes apply at once).
    pub(crate) fn sync_fullscreen_view(&mut self) {
        if self.regular {
            return;
        }
        let settings = self.session.settings_manager().settings();
        let mode = match settings.fullscreen_scrollbar() {
            FullscreenScrollbar::Auto => ScrollbarMode::Auto,
            FullscreenScrollbar::Always => ScrollbarMode::Always,
            FullscreenScrollbar::Hidden => ScrollbarMode::Hidden,
        };
        let wheel = settings.fullscreen_wheel_scroll_lines();
        if wheel != self.mouse.wheel_setting {
            self.mouse.wheel_setting = wheel;
            self.mouse.wheel.set_lines(wheel.map_or(WheelLines::Auto, WheelLines::Fixed));
        }
        let shortcut = super::keys::key_display(&self.keys, "tui.altScreen.bottom");
        let label = if shortcut.is_empty() {
            " ↓ Jump to latest message ".to_owned()
        } else {
            format!(" ↓ Jump to latest message · {shortcut} ")
        };
        let chrome = ViewChrome {
            track: self.theme.fg("scrollbarTrack", "│"),
            thumb: self.theme.fg("scrollbarThumb", "┃"),
            thumb_active: self.theme.fg("scrollbarThumb", "█"),
            indicator: self.theme.bg("selectedBg", &self.theme.fg("text", &label)),
        };
        let mut layout = self.layout.borrow_mut();
        layout.view.mode = mode;
        layout.view.chrome = chrome;
        let searching = layout.search.is_some();
        drop(layout);
        if searching {
            self.sync_search_styles();
        }
    }
}
