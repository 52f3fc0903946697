//! An extension's `exec` request runs in the folder its `cwd` names, resolved against the
//! session's working directory (docs/extensions.md, "Running programs: exec").

use pi::extensions::ActionKind;

use crate::support::extensions::{load, next_action, options, script};

/// A command extension that runs `pwd` with each `cwd` below and reports the answers
/// as `append_entry` actions.
const WHERE: &str = r#"#!/bin/sh
IFS= read -r hello
echo '{"type":"register","name":"where","commands":[{"name":"where"}]}'
while IFS= read -r line; do
    case "$line" in
    '{"type":"command",'*)
        cid=${line#*\"id\":}; cid=${cid%%,*}
        for dir in '"sub"' '"sub/../other/."' '"@ABS@"' 'null'; do
            echo "{\"type\":\"exec\",\"id\":\"x\",\"command\":\"pwd\",\"args\":[],\"cwd\":$dir}"
            IFS= read -r done
            result=${done#*\"result\":}; result=${result%\}}
            printf '{"type":"append_entry","customType":"pwd","data":%s}\n' "$result"
        done
        echo "{\"type\":\"response\",\"id\":$cid}"
        ;;
    esac
done
"#;

fn stdout_of(kind: &ActionKind) -> String {
    match kind {
        ActionKind::AppendEntry { data, .. } => {
            let stdout = data.as_ref().and_then(|d| d["stdout"].as_str());
            stdout.unwrap_or_default().trim_end().to_string()
        }
        other => panic!("expected append_entry, got {other:?}"),
    }
}

#[tokio::test]
async fn exec_runs_in_the_cwd_it_names_relative_to_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for sub in ["sub", "other", "elsewhere"] {
        std::fs::create_dir(root.join(sub)).unwrap();
    }
    let absolute = root.join("elsewhere");
    let text = WHERE.replace("@ABS@", &absolute.display().to_string());
    let ext = script(&root, "where", &text);
    let (host, mut channels) = load(&[ext], options(&root)).await;
    host.run_command("where", "").await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(stdout_of(&next_action(&mut channels).await.kind));
    }
    let expected: Vec<String> = [root.join("sub"), root.join("other"), absolute, root.clone()]
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(seen, expected);
}
