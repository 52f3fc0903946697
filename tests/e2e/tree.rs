//! `/tree` end to end: the built binary in a real terminal (tmux) against the loopback
//! model server. Three turns, then `/tree` back to an earlier user message, with and
//! without a branch summary; labels that survive a restart; the resulting file opening
//! in the reference pi with the same context. Skipped, with a printed reason, where tmux
//! (or, for the interop part, node) is missing.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::mock_llm::{MockLlm, Script};
use crate::support::reference_pi;
use crate::support::tmux::{self, Tmux};
use pi::session::SessionManager;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);
const SUMMARY: &str = "SUMMARY-OF-THE-ABANDONED-BRANCH";

struct Env {
    dir: tempfile::TempDir,
    server: MockLlm,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        // Branch summary requests carry the serialized conversation; every other request
        // gets the next answer of the sequence.
        let script = json!({
            "rules": [{"match": "<conversation>", "reply": {"text": SUMMARY}}],
            "sequence": [
                {"text": "answer one"},
                {"text": "answer two"},
                {"text": "answer three"},
                {"text": "answer after the move"}
            ]
        });
        let server = MockLlm::start(Script::from_json(&script.to_string()).unwrap());
        let agent = dir.path().join("home/.pi/agent");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(dir.path().join("proj")).unwrap();
        let models = json!({"providers": {"mock": {
            "baseUrl": format!("{}/v1", server.url()), "api": "openai-completions", "apiKey": "mock",
            "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
            "models": [{"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000}]
        }}});
        std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
        std::fs::write(agent.join("settings.json"), r#"{"quietStartup": true}"#).unwrap();
        Env { dir, server }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn cwd(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    fn start(&self, extra: &str) -> Tmux {
        let home = self.home();
        let cmd = format!(
            "{} --provider mock --model mock-model {extra}",
            env!("CARGO_BIN_EXE_pi")
        );
        Tmux::start(
            &cmd,
            &self.cwd(),
            &[
                ("HOME", home.to_str().unwrap()),
                ("PI_CODING_AGENT_DIR", ""),
            ],
            110,
            40,
        )
    }

    fn session_file(&self) -> PathBuf {
        let root = self.home().join(".pi/agent/sessions");
        let mut files = Vec::new();
        for d in std::fs::read_dir(root).into_iter().flatten().flatten() {
            for f in std::fs::read_dir(d.path()).into_iter().flatten().flatten() {
                files.push(f.path());
            }
        }
        assert_eq!(files.len(), 1, "{files:?}");
        files.remove(0)
    }

    /// The text of every message of the `n`-th request to the model.
    fn request_texts(&self, n: usize) -> String {
        let requests = self.server.requests();
        requests[n].body["messages"].to_string()
    }
}

macro_rules! require_tmux {
    () => {
        if !tmux::available() {
            eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
            return;
        }
    };
}

fn editor_ready(screen: &str) -> bool {
    screen.contains("mock-model") && screen.contains("────")
}

/// Three turns, then `/tree` with the cursor moved by searching `term` (which must match
/// exactly one row) and Enter on it.
fn three_turns_then_tree_to(env: &Env, term: &str) -> Tmux {
    let t = env.start("");
    t.wait_until("the editor", WAIT, editor_ready);
    for (question, answer) in [
        ("first question", "answer one"),
        ("second question", "answer two"),
        ("third question", "answer three"),
    ] {
        t.type_text(question);
        t.keys(&["Enter"]);
        t.wait_for(answer, WAIT);
    }
    t.type_text("/tree");
    t.keys(&["Enter"]);
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
    t.type_text("a new direction");
    t.keys(&["Enter"]);
    t.wait_for("answer after the move", WAIT);
}

fn our_messages(file: &Path) -> Value {
    let manager = SessionManager::open(file, None).unwrap();
    serde_json::to_value(manager.build_session_context().messages).unwrap()
}

#[test]
fn tree_back_to_an_earlier_question_with_a_summary() {
    require_tmux!();
    let env = Env::new();
    let t = three_turns_then_tree_to(&env, "second");
    t.keys(&["Down", "Enter"]);
    prompt_after_the_move(&t);
    // The selected question was put back into the editor for editing.
    let requests = env.server.requests();
    assert_eq!(requests.len(), 5, "three turns, the summary, one more turn");
    let summary_request = env.request_texts(3);
    assert!(
        summary_request.contains("third question"),
        "{summary_request}"
    );
    // The next request is the path up to the target plus the summary.
    let next = env.request_texts(4);
    for expected in ["first question", "answer one", SUMMARY, "a new direction"] {
        assert!(next.contains(expected), "{expected} missing: {next}");
    }
    for gone in ["second question", "answer two", "third question"] {
        assert!(!next.contains(gone), "{gone} still sent: {next}");
    }
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    let file = env.session_file();
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
    let env = Env::new();
    let t = three_turns_then_tree_to(&env, "second");
    // "No summary" is selected when the question opens.
    t.keys(&["Enter"]);
    prompt_after_the_move(&t);
    let requests = env.server.requests();
    assert_eq!(requests.len(), 4, "no summary request");
    let next = env.request_texts(3);
    assert!(next.contains("first question") && next.contains("a new direction"));
    assert!(!next.contains("second question"), "{next}");
    assert!(!next.contains(SUMMARY), "{next}");
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    let text = std::fs::read_to_string(env.session_file()).unwrap();
    assert!(!text.contains("\"type\":\"branch_summary\""), "{text}");
}

#[test]
fn escape_on_the_summary_question_returns_to_the_tree_on_the_same_entry() {
    require_tmux!();
    let env = Env::new();
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
    let env = Env::new();
    let t = env.start("");
    t.wait_until("the editor", WAIT, editor_ready);
    t.type_text("first question");
    t.keys(&["Enter"]);
    t.wait_for("answer one", WAIT);
    t.type_text("/tree");
    t.keys(&["Enter"]);
    t.wait_for("Session Tree", WAIT);
    t.type_text("first");
    t.wait_until("the search", WAIT, |s| s.contains("(1/1)"));
    // Shift+L asks for the label.
    t.keys(&["L"]);
    t.wait_for("Label (empty to remove):", WAIT);
    t.type_text("checkpoint");
    t.keys(&["Enter"]);
    t.wait_for("[checkpoint]", WAIT);
    // The first Escape clears the search, the second closes the tree (sent apart: two
    // Escapes in one write read as Alt+Escape).
    t.keys(&["Escape"]);
    t.wait_until("the search to clear", WAIT, |s| s.contains("(1/2)"));
    t.keys(&["Escape"]);
    t.wait_until("the tree to close", WAIT, |s| !s.contains("Session Tree"));
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    let text = std::fs::read_to_string(env.session_file()).unwrap();
    assert!(
        text.contains("\"type\":\"label\"") && text.contains("\"label\":\"checkpoint\""),
        "{text}"
    );

    let t = env.start("--continue");
    t.wait_until("the editor", WAIT, |s| {
        editor_ready(s) && s.contains("answer one")
    });
    t.type_text("/tree");
    t.keys(&["Enter"]);
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
    t.keys(&["Escape"]);
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}

#[test]
fn fork_from_a_message_starts_a_new_file_with_the_earlier_path() {
    require_tmux!();
    let env = Env::new();
    let t = env.start("");
    t.wait_until("the editor", WAIT, editor_ready);
    for (question, answer) in [
        ("first question", "answer one"),
        ("second question", "answer two"),
    ] {
        t.type_text(question);
        t.keys(&["Enter"]);
        t.wait_for(answer, WAIT);
    }
    t.type_text("/fork");
    t.keys(&["Enter"]);
    t.wait_for("Fork from Message", WAIT);
    // The newest message is selected; Enter forks before it.
    t.keys(&["Enter"]);
    t.wait_for("Forked to new session", WAIT);
    t.keys(&["C-c"]);
    t.type_text("third question");
    t.keys(&["Enter"]);
    t.wait_for("answer three", WAIT);
    let next = env.request_texts(2);
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
    let env = Env::new();
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
    let summary_request = env.request_texts(3);
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
    let file = env.session_file();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("\"type\":\"branch_summary\""), "{text}");
    if reference_pi::available().is_ok() {
        let theirs = reference_pi::messages_of(&env.home(), &env.cwd(), &file);
        assert_eq!(theirs, our_messages(&file));
    }
}
