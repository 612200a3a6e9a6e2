//! `pi auth login <provider>` for an account (pi 1.6.0's `runAuthLogin`): the provider's sign-in
//! driven from the terminal. The browser sign-in is chosen first (`--no-browser` picks the other
//! method and opens nothing); the sign-in URL or device code is printed, the browser opened when
//! allowed, pasted codes read from the terminal; the credential is written to auth.json.

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::auth::AuthStorage;
use crate::auth::login::{AuthEvent, AuthInteraction, AuthOption, AuthPrompt, LoginError, LoginKind, LoginProvider};

/// The terminal a login talks through (pi's `LoginTerminal`).
#[async_trait]
pub trait LoginTerminal: Send + Sync {
    /// Prints a line on standard output.
    fn write(&self, line: &str);
    /// Prints a line on standard error.
    fn error(&self, line: &str);
    /// Asks a question; the typed line.
    async fn question(&self, message: &str) -> Result<String, LoginError>;
    /// Asks for a secret without echoing it.
    async fn secret(&self, message: &str) -> Result<String, LoginError>;
    /// Opens a web URL in the browser (best effort).
    fn open_url(&self, url: &str);
}

/// The process's terminal: stdout, stderr, lines from stdin, `xdg-open`.
#[derive(Debug, Default)]
pub struct ProcessTerminal;

fn read_line() -> Result<String, LoginError> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => Err(LoginError::Cancelled),
        Ok(_) => Ok(line.trim_end_matches(['\r', '\n']).to_owned()),
    }
}

#[async_trait]
impl LoginTerminal for ProcessTerminal {
    fn write(&self, line: &str) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }

    fn error(&self, line: &str) {
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    }

    async fn question(&self, message: &str) -> Result<String, LoginError> {
        {
            let mut out = std::io::stdout().lock();
            let _ = write!(out, "{message}");
            let _ = out.flush();
        }
        tokio::task::spawn_blocking(read_line).await.map_err(|_| LoginError::Cancelled)?
    }

    async fn secret(&self, message: &str) -> Result<String, LoginError> {
        let message = message.to_owned();
        tokio::task::spawn_blocking(move || {
            let stty = |arg: &str| {
                std::process::Command::new("stty")
                    .arg(arg)
                    .stdin(std::process::Stdio::inherit())
                    .status()
                    .is_ok_and(|s| s.success())
            };
            // Echo goes off before the prompt shows: a key typed (or pasted) as soon as the
            // prompt appears is never echoed.
            let quiet = stty("-echo");
            let mut out = std::io::stdout().lock();
            let _ = write!(out, "{message}");
            let _ = out.flush();
            drop(out);
            let line = read_line();
            if quiet {
                stty("echo");
            }
            println!();
            line
        })
        .await
        .map_err(|_| LoginError::Cancelled)?
    }

    fn open_url(&self, url: &str) {
        let _ = std::process::Command::new("xdg-open")
            .arg(url)
            .current_dir("/")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
}

/// pi's `webUrl`: `value` when it is an http(s) URL.
fn web_url(value: &str) -> Option<String> {
    crate::auth::oauth::support::SimpleUrl::parse(value).map(|_| value.trim().to_owned())
}

/// pi's `displayUrl`: the URL, or the value with control characters replaced.
fn display_url(value: &str) -> String {
    web_url(value).unwrap_or_else(|| value.chars().map(|c| if c.is_control() { '\u{fffd}' } else { c }).collect())
}

struct TerminalInteraction<'a> {
    terminal: &'a dyn LoginTerminal,
    provider_id: String,
    browser: bool,
    /// API-key setups ask every selection (pi's `methodChoice === "ask"`).
    ask: bool,
    skipped: Mutex<Vec<String>>,
    cancel: CancellationToken,
}

impl TerminalInteraction<'_> {
    async fn select_in_terminal(&self, message: &str, options: &[AuthOption]) -> Result<String, LoginError> {
        self.terminal.write(message);
        for (i, option) in options.iter().enumerate() {
            let description = option.description.as_ref().map(|d| format!(" - {d}")).unwrap_or_default();
            self.terminal.write(&format!("  {}. {}{description}", i + 1, option.label));
        }
        loop {
            let answer = self.terminal.question(&format!("Select 1-{}: ", options.len())).await?;
            let answer = answer.trim();
            let picked = answer.parse::<usize>().ok().filter(|_| answer.bytes().all(|b| b.is_ascii_digit()));
            if let Some(option) = picked.and_then(|n| n.checked_sub(1)).and_then(|i| options.get(i)) {
                return Ok(option.id.clone());
            }
            self.terminal.write(&format!("Enter a number from 1 to {}.", options.len()));
        }
    }

    async fn select_method(&self, message: &str, options: &[AuthOption]) -> Result<String, LoginError> {
        let Some((first, others)) = options.split_first().filter(|_| !self.ask) else {
            return self.select_in_terminal(message, options).await;
        };
        if self.browser {
            *self.skipped.lock().unwrap_or_else(|e| e.into_inner()) = others.iter().map(|o| o.label.clone()).collect();
            return Ok(first.id.clone());
        }
        match others {
            [] => Ok(first.id.clone()),
            [only] => {
                self.terminal.write(&format!("{message} {}", only.label));
                Ok(only.id.clone())
            }
            more => self.select_in_terminal(message, more).await,
        }
    }
}

#[async_trait]
impl AuthInteraction for TerminalInteraction<'_> {
    async fn prompt(&self, prompt: AuthPrompt) -> Result<String, LoginError> {
        let ask = |message: &str, placeholder: &Option<String>| {
            let placeholder = placeholder.as_ref().map(|p| format!(" ({p})")).unwrap_or_default();
            format!("{message}{placeholder}: ")
        };
        let answer = match &prompt {
            AuthPrompt::Select { message, options } => self.select_method(message, options).await,
            AuthPrompt::Secret { message, placeholder } => self.terminal.secret(&ask(message, placeholder)).await,
            AuthPrompt::Text { message, placeholder } | AuthPrompt::ManualCode { message, placeholder } => {
                self.terminal.question(&ask(message, placeholder)).await
            }
        };
        if answer.is_err() {
            self.cancel.cancel();
        }
        answer
    }

    fn notify(&self, event: AuthEvent) {
        let t = self.terminal;
        match event {
            AuthEvent::AuthUrl { url, instructions } => {
                t.write(&format!("Open this URL to sign in:\n  {}", display_url(&url)));
                if let Some(instructions) = instructions {
                    t.write(&instructions);
                }
                if let Some(target) = web_url(&url).filter(|_| self.browser) {
                    t.open_url(&target);
                }
                let rerun = format!("\"pi auth login {} --no-browser\"", self.provider_id);
                let skipped = self.skipped.lock().unwrap_or_else(|e| e.into_inner()).clone();
                match skipped.as_slice() {
                    [] => {}
                    [only] => t.write(&format!("To use \"{only}\" instead, run {rerun}")),
                    many => {
                        let labels: Vec<String> = many.iter().map(|l| format!("\"{l}\"")).collect();
                        t.write(&format!("Other sign-in methods: {}. Run {rerun} to choose one.", labels.join(", ")));
                    }
                }
            }
            AuthEvent::DeviceCode { user_code, verification_uri, open_browser_on_confirm, .. } => {
                t.write(&format!("Open {} and enter code: {user_code}", display_url(&verification_uri)));
                if let Some(target) = web_url(&verification_uri).filter(|_| self.browser && open_browser_on_confirm) {
                    t.open_url(&target);
                }
                t.write("Waiting for authentication...");
            }
            AuthEvent::Info { message, links } => {
                t.write(&message);
                for link in links {
                    let label = link.label.map(|l| format!("{l}: ")).unwrap_or_default();
                    t.write(&format!("  {label}{}", display_url(&link.url)));
                }
            }
            AuthEvent::Progress { message } => t.write(&message),
        }
    }

    fn cancel(&self) -> CancellationToken {
        self.cancel.clone()
    }
}

/// Runs `login` (an account sign-in of `provider_id`, named `provider_name`) through `terminal`
/// and stores the credential in `auth`; pi's lines and exit code (0 or 1).
pub async fn run_oauth_login(
    login: Arc<dyn LoginProvider>,
    provider_name: &str,
    browser: bool,
    auth: &AuthStorage,
    terminal: &dyn LoginTerminal,
) -> i32 {
    run_login(login, provider_name, browser, auth, terminal).await
}

/// Runs any `login` (an account sign-in, or an API-key setup that asks its questions: Amazon
/// Bedrock's, Google Vertex AI's) through `terminal` and stores the credential in `auth`; pi's
/// lines ("Logged in to …" or "Saved API key for …") and exit code (0 or 1).
pub async fn run_login(
    login: Arc<dyn LoginProvider>,
    provider_name: &str,
    browser: bool,
    auth: &AuthStorage,
    terminal: &dyn LoginTerminal,
) -> i32 {
    let api_key = login.kind() == LoginKind::ApiKey;
    let interaction = TerminalInteraction {
        terminal,
        provider_id: login.provider_id().to_owned(),
        browser,
        ask: api_key,
        skipped: Mutex::new(Vec::new()),
        cancel: CancellationToken::new(),
    };
    let result = login.login(&interaction).await;
    let stored = result.and_then(|credential| auth.set(login.provider_id(), credential).map_err(LoginError::from));
    match stored {
        Ok(()) => {
            let path = auth.path().map(|p| p.display().to_string()).unwrap_or_default();
            let action = if api_key { "Saved API key for" } else { "Logged in to" };
            terminal.write(&format!("{action} {provider_name}. Credentials saved to {path}"));
            0
        }
        Err(LoginError::Cancelled) => {
            terminal.error("Login cancelled.");
            1
        }
        Err(e) => {
            terminal.error(&format!("Failed to log in to {provider_name}: {e}"));
            1
        }
    }
}

/// [`run_oauth_login`] for the `pi` process: the built-in sign-in of `provider_id` on the process
/// terminal, with the device id from the global settings of `agent_dir`.
pub fn run_process_oauth_login(
    provider_id: &str,
    provider_name: &str,
    browser: bool,
    registry: &crate::auth::ModelRegistry,
    agent_dir: &std::path::Path,
) -> i32 {
    run_process_login(provider_id, provider_name, LoginKind::OAuth, browser, registry, agent_dir)
}

/// [`run_login`] for the `pi` process: the built-in login of `provider_id` of this `kind` on the
/// process terminal.
pub fn run_process_login(
    provider_id: &str,
    provider_name: &str,
    kind: LoginKind,
    browser: bool,
    registry: &crate::auth::ModelRegistry,
    agent_dir: &std::path::Path,
) -> i32 {
    let terminal = ProcessTerminal;
    let cwd = std::env::current_dir().unwrap_or_else(|_| agent_dir.to_path_buf());
    let settings = crate::settings::SettingsManager::create(&cwd, agent_dir);
    let options =
        crate::auth::oauth::LoginOptions { device_id: settings.get_or_create_device_id().ok(), agent_name: None };
    let logins = crate::auth::builtin_login_registry(&crate::auth::oauth::Endpoints::from_env(), &options);
    let Some(login) = logins.get_kind(provider_id, kind) else {
        terminal.error(&format!("Failed to log in to {provider_name}: no such login"));
        return 1;
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            terminal.error(&format!("Failed to log in to {provider_name}: {e}"));
            return 1;
        }
    };
    let code = runtime.block_on(run_login(login, provider_name, browser, registry.auth_storage(), &terminal));
    // A pasted-code prompt may still wait on stdin; it must not keep the process.
    runtime.shutdown_background();
    code
}
