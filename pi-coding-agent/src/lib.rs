//! The coding agent of pi (work in progress; see the workspace issues).
//!
//! - [`tools`]: the built-in tools (read, bash, edit, write, grep, find, ls).
//! - [`render`]: the transcript as pi-tui components, with extensions' entry and message renderers.

pub mod cli;
pub mod compaction;
pub mod extensions;
pub mod messages;
pub mod modes;
pub mod render;
pub mod sdk;
pub mod session;
pub mod settings;
pub mod tools;
