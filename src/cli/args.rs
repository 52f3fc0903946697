//! Command-line arguments: the flags of pi 1.6, parsed as pi parses them.
//!
//! pi's own parser is hand-written and tolerant, and scripts rely on that, so a pre-pass
//! reads the command line the way pi does and hands clap only well-formed `--long=value`
//! and `--flag` arguments: pi's multi-letter short flags (`-nt`, `-xt`, `-ne`, …) are
//! accepted, an unknown short option is an error, unknown `--flags` are set aside
//! (extensions may claim them), a known flag takes the next argument as its value even
//! when it starts with `-`, `-p` takes the next argument as a message, and `--` ends the
//! options. Problems pi reports as errors (a missing or invalid `--mode`, an empty
//! `--name`, a `--tools` list mixing names and `+`/`-` entries, …) are collected in
//! [`Args::errors`]; pi's warnings (an invalid `--thinking`) in [`Args::warnings`].
//! Positional arguments starting with `@` are files; the others are messages.

use std::ffi::OsString;

use clap::{CommandFactory, Parser};

use crate::ai::model::ThinkingLevel;

/// pi's command-line flags (`pi --help` lists them; the text is in `cli::help`).
#[derive(Parser, Debug, Default, Clone, PartialEq)]
#[command(name = "pi", disable_version_flag = true, disable_help_flag = true)]
pub struct Cli {
    /// Show the help text
    #[arg(short = 'h', long)]
    pub help: bool,
    /// Show the version number
    #[arg(short = 'v', long = "version")]
    pub version: bool,
    /// Provider name (used with --model)
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
    /// Model pattern or id ("provider/id", fuzzy, optional ":<thinking>")
    #[arg(long, value_name = "PATTERN")]
    pub model: Option<String>,
    /// API key for the chosen provider (not saved)
    #[arg(long = "api-key", value_name = "KEY")]
    pub api_key: Option<String>,
    /// Replace the system prompt (text or a file path)
    #[arg(long = "system-prompt", value_name = "TEXT|FILE")]
    pub system_prompt: Option<String>,
    /// Append text or file contents to the system prompt (repeatable)
    #[arg(long = "append-system-prompt", value_name = "TEXT|FILE")]
    pub append_system_prompt: Vec<String>,
    /// Output mode: text (default), json or rpc
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
    /// Non-interactive: answer the prompt(s) and exit
    #[arg(short = 'p', long = "print")]
    pub print: bool,
    /// Continue the most recent session
    #[arg(short = 'c', long = "continue")]
    pub continue_session: bool,
    /// Pick a session to resume
    #[arg(short = 'r', long)]
    pub resume: bool,
    /// Use a session file or a session id prefix
    #[arg(long, value_name = "PATH|ID")]
    pub session: Option<String>,
    /// Open the current directory's session with this id, or create it
    #[arg(long = "session-id", value_name = "ID")]
    pub session_id: Option<String>,
    /// Fork a session file or id prefix into a new session
    #[arg(long, value_name = "PATH|ID")]
    pub fork: Option<String>,
    /// Directory for session storage and lookup
    #[arg(long = "session-dir", value_name = "DIR")]
    pub session_dir: Option<String>,
    /// Do not save the session
    #[arg(long = "no-session")]
    pub no_session: bool,
    /// The session's display name
    #[arg(short = 'n', long, value_name = "NAME")]
    pub name: Option<String>,
    /// Comma-separated model patterns to cycle with Ctrl+P (globs allowed)
    #[arg(long, value_name = "PATTERNS")]
    pub models: Option<String>,
    /// Disable all tools by default (built-in and extension)
    #[arg(long = "no-tools")]
    pub no_tools: bool,
    /// Disable built-in tools but keep extension tools
    #[arg(long = "no-builtin-tools")]
    pub no_builtin_tools: bool,
    /// Comma-separated allowlist of tools (patterns with `*`), or only `+name`/`-name`
    #[arg(short = 't', long, value_name = "TOOLS")]
    pub tools: Option<String>,
    /// Comma-separated denylist of tools (patterns with `*`), applied last
    #[arg(long = "exclude-tools", value_name = "TOOLS")]
    pub exclude_tools: Option<String>,
    /// Thinking level: off, minimal, low, medium, high, xhigh, max
    #[arg(long, value_name = "LEVEL")]
    pub thinking: Option<String>,
    /// Load an extension, a pi package for this run (npm:<spec>, git:<repo>), or
    /// builtin:<name> (repeatable)
    #[arg(short = 'e', long = "extension", value_name = "PATH|SOURCE")]
    pub extensions: Vec<String>,
    /// Do not discover extensions (explicit -e paths still load)
    #[arg(long = "no-extensions")]
    pub no_extensions: bool,
    /// Disable pi's built-in MCP support for this run
    #[arg(long = "no-mcp")]
    pub no_mcp: bool,
    /// Load a skill file or directory (repeatable)
    #[arg(long = "skill", value_name = "PATH")]
    pub skills: Vec<String>,
    /// Do not discover or load skills
    #[arg(long = "no-skills")]
    pub no_skills: bool,
    /// Load a prompt template file or directory (repeatable)
    #[arg(long = "prompt-template", value_name = "PATH")]
    pub prompt_templates: Vec<String>,
    /// Do not discover or load prompt templates
    #[arg(long = "no-prompt-templates")]
    pub no_prompt_templates: bool,
    /// Load a theme file or directory (repeatable)
    #[arg(long = "theme", value_name = "PATH")]
    pub themes: Vec<String>,
    /// The interactive theme for this run (not saved)
    #[arg(long = "use-theme", value_name = "NAME[/NAME]")]
    pub use_theme: Option<String>,
    /// Do not discover themes
    #[arg(long = "no-themes")]
    pub no_themes: bool,
    /// Do not load AGENTS.md / CLAUDE.md files
    #[arg(long = "no-context-files")]
    pub no_context_files: bool,
    /// Export a session file to HTML and exit
    #[arg(long, value_name = "FILE")]
    pub export: Option<String>,
    /// List available models, optionally filtered
    #[arg(long = "list-models", value_name = "SEARCH", num_args = 0..=1, default_missing_value = "")]
    pub list_models: Option<String>,
    /// Always show the full startup header
    #[arg(long)]
    pub verbose: bool,
    /// TUI mode: fullscreen or regular
    #[arg(long = "tui-mode", value_name = "MODE")]
    pub tui_mode: Option<String>,
    /// Trust project-local files for this run
    #[arg(short = 'a', long = "approve")]
    pub approve: bool,
    /// Ignore project-local files for this run
    #[arg(long = "no-approve")]
    pub no_approve: bool,
    /// No startup network use (same as PI_OFFLINE=1)
    #[arg(long)]
    pub offline: bool,
}

/// The output `--mode` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMode {
    Text,
    Json,
    Rpc,
}

/// How this run talks to the user, as pi 1.6 decides it (see [`Args::app_mode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppMode {
    /// The terminal UI.
    Interactive,
    /// Answer the prompts, print the final text, exit.
    Print,
    /// `--mode json`: the prompts' events as JSON lines.
    Json,
    /// `--mode rpc`: JSON commands on stdin.
    Rpc,
}

/// `--tui-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TuiMode {
    Fullscreen,
    Regular,
}

/// The parsed command line plus what pi's tolerant parser adds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Args {
    pub cli: Cli,
    /// `--mode` value if valid.
    pub mode: Option<OutputMode>,
    /// `--thinking` value if valid.
    pub thinking: Option<ThinkingLevel>,
    /// `--tui-mode` value if valid.
    pub tui_mode: Option<TuiMode>,
    /// `@file` arguments (without the `@`).
    pub file_args: Vec<String>,
    /// Messages, in order.
    pub messages: Vec<String>,
    /// `--flag [value]` pi does not know (for extensions): name → value (`None` = boolean).
    pub unknown_flags: Vec<(String, Option<String>)>,
    /// Names of unknown flags whose value was the next argument (`--plan notes`, not
    /// `--plan=notes`): if the flag turns out to be a boolean, that argument was meant as
    /// a message (pi drops it; startup warns).
    pub detached_flag_values: Vec<String>,
    /// Problems that stop pi before it starts (printed as `Error: …`, exit code 1).
    pub errors: Vec<String>,
    /// Non-fatal problems to print before starting.
    pub warnings: Vec<String>,
    /// `--approve` / `-a` (`true`) or `--no-approve` / `-na` (`false`): the project trust
    /// decision for this run, the last one given winning as in pi.
    pub project_trust: Option<bool>,
}

impl Args {
    /// `--tools`, split and trimmed (`None` when not given, or when the list was refused:
    /// see [`Args::errors`]).
    pub fn tool_names(&self) -> Option<Vec<String>> {
        self.cli.tools.as_ref().map(|t| split_list(t))
    }

    /// `--exclude-tools`, split and trimmed.
    pub fn excluded_tools(&self) -> Vec<String> {
        self.cli
            .exclude_tools
            .as_ref()
            .map(|t| split_list(t))
            .unwrap_or_default()
    }

    /// `--models`, split and trimmed.
    pub fn model_patterns(&self) -> Option<Vec<String>> {
        self.cli.models.as_ref().map(|m| split_list(m))
    }

    /// pi 1.6's choice of mode: `--mode rpc` and `--mode json` are what they say;
    /// otherwise `--print`, or a stdin or stdout that is not a terminal, means print
    /// mode, and the terminal UI runs only with both (also for `--mode text`).
    pub fn app_mode(&self, stdin_is_terminal: bool, stdout_is_terminal: bool) -> AppMode {
        match self.mode {
            Some(OutputMode::Rpc) => AppMode::Rpc,
            Some(OutputMode::Json) => AppMode::Json,
            Some(OutputMode::Text) | None
                if self.cli.print || !stdin_is_terminal || !stdout_is_terminal =>
            {
                AppMode::Print
            }
            Some(OutputMode::Text) | None => AppMode::Interactive,
        }
    }

    /// [`Args::app_mode`] for this process's stdin and stdout.
    pub fn app_mode_here(&self) -> AppMode {
        use std::io::IsTerminal;
        self.app_mode(
            std::io::stdin().is_terminal(),
            std::io::stdout().is_terminal(),
        )
    }

    /// `--name`, trimmed (an empty one is refused by [`parse`]).
    pub fn session_name(&self) -> Option<String> {
        self.cli
            .name
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
    }
}

fn split_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(|x| x.trim().to_string())
        .filter(|x| !x.is_empty())
        .collect()
}

/// pi's multi-letter short flags and their long forms.
const MULTI_LETTER_SHORTS: [(&str, &str); 8] = [
    ("-na", "--no-approve"),
    ("-nt", "--no-tools"),
    ("-nbt", "--no-builtin-tools"),
    ("-xt", "--exclude-tools"),
    ("-ne", "--no-extensions"),
    ("-ns", "--no-skills"),
    ("-np", "--no-prompt-templates"),
    ("-nc", "--no-context-files"),
];

/// What the pre-pass knows about the flags (read from clap's definition, so a flag
/// added there is known here too).
struct Flags {
    command: clap::Command,
}

impl Flags {
    /// The long name of `-x` or of one of pi's multi-letter short flags.
    fn long_of_short(&self, arg: &str) -> Option<String> {
        if let Some((_, long)) = MULTI_LETTER_SHORTS.iter().find(|(s, _)| *s == arg) {
            return Some(long.trim_start_matches('-').to_string());
        }
        let mut chars = arg.strip_prefix('-')?.chars();
        let (Some(c), None) = (chars.next(), chars.next()) else {
            return None;
        };
        self.command
            .get_arguments()
            .find(|a| a.get_short() == Some(c))
            .and_then(|a| a.get_long())
            .map(str::to_string)
    }

    fn is_known(&self, long: &str) -> bool {
        self.command
            .get_arguments()
            .any(|a| a.get_long() == Some(long))
    }

    fn takes_value(&self, long: &str) -> bool {
        self.command
            .get_arguments()
            .find(|a| a.get_long() == Some(long))
            .is_some_and(|a| a.get_action().takes_values())
    }
}

/// The pre-pass's result: what clap gets, and what pi's own rules decided.
#[derive(Default)]
struct PrePass {
    kept: Vec<String>,
    unknown_flags: Vec<(String, Option<String>)>,
    detached_flag_values: Vec<String>,
    file_args: Vec<String>,
    messages: Vec<String>,
    errors: Vec<String>,
    /// `-a` / `-na`, the last one given.
    project_trust: Option<bool>,
}

impl PrePass {
    fn positional(&mut self, arg: &str) {
        match arg.strip_prefix('@') {
            Some(file) => self.file_args.push(file.to_string()),
            None => self.messages.push(arg.to_string()),
        }
    }

    fn set(&mut self, long: &str, value: &str) {
        self.kept.push(format!("--{long}={value}"));
    }

    /// A flag whose value pi requires: the `=value`, else the next argument if it may
    /// be one (`next` is `None` when it may not), else `missing` is an error. Returns
    /// the index of the last argument used (`i`: the flag's own).
    fn required(
        &mut self,
        (long, inline, next): (&str, Option<&str>, Option<&str>),
        missing: &str,
        i: usize,
    ) -> usize {
        match (inline, next) {
            (Some(value), _) => {
                self.set(long, value);
                i
            }
            (None, Some(value)) => {
                self.set(long, value);
                i + 1
            }
            (None, None) => {
                self.errors.push(missing.to_string());
                i
            }
        }
    }
}

/// Parses `argv` (without the program name).
pub fn parse<I, T>(argv: I) -> Result<Args, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let raw: Vec<String> = argv
        .into_iter()
        .map(|a| a.into().to_string_lossy().into_owned())
        .collect();
    let flags = Flags {
        command: Cli::command(),
    };
    let mut pre = PrePass::default();
    let mut i = 0;
    while i < raw.len() {
        i = pre_pass_one(&raw, i, &flags, &mut pre) + 1;
    }

    let cli = Cli::try_parse_from(std::iter::once("pi".to_string()).chain(pre.kept))?;
    let mut args = Args {
        cli,
        file_args: pre.file_args,
        messages: pre.messages,
        unknown_flags: pre.unknown_flags,
        detached_flag_values: pre.detached_flag_values,
        errors: pre.errors,
        project_trust: pre.project_trust,
        ..Args::default()
    };
    check_values(&mut args);
    Ok(args)
}

/// Reads the argument at `i` (and the values it takes) into `pre`; returns the index of
/// the last argument it used.
fn pre_pass_one(raw: &[String], i: usize, flags: &Flags, pre: &mut PrePass) -> usize {
    let arg = raw[i].as_str();
    if arg == "--" {
        for rest in &raw[i + 1..] {
            pre.positional(rest);
        }
        return raw.len();
    }
    if !arg.starts_with('-') {
        pre.positional(arg);
        return i;
    }
    let (long, inline) = match arg.strip_prefix("--") {
        Some(rest) => match rest.split_once('=') {
            Some((name, value)) => (name.to_string(), Some(value.to_string())),
            None => (rest.to_string(), None),
        },
        None => match flags.long_of_short(arg) {
            Some(long) => (long, None),
            None => {
                pre.errors.push(format!("Unknown option: {arg}"));
                return i;
            }
        },
    };
    if !flags.is_known(&long) {
        return unknown_flag(raw, i, &long, inline, pre);
    }
    match long.as_str() {
        "approve" => pre.project_trust = Some(true),
        "no-approve" => pre.project_trust = Some(false),
        _ => {}
    }
    let next = raw.get(i + 1).map(String::as_str);
    match long.as_str() {
        "mode" => pre.required(
            (
                &long,
                inline.as_deref(),
                next.filter(|n| !n.starts_with('-')),
            ),
            "--mode requires text, json, or rpc",
            i,
        ),
        // Any next argument is the name, as in pi.
        "name" => pre.required(
            (&long, inline.as_deref(), next),
            "--name requires a value",
            i,
        ),
        "use-theme" => pre.required(
            (
                &long,
                inline.as_deref(),
                next.filter(|n| !n.starts_with('-')),
            ),
            "--use-theme requires a theme name",
            i,
        ),
        "tui-mode" => pre.required(
            (
                &long,
                inline.as_deref(),
                next.filter(|n| !n.starts_with('-')),
            ),
            "--tui-mode requires regular or fullscreen",
            i,
        ),
        "list-models" => match inline.as_deref() {
            Some(search) => {
                pre.set("list-models", search);
                i
            }
            None => match next.filter(|n| !n.starts_with(['-', '@'])) {
                Some(search) => {
                    pre.set("list-models", search);
                    i + 1
                }
                None => {
                    pre.kept.push("--list-models".to_string());
                    i
                }
            },
        },
        "print" => {
            pre.kept.push("--print".to_string());
            // pi takes the next argument as a message unless it looks like a flag or a
            // file (`---` starts a message).
            match next {
                Some(n) if !n.starts_with('@') && (!n.starts_with('-') || n.starts_with("---")) => {
                    pre.messages.push(n.to_string());
                    i + 1
                }
                _ => i,
            }
        }
        _ if flags.takes_value(&long) => match inline {
            Some(value) => {
                check_flag_value(arg, &long, &value, pre);
                pre.set(&long, &value);
                i
            }
            None => match next {
                Some(value) => {
                    check_flag_value(arg, &long, value, pre);
                    pre.set(&long, value);
                    i + 1
                }
                // As pi: a value flag at the very end is an unknown short option, or an
                // unknown long flag (reported once the extensions are loaded).
                None if !arg.starts_with("--") => {
                    pre.errors.push(format!("Unknown option: {arg}"));
                    i
                }
                None => {
                    pre.unknown_flags.push((long, None));
                    i
                }
            },
        },
        _ => {
            pre.kept.push(format!("--{long}"));
            i
        }
    }
}

/// A `--flag` pi does not know: kept for the extensions, with the next argument as its
/// value unless that looks like a flag or a file.
fn unknown_flag(
    raw: &[String],
    i: usize,
    name: &str,
    inline: Option<String>,
    pre: &mut PrePass,
) -> usize {
    if let Some(value) = inline {
        pre.unknown_flags.push((name.to_string(), Some(value)));
        return i;
    }
    match raw.get(i + 1) {
        Some(next) if !next.starts_with('-') && !next.starts_with('@') => {
            pre.unknown_flags
                .push((name.to_string(), Some(next.clone())));
            pre.detached_flag_values.push(name.to_string());
            i + 1
        }
        _ => {
            pre.unknown_flags.push((name.to_string(), None));
            i
        }
    }
}

/// pi's checks of a flag's value made while parsing (`arg` as written: `-t` or `--tools`).
fn check_flag_value(arg: &str, long: &str, value: &str, pre: &mut PrePass) {
    if long == "tools"
        && let Some(problem) = crate::core::tool_selection::tool_list_error(&split_list(value))
    {
        pre.errors.push(format!("{arg}: {problem}"));
    }
}

/// The values clap took as text, checked as pi checks them.
fn check_values(args: &mut Args) {
    if let Some(mode) = &args.cli.mode {
        args.mode = match mode.as_str() {
            "text" => Some(OutputMode::Text),
            "json" => Some(OutputMode::Json),
            "rpc" => Some(OutputMode::Rpc),
            other => {
                args.errors.push(format!(
                    "Invalid mode \"{other}\". Valid values: text, json, rpc"
                ));
                None
            }
        };
    }
    if let Some(mode) = &args.cli.tui_mode {
        args.tui_mode = match mode.as_str() {
            "fullscreen" => Some(TuiMode::Fullscreen),
            "regular" => Some(TuiMode::Regular),
            other => {
                args.errors.push(format!(
                    "Invalid TUI mode \"{other}\". Valid values: regular, fullscreen"
                ));
                None
            }
        };
    }
    if let Some(level) = &args.cli.thinking {
        args.thinking = ThinkingLevel::parse(level);
        if args.thinking.is_none() {
            args.warnings.push(format!(
                "Invalid thinking level \"{level}\". Valid values: off, minimal, low, medium, high, xhigh, max"
            ));
        }
    }
    if args
        .errors
        .iter()
        .any(|e| e.starts_with("--tools:") || e.starts_with("-t:"))
    {
        args.cli.tools = None;
    }
    if args.cli.name.is_some() && args.session_name().is_none() {
        args.errors
            .push("--name requires a non-empty value".to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn print_with_message_files_and_model() {
        let a = parse(["-p", "@a.md", "fix it", "--model", "mock/m:high", "-c"]).unwrap();
        assert!(a.cli.print && a.cli.continue_session);
        assert_eq!(a.file_args, ["a.md"]);
        assert_eq!(a.messages, ["fix it"]);
        assert_eq!(a.cli.model.as_deref(), Some("mock/m:high"));
        assert_eq!(a.app_mode(true, true), AppMode::Print);
        assert!(a.errors.is_empty());
    }

    #[test]
    fn multi_letter_shorts_and_unknown_flags_like_pi() {
        let a = parse(["-nt", "-nc", "--plan", "--depth", "3", "--x=y", "hello"]).unwrap();
        assert!(a.cli.no_tools && a.cli.no_context_files);
        assert_eq!(
            a.unknown_flags,
            [
                ("plan".to_string(), None),
                ("depth".to_string(), Some("3".to_string())),
                ("x".to_string(), Some("y".to_string()))
            ]
        );
        assert_eq!(a.messages, ["hello"]);
        assert_eq!(a.detached_flag_values, ["depth"]);
        let a = parse(["-xt", "bash,w*", "-n", "Refactor", "--no-mcp"]).unwrap();
        assert_eq!(a.excluded_tools(), ["bash", "w*"]);
        assert_eq!(a.session_name().as_deref(), Some("Refactor"));
        assert!(a.cli.no_mcp);
    }

    #[test]
    fn approve_flags_the_last_one_wins() {
        assert_eq!(parse(["-a"]).unwrap().project_trust, Some(true));
        assert_eq!(
            parse(["--approve", "-na", "hi"]).unwrap().project_trust,
            Some(false)
        );
        assert_eq!(
            parse(["--no-approve", "--approve"]).unwrap().project_trust,
            Some(true)
        );
        assert_eq!(parse(["hi"]).unwrap().project_trust, None);
    }

    #[test]
    fn invalid_mode_is_an_error_and_invalid_thinking_a_warning() {
        let a = parse(["--mode", "fancy", "--thinking", "bogus"]).unwrap();
        assert_eq!(a.mode, None);
        assert_eq!(a.thinking, None);
        assert_eq!(
            a.errors,
            ["Invalid mode \"fancy\". Valid values: text, json, rpc"]
        );
        assert_eq!(a.warnings.len(), 1);
        assert_eq!(
            parse(["--mode"]).unwrap().errors,
            ["--mode requires text, json, or rpc"]
        );
        assert_eq!(
            parse(["--mode", "--verbose"]).unwrap().errors,
            ["--mode requires text, json, or rpc"]
        );
    }

    #[test]
    fn unknown_short_options_are_errors() {
        assert_eq!(parse(["-z"]).unwrap().errors, ["Unknown option: -z"]);
        assert_eq!(parse(["-pc"]).unwrap().errors, ["Unknown option: -pc"]);
        // A value flag at the end: the short form is unknown, the long one is left to
        // the extensions.
        assert_eq!(parse(["-t"]).unwrap().errors, ["Unknown option: -t"]);
        let a = parse(["--model"]).unwrap();
        assert!(a.errors.is_empty());
        assert_eq!(a.unknown_flags, [("model".to_string(), None)]);
    }

    #[test]
    fn double_dash_ends_the_options() {
        let a = parse(["-p", "--", "- a point", "--model", "@f"]).unwrap();
        assert_eq!(a.messages, ["- a point", "--model"]);
        assert_eq!(a.file_args, ["f"]);
        assert_eq!(a.cli.model, None);
    }

    #[test]
    fn print_takes_the_next_message() {
        let a = parse(["-p", "---dashes", "--model", "m"]).unwrap();
        assert_eq!(a.messages, ["---dashes"]);
        assert!(a.errors.is_empty());
    }

    #[test]
    fn modes_follow_the_terminals() {
        let text = parse(["--mode", "text"]).unwrap();
        assert_eq!(text.app_mode(true, true), AppMode::Interactive);
        assert_eq!(text.app_mode(true, false), AppMode::Print);
        let plain = parse(["hi"]).unwrap();
        assert_eq!(plain.app_mode(false, true), AppMode::Print);
        assert_eq!(plain.app_mode(true, true), AppMode::Interactive);
        let json = parse(["--mode", "json"]).unwrap();
        assert_eq!(json.app_mode(false, false), AppMode::Json);
    }

    #[test]
    fn tui_mode_theme_and_name_values() {
        let a = parse(["--tui-mode", "fullscreen", "--use-theme", "light/dark"]).unwrap();
        assert_eq!(a.tui_mode, Some(TuiMode::Fullscreen));
        assert_eq!(a.cli.use_theme.as_deref(), Some("light/dark"));
        assert_eq!(
            parse(["--tui-mode", "big"]).unwrap().errors,
            ["Invalid TUI mode \"big\". Valid values: regular, fullscreen"]
        );
        assert_eq!(
            parse(["--tui-mode"]).unwrap().errors,
            ["--tui-mode requires regular or fullscreen"]
        );
        assert_eq!(
            parse(["--use-theme", "-p"]).unwrap().errors,
            ["--use-theme requires a theme name"]
        );
        assert_eq!(
            parse(["--name"]).unwrap().errors,
            ["--name requires a value"]
        );
        assert_eq!(
            parse(["-n", "  "]).unwrap().errors,
            ["--name requires a non-empty value"]
        );
    }

    #[test]
    fn tool_lists_mixing_names_and_modifiers_are_refused() {
        let a = parse(["--tools", "+grep,read"]).unwrap();
        assert_eq!(
            a.errors,
            ["--tools: tool names cannot be mixed with +name or -name entries"]
        );
        assert_eq!(a.tool_names(), None);
        assert_eq!(
            parse(["-t", "+g*"]).unwrap().errors,
            ["-t: +name and -name entries take exact tool names, not patterns: +g*"]
        );
        assert_eq!(
            parse(["-t", "+grep,-write"]).unwrap().tool_names().unwrap(),
            ["+grep", "-write"]
        );
    }

    #[test]
    fn list_models_takes_an_optional_search() {
        assert_eq!(
            parse(["--list-models"]).unwrap().cli.list_models.as_deref(),
            Some("")
        );
        assert_eq!(
            parse(["--list-models", "sonnet"])
                .unwrap()
                .cli
                .list_models
                .as_deref(),
            Some("sonnet")
        );
    }

    #[test]
    fn repeated_flags_accumulate_and_values_may_start_with_dash() {
        let a = parse([
            "--append-system-prompt",
            "- be brief",
            "--append-system-prompt",
            "b",
            "--tools",
            "read, grep",
            "--session-id",
            "-x",
        ])
        .unwrap();
        assert_eq!(a.cli.append_system_prompt, ["- be brief", "b"]);
        assert_eq!(a.tool_names().unwrap(), ["read", "grep"]);
        assert_eq!(a.cli.session_id.as_deref(), Some("-x"));
    }
}
