//! Non-interactive modes of the `pi` binary: print (`-p`), JSON event stream (`--mode json`)
//! and JSON-lines RPC (`--mode rpc`). These modules own stdout: they write protocol records and
//! the final text there; diagnostics go to stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

pub mod interactive;
pub mod json;
pub mod json_event;
pub mod output;
pub mod print;
pub mod rpc;
pub mod rpc_command;
pub mod rpc_queries;
pub mod rpc_ui;

/// Exit status after Ctrl-C (128 + SIGINT), as pi.
pub const EXIT_INTERRUPTED: i32 = 130;
