//! A generator of large, realistic synthetic sessions for benchmarks and tests.
//!
//! [`generate`] writes a v3 session file the way pi would have written it after a long
//! working session: user prompts, assistant turns with tool calls, tool results (mostly a
//! few KB, sometimes tens of KB), occasional failed turns and retries, model and thinking
//! changes, labels, extension entries, many in-place branches (some with branch
//! summaries) and compactions along the path. The same `(turns, seed)` always gives the
//! same file. Nothing here is used by a normal pi-rs session.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use serde_json::json;

use crate::ai::message::{
    AssistantBlock, AssistantMessage, Extra, StopReason, TextContent, ToolCall, ToolResultMessage,
    Usage, UserBlock, UserContent, UserMessage,
};
use crate::messages::AgentMessage;
use crate::session::entry::{
    BranchSummaryEntry, CompactionEntry, CustomEntry, CustomMessageEntry, EntryId, LabelEntry,
    MessageEntry, ModelChangeEntry, SessionEntry, SessionHeader, SessionInfoEntry,
    ThinkingLevelChangeEntry,
};
use crate::session::ids::{IdSource, splitmix64};

/// What a generated file contains.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SynthStats {
    pub entries: usize,
    pub messages: usize,
    /// Times the conversation went back to an earlier point and continued there.
    pub branches: usize,
    pub branch_summaries: usize,
    pub compactions: usize,
    pub labels: usize,
    pub bytes: u64,
}

const WORDS: &[&str] = &[
    "the",
    "session",
    "file",
    "tree",
    "branch",
    "compaction",
    "parser",
    "buffer",
    "index",
    "function",
    "return",
    "error",
    "value",
    "struct",
    "module",
    "test",
    "append",
    "leaf",
    "context",
    "model",
    "token",
    "stream",
    "write",
    "read",
    "path",
    "entry",
    "label",
    "fix",
    "update",
    "config",
    "render",
    "terminal",
    "line",
    "width",
    "cache",
    "result",
    "async",
    "await",
    "match",
    "option",
    "vector",
    "string",
    "bytes",
    "header",
    "summary",
    "tool",
];

const TOOLS: &[&str] = &["read", "bash", "edit", "write", "grep"];

struct Gen {
    out: BufWriter<File>,
    rng: u64,
    ids: IdSource,
    taken: std::collections::HashSet<String>,
    clock_ms: i64,
    /// The current path, root first: (entry id, is the start of a turn).
    path: Vec<(EntryId, bool)>,
    stats: SynthStats,
}

impl Gen {
    fn next(&mut self) -> u64 {
        splitmix64(&mut self.rng)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }

    fn chance(&mut self, per_thousand: u64) -> bool {
        self.below(1000) < per_thousand
    }

    fn words(&mut self, chars: usize) -> String {
        let mut text = String::with_capacity(chars + 16);
        while text.len() < chars {
            if !text.is_empty() {
                text.push(if self.chance(60) { '\n' } else { ' ' });
            }
            let word = WORDS[self.below(WORDS.len() as u64) as usize];
            text.push_str(word);
        }
        text
    }

    fn tick(&mut self) -> (String, i64) {
        self.clock_ms += 200 + self.below(20_000) as i64;
        let ms = self.clock_ms;
        let iso = chrono::DateTime::from_timestamp_millis(ms)
            .unwrap_or_default()
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        (iso, ms)
    }

    fn new_id(&mut self) -> EntryId {
        let taken = &self.taken;
        let id = self.ids.entry_id(|c| taken.contains(c));
        self.taken.insert(id.0.clone());
        id
    }

    fn leaf(&self) -> Option<EntryId> {
        self.path.last().map(|(id, _)| id.clone())
    }

    fn write(&mut self, entry: &SessionEntry, turn_start: bool) -> io::Result<()> {
        let line = entry.to_json_line();
        self.out.write_all(line.as_bytes())?;
        self.out.write_all(b"\n")?;
        self.stats.bytes += line.len() as u64 + 1;
        self.stats.entries += 1;
        self.path
            .push((EntryId(entry.id().to_string()), turn_start));
        Ok(())
    }

    fn message(&mut self, message: AgentMessage, turn_start: bool) -> io::Result<()> {
        let (timestamp, _) = self.tick();
        let entry = SessionEntry::Message(MessageEntry {
            id: self.new_id(),
            parent_id: self.leaf(),
            timestamp,
            message,
            extra: Extra::new(),
        });
        self.stats.messages += 1;
        self.write(&entry, turn_start)
    }

    fn assistant(&mut self, content: Vec<AssistantBlock>, stop: StopReason) -> AgentMessage {
        let (_, ms) = self.tick();
        let input = 2_000 + self.below(60_000);
        let output = 50 + self.below(2_000);
        AgentMessage::Assistant(AssistantMessage {
            content,
            api: "anthropic-messages".into(),
            provider: "anthropic".into(),
            model: "claude-sonnet-4-5".into(),
            usage: Usage {
                input,
                output,
                total_tokens: input + output,
                ..Usage::default()
            },
            stop_reason: stop,
            error_message: (stop == StopReason::Error).then(|| "Overloaded".to_string()),
            timestamp: ms,
            ..AssistantMessage::default()
        })
    }

    fn turn(&mut self) -> io::Result<()> {
        let (_, ms) = self.tick();
        let chars = 60 + self.below(400) as usize;
        let prompt = self.words(chars);
        self.message(AgentMessage::User(UserMessage::text(prompt, ms)), true)?;
        if self.chance(15) {
            // A failed attempt; the retry is its child, as pi stores retries.
            let failed = self.assistant(Vec::new(), StopReason::Error);
            self.message(failed, false)?;
        }
        let rounds = self.below(3);
        for _ in 0..rounds {
            let calls = 1 + self.below(2);
            let intro_len = 20 + self.below(200) as usize;
            let mut content = vec![AssistantBlock::Text(TextContent::new(
                self.words(intro_len),
            ))];
            let mut pending = Vec::new();
            for _ in 0..calls {
                let name = TOOLS[self.below(TOOLS.len() as u64) as usize];
                let id = format!("call_{:010x}", self.next() & 0xff_ffff_ffff);
                content.push(AssistantBlock::ToolCall(ToolCall {
                    id: id.clone(),
                    name: name.into(),
                    arguments: json!({ "path": format!("src/{}.rs", WORDS[self.below(WORDS.len() as u64) as usize]) }),
                    ..ToolCall::default()
                }));
                pending.push((id, name));
            }
            let message = self.assistant(content, StopReason::ToolUse);
            self.message(message, false)?;
            for (id, name) in pending {
                let size = if self.chance(30) {
                    8_000 + self.below(16_000)
                } else {
                    150 + self.below(1_350)
                } as usize;
                let (_, ms) = self.tick();
                let output = self.words(size);
                let result = AgentMessage::ToolResult(ToolResultMessage {
                    tool_call_id: id,
                    tool_name: name.into(),
                    content: vec![UserBlock::text(output)],
                    details: None,
                    is_error: self.chance(50),
                    timestamp: ms,
                    extra: Extra::new(),
                });
                self.message(result, false)?;
            }
        }
        let answer_len = 80 + self.below(620) as usize;
        let answer = vec![AssistantBlock::Text(TextContent::new(
            self.words(answer_len),
        ))];
        let message = self.assistant(answer, StopReason::Stop);
        self.message(message, false)
    }

    fn entry_at_leaf(
        &mut self,
        make: impl FnOnce(EntryId, Option<EntryId>, String) -> SessionEntry,
    ) -> io::Result<()> {
        let (timestamp, _) = self.tick();
        let entry = make(self.new_id(), self.leaf(), timestamp);
        self.write(&entry, false)
    }

    /// Goes back one to three turns and continues from the parent of that turn's prompt
    /// (what `/tree` → select a user message does), sometimes leaving a branch summary.
    fn branch(&mut self, since_compaction: usize) -> io::Result<()> {
        let starts: Vec<usize> = self
            .path
            .iter()
            .enumerate()
            .skip(self.path.len().saturating_sub(since_compaction))
            .filter(|(_, (_, start))| *start)
            .map(|(i, _)| i)
            .collect();
        if starts.len() < 4 {
            return Ok(());
        }
        let back = 1 + self.below(3) as usize;
        let cut = starts[starts.len() - back];
        self.path.truncate(cut);
        self.stats.branches += 1;
        if self.chance(300) {
            let from = self.leaf();
            let summary = format!(
                "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n{}",
                self.words(600)
            );
            self.entry_at_leaf(|id, parent_id, timestamp| {
                SessionEntry::BranchSummary(BranchSummaryEntry {
                    id,
                    parent_id,
                    timestamp,
                    from_id: from.map_or_else(|| "root".into(), |f| f.0),
                    summary,
                    details: Some(json!({ "readFiles": ["src/lib.rs"], "modifiedFiles": [] })),
                    from_hook: Some(false),
                    extra: Extra::new(),
                })
            })?;
            self.stats.branch_summaries += 1;
        }
        Ok(())
    }
}

/// Writes a synthetic session of `turns` user turns to `path` (replacing it).
pub fn generate(path: &Path, turns: usize, seed: u64) -> io::Result<SynthStats> {
    let mut g = Gen {
        out: BufWriter::with_capacity(1 << 20, File::create(path)?),
        rng: seed,
        ids: IdSource::Seeded(seed ^ 0x5eed),
        taken: Default::default(),
        clock_ms: 1_760_000_000_000,
        path: Vec::new(),
        stats: SynthStats::default(),
    };
    let session_id = g.ids.session_id();
    let (timestamp, _) = g.tick();
    let header = SessionHeader::new(
        session_id.to_string(),
        timestamp,
        "/home/user/synthetic-project".into(),
        None,
    );
    let header_line = serde_json::to_string(&header).map_err(io::Error::other)?;
    g.out.write_all(header_line.as_bytes())?;
    g.out.write_all(b"\n")?;
    g.stats.bytes += header_line.len() as u64 + 1;
    g.entry_at_leaf(|id, parent_id, timestamp| {
        SessionEntry::ModelChange(ModelChangeEntry {
            id,
            parent_id,
            timestamp,
            provider: "anthropic".into(),
            model_id: "claude-sonnet-4-5".into(),
            extra: Extra::new(),
        })
    })?;
    g.entry_at_leaf(|id, parent_id, timestamp| {
        SessionEntry::ThinkingLevelChange(ThinkingLevelChangeEntry {
            id,
            parent_id,
            timestamp,
            thinking_level: "medium".into(),
            extra: Extra::new(),
        })
    })?;
    let mut since_compaction = 0usize;
    for turn in 0..turns {
        if turn > 0 && g.chance(330) {
            g.branch(since_compaction)?;
        }
        g.turn()?;
        since_compaction += 1;
        if since_compaction >= 250 {
            // Keep the last few turns, like an auto-compaction would.
            let keep_from = g
                .path
                .iter()
                .rev()
                .filter(|(_, start)| *start)
                .nth(3)
                .map(|(id, _)| id.clone());
            if let Some(first_kept) = keep_from {
                let summary = format!(
                    "## Goal\n{}\n\n<modified-files>\nsrc/lib.rs\n</modified-files>",
                    g.words(1500)
                );
                let tokens_before = 150_000 + g.below(30_000);
                g.entry_at_leaf(|id, parent_id, timestamp| {
                    SessionEntry::Compaction(CompactionEntry {
                        id,
                        parent_id,
                        timestamp,
                        summary,
                        first_kept_entry_id: first_kept,
                        tokens_before,
                        details: Some(json!({ "readFiles": [], "modifiedFiles": ["src/lib.rs"] })),
                        from_hook: Some(false),
                        extra: Extra::new(),
                    })
                })?;
                g.stats.compactions += 1;
                since_compaction = 4;
            }
        }
        if g.chance(10) && g.path.len() > 2 {
            let pick = g.below(g.path.len() as u64) as usize;
            let target = g.path[pick].0.clone();
            let label = format!("checkpoint-{turn}");
            g.entry_at_leaf(|id, parent_id, timestamp| {
                SessionEntry::Label(LabelEntry {
                    id,
                    parent_id,
                    timestamp,
                    target_id: target,
                    label: Some(label),
                    extra: Extra::new(),
                })
            })?;
            g.stats.labels += 1;
        }
        if g.chance(5) {
            let level = ["off", "low", "medium", "high"][g.below(4) as usize];
            g.entry_at_leaf(|id, parent_id, timestamp| {
                SessionEntry::ThinkingLevelChange(ThinkingLevelChangeEntry {
                    id,
                    parent_id,
                    timestamp,
                    thinking_level: level.into(),
                    extra: Extra::new(),
                })
            })?;
        }
        if g.chance(5) {
            let data = json!({ "turn": turn, "state": g.words(40) });
            g.entry_at_leaf(|id, parent_id, timestamp| {
                SessionEntry::Custom(CustomEntry {
                    id,
                    parent_id,
                    timestamp,
                    custom_type: "synthetic-extension".into(),
                    data: Some(data),
                    extra: Extra::new(),
                })
            })?;
        }
        if g.chance(5) {
            let content = UserContent::Text(g.words(120));
            g.entry_at_leaf(|id, parent_id, timestamp| {
                SessionEntry::CustomMessage(CustomMessageEntry {
                    id,
                    parent_id,
                    timestamp,
                    custom_type: "synthetic-extension".into(),
                    content,
                    display: true,
                    details: None,
                    extra: Extra::new(),
                })
            })?;
        }
        if turn == 2 {
            g.entry_at_leaf(|id, parent_id, timestamp| {
                SessionEntry::SessionInfo(SessionInfoEntry {
                    id,
                    parent_id,
                    timestamp,
                    name: Some("Synthetic benchmark session".into()),
                    extra: Extra::new(),
                })
            })?;
        }
    }
    g.out.flush()?;
    Ok(g.stats)
}
