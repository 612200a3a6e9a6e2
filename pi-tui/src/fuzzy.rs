//! pi-tui's fuzzy matching: every query character in order, scored so consecutive runs, word
//! starts and early matches rank first (lower is better).

fn score_positions(text: &[char], positions: &[usize]) -> f64 {
    let mut score = 0.0;
    let mut last: Option<usize> = None;
    let mut consecutive = 0.0;
    for &i in positions {
        if last.is_some_and(|l| l + 1 == i) {
            consecutive += 1.0;
            score -= consecutive * 5.0;
        } else {
            consecutive = 0.0;
            if let Some(l) = last {
                score += (i - l - 1) as f64 * 2.0;
            }
        }
        if i == 0 || matches!(text[i - 1], ' ' | '\t' | '-' | '_' | '.' | '/' | ':') {
            score -= 10.0;
        }
        score += i as f64 * 0.1;
        last = Some(i);
    }
    score
}

/// The score of `query` against `text` (case-insensitive), or `None` when it does not match.
pub fn fuzzy_match(query: &str, text: &str) -> Option<f64> {
    let q: Vec<char> = query.to_lowercase().chars().collect();
    let t: Vec<char> = text.to_lowercase().chars().collect();
    if q.is_empty() {
        return Some(0.0);
    }
    if q.len() > t.len() {
        return None;
    }
    let mut positions = Vec::with_capacity(q.len());
    let mut from = 0;
    for c in &q {
        let i = (from..t.len()).find(|&i| t[i] == *c)?;
        positions.push(i);
        from = i + 1;
    }
    let mut score = score_positions(&t, &positions);
    // Every contiguous occurrence, too: keep the best alignment.
    for start in 0..=(t.len() - q.len()) {
        if t[start..start + q.len()] == q[..] {
            let run: Vec<usize> = (start..start + q.len()).collect();
            score = score.min(score_positions(&t, &run));
        }
    }
    if q == t {
        score -= 100.0;
    }
    Some(score)
}

/// The items matching `query`, best first (ties keep their order).
pub fn fuzzy_filter<T: Clone>(items: &[T], query: &str, text: impl Fn(&T) -> String) -> Vec<T> {
    let mut scored: Vec<(f64, usize)> =
        items.iter().enumerate().filter_map(|(i, item)| fuzzy_match(query, &text(item)).map(|s| (s, i))).collect();
    scored.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, i)| items[i].clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_as_pi() {
        let names = ["settings", "model", "tree", "scoped-models", "import"];
        let out = fuzzy_filter(&names, "mo", |s| s.to_string());
        assert_eq!(out, ["model", "scoped-models", "import"]);
        assert!(fuzzy_match("xyz", "model").is_none());
    }
}
