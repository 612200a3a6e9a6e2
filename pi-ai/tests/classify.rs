//! pi-ai's classifier and image-generation APIs against the reference's: every scenario of
//! `tests/fixtures/classify/reference.json` (recorded from pi-ai 1.6.0's own API modules by
//! `scripts/fixtures/pi_ai_classify.mjs`) runs here against a 127.0.0.1 server answering the same
//! replies; the requests (path, headers but the transport's own, body byte for byte) and the result
//! (all but the timestamp) must equal the reference's.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use pi_ai::classify::{ClassifierContext, ClassifierModel, ClassifyOptions};
use pi_ai::images::{ImageModel, ImagesContext, ImagesOptions};
use serde_json::{Value, json};

fn fixture() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/classify/reference.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("reference.json")).expect("reference.json parses")
}

/// The scripted llama-server of `pi_ai_classify.mjs`.
fn token_id(text: &str) -> i64 {
    let mut h: i64 = 0;
    for c in text.chars() {
        h = (h * 31 + c as i64) % 9973;
    }
    1000 + h
}

fn llama_reply(path: &str, body: &Value) -> Value {
    match path {
        "/tokenize" => {
            let c = body["content"].as_str().unwrap_or_default();
            let tokens = if c == "\n" {
                vec![10]
            } else if let Some(rest) = c.strip_prefix('\n') {
                vec![10, token_id(rest)]
            } else {
                vec![token_id(c)]
            };
            json!({ "tokens": tokens })
        }
        "/apply-template" => {
            let prompt: String = body["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| format!("<{}>{}", m["role"].as_str().unwrap_or(""), m["content"].as_str().unwrap_or("")))
                .collect();
            json!({ "prompt": format!("{prompt}<assistant><think>") })
        }
        "/completion" => {
            let labels = "ABCDEFGHIJ0123456789".chars().map(String::from).chain(["Yes".to_owned(), "No".to_owned()]);
            let top: Vec<Value> = labels
                .map(|l| token_id(&l))
                .map(|id| json!({"id": id, "logprob": -((id % 13) as f64 / 4.0)}))
                .collect();
            json!({ "completion_probabilities": [{ "top_logprobs": top }] })
        }
        _ => json!({ "error": "unknown path" }),
    }
}

#[derive(Default)]
struct State {
    replies: Mutex<VecDeque<Value>>,
    llama: bool,
    requests: Mutex<Vec<Value>>,
}

const SKIPPED: [&str; 8] = [
    "host",
    "connection",
    "content-length",
    "accept",
    "accept-encoding",
    "accept-language",
    "sec-fetch-mode",
    "user-agent",
];

fn handle(state: &State, uri: &Uri, headers: &HeaderMap, body: &Bytes) -> Response {
    let raw = String::from_utf8_lossy(body).into_owned();
    let mut recorded: Vec<(String, String)> = headers
        .iter()
        .filter(|(k, _)| !SKIPPED.contains(&k.as_str()) && !k.as_str().starts_with("x-stainless-"))
        .map(|(k, v)| (k.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    recorded.sort();
    let headers: serde_json::Map<String, Value> = recorded.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
    let path = uri.path_and_query().map(|p| p.as_str().to_owned()).unwrap_or_default();
    state.requests.lock().unwrap().push(json!({"method": "POST", "path": path, "headers": headers, "body": raw}));
    let (status, extra, text) = if state.llama {
        let parsed: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
        (200, serde_json::Map::new(), llama_reply(uri.path(), &parsed).to_string())
    } else {
        match state.replies.lock().unwrap().pop_front() {
            Some(reply) => (
                reply["status"].as_u64().unwrap_or(200) as u16,
                reply["headers"].as_object().cloned().unwrap_or_default(),
                reply["body"].as_str().unwrap_or_default().to_owned(),
            ),
            None => (404, serde_json::Map::new(), "no scripted reply".to_owned()),
        }
    };
    let mut builder = Response::builder().status(status).header("content-type", "application/json");
    builder = builder.header("connection", "close");
    for (k, v) in &extra {
        builder = builder.header(k.as_str(), v.as_str().unwrap_or_default());
    }
    builder.body(axum::body::Body::from(text)).expect("response")
}

async fn serve(state: Arc<State>) -> (String, tokio::task::JoinHandle<()>) {
    let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: Bytes| {
        let state = state.clone();
        async move { handle(&state, &uri, &headers, &body) }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    (
        url,
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        }),
    )
}

fn local_base(base_url: &str, url: &str) -> String {
    let base = base_url.replace("{CLOUDFLARE_ACCOUNT_ID}", "acc");
    let after_scheme = base.split_once("://").map(|(_, rest)| rest).unwrap_or(&base);
    let path = after_scheme.find('/').map(|i| &after_scheme[i..]).unwrap_or("/");
    format!("{url}{path}")
}

/// Numbers equal to 12 significant digits (V8's and the C library's `exp` may differ in the last
/// bit); everything else exactly.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap_or(f64::NAN), y.as_f64().unwrap_or(f64::NAN));
            x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w)),
        _ => a == b,
    }
}

async fn run_scenario(scenario: &Value) -> (Vec<Value>, Value) {
    let llama = scenario["llama"].as_bool().unwrap_or(false);
    let replies = scenario["replies"].as_array().cloned().unwrap_or_default();
    let state = Arc::new(State { replies: Mutex::new(replies.into()), llama, ..Default::default() });
    let (url, task) = serve(state.clone()).await;
    let (provider, id) = (scenario["provider"].as_str().unwrap_or(""), scenario["id"].as_str().unwrap_or(""));
    let api_key = (!scenario["apiKey"].is_null() || scenario.get("apiKey").is_none()).then(|| "test-key".to_owned());
    let temperature = scenario["options"]["temperature"].as_f64();
    let mut result = if scenario["kind"] == "images" {
        let mut model: ImageModel = pi_ai::images::get_image_model(provider, id).expect("image model").clone();
        model.base_url = local_base(&model.base_url, &url);
        let context: ImagesContext = serde_json::from_value(scenario["context"].clone()).expect("images context");
        let options = ImagesOptions { api_key, ..Default::default() };
        serde_json::to_value(pi_ai::images::generate_images(&model, &context, &options).await).expect("json")
    } else {
        let mut model: ClassifierModel = match scenario.get("model") {
            Some(m) => serde_json::from_value(m.clone()).expect("model"),
            None => pi_ai::classify::get_classifier_model(provider, id).expect("classifier model").clone(),
        };
        model.base_url = local_base(&model.base_url, &url);
        let context: ClassifierContext = serde_json::from_value(scenario["context"].clone()).expect("context");
        let options = ClassifyOptions { api_key, temperature, ..Default::default() };
        serde_json::to_value(pi_ai::classify::classify(&model, &context, &options).await).expect("json")
    };
    task.abort();
    result.as_object_mut().expect("result object").remove("timestamp");
    let mut requests = state.requests.lock().unwrap().clone();
    if llama {
        let key = |r: &Value| format!("{}{}", r["path"].as_str().unwrap_or(""), r["body"].as_str().unwrap_or(""));
        requests.sort_by_key(key);
    }
    (requests, result)
}

#[tokio::test]
async fn every_scenario_sends_and_returns_what_the_reference_does() {
    let fixture = fixture();
    let mut mismatches = Vec::new();
    for (name, scenario) in fixture.as_object().expect("scenarios") {
        let (requests, result) = run_scenario(scenario).await;
        let expected_requests = scenario["requests"].as_array().cloned().unwrap_or_default();
        if requests != expected_requests {
            mismatches.push(format!(
                "{name} requests:\n  ours:      {}\n  reference: {}",
                Value::Array(requests),
                Value::Array(expected_requests)
            ));
        }
        if !same(&result, &scenario["result"]) {
            mismatches.push(format!("{name} result:\n  ours:      {result}\n  reference: {}", scenario["result"]));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn the_catalogs_hold_every_classifier_and_image_model_of_the_reference() {
    let classifiers = pi_ai::classify::builtin_classifier_models();
    assert_eq!(classifiers.values().map(Vec::len).sum::<usize>(), 81);
    let images = pi_ai::images::builtin_image_models();
    assert_eq!(images.values().map(Vec::len).sum::<usize>(), 74);
    let jev = pi_ai::classify::get_classifier_model("cloudflare-workers-ai", "typesafe/jev").expect("jev");
    assert_eq!(jev.compat.as_ref().and_then(|c| c.get("imageInput")), Some(&json!("assets")));
    assert!(classifiers.values().flatten().all(|m| m.model_type == "classifier"));
    assert!(images.values().flatten().all(|m| m.model_type == "image" && m.api == "openrouter-images"));
}
