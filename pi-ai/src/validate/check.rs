//! The boolean check of a value against a schema, with pi-schema's semantics (JSON Schema 2020-12; draft-7
//! `items` arrays, `additionalItems` and `dependencies` also apply; a `$dynamicRef` is followed as a `$ref`).

use serde_json::{Map, Value};

use super::formats;
use super::js;
use super::schema::{Ctx, object};

/// Whether `v` has the JSON Schema type `name` (unknown names, `bytes`, `bigint` and `undefined` match no JSON
/// value).
pub(crate) fn has_type(name: &str, v: &Value) -> bool {
    match name {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => js::is_integer(v),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => false,
    }
}

/// A number keyword's value.
pub(crate) fn num(o: &Map<String, Value>, key: &str) -> Option<f64> {
    o.get(key).and_then(Value::as_f64)
}

/// Whether `v` is a multiple of `d`, exactly for decimals (0.0075 is a multiple of 0.0001).
pub(crate) fn is_multiple(v: f64, d: f64) -> bool {
    let q = v / d;
    if q.is_finite() && q.fract() == 0.0 {
        return true;
    }
    if !q.is_finite() {
        return v % d == 0.0;
    }
    let (Some((vc, ve)), Some((dc, de))) = (decimal(v), decimal(d)) else { return v % d == 0.0 };
    if dc == 0 {
        return false;
    }
    let scale = |c: u128, e: i32| 10u128.checked_pow(e.unsigned_abs()).and_then(|p| c.checked_mul(p));
    if ve >= de {
        scale(vc, ve - de).is_some_and(|x| x % dc == 0)
    } else {
        scale(dc, de - ve).is_some_and(|x| vc % x == 0)
    }
}

/// The digits and decimal exponent of `|x|` as JS writes it: `0.0075` is (75, -4).
fn decimal(x: f64) -> Option<(u128, i32)> {
    let text = crate::json::js_number_to_string(x.abs());
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().ok()?;
    let fraction = mantissa.find('.').map_or(0, |p| mantissa.len() - p - 1);
    let digits: u128 = mantissa.replace('.', "").parse().ok()?;
    Some((digits, exponent - i32::try_from(fraction).ok()?))
}

impl Ctx<'_> {
    /// Whether `v` passes `node` (whose parent has the base URI `base`).
    pub(crate) fn check(&self, node: &Value, base: &str, v: &Value) -> bool {
        let o = match node {
            Value::Bool(b) => return *b,
            Value::Object(o) => o,
            _ => return false,
        };
        if !self.enter() {
            return false;
        }
        let b = self.c.base_for(node, base);
        let ok = if o.contains_key("unevaluatedProperties") || o.contains_key("unevaluatedItems") {
            self.annotate(node, &b, v, &mut super::annotations::Annotations::default())
        } else {
            self.check_plain(o, &b, v, None)
        };
        self.leave();
        ok
    }

    /// Every keyword of `o` except, when `skip` says so, the ones an annotating check handles itself.
    pub(crate) fn check_plain(&self, o: &Map<String, Value>, b: &str, v: &Value, skip: Option<&[&str]>) -> bool {
        let get = |k: &str| keyword(o, skip, k);
        let has = |k: &str| get(k).is_some();
        if let Some(t) = o.get("type") {
            let ok = match t {
                Value::Array(types) => types.iter().any(|t| t.as_str().is_some_and(|t| has_type(t, v))),
                Value::String(t) => has_type(t, v),
                _ => false,
            };
            if !ok {
                return false;
            }
        }
        let ok = match v {
            Value::String(s) => self.string_ok(o, s),
            Value::Number(n) => number_ok(o, js::f64_of(n)),
            Value::Object(m) => self.object_ok(o, b, m, skip),
            Value::Array(items) => self.array_ok(o, b, items, skip),
            _ => true,
        };
        if !ok {
            return false;
        }
        if let Some(Value::Array(values)) = o.get("enum")
            && !values.iter().any(|x| js::equal(x, v))
        {
            return false;
        }
        if let Some(c) = o.get("const")
            && !js::equal(c, v)
        {
            return false;
        }
        if let Some(Value::Array(all)) = get("allOf")
            && !all.iter().all(|s| self.check(s, b, v))
        {
            return false;
        }
        if let Some(Value::Array(any)) = get("anyOf")
            && !any.iter().any(|s| self.check(s, b, v))
        {
            return false;
        }
        if let Some(Value::Array(one)) = get("oneOf")
            && one.iter().filter(|s| self.check(s, b, v)).take(2).count() != 1
        {
            return false;
        }
        if let Some(not) = o.get("not")
            && self.check(not, b, v)
        {
            return false;
        }
        if let (Some(cond), true) = (get("if"), has("then") || has("else")) {
            let branch = if self.check(cond, b, v) { get("then") } else { get("else") };
            if branch.is_some_and(|s| !self.check(s, b, v)) {
                return false;
            }
        }
        for key in ["$ref", "$dynamicRef"] {
            if let Some(Value::String(r)) = get(key)
                && !self.check_ref(r, b, v)
            {
                return false;
            }
        }
        true
    }

    /// A `$ref`: the target's check; a reference that names nothing rejects every value.
    pub(crate) fn check_ref(&self, reference: &str, base: &str, v: &Value) -> bool {
        match self.c.resolve(reference, base) {
            Some((target, tb)) => self.check(target, &tb, v),
            None => false,
        }
    }

    fn string_ok(&self, o: &Map<String, Value>, s: &str) -> bool {
        if o.get("type").and_then(Value::as_str) == Some("bytes") {
            return true;
        }
        let n = s.chars().count() as f64;
        if num(o, "minLength").is_some_and(|m| n < m) || num(o, "maxLength").is_some_and(|m| n > m) {
            return false;
        }
        if let Some(Value::String(p)) = o.get("pattern")
            && !self.c.test(p, s)
        {
            return false;
        }
        match o.get("format") {
            Some(Value::String(f)) => formats::check(f, s).unwrap_or(true),
            _ => true,
        }
    }

    fn object_ok(&self, o: &Map<String, Value>, b: &str, m: &Map<String, Value>, skip: Option<&[&str]>) -> bool {
        let get = |k: &str| keyword(o, skip, k);
        let properties = object(get("properties"));
        if let Some(Value::Array(required)) = o.get("required")
            && required.iter().filter_map(Value::as_str).any(|k| !m.contains_key(k))
        {
            return false;
        }
        let patterns = object(get("patternProperties"));
        let additional = get("additionalProperties");
        for (k, x) in m {
            let mut matched = false;
            if let Some(s) = properties.and_then(|p| p.get(k)) {
                matched = true;
                if !self.check(s, b, x) {
                    return false;
                }
            }
            for (p, s) in patterns.into_iter().flatten() {
                if self.c.test(p, k) {
                    matched = true;
                    if !self.check(s, b, x) {
                        return false;
                    }
                }
            }
            if let (false, Some(a)) = (matched, additional)
                && !self.check(a, b, x)
            {
                return false;
            }
            if let Some(names) = o.get("propertyNames")
                && !self.check(names, b, &Value::String(k.clone()))
            {
                return false;
            }
        }
        let count = m.len() as f64;
        if num(o, "minProperties").is_some_and(|n| count < n) || num(o, "maxProperties").is_some_and(|n| count > n) {
            return false;
        }
        for key in ["dependentRequired", "dependencies"] {
            for (k, d) in object(o.get(key)).into_iter().flatten() {
                if !m.contains_key(k) {
                    continue;
                }
                match d {
                    Value::Array(list) if list.iter().any(|r| !m.contains_key(&js::to_string(r))) => {
                        return false;
                    }
                    schema if key == "dependencies" && !self.check(schema, b, &Value::Object(m.clone())) => {
                        return false;
                    }
                    _ => {}
                }
            }
        }
        if let Some(deps) = object(get("dependentSchemas")) {
            let whole = Value::Object(m.clone());
            if deps.iter().any(|(k, s)| m.contains_key(k) && !self.check(s, b, &whole)) {
                return false;
            }
        }
        true
    }

    fn array_ok(&self, o: &Map<String, Value>, b: &str, items: &[Value], skip: Option<&[&str]>) -> bool {
        let get = |k: &str| keyword(o, skip, k);
        let (prefix, rest) = match get("items") {
            Some(Value::Array(list)) => (list.as_slice(), get("additionalItems")),
            rest => (get("prefixItems").and_then(Value::as_array).map_or(&[][..], Vec::as_slice), rest),
        };
        for (i, x) in items.iter().enumerate() {
            let s = prefix.get(i).or(rest);
            if s.is_some_and(|s| !self.check(s, b, x)) {
                return false;
            }
        }
        let n = items.len() as f64;
        if num(o, "minItems").is_some_and(|m| n < m) || num(o, "maxItems").is_some_and(|m| n > m) {
            return false;
        }
        if let Some(c) = get("contains") {
            let (min, max) = contains_bounds(o);
            let matching = items.iter().filter(|x| self.check(c, b, x)).count() as f64;
            if matching < min || matching > max {
                return false;
            }
        }
        if o.get("uniqueItems") == Some(&Value::Bool(true)) && !unique(items) {
            return false;
        }
        true
    }
}

/// Keyword `k` of `o`, unless `skip` lists it.
fn keyword<'o>(o: &'o Map<String, Value>, skip: Option<&[&str]>, k: &str) -> Option<&'o Value> {
    if skip.is_some_and(|s| s.contains(&k)) { None } else { o.get(k) }
}

/// `minContains` and `maxContains` (1 and unbounded by default).
pub(crate) fn contains_bounds(o: &Map<String, Value>) -> (f64, f64) {
    (num(o, "minContains").unwrap_or(1.0), num(o, "maxContains").unwrap_or(f64::INFINITY))
}

/// Whether no two items are JSON-equal.
pub(crate) fn unique(items: &[Value]) -> bool {
    items.iter().enumerate().all(|(i, x)| items[..i].iter().all(|y| !js::equal(x, y)))
}

/// The number keywords, for a number value.
fn number_ok(o: &Map<String, Value>, v: f64) -> bool {
    !(num(o, "minimum").is_some_and(|m| v < m)
        || num(o, "maximum").is_some_and(|m| v > m)
        || num(o, "exclusiveMinimum").is_some_and(|m| v <= m)
        || num(o, "exclusiveMaximum").is_some_and(|m| v >= m)
        || num(o, "multipleOf").is_some_and(|d| !is_multiple(v, d)))
}
