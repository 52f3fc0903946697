//! `pi install / remove (uninstall) / update / list / config`: pi's package commands,
//! recognised when they are the first argument, with pi's options, messages and exit
//! codes (`update` with pi 1.6's targets: pi itself by default, `--extensions`,
//! `--models`, `--all`; see `cli::update`). The work is
//! `core::packages::PackageManager`'s.

use std::io::IsTerminal;
use std::path::Path;

use crate::core::packages::{PackageManager, PackageScope, style};
use crate::core::settings::Settings;
use crate::core::trust::{ProjectTrust, TrustStore, decide_without_asking};

/// A package command and its options, as pi's `parsePackageCommand` reads them.
#[derive(Debug, Default, PartialEq, Eq)]
struct Parsed {
    command: &'static str,
    source: Option<String>,
    local: bool,
    help: bool,
    invalid_option: Option<String>,
    invalid_argument: Option<String>,
    missing_value: Option<String>,
    conflict: Option<&'static str>,
    /// `update`: packages (`None` source: all of them) and/or pi itself, or the model
    /// catalogs.
    update_packages: bool,
    update_self: bool,
    update_models: bool,
    /// A bare `pi update`: pi says the packages were skipped.
    extensions_skipped_note: bool,
    /// `update --force`.
    force: bool,
    /// `-a` / `--approve` (`true`), `-na` / `--no-approve` (`false`).
    trust: Option<bool>,
}

fn usage(command: &str) -> &'static str {
    match command {
        "install" => "pi install <source> [-l] [--approve|--no-approve]",
        "remove" => "pi remove <source> [-l] [--approve|--no-approve]",
        "update" => {
            "pi update [source|self|pi] [--self|--extensions|--models|--all] [--extension <source>] [--approve|--no-approve] [--force]"
        }
        _ => "pi list [--approve|--no-approve]",
    }
}

fn parse(args: &[String]) -> Option<Parsed> {
    let command = match args.first()?.as_str() {
        "install" => "install",
        "remove" | "uninstall" => "remove",
        "update" => "update",
        "list" => "list",
        _ => return None,
    };
    let mut p = Parsed {
        command,
        ..Parsed::default()
    };
    let (mut self_flag, mut extensions_flag, mut models_flag, mut all_flag) =
        (false, false, false, false);
    let mut extension_source: Option<String> = None;
    let rest = &args[1..];
    let mut i = 0;
    while i < rest.len() {
        let arg = rest[i].as_str();
        let allowed = |ok: bool, p: &mut Parsed| {
            if !ok && p.invalid_option.is_none() {
                p.invalid_option = Some(arg.to_string());
            }
            ok
        };
        match arg {
            "-h" | "--help" => p.help = true,
            "-a" | "--approve" => p.trust = Some(true),
            "-na" | "--no-approve" => p.trust = Some(false),
            "-l" | "--local" => {
                if allowed(command == "install" || command == "remove", &mut p) {
                    p.local = true;
                }
            }
            "--self" => self_flag |= allowed(command == "update", &mut p),
            "--extensions" => extensions_flag |= allowed(command == "update", &mut p),
            "--models" => models_flag |= allowed(command == "update", &mut p),
            "--all" => all_flag |= allowed(command == "update", &mut p),
            "--force" => p.force |= allowed(command == "update", &mut p),
            "--extension" => {
                if allowed(command == "update", &mut p) {
                    match rest.get(i + 1) {
                        Some(v) if !v.starts_with('-') => {
                            if extension_source.is_some() {
                                p.conflict
                                    .get_or_insert("--extension can only be provided once");
                            } else {
                                extension_source = Some(v.clone());
                            }
                            i += 1;
                        }
                        _ => {
                            p.missing_value.get_or_insert_with(|| arg.to_string());
                        }
                    }
                }
            }
            _ if arg.starts_with('-') => {
                p.invalid_option.get_or_insert_with(|| arg.to_string());
            }
            _ if p.source.is_none() => p.source = Some(arg.to_string()),
            _ => {
                p.invalid_argument.get_or_insert_with(|| arg.to_string());
            }
        }
        i += 1;
    }
    if command == "update" {
        update_targets(
            &mut p,
            (self_flag, extensions_flag, models_flag, all_flag),
            extension_source,
        );
    }
    Some(p)
}

/// pi 1.6's choice of what `pi update` updates, and its conflicts.
fn update_targets(
    p: &mut Parsed,
    (self_flag, extensions_flag, models_flag, all_flag): (bool, bool, bool, bool),
    extension_source: Option<String>,
) {
    let positional = p.source.clone();
    if all_flag && (self_flag || extensions_flag || models_flag || extension_source.is_some()) {
        p.conflict.get_or_insert(
            "--all cannot be combined with --self, --extensions, --models, or --extension",
        );
    }
    if all_flag && positional.is_some() {
        p.conflict
            .get_or_insert("--all cannot be combined with a positional source");
    }
    if models_flag {
        if self_flag || extensions_flag || all_flag || extension_source.is_some() {
            p.conflict.get_or_insert(
                "--models cannot be combined with --self, --extensions, --all, or --extension",
            );
        }
        if positional.is_some() {
            p.conflict
                .get_or_insert("--models cannot be combined with a positional source");
        }
        p.update_models = true;
    } else if let Some(source) = extension_source {
        if self_flag || extensions_flag || all_flag {
            p.conflict.get_or_insert(
                "--extension cannot be combined with --self, --extensions, or --all",
            );
        }
        if positional.is_some() {
            p.conflict
                .get_or_insert("--extension cannot be combined with a positional source");
        }
        p.source = Some(source);
        p.update_packages = true;
    } else if let Some(source) = positional {
        if source == "self" || source == "pi" {
            p.source = None;
            p.update_self = true;
            p.update_packages = extensions_flag;
        } else {
            if extensions_flag || self_flag || all_flag {
                p.conflict.get_or_insert(
                    "positional update targets cannot be combined with --self, --extensions, or --all",
                );
            }
            p.update_packages = true;
        }
    } else if all_flag || (self_flag && extensions_flag) {
        p.update_self = true;
        p.update_packages = true;
    } else if extensions_flag {
        p.update_packages = true;
    } else {
        p.update_self = true;
        p.extensions_skipped_note = !self_flag;
    }
}

fn help_text(command: &str) -> String {
    let usage_line = format!("{}\n  {}\n", style("Usage:", "1"), usage(command));
    let body = match command {
        "install" => {
            "
Install a package and add it to settings.

Options:
  -l, --local       Install project-locally (.pi/settings.json)
  -a, --approve     Trust project-local files for this command
  -na, --no-approve Ignore project-local files for this command

Examples:
  pi install npm:@foo/bar
  pi install git:github.com/user/repo
  pi install git:git@github.com:user/repo
  pi install https://github.com/user/repo
  pi install ssh://git@github.com/user/repo
  pi install ./local/path
"
        }
        "remove" => {
            "
Remove a package and its source from settings.
Alias: pi uninstall <source> [-l]

Options:
  -l, --local       Remove from project settings (.pi/settings.json)
  -a, --approve     Trust project-local files for this command
  -na, --no-approve Ignore project-local files for this command

Examples:
  pi remove npm:@foo/bar
  pi uninstall npm:@foo/bar
"
        }
        "update" => {
            "
Update pi, installed packages, or model catalogs.

Options:
  --self                  Update pi only (default when no target is given)
  --extensions            Update installed packages only
  --models                Refresh model catalogs only
  --all                   Update pi and installed packages
  --extension <source>    Update one package only
  -a, --approve           Trust project-local files for this command
  -na, --no-approve       Ignore project-local files for this command
  --force                 Reinstall pi even if the current version is latest

Short forms:
  pi update                Update pi only
  pi update --all          Update pi and all extensions
  pi update --models       Refresh model catalogs only
  pi update <source>       Update one package
  pi update pi             Update pi only (self works as alias to pi)
"
        }
        _ => {
            "
List installed packages from user and project settings.

Options:
  -a, --approve      Trust project-local files for this command
  -na, --no-approve  Ignore project-local files for this command
"
        }
    };
    format!("{usage_line}{body}")
}

fn config_help() -> String {
    format!(
        "{}
  pi config [-l] [--approve|--no-approve]

Open the resource configuration TUI to enable or disable package resources.
Without -l, starts in global settings (~/.pi/agent/settings.json).
The Built-in group switches pi 1.6's built-in extensions (pi-rs has them in a later version).

Options:
  -l, --local       Edit project overrides (.pi/settings.json)
  -a, --approve     Trust project-local files for this command with -l
  -na, --no-approve Ignore project-local files for this command with -l
",
        style("Usage:", "1")
    )
}

fn red(text: &str) -> String {
    colored_err(text, "31")
}

fn dim_err(text: &str) -> String {
    colored_err(text, "2")
}

fn colored_err(text: &str, sgr: &str) -> String {
    if std::io::stderr().is_terminal() {
        format!("\x1b[{sgr}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

fn green(text: &str) -> String {
    style(text, "32")
}

/// Prints a usage error and returns exit code 1.
fn usage_error(message: &str, hint: &str) -> u8 {
    eprintln!("{}", red(message));
    eprintln!("{}", dim_err(hint));
    1
}

/// Runs `args` if it is a package command (`install`, `remove`, `uninstall`, `update`,
/// `list` first) and returns its exit code; `None` for any other command line.
pub fn run_package_command(args: &[String], cwd: &Path, agent_dir: &Path) -> Option<u8> {
    let p = parse(args)?;
    let command = p.command;
    if p.help {
        // pi's help text ends in a blank line.
        println!("{}", help_text(command));
        return Some(0);
    }
    if let Some(option) = &p.invalid_option {
        return Some(usage_error(
            &format!("Unknown option {option} for \"{command}\"."),
            &format!("Use \"pi --help\" or \"{}\".", usage(command)),
        ));
    }
    if let Some(option) = &p.missing_value {
        return Some(usage_error(
            &format!("Missing value for {option}."),
            &format!("Usage: {}", usage(command)),
        ));
    }
    if let Some(argument) = &p.invalid_argument {
        return Some(usage_error(
            &format!("Unexpected argument {argument}."),
            &format!("Usage: {}", usage(command)),
        ));
    }
    if let Some(conflict) = p.conflict {
        return Some(usage_error(conflict, &format!("Usage: {}", usage(command))));
    }
    if (command == "install" || command == "remove") && p.source.is_none() {
        return Some(usage_error(
            &format!("Missing {command} source."),
            &format!("Usage: {}", usage(command)),
        ));
    }
    let settings = command_settings(cwd, agent_dir, p.trust, command == "update");
    if !settings.project_trust().is_trusted()
        && p.local
        && (command == "install" || command == "remove")
    {
        eprintln!(
            "{}",
            red("Project is not trusted. Use --approve to modify local package config.")
        );
        return Some(1);
    }
    for problem in settings.problems() {
        eprintln!(
            "{}",
            colored_err(&format!("Warning (package command): {problem}"), "33")
        );
    }
    let manager = PackageManager::new(cwd, agent_dir, &settings).with_terminal_output();
    Some(match execute(&manager, &p) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("{}", red(&format!("Error: {message}")));
            1
        }
    })
}

fn execute(manager: &PackageManager, p: &Parsed) -> Result<u8, String> {
    let source = p.source.as_deref().unwrap_or_default();
    match p.command {
        "install" => {
            manager
                .install_and_persist(source, p.local)
                .map_err(|e| e.to_string())?;
            println!("{}", green(&format!("Installed {source}")));
        }
        "remove" => {
            if !manager
                .remove_and_persist(source, p.local)
                .map_err(|e| e.to_string())?
            {
                eprintln!(
                    "{}",
                    red(&format!("No matching package found for {source}"))
                );
                return Ok(1);
            }
            println!("{}", green(&format!("Removed {source}")));
        }
        "list" => list(manager)?,
        _ => return crate::cli::update::run(manager, &p.update_request()),
    }
    Ok(0)
}

impl Parsed {
    fn update_request(&self) -> crate::cli::update::UpdateRequest {
        crate::cli::update::UpdateRequest {
            source: self.source.clone(),
            packages: self.update_packages,
            pi_itself: self.update_self,
            models: self.update_models,
            extensions_skipped_note: self.extensions_skipped_note,
            force: self.force,
        }
    }
}

fn list(manager: &PackageManager) -> Result<(), String> {
    let packages = manager.list_configured().map_err(|e| e.to_string())?;
    if packages.is_empty() {
        println!("{}", style("No packages installed.", "2"));
        return Ok(());
    }
    let mut first = true;
    for (scope, title) in [
        (PackageScope::User, "User packages:"),
        (PackageScope::Project, "Project packages:"),
    ] {
        let of_scope: Vec<_> = packages.iter().filter(|p| p.scope == scope).collect();
        if of_scope.is_empty() {
            continue;
        }
        if !first {
            println!();
        }
        first = false;
        println!("{}", style(title, "1"));
        for pkg in of_scope {
            if pkg.filtered {
                println!("  {} (filtered)", pkg.source);
            } else {
                println!("  {}", pkg.source);
            }
            if let Some(path) = &pkg.installed_path {
                println!("{}", style(&format!("    {}", path.display()), "2"));
            }
        }
    }
    Ok(())
}

/// `pi config`: pi's full-screen list for switching the resources of the settings'
/// folders and entries and of the configured packages on and off; each switch is written
/// to settings.json at once. Exits 0 when closed, 1 when the resources cannot be listed or
/// a settings file cannot be written.
pub fn run_config_command(args: &[String], cwd: &Path, agent_dir: &Path) -> Option<u8> {
    if args.first().map(String::as_str) != Some("config") {
        return None;
    }
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{}", config_help());
        return Some(0);
    }
    let mut trust = None;
    let mut local = false;
    for arg in &args[1..] {
        match arg.as_str() {
            "-a" | "--approve" => trust = Some(true),
            "-na" | "--no-approve" => trust = Some(false),
            "-l" | "--local" => local = true,
            _ => {}
        }
    }
    let settings = command_settings(cwd, agent_dir, trust, false);
    if local && !settings.project_trust().is_trusted() {
        eprintln!(
            "{}",
            red("Project is not trusted. Use --approve to modify local resource config.")
        );
        return Some(1);
    }
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        eprintln!(
            "{}",
            red("Error: pi config needs an interactive terminal (stdin and stdout)")
        );
        return Some(1);
    }
    for problem in settings.problems() {
        eprintln!(
            "{}",
            colored_err(&format!("Warning (config command): {problem}"), "33")
        );
    }
    let manager = PackageManager::new(cwd, agent_dir, &settings).with_terminal_output();
    let listed = crate::core::packages::config::list_resources(&manager, &settings, cwd, agent_dir);
    let (resources, warnings) = match listed {
        Ok(found) => found,
        Err(e) => {
            eprintln!("{}", red(&format!("Error: {e}")));
            return Some(1);
        }
    };
    for warning in warnings {
        eprintln!("{}", colored_err(&format!("Warning: {warning}"), "33"));
    }
    let theme = crate::modes::interactive::config_screen::theme_for(&settings, cwd, agent_dir);
    let apply = |resource: &crate::core::packages::config::ConfigResource, enabled: bool| {
        crate::core::packages::config::apply_toggle(&manager, resource, enabled, cwd, agent_dir)
            .map_err(|e| e.to_string())
    };
    Some(
        match crate::modes::interactive::config_screen::run(resources, theme, agent_dir, apply) {
            Ok(()) => 0,
            Err(message) => {
                eprintln!("{}", red(&format!("Error: {message}")));
                1
            }
        },
    )
}

/// The settings of a package command: the project's only when it is trusted by the
/// flag or a saved decision (or `defaultProjectTrust: "always"`); package commands never
/// ask (see [`decide_without_asking`]).
fn command_settings(
    cwd: &Path,
    agent_dir: &Path,
    flag: Option<bool>,
    saved_only: bool,
) -> Settings {
    let global = Settings::load(agent_dir, cwd, ProjectTrust::Untrusted);
    let store = TrustStore::new(agent_dir);
    let (trust, problem) = decide_without_asking(
        cwd,
        &store,
        flag,
        global.default_project_trust(),
        saved_only,
    );
    if let Some(problem) = problem {
        eprintln!("{}", colored_err(&format!("Warning: {problem}"), "33"));
    }
    if trust.is_trusted() {
        Settings::load(agent_dir, cwd, trust)
    } else {
        global
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(args: &[&str]) -> Parsed {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        parse(&args).unwrap()
    }

    #[test]
    fn options_and_errors_as_pi() {
        let p = parsed(&["uninstall", "npm:x", "-l"]);
        assert_eq!(
            (p.command, p.local, p.source.as_deref()),
            ("remove", true, Some("npm:x"))
        );
        assert_eq!(
            parsed(&["list", "-l"]).invalid_option.as_deref(),
            Some("-l")
        );
        assert_eq!(
            parsed(&["install", "a", "b"]).invalid_argument.as_deref(),
            Some("b")
        );
        assert_eq!(
            parsed(&["update", "--extension"]).missing_value.as_deref(),
            Some("--extension")
        );
        assert!(parsed(&["update", "x", "--self"]).conflict.is_some());
        assert!(parse(&["chat".to_string()]).is_none());
    }

    #[test]
    fn update_targets_of_pi_1_6() {
        let bare = parsed(&["update"]);
        assert!(!bare.update_packages && bare.update_self && bare.extensions_skipped_note);
        let all = parsed(&["update", "--all"]);
        assert!(all.update_packages && all.update_self && !all.extensions_skipped_note);
        let models = parsed(&["update", "--models"]);
        assert!(models.update_models && !models.update_self && !models.update_packages);
        assert_eq!(
            parsed(&["update", "--models", "--all"]).conflict,
            Some("--all cannot be combined with --self, --extensions, --models, or --extension")
        );
        assert_eq!(
            parsed(&["update", "x", "--models"]).conflict,
            Some("--models cannot be combined with a positional source")
        );
        let ext = parsed(&["update", "--extensions"]);
        assert!(ext.update_packages && !ext.update_self);
        let me = parsed(&["update", "pi"]);
        assert!(!me.update_packages && me.update_self && me.source.is_none());
        let one = parsed(&["update", "--extension", "npm:x"]);
        assert!(one.update_packages && !one.update_self);
        assert_eq!(one.source.as_deref(), Some("npm:x"));
    }
}
