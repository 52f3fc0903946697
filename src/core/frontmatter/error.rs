//! The error of a frontmatter that does not parse, shared by the block parser
//! (`frontmatter`) and the scalar readers (`scalar`).

/// Frontmatter that is not valid (in the subset we read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontmatterError {
    /// 1-based line number inside the file.
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for FrontmatterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "invalid YAML frontmatter at line {}: {}",
            self.line, self.message
        )
    }
}

impl std::error::Error for FrontmatterError {}

/// `Err` with a [`FrontmatterError`] at `line`.
pub(super) fn err<T>(line: usize, message: impl Into<String>) -> Result<T, FrontmatterError> {
    Err(FrontmatterError {
        line,
        message: message.into(),
    })
}
