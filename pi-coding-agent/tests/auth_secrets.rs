//! No token reaches a session file, a log or an export: `pi -p` with a stored OAuth credential
//! that it refreshes against a local token server (logging everything at `trace`), then
//! `pi --export` of the session; every file written and everything printed is searched for the
//! access and refresh tokens, old and new.

mod auth_support;
mod cli_support;

use auth_support::Server;
use cli_support::Env;
use serde_json::json;

const SECRETS: [&str; 4] = [
    "sk-ant-oat01-OLD-SECRET-ACCESS",
    "sk-ant-ort01-OLD-SECRET-REFRESH",
    "sk-ant-oat01-NEW-SECRET-ACCESS",
    "sk-ant-ort01-NEW-SECRET-REFRESH",
];

fn files_under(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn no_token_in_a_session_file_a_log_or_an_export() {
    let reply = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\",\"model\":\"claude-test\",\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello there\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
    );
    let server = Server::start(move |req, _| {
        if req.path.starts_with("/platform.claude.com/v1/oauth/token") {
            let body = json!({"access_token": SECRETS[2], "refresh_token": SECRETS[3], "expires_in": 3600});
            (200, body.to_string())
        } else {
            assert_eq!(req.header("authorization").map(str::to_owned), Some(format!("Bearer {}", SECRETS[2])));
            (200, reply.to_owned())
        }
    });
    let env = Env::new("http://127.0.0.1:9/v1");
    let agent = env.agent();
    let models = json!({"providers": {"anthropic": {"baseUrl": server.origin}}});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    let credential = json!({"anthropic": {"type": "oauth", "refresh": SECRETS[1], "access": SECRETS[0], "expires": 0}});
    std::fs::write(agent.join("auth.json"), credential.to_string()).unwrap();
    let model = &pi_ai::models::builtin_catalog()["anthropic"][0].id;
    let out = env
        .pi()
        .env("PI_TEST_OAUTH_ORIGIN", &server.origin)
        .env("PI_LOG", "trace")
        .args(["-p", "--provider", "anthropic", "--model", model, "say hello"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "Hello there");
    assert_eq!(server.requests("/platform.claude.com").len(), 1, "the expired token was refreshed");
    let sessions = env.session_files();
    assert_eq!(sessions.len(), 1);
    let html = env.dir.path().join("export.html");
    let export = env.run(&["--export", sessions[0].to_str().unwrap(), html.to_str().unwrap()]);
    assert!(export.status.success(), "{}", String::from_utf8_lossy(&export.stderr));
    // A second run logging to pi.log (PI_LOG unset) with the refreshed token.
    let again = env
        .pi()
        .env_remove("PI_LOG")
        .args(["-p", "-c", "--provider", "anthropic", "--model", model, "again"])
        .output()
        .unwrap();
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));

    let mut files = Vec::new();
    files_under(env.dir.path(), &mut files);
    let written: Vec<_> = files.iter().filter(|p| !p.ends_with("auth.json")).collect();
    assert!(written.iter().any(|p| p.extension().is_some_and(|x| x == "jsonl")));
    assert!(written.iter().any(|p| p.ends_with("export.html")));
    let mut texts: Vec<(String, String)> = written
        .iter()
        .map(|p| (p.display().to_string(), String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned()))
        .collect();
    texts.push(("stdout".into(), stdout));
    texts.push(("stderr (trace log)".into(), stderr.clone()));
    texts.push(("export stdout".into(), String::from_utf8_lossy(&export.stdout).into_owned()));
    for (name, text) in &texts {
        for secret in SECRETS {
            assert!(!text.contains(secret), "{secret} found in {name}");
        }
    }
    // The refreshed tokens are where they belong.
    let auth = std::fs::read_to_string(agent.join("auth.json")).unwrap();
    assert!(auth.contains(SECRETS[2]) && auth.contains(SECRETS[3]));
}
