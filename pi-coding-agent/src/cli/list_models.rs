//! `--list-models [search]`: pi's table of available models (those with credentials).

use pi_ai::Model;

/// pi's `formatTokenCount`: `200000 → 200K`, `8192 → 8.2K`, `1000000 → 1M`.
pub fn format_token_count(count: u64) -> String {
    let fmt = |v: f64, unit: &str| {
        if v.fract() == 0.0 { format!("{v}{unit}") } else { format!("{v:.1}{unit}") }
    };
    if count >= 1_000_000 {
        fmt(count as f64 / 1_000_000.0, "M")
    } else if count >= 1_000 {
        fmt(count as f64 / 1_000.0, "K")
    } else {
        count.to_string()
    }
}

/// Renders the table (or pi's "No models matching" line) for `models`, already limited to models
/// with credentials. `None` search lists all.
pub fn render_model_list(models: &[&Model], search: Option<&str>) -> String {
    let mut list: Vec<&Model> = match search {
        // pi-tui's `fuzzyFilter` over `provider id` (tokens split at spaces and slashes).
        Some(s) if !s.is_empty() => pi_tui::fuzzy::fuzzy_filter(models, s, |m| format!("{} {}", m.provider, m.id)),
        _ => models.to_vec(),
    };
    if list.is_empty() {
        return format!("No models matching \"{}\"\n", search.unwrap_or_default());
    }
    list.sort_by(|a, b| locale_compare(&a.provider, &b.provider).then_with(|| locale_compare(&a.id, &b.id)));
    let headers = ["provider", "model", "context", "max-out", "thinking", "images"];
    let rows: Vec<[String; 6]> = list
        .iter()
        .map(|m| {
            [
                m.provider.clone(),
                m.id.clone(),
                format_token_count(m.context_window),
                format_token_count(m.max_tokens),
                if m.reasoning { "yes" } else { "no" }.to_owned(),
                if m.supports_images() { "yes" } else { "no" }.to_owned(),
            ]
        })
        .collect();
    let mut widths = headers.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 6]| {
        let padded: Vec<String> = cells.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect();
        padded.join("  ") + "\n"
    };
    let mut out = line(headers);
    for row in &rows {
        out.push_str(&line([&row[0], &row[1], &row[2], &row[3], &row[4], &row[5]]));
    }
    out
}

/// The punctuation and symbols in the order of ICU's root collation (JavaScript's
/// `localeCompare`), all before digits, which come before letters.
const PUNCTUATION_ORDER: &str = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";

/// A character's primary weight: its class (space, punctuation, digit, letter, other), then its
/// place in the class, case folded.
fn primary(c: char) -> (u8, u32) {
    if c.is_whitespace() {
        (0, c as u32)
    } else if let Some(i) = PUNCTUATION_ORDER.find(c) {
        (1, i as u32)
    } else if c.is_ascii_digit() {
        (2, c as u32)
    } else if c.is_alphabetic() {
        (3, c.to_lowercase().next().unwrap_or(c) as u32)
    } else {
        (4, c as u32)
    }
}

/// `a.localeCompare(b)` as pi's sort uses it, for the ASCII provider and model ids: letters
/// compared without case first (punctuation before digits before letters), then lowercase before
/// uppercase at the first difference.
pub fn locale_compare(a: &str, b: &str) -> std::cmp::Ordering {
    let primary_order = a.chars().map(primary).cmp(b.chars().map(primary));
    primary_order.then_with(|| {
        let case = |c: char| if c.is_uppercase() { 1u8 } else { 0 };
        a.chars().map(case).cmp(b.chars().map(case))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts() {
        assert_eq!(format_token_count(8192), "8.2K");
        assert_eq!(format_token_count(200_000), "200K");
        assert_eq!(format_token_count(1_000_000), "1M");
        assert_eq!(format_token_count(256), "256");
    }

    #[test]
    fn ids_sort_as_locale_compare() {
        // Node 22: ["a_b","a-b","a.b","a/b","a1","aB","ab","Ab","b"].sort((x, y) => x.localeCompare(y))
        // gives ["a_b","a-b","a.b","a/b","a1","ab","aB","Ab","b"].
        let mut ids = vec!["b", "Ab", "ab", "aB", "a1", "a/b", "a.b", "a-b", "a_b"];
        ids.sort_by(|a, b| locale_compare(a, b));
        assert_eq!(ids, ["a_b", "a-b", "a.b", "a/b", "a1", "ab", "aB", "Ab", "b"]);
    }
}
