//! Errors of the TUI layer.

/// Everything that can go wrong in pi-tui.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// Terminal I/O failed.
    #[error("terminal I/O failed: {0}")]
    Io(#[from] std::io::Error),
    /// A component rendered a line wider than the terminal (differential path only, like pi).
    #[error(
        "Rendered line {line} exceeds terminal width ({width} > {max}).\n\nThis is likely caused by a custom TUI component not truncating its output.\nUse visible_width() to measure and truncate_to_width() to truncate lines."
    )]
    LineTooWide {
        /// Index of the offending line in the document.
        line: usize,
        /// Its visible width.
        width: usize,
        /// The terminal width.
        max: usize,
    },
    /// A theme file or colour value is invalid.
    #[error("theme error: {0}")]
    Theme(String),
    /// An unknown theme colour token was requested.
    #[error("Unknown theme color: {0}")]
    UnknownToken(String),
}
