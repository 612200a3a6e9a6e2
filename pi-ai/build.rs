//! Splits the built-in model catalog (`src/models/catalog.json`) by provider at build time, so a
//! run parses only the providers it uses: `catalog_index.rs` in `OUT_DIR` lists every provider
//! with the byte range of its model array in the embedded JSON and each model's id and name
//! (what model resolution matches on), without any `Model` being built.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::value::RawValue;

fn main() {
    let source = Path::new("src/models/catalog.json");
    println!("cargo::rerun-if-changed={}", source.display());
    let text = std::fs::read_to_string(source).expect("src/models/catalog.json is readable");
    let providers: HashMap<String, &RawValue> =
        serde_json::from_str(&text).expect("src/models/catalog.json is an object of providers");
    let base = text.as_ptr() as usize;
    let mut ranges: Vec<(usize, usize, &str, &RawValue)> = providers
        .iter()
        .map(|(id, raw)| {
            let start = raw.get().as_ptr() as usize - base;
            (start, start + raw.get().len(), id.as_str(), *raw)
        })
        .collect();
    // File order is catalog order.
    ranges.sort_unstable_by_key(|r| r.0);
    let mut out = format!("static PROVIDERS: [BuiltinProvider; {}] = [\n", ranges.len());
    for (start, end, id, raw) in &ranges {
        let models: Vec<serde_json::Value> =
            serde_json::from_str(raw.get()).expect("each provider of catalog.json is an array of models");
        let mut keys = String::new();
        for model in &models {
            let field = |name: &str| model.get(name).and_then(serde_json::Value::as_str).unwrap_or_default();
            write!(keys, "({:?}, {:?}), ", field("id"), field("name")).expect("write to a String");
        }
        writeln!(out, "    BuiltinProvider::new({id:?}, {start}, {end}, &[{keys}]),").expect("write to a String");
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo")).join("catalog_index.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}
