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
        Some(s) if !s.is_empty() => {
            let tokens: Vec<String> = s.to_lowercase().split_whitespace().map(str::to_owned).collect();
            models
                .iter()
                .copied()
                .filter(|m| {
                    let hay = format!("{} {}", m.provider, m.id).to_lowercase();
                    tokens.iter().all(|t| fuzzy_match(&hay, t))
                })
                .collect()
        }
        _ => models.to_vec(),
    };
    if list.is_empty() {
        return format!("No models matching \"{}\"\n", search.unwrap_or_default());
    }
    list.sort_by(|a, b| a.provider.cmp(&b.provider).then_with(|| a.id.cmp(&b.id)));
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

/// Subsequence match (pi-tui's fuzzy filter, simplified to its acceptance test).
fn fuzzy_match(hay: &str, needle: &str) -> bool {
    let mut chars = hay.chars();
    needle.chars().all(|n| chars.any(|h| h == n))
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
}
