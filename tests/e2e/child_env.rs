//! No child of Butler sees Butler's or the tracker's secrets: repository hooks run by git
//! during `work_record`, `work_vcs` and `work_publish`, an agent, a verify command, and the
//! probes of `butler doctor` each write their whole environment to a file, while the server (or
//! `doctor`) runs with `BUTLER_GITEA_TOKEN`, `GITEA_TOKEN` and other `BUTLER_*` variables set.

// Test scaffolding plays the user's side of the world (git as a person runs it, chmod, kill,
// building a helper binary); Butler's own children go through `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

use crate::common::{BUTLER, StartBrain, World};
use butler_testkit::AUTHOR_NAME;
use butler_testkit::fake_agent::fake_agent;
use serde_json::json;

/// Set in Butler's environment; neither names nor values may reach a child.
const SECRETS: &[(&str, &str)] = &[
    ("BUTLER_GITEA_TOKEN", "tok-butler-gitea-4711"),
    ("GITEA_TOKEN", "tok-gitea-fallback-4712"),
    (
        "BUTLER_GITEA_URL",
        "https://tracker.invalid/tok-in-url-4713",
    ),
    ("BUTLER_PRIVATE_SETTING", "tok-butler-private-4714"),
    ("FORGEJO_TOKEN", "tok-forgejo-4715"),
];
/// The hooks `work_record`, `work_new_line` and `work_publish` make git run.
const HOOKS: &[&str] = &[
    "pre-commit",
    "commit-msg",
    "post-commit",
    "reference-transaction",
    "post-checkout",
    "pre-push",
];
/// Set in Butler's environment but on no allow-list: must not reach git or its hooks.
const UNLISTED: (&str, &str) = ("UNLISTED_BY_BUTLER", "unlisted-value-4716");

/// Installs `hooks` in the project; each writes its environment to `<dumps>/<hook>-<pid>.env`.
fn dumping_hooks(w: &World, dumps: &Path, hooks: &[&str]) {
    std::fs::create_dir_all(dumps).expect("dumps dir");
    for hook in hooks {
        let script = format!(
            "#!/bin/sh\nenv > '{}/{hook}-'$$'.env'\ncat > /dev/null\nexit 0\n",
            dumps.display()
        );
        butler_testkit::write_executable(&w.project.join(".git/hooks").join(hook), &script);
    }
}

/// Fails when any dumped environment carries a secret's name or value (or, for git's children,
/// the unlisted variable); returns the dumps read, by file name.
fn assert_clean(files: &[PathBuf], unlisted_too: bool) -> Vec<(String, String)> {
    let mut read = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("{}: {e} (did the child run?)", file.display()));
        assert!(
            text.contains("PATH="),
            "{}: not an env dump",
            file.display()
        );
        for line in text.lines() {
            let name = line.split('=').next().unwrap_or_default();
            assert!(
                !name.to_ascii_uppercase().starts_with("BUTLER_"),
                "{} sees {name}",
                file.display()
            );
        }
        for (name, value) in SECRETS {
            assert!(
                !text.contains(&format!("{name}=")),
                "{} sees {name}",
                file.display()
            );
            assert!(
                !text.contains(value),
                "{} sees the value of {name}",
                file.display()
            );
        }
        if unlisted_too {
            assert!(
                !text.contains(UNLISTED.1),
                "{} sees {}",
                file.display(),
                UNLISTED.0
            );
        }
        let name = file
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        read.push((name, text));
    }
    read
}

fn dumps_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("dumps dir")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    files
}

fn with_secrets(w: &mut World) {
    for (k, v) in SECRETS.iter().chain([&UNLISTED]) {
        w.env.push(((*k).to_owned(), (*v).to_owned()));
    }
}

#[tokio::test]
async fn hooks_git_runs_for_butler_never_see_its_secrets() {
    let mut w = World::published();
    with_secrets(&mut w);
    let dumps = w.tmp.path().join("dumps");
    dumping_hooks(&w, &dumps, HOOKS);
    let brain = w.session().await;
    w.write("a.txt", "a\n");
    let a = brain.call("work_record", json!({"message": "Add a"})).await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    let a = brain
        .call("work_new_line", json!({"name": "feature"}))
        .await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    let a = brain.call("work_publish", json!({})).await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);

    let read = assert_clean(&dumps_in(&dumps), true);
    for hook in HOOKS {
        let (_, text) = read
            .iter()
            .find(|(name, _)| name.starts_with(&format!("{hook}-")))
            .unwrap_or_else(|| panic!("{hook} did not run"));
        // What the server was given to make git hermetic still reaches git and its hooks.
        assert!(
            text.lines().any(|l| l == "GIT_CONFIG_GLOBAL=/dev/null"),
            "{hook}: {text}"
        );
        assert!(
            text.lines()
                .any(|l| l == format!("GIT_AUTHOR_NAME={AUTHOR_NAME}")),
            "{hook}: {text}"
        );
        let home = w.home();
        assert!(
            text.lines()
                .any(|l| l == format!("HOME={}", home.display())),
            "{hook}: {text}"
        );
    }
}

#[tokio::test]
async fn an_agent_and_a_verify_command_never_see_butlers_secrets() {
    let mut w = World::published();
    with_secrets(&mut w);
    let tmp = w.tmp.path().to_path_buf();
    let script = tmp.join("script.jsonl");
    let attempt = json!([
        {"do": "write", "path": "src/greet.rs", "text": "pub fn greet() {}\n"},
        {"do": "record_env", "path": tmp.join("agent-env.txt")},
        {"do": "sh", "cmd": format!("env > '{}'", tmp.join("agent-sh-env.txt").display())},
    ]);
    std::fs::write(&script, attempt.to_string()).expect("script");
    for (k, v) in [
        (
            "BUTLER_GOOSE_PROGRAM",
            fake_agent().to_string_lossy().into_owned(),
        ),
        ("BUTLER_GOOSE_PROVIDER", "openai".into()),
        ("BUTLER_GOOSE_MODEL", "fake".into()),
        // The dumps are written outside the task's worktree, which the sandbox refuses
        // (tests/e2e/sandbox.rs runs agents confined and checks their environment there too).
        ("BUTLER_SANDBOX", "off".into()),
        ("FAKE_AGENT_SCRIPT", script.to_string_lossy().into_owned()),
        // Even listed for the agent, Butler's secrets stay out.
        (
            "BUTLER_AGENT_ENV_ALLOW",
            "FAKE_AGENT_SCRIPT,BUTLER_GITEA_TOKEN,GITEA_TOKEN,BUTLER_*".into(),
        ),
    ] {
        w.env.push((k.to_owned(), v));
    }
    let brain = w.session().await;
    let verify_dump = tmp.join("verify-env.txt");
    let a = brain
        .call(
            "run_implement",
            json!({"goal": "Add greet()", "target_paths": ["src/"],
                   "test_commands": [format!("env > '{}'", verify_dump.display())]}),
        )
        .await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    assert_eq!(a.data()["outcome"], json!("succeeded"), "{}", a.envelope);
    let read = assert_clean(
        &[
            tmp.join("agent-env.txt"),
            tmp.join("agent-sh-env.txt"),
            verify_dump,
        ],
        true,
    );
    let agent = &read[0].1;
    assert!(agent.contains("FAKE_AGENT_SCRIPT="), "{agent}");
}

#[test]
fn doctors_probes_never_see_butlers_secrets() {
    let dir = tempfile::tempdir().expect("tempdir");
    let project = dir.path().join("project");
    let dumps = dir.path().join("dumps");
    std::fs::create_dir_all(project.join(".claude")).expect("mkdir");
    std::fs::create_dir_all(&dumps).expect("mkdir");
    // One stand-in for both the hook and the MCP server: it writes its environment and exits.
    let probe = dir.path().join("probe");
    butler_testkit::write_executable(
        &probe,
        format!(
            "#!/bin/sh\nenv > '{}/probe-'$$'.env'\n[ \"$1\" = mcp ] && exit 0\ncat > /dev/null\nexit 0\n",
            dumps.display()
        ),
    );
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": format!("'{}' git-hook", probe.display())}
    ]}]}});
    std::fs::write(project.join(".claude/settings.json"), settings.to_string()).expect("write");
    let mcp = json!({"mcpServers": {"butler": {"command": probe, "args": ["mcp"]}}});
    std::fs::write(project.join(".mcp.json"), mcp.to_string()).expect("write");

    let mut doctor = std::process::Command::new(BUTLER);
    doctor
        .args(["doctor", "--project"])
        .arg(&project)
        .env("HOME", dir.path());
    for (k, v) in SECRETS.iter().chain([&UNLISTED]) {
        doctor.env(k, v);
    }
    let out = doctor.output().expect("doctor runs");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("hook_configured"), "{report}");
    let files = dumps_in(&dumps);
    // Two hook canaries and the server probe.
    assert_eq!(files.len(), 3, "{report}\n{files:?}");
    let read = assert_clean(&files, true);
    let project_dir = project.canonicalize().expect("canonical");
    for (name, text) in &read {
        assert!(
            text.lines()
                .any(|l| l == format!("CLAUDE_PROJECT_DIR={}", project_dir.display())),
            "{name}: {text}"
        );
    }
}
