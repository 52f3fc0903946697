//! Which tools a session declares to the model, chosen as pi 1.6 chooses them from
//! `--tools`, `--exclude-tools`, `--no-tools`, `--no-builtin-tools` and the `defaultTools`
//! setting.
//!
//! - `defaultTools` (user settings, then the project's on top) replaces the default
//!   `read, bash, edit, write` with plain names, or changes it with a list of only
//!   `+name` / `-name` entries. A project list of only `+`/`-` entries applies after the
//!   user's list; a project list with plain names replaces it.
//! - `--tools` with plain names (or `*` patterns) is an allowlist: exactly the tools it
//!   names or matches, extension tools included. A list of only `+name` / `-name` entries
//!   changes the default selection instead. The two kinds cannot be mixed.
//! - `--exclude-tools` names or patterns are removed last, whatever selected them.
//! - `/reload` keeps the tools that are active and adds the ones newly added to
//!   `defaultTools`; a tool the setting no longer names stays until the next start.
//!
//! Everything here is plain computation on names; the factory creates the tools.

/// The built-in tools enabled when nothing changes the selection.
pub const DEFAULT_TOOL_NAMES: [&str; 4] = ["read", "bash", "edit", "write"];

/// Tools pi 1.6 has that pi-rs does not have yet: its `powershell` built-in and the
/// tools of its built-in extensions (`codemode`, `tool_search`), with the built-in
/// extension providing each (`None`: a built-in tool).
pub const LATER_TOOLS: [(&str, Option<&str>); 3] = [
    ("powershell", None),
    ("codemode", Some("codemode")),
    ("tool_search", Some("tool-search")),
];

/// `--no-tools` / `--no-builtin-tools`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum NoTools {
    #[default]
    Off,
    /// `--no-builtin-tools`: no built-in tools by default; extension tools stay.
    Builtin,
    /// `--no-tools`: nothing unless `--tools` names it.
    All,
}

/// The command line's tool flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolSelection {
    /// `--tools`, split (already checked with [`tool_list_error`]).
    pub tools: Option<Vec<String>>,
    /// `--exclude-tools`, split.
    pub exclude: Vec<String>,
    pub no_tools: NoTools,
}

impl ToolSelection {
    /// The `--tools` list when it is made of `+name` / `-name` entries only.
    fn modifiers(&self) -> Option<&[String]> {
        self.tools
            .as_deref()
            .filter(|list| list.iter().any(|e| is_modifier(e)))
    }

    /// Whether the session follows `defaultTools` (no allowlist, no `--no-tools` /
    /// `--no-builtin-tools`), so `/reload` adds the tools newly added to it.
    fn uses_default_tools(&self) -> bool {
        (self.tools.is_none() || self.modifiers().is_some()) && self.no_tools == NoTools::Off
    }

    /// The default selection the flags start from: `defaults` (the resolved setting, or
    /// pi's four) unless a `--no-…` flag empties it.
    fn default_names(&self, defaults: Option<&[String]>) -> Vec<String> {
        if self.no_tools != NoTools::Off {
            return Vec::new();
        }
        match defaults {
            Some(names) => names.to_vec(),
            None => DEFAULT_TOOL_NAMES.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// (the names selected before registration, the allowlist if any).
    fn selected_and_allowed(
        &self,
        defaults: Option<&[String]>,
    ) -> (Vec<String>, Option<Vec<String>>) {
        let default_names = self.default_names(defaults);
        if let Some(modifiers) = self.modifiers() {
            let selected = apply_modifiers(&default_names, modifiers);
            let allowed = (self.no_tools == NoTools::All).then(|| selected.clone());
            return (selected, allowed);
        }
        match &self.tools {
            Some(list) => (list.clone(), Some(list.clone())),
            None if self.no_tools == NoTools::All => (default_names, Some(Vec::new())),
            None => (default_names, None),
        }
    }
}

/// Which tools may be activated at all: not excluded, and matched by the allowlist if
/// there is one (pi's `_isAllowedTool`). The default allows every tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    exclude: Vec<String>,
    allow: Option<Vec<String>>,
}

impl ToolFilter {
    pub fn allows(&self, name: &str) -> bool {
        !Matcher {
            entries: &self.exclude,
        }
        .matches(name)
            && self
                .allow
                .as_ref()
                .is_none_or(|a| Matcher { entries: a }.matches(name))
    }
}

impl ToolSelection {
    /// The [`ToolFilter`] of these flags (`defaults`: the resolved `defaultTools`).
    pub fn filter(&self, defaults: Option<&[String]>) -> ToolFilter {
        let (_, allow) = self.selected_and_allowed(defaults);
        ToolFilter {
            exclude: self.exclude.clone(),
            allow,
        }
    }
}

/// A `+name` or `-name` entry.
/// When the session follows the default selection (no allowlist, no `--no-tools` /
/// `--no-builtin-tools`), the `--tools +name/-name` entries to apply on top of a branch's
/// recorded tools; `None` when the flags fix the tools and a branch's record is ignored.
pub fn transcript_modifiers(selection: &ToolSelection) -> Option<Vec<String>> {
    selection
        .uses_default_tools()
        .then(|| selection.modifiers().unwrap_or_default().to_vec())
}

/// The tools of a branch pi 1.6 recorded (`_restoreToolsFromTranscript`): the `recorded`
/// ones, then the extension tools the branch never `mentioned` (registered after it was
/// recorded, so they are new), with `modifiers` applied.
pub fn transcript_tools(
    recorded: &[String],
    mentioned: &[String],
    extension: &[String],
    builtin: &[&str],
    modifiers: &[String],
) -> Vec<String> {
    let new_tools = extension
        .iter()
        .filter(|n| !mentioned.contains(n) && !builtin.contains(&n.as_str()));
    let names: Vec<String> = recorded.iter().chain(new_tools).cloned().collect();
    apply_modifiers(&names, modifiers)
}

pub fn is_modifier(entry: &str) -> bool {
    entry.starts_with('+') || entry.starts_with('-')
}

/// pi's check of a `--tools` list: plain names and patterns, or only `+name` / `-name`
/// entries with exact names. The problem, when there is one.
pub fn tool_list_error(entries: &[String]) -> Option<String> {
    let modifiers: Vec<&String> = entries.iter().filter(|e| is_modifier(e)).collect();
    if modifiers.is_empty() {
        return None;
    }
    if modifiers.len() < entries.len() {
        return Some("tool names cannot be mixed with +name or -name entries".into());
    }
    modifiers
        .iter()
        .find(|e| e.contains('*'))
        .map(|p| format!("+name and -name entries take exact tool names, not patterns: {p}"))
}

/// `base` with the `+name` entries of `entries` added and the `-name` ones removed, in
/// order (other entries are ignored).
pub fn apply_modifiers(base: &[String], entries: &[String]) -> Vec<String> {
    let mut tools = base.to_vec();
    for entry in entries {
        if let Some(name) = entry.strip_prefix('+') {
            if !name.is_empty() && !tools.iter().any(|t| t == name) {
                tools.push(name.to_string());
            }
        } else if let Some(name) = entry.strip_prefix('-') {
            tools.retain(|t| t != name);
        }
    }
    tools
}

/// Tool names and `*` patterns (`*` matches any characters).
struct Matcher<'a> {
    entries: &'a [String],
}

impl Matcher<'_> {
    fn matches(&self, name: &str) -> bool {
        self.entries.iter().any(|e| glob_matches(e, name))
    }
}

fn glob_matches(pattern: &str, name: &str) -> bool {
    if !pattern.contains('*') {
        return pattern == name;
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// A merged `defaultTools` list as names: plain names replace pi's four, then `+name` /
/// `-name` entries apply in order.
pub fn resolve_default_tools(entries: &[String]) -> Vec<String> {
    let plain: Vec<String> = entries
        .iter()
        .filter(|e| !is_modifier(e))
        .cloned()
        .collect();
    let base = if plain.is_empty() && !entries.is_empty() {
        DEFAULT_TOOL_NAMES.iter().map(|s| s.to_string()).collect()
    } else {
        plain
    };
    apply_modifiers(&base, entries)
}

/// The tools that can be declared: the built-in ones (pi's order), then the extension
/// tools in registration order (one replacing a built-in tool keeps its place).
fn registry(builtin: &[&str], extension: &[String]) -> Vec<String> {
    let mut names: Vec<String> = builtin.iter().map(|s| s.to_string()).collect();
    for name in extension {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    names
}

/// The registered tools: built-in ones, extension ones (active once registered), and
/// `inactive` ones (registered inactive, as pi 1.6 registers `codemode` and
/// `tool_search`).
struct Registered<'a> {
    builtin: &'a [&'a str],
    extension: &'a [String],
    inactive: &'a [String],
}

/// The active tools: `wanted` (in order) that are registered, then every registered tool
/// the allowlist matches, or without one every extension tool.
fn activate(
    wanted: Vec<String>,
    selection: &ToolSelection,
    allowed: &Option<Vec<String>>,
    tools: Registered<'_>,
) -> Vec<String> {
    let filter = ToolFilter {
        exclude: selection.exclude.clone(),
        allow: allowed.clone(),
    };
    let all_extension: Vec<String> = tools
        .extension
        .iter()
        .chain(tools.inactive)
        .cloned()
        .collect();
    let extension = tools.extension;
    let registered: Vec<String> = registry(tools.builtin, &all_extension)
        .into_iter()
        .filter(|n| filter.allows(n))
        .collect();
    let mut active: Vec<String> = Vec::new();
    let mut push = |name: &String| {
        if registered.contains(name) && !active.contains(name) {
            active.push(name.clone());
        }
    };
    wanted.iter().for_each(&mut push);
    match allowed {
        Some(list) => {
            let matcher = Matcher { entries: list };
            registered
                .iter()
                .filter(|n| matcher.matches(n))
                .for_each(&mut push);
        }
        None => extension.iter().for_each(&mut push),
    }
    active
}

/// The tools a new session starts with, in the order they are declared. `defaults` is
/// the resolved `defaultTools` ([`default_tools`]); `builtin` the built-in tools in pi's
/// order; `extension` the extension tools in registration order.
pub fn startup_tools(
    selection: &ToolSelection,
    defaults: Option<&[String]>,
    builtin: &[&str],
    extension: &[String],
) -> Vec<String> {
    let (selected, allowed) = selection.selected_and_allowed(defaults);
    let tools = Registered {
        builtin,
        extension,
        inactive: &[],
    };
    activate(selected, selection, &allowed, tools)
}

/// The defaults `/reload` compares: the setting with `--tools +name/-name` applied, when
/// the session follows the setting.
fn followed_defaults(selection: &ToolSelection, defaults: Option<&[String]>) -> Vec<String> {
    if !selection.uses_default_tools() {
        return Vec::new();
    }
    apply_modifiers(
        &selection.default_names(defaults),
        selection.modifiers().unwrap_or_default(),
    )
}

/// The tools after `/reload`: those `active` before it, plus the tools `defaultTools`
/// newly adds (`old` → `new` settings), plus the extension tools of the reloaded
/// extensions (or with an allowlist, what it matches).
pub fn reload_tools(
    selection: &ToolSelection,
    defaults: (Option<&[String]>, Option<&[String]>),
    active: &[String],
    builtin: &[&str],
    extension: &[String],
) -> Vec<String> {
    let before = followed_defaults(selection, defaults.0);
    let added = followed_defaults(selection, defaults.1)
        .into_iter()
        .filter(|n| !before.contains(n));
    let wanted: Vec<String> = active.iter().cloned().chain(added).collect();
    let (_, allowed) = selection.selected_and_allowed(defaults.1);
    let tools = Registered {
        builtin,
        extension,
        inactive: &[],
    };
    activate(wanted, selection, &allowed, tools)
}

/// The tools pi 1.6 would declare here that pi-rs does not have yet ([`LATER_TOOLS`];
/// the ones from a built-in extension only where `builtin_enabled` says pi would load
/// it), for one note at startup.
pub fn later_tools(
    selection: &ToolSelection,
    defaults: Option<&[String]>,
    builtin: &[&str],
    extension: &[String],
    builtin_enabled: impl Fn(&str) -> bool,
) -> Vec<String> {
    let (builtin_then, inactive) = with_later_tools(builtin, builtin_enabled);
    let builtin_then: Vec<&str> = builtin_then.iter().map(String::as_str).collect();
    let (selected, allowed) = selection.selected_and_allowed(defaults);
    let tools = Registered {
        builtin: &builtin_then,
        extension,
        inactive: &inactive,
    };
    activate(selected, selection, &allowed, tools)
        .into_iter()
        .filter(|n| LATER_TOOLS.iter().any(|(later, _)| later == n))
        .collect()
}

/// The built-in tools as pi 1.6 has them, and the tools its built-in extensions register
/// (inactive), from [`LATER_TOOLS`].
fn with_later_tools(
    builtin: &[&str],
    builtin_enabled: impl Fn(&str) -> bool,
) -> (Vec<String>, Vec<String>) {
    let mut builtin_then: Vec<String> = builtin.iter().map(|s| s.to_string()).collect();
    let mut extension_then = Vec::new();
    for (name, from) in LATER_TOOLS {
        match from {
            None => {
                // pi's order: powershell follows bash.
                let at = builtin_then
                    .iter()
                    .position(|n| n == "bash")
                    .map_or(builtin_then.len(), |i| i + 1);
                builtin_then.insert(at, name.to_string());
            }
            Some(ext) if builtin_enabled(ext) => extension_then.push(name.to_string()),
            Some(_) => {}
        }
    }
    (builtin_then, extension_then)
}

/// Exact names in `entries` (`+name` counts, `-name` and patterns do not) that are no
/// tool pi 1.6 or pi-rs knows here, for a warning.
pub fn unknown_names(entries: &[String], builtin: &[&str], extension: &[String]) -> Vec<String> {
    entries
        .iter()
        .filter(|e| !e.starts_with('-') && !e.contains('*'))
        .map(|e| e.trim_start_matches('+').to_string())
        .filter(|n| {
            !n.is_empty()
                && !n.starts_with("mcp__")
                && !builtin.contains(&n.as_str())
                && !extension.contains(n)
                && !LATER_TOOLS.iter().any(|(later, _)| later == n)
        })
        .collect()
}

/// The one line naming what the selection asks for that comes with a later version of
/// pi-rs: the tools of [`later_tools`], and MCP tools when an entry starts with `mcp__`.
pub fn later_note(later: &[String], entries: &[String]) -> Option<String> {
    let mcp = entries
        .iter()
        .any(|e| e.trim_start_matches(['+', '-']).starts_with("mcp__"));
    let mut parts = Vec::new();
    match later {
        [] => {}
        [one] => parts.push(format!("the tool {one}")),
        many => parts.push(format!("the tools {}", many.join(", "))),
    }
    if mcp {
        parts.push("MCP tools (mcp__…)".to_string());
    }
    if parts.is_empty() {
        return None;
    }
    let (verb, them) = if later.len() == 1 && !mcp {
        ("comes", "it")
    } else {
        ("come", "them")
    };
    Some(format!(
        "{} of pi 1.6 {verb} with a later version of pi-rs; this session runs without {them}",
        capitalise(&parts.join(" and "))
    ))
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUILTIN: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];

    fn list(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    fn sel(tools: Option<&[&str]>, exclude: &[&str], no_tools: NoTools) -> ToolSelection {
        ToolSelection {
            tools: tools.map(list),
            exclude: list(exclude),
            no_tools,
        }
    }

    fn start(s: &ToolSelection, defaults: Option<&[&str]>, ext: &[&str]) -> Vec<String> {
        let defaults = defaults.map(list);
        startup_tools(s, defaults.as_deref(), &BUILTIN, &list(ext))
    }

    #[test]
    fn lists_are_allowlists_or_modifiers() {
        let off = NoTools::Off;
        assert_eq!(start(&sel(None, &[], off), None, &[]), DEFAULT_TOOL_NAMES);
        assert_eq!(
            start(&sel(Some(&["nope"]), &[], off), None, &[]),
            Vec::<String>::new()
        );
        assert_eq!(
            start(&sel(Some(&["gr*", "l*"]), &[], off), None, &[]),
            ["grep", "ls"]
        );
        assert_eq!(
            start(&sel(Some(&["+grep", "-write"]), &[], off), None, &[]),
            ["read", "bash", "edit", "grep"]
        );
        assert_eq!(
            start(&sel(Some(&["ls", "read"]), &[], off), None, &["mine"]),
            ["ls", "read"]
        );
        assert_eq!(
            start(
                &sel(Some(&["mine", "read"]), &[], off),
                None,
                &["mine", "other"]
            ),
            ["mine", "read"]
        );
    }

    #[test]
    fn no_tools_flags_and_exclusions() {
        assert_eq!(
            start(&sel(Some(&["+grep"]), &[], NoTools::All), None, &["x"]),
            ["grep"]
        );
        assert_eq!(
            start(&sel(Some(&["+grep"]), &[], NoTools::Builtin), None, &["x"]),
            ["grep", "x"]
        );
        assert_eq!(
            start(&sel(None, &[], NoTools::Builtin), None, &["x"]),
            ["x"]
        );
        assert_eq!(
            start(&sel(None, &[], NoTools::All), None, &["x"]),
            Vec::<String>::new()
        );
        assert_eq!(
            start(&sel(None, &["e*", "w*"], NoTools::Off), None, &[]),
            ["read", "bash"]
        );
        assert_eq!(
            start(
                &sel(Some(&["*"]), &["bash", "x"], NoTools::Off),
                None,
                &["x"]
            ),
            ["read", "edit", "write", "grep", "find", "ls"]
        );
    }

    #[test]
    fn default_tools_entries_resolve_as_pi() {
        let r = |entries: &[&str]| {
            resolve_default_tools(&entries.iter().map(|e| e.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(r(&["+grep", "-write"]), ["read", "bash", "edit", "grep"]);
        // A project's `+ls` appended to the user's list (the settings merge does that).
        assert_eq!(r(&["read", "find", "+ls"]), ["read", "find", "ls"]);
        assert_eq!(r(&["grep", "+ls"]), ["grep", "ls"]);
        assert_eq!(r(&[]), Vec::<String>::new());
    }

    #[test]
    fn settings_defaults_and_flags_combine() {
        let defaults: &[&str] = &["read", "bash", "edit", "grep"];
        assert_eq!(
            start(&sel(Some(&["+ls"]), &[], NoTools::Off), Some(defaults), &[]),
            ["read", "bash", "edit", "grep", "ls"]
        );
        assert_eq!(
            start(
                &sel(Some(&["read"]), &[], NoTools::Off),
                Some(defaults),
                &[]
            ),
            ["read"]
        );
    }

    #[test]
    fn reload_adds_newly_added_defaults_only() {
        let s = sel(None, &[], NoTools::Off);
        let old = list(&["read", "bash", "edit", "write"]);
        let new = list(&["read", "grep"]);
        // `bash` was switched off during the session; `edit`/`write` leave the setting
        // but stay active; `grep` is new.
        let active = list(&["read", "edit", "write"]);
        assert_eq!(
            reload_tools(&s, (Some(&old), Some(&new)), &active, &BUILTIN, &[]),
            ["read", "edit", "write", "grep"]
        );
        // An allowlist does not follow the setting.
        let only = sel(Some(&["read"]), &[], NoTools::Off);
        assert_eq!(
            reload_tools(
                &only,
                (Some(&old), Some(&new)),
                &list(&["read"]),
                &BUILTIN,
                &[]
            ),
            ["read"]
        );
    }

    #[test]
    fn tools_pi_rs_lacks_are_named() {
        let s = sel(Some(&["+codemode", "+powershell"]), &[], NoTools::Off);
        let later = later_tools(&s, None, &BUILTIN, &[], |_| true);
        assert_eq!(later, ["codemode", "powershell"]);
        assert!(later_tools(&s, None, &BUILTIN, &[], |_| false) == ["powershell"]);
        let all = sel(Some(&["*"]), &[], NoTools::Off);
        assert_eq!(
            later_tools(&all, None, &BUILTIN, &[], |_| true),
            ["powershell", "codemode", "tool_search"]
        );
        assert_eq!(
            later_note(&list(&["codemode"]), &list(&["mcp__x__*"])).unwrap(),
            "The tool codemode and MCP tools (mcp__…) of pi 1.6 come with a later version of pi-rs; this session runs without them"
        );
        assert_eq!(later_note(&[], &list(&["read"])), None);
        assert_eq!(
            unknown_names(
                &list(&["+nope", "-gone", "re*", "codemode", "mine"]),
                &BUILTIN,
                &list(&["mine"])
            ),
            ["nope"]
        );
    }

    #[test]
    fn list_errors_and_globs() {
        assert_eq!(tool_list_error(&list(&["read", "grep"])), None);
        assert!(tool_list_error(&list(&["+read", "grep"])).is_some());
        assert!(tool_list_error(&list(&["+re*"])).is_some());
        assert!(glob_matches("mcp__*__read", "mcp__srv__read"));
        assert!(!glob_matches("a*a", "a"));
        assert!(glob_matches("*", ""));
    }
}
