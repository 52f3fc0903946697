//! The system prompt: our default instructions (or a replacement from `--system-prompt` /
//! `SYSTEM.md`), the active tools, appended text, project context files, skills, and
//! finally the date and working directory.
//!
//! The structure follows pi (so context files, skills, date and cwd land in the same
//! places), the wording is our own. Only the date is included, not the time, so the prompt
//! stays identical across a day and providers can cache it.

use std::path::Path;

use super::resources::ContextFile;

/// Everything the system prompt is built from.
#[derive(Debug, Clone)]
pub struct SystemPromptInput<'a> {
    /// Replaces the default instructions (`--system-prompt`, `SYSTEM.md`).
    pub custom_prompt: Option<&'a str>,
    /// Active tools in order: (name, one-line snippet). Tools without a snippet are not
    /// listed but still count for the guidelines.
    pub tools: Vec<(&'a str, Option<&'a str>)>,
    /// Extra guideline lines contributed by tools or extensions.
    pub extra_guidelines: Vec<&'a str>,
    /// `--append-system-prompt` / `APPEND_SYSTEM.md` texts.
    pub append: Vec<&'a str>,
    pub context_files: &'a [ContextFile],
    /// The rendered skills block (already formatted), if any skills are loaded.
    pub skills_block: Option<&'a str>,
    pub cwd: &'a Path,
    /// `YYYY-MM-DD`.
    pub date: &'a str,
}

impl<'a> SystemPromptInput<'a> {
    /// An input with the default instructions, no tools and no extra context.
    pub fn new(cwd: &'a Path, date: &'a str) -> Self {
        Self {
            custom_prompt: None,
            tools: Vec::new(),
            extra_guidelines: Vec::new(),
            append: Vec::new(),
            context_files: &[],
            skills_block: None,
            cwd,
            date,
        }
    }
}

/// Today's date in local time as `YYYY-MM-DD`.
pub fn today() -> String {
    chrono::Local::now().format("%Y-%m-%d").to_string()
}

/// Builds the system prompt.
pub fn build_system_prompt(input: &SystemPromptInput<'_>) -> String {
    let tool_names: Vec<&str> = input.tools.iter().map(|(n, _)| *n).collect();
    let has = |name: &str| tool_names.contains(&name);
    let append: Vec<&str> = input
        .append
        .iter()
        .copied()
        .filter(|a| !a.is_empty())
        .collect();

    let mut prompt = match input.custom_prompt {
        Some(custom) => custom.to_string(),
        None => default_instructions(input, &has),
    };
    if !append.is_empty() {
        prompt.push_str("\n\n");
        prompt.push_str(&append.join("\n\n"));
    }
    if !input.context_files.is_empty() {
        prompt.push_str("\n\n# Project Context\n\n");
        prompt.push_str("Instructions and conventions for this project:\n\n");
        for file in input.context_files {
            prompt.push_str(&format!(
                "## {}\n\n{}\n\n",
                file.path.display(),
                file.content
            ));
        }
    }
    // Skills are read with the read tool, so they are only offered when it is active.
    if let Some(skills) = input.skills_block
        && has("read")
    {
        prompt.push_str(skills);
    }
    let cwd = input.cwd.display().to_string().replace('\\', "/");
    prompt.push_str(&format!("\nCurrent date: {}", input.date));
    prompt.push_str(&format!("\nCurrent working directory: {cwd}"));
    prompt
}

fn default_instructions(input: &SystemPromptInput<'_>, has: &dyn Fn(&str) -> bool) -> String {
    let listed: Vec<String> = input
        .tools
        .iter()
        .filter_map(|(name, snippet)| snippet.map(|s| format!("- {name}: {s}")))
        .collect();
    let tools = if listed.is_empty() {
        "(none)".to_string()
    } else {
        listed.join("\n")
    };

    let mut guidelines: Vec<String> = Vec::new();
    let mut add = |g: &str| {
        let g = g.trim();
        if !g.is_empty() && !guidelines.iter().any(|x| x == g) {
            guidelines.push(g.to_string());
        }
    };
    let search_tools = has("grep") || has("find") || has("ls");
    if has("bash") && !search_tools {
        add("Explore the project with bash (ls, rg, find) when you need to locate files");
    } else if has("bash") && search_tools {
        add(
            "Prefer the grep, find and ls tools to bash for exploring files: they are faster and respect .gitignore",
        );
    }
    for g in &input.extra_guidelines {
        add(g);
    }
    add("Keep answers short and to the point");
    add("Name file paths explicitly when you talk about files");
    let guidelines: Vec<String> = guidelines.iter().map(|g| format!("- {g}")).collect();

    format!(
        "You are a coding agent running inside pi, a terminal harness for working on software \
projects. You help the user by reading their files, running commands, editing code and \
creating new files in the project.\n\n\
Tools you can call:\n{tools}\n\n\
Further tools may be available depending on the project.\n\n\
How to work:\n{}",
        guidelines.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn default_prompt_lists_tools_context_and_ends_with_date_and_cwd() {
        let files = vec![ContextFile {
            path: PathBuf::from("/p/AGENTS.md"),
            content: "Use tabs.".into(),
        }];
        let input = SystemPromptInput {
            tools: vec![
                ("read", Some("Read a file")),
                ("bash", Some("Run a command")),
            ],
            append: vec!["Extra rule."],
            context_files: &files,
            ..SystemPromptInput::new(Path::new("/p"), "2026-11-22")
        };
        let prompt = build_system_prompt(&input);
        assert!(prompt.contains("- read: Read a file\n- bash: Run a command"));
        assert!(prompt.contains("\n\nExtra rule.\n\n# Project Context"));
        assert!(prompt.contains("## /p/AGENTS.md\n\nUse tabs.\n\n"));
        assert!(prompt.ends_with("\nCurrent date: 2026-11-22\nCurrent working directory: /p"));
    }

    #[test]
    fn custom_prompt_replaces_instructions_but_keeps_context_and_cwd() {
        let input = SystemPromptInput {
            custom_prompt: Some("Be a pirate."),
            tools: vec![("read", Some("Read a file"))],
            ..SystemPromptInput::new(Path::new("/x"), "2026-01-02")
        };
        assert_eq!(
            build_system_prompt(&input),
            "Be a pirate.\nCurrent date: 2026-01-02\nCurrent working directory: /x"
        );
    }

    #[test]
    fn no_tools_lists_none() {
        let input = SystemPromptInput::new(Path::new("/x"), "d");
        assert!(build_system_prompt(&input).contains("Tools you can call:\n(none)"));
    }
}
