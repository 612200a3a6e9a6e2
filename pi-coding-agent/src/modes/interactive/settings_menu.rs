//! `/settings`: pi's `SettingsSelectorComponent` (the rows of pi 1.6.0, in its order) and what
//! each change does: written to the global `settings.json` through
//! [`SettingsManager`](crate::settings::SettingsManager), and applied to the running session or
//! screen where pi applies it.

use std::cell::RefCell;
use std::rc::Rc;

use pi_tui::components::{SelectItem, SelectListLayout};
use pi_tui::{Component, CrosstermTerminal, Lines, Theme, Tui, shared};
use serde_json::{Value, json};

use super::app::App;
use super::dialogs::DoneCell;
use super::settings_list::{Changes, SelectSubmenu, SettingItem, SettingsList, Step, SteppedSubmenu, Submenu};
use crate::settings::Settings;

const HTTP_IDLE_TIMEOUTS: &[(&str, u64)] =
    &[("30 sec", 30_000), ("1 min", 60_000), ("2 min", 120_000), ("5 min", 300_000), ("disabled", 0)];

const THINKING_DESCRIPTIONS: &[(&str, &str)] = &[
    ("off", "No reasoning"),
    ("minimal", "Very brief reasoning (~1k tokens)"),
    ("low", "Light reasoning (~2k tokens)"),
    ("medium", "Moderate reasoning (~8k tokens)"),
    ("high", "Deep reasoning (~16k tokens)"),
    ("xhigh", "Extra-high reasoning (~32k tokens)"),
    ("max", "Maximum reasoning"),
];

const TRUST_LABELS: &[(&str, &str)] = &[("ask", "Ask"), ("always", "Always trust"), ("never", "Never trust")];

/// pi's `formatHttpIdleTimeoutMs`.
fn format_idle_timeout(ms: u64) -> String {
    HTTP_IDLE_TIMEOUTS
        .iter()
        .find(|(_, v)| *v == ms)
        .map_or_else(|| format!("{} sec", ms as f64 / 1000.0), |(l, _)| (*l).to_owned())
}

/// The border, the list and the border (pi's settings selector), finished by Escape.
struct SettingsSelector {
    theme: Rc<Theme>,
    list: SettingsList,
    done: DoneCell,
}

impl Component for SettingsSelector {
    fn render(&mut self, width: usize) -> Lines {
        let border = self.theme.fg("border", &"─".repeat(width.max(1)));
        let mut lines = vec![border.clone()];
        lines.extend(self.list.render(width).iter().cloned());
        lines.push(border);
        lines.into()
    }

    fn handle_input(&mut self, data: &str) {
        self.list.handle_input(data);
        if self.list.cancelled() {
            *self.done.borrow_mut() = Some(None);
        }
    }
}

/// The themes `/settings` offers: `system` first, then the built-in and custom themes by name
/// (the agent's and the project's `themes/`, and those extensions provided).
pub(crate) fn available_themes(
    agent_dir: &std::path::Path,
    cwd: &str,
    session: &crate::sdk::AgentSession,
) -> Vec<String> {
    let mut names = vec!["dark".to_owned(), "light".to_owned()];
    for theme in session.extension_themes() {
        if !names.contains(&theme.name) {
            names.push(theme.name);
        }
    }
    for dir in [agent_dir.join("themes"), std::path::Path::new(cwd).join(".pi/themes")] {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(stem) = name.strip_suffix(".json")
                && !names.iter().any(|n| n == stem)
            {
                names.push(stem.to_owned());
            }
        }
    }
    names.sort();
    names.insert(0, "system".to_owned());
    names
}

impl App {
    /// `/settings`.
    pub(crate) fn command_settings(&mut self, tui: &mut Tui<CrosstermTerminal>) {
        let changes: Changes = Rc::new(RefCell::new(Vec::new()));
        let items = self.settings_items(&changes);
        let list = SettingsList::new(self.theme.clone(), self.keys.clone(), items, 10, true, changes.clone());
        let done: DoneCell = Rc::new(RefCell::new(None));
        let selector = SettingsSelector { theme: self.theme.clone(), list, done: done.clone() };
        self.open_dialog(tui, shared(selector), done, Box::new(|_, _| {}));
        self.dialog_changes = Some(changes);
    }

    fn settings_items(&self, changes: &Changes) -> Vec<SettingItem> {
        let s: Settings = self.session.settings_manager().settings();
        let b = |path: &str, default: bool| s.get_path(path).and_then(Value::as_bool).unwrap_or(default);
        let follow_up_key = super::keys::key_display(&self.keys, "app.message.followUp");
        let cycle_key = super::keys::key_display(&self.keys, "app.thinking.cycle");
        let quiet = match s.quiet_startup_mode() {
            crate::settings::QuietStartup::On => "true",
            crate::settings::QuietStartup::Header => "header",
            crate::settings::QuietStartup::Off => "false",
        };
        let trust = TRUST_LABELS.iter().find(|(v, _)| *v == s.default_project_trust().as_str()).map_or("Ask", |t| t.1);
        let wheel = s.fullscreen_wheel_scroll_lines().map_or("auto".to_owned(), |n| n.to_string());
        let mut wheel_values: Vec<u32> = vec![1, 2, 3, 5, 10];
        if let Some(n) = s.fullscreen_wheel_scroll_lines()
            && !wheel_values.contains(&n)
        {
            wheel_values.push(n);
            wheel_values.sort_unstable();
        }
        let wheel_values: Vec<String> =
            std::iter::once("auto".to_owned()).chain(wheel_values.iter().map(u32::to_string)).collect();
        let idle = s.http_idle_timeout_ms().unwrap_or(300_000);
        let overrides = s.get("modelThinkingLevels").and_then(Value::as_object).map_or(0, |m| m.len());
        let mode = |m: pi_agent_core::QueueMode| match m {
            pi_agent_core::QueueMode::All => "all".to_owned(),
            pi_agent_core::QueueMode::OneAtATime => "one-at-a-time".to_owned(),
        };
        let mut items = vec![
            SettingItem::flag(
                "autocompact",
                "Auto-compact",
                "Automatically compact context when it gets too large",
                self.session.settings().compaction.enabled,
            ),
            SettingItem::flag(
                "auto-resize-images",
                "Auto-resize images",
                "Resize large images to 2000x2000 max for better model compatibility",
                s.image_auto_resize(),
            ),
            SettingItem::flag(
                "block-images",
                "Block images",
                "Prevent images from being sent to LLM providers",
                s.block_images(),
            ),
            SettingItem::flag(
                "skill-commands",
                "Skill commands",
                "Register skills as /skill:name commands",
                b("enableSkillCommands", true),
            ),
            SettingItem::flag(
                "show-hardware-cursor",
                "Show hardware cursor",
                "Use the terminal cursor instead of Pi's drawn cursor",
                s.show_hardware_cursor(),
            ),
            SettingItem::cycle(
                "editor-padding",
                "Editor padding",
                "Horizontal padding for input editor (0-3)",
                s.editor_padding_x().to_string(),
                &["0", "1", "2", "3"],
            ),
            SettingItem::cycle(
                "output-padding",
                "Output padding",
                "Horizontal padding for messages, tool output, and command output",
                s.output_pad().to_string(),
                &["0", "1"],
            ),
            SettingItem::cycle(
                "autocomplete-max-visible",
                "Autocomplete max items",
                "Max visible items in autocomplete dropdown (3-20)",
                s.autocomplete_max_visible().to_string(),
                &["3", "5", "7", "10", "15", "20"],
            ),
            SettingItem::flag(
                "clear-on-shrink",
                "Clear on shrink",
                "Clear empty rows when content shrinks (may cause flicker)",
                s.clear_on_shrink(),
            ),
            SettingItem::flag(
                "terminal-progress",
                "Terminal progress",
                "Show OSC 9;4 progress indicators in the terminal tab bar",
                s.show_terminal_progress(),
            ),
            SettingItem::cycle(
                "steering-mode",
                "Steering mode",
                "Enter while streaming queues steering messages. 'one-at-a-time': deliver one, wait for response. 'all': deliver all at once.",
                mode(self.session.steering_mode()),
                &["one-at-a-time", "all"],
            ),
            SettingItem::cycle(
                "follow-up-mode",
                "Follow-up mode",
                &format!(
                    "{follow_up_key} queues follow-up messages until agent stops. 'one-at-a-time': deliver one, wait for response. 'all': deliver all at once."
                ),
                mode(self.session.follow_up_mode()),
                &["one-at-a-time", "all"],
            ),
            SettingItem::cycle(
                "transport",
                "Transport",
                "Preferred transport for providers that support multiple transports",
                s.transport().as_str().to_owned(),
                &["sse", "websocket", "websocket-cached", "auto"],
            ),
            SettingItem::cycle(
                "share-destination",
                "Session share destination",
                "Where to upload sessions with /share (auto prefers Radius when authenticated, otherwise GitHub Gist)",
                s.session_share_destination().as_str().to_owned(),
                &["auto", "gist", "radius"],
            ),
            SettingItem::cycle(
                "http-idle-timeout",
                "HTTP idle timeout",
                "Maximum idle gap while waiting for HTTP headers or body chunks. Disable for local models that pause longer than five minutes.",
                format_idle_timeout(idle),
                &["30 sec", "1 min", "2 min", "5 min", "disabled"],
            ),
            SettingItem::cycle(
                "cache-warming-mode",
                "Cache warming",
                "off; streaming while the agent runs; idle also between runs while continuation stays profitable",
                s.cache_warming().as_str().to_owned(),
                &["off", "streaming", "idle"],
            ),
            SettingItem::flag(
                "hide-thinking",
                "Hide thinking",
                "Hide thinking blocks in assistant responses",
                self.hide_thinking,
            ),
            SettingItem::cycle(
                "mermaid-rendering",
                "Mermaid diagrams",
                "Render Mermaid code blocks as Unicode diagrams",
                s.mermaid_mode().as_str().to_owned(),
                &["off", "final", "streaming"],
            ),
            SettingItem::flag(
                "cache-miss-notices",
                "Cache miss notices",
                "Show transcript notices for cache costs and provider recovery diagnostics",
                s.show_cache_miss_notices(),
            ),
            SettingItem::flag(
                "collapse-changelog",
                "Collapse changelog",
                "Show condensed changelog after updates",
                b("collapseChangelog", false),
            ),
            SettingItem::cycle(
                "quiet-startup",
                "Quiet startup",
                "Disable verbose printing at startup (header: keep only the startup header)",
                quiet.to_owned(),
                &["true", "header", "false"],
            ),
            SettingItem::flag(
                "install-telemetry",
                "Install telemetry",
                "Send an anonymous version/update ping after changelog-detected updates",
                b("enableInstallTelemetry", true),
            ),
            SettingItem::cycle(
                "default-project-trust",
                "Default project trust",
                "Fallback behavior when no extension or saved trust decision decides project trust",
                trust.to_owned(),
                &["Ask", "Always trust", "Never trust"],
            ),
            SettingItem::cycle(
                "double-escape-action",
                "Double-escape action",
                "Action when pressing Escape twice with empty editor",
                s.double_escape_action().as_str().to_owned(),
                &["tree", "fork", "none"],
            ),
            SettingItem::cycle(
                "tree-filter-mode",
                "Tree filter mode",
                "Default filter when opening /tree",
                s.tree_filter_mode().as_str().to_owned(),
                &["default", "no-tools", "user-only", "labeled-only", "all"],
            ),
        ];
        let mut warnings = SettingItem::cycle(
            "warnings",
            "Warnings",
            "Enable or disable individual warnings",
            "configure".into(),
            &[],
        );
        warnings.submenu = Some(self.warnings_submenu(changes, b("warnings.anthropicExtraUsage", true)));
        items.push(warnings);
        let summary = if overrides == 0 { "none".to_owned() } else { format!("{overrides} configured") };
        let mut thinking = SettingItem::cycle(
            "model-thinking",
            "Default thinking level per model",
            &format!("Override the default thinking level for specific models. {cycle_key} cycles in-session."),
            summary,
            &[],
        );
        thinking.submenu = Some(self.model_thinking_submenu(changes, &s));
        items.push(thinking);
        items.extend([
            SettingItem::cycle(
                "tui-mode",
                "TUI mode",
                "Interface layout; regular mode uses the terminal's normal scrollback",
                if self.regular { "regular" } else { "fullscreen" }.to_owned(),
                &["regular", "fullscreen"],
            ),
            SettingItem::cycle(
                "fullscreen-exit-output",
                "Fullscreen exit output",
                "Print the transcript or only a session resume hint when exiting fullscreen mode",
                s.fullscreen_exit_output().as_str().to_owned(),
                &["transcript", "resume-hint"],
            ),
            SettingItem::cycle(
                "fullscreen-scrollbar",
                "Fullscreen scrollbar",
                "Scrollbar behavior in fullscreen mode; has no effect in regular mode",
                s.fullscreen_scrollbar().as_str().to_owned(),
                &["auto", "always", "hidden"],
            ),
            SettingItem::flag(
                "fullscreen-copy-on-select",
                "Fullscreen copy on select",
                "Automatically copy selected text in fullscreen mode; disable to copy selections with Ctrl+X",
                s.fullscreen_copy_on_select(),
            ),
        ]);
        let wheel_refs: Vec<&str> = wheel_values.iter().map(String::as_str).collect();
        items.push(SettingItem::cycle("fullscreen-wheel-scroll-lines", "Fullscreen wheel scrolling", "Lines per mouse-wheel event in fullscreen mode; 'auto' speeds up fast wheel spins where the terminal does not", wheel, &wheel_refs));
        let current_theme = s.theme().unwrap_or("system").to_owned();
        let mut theme = SettingItem::cycle("theme", "Theme", "Color theme for the interface", current_theme, &[]);
        theme.submenu = Some(self.theme_submenu());
        items.push(theme);
        items
    }

    fn warnings_submenu(&self, changes: &Changes, extra_usage: bool) -> super::settings_list::SubmenuFactory {
        let (theme, keys, changes) = (self.theme.clone(), self.keys.clone(), changes.clone());
        Rc::new(move |_current: &str| -> Box<dyn Submenu> {
            let item = SettingItem::flag(
                "anthropic-extra-usage",
                "Anthropic extra usage",
                "Warn when Anthropic subscription auth may use paid extra usage",
                extra_usage,
            );
            Box::new(SettingsList::new(theme.clone(), keys.clone(), vec![item], 1, false, changes.clone()))
        })
    }

    fn theme_submenu(&self) -> super::settings_list::SubmenuFactory {
        let (theme, keys) = (self.theme.clone(), self.keys.clone());
        let names = available_themes(&self.agent_dir, self.session.cwd(), &self.session);
        Rc::new(move |current: &str| -> Box<dyn Submenu> {
            let items = names
                .iter()
                .map(|n| {
                    let mark = if n == current { "✓ " } else { "  " };
                    let desc = (n == "system").then_some("Theme created from your terminal's colors");
                    SelectItem::new(n.clone(), format!("{mark}{n}"), desc)
                })
                .collect();
            Box::new(SelectSubmenu::new(
                theme.clone(),
                keys.clone(),
                "Theme",
                "Select a theme, or choose automatic to follow terminal appearance.",
                items,
                current,
                false,
                SelectListLayout { min_primary_column_width: Some(12), max_primary_column_width: Some(32) },
            ))
        })
    }

    fn model_thinking_submenu(&self, changes: &Changes, s: &Settings) -> super::settings_list::SubmenuFactory {
        let (theme, keys, changes) = (self.theme.clone(), self.keys.clone(), changes.clone());
        let models = self.models.clone();
        let current = self.session.model();
        let current_key = format!("{}/{}", current.provider, current.id);
        let global = s.default_thinking_level().unwrap_or("medium").to_owned();
        let overrides: Rc<RefCell<serde_json::Map<String, Value>>> =
            Rc::new(RefCell::new(s.get("modelThinkingLevels").and_then(Value::as_object).cloned().unwrap_or_default()));
        Rc::new(move |_current: &str| -> Box<dyn Submenu> {
            let (m1, o1, ck, tm) = (models.clone(), overrides.clone(), current_key.clone(), theme.clone());
            let model_step = Step {
                key: "model",
                title: Box::new(|_| "Per-Model Thinking Level".to_owned()),
                description: "Select a model to configure".to_owned(),
                options: Box::new(move |_| {
                    let mut sorted = m1.clone();
                    sorted.sort_by_key(|m| format!("{}/{}", m.provider, m.id) != ck);
                    let o = o1.borrow();
                    let mut items: Vec<SelectItem> = sorted
                        .iter()
                        .map(|m| {
                            let key = format!("{}/{}", m.provider, m.id);
                            let label = format!("{} {}", m.id, tm.fg("muted", &format!("[{}]", m.provider)));
                            SelectItem::new(key.clone(), label, o.get(&key).and_then(Value::as_str))
                        })
                        .collect();
                    if items.is_empty() {
                        items.push(SelectItem::new(
                            "__none__",
                            "No models available",
                            Some("Log in to a provider or configure an API key first"),
                        ));
                    }
                    items
                }),
                preselect: {
                    let ck = current_key.clone();
                    Box::new(move |_| Some(ck.clone()))
                },
                searchable: true,
            };
            let (m2, o2, g2, o3) = (models.clone(), overrides.clone(), global.clone(), overrides.clone());
            let m3 = models.clone();
            let level_step = Step {
                key: "level",
                title: Box::new(move |ctx| {
                    let key = ctx.iter().find(|(k, _)| k == "model").map(|(_, v)| v.clone()).unwrap_or_default();
                    let label = m3
                        .iter()
                        .find(|m| format!("{}/{}", m.provider, m.id) == key)
                        .map_or(key.clone(), |m| format!("{} [{}]", m.id, m.provider));
                    format!("Thinking Level for {label}")
                }),
                description: "Select default thinking level for this model".to_owned(),
                options: Box::new(move |ctx| {
                    let key = ctx.iter().find(|(k, _)| k == "model").map(|(_, v)| v.clone()).unwrap_or_default();
                    let Some(model) = m2.iter().find(|m| format!("{}/{}", m.provider, m.id) == key) else {
                        return Vec::new();
                    };
                    let levels: Vec<String> = if model.reasoning {
                        pi_ai::models::supported_thinking_levels(model).iter().map(|l| l.as_str().to_owned()).collect()
                    } else {
                        vec!["off".to_owned()]
                    };
                    let o = o2.borrow();
                    let active = o.get(&key).and_then(Value::as_str);
                    let mut items: Vec<SelectItem> = levels
                        .iter()
                        .map(|l| {
                            let mark = if Some(l.as_str()) == active { "✓ " } else { "  " };
                            let desc = THINKING_DESCRIPTIONS.iter().find(|(n, _)| n == l).map(|(_, d)| *d);
                            SelectItem::new(l.clone(), format!("{mark}{l}"), desc)
                        })
                        .collect();
                    if active.is_some() {
                        items.push(SelectItem::new(
                            "__clear__",
                            "  (clear override)",
                            Some(&format!("Revert to global default ({g2})")),
                        ));
                    }
                    items
                }),
                preselect: Box::new(move |ctx| {
                    let key = ctx.iter().find(|(k, _)| k == "model").map(|(_, v)| v.clone())?;
                    o3.borrow().get(&key).and_then(Value::as_str).map(str::to_owned)
                }),
                searchable: false,
            };
            let (o4, c4, o5) = (overrides.clone(), changes.clone(), overrides.clone());
            let on_complete = Box::new(move |ctx: &[(String, String)]| {
                let get = |k: &str| ctx.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
                let (Some(model), Some(level)) = (get("model"), get("level")) else { return };
                if model == "__none__" {
                    return;
                }
                if level == "__clear__" {
                    o4.borrow_mut().remove(&model);
                } else {
                    o4.borrow_mut().insert(model.clone(), Value::String(level.clone()));
                }
                c4.borrow_mut().push(("model-thinking-level".to_owned(), format!("{model}={level}")));
            });
            let summary = Box::new(move || match o5.borrow().len() {
                0 => "none".to_owned(),
                n => format!("{n} configured"),
            });
            Box::new(SteppedSubmenu::new(
                theme.clone(),
                keys.clone(),
                vec![model_step, level_step],
                on_complete,
                summary,
            ))
        })
    }

    /// Applies the changes the settings dialog reported since the last key.
    pub(crate) fn apply_dialog_changes(&mut self) {
        let Some(changes) = self.dialog_changes.clone() else { return };
        let drained: Vec<(String, String)> = changes.borrow_mut().drain(..).collect();
        for (id, value) in drained {
            if let Err(e) = self.apply_setting(&id, &value) {
                self.show_error(&e);
            }
        }
    }

    fn apply_setting(&mut self, id: &str, value: &str) -> Result<(), String> {
        let sm = self.session.settings_manager().clone();
        let flag = value == "true";
        let num = |v: &str| v.parse::<u64>().map(Value::from).map_err(|e| e.to_string());
        let r = match id {
            "autocompact" => {
                self.session.set_auto_compaction_enabled(flag);
                Ok(())
            }
            "auto-resize-images" => sm.set_global_nested("images", "autoResize", Some(json!(flag))),
            "block-images" => sm.set_global_nested("images", "blockImages", Some(json!(flag))),
            "skill-commands" => sm.set_global("enableSkillCommands", Some(json!(flag))),
            "show-hardware-cursor" => sm.set_global("showHardwareCursor", Some(json!(flag))),
            "editor-padding" => sm.set_global("editorPaddingX", Some(num(value)?)),
            "output-padding" => sm.set_global("outputPad", Some(num(value)?)),
            "autocomplete-max-visible" => sm.set_global("autocompleteMaxVisible", Some(num(value)?)),
            "clear-on-shrink" => sm.set_global_nested("terminal", "clearOnShrink", Some(json!(flag))),
            "terminal-progress" => sm.set_global_nested("terminal", "showTerminalProgress", Some(json!(flag))),
            "steering-mode" | "follow-up-mode" => {
                let mode =
                    if value == "all" { pi_agent_core::QueueMode::All } else { pi_agent_core::QueueMode::OneAtATime };
                if id == "steering-mode" {
                    self.session.set_steering_mode(mode)
                } else {
                    self.session.set_follow_up_mode(mode)
                }
                Ok(())
            }
            "transport" => sm.set_global("transport", Some(json!(value))),
            "share-destination" => sm.set_global("sessionShareDestination", Some(json!(value))),
            "http-idle-timeout" => {
                let ms = HTTP_IDLE_TIMEOUTS.iter().find(|(l, _)| *l == value).map_or(300_000, |(_, v)| *v);
                let r = sm.set_global("httpIdleTimeoutMs", Some(json!(ms)));
                self.show_status(&format!("HTTP idle timeout: {value}"));
                r
            }
            "cache-warming-mode" => {
                let r = sm.set_global("cacheWarming", Some(json!(value)));
                self.session.cache_warmer().on_mode_changed();
                self.show_status(&format!("Cache warming: {value}"));
                r
            }
            "hide-thinking" => {
                self.hide_thinking = flag;
                self.rebuild_transcript();
                sm.set_hide_thinking_block(flag)
            }
            "mermaid-rendering" => sm.set_global_nested("markdown", "mermaid", Some(json!(value))),
            "cache-miss-notices" => sm.set_global("showCacheMissNotices", Some(json!(flag))),
            "collapse-changelog" => sm.set_global("collapseChangelog", Some(json!(flag))),
            "quiet-startup" => {
                let v = if value == "header" { json!("header") } else { json!(flag) };
                sm.set_global("quietStartup", Some(v))
            }
            "install-telemetry" => sm.set_global("enableInstallTelemetry", Some(json!(flag))),
            "default-project-trust" => {
                let v = TRUST_LABELS.iter().find(|(_, l)| *l == value).map_or("ask", |(v, _)| *v);
                sm.set_global("defaultProjectTrust", Some(json!(v)))
            }
            "double-escape-action" => sm.set_global("doubleEscapeAction", Some(json!(value))),
            "tree-filter-mode" => sm.set_global("treeFilterMode", Some(json!(value))),
            "anthropic-extra-usage" => sm.set_global_nested("warnings", "anthropicExtraUsage", Some(json!(flag))),
            "model-thinking-level" => return self.apply_model_thinking(value),
            "tui-mode" => sm.set_global("tuiMode", Some(json!(value))),
            "fullscreen-exit-output" => sm.set_global("fullscreenExitOutput", Some(json!(value))),
            "fullscreen-scrollbar" => sm.set_global("fullscreenScrollbar", Some(json!(value))),
            "fullscreen-copy-on-select" => sm.set_global("fullscreenCopyOnSelect", Some(json!(flag))),
            "fullscreen-wheel-scroll-lines" => {
                let v = if value == "auto" { json!("auto") } else { num(value)? };
                sm.set_global("fullscreenWheelScrollLines", Some(v))
            }
            "theme" => {
                let r = sm.set_theme(value);
                self.apply_theme(value);
                r
            }
            "scoped" | "save" => return self.apply_scoped_change(id, value),
            _ => Ok(()),
        };
        r.map_err(|e| e.to_string())
    }

    fn apply_model_thinking(&mut self, value: &str) -> Result<(), String> {
        let Some((model, level)) = value.split_once('=') else { return Ok(()) };
        let sm = self.session.settings_manager().clone();
        let current = self.session.model();
        let is_current = format!("{}/{}", current.provider, current.id) == model;
        if level == "__clear__" {
            sm.set_global_nested("modelThinkingLevels", model, None).map_err(|e| e.to_string())?;
            if is_current {
                let global = sm.settings().default_thinking_level().unwrap_or("medium").to_owned();
                if let Some(l) = pi_ai::ThinkingLevel::parse(&global) {
                    self.session.set_thinking_level(l).map_err(|e| e.to_string())?;
                }
            }
        } else {
            sm.set_global_nested("modelThinkingLevels", model, Some(json!(level))).map_err(|e| e.to_string())?;
            if is_current && let Some(l) = pi_ai::ThinkingLevel::parse(level) {
                self.session.set_thinking_level(l).map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }
}
