//! [`Link`]: what the forwarding handlers, tools and commands of an out-of-process extension talk
//! through — one subprocess of its own ([`super::host`]) or the shared JavaScript host
//! ([`crate::extensions::node`]), which routes each message to its extension.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::host::SubprocessOptions;
use crate::extensions::runtime::ExtensionContext;

/// A connection to one extension in another process.
#[async_trait]
pub(crate) trait Link: Send + Sync + 'static {
    /// Sends a request and awaits its answer (the error text on failure).
    async fn call(&self, method: &str, label: &str, params: Value, timeout: Duration) -> Result<Value, String>;

    /// Sends a notification.
    async fn notify(&self, method: &str, params: Value);

    /// Whether the extension is gone for good (its handlers answer nothing).
    fn is_dead(&self) -> bool;

    /// The timeouts.
    fn options(&self) -> SubprocessOptions;

    /// Whether every event is a request (the JavaScript host awaits each handler, as pi does), not
    /// only those whose answer matters.
    fn awaits_every_event(&self) -> bool {
        false
    }

    /// Whether `message_update` is sent as a patch of the message the extension's process
    /// already holds ([`super::update_patch`]; the JavaScript host), not whole.
    fn patches_updates(&self) -> bool {
        false
    }

    /// Sends a `message_update` of a handler that [`patches_updates`](Self::patches_updates); the
    /// failures to report (after any, the next update is sent whole). By default a call awaited
    /// at once; the JavaScript host collects the answers later (`node::update_queue`).
    async fn send_update(&self, params: Value) -> Vec<String> {
        match self.call(super::protocol::METHOD_EVENT, "message_update", params, self.options().call_timeout).await {
            Ok(_) => Vec::new(),
            Err(e) => vec![e],
        }
    }

    /// Waits until every `message_update` sent was handled; the failures to report.
    async fn settle_updates(&self) -> Vec<String> {
        Vec::new()
    }

    /// Which start of the extension's process this is: it changes when a process that died is
    /// started again (and holds nothing of what the one before held).
    fn generation(&self) -> u64 {
        0
    }

    /// Renders a component synchronously (only the JavaScript host can).
    fn render_blocking(&self, _params: Value) -> Result<Value, String> {
        Err("This extension cannot render components".to_owned())
    }
}

/// What a handler's context looks like across the process boundary (`ctx` fields besides the
/// methods that call back). `with_session` adds the session's branch for `ctx.sessionManager`
/// (commands and `session_*` events: the branch costs O(entries) to send).
pub(crate) fn context_snapshot(ctx: &ExtensionContext, with_session: bool) -> Value {
    let mut snapshot = json!({
        "cwd": ctx.cwd(),
        "mode": ctx.mode(),
        "hasUI": ctx.has_ui(),
        "isIdle": ctx.is_idle(),
        "hasPendingMessages": ctx.has_pending_messages(),
        "systemPrompt": ctx.get_system_prompt(),
        "bound": ctx.runtime.actions().is_ok(),
        "flags": *crate::extensions::runtime::lock(&ctx.runtime.flag_values),
    });
    if let (Some(obj), Ok(actions)) = (snapshot.as_object_mut(), ctx.runtime.actions()) {
        let mcp_servers: Vec<Value> = crate::extensions::runtime::lock(&ctx.runtime.mcp_servers)
            .iter()
            .map(|s| json!({"name": s.name, "config": s.config, "extensionPath": s.extension_path}))
            .collect();
        let state = json!({
            "sessionName": actions.get_session_name(),
            "activeTools": actions.get_active_tools(),
            "allTools": actions.get_all_tools(),
            "thinkingLevel": actions.get_thinking_level(),
            "settings": actions.get_settings(),
            "commands": actions.get_commands(),
            "mcpServers": mcp_servers,
        });
        obj.insert("projectTrusted".into(), Value::Bool(actions.is_project_trusted()));
        obj.insert("scopedModels".into(), Value::Array(actions.scoped_models()));
        obj.insert("systemPromptOptions".into(), actions.get_system_prompt_options());
        // The estimate walks the branch: only for commands and `session_*` events.
        if with_session && let Some(usage) = actions.get_context_usage() {
            obj.insert("contextUsage".into(), usage);
        }
        if let Some(model) = actions.model() {
            obj.insert("model".into(), model);
        }
        obj.insert("state".into(), state);
        if let Some(session) = super::session_calls::session_summary(&*actions) {
            obj.insert("session".into(), session);
        }
        // `null` while the agent is idle (a kept context must not read an older run's).
        let signal = actions.signal().map(|(run, token)| {
            let described = json!({"run": run, "aborted": token.is_cancelled()});
            super::session_calls::watch_signal(&ctx.runtime, run, token);
            described
        });
        obj.insert("signal".into(), signal.unwrap_or(Value::Null));
        obj.insert("modelsVersion".into(), json!(models_version(ctx)));
        if with_session && let Some(Value::Object(session)) = actions.session_snapshot() {
            obj.extend(session);
        }
        if with_session && ctx.has_ui() {
            obj.extend(ui_snapshot(ctx.runtime.ui().as_ref()));
        }
    }
    snapshot
}

/// The fields of a context snapshot that change while a message streams (the host keeps the
/// others from the snapshot before): for every `message_update` after a message's first.
pub(crate) fn light_context_snapshot(ctx: &ExtensionContext) -> Value {
    let mut snapshot = json!({"isIdle": ctx.is_idle(), "hasPendingMessages": ctx.has_pending_messages()});
    if let (Some(obj), Ok(actions)) = (snapshot.as_object_mut(), ctx.runtime.actions()) {
        let signal = actions.signal().map(|(run, token)| {
            let described = json!({"run": run, "aborted": token.is_cancelled()});
            super::session_calls::watch_signal(&ctx.runtime, run, token);
            described
        });
        obj.insert("signal".into(), signal.unwrap_or(Value::Null));
    }
    snapshot
}

/// A fingerprint of the extension-registered providers: an out-of-process extension fetches the
/// registry again (`ctx.modelRegistry`) when it changes.
fn models_version(ctx: &ExtensionContext) -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for p in crate::extensions::runtime::lock(&ctx.runtime.providers).iter() {
        p.name.hash(&mut hasher);
        p.config.to_string().hash(&mut hasher);
    }
    format!("{:x}", hasher.finish())
}

/// What `ctx.modelRegistry` answers across the process boundary: every model the session knows
/// and the `provider/id` keys of those whose provider has configured auth.
pub(crate) fn model_registry_snapshot(actions: &dyn crate::extensions::ExtensionActions) -> Value {
    let available: Vec<String> = actions.models(true).iter().map(|m| format!("{}/{}", m.provider, m.id)).collect();
    json!({"models": actions.models(false), "available": available})
}

/// What `ctx.ui.getAllThemes()`, `ctx.ui.getTheme(name)` and the `keybindings` of `custom()`
/// factories answer in the host, sent with the snapshots of commands and `session_*` events:
/// `themes` (`{name, path}`), `themeColors` (each theme's name and, by token, the escape
/// sequences before and after a text)
/// and `keybindings` (action id to keys).
pub(crate) fn ui_snapshot(ui: &dyn crate::ui::UiHost) -> serde_json::Map<String, Value> {
    let themes = ui.get_all_themes();
    let mut colors = serde_json::Map::new();
    for info in &themes {
        let Some(theme) = ui.get_theme(&info.name) else { continue };
        let (mut fg, mut bg) = (serde_json::Map::new(), serde_json::Map::new());
        // What the theme puts before and after a text, per token (faint tokens included).
        let split = |styled: String| styled.split_once('\u{0}').map(|(open, close)| json!([open, close]));
        for (token, _, _) in pi_tui::theme::THEME_TOKENS {
            if theme.fg_ansi(token).is_ok()
                && let Some(pair) = split(theme.fg(token, "\u{0}"))
            {
                fg.insert((*token).to_owned(), pair);
            }
            if theme.bg_ansi(token).is_ok()
                && let Some(pair) = split(theme.bg(token, "\u{0}"))
            {
                bg.insert((*token).to_owned(), pair);
            }
        }
        colors.insert(info.name.clone(), json!({"name": theme.name(), "fg": fg, "bg": bg}));
    }
    let mut out = serde_json::Map::new();
    out.insert(
        "themes".into(),
        json!(themes.iter().map(|t| json!({"name": t.name, "path": t.path})).collect::<Vec<_>>()),
    );
    out.insert("themeColors".into(), Value::Object(colors));
    let keys: serde_json::Map<String, Value> = ui.keybindings().into_iter().map(|(id, k)| (id, json!(k))).collect();
    out.insert("keybindings".into(), Value::Object(keys));
    out
}
