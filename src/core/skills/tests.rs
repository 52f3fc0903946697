use std::path::{Path, PathBuf};

use super::*;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// One line per skill and per diagnostic, paths relative to `root`.
fn render(skills: &[Skill], diagnostics: &[ResourceDiagnostic], root: &Path) -> String {
    let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
    let mut out = String::new();
    for s in skills {
        out.push_str(&format!(
            "skill {} {:?} {}{}\n",
            s.name,
            s.description,
            rel(&s.path),
            if s.disable_model_invocation {
                " (manual only)"
            } else {
                ""
            }
        ));
    }
    for d in diagnostics {
        let kind = match &d.kind {
            DiagnosticKind::Warning => "warning".to_string(),
            DiagnosticKind::Error => "error".to_string(),
            DiagnosticKind::Collision { winner, .. } => format!("collision, kept {}", rel(winner)),
        };
        out.push_str(&format!("{kind}: {} ({})\n", d.message, rel(&d.path)));
    }
    out
}

#[test]
fn pi_fixture_folder_loads_like_pi() {
    let root = fixtures().join("skills");
    let (skills, diagnostics) = load_skills_from_dir(&root, ResourceScope::Cli);
    insta::assert_snapshot!(render(&skills, &diagnostics, &root), @r#"
    skill bad--name "A skill with consecutive hyphens in the name." consecutive-hyphens/SKILL.md
    skill disable-model-invocation "A skill that cannot be invoked by the model." disable-model-invocation/SKILL.md (manual only)
    skill Invalid_Name "A skill with invalid characters in the name." invalid-name-chars/SKILL.md
    skill this-is-a-very-long-skill-name-that-exceeds-the-sixty-four-character-limit-set-by-the-standard "A skill with a name that exceeds 64 characters." long-name/SKILL.md
    skill multiline-description "This is a multiline description.\nIt spans multiple lines.\nAnd should be normalized.\n" multiline-description/SKILL.md
    skill different-name "A skill with a name that doesn't match the directory." name-mismatch/SKILL.md
    skill child-skill "A nested skill in a subdirectory." nested/child-skill/SKILL.md
    skill root-skill-preferred "Root skill should win." root-skill-preferred/SKILL.md
    skill unknown-field "A skill with an unknown frontmatter field." unknown-field/SKILL.md
    skill valid-skill "A valid skill for testing purposes." valid-skill/SKILL.md
    warning: name "bad--name" does not match parent directory "consecutive-hyphens" (consecutive-hyphens/SKILL.md)
    warning: name must not contain consecutive hyphens (consecutive-hyphens/SKILL.md)
    warning: name "Invalid_Name" does not match parent directory "invalid-name-chars" (invalid-name-chars/SKILL.md)
    warning: name contains invalid characters (must be lowercase a-z, 0-9, hyphens only) (invalid-name-chars/SKILL.md)
    warning: invalid YAML frontmatter at line 3: flow collection is not closed with `]` or `}` (invalid-yaml/SKILL.md)
    warning: name "this-is-a-very-long-skill-name-that-exceeds-the-sixty-four-character-limit-set-by-the-standard" does not match parent directory "long-name" (long-name/SKILL.md)
    warning: name exceeds 64 characters (94) (long-name/SKILL.md)
    warning: description is required (missing-description/SKILL.md)
    warning: name "different-name" does not match parent directory "name-mismatch" (name-mismatch/SKILL.md)
    warning: description is required (no-frontmatter/SKILL.md)
    "#);
}

#[test]
fn collision_keeps_the_first_skill_and_reports_the_second() {
    let root = fixtures().join("skills-collision");
    let mut options = ResourceOptions::new(&root, &root.join("no-agent-dir"));
    options.discover = false;
    options.cli_paths = vec!["first".into(), "second".into()];
    let loaded = load_skills(&options);
    insta::assert_snapshot!(render(&loaded.skills, &loaded.diagnostics, &root), @r#"
    skill calendar "First calendar skill." first/calendar/SKILL.md
    collision, kept first/calendar/SKILL.md: name "calendar" collision (second/calendar/SKILL.md)
    "#);
}

fn write_skill(dir: &Path, name: &str, description: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\nDo the thing.\n"
        ),
    )
    .unwrap();
}

#[test]
fn discovers_pi_locations_in_precedence_order() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let repo = root.join("repo");
    let cwd = repo.join("sub");
    let agent = root.join("agent");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    write_skill(&cwd.join(".pi/skills/proj"), "proj", "Project skill");
    // Like pi, a loose file without a `name` is named after its folder.
    std::fs::write(
        cwd.join(".pi/skills/loose.md"),
        "---\ndescription: A loose file\n---\nbody",
    )
    .unwrap();
    write_skill(&cwd.join(".agents/skills/here"), "here", "In cwd");
    write_skill(&repo.join(".agents/skills/up"), "up", "At the git root");
    write_skill(
        &root.join(".agents/skills/beyond"),
        "beyond",
        "Above the git root",
    );
    write_skill(&agent.join("skills/mine"), "mine", "User skill");
    write_skill(
        &agent.join("skills/node_modules/dep"),
        "dep",
        "Never loaded",
    );
    write_skill(
        &agent.join("skills/proj"),
        "proj",
        "Loses to the project one",
    );
    write_skill(&root.join("extra/cli"), "cli", "From --skill");

    let mut options = ResourceOptions::new(&cwd, &agent);
    options.cli_paths = vec!["../../extra/cli".into(), "../../nope".into()];
    let loaded = load_skills(&options);
    insta::assert_snapshot!(render(&loaded.skills, &loaded.diagnostics, root), @r#"
    skill skills "A loose file" repo/sub/.pi/skills/loose.md
    skill proj "Project skill" repo/sub/.pi/skills/proj/SKILL.md
    skill here "In cwd" repo/sub/.agents/skills/here/SKILL.md
    skill up "At the git root" repo/.agents/skills/up/SKILL.md
    skill mine "User skill" agent/skills/mine/SKILL.md
    skill cli "From --skill" extra/cli/SKILL.md
    warning: skill path does not exist (nope)
    collision, kept repo/sub/.pi/skills/proj/SKILL.md: name "proj" collision (agent/skills/proj/SKILL.md)
    "#);
    assert_eq!(loaded.get("proj").unwrap().scope, ResourceScope::Project);
    assert_eq!(loaded.get("mine").unwrap().scope, ResourceScope::User);
    assert_eq!(loaded.get("cli").unwrap().scope, ResourceScope::Cli);

    options.discover = false;
    let names: Vec<String> = load_skills(&options)
        .skills
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["cli"]);
}

#[cfg(unix)]
#[test]
fn a_skill_reached_through_a_symlink_is_loaded_once() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    write_skill(&dir.path().join("shared/tool"), "tool", "Shared");
    std::fs::create_dir_all(agent.join("skills")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("shared/tool"), agent.join("skills/tool")).unwrap();
    let mut options = ResourceOptions::new(dir.path(), &agent);
    options.cli_paths = vec!["shared/tool".into()];
    let loaded = load_skills(&options);
    assert_eq!(loaded.skills.len(), 1);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
}

#[test]
fn prompt_block_lists_visible_skills_xml_escaped() {
    let skill = |name: &str, description: &str, manual: bool| Skill {
        name: name.into(),
        description: description.into(),
        path: PathBuf::from(format!("/s/{name}/SKILL.md")),
        base_dir: PathBuf::from(format!("/s/{name}")),
        scope: ResourceScope::User,
        disable_model_invocation: manual,
    };
    let block = format_skills_for_prompt(&[
        skill("pdf", "Read <PDF> & \"forms\"", false),
        skill("secret", "Manual only", true),
    ]);
    insta::assert_snapshot!(block, @r#"


    Skills are instruction files for particular kinds of tasks.
    When a task fits a skill's description, read its file with the read tool before starting, and follow it.
    Paths mentioned inside a skill are relative to the folder that contains the skill file; turn them into absolute paths before using them in tool calls.

    <available_skills>
      <skill>
        <name>pdf</name>
        <description>Read &lt;PDF&gt; &amp; &quot;forms&quot;</description>
        <location>/s/pdf/SKILL.md</location>
      </skill>
    </available_skills>
    "#);
    assert_eq!(format_skills_for_prompt(&[skill("x", "y", true)]), "");
}

#[test]
fn skill_command_wraps_the_body_and_appends_arguments() {
    let dir = tempfile::tempdir().unwrap();
    write_skill(&dir.path().join("deploy"), "deploy", "Deploy things");
    let (skills, _) = load_skills_from_dir(dir.path(), ResourceScope::User);
    let expanded = expand_skill_command("/skill:deploy  to staging ", &skills)
        .unwrap()
        .unwrap();
    let expanded = expanded.replace(&dir.path().display().to_string(), "<dir>");
    insta::assert_snapshot!(expanded, @r#"
    <skill name="deploy" location="<dir>/deploy/SKILL.md">
    Paths in this skill are relative to <dir>/deploy.

    # deploy

    Do the thing.
    </skill>

    to staging
    "#);
    assert_eq!(expand_skill_command("/skill:nope x", &skills), Ok(None));
    assert_eq!(expand_skill_command("/deploy", &skills), Ok(None));
    let bare = expand_skill_command("/skill:deploy", &skills)
        .unwrap()
        .unwrap();
    assert!(bare.ends_with("</skill>"));

    std::fs::remove_file(dir.path().join("deploy/SKILL.md")).unwrap();
    let err = expand_skill_command("/skill:deploy", &skills).unwrap_err();
    assert!(err.message.starts_with("could not read skill file"));
}

#[test]
fn the_block_lands_before_date_and_cwd_and_only_with_the_read_tool() {
    use crate::core::system_prompt::{SystemPromptInput, build_system_prompt};
    let skills = [Skill {
        name: "pdf".into(),
        description: "Fill PDF forms".into(),
        path: PathBuf::from("/s/pdf/SKILL.md"),
        base_dir: PathBuf::from("/s/pdf"),
        scope: ResourceScope::User,
        disable_model_invocation: false,
    }];
    let block = format_skills_for_prompt(&skills);
    let mut input = SystemPromptInput::new(Path::new("/p"), "2026-11-22");
    input.custom_prompt = Some("Base.");
    input.tools = vec![("read", Some("Read files"))];
    input.skills_block = Some(&block);
    let prompt = build_system_prompt(&input);
    assert!(
        prompt.starts_with("Base.\n\nSkills are instruction files"),
        "{prompt}"
    );
    assert!(
        prompt.ends_with(
            "</available_skills>\nCurrent date: 2026-11-22\nCurrent working directory: /p"
        )
    );
    input.tools = vec![("bash", Some("Run commands"))];
    assert!(!build_system_prompt(&input).contains("available_skills"));
}
