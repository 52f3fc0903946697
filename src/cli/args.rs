//! Command-line arguments: the flags of pi 0.73, parsed with clap.
//!
//! pi's own parser is hand-written and tolerant, and scripts rely on that, so a small
//! pre-pass keeps its behaviour where clap would differ: pi's multi-letter short flags
//! (`-nt`, `-nbt`, `-ne`, `-ns`, `-np`, `-nc`) are accepted, unknown `--flags` are set aside
//! (extensions may claim them) instead of failing, and an invalid `--mode` or `--thinking`
//! value is a warning, not an error. Positional arguments starting with `@` are files;
//! the others are messages.

use std::ffi::OsString;

use clap::{CommandFactory, Parser};

use crate::ai::model::ThinkingLevel;

const AFTER_HELP: &str = "\
Examples:
  pi                                  interactive session in this directory
  pi \"List all .rs files in src/\"      interactive, starting with a prompt
  pi @notes.md @shot.png \"Summarize\"   include files in the first message
  pi -p \"Explain src/main.rs\"          answer once and exit
  pi -c \"What did we discuss?\"         continue the most recent session
  pi --model openai/gpt-4o            pick a model (provider/id, id, or a fuzzy pattern)
  pi --model sonnet:high              pick a model and a thinking level
  pi --models sonnet,haiku            models to cycle through with Ctrl+P
  pi --tools read,grep,find,ls -p \"Review src/\"   read-only tools
  pi --export session.jsonl out.html  write a session as a self-contained HTML page

Environment:
  PI_CODING_AGENT_DIR          config directory (default ~/.pi/agent)
  PI_CODING_AGENT_SESSION_DIR  session directory (--session-dir wins)
  PI_OFFLINE                   1/true/yes: no startup network use
  ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, GROQ_API_KEY, CEREBRAS_API_KEY,
  XAI_API_KEY, OPENROUTER_API_KEY, MISTRAL_API_KEY, DEEPSEEK_API_KEY   provider keys

Built-in tools: read, bash, edit, write (on by default); grep, find, ls (read-only, off by default).";

/// pi's command-line flags.
#[derive(Parser, Debug, Default, Clone, PartialEq)]
#[command(
    name = "pi",
    about = "pi - a coding agent in your terminal (pi-rs)",
    disable_version_flag = true,
    after_help = AFTER_HELP
)]
pub struct Cli {
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
    /// Fork a session file or id prefix into a new session
    #[arg(long, value_name = "PATH|ID")]
    pub fork: Option<String>,
    /// Directory for session storage and lookup
    #[arg(long = "session-dir", value_name = "DIR")]
    pub session_dir: Option<String>,
    /// Do not save the session
    #[arg(long = "no-session")]
    pub no_session: bool,
    /// Comma-separated model patterns to cycle with Ctrl+P (globs allowed)
    #[arg(long, value_name = "PATTERNS")]
    pub models: Option<String>,
    /// Disable all tools by default (built-in and extension)
    #[arg(long = "no-tools")]
    pub no_tools: bool,
    /// Disable built-in tools but keep extension tools
    #[arg(long = "no-builtin-tools")]
    pub no_builtin_tools: bool,
    /// Comma-separated allowlist of tools
    #[arg(short = 't', long, value_name = "TOOLS")]
    pub tools: Option<String>,
    /// Thinking level: off, minimal, low, medium, high, xhigh
    #[arg(long, value_name = "LEVEL")]
    pub thinking: Option<String>,
    /// Load an extension, or a pi package for this run: npm:<spec>, git:<repo> (repeatable)
    #[arg(short = 'e', long = "extension", value_name = "PATH|SOURCE")]
    pub extensions: Vec<String>,
    /// Do not discover extensions (explicit -e paths still load)
    #[arg(long = "no-extensions")]
    pub no_extensions: bool,
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
    /// Trust project-local files for this run
    #[arg(short = 'a', long = "approve")]
    pub approve: bool,
    /// Ignore project-local files for this run
    #[arg(long = "no-approve")]
    pub no_approve: bool,
    /// No startup network use (same as PI_OFFLINE=1)
    #[arg(long)]
    pub offline: bool,
    /// Files (@path) and messages
    #[arg(value_name = "MESSAGES", allow_hyphen_values = false)]
    pub positional: Vec<String>,
}

/// How pi runs, from `--mode` / `--print` / a piped stdin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMode {
    Text,
    Json,
    Rpc,
}

/// The parsed command line plus what pi's tolerant parser adds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Args {
    pub cli: Cli,
    /// `--mode` value if valid.
    pub mode: Option<OutputMode>,
    /// `--thinking` value if valid.
    pub thinking: Option<ThinkingLevel>,
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
    /// Non-fatal problems to print before starting.
    pub warnings: Vec<String>,
    /// `--approve` / `-a` (`true`) or `--no-approve` / `-na` (`false`): the project trust
    /// decision for this run, the last one given winning as in pi.
    pub project_trust: Option<bool>,
}

impl Args {
    /// `--tools`, split and trimmed.
    pub fn tool_names(&self) -> Option<Vec<String>> {
        self.cli.tools.as_ref().map(|t| split_list(t))
    }

    /// `--models`, split and trimmed.
    pub fn model_patterns(&self) -> Option<Vec<String>> {
        self.cli.models.as_ref().map(|m| split_list(m))
    }

    /// Interactive unless printing, or a mode was given (pi: `--mode text` is non-interactive too).
    pub fn is_interactive(&self) -> bool {
        !self.cli.print && self.cli.mode.is_none()
    }
}

fn split_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(|x| x.trim().to_string())
        .filter(|x| !x.is_empty())
        .collect()
}

/// pi's package-manager subcommands.
/// pi's multi-letter short flags and their long forms.
const MULTI_LETTER_SHORTS: [(&str, &str); 7] = [
    ("-na", "--no-approve"),
    ("-nt", "--no-tools"),
    ("-nbt", "--no-builtin-tools"),
    ("-ne", "--no-extensions"),
    ("-ns", "--no-skills"),
    ("-np", "--no-prompt-templates"),
    ("-nc", "--no-context-files"),
];

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

    let command = Cli::command();
    let known_long: Vec<String> = command
        .get_arguments()
        .filter_map(|a| a.get_long().map(str::to_string))
        .chain(["help".to_string()])
        .collect();
    let takes_value = |name: &str| {
        command
            .get_arguments()
            .find(|a| a.get_long() == Some(name))
            .is_some_and(|a| a.get_action().takes_values())
    };

    let mut kept: Vec<String> = Vec::new();
    let mut unknown_flags = Vec::new();
    let mut detached_flag_values = Vec::new();
    let mut project_trust = None;
    let mut i = 0;
    while i < raw.len() {
        let arg = &raw[i];
        if arg == "--" {
            kept.extend(raw[i..].iter().cloned());
            break;
        }
        match arg.as_str() {
            "-a" | "--approve" => project_trust = Some(true),
            "-na" | "--no-approve" => project_trust = Some(false),
            _ => {}
        }
        if let Some((_, long)) = MULTI_LETTER_SHORTS.iter().find(|(s, _)| s == arg) {
            kept.push((*long).to_string());
        } else if let Some(rest) = arg.strip_prefix("--") {
            let name = rest.split('=').next().unwrap_or(rest);
            if known_long.iter().any(|k| k == name) {
                let attach = !rest.contains('=')
                    && takes_value(name)
                    && i + 1 < raw.len()
                    && (name != "list-models" || !raw[i + 1].starts_with(['-', '@']));
                if attach {
                    // Values of known flags are taken as they are, even if they start
                    // with `-` (e.g. `--append-system-prompt "- be brief"`), so hand them
                    // to clap attached with `=`.
                    i += 1;
                    kept.push(format!("--{name}={}", raw[i]));
                } else {
                    kept.push(arg.clone());
                }
            } else if let Some((n, v)) = rest.split_once('=') {
                unknown_flags.push((n.to_string(), Some(v.to_string())));
            } else {
                match raw.get(i + 1) {
                    Some(next) if !next.starts_with('-') && !next.starts_with('@') => {
                        unknown_flags.push((rest.to_string(), Some(next.clone())));
                        detached_flag_values.push(rest.to_string());
                        i += 1;
                    }
                    _ => unknown_flags.push((rest.to_string(), None)),
                }
            }
        } else {
            kept.push(arg.clone());
        }
        i += 1;
    }

    let cli = Cli::try_parse_from(std::iter::once("pi".to_string()).chain(kept))?;
    let mut args = Args {
        cli,
        unknown_flags,
        detached_flag_values,
        project_trust,
        ..Args::default()
    };
    if let Some(mode) = &args.cli.mode {
        args.mode = match mode.as_str() {
            "text" => Some(OutputMode::Text),
            "json" => Some(OutputMode::Json),
            "rpc" => Some(OutputMode::Rpc),
            other => {
                args.warnings.push(format!(
                    "Invalid mode \"{other}\" ignored. Valid values: text, json, rpc"
                ));
                None
            }
        };
        if args.mode.is_none() {
            args.cli.mode = None;
        }
    }
    if let Some(level) = &args.cli.thinking {
        args.thinking = ThinkingLevel::parse(level);
        if args.thinking.is_none() {
            args.warnings.push(format!(
                "Invalid thinking level \"{level}\" ignored. Valid values: off, minimal, low, medium, high, xhigh"
            ));
        }
    }
    for p in std::mem::take(&mut args.cli.positional) {
        match p.strip_prefix('@') {
            Some(file) => args.file_args.push(file.to_string()),
            None => args.messages.push(p),
        }
    }
    Ok(args)
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
        assert!(!a.is_interactive());
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
    fn invalid_mode_and_thinking_are_warnings() {
        let a = parse(["--mode", "fancy", "--thinking", "max"]).unwrap();
        assert_eq!(a.mode, None);
        assert_eq!(a.thinking, None);
        assert_eq!(a.warnings.len(), 2);
        assert!(a.is_interactive());
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
        ])
        .unwrap();
        assert_eq!(a.cli.append_system_prompt, ["- be brief", "b"]);
        assert_eq!(a.tool_names().unwrap(), ["read", "grep"]);
    }
}
