//! Supervision of real `sh -c` children: every way a child can end, and that nothing of its
//! process group survives.

use std::path::Path;
use std::time::{Duration, Instant};

use butler_worker::process::{
    ChildEnv, ChildSpec, Ending, Limits, Stagnation, converse, run_blocking, supervise,
};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

fn env() -> ChildEnv {
    let mut env = ChildEnv::new();
    env.set("PATH", "/usr/bin:/bin");
    env
}

fn sh(script: &str, dir: &Path) -> ChildSpec {
    ChildSpec::shell(script, dir, env())
}

fn limits(wall_ms: u64) -> Limits {
    let mut l = Limits::new(Duration::from_millis(wall_ms));
    l.grace = Duration::from_millis(300);
    l
}

/// Whether a process with this pid exists (and is not a zombie).
fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn read_pid(path: &Path) -> i32 {
    for _ in 0..100 {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("no pid written to {}", path.display());
}

async fn gone_within(pid: i32, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if !running(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    !running(pid)
}

#[tokio::test]
async fn normal_exit_keeps_output_and_code() {
    let dir = tempfile::tempdir().expect("tempdir");
    let done = supervise(
        sh("echo hello; echo oops >&2; exit 0", dir.path()),
        &limits(10_000),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(done.ending, Ending::Exited { code: 0 });
    assert_eq!(done.stdout.text(), "hello\n");
    assert_eq!(done.stderr.text(), "oops\n");
}

#[tokio::test]
async fn stdin_is_fed_then_closed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut spec = sh("cat; echo done", dir.path());
    spec.stdin = Some(b"the prompt\n".to_vec());
    let done = supervise(spec, &limits(10_000), &CancellationToken::new()).await;
    assert_eq!(done.ending, Ending::Exited { code: 0 });
    assert_eq!(done.stdout.text(), "the prompt\ndone\n");
}

#[tokio::test]
async fn the_environment_is_exactly_the_one_given() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The test process has HOME; the child must not see it.
    let mut spec = sh("env | sort", dir.path());
    spec.env.set("ONLY_THIS", "1");
    let done = supervise(spec, &limits(10_000), &CancellationToken::new()).await;
    let text = done.stdout.text();
    assert!(text.contains("ONLY_THIS=1"), "{text}");
    assert!(!text.contains("HOME="), "{text}");
}

#[tokio::test]
async fn nonzero_exit_and_crash_are_told_apart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let done = supervise(
        sh("exit 7", dir.path()),
        &limits(10_000),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(done.ending, Ending::Exited { code: 7 });
    let done = supervise(
        sh("kill -SEGV $$", dir.path()),
        &limits(10_000),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(
        done.ending,
        Ending::Signalled {
            signal: "SIGSEGV".into()
        }
    );
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = ChildSpec {
        program: "/nonexistent/agent".into(),
        args: vec![],
        cwd: dir.path().to_path_buf(),
        env: env(),
        stdin: None,
        reaper: false,
    };
    let done = supervise(spec, &limits(10_000), &CancellationToken::new()).await;
    assert!(
        matches!(&done.ending, Ending::SpawnFailed { reason } if reason.contains("/nonexistent/agent")),
        "{:?}",
        done.ending
    );
    assert_eq!(done.spawn_error, Some(std::io::ErrorKind::NotFound));
}

/// Writes an executable `sh` script printing `says` at `path`.
fn tool(path: &Path, says: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    std::fs::write(path, format!("#!/bin/sh\necho {says}\n")).expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// A program is looked up as `execvp` would in the child: on the child's `PATH` (not Butler's),
/// skipping files that are not executable, with relative paths taken from the child's
/// working directory — a path that looks like an option included.
#[tokio::test]
async fn programs_are_found_as_the_child_would_find_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    tool(&root.join("first/tool"), "not executable", 0o644);
    tool(&root.join("second/tool"), "second", 0o755);
    tool(&root.join("-bin/tool"), "dash", 0o755);
    let mut env = ChildEnv::new();
    env.set(
        "PATH",
        format!(
            "{}:{}:/usr/bin:/bin",
            root.join("first").display(),
            root.join("second").display()
        ),
    );
    let run = |program: &str, env: ChildEnv| {
        let spec = ChildSpec::new(program, root, env);
        async move { supervise(spec, &limits(10_000), &CancellationToken::new()).await }
    };

    let done = run("tool", env.clone()).await;
    assert_eq!(
        done.ending,
        Ending::Exited { code: 0 },
        "{:?}",
        done.stderr.text()
    );
    assert_eq!(done.stdout.text(), "second\n");
    let done = run("-bin/tool", env.clone()).await;
    assert_eq!(done.stdout.text(), "dash\n", "{:?}", done.ending);
    let done = run("second/tool", env.clone()).await;
    assert_eq!(done.stdout.text(), "second\n", "{:?}", done.ending);
    let done = run("first/tool", env.clone()).await;
    assert_eq!(
        done.spawn_error,
        Some(std::io::ErrorKind::PermissionDenied),
        "{:?}",
        done.ending
    );

    // On Butler's PATH but not on the child's: not found, as a spawn failure.
    // No name at all: not found either.
    let mut bare = ChildEnv::new();
    bare.set("PATH", root.join("first"));
    for (program, env) in [("sleep", bare), ("", env)] {
        let done = run(program, env).await;
        assert_eq!(
            done.spawn_error,
            Some(std::io::ErrorKind::NotFound),
            "{program:?}: {:?}",
            done.ending
        );
    }
}

/// Each child leads a process group of its own and has no controlling terminal: a session of
/// its own when Butler has a terminal, Butler's terminal-less session otherwise (both ways are
/// checked directly in `process::spawn`'s tests).
#[tokio::test]
async fn each_child_leads_a_group_of_its_own_without_a_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let done = supervise(
        sh("cat /proc/$$/stat", dir.path()),
        &limits(10_000),
        &CancellationToken::new(),
    )
    .await;
    let stat = done.stdout.text();
    let pid = stat.split_whitespace().next().expect("pid");
    let (_, rest) = stat.rsplit_once(')').expect("comm");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state, ppid, pgrp, session, tty_nr.
    assert_eq!(fields[2], pid, "process group: {stat}");
    assert_eq!(fields[4], "0", "controlling terminal: {stat}");
}

#[tokio::test]
async fn a_hang_is_stopped_at_the_wall_clock_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let done = supervise(
        sh("echo start; sleep 60", dir.path()),
        &limits(500),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(done.ending, Ending::WallClockLimit { limit_s: 0 });
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(done.stdout.text(), "start\n");
}

#[tokio::test]
async fn a_child_ignoring_term_is_killed_after_the_grace_period() {
    let dir = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let script = "trap '' TERM; echo ready; while :; do sleep 0.05; done";
    let done = supervise(
        sh(script, dir.path()),
        &limits(400),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(done.ending, Ending::WallClockLimit { limit_s: 0 });
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_silent_hang_is_stagnation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut l = limits(30_000);
    l.stagnation = Some(Stagnation {
        after: Duration::from_millis(400),
        watch: Some(dir.path().to_path_buf()),
    });
    let started = Instant::now();
    let done = supervise(
        sh("echo hi; sleep 60", dir.path()),
        &l,
        &CancellationToken::new(),
    )
    .await;
    assert!(
        matches!(done.ending, Ending::Stagnated { .. }),
        "{:?}",
        done.ending
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn output_or_file_changes_keep_a_child_alive() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut l = limits(30_000);
    l.stagnation = Some(Stagnation {
        after: Duration::from_millis(600),
        watch: Some(dir.path().to_path_buf()),
    });
    // Quiet on stdout, but writing a file every 150 ms for ~1.5 s (well past 600 ms).
    let script = "i=0; while [ $i -lt 10 ]; do echo $i > f$i; sleep 0.15; i=$((i+1)); done";
    let done = supervise(sh(script, dir.path()), &l, &CancellationToken::new()).await;
    assert_eq!(done.ending, Ending::Exited { code: 0 });
    // And output alone also counts.
    let script = "i=0; while [ $i -lt 10 ]; do echo $i; sleep 0.15; i=$((i+1)); done";
    let done = supervise(sh(script, dir.path()), &l, &CancellationToken::new()).await;
    assert_eq!(done.ending, Ending::Exited { code: 0 });
}

#[tokio::test]
async fn an_output_flood_is_bounded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let l = limits(30_000).keep(1024, 1024);
    // About 20 MiB through the pipe.
    let script = "head -c 20000000 /dev/zero | tr '\\0' 'x'; echo; echo END";
    let done = supervise(sh(script, dir.path()), &l, &CancellationToken::new()).await;
    assert_eq!(done.ending, Ending::Exited { code: 0 });
    assert_eq!(done.stdout.total_bytes(), 20_000_000 + 5);
    assert_eq!(done.stdout.kept_bytes(), 2048);
    assert!(done.stdout.text().ends_with("x\nEND\n"));
}

#[tokio::test]
async fn grandchildren_are_killed_with_the_group_after_a_normal_exit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("pid");
    let script = format!("sleep 100 & echo $! > {}; exit 0", pidfile.display());
    let done = supervise(
        sh(&script, dir.path()),
        &limits(10_000),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(done.ending, Ending::Exited { code: 0 });
    let pid = read_pid(&pidfile);
    assert!(
        gone_within(pid, Duration::from_secs(2)).await,
        "grandchild {pid} survived"
    );
}

#[tokio::test]
async fn grandchildren_are_killed_with_the_group_on_timeout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("pid");
    let script = format!("sleep 100 & echo $! > {}; sleep 100", pidfile.display());
    let done = supervise(
        sh(&script, dir.path()),
        &limits(500),
        &CancellationToken::new(),
    )
    .await;
    assert!(matches!(done.ending, Ending::WallClockLimit { .. }));
    let pid = read_pid(&pidfile);
    assert!(
        gone_within(pid, Duration::from_secs(2)).await,
        "grandchild {pid} survived"
    );
}

#[tokio::test]
async fn cancellation_stops_the_child() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let pidfile = dir.path().join("pid");
    let script = format!("sleep 100 & echo $! > {}; sleep 100", pidfile.display());
    let started = Instant::now();
    let done = supervise(sh(&script, dir.path()), &limits(60_000), &cancel).await;
    assert_eq!(done.ending, Ending::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(gone_within(read_pid(&pidfile), Duration::from_secs(2)).await);
}

#[tokio::test]
async fn dropping_the_supervision_kills_the_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("pid");
    let script = format!("sleep 100 & echo $! > {}; sleep 100", pidfile.display());
    let spec = sh(&script, dir.path());
    let l = limits(60_000);
    let cancel = CancellationToken::new();
    let run = supervise(spec, &l, &cancel);
    let _ = tokio::time::timeout(Duration::from_millis(400), run).await;
    assert!(gone_within(read_pid(&pidfile), Duration::from_secs(2)).await);
}

#[tokio::test]
async fn a_conversation_talks_over_the_pipes_and_cancelling_it_kills_the_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("pid");
    let script = format!(
        "sleep 100 & echo $! > {}; echo oops >&2; while read line; do echo \"got $line\"; done",
        pidfile.display()
    );
    let mut talk = converse(sh(&script, dir.path()), limits(60_000)).expect("starts");
    talk.stdin.write_all(b"ping\n").await.expect("write");
    let mut lines = BufReader::new(talk.stdout).lines();
    let line = lines.next_line().await.expect("read").expect("a line");
    assert_eq!(line, "got ping");
    talk.cancel.cancel();
    let done = talk.ended.await.expect("the supervision ends");
    assert_eq!(done.ending, Ending::Cancelled);
    assert_eq!(done.stderr.text(), "oops\n");
    assert!(gone_within(read_pid(&pidfile), Duration::from_secs(2)).await);
}

#[tokio::test]
async fn a_conversation_ends_when_its_input_closes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let talk = converse(sh("cat > /dev/null; exit 4", dir.path()), limits(60_000)).expect("starts");
    drop(talk.stdin);
    let done = talk.ended.await.expect("the supervision ends");
    assert_eq!(done.ending, Ending::Exited { code: 4 });
}

#[test]
fn the_blocking_wrapper_enforces_the_same_limits() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("pid");
    let script = format!("sleep 100 & echo $! > {}; sleep 100", pidfile.display());
    let started = Instant::now();
    let done = run_blocking(sh(&script, dir.path()), limits(400));
    assert!(matches!(done.ending, Ending::WallClockLimit { .. }));
    assert!(started.elapsed() < Duration::from_secs(5));
    let pid = read_pid(&pidfile);
    let until = Instant::now() + Duration::from_secs(2);
    while running(pid) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!running(pid), "grandchild {pid} survived");
}

#[tokio::test]
async fn an_observer_sees_each_stdout_line_as_it_comes_and_may_stop_the_group() {
    use butler_worker::process::{LineSeen, Verdict, supervise_observed};
    use std::sync::{Arc, Mutex};
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("pid");
    // A looping child with a grandchild: prints the same line forever.
    let script = format!(
        "sleep 100 & echo $! > {}; while :; do echo same; echo other >&2; sleep 0.02; done",
        pidfile.display()
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let observer = move |line: &[u8], at: LineSeen| {
        let mut seen = sink.lock().expect("lock");
        seen.push((String::from_utf8_lossy(line).into_owned(), at.at));
        if seen.len() == 5 {
            Verdict::Stop(Ending::Looped {
                repeated: "same".into(),
                times: 5,
            })
        } else {
            Verdict::Continue
        }
    };
    let started = Instant::now();
    let done = supervise_observed(
        sh(&script, dir.path()),
        &limits(30_000),
        &CancellationToken::new(),
        observer,
    )
    .await;
    assert_eq!(
        done.ending,
        Ending::Looped {
            repeated: "same".into(),
            times: 5
        }
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    let seen = seen.lock().expect("lock").clone();
    assert_eq!(seen.len(), 5, "not called after the stop: {seen:?}");
    assert!(seen.iter().all(|(line, _)| line == "same"), "stdout only");
    assert!(seen.windows(2).all(|w| w[0].1 <= w[1].1), "in order");
    assert!(
        done.stdout.text().starts_with("same\nsame\n"),
        "still captured"
    );
    let grandchild = read_pid(&pidfile);
    assert!(gone_within(grandchild, Duration::from_secs(3)).await);
}

#[tokio::test]
async fn an_observer_learns_when_the_watched_tree_last_changed() {
    use butler_worker::process::{LineSeen, Verdict, supervise_observed};
    use std::sync::{Arc, Mutex};
    let dir = tempfile::tempdir().expect("tempdir");
    let mut l = limits(30_000);
    l.stagnation = Some(Stagnation {
        after: Duration::from_secs(20),
        watch: Some(dir.path().to_path_buf()),
    });
    // Quiet on files for ~1.2 s, then a write, then ~1.2 s of lines.
    let script = "i=0; while [ $i -lt 12 ]; do echo before; sleep 0.1; i=$((i+1)); done; \
                  echo x > changed; i=0; while [ $i -lt 12 ]; do echo after; sleep 0.1; \
                  i=$((i+1)); done";
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let observer = move |line: &[u8], at: LineSeen| {
        let line = String::from_utf8_lossy(line).into_owned();
        sink.lock().expect("lock").push((line, at));
        Verdict::Continue
    };
    let done = supervise_observed(
        sh(script, dir.path()),
        &l,
        &CancellationToken::new(),
        observer,
    )
    .await;
    assert_eq!(done.ending, Ending::Exited { code: 0 });
    let seen = seen.lock().expect("lock").clone();
    let before: Vec<&LineSeen> = seen
        .iter()
        .filter(|(l, _)| l == "before")
        .map(|(_, s)| s)
        .collect();
    assert!(
        before.iter().all(|s| s.files_changed_at.is_none()),
        "{before:?}"
    );
    let last = seen.last().expect("lines").1;
    let changed = last.files_changed_at.expect("the write was seen");
    assert!(changed <= last.at, "{last:?}");
}
