//! [`LiveGitea`]: an in-memory Gitea that keeps state, for scenarios that create, edit and
//! read back issues through Butler.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::{OWNER, REPO, TOKEN, as_forgejo, error_naming_token, label_json, user_json};

/// What `GET /api/v1/version` answers.
pub const GITEA_VERSION: &str = "1.27.1";
/// What a Forgejo 11 answers there.
pub const FORGEJO_VERSION: &str = "11.0.3+gitea-1.22.0";

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
struct Tracker {
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

impl Tracker {
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
            as_forgejo(&mut issue);
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
            return error_naming_token(401, "token is required");
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
                    return error_naming_token(422, "[Title]: Required");
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
                            Some(_) => return error_naming_token(422, "[State]: invalid"),
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

impl Respond for Tracker {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let outage = self.outage.lock().expect("outage switch").clone();
        outage.unwrap_or_else(|| self.route(request))
    }
}

fn not_found() -> ResponseTemplate {
    error_naming_token(404, "not found")
}

/// A wiremock server running an in-memory Gitea (issues, comments, labels, the version probe)
/// that answers the operations Butler uses as a real server would, with helpers to look at
/// what it received.
pub struct LiveGitea {
    pub server: MockServer,
    tracker: Tracker,
}

impl LiveGitea {
    /// A Gitea 1.27 at the server's root.
    pub async fn start() -> Self {
        Self::start_as("", false).await
    }

    /// A server installed under `sub_path`, Forgejo when `forgejo`.
    pub async fn start_as(sub_path: &str, forgejo: bool) -> Self {
        let server = MockServer::start().await;
        let tracker = Tracker::new(&server.uri(), sub_path, forgejo);
        Mock::given(any())
            .respond_with(tracker.clone())
            .mount(&server)
            .await;
        Self { server, tracker }
    }

    /// The web root, with the install's sub-path (`http://127.0.0.1:1234/git`).
    pub fn web(&self) -> &str {
        &self.tracker.web
    }

    /// The repository's clone address (`<web root>/acme/widgets.git`).
    pub fn origin(&self) -> String {
        format!("{}/{OWNER}/{REPO}.git", self.tracker.web)
    }

    /// Every request received, in order.
    pub async fn requests(&self) -> Vec<Request> {
        self.server
            .received_requests()
            .await
            .expect("recording is on")
    }

    /// How many requests it received.
    pub async fn count(&self) -> usize {
        self.requests().await.len()
    }

    /// Answers every request with `reply` until the guard is dropped. (A switch inside the
    /// fake rather than a scoped wiremock mock: wiremock 0.6.5 re-sorts its mocks by priority
    /// while matching, so dropping a scoped mock of another priority can unmount the wrong one.)
    pub fn override_all(&self, reply: ResponseTemplate) -> Outage {
        *self.tracker.outage.lock().expect("outage switch") = Some(reply);
        Outage(Arc::clone(&self.tracker.outage))
    }
}

/// Ends the outage when dropped.
pub struct Outage(Arc<Mutex<Option<ResponseTemplate>>>);

impl Drop for Outage {
    fn drop(&mut self) {
        if let Ok(mut outage) = self.0.lock() {
            *outage = None;
        }
    }
}
