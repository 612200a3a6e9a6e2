//! Numbers written the way JavaScript's `JSON.stringify` writes them.
//!
//! pi stores costs as JS numbers. `serde_json` prints `0.000015` as `1.5e-5` and `3.0` as `3.0`; JS
//! prints `0.000015` and `3`. Sessions and fixtures written by the TypeScript pi must survive a
//! read/write round trip byte for byte, so cost fields go through [`JsNumber`].

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};

/// An `f64` that serializes exactly as JavaScript's `JSON.stringify` would.
///
/// Integral values within ±2^53 are written as integers; other finite values use the shortest
/// round-trip digits with JS's rules for when to switch to exponent notation. Non-finite values
/// become `null`, as in JS.
///
/// ```
/// use pi_ai::json::JsNumber;
/// assert_eq!(serde_json::to_string(&JsNumber(0.000015)).unwrap(), "0.000015");
/// assert_eq!(serde_json::to_string(&JsNumber(1.5e-7)).unwrap(), "1.5e-7");
/// assert_eq!(serde_json::to_string(&JsNumber(3.0)).unwrap(), "3");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct JsNumber(pub f64);

impl From<f64> for JsNumber {
    fn from(value: f64) -> Self {
        JsNumber(value)
    }
}

impl From<JsNumber> for f64 {
    fn from(value: JsNumber) -> Self {
        value.0
    }
}

use crate::js::MAX_SAFE;

pub use crate::js::js_number_to_string;

impl Serialize for JsNumber {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let v = self.0;
        if !v.is_finite() {
            return serializer.serialize_unit();
        }
        if v.fract() == 0.0 && v.abs() < MAX_SAFE {
            // -0 is written as 0 by JS.
            return serializer.serialize_i64(v as i64);
        }
        let text = js_number_to_string(v);
        match serde_json::value::RawValue::from_string(text) {
            Ok(raw) => raw.serialize(serializer),
            Err(_) => serializer.serialize_f64(v),
        }
    }
}

impl<'de> Deserialize<'de> for JsNumber {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // `null` (a JS NaN/Infinity written by JSON.stringify) reads back as NaN.
        let v = Option::<f64>::deserialize(deserializer)?;
        Ok(JsNumber(v.unwrap_or(f64::NAN)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_javascript_for_reference_values() {
        // Expected strings printed by Node 22's JSON.stringify.
        let cases = [
            (0.000001, "0.000001"),
            (1.5e-7, "1.5e-7"),
            (0.000015, "0.000015"),
            (1e21, "1e+21"),
            (123456789012345680000.0, "123456789012345680000"),
            (0.1 + 0.2, "0.30000000000000004"),
            (5e-324, "5e-324"),
            (1e-7, "1e-7"),
            (2.5e-6, "0.0000025"),
            (100.0, "100"),
            (-0.5, "-0.5"),
            (1e300, "1e+300"),
        ];
        for (v, want) in cases {
            assert_eq!(js_number_to_string(v), want, "{v:e}");
            let json = serde_json::to_string(&JsNumber(v)).unwrap();
            assert_eq!(json, want, "{v:e}");
        }
    }

    #[test]
    fn non_finite_is_null() {
        assert_eq!(serde_json::to_string(&JsNumber(f64::NAN)).unwrap(), "null");
        let back: JsNumber = serde_json::from_str("null").unwrap();
        assert!(back.0.is_nan());
    }
}
