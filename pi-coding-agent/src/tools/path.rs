//! Resolving the paths the model gives to absolute paths, as pi does (`resolveToCwd`,
//! `resolveReadPath`).
//!
//! Unicode spaces become plain spaces, a leading `@` is dropped, `~` and `~/…` expand to the home
//! directory, `file://` URLs become paths, and the result is resolved against the cwd and
//! normalized lexically (`.` and `..` removed, like Node's `path.resolve`). Paths outside the cwd
//! are allowed, relative or absolute, as in pi.

use std::path::Path;

use unicode_normalization::UnicodeNormalization;

/// pi's `UNICODE_SPACES`: characters treated as a plain space in paths.
fn is_unicode_space(c: char) -> bool {
    matches!(c, '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}')
}

/// The current user's home directory (`$HOME`, else the password database).
pub fn home_dir() -> String {
    std::env::var("HOME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            nix::unistd::User::from_uid(nix::unistd::getuid())
                .ok()
                .flatten()
                .map(|u| u.dir.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "/".to_owned())
}

/// pi's `expandPath`: normalizes Unicode spaces, strips a leading `@`, expands `~` and `file://`.
///
/// ```
/// use pi_coding_agent::tools::path::expand_path;
/// assert_eq!(expand_path("@src/a\u{00A0}b.rs"), "src/a b.rs");
/// ```
pub fn expand_path(input: &str) -> String {
    let mut s: String = input.chars().map(|c| if is_unicode_space(c) { ' ' } else { c }).collect();
    if let Some(rest) = s.strip_prefix('@') {
        s = rest.to_owned();
    }
    if s == "~" {
        return home_dir();
    }
    if let Some(rest) = s.strip_prefix("~/") {
        return join(&home_dir(), rest);
    }
    if let Some(rest) = s.strip_prefix("file://") {
        // `file:///abs` or `file://localhost/abs`.
        let rest = rest.strip_prefix("localhost").unwrap_or(rest);
        return percent_decode(rest);
    }
    s
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Joins two path strings with `/` and normalizes the result.
fn join(base: &str, rest: &str) -> String {
    normalize(&format!("{base}/{rest}"))
}

/// Lexical normalization of an absolute path, as Node's `path.resolve` does it: collapses `//`,
/// drops `.`, resolves `..` (never above `/`), and removes a trailing `/`.
pub fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    let mut out = String::with_capacity(path.len() + 1);
    for p in &parts {
        out.push('/');
        out.push_str(p);
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// pi's `resolveToCwd`: the absolute, normalized path of `input` resolved against `cwd`.
///
/// ```
/// use pi_coding_agent::tools::path::resolve_to_cwd;
/// assert_eq!(resolve_to_cwd("../x/./y.txt", "/a/b"), "/a/x/y.txt");
/// assert_eq!(resolve_to_cwd("/etc//hosts/", "/a"), "/etc/hosts");
/// ```
pub fn resolve_to_cwd(input: &str, cwd: &str) -> String {
    let expanded = expand_path(input);
    if expanded.starts_with('/') { normalize(&expanded) } else { join(&resolve_base(cwd), &expanded) }
}

/// The cwd itself resolved (relative cwds are taken against the process's directory).
fn resolve_base(cwd: &str) -> String {
    if cwd.starts_with('/') {
        return cwd.to_owned();
    }
    let here = std::env::current_dir().map(|p| p.to_string_lossy().into_owned()).unwrap_or_else(|_| "/".to_owned());
    join(&here, cwd)
}

/// pi's `resolveReadPath`: [`resolve_to_cwd`], then, when that path does not exist, the macOS
/// variants that do: narrow no-break space before `AM`/`PM` (screenshots), NFD, a curly apostrophe,
/// and NFD with a curly apostrophe.
pub async fn resolve_read_path(input: &str, cwd: &str) -> String {
    let resolved = resolve_to_cwd(input, cwd);
    if exists(&resolved).await {
        return resolved;
    }
    let am_pm = am_pm_variant(&resolved);
    if am_pm != resolved && exists(&am_pm).await {
        return am_pm;
    }
    let nfd: String = resolved.nfd().collect();
    if nfd != resolved && exists(&nfd).await {
        return nfd;
    }
    let curly = resolved.replace('\'', "\u{2019}");
    if curly != resolved && exists(&curly).await {
        return curly;
    }
    let nfd_curly = nfd.replace('\'', "\u{2019}");
    if nfd_curly != resolved && exists(&nfd_curly).await {
        return nfd_curly;
    }
    resolved
}

/// Whether anything exists at `path` (pi's `access(F_OK)`: a dangling symlink does not count).
pub async fn exists(path: &str) -> bool {
    tokio::fs::metadata(Path::new(path)).await.is_ok()
}

/// Replaces `" AM."`/`" PM."` (any case) with a narrow no-break space before the `AM`/`PM`.
fn am_pm_variant(path: &str) -> String {
    let mut out = String::with_capacity(path.len() + 4);
    let mut rest = path;
    while let Some(i) = rest.find(' ') {
        let after = &rest[i + 1..];
        let b = after.as_bytes();
        let is_marker = b.len() >= 3
            && (b[0].eq_ignore_ascii_case(&b'a') || b[0].eq_ignore_ascii_case(&b'p'))
            && b[1].eq_ignore_ascii_case(&b'm')
            && b[2] == b'.';
        out.push_str(&rest[..i]);
        if is_marker {
            out.push('\u{202F}');
            out.push_str(&after[..3]);
            rest = &after[3..];
        } else {
            out.push(' ');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_like_node() {
        assert_eq!(resolve_to_cwd("a.txt", "/w"), "/w/a.txt");
        assert_eq!(resolve_to_cwd(".", "/w/"), "/w");
        assert_eq!(resolve_to_cwd("../../../..", "/w"), "/");
        assert_eq!(resolve_to_cwd("@/abs", "/w"), "/abs");
        assert_eq!(resolve_to_cwd("file:///tmp/a%20b", "/w"), "/tmp/a b");
        assert_eq!(resolve_to_cwd("~/x", "/w"), normalize(&format!("{}/x", home_dir())));
    }

    #[test]
    fn am_pm() {
        assert_eq!(am_pm_variant("/s/Shot 1.2 PM.png"), "/s/Shot 1.2\u{202F}PM.png");
        assert_eq!(am_pm_variant("/s/a am.b"), "/s/a\u{202F}am.b");
        assert_eq!(am_pm_variant("/s/a b"), "/s/a b");
    }
}
