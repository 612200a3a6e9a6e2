//! Custom components of extensions (pi's `ctx.ui.custom(factory, options)`, `showExtensionCustom`):
//! in place of the editor, focused, or, with `overlay`, drawn over the screen where pi's
//! `OverlayOptions` put it. Keys go to the component while it has focus; it stays until it calls
//! `done` (the host's [`CustomDone`]), then the editor (or the focus before the overlay) returns.
//! A custom component opened while a dialog is open hides it; the dialog comes back after (pi's
//! extension dialog stack).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use pi_tui::render::{Anchor, OverlayOptions, SizeValue};
use pi_tui::{Component, ComponentRef, CrosstermTerminal, Lines, OverlayId, Tui, shared};
use serde_json::Value;
use tokio::sync::oneshot;

use super::app::{App, UiEvent};
use super::dialog_stack::Dialog;
use super::host::UiRequest;
use crate::ui::{ComponentFactory, CustomDone, CustomFactory, CustomOptions, CustomResult};

/// One custom component on screen.
struct Open {
    overlay: Option<OverlayId>,
    done: Rc<RefCell<Option<Option<String>>>>,
}

/// The custom components on screen, by token.
#[derive(Default)]
pub(crate) struct Customs {
    next: u64,
    open: HashMap<u64, Open>,
    /// The extension's header in place of the built-in one (`setHeader`).
    header: Option<ComponentRef>,
    /// Overlays extensions control through a handle, by key: the overlay and, for a custom
    /// component's, its token.
    pub(crate) overlays: HashMap<String, (OverlayId, Option<u64>)>,
    /// An extension's editor in place of the built-in one (`setEditorComponent`).
    pub(crate) editor: Option<Rc<RefCell<super::extension_ui::CustomEditorView>>>,
    /// Raw input listeners (`onTerminalInput`), by key, in the order added.
    pub(crate) listeners: Vec<(String, crate::ui::TerminalInputListener)>,
    /// Completion provider wrappers (`addAutocompleteProvider`), the first innermost.
    pub(crate) autocomplete: Vec<crate::ui::AutocompleteWrapper>,
    /// The editor's own completion provider, before the wrappers.
    pub(crate) completions: Option<Rc<dyn pi_tui::components::AutocompleteProvider>>,
    /// The `visible` options of overlays about to be shown, by key.
    pub(crate) visible: HashMap<String, crate::ui::OverlayVisible>,
}

impl Customs {
    /// The `visible` option of the overlay shown under `key`, as pi-tui's options take it.
    pub(crate) fn take_visible(&mut self, key: &str) -> Option<Rc<dyn Fn(usize, usize) -> bool>> {
        let visible = self.visible.remove(key)?;
        Some(Rc::new(move |columns, rows| visible(columns, rows)))
    }
}

/// An extension's component with focus: renders isolated from panics, gets every key.
struct Focused(crate::render::ExtensionComponent);

impl Component for Focused {
    fn render(&mut self, width: usize) -> Lines {
        self.0.render(width)
    }

    fn handle_input(&mut self, data: &str) {
        self.0.0.handle_input(data);
    }

    fn wants_key_release(&self) -> bool {
        self.0.0.wants_key_release()
    }

    fn captures_viewport_input(&self) -> bool {
        self.0.0.captures_viewport_input()
    }

    fn invalidate(&mut self) {
        self.0.invalidate();
    }

    fn set_focused(&mut self, focused: bool) {
        self.0.0.set_focused(focused);
    }

    fn handle_mouse(&mut self, event: &pi_tui::MouseEvent) -> Option<pi_tui::MouseReply> {
        self.0.0.handle_mouse(event)
    }
}

/// pi's `SizeValue`: a number of cells or `"N%"`.
fn size_of(value: Option<&Value>) -> Option<SizeValue> {
    match value? {
        Value::Number(n) => n.as_f64().map(|n| SizeValue::Abs(n.max(0.0) as usize)),
        Value::String(s) => s.strip_suffix('%').and_then(|p| p.trim().parse().ok()).map(SizeValue::Percent),
        _ => None,
    }
}

fn anchor_of(name: Option<&str>) -> Anchor {
    match name.unwrap_or_default() {
        "top-left" => Anchor::TopLeft,
        "top-center" => Anchor::TopCenter,
        "top-right" => Anchor::TopRight,
        "left-center" => Anchor::LeftCenter,
        "right-center" => Anchor::RightCenter,
        "bottom-left" => Anchor::BottomLeft,
        "bottom-center" => Anchor::BottomCenter,
        "bottom-right" => Anchor::BottomRight,
        _ => Anchor::Center,
    }
}

/// pi's `OverlayOptions` JSON as pi-tui's options.
pub(crate) fn overlay_options(json: Option<&Value>) -> OverlayOptions {
    let Some(o) = json else { return OverlayOptions::default() };
    let int = |key: &str| o.get(key).and_then(Value::as_f64).map(|v| v as i64).unwrap_or(0);
    let cells = |v: Option<&Value>| v.and_then(Value::as_f64).map(|v| v.max(0.0) as usize).unwrap_or(0);
    let margin = match o.get("margin") {
        Some(Value::Number(n)) => [cells(Some(&Value::Number(n.clone()))); 4],
        Some(m @ Value::Object(_)) => {
            [cells(m.get("top")), cells(m.get("right")), cells(m.get("bottom")), cells(m.get("left"))]
        }
        _ => [0; 4],
    };
    OverlayOptions {
        width: size_of(o.get("width")),
        min_width: o.get("minWidth").and_then(Value::as_f64).map(|v| v.max(0.0) as usize),
        max_height: size_of(o.get("maxHeight")),
        anchor: anchor_of(o.get("anchor").and_then(Value::as_str)),
        offset_x: int("offsetX"),
        offset_y: int("offsetY"),
        row: size_of(o.get("row")),
        col: size_of(o.get("col")),
        margin,
        non_capturing: o.get("nonCapturing").and_then(Value::as_bool).unwrap_or(false),
        visible: None,
    }
}

impl App {
    /// Shows an extension's custom component (pi's `showExtensionCustom`).
    pub(crate) fn open_custom(
        &mut self,
        tui: &mut Tui<CrosstermTerminal>,
        factory: CustomFactory,
        opts: CustomOptions,
        reply: oneshot::Sender<Option<CustomResult>>,
    ) {
        let (done_handle, rx) = CustomDone::new();
        let component: ComponentRef =
            shared(Focused(crate::render::ExtensionComponent(factory(&self.theme, done_handle))));
        let done = Rc::new(RefCell::new(None));
        let token = self.customs.next;
        self.customs.next += 1;
        let overlay = if opts.overlay {
            let mut options = overlay_options(opts.overlay_options.as_ref());
            options.visible = opts.handle_key.as_deref().and_then(|key| self.customs.take_visible(key));
            let capturing = !options.non_capturing;
            let id = tui.show_overlay(component, options);
            if let Some(blocked) = opts.blocked {
                // An overlay reports `blocked` until it is done, hidden or not.
                self.set_overlay_blocked(token, Some(blocked));
            }
            if capturing {
                // Keys go to the overlay, not to the app's bindings, until it closes; an open
                // dialog waits under it and comes back after (and is still the one reported).
                let blocked = self.dialog.as_ref().filter(|d| d.extension).and_then(|d| d.blocked.clone());
                self.stack_dialog(true);
                self.dialog =
                    Some(Dialog { done: done.clone(), on_done: Box::new(|_, _| {}), extension: true, blocked });
            }
            if let Some(key) = opts.handle_key {
                self.customs.overlays.insert(key, (id, Some(token)));
            }
            Some(id)
        } else {
            self.opening_extension_dialog = true;
            self.opening_blocked = opts.blocked;
            self.open_dialog(tui, component, done.clone(), Box::new(|_, _| {}));
            None
        };
        self.customs.open.insert(token, Open { overlay, done });
        self.dirty = true;
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let result = rx.await.ok().flatten();
            let _ = reply.send(result);
            let _ = tx.send(UiEvent::Ui(UiRequest::CloseCustom(token)));
        });
    }

    /// pi's `setExtensionHeader`: the extension's component takes the built-in header's place in
    /// the header (the loaded resources stay below it); `None` puts the built-in one back.
    pub(crate) fn set_extension_header(&mut self, factory: Option<ComponentFactory>) {
        let Some(builtin) = self.header_text.clone() else { return };
        let builtin: ComponentRef = builtin;
        let current = self.customs.header.clone().unwrap_or_else(|| builtin.clone());
        let custom = factory.map(|f| -> ComponentRef { shared(crate::render::ExtensionComponent(f(&self.theme))) });
        self.customs.header = custom.clone();
        let next = custom.unwrap_or(builtin);
        let mut header = self.header.borrow_mut();
        let mut children: Vec<ComponentRef> = header.children().to_vec();
        match children.iter().position(|c| Rc::ptr_eq(c, &current)) {
            Some(at) => children[at] = next,
            None => children.insert(0, next),
        }
        header.clear();
        for child in children {
            header.add_child(child);
        }
        self.dirty = true;
    }

    /// pi's `showExtensionError`: the error in the transcript, its stack (without the first line)
    /// dim and indented below.
    pub(crate) fn show_extension_error(&mut self, error: &crate::extensions::ExtensionError) {
        let text = self.theme.fg("error", &format!("Extension \"{}\" error: {}", error.extension_path, error.error));
        self.add_chat(shared(pi_tui::Text::new(text, 1, 0)));
        if let Some(stack) = &error.stack {
            let lines: Vec<String> =
                stack.lines().skip(1).map(|l| self.theme.fg("dim", &format!("  {}", l.trim()))).collect();
            if !lines.is_empty() {
                self.add_chat(shared(pi_tui::Text::new(lines.join("\n"), 1, 0)));
            }
        }
        self.dirty = true;
    }

    /// Takes a finished custom component off the screen.
    pub(crate) fn close_custom(&mut self, tui: &mut Tui<CrosstermTerminal>, token: u64) {
        let Some(open) = self.customs.open.remove(&token) else { return };
        self.set_overlay_blocked(token, None);
        self.customs.overlays.retain(|_, (_, t)| *t != Some(token));
        if let Some(id) = open.overlay {
            tui.hide_overlay(id);
        }
        let ours = self.dialog.as_ref().is_some_and(|d| Rc::ptr_eq(&d.done, &open.done));
        if ours {
            *open.done.borrow_mut() = Some(None);
            self.finish_dialog(tui);
        } else if let Some(at) = self.dialog_stack.iter().position(|(d, _)| Rc::ptr_eq(&d.done, &open.done)) {
            // Finished while hidden under another dialog (pi's `removeExtensionDialog`).
            let (dialog, _) = self.dialog_stack.remove(at);
            (dialog.on_done)(self, None);
        }
        self.dirty = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn overlay_options_read_pis_json() {
        let o = overlay_options(Some(&json!({"width": "50%", "anchor": "top-right", "margin": 2, "offsetY": -1,
            "maxHeight": 10, "nonCapturing": true})));
        assert_eq!(o.width, Some(SizeValue::Percent(50.0)));
        assert_eq!(o.anchor, Anchor::TopRight);
        assert_eq!(o.margin, [2; 4]);
        assert_eq!(o.offset_y, -1);
        assert_eq!(o.max_height, Some(SizeValue::Abs(10)));
        assert!(o.non_capturing);
        let o = overlay_options(Some(&json!({"margin": {"top": 1, "left": 3}, "row": "25%", "col": 4})));
        assert_eq!(o.margin, [1, 0, 0, 3]);
        assert_eq!((o.row, o.col), (Some(SizeValue::Percent(25.0)), Some(SizeValue::Abs(4))));
        assert_eq!(overlay_options(None).anchor, Anchor::Center);
    }
}
