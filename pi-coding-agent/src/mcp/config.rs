//! `mcp.json`: the `mcpServers` shape shared by MCP clients, pi's fields (`exposure`,
//! `toolExposure`), validation, the user/project precedence and override rules, and edits that keep
//! the rest of the file (pi's `extensions/mcp/config.ts` and `core/mcp-servers.ts`).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::naming::mcp_namespace;

/// How a server's tools reach the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Exposure {
    /// Callable from codemode scripts only (the default).
    Codemode,
    /// Declared once `tool_search` loads them.
    Deferred,
    /// Declared like built-in tools.
    Direct,
    /// Registered but unreachable.
    Hidden,
}

impl Exposure {
    /// The names, as written in `mcp.json`.
    pub const ALL: [Exposure; 4] = [Exposure::Codemode, Exposure::Deferred, Exposure::Direct, Exposure::Hidden];

    /// The `mcp.json` spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Exposure::Codemode => "codemode",
            Exposure::Deferred => "deferred",
            Exposure::Direct => "direct",
            Exposure::Hidden => "hidden",
        }
    }

    /// Parses a name; `codemode-deferred` is an alias of `codemode`.
    pub fn parse(value: &str) -> Option<Exposure> {
        match value {
            "codemode" | "codemode-deferred" => Some(Exposure::Codemode),
            "deferred" => Some(Exposure::Deferred),
            "direct" => Some(Exposure::Direct),
            "hidden" => Some(Exposure::Hidden),
            _ => None,
        }
    }
}

/// Where a server entry came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `~/.pi/agent/mcp.json`.
    Global,
    /// `<project>/.pi/mcp.json`.
    Project,
    /// Registered by an extension.
    Extension,
}

impl Scope {
    /// pi's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Global => "global",
            Scope::Project => "project",
            Scope::Extension => "extension",
        }
    }
}

/// A validated server entry. `raw` keeps the entry as written (with exposure aliases resolved).
#[derive(Clone, Debug, PartialEq)]
pub struct McpServerEntry {
    /// The server name.
    pub name: String,
    /// The entry, validated.
    pub raw: Map<String, Value>,
    /// The file (or extension) that defines it.
    pub source: String,
    /// Its scope.
    pub scope: Scope,
    /// The project file that overrides `enabled`/`exposure`/`toolExposure`, if any.
    pub override_path: Option<String>,
}

impl McpServerEntry {
    fn str_field(&self, key: &str) -> Option<&str> {
        self.raw.get(key).and_then(Value::as_str)
    }

    /// The streamable-HTTP URL (HTTP servers only).
    pub fn url(&self) -> Option<&str> {
        self.str_field("url")
    }

    /// The stdio command (stdio servers only).
    pub fn command(&self) -> Option<&str> {
        if self.url().is_some() { None } else { self.str_field("command") }
    }

    /// The stdio arguments.
    pub fn args(&self) -> Vec<String> {
        string_list(self.raw.get("args"))
    }

    /// `env` (stdio) or `headers` (HTTP), in file order.
    pub fn string_map(&self, key: &str) -> Vec<(String, String)> {
        match self.raw.get(key) {
            Some(Value::Object(map)) => {
                map.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned()))).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The stdio working directory as written.
    pub fn cwd(&self) -> Option<&str> {
        self.str_field("cwd")
    }

    /// `enabled` (default true).
    pub fn enabled(&self) -> bool {
        self.raw.get("enabled").and_then(Value::as_bool).unwrap_or(true)
    }

    /// The server's `exposure` (default `codemode`).
    pub fn exposure(&self) -> Exposure {
        self.str_field("exposure").and_then(Exposure::parse).unwrap_or(Exposure::Codemode)
    }

    /// The configured `description`.
    pub fn description(&self) -> Option<&str> {
        self.str_field("description")
    }

    /// The per-request timeout in milliseconds (`timeout` seconds, default 60).
    pub fn timeout_ms(&self) -> u64 {
        let seconds = self.raw.get("timeout").and_then(Value::as_f64).unwrap_or(60.0);
        (seconds * 1000.0) as u64
    }

    /// The exposure of one tool: its `toolExposure` entry (exact names first, then the first
    /// matching `*` pattern), else the server's.
    pub fn tool_exposure(&self, tool: &str) -> Exposure {
        let Some(Value::Object(overrides)) = self.raw.get("toolExposure") else { return self.exposure() };
        if let Some(e) = overrides.get(tool).and_then(Value::as_str).and_then(Exposure::parse) {
            return e;
        }
        for (pattern, value) in overrides {
            if pattern.contains('*')
                && pattern_matches(pattern, tool)
                && let Some(e) = value.as_str().and_then(Exposure::parse)
            {
                return e;
            }
        }
        self.exposure()
    }

    /// Every exposure the server's tools can have, known before it connects.
    pub fn configured_exposures(&self) -> Vec<Exposure> {
        let mut out = vec![self.exposure()];
        if let Some(Value::Object(overrides)) = self.raw.get("toolExposure") {
            out.extend(overrides.values().filter_map(Value::as_str).filter_map(Exposure::parse));
        }
        out
    }

    /// `command args…` or the URL, as listings show the transport.
    pub fn describe_transport(&self) -> String {
        match (self.url(), self.command()) {
            (Some(url), _) => url.to_owned(),
            (None, Some(command)) => {
                std::iter::once(command.to_owned()).chain(self.args()).collect::<Vec<_>>().join(" ")
            }
            _ => String::new(),
        }
    }
}

fn string_list(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect(),
        _ => Vec::new(),
    }
}

/// Whether `name` matches a tool pattern where `*` matches any characters.
pub fn pattern_matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(i) => rest = &rest[i + middle.len()..],
            None => return false,
        }
    }
    true
}

/// Whether a tool name matches any entry (exact names or `*` patterns), as `--tools` and
/// `--exclude-tools` match.
pub fn matches_any(entries: &[String], name: &str) -> bool {
    entries.iter().any(|e| if e.contains('*') { pattern_matches(e, name) } else { e == name })
}

fn is_server_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn is_string_record(value: &Value) -> bool {
    value.as_object().is_some_and(|m| m.values().all(Value::is_string))
}

fn resolve_aliases(raw: &mut Map<String, Value>) {
    if let Some(Value::String(e)) = raw.get_mut("exposure")
        && e == "codemode-deferred"
    {
        *e = "codemode".into();
    }
    if let Some(Value::Object(map)) = raw.get_mut("toolExposure") {
        for value in map.values_mut() {
            if let Value::String(e) = value
                && e == "codemode-deferred"
            {
                *e = "codemode".into();
            }
        }
    }
}

fn check_base(raw: &Map<String, Value>) -> Option<String> {
    if raw.get("enabled").is_some_and(|v| !v.is_boolean()) {
        return Some("enabled must be a boolean".into());
    }
    if raw.get("description").is_some_and(|v| !v.is_string()) {
        return Some("description must be a string".into());
    }
    if let Some(t) = raw.get("timeout")
        && !t.as_f64().is_some_and(|t| t > 0.0)
    {
        return Some("timeout must be a positive number of seconds".into());
    }
    None
}

fn check_http(raw: &Map<String, Value>, url: &str) -> Option<String> {
    let scheme_ok = (url.starts_with("http://") && url.len() > 7) || (url.starts_with("https://") && url.len() > 8);
    if !scheme_ok {
        return Some("url must be an http or https URL".into());
    }
    if raw.get("headers").is_some_and(|h| !is_string_record(h)) {
        return Some("headers must map names to strings".into());
    }
    if raw.get("oauth").is_some_and(|o| !o.is_object()) {
        return Some("oauth must be an object".into());
    }
    None
}

fn check_stdio(raw: &Map<String, Value>) -> Option<String> {
    if raw.get("args").is_some_and(|a| !a.as_array().is_some_and(|a| a.iter().all(Value::is_string))) {
        return Some("args must be an array of strings".into());
    }
    if raw.get("env").is_some_and(|e| !is_string_record(e)) {
        return Some("env must map names to strings".into());
    }
    if raw.get("cwd").is_some_and(|c| !c.is_string()) {
        return Some("cwd must be a string".into());
    }
    None
}

fn check_exposures(raw: &Map<String, Value>) -> Option<String> {
    let names = Exposure::ALL.iter().map(|e| format!("\"{}\"", e.as_str())).collect::<Vec<_>>().join(", ");
    let valid = |v: &Value| v.as_str().is_some_and(|s| Exposure::ALL.iter().any(|e| e.as_str() == s));
    if raw.get("exposure").is_some_and(|e| !valid(e)) {
        return Some(format!("exposure must be one of {names}"));
    }
    match raw.get("toolExposure") {
        None => None,
        Some(Value::Object(map)) => map
            .iter()
            .find(|(_, v)| !valid(v))
            .map(|(tool, _)| format!("toolExposure \"{tool}\" must be one of {names}")),
        Some(_) => Some("toolExposure must map tool names to exposures".into()),
    }
}

/// Validates one entry (pi's `validateMcpServerConfig`): the entry with aliases resolved, or pi's
/// error message.
pub fn validate_server_config(name: &str, raw: &Value) -> Result<Map<String, Value>, String> {
    if !is_server_name(name) {
        return Err(format!("invalid server name \"{name}\" (use letters, digits, \"_\" and \"-\")"));
    }
    let Some(map) = raw.as_object() else { return Err(format!("server \"{name}\" must be an object")) };
    let mut map = map.clone();
    resolve_aliases(&mut map);
    if let Some(e) = check_base(&map) {
        return Err(format!("server \"{name}\": {e}"));
    }
    let kind = map.get("type").and_then(Value::as_str);
    let has_type = map.contains_key("type");
    if kind == Some("sse") {
        return Err(format!("server \"{name}\": legacy SSE transport is not supported; use the streamable HTTP URL"));
    }
    let url = map.get("url").and_then(Value::as_str).map(str::to_owned);
    let command = map.get("command").and_then(Value::as_str).is_some();
    let error = if let Some(url) = url.filter(|_| !has_type || matches!(kind, Some("http" | "streamable-http"))) {
        check_http(&map, &url)
    } else if command && (!has_type || kind == Some("stdio")) {
        check_stdio(&map)
    } else {
        return Err(format!("server \"{name}\" needs either \"command\" (stdio) or \"url\" (streamable HTTP)"));
    };
    if let Some(e) = error.or_else(|| check_exposures(&map)) {
        return Err(format!("server \"{name}\": {e}"));
    }
    Ok(map)
}

/// Whether an entry only overrides a server defined elsewhere (no `command`, `url` or `type`).
pub fn is_override(raw: &Map<String, Value>) -> bool {
    !raw.contains_key("command") && !raw.contains_key("url") && !raw.contains_key("type")
}

const OVERRIDE_KEYS: [&str; 3] = ["enabled", "exposure", "toolExposure"];

/// The loaded configuration (pi's `loadMcpConfig` result).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadedMcpConfig {
    /// Valid servers, disabled ones included, in definition order.
    pub servers: Vec<McpServerEntry>,
    /// `autoEnableCodemode`, when a file set it.
    pub auto_enable_codemode: Option<bool>,
    /// One message per invalid file or entry.
    pub errors: Vec<String>,
    /// The trusted project's `mcp.json` path.
    pub project_config: Option<PathBuf>,
}

/// Reads `<agent_dir>/mcp.json` and, when `project_trusted`, `<cwd>/.pi/mcp.json`.
pub fn load_mcp_config(agent_dir: &Path, cwd: &Path, project_trusted: bool) -> LoadedMcpConfig {
    let mut state = LoadedMcpConfig::default();
    read_config_file(&agent_dir.join("mcp.json"), Scope::Global, &mut state);
    if project_trusted {
        let path = cwd.join(".pi").join("mcp.json");
        read_config_file(&path, Scope::Project, &mut state);
        state.project_config = Some(path);
    }
    state
}

fn read_config_file(path: &Path, scope: Scope, state: &mut LoadedMcpConfig) {
    let shown = path.display().to_string();
    let Ok(text) = std::fs::read_to_string(path) else { return };
    let parsed: Value = match serde_json::from_str(text.trim_start_matches('\u{feff}')) {
        Ok(v) => v,
        Err(e) => {
            state.errors.push(format!("{shown}: {e}"));
            return;
        }
    };
    let servers = match parsed.as_object() {
        Some(obj) if obj.get("mcpServers").is_none_or(Value::is_object) => obj.get("mcpServers"),
        _ => {
            state.errors.push(format!("{shown}: expected an object with an \"mcpServers\" object"));
            return;
        }
    };
    match parsed.get("autoEnableCodemode") {
        Some(Value::Bool(b)) => state.auto_enable_codemode = Some(*b),
        Some(_) => state.errors.push(format!("{shown}: autoEnableCodemode must be a boolean")),
        None => {}
    }
    let Some(Value::Object(servers)) = servers else { return };
    for (name, value) in servers {
        if scope == Scope::Project
            && let Some(map) = value.as_object().filter(|m| is_override(m))
        {
            apply_override(&shown, name, map, state);
            continue;
        }
        let raw = match validate_server_config(name, value) {
            Ok(raw) => raw,
            Err(e) => {
                state.errors.push(format!("{shown}: {e}"));
                continue;
            }
        };
        let namespace = mcp_namespace(name);
        if let Some(clash) = state.servers.iter().find(|s| &s.name != name && mcp_namespace(&s.name) == namespace) {
            state.errors.push(format!("{shown}: server \"{name}\" conflicts with \"{}\"", clash.name));
            continue;
        }
        if scope == Scope::Project && raw.contains_key("url") && raw.contains_key("auth") {
            state.errors.push(format!("{shown}: server \"{name}\": auth is only allowed in the global mcp.json"));
            continue;
        }
        let entry = McpServerEntry { name: name.clone(), raw, source: shown.clone(), scope, override_path: None };
        match state.servers.iter_mut().find(|s| &s.name == name) {
            Some(existing) => *existing = entry,
            None => state.servers.push(entry),
        }
    }
}

fn apply_override(shown: &str, name: &str, value: &Map<String, Value>, state: &mut LoadedMcpConfig) {
    let Some(base) = state.servers.iter_mut().find(|s| s.name == name) else {
        state
            .errors
            .push(format!("{shown}: server \"{name}\" needs \"command\" or \"url\", or a global server to override"));
        return;
    };
    if value.keys().any(|k| !OVERRIDE_KEYS.contains(&k.as_str())) {
        state.errors.push(format!("{shown}: server \"{name}\": an override can only set {}", OVERRIDE_KEYS.join(", ")));
        return;
    }
    let mut merged = base.raw.clone();
    for (k, v) in value {
        merged.insert(k.clone(), v.clone());
    }
    match validate_server_config(name, &Value::Object(merged)) {
        Ok(raw) => {
            base.raw = raw;
            base.override_path = Some(shown.to_owned());
        }
        Err(e) => state.errors.push(format!("{shown}: {e}")),
    }
}

/// Errors of the `mcp.json` edits.
#[derive(Debug, thiserror::Error)]
pub enum McpConfigEditError {
    /// Reading or writing the file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The file is not valid JSON.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// The file has no `mcpServers` object.
    #[error("{0}: expected an object with an \"mcpServers\" object")]
    Shape(String),
}

/// Reads `path` (an empty config when missing), lets `edit` change it, and writes it back with its
/// indentation when `edit` returns true. Other content is kept.
fn edit_mcp_servers(path: &Path, edit: impl FnOnce(&mut Map<String, Value>) -> bool) -> Result<(), McpConfigEditError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => Some(t.trim_start_matches('\u{feff}').to_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e.into()),
    };
    let mut parsed: Value = match &text {
        Some(t) => serde_json::from_str(t)?,
        None => Value::Object(Map::new()),
    };
    let Some(obj) = parsed.as_object_mut().filter(|o| o.get("mcpServers").is_none_or(Value::is_object)) else {
        return Err(McpConfigEditError::Shape(path.display().to_string()));
    };
    if !edit(obj) {
        return Ok(());
    }
    let indent = text
        .as_deref()
        .and_then(|t| {
            t.lines().find_map(|l| {
                let ws: String = l.chars().take_while(|c| *c == ' ' || *c == '\t').collect();
                (!ws.is_empty() && l.len() > ws.len()).then_some(ws)
            })
        })
        .unwrap_or_else(|| "  ".to_owned());
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, format!("{}\n", crate::mcp::json_text::to_string_indented(&parsed, &indent)))?;
    Ok(())
}

/// Adds or replaces a server; returns whether one was replaced (pi's `addMcpServerConfig`).
pub fn add_server_config(path: &Path, name: &str, config: Map<String, Value>) -> Result<bool, McpConfigEditError> {
    let mut replaced = false;
    edit_mcp_servers(path, |obj| {
        let servers = obj.entry("mcpServers").or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(servers) = servers {
            replaced = servers.insert(name.to_owned(), Value::Object(config)).is_some();
        }
        true
    })?;
    Ok(replaced)
}

/// Sets `enabled` or `exposure` of a server (pi's `updateMcpServerConfig`): the default value
/// (`true`, `codemode`) removes the key unless the entry is a project override; `is_override`
/// creates the override entry when missing.
pub fn update_server_config(
    path: &Path,
    name: &str,
    key: &str,
    value: Value,
    create_override: bool,
) -> Result<(), McpConfigEditError> {
    let mut missing = false;
    edit_mcp_servers(path, |obj| {
        let servers = obj.entry("mcpServers").or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(servers) = servers else { return false };
        if !servers.contains_key(name) && create_override {
            servers.insert(name.to_owned(), Value::Object(Map::new()));
        }
        let Some(Value::Object(server)) = servers.get_mut(name) else {
            missing = true;
            return false;
        };
        let keep_defaults = is_override(server);
        let default = match key {
            "enabled" => value == Value::Bool(true),
            _ => value == Value::String("codemode".into()),
        };
        if default && !keep_defaults {
            server.shift_remove(key);
        } else {
            server.insert(key.to_owned(), value);
        }
        true
    })?;
    if missing {
        let message = format!("{} does not define MCP server \"{name}\"", path.display());
        return Err(McpConfigEditError::Io(std::io::Error::other(message)));
    }
    Ok(())
}

/// Removes a server; false when the file does not define it (pi's `removeMcpServerConfig`).
pub fn remove_server_config(path: &Path, name: &str) -> Result<bool, McpConfigEditError> {
    if !path.exists() {
        return Ok(false);
    }
    let mut removed = false;
    edit_mcp_servers(path, |obj| {
        if let Some(Value::Object(servers)) = obj.get_mut("mcpServers") {
            removed = servers.shift_remove(name).is_some();
        }
        removed
    })?;
    Ok(removed)
}

/// Whether the project at `cwd` is trusted, as [`crate::trust::is_project_trusted`] decides it
/// (the trust store, then `defaultProjectTrust`); an unreadable trust store counts as untrusted.
pub fn project_trusted(agent_dir: &Path, cwd: &Path) -> bool {
    crate::trust::is_project_trusted(agent_dir, cwd, None).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn validation_messages_match_pi() {
        assert_eq!(
            validate_server_config("a b", &json!({})).unwrap_err(),
            "invalid server name \"a b\" (use letters, digits, \"_\" and \"-\")"
        );
        assert_eq!(
            validate_server_config("s", &json!({"type": "sse", "url": "http://x"})).unwrap_err(),
            "server \"s\": legacy SSE transport is not supported; use the streamable HTTP URL"
        );
        assert_eq!(
            validate_server_config("s", &json!({"args": []})).unwrap_err(),
            "server \"s\" needs either \"command\" (stdio) or \"url\" (streamable HTTP)"
        );
        assert_eq!(
            validate_server_config("s", &json!({"command": "x", "exposure": "loud"})).unwrap_err(),
            "server \"s\": exposure must be one of \"codemode\", \"deferred\", \"direct\", \"hidden\""
        );
        assert_eq!(
            validate_server_config("s", &json!({"url": "ftp://x"})).unwrap_err(),
            "server \"s\": url must be an http or https URL"
        );
        let ok = validate_server_config("s", &json!({"command": "x", "exposure": "codemode-deferred"})).unwrap();
        assert_eq!(ok["exposure"], "codemode");
    }

    #[test]
    fn tool_exposure_exact_wins_then_first_pattern() {
        let raw = validate_server_config(
            "g",
            &json!({"url": "http://h/mcp", "exposure": "deferred",
                "toolExposure": {"get_*": "codemode", "get_one": "direct", "*": "hidden"}}),
        )
        .unwrap();
        let e = McpServerEntry { name: "g".into(), raw, source: "x".into(), scope: Scope::Global, override_path: None };
        assert_eq!(e.tool_exposure("get_one"), Exposure::Direct);
        assert_eq!(e.tool_exposure("get_two"), Exposure::Codemode);
        assert_eq!(e.tool_exposure("other"), Exposure::Hidden);
        assert!(pattern_matches("mcp__a*__*x", "mcp__abc__yx"));
        assert!(!pattern_matches("mcp__a*__*x", "mcp__abc__xy"));
    }

    #[test]
    fn project_overrides_and_replacements() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        let cwd = dir.path().join("proj");
        std::fs::create_dir_all(agent.clone()).unwrap();
        std::fs::create_dir_all(cwd.join(".pi")).unwrap();
        std::fs::write(
            agent.join("mcp.json"),
            r#"{"mcpServers":{"a":{"command":"x","env":{"K":"v"}},"b":{"command":"y"},"c-d":{"command":"z"}}}"#,
        )
        .unwrap();
        std::fs::write(
            cwd.join(".pi/mcp.json"),
            r#"{"autoEnableCodemode":false,"mcpServers":{"a":{"enabled":false},"b":{"url":"http://h/mcp"},
                "c_d":{"command":"q"},"n":{"enabled":true},"a2":{"enabled":false,"env":{}}}}"#,
        )
        .unwrap();
        let untrusted = load_mcp_config(&agent, &cwd, false);
        assert_eq!(untrusted.servers.len(), 3);
        let loaded = load_mcp_config(&agent, &cwd, true);
        let a = &loaded.servers[0];
        assert!(!a.enabled());
        assert_eq!(a.string_map("env"), vec![("K".to_owned(), "v".to_owned())]);
        assert!(a.override_path.is_some());
        assert_eq!(loaded.servers[1].url(), Some("http://h/mcp"));
        assert_eq!(loaded.auto_enable_codemode, Some(false));
        let p = cwd.join(".pi/mcp.json").display().to_string();
        assert_eq!(
            loaded.errors,
            vec![
                format!("{p}: server \"c_d\" conflicts with \"c-d\""),
                format!("{p}: server \"n\" needs \"command\" or \"url\", or a global server to override"),
                format!("{p}: server \"a2\" needs \"command\" or \"url\", or a global server to override"),
            ]
        );
    }

    #[test]
    fn add_and_remove_keep_other_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        std::fs::write(&path, "{\n    \"other\": 1,\n    \"mcpServers\": {}\n}\n").unwrap();
        let cfg = json!({"command": "x"}).as_object().unwrap().clone();
        assert!(!add_server_config(&path, "s", cfg.clone()).unwrap());
        assert!(add_server_config(&path, "s", cfg).unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "{\n    \"other\": 1,\n    \"mcpServers\": {\n        \"s\": {\n            \"command\": \"x\"\n        }\n    }\n}\n"
        );
        assert!(remove_server_config(&path, "s").unwrap());
        assert!(!remove_server_config(&path, "s").unwrap());
    }
}
