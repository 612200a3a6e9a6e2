//! `settings.json`: the global file in the agent dir and the project file `<cwd>/.pi/settings.json`,
//! merged as pi merges them (project over global; nested objects merged key by key; a project
//! `defaultTools` of only `+name` / `-name` entries changes the global list instead of replacing it).
//!
//! - [`Settings`]: one merged view with a typed accessor for every key of pi's `settings.md`
//!   (pi's defaults where a key is unset or invalid).
//! - [`SettingsManager`]: pi's `SettingsManager`: loads both files (or an in-memory store for SDK
//!   users), answers with [`Settings`], and writes changes back the way pi does (only the changed
//!   keys, over the file as it is now, unknown keys kept, `JSON.stringify(…, null, 2)` formatting,
//!   under a `proper-lockfile`-compatible lock).
//! - [`tools`]: pi's tool-selection rules (`defaultTools`, `--tools`).
//!
//! A file that is not valid JSON is reported with pi's warning (`Warning: Invalid settings file
//! <path>: <message> (line L column C)`) and ignored; the file itself is never rewritten.
//!
//! ```
//! use pi_coding_agent::settings::Settings;
//! let s = Settings::parse("s.json", r#"{"defaultProvider":"local","compaction":{"enabled":false}}"#).unwrap();
//! assert_eq!(s.default_provider(), Some("local"));
//! assert!(!s.compaction_enabled());
//! let err = Settings::parse("/a/settings.json", "{\n \"a\": 1,\n bad\n}").unwrap_err();
//! assert_eq!(err.to_string(), "Invalid settings file /a/settings.json: key must be a string (line 3 column 2)");
//! ```

mod manager;
mod storage;
pub mod tools;
mod values;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub use manager::{ScopedSettingsError, SettingsManager, SettingsManagerOptions, SettingsScope};
pub use storage::{FileSettingsStorage, InMemorySettingsStorage, SettingsStorage};
pub use values::{
    CacheWarming, DoubleEscapeAction, FullscreenExitOutput, FullscreenScrollbar, MermaidMode, ProjectTrustDefault,
    ProviderRetrySettings, QuietStartup, ShareDestination, TerminalOverrides, ThinkingBudgets, Transport,
    TreeFilterMode, TuiMode,
};

/// A settings file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The file exists but could not be read.
    #[error("Failed to read settings file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a JSON object.
    #[error("Invalid settings file {path}: {message} (line {line} column {column})")]
    Json {
        /// The file.
        path: PathBuf,
        /// The parser's message, without its position.
        message: String,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
    },
    /// A value pi refuses when it is read (`Invalid compaction.reserveTokens setting: …`,
    /// `Invalid httpIdleTimeoutMs setting: …`).
    #[error("{0}")]
    Invalid(String),
}

/// Merged settings. Unknown keys are kept (pi's settings are open-ended); typed accessors cover
/// what the CLI reads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    values: Map<String, Value>,
}

impl Settings {
    /// Parses the text of one settings file; `path` names it in errors.
    pub fn parse(path: impl AsRef<Path>, text: &str) -> Result<Self, SettingsError> {
        let path = path.as_ref();
        let json_error = |e: serde_json::Error| {
            let full = e.to_string();
            let message = match full.rfind(" at line ") {
                Some(i) => full[..i].to_owned(),
                None => full.clone(),
            };
            SettingsError::Json { path: path.to_owned(), message, line: e.line(), column: e.column() }
        };
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let value: Value = serde_json::from_str(text).map_err(json_error)?;
        match value {
            Value::Object(_) => Ok(Settings::from_value(value)),
            _ => Err(SettingsError::Json {
                path: path.to_owned(),
                message: "expected a JSON object".into(),
                line: 1,
                column: 1,
            }),
        }
    }

    /// Reads one file; a missing file is empty settings.
    pub fn load_file(path: impl AsRef<Path>) -> Result<Self, SettingsError> {
        let path = path.as_ref();
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(path, &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Settings::default()),
            Err(source) => Err(SettingsError::Io { path: path.to_owned(), source }),
        }
    }

    /// Loads `<agent_dir>/settings.json` and `<cwd>/.pi/settings.json` (when `project` is true),
    /// project over global. Broken files are returned as errors beside the settings that loaded.
    pub fn load(agent_dir: &Path, cwd: &Path, project: bool) -> (Self, Vec<SettingsError>) {
        let mut errors = Vec::new();
        let mut settings = Self::load_file(agent_dir.join("settings.json")).unwrap_or_else(|e| {
            errors.push(e);
            Settings::default()
        });
        if project {
            match Self::load_file(cwd.join(".pi").join("settings.json")) {
                Ok(p) => settings.merge(p),
                Err(e) => errors.push(e),
            }
        }
        (settings, errors)
    }

    /// Settings from a JSON object (anything else is empty settings), migrated as pi migrates
    /// old keys (`queueMode`, `websockets`, the old `skills` object, `retry.maxDelayMs`).
    pub fn from_value(value: Value) -> Self {
        match value {
            Value::Object(mut values) => {
                migrate(&mut values);
                Settings { values }
            }
            _ => Settings::default(),
        }
    }

    /// The settings as a JSON object.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.values
    }

    /// The settings as a JSON value.
    pub fn to_value(&self) -> Value {
        Value::Object(self.values.clone())
    }

    /// Merges `other` over `self` (pi's `deepMergeSettings`: objects key by key, everything else
    /// replaced, except a `defaultTools` of only `+name` / `-name` entries, which is appended to
    /// the inherited list).
    pub fn merge(&mut self, other: Settings) {
        let tools = match (self.values.get("defaultTools"), other.values.get("defaultTools")) {
            (Some(Value::Array(base)), Some(Value::Array(over)))
                if over.iter().all(|e| e.as_str().is_some_and(tools::is_tool_modifier)) =>
            {
                Some(Value::Array(base.iter().chain(over).cloned().collect()))
            }
            _ => None,
        };
        fn merge_into(base: &mut Map<String, Value>, over: Map<String, Value>) {
            for (k, v) in over {
                match (base.get_mut(&k), v) {
                    (Some(Value::Object(b)), Value::Object(o)) => merge_into(b, o),
                    (_, v) => {
                        base.insert(k, v);
                    }
                }
            }
        }
        merge_into(&mut self.values, other.values);
        if let Some(tools) = tools {
            self.values.insert("defaultTools".into(), tools);
        }
    }

    /// The raw value of a top-level key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.values.get(key)
    }

    /// The raw value at a dotted path, e.g. `compaction.reserveTokens`.
    pub fn get_path(&self, path: &str) -> Option<&Value> {
        let mut parts = path.split('.');
        let mut value = self.values.get(parts.next()?)?;
        for part in parts {
            value = value.as_object()?.get(part)?;
        }
        Some(value)
    }
}

/// pi's `migrateSettings`.
fn migrate(settings: &mut Map<String, Value>) {
    if !settings.contains_key("steeringMode")
        && let Some(mode) = settings.shift_remove("queueMode")
    {
        settings.insert("steeringMode".into(), mode);
    }
    if !settings.contains_key("transport")
        && let Some(Value::Bool(ws)) = settings.get("websockets").cloned()
    {
        settings.shift_remove("websockets");
        settings.insert("transport".into(), Value::from(if ws { "websocket" } else { "sse" }));
    }
    if let Some(Value::Object(skills)) = settings.get("skills").cloned() {
        if let Some(enable) = skills.get("enableSkillCommands").filter(|v| !v.is_null())
            && settings.get("enableSkillCommands").is_none_or(Value::is_null)
        {
            settings.insert("enableSkillCommands".into(), enable.clone());
        }
        match skills.get("customDirectories") {
            Some(Value::Array(dirs)) if !dirs.is_empty() => {
                settings.insert("skills".into(), Value::Array(dirs.clone()));
            }
            _ => {
                settings.shift_remove("skills");
            }
        }
    }
    if let Some(Value::Object(retry)) = settings.get_mut("retry") {
        let max_delay = retry.shift_remove("maxDelayMs");
        if let Some(delay) = max_delay.filter(Value::is_number) {
            let provider = retry.entry("provider").or_insert_with(|| Value::Object(Map::new()));
            if !provider.is_object() {
                *provider = Value::Object(Map::new());
            }
            if let Value::Object(p) = provider
                && p.get("maxRetryDelayMs").is_none_or(Value::is_null)
            {
                p.insert("maxRetryDelayMs".into(), delay);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_overrides_global_and_merges_objects() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        let cwd = dir.path().join("proj");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(cwd.join(".pi")).unwrap();
        std::fs::write(
            agent.join("settings.json"),
            r#"{"defaultModel":"a","compaction":{"enabled":false,"reserveTokens":5}}"#,
        )
        .unwrap();
        std::fs::write(cwd.join(".pi/settings.json"), r#"{"defaultModel":"b","compaction":{"reserveTokens":7}}"#)
            .unwrap();
        let (s, errors) = Settings::load(&agent, &cwd, true);
        assert!(errors.is_empty());
        assert_eq!(s.default_model(), Some("b"));
        assert!(!s.compaction_enabled());
        assert_eq!(s.compaction_reserve_tokens(), 7);
    }

    #[test]
    fn broken_file_is_reported_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{\"a\": 1,,}").unwrap();
        let (s, errors) = Settings::load(dir.path(), dir.path(), false);
        assert_eq!(s, Settings::default());
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().contains("(line 1 column 9)"), "{}", errors[0]);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"a\": 1,,}");
    }
}
