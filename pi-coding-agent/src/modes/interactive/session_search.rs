//! pi's session search (`session-selector-search`): words match fuzzily, `"phrases"` exactly,
//! `re:<pattern>` as a case-insensitive regex; matches in the name rank before matches in the
//! id, messages or folder, which rank before scattered letters of the name or folder.

use pi_tui::fuzzy::fuzzy_match;

use crate::session::SessionInfo;

/// The picker's sort modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sort {
    /// By thread (parent sessions) when no search, else by relevance.
    Threaded,
    /// Most recent first, search only filters.
    Recent,
    /// By match quality.
    Relevance,
}

const TIER_WEIGHT: f64 = 1_000_000.0;

fn tier(t: u8, score: f64) -> f64 {
    f64::from(t) * TIER_WEIGHT + score
}

fn squash(text: &str) -> String {
    text.to_lowercase().split_whitespace().collect::<Vec<_>>().join(" ")
}

fn literal(s: &SessionInfo, value: &str) -> Option<f64> {
    let name = s.name.as_deref().unwrap_or("").to_lowercase();
    if name.contains(value) {
        return Some(tier(0, fuzzy_match(value, &name).unwrap_or(0.0)));
    }
    let hit = s.id.to_lowercase().contains(value)
        || s.all_messages_text.to_lowercase().contains(value)
        || s.cwd.to_lowercase().contains(value);
    hit.then_some(tier(1, 0.0))
}

fn fuzzy(s: &SessionInfo, value: &str) -> Option<f64> {
    if let Some(score) = literal(s, &value.to_lowercase()) {
        return Some(score);
    }
    [s.name.as_deref().unwrap_or(""), s.cwd.as_str()]
        .iter()
        .filter_map(|f| fuzzy_match(value, f))
        .fold(None, |best: Option<f64>, x| Some(best.map_or(x, |b| b.min(x))))
        .map(|b| tier(2, b))
}

fn phrase(s: &SessionInfo, p: &str) -> Option<f64> {
    let name = squash(s.name.as_deref().unwrap_or(""));
    if name.contains(p) {
        return Some(tier(0, fuzzy_match(p, &name).unwrap_or(0.0)));
    }
    let hit = s.id.to_lowercase().contains(p) || squash(&s.all_messages_text).contains(p) || squash(&s.cwd).contains(p);
    hit.then_some(tier(1, 0.0))
}

enum Query {
    Regex(Option<regex::Regex>),
    Tokens(Vec<(bool, String)>),
}

/// pi's `parseSearchQuery`: `(is_phrase, text)` tokens, or a regex.
fn parse(query: &str) -> Query {
    let trimmed = query.trim();
    if let Some(pattern) = trimmed.strip_prefix("re:") {
        let pattern = pattern.trim();
        return Query::Regex(
            (!pattern.is_empty()).then(|| regex::Regex::new(&format!("(?i){pattern}")).ok()).flatten(),
        );
    }
    let mut tokens = Vec::new();
    let mut buf = String::new();
    let mut in_quote = false;
    for ch in trimmed.chars() {
        if ch == '"' {
            let t = buf.trim().to_owned();
            if !t.is_empty() {
                tokens.push((in_quote, t));
            }
            buf.clear();
            in_quote = !in_quote;
        } else if !in_quote && ch.is_whitespace() {
            let t = buf.trim().to_owned();
            if !t.is_empty() {
                tokens.push((false, t));
            }
            buf.clear();
        } else {
            buf.push(ch);
        }
    }
    if in_quote {
        return Query::Tokens(trimmed.split_whitespace().map(|t| (false, t.to_owned())).collect());
    }
    let t = buf.trim().to_owned();
    if !t.is_empty() {
        tokens.push((false, t));
    }
    Query::Tokens(tokens)
}

fn score(s: &SessionInfo, q: &Query) -> Option<f64> {
    match q {
        Query::Regex(None) => None,
        Query::Regex(Some(re)) => {
            if s.name.as_deref().is_some_and(|n| re.is_match(n)) {
                Some(tier(0, 0.0))
            } else if re.is_match(&s.id) || re.is_match(&s.all_messages_text) || re.is_match(&s.cwd) {
                Some(tier(1, 0.0))
            } else {
                None
            }
        }
        Query::Tokens(tokens) => {
            let mut total = 0.0;
            for (is_phrase, value) in tokens {
                let sc = if *is_phrase {
                    let p = squash(value);
                    if p.is_empty() {
                        continue;
                    }
                    phrase(s, &p)
                } else {
                    fuzzy(s, value)
                };
                total += sc?;
            }
            Some(total)
        }
    }
}

/// pi's `filterAndSortSessions` (the sessions come most recent first).
pub(crate) fn filter_and_sort(sessions: &[SessionInfo], query: &str, sort: Sort) -> Vec<SessionInfo> {
    if query.trim().is_empty() {
        return sessions.to_vec();
    }
    let q = parse(query);
    if sort == Sort::Recent {
        return sessions.iter().filter(|s| score(s, &q).is_some()).cloned().collect();
    }
    let mut scored: Vec<(f64, &SessionInfo)> = sessions.iter().filter_map(|s| score(s, &q).map(|x| (x, s))).collect();
    scored.sort_by(|a, b| {
        a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal).then(b.1.modified.cmp(&a.1.modified))
    });
    scored.into_iter().map(|(_, s)| s.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(name: Option<&str>, text: &str, modified: i64) -> SessionInfo {
        SessionInfo {
            path: format!("/s/{modified}.jsonl").into(),
            id: format!("id{modified}"),
            cwd: "/proj".into(),
            name: name.map(str::to_owned),
            parent_session_path: None,
            created: None,
            modified,
            message_count: 1,
            first_message: text.into(),
            all_messages_text: text.into(),
        }
    }

    #[test]
    fn names_rank_before_messages_and_phrases_and_regexes_filter() {
        let all = [info(None, "deploy the app", 3), info(Some("deploy notes"), "x", 1), info(None, "other", 2)];
        let out = filter_and_sort(&all, "deploy", Sort::Relevance);
        assert_eq!(out.iter().map(|s| s.modified).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(filter_and_sort(&all, "\"the app\"", Sort::Relevance).len(), 1);
        assert_eq!(filter_and_sort(&all, "re:^oth", Sort::Recent).len(), 1);
        assert!(filter_and_sort(&all, "re:", Sort::Recent).is_empty());
    }
}
