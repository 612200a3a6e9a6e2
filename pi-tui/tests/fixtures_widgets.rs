//! SelectList, Input and Editor driven by key sequences, against pi-tui 1.6.0 fixtures.

mod common;

use std::rc::Rc;

use common::fixture;
use pi_tui::components::{EditorTheme, SelectListTheme};
use pi_tui::{Component, Editor, Input, SelectItem, SelectList, StyleFn};

fn sgr(on: u8, off: u8) -> StyleFn {
    Rc::new(move |t: &str| format!("\x1b[{on}m{t}\x1b[{off}m"))
}

fn list_theme() -> SelectListTheme {
    SelectListTheme {
        selected_text: sgr(36, 39),
        description: sgr(90, 39),
        scroll_info: sgr(90, 39),
        no_match: sgr(90, 39),
    }
}

fn items() -> Vec<SelectItem> {
    vec![
        SelectItem::new("alpha", "Alpha", Some("first")),
        SelectItem::new("beta", "Beta", Some("second item with a longer description")),
        SelectItem::new("gamma", "Gamma", None),
        SelectItem::new("delta", "Delta", Some("multi\nline")),
        SelectItem::new("epsilon", "", None),
    ]
}

#[test]
fn widgets_match_reference() {
    let cases = fixture("widgets.json");
    assert!(cases.as_array().map_or(0, Vec::len) > 30, "fixture not loaded");
    let mut failures = Vec::new();
    for case in cases.as_array().into_iter().flatten() {
        let keys: Vec<String> = serde_json::from_value(case["keys"].clone()).unwrap_or_default();
        let width = case["width"].as_u64().unwrap_or(0) as usize;
        let expected: Vec<String> = serde_json::from_value(case["expected"].clone()).unwrap_or_default();
        let (got, value): (Vec<String>, Option<String>) = match case["kind"].as_str().unwrap_or_default() {
            "select" => {
                let mut l = SelectList::new(items(), 3, list_theme());
                keys.iter().for_each(|k| l.handle_input(k));
                (l.render(width).to_vec(), None)
            }
            "input" => {
                let mut i = Input::default();
                i.set_focused(true);
                keys.iter().for_each(|k| i.handle_input(k));
                (i.render(width).to_vec(), Some(i.value().to_string()))
            }
            _ => {
                let mut e = Editor::new(EditorTheme { border_color: sgr(90, 39), select_list: list_theme() });
                e.set_focused(true);
                keys.iter().for_each(|k| e.handle_input(k));
                (e.render(width).to_vec(), Some(e.text()))
            }
        };
        if got != expected {
            failures.push(format!("{} {keys:?} w={width}\n  got {got:?}\n  pi  {expected:?}", case["kind"]));
        }
        if let Some(v) = value
            && Some(v.as_str()) != case["value"].as_str()
        {
            failures.push(format!("{} {keys:?}: value {v:?}, pi {}", case["kind"], case["value"]));
        }
    }
    assert!(failures.is_empty(), "widget mismatches:\n{}", failures.join("\n"));
}
