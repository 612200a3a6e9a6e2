//! Code-block highlighting with syntect, mapped onto the theme's `syntax*` tokens.
//!
//! pi uses highlight.js classes; here syntect scopes are mapped to the same nine tokens, so the
//! colours match pi's intent but the exact token boundaries differ. Input above
//! [`MAX_HIGHLIGHT_BYTES`] (or an unknown language) is rendered in `mdCodeBlock` unhighlighted.

use std::rc::Rc;
use std::sync::OnceLock;

use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxSet};

use crate::theme::Theme;

/// Code larger than this is not highlighted (highlighting is linear but not free).
pub const MAX_HIGHLIGHT_BYTES: usize = 64 * 1024;

/// `(code, lang) -> lines`, as in pi's `MarkdownTheme.highlightCode`.
pub type HighlightFn = Rc<dyn Fn(&str, Option<&str>) -> Vec<String>>;

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// The theme token for a scope stack (innermost match wins), or `None` for plain text.
fn token_for(stack: &ScopeStack) -> Option<&'static str> {
    const MAP: &[(&str, &str)] = &[
        ("comment", "syntaxComment"),
        ("string.regexp", "syntaxString"),
        ("string", "syntaxString"),
        ("constant.numeric", "syntaxNumber"),
        ("constant.language", "syntaxNumber"),
        ("constant.character", "syntaxString"),
        ("keyword.operator", "syntaxOperator"),
        ("keyword", "syntaxKeyword"),
        // Declaration keywords (`fn`, `struct`, `class`, `def`) are keywords in highlight.js.
        ("storage.type.function", "syntaxKeyword"),
        ("storage.type.struct", "syntaxKeyword"),
        ("storage.type.enum", "syntaxKeyword"),
        ("storage.type.trait", "syntaxKeyword"),
        ("storage.type.impl", "syntaxKeyword"),
        ("storage.type.class", "syntaxKeyword"),
        ("storage.type.module", "syntaxKeyword"),
        ("storage.type.type", "syntaxKeyword"),
        ("storage.type", "syntaxType"),
        ("storage.modifier", "syntaxKeyword"),
        ("storage", "syntaxKeyword"),
        ("entity.name.function", "syntaxFunction"),
        ("support.function", "syntaxFunction"),
        ("variable.function", "syntaxFunction"),
        ("entity.name.type", "syntaxType"),
        ("entity.name.class", "syntaxType"),
        ("entity.name.struct", "syntaxType"),
        ("entity.name.enum", "syntaxType"),
        ("entity.name.tag", "syntaxPunctuation"),
        ("entity.other.attribute-name", "syntaxVariable"),
        ("support.type", "syntaxType"),
        ("support.class", "syntaxType"),
        ("variable.parameter", "syntaxVariable"),
        ("variable", "syntaxVariable"),
        ("punctuation", "syntaxPunctuation"),
    ];
    static SCOPES: OnceLock<Vec<(Scope, &'static str)>> = OnceLock::new();
    let scopes = SCOPES.get_or_init(|| {
        MAP.iter().filter_map(|(prefix, token)| Scope::new(prefix).ok().map(|s| (s, *token))).collect()
    });
    for scope in stack.as_slice().iter().rev() {
        for (prefix, token) in scopes {
            if prefix.is_prefix_of(*scope) {
                return Some(token);
            }
        }
    }
    None
}

/// Highlight `code` in `lang` with `theme`'s syntax colours; falls back to `mdCodeBlock`.
pub fn highlight_code(theme: &Theme, code: &str, lang: Option<&str>) -> Vec<String> {
    let plain = || code.split('\n').map(|l| theme.fg("mdCodeBlock", l)).collect();
    let Some(lang) = lang.filter(|l| !l.is_empty()) else {
        return plain();
    };
    if code.len() > MAX_HIGHLIGHT_BYTES {
        return plain();
    }
    let set = syntaxes();
    let Some(syntax) = set.find_syntax_by_token(lang) else {
        return plain();
    };
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut out = Vec::new();
    for line in code.split('\n') {
        let with_nl = format!("{line}\n");
        let Ok(ops) = state.parse_line(&with_nl, set) else {
            return plain();
        };
        let mut rendered = String::new();
        let mut pos = 0;
        let emit = |from: usize, to: usize, stack: &ScopeStack, rendered: &mut String| {
            let to = to.min(line.len());
            if from >= to {
                return;
            }
            let text = &line[from..to];
            match token_for(stack) {
                Some(t) => rendered.push_str(&theme.fg(t, text)),
                None => rendered.push_str(&theme.fg("text", text)),
            }
        };
        for (at, op) in ops {
            emit(pos, at, &stack, &mut rendered);
            pos = pos.max(at);
            if stack.apply(&op).is_err() {
                return plain();
            }
        }
        emit(pos, line.len(), &stack, &mut rendered);
        out.push(rendered);
    }
    out
}

/// A [`HighlightFn`] bound to a theme.
pub fn highlighter(theme: Rc<Theme>) -> HighlightFn {
    Rc::new(move |code: &str, lang: Option<&str>| highlight_code(&theme, code, lang))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theme::ColorMode;

    #[test]
    fn highlights_rust_keywords_and_caps_input() -> Result<(), crate::TuiError> {
        let theme = Theme::dark(ColorMode::Truecolor)?;
        let lines = highlight_code(&theme, "fn main() {\n    let x = 42; // hi\n}", Some("rust"));
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with(&theme.fg("syntaxKeyword", "fn")), "{:?}", lines[0]);
        assert!(lines[1].contains(&theme.fg("syntaxNumber", "42")), "{:?}", lines[1]);
        assert!(lines[1].contains(&theme.fg("syntaxComment", "// hi")) || lines[1].contains("hi"));
        let big = "x\n".repeat(MAX_HIGHLIGHT_BYTES);
        assert_eq!(highlight_code(&theme, &big, Some("rust"))[0], theme.fg("mdCodeBlock", "x"));
        assert_eq!(highlight_code(&theme, "a", None), [theme.fg("mdCodeBlock", "a")]);
        Ok(())
    }
}
