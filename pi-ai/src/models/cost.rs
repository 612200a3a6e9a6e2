//! Cost of a response from the model's per-million-token rates (pi's `calculateCost`).

use crate::types::{Model, Usage};

/// Sets `usage.cost` from the model's rates (USD per million tokens) and returns the total.
///
/// The tier with the largest `inputTokensAbove` below `input + cacheRead + cacheWrite` replaces the
/// base rates. 1h cache writes (`cacheWrite1h`) cost twice the input rate.
///
/// ```
/// use pi_ai::{Model, ModelCost, Usage};
/// let model = Model { cost: ModelCost { input: 3.0, output: 15.0, ..Default::default() }, ..Default::default() };
/// let mut usage = Usage { input: 1_000_000, output: 100_000, ..Default::default() };
/// assert_eq!(pi_ai::models::calculate_cost(&model, &mut usage), 4.5);
/// assert_eq!(usage.cost.total_from_provider, Some(false));
/// ```
pub fn calculate_cost(model: &Model, usage: &mut Usage) -> f64 {
    let input_tokens = (usage.input + usage.cache_read + usage.cache_write) as f64;
    let base = &model.cost;
    let (mut input, mut output, mut cache_read, mut cache_write) =
        (base.input, base.output, base.cache_read, base.cache_write);
    let mut matched = -1.0;
    for tier in base.tiers.iter().flatten() {
        let Some(above) = tier.get("inputTokensAbove").and_then(|v| v.as_f64()) else { continue };
        if input_tokens > above && above > matched {
            let rate = |k: &str| tier.get(k).and_then(|v| v.as_f64()).unwrap_or(0.0);
            (input, output, cache_read, cache_write) =
                (rate("input"), rate("output"), rate("cacheRead"), rate("cacheWrite"));
            matched = above;
        }
    }
    let long_write = usage.cache_write_1h.unwrap_or(0) as f64;
    let short_write = usage.cache_write as f64 - long_write;
    let cost = &mut usage.cost;
    cost.input = (input / 1_000_000.0) * usage.input as f64;
    cost.output = (output / 1_000_000.0) * usage.output as f64;
    cost.cache_read = (cache_read / 1_000_000.0) * usage.cache_read as f64;
    cost.cache_write = (cache_write * short_write + input * 2.0 * long_write) / 1_000_000.0;
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write;
    cost.total_from_provider = Some(false);
    cost.total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ModelCost;
    use serde_json::json;

    #[test]
    fn tiers_and_long_cache_writes() {
        let model = Model {
            cost: ModelCost {
                input: 1.0,
                output: 2.0,
                cache_read: 0.5,
                cache_write: 1.25,
                tiers: Some(vec![
                    json!({"inputTokensAbove": 200000, "input": 2.0, "output": 4.0, "cacheRead": 1.0, "cacheWrite": 2.5}),
                    json!({"inputTokensAbove": 100000, "input": 9.0, "output": 9.0, "cacheRead": 9.0, "cacheWrite": 9.0}),
                ]),
                ..Default::default()
            },
            ..Default::default()
        };
        let mut usage =
            Usage { input: 100, output: 10, cache_write: 100, cache_write_1h: Some(40), ..Default::default() };
        calculate_cost(&model, &mut usage);
        assert_eq!(usage.cost.cache_write, (1.25 * 60.0 + 2.0 * 40.0) / 1e6);
        let mut big = Usage { input: 250_000, output: 1_000_000, ..Default::default() };
        calculate_cost(&model, &mut big);
        assert_eq!(big.cost.output, 4.0);
        let mut exact = Usage { input: 200_000, output: 1_000_000, ..Default::default() };
        calculate_cost(&model, &mut exact);
        assert_eq!(exact.cost.output, 9.0, "the threshold itself is not above");
    }
}
