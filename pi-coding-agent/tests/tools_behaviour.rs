//! Error paths, processes, streaming and concurrency of the built-in tools, on real files and real
//! processes.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_agent_core::{AgentTool, AgentToolResult, ToolContext};
use pi_ai::UserBlock;
use pi_coding_agent::tools::{self, ToolsOptions};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

fn args(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn text(r: &AgentToolResult) -> String {
    match &r.content[0] {
        UserBlock::Text(t) => t.text.clone(),
        other => panic!("not text: {other:?}"),
    }
}

async fn run(tool: &Arc<dyn AgentTool>, a: Value) -> Result<AgentToolResult, String> {
    tool.execute("id", args(a), ToolContext::detached()).await.map_err(|e| e.message().to_owned())
}

fn tmp() -> (tempfile::TempDir, String) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().canonicalize().unwrap().to_string_lossy().into_owned();
    (d, p)
}

/// Processes whose command line contains `marker` (zombies have an empty command line).
fn processes_with(marker: &str) -> usize {
    let mut n = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmd).contains(marker) {
            n += 1;
        }
    }
    n
}

async fn wait_no_processes(marker: &str) -> usize {
    for _ in 0..40 {
        if processes_with(marker) == 0 {
            return 0;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    processes_with(marker)
}

#[tokio::test]
async fn read_errors_are_clear() {
    let (_d, cwd) = tmp();
    let read = tools::read_tool(&cwd);
    std::fs::create_dir(format!("{cwd}/dir")).unwrap();
    assert_eq!(run(&read, json!({"path": "dir"})).await.unwrap_err(), "EISDIR: illegal operation on a directory, read");
    std::fs::write(format!("{cwd}/bin"), b"\x7fELF\x00\x01\x02").unwrap();
    let err = run(&read, json!({"path": "bin"})).await.unwrap_err();
    assert!(err.starts_with("Cannot read binary file: bin."), "{err}");
    assert_eq!(run(&read, json!({"path": 3})).await.unwrap_err(), "path: must be string");
    assert_eq!(run(&read, json!({})).await.unwrap_err(), "path: must have required property 'path'");
    std::fs::write(format!("{cwd}/t.txt"), "a\n").unwrap();
    assert_eq!(run(&read, json!({"path": "t.txt", "offset": "x"})).await.unwrap_err(), "offset: must be number");
    // Binary refusal can be turned off (pi's behaviour: decode as text).
    let lenient = tools::tool_by_name(
        "read",
        &cwd,
        &ToolsOptions { read: tools::ReadToolOptions { refuse_binary: false }, ..Default::default() },
    )
    .unwrap();
    assert!(text(&run(&lenient, json!({"path": "bin"})).await.unwrap()).contains('\u{0}'));
}

#[tokio::test]
async fn permission_denied_is_reported() {
    if nix::unistd::geteuid().is_root() {
        // root reads any file: nothing to check.
        return;
    }
    let (_d, cwd) = tmp();
    let p = format!("{cwd}/secret");
    std::fs::write(&p, "x").unwrap();
    std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    let err = run(&tools::read_tool(&cwd), json!({"path": "secret"})).await.unwrap_err();
    assert_eq!(err, format!("EACCES: permission denied, access '{p}'"));
    let err = run(&tools::edit_tool(&cwd), json!({"path": "secret", "edits": [{"oldText": "x", "newText": "y"}]}))
        .await
        .unwrap_err();
    assert_eq!(err, "Could not edit file: secret. Error code: EACCES.");
}

#[tokio::test]
async fn paths_outside_cwd_are_allowed_like_pi() {
    let (_d, root) = tmp();
    std::fs::create_dir(format!("{root}/cwd")).unwrap();
    std::fs::write(format!("{root}/outside.txt"), "out\n").unwrap();
    let cwd = format!("{root}/cwd");
    let read = tools::read_tool(&cwd);
    assert_eq!(text(&run(&read, json!({"path": "../outside.txt"})).await.unwrap()), "out\n");
    assert_eq!(text(&run(&read, json!({"path": format!("{root}/outside.txt")})).await.unwrap()), "out\n");
    let write = tools::write_tool(&cwd);
    run(&write, json!({"path": "../w.txt", "content": "w"})).await.unwrap();
    assert_eq!(std::fs::read_to_string(format!("{root}/w.txt")).unwrap(), "w");
}

#[tokio::test]
async fn read_converts_bmp_and_sends_images_as_base64() {
    let (_d, cwd) = tmp();
    let mut bmp = b"BM".to_vec();
    bmp.extend_from_slice(&62u32.to_le_bytes());
    bmp.extend_from_slice(&[0; 4]);
    bmp.extend_from_slice(&54u32.to_le_bytes());
    bmp.extend_from_slice(&40u32.to_le_bytes());
    bmp.extend_from_slice(&2i32.to_le_bytes());
    bmp.extend_from_slice(&1i32.to_le_bytes());
    bmp.extend_from_slice(&1u16.to_le_bytes());
    bmp.extend_from_slice(&24u16.to_le_bytes());
    bmp.extend_from_slice(&[0; 24]);
    bmp.extend_from_slice(&[255, 0, 0, 0, 0, 255, 0, 0]);
    std::fs::write(format!("{cwd}/pic.dat"), &bmp).unwrap();
    let r = run(&tools::read_tool(&cwd), json!({"path": "pic.dat"})).await.unwrap();
    assert_eq!(text(&r), "Read image file [image/png]\n[Image converted from image/bmp to image/png.]");
    match &r.content[1] {
        UserBlock::Image(img) => {
            assert_eq!(img.mime_type, "image/png");
            assert!(img.data.starts_with("iVBORw0KGgo"));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn edit_refuses_non_utf8_and_reports_node_errors() {
    let (_d, cwd) = tmp();
    std::fs::write(format!("{cwd}/l1.txt"), b"caf\xe9\n").unwrap();
    let edit = tools::edit_tool(&cwd);
    let err = run(&edit, json!({"path": "l1.txt", "edits": [{"oldText": "caf", "newText": "x"}]})).await.unwrap_err();
    assert!(err.contains("not valid UTF-8"), "{err}");
    assert_eq!(std::fs::read(format!("{cwd}/l1.txt")).unwrap(), b"caf\xe9\n");
    let err = run(&edit, json!({"path": "f", "edits": [{"oldText": 1, "newText": "x"}]})).await.unwrap_err();
    assert_eq!(err, "edits/0/oldText: must be string");
}

#[tokio::test]
async fn grep_handles_huge_output_and_bad_globs() {
    let (_d, cwd) = tmp();
    let line = format!("{}\n", "match this line ".repeat(20));
    std::fs::write(format!("{cwd}/big.txt"), line.repeat(400)).unwrap();
    let grep = tools::grep_tool(&cwd);
    let r = run(&grep, json!({"pattern": "match", "limit": 1000})).await.unwrap();
    let t = text(&r);
    assert!(t.ends_with("[50.0KB limit reached]"), "{}", &t[t.len() - 80..]);
    assert!(t.len() < 52 * 1024);
    assert_eq!(r.details["truncation"]["totalLines"], json!(400));
    let err = run(&grep, json!({"pattern": "x", "glob": "a/{b"})).await.unwrap_err();
    assert!(err.contains("unclosed"), "{err}");
    let r = run(&grep, json!({"pattern": "zzz", "literal": true})).await.unwrap();
    assert_eq!(text(&r), "No matches found");
}

#[tokio::test]
async fn cancelled_calls_abort() {
    let (_d, cwd) = tmp();
    let cancel = CancellationToken::new();
    cancel.cancel();
    for tool in tools::all_tools(&cwd, &ToolsOptions::default()) {
        let a = match tool.name() {
            "read" | "ls" => json!({"path": "."}),
            "bash" | "powershell" => json!({"command": "echo hi"}),
            "edit" => json!({"path": "x", "edits": [{"oldText": "a", "newText": "b"}]}),
            "write" => json!({"path": "x", "content": "a"}),
            _ => json!({"pattern": "x"}),
        };
        let err = tool.execute("id", args(a), ToolContext::new(cancel.clone(), None)).await.unwrap_err();
        if tool.name() == "powershell" {
            // pi's powershell tool fails before it looks at the signal where it cannot run.
            assert_eq!(err.message(), "The powershell tool is only available on Windows.");
            continue;
        }
        assert!(err.message().ends_with("aborted"), "{}: {}", tool.name(), err.message());
    }
}

#[tokio::test]
async fn bash_timeout_kills_the_whole_group() {
    let (_d, cwd) = tmp();
    let bash = tools::bash_tool(&cwd);
    let marker = "31.4159261";
    let started = std::time::Instant::now();
    let err =
        run(&bash, json!({"command": format!("sleep {marker} & sleep {marker} & echo up; wait"), "timeout": 0.5}))
            .await
            .unwrap_err();
    assert_eq!(err, "up\n\n\nCommand timed out after 0.5 seconds");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(wait_no_processes(marker).await, 0, "orphaned processes left");
}

#[tokio::test]
async fn bash_cancel_kills_the_whole_group() {
    let (_d, cwd) = tmp();
    let bash = tools::bash_tool(&cwd);
    let marker = "27.1828182";
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        c.cancel();
    });
    let cmd = format!("(sleep {marker}; echo never) & sh -c 'sleep {marker}' & echo go; wait");
    let err = bash.execute("id", args(json!({"command": cmd})), ToolContext::new(cancel, None)).await.unwrap_err();
    assert_eq!(err.message(), "go\n\n\nCommand aborted");
    assert_eq!(wait_no_processes(marker).await, 0, "orphaned processes left");
}

#[tokio::test]
async fn bash_streams_updates_and_saves_long_output() {
    let (_d, cwd) = tmp();
    let bash = tools::bash_tool(&cwd);
    let updates: Arc<Mutex<Vec<AgentToolResult>>> = Arc::default();
    let sink = updates.clone();
    let ctx = ToolContext::new(CancellationToken::new(), Some(Arc::new(move |u| sink.lock().unwrap().push(u))));
    let r = bash.execute("id", args(json!({"command": "echo a; sleep 0.3; seq 1 3000"})), ctx).await.unwrap();
    let updates = updates.lock().unwrap();
    assert!(updates[0].content.is_empty(), "first update is empty");
    assert!(updates.iter().any(|u| !u.content.is_empty() && text(u) == "a\n"), "streamed the first line");
    let path = r.details["fullOutputPath"].as_str().unwrap().to_owned();
    assert!(text(&r).ends_with(&format!("[Showing lines 1002-3001 of 3001. Full output: {path}]")));
    let full = std::fs::read_to_string(&path).unwrap();
    assert_eq!(full.lines().count(), 3001);
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    assert_eq!(r.structured_content.as_ref().unwrap()["exit_code"], json!(0));
    std::fs::remove_file(path).unwrap();
}

#[tokio::test]
async fn bash_options_prefix_hook_and_session_env() {
    let (_d, cwd) = tmp();
    let mut options = tools::BashToolOptions { command_prefix: Some("X=from_prefix".into()), ..Default::default() };
    options.session_env.insert("PI_MODEL".into(), "m1".into());
    options.spawn_hook = Some(Arc::new(|mut c: tools::BashSpawnContext| {
        c.env.insert("HOOKED".into(), "yes".into());
        c
    }));
    let bash = tools::tool_by_name("bash", &cwd, &ToolsOptions { bash: options, ..Default::default() }).unwrap();
    let r = run(&bash, json!({"command": "echo $X $PI_MODEL $HOOKED"})).await.unwrap();
    assert_eq!(text(&r), "from_prefix m1 yes\n");
    let r = run(&bash, json!({"command": "exit 7"})).await.unwrap();
    assert!(r.is_error);
    let missing = tools::BashTool::new(format!("{cwd}/nope"), Default::default());
    let err = missing.execute("id", args(json!({"command": "true"})), ToolContext::detached()).await.unwrap_err();
    assert_eq!(err.message(), format!("Working directory does not exist: {cwd}/nope\nCannot execute bash commands."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_edits_of_one_file_are_serialized() {
    let (_d, cwd) = tmp();
    let n = 24;
    let body: String = (0..n).map(|i| format!("token{i}\n")).collect();
    std::fs::write(format!("{cwd}/shared.txt"), &body).unwrap();
    let edit = tools::edit_tool(&cwd);
    let write = tools::write_tool(&cwd);
    let mut handles = Vec::new();
    for i in 0..n {
        let edit = edit.clone();
        handles.push(tokio::spawn(async move {
            run(&edit, json!({"path": "shared.txt", "edits": [{"oldText": format!("token{i}\n"), "newText": format!("done{i}\n")}]})).await
        }));
        // Writes of other files proceed meanwhile.
        let write = write.clone();
        handles.push(tokio::spawn(async move {
            run(&write, json!({"path": format!("other{i}.txt"), "content": "x"})).await
        }));
    }
    for h in handles {
        h.await.unwrap().unwrap();
    }
    let after = std::fs::read_to_string(format!("{cwd}/shared.txt")).unwrap();
    let expected: String = (0..n).map(|i| format!("done{i}\n")).collect();
    assert_eq!(after, expected, "an edit was lost");
    assert_eq!(tools::mutation_queue::active_queues(), 0);
}

#[tokio::test]
async fn find_and_ls_limits() {
    let (_d, cwd) = tmp();
    for i in 0..30 {
        std::fs::write(format!("{cwd}/f{i:02}.rs"), "").unwrap();
    }
    let find = tools::find_tool(&cwd);
    let r = run(&find, json!({"pattern": "*.rs", "limit": 10})).await.unwrap();
    assert!(text(&r).ends_with("[10 results limit reached. Use limit=20 for more, or refine pattern]"));
    assert_eq!(text(&r).lines().next(), Some("f00.rs"));
    let ls = tools::ls_tool(&cwd);
    let r = run(&ls, json!({"limit": 5})).await.unwrap();
    assert_eq!(text(&r), "f00.rs\nf01.rs\nf02.rs\nf03.rs\nf04.rs\n\n[5 entries limit reached. Use limit=10 for more]");
}
