//! Finding resource files as pi's package manager does: the conventional folders' walkers
//! (extensions, skills, prompts, themes), manifest entries with globs, and the `!`, `+` and `-`
//! filter patterns of settings and manifests.

use std::path::{Path, PathBuf};

use globset::GlobBuilder;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

pub(crate) use crate::sdk::discovery::SkillDirMode;

use super::source::relative_path;

/// The four resource kinds, in pi's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResourceKind {
    /// `.ts` / `.js` extensions.
    Extensions,
    /// Skills (`SKILL.md` roots and markdown files).
    Skills,
    /// Prompt templates (`.md`).
    Prompts,
    /// Themes (`.json`).
    Themes,
}

impl ResourceKind {
    /// All four, in pi's order.
    pub const ALL: [ResourceKind; 4] =
        [ResourceKind::Extensions, ResourceKind::Skills, ResourceKind::Prompts, ResourceKind::Themes];

    /// pi's `RESOURCE_TYPE_LABELS` (`Extensions`, `Skills`, `Prompts`, `Themes`).
    pub fn label(self) -> &'static str {
        match self {
            ResourceKind::Extensions => "Extensions",
            ResourceKind::Skills => "Skills",
            ResourceKind::Prompts => "Prompts",
            ResourceKind::Themes => "Themes",
        }
    }

    /// The settings / manifest key and conventional folder name.
    pub fn key(self) -> &'static str {
        match self {
            ResourceKind::Extensions => "extensions",
            ResourceKind::Skills => "skills",
            ResourceKind::Prompts => "prompts",
            ResourceKind::Themes => "themes",
        }
    }

    fn matches_file(self, name: &str) -> bool {
        match self {
            ResourceKind::Extensions => name.ends_with(".ts") || name.ends_with(".js"),
            ResourceKind::Skills | ResourceKind::Prompts => name.ends_with(".md"),
            ResourceKind::Themes => name.ends_with(".json"),
        }
    }
}

struct Entry {
    name: String,
    path: PathBuf,
    is_dir: bool,
    is_file: bool,
}

fn read_dir_sorted(dir: &Path) -> Vec<Entry> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out: Vec<Entry> = rd
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let path = e.path();
            let meta = std::fs::metadata(&path).ok()?;
            Some(Entry { name, path, is_dir: meta.is_dir(), is_file: meta.is_file() })
        })
        .collect();
    out.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    out
}

/// Ignore rules of `.gitignore`, `.ignore` and `.fdignore` files met on the way down.
struct Ignores {
    root: PathBuf,
    lines: Vec<String>,
    matcher: Gitignore,
}

impl Ignores {
    fn new(root: &Path) -> Self {
        Ignores { root: root.to_path_buf(), lines: Vec::new(), matcher: Gitignore::empty() }
    }

    fn add_dir(&mut self, dir: &Path) {
        let rel = relative_path(&self.root, dir);
        let prefix = if rel.is_empty() { String::new() } else { format!("{rel}/") };
        let before = self.lines.len();
        for name in [".gitignore", ".ignore", ".fdignore"] {
            let Ok(text) = std::fs::read_to_string(dir.join(name)) else { continue };
            for line in text.lines() {
                let t = line.trim();
                if t.is_empty() || (t.starts_with('#') && !t.starts_with("\\#")) {
                    continue;
                }
                let (neg, pat) = match line.strip_prefix('!') {
                    Some(rest) => (true, rest),
                    None => (false, line.strip_prefix('\\').filter(|r| r.starts_with('!')).unwrap_or(line)),
                };
                let pat = pat.strip_prefix('/').unwrap_or(pat);
                self.lines.push(format!("{}{prefix}{pat}", if neg { "!" } else { "" }));
            }
        }
        if self.lines.len() != before {
            let mut b = GitignoreBuilder::new(&self.root);
            for l in &self.lines {
                let _ = b.add_line(None, l);
            }
            self.matcher = b.build().unwrap_or_else(|_| Gitignore::empty());
        }
    }

    fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        self.matcher.matched(rel, is_dir).is_ignore()
    }
}

fn collect_files(dir: &Path, kind: ResourceKind, ig: &mut Ignores, out: &mut Vec<PathBuf>) {
    if !dir.exists() {
        return;
    }
    ig.add_dir(dir);
    for e in read_dir_sorted(dir) {
        if e.name.starts_with('.') || e.name == "node_modules" || ig.ignores(&e.path, e.is_dir) {
            continue;
        }
        if e.is_dir {
            collect_files(&e.path, kind, ig, out);
        } else if e.is_file && kind.matches_file(&e.name) {
            out.push(e.path);
        }
    }
}

/// Skill files under `dir` (pi's `collectSkillEntries`; the walker the SDK shares).
pub(crate) fn skill_entries(dir: &Path, mode: SkillDirMode) -> Vec<PathBuf> {
    crate::sdk::discovery::collect_skill_entries(dir, mode)
}

/// Files directly in `dir` with the kind's extension (pi's `collectAutoPromptEntries` /
/// `collectAutoThemeEntries`).
pub(crate) fn flat_entries(dir: &Path, kind: ResourceKind) -> Vec<PathBuf> {
    if !dir.exists() {
        return Vec::new();
    }
    let mut ig = Ignores::new(dir);
    ig.add_dir(dir);
    read_dir_sorted(dir)
        .into_iter()
        .filter(|e| !e.name.starts_with('.') && e.name != "node_modules")
        .filter(|e| !ig.ignores(&e.path, false) && e.is_file && kind.matches_file(&e.name))
        .map(|e| e.path)
        .collect()
}

/// A directory's own extension entries: the `pi.extensions` of its package.json, else
/// `index.ts`, else `index.js` (pi's `resolveExtensionEntries`).
fn extension_entries_of(dir: &Path) -> Option<Vec<PathBuf>> {
    if let Some(manifest) = super::resolve::read_manifest(&dir.join("package.json"))
        && let Some(list) = manifest.get(&ResourceKind::Extensions)
    {
        let found: Vec<PathBuf> =
            list.iter().map(|p| super::source::resolve_from(p, dir)).filter(|p| p.exists()).collect();
        if !found.is_empty() {
            return Some(found);
        }
    }
    ["index.ts", "index.js"].iter().map(|n| dir.join(n)).find(|p| p.exists()).map(|p| vec![p])
}

/// Extensions under `dir` (pi's `collectAutoExtensionEntries`): the folder's own entries, else
/// its `.ts` / `.js` files and its subfolders' entries.
pub(crate) fn extension_entries(dir: &Path) -> Vec<PathBuf> {
    if !dir.exists() {
        return Vec::new();
    }
    if let Some(own) = extension_entries_of(dir) {
        return own;
    }
    let mut ig = Ignores::new(dir);
    ig.add_dir(dir);
    let mut out = Vec::new();
    for e in read_dir_sorted(dir) {
        if e.name.starts_with('.') || e.name == "node_modules" || ig.ignores(&e.path, e.is_dir) {
            continue;
        }
        if e.is_file && ResourceKind::Extensions.matches_file(&e.name) {
            out.push(e.path);
        } else if e.is_dir
            && let Some(sub) = extension_entries_of(&e.path)
        {
            out.extend(sub);
        }
    }
    out
}

/// The files of a resource folder (pi's `collectResourceFiles`).
pub(crate) fn resource_files(dir: &Path, kind: ResourceKind) -> Vec<PathBuf> {
    match kind {
        ResourceKind::Skills => skill_entries(dir, SkillDirMode::Pi),
        ResourceKind::Extensions => extension_entries(dir),
        _ => {
            let mut out = Vec::new();
            collect_files(dir, kind, &mut Ignores::new(dir), &mut out);
            out
        }
    }
}

/// Files of existing paths: a file itself, a folder's resource files.
pub(crate) fn files_from_paths(paths: &[PathBuf], kind: ResourceKind) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        match std::fs::metadata(p) {
            Ok(m) if m.is_file() => out.push(p.clone()),
            Ok(m) if m.is_dir() => out.extend(resource_files(p, kind)),
            _ => {}
        }
    }
    out
}

/// Whether an entry is a pattern rather than a plain path.
pub(crate) fn is_pattern(s: &str) -> bool {
    is_override(s) || s.contains('*') || s.contains('?')
}

/// `!`, `+` and `-` entries.
pub(crate) fn is_override(s: &str) -> bool {
    s.starts_with('!') || s.starts_with('+') || s.starts_with('-')
}

fn glob_match(pattern: &str, text: &str) -> bool {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher().is_match(text))
        .unwrap_or(false)
}

fn skill_parent(path: &Path) -> Option<&Path> {
    (path.file_name()? == "SKILL.md").then(|| path.parent()).flatten()
}

/// pi's `matchesAnyPattern`: a glob against the path relative to `base`, the file name or the
/// full path (for `SKILL.md`, also its folder's).
pub(crate) fn matches_any(path: &Path, patterns: &[&str], base: &Path) -> bool {
    let candidates = |p: &Path| {
        [
            relative_path(base, p),
            p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            p.display().to_string(),
        ]
    };
    let own = candidates(path);
    let parent = skill_parent(path).map(candidates);
    patterns.iter().any(|pat| {
        let pat = pat.strip_prefix("./").unwrap_or(pat);
        own.iter().any(|c| glob_match(pat, c)) || parent.as_ref().is_some_and(|p| p.iter().any(|c| glob_match(pat, c)))
    })
}

/// pi's `matchesAnyExactPattern`: the same candidates compared exactly.
pub(crate) fn matches_any_exact(path: &Path, patterns: &[&str], base: &Path) -> bool {
    let own = [relative_path(base, path), path.display().to_string()];
    let parent = skill_parent(path).map(|p| [relative_path(base, p), p.display().to_string()]);
    patterns.iter().any(|pat| {
        let pat = pat.strip_prefix("./").unwrap_or(pat);
        own.iter().any(|c| c == pat) || parent.as_ref().is_some_and(|p| p.iter().any(|c| c == pat))
    })
}

/// pi's `applyPatterns`: includes (all when none), then `!` excludes, `+` force-includes and
/// `-` force-excludes. Returns the enabled files.
pub(crate) fn apply_patterns(all: &[PathBuf], patterns: &[String], base: &Path) -> Vec<PathBuf> {
    let strip = |prefix: char| -> Vec<&str> { patterns.iter().filter_map(|p| p.strip_prefix(prefix)).collect() };
    let includes: Vec<&str> = patterns.iter().filter(|p| !is_override(p)).map(String::as_str).collect();
    let (excludes, force_in, force_out) = (strip('!'), strip('+'), strip('-'));
    let mut result: Vec<PathBuf> = if includes.is_empty() {
        all.to_vec()
    } else {
        all.iter().filter(|f| matches_any(f, &includes, base)).cloned().collect()
    };
    if !excludes.is_empty() {
        result.retain(|f| !matches_any(f, &excludes, base));
    }
    for f in all {
        if !force_in.is_empty() && !result.contains(f) && matches_any_exact(f, &force_in, base) {
            result.push(f.clone());
        }
    }
    if !force_out.is_empty() {
        result.retain(|f| !matches_any_exact(f, &force_out, base));
    }
    result
}

/// pi's `isEnabledByOverrides`: an auto-discovered file is enabled unless a `!` glob, then a
/// `+` / `-` exact entry, says otherwise.
pub(crate) fn enabled_by_overrides(path: &Path, patterns: &[String], base: &Path) -> bool {
    let strip = |prefix: char| -> Vec<&str> { patterns.iter().filter_map(|p| p.strip_prefix(prefix)).collect() };
    let (excludes, force_in, force_out) = (strip('!'), strip('+'), strip('-'));
    let mut enabled = true;
    if !excludes.is_empty() && matches_any(path, &excludes, base) {
        enabled = false;
    }
    if !force_in.is_empty() && matches_any_exact(path, &force_in, base) {
        enabled = true;
    }
    if !force_out.is_empty() && matches_any_exact(path, &force_out, base) {
        enabled = false;
    }
    enabled
}

/// Expands a manifest glob under `root` (pi's `expandPackageGlob`): matches of the relative
/// path, without dot-prefixed segments, sorted.
pub(crate) fn expand_glob(pattern: &str, root: &Path) -> Vec<PathBuf> {
    let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
    let Ok(glob) = GlobBuilder::new(pattern).literal_separator(true).build() else { return Vec::new() };
    let matcher = glob.compile_matcher();
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    let deep = pattern.contains("node_modules");
    while let Some(dir) = stack.pop() {
        for e in read_dir_sorted(&dir) {
            if e.name.starts_with('.') || (e.name == "node_modules" && !deep) {
                continue;
            }
            if matcher.is_match(relative_path(root, &e.path)) {
                out.push(e.path.clone());
            }
            if e.is_dir {
                stack.push(e.path);
            }
        }
    }
    out.sort();
    out
}
