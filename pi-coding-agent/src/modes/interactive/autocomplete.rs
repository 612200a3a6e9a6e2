//! The editor's completions: the `/` command menu (built-in commands, prompt templates, skills,
//! extension commands), `@` file search under the working directory (honouring `.gitignore`),
//! and Tab path completion of the word before the cursor.

use std::path::{Path, PathBuf};

use pi_tui::SelectItem;
use pi_tui::components::AutocompleteProvider;

/// At most this many file suggestions.
const MAX_FILES: usize = 20;
/// At most this many files are looked at for one `@` query.
const MAX_SCANNED: usize = 20_000;

/// Commands, files and paths.
pub(crate) struct Completions {
    /// `(name, description)` of every `/` command.
    pub(crate) commands: Vec<(String, String)>,
    pub(crate) cwd: PathBuf,
}

impl Completions {
    fn commands(&self, typed: &str) -> Vec<SelectItem> {
        pi_tui::fuzzy::fuzzy_filter(&self.commands, typed, |(n, _)| n.strip_prefix("skill:").unwrap_or(n).to_owned())
            .into_iter()
            .map(|(n, d)| SelectItem::new(format!("/{n}"), n.as_str(), (!d.is_empty()).then_some(d.as_str())))
            .collect()
    }

    /// Files whose path relative to the cwd contains `query` (case-insensitive); names that start
    /// with it first, then shorter paths.
    fn files(&self, query: &str) -> Vec<SelectItem> {
        let q = query.to_lowercase();
        let mut found: Vec<(bool, String, bool)> = Vec::new();
        let walker = ignore::WalkBuilder::new(&self.cwd).hidden(true).git_ignore(true).build();
        for entry in walker.flatten().take(MAX_SCANNED) {
            let Ok(rel) = entry.path().strip_prefix(&self.cwd) else { continue };
            let rel = rel.to_string_lossy().into_owned();
            if rel.is_empty() || !rel.to_lowercase().contains(&q) {
                continue;
            }
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            let name = Path::new(&rel).file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
            found.push((!name.starts_with(&q), rel, is_dir));
        }
        found.sort_by(|a, b| (a.0, a.1.len(), &a.1).cmp(&(b.0, b.1.len(), &b.1)));
        found
            .into_iter()
            .take(MAX_FILES)
            .map(|(_, rel, is_dir)| {
                let shown = if is_dir { format!("{rel}/") } else { rel };
                let value = if is_dir { format!("@{shown}") } else { format!("@{shown} ") };
                SelectItem::new(value, shown.as_str(), None)
            })
            .collect()
    }

    /// Entries of the word's folder whose names start with the word's last part.
    fn paths(&self, word: &str) -> Vec<SelectItem> {
        let (dir, stem) = match word.rfind('/') {
            Some(i) => (&word[..=i], &word[i + 1..]),
            None => ("", word),
        };
        let base = if dir.starts_with('/') {
            PathBuf::from(dir)
        } else if let Some(rest) = dir.strip_prefix("~/") {
            std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default().join(rest)
        } else {
            self.cwd.join(dir)
        };
        let Ok(read) = std::fs::read_dir(&base) else { return Vec::new() };
        let mut names: Vec<(String, bool)> = read
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let hidden = name.starts_with('.') && !stem.starts_with('.');
                (name.starts_with(stem) && !hidden).then(|| (name, e.file_type().is_ok_and(|t| t.is_dir())))
            })
            .collect();
        names.sort();
        names
            .into_iter()
            .take(MAX_FILES)
            .map(|(name, is_dir)| {
                let label = if is_dir { format!("{name}/") } else { name };
                SelectItem::new(format!("{dir}{label}"), label.as_str(), None)
            })
            .collect()
    }
}

impl AutocompleteProvider for Completions {
    fn suggestions(&self, prefix: &str) -> Option<(Vec<SelectItem>, usize)> {
        if let Some(typed) = prefix.strip_prefix('/')
            && !typed.contains(' ')
        {
            let items = self.commands(typed);
            return (!items.is_empty()).then_some((items, prefix.len()));
        }
        let start = prefix.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        let word = &prefix[start..];
        let items = match word.strip_prefix('@') {
            Some(query) => self.files(query),
            None if !word.is_empty() => self.paths(word),
            None => Vec::new(),
        };
        (!items.is_empty()).then_some((items, word.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_files_and_paths() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("src")).expect("src");
        std::fs::write(dir.path().join("src/main.rs"), "").expect("file");
        std::fs::write(dir.path().join("notes.txt"), "").expect("file");
        let c = Completions {
            commands: vec![("model".into(), "Select model".into()), ("mcp".into(), String::new())],
            cwd: dir.path().to_path_buf(),
        };
        let (items, n) = c.suggestions("/mo").expect("commands");
        // pi-tui's fuzzyFilter keeps "model" and drops "mcp" (no "o"), as the reference's does.
        assert_eq!((items.len(), items[0].value.as_str(), n), (1, "/model", 3));
        let (items, n) = c.suggestions("look at @mai").expect("files");
        assert_eq!((items[0].value.as_str(), n), ("@src/main.rs ", 4));
        let (items, n) = c.suggestions("cat sr").expect("paths");
        assert_eq!((items[0].value.as_str(), n), ("src/", 2));
        assert!(c.suggestions("/model x").is_none());
    }
}
