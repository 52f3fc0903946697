//! Tool selection as pi 1.6 does it, through the built binary: `--tools` with `*`
//! patterns or `+name`/`-name` lists, `--exclude-tools`, `--no-tools`,
//! `--no-builtin-tools`, the `defaultTools` setting (user, then project), extension tools,
//! and the tools pi-rs has in a later version. What counts is the `tools` of the request
//! the model gets, compared with the request reference pi 1.6 sends for the same flags
//! and settings (where it runs) and with the expected list.

use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::pi_project::{Project, succeeded, tool_names};
use crate::support::reference_16;

const MODEL: [&str; 5] = ["--offline", "--provider", "mock", "--model", "mock-model"];

/// An extension (TypeScript, loaded by both pi and pi-rs) registering `mytool`.
const EXTENSION: &str = r#"export default function (pi: any) {
    pi.registerTool({
        name: "mytool", label: "My tool", description: "Answers ok",
        parameters: { type: "object", properties: {} },
        async execute() {
            return { content: [{ type: "text", text: "ok" }], details: {} };
        },
    });
}
"#;

fn project() -> Project {
    Project::new(json!({"default": {"text": "the answer"}}))
}

fn command(p: &Project, program: Command) -> Command {
    let mut cmd = program;
    cmd.current_dir(p.cwd())
        .env("HOME", p.dir.path().join("home"))
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env("FORCE_COLOR", "0")
        .env_remove("CI")
        .stdin(Stdio::null())
        .args(MODEL);
    cmd
}

/// The tools of the one request `program` sends for `args` (and its stderr).
fn tools_sent(p: &Project, program: Command, args: &[&str]) -> (Vec<String>, String) {
    let before = p.requests().len();
    let out = command(p, program)
        .args(args)
        .arg("-p")
        .arg("hi")
        .output()
        .unwrap();
    succeeded(&out);
    let requests = p.requests();
    assert_eq!(requests.len(), before + 1, "{args:?}");
    (
        tool_names(&requests[before]),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ours() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pi"))
}

fn reference() -> Option<Command> {
    match reference_16::available() {
        Ok(()) => Some(reference_16::command()),
        Err(why) => {
            eprintln!("reference pi comparison skipped: {why}");
            None
        }
    }
}

/// pi 1.6's tools that pi-rs does not have yet, left out of its lists for comparing.
fn without_later(tools: Vec<String>) -> Vec<String> {
    tools
        .into_iter()
        .filter(|t| !["powershell", "codemode", "tool_search"].contains(&t.as_str()))
        .collect()
}

/// Runs every case with pi-rs (checking the expected tools) and, where it runs, with
/// reference pi 1.6 (checking the same tools, pi-rs's missing ones aside).
fn check(p: &Project, cases: &[(&[&str], &[&str])]) {
    for (args, expected) in cases {
        let (tools, stderr) = tools_sent(p, ours(), args);
        assert_eq!(tools, *expected, "{args:?}\n{stderr}");
    }
    if reference().is_none() {
        return;
    }
    for (args, _) in cases {
        let (theirs, _) = tools_sent(p, reference().unwrap(), args);
        let (mine, _) = tools_sent(p, ours(), args);
        assert_eq!(mine, without_later(theirs), "{args:?}");
    }
}

#[test]
fn tools_flags_select_what_pi_1_6_selects() {
    let p = project();
    check(
        &p,
        &[
            (&[], &["read", "bash", "edit", "write"]),
            (
                &["--tools", "read,grep,find,ls"],
                &["read", "grep", "find", "ls"],
            ),
            (&["--tools", "ls,read"], &["ls", "read"]),
            (&["--tools", "gr*,l*"], &["grep", "ls"]),
            (
                &["--tools", "+grep,-write"],
                &["read", "bash", "edit", "grep"],
            ),
            (&["-t", "+grep"], &["read", "bash", "edit", "write", "grep"]),
            (&["-nt", "--tools", "+grep"], &["grep"]),
            (&["-nbt", "--tools", "+grep"], &["grep"]),
            (&["-nt"], &[]),
            (&["-nbt"], &[]),
            (&["-xt", "e*,w*"], &["read", "bash"]),
            (
                &["--exclude-tools", "bash", "--tools", "*"],
                &["read", "edit", "write", "grep", "find", "ls"],
            ),
            (
                &["--tools", "+ls", "-xt", "ls"],
                &["read", "bash", "edit", "write"],
            ),
            (&["--tools", "nope"], &[]),
        ],
    );
}

#[test]
fn extension_tools_follow_the_selection() {
    let p = project();
    p.write("ext/mytool.ts", EXTENSION);
    let e = ["-e", "./ext/mytool.ts"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        e.iter().copied().chain(extra.iter().copied()).collect()
    };
    let cases: Vec<(Vec<&str>, &[&str])> = vec![
        (with(&[]), &["read", "bash", "edit", "write", "mytool"]),
        (with(&["--tools", "mytool,read"]), &["mytool", "read"]),
        (with(&["--tools", "read"]), &["read"]),
        (with(&["-nbt"]), &["mytool"]),
        (with(&["-nt"]), &[]),
        (with(&["-nt", "--tools", "my*"]), &["mytool"]),
        (with(&["-xt", "my*"]), &["read", "bash", "edit", "write"]),
        (
            with(&["--tools", "+grep"]),
            &["read", "bash", "edit", "write", "grep", "mytool"],
        ),
    ];
    let cases: Vec<(&[&str], &[&str])> = cases.iter().map(|(a, e)| (a.as_slice(), *e)).collect();
    check(&p, &cases);
}

#[test]
fn default_tools_setting_with_user_and_project_layers() {
    let p = project();
    let user = |value: Value| {
        std::fs::write(
            p.agent_dir().join("settings.json"),
            json!({"defaultProjectTrust": "always", "defaultTools": value}).to_string(),
        )
        .unwrap();
    };
    let project_settings = |value: Option<Value>| {
        let path = p.cwd().join(".pi/settings.json");
        match value {
            Some(v) => {
                p.write(".pi/settings.json", &json!({"defaultTools": v}).to_string());
            }
            None => {
                let _ = std::fs::remove_file(path);
            }
        }
    };
    for (user_value, project_value, args, expected) in [
        (
            json!(["+grep", "-write"]),
            None,
            vec![],
            vec!["read", "bash", "edit", "grep"],
        ),
        (
            json!(["+grep", "-write"]),
            None,
            vec!["--tools", "+ls"],
            vec!["read", "bash", "edit", "grep", "ls"],
        ),
        (
            json!(["+grep", "-write"]),
            None,
            vec!["--tools", "read"],
            vec!["read"],
        ),
        (json!(["read", "find"]), None, vec![], vec!["read", "find"]),
        (
            json!(["read", "find"]),
            Some(json!(["+ls"])),
            vec![],
            vec!["read", "find", "ls"],
        ),
        (
            json!(["read", "find"]),
            Some(json!(["grep"])),
            vec![],
            vec!["grep"],
        ),
        (json!(["grep", "+ls"]), None, vec![], vec!["grep", "ls"]),
        (json!([]), None, vec![], vec![]),
        (json!(["+grep"]), None, vec!["-nt"], vec![]),
    ] {
        user(user_value.clone());
        project_settings(project_value.clone());
        let (tools, stderr) = tools_sent(&p, ours(), &args);
        assert_eq!(
            tools, expected,
            "{user_value} {project_value:?} {args:?}\n{stderr}"
        );
        assert_eq!(stderr, "", "{user_value} {project_value:?} {args:?}");
        if let Some(reference) = reference() {
            let (theirs, _) = tools_sent(&p, reference, &args);
            assert_eq!(tools, theirs, "{user_value} {project_value:?} {args:?}");
        }
    }
}

#[test]
fn a_bad_default_tools_value_is_named_and_left_out() {
    let p = project();
    std::fs::write(
        p.agent_dir().join("settings.json"),
        json!({"defaultTools": "read"}).to_string(),
    )
    .unwrap();
    let (tools, stderr) = tools_sent(&p, ours(), &[]);
    assert_eq!(tools, ["read", "bash", "edit", "write"]);
    assert!(
        stderr.contains("settings.json: defaultTools: expected a list of strings, got \"read\"; this value is ignored"),
        "{stderr}"
    );
    std::fs::write(
        p.agent_dir().join("settings.json"),
        json!({"defaultTools": ["ls", 7, "read"]}).to_string(),
    )
    .unwrap();
    let (tools, stderr) = tools_sent(&p, ours(), &[]);
    assert_eq!(tools, ["ls", "read"]);
    assert!(
        stderr.contains("settings.json: defaultTools[1]: expected"),
        "{stderr}"
    );
}

#[test]
fn unknown_and_later_tools_are_named_once() {
    let p = project();
    let (tools, stderr) = tools_sent(&p, ours(), &["--tools", "read,nope"]);
    assert_eq!(tools, ["read"]);
    assert_eq!(
        stderr,
        "Warning: Unknown tool \"nope\" ignored. Built-in tools: read, bash, edit, write, grep, find, ls\n"
    );
    let (tools, stderr) = tools_sent(&p, ours(), &["--tools", "+codemode,+powershell"]);
    assert_eq!(tools, ["read", "bash", "edit", "write"]);
    assert_eq!(
        stderr,
        "Warning: The tools codemode, powershell of pi 1.6 come with a later version of pi-rs; this session runs without them\n"
    );
    let (_, stderr) = tools_sent(&p, ours(), &["--tools", "read,mcp__srv__*"]);
    assert_eq!(
        stderr,
        "Warning: MCP tools (mcp__…) of pi 1.6 come with a later version of pi-rs; this session runs without them\n"
    );
    // Without pi's built-in extensions pi 1.6 has no codemode either.
    let (_, stderr) = tools_sent(&p, ours(), &["-ne", "--tools", "+codemode"]);
    assert_eq!(stderr, "");
    std::fs::write(
        p.agent_dir().join("settings.json"),
        json!({"defaultTools": ["+tool_search"]}).to_string(),
    )
    .unwrap();
    let (_, stderr) = tools_sent(&p, ours(), &[]);
    assert_eq!(
        stderr,
        "Warning: The tool tool_search of pi 1.6 comes with a later version of pi-rs; this session runs without it\n"
    );
}

/// An extension switching the tools at `session_start` (`setActiveTools`).
const SWITCHER: &str = r#"export default function (pi: any) {
    pi.registerTool({
        name: "mytool", label: "My tool", description: "Answers ok",
        parameters: { type: "object", properties: {} },
        async execute() {
            return { content: [{ type: "text", text: "ok" }], details: {} };
        },
    });
    pi.on("session_start", async () => {
        pi.setActiveTools(["read", "bash", "grep", "mytool"]);
    });
}
"#;

#[test]
fn extensions_cannot_activate_what_the_flags_leave_out() {
    let p = project();
    p.write("ext/switcher.ts", SWITCHER);
    let cases: Vec<(Vec<&str>, &[&str])> = vec![
        // pi 1.6: the active ones keep their place, then the others in the order asked.
        (vec![], &["read", "bash", "mytool", "grep"]),
        (vec!["-xt", "bash,g*"], &["read", "mytool"]),
        (vec!["--tools", "read,mytool"], &["read", "mytool"]),
        (vec!["--tools", "read"], &["read"]),
    ];
    let cases: Vec<(Vec<&str>, &[&str])> = cases
        .into_iter()
        .map(|(args, expected)| {
            let mut all = vec!["-e", "./ext/switcher.ts"];
            all.extend(args);
            (all, expected)
        })
        .collect();
    let cases: Vec<(&[&str], &[&str])> = cases.iter().map(|(a, e)| (a.as_slice(), *e)).collect();
    check(&p, &cases);
}
