//! The component bridge's pi-rs side: a JavaScript extension's component (`ctx.ui.custom`, a
//! component widget, `setFooter`, `setHeader`, `tui.showOverlay`) stays in the host process;
//! [`JsComponent`] draws it by asking the host for its lines at the width pi-rs draws it
//! (`component.render`), hands it keys (`component.input`), tells it when the theme changed
//! (`component.invalidate`) and when it gets or loses the focus (`component.focus`).
//!
//! pi's TUI calls `render(width)` on every frame. Here lines are kept until the width changes or
//! the component gets a key; after extension code ran, the host renders every drawn component
//! again and sends only the lines that changed (`ui.componentLines`, kept in [`BridgeState`]),
//! which the next frame draws without a round trip. What pi's TUI would refuse is drawn and
//! reported instead: a `render` that throws draws nothing, non-string lines are drawn as their
//! text, lines wider than the width are cut to it; each distinct problem is reported once as the
//! extension's error (event `render`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use pi_tui::ansi::{truncate_to_width_with, visible_width};
use pi_tui::{Component, Lines, MouseEvent, MouseEventType, MouseReply, MouseResult, Theme};
use serde_json::{Value, json};

use super::process::Connection;
use crate::extensions::errors::ExtensionError;
use crate::extensions::runtime::{Runtime, lock};
use crate::extensions::subprocess::remote_render::apply_theme;
use crate::ui::{ComponentFactory, EditorComponent, EditorComponentFactory};

/// Bumped when the session changed (an entry, the model, the name…): each component's next
/// frame asks again, with a fresh context snapshot (`ctx` of a component is the session now).
static SESSION_EPOCH: AtomicU64 = AtomicU64::new(0);

/// The session changed: components draw again with a fresh snapshot.
pub(crate) fn session_changed() {
    SESSION_EPOCH.fetch_add(1, Ordering::AcqRel);
}

/// Lines the host sent unasked, by component: the width they were drawn at, their sequence
/// number and the host's answer (`{lines, error?}`).
#[derive(Default)]
pub(crate) struct BridgeState {
    seq: AtomicU64,
    pushed: Mutex<HashMap<u64, (usize, u64, Value)>>,
    /// Whether the host's completion providers are in the editor already.
    pub(crate) autocomplete: AtomicBool,
    /// Each host overlay's last `visible` answer, by key, with the size it was for.
    visible: Mutex<HashMap<String, (usize, usize, bool)>>,
}

/// An overlay of the host as pi-tui asks whether it shows: its `visible` option evaluated in the
/// host at the terminal's size (which the host learns this way, for `getBounds` and
/// `tui.terminal`); asked again when the size changes, and updated when the host found that the
/// answer changed after extension code ran (`ui.overlayVisible`).
pub(crate) fn overlay_visibility(conn: Weak<Connection>, key: String) -> crate::ui::OverlayVisible {
    Arc::new(move |columns: usize, rows: usize| {
        let Some(c) = conn.upgrade().filter(|c| !c.is_dead()) else { return true };
        if let Some(&(w, h, visible)) = lock(&c.bridge.visible).get(&key)
            && (w, h) == (columns, rows)
        {
            return visible;
        }
        let params = json!({"key": key, "columns": columns, "rows": rows});
        let visible = c
            .call_blocking("overlay.visible", params, c.render_timeout)
            .ok()
            .and_then(|a| a.get("visible").and_then(Value::as_bool))
            .unwrap_or(true);
        lock(&c.bridge.visible).insert(key.clone(), (columns, rows, visible));
        visible
    })
}

impl BridgeState {
    /// The host's new `visible` answer for overlay `key` at a size.
    pub(crate) fn set_visible(&self, key: &str, columns: usize, rows: usize, visible: bool) {
        lock(&self.visible).insert(key.to_owned(), (columns, rows, visible));
    }
}

impl BridgeState {
    /// Keeps the lines the host pushed for component `id`.
    pub(crate) fn push(&self, id: u64, width: usize, answer: Value) {
        let seq = self.seq.fetch_add(1, Ordering::AcqRel) + 1;
        lock(&self.pushed).insert(id, (width, seq, answer));
    }

    /// The pushed answer for `id` at `width` newer than `than`.
    fn newer(&self, id: u64, width: usize, than: u64) -> Option<(u64, Value)> {
        let pushed = lock(&self.pushed);
        let (w, seq, answer) = pushed.get(&id)?;
        (*w == width && *seq > than).then(|| (*seq, answer.clone()))
    }

    /// The latest sequence number (answers fetched now are at least as new).
    fn now(&self) -> u64 {
        self.seq.load(Ordering::Acquire)
    }
}

/// Names one component in the host.
#[derive(Clone)]
pub(crate) struct ComponentHandle {
    pub(crate) conn: Weak<Connection>,
    pub(crate) runtime: Weak<Runtime>,
    pub(crate) path: String,
    pub(crate) id: u64,
    pub(crate) timeout: Duration,
    /// A footer: its renders carry pi's footer data (statuses, provider count).
    pub(crate) footer: bool,
}

impl ComponentHandle {
    /// A factory building proxies of this component (the UI calls it again on a theme change).
    pub(crate) fn factory(self) -> ComponentFactory {
        Arc::new(move |theme: &Theme| Box::new(JsComponent::new(self.clone(), theme)) as Box<dyn Component>)
    }

    /// A factory building the custom editor's proxy.
    pub(crate) fn editor_factory(self) -> EditorComponentFactory {
        Arc::new(move |theme: &Theme| {
            Box::new(JsEditor { inner: JsComponent::new(self.clone(), theme), cache: None }) as Box<dyn EditorComponent>
        })
    }

    fn report(&self, error: String) {
        if let Some(runtime) = self.runtime.upgrade() {
            runtime.report(ExtensionError::new(&self.path, "render", error));
        }
    }

    fn params(&self, extra: Value) -> Value {
        let mut params = json!({"extensionPath": self.path, "id": self.id});
        if let (Some(obj), Value::Object(more)) = (params.as_object_mut(), extra) {
            obj.extend(more);
        }
        params
    }

    fn live(&self) -> Option<Arc<Connection>> {
        self.conn.upgrade().filter(|c| !c.is_dead())
    }
}

/// A component living in the JavaScript host.
pub(crate) struct JsComponent {
    handle: ComponentHandle,
    theme: Theme,
    /// Width, the sequence number of the answer and the lines drawn from it.
    cache: Option<(usize, u64, Lines)>,
    /// The last problem reported, so a component failing every frame is reported once.
    reported: Option<String>,
    /// The session epoch the host's snapshot is from.
    epoch: u64,
    /// Whether page keys go to the component (pi-tui's `capturesViewportInput`, sent with its
    /// lines).
    captures_viewport: bool,
    /// Whether the component has `handleMouse` (sent with its lines; older hosts never say so).
    handles_mouse: bool,
    /// A press it took: the rest of the gesture goes to the host's target of that press.
    in_gesture: bool,
}

impl JsComponent {
    pub(crate) fn new(handle: ComponentHandle, theme: &Theme) -> JsComponent {
        JsComponent {
            handle,
            theme: theme.clone(),
            cache: None,
            reported: None,
            epoch: SESSION_EPOCH.load(Ordering::Acquire),
            captures_viewport: false,
            handles_mouse: false,
            in_gesture: false,
        }
    }

    /// A fresh context snapshot when the session changed since the last one sent.
    fn fresh_snapshot(&mut self) -> Option<Value> {
        let epoch = SESSION_EPOCH.load(Ordering::Acquire);
        if epoch == self.epoch {
            return None;
        }
        let runtime = self.handle.runtime.upgrade()?;
        let ctx = crate::extensions::runtime::ExtensionContext { runtime, command: true };
        let snapshot = crate::extensions::subprocess::link::context_snapshot(&ctx, true);
        // A bound session's entries are left out while its lock is busy: the next frame asks again.
        if snapshot.get("entries").is_some() || snapshot.get("bound") != Some(&Value::Bool(true)) {
            self.epoch = epoch;
        }
        Some(snapshot)
    }

    fn problem(&mut self, error: String) {
        if self.reported.as_deref() != Some(error.as_str()) {
            self.handle.report(error.clone());
            self.reported = Some(error);
        }
    }

    /// Asks the host for the lines at `width`; `extra` joins the parameters.
    fn fetch(&mut self, conn: &Connection, width: usize, extra: Value) -> Vec<String> {
        let mut params = self.handle.params(json!({"width": width}));
        if let (Some(obj), Value::Object(more)) = (params.as_object_mut(), extra) {
            obj.extend(more);
        }
        if let (Some(obj), Some(snapshot)) = (params.as_object_mut(), self.fresh_snapshot()) {
            obj.insert("ctx".into(), snapshot);
        }
        if self.handle.footer
            && let (Some(obj), Some(runtime)) = (params.as_object_mut(), self.handle.runtime.upgrade())
        {
            let ui = runtime.ui();
            let statuses: Vec<Value> = ui.extension_statuses().into_iter().map(|(k, t)| json!([k, t])).collect();
            obj.insert(
                "footerData".into(),
                json!({"statuses": statuses, "providerCount": ui.available_provider_count()}),
            );
        }
        match conn.call_blocking("component.render", params, self.handle.timeout) {
            Ok(answer) => self.accept(&answer, width),
            Err(error) => {
                self.problem(error);
                Vec::new()
            }
        }
    }

    /// The host's answer as lines at `width`, themed and checked.
    fn accept(&mut self, answer: &Value, width: usize) -> Vec<String> {
        self.captures_viewport = answer.get("capturesViewportInput").and_then(Value::as_bool).unwrap_or(false);
        self.handles_mouse = answer.get("handlesMouse").and_then(Value::as_bool).unwrap_or(false);
        let mut error = answer.get("error").and_then(Value::as_str).map(str::to_owned);
        let raw = answer.get("lines").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
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

    /// The cached lines, or those the host pushed since, at `width`.
    fn cached(&mut self, conn: &Connection, width: usize) -> Option<Lines> {
        let (w, seq, lines) = self.cache.as_ref()?;
        if *w != width || self.epoch != SESSION_EPOCH.load(Ordering::Acquire) {
            return None;
        }
        let (seq, lines) = (*seq, lines.clone());
        match conn.bridge.newer(self.handle.id, width, seq) {
            Some((newer, answer)) => {
                let lines: Lines = self.accept(&answer, width).into();
                self.cache = Some((width, newer, lines.clone()));
                Some(lines)
            }
            None => Some(lines),
        }
    }
}

impl Component for JsComponent {
    fn render(&mut self, width: usize) -> Lines {
        let Some(conn) = self.handle.live() else {
            return Vec::new().into();
        };
        if let Some(lines) = self.cached(&conn, width) {
            return lines;
        }
        let seq = conn.bridge.now();
        let lines: Lines = self.fetch(&conn, width, json!({})).into();
        self.cache = Some((width, seq, lines.clone()));
        lines
    }

    fn handle_input(&mut self, data: &str) {
        if let Some(conn) = self.handle.conn.upgrade() {
            conn.notify("component.input", self.handle.params(json!({"data": data})));
        }
        self.cache = None;
    }

    fn invalidate(&mut self) {
        if let Some(conn) = self.handle.conn.upgrade() {
            conn.notify("component.invalidate", self.handle.params(json!({})));
        }
        self.cache = None;
    }

    fn set_focused(&mut self, focused: bool) {
        if let Some(conn) = self.handle.conn.upgrade() {
            conn.notify("component.focus", self.handle.params(json!({"focused": focused})));
        }
        self.cache = None;
    }

    fn wants_key_release(&self) -> bool {
        false
    }

    fn captures_viewport_input(&self) -> bool {
        self.captures_viewport
    }

    /// pi-tui's `handleMouse` in the host (`component.mouse`), with the event as pi's
    /// `TuiMouseEvent`; the rest of a gesture it took goes to the same target there.
    fn handle_mouse(&mut self, event: &MouseEvent) -> Option<MouseReply> {
        if !self.handles_mouse {
            return None;
        }
        let conn = self.handle.live()?;
        let target = self.in_gesture && event.kind != MouseEventType::Press && event.kind != MouseEventType::Wheel;
        let params = self.handle.params(json!({"event": mouse_event_json(event), "target": target}));
        let answer = match conn.call_blocking("component.mouse", params, self.handle.timeout) {
            Ok(answer) => answer,
            Err(error) => {
                self.problem(error);
                return None;
            }
        };
        if event.kind == MouseEventType::Click {
            self.in_gesture = false;
        }
        let flag = |name: &str| answer.get(name).and_then(Value::as_bool).unwrap_or(false);
        let result = MouseResult {
            handled: flag("handled"),
            capture: flag("capture"),
            focus: flag("focus"),
            render: answer.get("render").and_then(Value::as_bool),
        };
        if !answer.is_object() {
            return None;
        }
        if event.kind == MouseEventType::Press {
            self.in_gesture = true;
        }
        self.cache = None;
        Some(MouseReply::Own(result))
    }
}

/// pi-tui's `TuiMouseEvent` as JSON.
fn mouse_event_json(event: &MouseEvent) -> Value {
    let mut out = json!({
        "type": event.kind.as_str(), "button": event.button.as_str(),
        "x": event.x, "y": event.y, "screenX": event.screen_x, "screenY": event.screen_y,
        "width": event.width, "height": event.height,
        "shift": event.shift, "alt": event.alt, "ctrl": event.ctrl,
    });
    if let Some(obj) = out.as_object_mut() {
        if let Some(delta) = event.wheel_delta {
            obj.insert("wheelDelta".into(), json!(delta));
        }
        if let Some(count) = event.click_count {
            obj.insert("clickCount".into(), json!(count));
        }
    }
    out
}

/// A custom editor living in the JavaScript host (pi's `setEditorComponent`).
pub(crate) struct JsEditor {
    inner: JsComponent,
    /// The built-in editor's lines and text the cached lines were drawn over.
    cache: Option<(Lines, String)>,
}

impl EditorComponent for JsEditor {
    fn input(&mut self, data: &str, text: &str) -> Vec<String> {
        self.inner.cache = None;
        let Some(conn) = self.inner.handle.live() else { return vec![data.to_owned()] };
        let params = self.inner.handle.params(json!({"data": data, "text": text}));
        match conn.call_blocking("component.input", params, self.inner.handle.timeout) {
            Ok(answer) => answer
                .get("forward")
                .and_then(Value::as_array)
                .map(|keys| keys.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default(),
            Err(error) => {
                self.inner.problem(error);
                vec![data.to_owned()]
            }
        }
    }

    fn render(&mut self, width: usize, base: &Lines, text: &str) -> Lines {
        let Some(conn) = self.inner.handle.live() else { return base.clone() };
        let same = self.cache.as_ref().is_some_and(|(b, t)| b == base && t == text);
        if same && let Some(lines) = self.inner.cached(&conn, width) {
            return lines;
        }
        let seq = conn.bridge.now();
        let lines: Lines = self.inner.fetch(&conn, width, json!({"base": &base[..], "text": text})).into();
        self.inner.cache = Some((width, seq, lines.clone()));
        self.cache = Some((base.clone(), text.to_owned()));
        lines
    }

    fn invalidate(&mut self) {
        Component::invalidate(&mut self.inner);
    }

    fn set_focused(&mut self, focused: bool) {
        Component::set_focused(&mut self.inner, focused);
    }
}
