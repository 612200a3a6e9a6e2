//! What `pi config` edits (pi's `config-selector`): the resources of both scopes grouped as pi
//! groups them, and the global-scope toggle, which writes `+path` / `-path` entries into the
//! settings arrays or into a package entry's filters exactly as pi writes them. The project
//! mode's override states are in `config_project`, the screen in `config_screen`.

use std::path::Path;

use serde_json::{Map, Value};

use super::PackageError;
use super::collect::ResourceKind;
use super::resolve::{ResolvedResource, ResolvedResources, ResourceOrigin};
use super::settings_file::{Scope, SettingsFile, entry_source};
use super::source::relative_path;

/// One line of the selector: a resource with its kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigItem {
    /// Extension, skill, prompt or theme.
    pub kind: ResourceKind,
    /// The resource.
    pub resource: ResolvedResource,
    /// What the selector shows (the skill's folder, `folder/index.ts`, or the file name).
    pub display_name: String,
}

/// A group of the selector (a package, the user's folders, settings entries …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigGroup {
    /// pi's label, e.g. `npm:foo (user)`, `User (~/.pi/agent/)`, `Project settings`.
    pub label: String,
    /// Its items, by kind (extensions, skills, prompts, themes) then name.
    pub items: Vec<ConfigItem>,
    /// The settings scope of its resources.
    pub scope: Scope,
}

fn shorten_home(path: &Path) -> String {
    let shown = match crate::trust::home_dir() {
        Some(home) if path.starts_with(&home) => {
            let rel = relative_path(&home, path);
            if rel.is_empty() { "~".to_string() } else { format!("~/{rel}") }
        }
        _ => path.display().to_string(),
    };
    if shown.ends_with('/') { shown } else { format!("{shown}/") }
}

/// pi's `getGroupLabel`.
pub fn group_label(resource: &ResolvedResource, agent_dir: &Path) -> String {
    let user = resource.scope == Scope::User;
    match &resource.origin {
        ResourceOrigin::Package(source) => format!("{source} ({})", resource.scope.as_str()),
        ResourceOrigin::Builtin if user => "Built-in".to_string(),
        ResourceOrigin::Builtin => "Built-in (project override)".to_string(),
        ResourceOrigin::Auto => match (&resource.base_dir, user) {
            (Some(base), true) => format!("User ({})", shorten_home(base)),
            (Some(base), false) => format!("Project ({})", shorten_home(base)),
            (None, true) => format!("User ({})", shorten_home(agent_dir)),
            (None, false) => "Project (.pi/)".to_string(),
        },
        ResourceOrigin::Settings if user => "User settings".to_string(),
        ResourceOrigin::Settings => "Project settings".to_string(),
    }
}

fn display_name(kind: ResourceKind, path: &Path) -> String {
    if let Some(name) = path.to_str().and_then(|p| p.strip_prefix(super::BUILTIN_PATH_PREFIX)) {
        return name.to_string();
    }
    let file = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let parent = path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    match kind {
        ResourceKind::Extensions if parent != "extensions" => format!("{parent}/{file}"),
        ResourceKind::Skills if file == "SKILL.md" => parent,
        _ => file,
    }
}

/// pi's `buildGroups`: packages first, then top-level; user before project; then by source.
pub fn config_groups(resolved: &ResolvedResources, agent_dir: &Path) -> Vec<ConfigGroup> {
    let mut groups: Vec<(String, ConfigGroup, bool, Scope, String)> = Vec::new();
    let lists = [
        (ResourceKind::Extensions, &resolved.extensions),
        (ResourceKind::Skills, &resolved.skills),
        (ResourceKind::Prompts, &resolved.prompts),
        (ResourceKind::Themes, &resolved.themes),
    ];
    for (kind, list) in lists {
        for r in list.iter() {
            let (is_package, source) = match &r.origin {
                ResourceOrigin::Package(s) => (true, s.clone()),
                ResourceOrigin::Auto => (false, "auto".to_string()),
                ResourceOrigin::Settings => (false, "local".to_string()),
                ResourceOrigin::Builtin => (false, "builtin".to_string()),
            };
            let key = format!(
                "{is_package}:{}:{source}:{}",
                r.scope.as_str(),
                r.base_dir.as_deref().unwrap_or(Path::new("")).display()
            );
            let item = ConfigItem { kind, resource: r.clone(), display_name: display_name(kind, &r.path) };
            match groups.iter_mut().find(|g| g.0 == key) {
                Some(g) => g.1.items.push(item),
                None => {
                    let group = ConfigGroup { label: group_label(r, agent_dir), items: vec![item], scope: r.scope };
                    groups.push((key, group, is_package, r.scope, source));
                }
            }
        }
    }
    groups.sort_by(|a, b| {
        b.2.cmp(&a.2).then_with(|| (a.3 != Scope::User).cmp(&(b.3 != Scope::User))).then_with(|| a.4.cmp(&b.4))
    });
    let order = |k: ResourceKind| ResourceKind::ALL.iter().position(|x| *x == k).unwrap_or(0);
    groups
        .into_iter()
        .map(|(_, mut g, ..)| {
            g.items.sort_by(|a, b| order(a.kind).cmp(&order(b.kind)).then_with(|| a.display_name.cmp(&b.display_name)));
            g
        })
        .collect()
}

fn strip_override(p: &str) -> &str {
    p.strip_prefix(['!', '+', '-']).unwrap_or(p)
}

/// Replaces any entry for `pattern` with `+pattern` (enable) or `-pattern` (disable).
fn with_toggle(current: Vec<String>, pattern: &str, enabled: bool) -> Vec<String> {
    let mut updated: Vec<String> = current.into_iter().filter(|p| strip_override(p) != pattern).collect();
    updated.push(format!("{}{pattern}", if enabled { '+' } else { '-' }));
    updated
}

/// pi's global-scope toggle: enables or disables `item` by writing its pattern into the
/// settings file of the item's scope (`extensions` / `skills` / … for top-level resources, the
/// package entry's filters for package resources).
pub fn set_enabled(cwd: &Path, agent_dir: &Path, item: &ConfigItem, enabled: bool) -> Result<(), PackageError> {
    let r = &item.resource;
    let path = SettingsFile::path_for(r.scope, cwd, agent_dir);
    let mut file = SettingsFile::load(path)?;
    let key = item.kind.key();
    match &r.origin {
        ResourceOrigin::Package(source) => {
            let mut packages = file.packages();
            let Some(index) = packages.iter().position(|p| entry_source(p) == source) else { return Ok(()) };
            let mut pkg: Map<String, Value> = match &packages[index] {
                Value::Object(o) => o.clone(),
                other => Map::from_iter([("source".to_string(), other.clone())]),
            };
            let base = r.base_dir.clone().or_else(|| r.path.parent().map(Path::to_path_buf)).unwrap_or_default();
            let pattern = relative_path(&base, &r.path);
            let current = pkg
                .get(key)
                .and_then(Value::as_array)
                .map_or_else(Vec::new, |a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect());
            let updated = with_toggle(current, &pattern, enabled);
            pkg.insert(key.into(), Value::Array(updated.into_iter().map(Value::String).collect()));
            let has_filters = ResourceKind::ALL.iter().any(|k| pkg.contains_key(k.key()));
            packages[index] = if has_filters { Value::Object(pkg) } else { Value::String(source.clone()) };
            file.save_packages(packages)
        }
        ResourceOrigin::Builtin => {
            let pattern = r.path.display().to_string();
            let updated = with_toggle(file.string_list(key), &pattern, enabled);
            file.save_key(key, Value::Array(updated.into_iter().map(Value::String).collect()))
        }
        _ => {
            let base = r.base_dir.clone().unwrap_or_else(|| match r.scope {
                Scope::Project => cwd.join(".pi"),
                _ => agent_dir.to_path_buf(),
            });
            let pattern = relative_path(&base, &r.path);
            let updated = with_toggle(file.string_list(key), &pattern, enabled);
            file.save_key(key, Value::Array(updated.into_iter().map(Value::String).collect()))
        }
    }
}
