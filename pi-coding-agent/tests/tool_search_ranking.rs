//! `tool_search`'s ranking against the reference's: the same tools and queries give the same
//! matches in the same order (`scripts/fixtures/tool_search_ranking.mjs` recorded pi 1.6.0's).

use pi_coding_agent::builtin_extensions::tool_search::{SearchableTool, ToolNamespace, rank};
use serde_json::Value;

#[test]
fn ranking_matches_the_reference() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tool_search_ranking.json"))
        .expect("fixture");
    let fixture: Value = serde_json::from_str(&text).expect("fixture JSON");
    let tools: Vec<SearchableTool> = fixture["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| SearchableTool {
            name: t["name"].as_str().expect("name").to_owned(),
            description: t["description"].as_str().expect("description").to_owned(),
            parameters: t["parameters"].clone(),
            namespace: t.get("namespace").map(|n| ToolNamespace {
                name: n["name"].as_str().unwrap_or("").to_owned(),
                description: n["description"].as_str().map(str::to_owned),
                instructions: n["instructions"].as_str().map(str::to_owned),
            }),
        })
        .collect();
    for case in fixture["results"].as_array().expect("results") {
        let query = case["query"].as_str().expect("query");
        let expected: Vec<&str> = case["ranked"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        let ours: Vec<String> = rank(query, &tools, 8).into_iter().map(|(n, _)| n).collect();
        assert_eq!(ours, expected, "query {query:?}");
    }
}
