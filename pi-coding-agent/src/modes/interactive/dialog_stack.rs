//! The dialog stack of the UI task: a modal component in place of the editor (selectors,
//! dialogs), extension dialogs stacked as pi's `pushExtensionDialog`, and the editor restored
//! when the last one closes.

use std::cell::RefCell;
use std::rc::Rc;

use pi_tui::{ComponentRef, CrosstermTerminal, Tui};

use super::app::App;

/// A modal component in place of the editor (selectors, dialogs).
/// What runs when a dialog finishes.
pub(crate) type DialogDone = Box<dyn FnOnce(&mut App, Option<String>)>;

pub(crate) struct Dialog {
    /// Set by the component's callbacks; read after each input.
    pub(crate) done: Rc<RefCell<Option<Option<String>>>>,
    pub(crate) on_done: DialogDone,
    /// An extension's dialog (select, confirm, input, custom): those stack (pi's
    /// `pushExtensionDialog`); any other dialog is cancelled by the next one.
    pub(crate) extension: bool,
    /// What the dialog waits for, reported to the terminal while it is on top (OSC 7501).
    pub(crate) blocked: Option<super::program_status::Blocked>,
}

impl App {
    pub(crate) fn finish_dialog(&mut self, tui: &mut Tui<CrosstermTerminal>) {
        let result = self.dialog.as_ref().and_then(|d| d.done.borrow_mut().take());
        if let Some(result) = result
            && let Some(dialog) = self.dialog.take()
        {
            self.dialog_changes = None;
            match self.dialog_stack.pop() {
                Some((previous, component)) => self.show_dialog(tui, component, previous),
                None => self.restore_editor(tui),
            }
            (dialog.on_done)(self, result);
        }
    }

    /// Puts a dialog's component in place of the editor, focused.
    fn show_dialog(&mut self, tui: &mut Tui<CrosstermTerminal>, component: ComponentRef, dialog: Dialog) {
        let mut slot = self.editor_slot.borrow_mut();
        slot.clear();
        slot.add_child(component.clone());
        drop(slot);
        tui.set_focus(Some(component));
        self.dialog = Some(dialog);
        self.dirty = true;
    }

    /// Makes room for the next dialog: an extension's dialog under an extension's next one waits
    /// hidden (pi's `pushExtensionDialog`); any other is cancelled.
    pub(crate) fn stack_dialog(&mut self, next_is_extension: bool) {
        if let Some(old) = self.dialog.take() {
            self.dialog_changes = None;
            let shown = self.editor_slot.borrow().children().first().cloned();
            match shown.filter(|_| old.extension && next_is_extension) {
                Some(component) => self.dialog_stack.push((old, component)),
                None => (old.on_done)(self, None),
            }
        }
    }

    /// Shows `component` in place of the editor, focused, until its `done` cell is set.
    pub(crate) fn open_dialog(
        &mut self,
        tui: &mut Tui<CrosstermTerminal>,
        component: ComponentRef,
        done: Rc<RefCell<Option<Option<String>>>>,
        on_done: DialogDone,
    ) {
        let extension = std::mem::take(&mut self.opening_extension_dialog);
        let blocked = self.opening_blocked.take().filter(|_| extension);
        self.stack_dialog(extension);
        self.show_dialog(tui, component, Dialog { done, on_done, extension, blocked });
    }

    fn restore_editor(&mut self, tui: &mut Tui<CrosstermTerminal>) {
        let mut slot = self.editor_slot.borrow_mut();
        slot.clear();
        slot.add_child(self.editor_view());
        drop(slot);
        tui.set_focus(Some(self.editor.clone()));
        self.dirty = true;
    }
}
