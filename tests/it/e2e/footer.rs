//! The footer follows the repository: a `git switch` made in another terminal shows up
//! without any input, as in pi (which watches `.git/HEAD`).

use std::process::Command;

use serde_json::json;

use super::env::{Env, WAIT, editor_ready};
use crate::support::tmux;

fn git(dir: &std::path::Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[test]
fn the_branch_in_the_footer_follows_a_git_switch() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
        return;
    }
    if Command::new("git").arg("--version").output().is_err() {
        eprintln!("skipped: git is not installed");
        return;
    }
    let env = Env::new(json!({"default": {"text": "ok"}}));
    let cwd = env.cwd();
    git(&cwd, &["init", "-q", "-b", "first-branch"]);
    git(&cwd, &["commit", "-q", "--allow-empty", "-m", "start"]);
    let t = env.start("", 100, 30);
    t.wait_until("the editor", WAIT, editor_ready);
    t.wait_for("(first-branch)", WAIT);
    git(&cwd, &["switch", "-q", "-c", "second-branch"]);
    t.wait_for("(second-branch)", WAIT);
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}
