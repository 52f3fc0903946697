//! What happens to typed text before it becomes a prompt, in pi's order: an extension's
//! `/command` runs at once (even while the agent streams) and is never sent; the `input`
//! event may transform or swallow the text; then `/skill:name` and `/template` are
//! expanded (`resources.rs`); and once the prompt is about to run, `before_agent_start`
//! may add messages and replace the system prompt for the run.

use serde_json::{Value, json};

use super::AgentSession;
use crate::ai::message::{ImageContent, now_ms};
use crate::core::events::SessionEvent;
use crate::extensions::{CommandError, EventName, InputOutcome, InputSource};
use crate::messages::AgentMessage;

/// `/name args` split like pi: the name up to the first space, the rest as typed.
fn command_parts(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix('/')?;
    Some(rest.split_once(' ').unwrap_or((rest, "")))
}

impl AgentSession {
    /// Runs `text` if it is an extension command (`true`), waiting for the command and
    /// for what it asked the session to do. A failing command is reported as an
    /// extension error, as pi does.
    pub(crate) async fn run_extension_command(&self, text: &str) -> bool {
        let Some((name, args)) = command_parts(text) else {
            return false;
        };
        let Some(host) = self.extension_host().filter(|h| h.has_command(name)) else {
            return false;
        };
        let result = host.run_command(name, args).await;
        self.flush_extension_actions().await;
        match result {
            // `Failed` was reported by the host as it happened.
            Ok(()) | Err(CommandError::Failed(_)) => {}
            Err(error @ (CommandError::NotRunning(_) | CommandError::Unknown(_))) => {
                let path = host
                    .commands()
                    .into_iter()
                    .find(|c| c.invocation_name == name)
                    .map(|c| c.extension_path.display().to_string())
                    .unwrap_or_else(|| format!("command:{name}"));
                self.emit(SessionEvent::ExtensionError {
                    extension_path: path,
                    event: "command".into(),
                    error: error.to_string(),
                });
            }
        }
        true
    }

    /// The name of the extension command `text` invokes, if it is one.
    pub(crate) fn extension_command_name(&self, text: &str) -> Option<String> {
        let (name, _) = command_parts(text)?;
        self.extension_host()
            .is_some_and(|host| host.has_command(name))
            .then(|| name.to_string())
    }

    /// Starts an extension command in the background if `text` is one (for `steer` and
    /// `follow_up`, which cannot wait).
    pub(crate) fn spawn_if_extension_command(&self, text: &str) -> bool {
        let is_command = command_parts(text).is_some_and(|(name, _)| {
            self.extension_host()
                .is_some_and(|host| host.has_command(name))
        });
        if is_command {
            let session = self.clone();
            let text = text.to_string();
            self.spawn_background(async move {
                session.run_extension_command(&text).await;
            });
        }
        is_command
    }

    /// pi's `input` event. `None`: an extension handled the input, nothing is sent.
    pub(crate) async fn input_event(
        &self,
        text: &str,
        images: Vec<ImageContent>,
        source: InputSource,
    ) -> Option<(String, Vec<ImageContent>)> {
        let Some(host) = self
            .extension_host()
            .filter(|h| h.has_subscribers(EventName::Input))
        else {
            return Some((text.to_string(), images));
        };
        let shown = (!images.is_empty()).then_some(images.as_slice());
        let outcome = host.input(text, shown, source).await;
        self.flush_extension_actions().await;
        match outcome {
            InputOutcome::Handled => None,
            InputOutcome::Continue => Some((text.to_string(), images)),
            InputOutcome::Transform {
                text,
                images: new_images,
            } => Some((text, new_images.unwrap_or(images))),
        }
    }

    /// pi's `before_agent_start`: the messages extensions add to this prompt (stored and
    /// sent after it), and the system prompt for the run (the base prompt unless an
    /// extension replaced it).
    pub(crate) async fn before_agent_start(
        &self,
        text: &str,
        images: &[ImageContent],
    ) -> Vec<AgentMessage> {
        let host = self
            .extension_host()
            .filter(|h| h.has_subscribers(EventName::BeforeAgentStart));
        let Some(host) = host else {
            self.state().system_prompt_override = None;
            return Vec::new();
        };
        let (base, options) = {
            let st = self.state();
            (st.system_prompt.clone(), self.system_prompt_options(&st))
        };
        let shown = (!images.is_empty()).then_some(images);
        let outcome = host.before_agent_start(text, shown, &base, &options).await;
        self.state().system_prompt_override = outcome.system_prompt;
        outcome
            .messages
            .into_iter()
            .map(|mut m| {
                m.timestamp = now_ms();
                AgentMessage::Custom(m)
            })
            .collect()
    }

    /// pi's `BuildSystemPromptOptions` for the current tools and resources.
    fn system_prompt_options(&self, st: &super::State) -> Value {
        let tools: Vec<&str> = st.tools.iter().map(|t| t.name()).collect();
        let snippets: serde_json::Map<String, Value> = st
            .tools
            .iter()
            .filter_map(|t| Some((t.name().to_string(), Value::from(t.prompt_snippet()?))))
            .collect();
        let guidelines: Vec<&str> = st
            .tools
            .iter()
            .flat_map(|t| t.prompt_guidelines().iter().copied())
            .collect();
        let context_files: Vec<Value> = st
            .resources
            .context_files
            .iter()
            .map(|f| json!({"path": f.path.display().to_string(), "content": f.content}))
            .collect();
        let skills: Vec<Value> = st
            .skills
            .iter()
            .map(|s| {
                json!({
                    "name": s.name, "description": s.description,
                    "filePath": s.path.display().to_string(),
                    "baseDir": s.base_dir.display().to_string(),
                    "disableModelInvocation": s.disable_model_invocation,
                })
            })
            .collect();
        let mut options = json!({
            "cwd": self.inner.cwd.display().to_string(),
            "selectedTools": tools,
            "toolSnippets": snippets,
            "promptGuidelines": guidelines,
            "contextFiles": context_files,
            "skills": skills,
        });
        if let Some(custom) = &st.resources.custom_prompt {
            options["customPrompt"] = Value::from(custom.as_str());
        }
        if !st.resources.append.is_empty() {
            options["appendSystemPrompt"] = Value::from(st.resources.append.join("\n\n"));
        }
        options
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_name_ends_at_the_first_space_and_arguments_keep_their_spacing() {
        assert_eq!(command_parts("/greet"), Some(("greet", "")));
        assert_eq!(command_parts("/greet  Ada  "), Some(("greet", " Ada  ")));
        assert_eq!(command_parts("greet"), None);
    }
}
