//! `pi.registerProvider` from a TypeScript extension, through the built binary: a provider
//! registered while the extension loads joins the model registry, so `--provider/--model`
//! at startup reach the loopback model server with the extension's key and headers, and
//! `--list-models` lists its models. `unregisterProvider` while loading drops it, as in pi.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use crate::support::pi_project::Project;
use serde_json::json;

/// An extension registering provider `ext` (model `ext-model`) at the mock server, with
/// its key read from `EXT_KEY`, sent as a bearer token, and a provider header.
fn provider_extension(p: &Project, extra: &str) {
    let base_url = format!("{}/v1", p.server.url());
    p.write(
        ".pi/extensions/ext-provider.ts",
        &format!(
            r#"export default function (pi: any) {{
    pi.registerProvider("ext", {{
        baseUrl: "{base_url}",
        apiKey: "$EXT_KEY",
        api: "openai-completions",
        authHeader: true,
        headers: {{ "x-ext-provider": "from-extension" }},
        models: [{{ id: "ext-model", name: "Ext Model", contextWindow: 64000, maxTokens: 2000,
            reasoning: false, input: ["text"], cost: {{ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }},
            compat: {{ supportsDeveloperRole: false, supportsReasoningEffort: false }} }}],
    }});
    {extra}
}}
"#
        ),
    );
}

/// `pi` in the project without the project's own `--provider mock --model mock-model`.
fn pi(p: &Project) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_pi"));
    cmd.current_dir(p.cwd())
        .env("HOME", p.dir.path().join("home"))
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env("EXT_KEY", "secret-ext-key")
        .arg("--offline")
        .stdin(std::process::Stdio::null());
    cmd
}

fn have_node() -> bool {
    if crate::support::extensions::have("node") {
        return true;
    }
    eprintln!("skipped: node is not installed");
    false
}

#[test]
fn provider_and_model_from_an_extension_serve_a_print_prompt_with_its_headers() {
    if !have_node() {
        return;
    }
    let p = Project::new(json!({"sequence": [{"text": "Hello from ext."}]}));
    // No models.json: the model exists only once the extension has loaded.
    std::fs::remove_file(p.agent_dir().join("models.json")).unwrap();
    provider_extension(&p, "");
    let out = pi(&p)
        .args(["--provider", "ext", "--model", "ext-model", "-p", "hi"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "Hello from ext."
    );
    let requests = p.server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.body["model"], "ext-model");
    assert_eq!(request.header("x-ext-provider"), Some("from-extension"));
    assert_eq!(
        request.header("authorization"),
        Some("Bearer secret-ext-key")
    );
    let model_change = p
        .entries()
        .into_iter()
        .find(|e| e["type"] == "model_change")
        .unwrap();
    assert_eq!(model_change["provider"], "ext");
    assert_eq!(model_change["modelId"], "ext-model");
}

#[test]
fn list_models_shows_the_extension_provider_and_a_startup_without_it_fails() {
    if !have_node() {
        return;
    }
    let p = Project::new(json!({"sequence": []}));
    provider_extension(&p, "");
    let out = pi(&p).args(["--list-models", "ext"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let row = stdout
        .lines()
        .find(|l| l.contains("ext-model"))
        .unwrap_or_else(|| panic!("ext-model not listed:\n{stdout}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[..4], ["ext", "ext-model", "64K", "2K"], "{row}");

    // unregisterProvider while loading drops the queued registration: the model is unknown.
    provider_extension(&p, r#"pi.unregisterProvider("ext");"#);
    let out = pi(&p)
        .args(["--provider", "ext", "--model", "ext-model", "-p", "hi"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("Unknown provider \"ext\""), "{stderr}");
    assert!(p.server.requests().is_empty());
}

#[test]
fn an_invalid_provider_is_reported_naming_the_extension_and_the_problem() {
    if !have_node() {
        return;
    }
    let p = Project::new(json!({"sequence": [{"text": "ok"}]}));
    p.write(
        ".pi/extensions/bad-provider.ts",
        r#"export default function (pi: any) {
    pi.registerProvider("bad", { models: [{ id: "m" }] });
}
"#,
    );
    let out = p.pi().args(["-p", "hi"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("bad-provider.ts"), "{stderr}");
    assert!(stderr.contains("Provider bad: "), "{stderr}");
    assert!(stderr.contains("\"baseUrl\" is required"), "{stderr}");
}
