//! The Brain of the end-to-end tests: the orchestrator's MCP client
//! (`butler_orchestrator::client`) driving the real `butler mcp` binary, in a test kit world
//! (`butler_testkit::World`: hermetic git in a temp dir).
#![allow(dead_code)]
// Test scaffolding plays the user's side of the world (git as a person runs it, chmod, kill,
// building a helper binary); Butler's own children go through `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

use std::path::Path;
use std::sync::Mutex;

use butler_orchestrator::client::{Answer, BrainClient};
pub use butler_testkit::World;
use serde_json::{Value, json};

pub const BUTLER: &str = env!("CARGO_BIN_EXE_butler");

/// Starts Brains on a world's project, with the world's environment.
pub trait StartBrain {
    /// A Brain connected to a fresh `butler mcp` in the project.
    async fn brain(&self) -> Brain;
    /// A Brain with a session already started on the project.
    async fn session(&self) -> Brain;
}

impl StartBrain for World {
    async fn brain(&self) -> Brain {
        Brain::spawn(&self.project, &self.env).await
    }

    async fn session(&self) -> Brain {
        let brain = self.brain().await;
        brain
            .ok("work_session_start", json!({"project_root": self.root()}))
            .await;
        brain
    }
}

/// A Brain stand-in: every answer is checked for the envelope's invariants and remembered.
pub struct Brain {
    pub client: BrainClient,
    /// Every envelope received, as text.
    answers: Mutex<Vec<String>>,
}

/// The server's environment: the embedded issue store unless `env` says otherwise (later
/// entries win).
fn server_env(env: &[(String, String)]) -> Vec<(String, String)> {
    let mut all = vec![("BUTLER_ISSUE_BACKEND".to_owned(), "local".to_owned())];
    all.extend_from_slice(env);
    all
}

impl Brain {
    /// Starts `butler mcp` in `cwd` with `env` added; its log is discarded.
    pub async fn spawn(cwd: &Path, env: &[(String, String)]) -> Brain {
        let client = BrainClient::spawn(Path::new(BUTLER), cwd, &server_env(env))
            .await
            .expect("butler mcp starts");
        Brain::with(client)
    }

    /// Starts `program mcp` (another build of Butler) in `cwd` with `env` added.
    pub async fn spawn_program(program: &Path, cwd: &Path, env: &[(String, String)]) -> Brain {
        let client = BrainClient::spawn(program, cwd, &server_env(env))
            .await
            .expect("butler mcp starts");
        Brain::with(client)
    }

    /// Starts `butler mcp` in `cwd` with `env` added, keeping its log for [`Brain::close`].
    pub async fn spawn_logged(cwd: &Path, env: &[(String, String)]) -> Brain {
        let client = BrainClient::spawn_logged(Path::new(BUTLER), cwd, &server_env(env))
            .await
            .expect("butler mcp starts");
        Brain::with(client)
    }

    /// Opens a session with a running `butler serve --http` at `url`.
    pub async fn http(url: &str, token: Option<&butler_worker::config::Secret>) -> Brain {
        let client = BrainClient::connect_http(url, token)
            .await
            .expect("the HTTP server opens a session");
        Brain::with(client)
    }

    fn with(client: BrainClient) -> Brain {
        Brain {
            client,
            answers: Mutex::new(Vec::new()),
        }
    }

    /// Calls `tool`; asserts that the text and structured content agree and that `isError`
    /// matches the status.
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
        self.answers
            .lock()
            .expect("answers")
            .push(a.envelope.to_string());
        a
    }

    /// Calls `tool`, asserting it answers `ok`; returns the envelope.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let a = self.call(tool, args).await;
        assert_eq!(a.status(), "ok", "{tool}: {}", a.envelope);
        a.envelope
    }

    pub async fn observe(&self) -> Value {
        self.ok("work_observe", json!({})).await
    }

    pub async fn state(&self) -> String {
        self.observe().await["data"]["work_state"]
            .as_str()
            .expect("work_state")
            .to_string()
    }

    /// Closes the connection and returns (every answer, the server's whole log — empty unless
    /// started with [`Brain::spawn_logged`]).
    pub async fn close(self) -> (Vec<String>, String) {
        let log = self.client.close_with_log().await;
        (self.answers.into_inner().expect("answers"), log)
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
    butler_worker::ledger::RecordId::parse(s).is_ok()
}

/// `value` with the clone mark of every record id written `mark` (`20260612-001-mark`): the
/// mark is chosen at random when a ledger is created, so snapshots name it so.
pub fn unmarked(value: &Value) -> Value {
    let mut value = value.clone();
    fn word(w: &str) -> String {
        match butler_worker::ledger::RecordId::parse(w) {
            Ok(id) if !id.mark().is_empty() => {
                format!("{}-{}-mark", id.day(), &w[9..w.len() - id.mark().len() - 1])
            }
            _ => w.to_owned(),
        }
    }
    fn walk(v: &mut Value) {
        match v {
            Value::Object(map) => map.values_mut().for_each(walk),
            Value::Array(items) => items.iter_mut().for_each(walk),
            Value::String(s) => {
                let mut out = String::new();
                let mut rest = s.as_str();
                while let Some(at) = rest.find(|c: char| c.is_ascii_digit()) {
                    out.push_str(&rest[..at]);
                    let end = rest[at..]
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                        .map_or(rest.len(), |e| at + e);
                    out.push_str(&word(&rest[at..end]));
                    rest = &rest[end..];
                }
                out.push_str(rest);
                *s = out;
            }
            _ => {}
        }
    }
    walk(&mut value);
    value
}

/// Butler's clock in tests that snapshot times and record ids: the test kit's world is dated
/// 2026-06-12 (+0900), its own commits (made as a person would, outside Butler) a minute apart
/// from 12:22:47; Butler's are made at this instant.
pub const BUTLER_NOW: &str = "2026-06-12T13:00:00+09:00";

/// `world` with Butler's clock fixed ([`BUTLER_NOW`]), and the dates of the commits Butler
/// makes: answers, record ids and times are the same on every run.
pub fn frozen(mut world: World) -> World {
    world.env.extend([
        ("BUTLER_NOW".to_owned(), BUTLER_NOW.to_owned()),
        ("GIT_AUTHOR_DATE".to_owned(), BUTLER_NOW.to_owned()),
        ("GIT_COMMITTER_DATE".to_owned(), BUTLER_NOW.to_owned()),
    ]);
    world
}

/// Makes `w`'s Butler run the scripted fake agent as goose, playing `script`
/// (`butler_testkit::fake_agent::write_script`); the script's path reaches the agent.
pub fn fake_goose(w: &mut World, script: &Path) {
    for (k, v) in [
        (
            "BUTLER_GOOSE_PROGRAM",
            butler_testkit::fake_agent().to_string_lossy().into_owned(),
        ),
        ("BUTLER_GOOSE_PROVIDER", "openai".into()),
        ("BUTLER_GOOSE_MODEL", "fake".into()),
        ("FAKE_AGENT_SCRIPT", script.to_string_lossy().into_owned()),
        ("BUTLER_AGENT_ENV_ALLOW", "FAKE_AGENT_SCRIPT".into()),
    ] {
        w.env.push((k.to_owned(), v));
    }
}

/// Everything an undo must restore, as git and the file system show it: status, index entries,
/// references (the operation log's own left out), `HEAD`, and every file with its bytes (a link
/// as its target).
#[derive(Debug, PartialEq, Eq)]
pub struct ProjectState {
    pub status: String,
    pub index: String,
    pub refs: String,
    pub head: String,
    pub files: std::collections::BTreeMap<String, Vec<u8>>,
}

fn files_of(dir: &Path, base: &Path, out: &mut std::collections::BTreeMap<String, Vec<u8>>) {
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let path = entry.expect("entry").path();
        let rel = path
            .strip_prefix(base)
            .expect("inside")
            .display()
            .to_string();
        if rel == ".git" {
            continue;
        }
        let meta = std::fs::symlink_metadata(&path).expect("meta");
        if meta.is_dir() {
            files_of(&path, base, out);
        } else if meta.file_type().is_symlink() {
            let to = std::fs::read_link(&path).expect("link");
            out.insert(rel, format!("-> {}", to.display()).into_bytes());
        } else {
            out.insert(rel, std::fs::read(&path).expect("read"));
        }
    }
}

/// The project's [`ProjectState`] now.
pub fn project_state(w: &World) -> ProjectState {
    let mut files = std::collections::BTreeMap::new();
    files_of(&w.project, &w.project, &mut files);
    let refs = w
        .git(
            &w.project,
            &["for-each-ref", "--format=%(objectname) %(refname)"],
        )
        .lines()
        .filter(|l| !l.contains(" refs/butler/"))
        .collect::<Vec<_>>()
        .join("\n");
    ProjectState {
        status: w.git(
            &w.project,
            &["status", "--porcelain", "--untracked-files=all"],
        ),
        index: w.git(&w.project, &["ls-files", "-s"]),
        refs,
        head: w.git(&w.project, &["rev-parse", "--symbolic-full-name", "HEAD"]),
        files,
    }
}
