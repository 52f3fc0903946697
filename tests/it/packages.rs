//! pi packages end to end, with the user's `npm` and `git` and no network: a fixture
//! package built in a temp folder is served as a local git repository (git's `insteadOf`
//! maps `https://git.example.test/` to a `file://` folder) and as an `npm pack` tarball
//! (`npm:<name>@file:<tarball>`, npm offline). `pi install / list / remove / update`,
//! the `packages` setting with filters, `-e git:…`, the resources reaching the model,
//! the errors, and reference pi's `list` on a home pi-rs set up.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support::extensions::script;
use crate::support::pi_project::{Project, conversation, succeeded, system_prompt, tool_names};
use crate::support::reference_pi;

/// An extension program (pi-rs protocol) registering the tool `pkgtool`.
const TOOL_EXTENSION: &str = r#"#!/bin/sh
IFS= read -r hello || exit 0
printf '%s\n' '{"type":"register","name":"pkgtool","events":[],"tools":[{"name":"pkgtool","label":"pkgtool","description":"The package tool","parameters":{"type":"object","properties":{}}}]}'
while IFS= read -r line; do
    id=${line#*\"id\":}
    id=${id%%,*}
    case "$line" in
    '{"type":"event","id":'*) printf '{"type":"response","id":%s}\n' "$id" ;;
    esac
done
"#;

/// A temp world: the project, a package source folder, the git "server" folder, npm's
/// global prefix and temp folder, all under the project's temp dir.
struct World {
    p: Project,
}

impl World {
    fn new(script: Value) -> World {
        World {
            p: Project::new(script),
        }
    }

    fn root(&self) -> &Path {
        self.p.dir.path()
    }

    fn prefix(&self) -> PathBuf {
        self.root().join("npm-prefix")
    }

    /// pi-rs (or reference pi, `program`) with the world's environment and no arguments.
    fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(self.p.cwd())
            .env("HOME", self.root().join("home"))
            .env("TMPDIR", self.root().join("tmp"))
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("PI_OFFLINE")
            .env("npm_config_prefix", self.prefix())
            .env("npm_config_cache", self.root().join("npm-cache"))
            .env("npm_config_offline", "true")
            .env("npm_config_update_notifier", "false")
            .env("npm_config_audit", "false")
            .env("npm_config_fund", "false")
            .env("GIT_CONFIG_COUNT", "3")
            .env(
                "GIT_CONFIG_KEY_0",
                format!("url.file://{}/.insteadOf", self.repos().display()),
            )
            .env("GIT_CONFIG_VALUE_0", "https://git.example.test/")
            .env("GIT_CONFIG_KEY_1", "advice.detachedHead")
            .env("GIT_CONFIG_VALUE_1", "false")
            .env("GIT_CONFIG_KEY_2", "protocol.file.allow")
            .env("GIT_CONFIG_VALUE_2", "always")
            .stdin(Stdio::null());
        std::fs::create_dir_all(self.root().join("tmp")).unwrap();
        cmd
    }

    fn pi(&self, args: &[&str]) -> Output {
        self.command(Path::new(env!("CARGO_BIN_EXE_pi")))
            .args(args)
            .output()
            .unwrap()
    }

    /// A session run on the mock model (not offline unless asked).
    fn prompt(&self, args: &[&str]) -> Output {
        self.command(Path::new(env!("CARGO_BIN_EXE_pi")))
            .args([
                "--provider",
                "mock",
                "--model",
                "mock-model",
                "--no-session",
            ])
            .args(args)
            .output()
            .unwrap()
    }

    fn repos(&self) -> PathBuf {
        self.root().join("repos")
    }

    fn text(&self, out: &Output) -> String {
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        self.p.anonymize(&text)
    }

    fn settings(&self, path: PathBuf) -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The fixture package `name` in `dir`: a manifest naming an extension program, a skill
/// folder and a prompt folder (plus a theme).
fn fixture_package(dir: &Path, name: &str) {
    write(
        &dir.join("package.json"),
        &json!({
            "name": name, "version": "1.0.0", "keywords": ["pi-package"],
            "pi": {"extensions": ["bin/pkgtool"], "skills": ["skills"], "prompts": ["prompts"], "themes": ["themes"]}
        })
        .to_string(),
    );
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    script(&dir.join("bin"), "pkgtool", TOOL_EXTENSION);
    write(
        &dir.join("skills/pkg-skill/SKILL.md"),
        "---\nname: pkg-skill\ndescription: A skill from a package\n---\nDo it.\n",
    );
    write(
        &dir.join("prompts/pkgreview.md"),
        "---\ndescription: Review from a package\n---\nPlease review $1 carefully.\n",
    );
    write(&dir.join("themes/pkgtheme.json"), "{}");
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.email=t@example.test", "-c", "user.name=t"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// `repos/user/gitpkg`, a git repository holding the fixture package, tagged `v1`.
fn git_repo(w: &World) -> PathBuf {
    let repo = w.repos().join("user/gitpkg");
    fixture_package(&repo, "gitpkg");
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "one"]);
    git(&repo, &["tag", "v1"]);
    repo
}

/// `npm pack` of the fixture package `npmpkg`; returns the tarball.
fn npm_tarball(w: &World) -> PathBuf {
    let src = w.root().join("src/npmpkg");
    fixture_package(&src, "npmpkg");
    let out = Command::new("npm")
        .current_dir(w.root())
        .args(["pack", "--silent", "./src/npmpkg"])
        .env("npm_config_cache", w.root().join("npm-cache"))
        .env("npm_config_update_notifier", "false")
        .output()
        .unwrap();
    assert!(out.status.success(), "npm pack: {out:?}");
    w.root().join("npmpkg-1.0.0.tgz")
}

fn have_tools() -> bool {
    crate::support::extensions::have("git") && crate::support::extensions::have("npm")
}

#[test]
fn install_list_remove_with_git_npm_and_a_path_as_pi() {
    if !have_tools() {
        eprintln!("skipping: git and npm are needed");
        return;
    }
    let w = World::new(json!({"default": {"text": "ok"}}));
    git_repo(&w);
    let tarball = npm_tarball(&w);
    let local = w.p.cwd().join("localpkg");
    fixture_package(&local, "localpkg");

    let out = w.pi(&["install", "git:git.example.test/user/gitpkg"]);
    let text = succeeded(&out);
    assert!(
        text.starts_with("Installing git:git.example.test/user/gitpkg...\n"),
        "{text}"
    );
    assert!(
        text.ends_with("Installed git:git.example.test/user/gitpkg\n"),
        "{text}"
    );
    let checkout = w.p.agent_dir().join("git/git.example.test/user/gitpkg");
    assert!(checkout.join("bin/pkgtool").is_file());
    assert_eq!(
        std::fs::read_to_string(w.p.agent_dir().join("git/.gitignore")).unwrap(),
        "*\n!.gitignore\n"
    );

    let npm_source = format!("npm:npmpkg@file:{}", tarball.display());
    succeeded(&w.pi(&["install", &npm_source, "-l"]));
    assert!(
        w.p.cwd()
            .join(".pi/npm/node_modules/npmpkg/bin/pkgtool")
            .is_file()
    );
    succeeded(&w.pi(&["install", "./localpkg"]));
    // Installing again adds nothing.
    succeeded(&w.pi(&["install", "git:git.example.test/user/gitpkg@v1"]));

    assert_eq!(
        w.settings(w.p.agent_dir().join("settings.json")),
        json!({"packages": ["git:git.example.test/user/gitpkg", "../../../proj/localpkg"]})
    );
    assert_eq!(
        w.settings(w.p.cwd().join(".pi/settings.json")),
        json!({"packages": [npm_source]})
    );

    let list = w.pi(&["list"]);
    insta::assert_snapshot!(w.p.anonymize(&succeeded(&list)), @r"
    User packages:
      git:git.example.test/user/gitpkg
        <tmp>/home/.pi/agent/git/git.example.test/user/gitpkg
      ../../../proj/localpkg
        <tmp>/proj/localpkg

    Project packages:
      npm:npmpkg@file:<tmp>/npmpkg-1.0.0.tgz
        <tmp>/proj/.pi/npm/node_modules/npmpkg
    ");

    // Reference pi reads the same settings and finds the same installs.
    match reference_pi::available() {
        Err(why) => eprintln!("skipping the reference comparison: {why}"),
        Ok(()) => {
            let theirs = w
                .command(&reference_pi::script())
                .arg("list")
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&theirs.stdout),
                String::from_utf8_lossy(&list.stdout),
                "reference pi: {}",
                String::from_utf8_lossy(&theirs.stderr)
            );
            // Help texts and usage errors are pi 1.6's: install, remove and list are
            // checked in `project_trust`, update in `cli_flags`, against pi 1.6.
        }
    }

    let out = w.pi(&["remove", "git:git.example.test/user/gitpkg"]);
    assert_eq!(
        succeeded(&out),
        "Removing git:git.example.test/user/gitpkg...\nRemoved git:git.example.test/user/gitpkg\n"
    );
    assert!(!w.p.agent_dir().join("git/git.example.test").exists());
    succeeded(&w.pi(&["uninstall", "npm:npmpkg", "-l"]));
    assert_eq!(
        w.settings(w.p.cwd().join(".pi/settings.json")),
        json!({"packages": []})
    );
    assert!(!w.p.cwd().join(".pi/npm/node_modules/npmpkg").exists());

    let out = w.pi(&["remove", "npm:nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        w.text(&out)
            .ends_with("No matching package found for npm:nope\n")
    );
    let out = w.pi(&["list"]);
    assert_eq!(
        w.p.anonymize(&succeeded(&out)),
        "User packages:\n  ../../../proj/localpkg\n    <tmp>/proj/localpkg\n"
    );
}

#[test]
fn package_resources_reach_the_model_and_filters_narrow_them() {
    if !have_tools() {
        eprintln!("skipping: git and npm are needed");
        return;
    }
    let w = World::new(json!({"default": {"text": "ok"}}));
    git_repo(&w);
    succeeded(&w.pi(&["install", "git:git.example.test/user/gitpkg"]));

    let out = w.prompt(&["--offline", "-p", "/pkgreview main.rs"]);
    assert_eq!(succeeded(&out), "ok\n");
    let requests = w.p.requests();
    assert_eq!(
        tool_names(&requests[0]),
        ["read", "bash", "edit", "write", "pkgtool"]
    );
    assert!(system_prompt(&requests[0]).contains("<name>pkg-skill</name>"));
    assert_eq!(
        conversation(&requests[0]),
        "user: Please review main.rs carefully."
    );

    // The object form: no skills, no extensions from this package.
    write(
        &w.p.agent_dir().join("settings.json"),
        &json!({"packages": [{"source": "git:git.example.test/user/gitpkg", "skills": [], "extensions": []}]})
            .to_string(),
    );
    succeeded(&w.prompt(&["--offline", "-p", "/pkgreview lib.rs"]));
    let last = w.p.requests().pop().unwrap();
    assert_eq!(tool_names(&last), ["read", "bash", "edit", "write"]);
    assert!(!system_prompt(&last).contains("pkg-skill"));
    assert_eq!(conversation(&last), "user: Please review lib.rs carefully.");
}

#[test]
fn missing_packages_install_at_startup_and_failures_stop_it() {
    if !have_tools() {
        eprintln!("skipping: git and npm are needed");
        return;
    }
    let w = World::new(json!({"default": {"text": "ok"}}));
    git_repo(&w);
    // A project shares its settings; the package is installed on first start (as pi).
    write(
        &w.p.cwd().join(".pi/settings.json"),
        &json!({"packages": ["git:git.example.test/user/gitpkg"]}).to_string(),
    );
    let out = w.prompt(&["--offline", "-p", "hi"]);
    assert_eq!(out.status.code(), Some(0));
    let text = w.text(&out);
    assert!(
        text.contains("Package git:git.example.test/user/gitpkg is not installed"),
        "{text}"
    );
    assert!(
        w.p.requests()
            .iter()
            .all(|r| !tool_names(r).contains(&"pkgtool".to_string()))
    );

    succeeded(&w.prompt(&["-p", "hi"]));
    assert!(
        w.p.cwd()
            .join(".pi/git/git.example.test/user/gitpkg/bin/pkgtool")
            .is_file()
    );
    let last = w.p.requests().pop().unwrap();
    assert!(tool_names(&last).contains(&"pkgtool".to_string()));

    write(
        &w.p.agent_dir().join("settings.json"),
        &json!({"packages": ["git:git.example.test/user/nope"]}).to_string(),
    );
    let out = w.prompt(&["-p", "hi"]);
    assert_eq!(out.status.code(), Some(1));
    let text = w.text(&out);
    assert!(
        text.contains("Failed to install package git:git.example.test/user/nope: git clone https://git.example.test/user/nope"),
        "{text}"
    );
    assert!(text.contains("failed with code 128"), "{text}");

    let out = w.pi(&["install", "git:git.example.test/user/nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        w.text(&out)
            .contains("Error: git clone https://git.example.test/user/nope")
    );
    let out = w.pi(&["install", "./not-here"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        w.text(&out)
            .ends_with("Error: Path does not exist: <tmp>/proj/not-here\n")
    );
    let out = w.pi(&["install"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        w.text(&out),
        "Missing install source.\nUsage: pi install <source> [-l] [--approve|--no-approve]\n"
    );

    // A settings file that does not parse is reported and never overwritten.
    let settings = w.p.agent_dir().join("settings.json");
    std::fs::write(&settings, "{oops").unwrap();
    std::fs::create_dir_all(w.p.cwd().join("pkgdir")).unwrap();
    let out = w.pi(&["install", "./pkgdir"]);
    assert_eq!(out.status.code(), Some(1));
    let text = w.text(&out);
    assert!(
        text.contains(
            "Error: settings file <tmp>/home/.pi/agent/settings.json: it is not valid JSON"
        ),
        "{text}"
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{oops");
}

#[test]
fn extension_flag_installs_git_packages_for_one_run_and_update_pulls() {
    if !have_tools() {
        eprintln!("skipping: git and npm are needed");
        return;
    }
    let w = World::new(json!({"default": {"text": "ok"}}));
    let repo = git_repo(&w);
    succeeded(&w.prompt(&[
        "-e",
        "git:git.example.test/user/gitpkg",
        "-p",
        "/pkgreview a",
    ]));
    let first = w.p.requests().pop().unwrap();
    assert!(tool_names(&first).contains(&"pkgtool".to_string()));
    assert_eq!(conversation(&first), "user: Please review a carefully.");
    // Nothing was written to the settings; the checkout is in the temp folder.
    assert!(!w.p.agent_dir().join("settings.json").exists());
    // pi 1.6's folder for them, in the agent folder (not $TMPDIR).
    let tmp = w.p.agent_dir().join("tmp/extensions");
    assert!(tmp.read_dir().unwrap().next().is_some());

    // The same for an npm package (`npm install <spec> --prefix <temp>`).
    let tarball = npm_tarball(&w);
    let npm_source = format!("npm:npmpkg@file:{}", tarball.display());
    succeeded(&w.prompt(&["-e", &npm_source, "-p", "/pkgreview b"]));
    let npm_run = w.p.requests().pop().unwrap();
    assert_eq!(conversation(&npm_run), "user: Please review b carefully.");
    assert!(system_prompt(&npm_run).contains("<name>pkg-skill</name>"));
    assert!(
        tmp.join("npm/f35b2129/node_modules/npmpkg/package.json")
            .is_file()
    );
    assert!(!w.p.agent_dir().join("settings.json").exists());

    // `pi update` fetches new commits of an unpinned checkout.
    succeeded(&w.pi(&["install", "git:git.example.test/user/gitpkg"]));
    write(&repo.join("prompts/pkgreview.md"), "Now review $1 twice.\n");
    git(&repo, &["commit", "-qam", "two"]);
    let out = w.pi(&["update", "--extensions"]);
    let text = succeeded(&out);
    // git's own output comes in between, as in pi.
    assert!(
        text.starts_with("Updating git:git.example.test/user/gitpkg...\n"),
        "{text}"
    );
    assert!(text.contains("HEAD is now at"), "{text}");
    assert!(text.ends_with("Updated packages\n"), "{text}");
    let checkout = w.p.agent_dir().join("git/git.example.test/user/gitpkg");
    assert_eq!(
        std::fs::read_to_string(checkout.join("prompts/pkgreview.md")).unwrap(),
        "Now review $1 twice.\n"
    );
    let out = w.pi(&["update", "git.example.test/user/gitpkg"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(w.text(&out).ends_with(
        "Error: No matching package found for git.example.test/user/gitpkg. Did you mean git:git.example.test/user/gitpkg?\n"
    ));
}

/// `pi install npm:…` (user scope) puts the package where pi 1.6 does,
/// `~/.pi/agent/npm/node_modules/<name>` (not npm's global folder), its resources reach
/// the model, pi 1.6's `list` finds it at the same place, and `remove` takes it away.
#[test]
fn user_npm_packages_live_in_the_agent_folder_as_in_pi_1_6() {
    if !have_tools() {
        eprintln!("skipping: git and npm are needed");
        return;
    }
    let w = World::new(json!({"default": {"text": "ok"}}));
    let tarball = npm_tarball(&w);
    let source = format!("npm:npmpkg@file:{}", tarball.display());
    succeeded(&w.pi(&["install", &source]));
    let installed = w.p.agent_dir().join("npm/node_modules/npmpkg");
    assert!(installed.join("bin/pkgtool").is_file());
    assert!(!w.prefix().join("lib/node_modules/npmpkg").exists());
    assert_eq!(
        std::fs::read_to_string(w.p.agent_dir().join("npm/.gitignore")).unwrap(),
        "*\n!.gitignore\n"
    );
    assert_eq!(
        w.settings(w.p.agent_dir().join("npm/package.json"))["name"],
        "pi-extensions"
    );
    let list = w.pi(&["list"]);
    assert_eq!(
        w.p.anonymize(&succeeded(&list)),
        "User packages:\n  npm:npmpkg@file:<tmp>/npmpkg-1.0.0.tgz\n    <tmp>/home/.pi/agent/npm/node_modules/npmpkg\n"
    );
    match reference_pi::available() {
        Err(why) => eprintln!("skipping the reference comparison: {why}"),
        Ok(()) => {
            let theirs = w
                .command(&reference_pi::script())
                .arg("list")
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&theirs.stdout),
                String::from_utf8_lossy(&list.stdout),
                "reference pi: {}",
                String::from_utf8_lossy(&theirs.stderr)
            );
        }
    }

    // The package in the agent folder gives its prompt template.
    let out = w.prompt(&["-p", "/pkgreview main.rs"]);
    assert_eq!(succeeded(&out), "ok\n");
    assert_eq!(
        conversation(&w.p.requests()[0]),
        "user: Please review main.rs carefully."
    );

    succeeded(&w.pi(&["remove", "npm:npmpkg"]));
    assert!(!installed.exists());
    assert_eq!(
        w.settings(w.p.agent_dir().join("settings.json")),
        json!({"packages": []})
    );
}
