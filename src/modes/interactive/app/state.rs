//! The interactive app's state: the chat transcript (split into what is already in the
//! terminal's scrollback and what is still live), the editor, the status line and the
//! footer data, plus the bookkeeping that maps streaming events onto chat items.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use crate::ai::stream::PartialMessage;
use crate::core::agent_session::AgentSession;
use crate::modes::interactive::components::Ui;
use crate::modes::interactive::components::footer::{FooterData, FooterModel, UsageTotals};
use crate::modes::interactive::components::header::StartupHeader;
use crate::modes::interactive::components::status::PendingMessages;
use crate::modes::interactive::components::transcript::{ChatItem, Transcript};
use crate::modes::interactive::editor::Editor;
use crate::modes::interactive::keys::Keybindings;
use crate::modes::interactive::renderer::InlineRenderer;
use crate::modes::interactive::theme::{Theme, ThemeToken};
use crate::session::entry::SessionEntry;
use crate::session::tree::EntryKind;

use super::msg::{AppMsg, Loaded};

/// What pi says when an Anthropic model is used with a subscription login.
pub const ANTHROPIC_EXTRA_USAGE_WARNING: &str = "Anthropic subscription auth is active. Third-party harness usage draws from extra usage and is billed per token, not your Claude plan limits. Manage extra usage at https://claude.ai/settings/usage.";
use super::overlay::Overlay;
use crate::extensions::{UiReply, UiRequest};

/// Extension UI state kept by the app (driven by `extension_ui`).
#[derive(Default)]
pub struct ExtensionUi {
    /// Dialogs waiting for the open one (or another overlay) to close.
    pub(super) waiting: VecDeque<UiRequest>,
    /// The dialog on screen: its request id and where its answer goes.
    pub(super) open: Option<(String, UiReply)>,
    /// `setStatus` texts by key, shown in the footer.
    pub statuses: BTreeMap<String, String>,
    /// `setWidget` lines by key, above the editor, in the order they were set (pi's
    /// `Map`: setting a key again moves it last).
    pub widgets_above: Vec<(String, Vec<String>)>,
    /// `setWidget` lines by key, below the editor.
    pub widgets_below: Vec<(String, Vec<String>)>,
    /// The `ctx.ui.custom` component on screen in place of the editor.
    pub(super) custom: Option<CustomView>,
    /// Widget keys whose lines a component rendered (shown as they are).
    pub component_widgets: std::collections::BTreeSet<String>,
    /// An extension's footer (`ctx.ui.setFooter`): the extension and its last lines.
    pub footer: Option<(PathBuf, Vec<String>)>,
    /// The extension that set the custom header (its lines are in `App::header`).
    pub header_owner: Option<PathBuf>,
    /// The last `ui_state` sent to the extensions (without the theme), the theme
    /// generation it carried, and a counter of session changes sent since.
    pub(super) sent_state: Option<(serde_json::Value, u64)>,
    /// `ctx.ui.setWorkingMessage`: shown instead of "Working..." while the agent works.
    pub working_message: Option<String>,
    /// Bumped when the footer data changes while live components are shown, so they are
    /// rendered again (pi renders them on every frame).
    pub(super) revision: u64,
    /// `ctx.ui.setWorkingVisible(false)` hides the working line.
    pub working_hidden: bool,
    /// `ctx.ui.setWorkingIndicator`: frames (coloured by the extension) and interval,
    /// and when it was set (the frame shown follows the clock).
    pub working_indicator: Option<(crate::extensions::protocol::WorkingIndicator, Instant)>,
    /// `ctx.ui.setEditorComponent`: the extension's editor on screen in place of pi-rs's.
    pub(super) editor: Option<ExtensionEditor>,
    /// Extensions that added autocomplete providers, in the order they did (pi chains
    /// the wrappers in that order).
    pub completion_providers: Vec<PathBuf>,
    /// Extensions with `ctx.ui.onTerminalInput` listeners, in the order they added them.
    pub input_listeners: Vec<PathBuf>,
    /// Chat items drawn by extensions (message renderers, tool renderers).
    pub(super) host_renders: super::host_render::HostRenders,
}

/// An extension's prompt editor (it lives in the extension's host): its last lines, the
/// text it holds (pi-rs's own editor mirrors it so app actions can read and change it),
/// its extension, and where keys go.
pub(super) struct ExtensionEditor {
    pub owner: PathBuf,
    pub lines: Vec<String>,
    /// The text the host last reported (or was last sent).
    pub text: String,
    pub input: crate::extensions::UiInput,
}

/// A custom component drawn by its extension's host: its last lines, and where keys go.
pub(super) struct CustomView {
    /// The host's id for it (`customRender` / `customClose` name it).
    pub custom_id: String,
    pub lines: Vec<String>,
    pub input: Option<crate::extensions::UiInput>,
}

/// What the status line shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    Idle,
    Working,
    Retrying {
        attempt: u32,
        max_attempts: u32,
        until: Instant,
    },
    Message(String),
}

/// The reply being streamed and the tool boxes of its calls.
#[derive(Debug, Default)]
pub struct Streaming {
    pub partial: PartialMessage,
    /// Transcript index of the assistant item.
    pub item: usize,
}

pub struct App {
    pub session: AgentSession,
    pub theme: Theme,
    /// `--use-theme`: the theme setting for this run (not saved), until one is chosen.
    pub theme_override: Option<String>,
    /// The custom themes `/settings` offers and the `theme` setting can name.
    pub themes: crate::modes::interactive::theme::ThemeCatalog,
    pub keys: Arc<Keybindings>,
    pub home: Option<String>,
    pub cwd: PathBuf,
    /// `cwd` for the footer's git branch poll (see [`App::enter_directory`]).
    pub watched_cwd: std::sync::Arc<std::sync::Mutex<PathBuf>>,
    pub header: StartupHeader,
    pub transcript: Transcript,
    /// Parallel to the transcript: whether each item is final (may go to scrollback).
    pub done: Vec<bool>,
    /// Items `[0, committed)` are in the terminal's scrollback.
    pub committed: usize,
    /// The header has been written to scrollback.
    pub header_written: bool,
    pub editor: Editor,
    pub status: Status,
    pub spinner: usize,
    pub pending: PendingMessages,
    /// The agent is running (between `agent_start` and the prompt task finishing).
    pub busy: bool,
    pub streaming: Option<Streaming>,
    /// Tool call id → transcript index of its box, while it runs.
    pub tool_items: HashMap<String, usize>,
    /// When each running tool call started (for the elapsed time shown in its box).
    pub tool_started: HashMap<String, Instant>,
    /// Token and cost totals of the whole session file (all branches), for the footer.
    pub usage: UsageTotals,
    /// Providers with credentials (the footer shows the provider when there are several).
    pub provider_count: usize,
    /// Transcript index of the running `!` command's box.
    pub bash_item: Option<usize>,
    pub last_ctrl_c: Option<Instant>,
    /// The status note at the end of the chat (pi's `showStatus`), while nothing came
    /// after it: the next status replaces it instead of stacking up.
    pub last_status: Option<usize>,
    pub last_escape: Option<Instant>,
    pub hide_thinking: bool,
    pub git_branch: Option<String>,
    pub renderer: InlineRenderer,
    /// Something changed since the last frame.
    pub dirty: bool,
    /// The whole screen and scrollback must be drawn again (resize, Ctrl+O, new session).
    pub full_redraw: bool,
    pub quit: bool,
    pub overlay: Option<Overlay>,
    /// Number of earlier items left out when a long session was opened.
    pub omitted_items: usize,
    /// A transient status message and when it was shown.
    pub flash: Option<(String, Instant)>,
    /// The footer's data; cleared when something it shows may have changed.
    pub footer_cache: Option<FooterData>,
    pub show_hardware_cursor: bool,
    /// `terminal.showImages`: images are drawn inline where the terminal can.
    pub show_images: bool,
    /// How this terminal draws images (from the environment; `None`: it cannot).
    pub image_protocol: Option<crate::modes::interactive::images::Protocol>,
    /// `terminal.imageWidthCells`.
    pub image_width_cells: usize,
    /// `outputPad`: the transcript's horizontal padding (0 or 1).
    pub output_pad: usize,
    pub tx: tokio::sync::mpsc::UnboundedSender<AppMsg>,
    /// The real session is still being opened; submits wait in `queued_submits`.
    pub loading: bool,
    pub queued_submits: Vec<String>,
    /// Extension commands waiting for the reload they asked for (`ctx.reload()`).
    pub reload_waiters: Vec<tokio::sync::oneshot::Sender<()>>,
    /// The revision of the session's extension theme files `themes` was built with.
    pub extension_themes_seen: u64,
    /// How long one frame may spend printing history.
    pub history_budget: std::time::Duration,
    /// Printed after the terminal is restored (e.g. `No session selected`).
    pub quit_message: Option<String>,
    /// `--resume`: the startup picker is waiting; what it picks is loaded by the factory.
    pub startup_pick: bool,
    /// The next draw first leaves the frame on the screen where it is and draws below it
    /// (the `--resume` picker stays in the scrollback above the session picked, as pi's).
    pub leave_frame: bool,
    /// Extensions' dialogs, statuses and widgets.
    pub extension_ui: ExtensionUi,
    /// Extension overlays drawn over the screen, and which one has the keyboard.
    pub ext_overlays: super::ext_overlays::ExtOverlays,
    /// `/share` is creating a gist; Escape cancels it.
    pub share_cancel: Option<tokio_util::sync::CancellationToken>,
    /// An extension asked to quit (`ctx.shutdown()`): done once the agent is idle.
    pub shutdown_requested: bool,
    /// Loads the sessions opened at startup and runs `/reload` (see
    /// [`super::InteractiveOptions::factory`]).
    pub factory: Option<Arc<crate::core::factory::SessionFactory>>,
    /// The project's files for `@` completion (walked in the background).
    pub project_files: std::sync::Arc<Vec<crate::modes::interactive::autocomplete::ProjectFile>>,
    /// Warnings from startup (theme, keybindings, settings, …) or the last `/reload`:
    /// shown again after every rebuild of the chat, so opening the session, `/tree` or a
    /// resize never wipes them.
    pub pinned_warnings: Vec<String>,
    /// What was odd about the current session's file (truncated or malformed lines,
    /// duplicate ids, …), kept the same way until another session is opened.
    pub session_warnings: Vec<String>,
    /// The startup notices ("What's New" after an update) were considered already.
    pub startup_notices_shown: bool,
    /// The Anthropic extra-usage warning was shown (once per run, as pi).
    pub anthropic_warning_shown: bool,
}

impl App {
    pub fn ui(&self) -> Ui<'_> {
        Ui::new(&self.theme, &self.keys)
            .with_home(self.home.as_deref())
            .with_images(self.image_config())
            .with_output_pad(self.output_pad)
    }

    /// How images are drawn: `None` (pi's text note) where the terminal cannot draw them
    /// or `terminal.showImages` is off.
    pub fn image_config(&self) -> Option<crate::modes::interactive::images::ImageConfig> {
        let protocol = self.image_protocol?;
        self.show_images
            .then_some(crate::modes::interactive::images::ImageConfig {
                protocol,
                width_cells: self.image_width_cells,
            })
    }

    pub fn width(&self) -> usize {
        self.renderer.size().0 as usize
    }

    pub fn height(&self) -> usize {
        self.renderer.size().1 as usize
    }

    /// Adds a chat item; `done` items may go to scrollback with the next frame.
    pub fn push_item(&mut self, item: ChatItem, done: bool) -> usize {
        // A status note stays replaceable only while it is the last item.
        if let Some(status) = self.last_status.take() {
            self.mark_done(status);
        }
        self.transcript.push(item);
        self.done.push(done);
        self.dirty = true;
        self.transcript.len() - 1
    }

    pub fn mark_done(&mut self, index: usize) {
        if let Some(d) = self.done.get_mut(index) {
            *d = true;
            self.dirty = true;
        }
    }

    /// A dim one-line note in the chat (`Navigated to selected point`, errors).
    pub fn notice(&mut self, text: impl Into<String>) {
        self.push_item(ChatItem::Notice(text.into()), true);
    }

    /// pi's `showError`: `Error: …` in the error colour.
    pub fn show_error(&mut self, text: impl std::fmt::Display) {
        self.notice(format!("Error: {text}"));
    }

    /// pi's `showWarning`: `Warning: …` in the warning colour.
    pub fn show_warning(&mut self, text: impl std::fmt::Display) {
        self.notice(format!("Warning: {text}"));
    }

    /// A note in a colour of its own (see
    /// [`Note`](crate::modes::interactive::components::transcript::Note)).
    pub fn note(&mut self, text: impl Into<String>, token: ThemeToken, blank_after: bool) {
        let note = crate::modes::interactive::components::transcript::Note {
            text: text.into(),
            token,
            blank_after,
        };
        self.push_item(ChatItem::View(Box::new(note)), true);
    }

    /// pi's `showStatus`: a dim note in the chat (`Thinking level: high`, `Switched to
    /// …`); another status right after it replaces it rather than adding a line.
    pub fn show_status(&mut self, text: impl Into<String>) {
        let text = text.into();
        if let Some(index) = self.last_status
            && index + 1 == self.transcript.len()
        {
            self.transcript
                .update_at(index, |item| *item = ChatItem::Notice(text));
            self.dirty = true;
            return;
        }
        let index = self.push_item(ChatItem::Notice(text), false);
        self.last_status = Some(index);
    }

    /// A warning that stays: shown now and again after every rebuild of the chat.
    pub fn pin_warning(&mut self, text: impl std::fmt::Display) {
        let text = format!("Warning: {text}");
        self.pinned_warnings.push(text.clone());
        self.notice(text);
    }

    /// pi's warning that an Anthropic subscription login is billed as extra usage: shown
    /// once per run, for an Anthropic model used with a subscription, unless
    /// `warnings.anthropicExtraUsage` is false. Called at startup, after a model switch
    /// and after a login.
    pub fn warn_anthropic_extra_usage(&mut self) {
        if self.anthropic_warning_shown || !self.session.settings().warn_anthropic_extra_usage() {
            return;
        }
        let Some(model) = self.session.model() else {
            return;
        };
        if self.session.anthropic_subscription_auth(&model) {
            self.anthropic_warning_shown = true;
            self.notice(format!("Warning: {ANTHROPIC_EXTRA_USAGE_WARNING}"));
        }
    }

    /// Turns the terminal's progress indicator on or off when `terminal.showTerminalProgress`
    /// is set (at the start and end of a run or a compaction, and on exit, as pi).
    pub fn terminal_progress(&mut self, active: bool) {
        if self.session.settings().show_terminal_progress() {
            self.renderer.set_progress(active, Instant::now());
        }
    }

    /// A warning about the current session's file, kept until another session opens.
    pub fn session_warning(&mut self, warning: &crate::session::error::LoadWarning) {
        let text = format!("Warning: {warning}");
        self.session_warnings.push(text.clone());
        self.notice(text);
    }

    /// How far the scrollback can advance: every item up to the first one still live.
    pub fn committable(&self) -> usize {
        let mut end = self.committed;
        while end < self.done.len() && self.done[end] && !self.extension_ui.host_renders.holds(end)
        {
            end += 1;
        }
        end
    }

    /// Rebuilds the chat from the agent's messages (after `/tree`, a compaction, a new or
    /// resumed session). Long sessions show their tail; the rest stays on disk.
    pub fn rebuild_transcript(&mut self) {
        self.last_status = None;
        const MAX_ITEMS_ON_OPEN: usize = 400;
        let messages = self.session.messages();
        // Long sessions: build the chat from the messages that make up its last items
        // only; rendering thousands of items that scroll out of sight at once would only
        // delay the first frame.
        let keep = tail_messages(&messages, MAX_ITEMS_ON_OPEN);
        self.omitted_items = count_items(&messages[..keep]);
        let label = self.transcript.hidden_thinking_label().to_string();
        self.transcript = Transcript::from_messages(
            &messages[keep..],
            self.transcript.expanded(),
            self.hide_thinking,
        );
        self.transcript.set_hidden_thinking_label(&label);
        self.transcript
            .set_bare_start(self.omitted_items == 0 && !self.header.lists_resources());
        self.extension_ui.host_renders.reset();
        self.done = vec![true; self.transcript.len()];
        self.committed = 0;
        self.streaming = None;
        self.tool_items.clear();
        self.full_redraw = true;
        self.dirty = true;
        self.warn_if_project_untrusted();
        // After the conversation, where they were first shown.
        let warnings: Vec<String> = self
            .pinned_warnings
            .iter()
            .chain(&self.session_warnings)
            .cloned()
            .collect();
        for text in warnings {
            self.notice(text);
        }
    }

    /// Once, when the first session is open: pi's "What's New" after an update. Nothing
    /// for a session with messages (continued or resumed); on a first run the version is
    /// only recorded (`lastChangelogVersion`); after an update the sections newer than the
    /// recorded version are shown (one line with `collapseChangelog`) and the version is
    /// recorded.
    pub fn show_startup_notices(&mut self) {
        use crate::modes::interactive::components::changelog::{self, ChangelogView};
        if std::mem::replace(&mut self.startup_notices_shown, true)
            || !self.session.messages().is_empty()
        {
            return;
        }
        let (last, collapse) = {
            let settings = self.session.settings();
            (
                settings.last_changelog_version().map(str::to_string),
                settings.collapse_changelog(),
            )
        };
        let entries = changelog::entries();
        let shown = changelog::whats_new(&entries, last.as_deref());
        if last.is_none() || shown.is_some() {
            // A settings file that cannot be written was reported when it was read; not
            // recording the version only means the notice may come again.
            let version = serde_json::Value::from(changelog::VERSION);
            let _ = self
                .session
                .set_global_setting(&["lastChangelogVersion"], version);
        }
        let Some(markdown) = shown else {
            return;
        };
        let spaced = !self.transcript.is_empty();
        let view = if collapse {
            let (major, minor, patch) = entries.first().map_or((0, 0, 0), |e| e.version);
            ChangelogView::Collapsed {
                version: format!("{major}.{minor}.{patch}"),
                spaced,
            }
        } else {
            ChangelogView::WhatsNew { markdown, spaced }
        };
        self.push_item(ChatItem::View(Box::new(view)), true);
    }

    /// Switches to the session loaded in the background and shows its conversation.
    pub fn install_session(&mut self, loaded: Loaded) {
        let trust_before = self.session.settings().project_trust();
        self.session = loaded.session;
        // The UI started on settings without the project's; trusted now, its theme,
        // keybindings and display settings apply.
        let mut ui_warnings = Vec::new();
        if self.session.settings().project_trust() != trust_before {
            ui_warnings = self.apply_ui_settings();
        }
        // A session opened from another project runs in its own directory (as in pi).
        let session_cwd = self.session.cwd().to_path_buf();
        if session_cwd != self.cwd {
            self.enter_directory(session_cwd);
        }
        self.usage = loaded.usage;
        self.provider_count = provider_count(&self.session);
        self.loading = false;
        if matches!(self.status, Status::Message(_)) {
            self.status = Status::Idle;
        }
        self.footer_cache = None;
        self.header.resources = header_resources(&self.session);
        self.header.resources.themes = self.themes.custom_names();
        self.refresh_autocomplete();
        self.pinned_warnings.extend(
            loaded
                .warnings
                .iter()
                .chain(&ui_warnings)
                .map(|w| format!("Warning: {w}")),
        );
        self.session_warnings = self
            .session
            .load_warnings()
            .iter()
            .map(|w| format!("Warning: {w}"))
            .collect();
        self.rebuild_transcript();
        self.show_startup_notices();
        self.warn_anthropic_extra_usage();
        self.forward_extension_ui();
        self.session
            .set_reload_handler(super::msg::ui_reload_handler(self.tx.clone()));
        // Messages typed while loading are sent by the event loop once it listens to
        // the new session (`run_queued_submits` after `Effect::Resubscribe`): sent from
        // here, the prompt's first events could come before that and be lost.
    }

    /// The session now runs in `cwd`: the footer's path and git branch, and the files
    /// @-completion offers, are those of `cwd` from now on.
    pub fn enter_directory(&mut self, cwd: PathBuf) {
        self.git_branch = git_branch(&cwd);
        match self.watched_cwd.lock() {
            Ok(mut watched) => *watched = cwd.clone(),
            Err(poisoned) => *poisoned.into_inner() = cwd.clone(),
        }
        self.project_files = Default::default();
        walk_project_files(&self.tx, cwd.clone());
        self.cwd = cwd;
        self.footer_cache = None;
    }

    /// Extensions' dialogs and notices come through the app's own channel. A newly
    /// attached extension host (after loading or `/reload`) has a new one to forward.
    pub fn forward_extension_ui(&mut self) {
        if let Some(mut requests) = self.session.take_ui_requests() {
            // A new host: it has not seen the terminal's state yet; it gets it now, before
            // a command typed meanwhile runs (the theme list, the width).
            self.extension_ui.sent_state = None;
            self.sync_extension_ui_state();
            let tx = self.tx.clone();
            tokio::spawn(async move {
                while let Some(request) = requests.recv().await {
                    if tx.send(AppMsg::ExtensionUi(request)).is_err() {
                        break;
                    }
                }
            });
        }
    }

    /// Recomputes the footer's totals from the session file (on open and after a switch;
    /// new answers are added as they arrive).
    pub fn refresh_usage(&mut self) {
        self.usage = usage_totals(&self.session);
        self.provider_count = provider_count(&self.session);
    }

    /// Footer numbers from the session.
    pub fn footer(&self) -> FooterData {
        let status = self.session.status();
        let usage = self.usage;
        let context = self.session.context_usage();
        let providers = self.provider_count;
        FooterData {
            cwd: self.cwd.display().to_string(),
            git_branch: self.git_branch.clone(),
            session_name: status.session_name.clone(),
            usage,
            using_subscription: status
                .model
                .as_ref()
                .is_some_and(|m| self.session.uses_oauth(&m.provider)),
            context_percent: context.as_ref().and_then(|c| c.percent),
            context_window: context.as_ref().map_or(0, |c| c.context_window),
            auto_compact: status.auto_compaction_enabled,
            model: status.model.as_ref().map(|m| FooterModel {
                id: m.id.clone(),
                provider: m.provider.clone(),
                reasoning: m.reasoning,
            }),
            thinking_level: status.thinking_level,
            provider_count: providers,
            extension_statuses: self.extension_ui.statuses.clone(),
        }
    }
}

/// Token and cost totals of every assistant message in the session file (pi's footer
/// counts all branches). Reads every assistant entry of the file (without keeping them):
/// run it off the UI thread for big files.
pub fn usage_totals(session: &AgentSession) -> UsageTotals {
    session.with_session(|m| {
        let mut totals = UsageTotals::default();
        m.scan_entries(EntryKind::is_assistant, |e| {
            if let SessionEntry::Message(me) = e
                && let crate::messages::AgentMessage::Assistant(a) = &me.message
            {
                totals.add(a);
            }
        });
        totals
    })
}

fn provider_count(session: &AgentSession) -> usize {
    let mut p: Vec<String> = session
        .available_models()
        .into_iter()
        .map(|m| m.provider)
        .collect();
    p.sort();
    p.dedup();
    p.len()
}

fn items_of(m: &crate::messages::AgentMessage) -> usize {
    use crate::messages::AgentMessage;
    match m {
        AgentMessage::Assistant(a) => 1 + a.tool_calls().count(),
        AgentMessage::ToolResult(_) => 0,
        _ => 1,
    }
}

fn count_items(messages: &[crate::messages::AgentMessage]) -> usize {
    messages.iter().map(items_of).sum()
}

/// Index of the first message whose items make up (about) the last `max_items` chat items.
fn tail_messages(messages: &[crate::messages::AgentMessage], max_items: usize) -> usize {
    use crate::messages::AgentMessage;
    let mut items = 0;
    for (i, m) in messages.iter().enumerate().rev() {
        items += items_of(m);
        // Never start at a tool result: its call must be in the kept part.
        if items >= max_items && !matches!(m, AgentMessage::ToolResult(_)) {
            return i;
        }
    }
    0
}

/// The current git branch of `cwd` (read from `.git/HEAD`, no process started).
pub fn git_branch(cwd: &std::path::Path) -> Option<String> {
    for dir in cwd.ancestors() {
        let git = dir.join(".git");
        let head_path = if git.is_dir() {
            git.join("HEAD")
        } else if git.is_file() {
            // A worktree: `.git` holds `gitdir: <path>`.
            let text = std::fs::read_to_string(&git).ok()?;
            let gitdir = text.strip_prefix("gitdir:")?.trim();
            dir.join(gitdir).join("HEAD")
        } else {
            continue;
        };
        let head = std::fs::read_to_string(head_path).ok()?;
        let head = head.trim();
        return Some(match head.strip_prefix("ref: refs/heads/") {
            Some(branch) => branch.to_string(),
            None => head.chars().take(7).collect(),
        });
    }
    None
}

/// What the startup header lists as loaded (context files, skills, prompt templates,
/// extensions), in the header's display form.
pub(super) fn header_resources(
    session: &AgentSession,
) -> crate::modes::interactive::components::header::LoadedResources {
    let loaded = session.loaded_resources();
    let home = std::env::var("HOME").ok().filter(|h| !h.is_empty());
    crate::modes::interactive::components::header::LoadedResources {
        context_files: loaded
            .context_files
            .iter()
            .map(|p| context_path(p, session.cwd(), home.as_deref()))
            .collect(),
        context_files_expanded: loaded
            .context_files
            .iter()
            .map(|p| home_path(p, home.as_deref()))
            .collect(),
        skills: loaded.skills.iter().map(|s| s.name.clone()).collect(),
        prompts: loaded
            .prompt_templates
            .iter()
            .map(|t| t.name.clone())
            .collect(),
        extensions: loaded.extensions.iter().map(|e| e.name.clone()).collect(),
        // The custom themes are the app's (`ThemeCatalog::custom_names`).
        themes: Vec::new(),
    }
}

/// pi's `formatDisplayPath`: the home directory as `~`.
fn home_path(path: &std::path::Path, home: Option<&str>) -> String {
    let text = path.display().to_string();
    match home {
        Some(home) if text.starts_with(home) => format!("~{}", &text[home.len()..]),
        _ => text,
    }
}

/// pi's `formatContextPath`: relative to the working directory when inside it (`.` for
/// the directory itself), else [`home_path`].
fn context_path(path: &std::path::Path, cwd: &std::path::Path, home: Option<&str>) -> String {
    match path.strip_prefix(cwd) {
        Ok(relative) if relative.as_os_str().is_empty() => ".".to_string(),
        Ok(relative) => relative.display().to_string(),
        Err(_) => home_path(path, home),
    }
}

/// Walks the project in `cwd` for @-completion on a blocking thread (it can take a while
/// in big repositories); the files arrive as `AppMsg::FilesWalked`.
pub(super) fn walk_project_files(
    tx: &tokio::sync::mpsc::UnboundedSender<AppMsg>,
    cwd: std::path::PathBuf,
) {
    let walk_tx = tx.clone();
    tokio::task::spawn_blocking(move || {
        let files = crate::modes::interactive::autocomplete::walk_project(&cwd, 20_000);
        let _ = walk_tx.send(AppMsg::FilesWalked(cwd, Arc::new(files)));
    });
}

#[cfg(test)]
mod path_tests {
    use super::{context_path, home_path};
    use std::path::Path;

    #[test]
    fn context_files_are_shown_as_pi_shows_them() {
        let home = Some("/home/u");
        let cwd = Path::new("/home/u/proj");
        assert_eq!(
            context_path(Path::new("/home/u/proj/AGENTS.md"), cwd, home),
            "AGENTS.md"
        );
        assert_eq!(
            context_path(Path::new("/home/u/.pi/agent/AGENTS.md"), cwd, home),
            "~/.pi/agent/AGENTS.md"
        );
        assert_eq!(
            context_path(Path::new("/etc/AGENTS.md"), cwd, home),
            "/etc/AGENTS.md"
        );
        assert_eq!(
            home_path(Path::new("/home/u/proj/AGENTS.md"), home),
            "~/proj/AGENTS.md"
        );
    }
}
