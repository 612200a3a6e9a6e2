//! File-system walking shared by skill and prompt-template discovery, as pi 1.6.0 walks:
//! entries in byte order of their names, symlinks followed (broken ones skipped), and
//! `.gitignore` / `.ignore` / `.fdignore` rules collected on the way down.

use std::path::{Component, Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

const IGNORE_FILE_NAMES: [&str; 3] = [".gitignore", ".ignore", ".fdignore"];

/// One directory entry with its followed type.
pub(crate) struct DirEntry {
    pub(crate) name: String,
    pub(crate) path: PathBuf,
    pub(crate) is_dir: bool,
    pub(crate) is_file: bool,
}

/// The entries of `dir` sorted by name (Node's `readdirSync` order); symlinks are resolved and
/// broken ones left out. `None` when the directory cannot be read.
pub(crate) fn read_dir_sorted(dir: &Path) -> Option<Vec<DirEntry>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let Ok(name) = entry.file_name().into_string() else { continue };
        let path = entry.path();
        let Ok(file_type) = entry.file_type() else { continue };
        let (is_dir, is_file) = if file_type.is_symlink() {
            match std::fs::metadata(&path) {
                Ok(m) => (m.is_dir(), m.is_file()),
                Err(_) => continue,
            }
        } else {
            (file_type.is_dir(), file_type.is_file())
        };
        out.push(DirEntry { name, path, is_dir, is_file });
    }
    out.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    Some(out)
}

/// Ignore rules gathered from the ignore files of a walk, relative to its root.
pub(crate) struct IgnoreRules {
    root: PathBuf,
    lines: Vec<String>,
    matcher: Gitignore,
}

/// pi's `prefixIgnorePattern`: a rule of a nested ignore file, rewritten relative to the root.
fn prefix_ignore_pattern(line: &str, prefix: &str) -> Option<String> {
    let trimmed = line.trim();
    if trimmed.is_empty() || (trimmed.starts_with('#') && !trimmed.starts_with("\\#")) {
        return None;
    }
    let (negated, mut pattern) = match line.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, line.strip_prefix("\\!").map_or(line, |_| &line[1..])),
    };
    if let Some(rest) = pattern.strip_prefix('/') {
        pattern = rest;
    }
    let prefixed = format!("{prefix}{pattern}");
    Some(if negated { format!("!{prefixed}") } else { prefixed })
}

impl IgnoreRules {
    pub(crate) fn new(root: &Path) -> Self {
        IgnoreRules { root: root.to_path_buf(), lines: Vec::new(), matcher: Gitignore::empty() }
    }

    /// Adds the rules of `dir`'s ignore files (pi's `addIgnoreRules`).
    pub(crate) fn add_dir(&mut self, dir: &Path) {
        let prefix = match dir.strip_prefix(&self.root) {
            Ok(rel) if !rel.as_os_str().is_empty() => format!("{}/", to_posix(rel)),
            _ => String::new(),
        };
        let before = self.lines.len();
        for name in IGNORE_FILE_NAMES {
            let Ok(content) = std::fs::read_to_string(dir.join(name)) else { continue };
            self.lines
                .extend(content.split('\n').filter_map(|l| prefix_ignore_pattern(l.trim_end_matches('\r'), &prefix)));
        }
        if self.lines.len() != before {
            let mut builder = GitignoreBuilder::new(&self.root);
            for line in &self.lines {
                if let Err(e) = builder.add_line(None, line) {
                    tracing::debug!(pattern = %line, error = %e, "ignore pattern skipped");
                }
            }
            self.matcher = builder.build().unwrap_or_else(|_| Gitignore::empty());
        }
    }

    /// Whether `path` (under the root) is ignored.
    pub(crate) fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        self.matcher.matched(rel, is_dir).is_ignore()
    }
}

fn to_posix(p: &Path) -> String {
    p.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/")
}

/// Which auto-discovery rules a skills directory follows.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum SkillDirMode {
    /// `~/.pi/agent/skills`, `.pi/skills`: markdown files only at the root.
    Pi,
    /// `.agents/skills`: markdown files only below the root.
    Agents,
}

/// The skill files auto-discovery finds under `dir` (pi's `collectSkillEntries`): a directory
/// with a `SKILL.md` is a skill root and is not searched further.
pub(crate) fn collect_skill_entries(dir: &Path, mode: SkillDirMode) -> Vec<PathBuf> {
    let mut rules = IgnoreRules::new(dir);
    let mut out = Vec::new();
    collect_skill_entries_in(dir, dir, mode, &mut rules, &mut out);
    out
}

fn collect_skill_entries_in(
    dir: &Path,
    root: &Path,
    mode: SkillDirMode,
    rules: &mut IgnoreRules,
    out: &mut Vec<PathBuf>,
) {
    if !dir.exists() {
        return;
    }
    rules.add_dir(dir);
    let Some(entries) = read_dir_sorted(dir) else { return };
    if let Some(skill) = entries.iter().find(|e| e.name == "SKILL.md" && e.is_file && !rules.ignores(&e.path, false)) {
        out.push(skill.path.clone());
        return;
    }
    for entry in &entries {
        if entry.name.starts_with('.') || entry.name == "node_modules" {
            continue;
        }
        let at_root = dir == root;
        let markdown = entry.is_file
            && entry.name.ends_with(".md")
            && !rules.ignores(&entry.path, false)
            && ((mode == SkillDirMode::Pi && at_root) || (mode == SkillDirMode::Agents && !at_root));
        if markdown {
            out.push(entry.path.clone());
            continue;
        }
        if entry.is_dir && !rules.ignores(&entry.path, true) {
            collect_skill_entries_in(&entry.path, root, mode, rules, out);
        }
    }
}

/// The template files auto-discovery finds directly in `dir` (pi's `collectAutoPromptEntries`).
pub(crate) fn collect_prompt_entries(dir: &Path) -> Vec<PathBuf> {
    if !dir.exists() {
        return Vec::new();
    }
    let mut rules = IgnoreRules::new(dir);
    rules.add_dir(dir);
    let Some(entries) = read_dir_sorted(dir) else { return Vec::new() };
    entries
        .into_iter()
        .filter(|e| !e.name.starts_with('.') && e.name != "node_modules")
        .filter(|e| !rules.ignores(&e.path, false) && e.is_file && e.name.ends_with(".md"))
        .map(|e| e.path)
        .collect()
}

/// `.agents/skills` of `start` and each ancestor up to the git repository root (or the
/// filesystem root outside a repository).
pub(crate) fn ancestor_agents_skill_dirs(start: &Path) -> Vec<PathBuf> {
    let git_root = start.ancestors().find(|d| d.join(".git").exists());
    let mut dirs = Vec::new();
    for dir in start.ancestors() {
        dirs.push(dir.join(".agents").join("skills"));
        if Some(dir) == git_root {
            break;
        }
    }
    dirs
}

/// pi's `resolvePath(input, base, { trim: true })`: trimmed, `~` expanded, made absolute against
/// `base` and normalised (`.` and `..` folded) without touching the file system.
pub fn resolve_path(input: &str, base: &Path, home: Option<&Path>) -> PathBuf {
    let input = input.trim();
    let expanded = match (input, home) {
        ("~", Some(h)) => h.to_path_buf(),
        (s, Some(h)) if s.starts_with("~/") => h.join(&s[2..]),
        (s, _) => PathBuf::from(s),
    };
    let joined = if expanded.is_absolute() { expanded } else { base.join(expanded) };
    normalize(&joined)
}

/// Folds `.` and `..` lexically.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The identity of a file for de-duplication: its canonical path when it exists.
pub(crate) fn path_key(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Reads a text file as Node's `readFileSync(path, "utf-8")` does (invalid UTF-8 replaced), with
/// Node's error message on failure (`ENOENT: no such file or directory, open '<path>'`), which
/// pi reports verbatim in its diagnostics.
pub(crate) fn read_text(path: &Path) -> Result<String, String> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) => Err(node_read_error(&e, path)),
    }
}

fn node_read_error(e: &std::io::Error, path: &Path) -> String {
    let (code, text) = match e.raw_os_error() {
        Some(1) => ("EPERM", "operation not permitted"),
        Some(2) => ("ENOENT", "no such file or directory"),
        Some(13) => ("EACCES", "permission denied"),
        Some(20) => ("ENOTDIR", "not a directory"),
        Some(21) => return "EISDIR: illegal operation on a directory, read".to_owned(),
        Some(24) => ("EMFILE", "too many open files"),
        Some(36) => ("ENAMETOOLONG", "name too long"),
        Some(40) => ("ELOOP", "too many symbolic links encountered"),
        _ => return e.to_string(),
    };
    format!("{code}: {text}, open '{}'", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_errors_use_nodes_wording() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("gone.md");
        assert_eq!(
            read_text(&missing),
            Err(format!("ENOENT: no such file or directory, open '{}'", missing.display()))
        );
        assert_eq!(read_text(dir.path()), Err("EISDIR: illegal operation on a directory, read".to_owned()));
        std::fs::write(&missing, b"ok \xff").unwrap();
        assert_eq!(read_text(&missing), Ok("ok \u{fffd}".to_owned()));
    }
}
