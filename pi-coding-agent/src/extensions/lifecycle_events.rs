//! Session-level events of pi 1.6.0 beside the agent loop's: `resources_discover`,
//! `mcp_servers_change`, `cache_warming_decision`, `ui_prompt_start` / `ui_prompt_end`, with their
//! emit methods and result semantics (pi's `emitResourcesDiscover`, `emitCacheWarmingDecision`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::errors::ExtensionError;
use super::events::{ExtensionEvent, NotifyEvent};
use super::registrations::RegisteredMcpServer;
use super::runner::ExtensionRunner;
pub use super::ui_prompt::UiPromptKind;

/// `resources_discover`: fired after `session_start` so extensions can add skill, prompt and
/// theme paths.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourcesDiscoverEvent {
    /// The session's working directory.
    pub cwd: String,
    /// `startup` or `reload`.
    pub reason: String,
}

/// A `resources_discover` handler's answer (pi's `ResourcesDiscoverResult`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesDiscoverResult {
    /// Skill files or folders to add.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill_paths: Option<Vec<String>>,
    /// Prompt template files or folders to add.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_paths: Option<Vec<String>>,
    /// Theme files or folders to add.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme_paths: Option<Vec<String>>,
}

impl ExtensionEvent for ResourcesDiscoverEvent {
    const NAME: &'static str = "resources_discover";
    type Output = ResourcesDiscoverResult;
}

/// One path a `resources_discover` handler returned, with the extension that returned it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiscoveredPath {
    /// The path as the handler gave it.
    pub path: String,
    /// The extension's path (its source label and base directory derive from it).
    pub extension_path: String,
}

/// Every handler's paths, in handler order (pi's `emitResourcesDiscover` result).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourcesDiscoverOutcome {
    /// Skill paths.
    pub skill_paths: Vec<DiscoveredPath>,
    /// Prompt template paths.
    pub prompt_paths: Vec<DiscoveredPath>,
    /// Theme paths.
    pub theme_paths: Vec<DiscoveredPath>,
}

impl ResourcesDiscoverOutcome {
    /// Whether no handler returned a path.
    pub fn is_empty(&self) -> bool {
        self.skill_paths.is_empty() && self.prompt_paths.is_empty() && self.theme_paths.is_empty()
    }
}

/// pi's `getExtensionSourceLabel`: `extension:<file name without .ts/.js>`, or
/// `extension:<inline:1>` without the angle brackets for a synthetic path.
pub fn extension_source_label(extension_path: &str) -> String {
    if extension_path.starts_with('<') {
        return format!("extension:{}", extension_path.replace(['<', '>'], ""));
    }
    let base = std::path::Path::new(extension_path).file_name().and_then(|n| n.to_str()).unwrap_or(extension_path);
    let name = base.strip_suffix(".ts").or_else(|| base.strip_suffix(".js")).unwrap_or(base);
    format!("extension:{name}")
}

/// What pi's cache warmer decided before a refresh (`"warm"` or `"stop"`).
pub use pi_ai::cache_warming::CacheWarmingAction;

/// `cache_warming_decision`: before each cache refresh, with pi's decision filled in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheWarmingDecisionEvent {
    /// Price of this refresh.
    pub warm_cost: f64,
    /// Extra price of the next real request if the cache entry is lost.
    pub miss_cost: f64,
    /// Estimated chance that a real request arrives before the entry expires.
    pub continuation_probability: f64,
    /// pi's own decision.
    pub action: CacheWarmingAction,
}

/// A `cache_warming_decision` handler's answer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheWarmingDecisionResult {
    /// Overrides the decision; the last handler that sets it wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<CacheWarmingAction>,
}

impl ExtensionEvent for CacheWarmingDecisionEvent {
    const NAME: &'static str = "cache_warming_decision";
    type Output = CacheWarmingDecisionResult;
}

fn other(kind: &str, payload: Value) -> NotifyEvent {
    let payload = match payload {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    NotifyEvent::Other { kind: kind.to_owned(), payload }
}

/// pi's JSON of a registered MCP server (`{name, config, extensionPath}`).
pub fn mcp_server_json(server: &RegisteredMcpServer) -> Value {
    json!({"name": server.name, "config": server.config, "extensionPath": server.extension_path})
}

impl NotifyEvent {
    /// `ui_prompt_start` / `ui_prompt_end` (`start` chooses) of a prompt of `kind` titled `title`
    /// (no `title` field when there is none or it is empty, as pi).
    pub fn ui_prompt(start: bool, kind: UiPromptKind, title: Option<&str>) -> NotifyEvent {
        let mut payload = json!({"reason": "ui_prompt", "kind": kind.as_str()});
        if let (Some(title), Some(obj)) = (title.filter(|t| !t.is_empty()), payload.as_object_mut()) {
            obj.insert("title".into(), Value::String(title.to_owned()));
        }
        other(if start { "ui_prompt_start" } else { "ui_prompt_end" }, payload)
    }

    /// `mcp_servers_change` with every registered server after the change.
    pub fn mcp_servers_change(servers: &[RegisteredMcpServer]) -> NotifyEvent {
        other("mcp_servers_change", json!({"servers": servers.iter().map(mcp_server_json).collect::<Vec<_>>()}))
    }

    /// `after_provider_response`: the HTTP status and headers, before the body is read.
    pub fn after_provider_response(status: u16, headers: &[(String, String)]) -> NotifyEvent {
        let headers: Map<String, Value> = headers.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
        other("after_provider_response", json!({"status": status, "headers": headers}))
    }

    /// `provider_stream_event`: one parsed provider stream event before pi normalizes it.
    pub fn provider_stream_event(data: Value, model: &pi_ai::Model) -> NotifyEvent {
        // pi spreads `data` first, then the fixed fields.
        other(
            "provider_stream_event",
            json!({"data": data, "provider": model.provider, "api": model.api, "model": model.id}),
        )
    }
}

impl ExtensionRunner {
    /// `resources_discover` (pi's `emitResourcesDiscover`): every handler's paths are collected
    /// with its extension's path; a failing handler is reported and skipped.
    pub async fn emit_resources_discover(&self, cwd: &str, reason: &str) -> ResourcesDiscoverOutcome {
        let ctx = self.create_context();
        let mut out = ResourcesDiscoverOutcome::default();
        for (path, handler) in self.snapshot::<ResourcesDiscoverEvent>(ResourcesDiscoverEvent::NAME) {
            let mut event = ResourcesDiscoverEvent { cwd: cwd.to_owned(), reason: reason.to_owned() };
            match self.call_handler(&handler, &mut event, &ctx).await {
                Err(error) => self.report(ExtensionError::new(path.as_ref(), ResourcesDiscoverEvent::NAME, error)),
                Ok(None) => {}
                Ok(Some(result)) => {
                    let tag = |paths: Option<Vec<String>>, into: &mut Vec<DiscoveredPath>| {
                        into.extend(
                            paths
                                .unwrap_or_default()
                                .into_iter()
                                .map(|p| DiscoveredPath { path: p, extension_path: path.to_string() }),
                        );
                    };
                    tag(result.skill_paths, &mut out.skill_paths);
                    tag(result.prompt_paths, &mut out.prompt_paths);
                    tag(result.theme_paths, &mut out.theme_paths);
                }
            }
        }
        out
    }

    /// `cache_warming_decision` (pi's `emitCacheWarmingDecision`): the event's own action unless a
    /// handler overrides it; the last override wins, a failing handler is reported.
    pub async fn emit_cache_warming_decision(&self, event: CacheWarmingDecisionEvent) -> CacheWarmingAction {
        let ctx = self.create_context();
        let mut action = event.action;
        for (path, handler) in self.snapshot::<CacheWarmingDecisionEvent>(CacheWarmingDecisionEvent::NAME) {
            let mut ev = event.clone();
            match self.call_handler(&handler, &mut ev, &ctx).await {
                Err(error) => self.report(ExtensionError::new(path.as_ref(), CacheWarmingDecisionEvent::NAME, error)),
                Ok(Some(CacheWarmingDecisionResult { action: Some(a) })) => action = a,
                Ok(_) => {}
            }
        }
        action
    }

    /// `mcp_servers_change` with the servers registered now (pi emits it whenever a server is
    /// registered or unregistered after the extensions were bound).
    pub async fn emit_mcp_servers_change(&self) {
        let servers = super::runtime::lock(&self.runtime.mcp_servers).clone();
        self.emit(NotifyEvent::mcp_servers_change(&servers)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_labels_follow_pi() {
        assert_eq!(extension_source_label("/x/y/audit.ts"), "extension:audit");
        assert_eq!(extension_source_label("/x/y/tool.js"), "extension:tool");
        assert_eq!(extension_source_label("<inline:2>"), "extension:inline:2");
        assert_eq!(extension_source_label("/x/pkg"), "extension:pkg");
    }

    #[test]
    fn ui_prompt_events_have_pi_shape() {
        let e = NotifyEvent::ui_prompt(true, UiPromptKind::Select, Some("Pick"));
        assert_eq!(
            serde_json::to_value(&e).ok(),
            Some(json!({"type": "ui_prompt_start", "reason": "ui_prompt", "kind": "select", "title": "Pick"}))
        );
        let e = NotifyEvent::ui_prompt(false, UiPromptKind::Custom, None);
        assert_eq!(
            serde_json::to_value(&e).ok(),
            Some(json!({"type": "ui_prompt_end", "reason": "ui_prompt", "kind": "custom"}))
        );
    }
}
