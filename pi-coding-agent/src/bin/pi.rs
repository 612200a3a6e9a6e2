//! `pi`: the coding agent's command line (print, JSON and RPC modes of pi 1.6.0).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{IsTerminal, Read};
use std::path::PathBuf;

use anyhow::Result;
use pi_coding_agent::builtin_extensions::{BuiltinOptions, llama};
use pi_coding_agent::cli::args::{Args, ListModels, Mode, ParseSeverity, UnknownFlagValue};
use pi_coding_agent::cli::export_html::export_from_file;
use pi_coding_agent::cli::file_args::{build_initial_message, process_file_paths};
use pi_coding_agent::cli::list_models::render_model_list;
use pi_coding_agent::cli::logging::{LogTarget, init_logging};
use pi_coding_agent::cli::registry::CliRegistry;
use pi_coding_agent::cli::session_select::{SessionStop, choose_session, validate_session_flags};
use pi_coding_agent::cli::startup_model::{
    StartupModel, StartupModelInputs, StartupStop, choose_startup_model, prompt_auth_check,
};
use pi_coding_agent::cli::{HELP, VERSION, no_models_message};
use pi_coding_agent::extensions::FlagValue as ExtFlagValue;
use pi_coding_agent::modes::rpc::RpcContext;
use pi_coding_agent::modes::rpc_queries::SourceRoots;
use pi_coding_agent::modes::{EXIT_INTERRUPTED, interactive, json, print, rpc};
use pi_coding_agent::sdk::model_choice::{ExtensionModels, ModelResolver};
use pi_coding_agent::sdk::request_options::request_options_from_settings;
use pi_coding_agent::sdk::{
    CreateAgentSessionOptions, DefaultResourceLoader, NoTools, PromptOptions, SdkError, create_agent_session,
    load_extension_runner,
};
use pi_coding_agent::session::{expand_tilde, get_agent_dir, resolve_path};
use pi_coding_agent::settings::{SettingsManager, SettingsManagerOptions};

fn main() {
    // As the OS gave them: text that is not UTF-8 is decoded lossily, `@file` paths keep their bytes.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let text_argv: Vec<String> = argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    // pi runs its subcommands before parsing options; sending the word as a prompt would be wrong.
    if let Some(code) = pi_coding_agent::packages::run_package_command(&text_argv) {
        std::process::exit(code);
    }
    match text_argv.first().map(String::as_str) {
        Some("auth") => std::process::exit(pi_coding_agent::cli::auth_command::run(&text_argv, &get_agent_dir())),
        Some("mcp") => std::process::exit(pi_coding_agent::builtin_extensions::run_mcp_cli(&text_argv[1..])),
        _ => {}
    }
    let args = Args::parse_os(argv);
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
        Ok(rt) => {
            let code = rt.block_on(run(args)).unwrap_or_else(|e| {
                eprintln!("Error: {e:#}");
                1
            });
            // The answer and the session file are complete here (every mode awaited its writes).
            // Dropping the runtime would wait for each worker to finish what it is running, such
            // as a background catalog refresh waiting on a file lock; pi exits without it.
            rt.shutdown_background();
            code
        }
        Err(e) => {
            eprintln!("Error: {e}");
            1
        }
    };
    // Stdio MCP servers stop with pi even though `exit` skips the sessions' destructors.
    pi_coding_agent::mcp::client::kill_all_server_groups();
    std::process::exit(code);
}

/// Whether this run opens the interactive mode: no `--mode`, no `-p`, and a terminal on both
/// stdin and stdout (pi's `appMode === "interactive"`).
fn opens_interactive(args: &Args) -> bool {
    args.mode.is_none() && !args.print && std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
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

/// Says once, on stderr, what reading the session file skipped (torn or corrupt lines, a newer
/// format version, parent cycles), with the line numbers; stdout stays the mode's.
fn report_session_load_warnings(manager: &pi_coding_agent::session::SessionManager) {
    if let Some(summary) = pi_coding_agent::session::summarize_load_warnings(manager.load_warnings()) {
        let file = manager.session_file().map(|p| p.display().to_string()).unwrap_or_default();
        eprintln!("Warning: session file {file}: {summary}");
    }
}

/// Piped stdin as text; bytes that are not UTF-8 become U+FFFD, as Node's decoder does.
fn read_piped_stdin() -> std::io::Result<String> {
    let mut bytes = Vec::new();
    std::io::stdin().read_to_end(&mut bytes)?;
    Ok(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
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
        if d.kind == ParseSeverity::Warning {
            eprintln!("Warning: {}", d.message);
        }
    }
    if let Some(d) = args.diagnostics.iter().find(|d| d.kind == ParseSeverity::Error) {
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
    let log_target = match mode {
        Some(Mode::Json) => LogTarget::Stderr,
        Some(Mode::Rpc) => LogTarget::AgentDirFile,
        _ if args.print || !std::io::stdout().is_terminal() => LogTarget::Stderr,
        _ => LogTarget::AgentDirFile,
    };
    init_logging(log_target, &agent_dir);
    let project_trusted = match startup_trust(&args, mode, &cwd, &agent_dir).await {
        Ok(r) => {
            r.warnings.iter().for_each(|w| eprintln!("Warning: {w}"));
            r.trusted
        }
        Err(e) => return fail(&e.to_string()),
    };
    let settings_manager =
        std::sync::Arc::new(SettingsManager::create_with(&cwd, &agent_dir, SettingsManagerOptions { project_trusted }));
    for e in settings_manager.drain_errors() {
        eprintln!("Warning: {e}");
    }
    let settings = settings_manager.settings();
    let (registry, models_error) = CliRegistry::load(&agent_dir);
    if let Some(e) = models_error {
        eprintln!("Warning: errors loading models.json:\n{e}");
    }
    if let Some(list) = &args.list_models {
        return list_models(&args, list, &cwd, &agent_dir, project_trusted, &registry).await;
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
        // As pi: the project's sessionDir is read while choosing the session, before (and
        // whatever) the trust decision (docs/security.md).
        .or_else(|| {
            SettingsManager::create_with(&cwd, &agent_dir, SettingsManagerOptions { project_trusted: true })
                .settings()
                .session_dir()
        })
        .map(|d| expand_tilde(&d));
    // `pi --resume` in a terminal: the interactive mode opens pi's session picker first.
    let interactive = opens_interactive(&args);
    let resume_picker = args.resume && interactive;
    if resume_picker {
        args.resume = false;
    }
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
    report_session_load_warnings(&session_manager);
    if let Some(name) = &args.name {
        let name = name.trim();
        if name.is_empty() {
            return fail("--name requires a non-empty value");
        }
        session_manager.append_session_info(name)?;
    }
    let has_existing_session = session_manager.has_context_messages();

    // Model: chosen once the extensions are loaded (their models count), as pi's runtime does.
    let available: Vec<_> = registry.available_models().into_iter().cloned().collect();
    let startup_inputs = StartupModelInputs {
        registry: registry.clone(),
        provider: args.provider.clone(),
        model: args.model.clone(),
        thinking: args.thinking.clone(),
        inline_api_key: args.api_key.is_some(),
        patterns: args.models.clone().or_else(|| settings.enabled_models()),
        saved: settings.default_provider().zip(settings.default_model()).map(|(p, m)| (p.to_owned(), m.to_owned())),
        // The llama.cpp provider's stored catalog (the built-in extension registers it later).
        local_models: if args.no_extensions { Vec::new() } else { llama::startup_models(&agent_dir) },
        local_provider: (llama::LLAMA_PROVIDER_ID.to_owned(), llama::has_startup_auth(&agent_dir)),
        has_existing_session,
        opens_interactive: interactive,
    };
    let auth_check = prompt_auth_check(
        registry.clone(),
        args.api_key.is_some(),
        (startup_inputs.local_provider.0.clone(), startup_inputs.local_provider.1),
    );
    let startup_cell: StartupCell = Default::default();
    let cell = startup_cell.clone();
    let model_resolver: ModelResolver = Box::new(move |extension_models| {
        let outcome = choose_startup_model(&startup_inputs, extension_models);
        let choice = outcome.as_ref().map(|s| s.choice.clone()).map_err(|_| SdkError::NoModel);
        *cell.lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
        choice
    });

    // Input.
    let stdin_text = if mode != Some(Mode::Rpc) && !std::io::stdin().is_terminal() {
        let s = read_piped_stdin()?;
        let t = s.trim().to_owned();
        (!t.is_empty()).then_some(t)
    } else {
        None
    };
    let files = match process_file_paths(&args.file_arg_paths, &cwd).await {
        Ok(f) => f,
        Err(e) => return fail(&e.to_string()),
    };
    let initial = build_initial_message(stdin_text.as_deref(), &files.text, &mut args.messages);

    // Tools: pi's selection rules, applied by the SDK to built-in and extension tools alike.
    let no_tools = if args.no_tools {
        Some(NoTools::All)
    } else if args.no_builtin_tools {
        Some(NoTools::Builtin)
    } else {
        None
    };

    let mut loader = DefaultResourceLoader::new(&cwd, &agent_dir);
    loader.no_context_files = args.no_context_files;
    loader.project_trusted = project_trusted;
    loader.no_extensions = args.no_extensions;
    if let Some(code) = add_extension_paths(&mut loader, &args, &cwd) {
        return Ok(code);
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
    for w in &loader.resources()?.package_warnings {
        eprintln!("Warning: {w}");
    }
    // Timeouts and provider retries from the settings (pi's `buildRequestOptions`).
    let stream_options = request_options_from_settings(
        &settings,
        pi_ai::options::StreamOptions { api_key: args.api_key.clone(), ..Default::default() },
    );
    let startup = interactive.then(|| startup_resources(&loader, &cwd));
    let menu = if interactive { menu_commands(&loader) } else { Vec::new() };
    let created = create_agent_session(CreateAgentSessionOptions {
        cwd: Some(cwd.clone()),
        agent_dir: Some(agent_dir.clone()),
        model_resolver: Some(model_resolver),
        tools: args.tools.clone(),
        no_tools,
        exclude_tools: args.exclude_tools.clone(),
        resource_loader: Some(loader),
        session_manager: Some(session_manager),
        stream_fn: Some(registry.stream_fn()),
        stream_options,
        // What /resume and /fork may restore: the models with auth, as pi's model runtime.
        models: available.clone(),
        // pi's automatic compaction, auto-retry, shell and queue modes, as settings.json says.
        settings_manager: Some(settings_manager),
        // Built-in extensions (MCP unless --no-mcp).
        extensions: pi_coding_agent::builtin_extensions::cli_extensions(&BuiltinOptions {
            agent_dir: agent_dir.clone(),
            no_mcp: args.no_mcp,
            // The startup decision (override, extensions, store, default), as for every project resource.
            project_trusted: Some(project_trusted),
            tools: args.tools.clone(),
            exclude_tools: args.exclude_tools.clone(),
            default_tools: settings.default_tools(),
            codemode_inline_budget: Some(settings.codemode_inline_budget()),
            codemode_only: settings.codemode_mode() == "only",
            // pi refreshes network catalogs only in the interactive and RPC modes.
            one_shot: !interactive && mode != Some(Mode::Rpc),
            codemode_models: codemode_models(
                registry.registry().shared_models(),
                available.clone(),
                registry.registry().clone(),
                agent_dir.clone(),
            ),
        }),
        ..Default::default()
    })
    .await;
    let chosen = startup_cell.lock().unwrap_or_else(|e| e.into_inner()).take();
    let (created, chosen) = match (created, chosen) {
        (_, Some(Err(stop))) => return Ok(report_stop(stop)),
        (Ok(created), Some(Ok(chosen))) => (created, chosen),
        (Err(e), _) => return Err(e.into()),
        (Ok(_), None) => return fail("No model was chosen"),
    };
    for w in &chosen.warnings {
        eprintln!("Warning: {w}");
    }
    let mut startup_warnings = chosen.startup_warnings.clone();
    let session = created.session;
    // pi checks the model's credentials when a prompt is about to be sent, not at startup: an
    // extension's command runs without them.
    session.set_prompt_auth_check(auth_check);
    // pi's "Could not restore model p/m. Using p2/m2", a startup diagnostic in every mode.
    if let Some(message) = session.model_fallback_message() {
        if interactive {
            startup_warnings.push(message);
        } else {
            eprintln!("Warning: {message}");
        }
    }
    let scope = chosen.scope.clone();
    let available = chosen.available.clone();
    session.bind_extensions(|_| {}).await;
    if let Some(runner) = session.extension_runner() {
        let errors = runner.load_errors();
        // pi's diagnostics of provider registrations it rejected while the extensions loaded
        // (its `services.diagnostics`, before the load errors): errors, so pi stops too.
        let provider_errors = runner.provider_errors();
        for e in &provider_errors {
            eprintln!("Error: Extension \"{}\" error: {}", e.path, e.error);
        }
        for e in errors {
            eprintln!("Error: Failed to load extension \"{}\": {}", e.path, e.error);
        }
        if !errors.is_empty() {
            eprintln!("{EXTENSION_LOAD_FAILURE_HINT}");
        }
        if !errors.is_empty() || !provider_errors.is_empty() {
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
                    UnknownFlagValue::Value(v) => ExtFlagValue::String(v.clone()),
                    UnknownFlagValue::Bool => return fail(&format!("Extension flag \"--{name}\" requires a value")),
                };
                runner.set_flag_value(name, value);
            }
        }
    }

    if mode == Some(Mode::Rpc) {
        let ctx = RpcContext {
            available_models: available.clone(),
            scoped_models: scope.models.clone(),
            roots: SourceRoots { cwd: cwd.clone(), agent_dir: agent_dir.clone() },
        };
        let rpc_session = session.clone();
        // The loop reads stdin until it closes: on a signal it is not waited for.
        return Ok(run_until_signal(&session, rpc::run_rpc(rpc_session, ctx), false).await);
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
            warnings: startup_warnings,
            version: VERSION.to_owned(),
            color_mode: None,
            commands: menu,
            hide_thinking: settings.get("hideThinkingBlock").and_then(|v| v.as_bool()).unwrap_or(false),
            resume_picker,
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
    Ok(run_until_signal(&session, run, true).await)
}

/// The signals that stop pi and their exit statuses (128 + the signal number, as Node exits).
#[cfg(unix)]
async fn stop_signal() -> i32 {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut hup)) = (signal(SignalKind::terminate()), signal(SignalKind::hangup())) else {
        // Without handlers the default actions apply; only Ctrl-C is caught.
        let _ = tokio::signal::ctrl_c().await;
        return EXIT_INTERRUPTED;
    };
    tokio::select! {
        _ = term.recv() => EXIT_TERMINATED,
        _ = hup.recv() => EXIT_HANGUP,
        _ = tokio::signal::ctrl_c() => EXIT_INTERRUPTED,
    }
}

#[cfg(not(unix))]
async fn stop_signal() -> i32 {
    let _ = tokio::signal::ctrl_c().await;
    EXIT_INTERRUPTED
}

/// Exit status after SIGTERM (128 + 15), as pi.
const EXIT_TERMINATED: i32 = 143;
/// Exit status after SIGHUP (128 + 1), as pi.
const EXIT_HANGUP: i32 = 129;

/// Runs a mode until it ends or a signal stops pi. On SIGINT, SIGTERM or SIGHUP the process
/// groups of running shell commands (bash tool calls, user `!` commands, their children) are
/// killed at once, as pi's `killTrackedDetachedChildren`. SIGINT then exits at once (the session
/// keeps what was written, as pi's handler); SIGTERM and SIGHUP abort the run and wait for it to
/// write its last entry (a second signal exits at once), as pi's `disposeRuntime`. Session
/// entries are synced as they are written, so nothing is left to flush.
/// `wait_for_run`: the mode ends by itself once its run is aborted (print, json).
/// pi's startup trust decision: `project_trust` handlers of the project-independent extensions,
/// then the saved decision, `defaultProjectTrust` and, in the interactive mode, the question.
async fn startup_trust(
    args: &Args,
    mode: Option<Mode>,
    cwd: &std::path::Path,
    agent_dir: &std::path::Path,
) -> Result<pi_coding_agent::trust::TrustResolution, pi_coding_agent::trust::TrustError> {
    let sources: Vec<PathBuf> = args
        .extensions
        .iter()
        .map(|e| {
            if pi_coding_agent::packages::is_local_path(e) {
                resolve_path(cwd.join(expand_tilde(e)))
            } else {
                PathBuf::from(e.trim())
            }
        })
        .collect();
    let interactive = opens_interactive(args);
    let ui: std::sync::Arc<dyn pi_coding_agent::ui::UiHost> = if interactive {
        let theme = SettingsManager::create_with(cwd, agent_dir, SettingsManagerOptions { project_trusted: false })
            .settings()
            .theme()
            .map(str::to_owned);
        std::sync::Arc::new(pi_coding_agent::modes::interactive::StartupUi::new(
            agent_dir.to_path_buf(),
            cwd.display().to_string(),
            theme,
        ))
    } else {
        std::sync::Arc::new(pi_coding_agent::ui::NoUi)
    };
    let trust_mode = match mode {
        Some(Mode::Json) => "json",
        Some(Mode::Rpc) => "rpc",
        _ if interactive => "tui",
        _ => "print",
    };
    let options = pi_coding_agent::trust::StartupTrustOptions {
        trust_override: args.project_trust_override,
        extension_sources: &sources,
        no_extensions: args.no_extensions,
        mode: trust_mode,
        ui,
    };
    pi_coding_agent::trust::startup_project_trust(agent_dir, cwd, options).await
}

async fn run_until_signal(
    session: &pi_coding_agent::sdk::AgentSession,
    run: impl std::future::Future<Output = i32>,
    wait_for_run: bool,
) -> i32 {
    let mut run = std::pin::pin!(run);
    let code = tokio::select! {
        code = &mut run => return code,
        code = stop_signal() => code,
    };
    pi_coding_agent::tools::bash::kill_tracked_process_groups();
    if code == EXIT_INTERRUPTED {
        return code;
    }
    session.request_abort();
    session.abort_bash();
    let finish = async {
        if wait_for_run {
            run.await;
        }
        session.dispose().await;
    };
    tokio::select! {
        _ = finish => {}
        _ = stop_signal() => {}
    }
    pi_coding_agent::tools::bash::kill_tracked_process_groups();
    code
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

/// codemode's `models.*` catalog, turned into pi's JSON only when a script first asks: the chat
/// models, the registry's classifier and image models (pi-ai's and the llama.cpp provider's
/// stored classifiers; available when their provider has credentials), and the credentials
/// `classify()` / `generateImages()` run with.
fn codemode_models(
    all: std::sync::Arc<pi_ai::registry::Models>,
    available: Vec<pi_ai::Model>,
    registry: pi_coding_agent::auth::ModelRegistry,
    agent_dir: PathBuf,
) -> pi_coding_agent::builtin_extensions::codemode::LazyModelCatalog {
    use pi_coding_agent::auth::typed_models::TypedModels;
    use pi_coding_agent::builtin_extensions::codemode::{LazyModelCatalog, ModelCatalog};
    use pi_coding_agent::builtin_extensions::llama::LLAMA_PROVIDER_ID;
    let (lookup, llama_dir) = (registry.clone(), agent_dir.clone());
    LazyModelCatalog::new(move || {
        let openai_oauth = matches!(registry.auth_storage().get("openai"),
            Ok(Some(c)) if c.kind() == pi_coding_agent::auth::CredentialType::OAuth);
        let configured = |p: &str| match p {
            LLAMA_PROVIDER_ID => llama_key(&agent_dir).is_some(),
            _ => registry.has_configured_auth(p),
        };
        let typed = TypedModels::load(&agent_dir, configured, openai_oauth);
        ModelCatalog {
            all: all.get_models(None).iter().filter_map(|m| serde_json::to_value(m).ok()).chain(typed.all).collect(),
            available: available.iter().filter_map(|m| serde_json::to_value(m).ok()).chain(typed.available).collect(),
        }
    })
    .with_auth(std::sync::Arc::new(move |provider: &str| match provider {
        LLAMA_PROVIDER_ID => Ok(llama_key(&llama_dir).map(pi_ai::models::ResolvedAuth::key)),
        _ => lookup.resolve(provider).map_err(|e| e.to_string()),
    }))
}

/// The llama.cpp provider's key (pi's `auth.apiKey.resolve`): the credential's, else
/// `LLAMA_API_KEY`, else `local`; `None` while no server is configured.
fn llama_key(agent_dir: &std::path::Path) -> Option<String> {
    use pi_coding_agent::builtin_extensions::llama::provider as llama;
    let credential = llama::stored_credential(agent_dir);
    llama::resolve_auth(credential.as_ref(), &llama::process_env).map(|a| a.api_key)
}

/// The startup model choice, taken from the resolver after the session was created.
type StartupCell = std::sync::Arc<std::sync::Mutex<Option<Result<StartupModel, StartupStop>>>>;

/// Prints why pi stops before the session starts; the exit status.
fn report_stop(stop: StartupStop) -> i32 {
    let StartupStop::Fail(message) = stop;
    eprintln!("Error: {message}");
    1
}

/// `-e` paths: resolved against the cwd, loaded even with --no-extensions, as pi's. A local path
/// that does not exist stops pi (the exit status).
fn add_extension_paths(loader: &mut DefaultResourceLoader, args: &Args, cwd: &std::path::Path) -> Option<i32> {
    for e in &args.extensions {
        // npm / git sources are installed for the run by the package resolver (pi's temporary scope).
        if !pi_coding_agent::packages::is_local_path(e) {
            loader.additional_extension_paths.push(PathBuf::from(e.trim()));
            continue;
        }
        let path = resolve_path(cwd.join(expand_tilde(e)));
        if !path.exists() {
            eprintln!(
                "Error: Failed to load extension \"{}\": Extension path does not exist: {}",
                path.display(),
                path.display()
            );
            eprintln!("{EXTENSION_LOAD_FAILURE_HINT}");
            return Some(1);
        }
        loader.additional_extension_paths.push(path);
    }
    None
}

/// `--list-models [search]`: the models with credentials, those extensions register included
/// (pi lists them after loading the extensions; load errors are reported, the list follows).
async fn list_models(
    args: &Args,
    list: &ListModels,
    cwd: &std::path::Path,
    agent_dir: &std::path::Path,
    project_trusted: bool,
    registry: &CliRegistry,
) -> Result<i32> {
    let mut loader = DefaultResourceLoader::new(cwd, agent_dir);
    loader.project_trusted = project_trusted;
    loader.no_extensions = args.no_extensions;
    loader.no_skills = true;
    loader.no_prompt_templates = true;
    loader.no_context_files = true;
    if let Some(code) = add_extension_paths(&mut loader, args, cwd) {
        return Ok(code);
    }
    loader.reload().await?;
    let runner = load_extension_runner(&loader, cwd).await?;
    if let Some(runner) = &runner {
        runner.set_agent_dir(agent_dir.to_path_buf());
    }
    let extension = runner.as_deref().map(ExtensionModels::of).unwrap_or_default();
    // pi's diagnostics: rejected provider registrations, then load errors.
    for e in runner.as_deref().map(|r| r.provider_errors()).unwrap_or_default() {
        eprintln!("Error: Extension \"{}\" error: {}", e.path, e.error);
    }
    for e in runner.as_deref().map(|r| r.load_errors()).unwrap_or_default() {
        eprintln!("Error: Failed to load extension \"{}\": {}", e.path, e.error);
    }
    // The built-in llama.cpp extension's provider lists its stored catalog (pi restores it at
    // startup; `--no-extensions` and `-builtin:llama.cpp` leave it out).
    let llama_enabled = !args.no_extensions
        && pi_coding_agent::packages::builtin_extension_enabled(
            cwd,
            agent_dir,
            project_trusted,
            llama::LLAMA_EXTENSION_NAME,
        );
    let llama_models = if llama_enabled { llama::startup_models(agent_dir) } else { Vec::new() };
    let mut available: Vec<&pi_ai::Model> = registry
        .available_models()
        .into_iter()
        .chain(llama_models.iter())
        .filter(|m| !extension.all.iter().any(|e| e.provider == m.provider && e.id == m.id))
        .collect();
    available.extend(extension.available.iter());
    if available.is_empty() {
        println!("{}", no_models_message());
        return Ok(0);
    }
    let search = match list {
        ListModels::All => None,
        ListModels::Search(s) => Some(s.as_str()),
    };
    print!("{}", render_model_list(&available, search));
    Ok(0)
}
