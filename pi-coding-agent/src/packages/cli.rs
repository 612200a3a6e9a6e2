//! `pi install | remove | uninstall | update | list | config`, as pi's `package-manager-cli`:
//! the same options, usage lines, messages and exit codes.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::IsTerminal;
use std::path::Path;

use super::manager::{PackageManager, Progress, is_offline};
use super::settings_file::Scope;
use crate::trust::ProjectTrustStore;
use crate::ui::NoUi;

/// chalk's colours, only when stdout is a terminal.
fn paint(code: (u8, u8), text: &str) -> String {
    if std::io::stdout().is_terminal() { format!("\x1b[{}m{text}\x1b[{}m", code.0, code.1) } else { text.to_string() }
}
const DIM: (u8, u8) = (2, 22);
const BOLD: (u8, u8) = (1, 22);
const RED: (u8, u8) = (31, 39);
const GREEN: (u8, u8) = (32, 39);
const YELLOW: (u8, u8) = (33, 39);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Command {
    Install,
    Remove,
    Update,
    List,
}

fn usage(command: Command) -> &'static str {
    match command {
        Command::Install => "pi install <source> [-l] [--approve|--no-approve]",
        Command::Remove => "pi remove <source> [-l] [--approve|--no-approve]",
        Command::Update => {
            "pi update [source|self|pi] [--self|--extensions|--models|--all] [--extension <source>] [--approve|--no-approve] [--force]"
        }
        Command::List => "pi list [--approve|--no-approve]",
    }
}

const CONFIG_USAGE: &str = "pi config [-l] [--approve|--no-approve]";

fn help(command: Command) -> String {
    let b = paint(BOLD, "Usage:");
    match command {
        Command::Install => format!(
            "{b}\n  {}\n\nInstall a package and add it to settings.\n\nOptions:\n  -l, --local       Install project-locally (.pi/settings.json)\n  -a, --approve     Trust project-local files for this command\n  -na, --no-approve Ignore project-local files for this command\n\nExamples:\n  pi install npm:@foo/bar\n  pi install git:github.com/user/repo\n  pi install git:git@github.com:user/repo\n  pi install https://github.com/user/repo\n  pi install ssh://git@github.com/user/repo\n  pi install ./local/path\n",
            usage(command)
        ),
        Command::Remove => format!(
            "{b}\n  {}\n\nRemove a package and its source from settings.\nAlias: pi uninstall <source> [-l]\n\nOptions:\n  -l, --local       Remove from project settings (.pi/settings.json)\n  -a, --approve     Trust project-local files for this command\n  -na, --no-approve Ignore project-local files for this command\n\nExamples:\n  pi remove npm:@foo/bar\n  pi uninstall npm:@foo/bar\n",
            usage(command)
        ),
        Command::Update => format!(
            "{b}\n  {}\n\nUpdate installed packages.\n\nOptions:\n  --extensions            Update installed packages only\n  --extension <source>    Update one package only\n  -a, --approve           Trust project-local files for this command\n  -na, --no-approve       Ignore project-local files for this command\n\nShort forms:\n  pi update --extensions    Update all extensions\n  pi update <source>       Update one package\n\nUpdating pi itself (--self, --all, pi, self) and model catalogs (--models) is not available in this port.\n",
            usage(command)
        ),
        Command::List => format!(
            "{b}\n  {}\n\nList installed packages from user and project settings.\n\nOptions:\n  -a, --approve      Trust project-local files for this command\n  -na, --no-approve  Ignore project-local files for this command\n",
            usage(command)
        ),
    }
}

/// What `pi update` was asked to update.
#[derive(Clone, Debug, PartialEq, Eq)]
enum UpdateTarget {
    SelfOnly,
    Extensions(Option<String>),
    All,
    Models,
}

#[derive(Default, Debug)]
struct Parsed {
    source: Option<String>,
    local: bool,
    trust_override: Option<bool>,
    help: bool,
    force: bool,
    invalid_option: Option<String>,
    invalid_argument: Option<String>,
    missing_value: Option<String>,
    conflict: Option<String>,
    flags: [bool; 4],
    extension: Option<String>,
}

fn parse(command: Command, rest: &[String]) -> Parsed {
    let mut p = Parsed::default();
    let mut i = 0;
    while i < rest.len() {
        let arg = rest[i].as_str();
        let update = command == Command::Update;
        let invalid = |p: &mut Parsed| {
            p.invalid_option.get_or_insert_with(|| arg.to_string());
        };
        match arg {
            "-h" | "--help" => p.help = true,
            "-l" | "--local" if matches!(command, Command::Install | Command::Remove) => p.local = true,
            "--self" if update => p.flags[0] = true,
            "--extensions" if update => p.flags[1] = true,
            "--models" if update => p.flags[2] = true,
            "--all" if update => p.flags[3] = true,
            "--force" if update => p.force = true,
            "--approve" | "-a" => p.trust_override = Some(true),
            "--no-approve" | "-na" => p.trust_override = Some(false),
            "--extension" if update => match rest.get(i + 1) {
                Some(v) if !v.starts_with('-') => {
                    if p.extension.is_some() {
                        p.conflict.get_or_insert_with(|| "--extension can only be provided once".into());
                    } else {
                        p.extension = Some(v.clone());
                    }
                    i += 1;
                }
                _ => {
                    p.missing_value.get_or_insert_with(|| arg.to_string());
                }
            },
            a if a.starts_with('-') => invalid(&mut p),
            a => {
                if p.source.is_none() {
                    p.source = Some(a.to_string());
                } else {
                    p.invalid_argument.get_or_insert_with(|| a.to_string());
                }
            }
        }
        i += 1;
    }
    p
}

fn update_target(p: &mut Parsed) -> UpdateTarget {
    let [self_flag, ext_flag, models, all] = p.flags;
    let mut conflict = |m: &str| {
        p.conflict.get_or_insert_with(|| m.to_string());
    };
    if all && (self_flag || ext_flag || models || p.extension.is_some()) {
        conflict("--all cannot be combined with --self, --extensions, --models, or --extension");
    }
    if all && p.source.is_some() {
        conflict("--all cannot be combined with a positional source");
    }
    if models {
        if self_flag || ext_flag || all || p.extension.is_some() {
            conflict("--models cannot be combined with --self, --extensions, --all, or --extension");
        }
        if p.source.is_some() {
            conflict("--models cannot be combined with a positional source");
        }
        return UpdateTarget::Models;
    }
    if let Some(ext) = p.extension.clone() {
        if self_flag || ext_flag || all {
            conflict("--extension cannot be combined with --self, --extensions, or --all");
        }
        if p.source.is_some() {
            conflict("--extension cannot be combined with a positional source");
        }
        return UpdateTarget::Extensions(Some(ext));
    }
    if let Some(source) = p.source.clone() {
        if source == "self" || source == "pi" {
            return if ext_flag { UpdateTarget::All } else { UpdateTarget::SelfOnly };
        }
        if ext_flag || self_flag || all {
            conflict("positional update targets cannot be combined with --self, --extensions, or --all");
        }
        return UpdateTarget::Extensions(Some(source));
    }
    match (all, self_flag, ext_flag) {
        (true, _, _) | (_, true, true) => UpdateTarget::All,
        (_, true, false) => UpdateTarget::SelfOnly,
        (_, false, true) => UpdateTarget::Extensions(None),
        _ => UpdateTarget::SelfOnly,
    }
}

fn error(line: &str) {
    eprintln!("{}", paint(RED, line));
}

/// Runs a package subcommand if `argv` (the arguments after `pi`) starts with one; `None`
/// otherwise. Returns the exit code.
pub fn run_package_command(argv: &[String]) -> Option<i32> {
    let (first, rest) = argv.split_first()?;
    let command = match first.as_str() {
        "install" => Command::Install,
        "remove" | "uninstall" => Command::Remove,
        "update" => Command::Update,
        "list" => Command::List,
        "config" => return Some(run_config(rest)),
        _ => return None,
    };
    Some(run(command, rest))
}

fn command_trust(cwd: &Path, agent_dir: &Path, trust_override: Option<bool>, saved_only: bool) -> Result<bool, String> {
    let store = ProjectTrustStore::new(agent_dir);
    if saved_only {
        return match trust_override {
            Some(t) => Ok(t),
            None => store.get(cwd).map(|d| d == Some(true)).map_err(|e| e.to_string()),
        };
    }
    // pi's `createCommandSettingsManager`: the project-independent extensions answer
    // `project_trust` first; their warnings are reported in yellow.
    let options = crate::trust::StartupTrustOptions {
        trust_override,
        extension_sources: &[],
        no_extensions: false,
        mode: "print",
        ui: std::sync::Arc::new(NoUi),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let resolution =
        rt.block_on(crate::trust::startup_project_trust(agent_dir, cwd, options)).map_err(|e| e.to_string())?;
    for w in &resolution.warnings {
        eprintln!("{}", paint(YELLOW, &format!("Warning: {w}")));
    }
    Ok(resolution.trusted)
}

fn run(command: Command, rest: &[String]) -> i32 {
    let mut p = parse(command, rest);
    let target = (command == Command::Update).then(|| update_target(&mut p));
    if p.help {
        print!("{}", help(command));
        println!();
        return 0;
    }
    let fail_usage = |line: String, prefix: &str, suffix: &str| {
        error(&line);
        eprintln!("{}", paint(DIM, &format!("{prefix}{}{suffix}", usage(command))));
        1
    };
    if let Some(o) = &p.invalid_option {
        let line = format!("Unknown option {o} for \"{}\".", command_name(command));
        return fail_usage(line, "Use \"pi --help\" or \"", "\".");
    }
    if let Some(o) = &p.missing_value {
        return fail_usage(format!("Missing value for {o}."), "Usage: ", "");
    }
    if let Some(a) = &p.invalid_argument {
        return fail_usage(format!("Unexpected argument {a}."), "Usage: ", "");
    }
    if let Some(c) = &p.conflict {
        return fail_usage(c.clone(), "Usage: ", "");
    }
    if matches!(command, Command::Install | Command::Remove) && p.source.is_none() {
        return fail_usage(format!("Missing {} source.", command_name(command)), "Usage: ", "");
    }
    if target == Some(UpdateTarget::Models) {
        error("Error: pi update --models is not available in this port (model catalogs are not refreshed)");
        return 1;
    }
    let cwd = match std::env::current_dir() {
        Ok(c) => c,
        Err(e) => {
            error(&format!("Error: {e}"));
            return 1;
        }
    };
    let agent_dir = crate::session::get_agent_dir();
    let trusted = match command_trust(&cwd, &agent_dir, p.trust_override, command == Command::Update) {
        Ok(t) => t,
        Err(e) => {
            error(&format!("Error: {e}"));
            return 1;
        }
    };
    let scope = if p.local { Scope::Project } else { Scope::User };
    if !trusted && p.local {
        error("Project is not trusted. Use --approve to modify local package config.");
        return 1;
    }
    let mut pm = match PackageManager::new(&cwd, &agent_dir, trusted) {
        Ok(pm) => pm,
        Err(e) => {
            error(&format!("Error: {e}"));
            return 1;
        }
    };
    let updated = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = updated.clone();
    pm.set_progress(move |p| match p {
        Progress::Start(m) => println!("{}", paint(DIM, &m)),
        Progress::Warning(m) => println!("{}", paint(YELLOW, &m)),
        Progress::Updated(m) => sink.lock().unwrap_or_else(|e| e.into_inner()).push(m),
    });
    let source = p.source.clone().unwrap_or_default();
    let result = match command {
        Command::Install => pm.install(&source, scope).and_then(|_| pm.add_to_settings(&source, scope)).map(|_| {
            println!("{}", paint(GREEN, &format!("Installed {source}")));
            0
        }),
        Command::Remove => {
            pm.remove(&source, scope).and_then(|_| pm.remove_from_settings(&source, scope)).map(|removed| {
                if removed {
                    println!("{}", paint(GREEN, &format!("Removed {source}")));
                    0
                } else {
                    error(&format!("No matching package found for {source}"));
                    1
                }
            })
        }
        Command::List => {
            print_list(&pm);
            Ok(0)
        }
        Command::Update => return run_update(&mut pm, target.unwrap_or(UpdateTarget::SelfOnly), &updated),
    };
    result.unwrap_or_else(|e| {
        error(&format!("Error: {e}"));
        1
    })
}

fn command_name(command: Command) -> &'static str {
    match command {
        Command::Install => "install",
        Command::Remove => "remove",
        Command::Update => "update",
        Command::List => "list",
    }
}

fn print_list(pm: &PackageManager) {
    let all = pm.list();
    if all.is_empty() {
        println!("{}", paint(DIM, "No packages installed."));
        return;
    }
    let user: Vec<_> = all.iter().filter(|p| p.scope == Scope::User).collect();
    let project: Vec<_> = all.iter().filter(|p| p.scope == Scope::Project).collect();
    let show = |p: &super::manager::ConfiguredPackage| {
        let display = if p.filtered { format!("{} (filtered)", p.source) } else { p.source.clone() };
        println!("  {display}");
        if let Some(path) = &p.installed_path {
            println!("{}", paint(DIM, &format!("    {}", path.display())));
        }
    };
    if !user.is_empty() {
        println!("{}", paint(BOLD, "User packages:"));
        user.into_iter().for_each(show);
    }
    if !project.is_empty() {
        if all.iter().any(|p| p.scope == Scope::User) {
            println!();
        }
        println!("{}", paint(BOLD, "Project packages:"));
        project.into_iter().for_each(show);
    }
}

const SELF_UPDATE_REFUSAL: &str =
    "Error: pi cannot update itself in this port; rebuild or reinstall it (pi update --extensions updates packages)";

fn run_update(pm: &mut PackageManager, target: UpdateTarget, updated: &std::sync::Mutex<Vec<String>>) -> i32 {
    if target == UpdateTarget::SelfOnly {
        error(SELF_UPDATE_REFUSAL);
        return 1;
    }
    let source = match &target {
        UpdateTarget::Extensions(s) => s.clone(),
        _ => None,
    };
    if let Err(e) = pm.update(source.as_deref()) {
        error(&format!("Error: {e}"));
        return 1;
    }
    let updated = updated.lock().map(|u| u.clone()).unwrap_or_default();
    if is_offline() {
        println!("{}", paint(YELLOW, "Skipped package updates (offline mode)"));
    } else if updated.is_empty() {
        let line = match &source {
            Some(s) => format!("{s} is already up to date"),
            None => "Packages are already up to date".to_string(),
        };
        println!("{}", paint(GREEN, &line));
    } else {
        let n = updated.len();
        println!("{}", paint(GREEN, &format!("Updated {n} package{}:", if n == 1 { "" } else { "s" })));
        for m in &updated {
            println!("  {m}");
        }
    }
    if target == UpdateTarget::All {
        error(SELF_UPDATE_REFUSAL);
        return 1;
    }
    0
}

fn run_config(rest: &[String]) -> i32 {
    if rest.iter().any(|a| a == "-h" || a == "--help") {
        println!(
            "{}\n  {CONFIG_USAGE}\n\nOpen the resource configuration TUI to enable or disable package resources.\nWithout -l, starts in global settings (~/.pi/agent/settings.json).\nPress Tab in the TUI to switch between global and project-local modes.\n\nOptions:\n  -l, --local       Edit project overrides (.pi/settings.json)\n  -a, --approve     Trust project-local files for this command with -l\n  -na, --no-approve Ignore project-local files for this command with -l\n",
            paint(BOLD, "Usage:")
        );
        return 0;
    }
    for arg in rest {
        match arg.as_str() {
            "-l" | "--local" | "-a" | "--approve" | "-na" | "--no-approve" => {}
            a if a.starts_with('-') => {
                error(&format!("Unknown option {a} for \"config\"."));
                eprintln!("{}", paint(DIM, &format!("Use \"pi --help\" or \"{CONFIG_USAGE}\".")));
                return 1;
            }
            a => {
                error(&format!("Unexpected argument {a}."));
                eprintln!("{}", paint(DIM, &format!("Usage: {CONFIG_USAGE}")));
                return 1;
            }
        }
    }
    let local = rest.iter().any(|a| a == "-l" || a == "--local");
    let trust_override = rest.iter().rev().find_map(|a| match a.as_str() {
        "-a" | "--approve" => Some(true),
        "-na" | "--no-approve" => Some(false),
        _ => None,
    });
    let (cwd, agent_dir) = match (std::env::current_dir(), crate::session::get_agent_dir()) {
        (Ok(cwd), agent) => (cwd, agent),
        (Err(e), _) => {
            error(&format!("Error: {e}"));
            return 1;
        }
    };
    let trusted = match command_trust(&cwd, &agent_dir, trust_override, false) {
        Ok(t) => t,
        Err(e) => {
            error(&format!("Error: {e}"));
            return 1;
        }
    };
    if local && !trusted {
        error("Project is not trusted. Use --approve to modify local resource config.");
        return 1;
    }
    match run_config_screen(&cwd, &agent_dir, local, trusted) {
        Ok(()) => 0,
        Err(e) => {
            error(&format!("Error: {e}"));
            1
        }
    }
}

/// pi's `handleConfigCommand` after the checks: the global view (project untrusted) and the
/// project view, install warnings, then the screen in the theme the settings name.
fn run_config_screen(cwd: &Path, agent_dir: &Path, local: bool, trusted: bool) -> Result<(), super::PackageError> {
    use super::resolve::{ResolveOptions, resolve_resources};
    let options = ResolveOptions { install_missing: true, home_dir: None, command_output_to_stderr: true };
    let global = resolve_resources(cwd, agent_dir, false, &options);
    let project = if trusted { resolve_resources(cwd, agent_dir, true, &options) } else { global.clone() };
    let mut warnings: Vec<String> = Vec::new();
    for w in global.install_failures.iter().chain(&project.install_failures).map(|f| f.warning()) {
        if !warnings.contains(&w) {
            warnings.push(w);
        }
    }
    for w in warnings {
        eprintln!("{}", paint(YELLOW, &format!("Warning: {w}")));
    }
    let settings = crate::settings::SettingsManager::create(cwd, agent_dir).settings();
    let mode = pi_tui::ColorMode::detect();
    let theme = settings
        .theme()
        .and_then(|name| pi_tui::Theme::builtin(name, mode).ok())
        .or_else(|| pi_tui::Theme::dark(mode).ok())
        .ok_or_else(|| super::PackageError::Other("the built-in dark theme failed to load".into()))?;
    super::config_screen::run_config_screen(
        theme,
        cwd,
        agent_dir,
        super::config::config_groups(&global, agent_dir),
        super::config::config_groups(&project, agent_dir),
        local,
        trusted,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn update_targets_as_pi() {
        let mut p = parse(Command::Update, &args(&["--extensions"]));
        assert_eq!(update_target(&mut p), UpdateTarget::Extensions(None));
        let mut p = parse(Command::Update, &args(&["npm:foo"]));
        assert_eq!(update_target(&mut p), UpdateTarget::Extensions(Some("npm:foo".into())));
        let mut p = parse(Command::Update, &args(&["pi", "--extensions"]));
        assert_eq!(update_target(&mut p), UpdateTarget::All);
        let mut p = parse(Command::Update, &args(&["--all", "x"]));
        update_target(&mut p);
        assert_eq!(p.conflict.as_deref(), Some("--all cannot be combined with a positional source"));
        let p = parse(Command::List, &args(&["-l"]));
        assert_eq!(p.invalid_option.as_deref(), Some("-l"));
    }
}
