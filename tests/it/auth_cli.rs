//! `pi auth …` against the built binary in a throwaway HOME: every subcommand's output
//! and exit code (0 ready, 1 not ready, 2 invalid), and the same runs side by side with
//! reference pi 1.6 (skipped, with the reason printed, without node/npm). No subcommand
//! word ever reaches a model: the runs have no terminal and no server to talk to.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::reference_16;

const AUTH_JSON: &str = r#"{
  "groq": {"type": "api_key", "key": "gk-1"},
  "openai-codex": {"type": "oauth", "access": "tok-c", "refresh": "r", "expires": 9999999999999},
  "cerebras": {"type": "api_key", "key": "!exit 1"}
}"#;

const MODELS_JSON: &str = r#"{"providers": {
  "loc": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "$PI_T_AUTH_KEY", "models": [{"id": "m1"}]},
  "unset": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "$PI_T_AUTH_UNSET", "models": [{"id": "m2"}]}
}}"#;

/// A HOME whose agent folder holds the auth.json and models.json above.
fn home() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join(".pi/agent");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::write(agent.join("auth.json"), AUTH_JSON).unwrap();
    std::fs::write(agent.join("models.json"), MODELS_JSON).unwrap();
    dir
}

/// stdout, stderr and the exit code of `cmd auth args…` with only PATH, HOME and a few
/// variables (output through files: node may exit before a pipe is flushed).
fn run(mut cmd: Command, home: &Path, args: &[&str]) -> (String, String, i32) {
    let out_dir = tempfile::tempdir().unwrap();
    let (stdout, stderr) = (out_dir.path().join("out"), out_dir.path().join("err"));
    cmd.arg("auth")
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("PI_OFFLINE", "1")
        .env("PI_T_AUTH_KEY", "zkey")
        .env("MISTRAL_API_KEY", "mk")
        .current_dir(home)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap());
    let status = cmd.status().unwrap();
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    (read(&stdout), read(&stderr), status.code().unwrap_or(-1))
}

fn ours(args: &[&str]) -> (String, String, i32) {
    let home = home();
    run(Command::new(env!("CARGO_BIN_EXE_pi")), home.path(), args)
}

/// (args, stdout, exit code) as pi 1.6 gives them; stderr is checked where it says why.
const CASES: &[(&[&str], &str, i32)] = &[
    (&["check", "--provider", "groq"], "ready\n", 0),
    (
        &["check", "--provider", "groq", "--json"],
        "{\"status\":\"ready\",\"provider\":\"groq\",\"authType\":\"api_key\"}\n",
        0,
    ),
    (
        &["check", "--provider", "groq", "--credentials"],
        "gk-1\n",
        0,
    ),
    (
        &["check", "--provider", "openai", "--json"],
        "{\"status\":\"not_ready\",\"provider\":\"openai\",\"reason\":\"credentials_not_configured\"}\n",
        1,
    ),
    (&["check", "--provider", "nope"], "not_ready\n", 1),
    (
        &["check", "--model", "loc/m1", "--json", "--credentials"],
        "{\"status\":\"ready\",\"provider\":\"loc\",\"authType\":\"api_key\",\"credentials\":\"zkey\"}\n",
        0,
    ),
    (
        &["check", "--model", "unset/m2", "--json"],
        "{\"status\":\"not_ready\",\"provider\":\"unset\",\"reason\":\"credentials_not_configured\"}\n",
        1,
    ),
    (
        &["check", "--model", "zzz/yy", "--json"],
        "{\"status\":\"invalid\",\"provider\":\"zzz/yy\",\"reason\":\"invalid_state\"}\n",
        2,
    ),
    (
        &["check", "--provider", "cerebras", "--json"],
        "{\"status\":\"not_ready\",\"provider\":\"cerebras\",\"reason\":\"credentials_not_configured\"}\n",
        1,
    ),
    (
        &["check", "--provider", "cerebras", "--json", "--no-refresh"],
        "{\"status\":\"ready\",\"provider\":\"cerebras\",\"authType\":\"api_key\"}\n",
        0,
    ),
    (
        &[
            "check",
            "--provider",
            "openai-codex",
            "--json",
            "--credentials",
        ],
        "{\"status\":\"ready\",\"provider\":\"openai-codex\",\"authType\":\"oauth\",\"credentials\":\"tok-c\"}\n",
        0,
    ),
    (&["check"], "", 2),
    (&["check", "--provider", "groq", "extra"], "", 2),
    (&["check", "--provider", "groq", "--bogus"], "", 1),
    (&["print-api-key", "--provider", "groq"], "gk-1\n", 0),
    (&["print-api-key", "--provider", "mistral"], "mk\n", 0),
    (&["print-api-key", "--provider", "openai"], "", 1),
    (&["print-api-key", "--provider", "openai-codex"], "", 1),
    (&["print-api-key"], "", 1),
    (
        &["print-bearer-token", "--provider", "openai-codex"],
        "tok-c\n",
        0,
    ),
    (
        &[
            "print-bearer-token",
            "--provider",
            "openai-codex",
            "--min-expiry",
            "30m",
        ],
        "tok-c\n",
        0,
    ),
    (&["print-bearer-token", "--provider", "groq"], "", 1),
    (
        &[
            "print-bearer-token",
            "--provider",
            "openai-codex",
            "--min-expiry",
            "abc",
        ],
        "",
        1,
    ),
    (&["bogus"], "", 1),
    (
        &["logout", "groq"],
        "Removed stored API key for Groq. Environment variables and models.json config are unchanged.\n",
        0,
    ),
    (
        &["logout", "openai-codex"],
        "Logged out of OpenAI Codex.\n",
        0,
    ),
    (
        &["logout", "openai"],
        "No stored credentials for OpenAI. Environment variables and models.json config are unchanged.\n",
        0,
    ),
    (&["logout", "nope"], "", 1),
    (&["logout"], "", 1),
    (&["login"], "", 1),
    (&["login", "groq"], "", 1),
];

#[test]
fn every_subcommand_prints_what_pi_16_prints_with_its_exit_code() {
    for (args, stdout, code) in CASES {
        let (out, err, rc) = ours(args);
        assert_eq!(
            (out.as_str(), rc),
            (*stdout, *code),
            "pi auth {args:?}\nstderr: {err}"
        );
    }
}

#[test]
fn errors_say_why_on_stderr() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["check"],
            "Error: Auth checks require --provider <provider> or --model <model>\n",
        ),
        (
            &["print-api-key", "--provider", "openai-codex"],
            "Error: Provider \"openai-codex\" is configured with OAuth, not an API key\n",
        ),
        (
            &["print-api-key", "--provider", "cerebras"],
            "Error: No usable API key is configured\n",
        ),
        (
            &["check", "--provider", "groq", "--bogus"],
            "Unknown option --bogus for \"auth check\".\nUse \"pi --help\" or \"pi auth check --provider <provider> [--json] [--credentials] [--no-refresh]\".\n",
        ),
        (
            &["logout", "nope"],
            "Unknown provider \"nope\".\nStored credentials: cerebras, groq, openai-codex\n",
        ),
        (
            &["login", "groq"],
            "\"pi auth login <provider> [--api-key] [--no-browser]\" requires an interactive terminal\n",
        ),
    ];
    for (args, stderr) in cases {
        let (_, err, _) = ours(args);
        assert_eq!(err, *stderr, "pi auth {args:?}");
    }
}

#[test]
fn logout_removes_only_that_entry_and_help_lists_every_subcommand() {
    let home = home();
    let bin = || Command::new(env!("CARGO_BIN_EXE_pi"));
    let (_, _, rc) = run(bin(), home.path(), &["logout", "groq"]);
    assert_eq!(rc, 0);
    let auth: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join(".pi/agent/auth.json")).unwrap(),
    )
    .unwrap();
    assert!(auth.get("groq").is_none());
    assert!(auth.get("openai-codex").is_some() && auth.get("cerebras").is_some());
    let (help, _, rc) = run(bin(), home.path(), &["--help"]);
    assert_eq!(rc, 0);
    for sub in [
        "login",
        "logout",
        "print-api-key",
        "print-bearer-token",
        "check",
    ] {
        assert!(help.contains(&format!("pi auth {sub}")), "{help}");
    }
}

#[test]
fn output_and_exit_codes_match_reference_pi_16() {
    if let Err(why) = reference_16::available() {
        eprintln!("skipped: {why}");
        return;
    }
    let mut all: Vec<&[&str]> = CASES.iter().map(|(a, _, _)| *a).collect();
    all.push(&[]);
    all.push(&["check", "--help"]);
    for args in all {
        let ours_home = home();
        let theirs_home = home();
        let ours = run(
            Command::new(env!("CARGO_BIN_EXE_pi")),
            ours_home.path(),
            args,
        );
        let theirs = run(reference_16::command(), theirs_home.path(), args);
        assert_eq!(ours, theirs, "pi auth {args:?}");
    }
}
