//! `pi auth …`: log in with an API key, log out, print a provider's credential for scripts, check
//! that a provider is ready — pi 1.6.0's command with its messages and exit codes. Account
//! sign-in (OAuth in a browser or with a device code) runs through [`super::auth_login`].

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

use crate::auth::{AuthError, AuthStorage, Credential, CredentialType, ModelRegistry};

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

/// The default `--min-expiry` of `print-bearer-token` (pi: 30 minutes).
const DEFAULT_MIN_EXPIRY_MS: u64 = 30 * 60_000;

/// `--min-expiry`'s duration (`30m`, `1h`, `90s`, `500ms`) in milliseconds.
fn parse_duration(value: &str) -> Option<u64> {
    let lower = value.to_ascii_lowercase();
    let digits = lower.bytes().take_while(u8::is_ascii_digit).count();
    let amount: u64 = lower[..digits].parse().ok()?;
    let unit = match &lower[digits..] {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    amount.checked_mul(unit)
}

/// The options of `check`, `print-api-key` and `print-bearer-token`.
#[derive(Default)]
struct QueryArgs {
    provider: Option<String>,
    model: Option<String>,
    json: bool,
    credentials: bool,
    no_refresh: bool,
    min_expiry_ms: Option<u64>,
}

fn parse_query(command: &str, args: &[&str]) -> Result<QueryArgs, Outcome> {
    let check = command == "check";
    let mut q = QueryArgs::default();
    let mut i = 0;
    while i < args.len() {
        match args[i] {
            "--min-expiry" if command != "print-bearer-token" => {
                return Err(Outcome::err("Error: --min-expiry is only supported by print-bearer-token", 1));
            }
            "--min-expiry" => {
                let Some(ms) = args.get(i + 1).and_then(|v| parse_duration(v)) else {
                    return Err(Outcome::err("Error: --min-expiry must use a duration such as 30m or 1h", 1));
                };
                q.min_expiry_ms = Some(ms);
                i += 1;
            }
            "--provider" | "--model" if i + 1 < args.len() => {
                let value = args[i + 1].trim().to_owned();
                if args[i] == "--provider" {
                    q.provider = Some(value)
                } else {
                    q.model = Some(value)
                }
                i += 1;
            }
            "--json" | "--credentials" | "--no-refresh" if !check => {
                return Err(Outcome::err(format!("Error: {} is only supported by auth check", args[i]), 1));
            }
            "--json" => q.json = true,
            "--credentials" => q.credentials = true,
            "--no-refresh" => q.no_refresh = true,
            other => {
                let name = match command {
                    "check" => "auth check",
                    "print-api-key" => "auth print-api-key",
                    _ => "auth print-bearer-token",
                };
                return Err(Outcome::err(format!("Unknown option {other} for \"{name}\"."), 1));
            }
        }
        i += 1;
    }
    Ok(q)
}

/// Runs `refresh` (an OAuth refresh under the auth.json lock) to its end.
fn block_on<T>(future: impl std::future::Future<Output = T>) -> Result<T, String> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    Ok(runtime.block_on(future))
}

/// The credential a request would send (pi's `getAuthCredential`): the API key, else the bearer
/// token of an `Authorization` header.
fn request_credential(registry: &ModelRegistry, provider: &str) -> Result<Option<String>, AuthError> {
    let Some(auth) = registry.resolve(provider)? else { return Ok(None) };
    if auth.api_key.is_some() {
        return Ok(auth.api_key);
    }
    let header = auth.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("authorization"));
    let bearer = header.and_then(|(_, v)| v.as_deref()).and_then(|v| {
        let (scheme, token) = v.split_once(char::is_whitespace)?;
        scheme.eq_ignore_ascii_case("bearer").then(|| token.trim().to_owned())
    });
    Ok(bearer.filter(|t| !t.is_empty()))
}

fn query(command: &str, args: &[&str], registry: &ModelRegistry) -> Outcome {
    let check = command == "check";
    let fail_code = if check { 2 } else { 1 };
    let q = match parse_query(command, args) {
        Ok(q) => q,
        Err(outcome) => return outcome,
    };
    let provider = q.provider.clone().filter(|p| !p.is_empty()).or_else(|| {
        let m = q.model.as_deref().filter(|m| !m.is_empty())?;
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
    if check {
        return check_provider(&provider, known, &q, registry);
    }
    print_credential(command == "print-bearer-token", &provider, known, &q, registry)
}

/// `pi auth check`: the provider's status, an expiring OAuth token refreshed first unless
/// `--no-refresh`; with `--credentials` the credential too.
fn check_provider(provider: &str, known: bool, q: &QueryArgs, registry: &ModelRegistry) -> Outcome {
    let stored_kind = registry.auth_storage().get(provider).ok().flatten().map(|c| c.kind());
    let oauth = stored_kind == Some(CredentialType::OAuth);
    let invalid = serde_json::json!({"status": "invalid", "provider": provider, "reason": "invalid_state"});
    let mut status = match (registry.resolve(provider), known) {
        (Err(_), _) => invalid.clone(),
        (_, false) => serde_json::json!({"status": "not_ready", "provider": provider, "reason": "provider_not_found"}),
        (Ok(Some(_)), _) => {
            let auth_type = if oauth { "oauth" } else { "api_key" };
            serde_json::json!({"status": "ready", "provider": provider, "authType": auth_type})
        }
        (Ok(None), _) => {
            serde_json::json!({"status": "not_ready", "provider": provider, "reason": "credentials_not_configured"})
        }
    };
    if status["status"] == "ready" && oauth && !q.no_refresh {
        let refreshed = block_on(registry.refresh_oauth(provider));
        if !matches!(refreshed, Ok(Ok(()))) {
            status = invalid.clone();
        }
    }
    let mut credential = None;
    if q.credentials && status["status"] == "ready" {
        let stored = registry.auth_storage().get(provider).ok().flatten();
        credential = match stored.filter(|c| q.no_refresh && c.kind() == CredentialType::OAuth) {
            Some(c) => c.access().map(str::to_owned),
            None => request_credential(registry, provider).ok().flatten(),
        };
        if credential.is_none() {
            status =
                serde_json::json!({"status": "not_ready", "provider": provider, "reason": "credential_not_available"});
        }
    }
    let code = match status["status"].as_str() {
        Some("ready") => 0,
        Some("not_ready") => 1,
        _ => 2,
    };
    let text = match (&credential, q.json) {
        (Some(c), true) => {
            if let Some(object) = status.as_object_mut() {
                object.insert("credentials".into(), serde_json::Value::String(c.clone()));
            }
            status.to_string()
        }
        (None, true) => status.to_string(),
        (Some(c), false) => c.clone(),
        (None, false) => status["status"].as_str().unwrap_or_default().to_owned(),
    };
    Outcome::out(text, code)
}

/// `pi auth print-api-key` / `print-bearer-token`: the credential a request would send; a bearer
/// token expiring within `--min-expiry` (30 minutes by default) is refreshed first, under the
/// auth.json lock.
fn print_credential(bearer: bool, provider: &str, known: bool, q: &QueryArgs, registry: &ModelRegistry) -> Outcome {
    if q.provider.is_some() && !known {
        return Outcome::err(
            format!("Error: Unknown provider \"{provider}\". Use --list-models to see available providers."),
            1,
        );
    }
    let oauth = registry.auth_storage().get(provider).ok().flatten().is_some_and(|c| c.kind() == CredentialType::OAuth);
    let by_provider = q.provider.is_some();
    if !bearer && oauth {
        return match by_provider {
            true => Outcome::err(format!("Error: Provider \"{provider}\" is configured with OAuth, not an API key"), 1),
            false => Outcome::err("Error: No usable API key is configured", 1),
        };
    }
    if bearer && !oauth {
        return match by_provider {
            true => {
                Outcome::err(format!("Error: Provider \"{provider}\" is not configured with an OAuth bearer token"), 1)
            }
            false => Outcome::err("Error: No usable OAuth bearer token is configured", 1),
        };
    }
    if bearer {
        let min = q.min_expiry_ms.unwrap_or(DEFAULT_MIN_EXPIRY_MS);
        if !matches!(block_on(registry.refresh_oauth_within(provider, min)), Ok(Ok(()))) {
            return Outcome::err("Error: Failed to resolve credential", 1);
        }
    }
    match request_credential(registry, provider) {
        Ok(Some(value)) => Outcome::out(value, 0),
        Ok(None) if bearer => Outcome::err("Error: No usable OAuth bearer token is configured", 1),
        Ok(None) => Outcome::err("Error: No usable API key is configured", 1),
        Err(_) => Outcome::err("Error: Failed to resolve credential", 1),
    }
}

/// Reads an API key from the terminal without echoing it (`stty -echo` while it is typed).
fn read_secret() -> Option<String> {
    let stty = |arg: &str| {
        std::process::Command::new("stty")
            .arg(arg)
            .stdin(std::process::Stdio::inherit())
            .status()
            .is_ok_and(|s| s.success())
    };
    // Echo goes off before the prompt shows, so nothing typed after it is echoed.
    let quiet = stty("-echo");
    eprint!("Enter API key: ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    let read = std::io::stdin().lock().read_line(&mut line);
    if quiet {
        stty("echo");
    }
    eprintln!();
    read.ok().filter(|n| *n > 0).map(|_| line.trim_end_matches(['\r', '\n']).to_owned())
}
