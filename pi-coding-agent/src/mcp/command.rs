//! `/mcp`, the built-in mcp extension's command (pi's `registerCommand("mcp")`): the status of
//! every server, `/mcp reconnect [server]`, and the usage line for anything else. Sign-in
//! (`/mcp login|logout`) is refused as `pi mcp login|logout` is (no OAuth in this port), and the
//! interactive mode shows the status text where pi opens its manager screen.

use std::sync::Arc;

use super::config::LoadedMcpConfig;
use super::extension::format_status;
use super::manager::{ConnState, McpManager, ServerHandle};
use crate::extensions::ExtensionContext;
use crate::ui::{DialogOptions, NotifyKind};

/// pi's `MCP_USAGE`.
pub const MCP_USAGE: &str = "Usage: /mcp, /mcp login [server], /mcp logout [server], /mcp reconnect [server]";

/// pi's `describeState`.
pub fn describe_state(server: &ServerHandle) -> String {
    if !server.entry.enabled() {
        return "disabled".into();
    }
    match server.state() {
        ConnState::Failed(e) => format!("failed: {}", e.lines().next().unwrap_or("unknown error")),
        ConnState::Connected => {
            let n = server.tools().len();
            let resources = if server.has_resources() { " · resources" } else { "" };
            format!("connected · {n} tool{}{resources}", if n == 1 { "" } else { "s" })
        }
        ConnState::Connecting => "connecting…".into(),
        ConnState::Disconnected(_) => "disconnected".into(),
        ConnState::Closed => "closed".into(),
        ConnState::Starting => "starting".into(),
        ConnState::NeedsAuth => "needs sign-in".into(),
    }
}

/// pi's `pickServer` for `reconnect`: the named server, else the only enabled one, else the only
/// failed or disconnected one, else a choice.
async fn pick_reconnect(manager: &McpManager, name: Option<&str>, ctx: &ExtensionContext) -> Option<Arc<ServerHandle>> {
    let none = "No enabled MCP server to reconnect.";
    let eligible = |s: &ServerHandle| s.entry.enabled();
    if let Some(name) = name {
        let Some(server) = manager.server(name) else {
            ctx.ui().notify(&format!("No MCP server named \"{name}\"."), NotifyKind::Error);
            return None;
        };
        if !eligible(server) {
            ctx.ui().notify(none, NotifyKind::Error);
            return None;
        }
        return Some(server.clone());
    }
    let candidates: Vec<Arc<ServerHandle>> = manager.servers().iter().filter(|s| eligible(s)).cloned().collect();
    let preferred: Vec<&Arc<ServerHandle>> =
        candidates.iter().filter(|s| matches!(s.state(), ConnState::Failed(_) | ConnState::Disconnected(_))).collect();
    match (candidates.len(), preferred.len()) {
        (0, _) => {
            ctx.ui().notify(none, NotifyKind::Info);
            None
        }
        (1, _) => candidates.first().cloned(),
        (_, 1) => preferred.first().map(|s| (*s).clone()),
        _ => {
            let names: Vec<String> = candidates.iter().map(|s| s.name().to_owned()).collect();
            let choice = ctx.ui().select("MCP server", &names, DialogOptions::default()).await?;
            candidates.into_iter().find(|s| s.name() == choice)
        }
    }
}

/// Runs `/mcp <args>`.
pub async fn run_mcp_command(
    args: &str,
    manager: Arc<McpManager>,
    config: &LoadedMcpConfig,
    agent_dir: &std::path::Path,
    ctx: &ExtensionContext,
) {
    let words: Vec<&str> = args.split_whitespace().collect();
    let Some((action, rest)) = words.split_first() else {
        manager.wait_for_all().await;
        ctx.ui().notify(&format_status(&manager, config, agent_dir), NotifyKind::Info);
        return;
    };
    if rest.len() > 1 {
        ctx.ui().notify(MCP_USAGE, NotifyKind::Warning);
        return;
    }
    manager.wait_for_all().await;
    match *action {
        "reconnect" => {
            let Some(server) = pick_reconnect(&manager, rest.first().copied(), ctx).await else { return };
            match manager.reconnect(&server).await {
                Err(e) => ctx.ui().notify(&e, NotifyKind::Error),
                Ok(_) => ctx.ui().notify(
                    &format!("Reconnected to MCP server \"{}\" ({}).", server.name(), describe_state(&server)),
                    NotifyKind::Info,
                ),
            }
        }
        "login" | "logout" => ctx.ui().notify(
            &format!("/mcp {action} is not available in this port: MCP OAuth sign-in is not implemented"),
            NotifyKind::Error,
        ),
        _ => ctx.ui().notify(MCP_USAGE, NotifyKind::Warning),
    }
}
