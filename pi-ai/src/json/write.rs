//! JSON written as JavaScript's `JSON.stringify` writes it: numbers in JavaScript's form (`3`, not
//! `3.0`; `0.000015`, not `1.5e-5`), compact or with `JSON.stringify(value, null, 2)`'s indent.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

struct Js<F>(F);

macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*)),* $(,)?) => {
        $(fn $name<W: ?Sized + io::Write>(&mut self, w: &mut W $(, $arg: $ty)*) -> io::Result<()> {
            self.0.$name(w $(, $arg)*)
        })*
    };
}

impl<F: Formatter> Formatter for Js<F> {
    delegate!(
        begin_array(),
        end_array(),
        begin_array_value(first: bool),
        end_array_value(),
        begin_object(),
        end_object(),
        begin_object_key(first: bool),
        begin_object_value(),
        end_object_value(),
    );

    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        let text = if value.is_finite() { super::js_number_to_string(value) } else { "null".to_owned() };
        w.write_all(text.as_bytes())
    }
}

/// `value` as `JSON.stringify(value, null, 2)` (no trailing newline).
///
/// ```
/// let v = serde_json::json!({"a": 3.0, "b": [], "c": {"d": 0.000015}});
/// assert_eq!(pi_ai::json::to_js_json_pretty(&v), "{\n  \"a\": 3,\n  \"b\": [],\n  \"c\": {\n    \"d\": 0.000015\n  }\n}");
/// ```
pub fn to_js_json_pretty<T: Serialize + ?Sized>(value: &T) -> String {
    write(value, Js(PrettyFormatter::with_indent(b"  ")))
}

/// `value` as `JSON.stringify(value)`.
///
/// ```
/// let v = serde_json::json!({"cost": 0.0, "n": 1.5e-7});
/// assert_eq!(pi_ai::json::to_js_json(&v), r#"{"cost":0,"n":1.5e-7}"#);
/// ```
pub fn to_js_json<T: Serialize + ?Sized>(value: &T) -> String {
    write(value, Js(CompactFormatter))
}

fn write<T: Serialize + ?Sized, F: Formatter>(value: &T, formatter: F) -> String {
    let mut out = Vec::with_capacity(128);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    // Serializing into a Vec fails only for a map with non-string keys, which JSON has none of.
    if value.serialize(&mut ser).is_err() {
        return String::new();
    }
    String::from_utf8(out).unwrap_or_default()
}
