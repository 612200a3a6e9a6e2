//! A JavaScript extension's tool keeps its `constrainedSampling` declaration (pi's
//! `tool-definition-wrapper` passes it through): it reaches the model-facing declaration.

mod js_support;

use std::sync::Arc;
use std::time::Duration;

use js_support::node_available;
use pi_coding_agent::extensions::subprocess::{SubprocessExtension, SubprocessOptions};
use pi_coding_agent::extensions::{Extension, ExtensionRunner};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_tool_declares_its_constrained_sampling() {
    if !node_available() {
        return;
    }
    let src = r#"export default function (pi) {
        pi.registerTool({
            name: "exec", label: "Exec", description: "Runs a script",
            parameters: { type: "object", properties: { code: { type: "string" } }, required: ["code"] },
            constrainedSampling: { type: "grammar", variants: { openai_lark: "start: /.+/s" } },
            async execute() { return { content: [{ type: "text", text: "ok" }], details: {} }; },
        });
        pi.registerTool({
            name: "plain", label: "Plain", description: "Plain",
            parameters: { type: "object", properties: {} },
            async execute() { return { content: [{ type: "text", text: "ok" }], details: {} }; },
        });
    }"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("grammar.js");
    std::fs::write(&path, src).unwrap();
    let options = SubprocessOptions {
        init_timeout: Duration::from_secs(20),
        call_timeout: Duration::from_secs(5),
        tool_timeout: Duration::from_secs(20),
    };
    let ext: Arc<dyn Extension> = Arc::new(SubprocessExtension::new(path.to_string_lossy()).with_options(options));
    let runner = ExtensionRunner::load(vec![ext], dir.path().to_string_lossy()).await;
    assert!(runner.load_errors().is_empty(), "{:?}", runner.load_errors());
    let exec = runner.tool("exec").expect("registered").definition.tool.declaration();
    assert_eq!(
        exec.constrained_sampling,
        Some(json!({"type": "grammar", "variants": {"openai_lark": "start: /.+/s"}}))
    );
    let plain = runner.tool("plain").expect("registered").definition.tool.declaration();
    assert_eq!(plain.constrained_sampling, None);
}
