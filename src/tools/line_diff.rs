//! A line diff that picks the same alignment as the `diff` package (jsdiff) pi uses.
//!
//! Several minimal diffs usually exist when lines repeat (blank lines, closing braces),
//! and different algorithms pick different ones. pi stores the diff of every edit in the
//! session file and shows it in the UI, so we reproduce its choice: Myers' greedy forward
//! search over diagonals, preferring the path that got further in the old text (an
//! insertion) over a deletion when both are possible, and stopping diagonals that ran off
//! the edit graph. Very different texts (more than [`MAX_EDIT_DISTANCE`] changed lines)
//! fall back to `similar`'s linear-space Myers, which stays fast where the greedy search
//! would be quadratic.

use std::rc::Rc;

use similar::{Algorithm, DiffTag};

/// Beyond this many changed lines the `similar` fallback is used.
pub const MAX_EDIT_DISTANCE: usize = 2000;

/// What happened to a run of lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineTag {
    Equal,
    Removed,
    Added,
}

/// A run of consecutive lines with the same tag. Lines keep their `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineRun<'a> {
    pub tag: LineTag,
    pub lines: Vec<&'a str>,
}

/// Diffs two texts line by line (a line includes its newline, so a last line without
/// one differs from the same line with one).
pub fn diff_lines<'a>(old: &'a str, new: &'a str) -> Vec<LineRun<'a>> {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let runs = match greedy_runs(&old_lines, &new_lines, MAX_EDIT_DISTANCE) {
        Some(components) => materialize(&components, &old_lines, &new_lines),
        None => similar_runs(&old_lines, &new_lines),
    };
    merge_adjacent(runs)
}

/// One step of a path through the edit graph, shared between paths (persistent list).
struct Component {
    count: usize,
    tag: LineTag,
    previous: Option<Rc<Component>>,
}

#[derive(Clone)]
struct PathState {
    /// Index of the last old line consumed (-1 before the first).
    old_pos: isize,
    last: Option<Rc<Component>>,
}

fn extend(path: &PathState, tag: LineTag, old_step: isize) -> PathState {
    let last = match &path.last {
        Some(last) if last.tag == tag => Some(Rc::new(Component {
            count: last.count + 1,
            tag,
            previous: last.previous.clone(),
        })),
        other => Some(Rc::new(Component {
            count: 1,
            tag,
            previous: other.clone(),
        })),
    };
    PathState {
        old_pos: path.old_pos + old_step,
        last,
    }
}

/// Follows the diagonal while lines are equal; returns the new-text position reached.
fn follow_snake(path: &mut PathState, diagonal: isize, old: &[&str], new: &[&str]) -> isize {
    let mut old_pos = path.old_pos;
    let mut new_pos = old_pos - diagonal;
    let mut common = 0;
    while new_pos + 1 < new.len() as isize
        && old_pos + 1 < old.len() as isize
        && old[(old_pos + 1) as usize] == new[(new_pos + 1) as usize]
    {
        old_pos += 1;
        new_pos += 1;
        common += 1;
    }
    if common > 0 {
        path.last = Some(Rc::new(Component {
            count: common,
            tag: LineTag::Equal,
            previous: path.last.take(),
        }));
    }
    path.old_pos = old_pos;
    new_pos
}

/// The components of the chosen path, first to last; `None` past `max_edits`.
fn greedy_runs(old: &[&str], new: &[&str], max_edits: usize) -> Option<Vec<(LineTag, usize)>> {
    let old_len = old.len() as isize;
    let new_len = new.len() as isize;
    let done =
        |path: &PathState, new_pos: isize| path.old_pos + 1 >= old_len && new_pos + 1 >= new_len;

    let mut seed = PathState {
        old_pos: -1,
        last: None,
    };
    let new_pos = follow_snake(&mut seed, 0, old, new);
    if done(&seed, new_pos) {
        return Some(collect(seed.last));
    }

    let limit = (old.len() + new.len()).min(max_edits) as isize;
    // Paths indexed by diagonal (old_pos - new_pos), shifted to be non-negative.
    let offset = limit + 1;
    let mut best: Vec<Option<PathState>> = vec![None; (2 * offset + 1) as usize];
    best[offset as usize] = Some(seed);
    let mut min_diagonal = isize::MIN;
    let mut max_diagonal = isize::MAX;

    for edit_length in 1..=limit {
        let mut diagonal = min_diagonal.max(-edit_length);
        while diagonal <= max_diagonal.min(edit_length) {
            let index = (diagonal + offset) as usize;
            let remove_path = best[index - 1].take();
            let add_path = best.get(index + 1).and_then(Option::as_ref);
            let can_add = add_path.is_some_and(|p| {
                let new_pos = p.old_pos - diagonal;
                (0..new_len).contains(&new_pos)
            });
            let can_remove = remove_path
                .as_ref()
                .is_some_and(|p| p.old_pos + 1 < old_len);
            if !can_add && !can_remove {
                best[index] = None;
                diagonal += 2;
                continue;
            }
            let prefer_add = match (&remove_path, add_path) {
                (Some(remove), Some(add)) if can_add && can_remove => remove.old_pos < add.old_pos,
                _ => !can_remove,
            };
            let mut path = match (prefer_add, add_path, &remove_path) {
                (true, Some(add), _) => extend(add, LineTag::Added, 0),
                (false, _, Some(remove)) => extend(remove, LineTag::Removed, 1),
                _ => return None,
            };
            let new_pos = follow_snake(&mut path, diagonal, old, new);
            if done(&path, new_pos) {
                return Some(collect(path.last));
            }
            if path.old_pos + 1 >= old_len {
                max_diagonal = max_diagonal.min(diagonal - 1);
            }
            if new_pos + 1 >= new_len {
                min_diagonal = min_diagonal.max(diagonal + 1);
            }
            best[index] = Some(path);
            diagonal += 2;
        }
    }
    None
}

fn collect(mut last: Option<Rc<Component>>) -> Vec<(LineTag, usize)> {
    let mut out = Vec::new();
    while let Some(component) = last {
        out.push((component.tag, component.count));
        last = component.previous.clone();
    }
    out.reverse();
    out
}

fn materialize<'a>(
    components: &[(LineTag, usize)],
    old: &[&'a str],
    new: &[&'a str],
) -> Vec<LineRun<'a>> {
    let (mut old_pos, mut new_pos) = (0usize, 0usize);
    let mut runs = Vec::with_capacity(components.len());
    for &(tag, count) in components {
        let lines = match tag {
            LineTag::Removed => {
                let lines = old[old_pos..old_pos + count].to_vec();
                old_pos += count;
                lines
            }
            LineTag::Added => {
                let lines = new[new_pos..new_pos + count].to_vec();
                new_pos += count;
                lines
            }
            LineTag::Equal => {
                let lines = new[new_pos..new_pos + count].to_vec();
                new_pos += count;
                old_pos += count;
                lines
            }
        };
        runs.push(LineRun { tag, lines });
    }
    runs
}

fn similar_runs<'a>(old: &[&'a str], new: &[&'a str]) -> Vec<LineRun<'a>> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    let ops = similar::capture_diff_slices_deadline(Algorithm::Myers, old, new, Some(deadline));
    let mut runs = Vec::new();
    for op in &ops {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => runs.push(LineRun {
                tag: LineTag::Equal,
                lines: old[old_range].to_vec(),
            }),
            DiffTag::Delete => runs.push(LineRun {
                tag: LineTag::Removed,
                lines: old[old_range].to_vec(),
            }),
            DiffTag::Insert => runs.push(LineRun {
                tag: LineTag::Added,
                lines: new[new_range].to_vec(),
            }),
            DiffTag::Replace => {
                runs.push(LineRun {
                    tag: LineTag::Removed,
                    lines: old[old_range].to_vec(),
                });
                runs.push(LineRun {
                    tag: LineTag::Added,
                    lines: new[new_range].to_vec(),
                });
            }
        }
    }
    runs
}

fn merge_adjacent(runs: Vec<LineRun<'_>>) -> Vec<LineRun<'_>> {
    let mut merged: Vec<LineRun<'_>> = Vec::with_capacity(runs.len());
    for run in runs {
        if run.lines.is_empty() {
            continue;
        }
        match merged.last_mut() {
            Some(last) if last.tag == run.tag => last.lines.extend(run.lines),
            _ => merged.push(run),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn render(runs: &[LineRun<'_>]) -> String {
        runs.iter()
            .flat_map(|run| {
                let mark = match run.tag {
                    LineTag::Equal => ' ',
                    LineTag::Removed => '-',
                    LineTag::Added => '+',
                };
                run.lines
                    .iter()
                    .map(move |l| format!("{mark}{}", l.trim_end_matches('\n')))
            })
            .collect::<Vec<_>>()
            .join("|")
    }

    #[test]
    fn repeated_lines_align_like_jsdiff() {
        // jsdiff keeps the first `d` and reports the insertion before a later deletion.
        let old = "e\nc\nd\na\na\nd\nd\nd\nd\nc\na\n";
        let new = "e\nc\nd\na\na\nd\nd\nb\nd\nc\na\n";
        assert_eq!(
            render(&diff_lines(old, new)),
            " e| c| d| a| a| d| d|+b| d|-d| c| a"
        );
    }

    #[test]
    fn identical_and_empty_texts() {
        assert_eq!(render(&diff_lines("a\nb\n", "a\nb\n")), " a| b");
        assert_eq!(render(&diff_lines("", "x\n")), "+x");
        assert_eq!(render(&diff_lines("x", "")), "-x");
        assert!(diff_lines("", "").is_empty());
    }

    #[test]
    fn huge_rewrites_fall_back_and_still_cover_both_texts() {
        let old: String = (0..3000).map(|i| format!("old {i}\n")).collect();
        let new: String = (0..3000).map(|i| format!("new {i}\n")).collect();
        let runs = diff_lines(&old, &new);
        let removed: usize = runs
            .iter()
            .filter(|r| r.tag == LineTag::Removed)
            .map(|r| r.lines.len())
            .sum();
        let added: usize = runs
            .iter()
            .filter(|r| r.tag == LineTag::Added)
            .map(|r| r.lines.len())
            .sum();
        assert_eq!((removed, added), (3000, 3000));
    }
}
