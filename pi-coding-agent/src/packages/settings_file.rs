//! The two settings files package commands read and write: `<agent dir>/settings.json` (user
//! scope) and `<cwd>/.pi/settings.json` (project scope). Writes keep every other key and its
//! order, and use pi's format (`JSON.stringify(settings, null, 2)`, no final newline).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::PackageError;

/// Where a package or resource entry is configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// `<agent dir>/settings.json`.
    User,
    /// `<cwd>/.pi/settings.json`.
    Project,
    /// `-e` on the command line (not saved).
    Temporary,
}

impl Scope {
    /// pi's name (`user`, `project`, `temporary`).
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Temporary => "temporary",
        }
    }
}

/// One settings file as a JSON object.
#[derive(Clone, Debug, Default)]
pub struct SettingsFile {
    /// The file.
    pub path: PathBuf,
    /// Its keys, in file order (empty when missing or, for a project, untrusted).
    pub values: Map<String, Value>,
}

impl SettingsFile {
    /// The settings file of `scope`.
    pub fn path_for(scope: Scope, cwd: &Path, agent_dir: &Path) -> PathBuf {
        match scope {
            Scope::Project => cwd.join(".pi").join("settings.json"),
            _ => agent_dir.join("settings.json"),
        }
    }

    /// Reads `path`; a missing file is empty.
    pub fn load(path: PathBuf) -> Result<Self, PackageError> {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(SettingsFile { path, values: Map::new() }),
            Err(e) => return Err(PackageError::Io(format!("{}: {e}", path.display()))),
        };
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(values)) => Ok(SettingsFile { path, values }),
            Ok(_) => {
                Err(PackageError::Other(format!("Invalid settings file {}: expected a JSON object", path.display())))
            }
            Err(e) => Err(PackageError::Other(format!("Invalid settings file {}: {e}", path.display()))),
        }
    }

    /// A string array setting (`extensions`, `skills`, `prompts`, `themes`); other values are
    /// ignored.
    pub fn string_list(&self, key: &str) -> Vec<String> {
        match self.values.get(key) {
            Some(Value::Array(items)) => items.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect(),
            _ => Vec::new(),
        }
    }

    /// The `packages` entries (strings or objects with `source`).
    pub fn packages(&self) -> Vec<Value> {
        match self.values.get("packages") {
            Some(Value::Array(items)) => items
                .iter()
                .filter(|v| v.is_string() || v.get("source").is_some_and(Value::is_string))
                .cloned()
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Replaces `packages` and writes the file (the directory is created).
    pub fn save_packages(&mut self, packages: Vec<Value>) -> Result<(), PackageError> {
        self.save_key("packages", Value::Array(packages))
    }

    /// Sets one key (a new key goes last, as pi's settings writer puts it) and writes the file.
    pub fn save_key(&mut self, key: &str, value: Value) -> Result<(), PackageError> {
        self.values.insert(key.into(), value);
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| PackageError::Io(format!("{}: {e}", dir.display())))?;
        }
        let text = serde_json::to_string_pretty(&Value::Object(self.values.clone()))
            .map_err(|e| PackageError::Other(e.to_string()))?;
        std::fs::write(&self.path, text).map_err(|e| PackageError::Io(format!("{}: {e}", self.path.display())))
    }
}

/// The source string of a `packages` entry.
pub fn entry_source(entry: &Value) -> &str {
    match entry {
        Value::String(s) => s,
        other => other.get("source").and_then(Value::as_str).unwrap_or(""),
    }
}
