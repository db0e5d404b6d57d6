//! Issue backends: the one interface every issue tracker implements, and its shared types.
//!
//! Brain-facing code never calls a tracker's API directly: it holds an `Arc<dyn IssueBackend>`
//! chosen by [`select`] (a Gitea/Forgejo server, or the embedded [`local`] store kept in the
//! repository's ledger file). Every backend validates titles with [`validate_title`] and resolves
//! label names with [`resolve_label_names`] before doing any I/O, so they reject the same inputs
//! the same way.

pub(crate) mod binding;
pub(crate) mod bounded;
pub mod gitea;
pub mod local;
pub mod select;

use std::future::Future;
use std::pin::Pin;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The future every backend operation returns (boxed so the trait stays object-safe).
pub type IssueFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, IssueError>> + Send + 'a>>;

/// Longest title accepted, in characters (Gitea's column limit).
pub(crate) const MAX_TITLE_CHARS: usize = 255;

/// What every issue tracker offers Butler. Numbers are the tracker's issue numbers (`#N`).
pub trait IssueBackend: Send + Sync {
    /// Which tracker this is, for the session summary (never carries credentials).
    fn info(&self) -> BackendInfo;
    /// One issue, without comments.
    fn read(&self, number: u64) -> IssueFuture<'_, Issue>;
    /// The last `n` comments of an issue, oldest first. `n == 0` gives an empty list.
    fn last_comments(&self, number: u64, n: usize) -> IssueFuture<'_, Vec<Comment>>;
    /// Adds a comment to an issue.
    fn comment(&self, number: u64, body: &str) -> IssueFuture<'_, Comment>;
    /// Deletes a comment; a comment that does not belong to `number` is `NotFound`.
    fn delete_comment(&self, number: u64, comment_id: u64) -> IssueFuture<'_, ()>;
    /// Deletes a comment and keeps `reason` where the tracker has a place for it (the local
    /// store keeps an audit row; a server has none, so by default this is `delete_comment`).
    fn delete_comment_with_reason<'a>(
        &'a self,
        number: u64,
        comment_id: u64,
        reason: Option<&'a str>,
    ) -> IssueFuture<'a, ()> {
        let _ = reason;
        self.delete_comment(number, comment_id)
    }
    /// Replaces the title (validated with [`validate_title`] first).
    fn update_title(&self, number: u64, title: &str) -> IssueFuture<'_, Issue>;
    /// Replaces the body.
    fn update_body(&self, number: u64, body: &str) -> IssueFuture<'_, Issue>;
    /// Creates an issue; label names are resolved case-insensitively.
    fn create(&self, new: &NewIssue) -> IssueFuture<'_, Issue>;
    /// Opens or closes an issue (idempotent).
    fn set_state(&self, number: u64, state: IssueState) -> IssueFuture<'_, Issue>;
    /// One page of issues, newest first.
    fn list(&self, query: &IssueQuery) -> IssueFuture<'_, IssuePage>;
    /// Every label the repository has.
    fn labels(&self) -> IssueFuture<'_, Vec<Label>>;
}

/// Which tracker answers, as shown to the Brain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BackendInfo {
    /// `"local"`, `"gitea"` or `"forgejo"`.
    pub kind: &'static str,
    /// `owner/repo` for a server, the store's name for the local store.
    pub repo: String,
    /// The tracker's web address, without credentials; `None` for the local store.
    pub url: Option<String>,
}

/// The state an issue can be set to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IssueState {
    Open,
    Closed,
}

/// The state a tracker reports an issue in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportedState {
    Open,
    Closed,
    /// A state Butler does not know (missing, or a tracker's own): neither open nor closed.
    Unknown,
}

impl From<IssueState> for ReportedState {
    fn from(state: IssueState) -> Self {
        match state {
            IssueState::Open => ReportedState::Open,
            IssueState::Closed => ReportedState::Closed,
        }
    }
}

impl IssueState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Closed => "closed",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Issue {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub state: ReportedState,
    /// Label names.
    pub labels: Vec<String>,
    /// How many comments the issue has.
    pub comments: u64,
    /// RFC 3339 with offset.
    pub created_at: String,
    /// RFC 3339 with offset.
    pub updated_at: String,
    /// The issue's web page, when the tracker has one.
    pub url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comment {
    pub id: u64,
    pub body: String,
    pub author: Option<String>,
    /// RFC 3339 with offset.
    pub created_at: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Label {
    pub id: u64,
    pub name: String,
    pub color: Option<String>,
    pub description: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewIssue {
    pub title: String,
    pub body: String,
    /// Label names (resolved case-insensitively by the backend).
    pub labels: Vec<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum StateFilter {
    #[default]
    Open,
    Closed,
    All,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssueQuery {
    pub state: StateFilter,
    /// Issues carrying all of these label names.
    pub labels: Vec<String>,
    /// 1-based; 0 is read as 1.
    pub page: u32,
    /// 0 means the backend's default.
    pub per_page: u32,
}

impl Default for IssueQuery {
    fn default() -> Self {
        Self {
            state: StateFilter::Open,
            labels: Vec::new(),
            page: 1,
            per_page: 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssuePage {
    pub issues: Vec<Issue>,
    /// All issues matching the query, when the tracker says.
    pub total: Option<u64>,
    pub page: u32,
    pub has_more: bool,
}

/// Why an issue operation failed. Messages carry no raw backend text and never a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum IssueError {
    #[error("{what} was not found")]
    NotFound { what: String },
    #[error("no label named {}", names.join(", "))]
    LabelNotFound { names: Vec<String> },
    #[error("the title must be one line of 1 to {MAX_TITLE_CHARS} characters")]
    InvalidTitle,
    #[error("the issue tracker rejected the credentials")]
    AuthFailed,
    #[error("the issue changed or is in a state that does not allow this")]
    Conflict,
    /// The connection could not be made: nothing was sent.
    #[error("the issue tracker could not be reached")]
    Unreachable,
    /// A read got no (complete) answer in time.
    #[error("the issue tracker did not answer in time")]
    ReadTimeout,
    /// A change was sent but its answer did not come (in time, or whole): it may have been
    /// applied, so it must be checked before it is sent again.
    #[error("the issue tracker did not confirm the change; it may have been applied")]
    WriteUnconfirmed,
    /// The tracker refuses requests for a while (HTTP 429); `Retry-After` when it said.
    #[error("the issue tracker is rate-limiting requests")]
    RateLimited { retry_after_secs: Option<u64> },
    /// The answer was larger than Butler reads; the rest was not downloaded.
    #[error("the issue tracker's answer is larger than {limit_bytes} bytes")]
    ResponseTooLarge { limit_bytes: u64 },
    #[error("the issue tracker failed: {context}")]
    Backend { context: String },
}

/// Checks an issue title and returns it trimmed: non-empty, at most [`MAX_TITLE_CHARS`]
/// characters, no line breaks, no control characters (a tab is kept: it shows as a space).
/// Every backend calls this before any I/O.
pub fn validate_title(title: &str) -> Result<String, IssueError> {
    let trimmed = title.trim();
    if trimmed.is_empty()
        || trimmed.chars().count() > MAX_TITLE_CHARS
        || trimmed.contains(['\n', '\r', '\u{2028}', '\u{2029}'])
        || crate::plain::first_control(trimmed).is_some()
    {
        return Err(IssueError::InvalidTitle);
    }
    Ok(trimmed.to_string())
}

/// Resolves label names (trimmed, case-insensitive) against the repository's labels, in the
/// order asked, without duplicates. Every unknown name is reported at once.
pub(crate) fn resolve_label_names(
    available: &[Label],
    wanted: &[String],
) -> Result<Vec<Label>, IssueError> {
    let mut found: Vec<Label> = Vec::new();
    let mut missing = Vec::new();
    for name in wanted {
        let name = name.trim();
        match available
            .iter()
            .find(|l| l.name.trim().to_lowercase() == name.to_lowercase())
        {
            Some(label) if found.iter().any(|f| f.id == label.id) => {}
            Some(label) => found.push(label.clone()),
            None => missing.push(name.to_string()),
        }
    }
    if missing.is_empty() {
        Ok(found)
    } else {
        Err(IssueError::LabelNotFound { names: missing })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_is_trimmed_and_checked() {
        assert_eq!(
            validate_title("  Fix the parser \t").unwrap(),
            "Fix the parser"
        );
        assert_eq!(validate_title(""), Err(IssueError::InvalidTitle));
        assert_eq!(validate_title("   \t "), Err(IssueError::InvalidTitle));
        assert_eq!(validate_title("two\nlines"), Err(IssueError::InvalidTitle));
        for c in (0u8..0x20).map(char::from).chain(['\u{7f}', '\u{9b}']) {
            let title = format!("a{c}b");
            let expected = match c {
                '\t' => Ok(title.clone()),
                _ => Err(IssueError::InvalidTitle),
            };
            assert_eq!(validate_title(&title), expected, "{c:?}");
        }
        assert_eq!(validate_title("cr\rhere"), Err(IssueError::InvalidTitle));
        assert_eq!(
            validate_title("trailing newline only\n").unwrap(),
            "trailing newline only"
        );
    }

    #[test]
    fn title_length_counts_characters_not_bytes() {
        let ja = "作".repeat(MAX_TITLE_CHARS);
        assert_eq!(validate_title(&ja).unwrap(), ja);
        assert_eq!(
            validate_title(&format!("{ja}x")),
            Err(IssueError::InvalidTitle)
        );
    }

    fn label(id: u64, name: &str) -> Label {
        Label {
            id,
            name: name.into(),
            color: None,
            description: None,
        }
    }

    #[test]
    fn label_names_resolve_case_insensitively_and_report_all_unknown() {
        let have = [label(1, "bug"), label(2, "Enhancement")];
        let got = resolve_label_names(&have, &["BUG".into(), " enhancement ".into(), "Bug".into()])
            .unwrap();
        assert_eq!(got.iter().map(|l| l.id).collect::<Vec<_>>(), [1, 2]);
        let err = resolve_label_names(&have, &["bug".into(), "nope".into(), "Other".into()]);
        assert_eq!(
            err,
            Err(IssueError::LabelNotFound {
                names: vec!["nope".into(), "Other".into()]
            })
        );
    }

    #[test]
    fn errors_never_quote_more_than_they_were_given() {
        let e = IssueError::Backend {
            context: "the list could not be read".into(),
        };
        assert_eq!(
            e.to_string(),
            "the issue tracker failed: the list could not be read"
        );
        assert_eq!(
            IssueError::LabelNotFound {
                names: vec!["a".into(), "b".into()]
            }
            .to_string(),
            "no label named a, b"
        );
    }
}
