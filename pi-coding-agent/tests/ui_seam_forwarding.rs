//! Every `UiHost` method must be forwarded by the wrappers that put another `UiHost` behind
//! extra behaviour (today `PromptEventsUi`, which adds the `ui_prompt` events): a method the
//! wrapper does not override silently answers with the no-UI default instead of reaching the
//! terminal. This reads the trait and each wrapper's `impl` from the source and compares the
//! method names.

use std::collections::BTreeSet;

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// The names of the `fn`s between `header` and the end of its brace block in `file`.
fn methods_of(file: &str, header: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(format!("{SRC}/{file}")).expect("source");
    let start = text.find(header).unwrap_or_else(|| panic!("{header} in {file}"));
    let open = start + text[start..].find('{').expect("block");
    let mut depth = 0usize;
    let mut end = open;
    for (i, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    end = open + i;
                    break;
                }
            }
            _ => {}
        }
    }
    let block = &text[open..end];
    let mut names = BTreeSet::new();
    // Only the block's own items (one level deep), not functions inside method bodies.
    let mut level = 0usize;
    for line in block.lines() {
        let trimmed = line.trim_start();
        if level == 1
            && let Some(rest) = trimmed.strip_prefix("fn ").or_else(|| trimmed.strip_prefix("async fn "))
        {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            names.insert(name);
        }
        level += line.matches('{').count();
        level -= line.matches('}').count().min(level);
    }
    names
}

#[test]
fn the_prompt_events_wrapper_forwards_every_ui_host_method() {
    let trait_methods = methods_of("ui.rs", "pub trait UiHost");
    assert!(trait_methods.len() > 20, "parsed the trait: {trait_methods:?}");
    let wrapper = methods_of("extensions/ui_prompt.rs", "impl UiHost for PromptEventsUi");
    let missing: Vec<&String> = trait_methods.difference(&wrapper).collect();
    assert!(missing.is_empty(), "PromptEventsUi does not forward {missing:?}");
}
