//! `pi`: the coding agent's command line (print, JSON and RPC modes of pi 1.6.0).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{IsTerminal, Read};
use std::path::PathBuf;

use anyhow::Result;
use pi_ai::ThinkingLevel;
use pi_coding_agent::cli::args::{Args, DiagnosticKind, FlagValue, ListModels, Mode};
use pi_coding_agent::cli::export_html::export_from_file;
use pi_coding_agent::cli::file_args::{build_initial_message, process_file_args};
use pi_coding_agent::cli::list_models::render_model_list;
use pi_coding_agent::cli::model_resolver::{CliModelRequest, resolve_cli_model};
use pi_coding_agent::cli::model_scope::resolve_model_scope;
use pi_coding_agent::cli::registry::CliRegistry;
use pi_coding_agent::cli::session_select::{SessionStop, choose_session, validate_session_flags};
use pi_coding_agent::cli::{HELP, VERSION, no_api_key_message, no_models_message};
use pi_coding_agent::extensions::FlagValue as ExtFlagValue;
use pi_coding_agent::modes::rpc::RpcContext;
use pi_coding_agent::modes::{EXIT_INTERRUPTED, interactive, json, print, rpc};
use pi_coding_agent::sdk::{
    CreateAgentSessionOptions, DefaultResourceLoader, PromptOptions, SessionSettings, ShellSettings,
    create_agent_session,
};
use pi_coding_agent::session::{expand_tilde, get_agent_dir, resolve_path};
use pi_coding_agent::settings::Settings;

/// pi's subcommands (package management, auth, MCP), which this port does not have.
const SUBCOMMANDS: [&str; 8] = ["install", "remove", "uninstall", "update", "list", "config", "auth", "mcp"];

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if let Some(command) = argv.first().filter(|a| SUBCOMMANDS.contains(&a.as_str())) {
        // pi runs these before parsing options; sending the word as a prompt would be wrong.
        eprintln!("Error: `pi {command}` is not available in this port (no package, auth or MCP commands)");
        std::process::exit(1);
    }
    let args = Args::parse(argv);
    // Fast paths: nothing is loaded for --version and --help.
    if args.version {
        println!("{VERSION}");
        return;
    }
    if args.help {
        print!("{HELP}");
        return;
    }
    let code = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt.block_on(run(args)).unwrap_or_else(|e| {
            eprintln!("Error: {e:#}");
            1
        }),
        Err(e) => {
            eprintln!("Error: {e}");
            1
        }
    };
    std::process::exit(code);
}

fn fail(message: &str) -> Result<i32> {
    eprintln!("Error: {message}");
    Ok(1)
}

/// pi's hint after an extension failed to load.
const EXTENSION_LOAD_FAILURE_HINT: &str = "Hint: Start without extensions using \"pi -ne\".";

/// pi's `Unknown option(s): --a, --b` for the `--flags` no extension registered (`registered`:
/// name and whether it is boolean).
fn unknown_flags_error(args: &Args, registered: &[(String, bool)]) -> Option<String> {
    let unknown: Vec<String> = args
        .unknown_flags
        .keys()
        .filter(|k| !registered.iter().any(|(n, _)| n == *k))
        .map(|k| format!("--{k}"))
        .collect();
    match unknown.len() {
        0 => None,
        1 => Some(format!("Unknown option: {}", unknown[0])),
        _ => Some(format!("Unknown options: {}", unknown.join(", "))),
    }
}

/// Asks `question` on stderr and reads one answer line from stdin: `y`/`yes` (any case) is yes,
/// end of input is no answer.
fn confirm_on_stdin(question: &str) -> Option<bool> {
    use std::io::{BufRead, Write};
    let mut err = std::io::stderr();
    let _ = err.write_all(question.as_bytes());
    let _ = err.flush();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => {
            let answer = line.trim_end_matches(['\r', '\n']).to_lowercase();
            Some(answer == "y" || answer == "yes")
        }
    }
}

fn text_or_file(value: &str) -> String {
    let path = expand_tilde(value);
    match std::fs::read_to_string(&path) {
        Ok(text) if path.is_file() => text,
        _ => value.to_owned(),
    }
}

async fn run(mut args: Args) -> Result<i32> {
    for d in &args.diagnostics {
        if d.kind == DiagnosticKind::Warning {
            eprintln!("Warning: {}", d.message);
        }
    }
    if let Some(d) = args.diagnostics.iter().find(|d| d.kind == DiagnosticKind::Error) {
        return fail(&d.message);
    }
    let cwd = std::env::current_dir()?;
    if let Some(input) = &args.export {
        return match export_from_file(input, args.messages.first().map(String::as_str), &cwd) {
            Ok(out) => {
                println!("Exported to: {out}");
                Ok(0)
            }
            Err(e) => fail(&e.to_string()),
        };
    }
    let mode = args.mode;
    if mode == Some(Mode::Rpc) && !args.file_args.is_empty() {
        return fail("@file arguments are not supported in RPC mode");
    }
    if let Some(line) = validate_session_flags(&args) {
        eprintln!("{line}");
        return Ok(1);
    }
    // Without -e nothing can claim an unknown --flag; with -e the check waits for the extensions.
    if args.extensions.is_empty()
        && let Some(e) = unknown_flags_error(&args, &[])
    {
        return fail(&e);
    }
    let agent_dir = get_agent_dir();
    let (settings, settings_errors) = Settings::load(&agent_dir, &cwd, args.project_trust_override == Some(true));
    for e in settings_errors {
        eprintln!("Warning: {e}");
    }
    let (registry, models_error) = CliRegistry::load(&agent_dir);
    if let Some(e) = models_error {
        eprintln!("Warning: errors loading models.json:\n{e}");
    }
    if let Some(list) = &args.list_models {
        let available = registry.available_models();
        if available.is_empty() {
            println!("{}", no_models_message());
            return Ok(0);
        }
        let search = match list {
            ListModels::All => None,
            ListModels::Search(s) => Some(s.as_str()),
        };
        print!("{}", render_model_list(&available, search));
        return Ok(0);
    }
    if let Some(p) = &args.provider
        && args.model.is_none()
    {
        return fail(&format!("--provider requires --model (for example: --provider {p} --model <pattern>)"));
    }
    if args.api_key.is_some() && args.model.is_none() && args.models.is_none() {
        return fail("--api-key requires a model to be specified via --model, --provider/--model, or --models");
    }

    // Session (before the model: an existing session keeps the scope from choosing one).
    let session_dir: Option<PathBuf> = args
        .session_dir
        .clone()
        .or_else(|| std::env::var("PI_CODING_AGENT_SESSION_DIR").ok().filter(|s| !s.is_empty()))
        .or_else(|| settings.session_dir().map(str::to_owned))
        .map(|d| expand_tilde(&d));
    let choice = match choose_session(&args, &cwd, session_dir.as_deref(), &mut confirm_on_stdin) {
        Ok(c) => c,
        Err(SessionStop::Fail(line)) => {
            eprintln!("{line}");
            return Ok(1);
        }
        Err(SessionStop::Quit(text)) => {
            eprint!("{text}");
            return Ok(0);
        }
    };
    for w in &choice.warnings {
        eprintln!("Warning: {w}");
    }
    let mut session_manager = choice.manager;
    if let Some(name) = &args.name {
        let name = name.trim();
        if name.is_empty() {
            return fail("--name requires a non-empty value");
        }
        session_manager.append_session_info(name)?;
    }
    let has_existing_session = !session_manager.build_session_context().messages.is_empty();

    // Model (`--models` or the `enabledModels` setting scope the choice).
    let all = registry.all_models();
    let patterns = args.models.clone().or_else(|| {
        let list = settings.get("enabledModels")?.as_array()?;
        Some(list.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
    });
    let available: Vec<_> = registry.available_models().into_iter().cloned().collect();
    let scope = match patterns {
        Some(p) if !p.is_empty() => resolve_model_scope(&p, &available),
        _ => Default::default(),
    };
    for w in &scope.warnings {
        eprintln!("Warning: {w}");
    }
    let mut thinking = args.thinking.clone();
    let model = if let Some(pattern) = &args.model {
        let request = CliModelRequest {
            provider: args.provider.as_deref(),
            model: pattern,
            thinking: args.thinking.as_deref(),
            inline_api_key: args.api_key.is_some(),
        };
        match resolve_cli_model(&request, &all, &|p| registry.has_auth(p)) {
            Ok(r) => {
                if let Some(w) = &r.warning {
                    eprintln!("Warning: {w}");
                }
                thinking = thinking.or(r.thinking_level);
                Some(r.model)
            }
            Err(e) => return fail(&e),
        }
    } else {
        let saved = settings
            .default_provider()
            .zip(settings.default_model())
            .and_then(|(p, m)| registry.models.get_model(p, m).cloned());
        let scoped = match scope.models.as_slice() {
            [] => None,
            _ if has_existing_session => None,
            models => {
                let pick = saved
                    .as_ref()
                    .and_then(|s| models.iter().find(|m| m.model.provider == s.provider && m.model.id == s.id))
                    .unwrap_or(&models[0]);
                if thinking.is_none() {
                    thinking = pick.thinking_level.clone();
                }
                Some(pick.model.clone())
            }
        };
        scoped.or_else(|| {
            saved
                .filter(|m| registry.has_auth(&m.provider))
                .or_else(|| registry.available_models().first().map(|m| (*m).clone()))
        })
    };
    let Some(model) = model else {
        eprintln!("{}", no_api_key_message(None));
        return Ok(1);
    };
    if args.api_key.is_none() && !registry.has_auth(&model.provider) {
        eprintln!("{}", no_api_key_message(Some(&model.provider)));
        return Ok(1);
    }
    let thinking_level = thinking
        .as_deref()
        .or(settings.default_thinking_level())
        .and_then(ThinkingLevel::parse)
        .map(|l| pi_ai::models::clamp_thinking_level(&model, l));

    // Input.
    let interactive_terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let stdin_text = if mode != Some(Mode::Rpc) && !std::io::stdin().is_terminal() {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s)?;
        let t = s.trim().to_owned();
        (!t.is_empty()).then_some(t)
    } else {
        None
    };
    let files = match process_file_args(&args.file_args, &cwd).await {
        Ok(f) => f,
        Err(e) => return fail(&e.to_string()),
    };
    let initial = build_initial_message(stdin_text.as_deref(), &files.text, &mut args.messages);
    let interactive = mode.is_none() && !args.print && interactive_terminal;

    // Tools.
    let builtin = pi_coding_agent::tools::ALL_TOOL_NAMES;
    let mut tools: Option<Vec<String>> = if args.no_tools || args.no_builtin_tools {
        Some(Vec::new())
    } else {
        args.tools.clone().map(|t| t.into_iter().filter(|n| builtin.contains(&n.as_str())).collect())
    };
    if let Some(ex) = &args.exclude_tools {
        let base = tools.unwrap_or_else(|| ["read", "bash", "edit", "write"].map(str::to_owned).to_vec());
        tools = Some(base.into_iter().filter(|t| !ex.contains(t)).collect());
    }

    let mut loader = DefaultResourceLoader::new(&cwd, &agent_dir);
    loader.no_context_files = args.no_context_files;
    loader.project_trusted = args.project_trust_override == Some(true);
    loader.no_extensions = args.no_extensions;
    // `-e` paths are resolved against the cwd and load even with --no-extensions, as pi's.
    for e in &args.extensions {
        let path = resolve_path(cwd.join(expand_tilde(e)));
        if !path.exists() {
            eprintln!(
                "Error: Failed to load extension \"{}\": Extension path does not exist: {}",
                path.display(),
                path.display()
            );
            eprintln!("{EXTENSION_LOAD_FAILURE_HINT}");
            return Ok(1);
        }
        loader.additional_extension_paths.push(path);
    }
    // `--skill` / `--prompt-template` paths load besides (or, with -ns / -np, instead of) the
    // discovered ones, resolved against the cwd as pi's `resolveCliPaths`.
    loader.no_skills = args.no_skills;
    loader.no_prompt_templates = args.no_prompt_templates;
    loader.additional_skill_paths.extend(args.skills.iter().map(|p| resolve_path(cwd.join(expand_tilde(p)))));
    loader
        .additional_prompt_template_paths
        .extend(args.prompt_templates.iter().map(|p| resolve_path(cwd.join(expand_tilde(p)))));
    loader.system_prompt = args.system_prompt.as_deref().map(text_or_file);
    if !args.append_system_prompt.is_empty() {
        let parts: Vec<String> = args.append_system_prompt.iter().map(|a| text_or_file(a)).collect();
        loader.append_system_prompt = Some(parts.join("\n\n"));
    }
    loader.reload().await?;
    let startup = interactive.then(|| startup_resources(&loader, &cwd));
    let menu = if interactive { menu_commands(&loader) } else { Vec::new() };
    let stream_options = pi_ai::options::StreamOptions { api_key: args.api_key.clone(), ..Default::default() };
    let created = create_agent_session(CreateAgentSessionOptions {
        cwd: Some(cwd.clone()),
        agent_dir: Some(agent_dir.clone()),
        model: Some(model),
        thinking_level,
        tools,
        resource_loader: Some(loader),
        session_manager: Some(session_manager),
        stream_fn: Some(registry.stream_fn()),
        stream_options,
        // What /resume and /fork may restore: the models with auth, as pi's model runtime.
        models: available.clone(),
        // pi's automatic compaction and auto-retry, as settings.json configures them.
        settings: Some(SessionSettings::from_settings(&settings)),
        shell: Some(ShellSettings::from_settings(&settings)),
        ..Default::default()
    })
    .await?;
    let session = created.session;
    if let Some(runner) = session.extension_runner() {
        let errors = runner.load_errors();
        for e in errors {
            eprintln!("Error: Failed to load extension \"{}\": {}", e.path, e.error);
        }
        if !errors.is_empty() {
            eprintln!("{EXTENSION_LOAD_FAILURE_HINT}");
            return Ok(1);
        }
    }
    if !args.extensions.is_empty() {
        let registered = session.extension_runner().map(|r| r.flags()).unwrap_or_default();
        let names: Vec<(String, bool)> = registered
            .iter()
            .map(|f| (f.name.clone(), f.kind == pi_coding_agent::extensions::FlagType::Boolean))
            .collect();
        if let Some(e) = unknown_flags_error(&args, &names) {
            return fail(&e);
        }
        if let Some(runner) = session.extension_runner() {
            for (name, value) in &args.unknown_flags {
                let boolean = names.iter().any(|(n, b)| n == name && *b);
                let value = match value {
                    _ if boolean => ExtFlagValue::Bool(true),
                    FlagValue::Value(v) => ExtFlagValue::String(v.clone()),
                    FlagValue::Bool => return fail(&format!("Extension flag \"--{name}\" requires a value")),
                };
                runner.set_flag_value(name, value);
            }
        }
    }

    if mode == Some(Mode::Rpc) {
        let ctx = RpcContext {
            available_models: registry.available_models().into_iter().cloned().collect(),
            scoped_models: scope.models.clone(),
        };
        return Ok(rpc::run_rpc(session, ctx).await);
    }
    let initial = initial.map(|text| (text, PromptOptions { images: files.images, ..Default::default() }));
    let rest = std::mem::take(&mut args.messages);
    if interactive {
        let options = interactive::InteractiveOptions {
            initial,
            rest,
            agent_dir: agent_dir.clone(),
            theme: args.use_theme.clone().or_else(|| settings.get("theme").and_then(|v| v.as_str()).map(str::to_owned)),
            quiet_startup: settings.quiet_startup(),
            regular_screen: settings.get("tuiMode").and_then(|v| v.as_str()) == Some("regular"),
            models: available.clone(),
            scoped_models: scope.models.iter().map(|m| m.model.clone()).collect(),
            resources: startup.unwrap_or_default(),
            warnings: Vec::new(),
            version: VERSION.to_owned(),
            color_mode: None,
            commands: menu,
            hide_thinking: settings.get("hideThinkingBlock").and_then(|v| v.as_bool()).unwrap_or(false),
        };
        return Ok(interactive::run_interactive(session, options).await);
    }
    let run = async {
        if mode == Some(Mode::Json) {
            json::run_json(&session, initial, &rest).await
        } else {
            print::run_print(&session, initial, &rest).await
        }
    };
    tokio::select! {
        code = run => Ok(code),
        // As pi's SIGINT handler: exit at once; the session file keeps what was written (the
        // user message; no aborted assistant message).
        _ = tokio::signal::ctrl_c() => Ok(EXIT_INTERRUPTED),
    }
}

/// What the interactive header lists: context files, skills, prompt templates.
fn startup_resources(loader: &DefaultResourceLoader, cwd: &std::path::Path) -> interactive::StartupResources {
    let Ok(r) = loader.resources() else { return Default::default() };
    let home = std::env::var("HOME").unwrap_or_default();
    let show = |p: &std::path::Path| {
        let s = p.display().to_string();
        if let Ok(rel) = p.strip_prefix(cwd) {
            return rel.display().to_string();
        }
        match s.strip_prefix(&home) {
            Some(rest) if !home.is_empty() && rest.starts_with('/') => format!("~{rest}"),
            _ => s,
        }
    };
    interactive::StartupResources {
        context_files: r.context_files.iter().map(|f| show(std::path::Path::new(&f.path))).collect(),
        skills: r.skills.iter().map(|s| s.name.clone()).collect(),
        templates: r.prompt_templates.iter().map(|t| t.name.clone()).collect(),
        extensions: Vec::new(),
    }
}

/// Prompt templates and skills as `/` menu entries.
fn menu_commands(loader: &DefaultResourceLoader) -> Vec<(String, String)> {
    let Ok(r) = loader.resources() else { return Vec::new() };
    let templates = r.prompt_templates.iter().map(|t| (t.name.clone(), t.description.clone()));
    let skills = r.skills.iter().map(|s| (format!("skill:{}", s.name), s.description.clone()));
    templates.chain(skills).collect()
}
