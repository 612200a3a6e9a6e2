//! Keys: raw input sequences and `matches_key(data, "shift+enter")`-style matching.
//!
//! Input stays a raw string (`"\x1b[13;2u"`); there is no lossy key-event enum. Matching
//! understands legacy sequences, the Kitty keyboard protocol (CSI-u with shifted and base-layout
//! keys, keypad PUA codes) and xterm modifyOtherKeys (`ESC[27;mod;cp~`).

mod bindings;
mod legacy;
mod parse;
mod stdin_buffer;

pub use bindings::{DEFAULT_BINDINGS, Keybindings};
pub use parse::{decode_printable_key, is_key_release, is_key_repeat, key_event_type, matches_key, parse_key};
pub use stdin_buffer::{StdinBuffer, StdinEvent};

use std::sync::atomic::{AtomicBool, Ordering};

static KITTY_ACTIVE: AtomicBool = AtomicBool::new(false);

/// Record whether the terminal confirmed the Kitty keyboard protocol (read by key matching).
pub fn set_kitty_protocol_active(active: bool) {
    KITTY_ACTIVE.store(active, Ordering::Relaxed);
}

/// Whether the Kitty keyboard protocol is active.
pub fn is_kitty_protocol_active() -> bool {
    KITTY_ACTIVE.load(Ordering::Relaxed)
}
