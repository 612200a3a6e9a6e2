//! `pi auth …`: log in with an API key, log out, print a provider's credential for scripts, check
//! that a provider is ready — pi 1.6.0's command with its messages and exit codes. Account
//! sign-in (OAuth in a browser or with a device code) runs through [`super::auth_login`].

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

use crate::auth::{AuthStorage, Credential, CredentialType, ModelRegistry};

const LOGIN_USAGE: &str = "pi auth login <provider> [--api-key] [--no-browser]";

/// `pi auth` / `pi auth help`.
pub const AUTH_HELP: &str = "Usage:
  pi auth login <provider> [--api-key] [--no-browser]
  pi auth logout <provider>
  pi auth print-api-key [--provider <provider>] [--model <model>]
  pi auth print-bearer-token [--provider <provider>] [--model <model>] [--min-expiry <duration>]
  pi auth check [--provider <provider>] [--model <model>] [--json] [--credentials] [--no-refresh]

Log in to and out of model providers, print their credentials for external clients, or check that they are ready.
Credentials are stored in ~/.pi/agent/auth.json.

Commands:
  login <provider>        Sign in with an account in the browser, or save an API key, then exit
  logout <provider>       Remove the stored credentials; environment variables and models.json stay
  print-api-key           Print the resolved API key
  print-bearer-token      Print a resolved OAuth bearer token (refreshes if expired)
  check                   Print ready, not_ready, or invalid; exit with 0, 1, or 2

Options for print-api-key, print-bearer-token, and check (at least one is required):
  --provider <provider>   Resolve credentials for a provider
  --model <model>         Resolve credentials from a model

Options for login:
  --api-key               Save an API key instead of signing in with an account
  --no-browser            Do not open a browser; use another sign-in method, e.g. device code

Other options:
  --min-expiry <duration> Minimum remaining token lifetime for print-bearer-token, e.g. 30m or 1h
  --json                  Print the check result as JSON
  --credentials           Emit the credential from check, or include it in JSON output
  --no-refresh            Do not refresh expired OAuth credentials during check";

/// What a command printed and its exit code (so tests can run it in-process).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Exit code.
    pub code: i32,
}

impl Outcome {
    fn out(text: impl Into<String>, code: i32) -> Self {
        Outcome { stdout: text.into() + "\n", stderr: String::new(), code }
    }

    fn err(text: impl Into<String>, code: i32) -> Self {
        Outcome { stdout: String::new(), stderr: text.into() + "\n", code }
    }
}

/// Runs `pi auth …` (`argv` starts with `auth`) against `agent_dir`, printing and returning the
/// exit code.
pub fn run(argv: &[String], agent_dir: &Path) -> i32 {
    let interactive = std::io::stdin().is_terminal();
    let outcome = execute(argv, agent_dir, interactive, &mut || read_secret());
    print!("{}", outcome.stdout);
    eprint!("{}", outcome.stderr);
    outcome.code
}

/// [`run`] without printing; `secret` reads the API key for `login` (called only when
/// `interactive`).
pub fn execute(
    argv: &[String],
    agent_dir: &Path,
    interactive: bool,
    secret: &mut dyn FnMut() -> Option<String>,
) -> Outcome {
    let args: Vec<&str> = argv.iter().skip(1).map(String::as_str).collect();
    if args.is_empty() || args[0] == "help" || args.iter().any(|a| *a == "--help" || *a == "-h") {
        return Outcome::out(AUTH_HELP, 0);
    }
    let registry = ModelRegistry::load(agent_dir);
    match args[0] {
        "login" => login(&args[1..], &registry, agent_dir, interactive, secret),
        "logout" => logout(&args[1..], registry.auth_storage()),
        "check" | "print-api-key" | "print-bearer-token" => query(args[0], &args[1..], &registry),
        other => Outcome::err(
            format!(
                "Error: Unknown auth command \"{other}\". Use \"pi auth login\", \"pi auth logout\", \"pi auth print-api-key\", \"pi auth print-bearer-token\", or \"pi auth check\"."
            ),
            1,
        ),
    }
}

fn display_name(provider: &str) -> String {
    pi_ai::models::provider_info(provider).map_or_else(|| provider.to_owned(), |p| p.name.clone())
}

/// The providers whose API-key login asks which credential source to use.
const ASKS_SOURCE: [&str; 2] = ["amazon-bedrock", "google-vertex"];

fn login(
    args: &[&str],
    registry: &ModelRegistry,
    agent_dir: &Path,
    interactive: bool,
    secret: &mut dyn FnMut() -> Option<String>,
) -> Outcome {
    let (mut provider, mut api_key, mut browser) = (None, false, true);
    for arg in args {
        match *arg {
            "--api-key" => api_key = true,
            "--no-browser" => browser = false,
            a if a.starts_with('-') || provider.is_some() => return Outcome::err(format!("Usage: {LOGIN_USAGE}"), 1),
            a => provider = Some(a),
        }
    }
    let Some(provider) = provider else { return Outcome::err(format!("Usage: {LOGIN_USAGE}"), 1) };
    if api_key && !browser {
        return Outcome::err("--no-browser only applies to account sign-in; omit it with --api-key.", 1);
    }
    let Some(info) = pi_ai::models::provider_info(provider) else {
        let mut ids: Vec<&str> = pi_ai::models::builtin_providers().keys().map(String::as_str).collect();
        ids.sort_unstable();
        return Outcome::err(format!("Unknown provider \"{provider}\".\nProviders: {}", ids.join(", ")), 1);
    };
    if !interactive {
        return Outcome::err(format!("\"{LOGIN_USAGE}\" requires an interactive terminal"), 1);
    }
    if info.oauth && !api_key {
        let code = super::auth_login::run_process_oauth_login(provider, &info.name, browser, registry, agent_dir);
        return Outcome { code, ..Outcome::default() };
    }
    if !info.api_key {
        return Outcome::err(format!("{} has no API key login. Omit --api-key to sign in.", info.name), 1);
    }
    if ASKS_SOURCE.contains(&provider) {
        let kind = crate::auth::LoginKind::ApiKey;
        let code = super::auth_login::run_process_login(provider, &info.name, kind, browser, registry, agent_dir);
        return Outcome { code, ..Outcome::default() };
    }
    let Some(key) = secret().filter(|k| !k.trim().is_empty()) else { return Outcome::err("Login cancelled.", 1) };
    let auth = registry.auth_storage();
    if let Err(e) = auth.set(provider, Credential::api_key(key.trim())) {
        return Outcome::err(format!("Failed to log in to {}: {e}", info.name), 1);
    }
    let path = auth.path().map(|p| p.display().to_string()).unwrap_or_default();
    Outcome::out(format!("Saved API key for {}. Credentials saved to {path}", info.name), 0)
}

fn logout(args: &[&str], auth: &AuthStorage) -> Outcome {
    let [provider] = args else { return Outcome::err("Usage: pi auth logout <provider>", 1) };
    if provider.starts_with('-') {
        return Outcome::err("Usage: pi auth logout <provider>", 1);
    }
    let stored = match auth.list() {
        Ok(list) => list,
        Err(e) => return Outcome::err(format!("Could not read stored credentials: {e}"), 1),
    };
    let credential = stored.iter().find(|(id, _)| id == provider);
    let known = pi_ai::models::provider_info(provider).is_some();
    if !known && credential.is_none() {
        let mut ids: Vec<&str> = stored.iter().map(|(id, _)| id.as_str()).collect();
        ids.sort_unstable();
        let list = if ids.is_empty() { "none".to_owned() } else { ids.join(", ") };
        return Outcome::err(format!("Unknown provider \"{provider}\".\nStored credentials: {list}"), 1);
    }
    let name = display_name(provider);
    let Some((_, kind)) = credential else {
        return Outcome::out(
            format!("No stored credentials for {name}. Environment variables and models.json config are unchanged."),
            0,
        );
    };
    if let Err(e) = auth.remove(provider) {
        return Outcome::err(format!("Logout failed: {e}"), 1);
    }
    if *kind == CredentialType::OAuth {
        Outcome::out(format!("Logged out of {name}."), 0)
    } else {
        Outcome::out(
            format!("Removed stored API key for {name}. Environment variables and models.json config are unchanged."),
            0,
        )
    }
}

fn query(command: &str, args: &[&str], registry: &ModelRegistry) -> Outcome {
    let check = command == "check";
    let fail_code = if check { 2 } else { 1 };
    let (mut provider, mut model, mut json) = (None, None, false);
    let mut i = 0;
    while i < args.len() {
        match args[i] {
            "--provider" | "--model" if i + 1 < args.len() => {
                let value = args[i + 1].trim().to_owned();
                if args[i] == "--provider" {
                    provider = Some(value)
                } else {
                    model = Some(value)
                }
                i += 1;
            }
            "--json" | "--credentials" | "--no-refresh" if !check => {
                return Outcome::err(format!("Error: {} is only supported by auth check", args[i]), 1);
            }
            "--json" => json = true,
            "--credentials" | "--no-refresh" => {}
            other => {
                let name = match command {
                    "check" => "auth check",
                    "print-api-key" => "auth print-api-key",
                    _ => "auth print-bearer-token",
                };
                return Outcome::err(format!("Unknown option {other} for \"{name}\"."), 1);
            }
        }
        i += 1;
    }
    let provider = provider.filter(|p| !p.is_empty()).or_else(|| {
        let m = model.as_deref().filter(|m| !m.is_empty())?;
        match m.split_once('/') {
            Some((p, _)) if pi_ai::models::provider_info(p).is_some() => Some(p.to_owned()),
            _ => registry.get_all().into_iter().find(|x| x.id == m).map(|x| x.provider.clone()),
        }
    });
    let Some(provider) = provider else {
        let what = if check { "Auth checks" } else { "Credential printing" };
        return Outcome::err(format!("Error: {what} require --provider <provider> or --model <model>"), fail_code);
    };
    let known =
        pi_ai::models::provider_info(&provider).is_some() || !registry.models().get_models(Some(&provider)).is_empty();
    let stored_kind = registry.auth_storage().get(&provider).ok().flatten().map(|c| c.kind());
    let resolved = registry.resolve(&provider);
    if check {
        let status = match (&resolved, known) {
            (Err(_), _) => serde_json::json!({"status": "invalid", "provider": provider, "reason": "invalid_state"}),
            (_, false) => {
                serde_json::json!({"status": "not_ready", "provider": provider, "reason": "provider_not_found"})
            }
            (Ok(Some(_)), _) => {
                let auth_type = if stored_kind == Some(CredentialType::OAuth) { "oauth" } else { "api_key" };
                serde_json::json!({"status": "ready", "provider": provider, "authType": auth_type})
            }
            (Ok(None), _) => {
                serde_json::json!({"status": "not_ready", "provider": provider, "reason": "credentials_not_configured"})
            }
        };
        let code = match status["status"].as_str() {
            Some("ready") => 0,
            Some("not_ready") => 1,
            _ => 2,
        };
        let text = if json { status.to_string() } else { status["status"].as_str().unwrap_or_default().to_owned() };
        return Outcome::out(text, code);
    }
    let bearer = command == "print-bearer-token";
    match resolved {
        Ok(Some(auth)) if !bearer || stored_kind == Some(CredentialType::OAuth) => match auth.api_key {
            Some(key) => Outcome::out(key, 0),
            None => Outcome::err("Error: No usable API key is configured", 1),
        },
        Ok(_) if bearer => Outcome::err("Error: No usable OAuth bearer token is configured", 1),
        Ok(_) => Outcome::err("Error: No usable API key is configured", 1),
        Err(_) => Outcome::err("Error: Failed to resolve credential", 1),
    }
}

/// Reads an API key from the terminal without echoing it (`stty -echo` while it is typed).
fn read_secret() -> Option<String> {
    eprint!("Enter API key: ");
    let _ = std::io::stderr().flush();
    let stty = |arg: &str| {
        std::process::Command::new("stty")
            .arg(arg)
            .stdin(std::process::Stdio::inherit())
            .status()
            .is_ok_and(|s| s.success())
    };
    let quiet = stty("-echo");
    let mut line = String::new();
    let read = std::io::stdin().lock().read_line(&mut line);
    if quiet {
        stty("echo");
    }
    eprintln!();
    read.ok().filter(|n| *n > 0).map(|_| line.trim_end_matches(['\r', '\n']).to_owned())
}
