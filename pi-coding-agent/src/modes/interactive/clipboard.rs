//! Ctrl+V (`app.clipboard.pasteImage`) on Linux as pi does it without its native clipboard
//! module: an image on the clipboard (`wl-paste` on Wayland or WSL, else `xclip`) is written to
//! `$TMPDIR/pi-clipboard-<uuid>.<ext>` and its path inserted; otherwise the clipboard's text
//! (`wl-paste`, `xclip`, `xsel`) is inserted. Nothing happens when no tool answers. The commands
//! run off the UI task, each with pi's timeout ([`run_clipboard_command`]).

use std::time::Duration;

use super::app::{App, UiEvent};
use super::clipboard_command::{DEFAULT_TIMEOUT, LIST_TIMEOUT, TEXT_TIMEOUT, run_clipboard_command};
use super::host::UiRequest;

const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/webp", "image/gif"];

/// The command's output; `None` when it cannot run, fails or times out (pi's `undefined`).
fn run(command: &str, args: &[&str], timeout: Duration) -> Option<Vec<u8>> {
    run_clipboard_command(command, args, None, timeout)
}

fn base(mime: &str) -> String {
    mime.split(';').next().unwrap_or(mime).trim().to_lowercase()
}

/// pi's `selectPreferredImageMimeType`.
fn preferred(types: &[u8]) -> Option<String> {
    let list: Vec<String> =
        String::from_utf8_lossy(types).lines().map(str::trim).filter(|t| !t.is_empty()).map(str::to_owned).collect();
    IMAGE_TYPES
        .iter()
        .find_map(|p| list.iter().find(|t| base(t) == *p).cloned())
        .or_else(|| list.iter().find(|t| base(t).starts_with("image/")).cloned())
}

/// `Some(None)`: the tool answered without an image; `None`: the tool did not answer.
fn image_via(list: (&str, &[&str]), get: impl Fn(&str) -> (String, Vec<String>)) -> Option<Option<(Vec<u8>, String)>> {
    let types = run(list.0, list.1, LIST_TIMEOUT)?;
    let Some(mime) = preferred(&types) else { return Some(None) };
    let (cmd, args) = get(&mime);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let data = run(&cmd, &args, DEFAULT_TIMEOUT)?;
    Some((!data.is_empty()).then(|| (data, base(&mime))))
}

fn read_image() -> Option<(Vec<u8>, String)> {
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some()
        || std::env::var("XDG_SESSION_TYPE").is_ok_and(|v| v == "wayland")
        || std::env::var_os("WSL_DISTRO_NAME").is_some();
    let mut image = None;
    if wayland {
        image = image_via(("wl-paste", &["--list-types"]), |t| {
            ("wl-paste".into(), vec!["--type".into(), t.into(), "--no-newline".into()])
        });
    }
    if image.is_none() {
        image = image_via(("xclip", &["-selection", "clipboard", "-t", "TARGETS", "-o"]), |t| {
            ("xclip".into(), vec!["-selection".into(), "clipboard".into(), "-t".into(), t.into(), "-o".into()])
        });
    }
    image.flatten()
}

fn read_text() -> Option<String> {
    let mut commands: Vec<(&str, Vec<&str>)> = Vec::new();
    if std::env::var_os("TERMUX_VERSION").is_some() {
        commands.push(("termux-clipboard-get", vec![]));
    }
    if std::env::var_os("WAYLAND_DISPLAY").is_some() {
        commands.push(("wl-paste", vec!["--no-newline", "--type", "text"]));
    }
    if std::env::var_os("DISPLAY").is_some() {
        commands.push(("xclip", vec!["-selection", "clipboard", "-out"]));
        commands.push(("xsel", vec!["--clipboard", "--output"]));
    }
    commands
        .into_iter()
        .find_map(|(c, a)| run(c, &a, TEXT_TIMEOUT))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .filter(|t| !t.is_empty())
}

/// What a paste inserts: an image's temporary path, or text.
fn paste() -> Result<Option<String>, String> {
    if let Some((bytes, mime)) = read_image() {
        let ext = match mime.as_str() {
            "image/jpeg" => "jpg",
            "image/webp" => "webp",
            "image/gif" => "gif",
            _ => "png",
        };
        let path = std::env::temp_dir().join(format!("pi-clipboard-{}.{ext}", uuid::Uuid::new_v4()));
        std::fs::write(&path, bytes).map_err(|e| e.to_string())?;
        return Ok(Some(path.display().to_string()));
    }
    Ok(read_text())
}

impl App {
    /// Ctrl+V: reads the clipboard off the UI task, then inserts what it found.
    pub(crate) fn paste_from_clipboard(&mut self) {
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let event = match paste() {
                Ok(Some(text)) => UiEvent::Ui(UiRequest::Paste(text)),
                Ok(None) => return,
                Err(e) => UiEvent::Error(format!("Failed to paste from clipboard: {e}")),
            };
            let _ = tx.send(event);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_is_preferred_over_other_images() {
        assert_eq!(preferred(b"TARGETS\nimage/bmp\nimage/jpeg\nimage/png\n").as_deref(), Some("image/png"));
        assert_eq!(preferred(b"text/plain\nimage/bmp").as_deref(), Some("image/bmp"));
        assert_eq!(preferred(b"text/plain\nUTF8_STRING"), None);
    }
}
