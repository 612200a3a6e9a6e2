//! `pi auth` as a process: outputs and exit codes as pi 1.6.0 printed them for the same
//! auth.json (recorded with `anchor.sh pi auth …`), and `login --api-key` in-process with a typed
//! key.

mod cli_support;

use pi_coding_agent::cli::auth_command::{AUTH_HELP, execute};

fn run(env: &cli_support::Env, args: &[&str]) -> (String, String, i32) {
    let out = env.pi().env_remove("GROQ_API_KEY").arg("auth").args(args).output().expect("run pi auth");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn auth_commands_print_what_pi_prints() {
    let env = cli_support::Env::new("http://127.0.0.1:9/v1");
    std::fs::remove_file(env.agent().join("models.json")).unwrap();
    std::fs::write(env.agent().join("auth.json"), r#"{"groq":{"type":"api_key","key":"gsk-x"}}"#).unwrap();
    let cases: &[(&[&str], &str, &str, i32)] = &[
        (&["check", "--provider", "groq"], "ready\n", "", 0),
        (
            &["check", "--provider", "groq", "--json"],
            "{\"status\":\"ready\",\"provider\":\"groq\",\"authType\":\"api_key\"}\n",
            "",
            0,
        ),
        (
            &["check", "--provider", "openai", "--json"],
            "{\"status\":\"not_ready\",\"provider\":\"openai\",\"reason\":\"credentials_not_configured\"}\n",
            "",
            1,
        ),
        (
            &["check", "--provider", "nope", "--json"],
            "{\"status\":\"not_ready\",\"provider\":\"nope\",\"reason\":\"provider_not_found\"}\n",
            "",
            1,
        ),
        (&["print-api-key", "--provider", "groq"], "gsk-x\n", "", 0),
        (&["print-api-key", "--provider", "openai"], "", "Error: No usable API key is configured\n", 1),
        (&["check"], "", "Error: Auth checks require --provider <provider> or --model <model>\n", 2),
        (
            &["logout", "openai"],
            "No stored credentials for OpenAI. Environment variables and models.json config are unchanged.\n",
            "",
            0,
        ),
        (
            &["logout", "groq"],
            "Removed stored API key for Groq. Environment variables and models.json config are unchanged.\n",
            "",
            0,
        ),
        (
            &["logout", "groq"],
            "No stored credentials for Groq. Environment variables and models.json config are unchanged.\n",
            "",
            0,
        ),
        (&["logout", "nope"], "", "Unknown provider \"nope\".\nStored credentials: none\n", 1),
        (
            &["login", "groq", "--api-key"],
            "",
            "\"pi auth login <provider> [--api-key] [--no-browser]\" requires an interactive terminal\n",
            1,
        ),
        (
            &["bogus"],
            "",
            "Error: Unknown auth command \"bogus\". Use \"pi auth login\", \"pi auth logout\", \"pi auth print-api-key\", \"pi auth print-bearer-token\", or \"pi auth check\".\n",
            1,
        ),
    ];
    for (args, stdout, stderr, code) in cases {
        assert_eq!(run(&env, args), (stdout.to_string(), stderr.to_string(), *code), "pi auth {}", args.join(" "));
    }
    assert_eq!(std::fs::read_to_string(env.agent().join("auth.json")).unwrap(), "{}");
    let (help, _, code) = run(&env, &[]);
    assert_eq!((help, code), (format!("{AUTH_HELP}\n"), 0));
}

#[test]
fn login_with_a_typed_key_saves_it() {
    let dir = tempfile::tempdir().unwrap();
    let argv: Vec<String> = ["auth", "login", "groq", "--api-key"].map(String::from).to_vec();
    let outcome = execute(&argv, dir.path(), true, &mut || Some("gsk-typed\n".into()));
    let path = dir.path().join("auth.json");
    assert_eq!(outcome.stdout, format!("Saved API key for Groq. Credentials saved to {}\n", path.display()));
    assert_eq!(outcome.code, 0);
    let auth = pi_coding_agent::auth::AuthStorage::create(&path);
    assert_eq!(auth.api_key("groq").unwrap().as_deref(), Some("gsk-typed"));
    // Account sign-in is tested in auth_cli_login.rs; a provider with only that refuses --api-key.
    let argv: Vec<String> = ["auth", "login", "openai-codex", "--api-key"].map(String::from).to_vec();
    let outcome = execute(&argv, dir.path(), true, &mut || None);
    assert_eq!(outcome.code, 1);
    assert_eq!(outcome.stderr, "OpenAI Codex has no API key login. Omit --api-key to sign in.\n");
}
