//! The entries of `/settings`: their labels, descriptions, `settings.json` keys and
//! values, and the current values the list starts from.

use serde_json::Value;

use crate::ai::model::ThinkingLevel;
use crate::core::settings::{QueueMode, QuietStartup, Settings};

/// One entry of the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SettingId {
    AutoCompact,
    ShowImages,
    ImageWidth,
    AutoResizeImages,
    BlockImages,
    SkillCommands,
    HardwareCursor,
    EditorPadding,
    OutputPadding,
    AutocompleteMaxVisible,
    ClearOnShrink,
    TerminalProgress,
    SteeringMode,
    FollowUpMode,
    Transport,
    HideThinking,
    CollapseChangelog,
    QuietStartup,
    InstallTelemetry,
    DoubleEscapeAction,
    TreeFilterMode,
    Warnings,
    ThinkingLevel,
    Theme,
    /// In the Warnings submenu: the Anthropic extra-usage warning.
    AnthropicExtraUsage,
}

impl SettingId {
    /// Every entry of the main list, in pi's order.
    pub const ALL: [SettingId; 24] = [
        SettingId::AutoCompact,
        SettingId::ShowImages,
        SettingId::ImageWidth,
        SettingId::AutoResizeImages,
        SettingId::BlockImages,
        SettingId::SkillCommands,
        SettingId::HardwareCursor,
        SettingId::EditorPadding,
        SettingId::OutputPadding,
        SettingId::AutocompleteMaxVisible,
        SettingId::ClearOnShrink,
        SettingId::TerminalProgress,
        SettingId::SteeringMode,
        SettingId::FollowUpMode,
        SettingId::Transport,
        SettingId::HideThinking,
        SettingId::CollapseChangelog,
        SettingId::QuietStartup,
        SettingId::InstallTelemetry,
        SettingId::DoubleEscapeAction,
        SettingId::TreeFilterMode,
        SettingId::Warnings,
        SettingId::ThinkingLevel,
        SettingId::Theme,
    ];

    /// The name in the list (pi's labels).
    pub fn label(self) -> &'static str {
        match self {
            SettingId::AutoCompact => "Auto-compact",
            SettingId::ShowImages => "Show images",
            SettingId::ImageWidth => "Image width",
            SettingId::AutoResizeImages => "Auto-resize images",
            SettingId::BlockImages => "Block images",
            SettingId::SkillCommands => "Skill commands",
            SettingId::HardwareCursor => "Show hardware cursor",
            SettingId::EditorPadding => "Editor padding",
            SettingId::OutputPadding => "Output padding",
            SettingId::AutocompleteMaxVisible => "Autocomplete max items",
            SettingId::ClearOnShrink => "Clear on shrink",
            SettingId::TerminalProgress => "Terminal progress",
            SettingId::SteeringMode => "Steering mode",
            SettingId::FollowUpMode => "Follow-up mode",
            SettingId::Transport => "Transport",
            SettingId::HideThinking => "Hide thinking",
            SettingId::CollapseChangelog => "Collapse changelog",
            SettingId::QuietStartup => "Quiet startup",
            SettingId::InstallTelemetry => "Install telemetry",
            SettingId::DoubleEscapeAction => "Double-escape action",
            SettingId::TreeFilterMode => "Tree filter mode",
            SettingId::Warnings => "Warnings",
            SettingId::ThinkingLevel => "Thinking level",
            SettingId::Theme => "Theme",
            SettingId::AnthropicExtraUsage => "Anthropic extra usage",
        }
    }

    /// What the setting does, shown under the list.
    pub fn description(self) -> &'static str {
        match self {
            SettingId::AutoCompact => {
                "Summarize older messages automatically when the context window fills up"
            }
            SettingId::ShowImages => "Draw images inline, in terminals that can",
            SettingId::ImageWidth => "How many terminal columns an inline image may take",
            SettingId::AutoResizeImages => {
                "Scale images down to at most 2000×2000 before they are sent to the model"
            }
            SettingId::BlockImages => "Never send images to the model",
            SettingId::SkillCommands => "Offer every skill as a /skill:name command",
            SettingId::HardwareCursor => {
                "Show the terminal's own cursor in the editor (it is placed for IME input either way)"
            }
            SettingId::EditorPadding => "Empty columns left and right of the prompt editor (0-3)",
            SettingId::OutputPadding => {
                "Empty columns left and right of messages, tool boxes and command output (0-1)"
            }
            SettingId::AutocompleteMaxVisible => "Rows in the autocomplete list (3-20)",
            SettingId::ClearOnShrink => {
                "Clear rows left behind when the screen content gets shorter (may flicker)"
            }
            SettingId::TerminalProgress => {
                "Mark the terminal tab as busy (OSC 9;4 progress) while the agent works"
            }
            SettingId::Transport => {
                "How to stream from providers that offer more than one transport"
            }
            SettingId::InstallTelemetry => {
                "Allow an anonymous version ping after an update (pi-rs never sends one)"
            }
            SettingId::Warnings => "Turn single warnings on or off",
            SettingId::AnthropicExtraUsage => {
                "Warn when an Anthropic subscription login may be billed as paid extra usage"
            }
            SettingId::SteeringMode => {
                "Messages sent with Enter while the agent works: 'one-at-a-time' delivers one and waits for the reply, 'all' delivers them together"
            }
            SettingId::FollowUpMode => {
                "Follow-up messages queued with Alt+Enter, delivered when the agent stops: 'one-at-a-time' or 'all' together"
            }
            SettingId::HideThinking => "Hide the model's thinking blocks in replies",
            SettingId::CollapseChangelog => "Show a shorter changelog after an update",
            SettingId::QuietStartup => {
                "Print less when starting (header: keep the header, drop the loaded resources)"
            }
            SettingId::DoubleEscapeAction => "What Escape twice on an empty editor opens",
            SettingId::TreeFilterMode => "Which entries /tree shows when it opens",
            SettingId::ThinkingLevel => "How much a reasoning model thinks before answering",
            SettingId::Theme => "Colours of the interface",
        }
    }

    /// The key path in `settings.json`.
    pub fn key(self) -> &'static [&'static str] {
        match self {
            SettingId::AutoCompact => &["compaction", "enabled"],
            SettingId::ShowImages => &["terminal", "showImages"],
            SettingId::ImageWidth => &["terminal", "imageWidthCells"],
            SettingId::AutoResizeImages => &["images", "autoResize"],
            SettingId::BlockImages => &["images", "blockImages"],
            SettingId::SkillCommands => &["enableSkillCommands"],
            SettingId::HardwareCursor => &["showHardwareCursor"],
            SettingId::EditorPadding => &["editorPaddingX"],
            SettingId::OutputPadding => &["outputPad"],
            SettingId::AutocompleteMaxVisible => &["autocompleteMaxVisible"],
            SettingId::ClearOnShrink => &["terminal", "clearOnShrink"],
            SettingId::TerminalProgress => &["terminal", "showTerminalProgress"],
            SettingId::SteeringMode => &["steeringMode"],
            SettingId::FollowUpMode => &["followUpMode"],
            SettingId::Transport => &["transport"],
            SettingId::InstallTelemetry => &["enableInstallTelemetry"],
            SettingId::Warnings => &["warnings"],
            SettingId::AnthropicExtraUsage => &["warnings", "anthropicExtraUsage"],
            SettingId::HideThinking => &["hideThinkingBlock"],
            SettingId::CollapseChangelog => &["collapseChangelog"],
            SettingId::QuietStartup => &["quietStartup"],
            SettingId::DoubleEscapeAction => &["doubleEscapeAction"],
            SettingId::TreeFilterMode => &["treeFilterMode"],
            SettingId::ThinkingLevel => &["defaultThinkingLevel"],
            SettingId::Theme => &["theme"],
        }
    }

    /// The values Enter/Space cycles through (`None`: chosen from a list).
    pub(super) fn choices(self) -> Option<&'static [&'static str]> {
        const BOOL: &[&str] = &["true", "false"];
        match self {
            SettingId::AutoCompact
            | SettingId::ShowImages
            | SettingId::AutoResizeImages
            | SettingId::BlockImages
            | SettingId::SkillCommands
            | SettingId::HardwareCursor
            | SettingId::ClearOnShrink
            | SettingId::HideThinking
            | SettingId::CollapseChangelog
            | SettingId::TerminalProgress
            | SettingId::InstallTelemetry
            | SettingId::AnthropicExtraUsage => Some(BOOL),
            SettingId::QuietStartup => Some(&["true", "header", "false"]),
            SettingId::Transport => Some(&["sse", "websocket", "websocket-cached", "auto"]),
            SettingId::EditorPadding => Some(&["0", "1", "2", "3"]),
            SettingId::OutputPadding => Some(&["0", "1"]),
            SettingId::ImageWidth => Some(&["60", "80", "120"]),
            SettingId::AutocompleteMaxVisible => Some(&["3", "5", "7", "10", "15", "20"]),
            SettingId::SteeringMode | SettingId::FollowUpMode => Some(&["one-at-a-time", "all"]),
            SettingId::DoubleEscapeAction => Some(&["tree", "fork", "none"]),
            SettingId::TreeFilterMode => {
                Some(&["default", "no-tools", "user-only", "labeled-only", "all"])
            }
            SettingId::ThinkingLevel | SettingId::Theme | SettingId::Warnings => None,
        }
    }

    /// The value as it goes into `settings.json`.
    pub(super) fn json(self, value: &str) -> Value {
        match self.choices() {
            Some(["true", "false"] | ["true", "header", "false"]) if value != "header" => {
                Value::Bool(value == "true")
            }
            _ if matches!(
                self,
                SettingId::EditorPadding
                    | SettingId::OutputPadding
                    | SettingId::AutocompleteMaxVisible
                    | SettingId::ImageWidth
            ) =>
            {
                value
                    .parse::<u64>()
                    .map_or_else(|_| value.into(), Value::from)
            }
            _ => value.into(),
        }
    }
}

/// The current values the list starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsValues {
    pub auto_compact: bool,
    /// `None` when the terminal cannot show images (the entry is left out, as in pi).
    pub show_images: Option<bool>,
    /// `terminal.imageWidthCells`; `None` when the terminal cannot show images.
    pub image_width: Option<u64>,
    pub auto_resize_images: bool,
    pub block_images: bool,
    pub skill_commands: bool,
    pub hardware_cursor: bool,
    pub editor_padding: u64,
    /// `outputPad` (0 or 1).
    pub output_padding: usize,
    pub autocomplete_max_visible: u64,
    pub clear_on_shrink: bool,
    /// `terminal.showTerminalProgress`.
    pub terminal_progress: bool,
    /// `transport` (`sse`, `websocket`, `websocket-cached`, `auto`).
    pub transport: String,
    /// `enableInstallTelemetry`.
    pub install_telemetry: bool,
    /// `warnings.anthropicExtraUsage`.
    pub anthropic_extra_usage_warning: bool,
    pub steering_mode: QueueMode,
    pub follow_up_mode: QueueMode,
    pub hide_thinking: bool,
    pub collapse_changelog: bool,
    /// `quietStartup`: `"true"`, `"header"` or `"false"`.
    pub quiet_startup: &'static str,
    pub double_escape_action: String,
    pub tree_filter_mode: String,
    pub thinking_level: ThinkingLevel,
    /// Levels the current model supports.
    pub thinking_levels: Vec<ThinkingLevel>,
    pub theme: String,
    /// Built-in and custom theme names.
    pub themes: Vec<String>,
}

impl SettingsValues {
    /// Values from the merged settings files. The app then sets what the session knows
    /// better: the thinking level and the levels the model supports, the theme list, and
    /// whether the terminal shows images.
    pub fn from_settings(settings: &Settings) -> SettingsValues {
        SettingsValues {
            auto_compact: settings.compaction_enabled(),
            show_images: Some(settings.show_images()),
            image_width: Some(settings.image_width_cells()),
            auto_resize_images: settings.image_auto_resize(),
            block_images: settings.block_images(),
            skill_commands: settings.enable_skill_commands(),
            hardware_cursor: settings.show_hardware_cursor(),
            editor_padding: settings.editor_padding_x(),
            output_padding: settings.output_pad(),
            autocomplete_max_visible: settings.autocomplete_max_visible(),
            clear_on_shrink: settings.clear_on_shrink(),
            terminal_progress: settings.show_terminal_progress(),
            transport: settings.transport().to_string(),
            install_telemetry: settings.enable_install_telemetry(),
            anthropic_extra_usage_warning: settings.warn_anthropic_extra_usage(),
            steering_mode: settings.steering_mode(),
            follow_up_mode: settings.follow_up_mode(),
            hide_thinking: settings.hide_thinking_block(),
            collapse_changelog: settings.collapse_changelog(),
            quiet_startup: match settings.quiet_startup() {
                QuietStartup::Off => "false",
                QuietStartup::Header => "header",
                QuietStartup::All => "true",
            },
            double_escape_action: settings.double_escape_action().to_string(),
            tree_filter_mode: settings.tree_filter_mode().to_string(),
            thinking_level: settings.default_thinking_level().unwrap_or_default(),
            thinking_levels: ThinkingLevel::ALL.to_vec(),
            theme: settings.theme().unwrap_or("dark").to_string(),
            themes: crate::modes::interactive::theme::builtin_theme_names()
                .map(str::to_string)
                .collect(),
        }
    }

    pub(super) fn value(&self, id: SettingId) -> Option<String> {
        let flag = |b: bool| b.to_string();
        Some(match id {
            SettingId::AutoCompact => flag(self.auto_compact),
            SettingId::ShowImages => flag(self.show_images?),
            SettingId::ImageWidth => self.image_width?.to_string(),
            SettingId::AutoResizeImages => flag(self.auto_resize_images),
            SettingId::BlockImages => flag(self.block_images),
            SettingId::SkillCommands => flag(self.skill_commands),
            SettingId::HardwareCursor => flag(self.hardware_cursor),
            SettingId::EditorPadding => self.editor_padding.to_string(),
            SettingId::OutputPadding => self.output_padding.to_string(),
            SettingId::AutocompleteMaxVisible => self.autocomplete_max_visible.to_string(),
            SettingId::ClearOnShrink => flag(self.clear_on_shrink),
            SettingId::TerminalProgress => flag(self.terminal_progress),
            SettingId::Transport => self.transport.clone(),
            SettingId::InstallTelemetry => flag(self.install_telemetry),
            SettingId::Warnings => "configure".to_string(),
            SettingId::AnthropicExtraUsage => flag(self.anthropic_extra_usage_warning),
            SettingId::SteeringMode => self.steering_mode.as_str().to_string(),
            SettingId::FollowUpMode => self.follow_up_mode.as_str().to_string(),
            SettingId::HideThinking => flag(self.hide_thinking),
            SettingId::CollapseChangelog => flag(self.collapse_changelog),
            SettingId::QuietStartup => self.quiet_startup.to_string(),
            SettingId::DoubleEscapeAction => self.double_escape_action.clone(),
            SettingId::TreeFilterMode => self.tree_filter_mode.clone(),
            SettingId::ThinkingLevel => self.thinking_level.as_str().to_string(),
            SettingId::Theme => self.theme.clone(),
        })
    }
}

/// Short descriptions of the thinking levels.
pub fn thinking_level_description(level: ThinkingLevel) -> &'static str {
    match level {
        ThinkingLevel::Off => "No reasoning",
        ThinkingLevel::Minimal => "A glance before answering (about 1k tokens)",
        ThinkingLevel::Low => "Light reasoning (about 2k tokens)",
        ThinkingLevel::Medium => "Moderate reasoning (about 8k tokens)",
        ThinkingLevel::High => "Deep reasoning (about 16k tokens)",
        ThinkingLevel::Xhigh => "As deep as the model goes (about 32k tokens)",
        ThinkingLevel::Max => "The model's maximum effort (models that map it only)",
    }
}
