//! The main pane: one `<section class="entry">` per session entry, rendered once on the
//! server. The page's script shows the sections on the selected root→node path and hides
//! the rest; a section whose entry has nothing to show (a tool result drawn inside its
//! call's card, a hidden custom message) is empty but present, so every entry id has
//! exactly one section.

use chrono::{DateTime, SecondsFormat, Utc};

use super::escape::{fragment_value, push_escaped};
use super::markdown::push_markdown;
use super::tools::{ToolIndex, push_images, push_orphan_result, push_tool_call};
use super::tree::SessionTree;
use crate::ai::js::{js_locale_string, js_to_fixed};
use crate::ai::message::{AssistantBlock, AssistantMessage, StopReason, UserContent};
use crate::messages::{AgentMessage, BashExecutionMessage, CustomMessage, parse_skill_block};
use crate::session::entry::SessionEntry;

/// pi's compact token counts: `950`, `1.4k`, `12k`, `1.2M`.
pub fn compact_tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..10_000 => format!("{}k", js_to_fixed(n as f64 / 1000.0, 1)),
        10_000..1_000_000 => format!("{}k", (n as f64 / 1000.0).round() as u64),
        _ => format!("{}M", js_to_fixed(n as f64 / 1_000_000.0, 1)),
    }
}

/// Writes `<time>` for an ISO timestamp: UTC text on the server, turned into the reader's
/// local time by the page's script.
pub fn push_time(out: &mut String, iso: &str, with_date: bool) {
    let Ok(t) = DateTime::parse_from_rfc3339(iso) else {
        return;
    };
    let t = t.with_timezone(&Utc);
    out.push_str("<time datetime=\"");
    push_escaped(out, &t.to_rfc3339_opts(SecondsFormat::Millis, true));
    out.push_str(if with_date {
        "\" data-date=\"1\">"
    } else {
        "\">"
    });
    let text = if with_date {
        t.format("%Y-%m-%d %H:%M:%S UTC").to_string()
    } else {
        t.format("%H:%M:%S").to_string()
    };
    out.push_str(&text);
    out.push_str("</time>");
}

/// A user message that invoked a skill: pi sends the skill file wrapped in a `<skill>`
/// element, optionally followed by the user's own words.
fn push_user(out: &mut String, content: &UserContent) {
    let text = content.text();
    let blocks = content.to_blocks();
    if let Some(skill) = parse_skill_block(&text) {
        out.push_str("<details class=\"skill\"><summary>skill: ");
        push_escaped(out, skill.name);
        out.push_str(" <span class=\"dim\">");
        push_escaped(out, skill.location);
        out.push_str("</span></summary><div class=\"md\">");
        push_markdown(out, skill.content);
        out.push_str("</div></details>");
        if skill.user_message.is_none() && !content.has_images() {
            return;
        }
        out.push_str("<div class=\"card user\">");
        push_images(out, &blocks);
        if let Some(t) = skill.user_message {
            out.push_str("<div class=\"md\">");
            push_markdown(out, t);
            out.push_str("</div>");
        }
        out.push_str("</div>");
        return;
    }
    out.push_str("<div class=\"card user\">");
    push_images(out, &blocks);
    if !text.trim().is_empty() {
        out.push_str("<div class=\"md\">");
        push_markdown(out, &text);
        out.push_str("</div>");
    }
    out.push_str("</div>");
}

fn push_assistant(out: &mut String, msg: &AssistantMessage, tools: &ToolIndex<'_>) {
    out.push_str("<div class=\"card assistant\">");
    for block in &msg.content {
        match block {
            AssistantBlock::Text(t) if !t.text.trim().is_empty() => {
                out.push_str("<div class=\"md\">");
                push_markdown(out, &t.text);
                out.push_str("</div>");
            }
            AssistantBlock::Thinking(t) if t.redacted == Some(true) => {
                out.push_str("<div class=\"thinking dim\">Thinking (redacted)</div>");
            }
            AssistantBlock::Thinking(t) if !t.thinking.trim().is_empty() => {
                out.push_str("<details class=\"thinking\" open><summary>Thinking</summary><div class=\"md\">");
                push_markdown(out, &t.thinking);
                out.push_str("</div></details>");
            }
            AssistantBlock::ToolCall(call) => push_tool_call(
                out,
                call,
                tools.result(&call.id),
                tools.highlights(&call.id),
            ),
            AssistantBlock::Text(_) | AssistantBlock::Thinking(_) => {}
        }
    }
    match msg.stop_reason {
        StopReason::Aborted => out.push_str("<div class=\"error-text\">Aborted</div>"),
        StopReason::Error => {
            out.push_str("<div class=\"error-text\">Error: ");
            push_escaped(out, msg.error_message.as_deref().unwrap_or("Unknown error"));
            out.push_str("</div>");
        }
        StopReason::Length => {
            out.push_str("<div class=\"error-text\">Stopped: output token limit reached</div>")
        }
        StopReason::Stop | StopReason::ToolUse => {}
    }
    let u = &msg.usage;
    if !msg.model.is_empty() || u.input + u.output > 0 {
        out.push_str("<div class=\"msg-foot\">");
        if !msg.provider.is_empty() {
            push_escaped(out, &msg.provider);
            out.push('/');
        }
        push_escaped(out, &msg.model);
        if u.input + u.output + u.cache_read + u.cache_write > 0 {
            out.push_str(&format!(
                " · ↑{} ↓{}",
                compact_tokens(u.input),
                compact_tokens(u.output)
            ));
            if u.cache_read > 0 {
                out.push_str(&format!(" R{}", compact_tokens(u.cache_read)));
            }
            if u.cache_write > 0 {
                out.push_str(&format!(" W{}", compact_tokens(u.cache_write)));
            }
        }
        out.push_str("</div>");
    }
    out.push_str("</div>");
}

fn push_bash(out: &mut String, bash: &BashExecutionMessage) {
    let failed = bash.cancelled || bash.exit_code.is_some_and(|c| c != 0);
    let status = if failed { "error" } else { "success" };
    out.push_str(&format!(
        "<div class=\"tool bash-run {status}\"><div class=\"tool-head\"><span class=\"cmd\">$ "
    ));
    push_escaped(out, &bash.command);
    out.push_str("</span>");
    if bash.exclude_from_context == Some(true) {
        out.push_str(" <span class=\"dim\">(not sent to the model)</span>");
    }
    out.push_str("</div>");
    let output = bash.output.trim_end();
    if !output.is_empty() {
        let lines = output.lines().count();
        super::tools::push_output(out, &super::ansi::ansi_to_html(output), lines, 10);
    }
    if bash.cancelled {
        out.push_str("<div class=\"warning-text\">(cancelled)</div>");
    } else if let Some(code) = bash.exit_code.filter(|c| *c != 0) {
        out.push_str(&format!("<div class=\"error-text\">(exit {code})</div>"));
    }
    if bash.truncated {
        out.push_str("<div class=\"dim\">Output truncated");
        if let Some(path) = &bash.full_output_path {
            out.push_str(". Full output: ");
            push_escaped(out, path);
        }
        out.push_str("</div>");
    }
    out.push_str("</div>");
}

fn push_custom(out: &mut String, custom_type: &str, content: &UserContent) {
    out.push_str("<div class=\"card custom\"><div class=\"custom-type\">[");
    push_escaped(out, custom_type);
    out.push_str("]</div>");
    push_images(out, &content.to_blocks());
    let text = content.text();
    if !text.trim().is_empty() {
        out.push_str("<div class=\"md\">");
        push_markdown(out, &text);
        out.push_str("</div>");
    }
    out.push_str("</div>");
}

fn push_note(out: &mut String, parts: &[(&str, bool)]) {
    out.push_str("<div class=\"note\">");
    for (text, strong) in parts {
        if *strong {
            out.push_str("<span class=\"note-value\">");
            push_escaped(out, text);
            out.push_str("</span>");
        } else {
            push_escaped(out, text);
        }
    }
    out.push_str("</div>");
}

/// The body of an entry's section; empty when the entry shows nothing by itself.
fn entry_body(entry: &SessionEntry, tools: &ToolIndex<'_>) -> (String, &'static str) {
    let mut out = String::new();
    let kind = match entry {
        SessionEntry::Message(m) => match &m.message {
            AgentMessage::User(u) => {
                push_user(&mut out, &u.content);
                "user"
            }
            AgentMessage::Assistant(a) => {
                push_assistant(&mut out, a, tools);
                "assistant"
            }
            AgentMessage::ToolResult(r) => {
                if !tools.is_shown_with_call(r) {
                    push_orphan_result(&mut out, r);
                }
                "tool-result"
            }
            AgentMessage::BashExecution(b) => {
                push_bash(&mut out, b);
                "bash"
            }
            AgentMessage::Custom(CustomMessage {
                custom_type,
                content,
                display,
                ..
            }) => {
                if *display {
                    push_custom(&mut out, custom_type, content);
                }
                "custom"
            }
            AgentMessage::BranchSummary(s) => {
                push_branch_summary(&mut out, &s.summary);
                "branch-summary"
            }
            AgentMessage::CompactionSummary(c) => {
                push_compaction(&mut out, c.tokens_before, &c.summary);
                "compaction"
            }
            AgentMessage::System(_) => {
                push_note(&mut out, &[("System prompt and tools updated", false)]);
                "note"
            }
            AgentMessage::Unknown(v) => {
                let role = v.get("role").and_then(|r| r.as_str()).unwrap_or("unknown");
                push_note(&mut out, &[("Message with role ", false), (role, true)]);
                "note"
            }
        },
        SessionEntry::Compaction(c) => {
            push_compaction(&mut out, c.tokens_before, &c.summary);
            "compaction"
        }
        SessionEntry::BranchSummary(b) => {
            push_branch_summary(&mut out, &b.summary);
            "branch-summary"
        }
        SessionEntry::CustomMessage(c) => {
            if c.display {
                push_custom(&mut out, &c.custom_type, &c.content);
            }
            "custom"
        }
        SessionEntry::ModelChange(m) => {
            let model = format!("{}/{}", m.provider, m.model_id);
            push_note(&mut out, &[("Switched to model ", false), (&model, true)]);
            "note"
        }
        SessionEntry::ThinkingLevelChange(t) => {
            push_note(
                &mut out,
                &[("Thinking level ", false), (&t.thinking_level, true)],
            );
            "note"
        }
        SessionEntry::Label(l) => {
            match l.label.as_deref().filter(|s| !s.trim().is_empty()) {
                Some(label) => push_note(
                    &mut out,
                    &[
                        ("Label ", false),
                        (label, true),
                        (" set on ", false),
                        (l.target_id.as_str(), false),
                    ],
                ),
                None => push_note(
                    &mut out,
                    &[("Label cleared on ", false), (l.target_id.as_str(), false)],
                ),
            }
            "note"
        }
        SessionEntry::SessionInfo(s) => {
            match s.name.as_deref().filter(|s| !s.trim().is_empty()) {
                Some(name) => push_note(&mut out, &[("Session named ", false), (name, true)]),
                None => push_note(&mut out, &[("Session info updated", false)]),
            }
            "note"
        }
        SessionEntry::Custom(c) => {
            push_note(
                &mut out,
                &[("Extension data ", false), (&c.custom_type, true)],
            );
            "note"
        }
        SessionEntry::ContextEdit(e) => {
            let text = match e.replacement {
                None => "Left out of the model context: ",
                Some(_) => "Content replaced in the model context: ",
            };
            push_note(&mut out, &[(text, false), (e.target_id.as_str(), false)]);
            "note"
        }
        SessionEntry::Usage(u) => {
            push_note(
                &mut out,
                &[
                    ("Usage ", false),
                    (&u.kind, true),
                    (" on ", false),
                    (&u.model, false),
                ],
            );
            "note"
        }
        SessionEntry::Unknown(_) => {
            push_note(
                &mut out,
                &[("Entry of type ", false), (entry.type_name(), true)],
            );
            "note"
        }
    };
    (out, kind)
}

fn push_compaction(out: &mut String, tokens_before: u64, summary: &str) {
    out.push_str("<details class=\"card compaction\"><summary>[compaction] Compacted from ");
    out.push_str(&js_locale_string(tokens_before));
    out.push_str(" tokens</summary><div class=\"md\">");
    push_markdown(out, summary);
    out.push_str("</div></details>");
}

fn push_branch_summary(out: &mut String, summary: &str) {
    out.push_str("<div class=\"card branch-summary\"><div class=\"card-title\">Branch summary</div><div class=\"md\">");
    push_markdown(out, summary);
    out.push_str("</div></div>");
}

/// Writes the section of one tree node.
pub fn push_entry(
    out: &mut String,
    tree: &SessionTree<'_>,
    node: usize,
    tools: &ToolIndex<'_>,
    shown: bool,
) {
    let entry = tree.entries[node];
    let id = tree.id(node);
    let (body, kind) = entry_body(entry, tools);
    out.push_str("<section class=\"entry k-");
    out.push_str(kind);
    out.push_str("\" data-id=\"");
    push_escaped(out, id);
    out.push('"');
    if !shown {
        out.push_str(" hidden");
    }
    out.push('>');
    if !body.is_empty() {
        out.push_str("<div class=\"meta\">");
        push_time(out, entry.timestamp(), false);
        if let Some(label) = tree.label(node) {
            out.push_str("<span class=\"label-badge\">");
            push_escaped(out, label);
            out.push_str("</span>");
        }
        out.push_str("<a class=\"permalink\" title=\"Link to this entry\" href=\"#entry=");
        push_escaped(out, &fragment_value(id));
        out.push_str("\">#</a></div>");
        out.push_str(&body);
    }
    out.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_formatted_like_pi() {
        let tokens: Vec<String> = [950, 1396, 11000, 999_499, 1_260_000]
            .iter()
            .map(|&n| compact_tokens(n))
            .collect();
        assert_eq!(tokens, ["950", "1.4k", "11k", "999k", "1.3M"]);
        // Halves round up, as JavaScript's `toFixed`.
        assert_eq!(compact_tokens(1_250), "1.3k");
        assert_eq!(compact_tokens(1_250_000), "1.3M");
    }

    #[test]
    fn times_are_utc_text_with_a_machine_readable_attribute() {
        let mut out = String::new();
        push_time(&mut out, "2026-11-22T03:39:48.634Z", true);
        push_time(&mut out, "not a time", false);
        assert_eq!(
            out,
            "<time datetime=\"2026-11-22T03:39:48.634Z\" data-date=\"1\">2026-11-22 03:39:48 UTC</time>"
        );
    }
}
