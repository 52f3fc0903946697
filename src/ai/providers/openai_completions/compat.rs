//! The `compat` flags of chat-completions servers: pi's detection from provider name and
//! base URL, overridden by the model's `compat` object from models.json.

use super::super::{compat_bool, compat_str};
use crate::ai::model::Model;

/// How a server wants reasoning switched on and off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThinkingFormat {
    /// `reasoning_effort`.
    OpenAi,
    /// `reasoning: {effort}`.
    OpenRouter,
    /// `thinking: {type}` plus `reasoning_effort`.
    DeepSeek,
    /// `enable_thinking`.
    Zai,
    /// `enable_thinking`.
    Qwen,
    /// `chat_template_kwargs: {enable_thinking, preserve_thinking}`.
    QwenChatTemplate,
}

impl ThinkingFormat {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "openai" => Self::OpenAi,
            "openrouter" => Self::OpenRouter,
            "deepseek" => Self::DeepSeek,
            "zai" => Self::Zai,
            "qwen" => Self::Qwen,
            "qwen-chat-template" => Self::QwenChatTemplate,
            _ => return None,
        })
    }
}

/// The resolved `compat` flags: explicit values from models.json over detected defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Compat {
    pub supports_store: bool,
    pub supports_developer_role: bool,
    pub supports_reasoning_effort: bool,
    pub supports_usage_in_streaming: bool,
    /// `true`: `max_tokens`; `false`: `max_completion_tokens`.
    pub use_max_tokens_field: bool,
    pub requires_tool_result_name: bool,
    pub requires_assistant_after_tool_result: bool,
    pub requires_thinking_as_text: bool,
    pub requires_reasoning_content_on_assistant_messages: bool,
    pub thinking_format: ThinkingFormat,
    pub zai_tool_stream: bool,
    /// Whether tools carry `strict: false` (pi 1.6: only when models.json says so).
    pub supports_strict_mode: bool,
    /// Whether a request with tool history but no tools sends `tools: []` (proxies in
    /// front of Anthropic want it; pi 1.6 sends it only when models.json says so).
    pub requires_tools_with_tool_history: bool,
    /// OpenRouter's Anthropic models take Anthropic-style `cache_control` markers.
    pub anthropic_cache_control: bool,
    pub send_session_affinity_headers: bool,
    pub supports_long_cache_retention: bool,
}

impl Compat {
    /// pi's `getCompat`: detection from provider and base URL, then `model.compat`.
    pub fn for_model(model: &Model) -> Self {
        let provider = model.provider.as_str();
        let url = model.base_url.as_str();
        let is_zai = provider == "zai"
            || provider == "zai-coding-cn"
            || url.contains("api.z.ai")
            || url.contains("open.bigmodel.cn");
        let is_moonshot = provider == "moonshotai"
            || provider == "moonshotai-cn"
            || url.contains("api.moonshot.");
        let is_cf_workers =
            provider == "cloudflare-workers-ai" || url.contains("api.cloudflare.com");
        let is_cf_gateway =
            provider == "cloudflare-ai-gateway" || url.contains("gateway.ai.cloudflare.com");
        let is_grok = provider == "xai" || url.contains("api.x.ai");
        let is_deepseek = provider == "deepseek" || url.to_lowercase().contains("deepseek.com");
        let is_together = provider == "together"
            || url.contains("api.together.ai")
            || url.contains("api.together.xyz");
        let is_nvidia = provider == "nvidia" || url.contains("integrate.api.nvidia.com");
        let is_ant_ling = provider == "ant-ling" || url.contains("api.ant-ling.com");
        // The developer role is OpenAI's own; every other host gets `system` (pi 1.6).
        let is_openai = provider == "openai" || url.contains("api.openai.com");
        let non_standard = is_nvidia
            || is_together
            || is_ant_ling
            || provider == "cerebras"
            || url.contains("cerebras.ai")
            || is_grok
            || url.contains("chutes.ai")
            || url.contains("deepseek.com")
            || is_zai
            || is_moonshot
            || provider == "opencode"
            || url.contains("opencode.ai")
            || is_cf_workers
            || is_cf_gateway;
        let use_max_tokens = url.contains("chutes.ai")
            || is_deepseek
            || is_moonshot
            || is_cf_gateway
            || is_together
            || is_nvidia
            || is_ant_ling
            || is_zai;
        let detected_format = if is_deepseek {
            ThinkingFormat::DeepSeek
        } else if is_zai {
            ThinkingFormat::Zai
        } else if provider == "openrouter" || url.contains("openrouter.ai") {
            ThinkingFormat::OpenRouter
        } else {
            ThinkingFormat::OpenAi
        };
        let flag = |key: &str, default: bool| compat_bool(model, key).unwrap_or(default);
        Self {
            supports_store: flag("supportsStore", !non_standard),
            supports_developer_role: flag("supportsDeveloperRole", is_openai),
            supports_reasoning_effort: flag(
                "supportsReasoningEffort",
                !is_grok
                    && !is_zai
                    && !is_moonshot
                    && !is_together
                    && !is_cf_gateway
                    && !is_nvidia
                    && !is_ant_ling,
            ),
            supports_usage_in_streaming: flag("supportsUsageInStreaming", true),
            use_max_tokens_field: match compat_str(model, "maxTokensField") {
                Some("max_tokens") => true,
                Some("max_completion_tokens") => false,
                _ => use_max_tokens,
            },
            requires_tool_result_name: flag("requiresToolResultName", false),
            requires_assistant_after_tool_result: flag("requiresAssistantAfterToolResult", false),
            requires_thinking_as_text: flag("requiresThinkingAsText", false),
            requires_reasoning_content_on_assistant_messages: flag(
                "requiresReasoningContentOnAssistantMessages",
                is_deepseek,
            ),
            thinking_format: compat_str(model, "thinkingFormat")
                .and_then(ThinkingFormat::parse)
                .unwrap_or(detected_format),
            zai_tool_stream: flag("zaiToolStream", false),
            supports_strict_mode: flag("supportsStrictMode", false),
            requires_tools_with_tool_history: flag("requiresToolsWithToolHistory", false),
            anthropic_cache_control: match compat_str(model, "cacheControlFormat") {
                Some(f) => f == "anthropic",
                None => provider == "openrouter" && model.id.starts_with("anthropic/"),
            },
            send_session_affinity_headers: flag("sendSessionAffinityHeaders", false),
            supports_long_cache_retention: flag(
                "supportsLongCacheRetention",
                !(is_cf_workers || is_cf_gateway),
            ),
        }
    }
}
