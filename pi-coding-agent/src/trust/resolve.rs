//! Deciding whether a project is trusted (pi's `resolveProjectTrusted`), the startup question,
//! the `project_trust` extension event and the `/trust` command.

use std::path::Path;

use async_trait::async_trait;

use super::TrustError;
use super::resources::has_trust_requiring_project_resources;
use super::store::{ProjectTrustStore, TrustEntry, TrustUpdate, normalize_cwd};
use crate::settings::Settings;
use crate::ui::{DialogOptions, UiHost};

/// The global `defaultProjectTrust` setting: what happens when nothing else decides.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DefaultProjectTrust {
    /// `"ask"` (the default): ask in the interactive mode, skip project resources elsewhere.
    #[default]
    Ask,
    /// `"always"`: trust.
    Always,
    /// `"never"`: do not trust.
    Never,
}

impl DefaultProjectTrust {
    /// pi's `getDefaultProjectTrust`: from the global settings only; anything but `"always"` or
    /// `"never"` is `"ask"`.
    pub fn from_global_settings(global: &Settings) -> Self {
        match global.get("defaultProjectTrust").and_then(|v| v.as_str()) {
            Some("always") => DefaultProjectTrust::Always,
            Some("never") => DefaultProjectTrust::Never,
            _ => DefaultProjectTrust::Ask,
        }
    }

    /// Reads `<agent_dir>/settings.json` (a broken or missing file gives `"ask"`).
    pub fn load(agent_dir: &Path) -> Self {
        Settings::load_file(agent_dir.join("settings.json")).map(|s| Self::from_global_settings(&s)).unwrap_or_default()
    }

    /// The setting's value.
    pub fn as_str(self) -> &'static str {
        match self {
            DefaultProjectTrust::Ask => "ask",
            DefaultProjectTrust::Always => "always",
            DefaultProjectTrust::Never => "never",
        }
    }
}

/// One answer of the trust question or the `/trust` selector (pi's `ProjectTrustOption`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustOption {
    /// What the user sees.
    pub label: String,
    /// Whether choosing it trusts the project for this run.
    pub trusted: bool,
    /// What it writes to the trust store (nothing for "this session only").
    pub updates: Vec<TrustUpdate>,
    /// The directory whose saved decision it represents.
    pub saved_path: Option<String>,
}

/// pi's `getProjectTrustOptions`: Trust, Trust parent folder (unless at the root), then
/// Do not trust; with `include_session_only`, the two "(this session only)" answers too.
pub fn project_trust_options(cwd: &Path, include_session_only: bool) -> Vec<TrustOption> {
    let trust_path = normalize_cwd(cwd);
    let key = trust_path.display().to_string();
    let mut options = vec![TrustOption {
        label: "Trust".into(),
        trusted: true,
        updates: vec![TrustUpdate { path: trust_path.clone(), decision: Some(true) }],
        saved_path: Some(key.clone()),
    }];
    if let Some(parent) = trust_path.parent() {
        options.push(TrustOption {
            label: format!("Trust parent folder ({})", parent.display()),
            trusted: true,
            updates: vec![
                TrustUpdate { path: parent.to_path_buf(), decision: Some(true) },
                TrustUpdate { path: trust_path.clone(), decision: None },
            ],
            saved_path: Some(parent.display().to_string()),
        });
    }
    if include_session_only {
        options.push(TrustOption {
            label: "Trust (this session only)".into(),
            trusted: true,
            updates: Vec::new(),
            saved_path: None,
        });
    }
    options.push(TrustOption {
        label: "Do not trust".into(),
        trusted: false,
        updates: vec![TrustUpdate { path: trust_path, decision: Some(false) }],
        saved_path: Some(key),
    });
    if include_session_only {
        options.push(TrustOption {
            label: "Do not trust (this session only)".into(),
            trusted: false,
            updates: Vec::new(),
            saved_path: None,
        });
    }
    options
}

/// The title of the startup trust question (pi's `formatProjectTrustPrompt`).
pub fn project_trust_prompt(cwd: &Path) -> String {
    format!(
        "Trust project folder?\n{}\n\nThis allows pi to load .pi settings and resources, install missing project packages, and execute project extensions.",
        cwd.display()
    )
}

/// The warning the interactive mode shows for an untrusted project with protected resources.
pub const UNTRUSTED_PROJECT_WARNING: &str = "This project is not trusted. Project .pi resources and packages are ignored. Use /trust to save a trust decision, then restart pi.";

/// The `project_trust` event (pi's `ProjectTrustEvent`; its `type` is `"project_trust"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectTrustEvent {
    /// The directory being decided.
    pub cwd: String,
}

/// A `project_trust` handler's answer (pi's `ProjectTrustEventResult`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProjectTrustDecision {
    /// `"yes"`.
    Yes,
    /// `"no"`.
    No,
    /// `"undecided"`: the next handler decides.
    Undecided,
}

/// The result of a `project_trust` handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProjectTrustEventResult {
    /// The decision.
    pub trusted: ProjectTrustDecision,
    /// Save a yes/no in the trust store.
    pub remember: bool,
}

/// What a `project_trust` handler may use (pi's `ProjectTrustContext`).
pub struct ProjectTrustContext<'a> {
    /// The directory being decided.
    pub cwd: &'a Path,
    /// `"tui"`, `"print"`, `"json"` or `"rpc"`.
    pub mode: &'a str,
    /// Whether `ui` can ask the user (only at the interactive mode's startup).
    pub has_ui: bool,
    /// select, confirm, input and notify.
    pub ui: &'a dyn UiHost,
}

/// An extension handler that failed (reported as a warning, the next handler runs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectTrustHandlerError {
    /// The extension's path.
    pub extension_path: String,
    /// The error text.
    pub error: String,
}

/// The extensions loaded before trust is resolved (user, global and `-e` extensions), which may
/// answer `project_trust` (pi's `emitProjectTrustEvent`).
///
/// The extension runner implements it: handlers run in load order, the first `Yes` / `No`
/// wins, `Undecided` falls through and an error is collected and the next handler runs.
#[async_trait]
pub trait ProjectTrustHandlers: Send + Sync {
    /// Emits `project_trust`; `None` when no handler decided.
    async fn emit_project_trust(
        &self,
        event: &ProjectTrustEvent,
        ctx: &ProjectTrustContext<'_>,
    ) -> (Option<ProjectTrustEventResult>, Vec<ProjectTrustHandlerError>);
}

/// Everything [`resolve_project_trusted`] weighs.
pub struct ResolveTrustOptions<'a> {
    /// The directory being decided.
    pub cwd: &'a Path,
    /// The saved decisions.
    pub store: &'a ProjectTrustStore,
    /// `--approve` (`Some(true)`) / `--no-approve` (`Some(false)`).
    pub trust_override: Option<bool>,
    /// The global `defaultProjectTrust`.
    pub default_project_trust: DefaultProjectTrust,
    /// Extensions that may answer `project_trust`.
    pub handlers: Option<&'a dyn ProjectTrustHandlers>,
    /// `"tui"`, `"print"`, `"json"` or `"rpc"` (passed to handlers).
    pub mode: &'a str,
    /// The UI the startup question is asked through; asked only when `has_ui()` is true.
    pub ui: &'a dyn UiHost,
}

/// The decision and the warnings to report (failed `project_trust` handlers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustResolution {
    /// Whether project resources load.
    pub trusted: bool,
    /// `Extension "<path>" project_trust error: <error>` lines.
    pub warnings: Vec<String>,
}

/// pi's `resolveProjectTrusted`, in its order: the command-line override; a project without
/// protected resources is trusted unless a saved decision says otherwise; the first
/// extension that answers yes or no; the closest saved decision; `defaultProjectTrust`
/// (`always` / `never`); with `ask`, the question through `ui` when it has a UI (the answer
/// saved unless it was "this session only"), otherwise not trusted.
pub async fn resolve_project_trusted(opts: &ResolveTrustOptions<'_>) -> Result<TrustResolution, TrustError> {
    let mut warnings = Vec::new();
    let done = |trusted: bool, warnings: Vec<String>| Ok(TrustResolution { trusted, warnings });
    if let Some(trusted) = opts.trust_override {
        return done(trusted, warnings);
    }
    if !has_trust_requiring_project_resources(opts.cwd) {
        return done(opts.store.get(opts.cwd)?.unwrap_or(true), warnings);
    }
    if let Some(handlers) = opts.handlers {
        let event = ProjectTrustEvent { cwd: opts.cwd.display().to_string() };
        let ctx = ProjectTrustContext { cwd: opts.cwd, mode: opts.mode, has_ui: opts.ui.has_ui(), ui: opts.ui };
        let (result, errors) = handlers.emit_project_trust(&event, &ctx).await;
        for e in errors {
            warnings.push(format!("Extension \"{}\" project_trust error: {}", e.extension_path, e.error));
        }
        if let Some(result) = result {
            let trusted = result.trusted == ProjectTrustDecision::Yes;
            if result.remember {
                opts.store.set(opts.cwd, trusted)?;
            }
            return done(trusted, warnings);
        }
    }
    if let Some(decision) = opts.store.get(opts.cwd)? {
        return done(decision, warnings);
    }
    match opts.default_project_trust {
        DefaultProjectTrust::Always => return done(true, warnings),
        DefaultProjectTrust::Never => return done(false, warnings),
        DefaultProjectTrust::Ask => {}
    }
    if !opts.ui.has_ui() {
        return done(false, warnings);
    }
    let options = project_trust_options(opts.cwd, true);
    let labels: Vec<String> = options.iter().map(|o| o.label.clone()).collect();
    let selected = opts.ui.select(&project_trust_prompt(opts.cwd), &labels, DialogOptions::default()).await;
    match selected.and_then(|s| options.into_iter().find(|o| o.label == s)) {
        Some(option) => {
            if !option.updates.is_empty() {
                opts.store.set_many(&option.updates)?;
            }
            done(option.trusted, warnings)
        }
        None => done(false, warnings),
    }
}

/// The trust decision of a run without a UI and without extension handlers: `--approve` /
/// `--no-approve`, then the saved decision, then `defaultProjectTrust` from
/// `<agent_dir>/settings.json` (`ask` counts as no). A project without protected resources
/// is trusted unless a saved decision says otherwise.
///
/// This is the predicate other parts call (MCP servers, project extensions, packages) when
/// they were not handed the session's decision.
///
/// ```
/// use pi_coding_agent::trust::is_project_trusted;
/// let agent = tempfile::tempdir().unwrap();
/// let project = tempfile::tempdir().unwrap();
/// // Nothing protected: trusted.
/// assert!(is_project_trusted(agent.path(), project.path(), None).unwrap());
/// std::fs::create_dir_all(project.path().join(".pi/extensions")).unwrap();
/// assert!(!is_project_trusted(agent.path(), project.path(), None).unwrap());
/// assert!(is_project_trusted(agent.path(), project.path(), Some(true)).unwrap());
/// ```
pub fn is_project_trusted(agent_dir: &Path, cwd: &Path, trust_override: Option<bool>) -> Result<bool, TrustError> {
    if let Some(trusted) = trust_override {
        return Ok(trusted);
    }
    let store = ProjectTrustStore::new(agent_dir);
    if !has_trust_requiring_project_resources(cwd) {
        return Ok(store.get(cwd)?.unwrap_or(true));
    }
    if let Some(decision) = store.get(cwd)? {
        return Ok(decision);
    }
    Ok(DefaultProjectTrust::load(agent_dir) == DefaultProjectTrust::Always)
}

/// The startup decision of a mode without a UI (print, json, rpc) and without extension
/// handlers: [`resolve_project_trusted`] with the global `defaultProjectTrust` of `agent_dir`.
pub async fn startup_project_trusted(
    agent_dir: &Path,
    cwd: &Path,
    trust_override: Option<bool>,
) -> Result<TrustResolution, TrustError> {
    let store = ProjectTrustStore::new(agent_dir);
    let opts = ResolveTrustOptions {
        cwd,
        store: &store,
        trust_override,
        default_project_trust: DefaultProjectTrust::load(agent_dir),
        handlers: None,
        mode: "print",
        ui: &crate::ui::NoUi,
    };
    resolve_project_trusted(&opts).await
}

/// pi's implicit trust on `/reload`: a folder that had no protected resources at startup (so it
/// was trusted without a decision; the caller remembers that cwd, pi's `autoTrustOnReloadCwd`,
/// only when no `--approve` / `--no-approve` was given) and has some now (the session created
/// `.pi/skills`, say) gets `true` saved, unless a decision already applies. Returns whether it
/// saved; the caller then forgets the cwd (also when a decision already applied) and reports an
/// error as `Could not save project trust after reload: <error>`.
pub fn save_implicit_trust_after_reload(
    agent_dir: &Path,
    cwd: &Path,
    project_trusted: bool,
) -> Result<bool, TrustError> {
    if !project_trusted || !has_trust_requiring_project_resources(cwd) {
        return Ok(false);
    }
    let store = ProjectTrustStore::new(agent_dir);
    if store.get(cwd)?.is_some() {
        return Ok(false);
    }
    store.set(cwd, true)?;
    Ok(true)
}

/// What the `/trust` selector shows (pi's `TrustSelectorComponent`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustSelector {
    /// The project directory.
    pub cwd: String,
    /// Trust, Trust parent folder, Do not trust.
    pub options: Vec<TrustOption>,
    /// The saved decision that applies, if any.
    pub saved: Option<TrustEntry>,
    /// `Saved decision: …` line.
    pub saved_line: String,
    /// `Current session: trusted|untrusted` line.
    pub session_line: String,
    /// The option that matches the saved decision (marked with a check), else the first.
    pub selected_index: usize,
}

impl TrustSelector {
    /// Whether `option` is the saved decision (drawn with `✓`).
    pub fn is_saved_option(&self, option: &TrustOption) -> bool {
        match (&self.saved, &option.saved_path) {
            (Some(saved), Some(path)) => saved.decision == option.trusted && &saved.path == path,
            _ => false,
        }
    }
}

/// Builds the `/trust` selector for `cwd`; `project_trusted` is the current session's decision.
pub fn trust_selector(agent_dir: &Path, cwd: &Path, project_trusted: bool) -> Result<TrustSelector, TrustError> {
    let store = ProjectTrustStore::new(agent_dir);
    let saved = store.get_entry(cwd)?;
    let options = project_trust_options(cwd, false);
    let trust_path = options.first().and_then(|o| o.saved_path.clone());
    let saved_text = match &saved {
        None => "none".to_string(),
        Some(e) => {
            let label = if e.decision { "trusted" } else { "untrusted" };
            if trust_path.as_deref().is_some_and(|p| p != e.path) {
                format!("{label} (inherited from {})", e.path)
            } else {
                format!("{label} ({})", e.path)
            }
        }
    };
    let mut selector = TrustSelector {
        cwd: cwd.display().to_string(),
        options,
        saved,
        saved_line: format!("Saved decision: {saved_text}"),
        session_line: format!("Current session: {}", if project_trusted { "trusted" } else { "untrusted" }),
        selected_index: 0,
    };
    selector.selected_index = selector.options.iter().position(|o| selector.is_saved_option(o)).unwrap_or(0);
    Ok(selector)
}

/// Saves a `/trust` choice; returns the status line pi shows
/// (`Saved trust decision: trusted. Restart pi for this to take effect.`).
pub fn save_trust_selection(agent_dir: &Path, option: &TrustOption) -> Result<String, TrustError> {
    ProjectTrustStore::new(agent_dir).set_many(&option.updates)?;
    Ok(format!(
        "Saved trust decision: {}. Restart pi for this to take effect.",
        if option.trusted { "trusted" } else { "untrusted" }
    ))
}

/// The `/trust` command through a [`UiHost`]: shows the selector as a `select` (title: "Project
/// trust", the directory, the saved decision and the session's), saves the choice and returns
/// the status line; `None` when dismissed.
pub async fn run_trust_command(
    ui: &dyn UiHost,
    agent_dir: &Path,
    cwd: &Path,
    project_trusted: bool,
) -> Result<Option<String>, TrustError> {
    let selector = trust_selector(agent_dir, cwd, project_trusted)?;
    let title = format!("Project trust\n{}\n\n{}\n{}", selector.cwd, selector.saved_line, selector.session_line);
    let labels: Vec<String> = selector
        .options
        .iter()
        .map(|o| if selector.is_saved_option(o) { format!("✓ {}", o.label) } else { o.label.clone() })
        .collect();
    let Some(answer) = ui.select(&title, &labels, DialogOptions::default()).await else {
        return Ok(None);
    };
    let Some(index) = labels.iter().position(|l| *l == answer) else {
        return Ok(None);
    };
    save_trust_selection(agent_dir, &selector.options[index]).map(Some)
}
