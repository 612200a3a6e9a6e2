//! `ctx.sessionManager` (pi's `ReadonlySessionManager`) and `ctx.signal` for in-process
//! extensions: in every handler, tool and command, as pi gives them.
//!
//! The view reads the session's live manager at each call (owned copies come back). Without a
//! bound session, or in the rare moment the session itself holds its manager, the getters answer
//! as an empty session (`None`, empty lists).

use std::collections::HashMap;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::runtime::{ExtensionContext, Runtime};
use crate::messages::CodingAgentMessage;
use crate::session::{ModelRef, SessionEntry, SessionHeader, SessionManager};

/// One node of [`ReadonlySessionManager::get_tree`] (pi's `SessionTreeNode`).
#[derive(Clone, Debug, PartialEq)]
pub struct SessionTreeView {
    /// The entry.
    pub entry: SessionEntry,
    /// Its children, oldest first.
    pub children: Vec<SessionTreeView>,
    /// Its label, if any.
    pub label: Option<String>,
    /// When the label was set.
    pub label_timestamp: Option<String>,
}

/// One selected entry of [`ReadonlySessionManager::build_session_projection`] and the messages
/// it contributes.
#[derive(Clone, Debug, PartialEq)]
pub struct ProjectedEntryView {
    /// The entry.
    pub source_entry: SessionEntry,
    /// Its messages (none for metadata entries).
    pub messages: Vec<CodingAgentMessage>,
}

/// pi's `buildSessionProjection()`: the compaction-aware, edit-aware view of the current branch.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionProjectionView {
    /// Selected entries in order.
    pub entries: Vec<ProjectedEntryView>,
    /// All messages, in order.
    pub messages: Vec<CodingAgentMessage>,
    /// The thinking level (`"off"` unless the branch changed it).
    pub thinking_level: String,
    /// The model the branch names.
    pub model: Option<ModelRef>,
}

/// pi's `ctx.sessionManager`: the session's manager, read-only.
#[derive(Clone)]
pub struct ReadonlySessionManager {
    runtime: Arc<Runtime>,
}

impl std::fmt::Debug for ReadonlySessionManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadonlySessionManager").finish_non_exhaustive()
    }
}

impl ReadonlySessionManager {
    /// Runs `f` on the live manager (`None` without one).
    pub fn read<T>(&self, f: impl FnOnce(&SessionManager) -> T) -> Option<T> {
        let actions = self.runtime.actions().ok()?;
        let mut f = Some(f);
        let mut out = None;
        actions.read_session(&mut |sm| {
            if let Some(f) = f.take() {
                out = Some(f(sm));
            }
        });
        out
    }

    /// `getCwd()`.
    pub fn get_cwd(&self) -> Option<String> {
        self.read(|sm| sm.cwd().to_owned())
    }

    /// `getSessionDir()`.
    pub fn get_session_dir(&self) -> Option<std::path::PathBuf> {
        self.read(|sm| sm.session_dir().to_path_buf())
    }

    /// `getSessionId()`.
    pub fn get_session_id(&self) -> Option<String> {
        self.read(|sm| sm.session_id().to_owned())
    }

    /// `getSessionFile()` (`None` in memory).
    pub fn get_session_file(&self) -> Option<std::path::PathBuf> {
        self.read(|sm| sm.session_file().map(std::path::Path::to_path_buf)).flatten()
    }

    /// `getSessionName()`: the latest `session_info` name.
    pub fn get_session_name(&self) -> Option<String> {
        self.read(|sm| sm.session_name()).flatten()
    }

    /// `getLeafId()` (`None` before the first entry or after `resetLeaf`).
    pub fn get_leaf_id(&self) -> Option<String> {
        self.read(|sm| sm.leaf_id().map(str::to_owned)).flatten()
    }

    /// `getLeafEntry()`.
    pub fn get_leaf_entry(&self) -> Option<SessionEntry> {
        self.read(|sm| sm.leaf_entry().cloned()).flatten()
    }

    /// `getEntry(id)`.
    pub fn get_entry(&self, id: &str) -> Option<SessionEntry> {
        self.read(|sm| sm.entry(id).cloned()).flatten()
    }

    /// `getLabel(id)`: the entry's current label.
    pub fn get_label(&self, id: &str) -> Option<String> {
        self.read(|sm| sm.label(id).map(str::to_owned)).flatten()
    }

    /// `getBranch(fromId?)`: the path from the root to `from_id` (default: the leaf).
    pub fn get_branch(&self, from_id: Option<&str>) -> Vec<SessionEntry> {
        self.read(|sm| sm.get_branch(from_id).into_iter().cloned().collect()).unwrap_or_default()
    }

    /// `getHeader()`.
    pub fn get_header(&self) -> Option<SessionHeader> {
        self.read(|sm| sm.header().clone())
    }

    /// `getEntries()`: every entry of the session (all branches), header excluded.
    pub fn get_entries(&self) -> Vec<SessionEntry> {
        self.read(|sm| sm.entries().to_vec()).unwrap_or_default()
    }

    /// `buildContextEntries()`: the current branch as the model's context selects it (the latest
    /// compaction, then the kept entries).
    pub fn build_context_entries(&self) -> Vec<SessionEntry> {
        self.read(|sm| sm.build_context_entries().into_iter().cloned().collect()).unwrap_or_default()
    }

    /// `buildSessionProjection()`.
    pub fn build_session_projection(&self) -> Option<SessionProjectionView> {
        self.read(|sm| {
            let projection = sm.build_session_projection();
            let entries: Vec<ProjectedEntryView> = projection
                .entries
                .iter()
                .map(|e| ProjectedEntryView {
                    source_entry: e.source.clone(),
                    messages: e.messages.iter().map(|m| m.as_ref().clone()).collect(),
                })
                .collect();
            SessionProjectionView {
                messages: entries.iter().flat_map(|e| e.messages.iter().cloned()).collect(),
                entries,
                thinking_level: projection.thinking_level.clone(),
                model: projection.model.clone(),
            }
        })
    }

    /// `getTree()`: roots are entries without a (known, other) parent; children oldest first.
    pub fn get_tree(&self) -> Vec<SessionTreeView> {
        self.read(owned_tree).unwrap_or_default()
    }
}

/// The tree of `sm`, built without recursion (a long chain is a deep tree).
fn owned_tree(sm: &SessionManager) -> Vec<SessionTreeView> {
    let entries = sm.entries();
    let pos: HashMap<&str, usize> = entries.iter().enumerate().map(|(i, e)| (e.id(), i)).collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); entries.len()];
    let mut roots = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        match e.parent_id().filter(|p| *p != e.id()).and_then(|p| pos.get(p)) {
            Some(&parent) => children[parent].push(i),
            None => roots.push(i),
        }
    }
    for list in &mut children {
        list.sort_by_key(|&i| crate::session::parse_iso(entries[i].timestamp()).unwrap_or(0));
    }
    // Post-order: a node is built once all its children are.
    let mut built: Vec<Option<SessionTreeView>> = vec![None; entries.len()];
    let mut stack: Vec<(usize, bool)> = roots.iter().rev().map(|&i| (i, false)).collect();
    while let Some((i, expanded)) = stack.pop() {
        if expanded {
            let kids = children[i].iter().filter_map(|&c| built[c].take()).collect();
            let label = sm.labels().get(entries[i].id());
            built[i] = Some(SessionTreeView {
                entry: entries[i].clone(),
                children: kids,
                label: label.map(|l| l.label.clone()),
                label_timestamp: label.map(|l| l.timestamp.clone()),
            });
        } else {
            stack.push((i, true));
            stack.extend(children[i].iter().rev().map(|&c| (c, false)));
        }
    }
    roots.iter().filter_map(|&i| built[i].take()).collect()
}

impl ExtensionContext {
    /// `ctx.sessionManager`: the session's manager, read-only (pi's `ReadonlySessionManager`).
    pub fn session_manager(&self) -> ReadonlySessionManager {
        ReadonlySessionManager { runtime: self.runtime.clone() }
    }

    /// `ctx.signal`: the current run's abort signal, `None` while the agent is not streaming.
    pub fn signal(&self) -> Option<CancellationToken> {
        self.runtime.actions().ok()?.signal().map(|(_, token)| token)
    }
}
