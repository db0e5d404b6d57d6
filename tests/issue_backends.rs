//! One issue scenario through the real `butler mcp` binary, once against the embedded issue
//! store and once against a wiremock Gitea that keeps state like a real server; then the
//! requests Butler sent, their counts per tool call, every error mapping the Brain sees, a
//! tracker that is down, and a search of every answer and debug log line for the token.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use butler_orchestrator::client::{Answer, BrainClient};
use common::{BUTLER, World, normalize};
use serde_json::{Value, json};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The token of every Gitea run: distinctive, so a leak anywhere is found by a plain search.
const TOKEN: &str = "tok-5ecret-bUtLeR-e2e-91c4";
const OWNER: &str = "acme";
const REPO: &str = "widgets";
/// What `GET /api/v1/version` answers.
const GITEA_VERSION: &str = "1.27.1";
/// What a Forgejo 11 answers there.
const FORGEJO_VERSION: &str = "11.0.3+gitea-1.22.0";

// ---------------------------------------------------------------------------------------------
// A Brain whose server logs (stderr) are kept.
// ---------------------------------------------------------------------------------------------

/// A Brain stand-in like `common::Brain`, but the server's log (stderr) is kept so it can be
/// searched for the token, and every answer is remembered.
struct LoggedBrain {
    client: BrainClient,
    /// Every envelope the Brain received, as text.
    answers: Mutex<Vec<String>>,
}

/// Starts `butler mcp` in `cwd` with `envs` added, its log kept.
async fn spawn_with_stderr(cwd: &Path, envs: &[(String, String)]) -> LoggedBrain {
    let client = BrainClient::spawn_logged(Path::new(BUTLER), cwd, envs)
        .await
        .expect("butler mcp starts");
    LoggedBrain {
        client,
        answers: Mutex::new(Vec::new()),
    }
}

impl LoggedBrain {
    async fn call(&self, tool: &str, args: Value) -> Answer {
        let answer = self
            .client
            .call(tool, args)
            .await
            .expect("the server answers the call");
        assert!(
            answer.consistent,
            "text and structured content differ: {}",
            answer.envelope
        );
        assert_eq!(
            answer.is_error,
            answer.status() == "error",
            "{}",
            answer.envelope
        );
        self.answers
            .lock()
            .expect("answers")
            .push(answer.envelope.to_string());
        answer
    }

    async fn ok(&self, tool: &str, args: Value) -> Value {
        let a = self.call(tool, args).await;
        assert_eq!(a.status(), "ok", "{tool}: {}", a.envelope);
        a.envelope
    }

    /// Closes the connection and returns (every answer, the server's whole stderr).
    async fn close(self) -> (Vec<String>, String) {
        let log = self.client.close_with_log().await;
        (self.answers.into_inner().expect("answers"), log)
    }
}

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
    w.git(&["remote", "add", "origin", origin], Some(&w.project));
    w.write(".butler/config.toml", "[issues]\ntimeout_secs = 1\n");
    w.git(&["add", "-A"], Some(&w.project));
    w.git(&["commit", "-q", "-m", "Butler settings"], Some(&w.project));
    w
}

// ---------------------------------------------------------------------------------------------
// A Gitea that keeps state: answers shaped like Gitea 1.27's schemas (gitea-api-subset.json).
// ---------------------------------------------------------------------------------------------

#[derive(Default)]
struct GiteaState {
    issues: BTreeMap<u64, StoredIssue>,
    comments: BTreeMap<u64, StoredComment>,
    next_comment: u64,
}

#[derive(Clone)]
struct StoredIssue {
    title: String,
    body: String,
    state: &'static str,
    labels: Vec<u64>,
}

#[derive(Clone)]
struct StoredComment {
    issue: u64,
    body: String,
}

/// The repository's labels: the same names as the embedded store's defaults, other ids.
const LABELS: [(u64, &str); 5] = [
    (11, "bug"),
    (12, "enhancement"),
    (13, "documentation"),
    (14, "question"),
    (15, "chore"),
];

/// An in-memory Gitea answering the operations Butler uses; everything under the repository
/// requires `Authorization: token <TOKEN>` (the version probe does not, as on a real server).
#[derive(Clone)]
struct FakeGitea {
    state: Arc<Mutex<GiteaState>>,
    /// When set, every request gets this answer (an outage, a slow or broken tracker).
    outage: Arc<Mutex<Option<ResponseTemplate>>>,
    /// The web root, including the sub-path of the install (`http://127.0.0.1:1234/git`).
    web: String,
    /// The sub-path (`""` or e.g. `/git`).
    sub_path: String,
    /// Forgejo 11 instead of Gitea 1.27: its version string and its issue and user shapes.
    forgejo: bool,
}

impl FakeGitea {
    fn new(server_uri: &str, sub_path: &str, forgejo: bool) -> Self {
        let state = GiteaState {
            next_comment: 5001,
            ..GiteaState::default()
        };
        Self {
            state: Arc::new(Mutex::new(state)),
            outage: Arc::default(),
            web: format!("{server_uri}{sub_path}"),
            sub_path: sub_path.to_string(),
            forgejo,
        }
    }

    fn issue_json(&self, number: u64, issue: &StoredIssue, comments: usize) -> Value {
        let labels: Vec<Value> = issue
            .labels
            .iter()
            .filter_map(|id| LABELS.iter().find(|(l, _)| l == id))
            .map(|(id, name)| label_json(*id, name))
            .collect();
        let mut issue = json!({
            "id": 1000 + number,
            "url": format!("{}/api/v1/repos/{OWNER}/{REPO}/issues/{number}", self.web),
            "html_url": format!("{}/{OWNER}/{REPO}/issues/{number}", self.web),
            "number": number, "user": user_json("alice"), "original_author": "",
            "original_author_id": 0, "title": issue.title, "body": issue.body,
            "ref": "", "assets": [], "labels": labels, "milestone": null, "assignee": null,
            "assignees": null, "state": issue.state, "is_locked": false, "comments": comments,
            "created_at": "2026-06-01T10:00:00+00:00", "updated_at": "2026-06-02T10:00:00+00:00",
            "closed_at": if issue.state == "closed" { json!("2026-06-02T10:00:00+00:00") } else { json!(null) },
            "due_date": null, "time_estimate": 0, "pull_request": null,
            "repository": {"id": 9, "name": REPO, "owner": OWNER, "full_name": format!("{OWNER}/{REPO}")},
            "pin_order": 0, "content_version": 1, "projects": []
        });
        if self.forgejo {
            // Forgejo 11's Issue lacks these; its User has `pronouns`.
            let obj = issue.as_object_mut().expect("an object");
            for field in ["content_version", "projects", "time_estimate"] {
                obj.remove(field);
            }
            obj["user"]["pronouns"] = json!("");
        }
        issue
    }

    fn comment_json(&self, id: u64, c: &StoredComment) -> Value {
        json!({
            "id": id,
            "html_url": format!("{}/{OWNER}/{REPO}/issues/{}#issuecomment-{id}", self.web, c.issue),
            "pull_request_url": "",
            "issue_url": format!("{}/{OWNER}/{REPO}/issues/{}", self.web, c.issue),
            "user": user_json("brain-bot"), "original_author": "", "original_author_id": 0,
            "body": c.body, "assets": [],
            "created_at": "2026-06-01T11:00:00+00:00", "updated_at": "2026-06-01T11:00:00+00:00"
        })
    }

    fn comment_count(state: &GiteaState, number: u64) -> usize {
        state
            .comments
            .values()
            .filter(|c| c.issue == number)
            .count()
    }

    fn route(&self, r: &Request) -> ResponseTemplate {
        let path = r.url.path().to_string();
        let Some(api) = path
            .strip_prefix(self.sub_path.as_str())
            .and_then(|p| p.strip_prefix("/api/v1"))
        else {
            return not_found();
        };
        if api == "/version" && r.method.as_str() == "GET" {
            let version = if self.forgejo {
                FORGEJO_VERSION
            } else {
                GITEA_VERSION
            };
            return ResponseTemplate::new(200).set_body_json(json!({"version": version}));
        }
        let authorized = r
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v == format!("token {TOKEN}"));
        if !authorized {
            return error_reply(401, "token is required");
        }
        let Some(tail) = api.strip_prefix(&format!("/repos/{OWNER}/{REPO}")) else {
            return not_found();
        };
        let segments: Vec<&str> = tail.split('/').filter(|s| !s.is_empty()).collect();
        let mut st = self.state.lock().expect("fake Gitea state");
        let query: BTreeMap<String, String> = r.url.query_pairs().into_owned().collect();
        match (r.method.as_str(), segments.as_slice()) {
            ("GET", ["labels"]) => {
                let all: Vec<Value> = LABELS.iter().map(|(id, n)| label_json(*id, n)).collect();
                ResponseTemplate::new(200)
                    .set_body_json(all)
                    .insert_header("X-Total-Count", LABELS.len().to_string().as_str())
            }
            ("GET", ["issues"]) => self.list(&st, &query),
            ("POST", ["issues"]) => {
                let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
                let title = body["title"].as_str().unwrap_or("").to_string();
                if title.trim().is_empty() {
                    return error_reply(422, "[Title]: Required");
                }
                let labels: Vec<u64> = body["labels"]
                    .as_array()
                    .map(|l| l.iter().filter_map(Value::as_u64).collect())
                    .unwrap_or_default();
                let issue = StoredIssue {
                    title,
                    body: body["body"].as_str().unwrap_or("").to_string(),
                    state: "open",
                    labels,
                };
                let number = st.issues.keys().last().map_or(1, |n| n + 1);
                st.issues.insert(number, issue.clone());
                ResponseTemplate::new(201).set_body_json(self.issue_json(number, &issue, 0))
            }
            ("GET", ["issues", "comments", id]) => match id
                .parse()
                .ok()
                .and_then(|id| st.comments.get(&id).map(|c| self.comment_json(id, c)))
            {
                Some(c) => ResponseTemplate::new(200).set_body_json(c),
                None => not_found(),
            },
            ("DELETE", ["issues", "comments", id]) => {
                match id.parse().ok().and_then(|id: u64| st.comments.remove(&id)) {
                    Some(_) => ResponseTemplate::new(204),
                    None => not_found(),
                }
            }
            (verb, ["issues", n, rest @ ..]) => {
                let Some(number) = n.parse::<u64>().ok().filter(|n| st.issues.contains_key(n))
                else {
                    return not_found();
                };
                match (verb, rest) {
                    ("GET", []) => {
                        let count = Self::comment_count(&st, number);
                        ResponseTemplate::new(200).set_body_json(self.issue_json(
                            number,
                            &st.issues[&number],
                            count,
                        ))
                    }
                    ("PATCH", []) => {
                        let edit: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
                        let count = Self::comment_count(&st, number);
                        let issue = st.issues.get_mut(&number).expect("checked above");
                        if let Some(t) = edit["title"].as_str().filter(|t| !t.is_empty()) {
                            issue.title = t.to_string();
                        }
                        if let Some(b) = edit["body"].as_str() {
                            issue.body = b.to_string();
                        }
                        match edit["state"].as_str() {
                            Some("open") => issue.state = "open",
                            Some("closed") => issue.state = "closed",
                            Some(_) => return error_reply(422, "[State]: invalid"),
                            None => {}
                        }
                        let issue = issue.clone();
                        ResponseTemplate::new(201)
                            .set_body_json(self.issue_json(number, &issue, count))
                    }
                    ("GET", ["comments"]) => {
                        let list: Vec<Value> = st
                            .comments
                            .iter()
                            .filter(|(_, c)| c.issue == number)
                            .map(|(id, c)| self.comment_json(*id, c))
                            .collect();
                        let total = list.len().to_string();
                        ResponseTemplate::new(200)
                            .set_body_json(list)
                            .insert_header("X-Total-Count", total.as_str())
                    }
                    ("POST", ["comments"]) => {
                        let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
                        let comment = StoredComment {
                            issue: number,
                            body: body["body"].as_str().unwrap_or("").to_string(),
                        };
                        let id = st.next_comment;
                        st.next_comment += 1;
                        st.comments.insert(id, comment.clone());
                        ResponseTemplate::new(201).set_body_json(self.comment_json(id, &comment))
                    }
                    _ => not_found(),
                }
            }
            _ => not_found(),
        }
    }

    fn list(&self, st: &GiteaState, query: &BTreeMap<String, String>) -> ResponseTemplate {
        let state = query.get("state").map_or("open", String::as_str);
        let wanted: Vec<u64> = query
            .get("labels")
            .map(|names| {
                names
                    .split(',')
                    .filter_map(|n| LABELS.iter().find(|(_, l)| *l == n).map(|(id, _)| *id))
                    .collect()
            })
            .unwrap_or_default();
        let matching: Vec<(u64, &StoredIssue)> = st
            .issues
            .iter()
            .rev()
            .filter(|(_, i)| state == "all" || i.state == state)
            .filter(|(_, i)| wanted.iter().all(|l| i.labels.contains(l)))
            .map(|(n, i)| (*n, i))
            .collect();
        let page: usize = query
            .get("page")
            .and_then(|p| p.parse().ok())
            .unwrap_or(1)
            .max(1);
        let limit: usize = query
            .get("limit")
            .and_then(|p| p.parse().ok())
            .unwrap_or(30)
            .min(50);
        let items: Vec<Value> = matching
            .iter()
            .skip((page - 1) * limit)
            .take(limit)
            .map(|(n, i)| self.issue_json(*n, i, Self::comment_count(st, *n)))
            .collect();
        let mut reply = ResponseTemplate::new(200)
            .insert_header("X-Total-Count", matching.len().to_string().as_str());
        if page * limit < matching.len() {
            let next = format!(
                "<{}/api/v1/repos/{OWNER}/{REPO}/issues?page={}&limit={limit}>; rel=\"next\"",
                self.web,
                page + 1
            );
            reply = reply.insert_header("Link", next.as_str());
        }
        reply.set_body_json(items)
    }
}

impl Respond for FakeGitea {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let outage = self.outage.lock().expect("outage switch").clone();
        outage.unwrap_or_else(|| self.route(request))
    }
}

fn not_found() -> ResponseTemplate {
    error_reply(404, "not found")
}

/// Gitea's error body; the message names the token, to prove bodies never reach the Brain.
fn error_reply(status: u16, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(json!({
        "message": format!("{message} ({TOKEN})"),
        "url": "http://gitea.test/api/swagger"
    }))
}

fn user_json(login: &str) -> Value {
    json!({
        "id": 1, "login": login, "login_name": "", "source_id": 0, "full_name": "",
        "email": format!("{login}@noreply.test"), "avatar_url": "", "html_url": "",
        "language": "", "is_admin": false, "last_login": "2026-01-01T00:00:00Z",
        "created": "2025-01-01T00:00:00Z", "restricted": false, "active": true,
        "prohibit_login": false, "location": "", "website": "", "description": "",
        "visibility": "public", "followers_count": 0, "following_count": 0,
        "starred_repos_count": 0
    })
}

fn label_json(id: u64, name: &str) -> Value {
    json!({
        "id": id, "name": name, "exclusive": false, "is_archived": false,
        "color": "00aabb", "description": format!("{name} label"),
        "url": format!("http://gitea.test/api/v1/repos/{OWNER}/{REPO}/labels/{id}")
    })
}

/// A wiremock server running a [`FakeGitea`], with helpers to look at what it received.
struct GiteaServer {
    server: MockServer,
    fake: FakeGitea,
}

impl GiteaServer {
    async fn start() -> Self {
        Self::start_as("", false).await
    }

    /// A server installed under `sub_path`, Forgejo when `forgejo`.
    async fn start_as(sub_path: &str, forgejo: bool) -> Self {
        let server = MockServer::start().await;
        let fake = FakeGitea::new(&server.uri(), sub_path, forgejo);
        Mock::given(any())
            .respond_with(fake.clone())
            .mount(&server)
            .await;
        Self { server, fake }
    }

    fn origin(&self) -> String {
        format!("{}/{OWNER}/{REPO}.git", self.fake.web)
    }

    async fn requests(&self) -> Vec<Request> {
        self.server
            .received_requests()
            .await
            .expect("recording is on")
    }

    async fn count(&self) -> usize {
        self.requests().await.len()
    }

    /// Answers every request with `reply` until the guard is dropped. (A switch inside the
    /// fake rather than a scoped wiremock mock: wiremock 0.6.5 re-sorts its mocks by priority
    /// while matching, so dropping a scoped mock of another priority can unmount the wrong one.)
    fn override_all(&self, reply: ResponseTemplate) -> Outage {
        *self.fake.outage.lock().expect("outage switch") = Some(reply);
        Outage(Arc::clone(&self.fake.outage))
    }
}

/// Ends the outage when dropped.
struct Outage(Arc<Mutex<Option<ResponseTemplate>>>);

impl Drop for Outage {
    fn drop(&mut self) {
        if let Ok(mut outage) = self.0.lock() {
            *outage = None;
        }
    }
}

fn line(r: &Request) -> String {
    let q = r.url.query().map(|q| format!("?{q}")).unwrap_or_default();
    format!("{} {}{q}", r.method, r.url.path())
}

fn body_of(r: &Request) -> Value {
    serde_json::from_slice(&r.body).expect("request body is JSON")
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
    brain: &'a LoggedBrain,
    gitea: Option<&'a GiteaServer>,
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
async fn scenario(brain: &LoggedBrain, w: &World, gitea: Option<&GiteaServer>) -> Vec<Step> {
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

fn assert_no_token(texts: &[String], what: &str) {
    for text in texts {
        assert!(!text.contains(TOKEN), "the token leaked in {what}: {text}");
        assert!(
            !text.contains("5ecret"),
            "part of the token leaked in {what}: {text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_issue_scenario_answers_the_same_on_the_embedded_store_and_on_gitea() {
    // The embedded store (the remote's host is never asked: the backend is `local`).
    let local_world = project_with_origin("http://127.0.0.1:9/acme/widgets.git");
    let local = spawn_with_stderr(
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
    let gitea = GiteaServer::start().await;
    let w = project_with_origin(&gitea.origin());
    let brain = spawn_with_stderr(
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
        probe.iter().map(line).collect::<Vec<_>>(),
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
        let message = world.git(&["log", "-1", "--format=%B"], Some(&world.project));
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
    let lines = |i: usize| steps[i].requests.iter().map(line).collect::<Vec<_>>();
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
        let sent: Vec<String> = step.requests.iter().map(line).collect();
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
        assert_eq!(auth, Some(format!("token {TOKEN}").as_str()), "{}", line(r));
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
    let gitea = GiteaServer::start().await;
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
    let brain = spawn_with_stderr(&w.project, &env).await;
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
        let _guard = gitea.override_all(error_reply(status, "refused"));
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
        let _guard = gitea.override_all(error_reply(500, ""));
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
    let sent: Vec<String> = gitea.requests().await[before..].iter().map(line).collect();
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

    let _down = gitea.override_all(error_reply(503, ""));
    let after_outage = spawn_with_stderr(&w.project, &env).await;
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
    let unreachable = spawn_with_stderr(&w.project, &env).await;
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
    let forgejo = GiteaServer::start_as("/git", true).await;
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
    let brain = spawn_with_stderr(&w.project, &env).await;
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
        format!("{}/acme/widgets/issues/1", forgejo.fake.web)
    );
    let sent: Vec<String> = forgejo.requests().await.iter().map(line).collect();
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
