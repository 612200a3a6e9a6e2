//! `--list-models [search]` lists what pi 1.6.0 lists (issue 15): the registry's models with
//! credentials, the built-in llama.cpp extension's stored catalog (`models-store.json`, with a
//! stored server; not with `--no-extensions`), an extension's provider and its virtual model
//! (`fixtures/vmodels/router.ts`), sorted as pi sorts them (`localeCompare`: `beta_1` before
//! `beta-2`, `Zeta` among the lowercase ids) and filtered by pi-tui's fuzzy filter. The
//! reference's output, recorded with `anchor.sh pi` and the same files, is
//! `fixtures/vmodels/list_models_builtin.ref.txt` (each run followed by `--- rc=<status>`).
//! Needs Node.js 22 (`js_support`).

mod cli_support;
mod js_support;

use std::path::PathBuf;

use cli_support::{Env, ScriptedServer};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vmodels").join(name)
}

#[test]
fn list_models_shows_builtin_extension_and_virtual_models_as_pi_does() {
    if !js_support::node_available() {
        return;
    }
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    let agent = env.agent();
    std::fs::copy(fixture("list_models_builtin.models.json"), agent.join("models.json")).unwrap();
    std::fs::copy(fixture("list_models_builtin.store.json"), agent.join("models-store.json")).unwrap();
    let auth = r#"{"llama.cpp": {"type": "api_key", "env": {"LLAMA_BASE_URL": "http://127.0.0.1:9"}}}"#;
    std::fs::write(agent.join("auth.json"), auth).unwrap();
    let node = js_support::node_path().expect("node");
    let router = fixture("router.ts").display().to_string();
    let runs: [&[&str]; 5] = [
        &["-e", &router, "--list-models"],
        &["-e", &router, "--list-models", "llama"],
        &["-e", &router, "--list-models", "sm2"],
        &["-e", &router, "--list-models", "zz"],
        &["--no-extensions", "--list-models", "llama"],
    ];
    let mut ours = String::new();
    for args in runs {
        let out = env
            .pi()
            .args(args)
            .env("PHYS_URL", "http://127.0.0.1:9/v1")
            .env("PI_NODE", &node)
            .env("PI_OFFLINE", "1")
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{args:?}");
        ours.push_str(&String::from_utf8_lossy(&out.stdout));
        ours.push_str(&format!("--- rc={}\n", out.status.code().unwrap_or(-1)));
    }
    let want = std::fs::read_to_string(fixture("list_models_builtin.ref.txt")).unwrap();
    assert_eq!(ours, want, "ours (left) and the reference's (right)");
}
