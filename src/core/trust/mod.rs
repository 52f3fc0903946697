//! Project trust, as pi 1.6 has it: a folder's own configuration (`.pi/settings.json`,
//! `.pi/{extensions,skills,prompts,themes}`, `.pi/SYSTEM.md`, `.pi/APPEND_SYSTEM.md`,
//! `.pi/mcp.json`, `.agents/skills` here or in a parent) is read, and its code run, only
//! once the user trusts the folder.
//!
//! [`ProjectTrust`] is the one decision every reader of project files asks (it travels
//! with the settings, see `core::settings`). This module holds the rules around it that
//! need no running session: which folders need a decision at all
//! ([`has_protected_resources`]), the saved decisions ([`store::TrustStore`],
//! `~/.pi/agent/trust.json`), the global `defaultProjectTrust` fallback, and the choices
//! of pi's trust prompt and of `/trust`. Making the decision at startup — the command
//! line, the extensions' `project_trust` handlers, the saved decision, the fallback, the
//! prompt — is the session factory's (`core::factory::trust`), which can talk to
//! extensions and to the user.
//!
//! Context files (AGENTS.md, CLAUDE.md) are not protected: they load either way.

pub mod decision;
mod folder;
pub mod store;

use std::path::{Path, PathBuf};

pub use decision::{DefaultProjectTrust, ProjectTrust};
pub use folder::{canonical_folder, folders_equal};
pub use store::{SavedDecision, TrustStore, TrustStoreError, TrustUpdate};

use crate::core::paths::{CONFIG_DIR_NAME, home_dir};

/// The entries of `<cwd>/.pi` that need a trust decision: pi's list, and pi-rs's own
/// `rs-extensions` folder (project programs run from there too).
pub const PROTECTED_CONFIG_ENTRIES: [&str; 9] = [
    "settings.json",
    "mcp.json",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
    crate::core::extension_discovery::RS_EXTENSIONS_DIR,
];

/// Whether `cwd` has project resources that wait for a trust decision: one of
/// [`PROTECTED_CONFIG_ENTRIES`] in `<cwd>/.pi`, or `.agents/skills` in `cwd` or a parent
/// (the user's own `~/.agents/skills` does not count, also when `cwd` is the home folder).
/// A bare `.pi` folder needs no decision.
pub fn has_protected_resources(cwd: &Path) -> bool {
    let cwd = canonical_folder(cwd);
    let config = cwd.join(CONFIG_DIR_NAME);
    if PROTECTED_CONFIG_ENTRIES
        .iter()
        .any(|entry| config.join(entry).exists())
    {
        return true;
    }
    let user_skills = canonical_folder(&home_dir()).join(".agents").join("skills");
    cwd.ancestors().any(|dir| {
        let skills = dir.join(".agents").join("skills");
        !folders_equal(&skills, &user_skills) && skills.exists()
    })
}

/// The trust of a command that never asks (the package commands `pi install`, `remove`,
/// `list`, `update`, `config`): the flag, else the saved decision; without one, a folder
/// without protected resources is trusted and one with them follows `default`, where
/// `ask` means not trusted. `saved_only` (`pi update`, as in pi): only a saved "trusted"
/// or the flag trusts. A trust.json that cannot be read counts as holding no decision;
/// its problem is returned to be shown.
pub fn decide_without_asking(
    cwd: &Path,
    store: &TrustStore,
    flag: Option<bool>,
    default: DefaultProjectTrust,
    saved_only: bool,
) -> (ProjectTrust, Option<TrustStoreError>) {
    if let Some(flag) = flag {
        return (ProjectTrust::from_bool(flag), None);
    }
    let (saved, problem) = match store.get(cwd) {
        Ok(saved) => (saved, None),
        Err(e) => (None, Some(e)),
    };
    let trusted = match saved {
        Some(saved) => saved,
        None if saved_only => false,
        None if !has_protected_resources(cwd) => true,
        None => default == DefaultProjectTrust::Always,
    };
    (ProjectTrust::from_bool(trusted), problem)
}

/// The parent of `cwd`'s canonical folder, if it has one (what "Trust parent folder"
/// saves a decision for).
pub fn trust_parent(cwd: &Path) -> Option<PathBuf> {
    canonical_folder(cwd).parent().map(Path::to_path_buf)
}

/// One answer of the trust prompt or of `/trust`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustChoice {
    /// pi's label, shown as it is.
    pub label: String,
    pub trusted: bool,
    /// What choosing it saves in trust.json (nothing: this process only).
    pub updates: Vec<TrustUpdate>,
    /// The folder whose saved decision this choice is (marks the current one in
    /// `/trust`).
    pub saved_path: Option<PathBuf>,
}

/// The choices for `cwd`, in pi's order: Trust, Trust parent folder (…), [Trust (this
/// session only)], Do not trust, [Do not trust (this session only)]. The session-only
/// ones are offered by the startup prompt, not by `/trust`.
pub fn trust_choices(cwd: &Path, session_only: bool) -> Vec<TrustChoice> {
    let here = canonical_folder(cwd);
    let save = |path: &Path, decision| TrustUpdate {
        path: path.to_path_buf(),
        decision,
    };
    let mut choices = vec![TrustChoice {
        label: "Trust".into(),
        trusted: true,
        updates: vec![save(&here, Some(true))],
        saved_path: Some(here.clone()),
    }];
    if let Some(parent) = here.parent() {
        choices.push(TrustChoice {
            label: format!("Trust parent folder ({})", parent.display()),
            trusted: true,
            updates: vec![save(parent, Some(true)), save(&here, None)],
            saved_path: Some(parent.to_path_buf()),
        });
    }
    let session_choice = |label: &str, trusted| TrustChoice {
        label: label.into(),
        trusted,
        updates: Vec::new(),
        saved_path: None,
    };
    if session_only {
        choices.push(session_choice("Trust (this session only)", true));
    }
    choices.push(TrustChoice {
        label: "Do not trust".into(),
        trusted: false,
        updates: vec![save(&here, Some(false))],
        saved_path: Some(here),
    });
    if session_only {
        choices.push(session_choice("Do not trust (this session only)", false));
    }
    choices
}

/// The startup prompt's question (pi's words).
pub fn trust_prompt_title(cwd: &Path) -> String {
    format!(
        "Trust project folder?\n{}\n\nThis allows pi to load {CONFIG_DIR_NAME} settings and resources, install missing project packages, and execute project extensions.",
        cwd.display()
    )
}

/// The warning the terminal UI shows in an untrusted project that has protected
/// resources (pi's words).
pub fn untrusted_project_warning() -> String {
    format!(
        "This project is not trusted. Project {CONFIG_DIR_NAME} resources and packages are ignored. Use /trust to save a trust decision, then restart pi."
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_bare_pi_folder_needs_no_decision_but_its_resources_do() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("proj");
        std::fs::create_dir_all(cwd.join(".pi/sessions")).unwrap();
        std::fs::write(cwd.join("AGENTS.md"), "x").unwrap();
        assert!(!has_protected_resources(&cwd));
        for entry in PROTECTED_CONFIG_ENTRIES {
            let path = cwd.join(".pi").join(entry);
            std::fs::create_dir_all(&path).unwrap();
            assert!(has_protected_resources(&cwd), "{entry}");
            std::fs::remove_dir(&path).unwrap();
        }
        std::fs::create_dir_all(dir.path().join(".agents/skills")).unwrap();
        assert!(has_protected_resources(&cwd.join(".pi")));
    }

    #[test]
    fn choices_follow_pis_order_and_updates() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = canonical_folder(dir.path());
        let labels: Vec<String> = trust_choices(&cwd, true)
            .into_iter()
            .map(|c| c.label)
            .collect();
        let parent = cwd.parent().unwrap().display().to_string();
        assert_eq!(
            labels,
            [
                "Trust".to_string(),
                format!("Trust parent folder ({parent})"),
                "Trust (this session only)".into(),
                "Do not trust".into(),
                "Do not trust (this session only)".into(),
            ]
        );
        let parent_choice = &trust_choices(&cwd, false)[1];
        assert_eq!(
            parent_choice.updates,
            [
                TrustUpdate {
                    path: PathBuf::from(&parent),
                    decision: Some(true)
                },
                TrustUpdate {
                    path: cwd,
                    decision: None
                }
            ]
        );
        assert_eq!(trust_choices(Path::new("/"), false).len(), 2);
    }

    #[test]
    fn default_project_trust_reads_like_pi() {
        assert_eq!(
            DefaultProjectTrust::parse(Some("always")),
            DefaultProjectTrust::Always
        );
        assert_eq!(
            DefaultProjectTrust::parse(Some("never")),
            DefaultProjectTrust::Never
        );
        for other in [Some("ask"), Some("sometimes"), None] {
            assert_eq!(DefaultProjectTrust::parse(other), DefaultProjectTrust::Ask);
        }
    }
}
