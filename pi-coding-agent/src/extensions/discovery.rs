//! Which extensions a session loads, as pi 1.6.0's resource loader decides (`collectAutoExtensionEntries`,
//! `resolveExtensionEntries`, settings `extensions` arrays): the project's `.pi/extensions/` (only
//! when [`project_extensions_allowed`]), the user's `<agentDir>/extensions/`, the plain paths of
//! the global and project settings' `extensions` arrays, then the explicit paths (`-e`,
//! `additionalExtensionPaths`), each file once. With `no_extensions` only the explicit paths load.
//!
//! In a folder: a `package.json` whose `pi.extensions` names entries, else `index.ts` / `index.js`,
//! else its `*.ts` / `*.js` files and the subfolders that have such an entry (dot-entries and
//! `node_modules` skipped). A settings entry starting with `!` (pattern) or `-` (exact path)
//! disables a discovered extension, `+` enables it again.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// What to discover from.
#[derive(Clone, Debug, Default)]
pub struct DiscoveryOptions {
    /// The session's working directory.
    pub cwd: PathBuf,
    /// The agent directory (`~/.pi/agent`).
    pub agent_dir: PathBuf,
    /// Explicit paths (`-e`, `additionalExtensionPaths`), resolved against `cwd`.
    pub additional: Vec<PathBuf>,
    /// Skip everything but the explicit paths (`--no-extensions`).
    pub no_extensions: bool,
    /// Whether the project is trusted (see [`project_extensions_allowed`]).
    pub project_trusted: bool,
}

/// Whether the project's own extensions (`.pi/extensions/`, the project settings' `extensions`)
/// may load: pi's default is the project's trust.
pub fn project_extensions_allowed(options: &DiscoveryOptions) -> bool {
    options.project_trusted
}

/// `.` and `..` resolved without touching the file system (Node's `path.resolve`).
fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn is_extension_file(name: &str) -> bool {
    name.ends_with(".ts") || name.ends_with(".js")
}

/// A folder's declared entries: `package.json`'s `pi.extensions`, else `index.ts`, else `index.js`.
pub fn resolve_extension_entries(dir: &Path) -> Option<Vec<PathBuf>> {
    if let Ok(text) = std::fs::read_to_string(dir.join("package.json"))
        && let Ok(pkg) = serde_json::from_str::<Value>(&text)
        && let Some(list) = pkg.pointer("/pi/extensions").and_then(Value::as_array)
    {
        let entries: Vec<PathBuf> =
            list.iter().filter_map(Value::as_str).map(|p| normalize(&dir.join(p))).filter(|p| p.exists()).collect();
        if !entries.is_empty() {
            return Some(entries);
        }
    }
    ["index.ts", "index.js"].iter().map(|n| dir.join(n)).find(|p| p.exists()).map(|p| vec![p])
}

/// The extensions of an extensions folder (pi's `collectAutoExtensionEntries`), sorted by name.
pub fn collect_extension_entries(dir: &Path) -> Vec<PathBuf> {
    if !dir.is_dir() {
        return Vec::new();
    }
    if let Some(entries) = resolve_extension_entries(dir) {
        return entries;
    }
    let Ok(read) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut names: Vec<(String, PathBuf)> = read
        .filter_map(Result::ok)
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(name, _)| !name.starts_with('.') && name != "node_modules")
        .collect();
    names.sort();
    let mut out = Vec::new();
    for (name, path) in names {
        if path.is_file() && is_extension_file(&name) {
            out.push(path);
        } else if path.is_dir()
            && let Some(entries) = resolve_extension_entries(&path)
        {
            out.extend(entries);
        }
    }
    out
}

fn settings_entries(file: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(file) else { return Vec::new() };
    let Ok(value) = serde_json::from_str::<Value>(&text) else { return Vec::new() };
    value
        .get("extensions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

fn expand(path: &str, base: &Path) -> PathBuf {
    if let Some(rest) = path.strip_prefix("~/")
        && let Some(home) = dirs::home_dir()
    {
        return home.join(rest);
    }
    let p = PathBuf::from(path);
    normalize(&if p.is_absolute() { p } else { base.join(p) })
}

/// `*` matches within a path segment, `**` across segments.
fn glob_match(pattern: &str, text: &str) -> bool {
    fn go(p: &[u8], t: &[u8]) -> bool {
        match p.first() {
            None => t.is_empty(),
            Some(b'*') if p.get(1) == Some(&b'*') => (0..=t.len()).any(|i| go(&p[2..], &t[i..])),
            Some(b'*') => (0..=t.len()).take_while(|&i| i == 0 || t[i - 1] != b'/').any(|i| go(&p[1..], &t[i..])),
            Some(c) => t.first() == Some(c) && go(&p[1..], &t[1..]),
        }
    }
    go(pattern.as_bytes(), text.as_bytes())
}

/// Whether a discovered `path` stays enabled under the `!`/`+`/`-` entries (pi's `isEnabledByOverrides`).
fn enabled_by_overrides(path: &Path, entries: &[String], base: &Path) -> bool {
    let text = path.to_string_lossy();
    let rel = path.strip_prefix(base).map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    let matches =
        |pattern: &str| glob_match(pattern, &text) || glob_match(pattern, &rel) || expand(pattern, base) == path;
    let exact = |pattern: &str| expand(pattern, base) == path;
    let mut enabled = true;
    if entries.iter().filter_map(|e| e.strip_prefix('!')).any(matches) {
        enabled = false;
    }
    if entries.iter().filter_map(|e| e.strip_prefix('+')).any(exact) {
        enabled = true;
    }
    if entries.iter().filter_map(|e| e.strip_prefix('-')).any(exact) {
        enabled = false;
    }
    enabled
}

/// An explicit or settings path: a file as is, a folder by its entries or its contents.
fn expand_configured(path: PathBuf) -> Vec<PathBuf> {
    if path.is_dir() {
        return resolve_extension_entries(&path).unwrap_or_else(|| collect_extension_entries(&path));
    }
    vec![path]
}

/// The extension paths a session loads once packages resolved the configured ones: the explicit
/// paths (`-e`, `additionalExtensionPaths`, resolved against `cwd`) first, as pi's
/// `resolveExtensionSources`, then `resolved` (packages, settings arrays and the conventional
/// folders, from [`crate::packages`]), each once.
pub fn extension_load_order(cwd: &Path, additional: &[PathBuf], resolved: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> =
        additional.iter().flat_map(|p| expand_configured(expand(&p.to_string_lossy(), cwd))).collect();
    out.extend(resolved.iter().cloned());
    let mut seen = HashSet::new();
    out.retain(|p| seen.insert(p.canonicalize().unwrap_or_else(|_| p.clone())));
    out
}

/// The extension paths to load without packages, in pi's order, each once.
pub fn discover_extension_paths(options: &DiscoveryOptions) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if !options.no_extensions {
        let project_base = options.cwd.join(".pi");
        let global_entries = settings_entries(&options.agent_dir.join("settings.json"));
        let project_allowed = project_extensions_allowed(options);
        let project_entries =
            if project_allowed { settings_entries(&project_base.join("settings.json")) } else { Vec::new() };
        if project_allowed {
            for path in collect_extension_entries(&project_base.join("extensions")) {
                if enabled_by_overrides(&path, &project_entries, &project_base) {
                    out.push(path);
                }
            }
        }
        for path in collect_extension_entries(&options.agent_dir.join("extensions")) {
            if enabled_by_overrides(&path, &global_entries, &options.agent_dir) {
                out.push(path);
            }
        }
        let plain = |entries: &[String], base: &Path| -> Vec<PathBuf> {
            entries
                .iter()
                .filter(|e| !e.starts_with(['!', '+', '-']))
                .flat_map(|e| expand_configured(expand(e, base)))
                .collect()
        };
        out.extend(plain(&project_entries, &project_base));
        out.extend(plain(&global_entries, &options.agent_dir));
    }
    for path in &options.additional {
        out.extend(expand_configured(expand(&path.to_string_lossy(), &options.cwd)));
    }
    let mut seen = HashSet::new();
    out.retain(|p| seen.insert(p.canonicalize().unwrap_or_else(|_| p.clone())));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("extensions/*.ts", "extensions/a.ts"));
        assert!(!glob_match("extensions/*.ts", "extensions/x/a.ts"));
        assert!(glob_match("**/a.ts", "extensions/x/a.ts"));
    }

    #[test]
    fn discovers_in_pis_order_behind_trust_and_overrides() {
        let dir = tempfile::tempdir().unwrap();
        let (cwd, agent) = (dir.path().join("proj"), dir.path().join("agent"));
        let write = |p: PathBuf, text: &str| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write(cwd.join(".pi/extensions/p.ts"), "");
        write(agent.join("extensions/b.ts"), "");
        write(agent.join("extensions/a.js"), "");
        write(agent.join("extensions/skip.md"), "");
        write(agent.join("extensions/.hidden.ts"), "");
        write(agent.join("extensions/folder/index.ts"), "");
        write(agent.join("extensions/pkg/package.json"), r#"{"pi":{"extensions":["./main.ts"]}}"#);
        write(agent.join("extensions/pkg/main.ts"), "");
        write(agent.join("settings.json"), r#"{"extensions":["-extensions/b.ts","extra.ts"]}"#);
        write(agent.join("extra.ts"), "");
        let mut options = DiscoveryOptions { cwd: cwd.clone(), agent_dir: agent.clone(), ..Default::default() };
        let names = |paths: Vec<PathBuf>| -> Vec<String> {
            paths.iter().map(|p| p.strip_prefix(dir.path()).unwrap().to_string_lossy().into_owned()).collect()
        };
        assert_eq!(
            names(discover_extension_paths(&options)),
            [
                "agent/extensions/a.js",
                "agent/extensions/folder/index.ts",
                "agent/extensions/pkg/main.ts",
                "agent/extra.ts"
            ]
        );
        options.project_trusted = true;
        assert_eq!(names(discover_extension_paths(&options))[0], "proj/.pi/extensions/p.ts");
        options.no_extensions = true;
        options.additional = vec![PathBuf::from("../agent/extensions/b.ts")];
        assert_eq!(names(discover_extension_paths(&options)), ["agent/extensions/b.ts"]);
    }
}
