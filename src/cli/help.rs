//! `pi --help`: the commands, the flags of pi 1.6 and pi-rs's notes, laid out as pi's
//! help is (section headings in bold on a terminal).

use std::io::IsTerminal;

const COMMANDS: &str = "\
  pi install <source> [-l]     Install extension source and add to settings
  pi remove <source> [-l]      Remove extension source from settings
  pi uninstall <source> [-l]   Alias for remove
  pi update [source|self|pi]   Update pi, extensions, or model catalogs
  pi list                      List installed extensions from settings
  pi config [-l]               Open TUI to enable/disable package resources
  pi auth <command>            Log in or out, print credentials, or check provider readiness
  pi mcp <command>             Manage MCP servers (comes with a later version of pi-rs)
  pi <command> --help          Show help for install/remove/uninstall/update/list/config/auth/mcp";

const OPTIONS: &str = "\
  --provider <name>              Provider to search for --model (requires --model)
  --model <pattern>              Model pattern or ID (supports \"provider/id\" and optional \":<thinking>\")
  --api-key <key>                API key (defaults to env vars)
  --system-prompt <text>         System prompt (default: coding assistant prompt)
  --append-system-prompt <text>  Append text or file contents to the system prompt (can be used multiple times)
  --mode <mode>                  Output mode: text (default), json, or rpc
  --print, -p                    Non-interactive mode: process prompt and exit
  --continue, -c                 Continue the most recent session for the current directory
  --resume, -r                   Pick a session to resume
  --session <path|id>            Open a session by file path or full/partial ID
  --session-id <id>              Use the current directory's existing session with the ID, creating it otherwise
  --fork <path|id>               Fork a session by file path or full/partial ID into the current directory
  --session-dir <dir>            Directory for session storage and lookup
  --no-session                   Don't save session (ephemeral)
  --name, -n <name>              Set session display name
  --models <patterns>            Comma-separated model patterns for Ctrl+P cycling
                                 Supports globs (anthropic/*, *sonnet*) and fuzzy matching
  --no-tools, -nt                Disable all tools by default (built-in and extension)
  --no-builtin-tools, -nbt       Disable built-in tools by default but keep extension/custom tools enabled
  --tools, -t <tools>            Comma-separated allowlist of tool names or patterns (*) to enable
                                 Keeps MCP tools unless an entry starts with mcp__
                                 Only +name/-name entries add to or remove from the defaults
  --exclude-tools, -xt <tools>   Comma-separated denylist of tool names or patterns (*) to disable
                                 Applies to all tools, MCP tools included
  --thinking <level>             Set thinking level: off, minimal, low, medium, high, xhigh, max
  --extension, -e <path>         Load an extension file or builtin:<name> (can be used multiple times)
  --no-extensions, -ne           Disable extension discovery and built-in extensions (explicit -e paths still work)
  --no-mcp                       Disable built-in MCP support: no servers connect and no MCP tools
  --skill <path>                 Load a skill file or directory (can be used multiple times)
  --no-skills, -ns               Disable skills discovery and loading
  --prompt-template <path>       Load a prompt template file or directory (can be used multiple times)
  --no-prompt-templates, -np     Disable prompt template discovery and loading
  --theme <path>                 Load a theme file or directory (can be used multiple times)
  --use-theme <name[/name]>      Set the initial interactive theme for this run
  --no-themes                    Disable theme discovery and loading
  --no-context-files, -nc        Disable AGENTS.md and CLAUDE.md discovery and loading
  --export <file> [output]       Export session file to HTML and exit
  --list-models [search]         List available models (with optional fuzzy search)
  --verbose                      Force verbose startup (overrides quietStartup setting)
  --tui-mode <mode>              TUI mode: fullscreen or regular (pi-rs runs regular for now)
  --approve, -a                  Trust project-local files for this run
  --no-approve, -na              Ignore project-local files for this run
  --offline                      Disable startup network operations (same as PI_OFFLINE=1)
  --                             End option parsing; treat remaining arguments as messages/files
  --help, -h                     Show this help
  --version, -v                  Show version number

Extensions can register additional flags (for example --plan from a plan-mode extension).";

const EXAMPLES: &str = "\
  pi                                      interactive session in this directory
  pi \"List all .rs files in src/\"          interactive, starting with a prompt
  pi @notes.md @shot.png \"Summarize\"       include files in the first message
  pi -p \"Explain src/main.rs\"              answer once and exit
  pi \"Explain src/main.rs\" > answer.txt    the same: stdout is not a terminal
  pi -p -- \"- Summarize these points\"      a prompt beginning with a dash
  pi -c \"What did we discuss?\"             continue the most recent session
  pi --session-id ci-42 -p \"Next step\"     a session with an id of your choosing
  pi --name \"Refactor auth module\"         start a named session
  pi --model openai/gpt-4o                pick a model (provider/id, id, or a fuzzy pattern)
  pi --model sonnet:high                  pick a model and a thinking level
  pi --models sonnet,haiku                models to cycle through with Ctrl+P
  pi --tools read,grep,find,ls -p \"Review src/\"   read-only tools
  pi --tools +grep,-write                 the default tools with grep and without write
  pi --exclude-tools 'b*'                 every default tool except those matching b*
  pi --export session.jsonl out.html      write a session as a self-contained HTML page";

const ENVIRONMENT: &str = "\
  PI_CODING_AGENT_DIR          Config directory (default: ~/.pi/agent)
  PI_CODING_AGENT_SESSION_DIR  Session storage directory (overridden by --session-dir)
  PI_OFFLINE                   Disable startup network operations when set to 1/true/yes
  ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, GROQ_API_KEY, CEREBRAS_API_KEY,
  XAI_API_KEY, OPENROUTER_API_KEY, MISTRAL_API_KEY, DEEPSEEK_API_KEY, …
                               Provider API keys (the full list: docs/providers.md)";

const TOOLS: &str = "\
  read   - Read file contents
  bash   - Execute bash commands
  edit   - Edit files with find/replace
  write  - Write files (creates/overwrites)
  grep   - Search file contents (read-only, off by default)
  find   - Find files by glob pattern (read-only, off by default)
  ls     - List directory contents (read-only, off by default)
  (pi 1.6's powershell, codemode and tool_search come with a later version of pi-rs)";

/// The help text; `bold` styles the headings.
pub fn help_text(bold: bool) -> String {
    let heading = |title: &str| {
        if bold {
            format!("\x1b[1m{title}\x1b[0m")
        } else {
            title.to_string()
        }
    };
    format!(
        "{} - AI coding assistant with read, bash, edit, write tools (pi-rs {})

{}
  pi [options] [--] [@files...] [messages...]

{}
{COMMANDS}

{}
{OPTIONS}

{}
{EXAMPLES}

{}
{ENVIRONMENT}

{}
{TOOLS}
",
        heading("pi"),
        env!("CARGO_PKG_VERSION"),
        heading("Usage:"),
        heading("Commands:"),
        heading("Options:"),
        heading("Examples:"),
        heading("Environment Variables:"),
        heading("Built-in Tool Names:"),
    )
}

/// Prints the help text to stdout.
pub fn print_help() {
    print!("{}", help_text(std::io::stdout().is_terminal()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_of_the_parser_is_listed() {
        use clap::CommandFactory;
        let text = help_text(false);
        for arg in crate::cli::args::Cli::command().get_arguments() {
            if let Some(long) = arg.get_long() {
                assert!(text.contains(&format!("--{long}")), "--{long} missing");
            }
        }
        for command in [
            "install", "remove", "update", "list", "config", "auth", "mcp",
        ] {
            assert!(
                text.contains(&format!("pi {command} ")),
                "{command} missing"
            );
        }
    }
}
