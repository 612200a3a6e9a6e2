//! Thinking levels a model supports, and clamping a request to them.

use crate::types::{Model, ThinkingLevel};

/// pi's `getSupportedThinkingLevels`: `[off]` without reasoning; otherwise every level whose
/// `thinkingLevelMap` entry is not `null`, with `xhigh` and `max` only when mapped.
///
/// ```
/// use pi_ai::{Model, ThinkingLevel::*};
/// let m = Model { reasoning: true, ..Default::default() };
/// assert_eq!(pi_ai::models::supported_thinking_levels(&m), vec![Off, Minimal, Low, Medium, High]);
/// ```
pub fn supported_thinking_levels(model: &Model) -> Vec<ThinkingLevel> {
    if !model.reasoning {
        return vec![ThinkingLevel::Off];
    }
    ThinkingLevel::ALL
        .into_iter()
        .filter(|level| {
            let mapped = model.thinking_level_map.as_ref().and_then(|m| m.get(level.as_str()));
            match mapped {
                Some(serde_json::Value::Null) => false,
                None if matches!(level, ThinkingLevel::Xhigh | ThinkingLevel::Max) => false,
                _ => true,
            }
        })
        .collect()
}

/// pi's `clampThinkingLevel`: the level itself when supported, else the nearest supported level
/// above it, else the nearest below.
///
/// ```
/// use pi_ai::{Model, ThinkingLevel};
/// let m = Model { reasoning: true, ..Default::default() };
/// assert_eq!(pi_ai::models::clamp_thinking_level(&m, ThinkingLevel::Max), ThinkingLevel::High);
/// ```
pub fn clamp_thinking_level(model: &Model, level: ThinkingLevel) -> ThinkingLevel {
    let available = supported_thinking_levels(model);
    if available.contains(&level) {
        return level;
    }
    let above = ThinkingLevel::ALL.into_iter().filter(|l| *l > level).find(|l| available.contains(l));
    let below = ThinkingLevel::ALL.into_iter().rev().filter(|l| *l < level).find(|l| available.contains(l));
    above.or(below).or_else(|| available.first().copied()).unwrap_or(ThinkingLevel::Off)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ThinkingLevel::*;
    use serde_json::json;

    #[test]
    fn null_entries_remove_levels_and_clamp_moves_up_first() {
        let map = json!({"minimal": null, "low": null, "xhigh": "xhigh"});
        let m = Model { reasoning: true, thinking_level_map: map.as_object().cloned(), ..Default::default() };
        assert_eq!(supported_thinking_levels(&m), vec![Off, Medium, High, Xhigh]);
        assert_eq!(clamp_thinking_level(&m, Minimal), Medium);
        assert_eq!(clamp_thinking_level(&m, Max), Xhigh);
        assert_eq!(clamp_thinking_level(&Model::default(), High), Off);
    }
}
