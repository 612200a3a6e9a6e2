//! Typed accessors of [`Settings`], one per key of pi's `settings.md`, with pi's defaults and
//! pi's rules for invalid values (`SettingsManager.get…()` of pi 1.6.0).

use std::path::PathBuf;

use pi_agent_core::QueueMode;
use serde_json::{Map, Value};

use super::{Settings, SettingsError, tools};
use crate::compaction::CompactionSettings;

/// Declares a string-valued setting as an enum with pi's spellings.
macro_rules! string_setting {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }
        impl $name {
            /// pi's spelling.
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $text),+ }
            }
            /// Reads pi's spelling.
            pub fn parse(text: &str) -> Option<Self> {
                match text { $($text => Some(Self::$variant),)+ _ => None }
            }
        }
    };
}

string_setting!(
    /// `transport`.
    Transport { /// `"auto"` (default).
    Auto = "auto", /// `"sse"`.
    Sse = "sse", /// `"websocket"`.
    Websocket = "websocket", /// `"websocket-cached"`.
    WebsocketCached = "websocket-cached" }
);
string_setting!(
    /// `sessionShareDestination`.
    ShareDestination { /// `"auto"` (default).
    Auto = "auto", /// `"gist"`.
    Gist = "gist", /// `"radius"`.
    Radius = "radius" }
);
string_setting!(
    /// `cacheWarming` (global settings only).
    CacheWarming { /// `"off"`.
    Off = "off", /// `"streaming"`.
    Streaming = "streaming", /// `"idle"` (default).
    Idle = "idle" }
);
string_setting!(
    /// `doubleEscapeAction`.
    DoubleEscapeAction { /// `"tree"` (default).
    Tree = "tree", /// `"fork"`.
    Fork = "fork", /// `"none"`.
    None = "none" }
);
string_setting!(
    /// `treeFilterMode`.
    TreeFilterMode { /// `"default"` (default).
    Default = "default", /// `"no-tools"`.
    NoTools = "no-tools", /// `"user-only"`.
    UserOnly = "user-only", /// `"labeled-only"`.
    LabeledOnly = "labeled-only", /// `"all"`.
    All = "all" }
);
string_setting!(
    /// `defaultProjectTrust` (global settings only).
    ProjectTrustDefault { /// `"ask"` (default).
    Ask = "ask", /// `"always"`.
    Always = "always", /// `"never"`.
    Never = "never" }
);
string_setting!(
    /// `tuiMode`.
    TuiMode { /// `"regular"`.
    Regular = "regular", /// `"fullscreen"` (default).
    Fullscreen = "fullscreen" }
);
string_setting!(
    /// `fullscreenExitOutput`.
    FullscreenExitOutput { /// `"transcript"` (default).
    Transcript = "transcript", /// `"resume-hint"`.
    ResumeHint = "resume-hint" }
);
string_setting!(
    /// `fullscreenScrollbar`.
    FullscreenScrollbar { /// `"auto"` (default).
    Auto = "auto", /// `"always"`.
    Always = "always", /// `"hidden"`.
    Hidden = "hidden" }
);
string_setting!(
    /// `markdown.mermaid`.
    MermaidMode { /// `"off"`.
    Off = "off", /// `"final"`.
    Final = "final", /// `"streaming"` (default).
    Streaming = "streaming" }
);

/// `quietStartup`: `false` (default), `true`, or `"header"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QuietStartup {
    /// Header, scope line and resource listing shown.
    #[default]
    Off,
    /// Everything hidden.
    On,
    /// The header kept; the scope line and resource listing hidden.
    Header,
}

/// `thinkingBudgets`: token budgets per thinking level (unset levels use the built-in budgets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThinkingBudgets {
    /// `minimal`.
    pub minimal: Option<u64>,
    /// `low`.
    pub low: Option<u64>,
    /// `medium`.
    pub medium: Option<u64>,
    /// `high`.
    pub high: Option<u64>,
}

/// `retry.provider.*` (pi's `getProviderRetrySettings`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProviderRetrySettings {
    /// `retry.provider.timeoutMs` (unset: `httpIdleTimeoutMs`).
    pub timeout_ms: Option<u64>,
    /// `retry.provider.maxRetries` (unset: the provider's own default, 0 in pi).
    pub max_retries: Option<u64>,
    /// `retry.provider.maxRetryDelayMs` (default 60000; 0 disables the limit).
    pub max_retry_delay_ms: u64,
}

/// pi's `getTerminalCapabilityOverrides`: what the terminal settings force instead of detecting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TerminalOverrides {
    /// `terminal.images`: `Some(Some("kitty" | "iterm2"))`, `Some(None)` for `false` (no images),
    /// `None` for `"auto"` / unset.
    pub images: Option<Option<&'static str>>,
    /// `terminal.trueColor` when a boolean.
    pub true_color: Option<bool>,
    /// `terminal.hyperlinks` when a boolean.
    pub hyperlinks: Option<bool>,
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

/// pi's `normalizePath`: a leading `~` is the home directory.
fn normalize_path(path: &str) -> String {
    crate::session::expand_tilde(path).display().to_string()
}

impl Settings {
    fn string(&self, path: &str) -> Option<&str> {
        self.get_path(path).and_then(Value::as_str)
    }

    fn bool_or(&self, path: &str, default: bool) -> bool {
        self.get_path(path).and_then(Value::as_bool).unwrap_or(default)
    }

    fn u64_or(&self, path: &str, default: u64) -> u64 {
        self.get_path(path).and_then(Value::as_u64).unwrap_or(default)
    }

    fn strings(&self, key: &str) -> Option<Vec<String>> {
        let list = self.get(key)?.as_array()?;
        Some(list.iter().filter_map(Value::as_str).map(str::to_owned).collect())
    }

    fn enum_or<T>(&self, path: &str, parse: fn(&str) -> Option<T>, default: T) -> T {
        self.string(path).and_then(parse).unwrap_or(default)
    }

    /// `defaultProvider`.
    pub fn default_provider(&self) -> Option<&str> {
        self.string("defaultProvider")
    }

    /// `defaultModel`.
    pub fn default_model(&self) -> Option<&str> {
        self.string("defaultModel")
    }

    /// `defaultThinkingLevel` as written (pi falls back to `"medium"` when it chooses a level).
    pub fn default_thinking_level(&self) -> Option<&str> {
        self.string("defaultThinkingLevel")
    }

    /// `modelThinkingLevels["provider/modelId"]`.
    pub fn model_thinking_level(&self, provider: &str, model_id: &str) -> Option<&str> {
        self.get("modelThinkingLevels")?.get(format!("{provider}/{model_id}"))?.as_str()
    }

    /// `thinkingBudgets`, when set.
    pub fn thinking_budgets(&self) -> Option<ThinkingBudgets> {
        let b = self.get("thinkingBudgets")?.as_object()?;
        let level = |k: &str| b.get(k).and_then(Value::as_u64);
        Some(ThinkingBudgets {
            minimal: level("minimal"),
            low: level("low"),
            medium: level("medium"),
            high: level("high"),
        })
    }

    /// `enabledModels` (model patterns, as `--models`).
    pub fn enabled_models(&self) -> Option<Vec<String>> {
        self.strings("enabledModels")
    }

    /// `hideThinkingBlock` (default false).
    pub fn hide_thinking_block(&self) -> bool {
        self.bool_or("hideThinkingBlock", false)
    }

    /// `showCacheMissNotices` (default false).
    pub fn show_cache_miss_notices(&self) -> bool {
        self.bool_or("showCacheMissNotices", false)
    }

    /// `cacheWarming` of these settings (pi reads it from the global file only: use
    /// [`SettingsManager::cache_warming`](super::SettingsManager::cache_warming)).
    pub fn cache_warming(&self) -> CacheWarming {
        self.enum_or("cacheWarming", CacheWarming::parse, CacheWarming::Idle)
    }

    /// `steeringMode` (default one at a time).
    pub fn steering_mode(&self) -> QueueMode {
        queue_mode(self.string("steeringMode"))
    }

    /// `followUpMode` (default one at a time).
    pub fn follow_up_mode(&self) -> QueueMode {
        queue_mode(self.string("followUpMode"))
    }

    /// `externalEditor`, else `$VISUAL`, `$EDITOR`, then `nano` (pi's `getExternalEditorCommand`).
    pub fn external_editor(&self) -> String {
        if let Some(editor) = self.string("externalEditor").filter(|e| !e.trim().is_empty()) {
            return editor.to_owned();
        }
        ["VISUAL", "EDITOR"]
            .iter()
            .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
            .unwrap_or_else(|| "nano".to_owned())
    }

    /// `doubleEscapeAction` (default tree).
    pub fn double_escape_action(&self) -> DoubleEscapeAction {
        self.enum_or("doubleEscapeAction", DoubleEscapeAction::parse, DoubleEscapeAction::Tree)
    }

    /// `treeFilterMode` (default `default`).
    pub fn tree_filter_mode(&self) -> TreeFilterMode {
        self.enum_or("treeFilterMode", TreeFilterMode::parse, TreeFilterMode::Default)
    }

    /// `defaultProjectTrust` of these settings (pi reads it from the global file only: use
    /// [`SettingsManager::default_project_trust`](super::SettingsManager::default_project_trust)).
    pub fn default_project_trust(&self) -> ProjectTrustDefault {
        self.enum_or("defaultProjectTrust", ProjectTrustDefault::parse, ProjectTrustDefault::Ask)
    }

    /// `defaultTools` resolved (pi's `getDefaultTools`): plain names replace the defaults, `+name`
    /// / `-name` change them in order; `None` when no settings file sets it.
    pub fn default_tools(&self) -> Option<Vec<String>> {
        let list = self.get("defaultTools")?;
        let entries: Vec<String> = list
            .as_array()
            .map(|l| l.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        Some(tools::resolve_default_tools(&entries))
    }

    /// `codemode.mode` (`"on"` default, or `"only"`).
    pub fn codemode_mode(&self) -> &str {
        match self.string("codemode.mode") {
            Some("only") => "only",
            _ => "on",
        }
    }

    /// `codemode.inlineBudget` (default 3000).
    pub fn codemode_inline_budget(&self) -> u64 {
        self.u64_or("codemode.inlineBudget", 3000)
    }

    /// `sessionDir`, `~` expanded (relative paths are relative to the working directory).
    pub fn session_dir(&self) -> Option<String> {
        self.string("sessionDir").filter(|s| !s.is_empty()).map(normalize_path)
    }

    /// `sessionShareDestination` (default auto).
    pub fn session_share_destination(&self) -> ShareDestination {
        match self.string("sessionShareDestination").and_then(ShareDestination::parse) {
            Some(d @ (ShareDestination::Gist | ShareDestination::Radius)) => d,
            _ => ShareDestination::Auto,
        }
    }

    /// `compaction.enabled` (default true).
    pub fn compaction_enabled(&self) -> bool {
        self.bool_or("compaction.enabled", true)
    }

    /// `compaction.reserveTokens` (default 16384; invalid values as the default — see
    /// [`Settings::compaction_settings_for`] for pi's checked form).
    pub fn compaction_reserve_tokens(&self) -> u64 {
        self.u64_or("compaction.reserveTokens", 16384)
    }

    /// `compaction.keepRecentTokens` (default 20000).
    pub fn compaction_keep_recent_tokens(&self) -> u64 {
        self.u64_or("compaction.keepRecentTokens", 20000)
    }

    /// pi's `getCompactionSettings(model)`: each token value from `compaction.modelOverrides`
    /// for `provider/modelId`, then `compaction.*`, then the default; a value that is not a
    /// non-negative safe integer is refused with pi's message.
    pub fn compaction_settings_for(&self, model: Option<(&str, &str)>) -> Result<CompactionSettings, SettingsError> {
        let defaults = CompactionSettings::default();
        Ok(CompactionSettings {
            enabled: self.compaction_enabled(),
            reserve_tokens: self.compaction_token("reserveTokens", model)?.unwrap_or(defaults.reserve_tokens),
            keep_recent_tokens: self
                .compaction_token("keepRecentTokens", model)?
                .unwrap_or(defaults.keep_recent_tokens),
        })
    }

    fn compaction_token(&self, field: &str, model: Option<(&str, &str)>) -> Result<Option<u64>, SettingsError> {
        let compaction = self.get("compaction").and_then(Value::as_object);
        let ordinary = compaction.and_then(|c| c.get(field));
        let ordinary = checked_token(ordinary, || format!("compaction.{field}"))?;
        let key = model.map(|(p, m)| format!("{p}/{m}"));
        let entry = key.as_ref().and_then(|k| compaction?.get("modelOverrides")?.get(k));
        let Some(entry) = entry else { return Ok(ordinary) };
        let key = key.unwrap_or_default();
        let Some(entry) = entry.as_object() else {
            return Err(SettingsError::Invalid(format!(
                "Invalid compaction.modelOverrides[\"{key}\"] setting: {}. Expected an object.",
                js_string(entry)
            )));
        };
        let over = checked_token(entry.get(field), || format!("compaction.modelOverrides[\"{key}\"].{field}"))?;
        Ok(over.or(ordinary))
    }

    /// `branchSummary.reserveTokens` (default 16384).
    pub fn branch_summary_reserve_tokens(&self) -> u64 {
        self.u64_or("branchSummary.reserveTokens", 16384)
    }

    /// `branchSummary.skipPrompt` (default false).
    pub fn branch_summary_skip_prompt(&self) -> bool {
        self.bool_or("branchSummary.skipPrompt", false)
    }

    /// `theme` (pi's `getThemeSetting`; a path-like value is kept).
    pub fn theme(&self) -> Option<&str> {
        self.string("theme")
    }

    /// `quietStartup` as pi reads it: `true` or `"header"`, anything else off.
    pub fn quiet_startup_mode(&self) -> QuietStartup {
        match self.get("quietStartup") {
            Some(Value::Bool(true)) => QuietStartup::On,
            Some(Value::String(s)) if s == "header" => QuietStartup::Header,
            _ => QuietStartup::Off,
        }
    }

    /// `quietStartup` is `true` (use [`Settings::quiet_startup_mode`] for `"header"`).
    pub fn quiet_startup(&self) -> bool {
        self.quiet_startup_mode() == QuietStartup::On
    }

    /// `tuiMode` (default fullscreen).
    pub fn tui_mode(&self) -> TuiMode {
        if self.string("tuiMode") == Some("regular") { TuiMode::Regular } else { TuiMode::Fullscreen }
    }

    /// `fullscreenExitOutput` (default transcript).
    pub fn fullscreen_exit_output(&self) -> FullscreenExitOutput {
        self.enum_or("fullscreenExitOutput", FullscreenExitOutput::parse, FullscreenExitOutput::Transcript)
    }

    /// `fullscreenScrollbar` (default auto).
    pub fn fullscreen_scrollbar(&self) -> FullscreenScrollbar {
        self.enum_or("fullscreenScrollbar", FullscreenScrollbar::parse, FullscreenScrollbar::Auto)
    }

    /// `fullscreenCopyOnSelect` (default true).
    pub fn fullscreen_copy_on_select(&self) -> bool {
        self.bool_or("fullscreenCopyOnSelect", true)
    }

    /// `fullscreenWheelScrollLines`: a number clamped to 1–100, `None` for `"auto"` (default).
    pub fn fullscreen_wheel_scroll_lines(&self) -> Option<u32> {
        let n = self.get("fullscreenWheelScrollLines")?.as_f64().filter(|n| n.is_finite())?;
        Some(n.floor().clamp(1.0, 100.0) as u32)
    }

    /// `editorPaddingX` (default 0).
    pub fn editor_padding_x(&self) -> u64 {
        self.u64_or("editorPaddingX", 0)
    }

    /// `outputPad`: 0 or 1 (default 1).
    pub fn output_pad(&self) -> u8 {
        if self.get("outputPad").and_then(Value::as_f64) == Some(0.0) { 0 } else { 1 }
    }

    /// `autocompleteMaxVisible` (default 5).
    pub fn autocomplete_max_visible(&self) -> u64 {
        self.u64_or("autocompleteMaxVisible", 5)
    }

    /// `showHardwareCursor` (unset: `PI_HARDWARE_CURSOR=1`).
    pub fn show_hardware_cursor(&self) -> bool {
        self.get("showHardwareCursor").and_then(Value::as_bool).unwrap_or_else(|| env_flag("PI_HARDWARE_CURSOR"))
    }

    /// `terminal.showImages` (default true).
    pub fn show_images(&self) -> bool {
        self.bool_or("terminal.showImages", true)
    }

    /// `terminal.imageWidthCells` (default 60, at least 1).
    pub fn image_width_cells(&self) -> u64 {
        match self.get_path("terminal.imageWidthCells").and_then(Value::as_f64).filter(|n| n.is_finite()) {
            Some(n) => n.floor().max(1.0) as u64,
            None => 60,
        }
    }

    /// `terminal.clearOnShrink` (unset: `PI_CLEAR_ON_SHRINK=1`).
    pub fn clear_on_shrink(&self) -> bool {
        self.get_path("terminal.clearOnShrink")
            .and_then(Value::as_bool)
            .unwrap_or_else(|| env_flag("PI_CLEAR_ON_SHRINK"))
    }

    /// `terminal.showTerminalProgress` (default false).
    pub fn show_terminal_progress(&self) -> bool {
        self.bool_or("terminal.showTerminalProgress", false)
    }

    /// `terminal.images`, `terminal.trueColor`, `terminal.hyperlinks` overrides.
    pub fn terminal_overrides(&self) -> TerminalOverrides {
        let images = match self.get_path("terminal.images") {
            Some(Value::String(s)) if s == "kitty" => Some(Some("kitty")),
            Some(Value::String(s)) if s == "iterm2" => Some(Some("iterm2")),
            Some(Value::Bool(false)) => Some(None),
            _ => None,
        };
        TerminalOverrides {
            images,
            true_color: self.get_path("terminal.trueColor").and_then(Value::as_bool),
            hyperlinks: self.get_path("terminal.hyperlinks").and_then(Value::as_bool),
        }
    }

    /// `images.autoResize` (default true).
    pub fn image_auto_resize(&self) -> bool {
        self.bool_or("images.autoResize", true)
    }

    /// `images.blockImages` (default false).
    pub fn block_images(&self) -> bool {
        self.bool_or("images.blockImages", false)
    }

    /// `markdown.codeBlockIndent` (default two spaces).
    pub fn code_block_indent(&self) -> &str {
        self.string("markdown.codeBlockIndent").unwrap_or("  ")
    }

    /// `markdown.mermaid` (default streaming).
    pub fn mermaid_mode(&self) -> MermaidMode {
        self.enum_or("markdown.mermaid", MermaidMode::parse, MermaidMode::Streaming)
    }

    /// `transport` (default auto).
    pub fn transport(&self) -> Transport {
        self.enum_or("transport", Transport::parse, Transport::Auto)
    }

    /// `httpProxy` of these settings (pi reads it from the global file only).
    pub fn http_proxy(&self) -> Option<&str> {
        self.string("httpProxy")
    }

    /// `httpIdleTimeoutMs` (default 300000; `0` or `"disabled"` disables), refused with pi's
    /// message when invalid.
    pub fn http_idle_timeout_ms(&self) -> Result<u64, SettingsError> {
        Ok(timeout_setting(self.get("httpIdleTimeoutMs"), "httpIdleTimeoutMs")?.unwrap_or(300_000))
    }

    /// `websocketConnectTimeoutMs` (`None` when unset).
    pub fn websocket_connect_timeout_ms(&self) -> Result<Option<u64>, SettingsError> {
        timeout_setting(self.get("websocketConnectTimeoutMs"), "websocketConnectTimeoutMs")
    }

    /// `retry.enabled` (default true).
    pub fn retry_enabled(&self) -> bool {
        self.bool_or("retry.enabled", true)
    }

    /// `retry.maxRetries` (default 3).
    pub fn retry_max_retries(&self) -> u64 {
        self.u64_or("retry.maxRetries", 3)
    }

    /// `retry.baseDelayMs` (default 2000).
    pub fn retry_base_delay_ms(&self) -> u64 {
        self.u64_or("retry.baseDelayMs", 2000)
    }

    /// `retry.maxAgentDelayMs` (default 60000).
    pub fn retry_max_agent_delay_ms(&self) -> u64 {
        self.u64_or("retry.maxAgentDelayMs", 60_000)
    }

    /// `retry.provider.*`.
    pub fn provider_retry(&self) -> ProviderRetrySettings {
        ProviderRetrySettings {
            timeout_ms: self.get_path("retry.provider.timeoutMs").and_then(Value::as_u64),
            max_retries: self.get_path("retry.provider.maxRetries").and_then(Value::as_u64),
            max_retry_delay_ms: self.u64_or("retry.provider.maxRetryDelayMs", 60_000),
        }
    }

    /// `shellPath`, `~` expanded.
    pub fn shell_path(&self) -> Option<String> {
        self.string("shellPath").filter(|s| !s.is_empty()).map(normalize_path)
    }

    /// `shellCommandPrefix`.
    pub fn shell_command_prefix(&self) -> Option<&str> {
        self.string("shellCommandPrefix")
    }

    /// `npmCommand`.
    pub fn npm_command(&self) -> Option<Vec<String>> {
        self.strings("npmCommand")
    }

    /// `selfUpdateCommand` of these settings (pi reads it from the global file only).
    pub fn self_update_command(&self) -> Option<Vec<String>> {
        self.strings("selfUpdateCommand")
    }

    /// `packages` (package sources: strings or objects).
    pub fn packages(&self) -> Vec<Value> {
        self.get("packages").and_then(Value::as_array).cloned().unwrap_or_default()
    }

    /// `extensions` (paths, `!glob`, `+path`, `-path`, `builtin:<name>`).
    pub fn extension_paths(&self) -> Vec<String> {
        self.strings("extensions").unwrap_or_default()
    }

    /// `skills`.
    pub fn skill_paths(&self) -> Vec<String> {
        self.strings("skills").unwrap_or_default()
    }

    /// `prompts`.
    pub fn prompt_template_paths(&self) -> Vec<String> {
        self.strings("prompts").unwrap_or_default()
    }

    /// `themes`.
    pub fn theme_paths(&self) -> Vec<String> {
        self.strings("themes").unwrap_or_default()
    }

    /// `enableSkillCommands` (default true).
    pub fn enable_skill_commands(&self) -> bool {
        self.bool_or("enableSkillCommands", true)
    }

    /// `collapseChangelog` (default false).
    pub fn collapse_changelog(&self) -> bool {
        self.bool_or("collapseChangelog", false)
    }

    /// `enableInstallTelemetry` (default true).
    pub fn enable_install_telemetry(&self) -> bool {
        self.bool_or("enableInstallTelemetry", true)
    }

    /// `enableAnalytics` (default false).
    pub fn enable_analytics(&self) -> bool {
        self.bool_or("enableAnalytics", false)
    }

    /// `trackingId`.
    pub fn tracking_id(&self) -> Option<&str> {
        self.string("trackingId")
    }

    /// `lastChangelogVersion`.
    pub fn last_changelog_version(&self) -> Option<&str> {
        self.string("lastChangelogVersion")
    }

    /// `extensionChangelogVersions[key]`.
    pub fn extension_changelog_version(&self, key: &str) -> Option<&str> {
        self.get("extensionChangelogVersions")?.get(key)?.as_str()
    }

    /// `warnings` (each warning on unless set to false).
    pub fn warnings(&self) -> Map<String, Value> {
        self.get("warnings").and_then(Value::as_object).cloned().unwrap_or_default()
    }

    /// `warnings.anthropicExtraUsage` (default true).
    pub fn warn_anthropic_extra_usage(&self) -> bool {
        self.bool_or("warnings.anthropicExtraUsage", true)
    }

    /// A path setting resolved: `~` expanded, relative paths against `base` (pi resolves global
    /// resource paths against the agent dir and project ones against `.pi`).
    pub fn resolve_resource_path(path: &str, base: &std::path::Path) -> PathBuf {
        let expanded = crate::session::expand_tilde(path);
        if expanded.is_absolute() { expanded } else { base.join(expanded) }
    }
}

fn queue_mode(text: Option<&str>) -> QueueMode {
    match text {
        Some("all") => QueueMode::All,
        _ => QueueMode::OneAtATime,
    }
}

/// JavaScript's `String(value)` for the values a settings error quotes.
fn js_string(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.as_f64().map(pi_ai::json::js_number_to_string).unwrap_or_else(|| n.to_string()),
        Value::Object(_) => "[object Object]".to_owned(),
        Value::Array(a) => {
            a.iter().map(|v| if v.is_null() { String::new() } else { js_string(v) }).collect::<Vec<_>>().join(",")
        }
        other => other.to_string(),
    }
}

fn checked_token(value: Option<&Value>, name: impl Fn() -> String) -> Result<Option<u64>, SettingsError> {
    match value {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0 => Ok(Some(n as u64)),
            _ => Err(SettingsError::Invalid(format!(
                "Invalid {} setting: {}. Expected a non-negative safe integer.",
                name(),
                js_string(v)
            ))),
        },
    }
}

/// pi's `parseTimeoutSetting` over `parseHttpIdleTimeoutMs`.
fn timeout_setting(value: Option<&Value>, name: &str) -> Result<Option<u64>, SettingsError> {
    fn parse(value: &Value) -> Option<u64> {
        match value {
            Value::String(s) => {
                let t = s.trim();
                if t.eq_ignore_ascii_case("disabled") {
                    return Some(0);
                }
                if t.is_empty() {
                    return None;
                }
                t.parse::<f64>().ok().filter(|n| n.is_finite() && *n >= 0.0).map(|n| n.floor() as u64)
            }
            Value::Number(n) => n.as_f64().filter(|n| n.is_finite() && *n >= 0.0).map(|n| n.floor() as u64),
            _ => None,
        }
    }
    match value {
        None => Ok(None),
        Some(v) => match parse(v) {
            Some(ms) => Ok(Some(ms)),
            None => Err(SettingsError::Invalid(format!("Invalid {name} setting: {}", js_string(v)))),
        },
    }
}
