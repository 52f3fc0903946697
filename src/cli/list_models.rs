//! `--list-models [search]`: the models that have credentials, as a table.

use crate::ai::js::{js_locale_compare, js_to_fixed};
use crate::ai::model::Model;
use crate::ai::models::ModelRegistry;
use crate::modes::interactive::fuzzy::fuzzy_filter;

/// pi's token count format: `200K`, `1M`, `1.5M`.
pub fn format_token_count(count: u64) -> String {
    let fmt = |value: f64, unit: &str| {
        if value.fract() == 0.0 {
            format!("{value}{unit}")
        } else {
            format!("{}{unit}", js_to_fixed(value, 1))
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

/// `--list-models`: prints the table for the models of `agent_dir` (after a warning when
/// models.json has errors).
pub fn print_models(agent_dir: &std::path::Path, search: &str) {
    let registry = ModelRegistry::load(agent_dir);
    if let Some(e) = registry.error() {
        eprintln!("Warning: errors loading models.json:\n{e}");
    }
    print_registry_models(&registry, search);
}

/// `--list-models`: prints the table for `registry`'s models.
pub fn print_registry_models(registry: &ModelRegistry, search: &str) {
    // pi 1.6 prints its no-models message on stdout, like the table.
    print!("{}", list_models(registry, Some(search)));
}

/// The table (or a message) as printed by `--list-models`: the models with credentials,
/// those matching `search` (pi's fuzzy match on `provider id`), sorted as pi sorts them.
pub fn list_models(registry: &ModelRegistry, search: Option<&str>) -> String {
    let models: Vec<Model> = registry.available();
    if models.is_empty() {
        return format!("{}\n", crate::core::auth_guidance::pi_no_models_available());
    }
    // pi: fuzzy filter (best match first), then a stable sort by provider and id with
    // JavaScript's `localeCompare`.
    let mut models: Vec<&Model> = match search.filter(|s| !s.trim().is_empty()) {
        Some(s) => {
            let texts: Vec<(String, &Model)> = models
                .iter()
                .map(|m| (format!("{} {}", m.provider, m.id), m))
                .collect();
            fuzzy_filter(&texts, s, |(text, _)| text.as_str())
                .into_iter()
                .map(|(_, m)| *m)
                .collect()
        }
        None => models.iter().collect(),
    };
    if models.is_empty() {
        return format!("No models matching \"{}\"\n", search.unwrap_or_default());
    }
    models.sort_by(|a, b| {
        js_locale_compare(&a.provider, &b.provider).then_with(|| js_locale_compare(&a.id, &b.id))
    });
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
        // JavaScript's toFixed rounds a tie up.
        assert_eq!(format_token_count(1_250), "1.3K");
    }
}
