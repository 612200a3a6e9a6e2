//! Runtime-loaded extensions: executables speaking JSON-RPC 2.0 over stdio (JSON lines), so
//! extensions can be written in any language.
//!
//! The protocol (version [`protocol::PROTOCOL_VERSION`]) is documented in
//! `pi-coding-agent/docs/extension-protocol.md`; `examples/extensions/audit_extension.py` is a
//! complete stdlib-only extension.
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
mod pi_calls;
pub mod protocol;

pub use host::{SubprocessExtension, SubprocessOptions};
