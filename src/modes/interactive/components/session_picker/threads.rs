//! The picker's threaded order: forks listed under the session they were forked from
//! (the header's `parentSession`), newest first at every level, drawn with pi's
//! `├─ └─ │` connectors. Paths are compared after lexical normalization (pi resolves
//! symlinks; a picker that draws on every keystroke should not touch the disk). A
//! parent that is not in the list, or a loop of sessions naming each other as parent
//! (a damaged store), makes a session a root rather than hiding it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::session::listing::SessionInfo;

/// One row of the threaded list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadRow {
    /// Position in the input.
    pub index: usize,
    /// Connector text drawn before the session (empty for roots).
    pub prefix: String,
}

fn normalized(path: &Path) -> PathBuf {
    path.components().collect()
}

/// Arranges `sessions` (newest first) as a forest. Returns every input exactly once.
pub fn thread(sessions: &[&SessionInfo]) -> Vec<ThreadRow> {
    let by_path: HashMap<PathBuf, usize> = sessions
        .iter()
        .enumerate()
        .map(|(i, s)| (normalized(&s.path), i))
        .collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); sessions.len()];
    let mut roots = Vec::new();
    for (i, s) in sessions.iter().enumerate() {
        let parent = s
            .parent_session_path
            .as_deref()
            .and_then(|p| by_path.get(&normalized(Path::new(p))))
            .copied()
            .filter(|&p| p != i);
        match parent {
            Some(p) => children[p].push(i),
            None => roots.push(i),
        }
    }
    let mut out = Vec::with_capacity(sessions.len());
    let mut visited = vec![false; sessions.len()];
    for root in roots {
        walk(root, &children, &mut visited, &mut out);
    }
    // Whatever was not reached sits on a parent loop: show it as a root.
    for i in 0..sessions.len() {
        if !visited[i] {
            walk(i, &children, &mut visited, &mut out);
        }
    }
    out
}

/// Depth-first, iteratively (fork chains can be long).
fn walk(root: usize, children: &[Vec<usize>], visited: &mut [bool], out: &mut Vec<ThreadRow>) {
    // (node, depth, ancestor lines still running, last among its siblings)
    let mut stack: Vec<(usize, usize, Vec<bool>, bool)> = vec![(root, 0, Vec::new(), true)];
    while let Some((node, depth, ancestors, is_last)) = stack.pop() {
        if visited[node] {
            continue;
        }
        visited[node] = true;
        out.push(ThreadRow {
            index: node,
            prefix: prefix(depth, &ancestors, is_last),
        });
        let kids: Vec<usize> = children[node]
            .iter()
            .copied()
            .filter(|&c| !visited[c])
            .collect();
        for (k, &child) in kids.iter().enumerate().rev() {
            let mut next = ancestors.clone();
            // pi draws no line for the root level.
            next.push(depth > 0 && !is_last);
            stack.push((child, depth + 1, next, k + 1 == kids.len()));
        }
    }
}

fn prefix(depth: usize, ancestors: &[bool], is_last: bool) -> String {
    if depth == 0 {
        return String::new();
    }
    let mut out = String::with_capacity(ancestors.len() * 3 + 3);
    for &running in ancestors {
        out.push_str(if running { "│  " } else { "   " });
    }
    out.push_str(if is_last { "└─ " } else { "├─ " });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;

    fn info(name: &str, parent: Option<&str>) -> SessionInfo {
        let time = DateTime::from_timestamp_millis(0).unwrap_or_default();
        SessionInfo {
            path: PathBuf::from(format!("/s/{name}.jsonl")),
            id: name.into(),
            cwd: "/p".into(),
            name: None,
            parent_session_path: parent.map(|p| format!("/s/./{p}.jsonl")),
            created: time,
            modified: time,
            message_count: 1,
            first_message: name.into(),
        }
    }

    fn drawn(sessions: &[SessionInfo]) -> String {
        let refs: Vec<&SessionInfo> = sessions.iter().collect();
        thread(&refs)
            .iter()
            .map(|r| format!("{}{}\n", r.prefix, sessions[r.index].first_message))
            .collect()
    }

    #[test]
    fn forks_nest_under_their_parent_with_connectors() {
        let sessions = [
            info("a", None),
            info("a-fork-1", Some("a")),
            info("b", None),
            info("a-fork-1-fork", Some("a-fork-1")),
            info("a-fork-2", Some("a")),
            info("orphan", Some("gone")),
        ];
        insta::assert_snapshot!(drawn(&sessions), @r"
        a
           ├─ a-fork-1
           │  └─ a-fork-1-fork
           └─ a-fork-2
        b
        orphan
        ");
    }

    #[test]
    fn parent_loops_do_not_hide_sessions() {
        let sessions = [
            info("x", Some("y")),
            info("y", Some("x")),
            info("z", Some("z")),
        ];
        insta::assert_snapshot!(drawn(&sessions), @r"
        z
        x
           └─ y
        ");
    }
}
