//! Butler against a hostile or struggling tracker, through the real binary: the token goes only
//! where the user sent it (not where a committed `.butler/config.toml` or the project's remote
//! points, not over plain http to another machine, not along a redirect); a slow write says to
//! check before repeating it; a 429 says for how long; a huge answer is cut at a bound with
//! Butler's memory staying small, and what the Brain reads is bounded and marked; an unknown
//! issue state is not shown as open; Butler's token in issue text never reaches the tracker.
//!
//! The stand-ins are wiremock Gitea servers shaped by `gitea-api-subset.json` (the worker's
//! `gitea_mock` fixtures), and one raw socket that streams an endless answer.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::common::{BUTLER, World};
use butler_orchestrator::client::{Answer, BrainClient};
use butler_testkit::gitea::{GiteaMock, TOKEN, comment_json, issue_json, ok_json};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

/// A project whose `origin` is `remote` (if any), with `config` committed as
/// `.butler/config.toml`.
fn project(remote: Option<&str>, config: &str) -> World {
    let w = World::local_only();
    if let Some(remote) = remote {
        w.git(&w.project, &["remote", "add", "origin", remote]);
    }
    w.write(".butler/config.toml", config);
    w.git(&w.project, &["add", "-A"]);
    w.git(&w.project, &["commit", "-q", "-m", "Butler settings"]);
    w
}

fn remote_of(mock: &GiteaMock) -> String {
    format!("{}/acme/widgets.git", mock.web_root())
}

/// The project's environment plus `extra` (later entries win); the backend comes from the
/// project's file unless `extra` says otherwise.
fn env(w: &World, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut env = w.env.clone();
    env.push(("BUTLER_ISSUE_BACKEND".into(), String::new()));
    env.push(("BUTLER_LOG".into(), "debug".into()));
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    env
}

struct Session {
    client: BrainClient,
}

impl Session {
    async fn start(w: &World, env: &[(String, String)]) -> (Self, Answer) {
        let client = BrainClient::spawn_logged(Path::new(BUTLER), &w.project, env)
            .await
            .expect("butler mcp starts");
        let session = Session { client };
        let start = session
            .call("work_session_start", json!({"project_root": w.root()}))
            .await;
        (session, start)
    }

    async fn call(&self, tool: &str, args: Value) -> Answer {
        let a = self
            .client
            .call(tool, args)
            .await
            .expect("the server answers");
        assert!(a.consistent, "{}", a.envelope);
        assert!(
            !a.envelope.to_string().contains(TOKEN),
            "token in an answer: {}",
            a.envelope
        );
        a
    }

    /// Closes the server and checks its whole log for the token.
    async fn close(self) {
        let log = self.client.close_with_log().await;
        let leaks: Vec<&str> = log.lines().filter(|l| l.contains(TOKEN)).collect();
        assert!(leaks.is_empty(), "token in the server log: {leaks:#?}");
    }
}

async fn serve_version(mock: &GiteaMock) {
    Mock::given(method("GET"))
        .and(path(mock.api_path("/version")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"version": "1.27.1"})))
        .mount(&mock.server)
        .await;
}

/// A tracker that answers everything as a Gitea would (a hostile copy of one).
async fn hostile_tracker() -> GiteaMock {
    let mock = GiteaMock::start().await;
    serve_version(&mock).await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ok_json(200, issue_json(1, "hostile", "open", &[])))
        .mount(&mock.server)
        .await;
    mock
}

/// No request reached `mock` at all (so certainly none with the token).
async fn assert_untouched(mock: &GiteaMock) {
    let requests = mock.requests().await;
    for r in &requests {
        assert!(
            r.headers.get("authorization").is_none(),
            "the token went to {}",
            r.url
        );
    }
    assert!(requests.is_empty(), "{} request(s) sent", requests.len());
}

fn hint(a: &Answer) -> String {
    a.envelope["hint"].as_str().unwrap_or_default().to_string()
}

// ---------------------------------------------------------------------------------------------
// Where the token may go.
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_branchs_config_cannot_send_the_token_elsewhere() {
    let users = GiteaMock::start().await;
    serve_version(&users).await;
    let hostile = hostile_tracker().await;
    let w = project(Some(&remote_of(&users)), "[issues]\ntimeout_secs = 2\n");
    // Checking out a branch whose committed settings name another server is enough to try.
    w.git(&w.project, &["switch", "-q", "-c", "hostile"]);
    w.write(
        ".butler/config.toml",
        &format!(
            "[issues]\nbackend = \"gitea\"\ngitea_url = \"{}\"\n",
            hostile.web_root()
        ),
    );
    w.git(&w.project, &["commit", "-qam", "Point at my tracker"]);
    let hosts = users.server.uri();
    let env = env(
        &w,
        &[
            ("BUTLER_GITEA_TOKEN", TOKEN),
            ("BUTLER_GITEA_HOSTS", &hosts),
        ],
    );

    let (session, start) = Session::start(&w, &env).await;

    assert_eq!(start.error_code(), "need_input", "{}", start.envelope);
    let summary = start.envelope["summary"].as_str().expect("summary");
    assert!(summary.contains(&hostile.server.uri()), "{summary}");
    assert!(
        hint(&start).contains("BUTLER_GITEA_HOSTS"),
        "{}",
        hint(&start)
    );
    assert_eq!(start.data()["host"], hostile.server.uri());
    assert_untouched(&hostile).await;
    session.close().await;

    // The same file asking for `auto`: the embedded store, and still nothing sent there.
    w.write(
        ".butler/config.toml",
        &format!("[issues]\ngitea_url = \"{}\"\n", hostile.web_root()),
    );
    let (session, start) = Session::start(&w, &env).await;
    assert_eq!(start.status(), "ok", "{}", start.envelope);
    assert_eq!(start.data()["issue_backend"], "local");
    assert!(
        start.data()["issue_backend_note"]
            .as_str()
            .expect("note")
            .contains("not bound"),
        "{}",
        start.envelope
    );
    assert_untouched(&hostile).await;
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_mode_never_offers_the_token_to_a_host_the_remote_names() {
    let foreign = hostile_tracker().await;
    let w = project(Some(&remote_of(&foreign)), "[issues]\ntimeout_secs = 2\n");
    let env = env(
        &w,
        &[
            ("BUTLER_GITEA_TOKEN", TOKEN),
            ("BUTLER_GITEA_HOSTS", "https://git.users-own.invalid"),
        ],
    );

    let (session, start) = Session::start(&w, &env).await;

    assert_eq!(start.status(), "ok", "{}", start.envelope);
    assert_eq!(start.data()["issue_backend"], "local");
    let created = session
        .call(
            "issue_create",
            json!({"title": "Local", "current_state": "a", "next_action": "b", "blockers": "c"}),
        )
        .await;
    assert_eq!(created.status(), "ok", "{}", created.envelope);
    assert_untouched(&foreign).await;
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_to_another_machine_is_refused_before_anything_is_sent() {
    let w = project(None, "[issues]\nrepo = \"acme/widgets\"\n");
    let env = env(
        &w,
        &[
            ("BUTLER_ISSUE_BACKEND", "gitea"),
            ("BUTLER_GITEA_TOKEN", TOKEN),
            ("BUTLER_GITEA_URL", "http://gitea.invalid:3000/"),
        ],
    );

    let (session, start) = Session::start(&w, &env).await;

    assert_eq!(start.error_code(), "need_input", "{}", start.envelope);
    let summary = start.envelope["summary"].as_str().expect("summary");
    assert!(
        summary.contains("http://gitea.invalid:3000") && summary.contains("unencrypted"),
        "{summary}"
    );
    assert!(hint(&start).contains("BUTLER_GITEA_INSECURE_HTTP"));
    session.close().await;
}

/// A session on the user's own (bound) tracker.
async fn users_tracker(mock: &GiteaMock) -> (World, Session) {
    serve_version(mock).await;
    let w = project(Some(&remote_of(mock)), "[issues]\ntimeout_secs = 1\n");
    let hosts = mock.server.uri();
    let env = env(
        &w,
        &[
            ("BUTLER_ISSUE_BACKEND", "gitea"),
            ("BUTLER_GITEA_TOKEN", TOKEN),
            ("BUTLER_GITEA_HOSTS", &hosts),
        ],
    );
    let (session, start) = Session::start(&w, &env).await;
    assert_eq!(start.data()["issue_backend"], "gitea", "{}", start.envelope);
    (w, session)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_is_not_followed_and_its_target_gets_nothing() {
    let users = GiteaMock::start().await;
    let elsewhere = hostile_tracker().await;
    let target = format!(
        "{}/api/v1/repos/acme/widgets/issues/1",
        elsewhere.web_root()
    );
    users
        .on(
            "GET",
            "/issues/1",
            ResponseTemplate::new(302).insert_header("Location", target.as_str()),
        )
        .await;
    let (_w, session) = users_tracker(&users).await;

    let a = session.call("issue_read", json!({"issue_id": 1})).await;

    assert_eq!(a.error_code(), "backend_error", "{}", a.envelope);
    assert!(!a.envelope.to_string().contains(&elsewhere.server.uri()));
    assert_untouched(&elsewhere).await;
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn butlers_token_in_a_comment_never_reaches_the_tracker_nor_the_log() {
    let users = GiteaMock::start().await;
    serve_version(&users).await;
    let w = project(Some(&remote_of(&users)), "[issues]\ntimeout_secs = 1\n");
    let hosts = users.server.uri();
    let env = env(
        &w,
        &[
            ("BUTLER_ISSUE_BACKEND", "gitea"),
            ("BUTLER_GITEA_TOKEN", TOKEN),
            ("BUTLER_GITEA_HOSTS", &hosts),
            // Even when the user asks for every log line there is.
            ("BUTLER_LOG", "trace,rmcp=trace"),
        ],
    );
    let (session, start) = Session::start(&w, &env).await;
    assert_eq!(start.data()["issue_backend"], "gitea", "{}", start.envelope);

    let a = session
        .call(
            "issue_comment",
            json!({"issue_id": 1, "body": format!("use {TOKEN} to deploy")}),
        )
        .await;

    assert_eq!(a.error_code(), "policy_blocked", "{}", a.envelope);
    assert_eq!(a.data()["field"], "body");
    let writes = users
        .request_lines()
        .await
        .into_iter()
        .filter(|l| !l.starts_with("GET"))
        .count();
    assert_eq!(writes, 0, "nothing was sent");
    session.close().await;
}

// ---------------------------------------------------------------------------------------------
// Slow, busy, huge.
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_times_out_says_to_check_before_trying_again() {
    let users = GiteaMock::start().await;
    let slow = |status: u16, body: Value| ok_json(status, body).set_delay(Duration::from_secs(3));
    users
        .on(
            "POST",
            "/issues/1/comments",
            slow(201, comment_json(9, 1, "hi")),
        )
        .await;
    users
        .on(
            "POST",
            "/issues",
            slow(201, issue_json(2, "New", "open", &[])),
        )
        .await;
    users
        .on(
            "GET",
            "/issues/1",
            slow(200, issue_json(1, "Slow", "open", &[])),
        )
        .await;
    let (_w, session) = users_tracker(&users).await;

    let comment = session
        .call("issue_comment", json!({"issue_id": 1, "body": "hi"}))
        .await;
    assert_eq!(
        comment.error_code(),
        "backend_error",
        "{}",
        comment.envelope
    );
    assert!(
        comment.envelope["summary"]
            .as_str()
            .expect("summary")
            .contains("may have been applied")
    );
    let h = hint(&comment);
    assert!(
        h.contains("issue_read") && h.contains("before calling issue_comment again"),
        "{h}"
    );
    assert!(!h.contains("again later"), "{h}");

    let create = session
        .call(
            "issue_create",
            json!({"title": "New", "current_state": "a", "next_action": "b", "blockers": "c"}),
        )
        .await;
    assert_eq!(create.error_code(), "backend_error");
    assert!(hint(&create).contains("issue_list"), "{}", hint(&create));

    let posts = users
        .request_lines()
        .await
        .into_iter()
        .filter(|l| l.starts_with("POST"))
        .count();
    assert_eq!(posts, 2, "each write was sent once");

    // A read that times out is safe to repeat, and says so.
    let read = session.call("issue_read", json!({"issue_id": 1})).await;
    assert_eq!(read.error_code(), "backend_error");
    assert!(
        hint(&read).contains("call issue_read again later"),
        "{}",
        hint(&read)
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_says_for_how_long() {
    let users = GiteaMock::start().await;
    users
        .on(
            "GET",
            "/issues/1",
            ResponseTemplate::new(429).insert_header("Retry-After", "42"),
        )
        .await;
    let (_w, session) = users_tracker(&users).await;

    let a = session.call("issue_read", json!({"issue_id": 1})).await;

    assert_eq!(a.error_code(), "backend_error", "{}", a.envelope);
    assert_eq!(a.data()["retry_after_secs"], 42);
    assert!(hint(&a).contains("wait 42 s"), "{}", hint(&a));
    assert!(
        a.envelope["summary"]
            .as_str()
            .expect("summary")
            .contains("limiting")
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_brain_reads_is_bounded_and_marked_and_unknown_states_are_not_open() {
    let users = GiteaMock::start().await;
    let mut big = issue_json(1, &"T".repeat(10_000), "open", &[]);
    big["body"] = json!("body line\n".repeat(500_000)); // 5 MB
    users.on("GET", "/issues/1", ok_json(200, big)).await;
    users
        .on(
            "GET",
            "/issues/1/comments",
            ok_json(200, json!([comment_json(3, 1, &"c".repeat(1 << 20))])),
        )
        .await;
    users
        .on(
            "GET",
            "/issues/2",
            ok_json(200, issue_json(2, "In review", "in_review", &[])),
        )
        .await;
    let listed: Vec<Value> = (1..=20)
        .map(|n| {
            issue_json(
                n,
                &"L".repeat(5_000),
                if n == 2 { "draft" } else { "open" },
                &[],
            )
        })
        .collect();
    users
        .on("GET", "/issues", ok_json(200, Value::Array(listed)))
        .await;
    let (_w, session) = users_tracker(&users).await;

    let a = session
        .call("issue_read", json!({"issue_id": 1, "last_n_comments": 1}))
        .await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    let issue = &a.data()["issue"];
    let title = issue["title"].as_str().expect("title");
    assert!(title.chars().count() <= 255 && title.ends_with("(title cut by Butler)"));
    let body = issue["body"].as_str().expect("body");
    assert!(body.len() < 40 << 10, "{} bytes", body.len());
    assert!(body.contains("Butler cut this text"), "marked");
    let comment = a.data()["comments"][0]["body"].as_str().expect("comment");
    assert!(comment.len() < 10 << 10 && comment.contains("Butler cut this text"));
    assert!(a.envelope.to_string().len() < 100 << 10);

    let unknown = session.call("issue_read", json!({"issue_id": 2})).await;
    assert_eq!(
        unknown.data()["issue"]["state"],
        "unknown",
        "{}",
        unknown.envelope
    );
    let summary = unknown.envelope["summary"].as_str().expect("summary");
    assert!(!summary.contains("Open"), "{summary}");

    let list = session.call("issue_list", json!({"state": "all"})).await;
    assert_eq!(list.status(), "ok", "{}", list.envelope);
    let issues = list.data()["issues"].as_array().expect("issues");
    assert_eq!(issues[1]["state"], "unknown");
    assert!(
        issues
            .iter()
            .all(|i| i["title"].as_str().expect("t").chars().count() <= 255)
    );
    session.close().await;
}

/// A raw tracker that answers the version probe, then streams an endless JSON body to every
/// other request; counts the bytes it managed to send.
async fn endless_tracker() -> (String, Arc<AtomicU64>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let sent = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&sent);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let counter = Arc::clone(&counter);
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                if String::from_utf8_lossy(&request).contains("/api/v1/version") {
                    let body = r#"{"version":"1.27.1"}"#;
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = socket.write_all(reply.as_bytes()).await;
                    return;
                }
                let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"number\":1,\"state\":\"open\",\"title\":\"t\",\"body\":\"";
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let chunk = vec![b'A'; 64 << 10];
                // Up to 2 GiB, unless Butler hangs up first.
                for _ in 0..(2u64 << 30) / chunk.len() as u64 {
                    if socket.write_all(&chunk).await.is_err() {
                        return;
                    }
                    counter.fetch_add(chunk.len() as u64, Ordering::Relaxed);
                }
            });
        }
    });
    (url, sent)
}

/// The peak resident memory of a process, in bytes (Linux).
fn peak_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM");
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("a number");
    kb * 1024
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_answer_is_cut_at_the_bound_and_memory_stays_small() {
    let (url, sent) = endless_tracker().await;
    let w = project(
        None,
        "[issues]\nrepo = \"acme/widgets\"\ntimeout_secs = 20\n",
    );
    let env = env(
        &w,
        &[
            ("BUTLER_ISSUE_BACKEND", "gitea"),
            ("BUTLER_GITEA_TOKEN", TOKEN),
            ("BUTLER_GITEA_URL", &url),
        ],
    );
    let (session, start) = Session::start(&w, &env).await;
    assert_eq!(start.data()["issue_backend"], "gitea", "{}", start.envelope);
    let pid = session.client.pid().expect("the server's pid");

    let a = session.call("issue_read", json!({"issue_id": 1})).await;

    assert_eq!(a.error_code(), "backend_error", "{}", a.envelope);
    assert!(
        a.envelope["summary"]
            .as_str()
            .expect("summary")
            .contains("larger than Butler reads"),
        "{}",
        a.envelope
    );
    let peak = peak_memory(pid);
    assert!(
        peak < 200 << 20,
        "Butler's memory peaked at {} MiB",
        peak >> 20
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let streamed = sent.load(Ordering::Relaxed);
    assert!(
        streamed < 256 << 20,
        "Butler kept reading: {} MiB sent",
        streamed >> 20
    );
    session.close().await;
}
