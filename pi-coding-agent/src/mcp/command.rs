//! `/mcp`, the built-in mcp extension's command (pi's `registerCommand("mcp")`): the status of
//! every server, `/mcp login|logout|reconnect [server]`, and the usage line for anything else.
//! Sign-in shows the authorization URL as a notification and asks for a pasted redirect URL
//! while the loopback callback waits for the browser.

use std::sync::Arc;

use super::config::LoadedMcpConfig;
use super::extension::format_status;
use super::manager::{ConnState, McpManager, ServerHandle};
use super::oauth::{OAuthSettings, oauth_url};
use super::oauth_signin::{PastePrompt, SignIn, SignInError, sign_in};
use crate::extensions::ExtensionContext;
use crate::ui::{DialogOptions, NotifyKind};

/// pi's `MCP_USAGE`.
pub const MCP_USAGE: &str = "Usage: /mcp, /mcp login [server], /mcp logout [server], /mcp reconnect [server]";

/// pi's `describeState`.
pub fn describe_state(server: &ServerHandle) -> String {
    if !server.entry().enabled() {
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
    let eligible = |s: &ServerHandle| s.entry().enabled();
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

/// pi's `oauthPick`: enabled OAuth servers, preferring one that needs sign-in.
async fn pick_oauth(manager: &McpManager, name: Option<&str>, ctx: &ExtensionContext) -> Option<Arc<ServerHandle>> {
    let none = "No enabled MCP server uses OAuth. Only HTTP servers without an Authorization header do.";
    let eligible = |s: &ServerHandle| s.entry().enabled() && oauth_url(&s.entry()).is_some();
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
    let preferred: Vec<&Arc<ServerHandle>> = candidates.iter().filter(|s| s.state() == ConnState::NeedsAuth).collect();
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

/// Signs in to `server`, then reconnects it (pi's `signIn`); `Some(message)` on failure.
pub async fn sign_in_server(
    manager: &McpManager,
    server: &Arc<ServerHandle>,
    show: &(dyn Fn(&reqwest::Url) + Send + Sync),
    paste: Option<PastePrompt>,
) -> Option<String> {
    let name = server.name();
    let entry = server.entry();
    let (Some(url), Some(store)) = (oauth_url(&entry), manager.credentials()) else {
        return Some(format!("MCP server \"{name}\" does not use OAuth."));
    };
    let settings = match OAuthSettings::of(&entry) {
        Ok(s) => s,
        Err(e) => return Some(format!("Sign-in failed: {e}")),
    };
    let provider = manager.oauth_for(server).ok().flatten();
    let challenge = provider.as_ref().and_then(|p| p.challenge());
    let signin = SignIn { server_url: url, store: store.for_server(name, url), settings: &settings, challenge };
    match sign_in(signin, show, paste, std::time::Duration::from_secs(300)).await {
        Err(SignInError::Cancelled) => return Some("Sign-in cancelled.".into()),
        Err(SignInError::Failed(e)) => return Some(format!("Sign-in failed: {e}")),
        Ok(()) => {}
    }
    if let Some(p) = provider {
        p.clear_challenge();
    }
    manager.reconnect(server).await.err().map(|e| format!("Signed in, but {e}"))
}

/// `/mcp login [server]` (pi's `loginCommand`).
async fn login(manager: &McpManager, server: &Arc<ServerHandle>, ctx: &ExtensionContext) {
    let name = server.name().to_owned();
    if !ctx.has_ui() {
        ctx.ui().notify(&format!("Signing in to MCP server \"{name}\" requires interactive mode."), NotifyKind::Error);
        return;
    }
    let ui = ctx.ui();
    let shown = name.clone();
    let show = move |url: &reqwest::Url| {
        ui.notify(&format!("Sign in to MCP server \"{shown}\" in your browser:\n{url}"), NotifyKind::Info);
        super::oauth_cli::open_browser(url.as_str());
    };
    let dismiss = tokio_util::sync::CancellationToken::new();
    let (ui, title, cancel) = (
        ctx.ui(),
        format!(
            "Waiting for sign-in to \"{name}\". If the browser cannot reach this machine, paste the URL it was redirected to."
        ),
        dismiss.clone(),
    );
    let paste: PastePrompt = Box::new(move || {
        Box::pin(async move {
            let options = DialogOptions { cancel: Some(cancel), ..Default::default() };
            ui.input(&title, Some("http://127.0.0.1:.../callback?code=..."), options).await
        })
    });
    let failure = sign_in_server(manager, server, &show, Some(paste)).await;
    dismiss.cancel();
    match failure {
        Some(f) => {
            let kind = if f == "Sign-in cancelled." { NotifyKind::Info } else { NotifyKind::Error };
            ctx.ui().notify(&f, kind);
        }
        None => ctx
            .ui()
            .notify(&format!("Signed in to MCP server \"{name}\" ({} tools).", server.tools().len()), NotifyKind::Info),
    }
}

/// `/mcp logout [server]`: deletes the stored credentials and disconnects.
async fn logout(manager: &McpManager, server: &Arc<ServerHandle>, ctx: &ExtensionContext) {
    let name = server.name();
    let entry = server.entry();
    let removed = match (oauth_url(&entry), manager.credentials()) {
        (Some(url), Some(store)) => match store.remove(name, url) {
            Ok(r) => r,
            Err(e) => {
                ctx.ui().notify(&e.to_string(), NotifyKind::Error);
                return;
            }
        },
        _ => false,
    };
    manager.sign_out(server).await;
    let text = if removed {
        format!("Signed out of MCP server \"{name}\".")
    } else {
        format!("No stored credentials for MCP server \"{name}\".")
    };
    ctx.ui().notify(&text, NotifyKind::Info);
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
        if ctx.mode() == crate::extensions::ExtensionMode::Tui {
            super::manager_ui::show_manager(manager, config, agent_dir, ctx).await;
            return;
        }
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
        "login" => {
            if let Some(server) = pick_oauth(&manager, rest.first().copied(), ctx).await {
                login(&manager, &server, ctx).await;
            }
        }
        "logout" => {
            if let Some(server) = pick_oauth(&manager, rest.first().copied(), ctx).await {
                logout(&manager, &server, ctx).await;
            }
        }
        _ => ctx.ui().notify(MCP_USAGE, NotifyKind::Warning),
    }
}
