//! Tool renderers of JavaScript extensions, unmodified: `todo.ts`'s own `renderCall` /
//! `renderResult` and `built-in-tool-renderer.ts`'s overrides of `read` and `bash` draw exactly the
//! reference's lines (`tests/fixtures/tool_renderer_lines.json`, from
//! `scripts/fixtures/tool_renderer_lines.mjs`: dark theme, truecolor, width 40), through the
//! runner's registry, and the transcript's tool rows use them.

mod js_support;

use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use js_support::node_available;
use pi_coding_agent::extensions::subprocess::SubprocessExtension;
use pi_coding_agent::extensions::{Extension, ExtensionRunner, ToolRenderOptions};
use pi_coding_agent::render::{RenderOptions, ToolOutput, ToolRow, TranscriptRenderer, render_lines};
use pi_tui::{ColorMode, Theme};
use serde_json::{Map, Value, json};

fn examples_dir() -> Option<PathBuf> {
    let root = std::env::var_os("PI_ANCHOR_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/pi-anchor")))?;
    let dir = root.join("node_modules/@earendil-works/pi-coding-agent/examples/extensions");
    dir.is_dir().then_some(dir)
}

fn object(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

fn lines(v: &Value) -> Vec<String> {
    serde_json::from_value(v.clone()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javascript_tool_renderers_draw_as_the_reference_draws_them() {
    if !node_available() {
        return;
    }
    let Some(dir) = examples_dir() else {
        assert!(std::env::var_os("CI").is_none(), "the reference pi 1.6.0 is missing: CI must install it");
        eprintln!("SKIP: the reference's examples are not installed");
        return;
    };
    let exts: Vec<Arc<dyn Extension>> = ["todo.ts", "built-in-tool-renderer.ts"]
        .iter()
        .map(|n| Arc::new(SubprocessExtension::new(dir.join(n).to_string_lossy())) as Arc<dyn Extension>)
        .collect();
    let cwd = tempfile::tempdir().unwrap();
    let runner = Arc::new(ExtensionRunner::load(exts, cwd.path().to_string_lossy()).await);
    assert!(runner.load_errors().is_empty(), "{:?}", runner.load_errors());
    let reference: Value = serde_json::from_str(include_str!("fixtures/tool_renderer_lines.json")).unwrap();
    let theme = Theme::dark(ColorMode::Truecolor).unwrap();
    let todo_args = object(json!({"action": "add", "text": "buy milk"}));
    let todos: Vec<Value> =
        (1..=6).map(|id| json!({"id": id, "text": format!("task {id}"), "done": id % 2 == 0})).collect();
    let todo_result = json!({"content": [{"type": "text", "text": "6 todos"}],
        "details": {"action": "list", "todos": todos, "nextId": 7}});

    let mut call = runner.render_tool_call("todo", &todo_args, &theme).expect("todo's renderCall");
    assert_eq!(call.render(40).to_vec(), lines(&reference["todo call"]));
    for (expanded, key) in [(false, "todo result collapsed"), (true, "todo result expanded")] {
        let options = ToolRenderOptions { expanded, is_partial: false };
        let mut result =
            runner.render_tool_result("todo", &todo_args, &todo_result, options, &theme).expect("todo's renderResult");
        assert_eq!(result.render(40).to_vec(), lines(&reference[key]), "{key}");
    }
    let read_args = object(json!({"path": "src/main.rs", "offset": 10, "limit": 20}));
    let mut read = runner.render_tool_call("read", &read_args, &theme).expect("the read override");
    assert_eq!(read.render(40).to_vec(), lines(&reference["read call"]));
    let bash_args = object(json!({"command": "cargo test --workspace", "timeout": 60}));
    let mut bash = runner.render_tool_call("bash", &bash_args, &theme).expect("the bash override");
    assert_eq!(bash.render(40).to_vec(), lines(&reference["bash call"]));
    assert!(runner.render_tool_call("write", &read_args, &theme).is_none(), "no renderer: the built-in line");

    // The transcript's tool row draws the extension's call line inside its box.
    let renderer = TranscriptRenderer::new(Rc::new(theme.clone()), Some(runner.clone()), RenderOptions::default());
    let output = ToolOutput { text: "6 todos".into(), is_error: false, details: None, duration_ms: None };
    let row = ToolRow { name: "todo", args: &todo_args, output: Some(&output), partial: false };
    let drawn = render_lines(&mut *renderer.tool_row(&row).borrow_mut(), 40);
    let plain: Vec<String> = drawn.iter().map(|l| strip_sgr(l).trim_end().to_owned()).collect();
    assert!(plain.iter().any(|l| l.trim() == "todo add \"buy milk\""), "{plain:#?}");
}

/// The text without `ESC [ … m` sequences.
fn strip_sgr(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
