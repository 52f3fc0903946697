//! The harness shared by the end-to-end tests: a temporary project whose `HOME` points
//! `models.json` at a loopback model server running a script (see
//! `support::pi_project`), and the `pi` binary started in tmux there.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::support::pi_project::Project;
use crate::support::tmux::Tmux;

/// How long any screen or file state is waited for.
pub const WAIT: Duration = Duration::from_secs(20);

/// A [`Project`] with a quiet startup screen, run in tmux.
pub struct Env(Project);

impl std::ops::Deref for Env {
    type Target = Project;

    fn deref(&self) -> &Project {
        &self.0
    }
}

impl Env {
    pub fn new(script: Value) -> Env {
        let project = Project::new(script);
        std::fs::write(
            project.agent_dir().join("settings.json"),
            r#"{"quietStartup": true}"#,
        )
        .unwrap();
        Env(project)
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// `pi --provider mock --model mock-model <extra>` in a `width`×`height` terminal.
    pub fn start(&self, extra: &str, width: u16, height: u16) -> Tmux {
        self.start_with_env(extra, width, height, &[])
    }

    /// [`Env::start`] with more environment variables.
    pub fn start_with_env(
        &self,
        extra: &str,
        width: u16,
        height: u16,
        vars: &[(&str, &str)],
    ) -> Tmux {
        let home = self.home();
        let cmd = format!(
            "{} --provider mock --model mock-model {extra}",
            env!("CARGO_BIN_EXE_pi")
        );
        let mut env = vec![
            ("HOME", home.to_str().unwrap()),
            ("PI_CODING_AGENT_DIR", ""),
        ];
        env.extend_from_slice(vars);
        Tmux::start(&cmd, &self.cwd(), &env, width, height)
    }

    /// [`Env::start`] on a tmux server configured with `tmux_conf` (lines of a tmux
    /// configuration file).
    pub fn start_in_tmux_with(&self, tmux_conf: &str, width: u16, height: u16) -> Tmux {
        let conf = self.dir.path().join("tmux.conf");
        std::fs::write(&conf, tmux_conf).unwrap();
        let home = self.home();
        let cmd = format!(
            "{} --provider mock --model mock-model",
            env!("CARGO_BIN_EXE_pi")
        );
        let env = [
            ("HOME", home.to_str().unwrap()),
            ("PI_CODING_AGENT_DIR", ""),
        ];
        Tmux::start_configured(
            &cmd,
            &self.cwd(),
            &env,
            (width, height),
            conf.to_str().unwrap(),
        )
    }

    pub fn session_files(&self) -> Vec<PathBuf> {
        let root = self.home().join(".pi/agent/sessions");
        let mut files = Vec::new();
        for d in std::fs::read_dir(root).into_iter().flatten().flatten() {
            for f in std::fs::read_dir(d.path()).into_iter().flatten().flatten() {
                files.push(f.path());
            }
        }
        files
    }
}

/// The editor and footer are drawn.
pub fn editor_ready(screen: &str) -> bool {
    screen.contains("mock-model") && screen.contains("────")
}

/// Types `text` into the editor and presses Enter.
pub fn submit(t: &Tmux, text: &str) {
    t.type_text(text);
    t.keys(&["Enter"]);
}

/// Sends each question and waits until its answer is on screen.
pub fn converse(t: &Tmux, turns: &[(&str, &str)]) {
    for (question, answer) in turns {
        submit(t, question);
        t.wait_for(answer, WAIT);
    }
}
