//! The `issue_*` tools' domain: argument checks, the body contract, and one backend call each.
//! Owner, repository and backend always come from the session.

use crate::catalogue::{Key, fill};
use butler_worker::issues::{IssueQuery, IssueState, NewIssue, StateFilter, validate_title};
use serde_json::json;

use crate::envelope::Reply;
use crate::error::WorkError;
use crate::issue_body;
use crate::session::Project;
use crate::work::issue_number;
use crate::work::sensitive::check_text;

pub const MAX_BODY_BYTES: usize = 64 * 1024;
pub const MAX_LAST_COMMENTS: i64 = 50;
pub const PAGE_SIZE: u32 = 20;

fn text(field: &'static str, value: &str) -> Result<String, WorkError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(WorkError::InvalidArgument {
            field,
            reason: crate::catalogue::text(Key::ArgEmpty).into(),
        });
    }
    if trimmed.len() > MAX_BODY_BYTES {
        return Err(WorkError::InvalidArgument {
            field,
            reason: fill(Key::ArgLongerThanBytes, &[("max", &MAX_BODY_BYTES)]),
        });
    }
    if trimmed.contains('\0') {
        return Err(WorkError::InvalidArgument {
            field,
            reason: crate::catalogue::text(Key::ArgNul).into(),
        });
    }
    Ok(trimmed.to_string())
}

fn structured_body(body: &str) -> Result<String, WorkError> {
    let body = text("body", body)?;
    let missing = issue_body::missing_sections(&body);
    if !missing.is_empty() {
        return Err(WorkError::InvalidBody { missing });
    }
    Ok(body)
}

pub async fn read(project: &Project, id: i64, last_n: Option<i64>) -> Result<Reply, WorkError> {
    let number = issue_number(id, "issue_id")?;
    let n = match last_n {
        None => 0,
        Some(n) if (0..=MAX_LAST_COMMENTS).contains(&n) => n as usize,
        Some(n) => {
            return Err(WorkError::InvalidArgument {
                field: "last_n_comments",
                reason: fill(
                    Key::ArgOutOfRange,
                    &[("n", &n), ("min", &0), ("max", &MAX_LAST_COMMENTS)],
                ),
            });
        }
    };
    let issue = project.issues.read(number).await?;
    if let Ok(mut cache) = project.titles.lock() {
        cache.insert(number, issue.title.clone());
    }
    let summary = format!("#{} {} ({:?})", issue.number, issue.title, issue.state).to_string();
    let mut data = json!({"issue": issue});
    if n > 0 {
        let comments = project.issues.last_comments(number, n).await?;
        data["comments"] = json!(comments);
    }
    Ok(Reply::new(summary, data))
}

pub struct CreateRequest {
    pub title: String,
    pub body: Option<String>,
    pub labels: Vec<String>,
    pub current_state: Option<String>,
    pub next_action: Option<String>,
    pub blockers: Option<String>,
}

pub async fn create(project: &Project, req: CreateRequest) -> Result<Reply, WorkError> {
    let title = validate_title(&req.title)?;
    let body = match req.body.as_deref() {
        Some(body) => structured_body(body)?,
        None => {
            let parts = [&req.current_state, &req.next_action, &req.blockers];
            let missing: Vec<&'static str> = issue_body::FIELDS
                .iter()
                .zip(parts)
                .filter(|(_, v)| v.as_deref().is_none_or(|s| s.trim().is_empty()))
                .map(|(f, _)| *f)
                .collect();
            if !missing.is_empty() {
                return Err(WorkError::BodyFieldsNeeded { missing });
            }
            let part = |v: &Option<String>| v.clone().unwrap_or_default();
            issue_body::template(
                &part(&req.current_state),
                &part(&req.next_action),
                &part(&req.blockers),
            )
        }
    };
    check_text("title", &title, &project.known_secrets)?;
    check_text("body", &body, &project.known_secrets)?;
    let labels: Vec<String> = req
        .labels
        .iter()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    let issue = project
        .issues
        .create(&NewIssue {
            title,
            body,
            labels,
        })
        .await?;
    Ok(Reply::new(
        fill(Key::IssueCreated, &[("issue", &issue.number)]),
        json!({"issue": issue}),
    ))
}

pub async fn comment(project: &Project, id: i64, body: &str) -> Result<Reply, WorkError> {
    let number = issue_number(id, "issue_id")?;
    let body = text("body", body)?;
    check_text("body", &body, &project.known_secrets)?;
    let comment = project.issues.comment(number, &body).await?;
    Ok(Reply::new(
        fill(Key::IssueCommented, &[("issue", &number)]),
        json!({"issue_id": number, "comment": comment}),
    ))
}

pub async fn delete_comment(
    project: &Project,
    id: i64,
    comment_id: i64,
    reason: Option<String>,
) -> Result<Reply, WorkError> {
    let number = issue_number(id, "issue_id")?;
    let comment = issue_number(comment_id, "comment_id")?;
    let reason = reason.as_deref().map(str::trim).filter(|r| !r.is_empty());
    if reason.is_some_and(|r| r.len() > MAX_BODY_BYTES) {
        return Err(WorkError::InvalidArgument {
            field: "reason",
            reason: fill(Key::ArgLongerThanBytes, &[("max", &MAX_BODY_BYTES)]),
        });
    }
    // The embedded store keeps the reason in its audit trail; a tracker has no place for it.
    project
        .issues
        .delete_comment_with_reason(number, comment, reason)
        .await?;
    Ok(Reply::new(
        fill(
            Key::IssueCommentDeleted,
            &[("comment", &comment), ("issue", &number)],
        ),
        json!({"issue_id": number, "comment_id": comment, "deleted": true}),
    ))
}

pub async fn update_title(project: &Project, id: i64, title: &str) -> Result<Reply, WorkError> {
    let number = issue_number(id, "issue_id")?;
    let title = validate_title(title)?;
    check_text("title", &title, &project.known_secrets)?;
    let issue = project.issues.update_title(number, &title).await?;
    if let Ok(mut cache) = project.titles.lock() {
        cache.insert(number, issue.title.clone());
    }
    Ok(Reply::new(
        fill(Key::IssueRetitled, &[("issue", &number)]),
        json!({"issue": {"number": issue.number, "title": issue.title}}),
    ))
}

pub async fn update_body(project: &Project, id: i64, body: &str) -> Result<Reply, WorkError> {
    let number = issue_number(id, "issue_id")?;
    let body = structured_body(body)?;
    check_text("body", &body, &project.known_secrets)?;
    let issue = project.issues.update_body(number, &body).await?;
    Ok(Reply::new(
        fill(Key::IssueBodyUpdated, &[("issue", &number)]),
        json!({"issue": {"number": issue.number, "body": issue.body}}),
    ))
}

pub async fn set_state(project: &Project, id: i64, state: IssueState) -> Result<Reply, WorkError> {
    let number = issue_number(id, "issue_id")?;
    let issue = project.issues.set_state(number, state).await?;
    let key = if state == IssueState::Open {
        Key::IssueReopened
    } else {
        Key::IssueClosed
    };
    Ok(Reply::new(
        fill(key, &[("issue", &number)]),
        json!({"issue": {"number": issue.number, "state": issue.state}}),
    ))
}

pub async fn list(
    project: &Project,
    state: StateFilter,
    label: Option<&str>,
    page: Option<i64>,
) -> Result<Reply, WorkError> {
    let page = match page {
        None => 1,
        Some(p) if (1..=10_000).contains(&p) => p as u32,
        Some(p) => {
            return Err(WorkError::InvalidArgument {
                field: "page",
                reason: fill(Key::ArgNotPage, &[("p", &p)]),
            });
        }
    };
    let labels = label
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| vec![l.to_string()]);
    let query = IssueQuery {
        state,
        labels: labels.unwrap_or_default(),
        page,
        per_page: PAGE_SIZE,
    };
    let result = project.issues.list(&query).await?;
    let issues: Vec<_> = result
        .issues
        .iter()
        .map(
            |i| json!({"number": i.number, "title": i.title, "state": i.state, "labels": i.labels}),
        )
        .collect();
    let summary = match result.total {
        Some(total) => fill(
            Key::IssuesPageOf,
            &[("n", &issues.len()), ("total", &total), ("page", &page)],
        ),
        None => fill(Key::IssuesPage, &[("n", &issues.len()), ("page", &page)]),
    };
    Ok(Reply::new(
        summary,
        json!({"issues": issues, "page": page, "has_more": result.has_more, "total": result.total}),
    ))
}
