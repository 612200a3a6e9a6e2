//! Backslash commands: symbols, operators with limits, fractions, roots, accents, fonts, text.

use super::format::{
    NAMED_OPERATOR_END, NAMED_OPERATOR_START, NEGATIVE_SPACE, ScriptKind, format_fraction, format_root, format_script,
    normalize_output,
};
use super::layout::Node;
use super::parser::Parser;
use super::symbols::{
    accent, blackboard, is_display_limit_symbol, is_font_switch, is_ignored, is_limit_operator, is_named_operator,
    is_negative_spacing, is_plain_wrapper, is_relation, is_size, is_spacing, negated, symbol,
};
use super::text::{is_space, trim};

/// How an operator's lower limit is drawn inline.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum LowerStyle {
    /// `lim[x→0]`
    Bracket,
    /// `∑_i`
    Script,
}

impl Parser<'_> {
    /// The command at `position` (a backslash), rendered.
    pub(super) fn parse_command(&mut self) -> String {
        self.position += 1;
        let Some(first) = self.at(self.position) else {
            self.supported = false;
            return String::new();
        };
        if first == '\n' || first == '\r' {
            self.position += 1;
            if first == '\r' && self.at(self.position) == Some('\n') {
                self.position += 1;
            }
            return " ".into();
        }
        let command: String = if first.is_ascii_alphabetic() {
            let start = self.position;
            while self.at(self.position).is_some_and(|c| c.is_ascii_alphabetic()) {
                self.position += 1;
            }
            self.source[start..self.position].iter().collect()
        } else {
            self.position += 1;
            first.to_string()
        };
        if let Some(simple) = self.simple_command(&command) {
            return simple;
        }
        self.argument_command(&command)
    }

    /// Commands that take no argument.
    fn simple_command(&mut self, command: &str) -> Option<String> {
        if command == "\\" {
            return Some("\n".into());
        }
        if is_spacing(command) {
            return Some(" ".into());
        }
        if is_negative_spacing(command) {
            return Some(NEGATIVE_SPACE.into());
        }
        if is_font_switch(command) {
            while self.at(self.position).is_some_and(is_space) {
                self.position += 1;
            }
            return Some(String::new());
        }
        if is_ignored(command) {
            return Some(String::new());
        }
        if matches!(command, "{" | "}" | "$" | "%" | "#" | "_" | "&") {
            return Some(command.into());
        }
        if command == "|" {
            return Some("‖".into());
        }
        None
    }

    fn argument_command(&mut self, command: &str) -> String {
        if command == "not" {
            return self.parse_not();
        }
        if is_limit_operator(command) {
            return self.parse_operator(command, LowerStyle::Bracket, true, true);
        }
        if let Some(symbol) = symbol(command) {
            if is_display_limit_symbol(command) {
                return self.parse_operator(symbol, LowerStyle::Script, true, false);
            }
            let spaced = command == "cdot" || command == "times" || is_relation(command);
            return if spaced { format!(" {symbol} ") } else { symbol.into() };
        }
        if is_named_operator(command) {
            return format!("{NAMED_OPERATOR_START}{command}{NAMED_OPERATOR_END}");
        }
        if is_size(command) {
            return String::new();
        }
        if matches!(command, "left" | "middle" | "right") {
            if self.at(self.position) == Some('.') {
                self.position += 1;
            }
            return String::new();
        }
        match command {
            "frac" | "dfrac" | "tfrac" => self.parse_fraction(command),
            "sqrt" => self.parse_root(),
            "boxed" | "fbox" => format!("[{}]", trim(&self.parse_required_argument(true))),
            "binom" | "dbinom" | "tbinom" => {
                let n = self.parse_required_argument(true);
                let k = self.parse_required_argument(true);
                format!("({n} choose {k})")
            }
            _ => self.wrapper_command(command),
        }
    }

    fn wrapper_command(&mut self, command: &str) -> String {
        if let Some(mark) = accent(command) {
            let value = self.parse_required_argument(true);
            return if value.chars().count() == 1 { format!("{value}{mark}") } else { format!("{command}({value})") };
        }
        match command {
            "mathbb" => {
                let value = self.parse_required_argument(true);
                value.chars().map(|c| blackboard(c).map_or_else(|| c.to_string(), str::to_string)).collect()
            }
            "operatorname" => {
                let starred = self.at(self.position) == Some('*');
                if starred {
                    self.position += 1;
                }
                let argument = self.parse_required_argument(true);
                let operator = trim(&normalize_output(&argument)).to_string();
                self.parse_operator(&operator, LowerStyle::Bracket, starred, true)
            }
            "mod" | "bmod" => " mod ".into(),
            "pmod" | "pod" => {
                let argument = self.parse_required_argument(true);
                let value = trim(&argument);
                if command == "pmod" { format!(" (mod {value})") } else { format!(" ({value})") }
            }
            "overset" | "stackrel" | "underset" => {
                let script = self.parse_required_argument(true);
                let argument = self.parse_required_argument(true);
                let kind = if command == "underset" { ScriptKind::Sub } else { ScriptKind::Sup };
                format!("{}{}", trim(&argument), format_script(&script, kind))
            }
            _ if is_plain_wrapper(command) => {
                let value = self.parse_required_argument(true);
                if command.starts_with("text") || command == "mbox" { value } else { trim(&value).to_string() }
            }
            "begin" => self.parse_environment(),
            "end" => {
                self.supported = false;
                String::new()
            }
            _ => {
                self.supported = false;
                format!("\\{command}")
            }
        }
    }

    fn parse_not(&mut self) -> String {
        let argument = self.parse_required_argument(false);
        let value = trim(&argument);
        if let Some(negated) = negated(value) {
            return format!(" {negated} ");
        }
        let mut chars = value.chars();
        let Some(first) = chars.next() else {
            self.supported = false;
            return String::new();
        };
        format!(" {first}\u{338}{} ", chars.as_str())
    }

    fn parse_fraction(&mut self, command: &str) -> String {
        let stack = self.display && self.stack_fractions && command != "tfrac";
        let numerator = self.parse_required_argument(!stack);
        let denominator = self.parse_required_argument(!stack);
        if stack {
            return self.push_node(Node::Fraction {
                numerator: normalize_output(&numerator),
                denominator: normalize_output(&denominator),
            });
        }
        format_fraction(&numerator, &denominator)
    }

    fn parse_root(&mut self) -> String {
        let degree = self.parse_optional_argument();
        let value = self.parse_required_argument(true);
        match degree.as_deref().map(trim) {
            None | Some("2") => format_root(&value, "√"),
            Some("3") => format_root(&value, "∛"),
            Some("4") => format_root(&value, "∜"),
            Some(degree) => format!("{}{}", format_script(degree, ScriptKind::Sup), format_root(&value, "√")),
        }
    }

    /// An operator and its `_`/`^` limits: stacked in display mode when it takes limits there.
    pub(super) fn parse_operator(
        &mut self,
        operator: &str,
        lower_style: LowerStyle,
        display_limits: bool,
        spaced: bool,
    ) -> String {
        let mut use_display_limits = display_limits;
        let modifier_position = self.skip_blanks(self.position);
        for (name, limits) in [("\\limits", true), ("\\nolimits", false)] {
            let name: Vec<char> = name.chars().collect();
            let end = modifier_position + name.len();
            if self.source.get(modifier_position..end) == Some(&name[..])
                && !self.at(end).is_some_and(|c| c.is_ascii_alphabetic())
            {
                use_display_limits = limits;
                self.position = end;
            }
        }
        let mut lower: Option<String> = None;
        let mut upper: Option<String> = None;
        loop {
            let script_position = self.skip_blanks(self.position);
            let kind = self.at(script_position);
            if kind != Some('_') && kind != Some('^') {
                break;
            }
            self.position = script_position + 1;
            let value = normalize_output(&self.parse_required_argument(false)).replace(' ', "");
            let slot = if kind == Some('_') { &mut lower } else { &mut upper };
            if slot.is_some() {
                self.supported = false;
            }
            *slot = Some(value);
        }
        if self.display && use_display_limits && (lower.is_some() || upper.is_some()) {
            return self.push_node(Node::Operator { operator: operator.to_string(), lower, upper });
        }
        let mut rendered = operator.to_string();
        if let Some(lower) = &lower {
            match lower_style {
                LowerStyle::Bracket => rendered.push_str(&format!("[{lower}]")),
                LowerStyle::Script => rendered.push_str(&format_script(lower, ScriptKind::Sub)),
            }
        }
        if let Some(upper) = &upper {
            rendered.push_str(&format_script(upper, ScriptKind::Sup));
        }
        if spaced { format!(" {rendered} ") } else { rendered }
    }
}
