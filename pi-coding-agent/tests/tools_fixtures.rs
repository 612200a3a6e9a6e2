//! The built-in tools against fixtures recorded from the real pi 1.6.0 tools
//! (`scripts/fixtures/pi_tools.mjs`): same trees, same arguments, same results.

use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use pi_agent_core::{AgentTool, ToolContext};
use pi_coding_agent::tools::{self, ReadToolOptions, ToolsOptions};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

fn fixtures() -> Value {
    let text = include_str!("fixtures/tools/cases.json");
    serde_json::from_str(text).unwrap()
}

/// Builds a case's tree under `<root>/work` (the generators match the script's).
fn build_tree(root: &Path, files: &Map<String, Value>) -> String {
    let cwd = root.join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    for (rel, spec) in files {
        let p = cwd.join(rel);
        if spec.get("dir").is_some() {
            std::fs::create_dir_all(&p).unwrap();
            continue;
        }
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let bytes: Vec<u8> = if let Some(t) = spec.get("text") {
            t.as_str().unwrap().as_bytes().to_vec()
        } else if let Some(b) = spec.get("b64") {
            base64::engine::general_purpose::STANDARD.decode(b.as_str().unwrap()).unwrap()
        } else if let Some(l) = spec.get("lines") {
            let prefix = l[0].as_str().unwrap();
            let count = l[1].as_u64().unwrap();
            let width = l.get(2).and_then(Value::as_u64).unwrap_or(0) as usize;
            let mut out = String::new();
            for i in 1..=count {
                let line = format!("{prefix}{i}");
                out.push_str(&format!("{line:.<width$}\n"));
            }
            out.into_bytes()
        } else if let Some(r) = spec.get("repeat") {
            r[0].as_str().unwrap().repeat(r[1].as_u64().unwrap() as usize).into_bytes()
        } else {
            panic!("bad spec {spec}");
        };
        std::fs::write(&p, bytes).unwrap();
    }
    // Resolve symlinks (macOS /tmp) so `$ROOT` replacement sees the same prefix as the tools.
    cwd.canonicalize().unwrap().to_string_lossy().into_owned()
}

fn scrub(v: &Value, root: &str, temp: &regex::Regex) -> Value {
    match v {
        Value::String(s) => Value::String(temp.replace_all(&s.replace(root, "$ROOT"), "$$FULL_OUTPUT").into_owned()),
        Value::Array(a) => Value::Array(a.iter().map(|x| scrub(x, root, temp)).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), scrub(x, root, temp))).collect()),
        other => other.clone(),
    }
}

fn tool_for(name: &str, cwd: &str) -> Arc<dyn AgentTool> {
    // The fixtures were recorded with pi's behaviour for binary-looking files; none of them is
    // binary, so the refusal option does not matter here.
    let options = ToolsOptions { read: ReadToolOptions::default(), ..Default::default() };
    tools::tool_by_name(name, cwd, &options).unwrap()
}

fn sorted_lines(s: &str) -> Vec<String> {
    let mut v: Vec<String> = s.lines().map(str::to_owned).collect();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_match_pi_fixtures() {
    let fx = fixtures();
    let temp = regex::Regex::new(r"/[^\s]*/pi-bash-[0-9a-f]{16}\.log").unwrap();
    let mut failures = Vec::new();
    let cases = fx["cases"].as_array().unwrap();
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let tool_name = case["tool"].as_str().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let cwd = build_tree(dir.path(), case["files"].as_object().unwrap());
        let root = cwd.strip_suffix("/work").unwrap().to_owned();
        let tool = tool_for(tool_name, &cwd);
        let mut args = case["args"].as_object().unwrap().clone();
        if case.get("prepare").is_some() {
            args = tool.prepare_arguments(args);
        }
        let cancel = CancellationToken::new();
        if let Some(ms) = case.get("abortAfterMs").and_then(Value::as_u64) {
            let c = cancel.clone();
            tokio::spawn(async move {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                c.cancel();
            });
        }
        let outcome = tool.execute("call_1", args, ToolContext::new(cancel, None)).await;
        // stdout and stderr reach the tool on two pipes (in pi too), so how their lines interleave
        // depends on timing: compare that case as sorted lines, like grep's unordered output.
        let sort = case.get("sortLines").is_some() || tool_name == "grep" || name == "bash_stderr_merged";
        match (outcome, case.get("error"), case.get("result")) {
            (Err(e), Some(expected), _) => {
                let got = scrub(&json!(e.message()), &root, &temp);
                if &got != expected {
                    failures.push(format!("{name}: error {got} != {expected}"));
                }
            }
            (Ok(r), None, Some(expected)) => {
                let content = scrub(&serde_json::to_value(&r.content).unwrap(), &root, &temp);
                let exp_content = &expected["content"];
                let same_content = if sort {
                    let t = |v: &Value| v[0]["text"].as_str().map(sorted_lines);
                    t(&content) == t(exp_content)
                } else {
                    &content == exp_content
                };
                if !same_content {
                    failures.push(format!("{name}: content\n  got {content}\n  exp {exp_content}"));
                }
                let details = scrub(&r.details, &root, &temp);
                // A fixture without `details` recorded pi's undefined (`Null` here).
                let exp_details = expected.get("details").cloned().unwrap_or(Value::Null);
                let details_ok = if sort {
                    // Same keys; order-dependent text inside may differ.
                    details.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>())
                        == exp_details.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>())
                } else {
                    details == exp_details
                };
                if !details_ok {
                    failures.push(format!("{name}: details\n  got {details}\n  exp {exp_details}"));
                }
                let exp_err = expected.get("isError").and_then(Value::as_bool).unwrap_or(false);
                if r.is_error != exp_err {
                    failures.push(format!("{name}: is_error {} != {exp_err}", r.is_error));
                }
                if let Some(exp_sc) = expected.get("structuredContent") {
                    let mut sc = scrub(r.structured_content.as_ref().unwrap(), &root, &temp);
                    sc.as_object_mut().unwrap().remove("wall_time_seconds");
                    let mut exp_sc = exp_sc.clone();
                    if sort {
                        for v in [&mut sc, &mut exp_sc] {
                            if let Some(out) = v["output"].as_str() {
                                v["output"] = json!(sorted_lines(out).join("\n"));
                            }
                        }
                    }
                    if sc != exp_sc {
                        failures.push(format!("{name}: structuredContent\n  got {sc}\n  exp {exp_sc}"));
                    }
                }
            }
            (Ok(r), Some(expected), _) => {
                failures.push(format!("{name}: expected error {expected}, got {:?}", r.content))
            }
            (Err(e), None, _) => failures.push(format!("{name}: unexpected error {}", e.message())),
            (Ok(_), None, None) => failures.push(format!("{name}: fixture has neither result nor error")),
        }
        if let Some(after) = case.get("afterContent").and_then(Value::as_object) {
            for (p, exp) in after {
                let got = std::fs::read_to_string(Path::new(&cwd).join(p)).ok();
                if got.as_deref() != exp.as_str() {
                    failures.push(format!("{name}: file {p}: {got:?} != {exp}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} cases differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
fn declarations_match_pi() {
    let fx = fixtures();
    for tool in tools::all_tools("/tmp", &ToolsOptions::default()) {
        let exp = &fx["definitions"][tool.name()];
        assert_eq!(tool.label(), exp["label"].as_str().unwrap(), "{}", tool.name());
        assert_eq!(tool.description(), exp["description"].as_str().unwrap(), "{}", tool.name());
        // Key order matters: compare serialized text.
        assert_eq!(
            serde_json::to_string(tool.parameters()).unwrap(),
            serde_json::to_string(&exp["parameters"]).unwrap()
        );
    }
}
