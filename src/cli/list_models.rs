//! `--list-models [search]`: the models that have credentials, as a table.

use crate::ai::model::Model;
use crate::ai::models::ModelRegistry;

/// pi's token count format: `200K`, `1M`, `1.5M`.
pub fn format_token_count(count: u64) -> String {
    let fmt = |value: f64, unit: &str| {
        if value.fract() == 0.0 {
            format!("{value}{unit}")
        } else {
            format!("{value:.1}{unit}")
        }
    };
    if count >= 1_000_000 {
        fmt(count as f64 / 1_000_000.0, "M")
    } else if count >= 1_000 {
        fmt(count as f64 / 1_000.0, "K")
    } else {
        count.to_string()
    }
}

/// Case-insensitive subsequence match of every space-separated term.
fn fuzzy_matches(text: &str, search: &str) -> bool {
    let text = text.to_lowercase();
    search.split_whitespace().all(|term| {
        let mut chars = text.chars();
        term.to_lowercase().chars().all(|c| chars.any(|t| t == c))
    })
}

/// `--list-models`: prints the table for the models of `agent_dir` (after a warning when
/// models.json has errors).
pub fn print_models(agent_dir: &std::path::Path, search: &str) {
    let registry = ModelRegistry::load(agent_dir);
    if let Some(e) = registry.error() {
        eprintln!("Warning: errors loading models.json:\n{e}");
    }
    print!("{}", list_models(&registry, Some(search)));
}

/// The table (or a message) as printed by `--list-models`.
pub fn list_models(registry: &ModelRegistry, search: Option<&str>) -> String {
    let models: Vec<Model> = registry.available();
    if models.is_empty() {
        return "No models available. Set an API key (e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY), add one to ~/.pi/agent/auth.json, or configure ~/.pi/agent/models.json.\n".into();
    }
    let mut models: Vec<Model> = match search.filter(|s| !s.is_empty()) {
        Some(s) => models
            .into_iter()
            .filter(|m| fuzzy_matches(&format!("{} {}", m.provider, m.id), s))
            .collect(),
        None => models,
    };
    if models.is_empty() {
        return format!("No models matching \"{}\"\n", search.unwrap_or_default());
    }
    models.sort_by(|a, b| a.provider.cmp(&b.provider).then(a.id.cmp(&b.id)));
    let header = [
        "provider", "model", "context", "max-out", "thinking", "images",
    ];
    let rows: Vec<[String; 6]> = models
        .iter()
        .map(|m| {
            [
                m.provider.clone(),
                m.id.clone(),
                format_token_count(m.context_window),
                format_token_count(m.max_tokens),
                if m.reasoning { "yes" } else { "no" }.to_string(),
                if m.supports_images() { "yes" } else { "no" }.to_string(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 6]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        format!("{}\n", padded.join("  "))
    };
    let mut out = line(header);
    for row in &rows {
        out.push_str(&line([
            &row[0], &row[1], &row[2], &row[3], &row[4], &row[5],
        ]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_like_pi() {
        assert_eq!(format_token_count(200_000), "200K");
        assert_eq!(format_token_count(1_000_000), "1M");
        assert_eq!(format_token_count(1_500_000), "1.5M");
        assert_eq!(format_token_count(16_384), "16.4K");
        assert_eq!(format_token_count(999), "999");
    }

    #[test]
    fn fuzzy_terms_must_all_match_in_order() {
        assert!(fuzzy_matches("anthropic claude-sonnet-4-5", "ant son"));
        assert!(!fuzzy_matches("openai gpt-4o", "claude"));
    }
}
