//! What building a session takes from the command line, as plain data: the front end
//! (`cli`) fills a [`SessionConfig`] from its flags, and the factory never sees a flag.
//! The defaults are pi's behaviour when no flag is given.

use crate::ai::model::ThinkingLevel;
pub use crate::core::tool_selection::{NoTools, ToolSelection};
use crate::extensions::HostMode;

/// The command line's share of building a session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionConfig {
    /// `--provider`: where to look for `model`.
    pub provider: Option<String>,
    /// `--model`: a pattern or id, optionally ending in `:<thinking>`.
    pub model: Option<String>,
    /// `--models`: the patterns Ctrl+P cycles through (else the `enabledModels` setting).
    pub model_scope: Option<Vec<String>>,
    /// `--thinking`, when valid.
    pub thinking: Option<ThinkingLevel>,
    /// `--api-key`: a key for the chosen model's provider, used and never saved.
    pub api_key: Option<String>,
    /// Which tools are active (`--tools`, `--exclude-tools`, `--no-tools`,
    /// `--no-builtin-tools`, with the `defaultTools` setting).
    pub tools: ToolSelection,
    /// `--system-prompt`: replaces the default prompt (text, or a file to read).
    pub system_prompt: Option<String>,
    /// `--append-system-prompt` (repeatable; text or files). Empty: `APPEND_SYSTEM.md`.
    pub append_system_prompt: Vec<String>,
    /// `--no-context-files`: no AGENTS.md / CLAUDE.md.
    pub skip_context_files: bool,
    /// `--prompt-template` / `--no-prompt-templates`.
    pub prompt_templates: ResourceSelection,
    /// `--skill` / `--no-skills`.
    pub skills: ResourceSelection,
    /// `-e` / `--no-extensions`.
    pub extensions: ResourceSelection,
    /// Flags the command line did not know, for extensions to claim: name → value
    /// (`None`: given without a value).
    pub extension_flags: Vec<(String, Option<String>)>,
    /// Those of `extension_flags` whose value was the next argument (`--plan notes`): if
    /// the flag turns out to be a boolean, that argument was meant as a message.
    pub detached_flag_values: Vec<String>,
    /// `--session-dir`: where sessions are stored and looked up.
    pub session_dir: Option<String>,
    /// Problems with the command line itself, reported first among the session's warnings.
    pub warnings: Vec<String>,
    /// `--offline`: configured pi packages that are missing are not installed (they are
    /// left out with a warning).
    pub offline: bool,
    /// `--session-id`: the id of a new session (or of the fork, with `--fork`).
    pub session_id: Option<String>,
    /// `-n` / `--name`: the display name recorded in the session at startup.
    pub session_name: Option<String>,
    /// `-e builtin:<name>` of pi 1.6's built-in extensions (pi-rs has them in a later
    /// version; they count for which tools pi would have).
    pub builtin_extensions: Vec<String>,
    /// `--approve` (`true`) / `--no-approve` (`false`): the project trust decision for
    /// this run, before extensions, trust.json and `defaultProjectTrust` are asked.
    pub project_trust: Option<bool>,
}

/// Where one kind of resource (prompt templates, skills, extensions) comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceSelection {
    /// Paths given on the command line; they load even without discovery.
    pub paths: Vec<String>,
    /// Whether the settings' entries and the usual folders are searched too (`--no-…`
    /// turns this off).
    pub discover: bool,
}

impl Default for ResourceSelection {
    fn default() -> ResourceSelection {
        ResourceSelection {
            paths: Vec::new(),
            discover: true,
        }
    }
}

/// How the sessions a factory builds run their extensions: the mode the extensions are
/// told about and whether a front end answers their dialogs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtensionHosting {
    pub mode: HostMode,
    pub has_ui: bool,
}
