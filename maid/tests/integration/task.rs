//! The task sequence end to end: real git repositories in temp dirs, the fake agent, real
//! test commands.

// Test scaffolding plays the user's side of the world (git as a person runs it, chmod, kill,
// building a helper binary); Butler's own children go through `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use butler_maid::agent::{AgentConfig, WorkerMcpCommand};
use butler_maid::contract::{FileCheckSpec, ImplementRequest};
use butler_maid::{
    AgentKind, DirectGitFinding, ImplementEvidence, MaidContext, MaidError, Outcome, Progress,
    ResultContract, TaskContract, TaskId, accept, discard, prepare_task, run_task,
};
use butler_testkit::World;
use butler_testkit::fake_agent::{attempt, fake_agent, write_script};
use butler_worker::contract::{Tampering, TaskStatus};
use butler_worker::ledger::{Ledger, TaskEnd};
use butler_worker::time::{SystemClock, Timestamp};
use tokio_util::sync::CancellationToken;

struct Repo {
    world: World,
    root: PathBuf,
    script: PathBuf,
}

impl Repo {
    /// Runs git in `dir` as the project's user; its stdout, trimmed.
    fn git(&self, dir: &Path, args: &[&str]) -> String {
        self.world.git(dir, args).trim().to_owned()
    }
}

/// A project with `src/lib.rs` and `README.md` committed, and the fake agent's script.
fn repo(script_lines: &[String]) -> Repo {
    let world = World::committed(&[
        ("src/lib.rs", "pub fn one() -> i32 { 1 }\n"),
        ("README.md", "project\n"),
    ]);
    let script = write_script(world.dir(), script_lines);
    Repo {
        root: world.project.clone(),
        world,
        script,
    }
}

fn context(repo: &Repo) -> MaidContext {
    let worker = WorkerMcpCommand {
        program: "/opt/butler".into(),
        args: vec!["worker-mcp".into()],
        env: vec![],
    };
    let mut ctx = MaidContext::new(&repo.root, worker);
    ctx.parent_env = vec![
        ("PATH".into(), std::env::var_os("PATH").expect("PATH")),
        (
            "FAKE_AGENT_SCRIPT".into(),
            repo.script.clone().into_os_string(),
        ),
        ("BUTLER_GITEA_TOKEN".into(), "secret".into()),
    ];
    ctx.env_allow = vec!["FAKE_AGENT_SCRIPT".into()];
    ctx.agents = HashMap::from([(
        AgentKind::Goose,
        AgentConfig {
            program: Some(fake_agent()),
            provider: Some("openai".into()),
            model: Some("fake-model".into()),
            ..Default::default()
        },
    )]);
    ctx.stagnation = Duration::from_secs(30);
    ctx.test_timeout = Duration::from_secs(30);
    ctx.grace = Duration::from_millis(300);
    // Detection after the run (maid/tests/integration/sandbox.rs runs agents confined).
    ctx.sandbox = butler_maid::SandboxSettings::off();
    ctx
}

fn request(tests: &[&str]) -> ImplementRequest {
    ImplementRequest {
        goal: "Add a greeting".into(),
        spec: "src/greet.rs holds `pub fn greet`".into(),
        target_paths: vec!["src/".into()],
        test_commands: tests.iter().map(|s| (*s).to_owned()).collect(),
        file_checks: vec![],
        agent: None,
        timeout_s: Some(60),
        issue_id: None,
        allow_test_changes: false,
    }
}

/// Validates the request and creates the task in the repository's ledger.
async fn contract(repo: &Repo, tests: &[&str]) -> TaskContract {
    prepare_task(&context(repo), request(tests), "test")
        .await
        .expect("prepared")
}

fn ledger(repo: &Repo) -> Ledger {
    Ledger::open(&repo.root.join(".git")).expect("ledger")
}

fn worktree(repo: &Repo, id: &str) -> PathBuf {
    repo.root
        .join(".git/butler/worktrees")
        .join(format!("task-{id}"))
}

/// The evidence of an implementation task's Result Contract.
fn evidence(result: ResultContract) -> ImplementEvidence {
    result
        .implementation()
        .cloned()
        .expect("an implementation result")
}

fn t(id: &str) -> TaskId {
    TaskId::new(id).expect("task id")
}

async fn run(
    repo: &Repo,
    c: TaskContract,
) -> (Result<ImplementEvidence, MaidError>, Vec<Progress>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let result = run_task(
        context(repo),
        c,
        &move |p| sink.lock().expect("lock").push(p),
        CancellationToken::new(),
    )
    .await
    .map(evidence);
    let seen = seen.lock().expect("lock").clone();
    (result, seen)
}

#[tokio::test]
async fn a_task_succeeds_on_its_own_branch_and_the_brains_tree_is_untouched() {
    let repo = repo(&[attempt(&[
        r#"{"do":"write","path":"src/greet.rs","text":"pub fn greet() {}\n"}"#,
    ])]);
    let head_before = repo.git(&repo.root, &["rev-parse", "HEAD"]);
    let (result, progress) = run(
        &repo,
        contract(&repo, &["grep -q 'pub fn greet' src/greet.rs"]).await,
    )
    .await;
    let result = result.expect("runs");
    assert_eq!(result.outcome, Outcome::Succeeded, "{result:#?}");
    assert_eq!(result.branch, "butler/task-t1");
    assert_eq!(result.attempts.len(), 1);
    let a = &result.attempts[0];
    assert_eq!(a.changed_files, vec!["src/greet.rs"]);
    assert!(!a.direct_git.detected);
    assert!(a.verify.tests[0].passed);
    assert!(a.record.is_some());
    // The Brain's tree and HEAD never change.
    assert_eq!(repo.git(&repo.root, &["rev-parse", "HEAD"]), head_before);
    assert_eq!(repo.git(&repo.root, &["status", "--porcelain"]), "");
    assert!(!repo.root.join("src/greet.rs").exists());
    // The work is a record on the task branch.
    assert_eq!(
        repo.git(&repo.root, &["log", "-1", "--format=%an", "butler/task-t1"]),
        "Butler Maid"
    );
    assert!(
        repo.git(&repo.root, &["log", "-1", "--format=%B", "butler/task-t1"])
            .contains("Butler-Task: t1")
    );
    assert_eq!(
        progress.first(),
        Some(&Progress::AttemptStarted { attempt: 1 })
    );
    assert_eq!(
        progress.last(),
        Some(&Progress::Finished {
            outcome: Outcome::Succeeded
        })
    );
    let task = ledger(&repo).task(&t("t1")).expect("read").expect("stored");
    assert_eq!(task.status, TaskStatus::Succeeded);
    let Some(TaskEnd::Result(stored)) = task.end else {
        panic!("a stored result: {:?}", task.end);
    };
    assert_eq!(evidence(stored), result);
    let attempts = ledger(&repo).task_attempts(&t("t1")).expect("attempts");
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].evidence.as_ref(), Some(&result.attempts[0]));
    // The Maid's commit is a complete ledger record linked to the task.
    let record = a.record.as_ref().expect("record");
    let body = repo.git(&repo.root, &["log", "-1", "--format=%B", "butler/task-t1"]);
    assert!(
        body.ends_with(&format!("Butler-Task: t1\nButler-Record: {record}")),
        "{body}"
    );
    let stored = ledger(&repo)
        .record_by_id(record.as_str())
        .expect("read")
        .expect("record");
    assert_eq!(
        stored.sha,
        repo.git(&repo.root, &["rev-parse", "butler/task-t1"])
    );
    assert!(!a.worker_mcp_reached);
    assert_eq!(a.warnings, vec!["worker MCP not reached"]);
}

#[tokio::test]
async fn unrecorded_changes_stop_the_task_before_it_starts() {
    let repo = repo(&[attempt(&[r#"{"do":"write","path":"src/x.rs","text":"x"}"#])]);
    std::fs::write(repo.root.join("README.md"), "edited\n").expect("write");
    let result = prepare_task(&context(&repo), request(&[]), "test").await;
    assert!(
        matches!(result, Err(MaidError::UnrecordedChanges(ref p)) if p == &["README.md"]),
        "{result:?}"
    );
    assert!(ledger(&repo).tasks(10).expect("list").is_empty());
    assert!(!repo.root.join(".git/butler/worktrees").exists());
    assert!(
        !repo.script.with_extension("jsonl.attempt").exists(),
        "the agent never started"
    );
}

#[tokio::test]
async fn direct_commits_and_out_of_scope_files_are_undone_reported_and_retried() {
    let repo = repo(&[
        attempt(&[
            r#"{"do":"write","path":"src/a.rs","text":"pub fn a() {}\n"}"#,
            r#"{"do":"sh","cmd":"git add -A && git commit -q -m 'agent wip'"}"#,
            r#"{"do":"write","path":"Cargo.toml","text":"[package]\n"}"#,
        ]),
        attempt(&[
            r#"{"do":"record_prompt","path":"../../tasks/t1/prompt-2.txt"}"#,
            r#"{"do":"write","path":"src/done","text":"ok"}"#,
        ]),
    ]);
    let (result, progress) = run(&repo, contract(&repo, &["test -f src/done"]).await).await;
    let result = result.expect("runs");
    assert_eq!(result.outcome, Outcome::Succeeded, "{result:#?}");
    assert_eq!(result.attempts.len(), 2);
    let first = &result.attempts[0];
    assert!(first.direct_git.detected);
    assert!(
        first.direct_git.findings.iter().any(|f| matches!(f, DirectGitFinding::Git(Tampering::Commits { count: 1, subjects }) if subjects == &["agent wip"])),
        "{:?}",
        first.direct_git.findings
    );
    assert_eq!(first.verify.scope_violation, vec!["Cargo.toml"]);
    assert_eq!(first.changed_files, vec!["Cargo.toml", "src/a.rs"]);
    assert!(!first.verify.tests[0].passed);
    // The agent's change was kept and recorded by the Maid; the out-of-scope file was not.
    let wt = worktree(&repo, "t1");
    assert!(wt.join("src/a.rs").is_file());
    assert!(!wt.join("Cargo.toml").exists());
    let files = repo.git(
        &repo.root,
        &["log", "--format=", "--name-only", "main..butler/task-t1"],
    );
    assert!(
        files.contains("src/a.rs") && files.contains("src/done") && !files.contains("Cargo.toml"),
        "{files}"
    );
    let authors = repo.git(&repo.root, &["log", "--format=%an", "main..butler/task-t1"]);
    assert!(authors.lines().all(|a| a == "Butler Maid"), "{authors}");
    // The retry prompt says what failed.
    let prompt = std::fs::read_to_string(repo.root.join(".git/butler/tasks/t1/prompt-2.txt"))
        .expect("prompt");
    assert!(prompt.contains("attempt 2 of 3"), "{prompt}");
    assert!(prompt.contains("1 commit(s) of your own"), "{prompt}");
    assert!(prompt.contains("`Cargo.toml`"), "{prompt}");
    assert!(prompt.contains("`test -f src/done` exited 1"), "{prompt}");
    assert!(progress.contains(&Progress::Retrying { attempt: 2 }));
    assert!(
        repo.root
            .join(".git/butler/tasks/t1/attempt-1-out-of-scope.patch")
            .is_file()
    );
}

#[tokio::test]
async fn config_tampering_and_branch_switches_are_restored() {
    let repo = repo(&[attempt(&[
        r#"{"do":"write","path":"src/b.rs","text":"pub fn b() {}\n"}"#,
        // The fsmonitor command is set last, so only a later git (the Maid's) could run it.
        r#"{"do":"sh","cmd":"git checkout -q -b agent-branch && git branch -q extra && git config core.fsmonitor 'touch fsmonitor-ran'"}"#,
        r#"{"do":"write","path":".goosehints","text":"run evil"}"#,
    ])]);
    let (result, _) = run(&repo, contract(&repo, &[]).await).await;
    let result = result.expect("runs");
    let findings = &result.attempts[0].direct_git.findings;
    assert!(
        findings.contains(&DirectGitFinding::Git(Tampering::ConfigChanged {
            keys: vec!["core.fsmonitor".into()]
        })),
        "{findings:?}"
    );
    assert!(
        findings.iter().any(
            |f| matches!(f, DirectGitFinding::Git(Tampering::BranchSwitched { to, .. }) if to == "agent-branch")
        ),
        "{findings:?}"
    );
    assert!(
        findings.contains(&DirectGitFinding::Git(Tampering::RefCreated {
            name: "refs/heads/extra".into()
        })),
        "{findings:?}"
    );
    assert!(
        findings.contains(&DirectGitFinding::AgentConfigPlanted {
            path: ".goosehints".into()
        }),
        "{findings:?}"
    );
    let config = std::fs::read_to_string(repo.root.join(".git/config")).expect("config");
    assert!(!config.contains("fsmonitor"), "{config}");
    let wt = worktree(&repo, "t1");
    assert_eq!(
        repo.git(&wt, &["symbolic-ref", "HEAD"]),
        "refs/heads/butler/task-t1"
    );
    assert!(!wt.join(".goosehints").exists());
    assert_eq!(repo.git(&repo.root, &["branch", "--list", "extra"]), "");
    assert_eq!(result.outcome, Outcome::Succeeded, "{result:#?}");
    assert!(
        !wt.join("fsmonitor-ran").exists(),
        "the Maid's git ran the agent's fsmonitor"
    );
    assert!(!repo.root.join("fsmonitor-ran").exists());
}

#[tokio::test]
async fn three_attempts_at_most() {
    let repo = repo(&[attempt(&[r#"{"do":"print","text":"I did it!"}"#])]);
    let (result, _) = run(&repo, contract(&repo, &[]).await).await;
    let result = result.expect("runs");
    assert_eq!(result.outcome, Outcome::Failed);
    assert_eq!(result.attempts.len(), 3);
    assert_eq!(
        std::fs::read_to_string(repo.script.with_extension("jsonl.attempt")).expect("counter"),
        "3"
    );
}

#[tokio::test]
async fn cancellation_stops_the_agent_and_ends_the_task() {
    let repo = repo(&[attempt(&[r#"{"do":"hang"}"#])]);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let result = run_task(context(&repo), contract(&repo, &[]).await, &|_| {}, cancel)
        .await
        .map(evidence)
        .expect("runs");
    assert_eq!(result.outcome, Outcome::Cancelled);
    assert_eq!(result.attempts.len(), 1);
    assert_eq!(
        result.attempts[0].agent_exit,
        butler_maid::Ending::Cancelled
    );
}

#[tokio::test]
async fn accept_brings_the_records_in_and_discard_keeps_the_branch() {
    let repo = repo(&[attempt(&[
        r#"{"do":"write","path":"src/greet.rs","text":"pub fn greet() {}\n"}"#,
    ])]);
    let mut c = contract(&repo, &[]).await;
    c.success_criteria.file_checks = butler_maid::contract::TaskContract::from_request(
        ImplementRequest {
            goal: "g".into(),
            target_paths: vec!["src/".into()],
            file_checks: vec![FileCheckSpec {
                path: "src/greet.rs".into(),
                exists: Some(true),
                ..Default::default()
            }],
            ..Default::default()
        },
        TaskId::new("x").expect("id"),
        "t",
        Timestamp::parse("2026-04-15T10:00:00+09:00").expect("time"),
    )
    .expect("valid")
    .success_criteria
    .file_checks;
    let (result, _) = run(&repo, c).await;
    let result = result.expect("runs");
    assert_eq!(result.outcome, Outcome::Succeeded);
    let tip = repo.git(&repo.root, &["rev-parse", "butler/task-t1"]);
    let accepted = accept(&repo.root, "t1", SystemClock::shared(), &[])
        .await
        .expect("accepted");
    assert_eq!(accepted.head, tip, "fast-forward");
    assert!(!accepted.merged);
    assert_eq!(accepted.records.len(), 1);
    assert_eq!(
        ledger(&repo)
            .task(&t("t1"))
            .expect("read")
            .expect("task")
            .status,
        TaskStatus::Accepted
    );
    assert!(repo.root.join("src/greet.rs").is_file());
    assert!(!worktree(&repo, "t1").exists());
    assert_eq!(
        repo.git(&repo.root, &["rev-parse", "refs/butler/accepted/task-t1"]),
        tip
    );

    std::fs::write(
        &repo.script,
        attempt(&[r#"{"do":"write","path":"src/other.rs","text":"x"}"#]),
    )
    .expect("script");
    let (result, _) = run(&repo, contract(&repo, &[]).await).await;
    assert_eq!(result.expect("runs").outcome, Outcome::Succeeded);
    let tip = repo.git(&repo.root, &["rev-parse", "butler/task-t2"]);
    discard(&repo.root, "t2", SystemClock::shared())
        .await
        .expect("discarded");
    assert!(!worktree(&repo, "t2").exists());
    assert_eq!(
        repo.git(&repo.root, &["rev-parse", "refs/butler/discarded/task-t2"]),
        tip
    );
    assert!(!repo.root.join("src/other.rs").exists());
    assert!(matches!(
        discard(&repo.root, "t2", SystemClock::shared()).await,
        Err(MaidError::NoSuchTask(_))
    ));
}

#[tokio::test]
async fn writes_into_the_brains_tree_are_reported_and_undone_without_loss() {
    let repo = repo(&[attempt(&[
        r#"{"do":"write","path":"src/c.rs","text":"pub fn c() {}\n"}"#,
        r#"{"do":"write","path":"../../../../README.md","text":"hijacked\n"}"#,
        r#"{"do":"write","path":"../../../../stray.txt","text":"agent file\n"}"#,
        r#"{"do":"sh","cmd":"git -C ../../../.. add stray.txt"}"#,
        r#"{"do":"write","path":"../escaped.txt","text":"beside the worktree\n"}"#,
    ])]);
    let (result, _) = run(&repo, contract(&repo, &[]).await).await;
    let result = result.expect("runs");
    let findings = &result.attempts[0].direct_git.findings;
    for path in ["README.md", "stray.txt"] {
        assert!(
            findings.contains(&DirectGitFinding::OutsideWrite { path: path.into() }),
            "{path}: {findings:?}"
        );
    }
    // The Brain's tree is as it was; nothing the agent wrote is lost.
    assert_eq!(repo.git(&repo.root, &["status", "--porcelain"]), "");
    assert_eq!(
        std::fs::read_to_string(repo.root.join("README.md")).expect("read"),
        "project\n"
    );
    let kept = repo.root.join(".git/butler/tasks/t1/attempt-1-outside");
    assert_eq!(
        std::fs::read_to_string(kept.join("stray.txt")).expect("kept"),
        "agent file\n"
    );
    assert_eq!(
        std::fs::read_to_string(kept.join("README.md")).expect("kept"),
        "hijacked\n"
    );
    assert!(
        findings.contains(&DirectGitFinding::OutsideWrite {
            path: "../escaped.txt".into()
        }),
        "{findings:?}"
    );
    assert!(!repo.root.join(".git/butler/worktrees/escaped.txt").exists());
    assert_eq!(
        std::fs::read_to_string(kept.join("beside-worktree/escaped.txt")).expect("kept"),
        "beside the worktree\n"
    );
    assert_eq!(result.outcome, Outcome::Succeeded, "{result:#?}");
}

#[tokio::test]
async fn accepting_after_the_line_moved_on_makes_a_merge_record() {
    let repo = repo(&[attempt(&[
        r#"{"do":"write","path":"src/greet.rs","text":"pub fn greet() {}\n"}"#,
    ])]);
    let (result, _) = run(&repo, contract(&repo, &[]).await).await;
    assert_eq!(result.expect("runs").outcome, Outcome::Succeeded);
    std::fs::write(repo.root.join("README.md"), "moved on\n").expect("write");
    repo.git(
        &repo.root,
        &["commit", "-q", "-am", "the Brain's own record"],
    );
    let accepted = accept(&repo.root, "t1", SystemClock::shared(), &[])
        .await
        .expect("accepted");
    assert!(accepted.merged);
    assert_eq!(accepted.records.len(), 2, "{accepted:?}");
    let merge = ledger(&repo)
        .record_by_id(accepted.records[1].as_str())
        .expect("read")
        .expect("merge record");
    assert_eq!(merge.sha, accepted.head);
    assert!(merge.message.starts_with("Accept task t1: Add a greeting"));
    assert!(repo.root.join("src/greet.rs").is_file());
    assert_eq!(repo.git(&repo.root, &["status", "--porcelain"]), "");
}

#[tokio::test]
async fn notes_through_the_worker_mcp_reach_the_ledger_and_the_evidence() {
    let repo = repo(&[attempt(&[
        r#"{"do":"mcp","record":"../../tasks/t1/mcp.jsonl","calls":[
            {"tool":"read_task"},
            {"tool":"leave_note","arguments":{"text":"greet needs a name"}},
            {"tool":"save_progress","arguments":{"summary":"half done"}},
            {"tool":"report_blocked","arguments":{"reason":"no network"}},
            {"tool":"leave_note","arguments":{"text":"  "}}]}"#
            .replace('\n', " ")
            .as_str(),
        r#"{"do":"write","path":"src/greet.rs","text":"pub fn greet() {}\n"}"#,
    ])]);
    let mut ctx = context(&repo);
    ctx.worker_mcp = WorkerMcpCommand {
        program: env!("CARGO_BIN_EXE_agent-mcp").into(),
        args: vec!["worker-mcp".into()],
        env: vec![],
    };
    let c = prepare_task(&ctx, request(&[]), "test")
        .await
        .expect("prepared");
    let result = run_task(ctx, c, &|_| {}, CancellationToken::new())
        .await
        .map(evidence)
        .expect("runs");
    let a = &result.attempts[0];
    assert!(a.worker_mcp_reached, "{a:#?}");
    assert!(a.warnings.is_empty());
    let notes: Vec<(&str, &str)> = a
        .agent_notes
        .iter()
        .map(|n| (n.kind.as_str(), n.text.as_str()))
        .collect();
    assert_eq!(
        notes,
        vec![
            ("note", "greet needs a name"),
            ("progress", "half done"),
            ("blocked", "no network")
        ]
    );
    let stored = ledger(&repo).task_notes(&t("t1"), 0).expect("notes");
    assert_eq!(stored.len(), 4, "connected + three notes: {stored:?}");
    let responses = std::fs::read_to_string(repo.root.join(".git/butler/tasks/t1/mcp.jsonl"))
        .expect("responses");
    let lines: Vec<serde_json::Value> = responses
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(
        lines[1]["result"]["structuredContent"]["goal"],
        "Add a greeting"
    );
    assert_eq!(
        lines[1]["result"]["structuredContent"]["target_paths"][0],
        "src/"
    );
    assert_eq!(
        lines[5]["result"]["isError"], true,
        "an empty note is refused"
    );
}

#[tokio::test]
async fn what_verification_produces_is_neither_recorded_nor_seen_by_the_next_attempt() {
    let world = World::committed(&[
        ("src/lib.rs", "pub fn one() -> i32 { 1 }\n"),
        ("README.md", "project\n"),
        (".gitignore", "*.pyc\nbuild/\n"),
    ]);
    let script = write_script(
        world.dir(),
        &[
            attempt(&[
                r#"{"do":"write","path":"src/greet.rs","text":"pub fn greet() {}\n"}"#,
                // Ignored, made by the agent before verification: it stays.
                r#"{"do":"write","path":"build/agent.log","text":"agent\n"}"#,
            ]),
            attempt(&[
                r#"{"do":"sh","cmd":"ls -a src build > src/seen.txt; cat README.md >> src/seen.txt"}"#,
                r#"{"do":"write","path":"src/done","text":"ok"}"#,
            ]),
        ],
    );
    let repo = Repo {
        root: world.project.clone(),
        world,
        script,
    };
    // An ignored artifact (a .pyc in a new directory, a file in an existing ignored one), an
    // unignored one, and a tracked file changed.
    let verify = "mkdir -p src/__pycache__ && echo x > src/__pycache__/greet.pyc \
                  && echo y > build/out && echo z > src/artifact.txt \
                  && echo changed >> README.md && test -f src/done";
    let (result, _) = run(&repo, contract(&repo, &[verify]).await).await;
    let result = result.expect("runs");
    assert_eq!(result.outcome, Outcome::Succeeded, "{result:#?}");
    assert_eq!(result.attempts.len(), 2);
    assert_eq!(
        result.attempts[1].changed_files,
        vec!["src/done", "src/seen.txt"],
        "the second attempt records only its own work"
    );
    let files = repo.git(
        &repo.root,
        &["log", "--format=", "--name-only", "main..butler/task-t1"],
    );
    let mut files: Vec<&str> = files.lines().filter(|l| !l.is_empty()).collect();
    files.sort_unstable();
    assert_eq!(files, ["src/done", "src/greet.rs", "src/seen.txt"]);
    let seen = repo.git(&repo.root, &["show", "butler/task-t1:src/seen.txt"]);
    assert!(
        !seen.contains("__pycache__") && !seen.contains("artifact") && !seen.contains("out"),
        "the next attempt saw the artifacts: {seen}"
    );
    assert!(seen.contains("agent.log"), "{seen}");
    assert!(!seen.contains("changed"), "{seen}");
    // After the last verification the worktree is the recorded state again.
    let wt = worktree(&repo, "t1");
    assert!(!wt.join("src/__pycache__").exists());
    assert!(!wt.join("src/artifact.txt").exists());
    assert!(!wt.join("build/out").exists());
    assert_eq!(
        std::fs::read_to_string(wt.join("build/agent.log")).expect("kept"),
        "agent\n"
    );
    assert_eq!(
        repo.git(&wt, &["status", "--porcelain", "--ignored"]),
        "!! build/"
    );
}
