//! `\begin{…}…\end{…}`: equations, aligned rows, cases, matrices and arrays.

use super::format::PROTECTED_SPACE;
use super::layout::Node;
use super::parser::Parser;
use super::text::{index_of, is_space, trim};
use crate::ansi::visible_width;

const ALIGNED: &[&str] = &[
    "aligned",
    "align",
    "align*",
    "alignedat",
    "alignat",
    "alignat*",
    "gather",
    "gathered",
    "multline",
    "multline*",
    "split",
];
const MATRICES: &[&str] = &["array", "matrix", "smallmatrix", "pmatrix", "bmatrix", "Bmatrix", "vmatrix", "Vmatrix"];

/// Splits rows at `\\` and its optional `[spacing]`.
fn split_rows(body: &str) -> Vec<String> {
    let chars: Vec<char> = body.chars().collect();
    let mut rows = Vec::new();
    let mut row = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '\\' && chars.get(i + 1) == Some(&'\\') {
            rows.push(std::mem::take(&mut row));
            i += 2;
            if chars.get(i) == Some(&'[')
                && let Some(close) = chars[i + 1..].iter().position(|&c| c == ']' || c == '\n')
                && chars[i + 1 + close] == ']'
            {
                i += close + 2;
            }
            continue;
        }
        row.push(chars[i]);
        i += 1;
    }
    rows.push(row);
    rows
}

/// Removes a leading `{…}` argument (column spec) and the spaces before it.
fn strip_leading_group(body: &str) -> &str {
    let rest = body.trim_start_matches(is_space);
    if let Some(inner) = rest.strip_prefix('{')
        && let Some(close) = inner.find('}')
    {
        return &inner[close + 1..];
    }
    body
}

/// Drops a trailing comma and the spaces after it.
fn strip_trailing_comma(value: &str) -> &str {
    let trimmed = value.trim_end_matches(is_space);
    trimmed.strip_suffix(',').unwrap_or(value)
}

/// `if`, `when`, `for` or `otherwise` as a whole word at the start (any case).
fn starts_with_keyword(condition: &str) -> bool {
    ["if", "when", "for", "otherwise"].iter().any(|word| {
        condition.len() >= word.len()
            && condition.is_char_boundary(word.len())
            && condition[..word.len()].eq_ignore_ascii_case(word)
            && !condition[word.len()..].chars().next().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

impl Parser<'_> {
    /// After `\begin`: the environment up to its `\end`, rendered.
    pub(super) fn parse_environment(&mut self) -> String {
        let environment = match self.read_raw_group() {
            Some(name) if !name.is_empty() => name,
            _ => return String::new(),
        };
        let end_marker: Vec<char> = format!("\\end{{{environment}}}").chars().collect();
        let Some(end) = index_of(&self.source, &end_marker, self.position) else {
            self.supported = false;
            return String::new();
        };
        let body: String = self.source[self.position..end].iter().collect();
        self.position = end + end_marker.len();
        let environment = environment.as_str();
        if matches!(environment, "equation" | "equation*" | "displaymath") {
            return trim(&self.render_nested(&body, true)).to_string();
        }
        if ALIGNED.contains(&environment) {
            return self.render_aligned(environment, &body);
        }
        if matches!(environment, "cases" | "cases*") {
            return self.render_cases(&body);
        }
        if MATRICES.contains(&environment) {
            let body = if environment == "array" { strip_leading_group(&body) } else { &body };
            return self.render_matrix(environment, body);
        }
        self.supported = false;
        body
    }

    fn render_aligned(&mut self, environment: &str, body: &str) -> String {
        let aligned_at = matches!(environment, "alignedat" | "alignat" | "alignat*");
        let body = if aligned_at { strip_leading_group(body) } else { body };
        let mut lines = Vec::new();
        for row in split_rows(body) {
            let cells: Vec<&str> = row.split('&').collect();
            let source = if aligned_at {
                cells.chunks(2).map(|pair| pair.concat()).collect::<Vec<_>>().join(" ")
            } else {
                cells.concat()
            };
            let rendered = trim(&self.render_nested(&source, true)).to_string();
            if !rendered.is_empty() {
                lines.push(rendered);
            }
        }
        lines.join("\n")
    }

    /// Rows split at `\\`, cells at `&`, each rendered; rows with no content dropped.
    fn render_cells(&mut self, body: &str) -> Vec<Vec<String>> {
        let mut rows = Vec::new();
        for row in split_rows(body) {
            let cells: Vec<String> =
                row.split('&').map(|cell| trim(&self.render_nested(cell, false)).to_string()).collect();
            if cells.iter().any(|c| !c.is_empty()) {
                rows.push(cells);
            }
        }
        rows
    }

    fn render_cases(&mut self, body: &str) -> String {
        let rows = self.render_cells(body);
        let value_width = rows.iter().map(|row| visible_width(strip_trailing_comma(&row[0]))).max().unwrap_or(0);
        let contents: Vec<String> = rows
            .iter()
            .map(|row| {
                let value = strip_trailing_comma(&row[0]);
                let condition = row.get(1).map_or("", String::as_str);
                if condition.is_empty() {
                    return value.to_string();
                }
                let prefix = if starts_with_keyword(condition) { " " } else { " if " };
                let pad = PROTECTED_SPACE.to_string().repeat(value_width - visible_width(value));
                format!("{value}{pad}{prefix}{condition}")
            })
            .collect();
        if contents.len() <= 1 {
            return contents.first().map_or_else(String::new, |c| format!("⎧ {c}"));
        }
        let middle = contents.len() / 2;
        let mut visual: Vec<Option<&String>> = contents.iter().map(Some).collect();
        if contents.len().is_multiple_of(2) {
            visual.insert(middle, None);
        }
        let last = visual.len() - 1;
        let lines = visual
            .iter()
            .enumerate()
            .map(|(index, content)| {
                let delimiter = if index == 0 {
                    "⎧"
                } else if index == last {
                    "⎩"
                } else {
                    "⎨"
                };
                content.map_or_else(|| delimiter.to_string(), |c| format!("{delimiter} {c}"))
            })
            .collect();
        self.push_node(Node::Matrix { lines, baseline: middle })
    }

    fn render_matrix(&mut self, environment: &str, body: &str) -> String {
        let matrix = self.render_cells(body);
        let columns = matrix.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| matrix.iter().map(|row| row.get(c).map_or(0, |s| visible_width(s))).max().unwrap_or(0))
            .collect();
        let rows: Vec<String> = matrix
            .iter()
            .map(|row| {
                (0..columns)
                    .map(|c| {
                        let cell = row.get(c).map_or("", String::as_str);
                        let pad = widths[c].saturating_sub(visible_width(cell));
                        format!("{cell}{}", PROTECTED_SPACE.to_string().repeat(pad))
                    })
                    .collect::<Vec<_>>()
                    .join(" │ ")
            })
            .collect();
        let delimiters: [&str; 6] = match environment {
            "array" | "matrix" | "smallmatrix" => return self.matrix_node(rows),
            "pmatrix" => ["⎛", "⎞", "⎜", "⎟", "⎝", "⎠"],
            "bmatrix" => ["⎡", "⎤", "⎢", "⎥", "⎣", "⎦"],
            "Bmatrix" => ["⎧", "⎫", "⎨", "⎬", "⎩", "⎭"],
            "vmatrix" => ["│"; 6],
            _ => ["║"; 6],
        };
        let last = rows.len().saturating_sub(1);
        let lines = rows
            .iter()
            .enumerate()
            .map(|(index, row)| {
                let (left, right) = if index == 0 {
                    (delimiters[0], delimiters[1])
                } else if index == last {
                    (delimiters[4], delimiters[5])
                } else {
                    (delimiters[2], delimiters[3])
                };
                format!("{left} {row} {right}")
            })
            .collect();
        self.matrix_node(lines)
    }

    fn matrix_node(&mut self, lines: Vec<String>) -> String {
        if lines.len() <= 1 {
            return lines.into_iter().next().unwrap_or_default();
        }
        self.push_node(Node::Matrix { lines, baseline: 0 })
    }
}
