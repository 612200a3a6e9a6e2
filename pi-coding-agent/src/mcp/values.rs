//! Config values as pi resolves them (`core/resolve-config-value.ts`): `!command` as a whole value
//! runs a shell command; otherwise `$NAME` and `${NAME}` interpolate environment variables, `$$`
//! is `$` and `$!` is `!`. Also `~/` expansion of stdio commands, arguments and `cwd`.

use std::path::PathBuf;

enum Part {
    Literal(String),
    Env(String),
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
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
    let mut parts = Vec::new();
    let mut rest = config;
    while let Some(i) = rest.find('$') {
        push_literal(&mut parts, &rest[..i]);
        let after = &rest[i + 1..];
        match after.chars().next() {
            Some(c @ ('$' | '!')) => {
                push_literal(&mut parts, &c.to_string());
                rest = &after[1..];
            }
            Some('{') => match after.find('}') {
                None => {
                    push_literal(&mut parts, "$");
                    rest = after;
                }
                Some(end) => {
                    let name = &after[1..end];
                    let valid = name.chars().next().is_some_and(is_name_start) && name.chars().all(is_name_char);
                    if valid {
                        parts.push(Part::Env(name.to_owned()));
                    } else {
                        push_literal(&mut parts, &rest[i..i + 1 + end + 1]);
                    }
                    rest = &after[end + 1..];
                }
            },
            Some(c) if is_name_start(c) => {
                let len = after.find(|c: char| !is_name_char(c)).unwrap_or(after.len());
                parts.push(Part::Env(after[..len].to_owned()));
                rest = &after[len..];
            }
            _ => {
                push_literal(&mut parts, "$");
                rest = after;
            }
        }
    }
    push_literal(&mut parts, rest);
    parts
}

fn env_value(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Resolves a value, or pi's error: `Failed to resolve <description> from environment variable: X`,
/// `… from environment variables: X, Y`, or `… from shell command: cmd`.
pub fn resolve_config_value(config: &str, description: &str) -> Result<String, String> {
    if let Some(command) = config.strip_prefix('!') {
        let output =
            std::process::Command::new("sh").arg("-c").arg(command).stdin(std::process::Stdio::null()).output();
        return match output {
            Ok(o) if o.status.success() => {
                let text = String::from_utf8_lossy(&o.stdout).trim().to_owned();
                if text.is_empty() {
                    Err(format!("Failed to resolve {description} from shell command: {command}"))
                } else {
                    Ok(text)
                }
            }
            _ => Err(format!("Failed to resolve {description} from shell command: {command}")),
        };
    }
    let parts = parse_template(config);
    let mut out = String::new();
    let mut missing: Vec<&str> = Vec::new();
    for part in &parts {
        match part {
            Part::Literal(text) => out.push_str(text),
            Part::Env(name) => match env_value(name) {
                Some(v) => out.push_str(&v),
                None if !missing.contains(&name.as_str()) => missing.push(name),
                None => {}
            },
        }
    }
    match missing.len() {
        0 => Ok(out),
        1 => Err(format!("Failed to resolve {description} from environment variable: {}", missing[0])),
        _ => Err(format!("Failed to resolve {description} from environment variables: {}", missing.join(", "))),
    }
}

/// `~` and `~/…` name the home directory, as in a shell.
pub fn expand_home(value: &str) -> String {
    let home = || dirs::home_dir().unwrap_or_else(|| PathBuf::from("/"));
    if value == "~" {
        return home().display().to_string();
    }
    match value.strip_prefix("~/") {
        Some(rest) => home().join(rest).display().to_string(),
        None => value.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_resolve_like_pi() {
        let home = std::env::var("HOME").unwrap();
        assert_eq!(resolve_config_value("Bearer ${HOME}", "x").unwrap(), format!("Bearer {home}"));
        assert_eq!(resolve_config_value("$HOME/a", "x").unwrap(), format!("{home}/a"));
        assert_eq!(resolve_config_value("a$$b$!c${not-a-name}", "x").unwrap(), "a$b!c${not-a-name}");
        assert_eq!(
            resolve_config_value("${PI_NO_SUCH_VAR_1}${PI_NO_SUCH_VAR_2}", "MCP server \"s\" env \"K\"").unwrap_err(),
            "Failed to resolve MCP server \"s\" env \"K\" from environment variables: PI_NO_SUCH_VAR_1, PI_NO_SUCH_VAR_2"
        );
        assert_eq!(resolve_config_value("!echo hi", "x").unwrap(), "hi");
        assert_eq!(resolve_config_value("!false", "h").unwrap_err(), "Failed to resolve h from shell command: false");
        assert_eq!(expand_home("~/x"), format!("{home}/x"));
        assert_eq!(expand_home("a/~/x"), "a/~/x");
    }
}
