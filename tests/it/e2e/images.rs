//! Inline images and the terminal cursor, by the bytes written: pi-rs and the reference
//! pi read the same PNG in a terminal that says it is kitty (`KITTY_WINDOW_ID`, outside
//! tmux as far as the programs can tell: `TMUX` empty, `TERM=xterm-256color`). tmux does
//! not show Kitty graphics, so what is compared is the escape sequences each program
//! wrote, recorded with `pipe-pane` and with `PI_TUI_WRITE_LOG`.

use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::json;

use super::beside_pi::start_reference_with;
use super::env::{Env, WAIT, editor_ready, submit};
use crate::support::tmux::{self, Tmux};

/// A 40×20 RGB PNG (what the read tool sends on unchanged: small enough).
fn png_40x20() -> Vec<u8> {
    let mut png = Vec::new();
    image::RgbImage::from_fn(40, 20, |x, y| {
        image::Rgb([(x * 6) as u8, (y * 12) as u8, 128])
    })
    .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
    .unwrap();
    png
}

/// A project whose model reads `pic.png`, answers "done", then a long answer (to push the
/// image into the scrollback); models.json says the model takes images.
fn image_env() -> Env {
    let long: String = (1..=60).map(|i| format!("line {i}\n\n")).collect();
    let env = Env::new(json!({"sequence": [
        {"tool_calls": [{"name": "read", "arguments": {"path": "pic.png"}}]},
        {"text": "done"},
        {"text": long},
    ]}));
    let models = json!({"providers": {"mock": {
        "baseUrl": format!("{}/v1", env.server.url()), "api": "openai-completions",
        "apiKey": "mock",
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [{"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000,
                    "input": ["text", "image"]}]
    }}});
    std::fs::write(env.agent_dir().join("models.json"), models.to_string()).unwrap();
    std::fs::write(
        env.agent_dir().join("settings.json"),
        r#"{"quietStartup": true, "lastChangelogVersion": "0.73.1"}"#,
    )
    .unwrap();
    std::fs::write(env.cwd().join("pic.png"), png_40x20()).unwrap();
    env
}

/// What a kitty terminal looks like from inside (tmux's own variables hidden).
fn kitty_vars(log: &Path) -> Vec<(&'static str, String)> {
    vec![
        ("TMUX", String::new()),
        ("TERM", "xterm-256color".into()),
        ("KITTY_WINDOW_ID", "1".into()),
        ("PI_TUI_WRITE_LOG", log.display().to_string()),
    ]
}

fn wait_file_contains(path: &Path, needle: &str) -> String {
    let start = Instant::now();
    loop {
        let text = String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned();
        if text.contains(needle) || start.elapsed() > WAIT {
            return text;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The Kitty commands in a stream, with the random image id replaced by `ID`, each with
/// the cursor moves around it.
fn kitty_commands(stream: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = stream;
    while let Some(at) = rest.find("\x1b_Ga=T") {
        // The cursor-up before it (`ESC [ n A`), if any.
        let head = &rest[..at];
        let up = head
            .rfind("\x1b[")
            .filter(|&i| {
                head.ends_with('A')
                    && head[i + 2..head.len() - 1]
                        .bytes()
                        .all(|b| b.is_ascii_digit())
            })
            .map_or("", |i| &head[i..]);
        // Up to the end of the single command, or of the last chunk (`m=0`).
        let mut end = at + rest[at..].find("\x1b\\").map_or(rest.len() - at, |i| i + 2);
        if rest[at..end].contains(",m=1;")
            && let Some(last) = rest[at..].find("\x1b_Gm=0;")
        {
            end = at + last;
            end += rest[end..]
                .find("\x1b\\")
                .map_or(rest.len() - end, |i| i + 2);
        }
        let after = &rest[end..];
        let down = match after.strip_prefix("\x1b[") {
            Some(moved) => {
                let n = moved.bytes().take_while(u8::is_ascii_digit).count();
                if moved[n..].starts_with('B') {
                    &after[..3 + n]
                } else {
                    ""
                }
            }
            None => "",
        };
        let command = &rest[at..end];
        let id_at = command.find(",i=").map(|i| i + 3);
        let normalized = match id_at {
            Some(i) => {
                let digits = command[i..].bytes().take_while(u8::is_ascii_digit).count();
                format!("{}ID{}", &command[..i], &command[i + digits..])
            }
            None => command.to_string(),
        };
        out.push(format!("{up}{normalized}{down}"));
        rest = &rest[end..];
    }
    out
}

fn run_read(t: &Tmux) {
    t.wait_until("the editor", WAIT, editor_ready);
    submit(t, "read pic.png");
    t.wait_for("done", WAIT);
}

#[test]
fn a_read_png_is_written_once_as_pi_writes_it_and_stays_through_scrolling() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let png = png_40x20();
    let data = base64::engine::general_purpose::STANDARD.encode(&png);
    for (width, height) in [(80u16, 24u16), (120, 40), (40, 24)] {
        let env = image_env();
        let log = env.dir.path().join("write.log");
        let piped = env.dir.path().join("piped.bin");
        let vars = kitty_vars(&log);
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let t = env.start_with_env("", width, height, &vars);
        t.record(&piped);
        run_read(&t);
        let logged = wait_file_contains(&log, "done");
        let commands = kitty_commands(&logged);
        // pi's size: 60 columns (at most the width less 2), rows for 9x18-pixel cells.
        let columns = 60.min(width as usize - 2);
        let rows = (20.0 * (columns as f64 * 9.0 / 40.0) / 18.0).ceil() as usize;
        let expected = format!(
            "\x1b[{up}A\x1b_Ga=T,f=100,q=2,C=1,c={columns},r={rows},i=ID;{data}\x1b\\\x1b[{up}B",
            up = rows - 1
        );
        assert_eq!(commands, vec![expected.clone()], "{width}x{height}");
        // The screen scrolls the image into the scrollback: it is not written again.
        submit(&t, "more");
        t.wait_for("line 60", WAIT);
        std::thread::sleep(Duration::from_millis(300));
        let logged = String::from_utf8_lossy(&std::fs::read(&log).unwrap()).into_owned();
        assert_eq!(
            kitty_commands(&logged),
            vec![expected.clone()],
            "{width}x{height}"
        );
        // The terminal got the same bytes the log has (pipe-pane starts a little late,
        // so it is compared from the image on).
        let stream = String::from_utf8_lossy(&std::fs::read(&piped).unwrap()).into_owned();
        assert_eq!(kitty_commands(&stream), vec![expected.clone()]);
        // A narrower terminal: deleted, and drawn again at the new width (as pi does).
        t.resize(width - 10, height);
        let narrow = 60.min(width as usize - 12);
        let narrow_rows = (20.0 * (narrow as f64 * 9.0 / 40.0) / 18.0).ceil() as usize;
        // At 70 columns the image keeps its 60 columns, so the new command can look like
        // the old one: wait for the second command, not for a size.
        let start = Instant::now();
        let resized = loop {
            let text =
                String::from_utf8_lossy(&std::fs::read(&log).unwrap_or_default()).into_owned();
            if kitty_commands(&text).len() >= 2 || start.elapsed() > WAIT {
                break text;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(
            resized.contains("\x1b_Ga=d,d=I,"),
            "the old placement is deleted"
        );
        let commands = kitty_commands(&resized);
        assert_eq!(commands.len(), 2, "{width}x{height}");
        assert!(
            commands[1].contains(&format!("c={narrow},r={narrow_rows},")),
            "{width}x{height}: {}",
            &commands[1][..commands[1].len().min(80)]
        );
        t.resize(width, height);
        t.wait_until("the old width", WAIT, |s| {
            s.lines().any(|l| l.chars().count() == width as usize)
        });
        // Its rows are still there above the answer, in the scrollback.
        let history = t.history();
        let before = history.find("Read image file").unwrap();
        let after = history.find("line 1\n").unwrap();
        let blank = history[before..after]
            .lines()
            .filter(|l| l.trim().is_empty())
            .count();
        assert!(
            blank > rows,
            "{blank} blank rows for a {rows}-row image:\n{history}"
        );

        // The reference pi writes the same command for the same image and size.
        let reference_env = image_env();
        let reference_log = reference_env.dir.path().join("write.log");
        let vars = kitty_vars(&reference_log);
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let Some(reference) = start_reference_with(&reference_env, "", &vars, width, height) else {
            continue;
        };
        run_read(&reference);
        let logged = wait_file_contains(&reference_log, "done");
        assert_eq!(
            kitty_commands(&logged),
            vec![expected],
            "reference pi, {width}x{height}"
        );
    }
}

#[test]
fn without_an_image_terminal_the_note_is_shown_and_nothing_is_sent() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let env = image_env();
    let log = env.dir.path().join("logs");
    std::fs::create_dir_all(&log).unwrap();
    // Inside tmux (pi and pi-rs never draw images there), logging into a directory.
    let t = env.start_with_env(
        "",
        80,
        24,
        &[
            ("KITTY_WINDOW_ID", "1"),
            ("PI_TUI_WRITE_LOG", log.to_str().unwrap()),
        ],
    );
    run_read(&t);
    let screen = t.wait_for("[Image: [image/png] 40x20]", WAIT);
    assert!(screen.contains("Read image file [image/png]"), "{screen}");
    // pi's log name: tui-<date>_<time>-<pid>.log in the directory.
    let files: Vec<_> = std::fs::read_dir(&log).unwrap().flatten().collect();
    assert_eq!(files.len(), 1);
    let name = files[0].file_name().to_string_lossy().into_owned();
    assert!(name.starts_with("tui-") && name.ends_with(".log"), "{name}");
    let logged = wait_file_contains(&files[0].path(), "40x20");
    assert!(logged.contains("[Image: [image/png] 40x20]"));
    assert!(!logged.contains("\x1b_G"), "no Kitty commands inside tmux");
    assert!(!logged.contains("\x1b[16t"), "no cell size query either");
}

#[test]
fn the_cursor_is_hidden_in_settings_and_shown_in_the_model_search_as_in_pi() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let settings =
        r#"{"quietStartup": true, "showHardwareCursor": true, "lastChangelogVersion": "0.73.1"}"#;
    let env = Env::new(json!({"sequence": []}));
    std::fs::write(env.agent_dir().join("settings.json"), settings).unwrap();
    let t = env.start("", 80, 24);
    t.wait_until("the editor", WAIT, editor_ready);
    t.type_text("héllo 日本");
    t.wait_for("héllo 日本", WAIT);
    let (x, _, shown) = t.cursor();
    assert_eq!((x, shown), (10, true), "after the typed text, shown");
    t.keys(&["C-u"]);
    submit(&t, "/settings");
    t.wait_for("Type to search", WAIT);
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !t.cursor().2,
        "pi's settings list has no focused input: no cursor"
    );
    t.keys(&["Escape"]);
    t.wait_until("the settings to close", WAIT, |s| {
        !s.contains("Type to search")
    });
    submit(&t, "/model");
    let screen = t.wait_until("the model search", WAIT, |s| {
        s.lines().any(|l| l.starts_with('>'))
    });
    std::thread::sleep(Duration::from_millis(200));
    let (x, y, shown) = t.cursor();
    let row = screen.lines().position(|l| l.starts_with('>')).unwrap();
    assert_eq!(
        (x, y as usize, shown),
        (2, row, true),
        "in the search input:\n{screen}"
    );

    // The reference pi: the same (its screen has two more rows on top when fd and rg
    // are missing, so rows are compared relative to the search line).
    let reference_env = Env::new(json!({"sequence": []}));
    std::fs::write(reference_env.agent_dir().join("settings.json"), settings).unwrap();
    let Some(reference) = start_reference_with(&reference_env, "", &[], 80, 24) else {
        return;
    };
    reference.wait_until("the editor", WAIT, editor_ready);
    submit(&reference, "/settings");
    reference.wait_for("Type to search", WAIT);
    std::thread::sleep(Duration::from_millis(300));
    assert!(!reference.cursor().2);
    reference.keys(&["Escape"]);
    reference.wait_until("the settings to close", WAIT, |s| {
        !s.contains("Type to search")
    });
    submit(&reference, "/model");
    let screen = reference.wait_until("the model search", WAIT, |s| {
        s.lines().any(|l| l.starts_with('>'))
    });
    std::thread::sleep(Duration::from_millis(300));
    let (x, y, shown) = reference.cursor();
    let row = screen.lines().position(|l| l.starts_with('>')).unwrap();
    assert_eq!(
        (x, y as usize, shown),
        (2, row, true),
        "reference:\n{screen}"
    );
}

/// An extension's component with pi-tui's `Image` and a focused `Input`, shown in place
/// of the editor (`ctx.ui.custom`).
const PICTURE_EXTENSION: &str = r#"
import { readFileSync } from "node:fs";
import { Image, Input } from "@mariozechner/pi-tui";

export default function (pi: any) {
  pi.registerCommand("pic", {
    description: "a picture and an input",
    handler: async (_args: string, ctx: any) => {
      const data = readFileSync("pic.png").toString("base64");
      await ctx.ui.custom((_tui: any, _theme: any, _kb: any, done: (v: unknown) => void) => {
        const image = new Image(data, "image/png", { fallbackColor: (s: string) => s }, { maxWidthCells: 20 });
        const input = new Input();
        input.setValue("héllo");
        return {
          focused: false,
          render(width: number) {
            input.focused = this.focused;
            return ["picture:", ...image.render(width), ...input.render(width), "end"];
          },
          handleInput(data: string) {
            if (data === "\x1b") done(undefined);
            else input.handleInput(data);
          },
          invalidate() {
            image.invalidate();
          },
        };
      });
    },
  });
}
"#;

/// Opens `/pic` and types into its input; returns the Kitty commands written and the
/// cursor (column, row relative to the `picture:` row, shown) after typing.
fn picture_and_input(t: &Tmux, log: &Path) -> (Vec<String>, (u16, usize, bool)) {
    t.wait_until("the editor", WAIT, editor_ready);
    submit(t, "/pic");
    t.wait_for("héllo", WAIT);
    t.type_text("日本");
    let screen = t.wait_for("日本héllo", WAIT);
    std::thread::sleep(Duration::from_millis(300));
    let (x, y, shown) = t.cursor();
    let top = screen.lines().position(|l| l == "picture:").unwrap();
    let logged = String::from_utf8_lossy(&std::fs::read(log).unwrap()).into_owned();
    (kitty_commands(&logged), (x, y as usize - top, shown))
}

#[test]
fn an_extensions_image_and_focused_input_are_drawn_as_in_pi() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let settings =
        r#"{"quietStartup": true, "showHardwareCursor": true, "lastChangelogVersion": "0.73.1"}"#;
    let setup = || {
        let env = Env::new(json!({"sequence": []}));
        std::fs::write(env.agent_dir().join("settings.json"), settings).unwrap();
        std::fs::write(env.cwd().join("pic.png"), png_40x20()).unwrap();
        let extension = env.dir.path().join("pic.ts");
        std::fs::write(&extension, PICTURE_EXTENSION).unwrap();
        let log = env.dir.path().join("write.log");
        (env, extension, log)
    };
    let (env, extension, log) = setup();
    let vars = kitty_vars(&log);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let t = env.start_with_env(&format!("-e {}", extension.display()), 80, 24, &vars);
    let (commands, cursor) = picture_and_input(&t, &log);
    // 40x20 at 20 columns: 5 rows; once, however often the input below changes.
    let data = base64::engine::general_purpose::STANDARD.encode(png_40x20());
    let expected = format!("\x1b[4A\x1b_Ga=T,f=100,q=2,C=1,c=20,r=5,i=ID;{data}\x1b\\\x1b[4B");
    assert_eq!(commands, vec![expected]);
    // The cursor at the input's CURSOR_MARKER (typed at the start: "> 日本|héllo"), shown.
    assert_eq!(cursor, (6, 6, true));

    let (reference_env, extension, reference_log) = setup();
    let vars = kitty_vars(&reference_log);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let Some(reference) = start_reference_with(
        &reference_env,
        &format!("-e {}", extension.display()),
        &vars,
        80,
        24,
    ) else {
        return;
    };
    assert_eq!(
        picture_and_input(&reference, &reference_log),
        (commands, cursor)
    );
}

/// pi's `PI_HARDWARE_CURSOR=1` shows the cursor when the setting is not in the file.
#[test]
fn pi_hardware_cursor_shows_the_cursor_without_the_setting() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    for (value, shown) in [("1", true), ("0", false)] {
        let env = Env::new(json!({"sequence": []}));
        let t = env.start_with_env("", 80, 24, &[("PI_HARDWARE_CURSOR", value)]);
        t.wait_until("the editor", WAIT, editor_ready);
        t.type_text("abc");
        t.wait_for("abc", WAIT);
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(
            (t.cursor().0, t.cursor().2),
            (3, shown),
            "PI_HARDWARE_CURSOR={value}"
        );
    }
}

/// An overlay (`ctx.ui.custom` with `overlay: true`) holding a focused `Input`.
const OVERLAY_EXTENSION: &str = r#"
import { Input } from "@mariozechner/pi-tui";

export default function (pi: any) {
  pi.registerCommand("ov", {
    description: "an overlay with an input",
    handler: async (_args: string, ctx: any) => {
      await ctx.ui.custom(
        (_tui: any, _theme: any, _kb: any, done: (v: unknown) => void) => {
          const input = new Input();
          input.setValue("abc");
          return {
            focused: false,
            render(width: number) {
              input.focused = this.focused;
              return ["┌ overlay ┐", ...input.render(width), "└─────────┘"];
            },
            handleInput(data: string) {
              if (data === "\x1b") done(undefined);
              else input.handleInput(data);
            },
            invalidate() {},
          };
        },
        { overlay: true, overlayOptions: { width: 30, anchor: "center" } },
      );
    },
  });
}
"#;

#[test]
fn a_focused_overlays_cursor_marker_places_the_cursor_as_in_pi() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let settings =
        r#"{"quietStartup": true, "showHardwareCursor": true, "lastChangelogVersion": "0.73.1"}"#;
    let run = |t: &Tmux| {
        t.wait_until("the editor", WAIT, editor_ready);
        submit(t, "/ov");
        t.wait_for("> abc", WAIT);
        t.type_text("xy");
        let screen = t.wait_for("> xyabc", WAIT);
        std::thread::sleep(Duration::from_millis(300));
        let row = screen.lines().position(|l| l.contains("> xyabc")).unwrap();
        let (x, y, shown) = t.cursor();
        (x, y as usize == row, shown)
    };
    let setup = || {
        let env = Env::new(json!({"sequence": []}));
        std::fs::write(env.agent_dir().join("settings.json"), settings).unwrap();
        let extension = env.dir.path().join("ov.ts");
        std::fs::write(&extension, OVERLAY_EXTENSION).unwrap();
        (env, extension)
    };
    let (env, extension) = setup();
    let t = env.start(&format!("-e {}", extension.display()), 80, 24);
    // Centred 30 columns wide on 80: from column 25; after "> xy".
    assert_eq!(run(&t), (29, true, true));
    let (reference_env, extension) = setup();
    let Some(reference) = start_reference_with(
        &reference_env,
        &format!("-e {}", extension.display()),
        &[],
        80,
        24,
    ) else {
        return;
    };
    assert_eq!(run(&reference), (29, true, true));
}
