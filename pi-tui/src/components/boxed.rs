//! `Box`: a container that applies padding and a background to all its children.

use std::rc::Rc;

use crate::ansi::visible_width;
use crate::component::{ChildLines, Component, ComponentRef, Lines, StyleFn, render_child_lines};

struct BoxCache {
    child_lines: Lines,
    width: usize,
    bg_sample: Option<String>,
    lines: Lines,
}

/// Children rendered at `width - 2 * padding_x`, framed by `padding_y` blank rows; every line is
/// padded to the width and then wrapped whole by the background function.
pub struct Box {
    children: Vec<ComponentRef>,
    padding_x: usize,
    padding_y: usize,
    bg: Option<StyleFn>,
    child_lines: Option<ChildLines>,
    cache: Option<BoxCache>,
}

impl Box {
    /// A box with padding and an optional background (pi's defaults are 1, 1, none).
    pub fn new(padding_x: usize, padding_y: usize, bg: Option<StyleFn>) -> Self {
        Self { children: Vec::new(), padding_x, padding_y, bg, child_lines: None, cache: None }
    }

    /// Append a child.
    pub fn add_child(&mut self, child: ComponentRef) {
        self.children.push(child);
        self.invalidate_cache();
    }

    /// Remove a child (by identity).
    pub fn remove_child(&mut self, child: &ComponentRef) {
        if let Some(i) = self.children.iter().position(|c| Rc::ptr_eq(c, child)) {
            self.children.remove(i);
            self.invalidate_cache();
        }
    }

    /// Remove all children.
    pub fn clear(&mut self) {
        self.children.clear();
        self.invalidate_cache();
    }

    /// Replace the background function (a change is detected by sampling its output).
    pub fn set_bg(&mut self, bg: Option<StyleFn>) {
        self.bg = bg;
    }

    /// Change the horizontal padding.
    pub fn set_padding_x(&mut self, padding_x: usize) {
        self.padding_x = padding_x;
        self.invalidate_cache();
    }

    fn invalidate_cache(&mut self) {
        self.cache = None;
        self.child_lines = None;
    }

    fn apply_bg(&self, line: &str, width: usize) -> String {
        let pad = width.saturating_sub(visible_width(line));
        let padded = format!("{line}{}", " ".repeat(pad));
        match &self.bg {
            Some(bg) => bg(&padded),
            None => padded,
        }
    }
}

impl Component for Box {
    fn render(&mut self, width: usize) -> Lines {
        if self.children.is_empty() {
            return Vec::new().into();
        }
        let content_width = width.saturating_sub(self.padding_x * 2).max(1);
        let cl = render_child_lines(&self.children, content_width, self.child_lines.take());
        let child_lines = cl.lines.clone();
        self.child_lines = Some(cl);
        if child_lines.is_empty() {
            return Vec::new().into();
        }
        let bg_sample = self.bg.as_ref().map(|bg| bg("test"));
        if let Some(c) = &self.cache
            && Rc::ptr_eq(&c.child_lines, &child_lines)
            && c.width == width
            && c.bg_sample == bg_sample
        {
            return c.lines.clone();
        }
        let left = " ".repeat(self.padding_x);
        let mut out = Vec::with_capacity(child_lines.len() + self.padding_y * 2);
        let blank = self.apply_bg("", width);
        out.extend(std::iter::repeat_n(blank.clone(), self.padding_y));
        for line in child_lines.iter() {
            out.push(self.apply_bg(&format!("{left}{line}"), width));
        }
        out.extend(std::iter::repeat_n(blank, self.padding_y));
        let lines: Lines = out.into();
        self.cache = Some(BoxCache { child_lines, width, bg_sample, lines: lines.clone() });
        lines
    }

    fn invalidate(&mut self) {
        self.invalidate_cache();
        for c in &self.children {
            c.borrow_mut().invalidate();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::shared;
    use crate::components::Text;

    #[test]
    fn spec_box_with_text() {
        let bg: StyleFn = Rc::new(|s: &str| format!("\x1b[44m{s}\x1b[49m"));
        let mut b = Box::new(1, 1, Some(bg));
        b.add_child(shared(Text::new("hello", 0, 0)));
        let lines = b.render(20);
        assert_eq!(
            &lines[..],
            [
                "\x1b[44m                    \x1b[49m",
                "\x1b[44m hello              \x1b[49m",
                "\x1b[44m                    \x1b[49m"
            ]
        );
        assert!(Rc::ptr_eq(&lines, &b.render(20)));
    }
}
