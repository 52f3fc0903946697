use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;

/// A complete theme in pi's format: every token set, mixing hex, palette indices, vars
/// and terminal defaults.
fn full_theme_json() -> Value {
    let mut colors = Map::new();
    for (i, token) in ThemeToken::ALL.iter().enumerate() {
        let value = match i % 4 {
            0 => json!("primary"),
            1 => json!(240),
            2 => json!("#336699"),
            _ => json!(""),
        };
        colors.insert(token.name().to_string(), value);
    }
    json!({
        "$schema": "https://example.invalid/theme-schema.json",
        "name": "my-theme",
        "vars": {"primary": "secondary", "secondary": "#00aaff"},
        "colors": colors,
        "export": {"pageBg": "#101010", "cardBg": 16}
    })
}

#[test]
fn builtin_themes_define_every_token_in_every_mode() {
    for name in builtin_theme_names() {
        for mode in [ColorMode::TrueColor, ColorMode::Ansi256, ColorMode::Ansi16] {
            let (_, json) = BUILTIN_THEMES.iter().find(|(n, _)| *n == name).unwrap();
            let theme = Theme::from_json_str(name, json, mode).unwrap();
            assert_eq!(theme.name(), name);
            assert_eq!(theme.mode(), mode);
        }
    }
}

#[test]
fn builtin_themes_keep_text_on_the_terminal_default() {
    let theme = Theme::dark(ColorMode::TrueColor);
    assert_eq!(theme.style(ThemeToken::Text), Style::default());
    assert_eq!(
        theme.style(ThemeToken::Accent),
        Style::default().fg(Color::Rgb(0x5f, 0xd7, 0xaf))
    );
    assert_eq!(
        theme.style(ThemeToken::UserMessageBg),
        Style::default().bg(Color::Rgb(0x2b, 0x2f, 0x3a))
    );
}

#[test]
fn pi_format_theme_resolves_vars_indices_and_defaults() {
    let theme =
        Theme::from_json_str("t", &full_theme_json().to_string(), ColorMode::TrueColor).unwrap();
    assert_eq!(theme.name(), "my-theme");
    let got: Vec<(&str, ColorValue)> = ThemeToken::ALL[..4]
        .iter()
        .map(|t| (t.name(), theme.value(*t)))
        .collect();
    assert_eq!(
        got,
        vec![
            ("accent", ColorValue::Rgb(0, 0xaa, 0xff)),
            ("border", ColorValue::Index(240)),
            ("borderAccent", ColorValue::Rgb(0x33, 0x66, 0x99)),
            ("borderMuted", ColorValue::Default),
        ]
    );
    assert_eq!(
        theme.export_colors(),
        &ExportColors {
            page_bg: Some("#101010".into()),
            card_bg: Some("#000000".into()),
            info_bg: None
        }
    );
}

#[test]
fn degraded_theme_uses_palette_colours() {
    let theme =
        Theme::from_json_str("t", &full_theme_json().to_string(), ColorMode::Ansi256).unwrap();
    assert_eq!(theme.color(ThemeToken::Accent), Some(Color::Indexed(39)));
    let sixteen = theme.with_mode(ColorMode::Ansi16);
    assert_eq!(sixteen.color(ThemeToken::Border), Some(Color::DarkGray));
    assert_ne!(sixteen.generation(), theme.generation());
}

#[test]
fn invalid_custom_theme_reports_every_problem_with_the_file_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = full_theme_json();
    let colors = doc["colors"].as_object_mut().unwrap();
    colors.remove("mdHeading");
    colors.remove("accent");
    colors.insert("border".into(), json!("#12345"));
    colors.insert("muted".into(), json!(300));
    colors.insert("dim".into(), json!("nope"));
    colors.insert("mdLinkColour".into(), json!("#ffffff"));
    colors.insert("success".into(), json!("loop"));
    doc["vars"]["loop"] = json!("loop");
    let path = dir.path().join("broken.json");
    std::fs::write(&path, doc.to_string()).unwrap();

    let err = Theme::load_file(&path, ColorMode::TrueColor).unwrap_err();
    let text = err
        .to_string()
        .replace(&dir.path().display().to_string(), "<dir>");
    insta::assert_snapshot!(text, @r##"
        invalid theme <dir>/broken.json:

        missing color tokens (every token is required):
          - accent
          - mdHeading

        add them to the "colors" object; the built-in dark.json and light.json list them all

        other problems:
          - /colors/mdLinkColour: unknown color token
          - /colors/border: "#12345" is not a #rgb or #rrggbb colour
          - /colors/success: circular variable reference loop -> loop
          - /colors/muted: 300 is not a palette index (0-255)
          - /colors/dim: unknown variable "nope" (not defined in "vars")
        "##);
}

#[test]
fn theme_json_syntax_errors_name_the_file_and_position() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("typo.json");
    std::fs::write(&path, "{\n  \"name\": \"x\",\n  \"colors\": {,}\n}").unwrap();
    let err = Theme::load_file(&path, ColorMode::TrueColor).unwrap_err();
    let text = err
        .to_string()
        .replace(&dir.path().display().to_string(), "<dir>");
    insta::assert_snapshot!(text, @"failed to parse theme <dir>/typo.json: key must be a string at line 3 column 14 (a theme file must be valid JSON)");
}

#[test]
fn non_object_theme_and_missing_sections_are_reported() {
    let err = Theme::from_json_str("a.json", "[1]", ColorMode::TrueColor).unwrap_err();
    insta::assert_snapshot!(err.to_string(), @r"
    invalid theme a.json:

    other problems:
      - /: a theme must be a JSON object
    ");
    let err = Theme::from_json_str(
        "b.json",
        r#"{"colors": 3, "extra": 1}"#,
        ColorMode::TrueColor,
    )
    .unwrap_err();
    insta::assert_snapshot!(err.to_string(), @r"
    invalid theme b.json:

    other problems:
      - /extra: unknown field
      - /name: missing (every theme needs a name)
      - /colors: must be an object
    ");
}

#[test]
fn custom_themes_are_discovered_and_loaded_by_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("zen.json"), full_theme_json().to_string()).unwrap();
    std::fs::write(dir.path().join("bad.json"), "{}").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a theme").unwrap();

    let found = discover_themes(dir.path()).unwrap();
    let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["bad", "zen"]);

    let loaded = load_custom_themes(dir.path(), ColorMode::TrueColor).unwrap();
    let ok: Vec<(&str, bool)> = loaded
        .iter()
        .map(|(f, r)| (f.name.as_str(), r.is_ok()))
        .collect();
    assert_eq!(ok, [("bad", false), ("zen", true)]);

    let zen = Theme::load_named("zen", dir.path(), ColorMode::TrueColor).unwrap();
    assert_eq!(zen.source(), Some(dir.path().join("zen.json").as_path()));
    let dark = Theme::load_named("dark", dir.path(), ColorMode::TrueColor).unwrap();
    assert_eq!(dark.source(), None);
    let missing = Theme::load_named("nope", dir.path(), ColorMode::TrueColor).unwrap_err();
    assert!(matches!(missing, ThemeError::NotFound { .. }));
}

#[test]
fn missing_themes_directory_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(discover_themes(&dir.path().join("themes")).unwrap(), vec![]);
}

#[test]
fn default_theme_follows_colorfgbg() {
    let env = |v: Option<&'static str>| {
        move |k: &str| {
            if k == "COLORFGBG" {
                v.map(str::to_string)
            } else {
                None
            }
        }
    };
    assert_eq!(default_theme_name(env(Some("15;0"))), "dark");
    assert_eq!(default_theme_name(env(Some("0;15"))), "light");
    // pi 1.6 reads the last field (rxvt's `fg;xpm;bg`); 8 is dark, 7 light.
    assert_eq!(default_theme_name(env(Some("0;default;15"))), "light");
    assert_eq!(default_theme_name(env(Some("15;8"))), "dark");
    assert_eq!(default_theme_name(env(Some("0;7"))), "light");
    assert_eq!(default_theme_name(env(Some("0;default"))), "dark");
    assert_eq!(default_theme_name(env(None)), "dark");
    // The `theme` setting: unset and "system" follow the terminal, pairs pick by it.
    let light = env(Some("0;15"));
    let dark = env(Some("15;0"));
    assert_eq!(resolve_theme_setting(None, light), Ok("light".into()));
    assert_eq!(
        resolve_theme_setting(Some("system"), dark),
        Ok("dark".into())
    );
    assert_eq!(
        resolve_theme_setting(Some("paper/night"), light),
        Ok("paper".into())
    );
    assert_eq!(
        resolve_theme_setting(Some(" paper / night "), dark),
        Ok("night".into())
    );
    assert_eq!(
        resolve_theme_setting(Some("light/system"), dark),
        Ok("dark".into())
    );
    assert_eq!(resolve_theme_setting(Some("mine"), dark), Ok("mine".into()));
    let (warning, fallback) = resolve_theme_setting(Some("a/b/c"), dark).unwrap_err();
    assert!(warning.contains("\"a/b/c\""), "{warning}");
    assert_eq!(fallback, "dark");
    assert!(resolve_theme_setting(Some("/night"), dark).is_err());
}

#[test]
fn pi_1_6_theme_files_load_with_new_colour_forms_and_optional_tokens() {
    let mut colors = Map::new();
    for token in ThemeToken::ALL {
        if token.fallback().is_none() {
            colors.insert(token.name().to_string(), json!("okhsl(250 60% 55%)"));
        }
    }
    colors.insert("thinkingXhigh".into(), json!("#0af"));
    colors.insert("searchMatchBg".into(), json!("oklch(62% 0.1 200)"));
    let theme = Theme::from_json_str(
        "t",
        &json!({"name": "t", "appearance": "light", "colors": colors}).to_string(),
        ColorMode::TrueColor,
    )
    .unwrap();
    assert_eq!(theme.appearance(), Appearance::Light);
    assert_eq!(
        theme.value(ThemeToken::ThinkingMax),
        ColorValue::Rgb(0, 0xaa, 0xff)
    );
    assert_eq!(
        theme.value(ThemeToken::SearchMatchBg).to_hex().as_deref(),
        Some("#1c989e")
    );
    assert_eq!(
        theme.value(ThemeToken::ScrollbarTrack),
        theme.value(ThemeToken::Muted)
    );
    assert_eq!(
        theme.value(ThemeToken::Accent).to_hex().as_deref(),
        Some("#4e88c2")
    );
    // A "/" in the name and an unknown appearance are reported.
    let bad = Theme::from_json_str(
        "bad",
        &json!({"name": "a/b", "appearance": "dim", "colors": colors}).to_string(),
        ColorMode::TrueColor,
    )
    .unwrap_err()
    .to_string();
    assert!(bad.contains("/name: \"a/b\" contains \"/\""), "{bad}");
    assert!(
        bad.contains("/appearance: must be \"dark\" or \"light\""),
        "{bad}"
    );
}

#[test]
fn a_custom_theme_named_system_is_ignored_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let mut theme = full_theme_json();
    theme["name"] = json!("system");
    let file = dir.path().join("system.json");
    std::fs::write(&file, format!("\u{feff}{theme}")).unwrap();
    let catalog = ThemeCatalog::load(std::slice::from_ref(&file), ColorMode::TrueColor);
    assert!(catalog.custom_names().is_empty());
    assert!(
        catalog.warnings()[0].contains("reserved name"),
        "{:?}",
        catalog.warnings()
    );
}

#[test]
fn extension_theme_spec_uses_pis_escape_sequences() {
    let dark = Theme::dark(ColorMode::TrueColor);
    let spec = extension_theme_spec(&dark);
    assert_eq!(spec["name"], "dark");
    assert_eq!(spec["mode"], "truecolor");
    // accent = teal = #5fd7af; text = "" (terminal default); selectedBg is a background.
    assert_eq!(spec["fg"]["accent"], "\x1b[38;2;95;215;175m");
    assert_eq!(spec["fg"]["text"], "\x1b[39m");
    assert_eq!(spec["bg"]["selectedBg"], "\x1b[48;2;51;56;74m");
    assert!(spec["fg"].get("selectedBg").is_none());
    assert_eq!(
        spec["fg"].as_object().unwrap().len(),
        ThemeToken::ALL
            .iter()
            .filter(|t| !t.is_background())
            .count()
    );
    let dark256 = Theme::dark(ColorMode::Ansi256);
    let spec = extension_theme_spec(&dark256);
    assert_eq!(spec["mode"], "256color");
    assert_eq!(
        spec["fg"]["accent"],
        format!("\x1b[38;5;{}m", rgb_to_256(95, 215, 175))
    );
    assert_eq!(
        ansi_sequence(ColorValue::Index(7), ColorMode::TrueColor, true),
        "\x1b[48;5;7m"
    );
}
