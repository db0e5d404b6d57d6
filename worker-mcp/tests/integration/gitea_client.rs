//! The Gitea backend against a wiremock Gitea: the requests it sends and what it returns.

use crate::gitea_backend::*;
use butler_worker::issues::gitea::ServerKind;
use butler_worker::issues::{
    IssueBackend, IssueError, IssueQuery, IssueState, NewIssue, ReportedState, StateFilter,
};
use serde_json::{Value, json};
use wiremock::ResponseTemplate;

fn body_of(req: &wiremock::Request) -> Value {
    serde_json::from_slice(&req.body).expect("request body is JSON")
}

#[tokio::test]
async fn read_costs_one_request_with_the_token_header() {
    let mock = GiteaMock::start().await;
    let issue = issue_json(3, "Parser breaks", "open", &[(1, "bug")]);
    mock.on("GET", "/issues/3", ok_json(200, issue)).await;

    let got = mock.backend().read(3).await.unwrap();

    assert_eq!(got.number, 3);
    assert_eq!(got.title, "Parser breaks");
    assert_eq!(got.body, "body of 3");
    assert_eq!(got.state, ReportedState::Open);
    assert_eq!(got.labels, ["bug"]);
    assert_eq!(got.comments, 2);
    assert_eq!(
        got.url.as_deref(),
        Some("http://gitea.test/acme/widgets/issues/3")
    );
    let requests = mock.requests().await;
    assert_eq!(requests.len(), 1);
    let auth = requests[0]
        .headers
        .get("authorization")
        .unwrap()
        .to_str()
        .unwrap();
    assert_eq!(auth, format!("token {TOKEN}"));
    assert_eq!(
        mock.request_lines().await,
        ["GET /api/v1/repos/acme/widgets/issues/3"]
    );
}

#[tokio::test]
async fn last_n_comments_fetches_once_and_keeps_the_newest_oldest_first() {
    let mock = GiteaMock::start().await;
    let comments: Vec<Value> = (1..=7)
        .map(|i| comment_json(100 + i, 3, &format!("c{i}")))
        .collect();
    mock.on(
        "GET",
        "/issues/3/comments",
        ok_json(200, json!(comments)).insert_header("X-Total-Count", "7"),
    )
    .await;
    let backend = mock.backend();

    let last = backend.last_comments(3, 3).await.unwrap();
    let bodies: Vec<&str> = last.iter().map(|c| c.body.as_str()).collect();
    assert_eq!(bodies, ["c5", "c6", "c7"]);
    assert_eq!(last[0].id, 105);
    assert_eq!(last[0].author.as_deref(), Some("bob"));

    let all = backend.last_comments(3, 50).await.unwrap();
    assert_eq!(all.len(), 7);
    assert!(backend.last_comments(3, 0).await.unwrap().is_empty());
    // Two fetches; `n == 0` sends nothing; no paging parameters.
    assert_eq!(
        mock.request_lines().await,
        ["GET /api/v1/repos/acme/widgets/issues/3/comments"; 2]
    );
}

#[tokio::test]
async fn comment_posts_the_body_once() {
    let mock = GiteaMock::start().await;
    mock.on(
        "POST",
        "/issues/3/comments",
        ok_json(201, comment_json(501, 3, "done: parser fixed")),
    )
    .await;

    let c = mock
        .backend()
        .comment(3, "done: parser fixed")
        .await
        .unwrap();

    assert_eq!(c.id, 501);
    assert_eq!(c.body, "done: parser fixed");
    let requests = mock.requests().await;
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method.as_str(), "POST");
    assert_eq!(body_of(&requests[0]), json!({"body": "done: parser fixed"}));
    assert_eq!(
        requests[0].headers.get("content-type").unwrap(),
        "application/json"
    );
}

#[tokio::test]
async fn delete_comment_checks_the_issue_then_deletes_with_204() {
    let mock = GiteaMock::start().await;
    mock.on(
        "GET",
        "/issues/comments/501",
        ok_json(200, comment_json(501, 3, "x")),
    )
    .await;
    mock.on("DELETE", "/issues/comments/501", ResponseTemplate::new(204))
        .await;

    mock.backend().delete_comment(3, 501).await.unwrap();

    assert_eq!(
        mock.request_lines().await,
        [
            "GET /api/v1/repos/acme/widgets/issues/comments/501",
            "DELETE /api/v1/repos/acme/widgets/issues/comments/501"
        ]
    );
}

#[tokio::test]
async fn delete_comment_of_another_issue_is_not_found_and_deletes_nothing() {
    let mock = GiteaMock::start().await;
    mock.on(
        "GET",
        "/issues/comments/501",
        ok_json(200, comment_json(501, 4, "x")),
    )
    .await;
    mock.on("DELETE", "/issues/comments/501", ResponseTemplate::new(204))
        .await;

    let err = mock.backend().delete_comment(3, 501).await.unwrap_err();

    assert!(
        matches!(&err, IssueError::NotFound { what } if what.contains("501")),
        "{err:?}"
    );
    assert_eq!(mock.requests().await.len(), 1, "no DELETE sent");
}

#[tokio::test]
async fn delete_of_a_non_plain_comment_or_missing_comment_is_not_found() {
    let mock = GiteaMock::start().await;
    // Gitea answers 204 for comments that are events, and an empty 404 for other repos'.
    mock.on("GET", "/issues/comments/7", ResponseTemplate::new(204))
        .await;
    mock.on("GET", "/issues/comments/8", ResponseTemplate::new(404))
        .await;
    let backend = mock.backend();

    assert!(matches!(
        backend.delete_comment(3, 7).await,
        Err(IssueError::NotFound { .. })
    ));
    assert!(matches!(
        backend.delete_comment(3, 8).await,
        Err(IssueError::NotFound { .. })
    ));
    let lines = mock.request_lines().await;
    assert!(lines.iter().all(|l| l.starts_with("GET ")), "{lines:?}");
}

#[tokio::test]
async fn update_title_and_body_patch_only_that_field() {
    let mock = GiteaMock::start().await;
    mock.on(
        "PATCH",
        "/issues/3",
        ok_json(201, issue_json(3, "New title", "open", &[])),
    )
    .await;
    let backend = mock.backend();

    let issue = backend.update_title(3, "  New title ").await.unwrap();
    assert_eq!(issue.title, "New title");
    backend
        .update_body(3, "## Current state\nopen")
        .await
        .unwrap();

    let requests = mock.requests().await;
    assert_eq!(requests.len(), 2);
    assert_eq!(body_of(&requests[0]), json!({"title": "New title"}));
    assert_eq!(
        body_of(&requests[1]),
        json!({"body": "## Current state\nopen"})
    );
    assert!(requests.iter().all(|r| r.method.as_str() == "PATCH"));
}

#[tokio::test]
async fn invalid_title_is_refused_before_any_request() {
    let mock = GiteaMock::start().await;
    let backend = mock.backend();

    assert_eq!(
        backend.update_title(3, "  ").await.unwrap_err(),
        IssueError::InvalidTitle
    );
    let new = NewIssue {
        title: "two\nlines".into(),
        ..NewIssue::default()
    };
    assert_eq!(
        backend.create(&new).await.unwrap_err(),
        IssueError::InvalidTitle
    );
    assert!(mock.requests().await.is_empty());
}

#[tokio::test]
async fn close_and_reopen_patch_the_state() {
    let mock = GiteaMock::start().await;
    mock.on(
        "PATCH",
        "/issues/3",
        ok_json(201, issue_json(3, "T", "closed", &[])),
    )
    .await;
    let backend = mock.backend();

    let closed = backend.set_state(3, IssueState::Closed).await.unwrap();
    assert_eq!(closed.state, ReportedState::Closed);
    backend.set_state(3, IssueState::Open).await.unwrap();

    let bodies: Vec<Value> = mock.requests().await.iter().map(body_of).collect();
    assert_eq!(
        bodies,
        [json!({"state": "closed"}), json!({"state": "open"})]
    );
}

#[tokio::test]
async fn create_with_labels_costs_two_requests_then_one() {
    let mock = GiteaMock::start().await;
    let labels = json!([
        label_json(1, "bug"),
        label_json(2, "Kind/Feature"),
        label_json(3, "docs")
    ]);
    mock.on(
        "GET",
        "/labels",
        ok_json(200, labels).insert_header("X-Total-Count", "3"),
    )
    .await;
    let created = issue_json(
        12,
        "Add export",
        "open",
        &[(2, "Kind/Feature"), (3, "docs")],
    );
    mock.on("POST", "/issues", ok_json(201, created)).await;
    let backend = mock.backend();
    let new = NewIssue {
        title: "Add export".into(),
        body: "## Current state\n...".into(),
        labels: vec!["kind/feature".into(), "docs".into()],
    };

    let issue = backend.create(&new).await.unwrap();
    assert_eq!(issue.number, 12);
    assert_eq!(issue.labels, ["Kind/Feature", "docs"]);
    assert_eq!(mock.requests().await.len(), 2, "label list + create");

    backend.create(&new).await.unwrap();
    let requests = mock.requests().await;
    assert_eq!(requests.len(), 3, "labels cached: one more request");
    assert_eq!(requests[0].url.path(), "/api/v1/repos/acme/widgets/labels");
    assert!(requests[0].url.query().unwrap().contains("limit=50"));
    assert_eq!(
        body_of(&requests[1]),
        json!({"title": "Add export", "body": "## Current state\n...", "labels": [2, 3]})
    );
}

#[tokio::test]
async fn create_without_labels_costs_one_request() {
    let mock = GiteaMock::start().await;
    mock.on(
        "POST",
        "/issues",
        ok_json(201, issue_json(13, "Plain", "open", &[])),
    )
    .await;

    mock.backend()
        .create(&NewIssue {
            title: "Plain".into(),
            ..NewIssue::default()
        })
        .await
        .unwrap();

    let requests = mock.requests().await;
    assert_eq!(requests.len(), 1);
    assert_eq!(body_of(&requests[0]), json!({"title": "Plain", "body": ""}));
}

#[tokio::test]
async fn unknown_labels_fail_before_any_write_after_one_refresh() {
    let mock = GiteaMock::start().await;
    let labels = json!([label_json(1, "bug")]);
    mock.on(
        "GET",
        "/labels",
        ok_json(200, labels).insert_header("X-Total-Count", "1"),
    )
    .await;
    mock.on(
        "POST",
        "/issues",
        ok_json(201, issue_json(1, "x", "open", &[])),
    )
    .await;
    let backend = mock.backend();
    let new = NewIssue {
        title: "x".into(),
        labels: vec!["bug".into(), "nope".into(), "Other".into()],
        ..NewIssue::default()
    };

    let err = backend.create(&new).await.unwrap_err();
    assert_eq!(
        err,
        IssueError::LabelNotFound {
            names: vec!["nope".into(), "Other".into()]
        }
    );
    // Cached list lacks the names: refreshed once, still unknown.
    let err = backend.create(&new).await.unwrap_err();
    assert!(matches!(err, IssueError::LabelNotFound { .. }));
    let lines = mock.request_lines().await;
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines.iter().all(|l| l.starts_with("GET ")),
        "no POST: {lines:?}"
    );
}

#[tokio::test]
async fn label_list_is_read_page_by_page() {
    let mock = GiteaMock::start().await;
    let first: Vec<Value> = (1..=50).map(|i| label_json(i, &format!("l{i}"))).collect();
    let second: Vec<Value> = (51..=55).map(|i| label_json(i, &format!("l{i}"))).collect();
    mock.on_regex(
        "GET",
        "/labels",
        ok_json(200, json!(second)).insert_header("X-Total-Count", "55"),
    )
    .await;
    wiremock::Mock::given(wiremock::matchers::method("GET"))
        .and(wiremock::matchers::path(mock.repo_path("/labels")))
        .and(wiremock::matchers::query_param("page", "1"))
        .respond_with(ok_json(200, json!(first)).insert_header("X-Total-Count", "55"))
        .with_priority(1)
        .mount(&mock.server)
        .await;

    let labels = mock.backend().labels().await.unwrap();

    assert_eq!(labels.len(), 55);
    assert_eq!(labels[54].name, "l55");
    assert_eq!(labels[0].color.as_deref(), Some("00aabb"));
    let lines = mock.request_lines().await;
    assert_eq!(lines.len(), 2);
    assert!(lines[1].contains("page=2"), "{lines:?}");
}

#[tokio::test]
async fn list_sends_filters_and_reads_the_total() {
    let mock = GiteaMock::start().await;
    mock.on(
        "GET",
        "/labels",
        ok_json(200, json!([label_json(1, "Bug")])),
    )
    .await;
    let issues = json!([
        issue_json(9, "a", "closed", &[(1, "Bug")]),
        pull_json(8),
        issue_json(7, "b", "closed", &[(1, "Bug")])
    ]);
    mock.on(
        "GET",
        "/issues",
        ok_json(200, issues).insert_header("X-Total-Count", "7"),
    )
    .await;
    let query = IssueQuery {
        state: StateFilter::Closed,
        labels: vec!["bug".into()],
        page: 2,
        per_page: 3,
    };

    let page = mock.backend().list(&query).await.unwrap();

    let numbers: Vec<u64> = page.issues.iter().map(|i| i.number).collect();
    assert_eq!(numbers, [9, 7], "pull requests are dropped");
    assert_eq!(page.total, Some(7));
    assert_eq!(page.page, 2);
    assert!(page.has_more, "3 + 3 < 7");
    let lines = mock.request_lines().await;
    assert_eq!(
        lines[1],
        "GET /api/v1/repos/acme/widgets/issues?state=closed&type=issues&page=2&limit=3&labels=Bug"
    );
}

#[tokio::test]
async fn list_last_page_and_page_size_clamp() {
    let mock = GiteaMock::start().await;
    let issues = json!([issue_json(1, "only", "open", &[])]);
    mock.on(
        "GET",
        "/issues",
        ok_json(200, issues).insert_header("X-Total-Count", "51"),
    )
    .await;

    let query = IssueQuery {
        state: StateFilter::All,
        page: 2,
        per_page: 500,
        ..IssueQuery::default()
    };
    let page = mock.backend().list(&query).await.unwrap();

    assert!(!page.has_more, "50 + 1 == 51");
    assert_eq!(page.total, Some(51));
    let lines = mock.request_lines().await;
    assert_eq!(
        lines,
        ["GET /api/v1/repos/acme/widgets/issues?state=all&type=issues&page=2&limit=50"]
    );
}

#[tokio::test]
async fn list_follows_the_link_header_without_a_total() {
    let mock = GiteaMock::start().await;
    let issues = json!([
        issue_json(5, "a", "open", &[]),
        issue_json(4, "b", "open", &[])
    ]);
    let link = "<http://gitea.test/api/v1/repos/acme/widgets/issues?page=2&limit=2>; rel=\"next\"";
    mock.on(
        "GET",
        "/issues",
        ok_json(200, issues).insert_header("Link", link),
    )
    .await;

    let query = IssueQuery {
        per_page: 2,
        ..IssueQuery::default()
    };
    let page = mock.backend().list(&query).await.unwrap();

    assert_eq!(page.total, None);
    assert!(page.has_more);
    assert_eq!(page.page, 1);
    assert!(mock.request_lines().await[0].contains("state=open"));
}

#[tokio::test]
async fn list_with_unknown_label_is_label_not_found_without_listing() {
    let mock = GiteaMock::start().await;
    mock.on(
        "GET",
        "/labels",
        ok_json(200, json!([label_json(1, "bug")])),
    )
    .await;

    let query = IssueQuery {
        labels: vec!["nope".into()],
        ..IssueQuery::default()
    };
    let err = mock.backend().list(&query).await.unwrap_err();

    assert_eq!(
        err,
        IssueError::LabelNotFound {
            names: vec!["nope".into()]
        }
    );
    assert!(
        mock.request_lines()
            .await
            .iter()
            .all(|l| l.contains("/labels"))
    );
}

#[tokio::test]
async fn sub_path_install_puts_the_prefix_before_api() {
    let mock = GiteaMock::start_at("/git").await;
    mock.on(
        "GET",
        "/issues/1",
        ok_json(200, issue_json(1, "T", "open", &[])),
    )
    .await;

    let backend = mock.backend();
    backend.read(1).await.unwrap();

    assert_eq!(
        mock.request_lines().await,
        ["GET /git/api/v1/repos/acme/widgets/issues/1"]
    );
    let info = backend.info();
    assert_eq!(info.kind, "gitea");
    assert_eq!(info.repo, "acme/widgets");
    assert_eq!(
        info.url,
        Some(format!("{}/git/acme/widgets", mock.server.uri()))
    );
}

#[tokio::test]
async fn forgejo_shapes_are_read_and_reported_as_forgejo() {
    let mock = GiteaMock::start().await;
    mock.on(
        "GET",
        "/issues/2",
        ok_json(200, forgejo_issue_json(2, "From Forgejo", "closed")),
    )
    .await;

    let backend = mock.backend_of(ServerKind::Forgejo);
    let issue = backend.read(2).await.unwrap();

    assert_eq!(issue.title, "From Forgejo");
    assert_eq!(issue.state, ReportedState::Closed);
    assert_eq!(backend.info().kind, "forgejo");
}

#[tokio::test]
async fn owner_and_repo_are_percent_encoded_in_paths() {
    let mock = GiteaMock::start().await;
    let target = butler_worker::issues::gitea::GiteaTarget {
        web_root: mock.web_root(),
        owner: "we ird".into(),
        repo: "r#1".into(),
    };
    let backend = butler_worker::issues::gitea::GiteaBackend::new(
        target,
        &butler_worker::config::Secret::new(TOKEN),
        ServerKind::Gitea,
        GiteaMock::options(),
    )
    .unwrap();
    let _ = backend.read(1).await;
    assert_eq!(
        mock.request_lines().await,
        ["GET /api/v1/repos/we%20ird/r%231/issues/1"]
    );
}
