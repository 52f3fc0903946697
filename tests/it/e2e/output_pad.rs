//! `outputPad`: the transcript's left and right padding, 0 or 1 column, beside pi 1.6.

use serde_json::json;

use super::env::{Env, WAIT, editor_ready, submit};
use crate::support::reference_pi;
use crate::support::tmux::{self, Tmux};

const QUESTION: &str = "where does padding start";
const ANSWER: &str = "Padding answer line.";

/// A project whose model answers every request with [`ANSWER`], with `outputPad` set to
/// `pad` in the user settings (`None`: left out, pi's default).
fn env_with(pad: Option<u8>) -> Env {
    let answers: Vec<_> = (0..4).map(|_| json!({"text": ANSWER})).collect();
    let env = Env::new(json!({ "sequence": answers }));
    let mut settings = json!({"quietStartup": true, "lastChangelogVersion": "1.6.0"});
    if let Some(pad) = pad {
        settings["outputPad"] = json!(pad);
    }
    std::fs::write(env.agent_dir().join("settings.json"), settings.to_string()).unwrap();
    env
}

/// Asks [`QUESTION`], waits for [`ANSWER`] and returns the columns the question and the
/// answer start in.
fn columns_of_one_turn(t: &Tmux) -> (usize, usize) {
    t.wait_until("the editor", WAIT, editor_ready);
    submit(t, QUESTION);
    let screen = t.wait_for(ANSWER, WAIT);
    let column = |text: &str| {
        screen
            .lines()
            // The editor holds nothing after the submit, so the question is the message.
            .find_map(|row| row.find(text))
            .unwrap_or_else(|| panic!("no {text:?} on the screen:\n{screen}"))
    };
    (column(QUESTION), column(ANSWER))
}

fn check(pad: Option<u8>, expected: usize) {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
        return;
    }
    let env = env_with(pad);
    let ours = columns_of_one_turn(&env.start("", 80, 24));
    assert_eq!(ours, (expected, expected), "pi-rs with outputPad {pad:?}");
    let Some(theirs) =
        super::beside_pi::start_reference_version(&env, reference_pi::VERSION, "", &[], 80, 24)
    else {
        return;
    };
    assert_eq!(
        columns_of_one_turn(&theirs),
        ours,
        "pi 1.6 with outputPad {pad:?}"
    );
}

/// `outputPad: 0`: the user message and the answer start in the first column, as in pi 1.6.
#[test]
fn output_pad_0_starts_messages_in_column_0() {
    check(Some(0), 0);
}

/// Unset (pi's default 1): one column of padding before them, as in pi 1.6.
#[test]
fn default_output_pad_starts_messages_in_column_1() {
    check(None, 1);
}

/// `/settings` → Output padding takes effect at once, for the transcript already shown
/// too (pi sets it on every component of the chat), and is saved.
#[test]
fn output_padding_changed_in_settings_redraws_the_transcript() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
        return;
    }
    let env = env_with(None);
    let t = env.start("", 80, 24);
    assert_eq!(columns_of_one_turn(&t), (1, 1));
    submit(&t, "/settings");
    t.wait_for("Type to search", WAIT);
    // No space: in this list it changes the selected value.
    t.type_text("Outputpad");
    t.wait_for("→ Output padding", WAIT);
    t.keys(&["Enter"]);
    t.wait_until("Output padding 0", WAIT, |s| {
        s.lines()
            .any(|l| l.contains("Output padding") && l.trim_end().ends_with(" 0"))
    });
    t.keys(&["Escape"]);
    let screen = t.wait_until("the settings to close", WAIT, |s| {
        !s.contains("Type to search")
    });
    let starts = |text: &str| screen.lines().find_map(|row| row.find(text));
    assert_eq!(
        (starts(QUESTION), starts(ANSWER)),
        (Some(0), Some(0)),
        "{screen}"
    );
    let saved = std::fs::read_to_string(env.agent_dir().join("settings.json")).unwrap();
    assert!(saved.contains("\"outputPad\": 0"), "{saved}");
}
