//! Image and classifier models through `ctx.modelRegistry` (pi's `getModelsOfType`,
//! `getAvailableOfType`, `getModelOfType`, `findOfType`, `classify`, `generateImages`), in Rust,
//! in the JavaScript host (`fixtures/js_extensions/typed-models.ts`) and over the JSON-RPC
//! subprocess protocol (a Python extension), against the reference:
//! `fixtures/typed_models/reference.json` is what pi 1.6.0 answered for the same extension
//! commands (`scripts/fixtures/typed_models_registry.sh`), with models.json pointing `typesafe` and
//! `openrouter` at a 127.0.0.1 server answering pi-ai's reference replies. The requests (path,
//! key, body byte for byte) and the results (all but the timestamp) must be the reference's. The
//! llama.cpp provider's classifier models stored in `models-store.json` are listed and classify
//! through `llama-cpp-classify` against a scripted llama-server.

mod http_support;
mod js_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use http_support::{HttpSession, Setup};
use js_support::{fixture, node_available};
use pi_ai::classify::{ClassifierContext, ClassifierModel, ClassifyOptions};
use pi_ai::images::{ImageModel, ImagesContext, ImagesOptions};
use serde_json::{Value, json};

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("fixture parses")
}

fn reference() -> Value {
    read_json(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/typed_models/reference.json"))
}

fn pi_ai_scenario(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pi-ai/tests/fixtures/classify/reference.json");
    read_json(&path)[name].clone()
}

/// A 127.0.0.1 server: `reply(path, body)` answers each POST; every request is recorded as
/// `{path, auth, body}`.
struct Server {
    url: String,
    requests: Arc<Mutex<Vec<Value>>>,
}

fn serve(reply: impl Fn(&str, &str) -> String + Send + Sync + 'static) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut line = String::new();
            reader.read_line(&mut line).expect("request line");
            let path = line.split_whitespace().nth(1).unwrap_or_default().to_owned();
            let (mut length, mut auth) = (0usize, Value::Null);
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).expect("header");
                let header = header.trim_end();
                if header.is_empty() {
                    break;
                }
                let (name, value) = header.split_once(':').unwrap_or((header, ""));
                match name.to_ascii_lowercase().as_str() {
                    "content-length" => length = value.trim().parse().unwrap_or(0),
                    "authorization" => auth = json!(value.trim()),
                    _ => {}
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).expect("body");
            let body = String::from_utf8_lossy(&body).into_owned();
            let answer = reply(&path, &body);
            seen.lock().unwrap().push(json!({"path": path, "auth": auth, "body": body}));
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                answer.len()
            );
            let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(answer.as_bytes()));
        }
    });
    Server { url, requests }
}

/// The server answering pi-ai's reference replies for System One and OpenRouter images.
fn typed_server() -> Server {
    let classify = pi_ai_scenario("typesafe_all_question_types")["replies"][0]["body"].as_str().unwrap().to_owned();
    let images = pi_ai_scenario("images_text_and_image_output")["replies"][0]["body"].as_str().unwrap().to_owned();
    serve(move |path, _| match path {
        "/v1/systemone" => classify.clone(),
        "/api/v1/chat/completions" => images.clone(),
        _ => "{}".to_owned(),
    })
}

fn agent_dir(h: &HttpSession) -> PathBuf {
    h.dir.path().canonicalize().unwrap().join("agent")
}

/// models.json as the reference run had it: the session's `local` provider, and `typesafe` and
/// `openrouter` at `url` with the key `test-key`.
fn point_providers_at(h: &HttpSession, url: &str) {
    let path = agent_dir(h).join("models.json");
    let mut models = read_json(&path);
    models["providers"]["typesafe"] = json!({"baseUrl": format!("{url}/v1"), "apiKey": "test-key"});
    models["providers"]["openrouter"] = json!({"baseUrl": format!("{url}/api/v1"), "apiKey": "test-key"});
    std::fs::write(path, models.to_string()).unwrap();
}

/// The reference's value with its server address replaced by `url`.
fn expected(name: &str, url: &str) -> Value {
    serde_json::from_str(&reference()[name].to_string().replace("http://SERVER", url)).unwrap()
}

fn without_timestamp(mut result: Value) -> Value {
    let map = result.as_object_mut().expect("a result object");
    let stamped = map.remove("timestamp").is_some_and(|t| t.as_u64().is_some_and(|t| t > 0));
    map.insert("hasTimestamp".into(), json!(stamped));
    result
}

fn entry_data(h: &HttpSession, custom_type: &str) -> Value {
    let entries = h.entries();
    let entry = entries.iter().rev().find(|e| e["customType"] == custom_type);
    entry.unwrap_or_else(|| panic!("no {custom_type} entry: {:?}", h.error_pairs()))["data"].clone()
}

fn key(m: &Value) -> String {
    format!("{}/{}", m["provider"].as_str().unwrap_or_default(), m["id"].as_str().unwrap_or_default())
}

/// The Rust registry lists, runs and refuses as the reference's JavaScript registry does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_registry_lists_and_runs_image_and_classifier_models_as_the_reference() {
    let none: Arc<dyn pi_coding_agent::extensions::Extension> =
        Arc::new(pi_coding_agent::extensions::FnExtension::new("<inline:none>", |_| Ok(())));
    let h = Setup { extensions: vec![none], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    let server = typed_server();
    point_providers_at(&h, &server.url);
    let registry = h.session.extension_runner().unwrap().create_context().model_registry();
    let list = expected("typed-list", &server.url);

    assert_eq!(registry.get_models_of_type("classifier", None).len() as u64, list["classifiers"].as_u64().unwrap());
    assert_eq!(registry.get_models_of_type("image", None).len() as u64, list["images"].as_u64().unwrap());
    let typesafe: Vec<String> = registry.get_models_of_type("classifier", Some("typesafe")).iter().map(key).collect();
    assert_eq!(json!(typesafe), list["typesafe"]);
    let jev = registry.get_model_of_type("classifier", "typesafe", "jev-latest").expect("jev");
    assert_eq!(jev, list["jev"]);
    let found = registry.find_of_type("image", "openrouter", "google/gemini-2.5-flash-image").expect("image model");
    assert_eq!(found["api"], list["found"]);
    assert_eq!(registry.get_model_of_type("image", "typesafe", "jev-latest"), None);
    let available: Vec<String> = registry.get_available_of_type("classifier", None).iter().map(key).collect();
    assert_eq!(json!(available), list["availableClassifiers"]);
    assert_eq!(
        registry.get_available_of_type("image", Some("openrouter")).len() as u64,
        list["availableImages"].as_u64().unwrap()
    );
    assert!(registry.get_all().iter().chain(&registry.get_available()).all(|m| m.id != "jev-latest"));

    let run = expected("typed-run", &server.url);
    let classifier: ClassifierModel = serde_json::from_value(jev).unwrap();
    let context: ClassifierContext =
        serde_json::from_value(pi_ai_scenario("typesafe_all_question_types")["context"].clone()).unwrap();
    let classified = registry.classify(&classifier, &context, ClassifyOptions::default()).await;
    assert_eq!(without_timestamp(serde_json::to_value(classified).unwrap()), run["classified"]);
    let image: ImageModel = serde_json::from_value(found).unwrap();
    let images: ImagesContext =
        serde_json::from_value(pi_ai_scenario("images_text_and_image_output")["context"].clone()).unwrap();
    let generated = registry.generate_images(&image, &images, ImagesOptions::default()).await;
    assert_eq!(without_timestamp(serde_json::to_value(generated).unwrap()), run["generated"]);
    assert_eq!(json!(*server.requests.lock().unwrap()), reference()["requests"]);

    let errors = expected("typed-errors", &server.url);
    let opencode: ClassifierModel =
        serde_json::from_value(registry.get_model_of_type("classifier", "opencode", "jev-1.13").unwrap()).unwrap();
    let result = |r: pi_ai::classify::ClassifierResult| without_timestamp(serde_json::to_value(r).unwrap());
    assert_eq!(
        result(registry.classify(&opencode, &context, ClassifyOptions::default()).await),
        errors["notConfigured"]
    );
    let mut with_image = context.clone();
    with_image.images = Some(vec![pi_ai::classify::ClassifierImage {
        kind: "image".into(),
        data: "iVBORw0KGgo=".into(),
        mime_type: "image/png".into(),
    }]);
    assert_eq!(result(registry.classify(&opencode, &with_image, ClassifyOptions::default()).await), errors["noImages"]);
    let nobody = ClassifierModel { provider: "nobody".into(), ..classifier.clone() };
    assert_eq!(
        result(registry.classify(&nobody, &context, ClassifyOptions::default()).await),
        errors["unknownProvider"]
    );
    let copilot = ImageModel { provider: "github-copilot".into(), ..image };
    let refused = registry.generate_images(&copilot, &images, ImagesOptions::default()).await;
    assert_eq!(without_timestamp(serde_json::to_value(refused).unwrap()), errors["imagesNotConfigured"]);
    assert_eq!(server.requests.lock().unwrap().len(), 2, "no refused request reaches the server");
}

/// The same through the JavaScript host: `typed-models.ts`'s commands record what the
/// reference's recorded, and the requests are the reference's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_javascript_host_registry_answers_as_the_reference() {
    if !node_available() {
        return;
    }
    let h = Setup { extension_paths: vec![fixture("typed-models.ts")], ..Default::default() }.start().await;
    let server = typed_server();
    point_providers_at(&h, &server.url);
    h.session.bind_extensions(|_| {}).await;
    for name in ["typed-list", "typed-run", "typed-errors"] {
        h.session.prompt(&format!("/{name}")).await.unwrap();
        assert_eq!(entry_data(&h, name), expected(name, &server.url), "{name}");
    }
    assert_eq!(json!(*server.requests.lock().unwrap()), reference()["requests"]);
    assert!(h.error_pairs().is_empty(), "{:?}", h.error_pairs());
}

/// The scripted llama-server of pi-ai's `pi_ai_classify.mjs` (token ids from a hash of the text,
/// fixed log-probabilities).
fn token_id(text: &str) -> i64 {
    text.chars().fold(0i64, |h, c| (h * 31 + c as i64) % 9973) + 1000
}

fn llama_reply(path: &str, body: &str) -> String {
    let body: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let reply = match path {
        "/tokenize" => {
            let c = body["content"].as_str().unwrap_or_default();
            let tokens = match c.strip_prefix('\n') {
                Some("") => vec![10],
                Some(rest) => vec![10, token_id(rest)],
                None => vec![token_id(c)],
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
    };
    reply.to_string()
}

/// Numbers equal to 12 significant digits (V8's and the C library's `exp` may differ in the last
/// bit); everything else exactly.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w)),
        _ => a == b,
    }
}

/// The llama.cpp provider's classifier models (computed into `models-store.json` by its refresh)
/// are listed, available with the provider registered, and classify through
/// `llama-cpp-classify` with the provider's key, answering what pi-ai's reference answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_llama_providers_stored_classifiers_are_listed_and_classify() {
    let llama_dir = tempfile::tempdir().unwrap();
    let llama = pi_coding_agent::builtin_extensions::llama::LlamaExtension::new(llama_dir.path().to_owned());
    let h = Setup { extensions: vec![Arc::new(llama)], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    let server = serve(llama_reply);
    let scenario = pi_ai_scenario("llama_all_question_types");
    let mut stored = scenario["model"].clone();
    stored["provider"] = json!("llama.cpp");
    stored["baseUrl"] = json!(server.url);
    let chat = json!({"id": "llama-m", "name": "llama-m", "api": "openai-completions", "provider": "llama.cpp"});
    let store = json!({"llama.cpp": {"models": [chat, stored], "checkedAt": 1}});
    std::fs::write(agent_dir(&h).join("models-store.json"), store.to_string()).unwrap();

    let registry = h.session.extension_runner().unwrap().create_context().model_registry();
    let listed = registry.get_models_of_type("classifier", Some("llama.cpp"));
    assert_eq!(listed, vec![stored.clone()]);
    assert_eq!(registry.get_available_of_type("classifier", Some("llama.cpp")), vec![stored.clone()]);
    assert_eq!(registry.get_model_of_type("chat", "llama.cpp", "llama-m"), None, "the chat model is the provider's");

    let model: ClassifierModel = serde_json::from_value(stored).unwrap();
    let context: ClassifierContext = serde_json::from_value(scenario["context"].clone()).unwrap();
    let options = ClassifyOptions { temperature: scenario["options"]["temperature"].as_f64(), ..Default::default() };
    let mut result = serde_json::to_value(registry.classify(&model, &context, options).await).unwrap();
    result.as_object_mut().unwrap().remove("timestamp");
    let mut want = scenario["result"].clone();
    want["provider"] = json!("llama.cpp");
    assert!(same(&result, &want), "ours: {result:#}\nreference: {want:#}");
    let requests = server.requests.lock().unwrap();
    assert_eq!(requests.len(), scenario["requests"].as_array().unwrap().len());
    assert!(requests.iter().all(|r| r["auth"] == "Bearer local"), "{requests:?}");
}

/// Over the JSON-RPC subprocess protocol: the `ctx.modelRegistry` snapshot carries the typed
/// models (`typedModels`, their keys in `available`), and `ctx.modelRegistry.classify` /
/// `generateImages` answer pi's results (the reference's, for the same request and reply) or pi's
/// error result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_json_rpc_protocol_lists_classifies_and_generates() {
    use pi_coding_agent::extensions::subprocess::SubprocessExtension;
    let dir = tempfile::tempdir().unwrap();
    let server = typed_server();
    let classify_context = pi_ai_scenario("typesafe_all_question_types")["context"].clone();
    let images_context = pi_ai_scenario("images_text_and_image_output")["context"].clone();
    let out = dir.path().join("answers.json");
    let script = format!(
        r#"
import json, sys
def send(m):
    m["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
def call(i, method, params):
    send({{"id": i, "method": method, "params": params}})
    for line in sys.stdin:
        m = json.loads(line)
        if m.get("id") == i and "method" not in m:
            return m.get("result", m.get("error"))
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "initialize":
        send({{"id": m["id"], "result": {{"protocolVersion": 3, "events": [], "tools": [], "commands": [{{"name": "typed", "description": "typed"}}], "flags": []}}}})
    elif m.get("method") == "command.run":
        snap = call(9001, "ctx.modelRegistry", {{}})
        jev = next(x for x in snap["typedModels"] if x["provider"] == "typesafe" and x["id"] == "jev-latest")
        fox = next(x for x in snap["typedModels"] if x["id"] == "google/gemini-2.5-flash-image")
        answers = {{
            "typed": len(snap["typedModels"]),
            "jevAvailable": "typesafe/jev-latest" in snap["available"],
            "chatTyped": [x["id"] for x in snap["models"] if x.get("type", "chat") != "chat"],
            "classified": call(9002, "ctx.modelRegistry.classify", {{"model": jev, "context": json.loads({classify:?})}}),
            "generated": call(9003, "ctx.modelRegistry.generateImages", {{"model": fox, "context": json.loads({images:?})}}),
            "refused": call(9004, "ctx.modelRegistry.generateImages", {{"model": jev, "context": json.loads({images:?})}}),
        }}
        open({out:?}, "w").write(json.dumps(answers))
        send({{"id": m["id"], "result": None}})
    elif "id" in m and "method" in m:
        send({{"id": m["id"], "result": None}})
"#,
        classify = classify_context.to_string(),
        images = images_context.to_string(),
        out = out.to_string_lossy(),
    );
    let path = dir.path().join("typed.py");
    std::fs::write(&path, script).unwrap();
    let ext: Arc<dyn pi_coding_agent::extensions::Extension> =
        Arc::new(SubprocessExtension::new(path.to_string_lossy()));
    let h = Setup { extensions: vec![ext], ..Default::default() }.start().await;
    point_providers_at(&h, &server.url);
    h.session.bind_extensions(|_| {}).await;
    assert!(h.session.extension_runner().unwrap().run_command("typed", "").await, "{:?}", h.error_pairs());
    let answers = read_json(&out);
    let list = expected("typed-list", &server.url);
    let total = list["classifiers"].as_u64().unwrap() + list["images"].as_u64().unwrap();
    assert_eq!(answers["typed"].as_u64(), Some(total));
    assert_eq!(answers["jevAvailable"], true);
    assert_eq!(answers["chatTyped"], json!([]));
    let run = expected("typed-run", &server.url);
    assert_eq!(without_timestamp(answers["classified"].clone()), run["classified"]);
    assert_eq!(without_timestamp(answers["generated"].clone()), run["generated"]);
    assert_eq!(without_timestamp(answers["refused"].clone()), expected("typed-errors", &server.url)["notImage"]);
    assert_eq!(json!(*server.requests.lock().unwrap()), reference()["requests"]);
}
