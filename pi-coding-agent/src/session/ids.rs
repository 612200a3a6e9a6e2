//! Session ids (UUIDv7) and entry ids (8 hex chars).

use std::collections::HashMap;

use crate::session::SessionError;

/// A new session id: a UUIDv7 (time-ordered), as pi's `uuidv7()`.
pub fn new_session_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Checks a caller-chosen session id: non-empty, only `[A-Za-z0-9._-]`, starting and ending with
/// an alphanumeric character.
///
/// ```
/// use pi_coding_agent::session::validate_session_id;
/// assert!(validate_session_id("my-session.1").is_ok());
/// assert_eq!(
///     validate_session_id("-x").unwrap_err().to_string(),
///     "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character"
/// );
/// ```
pub fn validate_session_id(id: &str) -> Result<(), SessionError> {
    let b = id.as_bytes();
    let ok = !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'));
    if ok { Ok(()) } else { Err(SessionError::InvalidSessionId) }
}

/// A new entry id: the first 8 hex chars of a random UUIDv4, re-drawn on collision (100 tries),
/// then a full UUID.
pub fn new_entry_id<V, S: std::hash::BuildHasher>(taken: &HashMap<String, V, S>) -> String {
    for _ in 0..100 {
        let id = uuid::Uuid::new_v4().simple().to_string()[..8].to_owned();
        if !taken.contains_key(&id) {
            return id;
        }
    }
    uuid::Uuid::new_v4().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let id = new_entry_id(&HashMap::<String, ()>::new());
        assert_eq!(id.len(), 8);
        assert!(id.bytes().all(|c| c.is_ascii_hexdigit()));
        let s = new_session_id();
        assert_eq!(uuid::Uuid::parse_str(&s).unwrap().get_version_num(), 7);
        assert!(validate_session_id("a").is_ok());
        for bad in ["", "a/b", "a.", "_a", "a b"] {
            assert!(validate_session_id(bad).is_err(), "{bad}");
        }
    }
}
