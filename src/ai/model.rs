//! What we know about a model: which wire API it speaks, where, its limits and prices.
//!
//! The built-in catalogue and `models.json` loading live in `ai::models`; this file only
//! defines the shapes, serialized like pi's `Model` (camelCase) so RPC clients see the
//! same JSON.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The wire protocol a model is reached with.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Api {
    AnthropicMessages,
    OpenAiCompletions,
    OpenAiResponses,
    GoogleGenerativeAi,
    MistralConversations,
    AzureOpenAiResponses,
    OpenAiCodexResponses,
    GoogleVertex,
    BedrockConverseStream,
    /// An API name we do not implement (kept so files and configs round-trip).
    Other(String),
}

impl Api {
    /// The API names pi-rs can speak.
    pub const SUPPORTED: &'static [&'static str] = &[
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
        "google-generative-ai",
        "mistral-conversations",
        "azure-openai-responses",
        "openai-codex-responses",
        "google-vertex",
        "bedrock-converse-stream",
    ];

    pub fn as_str(&self) -> &str {
        match self {
            Api::AnthropicMessages => "anthropic-messages",
            Api::OpenAiCompletions => "openai-completions",
            Api::OpenAiResponses => "openai-responses",
            Api::GoogleGenerativeAi => "google-generative-ai",
            Api::MistralConversations => "mistral-conversations",
            Api::AzureOpenAiResponses => "azure-openai-responses",
            Api::OpenAiCodexResponses => "openai-codex-responses",
            Api::GoogleVertex => "google-vertex",
            Api::BedrockConverseStream => "bedrock-converse-stream",
            Api::Other(s) => s,
        }
    }

    pub fn parse(s: &str) -> Api {
        match s {
            "anthropic-messages" => Api::AnthropicMessages,
            "openai-completions" => Api::OpenAiCompletions,
            "openai-responses" => Api::OpenAiResponses,
            "google-generative-ai" => Api::GoogleGenerativeAi,
            "mistral-conversations" => Api::MistralConversations,
            "azure-openai-responses" => Api::AzureOpenAiResponses,
            "openai-codex-responses" => Api::OpenAiCodexResponses,
            "google-vertex" => Api::GoogleVertex,
            "bedrock-converse-stream" => Api::BedrockConverseStream,
            other => Api::Other(other.to_string()),
        }
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Api {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Api {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(Api::parse(&s))
    }
}

/// Reasoning effort requested from a model. `Off` disables thinking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum ThinkingLevel {
    #[default]
    Off,
    Minimal,
    Low,
    Medium,
    High,
    Xhigh,
    /// pi 1.6's deepest level, above `xhigh`; only models that map it support it.
    Max,
}

impl ThinkingLevel {
    pub const ALL: [ThinkingLevel; 7] = [
        ThinkingLevel::Off,
        ThinkingLevel::Minimal,
        ThinkingLevel::Low,
        ThinkingLevel::Medium,
        ThinkingLevel::High,
        ThinkingLevel::Xhigh,
        ThinkingLevel::Max,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ThinkingLevel::Off => "off",
            ThinkingLevel::Minimal => "minimal",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High => "high",
            ThinkingLevel::Xhigh => "xhigh",
            ThinkingLevel::Max => "max",
        }
    }

    pub fn parse(s: &str) -> Option<ThinkingLevel> {
        Self::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

impl fmt::Display for ThinkingLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ThinkingLevel {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ThinkingLevel {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        ThinkingLevel::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown thinking level '{s}'")))
    }
}

/// Kinds of input a model accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    Text,
    Image,
}

/// Price in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ModelCost {
    #[serde(default, serialize_with = "crate::ai::message::js_number")]
    pub input: f64,
    #[serde(default, serialize_with = "crate::ai::message::js_number")]
    pub output: f64,
    #[serde(default, serialize_with = "crate::ai::message::js_number")]
    pub cache_read: f64,
    #[serde(default, serialize_with = "crate::ai::message::js_number")]
    pub cache_write: f64,
}

/// A model we can talk to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    pub id: String,
    pub name: String,
    pub api: Api,
    pub provider: String,
    pub base_url: String,
    #[serde(default)]
    pub reasoning: bool,
    /// pi's `thinkingLevelMap`: provider-specific value per level; `null` = unsupported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level_map: Option<BTreeMap<String, Option<String>>>,
    #[serde(default = "default_input")]
    pub input: Vec<InputKind>,
    #[serde(default)]
    pub cost: ModelCost,
    #[serde(default = "default_context_window")]
    pub context_window: u64,
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// API-specific compatibility flags (models.json `compat`), interpreted by each provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compat: Option<Value>,
    /// The pi 1.6 fields of models.json beyond the ones above.
    #[serde(flatten, default)]
    pub extras: ModelExtras,
}

/// pi 1.6 model fields: sampling parameters (sent), and metadata kept for the model
/// (input limits, prompt cache lifetimes, price tiers) that pi-rs parses but does not
/// act on yet.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelExtras {
    /// Fields merged into every request body (OpenAI-compatible APIs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling_params: Option<serde_json::Map<String, Value>>,
    /// `samplingParams` per thinking level (pi's level names), merged over them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling_params_by_thinking_level: Option<BTreeMap<String, serde_json::Map<String, Value>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_limits: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<Value>,
    /// `cost.tiers`: request-wide price tiers.
    #[serde(skip)]
    pub cost_tiers: Option<Vec<Value>>,
    /// Catalogue metadata of pi 1.6's built-in models, kept as pi has it: the model kind
    /// (`chat`), the lab that made it, whether it is free or enabled, and the upstream
    /// providers a routing provider (Radius) sends it to.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub providers: Option<Vec<Value>>,
}

impl Model {
    /// pi 1.6's `resolveSamplingParams`: `samplingParams`, then the entry of the
    /// (clamped) thinking level, later keys winning. `None` when the model has neither.
    pub fn sampling_params_for(
        &self,
        level: ThinkingLevel,
    ) -> Option<serde_json::Map<String, Value>> {
        let level = self.clamp_thinking(level);
        let by_level = self
            .extras
            .sampling_params_by_thinking_level
            .as_ref()
            .and_then(|m| m.get(level.as_str()));
        if self.extras.sampling_params.is_none() && by_level.is_none() {
            return None;
        }
        let mut out = self.extras.sampling_params.clone().unwrap_or_default();
        for (k, v) in by_level.into_iter().flatten() {
            out.insert(k.clone(), v.clone());
        }
        Some(out)
    }
}

fn default_input() -> Vec<InputKind> {
    vec![InputKind::Text]
}

fn default_context_window() -> u64 {
    128_000
}

fn default_max_tokens() -> u64 {
    16_384
}

impl Model {
    pub fn supports_images(&self) -> bool {
        self.input.contains(&InputKind::Image)
    }

    /// Whether the model accepts `xhigh` (otherwise it is clamped to `high`).
    pub fn supports_xhigh(&self) -> bool {
        if let Some(map) = &self.thinking_level_map {
            return matches!(map.get("xhigh"), Some(Some(_)));
        }
        let id = self.id.to_ascii_lowercase();
        id.contains("gpt-5.1-codex-max")
            || id.contains("gpt-5.2")
            || id.contains("gpt-5.3")
            || id.contains("gpt-5.4")
            || id.contains("gpt-5.5")
            || id.contains("opus-4-6")
            || id.contains("opus-4.6")
            || id.contains("opus-4-7")
            || id.contains("opus-4.7")
    }

    /// The thinking levels this model can be set to, in cycling order (pi's
    /// `getSupportedThinkingLevels`): a `null` entry of `thinkingLevelMap` removes a level
    /// (gpt-5 models cannot turn reasoning off), `xhigh` needs an entry or a known xhigh
    /// model, `max` needs an entry.
    pub fn available_thinking_levels(&self) -> Vec<ThinkingLevel> {
        if !self.reasoning {
            return vec![ThinkingLevel::Off];
        }
        ThinkingLevel::ALL
            .into_iter()
            .filter(|level| {
                let mapped = self
                    .thinking_level_map
                    .as_ref()
                    .and_then(|m| m.get(level.as_str()));
                match (level, mapped) {
                    (_, Some(None)) => false,
                    (ThinkingLevel::Xhigh, Some(Some(_))) => true,
                    (ThinkingLevel::Xhigh, None) => self.supports_xhigh(),
                    (ThinkingLevel::Max, None) => false,
                    _ => true,
                }
            })
            .collect()
    }

    /// pi's `clampThinkingLevel`: the requested level if supported, else the next higher
    /// supported one, else the next lower one (`off` on a gpt-5 model becomes `minimal`,
    /// which is what is sent and what the footer shows).
    pub fn clamp_thinking(&self, level: ThinkingLevel) -> ThinkingLevel {
        let available = self.available_thinking_levels();
        if available.contains(&level) {
            return level;
        }
        let all = ThinkingLevel::ALL;
        let idx = all.iter().position(|l| *l == level).unwrap_or(0);
        all[idx..]
            .iter()
            .chain(all[..idx].iter().rev())
            .find(|l| available.contains(l))
            .copied()
            .unwrap_or(ThinkingLevel::Off)
    }

    /// `provider/id`, the canonical way to name a model.
    pub fn full_id(&self) -> String {
        format!("{}/{}", self.provider, self.id)
    }
}
