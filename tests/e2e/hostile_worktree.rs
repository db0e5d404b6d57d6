//! The worktree is hostile data, end to end: through the real `butler implement` (the real
//! sandbox on this machine's kernel, real git) and the real `butler mcp` accepting the task, a
//! scripted agent leaves everything that could make Butler's own git run its programs — a
//! repository nested in its worktree with a filter, a diff driver, `textconv`, a merge driver,
//! fsmonitor and hooks, a `.gitattributes` naming them, the worktree's `.git` pointer aimed at a
//! repository of its making (a verify command does the same) — and takes the permissions off
//! Butler's state (`.git/objects`, `.git/config`, the ledger), the Brain's files and its own
//! worktree; a process it leaves behind keeps aiming the `.git` pointer at its repository while
//! the Maid works; without the sandbox it also plants such a repository in the Brain's tree.
//! Every program of the agent's leaves a marker in a directory the sandbox forbids:
//! none may appear. Nothing of the user's may change, the nested repository is never recorded,
//! the evidence says what happened, and the next calls work. The same holds with the sandbox off
//! (where Butler's state and the Brain's tree are open to the agent and only the Maid's care
//! stands between them).
//!
//! As root, permission bits do not bind; the test then runs Butler without the capabilities
//! that bypass them (`setpriv --bounding-set=-dac_override,-dac_read_search`), as an ordinary
//! user's Butler would be.

// The test plays the person at the terminal: it starts `butler` itself, as a shell would.
#![allow(clippy::disallowed_methods)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{BUTLER, Brain};
use butler_testkit::fake_agent::{SCRIPT_VAR, fake_agent};
use serde_json::{Value, json};

struct World {
    w: butler_testkit::World,
    project: PathBuf,
    data: PathBuf,
    script: PathBuf,
    /// Where an agent's program leaves a marker if anything unconfined ran it.
    markers: PathBuf,
    sandbox: &'static str,
}

impl World {
    fn new(sandbox: &'static str) -> Self {
        let w = butler_testkit::World::unborn();
        w.write("src/lib.rs", "pub fn one() -> i32 { 1 }\n");
        w.write("README.md", "project\n");
        w.commit(&w.project, "initial");
        let markers = w.path("markers");
        std::fs::create_dir_all(&markers).expect("mkdir");
        World {
            script: w.path("script.jsonl"),
            project: w.project.clone(),
            data: w.path("data"),
            markers,
            w,
            sandbox,
        }
    }

    fn env(&self) -> Vec<(String, String)> {
        let mut env = self.w.env.clone();
        for (k, v) in [
            ("XDG_DATA_HOME", self.data.to_string_lossy().into_owned()),
            (SCRIPT_VAR, self.script.to_string_lossy().into_owned()),
            (
                "BUTLER_GOOSE_PROGRAM",
                fake_agent().to_string_lossy().into_owned(),
            ),
            ("BUTLER_GOOSE_PROVIDER", "openai".to_owned()),
            ("BUTLER_GOOSE_MODEL", "fake".to_owned()),
            ("BUTLER_AGENT_ENV_ALLOW", SCRIPT_VAR.to_owned()),
            ("BUTLER_ISSUE_BACKEND", "local".to_owned()),
            ("BUTLER_EXE", BUTLER.to_owned()),
            ("BUTLER_SANDBOX", self.sandbox.to_owned()),
        ] {
            env.push((k.to_owned(), v));
        }
        env
    }

    /// `butler <args>` in the project, as the user (without the root's bypass of permission
    /// bits).
    fn butler(&self, args: &[&str]) -> std::process::Output {
        let mut cmd = if running_as_root(self.w.dir()) {
            let mut c = Command::new("setpriv");
            c.args([
                "--bounding-set=-dac_override,-dac_read_search",
                "--",
                BUTLER,
            ]);
            c
        } else {
            Command::new(BUTLER)
        };
        cmd.args(args)
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").expect("PATH"))
            .envs(self.env())
            .output()
            .expect("butler runs")
    }

    fn implement(&self, tests: &[&str]) -> Value {
        let mut args = vec![
            "implement",
            "--json",
            "--goal",
            "Add a greeting",
            "--target",
            "src/",
            "--target",
            ".gitattributes",
            "--timeout",
            "60",
        ];
        for t in tests {
            args.extend(["--test", t]);
        }
        let out = self.butler(&args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)))
    }

    fn git(&self, args: &[&str]) -> String {
        self.w.git(&self.project, args).trim().to_owned()
    }

    fn markers(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.markers)
            .expect("markers")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

/// Whether a file named `name` exists somewhere under `dir`.
fn has_file(dir: &Path, name: &str) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            e.file_name() == name
                || (e.file_type().is_ok_and(|t| t.is_dir()) && has_file(&e.path(), name))
        })
    })
}

fn running_as_root(dir: &Path) -> bool {
    std::fs::metadata(dir).is_ok_and(|m| m.uid() == 0)
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .expect("meta")
        .permissions()
        .mode()
        & 0o7777
}

/// A shell function that makes a repository at `$1` whose every program-running setting leaves
/// the marker `<markers>/$2-<what>`.
fn hostile_repo_fn(markers: &Path) -> String {
    let m = markers.display();
    format!(
        "mkrepo() {{ git init -q \"$1\" && echo inner > \"$1/inner.txt\" && \
         printf '* filter=evil diff=evil merge=evil\\n' > \"$1/.gitattributes\" && \
         git -C \"$1\" add -A && \
         git -C \"$1\" -c user.name=a -c user.email=a@b commit -qm inner && \
         git -C \"$1\" config core.fsmonitor \"touch {m}/$2-fsmonitor; false\" && \
         git -C \"$1\" config filter.evil.clean \"touch {m}/$2-clean; cat\" && \
         git -C \"$1\" config filter.evil.smudge \"touch {m}/$2-smudge; cat\" && \
         git -C \"$1\" config filter.evil.process \"touch {m}/$2-process\" && \
         git -C \"$1\" config diff.evil.textconv \"touch {m}/$2-textconv; cat\" && \
         git -C \"$1\" config diff.evil.command \"touch {m}/$2-diff\" && \
         git -C \"$1\" config merge.evil.driver \"touch {m}/$2-merge\" && \
         git -C \"$1\" config diff.external \"touch {m}/$2-external\" && \
         mkdir -p \"$1/.git/hooks\" && \
         for h in pre-commit post-commit post-index-change post-checkout post-merge \
                  reference-transaction; do \
           printf '#!/bin/sh\\ntouch {m}/%s-%s\\n' \"$2\" \"$h\" > \"$1/.git/hooks/$h\"; \
           chmod +x \"$1/.git/hooks/$h\"; done; }}; "
    )
}

/// The hostile agent: its work, the hook-ins, the `.git` pointer, then the sabotage.
fn script(w: &World) -> String {
    let p = |rel: &str| w.project.join(rel).display().to_string();
    let setup = format!(
        "{}mkrepo src/vendored nested && mkrepo \"$TMPDIR/evil\" pointer && \
         printf '* filter=evil diff=evil merge=evil\\n' > .gitattributes && \
         printf 'gitdir: %s/evil/.git\\n' \"$TMPDIR\" > .git && \
         echo 'fake-agent: hook-ins planted' >&2",
        hostile_repo_fn(&w.markers)
    );
    let sabotage = format!(
        "{mkrepo}mkrepo '{planted}' brain 2>/dev/null; \
         chmod 000 '{objects}' '{config}' '{ledger}' '{readme}'; \
         touch -d 2001-01-01 '{lib}'; chmod 000 src; \
         echo 'fake-agent: sabotage done' >&2",
        mkrepo = hostile_repo_fn(&w.markers),
        planted = p("planted"),
        objects = p(".git/objects"),
        config = p(".git/config"),
        ledger = p(".git/butler/ledger.db"),
        readme = p("README.md"),
        lib = p("src/lib.rs"),
    );
    // A process that outlives the agent and keeps aiming the `.git` pointer at its repository
    // while the Maid works (for 4 s; then it leaves `loop-done` in the agent's temp dir).
    let lingering = "setsid sh -c 'end=$(( $(date +%s) + 4 )); \
         while [ $(date +%s) -lt $end ]; do \
           printf \"gitdir: %s/evil/.git\\n\" \"$TMPDIR\" > .git; \
         done; touch \"$TMPDIR/loop-done\"' </dev/null >/dev/null 2>&1 &";
    json!([
        {"do": "write", "path": "src/greet.rs", "text": "pub fn greet() {}\n"},
        {"do": "sh", "cmd": setup},
        {"do": "sh", "cmd": lingering},
        {"do": "sh", "cmd": sabotage},
    ])
    .to_string()
}

fn findings(attempt: &Value) -> Vec<Value> {
    attempt["direct_git"]["findings"]
        .as_array()
        .expect("findings")
        .clone()
}

fn finding<'a>(all: &'a [Value], kind: &str) -> Vec<&'a Value> {
    all.iter().filter(|f| f["kind"] == kind).collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("list")
        .iter()
        .map(|s| s.as_str().expect("string").to_owned())
        .collect()
}

async fn plays_out(sandbox: &'static str) {
    let w = World::new(sandbox);
    std::fs::write(&w.script, script(&w)).expect("script");
    let verify_pointer = format!(
        "git init -q \"$TMPDIR/v\" && \
         git -C \"$TMPDIR/v\" config core.fsmonitor 'touch {}/verify-fsmonitor; false' && \
         printf 'gitdir: %s/v/.git\\n' \"$TMPDIR\" > .git",
        w.markers.display()
    );
    // The user's files, which links left by a verify command point at: the clean-up removes
    // the links, never what they point at.
    let users = w.w.path("users");
    std::fs::create_dir_all(users.join("dir")).expect("mkdir");
    std::fs::write(users.join("precious"), "mine\n").expect("write");
    std::fs::write(users.join("dir/also"), "mine\n").expect("write");
    let verify_links = format!(
        "ln -s {u} build-link && mkdir -p out/deep && ln -s {u}/precious out/p && \
         ln -s {u}/dir out/deep/d",
        u = users.display()
    );
    let result = w.implement(&["test -f src/greet.rs", &verify_pointer, &verify_links]);
    assert_eq!(result["outcome"], "succeeded", "{result:#}");
    let a = &result["attempts"][0];
    let log = std::fs::read_to_string(w.project.join(".git/butler/tasks/t1/attempt-1.log"))
        .expect("attempt log");
    assert!(log.contains("fake-agent: hook-ins planted"), "{log}");
    assert!(log.contains("fake-agent: sabotage done"), "{log}");
    assert_eq!(
        a["sandbox"]["applied"],
        sandbox != "off",
        "{:#}",
        a["sandbox"]
    );

    // No program of the agent's ran: the Maid's inspection, restores, set-asides, record and
    // verification clean-up never entered its repositories nor followed its pointer. The
    // lingering process did not outlive the attempt: the sandbox helper, its reaper, ended it
    // before the Maid inspected anything, and the evidence names it.
    assert!(
        a["leftovers"]["total"].as_u64().is_some_and(|n| n >= 1),
        "{:#}",
        a["leftovers"]
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(
        !has_file(&w.data, "loop-done"),
        "the lingering process lived on after the attempt"
    );
    assert_eq!(w.markers(), Vec::<String>::new());

    // The evidence says what happened.
    let all = findings(a);
    let nested = finding(&all, "nested_repository");
    assert_eq!(nested.len(), 1, "{all:#?}");
    assert_eq!(nested[0]["path"], "src/vendored");
    assert_eq!(
        finding(&all, "git_link_changed").len(),
        2,
        "the agent's and the verify command's: {all:#?}"
    );
    let restored = finding(&all, "modes_restored");
    assert_eq!(restored.len(), 1, "{all:#?}");
    let paths = strings(&restored[0]["paths"]);
    for want in [".git/butler/ledger.db", ".git/config", ".git/objects"] {
        assert!(paths.iter().any(|p| p == want), "{want} not in {paths:?}");
    }
    assert!(
        paths.iter().any(|p| p.ends_with("/task-t1/src")),
        "the worktree's own directory: {paths:?}"
    );
    let brain = finding(&all, "brain_metadata_changed");
    assert_eq!(brain.len(), 1, "{all:#?}");
    assert_eq!(strings(&brain[0]["paths"]), ["README.md", "src/lib.rs"]);

    // A repository planted in the Brain's tree (only possible without the sandbox) is taken
    // out as a write there, without entering it.
    let outside: Vec<&Value> = finding(&all, "outside_write");
    if sandbox == "off" {
        assert!(outside.iter().any(|f| f["path"] == "planted"), "{all:#?}");
    }
    assert!(!w.project.join("planted").exists());
    assert_eq!(
        std::fs::read_to_string(users.join("precious")).expect("read"),
        "mine\n"
    );
    assert!(users.join("dir/also").is_file());
    let worktree = w
        .data
        .join("butler/worktrees")
        .read_dir()
        .expect("worktrees")
        .flatten()
        .next()
        .expect("one repository")
        .path()
        .join("task-t1");
    assert!(worktree.join("src/greet.rs").is_file());
    for gone in ["build-link", "out"] {
        assert!(
            std::fs::symlink_metadata(worktree.join(gone)).is_err(),
            "{gone}"
        );
    }

    // Nothing of the user's changed; Butler's state is as it was.
    assert_eq!(mode(&w.project.join(".git/objects")), 0o755);
    assert_eq!(mode(&w.project.join(".git/config")), 0o644);
    assert_eq!(mode(&w.project.join(".git/butler/ledger.db")), 0o644);
    assert_eq!(mode(&w.project.join("README.md")), 0o644);
    assert_eq!(
        std::fs::read_to_string(w.project.join("README.md")).expect("read"),
        "project\n"
    );
    assert_eq!(w.git(&["status", "--porcelain"]), "");

    // The work is recorded; the nested repository is not (no gitlink, nothing of it).
    let tree = w.git(&["ls-tree", "-r", "butler/task-t1"]);
    assert!(!tree.contains("160000"), "{tree}");
    assert!(!tree.contains("vendored"), "{tree}");
    let files = w.git(&["log", "--format=", "--name-only", "main..butler/task-t1"]);
    let mut files: Vec<&str> = files.lines().filter(|l| !l.is_empty()).collect();
    files.sort();
    assert_eq!(files, [".gitattributes", "src/greet.rs"]);

    // The next calls work: the task list, and the Brain accepting the task (a merge into its
    // tree with the agent's `.gitattributes` naming drivers, its worktree removed).
    let list = w.butler(&["task", "list"]);
    assert!(list.status.success(), "{list:?}");
    let brain = Brain::spawn(&w.project, &w.env()).await;
    brain
        .ok(
            "work_session_start",
            json!({"project_root": w.project.display().to_string()}),
        )
        .await;
    // The agent's `.gitattributes` configures git: it lands only once the Brain confirms it.
    let asked = brain.call("task_accept", json!({"task_id": "t1"})).await;
    assert_eq!(asked.error_code(), "need_input", "{}", asked.envelope);
    assert_eq!(asked.data()["tool_config"][0]["path"], ".gitattributes");
    let accepted = brain
        .call(
            "task_accept",
            json!({"task_id": "t1", "confirm_paths": [".gitattributes"]}),
        )
        .await;
    assert_eq!(accepted.status(), "ok", "{}", accepted.envelope);
    assert!(w.project.join("src/greet.rs").is_file());
    assert!(!w.project.join("src/vendored").exists());
    assert_eq!(w.markers(), Vec::<String>::new());
    let worktree = a["sandbox"]["writable"][0].as_str().map(PathBuf::from);
    if let Some(worktree) = worktree {
        assert!(!worktree.exists(), "{}", worktree.display());
    }
}

#[tokio::test]
async fn a_hostile_worktree_steers_nothing_butler_does_under_the_sandbox() {
    plays_out("auto").await;
}

#[tokio::test]
async fn a_hostile_worktree_steers_nothing_butler_does_with_the_sandbox_off() {
    plays_out("off").await;
}
