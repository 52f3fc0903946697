//! The trust decision itself and the `defaultProjectTrust` setting's values: plain
//! types the settings carry, with no rules attached (those are in the parent module).

/// Whether the project's resources load. Untrusted, only the agent directory's settings
/// and resources (and the command line's) are used; the project's `sessionDir` is the one
/// setting read either way, as in pi.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProjectTrust {
    #[default]
    Untrusted,
    Trusted,
}

impl ProjectTrust {
    pub fn from_bool(trusted: bool) -> ProjectTrust {
        if trusted {
            ProjectTrust::Trusted
        } else {
            ProjectTrust::Untrusted
        }
    }

    pub fn is_trusted(self) -> bool {
        self == ProjectTrust::Trusted
    }
}

/// `defaultProjectTrust`: what happens when no flag, extension or saved decision decides.
/// Read from the agent directory's settings only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DefaultProjectTrust {
    /// Ask in the terminal UI; without one (print, JSON, RPC) the project is not trusted.
    #[default]
    Ask,
    Always,
    Never,
}

impl DefaultProjectTrust {
    /// pi's reading: `"always"` and `"never"`, anything else is `"ask"`.
    pub fn parse(value: Option<&str>) -> DefaultProjectTrust {
        match value {
            Some("always") => DefaultProjectTrust::Always,
            Some("never") => DefaultProjectTrust::Never,
            _ => DefaultProjectTrust::Ask,
        }
    }
}
