//! Coercion of loosely typed arguments towards the schema, as pi-schema's `coerce()` does it, in three passes:
//!
//! 1. optional nulls: a `null` in an optional property whose schema rejects `null` is dropped;
//! 2. conversions (TypeBox's `Value.Convert` rules keyed on `$ref`, `const`, `enum`, `anyOf`/`oneOf`, `allOf`,
//!    `type`): `"42"` to 42, `"3.7"` to 3 for an integer, `null` to `"null"` for a string, a single value to a
//!    one-item array, the first union branch that converts;
//! 3. primitive coercion by `type` (also type arrays), as Ajv's `coerceTypes`.
//!
//! A value no rule applies to stays as it is; the check then reports it.

use serde_json::{Map, Value};

use super::js;
use super::schema::{Ctx, object};

/// The schema of an array's item at `index`.
fn item_schema_at(schema: &Map<String, Value>, index: usize) -> Option<&Value> {
    if let Some(Value::Array(items)) = schema.get("items") {
        return items.get(index);
    }
    if let Some(Value::Array(prefix)) = schema.get("prefixItems")
        && index < prefix.len()
    {
        return prefix.get(index);
    }
    schema.get("items")
}

/// The `(pattern, schema)` pairs of `patternProperties`, in JS order.
fn patterns(schema: &Map<String, Value>) -> Vec<(&String, &Value)> {
    match object(schema.get("patternProperties")) {
        Some(p) => js::keys(p).into_iter().map(|k| (k, &p[k.as_str()])).collect(),
        None => Vec::new(),
    }
}

fn try_string(v: &Value) -> Option<Value> {
    match v {
        Value::Bool(_) | Value::Number(_) | Value::Null => Some(Value::String(js::to_string(v))),
        Value::String(_) => Some(v.clone()),
        _ => None,
    }
}

const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// TypeBox's TryBigInt of a string (`12n`, `12.5` truncated, `12`), as a number within the safe range.
fn big_int_of_string(s: &str) -> Option<f64> {
    let body = s.strip_prefix('-').unwrap_or(s);
    let integer = |t: &str| t == "0" || (!t.is_empty() && !t.starts_with('0') && t.bytes().all(|b| b.is_ascii_digit()));
    let int_part = if let Some(t) = body.strip_suffix('n') {
        integer(t).then_some(t)?
    } else if let Some((i, f)) = body.split_once('.') {
        (integer(i) && !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit())).then_some(i)?
    } else {
        integer(body).then_some(body)?
    };
    let n: f64 = int_part.parse().ok()?;
    (n <= MAX_SAFE).then_some(if s.starts_with('-') { -n } else { n })
}

fn try_number(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::Number(n) => Some(js::f64_of(n)),
        Value::Null => Some(0.0),
        Value::String(s) => {
            if let Some(n) = js::string_to_number(s).filter(|n| n.is_finite()) {
                return Some(n);
            }
            match s.to_lowercase().as_str() {
                "false" => Some(0.0),
                "true" => Some(1.0),
                _ => big_int_of_string(s),
            }
        }
        _ => None,
    }
}

fn try_boolean(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match js::f64_of(n) {
            0.0 => Some(false),
            1.0 => Some(true),
            _ => None,
        },
        Value::Null => Some(false),
        Value::String(s) => match s.to_lowercase().as_str() {
            "false" => Some(false),
            "true" => Some(true),
            _ if s == "0" => Some(false),
            _ if s == "1" => Some(true),
            _ => None,
        },
        _ => None,
    }
}

fn try_null(v: &Value) -> bool {
    match v {
        Value::Bool(b) => !*b,
        Value::Number(n) => js::f64_of(n) == 0.0,
        Value::Null => true,
        Value::String(s) => matches!(s.to_lowercase().as_str(), "undefined" | "null") || s.is_empty() || s == "0",
        _ => false,
    }
}

/// A literal (`const`, an enum member) taken from a value of another type that converts to exactly it.
fn convert_literal(literal: &Value, v: &Value) -> Value {
    if js::strict_equal(literal, v) {
        return v.clone();
    }
    let converted = match literal {
        Value::String(_) => try_string(v),
        Value::Number(_) => try_number(v).map(js::number),
        Value::Bool(_) => try_boolean(v).map(Value::Bool),
        _ => None,
    };
    match converted {
        Some(c) if js::strict_equal(&c, literal) => c,
        _ => v.clone(),
    }
}

/// The types a schema names (`type` as a string or the strings of a type array).
fn types_of(schema: &Map<String, Value>) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn matches_type(v: &Value, t: &str) -> bool {
    super::check::has_type(t, v)
}

/// Ajv-style coercion of a primitive to `t`; `v` itself when none applies.
fn coerce_primitive(v: &Value, t: &str) -> Value {
    match t {
        "number" | "integer" => match v {
            Value::Null => js::number(0.0),
            Value::String(s) if !js::trim(s).is_empty() => match js::string_to_number(s) {
                Some(n) if n.is_finite() && (t == "number" || n.fract() == 0.0) => js::number(n),
                _ => v.clone(),
            },
            Value::Bool(b) => js::number(if *b { 1.0 } else { 0.0 }),
            _ => v.clone(),
        },
        "boolean" => match v {
            Value::Null => Value::Bool(false),
            Value::String(s) if s == "true" => Value::Bool(true),
            Value::String(s) if s == "false" => Value::Bool(false),
            Value::Number(n) if js::f64_of(n) == 1.0 => Value::Bool(true),
            Value::Number(n) if js::f64_of(n) == 0.0 => Value::Bool(false),
            _ => v.clone(),
        },
        "string" => match v {
            Value::Null => Value::String(String::new()),
            Value::Number(_) | Value::Bool(_) => Value::String(js::to_string(v)),
            _ => v.clone(),
        },
        "null" => match v {
            Value::String(s) if s.is_empty() => Value::Null,
            Value::Number(n) if js::f64_of(n) == 0.0 => Value::Null,
            Value::Bool(false) => Value::Null,
            _ => v.clone(),
        },
        _ => v.clone(),
    }
}

/// Copy-on-write updates of an object: `set` copies only when the value changes.
struct Members<'v> {
    original: &'v Map<String, Value>,
    out: Option<Map<String, Value>>,
}

impl<'v> Members<'v> {
    fn new(original: &'v Map<String, Value>) -> Self {
        Members { original, out: None }
    }

    fn current(&self, key: &str) -> Option<&Value> {
        self.out.as_ref().unwrap_or(self.original).get(key)
    }

    fn set(&mut self, key: &str, next: Value) {
        if self.current(key).is_some_and(|c| js::equal(c, &next)) {
            return;
        }
        self.out.get_or_insert_with(|| self.original.clone()).insert(key.to_owned(), next);
    }

    fn remove(&mut self, key: &str) {
        self.out.get_or_insert_with(|| self.original.clone()).shift_remove(key);
    }

    fn finish(self, v: &Value) -> Value {
        self.out.map_or_else(|| v.clone(), Value::Object)
    }
}

/// `items` mapped by `f`, copied only when an item changes.
fn map_items(items: &[Value], v: &Value, mut f: impl FnMut(&Value, usize) -> Value) -> Value {
    let mut out: Option<Vec<Value>> = None;
    for (i, item) in items.iter().enumerate() {
        let next = f(item, i);
        if js::equal(&next, item) {
            continue;
        }
        out.get_or_insert_with(|| items.to_vec())[i] = next;
    }
    out.map_or_else(|| v.clone(), Value::Array)
}

impl Ctx<'_> {
    /// All three passes over the root schema.
    pub(crate) fn coerce(&self, v: &Value) -> Value {
        let root = &self.c.root;
        let base = super::resolver::DEFAULT_BASE;
        let without_nulls = self.drop_optional_nulls(v, root, base);
        let mut entered = Vec::new();
        let converted = self.convert(root, base, &without_nulls, &mut entered);
        self.coerce_types(&converted, root, base)
    }

    /// Whether `v` passes `node`; `None` when `node` is not a schema.
    fn passes(&self, node: &Value, base: &str, v: &Value) -> Option<bool> {
        match node {
            Value::Bool(_) | Value::Object(_) => Some(self.check(node, base, v)),
            _ => None,
        }
    }

    // Pass 1: optional nulls.

    fn drop_optional_nulls(&self, v: &Value, schema: &Value, base: &str) -> Value {
        let Value::Object(s) = schema else { return v.clone() };
        if !self.enter() {
            return v.clone();
        }
        let b = self.c.base_for(schema, base);
        let out = self.drop_nulls_in(v, s, &b);
        self.leave();
        out
    }

    fn drop_nulls_in(&self, v: &Value, s: &Map<String, Value>, b: &str) -> Value {
        if let Value::Array(items) = v {
            return map_items(items, v, |item, i| match item_schema_at(s, i) {
                Some(schema) => self.drop_optional_nulls(item, schema, b),
                None => item.clone(),
            });
        }
        let Value::Object(m) = v else { return v.clone() };
        let properties = object(s.get("properties"));
        let pats = patterns(s);
        let additional = s.get("additionalProperties").filter(|a| a.is_object());
        if pats.is_empty() && additional.is_none() && properties.is_none() {
            return v.clone();
        }
        let required: Vec<&Value> =
            s.get("required").and_then(Value::as_array).map(|r| r.iter().collect()).unwrap_or_default();
        let mut members = Members::new(m);
        for k in properties.map(js::keys).unwrap_or_default() {
            let Some(x) = m.get(k.as_str()) else { continue };
            let property = &properties.map_or(&Value::Null, |p| &p[k.as_str()]);
            let is_ref = property.get("$ref").is_some_and(Value::is_string) && property.is_object();
            let is_required = required.iter().any(|r| r.as_str() == Some(k.as_str()));
            if x.is_null() && !is_required && !is_ref && self.passes(property, b, &Value::Null) == Some(false) {
                members.remove(k);
                continue;
            }
            members.set(k, self.drop_optional_nulls(x, property, b));
        }
        if !pats.is_empty() || additional.is_some() {
            for k in js::keys(m) {
                let mut matched = properties.is_some_and(|p| p.contains_key(k));
                for (p, item) in &pats {
                    if !self.c.test(p, k) {
                        continue;
                    }
                    matched = true;
                    if let Some(current) = members.current(k).cloned() {
                        members.set(k, self.drop_optional_nulls(&current, item, b));
                    }
                }
                if let (false, Some(a)) = (matched, additional) {
                    members.set(k, self.drop_optional_nulls(&m[k.as_str()], a, b));
                }
            }
        }
        members.finish(v)
    }

    // Pass 2: TypeBox's conversion rules.

    fn convert(&self, node: &Value, base: &str, v: &Value, entered: &mut Vec<(usize, Value)>) -> Value {
        let Value::Object(o) = node else { return v.clone() };
        if !self.enter() {
            return v.clone();
        }
        let b = self.c.base_for(node, base);
        let out = if let Some(Value::String(r)) = o.get("$ref") {
            match self.c.resolve(r, &b) {
                Some((target, tb)) if target.is_object() => self.reenter(target, &tb, v, entered),
                _ => v.clone(),
            }
        } else {
            self.convert_node(o, &b, node, v, entered)
        };
        self.leave();
        out
    }

    /// `node` converted for `v` at a re-entry point (a `$ref` or a wrap): unchanged when that pair is already
    /// being converted, so a recursive schema cannot convert without end.
    fn reenter(&self, node: &Value, base: &str, v: &Value, entered: &mut Vec<(usize, Value)>) -> Value {
        let id = super::resolver::node_id(node);
        if entered.iter().any(|(n, x)| *n == id && js::equal(x, v)) {
            return v.clone();
        }
        entered.push((id, v.clone()));
        let out = self.convert(node, base, v, entered);
        entered.pop();
        out
    }

    fn convert_node(
        &self,
        o: &Map<String, Value>,
        b: &str,
        node: &Value,
        v: &Value,
        entered: &mut Vec<(usize, Value)>,
    ) -> Value {
        if let Some(c) = o.get("const") {
            return convert_literal(c, v);
        }
        if let Some(Value::Array(values)) = o.get("enum") {
            if values.iter().any(|m| js::strict_equal(m, v)) {
                return v.clone();
            }
            for member in values {
                let candidate = convert_literal(member, v);
                if !js::equal(&candidate, v) && self.passes(node, b, &candidate) == Some(true) {
                    return candidate;
                }
            }
            return v.clone();
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = o.get(key) {
                return self.convert_union(o, node, branches, b, v, entered);
            }
        }
        if let Some(Value::Array(all)) = o.get("allOf") {
            let mut next = v.clone();
            for member in all {
                next = self.convert(member, b, &next, entered);
            }
            return self.convert_members(o, b, &next, entered);
        }
        match o.get("type") {
            Some(Value::String(t)) => match t.as_str() {
                "string" => try_string(v).unwrap_or_else(|| v.clone()),
                "number" => try_number(v).map_or_else(|| v.clone(), js::number),
                "integer" => try_number(v).map_or_else(|| v.clone(), |n| js::number(n.trunc())),
                "boolean" => try_boolean(v).map_or_else(|| v.clone(), Value::Bool),
                "null" => {
                    if try_null(v) {
                        Value::Null
                    } else {
                        v.clone()
                    }
                }
                "array" => self.convert_array(o, b, v, entered),
                "object" => self.convert_object(o, b, v, entered),
                _ => v.clone(),
            },
            None => {
                if o.contains_key("properties") || o.contains_key("patternProperties") {
                    self.convert_object(o, b, v, entered)
                } else if o.contains_key("items") || o.contains_key("prefixItems") {
                    self.convert_array(o, b, v, entered)
                } else {
                    v.clone()
                }
            }
            Some(_) => v.clone(),
        }
    }

    /// A value one branch accepts stays; else the first branch's conversion the whole union accepts.
    fn convert_union(
        &self,
        o: &Map<String, Value>,
        node: &Value,
        branches: &[Value],
        b: &str,
        v: &Value,
        entered: &mut Vec<(usize, Value)>,
    ) -> Value {
        if branches.iter().any(|s| self.passes(s, b, v) == Some(true)) {
            return self.convert_members(o, b, v, entered);
        }
        for branch in branches {
            let converted = self.convert(branch, b, v, entered);
            let candidate = self.convert_members(o, b, &converted, entered);
            if self.passes(node, b, &candidate) == Some(true) {
                return candidate;
            }
        }
        self.convert_members(o, b, v, entered)
    }

    /// The object members of a union or intersection node, when it declares any.
    fn convert_members(&self, o: &Map<String, Value>, b: &str, v: &Value, entered: &mut Vec<(usize, Value)>) -> Value {
        if ["properties", "patternProperties", "additionalProperties"].iter().any(|k| o.contains_key(*k)) {
            self.convert_object(o, b, v, entered)
        } else {
            v.clone()
        }
    }

    fn convert_array(&self, o: &Map<String, Value>, b: &str, v: &Value, entered: &mut Vec<(usize, Value)>) -> Value {
        let prefix = match (o.get("items"), o.get("prefixItems")) {
            (Some(Value::Array(p)), _) | (_, Some(Value::Array(p))) => Some(p),
            _ => None,
        };
        if let Some(prefix) = prefix {
            // A tuple converts its items and never wraps a single value.
            let Value::Array(items) = v else { return v.clone() };
            let rest = o.get("items").filter(|i| !i.is_array());
            return map_items(items, v, |item, i| match prefix.get(i).or(rest) {
                Some(s) => self.convert(s, b, item, entered),
                None => item.clone(),
            });
        }
        if let Value::Array(items) = v {
            return match o.get("items") {
                Some(s) => map_items(items, v, |item, _| self.convert(s, b, item, entered)),
                None => v.clone(),
            };
        }
        match o.get("items") {
            Some(item) if item.is_object() => Value::Array(vec![self.reenter(item, b, v, entered)]),
            _ => Value::Array(vec![v.clone()]),
        }
    }

    fn convert_object(&self, o: &Map<String, Value>, b: &str, v: &Value, entered: &mut Vec<(usize, Value)>) -> Value {
        let Value::Object(m) = v else { return v.clone() };
        let properties = object(o.get("properties"));
        let pats = patterns(o);
        let additional = o.get("additionalProperties").filter(|a| a.is_object());
        let mut members = Members::new(m);
        for k in js::keys(m) {
            let mut next = m[k.as_str()].clone();
            let mut matched = false;
            if let Some(s) = properties.and_then(|p| p.get(k.as_str())) {
                matched = true;
                next = self.convert(s, b, &next, entered);
            }
            for (p, s) in &pats {
                if self.c.test(p, k) {
                    matched = true;
                    next = self.convert(s, b, &next, entered);
                }
            }
            if let (false, Some(a)) = (matched, additional) {
                next = self.convert(a, b, &next, entered);
            }
            members.set(k, next);
        }
        members.finish(v)
    }

    // Pass 3: primitive coercion by type.

    fn coerce_types(&self, v: &Value, schema: &Value, base: &str) -> Value {
        let Value::Object(s) = schema else { return v.clone() };
        if !self.enter() {
            return v.clone();
        }
        let b = self.c.base_for(schema, base);
        let b = b.as_ref();
        let mut next = v.clone();
        for member in s.get("allOf").and_then(Value::as_array).into_iter().flatten() {
            next = self.coerce_types(&next, member, b);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = s.get(key) {
                next = self.coerce_union(&next, branches, b);
            }
        }
        let types = types_of(s);
        let matches_member = types.len() > 1 && types.iter().any(|t| matches_type(&next, t));
        if !types.is_empty() && !matches_member {
            for t in &types {
                let candidate = coerce_primitive(&next, t);
                if !js::equal(&candidate, &next) {
                    next = candidate;
                    break;
                }
            }
        }
        if types.contains(&"object")
            && let Value::Object(m) = &next
        {
            next = self.coerce_properties(m, &next, s, b);
        }
        if types.contains(&"array")
            && let Value::Array(items) = &next
        {
            next = map_items(items, &next, |item, i| match item_schema_at(s, i) {
                Some(item_schema) if item_schema.is_object() => self.coerce_types(item, item_schema, b),
                _ => item.clone(),
            });
        }
        self.leave();
        next
    }

    fn coerce_union(&self, v: &Value, branches: &[Value], b: &str) -> Value {
        if branches.iter().any(|s| self.passes(s, b, v) == Some(true)) {
            return v.clone();
        }
        for branch in branches {
            let coerced = self.coerce_types(v, branch, b);
            if self.passes(branch, b, &coerced) == Some(true) {
                return coerced;
            }
        }
        v.clone()
    }

    fn coerce_properties(&self, m: &Map<String, Value>, v: &Value, s: &Map<String, Value>, b: &str) -> Value {
        let properties = object(s.get("properties"));
        let pats = patterns(s);
        let additional = s.get("additionalProperties").filter(|a| a.is_object());
        let mut members = Members::new(m);
        for k in properties.map(js::keys).unwrap_or_default() {
            if let (Some(x), Some(p)) = (m.get(k.as_str()), properties) {
                members.set(k, self.coerce_types(x, &p[k.as_str()], b));
            }
        }
        for k in js::keys(m) {
            let mut matched = properties.is_some_and(|p| p.contains_key(k));
            for (p, item) in &pats {
                if !self.c.test(p, k) {
                    continue;
                }
                matched = true;
                if let Some(current) = members.current(k).cloned() {
                    members.set(k, self.coerce_types(&current, item, b));
                }
            }
            if let (false, Some(a)) = (matched, additional) {
                members.set(k, self.coerce_types(&m[k.as_str()], a, b));
            }
        }
        members.finish(v)
    }
}
