//! pi 1.6's built-in extensions (`builtin:mcp`, `builtin:llama.cpp`, `builtin:codemode`,
//! `builtin:tool-search`): pi-rs does not have them yet, but knows their names, so
//! `-e builtin:<name>` is recognised instead of taken for a path, `pi config` lists
//! and switches them the way pi 1.6 writes the switch to settings.json, and tools that
//! come from them can be named when asked for.

/// The names, in the order `pi config` lists them.
pub const BUILTIN_EXTENSIONS: [&str; 4] = ["codemode", "llama.cpp", "mcp", "tool-search"];

/// The prefix of a built-in extension's path.
pub const PREFIX: &str = "builtin:";

/// The built-in extension `-e builtin:<name>` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuiltinRef {
    /// One of pi 1.6's built-in extensions.
    Known(&'static str),
    /// A name pi 1.6 does not have.
    Unknown(String),
}

/// `path` as a built-in extension reference, when it starts with `builtin:`.
pub fn parse(path: &str) -> Option<BuiltinRef> {
    let name = path.strip_prefix(PREFIX)?;
    Some(
        match BUILTIN_EXTENSIONS.iter().find(|known| **known == name) {
            Some(known) => BuiltinRef::Known(known),
            None => BuiltinRef::Unknown(name.to_string()),
        },
    )
}

/// pi's error for an unknown `-e builtin:<name>` (it then exits with code 1).
pub fn unknown_error(path: &str) -> String {
    format!("Failed to load extension \"{path}\": Unknown built-in extension: {path}")
}

/// pi's hint after an extension that failed to load.
pub const LOAD_FAILURE_HINT: &str = "Hint: Start without extensions using \"pi -ne\".";

/// Whether pi 1.6 loads the built-in extension `name` with these `extensions` settings
/// entries: on unless the user's list switches it off (`-builtin:<name>`, or a
/// `!pattern` matching it; `+builtin:<name>` switches it back on), and the last
/// `+`/`-`/`!` entry of the project's list matching it decides over the user's.
pub fn enabled_by_settings(user: &[String], project: &[String], name: &str) -> bool {
    let path = format!("{PREFIX}{name}");
    let mut project_state = None;
    for entry in project {
        let Some(target) = entry.strip_prefix(['+', '-', '!']) else {
            continue;
        };
        let exact = !entry.starts_with('!');
        if (exact && target == path) || (!exact && glob(target, &path)) {
            project_state = Some(entry.starts_with('+'));
        }
    }
    if let Some(state) = project_state {
        return state;
    }
    let mut enabled = true;
    if user
        .iter()
        .filter_map(|e| e.strip_prefix('!'))
        .any(|p| glob(p, &path))
    {
        enabled = false;
    }
    if user
        .iter()
        .any(|e| e.strip_prefix('+') == Some(path.as_str()))
    {
        enabled = true;
    }
    if user
        .iter()
        .any(|e| e.strip_prefix('-') == Some(path.as_str()))
    {
        enabled = false;
    }
    enabled
}

/// `*` matches any characters (enough for the patterns that can name a `builtin:` path).
fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, tail)) => {
            let Some(rest) = text.strip_prefix(head) else {
                return false;
            };
            (0..=rest.len()).any(|i| rest.is_char_boundary(i) && glob(tail, &rest[i..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str]) -> Vec<String> {
        entries.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn names_and_errors() {
        assert_eq!(parse("builtin:mcp"), Some(BuiltinRef::Known("mcp")));
        assert_eq!(
            parse("builtin:nope"),
            Some(BuiltinRef::Unknown("nope".into()))
        );
        assert_eq!(parse("./builtin.ts"), None);
        assert_eq!(
            unknown_error("builtin:nope"),
            "Failed to load extension \"builtin:nope\": Unknown built-in extension: builtin:nope"
        );
    }

    #[test]
    fn settings_switch_them_as_pi() {
        assert!(enabled_by_settings(&[], &[], "mcp"));
        assert!(!enabled_by_settings(&list(&["-builtin:mcp"]), &[], "mcp"));
        assert!(enabled_by_settings(
            &list(&["-builtin:mcp"]),
            &[],
            "codemode"
        ));
        assert!(!enabled_by_settings(
            &list(&["!builtin:*"]),
            &[],
            "codemode"
        ));
        assert!(enabled_by_settings(
            &list(&["!builtin:*", "+builtin:codemode"]),
            &[],
            "codemode"
        ));
        assert!(enabled_by_settings(
            &list(&["-builtin:mcp"]),
            &list(&["+builtin:mcp"]),
            "mcp"
        ));
        assert!(!enabled_by_settings(&[], &list(&["-builtin:mcp"]), "mcp"));
        // Plain project entries are paths, not switches.
        assert!(!enabled_by_settings(
            &list(&["-builtin:mcp"]),
            &list(&["builtin:mcp"]),
            "mcp"
        ));
    }
}
