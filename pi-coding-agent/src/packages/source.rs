//! Package sources as pi parses them (`parseSource`): `npm:<spec>`, git sources (`git:` shorthand
//! or an explicit `https://` / `ssh://` / `git://` URL) and local paths.

use std::path::{Component, Path, PathBuf};

/// A parsed package source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PackageSource {
    /// `npm:<name>[@<version or range>]`.
    Npm(NpmSource),
    /// A git repository.
    Git(GitSource),
    /// A file or directory on disk.
    Local {
        /// The path as written.
        path: String,
    },
}

/// An npm source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpmSource {
    /// What follows `npm:` (trimmed), e.g. `@scope/pkg@1.2.0`.
    pub spec: String,
    /// The package name.
    pub name: String,
    /// The version or range after the name, if any.
    pub version: Option<String>,
    /// Whether the version is one exact version (pinned: `pi update` leaves it).
    pub pinned: bool,
}

/// A git source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitSource {
    /// The URL `git clone` is given.
    pub repo: String,
    /// The host, e.g. `github.com`.
    pub host: String,
    /// The repository path without `.git`, e.g. `user/repo`.
    pub path: String,
    /// The ref after `@`, if any (pinned).
    pub git_ref: Option<String>,
}

/// pi's `isLocalPath`: anything but `npm:`, `git:`, `github:`, `http:`, `https:`, `ssh:` and
/// `builtin:` sources.
pub fn is_local_path(value: &str) -> bool {
    let t = value.trim();
    !["npm:", "git:", "github:", "http:", "https:", "ssh:", "builtin:"].iter().any(|p| t.starts_with(p))
}

/// Parses a source string (pi's `parseSource`).
///
/// ```
/// use pi_coding_agent::packages::{PackageSource, parse_source};
/// let PackageSource::Npm(n) = parse_source("npm:@foo/bar@1.2.3") else { panic!() };
/// assert_eq!((n.name.as_str(), n.pinned), ("@foo/bar", true));
/// let PackageSource::Git(g) = parse_source("git:github.com/user/repo@v1") else { panic!() };
/// assert_eq!((g.repo.as_str(), g.path.as_str(), g.git_ref.as_deref()), ("https://github.com/user/repo", "user/repo", Some("v1")));
/// assert!(matches!(parse_source("./pkg"), PackageSource::Local { .. }));
/// ```
pub fn parse_source(source: &str) -> PackageSource {
    if let Some(spec) = source.strip_prefix("npm:") {
        let spec = spec.trim().to_string();
        let (name, version) = parse_npm_spec(&spec);
        let pinned = version.as_deref().is_some_and(is_exact_version);
        return PackageSource::Npm(NpmSource { spec, name, version, pinned });
    }
    if is_local_path(source) {
        return PackageSource::Local { path: source.to_string() };
    }
    match parse_git_url(source) {
        Some(g) => PackageSource::Git(g),
        None => PackageSource::Local { path: source.to_string() },
    }
}

/// pi's `parseNpmSpec`: the name (with its scope) and what follows the next `@`.
pub fn parse_npm_spec(spec: &str) -> (String, Option<String>) {
    let start = usize::from(spec.starts_with('@'));
    match spec[start..].find('@') {
        Some(i) if i > 0 && start + i + 1 < spec.len() => {
            let at = start + i;
            (spec[..at].to_string(), Some(spec[at + 1..].to_string()))
        }
        Some(_) => (spec.to_string(), None),
        None => (spec.to_string(), None),
    }
}

/// semver's `valid`: one exact version (a leading `v` or `=` allowed).
pub fn is_exact_version(version: &str) -> bool {
    let v = version.trim().trim_start_matches('=').trim_start_matches('v');
    semver::Version::parse(v).is_ok()
}

/// Splits `repo@ref` the way pi's `splitRef` does for scp-like, URL and shorthand forms.
fn split_ref(url: &str) -> (String, Option<String>) {
    let split_at = |prefix: &str, rest: &str| -> Option<(String, String)> {
        let i = rest.find('@')?;
        let (path, git_ref) = (&rest[..i], &rest[i + 1..]);
        (!path.is_empty() && !git_ref.is_empty()).then(|| (format!("{prefix}{path}"), git_ref.to_string()))
    };
    if let Some(rest) = url.strip_prefix("git@")
        && let Some(colon) = rest.find(':')
    {
        let prefix = format!("git@{}:", &rest[..colon]);
        return match split_at(&prefix, &rest[colon + 1..]) {
            Some((repo, r)) => (repo, Some(r)),
            None => (url.to_string(), None),
        };
    }
    if let Some(scheme_end) = url.find("://") {
        let after = &url[scheme_end + 3..];
        let path_start = after.find('/').map_or(after.len(), |i| i);
        let prefix = format!("{}/", &url[..scheme_end + 3 + path_start]);
        let path = after[path_start..].trim_start_matches('/');
        return match split_at(&prefix, path) {
            Some((repo, r)) => (repo.trim_end_matches('/').to_string(), Some(r)),
            None => (url.to_string(), None),
        };
    }
    match url.find('/') {
        Some(slash) => match split_at(&url[..=slash], &url[slash + 1..]) {
            Some((repo, r)) => (repo, Some(r)),
            None => (url.to_string(), None),
        },
        None => (url.to_string(), None),
    }
}

fn unsafe_part(value: &str, allow_slash: bool) -> bool {
    value.contains('\0')
        || value.contains('\\')
        || value.starts_with('/')
        || (!allow_slash && value.contains('/'))
        || value.split('/').any(|s| s == "..")
        || value.contains('%')
}

fn build_git_source(repo: String, host: &str, path: &str, git_ref: Option<String>) -> Option<GitSource> {
    if path.starts_with('/') {
        return None;
    }
    let path = path.trim_end_matches(".git").trim_start_matches('/').to_string();
    if host.is_empty() || path.is_empty() || path.split('/').count() < 2 {
        return None;
    }
    if unsafe_part(host, false) || unsafe_part(&path, true) {
        return None;
    }
    Some(GitSource { repo, host: host.to_string(), path, git_ref })
}

/// pi's `parseGitUrl`: with `git:` any shorthand (`host/user/repo`, `git@host:user/repo`, URLs);
/// without it only explicit `https://`, `http://`, `ssh://` and `git://` URLs.
pub fn parse_git_url(source: &str) -> Option<GitSource> {
    let trimmed = source.trim();
    let (has_prefix, url) = match trimmed.strip_prefix("git:") {
        Some(rest) => (true, rest.trim()),
        None => (false, trimmed),
    };
    let lower = url.to_ascii_lowercase();
    let is_url = ["https://", "http://", "ssh://", "git://"].iter().any(|p| lower.starts_with(p));
    if !has_prefix && !is_url {
        return None;
    }
    let (repo, git_ref) = split_ref(url);
    if let Some(rest) = repo.strip_prefix("git@")
        && let Some(colon) = rest.find(':')
    {
        let (host, path) = (&rest[..colon], &rest[colon + 1..]);
        return build_git_source(repo.clone(), host, path, git_ref);
    }
    if is_url {
        let after = &repo[repo.find("://")? + 3..];
        let path_start = after.find('/').unwrap_or(after.len());
        let authority = &after[..path_start];
        let host_port = authority.rsplit('@').next().unwrap_or(authority);
        let host = host_port.split(':').next().unwrap_or(host_port);
        return build_git_source(repo.clone(), host, after[path_start..].trim_start_matches('/'), git_ref);
    }
    let slash = repo.find('/')?;
    let host = &repo[..slash];
    if !host.contains('.') && host != "localhost" {
        return None;
    }
    build_git_source(format!("https://{repo}"), host, &repo[slash + 1..], git_ref)
}

/// pi's `resolvePath(input, base, { trim: true })`: trimmed, `~` expanded, absolute against
/// `base`, `.` and `..` folded.
pub fn resolve_from(input: &str, base: &Path) -> PathBuf {
    let input = input.trim();
    let home = crate::trust::home_dir();
    let expanded = match (input, &home) {
        ("~", Some(h)) => h.clone(),
        (s, Some(h)) if s.starts_with("~/") => h.join(&s[2..]),
        (s, _) => PathBuf::from(s.strip_prefix("file://").unwrap_or(s)),
    };
    let joined = if expanded.is_absolute() { expanded } else { base.join(expanded) };
    let mut out = PathBuf::new();
    for c in joined.components() {
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

/// Node's `path.relative(from, to)` for absolute, normalized paths (`""` when equal).
pub fn relative_path(from: &Path, to: &Path) -> String {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); from.len() - common];
    parts.extend(to[common..].iter().map(|c| c.as_os_str().to_string_lossy().into_owned()));
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_sources_in_every_form() {
        let g = parse_git_url("git:git@github.com:user/repo@v2").unwrap();
        assert_eq!(
            (g.repo.as_str(), g.host.as_str(), g.path.as_str()),
            ("git@github.com:user/repo", "github.com", "user/repo")
        );
        assert_eq!(g.git_ref.as_deref(), Some("v2"));
        let g = parse_git_url("https://github.com/user/repo.git").unwrap();
        assert_eq!(
            (g.repo.as_str(), g.path.as_str(), g.git_ref),
            ("https://github.com/user/repo.git", "user/repo", None)
        );
        let g = parse_git_url("ssh://git@example.com:22/a/b@abc123").unwrap();
        assert_eq!(
            (g.repo.as_str(), g.host.as_str(), g.git_ref.as_deref()),
            ("ssh://git@example.com:22/a/b", "example.com", Some("abc123"))
        );
        assert!(parse_git_url("github.com/user/repo").is_none());
        assert!(parse_git_url("git:nohost/user/repo").is_none());
        assert!(parse_git_url("git:example.com/../etc").is_none());
    }

    /// The reference's `parseGitUrl` on the same inputs (recorded with pi 1.6.0).
    #[test]
    fn git_urls_as_the_reference_parses_them() {
        type Parsed<'a> = Option<(&'a str, &'a str, &'a str, Option<&'a str>)>;
        let cases: [(&str, Parsed<'_>); 15] = [
            ("git:github.com/user/repo", Some(("https://github.com/user/repo", "github.com", "user/repo", None))),
            (
                "git:github.com/user/repo@v1",
                Some(("https://github.com/user/repo", "github.com", "user/repo", Some("v1"))),
            ),
            (
                "git:git@github.com:user/repo@v2",
                Some(("git@github.com:user/repo", "github.com", "user/repo", Some("v2"))),
            ),
            (
                "https://github.com/user/repo.git",
                Some(("https://github.com/user/repo.git", "github.com", "user/repo", None)),
            ),
            (
                "https://github.com/user/repo@abc",
                Some(("https://github.com/user/repo", "github.com", "user/repo", Some("abc"))),
            ),
            (
                "ssh://git@example.com:22/a/b@abc123",
                Some(("ssh://git@example.com:22/a/b", "example.com", "a/b", Some("abc123"))),
            ),
            (
                "ssh://git@github.com/user/repo",
                Some(("ssh://git@github.com/user/repo", "github.com", "user/repo", None)),
            ),
            (
                "git:example.com/user/gitpkg",
                Some(("https://example.com/user/gitpkg", "example.com", "user/gitpkg", None)),
            ),
            (
                "git:example.com/group/sub/repo@main",
                Some(("https://example.com/group/sub/repo", "example.com", "group/sub/repo", Some("main"))),
            ),
            ("http://localhost:8080/a/b", Some(("http://localhost:8080/a/b", "localhost", "a/b", None))),
            ("git:localhost/a/b", Some(("https://localhost/a/b", "localhost", "a/b", None))),
            ("github.com/user/repo", None),
            ("git:nohost/user/repo", None),
            ("git://example.org/x/y.git", None),
            (
                "https://gitlab.com/group/sub/proj",
                Some(("https://gitlab.com/group/sub/proj", "gitlab.com", "group/sub/proj", None)),
            ),
        ];
        for (input, expected) in cases {
            let got = parse_git_url(input);
            let got = got.as_ref().map(|g| (g.repo.as_str(), g.host.as_str(), g.path.as_str(), g.git_ref.as_deref()));
            assert_eq!(got, expected, "{input}");
        }
    }

    #[test]
    fn npm_specs() {
        assert_eq!(parse_npm_spec("foo"), ("foo".into(), None));
        assert_eq!(parse_npm_spec("foo@^1.0.0"), ("foo".into(), Some("^1.0.0".into())));
        assert_eq!(parse_npm_spec("@s/foo@1.0.0"), ("@s/foo".into(), Some("1.0.0".into())));
        assert_eq!(parse_npm_spec("@s/foo"), ("@s/foo".into(), None));
        assert!(!is_exact_version("^1.0.0"));
        assert!(is_exact_version("v1.0.0"));
    }

    #[test]
    fn relative_paths_as_node() {
        assert_eq!(relative_path(Path::new("/a/b"), Path::new("/a/c/d")), "../c/d");
        assert_eq!(relative_path(Path::new("/a"), Path::new("/a")), "");
    }
}
