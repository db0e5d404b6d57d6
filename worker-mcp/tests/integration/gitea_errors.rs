//! Every failure of the Gitea backend maps to a typed error that leaks nothing: no status
//! code, no URL, no response body, no token.

use std::time::{Duration, Instant};

use crate::gitea_backend::*;
use butler_worker::issues::gitea::{GiteaBackend, GiteaTarget, ServerKind};
use butler_worker::issues::{IssueBackend, IssueError, IssueQuery, IssueState, NewIssue};

/// Runs every backend operation once and returns the results' errors.
async fn every_operation(backend: &GiteaBackend) -> Vec<(&'static str, IssueError)> {
    let new = NewIssue {
        title: "t".into(),
        ..NewIssue::default()
    };
    let results = vec![
        ("read", backend.read(1).await.err()),
        ("last_comments", backend.last_comments(1, 2).await.err()),
        ("comment", backend.comment(1, "b").await.err()),
        ("delete_comment", backend.delete_comment(1, 2).await.err()),
        ("update_title", backend.update_title(1, "t").await.err()),
        ("update_body", backend.update_body(1, "b").await.err()),
        ("create", backend.create(&new).await.err()),
        (
            "set_state",
            backend.set_state(1, IssueState::Closed).await.err(),
        ),
        ("list", backend.list(&IssueQuery::default()).await.err()),
        ("labels", backend.labels().await.err()),
    ];
    results
        .into_iter()
        .map(|(op, e)| (op, e.unwrap_or_else(|| panic!("{op} should fail"))))
        .collect()
}

fn texts(errors: &[(&str, IssueError)]) -> Vec<String> {
    errors
        .iter()
        .flat_map(|(_, e)| [e.to_string(), format!("{e:?}")])
        .collect()
}

/// No error text carries a status code, the mock's address or the response body.
fn assert_nothing_leaks(mock: &GiteaMock, errors: &[(&str, IssueError)]) {
    let texts = texts(errors);
    assert_no_token(&texts, "an error");
    let address = mock.server.address().to_string();
    for text in &texts {
        assert!(!text.contains(&address), "URL leaked: {text}");
        assert!(!text.contains("127.0.0.1"), "host leaked: {text}");
        assert!(!text.contains("swagger"), "body leaked: {text}");
        for code in [
            "401", "403", "404", "409", "412", "422", "423", "500", "502",
        ] {
            assert!(!text.contains(code), "status code leaked: {text}");
        }
    }
}

async fn all_fail_with(mock: GiteaMock, expected: impl Fn(&IssueError) -> bool) {
    let errors = every_operation(&mock.backend()).await;
    for (op, err) in &errors {
        assert!(expected(err), "{op}: unexpected {err:?}");
    }
    assert_nothing_leaks(&mock, &errors);
}

#[tokio::test]
async fn unauthorized_is_auth_failed() {
    all_fail_with(GiteaMock::unauthorized().await, |e| {
        *e == IssueError::AuthFailed
    })
    .await;
}

#[tokio::test]
async fn forbidden_is_auth_failed() {
    all_fail_with(GiteaMock::status(403).await, |e| {
        *e == IssueError::AuthFailed
    })
    .await;
}

#[tokio::test]
async fn not_found_names_the_target() {
    let mock = GiteaMock::not_found().await;
    let errors = every_operation(&mock.backend()).await;
    for (op, err) in &errors {
        assert!(matches!(err, IssueError::NotFound { .. }), "{op}: {err:?}");
    }
    let read = &errors[0].1;
    assert_eq!(
        *read,
        IssueError::NotFound {
            what: "issue #1".into()
        }
    );
    assert_nothing_leaks(&mock, &errors);
}

#[tokio::test]
async fn conflict_and_precondition_failed_are_conflict() {
    all_fail_with(GiteaMock::status(409).await, |e| *e == IssueError::Conflict).await;
    all_fail_with(GiteaMock::status(412).await, |e| *e == IssueError::Conflict).await;
}

#[tokio::test]
async fn validation_and_archived_are_backend_errors() {
    for status in [422, 423, 400] {
        all_fail_with(GiteaMock::status(status).await, |e| {
            matches!(e, IssueError::Backend { .. })
        })
        .await;
    }
}

#[tokio::test]
async fn too_many_requests_is_rate_limited_with_the_wait_it_asks_for() {
    all_fail_with(GiteaMock::status(429).await, |e| {
        *e == IssueError::RateLimited {
            retry_after_secs: None,
        }
    })
    .await;
    for (value, secs) in [("17", 17), ("Wed, 21 Oct 2015 07:30:00 GMT", 120)] {
        let mock = GiteaMock::start().await;
        let busy = error_reply(429, "slow down")
            .insert_header("Retry-After", value)
            .insert_header("Date", "Wed, 21 Oct 2015 07:28:00 GMT");
        mock.on("GET", "/issues/1", busy).await;
        assert_eq!(
            mock.backend().read(1).await.unwrap_err(),
            IssueError::RateLimited {
                retry_after_secs: Some(secs)
            }
        );
        assert_eq!(
            mock.requests().await.len(),
            1,
            "a rate limit is not retried"
        );
    }
}

#[tokio::test]
async fn server_error_is_backend_error_and_reads_are_retried_writes_not() {
    let mock = GiteaMock::server_error().await;
    let backend = mock.backend();

    let err = backend.read(1).await.unwrap_err();
    assert!(matches!(err, IssueError::Backend { .. }), "{err:?}");
    assert_eq!(mock.requests().await.len(), 3, "one read + two retries");

    let err = backend.comment(1, "hello").await.unwrap_err();
    assert!(matches!(err, IssueError::Backend { .. }));
    let err = backend
        .create(&NewIssue {
            title: "t".into(),
            ..NewIssue::default()
        })
        .await;
    assert!(matches!(err, Err(IssueError::Backend { .. })));
    let lines = mock.request_lines().await;
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("POST")).count(),
        2,
        "{lines:?}"
    );
    assert_nothing_leaks(&mock, &every_operation(&backend).await);
}

#[tokio::test]
async fn a_transient_read_failure_is_retried_to_success() {
    let mock = GiteaMock::start().await;
    wiremock::Mock::given(wiremock::matchers::any())
        .respond_with(error_reply(502, ""))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&mock.server)
        .await;
    mock.on(
        "GET",
        "/issues/1",
        ok_json(200, issue_json(1, "back", "open", &[])),
    )
    .await;

    let issue = mock.backend().read(1).await.unwrap();

    assert_eq!(issue.title, "back");
    assert_eq!(mock.requests().await.len(), 2);
}

#[tokio::test]
async fn slow_server_is_a_read_timeout_and_an_unconfirmed_write_sent_once() {
    let mock = GiteaMock::slow(Duration::from_secs(3)).await;
    let backend = mock.backend();

    let started = Instant::now();
    assert_eq!(backend.read(1).await.unwrap_err(), IssueError::ReadTimeout);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "timeout applies per request"
    );
    assert_eq!(mock.requests().await.len(), 3, "reads retried");

    assert_eq!(
        backend.comment(1, "b").await.unwrap_err(),
        IssueError::WriteUnconfirmed,
        "a write that timed out may have been applied"
    );
    assert_eq!(mock.requests().await.len(), 4, "the comment was sent once");
}

#[tokio::test]
async fn malformed_body_is_backend_error_without_the_body() {
    all_fail_with(GiteaMock::malformed_body().await, |e| {
        matches!(e, IssueError::Backend { .. })
    })
    .await;
}

#[tokio::test]
async fn connection_refused_is_unreachable() {
    // Bind and drop a listener so the port is closed.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let target = GiteaTarget {
        web_root: format!("http://127.0.0.1:{port}/").parse().unwrap(),
        owner: OWNER.into(),
        repo: REPO.into(),
    };
    let backend = GiteaBackend::new(
        target,
        &butler_worker::config::Secret::new(TOKEN),
        ServerKind::Gitea,
        GiteaMock::options(),
    )
    .unwrap();

    let errors = every_operation(&backend).await;
    for (op, err) in &errors {
        assert_eq!(*err, IssueError::Unreachable, "{op}");
    }
    assert_no_token(&texts(&errors), "an error");
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let mock = GiteaMock::start().await;
    let moved = wiremock::ResponseTemplate::new(301).insert_header(
        "Location",
        "http://elsewhere.invalid/api/v1/repos/x/y/issues/1",
    );
    mock.on("GET", "/issues/1", moved).await;

    let err = mock.backend().read(1).await.unwrap_err();

    assert!(matches!(err, IssueError::Backend { .. }), "{err:?}");
    assert!(!err.to_string().contains("elsewhere"));
    assert_eq!(mock.requests().await.len(), 1);
}

#[tokio::test]
async fn the_backend_itself_never_shows_the_token() {
    let mock = GiteaMock::start().await;
    let backend = mock.backend();
    let info = backend.info();
    assert_no_token(
        &[format!("{backend:?}"), format!("{info:?}")],
        "a debug string",
    );
    assert_eq!(info.url.as_deref().map(|u| u.contains('@')), Some(false));
}
