//! pi's built-in providers and models, as data.
//!
//! `catalog.json` is generated from a pi release by `node scripts/gen-catalog.mjs` (see
//! docs/models.md): every provider of pi-ai's model list with its display name, the
//! environment variables that hold its key, its default model, and its models field for
//! field (api, base URL, limits, prices, headers, compat flags, thinking-level maps). API
//! names pi-rs does not speak stay plain strings ([`Api::Other`](super::model::Api)), so
//! the list matches pi's even where a request cannot be made yet.
//!
//! The file is embedded in the binary and parsed on first use only: `--version`, `--help`
//! and the like never pay for it.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Deserialize;

use super::model::{Model, ModelCost};

const CATALOG_JSON: &str = include_str!("catalog.json");

/// One built-in provider.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogProvider {
    /// `anthropic`, `amazon-bedrock`, …
    pub id: String,
    /// pi's display name (`Amazon Bedrock`); `None` where pi shows the id.
    #[serde(default)]
    pub name: Option<String>,
    /// Environment variables that hold the key, highest priority first.
    #[serde(default)]
    pub env_vars: Vec<String>,
    /// The model pi starts with when this provider is the first one with a key.
    #[serde(default)]
    pub default_model: Option<String>,
    #[serde(deserialize_with = "catalog_models")]
    pub models: Vec<Model>,
}

/// A catalogue model: [`Model`] plus `cost.tiers`, which [`ModelCost`] does not hold.
#[derive(Deserialize)]
struct CatalogModel {
    #[serde(default)]
    cost: Option<CatalogCost>,
    #[serde(flatten)]
    model: Model,
}

#[derive(Deserialize)]
struct CatalogCost {
    #[serde(flatten)]
    prices: ModelCost,
    #[serde(default)]
    tiers: Option<Vec<serde_json::Value>>,
}

fn catalog_models<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Model>, D::Error> {
    let raw: Vec<CatalogModel> = Vec::deserialize(d)?;
    Ok(raw
        .into_iter()
        .map(|CatalogModel { cost, mut model }| {
            if let Some(cost) = cost {
                model.cost = cost.prices;
                model.extras.cost_tiers = cost.tiers;
            }
            model
        })
        .collect())
}

/// The whole catalogue.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Catalog {
    /// The pi release the data comes from.
    #[serde(default)]
    pub pi_version: String,
    /// Providers in the order pi tries their default models at startup.
    #[serde(default)]
    pub default_model_order: Vec<String>,
    /// Providers in pi's order (that of pi-ai's model list).
    pub providers: Vec<CatalogProvider>,
}

impl Catalog {
    /// A provider by id.
    pub fn provider(&self, id: &str) -> Option<&CatalogProvider> {
        self.providers.iter().find(|p| p.id == id)
    }

    /// `(provider, default model id)` in the order pi tries them.
    pub fn default_models(&self) -> impl Iterator<Item = (&str, &str)> {
        self.default_model_order.iter().filter_map(|id| {
            let p = self.provider(id)?;
            Some((p.id.as_str(), p.default_model.as_deref()?))
        })
    }
}

/// The embedded catalogue, parsed once. A file that does not parse (caught by the tests)
/// gives an empty catalogue rather than a crash.
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| serde_json::from_str(CATALOG_JSON).unwrap_or_default())
}

/// The environment variables of a built-in provider's key, highest priority first (pi-ai's
/// env-api-keys mapping); empty for providers without one.
pub fn env_vars(provider: &str) -> &'static [&'static str] {
    static BY_PROVIDER: OnceLock<HashMap<&'static str, Vec<&'static str>>> = OnceLock::new();
    BY_PROVIDER
        .get_or_init(|| {
            catalog()
                .providers
                .iter()
                .map(|p| {
                    let vars = p.env_vars.iter().map(String::as_str).collect();
                    (p.id.as_str(), vars)
                })
                .collect()
        })
        .get(provider)
        .map_or(&[], Vec::as_slice)
}

/// pi's display name of a provider (`xai` → `xAI`), or the id itself.
pub fn provider_display_name(provider: &str) -> &str {
    catalog()
        .provider(provider)
        .and_then(|p| p.name.as_deref())
        .unwrap_or(provider)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_catalogue_parses_completely() {
        let parsed: Catalog = serde_json::from_str(CATALOG_JSON).unwrap();
        assert!(parsed.providers.len() >= 30, "{}", parsed.providers.len());
        let models: usize = parsed.providers.iter().map(|p| p.models.len()).sum();
        assert!(models > 1500, "{models}");
        assert_eq!(parsed.pi_version, "1.6.0");
        for p in &parsed.providers {
            // pi 1.6's TypeSafe provider ships without chat models.
            assert!(
                !p.models.is_empty() || p.id == "typesafe",
                "{} has no models",
                p.id
            );
            for m in &p.models {
                assert_eq!(m.provider, p.id, "{} listed under {}", m.id, p.id);
            }
        }
    }

    #[test]
    fn env_vars_follow_pi_priority() {
        assert_eq!(
            env_vars("anthropic"),
            [
                "ANTHROPIC_AUTH_TOKEN",
                "ANTHROPIC_OAUTH_TOKEN",
                "ANTHROPIC_API_KEY"
            ]
        );
        assert_eq!(env_vars("azure"), ["AZURE_OPENAI_API_KEY"]);
        assert_eq!(env_vars("github-copilot"), ["COPILOT_GITHUB_TOKEN"]);
        assert_eq!(env_vars("cloudflare-ai-gateway"), ["CLOUDFLARE_API_KEY"]);
        assert!(env_vars("amazon-bedrock").is_empty());
        assert!(env_vars("no-such-provider").is_empty());
    }

    #[test]
    fn display_names_and_defaults_come_from_pi() {
        assert_eq!(provider_display_name("xai"), "xAI");
        assert_eq!(provider_display_name("google"), "Google");
        assert_eq!(provider_display_name("azure"), "Azure");
        assert_eq!(provider_display_name("my-proxy"), "my-proxy");
        let defaults: Vec<(&str, &str)> = catalog().default_models().collect();
        assert_eq!(
            defaults.first(),
            Some(&("amazon-bedrock", "us.anthropic.claude-opus-5-5"))
        );
        assert!(defaults.contains(&("zai", "glm-5.3")));
        assert!(defaults.iter().any(|(p, _)| *p == "azure"));
    }

    #[test]
    fn pi_16_model_fields_are_kept() {
        let models: Vec<&Model> = catalog().providers.iter().flat_map(|p| &p.models).collect();
        let with = |f: &dyn Fn(&Model) -> bool| models.iter().filter(|m| f(m)).count();
        assert!(with(&|m| m.extras.cost_tiers.is_some()) > 100);
        assert!(with(&|m| m.extras.input_limits.is_some()) > 1000);
        assert!(with(&|m| m.extras.prompt_cache.is_some()) > 10);
        assert!(with(&|m| m.extras.kind.as_deref() == Some("chat")) == models.len());
        assert!(with(&|m| m.extras.lab.is_some()) > 10);
        assert!(with(&|m| m.extras.providers.is_some()) > 10);
        assert!(
            with(&|m| m
                .thinking_level_map
                .as_ref()
                .is_some_and(|t| t.get("max").is_some_and(Option::is_some)))
                > 100
        );
        assert!(models.iter().all(|m| m.cost.input >= 0.0));
        let tiered = models
            .iter()
            .find(|m| m.extras.cost_tiers.is_some())
            .expect("a tiered model");
        assert!(tiered.cost.output > 0.0, "{}", tiered.full_id());
    }
}
