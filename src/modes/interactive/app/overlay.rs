//! Dialogs shown in place of the editor: a list to choose from, a one-line text input,
//! or an informational view. Each dialog carries what it is for (`purpose`), so the app
//! knows what to do with the answer.

use std::sync::Arc;

use crossterm::event::KeyEvent;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use crate::ai::model::ThinkingLevel;
use crate::modes::interactive::autocomplete::CompletionItem;
use crate::modes::interactive::components::checkpoint_diff::{CheckpointDiffView, DiffViewOutcome};
use crate::modes::interactive::components::line_input::LineInput;
use crate::modes::interactive::components::login_dialog::{LoginDialog, LoginDialogOutcome};
use crate::modes::interactive::components::login_selector::{
    LoginMode, LoginOption, LoginSelector, LoginSelectorOutcome,
};
use crate::modes::interactive::components::model_selector::{ModelSelector, ModelSelectorOutcome};
use crate::modes::interactive::components::option_selector::{OptionOutcome, OptionSelector};
use crate::modes::interactive::components::scoped_models_selector::{
    ModelRef, ScopedModelsOutcome, ScopedModelsSelector,
};
use crate::modes::interactive::components::session_picker::{Loader, PickerOutcome, SessionPicker};
use crate::modes::interactive::components::settings_selector::{
    SettingId, SettingsOutcome, SettingsSelector,
};
use crate::modes::interactive::components::summarize_dialog::{
    SummarizeBranchDialog, SummarizeOutcome,
};
use crate::modes::interactive::components::thinking_selector::{ThinkingOutcome, ThinkingSelector};
use crate::modes::interactive::components::tree_selector::{TreeOutcome, TreeSelector};
use crate::modes::interactive::components::trust_selector::{TrustOutcome, TrustSelector};
use crate::modes::interactive::components::user_message_selector::{
    ForkOutcome, UserMessageSelector,
};
use crate::modes::interactive::components::{Ui, rule, styled_text};
use crate::modes::interactive::editor::{Editor, EditorAction};
use crate::modes::interactive::keys::{Action, Keybindings};
use crate::modes::interactive::text::truncate_line;
use crate::modes::interactive::theme::ThemeToken;
use crate::session::entry::EntryId;

/// What a list dialog chooses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectPurpose {
    /// An extension's `select` dialog (request `id`).
    Extension {
        id: String,
    },
    /// An extension's `confirm` dialog, asked as Yes / No.
    ExtensionConfirm {
        id: String,
    },
    /// "Replace current session with …?" before `/import`.
    Import {
        path: String,
    },
    Thinking,
    Model,
    ResumeSession,
    /// `/login`: a subscription or an API key.
    LoginMethod,
    /// "Session cwd not found" before opening `path`, whose header names a directory that
    /// is gone: Yes continues it in the current directory (pi's question). `at_startup`:
    /// chosen in the `--resume` picker, so No quits.
    MissingCwd {
        path: std::path::PathBuf,
        at_startup: bool,
    },
    /// "Session cwd not found" before `/import` of `path` (as typed), whose header names
    /// a directory that is gone: Yes imports it to continue in the current directory.
    ImportMissingCwd {
        path: String,
    },
    /// "Restore files?" before navigating to `target` in `/tree` (`docs/checkpoints.md`).
    RestoreFiles {
        target: EntryId,
        options: crate::core::agent_session::NavigateOptions,
    },
}

/// What a text input asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputPurpose {
    /// Instructions for the summary of the branch left when navigating to `target`
    /// (cancelling goes back to the "Summarize branch?" question).
    CustomSummary { target: EntryId },
    /// An extension's `input` or `editor` dialog (request `id`).
    Extension { id: String },
}

pub enum Overlay {
    /// A question with a few answers (pi's `ExtensionSelectorComponent`).
    Select {
        title: String,
        items: Vec<CompletionItem>,
        selector: OptionSelector,
        purpose: SelectPurpose,
    },
    Input {
        title: String,
        editor: Box<Editor>,
        purpose: InputPurpose,
    },
    /// The session picker (`/resume`, `--resume`) and its background listing.
    Sessions {
        picker: Box<SessionPicker>,
        loader: Option<Loader>,
        /// Opened by `--resume` at startup: cancelling it quits.
        at_startup: bool,
    },
    Models(Box<ModelSelector>),
    Settings(Box<SettingsSelector>),
    Thinking(ThinkingSelector),
    /// `/trust`: save a project trust decision.
    Trust(TrustSelector),
    /// `/tree`, with the label being typed for an entry (Shift+L) or the files diff of
    /// an entry (Shift+D; from the entry marked with Shift+M if any) if any.
    Tree {
        selector: Box<TreeSelector>,
        /// The label being typed for an entry (pi's one-line `Input`).
        label: Option<(EntryId, Box<LineInput>)>,
        diff: Option<Box<CheckpointDiffView>>,
    },
    /// "Summarize branch?" before navigating to `target`.
    Summarize {
        dialog: SummarizeBranchDialog,
        target: EntryId,
    },
    /// `/fork`: the user messages to fork from.
    Fork(Box<UserMessageSelector>),
    /// `/scoped-models`: the models Ctrl+P cycles through.
    ScopedModels(Box<ScopedModelsSelector>),
    /// `/login` and `/logout`: the providers.
    LoginProviders(Box<LoginSelector>),
    /// A provider being set up (a sign-in flow or an API key).
    Login(Box<LoginDialog>),
}

/// What a key did to a dialog.
pub enum OverlayOutcome {
    Keep,
    Cancelled,
    Selected(SelectPurpose, CompletionItem),
    Entered(InputPurpose, String),
    SessionChosen(std::path::PathBuf),
    /// The startup session picker was closed without a choice.
    StartupCancelled,
    RenameSession {
        path: std::path::PathBuf,
        name: String,
    },
    DeleteSession(std::path::PathBuf),
    ModelChosen {
        provider: String,
        id: String,
    },
    SettingChanged {
        setting: SettingId,
        key: &'static [&'static str],
        value: serde_json::Value,
    },
    PreviewTheme(String),
    ThinkingChosen(ThinkingLevel),
    /// `/trust`: the decision to save.
    TrustChosen(crate::core::trust::TrustChoice),
    /// Enter in `/tree` on an entry other than the current leaf.
    TreeChosen(EntryId),
    TreeAlreadyAtLeaf,
    /// Shift+L in `/tree`: ask for the entry's label (its current one pre-filled).
    TreeEditLabel(EntryId, Option<String>),
    /// Shift+D in `/tree`: compute and show the files diff of the entry `to`, from the
    /// marked entry (`Some`) or the working tree.
    TreeDiff(Option<EntryId>, EntryId),
    /// A label typed in `/tree` (`None` removes it); the tree stays open.
    TreeLabel {
        target: EntryId,
        label: Option<String>,
    },
    /// The answer to "Summarize branch?".
    SummaryChoice(EntryId, SummarizeOutcome),
    /// The custom summary instructions were cancelled: ask "Summarize branch?" again.
    BackToSummary(EntryId),
    /// `/fork` from this user message.
    ForkFrom(EntryId),
    /// `/scoped-models` changed the enabled models (for this session; the picker stays).
    ScopedModelsChanged(Vec<ModelRef>),
    /// `/scoped-models` asked to save the enabled models as `enabledModels`.
    ScopedModelsSaved(Vec<ModelRef>),
    /// A provider picked in the `/login` or `/logout` list.
    LoginProviderChosen(LoginMode, LoginOption),
    /// The `/login` or `/logout` list was closed.
    LoginProvidersCancelled(LoginMode),
    /// An API key typed for `provider` (named `name`).
    ApiKeyEntered {
        provider: String,
        name: String,
        key: String,
    },
}

impl Overlay {
    pub fn select(title: &str, items: Vec<CompletionItem>, purpose: SelectPurpose) -> Overlay {
        Overlay::Select {
            title: title.to_string(),
            selector: OptionSelector::new(items.len()),
            items,
            purpose,
        }
    }

    pub fn input(
        title: &str,
        initial: &str,
        keys: Arc<Keybindings>,
        purpose: InputPurpose,
    ) -> Overlay {
        let mut editor = Editor::new(keys);
        editor.set_max_rows(3);
        editor.set_text(initial);
        Overlay::Input {
            title: title.to_string(),
            editor: Box::new(editor),
            purpose,
        }
    }

    /// Whether this is an extension's dialog.
    pub fn is_extension_dialog(&self) -> bool {
        matches!(
            self,
            Overlay::Select {
                purpose: SelectPurpose::Extension { .. } | SelectPurpose::ExtensionConfirm { .. },
                ..
            } | Overlay::Input {
                purpose: InputPurpose::Extension { .. },
                ..
            }
        )
    }

    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> OverlayOutcome {
        match self {
            Overlay::Select {
                items,
                selector,
                purpose,
                ..
            } => match selector.handle_key(key, keys) {
                OptionOutcome::Chosen(index) => match items.get(index) {
                    Some(item) => OverlayOutcome::Selected(purpose.clone(), item.clone()),
                    None => OverlayOutcome::Keep,
                },
                // Escape answers No: at startup nothing else would be left open, and a
                // cancelled import says so (as pi does).
                OptionOutcome::Cancelled
                    if matches!(
                        purpose,
                        SelectPurpose::MissingCwd { .. }
                            | SelectPurpose::Import { .. }
                            | SelectPurpose::ImportMissingCwd { .. }
                    ) =>
                {
                    OverlayOutcome::Selected(
                        purpose.clone(),
                        CompletionItem {
                            value: "No".into(),
                            label: "No".into(),
                            description: None,
                        },
                    )
                }
                OptionOutcome::Cancelled => OverlayOutcome::Cancelled,
                OptionOutcome::Moved | OptionOutcome::Ignored => OverlayOutcome::Keep,
            },
            Overlay::Input {
                editor, purpose, ..
            } => {
                if keys.matches(key, Action::SelectCancel) && !editor.is_showing_autocomplete() {
                    if let InputPurpose::CustomSummary { target } = purpose {
                        return OverlayOutcome::BackToSummary(target.clone());
                    }
                    return OverlayOutcome::Cancelled;
                }
                match editor.handle_key(key) {
                    EditorAction::Submit(text) => OverlayOutcome::Entered(purpose.clone(), text),
                    EditorAction::Handled | EditorAction::Ignored => OverlayOutcome::Keep,
                }
            }
            Overlay::Sessions {
                picker, at_startup, ..
            } => match picker.handle_key(key, keys) {
                PickerOutcome::Handled | PickerOutcome::Ignored => OverlayOutcome::Keep,
                PickerOutcome::Selected(path) => OverlayOutcome::SessionChosen(path),
                PickerOutcome::Cancelled if *at_startup => OverlayOutcome::StartupCancelled,
                PickerOutcome::Cancelled => OverlayOutcome::Cancelled,
                PickerOutcome::Rename { path, name } => {
                    OverlayOutcome::RenameSession { path, name }
                }
                PickerOutcome::Delete { path } => OverlayOutcome::DeleteSession(path),
            },
            Overlay::Models(selector) => match selector.handle_key(key, keys) {
                ModelSelectorOutcome::Handled | ModelSelectorOutcome::Ignored => {
                    OverlayOutcome::Keep
                }
                ModelSelectorOutcome::Selected { provider, id } => {
                    OverlayOutcome::ModelChosen { provider, id }
                }
                ModelSelectorOutcome::Cancelled => OverlayOutcome::Cancelled,
            },
            Overlay::Settings(selector) => match selector.handle_key(key, keys) {
                SettingsOutcome::Handled | SettingsOutcome::Ignored => OverlayOutcome::Keep,
                SettingsOutcome::Cancelled => OverlayOutcome::Cancelled,
                SettingsOutcome::Changed {
                    setting,
                    key,
                    value,
                } => OverlayOutcome::SettingChanged {
                    setting,
                    key,
                    value,
                },
                SettingsOutcome::PreviewTheme(name) => OverlayOutcome::PreviewTheme(name),
            },
            Overlay::Thinking(selector) => match selector.handle_key(key, keys) {
                ThinkingOutcome::Handled | ThinkingOutcome::Ignored => OverlayOutcome::Keep,
                ThinkingOutcome::Selected(level) => OverlayOutcome::ThinkingChosen(level),
                ThinkingOutcome::Cancelled => OverlayOutcome::Cancelled,
            },
            Overlay::Trust(selector) => match selector.handle_key(key, keys) {
                TrustOutcome::Handled => OverlayOutcome::Keep,
                TrustOutcome::Chosen(choice) => OverlayOutcome::TrustChosen(choice),
                TrustOutcome::Cancelled => OverlayOutcome::Cancelled,
            },
            Overlay::Tree {
                selector,
                label,
                diff,
            } => {
                if let Some(view) = diff {
                    if view.handle_key(key, keys) == DiffViewOutcome::Close {
                        *diff = None;
                    }
                    return OverlayOutcome::Keep;
                }
                if let Some((target, input)) = label {
                    // Escape (or Ctrl+C) leaves the label as it was; Enter saves it.
                    if keys.matches(key, Action::SelectCancel) {
                        *label = None;
                        return OverlayOutcome::Keep;
                    }
                    if keys.matches(key, Action::SelectConfirm) {
                        let target = target.clone();
                        let text = input.value().trim().to_string();
                        *label = None;
                        return OverlayOutcome::TreeLabel {
                            target,
                            label: (!text.is_empty()).then_some(text),
                        };
                    }
                    input.handle_key(key, keys);
                    return OverlayOutcome::Keep;
                }
                match selector.handle_key(key, keys) {
                    TreeOutcome::None => OverlayOutcome::Keep,
                    TreeOutcome::Selected(id) => OverlayOutcome::TreeChosen(id),
                    TreeOutcome::AlreadyAtLeaf => OverlayOutcome::TreeAlreadyAtLeaf,
                    TreeOutcome::Cancelled => OverlayOutcome::Cancelled,
                    TreeOutcome::EditLabel(id, current) => {
                        OverlayOutcome::TreeEditLabel(id, current)
                    }
                    TreeOutcome::ShowDiff { from, to } => OverlayOutcome::TreeDiff(from, to),
                }
            }
            Overlay::Summarize { dialog, target } => match dialog.handle_key(key, keys) {
                SummarizeOutcome::None => OverlayOutcome::Keep,
                choice => OverlayOutcome::SummaryChoice(target.clone(), choice),
            },
            Overlay::Fork(selector) => match selector.handle_key(key, keys) {
                ForkOutcome::None => OverlayOutcome::Keep,
                ForkOutcome::Selected(id) => OverlayOutcome::ForkFrom(id),
                ForkOutcome::Cancelled => OverlayOutcome::Cancelled,
            },
            Overlay::LoginProviders(selector) => match selector.handle_key(key, keys) {
                LoginSelectorOutcome::Handled | LoginSelectorOutcome::Ignored => {
                    OverlayOutcome::Keep
                }
                LoginSelectorOutcome::Selected(option) => {
                    OverlayOutcome::LoginProviderChosen(selector.mode, option)
                }
                LoginSelectorOutcome::Cancelled => {
                    OverlayOutcome::LoginProvidersCancelled(selector.mode)
                }
            },
            Overlay::Login(dialog) => match dialog.handle_key(key, keys) {
                LoginDialogOutcome::Handled | LoginDialogOutcome::Ignored => OverlayOutcome::Keep,
                LoginDialogOutcome::Submitted(_) if dialog.is_oauth() => OverlayOutcome::Keep,
                LoginDialogOutcome::Submitted(text) => OverlayOutcome::ApiKeyEntered {
                    provider: dialog.provider.clone(),
                    name: dialog.provider_name.clone(),
                    key: text,
                },
                LoginDialogOutcome::Cancelled => OverlayOutcome::Cancelled,
            },
            Overlay::ScopedModels(selector) => match selector.handle_key(key, keys) {
                ScopedModelsOutcome::Handled | ScopedModelsOutcome::Ignored => OverlayOutcome::Keep,
                ScopedModelsOutcome::Cancelled => OverlayOutcome::Cancelled,
                ScopedModelsOutcome::Changed(enabled) => {
                    OverlayOutcome::ScopedModelsChanged(enabled)
                }
                ScopedModelsOutcome::Saved(enabled) => OverlayOutcome::ScopedModelsSaved(enabled),
            },
        }
    }

    /// Feeds the session picker what its background listing found (on every frame).
    pub fn poll(&mut self) -> bool {
        if let Overlay::Sessions {
            picker,
            loader: Some(loader),
            ..
        } = self
        {
            return loader.feed(picker);
        }
        false
    }

    pub fn handle_paste(&mut self, text: &str) {
        match self {
            Overlay::Input { editor, .. } => editor.handle_paste(text),
            Overlay::Tree {
                label: Some((_, input)),
                ..
            } => input.insert_str(text),
            Overlay::Models(selector) => selector.paste(text),
            Overlay::ScopedModels(selector) => selector.paste(text),
            Overlay::LoginProviders(selector) => selector.paste(text),
            Overlay::Login(dialog) => dialog.paste(text),
            _ => {}
        }
    }

    /// The dialog's lines and, for inputs, the cursor (row, column) within them.
    /// `height` is what pickers may use.
    pub fn render(
        &mut self,
        width: usize,
        height: usize,
        ui: &Ui<'_>,
    ) -> (Vec<Line<'static>>, Option<(usize, usize)>) {
        let to_cursor = |c: Option<(u16, u16)>| c.map(|(col, row)| (row as usize, col as usize));
        match self {
            Overlay::Sessions { picker, .. } => {
                let (lines, cursor) = picker.render_with_cursor(width, height, ui);
                return (lines, to_cursor(cursor));
            }
            Overlay::Models(selector) => {
                let (lines, cursor) = selector.render_with_cursor(width, height, ui);
                return (lines, to_cursor(cursor));
            }
            // No cursor: pi's settings list never focuses its search input, so the
            // terminal cursor stays hidden there even with `showHardwareCursor`.
            Overlay::Settings(selector) => return (selector.render(width, height, ui), None),
            Overlay::ScopedModels(selector) => {
                let (lines, cursor) = selector.render_with_cursor(width, height, ui);
                return (lines, to_cursor(cursor));
            }
            Overlay::LoginProviders(selector) => {
                let (lines, cursor) = selector.render_with_cursor(width, ui);
                return (lines, to_cursor(cursor));
            }
            Overlay::Login(dialog) => {
                let (lines, cursor) = dialog.render_with_cursor(width, ui);
                return (lines, to_cursor(cursor));
            }
            Overlay::Thinking(selector) => return (selector.render(width, ui), None),
            Overlay::Trust(selector) => return (selector.render(width, ui), None),
            Overlay::Tree {
                diff: Some(view), ..
            } => return (view.render(width, ui), None),
            Overlay::Tree {
                selector,
                label: None,
                ..
            } => return (selector.render(width, ui), None),
            Overlay::Tree {
                selector,
                label: Some((_, input)),
                ..
            } => {
                let (line, column) = input.render_with_cursor(width.saturating_sub(2).max(1), true);
                let lines = selector.render_label_prompt(width, ui, &[line]);
                // The input sits above the hint, the blank line and the closing rule.
                let row = lines.len().saturating_sub(4);
                return (lines, Some((row, column + 2)));
            }
            Overlay::Summarize { dialog, .. } => return (dialog.render(width, ui), None),
            Overlay::Fork(selector) => return (selector.render(width, ui), None),
            Overlay::Select {
                title,
                items,
                selector,
                ..
            } => {
                let labels: Vec<&str> = items.iter().map(|i| i.label.as_str()).collect();
                return (selector.render(title, &labels, width, ui), None);
            }
            _ => {}
        }
        let accent = ui.fg(ThemeToken::Accent).add_modifier(Modifier::BOLD);
        let border = ui.fg(ThemeToken::Border);
        let muted = ui.fg(ThemeToken::Muted);
        let mut out = vec![rule(width, border)];
        let title = match self {
            Overlay::Input { title, .. } => title.clone(),
            _ => String::new(),
        };
        out.extend(styled_text(&title, accent, width, 1));
        let mut cursor = None;
        match self {
            Overlay::Input { editor, .. } => {
                let rendered = editor.render(width, ui.theme);
                let base = out.len();
                cursor = rendered
                    .cursor
                    .map(|(col, row)| (base + row as usize, col as usize));
                out.extend(rendered.lines);
                out.push(truncate_line(
                    Line::from(Span::styled(
                        format!(
                            "  {} confirm · {} cancel",
                            ui.key(Action::Submit),
                            ui.key(Action::SelectCancel)
                        ),
                        muted,
                    )),
                    width,
                    Span::raw("…"),
                ));
            }
            Overlay::Sessions { .. }
            | Overlay::Select { .. }
            | Overlay::Models(_)
            | Overlay::Settings(_)
            | Overlay::Thinking(_)
            | Overlay::Trust(_)
            | Overlay::Tree { .. }
            | Overlay::Summarize { .. }
            | Overlay::Fork(_)
            | Overlay::ScopedModels(_)
            | Overlay::LoginProviders(_)
            | Overlay::Login(_) => {}
        }
        out.push(rule(width, border));
        (out, cursor)
    }
}
