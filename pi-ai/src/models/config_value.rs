//! Configuration values that may name environment variables or shell commands (pi's
//! `resolve-config-value.js`), used for `apiKey` and header values in models.json and for keys
//! stored in auth.json.
//!
//! - `!command` runs `command` with `sh -c` (stdin and stderr closed, 10 s timeout) and uses its
//!   trimmed standard output; the result is cached for the life of the process.
//! - Otherwise `$NAME` and `${NAME}` are replaced by environment variables, `$$` is a literal `$`
//!   and `$!` a literal `!`; a value naming an unset variable resolves to nothing.

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

#[derive(Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    Env(String),
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_name(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn push_literal(parts: &mut Vec<Part>, text: &str) {
    if text.is_empty() {
        return;
    }
    if let Some(Part::Literal(last)) = parts.last_mut() {
        last.push_str(text);
    } else {
        parts.push(Part::Literal(text.to_owned()));
    }
}

fn parse_template(config: &str) -> Vec<Part> {
    let bytes = config.as_bytes();
    let mut parts = Vec::new();
    let mut index = 0;
    while index < config.len() {
        let Some(offset) = config[index..].find('$') else {
            push_literal(&mut parts, &config[index..]);
            break;
        };
        let dollar = index + offset;
        push_literal(&mut parts, &config[index..dollar]);
        match bytes.get(dollar + 1) {
            Some(b'$') | Some(b'!') => {
                push_literal(&mut parts, &config[dollar + 1..dollar + 2]);
                index = dollar + 2;
            }
            Some(b'{') => match config[dollar + 2..].find('}') {
                None => {
                    push_literal(&mut parts, "$");
                    index = dollar + 1;
                }
                Some(len) => {
                    let name = &config[dollar + 2..dollar + 2 + len];
                    let valid = name.bytes().next().is_some_and(is_name_start) && name.bytes().all(is_name);
                    if valid {
                        parts.push(Part::Env(name.to_owned()));
                    } else {
                        push_literal(&mut parts, &config[dollar..dollar + 3 + len]);
                    }
                    index = dollar + 3 + len;
                }
            },
            Some(&b) if is_name_start(b) => {
                let len = bytes[dollar + 1..].iter().take_while(|&&b| is_name(b)).count();
                parts.push(Part::Env(config[dollar + 1..dollar + 1 + len].to_owned()));
                index = dollar + 1 + len;
            }
            _ => {
                push_literal(&mut parts, "$");
                index = dollar + 1;
            }
        }
    }
    parts
}

/// Whether `config` is a `!command` value.
pub fn is_command_config_value(config: &str) -> bool {
    config.starts_with('!')
}

/// The environment variables a non-command value refers to, in order, without repeats.
///
/// ```
/// assert_eq!(pi_ai::models::config_value_env_names("${A}-$B-$A"), vec!["A", "B"]);
/// assert!(pi_ai::models::config_value_env_names("!echo $A").is_empty());
/// ```
pub fn config_value_env_names(config: &str) -> Vec<String> {
    if is_command_config_value(config) {
        return Vec::new();
    }
    let mut names: Vec<String> = Vec::new();
    for part in parse_template(config) {
        if let Part::Env(name) = part
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    names
}

/// [`resolve_config_value_with`] over the process environment.
pub fn resolve_config_value(config: &str) -> Option<String> {
    resolve_config_value_with(config, &|_| None)
}

/// Resolves a configuration value; `env` is consulted before the process environment (pi's
/// credential `env` object). Empty variables count as unset. `None` when a variable is unset or
/// a command fails, times out or prints nothing.
///
/// ```
/// use pi_ai::models::resolve_config_value_with;
/// let env = |name: &str| (name == "PI_DOC_KEY").then(|| "k1".to_owned());
/// assert_eq!(resolve_config_value_with("Bearer ${PI_DOC_KEY}", &env).as_deref(), Some("Bearer k1"));
/// assert_eq!(resolve_config_value_with("$$5 $!", &env).as_deref(), Some("$5 !"));
/// assert_eq!(resolve_config_value_with("literal", &env).as_deref(), Some("literal"));
/// assert_eq!(resolve_config_value_with("$PI_DOC_SURELY_UNSET", &env), None);
/// ```
pub fn resolve_config_value_with(config: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if is_command_config_value(config) {
        return run_command_cached(config);
    }
    let mut out = String::new();
    for part in parse_template(config) {
        match part {
            Part::Literal(text) => out.push_str(&text),
            Part::Env(name) => {
                let value = env(&name)
                    .filter(|v| !v.is_empty())
                    .or_else(|| std::env::var(&name).ok().filter(|v| !v.is_empty()))?;
                out.push_str(&value);
            }
        }
    }
    Some(out)
}

/// pi's `resolveConfigValueOrThrow` (headers use it, uncached): the value, or `Failed to resolve
/// <description> from shell command: <command>` / `from environment variable: X` / `from
/// environment variables: X, Y` / `Failed to resolve <description>`.
///
/// ```
/// use pi_ai::models::resolve_config_value_or_err;
/// let none = |_: &str| None;
/// assert_eq!(resolve_config_value_or_err("lit", "h", &none).as_deref(), Ok("lit"));
/// assert_eq!(
///     resolve_config_value_or_err("${PI_DOC_UNSET_A}$PI_DOC_UNSET_B", "provider \"p\" header \"x\"", &none),
///     Err("Failed to resolve provider \"p\" header \"x\" from environment variables: PI_DOC_UNSET_A, PI_DOC_UNSET_B".into())
/// );
/// ```
pub fn resolve_config_value_or_err(
    config: &str,
    description: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    if let Some(command) = config.strip_prefix('!') {
        return run_command(command)
            .ok_or_else(|| format!("Failed to resolve {description} from shell command: {command}"));
    }
    if let Some(value) = resolve_config_value_with(config, env) {
        return Ok(value);
    }
    let set = |name: &String| {
        env(name).filter(|v| !v.is_empty()).is_some() || std::env::var(name).is_ok_and(|v| !v.is_empty())
    };
    let missing: Vec<String> = config_value_env_names(config).into_iter().filter(|n| !set(n)).collect();
    Err(match missing.len() {
        0 => format!("Failed to resolve {description}"),
        1 => format!("Failed to resolve {description} from environment variable: {}", missing[0]),
        _ => format!("Failed to resolve {description} from environment variables: {}", missing.join(", ")),
    })
}

fn run_command_cached(config: &str) -> Option<String> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<String>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache.lock().ok().and_then(|c| c.get(config).cloned()) {
        return hit;
    }
    let value = run_command(&config[1..]);
    if let Ok(mut c) = cache.lock() {
        c.insert(config.to_owned(), value.clone());
    }
    value
}

/// Runs `command` with `sh -c`, as pi's `execSync` does: 10 s timeout, trimmed stdout.
fn run_command(command: &str) -> Option<String> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut buf).map(|_| buf)
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                tracing::warn!(command, "config value command timed out");
                return None;
            }
        }
    };
    let output = reader.join().ok()?.ok()?;
    if !status.success() {
        tracing::warn!(command, "config value command failed");
        return None;
    }
    let text = String::from_utf8_lossy(&output).trim().to_owned();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_parse_as_pi_does() {
        assert_eq!(
            parse_template("a${B}c"),
            vec![Part::Literal("a".into()), Part::Env("B".into()), Part::Literal("c".into())]
        );
        assert_eq!(parse_template("${1x}"), vec![Part::Literal("${1x}".into())]);
        assert_eq!(parse_template("${open"), vec![Part::Literal("${open".into())]);
        assert_eq!(parse_template("$ 5$"), vec![Part::Literal("$ 5$".into())]);
        assert_eq!(parse_template("$A_1-x"), vec![Part::Env("A_1".into()), Part::Literal("-x".into())]);
    }

    #[test]
    fn commands_run_once_and_fail_to_none() {
        assert_eq!(resolve_config_value("!echo hi").as_deref(), Some("hi"));
        assert_eq!(resolve_config_value("!exit 3"), None);
        assert_eq!(resolve_config_value("!printf ''"), None);
        assert_eq!(resolve_config_value("$PI_SURELY_UNSET_VAR_X"), None);
    }
}
