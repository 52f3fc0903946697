//! The interactive UI end to end: the built binary in a real terminal (tmux) against the
//! loopback model server. Skipped, with a printed reason, where tmux is not installed.

use std::time::Duration;

use super::env::{Env, WAIT, converse, editor_ready, submit};
use crate::support::tmux;
use serde_json::json;

macro_rules! require_tmux {
    () => {
        if !tmux::available() {
            eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
            return;
        }
    };
}

#[test]
fn a_prompt_streams_the_answer_and_a_tool_call_shows_its_diff() {
    require_tmux!();
    let env = Env::new(json!({"sequence": [
        {"text": "Reading it.", "tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
        {"text": "Fixing.", "tool_calls": [{"name": "edit", "arguments": {"path": "a.txt", "edits": [{"oldText": "hello wrld", "newText": "hello world"}]}}]},
        {"text": "All **done**: the greeting is fixed.", "chunk_size": 4, "delay_ms": 10}
    ]}));
    std::fs::write(env.cwd().join("a.txt"), "hello wrld\nsecond line\n").unwrap();
    let t = env.start("", 100, 40);
    t.wait_until("the editor", WAIT, editor_ready);
    submit(&t, "Please fix the typo in a.txt");
    let screen = t.wait_for("the greeting is fixed.", WAIT);
    assert!(screen.contains("-1 hello wrld"), "{screen}");
    assert!(screen.contains("+1 hello world"), "{screen}");
    assert!(screen.contains("Please fix the typo in a.txt"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(env.cwd().join("a.txt")).unwrap(),
        "hello world\nsecond line\n"
    );
    // The footer shows the tokens of the answers.
    assert!(screen.contains('↑'), "{screen}");
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    assert_eq!(env.session_files().len(), 1);
}

#[test]
fn escape_aborts_a_streaming_answer_and_keeps_what_arrived() {
    require_tmux!();
    let long: String = (1..200).map(|i| format!("word{i} ")).collect();
    let env = Env::new(json!({"sequence": [
        {"text": long, "chunk_size": 6, "delay_ms": 40},
        {"text": "second answer"}
    ]}));
    let t = env.start("", 100, 30);
    t.wait_until("the editor", WAIT, editor_ready);
    submit(&t, "tell me a long story");
    t.wait_for("word3", WAIT);
    t.keys(&["Escape"]);
    let screen = t.wait_for("Operation aborted", WAIT);
    assert!(
        !screen.contains("word199"),
        "the stream was not cut: {screen}"
    );
    // The UI keeps working: a new prompt gets an answer.
    submit(&t, "and now?");
    t.wait_for("second answer", WAIT);
    let file = std::fs::read_to_string(&env.session_files()[0]).unwrap();
    assert!(file.contains("\"stopReason\":\"aborted\""), "{file}");
    assert!(file.contains("word3"), "the partial answer was kept");
}

#[test]
fn resizing_while_streaming_keeps_one_copy_of_everything() {
    require_tmux!();
    let long: String = (1..120).map(|i| format!("token{i} ")).collect();
    let env = Env::new(json!({"sequence": [
        {"text": "first answer"},
        {"text": format!("{long}END-OF-ANSWER"), "chunk_size": 8, "delay_ms": 25}
    ]}));
    let t = env.start("", 100, 30);
    t.wait_until("the editor", WAIT, editor_ready);
    submit(&t, "first prompt");
    t.wait_for("first answer", WAIT);
    submit(&t, "second prompt");
    t.wait_for("token5", WAIT);
    t.resize(70, 24);
    std::thread::sleep(Duration::from_millis(300));
    t.resize(120, 35);
    t.wait_for("END-OF-ANSWER", WAIT);
    std::thread::sleep(Duration::from_millis(300));
    let all = t.history();
    let count = |needle: &str| all.matches(needle).count();
    assert_eq!(count("first prompt"), 1, "{all}");
    assert_eq!(count("first answer"), 1, "{all}");
    assert_eq!(count("second prompt"), 1, "{all}");
    assert_eq!(count("END-OF-ANSWER"), 1, "{all}");
    // One editor and one footer at the bottom.
    let screen = t.screen();
    assert_eq!(screen.matches("mock-model").count(), 1, "{screen}");
    let _ = env.server.requests();
}

#[test]
fn resume_lists_the_sessions_and_opens_the_chosen_one() {
    require_tmux!();
    let env = Env::new(json!({"sequence": [
        {"text": "alpha answer"}, {"text": "beta answer"}, {"text": "gamma answer"},
        {"text": "continued in beta"}
    ]}));
    for prompt in [
        "Session alpha prompt",
        "Session beta prompt",
        "Session gamma prompt",
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_pi"))
            .current_dir(env.cwd())
            .env("HOME", env.dir.path().join("home"))
            .env_remove("PI_CODING_AGENT_DIR")
            .args(["--provider", "mock", "--model", "mock-model", "-p", prompt])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success());
        // Distinct modification times order the list.
        std::thread::sleep(Duration::from_millis(20));
    }
    let t = env.start("--resume", 110, 30);
    let screen = t.wait_for("Session alpha prompt", WAIT);
    assert!(screen.contains("Session beta prompt"), "{screen}");
    assert!(screen.contains("Session gamma prompt"), "{screen}");
    // Newest first: gamma, beta, alpha. Pick beta.
    t.keys(&["Down"]);
    t.keys(&["Enter"]);
    let screen = t.wait_for("beta answer", WAIT);
    assert!(!screen.contains("gamma answer"), "{screen}");
    t.wait_until("the editor", WAIT, editor_ready);
    submit(&t, "and now?");
    t.wait_for("continued in beta", WAIT);
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    // The new turn went into beta's file; no new session file was created.
    assert_eq!(env.session_files().len(), 3);
    let beta = env
        .session_files()
        .into_iter()
        .find(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .contains("Session beta prompt")
        })
        .unwrap();
    assert!(
        std::fs::read_to_string(beta)
            .unwrap()
            .contains("continued in beta")
    );
}

#[test]
fn resume_cancelled_says_no_session_selected() {
    require_tmux!();
    let env = Env::new(json!({"sequence": []}));
    let t = env.start("--resume", 100, 20);
    t.wait_for("Resume Session", WAIT);
    t.keys(&["Escape"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    assert!(t.screen().contains("No session selected"), "{}", t.screen());
}

/// The example permission gate asks the TUI before a destructive `bash` call: "Allow"
/// runs it, "Block" (or Escape) keeps it from running and the model reads why.
#[test]
fn an_extension_dialog_in_the_tui_decides_whether_a_command_runs() {
    require_tmux!();
    if !crate::support::extensions::have("python3") {
        eprintln!("skipped: python3 is not installed (CI installs it via .ci/run)");
        return;
    }
    let env = Env::new(json!({"sequence": [
        {"text": "Cleaning.", "tool_calls": [{"name": "bash", "arguments": {"command": "rm -rf doomed"}}]},
        {"text": "First cleanup done."},
        {"text": "Again.", "tool_calls": [{"name": "bash", "arguments": {"command": "rm -rf kept"}}]},
        {"text": "Second cleanup done."}
    ]}));
    std::fs::create_dir_all(env.cwd().join("doomed")).unwrap();
    std::fs::create_dir_all(env.cwd().join("kept")).unwrap();
    let gate = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/extensions/permission-gate/extension.py");
    let t = env.start(&format!("-e {}", gate.display()), 100, 40);
    t.wait_until("the editor", WAIT, editor_ready);

    submit(&t, "clean up doomed");
    let screen = t.wait_for("Run it?", WAIT);
    assert!(screen.contains("rm -rf doomed"), "{screen}");
    assert!(env.cwd().join("doomed").exists(), "ran before the answer");
    // Options: Block, Allow.
    t.keys(&["Down", "Enter"]);
    t.wait_for("First cleanup done.", WAIT);
    assert!(!env.cwd().join("doomed").exists(), "allowed but not run");

    submit(&t, "clean up kept");
    t.wait_for("Run it?", WAIT);
    t.keys(&["Enter"]);
    t.wait_for("Second cleanup done.", WAIT);
    assert!(env.cwd().join("kept").exists(), "blocked but run");
    let last = env.server.requests().last().unwrap().body.to_string();
    assert!(last.contains("Blocked by the user"), "{last}");
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}

/// `/compact Focus on X` in the TUI: the summary request carries the focus, the file gets
/// a `compaction` entry, and the next prompt is sent with the summary instead of the
/// older turns.
#[test]
fn compact_with_a_focus_summarizes_and_the_next_request_uses_the_summary() {
    require_tmux!();
    let env = Env::new(json!({
        "rules": [{"match": "<conversation>", "reply": {"text": "## Goal\nCOMPACTED-SUMMARY"}}],
        "sequence": [
            {"text": "first answer"},
            {"text": "second answer"},
            {"text": "after compaction"}
        ]
    }));
    let t = env.start("", 100, 40);
    t.wait_until("the editor", WAIT, editor_ready);
    converse(
        &t,
        &[
            ("first question", "first answer"),
            ("second question", "second answer"),
        ],
    );
    submit(&t, "/compact Focus on the parser");
    t.wait_until("the compaction", WAIT, |_| env.server.requests().len() == 3);
    let summary_request = env.server.requests()[2].body.to_string();
    assert!(
        summary_request.contains("Focus on the parser"),
        "{summary_request}"
    );
    t.wait_until("the summary entry", WAIT, |_| {
        env.session_files()
            .first()
            .and_then(|f| std::fs::read_to_string(f).ok())
            .is_some_and(|text| text.contains("\"type\":\"compaction\""))
    });
    submit(&t, "third question");
    t.wait_for("after compaction", WAIT);
    let next = env.server.requests()[3].body["messages"].to_string();
    assert!(next.contains("COMPACTED-SUMMARY"), "{next}");
    assert!(next.contains("third question"), "{next}");
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}

/// pi's `ctx.shutdown()` in the TUI: an extension command asks to quit, and pi exits
/// after telling the extensions `session_shutdown`.
#[test]
fn an_extension_shutdown_request_quits_the_tui() {
    require_tmux!();
    let env = Env::new(json!({"sequence": [{"text": "first answer"}]}));
    let bye = crate::support::extensions::script(
        env.dir.path(),
        "bye.sh",
        crate::support::extensions::BYE,
    );
    let t = env.start(&format!("-e {}", bye.display()), 100, 30);
    t.wait_until("the editor", WAIT, editor_ready);
    converse(&t, &[("hello", "first answer")]);
    submit(&t, "/bye");
    t.wait_until("exit", WAIT, |_| t.exited());
    let log = std::fs::read_to_string(env.dir.path().join("shutdown.log")).unwrap();
    assert_eq!(log, "session_shutdown\n");
    assert_eq!(env.server.requests().len(), 1, "/bye reached the model");
}

/// `/export file.jsonl` writes the current path as a straight line; `/import` (after its
/// question) copies such a file into the session folder and resumes it, so the next
/// prompt is sent with the imported conversation.
#[test]
fn export_to_jsonl_then_import_it_into_a_new_session() {
    require_tmux!();
    let env = Env::new(json!({"sequence": [
        {"text": "first answer"},
        {"text": "second answer"},
        {"text": "answer in the new session"},
        {"text": "answer after the import"}
    ]}));
    let t = env.start("", 100, 30);
    t.wait_until("the editor", WAIT, editor_ready);
    converse(
        &t,
        &[
            ("first question", "first answer"),
            ("second question", "second answer"),
        ],
    );
    submit(&t, "/export saved/branch.jsonl");
    t.wait_for("Session exported to:", WAIT);
    let exported = std::fs::read_to_string(env.cwd().join("saved/branch.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = exported
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(lines[0]["version"], 3);
    // A straight line: every entry's parent is the entry before it.
    for pair in lines[1..].windows(2) {
        assert_eq!(pair[1]["parentId"], pair[0]["id"], "{exported}");
    }
    assert!(lines[1]["parentId"].is_null());

    submit(&t, "/new");
    t.wait_for("New session started", WAIT);
    converse(&t, &[("unrelated", "answer in the new session")]);
    submit(&t, "/import saved/branch.jsonl");
    t.wait_for("Replace current session with saved/branch.jsonl?", WAIT);
    t.keys(&["Enter"]);
    t.wait_for("Session imported from: saved/branch.jsonl", WAIT);
    converse(&t, &[("third question", "answer after the import")]);
    let last = env.server.requests().last().unwrap().body["messages"].to_string();
    assert!(last.contains("second question"), "{last}");
    assert!(!last.contains("unrelated"), "{last}");
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    assert!(
        env.session_files()
            .iter()
            .any(|f| f.file_name().unwrap() == "branch.jsonl"),
        "the import is in the session folder"
    );
}

#[test]
fn scoped_models_saves_the_enabled_models_and_ctrl_p_cycles_only_those() {
    require_tmux!();
    let env = Env::new(json!({"sequence": [{"text": "unused"}]}));
    let models = json!({"providers": {"mock": {
        "baseUrl": format!("{}/v1", env.server.url()), "api": "openai-completions",
        "apiKey": "mock",
        "models": [
            {"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000},
            {"id": "mock-beta", "contextWindow": 200000, "maxTokens": 4000},
            {"id": "mock-gamma", "contextWindow": 200000, "maxTokens": 4000}
        ]
    }}});
    let agent = env.agent_dir();
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    let t = env.start("", 140, 40);
    t.wait_until("the editor", WAIT, editor_ready);
    submit(&t, "/scoped-models");
    t.wait_for("Model Configuration", WAIT);
    t.wait_for("all enabled", WAIT);
    // The first toggle keeps only that model; the second adds one (skipping mock-beta).
    t.type_text("mock-model");
    t.keys(&["Enter"]);
    t.wait_for("mock-model [mock] ✓", WAIT);
    t.keys(&["C-u"]);
    t.type_text("gamma");
    t.keys(&["Enter"]);
    let screen = t.wait_for("mock-gamma [mock] ✓", WAIT);
    assert!(screen.contains("(unsaved)"), "{screen}");
    t.keys(&["C-s"]);
    let settings_file = agent.join("settings.json");
    t.wait_until("enabledModels in settings.json", WAIT, |_| {
        std::fs::read_to_string(&settings_file).is_ok_and(|s| s.contains("enabledModels"))
    });
    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings_file).unwrap()).unwrap();
    // The first start records the version, as pi does (`lastChangelogVersion`).
    assert_eq!(
        settings,
        json!({"quietStartup": true, "lastChangelogVersion": env!("CARGO_PKG_VERSION"),
               "enabledModels": ["mock/mock-model", "mock/mock-gamma"]})
    );
    t.keys(&["Escape"]);
    t.wait_until("the picker closed", WAIT, |s| {
        !s.contains("Model Configuration") && editor_ready(s)
    });
    // Ctrl+P now cycles mock-model → mock-gamma → mock-model, never mock-beta.
    t.keys(&["C-p"]);
    t.wait_for("Switched to mock-gamma", WAIT);
    t.keys(&["C-p"]);
    t.wait_for("Switched to mock-model", WAIT);
    assert!(
        !t.history().contains("Switched to mock-beta"),
        "{}",
        t.history()
    );
    // Reopened, the picker shows the session's scope in cycling order.
    submit(&t, "/scoped-models");
    let screen = t.wait_for("2/3 enabled", WAIT);
    let rows: Vec<&str> = screen.lines().filter(|l| l.contains(" [mock]")).collect();
    assert_eq!(
        rows,
        [
            "→ mock-model [mock] ✓",
            "  mock-gamma [mock] ✓",
            "  mock-beta [mock] ✗"
        ],
        "{screen}"
    );
    // Enabling every model and saving removes the setting, as pi does.
    t.keys(&["C-a"]);
    t.wait_for("all enabled (unsaved)", WAIT);
    t.keys(&["C-s"]);
    t.wait_until("enabledModels removed from settings.json", WAIT, |_| {
        std::fs::read_to_string(&settings_file).is_ok_and(|s| !s.contains("enabledModels"))
    });
    t.keys(&["Escape"]);
    t.wait_until("the picker closed", WAIT, |s| {
        !s.contains("Model Configuration")
    });
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}

/// `/share` with a stand-in `gh` on the PATH: the HTML export is uploaded as a secret
/// gist and the viewer link is shown.
#[test]
fn share_uploads_a_secret_gist_and_shows_the_viewer_link() {
    require_tmux!();
    let env = Env::new(json!({"sequence": [{"text": "the answer to share"}]}));
    let bin = env.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let uploads = env.dir.path().join("uploads");
    crate::support::extensions::script(
        &bin,
        "gh",
        &format!(
            "#!/bin/sh\ncase \"$1 $2\" in\n'auth status') exit 0 ;;\n'gist create')\n  [ \"$3\" = --public=false ] || exit 9\n  mkdir -p {u} && cp \"$4\" {u}/\n  echo https://gist.github.com/someone/abc123def ;;\n*) exit 2 ;;\nesac\n",
            u = uploads.display()
        ),
    );
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let t = env.start_with_env(
        "",
        100,
        30,
        &[
            ("PATH", &path),
            ("PI_SHARE_VIEWER_URL", "https://viewer.test/s/"),
        ],
    );
    t.wait_until("the editor", WAIT, editor_ready);
    converse(&t, &[("share this", "the answer to share")]);
    submit(&t, "/share");
    let screen = t.wait_for("Share URL:", WAIT);
    assert!(
        screen.contains("https://viewer.test/s/#abc123def"),
        "{screen}"
    );
    assert!(
        screen.contains("Gist: https://gist.github.com/someone/abc123def"),
        "{screen}"
    );
    let html = std::fs::read_to_string(uploads.join("session.html")).unwrap();
    assert!(html.contains("the answer to share"));
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}

/// An extension that appends `<its file name> <event type> <reason>` to `.pi/events.log`
/// for every `session_start` and `session_shutdown` it gets.
const EVENT_LOGGER: &str = r#"#!/bin/sh
dir=$(dirname "$0")
name=$(basename "$0")
IFS= read -r hello || exit 0
printf '{"type":"register","name":"%s","events":["session_start","session_shutdown"]}\n' "$name"
while IFS= read -r line; do
    id=${line#*\"id\":}
    id=${id%%,*}
    case "$line" in
    *'"type":"session_start"'* | *'"type":"session_shutdown"'*)
        what=$(printf '%s' "$line" | sed 's/.*"event":{"type":"\([a-z_]*\)","reason":"\([a-z]*\)".*/\1 \2/')
        echo "$name $what" >> "$dir/../events.log"
        printf '{"type":"response","id":%s}\n' "$id"
        ;;
    '{"type":"event","id":'*)
        printf '{"type":"response","id":%s}\n' "$id"
        ;;
    esac
done
"#;

fn install_logger(env: &Env, name: &str) {
    let path = env.write(&format!(".pi/extensions/{name}"), EVENT_LOGGER);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn event_log(env: &Env) -> String {
    std::fs::read_to_string(env.cwd().join(".pi/events.log")).unwrap_or_default()
}

/// `/reload` as in pi: a prompt template and an extension added to the project while pi
/// runs are picked up; the extension that was running gets `session_shutdown` with reason
/// `reload` and is started again with the new one (`session_start`, reason `reload`); the
/// conversation stays; and `/hello` now expands to the template in the request.
#[test]
fn reload_picks_up_new_prompt_templates_and_restarts_the_extensions() {
    require_tmux!();
    let env = Env::new(json!({"sequence": [
        {"text": "first answer"},
        {"text": "greeted them"}
    ]}));
    install_logger(&env, "old.sh");
    let t = env.start("", 100, 40);
    t.wait_until("the editor", WAIT, editor_ready);
    t.wait_until("session_start of old.sh", WAIT, |_| {
        event_log(&env) == "old.sh session_start startup\n"
    });
    converse(&t, &[("first question", "first answer")]);

    env.write(
        ".pi/prompts/hello.md",
        "---\ndescription: Greet someone\n---\nPlease greet $1 warmly.\n",
    );
    install_logger(&env, "new.sh");
    submit(&t, "/reload");
    let screen = t.wait_for(
        "Reloaded keybindings, extensions, skills, prompts, themes",
        WAIT,
    );
    assert!(
        screen.contains("first answer"),
        "the chat is gone:\n{screen}"
    );
    let log = event_log(&env);
    let mut lines: Vec<&str> = log.lines().collect();
    // The two extensions start side by side: their order is not fixed.
    lines[2..].sort();
    assert_eq!(
        lines,
        [
            "old.sh session_start startup",
            "old.sh session_shutdown reload",
            "new.sh session_start reload",
            "old.sh session_start reload",
        ],
        "{log}"
    );

    submit(&t, "/hello Alice");
    t.wait_for("greeted them", WAIT);
    let request = env.server.requests().last().unwrap().body["messages"].to_string();
    assert!(request.contains("Please greet Alice warmly."), "{request}");
    assert!(request.contains("first question"), "{request}");
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    let log = event_log(&env);
    let mut quit: Vec<&str> = log.lines().skip(4).collect();
    quit.sort();
    assert_eq!(
        quit,
        [
            "new.sh session_shutdown quit",
            "old.sh session_shutdown quit"
        ],
        "{log}"
    );
}

/// pi refuses `/reload` while an answer streams, with its warning, and reloads nothing.
#[test]
fn reload_while_streaming_is_refused_with_pis_warning() {
    require_tmux!();
    let env = Env::new(json!({"sequence": [
        {"text": "one two three four five six seven eight nine ten eleven twelve END",
         "chunk_size": 4, "delay_ms": 150}
    ]}));
    install_logger(&env, "old.sh");
    let t = env.start("", 100, 40);
    t.wait_until("the editor", WAIT, editor_ready);
    submit(&t, "count slowly");
    t.wait_for("one two", WAIT);
    submit(&t, "/reload");
    t.wait_for(
        "Warning: Wait for the current response to finish before reloading.",
        WAIT,
    );
    t.wait_for("twelve END", WAIT);
    assert_eq!(event_log(&env), "old.sh session_start startup\n");
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}

/// The `/hotkeys` tables (Navigation, Editing, Other) of a session, from their title to
/// the row after the last one, with a user's override of `app.tools.expand`.
fn hotkeys_block(t: &tmux::Tmux) -> Vec<String> {
    t.wait_until("editor", WAIT, editor_ready);
    submit(t, "/hotkeys");
    let screen = t.wait_for("Run bash command (excluded from context)", WAIT);
    let rows = super::beside_pi::rows(&screen);
    let top = rows
        .iter()
        .position(|r| r.contains("Keyboard Shortcuts"))
        .unwrap_or_else(|| panic!("no title:\n{screen}"));
    let bottom = rows
        .iter()
        .position(|r| r.contains("excluded from context"))
        .expect("the last row");
    rows[top..=bottom + 1].to_vec()
}

fn hotkeys_env() -> Env {
    let env = Env::new(json!({"sequence": []}));
    super::beside_pi::write_theme(&env);
    // A user's override shows in the table, as in pi.
    std::fs::write(
        env.agent_dir().join("keybindings.json"),
        r#"{"app.tools.expand": ["ctrl+e", "f2"]}"#,
    )
    .unwrap();
    env
}

/// `/hotkeys` prints pi's three tables with the user's own keys and pi 1.6's defaults.
#[test]
fn hotkeys_tables_show_the_users_keys() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
        return;
    }
    let env = hotkeys_env();
    let ours = hotkeys_block(&env.start("", 100, 100));
    assert!(ours.iter().any(|r| r.contains("Ctrl+E/F2")), "{ours:#?}");
    assert!(
        ours.iter().any(|r| r.contains("Shift+Enter/Ctrl+J")),
        "{ours:#?}"
    );
}

/// The same tables row for row as reference pi 1.6 draws them at the same size.
#[test]
#[ignore = "pi 1.6's /hotkeys table differs (column widths, wording, its Alt+Up row): \
            pi 1.6's interactive views are issue 28"]
fn hotkeys_tables_are_pi_1_6s() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
        return;
    }
    let env = hotkeys_env();
    let ours = hotkeys_block(&env.start("", 100, 100));
    let Some(theirs) = super::beside_pi::start_reference_version(
        &env,
        crate::support::reference_pi::VERSION,
        "",
        &[],
        100,
        100,
    ) else {
        return;
    };
    assert_eq!(ours, hotkeys_block(&theirs));
}
