//! # pi-tui: the terminal UI layer of pi
//!
//! This crate is what the pi coding agent draws with. Its model is pi's, not a cell grid's:
//! a **component renders to lines of text at a given width**, each line a `String` that may carry
//! SGR colours, OSC 8 links and zero-width markers. Styling is done with plain strings
//! (`theme.fg("accent", "[status]")`), so extensions and renderers written against pi's string
//! contract port one-to-one and their output can be compared byte for byte with pi 1.6.0.
//!
//! The renderers then turn those lines into terminal output. [`render::MainScreen`] (pi's
//! "regular" mode) diffs the document line by line into the normal buffer, so the terminal keeps
//! the transcript in its own scrollback; [`render::AltScreen`] (pi's "fullscreen" mode) owns a
//! viewport on the alternate screen. Both write only changed lines, inside synchronized output
//! (`CSI ? 2026`), and [`Tui`] drives them: focus, overlays, input dispatch, frame pacing.
//!
//! Input stays raw too. [`keys::StdinBuffer`] splits stdin into complete sequences (Kitty keyboard
//! protocol, bracketed paste, legacy escapes) and components test them with
//! [`keys::matches_key`]`(data, "shift+enter")` instead of a lossy key enum.
//!
//! ## What this crate deliberately does not do
//! - It knows nothing about messages, sessions or agents; the coding agent builds those on top.
//! - It is not ratatui: there is no cell buffer and no layout engine beyond stacking lines.
//! - It does not own an event loop or threads beyond the stdin reader of
//!   [`terminal::CrosstermTerminal`]; the application calls [`Tui::run_once`].
//!
//! ## Port status
//! Ported and checked byte for byte against pi 1.6.0 fixtures (`tests/fixtures/generate.mjs`):
//! the ANSI utilities, Text/Box/TruncatedText/Spacer, Markdown, SelectList, Input, Editor, key
//! parsing, the built-in themes, the main-screen renderer's output and LaTeX math
//! ([`render_latex`], `tests/fixtures/latex.mjs`); mouse reports ([`mouse`]), their dispatch to
//! components and [`MouseRegion`] ([`mouse_dispatch`]), the alt screen's scrollbar, terminal colour
//! queries and the `system` theme, the alt screen's transcript search ([`alt_search`]). The coding
//! agent's interactive mode draws the rest of pi's fullscreen mode (wheel, selection, copy,
//! flashes, search) on these. Not ported: images (Kitty/iTerm2) in this renderer and the layout
//! components (VStack/HStack/ScrollView/SettingsList).
//!
//! ## Main types
//! - [`Component`], [`Lines`] (shared `Rc<[String]>` caches compared by identity), [`Container`].
//! - Components: [`Text`], [`Box`], [`Spacer`], [`TruncatedText`], [`Loader`], [`Input`],
//!   [`Editor`], [`SelectList`], [`Markdown`].
//! - [`ansi`]: `visible_width`, `wrap_text_with_ansi`, `truncate_to_width`, column slicing.
//! - [`Terminal`] with [`CaptureTerminal`] (tests) and [`CrosstermTerminal`].
//! - [`Theme`]: pi's theme JSON, its colour tokens and the built-in dark and light themes.
//! - [`render_latex`]: LaTeX math as Unicode text (what Markdown draws for `$…$` and `$$…$$`).
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod alt_search;
pub mod ansi;
pub mod component;
pub mod components;
pub mod error;
pub mod fuzzy;
mod input_reader;
pub mod keys;
pub mod latex;
pub mod mouse;
pub mod mouse_dispatch;
pub mod program_status;
pub mod render;
pub mod terminal;
pub mod theme;
pub mod tui;

pub use component::{
    CURSOR_MARKER, Component, ComponentRef, Container, Lines, StyleFn, TextCallback, render_fake_cursor, shared,
};
pub use components::{
    Box, Editor, Input, Loader, Markdown, MarkdownTheme, SelectItem, SelectList, Spacer, Text, TruncatedText,
};
pub use error::TuiError;
pub use latex::render_latex;
pub use mouse::{MouseButton, MouseEvent, MouseEventType};
pub use mouse_dispatch::{
    MouseDispatch, MouseRegion, MouseReply, MouseResult, OverlayHit, RenderedOverlay, dispatch_mouse,
    dispatch_to_overlays,
};
pub use terminal::{CaptureTerminal, CrosstermTerminal, Terminal, TerminalEvent, emergency_restore};
pub use theme::{ColorMode, Theme};
pub use tui::{InputAction, OverlayId, ScreenMode, Tui};
