//! Renderers of an out-of-process extension (protocol version 2, method `render`): the extension
//! answers a component tree — `text`, `box`, `container`, `spacer`, `markdown` nodes, drawn here
//! with pi-tui, and `lines` for components it rendered itself — at the width asked for. Theme
//! colors arrive as placeholders (`ESC ] pi:fg:<token> BEL`, `ESC ] pi:bg:<token> BEL`) replaced
//! with the active theme's sequences.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use pi_tui::{Box as BoxComponent, Spacer, Text};
use pi_tui::{Component, ComponentRef, Container, Lines, StyleFn, Theme};
use serde_json::{Value, json};

use super::link::Link;
use super::protocol::InitializeResult;
use crate::extensions::api::ExtensionApi;

/// Replaces the theme placeholders of `text` (removes them without a theme).
pub(crate) fn apply_theme_opt(text: &str, theme: Option<&Theme>) -> String {
    match theme {
        Some(theme) => apply_theme(text, theme),
        None => strip_placeholders(text),
    }
}

fn strip_placeholders(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\x1b]pi:") {
        out.push_str(&rest[..at]);
        match rest[at..].find('\x07') {
            Some(end) => rest = &rest[at + end + 1..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Replaces the theme placeholders of `text`.
pub(crate) fn apply_theme(text: &str, theme: &Theme) -> String {
    const OPEN: &str = "\x1b]pi:";
    if !text.contains(OPEN) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(OPEN) {
        out.push_str(&rest[..at]);
        let after = &rest[at + OPEN.len()..];
        let Some(end) = after.find('\x07') else {
            out.push_str(&rest[at..]);
            return out;
        };
        let spec = &after[..end];
        let code = match spec.split_once(':') {
            Some(("fg", token)) => theme.fg_ansi(token).unwrap_or_default(),
            Some(("bg", token)) => theme.bg_ansi(token).unwrap_or_default(),
            _ => "",
        };
        out.push_str(code);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

fn style_of(node: &Value, theme: &Theme) -> Option<StyleFn> {
    let bg = node.get("bg")?;
    let prefix = apply_theme(bg.get("prefix")?.as_str()?, theme);
    let suffix = apply_theme(bg.get("suffix")?.as_str()?, theme);
    Some(Rc::new(move |text: &str| format!("{prefix}{text}{suffix}")))
}

fn usize_of(node: &Value, key: &str, default: usize) -> usize {
    node.get(key).and_then(Value::as_u64).map(|v| v as usize).unwrap_or(default)
}

/// Lines a component rendered on the extension's side.
struct FixedLines(Lines);

impl Component for FixedLines {
    fn render(&mut self, _width: usize) -> Lines {
        self.0.clone()
    }
}

/// Builds pi-tui components from a tree.
pub(crate) fn build(node: &Value, theme: &Theme) -> ComponentRef {
    let text = |key: &str| apply_theme(node.get(key).and_then(Value::as_str).unwrap_or_default(), theme);
    let children = || node.get("children").and_then(Value::as_array).cloned().unwrap_or_default();
    match node.get("type").and_then(Value::as_str).unwrap_or_default() {
        "markdown" => Rc::new(RefCell::new(super::remote_markdown::markdown_of(node, theme))),
        "text" => {
            let (px, py) = (usize_of(node, "paddingX", 1), usize_of(node, "paddingY", 1));
            match style_of(node, theme) {
                Some(bg) => Rc::new(RefCell::new(Text::with_bg(text("text"), px, py, bg))),
                None => Rc::new(RefCell::new(Text::new(text("text"), px, py))),
            }
        }
        "box" => {
            let mut b =
                BoxComponent::new(usize_of(node, "paddingX", 1), usize_of(node, "paddingY", 1), style_of(node, theme));
            for child in children() {
                b.add_child(build(&child, theme));
            }
            Rc::new(RefCell::new(b))
        }
        "container" => {
            let mut c = Container::new();
            for child in children() {
                c.add_child(build(&child, theme));
            }
            Rc::new(RefCell::new(c))
        }
        "spacer" => Rc::new(RefCell::new(Spacer::new(usize_of(node, "lines", 1)))),
        _ => {
            let lines: Vec<String> = node
                .get("lines")
                .and_then(Value::as_array)
                .map(|l| l.iter().map(|v| apply_theme(v.as_str().unwrap_or_default(), theme)).collect())
                .unwrap_or_default();
            Rc::new(RefCell::new(FixedLines(lines.into())))
        }
    }
}

/// A component an extension's renderer returned: rendered by the extension at each new width.
pub(crate) struct RemoteComponent {
    link: Arc<dyn Link>,
    params: Value,
    theme: Theme,
    cache: Option<(usize, Lines)>,
}

impl RemoteComponent {
    /// Asks for the tree at `width`; `None` when the renderer declined or failed (reported).
    fn fetch(link: &Arc<dyn Link>, params: &Value, width: usize) -> Option<Value> {
        let mut params = params.clone();
        if let Some(obj) = params.as_object_mut() {
            obj.insert("width".into(), json!(width));
        }
        match link.render_blocking(params) {
            Ok(answer) => answer.get("tree").cloned().filter(|t| !t.is_null()),
            Err(error) => {
                tracing::warn!(%error, "extension renderer failed");
                None
            }
        }
    }

    /// The component, or `None` when the renderer returns nothing.
    pub(crate) fn create(link: Arc<dyn Link>, params: Value, theme: &Theme) -> Option<Box<dyn Component>> {
        const PROBE_WIDTH: usize = 80;
        let tree = Self::fetch(&link, &params, PROBE_WIDTH)?;
        let lines = build(&tree, theme).borrow_mut().render(PROBE_WIDTH);
        Some(Box::new(RemoteComponent { link, params, theme: theme.clone(), cache: Some((PROBE_WIDTH, lines)) }))
    }
}

impl Component for RemoteComponent {
    fn render(&mut self, width: usize) -> Lines {
        if let Some((w, lines)) = &self.cache
            && *w == width
        {
            return lines.clone();
        }
        let lines = match Self::fetch(&self.link, &self.params, width) {
            Some(tree) => build(&tree, &self.theme).borrow_mut().render(width),
            None => Vec::new().into(),
        };
        self.cache = Some((width, lines.clone()));
        lines
    }

    fn invalidate(&mut self) {
        self.cache = None;
    }
}

/// Registers the tool renderers an extension declared: each tool's own `renderCall` /
/// `renderResult`, and, when it registered resolvers (`registerToolRenderer`), a renderer asked
/// for every tool (the host answers `null` for tools its resolvers leave alone).
pub(crate) fn register_tool_renderers(api: &ExtensionApi, link: &Arc<dyn Link>, init: &InitializeResult) {
    use crate::extensions::tool_renderers::{ANY_TOOL, ToolRenderers};
    let call = |link: Arc<dyn Link>| -> crate::extensions::ToolCallRenderer {
        Arc::new(move |name, args, theme| {
            let params = json!({"kind": "toolCall", "toolName": name, "args": args});
            RemoteComponent::create(link.clone(), params, theme)
        })
    };
    let result = |link: Arc<dyn Link>| -> crate::extensions::ToolResultRenderer {
        Arc::new(move |name, args, result, options, theme| {
            let params = json!({"kind": "toolResult", "toolName": name, "args": args, "result": result,
                "expanded": options.expanded, "isPartial": options.is_partial});
            RemoteComponent::create(link.clone(), params, theme)
        })
    };
    for tool in init.tools.iter().filter(|t| t.has_render_call || t.has_render_result) {
        let renderers = ToolRenderers {
            render_call: tool.has_render_call.then(|| call(link.clone())),
            render_result: tool.has_render_result.then(|| result(link.clone())),
        };
        let _ = api.register_tool_renderer(&tool.name, renderers);
    }
    if init.tool_renderers > 0 {
        let renderers =
            ToolRenderers { render_call: Some(call(link.clone())), render_result: Some(result(link.clone())) };
        let _ = api.register_tool_renderer(ANY_TOOL, renderers);
    }
}

/// Registers the entry and message renderers an extension declared.
pub(crate) fn register_renderers(api: &ExtensionApi, link: &Arc<dyn Link>, entries: &[String], messages: &[String]) {
    for custom_type in entries {
        let link = link.clone();
        let ty = custom_type.clone();
        let _ = api.register_entry_renderer(custom_type, move |entry, options, theme| {
            let params = json!({"kind": "entry", "customType": ty, "entry": entry, "expanded": options.expanded});
            RemoteComponent::create(link.clone(), params, theme)
        });
    }
    for custom_type in messages {
        let link = link.clone();
        let ty = custom_type.clone();
        let _ = api.register_message_renderer(custom_type, move |message, options, theme| {
            let params = json!({"kind": "message", "customType": ty, "message": message, "expanded": options.expanded, "outputPad": options.output_pad});
            RemoteComponent::create(link.clone(), params, theme)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::ColorMode;

    #[test]
    fn placeholders_become_the_themes_sequences_or_nothing() {
        let theme = Theme::dark(ColorMode::Truecolor).unwrap();
        let text = "\x1b]pi:fg:accent\x07[audit]\x1b[39m read";
        let accent = theme.fg_ansi("accent").unwrap().to_owned();
        assert_eq!(apply_theme(text, &theme), format!("{accent}[audit]\x1b[39m read"));
        assert_eq!(apply_theme_opt(text, None), "[audit]\x1b[39m read");
        assert_eq!(apply_theme("\x1b]pi:fg:no-such-token\x07x", &theme), "x");
        let tree = serde_json::json!({"type": "box", "paddingX": 1, "paddingY": 0,
            "children": [{"type": "text", "text": "hi", "paddingX": 0, "paddingY": 0}, {"type": "lines", "lines": ["raw"]}]});
        assert_eq!(build(&tree, &theme).borrow_mut().render(6).to_vec(), [" hi   ", " raw  "]);
    }
}
