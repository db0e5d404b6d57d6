//! One issue scenario through the real `butler mcp` binary, once against the embedded issue
//! store and once against a wiremock Gitea that keeps state like a real server; then the
//! requests Butler sent, their counts per tool call, every error mapping the Brain sees, a
//! tracker that is down, and a search of every answer and debug log line for the token.

use std::time::Duration;

use crate::common::{Brain, World, normalize};
use butler_orchestrator::client::Answer;
use butler_testkit::gitea::{
    FORGEJO_VERSION, GITEA_VERSION, LiveGitea, OWNER, REPO, TOKEN, assert_no_token, body_of,
    error_naming_token, request_line,
};
use serde_json::{Value, json};
use wiremock::{Request, ResponseTemplate};

// ---------------------------------------------------------------------------------------------
// A project whose Brain talks to a tracker.
// ---------------------------------------------------------------------------------------------

/// The project's environment with the issue backend overridden (later entries win).
fn env_with(w: &World, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut env = w.env.clone();
    env.push(("BUTLER_LOG".into(), "debug".into()));
    for (k, v) in extra {
        env.push(((*k).into(), (*v).into()));
    }
    env
}

/// A published-looking project whose `origin` is `http://127.0.0.1:<port>/acme/widgets.git`,
/// with a short per-request timeout so the slow-tracker cases finish quickly.
fn project_with_origin(origin: &str) -> World {
    let w = World::local_only();
    w.git(&w.project, &["remote", "add", "origin", origin]);
    w.write(".butler/config.toml", "[issues]\ntimeout_secs = 1\n");
    w.git(&w.project, &["add", "-A"]);
    w.git(&w.project, &["commit", "-q", "-m", "Butler settings"]);
    w
}

fn repo_path(tail: &str) -> String {
    format!("/api/v1/repos/{OWNER}/{REPO}{tail}")
}

// ---------------------------------------------------------------------------------------------
// The scenario.
// ---------------------------------------------------------------------------------------------

/// One tool call of the scenario: what the Brain got and the HTTP requests it cost.
struct Step {
    tool: &'static str,
    envelope: Value,
    requests: Vec<Request>,
}

const BODY_V2: &str = "## Current state\nEmpty input still panics in the lexer.\n\n\
                       ## Next action\nGuard the lexer's first read.\n\n## Blockers\nNone.\n";

/// Runs the scenario's calls, keeping each answer and the HTTP requests it cost.
struct Recorder<'a> {
    brain: &'a Brain,
    gitea: Option<&'a LiveGitea>,
    seen: usize,
    steps: Vec<Step>,
}

impl Recorder<'_> {
    async fn step(&mut self, tool: &'static str, args: Value) -> Value {
        let envelope = self.brain.ok(tool, args).await;
        let mut requests = Vec::new();
        if let Some(g) = self.gitea {
            let all = g.requests().await;
            requests = all[self.seen..].to_vec();
            self.seen = all.len();
        }
        self.steps.push(Step {
            tool,
            envelope: envelope.clone(),
            requests,
        });
        envelope
    }
}

/// The issue scenario, the same calls whatever the backend; `gitea` (when given) is asked for
/// the requests each call cost.
async fn scenario(brain: &Brain, w: &World, gitea: Option<&LiveGitea>) -> Vec<Step> {
    let seen = match gitea {
        Some(g) => g.count().await,
        None => 0,
    };
    let mut r = Recorder {
        brain,
        gitea,
        seen,
        steps: Vec::new(),
    };
    let created = r
        .step(
            "issue_create",
            json!({
                "title": "Parser breaks on empty input",
                "label_names": ["bug", "Enhancement"],
                "current_state": "Empty input panics.",
                "next_action": "Reproduce with a test.",
                "blockers": "None."
            }),
        )
        .await;
    let n = created["data"]["issue"]["number"]
        .as_u64()
        .expect("issue number");
    r.step("issue_read", json!({"issue_id": n})).await;
    let first = r
        .step(
            "issue_comment",
            json!({"issue_id": n, "body": "Reproduced on main."}),
        )
        .await;
    r.step(
        "issue_comment",
        json!({"issue_id": n, "body": "Cause: the lexer reads past the end."}),
    )
    .await;
    r.step("issue_read", json!({"issue_id": n, "last_n_comments": 1}))
        .await;
    let first_id = first["data"]["comment"]["id"].as_u64().expect("comment id");
    r.step(
        "issue_delete_comment",
        json!({"issue_id": n, "comment_id": first_id, "reason": "duplicate"}),
    )
    .await;
    r.step(
        "issue_update_title",
        json!({"issue_id": n, "title": "Lexer panics on empty input"}),
    )
    .await;
    r.step("issue_update_body", json!({"issue_id": n, "body": BODY_V2}))
        .await;
    r.step("issue_close", json!({"issue_id": n})).await;
    r.step("issue_reopen", json!({"issue_id": n})).await;
    r.step(
        "issue_create",
        json!({"title": "Document the lexer", "label_names": ["documentation"], "body": BODY_V2}),
    )
    .await;
    r.step("issue_list", json!({})).await;
    r.step("issue_list", json!({"state": "all", "label": "BUG"}))
        .await;
    r.step("issue_read", json!({"issue_id": n})).await;

    r.step("work_start", json!({"issue_id": n})).await;
    w.write(
        "src/lexer.rs",
        "pub fn first(s: &str) -> Option<char> { s.chars().next() }\n",
    );
    r.step("work_observe", json!({})).await;
    r.step(
        "work_record",
        json!({"message": "Guard the lexer's first read"}),
    )
    .await;
    r.step("work_observe", json!({})).await;
    r.step("work_history", json!({"n": 1})).await;
    r.steps
}

/// What must be equal on both backends: the envelope without times, ids and tracker-only
/// fields (web address, comment authors).
fn comparable(steps: &[Step], w: &World) -> Vec<(String, Value)> {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(map) => {
                for (k, item) in map.iter_mut() {
                    match k.as_str() {
                        "updated_at" | "created_at" => *item = json!("<time>"),
                        "url" | "author" => *item = json!("<tracker-only>"),
                        "comment_id" => *item = json!("<comment-id>"),
                        "comment" | "comments" => {
                            ids_to_placeholder(item);
                            strip(item);
                        }
                        _ => strip(item),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            Value::String(s) => {
                // Summaries name comment ids ("Deleted comment 5001 on #1.").
                if let Some(rest) = s.strip_prefix("Deleted comment ") {
                    let tail = rest.split_once(' ').map_or("", |(_, t)| t);
                    *s = format!("Deleted comment <comment-id> {tail}");
                }
            }
            _ => {}
        }
    }
    fn ids_to_placeholder(v: &mut Value) {
        match v {
            Value::Object(map) => {
                if let Some(id) = map.get_mut("id") {
                    *id = json!("<comment-id>");
                }
            }
            Value::Array(items) => items.iter_mut().for_each(ids_to_placeholder),
            _ => {}
        }
    }
    steps
        .iter()
        .map(|s| {
            let mut v = normalize(s.envelope.clone(), w);
            strip(&mut v);
            (s.tool.to_string(), v)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_issue_scenario_answers_the_same_on_the_embedded_store_and_on_gitea() {
    // The embedded store (the remote's host is never asked: the backend is `local`).
    let local_world = project_with_origin("http://127.0.0.1:9/acme/widgets.git");
    let local = Brain::spawn_logged(
        &local_world.project,
        &env_with(&local_world, &[("BUTLER_ISSUE_BACKEND", "local")]),
    )
    .await;
    let start = local
        .ok(
            "work_session_start",
            json!({"project_root": local_world.root()}),
        )
        .await;
    assert_eq!(start["data"]["issue_backend"], "local", "{start}");
    let local_steps = scenario(&local, &local_world, None).await;
    local.close().await;

    // A Gitea found by `auto` from the project's remote.
    let gitea = LiveGitea::start().await;
    let w = project_with_origin(&gitea.origin());
    let brain = Brain::spawn_logged(
        &w.project,
        &env_with(
            &w,
            &[
                ("BUTLER_ISSUE_BACKEND", "auto"),
                ("BUTLER_GITEA_TOKEN", TOKEN),
                ("BUTLER_GITEA_HOSTS", &gitea.server.uri()),
            ],
        ),
    )
    .await;
    let start = brain
        .ok("work_session_start", json!({"project_root": w.root()}))
        .await;
    assert_eq!(start["data"]["issue_backend"], "gitea", "{start}");
    assert_eq!(start["data"]["resolved_repo"], "acme/widgets");
    assert_eq!(
        start["data"]["issue_backend_note"],
        format!("gitea issues of acme/widgets (version {GITEA_VERSION}) (detected)")
    );
    let probe = gitea.requests().await;
    assert_eq!(
        probe.iter().map(request_line).collect::<Vec<_>>(),
        ["GET /api/v1/version"]
    );
    assert!(
        probe[0].headers.get("authorization").is_none(),
        "the probe carries no token"
    );
    let steps = scenario(&brain, &w, Some(&gitea)).await;

    // The same answers, step by step.
    let want = comparable(&local_steps, &local_world);
    let got = comparable(&steps, &w);
    assert_eq!(want.len(), got.len());
    for ((tool, l), (_, g)) in want.iter().zip(&got) {
        assert_eq!(
            l, g,
            "`{tool}` differs between the embedded store and Gitea"
        );
    }

    // What the scenario itself says (on either backend, since they are equal).
    let by_tool = |i: usize| &steps[i].envelope["data"];
    assert_eq!(by_tool(0)["issue"]["labels"], json!(["bug", "enhancement"]));
    assert_eq!(
        by_tool(4)["comments"].as_array().expect("comments").len(),
        1
    );
    assert_eq!(
        by_tool(4)["comments"][0]["body"],
        "Cause: the lexer reads past the end."
    );
    assert_eq!(by_tool(11)["total"], 2);
    assert_eq!(by_tool(11)["issues"][0]["number"], 2, "newest first");
    assert_eq!(by_tool(12)["issues"].as_array().expect("issues").len(), 1);
    assert_eq!(
        by_tool(13)["issue"]["comments"],
        1,
        "one comment left after the deletion"
    );
    assert_eq!(by_tool(13)["issue"]["title"], "Lexer panics on empty input");
    assert_eq!(by_tool(13)["issue"]["state"], "open");
    assert_eq!(by_tool(13)["issue"]["body"], BODY_V2.trim());
    let active = json!({"number": 1, "title": "Lexer panics on empty input"});
    assert_eq!(by_tool(14)["active_issue"], active);
    assert_eq!(by_tool(15)["active_issue"], active);
    assert_eq!(by_tool(17)["recent_records"][0]["issue_ids"], json!([1]));
    assert_eq!(by_tool(18)["records"][0]["issue_ids"], json!([1]));
    for world in [&w, &local_world] {
        let message = world.git(&world.project, &["log", "-1", "--format=%B"]);
        assert!(
            message.starts_with("Guard the lexer's first read\n"),
            "{message}"
        );
        assert!(message.lines().any(|l| l == "Refs: #1"), "{message}");
    }
    assert_eq!(
        by_tool(13)["issue"]["url"],
        format!("{}/acme/widgets/issues/1", gitea.server.uri())
    );

    // The requests Butler sent, per tool call.
    let lines = |i: usize| {
        steps[i]
            .requests
            .iter()
            .map(request_line)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        lines(0),
        [
            format!("GET {}?page=1&limit=50", repo_path("/labels")),
            format!("POST {}", repo_path("/issues"))
        ],
        "issue_create with labels: the label list once, then the issue"
    );
    assert_eq!(
        body_of(&steps[0].requests[1]),
        json!({
            "title": "Parser breaks on empty input",
            "body": steps[0].envelope["data"]["issue"]["body"],
            "labels": [11, 12]
        })
    );
    assert_eq!(
        lines(1),
        [format!("GET {}", repo_path("/issues/1"))],
        "issue_read costs 1"
    );
    assert_eq!(
        lines(2),
        [format!("POST {}", repo_path("/issues/1/comments"))]
    );
    assert_eq!(
        body_of(&steps[2].requests[0]),
        json!({"body": "Reproduced on main."})
    );
    assert_eq!(
        lines(4),
        [
            format!("GET {}", repo_path("/issues/1")),
            format!("GET {}", repo_path("/issues/1/comments"))
        ]
    );
    assert_eq!(
        lines(5),
        [
            format!("GET {}", repo_path("/issues/comments/5001")),
            format!("DELETE {}", repo_path("/issues/comments/5001"))
        ]
    );
    let patches = [
        (6, json!({"title": "Lexer panics on empty input"})),
        (7, json!({"body": BODY_V2.trim()})),
        (8, json!({"state": "closed"})),
        (9, json!({"state": "open"})),
    ];
    for (i, body) in patches {
        assert_eq!(
            lines(i),
            [format!("PATCH {}", repo_path("/issues/1"))],
            "{}",
            steps[i].tool
        );
        assert_eq!(body_of(&steps[i].requests[0]), body, "{}", steps[i].tool);
    }
    assert_eq!(
        lines(10),
        [format!("POST {}", repo_path("/issues"))],
        "labels come from the cache"
    );
    assert_eq!(body_of(&steps[10].requests[0])["labels"], json!([13]));
    assert_eq!(
        lines(11),
        [format!(
            "GET {}?state=open&type=issues&page=1&limit=20",
            repo_path("/issues")
        )]
    );
    assert_eq!(
        lines(12),
        [format!(
            "GET {}?state=all&type=issues&page=1&limit=20&labels=bug",
            repo_path("/issues")
        )],
        "the label filter is sent in the repository's own spelling"
    );
    assert_eq!(
        lines(14),
        [format!("GET {}", repo_path("/issues/1"))],
        "work_start checks the issue"
    );
    for step in &steps[15..] {
        let sent: Vec<String> = step.requests.iter().map(request_line).collect();
        assert!(
            sent.is_empty(),
            "{} asks the tracker nothing: {sent:?}",
            step.tool
        );
    }
    for r in steps.iter().flat_map(|s| &s.requests) {
        let auth = r
            .headers
            .get("authorization")
            .map(|v| v.to_str().expect("ascii"));
        assert_eq!(
            auth,
            Some(format!("token {TOKEN}").as_str()),
            "{}",
            request_line(r)
        );
    }

    let (answers, log) = brain.close().await;
    assert_no_token(&answers, "an answer");
    assert!(
        log.contains("DEBUG"),
        "the server logged at debug level: {log}"
    );
    assert_no_token(
        &log.lines().map(String::from).collect::<Vec<_>>(),
        "the server log",
    );
}

// ---------------------------------------------------------------------------------------------
// Failures of the tracker, as the Brain sees them.
// ---------------------------------------------------------------------------------------------

/// Asserts an error code and that the envelope carries nothing of the HTTP exchange.
fn assert_clean_error(a: &Answer, code: &str, server: &str) {
    assert_eq!(a.status(), "error", "{}", a.envelope);
    assert_eq!(a.error_code(), code, "{}", a.envelope);
    let text = a.envelope.to_string();
    for leak in [
        TOKEN, "5ecret", server, "api/v1", "swagger", "PATCH", "POST", "token is",
    ] {
        assert!(!text.contains(leak), "`{leak}` reached the Brain: {text}");
    }
    for status in ["401", "403", "404", "409", "412", "422", "500", "502"] {
        assert!(
            !text.contains(status),
            "a status code reached the Brain: {text}"
        );
    }
    let hint = a.envelope["hint"].as_str().expect("hint");
    assert!(
        hint.contains("issue_") || hint.contains("work_"),
        "the hint names a tool: {hint}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tracker_failures_reach_the_brain_as_error_codes_and_never_leak_the_token() {
    let gitea = LiveGitea::start().await;
    let server = gitea.server.address().to_string();
    let w = project_with_origin(&gitea.origin());
    let env = env_with(
        &w,
        &[
            ("BUTLER_ISSUE_BACKEND", "gitea"),
            ("GITEA_TOKEN", TOKEN),
            ("BUTLER_GITEA_HOSTS", &gitea.server.uri()),
        ],
    );
    let brain = Brain::spawn_logged(&w.project, &env).await;
    let start = brain
        .ok("work_session_start", json!({"project_root": w.root()}))
        .await;
    assert_eq!(
        start["data"]["issue_backend_note"],
        format!("gitea issues of acme/widgets (version {GITEA_VERSION}) (configured)")
    );
    let body = json!({"title": "Flaky test", "body": BODY_V2});
    brain.ok("issue_create", body.clone()).await;
    brain.ok("work_start", json!({"issue_id": 1})).await;

    // Each status the tracker may answer, on the call where it naturally occurs.
    let cases: [(u16, &str, Value, &str); 7] = [
        (401, "issue_read", json!({"issue_id": 1}), "auth_failed"),
        (
            403,
            "issue_update_title",
            json!({"issue_id": 1, "title": "x"}),
            "auth_failed",
        ),
        (404, "issue_read", json!({"issue_id": 1}), "not_found"),
        (
            409,
            "issue_update_body",
            json!({"issue_id": 1, "body": BODY_V2}),
            "conflict",
        ),
        (412, "issue_close", json!({"issue_id": 1}), "conflict"),
        (
            500,
            "issue_comment",
            json!({"issue_id": 1, "body": "done"}),
            "backend_error",
        ),
        (
            422,
            "issue_update_title",
            json!({"issue_id": 1, "title": "y"}),
            "backend_error",
        ),
    ];
    for (status, tool, args, code) in cases {
        let _guard = gitea.override_all(error_naming_token(status, "refused"));
        let before = gitea.count().await;
        let a = brain.call(tool, args).await;
        assert_clean_error(&a, code, &server);
        assert_eq!(
            gitea.count().await - before,
            1,
            "{status} on {tool}: one request, no retry"
        );
    }

    // A missing issue on a healthy tracker, and a failing read, which is retried (writes never).
    let a = brain.call("issue_read", json!({"issue_id": 99})).await;
    assert_clean_error(&a, "not_found", &server);
    assert!(
        a.envelope["summary"]
            .as_str()
            .expect("summary")
            .contains("#99"),
        "{}",
        a.envelope
    );
    {
        let _guard = gitea.override_all(error_naming_token(500, ""));
        let before = gitea.count().await;
        let a = brain.call("issue_read", json!({"issue_id": 1})).await;
        assert_clean_error(&a, "backend_error", &server);
        assert_eq!(
            gitea.count().await - before,
            3,
            "a failing read is tried three times"
        );
    }

    // A slow tracker (per-request timeout 1 s): the comment is sent once, never again.
    {
        let slow = ResponseTemplate::new(201)
            .set_body_json(json!({"id": 1}))
            .set_delay(Duration::from_secs(3));
        let _guard = gitea.override_all(slow);
        let before = gitea.count().await;
        let a = brain
            .call("issue_comment", json!({"issue_id": 1, "body": "slow"}))
            .await;
        assert_clean_error(&a, "backend_error", &server);
        assert_eq!(
            gitea.count().await - before,
            1,
            "a timed-out write is not retried"
        );
    }

    // An HTML page instead of JSON (a proxy's login page that happens to echo the token).
    {
        let html = ResponseTemplate::new(200)
            .set_body_raw(format!("<html>sign in {TOKEN}</html>"), "text/html");
        let _guard = gitea.override_all(html);
        let a = brain.call("issue_read", json!({"issue_id": 1})).await;
        assert_clean_error(&a, "backend_error", &server);
    }

    // Caught before any request: an invalid title, a body without its sections, unknown labels.
    let before = gitea.count().await;
    let a = brain
        .call(
            "issue_create",
            json!({"title": "two\nlines", "body": BODY_V2}),
        )
        .await;
    assert_eq!(a.error_code(), "invalid_title", "{}", a.envelope);
    let a = brain
        .call(
            "issue_update_body",
            json!({"issue_id": 1, "body": "just text"}),
        )
        .await;
    assert_eq!(a.error_code(), "invalid_body", "{}", a.envelope);
    assert_eq!(
        gitea.count().await,
        before,
        "local validation sends nothing"
    );
    let a = brain
        .call(
            "issue_create",
            json!({"title": "t", "body": BODY_V2, "label_names": ["nope"]}),
        )
        .await;
    assert_eq!(a.error_code(), "label_not_found", "{}", a.envelope);
    let sent: Vec<String> = gitea.requests().await[before..]
        .iter()
        .map(request_line)
        .collect();
    assert!(
        sent.iter().all(|l| l.starts_with("GET ")),
        "nothing is created: {sent:?}"
    );

    // The tracker down: a fresh server (no cached title) still answers work_observe.
    let (answers, log) = brain.close().await;
    assert_no_token(&answers, "an answer");
    assert!(
        log.contains("retrying an issue-tracker read"),
        "debug logging is on: {log}"
    );
    assert_no_token(
        &log.lines().map(String::from).collect::<Vec<_>>(),
        "the server log",
    );

    let _down = gitea.override_all(error_naming_token(503, ""));
    let after_outage = Brain::spawn_logged(&w.project, &env).await;
    after_outage
        .ok("work_session_start", json!({"project_root": w.root()}))
        .await;
    let obs = after_outage.ok("work_observe", json!({})).await;
    assert_eq!(
        obs["data"]["active_issue"],
        json!({"number": 1, "title": null}),
        "{obs}"
    );
    let notes = obs["data"]["notes"].to_string();
    assert!(
        notes.contains("did not answer"),
        "a note says why the title is missing: {obs}"
    );
    let (answers, log) = after_outage.close().await;
    assert_no_token(&answers, "an answer");
    assert_no_token(
        &log.lines().map(String::from).collect::<Vec<_>>(),
        "the server log",
    );

    // Nothing listening at all (connection refused).
    let dead = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let dead_url = format!("http://{}", dead.local_addr().expect("addr"));
    drop(dead);
    let mut env = env.clone();
    env.push(("BUTLER_GITEA_URL".into(), dead_url.clone()));
    let unreachable = Brain::spawn_logged(&w.project, &env).await;
    let start = unreachable
        .ok("work_session_start", json!({"project_root": w.root()}))
        .await;
    assert_eq!(start["data"]["issue_backend"], "gitea", "{start}");
    let obs = unreachable.ok("work_observe", json!({})).await;
    assert_eq!(
        obs["data"]["active_issue"],
        json!({"number": 1, "title": null}),
        "{obs}"
    );
    let a = unreachable.call("issue_read", json!({"issue_id": 1})).await;
    assert_clean_error(&a, "backend_error", &dead_url);
    let (answers, log) = unreachable.close().await;
    assert_no_token(&answers, "an answer");
    assert_no_token(
        &log.lines().map(String::from).collect::<Vec<_>>(),
        "the server log",
    );
}

// ---------------------------------------------------------------------------------------------
// Forgejo, installed under a sub-path.
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forgejo_under_a_sub_path_is_found_from_the_remote_and_used() {
    let forgejo = LiveGitea::start_as("/git", true).await;
    let w = project_with_origin(&forgejo.origin());
    let hosts = forgejo.server.uri();
    let env = env_with(
        &w,
        &[
            ("BUTLER_GITEA_TOKEN", TOKEN),
            ("BUTLER_GITEA_HOSTS", &hosts),
        ],
    ); // `auto`, the default
    let mut env: Vec<_> = env
        .into_iter()
        .filter(|(k, _)| k != "BUTLER_ISSUE_BACKEND")
        .collect();
    env.push(("BUTLER_ISSUE_BACKEND".into(), String::new())); // empty counts as unset
    let brain = Brain::spawn_logged(&w.project, &env).await;
    let start = brain
        .ok("work_session_start", json!({"project_root": w.root()}))
        .await;
    assert_eq!(start["data"]["issue_backend"], "forgejo", "{start}");
    assert_eq!(
        start["data"]["issue_backend_note"],
        format!("forgejo issues of acme/widgets (version {FORGEJO_VERSION}) (detected)")
    );
    let created = brain
        .ok(
            "issue_create",
            json!({"title": "On Forgejo", "body": BODY_V2, "label_names": ["bug"]}),
        )
        .await;
    assert_eq!(created["data"]["issue"]["labels"], json!(["bug"]));
    let read = brain.ok("issue_read", json!({"issue_id": 1})).await;
    assert_eq!(read["data"]["issue"]["title"], "On Forgejo");
    assert_eq!(
        read["data"]["issue"]["url"],
        format!("{}/acme/widgets/issues/1", forgejo.web())
    );
    let sent: Vec<String> = forgejo.requests().await.iter().map(request_line).collect();
    assert_eq!(
        sent,
        [
            "GET /git/api/v1/version".to_string(),
            "GET /git/api/v1/repos/acme/widgets/labels?page=1&limit=50".into(),
            "POST /git/api/v1/repos/acme/widgets/issues".into(),
            "GET /git/api/v1/repos/acme/widgets/issues/1".into(),
        ]
    );
    let (answers, log) = brain.close().await;
    assert_no_token(&answers, "an answer");
    assert_no_token(
        &log.lines().map(String::from).collect::<Vec<_>>(),
        "the server log",
    );
}
