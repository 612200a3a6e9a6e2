//! `pi install | remove | update | list` with local, git and npm sources (a git repository and
//! an npm registry on 127.0.0.1 made by the test, no network), and the resources packages and
//! settings arrays load, compared with what the reference pi 1.6.0 sent for the same files
//! (`fixtures/packages/resources.json`, recorded by `scripts/fixtures/packages_resources.sh`).
//!
//! Needs `git` and `npm` on PATH (CI installs both with Node).

mod cli_support;
mod js_support;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cli_support::{Env, ScriptedServer, text_reply};

fn text(o: &Output) -> (String, String, i32) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.code().unwrap_or(-1),
    )
}

fn sh(cwd: &Path, cmd: &str, args: &[&str]) {
    let out = Command::new(cmd).args(args).current_dir(cwd).output().expect(cmd);
    assert!(out.status.success(), "{cmd} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn settings(env: &Env) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(env.agent().join("settings.json")).unwrap()).unwrap()
}

#[test]
fn local_package_install_list_remove_as_pi() {
    let env = Env::new("http://127.0.0.1:9/v1");
    let pkg = env.agent().parent().unwrap().join("pkg");
    std::fs::create_dir_all(pkg.join("skills/hello")).unwrap();
    std::fs::write(pkg.join("package.json"), r#"{"name":"localpkg","version":"1.0.0"}"#).unwrap();
    let (out, err, rc) = text(&env.run(&["install", "../pkg"]));
    assert_eq!((out.as_str(), err.as_str(), rc), ("Installing ../pkg...\nInstalled ../pkg\n", "", 0));
    // Relative to the agent dir, as pi writes it, without a final newline.
    assert_eq!(
        std::fs::read_to_string(env.agent().join("settings.json")).unwrap(),
        "{\n  \"packages\": [\n    \"../pkg\"\n  ]\n}"
    );
    assert_eq!(settings(&env)["packages"], serde_json::json!(["../pkg"]));
    let (out, _, rc) = text(&env.run(&["list"]));
    assert_eq!((out, rc), (format!("User packages:\n  ../pkg\n    {}\n", pkg.display()), 0));
    assert_eq!(text(&env.run(&["remove", "../pkg"])).0, "Removing ../pkg...\nRemoved ../pkg\n");
    assert_eq!(settings(&env)["packages"], serde_json::json!([]));
    let (out, err, rc) = text(&env.run(&["uninstall", "../pkg"]));
    assert_eq!((out.as_str(), err.as_str(), rc), ("Removing ../pkg...\n", "No matching package found for ../pkg\n", 1));
    assert_eq!(text(&env.run(&["list"])).0, "No packages installed.\n");
    // Project scope: relative to .pi, listed under "Project packages:".
    assert_eq!(text(&env.run(&["install", "-l", "../pkg"])).2, 0);
    let project: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.proj().join(".pi/settings.json")).unwrap()).unwrap();
    assert_eq!(project["packages"], serde_json::json!(["../../pkg"]));
    // Now the project has .pi/settings.json: untrusted until approved.
    assert_eq!(text(&env.run(&["list"])).0, "No packages installed.\n");
    let (_, err, rc) = text(&env.run(&["install", "-l", "../pkg"]));
    assert_eq!((err.as_str(), rc), ("Project is not trusted. Use --approve to modify local package config.\n", 1));
    assert_eq!(
        text(&env.run(&["list", "--approve"])).0,
        format!("Project packages:\n  ../../pkg\n    {}\n", pkg.display())
    );
    let (_, err, rc) = text(&env.run(&["install", "/nonexistent/pkg"]));
    assert_eq!((err.as_str(), rc), ("Error: Path does not exist: /nonexistent/pkg\n", 1));
}

#[test]
fn usage_errors_as_pi() {
    let env = Env::new("http://127.0.0.1:9/v1");
    let (_, err, rc) = text(&env.run(&["install"]));
    assert_eq!(
        (err.as_str(), rc),
        ("Missing install source.\nUsage: pi install <source> [-l] [--approve|--no-approve]\n", 1)
    );
    let (_, err, _) = text(&env.run(&["list", "-l"]));
    assert_eq!(err, "Unknown option -l for \"list\".\nUse \"pi --help\" or \"pi list [--approve|--no-approve]\".\n");
    let (_, err, rc) = text(&env.run(&["update", "--all", "x"]));
    assert!(err.starts_with("--all cannot be combined with a positional source\n"), "{err}");
    assert_eq!(rc, 1);
}

/// A bare repository reached as `https://example.com/user/<name>` through git's `insteadOf`.
fn git_env(env: &Env, cmd: &mut Command) {
    let repos = env.agent().parent().unwrap().join("repos");
    cmd.env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", format!("url.file://{}/.insteadOf", repos.display()))
        .env("GIT_CONFIG_VALUE_0", "https://example.com/");
}

fn commit(dir: &Path, message: &str) {
    sh(dir, "git", &["add", "-A"]);
    sh(dir, "git", &["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", message]);
}

#[test]
fn git_package_install_update_remove() {
    let env = Env::new("http://127.0.0.1:9/v1");
    let root = env.agent().parent().unwrap().to_path_buf();
    let src = root.join("gitsrc");
    std::fs::create_dir_all(src.join("skills/gskill")).unwrap();
    std::fs::write(src.join("skills/gskill/SKILL.md"), "---\nname: gskill\ndescription: G\n---\nbody\n").unwrap();
    sh(&src, "git", &["init", "-q", "-b", "main"]);
    commit(&src, "one");
    let bare = root.join("repos/user/gitpkg.git");
    std::fs::create_dir_all(bare.parent().unwrap()).unwrap();
    sh(&root, "git", &["clone", "-q", "--bare", &src.display().to_string(), &bare.display().to_string()]);
    let run = |args: &[&str]| {
        let mut c = env.pi();
        git_env(&env, &mut c);
        text(&c.args(args).output().unwrap())
    };
    let (out, _, rc) = run(&["install", "git:example.com/user/gitpkg"]);
    assert_eq!(
        (out.as_str(), rc),
        ("Installing git:example.com/user/gitpkg...\nInstalled git:example.com/user/gitpkg\n", 0)
    );
    let clone = env.agent().join("git/example.com/user/gitpkg");
    assert!(clone.join("skills/gskill/SKILL.md").is_file());
    assert_eq!(std::fs::read_to_string(env.agent().join("git/.gitignore")).unwrap(), "*\n!.gitignore\n");
    assert_eq!(
        run(&["update", "--extensions"]).0,
        "Updating git:example.com/user/gitpkg...\nPackages are already up to date\n"
    );
    std::fs::write(src.join("new.txt"), "x").unwrap();
    commit(&src, "two");
    sh(&src, "git", &["push", "-q", &bare.display().to_string(), "main"]);
    let head = |dir: &Path| {
        let o = Command::new("git").args(["rev-parse", "HEAD"]).current_dir(dir).output().unwrap();
        String::from_utf8_lossy(&o.stdout).trim()[..7].to_string()
    };
    let before = head(&clone);
    let (out, _, rc) = run(&["update", "git:example.com/user/gitpkg"]);
    let after = head(&src);
    assert_eq!(rc, 0);
    assert!(
        out.ends_with(&format!("Updated 1 package:\n  git:example.com/user/gitpkg {before} -> {after}\n")),
        "{out}"
    );
    assert_eq!(head(&clone), after);
    let (out, _, rc) = run(&["remove", "git:example.com/user/gitpkg"]);
    assert_eq!(
        (out.as_str(), rc),
        ("Removing git:example.com/user/gitpkg...\nRemoved git:example.com/user/gitpkg\n", 0)
    );
    assert!(!env.agent().join("git/example.com").exists());
}

/// A minimal npm registry on 127.0.0.1 serving the tarballs of `dir` (`<name>-<version>.tgz`).
fn start_registry(dir: PathBuf) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request = String::new();
            let _ = reader.read_line(&mut request);
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
            }
            let path = request.split_whitespace().nth(1).unwrap_or("/").trim_start_matches('/').to_string();
            let (status, body): (&str, Vec<u8>) = if let Some((_, file)) = path.split_once("/-/") {
                match std::fs::read(dir.join(file)) {
                    Ok(bytes) => ("200 OK", bytes),
                    Err(_) => ("404 Not Found", b"{}".to_vec()),
                }
            } else {
                let mut versions = serde_json::Map::new();
                let mut latest = String::new();
                let mut names: Vec<String> = std::fs::read_dir(&dir)
                    .unwrap()
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect();
                names.sort();
                for f in names {
                    if let Some(v) = f.strip_prefix(&format!("{path}-")).and_then(|r| r.strip_suffix(".tgz")) {
                        let tarball = format!("http://127.0.0.1:{port}/{path}/-/{f}");
                        versions.insert(
                            v.into(),
                            serde_json::json!({"name": path, "version": v, "dist": {"tarball": tarball}}),
                        );
                        latest = v.to_string();
                    }
                }
                let doc = serde_json::json!({"name": path, "dist-tags": {"latest": latest}, "versions": versions});
                ("200 OK", doc.to_string().into_bytes())
            };
            let head = format!("HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", body.len());
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
    format!("http://127.0.0.1:{port}/")
}

#[test]
fn npm_package_from_a_local_registry_ships_a_skill_and_a_theme() {
    let server = ScriptedServer::start(vec![text_reply(&["ok"])]);
    let env = Env::new(&server.base_url);
    let root = env.agent().parent().unwrap().to_path_buf();
    let src = root.join("npmsrc");
    let tarballs = root.join("tarballs");
    std::fs::create_dir_all(src.join("skills/npmskill")).unwrap();
    std::fs::create_dir_all(src.join("themes")).unwrap();
    std::fs::create_dir_all(&tarballs).unwrap();
    std::fs::write(src.join("skills/npmskill/SKILL.md"), "---\nname: npmskill\ndescription: From npm\n---\nb\n")
        .unwrap();
    std::fs::write(src.join("themes/t.json"), r#"{"name":"npmtheme","vars":{},"colors":{}}"#).unwrap();
    let pack = |version: &str| {
        std::fs::write(src.join("package.json"), format!(r#"{{"name":"npmpkg","version":"{version}"}}"#)).unwrap();
        sh(&src, "npm", &["pack", "--silent", "--pack-destination", &tarballs.display().to_string()]);
    };
    pack("1.0.0");
    let registry = start_registry(tarballs.clone());
    let run = |args: &[&str]| {
        let mut c = env.pi();
        c.env("npm_config_registry", &registry)
            .env("npm_config_cache", root.join("npm-cache"))
            .env_remove("PI_OFFLINE");
        text(&c.args(args).output().unwrap())
    };
    let (out, err, rc) = run(&["install", "npm:npmpkg"]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.starts_with("Installing npm:npmpkg...\n") && out.ends_with("Installed npm:npmpkg\n"), "{out}");
    let installed = env.agent().join("npm/node_modules/npmpkg");
    assert!(installed.join("skills/npmskill/SKILL.md").is_file());
    assert_eq!(std::fs::read_to_string(env.agent().join("npm/.gitignore")).unwrap(), "*\n!.gitignore\n",);
    assert_eq!(run(&["list"]).0, format!("User packages:\n  npm:npmpkg\n    {}\n", installed.display()));
    // The package's skill reaches the system prompt; its theme is resolved.
    let (_, err, rc) = run(&["-p", "--no-session", "hi"]);
    assert_eq!(rc, 0, "{err}");
    let body = server.requests.lock().unwrap()[0].clone();
    let system = body["messages"][0]["content"].as_str().unwrap().to_string();
    assert!(
        system.contains(&format!("<location>{}</location>", installed.join("skills/npmskill/SKILL.md").display())),
        "{system}"
    );
    let resolved = pi_coding_agent::packages::resolve_resources(
        &env.proj(),
        &env.agent(),
        true,
        &pi_coding_agent::packages::ResolveOptions::default(),
    );
    assert_eq!(
        resolved.enabled(pi_coding_agent::packages::ResourceKind::Themes),
        vec![installed.join("themes/t.json")]
    );
    // A newer version: `pi update --extensions` reinstalls and reports the change.
    pack("1.1.0");
    let (out, err, rc) = run(&["update", "--extensions"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.starts_with("Updating npm:npmpkg...\n"), "{out}");
    assert!(out.ends_with("Updated 1 package:\n  npm:npmpkg 1.0.0 -> 1.1.0\n"), "{out}");
    assert_eq!(run(&["update", "--extensions"]).0, "Packages are already up to date\n");
    let (_, err, rc) = run(&["update", "npmpkg"]);
    assert_eq!((err.as_str(), rc), ("Error: No matching package found for npmpkg. Did you mean npm:npmpkg?\n", 1));
    let (out, _, rc) = run(&["remove", "npm:npmpkg"]);
    assert_eq!(rc, 0);
    assert!(out.ends_with("Removed npm:npmpkg\n"), "{out}");
    assert!(!installed.exists());
}

#[test]
fn a_missing_program_is_named() {
    let env = Env::new("http://127.0.0.1:9/v1");
    let out = env.pi().env("PATH", "/nonexistent").args(["install", "npm:whatever"]).output().unwrap();
    let (_, err, rc) = text(&out);
    assert_eq!((err.as_str(), rc), ("Error: npm is not installed or not on PATH (spawn npm ENOENT)\n", 1));
}

fn scenario_case(trust: &[&str]) -> serde_json::Value {
    let server = ScriptedServer::start(vec![text_reply(&["ok"]), text_reply(&["ok"])]);
    let env = Env::new(&server.base_url);
    let root = env.agent().parent().unwrap().to_path_buf();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/packages/scenario.sh");
    sh(&root, "bash", &[&script.display().to_string(), &root.display().to_string()]);
    let mut args = vec!["-p", "--no-session", "--model", "local/smollm2-135m"];
    args.extend_from_slice(trust);
    args.extend(["/review hello", "/only-alpha hi"]);
    let (_, err, rc) = text(&env.run(&args));
    assert_eq!(rc, 0, "{err}");
    let bodies = server.requests.lock().unwrap().clone();
    assert_eq!(bodies.len(), 2);
    let root = root.display().to_string();
    let system = bodies[1]["messages"][0]["content"].as_str().unwrap().to_string();
    let users: Vec<String> = bodies
        .iter()
        .map(|body| {
            let messages = body["messages"].as_array().unwrap();
            let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
            let user = match &user["content"] {
                serde_json::Value::String(s) => s.clone(),
                parts => parts.as_array().unwrap().iter().filter_map(|p| p["text"].as_str()).collect(),
            };
            user.replace(&root, "<root>")
        })
        .collect();
    serde_json::json!({"skills": skills_section(&system).replace(&root, "<root>"), "users": users})
}

/// The `<skills>` section of a system prompt (the rest names each build's own docs paths).
fn skills_section(system: &str) -> String {
    match (system.find("<skills>"), system.find("</skills>")) {
        (Some(a), Some(b)) => system[a..b + "</skills>".len()].to_string(),
        _ => String::new(),
    }
}

#[test]
fn packages_and_settings_load_what_the_reference_loads() {
    let fixture: serde_json::Value = serde_json::from_str(include_str!("fixtures/packages/resources.json")).unwrap();
    let expected = |case: &str| {
        let system = fixture[case]["system"].as_str().unwrap();
        serde_json::json!({"skills": skills_section(system), "users": fixture[case]["users"]})
    };
    assert!(expected("approved")["skills"].as_str().unwrap().contains("<name>gamma</name>"));
    assert_eq!(scenario_case(&[]), expected("untrusted"));
    assert_eq!(scenario_case(&["--approve"]), expected("approved"));
}

#[test]
fn package_extensions_resolve_in_pis_order_with_filters() {
    use pi_coding_agent::packages::{ResolveOptions, ResourceKind, resolve_resources};
    let dir = tempfile::tempdir().unwrap();
    let (agent, proj, pkg) = (dir.path().join("agent"), dir.path().join("proj"), dir.path().join("pkg"));
    std::fs::create_dir_all(pkg.join("extensions/sub")).unwrap();
    std::fs::create_dir_all(agent.join("extensions")).unwrap();
    std::fs::create_dir_all(proj.join(".pi/extensions")).unwrap();
    std::fs::write(pkg.join("package.json"), r#"{"name":"p","pi":{"extensions":["./extensions/*.ts"]}}"#).unwrap();
    std::fs::write(pkg.join("extensions/broken.ts"), "this is not TypeScript {").unwrap();
    std::fs::write(pkg.join("extensions/ok.ts"), "export default function () {}").unwrap();
    std::fs::write(pkg.join("extensions/sub/index.ts"), "export default function () {}").unwrap();
    std::fs::write(agent.join("extensions/user.ts"), "").unwrap();
    std::fs::write(agent.join("extensions/off.ts"), "").unwrap();
    std::fs::write(proj.join(".pi/extensions/project.js"), "").unwrap();
    std::fs::write(
        agent.join("settings.json"),
        r#"{"packages":[{"source":"../pkg","extensions":["!extensions/ok.ts"]}],"extensions":["-extensions/off.ts"]}"#,
    )
    .unwrap();
    let options = ResolveOptions { home_dir: Some(dir.path().to_path_buf()), ..Default::default() };
    let trusted = resolve_resources(&proj, &agent, true, &options);
    assert_eq!(
        trusted.enabled(ResourceKind::Extensions),
        vec![
            proj.join(".pi/extensions/project.js"),
            agent.join("extensions/user.ts"),
            pkg.join("extensions/broken.ts")
        ]
    );
    let untrusted = resolve_resources(&proj, &agent, false, &options);
    assert_eq!(
        untrusted.enabled(ResourceKind::Extensions),
        vec![agent.join("extensions/user.ts"), pkg.join("extensions/broken.ts")]
    );
    // An unreadable settings file counts as empty: user resources still load.
    std::fs::write(agent.join("settings.json"), "{ broken").unwrap();
    let broken = resolve_resources(&proj, &agent, false, &options);
    assert_eq!(
        broken.enabled(ResourceKind::Extensions),
        vec![agent.join("extensions/off.ts"), agent.join("extensions/user.ts")]
    );
}

/// `pi config`'s global toggles write what the reference's config selector writes (checked with
/// its `ConfigSelectorComponent` on the same files).
#[test]
fn config_toggles_write_what_pi_config_writes() {
    use pi_coding_agent::packages::config::{config_groups, set_enabled};
    use pi_coding_agent::packages::{ResolveOptions, resolve_resources};
    let dir = tempfile::tempdir().unwrap();
    let (agent, proj, pkg) = (dir.path().join("agent"), dir.path().join("proj"), dir.path().join("pkg"));
    for (path, name) in [(agent.join("skills/u"), "u"), (pkg.join("skills/a"), "a")] {
        std::fs::create_dir_all(&path).unwrap();
        std::fs::write(path.join("SKILL.md"), format!("---\nname: {name}\ndescription: D\n---\nb\n")).unwrap();
    }
    std::fs::create_dir_all(pkg.join("extensions")).unwrap();
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(pkg.join("extensions/x.ts"), "").unwrap();
    std::fs::write(agent.join("settings.json"), r#"{"packages":["../pkg"],"theme":"dark"}"#).unwrap();
    let options = ResolveOptions { home_dir: Some(dir.path().join("home")), ..Default::default() };
    let groups = || config_groups(&resolve_resources(&proj, &agent, false, &options), &agent);
    let shown: Vec<(String, Vec<String>)> =
        groups().into_iter().map(|g| (g.label, g.items.into_iter().map(|i| i.display_name).collect())).collect();
    assert_eq!(
        shown,
        vec![
            ("../pkg (user)".to_string(), vec!["x.ts".to_string(), "a".to_string()]),
            (format!("User ({}/)", agent.display()), vec!["u".to_string()]),
            (
                "Built-in".to_string(),
                vec!["codemode".to_string(), "llama.cpp".to_string(), "mcp".to_string(), "tool-search".to_string()]
            ),
        ]
    );
    let item = |name: &str| groups().into_iter().flat_map(|g| g.items).find(|i| i.display_name == name).unwrap();
    let read = || std::fs::read_to_string(agent.join("settings.json")).unwrap();
    set_enabled(&proj, &agent, &item("a"), false).unwrap();
    assert_eq!(
        read(),
        "{\n  \"packages\": [\n    {\n      \"source\": \"../pkg\",\n      \"skills\": [\n        \"-skills/a/SKILL.md\"\n      ]\n    }\n  ],\n  \"theme\": \"dark\"\n}"
    );
    assert!(!item("a").resource.enabled);
    set_enabled(&proj, &agent, &item("u"), false).unwrap();
    set_enabled(&proj, &agent, &item("a"), true).unwrap();
    assert_eq!(
        read(),
        "{\n  \"packages\": [\n    {\n      \"source\": \"../pkg\",\n      \"skills\": [\n        \"+skills/a/SKILL.md\"\n      ]\n    }\n  ],\n  \"theme\": \"dark\",\n  \"skills\": [\n    \"-skills/u/SKILL.md\"\n  ]\n}"
    );
    assert!(!item("u").resource.enabled && item("a").resource.enabled);
    // A built-in extension is toggled by its `builtin:` path in the `extensions` setting, and
    // the runtime honours it.
    set_enabled(&proj, &agent, &item("mcp"), false).unwrap();
    assert!(read().ends_with("\"extensions\": [\n    \"-builtin:mcp\"\n  ]\n}"), "{}", read());
    assert!(!item("mcp").resource.enabled);
    assert!(!pi_coding_agent::packages::builtin_extension_enabled(&proj, &agent, false, "mcp"));
}

/// A configured package that cannot be installed at startup is skipped with pi's warning, and
/// the run goes on.
#[test]
fn a_package_that_fails_to_install_is_a_warning_at_startup() {
    let server = ScriptedServer::start(vec![text_reply(&["ok"]), text_reply(&["ok"])]);
    let env = Env::new(&server.base_url);
    std::fs::write(env.agent().join("settings.json"), r#"{"packages":["npm:zzz-missing-pkg"]}"#).unwrap();
    let out = env
        .pi()
        .env("npm_config_registry", "http://127.0.0.1:9/")
        .env("npm_config_fetch_retries", "0")
        .env("npm_config_cache", env.agent().join("npm-cache"))
        .env_remove("PI_OFFLINE")
        .args(["-p", "--no-session", "hi"])
        .output()
        .unwrap();
    let (out, err, rc) = text(&out);
    assert_eq!((out.as_str(), rc), ("ok\n", 0), "{err}");
    let root = env.agent().join("npm");
    let warning = format!(
        "Warning: Extension package \"npm:zzz-missing-pkg\": failed to install (npm install zzz-missing-pkg --prefix {} --legacy-peer-deps --no-audit --no-fund failed with code 1). Run \"pi remove npm:zzz-missing-pkg\" to remove it from settings.json.\n",
        root.display()
    );
    assert!(err.ends_with(&warning), "{err}");
    // Offline, nothing is installed and nothing is reported.
    let out = env.pi().env("PI_OFFLINE", "1").args(["-p", "--no-session", "hi"]).output().unwrap();
    assert_eq!(text(&out), ("ok\n".to_string(), String::new(), 0));
}

/// A user npm package found only in npm's global root (installed by older pi versions) is used
/// where it is, as pi's `getNpmInstallPath`.
#[test]
fn a_legacy_global_npm_install_is_found() {
    let env = Env::new("http://127.0.0.1:9/v1");
    let global = env.agent().parent().unwrap().join("global");
    let legacy = global.join("lib/node_modules/oldpkg");
    std::fs::create_dir_all(&legacy).unwrap();
    std::fs::write(legacy.join("package.json"), r#"{"name":"oldpkg","version":"1.0.0"}"#).unwrap();
    std::fs::write(env.agent().join("settings.json"), r#"{"packages":["npm:oldpkg"]}"#).unwrap();
    let out = env.pi().env("npm_config_prefix", &global).args(["list"]).output().unwrap();
    assert_eq!(text(&out).0, format!("User packages:\n  npm:oldpkg\n    {}\n", legacy.display()));
}

/// A package given with `-e` (a folder) brings its skills first, even with `--no-skills`, as pi's
/// temporary sources.
#[tokio::test]
async fn an_e_package_folder_brings_its_skills_first() {
    use pi_coding_agent::sdk::DefaultResourceLoader;
    let dir = tempfile::tempdir().unwrap();
    let (agent, proj, pkg) = (dir.path().join("agent"), dir.path().join("proj"), dir.path().join("pkg"));
    for (path, name) in [(agent.join("skills/user"), "user"), (pkg.join("skills/from-e"), "from-e")] {
        std::fs::create_dir_all(&path).unwrap();
        std::fs::write(path.join("SKILL.md"), format!("---\nname: {name}\ndescription: D\n---\nb\n")).unwrap();
    }
    std::fs::create_dir_all(&proj).unwrap();
    let mut loader = DefaultResourceLoader::new(&proj, &agent);
    loader.home_dir = Some(dir.path().join("home"));
    loader.additional_extension_paths.push(pkg.clone());
    loader.reload().await.unwrap();
    let names: Vec<String> = loader.resources().unwrap().skills.iter().map(|s| s.name.clone()).collect();
    assert_eq!(names, ["from-e", "user"]);
    loader.no_skills = true;
    loader.reload().await.unwrap();
    let names: Vec<String> = loader.resources().unwrap().skills.iter().map(|s| s.name.clone()).collect();
    assert_eq!(names, ["from-e"]);
}

/// A package made by the test with a JavaScript extension (registers `<tool>`) and a skill.
fn write_e_package(dir: &Path, name: &str, version: &str, tool: &str) {
    std::fs::create_dir_all(dir.join("extensions")).unwrap();
    std::fs::create_dir_all(dir.join(format!("skills/{name}-skill"))).unwrap();
    std::fs::write(dir.join("package.json"), format!(r#"{{"name":"{name}","version":"{version}"}}"#)).unwrap();
    std::fs::write(
        dir.join("extensions/tool.js"),
        format!(
            r#"export default function (pi) {{
    pi.registerTool({{ name: "{tool}", label: "T", description: "From -e",
        parameters: {{ type: "object", properties: {{}} }},
        async execute() {{ return {{ content: [{{ type: "text", text: "ok" }}] }}; }} }});
}}
"#
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join(format!("skills/{name}-skill/SKILL.md")),
        format!("---\nname: {name}-skill\ndescription: D\n---\nb\n"),
    )
    .unwrap();
}

fn tool_names(body: &serde_json::Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t["function"]["name"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// `-e git:…` and `-e npm:…` install the package for the run into pi's cache
/// (`<agent dir>/tmp/extensions/<git-host | npm>/<sha256 prefix>/…`, the same folder names the
/// reference computes), load its extension and skill, write nothing to settings, and reuse the
/// cached copy on the next run (offline too); a source that cannot be installed is a warning.
#[test]
fn e_git_and_npm_sources_install_for_the_run() {
    let Some(node) = js_support::node_path() else {
        assert!(js_support::node_available());
        return;
    };
    let server = ScriptedServer::start(vec![text_reply(&["a"]), text_reply(&["b"]), text_reply(&["c"])]);
    let env = Env::new(&server.base_url);
    let root = env.agent().parent().unwrap().to_path_buf();
    // A git repository reached as https://example.com/user/epkg.
    let src = root.join("gitsrc");
    write_e_package(&src, "epkg", "1.0.0", "git_tool");
    std::fs::remove_file(src.join("package.json")).unwrap();
    sh(&src, "git", &["init", "-q", "-b", "main"]);
    commit(&src, "init");
    let bare = root.join("repos/user/epkg.git");
    std::fs::create_dir_all(bare.parent().unwrap()).unwrap();
    sh(&root, "git", &["clone", "-q", "--bare", &src.display().to_string(), &bare.display().to_string()]);
    // An npm tarball served by a registry on 127.0.0.1.
    let npm_src = root.join("npmsrc");
    let tarballs = root.join("tarballs");
    std::fs::create_dir_all(&tarballs).unwrap();
    write_e_package(&npm_src, "npmepkg", "1.0.0", "npm_tool");
    sh(&npm_src, "npm", &["pack", "--silent", "--pack-destination", &tarballs.display().to_string()]);
    let registry = start_registry(tarballs);
    let run = |offline: bool| {
        let mut c = env.pi();
        git_env(&env, &mut c);
        c.env("PI_NODE", &node)
            .env("npm_config_registry", &registry)
            .env("npm_config_cache", root.join("npm-cache"))
            .env_remove("PI_OFFLINE");
        if offline {
            c.env("PI_OFFLINE", "1");
        }
        let args = ["-e", "git:example.com/user/epkg", "-e", "npm:npmepkg", "-p", "--no-session", "hi"];
        text(&c.args(args).output().unwrap())
    };
    let (_, err, rc) = run(false);
    assert_eq!(rc, 0, "{err}");
    let git_dir = env.agent().join("tmp/extensions/git-example.com/75908548/user/epkg");
    let npm_dir = env.agent().join("tmp/extensions/npm/f35b2129/node_modules/npmepkg");
    assert!(git_dir.join("extensions/tool.js").is_file(), "{err}");
    assert!(npm_dir.join("extensions/tool.js").is_file(), "{err}");
    assert!(!env.agent().join("settings.json").exists(), "-e writes no settings");
    let check = |body: &serde_json::Value| {
        let tools = tool_names(body);
        assert!(tools.contains(&"git_tool".to_string()) && tools.contains(&"npm_tool".to_string()), "{tools:?}");
        let system = body["messages"][0]["content"].as_str().unwrap().to_string();
        assert!(
            system.contains("<name>epkg-skill</name>") && system.contains("<name>npmepkg-skill</name>"),
            "{system}"
        );
    };
    check(&server.requests.lock().unwrap()[0].clone());
    // The cached copies are used again, offline too.
    let (_, err, rc) = run(true);
    assert_eq!(rc, 0, "{err}");
    check(&server.requests.lock().unwrap()[1].clone());
    // A source that cannot be installed: the run goes on without it, with pi's warning.
    let mut c = env.pi();
    c.env("npm_config_registry", &registry).env("npm_config_cache", root.join("npm-cache")).env_remove("PI_OFFLINE");
    let (_, err, rc) = text(&c.args(["-e", "npm:does-not-exist", "-p", "--no-session", "hi"]).output().unwrap());
    assert_eq!(rc, 0, "{err}");
    assert!(
        err.contains("Warning: Extension package \"npm:does-not-exist\": failed to install (")
            && err.contains("Check the source and try again."),
        "{err}"
    );
}

/// A package whose extension fails to load: the run stops with the reference's two lines (recorded
/// from pi 1.6.0 with the same files) and exit 1; with `-ne` the package's extension is skipped
/// and the run goes on.
#[test]
fn a_package_whose_extension_fails_to_load() {
    let Some(node) = js_support::node_path() else {
        assert!(js_support::node_available());
        return;
    };
    let server = ScriptedServer::start(vec![text_reply(&["ok"])]);
    let env = Env::new(&server.base_url);
    let pkg = env.agent().parent().unwrap().join("pkg");
    std::fs::create_dir_all(pkg.join("extensions")).unwrap();
    std::fs::write(pkg.join("extensions/bad.js"), "throw new Error(\"bad package extension\");\n").unwrap();
    std::fs::write(pkg.join("package.json"), r#"{"name":"pkg","version":"1.0.0"}"#).unwrap();
    std::fs::write(env.agent().join("settings.json"), r#"{"packages":["../pkg"]}"#).unwrap();
    let run = |args: &[&str]| text(&env.pi().env("PI_NODE", &node).args(args).output().unwrap());
    let (_, err, rc) = run(&["-p", "--no-session", "hi"]);
    let bad = pkg.join("extensions/bad.js");
    assert_eq!(
        (err.as_str(), rc),
        (
            format!(
                "Error: Failed to load extension \"{}\": Failed to load extension: bad package extension\nHint: Start without extensions using \"pi -ne\".\n",
                bad.display()
            )
            .as_str(),
            1
        )
    );
    assert!(server.requests.lock().unwrap().is_empty());
    let (out, err, rc) = run(&["-ne", "-p", "--no-session", "hi"]);
    assert_eq!((out.as_str(), rc), ("ok\n", 0), "{err}");
}
