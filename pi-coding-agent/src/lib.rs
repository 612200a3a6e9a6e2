//! The coding agent of pi (work in progress; see the workspace issues).
//!
//! - [`tools`]: the built-in tools (read, bash, edit, write, grep, find, ls).
//! - [`ui`]: the UI seam ([`ui::UiHost`], pi's `ctx.ui`) every mode implements.
//! - [`render`]: the transcript as pi-tui components, with extensions' entry and message renderers.

pub mod auth;
pub mod builtin_extensions;
pub mod cli;
pub mod compaction;
pub mod extensions;
pub mod mcp;
pub mod messages;
pub mod modes;
pub mod packages;
pub mod render;
pub mod sdk;
pub mod session;
pub mod settings;
pub mod tools;
pub mod trust;
pub mod ui;
