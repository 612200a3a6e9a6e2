//! `@file` arguments and the initial message (pi's `processFileArguments` and
//! `buildInitialMessage`): text files become `<file name="ABS">\nCONTENT\n</file>\n`, images
//! become attachments with `<file name="ABS"></file>\n`, empty files are skipped.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use base64::Engine;
use pi_ai::ImageContent;

use crate::tools::image::{detect_image_mime, to_inline_image};
use crate::tools::path::resolve_read_path;

/// An `@file` that cannot be used; the message is pi's (printed as `Error: …`, exit 1).
#[derive(Debug, thiserror::Error)]
pub enum FileArgError {
    /// The path does not exist.
    #[error("File not found: {0}")]
    NotFound(String),
    /// The path exists but is unreadable.
    #[error("Could not read file {path}: {message}")]
    Unreadable {
        /// Absolute path.
        path: String,
        /// Why.
        message: String,
    },
}

/// The text and images of the `@file` arguments.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileContents {
    /// Concatenated `<file>` blocks.
    pub text: String,
    /// Image attachments, in argument order.
    pub images: Vec<ImageContent>,
}

/// Reads every `@file` argument relative to `cwd`.
pub async fn process_file_args(file_args: &[String], cwd: &Path) -> Result<FileContents, FileArgError> {
    let paths: Vec<OsString> = file_args.iter().map(OsString::from).collect();
    process_file_paths(&paths, cwd).await
}

/// [`process_file_args`] for arguments as the operating system gave them: a name that is not
/// UTF-8 is opened by its bytes (and shown lossily in the `<file name>`).
pub async fn process_file_paths(file_args: &[OsString], cwd: &Path) -> Result<FileContents, FileArgError> {
    let mut out = FileContents::default();
    let cwd_str = cwd.to_string_lossy();
    for arg in file_args {
        let (absolute, read_path) = match arg.to_str() {
            Some(text) => {
                let absolute = resolve_read_path(text, &cwd_str).await;
                (absolute.clone(), PathBuf::from(absolute))
            }
            None => {
                let path = cwd.join(arg);
                (path.to_string_lossy().into_owned(), path)
            }
        };
        let bytes = match tokio::fs::read(&read_path).await {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(FileArgError::NotFound(absolute)),
            Err(e) => return Err(FileArgError::Unreadable { path: absolute, message: e.to_string() }),
        };
        if bytes.is_empty() {
            continue;
        }
        if let Some(mime) = detect_image_mime(&bytes) {
            match to_inline_image(&bytes, mime) {
                Some((data, mime, hint)) => {
                    let data = base64::engine::general_purpose::STANDARD.encode(data);
                    out.images.push(ImageContent::new(data, mime));
                    out.text.push_str(&format!("<file name=\"{absolute}\">{}</file>\n", hint.unwrap_or_default()));
                }
                None => out.text.push_str(&format!("<file name=\"{absolute}\">Unsupported image: {mime}</file>\n")),
            }
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        out.text.push_str(&format!("<file name=\"{absolute}\">\n{text}\n</file>\n"));
    }
    Ok(out)
}

/// pi's `buildInitialMessage`: piped stdin, then the `@file` text, then the first message
/// (removed from `messages`), concatenated; `None` when all are absent.
pub fn build_initial_message(stdin: Option<&str>, file_text: &str, messages: &mut Vec<String>) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    if let Some(s) = stdin {
        parts.push(s.to_owned());
    }
    if !file_text.is_empty() {
        parts.push(file_text.to_owned());
    }
    if !messages.is_empty() {
        parts.push(messages.remove(0));
    }
    (!parts.is_empty()).then(|| parts.concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn text_files_and_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "\u{feff}hello").unwrap();
        std::fs::write(dir.path().join("empty.txt"), "").unwrap();
        let got = process_file_args(&["a.txt".into(), "empty.txt".into()], dir.path()).await.unwrap();
        let abs = dir.path().join("a.txt");
        assert_eq!(got.text, format!("<file name=\"{}\">\nhello\n</file>\n", abs.display()));
        let err = process_file_args(&["/nonexistent/x".into()], dir.path()).await.unwrap_err();
        assert_eq!(err.to_string(), "File not found: /nonexistent/x");
    }

    #[test]
    fn initial_message_order() {
        let mut messages = vec!["first".to_owned(), "second".to_owned()];
        let m = build_initial_message(Some("IN\n"), "<file/>\n", &mut messages);
        assert_eq!(m.as_deref(), Some("IN\n<file/>\nfirst"));
        assert_eq!(messages, ["second"]);
        assert_eq!(build_initial_message(None, "", &mut Vec::new()), None);
    }
}
