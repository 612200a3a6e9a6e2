//! Shared helpers for the runnable examples (see the `[[example]]` entries in Cargo.toml).
