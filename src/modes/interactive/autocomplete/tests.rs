use super::*;
use pretty_assertions::assert_eq;
use std::fs;

fn commands() -> Vec<CommandSpec> {
    let mut compact = CommandSpec::new("compact", "Compact the conversation");
    compact.argument_hint = Some("[instructions]".into());
    let mut model = CommandSpec::new("model", "Select a model");
    model.arguments = vec![
        CompletionItem {
            value: "sonnet".into(),
            label: "sonnet".into(),
            description: None,
        },
        CompletionItem {
            value: "opus".into(),
            label: "opus".into(),
            description: None,
        },
    ];
    vec![
        CommandSpec::new("settings", "Open settings"),
        model,
        compact,
        CommandSpec::new("scoped-models", "Choose models to cycle"),
        CommandSpec::new("quit", "Quit pi"),
    ]
}

fn provider() -> CombinedProvider {
    CombinedProvider::new(commands(), PathBuf::from("/nonexistent"), None)
}

fn lines(s: &str) -> Vec<String> {
    vec![s.to_string()]
}

fn rows(s: &Suggestions) -> String {
    s.items
        .iter()
        .map(|i| {
            format!(
                "{} | {} | {}",
                i.value,
                i.label,
                i.description.as_deref().unwrap_or("-")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn slash_commands_complete_fuzzily_with_descriptions() {
    let p = provider();
    let s = p.suggestions(&lines("/mo"), 0, 3, false).unwrap();
    assert_eq!(s.prefix, "/mo");
    insta::assert_snapshot!(rows(&s), @r"
    model | model | Select a model
    scoped-models | scoped-models | Choose models to cycle
    ");
    let all = p.suggestions(&lines("/"), 0, 1, false).unwrap();
    assert_eq!(all.items.len(), 5);
    assert!(p.suggestions(&lines("/zzz"), 0, 4, false).is_none());
}

#[test]
fn choosing_a_command_inserts_it_with_a_space() {
    let p = provider();
    let item = CompletionItem {
        value: "model".into(),
        label: "model".into(),
        description: None,
    };
    let done = p.apply(&lines("/mo"), 0, 3, &item, "/mo");
    assert_eq!(
        done,
        Completion {
            lines: lines("/model "),
            cursor_line: 0,
            cursor_col: 7
        }
    );
}

#[test]
fn command_arguments_complete_by_prefix() {
    let p = provider();
    let s = p.suggestions(&lines("/model so"), 0, 9, false).unwrap();
    assert_eq!(s.prefix, "so");
    assert_eq!(
        s.items.iter().map(|i| i.value.as_str()).collect::<Vec<_>>(),
        ["sonnet"]
    );
    let done = p.apply(&lines("/model so"), 0, 9, &s.items[0], &s.prefix);
    assert_eq!(done.lines, lines("/model sonnet"));
    assert_eq!(done.cursor_col, 13);
}

#[test]
fn fuzzy_arguments_match_label_and_description_as_pis_model_completion() {
    let item = |provider: &str, id: &str| CompletionItem {
        value: format!("{provider}/{id}"),
        label: id.into(),
        description: Some(provider.into()),
    };
    let mut model = CommandSpec::new("model", "Select model");
    model.arguments = vec![
        item("anthropic", "claude-opus-4-5"),
        item("openai", "gpt-5"),
        item("bedrock", "claude-opus-4-5"),
    ];
    model.fuzzy_arguments = true;
    let p = CombinedProvider::new(vec![model], PathBuf::from("/nonexistent"), None);
    let values = |text: &str| {
        p.suggestions(&lines(text), 0, text.len(), false)
            .map(|s| s.items.into_iter().map(|i| i.value).collect::<Vec<_>>())
    };
    assert_eq!(values("/model ").map(|v| v.len()), Some(3));
    // Words in any order, over the id and the provider.
    assert_eq!(
        values("/model opus bedrock"),
        Some(vec!["bedrock/claude-opus-4-5".to_string()])
    );
    assert_eq!(values("/model gpt"), Some(vec!["openai/gpt-5".to_string()]));
    // A typed `provider/id` is not a search of the list: no popup, Enter sends it.
    assert_eq!(values("/model openai/gpt-5"), None);
}

fn project() -> Arc<Vec<ProjectFile>> {
    let f = |p: &str, d: bool| ProjectFile {
        path: p.into(),
        is_dir: d,
    };
    Arc::new(vec![
        f("README.md", false),
        f("src", true),
        f("src/main.rs", false),
        f("src/modes", true),
        f("src/modes/interactive.rs", false),
        f("docs/my notes.md", false),
        f("tests/main_test.rs", false),
    ])
}

#[test]
fn at_references_search_the_project_file_list() {
    let p = provider().with_files(project());
    let s = p.suggestions(&lines("see @main"), 0, 9, false).unwrap();
    assert_eq!(s.prefix, "@main");
    insta::assert_snapshot!(rows(&s), @r"
    @src/main.rs | main.rs | src/main.rs
    @tests/main_test.rs | main_test.rs | tests/main_test.rs
    ");
    let scoped = p.suggestions(&lines("@src/mo"), 0, 7, false).unwrap();
    insta::assert_snapshot!(rows(&scoped), @"@src/modes/ | modes/ | src/modes");
    let spaced = p.suggestions(&lines("@notes"), 0, 6, false).unwrap();
    insta::assert_snapshot!(rows(&spaced), @r#"
    @"docs/my notes.md" | my notes.md | docs/my notes.md
    "#);
}

#[test]
fn applying_files_adds_a_space_but_directories_keep_completing() {
    let p = provider().with_files(project());
    let file = CompletionItem {
        value: "@src/main.rs".into(),
        label: "main.rs".into(),
        description: None,
    };
    let done = p.apply(&lines("look at @ma please"), 0, 11, &file, "@ma");
    assert_eq!(done.lines, lines("look at @src/main.rs  please"));
    assert_eq!(done.cursor_col, 21);
    let dir = CompletionItem {
        value: "@src/modes/".into(),
        label: "modes/".into(),
        description: None,
    };
    let done = p.apply(&lines("@mo"), 0, 3, &dir, "@mo");
    assert_eq!(done.lines, lines("@src/modes/"));
    assert_eq!(done.cursor_col, 11);
    let quoted = CompletionItem {
        value: "@\"docs/my notes.md\"".into(),
        label: "my notes.md".into(),
        description: None,
    };
    let done = p.apply(&lines("@\"my\""), 0, 4, &quoted, "@\"my");
    assert_eq!(done.lines, lines("@\"docs/my notes.md\" "));
}

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src/nested")).unwrap();
    fs::create_dir_all(dir.path().join("scripts")).unwrap();
    fs::write(dir.path().join("src/lib.rs"), "").unwrap();
    fs::write(dir.path().join("setup.sh"), "").unwrap();
    fs::write(dir.path().join("README.md"), "").unwrap();
    fs::write(dir.path().join(".env"), "").unwrap();
    dir
}

#[test]
fn tab_completes_relative_paths_directories_first() {
    let dir = tree();
    let p = CombinedProvider::new(vec![], dir.path().to_path_buf(), None);
    let s = p.suggestions(&lines("edit ./s"), 0, 8, true).unwrap();
    assert_eq!(s.prefix, "./s");
    insta::assert_snapshot!(rows(&s), @r"
    ./scripts/ | scripts/ | -
    ./src/ | src/ | -
    ./setup.sh | setup.sh | -
    ");
    let inside = p.suggestions(&lines("src/"), 0, 4, true).unwrap();
    insta::assert_snapshot!(rows(&inside), @r"
    src/nested/ | nested/ | -
    src/lib.rs | lib.rs | -
    ");
    let done = p.apply(&lines("edit ./s"), 0, 8, &s.items[1], &s.prefix);
    assert_eq!(done.lines, lines("edit ./src/"));
}

#[test]
fn tab_completes_home_and_absolute_paths() {
    let dir = tree();
    let p = CombinedProvider::new(vec![], PathBuf::from("/"), Some(dir.path().to_path_buf()));
    let home = p.suggestions(&lines("~/RE"), 0, 4, true).unwrap();
    assert_eq!(rows(&home), "~/README.md | README.md | -");
    let abs = format!("{}/sr", dir.path().display());
    let s = p.suggestions(&lines(&abs), 0, abs.len(), true).unwrap();
    assert_eq!(s.items[0].value, format!("{}/src/", dir.path().display()));
}

#[test]
fn paths_are_only_suggested_without_tab_when_they_look_like_paths() {
    let dir = tree();
    let p = CombinedProvider::new(vec![], dir.path().to_path_buf(), None);
    assert!(p.suggestions(&lines("hello wor"), 0, 9, false).is_none());
    assert!(p.suggestions(&lines("hello ./"), 0, 8, false).is_some());
    assert!(!p.should_trigger_file_completion(&lines("/mod"), 0, 4));
    assert!(p.should_trigger_file_completion(&lines("/model ./x"), 0, 10));
}

#[test]
fn project_walk_honours_gitignore_and_includes_hidden_files() {
    let dir = tree();
    fs::write(dir.path().join(".gitignore"), "scripts/\n*.md\n").unwrap();
    fs::create_dir_all(dir.path().join(".git/objects")).unwrap();
    let files = walk_project(dir.path(), 100);
    let listed: Vec<String> = files
        .iter()
        .map(|f| format!("{}{}", f.path, if f.is_dir { "/" } else { "" }))
        .collect();
    assert_eq!(
        listed,
        [
            ".env",
            ".gitignore",
            "setup.sh",
            "src/",
            "src/lib.rs",
            "src/nested/"
        ]
    );
    assert_eq!(walk_project(dir.path(), 2).len(), 2);
}
