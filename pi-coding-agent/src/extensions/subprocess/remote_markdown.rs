//! pi-tui's `Markdown` of an out-of-process extension, drawn here with pi-rs's pi-tui: the
//! `markdown` node a host sends (in a renderer's tree, or asked for alone with
//! `ui.renderMarkdown` when the extension renders it itself) carries the text, the padding, the
//! theme's styles as the text around a marker (`{prefix, suffix}`, theme placeholders inside),
//! whether to highlight code, and the default text style.

use std::rc::Rc;

use pi_tui::components::DefaultTextStyle;
use pi_tui::components::markdown::highlighter;
use pi_tui::{Component, Markdown, MarkdownTheme, StyleFn, Theme};
use serde_json::{Value, json};

use super::remote_render::apply_theme;

/// A sampled style (`{prefix, suffix}`), its placeholders resolved; `None` when absent.
fn sampled(style: Option<&Value>, theme: &Theme) -> Option<StyleFn> {
    let style = style?;
    let prefix = apply_theme(style.get("prefix")?.as_str()?, theme);
    let suffix = apply_theme(style.get("suffix")?.as_str()?, theme);
    Some(Rc::new(move |text: &str| format!("{prefix}{text}{suffix}")))
}

/// The Markdown theme of a node: each sampled style, the text as is where a style is missing.
fn theme_of(node: &Value, theme: &Theme) -> MarkdownTheme {
    let styles = node.get("theme");
    let style = |key: &str| -> StyleFn {
        sampled(styles.and_then(|s| s.get(key)), theme).unwrap_or_else(|| Rc::new(|text: &str| text.to_owned()))
    };
    let highlight = node.get("highlight").and_then(Value::as_bool).unwrap_or(false);
    MarkdownTheme {
        heading: style("heading"),
        link: style("link"),
        link_url: style("linkUrl"),
        code: style("code"),
        code_block: style("codeBlock"),
        code_block_border: style("codeBlockBorder"),
        quote: style("quote"),
        quote_border: style("quoteBorder"),
        hr: style("hr"),
        list_bullet: style("listBullet"),
        bold: style("bold"),
        italic: style("italic"),
        strikethrough: style("strikethrough"),
        underline: style("underline"),
        highlight_code: highlight.then(|| highlighter(Rc::new(theme.clone()))),
        code_block_indent: node.get("codeBlockIndent").and_then(Value::as_str).unwrap_or("  ").to_owned(),
    }
}

fn default_style_of(node: &Value, theme: &Theme) -> Option<DefaultTextStyle> {
    let d = node.get("defaultTextStyle").filter(|d| d.is_object())?;
    let flag = |key: &str| d.get(key).and_then(Value::as_bool).unwrap_or(false);
    Some(DefaultTextStyle {
        color: sampled(d.get("color"), theme),
        bg_color: sampled(d.get("bg"), theme),
        bold: flag("bold"),
        italic: flag("italic"),
        strikethrough: flag("strikethrough"),
        underline: flag("underline"),
    })
}

fn usize_of(node: &Value, key: &str, default: usize) -> usize {
    node.get(key).and_then(Value::as_u64).map(|v| v as usize).unwrap_or(default)
}

/// The Markdown component of a `markdown` node.
pub(crate) fn markdown_of(node: &Value, theme: &Theme) -> Markdown {
    let text = node.get("text").and_then(Value::as_str).unwrap_or_default();
    let mut markdown =
        Markdown::new(text, usize_of(node, "paddingX", 1), usize_of(node, "paddingY", 1), theme_of(node, theme));
    markdown.set_default_style(default_style_of(node, theme));
    markdown
}

/// `ui.renderMarkdown` (`{tree, width}`): the node's lines at `width`, as `{lines}`.
pub(crate) fn render_markdown(params: &Value, theme: &Theme) -> Value {
    let width = params.get("width").and_then(Value::as_u64).unwrap_or(80).max(1) as usize;
    let node = params.get("tree").cloned().unwrap_or(Value::Null);
    let lines = markdown_of(&node, theme).render(width);
    json!({ "lines": lines.iter().collect::<Vec<_>>() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::ColorMode;

    #[test]
    fn sampled_styles_and_padding_shape_the_lines() {
        let theme = Theme::dark(ColorMode::Truecolor).expect("dark theme");
        let node = json!({
            "type": "markdown",
            "text": "# Title\n\nSome **bold** text",
            "paddingX": 2,
            "paddingY": 0,
            "theme": {"heading": {"prefix": "<h>", "suffix": "</h>"}, "bold": {"prefix": "<b>", "suffix": "</b>"}},
        });
        let answer = render_markdown(&json!({"tree": node, "width": 30}), &theme);
        let lines: Vec<&str> = answer["lines"].as_array().expect("lines").iter().filter_map(Value::as_str).collect();
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[0].starts_with("  <h>"), "{:?}", lines[0]);
        assert!(lines[2].contains("<b>bold</b>"), "{:?}", lines[2]);
        assert_eq!(lines[1], " ".repeat(30));
    }
}
