//! Shared scaffolding for end-to-end tests: hermetic git repositories in temp dirs and a real
//! MCP client talking to the real `butler mcp` binary over stdio.
#![allow(dead_code)]
// Test scaffolding plays the user's side of the world (git as a person runs it, chmod, kill,
// building a helper binary); Butler's own children go through `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;

use butler_orchestrator::client::{Answer, BrainClient};
use serde_json::{Value, json};
use tempfile::TempDir;

pub const BUTLER: &str = env!("CARGO_BIN_EXE_butler");

/// Environment that shuts out the machine's git configuration and fixes identity.
pub fn hermetic_env(home: &Path, with_identity: bool) -> Vec<(String, String)> {
    let mut env = vec![
        ("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()),
        ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
        ("HOME".into(), home.to_string_lossy().into_owned()),
        (
            "XDG_CONFIG_HOME".into(),
            home.join(".config").to_string_lossy().into_owned(),
        ),
        ("BUTLER_ISSUE_BACKEND".into(), "local".into()),
        ("LC_ALL".into(), "C".into()),
    ];
    if with_identity {
        for (k, v) in [
            ("GIT_AUTHOR_NAME", "Test Brain"),
            ("GIT_AUTHOR_EMAIL", "brain@example.invalid"),
            ("GIT_COMMITTER_NAME", "Test Brain"),
            ("GIT_COMMITTER_EMAIL", "brain@example.invalid"),
        ] {
            env.push((k.into(), v.into()));
        }
    }
    env
}

/// A scratch world: a project repository and (optionally) a shared destination.
pub struct World {
    pub tmp: TempDir,
    pub project: PathBuf,
    pub shared: PathBuf,
    pub env: Vec<(String, String)>,
}

impl World {
    /// A project with one published commit and a shared destination.
    pub fn published() -> Self {
        let w = Self::bare_project(true);
        w.git(
            &[
                "init",
                "-q",
                "--bare",
                "-b",
                "main",
                &w.shared.to_string_lossy(),
            ],
            None,
        );
        w.git(
            &["remote", "add", "origin", &w.shared.to_string_lossy()],
            Some(&w.project),
        );
        w.write("README.md", "# project\n");
        w.git(&["add", "-A"], Some(&w.project));
        w.git(&["commit", "-q", "-m", "Initial commit"], Some(&w.project));
        w.git(&["push", "-q", "-u", "origin", "main"], Some(&w.project));
        w
    }

    /// A project with one commit and no shared destination.
    pub fn local_only() -> Self {
        let w = Self::bare_project(true);
        w.write("README.md", "# project\n");
        w.git(&["add", "-A"], Some(&w.project));
        w.git(&["commit", "-q", "-m", "Initial commit"], Some(&w.project));
        w
    }

    /// An initialised, empty project (no commits).
    pub fn bare_project(with_identity: bool) -> Self {
        let tmp = tempfile::Builder::new()
            .prefix("butler-e2e-")
            .tempdir()
            .expect("tempdir");
        let project = tmp.path().join("project");
        let shared = tmp.path().join("shared.git");
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).expect("home");
        let env = hermetic_env(&home, with_identity);
        let w = Self {
            tmp,
            project,
            shared,
            env,
        };
        w.git(
            &["init", "-q", "-b", "main", &w.project.to_string_lossy()],
            None,
        );
        w
    }

    pub fn root(&self) -> String {
        self.project.to_string_lossy().into_owned()
    }

    pub fn write(&self, rel: &str, content: &str) {
        let path = self.project.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, content).expect("write");
    }

    /// Runs git as the user would (outside Butler), asserting success.
    pub fn git(&self, args: &[&str], cwd: Option<&Path>) -> String {
        let out = self.git_raw(args, cwd);
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn git_raw(&self, args: &[&str], cwd: Option<&Path>) -> std::process::Output {
        let mut cmd = Command::new("git");
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default());
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        if let Some(dir) = cwd {
            cmd.current_dir(dir);
        }
        cmd.output().expect("git runs")
    }

    /// Another clone of the shared destination, for moving it on behind the project's back.
    pub fn other_clone(&self) -> PathBuf {
        let other = self.tmp.path().join("other");
        self.git(
            &[
                "clone",
                "-q",
                &self.shared.to_string_lossy(),
                &other.to_string_lossy(),
            ],
            None,
        );
        other
    }

    pub async fn brain(&self) -> Brain {
        let client = BrainClient::spawn(Path::new(BUTLER), &self.project, &self.env)
            .await
            .expect("butler mcp starts");
        Brain { client }
    }

    /// A Brain with a session already started on this project.
    pub async fn session(&self) -> Brain {
        let brain = self.brain().await;
        let a = brain
            .call("work_session_start", json!({"project_root": self.root()}))
            .await;
        assert_eq!(a.status(), "ok", "{}", a.envelope);
        brain
    }
}

pub struct Brain {
    pub client: BrainClient,
}

impl Brain {
    pub async fn call(&self, tool: &str, args: Value) -> Answer {
        let a = self
            .client
            .call(tool, args)
            .await
            .expect("the server answers the call");
        assert!(
            a.consistent,
            "text and structured content differ: {}",
            a.envelope
        );
        assert_eq!(
            a.is_error,
            a.status() == "error",
            "isError matches status: {}",
            a.envelope
        );
        a
    }

    pub async fn observe(&self) -> Value {
        let a = self.call("work_observe", json!({})).await;
        assert_eq!(a.status(), "ok", "{}", a.envelope);
        a.envelope
    }

    pub async fn state(&self) -> String {
        self.observe().await["data"]["work_state"]
            .as_str()
            .expect("work_state")
            .to_string()
    }
}

/// Replaces what changes from run to run (times, record ids, temp paths) so shapes can be
/// snapshotted.
pub fn normalize(mut value: Value, world: &World) -> Value {
    fn walk(v: &mut Value, root: &str) {
        match v {
            Value::Object(map) => {
                for (k, item) in map.iter_mut() {
                    match (k.as_str(), &item) {
                        ("created_at", Value::String(_)) => *item = json!("<time>"),
                        ("id" | "record_id", Value::String(s)) if is_record_id(s) => {
                            *item = json!("<record-id>")
                        }
                        _ => walk(item, root),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| walk(i, root)),
            Value::String(s) => {
                if s.contains(root) {
                    *s = s.replace(root, "<project>");
                }
                let mut out = String::new();
                for word in s.split_inclusive(' ') {
                    let bare = word.trim_end_matches([' ', '.', ',']);
                    if is_record_id(bare) {
                        out.push_str(&word.replace(bare, "<record-id>"));
                    } else {
                        out.push_str(word);
                    }
                }
                *s = out;
            }
            _ => {}
        }
    }
    let root = world.root();
    walk(&mut value, &root);
    value
}

fn is_record_id(s: &str) -> bool {
    s.len() >= 12
        && s.as_bytes()[8] == b'-'
        && s.chars().filter(|c| c.is_ascii_digit()).count() == s.len() - 1
}
