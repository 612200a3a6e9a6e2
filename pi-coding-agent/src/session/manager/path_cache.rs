//! The current branch, kept between calls: its path (entry positions, root first) and the
//! thinking level and model it sets.
//!
//! Building the path walks the parent links through the id index (a hash per entry) and reading
//! its settings copies the model of every assistant message; a resumed session with tens of
//! thousands of entries asked for both several times before its first request. The path is built
//! once, extended by appends to the leaf, and dropped when the leaf moves elsewhere or the entries
//! are replaced. A cached path is used only while it was built for the current leaf and entry
//! count ([`PathCache::get`]), so a change it was not told about costs a rebuild, never a wrong
//! path.

use std::borrow::Cow;
use std::sync::OnceLock;

use pi_agent_core::AgentMessage;
use pi_ai::transcript::current_system_message;
use pi_ai::{Shared, SystemMessage};

use crate::messages::CodingAgentMessage;
use crate::session::context::{
    EntryIndex, Leaf, ModelRef, ProjectedEntry, SessionContext, SessionProjection, build_context_entries,
    build_session_path, context_entries_of_path, parent_position, project_entries, session_context_settings,
};
use crate::session::entries::SessionEntry;

/// The path and settings of one leaf.
#[derive(Debug)]
struct CachedPath {
    /// The leaf's position.
    leaf: usize,
    /// The number of entries when it was built.
    len: usize,
    /// Positions root → leaf.
    path: Vec<usize>,
    /// The thinking level the path sets.
    thinking_level: String,
    /// The model the path uses.
    model: Option<ModelRef>,
}

impl CachedPath {
    fn build(entries: &[SessionEntry], index: &EntryIndex, leaf: usize) -> Self {
        let mut path = Vec::new();
        let mut seen = vec![false; entries.len()];
        let mut current = Some(leaf);
        while let Some(i) = current {
            // A parent cycle stops at its first repeat (see `LoadWarning::ParentCycle`).
            if std::mem::replace(&mut seen[i], true) {
                break;
            }
            path.push(i);
            current = parent_position(entries, index, i);
        }
        path.reverse();
        let mut cached = CachedPath { leaf, len: entries.len(), path, thinking_level: "off".to_owned(), model: None };
        let mut last_model = None;
        for &i in &cached.path {
            match &entries[i] {
                SessionEntry::ThinkingLevelChange(t) => cached.thinking_level.clone_from(&t.thinking_level),
                SessionEntry::ModelChange(_) => last_model = Some(i),
                SessionEntry::Message(m) if matches!(m.message, AgentMessage::Assistant(_)) => last_model = Some(i),
                _ => {}
            }
        }
        cached.model = last_model.and_then(|i| model_of(&entries[i]));
        cached
    }

    /// Takes `entry` (at `position`, a child of the leaf) as the new leaf.
    fn extend(&mut self, entry: &SessionEntry, position: usize) {
        self.path.push(position);
        self.leaf = position;
        self.len = position + 1;
        match entry {
            SessionEntry::ThinkingLevelChange(t) => self.thinking_level.clone_from(&t.thinking_level),
            other => {
                if let Some(model) = model_of(other) {
                    self.model = Some(model);
                }
            }
        }
    }
}

/// The model an entry sets (`model_change`, an assistant message).
fn model_of(entry: &SessionEntry) -> Option<ModelRef> {
    match entry {
        SessionEntry::ModelChange(m) => Some(ModelRef { provider: m.provider.clone(), model_id: m.model_id.clone() }),
        SessionEntry::Message(m) => match &m.message {
            AgentMessage::Assistant(a) => Some(ModelRef { provider: a.provider.clone(), model_id: a.model.clone() }),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `a` is `b`: the same allocation for the shared roles, equal for custom messages.
fn same_message(a: &CodingAgentMessage, b: &CodingAgentMessage) -> bool {
    match (a, b) {
        (AgentMessage::System(a), AgentMessage::System(b)) => Shared::ptr_eq(a, b),
        (AgentMessage::User(a), AgentMessage::User(b)) => Shared::ptr_eq(a, b),
        (AgentMessage::Assistant(a), AgentMessage::Assistant(b)) => Shared::ptr_eq(a, b),
        (AgentMessage::ToolResult(a), AgentMessage::ToolResult(b)) => Shared::ptr_eq(a, b),
        (AgentMessage::Custom(a), AgentMessage::Custom(b)) => a == b,
        _ => false,
    }
}

/// The cached branch of a session manager.
#[derive(Debug, Default)]
pub(super) struct PathCache(OnceLock<CachedPath>);

impl PathCache {
    /// The branch ending at `leaf` (a position in `entries`), built on first use.
    fn get(&self, entries: &[SessionEntry], index: &EntryIndex, leaf: usize) -> Option<&CachedPath> {
        if leaf >= entries.len() {
            return None;
        }
        let cached = self.0.get_or_init(|| CachedPath::build(entries, index, leaf));
        (cached.leaf == leaf && cached.len == entries.len()).then_some(cached)
    }

    /// Forgets the branch (the leaf moved, the entries were replaced).
    pub(super) fn clear(&mut self) {
        self.0.take();
    }

    /// `entry` was appended at `position` as a child of the entry at `parent`: the cached branch
    /// of that parent grows by it; any other is dropped.
    pub(super) fn appended(&mut self, entry: &SessionEntry, position: usize, parent: Option<usize>) {
        match self.0.get_mut() {
            Some(cached) if Some(cached.leaf) == parent && cached.len == position => cached.extend(entry, position),
            Some(_) => self.clear(),
            None => {}
        }
    }
}

impl super::SessionManager {
    /// The path from the root to `from_id` (default: the leaf), root first, every entry type.
    pub fn get_branch(&self, from_id: Option<&str>) -> Vec<&SessionEntry> {
        if from_id.is_none_or(|id| Some(id) == self.leaf_id.as_deref())
            && let Some(cached) = self.cached_path()
        {
            return cached.path.iter().map(|&i| &self.entries[i]).collect();
        }
        let mut path = Vec::new();
        let mut seen = vec![false; self.entries.len()];
        let mut current = from_id.or(self.leaf_id.as_deref()).and_then(|id| self.index.get(id).copied());
        while let Some(i) = current {
            // A parent cycle stops at its first repeat (see `LoadWarning::ParentCycle`).
            if std::mem::replace(&mut seen[i], true) {
                break;
            }
            path.push(&self.entries[i]);
            current = parent_position(&self.entries, &self.index, i);
        }
        path.reverse();
        path
    }

    /// The active entries with the latest compaction applied.
    pub fn build_context_entries(&self) -> Vec<&SessionEntry> {
        if let Some(cached) = self.cached_path() {
            return context_entries_of_path(cached.path.iter().map(|&i| &self.entries[i]).collect());
        }
        build_context_entries(&self.entries, Leaf::from(self.leaf_id.as_deref()), &self.index)
    }

    /// The projection of the current branch (borrows the entries).
    pub fn build_session_projection(&self) -> SessionProjection<'_> {
        let (thinking_level, model) = self.context_settings();
        SessionProjection { entries: self.projected_entries().collect(), thinking_level, model }
    }

    /// The current branch's projected entries ([`Self::build_session_projection`]'s), one at a
    /// time: a caller that looks at each once (a comparison, a search) holds none of them.
    pub fn projected_entries(&self) -> impl Iterator<Item = ProjectedEntry<'_>> {
        let selected = match self.cached_path() {
            Some(cached) => context_entries_of_path(cached.path.iter().map(|&i| &self.entries[i]).collect()),
            None => build_context_entries(&self.entries, Leaf::from(self.leaf_id.as_deref()), &self.index),
        };
        project_entries(selected)
    }

    /// The thinking level and model the current branch sets (the projection's).
    pub fn context_settings(&self) -> (String, Option<ModelRef>) {
        match self.cached_path() {
            Some(cached) => (cached.thinking_level.clone(), cached.model.clone()),
            None => session_context_settings(&build_session_path(
                &self.entries,
                Leaf::from(self.leaf_id.as_deref()),
                &self.index,
            )),
        }
    }

    /// The system message the current branch's context replays to (its system messages and
    /// `sections` patches; `None` without any), read in place.
    pub fn context_system_message(&self) -> Option<SystemMessage> {
        let systems: Vec<Cow<'_, CodingAgentMessage>> = self
            .projected_entries()
            .flat_map(|e| e.messages)
            .filter(|m| matches!(m.as_ref(), AgentMessage::System(_)))
            .collect();
        let systems: Vec<&CodingAgentMessage> = systems.iter().map(AsRef::as_ref).collect();
        current_system_message(&systems)
    }

    /// The cached branch of the leaf (`None` without a leaf in the index).
    fn cached_path(&self) -> Option<&CachedPath> {
        let leaf = self.index.get(self.leaf_id.as_deref()?).copied()?;
        self.path.get(&self.entries, &self.index, leaf)
    }

    /// What the model sees from the current branch.
    pub fn build_session_context(&self) -> SessionContext {
        self.build_session_projection().into_context()
    }

    /// Whether `messages` is exactly what `build_session_context` would return: the same shared
    /// messages in the same order (custom messages compared by value), checked without copying
    /// them out or reading the shared ones.
    pub fn context_is(&self, messages: &[CodingAgentMessage]) -> bool {
        let mut ours = self.projected_entries().flat_map(|e| e.messages);
        let same = messages.iter().all(|theirs| ours.next().is_some_and(|m| same_message(&m, theirs)));
        same && ours.next().is_none()
    }

    /// Whether the model sees any message from the current branch (`build_session_context`'s
    /// messages are not empty), without copying them out.
    pub fn has_context_messages(&self) -> bool {
        self.projected_entries().any(|e| !e.messages.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use pi_agent_core::AgentMessage;
    use pi_ai::{AssistantMessage, Shared, UserMessage};

    use super::super::SessionManager;
    use crate::session::context::{Leaf, build_session_context, build_session_path, index_entries};

    fn assistant(provider: &str, model: &str) -> pi_ai::Message {
        let message = AssistantMessage { provider: provider.into(), model: model.into(), ..Default::default() };
        pi_ai::Message::Assistant(message.into())
    }

    /// The manager's cached answers equal the ones built from scratch.
    fn check(s: &SessionManager) {
        let index = index_entries(s.entries());
        let leaf = Leaf::from(s.leaf_id());
        assert_eq!(s.build_session_context(), build_session_context(s.entries(), leaf, &index));
        assert_eq!(s.has_context_messages(), !s.build_session_context().messages.is_empty());
        let context = s.build_session_context();
        assert_eq!(s.context_settings(), (context.thinking_level, context.model));
        assert_eq!(s.context_system_message(), pi_ai::transcript::current_system_message(&context.messages));
        let mut messages = s.build_session_context().messages;
        assert!(s.context_is(&messages));
        if let Some(last) = messages.pop() {
            assert!(!s.context_is(&messages));
            // The same content in another allocation is not the same message.
            let copy = match last {
                AgentMessage::User(u) => AgentMessage::User(Shared::new((*u).clone())),
                AgentMessage::Assistant(a) => AgentMessage::Assistant(Shared::new((*a).clone())),
                other => other,
            };
            let shared = matches!(copy, AgentMessage::User(_) | AgentMessage::Assistant(_));
            messages.push(copy);
            assert_eq!(s.context_is(&messages), !shared);
            messages.push(UserMessage::new("extra").into());
            assert!(!s.context_is(&messages));
        }
        let fresh: Vec<&str> = build_session_path(s.entries(), leaf, &index).iter().map(|e| e.id()).collect();
        let cached: Vec<&str> = s.get_branch(None).iter().map(|e| e.id()).collect();
        assert_eq!(cached, fresh);
        let context: Vec<&str> = s.build_context_entries().iter().map(|e| e.id()).collect();
        let expected: Vec<&str> =
            crate::session::context::build_context_entries(s.entries(), leaf, &index).iter().map(|e| e.id()).collect();
        assert_eq!(context, expected);
    }

    #[test]
    fn the_cached_branch_follows_appends_branches_and_resets() {
        let mut s = SessionManager::in_memory("/tmp/project");
        let first = s.append_message(UserMessage::new("one").into()).unwrap_or_default();
        check(&s);
        s.append_message(assistant("p1", "m1").into()).unwrap_or_default();
        s.append_thinking_level_change("high").unwrap_or_default();
        check(&s);
        s.append_message(pi_ai::SystemMessage::new("be brief").into()).expect("a system message");
        check(&s);
        let fork = s.append_model_change("p2", "m2").unwrap_or_default();
        s.append_message(UserMessage::new("two").into()).unwrap_or_default();
        check(&s);
        assert_eq!(s.build_session_context().thinking_level, "high");
        s.branch(&first).unwrap_or_default();
        check(&s);
        assert_eq!(s.build_session_context().thinking_level, "off");
        s.append_message(assistant("p3", "m3").into()).unwrap_or_default();
        check(&s);
        s.branch(&fork).unwrap_or_default();
        check(&s);
        s.append_thinking_level_change("low").unwrap_or_default();
        check(&s);
        let context = s.build_session_context();
        assert_eq!((context.thinking_level.as_str(), context.model.map(|m| m.model_id)), ("low", Some("m2".into())));
        s.reset_leaf();
        check(&s);
        s.append_message(UserMessage::new("new root").into()).unwrap_or_default();
        check(&s);
        assert_eq!(s.get_branch(None).len(), 1);
        let _ = s.create_branched_session(&fork);
        check(&s);
    }

    #[test]
    fn a_branch_whose_only_message_is_edited_away_has_no_context_messages() {
        let mut s = SessionManager::in_memory("/tmp");
        assert!(!s.has_context_messages());
        s.append_thinking_level_change("high").unwrap_or_default();
        assert!(!s.has_context_messages());
        let only = s.append_message(UserMessage::new("one").into()).unwrap_or_default();
        assert!(s.has_context_messages());
        s.append_context_edit(&only, None).unwrap_or_default();
        check(&s);
        assert!(!s.has_context_messages());
    }
}
