//! The embedded issue store: issues, comments and labels kept in the repository's ledger file,
//! so Butler offers issue tools on any git repository without a tracker server.
//!
//! It behaves like the Gitea backend where the Brain can tell: numbers `1, 2, 3…` per
//! repository, comment ids global and never reused, label names resolved case-insensitively,
//! newest issues first in lists. A deleted comment leaves an audit row (`comment_deletions`)
//! with its text and the reason given. Each call is a millisecond of SQLite work done when the
//! future is polled; the store holds its own connection behind a mutex.

use std::path::Path;
use std::sync::Arc;

use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};

use super::{
    BackendInfo, Comment, Issue, IssueBackend, IssueError, IssueFuture, IssuePage, IssueQuery,
    IssueState, Label, NewIssue, ReportedState, StateFilter, resolve_label_names, validate_title,
};
use crate::ledger::{Ledger, LedgerError, LedgerHandle};
use crate::time::Timestamp;

/// Page size when the query asks for none.
const DEFAULT_PAGE: u32 = 10;
/// Largest page handed out (as Gitea's `MAX_RESPONSE_ITEMS`).
const MAX_PAGE: u32 = 50;

/// The issue store inside a repository's ledger file.
pub struct LocalIssues {
    ledger: Arc<LedgerHandle>,
    name: String,
}

impl std::fmt::Debug for LocalIssues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalIssues")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl LocalIssues {
    /// Opens the store of the repository whose git common dir is given; `name` is what
    /// [`IssueBackend::info`] reports as the repository (e.g. the project's directory name).
    pub fn open(
        git_common_dir: &Path,
        name: impl Into<String>,
    ) -> Result<LocalIssues, LedgerError> {
        Ok(Self::from_ledger(Ledger::open(git_common_dir)?, name))
    }

    /// Opens the store in an explicit ledger file (e.g. [`Ledger::path`] of an open ledger);
    /// its name is that of the repository the file belongs to (`/src/demo/.git/butler/ledger.db`
    /// → `demo`).
    pub fn open_file(ledger_file: &Path) -> Result<LocalIssues, LedgerError> {
        Ok(Self::from_ledger(
            Ledger::open_file(ledger_file)?,
            repository_name(ledger_file),
        ))
    }

    /// Uses an already open ledger connection (the store then owns it).
    pub(crate) fn from_ledger(ledger: Ledger, name: impl Into<String>) -> LocalIssues {
        Self::shared(Arc::new(LedgerHandle::new(ledger)), name)
    }

    /// Uses a ledger handle shared with others (a session's own, so one connection serves
    /// both and is released with it when idle); times are stamped by the handle's clock.
    pub fn shared(ledger: Arc<LedgerHandle>, name: impl Into<String>) -> LocalIssues {
        LocalIssues {
            ledger,
            name: name.into(),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&Ledger) -> Result<T, LedgerError>) -> Result<T, IssueError> {
        self.with_issue(|l| f(l).map_err(to_issue_error))
    }

    fn with_issue<T>(
        &self,
        f: impl FnOnce(&Ledger) -> Result<T, IssueError>,
    ) -> Result<T, IssueError> {
        self.ledger
            .with(|ledger| f(ledger).map_err(Reopen::Issue))
            .map_err(|e| match e {
                Reopen::Issue(e) => e,
                Reopen::Ledger(e) => to_issue_error(e),
            })
    }
}

/// A call's own error, or the ledger's when it had to be reopened first.
enum Reopen {
    Issue(IssueError),
    Ledger(LedgerError),
}

impl From<LedgerError> for Reopen {
    fn from(err: LedgerError) -> Self {
        Reopen::Ledger(err)
    }
}

/// The repository a ledger file at `<git common dir>/butler/ledger.db` belongs to: the directory
/// holding `.git`, or a bare repository's directory without `.git`.
fn repository_name(ledger_file: &Path) -> String {
    let common = ledger_file.parent().and_then(Path::parent);
    let named = match common {
        Some(dir) if dir.file_name().is_some_and(|n| n == ".git") => dir.parent(),
        other => other,
    };
    let name = named
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned());
    match name {
        Some(n) if !n.is_empty() => n.strip_suffix(".git").map(str::to_string).unwrap_or(n),
        _ => "local".to_string(),
    }
}

/// The Brain sees no SQLite text; the cause goes to the log.
fn to_issue_error(err: LedgerError) -> IssueError {
    match err {
        LedgerError::NotFound { what } => IssueError::NotFound { what },
        LedgerError::Conflict { .. } => IssueError::Conflict,
        LedgerError::Busy => IssueError::Backend {
            context: "the local issue store is busy; nothing was changed".into(),
        },
        other => {
            tracing::warn!(error = %other, source = ?std::error::Error::source(&other), "local issue store failed");
            let context = match other {
                LedgerError::Corrupt { .. } => "the local issue store is damaged",
                LedgerError::TooNew { .. } => "the local issue store was written by a newer Butler",
                _ => "the local issue store could not complete the operation",
            };
            IssueError::Backend {
                context: context.into(),
            }
        }
    }
}

impl IssueBackend for LocalIssues {
    fn info(&self) -> BackendInfo {
        BackendInfo {
            kind: "local",
            repo: self.name.clone(),
            url: None,
        }
    }

    fn read(&self, number: u64) -> IssueFuture<'_, Issue> {
        Box::pin(async move { self.with(|l| load_issue(l.conn(), number)) })
    }

    fn last_comments(&self, number: u64, n: usize) -> IssueFuture<'_, Vec<Comment>> {
        Box::pin(async move { self.with(|l| l.read(|tx| last_comments(tx, number, n))) })
    }

    fn comment(&self, number: u64, body: &str) -> IssueFuture<'_, Comment> {
        let body = body.to_owned();
        Box::pin(
            async move { self.with(|l| l.write(|tx| add_comment(tx, number, &body, l.now()))) },
        )
    }

    fn delete_comment(&self, number: u64, comment_id: u64) -> IssueFuture<'_, ()> {
        self.delete_comment_with_reason(number, comment_id, None)
    }

    fn delete_comment_with_reason<'a>(
        &'a self,
        number: u64,
        comment_id: u64,
        reason: Option<&'a str>,
    ) -> IssueFuture<'a, ()> {
        Box::pin(async move {
            self.with(|l| l.write(|tx| delete_comment(tx, number, comment_id, reason, l.now())))
        })
    }

    fn update_title(&self, number: u64, title: &str) -> IssueFuture<'_, Issue> {
        let title = validate_title(title);
        Box::pin(async move {
            let title = title?;
            self.with(|l| l.write(|tx| set_field(tx, number, "title", &title, l.now())))
        })
    }

    fn update_body(&self, number: u64, body: &str) -> IssueFuture<'_, Issue> {
        let body = body.to_owned();
        Box::pin(async move {
            self.with(|l| l.write(|tx| set_field(tx, number, "body", &body, l.now())))
        })
    }

    fn create(&self, new: &NewIssue) -> IssueFuture<'_, Issue> {
        let title = validate_title(&new.title);
        let new = new.clone();
        Box::pin(async move {
            let title = title?;
            self.with_issue(|l| {
                // Labels are never deleted, so resolving them before the write cannot go stale.
                let labels = resolve_labels(l, &new.labels)?;
                l.write(|tx| create(tx, &title, &new.body, &labels, l.now()))
                    .map_err(to_issue_error)
            })
        })
    }

    fn set_state(&self, number: u64, state: IssueState) -> IssueFuture<'_, Issue> {
        Box::pin(async move { self.with(|l| l.write(|tx| set_state(tx, number, state, l.now()))) })
    }

    fn list(&self, query: &IssueQuery) -> IssueFuture<'_, IssuePage> {
        let query = query.clone();
        Box::pin(async move {
            self.with_issue(|l| {
                let labels = resolve_labels(l, &query.labels)?;
                l.read(|tx| list(tx, &query, &labels))
                    .map_err(to_issue_error)
            })
        })
    }

    fn labels(&self) -> IssueFuture<'_, Vec<Label>> {
        Box::pin(async move { self.with(|l| all_labels(l.conn())) })
    }
}

fn resolve_labels(ledger: &Ledger, names: &[String]) -> Result<Vec<Label>, IssueError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    resolve_label_names(&all_labels(ledger.conn()).map_err(to_issue_error)?, names)
}

fn issue_missing(number: u64) -> LedgerError {
    LedgerError::not_found(format!("issue #{number}"))
}

fn ensure_issue(conn: &Connection, number: u64) -> Result<(), LedgerError> {
    let exists = conn
        .prepare_cached("SELECT 1 FROM issues WHERE number = ?1")?
        .exists([number])?;
    if exists {
        Ok(())
    } else {
        Err(issue_missing(number))
    }
}

fn load_issue(conn: &Connection, number: u64) -> Result<Issue, LedgerError> {
    let row = conn
        .prepare_cached(
            "SELECT title, body, state, created_at, updated_at,
                    (SELECT count(*) FROM comments WHERE issue = number)
             FROM issues WHERE number = ?1",
        )?
        .query_row([number], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, u64>(5)?,
            ))
        })
        .optional()?;
    let (title, body, state, created_at, updated_at, comments) =
        row.ok_or_else(|| issue_missing(number))?;
    let labels = conn
        .prepare_cached(
            "SELECT l.name FROM issue_labels il JOIN labels l ON l.id = il.label
             WHERE il.issue = ?1 ORDER BY l.name COLLATE NOCASE",
        )?
        .query_map([number], |r| r.get(0))?
        .collect::<Result<Vec<String>, _>>()?;
    let state = match state.as_str() {
        "open" => ReportedState::Open,
        "closed" => ReportedState::Closed,
        _ => ReportedState::Unknown,
    };
    Ok(Issue {
        number,
        title,
        body,
        state,
        labels,
        comments,
        created_at,
        updated_at,
        url: None,
    })
}

fn all_labels(conn: &Connection) -> Result<Vec<Label>, LedgerError> {
    let labels = conn
        .prepare_cached("SELECT id, name, color, description FROM labels ORDER BY id")?
        .query_map([], |r| {
            Ok(Label {
                id: r.get(0)?,
                name: r.get(1)?,
                color: r.get(2)?,
                description: r.get(3)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(labels)
}

fn create(
    conn: &Connection,
    title: &str,
    body: &str,
    labels: &[Label],
    at: Timestamp,
) -> Result<Issue, LedgerError> {
    let number: u64 = conn.query_row(
        "INSERT INTO issues (number, title, body, state, created_at, updated_at)
         VALUES ((SELECT COALESCE(MAX(number), 0) + 1 FROM issues), ?1, ?2, 'open', ?3, ?3)
         RETURNING number",
        params![title, body, at],
        |r| r.get(0),
    )?;
    for label in labels {
        conn.execute(
            "INSERT INTO issue_labels (issue, label) VALUES (?1, ?2)",
            params![number, label.id],
        )?;
    }
    load_issue(conn, number)
}

fn add_comment(
    conn: &Connection,
    number: u64,
    body: &str,
    at: Timestamp,
) -> Result<Comment, LedgerError> {
    ensure_issue(conn, number)?;
    let id: u64 = conn.query_row(
        "INSERT INTO comments (issue, body, author, created_at) VALUES (?1, ?2, NULL, ?3)
         RETURNING id",
        params![number, body, at],
        |r| r.get(0),
    )?;
    conn.execute(
        "UPDATE issues SET updated_at = ?2 WHERE number = ?1",
        params![number, at],
    )?;
    Ok(Comment {
        id,
        body: body.to_string(),
        author: None,
        created_at: at.to_string(),
    })
}

fn last_comments(conn: &Connection, number: u64, n: usize) -> Result<Vec<Comment>, LedgerError> {
    ensure_issue(conn, number)?;
    let mut comments = conn
        .prepare_cached(
            "SELECT id, body, author, created_at FROM comments WHERE issue = ?1
             ORDER BY id DESC LIMIT ?2",
        )?
        .query_map(params![number, n], |r| {
            Ok(Comment {
                id: r.get(0)?,
                body: r.get(1)?,
                author: r.get(2)?,
                created_at: r.get(3)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    comments.reverse();
    Ok(comments)
}

fn delete_comment(
    conn: &Connection,
    number: u64,
    comment_id: u64,
    reason: Option<&str>,
    at: Timestamp,
) -> Result<(), LedgerError> {
    ensure_issue(conn, number)?;
    let moved = conn.execute(
        "INSERT INTO comment_deletions (comment_id, issue, body, author, created_at, deleted_at,
                                        reason)
         SELECT id, issue, body, author, created_at, ?3, ?4 FROM comments
         WHERE id = ?1 AND issue = ?2",
        params![comment_id, number, at, reason],
    )?;
    if moved == 0 {
        return Err(LedgerError::not_found(format!(
            "comment {comment_id} on issue #{number}"
        )));
    }
    conn.execute("DELETE FROM comments WHERE id = ?1", [comment_id])?;
    Ok(())
}

/// Replaces the title or the body (the column name is one of two literals, never input).
fn set_field(
    conn: &Connection,
    number: u64,
    column: &str,
    value: &str,
    at: Timestamp,
) -> Result<Issue, LedgerError> {
    let sql = match column {
        "title" => "UPDATE issues SET title = ?2, updated_at = ?3 WHERE number = ?1",
        _ => "UPDATE issues SET body = ?2, updated_at = ?3 WHERE number = ?1",
    };
    if conn.execute(sql, params![number, value, at])? == 0 {
        return Err(issue_missing(number));
    }
    load_issue(conn, number)
}

fn set_state(
    conn: &Connection,
    number: u64,
    state: IssueState,
    at: Timestamp,
) -> Result<Issue, LedgerError> {
    ensure_issue(conn, number)?;
    let closed_at = (state == IssueState::Closed).then_some(&at);
    conn.execute(
        "UPDATE issues SET state = ?2, closed_at = ?3, updated_at = ?4
         WHERE number = ?1 AND state <> ?2",
        params![number, state.as_str(), closed_at, at],
    )?;
    load_issue(conn, number)
}

fn list(conn: &Connection, query: &IssueQuery, labels: &[Label]) -> Result<IssuePage, LedgerError> {
    let mut filter = String::from(" WHERE 1 = 1");
    let mut args: Vec<Value> = Vec::new();
    match query.state {
        StateFilter::Open => filter.push_str(" AND state = 'open'"),
        StateFilter::Closed => filter.push_str(" AND state = 'closed'"),
        StateFilter::All => {}
    }
    for label in labels {
        filter.push_str(" AND number IN (SELECT issue FROM issue_labels WHERE label = ?)");
        args.push(Value::Integer(label.id as i64));
    }
    let total: u64 = conn.query_row(
        &format!("SELECT count(*) FROM issues{filter}"),
        params_from_iter(&args),
        |r| r.get(0),
    )?;
    let page = query.page.max(1);
    let per_page = match query.per_page {
        0 => DEFAULT_PAGE,
        n => n.min(MAX_PAGE),
    };
    let offset = u64::from(page - 1) * u64::from(per_page);
    let numbers = conn
        .prepare(&format!(
            "SELECT number FROM issues{filter} ORDER BY number DESC LIMIT {per_page} OFFSET {offset}"
        ))?
        .query_map(params_from_iter(&args), |r| r.get(0))?
        .collect::<Result<Vec<u64>, _>>()?;
    let issues = numbers
        .into_iter()
        .map(|n| load_issue(conn, n))
        .collect::<Result<_, _>>()?;
    let has_more = offset + u64::from(per_page) < total;
    Ok(IssuePage {
        issues,
        total: Some(total),
        page,
        has_more,
    })
}

#[cfg(test)]
mod tests;
