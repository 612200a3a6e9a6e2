//! `Loader`: a spinner and a message.
//!
//! pi's loader owns an interval timer. Here the event loop drives it: call [`Loader::tick`] every
//! [`SPINNER_INTERVAL`] (or use [`Loader::tick_if_due`]); each frame change calls the optional
//! `request_render` callback, like pi's `tui.requestRender()`.

use std::time::{Duration, Instant};

use crate::component::{Component, Lines, StyleFn};
use crate::components::Text;

/// pi's default spinner frames.
pub const SPINNER_FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// pi's default frame interval.
pub const SPINNER_INTERVAL: Duration = Duration::from_millis(80);

/// A Text (padding 1, 0) showing `spinner(frame) + " " + message_style(message)`, preceded by one
/// empty line.
pub struct Loader {
    text: Text,
    frames: Vec<String>,
    verbatim: bool,
    interval: Duration,
    frame: usize,
    last_tick: Option<Instant>,
    spinner_style: StyleFn,
    message_style: StyleFn,
    message: String,
    request_render: Option<std::rc::Rc<dyn Fn()>>,
    cache: Option<(Lines, Lines)>,
}

impl Loader {
    /// A loader with pi's default frames.
    pub fn new(spinner_style: StyleFn, message_style: StyleFn, message: impl Into<String>) -> Self {
        let mut l = Self {
            text: Text::new("", 1, 0),
            frames: SPINNER_FRAMES.iter().map(|s| s.to_string()).collect(),
            verbatim: false,
            interval: SPINNER_INTERVAL,
            frame: 0,
            last_tick: None,
            spinner_style,
            message_style,
            message: message.into(),
            request_render: None,
            cache: None,
        };
        l.update_display();
        l
    }

    /// Use custom frames, rendered verbatim (no spinner style), at `interval`.
    pub fn set_indicator(&mut self, frames: Vec<String>, interval: Duration) {
        self.frames = frames;
        self.verbatim = true;
        self.interval = if interval.is_zero() { SPINNER_INTERVAL } else { interval };
        self.frame = 0;
        self.update_display();
    }

    /// Called whenever the display changes (pi's `tui.requestRender()`).
    pub fn set_request_render(&mut self, f: std::rc::Rc<dyn Fn()>) {
        self.request_render = Some(f);
    }

    /// Replace the message.
    pub fn set_message(&mut self, message: impl Into<String>) {
        self.message = message.into();
        self.update_display();
    }

    /// The frame interval.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Advance to the next frame (no-op with one frame or fewer).
    pub fn tick(&mut self) {
        if self.frames.len() <= 1 {
            return;
        }
        self.frame = (self.frame + 1) % self.frames.len();
        self.update_display();
    }

    /// Advance if at least one interval passed since the last tick; returns whether it did.
    pub fn tick_if_due(&mut self, now: Instant) -> bool {
        match self.last_tick {
            Some(t) if now.duration_since(t) < self.interval => false,
            _ => {
                let first = self.last_tick.is_none();
                self.last_tick = Some(now);
                if !first {
                    self.tick();
                }
                !first
            }
        }
    }

    fn update_display(&mut self) {
        let frame = self.frames.get(self.frame).cloned().unwrap_or_default();
        let rendered = if self.verbatim { frame } else { (self.spinner_style)(&frame) };
        let indicator = if rendered.is_empty() { String::new() } else { format!("{rendered} ") };
        self.text.set_text(format!("{indicator}{}", (self.message_style)(&self.message)));
        if let Some(r) = &self.request_render {
            r();
        }
    }
}

impl Component for Loader {
    fn render(&mut self, width: usize) -> Lines {
        let inner = self.text.render(width);
        // Keep identity while the text's lines are unchanged, so parents can skip their copy.
        if let Some((src, out)) = &self.cache
            && std::rc::Rc::ptr_eq(src, &inner)
        {
            return out.clone();
        }
        let mut out = Vec::with_capacity(inner.len() + 1);
        out.push(String::new());
        out.extend(inner.iter().cloned());
        let out: Lines = out.into();
        self.cache = Some((inner, out.clone()));
        out
    }

    fn invalidate(&mut self) {
        self.text.invalidate();
        self.update_display();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn spins() {
        let mut l = Loader::new(Rc::new(|s: &str| format!("<{s}>")), Rc::new(|s: &str| s.to_string()), "Loading...");
        assert_eq!(&l.render(20)[..], ["", " <⠋> Loading...     "]);
        l.tick();
        assert_eq!(&l.render(20)[..], ["", " <⠙> Loading...     "]);
    }
}

/// A [`Loader`] that Escape / Ctrl+C aborts (pi's `CancellableLoader`).
pub struct CancellableLoader {
    /// The wrapped loader.
    pub loader: Loader,
    aborted: std::rc::Rc<std::cell::Cell<bool>>,
    keys: crate::keys::Keybindings,
    /// Called when the user aborts.
    pub on_abort: Option<Box<dyn FnMut()>>,
}

impl CancellableLoader {
    /// Wrap a loader.
    pub fn new(loader: Loader) -> Self {
        Self { loader, aborted: Default::default(), keys: Default::default(), on_abort: None }
    }

    /// Whether the user aborted.
    pub fn aborted(&self) -> bool {
        self.aborted.get()
    }

    /// A flag shared with the loader that turns true on abort (pi's `AbortSignal`).
    pub fn signal(&self) -> std::rc::Rc<std::cell::Cell<bool>> {
        self.aborted.clone()
    }
}

impl Component for CancellableLoader {
    fn render(&mut self, width: usize) -> Lines {
        self.loader.render(width)
    }

    fn handle_input(&mut self, data: &str) {
        if self.keys.matches(data, "tui.select.cancel") {
            self.aborted.set(true);
            if let Some(f) = self.on_abort.as_mut() {
                f();
            }
        }
    }

    fn invalidate(&mut self) {
        self.loader.invalidate();
    }
}

#[cfg(test)]
mod cancel_tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn escape_aborts() {
        let id: StyleFn = Rc::new(|s: &str| s.to_string());
        let mut l = CancellableLoader::new(Loader::new(id.clone(), id, "Working"));
        let signal = l.signal();
        l.handle_input("x");
        assert!(!l.aborted());
        l.handle_input("\x1b");
        assert!(l.aborted() && signal.get());
    }
}
