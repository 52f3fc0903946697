//! Prompt templates: markdown files that become slash commands. `/review src/lib.rs`
//! expands `review.md` with its arguments before the text is sent to the model.
//!
//! Found (pi 0.73 order, first of a name wins) in the project settings' `prompts` entries,
//! `<cwd>/.pi/prompts/`, the global settings' entries, `<agent_dir>/prompts/`, then the
//! `--prompt-template` paths. The automatic folders are not scanned recursively; a folder
//! named in the settings is. The name is the file name without `.md`; the description is
//! the frontmatter `description` or the first non-empty line (cut at 60 characters).
//!
//! Arguments are split as pi 1.6 splits them (shell-like quotes that open only at the
//! start of an argument) and substituted in one pass: `$1`…, `$@`/`$ARGUMENTS`,
//! `${N:-default}`, `${@:-default}`, `${@:N}` and `${@:N:L}` (see [`substitute_args`]).
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

/// Splits an argument string as pi 1.6 does: whitespace separates; a single or double
/// quote at the start of an argument groups up to the same quote (removed; `\"` inside
/// `"…"`, `\'` inside `'…'` keep the quote as text, other backslashes stay); a quote
/// inside a word is text; a quote never closed is text and the rest is split normally.
/// An empty quoted argument (`""`) is kept.
pub fn parse_command_args(input: &str) -> Vec<String> {
    let chars: Vec<char> = input.chars().collect();
    let mut args = Vec::new();
    let mut current = String::new();
    let mut has_token = false;
    let mut quote: Option<(char, usize)> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match quote {
            Some((q, _)) => {
                if c == '\\' && chars.get(i + 1) == Some(&q) {
                    current.push(q);
                    i += 1;
                } else if c == q {
                    quote = None;
                } else {
                    current.push(c);
                }
            }
            None if (c == '"' || c == '\'') && !has_token => {
                quote = Some((c, i));
                has_token = true;
            }
            None if c.is_whitespace() => {
                if has_token {
                    args.push(std::mem::take(&mut current));
                    has_token = false;
                }
            }
            None => {
                current.push(c);
                has_token = true;
            }
        }
        if let Some((q, start)) = quote
            && i + 1 >= chars.len()
        {
            // Never closed: the quote is text and what followed it is read again unquoted
            // (the argument was empty when the quote opened it).
            quote = None;
            current = q.to_string();
            i = start;
        }
        i += 1;
    }
    if has_token {
        args.push(current);
    }
    args
}

/// Digits at the start of `s` and the rest.
fn leading_digits(s: &str) -> Option<(&str, &str)> {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    (n > 0).then(|| s.split_at(n))
}

/// A number of a placeholder (too large for `usize`: as large as can be).
fn number(digits: &str) -> usize {
    digits.parse::<usize>().unwrap_or(usize::MAX)
}

/// The argument at 1-based `position` (`$0` and out of range: none).
fn positional<'a>(args: &'a [String], digits: &str) -> Option<&'a str> {
    number(digits)
        .checked_sub(1)
        .and_then(|i| args.get(i))
        .map(String::as_str)
}

/// One placeholder at the start of `s` (which starts with `$`): its replacement and the
/// rest of `s`, or `None` when `s` starts with no placeholder.
fn placeholder<'a>(s: &'a str, args: &[String], all: &str) -> Option<(String, &'a str)> {
    if let Some(inner) = s.strip_prefix("${") {
        // `${N:-default}`, `${@:-default}`, `${ARGUMENTS:-default}`.
        let target = leading_digits(inner)
            .map(|(d, tail)| (Some(d), tail))
            .or_else(|| inner.strip_prefix('@').map(|tail| (None, tail)))
            .or_else(|| inner.strip_prefix("ARGUMENTS").map(|tail| (None, tail)));
        if let Some((digits, tail)) = target
            && let Some(body) = tail.strip_prefix(":-")
            && let Some(close) = body.find('}')
        {
            let value = match digits {
                Some(d) => positional(args, d).unwrap_or(""),
                None => all,
            };
            let default = &body[..close];
            let chosen = if value.is_empty() { default } else { value };
            return Some((chosen.to_string(), &body[close + 1..]));
        }
        // `${@:N}` and `${@:N:L}`; `${@:0}` means `${@:1}`, as in bash.
        let (start, tail) = leading_digits(inner.strip_prefix("@:")?)?;
        let (length, tail) = match tail.strip_prefix(':') {
            Some(after) => {
                let (l, t) = leading_digits(after)?;
                (Some(number(l)), t)
            }
            None => (None, tail),
        };
        let tail = tail.strip_prefix('}')?;
        let from = number(start).saturating_sub(1).min(args.len());
        let to = length.map_or(args.len(), |l| from.saturating_add(l).min(args.len()));
        return Some((args[from..to].join(" "), tail));
    }
    let after = s.strip_prefix('$')?;
    if let Some(tail) = after.strip_prefix("ARGUMENTS") {
        return Some((all.to_string(), tail));
    }
    if let Some(tail) = after.strip_prefix('@') {
        return Some((all.to_string(), tail));
    }
    let (digits, tail) = leading_digits(after)?;
    Some((positional(args, digits).unwrap_or("").to_string(), tail))
}

/// Replaces the placeholders of `content` with `args` in one left-to-right pass, as pi
/// 1.6 does: `$1`…, `$@` and `$ARGUMENTS`, `${N:-default}`, `${@:-default}` and
/// `${ARGUMENTS:-default}` (the default when the value is missing or empty), `${@:N}` and
/// `${@:N:L}`. Inserted values and defaults are not scanned again.
pub fn substitute_args(content: &str, args: &[String]) -> String {
    let all = args.join(" ");
    let mut out = String::with_capacity(content.len());
    let mut rest = content;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        match placeholder(&rest[i..], args, &all) {
            Some((value, tail)) => {
                out.push_str(&value);
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

/// The expansion of `/name args` if `name` is a template (`None` otherwise: the text is
/// sent as it is). The name ends at the first whitespace, as in pi.
pub fn expand_prompt_template(text: &str, templates: &[PromptTemplate]) -> Option<String> {
    let rest = text.strip_prefix('/')?;
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let (name, args) = rest.split_at(end);
    if name.is_empty() {
        return None;
    }
    let template = templates.iter().find(|t| t.name == name)?;
    Some(substitute_args(
        &template.content,
        &parse_command_args(args.trim_start()),
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
    fn substitution_is_one_pass_as_in_pi_1_6() {
        // A value inserted for `$1` is not scanned again.
        assert_eq!(substitute_args("$1", &args(&["$@", "x"])), "$@");
        assert_eq!(substitute_args("[$1]", &args(&["$2", "b"])), "[$2]");
    }

    #[test]
    fn edge_cases_match_pi_1_6() {
        // Outputs recorded from pi 1.6.0's parseCommandArgs + substituteArgs.
        let cases = [
            ("$1 $2 $@", r#"a "b c" d"#, "a b c a b c d"),
            (
                "${@:2} | ${@:2:1} | ${@:0} | ${@:5}",
                "w x y z",
                "x y z | x | w x y z | ",
            ),
            ("$1", r#""$@" x"#, "$@"),
            ("[$1][$10][$0]", "a b", "[a][][]"),
            ("$ARGUMENTS$@", r#"'it"s' fine"#, r#"it"s fineit"s fine"#),
            ("${@:1:0}|${@:2:", "a b c", "|${@:2:"),
            ("$$1 $", "q", "$q $"),
            ("Focus on ${1:-correctness}.", "", "Focus on correctness."),
            ("Focus on ${1:-correctness}.", "speed", "Focus on speed."),
            (
                "${2:-none}|${@:-all}|${ARGUMENTS:-args}",
                "",
                "none|all|args",
            ),
            (
                "${2:-none}|${@:-all}|${ARGUMENTS:-args}",
                "a b",
                "b|a b|a b",
            ),
            ("${1:-$2} ${1:-x", "a", "a ${1:-x"),
            ("${1:-}|${0:-zero}|${1}", r#""""#, "|zero|${1}"),
            ("$1|$2", "doesn't stop", "doesn't|stop"),
            ("$1|$2", r#""the \"fast\" path" x"#, r#"the "fast" path|x"#),
            ("$1|$2|$3", r#""open quote rest"#, r#""open|quote|rest"#),
            ("$1|$2", r#"a"b c"d"#, r#"a"b|c"d"#),
            ("[$1][$2]", r#"'' """#, "[][]"),
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
        assert_eq!(parse_command_args(r#"a"b c"d"#), ["a\"b", "c\"d"]);
        assert_eq!(parse_command_args(r#"'' "" x"#), ["", "", "x"]);
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
