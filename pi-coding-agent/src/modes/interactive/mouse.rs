//! The fullscreen mode's mouse (pi's `TuiAltScreen.handleViewportInput` for mouse reports):
//! the wheel scrolls the transcript (`fullscreenWheelScrollLines`, Alt ×5), the scrollbar can be
//! clicked and dragged and lights up under the pointer, the "Jump to latest message" indicator
//! returns to the end, and other events go to the component under the pointer
//! ([`pi_tui::Component::handle_mouse`]), which can capture a drag. Focus reports are consumed.

use std::time::Instant;

use pi_tui::mouse::{
    ALT_WHEEL_SCROLL_MULTIPLIER, FOCUS_IN, FOCUS_OUT, MouseEvent, MouseEventType, RawMouse, WheelLines,
    WheelScrollAccelerator, is_mouse_sequence, parse_sgr_mouse, parse_wheel, terminal_accelerates_wheel,
};
use pi_tui::render::scrollbar::ScrollbarMode;
use pi_tui::{MouseDispatch, Terminal, Tui, dispatch_mouse};

use super::app::App;
use super::transcript_view::ViewChrome;
use crate::settings::FullscreenScrollbar;

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
        }
    }
}

impl App {
    /// Handles a mouse or focus report in fullscreen mode; false for anything else.
    pub(crate) fn on_mouse<T: Terminal>(&mut self, tui: &mut Tui<T>, data: &str) -> bool {
        if self.regular {
            return false;
        }
        if data == FOCUS_OUT {
            self.mouse.scrollbar_drag = None;
            self.mouse.press = None;
            self.layout.borrow_mut().view.set_active(false);
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
            if self.dispatch_to_layout(&event).is_none() {
                self.layout.borrow_mut().view.scroll_lines(delta);
                self.update_scrollbar_hover(notch.x, notch.y);
            }
            return true;
        }
        match parse_sgr_mouse(data) {
            Some(raw) => self.on_mouse_report(raw, width, height),
            None => return is_mouse_sequence(data),
        }
        if let Some(target) = self.mouse.focus_request.take() {
            tui.set_focus(Some(target));
        }
        true
    }

    fn on_mouse_report(&mut self, raw: RawMouse, width: usize, height: usize) {
        let kind = raw.kind();
        let event = MouseEvent::new(kind, raw.code, raw.x, raw.y, width, height);
        if let Some((target, px, py, moved)) = self.mouse.press.take() {
            let moved = moved || (raw.x, raw.y) != (px, py);
            let retargeted = event.retarget(target.origin_x, target.origin_y, target.width, target.height);
            let _ = dispatch_mouse(&target.component, &retargeted);
            if raw.release {
                if !moved {
                    let mut click = MouseEvent::new(MouseEventType::Click, raw.code, raw.x, raw.y, width, height)
                        .retarget(target.origin_x, target.origin_y, target.width, target.height);
                    click.click_count = Some(1);
                    let _ = dispatch_mouse(&target.component, &click);
                }
            } else {
                self.mouse.press = Some((target, px, py, moved));
            }
            return;
        }
        if self.on_indicator(&raw) || self.on_scrollbar(&raw) {
            return;
        }
        if self.mouse.scrollbar_drag.is_none() {
            self.update_scrollbar_hover(raw.x, raw.y);
        }
        if let Some(result) = self.dispatch_to_layout(&event)
            && kind == MouseEventType::Press
        {
            self.mouse.press = Some((result, raw.x, raw.y, false));
        }
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
    fn on_scrollbar(&mut self, raw: &RawMouse) -> bool {
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
        if raw.release || raw.is_motion() || raw.code & 3 != 0 {
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

    fn update_scrollbar_hover(&mut self, x: i64, y: i64) {
        let mut layout = self.layout.borrow_mut();
        let over = layout.view.geometry(true).is_some_and(|g| g.contains(x, y));
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
                if result.result.focus {
                    self.mouse.focus_request = Some(result.focus_target.clone().unwrap_or(result.component.clone()));
                }
                return Some(result);
            }
        }
        None
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
    }
}
