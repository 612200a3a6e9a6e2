//! `/changelog`: pi's "What's New" from the package's `CHANGELOG.md`. pi reads the file of its
//! package directory (`PI_PACKAGE_DIR`, else the folder of the executable for the standalone
//! binary, else the npm package); this port reads `$PI_PACKAGE_DIR/CHANGELOG.md`, then a
//! `CHANGELOG.md` beside the executable, then the copy compiled into the binary (the crate's
//! `CHANGELOG.md`), so an installed `pi` always has its own.

use pi_tui::{Markdown, Spacer, Text, shared};

use super::app::App;

const GITHUB_REPO: &str = "earendil-works/pi";
const LINK_BASE_PATH: &str = "packages/coding-agent";

/// The changelog shipped with this binary.
const BUNDLED: &str = include_str!("../../../CHANGELOG.md");

/// A section being read: its version and lines.
type Open<'a> = ((u64, u64, u64), Vec<&'a str>);

/// One `## [x.y.z]` section.
struct Entry {
    version: (u64, u64, u64),
    content: String,
}

/// The changelog text pi would read, and where it came from.
fn changelog_text() -> String {
    let candidates = std::env::var_os("PI_PACKAGE_DIR")
        .map(std::path::PathBuf::from)
        .into_iter()
        .chain(std::env::current_exe().ok().and_then(|e| e.parent().map(|p| p.to_path_buf())));
    for dir in candidates {
        if let Ok(text) = std::fs::read_to_string(dir.join("CHANGELOG.md")) {
            return text;
        }
    }
    BUNDLED.to_owned()
}

fn parse_version(line: &str) -> Option<(u64, u64, u64)> {
    let rest = line.strip_prefix("##")?.trim_start();
    let rest = rest.strip_prefix('[').unwrap_or(rest);
    let mut parts = rest.splitn(3, '.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    let tail = parts.next()?;
    let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
    Some((major, minor, digits.parse().ok()?))
}

/// pi's `parseChangelog`: the `## ` sections whose heading starts with a version.
fn parse(text: &str) -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut current: Option<Open<'_>> = None;
    for line in text.split('\n') {
        if line.starts_with("## ") {
            if let Some((version, lines)) = current.take()
                && !lines.is_empty()
            {
                entries.push(Entry { version, content: lines.join("\n").trim().to_owned() });
            }
            current = parse_version(line).map(|v| (v, vec![line]));
        } else if let Some((_, lines)) = current.as_mut() {
            lines.push(line);
        }
    }
    if let Some((version, lines)) = current {
        entries.push(Entry { version, content: lines.join("\n").trim().to_owned() });
    }
    entries
}

/// pi's `normalizeChangelogLinks`: relative links point into the repository at the entry's tag.
fn normalize_links(markdown: &str, version: (u64, u64, u64)) -> String {
    let tag = format!("v{}.{}.{}", version.0, version.1, version.2);
    let re = regex::Regex::new(r"(!?\[[^\]\n]+\]\()([^\s)]+)((?:\s+[^)]*)?\))").expect("static regex");
    re.replace_all(markdown, |c: &regex::Captures<'_>| format!("{}{}{}", &c[1], normalize_target(&c[2], &tag), &c[3]))
        .into_owned()
}

fn normalize_target(target: &str, tag: &str) -> String {
    let legacy =
        regex::Regex::new(r"^https://github\.com/(?:badlogic|earendil-works)/pi-mono(/|$)").expect("static regex");
    let repo = format!("https://github.com/{GITHUB_REPO}");
    let mut t = legacy.replace(target, format!("{repo}$1").as_str()).into_owned();
    for route in ["blob", "tree"] {
        for branch in ["main", "master"] {
            let prefix = format!("{repo}/{route}/{branch}/");
            if let Some(rest) = t.strip_prefix(&prefix) {
                t = format!("{repo}/{route}/{tag}/{rest}");
            }
        }
    }
    let scheme = regex::Regex::new(r"^[a-zA-Z][a-zA-Z0-9+.-]*:").expect("static regex");
    if t.starts_with('#') || t.starts_with("//") || scheme.is_match(&t) {
        return t;
    }
    let (before_hash, fragment) = t.split_once('#').map_or((t.as_str(), String::new()), |(a, b)| (a, format!("#{b}")));
    let (path_part, query) =
        before_hash.split_once('?').map_or((before_hash, String::new()), |(a, b)| (a, format!("?{b}")));
    if path_part.is_empty() {
        return t.clone();
    }
    let normalized = path_part.replace('\\', "/");
    let joined = if let Some(abs) = normalized.strip_prefix('/') {
        normalize_posix(abs.trim_start_matches('/'))
    } else {
        normalize_posix(&format!("{LINK_BASE_PATH}/{normalized}"))
    };
    let Some(repo_path) = joined.filter(|j| j != "." && j != ".." && !j.starts_with("../")) else { return t.clone() };
    let basename = repo_path.rsplit('/').next().unwrap_or("");
    let route = if path_part.ends_with('/') || !basename.contains('.') { "tree" } else { "blob" };
    format!("{repo}/{route}/{tag}/{}{query}{fragment}", encode_uri(&repo_path))
}

/// `path.posix.normalize` of a relative path; `None` when it climbs above its start.
fn normalize_posix(path: &str) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            p => out.push(p),
        }
    }
    Some(if out.is_empty() { ".".to_owned() } else { out.join("/") })
}

/// JavaScript's `encodeURI` for a path.
fn encode_uri(path: &str) -> String {
    let keep = |c: char| c.is_ascii_alphanumeric() || ";,/?:@&=+$-_.!~*'()#".contains(c);
    path.chars()
        .map(|c| {
            if keep(c) {
                c.to_string()
            } else {
                let mut buf = [0u8; 4];
                c.encode_utf8(&mut buf).bytes().map(|b| format!("%{b:02X}")).collect()
            }
        })
        .collect()
}

impl App {
    /// `/changelog`: every entry, oldest first, under "What's New" between two borders.
    pub(crate) fn command_changelog(&mut self) {
        let entries = parse(&changelog_text());
        let markdown = if entries.is_empty() {
            "No changelog entries found.".to_owned()
        } else {
            entries.iter().rev().map(|e| normalize_links(&e.content, e.version)).collect::<Vec<_>>().join("\n\n")
        };
        let theme = self.theme.clone();
        self.add_chat(shared(Spacer::new(1)));
        self.add_chat(shared(super::dialogs::Border(theme.clone())));
        self.add_chat(shared(Text::new(theme.fg("accent", &pi_tui::theme::bold("What's New")), 1, 0)));
        self.add_chat(shared(Spacer::new(1)));
        let md = self.live.renderer.markdown_theme();
        let mut markdown = Markdown::new(markdown, 1, 1, md);
        // pi's `createChangelogMarkdown`: the `changelog` type's Markdown transformers run on it.
        markdown.set_transform(self.session.extension_runner().and_then(|r| r.markdown_transform("changelog", false)));
        self.add_chat(shared(markdown));
        self.add_chat(shared(super::dialogs::Border(theme)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_parse_and_links_point_at_the_tag() {
        let text = "# Changelog\n\n## [1.2.3] - 2026\n\n- See [docs](docs/a.md) and [x](https://e.com)\n\n## Unreleased\n\nskip\n\n## 1.2.2\n\nold\n";
        let entries = parse(text);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].version, (1, 2, 3));
        assert_eq!(entries[1].content, "## 1.2.2\n\nold");
        let md = normalize_links(&entries[0].content, entries[0].version);
        assert!(
            md.contains("(https://github.com/earendil-works/pi/blob/v1.2.3/packages/coding-agent/docs/a.md)"),
            "{md}"
        );
        assert!(md.contains("(https://e.com)"));
    }
}
