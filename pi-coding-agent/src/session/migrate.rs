//! Migrations of older session files to v3, on JSON values (pi's `migrateToCurrentVersion`).
//!
//! - v1 → v2: entries get ids and a linear `parentId` chain; a compaction's
//!   `firstKeptEntryIndex` (an index into the file's lines, header included) becomes
//!   `firstKeptEntryId`.
//! - v2 → v3: the message role `hookMessage` becomes `custom`.
//!
//! The header's `version` becomes 3.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::session::entries::CURRENT_SESSION_VERSION;
use crate::session::ids::new_entry_id;

fn is_header(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("session")
}

/// Migrates `lines` (the header first, then entries, in file order) in place. Returns whether
/// anything changed.
///
/// ```
/// use serde_json::json;
/// let mut lines = vec![
///     json!({"type": "session", "id": "s", "timestamp": "2024-01-01T00:00:00.000Z", "cwd": "/"}),
///     json!({"type": "message", "timestamp": "2024-01-01T00:00:00.000Z", "message": {"role": "hookMessage", "customType": "x", "content": "c", "display": true, "timestamp": 1}}),
/// ];
/// assert!(pi_coding_agent::session::migrate_values(&mut lines));
/// assert_eq!(lines[0]["version"], 3);
/// assert_eq!(lines[1]["message"]["role"], "custom");
/// assert_eq!(lines[1]["parentId"], serde_json::Value::Null);
/// ```
pub fn migrate_values(lines: &mut [Value]) -> bool {
    let version =
        lines.iter().find(|v| is_header(v)).and_then(|h| h.get("version")).and_then(Value::as_u64).unwrap_or(1);
    if version >= CURRENT_SESSION_VERSION {
        return false;
    }
    if version < 2 {
        v1_to_v2(lines);
    }
    v2_to_v3(lines);
    true
}

fn v1_to_v2(lines: &mut [Value]) {
    let mut taken: HashMap<String, ()> = HashMap::new();
    let mut prev: Option<String> = None;
    for line in lines.iter_mut() {
        if is_header(line) {
            if let Some(h) = line.as_object_mut() {
                h.insert("version".into(), Value::from(2));
            }
            continue;
        }
        let id = new_entry_id(&taken);
        taken.insert(id.clone(), ());
        let Some(obj) = line.as_object_mut() else { continue };
        set_id_parent(obj, &id, prev.take());
        prev = Some(id);
    }
    // Second pass: firstKeptEntryIndex → firstKeptEntryId (index into the lines, header included).
    for i in 0..lines.len() {
        if lines[i].get("type").and_then(Value::as_str) != Some("compaction") {
            continue;
        }
        let Some(index) = lines[i].get("firstKeptEntryIndex").and_then(Value::as_f64) else { continue };
        let target = (index >= 0.0 && index.fract() == 0.0)
            .then(|| lines.get(index as usize))
            .flatten()
            .filter(|t| !is_header(t))
            .and_then(|t| t.get("id").cloned());
        if let Some(obj) = lines[i].as_object_mut() {
            if let Some(id) = target {
                obj.insert("firstKeptEntryId".into(), id);
            }
            obj.shift_remove("firstKeptEntryIndex");
        }
    }
}

/// Sets `id` and `parentId`, keeping pi's key order: existing keys stay, new ones go last.
fn set_id_parent(obj: &mut Map<String, Value>, id: &str, parent: Option<String>) {
    obj.insert("id".into(), Value::String(id.to_owned()));
    obj.insert("parentId".into(), parent.map_or(Value::Null, Value::String));
}

fn v2_to_v3(lines: &mut [Value]) {
    for line in lines.iter_mut() {
        if is_header(line) {
            if let Some(h) = line.as_object_mut() {
                h.insert("version".into(), Value::from(CURRENT_SESSION_VERSION));
            }
            continue;
        }
        if line.get("type").and_then(Value::as_str) == Some("message")
            && let Some(msg) = line.get_mut("message").and_then(Value::as_object_mut)
            && msg.get("role").and_then(Value::as_str) == Some("hookMessage")
        {
            msg.insert("role".into(), Value::String("custom".into()));
        }
    }
}
