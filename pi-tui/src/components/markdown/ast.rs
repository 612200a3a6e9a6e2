//! From comrak's AST to a token list shaped like marked's (what pi's renderer walks).

use comrak::nodes::{AstNode, ListType, NodeValue};
use comrak::{Arena, Options, parse_document};

use super::math::Math;

/// An inline token.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Inline {
    Text(String),
    Strong(Vec<Inline>),
    Em(Vec<Inline>),
    Del(Vec<Inline>),
    Code(String),
    Link {
        children: Vec<Inline>,
        href: String,
        text: String,
    },
    Br,
    Html(String),
    /// Inline math (`$…$`, `\(…\)`).
    Latex(Math),
}

/// A block token. `Space` stands for marked's blank-line token.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Block {
    Heading(u8, Vec<Inline>),
    Paragraph(Vec<Inline>),
    Code {
        lang: String,
        text: String,
    },
    List {
        ordered: bool,
        start: usize,
        loose: bool,
        items: Vec<Item>,
    },
    Quote(Vec<Block>),
    Hr,
    Html(String),
    Table {
        header: Vec<Vec<Inline>>,
        rows: Vec<Vec<Vec<Inline>>>,
        raw: String,
    },
    /// Display math (`$$…$$`, `\[…\]`).
    Latex(Math),
    Space,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Item {
    pub task: Option<bool>,
    /// The item's marker as written (`3) `, `* `), for `preserveOrderedListMarkers`.
    pub marker: String,
    pub blocks: Vec<Block>,
}

impl Block {
    /// marked's token type name, as the spacing rules compare it.
    pub fn kind(&self) -> &'static str {
        match self {
            Block::Space => "space",
            Block::List { .. } => "list",
            Block::Paragraph(_) => "paragraph",
            _ => "other",
        }
    }
}

fn plain_text(inlines: &[Inline]) -> String {
    let mut s = String::new();
    for i in inlines {
        match i {
            Inline::Text(t) | Inline::Code(t) | Inline::Html(t) => s.push_str(t),
            Inline::Strong(c) | Inline::Em(c) | Inline::Del(c) => s.push_str(&plain_text(c)),
            Inline::Link { text, .. } => s.push_str(text),
            Inline::Latex(math) => s.push_str(&math.raw),
            Inline::Br => s.push('\n'),
        }
    }
    s
}

fn inlines<'a>(node: &'a AstNode<'a>) -> Vec<Inline> {
    let mut out: Vec<Inline> = Vec::new();
    let push_text = |out: &mut Vec<Inline>, t: &str| {
        if let Some(Inline::Text(prev)) = out.last_mut() {
            prev.push_str(t);
        } else {
            out.push(Inline::Text(t.to_string()));
        }
    };
    for child in node.children() {
        let value = child.data().value.clone();
        match value {
            NodeValue::Text(t) => push_text(&mut out, &t),
            NodeValue::SoftBreak => push_text(&mut out, "\n"),
            NodeValue::LineBreak => out.push(Inline::Br),
            NodeValue::Code(c) => out.push(Inline::Code(c.literal)),
            NodeValue::Strong => out.push(Inline::Strong(inlines(child))),
            NodeValue::Emph => out.push(Inline::Em(inlines(child))),
            NodeValue::Strikethrough => out.push(Inline::Del(inlines(child))),
            NodeValue::Link(l) => {
                let children = inlines(child);
                let text = plain_text(&children);
                out.push(Inline::Link { children, href: l.url, text });
            }
            NodeValue::Image(_) => {
                let alt = plain_text(&inlines(child));
                push_text(&mut out, &alt);
            }
            NodeValue::HtmlInline(h) => out.push(Inline::Html(h)),
            // Only parsed with `preserveBackslashEscapes`: the escape as written.
            NodeValue::Escaped => push_text(&mut out, &format!("\\{}", plain_text(&inlines(child)))),
            _ => out.extend(inlines(child)),
        }
    }
    out
}

fn is_comment_only(html: &str) -> bool {
    let mut rest = html;
    let mut stripped = String::new();
    while let Some(start) = rest.find("<!--") {
        stripped.push_str(&rest[..start]);
        match rest[start..].find("-->") {
            Some(end) => rest = &rest[start + end + 3..],
            None => rest = "",
        }
    }
    stripped.push_str(rest);
    stripped.trim().is_empty()
}

/// Strip `<!-- … -->` comments (an unterminated one runs to the end).
pub(crate) fn strip_html_comments(html: &str) -> String {
    let mut rest = html;
    let mut out = String::new();
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        rest = match rest[start..].find("-->") {
            Some(end) => &rest[start + end + 3..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

struct Ctx<'s> {
    lines: Vec<&'s str>,
}

impl Ctx<'_> {
    fn raw(&self, from: usize, to: usize) -> String {
        let from = from.max(1) - 1;
        let to = to.min(self.lines.len());
        if from >= to {
            return String::new();
        }
        self.lines[from..to].join("\n")
    }

    /// Newlines following line `end` up to `next_start` (or the end of the source).
    fn blank_gap(&self, end: usize, next_start: Option<usize>) -> usize {
        match next_start {
            Some(n) => n.saturating_sub(end + 1),
            None => {
                // Lines after `end`: `split('\n')` leaves a final "" after a trailing newline.
                let after = self.lines.len().saturating_sub(end);
                if after == 0 { 0 } else { after - 1 }
            }
        }
    }
}

fn convert<'a>(node: &'a AstNode<'a>, ctx: &Ctx<'_>) -> Option<Block> {
    let data = node.data();
    let (start, end) = (data.sourcepos.start.line, data.sourcepos.end.line);
    let value = data.value.clone();
    drop(data);
    Some(match value {
        NodeValue::Heading(h) => Block::Heading(h.level, inlines(node)),
        NodeValue::Paragraph => Block::Paragraph(inlines(node)),
        NodeValue::CodeBlock(c) => {
            let mut text = c.literal.strip_suffix('\n').unwrap_or(&c.literal).to_string();
            if c.fenced && !c.closed {
                // A partially streamed closing fence (e.g. "``") is not code.
                let fence = (c.fence_char as char).to_string();
                if let Some(last) = text.rsplit('\n').next()
                    && !last.is_empty()
                    && last.len() < c.fence_length
                    && last == fence.repeat(last.len())
                {
                    let cut = text.len() - last.len();
                    text.truncate(cut);
                    if text.ends_with('\n') {
                        text.pop();
                    }
                }
            }
            let lang = c.info.split_whitespace().next().unwrap_or("").to_string();
            Block::Code { lang, text }
        }
        NodeValue::List(l) => {
            let items = node
                .children()
                .enumerate()
                .map(|(i, item)| {
                    let (task, own) = match &item.data().value {
                        NodeValue::TaskItem(t) => (Some(t.symbol.is_some()), None),
                        NodeValue::Item(own) => (None, Some(*own)),
                        _ => (None, None),
                    };
                    let blocks = item.children().filter_map(|c| convert(c, ctx)).collect();
                    Item { task, marker: marker_of(&l, own.as_ref(), i), blocks }
                })
                .collect();
            Block::List { ordered: l.list_type == ListType::Ordered, start: l.start, loose: !l.tight, items }
        }
        NodeValue::BlockQuote => Block::Quote(blocks(node, ctx, false)),
        NodeValue::ThematicBreak => Block::Hr,
        NodeValue::HtmlBlock(h) => {
            if is_comment_only(&h.literal) {
                return None;
            }
            Block::Html(h.literal)
        }
        NodeValue::Table(_) => {
            let mut rows_iter = node.children();
            let cells = |row: &'a AstNode<'a>| row.children().map(inlines).collect::<Vec<_>>();
            let header = rows_iter.next().map(cells).unwrap_or_default();
            let rows = rows_iter.map(cells).collect();
            Block::Table { header, rows, raw: ctx.raw(start, end) }
        }
        _ => return None,
    })
}

fn consumes_trailing_newlines(b: &Block) -> bool {
    matches!(b, Block::Heading(..) | Block::Hr | Block::Html(_))
}

/// Convert the children of a container into blocks, inserting `Space` where marked would emit a
/// blank-line token.
fn blocks<'a>(parent: &'a AstNode<'a>, ctx: &Ctx<'_>, top: bool) -> Vec<Block> {
    let converted: Vec<(Block, usize, usize)> = parent
        .children()
        .filter_map(|c| {
            let (s, e) = {
                let d = c.data();
                (d.sourcepos.start.line, d.sourcepos.end.line)
            };
            convert(c, ctx).map(|b| (b, s, e))
        })
        .collect();
    let mut out = Vec::new();
    for (i, (block, _, end)) in converted.iter().enumerate() {
        let next_start = converted.get(i + 1).map(|n| n.1);
        if next_start.is_none() && !top {
            out.push(block.clone());
            continue;
        }
        let gap = ctx.blank_gap(*end, next_start);
        let space = !consumes_trailing_newlines(block) && gap >= 1;
        out.push(block.clone());
        if space {
            out.push(Block::Space);
        }
    }
    out
}

/// A list item's marker as written: its number and delimiter (`3) `), or its bullet (`* `).
fn marker_of(list: &comrak::nodes::NodeList, own: Option<&comrak::nodes::NodeList>, index: usize) -> String {
    let item = own.unwrap_or(list);
    if list.list_type == ListType::Ordered {
        let number = if own.is_some() { item.start } else { list.start + index };
        let delimiter = if item.delimiter == comrak::nodes::ListDelimType::Paren { ')' } else { '.' };
        format!("{number}{delimiter} ")
    } else {
        format!("{} ", item.bullet_char as char)
    }
}

/// Parse markdown (GFM: tables, strikethrough, autolinks, task lists) into marked-like blocks;
/// with `keep_escapes`, a backslash escape keeps its backslash.
pub(crate) fn parse(source: &str, keep_escapes: bool) -> Vec<Block> {
    let arena = Arena::new();
    let root = parse_document(&arena, source, &options(keep_escapes));
    let ctx = Ctx { lines: source.split('\n').collect() };
    blocks(root, &ctx, true)
}

/// Where inline math may be (paragraph, heading and table lines), and where display math may
/// start a line (outside lists, quotes, code, HTML and tables), from a first parse.
#[derive(Debug, Default)]
pub(crate) struct Outline {
    /// 1-based inclusive line ranges of top-level blocks display math cannot start in.
    pub closed: Vec<(usize, usize)>,
    /// 1-based inclusive line ranges holding inline text, and whether they are table rows.
    pub inline: Vec<(usize, usize, bool)>,
}

/// The [`Outline`] of `source`.
pub(crate) fn outline(source: &str) -> Outline {
    let arena = Arena::new();
    let root = parse_document(&arena, source, &options(false));
    let mut outline = Outline::default();
    for child in root.children() {
        let data = child.data();
        let (start, end) = (data.sourcepos.start.line, data.sourcepos.end.line);
        if !matches!(data.value, NodeValue::Paragraph | NodeValue::Heading(_)) {
            outline.closed.push((start, end));
        }
    }
    for node in root.descendants() {
        let data = node.data();
        let (start, end) = (data.sourcepos.start.line, data.sourcepos.end.line);
        match data.value {
            NodeValue::Paragraph => outline.inline.push((start, end, false)),
            NodeValue::Heading(_) => outline.inline.push((start, start, false)),
            NodeValue::Table(_) => outline.inline.push((start, end, true)),
            _ => {}
        }
    }
    outline
}

fn options(keep_escapes: bool) -> Options<'static> {
    let mut options = Options::default();
    options.parse.escaped_char_spans = keep_escapes;
    options.extension.table = true;
    options.extension.strikethrough = true;
    options.extension.autolink = true;
    options.extension.tasklist = true;
    options
}
