//! `pi mcp add|remove|list` (pi's `extensions/mcp/cli.ts`): configure and check MCP servers
//! without a session; `login` and `logout` are in [`super::oauth_cli`].

use std::io::Write;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::client::McpClient;
use super::config::{
    LoadedMcpConfig, McpServerEntry, Scope, add_server_config, load_mcp_config, project_trusted, remove_server_config,
    validate_server_config,
};

/// `pi mcp --help`.
pub const HELP: &str = "Usage:
  pi mcp add <server> [options] -- <command> [args...]
  pi mcp add <server> [options] --url <url>
  pi mcp remove <server> [-l]
  pi mcp list [--json]
  pi mcp login <server> [-l] [--timeout <seconds>]
  pi mcp logout <server> [-l]

Configure and check MCP servers and sign in to OAuth servers without starting a session.
Reads ~/.pi/agent/mcp.json and, in trusted projects, .pi/mcp.json.

Commands:
  add <server>            Add or replace a server in mcp.json
  remove <server>         Remove a server from mcp.json
  list                    Show state, tools, and errors (exits 1 on failure)
  login <server>          Sign in through the browser
  logout <server>         Delete the stored OAuth credentials

Options for add, remove, login, and logout:
  -l, --local             Use .pi/mcp.json in the current project instead of the global file

Options for add:
  --url <url>             Streamable HTTP server URL (instead of a command)
  --env <KEY=VALUE>       Environment variable for a stdio server (repeatable)
  --cwd <dir>             Working directory for a stdio server
  --header <KEY=VALUE>    HTTP header (repeatable)
  --bearer-token-env-var <NAME>
                          Send \"Authorization: Bearer ${NAME}\"
  --oauth-client-id <id>  Pre-registered OAuth client id
  --oauth-client-secret <secret>
                          OAuth client secret (may be ${NAME} or !command)
  --oauth-callback-port <port>
                          Fixed OAuth callback port
  --oauth-client-name <name>
                          Client name sent when registering with the OAuth server
  --oauth-client-registration <mode>
                          auto (default), cimd, or dcr
  --exposure <mode>       codemode (default), deferred, direct, or hidden
  --description <text>    What the server offers, shown in the system prompt

Other options:
  --json                  Print the list as JSON
  --timeout <seconds>     Time limit for the whole sign-in (default: 300)";

pub(crate) const HELP_HINT: &str = "Use \"pi mcp --help\" for usage.";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Flag,
    Value,
    List,
}

#[derive(Default)]
struct Parsed {
    positional: Vec<String>,
    values: Vec<(String, String)>,
    lists: Vec<(String, Vec<String>)>,
}

impl Parsed {
    fn has(&self, name: &str) -> bool {
        self.values.iter().any(|(n, _)| n == name) || self.lists.iter().any(|(n, _)| n == name)
    }

    fn value(&self, name: &str) -> Option<&str> {
        self.values.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn list(&self, name: &str) -> &[String] {
        self.lists.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_slice()).unwrap_or(&[])
    }
}

fn parse_options(
    args: &[String],
    known: &[(&str, Kind)],
    err: &mut dyn Write,
    max_positionals: usize,
) -> Option<Parsed> {
    let mut parsed = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let typed = &args[i];
        let arg = if typed == "-l" { "--local" } else { typed.as_str() };
        if arg == "--" || parsed.positional.len() >= max_positionals {
            let from = if arg == "--" { i + 1 } else { i };
            parsed.positional.extend(args[from..].iter().cloned());
            break;
        }
        let Some(name) = arg.strip_prefix("--") else {
            parsed.positional.push(arg.to_owned());
            i += 1;
            continue;
        };
        let Some((_, kind)) = known.iter().find(|(n, _)| *n == name) else {
            let _ = writeln!(err, "Unknown option {typed}.\n{HELP_HINT}");
            return None;
        };
        if *kind == Kind::Flag {
            parsed.values.push((name.to_owned(), String::new()));
            i += 1;
            continue;
        }
        let Some(value) = args.get(i + 1) else {
            let _ = writeln!(err, "{arg} needs a value.");
            return None;
        };
        if *kind == Kind::List {
            match parsed.lists.iter_mut().find(|(n, _)| n == name) {
                Some((_, list)) => list.push(value.clone()),
                None => parsed.lists.push((name.to_owned(), vec![value.clone()])),
            }
        } else {
            parsed.values.push((name.to_owned(), value.clone()));
        }
        i += 2;
    }
    Some(parsed)
}

/// Runs `pi mcp <args>`; returns the exit code.
pub async fn run_mcp_command(
    args: &[String],
    cwd: &Path,
    agent_dir: &Path,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let Some(command) = args.first().filter(|c| *c != "help") else {
        let _ = writeln!(out, "{HELP}");
        return 0;
    };
    if args.iter().any(|a| a == "--help" || a == "-h") {
        let _ = writeln!(out, "{HELP}");
        return 0;
    }
    let rest = &args[1..];
    let project_config = cwd.join(".pi").join("mcp.json");
    match command.as_str() {
        "add" => add(rest, &project_config, cwd, agent_dir, out, err),
        "remove" => remove(rest, &project_config, cwd, agent_dir, out, err),
        "list" => {
            let Some(parsed) = parse_options(rest, &[("json", Kind::Flag)], err, usize::MAX) else { return 1 };
            if !parsed.positional.is_empty() {
                let _ = writeln!(err, "Usage: pi mcp list [--json]\n{HELP_HINT}");
                return 1;
            }
            let trusted = project_trusted(agent_dir, cwd);
            let loaded = load_mcp_config(agent_dir, cwd, trusted);
            let note = (!trusted && project_config.exists()).then(|| {
                format!(
                    "{} is ignored because the project is not trusted. Start pi in the project to trust it.",
                    project_config.display()
                )
            });
            list(&loaded, parsed.has("json"), note, cwd, agent_dir, out).await
        }
        "login" | "logout" => {
            let known: &[(&str, Kind)] = if command == "login" {
                &[("local", Kind::Flag), ("timeout", Kind::Value)]
            } else {
                &[("local", Kind::Flag)]
            };
            let Some(parsed) = parse_options(rest, known, err, usize::MAX) else { return 1 };
            let trusted = project_trusted(agent_dir, cwd);
            let loaded = load_mcp_config(agent_dir, cwd, trusted);
            let note = (!trusted && project_config.exists()).then(|| {
                format!(
                    "{} is ignored because the project is not trusted. Start pi in the project to trust it.",
                    project_config.display()
                )
            });
            let request = super::oauth_cli::LoginRequest {
                command,
                positional: &parsed.positional,
                local: parsed.has("local"),
                timeout: parsed.value("timeout"),
                loaded: &loaded,
                untrusted_note: note.as_deref(),
                cwd,
                agent_dir,
            };
            super::oauth_cli::run_login_command(request, out, err).await
        }
        other => {
            let _ = writeln!(err, "Unknown mcp command \"{other}\".\n{HELP_HINT}");
            1
        }
    }
}

fn parse_pairs(option: &str, pairs: &[String], err: &mut dyn Write) -> Option<Map<String, Value>> {
    let mut record = Map::new();
    for pair in pairs {
        match pair.find('=') {
            Some(i) if i > 0 => {
                record.insert(pair[..i].to_owned(), Value::String(pair[i + 1..].to_owned()));
            }
            _ => {
                let _ = writeln!(err, "--{option} expects KEY=VALUE, got \"{pair}\".");
                return None;
            }
        }
    }
    Some(record)
}

const ADD_OPTIONS: [(&str, Kind); 13] = [
    ("local", Kind::Flag),
    ("url", Kind::Value),
    ("env", Kind::List),
    ("cwd", Kind::Value),
    ("header", Kind::List),
    ("bearer-token-env-var", Kind::Value),
    ("oauth-client-id", Kind::Value),
    ("oauth-client-secret", Kind::Value),
    ("oauth-callback-port", Kind::Value),
    ("oauth-client-name", Kind::Value),
    ("oauth-client-registration", Kind::Value),
    ("exposure", Kind::Value),
    ("description", Kind::Value),
];

const HTTP_ONLY: [&str; 7] = [
    "header",
    "bearer-token-env-var",
    "oauth-client-id",
    "oauth-client-secret",
    "oauth-callback-port",
    "oauth-client-name",
    "oauth-client-registration",
];

fn build_config(
    parsed: &Parsed,
    url: Option<&str>,
    command: &[String],
    err: &mut dyn Write,
) -> Option<Map<String, Value>> {
    let mut config = Map::new();
    if let Some(url) = url {
        let mut headers = parse_pairs("header", parsed.list("header"), err)?;
        if let Some(bearer) = parsed.value("bearer-token-env-var") {
            headers.insert("Authorization".into(), Value::String(format!("Bearer ${{{bearer}}}")));
        }
        let mut oauth = Map::new();
        for (option, key) in [("oauth-client-id", "clientId"), ("oauth-client-secret", "clientSecret")] {
            if let Some(v) = parsed.value(option) {
                oauth.insert(key.into(), Value::String(v.to_owned()));
            }
        }
        if let Some(port) = parsed.value("oauth-callback-port") {
            let number = port.parse::<f64>().ok().map(|p| json!(p as i64)).unwrap_or(Value::Null);
            oauth.insert("callbackPort".into(), number);
        }
        for (option, key) in [("oauth-client-name", "clientName"), ("oauth-client-registration", "clientRegistration")]
        {
            if let Some(v) = parsed.value(option) {
                oauth.insert(key.into(), Value::String(v.to_owned()));
            }
        }
        config.insert("url".into(), Value::String(url.to_owned()));
        if !headers.is_empty() {
            config.insert("headers".into(), Value::Object(headers));
        }
        if !oauth.is_empty() {
            config.insert("oauth".into(), Value::Object(oauth));
        }
    } else {
        let env = parse_pairs("env", parsed.list("env"), err)?;
        config.insert("command".into(), Value::String(command[0].clone()));
        if command.len() > 1 {
            config.insert("args".into(), json!(command[1..]));
        }
        if !env.is_empty() {
            config.insert("env".into(), Value::Object(env));
        }
        if let Some(cwd) = parsed.value("cwd") {
            config.insert("cwd".into(), Value::String(cwd.to_owned()));
        }
    }
    if let Some(exposure) = parsed.value("exposure") {
        config.insert("exposure".into(), Value::String(exposure.to_owned()));
    }
    if let Some(description) = parsed.value("description") {
        config.insert("description".into(), Value::String(description.to_owned()));
    }
    Some(config)
}

fn add(
    args: &[String],
    project_config: &Path,
    cwd: &Path,
    agent_dir: &Path,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let usage = format!("Usage: pi mcp add <server> [options] (--url <url> | -- <command> [args...])\n{HELP_HINT}");
    let Some(parsed) = parse_options(args, &ADD_OPTIONS, err, 2) else { return 1 };
    let (name, command) = match parsed.positional.split_first() {
        Some((name, command)) => (name.clone(), command.to_vec()),
        None => (String::new(), Vec::new()),
    };
    let url = parsed.value("url");
    if name.is_empty() || url.is_none() == command.is_empty() {
        let _ = writeln!(err, "{usage}");
        return 1;
    }
    let misplaced = if url.is_none() {
        HTTP_ONLY.iter().find(|o| parsed.has(o)).copied()
    } else {
        ["env", "cwd"].into_iter().find(|o| parsed.has(o))
    };
    if let Some(option) = misplaced {
        let kind = if url.is_none() { "HTTP servers (--url)" } else { "stdio servers" };
        let _ = writeln!(err, "--{option} only applies to {kind}.");
        return 1;
    }
    let Some(config) = build_config(&parsed, url, &command, err) else { return 1 };
    let validated = match validate_server_config(&name, &Value::Object(config)) {
        Ok(v) => v,
        Err(e) => {
            let _ = writeln!(err, "{e}");
            return 1;
        }
    };
    let project = parsed.has("local");
    let path = if project { project_config.to_path_buf() } else { agent_dir.join("mcp.json") };
    let scope = if project { "project" } else { "global" };
    let may_need_sign_in = validated.contains_key("url")
        && !validated
            .get("headers")
            .and_then(Value::as_object)
            .is_some_and(|h| h.keys().any(|k| k.eq_ignore_ascii_case("authorization")));
    let replaced = match add_server_config(&path, &name, validated) {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(err, "Could not update {}: {e}", path.display());
            return 1;
        }
    };
    let verb = if replaced { "Replaced" } else { "Added" };
    let _ = writeln!(out, "{verb} {scope} MCP server \"{name}\" in {}.", path.display());
    if project && !project_trusted(agent_dir, cwd) {
        let _ = writeln!(
            out,
            "The project is not trusted, so {} is ignored until you start pi in the project and trust it.",
            path.display()
        );
    }
    let hint = if may_need_sign_in { format!(". If it requires sign-in: pi mcp login {name}") } else { String::new() };
    let _ = writeln!(out, "Check it with: pi mcp list{hint}");
    0
}

fn remove(
    args: &[String],
    project_config: &Path,
    cwd: &Path,
    agent_dir: &Path,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let Some(parsed) = parse_options(args, &[("local", Kind::Flag)], err, usize::MAX) else { return 1 };
    let [name] = parsed.positional.as_slice() else {
        let _ = writeln!(err, "Usage: pi mcp remove <server> [-l]\n{HELP_HINT}");
        return 1;
    };
    let project = parsed.has("local");
    let path = if project { project_config.to_path_buf() } else { agent_dir.join("mcp.json") };
    let scope = if project { Scope::Project } else { Scope::Global };
    match remove_server_config(&path, name) {
        Err(e) => {
            let _ = writeln!(err, "Could not update {}: {e}", path.display());
            1
        }
        Ok(true) => {
            let _ = writeln!(out, "Removed {} MCP server \"{name}\" from {}.", scope.as_str(), path.display());
            0
        }
        Ok(false) => {
            let all = load_mcp_config(agent_dir, cwd, true);
            let other = all.servers.iter().find(|s| &s.name == name && s.scope != scope);
            let hint = other
                .map(|o| {
                    let flag = if o.scope == Scope::Project { "; use --local" } else { "; omit --local" };
                    format!(" It is defined in {}{flag}.", o.source)
                })
                .unwrap_or_default();
            let _ = writeln!(err, "No {} MCP server named \"{name}\" in {}.{hint}", scope.as_str(), path.display());
            1
        }
    }
}

async fn report(entry: &McpServerEntry, cwd: &Path, agent_dir: &Path) -> Value {
    let mut report = json!({
        "name": entry.name,
        "scope": entry.scope.as_str(),
        "source": entry.source,
    });
    if let Some(o) = &entry.override_path {
        report["override"] = json!(o);
    }
    report["enabled"] = json!(entry.enabled());
    report["exposure"] = json!(entry.exposure().as_str());
    report["transport"] = json!(entry.describe_transport());
    report["state"] = json!("disabled");
    report["tools"] = json!([]);
    if !entry.enabled() {
        return report;
    }
    let events = match super::oauth_cli::oauth_events(entry, agent_dir) {
        Ok(events) => events,
        Err(e) => {
            report["state"] = json!("failed");
            report["error"] = json!(e);
            return report;
        }
    };
    match McpClient::connect(entry, cwd, events).await {
        Ok(client) => {
            let names: Vec<String> =
                client.tools.iter().map(|t| t.get("name").and_then(Value::as_str).unwrap_or("").to_owned()).collect();
            report["state"] = json!("connected");
            let overrides: Map<String, Value> = names
                .iter()
                .filter_map(|t| {
                    let e = entry.tool_exposure(t);
                    (e != entry.exposure()).then(|| (t.clone(), json!(e.as_str())))
                })
                .collect();
            report["tools"] = json!(names);
            if !overrides.is_empty() {
                report["toolExposure"] = Value::Object(overrides);
            }
            if client.has_resources {
                report["resources"] = json!(true);
            }
            client.close().await;
        }
        Err(e) if e.needs_auth => report["state"] = json!("needs-auth"),
        Err(e) => {
            report["state"] = json!("failed");
            report["error"] = json!(e.message);
        }
    }
    report
}

async fn list(
    loaded: &LoadedMcpConfig,
    as_json: bool,
    note: Option<String>,
    cwd: &Path,
    agent_dir: &Path,
    out: &mut dyn Write,
) -> i32 {
    let reports = futures::future::join_all(loaded.servers.iter().map(|e| report(e, cwd, agent_dir))).await;
    let failed = !loaded.errors.is_empty()
        || reports.iter().any(|r| r["enabled"] == json!(true) && r["state"] != json!("connected"));
    let code = i32::from(failed);
    if as_json {
        let mut payload = json!({"servers": reports, "errors": loaded.errors});
        if let Some(n) = &note {
            payload["note"] = json!(n);
        }
        let _ = writeln!(out, "{}", super::content::pretty_json(&payload));
        return code;
    }
    if reports.is_empty() && loaded.errors.is_empty() {
        let _ = writeln!(
            out,
            "No MCP servers configured. Add them to {} or .pi/mcp.json.",
            agent_dir.join("mcp.json").display()
        );
    }
    for r in &reports {
        let s = |k: &str| r[k].as_str().unwrap_or("").to_owned();
        let tools: Vec<String> = r["tools"]
            .as_array()
            .map(|a| a.iter().filter_map(|t| t.as_str().map(str::to_owned)).collect())
            .unwrap_or_default();
        let state = match s("state").as_str() {
            "connected" => format!("connected, {} tool{}", tools.len(), if tools.len() == 1 { "" } else { "s" }),
            "needs-auth" => "needs sign-in".to_owned(),
            other => other.to_owned(),
        };
        let _ = writeln!(out, "{}: {state} ({}, {})", s("name"), s("exposure"), s("scope"));
        let _ = writeln!(out, "  {}", s("transport"));
        if let Some(o) = r.get("override").and_then(Value::as_str) {
            let _ = writeln!(out, "  project override: {o}");
        }
        if r["state"] == json!("needs-auth") {
            let _ = writeln!(out, "  sign in with: pi mcp login {}", s("name"));
        }
        if !tools.is_empty() {
            let shown: Vec<String> = tools
                .iter()
                .map(|t| match r.get("toolExposure").and_then(|m| m.get(t)).and_then(Value::as_str) {
                    Some(e) => format!("{t} [{e}]"),
                    None => t.clone(),
                })
                .collect();
            let _ = writeln!(out, "  tools: {}", shown.join(", "));
        }
        if r.get("resources").is_some() {
            let _ = writeln!(out, "  offers resources");
        }
        if let Some(e) = r.get("error").and_then(Value::as_str) {
            let _ = writeln!(out, "  {}", e.replace('\n', "\n  "));
        }
    }
    for e in &loaded.errors {
        let _ = writeln!(out, "config error: {e}");
    }
    if let Some(n) = note {
        let _ = writeln!(out, "{n}");
    }
    code
}
