//! `butler serve --http` through the real binary and real HTTP: many Brains at once, each in its
//! own MCP session; the bearer token, the origin check, idle expiry, shutdown with a call in
//! flight, and `butler doctor --http`.

// Test scaffolding plays the user's side of the world (git as a person runs it, the server
// started and signalled as a person would); Butler's own children go through
// `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use butler_testkit::fake_agent::write_script;
use butler_worker::config::Secret;
use common::{BUTLER, Brain, World};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const TOKEN: &str = "http-test-token-0123456789abcdef";
/// Nothing in these tests may take longer.
const TEST_LIMIT: Duration = Duration::from_secs(180);

/// A running `butler serve --http` and what it logged so far.
struct Served {
    child: Child,
    url: String,
    log: Arc<Mutex<String>>,
}

impl Served {
    /// Starts `butler serve --http 127.0.0.1:0 <args>` with `env` (and `PATH`), waits for the
    /// line naming its URL, and keeps reading its log.
    async fn start(env: &[(String, String)], args: &[&str]) -> Served {
        let mut cmd = Command::new(BUTLER);
        cmd.args(["serve", "--http", "127.0.0.1:0"])
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("BUTLER_ISSUE_BACKEND", "local")
            .env("BUTLER_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("butler serve starts");
        let stderr = child.stderr.take().expect("stderr is piped");
        let mut lines = BufReader::new(stderr).lines();
        let log = Arc::new(Mutex::new(String::new()));
        let url = tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(line) = lines.next_line().await.expect("stderr reads") {
                log.lock().expect("log").push_str(&format!("{line}\n"));
                if let Some(rest) = line.split("serving MCP at ").nth(1) {
                    return rest.split_whitespace().next().expect("a URL").to_owned();
                }
            }
            panic!(
                "the server ended without serving: {}",
                log.lock().expect("log")
            );
        })
        .await
        .expect("the server says where it listens");
        let sink = Arc::clone(&log);
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                sink.lock().expect("log").push_str(&format!("{line}\n"));
            }
        });
        Served { child, url, log }
    }

    fn log(&self) -> String {
        self.log.lock().expect("log").clone()
    }

    fn terminate(&self) {
        let pid = self.child.id().expect("still running");
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
    }

    /// Waits for the server to exit by itself; its exit code.
    async fn exit_code(&mut self, within: Duration) -> Option<i32> {
        tokio::time::timeout(within, self.child.wait())
            .await
            .expect("the server exits in time")
            .expect("wait works")
            .code()
    }
}

fn token_file(dir: &Path) -> PathBuf {
    let path = dir.join("http-token");
    std::fs::write(&path, format!("{TOKEN}\n")).expect("token file");
    path
}

fn secret() -> Secret {
    Secret::new(TOKEN)
}

fn git(dir: &Path, world: &World, args: &[&str]) -> std::process::Output {
    world.git_output(dir, args)
}

/// One Brain's run: its project, its issue, what it recorded and how long each call took.
struct Run {
    client: usize,
    project: usize,
    issue: u64,
    records: Vec<String>,
    files: Vec<String>,
    timings: Vec<(String, Duration)>,
}

const ROUNDS: usize = 3;

/// A Brain on its own session: starts on `root`, opens and takes its own issue, then records,
/// observes and comments, `ROUNDS` times, checking each answer is about its session only.
async fn brain_run(client: usize, project: usize, url: String, root: PathBuf) -> Run {
    let brain = Brain::http(&url, Some(&secret())).await;
    let mut timings = Vec::new();
    let mut call = async |tool: &str, args: Value| {
        let start = Instant::now();
        let answer = brain.call(tool, args).await;
        timings.push((tool.to_owned(), start.elapsed()));
        assert_eq!(
            answer.status(),
            "ok",
            "client {client} {tool}: {}",
            answer.envelope
        );
        answer.envelope
    };
    let root_text = root.to_string_lossy().into_owned();
    let started = call("work_session_start", json!({"project_root": root_text})).await;
    assert_eq!(started["data"]["project_root"], json!(root_text));
    let title = format!("P{project} client {client}");
    let created = call(
        "issue_create",
        json!({"title": title, "current_state": "Open for the HTTP test.",
               "next_action": "Record.", "blockers": "None."}),
    )
    .await;
    let issue = created["data"]["issue"]["number"]
        .as_u64()
        .expect("issue number");
    call("work_start", json!({"issue_id": issue})).await;
    let mut records = Vec::new();
    let mut files = Vec::new();
    for round in 0..ROUNDS {
        let file = format!("c{client}/r{round}.txt");
        let path = root.join(&file);
        std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
        std::fs::write(&path, format!("client {client} round {round}\n")).expect("write");
        files.push(file);
        let message = format!("P{project} client {client} round {round}");
        let recorded = call("work_record", json!({"message": message})).await;
        assert_eq!(
            recorded["data"]["issue_ids"],
            json!([issue]),
            "client {client} links its own issue: {recorded}"
        );
        if let Some(id) = recorded["data"]["record_id"].as_str() {
            records.push(id.to_owned());
        }
        let seen = call("work_observe", json!({})).await;
        assert_eq!(
            seen["data"]["active_issue"],
            json!({"number": issue, "title": title}),
            "client {client} sees its own active issue: {seen}"
        );
        call(
            "issue_comment",
            json!({"issue_id": issue, "body": format!("round {round}")}),
        )
        .await;
    }
    let history = call("work_history", json!({"n": 100})).await;
    for record in history["data"]["records"].as_array().expect("records") {
        let message = record["message"].as_str().expect("message");
        assert!(
            message.starts_with(&format!("P{project} ")) || message == "Initial commit",
            "client {client} sees only its project's records: {message}"
        );
    }
    let read = call(
        "issue_read",
        json!({"issue_id": issue, "last_n_comments": 10}),
    )
    .await;
    assert_eq!(read["data"]["issue"]["title"], json!(title), "{read}");
    brain.client.close().await;
    Run {
        client,
        project,
        issue,
        records,
        files,
        timings,
    }
}

/// `(record id, full message)` of every commit that carries a `Butler-Record` trailer.
fn recorded_commits(world: &World, dir: &Path) -> Vec<(String, String)> {
    let out = git(dir, world, &["log", "--format=%x1e%B"]);
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .split('\u{1e}')
        .filter_map(|body| {
            let id = body
                .lines()
                .find_map(|l| l.strip_prefix("Butler-Record: "))?
                .trim()
                .to_owned();
            Some((id, body.to_owned()))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_brains_on_three_projects_each_keep_their_own_session() {
    tokio::time::timeout(TEST_LIMIT, async {
        let worlds = [World::published(), World::published(), World::published()];
        let token = token_file(worlds[0].dir());
        let server =
            Served::start(&worlds[0].env, &["--token-file", &token.to_string_lossy()]).await;
        // Three Brains on the first project, three on the second, two on the third.
        let plan = [0, 0, 0, 1, 1, 1, 2, 2];
        let wall = Instant::now();
        let mut tasks = Vec::new();
        for (client, &project) in plan.iter().enumerate() {
            let url = server.url.clone();
            let root = worlds[project].project.clone();
            tasks.push(tokio::spawn(brain_run(client, project, url, root)));
        }
        let mut runs = Vec::new();
        for task in tasks {
            runs.push(task.await.expect("the Brain's run ends well"));
        }
        let wall = wall.elapsed();

        for (project, world) in worlds.iter().enumerate() {
            let dir = &world.project;
            let fsck = git(dir, world, &["fsck", "--full", "--strict"]);
            let said = String::from_utf8_lossy(&fsck.stderr).into_owned()
                + &String::from_utf8_lossy(&fsck.stdout);
            assert!(
                fsck.status.success(),
                "git fsck of project {project}: {said}"
            );
            assert!(
                !said.contains("error") && !said.contains("missing"),
                "{said}"
            );
            let status = git(dir, world, &["status", "--porcelain"]);
            assert!(status.stdout.is_empty(), "everything is recorded");
            let tracked = String::from_utf8_lossy(&git(dir, world, &["ls-files"]).stdout)
                .lines()
                .map(str::to_owned)
                .collect::<BTreeSet<_>>();
            let commits: BTreeMap<String, String> =
                recorded_commits(world, dir).into_iter().collect();
            let trailers = recorded_commits(world, dir).len();
            assert_eq!(
                commits.len(),
                trailers,
                "record ids are unique in the history"
            );
            let mut returned = BTreeSet::new();
            for run in runs.iter().filter(|r| r.project == project) {
                for file in &run.files {
                    assert!(tracked.contains(file), "{file} was recorded");
                }
                for id in &run.records {
                    assert!(returned.insert(id.clone()), "record id {id} given twice");
                    let body = commits.get(id).unwrap_or_else(|| {
                        panic!("record {id} of client {} has no commit", run.client)
                    });
                    assert!(
                        body.contains(&format!("Refs: #{}", run.issue)),
                        "client {}'s record {id} links its own issue #{}: {body}",
                        run.client,
                        run.issue
                    );
                }
            }
            assert_eq!(
                returned.len(),
                commits.len(),
                "every record in project {project}'s history was answered to one Brain"
            );
        }
        let log = server.log();
        assert!(!log.contains(TOKEN), "the token is never logged");

        let all: Vec<(String, Duration)> = runs.iter().flat_map(|r| r.timings.clone()).collect();
        let records: usize = runs.iter().map(|r| r.records.len()).sum();
        eprintln!(
            "http concurrency: {} Brains on 3 projects, {} calls ({records} records) in {:.0} ms \
             wall; per call {}",
            runs.len(),
            all.len(),
            wall.as_secs_f64() * 1e3,
            percentiles(all.iter().map(|(_, d)| *d).collect()),
        );
        let tools: BTreeSet<&str> = all.iter().map(|(t, _)| t.as_str()).collect();
        for tool in tools {
            let times = all.iter().filter(|(t, _)| t == tool).map(|(_, d)| *d);
            eprintln!("  {tool}: {}", percentiles(times.collect()));
        }
    })
    .await
    .expect("the test ends in time");
}

/// `p50 …, p95 …, max …` in milliseconds.
fn percentiles(mut times: Vec<Duration>) -> String {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let at = |q: usize| ms(times[(times.len() * q / 100).min(times.len() - 1)]);
    format!(
        "n {}, p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        times.len(),
        at(50),
        at(95),
        ms(times[times.len() - 1])
    )
}

/// A raw MCP POST, as any HTTP client could send it.
async fn post(url: &str, headers: &[(&str, &str)], message: Value) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request
        .body(message.to_string())
        .send()
        .await
        .expect("the server answers")
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw-http-test", "version": "1"}}})
}

fn observe_call() -> Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
           "params": {"name": "work_observe", "arguments": {}}})
}

/// Opens a session by hand; its id.
async fn raw_session(url: &str, auth: &str) -> String {
    let answer = post(url, &[("Authorization", auth)], initialize()).await;
    assert_eq!(answer.status(), 200);
    let id = answer
        .headers()
        .get("mcp-session-id")
        .expect("a session id")
        .to_str()
        .expect("text")
        .to_owned();
    let _ = answer.text().await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let answer = post(
        url,
        &[("Authorization", auth), ("Mcp-Session-Id", &id)],
        initialized,
    )
    .await;
    assert_eq!(answer.status(), 202);
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_the_token_from_another_origin_or_on_an_expired_session_are_refused() {
    tokio::time::timeout(TEST_LIMIT, async {
        let w = World::published();
        let token = token_file(w.dir());
        let server = Served::start(
            &w.env,
            &[
                "--token-file",
                &token.to_string_lossy(),
                "--idle-timeout",
                "1",
                "--allow-origin",
                "https://app.example.test",
            ],
        )
        .await;
        let url = server.url.as_str();
        let bearer = format!("Bearer {TOKEN}");

        // No token, a wrong one, another scheme: 401, with the scheme to use.
        let wrong = format!("Bearer {TOKEN}x");
        let basic = format!("Basic {TOKEN}");
        for headers in [
            vec![],
            vec![("Authorization", wrong.as_str())],
            vec![("Authorization", basic.as_str())],
        ] {
            let answer = post(url, &headers, initialize()).await;
            assert_eq!(answer.status(), 401, "{headers:?}");
            let challenge = answer.headers().get("www-authenticate").expect("challenge");
            assert!(challenge.to_str().expect("text").starts_with("Bearer"));
        }

        // Another origin, even with the token: 403 (DNS rebinding). Loopback origins and the
        // configured one pass.
        for (origin, expected) in [
            ("http://evil.example", 403),
            ("https://app.example.test.evil.example", 403),
            ("null", 403),
            ("http://localhost:5173", 200),
            ("https://app.example.test", 200),
        ] {
            let answer = post(
                url,
                &[("Authorization", &bearer), ("Origin", origin)],
                initialize(),
            )
            .await;
            assert_eq!(answer.status(), expected, "Origin: {origin}");
        }
        // A rebinding page reaches the server under its own host name.
        let answer = post(
            url,
            &[("Authorization", &bearer), ("Host", "attacker.example")],
            initialize(),
        )
        .await;
        assert_eq!(answer.status(), 403, "Host: attacker.example");

        // The revisions without a session (2026-07-28's per-request metadata) are not spoken
        // over HTTP: each of their calls would meet a server that knows no project.
        let sessionless = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "work_observe", "arguments": {},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {},
                      "io.modelcontextprotocol/clientInfo": {"name": "x", "version": "1"}}}});
        let answer = post(
            url,
            &[
                ("Authorization", &bearer),
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "work_observe"),
            ],
            sessionless,
        )
        .await;
        assert_eq!(answer.status(), 400);
        let said = answer.text().await.expect("body");
        assert!(said.contains("Unsupported protocol version"), "{said}");

        // A session answers while it is used, and is gone (404) once idle past the timeout.
        let session = raw_session(url, &bearer).await;
        let headers = [
            ("Authorization", bearer.as_str()),
            ("Mcp-Session-Id", &session),
        ];
        let answer = post(url, &headers, observe_call()).await;
        assert_eq!(answer.status(), 200);
        assert!(answer.text().await.expect("body").contains("uninitialized"));
        // A session id nobody was given is not found either.
        let made_up = [
            ("Authorization", bearer.as_str()),
            ("Mcp-Session-Id", "not-a-session"),
        ];
        assert_eq!(post(url, &made_up, observe_call()).await.status(), 404);
        tokio::time::sleep(Duration::from_millis(2500)).await;
        let answer = post(url, &headers, observe_call()).await;
        assert_eq!(answer.status(), 404, "an expired session is not found");

        // A client whose session expired starts a new one, which knows no project.
        let brain = Brain::http(url, Some(&secret())).await;
        brain
            .ok("work_session_start", json!({"project_root": w.root()}))
            .await;
        assert_eq!(brain.state().await, "clean_idle");
        tokio::time::sleep(Duration::from_millis(2500)).await;
        assert_eq!(brain.state().await, "uninitialized");
        brain.client.close().await;

        let log = server.log();
        assert!(log.contains("expired after 1s idle"), "{log}");
        assert!(!log.contains(TOKEN), "the token is never logged");
    })
    .await
    .expect("the test ends in time");
}

#[tokio::test]
async fn a_non_loopback_address_without_a_token_is_refused_before_listening() {
    let w = World::new();
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        Command::new(BUTLER)
            .args(["serve", "--http", "0.0.0.0:0"])
            .env_clear()
            .envs(w.env.iter().map(|(k, v)| (k, v)))
            .output(),
    )
    .await
    .expect("it answers at once")
    .expect("butler runs");
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("bearer token"), "{said}");
    assert!(!said.contains("serving MCP"), "{said}");

    // A token too short to be safe is refused, and not shown.
    let file = w.path("short-token");
    std::fs::write(&file, "tiny-secret").expect("write");
    let out = Command::new(BUTLER)
        .args(["serve", "--http", "127.0.0.1:0", "--token-file"])
        .arg(&file)
        .env_clear()
        .envs(w.env.iter().map(|(k, v)| (k, v)))
        .output()
        .await
        .expect("butler runs");
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("shorter than 16"), "{said}");
    assert!(!said.contains("tiny-secret"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_a_call_in_flight_finish_and_a_long_call_outlives_the_idle_timeout() {
    tokio::time::timeout(TEST_LIMIT, async {
        let mut w = World::published();
        let script = write_script(
            w.dir(),
            &[json!([
                {"do": "sleep", "ms": 3000},
                {"do": "write", "path": "src/slow.rs", "text": "pub fn slow() {}\n"}
            ])
            .to_string()],
        );
        common::fake_goose(&mut w, &script);
        w.env.push(("BUTLER_SANDBOX".to_owned(), "off".into()));
        let mut server =
            Served::start(&w.env, &["--idle-timeout", "1", "--shutdown-grace", "60"]).await;
        let brain = Arc::new(Brain::http(&server.url, None).await);
        brain
            .ok("work_session_start", json!({"project_root": w.root()}))
            .await;
        let running = tokio::spawn({
            let brain = Arc::clone(&brain);
            async move {
                brain
                    .call(
                        "run_implement",
                        json!({"goal": "Add slow()", "target_paths": ["src/"]}),
                    )
                    .await
            }
        });
        // Past the idle timeout, with the call still running: stop the server.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(!running.is_finished(), "the agent is still at work");
        server.terminate();
        tokio::time::sleep(Duration::from_millis(300)).await;
        // No new calls once shutdown began: the listener is closed (or, on a connection
        // already open, the answer is 503).
        let late = reqwest::Client::new()
            .post(&server.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(initialize().to_string())
            .send()
            .await;
        if let Ok(answer) = late {
            assert_eq!(answer.status(), 503);
        }
        let answer = running.await.expect("the call's task ends");
        assert_eq!(answer.status(), "ok", "{}", answer.envelope);
        assert_eq!(
            answer.data()["outcome"],
            json!("succeeded"),
            "{}",
            answer.envelope
        );
        assert_eq!(server.exit_code(Duration::from_secs(30)).await, Some(0));
        let log = server.log();
        assert!(log.contains("shutting down"), "{log}");
        assert!(
            !log.contains("expired"),
            "the session was never idle: {log}"
        );
        assert!(!log.contains("they are ended"), "no call was cut: {log}");
    })
    .await
    .expect("the test ends in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_checks_a_running_http_server() {
    tokio::time::timeout(TEST_LIMIT, async {
        let w = World::new();
        let token = token_file(w.dir());
        let server = Served::start(&w.env, &["--token-file", &token.to_string_lossy()]).await;
        let doctor = |with_token: bool| {
            let mut cmd = Command::new(BUTLER);
            cmd.args(["doctor", "--http", &server.url])
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .envs(w.env.iter().map(|(k, v)| (k, v)));
            if with_token {
                cmd.arg("--token-file").arg(&token);
            }
            cmd.output()
        };
        let out = doctor(true).await.expect("doctor runs");
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{said}");
        for check in ["http_session", "http_tools", "http_observe"] {
            assert!(said.contains(&format!("ok  {check}")), "{said}");
        }
        assert!(said.contains("uninitialized"), "{said}");
        let out = doctor(false).await.expect("doctor runs");
        let said = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(said.contains("FAIL  http_session"), "{said}");
        assert!(said.contains("--token-file"), "{said}");
    })
    .await
    .expect("the test ends in time");
}
