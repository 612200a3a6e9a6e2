//! The directory walk shared by grep and find: ripgrep's `ignore` crate with the rules `rg
//! --hidden` and `fd --hidden` apply (hidden files included; `.gitignore`, `.ignore`, git excludes
//! and the tool's own ignore file respected), in a deterministic order (sorted by name).

use std::path::Path;

use ignore::WalkBuilder;

/// Whether `start` or one of its parents holds a `.git` entry (pi's repository check for fd).
pub fn inside_git_repo(start: &Path) -> bool {
    start.ancestors().any(|dir| dir.join(".git").exists())
}

/// A walker over `root` with the ignore rules of rg/fd.
///
/// `require_git`: whether `.gitignore` files apply only inside a git repository (rg's default).
/// `ignore_file`: the tool's own ignore file name (`.rgignore`, `.fdignore`).
pub fn walker(root: &Path, require_git: bool, ignore_file: &str) -> WalkBuilder {
    let mut b = WalkBuilder::new(root);
    b.hidden(false)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .require_git(require_git)
        .follow_links(false)
        .add_custom_ignore_filename(ignore_file)
        .sort_by_file_name(|a, b| a.cmp(b));
    b
}
