//! The session as a tree: nodes with resolved labels, children oldest first.

use std::collections::HashMap;

use indexmap::IndexMap;

use crate::session::entries::SessionEntry;
use crate::session::time::parse_iso;

/// A label and the time it was set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedLabel {
    /// The label.
    pub label: String,
    /// ISO time of the latest label change.
    pub timestamp: String,
}

/// Latest-wins labels by target id, in the order they were (last) set. An empty or missing label
/// clears.
pub type Labels = IndexMap<String, ResolvedLabel>;

/// Applies one `label` entry to `labels`.
pub fn apply_label(labels: &mut Labels, entry: &SessionEntry) {
    if let SessionEntry::Label(l) = entry {
        match l.label.as_deref().filter(|s| !s.is_empty()) {
            Some(label) => {
                labels.shift_remove(&l.target_id);
                labels.insert(
                    l.target_id.clone(),
                    ResolvedLabel { label: label.to_owned(), timestamp: l.timestamp.clone() },
                );
            }
            None => {
                labels.shift_remove(&l.target_id);
            }
        }
    }
}

/// A node of [`build_tree`].
#[derive(Clone, Debug)]
pub struct SessionTreeNode<'a> {
    /// The entry.
    pub entry: &'a SessionEntry,
    /// Its children, oldest first.
    pub children: Vec<SessionTreeNode<'a>>,
    /// Its resolved label.
    pub label: Option<&'a ResolvedLabel>,
}

/// The tree of `entries`: roots are entries without a parent, self-parented ones and orphans;
/// children are sorted by timestamp (stable).
pub fn build_tree<'a>(entries: &'a [SessionEntry], labels: &'a Labels) -> Vec<SessionTreeNode<'a>> {
    let mut pos: HashMap<&str, usize> = HashMap::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        pos.insert(e.id(), i);
    }
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); entries.len()];
    let mut roots = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        match e.parent_id() {
            Some(p) if p != e.id() => match pos.get(p) {
                Some(&pi) if pi != i => children[pi].push(i),
                _ => roots.push(i),
            },
            _ => roots.push(i),
        }
    }
    let time = |i: usize| parse_iso(entries[i].timestamp()).unwrap_or(i64::MIN);
    for c in &mut children {
        c.sort_by_key(|&i| time(i));
    }
    // Build bottom-up without recursion: deep sessions would overflow the stack.
    let mut order = Vec::with_capacity(entries.len());
    let mut stack: Vec<usize> = roots.clone();
    while let Some(i) = stack.pop() {
        order.push(i);
        stack.extend(children[i].iter().copied());
    }
    let mut built: Vec<Option<SessionTreeNode<'a>>> = vec![None; entries.len()];
    for &i in order.iter().rev() {
        let kids = children[i].iter().filter_map(|&c| built[c].take()).collect();
        built[i] = Some(SessionTreeNode { entry: &entries[i], children: kids, label: labels.get(entries[i].id()) });
    }
    roots.iter().filter_map(|&r| built[r].take()).collect()
}
