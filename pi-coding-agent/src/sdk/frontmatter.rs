//! YAML frontmatter of markdown resources (skills, prompt templates), as pi 1.6.0 reads it:
//! a BOM is dropped, line ends become `\n`, and a block opened by `---` at the very start and
//! closed by the next `\n---` is parsed as YAML; the rest, trimmed, is the body.

use yaml_rust2::{Yaml, YamlLoader};

/// The parsed frontmatter: only the mapping's string keys are kept.
#[derive(Clone, Debug, Default)]
pub struct Frontmatter {
    entries: Vec<(String, Yaml)>,
}

impl Frontmatter {
    fn get(&self, key: &str) -> Option<&Yaml> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The value of `key` when it is a string (pi's `typeof x === "string"`). The YAML 1.2 core
    /// schema spellings pi's parser reads as null or booleans (`Null`, `NULL`, `True`, `FALSE`, …)
    /// are not strings.
    pub fn string(&self, key: &str) -> Option<&str> {
        match self.get(key) {
            Some(Yaml::String(s)) if core_schema_scalar(s).is_none() => Some(s.as_str()),
            _ => None,
        }
    }

    /// Whether `key` is the boolean `true` (pi's `=== true`).
    pub fn is_true(&self, key: &str) -> bool {
        match self.get(key) {
            Some(Yaml::Boolean(b)) => *b,
            Some(Yaml::String(s)) => core_schema_scalar(s) == Some(Some(true)),
            _ => false,
        }
    }
}

/// `Some(None)` for a core-schema null, `Some(Some(b))` for a core-schema boolean that our YAML
/// parser (which only knows the lowercase forms) left as a string.
fn core_schema_scalar(s: &str) -> Option<Option<bool>> {
    match s {
        "Null" | "NULL" => Some(None),
        "True" | "TRUE" => Some(Some(true)),
        "False" | "FALSE" => Some(Some(false)),
        _ => None,
    }
}

/// Frontmatter that is not valid YAML; the message is the YAML parser's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FrontmatterError(pub String);

/// Drops a leading BOM and turns `\r\n` and `\r` into `\n`.
pub fn normalize_text(content: &str) -> String {
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    content.replace("\r\n", "\n").replace('\r', "\n")
}

/// Splits `content` into frontmatter and body (pi's `parseFrontmatter`).
pub fn parse_frontmatter(content: &str) -> Result<(Frontmatter, String), FrontmatterError> {
    let normalized = normalize_text(content);
    if !normalized.starts_with("---") {
        return Ok((Frontmatter::default(), normalized));
    }
    let Some(end) = normalized.get(3..).and_then(|rest| rest.find("\n---")).map(|i| i + 3) else {
        return Ok((Frontmatter::default(), normalized));
    };
    // pi slices from index 4 (past "---" and the character after it) up to the closing "\n---".
    let yaml_start = normalized[3..].chars().next().map_or(3, |c| 3 + c.len_utf8());
    let yaml = if yaml_start <= end { &normalized[yaml_start..end] } else { "" };
    let body = normalized.get(end + 4..).unwrap_or("").trim().to_owned();
    if yaml.is_empty() {
        return Ok((Frontmatter::default(), body));
    }
    // Duplicate keys first, with pi's message (yaml-rust2's loader refuses them in its own words).
    if let Some(message) = super::yaml_keys::duplicate_key_error(yaml) {
        return Err(FrontmatterError(message));
    }
    // The YAML parser is not trusted to be panic-free on hostile input: a panic is a parse error.
    let loaded = std::panic::catch_unwind(|| YamlLoader::load_from_str(yaml))
        .map_err(|_| FrontmatterError("YAML parser failed on this frontmatter".to_owned()))?;
    let docs = loaded.map_err(|e| FrontmatterError(e.to_string()))?;
    let entries = match docs.into_iter().next() {
        Some(Yaml::Hash(map)) => map
            .into_iter()
            .filter_map(|(k, v)| match k {
                Yaml::String(k) => Some((k, v)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    Ok((Frontmatter { entries }, body))
}

/// The body without frontmatter (pi's `stripFrontmatter`).
pub fn strip_frontmatter(content: &str) -> Result<String, FrontmatterError> {
    parse_frontmatter(content).map(|(_, body)| body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_and_body() {
        let (fm, body) = parse_frontmatter("\u{feff}---\r\nname: x\r\nflag: true\r\n---\r\n\r\nBody\r\n").unwrap();
        assert_eq!(fm.string("name"), Some("x"));
        assert!(fm.is_true("flag"));
        assert_eq!(body, "Body");
        let (fm, body) = parse_frontmatter("no frontmatter\n").unwrap();
        assert_eq!(fm.string("name"), None);
        assert_eq!(body, "no frontmatter\n");
        let (_, body) = parse_frontmatter("---\n---\n body ").unwrap();
        assert_eq!(body, "body");
        assert!(parse_frontmatter("---\nname: [x\n---\n").is_err());
        let (fm, _) = parse_frontmatter("---\njust a string\n---\n").unwrap();
        assert_eq!(fm.string("name"), None);
        let (fm, _) = parse_frontmatter("---\na: True\nb: NULL\nc: 12\nd: yes\n---\n").unwrap();
        assert!(fm.is_true("a"));
        assert_eq!((fm.string("b"), fm.string("c"), fm.string("d")), (None, None, Some("yes")));
    }
}
