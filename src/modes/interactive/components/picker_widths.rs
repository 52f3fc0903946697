//! Property test: the pickers and info views never draw a line wider than the screen,
//! whatever text the sessions, models and names contain and however narrow it is.

use std::path::PathBuf;

use chrono::DateTime;
use proptest::prelude::*;

use super::hotkeys::HotkeysView;
use super::model_selector::ModelSelector;
use super::scoped_models_selector::ScopedModelsSelector;
use super::session_info::SessionInfoView;
use super::session_picker::{LoadEvent, SessionPicker};
use super::settings_selector::{SettingsSelector, SettingsValues};
use super::{Component, Ui};
use crate::ai::model::{Api, InputKind, Model, ModelCost};
use crate::core::agent_session::{SessionStats, TokenTotals};
use crate::core::settings::Settings;
use crate::modes::interactive::keys::Keybindings;
use crate::modes::interactive::test_support::theme;
use crate::modes::interactive::text::{line_text, line_width};
use crate::session::listing::SessionInfo;

fn unicode() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z]{1,12}",
        Just(" ".to_string()),
        Just("\n".to_string()),
        Just("\t".to_string()),
        Just("中文字符".to_string()),
        Just("🇺🇸🇯🇵".to_string()),
        Just("👨\u{200d}👩\u{200d}👧".to_string()),
        Just("\u{1b}[31m".to_string()),
        Just("\u{600}".to_string()),
        any::<char>().prop_map(|c| c.to_string()),
    ];
    prop::collection::vec(piece, 0..20).prop_map(|v| v.concat())
}

fn session(text: &str, i: usize) -> SessionInfo {
    let time =
        DateTime::from_timestamp_millis(1_795_000_000_000 + i as i64 * 60_000).unwrap_or_default();
    SessionInfo {
        path: PathBuf::from(format!("/home/u/.pi/agent/sessions/--p--/{text}{i}.jsonl")),
        id: format!("id-{i}").into(),
        cwd: format!("/home/u/{text}"),
        name: i.is_multiple_of(2).then(|| text.to_string()),
        parent_session_path: (i > 0)
            .then(|| format!("/home/u/.pi/agent/sessions/--p--/{text}{}.jsonl", i - 1)),
        created: time,
        modified: time,
        message_count: i * 7,
        first_message: text.to_string(),
    }
}

fn model(text: &str) -> Model {
    Model {
        id: text.to_string(),
        name: text.to_string(),
        api: Api::OpenAiCompletions,
        provider: text.to_string(),
        base_url: String::new(),
        reasoning: true,
        thinking_level_map: None,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost::default(),
        context_window: 200_000,
        max_tokens: 1000,
        headers: Default::default(),
        compat: None,
        extras: Default::default(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn pickers_never_draw_past_the_width(text in unicode(), width in 1usize..140, height in 0usize..30) {
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys).with_home(Some("/home/u"));
        let mut picker = SessionPicker::new().with_rename(true);
        picker.add_sessions((0..4).map(|i| session(&text, i)).collect(), true);
        picker.apply(LoadEvent::Finished);
        let mut searching = picker.clone();
        searching.paste(&text);
        let models = ModelSelector::new(vec![model(&text), model("plain")], Some((&text, &text)))
            .with_query(&text)
            .with_error(Some(text.clone()));
        let mut scoped = ScopedModelsSelector::new(
            vec![model(&text), model("plain")],
            Some(&[(text.clone(), text.clone())]),
        );
        scoped.paste(&text);
        let scoped_all = ScopedModelsSelector::new(vec![model(&text), model("plain")], None);
        let mut values = SettingsValues::from_settings(&Settings::in_memory(serde_json::json!({})));
        values.theme = text.clone();
        values.themes = vec![text.clone()];
        let settings = SettingsSelector::new(&values);
        let info = SessionInfoView {
            name: Some(text.clone()),
            stats: SessionStats {
                session_file: Some(text.clone()),
                session_id: text.clone(),
                user_messages: 1,
                assistant_messages: 1,
                tool_calls: 0,
                tool_results: 0,
                total_messages: 2,
                tokens: TokenTotals::default(),
                cost: 1.5,
                context_usage: None,
            },
        };
        let frames = [
            picker.render(width, height, &ui),
            searching.render(width, height, &ui),
            models.render(width, height, &ui),
            scoped.render(width, height, &ui),
            scoped_all.render(width, height, &ui),
            settings.render(width, height, &ui),
            info.render(width, &ui),
            HotkeysView::default().render(width, &ui),
        ];
        for line in frames.iter().flatten() {
            prop_assert!(line_width(line) <= width, "{:?} at {}", line_text(line), width);
        }
    }
}
