//! `/import <path.jsonl>`: pi's session import. After a confirmation the file is copied into the
//! session folder (a `-N` suffix when the name is taken) and the session switches to it, keeping
//! its id and working directory.

use pi_tui::{CrosstermTerminal, Tui};

use super::app::{App, UiEvent};

/// pi's `getPathCommandArgument`: the first word after the command, or a quoted path.
pub(crate) fn path_argument(args: &str) -> Option<String> {
    let args = args.trim_start();
    let first = args.chars().next()?;
    if first == '"' || first == '\'' {
        let rest = &args[1..];
        return rest.find(first).map(|end| rest[..end].to_owned());
    }
    Some(args.split_whitespace().next()?.to_owned())
}

/// Copies `source` into `dir`, as `name.jsonl`, else `name-1.jsonl`, …; the path it was copied
/// to (`source` itself when it already lives there).
fn copy_into(source: &std::path::Path, dir: &std::path::Path) -> std::io::Result<(std::path::PathBuf, bool)> {
    std::fs::create_dir_all(dir)?;
    let file_name = source.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut dest = dir.join(&file_name);
    if std::fs::canonicalize(&dest).ok() == std::fs::canonicalize(source).ok() && dest.exists() {
        return Ok((dest, false));
    }
    let path = std::path::Path::new(&file_name);
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let ext = path.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    let mut n = 1;
    while dest.exists() {
        dest = dir.join(format!("{stem}-{n}{ext}"));
        n += 1;
    }
    std::fs::copy(source, &dest)?;
    Ok((dest, true))
}

impl App {
    /// `/import`: usage error without a path, then pi's confirmation, then the switch.
    pub(crate) fn command_import(&mut self, tui: &mut Tui<CrosstermTerminal>, args: &str) {
        let Some(input) = path_argument(args) else {
            self.show_error("Usage: /import <path.jsonl>");
            return;
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.on_ui_request(
            tui,
            super::host::UiRequest::Confirm {
                title: "Import session".to_owned(),
                message: format!("Replace current session with {input}?"),
                reply: tx,
            },
        );
        let session = self.session.clone();
        let events = self.tx.clone();
        tokio::spawn(async move {
            if !rx.await.unwrap_or(false) {
                let _ = events.send(UiEvent::Status("Import cancelled".to_owned()));
                return;
            }
            let source = crate::session::resolve_path(&input);
            if !source.exists() {
                let msg = format!("Failed to import session: File not found: {}", source.display());
                let _ = events.send(UiEvent::Error(msg));
                return;
            }
            let dir = session.with_session_manager(|sm| sm.session_dir().to_path_buf());
            let (dest, copied) = match copy_into(&source, &dir) {
                Ok(r) => r,
                Err(e) => {
                    let _ = events.send(UiEvent::Error(format!("Failed to import session: {e}")));
                    return;
                }
            };
            match session.switch_session(&dest).await {
                Ok(o) if o.cancelled => {
                    if copied {
                        let _ = std::fs::remove_file(&dest);
                    }
                    let _ = events.send(UiEvent::Status("Import cancelled".to_owned()));
                }
                Ok(_) => {
                    let _ = events.send(UiEvent::Rebuilt(format!("Session imported from: {input}")));
                }
                Err(e) => {
                    if copied {
                        let _ = std::fs::remove_file(&dest);
                    }
                    let _ = events.send(UiEvent::Error(format!("Failed to import session: {e}")));
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_argument_reads_words_and_quotes() {
        assert_eq!(path_argument(" a.jsonl more").as_deref(), Some("a.jsonl"));
        assert_eq!(path_argument("\"my file.jsonl\" x").as_deref(), Some("my file.jsonl"));
        assert_eq!(path_argument("'open"), None);
        assert_eq!(path_argument("   "), None);
    }

    #[test]
    fn copies_get_a_free_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let src = dir.path().join("s.jsonl");
        std::fs::write(&src, "{}").expect("write");
        let sessions = dir.path().join("sessions");
        let (a, _) = copy_into(&src, &sessions).expect("copy");
        let (b, _) = copy_into(&src, &sessions).expect("copy");
        assert_eq!(a.file_name().and_then(|n| n.to_str()), Some("s.jsonl"));
        assert_eq!(b.file_name().and_then(|n| n.to_str()), Some("s-1.jsonl"));
    }
}
