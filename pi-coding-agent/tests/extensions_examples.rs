//! The reference's `examples/extensions/`: every single-file example loads unmodified in the
//! JavaScript host and registers what pi 1.6.0's own loader records for it
//! (`tests/fixtures/extension_registrations.json`, from `scripts/fixtures/extension_registrations.mjs`):
//! handled events, tools, commands, flags, shortcuts and entry renderers.

mod js_support;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use js_support::node_available;
use pi_coding_agent::extensions::subprocess::SubprocessExtension;
use pi_coding_agent::extensions::{Extension, ExtensionRunner};
use serde_json::Value;

/// The reference's examples folder (`anchor.sh path`; `PI_ANCHOR_DIR` overrides the default).
fn examples_dir() -> Option<PathBuf> {
    let root = std::env::var_os("PI_ANCHOR_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/pi-anchor")))?;
    let dir = root.join("node_modules/@earendil-works/pi-coding-agent/examples/extensions");
    dir.is_dir().then_some(dir)
}

fn names(v: &Value) -> BTreeSet<String> {
    v.as_array().map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect()).unwrap_or_default()
}

/// What one example registers, against what the reference recorded; the differences as text.
async fn compare(dir: &std::path::Path, cwd: &std::path::Path, name: &str, want: &Value) -> Vec<String> {
    let ext: Arc<dyn Extension> = Arc::new(SubprocessExtension::new(dir.join(name).to_string_lossy()));
    let runner = ExtensionRunner::load(vec![ext], cwd.to_string_lossy()).await;
    if let Some(e) = runner.load_errors().first() {
        return vec![format!("{name}: {}", e.error)];
    }
    let got_events: BTreeSet<String> = runner.handled_events().into_iter().collect();
    let got_tools: BTreeSet<String> =
        runner.registered_tools().iter().map(|t| t.definition.tool.name().to_owned()).collect();
    let got_commands: BTreeSet<String> = runner.commands().into_iter().map(|(n, _)| n).collect();
    let got_flags: BTreeSet<String> = runner.flags().into_iter().map(|f| f.name).collect();
    let got_shortcuts: BTreeSet<String> = runner.shortcuts().into_iter().map(|s| s.shortcut).collect();
    let checks = [
        ("events", got_events, names(&want["events"])),
        ("tools", got_tools, names(&want["tools"])),
        ("commands", got_commands, names(&want["commands"])),
        ("flags", got_flags, names(&want["flags"])),
        ("shortcuts", got_shortcuts, names(&want["shortcuts"])),
    ];
    let mut out: Vec<String> = checks
        .into_iter()
        .filter(|(_, got, want)| got != want)
        .map(|(what, got, want)| format!("{name}: {what} {got:?} != {want:?}"))
        .collect();
    for ty in names(&want["entryRenderers"]) {
        if !runner.has_entry_renderer(&ty) {
            out.push(format!("{name}: no entry renderer {ty}"));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_single_file_example_registers_what_the_reference_registers() {
    if !node_available() {
        return;
    }
    let Some(dir) = examples_dir() else {
        if std::env::var_os("CI").is_some() {
            panic!("the reference pi 1.6.0 is missing: CI must install it (anchor.sh path) or set PI_ANCHOR_DIR");
        }
        eprintln!("SKIP: the reference's examples are not installed (run anchor.sh path or set PI_ANCHOR_DIR)");
        return;
    };
    let fixture: Value = serde_json::from_str(include_str!("fixtures/extension_registrations.json")).unwrap();
    let expected = fixture.as_object().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let mut mismatches = Vec::new();
    for (name, want) in expected {
        mismatches.extend(compare(&dir, cwd.path(), name, want).await);
    }
    assert!(
        mismatches.is_empty(),
        "{} differences in {} examples:\n{}",
        mismatches.len(),
        expected.len(),
        mismatches.join("\n")
    );
}

/// The scripted events of `scripts/fixtures/extension_behaviour.mjs`.
const TOOL_CALLS: &[(&str, &str)] = &[
    ("bash", r#"{"command":"rm -rf build"}"#),
    ("bash", r#"{"command":"ls"}"#),
    ("write", r#"{"path":".env","content":"SECRET=1"}"#),
    ("write", r#"{"path":"src/main.ts","content":"x"}"#),
    ("read", r#"{"path":"README.md"}"#),
];
const INPUTS: &[&str] = &["hello", "?quick what is 2+2", "ping", "!ls", "/help"];

/// Every example that handles `tool_call` or `input` answers the scripted events as the
/// reference's runner does (`tests/fixtures/extension_behaviour.json`, print mode, no UI).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn examples_answer_scripted_tool_calls_and_inputs_as_the_reference() {
    use pi_coding_agent::extensions::{InputSource, ToolCallEvent};
    use serde_json::json;
    if !node_available() {
        return;
    }
    let Some(dir) = examples_dir() else {
        assert!(std::env::var_os("CI").is_none(), "the reference pi 1.6.0 is missing: CI must install it");
        eprintln!("SKIP: the reference's examples are not installed");
        return;
    };
    let fixture: Value = serde_json::from_str(include_str!("fixtures/extension_behaviour.json")).unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let mut differences = Vec::new();
    for (name, want) in fixture.as_object().unwrap() {
        let ext: Arc<dyn Extension> = Arc::new(SubprocessExtension::new(dir.join(name).to_string_lossy()));
        let runner = ExtensionRunner::load(vec![ext], cwd.path().to_string_lossy()).await;
        assert!(runner.load_errors().is_empty(), "{name}: {:?}", runner.load_errors());
        if let Some(expected) = want.get("tool_call").and_then(Value::as_array) {
            for ((tool, input), expected) in TOOL_CALLS.iter().zip(expected) {
                let mut event = ToolCallEvent {
                    tool_call_id: "c1".into(),
                    tool_name: (*tool).into(),
                    input: serde_json::from_str(input).unwrap(),
                    parent_tool_call_id: None,
                };
                let got = match runner.emit_tool_call(&mut event).await {
                    Ok(None) => Value::Null,
                    Ok(Some(r)) => match r.reason {
                        Some(reason) => json!({"block": r.block, "reason": reason}),
                        None => json!({"block": r.block}),
                    },
                    Err(e) => json!({"threw": e.error}),
                };
                if &got != expected {
                    differences.push(format!("{name}: tool_call {tool} {input}: {got} != {expected}"));
                }
            }
        }
        if let Some(expected) = want.get("input").and_then(Value::as_array) {
            for (text, expected) in INPUTS.iter().zip(expected) {
                let got = serde_json::to_value(runner.emit_input(text, None, InputSource::Interactive).await).unwrap();
                if &got != expected {
                    differences.push(format!("{name}: input {text:?}: {got} != {expected}"));
                }
            }
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// The renderers of `entry-renderer.ts` and `message-renderer.ts` draw exactly the reference's
/// lines (`tests/fixtures/example_renderer_lines.json`: dark theme, truecolor, UTC), wrapping
/// included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn example_renderers_draw_as_the_reference_draws_them() {
    use pi_coding_agent::extensions::MessageRenderOptions;
    use pi_tui::{ColorMode, Theme};
    use serde_json::json;
    if !node_available() {
        return;
    }
    let Some(dir) = examples_dir() else {
        assert!(std::env::var_os("CI").is_none(), "the reference pi 1.6.0 is missing: CI must install it");
        eprintln!("SKIP: the reference's examples are not installed");
        return;
    };
    let exts: Vec<Arc<dyn Extension>> = ["entry-renderer.ts", "message-renderer.ts"]
        .iter()
        .map(|n| Arc::new(SubprocessExtension::new(dir.join(n).to_string_lossy())) as Arc<dyn Extension>)
        .collect();
    let cwd = tempfile::tempdir().unwrap();
    let runner = ExtensionRunner::load(exts, cwd.path().to_string_lossy()).await;
    assert!(runner.load_errors().is_empty(), "{:?}", runner.load_errors());
    let entry = serde_json::from_value(json!({"type": "custom", "customType": "status-card", "id": "e1", "parentId": null,
        "timestamp": "2026-01-01T00:00:00.000Z", "data": {"message": "Deploy finished: all 42 services are healthy again", "timestamp": 1767225600000u64}}))
    .unwrap();
    let message = serde_json::from_value(json!({"role": "custom", "customType": "status-update",
        "content": "Build passed with three warnings in the docs", "display": true,
        "details": {"level": "warn", "timestamp": 1767225600000u64}, "timestamp": 1767225600000u64}))
    .unwrap();
    let reference: Value = serde_json::from_str(include_str!("fixtures/example_renderer_lines.json")).unwrap();
    let theme = Theme::dark(ColorMode::Truecolor).unwrap();
    // The expanded forms print a local time: compare them where the host's zone is UTC.
    let utc = std::env::var("TZ").map(|tz| tz == "UTC" || tz == "Etc/UTC").unwrap_or(true);
    for width in [40usize, 24] {
        for expanded in [false, true] {
            if expanded && !utc {
                continue;
            }
            let key = format!("{width}/{}", if expanded { "expanded" } else { "collapsed" });
            let mut c = runner.render_entry(&entry, expanded, &theme).expect("entry renderer");
            let want: Vec<String> = serde_json::from_value(reference[format!("entry {key}")].clone()).unwrap();
            assert_eq!(c.render(width).to_vec(), want, "entry {key}");
            let options = MessageRenderOptions { expanded, output_pad: 1 };
            let mut c = runner.render_message(&message, options, &theme).expect("message renderer");
            let want: Vec<String> = serde_json::from_value(reference[format!("message {key}")].clone()).unwrap();
            assert_eq!(c.render(width).to_vec(), want, "message {key}");
        }
    }
}
