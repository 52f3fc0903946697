//! The editor's memories: the kill ring (Ctrl+W/U/K kill, Ctrl+Y yank, Alt+Y cycle),
//! the undo stack, and the history of submitted prompts.

/// Emacs-style kill ring. Consecutive kills join into one entry.
#[derive(Debug, Clone, Default)]
pub(super) struct KillRing {
    ring: Vec<String>,
}

impl KillRing {
    /// Adds killed text. `prepend` for backward kills (the text goes in front when
    /// joining), `accumulate` when the previous action was also a kill.
    pub fn push(&mut self, text: &str, prepend: bool, accumulate: bool) {
        if text.is_empty() {
            return;
        }
        match self.ring.last_mut() {
            Some(last) if accumulate => {
                if prepend {
                    last.insert_str(0, text);
                } else {
                    last.push_str(text);
                }
            }
            _ => self.ring.push(text.to_string()),
        }
    }

    pub fn peek(&self) -> Option<&str> {
        self.ring.last().map(String::as_str)
    }

    /// Moves the newest entry to the oldest position (for yank-pop).
    pub fn rotate(&mut self) {
        if self.ring.len() > 1
            && let Some(last) = self.ring.pop()
        {
            self.ring.insert(0, last);
        }
    }

    pub fn len(&self) -> usize {
        self.ring.len()
    }
}

/// Text and cursor, as saved for undo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Snapshot {
    pub lines: Vec<String>,
    pub cursor_line: usize,
    pub cursor_col: usize,
}

/// Undo snapshots, oldest dropped beyond a limit.
#[derive(Debug, Clone, Default)]
pub(super) struct UndoStack {
    stack: Vec<Snapshot>,
}

const MAX_UNDO: usize = 500;

impl UndoStack {
    pub fn push(&mut self, snapshot: Snapshot) {
        if self.stack.len() >= MAX_UNDO {
            self.stack.remove(0);
        }
        self.stack.push(snapshot);
    }

    pub fn pop(&mut self) -> Option<Snapshot> {
        self.stack.pop()
    }

    pub fn clear(&mut self) {
        self.stack.clear();
    }
}

/// Submitted prompts, newest first, for Up/Down recall.
#[derive(Debug, Clone, Default)]
pub(super) struct PromptHistory {
    entries: Vec<String>,
}

/// pi keeps the last 100 prompts.
pub(super) const MAX_HISTORY: usize = 100;

impl PromptHistory {
    /// Records a prompt (trimmed); empty ones and repeats of the newest are skipped.
    pub fn add(&mut self, text: &str) {
        let trimmed = text.trim();
        if trimmed.is_empty() || self.entries.first().is_some_and(|e| e == trimmed) {
            return;
        }
        self.entries.insert(0, trimmed.to_string());
        self.entries.truncate(MAX_HISTORY);
    }

    pub fn get(&self, index: usize) -> Option<&str> {
        self.entries.get(index).map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }
}
