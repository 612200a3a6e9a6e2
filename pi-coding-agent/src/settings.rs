//! `settings.json`: the global file in the agent dir and the project file `<cwd>/.pi/settings.json`,
//! merged as pi merges them (project over global; nested objects merged key by key).
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

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

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
        let value: Value = serde_json::from_str(text).map_err(json_error)?;
        match value {
            Value::Object(values) => Ok(Settings { values }),
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

    /// Merges `other` over `self` (objects key by key, everything else replaced).
    pub fn merge(&mut self, other: Settings) {
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

    fn string(&self, path: &str) -> Option<&str> {
        self.get_path(path).and_then(Value::as_str)
    }

    /// `defaultProvider`.
    pub fn default_provider(&self) -> Option<&str> {
        self.string("defaultProvider")
    }

    /// `defaultModel`.
    pub fn default_model(&self) -> Option<&str> {
        self.string("defaultModel")
    }

    /// `defaultThinkingLevel`.
    pub fn default_thinking_level(&self) -> Option<&str> {
        self.string("defaultThinkingLevel")
    }

    /// `sessionDir` (tilde not expanded).
    pub fn session_dir(&self) -> Option<&str> {
        self.string("sessionDir")
    }

    /// `shellCommandPrefix`.
    pub fn shell_command_prefix(&self) -> Option<&str> {
        self.string("shellCommandPrefix")
    }

    /// `shellPath`.
    pub fn shell_path(&self) -> Option<&str> {
        self.string("shellPath")
    }

    /// `defaultTools` (tool names or `+name`/`-name` modifiers).
    pub fn default_tools(&self) -> Option<Vec<String>> {
        let list = self.get("defaultTools")?.as_array()?;
        Some(list.iter().filter_map(Value::as_str).map(str::to_owned).collect())
    }

    /// `steeringMode` (`"all"` or `"one-at-a-time"`).
    pub fn steering_mode(&self) -> Option<&str> {
        self.string("steeringMode")
    }

    /// `followUpMode` (`"all"` or `"one-at-a-time"`).
    pub fn follow_up_mode(&self) -> Option<&str> {
        self.string("followUpMode")
    }

    /// `compaction.enabled` (default true).
    pub fn compaction_enabled(&self) -> bool {
        self.get_path("compaction.enabled").and_then(Value::as_bool).unwrap_or(true)
    }

    /// `compaction.reserveTokens` (default 16384).
    pub fn compaction_reserve_tokens(&self) -> u64 {
        self.get_path("compaction.reserveTokens").and_then(Value::as_u64).unwrap_or(16384)
    }

    /// `compaction.keepRecentTokens` (default 20000).
    pub fn compaction_keep_recent_tokens(&self) -> u64 {
        self.get_path("compaction.keepRecentTokens").and_then(Value::as_u64).unwrap_or(20000)
    }

    /// `retry.enabled` (default true).
    pub fn retry_enabled(&self) -> bool {
        self.get_path("retry.enabled").and_then(Value::as_bool).unwrap_or(true)
    }

    /// `retry.maxRetries` (default 3).
    pub fn retry_max_retries(&self) -> u64 {
        self.get_path("retry.maxRetries").and_then(Value::as_u64).unwrap_or(3)
    }

    /// `retry.baseDelayMs` (default 2000).
    pub fn retry_base_delay_ms(&self) -> u64 {
        self.get_path("retry.baseDelayMs").and_then(Value::as_u64).unwrap_or(2000)
    }

    /// `quietStartup` (default false).
    pub fn quiet_startup(&self) -> bool {
        self.get("quietStartup").and_then(Value::as_bool).unwrap_or(false)
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
