//! Tool declarations and diffs between tool states.

use std::collections::{HashMap, HashSet};

use crate::transcript::normalize::initial_system_message;
use crate::transcript::replay::{TranscriptEntry, current_tools_of};
use crate::types::{SystemMessage, Tool, ToolReference};

/// The model-facing declaration of a tool: `{name, description, parameters, constrainedSampling?}`,
/// with every other field dropped (`toToolDeclaration`).
///
/// ```
/// use pi_ai::Tool;
/// use pi_ai::transcript::to_tool_declaration;
/// let mut t = Tool::new("a", "d", serde_json::json!({"type": "object"}));
/// t.extra.insert("label", serde_json::json!("A"));
/// assert!(to_tool_declaration(&t).extra.is_empty());
/// ```
pub fn to_tool_declaration(tool: &Tool) -> Tool {
    Tool {
        name: tool.name.clone(),
        description: tool.description.clone(),
        parameters: tool.parameters.clone(),
        constrained_sampling: tool.constrained_sampling.clone(),
        ..Default::default()
    }
}

fn declaration_json(tool: &Tool) -> String {
    // A Tool always serializes; fall back to an impossible marker rather than panicking.
    serde_json::to_string(&to_tool_declaration(tool)).unwrap_or_else(|_| format!("\u{0}{}", tool.name))
}

/// Whether two tools declare the same interface: their declarations serialize to the same JSON,
/// key order included (`declarationsEqual`).
///
/// ```
/// use pi_ai::Tool;
/// use pi_ai::transcript::declarations_equal;
/// let a = Tool::new("a", "d", serde_json::json!({"x": 1, "y": 2}));
/// let b = Tool::new("a", "d", serde_json::json!({"y": 2, "x": 1}));
/// assert!(declarations_equal(&a, &a.clone()));
/// assert!(!declarations_equal(&a, &b));
/// ```
pub fn declarations_equal(left: &Tool, right: &Tool) -> bool {
    left.name == right.name && declaration_json(left) == declaration_json(right)
}

/// The difference between two complete tool states. A changed tool appears in both lists.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolStateChanges {
    /// Tools in the current state that are new or changed, in current order, as declarations.
    pub tools_added: Vec<Tool>,
    /// Tools of the previous state that are gone or changed.
    pub tools_removed: Vec<ToolReference>,
}

impl ToolStateChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.tools_added.is_empty() && self.tools_removed.is_empty()
    }
}

/// Compares two tool states (`getToolStateChanges`).
///
/// ```
/// use pi_ai::Tool;
/// use pi_ai::transcript::tool_state_changes;
/// let t = |n: &str, d: &str| Tool::new(n, d, serde_json::json!({}));
/// let c = tool_state_changes(&[t("a", "1"), t("b", "d"), t("c", "d")], &[t("a", "2"), t("c", "d"), t("d", "d")]);
/// let added: Vec<_> = c.tools_added.iter().map(|t| t.name.as_str()).collect();
/// let removed: Vec<_> = c.tools_removed.iter().map(|t| t.name.as_str()).collect();
/// assert_eq!((added, removed), (vec!["a", "d"], vec!["a", "b"]));
/// ```
pub fn tool_state_changes(previous: &[Tool], current: &[Tool]) -> ToolStateChanges {
    let prev: HashMap<&str, String> = previous.iter().map(|t| (t.name.as_str(), declaration_json(t))).collect();
    let cur: HashMap<&str, String> = current.iter().map(|t| (t.name.as_str(), declaration_json(t))).collect();
    let tools_added = current
        .iter()
        .filter(|t| prev.get(t.name.as_str()) != cur.get(t.name.as_str()))
        .map(to_tool_declaration)
        .collect();
    let tools_removed = previous
        .iter()
        .filter(|t| cur.get(t.name.as_str()) != prev.get(t.name.as_str()))
        .map(|t| ToolReference::new(t.name.clone()))
        .collect();
    ToolStateChanges { tools_added, tools_removed }
}

/// Index (among system messages) of the last one with a removal or a same-name redeclaration.
fn last_non_additive_change(systems: &[&SystemMessage]) -> Option<usize> {
    // A name declared before counts as a redeclaration even after its removal.
    let mut declared: HashSet<&str> = HashSet::new();
    let mut last = None;
    for (i, m) in systems.iter().enumerate() {
        if m.tools_removed.as_ref().is_some_and(|r| !r.is_empty()) {
            last = Some(i);
        }
        for t in m.tools_added.iter().flatten() {
            if !declared.insert(t.name.as_str()) {
                last = Some(i);
            }
        }
    }
    last
}

/// Whether the tool history has a removal, or redeclares a name declared before (even after it
/// was removed), which an addition-only transport cannot replay (`hasNonAdditiveToolChanges`).
///
/// ```
/// use pi_ai::{SystemMessage, Tool};
/// use pi_ai::transcript::has_non_additive_tool_changes;
/// let t = |n: &str| Tool::new(n, "d", serde_json::json!({}));
/// let add = |n: &str| SystemMessage::new("").with_tools_added(vec![t(n)]);
/// assert!(!has_non_additive_tool_changes(&[add("a"), add("b")]));
/// assert!(has_non_additive_tool_changes(&[add("a"), add("a")]));
/// ```
pub fn has_non_additive_tool_changes<M: TranscriptEntry>(messages: &[M]) -> bool {
    let systems: Vec<&SystemMessage> = messages.iter().filter_map(TranscriptEntry::as_system_message).collect();
    last_non_additive_change(&systems).is_some()
}

/// What a transport can express about tool changes in the middle of a conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ToolChangeSupport {
    /// Nothing: every tool goes in the request's top-level list.
    None,
    /// Additions in place; removals and redefinitions need a top-level checkpoint.
    Additions,
    /// Any change in place; the top-level list stays empty.
    Changes,
}

/// How tool declarations split between the top-level request field and in-place changes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResolvedTools {
    /// The top-level tool list.
    pub request_tools: Vec<Tool>,
    /// How many leading system messages (counting system messages only) the top-level list covers.
    pub folded_system_messages: usize,
}

/// Splits tool declarations for a transport (`resolveTranscriptTools`).
///
/// ```
/// use pi_ai::{Message, SystemMessage, Tool, UserMessage};
/// use pi_ai::transcript::{ToolChangeSupport, resolve_transcript_tools};
/// let t = |n: &str| Tool::new(n, "d", serde_json::json!({}));
/// let msgs = vec![
///     Message::System(SystemMessage::new("").with_tools_added(vec![t("a")]).into()),
///     Message::User(UserMessage::new("hi").into()),
///     Message::System(SystemMessage::new("").with_tools_added(vec![t("b")]).into()),
/// ];
/// let r = resolve_transcript_tools(&msgs, ToolChangeSupport::Additions);
/// assert_eq!((r.request_tools.len(), r.folded_system_messages), (1, 1));
/// ```
pub fn resolve_transcript_tools<M: TranscriptEntry>(messages: &[M], support: ToolChangeSupport) -> ResolvedTools {
    let systems: Vec<&SystemMessage> = messages.iter().filter_map(TranscriptEntry::as_system_message).collect();
    match support {
        ToolChangeSupport::None => ResolvedTools {
            request_tools: current_tools_of(systems.iter().copied()),
            folded_system_messages: systems.len(),
        },
        ToolChangeSupport::Changes => ResolvedTools::default(),
        ToolChangeSupport::Additions => {
            let leading = usize::from(initial_system_message(messages).is_some());
            let folded = leading.max(last_non_additive_change(&systems).map_or(0, |i| i + 1));
            ResolvedTools {
                request_tools: current_tools_of(systems[..folded].iter().copied()),
                folded_system_messages: folded,
            }
        }
    }
}
