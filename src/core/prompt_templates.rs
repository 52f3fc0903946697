//! Prompt templates: markdown files that become slash commands. `/review src/lib.rs`
//! expands `review.md` with its arguments before the text is sent to the model.
//!
//! Found (pi 0.73 order, first of a name wins) in the project settings' `prompts` entries,
//! `<cwd>/.pi/prompts/`, the global settings' entries, `<agent_dir>/prompts/`, then the
//! `--prompt-template` paths. The automatic folders are not scanned recursively; a folder
//! named in the settings is. The name is the file name without `.md`; the description is
//! the frontmatter `description` or the first non-empty line (cut at 60 characters).
//!
//! Arguments are split like a shell does with quotes (no escapes) and substituted in
//! pi's order: `$1`… first, then `${@:N}` / `${@:N:L}`, then `$ARGUMENTS` and `$@`.
//!
//! Not here: deciding when to expand (the session does it after extension commands and the
//! `input` event) or autocompletion.

use std::path::{Path, PathBuf};

use crate::core::frontmatter;
use crate::core::resource_paths::{
    AutoDir, DiagnosticKind, FoundResource, ResolveInput, ResolvedPath, ResourceDiagnostic,
    ResourceOptions, ResourceScope, markdown_files_flat, markdown_files_recursive, merge_resolved,
    read_dir_sorted, resolve, resolve_all,
};

/// One prompt template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptTemplate {
    /// The command name (`review` for `/review`).
    pub name: String,
    pub description: String,
    /// Frontmatter `argument-hint`, shown by autocompletion.
    pub argument_hint: Option<String>,
    /// The body (frontmatter removed) with the placeholders.
    pub content: String,
    pub path: PathBuf,
    pub scope: ResourceScope,
}

/// The templates found, and what went wrong on the way.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadedPromptTemplates {
    pub templates: Vec<PromptTemplate>,
    pub diagnostics: Vec<ResourceDiagnostic>,
}

impl LoadedPromptTemplates {
    pub fn get(&self, name: &str) -> Option<&PromptTemplate> {
        self.templates.iter().find(|t| t.name == name)
    }
}

const DESCRIPTION_LIMIT: usize = 60;

/// Reads one template file.
pub fn load_template_file(
    path: &Path,
    scope: ResourceScope,
) -> Result<PromptTemplate, ResourceDiagnostic> {
    let warning = |message: String| ResourceDiagnostic {
        kind: DiagnosticKind::Warning,
        message,
        path: path.to_path_buf(),
    };
    let raw = std::fs::read_to_string(path)
        .map_err(|e| warning(format!("could not read prompt template: {e}")))?;
    let parsed = frontmatter::parse(&raw).map_err(|e| warning(e.to_string()))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let name = name.strip_suffix(".md").unwrap_or(&name).to_string();
    let mut description = parsed
        .str("description")
        .filter(|d| !d.is_empty())
        .map(str::to_string)
        .unwrap_or_default();
    if description.is_empty()
        && let Some(first) = parsed.body.split('\n').find(|l| !l.trim().is_empty())
    {
        description = first.chars().take(DESCRIPTION_LIMIT).collect();
        if first.chars().count() > DESCRIPTION_LIMIT {
            description.push_str("...");
        }
    }
    Ok(PromptTemplate {
        name,
        description,
        argument_hint: parsed.str("argument-hint").map(str::to_string),
        content: parsed.body,
        path: path.to_path_buf(),
        scope,
    })
}

/// Where prompt templates are looked for (settings entries, `prompts/` folders).
fn prompt_resolve_input<'a>(
    options: &'a ResourceOptions,
    project_base: &'a Path,
) -> ResolveInput<'a> {
    ResolveInput {
        project_entries: &options.project_entries,
        project_base,
        user_entries: &options.user_entries,
        user_base: &options.agent_dir,
        scan_entry_dir: markdown_files_recursive,
        project_auto: vec![AutoDir {
            dir: project_base.join("prompts"),
            scan: markdown_files_flat,
        }],
        user_auto: vec![AutoDir {
            dir: options.agent_dir.join("prompts"),
            scan: markdown_files_flat,
        }],
        project_trusted: options.project_trusted,
    }
}

/// Every prompt template file of the settings and folders, enabled or not (for
/// `pi config`).
pub fn all_prompt_files(options: &ResourceOptions) -> Vec<FoundResource> {
    resolve_all(&prompt_resolve_input(options, &options.project_base()))
}

/// Finds and reads all prompt templates.
pub fn load_prompt_templates(options: &ResourceOptions) -> LoadedPromptTemplates {
    let resolved = if options.discover {
        resolve(&prompt_resolve_input(options, &options.project_base()))
    } else {
        Vec::new()
    };
    let resolved = options.with_packages(resolved);
    let paths = merge_resolved(resolved, &options.cli_paths, &options.cwd);

    let mut loaded = LoadedPromptTemplates::default();
    let mut all = Vec::new();
    for ResolvedPath { path, scope } in paths {
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => {
                for entry in read_dir_sorted(&path) {
                    if entry.is_file && entry.name.ends_with(".md") {
                        all.push(load_template_file(&entry.path, scope));
                    }
                }
            }
            Ok(m) if m.is_file() && path.extension().is_some_and(|e| e == "md") => {
                all.push(load_template_file(&path, scope));
            }
            Ok(_) => loaded.diagnostics.push(ResourceDiagnostic {
                kind: DiagnosticKind::Warning,
                message: "prompt template path is not a markdown file or folder".into(),
                path,
            }),
            Err(_) => loaded.diagnostics.push(ResourceDiagnostic {
                kind: DiagnosticKind::Error,
                message: "Prompt template path does not exist".into(),
                path,
            }),
        }
    }
    for result in all {
        match result {
            Ok(template) => match loaded.templates.iter().find(|t| t.name == template.name) {
                Some(winner) => loaded.diagnostics.push(ResourceDiagnostic {
                    kind: DiagnosticKind::Collision {
                        winner: winner.path.clone(),
                        loser: template.path.clone(),
                    },
                    message: format!("name \"/{}\" collision", template.name),
                    path: template.path,
                }),
                None => loaded.templates.push(template),
            },
            Err(diagnostic) => loaded.diagnostics.push(diagnostic),
        }
    }
    loaded
}

/// Splits an argument string like a shell: spaces and tabs separate, single or double
/// quotes group (and are removed), there are no escapes.
pub fn parse_command_args(input: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for c in input.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == ' ' || c == '\t' => {
                if !current.is_empty() {
                    args.push(std::mem::take(&mut current));
                }
            }
            None => current.push(c),
        }
    }
    if !current.is_empty() {
        args.push(current);
    }
    args
}

/// Digits at the start of `s` and the rest.
fn leading_digits(s: &str) -> Option<(&str, &str)> {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    (n > 0).then(|| s.split_at(n))
}

/// Replaces every `$<digits>` (one pass; inserted values are not rescanned).
fn replace_positional(content: &str, args: &[String]) -> String {
    let mut out = String::with_capacity(content.len());
    let mut rest = content;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        match leading_digits(after) {
            Some((digits, tail)) => {
                let index = digits.parse::<usize>().ok().and_then(|n| n.checked_sub(1));
                if let Some(value) = index.and_then(|i| args.get(i)) {
                    out.push_str(value);
                }
                rest = tail;
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `${@:N}` or `${@:N:L}` at the start of `s`: (start, length, rest).
fn slice_placeholder(s: &str) -> Option<(&str, Option<&str>, &str)> {
    let inner = s.strip_prefix("${@:")?;
    let (start, tail) = leading_digits(inner)?;
    if let Some(tail) = tail.strip_prefix('}') {
        return Some((start, None, tail));
    }
    let (len, tail) = leading_digits(tail.strip_prefix(':')?)?;
    Some((start, Some(len), tail.strip_prefix('}')?))
}

/// Replaces every `${@:N}` / `${@:N:L}` with the selected arguments joined by spaces.
fn replace_slices(content: &str, args: &[String]) -> String {
    let number = |s: &str| s.parse::<usize>().unwrap_or(usize::MAX);
    let mut out = String::with_capacity(content.len());
    let mut rest = content;
    while let Some(i) = rest.find("${@:") {
        out.push_str(&rest[..i]);
        match slice_placeholder(&rest[i..]) {
            Some((start, len, tail)) => {
                // `${@:0}` means the same as `${@:1}`, as in bash.
                let from = number(start).saturating_sub(1).min(args.len());
                let to = len.map_or(args.len(), |l| {
                    from.saturating_add(number(l)).min(args.len())
                });
                out.push_str(&args[from..to].join(" "));
                rest = tail;
            }
            None => {
                out.push('$');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Replaces the placeholders of `content` with `args`, in pi's order (each pass works on
/// the previous pass's output, as in pi).
pub fn substitute_args(content: &str, args: &[String]) -> String {
    let result = replace_positional(content, args);
    let result = replace_slices(&result, args);
    let all = args.join(" ");
    result.replace("$ARGUMENTS", &all).replace("$@", &all)
}

/// The expansion of `/name args` if `name` is a template (`None` otherwise: the text is
/// sent as it is).
pub fn expand_prompt_template(text: &str, templates: &[PromptTemplate]) -> Option<String> {
    let rest = text.strip_prefix('/')?;
    let (name, args) = rest.split_once(' ').unwrap_or((rest, ""));
    let template = templates.iter().find(|t| t.name == name)?;
    Some(substitute_args(
        &template.content,
        &parse_command_args(args),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn positional_and_all_arguments() {
        let a = args(&["one", "two", "three"]);
        assert_eq!(
            substitute_args("$1 and $2; $3 $4.", &a),
            "one and two; three ."
        );
        assert_eq!(
            substitute_args("all: $@ | $ARGUMENTS", &a),
            "all: one two three | one two three"
        );
        assert_eq!(substitute_args("$0|$10", &a), "|");
    }

    #[test]
    fn bash_style_slices() {
        let a = args(&["a", "b", "c", "d"]);
        assert_eq!(substitute_args("${@:2}", &a), "b c d");
        assert_eq!(substitute_args("${@:2:2}", &a), "b c");
        assert_eq!(substitute_args("${@:0}", &a), "a b c d");
        assert_eq!(substitute_args("${@:9}", &a), "");
        assert_eq!(substitute_args("${@:3:99}", &a), "c d");
    }

    #[test]
    fn substitution_passes_run_in_pis_order() {
        // A positional value is substituted before `$@`, so a `$@` inside it is expanded
        // by the later pass, exactly as pi does.
        assert_eq!(substitute_args("$1", &args(&["$@", "x"])), "$@ x");
        assert_eq!(substitute_args("[$1]", &args(&["$2", "b"])), "[$2]");
    }

    #[test]
    fn edge_cases_match_pi_0_73_1() {
        // Outputs recorded from pi 0.73.1's parseCommandArgs + substituteArgs.
        let cases = [
            ("$1 $2 $@", r#"a "b c" d"#, "a b c a b c d"),
            (
                "${@:2} | ${@:2:1} | ${@:0} | ${@:5}",
                "w x y z",
                "x y z | x | w x y z | ",
            ),
            ("$1", r#""$@" x"#, "$@ x"),
            ("[$1][$10][$0]", "a b", "[a][][]"),
            ("$ARGUMENTS$@", r#"'it"s' fine"#, r#"it"s fineit"s fine"#),
            ("${@:1:0}|${@:2:", "a b c", "|${@:2:"),
            ("$$1 $", "q", "$q $"),
        ];
        for (template, input, expected) in cases {
            let args = parse_command_args(input);
            assert_eq!(
                substitute_args(template, &args),
                expected,
                "{template} / {input}"
            );
        }
    }

    #[test]
    fn quoted_arguments_group_and_lose_their_quotes() {
        assert_eq!(
            parse_command_args(r#"  one "two words" 'three "x"'	four"#),
            ["one", "two words", "three \"x\"", "four"]
        );
        assert_eq!(parse_command_args(r#"a"b c"d"#), ["ab cd"]);
        assert!(parse_command_args("   ").is_empty());
    }

    #[test]
    fn expands_only_known_templates() {
        let t = PromptTemplate {
            name: "review".into(),
            description: String::new(),
            argument_hint: None,
            content: "Review $1 for $ARGUMENTS".into(),
            path: PathBuf::from("/p/review.md"),
            scope: ResourceScope::User,
        };
        let list = vec![t];
        assert_eq!(
            expand_prompt_template("/review a.rs \"bugs only\"", &list).as_deref(),
            Some("Review a.rs for a.rs bugs only")
        );
        assert_eq!(expand_prompt_template("/other x", &list), None);
        assert_eq!(expand_prompt_template("review x", &list), None);
        assert_eq!(
            expand_prompt_template("/review", &list).as_deref(),
            Some("Review  for ")
        );
    }

    #[test]
    fn loads_project_before_global_then_cli_and_reports_collisions() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("proj");
        let agent = dir.path().join("agent");
        std::fs::create_dir_all(cwd.join(".pi/prompts/nested")).unwrap();
        std::fs::create_dir_all(agent.join("prompts")).unwrap();
        std::fs::write(
            cwd.join(".pi/prompts/fix.md"),
            "---\ndescription: Fix a bug\nargument-hint: <file>\n---\nFix $1\n",
        )
        .unwrap();
        std::fs::write(cwd.join(".pi/prompts/nested/deep.md"), "not scanned").unwrap();
        std::fs::write(agent.join("prompts/fix.md"), "global fix").unwrap();
        let long = "x".repeat(70);
        std::fs::write(agent.join("prompts/long.md"), format!("\n\n{long}\nmore")).unwrap();
        std::fs::write(agent.join("prompts/bad.md"), "---\na: [\n---\nbody").unwrap();
        std::fs::write(dir.path().join("cli.md"), "From the command line").unwrap();

        let mut options = ResourceOptions::new(&cwd, &agent);
        options.cli_paths = vec!["../cli.md".into(), "../missing.md".into()];
        let loaded = load_prompt_templates(&options);
        let summary: Vec<String> = loaded
            .templates
            .iter()
            .map(|t| format!("{} [{:?}] {}", t.name, t.scope, t.description))
            .collect();
        assert_eq!(
            summary,
            [
                "fix [Project] Fix a bug".to_string(),
                format!("long [User] {}...", "x".repeat(60)),
                "cli [Cli] From the command line".to_string(),
            ]
        );
        assert_eq!(
            loaded.get("fix").unwrap().argument_hint.as_deref(),
            Some("<file>")
        );
        assert_eq!(loaded.get("fix").unwrap().content, "Fix $1");
        let messages: Vec<String> = loaded
            .diagnostics
            .iter()
            .map(|d| d.message.clone())
            .collect();
        assert_eq!(
            messages,
            [
                "Prompt template path does not exist",
                "invalid YAML frontmatter at line 2: flow collection is not closed with `]` or `}`",
                "name \"/fix\" collision",
            ]
        );

        options.discover = false;
        let only_cli = load_prompt_templates(&options);
        assert_eq!(only_cli.templates.len(), 1);
        assert_eq!(only_cli.templates[0].name, "cli");
    }
}
