//! The component bridge's pi-rs side: a JavaScript extension's component (`ctx.ui.custom`, a
//! component widget, `setFooter`, `setHeader`) stays in the host process; [`JsComponent`] draws it
//! by asking the host for its lines at the width pi-rs draws it (`component.render`), hands it
//! keys (`component.input`) and tells it when the theme changed (`component.invalidate`).
//!
//! Lines are kept until the width changes, the component gets a key, or the host says something
//! changed (`tui.requestRender()`, which bumps the connection's render generation). What pi's TUI
//! would refuse is drawn and reported instead: a `render` that throws draws nothing, non-string
//! lines are drawn as their text, lines wider than the width are cut to it; each distinct problem
//! is reported once as the extension's error (event `render`).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use pi_tui::ansi::{truncate_to_width_with, visible_width};
use pi_tui::{Component, Lines, Theme};
use serde_json::{Value, json};

use super::process::Connection;
use crate::extensions::errors::ExtensionError;
use crate::extensions::runtime::Runtime;
use crate::extensions::subprocess::remote_render::apply_theme;
use crate::ui::ComponentFactory;

/// Names one component in the host.
#[derive(Clone)]
pub(crate) struct ComponentHandle {
    pub(crate) conn: Weak<Connection>,
    pub(crate) runtime: Weak<Runtime>,
    pub(crate) path: String,
    pub(crate) id: u64,
    pub(crate) timeout: Duration,
}

impl ComponentHandle {
    /// A factory building proxies of this component (the UI calls it again on a theme change).
    pub(crate) fn factory(self) -> ComponentFactory {
        Arc::new(move |theme: &Theme| Box::new(JsComponent::new(self.clone(), theme)) as Box<dyn Component>)
    }

    fn report(&self, error: String) {
        if let Some(runtime) = self.runtime.upgrade() {
            runtime.report(ExtensionError::new(&self.path, "render", error));
        }
    }
}

/// A component living in the JavaScript host.
pub(crate) struct JsComponent {
    handle: ComponentHandle,
    theme: Theme,
    /// Width, render generation and the lines drawn then.
    cache: Option<(usize, u64, Lines)>,
    /// The last problem reported, so a component failing every frame is reported once.
    reported: Option<String>,
}

impl JsComponent {
    pub(crate) fn new(handle: ComponentHandle, theme: &Theme) -> JsComponent {
        JsComponent { handle, theme: theme.clone(), cache: None, reported: None }
    }

    fn params(&self, extra: Value) -> Value {
        let mut params = json!({"extensionPath": self.handle.path, "id": self.handle.id});
        if let (Some(obj), Value::Object(more)) = (params.as_object_mut(), extra) {
            obj.extend(more);
        }
        params
    }

    fn problem(&mut self, error: String) {
        if self.reported.as_deref() != Some(error.as_str()) {
            self.handle.report(error.clone());
            self.reported = Some(error);
        }
    }

    /// The host's lines at `width`, themed and checked.
    fn fetch(&mut self, conn: &Connection, width: usize) -> Vec<String> {
        let answer =
            match conn.call_blocking("component.render", self.params(json!({"width": width})), self.handle.timeout) {
                Ok(answer) => answer,
                Err(error) => {
                    self.problem(error);
                    return Vec::new();
                }
            };
        let mut error = answer.get("error").and_then(Value::as_str).map(str::to_owned);
        let raw = answer.get("lines").and_then(Value::as_array).cloned().unwrap_or_default();
        let mut lines = Vec::with_capacity(raw.len());
        for (i, line) in raw.iter().enumerate() {
            let line = apply_theme(line.as_str().unwrap_or_default(), &self.theme);
            let w = visible_width(&line);
            if w > width {
                error.get_or_insert_with(|| format!("Rendered line {i} exceeds terminal width ({w} > {width})."));
                lines.push(truncate_to_width_with(&line, width, "", false));
            } else {
                lines.push(line);
            }
        }
        match error {
            Some(error) => self.problem(error),
            None => self.reported = None,
        }
        lines
    }
}

impl Component for JsComponent {
    fn render(&mut self, width: usize) -> Lines {
        let Some(conn) = self.handle.conn.upgrade().filter(|c| !c.is_dead()) else {
            return Vec::new().into();
        };
        let generation = conn.render_generation.load(Ordering::Acquire);
        if let Some((w, g, lines)) = &self.cache
            && *w == width
            && *g == generation
        {
            return lines.clone();
        }
        let lines: Lines = self.fetch(&conn, width).into();
        self.cache = Some((width, generation, lines.clone()));
        lines
    }

    fn handle_input(&mut self, data: &str) {
        if let Some(conn) = self.handle.conn.upgrade() {
            conn.notify("component.input", self.params(json!({"data": data})));
        }
        self.cache = None;
    }

    fn invalidate(&mut self) {
        if let Some(conn) = self.handle.conn.upgrade() {
            conn.notify("component.invalidate", self.params(json!({})));
        }
        self.cache = None;
    }

    fn wants_key_release(&self) -> bool {
        false
    }
}
