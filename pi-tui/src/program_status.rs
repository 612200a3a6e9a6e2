//! The Program Status Protocol (OSC 7501), as pi-tui speaks it: a program tells a terminal that
//! supports it whether it is idle, working, blocked on the user, done or failed. Only the root
//! record is reported.

use base64::Engine as _;

use crate::ansi::replace_control_characters;

/// The feature query; a supporting terminal answers with the same body (later revisions may add
/// pairs after the `?`).
pub const PROGRAM_STATUS_QUERY: &str = "\x1b]7501;?\x1b\\";

/// The longest decoded `msg` pi-tui sends (its base64 form stays under the protocol's limit).
const MAX_MESSAGE_BYTES: usize = 2048;

/// A program state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProgramState {
    /// Nothing running, nothing finished to look at.
    Idle,
    /// A run or a compaction is in progress.
    Working,
    /// Waiting for the user (a dialog).
    Blocked,
    /// The last run finished.
    Done,
    /// The last run failed.
    Error,
    /// Removes the status (sent when the program stops using the terminal).
    Clear,
}

impl ProgramState {
    /// The protocol's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ProgramState::Idle => "idle",
            ProgramState::Working => "working",
            ProgramState::Blocked => "blocked",
            ProgramState::Done => "done",
            ProgramState::Error => "error",
            ProgramState::Clear => "clear",
        }
    }
}

/// What a `blocked` program waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockedKind {
    /// A yes/no permission (pi's confirm dialogs).
    Permission,
    /// A question (selectors, inputs, editors).
    Question,
    /// A login.
    Auth,
}

impl BlockedKind {
    /// The protocol's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            BlockedKind::Permission => "permission",
            BlockedKind::Question => "question",
            BlockedKind::Auth => "auth",
        }
    }

    /// Reads the protocol's spelling.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "permission" => Some(BlockedKind::Permission),
            "question" => Some(BlockedKind::Question),
            "auth" => Some(BlockedKind::Auth),
            _ => None,
        }
    }
}

/// One status report (pi-tui's `ProgramStatus`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProgramStatus {
    /// The state.
    pub state: ProgramState,
    /// The program's name (sent only when it matches `[A-Za-z0-9_.+-]{1,32}`).
    pub app: Option<String>,
    /// What a blocked program waits for (sent only with [`ProgramState::Blocked`]).
    pub kind: Option<BlockedKind>,
    /// A short text (the session name, a dialog title, an error's first line).
    pub message: Option<String>,
}

impl ProgramStatus {
    /// A status of `state` with nothing else.
    pub fn new(state: ProgramState) -> Self {
        Self { state, app: None, kind: None, message: None }
    }

    /// This status with `message`.
    pub fn with_message(mut self, message: Option<String>) -> Self {
        self.message = message;
        self
    }
}

/// Whether `sequence` is a terminal's answer to [`PROGRAM_STATUS_QUERY`].
pub fn is_program_status_reply(sequence: &str) -> bool {
    let Some(rest) = sequence.strip_prefix("\x1b]7501;?") else { return false };
    let body = rest.strip_suffix('\x07').or_else(|| rest.strip_suffix("\x1b\\"));
    body.is_some_and(|b| !b.contains(['\x07', '\x1b']))
}

fn valid_app(app: &str) -> bool {
    (1..=32).contains(&app.len())
        && app.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'+' | b'-'))
}

/// `text` cut at a character boundary to at most `max` bytes.
fn truncate_utf8(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Encodes a report (pi-tui's `formatProgramStatus`): control characters in the message are
/// replaced (terminals drop reports that contain them), the message is trimmed, cut to 2048 bytes
/// and base64-encoded.
pub fn format_program_status(status: &ProgramStatus) -> String {
    let mut out = format!("\x1b]7501;state={}", status.state.as_str());
    if let Some(app) = status.app.as_deref().filter(|a| valid_app(a)) {
        out.push_str(":app=");
        out.push_str(app);
    }
    if status.state == ProgramState::Blocked
        && let Some(kind) = status.kind
    {
        out.push_str(":kind=");
        out.push_str(kind.as_str());
    }
    let cleaned = replace_control_characters(status.message.as_deref().unwrap_or(""));
    let message = truncate_utf8(cleaned.trim(), MAX_MESSAGE_BYTES);
    if !message.is_empty() {
        out.push_str(":msg=");
        out.push_str(&base64::engine::general_purpose::STANDARD.encode(message));
    }
    out.push_str("\x1b\\");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_are_encoded_as_pi_tui_encodes_them() {
        let working = ProgramStatus {
            state: ProgramState::Working,
            app: Some("pi".into()),
            kind: Some(BlockedKind::Auth),
            message: Some("  my session\n".into()),
        };
        // The kind goes only with `blocked`; the message is trimmed, its newline replaced.
        assert_eq!(format_program_status(&working), "\x1b]7501;state=working:app=pi:msg=bXkgc2Vzc2lvbg==\x1b\\");
        let blocked = ProgramStatus {
            state: ProgramState::Blocked,
            app: Some("not valid!".into()),
            kind: Some(BlockedKind::Permission),
            message: Some("Delete?".into()),
        };
        assert_eq!(format_program_status(&blocked), "\x1b]7501;state=blocked:kind=permission:msg=RGVsZXRlPw==\x1b\\");
        assert_eq!(format_program_status(&ProgramStatus::new(ProgramState::Clear)), "\x1b]7501;state=clear\x1b\\");
        let long = ProgramStatus::new(ProgramState::Error).with_message(Some("é".repeat(1500)));
        let encoded = format_program_status(&long);
        let b64 = encoded.trim_start_matches("\x1b]7501;state=error:msg=").trim_end_matches("\x1b\\");
        let decoded = base64::engine::general_purpose::STANDARD.decode(b64).expect("base64");
        assert_eq!(decoded.len(), 2048);
    }

    #[test]
    fn replies_are_recognised() {
        assert!(is_program_status_reply("\x1b]7501;?\x1b\\"));
        assert!(is_program_status_reply("\x1b]7501;?v=2\x07"));
        assert!(!is_program_status_reply("\x1b]7501;state=idle\x1b\\"));
        assert!(!is_program_status_reply("\x1b]7501;?"));
        assert!(!is_program_status_reply("\x1b]11;rgb:0/0/0\x07"));
    }
}
