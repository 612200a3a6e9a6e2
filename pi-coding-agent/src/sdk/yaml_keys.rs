//! Duplicate mapping keys, which pi's YAML parser rejects ("Map keys must be unique") while
//! ours keeps the last value: checked separately so such frontmatter fails as it does in pi.

use std::collections::HashSet;

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

enum Frame {
    Map { keys: HashSet<String>, expect_key: bool },
    Seq,
}

#[derive(Default)]
struct DuplicateKeys {
    stack: Vec<Frame>,
    duplicate: Option<Marker>,
}

impl DuplicateKeys {
    fn node_done(&mut self, scalar: Option<String>, mark: Marker) {
        if let Some(Frame::Map { keys, expect_key }) = self.stack.last_mut() {
            if *expect_key
                && let Some(key) = scalar
                && !keys.insert(key)
                && self.duplicate.is_none()
            {
                self.duplicate = Some(mark);
            }
            *expect_key = !*expect_key;
        }
    }
}

impl MarkedEventReceiver for DuplicateKeys {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        match ev {
            Event::MappingStart(..) => self.stack.push(Frame::Map { keys: HashSet::new(), expect_key: true }),
            Event::SequenceStart(..) => self.stack.push(Frame::Seq),
            Event::MappingEnd | Event::SequenceEnd => {
                self.stack.pop();
                self.node_done(None, mark);
            }
            Event::Scalar(value, ..) => self.node_done(Some(value), mark),
            Event::Alias(_) => self.node_done(None, mark),
            _ => {}
        }
    }
}

/// pi's error for the first repeated key of any mapping in `src`, worded and pointed as pi's
/// YAML parser words it: `Map keys must be unique at line L, column C:` and the source context.
pub(crate) fn duplicate_key_error(src: &str) -> Option<String> {
    let mut receiver = DuplicateKeys::default();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Parser::new(src.chars()).load(&mut receiver, false)))
        .ok()?
        .ok()?;
    let mark = receiver.duplicate?;
    Some(pretty_error("Map keys must be unique", src, mark.line(), mark.col() + 1))
}

/// The YAML parser's `prettifyError`: position, then the line (with the previous one when the
/// error is at its indentation) and a caret under the column.
fn pretty_error(message: &str, src: &str, line: usize, col: usize) -> String {
    let lines: Vec<&str> = src.split('\n').collect();
    let mut out = format!("{message} at line {line}, column {col}");
    let mut ci = col - 1;
    let mut line_str: String = lines.get(line - 1).copied().unwrap_or_default().trim_end_matches('\r').to_owned();
    let len = line_str.chars().count();
    if ci >= 60 && len > 80 {
        let trim_start = (ci - 39).min(len - 79);
        line_str = format!("…{}", line_str.chars().skip(trim_start).collect::<String>());
        ci -= trim_start - 1;
    }
    if line_str.chars().count() > 80 {
        line_str = format!("{}…", line_str.chars().take(79).collect::<String>());
    }
    if line > 1 && line_str.chars().take(ci).all(|c| c == ' ') {
        let mut prev = format!("{}\n", lines.get(line - 2).copied().unwrap_or_default());
        if prev.chars().count() > 80 {
            prev = format!("{}…\n", prev.chars().take(79).collect::<String>());
        }
        line_str = prev + &line_str;
    }
    if line_str.chars().any(|c| c != ' ') {
        out.push_str(&format!(":\n\n{line_str}\n{}^\n", " ".repeat(ci)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::duplicate_key_error;

    /// Expected texts from pi 1.6.0's `parseFrontmatter`.
    #[test]
    fn duplicate_keys_are_reported_like_pi() {
        assert_eq!(
            duplicate_key_error("name: a\ndescription: x\nname: b").as_deref(),
            Some("Map keys must be unique at line 3, column 1:\n\ndescription: x\nname: b\n^\n")
        );
        assert_eq!(
            duplicate_key_error("name: a\nmeta:\n  k: 1\n  k: 2").as_deref(),
            Some("Map keys must be unique at line 4, column 3:\n\n  k: 1\n  k: 2\n  ^\n")
        );
        assert_eq!(duplicate_key_error("a: 1\nb: [1, 1]\nc: {x: 1, y: 1}"), None);
    }
}
