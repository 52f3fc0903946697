//! Random sequences of what pi does to a session — turns with tool calls, branching back,
//! resetting the leaf, labels, compactions, branch summaries, model changes and reloading
//! from disk — keep the tree and the context sound.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::collections::HashSet;

use crate::support::session::*;
use pi::messages::AgentMessage;
use pi::session::context::SessionContext;
use pi::session::entry::{EntryId, SessionEntry};
use pi::session::manager::SessionManager;
use pi::session::tree::{EntryKind, MessageRole};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Turn { tool_rounds: u8 },
    BranchBack(usize),
    ResetLeaf,
    Label(usize, bool),
    Compact(usize),
    BranchSummary(Option<usize>),
    ModelChange,
    Reload,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..3).prop_map(|tool_rounds| Op::Turn { tool_rounds }),
        3 => any::<usize>().prop_map(Op::BranchBack),
        1 => Just(Op::ResetLeaf),
        2 => (any::<usize>(), any::<bool>()).prop_map(|(i, set)| Op::Label(i, set)),
        2 => any::<usize>().prop_map(Op::Compact),
        2 => proptest::option::of(any::<usize>()).prop_map(Op::BranchSummary),
        1 => Just(Op::ModelChange),
        2 => Just(Op::Reload),
    ]
}

struct World {
    session: SessionManager,
    /// Entries after which a new user prompt keeps tool calls paired.
    settled: Vec<EntryId>,
    counter: usize,
}

impl World {
    fn turn(&mut self, tool_rounds: u8) {
        self.counter += 1;
        let n = self.counter;
        self.session.append_message(user(&format!("u{n}"))).unwrap();
        for r in 0..tool_rounds {
            let call = format!("call_{n}_{r}");
            self.session
                .append_message(assistant_calls(&format!("a{n}.{r}"), &call, "read"))
                .unwrap();
            self.session
                .append_message(tool_result(&call, "read", &format!("t{n}.{r}")))
                .unwrap();
        }
        let last = self
            .session
            .append_message(assistant(&format!("a{n}")))
            .unwrap();
        self.settled.push(last);
    }

    fn pick(&self, i: usize) -> Option<EntryId> {
        (!self.settled.is_empty()).then(|| self.settled[i % self.settled.len()].clone())
    }

    fn apply(&mut self, op: &Op, dir: &std::path::Path) {
        match op {
            Op::Turn { tool_rounds } => self.turn(*tool_rounds),
            Op::BranchBack(i) => {
                if let Some(id) = self.pick(*i) {
                    self.session.branch(&id).unwrap();
                }
            }
            Op::ResetLeaf => self.session.reset_leaf(),
            Op::Label(i, set) => {
                let ids: Vec<EntryId> = self.session.heads().map(|h| h.id).collect();
                if !ids.is_empty() {
                    let target = &ids[i % ids.len()];
                    let label = format!("L{}", i % 7);
                    let id = self
                        .session
                        .append_label_change(target, set.then_some(label.as_str()))
                        .unwrap();
                    self.settled.push(id);
                }
            }
            Op::Compact(i) => {
                let prompts: Vec<EntryId> = self
                    .session
                    .path_ids(None)
                    .into_iter()
                    .filter(|id| {
                        self.session.head(id).unwrap().kind == EntryKind::Message(MessageRole::User)
                    })
                    .collect();
                if !prompts.is_empty() {
                    let first_kept = &prompts[i % prompts.len()];
                    let id = self
                        .session
                        .append_compaction(&format!("S{i}"), first_kept, 1000, None, Some(false))
                        .unwrap();
                    self.settled.push(id);
                }
            }
            Op::BranchSummary(target) => {
                let target = target.and_then(|i| self.pick(i));
                let id = self
                    .session
                    .branch_with_summary(target.as_ref(), "B", None, Some(false))
                    .unwrap();
                self.settled.push(id);
            }
            Op::ModelChange => {
                let id = self
                    .session
                    .append_model_change("mock", &format!("m{}", self.counter))
                    .unwrap();
                self.settled.push(id);
            }
            Op::Reload => {
                let Some(file) = self
                    .session
                    .session_file()
                    .filter(|f| f.exists())
                    .map(|f| f.to_path_buf())
                else {
                    return;
                };
                let mut reloaded = SessionManager::open(&file, Some(dir)).unwrap();
                match self.session.leaf_id() {
                    Some(leaf) => reloaded.branch(leaf).unwrap(),
                    None => reloaded.reset_leaf(),
                }
                assert_eq!(
                    reloaded.render_tree(),
                    self.session.render_tree(),
                    "same tree after reload"
                );
                assert_eq!(
                    reloaded.build_session_context(),
                    self.session.build_session_context()
                );
                assert!(reloaded.load_warnings().is_empty());
                reloaded.use_seeded_ids(self.counter as u64);
                self.session = reloaded;
            }
        }
    }
}

fn text_of(message: &AgentMessage) -> Option<String> {
    match message {
        AgentMessage::User(m) => Some(m.content.text()),
        AgentMessage::Assistant(m) => Some(m.text()),
        AgentMessage::ToolResult(m) => Some(m.text()),
        _ => None,
    }
}

fn check_invariants(s: &SessionManager) {
    // Every path goes up to a root through real parent links.
    let path = s.path(None);
    if let Some(first) = path.first() {
        assert_eq!(
            s.head(&EntryId::from(first.id())).unwrap().parent,
            None,
            "the path starts at a root"
        );
    }
    for pair in path.windows(2) {
        assert_eq!(pair[1].parent_id(), Some(pair[0].id()));
    }
    assert_eq!(s.leaf_id().map(|l| l.as_str()), path.last().map(|e| e.id()));

    // The tree holds every entry exactly once.
    let tree = s.tree();
    let visited = tree.depth_first();
    let unique: HashSet<usize> = visited.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        (visited.len(), unique.len()),
        (s.entry_count(), s.entry_count())
    );

    // The context holds only what is on the path.
    let on_path: HashSet<String> = path
        .iter()
        .filter_map(|e| e.message())
        .filter_map(text_of)
        .collect();
    let context: SessionContext = s.build_session_context();
    for message in &context.messages {
        match message {
            AgentMessage::CompactionSummary(c) => assert!(
                path.iter()
                    .any(|e| matches!(e, SessionEntry::Compaction(k) if k.summary == c.summary))
            ),
            AgentMessage::BranchSummary(b) => assert!(
                path.iter()
                    .any(|e| matches!(e, SessionEntry::BranchSummary(k) if k.from_id == b.from_id))
            ),
            other => assert!(
                on_path.contains(&text_of(other).unwrap()),
                "{other:?} is not on the path"
            ),
        }
    }

    // Tool calls stay paired with their results.
    let mut pending: Vec<String> = Vec::new();
    for message in &context.messages {
        match message {
            AgentMessage::ToolResult(t) => {
                let at = pending.iter().position(|p| *p == t.tool_call_id);
                assert!(at.is_some(), "result {} without its call", t.tool_call_id);
                pending.remove(at.unwrap());
            }
            other => {
                assert!(
                    pending.is_empty(),
                    "calls {pending:?} left without results before {other:?}"
                );
                if let AgentMessage::Assistant(a) = other {
                    pending.extend(a.tool_calls().map(|c| c.id.clone()));
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_edits_keep_the_tree_and_context_sound(ops in prop::collection::vec(op(), 1..30)) {
        let dir = tempfile::tempdir().unwrap();
        let mut world = World { session: new_session(dir.path()), settled: Vec::new(), counter: 0 };
        for op in &ops {
            world.apply(op, dir.path());
            check_invariants(&world.session);
        }
        world.apply(&Op::Turn { tool_rounds: 1 }, dir.path());
        world.apply(&Op::Reload, dir.path());
        check_invariants(&world.session);
    }
}
