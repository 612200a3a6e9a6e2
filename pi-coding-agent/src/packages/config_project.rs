//! `pi config`'s project mode (pi's `ResourceList` in `writeScope === "project"`): each resource
//! has a project override state (inherit, load, unload) read from and written to
//! `<cwd>/.pi/settings.json`, as `+pattern` / `-pattern` entries of the settings arrays or of a
//! project package entry (a user package gets an `{ source, autoload: false }` delta entry).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::PackageError;
use super::config::ConfigItem;
use super::resolve::ResourceOrigin;
use super::settings_file::{Scope, SettingsFile, entry_source};
use super::source::{is_local_path, relative_path, resolve_from};

/// A resource's project override (pi's `ProjectOverrideState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverrideState {
    /// No project entry: the global decision applies.
    Inherit,
    /// A `+` entry: loaded in this project.
    Load,
    /// A `-` (or `!`) entry: not loaded in this project.
    Unload,
}

fn strip_override(p: &str) -> &str {
    p.strip_prefix(['!', '+', '-']).unwrap_or(p)
}

fn has_override_prefix(p: &str) -> bool {
    p.starts_with(['!', '+', '-'])
}

/// The item's settings scope as pi's `getItemScope` sees it.
fn item_scope(item: &ConfigItem) -> Scope {
    if item.resource.scope == Scope::Project { Scope::Project } else { Scope::User }
}

fn top_level_base(scope: Scope, cwd: &Path, agent_dir: &Path) -> PathBuf {
    if scope == Scope::Project { cwd.join(".pi") } else { agent_dir.to_path_buf() }
}

fn path_text(p: &Path) -> String {
    p.display().to_string()
}

/// What a project needs to decide an item: where it runs and what the global view enabled.
pub struct ProjectView<'a> {
    /// The project directory.
    pub cwd: &'a Path,
    /// The agent directory.
    pub agent_dir: &'a Path,
    /// `kind:path` → enabled, from the global view (pi's `inheritedEnabledByKey`).
    pub inherited: &'a std::collections::HashMap<String, bool>,
}

/// pi's `getResourceItemKey`.
pub fn item_key(item: &ConfigItem) -> String {
    format!("{}:{}", item.kind.key(), path_text(&item.resource.path))
}

impl ProjectView<'_> {
    fn project_file(&self) -> Result<SettingsFile, PackageError> {
        SettingsFile::load(SettingsFile::path_for(Scope::Project, self.cwd, self.agent_dir))
    }

    /// Whether the item comes from the global view (drawn dimmed while it inherits).
    pub fn is_inherited_global(&self, item: &ConfigItem) -> bool {
        item_scope(item) == Scope::User || self.inherited.contains_key(&item_key(item))
    }

    /// What the global view decided for the item (pi's `getInheritedEnabled`).
    pub fn inherited_enabled(&self, item: &ConfigItem) -> bool {
        self.inherited.get(&item_key(item)).copied().unwrap_or(if item_scope(item) == Scope::User {
            item.resource.enabled
        } else {
            true
        })
    }

    fn pattern_for_scope(&self, item: &ConfigItem, scope: Scope) -> String {
        let source_scope = item_scope(item);
        if scope != source_scope || item.resource.origin == ResourceOrigin::Builtin {
            return path_text(&item.resource.path);
        }
        let base =
            item.resource.base_dir.clone().unwrap_or_else(|| top_level_base(source_scope, self.cwd, self.agent_dir));
        relative_path(&base, &item.resource.path)
    }

    fn top_level_patterns(&self, item: &ConfigItem) -> HashSet<String> {
        let path = &item.resource.path;
        let mut set = HashSet::from([
            self.pattern_for_scope(item, Scope::Project),
            path_text(path),
            relative_path(&top_level_base(Scope::Project, self.cwd, self.agent_dir), path),
        ]);
        if let Some(base) = &item.resource.base_dir {
            set.insert(relative_path(base, path));
        }
        set
    }

    fn package_source(item: &ConfigItem) -> Option<&str> {
        match &item.resource.origin {
            ResourceOrigin::Package(s) => Some(s),
            _ => None,
        }
    }

    fn sources_match(&self, left: &str, left_scope: Scope, right: &str, right_scope: Scope) -> bool {
        if left == right {
            return true;
        }
        if !is_local_path(left) || !is_local_path(right) {
            return false;
        }
        resolve_from(left, &top_level_base(left_scope, self.cwd, self.agent_dir))
            == resolve_from(right, &top_level_base(right_scope, self.cwd, self.agent_dir))
    }

    fn find_project_package(&self, packages: &[Value], item: &ConfigItem) -> Option<usize> {
        let source = Self::package_source(item)?;
        packages.iter().position(|p| self.sources_match(source, item_scope(item), entry_source(p), Scope::Project))
    }

    /// The item's current project override (pi's `getProjectOverrideState`).
    pub fn state(&self, item: &ConfigItem) -> Result<OverrideState, PackageError> {
        let file = self.project_file()?;
        if Self::package_source(item).is_none() {
            let entries = file.string_list(item.kind.key());
            return Ok(state_from_entries(&entries, &self.top_level_patterns(item), false));
        }
        let packages = file.packages();
        let Some(Value::Object(pkg)) = self.find_project_package(&packages, item).map(|i| &packages[i]) else {
            return Ok(OverrideState::Inherit);
        };
        let Some(entries) = pkg.get(item.kind.key()).and_then(Value::as_array) else {
            return Ok(OverrideState::Inherit);
        };
        let entries: Vec<String> = entries.iter().filter_map(Value::as_str).map(str::to_owned).collect();
        let autoload = pkg.get("autoload") != Some(&Value::Bool(false));
        Ok(state_from_entries(&entries, &HashSet::from([package_pattern(item)]), autoload))
    }

    /// The state Space moves to (pi's `getNextOverrideState`).
    pub fn next_state(&self, item: &ConfigItem) -> Result<OverrideState, PackageError> {
        let inherited = self.inherited_enabled(item);
        Ok(match (self.state(item)?, inherited) {
            (OverrideState::Inherit, true) | (OverrideState::Load, false) => OverrideState::Unload,
            (OverrideState::Inherit, false) | (OverrideState::Unload, true) => OverrideState::Load,
            (OverrideState::Unload, false) | (OverrideState::Load, true) => OverrideState::Inherit,
        })
    }

    /// Writes the override (pi's `setProjectResourceOverride`); `false` when nothing changed.
    pub fn set(&self, item: &ConfigItem, state: OverrideState) -> Result<bool, PackageError> {
        if Self::package_source(item).is_some() {
            self.set_package(item, state)
        } else {
            self.set_top_level(item, state)
        }
    }

    fn set_top_level(&self, item: &ConfigItem, state: OverrideState) -> Result<bool, PackageError> {
        let mut file = self.project_file()?;
        let inherited = self.is_inherited_global(item);
        let pattern =
            if inherited { path_text(&item.resource.path) } else { self.pattern_for_scope(item, Scope::Project) };
        let patterns = self.top_level_patterns(item);
        let mut updated: Vec<String> = file
            .string_list(item.kind.key())
            .into_iter()
            .filter(|entry| {
                let target = strip_override(entry);
                if has_override_prefix(entry) && patterns.contains(target) {
                    return false;
                }
                !(state == OverrideState::Inherit && inherited && target == pattern)
            })
            .collect();
        if state != OverrideState::Inherit {
            // Project entries name inherited files to override them; built-in paths need none.
            if inherited && item.resource.origin != ResourceOrigin::Builtin && !updated.contains(&pattern) {
                updated.push(pattern.clone());
            }
            updated.push(format!("{}{pattern}", if state == OverrideState::Load { '+' } else { '-' }));
        }
        file.save_key(item.kind.key(), Value::Array(updated.into_iter().map(Value::String).collect()))?;
        Ok(true)
    }

    fn set_package(&self, item: &ConfigItem, state: OverrideState) -> Result<bool, PackageError> {
        let mut file = self.project_file()?;
        let mut packages = file.packages();
        let index = match self.find_project_package(&packages, item) {
            Some(i) => i,
            None if state == OverrideState::Inherit => return Ok(false),
            None => {
                packages.push(self.override_source(item));
                packages.len() - 1
            }
        };
        let mut pkg: Map<String, Value> = match &packages[index] {
            Value::Object(o) => o.clone(),
            other => Map::from_iter([("source".to_string(), other.clone())]),
        };
        let pattern = package_pattern(item);
        let mut updated: Vec<Value> = pkg
            .get(item.kind.key())
            .and_then(Value::as_array)
            .map(|a| a.iter().filter(|e| e.as_str().is_none_or(|s| strip_override(s) != pattern)).cloned().collect())
            .unwrap_or_default();
        if state != OverrideState::Inherit {
            let sign = if state == OverrideState::Load { '+' } else { '-' };
            updated.push(Value::String(format!("{sign}{pattern}")));
        }
        if updated.is_empty() {
            pkg.remove(item.kind.key());
        } else {
            pkg.insert(item.kind.key().into(), Value::Array(updated));
        }
        let has_filters = super::collect::ResourceKind::ALL.iter().any(|k| pkg.contains_key(k.key()));
        if has_filters {
            packages[index] = Value::Object(pkg);
        } else if pkg.get("autoload") == Some(&Value::Bool(false)) {
            packages.remove(index);
        } else {
            packages[index] = pkg.get("source").cloned().unwrap_or(Value::Null);
        }
        file.save_packages(packages)?;
        Ok(true)
    }

    /// pi's `createPackageOverrideSource`: `{ source, autoload: false }`, a local source made
    /// relative to `.pi/`.
    fn override_source(&self, item: &ConfigItem) -> Value {
        let source = Self::package_source(item).unwrap_or_default();
        let source = if is_local_path(source) {
            let resolved = resolve_from(source, &top_level_base(item_scope(item), self.cwd, self.agent_dir));
            let rel = relative_path(&top_level_base(Scope::Project, self.cwd, self.agent_dir), &resolved);
            if rel.is_empty() { ".".to_string() } else { rel }
        } else {
            source.to_string()
        };
        serde_json::json!({ "source": source, "autoload": false })
    }
}

/// pi's `getPackageResourcePattern`: the path relative to the package root.
fn package_pattern(item: &ConfigItem) -> String {
    let r = &item.resource;
    let base = r.base_dir.clone().or_else(|| r.path.parent().map(Path::to_path_buf)).unwrap_or_default();
    relative_path(&base, &r.path)
}

/// pi's `getOverrideStateFromEntries`: the last matching entry decides.
fn state_from_entries(entries: &[String], patterns: &HashSet<String>, empty_is_unload: bool) -> OverrideState {
    if entries.is_empty() && empty_is_unload {
        return OverrideState::Unload;
    }
    let mut state = OverrideState::Inherit;
    for entry in entries {
        if !patterns.contains(strip_override(entry)) {
            continue;
        }
        state = if entry.starts_with(['!', '-']) { OverrideState::Unload } else { OverrideState::Load };
    }
    state
}
