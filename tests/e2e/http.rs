//! `butler serve --http` through the real binary and real HTTP: many Brains at once, each in its
//! own MCP session and with its own active issue; the bearer token (always, loopback included,
//! made on the first start), the origin check, idle expiry, slow and endless connections, the
//! connection and session caps, idle ledger connections released, shutdown with a call in
//! flight, and `butler doctor --http`.

// Test scaffolding plays the user's side of the world (git as a person runs it, the server
// started and signalled as a person would); Butler's own children go through
// `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common;
use crate::common::{BUTLER, Brain, World};
use butler_testkit::fake_agent::write_script;
use butler_worker::config::Secret;
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
    /// The token it asks for: the test's own with `--token-file`, else the one in the user's
    /// token file (made by the server on its first start).
    token: Secret,
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
        let token = if args.contains(&"--token-file") {
            secret()
        } else {
            let text = std::fs::read_to_string(user_token_file(env)).expect("the token file");
            Secret::new(text.trim())
        };
        Served {
            child,
            url,
            log,
            token,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id().expect("still running")
    }

    /// `host:port` it listens on.
    fn addr(&self) -> String {
        let rest = self.url.strip_prefix("http://").expect("an http URL");
        rest.split('/').next().expect("host:port").to_owned()
    }

    fn bearer(&self) -> String {
        format!("Bearer {}", self.token.expose())
    }

    fn log(&self) -> String {
        self.log.lock().expect("log").clone()
    }

    /// The log once it holds `needle` (it is read as the server writes it).
    async fn log_with(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let log = self.log();
            if log.contains(needle) || Instant::now() > deadline {
                return log;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
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

/// The user's token file in a world's environment (`$XDG_CONFIG_HOME/butler/http-token`).
fn user_token_file(env: &[(String, String)]) -> PathBuf {
    let config = env
        .iter()
        .rev()
        .find(|(k, _)| k == "XDG_CONFIG_HOME")
        .map(|(_, v)| v.clone())
        .expect("the world sets XDG_CONFIG_HOME");
    Path::new(&config).join("butler").join("http-token")
}

/// What the process `pid` has open: the targets of its file descriptors.
fn open_files(pid: u32) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    dir.filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .map(|target| target.to_string_lossy().into_owned())
        .collect()
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
    // The root given is the project's: it is not repeated back.
    assert_eq!(started["data"].get("project_root"), None);
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
/// An HTTP client, built the one way Butler builds them.
fn client() -> reqwest::Client {
    butler_worker::http_client::default_client().expect("an HTTP client")
}

async fn post(url: &str, headers: &[(&str, &str)], message: Value) -> reqwest::Response {
    let mut request = client()
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
async fn an_unusable_token_or_no_place_to_keep_one_is_refused_before_listening() {
    let w = World::new();
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
    assert!(!said.contains("serving MCP"), "{said}");

    // No token given and nowhere to keep one: no server without a token.
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        Command::new(BUTLER)
            .args(["serve", "--http", "127.0.0.1:0"])
            .env_clear()
            .env("LC_ALL", "C")
            .output(),
    )
    .await
    .expect("it answers at once")
    .expect("butler runs");
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("--token-file"), "{said}");
    assert!(!said.contains("serving MCP"), "{said}");

    // A token file other users can read is not used.
    let exposed = user_token_file(&w.env);
    std::fs::create_dir_all(exposed.parent().expect("dir")).expect("mkdir");
    std::fs::write(&exposed, format!("{TOKEN}\n")).expect("write");
    std::fs::set_permissions(&exposed, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let out = Command::new(BUTLER)
        .args(["serve", "--http", "127.0.0.1:0"])
        .env_clear()
        .envs(w.env.iter().map(|(k, v)| (k, v)))
        .output()
        .await
        .expect("butler runs");
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("chmod 600"), "{said}");
    assert!(!said.contains(TOKEN), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loopback_needs_the_token_too_made_private_on_the_first_start_and_kept() {
    tokio::time::timeout(TEST_LIMIT, async {
        let w = World::published();
        let file = user_token_file(&w.env);
        assert!(!file.exists());
        let mut server = Served::start(&w.env, &[]).await;
        let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode(&file), 0o600, "only the user reads the token");
        assert_eq!(mode(file.parent().expect("dir")), 0o700);
        let token = server.token.expose().to_owned();
        assert!(token.len() >= 64, "a long random token");
        // The first start says how to connect, naming the file and never the token.
        let log = server.log_with("claude mcp add").await;
        let shown = file.to_string_lossy();
        assert!(
            log.contains(&format!("the token was made in {shown} (mode 0600)")),
            "{log}"
        );
        assert!(
            log.contains(&format!(
                "claude mcp add --transport http butler {} --header \"Authorization: Bearer \
                 $(cat {})\"",
                server.url,
                shlex::try_quote(&shown).expect("a path quotes")
            )),
            "{log}"
        );
        assert!(!log.contains(&token), "the token is never printed: {log}");

        // Loopback, no token: refused, whatever the request.
        let url = server.url.clone();
        for message in [initialize(), observe_call()] {
            let answer = post(&url, &[], message).await;
            assert_eq!(answer.status(), 401);
        }
        let bearer = server.bearer();
        assert_eq!(
            post(&url, &[("Authorization", &bearer)], initialize())
                .await
                .status(),
            200
        );
        // A client with the file's token works end to end, and so does `doctor`, which finds
        // the same file.
        let brain = Brain::http(&url, Some(&server.token)).await;
        brain
            .ok("work_session_start", json!({"project_root": w.root()}))
            .await;
        assert_eq!(brain.state().await, "clean_idle");
        brain.client.close().await;
        let doctor = Command::new(BUTLER)
            .args(["doctor", "--http", &url])
            .env_clear()
            .envs(w.env.iter().map(|(k, v)| (k, v)))
            .output()
            .await
            .expect("doctor runs");
        let said = String::from_utf8_lossy(&doctor.stdout);
        assert!(doctor.status.success(), "{said}");

        // The next start keeps the same token (clients configured once stay configured).
        server.terminate();
        assert_eq!(server.exit_code(Duration::from_secs(30)).await, Some(0));
        let again = Served::start(&w.env, &[]).await;
        assert_eq!(again.token.expose(), token);
        assert_eq!(mode(&file), 0o600);
        let log = again.log_with("claude mcp add").await;
        assert!(log.contains(&format!("the token is in {shown}")), "{log}");
        assert!(!log.contains(&token), "{log}");
        let answer = post(&again.url, &[("Authorization", &bearer)], initialize()).await;
        assert_eq!(
            answer.status(),
            200,
            "the token of the first start still opens sessions"
        );
        assert_eq!(post(&again.url, &[], initialize()).await.status(), 401);
    })
    .await
    .expect("the test ends in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_chose_no_issue_never_takes_one_another_session_chose_after_it_opened() {
    tokio::time::timeout(TEST_LIMIT, async {
        let w = World::published();
        let server = Served::start(&w.env, &[]).await;
        let start = json!({"project_root": w.root()});
        let first = Brain::http(&server.url, Some(&server.token)).await;
        let second = Brain::http(&server.url, Some(&server.token)).await;
        first.ok("work_session_start", start.clone()).await;
        second.ok("work_session_start", start.clone()).await;
        // After both opened, the first chooses an issue.
        let created = first
            .ok(
                "issue_create",
                json!({"title": "The first session's issue", "current_state": "Open.",
                       "next_action": "Record.", "blockers": "None."}),
            )
            .await;
        let issue = created["data"]["issue"]["number"].as_u64().expect("number");
        first.ok("work_start", json!({"issue_id": issue})).await;

        // The second, which chose none, records its own work without the first's issue.
        w.write("second.txt", "the second session's work\n");
        let recorded = second
            .ok(
                "work_record",
                json!({"message": "The second session's work"}),
            )
            .await;
        assert_eq!(recorded["data"]["issue_ids"], json!([]), "{recorded}");
        let body =
            String::from_utf8_lossy(&git(&w.project, &w, &["log", "-1", "--format=%B"]).stdout)
                .into_owned();
        assert!(!body.contains(&format!("#{issue}")), "{body}");
        let seen = second.observe().await;
        assert_eq!(seen["data"]["active_issue"], Value::Null, "{seen}");
        let seen = first.observe().await;
        assert_eq!(
            seen["data"]["active_issue"]["number"],
            json!(issue),
            "{seen}"
        );

        // A session opened later starts from the choice remembered when it opens (how a
        // restarted Brain finds its issue again)…
        let third = Brain::http(&server.url, Some(&server.token)).await;
        third.ok("work_session_start", start.clone()).await;
        let seen = third.observe().await;
        assert_eq!(
            seen["data"]["active_issue"]["number"],
            json!(issue),
            "{seen}"
        );
        // …and its own choices stay its own: clearing it clears nobody else's.
        third.ok("work_start", json!({})).await;
        let seen = third.observe().await;
        assert_eq!(seen["data"]["active_issue"], Value::Null, "{seen}");
        let seen = first.observe().await;
        assert_eq!(
            seen["data"]["active_issue"]["number"],
            json!(issue),
            "{seen}"
        );
        w.write("first.txt", "the first session's work\n");
        let recorded = first
            .ok(
                "work_record",
                json!({"message": "The first session's work"}),
            )
            .await;
        assert_eq!(recorded["data"]["issue_ids"], json!([issue]), "{recorded}");
        for brain in [first, second, third] {
            brain.client.close().await;
        }
    })
    .await
    .expect("the test ends in time");
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
        let brain = Arc::new(Brain::http(&server.url, Some(&server.token)).await);
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
        let late = client()
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

/// How a slow client holds a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slow {
    /// Connects and sends nothing.
    Silent,
    /// Sends half a request's headers, never the rest.
    HalfHeaders,
    /// Sends a whole authorized request's headers and the first bytes of a body it announced
    /// at 100 kB, never the rest.
    StalledBody,
}

/// Opens a connection to `addr` that holds still the way `kind` says; the task ends when the
/// server closes it, with how long that took and the answer's status line (if any).
async fn slow_connection(
    addr: String,
    kind: Slow,
    bearer: String,
) -> tokio::task::JoinHandle<(Slow, Duration, String)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connects");
    let opened = Instant::now();
    let sent = match kind {
        Slow::Silent => String::new(),
        Slow::HalfHeaders => format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Ty"),
        Slow::StalledBody => format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {bearer}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: 100000\r\n\r\n{{\"jsonrpc\": \"2.0\", "
        ),
    };
    stream.write_all(sent.as_bytes()).await.expect("sends");
    tokio::spawn(async move {
        let mut answer = Vec::new();
        // Until the server closes the connection (or resets it).
        let _ = stream.read_to_end(&mut answer).await;
        let status = String::from_utf8_lossy(&answer)
            .lines()
            .next()
            .unwrap_or("")
            .to_owned();
        (kind, opened.elapsed(), status)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_hundred_slow_connections_neither_lock_out_a_new_client_nor_outlive_the_deadline() {
    tokio::time::timeout(TEST_LIMIT, async {
        const READ_TIMEOUT: u64 = 10;
        const SLOW: usize = 300;
        // The default caps: 256 connections, 128 sessions.
        const MAX_CONNECTIONS: usize = 256;
        let w = World::published();
        let server = Served::start(&w.env, &["--read-timeout", &READ_TIMEOUT.to_string()]).await;
        let start = json!({"project_root": w.root()});

        // The same client's first steps on a quiet server, for comparison.
        let quiet = Instant::now();
        let calm = Brain::http(&server.url, Some(&server.token)).await;
        let quiet_init = quiet.elapsed();
        calm.ok("work_session_start", start.clone()).await;
        calm.client.close().await;

        let kinds = [Slow::Silent, Slow::HalfHeaders, Slow::StalledBody];
        let mut slow = Vec::new();
        for i in 0..SLOW {
            let kind = kinds[i % kinds.len()];
            slow.push(slow_connection(server.addr(), kind, server.bearer()).await);
        }
        let opened = Instant::now();
        // Give the server a moment to take them all in.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let sockets = |pid| {
            open_files(pid)
                .iter()
                .filter(|f| f.starts_with("socket:"))
                .count()
        };
        let held = sockets(server.pid());

        // A new client initialises and works while they are held.
        let begun = Instant::now();
        let brain = Brain::http(&server.url, Some(&server.token)).await;
        let init = begun.elapsed();
        brain.ok("work_session_start", start.clone()).await;
        assert_eq!(brain.state().await, "clean_idle");
        let worked = begun.elapsed();
        let during = sockets(server.pid());
        assert!(
            init < Duration::from_secs(READ_TIMEOUT / 2),
            "the new client did not wait for the slow ones' deadline: {init:?}"
        );
        assert!(
            opened.elapsed() < Duration::from_secs(READ_TIMEOUT),
            "the slow connections were still within their deadline"
        );
        // Bounded in count: the cap, plus the listener, the runtime's signal pipe and the few
        // connections still closing as they make room.
        for count in [held, during] {
            assert!(count <= MAX_CONNECTIONS + 8, "{count} sockets open");
        }

        // Bounded in time: every slow connection is closed by the server by its deadline
        // (the oldest idle ones sooner, to make room).
        let mut ends = Vec::new();
        for task in slow {
            let within = Duration::from_secs(READ_TIMEOUT + 10);
            let end = tokio::time::timeout(within, task)
                .await
                .expect("the server closed the slow connection")
                .expect("the watcher ends");
            ends.push(end);
        }
        for (kind, took, status) in &ends {
            assert!(
                *took <= Duration::from_secs(READ_TIMEOUT + 3),
                "{kind:?} held for {took:?}"
            );
            if *kind == Slow::StalledBody && *took >= Duration::from_secs(READ_TIMEOUT) {
                assert!(status.starts_with("HTTP/1.1 408"), "{kind:?}: {status}");
            }
        }
        let made_room = ends
            .iter()
            .filter(|(_, took, _)| *took < Duration::from_secs(READ_TIMEOUT))
            .count();
        assert!(
            made_room >= SLOW - MAX_CONNECTIONS,
            "at least the excess made room at once: {made_room}"
        );
        // The client is still served once they are gone.
        assert_eq!(brain.state().await, "clean_idle");
        brain.client.close().await;
        let log = server.log_with("connection cap reached").await;
        assert!(log.contains("connection cap reached"), "{log}");
        eprintln!(
            "http slow connections: {SLOW} held ({held} sockets open at the server, cap \
             {MAX_CONNECTIONS}); a new client's initialize took {:.1} ms (quiet server: {:.1} \
             ms), initialize + work_session_start + work_observe {:.1} ms; {made_room} closed \
             at once to make room, the rest at their {READ_TIMEOUT} s deadline",
            init.as_secs_f64() * 1e3,
            quiet_init.as_secs_f64() * 1e3,
            worked.as_secs_f64() * 1e3,
        );
    })
    .await
    .expect("the test ends in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beyond_the_session_cap_or_with_every_connection_busy_a_client_is_told_why() {
    tokio::time::timeout(TEST_LIMIT, async {
        use tokio::io::AsyncReadExt;
        let w = World::new();
        let server =
            Served::start(&w.env, &["--max-sessions", "2", "--max-connections", "2"]).await;
        let url = server.url.as_str();
        let bearer = server.bearer();
        let first = raw_session(url, &bearer).await;
        let second = raw_session(url, &bearer).await;
        let answer = post(url, &[("Authorization", &bearer)], initialize()).await;
        assert_eq!(answer.status(), 503);
        assert_eq!(
            answer.headers().get("retry-after").map(|v| v.as_bytes()),
            Some(&b"1"[..])
        );
        let said = answer.text().await.expect("body");
        assert!(said.contains("too many live sessions"), "{said}");

        // Both sessions hold a stream open (what a client listening for the server's messages
        // does): two busy connections, the cap.
        let streaming = client();
        let mut streams = Vec::new();
        for session in [&first, &second] {
            let stream = streaming
                .get(url)
                .header("Authorization", &bearer)
                .header("Accept", "text/event-stream")
                .header("Mcp-Session-Id", session.as_str())
                .send()
                .await
                .expect("a stream");
            assert_eq!(stream.status(), 200);
            streams.push(stream);
        }
        let mut third = tokio::net::TcpStream::connect(server.addr())
            .await
            .expect("connects");
        let mut answer = String::new();
        tokio::time::timeout(Duration::from_secs(10), third.read_to_string(&mut answer))
            .await
            .expect("answered at once")
            .expect("reads");
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(answer.contains("too many connections"), "{answer}");

        // A session closed and a stream let go: room again.
        drop(streams);
        drop(streaming);
        let delete = client()
            .delete(url)
            .header("Authorization", &bearer)
            .header("Mcp-Session-Id", first.as_str())
            .send()
            .await
            .expect("deleted");
        assert!(delete.status().is_success(), "{}", delete.status());
        let again = post(url, &[("Authorization", &bearer)], initialize()).await;
        assert_eq!(again.status(), 200);
    })
    .await
    .expect("the test ends in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_lets_go_of_its_ledger_and_takes_it_up_again() {
    tokio::time::timeout(TEST_LIMIT, async {
        let w = World::published();
        let mut env = w.env.clone();
        env.push(("BUTLER_LEDGER_IDLE_S".into(), "2".into()));
        let server = Served::start(&env, &[]).await;
        let ledger_files = |pid| {
            open_files(pid)
                .into_iter()
                .filter(|f| f.contains("ledger.db"))
                .count()
        };
        let mut brains = Vec::new();
        for n in 0..6 {
            let brain = Brain::http(&server.url, Some(&server.token)).await;
            brain
                .ok("work_session_start", json!({"project_root": w.root()}))
                .await;
            brain
                .ok(
                    "issue_create",
                    json!({"title": format!("Issue {n}"), "current_state": "Open.",
                           "next_action": "Record.", "blockers": "None."}),
                )
                .await;
            brains.push(brain);
        }
        // All six at work at once, so none has been idle long when they are counted (set up
        // one after another on a busy machine, the first could already have let go).
        futures::future::join_all(brains.iter().map(|brain| brain.observe())).await;
        let busy = ledger_files(server.pid());
        assert!(
            busy >= 6,
            "each session has its ledger open while it works: {busy}"
        );
        tokio::time::sleep(Duration::from_millis(5000)).await;
        assert_eq!(
            ledger_files(server.pid()),
            0,
            "idle sessions hold no ledger"
        );
        for brain in &brains {
            let seen = brain.observe().await;
            assert_eq!(seen["status"], json!("ok"), "{seen}");
            brain
                .ok("issue_read", json!({"issue_id": 1, "last_n_comments": 1}))
                .await;
        }
        assert!(ledger_files(server.pid()) >= 1, "taken up again");
        for brain in brains {
            brain.client.close().await;
        }
    })
    .await
    .expect("the test ends in time");
}
