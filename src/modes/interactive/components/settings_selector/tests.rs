//! Settings list: values, every change and its key, filtering, the thinking and theme
//! lists, terminals without images, narrow screens.

use super::*;
use crate::core::settings::Settings;
use crate::modes::interactive::test_support::{plain, theme};
use pretty_assertions::assert_eq;
use serde_json::json;

fn values() -> SettingsValues {
    let mut values = SettingsValues::from_settings(&Settings::in_memory(json!({
        "compaction": {"enabled": false},
        "steeringMode": "all",
        "editorPaddingX": 1,
        "theme": "light",
    })));
    values.thinking_level = ThinkingLevel::Medium;
    values.thinking_levels = vec![
        ThinkingLevel::Off,
        ThinkingLevel::Low,
        ThinkingLevel::Medium,
        ThinkingLevel::High,
    ];
    values.themes = vec!["dark".into(), "light".into(), "solarized".into()];
    values
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn press(selector: &mut SettingsSelector, codes: &[KeyCode]) -> Vec<SettingsOutcome> {
    let keys = Keybindings::defaults();
    codes
        .iter()
        .map(|c| selector.handle_key(&key(*c), &keys))
        .collect()
}

fn view(selector: &SettingsSelector, width: usize, height: usize) -> String {
    let t = theme();
    let keys = Keybindings::defaults();
    plain(&selector.render(width, height, &Ui::new(&t, &keys)), width)
}

#[test]
fn the_list_shows_current_values_and_the_selected_description() {
    let selector = SettingsSelector::new(&values());
    insta::assert_snapshot!(view(&selector, 80, 0), @r"
        ────────────────────────────────────────────────────────────────────────────────
        >

        → Auto-compact            false
          Show images             true
          Image width             60
          Auto-resize images      true
          Block images            false
          Skill commands          true
          Show hardware cursor    false
          Editor padding          1
          Output padding          1
          Autocomplete max items  5
          (1/24)

          Summarize older messages automatically when the context window fills up

          Type to search · enter/space to change · escape/ctrl+c to cancel
        ────────────────────────────────────────────────────────────────────────────────
        ");
}

#[test]
fn every_change_names_its_settings_json_key_and_value() {
    let mut selector = SettingsSelector::new(&values());
    let mut changes = Vec::new();
    for id in SettingId::ALL {
        let Some(pos) = SettingId::ALL.iter().position(|s| *s == id) else {
            continue;
        };
        let mut s = selector.clone();
        for _ in 0..pos {
            press(&mut s, &[KeyCode::Down]);
        }
        assert_eq!(s.selected_setting(), Some(id));
        for outcome in press(&mut s, &[KeyCode::Char(' ')]) {
            if let SettingsOutcome::Changed {
                setting,
                key,
                value,
            } = outcome
            {
                changes.push(format!(
                    "{:<22} {:<28} {value}",
                    setting.label(),
                    key.join(".")
                ));
            }
        }
    }
    insta::assert_snapshot!(changes.join("\n"), @r#"
        Auto-compact           compaction.enabled           true
        Show images            terminal.showImages          false
        Image width            terminal.imageWidthCells     80
        Auto-resize images     images.autoResize            false
        Block images           images.blockImages           true
        Skill commands         enableSkillCommands          false
        Show hardware cursor   showHardwareCursor           true
        Editor padding         editorPaddingX               2
        Output padding         outputPad                    0
        Autocomplete max items autocompleteMaxVisible       7
        Clear on shrink        terminal.clearOnShrink       true
        Terminal progress      terminal.showTerminalProgress true
        Steering mode          steeringMode                 "one-at-a-time"
        Follow-up mode         followUpMode                 "all"
        Transport              transport                    "sse"
        Hide thinking          hideThinkingBlock            true
        Collapse changelog     collapseChangelog            true
        Quiet startup          quietStartup                 true
        Install telemetry      enableInstallTelemetry       false
        Double-escape action   doubleEscapeAction           "fork"
        Tree filter mode       treeFilterMode               "no-tools"
        "#);
    // Enter cycles too, and the list shows the new value.
    press(&mut selector, &[KeyCode::Enter]);
    assert_eq!(selector.value(SettingId::AutoCompact), Some("true"));
}

#[test]
fn typing_filters_by_name() {
    let mut selector = SettingsSelector::new(&values());
    press(
        &mut selector,
        &[KeyCode::Char('i'), KeyCode::Char('m'), KeyCode::Char('g')],
    );
    insta::assert_snapshot!(view(&selector, 70, 0), @r"
        ──────────────────────────────────────────────────────────────────────
        > img

        → Image width             60
          Show images             true
          Block images            false
          Auto-resize images      true

          How many terminal columns an inline image may take

          Type to search · enter/space to change · escape/ctrl+c to cancel
        ──────────────────────────────────────────────────────────────────────
        ");
    let t = theme();
    let keys = Keybindings::defaults();
    let ui = Ui::new(&t, &keys);
    assert_eq!(selector.render_with_cursor(70, 0, &ui).1, Some((5, 1)));
    press(&mut selector, &[KeyCode::Char('z'), KeyCode::Char('z')]);
    insta::assert_snapshot!(view(&selector, 70, 0), @r"
        ──────────────────────────────────────────────────────────────────────
        > imgzz

          No matching settings

          Type to search · enter/space to change · escape/ctrl+c to cancel
        ──────────────────────────────────────────────────────────────────────
        ");
}

#[test]
fn the_thinking_level_is_chosen_from_the_models_levels() {
    let mut selector = SettingsSelector::new(&values());
    let to_thinking = SettingId::ALL
        .iter()
        .position(|s| *s == SettingId::ThinkingLevel)
        .unwrap();
    for _ in 0..to_thinking {
        press(&mut selector, &[KeyCode::Down]);
    }
    press(&mut selector, &[KeyCode::Enter]);
    insta::assert_snapshot!(view(&selector, 70, 0), @r"
        ──────────────────────────────────────────────────────────────────────
        Thinking Level

        How much a reasoning model thinks before it answers

          off         No reasoning
          low         Light reasoning (about 2k tokens)
        → medium      Moderate reasoning (about 8k tokens)
          high        Deep reasoning (about 16k tokens)

          enter to select · escape/ctrl+c to go back
        ──────────────────────────────────────────────────────────────────────
        ");
    let outcome = press(&mut selector, &[KeyCode::Down, KeyCode::Enter]);
    assert_eq!(
        outcome[1],
        SettingsOutcome::Changed {
            setting: SettingId::ThinkingLevel,
            key: &["defaultThinkingLevel"],
            value: json!("high")
        }
    );
    assert_eq!(selector.value(SettingId::ThinkingLevel), Some("high"));
    assert_eq!(selector.selected_setting(), Some(SettingId::ThinkingLevel));
}

#[test]
fn moving_through_themes_previews_them_and_escape_restores_the_original() {
    let mut selector = SettingsSelector::new(&values());
    press(&mut selector, &[KeyCode::Up, KeyCode::Enter]);
    insta::assert_snapshot!(view(&selector, 60, 0), @r"
        ────────────────────────────────────────────────────────────
        Theme

        Choose a colour theme (it shows as you move)

          dark
        → light
          solarized

          enter to select · escape/ctrl+c to go back
        ────────────────────────────────────────────────────────────
        ");
    assert_eq!(
        press(&mut selector, &[KeyCode::Down, KeyCode::Up, KeyCode::Esc]),
        [
            SettingsOutcome::PreviewTheme("solarized".into()),
            SettingsOutcome::PreviewTheme("light".into()),
            SettingsOutcome::PreviewTheme("light".into()),
        ]
    );
    assert_eq!(selector.value(SettingId::Theme), Some("light"));
    let outcome = press(
        &mut selector,
        &[KeyCode::Enter, KeyCode::Up, KeyCode::Enter],
    );
    assert_eq!(
        outcome[2],
        SettingsOutcome::Changed {
            setting: SettingId::Theme,
            key: &["theme"],
            value: json!("dark")
        }
    );
    assert_eq!(
        press(&mut selector, &[KeyCode::Esc]),
        [SettingsOutcome::Cancelled]
    );
}

#[test]
fn terminals_without_images_do_not_offer_show_images_and_narrow_widths_fit() {
    let mut v = values();
    v.show_images = None;
    v.image_width = None;
    let selector = SettingsSelector::new(&v);
    assert_eq!(selector.value(SettingId::ShowImages), None);
    assert_eq!(selector.value(SettingId::ImageWidth), None);
    // Ten settings whatever the height, as pi (a taller dialog pushes the chat up).
    insta::assert_snapshot!(view(&selector, 30, 14), @r"
        ──────────────────────────────
        >

        → Auto-compact            fa
          Auto-resize images      tr
          Block images            fa
          Skill commands          tr
          Show hardware cursor    fa
          Editor padding          1
          Output padding          1
          Autocomplete max items  5
          Clear on shrink         fa
          Terminal progress       fa
          (1/22)

          Summarize older messages
          automatically when the
          context window fills up

          Type to search · enter/spac…
        ──────────────────────────────
        ");
    for width in 1..90 {
        for height in [0, 5, 30] {
            view(&selector, width, height);
        }
    }
}

#[test]
fn warnings_open_pis_submenu_whose_switch_saves_under_warnings() {
    let mut selector = SettingsSelector::new(&values());
    let pos = SettingId::ALL
        .iter()
        .position(|s| *s == SettingId::Warnings)
        .unwrap_or(0);
    for _ in 0..pos {
        press(&mut selector, &[KeyCode::Down]);
    }
    assert_eq!(selector.value(SettingId::Warnings), Some("configure"));
    assert_eq!(
        press(&mut selector, &[KeyCode::Enter]),
        vec![SettingsOutcome::Handled]
    );
    insta::assert_snapshot!(view(&selector, 80, 0), @r"
    ────────────────────────────────────────────────────────────────────────────────
    → Anthropic extra usage  true

      Warn when an Anthropic subscription login may be billed as paid extra usage

      enter/space to change · escape/ctrl+c to cancel
    ────────────────────────────────────────────────────────────────────────────────
    ");
    let outcomes = press(&mut selector, &[KeyCode::Char(' ')]);
    assert_eq!(
        outcomes,
        vec![SettingsOutcome::Changed {
            setting: SettingId::AnthropicExtraUsage,
            key: &["warnings", "anthropicExtraUsage"],
            value: serde_json::Value::Bool(false),
        }]
    );
    assert_eq!(
        selector.value(SettingId::AnthropicExtraUsage),
        Some("false")
    );
    // Escape goes back to the main list, not out of /settings.
    assert_eq!(
        press(&mut selector, &[KeyCode::Esc]),
        vec![SettingsOutcome::Handled]
    );
    assert_eq!(selector.selected_setting(), Some(SettingId::Warnings));
    assert_eq!(
        press(&mut selector, &[KeyCode::Esc]),
        vec![SettingsOutcome::Cancelled]
    );
}
