//! Turning what a user typed (`--model sonnet:high`, `--models "anthropic/*,gpt-5*"`,
//! `/model`) into models, as pi's model-resolver does.
//!
//! Order of attempts for one pattern: exact `provider/id` or bare id (case-insensitive;
//! a bare id found under several providers is ambiguous and does not match), then a
//! substring of id or name, preferring aliases (ids without a `-YYYYMMDD` date, or ending
//! in `-latest`) and otherwise the newest dated id. A trailing `:level` is a thinking
//! level only when the whole pattern matched nothing, because OpenRouter ids contain
//! colons (`…:exacto`). Scope patterns with `*`, `?` or `[` are globs matched against
//! `provider/id` and `id`.

use globset::GlobBuilder;

use crate::ai::catalog::catalog;
use crate::ai::model::{Model, ThinkingLevel};

/// The default model id of a provider, if pi names one.
pub fn default_model_for(provider: &str) -> Option<&'static str> {
    catalog().provider(provider)?.default_model.as_deref()
}

/// The model to start with when nothing was chosen: the first provider default (in pi's
/// order) that is available, else the first available model.
pub fn initial_model(available: &[Model]) -> Option<&Model> {
    catalog()
        .default_models()
        .find_map(|(p, id)| available.iter().find(|m| m.provider == p && m.id == id))
        .or_else(|| available.first())
}

fn is_alias(id: &str) -> bool {
    if id.ends_with("-latest") {
        return true;
    }
    let bytes = id.as_bytes();
    let dated = bytes.len() >= 9
        && bytes[bytes.len() - 9] == b'-'
        && bytes[bytes.len() - 8..].iter().all(u8::is_ascii_digit);
    !dated
}

/// Exact `provider/id` or bare id (case-insensitive); ambiguity means no match.
pub fn find_exact<'a>(reference: &str, models: &'a [Model]) -> Option<&'a Model> {
    let reference = reference.trim();
    if reference.is_empty() {
        return None;
    }
    let lower = reference.to_lowercase();
    let canonical: Vec<&Model> = models
        .iter()
        .filter(|m| m.full_id().to_lowercase() == lower)
        .collect();
    match canonical.len() {
        1 => return Some(canonical[0]),
        n if n > 1 => return None,
        _ => {}
    }
    if let Some((provider, id)) = reference.split_once('/') {
        let (provider, id) = (provider.trim(), id.trim());
        if !provider.is_empty() && !id.is_empty() {
            let hits: Vec<&Model> = models
                .iter()
                .filter(|m| {
                    m.provider.eq_ignore_ascii_case(provider) && m.id.eq_ignore_ascii_case(id)
                })
                .collect();
            match hits.len() {
                1 => return Some(hits[0]),
                n if n > 1 => return None,
                _ => {}
            }
        }
    }
    let ids: Vec<&Model> = models
        .iter()
        .filter(|m| m.id.to_lowercase() == lower)
        .collect();
    (ids.len() == 1).then(|| ids[0])
}

/// Exact match, else the best substring match (aliases first, highest id first).
fn try_match<'a>(pattern: &str, models: &'a [Model]) -> Option<&'a Model> {
    if let Some(m) = find_exact(pattern, models) {
        return Some(m);
    }
    let p = pattern.to_lowercase();
    let mut matches: Vec<&Model> = models
        .iter()
        .filter(|m| m.id.to_lowercase().contains(&p) || m.name.to_lowercase().contains(&p))
        .collect();
    if matches.is_empty() {
        return None;
    }
    let has_alias = matches.iter().any(|m| is_alias(&m.id));
    matches.retain(|m| is_alias(&m.id) == has_alias);
    matches.sort_by(|a, b| compare_ids(&b.id, &a.id));
    matches.first().copied()
}

/// Approximates JavaScript's `localeCompare` for ids: case-insensitive first.
fn compare_ids(a: &str, b: &str) -> std::cmp::Ordering {
    a.to_lowercase()
        .cmp(&b.to_lowercase())
        .then_with(|| a.cmp(b))
}

/// `azure-openai-responses/…` (the id before pi 1.0) as `azure/…` (pi 1.6's and the
/// catalogue's).
fn azure_alias(pattern: &str) -> String {
    match pattern.split_once('/') {
        Some((p, rest)) if p.eq_ignore_ascii_case(crate::ai::auth::AZURE_OLD_ID) => {
            format!("{}/{rest}", crate::ai::auth::AZURE_ID)
        }
        _ => pattern.to_string(),
    }
}

/// A pattern's model and optional thinking level.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternMatch<'a> {
    pub model: Option<&'a Model>,
    pub thinking: Option<ThinkingLevel>,
    pub warning: Option<String>,
}

/// pi's `parseModelPattern`. With `allow_invalid_level` false (CLI `--model`), a suffix
/// that is not a thinking level makes the pattern fail instead of being dropped.
pub fn parse_model_pattern<'a>(
    pattern: &str,
    models: &'a [Model],
    allow_invalid_level: bool,
) -> PatternMatch<'a> {
    let pattern = &azure_alias(pattern);
    if let Some(m) = try_match(pattern, models) {
        return PatternMatch {
            model: Some(m),
            thinking: None,
            warning: None,
        };
    }
    let none = PatternMatch {
        model: None,
        thinking: None,
        warning: None,
    };
    let Some((prefix, suffix)) = pattern.rsplit_once(':') else {
        return none;
    };
    match ThinkingLevel::parse(suffix) {
        Some(level) => {
            let inner = parse_model_pattern(prefix, models, allow_invalid_level);
            if inner.model.is_some() {
                let thinking = if inner.warning.is_some() {
                    None
                } else {
                    Some(level)
                };
                return PatternMatch { thinking, ..inner };
            }
            inner
        }
        None if !allow_invalid_level => none,
        None => {
            let inner = parse_model_pattern(prefix, models, allow_invalid_level);
            if inner.model.is_some() {
                return PatternMatch {
                    model: inner.model,
                    thinking: None,
                    warning: Some(format!(
                        "Invalid thinking level \"{suffix}\" in pattern \"{pattern}\". Using default instead."
                    )),
                };
            }
            inner
        }
    }
}

/// One model of a `--models` scope, with the level its pattern asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopedModel {
    pub model: Model,
    pub thinking: Option<ThinkingLevel>,
}

fn glob_matches(pattern: &str, text: &str) -> bool {
    GlobBuilder::new(pattern)
        .case_insensitive(true)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher().is_match(text))
        .unwrap_or(false)
}

/// pi's `resolveModelScope`: the models for `--models` / `enabledModels`, and warnings
/// for patterns that matched nothing.
pub fn resolve_model_scope(
    patterns: &[&str],
    available: &[Model],
) -> (Vec<ScopedModel>, Vec<String>) {
    let mut scoped: Vec<ScopedModel> = Vec::new();
    let mut warnings = Vec::new();
    let add = |scoped: &mut Vec<ScopedModel>, model: &Model, thinking| {
        if !scoped
            .iter()
            .any(|s| s.model.provider == model.provider && s.model.id == model.id)
        {
            scoped.push(ScopedModel {
                model: model.clone(),
                thinking,
            });
        }
    };
    for pattern in patterns {
        if pattern.contains(['*', '?', '[']) {
            let (glob, thinking) = match pattern.rsplit_once(':') {
                Some((g, s)) if ThinkingLevel::parse(s).is_some() => (g, ThinkingLevel::parse(s)),
                _ => (*pattern, None),
            };
            let glob = &azure_alias(glob);
            let hits: Vec<&Model> = available
                .iter()
                .filter(|m| glob_matches(glob, &m.full_id()) || glob_matches(glob, &m.id))
                .collect();
            if hits.is_empty() {
                warnings.push(format!("No models match pattern \"{pattern}\""));
            }
            for m in hits {
                add(&mut scoped, m, thinking);
            }
            continue;
        }
        let found = parse_model_pattern(pattern, available, true);
        if let Some(w) = found.warning {
            warnings.push(w);
        }
        match found.model {
            Some(m) => add(&mut scoped, m, found.thinking),
            None => warnings.push(format!("No models match pattern \"{pattern}\"")),
        }
    }
    (scoped, warnings)
}

/// The outcome of `--provider` / `--model`.
#[derive(Debug, Clone, PartialEq)]
pub struct CliModel {
    pub model: Model,
    pub thinking: Option<ThinkingLevel>,
    pub warning: Option<String>,
}

/// pi's `resolveCliModel`. Uses every model (not only those with keys) so `--api-key`
/// works for a first run. The error is the message pi prints before exiting with 1.
pub fn resolve_cli_model(
    provider: Option<&str>,
    pattern: &str,
    all: &[Model],
) -> Result<CliModel, String> {
    if all.is_empty() {
        return Err(
            "No models available. Check your installation or add models to models.json.".into(),
        );
    }
    let pattern = &azure_alias(pattern);
    let canonical_provider = |name: &str| {
        let name = crate::ai::auth::catalog_provider_id(name);
        all.iter()
            .find(|m| m.provider.eq_ignore_ascii_case(name))
            .map(|m| m.provider.clone())
    };
    let mut chosen = match provider {
        Some(p) => Some(canonical_provider(p).ok_or_else(|| {
            format!(
                "Unknown provider \"{p}\". Use --list-models to see available providers/models."
            )
        })?),
        None => None,
    };
    let exact_anywhere = || {
        let lower = pattern.to_lowercase();
        all.iter()
            .find(|m| m.id.to_lowercase() == lower || m.full_id().to_lowercase() == lower)
    };
    let mut search = pattern.to_string();
    let mut inferred = false;
    if chosen.is_none() {
        if let Some((prefix, rest)) = pattern.split_once('/')
            && let Some(p) = canonical_provider(prefix)
        {
            chosen = Some(p);
            search = rest.to_string();
            inferred = true;
        }
        if chosen.is_none()
            && let Some(m) = exact_anywhere()
        {
            return Ok(CliModel {
                model: m.clone(),
                thinking: None,
                warning: None,
            });
        }
    } else if let Some(p) = &chosen {
        let prefix = format!("{p}/");
        if pattern.to_lowercase().starts_with(&prefix.to_lowercase()) {
            search = pattern[prefix.len()..].to_string();
        }
    }
    let candidates: Vec<Model> = match &chosen {
        Some(p) => all.iter().filter(|m| &m.provider == p).cloned().collect(),
        None => all.to_vec(),
    };
    let found = parse_model_pattern(&search, &candidates, false);
    if let Some(m) = found.model {
        return Ok(CliModel {
            model: m.clone(),
            thinking: found.thinking,
            warning: found.warning,
        });
    }
    if inferred {
        if let Some(m) = exact_anywhere() {
            return Ok(CliModel {
                model: m.clone(),
                thinking: None,
                warning: None,
            });
        }
        let fallback = parse_model_pattern(pattern, all, false);
        if let Some(m) = fallback.model {
            return Ok(CliModel {
                model: m.clone(),
                thinking: fallback.thinking,
                warning: fallback.warning,
            });
        }
    }
    if let Some(p) = &chosen {
        // An unknown id for a known provider: use the provider's default model's settings
        // with the given id (new models work before the catalogue knows them).
        let provider_models: Vec<&Model> = all.iter().filter(|m| &m.provider == p).collect();
        let base = default_model_for(p)
            .and_then(|id| provider_models.iter().find(|m| m.id == id).copied())
            .or_else(|| provider_models.first().copied());
        if let Some(base) = base {
            let mut model = base.clone();
            model.id = search.clone();
            model.name = search.clone();
            return Ok(CliModel {
                model,
                thinking: None,
                warning: Some(format!(
                    "Model \"{search}\" not found for provider \"{p}\". Using custom model id."
                )),
            });
        }
    }
    let display = match &chosen {
        Some(p) => format!("{p}/{search}"),
        None => pattern.to_string(),
    };
    let mut message =
        format!("Model \"{display}\" not found. Use --list-models to see available models.");
    let close = closest_matches(pattern, all, 3);
    if !close.is_empty() {
        message.push_str(&format!(" Did you mean: {}?", close.join(", ")));
    }
    Err(message)
}

/// Up to `n` `provider/id` names closest to `pattern`, best first, for "unknown model"
/// messages. Substring hits rank first, then edit distance on the id.
pub fn closest_matches(pattern: &str, models: &[Model], n: usize) -> Vec<String> {
    let p = pattern.to_lowercase();
    let p = p
        .rsplit_once(':')
        .map_or(p.as_str(), |(a, _)| a)
        .to_string();
    let p_id = p
        .split_once('/')
        .map_or(p.as_str(), |(_, id)| id)
        .to_string();
    let mut scored: Vec<(usize, String)> = models
        .iter()
        .map(|m| {
            let id = m.id.to_lowercase();
            let score = if id.contains(&p_id) {
                0
            } else {
                1 + levenshtein(&p_id, &id)
            };
            (score, m.full_id())
        })
        .collect();
    scored.sort();
    // Suggestions more than a third different are noise.
    let limit = 1 + (p_id.chars().count() / 3).max(2);
    scored
        .into_iter()
        .filter(|(s, _)| *s <= limit)
        .take(n)
        .map(|(_, name)| name)
        .collect()
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}
