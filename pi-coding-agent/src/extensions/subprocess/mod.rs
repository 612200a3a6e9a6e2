//! Runtime-loaded extensions: executables speaking JSON-RPC 2.0 over stdio (JSON lines).
//!
//! See `pi-coding-agent/docs/extension-protocol.md` for the protocol.
