//! The order a session loads its extensions in (pi 1.6.0's resource loader): the explicit paths
//! (`-e`, `additionalExtensionPaths`) first, then what [`crate::packages::resolve_resources`]
//! resolved (packages, the settings `extensions` arrays, the conventional folders, behind
//! project trust), each file once. Which files a folder offers is the packages module's one
//! rule (`crate::packages::extension_entries`, pi's `collectAutoExtensionEntries`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

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

fn expand(path: &str, base: &Path) -> PathBuf {
    if let Some(rest) = path.strip_prefix("~/")
        && let Some(home) = dirs::home_dir()
    {
        return home.join(rest);
    }
    let p = PathBuf::from(path);
    normalize(&if p.is_absolute() { p } else { base.join(p) })
}

/// An explicit or settings path: a file as is, a folder by its entries or its contents.
fn expand_configured(path: PathBuf) -> Vec<PathBuf> {
    if path.is_dir() {
        return crate::packages::extension_entries(&path);
    }
    vec![path]
}

/// The extension paths a session loads once packages resolved the configured ones: the explicit
/// local paths (`-e`, `additionalExtensionPaths`, resolved against `cwd`) first, as pi's
/// `resolveExtensionSources`, then `resolved` (the installed `-e` npm / git packages' extensions,
/// then packages, settings arrays and the conventional folders, from [`crate::packages`]), each
/// once. `npm:` / `git:` / URL sources among `additional` are the package resolver's.
pub fn extension_load_order(cwd: &Path, additional: &[PathBuf], resolved: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = additional
        .iter()
        .map(|p| p.to_string_lossy())
        .filter(|p| crate::packages::is_local_path(p))
        .flat_map(|p| expand_configured(expand(&p, cwd)))
        .collect();
    out.extend(resolved.iter().cloned());
    let mut seen = HashSet::new();
    out.retain(|p| seen.insert(p.canonicalize().unwrap_or_else(|_| p.clone())));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_paths_first_each_file_once() {
        let dir = tempfile::tempdir().unwrap();
        let write = |p: PathBuf| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        };
        write(dir.path().join("x/a.ts"));
        write(dir.path().join("folder/index.ts"));
        let resolved = vec![dir.path().join("x/a.ts"), dir.path().join("z.ts")];
        let order =
            extension_load_order(dir.path(), &[PathBuf::from("folder"), PathBuf::from("x/../x/a.ts")], &resolved);
        assert_eq!(order, [dir.path().join("folder/index.ts"), dir.path().join("x/a.ts"), dir.path().join("z.ts")]);
    }

    #[test]
    fn package_sources_are_left_to_the_package_resolver() {
        let dir = tempfile::tempdir().unwrap();
        let order =
            extension_load_order(dir.path(), &[PathBuf::from("npm:foo"), PathBuf::from("git:github.com/a/b")], &[]);
        assert!(order.is_empty(), "{order:?}");
    }
}
