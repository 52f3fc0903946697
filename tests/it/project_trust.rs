//! Project trust, as pi 1.6 has it: a folder's `.pi/settings.json`, `.pi/extensions`,
//! `.pi/prompts`, `.pi/APPEND_SYSTEM.md` and `.agents/skills` are read (and its
//! extensions run) only once the folder is trusted — by `--approve`, by a user
//! extension's `project_trust` handler, by a saved decision in `~/.pi/agent/trust.json`,
//! by the global `defaultProjectTrust`, or by the user answering the terminal UI's
//! question. The built `pi` against the loopback model server; what reached the model is
//! read from the request bodies it received.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use crate::support::pi_project::{Project, succeeded, system_prompt, text_of};
use crate::support::rpc_client::RpcClient;
use crate::support::tmux::{self, Tmux};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

fn script() -> Value {
    json!({"default": {"text": "ok"}})
}

fn skill(name: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill.\n---\nDo the {name} thing.\n")
}

/// A project with one resource of each protected kind, each leaving its own trace: the
/// extension writes `<tmp>/extension-ran` when it loads (and would trust the project if it
/// were asked, which it must not be); the settings add a skill folder; a prompt template,
/// `APPEND_SYSTEM.md` and `.agents/skills` change what the model is sent.
fn project_with_resources() -> Project {
    let project = Project::untrusted(script());
    let marker = project.dir.path().join("extension-ran");
    project.write(
        ".pi/extensions/mark.ts",
        &format!(
            "import {{ writeFileSync }} from \"node:fs\";\n\
             export default function (pi) {{\n\
               writeFileSync({marker:?}, \"loaded\");\n\
               pi.on(\"project_trust\", async () => ({{ trusted: \"yes\", remember: true }}));\n\
             }}\n",
            marker = marker.display().to_string()
        ),
    );
    project.write(".pi/settings.json", r#"{"skills": ["../settings-skills"]}"#);
    project.write(
        "settings-skills/settings-skill/SKILL.md",
        &skill("settings-skill"),
    );
    project.write(".pi/prompts/greet.md", "EXPANDED-TEMPLATE\n");
    project.write(".pi/APPEND_SYSTEM.md", "APPEND-MARKER\n");
    project.write(
        ".agents/skills/agents-skill/SKILL.md",
        &skill("agents-skill"),
    );
    project.write("AGENTS.md", "CONTEXT-FILE-MARKER\n");
    project
}

/// Which project resources took effect in the last request (and whether the project's
/// extension ran). Context files load either way.
fn loaded(project: &Project) -> Vec<&'static str> {
    let requests = project.requests();
    let body = requests.last().expect("the model was asked");
    let system = system_prompt(body);
    assert!(system.contains("CONTEXT-FILE-MARKER"), "{system}");
    let user = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| text_of(&m["content"]))
        .unwrap_or_default();
    let mut found = Vec::new();
    if project.dir.path().join("extension-ran").exists() {
        found.push("extension");
    }
    if system.contains("settings-skill") {
        found.push("settings");
    }
    if user.contains("EXPANDED-TEMPLATE") {
        found.push("prompt template");
    }
    if system.contains("APPEND-MARKER") {
        found.push("APPEND_SYSTEM.md");
    }
    if system.contains("agents-skill") {
        found.push(".agents/skills");
    }
    found
}

const ALL: [&str; 5] = [
    "extension",
    "settings",
    "prompt template",
    "APPEND_SYSTEM.md",
    ".agents/skills",
];

fn trust_file(project: &Project) -> PathBuf {
    project.agent_dir().join("trust.json")
}

fn save_trust(project: &Project, entries: &[(&Path, Value)]) {
    let map: serde_json::Map<String, Value> = entries
        .iter()
        .map(|(p, v)| (canonical(p).display().to_string(), v.clone()))
        .collect();
    std::fs::write(trust_file(project), Value::Object(map).to_string()).unwrap();
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap()
}

fn print(project: &Project, extra: &[&str]) -> Output {
    project
        .pi()
        .args(extra)
        .args(["-p", "/greet"])
        .output()
        .unwrap()
}

/// `pi <args>` in the project as a user types it (no model flags: package commands).
fn bare_pi(project: &Project) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_pi"));
    cmd.current_dir(project.cwd())
        .env("HOME", project.dir.path().join("home"))
        .env_remove("PI_CODING_AGENT_DIR")
        .stdin(std::process::Stdio::null());
    cmd
}

/// The terminal UI in `cwd` with the project's home, in a pane of reference pi's size
/// for the side-by-side comparison (100×30).
fn tui_in(project: &Project, cwd: &Path) -> Tmux {
    let home = project.dir.path().join("home");
    Tmux::start(
        &format!(
            "{} --offline --provider mock --model mock-model",
            env!("CARGO_BIN_EXE_pi")
        ),
        cwd,
        &[
            ("HOME", home.to_str().unwrap()),
            ("PI_CODING_AGENT_DIR", ""),
        ],
        100,
        30,
    )
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn untrusted_print_json_and_rpc_runs_leave_every_project_resource_out() {
    require!("node");
    for mode in ["print", "json", "rpc"] {
        let project = project_with_resources();
        match mode {
            "print" => {
                succeeded(&print(&project, &[]));
            }
            "json" => {
                succeeded(
                    &project
                        .pi()
                        .args(["--mode", "json", "/greet"])
                        .output()
                        .unwrap(),
                );
            }
            _ => {
                let mut cmd = project.pi();
                cmd.args(["--mode", "rpc"]);
                let mut client = RpcClient::spawn(cmd);
                let events = client.prompt("/greet");
                assert!(events.iter().any(|e| e["type"] == "agent_end"));
                let (status, _) = client.close();
                assert!(status.success());
            }
        }
        assert_eq!(loaded(&project), Vec::<&str>::new(), "{mode}");
        // Not trusted by the project's own extension, and nothing was saved.
        assert!(!trust_file(&project).exists(), "{mode}");
    }
}

#[test]
fn approve_loads_the_project_and_no_approve_beats_a_saved_trust() {
    require!("node");
    let project = project_with_resources();
    succeeded(&print(&project, &["--approve"]));
    assert_eq!(loaded(&project), ALL);

    let project = project_with_resources();
    save_trust(&project, &[(&project.cwd(), json!(true))]);
    succeeded(&print(&project, &["-na"]));
    assert_eq!(loaded(&project), Vec::<&str>::new());
    succeeded(&print(&project, &["-na", "-a"]));
    assert_eq!(loaded(&project), ALL, "the last of the two flags wins");
}

#[test]
fn a_project_extension_does_not_run_before_pi_exits_on_an_unknown_flag() {
    require!("node");
    let project = project_with_resources();
    for mode in [
        &["-p", "hi"][..],
        &["--mode", "json", "hi"],
        &["--mode", "rpc"],
    ] {
        let out = project.pi().arg("--bogus").args(mode).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{mode:?}");
        assert!(
            stderr(&out).contains("Unknown option: --bogus"),
            "{mode:?}: {}",
            stderr(&out)
        );
        assert!(
            !project.dir.path().join("extension-ran").exists(),
            "{mode:?}"
        );
    }
    assert!(project.requests().is_empty());
    if !tmux::available() {
        eprintln!("skipped the terminal UI: tmux is not installed");
        return;
    }
    // The terminal UI asks first (as pi: flags are checked once extensions loaded);
    // not trusted, the project's extension never runs before pi exits on the flag.
    let home = project.dir.path().join("home");
    let tui = Tmux::start(
        &format!(
            "sh -c '{} --offline --provider mock --model mock-model --bogus; echo EXITED-$?; sleep 30'",
            env!("CARGO_BIN_EXE_pi")
        ),
        &project.cwd(),
        &[
            ("HOME", home.to_str().unwrap()),
            ("PI_CODING_AGENT_DIR", ""),
        ],
        100,
        30,
    );
    wait_for_question(&tui);
    assert!(!project.dir.path().join("extension-ran").exists());
    choose(&tui, 4);
    let screen = tui.wait_for("EXITED-1", WAIT);
    assert!(screen.contains("Unknown option: --bogus"), "{screen}");
    assert!(!project.dir.path().join("extension-ran").exists());
}

#[test]
fn the_nearest_saved_decision_applies() {
    require!("node");
    let project = project_with_resources();
    let parent = project.cwd().parent().unwrap().to_path_buf();
    // A `null` entry is no decision: the parent's applies.
    save_trust(
        &project,
        &[(&parent, json!(true)), (&project.cwd(), Value::Null)],
    );
    succeeded(&print(&project, &[]));
    assert_eq!(loaded(&project), ALL);

    let project = project_with_resources();
    let parent = project.cwd().parent().unwrap().to_path_buf();
    save_trust(
        &project,
        &[(&parent, json!(true)), (&project.cwd(), json!(false))],
    );
    succeeded(&print(&project, &[]));
    assert_eq!(loaded(&project), Vec::<&str>::new());
}

#[test]
fn default_project_trust_comes_from_the_agent_settings_only() {
    require!("node");
    let project = project_with_resources();
    std::fs::write(
        project.agent_dir().join("settings.json"),
        r#"{"defaultProjectTrust": "always"}"#,
    )
    .unwrap();
    succeeded(&print(&project, &[]));
    assert_eq!(loaded(&project), ALL);
    assert!(
        !trust_file(&project).exists(),
        "always is not a saved decision"
    );

    // A project cannot trust itself.
    let project = project_with_resources();
    project.write(
        ".pi/settings.json",
        r#"{"skills": ["../settings-skills"], "defaultProjectTrust": "always"}"#,
    );
    succeeded(&print(&project, &[]));
    assert_eq!(loaded(&project), Vec::<&str>::new());

    // A saved decision comes before the default.
    let project = project_with_resources();
    std::fs::write(
        project.agent_dir().join("settings.json"),
        r#"{"defaultProjectTrust": "never"}"#,
    )
    .unwrap();
    save_trust(&project, &[(&project.cwd(), json!(true))]);
    succeeded(&print(&project, &[]));
    assert_eq!(loaded(&project), ALL);
}

/// A user extension with two `project_trust` handlers: the first records what it was
/// given and passes, the second says `answer` (remembered) and notifies.
fn user_trust_extension(project: &Project, answer: &str) -> PathBuf {
    let record = project.dir.path().join("trust-event.json");
    let source = format!(
        "import {{ writeFileSync }} from \"node:fs\";\n\
         export default function (pi) {{\n\
           pi.on(\"project_trust\", async (event, ctx) => {{\n\
             writeFileSync({record:?}, JSON.stringify({{ event, cwd: ctx.cwd, mode: ctx.mode, hasUI: ctx.hasUI }}));\n\
             return {{ trusted: \"undecided\" }};\n\
           }});\n\
           pi.on(\"project_trust\", async (_event, ctx) => {{\n\
             ctx.ui.notify(\"decided by the user extension\", \"info\");\n\
             return {{ trusted: {answer:?}, remember: true }};\n\
           }});\n\
         }}\n",
        record = record.display().to_string(),
    );
    let path = project.agent_dir().join("extensions/decide.ts");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, source).unwrap();
    record
}

#[test]
fn a_user_extension_decides_before_the_saved_decision_and_remembers_when_asked() {
    require!("node");
    let project = project_with_resources();
    let record = user_trust_extension(&project, "yes");
    save_trust(&project, &[(&project.cwd(), json!(false))]);
    let out = print(&project, &[]);
    succeeded(&out);
    assert_eq!(loaded(&project), ALL);
    assert!(
        stderr(&out).contains("decided by the user extension"),
        "{}",
        stderr(&out)
    );
    let cwd = project.cwd().display().to_string();
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(
        seen,
        json!({"event": {"type": "project_trust", "cwd": cwd}, "cwd": cwd, "mode": "print", "hasUI": false})
    );
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(trust_file(&project)).unwrap()).unwrap();
    assert_eq!(
        saved,
        json!({canonical(&project.cwd()).display().to_string(): true})
    );

    // "no" wins over a saved "trusted" the same way; RPC mode tells the handler so.
    let project = project_with_resources();
    let record = user_trust_extension(&project, "no");
    save_trust(&project, &[(&project.cwd(), json!(true))]);
    let mut cmd = project.pi();
    cmd.args(["--mode", "rpc"]);
    let mut client = RpcClient::spawn(cmd);
    client.prompt("/greet");
    client.close();
    assert_eq!(loaded(&project), Vec::<&str>::new());
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(
        (&seen["mode"], &seen["hasUI"]),
        (&json!("rpc"), &json!(false))
    );
}

#[test]
fn a_failing_trust_handler_is_reported_and_the_next_step_decides() {
    require!("node");
    let project = project_with_resources();
    let path = project.agent_dir().join("extensions/broken.ts");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        &path,
        "export default function (pi) {\n  pi.on(\"project_trust\", async () => { throw new Error(\"no idea\"); });\n}\n",
    )
    .unwrap();
    save_trust(&project, &[(&project.cwd(), json!(true))]);
    let out = print(&project, &[]);
    succeeded(&out);
    assert_eq!(loaded(&project), ALL);
    assert!(
        stderr(&out).contains(&format!(
            "Warning: Extension \"{}\" project_trust error: no idea",
            path.display()
        )),
        "{}",
        stderr(&out)
    );
}

/// A user extension writing `ctx.isProjectTrusted()` at `session_start`.
fn trust_probe(project: &Project) -> PathBuf {
    let out = project.dir.path().join("is-trusted");
    let path = project.agent_dir().join("extensions/probe.ts");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        &path,
        format!(
            "import {{ writeFileSync }} from \"node:fs\";\n\
             export default function (pi) {{\n\
               pi.on(\"session_start\", async (_e, ctx) => {{ writeFileSync({out:?}, String(ctx.isProjectTrusted())); }});\n\
             }}\n",
            out = out.display().to_string()
        ),
    )
    .unwrap();
    out
}

#[test]
fn is_project_trusted_follows_the_decision_and_a_saved_no_beats_auto_trust() {
    require!("node");
    // Only a context file: nothing needs a decision, the folder is trusted.
    let project = Project::untrusted(script());
    project.write("AGENTS.md", "CONTEXT-FILE-MARKER\n");
    let probe = trust_probe(&project);
    succeeded(&project.pi().args(["-p", "hi"]).output().unwrap());
    assert_eq!(std::fs::read_to_string(&probe).unwrap(), "true");
    save_trust(&project, &[(&project.cwd(), json!(false))]);
    succeeded(&project.pi().args(["-p", "hi"]).output().unwrap());
    assert_eq!(std::fs::read_to_string(&probe).unwrap(), "false");
    succeeded(&project.pi().args(["-a", "-p", "hi"]).output().unwrap());
    assert_eq!(std::fs::read_to_string(&probe).unwrap(), "true");

    let project = project_with_resources();
    let probe = trust_probe(&project);
    succeeded(&print(&project, &[]));
    assert_eq!(std::fs::read_to_string(&probe).unwrap(), "false");
}

#[test]
fn a_malformed_trust_json_is_named_once_and_pi_goes_on_untrusted() {
    require!("node");
    for (text, expected) in [
        ("{\"/x\": tru", "is not valid JSON"),
        ("[true]", "is not a JSON object"),
        (
            "{\"/x\": \"yes\"}",
            "the value for \"/x\" must be true, false or null",
        ),
    ] {
        let project = project_with_resources();
        std::fs::write(trust_file(&project), text).unwrap();
        let out = print(&project, &[]);
        succeeded(&out);
        let err = stderr(&out);
        let mentions: Vec<&str> = err.lines().filter(|l| l.contains("trust.json")).collect();
        assert_eq!(mentions.len(), 1, "{err}");
        assert!(mentions[0].starts_with("Warning: trust store "), "{err}");
        assert!(mentions[0].contains(&trust_file(&project).display().to_string()));
        assert!(mentions[0].contains(expected), "{err}");
        assert!(
            mentions[0].contains("expected an object mapping folder paths to true, false or null")
                || expected.contains("must be"),
            "{err}"
        );
        assert_eq!(loaded(&project), Vec::<&str>::new());
        assert_eq!(std::fs::read_to_string(trust_file(&project)).unwrap(), text);
    }
}

#[test]
fn the_project_session_dir_is_read_before_trust() {
    let project = Project::untrusted(script());
    let sessions = project.dir.path().join("project-sessions");
    project.write(
        ".pi/settings.json",
        &json!({"sessionDir": sessions}).to_string(),
    );
    succeeded(&project.pi().args(["-p", "hi"]).output().unwrap());
    let files: Vec<_> = std::fs::read_dir(&sessions).unwrap().flatten().collect();
    assert_eq!(files.len(), 1, "{files:?}");
}

#[test]
fn package_commands_use_only_saved_or_explicit_trust() {
    let project = Project::untrusted(script());
    project.write("pkg/package.json", r#"{"name": "pkg", "pi": {}}"#);
    project.write(".pi/settings.json", r#"{"packages": ["../pkg"]}"#);
    let list = |extra: &[&str]| {
        let out = bare_pi(&project).arg("list").args(extra).output().unwrap();
        succeeded(&out)
    };
    assert!(!list(&[]).contains("Project packages:"));
    assert!(list(&["--approve"]).contains("Project packages:"));
    let out = bare_pi(&project)
        .args(["install", "./pkg", "-l"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out)
            .contains("Project is not trusted. Use --approve to modify local package config."),
        "{}",
        stderr(&out)
    );
    save_trust(&project, &[(&project.cwd(), json!(true))]);
    assert!(list(&[]).contains("Project packages:"));
    assert!(!list(&["-na"]).contains("Project packages:"));
}

// ----- the terminal UI -----

/// Waits for pi's trust question.
fn wait_for_question(tui: &Tmux) -> String {
    tui.wait_for("Do not trust (this session only)", WAIT)
}

fn choose(tui: &Tmux, downs: usize) {
    for _ in 0..downs {
        tui.keys(&["Down"]);
    }
    tui.keys(&["Enter"]);
}

#[test]
fn the_terminal_ui_asks_first_and_each_answer_does_what_pi_does() {
    require!("node");
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let project = project_with_resources();
    let marker = project.dir.path().join("extension-ran");
    let tui = tui_in(&project, &project.cwd());
    let screen = wait_for_question(&tui);
    let cwd = project.cwd().display().to_string();
    let parent = canonical(&project.cwd())
        .parent()
        .unwrap()
        .display()
        .to_string();
    let question: Vec<&str> = screen
        .lines()
        .skip_while(|l| !l.contains("Trust project folder?"))
        .take(14)
        .map(str::trim_end)
        .collect();
    assert_eq!(
        question,
        [
            " Trust project folder?".to_string(),
            format!(" {cwd}"),
            String::new(),
            // Reference pi 1.6.0 in the same 100-column pane, `--tui-mode regular`.
            " This allows pi to load .pi settings and resources, install missing project packages, and execute".into(),
            " project extensions.".into(),
            String::new(),
            " → Trust".into(),
            format!("   Trust parent folder ({parent})"),
            "   Trust (this session only)".into(),
            "   Do not trust".into(),
            "   Do not trust (this session only)".into(),
            String::new(),
            " ↑↓ navigate  enter select  escape/ctrl+c cancel".into(),
            String::new(),
        ]
    );
    assert!(
        !marker.exists(),
        "nothing of the project runs while pi asks"
    );
    // Trust (this session only): everything loads, nothing is saved.
    choose(&tui, 2);
    tui.wait_until("the project extension ran", WAIT, |_| marker.exists());
    tui.type_text("/greet");
    tui.keys(&["Enter"]);
    tui.wait_until("the model was asked", WAIT, |_| {
        !project.requests().is_empty()
    });
    assert_eq!(loaded(&project), ALL);
    assert!(!trust_file(&project).exists());
    drop(tui);

    // Do not trust: saved, the project's resources stay out, and pi says so.
    std::fs::remove_file(&marker).unwrap();
    let tui = tui_in(&project, &project.cwd());
    wait_for_question(&tui);
    choose(&tui, 3);
    tui.wait_for("This project is not trusted.", WAIT);
    assert!(!marker.exists());
    let saved = std::fs::read_to_string(trust_file(&project)).unwrap();
    let key = canonical(&project.cwd()).display().to_string();
    assert_eq!(saved, format!("{{\n  {}: false\n}}\n", json!(key)));

    // /trust shows the saved decision and saves a new one for the next start.
    tui.type_text("/trust");
    tui.keys(&["Enter"]);
    let screen = tui.wait_for("Current session: untrusted", WAIT);
    assert!(
        screen.contains(&format!("Saved decision: untrusted ({key})")),
        "{screen}"
    );
    assert!(screen.contains(" → ✓ Do not trust"), "{screen}");
    tui.keys(&["Up", "Up", "Enter"]);
    tui.wait_for(
        "Saved trust decision: trusted. Restart pi for this to take effect.",
        WAIT,
    );
    assert!(!marker.exists(), "/trust does not load anything by itself");
    assert_eq!(
        std::fs::read_to_string(trust_file(&project)).unwrap(),
        format!("{{\n  {}: true\n}}\n", json!(key))
    );
    drop(tui);

    // Saved: no question, everything loads.
    let tui = tui_in(&project, &project.cwd());
    tui.wait_until("the project extension ran", WAIT, |_| marker.exists());
    assert!(!tui.screen().contains("Trust project folder?"));
}

#[test]
fn trust_json_is_written_byte_for_byte_as_pi_1_6_writes_it() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    // The decisions pi 1.6.0 made for tests/fixtures/trust/pi-1.6.0-prompt-decisions.json,
    // in its trust question, in this order: a: Do not trust; Zed: Trust; ü: Trust; b:
    // Trust parent folder.
    let project = Project::untrusted(script());
    let root = project.dir.path().join("root");
    let decisions = [("a", 3), ("Zed", 0), ("ü", 0), ("b", 1)];
    for (dir, downs) in decisions {
        let cwd = root.join("w").join(dir);
        std::fs::create_dir_all(cwd.join(".pi/prompts")).unwrap();
        let before = std::fs::read_to_string(trust_file(&project)).ok();
        let tui = tui_in(&project, &cwd);
        wait_for_question(&tui);
        choose(&tui, downs);
        // Written in place under pi's lock (which this test does not take): wait for the
        // whole new file.
        tui.wait_until("the decision is saved", WAIT, |_| {
            let now = std::fs::read_to_string(trust_file(&project)).ok();
            now != before && now.is_some_and(|t| t.ends_with("}\n"))
        });
    }
    let written = std::fs::read_to_string(trust_file(&project)).unwrap();
    let expected = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/trust/pi-1.6.0-prompt-decisions.json"),
    )
    .unwrap();
    assert_eq!(
        written.replace(&canonical(&root).display().to_string(), "<root>"),
        expected
    );
}

#[test]
fn a_user_extensions_trust_dialog_is_shown_in_the_terminal_ui_instead_of_pis_question() {
    require!("node");
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let project = project_with_resources();
    let path = project.agent_dir().join("extensions/ask.ts");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // As pi's examples/extensions/project-trust.ts: its own question, a confirmation,
    // then a decision for this session only.
    std::fs::write(
        &path,
        "export default function (pi) {\n\
           pi.on(\"project_trust\", async (event, ctx) => {\n\
             if (!ctx.hasUI || ctx.mode !== \"tui\") return { trusted: \"undecided\" };\n\
             const choice = await ctx.ui.select(`Extension asks about:\\n${event.cwd}`, [\"Trust this session\", \"Let built-in prompt decide\"]);\n\
             if (choice !== \"Trust this session\") return { trusted: \"undecided\" };\n\
             const sure = await ctx.ui.confirm(\"Really?\", \"The project's extensions will run\");\n\
             return { trusted: sure ? \"yes\" : \"undecided\" };\n\
           });\n\
         }\n",
    )
    .unwrap();
    let marker = project.dir.path().join("extension-ran");
    let tui = tui_in(&project, &project.cwd());
    let screen = tui.wait_for("Extension asks about:", WAIT);
    assert!(
        screen.contains(&project.cwd().display().to_string()),
        "{screen}"
    );
    assert!(!screen.contains("Trust project folder?"), "{screen}");
    assert!(!marker.exists());
    tui.keys(&["Enter"]);
    let screen = tui.wait_for("The project's extensions will run", WAIT);
    assert!(screen.contains("Really?"), "{screen}");
    assert!(!marker.exists());
    tui.keys(&["Enter"]);
    tui.wait_until("the project extension ran", WAIT, |_| marker.exists());
    assert!(!tui.screen().contains("Trust project folder?"));
    assert!(!trust_file(&project).exists(), "not remembered");
    drop(tui);

    // Deferring to pi brings its own question.
    std::fs::remove_file(&marker).unwrap();
    let tui = tui_in(&project, &project.cwd());
    tui.wait_for("Extension asks about:", WAIT);
    tui.keys(&["Down", "Enter"]);
    wait_for_question(&tui);
    assert!(!marker.exists());
}

#[test]
fn package_command_help_and_usage_lines_are_pi_1_6s() {
    let project = Project::untrusted(script());
    let run = |args: &[&str]| {
        let out = bare_pi(&project).args(args).output().unwrap();
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        (out.status.code(), text)
    };
    // Reference pi 1.6.0's output, without a terminal.
    let options = "  -a, --approve     Trust project-local files for this command\n  -na, --no-approve Ignore project-local files for this command\n";
    assert_eq!(
        run(&["install", "--help"]),
        (
            Some(0),
            format!(
                "Usage:\n  pi install <source> [-l] [--approve|--no-approve]\n\nInstall a package and add it to settings.\n\nOptions:\n  -l, --local       Install project-locally (.pi/settings.json)\n{options}\nExamples:\n  pi install npm:@foo/bar\n  pi install git:github.com/user/repo\n  pi install git:git@github.com:user/repo\n  pi install https://github.com/user/repo\n  pi install ssh://git@github.com/user/repo\n  pi install ./local/path\n\n"
            )
        )
    );
    assert_eq!(
        run(&["remove", "-h"]),
        (
            Some(0),
            format!(
                "Usage:\n  pi remove <source> [-l] [--approve|--no-approve]\n\nRemove a package and its source from settings.\nAlias: pi uninstall <source> [-l]\n\nOptions:\n  -l, --local       Remove from project settings (.pi/settings.json)\n{options}\nExamples:\n  pi remove npm:@foo/bar\n  pi uninstall npm:@foo/bar\n\n"
            )
        )
    );
    assert_eq!(
        run(&["list", "--help"]),
        (
            Some(0),
            "Usage:\n  pi list [--approve|--no-approve]\n\nList installed packages from user and project settings.\n\nOptions:\n  -a, --approve      Trust project-local files for this command\n  -na, --no-approve  Ignore project-local files for this command\n\n".to_string()
        )
    );
    assert_eq!(
        run(&["list", "-l"]),
        (
            Some(1),
            "Unknown option -l for \"list\".\nUse \"pi --help\" or \"pi list [--approve|--no-approve]\".\n".to_string()
        )
    );
    assert_eq!(
        run(&["install", "a", "b"]),
        (
            Some(1),
            "Unexpected argument b.\nUsage: pi install <source> [-l] [--approve|--no-approve]\n"
                .to_string()
        )
    );
}

#[test]
fn reload_trusts_what_the_session_created_in_a_folder_trusted_for_having_nothing() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let project = Project::untrusted(script());
    let tui = tui_in(&project, &project.cwd());
    tui.wait_for("mock-model", WAIT);
    project.write(".pi/prompts/greet.md", "EXPANDED-TEMPLATE\n");
    tui.type_text("/reload");
    tui.keys(&["Enter"]);
    tui.wait_for("; saved project trust", WAIT);
    let key = canonical(&project.cwd()).display().to_string();
    assert_eq!(
        std::fs::read_to_string(trust_file(&project)).unwrap(),
        format!("{{\n  {}: true\n}}\n", json!(key))
    );
    tui.type_text("/greet");
    tui.keys(&["Enter"]);
    tui.wait_until("the model was asked", WAIT, |_| {
        !project.requests().is_empty()
    });
    assert_eq!(loaded_template(&project), Some(true));
}

/// Whether the last request's user message was the expanded `greet` template.
fn loaded_template(project: &Project) -> Option<bool> {
    let requests = project.requests();
    let body = requests.last()?;
    let user = body["messages"]
        .as_array()?
        .iter()
        .rev()
        .find(|m| m["role"] == "user")?;
    Some(text_of(&user["content"]).contains("EXPANDED-TEMPLATE"))
}

#[test]
fn trust_json_is_read_under_pis_lock_and_a_stale_lock_is_taken_over() {
    require!("node");
    let project = project_with_resources();
    save_trust(&project, &[(&project.cwd(), json!(true))]);
    let lock = project.agent_dir().join("trust.json.lock");
    // Held by a live pi: the saved decision cannot be read; pi-rs says so and goes on
    // without it.
    std::fs::create_dir(&lock).unwrap();
    let out = print(&project, &[]);
    succeeded(&out);
    assert!(
        stderr(&out).contains(&format!(
            "Warning: cannot lock trust store {}: another pi process holds {}",
            trust_file(&project).display(),
            lock.display()
        )),
        "{}",
        stderr(&out)
    );
    assert_eq!(loaded(&project), Vec::<&str>::new());
    assert!(lock.is_dir(), "someone else's lock is left alone");
    // Left by a crash (older than proper-lockfile's 10 s): taken over, and released.
    std::fs::File::open(&lock)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - Duration::from_secs(60))
        .unwrap();
    succeeded(&print(&project, &[]));
    assert_eq!(loaded(&project), ALL);
    assert!(!lock.exists());
}

#[test]
fn a_program_extension_answers_project_trust_with_the_protocol() {
    require!("node");
    require!("python3");
    let project = project_with_resources();
    let path = project.agent_dir().join("rs-extensions/trusting");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        &path,
        "#!/usr/bin/env python3\n\
         import json, sys\n\
         def send(m):\n    sys.stdout.write(json.dumps(m) + \"\\n\"); sys.stdout.flush()\n\
         sys.stdin.readline()\n\
         send({\"type\": \"register\", \"events\": [\"project_trust\"]})\n\
         for line in sys.stdin:\n\
         \x20   m = json.loads(line)\n\
         \x20   if m[\"type\"] == \"event\" and \"id\" in m:\n\
         \x20       e = m[\"event\"]\n\
         \x20       ok = e[\"type\"] == \"project_trust\" and e[\"trustContext\"] == {\"mode\": \"json\", \"hasUI\": False}\n\
         \x20       send({\"type\": \"response\", \"id\": m[\"id\"], \"result\": {\"trusted\": \"yes\" if ok else \"no\"}})\n",
    )
    .unwrap();
    succeeded(
        &project
            .pi()
            .args(["--mode", "json", "/greet"])
            .output()
            .unwrap(),
    );
    assert_eq!(loaded(&project), ALL);
    assert!(!trust_file(&project).exists(), "not remembered");
}
