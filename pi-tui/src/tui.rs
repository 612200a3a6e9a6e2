//! `Tui`: the component tree, focus, overlays, input dispatch and frame scheduling over a
//! [`Terminal`], drawing with the main-screen or the alt-screen renderer.

use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::ansi::{composite_line, slice_by_column, visible_width};
use crate::component::{Component, ComponentRef, Container, Lines};
use crate::error::TuiError;
use crate::keys::{Keybindings, is_key_release};
use crate::mouse::MouseEvent;
use crate::mouse_dispatch::{OverlayHit, RenderedOverlay, dispatch_to_overlays};
use crate::render::differential::FrameOptions;
use crate::render::{
    AltScreen, CursorPos, FrameLine, MainScreen, OverlayOptions, find_cursor, finish_line, resolve_fake_cursor,
    resolve_overlay_layout, strip_osc133_prefix,
};
use crate::terminal::{Terminal, TerminalEvent};

/// Which renderer draws the frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScreenMode {
    /// Line diff into the normal buffer; the terminal keeps scrollback (pi's "regular").
    Main,
    /// Alternate screen with an app-owned viewport (pi's "fullscreen").
    Alt,
}

/// What an input listener decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputAction {
    /// Pass the data on unchanged.
    Pass,
    /// Stop here.
    Consume,
    /// Continue with replaced data.
    Replace(String),
}

/// Handle of a shown overlay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OverlayId(u64);

struct OverlayEntry {
    id: OverlayId,
    component: ComponentRef,
    options: OverlayOptions,
    hidden: bool,
    focus_order: u64,
    pre_focus: Option<ComponentRef>,
}

/// Minimum time between scheduled frames (pi: 16 ms).
pub const MIN_FRAME_INTERVAL: Duration = Duration::from_millis(16);

type Listener = Box<dyn FnMut(&str) -> InputAction>;

/// The terminal UI: a root container rendered by a differential renderer.
pub struct Tui<T: Terminal> {
    terminal: T,
    root: Container,
    focused: Option<ComponentRef>,
    overlays: Vec<OverlayEntry>,
    next_id: u64,
    mode: ScreenMode,
    main: MainScreen,
    alt: AltScreen,
    show_hardware_cursor: bool,
    clear_on_shrink: bool,
    started: bool,
    render_requested: bool,
    last_frame: Option<Instant>,
    segment_cache: Vec<(Lines, Rc<[FrameLine]>)>,
    cache_show: bool,
    listeners: Vec<Listener>,
    keys: Keybindings,
    rendered_overlays: Vec<RenderedOverlay>,
}

impl<T: Terminal> Tui<T> {
    /// A TUI over `terminal` (not started).
    pub fn new(terminal: T, mode: ScreenMode) -> Self {
        Self {
            terminal,
            root: Container::new(),
            focused: None,
            overlays: Vec::new(),
            next_id: 1,
            mode,
            main: MainScreen::new(),
            alt: {
                let mut alt = AltScreen::new();
                // pi's `TuiAltScreen` reports the mouse unless told not to (`mouse: false`).
                alt.set_mouse(Some(crate::mouse::mouse_enable_sequence(|k| std::env::var(k).ok())));
                alt.set_image_protocol(crate::render::kitty_alt::image_protocol_from_env(|k| std::env::var(k).ok()));
                alt
            },
            show_hardware_cursor: false,
            clear_on_shrink: false,
            started: false,
            render_requested: false,
            last_frame: None,
            segment_cache: Vec::new(),
            cache_show: false,
            listeners: Vec::new(),
            keys: Keybindings::default(),
            rendered_overlays: Vec::new(),
        }
    }

    /// The terminal.
    pub fn terminal(&self) -> &T {
        &self.terminal
    }

    /// The terminal, mutably (tests resize a [`crate::CaptureTerminal`] through this).
    pub fn terminal_mut(&mut self) -> &mut T {
        &mut self.terminal
    }

    /// The root container.
    pub fn root(&mut self) -> &mut Container {
        &mut self.root
    }

    /// Append a child to the root.
    pub fn add_child(&mut self, child: ComponentRef) {
        self.root.add_child(child);
    }

    /// The main-screen renderer (for statistics).
    pub fn main_screen(&self) -> &MainScreen {
        &self.main
    }

    /// The alt-screen renderer (for scrolling).
    pub fn alt_screen(&mut self) -> &mut AltScreen {
        &mut self.alt
    }

    /// Show the hardware cursor at the cursor marker instead of the drawn fake cursor.
    pub fn set_show_hardware_cursor(&mut self, show: bool) {
        self.show_hardware_cursor = show;
    }

    /// Redraw fully when the document becomes shorter than ever rendered (off by default).
    pub fn set_clear_on_shrink(&mut self, on: bool) {
        self.clear_on_shrink = on;
    }

    /// Add a listener that sees input before the focused component.
    pub fn add_input_listener(&mut self, f: impl FnMut(&str) -> InputAction + 'static) {
        self.listeners.push(Box::new(f));
    }

    /// Move focus (the component is told through [`Component::set_focused`]).
    pub fn set_focus(&mut self, target: Option<ComponentRef>) {
        if let Some(old) = &self.focused {
            old.borrow_mut().set_focused(false);
        }
        if let Some(new) = &target {
            new.borrow_mut().set_focused(true);
        }
        self.focused = target;
    }

    /// The focused component.
    pub fn focused(&self) -> Option<ComponentRef> {
        self.focused.clone()
    }

    /// Show `component` as an overlay; it takes focus unless `non_capturing`.
    pub fn show_overlay(&mut self, component: ComponentRef, options: OverlayOptions) -> OverlayId {
        let id = OverlayId(self.next_id);
        self.next_id += 1;
        let pre_focus = self.focused.clone();
        let capture = !options.non_capturing;
        self.overlays.push(OverlayEntry {
            id,
            component: component.clone(),
            options,
            hidden: false,
            focus_order: id.0,
            pre_focus,
        });
        if capture {
            self.set_focus(Some(component));
        }
        self.terminal.hide_cursor();
        self.request_render(false);
        id
    }

    /// Remove an overlay; focus returns to the topmost visible capturing overlay or to the
    /// focus held before it was shown.
    pub fn hide_overlay(&mut self, id: OverlayId) {
        let Some(pos) = self.overlays.iter().position(|o| o.id == id) else {
            return;
        };
        let entry = self.overlays.remove(pos);
        let had_focus = self.focused.as_ref().is_some_and(|f| Rc::ptr_eq(f, &entry.component));
        if had_focus {
            let next = self
                .overlays
                .iter()
                .filter(|o| !o.hidden && !o.options.non_capturing)
                .max_by_key(|o| o.focus_order)
                .map(|o| o.component.clone())
                .or(entry.pre_focus);
            self.set_focus(next);
        }
        if self.overlays.is_empty() {
            self.terminal.hide_cursor();
        }
        self.request_render(false);
    }

    /// Hide or show an overlay without removing it. Hiding the focused overlay moves the focus
    /// to the topmost visible capturing overlay (or the focus before it); showing a capturing
    /// one again brings it to the front with the focus (pi-tui's `setHidden`).
    pub fn set_overlay_hidden(&mut self, id: OverlayId, hidden: bool) {
        let next = self.next_id;
        let Some(o) = self.overlays.iter_mut().find(|o| o.id == id) else {
            return;
        };
        if o.hidden == hidden {
            return;
        }
        o.hidden = hidden;
        let (component, capturing, pre_focus) = (o.component.clone(), !o.options.non_capturing, o.pre_focus.clone());
        if hidden {
            if self.focused.as_ref().is_some_and(|f| Rc::ptr_eq(f, &component)) {
                let top = self
                    .overlays
                    .iter()
                    .filter(|o| !o.hidden && !o.options.non_capturing)
                    .max_by_key(|o| o.focus_order)
                    .map(|o| o.component.clone());
                self.set_focus(top.or(pre_focus));
            }
        } else if capturing {
            self.next_id += 1;
            if let Some(o) = self.overlays.iter_mut().find(|o| o.id == id) {
                o.focus_order = next;
            }
            self.set_focus(Some(component));
        }
        self.request_render(false);
    }

    /// Whether an overlay is shown and has the focus (pi-tui's `OverlayHandle.isFocused`).
    pub fn is_overlay_focused(&self, id: OverlayId) -> bool {
        self.overlays
            .iter()
            .find(|o| o.id == id)
            .is_some_and(|o| self.focused.as_ref().is_some_and(|f| Rc::ptr_eq(f, &o.component)))
    }

    /// Give an overlay the focus and bring it to the front (pi-tui's `OverlayHandle.focus`);
    /// a hidden or removed overlay stays as it is.
    pub fn focus_overlay(&mut self, id: OverlayId) {
        let next = self.next_id;
        let Some(o) = self.overlays.iter_mut().find(|o| o.id == id && !o.hidden) else {
            return;
        };
        self.next_id += 1;
        o.focus_order = next;
        let component = o.component.clone();
        self.set_focus(Some(component));
        self.request_render(false);
    }

    /// Release an overlay's focus to the topmost other visible capturing overlay, or to the
    /// focus held before it was shown (pi-tui's `OverlayHandle.unfocus`).
    pub fn unfocus_overlay(&mut self, id: OverlayId) {
        let Some(entry) = self.overlays.iter().find(|o| o.id == id) else {
            return;
        };
        if !self.focused.as_ref().is_some_and(|f| Rc::ptr_eq(f, &entry.component)) {
            return;
        }
        let next = self
            .overlays
            .iter()
            .filter(|o| o.id != id && !o.hidden && !o.options.non_capturing)
            .max_by_key(|o| o.focus_order)
            .map(|o| o.component.clone())
            .or_else(|| entry.pre_focus.clone());
        self.set_focus(next);
        self.request_render(false);
    }

    /// Ask for a frame; `force` forgets the screen state (full redraw).
    pub fn request_render(&mut self, force: bool) {
        if force {
            self.main.reset();
            self.alt.reset();
            self.segment_cache.clear();
        }
        self.render_requested = true;
    }

    /// Start the terminal (raw mode, input modes, alt screen when in that mode).
    pub fn start(&mut self) -> Result<(), TuiError> {
        self.terminal.start()?;
        if self.mode == ScreenMode::Alt {
            self.alt.enter(&mut self.terminal);
        }
        self.terminal.hide_cursor();
        self.started = true;
        self.render_requested = true;
        Ok(())
    }

    /// Stop: move below the document (main) or print it to the main buffer (alt), show the
    /// cursor and restore the terminal.
    pub fn stop(&mut self) -> Result<(), TuiError> {
        match self.mode {
            ScreenMode::Main => self.main.before_stop(&mut self.terminal),
            ScreenMode::Alt => {
                let width = self.terminal.columns().max(1);
                let doc = self.document_lines(width);
                self.alt.leave(&mut self.terminal, &doc, false);
            }
        }
        self.terminal.show_cursor();
        self.started = false;
        self.terminal.stop()
    }

    /// Dispatch one input sequence: listeners, then the focused component (Kitty key releases
    /// only to components that want them), then an immediate frame.
    pub fn handle_input(&mut self, data: &str) -> Result<(), TuiError> {
        let mut data = data.to_string();
        for l in &mut self.listeners {
            match l(&data) {
                InputAction::Pass => {}
                InputAction::Consume => return Ok(()),
                InputAction::Replace(d) => data = d,
            }
        }
        // Mouse and focus reports are the viewport's (pi consumes them all on the alt screen);
        // an application handles them before calling this.
        if self.mode == ScreenMode::Alt
            && (crate::mouse::is_mouse_sequence(&data)
                || data == crate::mouse::FOCUS_IN
                || data == crate::mouse::FOCUS_OUT)
        {
            return Ok(());
        }
        if self.mode == ScreenMode::Alt && self.handle_viewport_key(&data) {
            return self.render_now();
        }
        if let Some(f) = self.focused.clone() {
            let mut f = f.borrow_mut();
            if !is_key_release(&data) || f.wants_key_release() {
                f.handle_input(&data);
            }
        }
        self.render_now()
    }

    /// Alt-screen viewport keys (pi's `handleViewportInput`): page, half page, line, top and
    /// bottom scrolling, unless the focused component or a focused overlay captures them.
    fn handle_viewport_key(&mut self, data: &str) -> bool {
        let focused_overlay =
            self.focused.as_ref().is_some_and(|f| self.overlays.iter().any(|o| Rc::ptr_eq(&o.component, f)));
        let captures = self.focused.as_ref().is_some_and(|f| f.borrow().captures_viewport_input());
        if focused_overlay || captures {
            return false;
        }
        let kb = &self.keys;
        let rows = self.terminal.rows();
        let page = rows.saturating_sub(4).max(1) as i64;
        let half = (rows / 2).max(1) as i64;
        // `scroll_by` counts lines back from the end: positive scrolls up.
        let delta = if kb.matches(data, "tui.altScreen.pageUp") {
            page
        } else if kb.matches(data, "tui.altScreen.pageDown") {
            -page
        } else if kb.matches(data, "tui.altScreen.halfPageUp") {
            half
        } else if kb.matches(data, "tui.altScreen.halfPageDown") {
            -half
        } else if kb.matches(data, "tui.altScreen.lineUp") {
            1
        } else if kb.matches(data, "tui.altScreen.lineDown") {
            -1
        } else if kb.matches(data, "tui.altScreen.top") {
            i64::MAX / 2
        } else if kb.matches(data, "tui.altScreen.bottom") {
            i64::MIN / 2
        } else {
            return false;
        };
        if !is_key_release(data) {
            self.alt.scroll_by(delta, rows);
        }
        true
    }

    /// Give a mouse event (screen coordinates) to the frontmost overlay drawn under the pointer
    /// in the last frame (pi-tui's `dispatchMouseToOverlay`), relative to that overlay.
    pub fn dispatch_mouse_to_overlay(&self, event: &MouseEvent) -> OverlayHit {
        dispatch_to_overlays(&self.rendered_overlays, event)
    }

    /// Whether an overlay is shown and visible at the terminal's size (pi-tui's `hasOverlay`).
    pub fn has_visible_overlay(&self) -> bool {
        let (width, height) = (self.terminal.columns().max(1), self.terminal.rows().max(1));
        !self.visible_overlays(width, height).is_empty()
    }

    /// Use custom keybindings for the viewport keys.
    pub fn set_keybindings(&mut self, keys: Keybindings) {
        self.keys = keys;
    }

    /// Wait up to `timeout` for terminal events, handle them, and draw a frame if one is due.
    /// Returns whether an event was handled.
    pub fn run_once(&mut self, timeout: Duration) -> Result<bool, TuiError> {
        let ev = self.terminal.poll_event(timeout);
        match &ev {
            Some(TerminalEvent::Input(d)) => self.handle_input(d)?,
            Some(TerminalEvent::Resize) => self.request_render(false),
            None => {}
        }
        if self.render_requested && self.last_frame.is_none_or(|t| t.elapsed() >= MIN_FRAME_INTERVAL) {
            self.render_now()?;
        }
        Ok(ev.is_some())
    }

    /// Whether a frame was requested and not drawn yet.
    pub fn render_pending(&self) -> bool {
        self.render_requested
    }

    /// Draw a frame now.
    pub fn render_now(&mut self) -> Result<(), TuiError> {
        self.render_requested = false;
        self.last_frame = Some(Instant::now());
        let width = self.terminal.columns().max(1);
        let height = self.terminal.rows().max(1);
        self.rendered_overlays.clear();
        let result = match self.mode {
            ScreenMode::Main => {
                let (lines, cursor) = self.prepare_main(width, height);
                let opts = FrameOptions {
                    show_hardware_cursor: self.show_hardware_cursor,
                    clear_on_shrink: self.clear_on_shrink,
                    has_overlays: !self.overlays.is_empty(),
                };
                self.main.render(&mut self.terminal, lines, cursor, opts)
            }
            ScreenMode::Alt => {
                let (screen, cursor) = self.prepare_alt(width, height);
                self.alt.render(&mut self.terminal, screen, cursor, self.show_hardware_cursor);
                Ok(())
            }
        };
        if result.is_err() {
            // pi stops the TUI before reporting an over-wide line.
            if let Err(e) = self.stop() {
                tracing::warn!(error = %e, "stopping after a render error failed");
            }
        }
        result
    }

    fn resolve(&self, line: &str) -> String {
        resolve_fake_cursor(strip_osc133_prefix(line), self.show_hardware_cursor).into_owned()
    }

    fn visible_overlays(&self, width: usize, height: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..self.overlays.len())
            .filter(|&i| {
                let o = &self.overlays[i];
                !o.hidden && o.options.visible.as_ref().is_none_or(|f| f(width, height))
            })
            .collect();
        v.sort_by_key(|&i| self.overlays[i].focus_order);
        v
    }

    /// Composite overlays into resolved lines (pi's `compositeOverlays`).
    fn composite_overlays(
        &mut self,
        mut lines: Vec<String>,
        order: &[usize],
        width: usize,
        height: usize,
    ) -> Vec<String> {
        let mut rendered = Vec::new();
        let mut layouts = Vec::new();
        let mut min_needed = lines.len();
        for &i in order {
            let entry = &self.overlays[i];
            let (w, _, _, max_h) = resolve_overlay_layout(&entry.options, 0, width, height);
            let raw = entry.component.borrow_mut().render(w);
            let mut ov: Vec<String> = raw.iter().map(|l| self.resolve(l)).collect();
            if let Some(m) = max_h {
                ov.truncate(m);
            }
            let (_, row, col, _) = resolve_overlay_layout(&entry.options, ov.len(), width, height);
            min_needed = min_needed.max(row + ov.len());
            layouts.push(RenderedOverlay { component: entry.component.clone(), row, col, width: w, height: ov.len() });
            rendered.push((ov, row, col, w));
        }
        self.rendered_overlays = layouts;
        let working = lines.len().max(height).max(min_needed);
        lines.resize(working, String::new());
        let viewport_start = working - height;
        for (ov, row, col, w) in rendered {
            // Images under the overlay would be drawn above it (and images under later overlays).
            crate::render::kitty::hide_images_under_overlay(&mut lines, (row, col, w, ov.len()), viewport_start);
            for (k, line) in ov.iter().enumerate() {
                let idx = viewport_start + row + k;
                if idx < lines.len() {
                    let l = if visible_width(line) > w { slice_by_column(line, 0, w, true) } else { line.clone() };
                    lines[idx] = composite_line(&lines[idx], &l, col, w, width);
                }
            }
        }
        lines
    }

    fn prepare_main(&mut self, width: usize, height: usize) -> (Vec<FrameLine>, Option<CursorPos>) {
        let mut segments = Vec::new();
        self.root.render_segments(width, &mut segments);
        let order = self.visible_overlays(width, height);
        if !order.is_empty() {
            self.segment_cache.clear();
            let resolved: Vec<String> = segments.iter().flat_map(|s| s.iter()).map(|l| self.resolve(l)).collect();
            let lines = self.composite_overlays(resolved, &order, width, height);
            let cursor = find_cursor(&lines, height);
            return (lines.iter().map(|l| finish_line(l)).collect(), cursor);
        }
        let total: usize = segments.iter().map(|s| s.len()).sum();
        // The cursor marker is looked for in the last `height` lines. Markers and fake-cursor codes
        // are zero-width, so the raw line measures the same as the finished one.
        let cursor = {
            let mut tail: Vec<&str> = Vec::with_capacity(height.min(total));
            'outer: for seg in segments.iter().rev() {
                for line in seg.iter().rev() {
                    if tail.len() == height {
                        break 'outer;
                    }
                    tail.push(line);
                }
            }
            tail.reverse();
            let offset = total - tail.len();
            find_cursor(&tail, height).map(|c| CursorPos { row: c.row + offset, col: c.col })
        };
        let show = self.show_hardware_cursor;
        let previous = if self.cache_show == show { std::mem::take(&mut self.segment_cache) } else { Vec::new() };
        let mut next_cache = Vec::with_capacity(segments.len());
        let mut out = Vec::with_capacity(total);
        let mut j = 0;
        for seg in segments {
            // Segments usually keep their order; look a few ahead to survive insertions.
            let hit = (j..(j + 8).min(previous.len())).find(|&k| Rc::ptr_eq(&previous[k].0, &seg));
            let finished = match hit {
                Some(k) => {
                    j = k + 1;
                    previous[k].1.clone()
                }
                None => {
                    // A changed segment: reuse finished lines equal to those at the same place in
                    // the segment it replaces (one big component with one changed line).
                    let old = previous.get(j);
                    seg.iter()
                        .enumerate()
                        .map(|(i, l)| match old {
                            Some((raw, fin)) if raw.get(i) == Some(l) => fin[i].clone(),
                            _ => finish_line(&resolve_fake_cursor(strip_osc133_prefix(l), show)),
                        })
                        .collect::<Rc<[FrameLine]>>()
                }
            };
            out.extend(finished.iter().cloned());
            next_cache.push((seg, finished));
        }
        self.segment_cache = next_cache;
        self.cache_show = show;
        (out, cursor)
    }

    fn document_lines(&mut self, width: usize) -> Vec<FrameLine> {
        let raw = self.root.render(width);
        raw.iter().map(|l| finish_line(&self.resolve(l))).collect()
    }

    fn prepare_alt(&mut self, width: usize, height: usize) -> (Vec<FrameLine>, Option<CursorPos>) {
        let raw = self.root.render(width);
        let resolved: Vec<FrameLine> = raw.iter().map(|l| FrameLine::from(self.resolve(l))).collect();
        let (_, window) = self.alt.viewport(&resolved, height);
        let mut screen: Vec<String> = window.iter().map(|l| l.to_string()).collect();
        screen.resize(height, String::new());
        let order = self.visible_overlays(width, height);
        if !order.is_empty() {
            screen = self.composite_overlays(screen, &order, width, height);
        }
        let cursor = find_cursor(&screen, height);
        (screen.iter().map(|l| finish_line(l)).collect(), cursor)
    }
}
