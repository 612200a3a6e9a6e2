//! The terminal UI of pi (work in progress; see the workspace issues).
