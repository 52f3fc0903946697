//! Theme files of pi 1.6: its own built-in `dark` and `light` themes (OKHSL colours,
//! `appearance`, the tokens 1.6 added) load in pi-rs with the colours pi computes, a
//! `"light/dark"` setting picks by the terminal's appearance, a theme made from pi 1.6's
//! `schemas/theme.schema.json` loads in every colour form, and what the schema rejects
//! is reported. Seen through RPC `export_html`, which draws the page in the settings'
//! theme and reports a theme that does not load on stderr.

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use crate::support::pi16_schema;
use crate::support::rpc_client::RpcProject;

/// pi 1.6's theme folder in the reference package, or `None` (printing why).
fn pi_themes() -> Option<PathBuf> {
    match pi16_schema::package() {
        Ok(package) => Some(package.join("dist/modes/interactive/theme")),
        Err(why) => {
            eprintln!("skipped: {why}");
            None
        }
    }
}

/// Installs a pi 1.6 theme file under a new name (the built-in names are pi-rs's own).
fn install(project: &RpcProject, source: &std::path::Path, name: &str) {
    let mut theme: Value = serde_json::from_str(&std::fs::read_to_string(source).unwrap()).unwrap();
    theme["name"] = json!(name);
    let dir = project.agent_dir().join("themes");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.json")), theme.to_string()).unwrap();
}

/// Exports the session after one answer with `env` set; returns the page and stderr.
fn export(project: &RpcProject, env: &[(&str, &str)]) -> (String, String) {
    let mut cmd = project.command();
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut c = crate::support::rpc_client::RpcClient::spawn(cmd);
    c.prompt("hello");
    let data = c.ok(json!({"type": "export_html", "outputPath": "out.html"}));
    assert_eq!(data["path"], "out.html");
    let (_, stderr) = c.close();
    let page = std::fs::read_to_string(project.cwd().join("out.html")).unwrap();
    (page, stderr)
}

fn project(settings: Value) -> RpcProject {
    RpcProject::new(&json!({"sequence": [{"text": "hi"}]}), None, Some(settings))
}

#[test]
fn pi_1_6_builtin_themes_load_with_pis_colours_and_a_pair_follows_the_terminal() {
    let Some(themes) = pi_themes() else { return };
    let p = project(json!({"theme": "pi-light/pi-dark"}));
    install(&p, &themes.join("dark.json"), "pi-dark");
    install(&p, &themes.join("light.json"), "pi-light");
    // A dark terminal background (COLORFGBG's last field 0) picks the second name.
    let (page, stderr) = export(&p, &[("COLORFGBG", "15;0")]);
    assert!(!stderr.contains("Warning"), "{stderr}");
    for css in [
        "--accent: #a798d7;",
        "--userMessageBg: #213b49;",
        "--thinkingMax: #fe5462;",
        "--searchMatchBg: #4e2f1b;",
    ] {
        assert!(page.contains(css), "{css} missing");
    }
    // A light one picks the first.
    let (page, stderr) = export(&p, &[("COLORFGBG", "0;15")]);
    assert!(!stderr.contains("Warning"), "{stderr}");
    for css in [
        "--accent: #7459b4;",
        "--userMessageBg: #dfe7ec;",
        "--thinkingMax: #fe7479;",
        "--searchMatchBg: #ede3dd;",
    ] {
        assert!(page.contains(css), "{css} missing");
    }
}

/// A theme with every token of pi 1.6's schema, cycling through the colour forms it
/// allows (optional tokens left out, so their fallbacks apply).
fn schema_theme(schema: &pi16_schema::Schema) -> Value {
    let forms = [
        json!("#0af"),
        json!("#336699"),
        json!("oklch(62% 0.1 200)"),
        json!("okhsl(250 60% 55%)"),
        json!(42),
        json!("shade"),
        json!(""),
    ];
    let colors_schema = &schema.root["properties"]["colors"];
    let required: Vec<&str> = colors_schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let mut colors = Map::new();
    for (i, token) in required.iter().enumerate() {
        colors.insert((*token).to_string(), forms[i % forms.len()].clone());
    }
    let theme = json!({
        "$schema": "https://pi.dev/schemas/theme.schema.json",
        "name": "from-schema",
        "appearance": "dark",
        "vars": {"shade": "accentVar", "accentVar": "okhsl(20 72% 67%)"},
        "colors": colors,
        "export": {"pageBg": "#101010", "cardBg": 16, "infoBg": "oklch(0.7 0.4 30)"}
    });
    assert!(
        schema.valid(&theme, &schema.root),
        "not valid for pi's schema"
    );
    theme
}

#[test]
fn a_theme_made_from_pi_1_6_s_schema_loads_and_what_the_schema_rejects_is_reported() {
    let schema = match pi16_schema::load("theme.schema.json") {
        Ok(schema) => schema,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let p = project(json!({"theme": "from-schema"}));
    let dir = p.agent_dir().join("themes");
    std::fs::create_dir_all(&dir).unwrap();
    let theme = schema_theme(&schema);
    std::fs::write(dir.join("from-schema.json"), theme.to_string()).unwrap();
    let (page, stderr) = export(&p, &[]);
    assert!(!stderr.contains("Warning"), "{stderr}");
    // Spot checks: accent is the 1st required token (#0af), border the 2nd.
    assert!(page.contains("--accent: #00aaff;"), "accent");
    assert!(page.contains("--border: #336699;"), "border");
    assert!(page.contains("--borderAccent: #1c989e;"), "oklch");
    assert!(page.contains("--borderMuted: #4e88c2;"), "okhsl");
    assert!(page.contains("--error: #ea7f81;"), "a chained var");
    // The optional tokens follow their fallbacks.
    let value_of = |token: &str| {
        let start = page.find(&format!("--{token}: ")).unwrap() + token.len() + 4;
        page[start..start + 7].to_string()
    };
    assert_eq!(value_of("thinkingMax"), value_of("thinkingXhigh"));
    assert_eq!(value_of("searchMatchBg"), value_of("selectedBg"));

    // What pi's schema rejects, each reported with the file.
    let mut broken = theme;
    broken["name"] = json!("from/schema");
    broken["appearance"] = json!("dim");
    broken["colors"].as_object_mut().unwrap().remove("accent");
    broken["colors"]["border"] = json!("oklch(2 0.1 10)");
    broken["extra"] = json!(true);
    assert!(!schema.valid(&broken, &schema.root));
    std::fs::write(dir.join("from-schema.json"), broken.to_string()).unwrap();
    let (_, stderr) = export(&p, &[]);
    for needle in [
        "from-schema.json",
        "- accent",
        "/name: \"from/schema\" contains \"/\"",
        "/appearance: must be \"dark\" or \"light\"",
        "/colors/border:",
        "/extra: unknown field",
    ] {
        assert!(stderr.contains(needle), "{needle}:\n{stderr}");
    }
}
