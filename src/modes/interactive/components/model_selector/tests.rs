//! Model selector: order, search, scope, scrolling, errors and narrow screens.

use super::*;
use crate::ai::model::{Api, InputKind, ModelCost};
use crate::modes::interactive::test_support::{plain, theme};
use crossterm::event::{KeyCode, KeyModifiers};
use pretty_assertions::assert_eq;

fn model(
    provider: &str,
    id: &str,
    name: &str,
    context: u64,
    reasoning: bool,
    images: bool,
) -> Model {
    Model {
        id: id.into(),
        name: name.into(),
        api: Api::OpenAiCompletions,
        provider: provider.into(),
        base_url: "http://localhost".into(),
        reasoning,
        thinking_level_map: None,
        input: if images {
            vec![InputKind::Text, InputKind::Image]
        } else {
            vec![InputKind::Text]
        },
        cost: ModelCost::default(),
        context_window: context,
        max_tokens: 8192,
        headers: Default::default(),
        compat: None,
        extras: Default::default(),
    }
}

fn models() -> Vec<Model> {
    vec![
        model("openai", "gpt-5", "GPT-5", 400_000, true, true),
        model(
            "anthropic",
            "claude-sonnet-4-5",
            "Claude Sonnet 4.5",
            200_000,
            true,
            true,
        ),
        model("openai", "gpt-4o-mini", "GPT-4o mini", 128_000, false, true),
        model(
            "google",
            "gemini-2.5-pro",
            "Gemini 2.5 Pro",
            1_048_576,
            true,
            true,
        ),
        model("mock", "mock-model", "Mock", 32_000, false, false),
        model(
            "anthropic",
            "claude-haiku-4-5",
            "Claude Haiku 4.5",
            200_000,
            false,
            true,
        ),
    ]
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn view(selector: &ModelSelector, width: usize) -> String {
    let t = theme();
    let keys = Keybindings::defaults();
    plain(&selector.render(width, 0, &Ui::new(&t, &keys)), width)
}

fn type_text(selector: &mut ModelSelector, text: &str) {
    let keys = Keybindings::defaults();
    for c in text.chars() {
        selector.handle_key(&key(KeyCode::Char(c)), &keys);
    }
}

#[test]
fn the_current_model_comes_first_then_providers_in_order() {
    let selector = ModelSelector::new(models(), Some(("openai", "gpt-4o-mini")));
    insta::assert_snapshot!(view(&selector, 80), @r"
        ────────────────────────────────────────────────────────────────────────────────

        Only models of providers with credentials are listed. /login adds more.

        >

        → ✓ gpt-4o-mini [openai]                                       128k ctx · images
            claude-sonnet-4-5 [anthropic]                  200k ctx · reasoning · images
            claude-haiku-4-5 [anthropic]                               200k ctx · images
            gemini-2.5-pro [google]                        1.0M ctx · reasoning · images
            mock-model [mock]                                                    32k ctx
            gpt-5 [openai]                                 400k ctx · reasoning · images

          Model Name: GPT-4o mini

          Enter to select · Ctrl+S to set as default · Escape/Ctrl+C to cancel
        ────────────────────────────────────────────────────────────────────────────────
        ");
}

#[test]
fn search_matches_provider_slash_id_and_names() {
    let keys = Keybindings::defaults();
    let mut selector = ModelSelector::new(models(), Some(("mock", "mock-model")));
    type_text(&mut selector, "anthropic/haiku");
    assert_eq!(
        selector.selected_model().map(Model::full_id).as_deref(),
        Some("anthropic/claude-haiku-4-5")
    );
    selector.handle_key(
        &KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
        &keys,
    );
    type_text(&mut selector, "Sonnet 4.5");
    insta::assert_snapshot!(view(&selector, 80), @r"
        ────────────────────────────────────────────────────────────────────────────────

        Only models of providers with credentials are listed. /login adds more.

        > Sonnet 4.5

        →   claude-sonnet-4-5 [anthropic]                  200k ctx · reasoning · images

          Model Name: Claude Sonnet 4.5

          Enter to select · Ctrl+S to set as default · Escape/Ctrl+C to cancel
        ────────────────────────────────────────────────────────────────────────────────
        ");
    assert_eq!(
        selector.handle_key(&key(KeyCode::Enter), &keys),
        ModelSelectorOutcome::Selected {
            provider: "anthropic".into(),
            id: "claude-sonnet-4-5".into(),
            save_default: false,
        }
    );
    type_text(&mut selector, "zzz");
    insta::assert_snapshot!(view(&selector, 80).lines().nth(6).unwrap(), @"  No matching models");
    assert_eq!(
        selector.handle_key(&key(KeyCode::Enter), &keys),
        ModelSelectorOutcome::Ignored
    );
    assert_eq!(
        selector.handle_key(&key(KeyCode::Esc), &keys),
        ModelSelectorOutcome::Cancelled
    );
}

#[test]
fn a_scope_opens_on_the_scoped_models_and_tab_shows_all() {
    let keys = Keybindings::defaults();
    let all = models();
    let scoped = vec![all[3].clone(), all[0].clone()];
    let mut selector = ModelSelector::new(all, Some(("openai", "gpt-5"))).with_scoped(scoped);
    assert_eq!(selector.scope(), ModelScope::Scoped);
    insta::assert_snapshot!(view(&selector, 80), @r"
        ────────────────────────────────────────────────────────────────────────────────

        Scope: all | scoped
        tab scope (all/scoped)

        >

            gemini-2.5-pro [google]                        1.0M ctx · reasoning · images
        → ✓ gpt-5 [openai]                                 400k ctx · reasoning · images

          Model Name: GPT-5

          Enter to select · Ctrl+S to set as default · Escape/Ctrl+C to cancel
        ────────────────────────────────────────────────────────────────────────────────
        ");
    let t = theme();
    let cursor = selector.render_with_cursor(80, 0, &Ui::new(&t, &keys)).1;
    assert_eq!(cursor, Some((2, 5)), "in the search box, for IMEs");
    selector.handle_key(&key(KeyCode::Tab), &keys);
    assert_eq!(selector.scope(), ModelScope::All);
    assert_eq!(
        selector.selected_model().map(Model::full_id).as_deref(),
        Some("openai/gpt-5")
    );
    // Without a scope Tab does nothing.
    let mut plain_selector = ModelSelector::new(models(), None);
    assert_eq!(
        plain_selector.handle_key(&key(KeyCode::Tab), &keys),
        ModelSelectorOutcome::Ignored
    );
}

#[test]
fn arrows_wrap_and_long_lists_scroll() {
    let keys = Keybindings::defaults();
    let many: Vec<Model> = (0..14)
        .map(|i| {
            model(
                "p",
                &format!("model-{i:02}"),
                &format!("Model {i}"),
                8_000,
                false,
                false,
            )
        })
        .collect();
    let mut selector = ModelSelector::new(many, None);
    selector.handle_key(&key(KeyCode::Up), &keys);
    assert_eq!(
        selector.selected_model().map(|m| m.id.as_str()),
        Some("model-13")
    );
    insta::assert_snapshot!(view(&selector, 50), @r"
        ──────────────────────────────────────────────────

        Only models of providers with credentials are lis…

        >

            model-04 (Model 4) [p]                8.0k ctx
            model-05 (Model 5) [p]                8.0k ctx
            model-06 (Model 6) [p]                8.0k ctx
            model-07 (Model 7) [p]                8.0k ctx
            model-08 (Model 8) [p]                8.0k ctx
            model-09 (Model 9) [p]                8.0k ctx
            model-10 [p]                          8.0k ctx
            model-11 [p]                          8.0k ctx
            model-12 [p]                          8.0k ctx
        →   model-13 [p]                          8.0k ctx
          (14/14)

          Model Name: Model 13

          Enter to select · Ctrl+S to set as default · Es…
        ──────────────────────────────────────────────────
        ");
    selector.handle_key(&key(KeyCode::Down), &keys);
    assert_eq!(
        selector.selected_model().map(|m| m.id.as_str()),
        Some("model-00")
    );
}

#[test]
fn models_json_problems_are_shown_and_narrow_screens_drop_the_notes() {
    let selector = ModelSelector::new(models(), Some(("anthropic", "claude-sonnet-4-5")))
        .with_error(Some(
            "models.json: expected `,` at line 3\nBuilt-in models are still listed.".into(),
        ));
    insta::assert_snapshot!(view(&selector, 44), @r"
        ────────────────────────────────────────────

        Only models of providers with credentials a…

        >

        → ✓ claude-sonnet-4-5 [anthropic]
            claude-haiku-4-5 [anthropic]
            gemini-2.5-pro [google]
            mock-model [mock]
            gpt-5 [openai]
            gpt-4o-mini [openai]
        models.json: expected `,` at line 3
        Built-in models are still listed.

          Enter to select · Ctrl+S to set as defaul…
        ────────────────────────────────────────────
        ");
    for width in 1..100 {
        view(&selector, width);
    }
    let wide = ModelSelector::new(
        vec![model(
            "提供者",
            "模型-🇯🇵-very-long-identifier",
            "名前",
            1000,
            true,
            false,
        )],
        None,
    );
    for width in 1..100 {
        view(&wide, width);
    }
}

#[test]
fn the_default_model_is_second_and_marked_and_ctrl_s_saves_the_selection() {
    let keys = Keybindings::defaults();
    let mut selector = ModelSelector::new(models(), Some(("openai", "gpt-5")))
        .with_default(Some(("mock", "mock-model")));
    let text = view(&selector, 100);
    let rows: Vec<&str> = text.lines().filter(|l| l.contains('[')).collect();
    assert!(rows[0].starts_with("→ ✓ gpt-5 [openai]"), "{text}");
    assert!(
        rows[1].starts_with("    mock-model [mock] · default"),
        "{text}"
    );
    assert!(
        text.contains("Enter to select · Ctrl+S to set as default · Escape/Ctrl+C to cancel"),
        "{text}"
    );
    // Typing the start of "default" puts the default first.
    type_text(&mut selector, "def");
    assert_eq!(
        selector.selected_model().map(|m| m.id.as_str()),
        Some("mock-model")
    );
    assert_eq!(
        selector.handle_key(
            &KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL),
            &keys
        ),
        ModelSelectorOutcome::Selected {
            provider: "mock".into(),
            id: "mock-model".into(),
            save_default: true,
        }
    );
}

#[test]
fn a_name_is_shown_only_when_it_says_more_than_the_id() {
    assert_eq!(distinct_name("m-two", "Mock Two"), Some("Mock Two"));
    assert_eq!(
        distinct_name("claude-sonnet-4-5", "Claude Sonnet 4.5"),
        None
    );
    assert_eq!(distinct_name("gpt-4o-mini", "GPT-4o mini"), None);
    assert_eq!(distinct_name("x", ""), None);
}
