//! Why a value failed: a walk over the schema that reports each failing keyword at the value it failed on, with
//! pi-schema's messages and order.

use serde_json::{Map, Value};

use super::check::{contains_bounds, has_type, is_multiple, num, unique};
use super::formats;
use super::js;
use super::schema::{Ctx, object};

/// One error: a JSON Pointer to the value and pi-schema's message.
pub(crate) type Issue = (String, String);

/// Enum errors list at most this many values.
const LISTED_VALUES: usize = 20;

/// `values` as JSON, at most [`LISTED_VALUES`] of them, then how many more there are.
fn list_values(values: &[Value]) -> String {
    if values.len() <= LISTED_VALUES {
        return js::stringify(&Value::Array(values.to_vec()));
    }
    let listed = js::stringify(&Value::Array(values[..LISTED_VALUES].to_vec()));
    format!("{}, ... and {} more]", &listed[..listed.len() - 1], values.len() - LISTED_VALUES)
}

/// `path` extended by one key, escaped as a JSON Pointer segment.
fn pointer(path: &str, key: &str) -> String {
    format!("{path}/{}", key.replace('~', "~0").replace('/', "~1"))
}

fn contains_message(min: f64, max: f64) -> String {
    let n = |x: f64| crate::json::js_number_to_string(x);
    let noun = |x: f64| if x == 1.0 { "item" } else { "items" };
    if max == f64::INFINITY {
        format!("expected at least {} matching {}", n(min), noun(min))
    } else if min == 0.0 {
        format!("expected at most {} matching {}", n(max), noun(max))
    } else {
        format!("expected between {} and {} matching items", n(min), n(max))
    }
}

/// A number keyword's value as JS writes it in a message.
fn shown(o: &Map<String, Value>, key: &str) -> String {
    o.get(key).map(js::to_string).unwrap_or_default()
}

impl Ctx<'_> {
    /// The errors of `v`, at least one (`v` failed the check of the root schema).
    pub(crate) fn errors(&self, v: &Value) -> Vec<Issue> {
        let mut out = Vec::new();
        self.walk(&self.c.root, super::resolver::DEFAULT_BASE, v, "", &mut out);
        if out.is_empty() {
            out.push((String::new(), "invalid".to_owned()));
        }
        out
    }

    fn walk(&self, node: &Value, base: &str, v: &Value, path: &str, out: &mut Vec<Issue>) {
        let o = match node {
            Value::Bool(true) => return,
            Value::Bool(false) => {
                out.push((path.to_owned(), "no value is allowed here".to_owned()));
                return;
            }
            Value::Object(o) => o,
            _ => return,
        };
        let b = self.c.base_for(node, base);
        let b = b.as_ref();
        if self.check(node, b, v) || !self.enter() {
            return;
        }
        self.walk_object_node(o, b, v, path, out);
        self.leave();
    }

    fn walk_object_node(&self, o: &Map<String, Value>, b: &str, v: &Value, path: &str, out: &mut Vec<Issue>) {
        let start = out.len();
        let push = |out: &mut Vec<Issue>, message: String| out.push((path.to_owned(), message));
        if let Some(t) = o.get("type") {
            let types: Vec<Value> = match t {
                Value::Array(list) => list.clone(),
                other => vec![other.clone()],
            };
            if !types.iter().any(|t| t.as_str().is_some_and(|t| has_type(t, v))) {
                let names: Vec<String> = types.iter().map(js::join_string).collect();
                push(out, format!("expected {}, got {}", names.join(" or "), js::type_name(v)));
                return;
            }
        }
        if let Some(Value::Array(values)) = o.get("enum")
            && !values.iter().any(|x| js::equal(x, v))
        {
            push(out, format!("expected one of {}", list_values(values)));
        }
        if let Some(c) = o.get("const")
            && !js::equal(c, v)
        {
            push(out, format!("expected {}", js::stringify(c)));
        }
        match v {
            Value::String(s) if o.get("type").and_then(Value::as_str) != Some("bytes") => {
                self.walk_string(o, s, path, out)
            }
            Value::Number(n) => walk_number(o, js::f64_of(n), path, out),
            Value::Object(m) => self.walk_members(o, b, m, v, path, out),
            Value::Array(items) => self.walk_array(o, b, items, path, out),
            _ => {}
        }
        for s in o.get("allOf").and_then(Value::as_array).into_iter().flatten() {
            self.walk(s, b, v, path, out);
        }
        if let Some(Value::Array(branches)) = o.get("anyOf") {
            self.walk_union(branches, b, v, path, out, false);
        }
        if let Some(Value::Array(branches)) = o.get("oneOf") {
            self.walk_union(branches, b, v, path, out, true);
        }
        if let Some(not) = o.get("not")
            && self.check(not, b, v)
        {
            push(out, "must not match the schema in not".to_owned());
        }
        if let Some(cond) = o.get("if") {
            let branch = if self.check(cond, b, v) { o.get("then") } else { o.get("else") };
            if let Some(s) = branch {
                self.walk(s, b, v, path, out);
            }
        }
        if let Some(Value::String(r)) = o.get("$ref") {
            match self.c.resolve(r, b) {
                Some((target, tb)) => self.walk(target, &tb, v, path, out),
                None => push(out, format!("unresolved reference {r}")),
            }
        }
        if out.len() == start && (o.contains_key("unevaluatedProperties") || o.contains_key("unevaluatedItems")) {
            self.walk_unevaluated(o, b, v, path, out);
        }
        if out.len() == start && o.get("$dynamicRef").is_some_and(Value::is_string) {
            push(out, "does not match the dynamically referenced schema".to_owned());
        }
    }

    fn walk_string(&self, o: &Map<String, Value>, s: &str, path: &str, out: &mut Vec<Issue>) {
        let n = s.chars().count() as f64;
        let mut push = |m: String| out.push((path.to_owned(), m));
        if num(o, "minLength").is_some_and(|m| n < m) {
            push(format!("expected at least {} characters", shown(o, "minLength")));
        }
        if num(o, "maxLength").is_some_and(|m| n > m) {
            push(format!("expected at most {} characters", shown(o, "maxLength")));
        }
        if let Some(Value::String(p)) = o.get("pattern")
            && !self.c.test(p, s)
        {
            push(format!("expected to match {p}"));
        }
        if let Some(Value::String(f)) = o.get("format")
            && formats::check(f, s) == Some(false)
        {
            push(format!("expected format {f}"));
        }
    }

    fn walk_members(
        &self,
        o: &Map<String, Value>,
        b: &str,
        m: &Map<String, Value>,
        v: &Value,
        path: &str,
        out: &mut Vec<Issue>,
    ) {
        let empty = Map::new();
        let properties = object(o.get("properties")).unwrap_or(&empty);
        for k in o.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
            if !m.contains_key(k) {
                out.push((pointer(path, k), "missing".to_owned()));
            }
        }
        for k in js::keys(properties) {
            if let Some(x) = m.get(k.as_str()) {
                self.walk(&properties[k.as_str()], b, x, &pointer(path, k), out);
            }
        }
        let patterns: Vec<(&String, &Value)> = match object(o.get("patternProperties")) {
            Some(p) => js::keys(p).into_iter().map(|k| (k, &p[k.as_str()])).collect(),
            None => Vec::new(),
        };
        for k in js::keys(m) {
            let x = &m[k.as_str()];
            let mut matched = properties.contains_key(k);
            for (p, s) in &patterns {
                if self.c.test(p, k) {
                    matched = true;
                    self.walk(s, b, x, &pointer(path, k), out);
                }
            }
            match (matched, o.get("additionalProperties")) {
                (false, Some(Value::Bool(false))) => out.push((pointer(path, k), "unknown field".to_owned())),
                (false, Some(s)) => self.walk(s, b, x, &pointer(path, k), out),
                _ => {}
            }
            if let Some(names) = o.get("propertyNames")
                && !self.check(names, b, &Value::String(k.clone()))
            {
                out.push((pointer(path, k), "invalid property name".to_owned()));
            }
        }
        let count = m.len() as f64;
        if num(o, "minProperties").is_some_and(|n| count < n) {
            out.push((path.to_owned(), format!("expected at least {} properties", shown(o, "minProperties"))));
        }
        if num(o, "maxProperties").is_some_and(|n| count > n) {
            out.push((path.to_owned(), format!("expected at most {} properties", shown(o, "maxProperties"))));
        }
        // `{ ...dependentRequired, ...dependencies }`: a key of both keeps its first place, with the later value.
        let mut dependencies: Vec<(&String, &Value)> = Vec::new();
        for key in ["dependentRequired", "dependencies"] {
            if let Some(map) = object(o.get(key)) {
                for k in js::keys(map) {
                    let d = &map[k.as_str()];
                    match dependencies.iter_mut().find(|(name, _)| *name == k) {
                        Some(entry) => entry.1 = d,
                        None => dependencies.push((k, d)),
                    }
                }
            }
        }
        for (k, d) in dependencies {
            if !m.contains_key(k) {
                continue;
            }
            match d {
                Value::Array(list) => {
                    for r in list.iter().map(js::to_string) {
                        if !m.contains_key(&r) {
                            out.push((pointer(path, &r), format!("required when {k} is present")));
                        }
                    }
                }
                schema => self.walk(schema, b, v, path, out),
            }
        }
        if let Some(deps) = object(o.get("dependentSchemas")) {
            for k in js::keys(deps) {
                if m.contains_key(k) {
                    self.walk(&deps[k.as_str()], b, v, path, out);
                }
            }
        }
    }

    fn walk_array(&self, o: &Map<String, Value>, b: &str, items: &[Value], path: &str, out: &mut Vec<Issue>) {
        let (prefix, rest) = match o.get("items") {
            Some(Value::Array(list)) => (list.as_slice(), o.get("additionalItems")),
            rest => (o.get("prefixItems").and_then(Value::as_array).map_or(&[][..], Vec::as_slice), rest),
        };
        for (i, x) in items.iter().enumerate() {
            if let Some(s) = prefix.get(i).or(rest) {
                self.walk(s, b, x, &format!("{path}/{i}"), out);
            }
        }
        let n = items.len() as f64;
        if num(o, "minItems").is_some_and(|m| n < m) {
            out.push((path.to_owned(), format!("expected at least {} items", shown(o, "minItems"))));
        }
        if num(o, "maxItems").is_some_and(|m| n > m) {
            out.push((path.to_owned(), format!("expected at most {} items", shown(o, "maxItems"))));
        }
        if o.get("uniqueItems") == Some(&Value::Bool(true)) && !unique(items) {
            out.push((path.to_owned(), "expected unique items".to_owned()));
        }
        if let Some(c) = o.get("contains") {
            let (min, max) = contains_bounds(o);
            let matching = items.iter().filter(|x| self.check(c, b, x)).count() as f64;
            if matching < min || matching > max {
                out.push((path.to_owned(), contains_message(min, max)));
            }
        }
    }

    fn walk_union(&self, branches: &[Value], b: &str, v: &Value, path: &str, out: &mut Vec<Issue>, exactly_one: bool) {
        let matches = branches.iter().filter(|s| self.check(s, b, v)).count();
        if matches == 1 || (!exactly_one && matches > 0) {
            return;
        }
        if matches > 1 {
            out.push((path.to_owned(), "matches more than one alternative".to_owned()));
            return;
        }
        // A tagged union reports the branch its tag selects.
        if let (Some((key, values)), Value::Object(m)) = (self.tag_of(branches, b), v) {
            match m.get(&key).and_then(|t| values.iter().position(|x| js::strict_equal(x, t))) {
                Some(i) => self.walk(&branches[i], b, v, path, out),
                None => out.push((pointer(path, &key), format!("expected one of {}", list_values(&values)))),
            }
            return;
        }
        // Otherwise the branch that declares most of the object's properties, then the one whose first error is
        // deepest.
        let mut best: Option<(Vec<Issue>, usize)> = None;
        for s in branches {
            let mut errors = Vec::new();
            self.walk(s, b, v, path, &mut errors);
            if errors.is_empty() {
                continue;
            }
            let declared = match v {
                Value::Object(m) => self.declared_keys(s, b, m),
                _ => 0,
            };
            let better = match &best {
                None => true,
                Some((e, d)) => {
                    declared > *d || (declared == *d && js::utf16_len(&errors[0].0) > js::utf16_len(&e[0].0))
                }
            };
            if better {
                best = Some((errors, declared));
            }
        }
        match best {
            Some((errors, _)) => out.extend(errors),
            None => out.push((path.to_owned(), "matches no alternative".to_owned())),
        }
    }

    /// A branch, through its `$ref` when it has one.
    fn through_ref<'s>(&'s self, s: &'s Value, b: &str) -> Option<&'s Value> {
        match s.get("$ref") {
            Some(Value::String(r)) if s.is_object() => self.c.resolve(r, &self.c.base_for(s, b)).map(|(n, _)| n),
            _ => Some(s),
        }
    }

    /// How many keys of `m` the branch `s` declares in `properties`.
    fn declared_keys(&self, s: &Value, b: &str, m: &Map<String, Value>) -> usize {
        let properties = self.through_ref(s, b).and_then(|n| object(n.get("properties")));
        properties.map_or(0, |p| m.keys().filter(|k| p.contains_key(*k)).count())
    }

    /// The tag of a union whose branches all have a distinct primitive `const` on one property.
    fn tag_of(&self, branches: &[Value], b: &str) -> Option<(String, Vec<Value>)> {
        let resolved: Vec<Option<&Value>> = branches.iter().map(|s| self.through_ref(s, b)).collect();
        let first = object(resolved.first().copied().flatten()?.get("properties"))?;
        for key in js::keys(first) {
            let mut values = Vec::with_capacity(resolved.len());
            for s in &resolved {
                let tag = s.and_then(|s| object(s.get("properties"))).and_then(|p| p.get(key.as_str()));
                match tag.and_then(|t| t.as_object()).and_then(|t| t.get("const")) {
                    Some(c) if !c.is_object() && !c.is_array() => values.push(c.clone()),
                    _ => break,
                }
            }
            let distinct = values.iter().enumerate().all(|(i, x)| values[..i].iter().all(|y| !js::equal(x, y)));
            if values.len() == resolved.len() && distinct {
                return Some((key.clone(), values));
            }
        }
        None
    }

    fn walk_unevaluated(&self, o: &Map<String, Value>, b: &str, v: &Value, path: &str, out: &mut Vec<Issue>) {
        let mut rest = o.clone();
        let unevaluated_properties = rest.remove("unevaluatedProperties");
        let unevaluated_items = rest.remove("unevaluatedItems");
        rest.remove("$id");
        let mut a = super::annotations::Annotations::default();
        self.annotate_parts(&rest, b, v, &mut a);
        match (v, unevaluated_properties) {
            (Value::Object(m), Some(s)) if !a.all_props => {
                for k in js::keys(m).into_iter().filter(|k| !a.props.contains(*k)) {
                    if s == Value::Bool(false) {
                        out.push((pointer(path, k), "unknown field".to_owned()));
                    } else {
                        self.walk(&s, b, &m[k.as_str()], &pointer(path, k), out);
                    }
                }
            }
            _ => {}
        }
        match (v, unevaluated_items) {
            (Value::Array(items), Some(s)) if !a.all_items => {
                for (i, x) in items.iter().enumerate().skip(a.items).filter(|(i, _)| !a.indexes.contains(i)) {
                    if s == Value::Bool(false) {
                        out.push((format!("{path}/{i}"), "unexpected item".to_owned()));
                    } else {
                        self.walk(&s, b, x, &format!("{path}/{i}"), out);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The number keywords' errors.
fn walk_number(o: &Map<String, Value>, v: f64, path: &str, out: &mut Vec<Issue>) {
    let mut push = |m: String| out.push((path.to_owned(), m));
    if num(o, "minimum").is_some_and(|m| v < m) {
        push(format!("expected >= {}", shown(o, "minimum")));
    }
    if num(o, "maximum").is_some_and(|m| v > m) {
        push(format!("expected <= {}", shown(o, "maximum")));
    }
    if num(o, "exclusiveMinimum").is_some_and(|m| v <= m) {
        push(format!("expected > {}", shown(o, "exclusiveMinimum")));
    }
    if num(o, "exclusiveMaximum").is_some_and(|m| v >= m) {
        push(format!("expected < {}", shown(o, "exclusiveMaximum")));
    }
    if num(o, "multipleOf").is_some_and(|d| !is_multiple(v, d)) {
        push(format!("expected a multiple of {}", shown(o, "multipleOf")));
    }
}
