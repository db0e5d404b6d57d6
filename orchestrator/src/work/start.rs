//! `work_start`: sets the issue the current work is for. It locks nothing; it only sets the
//! default link for `work_record`, remembered per project and line of work on disk so a
//! restarted server (or a Brain after context compaction) still knows it.

use crate::catalogue::{Key, fill, text};
use std::sync::Arc;

use butler_worker::issues::IssueError;
use serde_json::json;

use crate::envelope::Reply;
use crate::error::WorkError;
use crate::session::{Project, blocking};
use crate::work::snapshot::line_of;

pub async fn start(project: &Arc<Project>, issue: Option<u64>) -> Result<Reply, WorkError> {
    let mut notes = Vec::new();
    let mut title = None;
    if let Some(number) = issue {
        match project.issues.read(number).await {
            Ok(found) => {
                if let Ok(mut cache) = project.titles.lock() {
                    cache.insert(number, found.title.clone());
                }
                title = Some(found.title);
            }
            Err(IssueError::NotFound { .. }) => {
                return Err(WorkError::Issue(IssueError::NotFound {
                    what: format!("issue #{number}"),
                }));
            }
            Err(_) => notes.push(text(Key::StartUncheckedNote).to_string()),
        }
    }
    let line = blocking(project, move |p| {
        let head = p.repo.head()?;
        let line = line_of(&head);
        p.with_ledger(|l| Ok(p.set_active_issue(l, &line, issue)?))?;
        Ok(line)
    })
    .await?;
    let summary = match issue {
        Some(n) => fill(Key::StartLinked, &[("issue", &n)]),
        None => text(Key::StartUnlinked).to_string(),
    };
    let active = issue.map(|number| json!({"number": number, "title": title}));
    let mut data = json!({"active_issue": active, "line": line});
    if !notes.is_empty() {
        data["notes"] = json!(notes);
    }
    Ok(Reply::new(summary, data))
}
