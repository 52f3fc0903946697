//! What the configuration slash commands and the startup header draw, compared with pi
//! 0.73.1 side by side in tmux (80×24 and 120×40) and pinned here in-process
//! (`Headless`): the colours of warnings and errors, the first prompt of a quiet start,
//! the `[Themes]` listing, and what `/settings` shows on a small terminal.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::time::Duration;

use pi::modes::interactive::app::{Headless, InteractiveOptions};
use pi::modes::interactive::theme::ThemeToken;
use serde_json::json;

use crate::tui_app::{Env, submit};

const WAIT: Duration = Duration::from_secs(15);

/// The foreground colour of the first cell of the row that starts with `text`.
fn row_colour(ui: &mut Headless, text: &str) -> Option<ratatui::style::Color> {
    ui.render();
    let frame = ui.frame();
    let screen = ui.screen();
    let (row, line) = screen
        .lines()
        .enumerate()
        .find(|(_, l)| l.trim_start().starts_with(text))?;
    let column = line.len() - line.trim_start().len();
    frame[(column as u16, row as u16)].fg.into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warnings_and_errors_are_drawn_in_their_colours_as_pi_does() {
    let env = Env::new(json!({"sequence": []}), json!({}));
    let session = env.session();
    let options = InteractiveOptions {
        warnings: vec!["tmux extended-keys is off.".into()],
        ..InteractiveOptions::default()
    };
    let mut ui = Headless::with_options(session, 80, 24, options);
    ui.wait_for("Warning: tmux", WAIT).await;
    // `/import` without a file is one of pi's `showError`s.
    submit(&mut ui, "/import").await;
    ui.wait_for("Error: Usage: /import", WAIT).await;
    let theme = ui.app.theme.clone();
    assert_eq!(
        row_colour(&mut ui, "Warning: tmux"),
        theme.fg(ThemeToken::Warning).fg,
        "{}",
        ui.screen()
    );
    assert_eq!(
        row_colour(&mut ui, "Error: Usage"),
        theme.fg(ThemeToken::Error).fg,
        "{}",
        ui.screen()
    );
    assert_ne!(
        theme.fg(ThemeToken::Warning).fg,
        theme.fg(ThemeToken::Dim).fg
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_start_puts_the_first_prompt_on_the_first_row() {
    let env = Env::new(json!({"sequence": [{"text": "hello there"}]}), json!({}));
    let mut ui = env.ui(80, 24);
    // Nothing above the editor but one blank row, as pi's empty header and chat.
    let screen = ui.screen();
    assert!(screen.starts_with("\n──"), "{screen:?}");
    submit(&mut ui, "hi").await;
    let screen = ui
        .wait_until("the reply", WAIT, |s| {
            s.contains("hello there") && !s.contains("Working")
        })
        .await;
    let rows: Vec<&str> = screen.lines().collect();
    // The prompt's panel starts on row 0 (its padding row), the text on row 1; the
    // reply follows after one blank row, and the next prompt keeps its blank row above.
    assert_eq!(rows[1], " hi", "{screen}");
    assert_eq!(rows[4], " hello there", "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_themes_are_listed_under_the_header_as_pi_lists_them() {
    let env = Env::new(json!({"sequence": [{"text": "hello there"}]}), json!({}));
    // Not quiet (Env sets quietStartup: true).
    std::fs::write(
        env.agent().join("settings.json"),
        json!({"quietStartup": false}).to_string(),
    )
    .unwrap();
    let theme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("themes/dark.json"),
    )
    .unwrap()
    .replace("\"name\": \"dark\"", "\"name\": \"mytheme\"");
    std::fs::create_dir_all(env.agent().join("themes")).unwrap();
    std::fs::write(env.agent().join("themes/mytheme.json"), theme).unwrap();
    let mut ui = env.ui(80, 24);
    let screen = ui.wait_for("[Themes]", WAIT).await;
    let rows: Vec<&str> = screen.lines().collect();
    let at = rows.iter().position(|r| *r == "[Themes]").unwrap();
    assert_eq!(rows[at + 1], "  mytheme", "{screen}");
    // Below a listing, the first prompt keeps its blank row (pi's chat is not empty).
    submit(&mut ui, "hi").await;
    let screen = ui.wait_for("hello there", WAIT).await;
    let rows: Vec<&str> = screen.lines().collect();
    let at = rows.iter().position(|r| *r == "  mytheme").unwrap();
    assert_eq!(&rows[at + 1..at + 5], ["", "", "", " hi"], "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_shows_ten_entries_on_a_small_terminal_as_pi() {
    let env = Env::new(json!({"sequence": []}), json!({}));
    let mut ui = env.ui(80, 24);
    submit(&mut ui, "/settings").await;
    let screen = ui.wait_for("(1/", WAIT).await;
    let entries = screen
        .lines()
        .skip_while(|l| !l.starts_with("→ Auto-compact"))
        .take_while(|l| !l.trim_start().starts_with('('))
        .count();
    assert_eq!(entries, 10, "{screen}");
    assert!(
        screen.contains("Type to search · enter/space to change · escape/ctrl+c to cancel"),
        "{screen}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_writes_the_drawn_lines_and_messages_and_says_where() {
    let env = Env::new(json!({"sequence": [{"text": "hello there"}]}), json!({}));
    let mut ui = env.ui(80, 24);
    submit(&mut ui, "hi").await;
    ui.wait_until("the reply", WAIT, |s| {
        s.contains("hello there") && !s.contains("Working")
    })
    .await;
    submit(&mut ui, "/debug").await;
    let screen = ui.wait_for("✓ Debug log written", WAIT).await;
    let path = env.agent().join("pi-debug.log");
    assert!(
        screen.contains(&path.display().to_string()),
        "the file is named:\n{screen}"
    );
    // Nothing went to the model.
    assert_eq!(env.server.requests().len(), 1);
    let log = std::fs::read_to_string(&path).unwrap();
    assert!(log.starts_with("Debug output at "), "{log}");
    assert!(log.contains("\nTerminal: 80x24\n"), "{log}");
    assert!(
        log.contains("=== All rendered lines with visible widths ==="),
        "{log}"
    );
    let drawn = log
        .lines()
        .find(|l| l.contains("hello there"))
        .unwrap_or_default();
    assert!(drawn.starts_with('[') && drawn.contains("(w="), "{log}");
    let (_, messages) = log.split_once("=== Agent messages (JSONL) ===\n").unwrap();
    let roles: Vec<String> = messages
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["role"].to_string())
        .collect();
    assert_eq!(roles, ["\"user\"", "\"assistant\""], "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_keys_act_while_the_completion_list_is_open_as_in_pi() {
    let env = Env::new(json!({"sequence": [{"text": "hello there"}]}), json!({}));
    let mut ui = env.ui(80, 24);
    // Ctrl+C clears the editor (pi's app keys go before the list).
    ui.type_text("/sett");
    ui.wait_for("→ settings", WAIT).await;
    ui.keys(&["C-c"]);
    let screen = ui.screen();
    assert!(!screen.contains("→ settings"), "{screen}");
    assert!(ui.app.editor.is_empty(), "{screen}");
    // Escape only closes the list.
    ui.type_text("/sett");
    ui.wait_for("→ settings", WAIT).await;
    ui.keys(&["Escape"]);
    let screen = ui.screen();
    assert!(!screen.contains("→ settings"), "{screen}");
    assert_eq!(ui.app.editor.text(), "/sett");
    // Alt+Enter (pi's follow-up key) sends what is typed, list or not, when idle.
    ui.keys(&["BSpace"]);
    ui.wait_for("→ settings", WAIT).await;
    ui.keys(&["M-Enter"]);
    ui.wait_for("hello there", WAIT).await;
    let requests = env.server.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].body.to_string().contains("/set"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logins_first_question_is_pis_option_selector() {
    let env = Env::new(json!({"sequence": []}), json!({}));
    let mut ui = env.ui(80, 24);
    submit(&mut ui, "/login").await;
    let screen = ui.wait_for("Select authentication method:", WAIT).await;
    let rows: Vec<&str> = screen.lines().collect();
    let at = rows
        .iter()
        .position(|r| *r == " Select authentication method:")
        .unwrap_or_else(|| panic!("{screen}"));
    assert_eq!(
        &rows[at - 1..at + 7],
        [
            "",
            " Select authentication method:",
            "",
            " → Use a subscription",
            "   Use an API key",
            "",
            " ↑↓ navigate  enter select  escape/ctrl+c cancel",
            "",
        ],
        "{screen}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completions_tag_templates_and_skills_with_where_they_were_found() {
    let env = Env::new(json!({"sequence": []}), json!({}));
    std::fs::create_dir_all(env.agent().join("prompts")).unwrap();
    std::fs::write(
        env.agent().join("prompts/review.md"),
        "---\ndescription: Review a file\n---\nReview $1",
    )
    .unwrap();
    let project_prompts = env.cwd().join(".pi/prompts");
    std::fs::create_dir_all(&project_prompts).unwrap();
    std::fs::write(project_prompts.join("plan.md"), "Plan $@").unwrap();
    let skill = env.agent().join("skills/demo");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: demo\ndescription: A demo skill\n---\nDo it.",
    )
    .unwrap();
    // A session with its resources loaded, as the program builds it.
    // `-a`: the project's prompt templates load.
    let args = pi::cli::args::parse(["--provider", "mock", "--model", "mock-model", "-a"]).unwrap();
    let factory = std::sync::Arc::new(pi::core::factory::SessionFactory::new(
        pi::cli::startup::session_config(&args),
        env.cwd(),
        pi::core::paths::AgentPaths::new(env.agent()),
        pi::core::factory::ExtensionHosting {
            mode: pi::extensions::HostMode::Interactive,
            has_ui: false,
        },
    ));
    let built = factory
        .build(
            pi::session::SessionManager::in_memory(env.cwd()),
            pi::core::factory::ResourceLoading::Full,
        )
        .await
        .unwrap();
    let mut ui = Headless::new(built.session, 100, 30);
    ui.type_text("/rev");
    let screen = ui.wait_for("review", WAIT).await;
    assert!(screen.contains("review      [u] Review a file"), "{screen}");
    ui.app.editor.set_text("");
    ui.type_text("/plan");
    let screen = ui.wait_for("→ plan", WAIT).await;
    assert!(screen.contains("[p] Plan $@"), "{screen}");
    ui.app.editor.set_text("");
    ui.type_text("/skill:");
    let screen = ui.wait_for("skill:demo", WAIT).await;
    assert!(screen.contains("skill:demo  [u] A demo skill"), "{screen}");
}
