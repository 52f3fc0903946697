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
