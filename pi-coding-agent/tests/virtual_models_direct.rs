//! `ctx.modelRegistry.streamSimple()` / `stream()` / `complete()` on a virtual model (issue 15),
//! against the reference pi 1.6.0: the TypeScript extension `fixtures/vmodels/direct.ts` makes
//! the requests from its command `/direct` (run by `pi -p /direct`) and records what its router
//! was asked (reason `direct`, the level, no state, the transcript with its system message) and
//! what each request returned; `fixtures/vmodels/direct.ref.json` is the reference's recording
//! (`scripts/fixtures/vmodels_direct.mjs`): routed requests reach the physical model with the
//! output budget capped to it and the level clamped, routing errors are pi's messages, and
//! `stream()` / `complete()` refuse a virtual model. Needs Node.js 22 (`js_support`).

mod cli_support;
mod js_support;

use std::path::PathBuf;

use cli_support::{Env, ScriptedServer, text_reply};
use serde_json::{Value, json};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vmodels").join(name)
}

#[test]
fn direct_requests_with_a_virtual_model_are_routed_as_pi_routes_them() {
    if !js_support::node_available() {
        return;
    }
    let server = ScriptedServer::start(vec![text_reply(&["reply 1"]), text_reply(&["reply 2"])]);
    let env = Env::new(&server.base_url);
    let obs = env.dir.path().join("obs.json");
    let node = js_support::node_path().expect("node");
    let ext = fixture("direct.ts").display().to_string();
    let out = env
        .pi()
        .args(["-e", &ext, "--model", "phys/small", "-p", "/direct"])
        .env("PHYS_URL", &server.base_url)
        .env("OBS_PATH", &obs)
        .env("PI_NODE", node)
        .output()
        .expect("run pi");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let want: Value = serde_json::from_str(&std::fs::read_to_string(fixture("direct.ref.json")).unwrap()).unwrap();
    assert_eq!(
        (stdout.as_ref(), stderr.as_ref()),
        (want["stdout"].as_str().unwrap(), want["stderr"].as_str().unwrap())
    );
    let observed: Value =
        serde_json::from_str(&std::fs::read_to_string(&obs).expect("the extension's observations")).unwrap();
    assert_eq!(observed, want["observed"]);
    let requests: Vec<Value> = server
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|r| {
            json!({"model": r["model"], "max_tokens": r.get("max_tokens").cloned().unwrap_or(Value::Null),
                   "max_completion_tokens": r.get("max_completion_tokens").cloned().unwrap_or(Value::Null),
                   "reasoning_effort": r.get("reasoning_effort").cloned().unwrap_or(Value::Null)})
        })
        .collect();
    let want_requests: Vec<Value> = want["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.as_object_mut().unwrap().remove("authorization");
            r
        })
        .collect();
    assert_eq!(requests, want_requests);
}
