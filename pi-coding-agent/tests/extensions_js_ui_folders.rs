//! The reference's folder examples (`examples/extensions/<folder>/`, issue 15): each loads
//! unmodified in the JavaScript host and registers what pi 1.6.0's own loader records for it
//! (`tests/fixtures/extension_folder_registrations.json`, from
//! `scripts/fixtures/extension_folder_registrations.mjs`), or fails as it fails there (gondolin
//! without its npm package). The shim exports they import (pi-ai's `ToolCallArgumentsStream`,
//! pi-ai/compat's `anthropicMessagesApi`, pi-tui's `parseKey`, pi-coding-agent's
//! `parseFrontmatter`) behave as the reference's in the scenarios below.

mod js_support;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use pi_coding_agent::extensions::subprocess::SubprocessExtension;
use pi_coding_agent::extensions::{Extension, ExtensionRunner};
use serde_json::Value;

fn examples_dir() -> Option<PathBuf> {
    let root = std::env::var_os("PI_ANCHOR_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/pi-anchor")))?;
    let dir = root.join("node_modules/@earendil-works/pi-coding-agent/examples/extensions");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(std::env::var_os("CI").is_none(), "the reference pi 1.6.0 is missing: CI must install it");
    eprintln!("SKIP: the reference's examples are not installed (anchor.sh path or PI_ANCHOR_DIR)");
    None
}

fn names(v: &Value) -> BTreeSet<String> {
    v.as_array().map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect()).unwrap_or_default()
}

async fn load(path: PathBuf, cwd: &std::path::Path) -> ExtensionRunner {
    let ext: Arc<dyn Extension> = Arc::new(SubprocessExtension::new(path.to_string_lossy()));
    ExtensionRunner::load(vec![ext], cwd.to_string_lossy()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_folder_example_loads_and_registers_what_the_reference_registers() {
    if !js_support::node_available() {
        return;
    }
    let Some(dir) = examples_dir() else { return };
    let fixture: Value = serde_json::from_str(include_str!("fixtures/extension_folder_registrations.json")).unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let mut differences = Vec::new();
    for (name, want) in fixture.as_object().unwrap() {
        let runner = load(dir.join(name), cwd.path()).await;
        let error = runner.load_errors().first().map(|e| e.error.clone());
        if let Some(want_error) = want.get("error").and_then(Value::as_str) {
            // The module the reference could not find is the one named in ours.
            let missing = want_error.split('\'').nth(1).unwrap_or(want_error);
            match &error {
                Some(e) if e.contains(missing) => {}
                other => differences.push(format!("{name}: error {other:?}, want one naming {missing}")),
            }
            continue;
        }
        if let Some(e) = error {
            differences.push(format!("{name}: {e}"));
            continue;
        }
        let checks = [
            ("events", runner.handled_events().into_iter().collect::<BTreeSet<_>>(), names(&want["events"])),
            (
                "tools",
                runner.registered_tools().iter().map(|t| t.definition.tool.name().to_owned()).collect(),
                names(&want["tools"]),
            ),
            ("commands", runner.commands().into_iter().map(|(n, _)| n).collect(), names(&want["commands"])),
            ("flags", runner.flags().into_iter().map(|f| f.name).collect(), names(&want["flags"])),
            ("shortcuts", runner.shortcuts().into_iter().map(|s| s.shortcut).collect(), names(&want["shortcuts"])),
        ];
        for (what, got, want) in checks {
            if got != want {
                differences.push(format!("{name}: {what} {got:?} != {want:?}"));
            }
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// The shim exports the folder examples import, and pi-tui's components as extensions build them
/// (SelectList, Text, Box, TruncatedText, Spacer, wrapping), against the reference's packages:
/// the same script run on the host's modules and on the reference's (`anchor.sh`'s install).
#[test]
fn the_shim_exports_answer_as_the_reference_packages() {
    if !js_support::node_available() {
        return;
    }
    let Some(examples) = examples_dir() else { return };
    let Some(node) = js_support::node_path() else { return };
    let modules = examples.join("../../..");
    let host = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("js-host/shims");
    let script = |tui: PathBuf, ai: PathBuf, agent: PathBuf| {
        format!(
            r#"
const tui = await import({tui:?}); const ai = await import({ai:?}); const agent = await import({agent:?});
const out = {{}};
out.keys = ["\x1b[A","\x1b[1;5A","\x03","a","A","\x1b","\x1b[27u","\x1b[99;5u","\x1b[97;3u","\r","\x1bx","\x1b[3~","\x1b[5~","\x1b[Z","\t","\x7f"," ","\x1bOP","\x1b[15~","\x1b[3;5~","\x1b[13;2u"].map((d) => tui.parseKey(d) ?? null);
out.matches = [["\x1b[A","up"],["A","shift+a"],["\r","return"],["\x1b[5~","pageUp"],["Q","q"],["\x1b[1;5A","ctrl+up"]].map(([d,k]) => tui.matchesKey(d,k));
out.widths = ["👨‍👩‍👧‍👦 🇯🇵 🚀","中文日本語한글","e\u0301","\x1b[31mred\x1b[0m","a\tb","⚠️"].map((t) => tui.visibleWidth(t));
out.truncated = [["hello world",8],["\x1b[31mhello world\x1b[0m",8],["hello world",8,"…",true]].map(([t,w,e,p]) => tui.truncateToWidth(t,w,e,p));
const s = new ai.ToolCallArgumentsStream();
out.args = ['{{"pa','th": "a','.txt", "n": [1,','2]','}}'].map((d) => JSON.stringify(s.append(d)));
out.finish = s.finish();
out.frontmatter = agent.parseFrontmatter("---\nname: scout\ndescription: \"Fast: recon\"\ntools: read, grep\ncount: 3\nflag: true\n---\n\nBody text\n");
out.plain = agent.parseFrontmatter("no header");
const usage = {{ input: 1000, output: 500, cacheRead: 200, cacheWrite: 100, cost: {{}} }};
out.cost = ai.calculateCost({{ cost: {{ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }} }}, usage);
const theme = {{ selectedText: (t) => `<${{t}}>`, description: (t) => `{{${{t}}}}`, scrollInfo: (t) => `(${{t}})`, noMatch: (t) => `!${{t}}` }};
const items = Array.from({{ length: 8 }}, (_, i) => ({{ value: `item-${{i}}`, label: i === 3 ? "A much longer label for item three" : undefined, description: i % 2 ? `Description ${{i}} that is fairly long` : undefined }}));
const list = new tui.SelectList(items, 5, theme);
out.list = [30, 60, 100].map((w) => list.render(w));
for (const k of ["[B", "[B", "[B"]) list.handleInput(k);
out.listDown = list.render(80);
list.handleInput("[6~");
out.listPage = list.render(80);
list.setFilter("zzz");
out.listEmpty = list.render(40);
const text = new tui.Text("Hello [1mworld[22m, a line that wraps at the given width nicely", 1, 1);
out.text = [20, 40].map((w) => text.render(w));
const box = new tui.Box(2, 1, (t) => `[${{t}}]`);
box.addChild(new tui.Text("inside", 0, 0));
out.box = box.render(20);
out.trunc = new tui.TruncatedText("a long line to be truncated here", 1, 0).render(15);
out.spacer = new tui.Spacer(2).render(10);
out.wrapped = [["\x1b[31mred text that wraps across lines\x1b[39m plain after", 10], ["\x1b[1m\x1b[3mbold italic words here\x1b[0m done", 8], ["averyveryverylongwordthatbreaks here", 10]].map(([t, w]) => tui.wrapTextWithAnsi(t, w));
// The host's rpc module sends console output to stderr: write to fd 1 directly.
(await import("node:fs")).writeSync(1, JSON.stringify(out));
"#,
            tui = tui.to_string_lossy(),
            ai = ai.to_string_lossy(),
            agent = agent.to_string_lossy()
        )
    };
    let run = |source: String| {
        let out =
            std::process::Command::new(&node).args(["--input-type=module", "-e", &source]).output().expect("node");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).expect("json")
    };
    let ours = run(script(host.join("pi-tui.mjs"), host.join("pi-ai.mjs"), host.join("pi-coding-agent.mjs")));
    let reference = run(script(
        modules.join("pi-tui/dist/index.js"),
        modules.join("pi-ai/dist/index.js"),
        modules.join("pi-coding-agent/dist/index.js"),
    ));
    assert_eq!(ours, reference);
}
