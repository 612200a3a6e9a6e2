//! Runtime-loaded extensions: executables speaking JSON-RPC 2.0 over stdio (JSON lines), so
//! extensions can be written in any language.
//!
//! The protocol (version [`protocol::PROTOCOL_VERSION`]) is documented in
//! `pi-coding-agent/docs/extension-protocol.md`; `examples/extensions/audit_extension.py` is a
//! complete stdlib-only extension. JavaScript and TypeScript extensions (`.ts`, `.mts`, `.js`,
//! `.mjs`, or a folder with `index.ts` / `package.json`) run unmodified in the session's one
//! JavaScript host ([`crate::extensions::node`]), which speaks the same protocol.
//!
//! ```no_run
//! # async fn demo() {
//! use std::sync::Arc;
//! use pi_coding_agent::extensions::{Extension, ExtensionRunner};
//! use pi_coding_agent::extensions::subprocess::SubprocessExtension;
//! let ext: Arc<dyn Extension> = Arc::new(SubprocessExtension::new("examples/extensions/audit_extension.py"));
//! let runner = ExtensionRunner::load(vec![ext], ".").await;
//! assert!(runner.load_errors().is_empty());
//! # }
//! ```

mod host;
pub(crate) mod link;
pub(crate) mod pi_calls;
pub mod protocol;
pub(crate) mod register;
pub(crate) mod registry_calls;
pub(crate) mod registry_stream;
pub(crate) mod remote_markdown;
pub(crate) mod remote_render;
pub(crate) mod session_calls;
pub(crate) mod typed_calls;
pub(crate) mod ui_calls;
pub(crate) mod update_patch;
pub(crate) mod virtual_models;

pub use host::{SubprocessExtension, SubprocessOptions};
