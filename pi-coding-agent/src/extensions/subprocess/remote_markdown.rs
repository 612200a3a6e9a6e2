//! pi-tui's `Markdown` of an out-of-process extension, drawn here with pi-rs's pi-tui: the
//! `markdown` node a host sends (in a renderer's tree, or asked for alone with
//! `ui.renderMarkdown` when the extension renders it itself) carries the text, the padding, the
//! theme's styles as the text around a marker (`{prefix, suffix}`, theme placeholders inside),
//! whether to highlight code, and the default text style.
//!
//! A theme function that is not a wrap (`{"call": true}`) and an extension's own `highlightCode`
//! (`"highlight": "call"`) are answered by the host: the node carries what it answered so far
//! (`styled`: key → text → result; `highlighted`: `lang\0code` → lines), and a span not in it is
//! drawn as is and listed in the answer's `missing`; the host runs the functions on those and asks
//! again, until nothing is missing (pi-tui calls them while it draws, in the same order).

use std::cell::RefCell;
use std::rc::Rc;

use pi_tui::components::markdown::{HighlightFn, highlighter};
use pi_tui::components::{DefaultTextStyle, MarkdownOptions};
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

/// The spans a node's host-answered functions still have to answer: `(key, text)`, in order.
type Missing = Rc<RefCell<Vec<(String, String)>>>;

fn note_missing(missing: &Missing, key: &str, text: &str) {
    let mut list = missing.borrow_mut();
    if !list.iter().any(|(k, t)| k == key && t == text) {
        list.push((key.to_owned(), text.to_owned()));
    }
}

/// A host-answered style: the host's result for `text` (placeholders resolved), or the text as is
/// (noted as missing).
fn answered(node: &Value, key: &str, theme: &Theme, missing: &Missing) -> StyleFn {
    let known = node.get("styled").and_then(|s| s.get(key)).cloned().unwrap_or(Value::Null);
    let (theme, missing, key) = (theme.clone(), missing.clone(), key.to_owned());
    Rc::new(move |text: &str| match known.get(text).and_then(Value::as_str) {
        Some(result) => apply_theme(result, &theme),
        None => {
            note_missing(&missing, &key, text);
            text.to_owned()
        }
    })
}

/// An extension's own `highlightCode`: the host's lines for the block, or its lines as is.
fn answered_highlight(node: &Value, theme: &Theme, missing: &Missing) -> HighlightFn {
    let known = node.get("highlighted").cloned().unwrap_or(Value::Null);
    let (theme, missing) = (theme.clone(), missing.clone());
    Rc::new(move |code: &str, lang: Option<&str>| {
        let key = format!("{}\u{0}{code}", lang.unwrap_or_default());
        match known.get(&key).and_then(Value::as_array) {
            Some(lines) => lines.iter().map(|l| apply_theme(l.as_str().unwrap_or_default(), &theme)).collect(),
            None => {
                note_missing(&missing, "highlightCode", &key);
                code.split('\n').map(str::to_owned).collect()
            }
        }
    })
}

/// The Markdown theme of a node: each sampled style, the text as is where a style is missing.
fn theme_of(node: &Value, theme: &Theme, missing: &Missing) -> MarkdownTheme {
    let styles = node.get("theme");
    let style = |key: &str| -> StyleFn {
        let entry = styles.and_then(|s| s.get(key));
        if entry.and_then(|e| e.get("call")).and_then(Value::as_bool).unwrap_or(false) {
            return answered(node, key, theme, missing);
        }
        sampled(entry, theme).unwrap_or_else(|| Rc::new(|text: &str| text.to_owned()))
    };
    let highlight = node.get("highlight");
    let highlight_code = if highlight.and_then(Value::as_str) == Some("call") {
        Some(answered_highlight(node, theme, missing))
    } else if highlight.and_then(Value::as_bool).unwrap_or(false) {
        Some(highlighter(Rc::new(theme.clone())))
    } else {
        None
    };
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
        highlight_code,
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
    markdown_noting(node, theme, &Missing::default())
}

/// The Markdown component of a node, noting the spans its host-answered functions still miss.
fn markdown_noting(node: &Value, theme: &Theme, missing: &Missing) -> Markdown {
    let text = node.get("text").and_then(Value::as_str).unwrap_or_default();
    let mut markdown = Markdown::new(
        text,
        usize_of(node, "paddingX", 1),
        usize_of(node, "paddingY", 1),
        theme_of(node, theme, missing),
    );
    markdown.set_default_style(default_style_of(node, theme));
    let option = |key: &str| node.get("options").and_then(|o| o.get(key)).and_then(Value::as_bool).unwrap_or(false);
    markdown.set_options(MarkdownOptions {
        preserve_ordered_list_markers: option("preserveOrderedListMarkers"),
        preserve_backslash_escapes: option("preserveBackslashEscapes"),
        render_latex: node.get("options").and_then(|o| o.get("renderLatex")).and_then(Value::as_bool).unwrap_or(true),
    });
    markdown
}

/// `ui.renderMarkdown` (`{tree, width}`): the node's lines at `width`, as `{lines}`, with
/// `missing` (`[{key, text}]`) when host-answered functions have spans to answer first.
pub(crate) fn render_markdown(params: &Value, theme: &Theme) -> Value {
    let width = params.get("width").and_then(Value::as_u64).unwrap_or(80).max(1) as usize;
    let node = params.get("tree").cloned().unwrap_or(Value::Null);
    let missing = Missing::default();
    let lines = markdown_noting(&node, theme, &missing).render(width);
    let missing: Vec<Value> = missing.borrow().iter().map(|(key, text)| json!({"key": key, "text": text})).collect();
    if missing.is_empty() {
        json!({ "lines": lines.iter().collect::<Vec<_>>() })
    } else {
        json!({ "lines": lines.iter().collect::<Vec<_>>(), "missing": missing })
    }
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

    /// pi-tui's `preserveOrderedListMarkers` and `preserveBackslashEscapes`, on and off, draw the
    /// reference's lines (`fixtures/jstui/markdown_calls.json`, `options`).
    #[test]
    fn list_marker_and_escape_options_draw_as_pi_tui() {
        let fixture: Value =
            serde_json::from_str(include_str!("../../../tests/fixtures/jstui/markdown_calls.json")).expect("fixture");
        let theme = Theme::dark(ColorMode::Truecolor).expect("dark theme");
        let cases = fixture["options"].as_array().expect("option cases");
        assert!(cases.len() >= 4);
        for case in cases {
            let node = json!({
                "type": "markdown", "text": case["text"], "paddingX": 0, "paddingY": 0,
                "theme": {"listBullet": {"prefix": "<", "suffix": ">"}}, "options": case["options"],
            });
            let reply = render_markdown(&json!({"tree": node, "width": 40}), &theme);
            assert_eq!(reply["lines"], case["lines"], "{}", case["options"]);
        }
    }

    /// An extension's Markdown draws math as pi-tui 1.6.0's, with `renderLatex` on (the default)
    /// and off: the lines `pi-tui/tests/fixtures/latex_markdown.mjs` recorded from the reference,
    /// its SGR theme crossing as sampled wraps.
    #[test]
    fn math_and_the_render_latex_option_draw_as_pi_tui() {
        let fixture: Value =
            serde_json::from_str(include_str!("../../../../pi-tui/tests/fixtures/latex_markdown.json"))
                .expect("fixture");
        let theme = Theme::dark(ColorMode::Truecolor).expect("dark theme");
        let wrap = |on: u8, off: u8| json!({"prefix": format!("\x1b[{on}m"), "suffix": format!("\x1b[{off}m")});
        let styles = json!({
            "heading": wrap(33, 39), "link": wrap(34, 39), "linkUrl": wrap(90, 39), "code": wrap(35, 39),
            "codeBlock": wrap(32, 39), "codeBlockBorder": wrap(90, 39), "quote": wrap(36, 39), "quoteBorder": wrap(90, 39),
            "hr": wrap(90, 39), "listBullet": wrap(36, 39), "bold": wrap(1, 22), "italic": wrap(3, 23),
            "strikethrough": wrap(9, 29), "underline": wrap(4, 24),
        });
        let cases = fixture.as_array().expect("cases");
        assert!(cases.len() > 100);
        for case in cases {
            let node = json!({
                "type": "markdown", "text": case["text"], "paddingX": case.get("px").cloned().unwrap_or(json!(0)),
                "paddingY": 0, "theme": styles, "options": {"renderLatex": case["renderLatex"]},
            });
            let reply = render_markdown(&json!({"tree": node, "width": case["width"]}), &theme);
            assert_eq!(reply["lines"], case["expected"], "{} at {}", case["text"], case["width"]);
        }
    }

    /// The theme functions `tests/fixtures/jstui/record_markdown_calls.mjs` gives pi-tui 1.6.0's
    /// Markdown, answered as the host answers them.
    fn answer(key: &str, text: &str) -> Value {
        match key {
            "heading" => json!(text.to_uppercase()),
            "bold" => json!(text.split(' ').map(|w| format!("[{w}]")).collect::<Vec<_>>().join(" ")),
            "code" => json!(text.replace(' ', "·")),
            "listBullet" => json!(format!("<{}> ", text.trim())),
            "hr" => json!(format!("={}=", text.encode_utf16().count())),
            "codeBlockBorder" => json!(text.replace('`', "~")),
            "quote" => json!(text.to_lowercase()),
            "highlightCode" => {
                let (lang, code) = text.split_once('\u{0}').expect("lang and code");
                let lang = if lang.is_empty() { "-" } else { lang };
                json!(
                    code.split('\n')
                        .enumerate()
                        .map(|(i, l)| format!("{lang}{i}|{}", l.to_uppercase()))
                        .collect::<Vec<_>>()
                )
            }
            other => panic!("no function for {other}"),
        }
    }

    /// Theme functions that are not wraps and an extension's own `highlightCode` are asked of the
    /// host span by span (nested: a heading's bold text first) until nothing is missing; the lines
    /// are pi-tui 1.6.0's for the same functions (`fixtures/jstui/markdown_calls.json`).
    #[test]
    fn host_answered_styles_and_highlighting_draw_as_pi_tui() {
        let fixture: Value =
            serde_json::from_str(include_str!("../../../tests/fixtures/jstui/markdown_calls.json")).expect("fixture");
        let theme = Theme::dark(ColorMode::Truecolor).expect("dark theme");
        let wrap = |prefix: &str, suffix: &str| json!({"prefix": prefix, "suffix": suffix});
        let call = json!({"call": true});
        for case in fixture["cases"].as_array().expect("cases") {
            let mut node = json!({
                "type": "markdown", "text": fixture["text"], "paddingX": 1, "paddingY": 0, "highlight": "call",
                "theme": {
                    "heading": call, "bold": call, "code": call, "listBullet": call, "hr": call,
                    "codeBlockBorder": call, "quote": call, "italic": wrap("_", "_"), "link": wrap("<", ">"),
                    "linkUrl": wrap("", ""), "quoteBorder": wrap("", ""), "codeBlock": wrap("", ""),
                    "strikethrough": wrap("", ""), "underline": wrap("", ""),
                },
                "styled": {}, "highlighted": {},
            });
            let mut rounds = 0;
            let lines = loop {
                let reply = render_markdown(&json!({"tree": node, "width": case["width"]}), &theme);
                let Some(missing) = reply.get("missing").and_then(Value::as_array) else {
                    break reply["lines"].clone();
                };
                assert!(!missing.is_empty());
                for span in missing {
                    let (key, text) = (span["key"].as_str().expect("key"), span["text"].as_str().expect("text"));
                    let table =
                        if key == "highlightCode" { &mut node["highlighted"] } else { &mut node["styled"][key] };
                    if table.is_null() {
                        *table = json!({});
                    }
                    table[text] = answer(key, text);
                }
                rounds += 1;
                assert!(rounds < 10, "the spans never settle");
            };
            assert!(rounds >= 2, "nested styles take more than one round: {rounds}");
            assert_eq!(lines, case["lines"], "width {}", case["width"]);
        }
    }
}
