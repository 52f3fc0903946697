//! What happens when the user submits: `!cmd` / `!!cmd` run in the shell, `/command`s
//! run here, anything else is a prompt (or, while the agent works, a steering message).
//! Long operations run as tasks that report back through [`AppMsg`].

use crate::core::agent_session::{NavigateOptions, PromptOptions};
use crate::modes::interactive::autocomplete::{CommandSpec, CompletionItem};
use crate::modes::interactive::components::Component;
use crate::modes::interactive::components::bash_execution::{BashExecutionView, BashStatus};
use crate::modes::interactive::components::changelog::{self, ChangelogView};
use crate::modes::interactive::components::checkpoint_diff::CheckpointDiffView;
use crate::modes::interactive::components::transcript::ChatItem;

use super::input::KeyCommand;
use super::msg::AppMsg;
use super::overlay::{InputPurpose, Overlay, OverlayOutcome, SelectPurpose};
use super::state::App;
use crate::extensions::UiResponse;
use crate::modes::interactive::components::line_input::LineInput;
use crate::modes::interactive::components::session_picker::{
    Loader, LoaderConfig, SessionPicker, delete_session_file, rename_session_file,
};
use crate::modes::interactive::components::settings_selector::{
    SettingId, SettingsSelector, SettingsValues,
};
use crate::modes::interactive::components::summarize_dialog::{
    SummarizeBranchDialog, SummarizeOutcome,
};
use crate::modes::interactive::components::tree_selector::{
    FilterMode, TreeSelector, TreeSelectorOptions, TreeSnapshot,
};
use crate::modes::interactive::components::user_message_selector::UserMessageSelector;
use crate::session::entry::EntryId;
use crate::session::refusal::MissingCwd;

/// Built-in slash commands (name, description), as pi lists them (`/login` and `/logout`
/// say what they do here: store or remove an API key, where pi also offers OAuth).
pub const BUILTIN_COMMANDS: &[(&str, &str)] = &[
    ("settings", "Open settings menu"),
    ("model", "Select model (opens selector UI)"),
    ("thinking", "Set thinking level"),
    ("scoped-models", "Enable/disable models for Ctrl+P cycling"),
    (
        "export",
        "Export session (HTML default, or specify path: .html/.jsonl)",
    ),
    ("import", "Import and resume a session from a JSONL file"),
    ("share", "Share session as a secret GitHub gist"),
    ("copy", "Copy last agent message to clipboard"),
    ("name", "Set session display name"),
    ("session", "Show session info and stats"),
    ("changelog", "Show changelog entries"),
    ("hotkeys", "Show all keyboard shortcuts"),
    ("fork", "Create a new fork from a previous user message"),
    (
        "clone",
        "Duplicate the current session at the current position",
    ),
    ("trust", "Save project trust decision for future sessions"),
    ("tree", "Navigate session tree (switch branches)"),
    (
        "undo-restore",
        "Put back the files the last /tree restore overwrote",
    ),
    (
        "checkpoints",
        "Show the disk use of file checkpoints (prune: remove unused ones)",
    ),
    ("login", "Configure provider authentication"),
    ("logout", "Remove provider authentication"),
    ("new", "Start a new session"),
    ("compact", "Manually compact the session context"),
    ("resume", "Resume a different session"),
    (
        "reload",
        "Reload keybindings, extensions, skills, prompts, and themes",
    ),
    ("quit", "Quit pi"),
];

/// The answers of a Yes / No question.
fn yes_no_options() -> Vec<CompletionItem> {
    ["Yes", "No"]
        .into_iter()
        .map(|o| CompletionItem {
            value: o.to_string(),
            label: o.to_string(),
            description: None,
        })
        .collect()
}

pub fn command_specs() -> Vec<CommandSpec> {
    BUILTIN_COMMANDS
        .iter()
        .map(|(name, desc)| CommandSpec::new(name, desc))
        .collect()
}

/// The path argument of `/export` and `/import` as pi reads it: the first word, or a
/// quoted string (`"my file.jsonl"`); `None` when there is none.
fn path_argument(args: &str) -> Option<String> {
    let args = args.trim_start();
    let first = args.chars().next()?;
    if first == '"' || first == '\'' {
        let rest = &args[1..];
        return rest.find(first).map(|end| rest[..end].to_string());
    }
    Some(args.split_whitespace().next()?.to_string())
}

impl App {
    /// The built-in commands, then the extensions' commands, the prompt templates and
    /// the skills (`/skill:name`), as the `/` completion lists them.
    pub fn all_command_specs(&self) -> Vec<CommandSpec> {
        let mut specs = command_specs();
        // pi completes `/model <search>` with the scoped models (else every available
        // one) as `provider/id`.
        if let Some(model) = specs.iter_mut().find(|c| c.name == "model") {
            let scoped = self.session.scoped_models();
            let models = if scoped.is_empty() {
                self.session.available_models()
            } else {
                scoped
            };
            model.arguments = models
                .into_iter()
                .map(|m| CompletionItem {
                    value: format!("{}/{}", m.provider, m.id),
                    label: m.id,
                    description: Some(m.provider),
                })
                .collect();
            model.fuzzy_arguments = true;
        }
        // pi's order: templates, then extension commands, then skills.
        for t in self.session.prompt_templates() {
            specs.push(CommandSpec {
                name: t.name,
                description: Some(scope_tagged(Some(&t.description), t.scope)),
                argument_hint: t.argument_hint,
                ..CommandSpec::default()
            });
        }
        for c in self.session.extension_commands() {
            specs.push(CommandSpec {
                name: c.invocation_name,
                description: Some(scope_tagged(c.description.as_deref(), c.scope)),
                ..CommandSpec::default()
            });
        }
        if self.session.settings().enable_skill_commands() {
            for s in self.session.skills() {
                specs.push(CommandSpec {
                    name: format!("skill:{}", s.name),
                    description: Some(scope_tagged(Some(&s.description), s.scope)),
                    ..CommandSpec::default()
                });
            }
        }
        specs
    }

    /// Rebuilds `/` and `@` completion (after loading, and when the file walk is done).
    pub fn refresh_autocomplete(&mut self) {
        let provider = crate::modes::interactive::autocomplete::CombinedProvider::new(
            self.all_command_specs(),
            self.cwd.clone(),
            self.home.as_ref().map(Into::into),
        )
        .with_files(self.project_files.clone());
        self.editor
            .set_autocomplete_provider(std::sync::Arc::new(provider));
        let extensions_complete = !self.extension_ui.completion_providers.is_empty()
            || self
                .session
                .extension_commands()
                .iter()
                .any(|c| c.argument_completions);
        self.editor.set_extension_completion(extensions_complete);
    }

    /// Runs a submitted editor text.
    pub fn on_submit(&mut self, text: String) {
        self.editor.set_text("");
        if self.loading {
            self.queued_submits.push(text);
            self.flash("Your message is sent once the session has loaded".into());
            return;
        }
        let trimmed = text.trim();
        if let Some(rest) = trimmed.strip_prefix("!!") {
            self.run_bash(rest.trim(), true);
            return;
        }
        if let Some(rest) = trimmed.strip_prefix('!') {
            self.run_bash(rest.trim(), false);
            return;
        }
        if let Some(command) = trimmed.strip_prefix('/') {
            let (name, args) = match command.split_once(char::is_whitespace) {
                Some((n, a)) => (n, a.trim()),
                None => (command, ""),
            };
            if self.run_command(name, args) {
                return;
            }
        }
        if self.busy {
            self.session.steer(&text, Vec::new());
            return;
        }
        self.start_prompt(text);
    }

    /// Alt+Enter: a follow-up while working, a normal prompt otherwise.
    pub fn on_follow_up(&mut self, text: String) {
        if self.busy {
            self.session.follow_up(&text, Vec::new());
        } else {
            self.on_submit(text);
        }
    }

    pub fn start_prompt(&mut self, text: String) {
        self.busy = true;
        let session = self.session.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let result = session.prompt(&text, PromptOptions::default()).await;
            let _ = tx.send(AppMsg::PromptDone(result));
        });
    }

    fn run_bash(&mut self, command: &str, exclude: bool) {
        if command.is_empty() {
            return;
        }
        if self.session.is_bash_running() {
            self.notice(crate::core::agent_session::BASH_ALREADY_RUNNING);
            return;
        }
        let index = self.push_item(
            ChatItem::Bash(BashExecutionView::running(command, exclude)),
            false,
        );
        self.bash_item = Some(index);
        let session = self.session.clone();
        let tx = self.tx.clone();
        let command = command.to_string();
        tokio::spawn(async move {
            let chunk_tx = tx.clone();
            let result = session
                .user_bash(&command, exclude, move |chunk| {
                    let _ = chunk_tx.send(AppMsg::BashChunk(chunk.to_string()));
                })
                .await;
            let _ = tx.send(AppMsg::BashDone(result));
        });
    }

    /// Output of the running `!` command.
    pub fn on_bash_chunk(&mut self, chunk: &str) {
        if let Some(index) = self.bash_item {
            self.transcript.update_at(index, |i| {
                if let ChatItem::Bash(b) = i {
                    b.append_output(chunk);
                }
            });
        }
    }

    pub fn on_bash_done(
        &mut self,
        result: Result<crate::core::agent_session::BashOutcome, String>,
    ) {
        let Some(index) = self.bash_item.take() else {
            return;
        };
        match result {
            Ok(outcome) => self.transcript.update_at(index, |i| {
                if let ChatItem::Bash(b) = i {
                    b.output = outcome.output.clone();
                    b.truncated = outcome.truncated;
                    b.full_output_path = outcome.full_output_path.clone();
                    b.status = BashStatus::Complete {
                        exit_code: outcome.exit_code,
                        cancelled: outcome.cancelled,
                    };
                }
            }),
            Err(e) => {
                self.transcript.update_at(index, |i| {
                    if let ChatItem::Bash(b) = i {
                        b.status = BashStatus::Complete {
                            exit_code: None,
                            cancelled: false,
                        };
                    }
                });
                self.notice(e);
            }
        }
        self.mark_done(index);
    }

    /// Runs a built-in command; `false` if `name` is not one (then it is sent as text).
    pub(super) fn run_command(&mut self, name: &str, args: &str) -> bool {
        match name {
            // pi has no `/exit`: like any other unknown command it goes to the model (or to
            // an extension that registered it).
            "quit" => self.quit = true,
            "new" => {
                let session = self.session.clone();
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    let msg = match session.new_session(None).await {
                        Ok(()) => AppMsg::NewSession,
                        Err(e) => AppMsg::Error(e),
                    };
                    let _ = tx.send(msg);
                });
            }
            "compact" if self.session.message_entry_count() < 2 => {
                self.show_warning("Nothing to compact (no messages yet)");
            }
            "compact" => {
                let instructions = (!args.is_empty()).then(|| args.to_string());
                let session = self.session.clone();
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    // Errors are reported through compaction_end.
                    let _ = session.compact(instructions.as_deref()).await;
                    let _ = tx.send(AppMsg::Redraw);
                });
            }
            "name" => {
                if !args.is_empty() {
                    self.set_session_name(args);
                } else if let Some(current) = self
                    .session
                    .status()
                    .session_name
                    .filter(|n| !n.is_empty())
                {
                    self.notice(format!("Session name: {current}"));
                } else {
                    self.show_warning("Usage: /name <name>");
                }
            }
            "session" => self.show_session_info(),
            "copy" => self.copy_last_answer(),
            "hotkeys" => self.show_hotkeys(),
            "debug" => self.write_debug_log(),
            "changelog" => {
                let markdown = changelog::full_markdown(&changelog::entries());
                self.show_block(ChangelogView::Full(markdown));
            }
            "model" => self.model_command(args),
            "thinking" => self.thinking_command(args),
            "scoped-models" => self.open_scoped_models(),
            "fork" => self.open_fork_selector(),
            "clone" => {
                let session = self.session.clone();
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    let msg = match session.clone_session().await {
                        Ok(()) => AppMsg::Status("Cloned to new session".into()),
                        Err(e) => AppMsg::Error(e),
                    };
                    let _ = tx.send(msg);
                });
            }
            "tree" => self.open_tree(None),
            "resume" => self.open_resume(),
            "settings" => self.open_settings(),
            "export" => match path_argument(args) {
                Some(path) if path.ends_with(".jsonl") => {
                    match self.session.export_jsonl(Some(&path)) {
                        Ok(file) => {
                            self.show_status(format!("Session exported to: {}", file.display()))
                        }
                        Err(e) => self.show_error(format!("Failed to export session: {e}")),
                    }
                }
                path => self.export_html(path.as_deref().unwrap_or("")),
            },
            "share" => self.share(),
            "import" => match path_argument(args) {
                None => self.show_error("Usage: /import <path.jsonl>"),
                Some(path) => {
                    let options = ["Yes".to_string(), "No".to_string()]
                        .into_iter()
                        .map(|o| CompletionItem {
                            value: o.clone(),
                            label: o,
                            description: None,
                        })
                        .collect();
                    self.overlay = Some(Overlay::select(
                        &format!("Import session\nReplace current session with {path}?"),
                        options,
                        SelectPurpose::Import { path },
                    ));
                }
            },
            "login" => self.open_login(),
            "logout" => self.open_logout(),
            "reload" => self.start_reload(),
            "trust" => self.open_trust_selector(),
            "undo-restore" => match self.session.undo_restore() {
                Ok(files) => self.notice(format!(
                    "Restored {} file(s): {}",
                    files.len(),
                    files.join(", ")
                )),
                Err(e) => self.notice(e),
            },
            "checkpoints" if args.trim() == "prune" => match self.session.prune_checkpoints() {
                Ok(r) => self.notice(format!(
                    "Pruned checkpoints: removed {} file(s), freed {:.1} MB; {} file(s), {:.1} MB still in use",
                    r.removed_files,
                    r.freed_bytes as f64 / 1_048_576.0,
                    r.kept_files,
                    r.kept_bytes as f64 / 1_048_576.0
                )),
                Err(e) => self.notice(e),
            },
            "checkpoints" => {
                let (bytes, files) = self.session.checkpoint_disk_usage();
                let state = if self.session.settings().checkpoints_enabled() {
                    "on"
                } else {
                    "off (checkpoints.enabled)"
                };
                self.notice(format!(
                    "Checkpoints {state}: {files} file(s), {:.1} MB in {}",
                    bytes as f64 / 1_048_576.0,
                    self.session.checkpoint_store().root().display()
                ));
            }
            _ => return false,
        }
        self.dirty = true;
        true
    }

    fn set_session_name(&mut self, name: &str) {
        match self.session.set_session_name(name) {
            Ok(()) => self.notice(format!("Session name set: {name}")),
            Err(e) => self.notice(e),
        }
        self.footer_cache = None;
    }

    fn show_session_info(&mut self) {
        let view = crate::modes::interactive::components::session_info::SessionInfoView {
            name: self.session.status().session_name,
            stats: self.session.stats(),
        };
        self.show_block(view);
    }

    /// pi's `/debug`: writes every drawn line (as the terminal gets it, with its
    /// width) and the conversation's messages (JSONL) to `<agent dir>/pi-debug.log`.
    fn write_debug_log(&mut self) {
        let (width, height) = (self.width(), self.height());
        let lines = self.all_lines();
        let mut text = format!(
            "Debug output at {}\nTerminal: {width}x{height}\nTotal lines: {}\n\n=== All rendered lines with visible widths ===\n",
            chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            lines.len()
        );
        let columns = u16::try_from(width).unwrap_or(u16::MAX);
        for (i, line) in lines.iter().enumerate() {
            let encoded = crate::modes::interactive::ansi::encode_line(line, columns);
            let visible = crate::modes::interactive::ansi::line_width(line).min(width);
            let quoted = serde_json::to_string(&encoded).unwrap_or_default();
            text.push_str(&format!("[{i}] (w={visible}) {quoted}\n"));
        }
        text.push_str("\n=== Agent messages (JSONL) ===\n");
        for message in self.session.messages() {
            text.push_str(&serde_json::to_string(&message).unwrap_or_default());
            text.push('\n');
        }
        let path = self.session.paths().agent_dir.join("pi-debug.log");
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, text));
        match written {
            Ok(()) => self.show_block(DebugWritten {
                path: path.display().to_string(),
            }),
            Err(e) => self.notice(format!("Error: Could not write {}: {e}", path.display())),
        }
    }

    fn show_hotkeys(&mut self) {
        let extensions = self
            .extension_shortcuts()
            .into_iter()
            .map(|s| {
                let description = s
                    .description
                    .unwrap_or_else(|| s.extension_path.display().to_string());
                (s.key, description)
            })
            .collect();
        self.show_block(crate::modes::interactive::components::hotkeys::HotkeysView { extensions });
    }

    /// Adds a block to the chat (`/hotkeys`, `/session`, `/changelog`), as pi does: it
    /// scrolls into the terminal's scrollback like the rest of the chat.
    fn show_block(&mut self, view: impl Component + Send + 'static) {
        self.push_item(ChatItem::View(Box::new(view)), true);
    }

    pub(super) fn copy_last_answer(&mut self) {
        let Some(text) = self.session.last_assistant_text() else {
            self.show_error("No agent messages to copy yet.");
            return;
        };
        match super::clipboard::copy(&text) {
            Ok(how) => self.show_status(format!("Copied last agent message to clipboard{how}")),
            Err(e) => self.show_error(e),
        }
    }

    /// `/thinking [level]`: a level the model supports is set for the session at once;
    /// without one the thinking selector opens.
    fn thinking_command(&mut self, args: &str) {
        let levels = self.session.available_thinking_levels();
        let wanted = args.trim();
        if wanted.is_empty() {
            let current = self.session.thinking_level();
            let default = self
                .session
                .settings()
                .default_thinking_level()
                .unwrap_or(crate::core::agent_session::DEFAULT_THINKING_LEVEL);
            self.overlay = Some(Overlay::Thinking(
                crate::modes::interactive::components::thinking_selector::ThinkingSelector::new(
                    current, &levels, default,
                ),
            ));
            return;
        }
        match levels
            .iter()
            .find(|l| l.as_str().eq_ignore_ascii_case(wanted))
        {
            Some(level) => self.select_thinking_level(*level, false),
            None => {
                let names: Vec<&str> = levels.iter().map(|l| l.as_str()).collect();
                self.show_error(format!(
                    "Unknown thinking level \"{wanted}\". Available levels: {}.",
                    names.join(", ")
                ));
            }
        }
    }

    /// Sets the thinking level for the session (and, with `save_default`, as the saved
    /// default), with pi's status line.
    pub(super) fn select_thinking_level(
        &mut self,
        level: crate::ai::model::ThinkingLevel,
        save_default: bool,
    ) {
        let result = if save_default {
            self.session.set_thinking_level_as_default(level)
        } else {
            self.session.set_thinking_level(level)
        };
        match result {
            Ok(_) if save_default => self.show_status(format!("Default thinking level: {level}")),
            Ok(_) => self.show_status(format!("Thinking level: {level}")),
            Err(e) => self.show_error(e),
        }
        self.footer_cache = None;
    }

    pub fn open_model_selector(&mut self) {
        self.open_model_selector_with("");
    }

    /// The model selector, searching for `query` (`/model <text>` without an exact match).
    pub fn open_model_selector_with(&mut self, query: &str) {
        let error = self.session.reload_models();
        let current = self.session.model();
        let models = self.session.available_models();
        if models.is_empty() {
            self.notice("No models available: set an API key (/login) or configure models.json");
            return;
        }
        let scoped = self.session.scoped_models();
        let settings = self.session.settings();
        let default = settings.default_provider().zip(settings.default_model());
        let selector = crate::modes::interactive::components::model_selector::ModelSelector::new(
            models,
            current
                .as_ref()
                .map(|m| (m.provider.as_str(), m.id.as_str())),
        )
        .with_default(default)
        .with_scoped(scoped)
        .with_query(query)
        .with_error(error);
        self.overlay = Some(Overlay::Models(Box::new(selector)));
    }

    pub fn open_fork_selector(&mut self) {
        let messages = self.session.fork_messages();
        if messages.is_empty() {
            self.notice("No messages to fork from");
            return;
        }
        let selector = UserMessageSelector::from_pairs(messages);
        self.overlay = Some(Overlay::Fork(Box::new(selector)));
    }

    fn open_resume(&mut self) {
        // `--no-session` keeps nothing, but the project's saved sessions can still be
        // opened (pi lists them too).
        let dir = self
            .session
            .with_session(|m| m.session_dir().map(|d| d.to_path_buf()))
            .or_else(|| self.factory.as_ref().map(|f| f.session_dir().to_path_buf()));
        let Some(dir) = dir else {
            self.notice("This session is not saved; there is nothing to resume from");
            return;
        };
        let current = self
            .session
            .with_session(|m| m.session_file().map(|p| p.to_path_buf()));
        self.open_session_picker(dir, current, true, false);
    }

    /// Shows the session picker, listing sessions in the background.
    pub fn open_session_picker(
        &mut self,
        current_dir: std::path::PathBuf,
        current_session: Option<std::path::PathBuf>,
        allow_rename: bool,
        at_startup: bool,
    ) {
        let picker = SessionPicker::new()
            .with_rename(allow_rename)
            .with_current_session(current_session);
        let tx = self.tx.clone();
        let loader = Loader::start_with_waker(
            LoaderConfig {
                current_dir,
                sessions_root: Some(self.session.paths().sessions_root()),
            },
            move || {
                let _ = tx.send(AppMsg::Redraw);
            },
        );
        self.overlay = Some(Overlay::Sessions {
            picker: Box::new(picker),
            loader: Some(loader),
            at_startup,
        });
    }

    /// `/tree`: the session tree, with the cursor on `initial` (default: the leaf).
    pub fn open_tree(&mut self, initial: Option<EntryId>) {
        let snapshot = self.session.with_session(TreeSnapshot::from_session);
        if snapshot.is_empty() {
            self.notice("No entries in session");
            return;
        }
        let filter = FilterMode::from_setting(self.session.settings().tree_filter_mode());
        let selector = TreeSelector::new(
            snapshot,
            TreeSelectorOptions {
                visible_rows: TreeSelector::rows_for_terminal(self.height()),
                filter,
                initial_selection: initial,
            },
        );
        let mut selector = selector;
        selector.set_file_changes(self.session.entries_with_checkpoints());
        self.overlay = Some(Overlay::Tree {
            selector: Box::new(selector),
            label: None,
            diff: None,
        });
    }

    /// What `/tree`, its summary question and `/fork` answered.
    fn on_tree_outcome(&mut self, outcome: OverlayOutcome) -> KeyCommand {
        match outcome {
            OverlayOutcome::TreeAlreadyAtLeaf => {
                self.overlay = None;
                self.notice("Already at this point");
            }
            OverlayOutcome::TreeChosen(target) => {
                if self.session.settings().branch_summary_skip_prompt() {
                    self.overlay = None;
                    self.navigate(target, NavigateOptions::default());
                } else {
                    self.overlay = Some(Overlay::Summarize {
                        dialog: SummarizeBranchDialog::new(),
                        target,
                    });
                }
            }
            OverlayOutcome::TreeDiff(from, target) => {
                let title = if from.is_some() {
                    "Files: marked point → this point of the tree"
                } else {
                    "Files: working tree → this point of the tree"
                };
                match self
                    .session
                    .checkpoint_diff(from.as_ref().map(EntryId::as_str), target.as_str())
                {
                    Ok(files) => {
                        let rows = self.height().saturating_sub(12).max(5);
                        let view = CheckpointDiffView::new(title, &files, rows);
                        if let Some(Overlay::Tree { diff, .. }) = self.overlay.as_mut() {
                            *diff = Some(Box::new(view));
                        }
                    }
                    Err(e) => self.notice(e),
                }
            }
            OverlayOutcome::TreeEditLabel(target, current) => {
                if let Some(Overlay::Tree { label, .. }) = self.overlay.as_mut() {
                    let input = LineInput::with_value(current.as_deref().unwrap_or(""));
                    *label = Some((target, Box::new(input)));
                }
            }
            OverlayOutcome::TreeLabel { target, label } => {
                match self.session.set_label(target.as_str(), label.as_deref()) {
                    Ok(()) => {
                        let now = crate::session::clock::now_iso();
                        if let Some(Overlay::Tree { selector, .. }) = self.overlay.as_mut() {
                            selector.set_label(&target, label.as_deref(), Some(&now));
                        }
                    }
                    Err(e) => self.notice(e),
                }
            }
            OverlayOutcome::SummaryChoice(target, choice) => match choice {
                SummarizeOutcome::NoSummary | SummarizeOutcome::Summarize => {
                    self.overlay = None;
                    self.navigate(
                        target,
                        NavigateOptions {
                            summarize: choice == SummarizeOutcome::Summarize,
                            ..NavigateOptions::default()
                        },
                    );
                }
                SummarizeOutcome::Custom => {
                    self.overlay = Some(Overlay::input(
                        "Custom summarization instructions",
                        "",
                        self.keys.clone(),
                        InputPurpose::CustomSummary { target },
                    ));
                }
                SummarizeOutcome::BackToTree | SummarizeOutcome::None => {
                    self.open_tree(Some(target));
                }
            },
            OverlayOutcome::BackToSummary(target) => {
                self.overlay = Some(Overlay::Summarize {
                    dialog: SummarizeBranchDialog::new(),
                    target,
                });
            }
            OverlayOutcome::ForkFrom(target) => {
                self.overlay = None;
                let session = self.session.clone();
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    let msg = match session.fork(target.as_str()).await {
                        Ok(r) if r.cancelled => AppMsg::Info("Fork cancelled".into()),
                        Ok(r) => AppMsg::Forked(r.text.unwrap_or_default()),
                        Err(e) => AppMsg::Error(e),
                    };
                    let _ = tx.send(msg);
                });
            }
            _ => {}
        }
        KeyCommand::None
    }

    fn open_settings(&mut self) {
        let settings = self.session.settings();
        let mut values = SettingsValues::from_settings(&settings);
        values.thinking_level = self.session.thinking_level();
        values.thinking_levels = self.session.available_thinking_levels();
        values.theme = self.theme.name().to_string();
        values.themes = self.themes.names();
        if self.image_protocol.is_none() {
            // pi lists the image entries only where the terminal can draw images.
            values.show_images = None;
            values.image_width = None;
        }
        self.overlay = Some(Overlay::Settings(Box::new(SettingsSelector::new(&values))));
    }

    /// Results of the pickers and the settings list.
    pub fn on_picker_outcome(&mut self, outcome: OverlayOutcome) -> KeyCommand {
        match outcome {
            OverlayOutcome::SessionChosen(path) => {
                let at_startup = matches!(
                    self.overlay,
                    Some(Overlay::Sessions {
                        at_startup: true,
                        ..
                    })
                );
                self.overlay = None;
                return self.resume(path, at_startup);
            }
            OverlayOutcome::StartupCancelled => {
                // The picker stays on the screen after quitting, as pi leaves it.
                self.quit_message = Some("No session selected".into());
                self.quit = true;
            }
            OverlayOutcome::RenameSession { path, name } => {
                let is_current = self
                    .session
                    .with_session(|m| m.session_file().is_some_and(|f| f == path));
                let result = if is_current {
                    self.session.set_session_name(&name).map(|()| name.clone())
                } else {
                    rename_session_file(&path, &name).map(|()| name.clone())
                };
                self.footer_cache = None;
                if let Some(Overlay::Sessions { picker, .. }) = self.overlay.as_mut() {
                    picker.renamed(&path, result);
                }
            }
            OverlayOutcome::DeleteSession(path) => {
                let result = delete_session_file(&path);
                if let Some(Overlay::Sessions { picker, .. }) = self.overlay.as_mut() {
                    picker.deleted(&path, result);
                }
            }
            OverlayOutcome::ModelChosen {
                provider,
                id,
                save_default,
            } => {
                self.overlay = None;
                let model = self.session.find_model(&provider, &id);
                let chosen = model.map(|m| {
                    if save_default {
                        self.session.set_model_as_default(m)
                    } else {
                        self.session.set_model(m)
                    }
                });
                match chosen {
                    Some(Ok(())) => {
                        self.show_status(if save_default {
                            format!("Default model: {provider}/{id}")
                        } else {
                            format!("Model: {id}")
                        });
                        self.warn_anthropic_extra_usage();
                    }
                    Some(Err(e)) => self.notice(e),
                    None => self.notice(format!("Model {provider}/{id} is no longer available")),
                }
                self.footer_cache = None;
            }
            OverlayOutcome::TrustChosen(choice) => {
                self.overlay = None;
                self.save_trust_choice(&choice);
            }
            OverlayOutcome::ThinkingChosen {
                level,
                save_default,
            } => {
                self.overlay = None;
                self.select_thinking_level(level, save_default);
            }
            OverlayOutcome::SettingChanged {
                setting,
                key,
                value,
            } => self.apply_setting(setting, key, value),
            OverlayOutcome::PreviewTheme(name) => self.use_theme(&name),
            OverlayOutcome::ScopedModelsChanged(enabled) => self.on_scoped_models_changed(enabled),
            OverlayOutcome::ScopedModelsSaved(enabled) => self.on_scoped_models_saved(enabled),
            OverlayOutcome::LoginProviderChosen(mode, option) => {
                self.on_login_provider_chosen(mode, option);
            }
            OverlayOutcome::LoginProvidersCancelled(mode) => {
                self.on_login_providers_cancelled(mode)
            }
            OverlayOutcome::ApiKeyEntered {
                provider,
                name,
                key,
            } => self.on_api_key_entered(&provider, &name, &key),
            tree @ (OverlayOutcome::TreeChosen(_)
            | OverlayOutcome::TreeAlreadyAtLeaf
            | OverlayOutcome::TreeEditLabel(..)
            | OverlayOutcome::TreeDiff(..)
            | OverlayOutcome::TreeLabel { .. }
            | OverlayOutcome::SummaryChoice(..)
            | OverlayOutcome::BackToSummary(_)
            | OverlayOutcome::ForkFrom(_)) => return self.on_tree_outcome(tree),
            OverlayOutcome::Keep
            | OverlayOutcome::Cancelled
            | OverlayOutcome::Selected(..)
            | OverlayOutcome::Entered(..) => {}
        }
        KeyCommand::None
    }

    /// Saves a changed setting and applies it to the running session at once.
    fn apply_setting(&mut self, setting: SettingId, key: &[&str], value: serde_json::Value) {
        if let Err(e) = self.session.set_global_setting(key, value.clone()) {
            self.notice(e);
        }
        let flag = value.as_bool().unwrap_or(false);
        let number = value.as_u64().unwrap_or(0) as usize;
        let text = value.as_str().unwrap_or_default().to_string();
        match setting {
            SettingId::AutoCompact => self.session.set_auto_compaction(flag),
            SettingId::HideThinking => {
                self.hide_thinking = flag;
                self.transcript.set_hide_thinking(flag);
                self.full_redraw = true;
            }
            SettingId::ThinkingLevel => {
                if let Some(level) = crate::ai::model::ThinkingLevel::parse(&text) {
                    let _ = self.session.set_thinking_level(level);
                }
            }
            SettingId::Theme => self.use_theme(&text),
            SettingId::SteeringMode | SettingId::FollowUpMode => {
                let mode = crate::core::settings::QueueMode::parse(&text)
                    .unwrap_or(crate::core::settings::QueueMode::OneAtATime);
                if setting == SettingId::SteeringMode {
                    self.session.set_steering_mode(mode);
                } else {
                    self.session.set_follow_up_mode(mode);
                }
            }
            SettingId::HardwareCursor => self.show_hardware_cursor = flag,
            SettingId::ShowImages => {
                self.show_images = flag;
                self.full_redraw = true;
            }
            SettingId::ImageWidth => {
                self.image_width_cells = number.max(1);
                self.full_redraw = true;
            }
            SettingId::EditorPadding => self.editor.set_padding_x(number),
            SettingId::OutputPadding => {
                // As pi: the transcript already shown takes the new padding too.
                self.output_pad = number.min(1);
                self.full_redraw = true;
            }
            SettingId::AutocompleteMaxVisible => self.editor.set_autocomplete_max_visible(number),
            SettingId::QuietStartup => {
                self.header.quiet = match (flag, text.as_str()) {
                    (true, _) => crate::core::settings::QuietStartup::All,
                    (false, "header") => crate::core::settings::QuietStartup::Header,
                    (false, _) => crate::core::settings::QuietStartup::Off,
                };
            }
            // Read where they act: the warning when it is due, the progress indicator
            // at the next run. `transport` and `enableInstallTelemetry` are kept for pi
            // (pi-rs streams over SSE and sends no install ping; see docs/settings.md).
            SettingId::AnthropicExtraUsage
            | SettingId::TerminalProgress
            | SettingId::Transport
            | SettingId::InstallTelemetry
            | SettingId::Warnings
            | SettingId::AutoResizeImages
            | SettingId::BlockImages
            | SettingId::SkillCommands
            | SettingId::ClearOnShrink
            | SettingId::CollapseChangelog
            | SettingId::DoubleEscapeAction
            | SettingId::TreeFilterMode => {}
        }
        self.footer_cache = None;
    }

    /// Switches the colours (a preview while choosing, or the saved choice).
    fn use_theme(&mut self, name: &str) {
        let mode = crate::modes::interactive::theme::ColorMode::detect(|k| std::env::var(k).ok());
        match self
            .themes
            .theme(name, &self.session.paths().themes(), mode)
        {
            Ok(theme) => {
                self.theme = theme;
                // The choice is saved; `--use-theme` no longer applies.
                self.theme_override = None;
                self.full_redraw = true;
            }
            Err(e) => self.notice(e.to_string()),
        }
    }

    /// A choice made in a list dialog.
    pub fn on_selected(&mut self, purpose: SelectPurpose, choice: CompletionItem) -> KeyCommand {
        match purpose {
            SelectPurpose::Extension { id } => {
                self.answer_extension_dialog(&id, UiResponse::Value(choice.value));
            }
            SelectPurpose::Import { path } => {
                if choice.value != "Yes" {
                    self.show_status("Import cancelled");
                    return KeyCommand::None;
                }
                // As pi: a file whose header names a directory that is gone is imported
                // only once the user agreed to continue it here (asked before copying).
                if let Some(issue) = self.session.import_missing_cwd(&path) {
                    self.overlay = Some(Overlay::select(
                        &format!("Session cwd not found\n{}", issue.prompt_text()),
                        yes_no_options(),
                        SelectPurpose::ImportMissingCwd { path },
                    ));
                    return KeyCommand::None;
                }
                self.import_session(path, false);
            }
            SelectPurpose::ImportMissingCwd { path } => {
                if choice.value == "Yes" {
                    self.import_session(path, true);
                } else {
                    self.show_status("Import cancelled");
                }
            }
            SelectPurpose::ExtensionConfirm { id } => {
                let yes = choice.value == "Yes";
                self.answer_extension_dialog(&id, UiResponse::Confirmed(yes));
            }
            SelectPurpose::Model => {
                let found = choice
                    .value
                    .split_once('/')
                    .and_then(|(p, id)| self.session.find_model(p, id));
                if let Some(model) = found {
                    match self.session.set_model(model) {
                        Ok(()) => {
                            self.notice(format!("Model: {}", choice.value));
                            self.warn_anthropic_extra_usage();
                        }
                        Err(e) => self.notice(e),
                    }
                    self.footer_cache = None;
                }
            }
            SelectPurpose::LoginMethod => self.on_login_method(&choice.value),
            SelectPurpose::Thinking => {
                if let Some(level) = crate::ai::model::ThinkingLevel::parse(&choice.value) {
                    let _ = self.session.set_thinking_level(level);
                    self.footer_cache = None;
                }
            }
            SelectPurpose::ResumeSession => {
                return self.resume(std::path::PathBuf::from(&choice.value), false);
            }
            SelectPurpose::RestoreFiles {
                target,
                mut options,
            } => {
                options.restore_files = choice.value != "keep";
                options.force = choice.value == "force";
                self.navigate_now(target, options);
            }
            SelectPurpose::MissingCwd { path, at_startup } => {
                let here = choice.value == "Yes";
                match (here, at_startup) {
                    (true, true) => return KeyCommand::OpenStartupSession { path, here },
                    // pi exits quietly when the question is declined at startup.
                    (false, true) => self.quit = true,
                    (true, false) => self.switch_session(path, true),
                    (false, false) => self.notice("Resume cancelled"),
                }
            }
        }
        KeyCommand::None
    }

    /// Opens a session chosen with `/resume` (or the `--resume` picker at startup). A
    /// session whose header names a directory that is gone is not opened before the user
    /// agreed to continue it in the current one (pi's "Session cwd not found").
    fn resume(&mut self, path: std::path::PathBuf, at_startup: bool) -> KeyCommand {
        if let Some(issue) = MissingCwd::check(&path, &self.cwd) {
            self.overlay = Some(Overlay::select(
                &format!("Session cwd not found\n{}", issue.prompt_text()),
                yes_no_options(),
                SelectPurpose::MissingCwd { path, at_startup },
            ));
            return KeyCommand::None;
        }
        if at_startup {
            return KeyCommand::OpenStartupSession { path, here: false };
        }
        self.switch_session(path, false);
        KeyCommand::None
    }

    /// `/import` of `path` (as typed) in the background (`here`: continued in the current
    /// directory instead of the one the file names).
    fn import_session(&mut self, path: String, here: bool) {
        let session = self.session.clone();
        let cwd = here.then(|| self.cwd.clone());
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let msg = match session.import_jsonl_in(&path, cwd.as_deref()).await {
                Ok(_) => AppMsg::Status(format!("Session imported from: {path}")),
                Err(e) => AppMsg::Error(format!("Failed to import session: {e}")),
            };
            let _ = tx.send(msg);
        });
    }

    /// Switches to another session file in the background (`here`: in the current
    /// directory instead of the one the file names). Refusals arrive as errors.
    fn switch_session(&mut self, path: std::path::PathBuf, here: bool) {
        let session = self.session.clone();
        let cwd = here.then(|| self.cwd.clone());
        let tx = self.tx.clone();
        tokio::spawn(async move {
            match session.switch_session_in(&path, cwd.as_deref()).await {
                Ok(()) if cwd.is_some() => {
                    let _ = tx.send(AppMsg::Info("Resumed session in current cwd".into()));
                }
                Ok(()) => {
                    let _ = tx.send(AppMsg::Info("Resumed session".into()));
                }
                Err(e) => {
                    let _ = tx.send(AppMsg::Error(e));
                }
            }
        });
    }

    /// Text entered in an input dialog.
    pub fn on_entered(&mut self, purpose: InputPurpose, text: String) -> KeyCommand {
        match purpose {
            InputPurpose::Extension { id } => {
                self.answer_extension_dialog(&id, UiResponse::Value(text));
            }
            InputPurpose::CustomSummary { target } => self.navigate(
                target,
                NavigateOptions {
                    summarize: true,
                    custom_instructions: Some(text),
                    ..NavigateOptions::default()
                },
            ),
        }
        KeyCommand::None
    }

    /// Moves the leaf (`/tree`), reporting back with the text for the editor. When the
    /// files at the target differ from the current ones, asks first whether to restore them
    /// (listing files changed outside the agent, which a restore would overwrite).
    pub fn navigate(&mut self, target: EntryId, options: NavigateOptions) {
        let plan = self.session.restore_plan_for_target(target.as_str());
        if plan.writes.is_empty() {
            return self.navigate_now(target, options);
        }
        let item = |value: &str, label: String| CompletionItem {
            value: value.to_string(),
            label,
            description: None,
        };
        let n = plan.writes.len();
        let mut items = Vec::new();
        let mut title = format!("Restore files?\n{n} file(s) differ from this point of the tree.");
        if plan.conflicts.is_empty() {
            items.push(item("restore", format!("Restore {n} file(s)")));
        } else {
            title.push_str(&format!(
                "\nChanged outside the agent: {}",
                plan.conflicts.join(", ")
            ));
            items.push(item(
                "force",
                format!("Restore {n} file(s), overwriting these changes"),
            ));
        }
        items.push(item("keep", "Keep files as they are".to_string()));
        self.overlay = Some(Overlay::select(
            &title,
            items,
            SelectPurpose::RestoreFiles { target, options },
        ));
    }

    /// Moves the leaf without asking about files.
    fn navigate_now(&mut self, target: EntryId, options: NavigateOptions) {
        let session = self.session.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let summarizing = options.summarize;
            let msg = match session.navigate_tree(target.as_str(), options).await {
                // An aborted summary goes back to the tree, on the same entry (as pi).
                Ok(r) if r.cancelled && summarizing => AppMsg::SummaryCancelled(target),
                Ok(r) if r.cancelled => AppMsg::Info("Navigation cancelled".into()),
                Ok(r) => {
                    if let Some(report) =
                        r.restore.as_ref().filter(|x| !x.restored_files.is_empty())
                    {
                        let _ = tx.send(AppMsg::Info(format!(
                            "Restored {} file(s): {} (/undo-restore to undo)",
                            report.restored_files.len(),
                            report.restored_files.join(", ")
                        )));
                    }
                    AppMsg::Navigated(r.editor_text)
                }
                Err(e) => AppMsg::Error(e),
            };
            let _ = tx.send(msg);
        });
    }

    /// Esc Esc on an empty editor (`doubleEscapeAction`).
    pub fn on_double_escape(&mut self) {
        let action = self.session.settings().double_escape_action().to_string();
        match action.as_str() {
            "fork" => self.open_fork_selector(),
            "none" => {}
            _ => self.open_tree(None),
        }
    }
}

/// pi's autocomplete description of a template, skill or extension command: where it
/// was found as a tag (`[u]` user, `[p]` project, `[t]` command line), then the text.
/// (pi adds a package's source to the tag, `[u:npm:name]`; pi-rs's loaders do not keep
/// it.)
fn scope_tagged(
    description: Option<&str>,
    scope: crate::core::resource_paths::ResourceScope,
) -> String {
    use crate::core::resource_paths::ResourceScope;
    let tag = match scope {
        ResourceScope::User => "u",
        ResourceScope::Project => "p",
        ResourceScope::Cli => "t",
    };
    match description.filter(|d| !d.is_empty()) {
        Some(d) => format!("[{tag}] {d}"),
        None => format!("[{tag}]"),
    }
}

/// What `/debug` says after writing its log: `✓ Debug log written` and the file, with a
/// blank row above and below, as pi's.
struct DebugWritten {
    path: String,
}

impl Component for DebugWritten {
    fn render(
        &self,
        width: usize,
        ui: &crate::modes::interactive::components::Ui<'_>,
    ) -> Vec<ratatui::text::Line<'static>> {
        use crate::modes::interactive::components::styled_text;
        use crate::modes::interactive::theme::ThemeToken;
        let mut out = vec![
            ratatui::text::Line::default(),
            ratatui::text::Line::default(),
        ];
        out.extend(styled_text(
            "✓ Debug log written",
            ui.fg(ThemeToken::Accent),
            width,
            1,
        ));
        out.extend(styled_text(&self.path, ui.fg(ThemeToken::Muted), width, 1));
        out.push(ratatui::text::Line::default());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::path_argument;

    #[test]
    fn path_arguments_are_the_first_word_or_a_quoted_string() {
        assert_eq!(path_argument(""), None);
        assert_eq!(path_argument("   "), None);
        assert_eq!(path_argument("out.jsonl"), Some("out.jsonl".into()));
        assert_eq!(path_argument(" a.html extra"), Some("a.html".into()));
        assert_eq!(
            path_argument("\"my file.jsonl\" x"),
            Some("my file.jsonl".into())
        );
        assert_eq!(path_argument("'it''"), Some("it".into()));
        assert_eq!(path_argument("\"unclosed"), None);
    }
}
