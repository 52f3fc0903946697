//! `/reload` through the session factory (`SessionFactory::reload`, what the interactive
//! UI runs): what the project holds after the edit is what the session uses, and nothing of
//! the old extensions is left behind. The terminal side is in `tests/it/e2e/tui.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::sync::Arc;

use crate::support::extensions as ext_support;
use crate::support::pi_project::Project;
use pi::cli::args::parse;
use pi::cli::startup::session_config;
use pi::core::agent_session::AgentSession;
use pi::core::factory::{ExtensionHosting, ResourceLoading, SessionFactory};
use pi::core::paths::AgentPaths;
use pi::extensions::{HostMode, SessionStartReason};
use pi::session::SessionManager;
use serde_json::json;

/// An extension that registers one tool, named after its file (`shout.sh`: `shout`).
const TOOL_EXTENSION: &str = r#"#!/bin/sh
name=$(basename "$0" .sh)
IFS= read -r hello || exit 0
printf '{"type":"register","name":"%s","events":[],"tools":[{"name":"%s","label":"%s","description":"The %s tool","parameters":{"type":"object","properties":{}}}]}\n' "$name" "$name" "$name" "$name"
while IFS= read -r line; do
    id=${line#*\"id\":}
    id=${id%%,*}
    case "$line" in
    '{"type":"event","id":'*) printf '{"type":"response","id":%s}\n' "$id" ;;
    esac
done
"#;

fn reloader(p: &Project, runtime: &tokio::runtime::Runtime) -> (AgentSession, Arc<SessionFactory>) {
    let args = parse(["--provider", "mock", "--model", "mock-model"]).unwrap();
    let hosting = ExtensionHosting {
        mode: HostMode::Interactive,
        has_ui: false,
    };
    let factory = Arc::new(SessionFactory::new(
        session_config(&args),
        p.cwd(),
        AgentPaths::new(p.agent_dir()),
        hosting,
    ));
    let manager = SessionManager::in_memory(p.cwd());
    let built = runtime
        .block_on(factory.build(manager, ResourceLoading::Full))
        .unwrap();
    assert!(built.warnings.is_empty(), "{:?}", built.warnings);
    runtime.block_on(built.session.start_extensions(SessionStartReason::Startup));
    (built.session, factory)
}

/// Tool names, sorted.
fn tools(session: &AgentSession) -> Vec<String> {
    let mut names: Vec<String> = session
        .tools()
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn reload_drops_the_tools_of_a_removed_extension_and_keeps_one_copy_of_the_others() {
    let p = Project::new(json!({"sequence": []}));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = p.cwd().join(".pi/extensions");
    std::fs::create_dir_all(&dir).unwrap();
    let shout = ext_support::script(&dir, "shout.sh", TOOL_EXTENSION);
    ext_support::script(&dir, "keep.sh", TOOL_EXTENSION);
    let (session, reloader) = reloader(&p, &runtime);
    assert_eq!(
        tools(&session),
        ["bash", "edit", "keep", "read", "shout", "write"]
    );

    std::fs::remove_file(&shout).unwrap();
    let warnings = runtime.block_on(reloader.reload(&session)).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(tools(&session), ["bash", "edit", "keep", "read", "write"]);
    let extensions: Vec<String> = session
        .loaded_resources()
        .extensions
        .into_iter()
        .map(|e| format!("{} running={}", e.name, e.running))
        .collect();
    assert_eq!(extensions, ["keep running=true"]);
    runtime.block_on(session.shutdown());
}

#[test]
fn reload_reads_new_context_files_prompt_templates_skills_and_settings() {
    let p = Project::new(json!({"sequence": []}));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (session, reloader) = reloader(&p, &runtime);
    assert!(session.prompt_templates().is_empty());
    assert!(session.status().auto_compaction_enabled);

    p.write("AGENTS.md", "Always answer in RELOADED-CONTEXT style.\n");
    p.write(
        ".pi/prompts/review.md",
        "---\ndescription: Review a file\n---\nReview $1 carefully.\n",
    );
    p.write(
        ".pi/skills/lint/SKILL.md",
        "---\nname: lint\ndescription: Lints the project\n---\nRun the linter.\n",
    );
    p.write(".pi/settings.json", r#"{"compaction": {"enabled": false}}"#);
    let warnings = runtime.block_on(reloader.reload(&session)).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");

    let prompt = session.system_prompt();
    assert!(prompt.contains("RELOADED-CONTEXT"), "{prompt}");
    assert!(prompt.contains("Lints the project"), "{prompt}");
    let loaded = session.loaded_resources();
    let names = |v: Vec<String>| v.join(",");
    assert_eq!(
        (
            names(
                loaded
                    .prompt_templates
                    .iter()
                    .map(|t| t.name.clone())
                    .collect()
            ),
            names(loaded.skills.iter().map(|s| s.name.clone()).collect()),
            loaded.context_files.len(),
        ),
        ("review".to_string(), "lint".to_string(), 1)
    );
    assert!(!session.status().auto_compaction_enabled);
}
