//! Reference resolution over one tool schema: schema resources (`$id`), anchors (`$anchor`, `$dynamicAnchor`),
//! JSON Pointers, and the base URI of every subschema. Remote documents are never loaded: pi passes none, so a
//! `$ref` to another document names nothing (and, with pi's `unresolvedRefs: "reject"`, rejects its values).

use std::collections::HashMap;

use serde_json::Value;

/// The base URI of a root schema without `$id`.
pub(crate) const DEFAULT_BASE: &str = "https://json-schema.invalid/root.json";

/// The index of one schema, built once when it compiles.
#[derive(Debug, Default)]
pub(crate) struct Resolver {
    /// Document URI to the JSON Pointer segments of its root.
    resources: HashMap<String, Vec<String>>,
    /// `uri#name` to the segments of the anchored schema.
    anchors: HashMap<String, Vec<String>>,
    /// Schema object (by address inside the compiled, immutable schema) to its base URI.
    base_of: HashMap<usize, String>,
}

/// The identity of a schema node inside the compiled schema, which is never moved or modified.
pub(crate) fn node_id(node: &Value) -> usize {
    std::ptr::from_ref(node) as usize
}

const SCHEMA_KEYWORDS: [&str; 12] = [
    "additionalProperties",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
    "contentSchema",
    "items",
];
const MAP_KEYWORDS: [&str; 6] =
    ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"];
const ARRAY_KEYWORDS: [&str; 5] = ["allOf", "anyOf", "oneOf", "prefixItems", "items"];

impl Resolver {
    /// Indexes `root` (which must stay where it is for as long as the index is used).
    pub(crate) fn new(root: &Value) -> Self {
        let mut r = Resolver::default();
        r.resources.insert(DEFAULT_BASE.to_owned(), Vec::new());
        let mut path = Vec::new();
        r.index(root, DEFAULT_BASE, &mut path);
        r
    }

    fn index(&mut self, node: &Value, base: &str, path: &mut Vec<String>) {
        let Value::Object(o) = node else { return };
        if self.base_of.contains_key(&node_id(node)) {
            return;
        }
        let mut b = base.to_owned();
        if let Some(Value::String(id)) = o.get("$id") {
            let uri = resolve_uri(id, &b);
            b = document_of(&uri).to_owned();
            self.resources.insert(b.clone(), path.clone());
            if uri.len() > b.len() + 1 {
                self.anchors.insert(uri, path.clone());
            }
        }
        self.base_of.insert(node_id(node), b.clone());
        for key in ["$anchor", "$dynamicAnchor"] {
            if let Some(Value::String(name)) = o.get(key) {
                self.anchors.insert(format!("{b}#{name}"), path.clone());
            }
        }
        for key in SCHEMA_KEYWORDS {
            if let Some(sub) = o.get(key) {
                path.push(key.to_owned());
                self.index(sub, &b, path);
                path.pop();
            }
        }
        for key in MAP_KEYWORDS {
            if let Some(Value::Object(map)) = o.get(key) {
                for (k, sub) in map {
                    path.push(key.to_owned());
                    path.push(k.clone());
                    self.index(sub, &b, path);
                    path.pop();
                    path.pop();
                }
            }
        }
        for key in ARRAY_KEYWORDS {
            if let Some(Value::Array(list)) = o.get(key) {
                for (i, sub) in list.iter().enumerate() {
                    path.push(key.to_owned());
                    path.push(i.to_string());
                    self.index(sub, &b, path);
                    path.pop();
                    path.pop();
                }
            }
        }
    }

    /// The base URI of `node`, whose parent has `base`.
    pub(crate) fn base_for(&self, node: &Value, base: &str) -> String {
        if let Some(b) = self.base_of.get(&node_id(node)) {
            return b.clone();
        }
        match node.get("$id") {
            Some(Value::String(id)) => document_of(&resolve_uri(id, base)).to_owned(),
            _ => base.to_owned(),
        }
    }

    /// The schema `reference` names from `base`, with its base URI; `None` when it names nothing.
    pub(crate) fn resolve<'a>(&self, root: &'a Value, reference: &str, base: &str) -> Option<(&'a Value, String)> {
        let uri = resolve_uri(reference, base);
        let doc = document_of(&uri);
        let fragment = if uri.len() > doc.len() { percent_decode(&uri[doc.len() + 1..])? } else { String::new() };
        let doc_path = self.resources.get(doc)?;
        let doc_root = walk(root, doc_path.iter().map(String::as_str))?;
        if fragment.is_empty() {
            return Some((doc_root, doc.to_owned()));
        }
        if let Some(pointer) = fragment.strip_prefix('/') {
            let mut node = doc_root;
            let mut b = doc.to_owned();
            for raw in pointer.split('/') {
                let key = raw.replace("~1", "/").replace("~0", "~");
                node = walk(node, std::iter::once(key.as_str()))?;
                if (node.is_object() || node.is_array())
                    && let Some(nb) = self.base_of.get(&node_id(node))
                {
                    b.clone_from(nb);
                }
            }
            return Some((node, b));
        }
        let path = self.anchors.get(&format!("{doc}#{fragment}"))?;
        let node = walk(root, path.iter().map(String::as_str))?;
        let b = self.base_of.get(&node_id(node)).cloned().unwrap_or_else(|| doc.to_owned());
        Some((node, b))
    }
}

/// The member of `node` at `segments` (object keys, or canonical array indexes).
fn walk<'a, 'k>(mut node: &'a Value, segments: impl Iterator<Item = &'k str>) -> Option<&'a Value> {
    for key in segments {
        node = match node {
            Value::Object(o) => o.get(key)?,
            Value::Array(a) => {
                if key != "0" && key.starts_with('0') {
                    return None;
                }
                a.get(key.parse::<usize>().ok()?)?
            }
            _ => return None,
        };
    }
    Some(node)
}

/// `uri` without its fragment.
pub(crate) fn document_of(uri: &str) -> &str {
    uri.find('#').map_or(uri, |i| &uri[..i])
}

/// `%XX` sequences decoded as UTF-8 (JS's `decodeURIComponent`); `None` when one is malformed.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The scheme of `s`, if it starts with one (`[A-Za-z][A-Za-z0-9+.-]*:`).
fn scheme_of(s: &str) -> Option<&str> {
    let colon = s.find(':')?;
    let scheme = &s[..colon];
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .then_some(scheme)
}

/// `reference` resolved against `base` (RFC 3986 section 5.2). A base that is not hierarchical takes
/// fragment-only references and leaves others as they are.
pub(crate) fn resolve_uri(reference: &str, base: &str) -> String {
    if scheme_of(reference).is_some() {
        return reference.to_owned();
    }
    if let Some(fragment) = reference.strip_prefix('#') {
        return format!("{}#{fragment}", document_of(base));
    }
    let Some(scheme) = scheme_of(base) else { return reference.to_owned() };
    let rest = &base[scheme.len() + 1..];
    let Some(after) = rest.strip_prefix("//") else {
        return reference.to_owned();
    };
    if let Some(net) = reference.strip_prefix("//") {
        return format!("{scheme}://{net}");
    }
    let authority_end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let authority = &after[..authority_end];
    let base_path = after[authority_end..].split(['?', '#']).next().unwrap_or("");
    let (ref_main, ref_tail) = match reference.find(['?', '#']) {
        Some(i) => (&reference[..i], &reference[i..]),
        None => (reference, ""),
    };
    let path = if ref_main.is_empty() {
        if ref_tail.starts_with('#') {
            let query = after[authority_end..].split('#').next().unwrap_or("");
            return format!("{scheme}://{authority}{query}{ref_tail}");
        }
        base_path.to_owned()
    } else if ref_main.starts_with('/') {
        remove_dot_segments(ref_main)
    } else {
        let dir = base_path.rfind('/').map_or("/", |i| &base_path[..=i]);
        remove_dot_segments(&format!("{dir}{ref_main}"))
    };
    format!("{scheme}://{authority}{path}{ref_tail}")
}

fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *seg {
            "." => {
                if last {
                    out.push("");
                }
            }
            ".." => {
                out.pop();
                if last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    format!("/{}", out.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_references() {
        assert_eq!(resolve_uri("#/$defs/a", DEFAULT_BASE), format!("{DEFAULT_BASE}#/$defs/a"));
        assert_eq!(resolve_uri("item.json", "https://x.org/a/root.json"), "https://x.org/a/item.json");
        assert_eq!(resolve_uri("../b.json#c", "https://x.org/a/root.json"), "https://x.org/b.json#c");
        assert_eq!(resolve_uri("/z", "https://x.org/a/root.json"), "https://x.org/z");
        assert_eq!(resolve_uri("urn:x", DEFAULT_BASE), "urn:x");
    }
}
