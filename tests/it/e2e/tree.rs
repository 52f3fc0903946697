//! `/tree` end to end: the built binary in a real terminal (tmux) against the loopback
//! model server. Three turns, then `/tree` back to an earlier user message, with and
//! without a branch summary; labels that survive a restart; the resulting file opening
//! in the reference pi with the same context. Skipped, with a printed reason, where tmux
//! (or, for the interop part, node) is missing.

use std::path::{Path, PathBuf};

use super::env::{Env, WAIT, converse, editor_ready, submit};
use crate::support::reference_pi;
use crate::support::tmux::{self, Tmux};
use pi::session::SessionManager;
use serde_json::{Value, json};

const SUMMARY: &str = "SUMMARY-OF-THE-ABANDONED-BRANCH";

fn env() -> Env {
    // Branch summary requests carry the serialized conversation; every other request
    // gets the next answer of the sequence.
    Env::new(json!({
        "rules": [{"match": "<conversation>", "reply": {"text": SUMMARY}}],
        "sequence": [
            {"text": "answer one"},
            {"text": "answer two"},
            {"text": "answer three"},
            {"text": "answer after the move"}
        ]
    }))
}

fn start(env: &Env, extra: &str) -> Tmux {
    env.start(extra, 110, 40)
}

fn session_file(env: &Env) -> PathBuf {
    let mut files = env.session_files();
    assert_eq!(files.len(), 1, "{files:?}");
    files.remove(0)
}

/// The text of every message of the `n`-th request to the model.
fn request_texts(env: &Env, n: usize) -> String {
    let requests = env.server.requests();
    requests[n].body["messages"].to_string()
}

macro_rules! require_tmux {
    () => {
        if !tmux::available() {
            eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
            return;
        }
    };
}

/// Three turns, then `/tree` with the cursor moved by searching `term` (which must match
/// exactly one row) and Enter on it.
fn three_turns_then_tree_to(env: &Env, term: &str) -> Tmux {
    let t = start(env, "");
    t.wait_until("the editor", WAIT, editor_ready);
    converse(
        &t,
        &[
            ("first question", "answer one"),
            ("second question", "answer two"),
            ("third question", "answer three"),
        ],
    );
    submit(&t, "/tree");
    t.wait_for("Session Tree", WAIT);
    t.type_text(term);
    t.wait_until("the search", WAIT, |s| s.contains("(1/1)"));
    t.keys(&["Enter"]);
    t.wait_for("Summarize branch?", WAIT);
    t
}

/// Sends a prompt after the move (clearing the editor, which holds the selected
/// question) and waits for the answer.
fn prompt_after_the_move(t: &Tmux) {
    t.wait_for("Navigated to selected point", WAIT);
    t.keys(&["C-c"]);
    submit(t, "a new direction");
    t.wait_for("answer after the move", WAIT);
}

fn our_messages(file: &Path) -> Value {
    let manager = SessionManager::open(file, None).unwrap();
    serde_json::to_value(manager.build_session_context().messages).unwrap()
}

#[test]
fn tree_back_to_an_earlier_question_with_a_summary() {
    require_tmux!();
    let env = env();
    let t = three_turns_then_tree_to(&env, "second");
    t.keys(&["Down", "Enter"]);
    prompt_after_the_move(&t);
    // The selected question was put back into the editor for editing.
    let requests = env.server.requests();
    assert_eq!(requests.len(), 5, "three turns, the summary, one more turn");
    let summary_request = request_texts(&env, 3);
    assert!(
        summary_request.contains("third question"),
        "{summary_request}"
    );
    // The next request is the path up to the target plus the summary.
    let next = request_texts(&env, 4);
    for expected in ["first question", "answer one", SUMMARY, "a new direction"] {
        assert!(next.contains(expected), "{expected} missing: {next}");
    }
    for gone in ["second question", "answer two", "third question"] {
        assert!(!next.contains(gone), "{gone} still sent: {next}");
    }
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    let file = session_file(&env);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("\"type\":\"branch_summary\""), "{text}");
    assert!(text.contains(SUMMARY), "{text}");
    let ours = our_messages(&file);
    match reference_pi::available() {
        Ok(()) => {
            let theirs = reference_pi::messages_of(&env.home(), &env.cwd(), &file);
            assert_eq!(theirs, ours);
        }
        Err(why) => eprintln!("interop part skipped: {why}"),
    }
}

#[test]
fn tree_back_to_an_earlier_question_without_a_summary() {
    require_tmux!();
    let env = env();
    let t = three_turns_then_tree_to(&env, "second");
    // "No summary" is selected when the question opens.
    t.keys(&["Enter"]);
    prompt_after_the_move(&t);
    let requests = env.server.requests();
    assert_eq!(requests.len(), 4, "no summary request");
    let next = request_texts(&env, 3);
    assert!(next.contains("first question") && next.contains("a new direction"));
    assert!(!next.contains("second question"), "{next}");
    assert!(!next.contains(SUMMARY), "{next}");
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    let text = std::fs::read_to_string(session_file(&env)).unwrap();
    assert!(!text.contains("\"type\":\"branch_summary\""), "{text}");
}

#[test]
fn escape_on_the_summary_question_returns_to_the_tree_on_the_same_entry() {
    require_tmux!();
    let env = env();
    let t = three_turns_then_tree_to(&env, "second");
    t.keys(&["Escape"]);
    let screen = t.wait_for("Session Tree", WAIT);
    assert!(
        screen
            .lines()
            .any(|l| l.contains('›') && l.contains("second question")),
        "{screen}"
    );
    t.keys(&["Escape"]);
    t.wait_until("the editor", WAIT, |s| !s.contains("Session Tree"));
    assert_eq!(env.server.requests().len(), 3);
}

#[test]
fn a_label_set_in_the_tree_survives_a_restart() {
    require_tmux!();
    let env = env();
    let t = start(&env, "");
    t.wait_until("the editor", WAIT, editor_ready);
    submit(&t, "first question");
    t.wait_for("answer one", WAIT);
    submit(&t, "/tree");
    t.wait_for("Session Tree", WAIT);
    t.type_text("first");
    t.wait_until("the search", WAIT, |s| s.contains("(1/1)"));
    // Shift+L asks for the label.
    t.keys(&["L"]);
    t.wait_for("Label (empty to remove):", WAIT);
    submit(&t, "checkpoint");
    t.wait_for("[checkpoint]", WAIT);
    // The first Escape clears the search, the second closes the tree (sent apart: two
    // Escapes in one write read as Alt+Escape).
    t.keys(&["Escape"]);
    t.wait_until("the search to clear", WAIT, |s| s.contains("(1/2)"));
    t.keys(&["Escape"]);
    t.wait_until("the tree to close", WAIT, |s| !s.contains("Session Tree"));
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    let text = std::fs::read_to_string(session_file(&env)).unwrap();
    assert!(
        text.contains("\"type\":\"label\"") && text.contains("\"label\":\"checkpoint\""),
        "{text}"
    );

    let t = start(&env, "--continue");
    t.wait_until("the editor", WAIT, |s| {
        editor_ready(s) && s.contains("answer one")
    });
    submit(&t, "/tree");
    t.wait_for("Session Tree", WAIT);
    // The labeled-only filter lists just the labeled message.
    t.keys(&["C-l"]);
    let screen = t.wait_for("[labeled]", WAIT);
    assert!(
        screen
            .lines()
            .any(|l| l.contains("[checkpoint]") && l.contains("user: first question")),
        "{screen}"
    );
    // Wait for the tree to close before Ctrl+D: Escape and Ctrl+D read together are
    // Alt+Ctrl+D, which neither closes the tree nor quits.
    t.keys(&["Escape"]);
    t.wait_until("the tree to close", WAIT, |s| !s.contains("Session Tree"));
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}

#[test]
fn fork_from_a_message_starts_a_new_file_with_the_earlier_path() {
    require_tmux!();
    let env = env();
    let t = start(&env, "");
    t.wait_until("the editor", WAIT, editor_ready);
    converse(
        &t,
        &[
            ("first question", "answer one"),
            ("second question", "answer two"),
        ],
    );
    submit(&t, "/fork");
    t.wait_for("Fork from Message", WAIT);
    // The newest message is selected; Enter forks before it.
    t.keys(&["Enter"]);
    t.wait_for("Forked to new session", WAIT);
    t.keys(&["C-c"]);
    submit(&t, "third question");
    t.wait_for("answer three", WAIT);
    let next = request_texts(&env, 2);
    assert!(next.contains("first question") && next.contains("third question"));
    assert!(!next.contains("second question"), "{next}");
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    let root = env.home().join(".pi/agent/sessions");
    let files: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        .collect();
    assert_eq!(files.len(), 2, "the fork is a new file");
}

/// The first user message: the path up to it is empty, so the next request holds just
/// the summary of the whole abandoned branch and the new prompt.
#[test]
fn tree_back_to_the_first_question_with_a_summary() {
    require_tmux!();
    let env = env();
    let t = three_turns_then_tree_to(&env, "first");
    // "Summarize" is the second choice.
    t.keys(&["Down", "Enter"]);
    let screen = t.wait_for("Navigated to selected point", WAIT);
    // The selected question was put back into the editor for editing.
    assert!(
        screen
            .lines()
            .rev()
            .take(8)
            .any(|l| l.contains("first question")),
        "{screen}"
    );
    prompt_after_the_move(&t);
    let requests = env.server.requests();
    assert_eq!(requests.len(), 5, "three turns, the summary, one more turn");
    let summary_request = request_texts(&env, 3);
    // As in pi, the branch left behind starts after the selected message (which goes back
    // into the editor rather than into the summary).
    for turn in ["answer one", "second question", "third question"] {
        assert!(summary_request.contains(turn), "{summary_request}");
    }
    // The next request is the (empty) path to the target, the summary and the prompt.
    let next = requests[4].body["messages"].as_array().unwrap().clone();
    let texts: Vec<String> = next
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| m["content"].to_string())
        .collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts[0].contains(SUMMARY), "{texts:?}");
    assert!(texts[1].contains("a new direction"), "{texts:?}");
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    let file = session_file(&env);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("\"type\":\"branch_summary\""), "{text}");
    if reference_pi::available().is_ok() {
        let theirs = reference_pi::messages_of(&env.home(), &env.cwd(), &file);
        assert_eq!(theirs, our_messages(&file));
    }
}

/// Escape while the branch summary is being written cancels it: nothing is written, the
/// leaf stays, and the tree reopens on the chosen entry.
#[test]
fn escape_while_summarizing_cancels_and_reopens_the_tree() {
    require_tmux!();
    let env = Env::new(json!({
        "rules": [{"match": "<conversation>", "reply": {"text": SUMMARY, "delay_ms": 10000}}],
        "sequence": [
            {"text": "answer one"},
            {"text": "answer two"},
            {"text": "answer three"},
            {"text": "answer after the move"}
        ]
    }));
    let t = three_turns_then_tree_to(&env, "second");
    t.keys(&["Down", "Enter"]);
    t.wait_for("Summarizing branch...", WAIT);
    t.keys(&["Escape"]);
    let screen = t.wait_for("Branch summarization cancelled", WAIT);
    let screen = if screen.contains("Session Tree") {
        screen
    } else {
        t.wait_for("Session Tree", WAIT)
    };
    assert!(
        screen
            .lines()
            .any(|l| l.contains('›') && l.contains("second question")),
        "{screen}"
    );
    t.keys(&["Escape"]);
    t.wait_until("the tree to close", WAIT, |s| !s.contains("Session Tree"));
    // The leaf did not move: the next prompt continues after the third answer.
    submit(&t, "one more");
    t.wait_for("answer after the move", WAIT);
    let next = env.server.requests().last().unwrap().body["messages"].to_string();
    assert!(next.contains("third question"), "{next}");
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    let text = std::fs::read_to_string(session_file(&env)).unwrap();
    assert!(!text.contains("\"type\":\"branch_summary\""), "{text}");
}
