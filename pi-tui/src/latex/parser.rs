//! The parser: walks the source once, writing one-line text with markers for 2D nodes.
//! Commands are in `commands.rs`, environments in `environments.rs`.

use super::format::{
    LAYOUT_MARKER_END, LAYOUT_MARKER_START, NAMED_OPERATOR_END, NEGATIVE_SPACE, ScriptKind, format_script,
    format_unicode_script, normalize_output,
};
use super::layout::Node;
use super::text::{is_space, trim_end};

/// Deepest nesting of groups and nested expressions the parser follows; deeper input is
/// reported unsupported instead of exhausting the stack.
pub(super) const MAX_DEPTH: usize = 400;

/// One expression being parsed; nested expressions (environment cells, optional arguments)
/// get their own parser sharing `nodes`.
pub(super) struct Parser<'a> {
    pub source: Vec<char>,
    pub nodes: &'a mut Vec<Node>,
    pub display: bool,
    pub position: usize,
    pub supported: bool,
    pub stack_fractions: bool,
    pub script_depth: usize,
    /// Nesting depth, counted across nested parsers.
    pub depth: usize,
}

impl<'a> Parser<'a> {
    /// A parser at the start of `source`.
    pub fn new(source: &str, nodes: &'a mut Vec<Node>, display: bool, depth: usize) -> Self {
        Parser {
            source: source.chars().collect(),
            nodes,
            display,
            position: 0,
            supported: true,
            stack_fractions: true,
            script_depth: 0,
            depth,
        }
    }

    /// The whole source rendered, or `None` when anything is unsupported or left over.
    pub fn render(&mut self) -> Option<String> {
        let rendered = self.parse_sequence(None);
        if !self.supported || self.position != self.source.len() {
            return None;
        }
        Some(normalize_output(&rendered))
    }

    pub(super) fn at(&self, index: usize) -> Option<char> {
        self.source.get(index).copied()
    }

    /// Text up to `end` (consumed) or to the end of the source.
    pub(super) fn parse_sequence(&mut self, end: Option<char>) -> String {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.supported = false;
            self.position = self.source.len();
            self.depth -= 1;
            return String::new();
        }
        let result = self.sequence_body(end);
        self.depth -= 1;
        result
    }

    fn sequence_body(&mut self, end: Option<char>) -> String {
        let mut result = String::new();
        while let Some(c) = self.at(self.position) {
            if end == Some(c) {
                self.position += 1;
                return result;
            }
            match c {
                '}' => {
                    self.supported = false;
                    return result;
                }
                '{' => {
                    self.position += 1;
                    let inner = self.parse_sequence(Some('}'));
                    result.push_str(&inner);
                }
                '\\' => {
                    let command = self.parse_command();
                    if command == NEGATIVE_SPACE {
                        result.truncate(trim_end(&result).len());
                        if result.ends_with(NAMED_OPERATOR_END) {
                            result.pop();
                        }
                    } else {
                        result.push_str(&command);
                    }
                }
                '^' | '_' => {
                    self.position += 1;
                    result.truncate(trim_end(&result).len());
                    let script = self.parse_scripts(c);
                    if result.ends_with(NAMED_OPERATOR_END) {
                        result.pop();
                        result.push_str(&script);
                        result.push(NAMED_OPERATOR_END);
                    } else {
                        result.push_str(&script);
                    }
                }
                c if is_space(c) => {
                    while self.at(self.position).is_some_and(is_space) {
                        self.position += 1;
                    }
                    result.push(' ');
                }
                '=' | '<' | '>' => {
                    result.truncate(trim_end(&result).len());
                    result.push(' ');
                    result.push(c);
                    result.push(' ');
                    self.position += 1;
                }
                '&' => self.position += 1,
                '~' => {
                    self.position += 1;
                    result.push(' ');
                }
                '.' if self.append_to_trailing_matrix(&result) => self.position += 1,
                _ => {
                    result.push(c);
                    self.position += 1;
                }
            }
        }
        if end.is_some() {
            self.supported = false;
        }
        result
    }

    /// A `.` right after a matrix goes on the matrix's last line.
    fn append_to_trailing_matrix(&mut self, result: &str) -> bool {
        let Some(index) = trailing_marker(result) else { return false };
        match self.nodes.get_mut(index) {
            Some(Node::Matrix { lines, .. }) => {
                if let Some(last) = lines.last_mut() {
                    last.push('.');
                }
                true
            }
            _ => false,
        }
    }

    /// `^x`, `_x`, and the other one right after it.
    fn parse_scripts(&mut self, initial: char) -> String {
        let mut sub: Option<String> = None;
        let mut sup: Option<String> = None;
        let mut order = Vec::new();
        let mut parse = |parser: &mut Self, marker: char| {
            let kind = if marker == '_' { ScriptKind::Sub } else { ScriptKind::Sup };
            parser.script_depth += 1;
            let value = parser.parse_required_argument(false);
            parser.script_depth -= 1;
            match kind {
                ScriptKind::Sub => sub = Some(value),
                ScriptKind::Sup => sup = Some(value),
            }
            order.push(kind);
        };
        parse(self, initial);
        let mut next = self.position;
        while self.at(next).is_some_and(is_space) {
            next += 1;
        }
        if let Some(marker @ ('^' | '_')) = self.at(next)
            && marker != initial
        {
            self.position = next + 1;
            parse(self, marker);
        }
        let sub_unicode = sub.as_deref().and_then(|s| format_unicode_script(s, ScriptKind::Sub));
        let sup_unicode = sup.as_deref().and_then(|s| format_unicode_script(s, ScriptKind::Sup));
        let blocks_layout = |value: &Option<String>| {
            value.as_deref().is_some_and(|v| {
                v.contains('/')
                    || (!v.contains(LAYOUT_MARKER_START)
                        && v.chars().count() > 1
                        && !v.chars().any(|c| c.is_ascii_uppercase() || c == '*' || c == '∗'))
            })
        };
        let can_use_layout = !blocks_layout(&sub) && !blocks_layout(&sup);
        let needs_layout = self.display
            && can_use_layout
            && (self.script_depth > 0
                || (sub.is_some() && sub_unicode.is_none())
                || (sup.is_some() && sup_unicode.is_none()));
        if !needs_layout {
            return order
                .iter()
                .map(|kind| match kind {
                    ScriptKind::Sub => {
                        sub_unicode.clone().unwrap_or_else(|| format_script(sub.as_deref().unwrap_or(""), *kind))
                    }
                    ScriptKind::Sup => {
                        sup_unicode.clone().unwrap_or_else(|| format_script(sup.as_deref().unwrap_or(""), *kind))
                    }
                })
                .collect();
        }
        self.push_node(Node::Script {
            lower: sub.as_deref().map(normalize_output),
            upper: sup.as_deref().map(normalize_output),
        })
    }

    /// Adds a layout node and returns its marker.
    pub(super) fn push_node(&mut self, node: Node) -> String {
        self.nodes.push(node);
        format!("{LAYOUT_MARKER_START}{}{LAYOUT_MARKER_END}", self.nodes.len() - 1)
    }

    /// A required argument: a group, a command, or one character.
    pub(super) fn parse_required_argument(&mut self, stack_fractions: bool) -> String {
        let previous = self.stack_fractions;
        self.stack_fractions = previous && stack_fractions;
        let value = self.required_argument_value();
        self.stack_fractions = previous;
        value
    }

    fn required_argument_value(&mut self) -> String {
        while self.at(self.position).is_some_and(is_space) {
            self.position += 1;
        }
        match self.at(self.position) {
            None => {
                self.supported = false;
                String::new()
            }
            Some('{') => {
                self.position += 1;
                self.parse_sequence(Some('}'))
            }
            Some('\\') => self.parse_command(),
            Some(c) => {
                self.position += 1;
                c.to_string()
            }
        }
    }

    /// Skips spaces and tabs from `position`; returns the first other index.
    pub(super) fn skip_blanks(&self, mut position: usize) -> usize {
        while matches!(self.at(position), Some(' ' | '\t')) {
            position += 1;
        }
        position
    }

    /// `[…]`, rendered, if one follows.
    pub(super) fn parse_optional_argument(&mut self) -> Option<String> {
        self.position = self.skip_blanks(self.position);
        if self.at(self.position) != Some('[') {
            return None;
        }
        let Some(end) = (self.position + 1..self.source.len()).find(|&i| self.source[i] == ']') else {
            self.supported = false;
            return None;
        };
        let value: String = self.source[self.position + 1..end].iter().collect();
        self.position = end + 1;
        Some(self.render_nested(&value, true))
    }

    /// A `{…}` group's source, unparsed.
    pub(super) fn read_raw_group(&mut self) -> Option<String> {
        self.position = self.skip_blanks(self.position);
        if self.at(self.position) != Some('{') {
            self.supported = false;
            return None;
        }
        self.position += 1;
        let start = self.position;
        let mut depth = 1;
        while let Some(c) = self.at(self.position) {
            match c {
                '\\' => {
                    self.position += 2;
                    continue;
                }
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                let value = self.source[start..self.position].iter().collect();
                self.position += 1;
                return Some(value);
            }
            self.position += 1;
        }
        self.supported = false;
        None
    }

    /// Another expression rendered with the same nodes; its source when it is unsupported.
    pub(super) fn render_nested(&mut self, source: &str, stack_fractions: bool) -> String {
        let display = self.display && stack_fractions;
        let rendered = Parser::new(source, self.nodes, display, self.depth + 1).render();
        match rendered {
            Some(rendered) => rendered,
            None => {
                self.supported = false;
                source.to_string()
            }
        }
    }
}

/// The index of the marker `result` ends with.
fn trailing_marker(result: &str) -> Option<usize> {
    let rest = result.strip_suffix(LAYOUT_MARKER_END)?;
    let digits_start = rest.trim_end_matches(|c: char| c.is_ascii_digit());
    let digits = &rest[digits_start.len()..];
    if digits.is_empty() || !digits_start.ends_with(LAYOUT_MARKER_START) {
        return None;
    }
    digits.parse().ok()
}
