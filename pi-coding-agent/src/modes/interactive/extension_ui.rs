//! The rest of `ctx.ui` in the interactive mode: overlays shown without waiting and their handles
//! (pi-tui's `tui.showOverlay`, `OverlayHandle`), an extension's editor in place of the built-in
//! one (`setEditorComponent`), raw input listeners (`onTerminalInput`) and completion providers
//! wrapping the editor's own (`addAutocompleteProvider`).

use std::cell::RefCell;
use std::rc::Rc;

use pi_tui::components::{AutocompleteProvider, Editor};
use pi_tui::{Component, ComponentRef, CrosstermTerminal, InputAction, Lines, Tui, shared};

use super::app::App;
use super::custom_component::overlay_options;
use super::host::UiRequest;
use crate::ui::{EditorComponent, EditorComponentFactory, OverlayOp};

/// The built-in editor drawn through an extension's editor: the extension's lines over the
/// built-in editor's (pi's `CustomEditor` calling `super.render`).
pub(crate) struct CustomEditorView {
    editor: Rc<RefCell<Editor>>,
    custom: Box<dyn EditorComponent>,
}

impl CustomEditorView {
    /// The keys the extension's editor passes on for `data`.
    fn input(&mut self, data: &str) -> Vec<String> {
        let text = self.editor.borrow().text();
        self.custom.input(data, &text)
    }
}

impl Component for CustomEditorView {
    fn render(&mut self, width: usize) -> Lines {
        let base = self.editor.borrow_mut().render(width);
        let text = self.editor.borrow().text();
        self.custom.render(width, &base, &text)
    }

    fn invalidate(&mut self) {
        self.editor.borrow_mut().invalidate();
        self.custom.invalidate();
    }

    fn set_focused(&mut self, focused: bool) {
        self.custom.set_focused(focused);
    }
}

impl App {
    /// The `ctx.ui` requests of this module.
    pub(crate) fn on_extension_ui(&mut self, tui: &mut Tui<CrosstermTerminal>, req: UiRequest) {
        match req {
            UiRequest::ShowOverlay { key, factory, options } => {
                let component: ComponentRef = shared(crate::render::ExtensionComponent(factory(&self.theme)));
                let mut options = overlay_options(options.as_ref());
                options.visible = self.customs.take_visible(&key);
                let id = tui.show_overlay(component, options);
                self.customs.overlays.insert(key, (id, None));
            }
            UiRequest::OverlayVisible { key, visible } => match visible {
                Some(visible) => {
                    self.customs.visible.insert(key, visible);
                }
                None => {
                    self.customs.visible.remove(&key);
                }
            },
            UiRequest::Overlay { key, op } => self.overlay_op(tui, &key, op),
            UiRequest::EditorComponent(factory) => self.set_editor_component(tui, factory),
            UiRequest::TerminalInput { key, listener } => {
                self.customs.listeners.retain(|(k, _)| *k != key);
                if let Some(listener) = listener {
                    self.customs.listeners.push((key, listener));
                }
            }
            UiRequest::Autocomplete(wrapper) => {
                self.customs.autocomplete.push(wrapper);
                if let Some(base) = self.customs.completions.clone() {
                    let provider = self.wrap_autocomplete(base);
                    self.editor.borrow_mut().set_autocomplete_provider(provider);
                }
            }
            _ => {}
        }
        self.dirty = true;
    }

    fn overlay_op(&mut self, tui: &mut Tui<CrosstermTerminal>, key: &str, op: OverlayOp) {
        let Some(&(id, token)) = self.customs.overlays.get(key) else { return };
        match op {
            OverlayOp::Hide => {
                self.customs.overlays.remove(key);
                match token {
                    Some(token) => self.close_custom(tui, token),
                    None => tui.hide_overlay(id),
                }
            }
            OverlayOp::SetHidden(hidden) => tui.set_overlay_hidden(id, hidden),
            OverlayOp::Focus => tui.focus_overlay(id),
            OverlayOp::Unfocus => tui.unfocus_overlay(id),
        }
    }

    /// What the editor slot shows: the extension's editor over the built-in one, or the built-in.
    pub(crate) fn editor_view(&self) -> ComponentRef {
        match &self.customs.editor {
            Some(view) => view.clone(),
            None => self.editor.clone(),
        }
    }

    fn set_editor_component(&mut self, tui: &mut Tui<CrosstermTerminal>, factory: Option<EditorComponentFactory>) {
        self.customs.editor = factory.map(|f| {
            let view = CustomEditorView { editor: self.editor.clone(), custom: f(&self.theme) };
            Rc::new(RefCell::new(view))
        });
        if self.dialog.is_none() {
            let mut slot = self.editor_slot.borrow_mut();
            slot.clear();
            slot.add_child(self.editor_view());
            drop(slot);
            tui.set_focus(Some(self.editor.clone()));
        }
    }

    /// Runs the raw input listeners (pi-tui's input listeners, before anything else): `None` when
    /// one consumed the input, else the input as they left it.
    pub(crate) fn listen_terminal_input(&mut self, data: &str) -> Option<String> {
        if self.customs.listeners.is_empty() {
            return Some(data.to_owned());
        }
        let mut current = data.to_owned();
        for (_, listener) in self.customs.listeners.clone() {
            match listener(&current) {
                InputAction::Consume => return None,
                InputAction::Replace(next) => current = next,
                InputAction::Pass => {}
            }
        }
        (!current.is_empty()).then_some(current)
    }

    /// With an extension's editor focused, the keys it passes on for `data`; `None` without one.
    pub(crate) fn custom_editor_keys(&mut self, tui: &Tui<CrosstermTerminal>, data: &str) -> Option<Vec<String>> {
        let view = self.customs.editor.clone()?;
        let focused = tui.focused().is_some_and(|f| {
            let editor: ComponentRef = self.editor.clone();
            Rc::ptr_eq(&f, &editor)
        });
        if !focused {
            return None;
        }
        let keys = view.borrow_mut().input(data);
        Some(keys)
    }

    /// The editor's completion provider wrapped by the extensions' (`addAutocompleteProvider`),
    /// the first added innermost.
    pub(crate) fn wrap_autocomplete(&mut self, base: Rc<dyn AutocompleteProvider>) -> Rc<dyn AutocompleteProvider> {
        self.customs.completions = Some(base.clone());
        self.customs.autocomplete.iter().fold(base, |provider, wrap| wrap(provider))
    }
}
