//! No agent outlives its server, through the real `butler mcp` binary: a client that goes away
//! mid-`run_implement` (stdin closed, as the MCP SDK clients do on exit), a SIGTERM to Butler,
//! and Butler killed outright (the sandbox helper the agent runs under sees its parent gone and
//! ends everything; the next start marks the task interrupted). In each case the scripted fake
//! agent (a long `sleep`) and the daemon it started (double-forked, in a session of its own,
//! with an empty environment, ignoring SIGTERM) are gone shortly after and the ledger says why.

// The test plays the MCP client and the person who kills the server: it starts `butler mcp`
// itself, speaks JSON-RPC lines on its pipes, and sends it signals.
#![allow(clippy::disallowed_methods)]

use crate::common;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use butler_testkit::World;
use butler_testkit::fake_agent::{attempt, write_script};
use butler_worker::contract::{TaskId, TaskStatus};
use butler_worker::ledger::{Ledger, TaskEnd};
use serde_json::{Value, json};

const BUTLER: &str = env!("CARGO_BIN_EXE_butler");

/// A published project whose goose is the fake agent: it starts a daemon that writes its pid
/// to `<script>.daemon` (a double fork, `setsid`, `env -i`, SIGTERM ignored), writes its own
/// pid beside its script, then becomes `sleep 300`.
fn world() -> (World, PathBuf) {
    let mut w = World::published();
    let script = write_script(
        w.dir(),
        &[attempt(&[&json!({"do": "sh", "cmd": concat!(
            "(setsid env -i /bin/sh -c \"trap '' TERM; echo \\$\\$ > '$FAKE_AGENT_SCRIPT.daemon'; ",
            "while :; do sleep 0.05; done\" </dev/null >/dev/null 2>&1 &); ",
            "sleep 0.2; echo $$ > \"$FAKE_AGENT_SCRIPT.child\"; exec sleep 300"
        )})
        .to_string()])],
    );
    common::fake_goose(&mut w, &script);
    for (k, v) in [
        ("BUTLER_ISSUE_BACKEND", "local".into()),
        ("BUTLER_SANDBOX", "off".into()),
    ] {
        w.env.push((k.to_owned(), v));
    }
    let pid_file = PathBuf::from(format!("{}.child", script.display()));
    (w, pid_file)
}

/// `butler mcp` with its pipes, the lines it answers arriving on `answers`.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    answers: Receiver<Value>,
}

impl Server {
    fn start(w: &World) -> Server {
        let mut child = Command::new(BUTLER)
            .arg("mcp")
            .current_dir(&w.project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(w.env.iter().cloned())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("butler mcp starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, answers) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line)
                    && tx.send(v).is_err()
                {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut server = Server {
            child,
            stdin,
            answers,
        };
        server.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "lifetime-test", "version": "1"}}}));
        server.answer(1);
        server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "work_session_start",
                       "arguments": {"project_root": w.root()}}}));
        server.answer(2);
        server
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("the server reads");
        stdin.flush().expect("flushed");
    }

    fn answer(&self, id: u64) -> Value {
        let until = Instant::now() + Duration::from_secs(30);
        while Instant::now() < until {
            if let Ok(v) = self.answers.recv_timeout(Duration::from_millis(200))
                && v["id"] == id
            {
                return v;
            }
        }
        panic!("no answer to request {id}");
    }

    /// Starts `run_implement` and returns once the agent runs; its pid.
    fn run_implement_until_the_agent_runs(&mut self, pid_file: &Path) -> i32 {
        self.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "run_implement",
                       "arguments": {"goal": "Wait", "target_paths": ["src/"]}}}));
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(pid) = std::fs::read_to_string(pid_file)
                .ok()
                .and_then(|t| t.trim().parse().ok())
            {
                return pid;
            }
            assert!(Instant::now() < until, "the agent never started");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
    }

    /// Waits for the server to exit by itself.
    fn exits_within(&mut self, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        while Instant::now() < until {
            if self.child.try_wait().expect("waits").is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether `pid` still runs (a zombie waiting for its reaper counts as gone).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(") ")
                .map(|(_, rest)| !rest.starts_with('Z'))
        })
        .unwrap_or(false)
}

fn gone_within(pid: i32, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

fn kill_leftover(pid: i32) {
    if alive(pid) {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
}

/// The task's status, and the warnings of its last attempt with the pids of what it left
/// running, from the ledger.
fn ledger_says(w: &World) -> (TaskStatus, Vec<String>, Vec<i32>) {
    let ledger = Ledger::open(&w.project.join(".git")).expect("ledger");
    let task = ledger
        .task(&TaskId::new("t1").expect("id"))
        .expect("read")
        .expect("the task is stored");
    let last = match &task.end {
        Some(TaskEnd::Result(result)) => result
            .implementation()
            .and_then(|e| e.attempts.last())
            .cloned(),
        _ => None,
    };
    let warnings = last
        .as_ref()
        .map(|a| a.warnings.clone())
        .unwrap_or_default();
    let left = last
        .and_then(|a| a.leftovers)
        .map(|l| l.processes.iter().map(|p| p.process.pid).collect())
        .unwrap_or_default();
    (task.status, warnings, left)
}

/// The daemon the agent started (its pid file is written before the agent's own).
fn daemon_of(pid_file: &Path) -> i32 {
    let file = pid_file.with_extension("daemon");
    std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .trim()
        .parse()
        .expect("a pid")
}

#[test]
fn a_client_that_goes_away_mid_task_takes_the_agent_with_it() {
    let (w, pid_file) = world();
    let mut server = Server::start(&w);
    let agent = server.run_implement_until_the_agent_runs(&pid_file);
    let daemon = daemon_of(&pid_file);
    // As the MCP SDK clients exit: stdin closed, 2 s, then SIGTERM.
    drop(server.stdin.take());
    if !server.exits_within(Duration::from_secs(2)) {
        server.signal("-TERM");
    }
    let exited = server.exits_within(Duration::from_secs(30));
    let gone = gone_within(agent, Duration::from_secs(10));
    let daemon_gone = !alive(daemon);
    kill_leftover(agent);
    kill_leftover(daemon);
    assert!(exited, "Butler exits");
    assert!(gone, "the agent outlived Butler");
    assert!(daemon_gone, "the agent's daemon outlived Butler");
    let (status, warnings, left) = ledger_says(&w);
    assert!(left.contains(&daemon), "{left:?}");
    assert_eq!(status, TaskStatus::Cancelled, "{warnings:?}");
    assert!(
        warnings.iter().any(|w| w.starts_with("stopped: ")
            && (w.contains("closed the connection") || w.contains("SIGTERM"))),
        "{warnings:?}"
    );
}

#[test]
fn a_sigterm_to_butler_ends_the_agent_first() {
    let (w, pid_file) = world();
    let mut server = Server::start(&w);
    let agent = server.run_implement_until_the_agent_runs(&pid_file);
    let daemon = daemon_of(&pid_file);
    server.signal("-TERM");
    let exited = server.exits_within(Duration::from_secs(30));
    let gone = !alive(agent);
    let daemon_gone = !alive(daemon);
    kill_leftover(agent);
    kill_leftover(daemon);
    assert!(exited, "Butler exits");
    assert!(gone, "the agent was still running when Butler exited");
    assert!(
        daemon_gone,
        "the agent's daemon was still running when Butler exited"
    );
    let (status, warnings, left) = ledger_says(&w);
    assert!(left.contains(&daemon), "{left:?}");
    assert_eq!(status, TaskStatus::Cancelled, "{warnings:?}");
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("stopped: Butler received SIGTERM")),
        "{warnings:?}"
    );
}

#[test]
fn what_a_killed_butler_ran_is_ended_by_its_reaper_and_the_next_start_marks_the_task() {
    let (w, pid_file) = world();
    let mut server = Server::start(&w);
    let agent = server.run_implement_until_the_agent_runs(&pid_file);
    let daemon = daemon_of(&pid_file);
    server.signal("-KILL");
    assert!(server.exits_within(Duration::from_secs(10)));
    // The helper the agent runs under sees its parent gone and ends everything it holds.
    let gone = gone_within(agent, Duration::from_secs(10));
    let daemon_gone = gone_within(daemon, Duration::from_secs(10));
    kill_leftover(agent);
    kill_leftover(daemon);
    assert!(gone, "the agent outlived its Butler");
    assert!(daemon_gone, "the agent's daemon outlived its Butler");
    // The helper writes its account once it has reaped everything, a moment after the daemon
    // is gone: wait for it rather than read it the moment the daemon goes.
    let account = w
        .project
        .join(".git/butler/tasks/t1/attempt-1-agent-leftovers.jsonl");
    let named = format!("\"pid\":{daemon},");
    let mut reaped = String::new();
    for _ in 0..100 {
        reaped = std::fs::read_to_string(&account).unwrap_or_default();
        if reaped.contains(&named) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(reaped.contains(&named), "{reaped}");
    // The next start: any Butler command that reads the task journal.
    let list = Command::new(BUTLER)
        .args(["task", "list"])
        .current_dir(&w.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(w.env.iter().cloned())
        .output()
        .expect("butler task list runs");
    assert!(
        list.status.success(),
        "{}",
        String::from_utf8_lossy(&list.stderr)
    );
    assert_eq!(ledger_says(&w).0, TaskStatus::Interrupted);
}
