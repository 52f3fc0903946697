//! Prompt templates and skills inside a session: keeping the loaded lists, the skills
//! block of the system prompt, expanding `/skill:name args` and `/template args` the way
//! pi does before a prompt is sent, and the list of loaded resources the startup header
//! shows.
//!
//! Finding and parsing the files is `core::prompt_templates` / `core::skills`; deciding
//! when to expand (after extension commands and the `input` event) is `input.rs`.

use std::path::PathBuf;

use super::AgentSession;
use crate::core::events::SessionEvent;
use crate::core::prompt_templates::{PromptTemplate, expand_prompt_template};
use crate::core::skills::{Skill, expand_skill_command, format_skills_for_prompt};
use crate::extensions::ExtensionInfo;

/// What the session was started with, for the startup header (pi lists context files,
/// skills, prompt templates and extensions under the key hints).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadedResources {
    pub context_files: Vec<PathBuf>,
    pub skills: Vec<Skill>,
    pub prompt_templates: Vec<PromptTemplate>,
    pub extensions: Vec<ExtensionInfo>,
}

impl AgentSession {
    /// Sets the prompt templates `/name args` expands.
    pub fn set_prompt_templates(&self, templates: Vec<PromptTemplate>) {
        self.state().prompt_templates = templates;
    }

    pub fn prompt_templates(&self) -> Vec<PromptTemplate> {
        self.state().prompt_templates.clone()
    }

    /// Sets the skills: `/skill:name` expands them, and the system prompt lists those the
    /// model may use (only while the `read` tool is active, as in pi).
    pub fn set_skills(&self, skills: Vec<Skill>) {
        let cwd = self.inner.cwd.clone();
        let mut st = self.state();
        let block = format_skills_for_prompt(&skills);
        st.resources.skills_block = (!block.is_empty()).then_some(block);
        st.skills = skills;
        st.rebuild_system_prompt(&cwd);
    }

    pub fn skills(&self) -> Vec<Skill> {
        self.state().skills.clone()
    }

    /// Context files, skills, prompt templates and extensions in use.
    pub fn loaded_resources(&self) -> LoadedResources {
        let st = self.state();
        LoadedResources {
            context_files: st
                .resources
                .context_files
                .iter()
                .map(|f| f.path.clone())
                .collect(),
            skills: st.skills.clone(),
            prompt_templates: st.prompt_templates.clone(),
            extensions: st
                .extensions
                .as_ref()
                .map(|h| h.extensions())
                .unwrap_or_default(),
        }
    }

    /// pi's expansion of typed text: `/skill:name args` becomes the skill, then
    /// `/template args` becomes the template (only when the name is a template; any other
    /// `/word` stays as typed). A skill file that cannot be read any more is reported as an
    /// extension error and the text is sent as typed.
    pub(crate) fn expand_text(&self, text: &str) -> String {
        if !text.starts_with('/') {
            return text.to_string();
        }
        let (skills, templates) = {
            let st = self.state();
            (st.skills.clone(), st.prompt_templates.clone())
        };
        let expanded = match expand_skill_command(text, &skills) {
            Ok(Some(t)) => t,
            Ok(None) => text.to_string(),
            Err(problem) => {
                self.emit(SessionEvent::ExtensionError {
                    extension_path: problem.path.display().to_string(),
                    event: "skill_expansion".into(),
                    error: problem.message,
                });
                text.to_string()
            }
        };
        expand_prompt_template(&expanded, &templates).unwrap_or(expanded)
    }
}

impl AgentSession {
    /// pi's `extendResourcesFromExtensions`: after `session_start` at startup and on
    /// reload, the skills and prompt templates the extensions name in
    /// `resources_discover` join the loaded ones (a name already loaded keeps the
    /// first; a folder stands for the skills or `.md` templates in it). Theme paths (a
    /// file, or a folder's `.json` files) are kept for the front end's theme list
    /// ([`AgentSession::extension_theme_files`]).
    pub(crate) async fn extend_resources_from_extensions(
        &self,
        host: &crate::extensions::ExtensionHost,
        reason: crate::extensions::DiscoverReason,
    ) {
        if !host.has_subscribers(crate::extensions::EventName::ResourcesDiscover) {
            return;
        }
        let cwd = self.inner.cwd.clone();
        let found = host.resources_discover(&cwd, reason).await;
        let mut themes = Vec::new();
        for entry in &found.theme_paths {
            let path = cwd.join(&entry.path);
            if path.is_dir() {
                themes.extend(files_with_extension(&path, "json"));
            } else {
                themes.push(path);
            }
        }
        self.set_extension_theme_files(themes);
        if found.is_empty() {
            return;
        }
        let scope = crate::extensions::ResourceScope::Cli;
        let mut skills = self.skills();
        let before = skills.len();
        for entry in &found.skill_paths {
            let path = cwd.join(&entry.path);
            let loaded = if path.is_dir() {
                crate::core::skills::load_skills_from_dir(&path, scope).0
            } else {
                crate::core::skills::load_skill_file(&path, scope)
                    .0
                    .into_iter()
                    .collect()
            };
            for skill in loaded {
                if !skills.iter().any(|s| s.name == skill.name) {
                    skills.push(skill);
                }
            }
        }
        if skills.len() != before {
            self.set_skills(skills);
        }
        let mut templates = self.prompt_templates();
        for entry in &found.prompt_paths {
            let path = cwd.join(&entry.path);
            let files = if path.is_dir() {
                files_with_extension(&path, "md")
            } else {
                vec![path]
            };
            for file in files {
                let Ok(template) = crate::core::prompt_templates::load_template_file(&file, scope)
                else {
                    continue;
                };
                if !templates.iter().any(|t| t.name == template.name) {
                    templates.push(template);
                }
            }
        }
        self.set_prompt_templates(templates);
    }
}

impl AgentSession {
    /// The theme files the running extensions named (`resources_discover`'s
    /// `themePaths`, relative ones taken from the working directory), after the
    /// configured theme files in precedence, and the revision of that list.
    pub fn extension_theme_files(&self) -> (Vec<PathBuf>, u64) {
        self.state().extension_themes.clone()
    }

    pub(crate) fn set_extension_theme_files(&self, files: Vec<PathBuf>) {
        let mut st = self.state();
        if st.extension_themes.0 != files {
            let revision = st.extension_themes.1 + 1;
            st.extension_themes = (files, revision);
        }
    }
}

/// The files directly in `dir` whose name ends in `.<extension>`, sorted by name.
fn files_with_extension(dir: &std::path::Path, extension: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == extension))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}
