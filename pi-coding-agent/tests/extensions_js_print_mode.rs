//! A JavaScript extension outside the interactive mode, against pi 1.6.0 (which takes over stdout
//! there, `core/output-guard.js`): what it prints (`console.log`, `console.error`, raw writes to
//! either stream) reaches pi's stderr, and stdout keeps only pi's own output
//! (`fixtures/js_extensions/print-output.ts`).

mod cli_support;
mod js_support;

use cli_support::Env;

/// `pi -e print-output.ts ARGS` with Node; `None` (skipped) without Node.
fn run(env: &Env, args: &[&str]) -> Option<std::process::Output> {
    let node = js_support::node_path()?;
    let extension = format!("{}/tests/fixtures/js_extensions/print-output.ts", env!("CARGO_MANIFEST_DIR"));
    Some(env.pi().env("PI_NODE", node).arg("-e").arg(&extension).args(args).output().expect("run pi"))
}

#[test]
fn what_an_extension_prints_goes_to_stderr_and_stdout_stays_clean() {
    let env = Env::new("http://127.0.0.1:9/v1");
    let Some(out) = run(&env, &["--model", "local/smollm2-135m", "-p", "/hello"]) else { return };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "pi failed: {stderr}");
    // pi 1.6.0 printed exactly these four lines, in this order, on stderr and nothing on stdout.
    assert_eq!(stderr, "log line\nerror line\nraw stdout\nraw stderr\n");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
}
