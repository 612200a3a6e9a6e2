//! pi's token renderer (`renderToken`, `renderInlineTokens`, `renderList`, `renderTable`).

use super::ast::{Block, Inline, strip_html_comments};
use super::{DefaultTextStyle, MarkdownTheme};
use crate::ansi::{visible_width, wrap_text_with_ansi};
use crate::latex::text as latex_text;
use crate::render_latex;

/// How plain text is styled inside a context, and the prefix that re-opens that style after an
/// inline element closes its own.
pub(crate) struct StyleCtx<'a> {
    apply: Box<dyn Fn(&str) -> String + 'a>,
    prefix: String,
}

/// The SGR prefix a style function opens with (pi samples it with a NUL sentinel).
fn style_prefix(f: &dyn Fn(&str) -> String) -> String {
    let styled = f("\0");
    styled.find('\0').map(|i| styled[..i].to_string()).unwrap_or_default()
}

pub(crate) struct Renderer<'a> {
    pub theme: &'a MarkdownTheme,
    pub default_style: Option<&'a DefaultTextStyle>,
    pub hyperlinks: bool,
    /// pi-tui's `preserveOrderedListMarkers`: list markers as written.
    pub keep_markers: bool,
    /// pi-tui's `renderLatex`: math as Unicode text.
    pub render_latex: bool,
}

impl<'a> Renderer<'a> {
    fn apply_default(&self, text: &str) -> String {
        let Some(d) = self.default_style else {
            return text.to_string();
        };
        let mut s = text.to_string();
        if let Some(c) = &d.color {
            s = c(&s);
        }
        if d.bold {
            s = (self.theme.bold)(&s);
        }
        if d.italic {
            s = (self.theme.italic)(&s);
        }
        if d.strikethrough {
            s = (self.theme.strikethrough)(&s);
        }
        if d.underline {
            s = (self.theme.underline)(&s);
        }
        s
    }

    fn default_ctx(&self) -> StyleCtx<'_> {
        let prefix =
            if self.default_style.is_some() { style_prefix(&|t: &str| self.apply_default(t)) } else { String::new() };
        StyleCtx { apply: Box::new(move |t: &str| self.apply_default(t)), prefix }
    }

    /// `renderInlineTokens`.
    pub fn inline(&self, tokens: &[Inline], ctx: Option<&StyleCtx<'_>>) -> String {
        let owned;
        let ctx = match ctx {
            Some(c) => c,
            None => {
                owned = self.default_ctx();
                &owned
            }
        };
        let apply_nl = |t: &str| t.split('\n').map(|s| (ctx.apply)(s)).collect::<Vec<_>>().join("\n");
        let mut result = String::new();
        let mut drop_leading_space = false;
        for (i, token) in tokens.iter().enumerate() {
            let dropping = std::mem::take(&mut drop_leading_space);
            match token {
                Inline::Text(t) => {
                    let t = if dropping { t.trim_start_matches([' ', '\t']) } else { t };
                    result.push_str(&apply_nl(t));
                }
                Inline::Strong(c) => {
                    result.push_str(&(self.theme.bold)(&self.inline(c, Some(ctx))));
                    result.push_str(&ctx.prefix);
                }
                Inline::Em(c) => {
                    result.push_str(&(self.theme.italic)(&self.inline(c, Some(ctx))));
                    result.push_str(&ctx.prefix);
                }
                Inline::Del(c) => {
                    result.push_str(&(self.theme.strikethrough)(&self.inline(c, Some(ctx))));
                    result.push_str(&ctx.prefix);
                }
                Inline::Code(c) => {
                    result.push_str(&(self.theme.code)(c));
                    result.push_str(&ctx.prefix);
                }
                Inline::Link { children, href, text } => {
                    let link_text = self.inline(children, Some(ctx));
                    let styled = (self.theme.link)(&(self.theme.underline)(&link_text));
                    let bare = href.strip_prefix("mailto:").unwrap_or(href);
                    if self.hyperlinks {
                        // pi's `hyperlink()`: OSC 8 with ST terminators.
                        result.push_str(&format!("\x1b]8;;{href}\x1b\\{styled}\x1b]8;;\x1b\\"));
                    } else {
                        result.push_str(&styled);
                        if text != href && text != bare {
                            result.push_str(&(self.theme.link_url)(&format!(" ({href})")));
                        }
                    }
                    result.push_str(&ctx.prefix);
                }
                Inline::Br => result.push('\n'),
                Inline::Latex(math) => {
                    let rendered = (!math.pending && self.render_latex)
                        .then(|| render_latex(&math.text, false))
                        .flatten()
                        .unwrap_or_else(|| math.raw.clone());
                    result.push_str(&apply_nl(&rendered));
                }
                Inline::Html(raw) => {
                    if raw.starts_with("<!--") {
                        drop_leading_space = i == 0 || tokens[i - 1].ends_with_blank();
                    } else {
                        result.push_str(&apply_nl(raw));
                    }
                }
            }
        }
        if !ctx.prefix.is_empty() {
            while result.ends_with(&ctx.prefix) {
                result.truncate(result.len() - ctx.prefix.len());
            }
        }
        result
    }

    /// `renderToken` for one block.
    pub fn block(&self, block: &Block, width: usize, next: Option<&str>, ctx: Option<&StyleCtx<'_>>) -> Vec<String> {
        let spaced = next.is_some_and(|n| n != "space");
        let mut lines = Vec::new();
        match block {
            Block::Heading(level, inlines) => {
                let theme = self.theme;
                let style: Box<dyn Fn(&str) -> String> = if *level == 1 {
                    Box::new(move |t: &str| (theme.heading)(&(theme.bold)(&(theme.underline)(t))))
                } else {
                    Box::new(move |t: &str| (theme.heading)(&(theme.bold)(t)))
                };
                let prefix = style_prefix(&*style);
                let hctx = StyleCtx { apply: Box::new(|t: &str| style(t)), prefix };
                let text = self.inline(inlines, Some(&hctx));
                if *level >= 3 {
                    lines.push(format!("{}{text}", style(&format!("{} ", "#".repeat(*level as usize)))));
                } else {
                    lines.push(text);
                }
                if spaced {
                    lines.push(String::new());
                }
            }
            Block::Paragraph(inlines) => {
                lines.push(self.inline(inlines, ctx));
                if next.is_some_and(|n| n != "list" && n != "space") {
                    lines.push(String::new());
                }
            }
            Block::Code { lang, text } => {
                let indent = &self.theme.code_block_indent;
                lines.push((self.theme.code_block_border)(&format!("```{lang}")));
                match &self.theme.highlight_code {
                    Some(h) => {
                        let l = if lang.is_empty() { None } else { Some(lang.as_str()) };
                        lines.extend(h(text, l).into_iter().map(|x| format!("{indent}{x}")));
                    }
                    None => lines.extend(text.split('\n').map(|x| format!("{indent}{}", (self.theme.code_block)(x)))),
                }
                lines.push((self.theme.code_block_border)("```"));
                if spaced {
                    lines.push(String::new());
                }
            }
            Block::List { .. } => lines.extend(self.list(block, 0, width, ctx)),
            Block::Table { .. } => lines.extend(self.table(block, width, next, ctx)),
            Block::Quote(children) => {
                let theme = self.theme;
                let quote_style = move |t: &str| (theme.quote)(&(theme.italic)(t));
                let qprefix = style_prefix(&quote_style);
                if width < 3 {
                    for (i, c) in children.iter().enumerate() {
                        lines.extend(self.block(c, width, children.get(i + 1).map(Block::kind), ctx));
                    }
                    return lines;
                }
                let inner = width - 2;
                let qctx = StyleCtx { apply: Box::new(|t: &str| t.to_string()), prefix: qprefix.clone() };
                let mut rendered = Vec::new();
                for (i, c) in children.iter().enumerate() {
                    rendered.extend(self.block(c, inner, children.get(i + 1).map(Block::kind), Some(&qctx)));
                }
                while rendered.last().is_some_and(String::is_empty) {
                    rendered.pop();
                }
                for line in rendered {
                    let styled = if qprefix.is_empty() {
                        quote_style(&line)
                    } else {
                        quote_style(&line.replace("\x1b[0m", &format!("\x1b[0m{qprefix}")))
                    };
                    for w in wrap_text_with_ansi(&styled, inner) {
                        lines.push(format!("{}{w}", (self.theme.quote_border)("│ ")));
                    }
                }
                if spaced {
                    lines.push(String::new());
                }
            }
            Block::Hr => {
                lines.push((self.theme.hr)(&"─".repeat(width.min(80))));
                if spaced {
                    lines.push(String::new());
                }
            }
            Block::Html(raw) => lines.push(self.apply_default(strip_html_comments(raw).trim())),
            Block::Space => lines.push(String::new()),
            Block::Latex(math) => {
                let rendered = (!math.pending && self.render_latex).then(|| render_latex(&math.text, true)).flatten();
                // A 2D layout cannot be wrapped row by row: the source is drawn when it does not fit.
                let rendered = rendered
                    .filter(|r| r.split('\n').all(|line| visible_width(line) <= width))
                    .unwrap_or_else(|| latex_text::trim(&math.raw).to_string());
                lines.extend(rendered.split('\n').map(|line| self.apply_default(line)));
                if spaced {
                    lines.push(String::new());
                }
            }
        }
        lines
    }

    fn list(&self, block: &Block, depth: usize, width: usize, ctx: Option<&StyleCtx<'_>>) -> Vec<String> {
        let Block::List { ordered, start, loose, items } = block else {
            return Vec::new();
        };
        let mut lines = Vec::new();
        let indent = "    ".repeat(depth);
        for (i, item) in items.iter().enumerate() {
            let bullet = match (self.keep_markers, *ordered) {
                (true, _) => item.marker.clone(),
                (false, true) => format!("{}. ", start + i),
                (false, false) => "- ".to_string(),
            };
            let task = match item.task {
                Some(true) => "[x] ",
                Some(false) => "[ ] ",
                None => "",
            };
            let marker = format!("{bullet}{task}");
            let first = format!("{indent}{}", (self.theme.list_bullet)(&marker));
            let cont = format!("{indent}{}", " ".repeat(visible_width(&marker)));
            let item_width = width.saturating_sub(visible_width(&first)).max(1);
            let mut any = false;
            for b in &item.blocks {
                if matches!(b, Block::List { .. }) {
                    lines.extend(self.list(b, depth + 1, width, ctx));
                    any = true;
                    continue;
                }
                for line in self.block(b, item_width, None, ctx) {
                    for w in wrap_text_with_ansi(&line, item_width) {
                        lines.push(format!("{}{w}", if any { &cont } else { &first }));
                        any = true;
                    }
                }
            }
            if !any {
                lines.push(first);
            }
            if *loose && i + 1 < items.len() {
                lines.push(String::new());
            }
        }
        lines
    }

    fn longest_word(text: &str, max: usize) -> usize {
        text.split_whitespace().map(visible_width).max().unwrap_or(0).min(max)
    }

    fn wrap_cell(text: &str, width: usize, prefix: &str) -> Vec<String> {
        let lines = wrap_text_with_ansi(text, width.max(1));
        let n = lines.len();
        lines
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                let reset = if i + 1 < n { "\x1b[22;23;24;25;27;28;29;39m" } else { "" };
                format!("{l}{reset}{prefix}")
            })
            .collect()
    }

    fn table(&self, block: &Block, width: usize, next: Option<&str>, ctx: Option<&StyleCtx<'_>>) -> Vec<String> {
        let Block::Table { header, rows, raw } = block else {
            return Vec::new();
        };
        let n = header.len();
        if n == 0 {
            return Vec::new();
        }
        let spaced = next.is_some_and(|x| x != "space");
        let overhead = 3 * n + 1;
        let avail = width as i64 - overhead as i64;
        if avail < n as i64 {
            let mut l = if raw.is_empty() { Vec::new() } else { wrap_text_with_ansi(raw, width) };
            if spaced {
                l.push(String::new());
            }
            return l;
        }
        let avail = avail as usize;
        let render_cell = |c: &[Inline]| self.inline(c, ctx);
        let mut natural = vec![0usize; n];
        let mut min_word = vec![1usize; n];
        for (i, c) in header.iter().enumerate() {
            let t = render_cell(c);
            natural[i] = visible_width(&t);
            min_word[i] = Self::longest_word(&t, 30).max(1);
        }
        for row in rows {
            for (i, c) in row.iter().enumerate().take(n) {
                let t = render_cell(c);
                natural[i] = natural[i].max(visible_width(&t));
                min_word[i] = min_word[i].max(Self::longest_word(&t, 30));
            }
        }
        let mut min_cols = min_word.clone();
        let mut min_total: usize = min_cols.iter().sum();
        if min_total > avail {
            min_cols = vec![1; n];
            let remaining = avail - n;
            if remaining > 0 {
                let total_weight: usize = min_word.iter().map(|w| w.saturating_sub(1)).sum();
                let growth: Vec<usize> = min_word
                    .iter()
                    .map(|w| {
                        if total_weight > 0 {
                            (w.saturating_sub(1) as f64 / total_weight as f64 * remaining as f64).floor() as usize
                        } else {
                            0
                        }
                    })
                    .collect();
                for i in 0..n {
                    min_cols[i] += growth[i];
                }
                let mut leftover = remaining - growth.iter().sum::<usize>();
                let mut i = 0;
                while leftover > 0 && i < n {
                    min_cols[i] += 1;
                    leftover -= 1;
                    i += 1;
                }
            }
            min_total = min_cols.iter().sum();
        }
        let total_natural = natural.iter().sum::<usize>() + overhead;
        let cols: Vec<usize> = if total_natural <= width {
            natural.iter().zip(&min_cols).map(|(a, b)| *a.max(b)).collect()
        } else {
            let potential: usize = natural.iter().zip(&min_cols).map(|(a, b)| a.saturating_sub(*b)).sum();
            let extra = avail.saturating_sub(min_total);
            let mut cols: Vec<usize> = min_cols
                .iter()
                .zip(&natural)
                .map(|(m, nat)| {
                    let delta = nat.saturating_sub(*m);
                    m + if potential > 0 {
                        (delta as f64 / potential as f64 * extra as f64).floor() as usize
                    } else {
                        0
                    }
                })
                .collect();
            let mut remaining = avail.saturating_sub(cols.iter().sum());
            while remaining > 0 {
                let mut grew = false;
                for i in 0..n {
                    if remaining > 0 && cols[i] < natural[i] {
                        cols[i] += 1;
                        remaining -= 1;
                        grew = true;
                    }
                }
                if !grew {
                    break;
                }
            }
            cols
        };
        let border = |l: &str, m: &str, r: &str| {
            let cells: Vec<String> = cols.iter().map(|w| "─".repeat(*w)).collect();
            format!("{l}─{}─{r}", cells.join(&format!("─{m}─")))
        };
        let prefix = ctx.map(|c| c.prefix.as_str()).unwrap_or("");
        let mut lines = vec![border("┌", "┬", "┐")];
        let head: Vec<Vec<String>> =
            header.iter().enumerate().map(|(i, c)| Self::wrap_cell(&render_cell(c), cols[i], prefix)).collect();
        let count = head.iter().map(Vec::len).max().unwrap_or(0);
        for li in 0..count {
            let parts: Vec<String> = head
                .iter()
                .enumerate()
                .map(|(ci, cl)| {
                    let t = cl.get(li).map(String::as_str).unwrap_or("");
                    (self.theme.bold)(&format!("{t}{}", " ".repeat(cols[ci].saturating_sub(visible_width(t)))))
                })
                .collect();
            lines.push(format!("│ {} │", parts.join(" │ ")));
        }
        let sep = border("├", "┼", "┤");
        lines.push(sep.clone());
        for (ri, row) in rows.iter().enumerate() {
            let cells: Vec<Vec<String>> = row
                .iter()
                .enumerate()
                .take(n)
                .map(|(i, c)| Self::wrap_cell(&render_cell(c), cols[i], prefix))
                .collect();
            let count = cells.iter().map(Vec::len).max().unwrap_or(0);
            for li in 0..count {
                let parts: Vec<String> = cells
                    .iter()
                    .enumerate()
                    .map(|(ci, cl)| {
                        let t = cl.get(li).map(String::as_str).unwrap_or("");
                        format!("{t}{}", " ".repeat(cols[ci].saturating_sub(visible_width(t))))
                    })
                    .collect();
                lines.push(format!("│ {} │", parts.join(" │ ")));
            }
            if ri + 1 < rows.len() {
                lines.push(sep.clone());
            }
        }
        lines.push(border("└", "┴", "┘"));
        if spaced {
            lines.push(String::new());
        }
        lines
    }
}

impl Inline {
    /// Whether the token's source ends in a space or tab (for comment handling).
    fn ends_with_blank(&self) -> bool {
        match self {
            Inline::Text(t) | Inline::Html(t) => t.ends_with([' ', '\t']),
            _ => false,
        }
    }
}
