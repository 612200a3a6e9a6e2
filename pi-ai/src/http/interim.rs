//! INTERIM: stand-ins for part A's modules (`models`, `tool_args`, `handoff`) until they land.
//! Deleted once they do; nothing outside the HTTP providers uses these.
#![allow(missing_docs, dead_code)]

pub mod models {
    use crate::types::{Model, Usage};
    pub fn calculate_cost(model: &Model, usage: &mut Usage) {
        let c = &model.cost;
        usage.cost.input = c.input * usage.input as f64 / 1e6;
        usage.cost.output = c.output * usage.output as f64 / 1e6;
        usage.cost.cache_read = c.cache_read * usage.cache_read as f64 / 1e6;
        let h1 = usage.cache_write_1h.unwrap_or(0);
        usage.cost.cache_write =
            (c.cache_write * (usage.cache_write - h1.min(usage.cache_write)) as f64 + 2.0 * c.input * h1 as f64) / 1e6;
        usage.cost.total = usage.cost.input + usage.cost.output + usage.cost.cache_read + usage.cost.cache_write;
    }
}

pub mod tool_args {
    use serde_json::{Map, Value};
    pub struct Parsed {
        pub arguments: Map<String, Value>,
        pub arguments_error: Option<String>,
    }
    pub fn parse_tool_call_arguments(text: &str) -> Parsed {
        if text.trim().is_empty() {
            return Parsed { arguments: Map::new(), arguments_error: None };
        }
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(m)) => Parsed { arguments: m, arguments_error: None },
            Ok(_) => Parsed {
                arguments: Map::new(),
                arguments_error: Some(format!("Tool arguments must be a JSON object\n\nReceived arguments:\n{text}")),
            },
            Err(e) => {
                Parsed { arguments: Map::new(), arguments_error: Some(format!("{e}\n\nReceived arguments:\n{text}")) }
            }
        }
    }
    pub fn parse_streaming_json(text: &str) -> Value {
        serde_json::from_str(text).unwrap_or(Value::Object(Map::new()))
    }
}

pub mod handoff {
    use crate::types::{Message, Model};
    pub fn transform_messages(
        messages: &[Message],
        _model: &Model,
        _n: Option<&dyn Fn(&str) -> String>,
    ) -> Vec<Message> {
        messages.to_vec()
    }
    pub fn short_hash(s: &str) -> String {
        let (mut h1, mut h2): (u32, u32) = (0xdeadbeef, 0x41c6ce57);
        for c in s.encode_utf16() {
            let c = u32::from(c);
            h1 = (h1 ^ c).wrapping_mul(2654435761);
            h2 = (h2 ^ c).wrapping_mul(1597334677);
        }
        h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2246822507) ^ (h2 ^ (h2 >> 13)).wrapping_mul(3266489909);
        h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2246822507) ^ (h1 ^ (h1 >> 13)).wrapping_mul(3266489909);
        fn b36(mut n: u32) -> String {
            if n == 0 {
                return "0".into();
            }
            let mut v = Vec::new();
            while n > 0 {
                v.push(std::char::from_digit(n % 36, 36).unwrap_or('0'));
                n /= 36;
            }
            v.iter().rev().collect()
        }
        format!("{}{}", b36(h2), b36(h1))
    }
}
