//! `butler task run` end to end, through the real binary as a Kubernetes Job's pod starts it:
//! a bare repository is the shared destination holding the base at its ref, each "pod" is a
//! work dir and a `HOME` of its own, the scripted fake agent plays goose. The task line lands
//! on the push ref; refusals, a base that moved or is missing, and a broken contract end in one
//! `Error` line; push credentials are never shown and never readable by the agent; SIGTERM
//! (the Job deleted) cancels the task, which still hands back its Result.

// The test plays the kubelet: it starts `butler` itself, and runs git as the destination's
// owner.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use butler_maid::runner::wire::PodMessage;
use butler_testkit::World;
use butler_testkit::fake_agent::{SCRIPT_VAR, fake_agent};
use butler_worker::contract::{ImplementRequest, TaskContract, TaskId};
use butler_worker::time::Timestamp;
use serde_json::{Value, json};

const BUTLER: &str = env!("CARGO_BIN_EXE_butler");
const BASE_REF: &str = "refs/heads/butler/base/butler-bcdf-t3";

/// A world whose shared destination (`shared.git`, bare) holds the base commit at
/// [`BASE_REF`]; the base's sha.
fn destination() -> (World, String) {
    let w = World::new();
    let src = w.init("src");
    std::fs::create_dir_all(src.join("src")).expect("mkdir");
    std::fs::write(src.join("src/lib.rs"), "pub fn one() -> i32 { 1 }\n").expect("write");
    std::fs::write(src.join("README.md"), "project\n").expect("write");
    let base = w.commit(&src, "Initial commit");
    w.bare("shared.git");
    w.git(&src, &["push", "-q", &url(&w), &format!("HEAD:{BASE_REF}")]);
    (w, base)
}

fn url(w: &World) -> String {
    w.shared.display().to_string()
}

/// The Task Contract as the orchestrator hands it over: task `id`, one attempt, `src/` may
/// change, `src/greet.rs` must exist.
fn contract(id: &str) -> String {
    let mut contract = TaskContract::from_request(
        ImplementRequest {
            goal: "Add a greeting".into(),
            spec: "src/greet.rs holds `pub fn greet`".into(),
            target_paths: vec!["src/".into()],
            test_commands: vec!["test -f src/greet.rs".into()],
            timeout_s: Some(60),
            ..Default::default()
        },
        TaskId::new(id).expect("id"),
        "brain",
        Timestamp::parse("2026-06-12T13:00:00+09:00").expect("time"),
    )
    .expect("a valid contract");
    contract.constraints.max_attempts = 1;
    serde_json::to_string(&contract).expect("json")
}

/// One pod: its work dir (the container's `workingDir`), `HOME` and termination message file.
struct Pod {
    dir: PathBuf,
    home: PathBuf,
    log: PathBuf,
    script: PathBuf,
}

impl Pod {
    fn new(w: &World, name: &str, actions: &[Value]) -> Pod {
        let root = w.path(name);
        let pod = Pod {
            dir: root.join("work"),
            home: root.join("home"),
            log: root.join("termination-log"),
            script: root.join("script.jsonl"),
        };
        std::fs::create_dir_all(&pod.dir).expect("work dir");
        std::fs::create_dir_all(&pod.home).expect("home");
        std::fs::write(&pod.script, Value::Array(actions.to_vec()).to_string()).expect("script");
        pod
    }

    /// `butler task run` as the pod's container runs it, with the task's variables
    /// (`task`), goose played by the fake agent.
    fn command(&self, w: &World, task: &[(&str, String)]) -> Command {
        let mut cmd = Command::new(BUTLER);
        cmd.args(["task", "run"])
            .current_dir(&self.dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").expect("PATH"))
            // A pod has no git identity of a person: the Maid records with its own.
            .envs(w.env_without_identity())
            .env("HOME", &self.home)
            .env("TMPDIR", std::env::temp_dir())
            .env("BUTLER_SANDBOX", "auto")
            .env("BUTLER_EXE", BUTLER)
            .env("BUTLER_GOOSE_PROGRAM", fake_agent())
            .env("BUTLER_GOOSE_PROVIDER", "openai")
            .env("BUTLER_GOOSE_MODEL", "fake")
            .env(SCRIPT_VAR, &self.script)
            .env("BUTLER_AGENT_ENV_ALLOW", SCRIPT_VAR)
            .env("BUTLER_TERMINATION_LOG", &self.log)
            .envs(task.iter().map(|(k, v)| (*k, v)));
        cmd
    }

    fn run(&self, w: &World, task: &[(&str, String)]) -> Run {
        Run(self.command(w, task).output().expect("butler runs"))
    }

    fn termination_message(&self) -> String {
        std::fs::read_to_string(&self.log).expect("the termination message is written")
    }
}

/// The task's variables: contract `id`, the world's destination, `base` at [`BASE_REF`],
/// pushed to `refs/heads/butler/tasks/<job>`.
fn task_env(w: &World, id: &str, base: &str, job: &str) -> Vec<(&'static str, String)> {
    vec![
        ("BUTLER_TASK_CONTRACT", contract(id)),
        ("BUTLER_TASK_DESTINATION", url(w)),
        ("BUTLER_TASK_BASE", base.to_owned()),
        ("BUTLER_TASK_BASE_REF", BASE_REF.to_owned()),
        ("BUTLER_TASK_PUSH_REF", push_ref(job)),
    ]
}

fn push_ref(job: &str) -> String {
    format!("refs/heads/butler/tasks/{job}")
}

/// The agent's work: `src/greet.rs`.
fn greet() -> Value {
    json!({"do": "write", "path": "src/greet.rs", "text": "pub fn greet() {}\n"})
}

/// What a pod's run left.
struct Run(Output);

impl Run {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.0.stdout).into_owned()
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.0.stderr).into_owned()
    }

    /// Butler's lines of stdout: every one must be Butler's.
    fn messages(&self) -> Vec<PodMessage> {
        let stdout = self.stdout();
        stdout
            .lines()
            .map(|line| {
                PodMessage::from_line(line).unwrap_or_else(|| {
                    panic!("not a pod message: {line}\nstderr: {}", self.stderr())
                })
            })
            .collect()
    }

    fn last_line(&self) -> String {
        self.stdout().lines().last().unwrap_or_default().to_owned()
    }

    /// The Result handed back (asserting exit 0 and progress before it), as JSON.
    fn result(&self) -> Value {
        let messages = self.messages();
        let Some((PodMessage::Result(result), before)) = messages.split_last() else {
            panic!(
                "the last line is not a Result: {}\nstderr: {}",
                self.stdout(),
                self.stderr()
            );
        };
        assert!(!before.is_empty(), "progress came before the result");
        assert!(
            before.iter().all(|m| matches!(m, PodMessage::Progress(_))),
            "{}",
            self.stdout()
        );
        assert_eq!(self.0.status.code(), Some(0), "{}", self.stderr());
        serde_json::to_value(result).expect("json")
    }

    /// The Error's text (asserting it is the last line and the exit code is not 0).
    fn error(&self) -> String {
        let messages = self.messages();
        let Some(PodMessage::Error(text)) = messages.last() else {
            panic!(
                "the last line is not an Error: {}\nstderr: {}",
                self.stdout(),
                self.stderr()
            );
        };
        assert_ne!(self.0.status.code(), Some(0), "{}", self.stderr());
        assert!(
            !self.stderr().contains("panicked"),
            "no panic: {}",
            self.stderr()
        );
        text.clone()
    }
}

/// The commit the destination's `refname` points at, if any.
fn tip(w: &World, refname: &str) -> Option<String> {
    let out = w.git_output(&w.shared, &["rev-parse", "--verify", "-q", refname]);
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Asserts the destination's `refname` holds the agent's work on top of `base`.
fn assert_landed(w: &World, refname: &str, base: &str) -> String {
    let tip = tip(w, refname).unwrap_or_else(|| panic!("{refname} is on the destination"));
    let history = w.git(&w.shared, &["rev-list", &tip]);
    assert!(history.lines().any(|c| c == base), "{history}");
    assert_ne!(tip, base, "the task's work is recorded on top of the base");
    let greet = w.git(&w.shared, &["show", &format!("{tip}:src/greet.rs")]);
    assert_eq!(greet, "pub fn greet() {}\n");
    tip
}

#[test]
fn a_task_runs_in_its_pod_and_its_line_lands_on_the_destination() {
    let (w, base) = destination();
    let pod = Pod::new(&w, "pod", &[greet()]);
    let run = pod.run(&w, &task_env(&w, "t3", &base, "butler-bcdf-t3"));
    let result = run.result();
    assert_eq!(result["outcome"], "succeeded", "{result:#}");
    assert_eq!(result["task_id"], "t3");
    assert_eq!(result["branch"], "butler/task-t3");
    assert_landed(&w, &push_ref("butler-bcdf-t3"), &base);
    assert_eq!(pod.termination_message(), run.last_line());
    // The base ref is left as it was.
    assert_eq!(tip(&w, BASE_REF).as_deref(), Some(base.as_str()));
}

#[test]
fn two_tasks_from_one_base_run_at_once_and_both_lines_land() {
    let (w, base) = destination();
    let pods: Vec<Pod> = ["pod-a", "pod-b"]
        .iter()
        .map(|name| Pod::new(&w, name, &[greet()]))
        .collect();
    let jobs = [("t3", "butler-bcdf-t3"), ("t4", "butler-bcdf-t4")];
    let children: Vec<_> = pods
        .iter()
        .zip(jobs)
        .map(|(pod, (id, job))| {
            pod.command(&w, &task_env(&w, id, &base, job))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("butler starts")
        })
        .collect();
    let runs: Vec<Run> = children
        .into_iter()
        .map(|c| Run(c.wait_with_output().expect("butler ends")))
        .collect();
    let mut tips = Vec::new();
    for ((run, pod), (id, job)) in runs.iter().zip(&pods).zip(jobs) {
        let result = run.result();
        assert_eq!(result["outcome"], "succeeded", "{result:#}");
        assert_eq!(result["task_id"], id);
        assert_eq!(pod.termination_message(), run.last_line());
        tips.push(assert_landed(&w, &push_ref(job), &base));
    }
    assert_ne!(tips[0], tips[1], "each task recorded its own work");
}

#[test]
fn a_push_the_destination_refuses_ends_in_an_error_naming_it() {
    let (w, base) = destination();
    let hook = w.shared.join("hooks/pre-receive");
    butler_testkit::write_executable(
        &hook,
        "#!/bin/sh\necho 'task lines are closed today' >&2\nexit 1\n",
    );
    let pod = Pod::new(&w, "pod", &[greet()]);
    let run = pod.run(&w, &task_env(&w, "t3", &base, "butler-bcdf-t3"));
    let error = run.error();
    assert!(error.contains("pre-receive"), "{error}");
    assert!(error.contains("task lines are closed today"), "{error}");
    assert!(error.contains(&push_ref("butler-bcdf-t3")), "{error}");
    assert_eq!(run.0.status.code(), Some(1));
    assert_eq!(pod.termination_message(), run.last_line());
    assert_eq!(tip(&w, &push_ref("butler-bcdf-t3")), None);
}

#[test]
fn a_base_that_moved_or_is_missing_ends_in_an_error_and_nothing_is_pushed() {
    let (w, base) = destination();
    let other = w.init("other");
    let another = w.commit(&other, "another commit");
    let pod = Pod::new(&w, "moved", &[greet()]);
    let run = pod.run(&w, &task_env(&w, "t3", &another, "butler-bcdf-t3"));
    let error = run.error();
    assert!(error.contains(BASE_REF), "{error}");
    assert!(error.contains(&base) && error.contains(&another), "{error}");
    assert_eq!(pod.termination_message(), run.last_line());

    let pod = Pod::new(&w, "missing", &[greet()]);
    let mut env = task_env(&w, "t3", &base, "butler-bcdf-t3");
    env.push((
        "BUTLER_TASK_BASE_REF",
        "refs/heads/butler/base/never-pushed".to_owned(),
    ));
    let run = pod.run(&w, &env);
    let error = run.error();
    assert!(
        error.contains("refs/heads/butler/base/never-pushed"),
        "{error}"
    );
    assert_eq!(pod.termination_message(), run.last_line());
    assert_eq!(tip(&w, &push_ref("butler-bcdf-t3")), None);
}

#[test]
fn push_credentials_are_never_shown_nor_readable_by_the_agent() {
    const TOKEN: &str = "tok-5e1f-never-shown";
    let (w, base) = destination();
    let creds = w.path("push-credentials");
    std::fs::create_dir_all(&creds).expect("mkdir");
    std::fs::write(creds.join("username"), "butler-bot\n").expect("write");
    std::fs::write(creds.join("token"), format!("{TOKEN}\n")).expect("write");
    let token_file = creds.join("token");
    let pod = Pod::new(
        &w,
        "pod",
        &[
            greet(),
            json!({"do": "sh", "cmd": format!(
                "cat '{}' > src/probe.txt 2>&1; echo \"exit=$?\" >> src/probe.txt",
                token_file.display()
            )}),
            json!({"do": "record_env", "path": "src/env.txt"}),
        ],
    );
    let mut env = task_env(&w, "t3", &base, "butler-bcdf-t3");
    env.push(("BUTLER_PUSH_CREDENTIALS", creds.display().to_string()));
    let run = pod.run(&w, &env);
    let result = run.result();
    let sandbox = &result["attempts"][0]["sandbox"];
    assert!(
        sandbox["applied"] == true,
        "the sandbox is not available on this machine, so the agent's read of the token \
         proves nothing: {sandbox:#}\nstderr: {}",
        run.stderr()
    );
    assert_eq!(result["outcome"], "succeeded", "{result:#}");
    for (what, text) in [
        ("stdout", run.stdout()),
        ("stderr", run.stderr()),
        ("the termination message", pod.termination_message()),
    ] {
        assert!(!text.contains(TOKEN), "{what} holds the token: {text}");
    }
    let tip = assert_landed(&w, &push_ref("butler-bcdf-t3"), &base);
    let probe = w.git(&w.shared, &["show", &format!("{tip}:src/probe.txt")]);
    assert!(!probe.contains(TOKEN), "the agent read the token: {probe}");
    assert!(
        !probe.contains("exit=0"),
        "the agent's read succeeded: {probe}"
    );
    let agent_env = w.git(&w.shared, &["show", &format!("{tip}:src/env.txt")]);
    assert!(agent_env.contains("FAKE_AGENT_SCRIPT="), "{agent_env}");
    for line in agent_env.lines() {
        assert!(
            !line.starts_with("BUTLER_TASK_") && !line.starts_with("BUTLER_PUSH_"),
            "the agent got {line}"
        );
    }
    assert!(!agent_env.contains(TOKEN));
}

#[test]
fn a_broken_contract_ends_in_an_error_without_a_panic() {
    let (w, base) = destination();
    for (name, text) in [
        ("not-json", "{\"task_id\": \"t3\", "),
        (
            "hostile",
            &*contract("t3").replace("\"src/\"", "\"../outside/\""),
        ),
    ] {
        let pod = Pod::new(&w, name, &[greet()]);
        let mut env = task_env(&w, "t3", &base, "butler-bcdf-t3");
        env.push(("BUTLER_TASK_CONTRACT", text.to_owned()));
        let run = pod.run(&w, &env);
        let error = run.error();
        assert_eq!(run.0.status.code(), Some(1));
        assert!(error.contains("BUTLER_TASK_CONTRACT"), "{error}");
        assert_eq!(pod.termination_message(), run.last_line());
        assert!(
            !Path::new(&pod.dir.join("repo")).exists(),
            "nothing was fetched"
        );
    }
    assert_eq!(tip(&w, &push_ref("butler-bcdf-t3")), None);
}

#[test]
fn a_pod_told_to_stop_cancels_its_task_and_hands_back_the_result() {
    use std::io::{BufRead, BufReader, Read};
    let (w, base) = destination();
    let pod = Pod::new(&w, "pod", &[greet(), json!({"do": "hang"})]);
    let mut child = pod
        .command(&w, &task_env(&w, "t3", &base, "butler-bcdf-t3"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("butler starts");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let n = stdout.read_line(&mut line).expect("read");
        assert!(n > 0, "the agent never ran: {seen}");
        seen.push_str(&line);
        if let Some(PodMessage::Progress(butler_maid::Progress::AgentRunning { .. })) =
            PodMessage::from_line(&line)
        {
            break;
        }
    }
    // What the kubelet does when the Job is deleted.
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    stdout.read_to_string(&mut seen).expect("read");
    let status = child.wait().expect("butler ends");
    assert_eq!(status.code(), Some(0), "{seen}");
    let last = seen.lines().last().unwrap_or_default();
    let Some(PodMessage::Result(result)) = PodMessage::from_line(last) else {
        panic!("the last line is not a Result: {seen}");
    };
    let result = serde_json::to_value(result).expect("json");
    assert_eq!(result["outcome"], "cancelled", "{result:#}");
    assert_eq!(pod.termination_message(), last);
}
