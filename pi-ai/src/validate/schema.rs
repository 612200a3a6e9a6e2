//! One compiled tool schema: the schema itself, its reference index and its regular expressions, plus the
//! compile-time walk that rejects what pi-schema's compiler rejects (a subschema that is not an object or a
//! boolean, an invalid `pattern`).

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use super::js;
use super::resolver::{DEFAULT_BASE, Resolver, node_id};

/// How deep checks, explanations and conversions may nest before giving up, as JS runs out of stack.
const MAX_DEPTH: usize = 512;

/// A compiled schema, shared by every call of the tools that declare it.
#[derive(Debug)]
pub(crate) struct Compiled {
    /// Boxed: the resolver indexes nodes by address.
    pub(crate) root: Box<Value>,
    pub(crate) resolver: Resolver,
    regexes: Mutex<HashMap<String, Option<Arc<regress::Regex>>>>,
}

/// Keywords that never affect a check (a schema of only these and `type` is a bare type).
const NEUTRAL_KEYWORDS: [&str; 16] = [
    "$schema",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$defs",
    "definitions",
    "contentEncoding",
    "contentMediaType",
    "minContains",
    "maxContains",
    "$vocabulary",
];

/// A `pattern` source as an ECMAScript regular expression: with the `u` flag, or without it when the source is
/// invalid with it (as pi-schema compiles them).
fn compile_regex(source: &str) -> Result<regress::Regex, String> {
    regress::Regex::with_flags(source, "u")
        .or_else(|_| regress::Regex::new(source))
        .map_err(|e| format!("Invalid regular expression: /{source}/: {}", v8_reason(source, &e.to_string())))
}

/// V8's wording for the common syntax errors (the engines detect the same errors, but word them differently).
fn v8_reason(source: &str, regress: &str) -> String {
    let reason = match regress {
        "Unbalanced parenthesis" => {
            let mut depth = 0i32;
            let mut chars = source.chars();
            let mut in_class = false;
            while let Some(c) = chars.next() {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '[' => in_class = true,
                    ']' => in_class = false,
                    '(' if !in_class => depth += 1,
                    ')' if !in_class => {
                        depth -= 1;
                        if depth < 0 {
                            return "Unmatched ')'".to_owned();
                        }
                    }
                    _ => {}
                }
            }
            "Unterminated group"
        }
        "Unbalanced bracket" => "Unterminated character class",
        "Invalid braced quantifier" | "Invalid quantifier" if source.contains('{') => {
            "numbers out of order in {} quantifier"
        }
        "Incomplete escape" | "Unterminated escape" => "\\ at end of pattern",
        "Quantifier not allowed here" | "Invalid quantifier" | "Invalid atom character" => "Nothing to repeat",
        "Invalid character range" | "Range values reversed, start char code is greater than end char code." => {
            "Range out of order in character class"
        }
        "Invalid group modifier" => "Invalid group",
        other if other.starts_with("Backreference to invalid named capture group") => {
            "Invalid named capture referenced"
        }
        other => other,
    };
    reason.to_owned()
}

impl Compiled {
    /// Compiles `schema`; the error is pi's message for a schema its compiler rejects.
    pub(crate) fn new(schema: &Value) -> Result<Compiled, String> {
        let root = Box::new(schema.clone());
        let resolver = Resolver::new(&root);
        let compiled = Compiled { root, resolver, regexes: Mutex::new(HashMap::new()) };
        let mut seen = HashSet::new();
        compiled.compile_walk(&compiled.root, DEFAULT_BASE, &mut seen)?;
        Ok(compiled)
    }

    /// The shared regular expression of a pattern source; `None` when it is invalid.
    pub(crate) fn regex(&self, source: &str) -> Option<Arc<regress::Regex>> {
        let mut cache = self.regexes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        cache.entry(source.to_owned()).or_insert_with(|| compile_regex(source).ok().map(Arc::new)).clone()
    }

    /// Whether `pattern` matches somewhere in `text` (JS's `RegExp.prototype.test`); an invalid pattern never does.
    pub(crate) fn test(&self, pattern: &str, text: &str) -> bool {
        self.regex(pattern).is_some_and(|re| re.find(text).is_some())
    }

    /// The base URI of `node` under `base`, borrowed when it does not change.
    pub(crate) fn base_for<'s>(&self, node: &Value, base: &'s str) -> Cow<'s, str> {
        let b = self.resolver.base_for(node, base);
        if b == base { Cow::Borrowed(base) } else { Cow::Owned(b) }
    }

    /// The schema `reference` names from `base`; `None` when it names nothing.
    pub(crate) fn resolve(&self, reference: &str, base: &str) -> Option<(&Value, String)> {
        self.resolver.resolve(&self.root, reference, base)
    }

    /// Walks every subschema pi-schema's compiler compiles, failing where it throws.
    fn compile_walk(&self, node: &Value, base: &str, seen: &mut HashSet<usize>) -> Result<(), String> {
        let o = match node {
            Value::Bool(_) => return Ok(()),
            Value::Object(o) => o,
            other => return Err(format!("A schema must be an object or a boolean, got {}", js::stringify(other))),
        };
        if !seen.insert(node_id(node)) || o.keys().all(|k| k == "type" || NEUTRAL_KEYWORDS.contains(&k.as_str())) {
            return Ok(());
        }
        let b = self.base_for(node, base);
        let b = b.as_ref();
        let mut walk = |n: &Value| self.compile_walk(n, b, seen);
        if let Some(Value::String(p)) = o.get("pattern") {
            compile_regex(p)?;
        }
        let properties = object(o.get("properties"));
        let patterns = object(o.get("patternProperties"));
        let additional = o.get("additionalProperties");
        let required = o.get("required").and_then(Value::as_array).is_some_and(|r| r.iter().any(Value::is_string));
        let open = matches!(additional, None | Some(Value::Bool(true)));
        if properties.is_some_and(|p| !p.is_empty()) || patterns.is_some_and(|p| !p.is_empty()) || required || !open {
            for s in properties.into_iter().flat_map(Map::values) {
                walk(s)?;
            }
            for (p, s) in patterns.into_iter().flatten() {
                compile_regex(p)?;
                walk(s)?;
            }
            if let (false, Some(a)) = (open, additional) {
                walk(a)?;
            }
        }
        for key in ["propertyNames", "contains", "not", "unevaluatedProperties", "unevaluatedItems"] {
            if let Some(s) = o.get(key) {
                walk(s)?;
            }
        }
        for s in object(o.get("dependentSchemas")).into_iter().flat_map(Map::values) {
            walk(s)?;
        }
        for s in object(o.get("dependencies")).into_iter().flat_map(Map::values).filter(|d| !d.is_array()) {
            walk(s)?;
        }
        let (prefix, rest) = match o.get("items") {
            Some(Value::Array(items)) => (Some(items), o.get("additionalItems")),
            items => (o.get("prefixItems").and_then(Value::as_array), items),
        };
        for s in prefix.into_iter().flatten() {
            walk(s)?;
        }
        if let Some(s) = rest.filter(|r| **r != Value::Bool(true)) {
            walk(s)?;
        }
        for s in o.get("allOf").and_then(Value::as_array).into_iter().flatten() {
            walk(s)?;
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = o.get(key)
                && !const_union(branches, key == "oneOf")
            {
                for s in branches {
                    walk(s)?;
                }
            }
        }
        if o.contains_key("if") && (o.contains_key("then") || o.contains_key("else")) {
            for key in ["if", "then", "else"] {
                if let Some(s) = o.get(key) {
                    walk(s)?;
                }
            }
        }
        for key in ["$ref", "$dynamicRef"] {
            if let Some(Value::String(r)) = o.get(key)
                && let Some((target, tb)) = self.resolve(r, b)
            {
                self.compile_walk(target, &tb, seen)?;
            }
        }
        Ok(())
    }
}

/// `value` as an object, when it is one.
pub(crate) fn object(value: Option<&Value>) -> Option<&Map<String, Value>> {
    value.and_then(Value::as_object)
}

/// Whether a union's branches are all `{ const: primitive }` (distinct for `oneOf`): pi compiles it as an enum.
fn const_union(branches: &[Value], exactly_one: bool) -> bool {
    let mut values: Vec<&Value> = Vec::new();
    for branch in branches {
        let Some(o) = branch.as_object() else { return false };
        let Some(c) = o.get("const") else { return false };
        if o.keys().any(|k| k != "const" && !NEUTRAL_KEYWORDS.contains(&k.as_str())) || c.is_object() || c.is_array() {
            return false;
        }
        if exactly_one && values.iter().any(|v| js::equal(v, c)) {
            return false;
        }
        values.push(c);
    }
    true
}

/// One validation run over a compiled schema: checks, explanations and conversions share its depth guard.
pub(crate) struct Ctx<'a> {
    pub(crate) c: &'a Compiled,
    depth: Cell<usize>,
    overflow: Cell<bool>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(c: &'a Compiled) -> Self {
        Ctx { c, depth: Cell::new(0), overflow: Cell::new(false) }
    }

    /// Enters one level of nesting; false (and the run marked as overflowed) past the limit.
    pub(crate) fn enter(&self) -> bool {
        let d = self.depth.get() + 1;
        if d > MAX_DEPTH {
            self.overflow.set(true);
            return false;
        }
        self.depth.set(d);
        true
    }

    /// Leaves a level entered with [`Ctx::enter`].
    pub(crate) fn leave(&self) {
        self.depth.set(self.depth.get().saturating_sub(1));
    }

    /// Whether some walk gave up for depth (JS would have thrown a `RangeError`).
    pub(crate) fn overflowed(&self) -> bool {
        self.overflow.get()
    }
}

#[cfg(test)]
mod tests {
    use super::compile_regex;

    #[test]
    fn regex_errors_are_worded_as_v8() {
        let cases = [
            ("(", "Unterminated group"),
            (")", "Unmatched ')'"),
            ("[a", "Unterminated character class"),
            ("a{2,1}", "numbers out of order in {} quantifier"),
            ("\\", "\\ at end of pattern"),
            ("*a", "Nothing to repeat"),
            ("a**", "Nothing to repeat"),
            ("[b-a]", "Range out of order in character class"),
            ("(?<n>a)(?<n>b)", "Duplicate capture group name"),
            ("\\k<x>(?<y>a)", "Invalid named capture referenced"),
            ("(?x)", "Invalid group"),
        ];
        let mut wrong = Vec::new();
        for (source, reason) in cases {
            let expected = format!("Invalid regular expression: /{source}/: {reason}");
            match compile_regex(source) {
                Err(e) if e == expected => {}
                other => wrong.push(format!("{source}: {:?}", other.err())),
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
        assert!(compile_regex("a{2").is_ok());
    }
}
