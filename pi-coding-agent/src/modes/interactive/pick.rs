//! `pi --resume`: pi's session picker on its own, before any session exists. It draws on the
//! process's terminal and gives it back restored, whatever the outcome.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use pi_tui::{ColorMode, CrosstermTerminal, ScreenMode, Terminal, TerminalEvent, Tui};

use super::dialogs::DoneCell;
use super::session_picker::{PickerRequest, SessionPicker, delete_session_file};

/// Lets the user pick one of the sessions of `cwd` (or, with Tab, of every project); `None`
/// when the picker was dismissed. `theme` is the `theme` setting.
pub fn pick_session(
    cwd: &Path,
    session_dir: Option<&Path>,
    agent_dir: &Path,
    theme: Option<&str>,
) -> Result<Option<PathBuf>, pi_tui::TuiError> {
    let (theme, _) = super::app::load_theme(theme, agent_dir, &cwd.display().to_string(), ColorMode::detect());
    let (keys, _) = super::keys::load_keybindings(agent_dir);
    let done: DoneCell = Rc::new(RefCell::new(None));
    let picker = Rc::new(RefCell::new(SessionPicker::new(
        Rc::new(theme),
        Rc::new(keys),
        cwd.display().to_string(),
        session_dir.map(Path::to_path_buf),
        None,
        done.clone(),
    )));
    let mut tui = Tui::new(CrosstermTerminal::new(), ScreenMode::Main);
    super::guard::arm();
    tui.start()?;
    tui.add_child(picker.clone());
    tui.set_focus(Some(picker.clone()));
    let result = loop {
        tui.render_now()?;
        if let Some(result) = done.borrow_mut().take() {
            break result;
        }
        let Some(ev) = tui.terminal_mut().poll_event(Duration::from_millis(100)) else { continue };
        match ev {
            TerminalEvent::Input(data) => tui.handle_input(&data)?,
            TerminalEvent::Resize => tui.request_render(true),
        }
        let requests: Vec<PickerRequest> = picker.borrow_mut().requests.drain(..).collect();
        for r in requests {
            let mut p = picker.borrow_mut();
            match r {
                PickerRequest::Delete(path) => match delete_session_file(&path) {
                    Ok(msg) => {
                        p.reload();
                        p.set_status(false, msg.to_owned());
                    }
                    Err(e) => p.set_status(true, format!("Failed to delete: {e}")),
                },
                PickerRequest::Rename(path, name) => {
                    match crate::session::SessionManager::open(&path, None, None)
                        .and_then(|mut sm| sm.append_session_info(&name).map(|_| ()))
                    {
                        Ok(()) => p.reload(),
                        Err(e) => p.set_status(true, format!("Failed to rename: {e}")),
                    }
                }
            }
        }
    };
    tui.stop()?;
    super::guard::disarm();
    Ok(result.map(PathBuf::from))
}
