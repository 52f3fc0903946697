//! Scoped models picker: toggling, all/clear/provider keys, reordering, search, saving,
//! scrolling and narrow screens.

use super::*;
use crate::ai::model::{Api, InputKind, ModelCost};
use crate::modes::interactive::test_support::{plain, theme};
use pretty_assertions::assert_eq;

fn model(provider: &str, id: &str, name: &str) -> Model {
    Model {
        id: id.into(),
        name: name.into(),
        api: Api::OpenAiCompletions,
        provider: provider.into(),
        base_url: "http://localhost".into(),
        reasoning: false,
        thinking_level_map: None,
        input: vec![InputKind::Text],
        cost: ModelCost::default(),
        context_window: 128_000,
        max_tokens: 8192,
        headers: Default::default(),
        compat: None,
        extras: Default::default(),
    }
}

fn models() -> Vec<Model> {
    vec![
        model("anthropic", "claude-sonnet-4-5", "Claude Sonnet 4.5"),
        model("anthropic", "claude-haiku-4-5", "Claude Haiku 4.5"),
        model("openai", "gpt-5", "GPT-5"),
        model("openai", "gpt-4o-mini", "GPT-4o mini"),
        model("mock", "mock-model", "Mock"),
    ]
}

fn r(provider: &str, id: &str) -> ModelRef {
    (provider.to_string(), id.to_string())
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn alt(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::ALT)
}

fn press(selector: &mut ScopedModelsSelector, key: KeyEvent) -> ScopedModelsOutcome {
    selector.handle_key(&key, &Keybindings::defaults())
}

fn type_text(selector: &mut ScopedModelsSelector, text: &str) {
    for c in text.chars() {
        press(selector, key(KeyCode::Char(c)));
    }
}

fn view(selector: &ScopedModelsSelector, width: usize) -> String {
    let t = theme();
    let keys = Keybindings::defaults();
    plain(&selector.render(width, 0, &Ui::new(&t, &keys)), width)
}

/// Only the model rows (the lines starting with the cursor column).
fn rows(selector: &ScopedModelsSelector) -> String {
    view(selector, 100)
        .lines()
        .filter(|l| l.starts_with("→ ") || (l.starts_with("  ") && l.contains(" [")))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn opens_with_every_model_enabled_and_no_marks() {
    let selector = ScopedModelsSelector::new(models(), None);
    insta::assert_snapshot!(view(&selector, 100), @r"
    ────────────────────────────────────────────────────────────────────────────────────────────────────

    Model Configuration
    Session-only. ctrl+s to save to settings.

    >

    → claude-sonnet-4-5 [anthropic]
      claude-haiku-4-5 [anthropic]
      gpt-5 [openai]
      gpt-4o-mini [openai]
      mock-model [mock]

      Model Name: Claude Sonnet 4.5

      enter toggle · ctrl+a all · ctrl+x clear · ctrl+p provider · alt+up/alt+down reorder · ctrl+s save
    · all enabled
    ────────────────────────────────────────────────────────────────────────────────────────────────────
    ");
    assert_eq!(selector.enabled_models().len(), 5);
    assert!(!selector.is_unsaved());
}

#[test]
fn the_first_toggle_keeps_only_that_model_and_later_ones_add_in_order() {
    let mut selector = ScopedModelsSelector::new(models(), None);
    press(&mut selector, key(KeyCode::Down));
    press(&mut selector, key(KeyCode::Down));
    assert_eq!(
        press(&mut selector, key(KeyCode::Enter)),
        ScopedModelsOutcome::Changed(vec![r("openai", "gpt-5")])
    );
    // The enabled model moved to the top; the cursor stays on the third row.
    press(&mut selector, key(KeyCode::Down));
    assert_eq!(
        press(&mut selector, key(KeyCode::Enter)),
        ScopedModelsOutcome::Changed(vec![r("openai", "gpt-5"), r("openai", "gpt-4o-mini")])
    );
    insta::assert_snapshot!(view(&selector, 110), @r"
    ──────────────────────────────────────────────────────────────────────────────────────────────────────────────

    Model Configuration
    Session-only. ctrl+s to save to settings.

    >

      gpt-5 [openai] ✓
      gpt-4o-mini [openai] ✓
      claude-sonnet-4-5 [anthropic] ✗
    → claude-haiku-4-5 [anthropic] ✗
      mock-model [mock] ✗

      Model Name: Claude Haiku 4.5

      enter toggle · ctrl+a all · ctrl+x clear · ctrl+p provider · alt+up/alt+down reorder · ctrl+s save · 2/5
    enabled (unsaved)
    ──────────────────────────────────────────────────────────────────────────────────────────────────────────────
    ");
    // Toggling an enabled model takes it out again.
    press(&mut selector, key(KeyCode::Up));
    press(&mut selector, key(KeyCode::Up));
    press(&mut selector, key(KeyCode::Up));
    assert_eq!(
        press(&mut selector, key(KeyCode::Enter)),
        ScopedModelsOutcome::Changed(vec![r("openai", "gpt-4o-mini")])
    );
}

#[test]
fn saving_reports_the_enabled_models_and_clears_the_unsaved_mark() {
    let mut selector = ScopedModelsSelector::new(
        models(),
        Some(&[r("mock", "mock-model"), r("openai", "gpt-5")]),
    );
    assert!(view(&selector, 200).contains("2/5 enabled\n"));
    press(&mut selector, key(KeyCode::Down));
    press(&mut selector, key(KeyCode::Enter));
    assert!(selector.is_unsaved());
    assert!(view(&selector, 200).contains("1/5 enabled (unsaved)"));
    assert_eq!(
        press(&mut selector, ctrl('s')),
        ScopedModelsOutcome::Saved(vec![r("mock", "mock-model")])
    );
    assert!(!selector.is_unsaved());
    assert!(view(&selector, 200).contains("1/5 enabled\n"));
}

#[test]
fn all_and_clear_act_on_the_search_results_while_searching() {
    let mut selector = ScopedModelsSelector::new(models(), None);
    type_text(&mut selector, "gpt");
    // Clear with a search: everything but the listed models stays enabled.
    assert_eq!(
        press(&mut selector, ctrl('x')),
        ScopedModelsOutcome::Changed(vec![
            r("anthropic", "claude-sonnet-4-5"),
            r("anthropic", "claude-haiku-4-5"),
            r("mock", "mock-model"),
        ])
    );
    insta::assert_snapshot!(rows(&selector), @r"
    → gpt-5 [openai] ✗
      gpt-4o-mini [openai] ✗
    ");
    // All with a search: the listed models are added (and now every model is enabled,
    // which is "all" again: no marks).
    let every: Vec<ModelRef> = models()
        .iter()
        .map(|m| (m.provider.clone(), m.id.clone()))
        .collect();
    assert_eq!(
        press(&mut selector, ctrl('a')),
        ScopedModelsOutcome::Changed(every.clone())
    );
    assert_eq!(selector.enabled_models().len(), 5);
    insta::assert_snapshot!(rows(&selector), @r"
    → gpt-5 [openai]
      gpt-4o-mini [openai]
    ");
    // Without a search, clear empties the list and all brings every model back.
    press(&mut selector, ctrl('u'));
    assert_eq!(
        press(&mut selector, ctrl('x')),
        ScopedModelsOutcome::Changed(vec![])
    );
    assert!(view(&selector, 200).contains("0/5 enabled (unsaved)"));
    assert_eq!(
        press(&mut selector, ctrl('a')),
        ScopedModelsOutcome::Changed(every)
    );
    assert!(view(&selector, 200).contains("· all enabled (unsaved)"));
}

#[test]
fn the_provider_key_toggles_every_model_of_the_highlighted_provider() {
    let mut selector = ScopedModelsSelector::new(models(), Some(&[r("mock", "mock-model")]));
    // Rows: mock-model ✓, then the others in registry order; go to gpt-5.
    press(&mut selector, key(KeyCode::Down));
    press(&mut selector, key(KeyCode::Down));
    press(&mut selector, key(KeyCode::Down));
    assert_eq!(
        press(&mut selector, ctrl('p')),
        ScopedModelsOutcome::Changed(vec![
            r("mock", "mock-model"),
            r("openai", "gpt-5"),
            r("openai", "gpt-4o-mini"),
        ])
    );
    // The enabled models move up; the cursor keeps its row, as in pi.
    insta::assert_snapshot!(rows(&selector), @r"
      mock-model [mock] ✓
      gpt-5 [openai] ✓
      gpt-4o-mini [openai] ✓
    → claude-sonnet-4-5 [anthropic] ✗
      claude-haiku-4-5 [anthropic] ✗
    ");
    // Every openai model is enabled, so the same key takes them all out.
    press(&mut selector, key(KeyCode::Up));
    assert_eq!(
        press(&mut selector, ctrl('p')),
        ScopedModelsOutcome::Changed(vec![r("mock", "mock-model")])
    );
}

#[test]
fn reordering_moves_an_enabled_model_and_the_cursor_follows_it() {
    let mut selector = ScopedModelsSelector::new(
        models(),
        Some(&[
            r("openai", "gpt-5"),
            r("mock", "mock-model"),
            r("anthropic", "claude-haiku-4-5"),
        ]),
    );
    press(&mut selector, key(KeyCode::Down));
    assert_eq!(
        press(&mut selector, alt(KeyCode::Up)),
        ScopedModelsOutcome::Changed(vec![
            r("mock", "mock-model"),
            r("openai", "gpt-5"),
            r("anthropic", "claude-haiku-4-5"),
        ])
    );
    // Already first: nothing moves.
    assert_eq!(
        press(&mut selector, alt(KeyCode::Up)),
        ScopedModelsOutcome::Handled
    );
    assert_eq!(
        press(&mut selector, alt(KeyCode::Down)),
        ScopedModelsOutcome::Changed(vec![
            r("openai", "gpt-5"),
            r("mock", "mock-model"),
            r("anthropic", "claude-haiku-4-5"),
        ])
    );
    insta::assert_snapshot!(rows(&selector), @r"
      gpt-5 [openai] ✓
    → mock-model [mock] ✓
      claude-haiku-4-5 [anthropic] ✓
      claude-sonnet-4-5 [anthropic] ✗
      gpt-4o-mini [openai] ✗
    ");
    // Disabled models and the "all" state have no order to change.
    press(&mut selector, key(KeyCode::Down));
    press(&mut selector, key(KeyCode::Down));
    assert_eq!(
        press(&mut selector, alt(KeyCode::Up)),
        ScopedModelsOutcome::Handled
    );
    let mut all = ScopedModelsSelector::new(models(), None);
    assert_eq!(
        press(&mut all, alt(KeyCode::Down)),
        ScopedModelsOutcome::Handled
    );
    assert_eq!(
        all.enabled_models(),
        ScopedModelsSelector::new(models(), None).enabled_models()
    );
}

#[test]
fn space_toggles_on_an_empty_search_and_separates_words_inside_one() {
    let mut selector = ScopedModelsSelector::new(models(), None);
    assert_eq!(
        press(&mut selector, key(KeyCode::Char(' '))),
        ScopedModelsOutcome::Changed(vec![r("anthropic", "claude-sonnet-4-5")])
    );
    type_text(&mut selector, "mini openai");
    insta::assert_snapshot!(rows(&selector), @"→ gpt-4o-mini [openai] ✗");
    assert_eq!(
        press(&mut selector, key(KeyCode::Enter)),
        ScopedModelsOutcome::Changed(vec![
            r("anthropic", "claude-sonnet-4-5"),
            r("openai", "gpt-4o-mini"),
        ])
    );
    type_text(&mut selector, "zzz");
    insta::assert_snapshot!(view(&selector, 60).lines().nth(7).unwrap(), @"  No matching models");
    assert_eq!(
        press(&mut selector, key(KeyCode::Enter)),
        ScopedModelsOutcome::Handled
    );
    assert_eq!(
        press(&mut selector, ctrl('p')),
        ScopedModelsOutcome::Handled
    );
}

#[test]
fn ctrl_c_empties_the_search_before_closing_and_escape_closes_at_once() {
    let mut selector = ScopedModelsSelector::new(models(), None);
    type_text(&mut selector, "gpt");
    assert_eq!(
        press(&mut selector, ctrl('c')),
        ScopedModelsOutcome::Handled
    );
    assert_eq!(rows(&selector).lines().count(), 5);
    assert_eq!(
        press(&mut selector, ctrl('c')),
        ScopedModelsOutcome::Cancelled
    );
    type_text(&mut selector, "gpt");
    assert_eq!(
        press(&mut selector, key(KeyCode::Esc)),
        ScopedModelsOutcome::Cancelled
    );
    // Pasting searches too.
    let mut pasted = ScopedModelsSelector::new(models(), None);
    pasted.paste("haiku");
    insta::assert_snapshot!(rows(&pasted), @"→ claude-haiku-4-5 [anthropic]");
}

#[test]
fn unknown_and_repeated_models_are_dropped_when_opening() {
    let mut list = models();
    list.push(model("openai", "gpt-5", "GPT-5 again"));
    let selector = ScopedModelsSelector::new(
        list,
        Some(&[
            r("gone", "old-model"),
            r("openai", "gpt-5"),
            r("openai", "gpt-5"),
        ]),
    );
    assert_eq!(selector.model_count(), 5);
    assert_eq!(selector.enabled_models(), vec![r("openai", "gpt-5")]);
}

#[test]
fn long_lists_scroll_and_narrow_screens_wrap_the_hints() {
    let many: Vec<Model> = (0..12)
        .map(|i| model("p", &format!("model-{i:02}"), &format!("Model {i}")))
        .collect();
    let mut selector = ScopedModelsSelector::new(many, None);
    for _ in 0..9 {
        press(&mut selector, key(KeyCode::Down));
    }
    insta::assert_snapshot!(view(&selector, 40), @r"
    ────────────────────────────────────────

    Model Configuration
    Session-only. ctrl+s to save to
    settings.

    >

      model-04 [p]
      model-05 [p]
      model-06 [p]
      model-07 [p]
      model-08 [p]
    → model-09 [p]
      model-10 [p]
      model-11 [p]
      (10/12)

      Model Name: Model 9

      enter toggle · ctrl+a all · ctrl+x
    clear · ctrl+p provider ·
    alt+up/alt+down reorder · ctrl+s save ·
    all enabled
    ────────────────────────────────────────
    ");
    // A short terminal shows fewer rows, never none.
    let t = theme();
    let keys = Keybindings::defaults();
    let ui = Ui::new(&t, &keys);
    let short = selector.render(100, 16, &ui);
    let rows = plain(&short, 100)
        .lines()
        .filter(|l| l.contains(" [p]"))
        .count();
    assert_eq!(rows, 2);
    assert_eq!(
        plain(&selector.render(100, 3, &ui), 100)
            .lines()
            .filter(|l| l.contains(" [p]"))
            .count(),
        1
    );
    for width in 1..90 {
        for height in [0, 5, 20] {
            plain(&selector.render(width, height, &ui), width);
        }
    }
    let cursor = selector.render_with_cursor(80, 0, &ui).1;
    assert_eq!(cursor, Some((2, 5)), "in the search box, for input methods");
}
