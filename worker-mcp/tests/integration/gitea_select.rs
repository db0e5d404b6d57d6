//! Choosing the issue backend: `local`, `gitea`, `auto` against a wiremock Gitea / Forgejo.

use std::path::Path;

use crate::gitea_backend::*;
use butler_worker::config::IssueConfig;
use butler_worker::issues::select::{SelectError, Selection, SelectionReason, select_backend};
use butler_worker::issues::{
    BackendInfo, Comment, Issue, IssueBackend, IssueError, IssueFuture, IssuePage, IssueQuery,
    IssueState, Label, NewIssue,
};
use butler_worker::remote_url::{RemoteRepo, parse_remote};
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

/// Stands in for the embedded store: only its identity matters to selection.
struct FakeLocal;

impl IssueBackend for FakeLocal {
    fn info(&self) -> BackendInfo {
        BackendInfo {
            kind: "local",
            repo: "local".into(),
            url: None,
        }
    }
    fn read(&self, _: u64) -> IssueFuture<'_, Issue> {
        Box::pin(async { Err(IssueError::Unreachable) })
    }
    fn last_comments(&self, _: u64, _: usize) -> IssueFuture<'_, Vec<Comment>> {
        Box::pin(async { Err(IssueError::Unreachable) })
    }
    fn comment(&self, _: u64, _: &str) -> IssueFuture<'_, Comment> {
        Box::pin(async { Err(IssueError::Unreachable) })
    }
    fn delete_comment(&self, _: u64, _: u64) -> IssueFuture<'_, ()> {
        Box::pin(async { Err(IssueError::Unreachable) })
    }
    fn update_title(&self, _: u64, _: &str) -> IssueFuture<'_, Issue> {
        Box::pin(async { Err(IssueError::Unreachable) })
    }
    fn update_body(&self, _: u64, _: &str) -> IssueFuture<'_, Issue> {
        Box::pin(async { Err(IssueError::Unreachable) })
    }
    fn create(&self, _: &NewIssue) -> IssueFuture<'_, Issue> {
        Box::pin(async { Err(IssueError::Unreachable) })
    }
    fn set_state(&self, _: u64, _: IssueState) -> IssueFuture<'_, Issue> {
        Box::pin(async { Err(IssueError::Unreachable) })
    }
    fn list(&self, _: &IssueQuery) -> IssueFuture<'_, IssuePage> {
        Box::pin(async { Err(IssueError::Unreachable) })
    }
    fn labels(&self) -> IssueFuture<'_, Vec<Label>> {
        Box::pin(async { Err(IssueError::Unreachable) })
    }
}

fn local() -> Result<Box<dyn IssueBackend>, IssueError> {
    Ok(Box::new(FakeLocal))
}

fn config(env: &[(&str, &str)], file: Option<&str>) -> IssueConfig {
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    IssueConfig::from_sources(file, Path::new(".butler/config.toml"), move |name| {
        env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    })
    .expect("config is valid")
}

fn remote_of(mock: &GiteaMock) -> RemoteRepo {
    parse_remote(&format!("{}/{OWNER}/{REPO}.git", mock.web_root())).expect("remote parses")
}

async fn serve_version(mock: &GiteaMock, version: &str) {
    Mock::given(method("GET"))
        .and(path(mock.api_path("/version")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"version": version})))
        .mount(&mock.server)
        .await;
}

async fn select(
    cfg: &IssueConfig,
    remote: Option<&RemoteRepo>,
) -> Result<(Box<dyn IssueBackend>, Selection), SelectError> {
    select_backend(cfg, remote, local).await
}

#[tokio::test]
async fn auto_without_token_is_local_and_sends_nothing() {
    let mock = GiteaMock::start().await;
    serve_version(&mock, "1.27.1").await;

    let (backend, sel) = select(&config(&[], None), Some(&remote_of(&mock)))
        .await
        .unwrap();

    assert_eq!(backend.info().kind, "local");
    assert_eq!(sel.kind, "local");
    assert_eq!(sel.reason, SelectionReason::NoToken);
    assert!(mock.requests().await.is_empty());
}

#[tokio::test]
async fn auto_with_token_detects_gitea_without_sending_the_token() {
    let mock = GiteaMock::start_at("/git").await;
    serve_version(&mock, "1.27.1").await;
    let hosts = mock.server.uri();
    let cfg = config(
        &[("GITEA_TOKEN", TOKEN), ("BUTLER_GITEA_HOSTS", &hosts)],
        None,
    );

    let (backend, sel) = select(&cfg, Some(&remote_of(&mock))).await.unwrap();

    assert_eq!(sel.kind, "gitea");
    assert_eq!(sel.repo.as_deref(), Some("acme/widgets"));
    assert_eq!(
        sel.reason,
        SelectionReason::DetectedGitea {
            version: Some("1.27.1".into())
        }
    );
    assert_eq!(backend.info().kind, "gitea");
    assert_eq!(
        backend.info().url,
        Some(format!("{}/git/acme/widgets", mock.server.uri()))
    );
    let requests = mock.requests().await;
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].url.path(), "/git/api/v1/version");
    assert!(
        requests[0].headers.get("authorization").is_none(),
        "probe carries no token"
    );
    assert_no_token(&[format!("{sel:?}")], "the selection");
}

#[tokio::test]
async fn auto_detects_forgejo_from_its_version() {
    let mock = GiteaMock::start().await;
    serve_version(&mock, "11.0.3+gitea-1.22.0").await;
    let hosts = mock.server.uri();
    let cfg = config(
        &[
            ("BUTLER_GITEA_TOKEN", TOKEN),
            ("BUTLER_GITEA_HOSTS", &hosts),
        ],
        None,
    );

    let (backend, sel) = select(&cfg, Some(&remote_of(&mock))).await.unwrap();

    assert_eq!(sel.kind, "forgejo");
    assert_eq!(backend.info().kind, "forgejo");
    assert!(
        matches!(&sel.reason, SelectionReason::DetectedGitea { version: Some(v) } if v.contains("gitea-1.22.0")),
        "{sel:?}"
    );
}

#[tokio::test]
async fn auto_on_a_host_without_the_gitea_api_is_local() {
    let mock = GiteaMock::not_found().await;
    let hosts = mock.server.uri();
    let cfg = config(
        &[
            ("BUTLER_GITEA_TOKEN", TOKEN),
            ("BUTLER_GITEA_HOSTS", &hosts),
        ],
        None,
    );

    let (backend, sel) = select(&cfg, Some(&remote_of(&mock))).await.unwrap();

    assert_eq!(backend.info().kind, "local");
    assert_eq!(sel.reason, SelectionReason::NotGitea);
    let requests = mock.requests().await;
    assert_eq!(requests.len(), 1, "one probe, no retries");
    assert!(requests[0].headers.get("authorization").is_none());
}

#[tokio::test]
async fn auto_without_remote_is_local() {
    let cfg = config(&[("BUTLER_GITEA_TOKEN", TOKEN)], None);
    let (_, sel) = select(&cfg, None).await.unwrap();
    assert_eq!(sel.reason, SelectionReason::NoRemote);
}

#[tokio::test]
async fn configured_url_and_repo_need_no_remote() {
    let mock = GiteaMock::start().await;
    serve_version(&mock, "1.27.1").await;
    mock.on(
        "GET",
        "/issues/1",
        ok_json(200, issue_json(1, "via config", "open", &[])),
    )
    .await;
    let file = format!(
        "[issues]\ngitea_url = \"{}\"\nrepo = \"acme/widgets\"\n",
        mock.web_root()
    );
    let hosts = mock.server.uri();
    let cfg = config(
        &[
            ("BUTLER_GITEA_TOKEN", TOKEN),
            ("BUTLER_GITEA_HOSTS", &hosts),
        ],
        Some(&file),
    );

    let (backend, sel) = select(&cfg, None).await.unwrap();

    assert_eq!(sel.kind, "gitea");
    assert_eq!(backend.read(1).await.unwrap().title, "via config");
}

#[tokio::test]
async fn local_is_used_when_configured_even_with_a_token() {
    let mock = GiteaMock::start().await;
    serve_version(&mock, "1.27.1").await;
    let cfg = config(
        &[
            ("BUTLER_GITEA_TOKEN", TOKEN),
            ("BUTLER_ISSUE_BACKEND", "local"),
        ],
        None,
    );

    let (_, sel) = select(&cfg, Some(&remote_of(&mock))).await.unwrap();

    assert_eq!(sel.reason, SelectionReason::ConfiguredLocal);
    assert!(mock.requests().await.is_empty());
}

#[tokio::test]
async fn forced_gitea_without_token_or_server_is_a_typed_error() {
    let mock = GiteaMock::start().await;
    let cfg = config(&[("BUTLER_ISSUE_BACKEND", "gitea")], None);
    let err = select(&cfg, Some(&remote_of(&mock))).await.err().unwrap();
    assert!(matches!(err, SelectError::MissingToken), "{err}");
    assert!(err.to_string().contains("BUTLER_GITEA_TOKEN"));

    let cfg = config(
        &[("BUTLER_ISSUE_BACKEND", "gitea"), ("GITEA_TOKEN", TOKEN)],
        None,
    );
    let err = select(&cfg, None).await.err().unwrap();
    assert!(matches!(err, SelectError::MissingUrl), "{err}");
    assert_no_token(&[err.to_string(), format!("{err:?}")], "the error");

    let file = "[issues]\ngitea_url = \"https://gitea.invalid/\"\n";
    let err = select(&cfg_with(file), None).await.err().unwrap();
    assert!(matches!(err, SelectError::MissingRepo), "{err}");
}

fn cfg_with(file: &str) -> IssueConfig {
    config(
        &[("BUTLER_ISSUE_BACKEND", "gitea"), ("GITEA_TOKEN", TOKEN)],
        Some(file),
    )
}

#[tokio::test]
async fn forced_gitea_is_used_even_when_the_probe_fails() {
    let mock = GiteaMock::server_error().await;
    let hosts = mock.server.uri();
    let cfg = config(
        &[
            ("BUTLER_ISSUE_BACKEND", "gitea"),
            ("GITEA_TOKEN", TOKEN),
            ("BUTLER_GITEA_HOSTS", &hosts),
        ],
        None,
    );

    let (backend, sel) = select(&cfg, Some(&remote_of(&mock))).await.unwrap();

    assert_eq!(sel.kind, "gitea");
    assert_eq!(
        sel.reason,
        SelectionReason::ConfiguredGitea { version: None }
    );
    assert_eq!(backend.info().repo, "acme/widgets");
}

// ---------------------------------------------------------------------------------------------
// The token goes only where the user sent it.
// ---------------------------------------------------------------------------------------------

/// Asserts that no request reached the stand-in, or at least none with a credential.
async fn assert_no_authorization(mock: &GiteaMock) {
    for request in mock.requests().await {
        assert!(
            request.headers.get("authorization").is_none(),
            "the token went to {}",
            request.url
        );
        assert!(!request.url.as_str().contains(TOKEN));
    }
}

#[tokio::test]
async fn auto_never_asks_a_host_the_token_is_not_bound_to() {
    let foreign = GiteaMock::start().await;
    serve_version(&foreign, "1.27.1").await;
    let cfg = config(
        &[
            ("BUTLER_GITEA_TOKEN", TOKEN),
            ("BUTLER_GITEA_HOSTS", "https://git.users-own.example"),
        ],
        None,
    );

    let (backend, sel) = select(&cfg, Some(&remote_of(&foreign))).await.unwrap();

    assert_eq!(backend.info().kind, "local");
    assert_eq!(
        sel.reason,
        SelectionReason::TokenNotBound {
            host: foreign.server.uri()
        }
    );
    assert!(foreign.requests().await.is_empty(), "not even probed");
}

#[tokio::test]
async fn a_token_without_any_bound_host_is_not_sent_to_the_remote() {
    let mock = GiteaMock::start().await;
    serve_version(&mock, "1.27.1").await;
    let cfg = config(&[("BUTLER_GITEA_TOKEN", TOKEN)], None);

    let (backend, sel) = select(&cfg, Some(&remote_of(&mock))).await.unwrap();

    assert_eq!(backend.info().kind, "local");
    assert!(matches!(sel.reason, SelectionReason::TokenNotBound { .. }));
    assert!(mock.requests().await.is_empty());
}

#[tokio::test]
async fn the_projects_file_cannot_point_the_token_elsewhere() {
    let users = GiteaMock::start().await;
    let hostile = GiteaMock::start().await;
    serve_version(&hostile, "1.27.1").await;
    // A committed `.butler/config.toml` on a hostile branch names another server.
    let file = format!(
        "[issues]\nbackend = \"gitea\"\ngitea_url = \"{}\"\nrepo = \"acme/widgets\"\n",
        hostile.web_root()
    );
    let hosts = users.server.uri();
    let cfg = config(
        &[
            ("BUTLER_GITEA_TOKEN", TOKEN),
            ("BUTLER_GITEA_HOSTS", &hosts),
        ],
        Some(&file),
    );

    let err = select(&cfg, Some(&remote_of(&users))).await.err().unwrap();

    assert!(
        matches!(&err, SelectError::TokenNotBound { host } if *host == hostile.server.uri()),
        "{err:?}"
    );
    assert!(err.to_string().contains("BUTLER_GITEA_HOSTS"), "{err}");
    assert_no_token(&[err.to_string(), format!("{err:?}")], "the refusal");
    assert!(
        hostile.requests().await.is_empty(),
        "nothing was sent there"
    );
    assert_no_authorization(&hostile).await;
    // The same file in `auto` mode: the embedded store, and still nothing sent.
    let auto = file.replace("backend = \"gitea\"", "backend = \"auto\"");
    let cfg = config(
        &[
            ("BUTLER_GITEA_TOKEN", TOKEN),
            ("BUTLER_GITEA_HOSTS", &hosts),
        ],
        Some(&auto),
    );
    let (backend, _) = select(&cfg, Some(&remote_of(&users))).await.unwrap();
    assert_eq!(backend.info().kind, "local");
    assert!(hostile.requests().await.is_empty());
}

#[tokio::test]
async fn plain_http_to_another_machine_is_refused_before_anything_is_sent() {
    for backend in ["gitea", "auto"] {
        let cfg = config(
            &[
                ("BUTLER_ISSUE_BACKEND", backend),
                ("BUTLER_GITEA_TOKEN", TOKEN),
                ("BUTLER_GITEA_URL", "http://gitea.invalid:3000/"),
            ],
            Some("[issues]\nrepo = \"acme/widgets\"\n"),
        );
        let err = select(&cfg, None).await.err().unwrap();
        assert!(
            matches!(&err, SelectError::PlainHttp { host } if host == "http://gitea.invalid:3000"),
            "{backend}: {err:?}"
        );
        assert!(err.to_string().contains("BUTLER_GITEA_INSECURE_HTTP"));
    }
    // With `BUTLER_GITEA_INSECURE_HTTP=1` the user accepts it (see `issues::binding`'s tests;
    // no request is made here: nothing may leave this machine in a test).
}

#[tokio::test]
async fn a_bound_loopback_server_over_http_gets_the_token() {
    let mock = GiteaMock::start().await;
    serve_version(&mock, "1.27.1").await;
    mock.on(
        "GET",
        "/issues/1",
        ok_json(200, issue_json(1, "bound", "open", &[])),
    )
    .await;
    let url = mock.web_root().to_string();
    let cfg = config(
        &[("BUTLER_GITEA_TOKEN", TOKEN), ("BUTLER_GITEA_URL", &url)],
        Some("[issues]\nrepo = \"acme/widgets\"\n"),
    );

    let (backend, _) = select(&cfg, None).await.unwrap();

    assert_eq!(backend.read(1).await.unwrap().title, "bound");
}
