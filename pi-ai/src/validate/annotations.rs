//! `unevaluatedProperties` and `unevaluatedItems`: annotating checks that record which properties and items the
//! keywords of a schema evaluated, as pi-schema tracks them.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::check::num;
use super::schema::{Ctx, object};

/// The keywords an annotating check handles itself; the others run as a plain check first.
const ANNOTATING: [&str; 20] = [
    "properties",
    "patternProperties",
    "additionalProperties",
    "prefixItems",
    "items",
    "additionalItems",
    "contains",
    "minContains",
    "maxContains",
    "allOf",
    "anyOf",
    "oneOf",
    "if",
    "then",
    "else",
    "$ref",
    "$dynamicRef",
    "dependentSchemas",
    "unevaluatedProperties",
    "unevaluatedItems",
];

/// What the keywords of a schema evaluated of one value.
#[derive(Clone, Debug, Default)]
pub(crate) struct Annotations {
    pub(crate) props: HashSet<String>,
    pub(crate) all_props: bool,
    pub(crate) items: usize,
    pub(crate) all_items: bool,
    pub(crate) indexes: HashSet<usize>,
}

impl Annotations {
    fn merge(&mut self, b: Annotations) {
        self.props.extend(b.props);
        self.all_props |= b.all_props;
        self.items = self.items.max(b.items);
        self.all_items |= b.all_items;
        self.indexes.extend(b.indexes);
    }
}

impl Ctx<'_> {
    /// The annotating check of `node`: whether `v` passes, recording what was evaluated in `a`.
    pub(crate) fn annotate(&self, node: &Value, base: &str, v: &Value, a: &mut Annotations) -> bool {
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
            // unevaluated* sees only the annotations of its own schema, never those of its siblings.
            let mut own = Annotations::default();
            let ok = self.annotate_parts(o, &b, v, &mut own);
            if ok {
                a.merge(own);
            }
            ok
        } else {
            self.annotate_parts(o, &b, v, a)
        };
        self.leave();
        ok
    }

    /// The plain keywords, then each annotating keyword in pi-schema's order.
    pub(crate) fn annotate_parts(&self, o: &Map<String, Value>, b: &str, v: &Value, a: &mut Annotations) -> bool {
        if !self.check_plain(o, b, v, Some(&ANNOTATING)) {
            return false;
        }
        if ["properties", "patternProperties", "additionalProperties"].iter().any(|k| o.contains_key(*k))
            && !self.annotate_object(o, b, v, a)
        {
            return false;
        }
        if ["prefixItems", "items", "contains"].iter().any(|k| o.contains_key(*k)) && !self.annotate_array(o, b, v, a) {
            return false;
        }
        for s in o.get("allOf").and_then(Value::as_array).into_iter().flatten() {
            if !self.annotate(s, b, v, a) {
                return false;
            }
        }
        for (key, exactly_one) in [("anyOf", false), ("oneOf", true)] {
            if let Some(Value::Array(branches)) = o.get(key) {
                let mut n = 0;
                for s in branches {
                    let mut own = Annotations::default();
                    if self.annotate(s, b, v, &mut own) {
                        n += 1;
                        a.merge(own);
                    }
                }
                if if exactly_one { n != 1 } else { n == 0 } {
                    return false;
                }
            }
        }
        if let Some(cond) = o.get("if") {
            let mut own = Annotations::default();
            let branch = if self.annotate(cond, b, v, &mut own) {
                a.merge(own);
                o.get("then")
            } else {
                o.get("else")
            };
            if branch.is_some_and(|s| !self.annotate(s, b, v, a)) {
                return false;
            }
        }
        for key in ["$ref", "$dynamicRef"] {
            if let Some(Value::String(r)) = o.get(key) {
                let ok = match self.c.resolve(r, b) {
                    Some((target, tb)) => self.annotate(target, &tb, v, a),
                    None => false,
                };
                if !ok {
                    return false;
                }
            }
        }
        if let (Some(deps), Value::Object(m)) = (object(o.get("dependentSchemas")), v) {
            for (k, s) in deps {
                if m.contains_key(k) && !self.annotate(s, b, v, a) {
                    return false;
                }
            }
        }
        if let (Some(s), Value::Object(m)) = (o.get("unevaluatedProperties"), v)
            && !a.all_props
        {
            if m.iter().any(|(k, x)| !a.props.contains(k) && !self.check(s, b, x)) {
                return false;
            }
            a.all_props = true;
        }
        if let (Some(s), Value::Array(items)) = (o.get("unevaluatedItems"), v)
            && !a.all_items
        {
            let rest = items.iter().enumerate().skip(a.items);
            if rest.filter(|(i, _)| !a.indexes.contains(i)).any(|(_, x)| !self.check(s, b, x)) {
                return false;
            }
            a.all_items = true;
        }
        true
    }

    fn annotate_object(&self, o: &Map<String, Value>, b: &str, v: &Value, a: &mut Annotations) -> bool {
        let Value::Object(m) = v else { return true };
        let properties = object(o.get("properties"));
        let patterns = object(o.get("patternProperties"));
        let additional = o.get("additionalProperties");
        let mut seen = Vec::new();
        for (k, s) in properties.into_iter().flatten() {
            if let Some(x) = m.get(k) {
                if !self.check(s, b, x) {
                    return false;
                }
                seen.push(k.clone());
            }
        }
        for k in super::js::keys(m) {
            let x = &m[k.as_str()];
            let mut matched = properties.is_some_and(|p| p.contains_key(k));
            for (p, s) in patterns.into_iter().flatten() {
                if self.c.test(p, k) {
                    if !self.check(s, b, x) {
                        return false;
                    }
                    matched = true;
                    seen.push(k.clone());
                }
            }
            if let (false, Some(s)) = (matched, additional) {
                if !self.check(s, b, x) {
                    return false;
                }
                seen.push(k.clone());
            }
        }
        a.props.extend(seen);
        true
    }

    fn annotate_array(&self, o: &Map<String, Value>, b: &str, v: &Value, a: &mut Annotations) -> bool {
        let Value::Array(items) = v else { return true };
        let prefix = match (o.get("prefixItems"), o.get("items")) {
            (Some(Value::Array(list)), _) | (_, Some(Value::Array(list))) => list.as_slice(),
            _ => &[],
        };
        let rest = match o.get("items") {
            Some(Value::Array(_)) => o.get("additionalItems"),
            rest => rest,
        };
        let m = items.len().min(prefix.len());
        if (0..m).any(|i| !self.check(&prefix[i], b, &items[i])) {
            return false;
        }
        if let Some(rest) = rest {
            if items.iter().skip(prefix.len()).any(|x| !self.check(rest, b, x)) {
                return false;
            }
            a.all_items = true;
        }
        a.items = a.items.max(m);
        if let Some(c) = o.get("contains") {
            let mut n = 0.0;
            for (i, x) in items.iter().enumerate() {
                if self.check(c, b, x) {
                    n += 1.0;
                    a.indexes.insert(i);
                }
            }
            let (min, max) = (num(o, "minContains").unwrap_or(1.0), num(o, "maxContains").unwrap_or(f64::INFINITY));
            if n < min || n > max {
                return false;
            }
        }
        true
    }
}
