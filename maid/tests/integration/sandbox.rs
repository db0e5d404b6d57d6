//! The Maid's sandbox decisions and task directories with real git repositories, the fake
//! agent and the stand-alone sandbox helper: `auto` on a kernel without Landlock (an injected
//! probe) runs unconfined and says so, `required` then refuses before anything exists,
//! `required` on this kernel confines; worktrees live under the configured data directory,
//! beside the agent's own directory, and accepting or discarding a task removes both (also
//! when the worktree vanished).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use butler_maid::agent::{AgentConfig, WorkerMcpCommand};
use butler_maid::contract::ImplementRequest;
use butler_maid::{
    AgentKind, ImplementEvidence, MaidContext, MaidError, Outcome, SandboxSettings, TaskId, accept,
    discard, prepare_task, run_task,
};
use butler_testkit::World;
use butler_testkit::fake_agent::fake_agent;
use butler_worker::ledger::Ledger;
use butler_worker::sandbox::{KernelProbe, RunningKernel, SandboxMode};
use butler_worker::time::SystemClock;
use tokio_util::sync::CancellationToken;

const HELPER: &str = env!("CARGO_BIN_EXE_sandbox-exec");
const WORKER: &str = env!("CARGO_BIN_EXE_agent-mcp");

/// A kernel without Landlock.
#[derive(Debug)]
struct NoLandlock;

impl KernelProbe for NoLandlock {
    fn landlock_abi(&self) -> Option<u8> {
        None
    }
}

struct Repo {
    world: World,
    root: PathBuf,
    script: PathBuf,
    data: PathBuf,
}

impl Repo {
    /// Runs git in `dir` as the project's user; its stdout, trimmed.
    fn git(&self, dir: &Path, args: &[&str]) -> String {
        self.world.git(dir, args).trim().to_owned()
    }

    /// A path in the world's temp dir, outside the project.
    fn outside(&self, name: &str) -> PathBuf {
        self.world.path(name)
    }
}

fn repo(actions: &str) -> Repo {
    let world = World::committed(&[("src/lib.rs", "pub fn one() {}\n")]);
    let script = world.path("script.jsonl");
    std::fs::write(&script, format!("[{actions}]")).expect("script");
    Repo {
        data: world.path("data"),
        root: world.project.clone(),
        script,
        world,
    }
}

fn context(repo: &Repo, mode: SandboxMode, probe: Arc<dyn KernelProbe>) -> MaidContext {
    let worker = WorkerMcpCommand {
        program: WORKER.into(),
        args: vec!["worker-mcp".into()],
        env: vec![],
    };
    let mut ctx = MaidContext::new(&repo.root, worker);
    ctx.parent_env = vec![
        ("PATH".into(), std::env::var_os("PATH").expect("PATH")),
        ("FAKE_AGENT_SCRIPT".into(), repo.script.clone().into()),
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
    ctx.worktrees_root = Some(repo.data.clone());
    ctx.sandbox = SandboxSettings {
        mode,
        helper: Some(HELPER.into()),
        probe,
        ..SandboxSettings::default()
    };
    ctx
}

fn request() -> ImplementRequest {
    ImplementRequest {
        goal: "Add a greeting".into(),
        target_paths: vec!["src/".into()],
        test_commands: vec!["test -f src/greet.rs".into()],
        timeout_s: Some(60),
        ..Default::default()
    }
}

const GREET: &str = r#"{"do":"write","path":"src/greet.rs","text":"pub fn greet() {}\n"}"#;

async fn run(ctx: MaidContext) -> ImplementEvidence {
    let contract = prepare_task(&ctx, request(), "test")
        .await
        .expect("prepared");
    run_task(ctx, contract, &|_| {}, CancellationToken::new())
        .await
        .expect("runs")
        .implementation()
        .cloned()
        .expect("an implementation result")
}

#[tokio::test]
async fn auto_without_landlock_runs_unconfined_and_the_evidence_says_so() {
    let repo = repo("");
    let outside = repo.outside("outside.txt");
    std::fs::write(
        &repo.script,
        format!(
            "[{GREET},{{\"do\":\"try_write\",\"path\":\"{}\",\"text\":\"x\"}}]",
            outside.display()
        ),
    )
    .expect("script");
    let result = run(context(&repo, SandboxMode::Auto, Arc::new(NoLandlock))).await;
    assert_eq!(result.outcome, Outcome::Succeeded, "{result:#?}");
    let sandbox = result.attempts[0].sandbox.as_ref().expect("report");
    assert!(!sandbox.applied);
    assert!(!sandbox.verify_confined);
    assert!(
        sandbox
            .not_applied
            .as_deref()
            .expect("why")
            .contains("no Landlock"),
        "{sandbox:?}"
    );
    assert_eq!(sandbox.landlock_abi, None);
    assert!(sandbox.writable.is_empty());
    assert!(outside.exists(), "unconfined, the write went through");
}

#[tokio::test]
async fn required_without_landlock_refuses_before_anything_exists() {
    let repo = repo(GREET);
    let ctx = context(&repo, SandboxMode::Required, Arc::new(NoLandlock));
    let err = prepare_task(&ctx, request(), "test")
        .await
        .expect_err("refused");
    assert!(matches!(err, MaidError::SandboxUnavailable(_)), "{err}");
    assert!(err.to_string().contains("no Landlock"), "{err}");
    assert!(
        Ledger::open(&repo.root.join(".git"))
            .expect("ledger")
            .tasks(10)
            .expect("tasks")
            .is_empty()
    );
    assert!(!repo.data.exists(), "no worktree directory");
    assert_eq!(repo.git(&repo.root, &["branch", "--list", "butler/*"]), "");
    assert!(!repo.script.with_extension("jsonl.attempt").exists());
}

#[tokio::test]
async fn required_on_this_kernel_confines_the_agent_and_its_worker_mcp() {
    let repo = repo("");
    let outside = repo.outside("outside.txt");
    std::fs::write(
        &repo.script,
        format!(
            "[{GREET},{{\"do\":\"try_write\",\"path\":\"{}\",\"text\":\"x\"}},\
             {{\"do\":\"mcp\",\"calls\":[{{\"tool\":\"save_progress\",\"arguments\":{{\"summary\":\"done\"}}}}]}}]",
            outside.display()
        ),
    )
    .expect("script");
    let result = run(context(
        &repo,
        SandboxMode::Required,
        Arc::new(RunningKernel),
    ))
    .await;
    assert_eq!(result.outcome, Outcome::Succeeded, "{result:#?}");
    let a = &result.attempts[0];
    let sandbox = a.sandbox.as_ref().expect("report");
    assert!(sandbox.applied, "{sandbox:?}");
    assert_eq!(sandbox.mode, SandboxMode::Required);
    assert!(sandbox.verify_confined);
    assert!(!outside.exists());
    assert!(
        sandbox
            .refused
            .iter()
            .any(|r| r.target.as_deref() == Some(&*outside.to_string_lossy())),
        "{sandbox:?}"
    );
    assert!(a.worker_mcp_reached);
    assert_eq!(a.agent_notes[0].text, "done");
}

#[tokio::test]
async fn worktrees_live_in_the_data_directory_and_leave_with_their_task() {
    let repo = repo(GREET);
    let ctx = context(&repo, SandboxMode::Auto, Arc::new(RunningKernel));
    let result = run(ctx.clone()).await;
    assert_eq!(result.outcome, Outcome::Succeeded, "{result:#?}");
    let row = Ledger::open(&repo.root.join(".git"))
        .expect("ledger")
        .task(&TaskId::new("t1").expect("id"))
        .expect("read")
        .expect("task");
    let worktree = PathBuf::from(row.worktree.expect("worktree recorded"));
    assert_eq!(worktree.parent().and_then(Path::parent), Some(&*repo.data));
    assert!(worktree.join("src/greet.rs").is_file());
    let agent_dir = PathBuf::from(format!("{}.agent", worktree.display()));
    assert!(agent_dir.join("home/.gitconfig").is_file());
    assert!(!repo.root.join(".git/butler/worktrees").exists());
    accept(&repo.root, "t1", SystemClock::shared(), &[])
        .await
        .expect("accepted");
    assert!(!worktree.exists());
    assert!(!agent_dir.exists());
    assert!(repo.root.join("src/greet.rs").is_file());

    // A second task whose worktree vanished is still discarded cleanly.
    std::fs::write(
        &repo.script,
        r#"[{"do":"write","path":"src/other.rs","text":"pub fn other() {}\n"}]"#,
    )
    .expect("script");
    let _ = std::fs::remove_file(repo.script.with_extension("jsonl.attempt"));
    let result = run(ctx).await;
    assert_eq!(result.outcome, Outcome::Succeeded, "{result:#?}");
    let worktree = worktree.with_file_name("task-t2");
    std::fs::remove_dir_all(&worktree).expect("vanish");
    discard(&repo.root, "t2", SystemClock::shared())
        .await
        .expect("discarded");
    assert!(!PathBuf::from(format!("{}.agent", worktree.display())).exists());
    assert_eq!(
        repo.git(&repo.root, &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );
    assert_eq!(repo.git(&repo.root, &["branch", "--list", "butler/*"]), "");
}

/// The supervision of a command under the helper is dropped (as when Butler gives up on it):
/// the helper is asked to stop rather than killed, so the daemon the command left in a session
/// of its own (SIGTERM ignored) is ended too, and the helper's account names it.
#[tokio::test]
async fn a_dropped_supervision_lets_the_helper_end_what_the_command_left() {
    use butler_worker::process::{ChildEnv, ChildSpec, Limits, supervise};
    use butler_worker::sandbox::HelperRun;

    let dir = tempfile::tempdir().expect("tempdir");
    let (pid_file, leftovers) = (dir.path().join("daemon"), dir.path().join("left.jsonl"));
    let script = format!(
        "(setsid env -i /bin/sh -c \"trap '' TERM; echo \\$\\$ > {}; exec sleep 300\" \
         </dev/null >/dev/null 2>&1 &); exec sleep 300",
        pid_file.display()
    );
    let mut env = ChildEnv::new();
    env.set("PATH", std::env::var_os("PATH").expect("PATH"));
    let mut limits = Limits::new(Duration::from_secs(60));
    limits.grace = Duration::from_millis(600);
    let spec = HelperRun {
        policy: None,
        leftovers: Some(&leftovers),
        syscalls: None,
        grace: limits.grace,
    }
    .wrap(
        Path::new(HELPER),
        ChildSpec::shell(&script, dir.path(), env),
    );
    let cancel = CancellationToken::new();
    let run = supervise(spec, &limits, &cancel);
    let _ = tokio::time::timeout(Duration::from_millis(800), run).await;
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .expect("the daemon's pid")
        .trim()
        .parse()
        .expect("a pid");
    let mut gone = false;
    for _ in 0..100 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.contains(") Z") {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if !gone {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    assert!(gone, "the daemon {pid} outlived its dropped supervision");
    // The helper writes its account once it has reaped everything, a moment after the daemon
    // shows as ended (a zombie): a busy machine (other tests in this process) widens the gap.
    let named = format!("\"pid\":{pid},");
    let mut account = String::new();
    for _ in 0..100 {
        account = std::fs::read_to_string(&leftovers).unwrap_or_default();
        if account.contains(&named) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(account.contains(&named), "{account}");
    assert!(account.contains("SIGKILL"), "{account}");
}

/// The helper passes the command's ending on (its code, or the signal that ended it), and the
/// command starts with no signal blocked (the reaper blocks the ones it reads for itself).
#[tokio::test]
async fn the_helper_passes_the_commands_ending_on_and_blocks_no_signal_of_it() {
    use butler_worker::process::{ChildEnv, ChildSpec, Ending, Limits, supervise};
    use butler_worker::sandbox::{HelperRun, Network, Policy};

    let dir = tempfile::tempdir().expect("tempdir");
    let policy = dir.path().join("policy.json");
    Policy::new(SandboxMode::Auto, vec![dir.path().into()], Network::Open)
        .write_to(&policy)
        .expect("policy");
    let report = dir.path().join("report.json");
    let leftovers = dir.path().join("left.jsonl");
    let limits = Limits::new(Duration::from_secs(30));
    let mut env = ChildEnv::new();
    env.set("PATH", std::env::var_os("PATH").expect("PATH"));
    let never = CancellationToken::new();
    for confined in [false, true] {
        let run = |script: &str| {
            let spec = HelperRun {
                policy: confined.then_some((policy.as_path(), report.as_path())),
                leftovers: Some(&leftovers),
                syscalls: None,
                grace: limits.grace,
            }
            .wrap(
                Path::new(HELPER),
                ChildSpec::shell(script, dir.path(), env.clone()),
            );
            supervise(spec, &limits, &never)
        };
        assert_eq!(run("exit 7").await.ending, Ending::Exited { code: 7 });
        assert_eq!(
            run("kill -TERM $$").await.ending,
            Ending::Signalled {
                signal: "SIGTERM".into()
            }
        );
        let masks = run("grep -E '^Sig(Blk|Ign)' /proc/self/status").await;
        let text = masks.stdout.text();
        assert!(text.contains("SigBlk:\t0000000000000000"), "{text}");
        let missing = run("exec /nonexistent/agent").await;
        assert_eq!(missing.ending, Ending::Exited { code: 127 }, "{confined}");
    }
    assert_eq!(
        std::fs::read_to_string(&leftovers).unwrap_or_default(),
        "",
        "nothing was left running, nothing reported"
    );
}

/// A fake home holding a dummy secret in every store of the deny table (`.kube` a link to a
/// store elsewhere), ordinary files beside them, Butler's configuration and data directories
/// with this task's worktree and another task's; the secrets' paths.
fn fake_home(root: &Path) -> Vec<PathBuf> {
    use butler_worker::sandbox::deny_read::{Base, STORES};
    let home = root.join("home");
    let file_like = |name: &str| {
        [
            ".netrc",
            ".git-credentials",
            ".gitcookies",
            ".npmrc",
            ".pypirc",
            "config.json",
            "auth.json",
            "credentials",
            "credentials.tfrc.json",
        ]
        .contains(&name)
    };
    let mut secrets = Vec::new();
    for store in STORES {
        let base = match store.base {
            Base::Home => home.clone(),
            Base::Config => home.join(".config"),
            Base::Data => home.join(".local/share"),
        };
        let paths = match store.path.strip_suffix('*') {
            Some(prefix) => vec![base.join(prefix), base.join(format!("{prefix}.toml"))],
            None => vec![base.join(store.path)],
        };
        for path in paths {
            let name = path.file_name().and_then(|n| n.to_str()).expect("name");
            let (dir, file) = if file_like(name) || name.ends_with(".toml") {
                (path.parent().expect("parent").to_path_buf(), path.clone())
            } else if name == ".kube" {
                // A store that is a link: denied at its target too.
                let target = root.join("elsewhere/kube");
                std::fs::create_dir_all(&target).expect("mkdir");
                std::os::unix::fs::symlink(&target, &path).expect("link");
                secrets.push(target.join("config"));
                (target.clone(), target.join("config"))
            } else {
                (path.clone(), path.join("secret"))
            };
            std::fs::create_dir_all(&dir).expect("mkdir");
            std::fs::write(&file, "dummy-secret\n").expect("secret");
            if name == ".kube" {
                secrets.push(path.join("config"));
            } else {
                secrets.push(file);
            }
        }
    }
    for (rel, text) in [
        (".bashrc", "alias ll='ls -l'\n"),
        ("notes.txt", "ordinary\n"),
        (".cargo/config.toml", "[build]\n"),
        (".config/nvim/init.lua", "-- editor\n"),
        (".config/butler/http-token", "butler-token\n"),
        (
            ".local/share/butler/worktrees/p/task-t0/secret.rs",
            "another task\n",
        ),
        (
            ".local/share/butler/worktrees/p/task-t1/src/lib.rs",
            "pub fn one() {}\n",
        ),
        (
            ".local/share/butler/worktrees/p/task-t1.agent/home/.keep",
            "",
        ),
        ("vault.txt", "configured\n"),
    ] {
        let path = home.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
    std::fs::create_dir_all(home.join(".cache")).expect("mkdir");
    for rel in [
        ".config/butler/http-token",
        ".local/share/butler/worktrees/p/task-t0/secret.rs",
        "vault.txt",
    ] {
        secrets.push(home.join(rel));
    }
    secrets
}

/// Runs `script` under the helper with `policy`; its stdout and stderr.
async fn confined_output(
    dir: &Path,
    policy: &butler_worker::sandbox::Policy,
    script: &str,
) -> String {
    use butler_worker::process::{ChildEnv, ChildSpec, Limits, supervise};
    use butler_worker::sandbox::HelperRun;
    let (file, report) = (dir.join("policy.json"), dir.join("report.json"));
    policy.write_to(&file).expect("policy");
    let mut env = ChildEnv::new();
    env.set("PATH", std::env::var_os("PATH").expect("PATH"));
    env.set("HOME", dir.join("home"));
    let limits = Limits::new(Duration::from_secs(30));
    let spec = HelperRun {
        policy: Some((&file, &report)),
        leftovers: None,
        syscalls: None,
        grace: limits.grace,
    }
    .wrap(
        Path::new(HELPER),
        ChildSpec::shell(script, dir.join("home"), env),
    );
    let out = supervise(spec, &limits, &CancellationToken::new()).await;
    let text = std::fs::read_to_string(&report).expect("report");
    assert!(text.contains("\"enforcement\":\"full\""), "{text}");
    format!("{}{}", out.stdout.text(), out.stderr.text())
}

/// Every store of the deny table, Butler's token, another task's worktree and a configured
/// entry are unreadable from inside (Permission denied from the kernel), as are the user's
/// terminals and Butler's `/proc/<pid>/mem`; the home beside them, the task's worktree
/// (inside Butler's data directory) and system files stay readable, and the home can be listed.
#[tokio::test]
async fn credential_stores_are_unreadable_inside_and_the_rest_of_home_is_not() {
    use butler_worker::sandbox::deny_read::{UserDirs, deny_list};
    use butler_worker::sandbox::{Network, Policy};

    let tmp = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(tmp.path()).expect("real");
    let secrets = fake_home(&root);
    let home = root.join("home");
    let wt = home.join(".local/share/butler/worktrees/p/task-t1");
    let agent_dir = home.join(".local/share/butler/worktrees/p/task-t1.agent");
    let user = UserDirs {
        home: Some(home.clone()),
        ..UserDirs::default()
    };
    let denied = deny_list(&user, &["~/vault.txt".to_owned()]);
    let mut policy = Policy::new(
        SandboxMode::Required,
        vec![wt.clone(), agent_dir.clone()],
        Network::Open,
    );
    policy.deny_read = denied.iter().map(|d| d.path.clone()).collect();
    let quoted = |p: &Path| format!("'{}'", p.display());
    // A file in `/dev/shm`, written outside: nothing of `/dev` but its listed devices is
    // readable inside.
    let shm = PathBuf::from(format!("/dev/shm/butler-deny-read-{}", std::process::id()));
    std::fs::write(&shm, "shared\n").expect("shm");
    let mut script = String::new();
    for secret in &secrets {
        script.push_str(&format!(
            "cat {0} >/dev/null && echo \"READ {1}\"\n",
            quoted(secret),
            secret.display()
        ));
    }
    script.push_str(&format!(
        "cat ~/.bashrc ~/notes.txt ~/.cargo/config.toml ~/.config/nvim/init.lua {lib} /etc/hosts \
         >/dev/null && echo 'home: ok'\n\
         test -x /usr/bin/env && /usr/bin/env true && cat /usr/bin/env >/dev/null && echo 'system: ok'\n\
         echo 'pub fn two() {{}}' >> {lib} && echo 'worktree: ok'\n\
         ls -a ~ | tr '\\n' ' '; echo\n\
         echo x > /dev/null && echo 'dev null: ok'\n\
         cat /proc/self/status >/dev/null && echo 'proc self: ok'\n\
         head -c1 /proc/{pid}/mem >/dev/null\n\
         (exec 3<>/dev/ptmx)\n\
         (exec 3<>/dev/tty)\n\
         cat {shm}\n\
         ls /dev/pts >/dev/null && echo 'dev pts: listed only'\n",
        lib = quoted(&wt.join("src/lib.rs")),
        pid = std::process::id(),
        shm = shm.display(),
    ));
    let out = confined_output(&root, &policy, &script).await;
    let _ = std::fs::remove_file(&shm);

    for secret in &secrets {
        let line = format!("cat: {}: Permission denied", secret.display());
        assert!(out.contains(&line), "{line}\n{out}");
    }
    assert!(!out.contains("READ "), "{out}");
    for ok in [
        "home: ok",
        "system: ok",
        "worktree: ok",
        "dev null: ok",
        "proc self: ok",
    ] {
        assert!(out.contains(ok), "{ok}\n{out}");
    }
    assert!(
        out.contains(" .bashrc ") && out.contains(" .ssh "),
        "ls ~\n{out}"
    );
    // Another process's `/proc/<pid>/mem` is refused by Landlock's ptrace scoping. Its
    // `environ` is not, on this kernel (Linux 6.18: a same-user process outside the domain
    // reads it): see docs/sandbox.md, "What the sandbox does not cover".
    let mem = format!("/proc/{}/mem", std::process::id());
    assert!(
        out.lines()
            .any(|l| l.contains(&mem) && l.contains("Permission denied")),
        "{mem}\n{out}"
    );
    // The user's terminals: not opened (listing `/dev` is the along-the-way right of `/`).
    for dev in ["/dev/ptmx", "/dev/tty", &*shm.to_string_lossy()] {
        assert!(
            out.lines()
                .any(|l| l.contains(dev) && l.contains("Permission denied")),
            "{dev}\n{out}"
        );
    }
    let names: Vec<&str> = denied.iter().map(|d| d.name.as_str()).collect();
    for name in [
        "~/.ssh",
        "~/.cargo/credentials.toml",
        "~/.config/butler",
        "~/vault.txt",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
}

/// With the user's home writable (`real_home`), the stores in it are neither readable nor
/// writable: no new file in `~/.ssh`, no append to `~/.netrc`, no renaming the store away;
/// existing entries beside them stay writable, and new ones can be made inside them.
#[tokio::test]
async fn a_writable_home_keeps_its_stores_unwritable() {
    use butler_worker::sandbox::deny_read::{UserDirs, deny_list};
    use butler_worker::sandbox::{Network, Policy};

    let tmp = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(tmp.path()).expect("real");
    fake_home(&root);
    let home = root.join("home");
    let user = UserDirs {
        home: Some(home.clone()),
        ..UserDirs::default()
    };
    let mut policy = Policy::new(SandboxMode::Required, vec![home.clone()], Network::Open);
    policy.deny_read = deny_list(&user, &[]).into_iter().map(|d| d.path).collect();
    let out = confined_output(
        &root,
        &policy,
        "echo evil > ~/.ssh/authorized_keys\n\
         echo evil >> ~/.netrc\n\
         rm ~/.ssh/secret\n\
         mv ~/.ssh ~/moved\n\
         ln ~/.netrc ~/.cache/netrc\n\
         cat ~/.ssh/secret\n\
         echo ok >> ~/.bashrc && echo 'bashrc: ok'\n\
         mkdir ~/.cache/tool && echo x > ~/.cache/tool/f && echo 'cache: ok'\n\
         touch ~/new-at-top\n\
         ls ~/.ssh\n",
    )
    .await;
    for refused in [
        "/.ssh/authorized_keys: Permission denied",
        "/.netrc: Permission denied",
        "cannot remove",
        "cannot move",
        "failed to create hard link",
        "/.ssh/secret: Permission denied",
        // The cost of splitting the home: nothing new directly in it.
        "/new-at-top': Permission denied",
    ] {
        assert!(out.contains(refused), "{refused}\n{out}");
    }
    assert!(
        out.contains("bashrc: ok") && out.contains("cache: ok"),
        "{out}"
    );
    // A denied directory's names can be listed (the right of the directories on the way).
    assert!(out.lines().any(|l| l == "secret"), "{out}");
    assert!(!home.join(".ssh/authorized_keys").exists());
    assert!(home.join(".ssh/secret").is_file() && !home.join("moved").exists());
    assert_eq!(
        std::fs::read_to_string(home.join(".netrc")).expect("netrc"),
        "dummy-secret\n"
    );
    assert!(!home.join(".cache/netrc").exists());
}

/// `[agent] worktrees_dir` set to a directory that also holds the project: other tasks'
/// worktrees there are denied, yet the task's agent and verify commands still read the
/// repository (its working tree and git directory are readable on their own).
#[tokio::test]
async fn a_worktrees_dir_holding_the_project_leaves_the_repository_readable() {
    let repo = repo("");
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let script = elsewhere.path().join("script.jsonl");
    std::fs::write(&script, format!("[{GREET}]")).expect("script");
    let mut ctx = context(&repo, SandboxMode::Required, Arc::new(RunningKernel));
    ctx.parent_env = vec![
        ("PATH".into(), std::env::var_os("PATH").expect("PATH")),
        ("FAKE_AGENT_SCRIPT".into(), script.into()),
    ];
    let holder = repo.world.dir().to_path_buf();
    assert!(repo.root.starts_with(&holder));
    std::fs::create_dir_all(holder.join("other-task")).expect("mkdir");
    std::fs::write(holder.join("other-task/secret.rs"), "theirs\n").expect("write");
    ctx.worktrees_root = Some(holder.clone());
    let contract = prepare_task(
        &ctx,
        ImplementRequest {
            test_commands: vec![
                "test -f src/greet.rs && git log --oneline".into(),
                format!("! cat {}/other-task/secret.rs", holder.display()),
            ],
            ..request()
        },
        "test",
    )
    .await
    .expect("prepared");
    let result = run_task(ctx, contract, &|_| {}, CancellationToken::new())
        .await
        .expect("ran")
        .implementation()
        .cloned()
        .expect("an implementation result");
    let a = &result.attempts[0];
    let sandbox = a.sandbox.as_ref().expect("report");
    assert!(sandbox.applied, "{sandbox:?}");
    assert!(
        sandbox.denied_read.contains(&holder.display().to_string()),
        "{sandbox:?}"
    );
    // The agent wrote its file and git read the repository; the other task's file was refused.
    assert!(
        sandbox.refused.iter().any(|r| r
            .target
            .as_deref()
            .is_some_and(|t| t.ends_with("other-task/secret.rs"))),
        "{a:#?}"
    );
    // Both test commands passed: git read the repository, the other task's file was refused.
    assert_eq!(result.outcome, Outcome::Succeeded, "{result:#?}");
    let git = &a.verify.tests[0];
    assert!(
        git.passed && git.output_tail.contains("Initial commit"),
        "{git:?}"
    );
}

/// A confined command cannot read the environment of a process outside the sandbox — the
/// helper's own reaper here, Butler in real use — even as root: the helper drops the
/// capabilities that would let it past Landlock's ptrace scoping. Unconfined, it can.
#[tokio::test]
async fn a_confined_command_reads_no_environment_outside_the_sandbox() {
    use butler_worker::process::{ChildEnv, ChildSpec, Limits, supervise};
    use butler_worker::sandbox::{HelperRun, Network, Policy};

    let dir = tempfile::tempdir().expect("tempdir");
    let policy = dir.path().join("policy.json");
    Policy::new(
        SandboxMode::Required,
        vec![dir.path().into()],
        Network::Open,
    )
    .write_to(&policy)
    .expect("policy");
    let report = dir.path().join("report.json");
    let limits = Limits::new(Duration::from_secs(30));
    let mut env = ChildEnv::new();
    env.set("PATH", std::env::var_os("PATH").expect("PATH"));
    env.set("SECRET_MARK", "mark-4b1e");
    let never = CancellationToken::new();
    let script = "for f in environ maps auxv; do \
                    if head -c 100000 /proc/$PPID/$f > /dev/null 2>&1; then echo \"$f read\"; \
                    else echo \"$f refused\"; fi; done; \
                  tr '\\0' '\\n' < /proc/$PPID/environ 2>/dev/null | grep SECRET_MARK; \
                  grep -E '^Cap(Eff|Bnd)' /proc/self/status";
    let mut seen = Vec::new();
    for confined in [false, true] {
        let spec = HelperRun {
            policy: confined.then_some((policy.as_path(), report.as_path())),
            leftovers: None,
            syscalls: None,
            grace: limits.grace,
        }
        .wrap(
            Path::new(HELPER),
            ChildSpec::shell(script, dir.path(), env.clone()),
        );
        seen.push(supervise(spec, &limits, &never).await.stdout.text());
    }
    assert!(seen[0].contains("SECRET_MARK=mark-4b1e"), "{}", seen[0]);
    let confined = &seen[1];
    assert!(!confined.contains("mark-4b1e"), "{confined}");
    for f in ["environ", "maps", "auxv"] {
        assert!(confined.contains(&format!("{f} refused")), "{confined}");
    }
    // CAP_SYS_ADMIN (21), CAP_PERFMON (38), CAP_SYS_PTRACE (19) in neither set.
    for line in confined.lines().filter(|l| l.starts_with("Cap")) {
        let set =
            u64::from_str_radix(line.split_whitespace().nth(1).expect("set"), 16).expect("hex");
        assert_eq!(set & ((1 << 21) | (1 << 38) | (1 << 19)), 0, "{line}");
    }
}
