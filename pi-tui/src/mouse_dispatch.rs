//! Mouse events to components (pi-tui's `dispatchMouseEvent`, `retargetMouseEvent` and
//! `MouseRegion`): what a component answers, which component took an event and where it is.

use std::cell::RefCell;
use std::rc::Rc;

use crate::component::{Component, ComponentRef, Lines};
use crate::mouse::MouseEvent;

/// What a component did with an event (pi's `TuiMouseEventResult`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MouseResult {
    /// The event was used.
    pub handled: bool,
    /// Later events of this gesture go to this component until the button is released.
    pub capture: bool,
    /// Give this component the keyboard focus.
    pub focus: bool,
    /// Whether to draw a frame (`None`: pi's default, after presses, clicks, drags and wheels).
    pub render: Option<bool>,
}

/// Where an event landed: the component and its rectangle on the screen.
#[derive(Clone)]
pub struct MouseDispatch {
    /// What the component answered.
    pub result: MouseResult,
    /// The component that handled the event.
    pub component: ComponentRef,
    /// The keyboard focus target, when a parent delegates keys to the handling child.
    pub focus_target: Option<ComponentRef>,
    /// The component's left column on the screen.
    pub origin_x: i64,
    /// The component's top row on the screen (negative when scrolled above the view).
    pub origin_y: i64,
    /// The component's width.
    pub width: usize,
    /// The component's height.
    pub height: usize,
}

/// A component's answer: its own result, or the result of a child it forwarded the event to.
#[derive(Clone)]
pub enum MouseReply {
    /// The component handled the event (or not, with an empty result).
    Own(MouseResult),
    /// A child took it (see [`dispatch_mouse`]).
    Forwarded(MouseDispatch),
}

/// Give `event` (relative to `component`) to `component`; `None` when it did not use it.
pub fn dispatch_mouse(component: &ComponentRef, event: &MouseEvent) -> Option<MouseDispatch> {
    let reply = component.try_borrow_mut().ok()?.handle_mouse(event)?;
    match reply {
        MouseReply::Forwarded(d) => Some(d),
        MouseReply::Own(r) if !r.handled && !r.capture && !r.focus => None,
        MouseReply::Own(r) => Some(MouseDispatch {
            result: MouseResult { handled: true, ..r },
            component: component.clone(),
            focus_target: None,
            origin_x: event.screen_x - event.x,
            origin_y: event.screen_y - event.y,
            width: event.width,
            height: event.height,
        }),
    }
}

/// Dispatch to the child of a vertical list of `parts` (each child's rendered lines) that
/// covers the event's row (pi's `dispatchMouseToChildLines`).
pub fn dispatch_to_child_lines(children: &[ComponentRef], parts: &[Lines], event: &MouseEvent) -> Option<MouseReply> {
    if event.y < 0 || event.y >= event.height as i64 {
        return None;
    }
    let mut top = 0i64;
    for (child, lines) in children.iter().zip(parts) {
        let h = lines.len() as i64;
        if event.y >= top && event.y < top + h {
            let local = MouseEvent { y: event.y - top, height: lines.len(), ..event.clone() };
            return dispatch_mouse(child, &local).map(MouseReply::Forwarded);
        }
        top += h;
    }
    None
}

/// Where an overlay was drawn in the last frame (pi-tui's `renderedOverlayLayouts`): rows are
/// relative to the viewport.
#[derive(Clone)]
pub struct RenderedOverlay {
    /// The overlay's component.
    pub component: ComponentRef,
    /// Its top row.
    pub row: usize,
    /// Its left column.
    pub col: usize,
    /// Its width.
    pub width: usize,
    /// The lines it drew.
    pub height: usize,
}

/// What the overlays did with a mouse event (pi-tui's `dispatchMouseToOverlay` answer).
#[derive(Clone)]
pub enum OverlayHit {
    /// No overlay is drawn under the pointer: the event goes on to the layout.
    Miss,
    /// The pointer is over an overlay; its component's answer (`None`: it did not use the
    /// event, which then goes to nothing under the overlay).
    Hit(Option<MouseDispatch>),
}

/// Give `event` (screen coordinates) to the frontmost of `overlays` (drawn back to front) under
/// the pointer, relative to it; a component asking for the focus gives it to the overlay.
pub fn dispatch_to_overlays(overlays: &[RenderedOverlay], event: &MouseEvent) -> OverlayHit {
    let (x, y) = (event.screen_x, event.screen_y);
    let Some(layout) = overlays.iter().rev().find(|o| {
        x >= o.col as i64 && x < (o.col + o.width) as i64 && y >= o.row as i64 && y < (o.row + o.height) as i64
    }) else {
        return OverlayHit::Miss;
    };
    let local = event.retarget(layout.col as i64, layout.row as i64, layout.width, layout.height);
    let result = dispatch_mouse(&layout.component, &local).map(|mut d| {
        if d.result.focus {
            d.focus_target = Some(layout.component.clone());
        }
        d
    });
    OverlayHit::Hit(result)
}

/// The handler of a [`MouseRegion`].
pub type MouseHandler = Box<dyn FnMut(&MouseEvent) -> Option<MouseResult>>;

/// Adds mouse handling to a component without changing how it renders (pi's `MouseRegion`):
/// the child gets the event first.
pub struct MouseRegion {
    child: ComponentRef,
    on_mouse: MouseHandler,
}

impl MouseRegion {
    /// Wrap `child`; `on_mouse` gets what the child does not use.
    pub fn new(child: ComponentRef, on_mouse: MouseHandler) -> Self {
        MouseRegion { child, on_mouse }
    }

    /// A shared handle, as children and overlays take them.
    pub fn shared(child: ComponentRef, on_mouse: MouseHandler) -> Rc<RefCell<Self>> {
        Rc::new(RefCell::new(Self::new(child, on_mouse)))
    }
}

impl Component for MouseRegion {
    fn render(&mut self, width: usize) -> Lines {
        self.child.borrow_mut().render(width)
    }

    fn handle_mouse(&mut self, event: &MouseEvent) -> Option<MouseReply> {
        if let Some(d) = dispatch_mouse(&self.child, event) {
            return Some(MouseReply::Forwarded(d));
        }
        (self.on_mouse)(event).map(MouseReply::Own)
    }

    fn invalidate(&mut self) {
        self.child.borrow_mut().invalidate();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::{Container, shared};
    use crate::components::Text;
    use crate::mouse::MouseEventType;

    #[test]
    fn containers_hit_test_their_children_by_row() {
        let seen = Rc::new(RefCell::new(Vec::new()));
        let log = seen.clone();
        let second = MouseRegion::shared(
            shared(Text::new("b1\nb2", 0, 0)),
            Box::new(move |e| {
                log.borrow_mut().push((e.kind, e.x, e.y, e.height));
                Some(MouseResult { handled: true, capture: e.kind == MouseEventType::Press, ..Default::default() })
            }),
        );
        let mut root = Container::new();
        root.add_child(shared(Text::new("a", 0, 0)));
        root.add_child(second.clone());
        let root: ComponentRef = shared(root);
        root.borrow_mut().render(10);
        let at = |y| MouseEvent::new(MouseEventType::Press, 0, 3, y, 10, 3);
        assert!(dispatch_mouse(&root, &at(0)).is_none(), "the text has no handler");
        let hit = dispatch_mouse(&root, &at(2)).expect("the region");
        assert!(hit.result.capture && Rc::ptr_eq(&hit.component, &(second as ComponentRef)));
        assert_eq!((hit.origin_x, hit.origin_y, hit.height), (0, 1, 2));
        assert_eq!(seen.borrow()[..], [(MouseEventType::Press, 3, 1, 2)]);
        assert!(dispatch_mouse(&root, &at(3)).is_none(), "below the children");
    }

    /// The frontmost overlay under the pointer gets the event relative to itself; a miss and an
    /// overlay that does not use the event are told apart.
    #[test]
    fn overlays_get_events_relative_to_themselves_front_first() {
        let seen = Rc::new(RefCell::new(Vec::new()));
        let region = |name: &'static str, handled: bool| {
            let log = seen.clone();
            let region: ComponentRef = MouseRegion::shared(
                shared(Text::new("x", 0, 0)),
                Box::new(move |e| {
                    log.borrow_mut().push((name, e.x, e.y, e.width, e.height));
                    Some(MouseResult { handled, focus: handled, ..Default::default() })
                }),
            );
            region
        };
        let back = region("back", true);
        let front = region("front", false);
        let layouts = [
            RenderedOverlay { component: back.clone(), row: 2, col: 10, width: 20, height: 5 },
            RenderedOverlay { component: front, row: 4, col: 12, width: 4, height: 2 },
        ];
        let at = |x, y| MouseEvent::new(MouseEventType::Press, 0, x, y, 80, 24);
        assert!(matches!(dispatch_to_overlays(&layouts, &at(9, 3)), OverlayHit::Miss));
        let OverlayHit::Hit(Some(hit)) = dispatch_to_overlays(&layouts, &at(11, 3)) else { panic!("the back overlay") };
        assert!(hit.focus_target.is_some_and(|t| Rc::ptr_eq(&t, &back)));
        assert_eq!((hit.origin_x, hit.origin_y, hit.width, hit.height), (10, 2, 20, 5));
        assert!(matches!(dispatch_to_overlays(&layouts, &at(13, 5)), OverlayHit::Hit(None)), "the front one declines");
        assert_eq!(seen.borrow()[..], [("back", 1, 1, 20, 5), ("front", 1, 1, 4, 2)]);
    }
}
