//! JavaScript compatibility, in one place: what pi's TypeScript gets from the language and this
//! port must reproduce exactly. String lengths in UTF-16 code units (`.length`), `Date.now()`,
//! `Number.prototype.toString()`, JSON numbers as JavaScript writes them, and truthiness.
//!
//! ```
//! use pi_ai::js;
//! assert_eq!(js::js_len("é😀"), 3);
//! assert_eq!(js::js_number_to_string(0.5), "0.5");
//! assert!(!js::is_truthy(&serde_json::json!("")));
//! assert_eq!(js::js_number_value(3.0), serde_json::json!(3));
//! ```

use serde_json::{Number, Value};

/// The largest integer a JavaScript number holds exactly (2^53).
pub(crate) const MAX_SAFE: f64 = 9_007_199_254_740_992.0;

/// The length of `s` in UTF-16 code units (JavaScript's `.length`).
pub fn js_len(s: &str) -> usize {
    if s.is_ascii() { s.len() } else { s.chars().map(char::len_utf16).sum() }
}

/// Milliseconds since the Unix epoch (JavaScript's `Date.now()`); 0 before 1970.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// JavaScript truthiness of a JSON value (`null`, `false`, `0`, `NaN` and `""` are falsy; every
/// object and array is truthy).
pub fn is_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// A JavaScript number as a JSON value: integral values within ±2^53 as integers (JavaScript has
/// no `3.0`), others as floats, non-finite ones as `null` (as `JSON.stringify` writes them).
pub fn js_number_value(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() <= MAX_SAFE {
        Value::Number(Number::from(f as i64))
    } else {
        Number::from_f64(f).map(Value::Number).unwrap_or(Value::Null)
    }
}

/// Formats `value` as JavaScript's `Number.prototype.toString()` does (radix 10).
///
/// ```
/// assert_eq!(pi_ai::json::js_number_to_string(1e21), "1e+21");
/// assert_eq!(pi_ai::json::js_number_to_string(0.0000025), "0.0000025");
/// assert_eq!(pi_ai::json::js_number_to_string(-0.5), "-0.5");
/// ```
pub fn js_number_to_string(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_owned();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if value == 0.0 {
        return "0".to_owned();
    }
    // Shortest round-trip digits and exponent from Rust's LowerExp: "d.ddde-x".
    let exp_form = format!("{:e}", value.abs());
    let (mantissa, exp) = exp_form.split_once('e').unwrap_or((&exp_form, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i32;
    // value = 0.digits × 10^n
    let n = exp + 1;
    let mut out = String::with_capacity(k as usize + 8);
    if value < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        let e = n - 1;
        out.push(if e >= 0 { '+' } else { '-' });
        out.push_str(&e.abs().to_string());
    }
    out
}
