//! The fake agent, driven the way the Maid drives a real one: an adapter's command line, the
//! agent environment, and supervision.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use butler_maid::agent::{AgentConfig, Launch, WorkerMcpCommand, adapter};
use butler_maid::env::{AgentEnvNeeds, EnvPolicy, GitIdentity, HomeChoice, agent_env};
use butler_maid::{AgentKind, ChildSpec, Ending, Limits, Stagnation, supervise};
use tokio_util::sync::CancellationToken;

use butler_testkit::fake_agent;

struct Setup {
    _dir: tempfile::TempDir,
    work: PathBuf,
    task: PathBuf,
    script: PathBuf,
}

fn setup(script_lines: &[&str]) -> Setup {
    let dir = tempfile::tempdir().expect("tempdir");
    let work = dir.path().join("work");
    let task = dir.path().join("task");
    std::fs::create_dir_all(&work).expect("mkdir");
    std::fs::create_dir_all(&task).expect("mkdir");
    let script = dir.path().join("script.jsonl");
    std::fs::write(&script, script_lines.join("\n")).expect("script");
    Setup {
        _dir: dir,
        work,
        task,
        script,
    }
}

fn worker() -> WorkerMcpCommand {
    WorkerMcpCommand {
        program: "/opt/butler".into(),
        args: vec!["worker-mcp".into()],
        env: vec![],
    }
}

/// Builds the command with `kind`'s adapter (program = the fake agent) and runs it.
async fn run_as(
    kind: AgentKind,
    s: &Setup,
    prompt: &str,
    limits: &Limits,
) -> butler_maid::Supervised {
    let parent: Vec<(OsString, OsString)> = vec![
        ("PATH".into(), "/usr/bin:/bin".into()),
        (
            "FAKE_AGENT_SCRIPT".into(),
            s.script.clone().into_os_string(),
        ),
        ("BUTLER_GITEA_TOKEN".into(), "secret".into()),
        ("OPENAI_BASE_URL".into(), "http://127.0.0.1:9/v1".into()),
    ];
    let policy = EnvPolicy {
        home: HomeChoice::Isolated(s.task.join("home")),
        allow: vec!["FAKE_AGENT_SCRIPT".into()],
        git_identity: GitIdentity::default(),
    };
    let config = AgentConfig {
        program: Some(fake_agent()),
        provider: Some("openai".into()),
        model: Some("fake-model".into()),
        ..Default::default()
    };
    let agent = adapter(kind, config);
    let env = agent_env(&parent, &policy, &agent.env_needs());
    let worker = worker();
    let targets = vec!["src/".to_owned()];
    let launch = Launch {
        prompt,
        workdir: &s.work,
        task_dir: &s.task,
        scratch: &s.task,
        worker_mcp: &worker,
        targets: &targets,
        env: &env,
        confined: false,
    };
    let cmd = agent.command(&launch).expect("command builds");
    cmd.write_files().expect("files written");
    let spec = ChildSpec {
        program: cmd.program.into_os_string(),
        args: cmd.args,
        cwd: s.work.clone(),
        env,
        stdin: cmd.stdin,
        reaper: false,
    };
    supervise(spec, limits, &CancellationToken::new()).await
}

fn limits() -> Limits {
    let mut l = Limits::new(Duration::from_secs(20));
    l.grace = Duration::from_millis(300);
    l
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[tokio::test]
async fn edits_files_and_records_prompt_args_and_env() {
    // One attempt is one line: the actions are joined onto it.
    let actions = [
        r#"{"do":"write","path":"src/lib.rs","text":"pub fn greet() {}\n"}"#,
        r#"{"do":"append","path":"src/lib.rs","text":"// more\n"}"#,
        r#"{"do":"record_prompt","path":"../task/prompt.txt"}"#,
        r#"{"do":"record_args","path":"../task/args.txt"}"#,
        r#"{"do":"record_env","path":"../task/env.txt"}"#,
        r#"{"do":"print","text":"done\n"}"#,
    ];
    let s = setup(&[&format!("[{}]", actions.join(","))]);
    let done = run_as(AgentKind::Goose, &s, "implement greet", &limits()).await;
    assert_eq!(
        done.ending,
        Ending::Exited { code: 0 },
        "{}",
        done.stderr.text()
    );
    assert_eq!(
        read(&s.work.join("src/lib.rs")),
        "pub fn greet() {}\n// more\n"
    );
    assert_eq!(read(&s.task.join("prompt.txt")), "implement greet");
    let args = read(&s.task.join("args.txt"));
    assert!(
        args.starts_with("run\n--instructions\n-\n--no-session"),
        "{args}"
    );
    let env = read(&s.task.join("env.txt"));
    assert!(env.contains("GOOSE_MODE=auto"), "{env}");
    assert!(
        env.contains(&format!("HOME={}", s.task.join("home").display())),
        "{env}"
    );
    assert!(!env.contains("BUTLER_GITEA_TOKEN"), "{env}");
    assert_eq!(done.stdout.text(), "done\n");
}

#[tokio::test]
async fn attempts_follow_the_script_lines_and_the_last_repeats() {
    let s = setup(&[
        r#"[{"do":"write","path":"a","text":"1"},{"do":"exit","code":3}]"#,
        r#"[{"do":"write","path":"a","text":"2"}]"#,
    ]);
    let first = run_as(AgentKind::Goose, &s, "p", &limits()).await;
    assert_eq!(first.ending, Ending::Exited { code: 3 });
    assert_eq!(read(&s.work.join("a")), "1");
    for _ in 0..2 {
        let next = run_as(AgentKind::Goose, &s, "p", &limits()).await;
        assert_eq!(next.ending, Ending::Exited { code: 0 });
        assert_eq!(read(&s.work.join("a")), "2");
    }
}

#[tokio::test]
async fn crash_hang_and_flood() {
    let s = setup(&[r#"[{"do":"crash"}]"#]);
    let done = run_as(AgentKind::Goose, &s, "p", &limits()).await;
    assert_eq!(
        done.ending,
        Ending::Signalled {
            signal: "SIGABRT".into()
        }
    );

    let s = setup(&[r#"[{"do":"print","text":"thinking"},{"do":"hang"}]"#]);
    let mut l = limits();
    l.stagnation = Some(Stagnation {
        after: Duration::from_millis(400),
        watch: Some(s.work.clone()),
    });
    let done = run_as(AgentKind::Goose, &s, "p", &l).await;
    assert!(
        matches!(done.ending, Ending::Stagnated { .. }),
        "{:?}",
        done.ending
    );

    let s = setup(&[r#"[{"do":"print","bytes":5000000}]"#]);
    let l = limits().keep(100, 100);
    let done = run_as(AgentKind::Goose, &s, "p", &l).await;
    assert_eq!(done.stdout.total_bytes(), 5_000_000);
    assert_eq!(done.stdout.kept_bytes(), 200);
}

#[tokio::test]
async fn shell_actions_run_in_the_worktree() {
    let s =
        setup(&[r#"[{"do":"sh","cmd":"pwd > here.txt; echo out-of-tree > ../task/outside.txt"}]"#]);
    run_as(AgentKind::Goose, &s, "p", &limits()).await;
    assert_eq!(
        read(&s.work.join("here.txt")).trim(),
        s.work.to_str().expect("utf-8")
    );
    assert_eq!(read(&s.task.join("outside.txt")), "out-of-tree\n");
}

#[tokio::test]
async fn other_adapters_command_lines_are_accepted() {
    for kind in [AgentKind::Claude, AgentKind::Codex, AgentKind::Aider] {
        let s = setup(&[
            r#"[{"do":"record_prompt","path":"prompt.txt"},{"do":"write","path":"src/x","text":"x"}]"#,
        ]);
        let done = run_as(kind, &s, "prompt for the agent", &limits()).await;
        assert_eq!(
            done.ending,
            Ending::Exited { code: 0 },
            "{kind:?}: {}",
            done.stderr.text()
        );
        assert_eq!(
            read(&s.work.join("prompt.txt")),
            "prompt for the agent",
            "{kind:?}"
        );
        assert_eq!(read(&s.work.join("src/x")), "x", "{kind:?}");
    }
}

#[tokio::test]
async fn without_a_script_it_fails_loudly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = ChildSpec {
        program: fake_agent().into(),
        args: vec![],
        cwd: dir.path().to_path_buf(),
        env: Default::default(),
        stdin: None,
        reaper: false,
    };
    let done = supervise(spec, &limits(), &CancellationToken::new()).await;
    assert_eq!(done.ending, Ending::Exited { code: 2 });
    assert!(done.stderr.text().contains("FAKE_AGENT_SCRIPT is not set"));
}

#[test]
fn agent_env_needs_are_public_for_the_lead() {
    // The orchestrator builds environments with these types too.
    let _ = AgentEnvNeeds::default();
}
