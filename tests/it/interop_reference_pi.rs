//! Sessions produced by our running agent — compacted by the binary, branched with a
//! summary through `AgentSession` — open in the reference pi (0.73.1) with the same
//! conversation we build. Skipped, with the reason printed, without node/npm.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::mock_llm::{MockLlm, Script};
use crate::support::reference_pi;
use pi::ai::model::ThinkingLevel;
use pi::ai::models::ModelRegistry;
use pi::core::agent_session::{AgentSession, AgentSessionOptions, NavigateOptions, PromptOptions};
use pi::core::paths::AgentPaths;
use pi::core::settings::Settings;
use pi::session::SessionManager;
use pi::session::entry::SessionEntry;
use serde_json::{Value, json};

struct Home {
    dir: tempfile::TempDir,
    server: MockLlm,
}

impl Home {
    fn new(script: Value, settings: Value) -> Home {
        let dir = tempfile::tempdir().unwrap();
        let server = MockLlm::start(Script::from_json(&script.to_string()).unwrap());
        let agent = dir.path().join(".pi/agent");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        let models = json!({"providers": {"mock": {
            "baseUrl": format!("{}/v1", server.url()), "api": "openai-completions", "apiKey": "mock",
            "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
            "models": [{"id": "mock-model", "contextWindow": 20000, "maxTokens": 4000}]
        }}});
        std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
        std::fs::write(agent.join("settings.json"), settings.to_string()).unwrap();
        Home { dir, server }
    }

    fn agent(&self) -> PathBuf {
        self.dir.path().join(".pi/agent")
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn only_session_file(&self) -> PathBuf {
        let root = self.agent().join("sessions");
        let dir = std::fs::read_dir(root)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        std::fs::read_dir(dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path()
    }
}

fn our_messages(file: &Path) -> Value {
    let manager = SessionManager::open(file, None).unwrap();
    serde_json::to_value(manager.build_session_context().messages).unwrap()
}

macro_rules! require_reference_pi {
    () => {
        if let Err(why) = reference_pi::available() {
            eprintln!("skipped: {why}");
            return;
        }
    };
}

#[test]
fn a_session_our_binary_compacted_opens_in_pi_with_the_same_context() {
    require_reference_pi!();
    let padding = "padding ".repeat(40);
    let home = Home::new(
        json!({
            "rules": [{"match": "<conversation>", "reply": {"text": "## Goal\nTest."}}],
            "sequence": [
                {"text": format!("first {padding}"), "usage": {"input": 1000, "output": 10}},
                {"text": format!("second {padding}"), "usage": {"input": 5000, "output": 10}},
            ]
        }),
        json!({"compaction": {"keepRecentTokens": 10}}),
    );
    for (i, prompt) in ["one", "two"].iter().enumerate() {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pi"));
        cmd.current_dir(home.project())
            .env("HOME", home.dir.path())
            .env_remove("PI_CODING_AGENT_DIR")
            .args(["--provider", "mock", "--model", "mock-model"])
            .stdin(Stdio::null());
        if i > 0 {
            cmd.arg("-c");
        }
        assert!(cmd.args(["-p", prompt]).output().unwrap().status.success());
    }
    let file = home.only_session_file();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("\"type\":\"compaction\""), "{text}");
    let ours = our_messages(&file);
    assert_eq!(ours[0]["role"], "compactionSummary");
    let theirs = reference_pi::messages_of(home.dir.path(), &home.project(), &file);
    assert_eq!(theirs, ours);
    let _ = home.server.requests();
}

#[tokio::test]
async fn a_branch_summary_we_wrote_opens_in_pi_with_the_same_context() {
    require_reference_pi!();
    let home = Home::new(
        json!({
            "rules": [{"match": "<conversation>", "reply": {"text": "Explored: two greetings."}}],
            "sequence": [{"text": "a1"}, {"text": "a2"}, {"text": "a3"}]
        }),
        json!({}),
    );
    let registry = ModelRegistry::load(&home.agent());
    let model = registry.find("mock", "mock-model").cloned();
    let session = AgentSession::new(AgentSessionOptions {
        cwd: home.project(),
        paths: AgentPaths::new(home.agent()),
        settings: Settings::load(
            &home.agent(),
            &home.project(),
            pi::core::trust::ProjectTrust::Trusted,
        ),
        registry,
        session: SessionManager::create(home.project(), home.agent().join("sessions/p")).unwrap(),
        model,
        thinking: ThinkingLevel::Off,
        scoped_models: Vec::new(),
        tool_names: Vec::new(),
        extra_tools: Vec::new(),
        resources: Default::default(),
        hooks: None,
    });
    session
        .prompt("first", PromptOptions::default())
        .await
        .unwrap();
    session
        .prompt("second", PromptOptions::default())
        .await
        .unwrap();
    let first_user = session.with_session(|m| {
        m.path(None)
            .iter()
            .find(|e| matches!(e, SessionEntry::Message(x) if x.message.role() == "user"))
            .unwrap()
            .id()
            .to_string()
    });
    session
        .navigate_tree(
            &first_user,
            NavigateOptions {
                summarize: true,
                label: Some("retry-here".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    session
        .prompt("alternative", PromptOptions::default())
        .await
        .unwrap();
    let file = session.with_session(|m| m.session_file().unwrap().to_path_buf());
    let ours = our_messages(&file);
    assert_eq!(ours[0]["role"], "branchSummary");
    let theirs = reference_pi::messages_of(home.dir.path(), &home.project(), &file);
    assert_eq!(theirs, ours);
}
