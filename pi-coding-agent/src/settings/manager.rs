//! pi's `SettingsManager`: the global and project documents, their merge, and writes that change
//! only the keys this process changed (re-read under the lock, so a concurrent writer's other keys
//! survive, and unknown keys are kept).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use pi_agent_core::QueueMode;
use serde_json::{Map, Value};

use super::storage::{FileSettingsStorage, InMemorySettingsStorage, SettingsStorage};
use super::values::{CacheWarming, ProjectTrustDefault};
use pi_ai::json::to_js_json_pretty;

use super::{Settings, SettingsError};

/// Which document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SettingsScope {
    /// `<agent_dir>/settings.json`.
    Global = 0,
    /// `<cwd>/.pi/settings.json`.
    Project = 1,
}

impl SettingsScope {
    /// pi's name (`global` / `project`).
    pub fn as_str(self) -> &'static str {
        match self {
            SettingsScope::Global => "global",
            SettingsScope::Project => "project",
        }
    }
}

/// Options of [`SettingsManager::create_with`].
#[derive(Clone, Copy, Debug)]
pub struct SettingsManagerOptions {
    /// Whether the project document is read (and may be written). Default true, as pi.
    pub project_trusted: bool,
}

impl Default for SettingsManagerOptions {
    fn default() -> Self {
        SettingsManagerOptions { project_trusted: true }
    }
}

/// A settings document that failed to load (pi's `{scope, path, error}` records).
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct ScopedSettingsError {
    /// Which document.
    pub scope: SettingsScope,
    /// Why.
    pub error: SettingsError,
}

#[derive(Default)]
struct Modified {
    fields: Vec<String>,
    nested: HashMap<String, Vec<String>>,
}

impl Modified {
    fn mark(&mut self, field: &str, nested: Option<&str>) {
        if !self.fields.iter().any(|f| f == field) {
            self.fields.push(field.to_owned());
        }
        if let Some(key) = nested {
            let keys = self.nested.entry(field.to_owned()).or_default();
            if !keys.iter().any(|k| k == key) {
                keys.push(key.to_owned());
            }
        }
    }
}

struct State {
    docs: [Map<String, Value>; 2],
    merged: Settings,
    project_trusted: bool,
    load_failed: [bool; 2],
    modified: [Modified; 2],
    errors: Vec<ScopedSettingsError>,
}

impl State {
    fn remerge(&mut self) {
        let mut merged = Settings { values: self.docs[0].clone() };
        merged.merge(Settings { values: self.docs[1].clone() });
        self.merged = merged;
    }
}

/// pi's `SettingsManager`. Shareable (`Arc<SettingsManager>`); every method takes `&self`.
///
/// ```
/// use pi_coding_agent::settings::SettingsManager;
/// let sm = SettingsManager::in_memory(serde_json::json!({"steeringMode": "all", "mine": 1}));
/// assert_eq!(sm.settings().steering_mode(), pi_agent_core::QueueMode::All);
/// sm.set_default_model_and_provider("local", "m1").unwrap();
/// assert_eq!(sm.settings().default_model(), Some("m1"));
/// assert!(sm.stored_text(pi_coding_agent::settings::SettingsScope::Global).unwrap().contains("\"mine\": 1"));
/// ```
pub struct SettingsManager {
    storage: Arc<dyn SettingsStorage>,
    memory: Option<Arc<InMemorySettingsStorage>>,
    state: Mutex<State>,
}

impl std::fmt::Debug for SettingsManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SettingsManager").field("settings", &self.lock().merged).finish_non_exhaustive()
    }
}

impl SettingsManager {
    /// The files of `cwd` and `agent_dir` (pi's `SettingsManager.create`).
    pub fn create(cwd: impl AsRef<Path>, agent_dir: impl AsRef<Path>) -> Self {
        Self::create_with(cwd, agent_dir, SettingsManagerOptions::default())
    }

    /// [`SettingsManager::create`] with options (an untrusted project's file is not read).
    pub fn create_with(cwd: impl AsRef<Path>, agent_dir: impl AsRef<Path>, options: SettingsManagerOptions) -> Self {
        let storage = FileSettingsStorage::new(cwd.as_ref(), agent_dir.as_ref());
        Self::from_storage(Arc::new(storage), options)
    }

    /// Settings held in memory only, starting from `global` (pi's `SettingsManager.inMemory`).
    pub fn in_memory(global: Value) -> Self {
        Self::in_memory_with(global, SettingsManagerOptions::default())
    }

    /// [`SettingsManager::in_memory`] with options.
    pub fn in_memory_with(global: Value, options: SettingsManagerOptions) -> Self {
        let storage = Arc::new(InMemorySettingsStorage::new());
        let initial = Settings::from_value(global);
        let text = to_js_json_pretty(&initial.to_value());
        let _ = storage.with_lock(SettingsScope::Global, &mut |_| Some(text.clone()));
        let mut sm = Self::from_storage(storage.clone(), options);
        sm.memory = Some(storage);
        sm
    }

    /// Settings from any store (pi's `SettingsManager.fromStorage`). A document that cannot be
    /// read is empty, never written back, and reported by [`SettingsManager::drain_errors`].
    pub fn from_storage(storage: Arc<dyn SettingsStorage>, options: SettingsManagerOptions) -> Self {
        let mut state = State {
            docs: [Map::new(), Map::new()],
            merged: Settings::default(),
            project_trusted: options.project_trusted,
            load_failed: [false; 2],
            modified: Default::default(),
            errors: Vec::new(),
        };
        for scope in [SettingsScope::Global, SettingsScope::Project] {
            load_into(&*storage, &mut state, scope);
        }
        state.remerge();
        SettingsManager { storage, memory: None, state: Mutex::new(state) }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The effective settings: global and project merged, with overrides (pi's `getSettings`).
    pub fn settings(&self) -> Settings {
        self.lock().merged.clone()
    }

    /// The global document as loaded and changed.
    pub fn global_settings(&self) -> Settings {
        Settings { values: self.lock().docs[0].clone() }
    }

    /// The project document as loaded and changed (empty when untrusted).
    pub fn project_settings(&self) -> Settings {
        Settings { values: self.lock().docs[1].clone() }
    }

    /// The path of a document, when it is a file.
    pub fn path(&self, scope: SettingsScope) -> Option<PathBuf> {
        self.storage.path(scope)
    }

    /// The stored text of a document of an in-memory manager (what a write produced).
    pub fn stored_text(&self, scope: SettingsScope) -> Option<String> {
        self.memory.as_ref().and_then(|m| m.text(scope))
    }

    /// Whether the project document is read.
    pub fn is_project_trusted(&self) -> bool {
        self.lock().project_trusted
    }

    /// pi's `setProjectTrusted`: trusting (re)reads the project document, distrusting drops it.
    pub fn set_project_trusted(&self, trusted: bool) {
        let mut st = self.lock();
        if st.project_trusted == trusted {
            return;
        }
        st.project_trusted = trusted;
        st.modified[1] = Modified::default();
        st.docs[1] = Map::new();
        st.load_failed[1] = false;
        if trusted {
            load_into(&*self.storage, &mut st, SettingsScope::Project);
        }
        st.remerge();
    }

    /// pi's `reload`: both documents read again; a document that fails keeps its last content.
    pub fn reload(&self) {
        let mut st = self.lock();
        for scope in [SettingsScope::Global, SettingsScope::Project] {
            let i = scope as usize;
            st.modified[i] = Modified::default();
            match read_doc(&*self.storage, scope, st.project_trusted) {
                Ok(doc) => {
                    st.docs[i] = doc;
                    st.load_failed[i] = false;
                }
                Err(error) => {
                    st.load_failed[i] = true;
                    st.errors.push(ScopedSettingsError { scope, error });
                }
            }
        }
        st.remerge();
    }

    /// pi's `applyOverrides`: `overrides` merged over the effective settings until the next write
    /// or reload.
    pub fn apply_overrides(&self, overrides: Value) {
        self.lock().merged.merge(Settings::from_value(overrides));
    }

    /// Records an error for [`SettingsManager::drain_errors`] (a write a caller could not report).
    pub fn record_error(&self, scope: SettingsScope, error: SettingsError) {
        self.lock().errors.push(ScopedSettingsError { scope, error });
    }

    /// The load errors recorded so far, once (pi's `drainErrors`).
    pub fn drain_errors(&self) -> Vec<ScopedSettingsError> {
        std::mem::take(&mut self.lock().errors)
    }

    /// Sets (or, with `None`, removes) a top-level key of the global document and writes it.
    pub fn set_global(&self, field: &str, value: Option<Value>) -> Result<(), SettingsError> {
        self.update(SettingsScope::Global, field, None, value)
    }

    /// Sets (or removes) `field.key` of the global document and writes it, keeping the file's
    /// other keys of `field`.
    pub fn set_global_nested(&self, field: &str, key: &str, value: Option<Value>) -> Result<(), SettingsError> {
        self.update(SettingsScope::Global, field, Some(key), value)
    }

    /// Sets (or removes) a top-level key of the project document and writes it (pi's
    /// `updateProjectSettings`); refused for an untrusted project.
    pub fn set_project(&self, field: &str, value: Option<Value>) -> Result<(), SettingsError> {
        self.update(SettingsScope::Project, field, None, value)
    }

    fn update(
        &self,
        scope: SettingsScope,
        field: &str,
        nested: Option<&str>,
        value: Option<Value>,
    ) -> Result<(), SettingsError> {
        let mut st = self.lock();
        if scope == SettingsScope::Project && !st.project_trusted {
            return Err(SettingsError::Invalid("Project is not trusted; refusing to write project settings".into()));
        }
        let i = scope as usize;
        let doc = &mut st.docs[i];
        match nested {
            Some(key) => {
                let entry = doc.entry(field.to_owned()).or_insert_with(|| Value::Object(Map::new()));
                if !entry.is_object() {
                    *entry = Value::Object(Map::new());
                }
                if let Value::Object(obj) = entry {
                    match value {
                        Some(v) => {
                            obj.insert(key.to_owned(), v);
                        }
                        None => {
                            obj.shift_remove(key);
                        }
                    }
                }
            }
            None => match value {
                Some(v) => {
                    doc.insert(field.to_owned(), v);
                }
                None => {
                    doc.shift_remove(field);
                }
            },
        }
        st.modified[i].mark(field, nested);
        st.remerge();
        self.persist(&mut st, scope)
    }

    /// pi's `persistScopedSettings`: the changed keys over the document as stored now.
    fn persist(&self, st: &mut State, scope: SettingsScope) -> Result<(), SettingsError> {
        let i = scope as usize;
        if st.load_failed[i] {
            // pi never overwrites a document it could not parse.
            return Ok(());
        }
        let snapshot = st.docs[i].clone();
        let modified = std::mem::take(&mut st.modified[i]);
        let path = self.storage.path(scope).unwrap_or_default();
        let mut parse_error = None;
        let result = self.storage.with_lock(scope, &mut |current| {
            let mut merged = match current {
                Some(text) => match Settings::parse(&path, text) {
                    Ok(s) => s.values,
                    Err(e) => {
                        parse_error = Some(e);
                        return None;
                    }
                },
                None => Map::new(),
            };
            for field in &modified.fields {
                let value = snapshot.get(field);
                match (modified.nested.get(field), value) {
                    (Some(keys), Some(Value::Object(in_memory))) => {
                        let mut nested = match merged.get(field) {
                            Some(Value::Object(o)) => o.clone(),
                            _ => Map::new(),
                        };
                        for key in keys {
                            match in_memory.get(key) {
                                Some(v) => {
                                    nested.insert(key.clone(), v.clone());
                                }
                                None => {
                                    nested.shift_remove(key);
                                }
                            }
                        }
                        merged.insert(field.clone(), Value::Object(nested));
                    }
                    (_, Some(v)) => {
                        merged.insert(field.clone(), v.clone());
                    }
                    (_, None) => {
                        merged.shift_remove(field);
                    }
                }
            }
            Some(to_js_json_pretty(&Value::Object(merged)))
        });
        if let Some(e) = parse_error {
            st.modified[i] = modified;
            return Err(e);
        }
        result.map_err(|source| {
            st.modified[i] = modified;
            SettingsError::Io { path, source }
        })
    }

    /// `cacheWarming` of the global document (pi reads it there only: warming costs money).
    pub fn cache_warming(&self) -> CacheWarming {
        Settings { values: self.lock().docs[0].clone() }.cache_warming()
    }

    /// `defaultProjectTrust` of the global document.
    pub fn default_project_trust(&self) -> ProjectTrustDefault {
        Settings { values: self.lock().docs[0].clone() }.default_project_trust()
    }

    /// `httpProxy` of the global document.
    pub fn http_proxy(&self) -> Option<String> {
        self.lock().docs[0].get("httpProxy").and_then(Value::as_str).map(str::to_owned)
    }

    /// `selfUpdateCommand` of the global document.
    pub fn self_update_command(&self) -> Option<Vec<String>> {
        Settings { values: self.lock().docs[0].clone() }.self_update_command()
    }

    /// pi's `getOrCreateDeviceId`: a stable id of this installation, from the global document.
    pub fn get_or_create_device_id(&self) -> Result<String, SettingsError> {
        if let Some(id) = self.lock().docs[0].get("deviceId").and_then(Value::as_str) {
            return Ok(id.to_owned());
        }
        let id = uuid::Uuid::new_v4().to_string();
        self.set_global("deviceId", Some(Value::from(id.clone())))?;
        Ok(id)
    }

    /// `defaultProvider`.
    pub fn set_default_provider(&self, provider: &str) -> Result<(), SettingsError> {
        self.set_global("defaultProvider", Some(provider.into()))
    }

    /// `defaultModel`.
    pub fn set_default_model(&self, model_id: &str) -> Result<(), SettingsError> {
        self.set_global("defaultModel", Some(model_id.into()))
    }

    /// `defaultProvider` and `defaultModel` together.
    pub fn set_default_model_and_provider(&self, provider: &str, model_id: &str) -> Result<(), SettingsError> {
        self.set_global("defaultProvider", Some(provider.into()))?;
        self.set_global("defaultModel", Some(model_id.into()))
    }

    /// `defaultThinkingLevel`.
    pub fn set_default_thinking_level(&self, level: &str) -> Result<(), SettingsError> {
        self.set_global("defaultThinkingLevel", Some(level.into()))
    }

    /// `steeringMode`.
    pub fn set_steering_mode(&self, mode: QueueMode) -> Result<(), SettingsError> {
        self.set_global("steeringMode", Some(queue_mode_str(mode).into()))
    }

    /// `followUpMode`.
    pub fn set_follow_up_mode(&self, mode: QueueMode) -> Result<(), SettingsError> {
        self.set_global("followUpMode", Some(queue_mode_str(mode).into()))
    }

    /// `theme`.
    pub fn set_theme(&self, theme: &str) -> Result<(), SettingsError> {
        self.set_global("theme", Some(theme.into()))
    }

    /// `compaction.enabled`.
    pub fn set_compaction_enabled(&self, enabled: bool) -> Result<(), SettingsError> {
        self.set_global_nested("compaction", "enabled", Some(enabled.into()))
    }

    /// `retry.enabled`.
    pub fn set_retry_enabled(&self, enabled: bool) -> Result<(), SettingsError> {
        self.set_global_nested("retry", "enabled", Some(enabled.into()))
    }

    /// `enabledModels` (`None` removes it).
    pub fn set_enabled_models(&self, patterns: Option<Vec<String>>) -> Result<(), SettingsError> {
        self.set_global("enabledModels", patterns.map(Value::from))
    }

    /// `quietStartup`.
    pub fn set_quiet_startup(&self, quiet: bool) -> Result<(), SettingsError> {
        self.set_global("quietStartup", Some(quiet.into()))
    }

    /// `hideThinkingBlock`.
    pub fn set_hide_thinking_block(&self, hide: bool) -> Result<(), SettingsError> {
        self.set_global("hideThinkingBlock", Some(hide.into()))
    }

    /// `packages` of the global (or, with `project`, the project) document.
    pub fn set_packages(&self, packages: Vec<Value>, project: bool) -> Result<(), SettingsError> {
        self.set_scoped("packages", Value::Array(packages), project)
    }

    /// `extensions` of the global (or project) document.
    pub fn set_extension_paths(&self, paths: Vec<String>, project: bool) -> Result<(), SettingsError> {
        self.set_scoped("extensions", paths.into(), project)
    }

    /// `skills` of the global (or project) document.
    pub fn set_skill_paths(&self, paths: Vec<String>, project: bool) -> Result<(), SettingsError> {
        self.set_scoped("skills", paths.into(), project)
    }

    /// `prompts` of the global (or project) document.
    pub fn set_prompt_template_paths(&self, paths: Vec<String>, project: bool) -> Result<(), SettingsError> {
        self.set_scoped("prompts", paths.into(), project)
    }

    fn set_scoped(&self, field: &str, value: Value, project: bool) -> Result<(), SettingsError> {
        if project { self.set_project(field, Some(value)) } else { self.set_global(field, Some(value)) }
    }
}

fn queue_mode_str(mode: QueueMode) -> &'static str {
    match mode {
        QueueMode::All => "all",
        QueueMode::OneAtATime => "one-at-a-time",
    }
}

fn read_doc(
    storage: &dyn SettingsStorage,
    scope: SettingsScope,
    project_trusted: bool,
) -> Result<Map<String, Value>, SettingsError> {
    if scope == SettingsScope::Project && !project_trusted {
        return Ok(Map::new());
    }
    let path = storage.path(scope).unwrap_or_else(|| PathBuf::from(format!("<{} settings>", scope.as_str())));
    let mut text = None;
    storage
        .with_lock(scope, &mut |current| {
            text = current.map(str::to_owned);
            None
        })
        .map_err(|source| SettingsError::Io { path: path.clone(), source })?;
    match text.filter(|t| !t.is_empty()) {
        Some(t) => Ok(Settings::parse(&path, &t)?.values),
        None => Ok(Map::new()),
    }
}

fn load_into(storage: &dyn SettingsStorage, st: &mut State, scope: SettingsScope) {
    match read_doc(storage, scope, st.project_trusted) {
        Ok(doc) => st.docs[scope as usize] = doc,
        Err(error) => {
            st.load_failed[scope as usize] = true;
            st.errors.push(ScopedSettingsError { scope, error });
        }
    }
}
