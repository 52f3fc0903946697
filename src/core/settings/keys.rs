//! Every `settings.json` key of pi 1.6 (its `schemas/settings.schema.json`), plus pi-rs's
//! own, with the shape of value it takes and what pi-rs does with it. The loader checks
//! values against [`KeyInfo::shape`]; the startup notice names the keys whose
//! [`Support`] says pi-rs does not act on them; `docs/settings.md` has the same table for
//! people.

/// The kind of value a key takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    Bool,
    /// Any finite number.
    Number,
    /// A finite number of 0 or more.
    NonNegative,
    /// A whole number from 0 to 2^53 - 1 (pi's "non-negative safe integer").
    Count,
    Str,
    /// A list of strings; a non-string entry is dropped alone.
    Strings,
    /// A list of at least one string.
    NonEmptyStrings,
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// `true`, `false` or one of these strings.
    BoolOr(&'static [&'static str]),
    /// A number (of 0 or more when `non_negative`) or one of these strings.
    NumberOr {
        non_negative: bool,
        words: &'static [&'static str],
    },
    /// One of these whole numbers.
    Integers(&'static [i64]),
    /// `false` or one of these strings.
    FalseOr(&'static [&'static str]),
    /// An object whose keys are listed with `<path>.<key>` entries of their own (other
    /// keys in it are kept, unchecked).
    Object,
    /// An object of arbitrary keys, each value of this shape (dropped alone when wrong).
    MapOf(&'static Shape),
    /// `compaction.modelOverrides` values: objects with optional `reserveTokens` and
    /// `keepRecentTokens` counts.
    TokenOverrides,
    /// `packages`: sources as strings or `{ "source": …, … }` objects.
    Packages,
}

/// The thinking levels of pi 1.6.
pub const THINKING_LEVELS: &[&str] = &["off", "minimal", "low", "medium", "high", "xhigh", "max"];

impl Shape {
    /// What the shape expects, for warnings ("expected …").
    pub fn expected(&self) -> String {
        fn words(list: &[&str]) -> String {
            let quoted: Vec<String> = list.iter().map(|w| format!("\"{w}\"")).collect();
            join_or(&quoted)
        }
        match self {
            Shape::Bool => "true or false".into(),
            Shape::Number => "a number".into(),
            Shape::NonNegative => "a number of 0 or more".into(),
            Shape::Count => "a whole number of 0 or more".into(),
            Shape::Str => "a string".into(),
            Shape::Strings => "a list of strings".into(),
            Shape::NonEmptyStrings => "a list of at least one string".into(),
            Shape::OneOf(list) => format!("one of {}", words(list)),
            Shape::BoolOr(list) => format!("true, false or {}", words(list)),
            Shape::NumberOr {
                non_negative,
                words: list,
            } => {
                let number = if *non_negative {
                    "a number of 0 or more"
                } else {
                    "a number"
                };
                format!("{number} or {}", words(list))
            }
            Shape::Integers(list) => {
                let numbers: Vec<String> = list.iter().map(i64::to_string).collect();
                join_or(&numbers)
            }
            Shape::FalseOr(list) => {
                let mut all: Vec<String> = list.iter().map(|w| format!("\"{w}\"")).collect();
                all.push("false".into());
                join_or(&all)
            }
            Shape::Object | Shape::MapOf(_) | Shape::TokenOverrides => "an object".into(),
            Shape::Packages => "a list of package sources".into(),
        }
    }
}

/// `a`, `a or b`, `a, b or c`.
fn join_or(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// What pi-rs does with a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// Read and acted on as pi 1.6 does.
    Honoured,
    /// An old name, moved to its new key when the file is read (as pi does).
    Migrated,
    /// Accepted and kept on write; the feature (named here) comes with a later version of
    /// pi-rs. Named at startup unless its value is one of `inert` (values that ask for
    /// nothing pi-rs lacks; a key pi writes for itself has [`ANY`]).
    Later {
        feature: &'static str,
        inert: &'static [&'static str],
    },
    /// Accepted and kept on write, never acted on (why is in docs/settings.md). Named at
    /// startup unless its value is one of `inert`.
    NotPlanned {
        why: &'static str,
        inert: &'static [&'static str],
    },
}

/// Marks a key that is never named at startup, whatever its value (pi writes it).
pub const ANY: &[&str] = &["*"];

impl Support {
    /// Whether `value` (as JSON text) asks for something pi-rs does not do.
    pub fn is_unsupported(&self, value_json: &str) -> bool {
        match self {
            Support::Honoured | Support::Migrated => false,
            Support::Later { inert, .. } | Support::NotPlanned { inert, .. } => {
                *inert != ANY && !inert.contains(&value_json)
            }
        }
    }
}

/// One key: its dotted path, shape, what pi-rs does with it, and whether pi reads it only
/// from the user's settings file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeyInfo {
    pub path: &'static str,
    pub shape: Shape,
    pub support: Support,
    pub global_only: bool,
}

const fn key(path: &'static str, shape: Shape) -> KeyInfo {
    KeyInfo {
        path,
        shape,
        support: Support::Honoured,
        global_only: false,
    }
}

const fn later(
    path: &'static str,
    shape: Shape,
    feature: &'static str,
    inert: &'static [&'static str],
) -> KeyInfo {
    KeyInfo {
        path,
        shape,
        support: Support::Later { feature, inert },
        global_only: false,
    }
}

const fn not_planned(
    path: &'static str,
    shape: Shape,
    why: &'static str,
    inert: &'static [&'static str],
) -> KeyInfo {
    KeyInfo {
        path,
        shape,
        support: Support::NotPlanned { why, inert },
        global_only: false,
    }
}

const fn global(info: KeyInfo) -> KeyInfo {
    KeyInfo {
        global_only: true,
        ..info
    }
}

const fn migrated(path: &'static str, shape: Shape) -> KeyInfo {
    KeyInfo {
        path,
        shape,
        support: Support::Migrated,
        global_only: false,
    }
}

const THINKING: Shape = Shape::OneOf(THINKING_LEVELS);
const QUEUE: Shape = Shape::OneOf(&["all", "one-at-a-time"]);
const STRING_SHAPE: Shape = Shape::Str;
const THINKING_SHAPE: Shape = THINKING;
const FULLSCREEN: &str = "the fullscreen TUI";

/// Every key, in the order of pi's schema (pi-rs's own at the end).
pub const KEYS: &[KeyInfo] = &[
    key("$schema", Shape::Str),
    key("lastChangelogVersion", Shape::Str),
    later(
        "extensionChangelogVersions",
        Shape::MapOf(&STRING_SHAPE),
        "extension changelog notes",
        ANY,
    ),
    key("defaultProvider", Shape::Str),
    key("defaultModel", Shape::Str),
    key("defaultThinkingLevel", THINKING),
    key("modelThinkingLevels", Shape::MapOf(&THINKING_SHAPE)),
    key(
        "transport",
        Shape::OneOf(&["auto", "sse", "websocket", "websocket-cached"]),
    ),
    not_planned(
        "sessionShareDestination",
        Shape::OneOf(&["auto", "gist", "radius"]),
        "Radius is pi's hosted service; /share makes a GitHub gist",
        &["\"auto\"", "\"gist\""],
    ),
    key("steeringMode", QUEUE),
    key("followUpMode", QUEUE),
    key("theme", Shape::Str),
    key("compaction", Shape::Object),
    key("compaction.enabled", Shape::Bool),
    key("compaction.reserveTokens", Shape::Count),
    key("compaction.keepRecentTokens", Shape::Count),
    key("compaction.modelOverrides", Shape::TokenOverrides),
    key("branchSummary", Shape::Object),
    key("branchSummary.reserveTokens", Shape::Number),
    key("branchSummary.skipPrompt", Shape::Bool),
    key("retry", Shape::Object),
    key("retry.enabled", Shape::Bool),
    key("retry.maxRetries", Shape::Number),
    key("retry.baseDelayMs", Shape::Number),
    key("retry.maxAgentDelayMs", Shape::Number),
    key("retry.provider", Shape::Object),
    key("retry.provider.timeoutMs", Shape::Number),
    key("retry.provider.maxRetries", Shape::Number),
    key("retry.provider.maxRetryDelayMs", Shape::Number),
    migrated("retry.maxDelayMs", Shape::Number),
    key("hideThinkingBlock", Shape::Bool),
    later(
        "showCacheMissNotices",
        Shape::Bool,
        "cache notices",
        &["false"],
    ),
    key("externalEditor", Shape::Str),
    key("shellPath", Shape::Str),
    key("quietStartup", Shape::BoolOr(&["header"])),
    global(key(
        "defaultProjectTrust",
        Shape::OneOf(&["ask", "always", "never"]),
    )),
    key("shellCommandPrefix", Shape::Str),
    key("npmCommand", Shape::Strings),
    global(not_planned(
        "selfUpdateCommand",
        Shape::NonEmptyStrings,
        "pi-rs is not updated by `pi update`, which says how to update it",
        ANY,
    )),
    key("collapseChangelog", Shape::Bool),
    key("enableInstallTelemetry", Shape::Bool),
    not_planned(
        "enableAnalytics",
        Shape::Bool,
        "pi-rs shares no analytics",
        &["false"],
    ),
    not_planned("trackingId", Shape::Str, "pi's analytics identifier", ANY),
    key("packages", Shape::Packages),
    key("extensions", Shape::Strings),
    global(not_planned(
        "deviceId",
        Shape::Str,
        "pi's installation identifier; pi-rs sends none",
        ANY,
    )),
    key("skills", Shape::Strings),
    key("prompts", Shape::Strings),
    key("themes", Shape::Strings),
    key("enableSkillCommands", Shape::Bool),
    key("terminal", Shape::Object),
    key("terminal.showImages", Shape::Bool),
    key("terminal.imageWidthCells", Shape::Number),
    key("terminal.clearOnShrink", Shape::Bool),
    key("terminal.showTerminalProgress", Shape::Bool),
    later(
        "terminal.hyperlinks",
        Shape::BoolOr(&["auto"]),
        "terminal capability overrides",
        &["\"auto\""],
    ),
    later(
        "terminal.images",
        Shape::FalseOr(&["kitty", "iterm2", "auto"]),
        "terminal capability overrides",
        &["\"auto\""],
    ),
    later(
        "terminal.trueColor",
        Shape::BoolOr(&["auto"]),
        "terminal capability overrides",
        &["\"auto\""],
    ),
    key("images", Shape::Object),
    key("images.autoResize", Shape::Bool),
    key("images.blockImages", Shape::Bool),
    key("enabledModels", Shape::Strings),
    key("defaultTools", Shape::Strings),
    key(
        "doubleEscapeAction",
        Shape::OneOf(&["fork", "tree", "none"]),
    ),
    key(
        "treeFilterMode",
        Shape::OneOf(&["default", "no-tools", "user-only", "labeled-only", "all"]),
    ),
    key("thinkingBudgets", Shape::Object),
    key("thinkingBudgets.minimal", Shape::Number),
    key("thinkingBudgets.low", Shape::Number),
    key("thinkingBudgets.medium", Shape::Number),
    key("thinkingBudgets.high", Shape::Number),
    key("editorPaddingX", Shape::Number),
    key("outputPad", Shape::Integers(&[0, 1])),
    key("autocompleteMaxVisible", Shape::Number),
    key("showHardwareCursor", Shape::Bool),
    key("markdown", Shape::Object),
    key("markdown.codeBlockIndent", Shape::Str),
    later(
        "markdown.mermaid",
        Shape::OneOf(&["off", "final", "streaming"]),
        "Mermaid diagrams",
        &["\"off\""],
    ),
    key("warnings", Shape::Object),
    key("warnings.anthropicExtraUsage", Shape::Bool),
    key("codemode", Shape::Object),
    later(
        "codemode.mode",
        Shape::OneOf(&["on", "only"]),
        "codemode",
        &[],
    ),
    later("codemode.inlineBudget", Shape::NonNegative, "codemode", &[]),
    key("sessionDir", Shape::Str),
    global(later("httpProxy", Shape::Str, "the proxy setting", &[])),
    key(
        "httpIdleTimeoutMs",
        Shape::NumberOr {
            non_negative: true,
            words: &["disabled"],
        },
    ),
    global(later(
        "cacheWarming",
        Shape::OneOf(&["off", "streaming", "idle"]),
        "cache warming",
        &["\"off\""],
    )),
    later(
        "websocketConnectTimeoutMs",
        Shape::NumberOr {
            non_negative: true,
            words: &["disabled"],
        },
        "the WebSocket connect timeout",
        &[],
    ),
    later(
        "tuiMode",
        Shape::OneOf(&["regular", "fullscreen"]),
        FULLSCREEN,
        &["\"regular\""],
    ),
    later(
        "fullscreenExitOutput",
        Shape::OneOf(&["transcript", "resume-hint"]),
        FULLSCREEN,
        &[],
    ),
    later(
        "fullscreenScrollbar",
        Shape::OneOf(&["auto", "always", "hidden"]),
        FULLSCREEN,
        &[],
    ),
    later("fullscreenCopyOnSelect", Shape::Bool, FULLSCREEN, &[]),
    later(
        "fullscreenWheelScrollLines",
        Shape::NumberOr {
            non_negative: false,
            words: &["auto"],
        },
        FULLSCREEN,
        &[],
    ),
    migrated("queueMode", QUEUE),
    migrated("websockets", Shape::Bool),
    // pi-rs's own (docs/checkpoints.md).
    key("checkpoints", Shape::Object),
    key("checkpoints.enabled", Shape::Bool),
    key("checkpoints.keepDays", Shape::NonNegative),
];

/// The entry for a dotted path.
pub fn find(path: &str) -> Option<&'static KeyInfo> {
    KEYS.iter().find(|k| k.path == path)
}

/// The built-in extensions of pi 1.6 that `extensions` entries name as `builtin:<name>`.
pub const BUILTIN_EXTENSIONS: &[&str] = &["mcp", "llama.cpp", "codemode", "tool-search"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_nested_key_has_an_object_parent_listed_before_it() {
        for (i, info) in KEYS.iter().enumerate() {
            if let Some((parent, _)) = info.path.rsplit_once('.') {
                let at = KEYS.iter().position(|k| k.path == parent);
                assert!(
                    at.is_some_and(|at| at < i && KEYS[at].shape == Shape::Object),
                    "{} has no object parent before it",
                    info.path
                );
            }
        }
    }

    #[test]
    fn expectations_read_as_english() {
        assert_eq!(
            Shape::BoolOr(&["header"]).expected(),
            "true, false or \"header\""
        );
        assert_eq!(Shape::Integers(&[0, 1]).expected(), "0 or 1");
        assert_eq!(
            Shape::OneOf(&["a", "b", "c"]).expected(),
            "one of \"a\", \"b\" or \"c\""
        );
        assert_eq!(
            Shape::FalseOr(&["kitty", "auto"]).expected(),
            "\"kitty\", \"auto\" or false"
        );
    }
}
