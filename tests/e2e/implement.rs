//! Delegated implementation end to end through the orchestrator's domain functions
//! (`butler_orchestrator::implement`), with the scripted fake agent launched as goose and the
//! real `butler worker-mcp` as its extension: precheck, success → accept → `work_history`,
//! direct commits, out-of-scope retries, the attempt limit, wall clock and stagnation,
//! cancellation, discard, notes relayed to the issue, and the Brain's tree and HEAD untouched.

// Test scaffolding plays the user's side of the world (git as a person runs it, chmod, kill,
// building a helper binary); Butler's own children go through `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use butler_maid::MaidContext;
use butler_maid::agent::AgentConfig;
use butler_orchestrator::error::{ErrorCode, ToolError, WorkError};
use butler_orchestrator::implement::{
    CancellationToken, RunImplementArgs, maid_context, run_implement_with, task_accept,
    task_discard,
};
use butler_orchestrator::session::{Project, open_project};
use butler_testkit::World;
use butler_testkit::fake_agent::{attempt, fake_agent, write_script};
use butler_worker::config::{AgentFileConfig, Environment};
use butler_worker::contract::{TaskId, TaskStatus};
use butler_worker::time::SystemClock;
use serde_json::Value;

const BUTLER: &str = env!("CARGO_BIN_EXE_butler");

/// A project with `src/lib.rs` and `README.md` committed, and the fake agent's script.
struct TaskWorld {
    world: World,
    root: PathBuf,
    script: PathBuf,
}

fn world(attempts: &[&[&str]]) -> TaskWorld {
    let world = World::committed(&[
        ("src/lib.rs", "pub fn one() -> i32 { 1 }\n"),
        ("README.md", "project\n"),
    ]);
    let lines: Vec<String> = attempts.iter().map(|a| attempt(a)).collect();
    let script = write_script(world.dir(), &lines);
    TaskWorld {
        root: world.project.clone(),
        world,
        script,
    }
}

impl TaskWorld {
    /// Runs git in `dir` as the project's user; its stdout, trimmed.
    fn git(&self, dir: &Path, args: &[&str]) -> String {
        self.world.git(dir, args).trim().to_owned()
    }

    async fn project(&self) -> Arc<Project> {
        open_project(
            &self.root.to_string_lossy(),
            SystemClock::shared(),
            Arc::new(Environment::default()),
        )
        .await
        .expect("session")
        .0
    }

    fn ctx(&self) -> MaidContext {
        let mut ctx = maid_context(
            self.root.clone(),
            SystemClock::shared(),
            &Environment::default(),
            &AgentFileConfig::default(),
        )
        .expect("context");
        ctx.worker_mcp.program = BUTLER.into();
        let goose = AgentConfig {
            program: Some(fake_agent()),
            provider: Some("openai".into()),
            model: Some("fake".into()),
            ..Default::default()
        };
        ctx.agents.insert(butler_maid::AgentKind::Goose, goose);
        ctx.parent_env = vec![
            ("PATH".into(), std::env::var_os("PATH").expect("PATH")),
            ("FAKE_AGENT_SCRIPT".into(), self.script.clone().into()),
            ("BUTLER_GITEA_TOKEN".into(), "secret-token".into()),
        ];
        ctx.env_allow = vec!["FAKE_AGENT_SCRIPT".into()];
        ctx.stagnation = Duration::from_secs(30);
        ctx.test_timeout = Duration::from_secs(30);
        ctx.grace = Duration::from_millis(300);
        // These scenarios exercise detection after the run (tests/e2e/sandbox.rs runs agents
        // confined); worktrees stay in the git directory, never in the machine's data dir.
        ctx.sandbox = butler_maid::SandboxSettings::off();
        ctx.worktrees_root = None;
        ctx
    }

    fn head(&self) -> String {
        self.git(&self.root, &["rev-parse", "HEAD"])
    }

    fn status(&self) -> String {
        self.git(
            &self.root,
            &["status", "--porcelain", "--untracked-files=all"],
        )
    }
}

fn args(tests: &[&str]) -> RunImplementArgs {
    serde_json::from_value(serde_json::json!({
        "goal": "Add a greeting",
        "spec": "src/greet.rs holds `pub fn greet`",
        "target_paths": ["src/"],
        "test_commands": tests,
        "timeout_s": 60,
    }))
    .expect("valid args")
}

/// Runs a task; returns the reply's data (or the tool error) and the progress messages.
async fn run(
    w: &TaskWorld,
    project: &Arc<Project>,
    ctx: MaidContext,
    a: RunImplementArgs,
    cancel: CancellationToken,
) -> (Result<Value, ToolError>, Vec<(String, f64)>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let reply = run_implement_with(
        project,
        ctx,
        a,
        move |m, f| sink.lock().expect("lock").push((m, f)),
        cancel,
    )
    .await;
    let _ = w;
    let seen = seen.lock().expect("lock").clone();
    (
        reply
            .map(|r| r.to_json()["data"].clone())
            .map_err(|e| ToolError::from_work(e, butler_orchestrator::tool::Tool::RunImplement)),
        seen,
    )
}

const GREET: &str = r#"{"do":"write","path":"src/greet.rs","text":"pub fn greet() {}\n"}"#;

#[tokio::test]
async fn unrecorded_changes_need_input_and_the_agent_never_starts() {
    let w = world(&[&[GREET]]);
    let project = w.project().await;
    std::fs::write(w.root.join("README.md"), "edited\n").expect("write");
    let (reply, progress) = run(&w, &project, w.ctx(), args(&[]), CancellationToken::new()).await;
    let err = reply.expect_err("refused");
    assert_eq!(err.code, ErrorCode::NeedInput, "{err:?}");
    assert!(err.summary.contains("README.md"), "{err:?}");
    assert!(err.hint.contains("run_implement"), "{err:?}");
    assert!(progress.is_empty());
    assert!(!w.script.with_extension("jsonl.attempt").exists());
    assert!(!w.root.join(".git/butler/worktrees").exists());
}

#[tokio::test]
async fn invalid_arguments_are_refused_at_the_edge() {
    let w = world(&[&[GREET]]);
    let project = w.project().await;
    let mut a = args(&[]);
    a.target_paths = vec!["../outside".into()];
    let (reply, _) = run(&w, &project, w.ctx(), a, CancellationToken::new()).await;
    let err = reply.expect_err("refused");
    assert_eq!(err.code, ErrorCode::NeedInput);
    assert_eq!(err.data.expect("data")["field"], "target_paths");
    let bad: Result<RunImplementArgs, _> = serde_json::from_value(serde_json::json!({
        "goal": "g", "target_paths": ["src/"], "surprise": 1
    }));
    assert!(bad.is_err(), "unknown fields are refused");
}

#[tokio::test]
async fn success_then_accept_puts_the_records_in_work_history() {
    let w = world(&[&[
        r#"{"do":"mcp","calls":[{"tool":"leave_note","arguments":{"text":"greet takes no name"}}]}"#,
        GREET,
    ]]);
    let project = w.project().await;
    let issue = project
        .issues
        .create(&butler_worker::issues::NewIssue {
            title: "Greeting".into(),
            body: "## Current state\nnone\n## Next action\nadd\n## Blockers\nnone\n".into(),
            labels: vec![],
        })
        .await
        .expect("issue");
    let head = w.head();
    let mut a = args(&["grep -q 'pub fn greet' src/greet.rs"]);
    a.issue_id = Some(issue.number);
    let (reply, progress) = run(&w, &project, w.ctx(), a, CancellationToken::new()).await;
    let data = reply.expect("ran");
    assert_eq!(data["outcome"], "succeeded", "{data:#}");
    assert_eq!(data["branch"], "butler/task-t1");
    let attempt = &data["attempts"][0];
    assert_eq!(
        attempt["changed_files"],
        serde_json::json!(["src/greet.rs"])
    );
    assert_eq!(attempt["direct_git"]["detected"], false);
    assert_eq!(attempt["verify"]["tests"][0]["passed"], true);
    assert_eq!(
        attempt["worker_mcp_reached"], true,
        "the real `butler worker-mcp` was reached: {attempt:#}"
    );
    assert_eq!(attempt["agent_notes"][0]["text"], "greet takes no name");
    assert_eq!(data["notes_relayed"], 1);
    let comments = project
        .issues
        .last_comments(issue.number, 5)
        .await
        .expect("comments");
    assert!(
        comments
            .iter()
            .any(|c| c.body.contains("greet takes no name")),
        "{comments:?}"
    );
    let messages: Vec<&str> = progress.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(messages.first(), Some(&"attempt 1 started"));
    assert!(messages.contains(&"attempt 1: verifying"), "{messages:?}");
    assert_eq!(progress.last().map(|p| p.1), Some(1.0));
    // The Brain's tree and HEAD never changed.
    assert_eq!(w.head(), head);
    assert_eq!(w.status(), "");
    let record = attempt["record"].as_str().expect("record").to_owned();

    let accepted = task_accept(&project, "t1", &[]).await.expect("accepted");
    let accepted = accepted.to_json();
    assert_eq!(accepted["data"]["merged"], false);
    assert_eq!(accepted["data"]["records"][0], record.as_str());
    assert!(w.root.join("src/greet.rs").is_file());
    let (_, entries) =
        butler_orchestrator::work::history::history(&project, 5, None).expect("history");
    let top = &entries[0];
    assert_eq!(top.record_id, record);
    assert!(top.message.starts_with("Add a greeting"), "{top:?}");
    assert_eq!(top.issue_ids, vec![issue.number]);
    let task = project
        .with_ledger(|l| Ok(l.task(&TaskId::new("t1").expect("id"))?))
        .expect("ledger")
        .expect("task");
    assert_eq!(task.status, TaskStatus::Accepted);
}

#[tokio::test]
async fn direct_commits_are_unwound_and_out_of_scope_work_is_retried_with_the_reason() {
    let w = world(&[
        &[
            r#"{"do":"write","path":"src/a.rs","text":"pub fn a() {}\n"}"#,
            r#"{"do":"sh","cmd":"git add -A && git -c user.name=A -c user.email=a@x commit -q -m 'agent wip'"}"#,
            r#"{"do":"write","path":"Cargo.toml","text":"[package]\n"}"#,
        ],
        &[
            r#"{"do":"record_prompt","path":"../../tasks/t1/prompt-2.txt"}"#,
            r#"{"do":"write","path":"src/done","text":"ok"}"#,
        ],
    ]);
    let project = w.project().await;
    let head = w.head();
    let (reply, _) = run(
        &w,
        &project,
        w.ctx(),
        args(&["test -f src/done"]),
        CancellationToken::new(),
    )
    .await;
    let data = reply.expect("ran");
    assert_eq!(data["outcome"], "succeeded", "{data:#}");
    let first = &data["attempts"][0];
    assert_eq!(first["direct_git"]["detected"], true);
    assert_eq!(first["direct_git"]["findings"][0]["kind"], "commits");
    assert_eq!(
        first["direct_git"]["findings"][0]["subjects"][0],
        "agent wip"
    );
    assert_eq!(
        first["verify"]["scope_violation"],
        serde_json::json!(["Cargo.toml"])
    );
    let prompt = std::fs::read_to_string(w.root.join(".git/butler/tasks/t1/prompt-2.txt"))
        .expect("retry prompt");
    assert!(prompt.contains("attempt 2 of 3"), "{prompt}");
    assert!(prompt.contains("`Cargo.toml`"), "{prompt}");
    assert!(prompt.contains("1 commit(s) of your own"), "{prompt}");
    let authors = w.git(&w.root, &["log", "--format=%an", "main..butler/task-t1"]);
    assert!(authors.lines().all(|a| a == "Butler Maid"), "{authors}");
    assert_eq!(w.head(), head);
    assert_eq!(w.status(), "");
}

#[tokio::test]
async fn three_attempts_at_most_then_discard_keeps_the_line_aside() {
    let w = world(&[&[r#"{"do":"print","text":"All done, trust me."}"#]]);
    let project = w.project().await;
    let (reply, _) = run(&w, &project, w.ctx(), args(&[]), CancellationToken::new()).await;
    let data = reply.expect("ran");
    assert_eq!(data["outcome"], "failed");
    assert_eq!(data["attempts"].as_array().expect("attempts").len(), 3);
    let reply = task_discard(&project, "t1").await.expect("discarded");
    assert_eq!(reply.to_json()["data"]["discarded"], true);
    assert!(!w.root.join(".git/butler/worktrees/task-t1").exists());
    w.git(&w.root, &["rev-parse", "refs/butler/discarded/task-t1"]);
    let err = task_discard(&project, "t1").await.expect_err("gone");
    assert!(matches!(err, WorkError::TaskNotFound { .. }), "{err:?}");
}

#[tokio::test]
async fn stagnation_and_the_wall_clock_stop_the_agent() {
    let w = world(&[&[r#"{"do":"hang"}"#], &[r#"{"do":"exit","code":3}"#]]);
    let project = w.project().await;
    let mut ctx = w.ctx();
    ctx.stagnation = Duration::from_millis(700);
    let mut a = args(&[]);
    a.timeout_s = Some(10);
    let started = std::time::Instant::now();
    let (reply, _) = run(&w, &project, ctx, a, CancellationToken::new()).await;
    let data = reply.expect("ran");
    assert_eq!(
        data["attempts"][0]["agent_exit"]["kind"], "stagnated",
        "{data:#}"
    );
    assert_eq!(data["outcome"], "failed");
    assert!(started.elapsed() < Duration::from_secs(25));

    let w = world(&[
        &[r#"{"do":"print","text":"busy"}"#, r#"{"do":"hang"}"#],
        &[r#"{"do":"exit","code":0}"#],
    ]);
    let project = w.project().await;
    let mut ctx = w.ctx();
    ctx.stagnation = Duration::from_secs(60);
    let mut a = args(&[]);
    a.timeout_s = Some(10);
    let (reply, _) = run(&w, &project, ctx, a, CancellationToken::new()).await;
    let data = reply.expect("ran");
    assert_eq!(
        data["attempts"][0]["agent_exit"]["kind"], "wall_clock_limit",
        "{data:#}"
    );
}

#[tokio::test]
async fn cancellation_ends_the_task_and_leaves_the_brains_tree_alone() {
    let w = world(&[&[GREET, r#"{"do":"hang"}"#]]);
    let project = w.project().await;
    let head = w.head();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(800)).await;
        trigger.cancel();
    });
    let (reply, _) = run(&w, &project, w.ctx(), args(&[]), cancel).await;
    let data = reply.expect("ran");
    assert_eq!(data["outcome"], "cancelled");
    assert_eq!(data["attempts"][0]["agent_exit"]["kind"], "cancelled");
    assert_eq!(w.head(), head);
    assert_eq!(w.status(), "");
    let task = project
        .with_ledger(|l| Ok(l.task(&TaskId::new("t1").expect("id"))?))
        .expect("ledger")
        .expect("task");
    assert_eq!(task.status, TaskStatus::Cancelled);
}
