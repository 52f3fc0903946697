//! The `/settings` entries pi 0.73.1 has beyond the first ones (issue 18 item 7), each
//! toggled in the in-process app (`Headless`) and checked three ways: the list shows
//! pi's label and values, `settings.json` gets pi's key and value, and the behaviour
//! follows — the OSC 9;4 progress bytes the renderer writes during a run, the Anthropic
//! extra-usage warning (once, or not at all when switched off) and the footer's `(sub)`
//! for an OAuth login.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::time::{Duration, Instant};

use crate::tui_app::{Env, submit};
use pi::modes::interactive::app::Headless;
use pi::modes::interactive::renderer::{PROGRESS_ACTIVE, PROGRESS_CLEAR};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(15);
const WARNING: &str = "Anthropic subscription auth is active";
const CLAUDE: &str = "claude-haiku-4-5";

fn settings_json(env: &Env) -> Value {
    let text = std::fs::read_to_string(env.agent().join("settings.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Opens `/settings`, searches for `query` and presses Enter on the first match; returns
/// the screen after that.
async fn change(ui: &mut Headless, query: &str) -> String {
    submit(ui, "/settings").await;
    ui.type_text(query);
    ui.keys(&["Enter"]);
    ui.screen()
}

fn count(haystack: &[u8], needle: &str) -> usize {
    haystack
        .windows(needle.len())
        .filter(|w| *w == needle.as_bytes())
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_new_entries_show_pis_values_and_save_pis_keys() {
    let env = Env::new(json!({"default": {"text": "ok"}}), json!({}));
    let mut ui = env.ui(100, 40);
    submit(&mut ui, "/settings").await;
    // Scroll to the end so every entry has been on screen once.
    let mut seen = String::new();
    for _ in 0..25 {
        seen.push_str(&ui.screen());
        ui.keys(&["Down"]);
    }
    for (label, value) in [
        ("Terminal progress", "false"),
        ("Transport", "auto"),
        ("Install telemetry", "true"),
        ("Warnings", "configure"),
    ] {
        let row = seen
            .lines()
            .find(|l| l.contains(label))
            .unwrap_or_else(|| panic!("{label} missing:\n{seen}"));
        assert!(row.trim_end().ends_with(value), "{row}");
    }
    ui.keys(&["Escape"]);

    let screen = change(&mut ui, "terminalprog").await;
    assert!(screen.contains("Terminal progress"), "{screen}");
    ui.keys(&["Escape"]);
    // auto → sse (pi's order: sse, websocket, websocket-cached, auto).
    change(&mut ui, "transport").await;
    ui.keys(&["Escape"]);
    change(&mut ui, "telemetry").await;
    ui.keys(&["Escape"]);
    let screen = change(&mut ui, "warnings").await;
    assert!(
        screen.contains("Anthropic extra usage") && screen.contains("paid extra usage"),
        "the Warnings submenu: {screen}"
    );
    ui.keys(&["Enter"]);
    assert!(ui.screen().contains("Anthropic extra usage  false"));
    ui.keys(&["Escape"]);
    // Back in the main list, then closed.
    assert!(ui.screen().contains("Warnings"));
    ui.keys(&["Escape"]);

    let saved = settings_json(&env);
    assert_eq!(
        saved["terminal"]["showTerminalProgress"],
        json!(true),
        "{saved}"
    );
    assert_eq!(saved["transport"], json!("sse"), "{saved}");
    assert_eq!(saved["enableInstallTelemetry"], json!(false), "{saved}");
    assert_eq!(
        saved["warnings"]["anthropicExtraUsage"],
        json!(false),
        "{saved}"
    );
    // And the list reads them back.
    submit(&mut ui, "/settings").await;
    let mut seen = String::new();
    for _ in 0..25 {
        seen.push_str(&ui.screen());
        ui.keys(&["Down"]);
    }
    for (label, value) in [
        ("Terminal progress", "true"),
        ("Transport", "sse"),
        ("Install telemetry", "false"),
    ] {
        let row = seen.lines().find(|l| l.contains(label)).unwrap();
        assert!(row.trim_end().ends_with(value), "{row}");
    }
}

/// Runs one prompt whose answer streams for about 1.5 s and returns the progress bytes
/// written while it ran and after it ended.
async fn progress_during_a_run(env: &Env) -> (Vec<u8>, Vec<u8>) {
    let mut ui = env.ui(80, 24);
    submit(&mut ui, "go").await;
    let start = Instant::now();
    let mut during = Vec::new();
    let mut ended = false;
    while start.elapsed() < WAIT {
        ui.pump();
        ui.render();
        if ui.transcript().contains("slow answer done")
            && !ui.app.busy
            && !ui.app.session.is_streaming()
        {
            ended = true;
            during = ui.terminal_output().to_vec();
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(ended, "no answer:\n{}", ui.screen());
    ui.exit();
    let all = ui.terminal_output().to_vec();
    (during, all)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminal_progress_marks_a_run_busy_every_second_and_clears_after() {
    let slow = json!({"default": {"text": "a slow answer that takes a while. slow answer done",
        "chunk_size": 2, "delay_ms": 60}});
    let env = Env::new(slow, json!({"terminal": {"showTerminalProgress": true}}));
    let (during, all) = progress_during_a_run(&env).await;
    let text = String::from_utf8_lossy(&during).into_owned();
    // Set at the start, repeated at least once a second while the ~1.5 s answer streams,
    // cleared at the end (pi's exact bytes).
    assert!(text.starts_with(PROGRESS_ACTIVE), "{text:?}");
    assert!(count(&during, PROGRESS_ACTIVE) >= 2, "{text:?}");
    assert!(text.ends_with(PROGRESS_CLEAR), "{text:?}");
    // Nothing more after the run; exiting clears once more, as pi's stop() does.
    let after = &all[during.len()..];
    assert_eq!(count(after, PROGRESS_ACTIVE), 0);
    assert_eq!(count(after, PROGRESS_CLEAR), 1);

    // Off (pi's default): no OSC 9;4 at all.
    let env = Env::new(
        json!({"default": {"text": "slow answer done", "delay_ms": 5}}),
        json!({}),
    );
    let (_, all) = progress_during_a_run(&env).await;
    assert_eq!(count(&all, "\x1b]9;4;"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switching_terminal_progress_on_in_settings_takes_effect_at_the_next_run() {
    let env = Env::new(
        json!({"default": {"text": "slow answer done", "delay_ms": 5}}),
        json!({}),
    );
    let mut ui = env.ui(80, 24);
    change(&mut ui, "terminalprog").await;
    ui.keys(&["Escape"]);
    assert!(ui.terminal_output().is_empty());
    submit(&mut ui, "go").await;
    ui.wait_for("slow answer done", WAIT).await;
    let start = Instant::now();
    while !ui.terminal_output().ends_with(PROGRESS_CLEAR.as_bytes()) {
        assert!(start.elapsed() < WAIT, "{:?}", ui.terminal_output());
        ui.pump();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(ui.terminal_output().starts_with(PROGRESS_ACTIVE.as_bytes()));
}

/// An env whose agent has an Anthropic credential: `oauth` in auth.json (a subscription
/// login) or a subscription token as models.json's key.
fn anthropic_env(oauth: bool, settings: Value) -> Env {
    let env = Env::new(json!({"default": {"text": "ok"}}), settings);
    if oauth {
        let far = 4_000_000_000_000_i64;
        let auth = json!({"anthropic": {"type": "oauth", "access": "sk-ant-oat01-a",
            "refresh": "r", "expires": far}});
        std::fs::write(env.agent().join("auth.json"), auth.to_string()).unwrap();
    } else {
        let path = env.agent().join("models.json");
        let mut models: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        models["providers"]["anthropic"] =
            json!({"baseUrl": "http://127.0.0.1:9", "apiKey": "sk-ant-oat01-from-models-json"});
        std::fs::write(&path, models.to_string()).unwrap();
    }
    env
}

fn on_claude(env: &Env, width: u16) -> Headless {
    let session = env.session();
    let model = session.find_model("anthropic", CLAUDE).unwrap();
    session.set_model(model).unwrap();
    Headless::new(session, width, 30)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_subscription_login_warns_once_and_marks_the_footer() {
    let env = anthropic_env(true, json!({}));
    let mut ui = on_claude(&env, 120);
    let screen = ui.screen();
    assert!(screen.contains(&format!("Warning: {WARNING}")), "{screen}");
    assert!(screen.contains("claude.ai/settings/usage"), "{screen}");
    // pi's footer: the cost with "(sub)" even at $0.
    assert!(screen.contains("$0.000 (sub)"), "{screen}");
    // Once per run: switching away and back does not repeat it.
    submit(&mut ui, "/model mock/mock-model").await;
    ui.wait_for("Model: mock-model", WAIT).await;
    assert!(!ui.screen().contains("(sub)"), "{}", ui.screen());
    submit(&mut ui, &format!("/model anthropic/{CLAUDE}")).await;
    ui.wait_for(&format!("Model: {CLAUDE}"), WAIT).await;
    assert_eq!(ui.transcript().matches(WARNING).count(), 1);

    // A switch to Anthropic during the run warns too (not only startup).
    let mut ui = env.ui(120, 30);
    assert!(!ui.transcript().contains(WARNING));
    assert!(!ui.screen().contains("(sub)"));
    submit(&mut ui, &format!("/model anthropic/{CLAUDE}")).await;
    ui.wait_for(&format!("Model: {CLAUDE}"), WAIT).await;
    let screen = ui.wait_for(WARNING, WAIT).await;
    assert!(screen.contains("(sub)"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_token_as_key_warns_but_is_no_oauth_login() {
    let env = anthropic_env(false, json!({}));
    let mut ui = on_claude(&env, 120);
    let screen = ui.screen();
    assert!(screen.contains(WARNING), "{screen}");
    // pi marks only auth.json OAuth logins in the footer.
    assert!(!screen.contains("(sub)"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_warning_is_not_shown_when_switched_off() {
    let env = anthropic_env(true, json!({"warnings": {"anthropicExtraUsage": false}}));
    let mut ui = on_claude(&env, 120);
    let screen = ui.screen();
    assert!(!ui.transcript().contains(WARNING), "{screen}");
    // The footer marker does not depend on the warning.
    assert!(screen.contains("(sub)"), "{screen}");

    // Switched off in /settings → Warnings, a later switch to Anthropic stays quiet.
    let env = anthropic_env(true, json!({}));
    let mut ui = env.ui(120, 30);
    change(&mut ui, "warnings").await;
    ui.keys(&["Enter", "Escape", "Escape"]);
    assert_eq!(
        settings_json(&env)["warnings"]["anthropicExtraUsage"],
        json!(false)
    );
    submit(&mut ui, &format!("/model anthropic/{CLAUDE}")).await;
    ui.wait_for(&format!("Model: {CLAUDE}"), WAIT).await;
    assert!(!ui.transcript().contains(WARNING), "{}", ui.transcript());
}
