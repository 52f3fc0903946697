//! Providers from TypeScript extensions beyond a models.json-like config, through the
//! built binary: `streamSimple` (the reply streamed by the extension: text, thinking and
//! tool calls, the options pi passes, the provider timeout per event, an extension that
//! dies mid-reply), pi-ai's per-API functions (`streamSimpleOpenAICompletions`,
//! `streamSimpleAnthropic`) reaching the loopback model server through pi-rs, and
//! `registerProvider` / `unregisterProvider` after loading (from a command, in RPC mode),
//! including a JS provider that keeps working after `/reload`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use crate::support::pi_project::Project;
use crate::support::rpc_client::RpcProject;
use serde_json::{Value, json};

fn have_node() -> bool {
    if crate::support::extensions::have("node") {
        return true;
    }
    eprintln!("skipped: node is not installed");
    false
}

/// An extension registering provider `js` (model `js-model`, api `js-api`) whose
/// `streamSimple` is `body`: a function `(model, context, options, s, msg)` pushing
/// events to `s` (a pi-ai event stream) around the message shell `msg`.
fn js_provider(p: &Project, file: &str, body: &str) {
    p.write(
        &format!(".pi/extensions/{file}"),
        &format!(
            r#"import {{ createAssistantMessageEventStream }} from "@mariozechner/pi-ai";
const usage = () => ({{ input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2,
    cost: {{ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 }} }});
export default function (pi: any) {{
    pi.registerProvider("js", {{
        baseUrl: "http://unused.invalid", apiKey: "$JS_KEY", api: "js-api",
        models: [{{ id: "js-model", name: "JS Model", reasoning: true, input: ["text"],
            cost: {{ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }}, contextWindow: 100000, maxTokens: 1000 }}],
        streamSimple(model: any, context: any, options: any) {{
            const s = createAssistantMessageEventStream();
            const msg: any = {{ role: "assistant", content: [], api: model.api, provider: model.provider,
                model: model.id, usage: usage(), stopReason: "stop", timestamp: Date.now() }};
            (async () => {{ {body} }})().catch((e) => {{
                s.push({{ type: "error", reason: "error", error: {{ ...msg, stopReason: "error", errorMessage: String(e) }} }});
            }});
            return s;
        }},
    }});
}}
"#
        ),
    );
}

/// `pi` in the project with `JS_KEY` set, no model chosen.
fn pi_cmd(p: &Project) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_pi"));
    cmd.current_dir(p.cwd())
        .env("HOME", p.dir.path().join("home"))
        .env_remove("PI_CODING_AGENT_DIR")
        .env("JS_KEY", "js-secret")
        .arg("--offline")
        .stdin(std::process::Stdio::null());
    cmd
}

/// `pi` on the extension's `js/js-model`.
fn pi_js(p: &Project) -> std::process::Command {
    let mut cmd = pi_cmd(p);
    cmd.args(["--provider", "js", "--model", "js-model"]);
    cmd
}

/// A text reply streamed in two deltas, after a thinking block: `text`.
const TEXT_REPLY: &str = r#"
    const last = context.messages[context.messages.length - 1];
    s.push({ type: "start", partial: msg });
    msg.content.push({ type: "thinking", thinking: "" });
    s.push({ type: "thinking_start", contentIndex: 0, partial: msg });
    msg.content[0].thinking = "pondering";
    s.push({ type: "thinking_delta", contentIndex: 0, delta: "pondering", partial: msg });
    s.push({ type: "thinking_end", contentIndex: 0, content: "pondering", partial: msg });
    if (last.role === "toolResult") {
        const text = "the tool said: " + last.content.map((c: any) => c.text).join("").trim();
        msg.content.push({ type: "text", text });
        s.push({ type: "text_start", contentIndex: 1, partial: msg });
        s.push({ type: "text_delta", contentIndex: 1, delta: text, partial: msg });
        s.push({ type: "text_end", contentIndex: 1, content: text, partial: msg });
        s.push({ type: "done", reason: "stop", message: msg });
        return;
    }
    const call = { type: "toolCall", id: "call-1", name: "read", arguments: {} as any };
    msg.content.push(call);
    s.push({ type: "toolcall_start", contentIndex: 1, partial: msg });
    s.push({ type: "toolcall_delta", contentIndex: 1, delta: '{"path":', partial: msg });
    s.push({ type: "toolcall_delta", contentIndex: 1, delta: '"note.txt"}', partial: msg });
    call.arguments = { path: "note.txt" };
    s.push({ type: "toolcall_end", contentIndex: 1, toolCall: call, partial: msg });
    const info = `key=${options.apiKey} reasoning=${options.reasoning} system=${typeof context.systemPrompt} tools=${(context.tools ?? []).length > 0}`;
    msg.content.push({ type: "text", text: info });
    s.push({ type: "text_start", contentIndex: 2, partial: msg });
    s.push({ type: "text_delta", contentIndex: 2, delta: info, partial: msg });
    s.push({ type: "text_end", contentIndex: 2, content: info, partial: msg });
    msg.stopReason = "toolUse";
    s.push({ type: "done", reason: "toolUse", message: msg });
"#;

#[test]
fn a_provider_streamed_by_the_extension_answers_with_thinking_and_a_tool_call() {
    if !have_node() {
        return;
    }
    let p = Project::new(json!({"sequence": []}));
    p.write("note.txt", "forty-two\n");
    js_provider(&p, "js-provider.ts", TEXT_REPLY);
    let out = pi_js(&p)
        .args(["--thinking", "high", "-p", "read the note"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "the tool said: forty-two"
    );
    let entries = p.entries();
    let assistants: Vec<&Value> = entries
        .iter()
        .filter(|e| e["message"]["role"] == "assistant")
        .collect();
    assert_eq!(assistants.len(), 2, "{entries:#?}");
    let first = &assistants[0]["message"];
    assert_eq!(first["api"], "js-api");
    assert_eq!(first["provider"], "js");
    assert_eq!(first["stopReason"], "toolUse");
    assert_eq!(first["content"][0]["thinking"], "pondering");
    assert_eq!(first["content"][1]["name"], "read");
    assert_eq!(
        first["content"][1]["arguments"],
        json!({"path": "note.txt"})
    );
    // pi's SimpleStreamOptions: the provider's key, the thinking level; the context has
    // the system prompt and the tools.
    assert_eq!(
        first["content"][2]["text"],
        "key=js-secret reasoning=high system=string tools=true"
    );
    let tool_result = entries
        .iter()
        .find(|e| e["message"]["role"] == "toolResult")
        .unwrap();
    assert_eq!(tool_result["message"]["toolCallId"], "call-1");
}

#[test]
fn a_silent_js_provider_times_out_and_one_that_dies_ends_the_turn_with_an_error() {
    if !have_node() {
        return;
    }
    let p = Project::new(json!({"sequence": []}));
    std::fs::write(
        p.agent_dir().join("settings.json"),
        json!({"retry": {"enabled": false, "provider": {"timeoutMs": 700}}}).to_string(),
    )
    .unwrap();
    // Starts, then says nothing more.
    js_provider(
        &p,
        "js-provider.ts",
        r#"s.push({ type: "start", partial: msg });"#,
    );
    let started = std::time::Instant::now();
    let out = pi_js(&p).args(["-p", "hi"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("timed out"), "{stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));

    // Exits in the middle of the reply.
    js_provider(
        &p,
        "js-provider.ts",
        r#"s.push({ type: "start", partial: msg });
           setTimeout(() => process.exit(3), 50);"#,
    );
    let out = pi_js(&p).args(["-p", "hi"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("stopped"), "{stderr}");
}

/// An extension whose `streamSimple` hands the request to one of pi-ai's per-API
/// functions with the model pointed at the mock server and its own key and header, as
/// pi's `custom-provider-gitlab-duo` example does.
fn delegating_provider(p: &Project, function: &str, api: &str, base_url: &str) {
    p.write(
        ".pi/extensions/delegate.ts",
        &format!(
            r#"import {{ createAssistantMessageEventStream, {function} }} from "@mariozechner/pi-ai";
export default function (pi: any) {{
    pi.registerProvider("proxy", {{
        baseUrl: "http://unused.invalid", apiKey: "$JS_KEY", api: "proxy-api",
        models: [{{ id: "mock-model", name: "Proxied", reasoning: false, input: ["text"],
            cost: {{ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }}, contextWindow: 100000, maxTokens: 1000 }}],
        streamSimple(model: any, context: any, options: any) {{
            const s = createAssistantMessageEventStream();
            (async () => {{
                const inner = {function}({{ ...model, api: "{api}", baseUrl: "{base_url}",
                    compat: {{ supportsDeveloperRole: false, supportsReasoningEffort: false }} }}, context,
                    {{ ...options, apiKey: "inner-" + options.apiKey, headers: {{ "x-proxy": "yes" }} }});
                for await (const event of inner) s.push(event);
                s.end();
            }})();
            return s;
        }},
    }});
}}
"#
        ),
    );
}

#[test]
fn stream_simple_delegating_to_pi_ai_functions_reaches_the_model_server() {
    if !have_node() {
        return;
    }
    let p = Project::new(json!({"default": {"text": "Proxied hello."}}));
    let base = format!("{}/v1", p.server.url());
    delegating_provider(
        &p,
        "streamSimpleOpenAICompletions",
        "openai-completions",
        &base,
    );
    let run = |p: &Project| {
        let mut cmd = pi_cmd(p);
        cmd.args(["--provider", "proxy", "--model", "mock-model", "-p", "hi"]);
        cmd.output().unwrap()
    };
    let out = run(&p);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "Proxied hello."
    );
    let requests = p.server.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0].path.ends_with("/chat/completions"),
        "{}",
        requests[0].path
    );
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer inner-js-secret")
    );
    assert_eq!(requests[0].header("x-proxy"), Some("yes"));
    let assistant = p
        .entries()
        .into_iter()
        .find(|e| e["message"]["role"] == "assistant")
        .unwrap();
    assert_eq!(assistant["message"]["content"][0]["text"], "Proxied hello.");

    // Anthropic's wire, as gitlab-duo uses for Claude models.
    delegating_provider(
        &p,
        "streamSimpleAnthropic",
        "anthropic-messages",
        &p.server.url(),
    );
    let out = run(&p);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "Proxied hello."
    );
    let requests = p.server.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests[1].path.ends_with("/v1/messages"),
        "{}",
        requests[1].path
    );
    assert_eq!(requests[1].header("x-api-key"), Some("inner-js-secret"));
    assert_eq!(requests[1].header("x-proxy"), Some("yes"));
}

#[test]
fn register_provider_after_loading_takes_effect_at_once_and_unregister_removes_it() {
    if !have_node() {
        return;
    }
    let project = RpcProject::new(&json!({"default": {"text": "late answer"}}), None, None);
    let base_url = format!("{}/v1", project.server.url());
    let ext = project.cwd().join(".pi/extensions/late.ts");
    std::fs::create_dir_all(ext.parent().unwrap()).unwrap();
    std::fs::write(
        &ext,
        format!(
            r#"export default function (pi: any) {{
    pi.registerCommand("late", {{ handler: async () => {{
        pi.registerProvider("late", {{
            baseUrl: "{base_url}", apiKey: "$LATE_KEY", api: "openai-completions",
            headers: {{ "x-late": "1" }},
            models: [{{ id: "late-model", name: "Late", reasoning: false, input: ["text"],
                cost: {{ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }}, contextWindow: 1000, maxTokens: 100,
                compat: {{ supportsDeveloperRole: false, supportsReasoningEffort: false }} }}],
        }});
        await pi.setModel({{ provider: "late", id: "late-model" }});
    }} }});
    pi.registerCommand("drop", {{ handler: async () => {{ pi.unregisterProvider("late"); }} }});
}}
"#
        ),
    )
    .unwrap();
    let mut cmd = project.command();
    cmd.env("LATE_KEY", "late-secret");
    let mut c = crate::support::rpc_client::RpcClient::spawn(cmd);
    let has_late = |c: &mut crate::support::rpc_client::RpcClient| {
        let models = c.ok(json!({"type": "get_available_models"}));
        models["models"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["provider"] == "late" && m["id"] == "late-model")
    };
    assert!(!has_late(&mut c));
    c.ok(json!({"type": "prompt", "message": "/late"}));
    // The command has run once the model changed.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let state = c.ok(json!({"type": "get_state"}));
        if state["model"]["provider"] == "late" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "model not switched: {state}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(has_late(&mut c));
    let events = c.prompt("hi");
    assert!(
        events.iter().any(|e| e["type"] == "agent_end"),
        "{events:?}"
    );
    let requests = project.server.requests();
    let last = requests.last().unwrap();
    assert_eq!(last.body["model"], "late-model");
    assert_eq!(last.header("x-late"), Some("1"));
    assert_eq!(last.header("authorization"), Some("Bearer late-secret"));

    c.ok(json!({"type": "prompt", "message": "/drop"}));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while has_late(&mut c) {
        assert!(
            std::time::Instant::now() < deadline,
            "late not unregistered"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let (status, stderr) = c.close();
    assert!(status.success(), "{stderr}");
}

#[test]
fn a_js_provider_keeps_streaming_after_reload() {
    if !have_node() {
        return;
    }
    let p = Project::new(json!({"sequence": []}));
    js_provider(
        &p,
        "js-provider.ts",
        r#"const text = "reply " + context.messages.filter((m: any) => m.role === "user").length;
           msg.content.push({ type: "text", text });
           s.push({ type: "start", partial: msg });
           s.push({ type: "text_start", contentIndex: 0, partial: msg });
           s.push({ type: "text_delta", contentIndex: 0, delta: text, partial: msg });
           s.push({ type: "text_end", contentIndex: 0, content: text, partial: msg });
           s.push({ type: "done", reason: "stop", message: msg });"#,
    );
    p.write(
        ".pi/extensions/reloader.ts",
        r#"export default function (pi: any) {
    pi.registerCommand("reload-now", { handler: async (_args: string, ctx: any) => { await ctx.reload(); } });
}
"#,
    );
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_pi"));
    cmd.current_dir(p.cwd())
        .env("HOME", p.dir.path().join("home"))
        .env_remove("PI_CODING_AGENT_DIR")
        .env("JS_KEY", "js-secret")
        .args([
            "--mode",
            "rpc",
            "--offline",
            "--provider",
            "js",
            "--model",
            "js-model",
        ]);
    let mut c = crate::support::rpc_client::RpcClient::spawn(cmd);
    let text_of = |events: &[Value]| {
        events
            .iter()
            .rev()
            .find(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant")
            .map(|e| e["message"]["content"][0]["text"].clone())
    };
    let events = c.prompt("one");
    assert_eq!(text_of(&events), Some(json!("reply 1")), "{events:?}");
    c.ok(json!({"type": "prompt", "message": "/reload-now"}));
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let events = c.prompt("two");
    assert_eq!(text_of(&events), Some(json!("reply 2")), "{events:?}");
    let (status, stderr) = c.close();
    assert!(status.success(), "{stderr}");
}

/// Test scaffolding loaded into the node host with `--import`: GitLab's token service is
/// answered in place (`fetch` of the direct-access URL), and the AI gateway's address in
/// the requests the extension hands to pi-rs is the loopback server's. Everything else
/// is pi's example as shipped.
const GITLAB_STANDIN: &str = r#"
const mock = process.env.TEST_GATEWAY_URL;
const realFetch = globalThis.fetch;
globalThis.fetch = async (url, init) => {
    if (String(url) === "https://gitlab.com/api/v4/ai/third_party_agents/direct_access") {
        const auth = new Headers(init?.headers).get("authorization");
        return new Response(JSON.stringify({ token: "direct-token", headers: { "x-gitlab-seen": auth } }),
            { status: 200, headers: { "content-type": "application/json" } });
    }
    return realFetch(url, init);
};
let host;
Object.defineProperty(globalThis, "__piHost", {
    configurable: true,
    get: () => host,
    set(value) {
        host = value;
        const stream = value.ai.stream;
        value.ai.stream = (model, ...rest) =>
            stream({ ...model, baseUrl: model.baseUrl.replace("https://cloud.gitlab.com", mock) }, ...rest);
    },
});
"#;

#[test]
fn pis_gitlab_duo_example_answers_through_pi_ai_functions_against_the_loopback_server() {
    let example = match crate::ts_extensions::examples_dir() {
        Ok(dir) => dir.join("custom-provider-gitlab-duo"),
        Err(why) => {
            eprintln!("skipped: pi's example extensions are not available: {why}");
            return;
        }
    };
    let p = Project::new(json!({"default": {"text": "Duo says hi."}}));
    // The 0.73 example names its key variable bare (`"GITLAB_TOKEN"`); pi 1.6 reads bare
    // values literally and its own copy of the example says `"$GITLAB_TOKEN"`. Run the
    // example with that one line as pi 1.6 ships it.
    let copy = p.dir.path().join("gitlab-duo");
    std::fs::create_dir_all(&copy).unwrap();
    for name in ["index.ts", "package.json"] {
        let text = std::fs::read_to_string(example.join(name)).unwrap();
        std::fs::write(
            copy.join(name),
            text.replace("apiKey: \"GITLAB_TOKEN\"", "apiKey: \"$GITLAB_TOKEN\""),
        )
        .unwrap();
    }
    let example = copy;
    let standin = p.write("gitlab-standin.mjs", GITLAB_STANDIN);
    let run = |model: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_pi"))
            .current_dir(p.cwd())
            .env("HOME", p.dir.path().join("home"))
            .env_remove("PI_CODING_AGENT_DIR")
            .env("GITLAB_TOKEN", "glpat-test")
            .env("TEST_GATEWAY_URL", p.server.url())
            .env(
                "NODE_OPTIONS",
                format!("--import=file://{}", standin.display()),
            )
            .arg("--offline")
            .arg("-e")
            .arg(&example)
            .args(["--provider", "gitlab-duo", "--model", model, "-p", "hi"])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    // Claude through the Anthropic proxy.
    let out = run("claude-sonnet-4-5-20250929");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Duo says hi.");
    let requests = p.server.requests();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert!(
        r.path.starts_with("/ai/v1/proxy/anthropic/") && r.path.ends_with("/v1/messages"),
        "{}",
        r.path
    );
    assert_eq!(r.body["model"], "claude-sonnet-4-5-20250929");
    assert_eq!(r.header("authorization"), Some("Bearer direct-token"));
    assert_eq!(r.header("x-gitlab-seen"), Some("Bearer glpat-test"));

    // GPT through the OpenAI proxy (Responses API).
    let out = run("gpt-5-mini-2025-08-07");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Duo says hi.");
    let requests = p.server.requests();
    assert_eq!(requests.len(), 2);
    let r = &requests[1];
    assert_eq!(r.path, "/ai/v1/proxy/openai/v1/responses");
    assert_eq!(r.body["model"], "gpt-5-mini-2025-08-07");
    assert_eq!(r.header("authorization"), Some("Bearer direct-token"));
}

/// An extension provider `ext-oauth` (model `ext-model` at the mock server) with pi's
/// `oauth`: its login shows an address, reports progress and asks for a code; the
/// credentials carry the code; `refreshToken` renews to access `renewed`.
fn oauth_provider(dir: &std::path::Path, llm_url: &str) {
    let file = dir.join(".pi/extensions/oauth-provider.ts");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        file,
        format!(
            r#"export default function (pi: any) {{
    pi.registerProvider("ext-oauth", {{
        baseUrl: "{llm_url}/v1", api: "openai-completions",
        models: [{{ id: "ext-model", name: "Ext Model", reasoning: false, input: ["text"],
            cost: {{ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }}, contextWindow: 100000, maxTokens: 1000,
            compat: {{ supportsDeveloperRole: false, supportsReasoningEffort: false }} }}],
        oauth: {{
            name: "Ext Sign-In",
            async login(callbacks: any) {{
                callbacks.onAuth({{ url: "http://127.0.0.1:9/authorize?client=ext", instructions: "Sign in, then copy the code" }});
                callbacks.onProgress?.("Waiting for the code...");
                const code = await callbacks.onPrompt({{ message: "Paste the code:" }});
                return {{ access: "access-" + code, refresh: "refresh-" + code, expires: Date.now() + 3600000, account: "ext" }};
            }},
            async refreshToken(c: any) {{
                return {{ ...c, access: "renewed", refresh: "refresh-2", expires: Date.now() + 3600000 }};
            }},
            getApiKey: (c: any) => c.access,
        }},
    }});
}}
"#
        ),
    )
    .unwrap();
}

#[test]
fn an_expired_extension_oauth_login_is_renewed_by_its_refresh_token() {
    if !have_node() {
        return;
    }
    let p = Project::new(json!({"default": {"text": "signed answer"}}));
    oauth_provider(&p.cwd(), &p.server.url());
    std::fs::write(
        p.agent_dir().join("auth.json"),
        json!({"ext-oauth": {"type": "oauth", "access": "old", "refresh": "refresh-1",
            "expires": 1000, "account": "ext"}})
        .to_string(),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pi"))
        .current_dir(p.cwd())
        .env("HOME", p.dir.path().join("home"))
        .env_remove("PI_CODING_AGENT_DIR")
        .args([
            "--offline",
            "--provider",
            "ext-oauth",
            "--model",
            "ext-model",
            "-p",
            "hi",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "signed answer");
    let requests = p.server.requests();
    assert_eq!(requests[0].header("authorization"), Some("Bearer renewed"));
    let auth: Value =
        serde_json::from_str(&std::fs::read_to_string(p.agent_dir().join("auth.json")).unwrap())
            .unwrap();
    let entry = &auth["ext-oauth"];
    assert_eq!(entry["type"], "oauth");
    assert_eq!(entry["access"], "renewed");
    assert_eq!(entry["refresh"], "refresh-2");
    assert_eq!(entry["account"], "ext");
    assert!(entry["expires"].as_i64().unwrap() > 1000);
}

#[test]
fn login_lists_an_extension_oauth_provider_and_runs_its_flow_in_the_dialog() {
    use crate::support::tmux::{self, Tmux};
    use std::time::Duration;
    if !have_node() {
        return;
    }
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let wait = Duration::from_secs(30);
    let p = Project::new(json!({"default": {"text": "hello from ext-model"}}));
    oauth_provider(&p.cwd(), &p.server.url());
    std::fs::write(
        p.agent_dir().join("settings.json"),
        r#"{"quietStartup": true}"#,
    )
    .unwrap();
    // A browser that only writes down what it was asked to open.
    let bin = p.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let opened = p.dir.path().join("opened.txt");
    let opener = bin.join("xdg-open");
    std::fs::write(
        &opener,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '{}'\n",
            opened.display()
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let home = p.dir.path().join("home");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let cmd = format!(
        "{} --offline --provider mock --model mock-model",
        env!("CARGO_BIN_EXE_pi")
    );
    let env = [
        ("HOME", home.to_str().unwrap()),
        ("PATH", path.as_str()),
        ("PI_CODING_AGENT_DIR", ""),
    ];
    let t = Tmux::start(&cmd, &p.cwd(), &env, 120, 40);
    let slash = |command: &str| {
        t.type_text(command);
        t.wait_for(command, wait);
        std::thread::sleep(Duration::from_millis(300));
        t.keys(&["Enter"]);
    };
    t.wait_for("mock-model", wait);
    slash("/login");
    t.wait_for("Select authentication method:", wait);
    t.keys(&["Enter"]);
    let list = t.wait_for("Select provider to configure:", wait);
    assert!(list.contains("Ext Sign-In • unconfigured"), "{list}");
    t.type_text("Ext Sign");
    std::thread::sleep(Duration::from_millis(200));
    t.keys(&["Enter"]);
    t.wait_for("Login to Ext Sign-In", wait);
    let screen = t.wait_for("Paste the code:", wait);
    assert!(
        screen.contains("http://127.0.0.1:9/authorize?client=ext"),
        "{screen}"
    );
    assert!(screen.contains("Sign in, then copy the code"), "{screen}");
    t.type_text("abc123");
    t.keys(&["Enter"]);
    let screen = t.wait_for("Logged in to Ext Sign-In", wait);
    assert!(screen.contains("Credentials saved to"), "{screen}");
    let auth: Value =
        serde_json::from_str(&std::fs::read_to_string(p.agent_dir().join("auth.json")).unwrap())
            .unwrap();
    assert_eq!(auth["ext-oauth"]["type"], "oauth");
    assert_eq!(auth["ext-oauth"]["access"], "access-abc123");
    assert_eq!(auth["ext-oauth"]["refresh"], "refresh-abc123");
    assert_eq!(auth["ext-oauth"]["account"], "ext");
    // The browser was asked to open the flow's address.
    let deadline = std::time::Instant::now() + wait;
    while !std::fs::read_to_string(&opened)
        .unwrap_or_default()
        .contains("http://127.0.0.1:9/authorize?client=ext")
    {
        assert!(std::time::Instant::now() < deadline, "browser not opened");
        std::thread::sleep(Duration::from_millis(50));
    }

    // The provider's model now has a key and answers with the signed-in token.
    slash("/model ext-oauth/ext-model");
    t.wait_for("Model: ext-model", wait);
    t.type_text("hi");
    t.keys(&["Enter"]);
    t.wait_for("hello from ext-model", wait);
    let requests = p.server.requests();
    let last = requests.last().unwrap();
    assert_eq!(last.body["model"], "ext-model");
    assert_eq!(last.header("authorization"), Some("Bearer access-abc123"));
}
