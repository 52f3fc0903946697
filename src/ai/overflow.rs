//! Recognising "the prompt did not fit in the context window" in a failed response.
//!
//! Providers word this differently, and some do not fail at all: they accept the request
//! and report more input tokens than the window holds, or truncate the input and stop
//! with nothing generated. [`is_context_overflow`] knows pi's catalogue of messages and
//! both silent forms, so the agent can compact and retry instead of showing an error.
//! Rate-limit errors that happen to mention "tokens" are excluded.

use std::sync::OnceLock;

use regex::RegexSet;

use super::message::{AssistantMessage, StopReason};

fn overflow_patterns() -> &'static RegexSet {
    static SET: OnceLock<RegexSet> = OnceLock::new();
    SET.get_or_init(|| {
        RegexSet::new([
            r"(?i)prompt is too long",                                  // Anthropic
            r"(?i)request_too_large",                                   // Anthropic 413
            r"(?i)input is too long for requested model",               // Bedrock
            r"(?i)exceeds the context window",                          // OpenAI
            r"(?i)input token count.*exceeds the maximum",              // Google
            r"(?i)maximum prompt length is \d+",                        // xAI
            r"(?i)reduce the length of the messages",                   // Groq
            r"(?i)maximum context length is \d+ tokens",                // OpenRouter
            r"(?i)exceeds the limit of \d+",                            // Copilot
            r"(?i)exceeds the available context size",                  // llama.cpp
            r"(?i)greater than the context length",                     // LM Studio
            r"(?i)context window exceeds limit",                        // MiniMax
            r"(?i)exceeded model token limit",                          // Kimi
            r"(?i)too large for model with \d+ maximum context length", // Mistral
            r"(?i)model_context_window_exceeded",                       // z.ai
            r"(?i)prompt too long; exceeded (?:max )?context length",   // Ollama
            r"(?i)context[_ ]length[_ ]exceeded",
            r"(?i)too many tokens",
            r"(?i)token limit exceeded",
            r"(?i)^4(?:00|13)\s*(?:status code)?\s*\(no body\)", // Cerebras
        ])
        .unwrap_or_else(|_| RegexSet::empty())
    })
}

fn non_overflow_patterns() -> &'static RegexSet {
    static SET: OnceLock<RegexSet> = OnceLock::new();
    SET.get_or_init(|| {
        RegexSet::new([
            r"(?i)^(Throttling error|Service unavailable):",
            r"(?i)rate limit",
            r"(?i)too many requests",
        ])
        .unwrap_or_else(|_| RegexSet::empty())
    })
}

/// Whether `message` means the context window was exceeded. `context_window` (0 =
/// unknown) enables the silent-overflow checks.
pub fn is_context_overflow(message: &AssistantMessage, context_window: u64) -> bool {
    if message.stop_reason == StopReason::Error
        && let Some(err) = message.error_message.as_deref()
        && !non_overflow_patterns().is_match(err)
        && overflow_patterns().is_match(err)
    {
        return true;
    }
    if context_window == 0 {
        return false;
    }
    let input = message.usage.input + message.usage.cache_read;
    match message.stop_reason {
        // Accepted silently (z.ai): more input than the window holds.
        StopReason::Stop => input > context_window,
        // Truncated to fit, leaving no room to answer (Xiaomi MiMo).
        StopReason::Length => {
            message.usage.output == 0 && input as f64 >= context_window as f64 * 0.99
        }
        StopReason::ToolUse | StopReason::Error | StopReason::Aborted => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::message::Usage;

    fn error(text: &str) -> AssistantMessage {
        AssistantMessage {
            stop_reason: StopReason::Error,
            error_message: Some(text.to_string()),
            ..AssistantMessage::default()
        }
    }

    #[test]
    fn provider_overflow_messages_are_recognised() {
        let table = [
            (
                "anthropic",
                "prompt is too long: 213462 tokens > 200000 maximum",
            ),
            (
                "anthropic 413",
                r#"413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}"#,
            ),
            (
                "openai",
                "Your input exceeds the context window of this model",
            ),
            (
                "google",
                "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
            ),
            (
                "xai",
                "This model's maximum prompt length is 131072 but the request contains 537812 tokens",
            ),
            (
                "groq",
                "Please reduce the length of the messages or completion",
            ),
            (
                "openrouter",
                "This endpoint's maximum context length is 200000 tokens. However, you requested about 250000 tokens",
            ),
            (
                "llama.cpp",
                "the request exceeds the available context size, try increasing it",
            ),
            (
                "lm studio",
                "tokens to keep from the initial prompt is greater than the context length",
            ),
            (
                "mistral",
                "Prompt contains 300000 tokens, too large for model with 131072 maximum context length",
            ),
            (
                "ollama",
                "prompt too long; exceeded max context length by 100 tokens",
            ),
            ("cerebras", "400 status code (no body)"),
            ("cerebras 413", "413 (no body)"),
            ("generic", "context_length_exceeded"),
        ];
        for (who, text) in table {
            assert!(is_context_overflow(&error(text), 0), "{who}: {text}");
        }
    }

    #[test]
    fn rate_limits_and_other_errors_are_not_overflow() {
        for text in [
            "Throttling error: Too many tokens, please wait before trying again.",
            "Rate limit reached: too many tokens per minute",
            "429 Too Many Requests",
            "500 Internal server error",
            "Request was aborted",
        ] {
            assert!(!is_context_overflow(&error(text), 0), "{text}");
        }
    }

    #[test]
    fn silent_overflow_is_detected_from_usage() {
        let ok = |input, output, stop| AssistantMessage {
            stop_reason: stop,
            usage: Usage {
                input,
                output,
                cache_read: 1000,
                ..Usage::default()
            },
            ..AssistantMessage::default()
        };
        assert!(is_context_overflow(
            &ok(130_000, 10, StopReason::Stop),
            128_000
        ));
        assert!(!is_context_overflow(
            &ok(100_000, 10, StopReason::Stop),
            128_000
        ));
        assert!(!is_context_overflow(&ok(130_000, 10, StopReason::Stop), 0));
        assert!(is_context_overflow(
            &ok(126_800, 0, StopReason::Length),
            128_000
        ));
        assert!(!is_context_overflow(
            &ok(126_800, 5, StopReason::Length),
            128_000
        ));
    }
}
