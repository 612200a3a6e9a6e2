//! `/mcp` in the interactive mode (pi's manager in `extensions/mcp/index.ts`): the servers sorted
//! by what needs the user first, each server's menu (sign in, tools, reconnect, sign out,
//! exposure, enable or disable, saved to the `mcp.json` that defines it), and the sign-in screen.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::command::{describe_state, sign_in_server};
use super::config::{Exposure, LoadedMcpConfig, Scope, update_server_config};
use super::manager::{ConnState, McpManager, ServerHandle};
use super::manager_view::{ManagerUi, Menu, MenuBuilder};
use super::oauth::oauth_url;
use super::oauth_signin::PastePrompt;
use crate::extensions::ExtensionContext;
use crate::ui::{CustomOptions, NotifyKind};

/// pi's `EXPOSURE_DESCRIPTIONS`.
const EXPOSURES: [(&str, &str); 3] = [
    ("codemode", "called from codemode scripts, which find them with searchTools()"),
    ("deferred", "not declared until tool_search loads them, then called directly; no codemode needed"),
    ("direct", "declared to the model like built-in tools"),
];

/// What the manager works on.
#[derive(Clone)]
struct Ctx {
    manager: Arc<McpManager>,
    config: LoadedMcpConfig,
    agent_dir: PathBuf,
    ui: ManagerUi,
    /// The last action's message per server (pi's `server.message`).
    messages: Arc<std::sync::Mutex<std::collections::HashMap<String, String>>>,
}

fn attention_rank(server: &ServerHandle) -> u8 {
    if !server.entry().enabled() {
        return 5;
    }
    match server.state() {
        ConnState::NeedsAuth => 0,
        ConnState::Failed(_) => 1,
        ConnState::Disconnected(_) => 2,
        ConnState::Connected => 4,
        _ => 3,
    }
}

fn servers_menu(c: &Ctx) -> Menu {
    let mut servers: Vec<Arc<ServerHandle>> = c.manager.servers().to_vec();
    servers.sort_by(|a, b| attention_rank(a).cmp(&attention_rank(b)).then_with(|| a.name().cmp(b.name())));
    let items = servers
        .iter()
        .map(|s| {
            let scope = if s.entry().override_path.is_some() {
                "global, project override".to_owned()
            } else {
                s.entry().scope.as_str().to_owned()
            };
            let description = format!("{} · {} · {scope}", describe_state(s), s.entry().exposure().as_str());
            (s.name().to_owned(), s.name().to_owned(), Some(description))
        })
        .collect();
    let notices: Vec<String> = c.config.errors.iter().map(|e| format!("config: {e}")).collect();
    Menu {
        title: "MCP servers".into(),
        error: (!notices.is_empty()).then(|| notices.join("\n")),
        items,
        empty: Some(format!(
            "No MCP servers configured. Add them to {} or .pi/mcp.json.",
            c.agent_dir.join("mcp.json").display()
        )),
        confirm_label: "manage".into(),
        cancel_label: "close".into(),
        ..Default::default()
    }
}

fn item(value: &str, label: &str, description: Option<&str>) -> (String, String, Option<String>) {
    (value.to_owned(), label.to_owned(), description.map(str::to_owned))
}

fn server_menu(c: &Ctx, name: &str) -> Menu {
    let Some(server) = c.manager.server(name) else {
        return Menu {
            title: name.to_owned(),
            empty: Some("This server is no longer configured.".into()),
            cancel_label: "back".into(),
            ..Default::default()
        };
    };
    let entry = &server.entry();
    let saved = match (entry.scope, &entry.override_path) {
        (Scope::Extension, _) => "for this session".to_owned(),
        (_, Some(_)) => "saved to the project mcp.json".to_owned(),
        (scope, None) => format!("saved to the {} mcp.json", scope.as_str()),
    };
    let in_project = entry.scope == Scope::Global && entry.override_path.is_none() && c.config.project_config.is_some();
    let project_saved = "saved to the project mcp.json";
    let mut items = Vec::new();
    if !entry.enabled() {
        items.push(item("enable", "Enable", Some(&saved)));
        if in_project {
            items.push(item("enable-project", "Enable in this project", Some(project_saved)));
        }
    } else {
        let state = server.state();
        if state == ConnState::NeedsAuth {
            items.push(item("signin", "Sign in", Some("opens the browser")));
        }
        if state == ConnState::Connected {
            items.push(item("tools", "Tools", Some(&format!("{} offered", server.tools().len()))));
        }
        if matches!(
            state,
            ConnState::Failed(_) | ConnState::Disconnected(_) | ConnState::Connected | ConnState::NeedsAuth
        ) {
            items.push(item("reconnect", "Reconnect", None));
        }
        if state == ConnState::Connected && oauth_url(entry).is_some() {
            items.push(item("signout", "Sign out", Some("deletes the stored credentials")));
        }
        items.push(item("exposure", "Exposure", Some(entry.exposure().as_str())));
        items.push(item("disable", "Disable", Some(&saved)));
        if in_project {
            items.push(item("disable-project", "Disable in this project", Some(project_saved)));
        }
    }
    let mut details = vec![entry.describe_transport(), format!("{}: {}", entry.scope.as_str(), entry.source)];
    if let Some(o) = &entry.override_path {
        details.push(format!("project override: {o}"));
    }
    let state_text = match server.state() {
        ConnState::Failed(_) if entry.enabled() => "failed".to_owned(),
        _ => describe_state(server),
    };
    details.push(format!("State: {state_text}"));
    let message = c.messages.lock().unwrap_or_else(|e| e.into_inner()).get(name).cloned();
    let connection_error = match server.state() {
        ConnState::Failed(e) | ConnState::Disconnected(e) if entry.enabled() => Some(e),
        _ => None,
    };
    let error: Vec<String> = [message, connection_error].into_iter().flatten().collect();
    Menu {
        title: format!("MCP server {name}"),
        details: Some(details.join("\n")),
        error: (!error.is_empty()).then(|| error.join("\n")),
        selected: items.first().map(|(v, _, _)| v.clone()),
        items,
        confirm_label: "select".into(),
        cancel_label: "back".into(),
        ..Default::default()
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

async fn show_tools(c: &Ctx, server: &Arc<ServerHandle>) {
    let server = server.clone();
    let build: MenuBuilder = Arc::new(move || {
        let exposure = server.entry().exposure();
        let overridden =
            server.entry().raw.get("toolExposure").and_then(Value::as_object).is_some_and(|m| !m.is_empty());
        let meaning = EXPOSURES.iter().find(|(e, _)| *e == exposure.as_str()).map(|(_, d)| *d).unwrap_or("unreachable");
        let mut details = format!("Exposure {}: {meaning}", exposure.as_str());
        if overridden {
            details.push_str("\nSome tools override it with toolExposure.");
        }
        let items = server
            .tools()
            .iter()
            .map(|t| {
                let name = t.get("name").and_then(Value::as_str).unwrap_or("").to_owned();
                let description = first_line(t.get("description").and_then(Value::as_str).unwrap_or("")).to_owned();
                let own = server.entry().tool_exposure(&name);
                let description =
                    if own == exposure { description } else { format!("[{}] {description}", own.as_str()) };
                (name.clone(), name, Some(description))
            })
            .collect();
        Menu {
            title: format!("Tools of {}", server.name()),
            details: Some(details),
            items,
            empty: Some("The server offers no tools.".into()),
            confirm_label: "back".into(),
            cancel_label: "back".into(),
            ..Default::default()
        }
    });
    c.ui.menu(build).await;
}

/// Saves `patch` to the file that defines the server, then to the server's entry (pi's
/// `saveConfig`; a registered server's change applies to this session only); `Some(error)` when
/// it could not be written.
fn save(server: &ServerHandle, key: &str, value: Value, project: Option<&PathBuf>) -> Option<String> {
    let mut entry = (*server.entry()).clone();
    if let Some(p) = project {
        entry.override_path = Some(p.display().to_string());
    }
    if entry.scope != Scope::Extension {
        let (path, is_override) = match &entry.override_path {
            Some(o) => (PathBuf::from(o), true),
            None => (PathBuf::from(&entry.source), false),
        };
        if let Err(e) = update_server_config(&path, &entry.name, key, value.clone(), is_override) {
            return Some(format!("Could not update {}: {e}", path.display()));
        }
    }
    entry.raw.insert(key.to_owned(), value);
    server.set_entry(entry);
    None
}

async fn choose_exposure(c: &Ctx, server: &Arc<ServerHandle>) -> Option<String> {
    let current = server.entry().exposure();
    let details = match server.entry().scope {
        Scope::Extension => format!("Applies to this session; the server is registered by {}.", server.entry().source),
        _ => format!(
            "Saved to {}.",
            server.entry().override_path.clone().unwrap_or_else(|| server.entry().source.clone())
        ),
    };
    let name = server.name().to_owned();
    let build: MenuBuilder = Arc::new(move || Menu {
        title: format!("Exposure of {name}"),
        details: Some(details.clone()),
        items: EXPOSURES
            .iter()
            .map(|(e, d)| {
                let mark = if *e == current.as_str() { "✓ " } else { "  " };
                ((*e).to_owned(), format!("{mark}{e}"), Some((*d).to_owned()))
            })
            .collect(),
        selected: Some(current.as_str().to_owned()),
        confirm_label: "save".into(),
        cancel_label: "back".into(),
        ..Default::default()
    });
    let choice = c.ui.menu(build).await?;
    if Exposure::parse(&choice) == Some(current) {
        return None;
    }
    let failed = save(server, "exposure", Value::String(choice), None);
    if failed.is_none() {
        c.manager.apply_exposure(server);
    }
    failed
}

/// pi's `signInWithUi`: the sign-in screen with the URL; Escape cancels.
async fn sign_in_with_ui(c: &Ctx, server: &Arc<ServerHandle>) -> Option<String> {
    let title = format!("Sign in to {}", server.name());
    let cancel = CancellationToken::new();
    c.ui.status(&title, "Contacting the authorization server…", Some(cancel.clone()));
    let url = Arc::new(std::sync::Mutex::new(String::new()));
    let shown = url.clone();
    let show = move |u: &reqwest::Url| {
        *shown.lock().unwrap_or_else(|e| e.into_inner()) = u.to_string();
        super::oauth_cli::open_browser(u.as_str());
    };
    let (ui, t, token, status_cancel) = (c.ui.clone(), title.clone(), cancel.clone(), cancel.clone());
    let paste: PastePrompt = Box::new(move || {
        Box::pin(async move {
            let link = url.lock().unwrap_or_else(|e| e.into_inner()).clone();
            let value = ui.redirect_url(&t, &link, token).await;
            ui.status(&t, "Connecting…", Some(status_cancel));
            // `None` (the screen was cancelled) cancels the sign-in.
            value
        })
    });
    let work = sign_in_server(&c.manager, server, &show, Some(paste));
    tokio::select! {
        r = work => r,
        _ = cancel.cancelled() => Some("Sign-in cancelled.".into()),
    }
}

async fn run_action(c: &Ctx, server: &Arc<ServerHandle>, action: &str) {
    let message = match action {
        "signin" => sign_in_with_ui(c, server).await,
        "reconnect" => {
            let (manager, server, ui) = (c.manager.clone(), server.clone(), c.ui.clone());
            tokio::spawn(async move {
                let _ = manager.reconnect(&server).await;
                ui.refresh();
            });
            None
        }
        "signout" => {
            let entry = server.entry();
            if let (Some(url), Some(store)) = (oauth_url(&entry), c.manager.credentials()) {
                let _ = store.remove(server.name(), url);
            }
            c.manager.sign_out(server).await;
            None
        }
        "tools" => {
            show_tools(c, server).await;
            None
        }
        "exposure" => choose_exposure(c, server).await,
        "enable" | "disable" | "enable-project" | "disable-project" => {
            let project = action.ends_with("-project").then(|| c.config.project_config.clone()).flatten();
            let failed = save(server, "enabled", Value::Bool(action.starts_with("enable")), project.as_ref());
            if failed.is_none() {
                // The connection opens or closes in the background; the menu follows its state.
                let (manager, server, ui) = (c.manager.clone(), server.clone(), c.ui.clone());
                tokio::spawn(async move {
                    manager.apply_enabled(&server).await;
                    ui.refresh();
                });
            }
            failed
        }
        _ => None,
    };
    let mut messages = c.messages.lock().unwrap_or_else(|e| e.into_inner());
    match message {
        Some(m) => messages.insert(server.name().to_owned(), m),
        None => messages.remove(server.name()),
    };
}

async fn manage(c: Ctx) {
    loop {
        let list = c.clone();
        let Some(name) = c.ui.menu(Arc::new(move || servers_menu(&list))).await else { return };
        loop {
            let (menu_ctx, menu_name) = (c.clone(), name.clone());
            let action = c.ui.menu(Arc::new(move || server_menu(&menu_ctx, &menu_name))).await;
            let server = c.manager.server(&name).cloned();
            let (Some(action), Some(server)) = (action, server) else { break };
            run_action(&c, &server, &action).await;
        }
    }
}

/// Shows the manager until the user closes it (pi's `showMcpManager(ctx, manage)`).
pub async fn show_manager(
    manager: Arc<McpManager>,
    config: &LoadedMcpConfig,
    agent_dir: &std::path::Path,
    ctx: &ExtensionContext,
) {
    let host = ctx.ui();
    let (ui, factory) = ManagerUi::new(host.clone());
    let c = Ctx { manager, config: config.clone(), agent_dir: agent_dir.to_path_buf(), ui, messages: Arc::default() };
    // Connections change state in the background: draw again when a server's line would change.
    let watched = (c.manager.clone(), c.ui.clone());
    let watcher = tokio::spawn(async move {
        let (manager, ui) = watched;
        let fingerprint = || {
            manager
                .servers()
                .iter()
                .map(|s| format!("{}\0{}\0{}", s.name(), describe_state(s), s.tools().len()))
                .collect::<Vec<_>>()
        };
        let mut last = fingerprint();
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            let now = fingerprint();
            if now != last {
                last = now;
                ui.refresh();
            }
        }
    });
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<Arc<crate::ui::CustomDone>>();
    let driver = tokio::spawn(async move {
        let Ok(done) = done_rx.await else { return };
        manage(c).await;
        done.done(None);
    });
    let custom: crate::ui::CustomFactory = Box::new(move |theme, done| {
        let _ = done_tx.send(done);
        Box::new(factory(theme))
    });
    let _ = host.custom(custom, CustomOptions::default()).await;
    watcher.abort();
    driver.abort();
    if let Err(e) = driver.await
        && e.is_panic()
    {
        host.notify("The MCP manager failed.", NotifyKind::Error);
    }
}
