//! A wiremock Gitea: [`GiteaMock`] with scenario builders (`GiteaMock::unauthorized()`, …) and
//! mounted answers, [`LiveGitea`] that keeps issues and comments like a real server, and the
//! fixtures both answer with, shaped like Gitea 1.27's API (and Forgejo 11's where it differs).

mod live;

use std::time::Duration;

use serde_json::{Value, json};
use url::Url;
use wiremock::matchers::{any, header, method, path, path_regex};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

pub use live::{FORGEJO_VERSION, GITEA_VERSION, LiveGitea, Outage};

/// The token every test uses; searched for in every error and debug string.
pub const TOKEN: &str = "tok-5ecret-d0-not-leak-7f3a";
pub const OWNER: &str = "acme";
pub const REPO: &str = "widgets";

pub struct GiteaMock {
    pub server: MockServer,
    /// Sub-path of the install (`""` or e.g. `/git`).
    pub sub_path: String,
}

impl GiteaMock {
    pub async fn start() -> Self {
        Self::start_at("").await
    }

    /// A Gitea served under a sub-path (`ROOT_URL=http://host/git/`).
    pub async fn start_at(sub_path: &str) -> Self {
        Self {
            server: MockServer::start().await,
            sub_path: sub_path.to_string(),
        }
    }

    /// Every request answers 401 with Gitea's error body.
    pub async fn unauthorized() -> Self {
        Self::start()
            .await
            .with_catch_all(error_reply(401, "token is required"))
            .await
    }

    /// Every request answers 404 (Gitea's `{"message":"not found"}`).
    pub async fn not_found() -> Self {
        Self::start()
            .await
            .with_catch_all(error_reply(404, "not found"))
            .await
    }

    /// Every request answers 500 with a blanked message, as in production.
    pub async fn server_error() -> Self {
        Self::start()
            .await
            .with_catch_all(error_reply(500, ""))
            .await
    }

    /// Every request answers correctly shaped JSON, but only after `delay`.
    pub async fn slow(delay: Duration) -> Self {
        let reply = ResponseTemplate::new(200)
            .set_body_json(issue_json(1, "Slow", "open", &[]))
            .set_delay(delay);
        Self::start().await.with_catch_all(reply).await
    }

    /// Every request answers 200 with an HTML page (a proxy's login page, say).
    pub async fn malformed_body() -> Self {
        let reply = ResponseTemplate::new(200)
            .set_body_raw(format!("<html>login {TOKEN}</html>"), "text/html");
        Self::start().await.with_catch_all(reply).await
    }

    /// Every request answers `status` with Gitea's error body (the message names the token,
    /// to prove bodies never reach errors).
    pub async fn status(status: u16) -> Self {
        Self::start()
            .await
            .with_catch_all(error_naming_token(status, "bad"))
            .await
    }

    async fn with_catch_all(self, reply: ResponseTemplate) -> Self {
        Mock::given(any())
            .respond_with(reply)
            .mount(&self.server)
            .await;
        self
    }

    pub fn web_root(&self) -> Url {
        Url::parse(&format!("{}{}", self.server.uri(), self.sub_path)).expect("mock URL parses")
    }

    /// The API path of a repository-relative path (`"/issues/3"` →
    /// `/git/api/v1/repos/acme/widgets/issues/3`).
    pub fn repo_path(&self, tail: &str) -> String {
        format!("{}/api/v1/repos/{OWNER}/{REPO}{tail}", self.sub_path)
    }

    pub fn api_path(&self, tail: &str) -> String {
        format!("{}/api/v1{tail}", self.sub_path)
    }

    /// Mounts `GET <repo path>` answering `body`, requiring the token header.
    pub async fn on(&self, verb: &str, tail: &str, reply: ResponseTemplate) {
        Mock::given(method(verb))
            .and(path(self.repo_path(tail)))
            .and(header("authorization", format!("token {TOKEN}").as_str()))
            .respond_with(reply)
            .mount(&self.server)
            .await;
    }

    /// Mounts a matcher on a path regex relative to the repository.
    pub async fn on_regex(&self, verb: &str, tail_regex: &str, reply: ResponseTemplate) {
        let re = format!("^{}{tail_regex}$", regex_escape(&self.repo_path("")));
        Mock::given(method(verb))
            .and(path_regex(re))
            .respond_with(reply)
            .mount(&self.server)
            .await;
    }

    pub async fn requests(&self) -> Vec<Request> {
        self.server
            .received_requests()
            .await
            .expect("request recording is on")
    }

    /// `METHOD path?query` of every request received, in order.
    pub async fn request_lines(&self) -> Vec<String> {
        self.requests().await.iter().map(request_line).collect()
    }
}

/// `METHOD path?query` of a request.
pub fn request_line(r: &Request) -> String {
    let q = r.url.query().map(|q| format!("?{q}")).unwrap_or_default();
    format!("{} {}{q}", r.method, r.url.path())
}

/// A request's body as JSON.
pub fn body_of(r: &Request) -> Value {
    serde_json::from_slice(&r.body).expect("the request body is JSON")
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let special = ".+*?()|[]{}^$\\".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}

pub fn error_reply(status: u16, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .set_body_json(json!({"message": message, "url": "http://gitea.test/api/swagger"}))
}

/// Gitea's error body with a message naming the token, to prove bodies never reach an error
/// or an answer.
pub fn error_naming_token(status: u16, message: &str) -> ResponseTemplate {
    error_reply(status, &format!("{message} ({TOKEN})"))
}

pub fn ok_json(status: u16, body: Value) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(body)
}

/// A `User` as Gitea 1.27 sends it (Forgejo adds `pronouns`).
pub fn user_json(login: &str) -> Value {
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

/// A `Label` (identical in Gitea 1.27 and Forgejo 11).
pub fn label_json(id: u64, name: &str) -> Value {
    json!({
        "id": id, "name": name, "exclusive": false, "is_archived": false,
        "color": "00aabb", "description": format!("{name} label"),
        "url": format!("http://gitea.test/api/v1/repos/{OWNER}/{REPO}/labels/{id}")
    })
}

/// An `Issue` as Gitea 1.27 sends it (with `content_version`, `projects`, `time_estimate`).
pub fn issue_json(number: u64, title: &str, state: &str, labels: &[(u64, &str)]) -> Value {
    let labels: Vec<Value> = labels.iter().map(|(id, n)| label_json(*id, n)).collect();
    json!({
        "id": 1000 + number, "url": format!("http://gitea.test/api/v1/repos/{OWNER}/{REPO}/issues/{number}"),
        "html_url": format!("http://gitea.test/{OWNER}/{REPO}/issues/{number}"),
        "number": number, "user": user_json("alice"), "original_author": "",
        "original_author_id": 0, "title": title, "body": format!("body of {number}"),
        "ref": "", "assets": [], "labels": labels, "milestone": null, "assignee": null,
        "assignees": null, "state": state, "is_locked": false, "comments": 2,
        "created_at": "2026-06-01T10:00:00Z", "updated_at": "2026-06-02T10:00:00Z",
        "closed_at": if state == "closed" { json!("2026-06-02T10:00:00Z") } else { json!(null) },
        "due_date": null, "time_estimate": 0, "pull_request": null,
        "repository": {"id": 9, "name": REPO, "owner": OWNER, "full_name": format!("{OWNER}/{REPO}")},
        "pin_order": 0, "content_version": 3, "projects": []
    })
}

/// The same issue as Forgejo 11 sends it: no `content_version`, `projects`, `time_estimate`;
/// `pronouns` on users.
pub fn forgejo_issue_json(number: u64, title: &str, state: &str) -> Value {
    let mut issue = issue_json(number, title, state, &[]);
    as_forgejo(&mut issue);
    issue
}

/// Turns a Gitea 1.27 `Issue` into Forgejo 11's: it lacks `content_version`, `projects` and
/// `time_estimate`; its `User` has `pronouns`.
fn as_forgejo(issue: &mut Value) {
    let obj = issue.as_object_mut().expect("an issue is an object");
    for field in ["content_version", "projects", "time_estimate"] {
        obj.remove(field);
    }
    obj["user"]["pronouns"] = json!("");
}

/// A pull request in the issue list (shares the index space).
pub fn pull_json(number: u64) -> Value {
    let mut pr = issue_json(number, "a pull request", "open", &[]);
    pr["pull_request"] =
        json!({"draft": false, "merged": false, "merged_at": null, "html_url": ""});
    pr
}

/// A `Comment` on `issue`.
pub fn comment_json(id: u64, issue: u64, body: &str) -> Value {
    json!({
        "id": id, "html_url": format!("http://gitea.test/{OWNER}/{REPO}/issues/{issue}#issuecomment-{id}"),
        "pull_request_url": "",
        "issue_url": format!("http://gitea.test/{OWNER}/{REPO}/issues/{issue}"),
        "user": user_json("bob"), "original_author": "", "original_author_id": 0,
        "body": body, "assets": [],
        "created_at": format!("2026-06-01T10:{:02}:00Z", id % 60),
        "updated_at": format!("2026-06-01T10:{:02}:00Z", id % 60)
    })
}

/// Asserts that no text contains the token or a recognisable part of it; `what` names the
/// texts in the failure message.
pub fn assert_no_token(texts: &[String], what: &str) {
    for text in texts {
        assert!(!text.contains(TOKEN), "the token leaked in {what}: {text}");
        assert!(
            !text.contains("5ecret"),
            "part of the token leaked in {what}: {text}"
        );
    }
}
