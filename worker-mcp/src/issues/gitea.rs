//! The Gitea / Forgejo issue backend: the issue operations Butler needs over REST API v1.
//!
//! Every request has a timeout; only reads (GET) are retried, so a comment or an issue is never
//! created twice. Errors are [`IssueError`]s that carry no status code, URL, body or token.

mod http;
mod labels;
mod wire;

use std::sync::Arc;

use reqwest::Method;
use url::Url;

pub use self::http::ClientOptions;
use self::http::Http;
use self::labels::LabelCache;
use self::wire::{CreateComment, CreateIssue, EditIssue, WireComment, WireIssue, WireLabel};
use crate::config::Secret;
use crate::issues::{
    BackendInfo, Comment, Issue, IssueBackend, IssueError, IssueFuture, IssuePage, IssueQuery,
    IssueState, Label, NewIssue, StateFilter, resolve_label_names, validate_title,
};

/// Gitea's largest page (`MAX_RESPONSE_ITEMS`); larger limits are clamped by the server.
const MAX_PAGE: u32 = 50;
/// Page size used when the caller asks for none.
const DEFAULT_PAGE: u32 = 10;
/// Upper bound on label pages fetched to resolve names (50 labels each).
const MAX_LABEL_PAGES: u32 = 20;

/// Which server answers: the two speak the same API v1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    Gitea,
    Forgejo,
}

impl ServerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Gitea => "gitea",
            Self::Forgejo => "forgejo",
        }
    }

    /// Forgejo reports versions like `11.0.3+gitea-1.22.0`; Gitea plain `1.27.1`.
    pub(crate) fn from_version(version: &str) -> Self {
        if version.contains("+gitea") || version.to_ascii_lowercase().contains("forgejo") {
            Self::Forgejo
        } else {
            Self::Gitea
        }
    }
}

/// What `GET /api/v1/version` said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServerProbe {
    pub kind: ServerKind,
    pub version: String,
}

/// Asks a server whether it speaks the Gitea API (`GET <web_root>/api/v1/version`), without
/// sending the token: the host might not be a Gitea server at all.
pub(crate) async fn probe_server(
    web_root: &Url,
    opts: ClientOptions,
) -> Result<ServerProbe, IssueError> {
    let opts = ClientOptions {
        read_retries: 0,
        ..opts
    };
    let http = Http::new(web_root, None, opts)?;
    let reply = http
        .get(&["version"], &[], "the issue tracker's API")
        .await?;
    let version: wire::WireVersion = reply.json()?;
    Ok(ServerProbe {
        kind: ServerKind::from_version(&version.version),
        version: version.version,
    })
}

/// One repository on a Gitea or Forgejo server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GiteaTarget {
    /// The server's web root, including any sub-path (`https://example.com/git`).
    pub web_root: Url,
    pub owner: String,
    pub repo: String,
}

/// The Gitea / Forgejo backend for one repository; labels are cached for its lifetime.
pub struct GiteaBackend {
    http: Http,
    target: GiteaTarget,
    kind: ServerKind,
    labels: LabelCache,
}

impl std::fmt::Debug for GiteaBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GiteaBackend")
            .field("kind", &self.kind)
            .field(
                "repo",
                &format_args!("{}/{}", self.target.owner, self.target.repo),
            )
            .finish_non_exhaustive()
    }
}

impl GiteaBackend {
    pub fn new(
        target: GiteaTarget,
        token: &Secret,
        kind: ServerKind,
        opts: ClientOptions,
    ) -> Result<Self, IssueError> {
        let http = Http::new(&target.web_root, Some(token), opts)?;
        Ok(Self {
            http,
            target,
            kind,
            labels: LabelCache::default(),
        })
    }

    pub fn kind(&self) -> ServerKind {
        self.kind
    }

    /// The repository's web page, without credentials.
    pub(crate) fn repo_url(&self) -> String {
        let root = self.target.web_root.as_str().trim_end_matches('/');
        format!("{root}/{}/{}", self.target.owner, self.target.repo)
    }

    fn issue_path<'a>(&'a self, tail: &[&'a str]) -> Vec<&'a str> {
        let mut path = vec![
            "repos",
            self.target.owner.as_str(),
            self.target.repo.as_str(),
        ];
        path.extend_from_slice(tail);
        path
    }

    pub(crate) async fn read_issue(&self, number: u64) -> Result<Issue, IssueError> {
        let n = number.to_string();
        let reply = self
            .http
            .get(&self.issue_path(&["issues", &n]), &[], &issue_what(number))
            .await?;
        Ok(reply.json::<WireIssue>()?.into_issue())
    }

    /// The issue's last `n` plain comments, oldest first. The endpoint has no paging, so the
    /// list is fetched once and cut here.
    pub(crate) async fn last_comments_of(
        &self,
        number: u64,
        n: usize,
    ) -> Result<Vec<Comment>, IssueError> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let num = number.to_string();
        let path = self.issue_path(&["issues", &num, "comments"]);
        let reply = self.http.get(&path, &[], &issue_what(number)).await?;
        let mut all: Vec<WireComment> = reply.json()?;
        let skip = all.len().saturating_sub(n);
        Ok(all.drain(skip..).map(WireComment::into_comment).collect())
    }

    pub(crate) async fn add_comment(&self, number: u64, body: &str) -> Result<Comment, IssueError> {
        let num = number.to_string();
        let path = self.issue_path(&["issues", &num, "comments"]);
        let reply = self
            .http
            .write(
                Method::POST,
                &path,
                Some(&CreateComment { body }),
                &issue_what(number),
            )
            .await?;
        Ok(reply.json::<WireComment>()?.into_comment())
    }

    /// Deletes a comment after checking it belongs to this issue, so a wrong pair is
    /// `not_found` rather than the deletion of another issue's comment.
    pub(crate) async fn remove_comment(
        &self,
        number: u64,
        comment_id: u64,
    ) -> Result<(), IssueError> {
        let what = format!("comment {comment_id} on issue #{number}");
        let id = comment_id.to_string();
        let path = self.issue_path(&["issues", "comments", &id]);
        let reply = self.http.get(&path, &[], &what).await?;
        let belongs = reply.status == reqwest::StatusCode::OK
            && reply.json::<WireComment>()?.issue_number() == Some(number);
        if !belongs {
            return Err(IssueError::NotFound { what });
        }
        self.http
            .write(Method::DELETE, &path, None::<&()>, &what)
            .await
            .map(|_| ())
    }

    async fn edit(&self, number: u64, edit: EditIssue<'_>) -> Result<Issue, IssueError> {
        let n = number.to_string();
        let path = self.issue_path(&["issues", &n]);
        let reply = self
            .http
            .write(Method::PATCH, &path, Some(&edit), &issue_what(number))
            .await?;
        Ok(reply.json::<WireIssue>()?.into_issue())
    }

    pub(crate) async fn set_title(&self, number: u64, title: &str) -> Result<Issue, IssueError> {
        let title = validate_title(title)?;
        self.edit(
            number,
            EditIssue {
                title: Some(&title),
                ..EditIssue::default()
            },
        )
        .await
    }

    pub(crate) async fn set_body(&self, number: u64, body: &str) -> Result<Issue, IssueError> {
        self.edit(
            number,
            EditIssue {
                body: Some(body),
                ..EditIssue::default()
            },
        )
        .await
    }

    pub(crate) async fn change_state(
        &self,
        number: u64,
        state: IssueState,
    ) -> Result<Issue, IssueError> {
        let state = match state {
            IssueState::Open => "open",
            IssueState::Closed => "closed",
        };
        self.edit(
            number,
            EditIssue {
                state: Some(state),
                ..EditIssue::default()
            },
        )
        .await
    }

    /// Creates an issue; label names are resolved first, so an unknown name fails before any
    /// write.
    pub(crate) async fn create_issue(&self, new: &NewIssue) -> Result<Issue, IssueError> {
        let title = validate_title(&new.title)?;
        let label_ids: Vec<u64> = self
            .resolve_labels(&new.labels)
            .await?
            .iter()
            .map(|l| l.id)
            .collect();
        let body = CreateIssue {
            title: &title,
            body: &new.body,
            labels: &label_ids,
        };
        let reply = self
            .http
            .write(
                Method::POST,
                &self.issue_path(&["issues"]),
                Some(&body),
                "the repository",
            )
            .await?;
        let issue = reply.json::<WireIssue>()?.into_issue();
        if !label_ids.is_empty() && issue.labels.is_empty() {
            // Gitea silently drops labels when the token may not write issues' labels.
            tracing::warn!(
                number = issue.number,
                "the issue tracker dropped the labels"
            );
        }
        Ok(issue)
    }

    pub(crate) async fn list_issues(&self, query: &IssueQuery) -> Result<IssuePage, IssueError> {
        let page = query.page.max(1);
        let per_page = match query.per_page {
            0 => DEFAULT_PAGE,
            n => n.min(MAX_PAGE),
        };
        let state = match query.state {
            StateFilter::Open => "open",
            StateFilter::Closed => "closed",
            StateFilter::All => "all",
        };
        let mut params = vec![
            ("state", state.to_string()),
            ("type", "issues".to_string()),
            ("page", page.to_string()),
            ("limit", per_page.to_string()),
        ];
        if !query.labels.is_empty() {
            // Gitea ignores unknown label names (and then filters nothing): resolve them first
            // and send the repository's own spelling.
            let labels = self.resolve_labels(&query.labels).await?;
            let names: Vec<&str> = labels.iter().map(|l| l.name.as_str()).collect();
            params.push(("labels", names.join(",")));
        }
        let reply = self
            .http
            .get(&self.issue_path(&["issues"]), &params, "the repository")
            .await?;
        let wire: Vec<WireIssue> = reply.json()?;
        let received = wire.len() as u64;
        let issues: Vec<Issue> = wire
            .into_iter()
            .filter(|i| !i.is_pull_request())
            .map(WireIssue::into_issue)
            .collect();
        let total = reply.header_u64("x-total-count");
        let has_more = if reply.has_next_link() {
            true
        } else {
            match total {
                Some(total) => u64::from(page - 1) * u64::from(per_page) + received < total,
                None => received == u64::from(per_page),
            }
        };
        Ok(IssuePage {
            issues,
            total,
            page,
            has_more,
        })
    }

    /// The repository's labels, from the cache when present.
    pub(crate) async fn repo_labels(&self) -> Result<Arc<Vec<Label>>, IssueError> {
        match self.labels.get() {
            Some(labels) => Ok(labels),
            None => self.fetch_labels().await,
        }
    }

    async fn fetch_labels(&self) -> Result<Arc<Vec<Label>>, IssueError> {
        let path = self.issue_path(&["labels"]);
        let mut all = Vec::new();
        for page in 1..=MAX_LABEL_PAGES {
            let params = [("page", page.to_string()), ("limit", MAX_PAGE.to_string())];
            let reply = self.http.get(&path, &params, "the repository").await?;
            let batch: Vec<WireLabel> = reply.json()?;
            let len = batch.len() as u64;
            all.extend(batch.into_iter().map(WireLabel::into_label));
            let done = match reply.header_u64("x-total-count") {
                Some(total) => all.len() as u64 >= total,
                None => len < u64::from(MAX_PAGE),
            };
            if done || len == 0 {
                break;
            }
        }
        Ok(self.labels.put(all))
    }

    /// Label names → ids; a cached list that lacks a name is refreshed once before giving up.
    async fn resolve_labels(&self, names: &[String]) -> Result<Vec<Label>, IssueError> {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let (labels, fresh) = match self.labels.get() {
            Some(labels) => (labels, false),
            None => (self.fetch_labels().await?, true),
        };
        match resolve_label_names(&labels, names) {
            Err(IssueError::LabelNotFound { .. }) if !fresh => {
                resolve_label_names(&self.fetch_labels().await?, names)
            }
            other => other,
        }
    }
}

fn issue_what(number: u64) -> String {
    format!("issue #{number}")
}

impl IssueBackend for GiteaBackend {
    fn info(&self) -> BackendInfo {
        BackendInfo {
            kind: self.kind.as_str(),
            repo: format!("{}/{}", self.target.owner, self.target.repo),
            url: Some(self.repo_url()),
        }
    }

    fn read(&self, number: u64) -> IssueFuture<'_, Issue> {
        Box::pin(self.read_issue(number))
    }

    fn last_comments(&self, number: u64, n: usize) -> IssueFuture<'_, Vec<Comment>> {
        Box::pin(self.last_comments_of(number, n))
    }

    fn comment(&self, number: u64, body: &str) -> IssueFuture<'_, Comment> {
        let body = body.to_string();
        Box::pin(async move { self.add_comment(number, &body).await })
    }

    fn delete_comment(&self, number: u64, comment_id: u64) -> IssueFuture<'_, ()> {
        Box::pin(self.remove_comment(number, comment_id))
    }

    fn update_title(&self, number: u64, title: &str) -> IssueFuture<'_, Issue> {
        let title = title.to_string();
        Box::pin(async move { self.set_title(number, &title).await })
    }

    fn update_body(&self, number: u64, body: &str) -> IssueFuture<'_, Issue> {
        let body = body.to_string();
        Box::pin(async move { self.set_body(number, &body).await })
    }

    fn create(&self, new: &NewIssue) -> IssueFuture<'_, Issue> {
        let new = new.clone();
        Box::pin(async move { self.create_issue(&new).await })
    }

    fn set_state(&self, number: u64, state: IssueState) -> IssueFuture<'_, Issue> {
        Box::pin(self.change_state(number, state))
    }

    fn list(&self, query: &IssueQuery) -> IssueFuture<'_, IssuePage> {
        let query = query.clone();
        Box::pin(async move { self.list_issues(&query).await })
    }

    fn labels(&self) -> IssueFuture<'_, Vec<Label>> {
        Box::pin(async move { Ok(self.repo_labels().await?.as_ref().clone()) })
    }
}
