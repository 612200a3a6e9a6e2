//! The component model: components render to lines of ANSI text at a width.

use std::cell::RefCell;
use std::rc::Rc;

use crate::mouse::MouseEvent;
use crate::mouse_dispatch::{MouseReply, dispatch_to_child_lines};

/// Rendered lines. Returned arrays are shared caches: a parent detects "unchanged" by
/// [`Rc::ptr_eq`] plus element equality and then reuses its own previous result.
pub type Lines = Rc<[String]>;

/// A style function wrapping a whole line, e.g. `|t| theme.bg("customMessageBg", t)`.
pub type StyleFn = Rc<dyn Fn(&str) -> String>;

/// A callback receiving text (submit and change handlers).
pub type TextCallback = Box<dyn FnMut(&str)>;

/// A shared, mutable handle to a component (children, focus target, overlays).
pub type ComponentRef = Rc<RefCell<dyn Component>>;

/// Zero-width APC marker a focused component emits just before its cursor cell.
pub const CURSOR_MARKER: &str = "\x1b_pi:c\x07";
/// Start of a fake (drawn) cursor cell.
pub const FAKE_CURSOR_START: &str = "\x1b_pi:fc\x07";
/// End of a fake (drawn) cursor cell.
pub const FAKE_CURSOR_END: &str = "\x1b_pi:/fc\x07";

/// Wrap `text` in fake cursor markers (turned into reverse video by the renderer).
pub fn render_fake_cursor(text: &str) -> String {
    format!("{FAKE_CURSOR_START}{text}{FAKE_CURSOR_END}")
}

/// Something that renders to lines. Every line's visible width must be `<= width`.
pub trait Component {
    /// Render at `width` columns. May return a cached array; callers treat it as read-only.
    fn render(&mut self, width: usize) -> Lines;

    /// The rendered lines as consecutive segments whose concatenation equals
    /// [`Component::render`]. Containers return their children's segments, so the renderer can
    /// reuse the finished output of unchanged children by identity instead of copying every line.
    fn render_segments(&mut self, width: usize, out: &mut Vec<Lines>) {
        out.push(self.render(width));
    }

    /// Handle one raw input sequence (e.g. `"\x1b[13;2u"`); see [`crate::keys::matches_key`].
    fn handle_input(&mut self, _data: &str) {}

    /// Whether Kitty key-release events should be delivered to [`Component::handle_input`].
    fn wants_key_release(&self) -> bool {
        false
    }

    /// Whether viewport keys (page up/down on the alternate screen) go to this component when it
    /// is focused, instead of scrolling the transcript.
    fn captures_viewport_input(&self) -> bool {
        false
    }

    /// Handle a mouse event on the alternate screen (pi's `handleMouse`): `event`'s `x`/`y` are
    /// relative to this component's rectangle. `None` (the default) leaves it unhandled.
    fn handle_mouse(&mut self, _event: &MouseEvent) -> Option<MouseReply> {
        None
    }

    /// Drop caches (for example after a theme change).
    fn invalidate(&mut self) {}

    /// Told by the TUI when focus moves to or away from this component.
    fn set_focused(&mut self, _focused: bool) {}
}

/// Wrap a component into a shared handle usable as a child or focus target.
pub fn shared<C: Component + 'static>(c: C) -> Rc<RefCell<C>> {
    Rc::new(RefCell::new(c))
}

/// Whether two line arrays are the same array or hold equal lines.
pub fn same_lines(a: &Lines, b: &Lines) -> bool {
    Rc::ptr_eq(a, b) || a[..] == b[..]
}

/// The cached result of rendering a list of children (pi's `renderChildLines`).
#[derive(Clone)]
pub struct ChildLines {
    width: usize,
    children: Vec<ComponentRef>,
    parts: Vec<Lines>,
    /// Concatenation of the children's lines.
    pub lines: Lines,
}

/// Render `children` at `width` and concatenate their lines. Returns `previous` unchanged (same
/// `lines` array) when the children and their lines are unchanged, so identity propagates upwards.
pub fn render_child_lines(children: &[ComponentRef], width: usize, previous: Option<ChildLines>) -> ChildLines {
    let parts: Vec<Lines> = children.iter().map(|c| c.borrow_mut().render(width)).collect();
    if let Some(prev) = previous
        && prev.width == width
        && prev.children.len() == children.len()
        && children
            .iter()
            .zip(&prev.children)
            .zip(parts.iter().zip(&prev.parts))
            .all(|((c, pc), (p, pp))| Rc::ptr_eq(c, pc) && same_lines(p, pp))
    {
        return prev;
    }
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let mut lines = Vec::with_capacity(total);
    for p in &parts {
        lines.extend(p.iter().cloned());
    }
    ChildLines { width, children: children.to_vec(), parts, lines: lines.into() }
}

/// A component made of children rendered one after the other at the same width.
#[derive(Default)]
pub struct Container {
    children: Vec<ComponentRef>,
    child_lines: Option<ChildLines>,
}

impl Container {
    /// An empty container.
    pub fn new() -> Self {
        Self::default()
    }

    /// Append a child.
    pub fn add_child(&mut self, child: ComponentRef) {
        self.children.push(child);
    }

    /// Remove a child (by identity).
    pub fn remove_child(&mut self, child: &ComponentRef) {
        if let Some(i) = self.children.iter().position(|c| Rc::ptr_eq(c, child)) {
            self.children.remove(i);
        }
    }

    /// Remove all children.
    pub fn clear(&mut self) {
        self.children.clear();
    }

    /// The children, in order.
    pub fn children(&self) -> &[ComponentRef] {
        &self.children
    }
}

impl Component for Container {
    fn render_segments(&mut self, width: usize, out: &mut Vec<Lines>) {
        for c in &self.children {
            c.borrow_mut().render_segments(width, out);
        }
    }

    fn render(&mut self, width: usize) -> Lines {
        let cl = render_child_lines(&self.children, width, self.child_lines.take());
        let lines = cl.lines.clone();
        self.child_lines = Some(cl);
        lines
    }

    fn invalidate(&mut self) {
        for c in &self.children {
            c.borrow_mut().invalidate();
        }
    }

    /// The child drawn at the event's row gets it (pi's `Container.handleMouse`).
    fn handle_mouse(&mut self, event: &MouseEvent) -> Option<MouseReply> {
        if event.y < 0 || event.y >= event.height as i64 {
            return None;
        }
        let parts: Vec<Lines> = match &self.child_lines {
            Some(cl) if cl.width == event.width && cl.children.len() == self.children.len() => cl.parts.clone(),
            _ => self.children.iter().map(|c| c.borrow_mut().render(event.width)).collect(),
        };
        dispatch_to_child_lines(&self.children, &parts, event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::{Spacer, Text};

    #[test]
    fn container_reuses_unchanged_lines() {
        let mut c = Container::new();
        let text = shared(Text::new("hello", 0, 0));
        c.add_child(text.clone());
        c.add_child(shared(Spacer::new(2)));
        let a = c.render(10);
        assert_eq!(&a[..], ["hello     ", "", ""]);
        let b = c.render(10);
        assert!(Rc::ptr_eq(&a, &b));
        text.borrow_mut().set_text("bye");
        let d = c.render(10);
        assert_eq!(&d[..], ["bye       ", "", ""]);
    }
}
