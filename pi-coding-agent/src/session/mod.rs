//! Sessions: pi's v3 JSONL format, the entry tree and the model context built from it.
//!
//! A session file is one header line and one JSON line per entry. Entries form a tree through
//! `parentId`; the *leaf* is the current position. [`SessionManager`] appends, navigates and builds
//! the context; the free functions in [`context`] do the same on any entry slice.
//!
//! Bad input loses nothing: the reader keeps every valid entry, keeps unknown or unreadable
//! entries raw, reports what it skipped as [`LoadWarning`]s and never rewrites a file (except to
//! migrate a v1/v2 file, which pi does too; the original is kept as a backup if lines were
//! skipped).

mod background;
pub mod context;
pub mod entries;
mod error;
mod ids;
pub mod list;
mod load;
mod manager;
mod migrate;
mod paths;
mod time;
pub mod tree;
mod writer;

pub use background::PendingWrites;
pub use context::{
    EntryIndex, EntryMessages, Leaf, ModelRef, ProjectedEntry, SessionContext, SessionProjection,
    build_context_entries, build_session_context, build_session_path, build_session_projection, entry_context_messages,
    index_entries, project_context_entry, project_path, session_context_settings,
};
pub use entries::*;
pub use error::SessionError;
pub use ids::{new_entry_id, new_session_id, validate_session_id};
pub use list::{SessionInfo, list_all_sessions, list_sessions};
pub use load::{
    LoadWarning, LoadedFile, ReadOutcome, read_session, read_session_file, read_session_header, summarize_load_warnings,
};
pub use manager::{NewSessionOptions, SessionManager};
pub use migrate::migrate_values;
pub use paths::{
    ENV_AGENT_DIR, ENV_SESSION_DIR, default_session_dir_path, encode_cwd, expand_tilde, get_agent_dir,
    get_sessions_dir, resolve_path, session_file_name,
};
pub use time::{format_iso, iso_now, now_ms, parse_iso};
pub use tree::{Labels, ResolvedLabel, SessionTreeNode};
pub use writer::{JsonlWriter, lines_of};
