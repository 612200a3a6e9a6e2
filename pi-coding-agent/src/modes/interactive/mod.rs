//! The interactive mode of `pi` (`pi` in a terminal without `-p`): pi 1.6.0's terminal UI on
//! pi-tui, over [`AgentSession`](crate::sdk::AgentSession), never around it.
//!
//! Threading (DESIGN decision 9): pi-tui components are single-threaded (`Rc<RefCell>`), the
//! session lives in the `Send` world. The UI runs on one local task that owns the terminal and
//! the component tree ([`run_interactive`] on a `LocalSet`); session events, UI requests from
//! extensions (`host::TuiHost`, the interactive [`UiHost`](crate::ui::UiHost)) and the results of spawned session calls reach it over one
//! channel, and the stdin reader thread wakes it through the same channel. It draws at most one
//! frame per tick (16 ms) however many deltas arrive: a streamed delta only marks the live
//! assistant row dirty, and the partial message is read once per frame. The terminal is restored
//! on every exit path: normal quit (Ctrl+C twice, Ctrl+D, `/quit`), SIGHUP / SIGTERM, and panics
//! (a panic hook in `guard`).

mod app;
mod app_keys;
mod autocomplete;
mod cache_notice;
mod changelog;
mod clipboard;
mod clipboard_command;
mod commands;
mod context_view;
mod custom_component;
mod dialog_stack;
mod dialogs;
mod editor_modes;
mod extension_ui;
mod external_editor;
mod footer;
mod fork_selector;
mod guard;
mod header;
mod host;
mod import;
mod keys;
mod layout;
mod live;
mod login;
mod login_dialog;
mod login_flow;
mod mouse;
mod program_status;
mod reload;
mod run;
mod scoped_models;
mod search;
mod selection;
mod session_picker;
mod session_search;
mod settings_list;
mod settings_menu;
mod shortcuts;
mod startup_trust;
mod submit;
mod suspend;
mod theme_controller;
mod transcript_view;
mod tree_view;
mod trust_command;
mod ui_requests;

pub use header::StartupResources;
pub use run::{run_interactive, run_interactive_on};
pub use startup_trust::StartupUi;

use pi_ai::Model;

use crate::sdk::PromptOptions;

/// What the interactive mode needs besides the session.
#[derive(Default)]
pub struct InteractiveOptions {
    /// The first message (from the command line, stdin or `@file`s), sent at start.
    pub initial: Option<(String, PromptOptions)>,
    /// Further command-line messages, sent one after another.
    pub rest: Vec<String>,
    /// The agent dir (`keybindings.json`, themes, settings).
    pub agent_dir: std::path::PathBuf,
    /// The `theme` setting or `--theme` (`dark`, `light`, a custom theme name).
    pub theme: Option<String>,
    /// `quietStartup`: no header.
    pub quiet_startup: bool,
    /// `tuiMode` is `regular` (main screen) rather than `fullscreen`.
    pub regular_screen: bool,
    /// Models `/model` and Ctrl+P choose from (the scope first, when there is one).
    pub models: Vec<Model>,
    /// `--models` / `enabledModels`: the models Ctrl+P cycles through.
    pub scoped_models: Vec<Model>,
    /// What the startup listing shows.
    pub resources: StartupResources,
    /// Warnings to show at start (settings, keybindings, models.json).
    pub warnings: Vec<String>,
    /// The version the header shows.
    pub version: String,
    /// Prompt templates and `skill:` commands for the `/` menu: `(name, description)`.
    pub commands: Vec<(String, String)>,
    /// `hideThinkingBlock`: thinking blocks start hidden.
    pub hide_thinking: bool,
    /// Colours the terminal takes; `None` detects them (`COLORTERM`, `TERM`).
    pub color_mode: Option<pi_tui::ColorMode>,
    /// `pi --resume`: open the session picker first; dismissing it quits with "No session
    /// selected".
    pub resume_picker: bool,
}
