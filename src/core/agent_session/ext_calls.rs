//! What pi's extensions read from and ask of the session beyond events: the state their
//! synchronous getters read (`ctx.model`, `ctx.getContextUsage()`,
//! `ctx.getSystemPrompt()`, `ctx.hasPendingMessages()`, `pi.getActiveTools()`,
//! `pi.getAllTools()`, `pi.getCommands()`, `pi.getThinkingLevel()`,
//! `pi.getSessionName()`, `ctx.modelRegistry`), and the `call` requests of the command
//! context and friends (`newSession`, `fork`, `navigateTree`, `switchSession`,
//! `waitForIdle`, `compact`, `setActiveTools`, `getApiKey`), tools registered after
//! loading, and the event bus between extensions.
//!
//! Calls run in their own task, never in the action loop: a session switch waits for the
//! extensions' `session_start` answers and for the action loop to catch up, which would
//! never happen if the loop itself ran the switch.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use serde_json::{Value, json};

use super::extensions::SESSION_SWITCH_CANCELLED;
use super::{AgentSession, Inner, NavigateOptions, compaction::compaction_result_json};
use crate::core::command_list::{command_list, extension_source_info};
use crate::extensions::protocol::ToolRegistration;
use crate::extensions::state::StateBuilder;
use crate::tools::{Tool, builtin_tool_names, create_tools};

/// Why a call failed, as the extension's promise rejects.
type CallResult = Result<Value, String>;

fn str_param<'a>(params: &'a Value, key: &str) -> Option<&'a str> {
    params.get(key).and_then(Value::as_str)
}

fn required<'a>(params: &'a Value, key: &str) -> Result<&'a str, String> {
    str_param(params, key).ok_or_else(|| format!("missing \"{key}\""))
}

/// pi's `{cancelled}` answer for a switch: an extension's veto is not a failure.
fn cancelled_or(result: Result<(), String>) -> CallResult {
    match result {
        Ok(()) => Ok(json!({"cancelled": false})),
        Err(e) if e == SESSION_SWITCH_CANCELLED => Ok(json!({"cancelled": true})),
        Err(e) => Err(e),
    }
}

impl AgentSession {
    /// Installs the state source of the attached host (called on attach).
    pub(crate) fn provide_extension_state(&self) {
        let Some(host) = self.extension_host() else {
            return;
        };
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        host.set_state_source(Some(Arc::new(move |b: &mut StateBuilder| {
            if let Some(inner) = weak.upgrade() {
                AgentSession { inner }.fill_extension_state(b);
            }
        })));
    }

    /// The parts of the `state` message (see `extensions::state`).
    fn fill_extension_state(&self, b: &mut StateBuilder) {
        let commands = command_list(self);
        let all_tools = self.all_tool_infos();
        let pending = self.inner.queues.len();
        let st = self.state();
        b.set(
            "model",
            serde_json::to_value(&st.model).unwrap_or(Value::Null),
        );
        b.set("thinkingLevel", json!(st.thinking.as_str()));
        b.set("sessionName", json!(st.session.session_name()));
        b.set(
            "sessionFile",
            json!(st.session.session_file().map(|p| p.display().to_string())),
        );
        b.set("sessionId", json!(st.session.session_id().to_string()));
        let prompt = st
            .system_prompt_override
            .as_deref()
            .unwrap_or(&st.system_prompt);
        b.set("systemPrompt", json!(prompt));
        b.set(
            "contextUsage",
            serde_json::to_value(st.context_usage()).unwrap_or(Value::Null),
        );
        b.set("pendingMessages", json!(pending));
        b.set("idle", json!(!st.streaming));
        // `ctx.isProjectTrusted()`.
        b.set(
            "projectTrusted",
            json!(st.settings.project_trust().is_trusted()),
        );
        let active: Vec<&str> = st.tools.iter().map(|t| t.name()).collect();
        b.set("activeTools", json!(active));
        b.set("allTools", Value::Array(all_tools));
        b.set("commands", Value::Array(commands));
        let available: Vec<(String, String)> = st
            .registry
            .all()
            .iter()
            .filter(|m| st.registry.has_configured_auth(m))
            .map(|m| (m.provider.clone(), m.id.clone()))
            .collect();
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        st.registry.all().len().hash(&mut hasher);
        for m in st.registry.all() {
            m.provider.hash(&mut hasher);
            m.id.hash(&mut hasher);
            m.base_url.hash(&mut hasher);
        }
        let registry = &st.registry;
        b.set_lazy("models", hasher.finish(), || {
            serde_json::to_value(registry.all()).unwrap_or(Value::Null)
        });
        b.set("availableModels", json!(available));
    }

    /// pi's `getAllTools()`: every built-in tool and every extension tool (an extension
    /// tool replacing a built-in one of its name), with pi's `sourceInfo`.
    fn all_tool_infos(&self) -> Vec<Value> {
        let host = self.extension_host();
        let ext_tools = host.as_ref().map(|h| h.tools()).unwrap_or_default();
        let scopes = host.as_ref().map(|h| h.extensions()).unwrap_or_default();
        let config = self.state().tool_config.clone();
        let builtins = create_tools(builtin_tool_names(), &config).unwrap_or_default();
        let mut infos: Vec<(String, Value)> = builtins
            .iter()
            .map(|t| {
                let info = json!({
                    "name": t.name(),
                    "description": t.description(),
                    "parameters": t.parameters(),
                    "sourceInfo": {
                        "path": format!("<builtin:{}>", t.name()),
                        "source": "builtin",
                        "scope": "temporary",
                        "origin": "top-level",
                    },
                });
                (t.name().to_string(), info)
            })
            .collect();
        for tool in ext_tools {
            let path = tool.extension_path();
            let scope = scopes
                .iter()
                .find(|e| e.path == path)
                .map(|e| e.scope)
                .unwrap_or(crate::extensions::ResourceScope::Cli);
            let info = json!({
                "name": tool.name(),
                "description": tool.description(),
                "parameters": tool.parameters(),
                "sourceInfo": extension_source_info(self, path, scope),
            });
            match infos.iter_mut().find(|(name, _)| name == tool.name()) {
                Some(slot) => slot.1 = info,
                None => infos.push((tool.name().to_string(), info)),
            }
        }
        infos.into_iter().map(|(_, info)| info).collect()
    }

    /// Limits which tools extensions may activate (`setActiveTools`, tools registered
    /// later) to what `--tools` and `--exclude-tools` allow, as pi 1.6 does.
    pub fn set_tool_filter(&self, filter: crate::core::tool_selection::ToolFilter) {
        self.state().tool_filter = filter;
    }

    /// Whether (and with which `--tools +x/-x` entries) the tools a branch recorded are
    /// restored on resume and `/tree`.
    pub fn set_transcript_tool_modifiers(&self, modifiers: Option<Vec<String>>) {
        self.state().transcript_tool_modifiers = modifiers;
    }

    /// The tools the current branch recorded in its system messages become the active
    /// ones (pi 1.6 on resume, with the `--tools +x/-x` entries, and on `/tree`, without
    /// them). A branch that recorded nothing keeps the current tools; recorded tools that
    /// do not exist here are skipped.
    pub fn restore_tools_from_transcript(&self, with_modifiers: bool) {
        let (names, mentioned, modifiers) = {
            let st = self.state();
            let Some(modifiers) = st.transcript_tool_modifiers.clone() else {
                return;
            };
            // Every system message of the branch, those before a compaction included.
            let path = st.session.path(None);
            let systems: Vec<&crate::messages::SystemMessage> = path
                .iter()
                .filter_map(|e| {
                    e.message()
                        .and_then(crate::messages::AgentMessage::as_system)
                })
                .filter(|m| m.is_well_formed())
                .collect();
            let Some(state) = crate::messages::SystemState::replay(systems.iter().copied()) else {
                return;
            };
            let mentioned: Vec<String> = systems
                .iter()
                .flat_map(|m| {
                    let added = m.tools_added.iter().flatten().map(|t| t.name.clone());
                    let removed = m.tools_removed.iter().flatten().map(|t| t.name.clone());
                    added.chain(removed)
                })
                .collect();
            (
                state.tool_names(),
                mentioned,
                if with_modifiers {
                    modifiers
                } else {
                    Vec::new()
                },
            )
        };
        let extension: Vec<String> = self
            .extension_host()
            .map(|h| {
                h.agent_tools()
                    .iter()
                    .map(|t| t.name().to_string())
                    .collect()
            })
            .unwrap_or_default();
        let names = crate::core::tool_selection::transcript_tools(
            &names,
            &mentioned,
            &extension,
            builtin_tool_names(),
            &modifiers,
        );
        self.set_tools_in_order(&names);
    }

    /// pi's `setActiveTools(names)`: the named tools of the registry (built-in or from
    /// extensions); unknown names, and names `--tools` / `--exclude-tools` leave out, are
    /// ignored. As in pi 1.6, the named tools that are active keep their place and the
    /// others follow in the order given. The system prompt follows.
    pub fn set_active_tools(&self, names: &[String]) {
        let active: Vec<String> = self.tools().iter().map(|t| t.name().to_string()).collect();
        let ordered: Vec<String> = active
            .into_iter()
            .filter(|n| names.contains(n))
            .chain(names.iter().cloned())
            .collect();
        self.set_tools_in_order(&ordered);
    }

    /// The named tools (built-in or from extensions) become the active ones, in this
    /// order (repeated and unknown names, and names the tool flags leave out, are
    /// skipped). The system prompt follows.
    pub fn set_tools_in_order(&self, names: &[String]) {
        let ext_tools = self
            .extension_host()
            .map(|h| h.agent_tools())
            .unwrap_or_default();
        let cwd = self.inner.cwd.clone();
        let mut st = self.state();
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        for name in names {
            if tools.iter().any(|t| t.name() == name) || !st.tool_filter.allows(name) {
                continue;
            }
            let existing = st.tools.iter().find(|t| t.name() == name).cloned();
            let from_extension = || ext_tools.iter().find(|t| t.name() == name).cloned();
            let builtin = || {
                create_tools(&[name.as_str()], &st.tool_config)
                    .ok()
                    .and_then(|mut v| v.pop())
            };
            if let Some(tool) = existing.or_else(from_extension).or_else(builtin) {
                tools.push(tool);
            }
        }
        st.tools = tools;
        st.rebuild_system_prompt(&cwd);
    }

    /// A tool an extension registered after loading: pi adds it to the active tools (it
    /// is new to the registry), for the next model call.
    fn register_extension_tool(&self, path: &Path, spec: ToolRegistration) -> Result<(), String> {
        let host = self
            .extension_host()
            .ok_or_else(|| "no extensions".to_string())?;
        let tool = host.register_tool(path, spec)?;
        let cwd = self.inner.cwd.clone();
        let mut st = self.state();
        if !st.tool_filter.allows(tool.name()) {
            return Ok(());
        }
        st.tools.retain(|t| t.name() != tool.name());
        st.tools.push(tool);
        st.rebuild_system_prompt(&cwd);
        Ok(())
    }

    /// Applies `register_tool`; a conflict is reported as an extension error.
    pub(crate) fn apply_register_tool(&self, path: &Path, spec: ToolRegistration) {
        if let Err(error) = self.register_extension_tool(path, spec) {
            self.emit(crate::core::events::SessionEvent::ExtensionError {
                extension_path: path.display().to_string(),
                event: "register_tool".into(),
                error,
            });
        }
    }

    /// Forwards an event-bus message to the other extensions.
    pub(crate) fn apply_emit(&self, from: &Path, channel: &str, data: Option<Value>) {
        if let Some(host) = self.extension_host() {
            host.emit_bus(from, channel, data);
        }
    }

    /// Runs a `call` in its own task and answers it.
    pub(crate) fn apply_call(&self, path: PathBuf, id: Value, method: String, params: Value) {
        // Registry changes apply in order with what the extension sends next (pi's
        // registerProvider is synchronous: a `setModel` right after it finds the model).
        let registry_change = match method.as_str() {
            "register_provider" => Some(self.register_provider_call(&path, &params)),
            "unregister_provider" => Some(self.unregister_provider_call(&params)),
            _ => None,
        };
        if let Some(result) = registry_change {
            if let Some(host) = self.extension_host() {
                host.answer_call(&path, id, result);
            }
            return;
        }
        let session = self.clone();
        if method == "reload" {
            tokio::spawn(async move { session.reload_call(path, id).await });
            return;
        }
        tokio::spawn(async move {
            let result = match method.as_str() {
                "llm_stream" => session.llm_stream_call(&path, &id, &params).await,
                _ => session.run_call(&method, &params).await,
            };
            if let Some(host) = session.extension_host() {
                host.answer_call(&path, id, result);
            }
        });
    }

    /// pi's `newSession({setup})`: the entries the setup callback appended to the new
    /// session's SessionManager, in order, each with the id the extension was given
    /// (kept when free). The agent's messages are then rebuilt from the session, as in
    /// pi. The first entry that cannot be stored stops the rest (the error names it).
    fn session_setup(&self, params: &Value) -> CallResult {
        let entries = params
            .get("entries")
            .and_then(Value::as_array)
            .ok_or("missing \"entries\"")?;
        let mut ids = Vec::new();
        let result = {
            let mut st = self.state();
            let mut outcome = Ok(());
            for (index, entry) in entries.iter().enumerate() {
                match setup_entry(&mut st.session, entry) {
                    Ok(id) => ids.push(Value::from(id.as_str())),
                    Err(e) => {
                        outcome = Err(format!("setup entry {}: {e}", index + 1));
                        break;
                    }
                }
            }
            let context = st.session.build_session_context();
            st.messages = context.messages;
            outcome
        };
        self.emit(crate::core::events::SessionEvent::ContextRebuilt);
        let name = self.state().session.session_name().map(str::to_string);
        if name.is_some() {
            self.emit(crate::core::events::SessionEvent::SessionInfoChanged { name });
        }
        result.map(|()| Value::Array(ids))
    }

    /// `ctx.reload()`: the asking extension's process is kept running through the reload
    /// (the others stop as on `/reload`), gets the answer once the new extensions have
    /// started, may finish the command it runs (code after `await ctx.reload()` runs
    /// in the old runtime, as in pi), and is stopped then.
    async fn reload_call(&self, path: PathBuf, id: Value) {
        let old = self.extension_host();
        if let Some(host) = &old {
            host.hold_open(&path);
        }
        let result = self.reload_from_extension().await.map(|()| Value::Null);
        if let Some(host) = old {
            host.answer_call(&path, id, result);
            host.release_held().await;
        }
    }

    async fn run_call(&self, method: &str, params: &Value) -> CallResult {
        match method {
            "wait_for_idle" => {
                self.wait_for_idle().await;
                Ok(Value::Null)
            }
            "new_session" => {
                let parent = str_param(params, "parentSession").map(str::to_string);
                cancelled_or(self.new_session(parent).await)
            }
            "fork" => {
                let entry = required(params, "entryId")?;
                if str_param(params, "position") == Some("at") {
                    cancelled_or(self.fork_at(entry).await)
                } else {
                    let result = self.fork(entry).await?;
                    Ok(json!({"cancelled": result.cancelled}))
                }
            }
            "navigate_tree" => {
                let target = required(params, "targetId")?;
                let options = NavigateOptions {
                    summarize: params
                        .get("summarize")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    custom_instructions: str_param(params, "customInstructions")
                        .map(str::to_string),
                    replace_instructions: params
                        .get("replaceInstructions")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    label: str_param(params, "label").map(str::to_string),
                    ..NavigateOptions::default()
                };
                let result = self.navigate_tree(target, options).await?;
                Ok(json!({"cancelled": result.cancelled}))
            }
            "switch_session" => {
                let path = required(params, "sessionPath")?;
                cancelled_or(self.switch_session(Path::new(path)).await)
            }
            "compact" => {
                let instructions = str_param(params, "customInstructions");
                let result = self.compact(instructions).await?;
                Ok(compaction_result_json(&result))
            }
            "set_active_tools" => {
                let names: Vec<String> = params
                    .get("toolNames")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                self.set_active_tools(&names);
                Ok(Value::Null)
            }
            "get_api_key" => {
                let provider = required(params, "provider")?;
                let st = self.state();
                let model = str_param(params, "modelId")
                    .and_then(|id| st.registry.find(provider, id))
                    .or_else(|| st.registry.all().iter().find(|m| m.provider == provider));
                let key = match model {
                    Some(m) => st
                        .registry
                        .request_auth(m)
                        .ok()
                        .and_then(|a| a.api_key)
                        .map(|k| k.expose().to_string()),
                    None => st
                        .registry
                        .auth()
                        .api_key(provider)
                        .map(|k| k.expose().to_string()),
                };
                Ok(json!(key))
            }
            "session_setup" => self.session_setup(params),
            other => Err(format!("unknown call \"{other}\"")),
        }
    }
}

/// Stores one entry of a `session_setup` call (pi's SessionManager append methods).
fn setup_entry(
    session: &mut crate::session::SessionManager,
    entry: &Value,
) -> Result<crate::session::entry::EntryId, String> {
    use crate::session::entry::EntryId;
    if let Some(id) = str_param(entry, "id") {
        session.prefer_next_id(EntryId::from(id));
    }
    let stored = match required(entry, "kind")? {
        "message" => {
            let message = entry.get("message").cloned().ok_or("missing \"message\"")?;
            let message = serde_json::from_value(message)
                .map_err(|e| format!("the message is not valid: {e}"))?;
            session.append_message(message)
        }
        "thinking_level_change" => {
            session.append_thinking_level_change(required(entry, "thinkingLevel")?)
        }
        "model_change" => {
            session.append_model_change(required(entry, "provider")?, required(entry, "modelId")?)
        }
        "compaction" => session.append_compaction(
            required(entry, "summary")?,
            &EntryId::from(required(entry, "firstKeptEntryId")?),
            entry
                .get("tokensBefore")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            entry.get("details").cloned().filter(|d| !d.is_null()),
            entry.get("fromHook").and_then(Value::as_bool),
        ),
        "custom" => session.append_custom_entry(
            required(entry, "customType")?,
            entry.get("data").cloned().filter(|d| !d.is_null()),
        ),
        "custom_message" => {
            let content = entry
                .get("content")
                .cloned()
                .unwrap_or(Value::String(String::new()));
            let content = serde_json::from_value(content)
                .map_err(|e| format!("the content is not valid: {e}"))?;
            session.append_custom_message_entry(
                required(entry, "customType")?,
                content,
                entry
                    .get("display")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                entry.get("details").cloned().filter(|d| !d.is_null()),
            )
        }
        "label" => session.append_label_change(
            &EntryId::from(required(entry, "targetId")?),
            str_param(entry, "label"),
        ),
        "session_info" => session.append_session_info(str_param(entry, "name").unwrap_or("")),
        other => return Err(format!("unknown entry kind \"{other}\"")),
    };
    stored.map_err(|e| e.to_string())
}
