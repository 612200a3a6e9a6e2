//! `pi mcp login|logout <server>` (pi's `extensions/mcp/cli.ts`): sign in to an OAuth MCP server
//! through the browser, or delete its stored credentials, without starting a session.
//!
//! The authorization URL goes to stdout (and to the platform's URL opener); the sign-in completes
//! when the browser reaches the loopback callback. On a terminal the user may instead paste the
//! URL the browser was redirected to. Without a terminal (the non-interactive path, for scripts
//! and agents) only the callback completes it, within `--timeout` seconds (default 300).

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::cli::HELP_HINT;
use super::client::{ConnectionEvents, McpClient};
use super::config::{LoadedMcpConfig, McpServerEntry, Scope};
use super::oauth::{OAuthSettings, oauth_url};
use super::oauth_client::McpAuthProvider;
use super::oauth_signin::{PastePrompt, SignIn, SignInError, sign_in};
use super::oauth_store::McpOAuthCredentialStore;

/// pi's `DEFAULT_LOGIN_TIMEOUT_SECONDS`.
const DEFAULT_LOGIN_TIMEOUT_SECONDS: f64 = 300.0;

/// A parsed `pi mcp login|logout`.
pub struct LoginRequest<'a> {
    /// `login` or `logout`.
    pub command: &'a str,
    /// The positional arguments.
    pub positional: &'a [String],
    /// `-l` / `--local`.
    pub local: bool,
    /// `--timeout`.
    pub timeout: Option<&'a str>,
    /// The loaded `mcp.json` files.
    pub loaded: &'a LoadedMcpConfig,
    /// The note about an untrusted project's `mcp.json`.
    pub untrusted_note: Option<&'a str>,
    /// The working directory.
    pub cwd: &'a Path,
    /// The agent directory (`mcp-auth.json`).
    pub agent_dir: &'a Path,
}

/// The connection events of `entry` for a one-off connection: OAuth servers use the stored
/// credentials of `agent_dir`.
pub fn oauth_events(entry: &McpServerEntry, agent_dir: &Path) -> Result<ConnectionEvents, String> {
    let Some(url) = oauth_url(entry) else { return Ok(ConnectionEvents::default()) };
    let settings = OAuthSettings::of(entry)?;
    let store = McpOAuthCredentialStore::new(agent_dir).for_server(&entry.name, url);
    Ok(ConnectionEvents { oauth: Some(Arc::new(McpAuthProvider::new(url, store, settings))), ..Default::default() })
}

/// Levenshtein distance, to suggest a configured name for a mistyped one.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut current = vec![i];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            current.push((previous[j] + 1).min(current[j - 1] + 1).min(previous[j - 1] + cost));
        }
        previous = current;
    }
    previous[b.len()]
}

/// Opens `url` with the platform's opener, best effort (pi's `openBrowser`).
pub fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let _ = std::process::Command::new(opener)
        .arg(url)
        .current_dir("/")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

/// The redirect URL pasted on a terminal; `None` on EOF. Without a terminal, never resolves.
fn terminal_paste_prompt() -> Option<PastePrompt> {
    if !std::io::stdin().is_terminal() {
        return None;
    }
    Some(Box::new(|| {
        let (tx, rx) = tokio::sync::oneshot::channel();
        // A plain thread: a read still blocked when the callback wins must not hold up the exit.
        std::thread::spawn(move || {
            eprint!("If the browser cannot reach this machine, paste the URL it was redirected to: ");
            let mut line = String::new();
            let read = std::io::stdin().lock().read_line(&mut line);
            let _ = tx.send(match read {
                Ok(n) if n > 0 => Some(line),
                _ => None,
            });
        });
        Box::pin(async move { rx.await.ok().flatten() })
    }))
}

fn tools_count(client: &McpClient) -> usize {
    client.tools.len()
}

/// Runs `pi mcp login|logout`; returns the exit code.
pub async fn run_login_command(r: LoginRequest<'_>, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let command = r.command;
    let [name] = r.positional else {
        let _ = writeln!(err, "Usage: pi mcp {command} <server> [-l]\n{HELP_HINT}");
        return 1;
    };
    let Some(entry) = r.loaded.servers.iter().find(|s| &s.name == name) else {
        let names: Vec<&str> = r.loaded.servers.iter().map(|s| s.name.as_str()).collect();
        let suggestion = names
            .iter()
            .find(|c| edit_distance(c, name) <= 2)
            .map(|c| format!(" Did you mean \"{c}\"?"))
            .unwrap_or_default();
        let note = r.untrusted_note.map(|n| format!(" {n}")).unwrap_or_default();
        let configured = if names.is_empty() { "none".to_owned() } else { names.join(", ") };
        let _ = writeln!(err, "No MCP server named \"{name}\".{suggestion}{note} Configured: {configured}.");
        return 1;
    };
    if r.local && entry.scope != Scope::Project {
        let _ =
            writeln!(err, "MCP server \"{name}\" is defined in {}, not in the project; omit --local.", entry.source);
        return 1;
    }
    if entry.url().is_some()
        && let Some(provider) = entry.raw.get("auth").and_then(|a| a.get("provider")).and_then(Value::as_str)
    {
        let _ = writeln!(
            err,
            "MCP server \"{name}\" uses the credentials of provider \"{provider}\". Run \"pi auth {command} {provider}\"."
        );
        return 1;
    }
    let Some(url) = oauth_url(entry) else {
        let _ = writeln!(
            err,
            "MCP server \"{name}\" does not use OAuth. Only HTTP servers without an Authorization header do."
        );
        return 1;
    };
    let credentials = McpOAuthCredentialStore::new(r.agent_dir);
    if command == "logout" {
        return match credentials.remove(name, url) {
            Ok(true) => {
                let _ = writeln!(out, "Signed out of MCP server \"{name}\".");
                0
            }
            Ok(false) => {
                let _ = writeln!(out, "No stored credentials for MCP server \"{name}\".");
                0
            }
            Err(e) => {
                let _ = writeln!(err, "{e}");
                1
            }
        };
    }
    let timeout = match r.timeout {
        None => DEFAULT_LOGIN_TIMEOUT_SECONDS,
        Some(t) => match t.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => v,
            _ => {
                let _ = writeln!(err, "--timeout must be a positive number of seconds.");
                return 1;
            }
        },
    };
    login(entry, url, &r, Duration::from_secs_f64(timeout), out, err).await
}

async fn connect(entry: &McpServerEntry, r: &LoginRequest<'_>) -> Result<McpClient, super::client::ConnectError> {
    let events = oauth_events(entry, r.agent_dir)
        .map_err(|message| super::client::ConnectError { message, needs_auth: false })?;
    McpClient::connect(entry, r.cwd, events).await
}

async fn login(
    entry: &McpServerEntry,
    url: &str,
    r: &LoginRequest<'_>,
    timeout: Duration,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let name = &entry.name;
    // Connecting first answers whether a sign-in is needed and records the server's challenge.
    let events = match oauth_events(entry, r.agent_dir) {
        Ok(e) => e,
        Err(e) => {
            let _ = writeln!(err, "MCP server \"{name}\" failed to connect: {e}");
            return 1;
        }
    };
    let provider = events.oauth.clone();
    match McpClient::connect(entry, r.cwd, events).await {
        Ok(client) => {
            let _ = writeln!(out, "Already signed in to MCP server \"{name}\" ({} tools).", tools_count(&client));
            client.close().await;
            return 0;
        }
        Err(e) if !e.needs_auth => {
            let _ = writeln!(err, "MCP server \"{name}\" failed to connect: {}", e.message);
            return 1;
        }
        Err(_) => {}
    }
    let settings = match OAuthSettings::of(entry) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(err, "Sign-in to MCP server \"{name}\" failed: {e}");
            return 1;
        }
    };
    let store = McpOAuthCredentialStore::new(r.agent_dir).for_server(name, url);
    let challenge = provider.and_then(|p| p.challenge());
    // Printed to stdout at once: the user (or an agent reading the output) acts on it while we wait.
    let show = |u: &reqwest::Url| {
        println!("Sign in to MCP server \"{name}\" in your browser:\n{u}");
        let _ = std::io::stdout().flush();
        open_browser(u.as_str());
    };
    let result = sign_in(
        SignIn { server_url: url, store, settings: &settings, challenge },
        &show,
        terminal_paste_prompt(),
        timeout,
    )
    .await;
    match result {
        Err(SignInError::Cancelled) => {
            let _ = writeln!(
                err,
                "Sign-in to MCP server \"{name}\" was cancelled or not completed within {} seconds.",
                timeout.as_secs_f64().round()
            );
            return 1;
        }
        Err(SignInError::Failed(e)) => {
            let _ = writeln!(err, "Sign-in to MCP server \"{name}\" failed: {e}");
            return 1;
        }
        Ok(()) => {}
    }
    match connect(entry, r).await {
        Ok(client) => {
            let _ = writeln!(out, "Signed in to MCP server \"{name}\" ({} tools).", tools_count(&client));
            client.close().await;
            0
        }
        Err(e) => {
            let message = if e.needs_auth {
                e.message
            } else {
                format!("MCP server \"{name}\" failed to connect: {}", e.message)
            };
            let _ = writeln!(err, "Signed in, but {message}");
            1
        }
    }
}
