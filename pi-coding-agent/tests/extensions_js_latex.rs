//! pi-tui's `renderLatex` for JavaScript extensions (issue 15): the host's pi-tui module exports
//! it, and it renders as pi-tui 1.6.0's on the whole LaTeX corpus the reference recorded
//! (`pi-tui/tests/fixtures/latex.json`). Needs Node.js 22 (`js_support`, `PI_NODE`).

mod js_support;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use js_support::node_available;
use pi_coding_agent::extensions::subprocess::{SubprocessExtension, SubprocessOptions};
use pi_coding_agent::extensions::{Extension, ExtensionRunner};
use serde_json::{Map, Value};

fn corpus_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../pi-tui/tests/fixtures/latex.json")
}

/// The shim's `renderLatex` against every case of the reference's corpus, in real Node.
#[test]
fn the_hosts_render_latex_matches_the_reference_corpus() {
    if !node_available() {
        return;
    }
    let node = js_support::node_path().expect("node");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new(node)
        .arg(root.join("tests/fixtures/jstui/latex_corpus.mjs"))
        .arg(root.join("js-host/shims/pi-tui.mjs"))
        .arg(corpus_path())
        .output()
        .expect("run node");
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "cases that differ from pi-tui 1.6.0's:\n{report}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary: Value = serde_json::from_str(report.lines().last().expect("summary")).expect("summary JSON");
    assert!(summary["cases"].as_u64().expect("cases") > 5000, "{summary}");
    assert_eq!(summary["differ"], 0, "{report}");
}

/// An unmodified extension imports `renderLatex` from `@earendil-works/pi-tui` (through the
/// host) and gets the reference's text, inline and display, for the first sources of the corpus.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_imports_render_latex_from_pi_tui() {
    if !node_available() {
        return;
    }
    let corpus: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(corpus_path()).expect("corpus")).expect("corpus JSON");
    let cases: Vec<&Value> =
        corpus.iter().filter(|c| c["expected"].is_string() || c["expected"].is_null()).take(400).collect();
    let sources: Vec<Value> = cases.iter().map(|c| serde_json::json!([c["source"], c["display"]])).collect();
    let extension = format!(
        r#"import {{ renderLatex }} from "@earendil-works/pi-tui";
        import {{ Type }} from "typebox";
        const CASES = {};
        export default function (pi) {{
            pi.registerTool({{
                name: "latex", label: "LaTeX", description: "Renders the corpus",
                parameters: Type.Object({{}}),
                async execute() {{
                    const out = CASES.map(([source, display]) => renderLatex(source, {{ display }}) ?? null);
                    return {{ content: [{{ type: "text", text: JSON.stringify(out) }}], details: {{}} }};
                }},
            }});
        }}"#,
        Value::Array(sources)
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("latex.ts");
    std::fs::write(&path, extension).expect("write extension");
    let options = SubprocessOptions {
        init_timeout: Duration::from_secs(20),
        call_timeout: Duration::from_secs(5),
        tool_timeout: Duration::from_secs(20),
    };
    let ext: Arc<dyn Extension> = Arc::new(SubprocessExtension::new(path.to_string_lossy()).with_options(options));
    let runner = ExtensionRunner::load(vec![ext], dir.path().to_string_lossy()).await;
    assert!(runner.load_errors().is_empty(), "{:?}", runner.load_errors());
    let tool = runner.tool("latex").expect("registered").definition.tool;
    let ctx = pi_agent_core::ToolContext::new(tokio_util::sync::CancellationToken::new(), None);
    let result = tool.execute("call_1", Map::new(), ctx).await.expect("the tool ran");
    let content = serde_json::to_value(&result.content).expect("content");
    let got: Vec<Value> = serde_json::from_str(content[0]["text"].as_str().expect("text")).expect("JSON");
    assert_eq!(got.len(), cases.len());
    for (case, got) in cases.iter().zip(&got) {
        assert_eq!(got, &case["expected"], "{} display={}", case["source"], case["display"]);
    }
}
